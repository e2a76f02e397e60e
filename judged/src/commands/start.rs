//! `judged start`: run the daemon attached (`--foreground`), or spawn it detached and
//! wait until its first catch-up is done.

use super::call;
use crate::{CliError, service};
use judged_daemon::config::{Config, RootFlags};
use judged_protocol::{CatchUp, Request, StatusReport, paths};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn foreground(roots: RootFlags) -> Result<(), CliError> {
    init_logging();
    let config = Config::resolve(roots).map_err(CliError::StartConfig)?;
    service::notify_when_ready(config.socket_path());
    Ok(judged_daemon::run(config)?)
}

/// Spawn `judged start --foreground` detached, logging to the data dir, and wait until
/// the socket answers.
pub fn background(roots: &RootFlags) -> Result<(), CliError> {
    let data_dir = paths::data_dir();
    judged_daemon::private_dir(&data_dir)?;
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
    // Owner-only, as the data directory: what the daemon logs names the user's projects.
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&log_path)
        .map_err(start_error(format!("open {}", log_path.display())))?;
    // One an older judged made with the umask's mode is made the owner's alone too.
    log.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(start_error(format!("set the mode of {}", log_path.display())))?;
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
    let percent = (progress.bytes_done * 100).checked_div(progress.bytes_found).unwrap_or(100);
    let width = 30;
    let filled = (percent as usize * width / 100).min(width);
    format!(
        "judged: catching up [{}{}] {percent:>3}%  {}",
        "#".repeat(filled),
        " ".repeat(width - filled),
        super::status::catch_up_counts(progress)
    )
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
