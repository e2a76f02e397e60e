//! The wire between `judged` and its clients (`judge-evidence`, `judge-hook`, `judged`'s
//! own subcommands), and where the socket lives.
//!
//! Every message is one frame ([`frame`]). A request is a [`WireRequest`]: the protocol
//! version, an id the response echoes, and one typed [`Request`]. The daemon answers
//! with a [`Response`] holding the reply type that request names, or an [`ErrorBody`].
//! [`call`] is the whole client: std-only, so the hook shim starts without an async
//! runtime.

#![warn(missing_docs)]

pub mod autostart;
pub mod config;
pub mod frame;
pub mod paths;
mod reply;
mod request;

pub use frame::{Connection, FrameError, MAX_FRAME_BYTES, SMALL_FRAME_BYTES};
pub use reply::*;
pub use request::*;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// The protocol spoken. 2: typed requests (every argument checked, none defaulted by
/// the daemon) and one `validate` operation for both artifact kinds.
pub const PROTOCOL_VERSION: u32 = 2;

/// A request on the wire: `{"v": 2, "id": 7, "op": "status", "args": null}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireRequest {
    /// The protocol version the client speaks.
    pub v: u32,
    /// Echoed in the response.
    pub id: u64,
    /// The operation and its arguments.
    #[serde(flatten)]
    pub request: Request,
}

/// The version and id of a request, read before the rest, so a client speaking another
/// version is told so rather than that its request is malformed.
#[derive(Clone, Copy, Debug, Deserialize)]
pub struct Header {
    /// The protocol version the client speaks.
    pub v: u32,
    /// Echoed in the response.
    #[serde(default)]
    pub id: u64,
}

/// Why a call got no reply.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing listens at the socket: the daemon is not running.
    #[error("judged is not running (no socket answers at {0})")]
    Unreachable(String),
    /// The socket is there, but this user may not use it (the daemon runs as another).
    #[error("the socket {0} is not this user's: judged serves only the user it runs as")]
    NotPermitted(String),
    /// The connection failed or carried something that is not a response.
    #[error("talking to judged: {0}")]
    Transport(#[from] FrameError),
    /// The daemon closed the connection without answering.
    #[error("judged closed the connection without answering")]
    NoAnswer,
    /// The daemon speaks another protocol version.
    #[error("judged speaks protocol {0}, this client {PROTOCOL_VERSION}; restart judged after an upgrade")]
    Version(u32),
    /// The daemon refused the request.
    #[error("{}", .0.message)]
    Refused(ErrorBody),
    /// The request holds a field longer than any real one; it was not sent.
    #[error("{0}")]
    Request(#[from] RequestError),
    /// The request is larger than one frame may be; it was not sent.
    #[error(
        "the request is {0} bytes, more than the {MAX_FRAME_BYTES} bytes judged takes in one request: \
         send less (a shorter description, a smaller file)"
    )]
    TooLarge(usize),
}

/// One request, one reply of type `T`, over a fresh connection.
pub fn call<T: DeserializeOwned>(socket: &Path, request: Request, timeout: Duration) -> Result<T, ClientError> {
    call_with_progress(socket, request, timeout, |_| {})
}

/// As [`call`], handing each progress frame that comes before the reply to `on_progress`;
/// `timeout` bounds each wait for a frame, not the whole call.
pub fn call_with_progress<T: DeserializeOwned>(
    socket: &Path,
    request: Request,
    timeout: Duration,
    mut on_progress: impl FnMut(JuryProgress),
) -> Result<T, ClientError> {
    request.check()?;
    let stream = UnixStream::connect(socket).map_err(|error| match error.kind() {
        std::io::ErrorKind::PermissionDenied => ClientError::NotPermitted(socket.display().to_string()),
        _ => ClientError::Unreachable(socket.display().to_string()),
    })?;
    stream.set_read_timeout(Some(timeout)).map_err(FrameError::Io)?;
    stream.set_write_timeout(Some(timeout)).map_err(FrameError::Io)?;
    let mut connection = Connection::new(stream);
    // A daemon that refuses this user answers why before it closes; read that rather
    // than the broken pipe a refused send leaves.
    let sent = match connection.send(&WireRequest { v: PROTOCOL_VERSION, id: 1, request }) {
        // Nothing was written: the daemon has nothing to answer, and would only close the
        // connection at its idle limit.
        Err(FrameError::TooLarge(len)) => return Err(ClientError::TooLarge(len)),
        Err(error @ FrameError::Malformed(_)) => return Err(ClientError::Transport(error)),
        sent => sent,
    };
    loop {
        let response: Response<T> = match connection.receive() {
            Ok(Some(response)) => response,
            Ok(None) => return Err(sent.err().map_or(ClientError::NoAnswer, ClientError::Transport)),
            Err(error) => return Err(sent.err().map_or(ClientError::Transport(error), ClientError::Transport)),
        };
        if response.v != PROTOCOL_VERSION {
            return Err(ClientError::Version(response.v));
        }
        match response.outcome {
            Outcome::Ok(reply) => return Ok(reply),
            Outcome::Error(body) => return Err(ClientError::Refused(body)),
            Outcome::Progress(progress) => on_progress(progress),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn parse(wire: Value) -> Result<WireRequest, serde_json::Error> {
        serde_json::from_value(wire)
    }

    /// A daemon that takes a connection and never answers (as judged waits for a frame
    /// until its idle limit).
    fn silent_daemon() -> (std::path::PathBuf, std::thread::JoinHandle<()>) {
        let socket = std::env::temp_dir().join(format!(
            "judged-silent-{}-{:?}.sock",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_file(&socket);
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let held = std::thread::spawn(move || {
            let Ok((stream, _)) = listener.accept() else { return };
            std::thread::sleep(Duration::from_secs(3));
            drop(stream);
        });
        (socket, held)
    }

    /// A request over the frame limit is never sent: the client says so at once rather
    /// than wait for an answer the daemon cannot give.
    #[test]
    fn an_oversized_request_is_refused_at_once_by_the_client() {
        let (socket, _held) = silent_daemon();
        let big = "t".repeat(MAX_FRAME_BYTES + 1);
        let request = Request::Panel(PanelArgs {
            rubric: "hallucination".into(),
            rubric_text: None,
            persona: None,
            artifact: big,
            cwd: "/w".into(),
            author_model: None,
            progress: false,
        });
        let started = std::time::Instant::now();
        let error = call::<Value>(&socket, request, Duration::from_secs(30)).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "answered after {:?}", started.elapsed());
        let said = error.to_string();
        assert!(said.contains("more than the 8388608 bytes judged takes in one request"), "{said}");
        let _ = std::fs::remove_file(&socket);
    }

    /// A field no real request holds that much of (a 10 MB cwd or session id) is refused by
    /// name before anything is sent.
    #[test]
    fn an_overlong_field_is_refused_by_name_before_sending() {
        let (socket, _held) = silent_daemon();
        let request = Request::GateStatus(GateStatusArgs {
            cwd: Some("/".repeat(10 * 1024 * 1024)),
            session_id: None,
            host: None,
        });
        let started = std::time::Instant::now();
        let said = call::<Value>(&socket, request, Duration::from_secs(30)).unwrap_err().to_string();
        assert!(started.elapsed() < Duration::from_secs(2), "answered after {:?}", started.elapsed());
        assert!(said.contains("`cwd` is 10485760 bytes, more than the 4096 a path may be"), "{said}");
        let session =
            Request::GateStatus(GateStatusArgs { cwd: None, session_id: Some("s".repeat(300).into()), host: None });
        let said = session.check().unwrap_err().to_string();
        assert!(said.contains("`session_id` is 300 bytes, more than the 256"), "{said}");
        let _ = std::fs::remove_file(&socket);
    }

    /// What the daemon journals for good (a trace's words, a jury's persona and rubric) is
    /// bounded where the request comes in: a served user could otherwise fill the
    /// witness's disk, which every user's decisions need.
    #[test]
    fn the_words_a_request_has_journaled_are_bounded() {
        let trace = |purpose: String, model: String| {
            let input = judged_core::trace::TraceInput { model, ..Default::default() };
            Request::Trace(TraceArgs {
                skill: "review".into(),
                purpose,
                trace_path: "/t/run".into(),
                call_number: 1,
                input,
                evidence: None,
                evidence_path: None,
                files: Default::default(),
            })
        };
        assert!(trace("check the cart".into(), "gpt-5".into()).check().is_ok());
        let said = trace("p".repeat(20_000), "gpt-5".into()).check().unwrap_err().to_string();
        assert!(said.contains("`purpose` is 20000 bytes, more than the 16384 a trace's purpose may be"), "{said}");
        let said = trace("p".into(), "m".repeat(300)).check().unwrap_err().to_string();
        assert!(said.contains("`input.model` is 300 bytes, more than the 256 a name may be"), "{said}");
        let panel = Request::Panel(PanelArgs {
            rubric: "code-review".into(),
            rubric_text: None,
            persona: Some("x".repeat(MAX_PROSE_BYTES + 1)),
            artifact: "diff".into(),
            cwd: "/p".into(),
            author_model: None,
            progress: false,
        });
        assert!(panel.check().unwrap_err().to_string().contains("`persona` is 16385 bytes"));
        // A round's own writes are compared with every changed file on the engine's thread,
        // and a verify's words are journaled with its evidence: a few, bounded.
        let challenge = |writes: usize| {
            Request::Challenge(ChallengeArgs {
                binding: "b".into(),
                cwd: "/p".into(),
                max_age_seconds: 60,
                session_root: None,
                started_at: chrono::Utc::now(),
                writes: (0..writes).map(|n| std::path::PathBuf::from(format!("/p/out{n}"))).collect(),
            })
        };
        assert!(challenge(2).check().is_ok());
        let said = challenge(180_000).check().unwrap_err().to_string();
        assert!(said.contains("`writes` has 180000 entries, more than the 4 a request may name"), "{said}");
        let verify = |model: &str| {
            Request::Verify(VerifyArgs {
                challenge: serde_json::Map::new().into(),
                response_path: "/p/r.md".into(),
                challenge_name: "c.json".into(),
                started_at: chrono::Utc::now(),
                writes: Vec::new(),
                declared_reviewer_model: Some(model.to_owned()),
            })
        };
        assert!(verify("gpt-5.4").check().is_ok());
        let said = verify(&"m".repeat(7_000_000)).check().unwrap_err().to_string();
        assert!(said.contains("`declared_reviewer_model` is 7000000 bytes, more than the 256 a name may be"), "{said}");
    }

    #[test]
    fn requests_are_op_and_args_on_the_wire() {
        let status = parse(json!({"v": 2, "id": 7, "op": "status", "args": null})).unwrap();
        assert!(matches!(status.request, Request::Status));
        assert!(matches!(parse(json!({"v": 2, "id": 7, "op": "status"})).unwrap().request, Request::Status));
        let events = parse(json!({"v": 2, "id": 1, "op": "events", "args": {"session": "s"}})).unwrap();
        assert!(matches!(events.request, Request::Events(EventsArgs { from: 1, limit: 1000, .. })));
        let wire = serde_json::to_value(WireRequest { v: 2, id: 3, request: Request::Shutdown }).unwrap();
        assert_eq!((wire["op"].as_str(), wire["id"].as_u64()), (Some("shutdown"), Some(3)));
    }

    #[test]
    fn a_wrong_typed_or_missing_argument_is_refused_not_defaulted() {
        let wrong = json!({"v": 2, "id": 1, "op": "events", "args": {"session": "s", "limit": "many"}});
        assert!(parse(wrong).is_err());
        let missing = json!({"v": 2, "id": 1, "op": "challenge", "args": {"binding": "b", "cwd": "/w"}});
        assert!(parse(missing).unwrap_err().to_string().contains("max_age_seconds"));
        assert!(parse(json!({"v": 2, "id": 1, "op": "no_such_op", "args": null})).is_err());
        let header: Header = serde_json::from_value(json!({"v": 999, "id": 4, "op": "no_such_op"})).unwrap();
        assert_eq!((header.v, header.id), (999, 4));
    }

    #[test]
    fn responses_carry_ok_or_error() {
        let ok: Response<Value> = serde_json::from_str(r#"{"v":2,"id":2,"ok":{"x":1}}"#).unwrap();
        assert!(matches!(ok.outcome, Outcome::Ok(_)));
        let err: Response<Value> =
            serde_json::from_str(r#"{"v":2,"id":2,"error":{"message":"m","exit_code":3}}"#).unwrap();
        assert!(matches!(err.outcome, Outcome::Error(ErrorBody { exit_code: Some(3), .. })));
        let stopping = serde_json::to_value(Reply::Stopping(Stopping { stopping: true })).unwrap();
        assert_eq!(stopping, json!({"stopping": true}), "a reply is its body alone");
    }

    /// A validation that derived nothing is the body an older daemon sends, and reads back
    /// as such; a derived review time travels beside the witness.
    #[test]
    fn a_validation_carries_a_derived_review_time_only_when_there_is_one() {
        let plain = Validation { witness_checked: true, derived_reviewed_at: None };
        assert_eq!(serde_json::to_value(&plain).unwrap(), json!({"witness_checked": true}));
        let old: Validation = serde_json::from_value(json!({"witness_checked": true})).unwrap();
        assert_eq!(old.derived_reviewed_at, None);
        let derived = json!({"witness_checked": true, "derived_reviewed_at": "2026-07-15T12:01:31.000Z"});
        let read: Validation = serde_json::from_value(derived).unwrap();
        assert_eq!(read.derived_reviewed_at.as_deref(), Some("2026-07-15T12:01:31.000Z"));
    }
}
