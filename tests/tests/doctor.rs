//! `judged doctor` (issue 15): a healthy setup passes; a broken one fails, naming each
//! problem's fix. Everything the doctor reads (the hosts' config dirs, the data dir, the
//! hooks files) is a temp directory of the test's.

use judged_tests::{Daemon, bin, workspace};
use serde_json::Value;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The user's machine, in a temp dir: the data dir, the hosts' homes and a project.
struct Machine {
    home: PathBuf,
    project: PathBuf,
    claude_config: PathBuf,
    tmp: tempfile::TempDir,
}

impl Machine {
    fn new(config: &str) -> Machine {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("judged");
        let project = tmp.path().join("project");
        let claude_config = tmp.path().join("claude");
        for dir in [&home, &project, &claude_config.join("projects"), &tmp.path().join("copilot/session-state")] {
            fs::create_dir_all(dir).unwrap();
        }
        fs::create_dir_all(tmp.path().join("codex/sessions")).unwrap();
        // The daemon watches this Codex root too (it inherits no CODEX_HOME from the test).
        let codex = tmp.path().join("codex/sessions");
        fs::write(home.join("config.toml"), format!("codex_roots = [\"{}\"]\n{config}", codex.display())).unwrap();
        Machine { home, project, claude_config, tmp }
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(bin(program));
        command
            .env("JUDGED_HOME", &self.home)
            .env("HOME", self.tmp.path())
            .env("CLAUDE_CONFIG_DIR", &self.claude_config)
            .env("COPILOT_HOME", self.tmp.path().join("copilot"))
            .env("CODEX_HOME", self.tmp.path().join("codex"))
            .env("XDG_CONFIG_HOME", self.tmp.path().join("config"))
            .env_remove("XDG_RUNTIME_DIR")
            // No user service manager to reach, whatever this machine runs.
            .env("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={}", self.tmp.path().join("no-bus").display()))
            .current_dir(&self.project);
        command
    }

    fn daemon(&self) -> Daemon {
        let copilot = self.tmp.path().join("copilot/session-state");
        Daemon::start(&self.home, &[&copilot], &[&self.claude_config.join("projects")])
    }

    fn judged(&self, args: &[&str]) -> Output {
        self.command("judged").args(args).output().expect("judged runs")
    }

    /// `judged doctor --json` and `judged doctor`: the checks by name, and the text.
    fn doctor(&self) -> (Option<i32>, Vec<Value>, String) {
        let json = self.judged(&["doctor", "--json"]);
        let body: Value = serde_json::from_slice(&json.stdout)
            .unwrap_or_else(|e| panic!("doctor --json prints JSON ({e}): {}", String::from_utf8_lossy(&json.stdout)));
        let text = self.judged(&["doctor"]);
        assert_eq!(text.status.code(), json.status.code(), "both forms agree");
        assert_eq!(body["ok"].as_bool(), Some(json.status.success()));
        let checks = body["checks"].as_array().cloned().expect("checks");
        (json.status.code(), checks, String::from_utf8_lossy(&text.stdout).into_owned())
    }
}

fn juror(script: &str) -> String {
    workspace().join("fixtures/jurors").join(script).display().to_string()
}

/// A jury of two `command` jurors from the fixtures.
fn jury(first_program: &str, second_bin: Option<&str>) -> String {
    let bin = second_bin.map(|b| format!("bin = \"{b}\"\n")).unwrap_or_default();
    format!(
        "[jury]\nstage_1 = [\"small-openai\", \"small-google\"]\ntiebreaker = \"big\"\n\n\
         [[jury.jurors]]\nname = \"small-openai\"\npreset = \"command\"\nmodel = \"gpt-5.4-mini\"\n\
         command = [\"{first_program}\", \"pass\", \"90\", \"{{model}}\"]\n\n\
         [[jury.jurors]]\nname = \"small-google\"\npreset = \"command\"\nmodel = \"gemini-3-flash\"\n{bin}\
         command = [\"{canned}\", \"pass\", \"85\", \"{{model}}\"]\n\n\
         [[jury.jurors]]\nname = \"big\"\npreset = \"command\"\nmodel = \"claude-sonnet-4.6\"\n\
         command = [\"{canned}\", \"pass\", \"95\", \"{{model}}\"]\n",
        canned = juror("canned.sh")
    )
}

fn named<'a>(checks: &'a [Value], name: &str) -> &'a Value {
    checks.iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("no check {name}: {checks:#?}"))
}

fn status_of(checks: &[Value], name: &str) -> String {
    named(checks, name)["status"].as_str().unwrap().to_owned()
}

fn fix_of(checks: &[Value], name: &str) -> String {
    named(checks, name)["fix"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn a_healthy_setup_passes_and_says_what_is_in_force() {
    let m = Machine::new(&format!(
        "auto_start = false\n[gate]\npolicy = \"evidence_or_panel\"\n\n{}",
        jury(&juror("canned.sh"), None)
    ));
    let _daemon = m.daemon();
    for target in [&["--claude"][..], &["--claude", "--user"], &["--copilot"]] {
        let output = m.judged(&[&["install-hooks"][..], target].concat());
        assert!(output.status.success(), "install-hooks {target:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
    let (code, checks, text) = m.doctor();
    let failed: Vec<&Value> = checks.iter().filter(|c| c["status"] == "fail").collect();
    assert_eq!(code, Some(0), "{failed:#?}\n{text}");
    for name in [
        "daemon",
        "catch_up",
        "store",
        "bypasses",
        "config",
        "roots.copilot-cli",
        "roots.claude-code",
        "roots.codex-cli",
        "hooks.claude-code.project",
        "hooks.claude-code.user",
        "hooks.copilot-cli.project",
        "gate",
        "jury",
        "juror.small-openai",
        "juror.small-google",
        "data_dir",
        "witness_key",
        "socket",
        "git",
    ] {
        assert_eq!(status_of(&checks, name), "ok", "{name}: {:#}", named(&checks, name));
    }
    let version = env!("CARGO_PKG_VERSION");
    assert!(named(&checks, "daemon")["detail"].as_str().unwrap().contains(&format!("judged {version}")));
    let hook = named(&checks, "hooks.claude-code.project")["detail"].as_str().unwrap().to_owned();
    assert!(hook.contains(&format!("judge-hook {version}")), "{hook}");
    let store = named(&checks, "store")["detail"].as_str().unwrap().to_owned();
    assert!(store.contains(" bytes of logs") && store.contains("nothing pruned"), "{store}");
    let gate = named(&checks, "gate")["detail"].as_str().unwrap().to_owned();
    assert!(gate.contains("policy evidence_or_panel") && gate.contains("user config [gate]"), "{gate}");
    // Gemini CLI's root is checked too (here it does not exist yet: a warning, with the key to set).
    assert!(fix_of(&checks, "roots.gemini-cli").contains("gemini_roots"), "{:#}", named(&checks, "roots.gemini-cli"));
    let roots = named(&checks, "roots.claude-code")["detail"].as_str().unwrap().to_owned();
    assert!(roots.contains(&m.claude_config.join("projects").display().to_string()), "{roots}");
    assert!(text.contains("0 failed"), "{text}");
}

/// The daemon follows config.toml: doctor says so, and names an edit it refused and a
/// setting that waits for a restart, each with what to do (it used to tell the user to
/// restart after any edit, which a restart no longer needs).
#[test]
fn doctor_says_how_config_changes_take_effect_and_names_an_edit_not_applied() {
    let m = Machine::new(
        "auto_start = false
",
    );
    let daemon = m.daemon();
    let config = m.home.join("config.toml");
    let (_, checks, _) = m.doctor();
    let in_force = named(&checks, "config_in_force");
    assert_eq!(in_force["status"], "ok", "{in_force}");
    let detail = in_force["detail"].as_str().unwrap();
    assert!(detail.contains("reads the file again when it changes") && detail.contains("SIGHUP"), "{detail}");

    let good = fs::read_to_string(&config).unwrap();
    fs::write(&config, format!("{good}[gate]\npolcy = \"off\"\n")).unwrap();
    // The daemon notices on its own (doctor asks its status, which looks at the file).
    let (_, checks, _) = m.doctor();
    let in_force = named(&checks, "config_in_force");
    assert_eq!(in_force["status"], "warn", "{in_force}");
    let detail = in_force["detail"].as_str().unwrap();
    assert!(
        detail.contains("the newest edit was not applied") && detail.contains("line 4: unknown field `polcy`"),
        "{detail}"
    );
    assert!(fix_of(&checks, "config_in_force").contains("no restart"));

    // Saved by rename, as editors save: a version written in place counts only once it has
    // stayed the same for the settle time.
    fs::write(config.with_extension("saving"), format!("{good}claude_roots = [\"/elsewhere\"]\n")).unwrap();
    fs::rename(config.with_extension("saving"), &config).unwrap();
    let (_, checks, _) = m.doctor();
    let detail = named(&checks, "config_in_force")["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("claude_roots changed") && detail.contains("next start"), "{detail}");
    assert!(fix_of(&checks, "config_in_force").contains("judged stop && judged start"));
    drop(daemon);
}

#[test]
fn a_broken_setup_fails_naming_each_fix() {
    let m =
        Machine::new(&format!("auto_start = false\n{}", jury("/nonexistent/juror.sh", Some("/nonexistent/bin/judge"))));
    let daemon = m.daemon();
    // A hook naming a binary that is gone (a cleaned build tree).
    let settings = m.project.join(".claude/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let hooks = serde_json::json!({"hooks": {"TaskCompleted": [{"hooks": [
        {"type": "command", "command": "/gone/target/release/judge-hook --host claude-code --timeout 110"}]}]}});
    fs::write(&settings, hooks.to_string()).unwrap();
    // A data dir and a key opened up.
    fs::set_permissions(&m.home, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(m.home.join("signing.key"), fs::Permissions::from_mode(0o644)).unwrap();

    let (code, checks, text) = m.doctor();
    assert_ne!(code, Some(0), "{text}");
    assert_eq!(status_of(&checks, "daemon"), "ok");
    assert_eq!(status_of(&checks, "hooks.claude-code.project"), "fail");
    let hook = named(&checks, "hooks.claude-code.project")["detail"].as_str().unwrap().to_owned();
    assert!(hook.contains("/gone/target/release/judge-hook") && hook.contains("does not exist"), "{hook}");
    assert!(fix_of(&checks, "hooks.claude-code.project").contains("judged install-hooks --claude"));
    for juror in ["juror.small-openai", "juror.small-google"] {
        assert_eq!(status_of(&checks, juror), "fail", "{juror}");
        assert!(fix_of(&checks, juror).contains(juror.trim_start_matches("juror.")), "{juror}");
    }
    assert!(named(&checks, "juror.small-openai")["detail"].as_str().unwrap().contains("/nonexistent/juror.sh"));
    assert!(named(&checks, "juror.small-google")["detail"].as_str().unwrap().contains("/nonexistent/bin/judge"));
    assert_eq!(status_of(&checks, "data_dir"), "fail");
    assert_eq!(fix_of(&checks, "data_dir"), format!("chmod 700 {}", m.home.display()));
    assert_eq!(status_of(&checks, "witness_key"), "fail");
    assert_eq!(fix_of(&checks, "witness_key"), format!("chmod 600 {}", m.home.join("signing.key").display()));
    // The text names each fix too.
    for fix in ["judged install-hooks --claude", "chmod 700", "chmod 600", "juror `small-openai`"] {
        assert!(text.contains(fix), "{fix} in:\n{text}");
    }
    fs::set_permissions(&m.home, fs::Permissions::from_mode(0o700)).unwrap();
    drop(daemon);
}

#[test]
fn with_the_daemon_down_it_fails_and_still_checks_the_roots_judged_would_watch() {
    let m = Machine::new("auto_start = false\n");
    let (code, checks, text) = m.doctor();
    assert_ne!(code, Some(0), "{text}");
    assert_eq!(status_of(&checks, "daemon"), "fail");
    assert!(fix_of(&checks, "daemon").contains("judged start"));
    // Gemini CLI's root is checked too (here it does not exist yet: a warning, with the key to set).
    assert!(fix_of(&checks, "roots.gemini-cli").contains("gemini_roots"), "{:#}", named(&checks, "roots.gemini-cli"));
    let roots = named(&checks, "roots.claude-code")["detail"].as_str().unwrap().to_owned();
    assert!(roots.contains(&m.claude_config.join("projects").display().to_string()), "{roots}");
    assert!(roots.contains("once judged starts"), "{roots}");
    assert_eq!(status_of(&checks, "jury"), "ok");
}

/// A `claude` on a PATH of its own whose `plugin list --json` prints `listing`: that PATH.
fn claude_listing(m: &Machine, listing: &str) -> String {
    let bin = m.tmp.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("claude"), format!("#!/bin/sh\n[ \"$*\" = 'plugin list --json' ] && echo '{listing}'\n"))
        .unwrap();
    fs::set_permissions(bin.join("claude"), fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// `judged doctor --json`'s checks with `path` as PATH.
fn doctor_with(m: &Machine, path: &str) -> Vec<Value> {
    let output = m.command("judged").args(["doctor", "--json"]).env("PATH", path).output().unwrap();
    serde_json::from_slice::<Value>(&output.stdout).unwrap()["checks"].as_array().cloned().unwrap()
}

/// A host that is installed but has no hook and no plugin is not gated: a warning naming
/// init and the hook; one that is not on PATH has nothing to gate.
#[test]
fn an_installed_host_without_hook_or_plugin_is_not_gated() {
    let m = Machine::new("");
    let (_, checks, _) = m.doctor();
    let detail = named(&checks, "hooks.claude-code")["detail"].as_str().unwrap().to_owned();
    assert_eq!(status_of(&checks, "hooks.claude-code"), "ok", "{detail}");
    assert!(detail.contains("`claude` is not on PATH: nothing to gate"), "{detail}");

    // A Claude Code whose own listing shows no plugin.
    let bin = m.tmp.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(bin.join("claude"), "#!/bin/sh\n[ \"$*\" = 'plugin list --json' ] && echo '[]'\n").unwrap();
    fs::set_permissions(bin.join("claude"), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let output = m.command("judged").args(["doctor", "--json"]).env("PATH", &path).output().unwrap();
    let checks = serde_json::from_slice::<Value>(&output.stdout).unwrap()["checks"].as_array().cloned().unwrap();
    let detail = named(&checks, "hooks.claude-code")["detail"].as_str().unwrap().to_owned();
    assert_eq!(status_of(&checks, "hooks.claude-code"), "warn", "{detail}");
    assert!(detail.contains("Claude Code") && detail.contains("is not gated"), "{detail}");
    let fix = fix_of(&checks, "hooks.claude-code");
    assert!(fix.contains("judged init") && fix.contains("judged install-hooks --claude --user"), "{fix}");
}

/// Claude Code's `disableAllHooks: true` in any of its settings but root's managed ones
/// (here the project's uncommitted `.claude/settings.local.json`) turns every hook off, the
/// user's and the plugin's too: doctor says the host is not gated and names that file (it
/// said "gated by user settings"). A settings file that cannot be parsed gates nothing
/// either (it was counted as gating).
#[test]
fn a_switch_that_turns_every_hook_off_leaves_the_host_ungated_and_is_named() {
    let m = Machine::new("");
    let path = claude_listing(&m, "[]");
    let installed = m.judged(&["install-hooks", "--claude", "--user"]);
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));
    let doctor = || doctor_with(&m, &path);
    let detail = |checks: &[Value], name: &str| named(checks, name)["detail"].as_str().unwrap().to_owned();
    let checks = doctor();
    assert_eq!(status_of(&checks, "hooks.claude-code"), "ok", "{}", detail(&checks, "hooks.claude-code"));
    assert!(detail(&checks, "hooks.claude-code").contains("is gated by user settings"));

    let local = m.project.join(".claude/settings.local.json");
    fs::create_dir_all(local.parent().unwrap()).unwrap();
    fs::write(&local, r#"{"disableAllHooks": true}"#).unwrap();
    let checks = doctor();
    assert_eq!(status_of(&checks, "hooks.claude-code"), "warn");
    assert!(detail(&checks, "hooks.claude-code").contains("is not gated"), "{}", detail(&checks, "hooks.claude-code"));
    assert_eq!(status_of(&checks, "hooks.claude-code.local"), "fail");
    assert_eq!(
        detail(&checks, "hooks.claude-code.local"),
        format!(
            "{} turns every hook of Claude Code off (`disableAllHooks: true`): only a managed hook gates it",
            local.display()
        )
    );
    assert!(fix_of(&checks, "hooks.claude-code.local").contains("sudo judged install-hooks --claude --managed"));

    fs::remove_file(&local).unwrap();
    fs::write(m.claude_config.join("settings.json"), "{\"hooks\": ").unwrap();
    let checks = doctor();
    assert_eq!(status_of(&checks, "hooks.claude-code.user"), "fail");
    assert!(detail(&checks, "hooks.claude-code.user").contains("is not valid JSON"));
    assert_eq!(status_of(&checks, "hooks.claude-code"), "warn", "{}", detail(&checks, "hooks.claude-code"));
}

/// Claude Code reads `enabledPlugins` from a project's settings over the user's, so a
/// project can turn judged's plugin off while `claude plugin list`, asked outside any
/// project, lists it enabled: doctor names the file and says the host is not gated (it said
/// "gated by the plugin").
#[test]
fn a_project_that_turns_the_plugin_off_leaves_the_host_ungated_and_is_named() {
    let m = Machine::new("");
    let path = claude_listing(&m, r#"[{"id":"judged@judged","version":"0.1.0","enabled":true}]"#);
    let doctor = || doctor_with(&m, &path);
    let detail = |checks: &[Value], name: &str| named(checks, name)["detail"].as_str().unwrap().to_owned();
    let checks = doctor();
    assert_eq!(status_of(&checks, "hooks.claude-code"), "ok", "{}", detail(&checks, "hooks.claude-code"));

    let settings = m.project.join(".claude/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    fs::write(&settings, r#"{"enabledPlugins": {"judged@judged": false}}"#).unwrap();
    let checks = doctor();
    assert_eq!(status_of(&checks, "hooks.claude-code.plugin"), "fail");
    let said = detail(&checks, "hooks.claude-code.plugin");
    assert!(said.contains(&format!("but {} turns it off in this project", settings.display())), "{said}");
    assert!(fix_of(&checks, "hooks.claude-code.plugin").contains("sudo judged install-hooks --claude --managed"));
    assert_eq!(status_of(&checks, "hooks.claude-code"), "warn");
    assert!(detail(&checks, "hooks.claude-code").contains("is not gated"), "{}", detail(&checks, "hooks.claude-code"));
}

/// A hook installed with `--on-error allow` lets the agent's end through whenever judged
/// cannot be asked: doctor says so, and how to install the blocking one.
#[test]
fn a_hook_that_allows_when_judged_cannot_be_asked_is_named() {
    let m = Machine::new("");
    let installed = m.judged(&["install-hooks", "--claude", "--user", "--on-error", "allow"]);
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));
    let (_, checks, _) = m.doctor();
    let name = "hooks.claude-code.user.on_error";
    assert_eq!(status_of(&checks, name), "warn");
    let detail = named(&checks, name)["detail"].as_str().unwrap();
    assert!(detail.contains("--on-error allow") && detail.contains("lets the agent's end through"), "{detail}");
    assert!(fix_of(&checks, name).contains("judged install-hooks --claude --user"));
}

/// A project's `.judged.toml` that would loosen the gate is named, with what was ignored
/// and how a user lets a project loosen its gate.
#[test]
fn a_project_file_that_would_loosen_the_gate_is_named_with_what_was_ignored() {
    let m = Machine::new("");
    let file = m.project.join(".judged.toml");
    fs::write(&file, "[gate]\npolicy = \"off\"\n").unwrap();
    let (_, checks, _) = m.doctor();
    let gate = named(&checks, "gate")["detail"].as_str().unwrap().to_owned();
    assert!(gate.contains("policy evidence") && gate.contains("may only make the gate stricter"), "{gate}");
    assert_eq!(status_of(&checks, "gate.project"), "warn");
    let detail = named(&checks, "gate.project")["detail"].as_str().unwrap().to_owned();
    assert_eq!(detail, format!("ignored, as it would loosen the gate: policy = \"off\" in {}", file.display()));
    assert!(fix_of(&checks, "gate.project").contains("[[gate.projects]]"), "{}", fix_of(&checks, "gate.project"));
}

/// With auto-start on (the default), a daemon that is not running is a warning: the first
/// hook or evidence call starts it, so the gate is armed.
#[test]
fn a_daemon_that_auto_start_covers_is_not_a_failure() {
    let m = Machine::new("");
    fs::set_permissions(&m.home, fs::Permissions::from_mode(0o700)).unwrap();
    let (code, checks, text) = m.doctor();
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(status_of(&checks, "daemon"), "warn", "{text}");
    let detail = named(&checks, "daemon")["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("judged is not running") && detail.contains("start it at their first call"), "{detail}");
    assert!(fix_of(&checks, "daemon").contains("judged start"));
}

/// A `systemctl` that answers as a user manager would, the service's state read from
/// `state` in `dir` (absent: the manager does not answer); `dir` goes first on PATH.
fn fake_systemctl(dir: &std::path::Path) {
    let script = format!(
        "#!/bin/sh\nstate={state}\n[ -f \"$state\" ] || {{ echo 'Failed to connect to bus' >&2; exit 1; }}\n\
         case \"$*\" in\n\
         '--user show --property=Version') echo Version=255 ;;\n\
         '--user show judged.service --property=ActiveState --value') cat \"$state\" ;;\n\
         *) exit 1 ;;\nesac\n",
        state = dir.join("state").display()
    );
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("systemctl"), script).unwrap();
    fs::set_permissions(dir.join("systemctl"), fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_service_check_says_whether_a_login_service_runs_judged_or_what_starts_it() {
    if cfg!(target_os = "macos") {
        return judged_tests::skip(false, "the check asks launchd on macOS; this fakes systemctl");
    }
    let m = Machine::new("");
    let fake = m.tmp.path().join("fake-bin");
    fake_systemctl(&fake);
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap_or_default());
    let unit = m.tmp.path().join("config/systemd/user/judged.service");
    let service = |config: &str| {
        fs::write(m.home.join("config.toml"), config).unwrap();
        let output = m.command("judged").args(["doctor", "--json"]).env("PATH", &path).output().unwrap();
        let body: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        let checks = body["checks"].as_array().cloned().unwrap();
        let check = named(&checks, "service").clone();
        (
            check["status"].as_str().unwrap().to_owned(),
            check["detail"].as_str().unwrap().to_owned(),
            fix_of(&checks, "service"),
        )
    };

    // No user manager answers: say so, and that auto-start covers it (unless it is off).
    let (status, detail, _) = service("");
    assert_eq!(status, "ok", "{detail}");
    assert!(
        detail.contains("no systemd user manager answers here") && detail.contains("auto-start covers it"),
        "{detail}"
    );
    let (status, detail, fix) = service("auto_start = false\n");
    assert_eq!(status, "warn", "{detail}");
    assert!(detail.contains("auto_start = false"), "{detail}");
    assert!(fix.contains("`judged start` at login"), "{fix}");

    // A manager answers: not installed, installed and active, installed and stopped.
    fs::write(fake.join("state"), "inactive\n").unwrap();
    let (status, detail, fix) = service("");
    assert_eq!((status.as_str(), fix.as_str()), ("warn", "judged service install"), "{detail}");
    assert!(detail.contains("no login service") && detail.contains(&unit.display().to_string()), "{detail}");
    fs::create_dir_all(unit.parent().unwrap()).unwrap();
    fs::write(&unit, "# a unit\n").unwrap();
    let (status, detail, fix) = service("");
    assert_eq!(status, "warn", "{detail}");
    assert!(detail.contains("installed, but systemctl does not run it (inactive)"), "{detail}");
    assert!(fix.contains("judged service install"), "{fix}");
    fs::write(fake.join("state"), "active\n").unwrap();
    let (status, detail, _) = service("");
    assert_eq!(status, "ok", "{detail}");
    assert!(detail.contains("installed and systemctl runs it"), "{detail}");
}

/// Issue 31: doctor asks a host's CLI what it has installed from the user's home, never
/// from the project it is run in, whose host settings (`.claude/settings.json`,
/// `.gemini/settings.json`, `.codex/`) are the agent's to write.
#[test]
fn doctor_runs_the_hosts_clis_outside_the_project() {
    let m = Machine::new("");
    let bin = m.tmp.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let seen = m.tmp.path().join("ran-in");
    let stand_in = format!("#!/bin/sh\npwd >> {}\necho '[]'\n", seen.display());
    fs::write(bin.join("claude"), stand_in).unwrap();
    fs::set_permissions(bin.join("claude"), fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let output = m.command("judged").args(["doctor", "--json"]).env("PATH", &path).output().unwrap();
    assert!(!output.stdout.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));
    let ran_in = fs::read_to_string(&seen).expect("the host's CLI was asked");
    let home = m.tmp.path().canonicalize().unwrap();
    assert!(ran_in.lines().all(|dir| Path::new(dir) == home), "ran in {ran_in:?}, not the home {home:?}");
    assert!(!ran_in.contains("project"), "{ran_in}");
}

/// A project whose remote does not fetch `refs/notes/judged` is told the refspec that
/// carries the attestations, and how to push them; with it, the check is ok.
#[test]
fn a_remote_that_does_not_fetch_the_attestations_notes_is_named_with_its_refspec() {
    let machine = Machine::new("");
    let git = |args: &[&str]| {
        let status = Command::new("git").arg("-C").arg(&machine.project).args(args).status().unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    let (_, checks, _) = machine.doctor();
    assert!(checks.iter().all(|c| !c["name"].as_str().unwrap().starts_with("notes from")), "no remote, no check");
    git(&["remote", "add", "origin", "https://example.invalid/cart.git"]);
    let (_, checks, text) = machine.doctor();
    assert_eq!(status_of(&checks, "notes from origin"), "warn", "{text}");
    assert!(
        named(&checks, "notes from origin")["detail"]
            .as_str()
            .unwrap()
            .contains("remote.origin.fetch does not fetch refs/notes/judged"),
        "{text}"
    );
    let fix = fix_of(&checks, "notes from origin");
    assert!(
        fix.starts_with("git config --add remote.origin.fetch '+refs/notes/*:refs/notes/remotes/origin/*'"),
        "{fix}"
    );
    assert!(fix.contains("git push origin HEAD refs/notes/judged"), "{fix}");
    git(&["config", "--add", "remote.origin.fetch", "+refs/notes/*:refs/notes/remotes/origin/*"]);
    let (_, checks, text) = machine.doctor();
    assert_eq!(status_of(&checks, "notes from origin"), "ok", "{text}");
}

/// A project's hook settings are the agent's to write: one that is a FIFO (or too large)
/// is refused by name, as config files are, instead of holding doctor forever.
#[test]
fn a_projects_hook_settings_that_are_a_fifo_do_not_hold_doctor() {
    let m = Machine::new("");
    fs::create_dir_all(m.project.join(".claude")).unwrap();
    let fifo = m.project.join(".claude/settings.json");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let mut child =
        m.command("judged").args(["doctor", "--json"]).stdout(std::process::Stdio::piped()).spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("doctor is held by the FIFO at {}", fifo.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    let checks = serde_json::from_slice::<Value>(&output.stdout).unwrap()["checks"].as_array().cloned().unwrap();
    assert_eq!(status_of(&checks, "hooks.claude-code.project"), "fail");
    let detail = named(&checks, "hooks.claude-code.project")["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains(&fifo.display().to_string()) && detail.contains("not a regular file"), "{detail}");
}

/// The OpenCode database judged is set to read: not there yet is fine (OpenCode has not run);
/// a directory, or a file that is no OpenCode database, is named with what to set.
#[test]
fn an_opencode_database_that_is_not_one_is_named_with_the_setting_to_fix() {
    let m = Machine::new("auto_start = false\n");
    let (_, checks, _) = m.doctor();
    assert_eq!(status_of(&checks, "opencode.database"), "ok", "{:#}", named(&checks, "opencode.database"));

    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("opencode.db");
    fs::write(&garbage, b"not a database at all").unwrap();
    for (database, says) in [(dir.path().to_path_buf(), "is not a file"), (garbage, "cannot read OpenCode's database")]
    {
        let m =
            Machine::new(&format!("auto_start = false\nopencode_databases = [{:?}]\n", database.display().to_string()));
        let (code, checks, text) = m.doctor();
        let check = named(&checks, "opencode.database");
        assert_eq!((check["status"].as_str(), code), (Some("fail"), Some(1)), "{check:#}");
        assert!(check["detail"].as_str().unwrap().contains(says), "{check:#}");
        assert!(fix_of(&checks, "opencode.database").contains("opencode_databases"), "{check:#}");
        assert!(text.contains(&database.display().to_string()), "{text}");
    }
}

/// Without git, judged reads no working tree: the doctor warns, naming what that costs and
/// what to do.
#[test]
fn without_git_on_path_the_doctor_warns_what_judged_cannot_read() {
    let m = Machine::new("auto_start = false\n");
    let empty = m.tmp.path().join("empty-path");
    fs::create_dir_all(&empty).unwrap();
    let output = m.command("judged").args(["doctor", "--json"]).env("PATH", &empty).output().expect("judged runs");
    let body: Value = serde_json::from_slice(&output.stdout).expect("doctor --json prints JSON");
    let checks = body["checks"].as_array().cloned().expect("checks");
    assert_eq!(status_of(&checks, "git"), "warn", "{:#}", named(&checks, "git"));
    let detail = named(&checks, "git")["detail"].as_str().unwrap().to_owned();
    assert!(detail.starts_with("git is not on PATH: judged cannot read a repository's working tree"), "{detail}");
    assert_eq!(fix_of(&checks, "git"), "install git, or put it on the PATH judged runs with");
}

/// A project's settings can name any program `judge-hook`: doctor (and `judged init`, which
/// runs it) runs none but the judge-hook installed with judged, and a planted one that
/// would have answered as judge-hook does is a failure, not "gated".
#[test]
fn a_judge_hook_a_projects_settings_plant_is_never_run() {
    let m = Machine::new("");
    let settings_dir = m.project.join(".claude");
    fs::create_dir_all(&settings_dir).unwrap();
    let ran = m.tmp.path().join("planted-ran");
    let planted = settings_dir.join("judge-hook");
    let version = env!("CARGO_PKG_VERSION");
    fs::write(&planted, format!("#!/bin/sh\ntouch '{}'\necho 'judge-hook {version}'\n", ran.display())).unwrap();
    fs::set_permissions(&planted, fs::Permissions::from_mode(0o755)).unwrap();
    let hooks = serde_json::json!({"hooks": {"TaskCompleted": [{"hooks": [
        {"type": "command", "command": "./judge-hook --host claude-code --timeout 110"}]}]}});
    fs::write(settings_dir.join("settings.json"), hooks.to_string()).unwrap();

    let (_, checks, text) = m.doctor();
    assert!(!ran.exists(), "doctor ran the planted program:\n{text}");
    assert_eq!(status_of(&checks, "hooks.claude-code.project"), "fail", "{text}");
    let detail = named(&checks, "hooks.claude-code.project")["detail"].as_str().unwrap().to_owned();
    let words = format!(
        "{} is not the judge-hook installed with this judged (beside it or on PATH), so doctor did not run it",
        settings_dir.join("./judge-hook").display()
    );
    assert!(detail.contains(&words), "{detail}");
}
