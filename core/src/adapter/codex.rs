//! Codex CLI `sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl` (docs/spec/host-formats.md §G): one
//! `{timestamp, type, payload}` record a line. `session_meta` opens the run (its id, cwd and
//! start); `turn_context` names the model *asked for* (the rollout never records which
//! model answered); `response_item` messages carry the prompt and the answer;
//! `event_msg` `task_complete` ends the turn with the last answer. A shell call is a
//! `response_item` `function_call` (`exec_command`, its `arguments` a JSON string), its
//! outcome the `function_call_output` of the same `call_id`.
//!
//! A record's kind is its `type` refined by its payload's: `response_item.message.user`,
//! `response_item.function_call`, `event_msg.task_complete`, `session_meta`. A response
//! item's own `id` (`fc_…`, `fco_…`, `msg_…`) is the record's id; other records have none.
//! The calls and answers of a turn carry no model: they take the one its `turn_context`
//! names (see [`crate::adapter::Carried`]).

use super::{
    Carried, DefaultRoot, EndEvent, Ends, Envelope, Fields, HearsBlock, HookEvent, HostHooks, HostLog, Layout, Level,
    LineError, ReviewedBy, ReviewerRun, RunAnswers, RunOpens, RunsOnce, SessionNamed, any_str, non_empty_str, raw_str,
};
use crate::event::{Host, Record, SessionId, ToolCall, ToolResult};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The payload fields the envelope needs.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Head {
    #[serde(rename = "type")]
    kind: Option<String>,
    role: Option<String>,
    id: Option<String>,
    cwd: Option<String>,
}

fn envelope<'a>(fields: &Fields<'a>) -> (Envelope, Option<&'a RawValue>) {
    let kind = raw_str(fields.kind).unwrap_or_default();
    let head: Head = fields.payload.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default();
    let session_start = kind == "session_meta";
    let id = head.id.clone().filter(|id| kind == "response_item" && !id.is_empty());
    let refined = match (head.kind.as_deref(), head.role.as_deref()) {
        (Some(sub), Some(role)) => format!("{kind}.{sub}.{role}"),
        (Some(sub), None) => format!("{kind}.{sub}"),
        _ => kind,
    };
    let envelope = Envelope {
        kind: refined,
        id,
        parent_id: None,
        agent_id: None,
        root: true,
        timestamp: raw_str(fields.timestamp),
        session_start,
        session_id: head.id.filter(|s| session_start && !s.is_empty()).map(SessionId::from),
        cwd: head.cwd.filter(|s| session_start && !s.is_empty()),
    };
    (envelope, fields.payload)
}

fn record(envelope: Envelope, payload: &Map<String, Value>) -> Record {
    let mut record = Record { envelope, ..Record::default() };
    match record.kind.as_str() {
        "turn_context" => record.model = any_str(payload, "model"),
        "event_msg.task_complete" => record.text = any_str(payload, "last_agent_message"),
        "response_item.function_call" => record.tool_calls.push(ToolCall {
            id: non_empty_str(payload, "call_id"),
            name: any_str(payload, "name").unwrap_or_default(),
            // A JSON string; kept as the string when it does not parse.
            arguments: match payload.get("arguments") {
                Some(Value::String(text)) => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
                other => other.cloned().unwrap_or(Value::Null),
            },
        }),
        "response_item.function_call_output" => {
            let output = payload.get("output").cloned().unwrap_or(Value::Null);
            let text = match &output {
                Value::String(text) => text.clone(),
                other => other.get("output").and_then(Value::as_str).unwrap_or_default().to_owned(),
            };
            record.tool_results.push(ToolResult {
                tool_call_id: non_empty_str(payload, "call_id"),
                success: exited_zero(&output, &text),
                still_running: still_running(&text),
                text,
                result: output,
            });
        }
        kind if kind.starts_with("response_item.message.") => {
            let texts: Vec<&str> = payload
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect();
            record.text = (!texts.is_empty()).then(|| texts.join("\n"));
        }
        _ => {}
    }
    record
}

/// The session a shell call's process still runs as, when its output's header says so
/// (`Process running with session ID N`).
fn still_running(text: &str) -> Option<u64> {
    let (header, _) = text.split_once("\nOutput:")?;
    header.lines().find_map(|line| line.trim().strip_prefix("Process running with session ID ")?.parse().ok())
}

/// Whether the model wrote a record of this kind: its calls and its answers.
fn written_by_the_model(kind: &str) -> bool {
    matches!(kind, "response_item.function_call" | "response_item.message.assistant")
}

/// Whether a shell call's output says its process exited with code 0: the header Codex CLI
/// writes before `Output:` (`Process exited with code 0`), or the legacy `shell` tool's
/// `metadata.exit_code` (an object, or one encoded in the string). Only the header counts:
/// what the command printed follows it, so a command cannot print its way to success. A
/// call whose process is still running (`Process running with session ID …`) has not
/// succeeded yet.
fn exited_zero(output: &Value, text: &str) -> bool {
    let encoded = text.starts_with('{').then(|| serde_json::from_str::<Value>(text).ok()).flatten();
    if let Some(code) = encoded.as_ref().unwrap_or(output).pointer("/metadata/exit_code") {
        return code.as_i64() == Some(0);
    }
    text.split_once("\nOutput:")
        .is_some_and(|(header, _)| header.lines().any(|line| line.trim() == "Process exited with code 0"))
}

pub(super) struct CodexCli;

/// `codex exec`: the run's rollout, its prompt a user message, its end the turn's.
const REVIEWER_RUN: ReviewerRun = ReviewerRun {
    key: "codex",
    agent_name: "codex-exec",
    program: "codex",
    package: "openai/codex",
    once: RunsOnce::Subcommand { first: "e", anywhere: Some("exec") },
    name: "Codex",
    command: "`codex exec`",
    prompt_kind: "response_item.message.user",
    answer_kind: Some("response_item.message.assistant"),
    opens: RunOpens::SessionStart,
    answers: RunAnswers::EndRecord("event_msg.task_complete"),
};

impl HostLog for CodexCli {
    fn reviewer_run(&self) -> Option<&'static ReviewerRun> {
        Some(&REVIEWER_RUN)
    }

    /// It appears when Codex is first used, and is picked up then.
    fn default_root(&self) -> DefaultRoot {
        DefaultRoot { vars: &[("CODEX_HOME", "sessions")], under_home: ".codex/sessions" }
    }

    /// `YYYY/MM/DD/rollout-<timestamp>-<thread id>.jsonl`.
    fn layouts(&self) -> &'static [Layout] {
        &[&[Level::AnyDir, Level::AnyDir, Level::AnyDir, Level::File { prefix: "rollout-", suffix: ".jsonl" }]]
    }

    fn root_noun(&self) -> &'static str {
        "Codex CLI sessions"
    }

    fn roots_key(&self) -> &'static str {
        "codex_roots"
    }

    /// A rollout opens with its `session_meta`.
    fn session_named(&self) -> SessionNamed {
        SessionNamed::InTheOpening { missing: "no session_meta with id and cwd" }
    }

    fn ends(&self) -> Ends {
        Ends::TaskComplete
    }

    fn log_noun(&self) -> &'static str {
        "rollout"
    }

    fn model_source(&self) -> &'static str {
        "codex-rollout"
    }

    fn name(&self) -> &'static str {
        "Codex CLI"
    }

    fn record_noun(&self) -> &'static str {
        "Codex CLI record"
    }

    fn envelope<'a>(&self, fields: &Fields<'a>, _text: &'a str) -> Result<(Envelope, Option<&'a RawValue>), LineError> {
        Ok(envelope(fields))
    }

    fn record(&self, envelope: Envelope, body: &Map<String, Value>) -> Record {
        record(envelope, body)
    }

    /// A `turn_context` names the model of its turn, and the turn's function calls and
    /// answers name none of their own.
    fn carry(&self, carried: &mut Carried, record: &mut Record) {
        if record.kind == "turn_context" {
            carried.turn_model.clone_from(&record.model);
        } else if record.model.is_none() && written_by_the_model(&record.kind) {
            record.model.clone_from(&carried.turn_model);
        }
    }
}

impl HostHooks for CodexCli {
    /// Codex CLI 0.169.0's hook events.
    fn events(&self) -> &'static [HookEvent] {
        hook_events![
            "SessionStart",
            "SessionEnd",
            "SubagentStart",
            "SubagentStop",
            "PreToolUse",
            "PermissionRequest",
            "PostToolUse",
            "PreCompact",
            "PostCompact",
            "UserPromptSubmit",
            "Stop",
            "Interrupt",
        ]
    }

    /// `copilot -p` with a Claude model, `claude -p`, `gemini -p`, `qwen -p` or `opencode run`.
    fn reviewed_by(&self) -> &'static [ReviewedBy] {
        const COPILOT: &str =
            "`copilot -p` with a model of another family than yours, such as `--model claude-sonnet-4.6`";
        // OpenCode records the prompt in double quotes: a nonce line that is its last
        // line ends in `"` and does not stand alone.
        const OPENCODE: &str = "`opencode run` with the nonce line before the prompt's last line";
        const REVIEWED_BY: &[ReviewedBy] = &[
            ReviewedBy { reviewer: Host::CopilotCli, run_as: Some(COPILOT) },
            ReviewedBy::cli(Host::ClaudeCode),
            ReviewedBy::cli(Host::GeminiCli),
            ReviewedBy::cli(Host::QwenCode),
            ReviewedBy { reviewer: Host::OpenCode, run_as: Some(OPENCODE) },
        ];
        REVIEWED_BY
    }

    fn end_event(&self) -> EndEvent {
        EndEvent { name: HookEvent("Stop"), name_shared: true }
    }

    fn mcp_client_word(&self) -> Option<&'static str> {
        Some("codex")
    }

    fn hears_block(&self) -> Option<HearsBlock> {
        Some(HearsBlock::DecisionObject)
    }

    fn blocks_uncapped(&self) -> bool {
        true
    }
}
