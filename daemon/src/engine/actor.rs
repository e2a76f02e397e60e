//! The engine's one owner: a thread that applies jobs in order. Async callers hand it a
//! job and await the reply; nothing else touches the engine.
//!
//! A request that needs the jury comes back from the engine as [`JuryWork`]; this module
//! runs it on a thread of its own and hands the packet back to the engine as one more
//! job, so the engine answers everything else while a jury sits. At most [`MAX_JURIES`]
//! sit at once (each runs juror processes, and a client can ask for juries faster than
//! they answer); the others wait their turn, the gate's first, and one whose asker has
//! gone meanwhile is not convened.

use super::route::Operation;
use super::{Engine, Handled, JuryWork};
use judged_protocol::{ErrorBody, PanelProgress, Reply};
use std::path::PathBuf;
use tokio::sync::{mpsc, oneshot};

type ReplyTo = oneshot::Sender<Result<Reply, ErrorBody>>;

/// Juries sitting at once.
const MAX_JURIES: usize = 4;

/// A jury waiting for a seat, with where its progress and its answer go.
type Seated = (JuryWork, Option<mpsc::UnboundedSender<PanelProgress>>, ReplyTo);

/// The juries sitting and those waiting for a seat.
#[derive(Default)]
struct Juries {
    sitting: usize,
    waiting: std::collections::VecDeque<Seated>,
}

impl Juries {
    /// Convene `jury` now, or when a seat is free.
    fn ask(&mut self, jury: Seated, back: &mpsc::WeakUnboundedSender<Job>) {
        if self.sitting < MAX_JURIES {
            // A jury that could not start sits nowhere (its asker hears that judged could
            // not answer: the gate's on_error rule).
            if convene(jury, back.clone()) {
                self.sitting += 1;
            }
        } else {
            self.waiting.push_back(jury);
        }
    }

    /// A jury has answered: its seat goes to the next one waiting whose asker still waits,
    /// the gate's before any other.
    fn done(&mut self, back: &mpsc::WeakUnboundedSender<Job>) {
        self.sitting -= 1;
        self.waiting.retain(|(_, _, reply)| !reply.is_closed());
        let gate = self.waiting.iter().position(|(work, _, _)| matches!(work.then, super::AfterJury::Gate(_)));
        if let Some(next) = gate.or((!self.waiting.is_empty()).then_some(0)).and_then(|at| self.waiting.remove(at)) {
            self.ask(next, back);
        }
    }
}

/// Work for the engine, with where its answer goes.
enum Job {
    Request {
        operation: Operation,
        progress: Option<mpsc::UnboundedSender<PanelProgress>>,
        reply: ReplyTo,
    },
    /// A watcher's hint (paths changed, or none: reconcile); answered with the roots.
    Follow(Vec<crate::ingest::Hint>, oneshot::Sender<Vec<PathBuf>>),
    /// A jury has answered: finish the request that waited for it.
    JuryDone(Box<JuryDone>),
    /// Read config.toml again (`SIGHUP`); answered once it is.
    ReloadConfig(oneshot::Sender<()>),
}

/// A jury's packet, the work it was, and who waits for the answer.
struct JuryDone {
    work: JuryWork,
    packet: judged_jury::packet::Packet,
    reply: ReplyTo,
}

/// A way to the engine. Cheap to clone; the engine stops once every handle is gone.
#[derive(Clone)]
pub struct EngineHandle {
    jobs: mpsc::UnboundedSender<Job>,
}

/// The engine's thread, joined to wait for the store's last commit and checkpoint.
pub struct EngineThread(std::thread::JoinHandle<()>);

impl EngineThread {
    /// Wait until the engine has stopped (every handle dropped). A jury still sitting
    /// then is not waited for: its answer has no one left to go to.
    pub fn join(self) {
        if self.0.join().is_err() {
            tracing::error!("the engine thread panicked while stopping");
        }
    }
}

impl EngineHandle {
    /// Start the engine on a thread of its own: it first recovers (re-checks the store,
    /// catches up with the logs, counting in `progress`), then serves the jobs that queued
    /// meanwhile, in order.
    pub fn spawn(
        mut engine: Engine,
        progress: std::sync::Arc<crate::ingest::CatchUpProgress>,
    ) -> std::io::Result<(EngineHandle, EngineThread)> {
        let (jobs, mut queue) = mpsc::unbounded_channel::<Job>();
        // Juries report back through this; it does not keep the engine running.
        let back = jobs.downgrade();
        let thread = std::thread::Builder::new().name("engine".into()).spawn(move || {
            let mut juries = Juries::default();
            if let Err(error) = engine.recover(&progress) {
                tracing::error!(%error, "catching up on start failed; serving what the store holds");
                progress.finish();
            }
            while let Some(job) = queue.blocking_recv() {
                match job {
                    Job::Request { operation, progress, reply } => match handle(&mut engine, operation) {
                        Ok(Handled::Answer(answer)) => {
                            let _ = reply.send(answer.map_err(ErrorBody::from));
                        }
                        Ok(Handled::Jury(work)) => juries.ask((work, progress, reply), &back),
                        Err(refusal) => {
                            let _ = reply.send(Err(refusal));
                        }
                    },
                    Job::Follow(paths, reply) => {
                        let _ = reply.send(engine.follow(&paths));
                    }
                    Job::ReloadConfig(reply) => {
                        engine.follow_config(true);
                        let _ = reply.send(());
                    }
                    Job::JuryDone(done) => {
                        juries.done(&back);
                        let JuryDone { work, packet, reply } = *done;
                        let answer = guarded(|| engine.after_jury(work, packet).map_err(ErrorBody::from));
                        let _ = reply.send(answer.and_then(|answer| answer));
                    }
                }
            }
        })?;
        Ok((EngineHandle { jobs }, EngineThread(thread)))
    }

    /// Have the engine apply a request's operation; its reply or refusal, with a jury's
    /// progress sent to `progress` meanwhile.
    pub async fn ask_with_progress(
        &self,
        operation: Operation,
        progress: Option<mpsc::UnboundedSender<PanelProgress>>,
    ) -> Result<Reply, ErrorBody> {
        let (reply, answer) = oneshot::channel();
        let stopped = || ErrorBody::message("judged is stopping");
        self.jobs.send(Job::Request { operation, progress, reply }).map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Have the engine read config.toml again, and wait until it has.
    pub async fn reload_config(&self) {
        let (reply, done) = oneshot::channel();
        if self.jobs.send(Job::ReloadConfig(reply)).is_ok() {
            let _ = done.await;
        }
    }

    /// Hand the engine a watcher's hint; the roots to watch, once it is followed.
    pub async fn follow(&self, paths: Vec<crate::ingest::Hint>) -> Vec<PathBuf> {
        let (reply, roots) = oneshot::channel();
        if self.jobs.send(Job::Follow(paths, reply)).is_err() {
            return Vec::new();
        }
        roots.await.unwrap_or_default()
    }
}

/// Run a jury on a thread of its own and give its packet back to the engine; whether it
/// started.
fn convene((work, progress, reply): Seated, back: mpsc::WeakUnboundedSender<Job>) -> bool {
    let spawned = std::thread::Builder::new().name("jury".into()).spawn(move || {
        let tell = |step: PanelProgress| {
            if let Some(progress) = &progress {
                let _ = progress.send(step);
            }
        };
        let packet = work.run.convene(&tell);
        match back.upgrade() {
            Some(engine) => {
                let _ = engine.send(Job::JuryDone(Box::new(JuryDone { work, packet, reply })));
            }
            None => tracing::warn!("a jury answered after judged stopped; its packet is not kept"),
        }
    });
    if let Err(error) = &spawned {
        tracing::error!(%error, "cannot start a jury thread");
    }
    spawned.is_ok()
}

/// One request, a panic in it answered as an internal error.
fn handle(engine: &mut Engine, operation: Operation) -> Result<Handled, ErrorBody> {
    guarded(|| engine.handle(operation))
}

/// Run `work`, a panic in it answered as an internal error: the engine goes on serving
/// the others (every change it makes commits in one transaction, so a request that
/// panicked left nothing half-written).
fn guarded<T>(work: impl FnOnce() -> T) -> Result<T, ErrorBody> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .map_err(|_| ErrorBody::message("internal error: the request panicked"))
}
