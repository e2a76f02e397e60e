//! `judged prune [--older-than 90d] [--dry-run] [--json]`: ask the daemon to drop the stored
//! bytes of idle sessions, and say which went, which stayed and why.

use super::{call_long, print_json};
use crate::CliError;
use judged_protocol::{PruneArgs, PruneReport, Request};

/// The cutoff, in days, when neither `--older-than` nor `[store] keep_days` names one.
const DEFAULT_KEEP_DAYS: u32 = 90;

pub fn run(
    older_than: Option<chrono::DateTime<chrono::Utc>>,
    dry_run: bool,
    vacuum: bool,
    json: bool,
) -> Result<(), CliError> {
    let older_than = match older_than {
        Some(at) => at,
        None => {
            let config = judged_daemon::config::ConfigFile::load(&judged_protocol::paths::config_path())?;
            let days = config.store.keep_days.map_or(DEFAULT_KEEP_DAYS, std::num::NonZeroU32::get);
            chrono::Utc::now() - chrono::Duration::days(i64::from(days))
        }
    };
    let done: PruneReport = call_long(Request::Prune(PruneArgs { older_than, dry_run, vacuum }))?;
    if json {
        print_json(&done);
        return Ok(());
    }
    let verb = if done.dry_run { "would prune" } else { "pruned" };
    for session in &done.pruned {
        println!(
            "{verb} {} ({}: {} lines, {} bytes, last record {})",
            session.path,
            session.host.as_str(),
            session.lines,
            session.bytes,
            session.last_record
        );
    }
    for session in &done.kept {
        println!("kept   {}: {}", session.path, session.why);
    }
    println!(
        "{verb} {} sessions idle since before {} ({} log bytes); kept {} that are still needed. Their hashes and \
         chain stay: the logs are still checked against rewrites.",
        done.pruned.len(),
        done.older_than,
        done.bytes,
        done.kept.len()
    );
    if let Some(bytes) = done.vacuumed_to {
        println!("The store was rewritten without the freed pages: {bytes} bytes on disk now.");
    }
    Ok(())
}
