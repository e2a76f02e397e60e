//! `judged status`: the daemon's state, as aligned rows or JSON.

use super::{call, print_json};
use crate::CliError;
use judged_core::event::Host;
use judged_protocol::{CatchUp, ConfigStatus, Request, StatusReport};

pub fn run(json: bool) -> Result<(), CliError> {
    if json {
        print_json(&call::<StatusReport>(Request::Status)?);
        return Ok(());
    }
    // The daemon answers `status` once its catch-up on start is done; until then only
    // its progress, which is what a person asking wants to see.
    let progress: CatchUp = call(Request::Progress)?;
    if !progress.done {
        println!("{}", row("catch_up", &format!("in progress: {}", catch_up_counts(&progress))));
        println!("the rest of the status comes once the catch-up is done: run `judged status` again then");
        return Ok(());
    }
    let status: StatusReport = call(Request::Status)?;
    for line in lines(&status) {
        println!("{line}");
    }
    Ok(())
}

/// Plain status, one `key  value` row per line.
fn lines(status: &StatusReport) -> Vec<String> {
    let mut rows = vec![
        ("pid", status.pid.to_string()),
        ("version", status.version.clone()),
        ("uptime_seconds", status.uptime_seconds.to_string()),
        ("socket", status.socket.display().to_string()),
        ("data_dir", status.data_dir.display().to_string()),
        ("files", status.files.to_string()),
        ("lines", status.lines.to_string()),
        ("bytes", status.bytes.to_string()),
        ("store_bytes", store_share(status)),
        ("pruned_lines", status.pruned_lines.to_string()),
        ("tampered", status.tampered.to_string()),
        ("journal_events", status.journal_events.to_string()),
        ("bypassed_tasks", status.completions_bypassed.to_string()),
        ("forced_ends", status.forced_ends.to_string()),
        ("catch_up", catch_up(status)),
    ];
    rows.extend(config_rows(&status.config));
    let roots = Host::ALL.map(|host| (judged_core::adapter::of(host).roots_key(), status.roots.of(host)));
    for (key, roots) in roots {
        rows.extend(roots.iter().map(|root| (key, root.display().to_string())));
    }
    rows.iter().map(|(key, value)| row(key, value)).collect()
}

fn row(key: &str, value: &str) -> String {
    format!("{key:<16} {value}")
}

/// Logs and bytes caught up of those found: `2/4 logs, 2.0/4.0 MiB`.
pub(super) fn catch_up_counts(progress: &CatchUp) -> String {
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    format!(
        "{}/{} logs, {:.1}/{:.1} MiB",
        progress.files_done,
        progress.files_found,
        mib(progress.bytes_done),
        mib(progress.bytes_found)
    )
}

/// The catch-up on start, and how far the logs have grown past what is ingested since.
fn catch_up(status: &StatusReport) -> String {
    let state = if status.catch_up.done { "done" } else { "in progress" };
    format!("{state}: {}; {} bytes of the logs not read yet", catch_up_counts(&status.catch_up), status.lag_bytes)
}

/// The config in force, an edit that was not applied and settings waiting for a restart.
fn config_rows(config: &ConfigStatus) -> Vec<(&'static str, String)> {
    let mut rows = vec![("config", format!("{}, read {}", config.file, config.loaded_at))];
    if let Some(rejected) = &config.rejected {
        rows.push((
            "config_rejected",
            format!(
                "an edit read {} was not applied: {}; the config above is in force until the file is fixed (no \
                 restart needed)",
                rejected.at, rejected.error
            ),
        ));
    }
    if !config.restart_needed.is_empty() {
        rows.push((
            "restart_needed",
            format!(
                "{} changed in the file and take effect at the next start: `judged stop && judged start`",
                config.restart_needed.join(", ")
            ),
        ));
    }
    rows
}

/// The store's size, and what share of the logs' it is.
fn store_share(status: &StatusReport) -> String {
    match status.bytes {
        0 => status.store_bytes.to_string(),
        logs => format!("{} ({:.2}x the logs)", status.store_bytes, status.store_bytes as f64 / logs as f64),
    }
}
