//! Gemini CLI `tmp/<project>/chats/session-<ts>-<id8>.jsonl` (0.61.0): a header line
//! `{sessionId, projectHash, startTime, lastUpdated, kind}`, then one line per message
//! (`{id, timestamp, type: "user" | "gemini" | …, content, model?}`) between `{"$set": …}`
//! patch lines. The first patch sets the opening message, the session context the client
//! writes, whose "Workspace Directories" list starts with the directory the client ran
//! in: the only place a recording names its cwd (`projectHash` is a digest of it).
//!
//! A record's kind is the message's `type`, `session` for the header and `$set` for a
//! patch.

use super::{Envelope, Fields, any_str, raw_non_empty, raw_str};
use crate::event::Record;
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

pub(super) fn envelope<'a>(fields: &Fields<'a>, line: &'a RawValue) -> (Envelope, Option<&'a RawValue>) {
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
        session_id,
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

pub(super) fn record(envelope: Envelope, line: &Map<String, Value>) -> Record {
    let mut record = Record { envelope, ..Record::default() };
    if matches!(record.kind.as_str(), "user" | "gemini") {
        record.text = line.get("content").and_then(text_of);
        // The requested (alias-resolved) model: the recording keeps no other.
        record.model = any_str(line, "model");
    }
    record
}
