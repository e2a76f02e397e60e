//! GitHub Copilot CLI `session-state/<id>/events.jsonl`.
//!
//! Envelope `{type, data, id, timestamp, parentId, agentId?}`; sub-agent events carry the
//! child's `agentId` and are written to the same file (observed with 1.0.102).

use super::{
    ChainRule, DefaultRoot, EndEvent, Ends, Envelope, Fields, HearsBlock, HookEvent, HostHooks, HostLog, Layout, Level,
    LineError, ReviewerRun, RunAnswers, RunOpens, RunsOnce, SessionNamed, any_str, non_empty_str, raw_non_empty,
    raw_str, raw_truthy,
};
use crate::event::{Record, SessionId, SubagentEvent, SubagentPhase, ToolCall, ToolResult};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::path::Path;

/// `session.start`'s `data`, the part the envelope needs.
#[derive(Default, Deserialize)]
#[serde(default)]
struct SessionStart<'a> {
    #[serde(rename = "sessionId", borrow)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    context: Option<&'a RawValue>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Context<'a> {
    #[serde(borrow)]
    cwd: Option<&'a RawValue>,
}

fn envelope<'a>(fields: &Fields<'a>) -> Result<(Envelope, Option<&'a RawValue>), LineError> {
    let data = fields.data.filter(|d| d.get() != "null");
    // The reference crashes on a non-object `data`; a truthy one is malformed, fail closed.
    if let Some(data) = data
        && !data.get().starts_with('{')
        && raw_truthy(Some(data))
    {
        return Err(LineError::FieldNotAnObject("data"));
    }
    let kind = raw_str(fields.kind).unwrap_or_default();
    let mut envelope = Envelope {
        id: raw_non_empty(fields.id),
        parent_id: raw_non_empty(fields.parent_id),
        agent_id: raw_non_empty(fields.agent_id),
        root: !raw_truthy(fields.agent_id),
        timestamp: raw_str(fields.timestamp),
        session_start: kind == "session.start",
        ..Envelope::default()
    };
    if envelope.session_start
        && let Some(start) = data.and_then(|d| serde_json::from_str::<SessionStart>(d.get()).ok())
    {
        envelope.session_id = raw_non_empty(start.session_id).map(SessionId::from);
        let context = start.context.and_then(|c| serde_json::from_str::<Context>(c.get()).ok());
        envelope.cwd = raw_non_empty(context.and_then(|c| c.cwd));
    }
    envelope.kind = kind;
    Ok((envelope, data))
}

fn record(envelope: Envelope, data: &Map<String, Value>) -> Record {
    let mut record = Record { model: any_str(data, "model"), envelope, ..Record::default() };
    match record.envelope.kind.as_str() {
        "tool.execution_start" => record.tool_calls.push(ToolCall {
            id: non_empty_str(data, "toolCallId"),
            name: any_str(data, "toolName").unwrap_or_default(),
            arguments: data.get("arguments").cloned().unwrap_or(Value::Null),
        }),
        "tool.execution_complete" => {
            let result = data.get("result").cloned().unwrap_or(Value::Null);
            record.tool_results.push(ToolResult {
                still_running: None,
                tool_call_id: non_empty_str(data, "toolCallId"),
                success: data.get("success") == Some(&Value::Bool(true)),
                text: result_text(&result),
                result,
            });
        }
        "subagent.started" | "subagent.completed" | "subagent.failed" => {
            let phase = match record.envelope.kind.as_str() {
                "subagent.started" => SubagentPhase::Started,
                "subagent.completed" => SubagentPhase::Completed,
                _ => SubagentPhase::Failed,
            };
            record.subagent = Some(SubagentEvent {
                phase,
                tool_call_id: non_empty_str(data, "toolCallId"),
                agent_name: any_str(data, "agentName"),
                model: any_str(data, "model"),
            });
        }
        "user.message" | "assistant.message" => record.text = any_str(data, "content"),
        _ => {}
    }
    record
}

/// `content` and `detailedContent`, the string ones, joined by `\n`.
fn result_text(result: &Value) -> String {
    let Some(result) = result.as_object() else { return String::new() };
    ["content", "detailedContent"]
        .iter()
        .filter_map(|k| result.get(*k).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) struct CopilotCli;

/// `copilot -p`: the run's session log, ended by its shutdown.
const REVIEWER_RUN: ReviewerRun = ReviewerRun {
    key: "copilot",
    agent_name: "copilot-prompt",
    program: "copilot",
    package: "github/copilot",
    once: RunsOnce::Flag { words: &["-p", "--prompt"], prefixes: &["--prompt="] },
    name: "Copilot CLI",
    command: "`copilot -p`",
    prompt_kind: "user.message",
    answer_kind: Some("assistant.message"),
    opens: RunOpens::SessionStart,
    answers: RunAnswers::SessionEnd { answer: "assistant.message", error: "session.error", end: "session.shutdown" },
};

impl HostLog for CopilotCli {
    fn reviewer_run(&self) -> Option<&'static ReviewerRun> {
        Some(&REVIEWER_RUN)
    }

    fn default_root(&self) -> DefaultRoot {
        DefaultRoot { vars: &[("COPILOT_HOME", "session-state")], under_home: ".copilot/session-state" }
    }

    /// `<session id>/events.jsonl`.
    fn layouts(&self) -> &'static [Layout] {
        &[&[Level::AnyDir, Level::Named("events.jsonl")]]
    }

    fn root_noun(&self) -> &'static str {
        "Copilot CLI sessions"
    }

    fn roots_key(&self) -> &'static str {
        "copilot_roots"
    }

    fn session_named(&self) -> SessionNamed {
        SessionNamed::InOneOpening
    }

    fn ends(&self) -> Ends {
        Ends::TurnEnd
    }

    fn log_noun(&self) -> &'static str {
        "session log"
    }

    fn model_source(&self) -> &'static str {
        "copilot-session"
    }

    fn name(&self) -> &'static str {
        // The reference's word.
        "Copilot"
    }

    fn record_noun(&self) -> &'static str {
        "Copilot event"
    }

    fn chain(&self) -> Option<ChainRule> {
        Some(ChainRule {
            field: "parentId",
            title: "Copilot CLI",
            own_log: "events.jsonl under Copilot CLI's session-state",
            lanes: false,
            opens_on_another: false,
        })
    }

    /// A session is a directory holding its `events.jsonl`.
    fn session_key(&self, path: &Path) -> String {
        path.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    fn envelope<'a>(&self, fields: &Fields<'a>, _text: &'a str) -> Result<(Envelope, Option<&'a RawValue>), LineError> {
        envelope(fields)
    }

    fn record(&self, envelope: Envelope, body: &Map<String, Value>) -> Record {
        record(envelope, body)
    }
}

/// Reviewed by no CLI ([`HostHooks::reviewed_by`]): its reviewer is its own rubber-duck sub-agent, no CLI its agent runs.
impl HostHooks for CopilotCli {
    /// Copilot CLI 1.0.102's hook events, in its own camelCase.
    fn events(&self) -> &'static [HookEvent] {
        hook_events![
            "sessionStart",
            "sessionEnd",
            "userPromptSubmitted",
            "userPromptTransformed",
            "preToolUse",
            "postToolUse",
            "postToolUseFailure",
            "agentStop",
            "subagentStop",
            "subagentStart",
            "preCompact",
            "errorOccurred",
            "notification",
            "permissionRequest",
        ]
    }

    fn end_event(&self) -> EndEvent {
        EndEvent { name: HookEvent("agentStop"), name_shared: false }
    }

    /// Its `agentStop` payload names no event.
    fn unnamed_event(&self) -> Option<HookEvent> {
        Some(self.end_event().name)
    }

    fn mcp_client_word(&self) -> Option<&'static str> {
        Some("copilot")
    }

    fn hears_block(&self) -> Option<HearsBlock> {
        Some(HearsBlock::DecisionObject)
    }

    fn shell_tool(&self) -> &'static str {
        "Bash"
    }
}
