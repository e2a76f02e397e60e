//! `judged stop`: ask the daemon to stop, and wait until it has exited.

use super::call;
use crate::CliError;
use judged_protocol::{ClientError, Request, StatusReport, Stopping, paths};
use std::time::{Duration, Instant};

/// How long `judged stop` waits for the daemon to exit.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// Ask the daemon to stop and return once it has exited. Its socket closes first and its
/// pid file stays locked until the process exits, so the wait is on the lock: a `judged
/// start` right after must not find the old daemon still holding it.
pub fn run() -> Result<(), CliError> {
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
