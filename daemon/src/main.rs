//! `judged start | status | sessions | verify-log | stop`.

use clap::{Parser, Subcommand};
use judged::config::Config;
use judged_protocol::{ClientError, paths};
use serde_json::{Value, json};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
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
    /// Start the daemon; returns once its socket accepts.
    Start {
        /// Run attached, logging to stderr (for systemd, launchd and tests).
        #[arg(long)]
        foreground: bool,
        /// A Copilot CLI session-state root to watch (repeatable).
        #[arg(long = "copilot-root")]
        copilot_roots: Vec<PathBuf>,
        /// A Claude Code projects root to watch (repeatable).
        #[arg(long = "claude-root")]
        claude_roots: Vec<PathBuf>,
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
    },
    /// Remove what `install-hooks` added, and only that.
    UninstallHooks {
        #[command(flatten)]
        target: HookTarget,
        #[arg(long)]
        dry_run: bool,
    },
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

/// The shim's command line: the `judge-hook` next to this binary when there is one.
fn hook_command(host: &str, on_error: &str) -> String {
    let beside =
        std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.join("judge-hook"))).filter(|p| p.is_file());
    let shim = beside.map(|p| p.display().to_string()).unwrap_or_else(|| "judge-hook".into());
    let mut command = format!("{shim} --host {host}");
    if on_error == "allow" {
        command.push_str(" --on-error allow");
    }
    command
}

fn carry_out(plan: judged::install::Plan, dry_run: bool) -> Result<(), String> {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("judged: {message}");
            ExitCode::FAILURE
        }
    }
}

fn call(op: &str, args: Value) -> Result<Value, ClientError> {
    judged_protocol::call(&paths::socket_path(), op, args, Duration::from_secs(30))
}

fn run(command: Cmd) -> Result<(), String> {
    match command {
        Cmd::Start { foreground: true, copilot_roots, claude_roots } => {
            init_logging();
            let config = Config::resolve(copilot_roots, claude_roots)?;
            judged::run(config).map_err(|e| e.to_string())
        }
        Cmd::Start { foreground: false, copilot_roots, claude_roots } => start_background(copilot_roots, claude_roots),
        Cmd::Status { json } => {
            let status = call("status", Value::Null).map_err(|e| e.to_string())?;
            if json {
                println!("{status}");
            } else {
                for key in [
                    "pid",
                    "version",
                    "uptime_seconds",
                    "socket",
                    "data_dir",
                    "files",
                    "lines",
                    "bytes",
                    "tampered",
                    "journal_events",
                ] {
                    println!("{key:<16} {}", plain(&status[key]));
                }
                for key in ["copilot_roots", "claude_roots"] {
                    for root in status[key].as_array().into_iter().flatten() {
                        println!("{key:<16} {}", plain(root));
                    }
                }
            }
            Ok(())
        }
        Cmd::Sessions { json } => {
            let sessions = call("sessions", Value::Null).map_err(|e| e.to_string())?;
            if json {
                println!("{sessions}");
                return Ok(());
            }
            println!(
                "{:<12} {:<38} {:>7} {:>10} {:<24} {:<8} CWD",
                "HOST", "SESSION", "EVENTS", "BYTES", "LAST EVENT", "TAMPERED"
            );
            for s in sessions.as_array().into_iter().flatten() {
                println!(
                    "{:<12} {:<38} {:>7} {:>10} {:<24} {:<8} {}",
                    plain(&s["host"]),
                    plain(&s["session"]),
                    plain(&s["events"]),
                    plain(&s["bytes"]),
                    plain(&s["last_event_time"]),
                    if s["tampered"] == true { "yes" } else { "no" },
                    plain(&s["cwd"])
                );
            }
            Ok(())
        }
        Cmd::VerifyLog { session } => {
            let result = call("verify_log", json!({"session": session})).map_err(|e| e.to_string())?;
            println!("{result}");
            if result["tampered"] == true {
                Err(format!("session {session} was rewritten after it was ingested"))
            } else if result["vanished"] == true {
                Err(format!("session {session}'s log no longer exists; its history is kept in the store"))
            } else {
                Ok(())
            }
        }
        Cmd::Rebuild => {
            let sessions = call("rebuild", Value::Null).map_err(|e| e.to_string())?;
            println!("rebuilt {} session summaries from the store", sessions.as_array().map_or(0, Vec::len));
            Ok(())
        }
        Cmd::Decisions { json } => {
            let decisions = call("decisions", Value::Null).map_err(|e| e.to_string())?;
            if json {
                println!("{decisions}");
                return Ok(());
            }
            println!(
                "{:<27} {:<14} {:<7} {:<18} {:>9} {:<38} REASON",
                "AT", "EVENT", "VERDICT", "POLICY", "LATENCY", "SESSION"
            );
            for d in decisions.as_array().into_iter().flatten() {
                println!(
                    "{:<27} {:<14} {:<7} {:<18} {:>7}ms {:<38} {}",
                    plain(&d["at"]),
                    plain(&d["event"]),
                    plain(&d["decision"]),
                    plain(&d["policy"]),
                    plain(&d["latency_ms"]),
                    plain(&d["session_id"]),
                    plain(&d["reason"])
                );
            }
            Ok(())
        }
        Cmd::InstallHooks { target, events, on_error, dry_run } => {
            let plan = if target.copilot {
                judged::install::copilot_install(&target.project_dir(), &hook_command("copilot-cli", &on_error))?
            } else {
                judged::install::claude_install(
                    &target.claude_settings(),
                    &hook_command("claude-code", &on_error),
                    &events,
                )?
            };
            carry_out(plan, dry_run)
        }
        Cmd::UninstallHooks { target, dry_run } => {
            let plan = if target.copilot {
                judged::install::copilot_uninstall(&target.project_dir())?
            } else {
                judged::install::claude_uninstall(&target.claude_settings())?
            };
            carry_out(plan, dry_run)
        }
        Cmd::Stop => match call("shutdown", Value::Null) {
            Ok(_) => wait_until(|| call("status", Value::Null).is_err(), "judged did not stop"),
            Err(ClientError::Unreachable(_)) => Err("judged is not running".into()),
            Err(e) => Err(e.to_string()),
        },
    }
}

fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// Spawn `judged start --foreground` detached, logging to the data dir, and wait until
/// the socket answers.
fn start_background(copilot_roots: Vec<PathBuf>, claude_roots: Vec<PathBuf>) -> Result<(), String> {
    if let Ok(status) = call("status", Value::Null) {
        return Err(format!("judged is already running (pid {})", status["pid"]));
    }
    let data_dir = paths::data_dir();
    judged::private_dir(&data_dir).map_err(|e| e.to_string())?;
    let log_path = data_dir.join("judged.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| format!("cannot open {}: {e}", log_path.display()))?;
    let mut command = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
    command.args(["start", "--foreground"]);
    for root in &copilot_roots {
        command.arg("--copilot-root").arg(root);
    }
    for root in &claude_roots {
        command.arg("--claude-root").arg(root);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start judged: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if call("status", Value::Null).is_ok() {
            println!("judged started (pid {}), socket {}", child.id(), paths::socket_path().display());
            return Ok(());
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!("judged exited during start ({status}); see {}", log_path.display()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(format!("judged did not answer within 30 s; see {}", log_path.display()))
}

fn wait_until(done: impl Fn() -> bool, failure: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if done() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(failure.into())
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("JUDGED_LOG").unwrap_or_else(|_| "info".into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}
