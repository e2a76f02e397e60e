//! Gemini CLI as a witnessed host (issue 24): the daemon tails
//! `$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-*.jsonl` like the other hosts,
//! from a root that may appear only when Gemini CLI is first used, over the recordings the
//! real client wrote (fixtures/gemini-cli-0.61.0).

use judged_tests::{Daemon, workspace};
use serde_json::Value;
use std::fs;
use std::io::Write;
use std::time::Duration;

const RECORDING: &str = "fixtures/gemini-cli-0.61.0/after-agent/session-2026-12-01T21-30-56e11579.jsonl";
const SESSION: &str = "56e11579-0679-4ff5-adea-d61481a8c547";

/// [`judged_tests::eventually`], with this file's patience.
fn eventually<T>(what: &str, probe: impl FnMut() -> Option<T>) -> T {
    judged_tests::eventually(what, Duration::from_secs(15), probe)
}

#[test]
fn a_gemini_recording_is_witnessed_appended_to_and_guarded_like_the_other_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let (home, root) = (dir.path().join("home"), dir.path().join("gemini-home/.gemini/tmp"));
    fs::create_dir_all(&home).unwrap();
    fs::write(home.join("config.toml"), format!("gemini_roots = [\"{}\"]\n", root.display())).unwrap();
    // The root does not exist yet: Gemini CLI has not been used.
    let daemon = Daemon::start(&home, &[&dir.path().join("copilot")], &[&dir.path().join("claude")]);
    assert_eq!(daemon.call("status", Value::Null).unwrap()["gemini_roots"][0], root.display().to_string());

    let chats = root.join("project/chats");
    fs::create_dir_all(&chats).unwrap();
    let log = chats.join(RECORDING.rsplit('/').next().unwrap());
    let text = fs::read_to_string(workspace().join(RECORDING)).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    fs::write(&log, lines[..4].concat()).unwrap();
    let session =
        eventually("the recording to be witnessed", || daemon.session_of("gemini-cli").filter(|s| s["events"] == 4));
    assert_eq!(session["session_id"], SESSION);
    assert_eq!(session["cwd"], "/tmp/judged-fixture/gemini/after-agent/project");

    // Lines the client appends are ingested and chained; every line of the run is stored.
    fs::OpenOptions::new().append(true).open(&log).unwrap().write_all(lines[4..].concat().as_bytes()).unwrap();
    let session = eventually("the rest", || daemon.session_of("gemini-cli").filter(|s| s["events"] == lines.len()));
    assert_eq!(session["tampered"], false);
    let checked = daemon.call("verify_log", serde_json::json!({"session": SESSION})).unwrap();
    assert_eq!((checked["tampered"].as_bool(), checked["lines"].as_u64()), (Some(false), Some(lines.len() as u64)));

    // A rewrite inside its history is caught, as for the other hosts: here, the gate's
    // reason the recording holds as the agent's next prompt, taken out.
    let text = fs::read_to_string(&log).unwrap().replacen("no verified cross-family review", "a verified review", 1);
    fs::write(&log, text).unwrap();
    let checked = daemon.call("verify_log", serde_json::json!({"session": SESSION})).unwrap();
    assert_eq!(checked["tampered"], true, "{checked}");
    let session =
        eventually("the tamper to be recorded", || daemon.session_of("gemini-cli").filter(|s| s["tampered"] == true));
    assert_eq!(session["session_id"], SESSION);
}

/// A block the agent asks for itself (its hook gone, `judge-hook` piped its own
/// `AfterAgent`) says nothing of its end: only a block whose reason the recording shows
/// it went on with excuses an answer, and this end is on the record (a review helper hid
/// one so).
#[test]
fn a_block_the_agent_asked_for_itself_does_not_hide_its_end() {
    const DONE: &str = "fixtures/gemini-cli-0.61.0/done/session-2026-12-01T21-30-2fc163c2.jsonl";
    let dir = tempfile::tempdir().unwrap();
    let (home, root, project) =
        (dir.path().join("home"), dir.path().join("gemini-home/.gemini/tmp"), dir.path().join("project"));
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&project).unwrap();
    let config =
        format!("auto_start = false\ngemini_roots = [\"{}\"]\n[gate]\nanswer_quiet_seconds = 1\n", root.display());
    fs::write(home.join("config.toml"), config).unwrap();
    let daemon = Daemon::start(&home, &[&dir.path().join("copilot")], &[&dir.path().join("claude")]);
    let chats = root.join("project/chats");
    fs::create_dir_all(&chats).unwrap();
    let text = fs::read_to_string(workspace().join(DONE)).unwrap();
    let text = text.replace("/tmp/judged-fixture/gemini/done/project", project.to_str().unwrap());
    // Recorded now, after the daemon began: an end from before it is history, no bypass.
    std::thread::sleep(Duration::from_secs(2));
    let text = judged_tests::timestamps::shift_timestamps(text.as_bytes(), chrono::Duration::milliseconds(500));
    fs::write(chats.join(DONE.rsplit('/').next().unwrap()), text).unwrap();
    eventually("the recording to be witnessed", || daemon.session_of("gemini-cli"));
    let payload = serde_json::json!({"hook_event_name": "AfterAgent", "session_id": "2fc163c2-c317-4fbd-9391-652a048cebc2",
        "cwd": project, "stop_hook_active": false, "prompt_response": "Done: the cart now rounds half up."});
    let asked = judged_tests::judge_hook(&home, payload.to_string().as_bytes(), &["--host", "gemini-cli"]);
    assert_eq!(asked.status.code(), Some(2), "the gate blocks: {asked:?}");
    let status = eventually("the end to be on the record", || {
        Some(daemon.call("status", Value::Null).unwrap()).filter(|s| s["completions_bypassed"] == 1)
    });
    assert_eq!(status["completions_bypassed"], 1, "{status}");
}
