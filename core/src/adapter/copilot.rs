//! GitHub Copilot CLI `session-state/<id>/events.jsonl`.
//!
//! Envelope `{type, data, id, timestamp, parentId, agentId?}`; sub-agent events carry the
//! child's `agentId` and are written to the same file (observed with 1.0.102).

use super::{LineError, any_str, non_empty_str, truthy};
use crate::event::{Record, SubagentEvent, SubagentPhase, ToolCall, ToolResult};
use serde_json::{Map, Value};

static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

pub(super) fn record(object: &Map<String, Value>) -> Result<Record, LineError> {
    let data = match object.get("data") {
        Some(Value::Object(data)) => data,
        value if !truthy(value) => &*EMPTY,
        // The reference crashes here; a non-object payload is malformed, fail closed.
        _ => return Err(LineError::FieldNotAnObject("data")),
    };
    let kind = any_str(object, "type").unwrap_or_default();
    let agent = object.get("agentId");
    let mut record = Record {
        id: non_empty_str(object, "id"),
        parent_id: non_empty_str(object, "parentId"),
        agent_id: agent.and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned),
        root: !truthy(agent),
        timestamp: any_str(object, "timestamp"),
        model: any_str(data, "model"),
        ..Record::default()
    };
    match kind.as_str() {
        "session.start" => {
            record.session_start = true;
            record.session_id = non_empty_str(data, "sessionId");
            record.cwd = data.get("context").and_then(Value::as_object).and_then(|c| non_empty_str(c, "cwd"));
        }
        "tool.execution_start" => record.tool_calls.push(ToolCall {
            id: non_empty_str(data, "toolCallId"),
            name: any_str(data, "toolName").unwrap_or_default(),
            arguments: data.get("arguments").cloned().unwrap_or(Value::Null),
        }),
        "tool.execution_complete" => {
            let result = data.get("result").cloned().unwrap_or(Value::Null);
            record.tool_results.push(ToolResult {
                tool_call_id: non_empty_str(data, "toolCallId"),
                success: data.get("success") == Some(&Value::Bool(true)),
                text: result_text(&result),
                result,
            });
        }
        "subagent.started" | "subagent.completed" | "subagent.failed" => {
            let phase = match kind.as_str() {
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
        "user.message" => record.text = any_str(data, "content"),
        _ => {}
    }
    record.kind = kind;
    Ok(record)
}

/// `content` and `detailedContent`, the string ones, joined by `\n`.
fn result_text(result: &Value) -> String {
    let Some(result) = result.as_object() else {
        return String::new();
    };
    ["content", "detailedContent"]
        .iter()
        .filter_map(|k| result.get(*k).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}
