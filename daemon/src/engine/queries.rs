//! The read-only operations: `status`, `sessions`, `events`, `chain_head`, `verify_log`,
//! `decisions`, and `rebuild`, which recomputes what `sessions` shows.

use super::{Answer, Engine, EngineError, bad_request};
use crate::caller::Caller;
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

    /// The sessions whose logs `caller` may be shown: a served user's own alone.
    pub(super) fn sessions(&mut self, caller: Caller) -> Answer {
        self.ingest.catch_up_all(&mut self.store)?;
        let shown = self.store.files().filter(|file| caller.owns(Some(&file.path)));
        Ok(Reply::Sessions(shown.map(session_summary).collect()))
    }

    /// The gate's decisions `caller` may be shown: a served user's, those about a
    /// directory of its own.
    pub(super) fn decisions(&mut self, caller: Caller) -> Answer {
        let mut decisions = crate::hook_gate::decisions(&self.store)?;
        decisions.retain(|record| caller.owns(record.decision.cwd.as_deref()));
        Ok(Reply::Decisions(decisions))
    }

    pub(super) fn rebuild(&mut self) -> Answer {
        crate::ingest::replay(&mut self.store)?;
        self.sessions(Caller::Own)
    }

    /// The file a request names by session id, session key or path, caught up, when
    /// `caller` may be shown it: a witness shows a served user its own logs alone, whose
    /// lines are others' prompts and files otherwise.
    fn named_file(&mut self, name: &str, caller: Caller) -> Result<FileState, EngineError> {
        self.ingest.catch_up_all(&mut self.store)?;
        let file = self.store.file_by_session(name).filter(|file| caller.owns(Some(&file.path)));
        // Another user's log is answered as no log at all: its name says nothing either.
        file.cloned().ok_or_else(|| bad_request(format!("no session or log named `{name}`")))
    }

    pub(super) fn events(&mut self, args: &EventsArgs, caller: Caller) -> Answer {
        let file = self.named_file(&args.session, caller)?;
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

    pub(super) fn chain_head(&mut self, args: &ChainHeadArgs, caller: Caller) -> Answer {
        let file = self.named_file(&args.session, caller)?;
        let seq = args.seq.unwrap_or(file.lines);
        let head = self.store.chain_at(file.id, seq)?.ok_or_else(|| bad_request(format!("no line {seq}")))?;
        Ok(Reply::ChainHead(ChainHead { session: file.session, seq, chain_sha256: hex::encode(head) }))
    }

    /// Check a log against what the store holds of it: every byte again for the daemon's
    /// own account; for a served user, only when the file changed since its last clean
    /// check, so that one user's loop of checks of a large log cannot hold the engine
    /// every other user's hooks wait on.
    pub(super) fn verify_log(&mut self, session: &str, caller: Caller) -> Answer {
        let file = self.named_file(session, caller)?;
        let check = match caller {
            Caller::Own => self.ingest.verify_prefix(&mut self.store, &file)?,
            Caller::Served(_) => self.ingest.verify_prefix_if_changed(&mut self.store, &file)?,
        };
        Ok(Reply::PrefixCheck(check))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Handled;
    use crate::engine::dispatch::Dispatch;
    use judged_io::files::Roots;
    use judged_protocol::{Request, SessionName};

    /// An engine witnessing one real Claude Code transcript: its session's key and its path.
    fn engine_with_a_claude_code_log() -> (tempfile::TempDir, &'static str, std::path::PathBuf, crate::engine::Engine) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::fs::canonicalize(tmp.path()).unwrap();
        let root = dir.join("projects/-p");
        std::fs::create_dir_all(&root).unwrap();
        let session = "70e11cfc-c3fb-426c-9dfc-374e15ffb0af";
        let log = root.join(format!("{session}.jsonl"));
        std::fs::copy(format!("../fixtures/claude-code-2.1.328/marker-challenge/{session}.jsonl"), &log).unwrap();
        let engine =
            super::super::test_engine(&dir, Roots::default().with(Host::ClaudeCode, vec![dir.join("projects")]));
        (tmp, session, log, engine)
    }

    /// A witness shows a served user its own logs alone: another user's lines are that
    /// user's prompts, tool output and files. Asked by another uid, a log is no log at
    /// all; the sessions list leaves it out; the daemon's own account sees it.
    #[test]
    fn a_served_user_is_shown_no_other_users_log() {
        let (_tmp, session, _log, mut engine) = engine_with_a_claude_code_log();
        let mut ask = |request: Request, caller: Caller| {
            let Dispatch::Engine(operation) = Dispatch::of(request, caller) else { panic!("the engine's") };
            match engine.handle(operation) {
                Handled::Answer(answer) => answer.map_err(|error| error.to_string()),
                Handled::Jury(_) => panic!("no jury"),
            }
        };
        let events = || Request::Events(EventsArgs { session: session.into(), from: 1, limit: 2 });
        let other = Caller::Served(judged_io::files::current_uid() + 1);
        let own = Caller::Served(judged_io::files::current_uid());
        for request in [
            events(),
            Request::ChainHead(ChainHeadArgs { session: session.into(), seq: None }),
            Request::VerifyLog(SessionName { session: session.into() }),
        ] {
            let refused = ask(request, other).unwrap_err();
            assert!(refused.contains(&format!("no session or log named `{session}`")), "{refused}");
        }
        assert!(matches!(ask(Request::Sessions, other), Ok(Reply::Sessions(listed)) if listed.is_empty()));
        assert!(matches!(ask(Request::Sessions, own), Ok(Reply::Sessions(listed)) if listed.len() == 1));
        assert!(matches!(ask(events(), own), Ok(Reply::Events(lines)) if lines.len() == 2));
        assert!(matches!(ask(events(), Caller::Own), Ok(Reply::Events(lines)) if lines.len() == 2));
        // A line past any there is none, not (the number wrapped) the first.
        let past = Request::Events(EventsArgs { session: session.into(), from: u64::MAX, limit: 2 });
        assert!(matches!(ask(past, Caller::Own), Ok(Reply::Events(lines)) if lines.is_empty()));
    }

    /// A served user's `verify-log` may skip the re-hash of a log that looks as it did at
    /// its last clean check, but never misses one rewritten since: a rewrite in place, of
    /// the same length, is reported at the next check.
    #[test]
    fn a_served_users_verify_log_finds_a_rewrite_made_since_its_last_check() {
        let (_tmp, session, log, mut engine) = engine_with_a_claude_code_log();
        let user = Caller::Served(judged_io::files::current_uid());
        let mut check = || {
            let request = Request::VerifyLog(SessionName { session: session.into() });
            let Dispatch::Engine(operation) = Dispatch::of(request, user) else { panic!("the engine's") };
            match engine.handle(operation) {
                Handled::Answer(Ok(Reply::PrefixCheck(check))) => check,
                _ => panic!("a prefix check"),
            }
        };
        assert!(!check().tampered);
        assert!(!check().tampered, "an unchanged log is still intact");
        let mut bytes = std::fs::read(&log).unwrap();
        let at = bytes.iter().position(|&b| b == b'7').unwrap();
        bytes[at] = b'8';
        std::fs::write(&log, &bytes).unwrap();
        assert!(check().tampered, "a log rewritten since the last check is found rewritten");
    }
}
