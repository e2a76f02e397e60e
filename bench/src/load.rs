//! The load suite (issue 13): many concurrent clients, each spawning the real clients
//! back to back (`judged status --json`, an accepted daemon-mode `challenge`, a
//! `judge-hook` `TaskCompleted` decision), while the live session is appended to; then
//! the same harness spawning `/bin/true`. Every failure is counted, never fatal.

use crate::generate::LiveSession;
use crate::measure::{self, Daemon, Samples};
use crate::{Bench, Bins};
use std::ffi::OsStr;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// The request kinds, in the order a client cycles through them.
pub const KINDS: [&str; 3] = ["status", "challenge", "hook"];
/// How many failures are kept word for word.
const FIRST_ERRORS: usize = 10;
/// The pause between two appends to the live session.
const APPEND_EVERY: Duration = Duration::from_millis(2);

/// One kind's latencies and failures.
#[derive(Debug, Default)]
pub struct KindFigures {
    pub name: &'static str,
    pub samples: Samples,
    pub errors: usize,
}

/// Everything the load suite measured.
#[derive(Debug, Default)]
pub struct LoadFigures {
    pub clients: usize,
    pub per_client: usize,
    pub kinds: Vec<KindFigures>,
    pub wall_ms: f64,
    pub errors: usize,
    /// The first failures: kind, request number, exit and the first line of stderr.
    pub first_errors: Vec<String>,
    /// Every failure by what it said (numbers written `N`), most frequent first.
    pub error_kinds: Vec<(String, usize)>,
    /// The same harness spawning `/bin/true` (stdin piped for the hook's slots).
    pub spawn_true: Samples,
    pub true_wall_ms: f64,
    pub true_errors: usize,
    /// Events and bytes appended to the live session during both harnesses, and how many
    /// appends failed.
    pub appended: u64,
    pub appended_bytes: u64,
    pub append_errors: u64,
    /// After the load: whether every appended line became visible in `status`, and how
    /// long after the last client that took.
    pub all_visible: bool,
    pub visible_after_ms: f64,
    /// The daemon's VmRSS before, its VmHWM and VmRSS after.
    pub rss_before_kib: u64,
    pub hwm_after_kib: u64,
    pub rss_after_kib: u64,
    /// Lines the daemon wrote to `judged.log` (warn and above) during the load, and the first.
    pub log_lines: usize,
    pub log_first: Vec<String>,
    /// CPU seconds the daemon, and the clients the bench reaped, used during the real
    /// harness.
    pub daemon_cpu_s: f64,
    pub clients_cpu_s: f64,
}

/// A failure with its numbers written `N`, so that failures saying the same group.
fn shape(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    for c in message.chars() {
        if c.is_ascii_digit() {
            if !out.ends_with('N') {
                out.push('N');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// User plus system CPU seconds of process `pid` (`/proc/<pid>/stat`).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command name (which may hold spaces) closing with `)`.
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    let ticks: f64 = [11, 12].iter().filter_map(|&i| fields.get(i)?.parse::<f64>().ok()).sum();
    // SAFETY: sysconf has no preconditions.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// User plus system CPU seconds of the children this process reaped.
fn children_cpu_seconds() -> f64 {
    let mut usage = unsafe { std::mem::zeroed::<libc::rusage>() };
    // SAFETY: `usage` is valid for writes.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// A line of `judged.log` without its colours.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// What one harness run gives back: latencies and failures per kind, the first failures
/// and the wall time.
struct Harness {
    ms: Vec<Vec<f64>>,
    errors: Vec<usize>,
    first: Vec<String>,
    kinds: Vec<(String, usize)>,
    wall_ms: f64,
}

/// `clients` threads released together, each making `per_client` requests back to back,
/// request `i` of client `c` of kind `(c + i) % 3`; `make` gives the command, its stdin
/// and the exit code expected.
fn harness(
    clients: usize,
    per_client: usize,
    make: &(dyn Fn(usize, usize, usize) -> (Command, Option<Vec<u8>>, i32) + Sync),
) -> Harness {
    let barrier = Barrier::new(clients + 1);
    let first = Mutex::new((Vec::new(), Vec::<(String, usize)>::new()));
    let mut ms = vec![Vec::new(); KINDS.len()];
    let mut errors = vec![0; KINDS.len()];
    let mut start = Instant::now();
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..clients)
            .map(|client| {
                let (barrier, first) = (&barrier, &first);
                scope.spawn(move || {
                    let mut mine = Vec::with_capacity(per_client);
                    barrier.wait();
                    for i in 0..per_client {
                        let kind = (client + i) % KINDS.len();
                        let n = client * per_client + i;
                        let (mut command, stdin, code) = make(kind, client, n);
                        let failure = match measure::try_run(&mut command, stdin.as_deref()) {
                            Ok((elapsed, output)) if output.status.code() == Some(code) => {
                                mine.push((kind, Some(elapsed)));
                                continue;
                            }
                            Ok((_, output)) => {
                                let stderr = String::from_utf8_lossy(&output.stderr);
                                let line = stderr.lines().next().unwrap_or("").chars().take(300).collect::<String>();
                                format!("exit {:?} (expected {code}): {line}", output.status.code())
                            }
                            Err(message) => message,
                        };
                        mine.push((kind, None));
                        let mut guard = first.lock().expect("errors lock");
                        let (first, kinds) = &mut *guard;
                        if first.len() < FIRST_ERRORS {
                            first.push(format!("{} #{n} (client {client}): {failure}", KINDS[kind]));
                        }
                        let shaped = format!("{}: {}", KINDS[kind], shape(&failure));
                        match kinds.iter_mut().find(|(s, _)| *s == shaped) {
                            Some((_, count)) => *count += 1,
                            None => kinds.push((shaped, 1)),
                        }
                    }
                    mine
                })
            })
            .collect();
        barrier.wait();
        start = Instant::now();
        for thread in threads {
            for (kind, elapsed) in thread.join().expect("client thread") {
                match elapsed {
                    Some(elapsed) => ms[kind].push(elapsed),
                    None => errors[kind] += 1,
                }
            }
        }
    });
    let (first, mut kinds) = first.into_inner().expect("errors lock");
    kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
    Harness { ms, errors, first, kinds, wall_ms: measure::ms_since(start) }
}

fn log_lines(daemon: &Daemon) -> Vec<String> {
    std::fs::read_to_string(daemon.home.join("judged.log")).unwrap_or_default().lines().map(str::to_owned).collect()
}

/// Run the suite against `daemon`, whose live session carries a marker of `binding` and
/// verified evidence (so a `TaskCompleted` is allowed).
pub fn run(
    bench: &Bench,
    bins: &Bins,
    daemon: &Daemon,
    live: &mut LiveSession,
    binding: &str,
    clients: usize,
    per_client: usize,
) -> LoadFigures {
    let home = &daemon.home;
    let mut figures = LoadFigures { clients, per_client, ..LoadFigures::default() };
    let (session_id, transcript) = (live.session_id.clone(), live.path.clone());
    let lines_before = daemon.status()["lines"].as_u64().unwrap_or(0);
    let log_before = log_lines(daemon).len();
    figures.rss_before_kib = daemon.vm_kib("VmRSS");
    let stop = AtomicBool::new(false);
    let (floor, wall, (events, appended_bytes, append_errors), finished) = std::thread::scope(|scope| {
        let appender = scope.spawn(|| {
            let (mut events, mut bytes, mut errors) = (0u64, 0u64, 0u64);
            while !stop.load(Ordering::Relaxed) {
                match live.append_tick() {
                    Ok((b, lines)) => {
                        bytes += b;
                        events += lines;
                    }
                    Err(_) => errors += 1,
                }
                std::thread::sleep(APPEND_EVERY);
            }
            (events, bytes, errors)
        });

        eprintln!("judged-bench: load: {clients} clients × {per_client} spawns of /bin/true");
        let spawn_true = |kind: usize, _, _| {
            let stdin = (KINDS[kind] == "hook").then(|| b"{}".to_vec());
            (Command::new("/bin/true"), stdin, 0)
        };
        let floor = harness(clients, per_client, &spawn_true);

        eprintln!("judged-bench: load: {clients} clients × {per_client} requests (status, challenge, hook)");
        let wait = [OsStr::new("--wait-seconds"), OsStr::new("0")];
        let request = |kind: usize, client: usize, n: usize| match KINDS[kind] {
            "status" => {
                let mut command = Command::new(&bins.judged);
                command.args(["status", "--json"]).env("JUDGED_HOME", home);
                (command, None, 0)
            }
            "challenge" => {
                (bench.challenge_command(&format!("load-{client}"), "daemon", home, binding, &wait), None, 0)
            }
            _ => {
                let payload = bench.task_payload(&session_id, &transcript, 2_000_000 + n);
                let (command, stdin) = bench.hook(home, payload);
                (command, stdin, 0)
            }
        };
        let cpu = (cpu_seconds(daemon.pid()), children_cpu_seconds());
        let real = harness(clients, per_client, &request);
        figures.daemon_cpu_s = cpu_seconds(daemon.pid()) - cpu.0;
        figures.clients_cpu_s = children_cpu_seconds() - cpu.1;
        let finished = Instant::now();
        stop.store(true, Ordering::Relaxed);
        (floor, real, appender.join().expect("appender thread"), finished)
    });
    figures.spawn_true = Samples::new(floor.ms.into_iter().flatten().collect());
    figures.true_wall_ms = floor.wall_ms;
    figures.true_errors = floor.errors.iter().sum();
    figures.appended = events;
    figures.appended_bytes = appended_bytes;
    figures.append_errors = append_errors;
    figures.wall_ms = wall.wall_ms;
    figures.errors = wall.errors.iter().sum();
    figures.first_errors = wall.first;
    figures.error_kinds = wall.kinds;
    figures.kinds = KINDS
        .iter()
        .zip(wall.ms)
        .zip(wall.errors)
        .map(|((&name, ms), errors)| KindFigures { name, samples: Samples::new(ms), errors })
        .collect();

    // Every appended line must show, within a bounded time after the load.
    let wanted = lines_before + events;
    loop {
        let lines = daemon.status()["lines"].as_u64().unwrap_or(0);
        if lines >= wanted {
            figures.all_visible = true;
            break;
        }
        if finished.elapsed() > Duration::from_secs(30) {
            eprintln!("judged-bench: load: {lines} lines visible, {wanted} expected, 30 s after the load");
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    figures.visible_after_ms = measure::ms_since(finished);
    figures.hwm_after_kib = daemon.vm_kib("VmHWM");
    figures.rss_after_kib = daemon.vm_kib("VmRSS");
    let log = log_lines(daemon);
    figures.log_lines = log.len().saturating_sub(log_before);
    figures.log_first = log.iter().skip(log_before).take(5).map(|line| plain(line)).collect();
    figures
}
