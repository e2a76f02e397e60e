//! What the bench times: processes, the daemon under test over its socket, and the
//! baselines (`sha256sum`, a full re-read and parse of the root, spawning `/bin/true`).

use crate::generate::LiveSession;
use serde_json::Value;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Latencies in milliseconds, sorted.
#[derive(Clone, Debug, Default)]
pub struct Samples(Vec<f64>);

impl Samples {
    pub fn new(mut ms: Vec<f64>) -> Samples {
        ms.sort_by(f64::total_cmp);
        Samples(ms)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn median(&self) -> f64 {
        self.quantile(0.5)
    }

    pub fn p99(&self) -> f64 {
        self.quantile(0.99)
    }

    /// Nearest-rank quantile.
    pub fn quantile(&self, q: f64) -> f64 {
        if self.0.is_empty() {
            return f64::NAN;
        }
        let rank = ((q * self.0.len() as f64).ceil() as usize).clamp(1, self.0.len());
        self.0[rank - 1]
    }
}

pub fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// Spawn `command`, write `stdin` (if any), wait; the wall time from spawn to exit.
pub fn run(command: &mut Command, stdin: Option<&[u8]>) -> (f64, Output) {
    let (ms, output, _) = run_by(command, stdin, wait);
    (ms, output)
}

/// As [`run`], but a child that cannot be spawned is an error, not a panic: under load
/// the bench counts failures instead of stopping at the first.
pub fn try_run(command: &mut Command, stdin: Option<&[u8]>) -> Result<(f64, Output), String> {
    command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = command.spawn().map_err(|e| format!("cannot spawn: {e}"))?;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let _ = pipe.write_all(bytes);
    }
    let output = child.wait_with_output().map_err(|e| format!("cannot wait: {e}"))?;
    Ok((ms_since(start), output))
}

/// How a spawned child is waited for: its output, and its own peak RSS in KiB when known.
type Reap = fn(Child) -> (Output, Option<u64>);

fn run_by(command: &mut Command, stdin: Option<&[u8]>, reap: Reap) -> (f64, Output, Option<u64>) {
    command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = command.spawn().unwrap_or_else(|e| panic!("cannot spawn {command:?}: {e}"));
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let _ = pipe.write_all(bytes); // a child that does not read its stdin closes the pipe
    }
    let (output, rss_kib) = reap(child);
    (ms_since(start), output, rss_kib)
}

fn wait(child: Child) -> (Output, Option<u64>) {
    (child.wait_with_output().expect("child exits"), None)
}

/// Everything left in a child's pipe.
fn drain(pipe: Option<impl Read>) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Some(mut pipe) = pipe {
        let _ = pipe.read_to_end(&mut bytes);
    }
    bytes
}

/// Drain the child's pipes, then reap it with `wait4` for its own peak RSS: the
/// `RUSAGE_CHILDREN` figure of `getrusage` is the largest of every child reaped so far.
/// stderr is read on a thread so that neither pipe can fill while the other is read.
fn wait4(mut child: Child) -> (Output, Option<u64>) {
    let stderr_pipe = child.stderr.take();
    let stderr = std::thread::spawn(move || drain(stderr_pipe));
    let stdout = drain(child.stdout.take());
    let stderr = stderr.join().expect("stderr reader");
    let pid = libc::pid_t::try_from(child.id()).expect("a pid fits pid_t");
    let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
    // SAFETY: `pid` is this process's unreaped child; `status` and `usage` are valid for writes.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    let status = std::process::ExitStatus::from_raw(status);
    // Linux reports ru_maxrss in KiB.
    (Output { status, stdout, stderr }, u64::try_from(usage.ru_maxrss).ok())
}
/// Panic with the child's stderr unless it exited with `code`.
pub fn expect_exit(what: &str, output: &Output, code: i32) {
    if output.status.code() != Some(code) {
        panic!(
            "{what}: exit {:?}, expected {code}\nstdout: {}\nstderr: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// `runs` timed runs of a command (after `warmup` untimed ones), each expected to exit
/// with `code`; returns the samples and the last output.
pub fn repeat(
    what: &str,
    runs: usize,
    warmup: usize,
    code: i32,
    make: impl FnMut(usize) -> (Command, Option<Vec<u8>>),
) -> (Samples, Output) {
    let (ms, _, last) = repeat_by(what, runs, warmup, code, make, wait);
    (ms, last)
}

/// As [`repeat`], and each timed run's own peak RSS (KiB) as samples too. Only where the
/// child's memory is the figure: reaping with `wait4` costs a thread per run.
pub fn repeat_rss(
    what: &str,
    runs: usize,
    warmup: usize,
    code: i32,
    make: impl FnMut(usize) -> (Command, Option<Vec<u8>>),
) -> (Samples, Samples, Output) {
    repeat_by(what, runs, warmup, code, make, wait4)
}

fn repeat_by(
    what: &str,
    runs: usize,
    warmup: usize,
    code: i32,
    mut make: impl FnMut(usize) -> (Command, Option<Vec<u8>>),
    reap: Reap,
) -> (Samples, Samples, Output) {
    let (mut ms, mut rss_kib) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    let mut last = None;
    for i in 0..warmup + runs {
        let (mut command, stdin) = make(i);
        let (elapsed, output, rss) = run_by(&mut command, stdin.as_deref(), reap);
        expect_exit(what, &output, code);
        if i >= warmup {
            ms.push(elapsed);
            rss_kib.extend(rss.map(|kib| kib as f64));
        }
        last = Some(output);
    }
    (Samples::new(ms), Samples::new(rss_kib), last.expect("at least one run"))
}

/// `callers` threads, each spawning `per_caller` commands back to back; every call's
/// latency and the wall time of the whole batch.
pub fn concurrent(
    what: &str,
    callers: usize,
    per_caller: usize,
    code: i32,
    make: &(dyn Fn(usize) -> (Command, Option<Vec<u8>>) + Sync),
) -> (Samples, f64) {
    let start = Instant::now();
    let ms: Vec<f64> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..callers)
            .map(|caller| {
                scope.spawn(move || {
                    (0..per_caller)
                        .map(|i| {
                            let (mut command, stdin) = make(caller * per_caller + i);
                            let (elapsed, output) = run(&mut command, stdin.as_deref());
                            expect_exit(what, &output, code);
                            elapsed
                        })
                        .collect::<Vec<f64>>()
                })
            })
            .collect();
        threads.into_iter().flat_map(|t| t.join().expect("caller thread")).collect()
    });
    (Samples::new(ms), ms_since(start))
}

/// `sha256sum` over `files`: the floor for reading and hashing the same bytes.
pub fn sha256sum(files: &[PathBuf]) -> f64 {
    let mut command = Command::new("sha256sum");
    command.args(files);
    let (ms, output) = run(&mut command, None);
    expect_exit("sha256sum", &output, 0);
    ms
}

/// The reference helper's approach, in Rust: read every log of the root and
/// JSON-parse every line. Returns the wall time and the number of lines parsed.
pub fn full_reparse(files: &[PathBuf]) -> (f64, u64) {
    let start = Instant::now();
    let mut lines = 0u64;
    for file in files {
        let bytes = fs::read(file).expect("log readable");
        for line in bytes.split(|&b| b == b'\n').filter(|l| !l.trim_ascii().is_empty()) {
            let value: Value = serde_json::from_slice(line).expect("generated lines are JSON");
            lines += u64::from(value.is_object());
        }
    }
    (ms_since(start), lines)
}

/// The test harness's daemon guard, with what the bench measures on it.
pub struct Daemon(judged_tests::Daemon);

impl std::ops::Deref for Daemon {
    type Target = judged_tests::Daemon;
    fn deref(&self) -> &judged_tests::Daemon {
        &self.0
    }
}

impl Daemon {
    /// Start over `copilot_root` and `claude_root`; returns the daemon and the time from
    /// spawn to its first answer (it catches up with every log before it listens).
    pub fn start(judged: &Path, home: &Path, copilot_root: &Path, claude_root: &Path) -> (Daemon, f64) {
        Daemon::start_configured(judged, home, copilot_root, claude_root, None)
    }

    /// As [`Daemon::start`], with `config` as the home's `config.toml` (the daemon reads
    /// its `[gate]` and `[jury]` from there).
    pub fn start_configured(
        judged: &Path,
        home: &Path,
        copilot_root: &Path,
        claude_root: &Path,
        config: Option<&str>,
    ) -> (Daemon, f64) {
        let _ = fs::remove_dir_all(home);
        fs::DirBuilder::new().recursive(true).mode(0o700).create(home).expect("daemon home");
        if let Some(config) = config {
            fs::write(home.join("config.toml"), config).expect("daemon config written");
        }
        let start = Instant::now();
        let daemon = judged_tests::Daemon::spawn(
            judged,
            home,
            &[copilot_root],
            &[claude_root],
            &home.join("judged.log"),
            Duration::from_secs(3600),
        );
        (Daemon(daemon), ms_since(start))
    }

    pub fn status(&self) -> Value {
        self.call("status", Value::Null).expect("status answers")
    }

    /// A `Vm*` field of `/proc/<pid>/status`, in KiB.
    pub fn vm_kib(&self, field: &str) -> u64 {
        let status = fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    /// `judged.db` plus its WAL.
    pub fn db_bytes(&self) -> u64 {
        ["judged.db", "judged.db-wal"].iter().map(|f| fs::metadata(self.home.join(f)).map_or(0, |m| m.len())).sum()
    }

    /// Round trips of the `status` operation from this process (no spawn).
    /// Round trips of the cheapest request, `progress`, which the server answers without
    /// the engine: the socket's own cost, for the floor. (`status` stats every log for
    /// its lag, so it costs more as the root grows.)
    pub fn round_trips(&self, runs: usize) -> Samples {
        Samples::new(
            (0..runs)
                .map(|_| {
                    let start = Instant::now();
                    self.call("progress", Value::Null).expect("progress answers");
                    ms_since(start)
                })
                .collect(),
        )
    }

    /// Append one event to the live session, then poll `status` (which reads the store
    /// and does not catch up) until its line count grows: what the watcher delivers.
    pub fn append_to_visible(&self, live: &mut LiveSession, runs: usize) -> Samples {
        let lines = |d: &Daemon| d.status()["lines"].as_u64().unwrap_or(0);
        let mut ms = Vec::with_capacity(runs);
        for _ in 0..runs {
            let before = lines(self);
            let start = Instant::now();
            live.append_tick().expect("append to the live session");
            while lines(self) <= before {
                assert!(start.elapsed() < Duration::from_secs(30), "an appended line never became visible");
                std::thread::sleep(Duration::from_micros(200));
            }
            ms.push(ms_since(start));
            std::thread::sleep(Duration::from_millis(10));
        }
        Samples::new(ms)
    }

    pub fn stop(self) {
        self.0.stop();
    }
}
