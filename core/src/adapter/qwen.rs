//! Qwen Code `projects/<project>/chats/<session id>.jsonl` (0.24.4; docs/spec/host-formats.md
//! §I.1): one record a line, each with `uuid`, `parentUuid` (the record on the line before:
//! every record is on the chain), `sessionId`, `timestamp`, `type` and `cwd`. The
//! conversation is in `message.parts` (Gemini's shape): a `user` record's prompt as `text`,
//! an `assistant` record's answer as `text` or its tool calls as `functionCall`
//! (`{id, name, args}`), and a `tool_result` record's outcome as `functionResponse`
//! (`{id, name, response: {output}}`) beside `toolCallResult` (`status`, and for a shell
//! call `resultDisplay.exitCode`). An `assistant` record names the model the client asked
//! for in its own `model`; `system` records are the client's bookkeeping and telemetry.

use super::{
    ChainRule, DefaultRoot, EndEvent, Ends, Envelope, Fields, HearsBlock, HookEvent, HostHooks, HostLog, Layout, Level,
    LineError, ReviewedBy, ReviewerRun, RunAnswers, RunOpens, RunsOnce, any_str, non_empty_str, raw_non_empty, raw_str,
};
use crate::event::{Host, Record, SessionId, ToolCall, ToolResult};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

fn envelope<'a>(fields: &Fields<'a>, line: &'a RawValue) -> (Envelope, Option<&'a RawValue>) {
    let envelope = Envelope {
        kind: raw_str(fields.kind).unwrap_or_default(),
        id: raw_non_empty(fields.uuid),
        parent_id: raw_non_empty(fields.parent_uuid),
        agent_id: None,
        root: true,
        timestamp: raw_str(fields.timestamp),
        session_start: false,
        session_id: raw_non_empty(fields.session_id).map(SessionId::from),
        cwd: raw_non_empty(fields.cwd),
    };
    (envelope, Some(line))
}

fn record(envelope: Envelope, line: &Map<String, Value>) -> Record {
    let mut record = Record { envelope, ..Record::default() };
    let parts: Vec<&Map<String, Value>> = line
        .get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .collect();
    match record.kind.as_str() {
        "user" | "assistant" => {
            let texts: Vec<&str> = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
            record.text = (!texts.is_empty()).then(|| texts.concat());
            if record.kind == "assistant" {
                record.model = any_str(line, "model");
                record.tool_calls = parts
                    .iter()
                    .filter_map(|p| p.get("functionCall")?.as_object())
                    .map(|call| ToolCall {
                        id: non_empty_str(call, "id"),
                        name: any_str(call, "name").unwrap_or_default(),
                        arguments: call.get("args").cloned().unwrap_or(Value::Null),
                    })
                    .collect();
            }
        }
        // The client's telemetry of a model response names the model the server reported
        // (its answers name the one asked for): carried onto the answer that follows.
        "system" => {
            let event = line.get("systemPayload").and_then(|p| p.get("uiEvent"));
            if event.and_then(|e| e.get("event.name")).and_then(Value::as_str) == Some("qwen-code.api_response") {
                record.model = event.and_then(|e| e.get("model")).and_then(Value::as_str).map(str::to_owned);
            }
        }
        "tool_result" => {
            let outcome = line.get("toolCallResult").and_then(Value::as_object);
            record.tool_results = parts
                .iter()
                .filter_map(|p| p.get("functionResponse")?.as_object())
                .map(|response| {
                    let result = response.get("response").cloned().unwrap_or(Value::Null);
                    let id = non_empty_str(response, "id");
                    let text = result.get("output").and_then(Value::as_str).unwrap_or_default().to_owned();
                    let success = outcome.is_some_and(|o| succeeded(o, id.as_deref()));
                    ToolResult { tool_call_id: id, success, text, result, still_running: None }
                })
                .collect();
        }
        _ => {}
    }
    record
}

/// Whether the client's own account of call `id` says it succeeded: its `status` is
/// `success`, and a shell call's `resultDisplay` (the only one with an `exitCode`) says the
/// command exited 0 without a signal.
fn succeeded(outcome: &Map<String, Value>, id: Option<&str>) -> bool {
    let same_call = id.is_some() && outcome.get("callId").and_then(Value::as_str) == id;
    let display = outcome.get("resultDisplay").and_then(Value::as_object);
    let exited_zero = display
        .is_none_or(|d| d.get("exitCode").is_none_or(|code| code == 0) && d.get("signal").is_none_or(Value::is_null));
    same_call && outcome.get("status").and_then(Value::as_str) == Some("success") && exited_zero
}

pub(super) struct QwenCode;

/// `qwen -p`: the run's chat log, which records no end of its own.
const REVIEWER_RUN: ReviewerRun = ReviewerRun {
    key: "qwen",
    agent_name: "qwen-prompt",
    program: "qwen",
    package: "qwen-code/qwen-code",
    once: RunsOnce::Flag { words: &["-p", "--prompt"], prefixes: &["--prompt="] },
    name: "Qwen Code",
    command: "`qwen -p`",
    prompt_kind: "user",
    answer_kind: Some("assistant"),
    opens: RunOpens::FirstNamed,
    answers: RunAnswers::LastAnswer("assistant"),
};

impl HostLog for QwenCode {
    fn reviewer_run(&self) -> Option<&'static ReviewerRun> {
        Some(&REVIEWER_RUN)
    }

    /// Its runtime directory's `projects`: `$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, else
    /// `~/.qwen`.
    fn default_root(&self) -> DefaultRoot {
        DefaultRoot {
            vars: &[("QWEN_RUNTIME_DIR", "projects"), ("QWEN_HOME", "projects")],
            under_home: ".qwen/projects",
        }
    }

    /// `<project>/chats/<session id>.jsonl`; a project directory is its cwd with every
    /// character but letters and digits as `-`.
    fn layouts(&self) -> &'static [Layout] {
        &[&[Level::AnyDir, Level::Dir("chats"), Level::File { prefix: "", suffix: ".jsonl" }]]
    }

    fn root_noun(&self) -> &'static str {
        "Qwen Code projects"
    }

    fn roots_key(&self) -> &'static str {
        "qwen_roots"
    }

    fn ends(&self) -> Ends {
        Ends::Answer { answer: "assistant", reason_recorded: false }
    }

    fn log_noun(&self) -> &'static str {
        "chat log"
    }

    fn model_source(&self) -> &'static str {
        "qwen-chat"
    }

    fn name(&self) -> &'static str {
        "Qwen Code"
    }

    fn record_noun(&self) -> &'static str {
        "Qwen Code record"
    }

    fn chain(&self) -> Option<ChainRule> {
        Some(ChainRule {
            field: "parentUuid",
            title: "Qwen Code",
            own_log: "<session id>.jsonl under Qwen Code's projects/<project>/chats",
            lanes: false,
            opens_on_another: false,
        })
    }

    /// An answer's model is the one the server reported for the response it came in (the
    /// telemetry record before it), not the one the client asked for, when it says.
    fn carry(&self, carried: &mut super::Carried, record: &mut Record) {
        if record.kind == "system" && record.model.is_some() {
            carried.turn_model.clone_from(&record.model);
        } else if record.kind == "assistant" && carried.turn_model.is_some() {
            record.model = carried.turn_model.take();
        }
    }

    /// The record is the whole line: the model is beside `message`, not in it.
    fn envelope<'a>(&self, fields: &Fields<'a>, text: &'a str) -> Result<(Envelope, Option<&'a RawValue>), LineError> {
        Ok(envelope(fields, serde_json::from_str(text).map_err(|_| LineError::Malformed)?))
    }

    fn record(&self, envelope: Envelope, body: &Map<String, Value>) -> Record {
        record(envelope, body)
    }
}

/// Claude Code's hooks, as Qwen Code 0.24.4 runs them: its `Stop` hook's block (exit 2
/// or a `decision: block` object) sends the reason to the model, at most
/// `stopHookBlockingCap` (default 8) times in a row.
impl HostHooks for QwenCode {
    /// Qwen Code 0.24.4's hook events.
    fn events(&self) -> &'static [HookEvent] {
        hook_events![
            "PreToolUse",
            "PostToolUse",
            "PostToolUseFailure",
            "PostToolBatch",
            "Notification",
            "UserPromptSubmit",
            "UserPromptExpansion",
            "SessionStart",
            "Stop",
            "MessageDisplay",
            "SubagentStart",
            "SubagentStop",
            "PreCompact",
            "PostCompact",
            "SessionEnd",
            "SessionDelete",
            "PermissionRequest",
            "PermissionDenied",
            "StopFailure",
            "TodoCreated",
            "TodoCompleted",
            "InstructionsLoaded",
        ]
    }

    /// `codex exec`.
    fn reviewed_by(&self) -> &'static [ReviewedBy] {
        const REVIEWED_BY: &[ReviewedBy] = &[ReviewedBy::cli(Host::CodexCli)];
        REVIEWED_BY
    }

    fn end_event(&self) -> EndEvent {
        EndEvent { name: HookEvent("Stop"), name_shared: true }
    }

    fn hears_block(&self) -> Option<HearsBlock> {
        Some(HearsBlock::ExitTwo)
    }
}
