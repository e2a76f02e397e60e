//! `judged rebuild`: recompute the session summaries from the store.

use super::call;
use crate::CliError;
use judged_protocol::{Request, SessionSummary};

pub fn run() -> Result<(), CliError> {
    let sessions: Vec<SessionSummary> = call(Request::Rebuild)?;
    println!("rebuilt {} session summaries from the store", sessions.len());
    Ok(())
}
