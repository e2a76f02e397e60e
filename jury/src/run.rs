//! Running one juror process under a hard deadline.
//!
//! A juror CLI may hang (Codex loops forever on an unreachable endpoint), fork helpers that
//! keep its pipes open, or print without end. So each run gets its own process group, the
//! whole group is killed at the deadline (and any stragglers when the leader exits), output
//! is captured up to a cap, and once the leader is gone the pipes get a short grace period,
//! not an unbounded wait. Plain threads, no async runtime: the daemon calls this from a
//! worker thread.

use rustix::process::{Pid, Signal, WaitId, WaitIdOptions};
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{ChildStderr, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// How long the pipes may stay open after the process group is gone (a descendant that left
/// the group can hold them; its output is not waited for).
const PIPE_GRACE: Duration = Duration::from_millis(200);

/// What to run. The prompt goes on stdin, never in `args`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spawn {
    /// The program: a path, or a name looked up on `PATH`.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables removed from the inherited environment, before `env_set` is applied.
    pub env_remove: Vec<String>,
    /// Variables set for the process, in order.
    pub env_set: Vec<(String, OsString)>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Written to the process's stdin, which is then closed: the prompt goes here.
    pub stdin: Vec<u8>,
    /// Paths the process may not open (the witness's key and store), kept out of its
    /// reach by [`judged_io::sandbox`]; a process that cannot be kept from them is not started.
    pub out_of_reach: Vec<PathBuf>,
}

impl Spawn {
    /// The argv to record: program and arguments (which never hold the prompt).
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.to_string_lossy().into_owned()).chain(self.args.iter().cloned()).collect()
    }
}

/// Captured output of a process that ran.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Finished {
    /// Standard output, up to the cap.
    pub stdout: Vec<u8>,
    /// Standard error, up to the cap.
    pub stderr: Vec<u8>,
    /// Output went past the cap, or a pipe was still open after the grace period.
    pub truncated: bool,
    /// From spawn to exit (or kill).
    pub latency: Duration,
}

/// How the process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// Exited with this status.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
    /// The status could not be read back.
    Unknown,
}

/// How a run ended, with whatever output it left.
#[derive(Debug)]
pub enum Outcome {
    /// Exit status 0.
    Answered(Finished),
    /// Any other end but the deadline: its output may still say why.
    ExitedNonZero(Exit, Finished),
    /// Killed (with its process group) at the deadline.
    TimedOut(Finished),
    /// The program could not be started.
    SpawnFailed(io::Error),
}

/// Run `spawn` until it exits or `deadline` passes, keeping at most `cap` bytes per stream.
pub fn run(spawn: &Spawn, deadline: Instant, cap: usize) -> Outcome {
    let mut command = Command::new(&spawn.program);
    command
        .args(&spawn.args)
        .current_dir(&spawn.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for name in &spawn.env_remove {
        command.env_remove(name);
    }
    command.envs(spawn.env_set.iter().map(|(k, v)| (k, v)));
    let started = Instant::now();
    let spawned = if spawn.out_of_reach.is_empty() {
        command.spawn()
    } else {
        // Landlock restricts the thread that starts the juror, for good: one of its own.
        thread::scope(|scope| {
            let starting = scope.spawn(|| {
                judged_io::sandbox::restrict(&spawn.out_of_reach).map_err(io::Error::other)?;
                command.spawn()
            });
            starting.join().unwrap_or_else(|_| Err(io::Error::other("the thread starting the juror panicked")))
        })
    };
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Outcome::SpawnFailed(e),
    };
    // The pid is the process group id (process_group(0)); pids fit in pid_t.
    let pgid = Pid::from_child(&child);
    if let Some(mut stdin) = child.stdin.take() {
        let input = spawn.stdin.clone();
        // Detached: a child that never reads its stdin must not block us; the write fails
        // with EPIPE once the group is killed.
        thread::spawn(move || stdin.write_all(&input));
    }
    let (done_tx, done_rx) = mpsc::channel();
    let stdout = Capture::start(child.stdout.take().map(Pipe::Out), cap, done_tx.clone());
    let stderr = Capture::start(child.stderr.take().map(Pipe::Err), cap, done_tx);

    let (exit_tx, exit_rx) = mpsc::channel();
    thread::spawn(move || exit_tx.send(wait_exited_unreaped(pgid)));
    let timed_out = matches!(
        exit_rx.recv_timeout(deadline.saturating_duration_since(Instant::now())),
        Err(mpsc::RecvTimeoutError::Timeout)
    );
    // The leader is exited but not reaped (or still running), so its pid cannot have been
    // reused: killing the group now reaches only our juror and what it started.
    let _ = rustix::process::kill_process_group(pgid, Signal::KILL);
    let status = child.wait();
    let latency = started.elapsed();

    let grace_end = Instant::now() + PIPE_GRACE;
    let mut pipes_closed = 0;
    while pipes_closed < 2 && done_rx.recv_timeout(grace_end.saturating_duration_since(Instant::now())).is_ok() {
        pipes_closed += 1;
    }
    let (stdout, out_cut) = stdout.take();
    let (stderr, err_cut) = stderr.take();
    let finished = Finished { stdout, stderr, truncated: out_cut || err_cut || pipes_closed < 2, latency };
    if timed_out {
        return Outcome::TimedOut(finished);
    }
    let exit = match status {
        Ok(s) => s.code().map(Exit::Code).or(s.signal().map(Exit::Signal)).unwrap_or(Exit::Unknown),
        Err(_) => Exit::Unknown,
    };
    match exit {
        Exit::Code(0) => Outcome::Answered(finished),
        other => Outcome::ExitedNonZero(other, finished),
    }
}

/// Block until `pid` has exited, leaving it a zombie so its pid (and group id) stays ours.
fn wait_exited_unreaped(pid: Pid) -> io::Result<()> {
    loop {
        match rustix::process::waitid(WaitId::Pid(pid), WaitIdOptions::EXITED | WaitIdOptions::NOWAIT) {
            Ok(_) => return Ok(()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(error) => return Err(error.into()),
        }
    }
}

enum Pipe {
    Out(ChildStdout),
    Err(ChildStderr),
}

impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Pipe::Out(p) => p.read(buf),
            Pipe::Err(p) => p.read(buf),
        }
    }
}

/// One stream read on its own thread into a shared, capped buffer, so whatever arrived is
/// available even when the pipe never closes.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<(Vec<u8>, bool)>>);

impl Capture {
    fn start(pipe: Option<Pipe>, cap: usize, done: mpsc::Sender<()>) -> Capture {
        let capture = Capture::default();
        let Some(mut pipe) = pipe else {
            let _ = done.send(());
            return capture;
        };
        let shared = capture.clone();
        thread::spawn(move || {
            let mut chunk = [0u8; 8192];
            loop {
                match pipe.read(&mut chunk) {
                    Ok(0) => break,
                    Ok(n) => shared.append(&chunk[..n], cap),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = done.send(());
        });
        capture
    }

    fn append(&self, bytes: &[u8], cap: usize) {
        let mut guard = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (buffer, truncated) = &mut *guard;
        let room = cap.saturating_sub(buffer.len());
        buffer.extend_from_slice(&bytes[..bytes.len().min(room)]);
        *truncated |= bytes.len() > room;
    }

    fn take(&self) -> (Vec<u8>, bool) {
        let mut guard = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (buffer, truncated) = &mut *guard;
        (std::mem::take(buffer), *truncated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, stdin: &str) -> Spawn {
        Spawn {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env_remove: vec!["JURY_TEST_STRIPPED".into()],
            env_set: vec![("JURY_TEST_SET".into(), "set".into())],
            cwd: std::env::temp_dir(),
            stdin: stdin.as_bytes().to_vec(),
            out_of_reach: Vec::new(),
        }
    }

    fn in_secs(s: u64) -> Instant {
        Instant::now() + Duration::from_secs(s)
    }

    #[test]
    fn answered_with_stdin_env_and_cwd() {
        let spawn = sh("cat; printf ' %s %s ' \"$JURY_TEST_SET\" \"${JURY_TEST_STRIPPED-unset}\"; pwd", "prompt");
        let Outcome::Answered(f) = run(&spawn, in_secs(10), 1 << 20) else { panic!("not answered") };
        let cwd = std::env::temp_dir().canonicalize().expect("temp dir");
        assert_eq!(String::from_utf8_lossy(&f.stdout), format!("prompt set unset {}\n", cwd.display()));
        assert!(!f.truncated);
        assert_eq!(spawn.argv()[0], "/bin/sh");
    }

    #[test]
    fn non_zero_exit_keeps_stderr() {
        let Outcome::ExitedNonZero(exit, f) = run(&sh("echo no >&2; exit 3", ""), in_secs(10), 64) else {
            panic!("not a failure")
        };
        assert_eq!((exit, f.stderr.as_slice()), (Exit::Code(3), b"no\n".as_slice()));
    }

    #[test]
    fn the_deadline_kills_the_whole_group_even_with_a_child_holding_the_pipes() {
        let started = Instant::now();
        let deadline = Instant::now() + Duration::from_millis(300);
        let outcome = run(&sh("echo early; sleep 30 & sleep 30; echo never", ""), deadline, 64);
        let Outcome::TimedOut(f) = outcome else { panic!("not timed out: {outcome:?}") };
        assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
        assert_eq!(f.stdout, b"early\n");
    }

    #[test]
    fn stragglers_are_killed_when_the_leader_exits() {
        let started = Instant::now();
        let outcome = run(&sh("sleep 30 & echo done", ""), in_secs(20), 64);
        let Outcome::Answered(f) = outcome else { panic!("not answered: {outcome:?}") };
        assert_eq!(f.stdout, b"done\n");
        assert!(started.elapsed() < Duration::from_secs(5), "waited for the straggler");
    }

    #[test]
    fn output_is_capped_and_a_missing_program_is_a_spawn_failure() {
        let Outcome::Answered(f) = run(&sh("yes | head -c 100000", ""), in_secs(10), 1000) else { panic!() };
        assert_eq!((f.stdout.len(), f.truncated), (1000, true));
        let mut missing = sh("", "");
        missing.program = "/nonexistent/juror".into();
        assert!(
            matches!(run(&missing, in_secs(1), 10), Outcome::SpawnFailed(e) if e.kind() == io::ErrorKind::NotFound)
        );
    }
}
