//! Starting `judged` for a client whose socket does not answer, as ssh-agent's and
//! gpg-agent's clients do: `judged start` (which takes the start lock, so concurrent
//! callers start one daemon, and returns once the socket answers), waited on for a bounded
//! time. `auto_start = false` in the user's config turns it off.

use crate::paths;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Why `judged` was not started.
#[derive(Debug, thiserror::Error)]
pub enum AutoStartError {
    /// The user turned auto-start off.
    #[error("auto_start = false in {}", .0.display())]
    Off(PathBuf),
    /// `judged` could not be run.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program tried.
        program: String,
        /// Why it did not run.
        source: std::io::Error,
    },
    /// `judged start` failed; what it wrote on stderr says why (a broken config, say),
    /// else its log does.
    #[error("judged could not be started: {}", match said.as_str() {
        "" => format!("`judged start` failed ({status}); see judged.log in {}", paths::data_dir().display()),
        said => said.to_owned(),
    })]
    Failed {
        /// How `judged start` exited.
        status: std::process::ExitStatus,
        /// What it wrote on stderr, trimmed.
        said: String,
    },
    /// The socket is a witness account's: its daemon is the system's to run.
    #[error(
        "the witness account's judged does not answer on {}; it runs as a system service: \
         `sudo systemctl start judged` (or ask whoever set it up)",
        crate::paths::WITNESS_SOCKET
    )]
    Witness,
    /// It was still starting (catching up with the logs) when the wait ended.
    #[error("judged is still starting after {} s (catching up with the logs)", .0.as_secs())]
    StillStarting(Duration),
}

/// Whether the user's config allows starting the daemon (default yes; an unreadable
/// config is the daemon's to report, so it is tried).
fn allowed() -> Result<(), AutoStartError> {
    if paths::is_witness_socket(&paths::socket_path()) {
        return Err(AutoStartError::Witness);
    }
    let path = paths::config_path();
    // Read as the daemon reads it (never blocking on a FIFO, bounded): a hook must answer.
    // A file that does not read is the daemon's to report, as it starts.
    let config = crate::config::ConfigFile::load(&path).unwrap_or_default();
    match config.auto_start {
        Some(false) => Err(AutoStartError::Off(path)),
        _ => Ok(()),
    }
}

/// The `judged` to start: the one installed beside this client, else the one on PATH.
fn judged() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join("judged")))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("judged"))
}

/// Start `judged` in the background and wait at most `wait` for it to answer.
pub fn start_judged(wait: Duration) -> Result<(), AutoStartError> {
    allowed()?;
    let program = judged();
    let mut child = Command::new(&program)
        .arg("start")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| AutoStartError::Spawn { program: program.display().to_string(), source })?;
    let deadline = Instant::now() + wait;
    loop {
        match child.try_wait() {
            // `judged start` also says so when another caller's start won the race.
            Ok(Some(status))
                if status.success() || std::os::unix::net::UnixStream::connect(paths::socket_path()).is_ok() =>
            {
                return Ok(());
            }
            Ok(Some(status)) => return Err(AutoStartError::Failed { status, said: said(&mut child) }),
            Ok(None) if Instant::now() >= deadline => return Err(AutoStartError::StillStarting(wait)),
            _ => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// What an exited `judged start` wrote on stderr, without the `judged: ` it starts with.
/// It writes there only when it fails, and its daemon's stderr goes to the log, so the
/// pipe ends with it.
fn said(child: &mut std::process::Child) -> String {
    let text = child.stderr.take().and_then(|stderr| std::io::read_to_string(stderr).ok()).unwrap_or_default();
    let text = text.trim();
    text.strip_prefix("judged: ").unwrap_or(text).to_owned()
}
