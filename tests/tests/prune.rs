//! `judged prune` against a real daemon over logs the real clients wrote: an idle session's
//! bytes go, what proves its history stays (every line's hash and the chain, so a later
//! rewrite of the log is still caught), and a session something recent names is kept.

use judged_tests::{Daemon, bin, judge_hook, workspace};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const COPILOT_LOG: &str = "fixtures/copilot-1.0.102/cross-family-ok/events.jsonl";
const CLAUDE_SESSION: &str = "70e11cfc-c3fb-426c-9dfc-374e15ffb0af";
/// A cutoff every fixture's last record is older than: now.
const LATER: &str = "0d";

/// Fields drop in order: the daemon stops before its home directory is removed.
struct Setup {
    daemon: Daemon,
    home: PathBuf,
    copilot_log: PathBuf,
    claude_log: PathBuf,
    _dir: tempfile::TempDir,
}

/// A daemon over one Copilot CLI session and one Claude Code transcript.
fn setup() -> Setup {
    setup_with("")
}

/// As [`setup`], with `config` in config.toml.
fn setup_with(config: &str) -> Setup {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    let (copilot, claude) = (dir.path().join("copilot"), dir.path().join("claude"));
    let copilot_log = copilot.join("old/events.jsonl");
    let claude_log = claude.join("-project").join(format!("{CLAUDE_SESSION}.jsonl"));
    for log in [&copilot_log, &claude_log] {
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    }
    std::fs::copy(workspace().join(COPILOT_LOG), &copilot_log).unwrap();
    let transcript = format!("fixtures/claude-code-2.1.328/marker-challenge/{CLAUDE_SESSION}.jsonl");
    std::fs::copy(workspace().join(transcript), &claude_log).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), format!("auto_start = false\n{config}")).unwrap();
    let daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    Setup { daemon, home, copilot_log, claude_log, _dir: dir }
}

impl Setup {
    fn judged(&self, args: &[&str]) -> Output {
        Command::new(bin("judged"))
            .args(args)
            .env("JUDGED_HOME", &self.home)
            .env("JUDGED_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .expect("judged runs")
    }

    /// `judged prune --json --older-than CUTOFF ARGS`.
    fn prune(&self, cutoff: &str, args: &[&str]) -> Value {
        let output = self.judged(&[&["prune", "--json", "--older-than", cutoff], args].concat());
        assert!(output.status.success(), "prune: {}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice(&output.stdout).expect("prune --json prints JSON")
    }

    fn session(&self, key: &str) -> Value {
        let sessions = self.daemon.call("sessions", Value::Null).expect("sessions");
        sessions.as_array().unwrap().iter().find(|s| s["session"] == key).cloned().expect("the session is listed")
    }

    fn events(&self, key: &str) -> Vec<Value> {
        let events = self.daemon.call("events", json!({"session": key, "from": 1, "limit": 10_000})).expect("events");
        events.as_array().unwrap().clone()
    }
}

fn paths(listed: &Value) -> Vec<PathBuf> {
    listed.as_array().unwrap().iter().map(|s| PathBuf::from(s["path"].as_str().unwrap())).collect()
}

#[test]
fn an_idle_session_loses_its_bytes_and_keeps_what_catches_a_rewrite() {
    let s = setup();
    let before = s.session("old");
    let dry = s.prune(LATER, &["--dry-run"]);
    assert_eq!(dry["dry_run"], true);
    assert!(paths(&dry["pruned"]).contains(&s.copilot_log), "{dry}");
    assert!(s.events("old").iter().all(|e| e["pruned"].is_null() && !e["raw"].as_str().unwrap().is_empty()));

    let store_before = s.daemon.call("status", Value::Null).unwrap()["store_bytes"].as_u64().unwrap();
    let output = s.judged(&["prune", "--older-than", LATER, "--vacuum"]);
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{said}");
    assert!(said.contains(&format!("pruned {} (copilot-cli: ", s.copilot_log.display())), "{said}");
    assert!(said.contains("Their hashes and chain stay"), "{said}");
    let logged = std::fs::metadata(&s.copilot_log).unwrap().len();
    assert!(said.contains(&format!("{logged} bytes")), "{said}");

    let events = s.events("old");
    assert!(events.iter().all(|e| e["pruned"] == true && e["raw"] == ""), "no byte is served");
    let status = s.daemon.call("status", Value::Null).unwrap();
    assert!(status["pruned_lines"].as_u64().unwrap() >= events.len() as u64, "{status}");
    let store_after = status["store_bytes"].as_u64().unwrap();
    assert!(said.contains(&format!("The store was rewritten without the freed pages: {store_after} bytes")), "{said}");
    assert!(store_after < store_before, "--vacuum gave the pruned bytes back: {store_before} -> {store_after}");
    // What the summary came from cannot be read again; rebuilding keeps it.
    s.judged(&["rebuild"]);
    let after = s.session("old");
    for field in ["session_id", "cwd", "events", "last_event_time"] {
        assert_eq!(after[field], before[field], "{field}");
    }
    assert_eq!(after["pruned_lines"], before["events"]);

    let intact = s.judged(&["verify-log", "old"]);
    assert!(intact.status.success(), "the pruned log still checks: {}", String::from_utf8_lossy(&intact.stdout));
    let mut bytes = std::fs::read(&s.copilot_log).unwrap();
    let at = bytes.windows(6).position(|w| w == b"GitHub").expect("a byte to change");
    bytes[at] = b'g';
    std::fs::write(&s.copilot_log, bytes).unwrap();
    let rewritten = s.judged(&["verify-log", "old"]);
    assert!(!rewritten.status.success(), "a rewrite inside the pruned lines is caught");
    let report: Value = serde_json::from_slice(&rewritten.stdout).unwrap();
    assert_eq!(report["tampered"], true, "{report}");
}

#[test]
fn a_session_a_recent_decision_names_is_kept_and_says_why() {
    let s = setup();
    let project = Path::new("/tmp/judged-fixture/claude/marker-challenge/project");
    let payload = json!({
        "session_id": CLAUDE_SESSION, "transcript_path": s.claude_log, "cwd": project,
        "hook_event_name": "TaskCompleted", "task_id": "1", "task_subject": "Implement the parser",
    });
    judge_hook(&s.home, payload.to_string().as_bytes(), &[]);
    let decided = s.daemon.call("decisions", Value::Null).unwrap();
    assert_eq!(decided[0]["session_id"], CLAUDE_SESSION, "{decided}");

    // An hour ago: after both logs' last records, before the decision.
    let done = s.prune("1h", &[]);
    assert_eq!(paths(&done["pruned"]), std::slice::from_ref(&s.copilot_log), "{done}");
    assert_eq!(paths(&done["kept"]), std::slice::from_ref(&s.claude_log), "{done}");
    assert_eq!(done["kept"][0]["why"], "a gate decision since the cutoff is about this session");
    assert!(s.events(CLAUDE_SESSION).iter().all(|e| e["pruned"].is_null()), "its bytes stay");
    assert_eq!(s.prune("1h", &[])["pruned"], json!([]), "pruning again finds nothing more");
}

#[test]
fn a_bad_cutoff_is_refused_with_the_option_and_the_forms_it_takes() {
    let s = setup();
    let output = s.judged(&["prune", "--older-than", "ninety days"]);
    assert_eq!(output.status.code(), Some(2), "a usage error");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains(
            "invalid value 'ninety days' for '--older-than <OLDER_THAN>': `ninety days` is neither a duration (7d, \
             24h, 30m) nor an ISO-8601 time"
        ),
        "{said}"
    );
    assert!(s.events("old").iter().all(|e| e["pruned"].is_null()), "nothing was pruned");
}

/// `[store] keep_days` prunes on start what has been idle longer (the fixtures' records
/// are from 2026-11-30), as `judged prune` would, and journals it.
#[test]
fn keep_days_prunes_idle_sessions_on_start() {
    let s = setup_with("[store]\nkeep_days = 1\n");
    assert_eq!(s.session("old")["pruned_lines"], s.session("old")["events"]);
    let status = s.daemon.call("status", Value::Null).unwrap();
    assert!(status["pruned_lines"].as_u64().unwrap() > 0, "{status}");
    assert_eq!(s.prune("1d", &[])["pruned"], json!([]), "nothing was left for judged prune");
}

#[test]
fn keep_days_of_zero_is_refused_at_start_with_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[store]\nkeep_days = 0\n").unwrap();
    let output = Command::new(bin("judged"))
        .args(["start", "--foreground"])
        .env("JUDGED_HOME", dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("judged runs");
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(said.contains("config.toml") && said.contains("keep_days") && said.contains("nonzero"), "{said}");
}

/// `kill -9` while `judged prune` works through many sessions, at a few moments: after a
/// restart each session is pruned whole or not at all (its bytes and its `lines_pruned`
/// record commit together), the store's chains verify, and every log still checks.
#[test]
fn a_kill_during_prune_loses_nothing_that_was_kept() {
    const SESSIONS: usize = 40;
    for delay_ms in [0, 15, 40] {
        let dir = tempfile::tempdir().expect("temp dir");
        let (home, root) = (dir.path().join("home"), dir.path().join("copilot"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.toml"), "auto_start = false\n").unwrap();
        for n in 0..SESSIONS {
            let log = root.join(format!("s{n:02}/events.jsonl"));
            std::fs::create_dir_all(log.parent().unwrap()).unwrap();
            std::fs::copy(workspace().join(COPILOT_LOG), &log).unwrap();
        }
        let daemon = Daemon::start(&home, &[&root], &[]);
        let pruning = Command::new(bin("judged"))
            .args(["prune", "--older-than", LATER])
            .env("JUDGED_HOME", &home)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("judged prune starts");
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        judged_tests::kill_9(daemon.pid());
        let mut pruning = pruning;
        pruning.wait().expect("judged prune ends once its daemon is gone");
        drop(daemon);

        let daemon = Daemon::start(&home, &[&root], &[]);
        let status = daemon.call("status", Value::Null).unwrap();
        let sessions = daemon.call("sessions", Value::Null).unwrap();
        for session in sessions.as_array().unwrap() {
            let pruned = session["pruned_lines"].as_u64().unwrap_or(0);
            assert!(pruned == 0 || Some(pruned) == session["events"].as_u64(), "pruned by halves: {session}");
            // The bytes went if and only if the record of it is there.
            let events = daemon.call("events", json!({"session": session["session"], "from": 1, "limit": 10_000}));
            let events = events.unwrap();
            let gone = events.as_array().unwrap().iter().filter(|e| e["pruned"] == true).count() as u64;
            assert_eq!(gone, pruned, "{session}");
            assert_eq!(session["tampered"], false, "{session}");
        }
        let journal = daemon.call("decisions", Value::Null).unwrap();
        assert_eq!(journal, json!([]), "no decision was made up");
        let check = Command::new(bin("judged"))
            .args(["verify-log", "s00"])
            .env("JUDGED_HOME", &home)
            .output()
            .expect("verify-log runs");
        assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stdout));
        assert!(status["files"].as_u64() == Some(SESSIONS as u64), "{status}");
        assert_eq!(status["store_integrity_failures"], 0, "the chains verified on restart: {status}");
    }
}
