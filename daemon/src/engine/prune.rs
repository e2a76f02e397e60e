//! `prune`: drop the stored bytes of sessions that have been idle since a cutoff and that
//! nothing recent rests on, keeping every line's hash and the chain over them.
//!
//! What a pruned session can still prove: that its log was not rewritten (every line's
//! hash stays, so `verify-log` and the watcher re-hash the file as before) and that the
//! store's chain is whole. What it cannot: its records cannot be read again, so evidence
//! and challenges that need them say that the bytes were pruned. So a session is kept
//! while a gate decision, a verification or a challenge since the cutoff names it, and a
//! session whose log was caught rewritten is kept whole, as the record of that.

use super::{Answer, Engine};
use crate::hook_gate::GateSettings;
use crate::store::{ChallengeIssued, EvidenceVerified, FileState, JournalBody, Store, StoreError};
use chrono::{DateTime, Utc};
use judged_core::event::SessionId;
use judged_core::timestamp;
use judged_protocol::{GateDecision, KeptSession, PruneArgs, PruneReport, PrunedSession, Reply};
use rustc_hash::FxHashSet;

impl Engine {
    pub(super) fn prune(&mut self, args: &PruneArgs) -> Answer {
        let now = Utc::now();
        if args.older_than > now {
            return Err(super::bad_request(format!(
                "--older-than {} is in the future: a cutoff names a time sessions have been idle since; use a \
                 duration such as 90d (as [store] keep_days)",
                timestamp::format_utc(args.older_than)
            )));
        }
        let live_since = self.live_since(now);
        let mut report = prune(&mut self.store, args.older_than, live_since, args.dry_run)?;
        if args.vacuum && !args.dry_run {
            self.store.vacuum()?;
            report.vacuumed_to = Some(self.store.disk_bytes());
        }
        Ok(Reply::Prune(report))
    }
}

impl Engine {
    /// Since when what the journal names may still count at the gate: a day, or the gate's
    /// freshness window if longer. What it names is kept whatever the cutoff, so a prune
    /// never takes the bytes under evidence the gate would still allow on (and that
    /// `validate` would then refuse as pruned).
    pub(super) fn live_since(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let fresh_since = self.config.current().file.gate.user_settings().fresh_since(now);
        fresh_since.min(now - chrono::Duration::days(LIVE_AT_LEAST_DAYS))
    }
}

/// The least time what the journal names is kept for: as `[store] keep_days`' least value.
const LIVE_AT_LEAST_DAYS: i64 = 1;

/// Prune `store` of what was idle before `older_than` (only say what, when `dry_run`),
/// keeping what the journal names since `older_than` or `live_since`, whichever is earlier.
pub fn prune(
    store: &mut Store,
    older_than: DateTime<Utc>,
    live_since: DateTime<Utc>,
    dry_run: bool,
) -> Result<PruneReport, StoreError> {
    let cutoff = timestamp::format_utc(older_than);
    let needed = Needed::since(store, older_than.min(live_since))?;
    let idle: Vec<(FileState, DateTime<Utc>)> = store
        .files()
        .filter(|file| file.pruned < file.lines)
        .filter_map(|file| last_record(file).filter(|&last| last < older_than).map(|last| (file.clone(), last)))
        .collect();
    let mut report = PruneReport {
        older_than: cutoff.clone(),
        dry_run,
        pruned: Vec::new(),
        kept: Vec::new(),
        bytes: 0,
        vacuumed_to: None,
    };
    for (file, last) in idle {
        let kept = |why: &str| KeptSession { session: file.session.clone(), path: file.path.clone(), why: why.into() };
        if file.tampered {
            report.kept.push(kept("its log was rewritten after it was witnessed: the bytes are the record of that"));
            continue;
        }
        if let Some(why) = needed.why(&file) {
            report.kept.push(kept(why));
            continue;
        }
        let bytes = if dry_run {
            Some(store.unpruned_bytes(file.id, file.pruned)?)
        } else {
            store.prune_file(file.id, &cutoff)?.map(|pruned| pruned.bytes)
        };
        let Some(bytes) = bytes else { continue };
        report.bytes += bytes;
        report.pruned.push(PrunedSession {
            session: file.session.clone(),
            path: file.path.clone(),
            host: file.host,
            lines: file.lines - file.pruned,
            bytes,
            last_record: timestamp::format_utc(last),
        });
    }
    Ok(report)
}

/// When a session was last active: its last record's time, else (a log whose records
/// carry none) its file's modification time. `None` when neither is known.
fn last_record(file: &FileState) -> Option<DateTime<Utc>> {
    file.last_event_time.as_deref().and_then(timestamp::parse).or_else(|| {
        let modified = std::fs::symlink_metadata(&file.path).and_then(|m| m.modified()).ok()?;
        Some(DateTime::<Utc>::from(modified))
    })
}

/// The sessions something journaled since the cutoff names.
struct Needed {
    decided: FxHashSet<SessionId>,
    verified: FxHashSet<i64>,
    challenged: FxHashSet<String>,
}

impl Needed {
    fn since(store: &Store, cutoff: DateTime<Utc>) -> Result<Needed, StoreError> {
        let mut needed =
            Needed { decided: FxHashSet::default(), verified: FxHashSet::default(), challenged: FxHashSet::default() };
        journaled_since(store, cutoff, |decision: GateDecision| needed.decided.extend(decision.session_id))?;
        journaled_since(store, cutoff, |evidence: EvidenceVerified| needed.verified.extend(evidence.file_id))?;
        journaled_since(store, cutoff, |challenge: ChallengeIssued| {
            needed.challenged.insert(challenge.session_events);
        })?;
        Ok(needed)
    }

    /// Why `file` is still needed, when it is.
    fn why(&self, file: &FileState) -> Option<&'static str> {
        if file.session_id.as_ref().is_some_and(|id| self.decided.contains(id)) {
            Some("a gate decision since the cutoff is about this session")
        } else if self.verified.contains(&file.id) {
            Some("evidence verified since the cutoff rests on this log")
        } else if self.challenged.contains(&file.path) {
            Some("a challenge issued since the cutoff names this log")
        } else {
            None
        }
    }
}

/// Visit the events of one kind journaled at or after `cutoff` (an event whose time does
/// not parse counts as recent: it keeps what it names).
fn journaled_since<B: JournalBody>(
    store: &Store,
    cutoff: DateTime<Utc>,
    mut visit: impl FnMut(B),
) -> Result<(), StoreError> {
    store.journal_newest_first(|_, at, body: B| {
        let recent = timestamp::parse(at).is_none_or(|at| at >= cutoff);
        if recent {
            visit(body);
        }
        recent
    })
}
