//! The daemon end to end (issue 2): the real `judged` binary on a temp `JUDGED_HOME`,
//! real-shaped logs copied from real host runs, queried over the real socket.
//!
//! Every query that names a session catches up first (read-your-writes), so most tests
//! append and query without waiting. Where a test is about the watcher itself it polls
//! `status`, which does not catch up, with a deadline.

use judged_tests::{Daemon, bin, request, workspace};
use serde_json::{Value, json};
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// A real Copilot CLI 1.0.102 log: 43 lines, `parentId` chained, cwd
/// `/tmp/judged-fixture/copilot/cross-family-ok/project`.
const COPILOT_FIXTURE: &str = "fixtures/copilot-1.0.102/cross-family-ok/events.jsonl";
const COPILOT_SESSION_ID: &str = "f3c0a381-16f0-4c0f-9f1f-0d32777e2e62";
/// A real Claude Code 2.1.328 transcript.
const CLAUDE_FIXTURE: &str = "fixtures/claude-code-2.1.328/marker-challenge/70e11cfc-c3fb-426c-9dfc-374e15ffb0af.jsonl";
const CLAUDE_SESSION_ID: &str = "70e11cfc-c3fb-426c-9dfc-374e15ffb0af";

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

/// The lines of a fixture file, each with its `\n`.
fn fixture_lines(relative: &str) -> Vec<Vec<u8>> {
    let bytes = fs::read(workspace().join(relative)).expect("fixture is readable");
    bytes.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
}

fn copilot_lines() -> Vec<Vec<u8>> {
    let lines = fixture_lines(COPILOT_FIXTURE);
    assert_eq!(lines.len(), 43, "the cross-family-ok fixture has 43 lines");
    lines
}

fn append(path: &Path, bytes: &[u8]) {
    fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut f| f.write_all(bytes)).expect("append");
}

fn append_lines(path: &Path, lines: &[Vec<u8>]) {
    append(path, &lines.concat());
}

/// Flip the case of the first letter of `needle` inside line `index` of `path`, whose
/// lines are `lines`: same length, still valid JSON, different bytes.
fn flip_case_in_line(path: &Path, lines: &[Vec<u8>], index: usize, needle: &str) {
    let within = lines[index].windows(needle.len()).position(|w| w == needle.as_bytes()).expect("needle in line");
    let offset = offset_in(lines, index, within) as usize;
    let mut bytes = fs::read(path).expect("read log");
    assert!(bytes[offset].is_ascii_alphabetic(), "the needle starts with a letter");
    bytes[offset] ^= 0x20;
    fs::write(path, bytes).expect("rewrite log");
}

/// Byte offset of the `index`-th line (0-based) of `lines`, plus `within`.
fn offset_in(lines: &[Vec<u8>], index: usize, within: usize) -> u64 {
    (lines[..index].iter().map(Vec::len).sum::<usize>() + within) as u64
}

/// Poll `probe` until it returns `Some`, for at most 10 s.
/// [`judged_tests::eventually`], with this file's patience.
fn eventually<T>(what: &str, probe: impl FnMut() -> Option<T>) -> T {
    judged_tests::eventually(what, Duration::from_secs(10), probe)
}

/// A temp `JUDGED_HOME` with a Copilot and a Claude Code root of its own.
struct Setup {
    tmp: TempDir,
    home: PathBuf,
    copilot: PathBuf,
    claude: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::tempdir().expect("temp dir");
        let (home, copilot, claude) =
            (tmp.path().join("home"), tmp.path().join("copilot/session-state"), tmp.path().join("claude/projects"));
        fs::create_dir_all(&copilot).unwrap();
        fs::create_dir_all(&claude).unwrap();
        Setup { tmp, home, copilot, claude }
    }

    fn start(&self) -> Daemon {
        Daemon::start(&self.home, &[&self.copilot], &[&self.claude])
    }

    /// `<copilot root>/<key>/events.jsonl`, its directory created.
    fn copilot_log(&self, key: &str) -> PathBuf {
        let dir = self.copilot.join(key);
        fs::create_dir_all(&dir).unwrap();
        dir.join("events.jsonl")
    }

    /// `judged ARGS` against this home.
    fn judged(&self, args: &[&str]) -> Output {
        judged_command(&self.home, args).output().expect("judged runs")
    }
}

fn judged_command(home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(bin("judged"));
    command.args(args).env("JUDGED_HOME", home).env("JUDGED_LOG", "warn").stdin(Stdio::null());
    command
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&output.stdout)))
}

fn call(daemon: &Daemon, op: &str, args: Value) -> Value {
    daemon.call(op, args).unwrap_or_else(|e| panic!("{op} failed: {e}"))
}

fn sessions(daemon: &Daemon) -> Vec<Value> {
    call(daemon, "sessions", Value::Null).as_array().expect("sessions is an array").clone()
}

fn find_session(daemon: &Daemon, key: &str) -> Option<Value> {
    sessions(daemon).into_iter().find(|s| s["session"] == key)
}

fn session(daemon: &Daemon, key: &str) -> Value {
    find_session(daemon, key).unwrap_or_else(|| panic!("session {key} is not listed"))
}

fn events(daemon: &Daemon, key: &str) -> Vec<Value> {
    let events = call(daemon, "events", json!({"session": key, "from": 1, "limit": 10_000}));
    events.as_array().expect("events is an array").clone()
}

fn chain_head(daemon: &Daemon, key: &str, seq: u64) -> String {
    let head = call(daemon, "chain_head", json!({"session": key, "seq": seq}));
    head["chain_sha256"].as_str().expect("chain_sha256 is a string").to_owned()
}

fn status(daemon: &Daemon) -> Value {
    call(daemon, "status", Value::Null)
}

/// The stored events of `key` are exactly the complete lines of `log`: seq 1..n, byte
/// ranges back to back, raw bytes equal, and the chain head at n is the last event's.
fn assert_events_match_file(daemon: &Daemon, key: &str, log: &Path) {
    let bytes = fs::read(log).unwrap();
    let lines: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').filter(|l| l.ends_with(b"\n")).collect();
    let events = events(daemon, key);
    assert_eq!(events.len(), lines.len(), "one event per complete line of {}", log.display());
    let mut offset = 0u64;
    for (i, (event, line)) in events.iter().zip(&lines).enumerate() {
        assert_eq!(event["seq"], json!(i + 1), "sequence numbers are contiguous");
        assert_eq!(event["start"], json!(offset), "line {} starts where the previous ended", i + 1);
        offset += line.len() as u64;
        assert_eq!(event["end"], json!(offset));
        assert_eq!(event["raw"].as_str().unwrap().as_bytes(), String::from_utf8_lossy(line).as_bytes());
    }
    let last = events.last().expect("at least one event");
    assert_eq!(chain_head(daemon, key, lines.len() as u64), last["chain_sha256"].as_str().unwrap());
    let summary = session(daemon, key);
    assert_eq!((summary["events"].as_u64(), summary["bytes"].as_u64()), (Some(lines.len() as u64), Some(offset)));
}

/// Stops a daemon started with `judged start` (background) if a test fails before `judged stop`.
struct BackgroundGuard(PathBuf);

impl Drop for BackgroundGuard {
    fn drop(&mut self) {
        let _ = judged_protocol::call::<Value>(
            &self.0.join("judged.sock"),
            judged_protocol::Request::Shutdown,
            Duration::from_secs(5),
        );
    }
}

/// Wait for a child, killing it (and failing) if it runs longer than `limit`.
fn wait_with_deadline(mut child: std::process::Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("process did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("collect output")
}

// ---------------------------------------------------------------------------------------
// Ingest
// ---------------------------------------------------------------------------------------

#[test]
fn catch_up_after_restart_ingests_the_rest_without_duplicates() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let log = setup.copilot_log("restart");
    append_lines(&log, &lines[..20]);

    let daemon = setup.start();
    assert_eq!(events(&daemon, "restart").len(), 20);
    let head_20 = chain_head(&daemon, "restart", 20);
    daemon.stop();

    append_lines(&log, &lines[20..]);
    let daemon = setup.start();
    assert_events_match_file(&daemon, "restart", &log);
    assert_eq!(chain_head(&daemon, "restart", 20), head_20, "history before the restart is unchanged");
    let head_43 = chain_head(&daemon, "restart", 43);
    // A third start with nothing new adds nothing.
    daemon.stop();
    let daemon = setup.start();
    assert_eq!(events(&daemon, "restart").len(), 43);
    let summary = session(&daemon, "restart");
    assert_eq!(summary["tampered"], false);
    assert_eq!(summary["integrity_findings"], 0, "the parentId chain carries over the restart");

    // The chain does not depend on where the restart cut the file: a fresh daemon that
    // reads the whole file at once ends at the same head.
    let fresh = Setup::new();
    let fresh_log = fresh.copilot_log("restart");
    fs::copy(&log, &fresh_log).unwrap();
    let fresh_daemon = fresh.start();
    assert_eq!(chain_head(&fresh_daemon, "restart", 43), head_43);
}

#[test]
fn a_killed_daemon_restarts_over_its_stale_socket_without_duplicates() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let log = setup.copilot_log("killed");
    append_lines(&log, &lines[..30]);
    let daemon = setup.start();
    assert_eq!(events(&daemon, "killed").len(), 30);
    let pid = status(&daemon)["pid"].to_string();
    let killed = Command::new("kill").args(["-9", &pid]).status().expect("kill runs");
    assert!(killed.success());
    eventually("the killed daemon to stop answering", || daemon.call("status", Value::Null).is_err().then_some(()));
    assert!(daemon.socket().exists(), "a dead daemon leaves its socket file behind");
    drop(daemon);

    append_lines(&log, &lines[30..]);
    let daemon = setup.start();
    assert_events_match_file(&daemon, "killed", &log);
    assert_eq!(session(&daemon, "killed")["tampered"], false);
}

#[test]
fn partial_last_line_waits_for_its_newline() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let log = setup.copilot_log("partial");
    let (head, tail) = lines[5].split_at(lines[5].len() / 2);
    append_lines(&log, &lines[..5]);
    append(&log, head);

    let daemon = setup.start();
    assert_eq!(events(&daemon, "partial").len(), 5, "the half line is not an event");
    assert_eq!(session(&daemon, "partial")["bytes"], json!(offset_in(&lines, 5, 0)));

    append(&log, tail);
    let events = events(&daemon, "partial");
    assert_eq!(events.len(), 6, "the line is ingested once its newline arrives");
    assert_eq!(events[5]["raw"].as_str().unwrap().as_bytes(), lines[5].as_slice());
    assert_events_match_file(&daemon, "partial", &log);
}

#[test]
fn session_directories_created_after_start_are_picked_up() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let daemon = setup.start();
    assert_eq!(sessions(&daemon).len(), 0);

    // Read-your-writes: a query sees a session that appeared a moment ago.
    let first = setup.copilot_log("first");
    append_lines(&first, &lines[..10]);
    assert_eq!(session(&daemon, "first")["events"], 10);

    // The watcher: `status` does not catch up, so it only counts what was ingested in the
    // background.
    let second = setup.copilot_log("second");
    append_lines(&second, &lines[..7]);
    eventually("the watcher to ingest the new session", || {
        let status = status(&daemon);
        (status["files"] == 2 && status["lines"] == 17).then_some(())
    });
    assert_eq!(session(&daemon, "second")["events"], 7);
}

#[test]
fn a_root_that_appears_after_start_is_watched() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let late_root = setup.tmp.path().join("late/.copilot/session-state");
    let daemon = Daemon::start(&setup.home, &[&late_root], &[&setup.claude]);
    assert_eq!(status(&daemon)["files"], 0);

    let log = late_root.join("late-session/events.jsonl");
    fs::create_dir_all(log.parent().unwrap()).unwrap();
    append_lines(&log, &lines[..4]);
    eventually("the new root's session to be ingested in the background", || {
        (status(&daemon)["lines"] == 4).then_some(())
    });

    // Appends to it keep flowing in without a query.
    append_lines(&log, &lines[4..9]);
    eventually("the appended lines to be ingested in the background", || (status(&daemon)["lines"] == 9).then_some(()));
    assert_events_match_file(&daemon, "late-session", &log);
}

#[test]
fn claude_code_transcripts_and_subagent_transcripts_are_ingested() {
    let setup = Setup::new();
    let project = setup.claude.join("-tmp-judged-fixture-claude-marker-challenge-project");
    fs::create_dir_all(&project).unwrap();
    let transcript = project.join(format!("{CLAUDE_SESSION_ID}.jsonl"));
    fs::copy(workspace().join(CLAUDE_FIXTURE), &transcript).unwrap();
    let stop_hook = workspace().join("fixtures/claude-code-2.1.328/stop-hook/2a79783f-e47d-4d9a-9a70-e45e5ba0c980");
    let subagents = project.join("2a79783f-e47d-4d9a-9a70-e45e5ba0c980/subagents");
    fs::create_dir_all(&subagents).unwrap();
    fs::copy(
        stop_hook.join("subagents/agent-af2eb9c1b263f2ac6.jsonl"),
        subagents.join("agent-af2eb9c1b263f2ac6.jsonl"),
    )
    .unwrap();

    let daemon = setup.start();
    let summary = session(&daemon, CLAUDE_SESSION_ID);
    assert_eq!(summary["host"], "claude-code");
    assert_eq!(summary["session_id"], CLAUDE_SESSION_ID);
    assert_eq!(summary["cwd"], "/tmp/judged-fixture/claude/marker-challenge/project");
    assert_events_match_file(&daemon, CLAUDE_SESSION_ID, &transcript);
    let child = session(&daemon, "2a79783f-e47d-4d9a-9a70-e45e5ba0c980/agent-af2eb9c1b263f2ac6");
    assert_eq!(child["host"], "claude-code");
    assert!(child["events"].as_u64().unwrap() > 0);
}

#[test]
fn malformed_non_utf8_and_very_long_lines_are_stored_and_ingest_continues() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let log = setup.copilot_log("bad-lines");
    let long_line = {
        let mut line = b"{\"type\":\"assistant.message\",\"data\":{\"content\":\"".to_vec();
        line.extend(std::iter::repeat_n(b'x', 2 * 1024 * 1024));
        line.extend_from_slice(b"\"}\n");
        line
    };
    let bad: Vec<Vec<u8>> =
        vec![b"{this is not json\n".to_vec(), b"\xff\xfe\x00 not utf-8 \xc3\x28\n".to_vec(), long_line];
    append_lines(&log, &lines[..5]);
    append_lines(&log, &bad);
    append_lines(&log, &lines[5..10]);

    let daemon = setup.start();
    let events = events(&daemon, "bad-lines");
    assert_eq!(events.len(), 13, "every complete line is an event, bad ones included");
    assert!(events[5]["kind"].is_null() && events[6]["kind"].is_null(), "unparsable lines have no kind");
    assert_eq!(events[7]["end"].as_u64().unwrap() - events[7]["start"].as_u64().unwrap(), bad[2].len() as u64);
    assert_eq!(events[8]["kind"], "assistant.message", "the line after the bad ones is parsed as usual");
    assert_events_match_file(&daemon, "bad-lines", &log);
    assert_eq!(session(&daemon, "bad-lines")["tampered"], false);

    // ...and ingest continues afterwards, in this session and in others.
    append_lines(&log, &lines[10..12]);
    append_lines(&setup.copilot_log("other"), &lines[..3]);
    assert_eq!(session(&daemon, "bad-lines")["events"], 15);
    assert_eq!(session(&daemon, "other")["events"], 3);
}

#[test]
fn a_copilot_parent_id_break_is_an_integrity_finding_not_a_tamper() {
    let setup = Setup::new();
    let mut lines = copilot_lines();
    let original = String::from_utf8(lines[4].clone()).unwrap();
    let parent = original.rsplit_once("\"parentId\":\"").expect("line 5 has a parentId").1;
    let broken = original.replace(&parent[..36], "00000000-0000-4000-8000-000000000000");
    assert_ne!(broken, original);
    lines[4] = broken.into_bytes();
    append_lines(&setup.copilot_log("broken-chain"), &lines);
    append_lines(&setup.copilot_log("intact-chain"), &copilot_lines());

    let daemon = setup.start();
    let broken = session(&daemon, "broken-chain");
    assert_eq!(broken["integrity_findings"], 1, "exactly the one broken link is reported");
    assert_eq!(broken["tampered"], false);
    assert_eq!(broken["events"], 43);
    assert_eq!(session(&daemon, "intact-chain")["integrity_findings"], 0, "the real host's chain is intact");
}

#[test]
fn a_vanished_session_directory_keeps_its_history_and_ingest_continues() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let doomed = setup.copilot_log("doomed");
    append_lines(&doomed, &lines[..6]);
    let daemon = setup.start();
    assert_eq!(session(&daemon, "doomed")["events"], 6);

    fs::remove_dir_all(doomed.parent().unwrap()).unwrap();
    append_lines(&setup.copilot_log("survivor"), &lines[..4]);
    assert_eq!(session(&daemon, "survivor")["events"], 4, "ingest of everything else continues");
    let kept = events(&daemon, "doomed");
    assert_eq!(kept.len(), 6, "the store still shows what the log said");
    assert_eq!(kept[5]["raw"].as_str().unwrap().as_bytes(), lines[5].as_slice());
    // Removed is not rewritten: neither verify-log nor a restart calls it tampered.
    let output = setup.judged(&["verify-log", "doomed"]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("no longer exists"));
    daemon.stop();
    let daemon = setup.start();
    assert_eq!(session(&daemon, "doomed")["tampered"], false);
    assert_eq!(session(&daemon, "doomed")["events"], 6);
}

// ---------------------------------------------------------------------------------------
// Tamper
// ---------------------------------------------------------------------------------------

#[test]
fn truncation_marks_the_session_tampered_in_the_journal_and_stops_ingest() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let log = setup.copilot_log("truncated");
    append_lines(&log, &lines[..10]);
    append_lines(&setup.copilot_log("untouched"), &lines[..10]);

    let daemon = setup.start();
    assert_eq!(session(&daemon, "truncated")["tampered"], false);
    let before = status(&daemon);
    assert_eq!(before["tampered"], 0);

    fs::OpenOptions::new().write(true).open(&log).unwrap().set_len(offset_in(&lines, 5, 0)).unwrap();
    assert_eq!(session(&daemon, "truncated")["tampered"], true);
    let after = status(&daemon);
    assert_eq!(after["tampered"], 1, "status counts the tampered session");
    assert!(after["journal_events"].as_u64().unwrap() > before["journal_events"].as_u64().unwrap(), "journaled");

    // Growing the file back past the old end does not re-ingest over the history.
    append_lines(&log, &lines[5..15]);
    assert_eq!(events(&daemon, "truncated").len(), 10);
    assert_eq!(session(&daemon, "untouched")["tampered"], false);

    // It is remembered across a restart.
    daemon.stop();
    let daemon = setup.start();
    assert_eq!(session(&daemon, "truncated")["tampered"], true);
    assert_eq!(status(&daemon)["tampered"], 1);
    assert_eq!(events(&daemon, "truncated").len(), 10);
}

#[test]
fn a_byte_changed_in_the_last_ingested_line_is_caught_at_the_next_catch_up() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let log = setup.copilot_log("rewritten");
    append_lines(&log, &lines[..10]);
    let daemon = setup.start();
    assert_eq!(events(&daemon, "rewritten").len(), 10);

    // One byte inside line 10, then more lines after it.
    flip_case_in_line(&log, &lines, 9, "assistant");
    append_lines(&log, &lines[10..13]);

    let summary = session(&daemon, "rewritten");
    assert_eq!(summary["tampered"], true);
    assert_eq!(summary["events"], 10, "nothing is ingested over a changed history");
    let stored = events(&daemon, "rewritten");
    assert_eq!(
        stored[9]["raw"].as_str().unwrap().as_bytes(),
        lines[9].as_slice(),
        "the store keeps what was witnessed"
    );
    assert_eq!(status(&daemon)["tampered"], 1);
}

#[test]
fn a_byte_changed_deeper_in_the_history_is_caught_by_verify_log_and_on_start() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let (by_cli, on_start) = (setup.copilot_log("by-cli"), setup.copilot_log("on-start"));
    append_lines(&by_cli, &lines[..10]);
    append_lines(&on_start, &lines[..10]);

    let daemon = setup.start();
    assert_eq!(sessions(&daemon).len(), 2);
    flip_case_in_line(&by_cli, &lines, 2, "GitHub");
    let output = setup.judged(&["verify-log", "by-cli"]);
    assert!(!output.status.success(), "verify-log exits non-zero on a rewritten log");
    assert_eq!(stdout_json(&output)["tampered"], true);
    append_lines(&by_cli, &lines[10..12]);
    let summary = session(&daemon, "by-cli");
    assert_eq!((&summary["tampered"], &summary["events"]), (&json!(true), &json!(10)), "marked, and not ingested over");

    // Changed while the daemon was down: the whole prefix is re-hashed on start.
    daemon.stop();
    flip_case_in_line(&on_start, &lines, 2, "GitHub");
    let daemon = setup.start();
    assert_eq!(session(&daemon, "on-start")["tampered"], true);
    assert_eq!(status(&daemon)["tampered"], 2);
}

#[test]
fn verify_log_names_a_session_by_key_id_or_path_and_exits_zero_when_intact() {
    let setup = Setup::new();
    let log = setup.copilot_log("intact");
    append_lines(&log, &copilot_lines());
    let daemon = setup.start();
    let head = chain_head(&daemon, "intact", 43);

    for name in ["intact", COPILOT_SESSION_ID, log.to_str().unwrap()] {
        let output = setup.judged(&["verify-log", name]);
        assert!(output.status.success(), "verify-log {name}: {}", String::from_utf8_lossy(&output.stderr));
        let report = stdout_json(&output);
        assert_eq!(report["tampered"], false);
        assert_eq!(report["lines"], 43);
        assert_eq!(report["chain_sha256"], head.as_str());
    }
    let unknown = setup.judged(&["verify-log", "no-such-session"]);
    assert!(!unknown.status.success(), "an unknown session is an error");
}

#[test]
fn symlinked_logs_are_refused_and_the_daemon_keeps_running() {
    let setup = Setup::new();
    let lines = copilot_lines();
    let elsewhere = setup.tmp.path().join("elsewhere.jsonl");
    append_lines(&elsewhere, &lines);
    std::os::unix::fs::symlink(&elsewhere, setup.copilot_log("linked-at-start")).unwrap();
    append_lines(&setup.copilot_log("regular"), &lines[..8]);

    let daemon = setup.start();
    std::os::unix::fs::symlink(&elsewhere, setup.copilot_log("linked-later")).unwrap();
    let listed: Vec<Value> = sessions(&daemon).iter().map(|s| s["session"].clone()).collect();
    assert_eq!(listed, vec![json!("regular")], "symlinked logs are not ingested");
    assert!(daemon.call("events", json!({"session": "linked-later"})).is_err());

    append_lines(&setup.copilot_log("regular"), &lines[8..10]);
    assert_eq!(session(&daemon, "regular")["events"], 10, "everything else continues");
    assert_eq!(status(&daemon)["files"], 1);
}

// ---------------------------------------------------------------------------------------
// Socket
// ---------------------------------------------------------------------------------------

/// Send raw bytes, then read whatever comes back until the daemon closes or 10 s pass.
fn raw_exchange(socket: &Path, bytes: &[u8], close_write: bool) -> Vec<u8> {
    let mut stream = UnixStream::connect(socket).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.write_all(bytes).expect("send");
    if close_write {
        stream.shutdown(std::net::Shutdown::Write).unwrap();
    }
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the daemon neither answered nor closed: {e}"),
    }
    answer
}

/// An answer is either nothing (a close) or one error frame.
fn assert_error_or_close(answer: &[u8], what: &str) {
    if answer.is_empty() {
        return;
    }
    let len = u32::from_be_bytes(answer[..4].try_into().unwrap()) as usize;
    assert_eq!(answer.len(), 4 + len, "{what}: one frame");
    let response: Value = serde_json::from_slice(&answer[4..]).expect("the response is JSON");
    assert!(response.get("error").is_some() && response.get("ok").is_none(), "{what}: answered {response}");
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(body);
    frame
}

#[test]
fn malformed_frames_get_an_error_or_a_close_and_the_daemon_survives() {
    let setup = Setup::new();
    let daemon = setup.start();
    let socket = daemon.socket();
    let cases: Vec<(&str, Vec<u8>, bool)> = vec![
        ("oversized length header", vec![0xff, 0xff, 0xff, 0xff, b'{'], false),
        ("header just over the limit", ((judged_protocol::MAX_FRAME_BYTES + 1) as u32).to_be_bytes().to_vec(), false),
        ("truncated frame", frame(br#"{"v":2,"id":3,"op":"status","args":null}"#)[..20].to_vec(), true),
        ("truncated header", vec![0, 0], true),
        ("invalid JSON", frame(b"{not json"), false),
        ("JSON that is not a request", frame(b"[1,2,3]"), false),
        ("wrong protocol version", frame(br#"{"v":999,"id":4,"op":"status","args":null}"#), true),
        ("unknown operation", frame(br#"{"v":2,"id":5,"op":"no_such_op","args":null}"#), true),
        ("a wrong-typed argument", frame(br#"{"v":2,"id":6,"op":"events","args":{"session":7}}"#), true),
        ("the protocol before typed requests", frame(br#"{"v":1,"id":7,"op":"status","args":null}"#), true),
    ];
    for (what, bytes, close_write) in cases {
        let answer = raw_exchange(&socket, &bytes, close_write);
        assert_error_or_close(&answer, what);
        assert!(daemon.call("status", Value::Null).is_ok(), "{what}: the daemon still answers");
    }
    // A well-formed raw request still works, and its id is echoed.
    let answer = raw_exchange(&socket, &frame(br#"{"v":2,"id":42,"op":"status","args":null}"#), true);
    let response: Value = serde_json::from_slice(&answer[4..]).unwrap();
    assert_eq!(response["id"], 42);
    assert!(response["ok"]["pid"].is_u64());
}

#[test]
fn many_concurrent_clients_are_all_answered() {
    let setup = Setup::new();
    append_lines(&setup.copilot_log("busy"), &copilot_lines());
    let daemon = setup.start();
    let pid = status(&daemon)["pid"].clone();
    let socket = daemon.socket();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..32)
            .map(|i| {
                let socket = socket.clone();
                scope.spawn(move || {
                    (0..20)
                        .map(|j| {
                            let op = if (i + j) % 4 == 0 { "sessions" } else { "status" };
                            judged_protocol::call::<Value>(&socket, request(op, Value::Null), Duration::from_secs(60))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut answered = 0;
        for worker in workers {
            for answer in worker.join().expect("client thread") {
                let answer = answer.expect("every request is answered");
                assert!(answer["pid"] == pid || answer[0]["session"] == "busy", "answer: {answer}");
                answered += 1;
            }
        }
        assert_eq!(answered, 32 * 20);
    });
}

#[test]
fn a_second_foreground_start_on_the_same_home_says_it_is_already_running() {
    let setup = Setup::new();
    let daemon = setup.start();
    let pid = status(&daemon)["pid"].clone();
    let second = judged_command(&setup.home, &["start", "--foreground", "--copilot-root"])
        .arg(&setup.copilot)
        .arg("--claude-root")
        .arg(&setup.claude)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = wait_with_deadline(second, Duration::from_secs(30));
    assert!(!output.status.success(), "the second daemon must not run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("already running"), "stderr: {stderr}");
    assert_eq!(status(&daemon)["pid"], pid, "the first daemon is untouched and still answers");
}

#[test]
fn background_start_returns_once_the_socket_answers_and_stop_stops_it() {
    let setup = Setup::new();
    let _guard = BackgroundGuard(setup.home.clone());
    let root_args =
        ["--copilot-root", setup.copilot.to_str().unwrap(), "--claude-root", setup.claude.to_str().unwrap()];
    let start = [&["start"][..], &root_args].concat();
    let output = wait_with_deadline(
        judged_command(&setup.home, &start).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap(),
        Duration::from_secs(60),
    );
    assert!(output.status.success(), "judged start: {}", String::from_utf8_lossy(&output.stderr));
    let socket = setup.home.join("judged.sock");
    let status = judged_protocol::call::<Value>(&socket, judged_protocol::Request::Status, Duration::from_secs(10))
        .expect("the socket answers as soon as `judged start` returns");
    assert!(status["pid"].is_u64());

    let again = setup.judged(&start);
    assert!(!again.status.success(), "a second `judged start` fails");
    assert!(String::from_utf8_lossy(&again.stderr).contains("already running"));

    let stop = setup.judged(&["stop"]);
    assert!(stop.status.success(), "judged stop: {}", String::from_utf8_lossy(&stop.stderr));
    assert!(
        judged_protocol::call::<Value>(&socket, judged_protocol::Request::Status, Duration::from_secs(5)).is_err(),
        "stopped"
    );
    let stop_again = setup.judged(&["stop"]);
    assert!(!stop_again.status.success(), "stopping a stopped daemon is an error");
}

/// Whether process `pid` is gone: `kill -0` finds nothing (a zombie its parent has not
/// reaped yet is still found, and `ps` still lists it).
fn gone(pid: u32) -> bool {
    let kill = Command::new("kill").args(["-0", &pid.to_string()]).stderr(Stdio::null()).status().expect("kill runs");
    !kill.success()
}

#[test]
fn stop_returns_once_the_daemon_has_exited_so_a_start_right_after_succeeds() {
    let setup = Setup::new();
    let _guard = BackgroundGuard(setup.home.clone());
    let root_args =
        ["--copilot-root", setup.copilot.to_str().unwrap(), "--claude-root", setup.claude.to_str().unwrap()];
    let start = [&["start"][..], &root_args].concat();
    let pid_path = setup.home.join("judged.pid");
    for cycle in 1..=5 {
        let started = setup.judged(&start);
        assert!(started.status.success(), "cycle {cycle}: judged start: {}", String::from_utf8_lossy(&started.stderr));
        let pid: u32 = fs::read_to_string(&pid_path).unwrap().trim().parse().expect("the pid file holds the pid");
        // Opened before the stop: the daemon removes the file as it exits, its lock stays on this one.
        let pid_file = fs::File::open(&pid_path).unwrap();
        let stop = setup.judged(&["stop"]);
        assert!(stop.status.success(), "cycle {cycle}: judged stop: {}", String::from_utf8_lossy(&stop.stderr));
        assert_eq!(String::from_utf8_lossy(&stop.stdout), format!("judged stopped (pid {pid})\n"), "cycle {cycle}");
        // Right away, no waiting: `stop` said so, so the daemon let go of its lock and its
        // pid is gone (here its parent, the init, reaps it; one that never does is
        // `a_stopped_daemon_left_unreaped_is_said_to_have_exited`).
        assert!(pid_file.try_lock().is_ok(), "cycle {cycle}: the pid file is still locked after `judged stop`");
        assert!(gone(pid), "cycle {cycle}: pid {pid} is still there after `judged stop` said it stopped");
    }
    let stop = setup.judged(&["stop"]);
    assert!(!stop.status.success(), "stopping a stopped daemon is an error");
    assert_eq!(String::from_utf8_lossy(&stop.stderr), "judged: judged is not running\n");
}

#[test]
fn a_stopped_daemon_left_unreaped_is_said_to_have_exited() {
    let setup = Setup::new();
    // This test is the daemon's parent and does not reap it until the end: after it
    // exits, `ps` lists it as a zombie for the whole of `judged stop`'s wait (10 s).
    let daemon = setup.start();
    let pid = daemon.pid();
    let stop = setup.judged(&["stop"]);
    assert!(stop.status.success(), "judged stop: {}", String::from_utf8_lossy(&stop.stderr));
    assert_eq!(
        String::from_utf8_lossy(&stop.stdout),
        format!(
            "judged stopped (pid {pid} has exited, but its parent has not reaped it yet: `ps` lists it as <defunct> \
             until it does, and it holds nothing)\n"
        )
    );
    assert!(!gone(pid), "the zombie was there all along, so the message was the true one");
    daemon.stop();
    assert!(gone(pid), "reaped once its parent waited for it");
}

#[test]
fn stop_names_a_daemon_that_does_not_exit_and_how_to_end_it() {
    let setup = Setup::new();
    fs::create_dir_all(&setup.home).unwrap();
    fs::set_permissions(&setup.home, fs::Permissions::from_mode(0o700)).unwrap();
    // A daemon that says it is stopping and does not: its pid file stays locked.
    let pid = std::process::id();
    let mut pid_file = fs::File::create(setup.home.join("judged.pid")).unwrap();
    writeln!(pid_file, "{pid}").unwrap();
    pid_file.lock().unwrap();
    let listener = UnixListener::bind(setup.home.join("judged.sock")).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut connection = judged_protocol::Connection::new(stream);
            let _: Option<Value> = connection.receive().unwrap();
            let stopping = judged_protocol::Stopping { stopping: true };
            let response = judged_protocol::Response {
                v: judged_protocol::PROTOCOL_VERSION,
                id: 1,
                outcome: judged_protocol::Outcome::Ok(stopping),
            };
            connection.send(&response).unwrap();
        }
    });
    let stop = setup.judged(&["stop"]);
    assert!(!stop.status.success());
    assert_eq!(
        String::from_utf8_lossy(&stop.stderr),
        format!(
            "judged: judged (pid {pid}) is still running 10 s after it was asked to stop; `kill {pid}` stops it \
             (`kill -9 {pid}` if it does not)\n"
        )
    );
}

#[test]
fn the_log_of_a_background_daemon_is_plain_text() {
    let setup = Setup::new();
    let _guard = BackgroundGuard(setup.home.clone());
    let started = judged_command(&setup.home, &["start", "--copilot-root"])
        .arg(&setup.copilot)
        .arg("--claude-root")
        .arg(&setup.claude)
        .env("JUDGED_LOG", "info")
        .output()
        .unwrap();
    assert!(started.status.success(), "judged start: {}", String::from_utf8_lossy(&started.stderr));
    let stop = setup.judged(&["stop"]);
    assert!(stop.status.success(), "judged stop: {}", String::from_utf8_lossy(&stop.stderr));
    let log = fs::read_to_string(setup.home.join("judged.log")).unwrap();
    assert!(log.contains("listening") && log.contains("stopped"), "the daemon logged its start and stop: {log}");
    let mode = fs::metadata(setup.home.join("judged.log")).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the log names the user's projects: the owner's alone");
    assert!(!log.contains("\x1b["), "no colour escapes in a log file: {log:?}");
}

#[test]
fn start_with_a_broken_config_names_the_file_the_line_and_what_is_wrong() {
    let setup = Setup::new();
    let _guard = BackgroundGuard(setup.home.clone());
    fs::create_dir_all(&setup.home).unwrap();
    let config = setup.home.join("config.toml");
    fs::write(&config, "auto_start = true\npolcy = \"evidence\"\n").unwrap();
    let output = setup.judged(&["start"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with(&format!("judged: {}: ", config.display())), "names the file: {stderr}");
    assert!(stderr.contains("line 2") && stderr.contains("unknown field `polcy`"), "the line and the error: {stderr}");
    assert!(stderr.trim_end().ends_with("fix that file, then start judged again"), "the next step: {stderr}");
    assert!(judged_tests::status_at(&setup.home, Duration::from_secs(2)).is_none(), "no daemon was started");
}

#[test]
fn a_daemon_that_exits_during_start_shows_what_it_logged() {
    let setup = Setup::new();
    fs::create_dir_all(&setup.home).unwrap();
    fs::set_permissions(&setup.home, fs::Permissions::from_mode(0o700)).unwrap();
    // Something that is not a daemon answering on the socket holds the pid file's lock.
    let pid_path = setup.home.join("judged.pid");
    let pid_file = fs::File::create(&pid_path).unwrap();
    pid_file.lock().unwrap();
    fs::write(setup.home.join("judged.log"), "judged: an error of an earlier run\n").unwrap();
    let output = setup.judged(&["start"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let log = setup.home.join("judged.log");
    assert!(stderr.contains("judged exited during start (exit status: 1)"), "{stderr}");
    assert!(
        stderr.contains(&format!("judged is already running (pid file {} is locked)", pid_path.display())),
        "{stderr}"
    );
    assert!(stderr.contains(&log.display().to_string()), "names the log: {stderr}");
    assert!(!stderr.contains("earlier run"), "only what this start logged: {stderr}");
}

#[test]
fn a_stale_socket_does_not_prevent_start() {
    // A socket left behind by a listener that is gone. (A file that is not a socket is
    // refused instead: tests/tests/hardening.rs.)
    let setup = Setup::new();
    fs::create_dir_all(&setup.home).unwrap();
    fs::set_permissions(&setup.home, fs::Permissions::from_mode(0o700)).unwrap();
    drop(UnixListener::bind(setup.home.join("judged.sock")).unwrap());
    assert!(UnixStream::connect(setup.home.join("judged.sock")).is_err(), "the socket is dead");
    let daemon = setup.start();
    assert!(status(&daemon)["pid"].is_u64());
}

#[test]
fn home_is_private_and_the_socket_is_owner_only() {
    let setup = Setup::new();
    fs::create_dir_all(&setup.home).unwrap();
    fs::set_permissions(&setup.home, fs::Permissions::from_mode(0o755)).unwrap();
    let daemon = setup.start();
    let mode = |path: &Path| fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&setup.home), 0o700, "JUDGED_HOME is made private");
    assert_eq!(mode(&daemon.socket()), 0o600, "the socket is owner-only");
    assert_eq!(mode(&setup.home.join("signing.key")), 0o600, "the witness key is owner-only");

    // A home the daemon creates itself is private too.
    let fresh = setup.tmp.path().join("created/by/judged");
    let other = Daemon::start(&fresh, &[&setup.copilot], &[&setup.claude]);
    assert_eq!(mode(&fresh), 0o700);
    assert_eq!(mode(&other.socket()), 0o600);
}

#[test]
fn status_and_sessions_print_json_and_tables() {
    let setup = Setup::new();
    append_lines(&setup.copilot_log("listed"), &copilot_lines());
    let daemon = setup.start();
    let pid = status(&daemon)["pid"].clone();

    let status = setup.judged(&["status", "--json"]);
    assert!(status.status.success());
    let status = stdout_json(&status);
    assert_eq!(status["pid"], pid);
    assert_eq!(status["files"], 1);
    assert_eq!(status["tampered"], 0);

    let listed = setup.judged(&["sessions", "--json"]);
    assert!(listed.status.success());
    let listed = stdout_json(&listed);
    assert_eq!(listed.as_array().map(Vec::len), Some(1));
    let summary = &listed[0];
    assert_eq!(summary["session"], "listed");
    assert_eq!(summary["session_id"], COPILOT_SESSION_ID);
    assert_eq!(summary["host"], "copilot-cli");
    assert_eq!(summary["cwd"], "/tmp/judged-fixture/copilot/cross-family-ok/project");
    assert_eq!(summary["events"], 43);
    assert_eq!(summary["tampered"], false);
    assert_eq!(summary["last_event_time"], "2026-11-30T01:25:07.464Z");

    let table = setup.judged(&["sessions"]);
    assert!(table.status.success());
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.lines().any(|l| l.contains("listed") && l.contains("43") && l.contains("copilot-cli")), "{table}");
    let plain = setup.judged(&["status"]);
    assert!(plain.status.success());
    let plain = String::from_utf8_lossy(&plain.stdout);
    assert!(plain.lines().any(|l| l == format!("pid              {pid}")), "{plain}");
    // The catch-up and the config in force, as `--json` has them.
    assert!(
        plain.lines().any(|l| l == "catch_up         done: 1/1 logs, 0.1/0.1 MiB; 0 bytes of the logs not read yet"),
        "{plain}"
    );
    let config = format!("config           {} (absent: the defaults), read ", setup.home.join("config.toml").display());
    assert!(plain.lines().any(|l| l.starts_with(&config)), "{plain}");

    drop(daemon);
    let down = setup.judged(&["status", "--json"]);
    assert!(!down.status.success(), "status without a daemon fails");
}

#[test]
fn rebuild_replays_the_same_session_summaries() {
    let setup = Setup::new();
    let daemon = setup.start();
    let log = setup.copilot_log("s1");
    append_lines(&log, &copilot_lines());
    // An event naming a parent that never comes, and two after it: one chain break.
    append(&log, b"{\"type\":\"x\",\"id\":\"late\",\"parentId\":\"not-the-previous\"}\n");
    append(&log, b"{\"type\":\"x\",\"id\":\"later\",\"parentId\":\"late\"}\n");
    append(&log, b"{\"type\":\"x\",\"id\":\"latest\",\"parentId\":\"later\"}\n");
    let before = sessions(&daemon);
    assert_eq!(before[0]["integrity_findings"], 1);
    let output = setup.judged(&["rebuild"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("rebuilt 1 session"));
    assert_eq!(sessions(&daemon), before);
}

/// The daemon's own reads of a watched root raise inotify access events; following them
/// made every catch-up trigger the next (a daemon busy at 90% CPU while idle).
#[test]
fn an_idle_daemon_does_not_chase_its_own_reads() {
    let setup = Setup::new();
    append_lines(&setup.copilot_log("s1"), &copilot_lines());
    let daemon = setup.start();
    let before = status(&daemon)["catch_up_passes"].as_u64().unwrap();
    std::thread::sleep(Duration::from_secs(3));
    let passes = status(&daemon)["catch_up_passes"].as_u64().unwrap() - before;
    // The reconcile tick runs every 2 s; the feedback loop ran thousands of passes.
    assert!(passes <= 10, "{passes} catch-up passes in 3 s of idling");
}

/// A log replaced by a FIFO must not hang the daemon on open (it once blocked every
/// request behind the engine lock).
#[test]
fn a_log_replaced_by_a_fifo_is_tampered_and_the_daemon_stays_responsive() {
    let setup = Setup::new();
    let log = setup.copilot_log("s1");
    append_lines(&log, &copilot_lines());
    let daemon = setup.start();
    assert_eq!(sessions(&daemon).len(), 1);
    fs::remove_file(&log).unwrap();
    assert!(Command::new("mkfifo").arg(&log).status().unwrap().success());
    let output = setup.judged(&["verify-log", "s1"]);
    assert!(!output.status.success());
    assert_eq!(session(&daemon, "s1")["tampered"], true);
    assert!(status(&daemon)["pid"].is_number());
}

/// Set for [`fails_with_a_daemon_that_warned_when_asked`], which fails only then.
const FAIL_WITH_A_DAEMON: &str = "JUDGED_TEST_FAIL_WITH_A_DAEMON";

/// Run by `a_daemons_log_stays_out_of_the_tests_output_unless_the_test_fails`: a test that
/// fails while its daemon runs, after the daemon logged a warning. Without
/// [`FAIL_WITH_A_DAEMON`] set it does nothing.
#[test]
fn fails_with_a_daemon_that_warned_when_asked() {
    if std::env::var_os(FAIL_WITH_A_DAEMON).is_none() {
        return;
    }
    let setup = Setup::new();
    let lines = copilot_lines();
    let log = setup.copilot_log("truncated");
    append_lines(&log, &lines[..10]);
    let daemon = setup.start();
    fs::OpenOptions::new().write(true).open(&log).unwrap().set_len(offset_in(&lines, 5, 0)).unwrap();
    assert_eq!(session(&daemon, "truncated")["tampered"], true);
    panic!("failing as asked, with the daemon running");
}

/// Issue 32: a test's daemon logs to a file, so its `WARN` lines do not show among cargo's
/// output (where they read as failures); a test that fails shows where the log is and its
/// last lines.
#[test]
fn a_daemons_log_stays_out_of_the_tests_output_unless_the_test_fails() {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "fails_with_a_daemon_that_warned_when_asked"])
        .env(FAIL_WITH_A_DAEMON, "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(!output.status.success() && stdout.contains("failing as asked"), "{stdout}{stderr}");
    // The daemon inherited nothing of the test process's stderr, which no capture covers.
    assert!(!stderr.contains("WARN"), "the daemon's log reached the test's stderr:\n{stderr}");
    // The harness shows a failed test's captured output, and in it the daemon's log.
    let shown: Vec<&str> = stdout.lines().skip_while(|l| !l.starts_with("judged's log (")).collect();
    let heading = shown.first().unwrap_or_else(|| panic!("no log shown for the failed test:\n{stdout}"));
    assert!(heading.ends_with(".log), its last lines:"), "{heading}");
    assert!(
        shown[1].contains(" WARN judged_daemon::ingest: log no longer holds what judged ingested;"),
        "the daemon's warning is in the lines shown:\n{stdout}"
    );
}

/// A client that skips judge-evidence's own checks and sends a challenge straight to the
/// socket gets the rules' refusals all the same, in the reference's order: the age before
/// the binding, whose format the daemon checks where the request comes in.
#[test]
fn a_raw_challenge_with_a_bad_binding_or_age_is_refused_as_the_cli_refuses_it() {
    let setup = Setup::new();
    let daemon = setup.start();
    let ask = |binding: &str, max_age: i64| {
        let now = chrono::Utc::now().to_rfc3339();
        let args =
            json!({"binding": binding, "cwd": "/tmp", "max_age_seconds": max_age, "started_at": now, "writes": []});
        daemon.call("challenge", args).expect_err("refused").to_string()
    };
    let short = ask("short", 60);
    assert!(short.contains("--binding must be a 16..128 character stable token"), "{short}");
    let both = ask("short", 601);
    assert!(both.contains("--max-age-seconds must be within 1..600"), "the age first: {both}");
    let spaced = ask("has space in the token here", 60);
    assert!(spaced.contains("--binding must be a 16..128 character stable token"), "{spaced}");
}
