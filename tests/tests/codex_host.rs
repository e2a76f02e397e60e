//! Codex CLI as a third witnessed host (issue 14): the daemon tails
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` like the other two hosts, from a root
//! that may appear only when Codex is first used.

use judged_tests::{Daemon, workspace};
use serde_json::Value;
use std::fs;
use std::io::Write;
use std::time::Duration;

/// A rollout written by the real Codex CLI 0.169.0 (docs/spec/host-formats.md §G).
const ROLLOUT: &str = "jury/tests/samples/codex-rollout_echo_model.jsonl";
const THREAD: &str = "01a22f91-020c-7062-a834-09c37e8bcd24";

fn rollout_lines() -> Vec<String> {
    let text = fs::read_to_string(workspace().join(ROLLOUT)).unwrap();
    text.split_inclusive('\n').map(str::to_owned).collect()
}

/// [`judged_tests::eventually`], with this file's patience.
fn eventually<T>(what: &str, probe: impl FnMut() -> Option<T>) -> T {
    judged_tests::eventually(what, Duration::from_secs(15), probe)
}

#[test]
fn a_codex_rollout_is_witnessed_appended_to_and_guarded_like_the_other_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let (home, codex) = (dir.path().join("home"), dir.path().join("codex/sessions"));
    fs::create_dir_all(&home).unwrap();
    fs::write(home.join("config.toml"), format!("codex_roots = [\"{}\"]\n", codex.display())).unwrap();
    // The root does not exist yet: Codex has not been used.
    let daemon = Daemon::start(&home, &[&dir.path().join("copilot")], &[&dir.path().join("claude")]);
    assert_eq!(daemon.call("status", Value::Null).unwrap()["codex_roots"][0], codex.display().to_string());

    let day = codex.join("2026/12/01");
    fs::create_dir_all(&day).unwrap();
    let log = day.join(format!("rollout-2026-12-01T03-06-02-{THREAD}.jsonl"));
    let lines = rollout_lines();
    fs::write(&log, lines[..5].concat()).unwrap();
    let session =
        eventually("the rollout to be witnessed", || daemon.session_of("codex-cli").filter(|s| s["events"] == 5));
    assert_eq!(session["session_id"], THREAD);
    assert_eq!(session["cwd"], "/home/dev/probe/runs/c1_text/work");
    assert_eq!(session["session"], format!("rollout-2026-12-01T03-06-02-{THREAD}"));

    // Lines Codex appends are ingested; every line of the run is stored.
    fs::OpenOptions::new().append(true).open(&log).unwrap().write_all(lines[5..].concat().as_bytes()).unwrap();
    let session = eventually("the rest", || daemon.session_of("codex-cli").filter(|s| s["events"] == lines.len()));
    assert_eq!(session["tampered"], false);
    let checked = daemon.call("verify_log", serde_json::json!({"session": THREAD})).unwrap();
    assert_eq!((checked["tampered"].as_bool(), checked["lines"].as_u64()), (Some(false), Some(lines.len() as u64)));

    // A rewrite inside its history is caught, as for the other hosts.
    let text = fs::read_to_string(&log).unwrap().replacen("juror-model-a", "juror-model-b", 1);
    fs::write(&log, text).unwrap();
    let checked = daemon.call("verify_log", serde_json::json!({"session": THREAD})).unwrap();
    assert_eq!(checked["tampered"], true, "{checked}");
}
