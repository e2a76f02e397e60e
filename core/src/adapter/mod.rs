//! Host adapters: one raw log line in, one [`Record`] out.
//!
//! Each host's quirks stay in its own module; nothing downstream looks at raw JSON. A line
//! is read in two steps: the [`Envelope`] (the fields every record carries, read without
//! building the rest of the line, which is all ingest needs) and then, for a full
//! [`Record`], the host's body (`data` or `message`).

mod claude;
mod codex;
mod copilot;
mod gemini;

pub use crate::event::Envelope;
use crate::event::{Host, Record};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Why a line could not become a record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// Not UTF-8, or not JSON at all (a torn or garbled write).
    #[error("malformed JSON")]
    Malformed,
    /// Valid JSON, but an array, string or number where a record must be an object.
    #[error("non-object record")]
    NotAnObject,
    /// A field the host always writes as an object (Copilot's `data`) holds something
    /// else; the reference crashes there, so the line fails closed.
    #[error("`{0}` is not an object")]
    FieldNotAnObject(&'static str),
}

/// The top-level fields of every host, as unparsed JSON.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Fields<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(rename = "parentId", borrow)]
    parent_id: Option<&'a RawValue>,
    #[serde(rename = "agentId", borrow)]
    agent_id: Option<&'a RawValue>,
    #[serde(borrow)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
    #[serde(borrow)]
    uuid: Option<&'a RawValue>,
    #[serde(rename = "parentUuid", borrow)]
    parent_uuid: Option<&'a RawValue>,
    #[serde(rename = "logicalParentUuid", borrow)]
    logical_parent_uuid: Option<&'a RawValue>,
    #[serde(rename = "isSidechain", borrow)]
    is_sidechain: Option<&'a RawValue>,
    #[serde(rename = "sessionId", borrow)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    cwd: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
    #[serde(rename = "$set", borrow)]
    set: Option<&'a RawValue>,
    #[serde(rename = "startTime", borrow)]
    start_time: Option<&'a RawValue>,
}

/// Read the envelope of one line (without its terminator) of a `host` log.
pub fn envelope(host: Host, line: &[u8]) -> Result<Envelope, LineError> {
    read(host, line).map(|(envelope, _)| envelope)
}

/// Parse one line (without its terminator) of a `host` log.
pub fn parse_line(host: Host, line: &[u8]) -> Result<Record, LineError> {
    let (envelope, body) = read(host, line)?;
    let empty = Map::new();
    let body: Map<String, Value> = match body {
        Some(raw) if raw.get().starts_with('{') => serde_json::from_str(raw.get()).map_err(|_| LineError::Malformed)?,
        _ => empty,
    };
    Ok(match host {
        Host::CopilotCli => copilot::record(envelope, &body),
        Host::ClaudeCode => claude::record(envelope, &body),
        Host::CodexCli => codex::record(envelope, &body),
        Host::GeminiCli => gemini::record(envelope, &body),
    })
}

/// What a host states once for the records after it, carried onto them as a log is read
/// in order: Codex CLI's `turn_context` names the model of its turn, and the turn's
/// function calls and answers name none of their own.
#[derive(Clone, Debug, Default)]
pub struct Carried {
    turn_model: Option<String>,
}

impl Carried {
    /// Take what `record` states, and give it what it lacks.
    pub fn carry(&mut self, host: Host, record: &mut Record) {
        if host != Host::CodexCli {
            return;
        }
        if record.kind == "turn_context" {
            self.turn_model.clone_from(&record.model);
        } else if record.model.is_none() && codex::written_by_the_model(&record.kind) {
            record.model.clone_from(&self.turn_model);
        }
    }
}

/// The envelope and the host's body (`data`, `message`, `payload`, or Gemini CLI's whole
/// line), unparsed.
fn read(host: Host, line: &[u8]) -> Result<(Envelope, Option<&RawValue>), LineError> {
    let text = std::str::from_utf8(line).map_err(|_| LineError::Malformed)?;
    if !text.trim_start().starts_with('{') {
        return Err(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => LineError::NotAnObject,
            Err(_) => LineError::Malformed,
        });
    }
    let fields: Fields = serde_json::from_str(text).map_err(|_| LineError::Malformed)?;
    Ok(match host {
        Host::CopilotCli => copilot::envelope(&fields)?,
        Host::ClaudeCode => claude::envelope(&fields),
        Host::CodexCli => codex::envelope(&fields),
        Host::GeminiCli => gemini::envelope(&fields, serde_json::from_str(text).map_err(|_| LineError::Malformed)?),
    })
}

/// A raw JSON value as a string, when it is one.
fn raw_str(raw: Option<&RawValue>) -> Option<String> {
    raw.filter(|r| r.get().starts_with('"')).and_then(|r| serde_json::from_str(r.get()).ok())
}

fn raw_non_empty(raw: Option<&RawValue>) -> Option<String> {
    raw_str(raw).filter(|s| !s.is_empty())
}

/// Python truthiness of an optional raw JSON value.
fn raw_truthy(raw: Option<&RawValue>) -> bool {
    raw.is_some_and(|r| truthy(serde_json::from_str::<Value>(r.get()).ok().as_ref()))
}

fn non_empty_str(object: &Map<String, Value>, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

fn any_str(object: &Map<String, Value>, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Python truthiness of an optional JSON value.
fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

#[cfg(test)]
mod tests;
