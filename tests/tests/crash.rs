//! Crash recovery (issue 13): `kill -9` the real daemon at random moments while it catches
//! up with logs that keep growing and while logs are appended live (with clients asking
//! about them), restart it on the same `JUDGED_HOME`, and compare what it holds with a
//! clean ingest of the same final logs by a fresh daemon: per session the summary
//! (events, bytes, tamper flag, integrity findings), the chain head, a window of events,
//! `judged verify-log`, and the journal (no event lost or doubled, and no
//! store-integrity failure when the daemon re-checks its chains on start).
//!
//! `cargo test` runs a handful of trials. The long run (at least 100 trials):
//!
//! ```sh
//! cargo test -p judged-tests --test crash -- --ignored --nocapture
//! ```
//!
//! `JUDGED_CRASH_TRIALS=N` sets the number of trials of the long run,
//! `JUDGED_CRASH_SEED=S` replays a run and `JUDGED_CRASH_TRIAL_SEED=S` one trial (every
//! trial prints its seed; a kill lands where the machine's timing puts it, so a replay
//! repeats the logs and the plan, not always the exact moment).

use judged_tests::{Daemon, bin, judged_foreground, kill_9, status_at, workspace};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const COPILOT_FIXTURE: &str = "fixtures/copilot-1.0.102/cross-family-ok/events.jsonl";
const CLAUDE_FIXTURE: &str = "fixtures/claude-code-2.1.328/marker-challenge/70e11cfc-c3fb-426c-9dfc-374e15ffb0af.jsonl";
const CLAUDE_SESSION_ID: &str = "70e11cfc-c3fb-426c-9dfc-374e15ffb0af";
const CLAUDE_PROJECT: &str = "-tmp-judged-fixture-claude-marker-challenge-project";
/// Bytes of all logs of a trial together, roughly (the catch-up must take long enough
/// for a kill to land inside it, and a trial must stay quick).
const TRIAL_BYTES: usize = 6 * 1024 * 1024;

// ---------------------------------------------------------------------------------------
// Randomness: a seeded SplitMix64, so a failing trial can be replayed from its seed.
// ---------------------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.next().is_multiple_of(one_in)
    }
}

fn run_seed() -> u64 {
    std::env::var("JUDGED_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        now.as_nanos() as u64 ^ u64::from(std::process::id())
    })
}

// ---------------------------------------------------------------------------------------
// The logs of a trial: generated in full up front, written out piece by piece.
// ---------------------------------------------------------------------------------------

/// One log: its final bytes and how many of them are on disk so far.
struct Log {
    path: PathBuf,
    bytes: Vec<u8>,
    written: usize,
}

impl Log {
    /// Append up to `n` more bytes (a cut anywhere, mid-line included).
    fn write_more(&mut self, n: usize) {
        let end = (self.written + n).min(self.bytes.len());
        if end == self.written {
            return;
        }
        let mut file = fs::OpenOptions::new().create(true).append(true).open(&self.path).expect("open log");
        file.write_all(&self.bytes[self.written..end]).expect("append to log");
        self.written = end;
    }
}

fn padding(rng: &mut Rng) -> String {
    let len = rng.range(40, 3000) as usize;
    (0..len).map(|i| char::from(b'a' + ((i as u64 + rng.0) % 26) as u8)).collect()
}

/// A real Copilot CLI log followed by synthetic events that continue its `parentId`
/// chain, with a rare malformed line (journaled once, and the chain check resumes after).
fn copilot_bytes(rng: &mut Rng, target: usize) -> Vec<u8> {
    let mut bytes = fs::read(workspace().join(COPILOT_FIXTURE)).expect("fixture");
    let last = bytes[..bytes.len() - 1].rsplit(|&b| b == b'\n').next().unwrap();
    let mut parent = serde_json::from_slice::<Value>(last).unwrap()["id"].as_str().unwrap().to_owned();
    let mut n = 0u64;
    while bytes.len() < target {
        n += 1;
        if rng.chance(400) {
            bytes.extend_from_slice(b"{\"type\":\"assistant.message\",\"data\":{\"content\":\"torn\n");
            continue;
        }
        let id = format!("00000000-0000-4000-8000-{n:012x}");
        let line = json!({
            "type": "assistant.message",
            "data": {"messageId": format!("m{n}"), "content": padding(rng)},
            "id": id,
            "timestamp": "2026-11-30T01:26:00.000Z",
            "parentId": parent,
        });
        bytes.extend_from_slice(&serde_json::to_vec(&line).unwrap());
        bytes.push(b'\n');
        parent = id;
    }
    bytes
}

/// A real Claude Code transcript followed by synthetic user and assistant records.
fn claude_bytes(rng: &mut Rng, target: usize) -> Vec<u8> {
    let mut bytes = fs::read(workspace().join(CLAUDE_FIXTURE)).expect("fixture");
    let mut parent = Value::Null;
    let mut n = 0u64;
    while bytes.len() < target {
        n += 1;
        let uuid = format!("11111111-0000-4000-8000-{n:012x}");
        let role = if n.is_multiple_of(2) { "assistant" } else { "user" };
        let line = json!({
            "parentUuid": parent, "isSidechain": false, "type": role,
            "message": {"role": role, "content": padding(rng)},
            "uuid": uuid, "timestamp": "2026-11-30T01:26:00.000Z",
            "sessionId": CLAUDE_SESSION_ID, "cwd": "/tmp/judged-fixture/claude/marker-challenge/project",
        });
        bytes.extend_from_slice(&serde_json::to_vec(&line).unwrap());
        bytes.push(b'\n');
        parent = Value::String(uuid);
    }
    bytes
}

/// Write each log up to `fraction` of its final size, in chunks cut anywhere; with
/// `pace`, a short pause now and then, as a host writes.
fn advance(logs: &mut [Log], fraction: f64, rng: &mut Rng, pace: bool) {
    loop {
        let behind: Vec<usize> =
            (0..logs.len()).filter(|&i| (logs[i].written as f64) < fraction * logs[i].bytes.len() as f64).collect();
        if behind.is_empty() {
            return;
        }
        let log = &mut logs[behind[rng.range(0, behind.len() as u64 - 1) as usize]];
        let goal = (fraction * log.bytes.len() as f64).ceil() as usize;
        log.write_more((rng.range(1, 48 * 1024) as usize).min(goal - log.written));
        if pace && rng.chance(4) {
            std::thread::sleep(Duration::from_micros(rng.range(100, 2000)));
        }
    }
}

// ---------------------------------------------------------------------------------------
// What a daemon holds, to compare.
// ---------------------------------------------------------------------------------------

#[derive(Debug, PartialEq)]
struct Snapshot {
    /// `sessions`, sorted by session key.
    sessions: Vec<Value>,
    /// Per session: the chain head at its last event.
    heads: BTreeMap<String, Value>,
    /// Per session: a window of events (raw bytes, offsets, hashes, chain).
    windows: BTreeMap<String, Value>,
}

fn call(daemon: &Daemon, op: &str, args: Value) -> Value {
    daemon.call(op, args).unwrap_or_else(|e| panic!("{op} failed: {e}"))
}

fn snapshot(daemon: &Daemon, window_from: &BTreeMap<String, u64>) -> Snapshot {
    let mut sessions = call(daemon, "sessions", Value::Null).as_array().expect("sessions is an array").clone();
    sessions.sort_by(|a, b| a["session"].as_str().cmp(&b["session"].as_str()));
    let mut heads = BTreeMap::new();
    let mut windows = BTreeMap::new();
    for summary in &sessions {
        let key = summary["session"].as_str().unwrap().to_owned();
        let events = summary["events"].as_u64().unwrap();
        heads.insert(key.clone(), call(daemon, "chain_head", json!({"session": key, "seq": events})));
        let from = window_from.get(&key).map_or(1, |f| 1 + f % events.max(1));
        windows.insert(key.clone(), call(daemon, "events", json!({"session": key, "from": from, "limit": 20})));
    }
    Snapshot { sessions, heads, windows }
}

/// Journal events by kind, read from the stopped daemon's database with `sqlite3`
/// (`None` when the machine has no `sqlite3`).
fn journal_kinds(home: &Path) -> Option<BTreeMap<String, u64>> {
    let output = Command::new("sqlite3")
        .arg("-readonly")
        .arg(home.join("judged.db"))
        .arg("SELECT kind, count(*) FROM journal GROUP BY kind ORDER BY kind;")
        .output()
        .ok()?;
    assert!(output.status.success(), "sqlite3: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    Some(
        text.lines()
            .filter_map(|line| line.split_once('|'))
            .map(|(kind, n)| (kind.to_owned(), n.parse().unwrap()))
            .collect(),
    )
}

// ---------------------------------------------------------------------------------------
// A trial
// ---------------------------------------------------------------------------------------

/// How long a fresh daemon took to answer over a trial's final logs, in ms: kills meant
/// to land during catch-up are drawn below it (half of it: the logs are smaller then).
static CATCH_UP_MS: AtomicU64 = AtomicU64::new(400);

#[derive(Default)]
struct Tally {
    /// Kills before the socket answered (during the start-up catch-up).
    during_catch_up: u32,
    /// Kills while serving, with appends and queries going on.
    while_live: u32,
}

struct Trial {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    fresh_home: PathBuf,
    copilot: PathBuf,
    claude: PathBuf,
    stderr: PathBuf,
}

impl Trial {
    fn new() -> Trial {
        let tmp = tempfile::tempdir().expect("temp dir");
        let copilot = tmp.path().join("copilot/session-state");
        let claude = tmp.path().join("claude/projects");
        fs::create_dir_all(&copilot).unwrap();
        fs::create_dir_all(claude.join(CLAUDE_PROJECT)).unwrap();
        Trial {
            home: tmp.path().join("home"),
            fresh_home: tmp.path().join("fresh-home"),
            stderr: tmp.path().join("judged.stderr"),
            copilot,
            claude,
            _tmp: tmp,
        }
    }

    fn logs(&self, rng: &mut Rng) -> Vec<Log> {
        let mut logs = Vec::new();
        for key in ["c0", "c1", "c2"] {
            let dir = self.copilot.join(key);
            fs::create_dir_all(&dir).unwrap();
            let share = rng.range(TRIAL_BYTES as u64 / 8, TRIAL_BYTES as u64 / 3) as usize;
            logs.push(Log { path: dir.join("events.jsonl"), bytes: copilot_bytes(rng, share), written: 0 });
        }
        let share = rng.range(TRIAL_BYTES as u64 / 8, TRIAL_BYTES as u64 / 4) as usize;
        let path = self.claude.join(CLAUDE_PROJECT).join(format!("{CLAUDE_SESSION_ID}.jsonl"));
        logs.push(Log { path, bytes: claude_bytes(rng, share), written: 0 });
        logs
    }

    /// Spawn the daemon on the trial's home without waiting for it, stderr to a file.
    fn spawn(&self) -> Child {
        let stderr = fs::OpenOptions::new().create(true).append(true).open(&self.stderr).unwrap();
        judged_foreground(&self.home, &[&self.copilot], &[&self.claude])
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("judged starts")
    }

    fn stderr_text(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// Wait until the spawned daemon answers; fail with its stderr if it exits.
    fn wait_answering(&self, child: &mut Child) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while status_at(&self.home, Duration::from_secs(5)).is_none() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("judged exited during a restart after a kill ({status}); stderr:\n{}", self.stderr_text());
            }
            assert!(Instant::now() < deadline, "judged did not answer within 60 s of a restart");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn kill(child: &mut Child) {
        kill_9(child.id());
        child.wait().expect("reap the killed daemon");
    }
}

fn trial(seed: u64, tally: &mut Tally) {
    let mut rng = Rng(seed);
    let t = Trial::new();
    let mut logs = t.logs(&mut rng);

    // 1. Logs already there, growing while a starting daemon catches up; killed at a
    //    random moment of that catch-up (usually before it answers).
    advance(&mut logs, 0.2 + rng.range(0, 30) as f64 / 100.0, &mut rng, false);
    for _ in 0..rng.range(1, 2) {
        let mut child = t.spawn();
        let mut writer_rng = Rng(rng.next());
        let delay = Duration::from_millis(rng.range(0, CATCH_UP_MS.load(Ordering::Relaxed) / 2 + 1));
        let next = (logs.iter().map(|l| l.written as f64 / l.bytes.len() as f64).fold(0.0, f64::max) + 0.1).min(0.9);
        std::thread::scope(|scope| {
            let writer = scope.spawn(|| advance(&mut logs, next, &mut writer_rng, true));
            std::thread::sleep(delay);
            if status_at(&t.home, Duration::from_millis(20)).is_none() {
                tally.during_catch_up += 1;
            } else {
                tally.while_live += 1;
            }
            Trial::kill(&mut child);
            writer.join().expect("writer");
        });
    }

    // 2. A daemon that answers, with a host appending and clients asking about the
    //    sessions (each query catches up first); killed mid-way, a few times.
    for round in 0..rng.range(1, 3) {
        let mut child = t.spawn();
        t.wait_answering(&mut child);
        let mut writer_rng = Rng(rng.next());
        let delay = Duration::from_millis(rng.range(0, 120));
        let next = (0.55 + 0.12 * round as f64).min(0.95);
        let stop = AtomicBool::new(false);
        let socket = t.home.join("judged.sock");
        std::thread::scope(|scope| {
            let writer = scope.spawn(|| advance(&mut logs, next, &mut writer_rng, true));
            let asker = scope.spawn(|| {
                for (i, key) in ["c0", "c1", CLAUDE_SESSION_ID, "c2"].iter().cycle().enumerate() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let (op, args) = if i % 2 == 0 {
                        ("chain_head", json!({"session": key}))
                    } else {
                        ("events", json!({"session": key, "from": 1, "limit": 5}))
                    };
                    // Errors are expected: the daemon dies under the client.
                    let _ = judged_protocol::call::<Value>(
                        &socket,
                        judged_tests::request(op, args),
                        Duration::from_secs(5),
                    );
                }
            });
            std::thread::sleep(delay);
            tally.while_live += 1;
            Trial::kill(&mut child);
            stop.store(true, Ordering::Relaxed);
            writer.join().expect("writer");
            asker.join().expect("asker");
        });
    }

    // 3. The hosts finish their logs while no daemon runs.
    advance(&mut logs, 1.0, &mut rng, false);

    // 4. Recovered: the killed daemon's home, restarted over the final logs.
    let window_from: BTreeMap<String, u64> =
        ["c0", "c1", "c2", CLAUDE_SESSION_ID].iter().map(|k| ((*k).to_owned(), rng.next())).collect();
    let recovered =
        Daemon::spawn(&bin("judged"), &t.home, &[&t.copilot], &[&t.claude], &t.stderr, Duration::from_secs(120));
    let after_crashes = snapshot(&recovered, &window_from);
    for summary in &after_crashes.sessions {
        let key = summary["session"].as_str().unwrap();
        let output = Command::new(bin("judged"))
            .args(["verify-log", key])
            .env("JUDGED_HOME", &t.home)
            .env("JUDGED_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .expect("verify-log runs");
        assert!(
            output.status.success(),
            "seed {seed}: verify-log {key} after the crashes: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    recovered.stop();
    let recovered_journal = journal_kinds(&t.home);

    // 5. Clean: a fresh daemon ingests the same final logs once.
    let started = Instant::now();
    let fresh_log = t.fresh_home.with_extension("log");
    let fresh =
        Daemon::spawn(&bin("judged"), &t.fresh_home, &[&t.copilot], &[&t.claude], &fresh_log, Duration::from_secs(120));
    CATCH_UP_MS.store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
    let clean = snapshot(&fresh, &window_from);
    fresh.stop();
    let clean_journal = journal_kinds(&t.fresh_home);

    // 6. Compare.
    assert_eq!(after_crashes.sessions.len(), 4, "seed {seed}: every log is a session: {:?}", after_crashes.sessions);
    for log in &logs {
        let summary = clean.sessions.iter().find(|s| s["path"] == log.path.to_str().unwrap());
        let bytes = summary.and_then(|s| s["bytes"].as_u64());
        assert_eq!(
            bytes,
            Some(log.bytes.len() as u64),
            "seed {seed}: the clean ingest has all of {}",
            log.path.display()
        );
    }
    assert_eq!(after_crashes.sessions, clean.sessions, "seed {seed}: session summaries differ after the crashes");
    assert_eq!(after_crashes.heads, clean.heads, "seed {seed}: chain heads differ after the crashes");
    assert_eq!(after_crashes.windows, clean.windows, "seed {seed}: stored events differ after the crashes");
    for summary in &after_crashes.sessions {
        assert_eq!(summary["tampered"], false, "seed {seed}: a crash is no tamper: {summary}");
    }
    let stderr = t.stderr_text();
    assert!(!stderr.contains("does not verify"), "seed {seed}: the store's chains broke:\n{stderr}");
    if let (Some(recovered), Some(clean)) = (recovered_journal, clean_journal) {
        assert!(!recovered.contains_key("store_integrity_failed"), "seed {seed}: journal {recovered:?}");
        assert_eq!(recovered, clean, "seed {seed}: journal events by kind differ after the crashes");
    }
}

fn run_trials(trials: u64) {
    if Command::new("sqlite3").arg("-version").output().is_err() {
        eprintln!("note: no sqlite3 on this machine: the journal is compared through the daemon only");
    }
    if let Some(seed) = std::env::var("JUDGED_CRASH_TRIAL_SEED").ok().and_then(|s| s.parse().ok()) {
        eprintln!("one crash trial: seed {seed}");
        return trial(seed, &mut Tally::default());
    }
    let seed = run_seed();
    eprintln!("crash trials: {trials}, run seed {seed} (JUDGED_CRASH_SEED={seed} replays)");
    let mut rng = Rng(seed);
    let mut tally = Tally::default();
    let started = Instant::now();
    for i in 0..trials {
        let trial_seed = rng.next();
        eprintln!("trial {i}: seed {trial_seed}");
        trial(trial_seed, &mut tally);
    }
    eprintln!(
        "crash trials: {trials} in {:.1} s; kills during catch-up: {}, while serving: {}",
        started.elapsed().as_secs_f64(),
        tally.during_catch_up,
        tally.while_live
    );
    assert!(tally.during_catch_up + tally.while_live >= 2 * trials as u32);
}

#[test]
fn killed_during_catch_up_and_live_appends_the_daemon_recovers_to_a_clean_ingest() {
    run_trials(5);
}

#[test]
#[ignore = "long run (≥ 100 trials, minutes): cargo test -p judged-tests --test crash -- --ignored"]
fn killed_at_random_a_hundred_times_the_daemon_recovers_to_a_clean_ingest() {
    let trials = std::env::var("JUDGED_CRASH_TRIALS").ok().and_then(|n| n.parse().ok()).unwrap_or(100);
    run_trials(trials);
}
