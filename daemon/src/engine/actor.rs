//! The engine's one owner: a thread that applies jobs in order. Async callers hand it a
//! job and await the reply; nothing else touches the engine.

use super::Engine;
use judged_protocol::{ErrorBody, Reply, Request};
use std::path::PathBuf;
use std::sync::mpsc;
use tokio::sync::oneshot;

/// Work for the engine, with where its answer goes.
enum Job {
    Request(Request, oneshot::Sender<Result<Reply, ErrorBody>>),
    /// A watcher's hint (paths changed, or none: reconcile); answered with the roots.
    Follow(Vec<PathBuf>, oneshot::Sender<Vec<PathBuf>>),
}

/// A way to the engine. Cheap to clone; the engine stops once every handle is gone.
#[derive(Clone)]
pub struct EngineHandle {
    jobs: mpsc::Sender<Job>,
}

/// The engine's thread, joined to wait for the store's last commit and checkpoint.
pub struct EngineThread(std::thread::JoinHandle<()>);

impl EngineThread {
    /// Wait until the engine has stopped (every handle dropped).
    pub fn join(self) {
        if self.0.join().is_err() {
            tracing::error!("the engine thread panicked while stopping");
        }
    }
}

impl EngineHandle {
    /// Start the engine on a thread of its own.
    pub fn spawn(mut engine: Engine) -> std::io::Result<(EngineHandle, EngineThread)> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new().name("engine".into()).spawn(move || {
            for job in queue {
                match job {
                    Job::Request(request, reply) => {
                        let _ = reply.send(apply(&mut engine, request));
                    }
                    Job::Follow(paths, reply) => {
                        let _ = reply.send(engine.follow(&paths));
                    }
                }
            }
        })?;
        Ok((EngineHandle { jobs }, EngineThread(thread)))
    }

    /// Ask the engine; its reply or refusal.
    pub async fn ask(&self, request: Request) -> Result<Reply, ErrorBody> {
        let (reply, answer) = oneshot::channel();
        let stopped = || ErrorBody::message("judged is stopping");
        self.jobs.send(Job::Request(request, reply)).map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    /// Hand the engine a watcher's hint; the roots to watch, once it is followed.
    pub async fn follow(&self, paths: Vec<PathBuf>) -> Vec<PathBuf> {
        let (reply, roots) = oneshot::channel();
        if self.jobs.send(Job::Follow(paths, reply)).is_err() {
            return Vec::new();
        }
        roots.await.unwrap_or_default()
    }
}

/// One request, a panic in it answered as an internal error: the engine goes on serving
/// the others (every change it makes commits in one transaction, so a request that
/// panicked left nothing half-written).
fn apply(engine: &mut Engine, request: Request) -> Result<Reply, ErrorBody> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine.handle(request))) {
        Ok(answer) => answer.map_err(ErrorBody::from),
        Err(_) => Err(ErrorBody::message("internal error: the request panicked")),
    }
}
