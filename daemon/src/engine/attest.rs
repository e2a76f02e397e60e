//! `attest`: sign that a commit holds a tree a counted review covered (an in-toto
//! statement in a DSSE envelope, docs/spec/attestation.md), or say why it gets none. The
//! client writes the envelope into the repository's notes; the daemon writes there only
//! under `[attest] auto`, attesting the new commits of the repositories it saw reviewed.

use super::{Answer, Engine};
use crate::caller::Caller;
use crate::hook_gate::Covering;
use crate::jury::report_jury;
use crate::store::{Attested, EvidenceVerified, JournalEvent, JuryConvened, Lookup, StoreError};
use judged_core::attestation::{
    Envelope, Executor, JuryReview, RecordedJuror, Review, ReviewPredicate, ReviewerReview, Statement,
};
use judged_core::family::{Table, family};
use judged_core::timestamp::format_utc;
use judged_io::worktree::{self, Commit, DiffBase};
use judged_protocol::{AttestArgs, AttestRefusal, AttestReply, Attestation, Reply};
use std::path::{Path, PathBuf};

/// The repositories `[attest] auto` follows: those the newest reviews recorded a git tree
/// in, each with the HEAD it last looked at.
#[derive(Default)]
pub struct AutoAttest {
    repos: Vec<(PathBuf, Option<String>)>,
    /// Whether the repositories of reviews journaled before this start are followed yet.
    resumed: bool,
}

/// Repositories followed at most; the one reviewed longest ago makes room.
const MAX_FOLLOWED: usize = 64;

impl AutoAttest {
    /// Follow the repository at `top`, where a review just recorded a git tree.
    pub fn reviewed_in(&mut self, top: PathBuf) {
        if let Some(at) = self.repos.iter().position(|(t, _)| *t == top) {
            let followed = self.repos.remove(at);
            self.repos.push(followed);
            return;
        }
        if self.repos.len() == MAX_FOLLOWED {
            self.repos.remove(0);
        }
        self.repos.push((top, None));
    }
}

impl Engine {
    /// `[attest] auto` follows the repository holding `cwd`, where a review just recorded
    /// a git tree.
    pub(super) fn reviewed_in(&mut self, cwd: &Path) {
        if let Some(top) = self.trees.top(cwd) {
            self.auto_attest.reviewed_in(top);
        }
    }

    pub(super) fn attest(&mut self, args: &AttestArgs, caller: Caller) -> Answer {
        // The gate of config.toml as it is now: it says which reviews count.
        self.follow_config(false);
        let refused = |refusal| Ok(Reply::Attest(AttestReply::Refused(refusal)));
        let cwd = caller.directory("`cwd`", &args.cwd)?;
        let Some(top) = self.trees.top(Path::new(&cwd)) else {
            return refused(AttestRefusal::NotARepository { cwd: args.cwd.clone() });
        };
        // The repository around a served user's directory is that user's too.
        let top = PathBuf::from(caller.directory("the repository's top", &top.to_string_lossy())?);
        // The commit as its own object says, checked against its id: the daemon reads no
        // object out of the repository (a witness account runs no git there).
        let Some(commit) = Commit::from_object(&args.commit, &args.commit_object) else {
            return refused(AttestRefusal::NotThatCommit { commit: args.commit.clone() });
        };
        let reply = match self.attest_commit(&top, commit)? {
            Ok(attestation) => AttestReply::Attested(Box::new(attestation)),
            Err(refusal) => AttestReply::Refused(refusal),
        };
        Ok(Reply::Attest(reply))
    }

    /// The attestation of `commit` of the repository at `top`, or why it gets none.
    fn attest_commit(&mut self, top: &Path, commit: Commit) -> Result<Result<Attestation, AttestRefusal>, StoreError> {
        let covering = match self.hook_gate().covering(top, &commit)? {
            Ok(covering) => covering,
            Err(refusal) => return Ok(Err(refusal)),
        };
        let (evidence_id, packet_id) = match &covering {
            Covering::Evidence(evidence) => (Some(evidence.evidence_id.clone()), None),
            Covering::Jury(jury, _) => (None, Some(jury.key.clone())),
        };
        // One review of one commit is attested once: asked again, the same envelope.
        let before = self.store.journal_find_all::<Attested>(Lookup::AttestedByCommit, &commit.id)?;
        let before = before.into_iter().find(|(_, a)| a.evidence_id == evidence_id && a.packet_id == packet_id);
        // An envelope of an older predicate is not given again: this one is signed anew.
        if let Some((_, before)) = before
            && let Some(statement) = before.envelope.statement()
        {
            let envelope = before.envelope;
            return Ok(Ok(Attestation { commit: commit.id, tree: commit.tree, statement, envelope, first: false }));
        }
        let attested_at = format_utc(chrono::Utc::now());
        let envelope = self.witness.seal(|witness_key_id| {
            Statement::of_commit(&commit.id, &commit.tree, predicate(&covering, witness_key_id, attested_at))
        });
        let statement = own_statement(&envelope)?;
        let record = Attested {
            commit: commit.id.clone(),
            tree: commit.tree.clone(),
            top: top.display().to_string(),
            evidence_id,
            packet_id,
            envelope: envelope.clone(),
        };
        self.store.journal(&JournalEvent::Attested(Box::new(record)))?;
        Ok(Ok(Attestation { commit: commit.id, tree: commit.tree, statement, envelope, first: true }))
    }

    /// `[attest] auto`, on the watcher's tick: each followed repository whose HEAD moved
    /// to a commit a counted review covers is attested, and its note appended, as `judge-
    /// evidence attest` would. A commit no review covers is passed over quietly (the
    /// agent may still be working); a witness account runs no git there, so never.
    pub(super) fn attest_new_commits(&mut self) {
        if !self.config.current().file.attest.auto || self.config.is_witness() {
            return;
        }
        if !self.auto_attest.resumed {
            self.auto_attest.resumed = true;
            if let Err(error) = self.resume_following() {
                tracing::warn!(%error, "cannot follow the repositories reviewed before this start");
            }
        }
        for at in 0..self.auto_attest.repos.len() {
            let (top, seen) = &self.auto_attest.repos[at];
            let top = top.clone();
            let Some(head) = worktree::head(&top).filter(|head| Some(head) != seen.as_ref()) else { continue };
            self.auto_attest.repos[at].1 = Some(head.clone());
            let Some(commit) = worktree::commit(&top, &head) else { continue };
            match self.attest_commit(&top, commit) {
                Ok(Ok(attestation)) => match worktree::append_note(&top, &head, &attestation.envelope.line()) {
                    Ok(appended) => {
                        tracing::info!(repository = %top.display(), commit = %head, appended, "attested a new commit");
                    }
                    Err(error) => tracing::warn!(%error, "attested a new commit, but cannot write its note"),
                },
                Ok(Err(refusal)) => tracing::debug!(%refusal, "a new commit not attested"),
                Err(error) => tracing::warn!(%error, "cannot attest a new commit"),
            }
        }
    }

    /// Follow the repositories of the newest reviews journaled before this start (a
    /// review's tree recorded, its directory known), so that a commit made after a restart
    /// is attested as one made before it would have been.
    fn resume_following(&mut self) -> Result<(), StoreError> {
        let mut reviewed: Vec<(i64, String)> = Vec::new();
        self.store.journal_newest_first::<EvidenceVerified>(|seq, _, evidence| {
            if let Some(cwd) = evidence.cwd.filter(|_| evidence.git_tree.is_some()) {
                reviewed.push((seq, cwd));
            }
            reviewed.len() < MAX_FOLLOWED
        })?;
        let evidence = reviewed.len();
        self.store.journal_newest_first::<JuryConvened>(|seq, _, jury| {
            if jury.git_tree.is_some() {
                reviewed.push((seq, jury.cwd));
            }
            reviewed.len() - evidence < MAX_FOLLOWED
        })?;
        // Oldest first, so that the newest are the last to make room.
        reviewed.sort();
        for (_, cwd) in reviewed {
            self.reviewed_in(Path::new(&cwd));
        }
        Ok(())
    }
}

/// The statement of an envelope this daemon sealed.
fn own_statement(envelope: &Envelope) -> Result<Statement, StoreError> {
    envelope.statement().ok_or_else(|| StoreError::Integrity("an attestation's envelope holds no statement".into()))
}

/// The base a covering review's changes began at, as the predicate names it (covering
/// counts no review whose base is unknown).
fn reviewed_base(base: Option<&DiffBase>) -> Option<String> {
    base.and_then(DiffBase::commit).map(str::to_owned)
}

/// What the witness says of the review that covers the commit.
fn predicate(covering: &Covering, witness_key_id: String, attested_at: String) -> ReviewPredicate {
    match covering {
        Covering::Evidence(evidence) => ReviewPredicate {
            reviewed_at: evidence.reviewed_at.clone().unwrap_or_else(|| evidence.verified_at.clone()),
            attested_at,
            witness_key_id,
            reviewed_base: reviewed_base(evidence.git_base.as_ref()),
            executor: Executor {
                host: Some(evidence.host),
                model: evidence.executor_model.clone(),
                family: evidence.executor_family.clone(),
            },
            review: Review::Reviewer(ReviewerReview {
                evidence_id: evidence.evidence_id.clone(),
                path: evidence.agent_name.clone().unwrap_or_default(),
                model: evidence.reviewer_model.clone().unwrap_or_default(),
                family: evidence.reviewer_family.clone().unwrap_or_default(),
                identity_source: evidence.reviewer_model_source.clone().unwrap_or_default(),
                assurance: evidence.identity_assurance,
                verdict: evidence.verdict.clone(),
                score: evidence.score,
            }),
        },
        Covering::Jury(jury, at) => {
            let report = report_jury((**jury).clone());
            let jurors: Vec<RecordedJuror> = report
                .jurors
                .into_iter()
                .map(|j| RecordedJuror {
                    name: j.name,
                    model: j.model_reported.unwrap_or(j.model_requested),
                    family: j.family,
                    verdict: j.verdict,
                    identity_source: j.identity_source,
                })
                .collect();
            let answered = |j: &&RecordedJuror| matches!(j.verdict.as_str(), "pass" | "fail" | "uncertain");
            let mut families: Vec<String> = jurors.iter().filter(answered).filter_map(|j| j.family.clone()).collect();
            families.sort();
            families.dedup();
            ReviewPredicate {
                reviewed_at: at.clone(),
                attested_at,
                witness_key_id,
                reviewed_base: reviewed_base(jury.git_base.as_ref()),
                executor: Executor {
                    host: None,
                    model: jury.author_model.clone(),
                    family: jury.author_model.as_deref().and_then(|m| family(m, Table::Gate)).map(str::to_owned),
                },
                review: Review::Jury(JuryReview {
                    packet_id: jury.key.clone(),
                    rubric: jury.rubric.clone(),
                    final_verdict: report.final_verdict,
                    final_confidence: jury.final_confidence,
                    degraded: jury.degraded,
                    families,
                    jurors,
                }),
            }
        }
    }
}
