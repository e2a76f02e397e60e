//! Claude Code `projects/<dir>/<session>.jsonl` (and `subagents/agent-*.jsonl`).
//!
//! One assistant API response is written as several `assistant` records, one content
//! block each; tool results come back in `user` records as `tool_result` blocks.
//! Bookkeeping records (`queue-operation`, `last-prompt`, …) have no uuid and are kept
//! as records of their kind with nothing else set.

use super::{LineError, any_str, non_empty_str};
use crate::event::{Record, ToolCall, ToolResult};
use serde_json::{Map, Value};

pub(super) fn record(object: &Map<String, Value>) -> Result<Record, LineError> {
    let message = object.get("message").and_then(Value::as_object);
    let mut record = Record {
        kind: any_str(object, "type").unwrap_or_default(),
        id: non_empty_str(object, "uuid"),
        parent_id: non_empty_str(object, "parentUuid"),
        agent_id: non_empty_str(object, "agentId"),
        root: object.get("isSidechain") != Some(&Value::Bool(true)),
        timestamp: any_str(object, "timestamp"),
        session_id: non_empty_str(object, "sessionId"),
        cwd: non_empty_str(object, "cwd"),
        model: message.and_then(|m| any_str(m, "model")),
        ..Record::default()
    };
    // Only conversation records carry the conversation: bookkeeping records such as
    // `api-request-blob` echo earlier messages (and their tool results) verbatim.
    let conversation = matches!(record.kind.as_str(), "user" | "assistant");
    match message.filter(|_| conversation).and_then(|m| m.get("content")) {
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
    Ok(record)
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
