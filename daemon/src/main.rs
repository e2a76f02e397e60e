//! `judged start | status | sessions | verify-log | stop`.

mod doctor;
mod report;
mod service;

use clap::{CommandFactory, Parser, Subcommand};
use judged::config::{Config, ConfigError, RootFlags};
use judged::install::InstallError;
use judged_protocol::{
    CatchUp, ClientError, DecisionRecord, PrefixCheck, Request, SessionName, SessionSummary, StatusReport, Stopping,
    paths,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "judged", version, about = "Witness coding-agent session logs and judge review evidence")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Start the daemon; returns once its first catch-up of the logs is done.
    Start {
        /// Run attached, logging to stderr (for systemd, launchd and tests).
        #[arg(long)]
        foreground: bool,
        #[command(flatten)]
        roots: RootFlags,
    },
    /// Show the daemon's state.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// List the sessions the daemon witnessed.
    Sessions {
        #[arg(long)]
        json: bool,
    },
    /// Recompute the per-session summaries from the stored lines and journal (replay).
    Rebuild,
    /// Re-hash a session's whole ingested prefix against its file.
    VerifyLog { session: String },
    /// Stop the daemon.
    Stop,
    /// List the review gate's decisions.
    Decisions {
        #[arg(long)]
        json: bool,
    },
    /// Register the `judge-hook` gate with Claude Code or Copilot CLI.
    InstallHooks {
        #[command(flatten)]
        target: HookTarget,
        /// Claude Code events to gate (default: TaskCompleted only).
        #[arg(long, value_delimiter = ',', default_value = "TaskCompleted")]
        events: Vec<String>,
        /// What the hook does when judged cannot be asked.
        #[arg(long = "on-error", default_value = "block", value_parser = ["block", "allow"])]
        on_error: String,
        /// Show the change without writing it.
        #[arg(long)]
        dry_run: bool,
        /// Name `judge-hook` by its absolute path, not by its name on PATH.
        #[arg(long)]
        absolute: bool,
    },
    /// Remove what `install-hooks` added, and only that.
    UninstallHooks {
        #[command(flatten)]
        target: HookTarget,
        #[arg(long)]
        dry_run: bool,
    },
    /// Run judged at login: a systemd user unit (Linux) or a launchd agent (macOS).
    #[command(subcommand)]
    Service(service::ServiceCmd),
    /// Check the daemon, roots, hooks, gate policy, jurors and data dir; each problem with its fix.
    Doctor {
        /// One JSON object: each check's name, status (ok/warn/fail), detail and fix.
        #[arg(long)]
        json: bool,
    },
    /// What the gate decided, per project and session, with the review or jury behind each allow.
    Report {
        /// Only decisions since then: `7d`, `24h`, `30m` or an ISO-8601 time (default: 7d).
        #[arg(long, default_value = "7d")]
        since: String,
        /// Also write a self-contained HTML report (timeline and table) to FILE.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Print the report's data as JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Print judged's public key, which checks its artifacts' signatures anywhere
    /// (`judge-evidence validate --public-key KEY`).
    Key {
        #[command(subcommand)]
        action: Option<KeyAction>,
        /// Every key that has been current (current first), as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print judged's shell completions (`judged completions bash > ~/.local/share/bash-completion/completions/judged`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Subcommand)]
enum KeyAction {
    /// Sign with a new key from now on (a running daemon too); the old public keys stay
    /// listed, so what they signed still checks.
    Rotate,
}

#[derive(clap::Args)]
struct HookTarget {
    /// Claude Code settings.json.
    #[arg(long, required_unless_present = "copilot")]
    claude: bool,
    /// Copilot CLI `.github/hooks/judged.json` in the project.
    #[arg(long, conflicts_with = "claude")]
    copilot: bool,
    /// The project directory (default: the current directory).
    #[arg(long, conflicts_with = "user")]
    project: Option<PathBuf>,
    /// The user's Claude Code settings (`$CLAUDE_CONFIG_DIR` or `~/.claude`).
    #[arg(long, conflicts_with = "copilot")]
    user: bool,
}

impl HookTarget {
    fn project_dir(&self) -> PathBuf {
        self.project.clone().unwrap_or_else(|| PathBuf::from("."))
    }

    fn claude_settings(&self) -> PathBuf {
        if self.user {
            let config = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()).map(PathBuf::from);
            config.unwrap_or_else(|| judged_core::files::home_dir().join(".claude")).join("settings.json")
        } else {
            self.project_dir().join(".claude/settings.json")
        }
    }
}

/// The host's hook timeout when no jury is configured: the evidence gate answers in
/// milliseconds.
const HOOK_TIMEOUT_SECONDS: u64 = 120;
/// How much sooner than the host the shim gives up, so it answers (blocking, with a
/// message) before the host kills it.
const SHIM_MARGIN_SECONDS: u64 = 10;

/// The host's hook timeout: larger than the configured jury's whole deadline.
fn hook_timeout_seconds(config: &judged::config::ConfigFile, path: &Path) -> Result<u64, CliError> {
    match config.jury.as_ref().map(judged_jury::config::JuryConfig::validate) {
        None => Ok(HOOK_TIMEOUT_SECONDS),
        Some(Ok(jury)) => Ok(jury.hook_timeout_seconds().max(HOOK_TIMEOUT_SECONDS)),
        Some(Err(source)) => Err(ConfigError::Jury { path: path.to_path_buf(), source }.into()),
    }
}

/// A warning for each of `events` that the gate in force for `dir` does not decide: the
/// hook would run and allow it without a decision.
fn ungated_events_warning(
    gate: &judged::config::GateConfig,
    config: &Path,
    events: &[String],
    dir: &Path,
    user: bool,
) -> Result<Option<String>, CliError> {
    let settings = if user {
        gate.user_settings()
    } else {
        gate.settings_for(Path::new(&judged_core::files::resolve(&dir.to_string_lossy())))?
    };
    let ungated: Vec<&str> = events.iter().filter(|e| !settings.events.contains(e)).map(String::as_str).collect();
    if ungated.is_empty() {
        return Ok(None);
    }
    let (names, them) = (ungated.join(", "), if ungated.len() == 1 { "it" } else { "them" });
    Ok(Some(format!(
        "judged: warning: the gate decides only its [gate] events ({}), so {names} would be allowed without a \
         decision; add {names} to `events` under [gate] in {} to gate {them}",
        settings.events.join(", "),
        config.display(),
    )))
}

/// The shim's command line, naming `judge-hook` as [`judged::install::hook_program`]
/// decides (by name when PATH finds it); its warnings go to stderr. `committed` is the
/// file it goes into when that is a project file that gets committed.
fn hook_command(
    host: &str,
    on_error: &str,
    hook_timeout: u64,
    absolute: bool,
    committed: Option<&std::path::Path>,
) -> Result<String, CliError> {
    let beside =
        std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.join("judge-hook"))).filter(|p| p.is_file());
    let on_path = judged::install::find_on_path("judge-hook", std::env::var_os("PATH").as_deref());
    let shim = judged::install::hook_program(beside.as_deref(), on_path.as_deref(), absolute, committed)?;
    for warning in &shim.warnings {
        eprintln!("judged: warning: {warning}");
    }
    let mut command = format!("{} --host {host}", shim.program);
    if on_error == "allow" {
        command.push_str(" --on-error allow");
    }
    command.push_str(&format!(" --timeout {}", hook_timeout - SHIM_MARGIN_SECONDS));
    Ok(command)
}

fn carry_out(plan: judged::install::Plan, dry_run: bool) -> Result<(), CliError> {
    if !plan.changes() {
        println!("{}: already as wanted, nothing to change", plan.path.display());
    } else if dry_run {
        print!("{}", plan.diff());
    } else {
        let backup = plan.apply()?;
        println!("updated {}", plan.path.display());
        if let Some(backup) = backup {
            println!("backup  {}", backup.display());
        }
    }
    Ok(())
}

/// Why a `judged` command failed; each says what to do.
#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Daemon(#[from] judged::DaemonError),
    #[error(transparent)]
    Witness(#[from] judged::witness::WitnessError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Install(#[from] InstallError),
    #[error(transparent)]
    Service(#[from] service::ServiceError),
    #[error("judged is already running (pid {0})")]
    AlreadyRunning(u32),
    #[error("judged is not running")]
    NotRunning,
    #[error(
        "judged (pid {pid}) is still running {seconds} s after it was asked to stop; `kill {pid}` stops it \
         (`kill -9 {pid}` if it does not)"
    )]
    StillRunning { pid: u32, seconds: u64 },
    #[error("{0}")]
    Usage(String),
    #[error("some checks failed; each is listed above with its fix")]
    DoctorFailed,
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("session {0} was rewritten after it was ingested")]
    Tampered(String),
    #[error("session {0}'s log no longer exists; its history is kept in the store")]
    Vanished(String),
    #[error("cannot {action}: {source}")]
    Start { action: String, source: std::io::Error },
    #[error("{}\nfix that file, then start judged again", .0.to_string().trim_end())]
    StartConfig(ConfigError),
    #[error("judged exited during start ({status}); it wrote to {}:\n{said}", log.display())]
    ExitedDuringStart { status: std::process::ExitStatus, log: PathBuf, said: String },
    #[error("{what} within {seconds} s{}", log.as_ref().map(|l| format!("; see {}", l.display())).unwrap_or_default())]
    TimedOut { what: &'static str, seconds: u64, log: Option<PathBuf> },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("judged: {error}");
            ExitCode::FAILURE
        }
    }
}

fn call<T: DeserializeOwned>(request: Request) -> Result<T, ClientError> {
    judged_protocol::call(&paths::socket_path(), request, Duration::from_secs(30))
}

fn print_json<T: Serialize>(value: &T) {
    println!("{}", serde_json::to_string(value).expect("a reply serializes"));
}

fn shown<T: std::fmt::Display>(value: &Option<T>) -> String {
    value.as_ref().map_or_else(|| "-".to_owned(), T::to_string)
}

fn run(command: Cmd) -> Result<(), CliError> {
    match command {
        Cmd::Start { foreground: true, roots } => {
            init_logging();
            let config = Config::resolve(roots).map_err(CliError::StartConfig)?;
            service::notify_when_ready(config.socket_path());
            Ok(judged::run(config)?)
        }
        Cmd::Start { foreground: false, roots } => start_background(&roots),
        Cmd::Status { json } => {
            let status: StatusReport = call(Request::Status)?;
            if json {
                print_json(&status);
                return Ok(());
            }
            let rows = [
                ("pid", status.pid.to_string()),
                ("version", status.version.clone()),
                ("uptime_seconds", status.uptime_seconds.to_string()),
                ("socket", status.socket.display().to_string()),
                ("data_dir", status.data_dir.display().to_string()),
                ("files", status.files.to_string()),
                ("lines", status.lines.to_string()),
                ("bytes", status.bytes.to_string()),
                ("tampered", status.tampered.to_string()),
                ("bypassed_tasks", status.completions_bypassed.to_string()),
                ("journal_events", status.journal_events.to_string()),
            ];
            for (key, value) in rows {
                println!("{key:<16} {value}");
            }
            let roots = [
                ("copilot_roots", &status.copilot_roots),
                ("claude_roots", &status.claude_roots),
                ("codex_roots", &status.codex_roots),
            ];
            for (key, roots) in roots {
                for root in roots {
                    println!("{key:<16} {}", root.display());
                }
            }
            Ok(())
        }
        Cmd::Sessions { json } => {
            let sessions: Vec<SessionSummary> = call(Request::Sessions)?;
            if json {
                print_json(&sessions);
                return Ok(());
            }
            println!(
                "{:<12} {:<38} {:>7} {:>10} {:<24} {:<8} CWD",
                "HOST", "SESSION", "EVENTS", "BYTES", "LAST EVENT", "TAMPERED"
            );
            for s in &sessions {
                println!(
                    "{:<12} {:<38} {:>7} {:>10} {:<24} {:<8} {}",
                    s.host.as_str(),
                    s.session,
                    s.events,
                    s.bytes,
                    shown(&s.last_event_time),
                    if s.tampered { "yes" } else { "no" },
                    shown(&s.cwd)
                );
            }
            Ok(())
        }
        Cmd::VerifyLog { session } => {
            let checked: PrefixCheck = call(Request::VerifyLog(SessionName { session: session.clone() }))?;
            print_json(&checked);
            if checked.tampered {
                Err(CliError::Tampered(session))
            } else if checked.vanished {
                Err(CliError::Vanished(session))
            } else {
                Ok(())
            }
        }
        Cmd::Rebuild => {
            let sessions: Vec<SessionSummary> = call(Request::Rebuild)?;
            println!("rebuilt {} session summaries from the store", sessions.len());
            Ok(())
        }
        Cmd::Decisions { json } => {
            let decisions: Vec<DecisionRecord> = call(Request::Decisions)?;
            if json {
                print_json(&decisions);
                return Ok(());
            }
            println!(
                "{:<27} {:<14} {:<7} {:<18} {:>9} {:<38} REASON",
                "AT", "EVENT", "VERDICT", "POLICY", "LATENCY", "SESSION"
            );
            for record in &decisions {
                let d = &record.decision;
                println!(
                    "{:<27} {:<14} {:<7} {:<18} {:>7}ms {:<38} {}",
                    record.at,
                    d.event,
                    judged::wire_name(&d.decision),
                    judged::wire_name(&d.policy),
                    d.latency_ms,
                    shown(&d.session_id),
                    d.reason
                );
            }
            Ok(())
        }
        Cmd::InstallHooks { target, events, on_error, dry_run, absolute } => {
            let config_path = paths::config_path();
            let config = judged::config::ConfigFile::load(&config_path)?;
            let timeout = hook_timeout_seconds(&config, &config_path)?;
            let plan = if target.copilot {
                let committed = judged::install::copilot_path(&target.project_dir());
                let command = hook_command("copilot-cli", &on_error, timeout, absolute, Some(&committed))?;
                judged::install::copilot_install(&target.project_dir(), &command, timeout)?
            } else {
                let settings = target.claude_settings();
                let committed = Some(settings.as_path()).filter(|_| !target.user);
                let command = hook_command("claude-code", &on_error, timeout, absolute, committed)?;
                if let Some(warning) =
                    ungated_events_warning(&config.gate, &config_path, &events, &target.project_dir(), target.user)?
                {
                    eprintln!("{warning}");
                }
                judged::install::claude_install(&settings, &command, &events, timeout)?
            };
            carry_out(plan, dry_run)
        }
        Cmd::Service(command) => Ok(service::run(command)?),
        Cmd::Doctor { json } => {
            if doctor::run(json) {
                Ok(())
            } else {
                Err(CliError::DoctorFailed)
            }
        }
        Cmd::Report { since, html, json } => {
            let since = report::parse_since(&since, chrono::Utc::now()).map_err(CliError::Usage)?;
            let data: judged_protocol::ReportData =
                call(Request::Report(judged_protocol::ReportArgs { since: Some(since) }))?;
            if json {
                print_json(&data);
            } else {
                print!("{}", report::text(&data));
            }
            if let Some(path) = html {
                std::fs::write(&path, report::html(&data))
                    .map_err(|source| CliError::Write { path: path.clone(), source })?;
                eprintln!("judged: wrote {}", path.display());
            }
            Ok(())
        }
        Cmd::Completions { shell } => {
            // Into a buffer first: `| head` must not make it panic on a closed pipe.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "judged", &mut script);
            let _ = std::io::Write::write_all(&mut std::io::stdout(), &script);
            Ok(())
        }
        Cmd::UninstallHooks { target, dry_run } => {
            let plan = if target.copilot {
                judged::install::copilot_uninstall(&target.project_dir())?
            } else {
                judged::install::claude_uninstall(&target.claude_settings())?
            };
            carry_out(plan, dry_run)
        }
        Cmd::Stop => stop(),
        Cmd::Key { action, json } => key(action, json),
    }
}

/// Print the witness's public keys, after a rotation when asked; the key is created here
/// when judged has not run yet, so it can be handed out first.
fn key(action: Option<KeyAction>, json: bool) -> Result<(), CliError> {
    let data_dir = paths::data_dir();
    judged::private_dir(&data_dir)?;
    let witness = match action {
        Some(KeyAction::Rotate) => judged::witness::Witness::rotate(&data_dir)?,
        None => judged::witness::Witness::load_or_create(&data_dir)?,
    };
    if json {
        print_json(&witness.listing());
    } else {
        println!("{}", witness.keys()[0]);
    }
    Ok(())
}

/// How long `judged stop` waits for the daemon to exit.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// Ask the daemon to stop and return once it has exited. Its socket closes first and its
/// pid file stays locked until the process exits, so the wait is on the lock: a `judged
/// start` right after must not find the old daemon still holding it.
fn stop() -> Result<(), CliError> {
    // Opened before the daemon is asked: it removes the file as it exits, and the lock
    // it holds is on this file, not on one a new daemon creates.
    let pid_path = paths::data_dir().join("judged.pid");
    let pid_file = std::fs::File::open(&pid_path).ok();
    let pid = pid_file.as_ref().and_then(|file| std::io::read_to_string(file).ok()?.trim().parse::<u32>().ok());
    match call::<Stopping>(Request::Shutdown) {
        Ok(_) => {}
        Err(ClientError::Unreachable(_)) => return Err(CliError::NotRunning),
        Err(error) => return Err(error.into()),
    }
    let (Some(pid_file), Some(pid)) = (pid_file, pid) else {
        // No pid file to watch (a daemon of another data dir answers here): its socket, then.
        if !wait_until(|| call::<StatusReport>(Request::Status).is_err()) {
            return Err(CliError::TimedOut { what: "judged did not stop", seconds: STOP_WAIT.as_secs(), log: None });
        }
        println!("judged stopped");
        return Ok(());
    };
    // Taken only to see that it is free, and let go at once for the next daemon.
    if !wait_until(|| pid_file.try_lock().is_ok_and(|()| pid_file.unlock().is_ok())) {
        return Err(CliError::StillRunning { pid, seconds: STOP_WAIT.as_secs() });
    }
    println!("judged stopped (pid {pid})");
    Ok(())
}

/// Spawn `judged start --foreground` detached, logging to the data dir, and wait until
/// the socket answers.
fn start_background(roots: &RootFlags) -> Result<(), CliError> {
    let data_dir = paths::data_dir();
    judged::private_dir(&data_dir)?;
    let start_error = |action: String| move |source| CliError::Start { action, source };
    // One start at a time: a second `judged start` waits here, then finds the first's
    // daemon answering and says so, instead of starting one that loses the pid lock.
    let lock_path = data_dir.join("judged.start.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(start_error(format!("open {}", lock_path.display())))?;
    lock.lock().map_err(start_error(format!("lock {}", lock_path.display())))?;
    if let Ok(status) = call::<StatusReport>(Request::Status) {
        return Err(CliError::AlreadyRunning(status.pid));
    }
    // Read here too, so a broken config is named on this terminal, not only in the log.
    Config::resolve(roots.clone()).map_err(CliError::StartConfig)?;
    let log_path = data_dir.join("judged.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(start_error(format!("open {}", log_path.display())))?;
    // Where this start's lines begin, to show them if the daemon exits.
    let logged_before = log.metadata().map_or(0, |m| m.len());
    let exe = std::env::current_exe().map_err(start_error("find this executable".into()))?;
    let mut command = Command::new(exe);
    command.args(["start", "--foreground"]);
    command.args(roots.as_args());
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .map_err(start_error("start judged".into()))?;
    // The socket answers within a bounded time; the catch-up of the logs then takes what
    // it takes, shown at a terminal (Ctrl-C stops the watching, not the daemon).
    let deadline = Instant::now() + Duration::from_secs(30);
    let shown = std::io::IsTerminal::is_terminal(&std::io::stderr());
    loop {
        match call::<CatchUp>(Request::Progress) {
            Ok(progress) if progress.done => break,
            Ok(progress) if shown => eprint!("\r\x1b[2K{}", progress_line(&progress)),
            Ok(_) => {}
            Err(_) if Instant::now() >= deadline => {
                return Err(CliError::TimedOut { what: "judged did not answer", seconds: 30, log: Some(log_path) });
            }
            Err(_) => {
                if let Ok(Some(status)) = child.try_wait() {
                    let said = log_tail(&log_path, logged_before);
                    return Err(CliError::ExitedDuringStart { status, log: log_path, said });
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if shown {
        eprint!("\r\x1b[2K");
    }
    let status: StatusReport = call(Request::Status)?;
    if status.pid != child.id() {
        // Another daemon (started without this lock) holds the pid file.
        return Err(CliError::AlreadyRunning(status.pid));
    }
    println!("judged started (pid {}), socket {}", status.pid, paths::socket_path().display());
    Ok(())
}

/// The most lines of the daemon's log an early exit shows.
const LOG_TAIL_LINES: usize = 20;

/// The last lines of the log written from byte `from` on, indented (what the daemon said
/// before it exited).
fn log_tail(log: &Path, from: u64) -> String {
    let bytes = std::fs::read(log).unwrap_or_default();
    let text = String::from_utf8_lossy(bytes.get(from as usize..).unwrap_or_default());
    let lines: Vec<&str> = text.lines().filter(|line| !line.trim().is_empty()).collect();
    if lines.is_empty() {
        return "  (nothing)".to_owned();
    }
    lines[lines.len().saturating_sub(LOG_TAIL_LINES)..]
        .iter()
        .map(|line| format!("  {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// One line of catch-up progress: logs and bytes ingested of those found.
fn progress_line(progress: &CatchUp) -> String {
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    let percent = (progress.bytes_done * 100).checked_div(progress.bytes_found).unwrap_or(100);
    let width = 30;
    let filled = (percent as usize * width / 100).min(width);
    format!(
        "judged: catching up [{}{}] {percent:>3}%  {}/{} logs, {:.1}/{:.1} MiB",
        "#".repeat(filled),
        " ".repeat(width - filled),
        progress.files_done,
        progress.files_found,
        mib(progress.bytes_done),
        mib(progress.bytes_found)
    )
}

/// Whether `done` came true within [`STOP_WAIT`].
fn wait_until(done: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + STOP_WAIT;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("JUDGED_LOG").unwrap_or_else(|_| "info".into());
    // Colour for a person at a terminal only: judged.log, the journal and a test's
    // captured output must read as plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi).init();
}

#[cfg(test)]
mod progress_tests {
    use super::*;

    #[test]
    fn the_progress_line_shows_logs_and_bytes_of_those_found() {
        let half = CatchUp { files_found: 4, files_done: 2, bytes_found: 4 << 20, bytes_done: 2 << 20, done: false };
        let line = progress_line(&half);
        assert!(line.contains("[###############               ]  50%"), "{line}");
        assert!(line.ends_with("2/4 logs, 2.0/4.0 MiB"), "{line}");
        let empty = CatchUp::default();
        assert!(progress_line(&empty).contains("100%"), "nothing to catch up is done");
    }
}
