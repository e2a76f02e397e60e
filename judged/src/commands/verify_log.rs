//! `judged verify-log`: re-hash a session's ingested prefix; a rewritten or vanished log
//! fails the command.

use super::{call, print_json};
use crate::CliError;
use judged_protocol::{PrefixCheck, Request, SessionName};

pub fn run(session: String) -> Result<(), CliError> {
    let checked: PrefixCheck = call(Request::VerifyLog(SessionName { session: session.clone() }))?;
    print_json(&checked);
    if checked.tampered {
        Err(CliError::Tampered(session))
    } else if checked.vanished {
        Err(CliError::Vanished(session))
    } else {
        Ok(())
    }
}
