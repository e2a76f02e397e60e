//! `judged stop`: ask the daemon to stop, and wait until its process is gone.

use super::call;
use crate::CliError;
use judged_protocol::{ClientError, Request, StatusReport, Stopping, paths};
use std::fs::File;
use std::time::{Duration, Instant};

/// How long `judged stop` waits for the daemon's process to go.
const STOP_WAIT: Duration = Duration::from_secs(10);

/// Ask the daemon to stop and return once its process is gone, so that `judged stopped`
/// is true when it is printed: `ps` no longer lists it and a `judged start` right after
/// finds nothing of it.
pub fn run() -> Result<(), CliError> {
    // Opened before the daemon is asked: it removes the file as it exits, and the lock
    // it holds until its process ends is on this file, not on one a new daemon creates.
    let pid_path = paths::data_dir().join("judged.pid");
    let pid_file = File::open(&pid_path).ok();
    let pid_in_file = pid_file.as_ref().and_then(|file| std::io::read_to_string(file).ok()?.trim().parse::<u32>().ok());
    let pid = match pid_in_file {
        Some(pid) => pid,
        // No pid file of ours (a witness account's daemon answers here): it says its pid.
        None => stopping_call::<StatusReport>(Request::Status)?.pid,
    };
    stopping_call::<Stopping>(Request::Shutdown)?;
    if wait_until(|| gone(pid)) {
        println!("judged stopped (pid {pid})");
        return Ok(());
    }
    // Its lock is free once its process has ended; the process stays listed (a zombie)
    // until its parent reaps it, which an init that does not reap never does.
    if pid_file.as_ref().is_some_and(|file| file.try_lock().is_ok_and(|()| file.unlock().is_ok())) {
        println!(
            "judged stopped (pid {pid} has exited, but its parent has not reaped it yet: `ps` lists it as \
             <defunct> until it does, and it holds nothing)"
        );
        return Ok(());
    }
    Err(CliError::StillRunning { pid, seconds: STOP_WAIT.as_secs() })
}

/// A request to the daemon being stopped: no answer means it is not running.
fn stopping_call<T: serde::de::DeserializeOwned>(request: Request) -> Result<T, CliError> {
    call::<T>(request).map_err(|error| match error {
        ClientError::Unreachable(_) => CliError::NotRunning,
        error => error.into(),
    })
}

/// Whether no process `pid` exists any more (one of another user's still exists).
fn gone(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return true;
    };
    rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH)
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
