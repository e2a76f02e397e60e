//! The local socket: accept, check the peer, read framed requests, hand each to the
//! engine, answer.
//!
//! The socket lives in a 0700 directory and is created 0600; every connection is also
//! checked by peer credentials, so only the daemon's own uid is served. A bad frame gets
//! an error response and a close; it never takes the daemon down.

use crate::engine::actor::EngineHandle;
use interprocess::local_socket::tokio::{Stream, prelude::*};
use interprocess::local_socket::{GenericFilePath, ListenerOptions};
use interprocess::os::unix::local_socket::ListenerOptionsExt;
use judged_protocol::{
    Connection, Envelope, ErrorBody, FrameError, Header, Outcome, PROTOCOL_VERSION, Reply, Request, Response, Stopping,
};
use std::path::Path;
use tokio::sync::watch;

/// Bind the socket (the caller has already made sure no live daemon owns it).
pub fn bind(path: &Path) -> std::io::Result<interprocess::local_socket::tokio::Listener> {
    let _ = std::fs::remove_file(path);
    let name = path.to_fs_name::<GenericFilePath>()?;
    ListenerOptions::new().name(name).mode(0o600).create_tokio()
}

/// Serve until `shutdown` turns true.
pub async fn serve(
    listener: interprocess::local_socket::tokio::Listener,
    engine: EngineHandle,
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

/// A request as read: a typed envelope, or the answer to give instead.
fn parse(body: &[u8]) -> Result<Envelope, (u64, String)> {
    let header: Header = serde_json::from_slice(body).map_err(|error| (0, format!("malformed request: {error}")))?;
    if header.v != PROTOCOL_VERSION {
        return Err((
            header.id,
            format!("protocol {} is not spoken here (judged speaks {PROTOCOL_VERSION})", header.v),
        ));
    }
    serde_json::from_slice(body).map_err(|error| (header.id, format!("malformed request: {error}")))
}

async fn connection(stream: Stream, engine: EngineHandle, shutdown: watch::Sender<bool>) {
    let own_uid = judged_core::files::current_uid();
    match stream.peer_creds().ok().and_then(|c| c.euid()) {
        Some(uid) if uid == own_uid => {}
        other => {
            tracing::warn!(peer_uid = ?other, "refusing a connection from another user");
            return;
        }
    }
    let mut connection = Connection::new(stream);
    loop {
        let body = match connection.receive_async().await {
            Ok(Some(body)) => body,
            Ok(None) => return,
            Err(error) => {
                let _ = reply(&mut connection, 0, Outcome::Error(ErrorBody::message(error.to_string()))).await;
                return;
            }
        };
        let envelope = match parse(&body) {
            Ok(envelope) => envelope,
            Err((id, message)) => {
                let _ = reply(&mut connection, id, Outcome::Error(ErrorBody::message(message))).await;
                return;
            }
        };
        if let Request::Shutdown = envelope.request {
            // Answer first: once the server stops, this connection's task is dropped
            // with the runtime, and `judged stop` would read a closed socket.
            let stopping = Outcome::Ok(Reply::Stopping(Stopping { stopping: true }));
            let _ = reply(&mut connection, envelope.id, stopping).await;
            let _ = shutdown.send(true);
            return;
        }
        let wants_progress = matches!(&envelope.request, Request::Panel(args) if args.progress);
        let (progress, mut steps) = tokio::sync::mpsc::unbounded_channel();
        let asked = engine.ask_with_progress(envelope.request, wants_progress.then_some(progress));
        tokio::pin!(asked);
        // Progress frames while the engine (or a jury) works, then the answer.
        let answer = loop {
            tokio::select! {
                answer = &mut asked => break answer,
                Some(step) = steps.recv() => {
                    if reply(&mut connection, envelope.id, Outcome::Progress(step)).await.is_err() {
                        return;
                    }
                }
            }
        };
        // Steps told before the answer came, and not yet sent.
        while let Ok(step) = steps.try_recv() {
            if reply(&mut connection, envelope.id, Outcome::Progress(step)).await.is_err() {
                return;
            }
        }
        let outcome = match answer {
            Ok(answer) => Outcome::Ok(answer),
            Err(refusal) => Outcome::Error(refusal),
        };
        if reply(&mut connection, envelope.id, outcome).await.is_err() {
            return;
        }
    }
}

async fn reply(connection: &mut Connection<Stream>, id: u64, outcome: Outcome<Reply>) -> Result<(), FrameError> {
    match connection.send_async(&Response { v: PROTOCOL_VERSION, id, outcome }).await {
        Err(FrameError::TooLarge(len)) => {
            let message = format!("response too large: {len} bytes exceeds the frame limit");
            let refusal: Outcome<Reply> = Outcome::Error(ErrorBody::message(message));
            connection.send_async(&Response { v: PROTOCOL_VERSION, id, outcome: refusal }).await
        }
        sent => sent,
    }
}
