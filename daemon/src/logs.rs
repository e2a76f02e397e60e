//! What the daemon keeps parsed between requests: session logs and resolved cwds.

use crate::store::{Columns, FileState, Store, StoreError};
use judged_core::event::{Record, SessionId};
use judged_core::log::SessionLog;
use judged_io::files;
use std::collections::HashMap;

/// Parsed session logs by file id, extended as lines arrive, so an evidence request
/// parses only what the host wrote since the last one.
#[derive(Default)]
pub struct LogCache(HashMap<i64, SessionLog>);

impl LogCache {
    /// Sessions kept parsed between requests.
    const CAPACITY: usize = 16;

    /// Make room before a request (and only then): a request may add as many logs as it
    /// needs, so nothing it refreshed is evicted while it runs.
    pub fn trim(&mut self) {
        if self.0.len() > Self::CAPACITY {
            self.0.clear();
        }
    }

    /// Bring the cached log of `file` up to the store; `Err(Pruned)` when its first lines'
    /// bytes were pruned (a log is read from its start).
    pub fn refresh(&mut self, store: &Store, file: &FileState) -> Result<(), StoreError> {
        if file.pruned > 0 {
            return Err(StoreError::Pruned { path: file.path.clone(), lines: file.pruned });
        }
        let log =
            self.0.entry(file.id).or_insert_with(|| SessionLog::from_bytes(file.host, file.path.clone(), Vec::new()));
        let have = log.lines.len() as u64;
        if have < file.lines {
            let mut more = Vec::new();
            store.scan_lines(file.id, have + 1, Columns::WithRaw, |line| {
                more.extend_from_slice(&line.raw);
                true
            })?;
            log.append(&more);
        }
        Ok(())
    }

    /// The log of `file_id`, refreshed by this request.
    pub fn get(&self, file_id: i64) -> &SessionLog {
        &self.0[&file_id]
    }
}

/// Recorded session cwds, resolved: a challenge compares every session's cwd, and
/// resolving is several syscalls a path.
#[derive(Default)]
pub struct ResolvedCwds(rustc_hash::FxHashMap<String, String>);

impl ResolvedCwds {
    /// Cwds remembered at most; a daemon's users have far fewer projects.
    const CAPACITY: usize = 10_000;

    /// Whether the session's recorded cwd resolves to `cwd` (itself resolved).
    pub fn same(&mut self, file: &FileState, cwd: &str) -> bool {
        let Some(recorded) = file.cwd.as_deref() else { return false };
        if let Some(resolved) = self.0.get(recorded) {
            return resolved == cwd;
        }
        if self.0.len() >= Self::CAPACITY {
            self.0.clear();
        }
        let resolved = files::resolve(recorded);
        let same = resolved == cwd;
        self.0.insert(recorded.to_owned(), resolved);
        same
    }
}

/// The model that wrote a session's latest record: the author a tiebreaker must not share
/// a family with. `None` when the session is unknown or names no model.
pub fn author_model(store: &Store, logs: &mut LogCache, session: &SessionId) -> Option<String> {
    let file = store.file_by_session(session.as_str())?.clone();
    logs.refresh(store, &file).ok()?;
    author_of(logs.get(file.id).records().map(|(_, record)| record))
}

/// The model of the newest of `records` the root agent wrote: not a sub-agent's (which may
/// be of another family, and which the agent chooses), nor a host's placeholder such as
/// Claude Code's `<synthetic>`.
fn author_of<'a>(records: impl DoubleEndedIterator<Item = &'a Record>) -> Option<String> {
    let mut own = records.rev().filter(|record| record.root);
    own.find_map(|record| record.model.clone().filter(|model| !model.starts_with('<')))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sub-agent's model or a placeholder after the agent's last answer does not make the
    /// author of another family: the tiebreaker must not share the agent's own.
    #[test]
    fn the_author_is_the_root_agents_model_past_sub_agents_and_placeholders() {
        let record = |root: bool, model: &str| Record {
            envelope: judged_core::event::Envelope { root, ..Default::default() },
            model: Some(model.to_owned()),
            ..Record::default()
        };
        let records = [record(true, "claude-sonnet-4.6"), record(false, "gpt-5.4"), record(true, "<synthetic>")];
        assert_eq!(author_of(records.iter()).as_deref(), Some("claude-sonnet-4.6"));
        assert_eq!(author_of([record(false, "gpt-5.4")].iter()), None);
    }
}
