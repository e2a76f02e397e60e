//! The local socket: accept, check the peer, read framed requests, answer.
//!
//! The socket lives in a 0700 directory and is created 0600; every connection is also
//! checked by peer credentials, so only the daemon's own uid is served. A bad frame gets
//! an error response and a close; it never takes the daemon down.

use crate::engine::Engine;
use interprocess::local_socket::tokio::{Stream, prelude::*};
use interprocess::local_socket::{GenericFilePath, ListenerOptions};
use interprocess::os::unix::local_socket::ListenerOptionsExt;
use judged_protocol::{ErrorBody, FrameError, Outcome, PROTOCOL_VERSION, Request, Response};
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

pub type Shared = Arc<Mutex<Engine>>;

/// Bind the socket (the caller has already made sure no live daemon owns it).
pub fn bind(path: &Path) -> std::io::Result<interprocess::local_socket::tokio::Listener> {
    let _ = std::fs::remove_file(path);
    let name = path.to_fs_name::<GenericFilePath>()?;
    ListenerOptions::new().name(name).mode(0o600).create_tokio()
}

/// Serve until `shutdown` turns true.
pub async fn serve(
    listener: interprocess::local_socket::tokio::Listener,
    engine: Shared,
    shutdown: watch::Sender<bool>,
) {
    let mut stop = shutdown.subscribe();
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok(stream) => {
                    let (engine, shutdown) = (engine.clone(), shutdown.clone());
                    tokio::spawn(async move { connection(stream, engine, shutdown).await });
                }
                Err(error) => tracing::warn!(%error, "accept failed"),
            },
        }
    }
}

async fn connection(stream: Stream, engine: Shared, shutdown: watch::Sender<bool>) {
    let own_uid = judged_core::files::current_uid();
    match stream.peer_creds().ok().and_then(|c| c.euid()) {
        Some(uid) if uid == own_uid => {}
        other => {
            tracing::warn!(peer_uid = ?other, "refusing a connection from another user");
            return;
        }
    }
    let mut stream = stream;
    loop {
        let body = match read_frame(&mut stream).await {
            Ok(Some(body)) => body,
            Ok(None) => return,
            Err(error) => {
                let _ = reply(&mut stream, 0, Outcome::Error(ErrorBody::message(error.to_string()))).await;
                return;
            }
        };
        let request: Request = match serde_json::from_slice(&body) {
            Ok(request) => request,
            Err(error) => {
                let message = format!("malformed request: {error}");
                let _ = reply(&mut stream, 0, Outcome::Error(ErrorBody::message(message))).await;
                return;
            }
        };
        let outcome = if request.v != PROTOCOL_VERSION {
            let message = format!("protocol {} is not spoken here (judged speaks {PROTOCOL_VERSION})", request.v);
            Outcome::Error(ErrorBody::message(message))
        } else if request.op == "shutdown" {
            // Answer first: once the server stops, this connection's task is dropped
            // with the runtime, and `judged stop` would read a closed socket.
            let _ = reply(&mut stream, request.id, Outcome::Ok(serde_json::json!({"stopping": true}))).await;
            let _ = shutdown.send(true);
            return;
        } else {
            // The engine blocks (SQLite, file reads) and serves one request at a time, so
            // the request runs on this worker, whose other tasks move to another thread
            // meanwhile: no hand-off to a blocking-pool thread and back, which cost more
            // than a typical request (bench: hook round trip). A panic is caught and
            // answered like the blocking pool's join error was.
            let answer = tokio::task::block_in_place(|| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let mut engine = engine.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    engine.handle(&request.op, &request.args)
                }))
            });
            match answer {
                Ok(Ok(value)) => Outcome::Ok(value),
                Ok(Err(error)) => Outcome::Error(error.into()),
                Err(_) => Outcome::Error(ErrorBody::message("internal error: the request panicked")),
            }
        };
        if reply(&mut stream, request.id, outcome).await.is_err() {
            return;
        }
    }
}

/// One frame, or `None` on a clean close before a header.
async fn read_frame(stream: &mut Stream) -> Result<Option<Vec<u8>>, FrameError> {
    let mut header = [0u8; 4];
    match stream.read_exact(&mut header).await {
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error.into()),
    }
    let mut body = vec![0u8; judged_protocol::body_len(header)?];
    stream.read_exact(&mut body).await?;
    Ok(Some(body))
}

async fn reply(stream: &mut Stream, id: u64, outcome: Outcome) -> Result<(), FrameError> {
    let response = Response { v: PROTOCOL_VERSION, id, outcome };
    let frame = judged_protocol::encode(&response).or_else(|error| {
        let message = format!("response too large: {error}");
        judged_protocol::encode(&Response {
            v: PROTOCOL_VERSION,
            id,
            outcome: Outcome::Error(ErrorBody::message(message)),
        })
    })?;
    stream.write_all(&frame).await?;
    Ok(())
}
