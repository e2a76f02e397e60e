//! `review`: the jury convened on a project's work as the gate would convene it (the
//! question and its counting are [`crate::hook_gate`]'s; the run happens off the engine's
//! thread, see [`super::actor`]).

use super::{AfterJury, Engine, Handled, JuryWork};
use crate::caller::Caller;
use crate::hook_gate::{Counting, ReviewAsked};
use crate::store::JuryConvened;
use judged_protocol::{Reply, ReviewArgs, ReviewReply};
use std::path::PathBuf;

impl Engine {
    /// The review `args` asks for: its recorded verdict now, or a jury to convene.
    pub(super) fn review(&mut self, args: &ReviewArgs, caller: Caller) -> Handled {
        // The gate of config.toml as it is now.
        self.follow_config(false);
        let mut gate = self.hook_gate();
        let asked = gate
            .project(args.cwd.as_deref(), args.session_id.as_ref(), caller)
            .and_then(|cwd| gate.review(PathBuf::from(&cwd), args).map(|asked| (cwd, asked)));
        match asked {
            Ok((_, ReviewAsked::Recorded(convened, counting))) => {
                Handled::Answer(Ok(Reply::Review(review_reply(*convened, &counting, true))))
            }
            Ok((cwd, ReviewAsked::Jury(run, counting))) => {
                let then = AfterJury::Review { cwd, counting };
                Handled::Jury(JuryWork { run: *run, then })
            }
            Err(error) => Handled::Answer(Err(error.into())),
        }
    }
}

/// The reply to a review: its verdict, each juror, and what the gate makes of it.
pub(super) fn review_reply(convened: JuryConvened, counting: &Counting, from_record: bool) -> ReviewReply {
    let gate = counting.of(&convened);
    let tiebreaker_unavailable = convened.tiebreaker_unavailable.clone();
    let packet = convened.packet.clone();
    ReviewReply { jury: crate::jury::report_jury(convened), tiebreaker_unavailable, from_record, gate, packet }
}
