//! `verify`: check a reviewer's nonce-bound lifecycle against a challenge this daemon
//! issued, and issue the evidence once per review.

use super::{Answer, Engine, EngineError, request_time};
use crate::store::{EvidenceVerified, FileState, JournalEvent, Lookup};
use judged_core::event::Host;
use judged_core::files::{FsEnv, Roots};
use judged_core::log::SessionLog;
use judged_core::rules::{self, Artifact, ArtifactKind, IdentityAssurance, LogState, ReviewerCli};
use judged_core::worktree::Tree;
use judged_protocol::{Reply, Verification, VerifyArgs};
use serde_json::{Map, Value};
use std::path::Path;

impl Engine {
    /// The reviewer CLIs' logs (Codex rollouts, Copilot session logs, Claude Code
    /// transcripts, Gemini CLI recordings) that may hold the review of a challenge whose
    /// agent runs its reviewer as a shell call, caught up and witnessed: those under the
    /// hosts' roots written since the challenge, not tampered. Their ids in the log cache.
    fn reviewer_logs(&mut self, challenge: &Map<String, Value>) -> Result<Vec<i64>, EngineError> {
        let since = Artifact(challenge).str("challenge_event_timestamp").and_then(judged_core::timestamp::parse);
        let reviewers = Roots { named: Vec::new(), ..self.ingest.roots().clone() };
        for found in self.ingest.discover_in(&reviewers) {
            self.ingest.catch_up(&mut self.store, &found.path, found.host)?;
        }
        let recent = |file: &FileState| {
            let last = file.last_event_time.as_deref().and_then(judged_core::timestamp::parse);
            since.is_none_or(|since| last.is_some_and(|last| last >= since))
        };
        let reviewer_host = |host: Host| ReviewerCli::ALL.iter().any(|cli| cli.host() == host);
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

    pub(super) fn verify(&mut self, args: &VerifyArgs) -> Answer {
        self.check_witnessed(&args.challenge, ArtifactKind::Challenge)?;
        let file = self.log_for(&args.challenge)?;
        let reviewer_logs =
            if rules::reviews_by_shell_call(file.host) { self.reviewer_logs(&args.challenge)? } else { Vec::new() };
        let log = self.logs.get(file.id);
        let reviewer_logs: Vec<&SessionLog> = reviewer_logs.iter().map(|&id| self.logs.get(id)).collect();
        let now = request_time(args.started_at)?;
        let env = FsEnv::default();
        let verified = rules::verify_review(
            &args.challenge,
            log,
            &reviewer_logs,
            args.declared_reviewer_model.as_deref(),
            &args.response_path,
            now,
            &env,
        )
        .map_err(|e| e.with_log_state(LogState::of(&[log], &["verify", &args.challenge_name])))?;
        self.check_findings(&file, verified.window_start)?;
        let mut evidence = verified.evidence;
        let evidence_id = Artifact(&evidence).str("evidence_id").unwrap_or_default().to_owned();
        // One review is one record: verifying it again neither renews it nor adds a newer
        // one; the evidence is issued again as it was first (same time, same tree, same
        // witness).
        let first = self.store.journal_find::<EvidenceVerified>(Lookup::EvidenceById, &evidence_id)?;
        let tree = match &first {
            Some(first) => {
                evidence.insert("verified_at".into(), first.verified_at.clone().into());
                evidence.insert("tree_sha256".into(), first.tree_sha256.clone().into());
                None
            }
            None => {
                let cwd = Artifact(&evidence).str("cwd").map(str::to_owned);
                let tree = cwd.and_then(|cwd| self.trees.tree(Path::new(&cwd), &args.writes));
                evidence.insert("tree_sha256".into(), tree.as_ref().map(Tree::digest).into());
                tree
            }
        };
        let witness = self.witness.sign(&evidence);
        evidence.insert("witness".into(), witness.clone().into());
        if first.is_none() {
            let seen = Seen { file: &file, window_start: verified.window_start, tree, excluded: &args.writes };
            let record = evidence_record(&evidence, &verified.response, seen, witness);
            self.store.journal(&JournalEvent::EvidenceVerified(Box::new(record)))?;
        }
        Ok(Reply::Verification(Verification {
            evidence,
            response: verified.response,
            window_start: verified.window_start,
        }))
    }
}

/// What the daemon saw of a review it verified: its log, where the reviewed window starts,
/// and the working tree (less the files the asking command writes).
struct Seen<'a> {
    file: &'a FileState,
    window_start: u64,
    tree: Option<Tree>,
    excluded: &'a [std::path::PathBuf],
}

/// What the journal keeps of newly verified evidence: enough for the gate to answer from
/// it alone. The verdict is read once here.
fn evidence_record(evidence: &Map<String, Value>, response: &str, seen: Seen, witness: String) -> EvidenceVerified {
    let artifact = Artifact(evidence);
    let field = |key: &str| artifact.str(key).map(str::to_owned);
    let (score, verdict) = match judged_core::review_text::parse_score_verdict(response) {
        Ok((score, verdict)) => (Some(score), Some(verdict)),
        Err(_) => (None, None),
    };
    EvidenceVerified {
        evidence_id: field("evidence_id").unwrap_or_default(),
        status: field("status").unwrap_or_default(),
        reason: field("reason"),
        session_events: seen.file.path.clone(),
        host: seen.file.host,
        session_id: field("session_id"),
        cwd: field("cwd"),
        executor_model: field("executor_model"),
        reviewer_model: field("reviewer_model"),
        verified_at: field("verified_at").unwrap_or_default(),
        reviewed_at: field("reviewed_at"),
        window_start: seen.window_start,
        file_id: Some(seen.file.id),
        tree_sha256: field("tree_sha256"),
        tree: seen.tree,
        tree_excluded: seen.excluded.to_vec(),
        score,
        verdict,
        witness,
        identity_assurance: IdentityAssurance::of(evidence),
    }
}
