//! Whether each host is gated, and by what: its hook settings (a project's, the user's,
//! root's managed ones) and the plugin or extension as the host itself lists it (`claude
//! plugin list`, `copilot plugin list`, `codex plugin list` and Codex's own list of the
//! hooks it trusts, `gemini extensions list`). Each hook found has its judge-hook checked
//! (there, and this version); each host ends with one line: gated by what, or not.

use super::{Check, Status, VERSION, check, ok, resolve_program};
use crate::hosts::{self, CodexHook, HooksSwitch, HostCliError, Listed};
use crate::install::INSTALL_COMMAND;
use judged_core::event::Host;
use serde_json::Value;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What the hosts say, asked in parallel (a listing takes a second or two), then the
/// checks of each host in turn.
pub fn checks(checks: &mut Vec<Check>, cwd: &Path) {
    let path = std::env::var_os("PATH");
    let path = path.as_deref();
    let asked: Vec<Asked> = std::thread::scope(|scope| {
        let asking: Vec<_> = hosts::ALL.map(|host| scope.spawn(move || Asked::ask(host, cwd, path))).into();
        asking.into_iter().map(|a| a.join().expect("asking a host does not panic")).collect()
    });
    for asked in &asked {
        host_checks(checks, asked, cwd);
    }
    for host in hosts::ungated() {
        ungated_check(checks, host, path);
    }
}

/// A host no hook can gate (OpenCode): said, when it is on PATH, with what judged does of
/// its ends instead.
fn ungated_check(checks: &mut Vec<Check>, host: Host, path: Option<&std::ffi::OsStr>) {
    let setup = hosts::of(host);
    let name = format!("hooks.{}", host.as_str());
    let Some(bin) = crate::install::find_on_path(setup.program(), path) else {
        checks.push(ok(name, format!("no {} on PATH: nothing to witness", setup.program())));
        return;
    };
    let detail = format!(
        "{} ({}) cannot be gated: no hook of its can stop its agent's end. judged reads its sessions from its \
         database and records each end as a bypass",
        setup.title(),
        bin.display()
    );
    let fix = "nothing to install; its ends are in `judged report` as bypasses; to gate the work, run it under a \
               host judged gates";
    checks.push(check(name, Status::Warn, detail, Some(fix.to_owned())));
}

/// What one host said.
struct Asked {
    host: Host,
    bin: Option<PathBuf>,
    /// The plugin (extension) as the host lists it.
    listed: Result<Option<Listed>, HostCliError>,
    /// A host that runs only the hooks it trusts (Codex CLI): the hooks it loads for the
    /// directory, with their trust.
    trusted_hooks: Result<Vec<CodexHook>, HostCliError>,
}

impl Asked {
    fn ask(host: Host, cwd: &Path, path: Option<&std::ffi::OsStr>) -> Asked {
        let setup = hosts::of(host);
        let bin = crate::install::find_on_path(setup.program(), path);
        let (listed, trusted_hooks) = match &bin {
            None => (Ok(None), Ok(Vec::new())),
            Some(bin) => (
                hosts::judged_listed(host, bin, &hosts::neutral_dir()),
                if setup.trusts_hooks() { hosts::codex_hooks(bin, cwd) } else { Ok(Vec::new()) },
            ),
        };
        Asked { host, bin, listed, trusted_hooks }
    }
}

/// The command that installs the hook for the user (or, without a user level, the project).
fn hooks_command(host: Host, cwd: &Path) -> &'static str {
    let files = hosts::of(host).settings_files(cwd);
    let place = |p: &str| files.iter().find(|f| f.place == p).map(|f| f.reinstall);
    place("user").or_else(|| place("project")).unwrap_or("judged install-hooks")
}

/// One host: each place that holds its hook, then one line saying whether it is gated.
fn host_checks(checks: &mut Vec<Check>, asked: &Asked, cwd: &Path) {
    let (host, setup) = (asked.host, hosts::of(asked.host));
    let name = |place: &str| format!("hooks.{}.{place}", host.as_str());
    let files = setup.settings_files(cwd);
    let switched_off = hooks_switched_off(setup.hooks_switch(), &files, &setup.hooks_switch_files(cwd));
    if let Some(off) = switched_off.as_ref().filter(|off| !files.iter().any(|file| file.path == off.path)) {
        checks.push(switched_off_check(name("settings"), off, setup.title(), &files));
    }
    let mut hooked: Vec<String> = Vec::new();
    for file in &files {
        if let Some(off) = switched_off.as_ref().filter(|off| off.path == file.path) {
            checks.push(switched_off_check(name(file.place), off, setup.title(), &files));
            continue;
        }
        let counts = file.place == "managed" || switched_off.is_none();
        if hooks_file(checks, &name(file.place), &file.path, file.reinstall, host) && counts {
            hooked.push(format!("{} settings {}", file.place, file.path.display()));
        }
    }
    let plugin = plugin_check(checks, asked, &name("plugin"), cwd).filter(|_| switched_off.is_none());
    // A host that runs only the hooks it trusts: its own list decides what gates it
    // (managed hooks included).
    let gated_by = if setup.trusts_hooks() {
        trust_checks(checks, asked, &name("trust"))
    } else {
        hooked.iter().cloned().chain(plugin.clone()).collect()
    };
    let summary = format!("hooks.{}", host.as_str());
    let title = setup.title();
    checks.push(match (&asked.bin, gated_by.as_slice()) {
        (None, []) => ok(summary, format!("`{}` is not on PATH: nothing to gate", setup.program())),
        (Some(bin), []) => check(
            summary,
            Status::Warn,
            format!("{title} ({}) is not gated: no judge-hook runs when its agent ends", bin.display()),
            Some(format!("judged init (installs the plugin into every host), or `{}`", hooks_command(host, cwd))),
        ),
        (_, [_, _, ..]) if plugin.is_some() => check(
            summary,
            Status::Warn,
            format!("{title} is gated twice, each running judge-hook: {}", gated_by.join("; ")),
            Some("keep the plugin and take the other hook out (`judged uninstall-hooks` with the same flags)".into()),
        ),
        (_, by) => ok(summary, format!("{title} is gated by {}", by.join("; "))),
    });
}

/// A settings file that turns the host's hooks off, and the setting that does.
struct SwitchedOff {
    path: PathBuf,
    setting: &'static str,
    /// What it turns off: `every hook`, or `judge-hook's hook`.
    what: &'static str,
}

/// The failed check of a host whose hooks a setting turns off: only a managed hook, where
/// the host has one the setting cannot reach, gates it then.
fn switched_off_check(name: String, off: &SwitchedOff, title: &str, files: &[hosts::SettingsFile]) -> Check {
    let managed = files.iter().find(|f| f.place == "managed");
    let only = if managed.is_some() { ": only a managed hook gates it" } else { "" };
    let detail = format!("{} turns {} of {title} off (`{}`){only}", off.path.display(), off.what, off.setting);
    let fix = match managed {
        Some(managed) => format!(
            "take `{}` out of {}, or arm a managed hook (`{}`)",
            off.setting,
            off.path.display(),
            managed.reinstall
        ),
        None => format!("take `{}` out of {}", off.setting, off.path.display()),
    };
    check(name, Status::Fail, detail, Some(fix))
}

/// The settings file (of `files` but the managed ones, or of `more`) that turns the host's
/// hooks off as its `switch` does: `disableAllHooks: true`, unless a managed file turns
/// hooks back on (`false`, as Qwen Code's system settings do); Gemini CLI's
/// `hooksConfig.enabled: false`, or a `hooksConfig.disabled` entry naming judge-hook.
fn hooks_switched_off(switch: HooksSwitch, files: &[hosts::SettingsFile], more: &[PathBuf]) -> Option<SwitchedOff> {
    let mut candidates = files
        .iter()
        .filter(|f| f.place != "managed")
        .map(|f| f.path.as_path())
        .chain(more.iter().map(PathBuf::as_path));
    match switch {
        HooksSwitch::None => None,
        HooksSwitch::DisableAllHooks => {
            let set = |path: &Path| read(path)?.get("disableAllHooks")?.as_bool();
            if files.iter().any(|file| file.place == "managed" && set(&file.path) == Some(false)) {
                return None;
            }
            let path = candidates.find(|path| set(path) == Some(true))?;
            Some(SwitchedOff { path: path.to_owned(), setting: "disableAllHooks: true", what: "every hook" })
        }
        HooksSwitch::HooksConfig => candidates.find_map(|path| {
            let config = read(path)?.get("hooksConfig")?.clone();
            let (setting, what) = if config.get("enabled").and_then(Value::as_bool) == Some(false) {
                ("hooksConfig.enabled: false", "every hook")
            } else if config["disabled"].as_array()?.iter().filter_map(Value::as_str).any(runs_judge_hook) {
                ("hooksConfig.disabled", "judge-hook's hook")
            } else {
                return None;
            };
            Some(SwitchedOff { path: path.to_owned(), setting, what })
        }),
    }
}

/// A host's settings file as a value (bounded, never blocking; comments allowed, as Gemini
/// CLI's and Qwen Code's may hold them); `None` for none, or one that does not parse.
fn read(path: &Path) -> Option<Value> {
    let bytes = judged_io::config_file::read(path).ok()??;
    crate::install::settings_value(std::str::from_utf8(&bytes).ok()?)
}

/// Whether `command` runs judge-hook (its first word names it).
fn runs_judge_hook(command: &str) -> bool {
    Path::new(&first_word(command)).file_name().is_some_and(|name| name == "judge-hook")
}

/// The plugin as the host lists it, its hook checked; how it gates, when it does.
fn plugin_check(checks: &mut Vec<Check>, asked: &Asked, name: &str, cwd: &Path) -> Option<String> {
    let (host, bin) = (asked.host, asked.bin.as_ref()?);
    let listing = hosts::shown(bin, hosts::of(host).listing_args());
    match &asked.listed {
        Ok(None) => None,
        Err(why) => {
            let detail = format!("cannot tell whether the judged plugin is installed: {why}");
            checks.push(check(name, Status::Warn, detail, Some(format!("run `{listing}` and see what it says"))));
            None
        }
        Ok(Some(listed)) if !listed.enabled => {
            let detail = format!("`{listing}` lists {} {}, disabled", listed.id, listed.version);
            checks.push(check(
                name,
                Status::Warn,
                detail,
                Some(hosts::of(host).enable_hint(&crate::install::shell_word(&bin.to_string_lossy()))),
            ));
            None
        }
        Ok(Some(listed)) => {
            let by = format!("the plugin {} {} (`{listing}`)", listed.id, listed.version);
            let setup = hosts::of(host);
            let project = setup.settings_files(cwd).into_iter().filter(|f| f.place == "project" || f.place == "local");
            if let Some(file) =
                project.into_iter().find(|f| read(&f.path).is_some_and(|v| setup.plugin_off_in_project(&v, &listed.id)))
            {
                let detail = format!(
                    "{by}, but {} turns it off in this project (`enabledPlugins`: `{}` is false)",
                    file.path.display(),
                    listed.id
                );
                let fix = format!(
                    "take `{}` out of that file's `enabledPlugins`, or install the hook where no project turns it \
                     off: `sudo judged install-hooks --{} --managed`",
                    listed.id,
                    setup.program()
                );
                checks.push(check(name, Status::Fail, detail, Some(fix)));
                return None;
            }
            match &listed.hooks_file {
                Some(file) if hooks_file(checks, name, file, "judged init", asked.host) => {}
                Some(file) => {
                    let detail = format!("{by}: its {} runs no judge-hook", file.display());
                    checks.push(check(name, Status::Fail, detail, Some("judged init (it installs it again)".into())));
                    return None;
                }
                None => checks.push(ok(name, format!("{by}, enabled"))),
            }
            Some(by)
        }
    }
}

/// Codex CLI's own list of its hooks: judge-hook's Stop hooks that it runs, and a check
/// that fails for each one it skips (never trusted, or changed since).
fn trust_checks(checks: &mut Vec<Check>, asked: &Asked, name: &str) -> Vec<String> {
    let Some(bin) = &asked.bin else { return Vec::new() };
    let hooks = match &asked.trusted_hooks {
        Ok(hooks) => hooks,
        Err(why) => {
            let detail = format!("cannot ask Codex CLI which hooks it runs: {why}");
            checks.push(check(name, Status::Warn, detail, Some(format!("run `{} app-server` by hand", bin.display()))));
            return Vec::new();
        }
    };
    let mut runs = Vec::new();
    for hook in hooks.iter().filter(|h| h.is_ours() && h.event_name == "stop") {
        let from = match &hook.plugin_id {
            Some(plugin) => format!("the plugin {plugin}"),
            None => hook.source_path.display().to_string(),
        };
        if hook.trust_status.runs() && hook.enabled {
            let status = format!("{:?}", hook.trust_status).to_lowercase();
            runs.push(format!("the Stop hook of {from} ({status}, as Codex CLI lists it)"));
            continue;
        }
        let fix = match hook.plugin_id {
            Some(_) => "judged init (it trusts the plugin's hook), or trust it in `codex`'s /hooks".to_owned(),
            None => "judged install-hooks --codex --user (or --project: it trusts what it writes), or trust it in \
                     `codex`'s /hooks"
                .to_owned(),
        };
        let state = if hook.enabled { format!("{:?}", hook.trust_status).to_lowercase() } else { "disabled".into() };
        let detail = format!(
            "Codex CLI skips judge-hook's Stop hook from {from}: it is {state} in {}",
            crate::hosts::codex_config_path().display()
        );
        checks.push(check(name, Status::Fail, detail, Some(fix)));
    }
    runs
}

/// The hook commands of a hooks file that gate: judge-hook run alone (no other command
/// after it, which could answer instead) under the host's end event `end` (`command` for
/// Claude Code, `bash`/`command` for Copilot CLI). A judge-hook under another event gates
/// nothing, and a project's file is the agent's to write.
fn our_commands(value: &Value, end: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Some(events) = value["hooks"].as_object() else { return found };
    // The host's own spelling: it runs no hook under another.
    let gating = events.iter().filter(|(event, _)| *event == end).map(|(_, entries)| entries);
    let alone =
        |command: &str| runs_judge_hook(command) && !command.contains([';', '&', '|', '<', '>', '`', '$', '\n']);
    // A handler run through a shell as written: not another type, not a program given its
    // own arguments (`args`, `exec`: the command's words are then not what runs), not
    // another shell.
    let as_written = |hook: &Value| {
        hook.get("type").is_none_or(|kind| kind == "command")
            && hook.get("args").is_none()
            && hook.get("exec").is_none()
            && hook.get("shell").is_none_or(|shell| shell == "bash")
    };
    for entries in gating.filter_map(Value::as_array) {
        for entry in entries {
            // Claude Code nests the hooks in groups; Copilot CLI lists them directly.
            let hooks = entry["hooks"].as_array().map_or_else(|| vec![entry], |h| h.iter().collect());
            for hook in hooks.into_iter().filter(|hook| as_written(hook)) {
                for key in ["command", "bash"] {
                    if let Some(command) = hook[key].as_str().filter(|c| alone(c))
                        && !found.iter().any(|c| c == command)
                    {
                        found.push(command.to_owned());
                    }
                }
            }
        }
    }
    found
}

/// The first word of a POSIX shell command, unquoted.
fn first_word(command: &str) -> String {
    let mut word = String::new();
    let mut chars = command.trim_start().chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => break,
            '\'' => word.extend(chars.by_ref().take_while(|&c| c != '\'')),
            '"' => word.extend(chars.by_ref().take_while(|&c| c != '"')),
            '\\' => word.extend(chars.next()),
            c => word.push(c),
        }
    }
    word
}

/// Check one hooks file's `judge-hook` commands for `host`: the binary exists and is this
/// version. Whether the file holds any that gate: one that cannot be read or parsed gates
/// nothing (the host cannot load its hooks either), and fails.
fn hooks_file(checks: &mut Vec<Check>, name: &str, path: &Path, reinstall: &str, host: Host) -> bool {
    // A project's settings are the agent's to write: read as config files are (a regular
    // file, never blocking on a FIFO, bounded).
    let text = match judged_io::config_file::read(path) {
        Ok(None) => return false,
        Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(error) => {
            let fix = format!("make {} a readable regular file, or move it away", path.display());
            checks.push(check(name, Status::Fail, error.to_string(), Some(fix)));
            return false;
        }
    };
    // JSON, or TOML for Codex CLI's managed requirements: the same tree of hooks.
    let parsed = match path.extension().is_some_and(|e| e == "toml") {
        true => toml::from_str::<toml::Value>(&text)
            .map_err(|e| format!("not valid TOML: {}", e.message()))
            .and_then(|v| serde_json::to_value(v).map_err(|e| e.to_string())),
        false => serde_json::from_str(&text).map_err(|e| format!("not valid JSON: {e}")),
    };
    let value: Value = match parsed {
        Ok(value) => value,
        Err(error) => {
            let detail = format!("{} is {error}", path.display());
            let fix = format!("fix {}, then run `{reinstall}`", path.display());
            checks.push(check(name, Status::Fail, detail, Some(fix)));
            return false;
        }
    };
    let commands = our_commands(&value, judged_core::adapter::hooks(host).end_event().name.as_str());
    if commands.is_empty() {
        return false;
    }
    commands_check(checks, name, path, &commands, reinstall);
    true
}

/// Check the `judge-hook` commands of one hooks file: each binary exists and is this
/// version.
fn commands_check(checks: &mut Vec<Check>, name: &str, path: &Path, commands: &[String], reinstall: &str) {
    let base = path.parent().unwrap_or(Path::new("."));
    let mut problems = Vec::new();
    let mut found = Vec::new();
    for command in commands {
        let program = first_word(command);
        let Some(resolved) = resolve_program(&program, base) else {
            let place = if program.contains('/') { "does not exist" } else { "is not on PATH" };
            problems.push(format!("the hook runs `{program}`, which {place}"));
            continue;
        };
        // A settings file is anyone's to write (a cloned repository's among them): doctor
        // runs only the judge-hook installed with this judged, never a program a file names.
        if !is_installed_judge_hook(&resolved) {
            problems.push(format!(
                "{} is not the judge-hook installed with this judged (beside it or on PATH), so doctor did not run it",
                resolved.display()
            ));
            continue;
        }
        let version = Command::new(&resolved)
            .arg("--version")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
        match version {
            Some(v) if v == format!("judge-hook {VERSION}") => found.push(format!("{} ({v})", resolved.display())),
            Some(v) => {
                problems.push(format!("{} is `{v}`, not judge-hook {VERSION} like this judged", resolved.display()));
            }
            None => problems.push(format!("{} does not answer `--version` as judge-hook does", resolved.display())),
        }
    }
    let allows = commands.iter().filter(|command| {
        command.split_whitespace().collect::<Vec<_>>().windows(2).any(|w| w == ["--on-error", "allow"])
    });
    if let Some(command) = allows.into_iter().next() {
        let detail = format!(
            "{}: `{command}` lets the agent's end through whenever judged cannot be asked (judged stopped, its \
             socket gone)",
            path.display()
        );
        let fix = format!("rewrite the hook with `{reinstall}` (it blocks when judged cannot be asked)");
        checks.push(check(format!("{name}.on_error"), Status::Warn, detail, Some(fix)));
    }
    if problems.is_empty() {
        checks.push(ok(name, format!("{}: runs {}", path.display(), found.join(", "))));
    } else {
        let detail = format!("{}: {}", path.display(), problems.join("; "));
        let fix = format!(
            "install the tools (`{INSTALL_COMMAND}`), then rewrite the hook with `{reinstall}` \
             (it names judge-hook as PATH finds it)"
        );
        checks.push(check(name, Status::Fail, detail, Some(fix)));
    }
}

/// Whether `program` is the very file of a `judge-hook` installed with this judged: the one
/// beside its own binary, or the one PATH finds.
fn is_installed_judge_hook(program: &Path) -> bool {
    let beside = std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join("judge-hook")));
    let on_path = crate::install::find_on_path("judge-hook", std::env::var_os("PATH").as_deref());
    let same = |a: &Path, b: &Path| match (fs::metadata(a), fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    };
    beside.iter().chain(on_path.iter()).any(|installed| same(program, installed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_word_of_a_hook_command_is_unquoted() {
        assert_eq!(first_word("judge-hook --host claude-code"), "judge-hook");
        assert_eq!(first_word("'/opt/my tools/judge-hook' --host x"), "/opt/my tools/judge-hook");
        assert_eq!(first_word("'/a/it'\\''s/judge-hook' --host x"), "/a/it's/judge-hook");
    }

    #[test]
    fn our_commands_are_found_in_both_hosts_files() {
        let claude = serde_json::json!({"hooks": {"TaskCompleted": [
            {"hooks": [{"type": "command", "command": "judge-hook --host claude-code"}]},
            {"hooks": [{"type": "command", "command": "other"}]}
        ]}});
        assert_eq!(our_commands(&claude, "TaskCompleted"), ["judge-hook --host claude-code"]);
        let copilot = serde_json::json!({"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "/x/judge-hook --host copilot-cli"}]}});
        assert_eq!(our_commands(&copilot, "agentStop"), ["/x/judge-hook --host copilot-cli"]);
    }

    /// A planted file that names judge-hook where it gates nothing (another event, a
    /// command after it that answers instead) is not taken for a gate.
    #[test]
    fn judge_hook_under_another_event_or_followed_by_a_command_gates_nothing() {
        let planted = serde_json::json!({"hooks": {
            "Notification": [{"hooks": [{"type": "command", "command": "judge-hook --host claude-code"}]}],
            "TaskCompleted": [{"hooks": [{"type": "command", "command": "judge-hook --host claude-code; exit 0"}]}],
        }});
        assert!(our_commands(&planted, "TaskCompleted").is_empty());
    }

    /// A handler the host runs otherwise than as its command's words (another type, a
    /// program given `args`, another shell), or under its event spelled otherwise, does
    /// not run judge-hook as the gate: it is not taken for one.
    #[test]
    fn a_handler_run_otherwise_or_under_another_spelling_gates_nothing() {
        let under = |event: &str, handler: Value| serde_json::json!({"hooks": {event: [{"hooks": [handler]}]}});
        let command = "judge-hook --host claude-code";
        for handler in [
            serde_json::json!({"type": "command", "command": command, "args": ["--version"]}),
            serde_json::json!({"type": "http", "command": command}),
            serde_json::json!({"type": "command", "command": command, "shell": "powershell"}),
        ] {
            assert!(our_commands(&under("TaskCompleted", handler.clone()), "TaskCompleted").is_empty(), "{handler}");
        }
        let plain = serde_json::json!({"type": "command", "command": command});
        assert!(our_commands(&under("taskcompleted", plain.clone()), "TaskCompleted").is_empty());
        assert_eq!(our_commands(&under("TaskCompleted", plain), "TaskCompleted"), [command]);
    }

    /// The settings that turn a host's hooks off, wherever the host reads them: Copilot
    /// CLI's `disableAllHooks` in its `settings.json`s, Gemini CLI's `hooksConfig`.
    #[test]
    fn each_hosts_switch_that_turns_judge_hook_off_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let settings = |path: &Path| hosts::SettingsFile { place: "user", path: path.to_owned(), reinstall: "r" };
        let found = |switch, file: &Path, more: &[PathBuf]| {
            hooks_switched_off(switch, &[settings(file)], more).map(|off| (off.path, off.setting))
        };
        let hooks = file("hooks.json", r#"{"version": 1, "hooks": {}}"#);
        let off = file("settings.json", r#"{"disableAllHooks": true}"#);
        let copilot = found(HooksSwitch::DisableAllHooks, &hooks, std::slice::from_ref(&off));
        assert_eq!(copilot, Some((off.clone(), "disableAllHooks: true")));
        let gemini = file("gemini.json", "{\n  // ours\n  \"hooksConfig\": {\"enabled\": false}\n}");
        assert_eq!(found(HooksSwitch::HooksConfig, &gemini, &[]), Some((gemini.clone(), "hooksConfig.enabled: false")));
        let named =
            file("named.json", r#"{"hooksConfig": {"disabled": ["judge-hook --host gemini-cli --timeout 110"]}}"#);
        assert_eq!(found(HooksSwitch::HooksConfig, &named, &[]), Some((named.clone(), "hooksConfig.disabled")));
        let other = file("other.json", r#"{"hooksConfig": {"disabled": ["lint"]}}"#);
        assert_eq!(found(HooksSwitch::HooksConfig, &other, &[]), None);
        assert_eq!(found(HooksSwitch::None, &off, &[]), None);
    }
}
