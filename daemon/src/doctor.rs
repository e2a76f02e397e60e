//! `judged doctor [--json]`: check the installation and say how to fix each problem.
//!
//! Each check has a name, a status (`ok`, `warn`, `fail`), what it found and, when it is
//! not ok, the fix. `fail` makes the command exit non-zero; `warn` is something to know
//! (a root that does not exist yet, a host with no hook installed) that does not stop
//! the gate from working where it is installed.

use crate::service::{self, Manager, Unmanaged, WITHOUT_A_SERVICE};
use judged::config::{Config, ConfigFile, RootFlags};
use judged::install::{INSTALL_COMMAND, find_on_path};
use judged_jury::config::{JuryConfig, Preset};
use judged_protocol::{CatchUp, Request, StatusReport, paths};
use serde::Serialize;
use serde_json::Value;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

/// One check: what was looked at, what was found, and what to do.
#[derive(Debug, Serialize)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
    pub fix: Option<String>,
}

fn check(name: impl Into<String>, status: Status, detail: impl Into<String>, fix: Option<String>) -> Check {
    Check { name: name.into(), status, detail: detail.into(), fix }
}

fn ok(name: impl Into<String>, detail: impl Into<String>) -> Check {
    check(name, Status::Ok, detail, None)
}

/// Run every check; the process's exit status is non-zero when one failed.
pub fn run(json: bool) -> bool {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let checks = checks(&cwd);
    if json {
        let failed = checks.iter().any(|c| c.status == Status::Fail);
        let body = serde_json::json!({"ok": !failed, "version": VERSION, "cwd": cwd, "checks": checks});
        println!("{body}");
    } else {
        for c in &checks {
            let mark = match c.status {
                Status::Ok => "ok  ",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            println!("[{mark}] {:<28} {}", c.name, c.detail.replace('\n', "\n       "));
            if let Some(fix) = &c.fix {
                println!("       fix: {}", fix.replace('\n', "\n            "));
            }
        }
        let (warned, failed) = (
            checks.iter().filter(|c| c.status == Status::Warn).count(),
            checks.iter().filter(|c| c.status == Status::Fail).count(),
        );
        println!("\n{} checks: {failed} failed, {warned} warnings", checks.len());
    }
    !checks.iter().any(|c| c.status == Status::Fail)
}

/// Every check, in the order they are shown.
pub fn checks(cwd: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    let status = daemon_checks(&mut checks);
    let config_path = paths::config_path();
    let file = match ConfigFile::load(&config_path) {
        Ok(file) => Some(file),
        Err(error) => {
            let fix = format!("fix {} (see docs/configuration.md, \"config.toml\")", config_path.display());
            checks.push(check("config", Status::Fail, error.to_string(), Some(fix)));
            None
        }
    };
    if file.is_some() {
        let detail = if config_path.is_file() {
            format!("{} read", config_path.display())
        } else {
            format!("{} does not exist: the defaults apply", config_path.display())
        };
        checks.push(ok("config", detail));
    }
    if let Some(status) = &status {
        checks.push(config_in_force(status));
    }
    // Auto-start is on unless the file (if it reads) turns it off.
    service_check(&mut checks, file.as_ref().and_then(|f| f.auto_start) != Some(false), &config_path);
    root_checks(&mut checks, status.as_ref());
    hook_checks(&mut checks, cwd);
    if let Some(file) = &file {
        gate_and_jury_checks(&mut checks, file, &config_path, cwd);
    }
    data_dir_checks(&mut checks);
    checks
}

fn call<T: serde::de::DeserializeOwned>(request: Request) -> Result<T, judged_protocol::ClientError> {
    judged_protocol::call(&paths::socket_path(), request, Duration::from_secs(5))
}

/// The daemon answers, at this version; how far its catch-up has got.
fn daemon_checks(checks: &mut Vec<Check>) -> Option<StatusReport> {
    let socket = paths::socket_path();
    let status = match call::<StatusReport>(Request::Status) {
        Ok(status) => status,
        Err(error) => {
            // During the catch-up on start only `progress` is answered.
            if let Ok(progress) = call::<CatchUp>(Request::Progress) {
                let detail = format!(
                    "judged is catching up on start: {}/{} logs, {}/{} bytes; it answers everything once done",
                    progress.files_done, progress.files_found, progress.bytes_done, progress.bytes_found
                );
                checks.push(check("daemon", Status::Warn, detail, Some("wait, then run judged doctor again".into())));
                return None;
            }
            let detail = format!("judged does not answer on {}: {error}", socket.display());
            let fix = "judged start (or `judged service install` to run it at login; its log is judged.log in the \
                       data dir or `journalctl --user -u judged`)";
            checks.push(check("daemon", Status::Fail, detail, Some(fix.into())));
            return None;
        }
    };
    let detail = format!(
        "judged {} (pid {}), up {}, socket {}; {} logs, {} journal events",
        status.version,
        status.pid,
        uptime(status.uptime_seconds),
        status.socket.display(),
        status.files,
        status.journal_events
    );
    if status.version == VERSION {
        checks.push(ok("daemon", detail));
    } else {
        let detail = format!("{detail}; but this judged is {VERSION}");
        let fix = "restart the daemon on the installed version: `judged stop && judged start` \
                   (or `systemctl --user restart judged`)";
        checks.push(check("daemon", Status::Fail, detail, Some(fix.into())));
    }
    let lag = if status.lag_bytes > 0 { format!("; {} bytes not yet read", status.lag_bytes) } else { String::new() };
    let progress = &status.catch_up;
    if progress.done {
        checks.push(ok("catch_up", format!("done: {} logs, {} bytes{lag}", progress.files_done, progress.bytes_done)));
    } else {
        let detail = format!(
            "in progress: {}/{} logs, {}/{} bytes{lag}",
            progress.files_done, progress.files_found, progress.bytes_done, progress.bytes_found
        );
        checks.push(check("catch_up", Status::Warn, detail, Some("wait for it (judged status shows it)".into())));
    }
    checks.push(store_check(&status));
    checks.push(bypass_check(&status));
    if paths::is_witness_socket(&socket) {
        checks.push(witness_account_check(&socket));
    }
    Some(status)
}

/// A witness under its own account: its socket is another user's, and its store and key
/// are out of this user's reach.
fn witness_account_check(socket: &std::path::Path) -> Check {
    use std::os::unix::fs::MetadataExt;
    let data_dir = std::path::Path::new(service::system::DATA_DIR);
    let owner = std::fs::metadata(socket).map(|m| m.uid()).ok();
    let name = owner.and_then(|uid| judged::account::find(&uid.to_string())).map(|a| a.name);
    let shown = format!("{} (uid {})", name.as_deref().unwrap_or("?"), owner.map_or("?".into(), |u| u.to_string()));
    if owner == Some(judged_core::files::current_uid()) {
        return ok("witness", format!("you run the witness at {} yourself", socket.display()));
    }
    match std::fs::read_dir(data_dir) {
        Err(error) if error.kind() == std::io::ErrorKind::PermissionDenied => ok(
            "witness",
            format!(
                "judged runs as {shown}, an account of its own: its store and key in {} are out of your reach",
                data_dir.display()
            ),
        ),
        _ => check(
            "witness",
            Status::Fail,
            format!("judged runs as {shown}, but you can read {}, which holds its key", data_dir.display()),
            Some(format!("sudo chmod 0700 {}", data_dir.display())),
        ),
    }
}

/// Completions no gate decision allowed: a hook not installed, removed, or not heeded.
fn bypass_check(status: &StatusReport) -> Check {
    match status.completions_bypassed {
        0 => ok("bypasses", "no completion went without the gate allowing it"),
        n => check(
            "bypasses",
            Status::Warn,
            format!(
                "{n} completion(s) went without the gate allowing them (a hook not installed, removed or not heeded)"
            ),
            Some(
                "`judged report` lists each (its own section); install the hooks again where one is missing \
                 (`judged install-hooks`, or the plugin)"
                    .into(),
            ),
        ),
    }
}

/// The store's size against the logs', and what retention does about it.
fn store_check(status: &StatusReport) -> Check {
    let share = match status.bytes {
        0 => String::new(),
        logs => format!(" ({:.2}x)", status.store_bytes as f64 / logs as f64),
    };
    let pruned = match status.pruned_lines {
        0 => "nothing pruned (`judged prune` or [store] keep_days drop idle sessions' bytes)".to_owned(),
        lines => format!("{lines} lines' bytes pruned, their hashes kept"),
    };
    ok("store", format!("{} bytes for {} bytes of logs{share}; {pruned}", status.store_bytes, status.bytes))
}

fn uptime(seconds: u64) -> String {
    match seconds {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s if s < 172_800 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86_400),
    }
}

/// The daemon reads config.toml when it starts: a later edit is not in force yet.
/// The config the daemon decides under: it follows config.toml as it changes, so what can
/// be wrong is an edit it refused, or a setting that waits for a restart.
fn config_in_force(status: &StatusReport) -> Check {
    let config = &status.config;
    if let Some(rejected) = &config.rejected {
        let detail = format!(
            "the newest edit was not applied: {}; judged decides under {}, read {}",
            rejected.error, config.file, config.loaded_at
        );
        let fix = "fix that file: the fix takes effect at the next decision, with no restart";
        return check("config_in_force", Status::Warn, detail, Some(fix.into()));
    }
    if !config.restart_needed.is_empty() {
        let detail = format!(
            "{} changed in {}: they take effect at the next start (the gate and the jury already follow the file)",
            config.restart_needed.join(", "),
            config.file.path.display()
        );
        let fix = "restart judged: `judged stop && judged start` (or `systemctl --user restart judged`)";
        return check("config_in_force", Status::Warn, detail, Some(fix.into()));
    }
    ok(
        "config_in_force",
        format!(
            "judged decides under {}; it reads the file again when it changes (before each decision, every 2 s, \
             and at once on SIGHUP), and a project's .judged.toml whenever a decision reads it",
            config.file
        ),
    )
}

/// Whether a login service runs judged, or what starts it instead.
fn service_check(checks: &mut Vec<Check>, auto_start: bool, config_path: &Path) {
    let manager = Manager::default();
    let (path, program) = (manager.file(), manager.program());
    let installed = path.is_file();
    match Unmanaged::of(manager, false) {
        Some(unmanaged) => {
            let file = if installed { format!("{} is installed, but ", path.display()) } else { String::new() };
            let detail = format!("{file}{program}: {}", unmanaged.why(manager));
            if auto_start {
                checks.push(ok("service", format!("{detail}; {WITHOUT_A_SERVICE}")));
            } else {
                let detail = format!("{detail}, and auto_start = false in {}", config_path.display());
                let fix = format!(
                    "run `judged start` at login (in ~/.profile, say), or remove auto_start = false from {}",
                    config_path.display()
                );
                checks.push(check("service", Status::Warn, detail, Some(fix)));
            }
        }
        None if !installed => {
            let detail = format!("no login service ({} does not exist): judged runs once started", path.display());
            checks.push(check("service", Status::Warn, detail, Some("judged service install".into())));
        }
        None => match service::running(manager) {
            Ok(()) => checks.push(ok("service", format!("{} is installed and {program} runs it", path.display()))),
            Err(state) => {
                let detail = format!("{} is installed, but {program} does not run it ({state})", path.display());
                let log = match manager {
                    Manager::Systemd => "`journalctl --user -u judged`".to_owned(),
                    Manager::Launchd => paths::data_dir().join("judged.log").display().to_string(),
                };
                let fix = format!(
                    "judged service install (it enables and starts it); `judged service status` shows what the \
                     service manager says, {log} why it stopped"
                );
                checks.push(check("service", Status::Warn, detail, Some(fix)));
            }
        },
    }
}

/// The watched roots: the daemon's, or those `judged start` would watch.
fn root_checks(checks: &mut Vec<Check>, status: Option<&StatusReport>) {
    let (roots, whose) = match status {
        Some(s) => (
            [s.copilot_roots.clone(), s.claude_roots.clone(), s.codex_roots.clone(), s.gemini_roots.clone()],
            "watched",
        ),
        None => match Config::resolve(RootFlags::default()) {
            Ok(config) => (
                [
                    config.roots.copilot.clone(),
                    config.roots.claude.clone(),
                    config.roots.codex.clone(),
                    config.roots.gemini.clone(),
                ],
                "to watch once judged starts",
            ),
            Err(error) => {
                let fix = format!("fix {}", paths::config_path().display());
                checks.push(check("roots", Status::Fail, error.to_string(), Some(fix)));
                return;
            }
        },
    };
    let hosts = [
        ("copilot-cli", "copilot_roots"),
        ("claude-code", "claude_roots"),
        ("codex-cli", "codex_roots"),
        ("gemini-cli", "gemini_roots"),
    ];
    for ((host, key), roots) in hosts.into_iter().zip(roots) {
        let name = format!("roots.{host}");
        let missing: Vec<&PathBuf> = roots.iter().filter(|r| !r.is_dir()).collect();
        let listed = roots.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ");
        if roots.is_empty() {
            checks.push(ok(name, format!("no {host} root {whose}")));
        } else if missing.is_empty() {
            checks.push(ok(name, format!("{host} logs {whose}: {listed}")));
        } else {
            let absent = missing.iter().map(|r| r.display().to_string()).collect::<Vec<_>>().join(", ");
            let detail = format!("{host} logs {whose}: {listed}; not there (yet): {absent}");
            let fix = format!(
                "nothing to do if {host} has not run on this machine (a root is picked up when it appears); \
                 if it keeps its logs elsewhere, set {key} in {}",
                paths::config_path().display()
            );
            checks.push(check(name, Status::Warn, detail, Some(fix)));
        }
    }
}

/// The user's Claude Code settings file.
fn claude_user_settings() -> PathBuf {
    let config = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()).map(PathBuf::from);
    config.unwrap_or_else(|| judged_core::files::home_dir().join(".claude")).join("settings.json")
}

/// The hook commands in a hooks file that name `judge-hook` (`command` for Claude Code,
/// `bash`/`command` for Copilot CLI).
fn our_commands(value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let Some(events) = value["hooks"].as_object() else { return found };
    for entries in events.values().filter_map(Value::as_array) {
        for entry in entries {
            // Claude Code nests the hooks in groups; Copilot CLI lists them directly.
            let hooks = entry["hooks"].as_array().map_or_else(|| vec![entry], |h| h.iter().collect());
            for hook in hooks {
                for key in ["command", "bash"] {
                    if let Some(command) = hook[key].as_str().filter(|c| c.contains("judge-hook"))
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

/// Where a program named in a command resolves, as a shell would find it.
fn resolve_program(program: &str, base: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        let path = base.join(program);
        path.is_file().then_some(path)
    } else {
        find_on_path(program, std::env::var_os("PATH").as_deref())
    }
}

/// Check one hooks file's `judge-hook` commands: the binary exists and is this version.
fn hooks_file(checks: &mut Vec<Check>, name: &str, path: &Path, reinstall: &str) -> bool {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return false,
        Err(error) => {
            let fix = format!("make {} readable", path.display());
            checks.push(check(name, Status::Fail, format!("cannot read {}: {error}", path.display()), Some(fix)));
            return true;
        }
    };
    let value: Value = match serde_json::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            let detail = format!("{} is not valid JSON: {error}", path.display());
            let fix = format!("fix {}, then run `{reinstall}`", path.display());
            checks.push(check(name, Status::Fail, detail, Some(fix)));
            return true;
        }
    };
    let commands = our_commands(&value);
    if commands.is_empty() {
        return false;
    }
    commands_check(checks, name, path, &commands, reinstall);
    true
}

/// Codex CLI's managed requirements (TOML): whether they run judge-hook, and that one.
fn codex_requirements_file(checks: &mut Vec<Check>, path: &Path) -> bool {
    let reinstall = "sudo judged install-hooks --codex --managed";
    let Ok(text) = std::fs::read_to_string(path) else { return false };
    let value: toml::Value = match toml::from_str(&text) {
        Ok(value) => value,
        Err(error) => {
            let detail = format!("{} is not valid TOML: {}", path.display(), error.message());
            let fix = format!("fix {}, then run `{reinstall}`", path.display());
            checks.push(check("hooks.codex-cli.managed", Status::Fail, detail, Some(fix)));
            return true;
        }
    };
    let groups = value.get("hooks").and_then(|h| h.get("Stop")).and_then(toml::Value::as_array);
    let commands: Vec<String> = groups
        .into_iter()
        .flatten()
        .filter_map(|group| group.get("hooks")?.as_array())
        .flatten()
        .filter_map(|hook| hook.get("command")?.as_str().map(str::to_owned))
        .filter(|command| command.contains("judge-hook"))
        .collect();
    if commands.is_empty() {
        return false;
    }
    commands_check(checks, "hooks.codex-cli.managed", path, &commands, reinstall);
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

/// The hooks of Claude Code (project, user and managed), Copilot CLI (project and
/// managed) and Codex CLI's managed requirements.
fn hook_checks(checks: &mut Vec<Check>, cwd: &Path) {
    let project = cwd.join(".claude/settings.json");
    let user = claude_user_settings();
    let in_project = hooks_file(checks, "hooks.claude-code.project", &project, "judged install-hooks --claude");
    let in_user = hooks_file(checks, "hooks.claude-code.user", &user, "judged install-hooks --claude --user");
    // Root's managed settings: the one place an agent cannot take the hook out of.
    let managed = judged::install::claude_managed_path();
    let reinstall = "sudo judged install-hooks --claude --managed";
    let in_managed = hooks_file(checks, "hooks.claude-code.managed", &managed, reinstall);
    if !in_project && !in_user && !in_managed {
        let detail = format!("no judge-hook in {} or {}: Claude Code is not gated", project.display(), user.display());
        let fix = "judged install-hooks --claude --user (every project) or --claude (this one)";
        checks.push(check("hooks.claude-code", Status::Warn, detail, Some(fix.into())));
    }
    let copilot = judged::install::copilot_path(cwd);
    let policy = judged::install::copilot_managed_path();
    let reinstall = "sudo judged install-hooks --copilot --managed";
    let in_policy = hooks_file(checks, "hooks.copilot-cli.managed", &policy, reinstall);
    if !hooks_file(checks, "hooks.copilot-cli.project", &copilot, "judged install-hooks --copilot") && !in_policy {
        let detail = format!("no {}: Copilot CLI is not gated in this project", copilot.display());
        let fix = "judged install-hooks --copilot (in the project; commit the file for the team)";
        checks.push(check("hooks.copilot-cli", Status::Warn, detail, Some(fix.into())));
    }
    codex_requirements_file(checks, &judged::install::codex_managed_path());
}

/// The gate's settings for `cwd` and where they come from; the jury and its CLIs.
fn gate_and_jury_checks(checks: &mut Vec<Check>, file: &ConfigFile, config_path: &Path, cwd: &Path) {
    let trust = file.gate.project_trust(file.is_witness());
    let uses_panel = match file.gate.settings_for(cwd, trust) {
        Ok(settings) => {
            let detail = format!(
                "policy {} for {} (from {}); freshness {} s, events {}, on_error {}, require_reviewed_tree {}{}{}",
                settings.policy_name(),
                cwd.display(),
                settings.sources.join(" < "),
                settings.freshness_seconds,
                settings.events.join(","),
                settings.on_error.as_str(),
                settings.require_reviewed_tree,
                if settings.uses_panel() { format!(", rubric {}", settings.panel_rubric) } else { String::new() },
                match (trust.gate, trust.jury) {
                    (true, true) => "",
                    (true, false) =>
                        "; a project's .judged.toml sets its [gate] but never its [jury] (a witness account)",
                    (false, _) => "; project .judged.toml files are ignored (trust_project_files = false)",
                },
            );
            checks.push(ok("gate", detail));
            Some((settings.uses_panel(), settings.policy_name()))
        }
        Err(error) => {
            let fix = "fix the file named (its [gate] table: see docs/configuration.md, \"[gate]\")";
            checks.push(check("gate", Status::Fail, error.to_string(), Some(fix.into())));
            None
        }
    };
    let user = file.jury.as_ref().map(|jury| (jury, config_path));
    let jury = match judged_jury::config::for_project(user, trust.jury, cwd) {
        Ok(jury) => jury,
        Err(error) => {
            let fix = "fix the [jury] table of the file named (see docs/configuration.md, \"The jury\")";
            checks.push(check("jury", Status::Fail, error.to_string(), Some(fix.into())));
            return;
        }
    };
    let Some((jury, from)) = jury else {
        match uses_panel {
            Some((true, policy)) => {
                let detail = format!("policy {policy} asks the jury, but no [jury] is configured");
                let fix = format!(
                    "add a [jury] with its [[jury.jurors]] to {} (docs/configuration.md, \"The jury\")",
                    config_path.display()
                );
                checks.push(check("jury", Status::Fail, detail, Some(fix)));
            }
            _ => checks.push(ok(
                "jury",
                "no [jury] configured (needed only for the panel policies and `judge-evidence panel`)",
            )),
        }
        return;
    };
    juror_checks(checks, &jury, &from, cwd);
}

fn juror_checks(checks: &mut Vec<Check>, jury: &JuryConfig, from: &Path, cwd: &Path) {
    match jury.validate() {
        Ok(valid) => {
            let detail = format!(
                "{} jurors from {}: stage 1 {}; deadline {} s",
                jury.jurors.len(),
                from.display(),
                jury.stage_1.join(", "),
                valid.deadline.as_secs()
            );
            checks.push(ok("jury", detail));
        }
        Err(error) => {
            let fix = format!("fix [jury] in {}", from.display());
            checks.push(check("jury", Status::Fail, error.to_string(), Some(fix)));
        }
    }
    for juror in &jury.jurors {
        let name = format!("juror.{}", juror.name);
        let program = match (&juror.bin, juror.preset) {
            (Some(bin), _) => bin.to_string_lossy().into_owned(),
            (None, Preset::Command) => juror.command.iter().flatten().next().cloned().unwrap_or_default(),
            (None, preset) => preset.as_str().to_owned(),
        };
        let what = format!("{} juror, model {}", juror.preset.as_str(), juror.model);
        match resolve_program(&program, cwd) {
            Some(path) if std::fs::metadata(&path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0) => {
                checks.push(ok(name, format!("{what}: {}", path.display())));
            }
            found => {
                let why = match found {
                    Some(path) => format!("{} is not executable", path.display()),
                    None if program.contains('/') => format!("{program} does not exist"),
                    None => format!("`{program}` is not on PATH"),
                };
                let fix = match juror.preset {
                    Preset::Command => format!(
                        "install {program}, or point `command` of juror `{}` in {} at the program",
                        juror.name,
                        from.display()
                    ),
                    preset => format!(
                        "install the {} CLI, or set `bin` of juror `{}` in {} to where it is",
                        preset.as_str(),
                        juror.name,
                        from.display()
                    ),
                };
                checks.push(check(name, Status::Fail, format!("{what}: {why}"), Some(fix)));
            }
        }
    }
}

/// The data dir 0700, and the key, store and socket in it 0600, all ours.
fn data_dir_checks(checks: &mut Vec<Check>) {
    let data_dir = paths::data_dir();
    let socket_dir = paths::socket_dir();
    let uid = judged_core::files::current_uid();
    let mut dirs = vec![data_dir.clone()];
    if socket_dir != data_dir {
        dirs.push(socket_dir);
    }
    let mut private_dirs = true;
    for dir in &dirs {
        let name = if *dir == data_dir { "data_dir" } else { "socket_dir" };
        match std::fs::symlink_metadata(dir) {
            Err(_) => checks.push(ok(name, format!("{} does not exist yet (judged start creates it)", dir.display()))),
            Ok(meta) if !meta.is_dir() || meta.uid() != uid => {
                private_dirs = false;
                let detail = format!("{} is not a directory owned by this user", dir.display());
                let fix = format!("move {} away; judged start creates it as it should be", dir.display());
                checks.push(check(name, Status::Fail, detail, Some(fix)));
            }
            Ok(meta) if meta.mode() & 0o077 != 0 => {
                private_dirs = false;
                let detail = format!("{} is mode {:o}: open to group or others", dir.display(), meta.mode() & 0o7777);
                checks.push(check(name, Status::Fail, detail, Some(format!("chmod 700 {}", dir.display()))));
            }
            Ok(_) => checks.push(ok(name, format!("{} is 700", dir.display()))),
        }
    }
    let files = [
        ("witness_key", data_dir.join("signing.key")),
        ("database", data_dir.join("judged.db")),
        ("socket", paths::socket_path()),
    ];
    for (name, path) in files {
        match std::fs::symlink_metadata(&path) {
            Err(_) => checks.push(ok(name, format!("{} does not exist yet", path.display()))),
            Ok(meta) if meta.uid() != uid => {
                let detail = format!("{} is owned by uid {}, not this user", path.display(), meta.uid());
                let fix = format!("stop judged, move {} away and start judged again", path.display());
                checks.push(check(name, Status::Fail, detail, Some(fix)));
            }
            Ok(meta) if meta.mode() & 0o077 != 0 => {
                let mode = meta.mode() & 0o7777;
                // Inside a private directory nobody else can reach it; it is still to fix.
                let (status, note) = if private_dirs {
                    (Status::Warn, " (the directory keeps others out for now)")
                } else {
                    (Status::Fail, "")
                };
                let detail = format!("{} is mode {mode:o}, not 600{note}", path.display());
                checks.push(check(name, status, detail, Some(format!("chmod 600 {}", path.display()))));
            }
            Ok(meta) => checks.push(ok(name, format!("{} is {:o}", path.display(), meta.mode() & 0o777))),
        }
    }
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
        assert_eq!(our_commands(&claude), ["judge-hook --host claude-code"]);
        let copilot = serde_json::json!({"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "/x/judge-hook --host copilot-cli"}]}});
        assert_eq!(our_commands(&copilot), ["/x/judge-hook --host copilot-cli"]);
    }
}
