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
    /// Re-hash a session's whole ingested prefix against its file.
    VerifyLog { session: String },
    /// Stop the daemon.
    Stop,
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
            } else {
                Ok(())
            }
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
