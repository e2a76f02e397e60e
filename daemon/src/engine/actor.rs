//! The engine's one owner: a thread that applies jobs in order. Async callers hand it a
//! job and await the reply; nothing else touches the engine.
//!
//! A request that needs the jury comes back from the engine as [`JuryWork`]; this module
//! runs it on a thread of its own and hands the packet back to the engine as one more
//! job, so the engine answers everything else while a jury sits. At most [`MAX_JURIES`]
//! sit at once (each runs juror processes, and a client can ask for juries faster than
//! they answer); the others wait their turn, the gate's first, and one whose asker has
//! gone meanwhile is not convened.
//!
//! A witness serves several users through one engine: the jobs waiting are taken a user
//! at a time, in turn ([`Lanes`]), and a served user holds at most half the jury's seats,
//! so that one user's flood of requests or juries does not stand between another user's
//! hook and its answer.

use super::dispatch::Operation;
use super::{Engine, Handled, JuryWork};
use crate::caller::Caller;
use judged_protocol::{ErrorBody, JuryProgress, Reply};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use tokio::sync::{mpsc, oneshot};

type ReplyTo = oneshot::Sender<Result<Reply, ErrorBody>>;

/// Juries sitting at once.
const MAX_JURIES: usize = 4;

/// The seats a served user's juries may hold at once: half, so that another user's gate
/// always finds one within a jury's time.
const MAX_JURIES_OF_A_SERVED_USER: usize = MAX_JURIES / 2;

/// A jury waiting for a seat: who asked, and where its progress and its answer go.
struct Seated {
    work: JuryWork,
    caller: Caller,
    progress: Option<mpsc::UnboundedSender<JuryProgress>>,
    reply: ReplyTo,
}

/// The juries sitting (by who asked) and those waiting for a seat.
#[derive(Default)]
struct Juries {
    sitting: HashMap<Caller, usize>,
    waiting: VecDeque<Seated>,
}

impl Juries {
    /// Convene `jury` now, or when a seat is free for it.
    fn ask(&mut self, jury: Seated, back: &mpsc::WeakUnboundedSender<Job>) {
        if self.seat_for(jury.caller) {
            let caller = jury.caller;
            // A jury that could not start sits nowhere (its asker hears that judged could
            // not answer: the gate's on_error rule).
            if convene(jury, back.clone()) {
                *self.sitting.entry(caller).or_default() += 1;
            }
        } else {
            self.waiting.push_back(jury);
        }
    }

    /// Whether a jury `caller` asked for may sit now.
    fn seat_for(&self, caller: Caller) -> bool {
        let sitting: usize = self.sitting.values().sum();
        let own = self.sitting.get(&caller).copied().unwrap_or(0);
        sitting < MAX_JURIES && (caller == Caller::Own || own < MAX_JURIES_OF_A_SERVED_USER)
    }

    /// A jury `caller` asked for has answered: the seats free go to the next ones waiting
    /// whose askers still wait and may sit, the gate's before any other.
    fn done(&mut self, caller: Caller, back: &mpsc::WeakUnboundedSender<Job>) {
        if let Some(sitting) = self.sitting.get_mut(&caller) {
            *sitting -= 1;
        }
        self.waiting.retain(|jury| !jury.reply.is_closed());
        loop {
            let may_sit = |jury: &Seated| self.seat_for(jury.caller);
            let gate = self.waiting.iter().position(|j| may_sit(j) && matches!(j.work.then, super::AfterJury::Gate(_)));
            let Some(at) = gate.or_else(|| self.waiting.iter().position(may_sit)) else { return };
            let Some(next) = self.waiting.remove(at) else { return };
            self.ask(next, back);
        }
    }
}

/// The jobs waiting for the engine, by who asked: taken a caller at a time, in turn (the
/// daemon's own jobs, a watcher's hints among them, are the daemon's own account's).
#[derive(Default)]
struct Lanes {
    queued: HashMap<Caller, VecDeque<Job>>,
    /// The callers with jobs waiting, in the order they take their turn.
    turns: VecDeque<Caller>,
}

impl Lanes {
    fn push(&mut self, job: Job) {
        let caller = job.caller();
        let lane = self.queued.entry(caller).or_default();
        if lane.is_empty() {
            self.turns.push_back(caller);
        }
        lane.push_back(job);
    }

    /// The next job: the first of the caller whose turn it is, who then goes last.
    fn next(&mut self) -> Option<Job> {
        let caller = self.turns.pop_front()?;
        let lane = self.queued.get_mut(&caller)?;
        let job = lane.pop_front();
        if lane.is_empty() {
            self.queued.remove(&caller);
        } else {
            self.turns.push_back(caller);
        }
        job
    }
}

/// Work for the engine, with where its answer goes.
enum Job {
    Request {
        operation: Operation,
        progress: Option<mpsc::UnboundedSender<JuryProgress>>,
        reply: ReplyTo,
    },
    /// A watcher's hint (paths changed, or none: reconcile); answered with the roots.
    Follow(Vec<crate::ingest::Hint>, oneshot::Sender<Vec<PathBuf>>),
    /// A jury has answered: finish the request that waited for it.
    JuryDone(Box<JuryDone>),
    /// Read config.toml again (`SIGHUP`); answered once it is.
    ReloadConfig(oneshot::Sender<()>),
}

/// A jury's packet, the work it was, who asked and who waits for the answer.
struct JuryDone {
    work: JuryWork,
    caller: Caller,
    packet: judged_jury::packet::Packet,
    reply: ReplyTo,
}

impl Job {
    /// Whose job it is: a request's asker; the daemon's own for the rest (a jury's answer
    /// finishes a request already taken in its turn).
    fn caller(&self) -> Caller {
        match self {
            Job::Request { operation, .. } => operation.caller(),
            Job::Follow(..) | Job::JuryDone(_) | Job::ReloadConfig(_) => Caller::Own,
        }
    }
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
            let mut lanes = Lanes::default();
            loop {
                // Everything queued now takes its place in its caller's lane; with
                // nothing waiting, wait for the next job.
                while let Ok(job) = queue.try_recv() {
                    lanes.push(job);
                }
                let job = match lanes.next() {
                    Some(job) => job,
                    None => match queue.blocking_recv() {
                        Some(job) => job,
                        None => break,
                    },
                };
                match job {
                    Job::Request { operation, progress, reply } => {
                        let caller = operation.caller();
                        match handle(&mut engine, operation) {
                            Ok(Handled::Answer(answer)) => {
                                let _ = reply.send(answer.map_err(ErrorBody::from));
                            }
                            Ok(Handled::Jury(work)) => juries.ask(Seated { work, caller, progress, reply }, &back),
                            Err(refusal) => {
                                let _ = reply.send(Err(refusal));
                            }
                        }
                    }
                    Job::Follow(paths, reply) => {
                        let _ = reply.send(engine.follow(&paths));
                    }
                    Job::ReloadConfig(reply) => {
                        engine.follow_config(true);
                        let _ = reply.send(());
                    }
                    Job::JuryDone(done) => {
                        let JuryDone { work, caller, packet, reply } = *done;
                        juries.done(caller, &back);
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
        progress: Option<mpsc::UnboundedSender<JuryProgress>>,
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
fn convene(Seated { work, caller, progress, reply }: Seated, back: mpsc::WeakUnboundedSender<Job>) -> bool {
    let spawned = std::thread::Builder::new().name("jury".into()).spawn(move || {
        let tell = |step: JuryProgress| {
            if let Some(progress) = &progress {
                let _ = progress.send(step);
            }
        };
        let packet = work.run.convene(&tell);
        match back.upgrade() {
            Some(engine) => {
                let _ = engine.send(Job::JuryDone(Box::new(JuryDone { work, caller, packet, reply })));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::dispatch::Dispatch;

    fn asked_by(caller: Caller) -> Job {
        let Dispatch::Engine(operation) = Dispatch::of(judged_protocol::Request::Status, caller) else {
            panic!("the engine's")
        };
        Job::Request { operation, progress: None, reply: oneshot::channel().0 }
    }

    /// One user's flood of requests does not stand between another's and the engine: the
    /// jobs waiting are taken a caller at a time, in turn.
    #[test]
    fn the_jobs_waiting_are_taken_a_caller_at_a_time() {
        let (flooding, other) = (Caller::Served(1001), Caller::Served(1002));
        let mut lanes = Lanes::default();
        for caller in [flooding, flooding, flooding, other, Caller::Own] {
            lanes.push(asked_by(caller));
        }
        let order: Vec<Caller> = std::iter::from_fn(|| lanes.next()).map(|job| job.caller()).collect();
        assert_eq!(order, [flooding, other, Caller::Own, flooding, flooding]);
    }

    /// A served user's juries hold at most half the seats; the daemon's own account may
    /// fill them all.
    #[test]
    fn a_served_user_holds_at_most_half_the_jurys_seats() {
        let mut juries = Juries::default();
        juries.sitting.insert(Caller::Served(1001), MAX_JURIES_OF_A_SERVED_USER);
        assert!(!juries.seat_for(Caller::Served(1001)));
        assert!(juries.seat_for(Caller::Served(1002)) && juries.seat_for(Caller::Own));
        juries.sitting.insert(Caller::Own, MAX_JURIES - MAX_JURIES_OF_A_SERVED_USER);
        assert!(!juries.seat_for(Caller::Served(1002)) && !juries.seat_for(Caller::Own), "every seat is taken");
    }
}
