//! Claude Code `projects/<dir>/<session>.jsonl` (and `subagents/agent-*.jsonl`).
//!
//! One assistant API response is written as several `assistant` records, one content
//! block each; tool results come back in `user` records as `tool_result` blocks.
//! Bookkeeping records (`queue-operation`, `last-prompt`, …) have no uuid and are kept
//! as records of their kind with nothing else set.

use super::{
    ChainRule, DefaultRoot, EndEvent, Ends, Envelope, Fields, HearsBlock, HookEvent, HostHooks, HostLog, Layout, Level,
    LineError, ReviewedBy, ReviewerRun, RunAnswers, RunOpens, RunsOnce, any_str, non_empty_str, raw_non_empty, raw_str,
    stem,
};
use crate::event::{Host, Record, SessionId, ToolCall, ToolResult};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::path::Path;

fn envelope<'a>(fields: &Fields<'a>) -> (Envelope, Option<&'a RawValue>) {
    let kind = raw_str(fields.kind).unwrap_or_default();
    // Only conversation records carry the conversation: bookkeeping records such as
    // `api-request-blob` echo earlier messages (and their tool results) verbatim.
    let message = fields.message.filter(|_| matches!(kind.as_str(), "user" | "assistant"));
    let envelope = Envelope {
        id: raw_non_empty(fields.uuid),
        // A compaction record names no parent, and the record it continues from as its
        // logical parent: that is its place on the host's chain.
        parent_id: raw_non_empty(fields.parent_uuid).or_else(|| raw_non_empty(fields.logical_parent_uuid)),
        agent_id: raw_non_empty(fields.agent_id),
        root: fields.is_sidechain.is_none_or(|s| s.get() != "true"),
        timestamp: raw_str(fields.timestamp),
        session_id: raw_non_empty(fields.session_id).map(SessionId::from),
        cwd: raw_non_empty(fields.cwd),
        kind,
        session_start: false,
    };
    (envelope, message)
}

fn record(envelope: Envelope, message: &Map<String, Value>) -> Record {
    let mut record = Record { model: any_str(message, "model"), envelope, ..Record::default() };
    match message.get("content") {
        Some(Value::String(text)) => record.text = Some(text.clone()),
        Some(Value::Array(blocks)) => {
            for block in blocks.iter().filter_map(Value::as_object) {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => record.tool_calls.push(ToolCall {
                        id: non_empty_str(block, "id"),
                        name: any_str(block, "name").unwrap_or_default(),
                        arguments: block.get("input").cloned().unwrap_or(Value::Null),
                    }),
                    Some("tool_result") => {
                        let content = block.get("content").cloned().unwrap_or(Value::Null);
                        record.tool_results.push(ToolResult {
                            still_running: None,
                            tool_call_id: non_empty_str(block, "tool_use_id"),
                            success: block.get("is_error") != Some(&Value::Bool(true)),
                            text: content_text(&content),
                            result: content,
                        });
                    }
                    Some("text") if record.text.is_none() => record.text = any_str(block, "text"),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    record
}

/// A tool_result's content: a string, or the `text` of its text items joined by `\n`.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(items) => {
            items.iter().filter_map(|item| item.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

pub(super) struct ClaudeCode;

/// `claude -p`: the run's transcript, which records no end of its own.
const REVIEWER_RUN: ReviewerRun = ReviewerRun {
    key: "claude",
    agent_name: "claude-prompt",
    program: "claude",
    package: "anthropic-ai/claude-code",
    once: RunsOnce::Flag { words: &["-p", "--print"], prefixes: &[] },
    name: "Claude Code",
    command: "`claude -p`",
    prompt_kind: "user",
    answer_kind: Some("assistant"),
    opens: RunOpens::FirstNamed,
    answers: RunAnswers::LastAnswer("assistant"),
};

impl HostLog for ClaudeCode {
    fn reviewer_run(&self) -> Option<&'static ReviewerRun> {
        Some(&REVIEWER_RUN)
    }

    fn default_root(&self) -> DefaultRoot {
        DefaultRoot { vars: &[("CLAUDE_CONFIG_DIR", "projects")], under_home: ".claude/projects" }
    }

    /// `<project>/<session>.jsonl` and `<project>/<session>/subagents/agent-*.jsonl`.
    fn layouts(&self) -> &'static [Layout] {
        &[
            &[Level::AnyDir, Level::File { prefix: "", suffix: ".jsonl" }],
            &[
                Level::AnyDir,
                Level::AnyDir,
                Level::Dir("subagents"),
                Level::File { prefix: "agent-", suffix: ".jsonl" },
            ],
        ]
    }

    fn root_noun(&self) -> &'static str {
        "Claude Code projects"
    }

    fn roots_key(&self) -> &'static str {
        "claude_roots"
    }

    fn ends(&self) -> Ends {
        Ends::TaskUpdate { capped: HookEvent("Stop") }
    }

    fn log_noun(&self) -> &'static str {
        "transcript"
    }

    fn model_source(&self) -> &'static str {
        "claude-transcript"
    }

    fn name(&self) -> &'static str {
        "Claude Code"
    }

    fn record_noun(&self) -> &'static str {
        "Claude Code record"
    }

    fn chain(&self) -> Option<ChainRule> {
        Some(ChainRule {
            field: "parentUuid",
            title: "Claude Code",
            own_log: "<session id>.jsonl under Claude Code's projects",
            lanes: true,
            opens_on_another: true,
        })
    }

    /// A sub-agent's transcript `<session>/subagents/<agent>.jsonl` is `<session>/<agent>`.
    fn session_key(&self, path: &Path) -> String {
        let parent = path.parent();
        match parent.filter(|p| p.file_name().is_some_and(|n| n == "subagents")).and_then(Path::parent) {
            Some(session) => {
                let name = session.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                format!("{name}/{}", stem(path))
            }
            None => stem(path),
        }
    }

    fn envelope<'a>(&self, fields: &Fields<'a>, _text: &'a str) -> Result<(Envelope, Option<&'a RawValue>), LineError> {
        Ok(envelope(fields))
    }

    fn record(&self, envelope: Envelope, body: &Map<String, Value>) -> Record {
        record(envelope, body)
    }
}

impl HostHooks for ClaudeCode {
    /// Claude Code 2.1.328's hook events.
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
            "SessionEnd",
            "Stop",
            "StopFailure",
            "SubagentStart",
            "SubagentStop",
            "PreCompact",
            "PostCompact",
            "PreModelSwitch",
            "PostModelSwitch",
            "PermissionRequest",
            "PermissionDenied",
            "Setup",
            "TeammateIdle",
            "TaskCreated",
            "TaskCompleted",
            "Elicitation",
            "ElicitationResult",
            "ConfigChange",
            "WorktreeCreate",
            "WorktreeRemove",
            "InstructionsLoaded",
            "CwdChanged",
            "FileChanged",
            "DirectoryAdded",
            "MessageDisplay",
        ]
    }

    /// `codex exec`, or `copilot -p` with a GPT model.
    fn reviewed_by(&self) -> &'static [ReviewedBy] {
        const REVIEWED_BY: &[ReviewedBy] = &[ReviewedBy::cli(Host::CodexCli), ReviewedBy::cli(Host::CopilotCli)];
        REVIEWED_BY
    }

    /// A task set to completed (`TaskUpdate`); its `Stop` is opt-in.
    fn end_event(&self) -> EndEvent {
        EndEvent { name: HookEvent("TaskCompleted"), name_shared: false }
    }

    fn mcp_client_word(&self) -> Option<&'static str> {
        Some("claude")
    }

    fn hears_block(&self) -> Option<HearsBlock> {
        Some(HearsBlock::ExitTwo)
    }

    fn shell_tool(&self) -> &'static str {
        "Bash"
    }
}
