//! A file's summary fields (session id, cwd, last host id and time), moved forward by each
//! batch of lines as it is ingested, and recomputed from the store by replay.

use crate::store::{Columns, FileState, IntegrityFinding, Store, StoreError, TamperDetected};
use judged_core::adapter::Envelope;
use judged_core::event::{Host, SessionId};
use judged_core::host_chain::HostChain;

/// Summary fields a batch of lines moves forward.
#[derive(Default, Debug)]
pub struct FileUpdate {
    session_id: Option<SessionId>,
    cwd: Option<String>,
    last_host_id: Option<Option<String>>,
    last_event_time: Option<String>,
}

impl FileUpdate {
    /// Fold one record's envelope into the summary. Copilot CLI names its session and
    /// cwd in `session.start`, Codex CLI in `session_meta`; every Claude Code and Qwen Code
    /// record carries them; a Gemini CLI recording names its session in its header and its
    /// cwd in the session context a later line sets.
    pub fn observe(&mut self, host: Host, record: &Envelope) {
        let carries = record.session_start || !judged_core::adapter::of(host).cwd_at_start_only();
        if self.session_id.is_none() && carries {
            self.session_id = record.session_id.clone();
        }
        if self.cwd.is_none() && carries {
            self.cwd = record.cwd.clone();
        }
        if record.id.is_some() {
            self.last_host_id = Some(record.id.clone());
        }
        if let Some(t) = &record.timestamp {
            self.last_event_time = Some(t.clone());
        }
    }

    /// Move `file`'s summary forward; the first session id and cwd seen stay.
    pub fn apply(&self, file: &mut FileState) {
        if file.session_id.is_none() {
            file.session_id = self.session_id.clone();
        }
        if file.cwd.is_none() {
            file.cwd = self.cwd.clone();
        }
        if let Some(id) = &self.last_host_id {
            file.last_host_id = id.clone();
        }
        if let Some(t) = &self.last_event_time {
            file.last_event_time = Some(t.clone());
        }
    }
}

/// Recompute every derived `files` column from the lines and the journal.
pub fn replay(store: &mut Store) -> Result<(), StoreError> {
    let tampered: Vec<i64> =
        store.journal_of_kind::<TamperDetected>()?.into_iter().map(|(_, _, t)| t.file_id).collect();
    let findings: Vec<i64> =
        store.journal_of_kind::<IntegrityFinding>()?.into_iter().map(|(_, _, f)| f.file_id).collect();
    let files: Vec<FileState> = store.files().cloned().collect();
    for file in files {
        let mut state = FileState {
            tampered: tampered.contains(&file.id),
            findings: findings.iter().filter(|&&id| id == file.id).count() as u64,
            ..file.unreplayed()
        };
        let mut update = FileUpdate::default();
        // Pruned lines cannot be read again: the summary they gave was kept (`unreplayed`),
        // and the host chain goes on from where they had brought it.
        let mut host_chain = match state.pruned {
            0 => HostChain::<()>::new(state.host),
            _ => HostChain::after(state.host, state.last_host_id.clone()),
        };
        store.scan_lines(state.id, 0, Columns::WithRaw, |line| {
            let record = (!line.pruned).then(|| judged_core::adapter::envelope(state.host, line.raw.trim_ascii_end()));
            if let Some(Ok(record)) = record {
                update.observe(state.host, &record);
                // Its breaks are in the journal already; only where it reached is wanted.
                let _ = host_chain.follow(&record, ());
            }
            state.offset = line.end;
            state.lines = line.seq;
            state.chain = line.chain;
            true
        })?;
        update.apply(&mut state);
        if HostChain::<()>::kept_by(state.host) {
            state.last_host_id = host_chain.reached();
        }
        store.save_replayed(&state)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Ingestor;
    use judged_io::files::Roots;
    use std::io::Write;
    use std::path::{Path, PathBuf};

    const REAL_LOG: &[u8] = include_bytes!("../../../fixtures/copilot-1.0.102/cross-family-ok/events.jsonl");

    /// A store and ingestor over one Copilot session written by the real client.
    fn ingested(dir: &Path) -> (Store, Ingestor, PathBuf) {
        let session = dir.join("root/s1");
        std::fs::create_dir_all(&session).unwrap();
        let log = session.join("events.jsonl");
        std::fs::write(&log, REAL_LOG).unwrap();
        let mut store = Store::open(&dir.join("judged.db")).unwrap();
        let mut ingest = Ingestor::new(Roots::default().with(Host::CopilotCli, vec![dir.join("root")]));
        ingest.catch_up_all(&mut store).unwrap();
        (store, ingest, log)
    }

    #[test]
    fn replay_rebuilds_the_derived_file_state() {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, mut ingest, log) = ingested(dir.path());
        std::fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .unwrap()
            .write_all(
                // One event naming a parent that never comes, and the two that follow it: a
                // break once they have waited longer than the host makes any wait.
                b"{\"type\":\"x\",\"id\":\"late\",\"parentId\":\"wrong\"}\n\
                  {\"type\":\"x\",\"id\":\"later\",\"parentId\":\"late\"}\n\
                  {\"type\":\"x\",\"id\":\"latest\",\"parentId\":\"later\"}\n",
            )
            .unwrap();
        ingest.catch_up_all(&mut store).unwrap();
        let files = |store: &Store| format!("{:?}", store.files().collect::<Vec<_>>());
        let before = files(&store);
        // The derived columns lost, behind the store's back.
        rusqlite::Connection::open(dir.path().join("judged.db"))
            .unwrap()
            .execute("UPDATE files SET offset = 0, lines = 0, session_id = NULL, cwd = NULL, findings = 0", [])
            .unwrap();
        replay(&mut store).unwrap();
        // Read back from the database, not from the in-memory mirror.
        let reopened = Store::open(&dir.path().join("judged.db")).unwrap();
        assert_eq!(files(&reopened), before);
        let file = reopened.files().next().unwrap();
        assert_eq!((file.lines, file.findings), (46, 1));
        assert_eq!(file.last_host_id.as_deref(), Some("latest"));
        assert_eq!(file.cwd.as_deref(), Some("/tmp/judged-fixture/copilot/cross-family-ok/project"));
    }

    /// Copilot CLI wrote two events of one moment in the other order (the fixture): no
    /// finding, even when the daemon reads the log between the two lines.
    #[test]
    fn two_events_the_host_wrote_in_the_other_order_are_no_finding() {
        const SWAPPED: &[u8] = include_bytes!("../../../fixtures/copilot-1.0.102/swapped-events/events.jsonl");
        let dir = tempfile::tempdir().unwrap();
        let session = dir.path().join("root/s1");
        std::fs::create_dir_all(&session).unwrap();
        let log = session.join("events.jsonl");
        // Up to the first of the two (line 22), then the rest.
        let split = SWAPPED.iter().enumerate().filter(|(_, b)| **b == b'\n').nth(21).map(|(i, _)| i + 1).unwrap();
        std::fs::write(&log, &SWAPPED[..split]).unwrap();
        let mut store = Store::open(&dir.path().join("judged.db")).unwrap();
        let mut ingest = Ingestor::new(Roots::default().with(Host::CopilotCli, vec![dir.path().join("root")]));
        ingest.catch_up_all(&mut store).unwrap();
        std::fs::OpenOptions::new().append(true).open(&log).unwrap().write_all(&SWAPPED[split..]).unwrap();
        ingest.catch_up_all(&mut store).unwrap();
        let file = store.files().next().unwrap().clone();
        assert_eq!((file.lines, file.findings), (43, 0));
        assert!(store.journal_of_kind::<IntegrityFinding>().unwrap().is_empty());
    }
}
