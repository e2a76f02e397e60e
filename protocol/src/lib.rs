//! The wire between `judged` and its clients (`judge-evidence`, `judge-hook`, `judged`'s
//! own subcommands), plus where the socket lives.
//!
//! A frame is a 4-byte big-endian length followed by that many bytes of JSON. Every
//! request carries the protocol version and an id the response echoes. Frames larger
//! than [`MAX_FRAME_BYTES`] are refused before any allocation. The client side here is
//! std-only, so the hook shim starts without an async runtime.

pub mod paths;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

pub const PROTOCOL_VERSION: u32 = 1;
/// Hard ceiling on one frame, either direction.
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

#[derive(Debug, Serialize, Deserialize)]
pub struct Request {
    pub v: u32,
    pub id: u64,
    pub op: String,
    #[serde(default)]
    pub args: Value,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Response {
    pub v: u32,
    pub id: u64,
    #[serde(flatten)]
    pub outcome: Outcome,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok(Value),
    Error(ErrorBody),
}

/// A refusal. `exit_code` is set when the error is an evidence decision the CLI must
/// report with that code (the same one direct mode would give).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u8>,
    /// For a refusal a later host write could change: how far the logs it read had got,
    /// so the client knows whether to ask again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_state: Option<judged_core::rules::LogState>,
}

impl ErrorBody {
    /// A refusal that is no evidence decision (a bad request, a transport failure).
    pub fn message(message: impl Into<String>) -> ErrorBody {
        ErrorBody { message: message.into(), exit_code: None, log_state: None }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("frame of {0} bytes exceeds the {MAX_FRAME_BYTES}-byte limit")]
    TooLarge(usize),
    #[error("malformed frame: {0}")]
    Malformed(#[from] serde_json::Error),
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Check a frame header and return the body length.
pub fn body_len(header: [u8; 4]) -> Result<usize, FrameError> {
    let len = u32::from_be_bytes(header) as usize;
    if len > MAX_FRAME_BYTES { Err(FrameError::TooLarge(len)) } else { Ok(len) }
}

/// Encode a message as one frame.
pub fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, FrameError> {
    let body = serde_json::to_vec(message)?;
    if body.len() > MAX_FRAME_BYTES {
        return Err(FrameError::TooLarge(body.len()));
    }
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    Ok(frame)
}

pub fn read_frame(reader: &mut impl Read) -> Result<Vec<u8>, FrameError> {
    let mut header = [0u8; 4];
    reader.read_exact(&mut header)?;
    let mut body = vec![0u8; body_len(header)?];
    reader.read_exact(&mut body)?;
    Ok(body)
}

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing listens at the socket: the daemon is not running.
    #[error("judged is not running (no socket answers at {0})")]
    Unreachable(String),
    #[error("talking to judged: {0}")]
    Frame(#[from] FrameError),
    #[error("judged speaks protocol {0}, this client {PROTOCOL_VERSION}")]
    Version(u32),
    #[error("{}", .0.message)]
    Refused(ErrorBody),
}

/// One request, one response, over a fresh connection.
pub fn call(socket: &Path, op: &str, args: Value, timeout: Duration) -> Result<Value, ClientError> {
    let mut stream = UnixStream::connect(socket).map_err(|_| ClientError::Unreachable(socket.display().to_string()))?;
    stream.set_read_timeout(Some(timeout)).map_err(FrameError::Io)?;
    stream.set_write_timeout(Some(timeout)).map_err(FrameError::Io)?;
    let request = Request { v: PROTOCOL_VERSION, id: 1, op: op.to_owned(), args };
    stream.write_all(&encode(&request)?).map_err(FrameError::Io)?;
    let response: Response = serde_json::from_slice(&read_frame(&mut stream)?).map_err(FrameError::Malformed)?;
    if response.v != PROTOCOL_VERSION {
        return Err(ClientError::Version(response.v));
    }
    match response.outcome {
        Outcome::Ok(value) => Ok(value),
        Outcome::Error(body) => Err(ClientError::Refused(body)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_oversize_is_refused_from_the_header() {
        let request = Request { v: PROTOCOL_VERSION, id: 7, op: "status".into(), args: Value::Null };
        let frame = encode(&request).unwrap();
        let body = read_frame(&mut frame.as_slice()).unwrap();
        let back: Request = serde_json::from_slice(&body).unwrap();
        assert_eq!((back.id, back.op.as_str()), (7, "status"));
        assert!(matches!(body_len((MAX_FRAME_BYTES as u32 + 1).to_be_bytes()), Err(FrameError::TooLarge(_))));
        assert!(matches!(read_frame(&mut &frame[..6]), Err(FrameError::Io(_))));
    }

    #[test]
    fn responses_carry_ok_or_error() {
        let ok: Response = serde_json::from_str(r#"{"v":1,"id":2,"ok":{"x":1}}"#).unwrap();
        assert!(matches!(ok.outcome, Outcome::Ok(_)));
        let err: Response = serde_json::from_str(r#"{"v":1,"id":2,"error":{"message":"m","exit_code":3}}"#).unwrap();
        assert!(matches!(err.outcome, Outcome::Error(ErrorBody { exit_code: Some(3), .. })));
    }
}
