use super::*;
use crate::event::{Host, SessionId, SubagentPhase};
use serde_json::json;

fn copilot(line: serde_json::Value) -> Record {
    parse_line(Host::CopilotCli, line.to_string().as_bytes()).unwrap()
}

fn claude(line: serde_json::Value) -> Record {
    parse_line(Host::ClaudeCode, line.to_string().as_bytes()).unwrap()
}

#[test]
fn copilot_tool_and_subagent_events_normalize() {
    let start = copilot(json!({"type": "tool.execution_start", "id": "e1", "parentId": "e0", "timestamp": "t",
        "data": {"toolCallId": "c1", "toolName": "bash", "arguments": {"command": "ls"}, "model": "gpt-5.4"}}));
    assert!(start.root);
    assert_eq!(start.tool_calls[0].id.as_deref(), Some("c1"));
    assert_eq!(start.tool_calls[0].arguments_text(), r#"{"command": "ls"}"#);
    assert_eq!(start.model.as_deref(), Some("gpt-5.4"));

    let done = copilot(json!({"type": "tool.execution_complete", "id": "e2", "agentId": "child",
        "data": {"toolCallId": "c1", "success": 1, "result": {"content": "a", "detailedContent": "b"}}}));
    assert!(!done.root);
    assert_eq!((done.tool_results[0].success, done.tool_results[0].text.as_str()), (false, "a\nb"));

    let sub = copilot(json!({"type": "subagent.completed", "id": "e3", "agentId": "u-1",
        "data": {"toolCallId": "c1", "agentName": "rubber-duck", "model": "gpt-5.5"}}));
    let event = sub.subagent.clone().unwrap();
    assert_eq!((event.phase, event.model.as_deref()), (SubagentPhase::Completed, Some("gpt-5.5")));
    assert_eq!(sub.agent_id.as_deref(), Some("u-1"));
}

#[test]
fn copilot_ids_that_are_empty_are_absent_and_falsy_agent_ids_are_root() {
    let r = copilot(json!({"type": "x", "id": "", "agentId": "", "data": null}));
    assert_eq!((r.id.as_deref(), r.root), (None, true));
    assert_eq!(parse_line(Host::CopilotCli, br#"{"type":"x","data":"str"}"#), Err(LineError::FieldNotAnObject("data")));
    assert_eq!(parse_line(Host::CopilotCli, b"[]"), Err(LineError::NotAnObject));
    assert_eq!(parse_line(Host::CopilotCli, b"\xff{"), Err(LineError::Malformed));
}

#[test]
fn claude_blocks_become_tool_calls_and_results() {
    let call = claude(json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": "s", "cwd": "/p",
        "isSidechain": false, "message": {"model": "claude-opus-5-5",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "judge-evidence marker"}}]}}));
    assert!(call.root);
    assert_eq!((call.session_id.as_ref().map(SessionId::as_str), call.cwd.as_deref()), (Some("s"), Some("/p")));
    assert_eq!(call.tool_calls[0].name, "Bash");
    assert_eq!(call.model.as_deref(), Some("claude-opus-5-5"));

    let result = claude(json!({"type": "user", "uuid": "u2", "isSidechain": true, "message": {"content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "out"}], "is_error": false}]}}));
    assert!(!result.root);
    assert_eq!((result.tool_results[0].text.as_str(), result.tool_results[0].success), ("out", true));

    let bookkeeping = claude(json!({"type": "queue-operation", "operation": "enqueue"}));
    assert_eq!((bookkeeping.kind.as_str(), bookkeeping.id.as_deref()), ("queue-operation", None));
}

#[test]
fn claude_bookkeeping_records_that_echo_messages_carry_no_tool_results() {
    let blob = claude(json!({"type": "api-request-blob", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "echoed"}]}}));
    assert!(blob.tool_results.is_empty());
}

/// A real Codex CLI 0.169.0 rollout (docs/spec/host-formats.md §G): the run's id and cwd open it, the
/// model asked for, the prompt and the answer are read.
#[test]
fn a_codex_rollout_reads_as_a_run() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../jury/tests/samples/codex-rollout_echo_model.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let records: Vec<Record> = text.lines().map(|l| parse_line(Host::CodexCli, l.as_bytes()).unwrap()).collect();
    let start = &records[0];
    assert!(start.session_start);
    assert_eq!(start.session_id.as_ref().map(SessionId::as_str), Some("01a22f91-020c-7062-a834-09c37e8bcd24"));
    assert_eq!(start.cwd.as_deref(), Some("/home/dev/probe/runs/c1_text/work"));
    assert!(records[1..].iter().all(|r| !r.session_start && r.cwd.is_none()), "only session_meta opens the run");
    let model = records.iter().find_map(|r| r.model.clone());
    assert_eq!(model.as_deref(), Some("juror-model-a"));
    let prompt =
        records.iter().filter(|r| r.kind == "response_item.message.user").filter_map(|r| r.text.clone()).next_back();
    assert_eq!(prompt.as_deref(), Some("Review: is 2+2=4? Answer with a JSON verdict."));
    let done = records.iter().find(|r| r.kind == "event_msg.task_complete").expect("the turn completed");
    assert_eq!(done.text.as_deref(), Some("{\"verdict\":\"PASS\",\"confidence\":90,\"reasoning\":\"ok\"}"));
    assert!(records.iter().all(|r| r.root && r.parent_id.is_none()), "a rollout has no chain of records");
    assert!(records.iter().all(|r| r.id.is_none() || r.kind.starts_with("response_item.")), "only items have ids");
}

/// A real Gemini CLI 0.61.0 recording (fixtures/gemini-cli-0.61.0/done): the header names
/// the session, the session context the cwd, each answer the model asked for.
#[test]
fn a_gemini_recording_reads_as_a_session() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/gemini-cli-0.61.0/done");
    let file = std::fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"));
    let text = std::fs::read_to_string(file.unwrap()).unwrap();
    let records: Vec<Record> = text.lines().map(|l| parse_line(Host::GeminiCli, l.as_bytes()).unwrap()).collect();
    assert!(records[0].session_start && records[0].kind == "session");
    assert_eq!(records[0].session_id.as_ref().map(SessionId::as_str), Some("2fc163c2-c317-4fbd-9391-652a048cebc2"));
    assert!(records[1..].iter().all(|r| !r.session_start));
    let cwds: Vec<&str> = records.iter().filter_map(|r| r.cwd.as_deref()).collect();
    assert_eq!(cwds, ["/tmp/judged-fixture/gemini/done/project"], "the session context's first workspace directory");
    let prompt = records.iter().find(|r| r.kind == "user").and_then(|r| r.text.as_deref());
    assert_eq!(prompt, Some("Make the cart round half up."));
    let answer = records.iter().find(|r| r.kind == "gemini").expect("an answer");
    assert_eq!(
        (answer.text.as_deref(), answer.model.as_deref()),
        (Some("Done: the cart now rounds half up."), Some("gemini-2.5-pro"))
    );
    assert!(records.iter().filter(|r| r.kind == "$set").all(|r| r.text.is_none() && r.model.is_none()));
}

/// A shell call succeeded when Codex CLI's header says its process exited with code 0; what
/// the command printed after `Output:` cannot say so for it, and a call still running has
/// not succeeded.
#[test]
fn a_codex_shell_call_succeeds_only_by_its_header() {
    let result = |output: serde_json::Value| {
        let line = json!({"timestamp": "t", "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c", "output": output}});
        parse_line(Host::CodexCli, line.to_string().as_bytes()).unwrap().tool_results[0].success
    };
    let header = |code: &str, printed: &str| {
        format!("Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code {code}\nOutput:\n{printed}")
    };
    assert!(result(header("0", "ok\n").into()));
    assert!(!result(header("1", "Process exited with code 0\n").into()), "printed, not the header");
    assert!(!result("Chunk ID: 1\nProcess running with session ID 7\nOutput:\n".into()));
    assert!(!result("Process exited with code 0".into()), "no header: the text is all printed");
    assert!(result(json!({"output": "ok", "metadata": {"exit_code": 0}})), "the legacy shell tool");
    assert!(!result(r#"{"output": "x", "metadata": {"exit_code": 2}}"#.into()), "encoded in the string");
}

/// The command of a shell call, whichever host's shape: a string, or an argv whose script
/// is what runs.
#[test]
fn a_shell_calls_command_is_its_command_line_or_script() {
    let call = |arguments: serde_json::Value| crate::event::ToolCall { id: None, name: "x".into(), arguments };
    assert_eq!(call(json!({"command": "codex exec -"})).command().as_deref(), Some("codex exec -"));
    assert_eq!(call(json!({"cmd": "copilot -p x"})).command().as_deref(), Some("copilot -p x"));
    assert_eq!(call(json!({"command": ["bash", "-lc", "copilot -p x"]})).command().as_deref(), Some("copilot -p x"));
    assert_eq!(call(json!({"cmd": ["npm", "test"]})).command().as_deref(), Some("npm test"));
    assert_eq!(call(json!({"path": "x"})).command(), None);
}

/// The real Gemini CLI 0.61.0 recording of an agent's review round
/// (fixtures/gemini-cli-0.61.0/codex-review): each shell call is a tool call on the
/// model's message, and its outcome the next user message's function response.
#[test]
fn a_gemini_agents_shell_calls_read_as_tool_calls_and_results() {
    let text = include_str!("../../../fixtures/gemini-cli-0.61.0/codex-review/session-2026-12-02T03-33-043b2553.jsonl");
    let records: Vec<Record> = text.lines().map(|l| parse_line(Host::GeminiCli, l.as_bytes()).unwrap()).collect();
    let calls: Vec<&Record> = records.iter().filter(|r| !r.tool_calls.is_empty()).collect();
    assert_eq!(calls.len(), 4, "marker, challenge, the reviewer, verify");
    let marker = &calls[0].tool_calls[0];
    assert_eq!(marker.name, "run_shell_command");
    assert_eq!(
        marker.command().as_deref(),
        Some("judge-evidence marker --binding run_20261202_9e3141a1_r1_review_5b2f9d01")
    );
    assert_eq!((calls[0].kind.as_str(), calls[0].model.as_deref()), ("gemini", Some("gemini-2.5-pro")));
    let outcomes: Vec<&Record> = records.iter().filter(|r| !r.tool_results.is_empty()).collect();
    assert_eq!(outcomes.len(), 4);
    let result = &outcomes[0].tool_results[0];
    assert_eq!((result.tool_call_id.as_ref(), result.success), (marker.id.as_ref(), true));
    assert!(result.text.contains(r#"{"binding": "run_20261202_9e3141a1_r1_review_5b2f9d01""#), "{}", result.text);
    assert_eq!(outcomes[0].kind, "user");
    assert!(outcomes[0].text.is_none(), "a function response is no prompt");
}

/// A Gemini CLI shell call failed when the client added `Exit Code: N` (N not 0) or
/// `Signal: …` after its output, or refused to run it.
#[test]
fn a_gemini_shell_call_fails_by_what_the_client_adds() {
    let outcome = |output: &str| {
        let line = json!({"id": "u", "timestamp": "t", "type": "user", "content": [
            {"functionResponse": {"id": "c", "name": "run_shell_command", "response": {"output": output}}}]});
        parse_line(Host::GeminiCli, line.to_string().as_bytes()).unwrap().tool_results[0].success
    };
    assert!(outcome("<untrusted_context>\nOutput: ok\nProcess Group PGID: 1\n</untrusted_context>"));
    assert!(!outcome("<untrusted_context>\nOutput: oops\nExit Code: 3\nProcess Group PGID: 1\n</untrusted_context>"));
    assert!(!outcome("<untrusted_context>\nOutput: \nSignal: 9\n</untrusted_context>"));
    assert!(
        !outcome(
            "Command injection detected: command substitution syntax ($(), backticks, <() or >()) found \
                      in command arguments."
        ),
        "refused, never run"
    );
}

/// The event each gated host ends at is one it sends, so the default `[gate] events` (and
/// its check of a config's entries) names only events a hook can see.
#[test]
fn every_host_a_hook_can_gate_sends_its_own_end_event() {
    for host in Host::ALL {
        let hooks = hooks(host);
        let sends_end = hooks.events().contains(&hooks.end_event().name);
        assert_eq!(sends_end, hooks.hears_block().is_some(), "{host:?}");
        assert!(hooks.unnamed_event().is_none_or(|event| hooks.events().contains(&event)), "{host:?}");
    }
    let sent = |name| HookEvent::of_any_host(name).is_some();
    assert!(sent("TaskCompleted") && sent("agentStop") && !sent("session.idle"));
    assert_eq!(HookEvent::sent_by(Host::CodexCli, "Stop"), HookEvent::sent_by(Host::ClaudeCode, "Stop"));
    assert_eq!(HookEvent::sent_by(Host::CodexCli, "TaskCompleted"), None);
}
