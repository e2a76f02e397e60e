//! `judged status`: the daemon's state, as aligned rows or JSON.

use super::{call, print_json};
use crate::CliError;
use judged_protocol::{Request, StatusReport};

pub fn run(json: bool) -> Result<(), CliError> {
    let status: StatusReport = call(Request::Status)?;
    if json {
        print_json(&status);
        return Ok(());
    }
    let rows = [
        ("pid", status.pid.to_string()),
        ("version", status.version.clone()),
        ("uptime_seconds", status.uptime_seconds.to_string()),
        ("socket", status.socket.display().to_string()),
        ("data_dir", status.data_dir.display().to_string()),
        ("files", status.files.to_string()),
        ("lines", status.lines.to_string()),
        ("bytes", status.bytes.to_string()),
        ("store_bytes", store_share(&status)),
        ("pruned_lines", status.pruned_lines.to_string()),
        ("tampered", status.tampered.to_string()),
        ("journal_events", status.journal_events.to_string()),
        ("bypassed_tasks", status.completions_bypassed.to_string()),
        ("forced_ends", status.forced_ends.to_string()),
    ];
    for (key, value) in rows {
        println!("{key:<16} {value}");
    }
    let roots = [
        ("copilot_roots", &status.copilot_roots),
        ("claude_roots", &status.claude_roots),
        ("codex_roots", &status.codex_roots),
        ("gemini_roots", &status.gemini_roots),
    ];
    for (key, roots) in roots {
        for root in roots {
            println!("{key:<16} {}", root.display());
        }
    }
    Ok(())
}

/// The store's size, and what share of the logs' it is.
fn store_share(status: &StatusReport) -> String {
    match status.bytes {
        0 => status.store_bytes.to_string(),
        logs => format!("{} ({:.2}x the logs)", status.store_bytes, status.store_bytes as f64 / logs as f64),
    }
}
