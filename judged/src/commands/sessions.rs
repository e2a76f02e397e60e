//! `judged sessions`: the witnessed sessions, as a table or JSON.

use super::{call, print_json, shown};
use crate::CliError;
use judged_protocol::{Request, SessionSummary};

pub fn run(json: bool) -> Result<(), CliError> {
    let sessions: Vec<SessionSummary> = call(Request::Sessions)?;
    if json {
        print_json(&sessions);
        return Ok(());
    }
    println!(
        "{:<12} {:<38} {:>7} {:>10} {:<24} {:<8} CWD",
        "HOST", "SESSION", "EVENTS", "BYTES", "LAST EVENT", "TAMPERED"
    );
    for s in &sessions {
        println!(
            "{:<12} {:<38} {:>7} {:>10} {:<24} {:<8} {}",
            s.host.as_str(),
            s.session,
            s.events,
            s.bytes,
            shown(&s.last_event_time),
            if s.tampered { "yes" } else { "no" },
            shown(&s.cwd)
        );
    }
    Ok(())
}
