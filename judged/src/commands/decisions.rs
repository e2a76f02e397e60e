//! `judged decisions`: the gate's recorded decisions, as a table or JSON.

use super::{call, print_json, shown};
use crate::CliError;
use judged_protocol::{DecisionRecord, Request};

pub fn run(json: bool) -> Result<(), CliError> {
    let decisions: Vec<DecisionRecord> = call(Request::Decisions)?;
    if json {
        print_json(&decisions);
        return Ok(());
    }
    println!(
        "{:<27} {:<14} {:<7} {:<18} {:>9} {:<38} REASON",
        "AT", "EVENT", "VERDICT", "POLICY", "LATENCY", "SESSION"
    );
    for record in &decisions {
        let d = &record.decision;
        println!(
            "{:<27} {:<14} {:<7} {:<18} {:>7}ms {:<38} {}",
            record.at,
            d.event,
            judged_protocol::wire_name(&d.decision),
            judged_protocol::wire_name(&d.policy),
            d.latency_ms,
            shown(&d.session_id),
            d.reason
        );
    }
    Ok(())
}
