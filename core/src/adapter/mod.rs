//! Host adapters: one raw log line in, one [`Record`] out.
//!
//! Each host's quirks stay in its own module; nothing downstream looks at raw JSON.

mod claude;
mod copilot;

use crate::event::{Host, Record};
use serde_json::{Map, Value};

/// Why a line could not become a record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("malformed JSON")]
    Malformed,
    #[error("non-object record")]
    NotAnObject,
    #[error("`{0}` is not an object")]
    FieldNotAnObject(&'static str),
}

/// Parse one line (without its terminator) of a `host` log.
pub fn parse_line(host: Host, line: &[u8]) -> Result<Record, LineError> {
    let value: Value = serde_json::from_slice(line).map_err(|_| LineError::Malformed)?;
    let Value::Object(object) = value else {
        return Err(LineError::NotAnObject);
    };
    match host {
        Host::CopilotCli => copilot::record(&object),
        Host::ClaudeCode => claude::record(&object),
    }
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
