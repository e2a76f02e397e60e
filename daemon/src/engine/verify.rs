//! `verify`: check a reviewer's nonce-bound lifecycle against a challenge this daemon
//! issued, and issue the evidence once per review.

use super::{Answer, Engine, EngineError, request_time};
use crate::caller::Caller;
use crate::config::digest_of_bytes;
use crate::store::{ChallengeIssued, EvidenceVerified, FileState, JournalEvent, Lookup};
use judged_core::event::Host;
use judged_core::log::SessionLog;
use judged_core::rules::{self, Artifact, ArtifactKind, Evidence, LogState, ReviewerCli, VerifyRequest};
use judged_io::files::FsEnv;
use judged_io::worktree::{DiffBase, Tree};
use judged_protocol::{Reply, Verification, VerifyArgs};
use std::path::Path;

impl Engine {
    /// The reviewer CLIs' logs (Codex rollouts, Copilot session logs, Claude Code
    /// transcripts, Gemini CLI recordings) that may hold the review of a challenge whose
    /// agent runs its reviewer as a shell call, caught up and witnessed: those under the
    /// hosts' roots written since the challenge, not tampered. Their ids in the log cache.
    fn reviewer_logs(&mut self, challenge: &Artifact) -> Result<Vec<i64>, EngineError> {
        let since = challenge.challenge_time();
        // A reviewer's run in a host that keeps its sessions in a database (OpenCode) is
        // there until it is read into a log.
        self.ingest.read_databases(&mut self.store)?;
        let mut reviewers = self.ingest.roots().clone();
        reviewers.named.clear();
        for found in self.ingest.discover_in(&reviewers) {
            self.ingest.catch_up(&mut self.store, &found.path, found.host)?;
        }
        let recent = |file: &FileState| {
            let last = file.last_event_time.as_deref().and_then(judged_core::timestamp::parse);
            since.is_none_or(|since| last.is_some_and(|last| last >= since))
        };
        let reviewer_host = |host: Host| ReviewerCli::of_host(host).is_some();
        let candidates: Vec<FileState> = self
            .store
            .files()
            .filter(|f| reviewer_host(f.host) && !f.tampered && f.pruned == 0 && recent(f))
            .cloned()
            .collect();
        let mut ids = Vec::new();
        for file in candidates {
            if !self.ingest.verify_prefix_if_changed(&mut self.store, &file)?.tampered {
                self.logs.refresh(&self.store, &file)?;
                ids.push(file.id);
            }
        }
        Ok(ids)
    }

    pub(super) fn verify(&mut self, args: &VerifyArgs, caller: Caller) -> Answer {
        self.check_witnessed(&args.challenge, ArtifactKind::Challenge)?;
        let cwd = args.challenge.cwd().map(|cwd| caller.directory("the challenge's cwd", cwd)).transpose()?;
        let file = self.log_for(&args.challenge)?;
        let reviewer_logs =
            if rules::reviews_by_shell_call(file.host) { self.reviewer_logs(&args.challenge)? } else { Vec::new() };
        let now = request_time(args.started_at)?;
        // The review covers the tree its round began on, as the challenge recorded it (the
        // agent may have changed the tree since the review, before asking for this).
        let challenge_witness = args.challenge.witness().unwrap_or_default();
        let issued = self.store.journal_find::<ChallengeIssued>(Lookup::ChallengeByWitness, challenge_witness)?;
        // (`check_witnessed` found it journaled.)
        let (tree, git_tree, git_base, challenge_wrote, challenge_sha256) = match issued {
            Some(issued) => (issued.tree, issued.git_tree, issued.git_base, issued.excluded, issued.challenge_sha256),
            None => Default::default(),
        };
        let log = self.logs.get(file.id);
        let reviewer_logs: Vec<&SessionLog> = reviewer_logs.iter().map(|&id| self.logs.get(id)).collect();
        let request = VerifyRequest {
            response_path: &args.response_path,
            now,
            declared_model: args.declared_reviewer_model.as_deref(),
        };
        let verified = rules::verify_review(&args.challenge, log, &reviewer_logs, &request, &FsEnv::default())
            .map_err(|e| e.with_log_state(LogState::of(&[log], &["verify", &args.challenge_name])))?;
        self.check_findings(&file, verified.window_start)?;
        let mut evidence = verified.evidence;
        // One review is one record: verifying it again neither renews it nor adds a newer
        // one; the evidence is issued again as it was first (same time, same tree, same
        // witness).
        let first = self.store.journal_find::<EvidenceVerified>(Lookup::EvidenceById, evidence.evidence_id.as_str())?;
        if let Some(first) = &first {
            evidence.verified_at.clone_from(&first.verified_at);
            evidence.tree_sha256.clone_from(&first.tree_sha256);
        }
        let witness = self.witness.sign(&evidence);
        evidence.witness = Some(witness.clone());
        if first.is_none() {
            if let Some(cwd) = cwd.as_ref().filter(|_| git_tree.is_some()) {
                self.reviewed_in(Path::new(cwd));
            }
            // The round's own files, the challenge's and this command's: out of the tree
            // compared while they hold what was written.
            let excluded = [&challenge_wrote[..], &args.writes[..]].concat();
            let written = Written { evidence_sha256: digest_of_bytes(evidence.pretty().as_bytes()), challenge_sha256 };
            let window_start = verified.window_start;
            let seen = Seen { file: &file, window_start, tree, git_tree, git_base, excluded: &excluded, written };
            let record = evidence_record(&evidence, &verified.response, seen, witness);
            self.store.journal(&JournalEvent::EvidenceVerified(Box::new(record)))?;
        }
        Ok(Reply::Verification(Box::new(Verification {
            evidence,
            response: verified.response,
            window_start: verified.window_start,
        })))
    }
}

/// What the daemon saw of a review it verified: its log, where the reviewed window starts,
/// and the working tree its round began on (less the round's own files), also as git's
/// tree id.
struct Seen<'a> {
    file: &'a FileState,
    window_start: u64,
    tree: Option<Tree>,
    git_tree: Option<String>,
    git_base: Option<DiffBase>,
    excluded: &'a [std::path::PathBuf],
    written: Written,
}

/// The digests of the round's artifacts as the client writes them.
struct Written {
    evidence_sha256: String,
    challenge_sha256: Option<String>,
}

/// What the journal keeps of newly verified evidence: enough for the gate to answer from
/// it alone. The verdict is read once here.
fn evidence_record(evidence: &Evidence, response: &str, seen: Seen, witness: String) -> EvidenceVerified {
    let (score, verdict) = match judged_core::review_text::parse_score_verdict(response) {
        Ok((score, verdict)) => (Some(score), Some(verdict)),
        Err(_) => (None, None),
    };
    EvidenceVerified {
        evidence_id: evidence.evidence_id.clone(),
        status: evidence.status,
        reason: Some(evidence.reason.clone()),
        session_events: seen.file.path.clone(),
        host: seen.file.host,
        session_id: Some(evidence.session_id.clone()),
        cwd: Some(evidence.cwd.clone()),
        executor_model: Some(evidence.executor_model.clone()),
        reviewer_model: Some(evidence.reviewer_model.clone()),
        verified_at: evidence.verified_at.clone(),
        reviewed_at: evidence.reviewed_at.clone(),
        window_start: seen.window_start,
        file_id: Some(seen.file.id),
        tree_sha256: evidence.tree_sha256.clone(),
        tree: seen.tree,
        tree_excluded: seen.excluded.to_vec(),
        response_sha256: Some(evidence.response_sha256.clone()),
        evidence_sha256: Some(seen.written.evidence_sha256),
        challenge_sha256: seen.written.challenge_sha256,
        score,
        verdict,
        witness,
        identity_assurance: evidence.identity_assurance.unwrap_or_default(),
        git_tree: seen.git_tree,
        git_base: seen.git_base,
        agent_name: Some(evidence.agent_name.clone()),
        reviewer_model_source: Some(evidence.reviewer_model_source.clone()),
        executor_family: Some(evidence.executor_family.clone()),
        reviewer_family: Some(evidence.reviewer_family.clone()),
    }
}
