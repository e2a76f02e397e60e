//! `judged prune` of about half the store, on the largest root after every other figure
//! was taken: the cutoff is the median of the sessions' last records, so the older half
//! goes (less what the bench's own decisions and reviews still name).

use crate::measure::Daemon;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// What one prune did and cost.
#[derive(Debug, Default)]
pub struct PruneFigures {
    pub sessions: usize,
    pub pruned: usize,
    pub kept: usize,
    /// The log bytes whose copy in the store was dropped.
    pub log_bytes: u64,
    pub ms: f64,
    /// `judged.db` + WAL before and after: freed pages stay in the file for later lines.
    pub db_before: u64,
    pub db_after: u64,
    /// `judged prune --vacuum` right after (nothing left to prune): its time, and the size.
    pub vacuum_ms: f64,
    pub db_vacuumed: u64,
}

/// Prune the daemon's store of the older half of its sessions.
pub fn measure(judged: &Path, daemon: &Daemon) -> PruneFigures {
    eprintln!("judged-bench: judged prune of half the store");
    let sessions = daemon.call("sessions", Value::Null).expect("sessions answers");
    let mut last: Vec<String> = sessions
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s["last_event_time"].as_str().map(str::to_owned))
        .collect();
    last.sort();
    let Some(cutoff) = last.get(last.len() / 2).cloned() else { return PruneFigures::default() };
    let db_before = daemon.db_bytes();
    let (done, ms) = run(judged, daemon, &["--older-than", &cutoff]);
    let db_after = daemon.db_bytes();
    let (_, vacuum_ms) = run(judged, daemon, &["--older-than", &cutoff, "--vacuum"]);
    let count = |key: &str| done[key].as_array().map_or(0, Vec::len);
    PruneFigures {
        sessions: last.len(),
        pruned: count("pruned"),
        kept: count("kept"),
        log_bytes: done["bytes"].as_u64().unwrap_or(0),
        ms,
        db_before,
        db_after,
        vacuum_ms,
        db_vacuumed: daemon.db_bytes(),
    }
}

/// `judged prune --json ARGS` against the daemon: its report and wall time.
fn run(judged: &Path, daemon: &Daemon, args: &[&str]) -> (Value, f64) {
    let start = Instant::now();
    let output = Command::new(judged)
        .args([&["prune", "--json"], args].concat())
        .env("JUDGED_HOME", &daemon.home)
        .output()
        .expect("judged prune runs");
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    assert!(output.status.success(), "judged prune: {}", String::from_utf8_lossy(&output.stderr));
    (serde_json::from_slice(&output.stdout).expect("prune --json prints JSON"), ms)
}
