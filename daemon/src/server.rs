//! The local socket: accept, check the peer, read framed requests, hand each to the
//! engine, answer.
//!
//! The socket lives in a 0700 directory and is created 0600; every connection is also
//! checked by peer credentials, so only the daemon's own uid is served. A bad frame gets
//! an error response and a close; it never takes the daemon down.

use crate::caller::Caller;
use crate::config::ServerLimits;
use crate::engine::actor::EngineHandle;
use crate::engine::dispatch::{Dispatch, Operation};
use crate::ingest::CatchUpProgress;
use interprocess::local_socket::tokio::{Stream, prelude::*};
use interprocess::local_socket::{GenericFilePath, ListenerOptions};
use interprocess::os::unix::local_socket::ListenerOptionsExt;
use judged_protocol::{
    Connection, ErrorBody, FrameError, Header, MAX_FRAME_BYTES, Outcome, PROTOCOL_VERSION, Reply, Response,
    SMALL_FRAME_BYTES, Stopping, WireRequest, frame,
};
use std::ops::ControlFlow;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Semaphore, watch};

/// How long a refusal may take to write.
const REFUSAL_TIME: Duration = Duration::from_secs(5);
/// Descriptors kept for everything but connections: the store, logs being read, the
/// watcher, jurors' pipes.
const DESCRIPTORS_KEPT: u64 = 64;
/// The least time between two warnings about failing accepts.
const ACCEPT_WARNING_EVERY: Duration = Duration::from_secs(10);

/// Why the socket cannot be bound.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error("{} exists and is not a socket; move it away (judged will not delete it)", .0.display())]
    NotASocket(std::path::PathBuf),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Bind the socket. The caller holds the pid lock, so a socket already there is a dead
/// daemon's and is replaced; anything else at that path is refused, not deleted.
///
/// A daemon serving other users (`shared`) makes the socket connectable by all; who is
/// served is then the peer check's to say.
pub fn bind(path: &Path, shared: bool) -> Result<interprocess::local_socket::tokio::Listener, BindError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => std::fs::remove_file(path)?,
        Ok(_) => return Err(BindError::NotASocket(path.to_owned())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => return Err(error.into()),
    }
    let name = path.to_fs_name::<GenericFilePath>()?;
    let listener = ListenerOptions::new().name(name).mode(0o600).create_tokio()?;
    if shared {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
    }
    Ok(listener)
}

/// What every connection shares: the engine, the stop signal, and the limits.
#[derive(Clone)]
struct Shared {
    engine: EngineHandle,
    shutdown: watch::Sender<bool>,
    /// Read by `progress` without the engine, which is busy during the catch-up.
    catch_up: Arc<CatchUpProgress>,
    /// KiB of large frames that may be held, for all connections together.
    buffered: Arc<Semaphore>,
    /// What a possibly large answer holds of it while it is built and sent: a frame, or
    /// the whole budget when that is smaller.
    large_answer_kib: u32,
    idle: Duration,
    frame_time: Duration,
    /// The uids served besides the daemon's own (a witness under its own account).
    serves: Arc<[u32]>,
    /// What each served user may hold of the connections.
    shares: Arc<Shares>,
}

/// The connections each served user may hold at once: the limit shared evenly between
/// the served users and the daemon's own account, so that one user holding connections
/// open cannot keep the others' hooks from their answer. The daemon's own account and
/// root are not held to a share.
struct Shares {
    share: usize,
    held: std::sync::Mutex<std::collections::HashMap<u32, usize>>,
}

/// One connection counted against its user's share while it lives.
struct ShareHeld {
    shares: Arc<Shares>,
    uid: u32,
}

impl Shares {
    fn new(limit: usize, served: usize) -> Shares {
        Shares { share: (limit / (served + 1)).max(1), held: std::sync::Mutex::default() }
    }

    /// Count one more connection of `uid`; none when it holds its share already.
    fn take(self: &Arc<Self>, uid: u32) -> Option<ShareHeld> {
        let mut held = self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let count = held.entry(uid).or_default();
        if *count >= self.share {
            return None;
        }
        *count += 1;
        Some(ShareHeld { shares: Arc::clone(self), uid })
    }
}

impl Drop for ShareHeld {
    fn drop(&mut self) {
        let mut held = self.shares.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(count) = held.get_mut(&self.uid) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.uid);
            }
        }
    }
}

/// The connections the descriptor limit leaves room for, at most `wanted`.
fn connection_limit(wanted: usize) -> usize {
    let descriptors = rustix::process::getrlimit(rustix::process::Resource::Nofile).current.unwrap_or(u64::MAX);
    let room = descriptors.saturating_sub(DESCRIPTORS_KEPT).max(1);
    wanted.max(1).min(usize::try_from(room).unwrap_or(wanted))
}

/// Serve until `shutdown` turns true.
pub async fn serve(
    listener: interprocess::local_socket::tokio::Listener,
    engine: EngineHandle,
    shutdown: watch::Sender<bool>,
    limits: &ServerLimits,
    serves: &[u32],
    catch_up: Arc<CatchUpProgress>,
) {
    let mut stop = shutdown.subscribe();
    let limit = connection_limit(limits.max_connections);
    let connections = Arc::new(Semaphore::new(limit));
    let buffered_kib = limits.buffered_mib.saturating_mul(1024).min(Semaphore::MAX_PERMITS);
    let shared = Shared {
        engine,
        shutdown,
        catch_up,
        buffered: Arc::new(Semaphore::new(buffered_kib)),
        large_answer_kib: large_frame_kib(MAX_FRAME_BYTES).min(u32::try_from(buffered_kib).unwrap_or(u32::MAX)),
        idle: Duration::from_secs(limits.idle_seconds.max(1)),
        frame_time: Duration::from_secs(limits.frame_seconds.max(1)),
        serves: serves.into(),
        shares: Arc::new(Shares::new(limit, serves.len())),
    };
    // One descriptor kept free, so that when they run out the daemon can still accept a
    // connection to shed it, instead of spinning on an accept that keeps failing.
    let mut reserve = std::fs::File::open("/dev/null").ok();
    let mut failing = AcceptFailures::default();
    loop {
        tokio::select! {
            _ = stop.changed() => break,
            accepted = listener.accept() => match accepted {
                Ok(stream) => {
                    failing.recovered();
                    match connections.clone().try_acquire_owned() {
                        Ok(slot) => {
                            let shared = shared.clone();
                            tokio::spawn(async move {
                                connection(stream, shared).await;
                                drop(slot);
                            });
                        }
                        Err(_) => {
                            tokio::spawn(refuse(stream, format!(
                                "judged is serving its limit of {limit} connections; try again shortly"
                            )));
                        }
                    }
                }
                Err(error) => {
                    failing.note(&error);
                    let out_of_descriptors = matches!(error.raw_os_error(), Some(libc::EMFILE | libc::ENFILE));
                    if out_of_descriptors && reserve.take().is_some() {
                        // Use the reserved descriptor to take one waiting connection off the
                        // queue and close it, then keep one free again.
                        if let Ok(Ok(stream)) = tokio::time::timeout(Duration::from_millis(10), listener.accept()).await {
                            drop(stream);
                        }
                        reserve = std::fs::File::open("/dev/null").ok();
                    }
                    tokio::time::sleep(failing.pause()).await;
                }
            },
        }
    }
}

/// Failing accepts in a row: waited on longer each time, and warned about at most every
/// [`ACCEPT_WARNING_EVERY`].
#[derive(Default)]
struct AcceptFailures {
    in_a_row: u32,
    unreported: u64,
    warned: Option<Instant>,
}

impl AcceptFailures {
    fn note(&mut self, error: &std::io::Error) {
        self.in_a_row = self.in_a_row.saturating_add(1);
        self.unreported += 1;
        if self.warned.is_none_or(|at| at.elapsed() >= ACCEPT_WARNING_EVERY) {
            tracing::warn!(%error, failures = self.unreported, "accept failed; backing off");
            self.unreported = 0;
            self.warned = Some(Instant::now());
        }
    }

    fn recovered(&mut self) {
        self.in_a_row = 0;
    }

    /// 10 ms after the first failure, doubling to 1 s.
    fn pause(&self) -> Duration {
        Duration::from_millis(10u64.saturating_mul(1 << self.in_a_row.min(7)).min(1000))
    }
}

/// Answer a connection with one refusal and close it.
async fn refuse(stream: Stream, message: String) {
    let mut connection = Connection::new(stream);
    let refusal: Outcome<Reply> = Outcome::Error(ErrorBody::message(message));
    let _ = reply(&mut connection, 0, refusal, &Writes::refusal()).await;
}

/// A request as read: a typed request, or the answer to give instead.
fn parse(body: &[u8]) -> Result<WireRequest, (u64, String)> {
    let header: Header = serde_json::from_slice(body).map_err(|error| (0, format!("malformed request: {error}")))?;
    if header.v != PROTOCOL_VERSION {
        return Err((
            header.id,
            format!("protocol {} is not spoken here (judged speaks {PROTOCOL_VERSION})", header.v),
        ));
    }
    serde_json::from_slice(body).map_err(|error| (header.id, format!("malformed request: {error}")))
}

/// Serve one connection: its requests one after another, until it closes, idles too
/// long or sends a bad frame.
async fn connection(stream: Stream, shared: Shared) {
    let Some((stream, peer)) = admitted(stream, &shared.serves).await else { return };
    let _share = if peer.administers {
        None
    } else {
        let Some(held) = shared.shares.take(peer.uid) else {
            let message = format!(
                "this judged (a witness account) gives each user it serves {} connections at once, and you (uid {}) \
                 hold them all; close one (a hook or judge-evidence call still waiting), then try again",
                shared.shares.share, peer.uid
            );
            return refuse(stream, message).await;
        };
        Some(held)
    };
    let mut connection = Connection::new(stream);
    while let Some(asked) = receive(&mut connection, &shared).await {
        if answer(&mut connection, asked, peer, &shared).await.is_break() {
            return;
        }
    }
}

/// Who a connection is from.
#[derive(Clone, Copy)]
struct Peer {
    uid: u32,
    /// The daemon's own account, or root: the one who may stop it.
    administers: bool,
}

impl Peer {
    /// Who the engine reads for: a served user has only its own directories read.
    fn caller(self) -> Caller {
        if self.administers { Caller::Own } else { Caller::Served(self.uid) }
    }
}

/// The stream and its peer, when the peer is the daemon's own user or one it serves;
/// otherwise it is refused, saying why.
async fn admitted(stream: Stream, serves: &[u32]) -> Option<(Stream, Peer)> {
    let own_uid = judged_io::files::current_uid();
    let other = match stream.peer_creds().ok().and_then(|c| c.euid()) {
        // Root may read and stop any daemon (and is told so when refused a stop).
        Some(uid) if uid == own_uid || uid == 0 || serves.contains(&uid) => {
            return Some((stream, Peer { uid, administers: uid == own_uid || uid == 0 }));
        }
        other => other,
    };
    tracing::warn!(peer_uid = ?other, "refusing a connection from another user");
    let from = other.map_or_else(|| "unknown".to_owned(), |uid| uid.to_string());
    let message = if serves.is_empty() {
        format!("judged serves only the user it runs as (uid {own_uid}); this connection is from uid {from}")
    } else {
        let served: Vec<String> = serves.iter().map(u32::to_string).collect();
        format!(
            "this judged (the witness account, uid {own_uid}) serves uids {}; this connection is from uid {from}: \
             ask whoever runs it to add your user to [server] allow_users",
            served.join(", ")
        )
    };
    let _ =
        reply(&mut Connection::new(stream), 0, Outcome::Error(ErrorBody::message(message)), &Writes::refusal()).await;
    None
}

/// The next request, within the limits; none once the connection is closed, idle too
/// long, or sent a frame that was answered with an error.
async fn receive(connection: &mut Connection<Stream>, shared: &Shared) -> Option<WireRequest> {
    let len = match tokio::time::timeout(shared.idle, connection.receive_header_async()).await {
        Err(_) | Ok(Ok(None)) => return None, // idle too long, or closed
        Ok(Ok(Some(len))) => len,
        Ok(Err(error)) => return refused(connection, 0, error.to_string()).await,
    };
    // Frames up to SMALL_FRAME_BYTES are read without reserving: the connection limit
    // bounds them. A larger frame's announced bytes are held against what all clients
    // may buffer together before its body is read, and the client has a bounded time
    // to be given them and send them.
    let kib = large_frame_kib(len);
    let body = tokio::time::timeout(shared.frame_time, async {
        let held = shared.buffered.acquire_many(kib).await;
        (held, connection.receive_body_async(len).await)
    })
    .await;
    let (held, body) = match body {
        Ok((held, Ok(body))) => (held, body),
        Ok((_, Err(error))) => return refused(connection, 0, error.to_string()).await,
        Err(_) => {
            let message = format!(
                "the frame was not taken within {} s (sent too slowly, or judged is holding its limit of large requests)",
                shared.frame_time.as_secs()
            );
            return refused(connection, 0, message).await;
        }
    };
    let parsed = parse(&body);
    drop((body, held));
    match parsed {
        // The client refuses these before sending; one that did not is told the same.
        Ok(asked) => match asked.request.check() {
            Ok(()) => Some(asked),
            Err(error) => refused(connection, asked.id, error.to_string()).await,
        },
        Err((id, message)) => refused(connection, id, message).await,
    }
}

/// Answer a frame that cannot be served with an error; the connection is then closed.
async fn refused(connection: &mut Connection<Stream>, id: u64, message: String) -> Option<WireRequest> {
    let _ = reply(connection, id, Outcome::Error(ErrorBody::message(message)), &Writes::refusal()).await;
    None
}

/// Answer one request where [`Dispatch::of`] says; break when the connection is to close.
async fn answer(
    connection: &mut Connection<Stream>,
    asked: WireRequest,
    peer: Peer,
    shared: &Shared,
) -> ControlFlow<()> {
    let WireRequest { id, request, .. } = asked;
    if request.is_administrative() && !peer.administers {
        let message = format!(
            "this judged is a witness account's and serves you (uid {}), but only its own account or root may stop, \
             rebuild or prune it: `sudo systemctl stop judged`, or ask whoever runs it",
            peer.uid
        );
        let refused = reply(connection, id, Outcome::Error(ErrorBody::message(message)), &shared.writes()).await;
        return if refused.is_err() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) };
    }
    let wants_progress = request.wants_progress();
    // An answer that may fill a frame is built only once the budget of large frames holds
    // one for it: clients that never read theirs (each answer waits the idle limit to be
    // taken) cost the daemon that budget at most, where each held its answer before.
    let held = match request.answer_may_be_large() {
        true => match tokio::time::timeout(shared.idle, shared.buffered.acquire_many(shared.large_answer_kib)).await {
            Ok(Ok(held)) => Some(held),
            _ => {
                let message = format!(
                    "judged is holding its limit of large answers for other clients (waited {} s); ask again",
                    shared.idle.as_secs()
                );
                let refusal = Outcome::Error(ErrorBody::message(message));
                let refused = reply(connection, id, refusal, &Writes::refusal()).await;
                return if refused.is_err() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) };
            }
        },
        false => None,
    };
    let writes = if held.is_some() { Writes { within: shared.idle, budget: None } } else { shared.writes() };
    let sent = match Dispatch::of(request, peer.caller()) {
        Dispatch::Progress => {
            reply(connection, id, Outcome::Ok(Reply::CatchUp(shared.catch_up.report())), &shared.writes()).await
        }
        Dispatch::Shutdown => {
            // Answer first: once the server stops, this connection's task is dropped
            // with the runtime, and `judged stop` would read a closed socket.
            let stopping = Outcome::Ok(Reply::Stopping(Stopping { stopping: true }));
            let _ = reply(connection, id, stopping, &shared.writes()).await;
            let _ = shared.shutdown.send(true);
            return ControlFlow::Break(());
        }
        Dispatch::Engine(operation) => relay(connection, id, shared, operation, wants_progress, &writes).await,
    };
    if sent.is_err() { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
}

/// Have the engine apply `operation`, sending its progress frames while it (or a jury)
/// works, then its answer.
async fn relay(
    connection: &mut Connection<Stream>,
    id: u64,
    shared: &Shared,
    operation: Operation,
    wants_progress: bool,
    writes: &Writes<'_>,
) -> Result<(), FrameError> {
    let (progress, mut steps) = tokio::sync::mpsc::unbounded_channel();
    let asked = shared.engine.ask_with_progress(operation, wants_progress.then_some(progress));
    tokio::pin!(asked);
    let answer = loop {
        tokio::select! {
            answer = &mut asked => break answer,
            Some(step) = steps.recv() => reply(connection, id, Outcome::Progress(step), &shared.writes()).await?,
        }
    };
    // Steps told before the answer came, and not yet sent.
    while let Ok(step) = steps.try_recv() {
        reply(connection, id, Outcome::Progress(step), &shared.writes()).await?;
    }
    let outcome = match answer {
        Ok(answer) => Outcome::Ok(answer),
        Err(refusal) => Outcome::Error(refusal),
    };
    reply(connection, id, outcome, writes).await
}

/// How answers are written. A client that does not read its answer must not hold the
/// daemon: the answer is written within a deadline (the idle limit), after which the
/// connection is dropped; and a large answer's bytes are held against the budget of large
/// frames (the one requests share), so clients that never drain theirs cost the daemon
/// that budget at most, and small answers (a hook's, `status`) are never held up.
struct Writes<'a> {
    within: Duration,
    /// KiB of large frames that may be held, for all connections together.
    budget: Option<&'a Semaphore>,
}

impl Writes<'_> {
    /// For a refusal: a small answer, written within [`REFUSAL_TIME`].
    fn refusal() -> Writes<'static> {
        Writes { within: REFUSAL_TIME, budget: None }
    }
}

impl Shared {
    /// How a served connection's answers are written: within the idle limit, a large one
    /// held against the budget requests share.
    fn writes(&self) -> Writes<'_> {
        Writes { within: self.idle, budget: Some(&self.buffered) }
    }
}

/// The KiB a frame of `len` bytes holds against the budget of large frames: none up to
/// [`SMALL_FRAME_BYTES`] (the connection limit bounds those).
fn large_frame_kib(len: usize) -> u32 {
    if len > SMALL_FRAME_BYTES { u32::try_from(len.div_ceil(1024)).unwrap_or(u32::MAX) } else { 0 }
}

async fn reply(
    connection: &mut Connection<Stream>,
    id: u64,
    outcome: Outcome<Reply>,
    writes: &Writes<'_>,
) -> Result<(), FrameError> {
    let frame = match frame::encode(&Response { v: PROTOCOL_VERSION, id, outcome }) {
        Err(FrameError::TooLarge(len)) => {
            let message = format!("response too large: {len} bytes exceeds the frame limit");
            let refusal: Outcome<Reply> = Outcome::Error(ErrorBody::message(message));
            frame::encode(&Response { v: PROTOCOL_VERSION, id, outcome: refusal })?
        }
        encoded => encoded?,
    };
    let kib = large_frame_kib(frame.len());
    let sent = tokio::time::timeout(writes.within, async {
        let _held = match (writes.budget, kib) {
            (Some(budget), 1..) => Some(budget.acquire_many(kib).await),
            _ => None,
        };
        connection.send_frame_async(&frame).await
    })
    .await;
    sent.unwrap_or_else(|_| {
        let why = format!("the answer was not taken within {} s; the connection is closed", writes.within.as_secs());
        Err(FrameError::Io(std::io::Error::new(std::io::ErrorKind::TimedOut, why)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_served_user_holds_at_most_its_share_and_gets_it_back_as_connections_close() {
        // 8 connections, two served users and the daemon's own account: 2 each.
        let shares = Arc::new(Shares::new(8, 2));
        let (first, second) = (shares.take(1001).unwrap(), shares.take(1001).unwrap());
        assert!(shares.take(1001).is_none(), "a third connection of the same user");
        assert!(shares.take(1002).is_some(), "another user's connection is not held up");
        drop(first);
        let again = shares.take(1001);
        assert!(again.is_some(), "a closed connection frees its place");
        drop((second, again));
        assert!(shares.held.lock().unwrap().is_empty(), "nothing is counted once all are closed");
        assert_eq!(Shares::new(1, 5).share, 1, "a share is never none");
    }
}
