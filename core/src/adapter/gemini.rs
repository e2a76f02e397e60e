//! Gemini CLI `tmp/<project>/chats/session-<ts>-<id8>.jsonl` (0.61.0): a header line
//! `{sessionId, projectHash, startTime, lastUpdated, kind}`, then one line per message
//! (`{id, timestamp, type: "user" | "gemini" | …, content, model?}`) between `{"$set": …}`
//! patch lines. The first patch sets the opening message, the session context the client
//! writes, whose "Workspace Directories" list starts with the directory the client ran
//! in: the only place a recording names its cwd (`projectHash` is a digest of it).
//!
//! A record's kind is the message's `type`, `session` for the header and `$set` for a
//! patch.
//!
//! A shell call is written once it has run: the model's message is recorded first without
//! it, then again (the same `id`, its own time: when the model answered) with `toolCalls`
//! (`{id, name: "run_shell_command", args: {command, …}, result, status}`); its outcome is
//! the next `user` message, a `functionResponse` part of the same `id` whose
//! `response.output` is `Output: …` and what the client adds after the command's output
//! (`Exit Code: N` when it failed, `Signal: …` when it was killed, `Process Group PGID:
//! …`).

use super::{
    DefaultRoot, EndEvent, Ends, Envelope, Fields, HearsBlock, HookEvent, HostHooks, HostLog, Layout, Level, LineError,
    ReviewedBy, ReviewerRun, RunAnswers, RunOpens, RunsOnce, SessionNamed, any_str, non_empty_str, raw_non_empty,
    raw_str,
};
use crate::event::{Host, Record, SessionId, ToolCall, ToolResult};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// What the session context says before the cwd, one line above it.
const WORKSPACE_HEADING: &str = "- **Workspace Directories:**\n";

/// The fields of a patch line the envelope needs: the messages it sets, if any.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Patch {
    messages: Vec<Message>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Message {
    content: Value,
}

fn envelope<'a>(fields: &Fields<'a>, line: &'a RawValue) -> (Envelope, Option<&'a RawValue>) {
    let session_id = raw_non_empty(fields.session_id);
    let (kind, session_start, timestamp, cwd) = match (&session_id, fields.set) {
        (Some(_), _) => ("session".to_owned(), true, raw_str(fields.start_time), None),
        (None, Some(set)) => {
            let patch: Patch = serde_json::from_str(set.get()).unwrap_or_default();
            ("$set".to_owned(), false, None, patch.messages.iter().find_map(|m| workspace(&m.content)))
        }
        (None, None) => (raw_str(fields.kind).unwrap_or_default(), false, raw_str(fields.timestamp), None),
    };
    let envelope = Envelope {
        kind,
        id: raw_non_empty(fields.id),
        parent_id: None,
        agent_id: None,
        root: true,
        timestamp,
        session_start,
        session_id: session_id.map(SessionId::from),
        cwd,
    };
    (envelope, Some(line))
}

/// The first workspace directory a session context names.
fn workspace(content: &Value) -> Option<String> {
    let text = text_of(content)?;
    let after = &text[text.find(WORKSPACE_HEADING)? + WORKSPACE_HEADING.len()..];
    let first = after.lines().next()?.trim_start().strip_prefix("- ")?.trim_end();
    (!first.is_empty()).then(|| first.to_owned())
}

/// A message's text: a string, or the `text` of its parts joined by `\n`.
fn text_of(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}

fn record(envelope: Envelope, line: &Map<String, Value>) -> Record {
    let mut record = Record { envelope, ..Record::default() };
    if matches!(record.kind.as_str(), "user" | "gemini") {
        record.text = line.get("content").and_then(text_of);
        // The requested (alias-resolved) model: the recording keeps no other.
        record.model = any_str(line, "model");
    }
    let calls = line.get("toolCalls").and_then(Value::as_array).into_iter().flatten();
    record.tool_calls = calls
        .filter(|_| record.kind == "gemini")
        .filter_map(Value::as_object)
        .map(|call| ToolCall {
            id: non_empty_str(call, "id"),
            name: any_str(call, "name").unwrap_or_default(),
            arguments: call.get("args").cloned().unwrap_or(Value::Null),
        })
        .collect();
    let parts = line.get("content").and_then(Value::as_array).into_iter().flatten();
    record.tool_results = parts
        .filter(|_| record.kind == "user")
        .filter_map(|part| part.get("functionResponse")?.as_object())
        .map(|response| {
            let result = response.get("response").cloned().unwrap_or(Value::Null);
            let text = result.get("output").and_then(Value::as_str).unwrap_or_default().to_owned();
            ToolResult {
                tool_call_id: non_empty_str(response, "id"),
                success: result.get("error").is_none_or(Value::is_null) && exited_zero(&text),
                text,
                result,
                still_running: None,
            }
        })
        .collect();
    record
}

/// Whether a shell call's output says its command ran and succeeded: a command that ran
/// has an `Output:` line (one the client refused to run, such as one with a command
/// substitution, has only the refusal, under `status: "success"` all the same), and the
/// client adds `Exit Code: N` after the output of a command that failed and `Signal: …`
/// after one it killed. A command that prints such a line itself is taken at its word,
/// which can only fail it.
fn exited_zero(output: &str) -> bool {
    let ran = output.lines().any(|line| line.starts_with("Output:"));
    ran && !output.lines().any(|line| {
        line.strip_prefix("Exit Code: ").is_some_and(|code| code.trim() != "0") || line.starts_with("Signal: ")
    })
}

pub(super) struct GeminiCli;

/// `gemini -p`: the run's recording, which records no end of its own.
const REVIEWER_RUN: ReviewerRun = ReviewerRun {
    key: "gemini",
    agent_name: "gemini-prompt",
    program: "gemini",
    package: "google/gemini-cli",
    once: RunsOnce::Flag { words: &["-p", "--prompt"], prefixes: &["--prompt="] },
    name: "Gemini CLI",
    command: "`gemini -p`",
    prompt_kind: "user",
    answer_kind: Some("gemini"),
    opens: RunOpens::SessionStart,
    answers: RunAnswers::LastAnswer("gemini"),
};

impl HostLog for GeminiCli {
    /// A shell call is written once it has run: the model's message again, with its
    /// `toolCalls` and their results.
    fn records_calls_when_returned(&self) -> bool {
        true
    }

    fn reviewer_run(&self) -> Option<&'static ReviewerRun> {
        Some(&REVIEWER_RUN)
    }

    /// `.gemini/tmp`: it appears when Gemini CLI is first used, and is picked up then.
    fn default_root(&self) -> DefaultRoot {
        DefaultRoot { vars: &[("GEMINI_CLI_HOME", ".gemini/tmp")], under_home: ".gemini/tmp" }
    }

    /// `<project>/chats/session-<timestamp>-<id8>.jsonl`; a project directory is named
    /// after its cwd's base name.
    fn layouts(&self) -> &'static [Layout] {
        &[&[Level::AnyDir, Level::Dir("chats"), Level::File { prefix: "session-", suffix: ".jsonl" }]]
    }

    fn root_noun(&self) -> &'static str {
        "Gemini CLI projects"
    }

    fn roots_key(&self) -> &'static str {
        "gemini_roots"
    }

    /// The header names the session; the session context its first patch sets, the cwd.
    fn session_named(&self) -> SessionNamed {
        SessionNamed::OpeningThenLater { missing: "no header with sessionId and no session context" }
    }

    fn ends(&self) -> Ends {
        Ends::Answer { answer: "gemini", reason_recorded: true }
    }

    fn log_noun(&self) -> &'static str {
        "recording"
    }

    fn model_source(&self) -> &'static str {
        "gemini-recording"
    }

    fn name(&self) -> &'static str {
        "Gemini CLI"
    }

    fn record_noun(&self) -> &'static str {
        "Gemini CLI record"
    }

    /// A recording's record is the whole line.
    fn envelope<'a>(&self, fields: &Fields<'a>, text: &'a str) -> Result<(Envelope, Option<&'a RawValue>), LineError> {
        Ok(envelope(fields, serde_json::from_str(text).map_err(|_| LineError::Malformed)?))
    }

    fn record(&self, envelope: Envelope, body: &Map<String, Value>) -> Record {
        record(envelope, body)
    }
}

impl HostHooks for GeminiCli {
    /// Gemini CLI 0.61.0's hook events.
    fn events(&self) -> &'static [HookEvent] {
        hook_events![
            "SessionStart",
            "SessionEnd",
            "Notification",
            "BeforeAgent",
            "AfterAgent",
            "BeforeModel",
            "AfterModel",
            "BeforeToolSelection",
            "BeforeTool",
            "AfterTool",
            "PreCompress",
        ]
    }

    /// `codex exec -`: Gemini CLI's shell refuses a command substitution, so the prompt
    /// is piped in.
    fn reviewed_by(&self) -> &'static [ReviewedBy] {
        const PIPED: &str = "`codex exec -`, the prompt piped in: a command substitution is refused";
        &[ReviewedBy { reviewer: Host::CodexCli, run_as: Some(PIPED) }]
    }

    /// The end of an agent turn.
    fn end_event(&self) -> EndEvent {
        EndEvent { name: HookEvent("AfterAgent"), name_shared: false }
    }

    fn hears_block(&self) -> Option<HearsBlock> {
        Some(HearsBlock::ExitTwo)
    }

    fn blocks_uncapped(&self) -> bool {
        true
    }
}
