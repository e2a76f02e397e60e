//! End to end through the real clients: Copilot CLI and Claude Code (the versions pinned
//! in tests/hosts/versions.env) run offline against the scripted model server, and the
//! scripted agent calls the real `judge-evidence` / the real `judge-hook` as tool calls
//! and hooks. Each test skips with `SKIP: …` when the clients cannot be installed, and
//! fails instead when `CI` is set.

use judged_tests::hosts::{self, Host, Lab, Mode, Run};
use judged_tests::{command_jury, juror};
use serde_json::{Value, json};
use std::path::Path;

const VERIFY: &str = "judge-evidence verify";

fn stdout_json(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// `judge-evidence validate --evidence aris-evidence.json` in the run's project.
fn validate(lab: &Lab, run: &Run) -> std::process::Output {
    lab.judge_evidence(&["validate", "--evidence", "aris-evidence.json"], &run.project())
}

/// A Copilot cross-family round whose verify exited 0; returns the run and its evidence.
fn verified_copilot_round(lab: &Lab) -> (Run, Value) {
    let run = lab.run(Host::Copilot, "copilot-cross-family-ok");
    let records = run.records();
    assert_eq!(
        hosts::copilot_exit_code(&records, VERIFY),
        0,
        "verify failed inside the client: {}",
        hosts::copilot_completion(&records, VERIFY)
    );
    let evidence = hosts::read_json(&run.project().join("aris-evidence.json"));
    (run, evidence)
}

// ---------------------------------------------------------------- Copilot: the happy path

fn copilot_cross_family_ok(mode: Mode) {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, mode);
    let (run, evidence) = verified_copilot_round(&lab);

    assert_eq!(evidence["status"], "verified", "{evidence}");
    assert_eq!(evidence["host"], "copilot-cli");
    assert_eq!(evidence["executor_model"], "claude-sonnet-4.6");
    assert_eq!(evidence["executor_family"], "anthropic");
    assert_eq!(evidence["reviewer_model"], "gpt-5.4");
    assert_eq!(evidence["reviewer_family"], "openai");
    assert_eq!(evidence["agent_name"], "rubber-duck");
    assert_eq!(evidence["session_events"], run.log().to_string_lossy().as_ref());
    assert_eq!(evidence.get("witness").is_some(), mode == Mode::Daemon, "witness only in daemon mode: {evidence}");
    let response = std::fs::read_to_string(run.project().join("aris-response.md")).expect("response written");
    assert!(response.contains("Score: 8/10"), "{response}");

    let output = validate(&lab, &run);
    assert!(output.status.success(), "validate failed: {}", String::from_utf8_lossy(&output.stderr));
    let shown = stdout_json(&output);
    assert_eq!(shown["witness_checked"], mode == Mode::Daemon, "{shown}");
    assert_eq!(shown["evidence_id"], evidence["evidence_id"]);
    if mode == Mode::Daemon {
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains("\"witness_checked\": true"), "{stdout}");
    }
}

#[test]
fn copilot_cross_family_ok_daemon() {
    copilot_cross_family_ok(Mode::Daemon);
}

#[test]
fn copilot_cross_family_ok_direct() {
    copilot_cross_family_ok(Mode::Direct);
}

// ------------------------------------------------------------ Copilot: refused rounds

/// The scenario's verify call, run by the client, exits `code`; nothing is accepted.
fn copilot_refused(scenario: &str, mode: Mode, code: i64) {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, mode);
    let run = lab.run(Host::Copilot, scenario);
    let records = run.records();
    let completion = hosts::copilot_completion(&records, VERIFY);
    assert_eq!(hosts::copilot_exit_code(&records, VERIFY), code, "{completion}");
    let content = completion["result"]["content"].as_str().unwrap_or_default();
    assert!(content.contains(&format!("\"exit_code\": {code}")), "the refusal JSON names the code: {content}");
    let evidence_path = run.project().join("aris-evidence.json");
    if code == 10 {
        // A policy refusal keeps the evidence of what was found, marked rejected.
        let evidence = hosts::read_json(&evidence_path);
        assert_eq!(evidence["status"], "rejected", "{evidence}");
        assert_eq!(evidence["family_relation"], "same", "{evidence}");
        assert_eq!(evidence["independence_verified"], false, "{evidence}");
        let output = validate(&lab, &run);
        assert_eq!(
            output.status.code(),
            Some(2),
            "rejected evidence must not validate: {}",
            String::from_utf8_lossy(&output.stdout)
        );
    } else {
        assert!(!evidence_path.exists(), "no evidence is written for exit {code}");
    }
}

#[test]
fn copilot_same_family_is_refused_daemon() {
    copilot_refused("copilot-same-family", Mode::Daemon, 10);
}

#[test]
fn copilot_same_family_is_refused_direct() {
    copilot_refused("copilot-same-family", Mode::Direct, 10);
}

#[test]
fn copilot_no_nonce_is_refused_daemon() {
    copilot_refused("copilot-no-nonce", Mode::Daemon, 6);
}

#[test]
fn copilot_no_nonce_is_refused_direct() {
    copilot_refused("copilot-no-nonce", Mode::Direct, 6);
}

#[test]
fn copilot_wrong_agent_type_is_refused_daemon() {
    copilot_refused("copilot-wrong-agent-type", Mode::Daemon, 6);
}

#[test]
fn copilot_wrong_agent_type_is_refused_direct() {
    copilot_refused("copilot-wrong-agent-type", Mode::Direct, 6);
}

#[test]
fn copilot_reviewer_error_is_refused_daemon() {
    copilot_refused("copilot-reviewer-error-400", Mode::Daemon, 7);
}

#[test]
fn copilot_reviewer_error_is_refused_direct() {
    copilot_refused("copilot-reviewer-error-400", Mode::Direct, 7);
}

// ------------------------------------------------------- Copilot: the log after the round

/// Change one byte inside the bound prefix (a digit of the first timestamp), keeping
/// the line valid JSON and the file the same length.
fn edit_inside_prefix(log: &Path, prefix_bytes: u64) {
    let mut bytes = std::fs::read(log).expect("log readable");
    let key = b"\"timestamp\":\"";
    let at = bytes.windows(key.len()).position(|w| w == key).expect("a timestamp") + key.len();
    let digit = at + bytes[at..].iter().position(|&b| b == b'Z').expect("a UTC timestamp") - 1;
    assert!((digit as u64) < prefix_bytes, "the edit lands inside the bound prefix");
    bytes[digit] = if bytes[digit] == b'1' { b'2' } else { b'1' };
    std::fs::write(log, bytes).expect("log writable");
}

fn copilot_tamper_inside_prefix(mode: Mode) {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, mode);
    let (run, evidence) = verified_copilot_round(&lab);
    assert!(validate(&lab, &run).status.success(), "validates before the edit");

    edit_inside_prefix(run.log(), evidence["event_prefix_bytes"].as_u64().expect("prefix length"));
    let output = validate(&lab, &run);
    assert_eq!(output.status.code(), Some(2), "stderr: {}", String::from_utf8_lossy(&output.stderr));
    let refusal: Value = serde_json::from_slice(output.stderr.trim_ascii()).expect("a JSON refusal on stderr");
    assert_eq!(refusal["exit_code"], 2, "{refusal}");

    if mode == Mode::Daemon {
        let session = evidence["session_id"].as_str().expect("session id");
        let sessions = lab.daemon().call("sessions", Value::Null).expect("sessions");
        let listed = sessions.as_array().into_iter().flatten().find(|s| s["session_id"] == session);
        assert_eq!(listed.map(|s| &s["tampered"]), Some(&json!(true)), "{sessions}");
        let checked = lab.daemon().call("verify_log", json!({"session": session})).expect("verify_log");
        assert_eq!(checked["tampered"], true, "{checked}");
    }
}

#[test]
fn copilot_log_edited_inside_prefix_fails_validation_daemon() {
    copilot_tamper_inside_prefix(Mode::Daemon);
}

#[test]
fn copilot_log_edited_inside_prefix_fails_validation_direct() {
    copilot_tamper_inside_prefix(Mode::Direct);
}

/// Append one well-formed event after everything the client wrote.
fn append_event(log: &Path) {
    let records = hosts::read_jsonl(log);
    let last = records.last().expect("a record");
    let line = json!({
        "type": "session.info",
        "data": {"infoType": "notification", "message": "appended after the bound prefix"},
        "id": "00000000-0000-4000-8000-000000000001",
        "timestamp": last["timestamp"],
        "parentId": last["id"],
    });
    let mut file = std::fs::OpenOptions::new().append(true).open(log).expect("log appendable");
    std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes()).expect("appended");
}

fn copilot_append_after_prefix(mode: Mode) {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, mode);
    let (run, evidence) = verified_copilot_round(&lab);
    append_event(run.log());
    let output = validate(&lab, &run);
    assert!(output.status.success(), "validate after an append failed: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout_json(&output)["witness_checked"], mode == Mode::Daemon);
    if mode == Mode::Daemon {
        let session = evidence["session_id"].as_str().expect("session id");
        let checked = lab.daemon().call("verify_log", json!({"session": session})).expect("verify_log");
        assert_eq!(checked["tampered"], false, "{checked}");
    }
}

#[test]
fn copilot_log_appended_after_prefix_still_validates_daemon() {
    copilot_append_after_prefix(Mode::Daemon);
}

#[test]
fn copilot_log_appended_after_prefix_still_validates_direct() {
    copilot_append_after_prefix(Mode::Direct);
}

// ------------------------------------------------------- Claude Code: marker and challenge

fn is_bash_running(needle: &'static str) -> impl Fn(&str, &Value) -> bool {
    move |name, input| name == "Bash" && input["command"].as_str().is_some_and(|c| c.contains(needle))
}

fn claude_marker_challenge(mode: Mode) {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, mode);
    let run = lab.run(Host::Claude, "claude-marker-challenge");
    let records = run.records();
    let (block, _) = hosts::claude_result(&records, is_bash_running("judge-evidence challenge"));
    assert_ne!(block["is_error"], true, "challenge failed inside the client: {block}");

    let challenge = hosts::read_json(&run.project().join("aris-challenge.json"));
    assert_eq!(challenge["status"], "bound", "{challenge}");
    assert_eq!(challenge["host"], "claude-code");
    assert_eq!(challenge["executor_model"], "claude-sonnet-4-6");
    assert_eq!(challenge["executor_family"], "anthropic");
    assert_eq!(challenge["binding"], "run_20261130_a1b2c3d4_r1_review_7e91c4ab");
    assert_eq!(challenge["session_events"], run.log().to_string_lossy().as_ref());
    assert_eq!(challenge.get("witness").is_some(), mode == Mode::Daemon, "{challenge}");

    let output = lab.judge_evidence(&["validate-challenge", "--challenge", "aris-challenge.json"], &run.project());
    assert!(output.status.success(), "validate-challenge failed: {}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout_json(&output)["witness_checked"], mode == Mode::Daemon);
}

#[test]
fn claude_marker_challenge_daemon() {
    claude_marker_challenge(Mode::Daemon);
}

#[test]
fn claude_marker_challenge_direct() {
    claude_marker_challenge(Mode::Direct);
}

// ------------------------------------------------------- Claude Code: the installed gate

/// `judged install-hooks --claude --project <claude project> [extra]`, checked to name
/// `judge-hook` by its name: the lab's PATH has this build's binaries first, so that is
/// this build's `judge-hook`, and the host runs it.
fn install_hooks(lab: &Lab, extra: &[&str]) {
    let project = lab.project(Host::Claude);
    std::fs::create_dir_all(&project).expect("project dir");
    let project_arg = project.to_string_lossy().into_owned();
    let mut args = vec!["install-hooks", "--claude", "--project", &project_arg];
    args.extend_from_slice(extra);
    let output = lab.judged(&args);
    assert!(output.status.success(), "install-hooks failed: {}", String::from_utf8_lossy(&output.stderr));
    let settings = std::fs::read_to_string(project.join(".claude/settings.json")).expect("settings.json written");
    assert!(
        settings.contains("\"judge-hook --host claude-code "),
        "the hook names judge-hook as PATH finds it: {settings}"
    );
}

fn project_gate(lab: &Lab, toml: &str) {
    std::fs::write(lab.project(Host::Claude).join(".judged.toml"), toml).expect(".judged.toml written");
}

fn session_id(records: &[Value]) -> String {
    records.iter().find_map(|r| r["sessionId"].as_str()).expect("a sessionId").to_owned()
}

fn is_task_update(name: &str, input: &Value) -> bool {
    name == "TaskUpdate" && input["status"] == "completed"
}

fn is_task_get(name: &str, _: &Value) -> bool {
    name == "TaskGet"
}

/// The recorded gate decisions for `event` in `session`.
fn decisions_for(lab: &Lab, event: &str, session: &str) -> Vec<Value> {
    lab.decisions().into_iter().filter(|d| d["event"] == event && d["session_id"] == session).collect()
}

#[test]
fn claude_task_completed_is_blocked_without_evidence() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    install_hooks(&lab, &[]); // TaskCompleted only, the default
    let run = lab.run(Host::Claude, "claude-task-completed");
    let records = run.records();

    let (block, result) = hosts::claude_result(&records, is_task_update);
    let text = hosts::claude_result_text(block);
    assert!(text.starts_with("TaskCompleted hook feedback:"), "{text}");
    assert!(text.contains("judge-hook"), "{text}");
    assert!(text.contains("task \"Implement the parser\" cannot be marked done yet"), "{text}");
    assert!(text.contains("judge-evidence marker --binding"), "the message says how to satisfy the gate: {text}");
    assert_eq!(result["success"], false, "{result}");
    let (block, _) = hosts::claude_result(&records, is_task_get);
    assert!(hosts::claude_result_text(block).contains("Status: pending"), "the task stayed open: {block}");

    let decisions = decisions_for(&lab, "TaskCompleted", &session_id(&records));
    assert!(!decisions.is_empty(), "no TaskCompleted decision recorded: {:?}", lab.decisions());
    for decision in &decisions {
        assert_eq!(decision["decision"], "block", "{decision}");
        assert_eq!(decision["task_id"], "1", "{decision}");
        assert_eq!(decision["policy"], "evidence", "{decision}");
    }
    // The host refused the update (`toolUseResult.success: false`, no `is_error`): the
    // task never completed, so nothing went past the gate.
    assert_eq!(bypasses_once_read(&lab, run.log()), Vec::<Value>::new(), "a blocked task is no bypass");
}

#[test]
fn claude_task_completed_is_allowed_when_policy_is_off() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    install_hooks(&lab, &[]);
    project_gate(&lab, "[gate]\npolicy = \"off\"\n");
    let run = lab.run(Host::Claude, "claude-task-completed");
    let records = run.records();

    let (block, result) = hosts::claude_result(&records, is_task_update);
    assert_eq!(hosts::claude_result_text(block), "Updated task #1 status");
    assert_eq!(result["success"], true, "{result}");
    let (block, _) = hosts::claude_result(&records, is_task_get);
    assert!(hosts::claude_result_text(block).contains("Status: completed"), "{block}");

    let decisions = decisions_for(&lab, "TaskCompleted", &session_id(&records));
    assert!(!decisions.is_empty(), "no TaskCompleted decision recorded: {:?}", lab.decisions());
    assert!(decisions.iter().all(|d| d["decision"] == "allow" && d["reason"] == "policy off"), "{decisions:?}");
}

/// The point of the system: after a verified cross-family Copilot review of a project,
/// a Claude Code task in the same project may be marked done.
#[test]
fn claude_task_completed_is_allowed_after_a_verified_review_of_the_project() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    let (copilot, evidence) = verified_copilot_round(&lab);
    // Claude Code works in the same project: its WORKDIR's project/ is the Copilot one.
    std::fs::create_dir_all(lab.workdir(Host::Claude)).expect("claude workdir");
    std::os::unix::fs::symlink(copilot.project(), lab.project(Host::Claude)).expect("project symlink");
    install_hooks(&lab, &[]);
    let run = lab.run(Host::Claude, "claude-task-completed");
    let records = run.records();

    let (block, result) = hosts::claude_result(&records, is_task_update);
    assert_eq!(hosts::claude_result_text(block), "Updated task #1 status", "{result}");
    let (block, _) = hosts::claude_result(&records, is_task_get);
    assert!(hosts::claude_result_text(block).contains("Status: completed"), "{block}");

    let decisions = decisions_for(&lab, "TaskCompleted", &session_id(&records));
    assert!(!decisions.is_empty(), "no TaskCompleted decision recorded: {:?}", lab.decisions());
    for decision in &decisions {
        assert_eq!(decision["decision"], "allow", "{decision}");
        assert_eq!(decision["reason"], "fresh positive evidence", "{decision}");
        let message = decision["message"].as_str().unwrap_or_default();
        assert!(message.contains(evidence["evidence_id"].as_str().expect("evidence id")), "{message}");
    }
}

/// A `.judged.toml` arming the gate with the jury: two `command` jurors (fixtures/jurors)
/// of two families, the first answering with `first` (a script and its arguments).
fn panel_gate(first: &[&str]) -> String {
    panel_gate_of(first, &["canned.sh", "pass", "90", "{model}"])
}

/// A `panel` gate whose two stage-1 jurors run `first` and `second` (from
/// `fixtures/jurors/`), and whose tiebreaker answers nothing.
fn panel_gate_of(first: &[&str], second: &[&str]) -> String {
    let stage_1 = [
        ("small-openai", "gpt-5.4-mini", juror(first[0], &first[1..]), ""),
        ("small-google", "gemini-3-flash", juror(second[0], &second[1..]), ""),
    ];
    format!("[gate]\npolicy = \"panel\"\n\n{}", command_jury(stage_1, juror("empty.sh", &[]), 30))
}

/// Claude Code completes a task under the `panel` policy; its records and the decisions
/// recorded for it.
fn claude_task_completed_under_the_jury(lab: &Lab, first: &[&str]) -> (Vec<Value>, Vec<Value>) {
    install_hooks(lab, &[]);
    project_gate(lab, &panel_gate(first));
    let records = lab.run(Host::Claude, "claude-task-completed").records();
    let decisions = decisions_for(lab, "TaskCompleted", &session_id(&records));
    assert!(!decisions.is_empty(), "no TaskCompleted decision recorded: {:?}", lab.decisions());
    (records, decisions)
}

#[test]
fn claude_task_completed_is_allowed_by_a_healthy_passing_jury() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    let (records, decisions) = claude_task_completed_under_the_jury(&lab, &["canned.sh", "pass", "92", "{model}"]);
    let (block, result) = hosts::claude_result(&records, is_task_update);
    assert_eq!(hosts::claude_result_text(block), "Updated task #1 status", "{result}");
    for decision in &decisions {
        assert_eq!((decision["decision"].as_str(), decision["policy"].as_str()), (Some("allow"), Some("panel")));
        assert!(decision["panel"].is_string(), "{decision}");
    }
}

#[test]
fn claude_task_completed_is_blocked_by_a_degraded_jury() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    // The OpenAI juror's record names a Google model; the tiebreaker answers nothing.
    let (records, decisions) = claude_task_completed_under_the_jury(&lab, &["impostor.sh"]);
    let (block, result) = hosts::claude_result(&records, is_task_update);
    let text = hosts::claude_result_text(block);
    assert!(text.starts_with("TaskCompleted hook feedback:"), "{text}");
    assert!(text.contains("the cross-family jury could not judge it") && text.contains("small-openai"), "{text}");
    assert_eq!(result["success"], false, "{result}");
    assert!(decisions.iter().all(|d| d["decision"] == "block" && d["reason"] == "jury degraded"), "{decisions:?}");
}

/// Claude Code with judged's plugin loaded by `--plugin-dir` (the plugin's hooks are the
/// gate: nothing is installed) calls the plugin's MCP `review` on a git project with a
/// change, then completes the task; the records of the review's tool call and of the
/// TaskUpdate, and the TaskCompleted decisions.
fn claude_reviewed_over_mcp(lab: &Lab, jury: &str) -> (Vec<Value>, Vec<Value>) {
    git_project_with_a_change(&lab.project(Host::Claude));
    project_gate(lab, jury);
    let records = lab.run(Host::Claude, "claude-mcp-review").records();
    let decisions = decisions_for(lab, "TaskCompleted", &session_id(&records));
    assert!(!decisions.is_empty(), "no TaskCompleted decision recorded: {:?}", lab.decisions());
    (records, decisions)
}

/// `project` as a git repository with one commit and a change on top.
fn git_project_with_a_change(project: &Path) {
    std::fs::create_dir_all(project).expect("project dir");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git").arg("-C").arg(project).args(args).status().expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    std::fs::write(project.join("parser.rs"), "fn parse() {}\n").expect("a file");
    git(&["add", "."]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
    std::fs::write(project.join("parser.rs"), "fn parse(line: &str) -> usize { line.len() }\n").expect("a change");
}

fn is_mcp_review(name: &str, _: &Value) -> bool {
    name == "mcp__plugin_judged_judged__review"
}

/// What the model was shown of the review: Claude Code 2.1.328 hands it the tool's
/// structured result (the JSON), not its text.
fn review_shown(records: &[Value]) -> Value {
    let (block, _) = hosts::claude_result(records, is_mcp_review);
    let shown = hosts::claude_result_text(block);
    serde_json::from_str(&shown).unwrap_or_else(|e| panic!("the review's result is not its JSON ({e}): {shown}"))
}

#[test]
fn claude_code_with_the_plugin_completes_a_task_its_mcp_review_passed() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    let (records, decisions) = claude_reviewed_over_mcp(&lab, &panel_gate(&["canned.sh", "pass", "92", "{model}"]));
    let review = review_shown(&records);
    assert_eq!((review["verdict"].as_str(), review["degraded"].as_bool()), (Some("pass"), Some(false)), "{review}");
    assert_eq!(review["gate"], json!({"counted": true, "allows": true, "why": review["gate"]["why"]}), "{review}");
    let (block, result) = hosts::claude_result(&records, is_task_update);
    assert_eq!(hosts::claude_result_text(block), "Updated task #1 status", "{result}");
    // Answered from the review, not from a jury of the gate's own.
    for decision in &decisions {
        assert_eq!(
            (decision["decision"].as_str(), decision["reason"].as_str()),
            (Some("allow"), Some("review verdict"))
        );
    }
}

#[test]
fn claude_code_with_the_plugin_is_blocked_with_the_flags_its_mcp_review_raised() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    let fail = ["canned.sh", "fail", "90", "{model}", "parse ignores the record type"];
    let (records, decisions) = claude_reviewed_over_mcp(&lab, &panel_gate_of(&fail, &fail));
    let review = review_shown(&records);
    assert_eq!(
        (review["verdict"].as_str(), &review["flags"]),
        (Some("fail"), &json!(["parse ignores the record type"]))
    );
    assert_eq!((review["gate"]["counted"].as_bool(), review["gate"]["allows"].as_bool()), (Some(true), Some(false)));
    let (block, result) = hosts::claude_result(&records, is_task_update);
    let text = hosts::claude_result_text(block);
    assert!(text.starts_with("TaskCompleted hook feedback:"), "{text}");
    assert!(text.contains("parse ignores the record type"), "{text}");
    assert_eq!(result["success"], false, "{result}");
    assert!(decisions.iter().all(|d| d["decision"] == "block" && d["reason"] == "review verdict"), "{decisions:?}");
}

/// Copilot CLI: the completion (`data`) of the one root call of `tool`.
fn copilot_tool_result<'a>(records: &'a [Value], tool: &str) -> &'a Value {
    let call = records
        .iter()
        .find(|r| r["type"] == "tool.execution_start" && r["data"]["toolName"] == tool)
        .and_then(|r| r["data"]["toolCallId"].as_str())
        .unwrap_or_else(|| panic!("no call of {tool}"));
    records
        .iter()
        .find(|r| r["type"] == "tool.execution_complete" && r["data"]["toolCallId"] == call)
        .map(|r| &r["data"])
        .unwrap_or_else(|| panic!("no completion of {tool}"))
}

/// Copilot CLI with judged's plugin loaded by `--plugin-dir` (its `agentStop` hook is the
/// gate) calls the plugin's MCP `review`, which runs in the plugin's directory and must
/// judge the session's project, then ends its turn: the gate counts the review.
#[test]
fn copilot_cli_with_the_plugin_ends_a_turn_its_mcp_review_passed() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    let project = lab.project(Host::Copilot);
    git_project_with_a_change(&project);
    std::fs::write(project.join(".judged.toml"), panel_gate(&["canned.sh", "pass", "92", "{model}"])).unwrap();
    let records = lab.run(Host::Copilot, "copilot-mcp-review").records();
    let review = copilot_tool_result(&records, "judged-review");
    let said = review["result"]["content"].as_str().unwrap_or_default();
    assert!(said.contains("Verdict: pass") && said.contains("Gate: counted, allows."), "{review}");
    let session = records.iter().find_map(|r| r["data"]["sessionId"].as_str()).expect("a session id").to_owned();
    let decisions = decisions_for(&lab, "agentStop", &session);
    assert!(!decisions.is_empty(), "no agentStop decision recorded: {:?}", lab.decisions());
    for decision in &decisions {
        assert_eq!(decision["cwd"].as_str(), project.canonicalize().unwrap().to_str(), "{decision}");
        assert_eq!(
            (decision["decision"].as_str(), decision["reason"].as_str()),
            (Some("allow"), Some("review verdict"))
        );
    }
}

/// The bypasses recorded for the session of `log`, once the daemon has read all of it
/// (the watcher reads the last lines a moment after the client exits).
fn bypasses_once_read(lab: &Lab, log: &Path) -> Vec<Value> {
    let lines = std::fs::read_to_string(log).expect("the session log").lines().count() as u64;
    let read = || {
        let sessions = lab.daemon().call("sessions", Value::Null).expect("sessions");
        sessions.as_array().unwrap().iter().find(|s| s["path"] == log.to_str().unwrap()).cloned()
    };
    let summary = judged_tests::eventually(
        &format!("the daemon to read all of {}", log.display()),
        std::time::Duration::from_secs(30),
        || read().filter(|summary| summary["events"] == lines),
    );
    let report = lab.judged(&["report", "--json", "--since", "1d"]);
    let data: Value = serde_json::from_slice(&report.stdout).expect("report --json");
    let bypassed = data["bypassed"].as_array().cloned().unwrap_or_default();
    bypassed.into_iter().filter(|b| b["session_id"] == summary["session_id"]).collect()
}

/// A Copilot CLI session that ends with no gate asked (no hook installed, the gate armed
/// for `agentStop` by default) is on the record: its root agent's stop is a bypass.
#[test]
fn a_copilot_cli_stop_no_gate_allowed_is_on_the_record() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    let run = lab.run(Host::Copilot, "copilot-cross-family-ok");
    let records = run.records();
    let session = records.iter().find_map(|r| r["data"]["sessionId"].as_str()).expect("a session id").to_owned();
    let bypassed = bypasses_once_read(&lab, run.log());
    assert_eq!(bypassed.len(), 1, "{bypassed:?}");
    assert_eq!((bypassed[0]["event"].as_str(), &bypassed[0]["task_id"]), (Some("agentStop"), &Value::Null));
    let report = lab.judged(&["report", "--since", "1d"]);
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(text.contains(&format!("session {session} stop (agentStop) in ")), "{text}");
}

/// The marker / challenge / verify round through the plugin's MCP tools on Copilot CLI,
/// with its native rubber-duck as the reviewer: verified evidence, which the plugin's
/// `agentStop` gate counts when the turn ends.
#[test]
fn copilot_cli_runs_the_round_through_the_plugins_mcp_tools_and_the_gate_counts_it() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    let project = lab.project(Host::Copilot);
    git_project_with_a_change(&project);
    let run = lab.run(Host::Copilot, "copilot-mcp-round");
    let records = run.records();
    for tool in ["judged-marker", "judged-challenge", "judged-verify"] {
        let done = copilot_tool_result(&records, tool);
        assert_eq!(done["success"], true, "{tool}: {done}");
    }
    let evidence = hosts::read_json(&project.join("review.evidence.json"));
    assert_eq!(evidence["status"], "verified", "{evidence}");
    assert_eq!(
        (evidence["executor_family"].as_str(), evidence["reviewer_family"].as_str()),
        (Some("anthropic"), Some("openai"))
    );
    assert!(evidence["witness"].is_string(), "the daemon witnessed it: {evidence}");
    let validated = lab.judge_evidence(&["validate", "--evidence", "review.evidence.json"], &project);
    assert!(validated.status.success(), "{}", String::from_utf8_lossy(&validated.stderr));
    let session = records.iter().find_map(|r| r["data"]["sessionId"].as_str()).expect("a session id").to_owned();
    let decisions = decisions_for(&lab, "agentStop", &session);
    assert!(!decisions.is_empty(), "no agentStop decision recorded: {:?}", lab.decisions());
    for decision in &decisions {
        assert_eq!(decision["decision"], "allow", "{decision}");
        assert_eq!(decision["evidence_id"], evidence["evidence_id"], "{decision}");
    }
    assert_eq!(bypasses_once_read(&lab, run.log()), Vec::<Value>::new(), "the stop the gate allowed is no bypass");
    // The rubber-duck's own stop runs the hook too: it is let through, not blocked.
    let others: Vec<Value> = lab.decisions().into_iter().filter(|d| d["session_id"] != session.as_str()).collect();
    assert!(!others.is_empty(), "the reviewer's stop reached the gate");
    assert!(others.iter().all(|d| d["decision"] == "allow" && d["reason"] == "a sub-agent's stop"), "{others:?}");
}

/// A reviewer CLI Claude Code runs through Bash in a scenario.
#[derive(Clone, Copy)]
enum ReviewerCli {
    Codex,
    Copilot,
}

/// Claude Code with `reviewer` on its PATH (both offline against the scripted server), a
/// `TaskCompleted` gate installed; the run of `scenario`, its records and decisions.
/// `None` (the test skips) when a client cannot be installed.
fn claude_with_reviewer(
    lab_mode: Mode,
    scenario: &str,
    reviewer: ReviewerCli,
) -> Option<(Lab, Vec<Value>, Vec<Value>)> {
    let clients = hosts::clients()?;
    let tool = match reviewer {
        ReviewerCli::Codex => hosts::jurors()?.codex,
        ReviewerCli::Copilot => clients.copilot.clone(),
    };
    let lab = Lab::new(&clients, lab_mode).with_tool(&tool);
    install_hooks(&lab, &[]);
    let records = lab.run(Host::Claude, scenario).records();
    let decisions =
        if lab_mode == Mode::Daemon { decisions_for(&lab, "TaskCompleted", &session_id(&records)) } else { Vec::new() };
    Some((lab, records, decisions))
}

/// The text a scripted Bash step printed, found by a word of its command.
fn bash_output(records: &[Value], needle: &'static str) -> String {
    let (block, _) = hosts::claude_result(records, is_bash_running(needle));
    hosts::claude_result_text(block)
}

/// Issue 14: Claude Code's reviewer is a reviewer CLI run as a root Bash call; that CLI's
/// own log of the run is the evidence of who reviewed, and the gate lets the task finish.
fn claude_code_reviewed_by_a_cli_passes_the_gate(reviewer: ReviewerCli, scenario: &str, identity: [&str; 2]) {
    let Some((lab, records, decisions)) = claude_with_reviewer(Mode::Daemon, scenario, reviewer) else { return };
    let verified = bash_output(&records, VERIFY);
    assert!(verified.contains("VERIFY_EXIT=0"), "{verified}");
    let evidence = hosts::read_json(&lab.project(Host::Claude).join("review.evidence.json"));
    assert_eq!(evidence["status"], "verified", "{evidence}");
    assert_eq!(
        (evidence["executor_family"].as_str(), evidence["reviewer_family"].as_str()),
        (Some("anthropic"), Some("openai"))
    );
    assert_eq!(
        (evidence["reviewer_model"].as_str(), evidence["identity_source"].as_str()),
        (Some("gpt-5.4"), Some(identity[0]))
    );
    assert_eq!(evidence["agent_name"], identity[1]);
    let response = std::fs::read_to_string(lab.project(Host::Claude).join("review.response.md")).unwrap();
    assert!(response.starts_with("Score: 8/10\nVerdict: ready"), "{response}");
    let (block, _) = hosts::claude_result(&records, is_task_update);
    assert_eq!(hosts::claude_result_text(block), "Updated task #1 status");
    assert!(
        decisions.iter().all(|d| d["decision"] == "allow" && d["reason"] == "fresh positive evidence"),
        "{decisions:?}"
    );
    // The evidence revalidates against both logs as they are, in both modes.
    validates_in_both_modes(&lab);
    // Validation re-derives the run and the Bash call from the logs, so evidence edited
    // to name another run, model or call (its id recomputed, as anyone can) is refused.
    for (field, forged) in [
        ("reviewer_model", json!("gpt-5.4-mini")),
        ("reviewer_session_id", json!("00000000-0000-4000-8000-000000000000")),
        ("tool_call_id", json!("toolu_forged")),
    ] {
        refused_when_forged(&lab, field, forged);
    }
}

/// `validate` refuses, in the lab's mode and in direct mode, a copy of the project's
/// evidence with `field` set to `value` and its evidence id computed again.
fn refused_when_forged(lab: &Lab, field: &str, value: Value) {
    let project = lab.project(Host::Claude);
    let mut evidence = hosts::read_json(&project.join("review.evidence.json"));
    let fields = evidence.as_object_mut().expect("evidence is an object");
    fields.insert(field.to_owned(), value);
    let id = judged_core::rules::EvidenceId::of(&fields.clone().into()).to_string();
    fields.insert("evidence_id".to_owned(), id.into());
    std::fs::write(project.join("forged.evidence.json"), evidence.to_string()).unwrap();
    let args = ["validate", "--evidence", "forged.evidence.json"];
    let direct = || {
        let mut command = std::process::Command::new(judged_tests::bin("judge-evidence"));
        command.args(["--mode", "direct"]).args(args).current_dir(&project).output().expect("judge-evidence runs")
    };
    for (mode, validated) in [("lab", lab.judge_evidence(&args, &project)), ("direct", direct())] {
        let stderr = String::from_utf8_lossy(&validated.stderr);
        assert!(!validated.status.success(), "{field} forged, {mode} mode: validated");
        assert!(stderr.contains("does not match") || stderr.contains("no longer holds"), "{field}, {mode}: {stderr}");
    }
}

/// `judge-evidence validate` of the Claude Code project's `review.evidence.json` passes
/// in the lab's mode and in direct mode, which reaches the same verdict from the files.
fn validates_in_both_modes(lab: &Lab) {
    let validated = lab.judge_evidence(&["validate", "--evidence", "review.evidence.json"], &lab.project(Host::Claude));
    assert!(validated.status.success(), "{}", String::from_utf8_lossy(&validated.stderr));
    let direct = std::process::Command::new(judged_tests::bin("judge-evidence"))
        .args(["--mode", "direct", "validate", "--evidence", "review.evidence.json"])
        .current_dir(lab.project(Host::Claude))
        .output()
        .expect("judge-evidence runs");
    assert!(direct.status.success(), "{}", String::from_utf8_lossy(&direct.stderr));
}

#[test]
fn claude_code_reviewed_by_codex_passes_the_gate() {
    claude_code_reviewed_by_a_cli_passes_the_gate(
        ReviewerCli::Codex,
        "claude-codex-review",
        ["codex-rollout", "codex-exec"],
    );
}

#[test]
fn claude_code_reviewed_by_copilot_prompt_passes_the_gate() {
    claude_code_reviewed_by_a_cli_passes_the_gate(
        ReviewerCli::Copilot,
        "claude-copilot-review",
        ["copilot-session", "copilot-prompt"],
    );
}

/// A reviewer CLI run in a subdirectory of the project reviews part of it: still a review
/// in the project (the other-cwd test refuses one outside it).
#[test]
fn claude_code_reviewed_by_codex_in_a_subdirectory_passes_the_gate() {
    claude_code_reviewed_by_a_cli_passes_the_gate(
        ReviewerCli::Codex,
        "claude-codex-review-subdir",
        ["codex-rollout", "codex-exec"],
    );
}

#[test]
fn claude_code_reviewed_by_copilot_prompt_verifies_in_direct_mode() {
    let Some((lab, records, _)) = claude_with_reviewer(Mode::Direct, "claude-copilot-review", ReviewerCli::Copilot)
    else {
        return;
    };
    let verified = bash_output(&records, VERIFY);
    assert!(verified.contains("VERIFY_EXIT=0"), "{verified}");
    let evidence = hosts::read_json(&lab.project(Host::Claude).join("review.evidence.json"));
    assert_eq!((evidence["status"].as_str(), evidence["reviewer_model"].as_str()), (Some("verified"), Some("gpt-5.4")));
    assert_eq!(evidence["reviewer_host"], "copilot-cli");
}

#[test]
fn claude_code_reviewed_by_codex_verifies_in_direct_mode() {
    let Some((lab, records, _)) = claude_with_reviewer(Mode::Direct, "claude-codex-review", ReviewerCli::Codex) else {
        return;
    };
    let verified = bash_output(&records, VERIFY);
    assert!(verified.contains("VERIFY_EXIT=0"), "{verified}");
    let evidence = hosts::read_json(&lab.project(Host::Claude).join("review.evidence.json"));
    assert_eq!((evidence["status"].as_str(), evidence["reviewer_model"].as_str()), (Some("verified"), Some("gpt-5.4")));
}

/// The refusals: the verify step's exit and message, and the gate keeps the task open.
fn claude_cli_review_refused(reviewer: ReviewerCli, scenario: &str, exit: i64, says: &str) {
    let Some((_lab, records, decisions)) = claude_with_reviewer(Mode::Daemon, scenario, reviewer) else { return };
    let verified = bash_output(&records, VERIFY);
    assert!(verified.contains(&format!("VERIFY_EXIT={exit}")) && verified.contains(says), "{scenario}: {verified}");
    if exit != 10 {
        assert!(decisions.iter().all(|d| d["decision"] == "block"), "{scenario}: {decisions:?}");
    }
}

#[test]
fn claude_codex_review_without_the_nonce_is_refused() {
    claude_cli_review_refused(ReviewerCli::Codex, "claude-codex-review-no-nonce", 6, "found 0");
}

#[test]
fn claude_codex_review_from_another_cwd_is_refused() {
    claude_cli_review_refused(ReviewerCli::Codex, "claude-codex-review-other-cwd", 6, "not in the challenge's cwd");
}

#[test]
fn claude_codex_review_by_the_same_family_is_rejected() {
    claude_cli_review_refused(ReviewerCli::Codex, "claude-codex-review-same-family", 10, "same-model-family");
}

#[test]
fn claude_codex_review_run_twice_is_refused() {
    claude_cli_review_refused(ReviewerCli::Codex, "claude-codex-review-two-runs", 6, "found 2");
}

/// A review no host records: Claude Code runs a reviewer through Bash (standing in for an
/// MCP tool or any other command), `verify --declared-reviewer-model` takes the model on
/// the caller's word, and the evidence says so. `project_toml` is the project's gate.
fn claude_declared_review(project_toml: &str) -> Option<(Lab, Vec<Value>, Vec<Value>)> {
    let clients = hosts::clients()?;
    let lab = Lab::new(&clients, Mode::Daemon);
    install_hooks(&lab, &[]);
    project_gate(&lab, project_toml);
    let records = lab.run(Host::Claude, "claude-declared-review").records();
    let verified = bash_output(&records, VERIFY);
    assert!(verified.contains("VERIFY_EXIT=0"), "{verified}");
    let evidence = hosts::read_json(&lab.project(Host::Claude).join("review.evidence.json"));
    assert_eq!(
        (evidence["identity_assurance"].as_str(), evidence["reviewer_model_source"].as_str()),
        (Some("caller-declared"), Some("caller-declared")),
        "{evidence}"
    );
    assert_eq!(
        (evidence["agent_name"].as_str(), evidence["independence_verified"].as_bool()),
        (Some("declared:Bash"), Some(false))
    );
    let response = std::fs::read_to_string(lab.project(Host::Claude).join("review.response.md")).unwrap();
    assert!(response.starts_with("Score: 8/10\nVerdict: ready"), "{response}");
    validates_in_both_modes(&lab);
    // Its models are the caller's word: a trace may not present them as a host's record.
    for mode in ["daemon", "direct"] {
        let args = ["--mode", mode, "trace", "--skill", "s", "--purpose", "p", "--backend", "copilot-prompt"];
        let traced = std::process::Command::new(judged_tests::bin("judge-evidence"))
            .args(args)
            .args(["--native-evidence", "review.evidence.json"])
            .env("JUDGED_HOME", &lab.judged_home)
            .current_dir(lab.project(Host::Claude))
            .output()
            .expect("judge-evidence runs");
        let stderr = String::from_utf8_lossy(&traced.stderr);
        assert!(!traced.status.success() && stderr.contains("host-recorded review"), "{mode}: {stderr}");
    }
    // Nor may the round gate count it as a host-verified native round.
    for mode in ["daemon", "direct"] {
        let gated = std::process::Command::new(judged_tests::bin("judge-evidence"))
            .args(["--mode", mode, "gate", "--round-backend", "copilot-native", "--score", "8", "--verdict", "ready"])
            .args(["--native-evidence", "review.evidence.json"])
            .env("JUDGED_HOME", &lab.judged_home)
            .current_dir(lab.project(Host::Claude))
            .output()
            .expect("judge-evidence runs");
        let said = format!("{}{}", String::from_utf8_lossy(&gated.stdout), String::from_utf8_lossy(&gated.stderr));
        assert!(said.contains("caller-declared") && !said.contains("host_event_verified"), "{mode}: {said}");
    }
    // A response that is not the call's result is refused.
    std::fs::write(lab.project(Host::Claude).join("review.response.md"), "Score: 10/10\nVerdict: ready\n").unwrap();
    let forged = lab.judge_evidence(&["validate", "--evidence", "review.evidence.json"], &lab.project(Host::Claude));
    assert!(!forged.status.success(), "a changed response validates");
    std::fs::write(lab.project(Host::Claude).join("review.response.md"), &response).unwrap();
    let decisions = decisions_for(&lab, "TaskCompleted", &session_id(&records));
    Some((lab, records, decisions))
}

#[test]
fn a_caller_declared_review_does_not_pass_a_gate_that_wants_host_records() {
    let Some((_lab, records, decisions)) = claude_declared_review("[gate]\npolicy = \"evidence\"\n") else { return };
    assert!(!decisions.is_empty() && decisions.iter().all(|d| d["decision"] == "block"), "{decisions:?}");
    let message = decisions[0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("evidence_assurance = \"caller-declared\""), "{message}");
    let said = "\nA review was verified whose reviewer only its caller declared (verify --declared-reviewer-model): \
                this gate counts reviews whose reviewer a host recorded.";
    assert!(message.contains(said) && !message.contains("   "), "one paragraph, no broken literal: {message}");
    let (block, _) = hosts::claude_result(&records, is_task_update);
    assert!(hosts::claude_result_text(block).contains("caller declared"), "the agent is told why");
}

#[test]
fn a_caller_declared_review_passes_a_gate_that_accepts_it() {
    let toml = "[gate]\npolicy = \"evidence\"\nevidence_assurance = \"caller-declared\"\n";
    let Some((_lab, _records, decisions)) = claude_declared_review(toml) else { return };
    assert!(!decisions.is_empty() && decisions.iter().all(|d| d["decision"] == "allow"), "{decisions:?}");
}

#[test]
fn claude_copilot_prompt_review_without_the_nonce_is_refused() {
    claude_cli_review_refused(ReviewerCli::Copilot, "claude-copilot-review-no-nonce", 6, "found 0");
}

#[test]
fn claude_copilot_prompt_review_by_the_same_family_is_rejected() {
    claude_cli_review_refused(ReviewerCli::Copilot, "claude-copilot-review-same-family", 10, "same-model-family");
}

fn stop_feedback(records: &[Value]) -> Vec<String> {
    records
        .iter()
        .filter(|r| r["type"] == "user" && r["isMeta"] == true)
        .filter_map(|r| r["message"]["content"].as_str())
        .filter(|c| c.starts_with("Stop hook feedback:"))
        .map(str::to_owned)
        .collect()
}

/// Claude Code with the gate on its `Stop` (no review), run through `claude-stop-gate`,
/// where the agent keeps ending.
fn claude_stop_gated(clients: &hosts::Clients) -> (Lab, Run) {
    let lab = Lab::new(clients, Mode::Daemon);
    install_hooks(&lab, &["--events", "Stop"]);
    project_gate(&lab, "[gate]\npolicy = \"evidence\"\nevents = [\"Stop\"]\n");
    let run = lab.run(Host::Claude, "claude-stop-gate");
    (lab, run)
}

#[test]
fn claude_stop_is_blocked_without_evidence() {
    let Some(clients) = hosts::clients() else { return };
    let (lab, run) = claude_stop_gated(&clients);
    let records = run.records();

    let feedback = stop_feedback(&records);
    assert!(!feedback.is_empty(), "no Stop hook feedback in the transcript {}", run.log().display());
    for text in &feedback {
        assert!(text.contains("judge-hook"), "{text}");
        assert!(text.contains("cannot be marked done yet"), "{text}");
    }
    let decisions = decisions_for(&lab, "Stop", &session_id(&records));
    assert!(!decisions.is_empty(), "no Stop decision recorded: {:?}", lab.decisions());
    assert!(decisions.iter().all(|d| d["decision"] == "block" && d["policy"] == "evidence"), "{decisions:?}");
}

#[test]
fn claude_stop_is_allowed_when_policy_is_off() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    install_hooks(&lab, &["--events", "Stop"]);
    project_gate(&lab, "[gate]\npolicy = \"off\"\nevents = [\"Stop\"]\n");
    let run = lab.run(Host::Claude, "claude-stop-gate");
    let records = run.records();

    assert_eq!(stop_feedback(&records), Vec::<String>::new());
    assert_eq!(run.stdout().trim(), "First answer: review round 1 is done.");
    let decisions = decisions_for(&lab, "Stop", &session_id(&records));
    assert!(!decisions.is_empty(), "no Stop decision recorded: {:?}", lab.decisions());
    assert!(decisions.iter().all(|d| d["decision"] == "allow" && d["reason"] == "policy off"), "{decisions:?}");
}

/// Issue 31: the agent keeps ending, the gate keeps blocking its `Stop`, and the real
/// Claude Code gives up past its cap (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=3`: the fourth block
/// is overridden, and the client writes that it ended the turn). That end is no allow: it
/// is on the record as a forced end, a bypass in its own words, which `judged status`
/// shows and doctor counts.
#[test]
fn a_claude_stop_the_client_ended_past_the_gates_blocks_is_a_forced_end() {
    let Some(clients) = hosts::clients() else { return };
    let (lab, run) = claude_stop_gated(&clients);
    let records = run.records();
    let gave_up = records.iter().find(|r| r["type"] == "system" && r["subtype"] == "informational");
    let gave_up = gave_up.and_then(|r| r["content"].as_str()).unwrap_or_default();
    assert!(gave_up.starts_with("A hook blocked the turn from ending 4 consecutive times"), "{gave_up}");
    let decisions = decisions_for(&lab, "Stop", &session_id(&records));
    assert_eq!(decisions.iter().filter(|d| d["decision"] == "block").count(), 4, "{decisions:#?}");

    let bypassed = bypasses_once_read(&lab, run.log());
    assert_eq!(bypassed.len(), 1, "{bypassed:#?}");
    assert_eq!((bypassed[0]["event"].as_str(), &bypassed[0]["forced_end"]), (Some("Stop"), &json!({"blocks": 4})));
    let report = lab.judged(&["report", "--since", "1d"]);
    let text = String::from_utf8_lossy(&report.stdout);
    let section = text.split("completions without the gate allowing them\n").nth(1).unwrap_or_default();
    assert!(
        section.contains("the host ended the turn after judged blocked it 4 times: the gate's block cap"),
        "{text}"
    );
    let status: Value = serde_json::from_slice(&lab.judged(&["status", "--json"]).stdout).expect("status --json");
    assert_eq!((&status["completions_bypassed"], &status["forced_ends"]), (&json!(1), &json!(1)), "{status}");
    let shown = String::from_utf8_lossy(&lab.judged(&["status"]).stdout).into_owned();
    assert!(shown.lines().any(|l| l.split_whitespace().eq(["forced_ends", "1"])), "{shown}");
    let doctor: Value = serde_json::from_slice(&lab.judged(&["doctor", "--json"]).stdout).expect("doctor --json");
    let check = doctor["checks"].as_array().and_then(|c| c.iter().find(|c| c["name"] == "bypasses").cloned());
    let detail = check.as_ref().and_then(|c| c["detail"].as_str()).unwrap_or_default();
    assert!(detail.starts_with("1 completion(s) went without the gate allowing them"), "{check:?}");
    assert!(detail.contains("1 of them ended by the host after the gate's blocks (its block cap)"), "{check:?}");
}

/// The project's settings of the Claude Code lab disable hooks, as an agent that can edit
/// them would: `{"disableAllHooks": true}`, beside what install-hooks wrote there.
fn disable_project_hooks(lab: &Lab) {
    let settings = lab.project(Host::Claude).join(".claude/settings.json");
    let mut value: Value =
        std::fs::read_to_string(&settings).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(json!({}));
    value["disableAllHooks"] = json!(true);
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, value.to_string()).unwrap();
}

/// Issue 25: a project whose settings disable hooks completes a task past a hook in the
/// same project's settings, with no decision asked (the way around the gate an agent has
/// when it can edit those files), though not unseen...
#[test]
fn claude_code_with_hooks_disabled_in_the_project_completes_a_task_no_gate_decided() {
    let Some(clients) = hosts::clients() else { return };
    let lab = Lab::new(&clients, Mode::Daemon);
    install_hooks(&lab, &[]);
    disable_project_hooks(&lab);
    let run = lab.run(Host::Claude, "claude-task-completed");
    let records = run.records();
    let (block, _) = hosts::claude_result(&records, is_task_update);
    assert_eq!(hosts::claude_result_text(block), "Updated task #1 status");
    assert_eq!(decisions_for(&lab, "TaskCompleted", &session_id(&records)), Vec::<Value>::new());
    // It does not go unseen: the completion is on the record as a bypass.
    let bypassed = bypasses_once_read(&lab, run.log());
    assert_eq!(bypassed.len(), 1, "{bypassed:?}");
    assert_eq!((bypassed[0]["event"].as_str(), bypassed[0]["task_id"].as_str()), (Some("TaskCompleted"), Some("1")));
}

/// ... while the hook `install-hooks --managed` writes into Claude Code's managed settings
/// (root's, under `/etc`: here a private overlay of it) gates the task all the same, and
/// `uninstall-hooks --managed` takes away exactly that file.
#[test]
fn a_managed_hook_gates_claude_code_though_the_project_disables_hooks() {
    let Some(clients) = hosts::clients() else { return };
    let Some(lab) = Lab::new(&clients, Mode::Daemon).with_private_etc() else { return };
    let (managed, written) = managed_install(&lab, "--claude", "/etc/claude-code/managed-settings.d/judged.json");
    let command = written["hooks"]["TaskCompleted"][0]["hooks"][0]["command"].as_str().unwrap().to_owned();
    assert!(command.starts_with('/') && command.contains("judge-hook --host claude-code"), "by its path: {command}");
    disable_project_hooks(&lab);
    let records = lab.run(Host::Claude, "claude-task-completed").records();
    let (block, result) = hosts::claude_result(&records, is_task_update);
    assert!(hosts::claude_result_text(block).starts_with("TaskCompleted hook feedback:"), "{block}");
    assert_eq!(result["success"], false, "{result}");
    let decisions = decisions_for(&lab, "TaskCompleted", &session_id(&records));
    assert!(!decisions.is_empty() && decisions.iter().all(|d| d["decision"] == "block"), "{decisions:?}");
    managed_uninstall(&lab, "--claude", &managed);
}

/// `install-hooks HOST --managed` in the lab's private `/etc`; the file it wrote there (at
/// `path` as the clients see it) and its JSON.
fn managed_install(lab: &Lab, host: &str, path: &str) -> (std::path::PathBuf, Value) {
    let installed = lab.judged(&["install-hooks", host, "--managed"]);
    assert!(installed.status.success(), "{}", String::from_utf8_lossy(&installed.stderr));
    let file = lab.private_etc_file(Path::new(path));
    let written = serde_json::from_str(&std::fs::read_to_string(&file).expect("the managed file")).unwrap();
    (file, written)
}

/// `uninstall-hooks HOST --managed` takes away exactly the file install wrote.
fn managed_uninstall(lab: &Lab, host: &str, file: &Path) {
    let removed = lab.judged(&["uninstall-hooks", host, "--managed"]);
    assert!(removed.status.success(), "{}", String::from_utf8_lossy(&removed.stderr));
    assert!(!file.exists(), "{} is gone", file.display());
}

/// Issue 25: `install-hooks --copilot --managed` writes the gate into Copilot CLI's policy
/// directory (root's, under `/etc`: here a private overlay of it), which the real client
/// runs with no hook in the repository and `disableAllHooks` in its settings; and
/// `uninstall-hooks --copilot --managed` takes the file away.
#[test]
fn a_managed_policy_hook_gates_copilot_cli_though_the_repository_disables_hooks() {
    let Some(clients) = hosts::clients() else { return };
    let Some(lab) = Lab::new(&clients, Mode::Daemon).with_private_etc() else { return };
    let (policy, written) = managed_install(&lab, "--copilot", "/etc/github-copilot/policy.d/judged.json");
    let command = written["hooks"]["agentStop"][0]["bash"].as_str().unwrap().to_owned();
    assert!(command.starts_with('/') && command.contains("judge-hook --host copilot-cli"), "by its path: {command}");
    let settings = lab.project(Host::Copilot).join(".github/copilot/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, r#"{"disableAllHooks": true}"#).unwrap();
    let run = lab.run(Host::Copilot, "copilot-no-nonce");
    let session = run.records().iter().find_map(|r| r["data"]["sessionId"].as_str()).expect("a session").to_owned();
    let decisions = decisions_for(&lab, "agentStop", &session);
    assert!(decisions.len() > 1 && decisions.iter().all(|d| d["decision"] == "block"), "{:?}", lab.decisions());
    // Each blocked stop the agent went on from is no completion; the last, on which the
    // client gave up blocking (its cap: the ninth block in a row is not heeded) and ended
    // the session, is on the record as a forced end.
    let bypassed = bypasses_once_read(&lab, run.log());
    assert_eq!(bypassed.len(), 1, "{bypassed:#?}");
    assert_eq!(decisions.len(), 9, "{decisions:#?}");
    assert_eq!(bypassed[0]["forced_end"], json!({"blocks": 9}), "{bypassed:#?}");
    managed_uninstall(&lab, "--copilot", &policy);
}

/// Issue 32: a client run through drive.py keeps the user's home as it found it.
#[test]
fn host_runs_leave_the_users_home_as_they_found_it() {
    if hosts::clients().is_none() {
        return;
    }
    hosts::assert_leaves_home_untouched("copilot_cross_family_ok_daemon");
    hosts::assert_leaves_home_untouched("claude_marker_challenge_daemon");
}
