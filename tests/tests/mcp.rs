//! `judged mcp` driven as a host's MCP client drives it: newline-delimited JSON-RPC on its
//! stdin and stdout, against a real daemon on a temp `JUDGED_HOME`, with
//! `preset = "command"` jurors from `fixtures/jurors/`. The jurors answer what a file
//! says, read at each run, so a test can make a new jury's verdict differ from the
//! review's and tell which of the two the gate used.

use judged_tests::{Daemon, bin, command_jury, judge_hook, juror};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const SESSION: &str = "5d1c2b3a-7e8f-4a90-b1c2-d3e4f5a6b7c8";

/// A `[jury]` of three command jurors of three families, each answering what `verdict`
/// says.
fn jury(verdict: &Path) -> String {
    let answers = || juror("from-file.sh", &[&verdict.display().to_string(), "{model}"]);
    command_jury(
        [("small-openai", "gpt-5.4-mini", answers(), ""), ("small-google", "gemini-3-flash", answers(), "")],
        answers(),
        30,
    )
}

/// Fields drop in order: the server and the daemon stop before the directory goes.
struct Setup {
    mcp: Mcp,
    daemon: Daemon,
    home: PathBuf,
    project: PathBuf,
    verdict: PathBuf,
    _dir: tempfile::TempDir,
}

/// A daemon under `policy = "panel"` with the jury above, a git repository with a change
/// as the project, and `judged mcp` started in it, initialized.
fn setup(verdict: &str) -> Setup {
    let dir = tempfile::tempdir().expect("temp dir");
    let (home, project, verdict_file) =
        (dir.path().join("home"), dir.path().join("project"), dir.path().join("verdict"));
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(&verdict_file, verdict).unwrap();
    std::fs::write(home.join("config.toml"), format!("[gate]\npolicy = \"panel\"\n\n{}", jury(&verdict_file))).unwrap();
    git(&project, &["init", "-q"]);
    std::fs::write(project.join("cart.rs"), "fn total() -> u32 { 1 }\n").unwrap();
    git(&project, &["add", "."]);
    git(&project, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
    std::fs::write(project.join("cart.rs"), "fn total() -> u32 { round_half_even(1) }\n").unwrap();
    // The author's session, as Claude Code writes it: a review counts only told its model.
    let transcripts = dir.path().join("claude/-project");
    std::fs::create_dir_all(&transcripts).unwrap();
    let record = |uuid: &str, parent: Value, kind: &str, message: Value| {
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": false, "sessionId": SESSION,
            "cwd": project, "timestamp": "2026-12-01T10:00:00.000Z", "message": message})
        .to_string()
            + "\n"
    };
    let answer =
        json!({"role": "assistant", "model": "claude-sonnet-4-6", "content": [{"type": "text", "text": "Done."}]});
    let log = record("u-0", Value::Null, "user", json!({"role": "user", "content": "Fix cart rounding"}))
        + &record("a-1", json!("u-0"), "assistant", answer);
    std::fs::write(transcripts.join(format!("{SESSION}.jsonl")), log).unwrap();
    let daemon = Daemon::start(&home, &[&dir.path().join("sessions")], &[&dir.path().join("claude")]);
    let mcp = Mcp::start(&home, &project, None);
    Setup { mcp, daemon, home, project, verdict: verdict_file, _dir: dir }
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git").arg("-C").arg(dir).args(args).status().expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// `judged mcp` on its stdio, with each line it writes read on a thread of its own.
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<Value>,
    next_id: u64,
}

impl Mcp {
    /// Started by a host that says it serves `session` (as Claude Code does), or says nothing.
    fn start(home: &Path, cwd: &Path, session: Option<&str>) -> Mcp {
        Mcp::spawn(Command::new(bin("judged")), home, cwd, session)
    }

    fn spawn(mut command: Command, home: &Path, cwd: &Path, session: Option<&str>) -> Mcp {
        match session {
            Some(id) => command.env("CLAUDE_CODE_SESSION_ID", id),
            None => command.env_remove("CLAUDE_CODE_SESSION_ID"),
        };
        let mut child = command
            .arg("mcp")
            .env("JUDGED_HOME", home)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("judged mcp starts");
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let message = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"));
                if send.send(message).is_err() {
                    return;
                }
            }
        });
        let mut mcp = Mcp { child, stdin, lines, next_id: 1 };
        let params = json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "claude-code", "version": "2.1.328"}});
        let (initialized, _) = mcp.request("initialize", params);
        assert_eq!(initialized["serverInfo"]["name"], "judged", "{initialized}");
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("judged mcp reads its stdin");
    }

    /// One request; its result, and the notifications that came before it.
    fn request(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut notifications = Vec::new();
        loop {
            let message = self.lines.recv_timeout(Duration::from_secs(60)).expect("judged mcp answers");
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{method} refused: {message}");
                return (message["result"].clone(), notifications);
            }
            notifications.push(message);
        }
    }

    /// `tools/call`, with a progress token; the result and the progress notifications.
    fn call(&mut self, tool: &str, arguments: Value) -> (Value, Vec<Value>) {
        let params = json!({"name": tool, "arguments": arguments, "_meta": {"progressToken": "p1"}});
        let (result, notifications) = self.request("tools/call", params);
        let progress = notifications.into_iter().filter(|n| n["method"] == "notifications/progress").collect();
        (result, progress)
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn review_args(s: &Setup) -> Value {
    json!({
        "cwd": s.project, "task": "Fix cart rounding", "description": "Totals must round half-even",
        "session_id": SESSION,
    })
}

fn task_completed(s: &Setup, task_id: &str) -> Output {
    let payload = json!({
        "session_id": SESSION, "cwd": s.project, "hook_event_name": "TaskCompleted",
        "task_id": task_id, "task_subject": "Fix cart rounding", "task_description": "Totals must round half-even",
    });
    judge_hook(&s.home, payload.to_string().as_bytes(), &[])
}

fn decisions(daemon: &Daemon) -> Vec<Value> {
    daemon.call("decisions", Value::Null).expect("decisions").as_array().cloned().unwrap_or_default()
}

fn journal_events(daemon: &Daemon) -> u64 {
    daemon.call("status", Value::Null).expect("status")["journal_events"].as_u64().unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn tools_list_names_each_tool_with_its_input_schema() {
    let mut s = setup("pass");
    let (listed, _) = s.mcp.request("tools/list", json!({}));
    let tools = listed["tools"].as_array().expect("a tool list");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["challenge", "gate_status", "marker", "review", "verify"], "{listed}");
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()), "{tool}");
    }
    let review = &tools[3]["inputSchema"];
    assert_eq!(review["required"], json!(["task"]), "{review}");
    for field in ["cwd", "task", "description", "file", "rubric", "persona", "session_id"] {
        assert!(review["properties"].get(field).is_some(), "review takes `{field}`: {review}");
    }
}

/// A passing review counts for the task completed on the same tree (the jury would now
/// fail, so an allow can only come from the review), and not once a file changed.
#[test]
fn a_passing_review_allows_the_task_on_the_same_tree_and_not_after_a_change() {
    let mut s = setup("pass");
    let before = journal_events(&s.daemon);
    let (result, progress) = s.mcp.call("review", review_args(&s));
    let review = &result["structuredContent"];
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!((review["verdict"].as_str(), review["degraded"].as_bool()), (Some("pass"), Some(false)), "{review}");
    let jurors = review["jurors"].as_array().unwrap();
    let seen: Vec<(&str, &str, &str)> = jurors
        .iter()
        .map(|j| {
            (
                j["model_requested"].as_str().unwrap(),
                j["model_reported"].as_str().unwrap(),
                j["family"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, [("gpt-5.4-mini", "gpt-5.4-mini", "openai"), ("gemini-3-flash", "gemini-3-flash", "google")]);
    assert_eq!((review["gate"]["counted"].as_bool(), review["gate"]["allows"].as_bool()), (Some(true), Some(true)));
    let said = text(&result);
    for shown in [
        "Verdict: pass",
        "small-openai (stage_1): gpt-5.4-mini requested, gpt-5.4-mini answered (openai)",
        "Gate: counted, allows.",
    ] {
        assert!(said.contains(shown), "`{shown}` not in: {said}");
    }
    // Each juror's start and end, as progress on the call's token.
    let steps: Vec<&str> = progress.iter().filter_map(|p| p["params"]["message"].as_str()).collect();
    assert!(progress.iter().all(|p| p["params"]["progressToken"] == "p1"), "{progress:?}");
    assert_eq!(steps.iter().filter(|s| s.contains(" started (one)")).count(), 2, "{steps:?}");
    assert_eq!(steps.iter().filter(|s| s.contains(" finished: pass")).count(), 2, "{steps:?}");
    // Journaled: both jurors' runs and the packet.
    assert_eq!(journal_events(&s.daemon) - before, 3);

    std::fs::write(&s.verdict, "fail\nwould fail now").unwrap();
    let output = task_completed(&s, "7");
    assert_eq!(output.status.code(), Some(0), "the review counts: {}", stderr(&output));
    let recorded = decisions(&s.daemon);
    assert_eq!((recorded[0]["reason"].as_str(), &recorded[0]["panel"]), (Some("review verdict"), &review["key"]));

    std::fs::write(s.project.join("cart.rs"), "fn total() -> u32 { 2 }\n").unwrap();
    let output = task_completed(&s, "7");
    assert_eq!(output.status.code(), Some(2), "a changed tree is judged anew");
    assert!(stderr(&output).contains("  - would fail now"), "{}", stderr(&output));
    assert_eq!(decisions(&s.daemon)[1]["reason"], "jury did not pass");
}

/// A failing review makes the task completed on its tree block with the jurors' flags,
/// though a new jury would pass it.
#[test]
fn a_failing_review_blocks_the_task_with_the_jurors_flags() {
    let mut s = setup("fail\nrounding is still half-up");
    let (result, _) = s.mcp.call("review", review_args(&s));
    let review = &result["structuredContent"];
    assert_eq!(review["verdict"], "fail", "{review}");
    assert_eq!((review["gate"]["counted"].as_bool(), review["gate"]["allows"].as_bool()), (Some(true), Some(false)));
    assert!(text(&result).contains("Flags:\n  - rounding is still half-up"), "{}", text(&result));

    std::fs::write(&s.verdict, "pass").unwrap();
    let output = task_completed(&s, "7");
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("was not passed by the cross-family jury")
            && message.contains("  - rounding is still half-up"),
        "{message}"
    );
    assert_eq!(decisions(&s.daemon)[0]["reason"], "review verdict");
    // Asked again on the same tree, the review is the recorded one, not a new jury's.
    let (again, _) = s.mcp.call("review", review_args(&s));
    assert_eq!(
        (again["structuredContent"]["verdict"].as_str(), again["structuredContent"]["from_record"].as_bool()),
        (Some("fail"), Some(true))
    );
}

/// The gate counts a review told the author it reads from the task's session: one that
/// names no session, from a host that says none, says it will not count and why; one
/// from a host that says its session counts without the agent naming it.
#[test]
fn a_review_that_knows_no_session_says_it_will_not_count_and_the_hosts_session_is_used() {
    let mut s = setup("pass");
    let mut args = review_args(&s);
    args.as_object_mut().unwrap().remove("session_id");
    let (result, _) = s.mcp.call("review", args.clone());
    let gate = &result["structuredContent"]["gate"];
    assert_eq!((gate["counted"].as_bool(), gate["allows"].as_bool()), (Some(false), Some(false)), "{result}");
    let why = gate["why"].as_str().unwrap();
    assert!(why.contains("no session_id was given") && why.contains("pass your session's id as session_id"), "{why}");

    // A made-up session names no author either: its jury's tiebreaker could be of the
    // author's own family, and it is not counted (nor attested).
    let mut made_up = args.clone();
    made_up["session_id"] = "00000000-0000-4000-8000-000000000000".into();
    let (result, _) = s.mcp.call("review", made_up);
    let gate = &result["structuredContent"]["gate"];
    assert_eq!((gate["counted"].as_bool(), gate["allows"].as_bool()), (Some(false), Some(false)), "{result}");
    let why = gate["why"].as_str().unwrap();
    assert!(why.contains("judged witnesses no session `00000000-0000-4000-8000-000000000000`"), "{why}");

    let mut told = Mcp::start(&s.home, &s.project, Some(SESSION));
    let (result, _) = told.call("review", args);
    let gate = &result["structuredContent"]["gate"];
    assert_eq!((gate["counted"].as_bool(), gate["allows"].as_bool()), (Some(true), Some(true)), "{result}");
    let output = task_completed(&s, "7");
    assert_eq!(output.status.code(), Some(0), "the review counts: {}", stderr(&output));
    assert_eq!(decisions(&s.daemon)[0]["reason"], "review verdict");
}

#[test]
fn gate_status_says_what_is_missing_and_then_that_the_review_counts() {
    let mut s = setup("pass");
    let args = json!({"cwd": s.project, "session_id": SESSION});
    let (before, _) = s.mcp.call("gate_status", args.clone());
    let status = &before["structuredContent"];
    assert_eq!((status["policy"].as_str(), status["satisfied"].as_bool()), (Some("panel"), Some(false)), "{status}");
    assert_eq!(status["sources"], json!(["defaults", "user config [gate]"]));
    let config = &status["config"][0];
    assert!(config["path"].as_str().unwrap().ends_with("home/config.toml") && config["sha256"].is_string(), "{config}");
    let missing = status["missing"].as_str().unwrap();
    assert!(
        missing.contains("has no review of the working tree as it is now. Call judged mcp's `review` tool"),
        "{missing}"
    );
    assert!(text(&before).contains("Gate policy `panel`") && text(&before).contains("Missing:"), "{}", text(&before));

    let (reviewed, _) = s.mcp.call("review", review_args(&s));
    let (after, _) = s.mcp.call("gate_status", args);
    let status = &after["structuredContent"];
    assert_eq!((status["satisfied"].as_bool(), &status["missing"]), (Some(true), &Value::Null), "{status}");
    assert_eq!(status["review"]["key"], reviewed["structuredContent"]["key"]);
    assert!(text(&after).contains("Nothing is missing"), "{}", text(&after));
    assert!(decisions(&s.daemon).is_empty(), "gate_status decides nothing");
}

/// The round's tools answer as the commands do: `marker` prints the marker line, and a
/// `challenge` with no marker call in any session is refused with the command's words and
/// its exit code, writing nothing.
#[test]
fn the_round_tools_answer_as_judge_evidence_does() {
    let mut s = setup("pass");
    let binding = "run_20261201_a1b2c3d4_r1_review_7e91c4ab";
    let (marked, _) = s.mcp.call("marker", json!({"binding": binding}));
    assert_eq!(marked["isError"], false, "{marked}");
    let line =
        format!(r#"{{"binding": "{binding}", "schema": "aris.copilot-native.challenge/v1", "status": "marker"}}"#);
    assert!(text(&marked).starts_with(&format!("{line}\n")), "{marked}");
    let (short, _) = s.mcp.call("marker", json!({"binding": "short"}));
    assert!(text(&short).contains("--binding must be a 16..128 character stable token"), "{short}");

    let (refused, _) = s.mcp.call("challenge", json!({"binding": binding, "cwd": s.project}));
    assert_eq!(refused["isError"], true, "{refused}");
    let said = text(&refused);
    assert!(
        said.contains("binding marker is not present") && said.contains("(exit code 3 as judge-evidence)"),
        "{said}"
    );
    assert!(!s.project.join("review.challenge.json").exists(), "nothing was written");
}

/// A review asked while the session's log names no model yet (the host writes the record
/// of the call a moment after the call starts) waits for it, so that it is keyed by the
/// author the gate will read, and the gate counts it.
#[test]
fn a_review_waits_for_the_sessions_model_and_the_gate_counts_it() {
    let mut s = setup("pass");
    let session = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b";
    let transcripts = s.home.parent().unwrap().join("claude").join("-project");
    std::fs::create_dir_all(&transcripts).unwrap();
    let log = transcripts.join(format!("{session}.jsonl"));
    let record = |uuid: &str, parent: Value, kind: &str, message: Value| {
        let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
        json!({"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": false, "sessionId": session,
            "cwd": s.project, "timestamp": now, "message": message})
        .to_string()
            + "\n"
    };
    std::fs::write(&log, record("u-0", Value::Null, "user", json!({"role": "user", "content": "Fix cart rounding"})))
        .unwrap();
    let answer = record(
        "a-1",
        json!("u-0"),
        "assistant",
        json!({"role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "Reviewing."}]}),
    );
    let late = log.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        std::fs::OpenOptions::new().append(true).open(&late).unwrap().write_all(answer.as_bytes()).unwrap();
    });
    let mut args = review_args(&s);
    args["session_id"] = session.into();
    let (result, _) = s.mcp.call("review", args);
    writer.join().unwrap();
    let gate = &result["structuredContent"]["gate"];
    assert_eq!((gate["counted"].as_bool(), gate["allows"].as_bool()), (Some(true), Some(true)), "{result}");
    let payload = json!({
        "session_id": session, "cwd": s.project, "hook_event_name": "TaskCompleted", "task_id": "7",
        "task_subject": "Fix cart rounding", "task_description": "Totals must round half-even",
    });
    let output = judge_hook(&s.home, payload.to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(decisions(&s.daemon)[0]["reason"], "review verdict", "the gate found the review by its author");
}

/// Issue 31: every path a tool takes stays in the project once symlinks are resolved. A
/// file outside it, or a symlink in it that leads out, is never read (nor shown to the
/// jurors), and an artifact is never written outside it; each refusal names the path and
/// says to name one inside the project. A file of the project is still reviewed.
#[test]
fn a_path_outside_the_project_is_neither_read_nor_written() {
    let mut s = setup("pass");
    let outside = s.project.parent().unwrap().to_path_buf();
    std::fs::write(outside.join("secret.txt"), "PRIVATE KEY\n").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), s.project.join("leak")).unwrap();
    let before = journal_events(&s.daemon);
    let refused = |result: &Value, given: &str| {
        assert_eq!(result["isError"], true, "{result}");
        let said = text(result);
        assert!(
            said.contains(&format!("`{given}` leads outside the project"))
                && said.contains("name a path inside the project, relative to it"),
            "{said}"
        );
    };
    let absolute = outside.join("secret.txt").display().to_string();
    for given in ["../secret.txt", "leak", absolute.as_str()] {
        let mut args = review_args(&s);
        args["file"] = given.into();
        let (result, _) = s.mcp.call("review", args);
        refused(&result, given);
    }
    assert_eq!(journal_events(&s.daemon), before, "no jury was shown the file");

    let binding = "run_20261201_a1b2c3d4_r1_review_7e91c4ab";
    let escape = "../../escaped/home/.bashrc";
    let (result, _) = s.mcp.call("challenge", json!({"binding": binding, "cwd": s.project, "output": escape}));
    refused(&result, escape);
    std::fs::write(s.project.join("c.json"), "{}").unwrap();
    let (result, _) = s.mcp.call("verify", json!({"cwd": s.project, "challenge": "../secret.txt"}));
    refused(&result, "../secret.txt");
    for (field, given) in [("output", "../e.json"), ("response_output", "../../r.md")] {
        let mut args = json!({"cwd": s.project, "challenge": "c.json"});
        args[field] = given.into();
        let (result, _) = s.mcp.call("verify", args);
        refused(&result, given);
    }
    let top = outside.parent().unwrap();
    assert!(!top.join("escaped").exists() && !outside.join("e.json").exists() && !top.join("r.md").exists());

    // A cwd of the caller's choosing does not move the project: a file of the user's home
    // is not "inside the project" because the caller named the home as its cwd.
    let served = s.project.canonicalize().unwrap();
    let elsewhere = outside.display().to_string();
    let outside_cwd = |result: &Value| {
        assert_eq!(result["isError"], true, "{result}");
        let said = text(result);
        let words = format!("cwd `{elsewhere}` is outside the project this judged mcp serves ({})", served.display());
        assert!(said.contains(&words) && said.contains("leave cwd out, or name a directory inside it"), "{said}");
    };
    let mut args = review_args(&s);
    (args["cwd"], args["file"]) = (elsewhere.as_str().into(), "secret.txt".into());
    outside_cwd(&s.mcp.call("review", args).0);
    let mut args = review_args(&s);
    args["cwd"] = elsewhere.as_str().into();
    outside_cwd(&s.mcp.call("review", args).0);
    assert_eq!(journal_events(&s.daemon), before, "no jury was shown the file");
    std::fs::write(outside.join("c.json"), "{}").unwrap();
    let (result, _) =
        s.mcp.call("verify", json!({"cwd": elsewhere, "challenge": "c.json", "response_output": "planted.md"}));
    outside_cwd(&result);
    assert!(!outside.join("planted.md").exists() && !outside.join("review.evidence.json").exists());

    let mut args = review_args(&s);
    args["file"] = "cart.rs".into();
    let (result, _) = s.mcp.call("review", args);
    assert_eq!(result["isError"], false, "a file of the project is reviewed: {result}");
}

/// Issue 31: a file to review is a regular file of bounded size: a FIFO (which would block
/// its reader) or a directory is refused at once, saying what it is.
#[test]
fn a_file_to_review_that_is_no_regular_file_is_refused_at_once() {
    let mut s = setup("pass");
    let fifo = s.project.join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    std::fs::create_dir_all(s.project.join("docs")).unwrap();
    for (given, kind) in [("pipe", "a FIFO, socket or device"), ("docs", "a directory")] {
        let mut args = review_args(&s);
        args["file"] = given.into();
        let (result, _) = s.mcp.call("review", args);
        assert_eq!(result["isError"], true, "{result}");
        let said = text(&result);
        assert!(said.contains(&format!("`{given}` is {kind}, not a regular file")), "{said}");
    }
}

/// Issue 31: an argument no real call holds that much of (a 10 MB cwd, a session id of a
/// megabyte) is refused at once, naming the field, not answered at the daemon's idle limit.
#[test]
fn an_oversized_argument_is_refused_at_once_naming_it() {
    let mut s = setup("pass");
    let started = std::time::Instant::now();
    let (result, _) = s.mcp.call("gate_status", json!({"cwd": "/".repeat(10 * 1024 * 1024), "session_id": SESSION}));
    assert!(started.elapsed() < Duration::from_secs(10), "answered after {:?}", started.elapsed());
    assert_eq!(result["isError"], true, "{}", text(&result).len());
    let said = text(&result);
    assert!(
        said.contains("`cwd` is 10485760 bytes, more than the 4096 a path may be"),
        "{}",
        &said[..said.len().min(300)]
    );
    let mut args = review_args(&s);
    args["session_id"] = "s".repeat(1024 * 1024).into();
    let (result, _) = s.mcp.call("review", args);
    let said = text(&result);
    assert!(said.contains("`session_id` is 1048576 bytes, more than the 256"), "{}", &said[..said.len().min(300)]);
    let (result, _) = s.mcp.call(
        "challenge",
        json!({"binding": "run_20261201_a1b2c3d4_r1_review_7e91c4ab", "cwd": "/".repeat(10 * 1024 * 1024)}),
    );
    let said = text(&result);
    assert!(said.contains("`cwd` is 10485760 bytes"), "{}", &said[..said.len().min(300)]);
}

/// A host started in the user's home directory would make every file of the user's a
/// project file: a key in a dotfile shown to the jurors, a round's artifact written over
/// one. The round tools refuse such a project, saying where to start the host instead.
#[test]
fn the_home_directory_is_no_project_a_tool_reads_or_writes_in() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::write(home.join(".codex/auth.json"), "{\"OPENAI_API_KEY\": \"sk-secret\"}").unwrap();
    let mut command = Command::new(bin("judged"));
    command.env("HOME", &home);
    let mut mcp = Mcp::spawn(command, &dir.path().join("judged"), &home, None);
    let refused = |result: &Value| {
        assert_eq!(result["isError"], true, "{result}");
        let said = text(result);
        assert!(!said.contains("sk-secret"), "{said}");
        assert!(
            said.contains("which holds your home directory")
                && said.contains("start your host in the project's directory"),
            "{said}"
        );
    };
    refused(&mcp.call("review", json!({"task": "Fix it", "file": ".codex/auth.json"})).0);
    let binding = "run_20261201_a1b2c3d4_r1_review_7e91c4ab";
    refused(&mcp.call("challenge", json!({"binding": binding, "output": ".bashrc"})).0);
    assert!(!home.join(".bashrc").exists());
}
