//! The read-only operations: `status`, `sessions`, `events`, `chain_head`, `verify_log`,
//! `decisions`, and `rebuild`, which recomputes what `sessions` shows.

use super::{Answer, Engine, EngineError, bad_request};
use crate::store::{FileState, StoreIntegrityFailed};
use judged_core::event::Host;
use judged_protocol::{
    ChainHead, ChainHeadArgs, CompletionBypassed, EventLine, EventsArgs, Reply, SessionSummary, StatusReport,
};

impl Engine {
    pub(super) fn status(&mut self) -> Answer {
        // The config it reports is the one in force now.
        self.follow_config(false);
        let files: Vec<&FileState> = self.store.files().collect();
        let roots = self.ingest.roots();
        let bypassed = self.store.journal_of_kind::<CompletionBypassed>()?;
        Ok(Reply::Status(Box::new(StatusReport {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: judged_protocol::PROTOCOL_VERSION,
            uptime_seconds: self.started.elapsed().as_secs(),
            data_dir: self.data_dir.clone(),
            socket: self.socket.clone(),
            roots: roots.of_hosts().clone(),
            opencode_databases: self.ingest.databases_of(Host::OpenCode),
            files: files.len() as u64,
            lines: files.iter().map(|f| f.lines).sum(),
            bytes: files.iter().map(|f| f.offset).sum(),
            store_bytes: self.store.disk_bytes(),
            pruned_lines: files.iter().map(|f| f.pruned).sum(),
            tampered: files.iter().filter(|f| f.tampered).count() as u64,
            store_integrity_failures: self.store.journal_of_kind::<StoreIntegrityFailed>()?.len() as u64,
            completions_bypassed: bypassed.len() as u64,
            forced_ends: bypassed.iter().filter(|(_, _, b)| b.forced_end.is_some()).count() as u64,
            journal_events: self.store.journal_len()?,
            catch_up_passes: self.ingest.passes(),
            catch_up: self.catch_up.report(),
            // Each log's size against what is ingested: what the watcher has still to read.
            lag_bytes: files
                .iter()
                .filter(|f| !f.tampered)
                .map(|f| std::fs::symlink_metadata(&f.path).map_or(0, |m| m.len().saturating_sub(f.offset)))
                .sum(),
            config: self.config.status(),
        })))
    }

    pub(super) fn sessions(&mut self) -> Answer {
        self.ingest.catch_up_all(&mut self.store)?;
        Ok(Reply::Sessions(self.store.files().map(session_summary).collect()))
    }

    pub(super) fn decisions(&mut self) -> Answer {
        Ok(Reply::Decisions(crate::hook_gate::decisions(&self.store)?))
    }

    pub(super) fn rebuild(&mut self) -> Answer {
        crate::ingest::replay(&mut self.store)?;
        self.sessions()
    }

    /// The file a request names by session id, session key or path, caught up.
    fn named_file(&mut self, name: &str) -> Result<FileState, EngineError> {
        self.ingest.catch_up_all(&mut self.store)?;
        self.store
            .file_by_session(name)
            .cloned()
            .ok_or_else(|| bad_request(format!("no session or log named `{name}`")))
    }

    pub(super) fn events(&mut self, args: &EventsArgs) -> Answer {
        let file = self.named_file(&args.session)?;
        let lines = self.store.lines(file.id, args.from, args.limit.min(EventsArgs::MAX_LIMIT))?;
        Ok(Reply::Events(
            lines
                .into_iter()
                .map(|l| EventLine {
                    seq: l.seq,
                    start: l.start,
                    end: l.end,
                    kind: l.kind,
                    line_sha256: hex::encode(l.sha256),
                    chain_sha256: hex::encode(l.chain),
                    raw: String::from_utf8_lossy(&l.raw).into_owned(),
                    pruned: l.pruned,
                })
                .collect(),
        ))
    }

    pub(super) fn chain_head(&mut self, args: &ChainHeadArgs) -> Answer {
        let file = self.named_file(&args.session)?;
        let seq = args.seq.unwrap_or(file.lines);
        let head = self.store.chain_at(file.id, seq)?.ok_or_else(|| bad_request(format!("no line {seq}")))?;
        Ok(Reply::ChainHead(ChainHead { session: file.session, seq, chain_sha256: hex::encode(head) }))
    }

    pub(super) fn verify_log(&mut self, session: &str) -> Answer {
        let file = self.named_file(session)?;
        Ok(Reply::PrefixCheck(self.ingest.verify_prefix(&mut self.store, &file)?))
    }
}

fn session_summary(file: &FileState) -> SessionSummary {
    SessionSummary {
        host: file.host,
        session: file.session.clone(),
        session_id: file.session_id.clone(),
        cwd: file.cwd.clone(),
        path: file.path.clone(),
        events: file.lines,
        bytes: file.offset,
        last_event_time: file.last_event_time.clone(),
        tampered: file.tampered,
        integrity_findings: file.findings,
        pruned_lines: file.pruned,
    }
}
