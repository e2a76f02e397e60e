//! `judged doctor [--json]`: check the installation and say how to fix each problem.
//!
//! Each check has a name, a status (`ok`, `warn`, `fail`), what it found and, when it is
//! not ok, the fix. `fail` makes the command exit non-zero; `warn` is something to know
//! (a root that does not exist yet, a host with no hook installed) that does not stop
//! the gate from working where it is installed.

mod gating;
mod notes;

use crate::hosts::{self, Login};
use crate::install::find_on_path;
use crate::service::{self, Manager, Unmanaged, WITHOUT_A_SERVICE};
use judged_core::event::Host;
use judged_daemon::config::{Config, ConfigFile, RootFlags};
use judged_daemon::hook_gate::{GateSettings, LOOSENING_IGNORED};
use judged_jury::config::{JuryConfig, Preset};
use judged_protocol::config::GateTrust;
use judged_protocol::{CatchUp, Request, StatusReport, paths};
use serde::Serialize;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
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
    let config_path = paths::config_path();
    let file = ConfigFile::load(&config_path);
    // Auto-start is on unless the file (if it reads) turns it off.
    let auto_start = file.as_ref().ok().and_then(|f| f.auto_start) != Some(false);
    let status = daemon_checks(&mut checks, auto_start);
    let file = match file {
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
    service_check(&mut checks, auto_start, &config_path);
    root_checks(&mut checks, status.as_ref());
    checks.push(git_check());
    opencode_checks(&mut checks, status.as_ref());
    gating::checks(&mut checks, cwd);
    notes::checks(&mut checks, cwd);
    if let Some(file) = &file {
        gate_and_jury_checks(&mut checks, file, &config_path, cwd);
    }
    data_dir_checks(&mut checks);
    checks
}

fn call<T: serde::de::DeserializeOwned>(request: Request) -> Result<T, judged_protocol::ClientError> {
    judged_protocol::call(&paths::socket_path(), request, Duration::from_secs(5))
}

/// The daemon answers, at this version; how far its catch-up has got. One that does not
/// answer is a failure only when nothing would start it: with `auto_start`, the first
/// hook or evidence call starts it.
fn daemon_checks(checks: &mut Vec<Check>, auto_start: bool) -> Option<StatusReport> {
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
            let fix = "judged start (or `judged service install` to run it at login; its log is judged.log in the \
                       data dir or `journalctl --user -u judged`)";
            let (status, detail) = if auto_start {
                let detail = format!(
                    "judged is not running (nothing answers on {}); judge-hook and judge-evidence start it at their \
                     first call (auto_start), so the gate is armed",
                    socket.display()
                );
                (Status::Warn, detail)
            } else {
                let detail = format!(
                    "judged does not answer on {}: {error}; auto_start = false, so nothing starts it",
                    socket.display()
                );
                (Status::Fail, detail)
            };
            checks.push(check("daemon", status, detail, Some(fix.into())));
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
    let name = owner.and_then(|uid| judged_daemon::account::find(&uid.to_string())).map(|a| a.name);
    let shown = format!("{} (uid {})", name.as_deref().unwrap_or("?"), owner.map_or("?".into(), |u| u.to_string()));
    if owner == Some(judged_io::files::current_uid()) {
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
            match status.forced_ends {
                0 => format!(
                    "{n} completion(s) went without the gate allowing them (a hook not installed, removed or not \
                     heeded)"
                ),
                forced => format!(
                    "{n} completion(s) went without the gate allowing them, {forced} of them ended by the host after \
                     the gate's blocks (its block cap) and the rest with no hook heeded"
                ),
            },
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

/// The OpenCode databases judged reads (the daemon's, or those `judged start` would read):
/// each one there a SQLite database the reader can open.
fn opencode_checks(checks: &mut Vec<Check>, status: Option<&StatusReport>) {
    let databases = match status {
        Some(s) => s.opencode_databases.clone(),
        None => match Config::resolve(RootFlags::default()) {
            Ok(config) => config.opencode_databases,
            // `roots` says what is wrong with the config.
            Err(_) => return,
        },
    };
    let fix = || {
        format!(
            "set opencode_databases in {} to OpenCode's database (`opencode db path` prints it)",
            paths::config_path().display()
        )
    };
    for database in databases {
        let name = "opencode.database";
        let shown = database.display();
        match std::fs::metadata(&database) {
            Err(_) => checks.push(ok(name, format!("no OpenCode database at {shown}: OpenCode has not run here"))),
            Ok(meta) if !meta.is_file() => checks.push(check(
                name,
                Status::Fail,
                format!("{shown} is not a file: judged reads OpenCode's sessions from its SQLite database"),
                Some(fix()),
            )),
            Ok(_) => match judged_daemon::ingest::opencode_sessions_in(&database) {
                Ok(sessions) => checks.push(ok(name, format!("OpenCode's database {shown}: {sessions} session(s)"))),
                Err(error) => checks.push(check(name, Status::Fail, error.to_string(), Some(fix()))),
            },
        }
    }
}

/// The watched roots: the daemon's, or those `judged start` would watch.
fn root_checks(checks: &mut Vec<Check>, status: Option<&StatusReport>) {
    let (roots, whose) = match status {
        Some(s) => (s.roots.clone(), "watched"),
        None => match Config::resolve(RootFlags::default()) {
            Ok(config) => (config.roots.of_hosts().clone(), "to watch once judged starts"),
            Err(error) => {
                let fix = format!("fix {}", paths::config_path().display());
                checks.push(check("roots", Status::Fail, error.to_string(), Some(fix)));
                return;
            }
        },
    };
    for (host, key, roots) in
        Host::ALL.map(|host| (host.as_str(), judged_core::adapter::of(host).roots_key(), roots.of(host)))
    {
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

/// git, with which judged reads a repository's working tree: the tree a review saw, the
/// tree id an attestation binds, the changes a jury is shown.
fn git_check() -> Check {
    match find_on_path("git", std::env::var_os("PATH").as_deref()) {
        Some(git) => ok("git", format!("{}: judged reads working trees with it", git.display())),
        None => check(
            "git",
            Status::Warn,
            "git is not on PATH: judged cannot read a repository's working tree (no tree is recorded with a \
             review or for an attestation, a jury is shown no changes, and require_reviewed_tree blocks in every \
             repository)",
            Some("install git, or put it on the PATH judged runs with".into()),
        ),
    }
}

/// Where a program named in a command resolves, as a shell would find it.
pub(crate) fn resolve_program(program: &str, base: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        let path = base.join(program);
        path.is_file().then_some(path)
    } else {
        find_on_path(program, std::env::var_os("PATH").as_deref())
    }
}

/// The gate's settings for `cwd` and where they come from; the jury and its CLIs.
fn gate_and_jury_checks(checks: &mut Vec<Check>, file: &ConfigFile, config_path: &Path, cwd: &Path) {
    let trust = file.gate.project_trust(file.is_witness());
    let asks_the_jury = match file.gate.settings_for(cwd, trust) {
        Ok(settings) => {
            let detail = format!(
                "policy {} for {} (from {}); freshness {} s, events {}, on_error {}, require_reviewed_tree {}{}{}",
                settings.policy_name(),
                cwd.display(),
                settings.sources.join(" < "),
                settings.freshness_seconds,
                settings.events_listed(","),
                settings.on_error.as_str(),
                settings.require_reviewed_tree,
                if settings.asks_the_jury() { format!(", rubric {}", settings.panel_rubric) } else { String::new() },
                match (trust.gate, trust.jury) {
                    (GateTrust::Full, true) => "",
                    (GateTrust::Full, false) =>
                        "; a project's .judged.toml sets its [gate] but never its [jury] (a witness account)",
                    (GateTrust::Tightens, _) =>
                        "; a project's .judged.toml may only make the gate stricter, and names no [jury]",
                    (GateTrust::Ignored, _) => "; project .judged.toml files are ignored (trust_project_files = false)",
                },
            );
            checks.push(ok("gate", detail));
            if !settings.loosening_ignored.is_empty() {
                let detail = format!("ignored, as it would loosen the gate: {}", settings.loosening_ignored.join("; "));
                checks.push(check("gate.project", Status::Warn, detail, Some(LOOSENING_IGNORED.into())));
            }
            Some((settings.asks_the_jury(), settings.policy_name()))
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
        match asks_the_jury {
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
                checks.push(juror_login(name, juror.preset, format!("{what}: {}", path.display())));
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

/// A juror CLI that is there: whether it is logged in, and what was not checked (whether
/// its login may use the model is known only when it answers).
fn juror_login(name: String, preset: Preset, found: String) -> Check {
    let Some(host) = preset.host() else {
        return ok(name, format!("{found}; the program's login, if any, is not checked"));
    };
    let unchecked = "whether it may use this model is not checked offline";
    match hosts::of(host).login(&hosts::env_var) {
        Login::Yes(how) => ok(name, format!("{found}; logged in ({how}); {unchecked}")),
        Login::Unknown(why) => ok(name, format!("{found}; login not checked ({why}); {unchecked}")),
        Login::No { file, variables } => check(
            name,
            Status::Warn,
            format!("{found}; not logged in (no {file} and no {variables}): it fails at every run"),
            Some(format!("log {} in (run it once), or set {variables}", preset.as_str())),
        ),
    }
}

/// The data dir 0700, and the key, store and socket in it 0600, all ours.
fn data_dir_checks(checks: &mut Vec<Check>) {
    let data_dir = paths::data_dir();
    let socket_dir = paths::socket_dir();
    let uid = judged_io::files::current_uid();
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
