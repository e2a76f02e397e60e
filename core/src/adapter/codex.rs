//! Codex CLI `sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl` (docs/spec/host-formats.md §G): one
//! `{timestamp, type, payload}` record a line. `session_meta` opens the run (its id, cwd and
//! start); `turn_context` names the model *asked for* (the rollout never records which
//! model answered); `response_item` messages carry the prompt and the answer;
//! `event_msg` `task_complete` ends the turn with the last answer.
//!
//! A record's kind is its `type` refined by its payload's: `response_item.message.user`,
//! `event_msg.task_complete`, `session_meta`.

use super::{Envelope, Fields, any_str, raw_str};
use crate::event::Record;
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

pub(super) fn envelope<'a>(fields: &Fields<'a>) -> (Envelope, Option<&'a RawValue>) {
    let kind = raw_str(fields.kind).unwrap_or_default();
    let head: Head = fields.payload.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default();
    let session_start = kind == "session_meta";
    let refined = match (head.kind.as_deref(), head.role.as_deref()) {
        (Some(sub), Some(role)) => format!("{kind}.{sub}.{role}"),
        (Some(sub), None) => format!("{kind}.{sub}"),
        _ => kind,
    };
    let envelope = Envelope {
        kind: refined,
        id: None,
        parent_id: None,
        agent_id: None,
        root: true,
        timestamp: raw_str(fields.timestamp),
        session_start,
        session_id: head.id.filter(|s| session_start && !s.is_empty()),
        cwd: head.cwd.filter(|s| session_start && !s.is_empty()),
    };
    (envelope, fields.payload)
}

pub(super) fn record(envelope: Envelope, payload: &Map<String, Value>) -> Record {
    let mut record = Record { envelope, ..Record::default() };
    match record.kind.as_str() {
        "turn_context" => record.model = any_str(payload, "model"),
        "event_msg.task_complete" => record.text = any_str(payload, "last_agent_message"),
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
