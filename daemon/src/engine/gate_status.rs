//! `gate_status`: what the gate needs now for a session and project (the lookups are
//! [`crate::hook_gate`]'s); nothing is decided or recorded.

use super::{Answer, Engine};
use crate::caller::Caller;
use judged_protocol::{GateStatusArgs, Reply};

impl Engine {
    pub(super) fn gate_status(&mut self, args: &GateStatusArgs, caller: Caller) -> Answer {
        // The gate of config.toml as it is now.
        self.follow_config(false);
        Ok(Reply::GateStatus(self.hook_gate().status(args, caller)?))
    }
}
