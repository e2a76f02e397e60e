//! Where each request is answered: the one match on [`Request`]. Two are the server's
//! own; every other is an [`Operation`] for the engine's thread, one function per
//! operation (each in its own file).

use super::{Answer, Engine, Handled};
use crate::caller::Caller;
use judged_protocol::Request;

/// Where a request is answered.
pub enum Dispatch {
    /// The catch-up's progress: by the server, from the counters it shares with the
    /// engine, so that it is answered while the engine is still catching up.
    Progress,
    /// Stop: by the server, which answers before it stops serving.
    Shutdown,
    /// Everything else: by the engine, on its thread ([`Engine::handle`]).
    Engine(Operation),
}

/// One request's work, for the engine's thread, and who asked.
pub struct Operation {
    work: Box<dyn FnOnce(&mut Engine) -> Handled + Send>,
    caller: Caller,
}

impl Dispatch {
    /// Where `request` is answered, and with what; `caller` is who asks (a directory it
    /// names is read for it only when it may be).
    pub fn of(request: Request, caller: Caller) -> Dispatch {
        let dispatch = match request {
            Request::Progress => Dispatch::Progress,
            Request::Shutdown => Dispatch::Shutdown,
            Request::Status => answer(Engine::status),
            Request::Sessions => answer(move |engine| engine.sessions(caller)),
            Request::Events(args) => answer(move |engine| engine.events(&args, caller)),
            Request::ChainHead(args) => answer(move |engine| engine.chain_head(&args, caller)),
            Request::VerifyLog(args) => answer(move |engine| engine.verify_log(&args.session, caller)),
            Request::Challenge(args) => answer(move |engine| engine.challenge(&args, caller)),
            Request::Verify(args) => answer(move |engine| engine.verify(&args, caller)),
            Request::Validate(args) => answer(move |engine| engine.validate(&args)),
            Request::Trace(args) => answer(move |engine| engine.trace(&args)),
            Request::Rebuild => answer(Engine::rebuild),
            Request::Decisions => answer(move |engine| engine.decisions(caller)),
            Request::Report(args) => answer(move |engine| engine.report(&args, caller)),
            Request::GateStatus(args) => answer(move |engine| engine.gate_status(&args, caller)),
            Request::Prune(args) => answer(move |engine| engine.prune(&args)),
            Request::Attest(args) => answer(move |engine| engine.attest(&args, caller)),
            Request::Hook(question) => operation(move |engine| engine.hook(&question, caller)),
            Request::Panel(args) => operation(move |engine| engine.panel(args, caller)),
            Request::Review(args) => operation(move |engine| engine.review(&args, caller)),
        };
        match dispatch {
            Dispatch::Engine(operation) => Dispatch::Engine(Operation { caller, ..operation }),
            other => other,
        }
    }
}

impl Operation {
    /// Who asked.
    pub(super) fn caller(&self) -> Caller {
        self.caller
    }

    pub(super) fn apply(self, engine: &mut Engine) -> Handled {
        // A witness reads trees for the user asking, and only theirs.
        let uid = match self.caller {
            Caller::Served(uid) => uid,
            Caller::Own => judged_io::files::current_uid(),
        };
        engine.trees.serve(uid);
        (self.work)(engine)
    }
}

/// An operation that may convene a jury; [`Dispatch::of`] names who asks.
fn operation(work: impl FnOnce(&mut Engine) -> Handled + Send + 'static) -> Dispatch {
    Dispatch::Engine(Operation { work: Box::new(work), caller: Caller::Own })
}

/// An operation answered at once, without a jury.
fn answer(work: impl FnOnce(&mut Engine) -> Answer + Send + 'static) -> Dispatch {
    operation(move |engine| Handled::Answer(work(engine)))
}
