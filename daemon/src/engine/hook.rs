//! `hook`: a host's hook asks the review gate (the decision is [`crate::hook_gate`]'s; a
//! jury it needs runs off the engine's thread, see [`super::actor`]).

use super::{AfterJury, Engine, Handled, JuryWork};
use crate::caller::Caller;
use crate::hook_gate::GateAnswer;
use judged_protocol::{HookQuestion, Reply};

impl Engine {
    /// The gate's answer now, or the jury it waits for.
    pub(super) fn hook(&mut self, question: &HookQuestion, caller: Caller) -> Handled {
        // The gate of config.toml as it is now.
        self.follow_config(false);
        match self.hook_gate().answer(question, caller) {
            Ok(GateAnswer::Now(answer)) => Handled::Answer(Ok(Reply::Hook(answer))),
            Ok(GateAnswer::Jury(pending, run)) => Handled::Jury(JuryWork { run: *run, then: AfterJury::Gate(pending) }),
            Err(error) => Handled::Answer(Err(error.into())),
        }
    }
}
