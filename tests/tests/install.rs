//! Installed like a real tool: the three binaries' versions agree, `install-hooks` names
//! `judge-hook` so the hook resolves wherever the tools are installed, and the shell
//! completions name each binary's subcommands.
//!
//! An installed layout is the three binaries copied into one `bin` directory on PATH (what
//! `cargo install --path` does); `cargo_install_puts_the_three_binaries_on_path` runs the
//! documented `cargo install` itself, and is ignored by default for its release build.

use judged_tests::bin;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, PoisonError};

/// Held while a binary is copied and while a process is spawned, so the two never overlap
/// in this test process: a child forked while a copy is open for writing keeps it open
/// until it execs, and running that copy meanwhile fails with ETXTBSY ("Text file busy",
/// seen in CI).
static COPY_OR_SPAWN: Mutex<()> = Mutex::new(());

/// Copy the binary `name` to `to`.
fn copy_bin(name: &str, to: &Path) {
    let from = bin(name);
    let _alone = COPY_OR_SPAWN.lock().unwrap_or_else(PoisonError::into_inner);
    std::fs::copy(from, to).unwrap();
}

/// Run `command` to its end, its output captured.
fn run(command: &mut Command) -> Output {
    let child = {
        let _alone = COPY_OR_SPAWN.lock().unwrap_or_else(PoisonError::into_inner);
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()
    };
    child.and_then(std::process::Child::wait_with_output).expect("the command runs")
}

/// The three binaries copied into `<root>/bin`, as `cargo install --root <root>` leaves them.
fn installed(root: &Path) -> PathBuf {
    let dir = root.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["judged", "judge-evidence", "judge-hook"] {
        copy_bin(name, &dir.join(name));
    }
    dir
}

/// `judged` (from `judged_dir`) with exactly `path` as PATH and its own `JUDGED_HOME`.
fn judged(judged_dir: &Path, path: &[&Path], home: &Path, args: &[&str]) -> Output {
    run(Command::new(judged_dir.join("judged"))
        .args(args)
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("JUDGED_HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join("claude")))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn claude_command(settings: &Path) -> String {
    let settings: Value = serde_json::from_str(&std::fs::read_to_string(settings).unwrap()).unwrap();
    settings["hooks"]["TaskCompleted"][0]["hooks"][0]["command"].as_str().unwrap().to_owned()
}

#[test]
fn the_three_versions_agree() {
    let lines: Vec<String> = ["judged", "judge-evidence", "judge-hook"]
        .iter()
        .map(|name| {
            let output = run(Command::new(bin(name)).arg("--version"));
            assert!(output.status.success(), "{name} --version: {}", stderr(&output));
            String::from_utf8(output.stdout).unwrap().trim().to_owned()
        })
        .collect();
    for (line, name) in lines.iter().zip(["judged", "judge-evidence", "judge-hook"]) {
        assert_eq!(line, &format!("{name} {}", env!("CARGO_PKG_VERSION")));
    }
}

#[test]
fn installed_hooks_name_judge_hook_as_path_finds_it() {
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = installed(&dir.path().join("root"));
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let project_arg = project.to_str().unwrap();
    let output = judged(&bin_dir, &[&bin_dir], dir.path(), &["install-hooks", "--claude", "--project", project_arg]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("warning"), "nothing to warn of: {}", stderr(&output));
    let command = claude_command(&project.join(".claude/settings.json"));
    assert!(command.starts_with("judge-hook --host claude-code --timeout "), "{command}");

    // The same for Copilot CLI's committed file.
    let output = judged(&bin_dir, &[&bin_dir], dir.path(), &["install-hooks", "--copilot", "--project", project_arg]);
    assert!(output.status.success(), "{}", stderr(&output));
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".github/hooks/judged.json")).unwrap()).unwrap();
    let bash = hooks["hooks"]["agentStop"][0]["bash"].as_str().unwrap();
    assert!(bash.starts_with("judge-hook --host copilot-cli "), "{bash}");

    // The user's settings, too: the hook the tests' shell would run resolves on PATH.
    let output = judged(&bin_dir, &[&bin_dir], dir.path(), &["install-hooks", "--claude", "--user"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(claude_command(&dir.path().join("claude/settings.json")).starts_with("judge-hook "));
}

#[test]
fn an_absolute_path_only_when_asked_and_a_committed_file_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = installed(&dir.path().join("root"));
    let project = dir.path().join("project");
    let project_arg = project.to_str().unwrap();
    let args = ["install-hooks", "--copilot", "--project", project_arg, "--absolute"];
    let output = judged(&bin_dir, &[&bin_dir], dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("judged.json is a project file that gets committed"), "{}", stderr(&output));
    let text = std::fs::read_to_string(project.join(".github/hooks/judged.json")).unwrap();
    assert!(text.contains(&format!("{} --host copilot-cli", bin_dir.join("judge-hook").display())), "{text}");

    // The user's own settings are no committed file: no warning.
    let output = judged(&bin_dir, &[&bin_dir], dir.path(), &["install-hooks", "--claude", "--user", "--absolute"]);
    assert!(output.status.success() && !stderr(&output).contains("warning"), "{}", stderr(&output));
    let command = claude_command(&dir.path().join("claude/settings.json"));
    assert!(command.starts_with(&bin_dir.join("judge-hook").display().to_string()), "{command}");
}

#[test]
fn a_build_tree_without_judge_hook_on_path_keeps_its_absolute_path_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let build = bin("judged").parent().unwrap().to_path_buf();
    let output =
        judged(&build, &[&empty], dir.path(), &["install-hooks", "--claude", "--project", project.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let command = claude_command(&project.join(".claude/settings.json"));
    assert!(command.starts_with(&bin("judge-hook").display().to_string()), "{command}");
    let warning = stderr(&output);
    assert!(warning.contains("`judge-hook` is not on PATH") && warning.contains("cargo install --locked"), "{warning}");
    assert!(warning.contains("settings.json is a project file that gets committed"), "{warning}");

    // Installed later: installing again rewrites the command to the bare name, in place.
    let bin_dir = installed(&dir.path().join("root"));
    let output =
        judged(&build, &[&bin_dir], dir.path(), &["install-hooks", "--claude", "--project", project.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("not ") && stderr(&output).contains("--absolute"),
        "another binary: {}",
        stderr(&output)
    );
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".claude/settings.json")).unwrap()).unwrap();
    assert_eq!(settings["hooks"]["TaskCompleted"].as_array().unwrap().len(), 1, "{settings}");
    assert!(claude_command(&project.join(".claude/settings.json")).starts_with("judge-hook --host claude-code"));
}

#[test]
fn without_judge_hook_anywhere_install_hooks_refuses_and_says_how_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    copy_bin("judged", &alone.join("judged"));
    let project = dir.path().join("project");
    let output =
        judged(&alone, &[&alone], dir.path(), &["install-hooks", "--claude", "--project", project.to_str().unwrap()]);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("cannot find `judge-hook`"), "{}", stderr(&output));
    assert!(!project.join(".claude/settings.json").exists(), "a hook that cannot run is not written");
}

#[test]
fn completions_name_each_binarys_subcommands() {
    let cases: [(&str, &[&str]); 2] = [
        ("judged", &["start", "status", "install-hooks", "service", "completions"]),
        ("judge-evidence", &["marker", "challenge", "verify", "gate", "panel", "completions"]),
    ];
    for (name, subcommands) in cases {
        for shell in ["bash", "zsh", "fish"] {
            let output = run(Command::new(bin(name)).args(["completions", shell]));
            assert!(output.status.success(), "{name} completions {shell}: {}", stderr(&output));
            let script = String::from_utf8(output.stdout).unwrap();
            assert!(!script.trim().is_empty(), "{name} {shell}");
            for subcommand in subcommands {
                assert!(script.contains(subcommand), "{name} {shell} names {subcommand}");
            }
        }
    }
    let bad = run(Command::new(bin("judged")).args(["completions", "tcsh"]));
    assert!(!bad.status.success());
}

#[test]
fn bash_loads_the_completions() {
    let bash = {
        let _alone = COPY_OR_SPAWN.lock().unwrap_or_else(PoisonError::into_inner);
        Command::new("bash").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status()
    };
    if bash.is_err() {
        return judged_tests::skip(false, "bash is not on PATH");
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("judged.bash");
    let output = run(Command::new(bin("judged")).args(["completions", "bash"]));
    std::fs::write(&script, output.stdout).unwrap();
    // Complete `judged serv`: the function the script registers offers `service`.
    let probe = format!(
        "source {}; COMP_WORDS=(judged serv); COMP_CWORD=1; COMP_LINE='judged serv'; COMP_POINT=11; \
         _judged judged serv judged; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let output = run(Command::new("bash").args(["--norc", "-c", &probe]));
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "service");
}

/// The documented install, into a temporary root. A release build of three crates: run
/// it with `cargo test -p judged-tests --test install -- --ignored`.
#[test]
#[ignore = "builds the three crates in release mode (minutes)"]
fn cargo_install_puts_the_three_binaries_on_path() {
    let root = tempfile::tempdir().unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    for krate in ["daemon", "cli", "hook-shims"] {
        let status = Command::new(&cargo)
            .args(["install", "--locked", "--quiet", "--path", krate, "--root"])
            .arg(root.path())
            .current_dir(judged_tests::workspace())
            .status()
            .unwrap();
        assert!(status.success(), "cargo install --path {krate}");
    }
    let bin_dir = root.path().join("bin");
    for name in ["judged", "judge-evidence", "judge-hook"] {
        let output = run(Command::new(bin_dir.join(name)).arg("--version"));
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), format!("{name} {}", env!("CARGO_PKG_VERSION")));
    }
    let home = tempfile::tempdir().unwrap();
    let output = judged(&bin_dir, &[&bin_dir], home.path(), &["install-hooks", "--claude", "--user"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(claude_command(&home.path().join("claude/settings.json")).starts_with("judge-hook "));
}

/// A Claude Code event the hook is installed for but the gate does not decide would be
/// allowed without a decision: `install-hooks` says so, and how to gate it.
#[test]
fn installing_a_hook_for_an_event_the_gate_does_not_decide_warns() {
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = installed(&dir.path().join("root"));
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let args = ["install-hooks", "--claude", "--project", project.to_str().unwrap(), "--events", "TaskCompleted,Stop"];
    let output = judged(&bin_dir, &[&bin_dir], dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    let warning = stderr(&output);
    assert!(
        warning.contains("so Stop would be allowed without a decision") && warning.contains("add Stop"),
        "{warning}"
    );

    // Gated in the config: no warning.
    std::fs::write(dir.path().join("config.toml"), "[gate]\nevents = [\"TaskCompleted\", \"Stop\"]\n").unwrap();
    let output = judged(&bin_dir, &[&bin_dir], dir.path(), &args);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stderr(&output).contains("warning"), "{}", stderr(&output));
}

/// A misspelt `--events` entry would install a hook Claude Code never runs, and the end it
/// was meant to gate would go undecided: it is refused, naming the events there are, and
/// nothing is written.
#[test]
fn installing_a_hook_for_an_event_claude_code_never_sends_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bin_dir = installed(&dir.path().join("root"));
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let args = ["install-hooks", "--claude", "--project", project.to_str().unwrap(), "--events", "TaskComplete"];
    let output = judged(&bin_dir, &[&bin_dir], dir.path(), &args);
    assert!(!output.status.success());
    let error = stderr(&output);
    assert!(
        error.contains("`TaskComplete` is not a hook event claude-code sends; its events are PreToolUse, ")
            && error.contains(", TaskCompleted, "),
        "{error}"
    );
    assert!(!project.join(".claude/settings.json").exists(), "nothing written");
}
