//! Which review covers a commit, for an attestation: one of the commit's own tree, as
//! this repository's gate counts reviews (verified, cross-family, approving, of the
//! assurance `[gate] evidence_assurance` asks, on a log that still holds; or a healthy
//! jury's pass), whenever it was made. Freshness is the gate's question, not this one:
//! a tree reviewed yesterday and committed today is that tree.

use super::HookGate;
use crate::store::{EvidenceVerified, JuryConvened, Lookup, StoreError};
use judged_core::review_text::is_positive;
use judged_io::files;
use judged_io::worktree::{Commit, DiffBase};
use judged_jury::packet::FinalVerdict;
use judged_protocol::{AttestRefusal, wire_name};
use std::path::Path;

/// The review a commit's attestation rests on.
pub enum Covering {
    /// Verified evidence of one reviewer.
    Evidence(Box<EvidenceVerified>),
    /// A jury's pass, and when it was recorded.
    Jury(Box<JuryConvened>, String),
}

/// Whether a journaled review was made in the repository at `top` (its cwd there or below).
fn in_repository(cwd: Option<&str>, top: &Path) -> bool {
    cwd.is_some_and(|cwd| Path::new(&files::resolve(cwd)).starts_with(top))
}

/// Why a review whose changes began at `base` does not cover `commit`, if it does not: a
/// review must say where its changes began, and one that began at the commit itself saw
/// none of the changes the commit makes. Whether what led to the base was reviewed is the
/// check's question (docs/spec/attestation.md §7.3), asked where the history is.
fn base_refusal(commit: &str, review: String, base: Option<&DiffBase>) -> Option<AttestRefusal> {
    match base {
        None => Some(AttestRefusal::BaseUnknown { commit: commit.to_owned(), review }),
        Some(base) if base.commit() == Some(commit) => {
            Some(AttestRefusal::ReviewedNothing { commit: commit.to_owned(), review })
        }
        Some(_) => None,
    }
}

impl HookGate<'_> {
    /// The newest review of `commit`'s tree in the repository at `top` that counts, or why
    /// none does: the newest refusal among the reviews of that tree, else what the newest
    /// review of the repository saw instead.
    pub fn covering(&mut self, top: &Path, commit: &Commit) -> Result<Result<Covering, AttestRefusal>, StoreError> {
        let top_text = top.display().to_string();
        let settings = match self.config.settings_for(Some(top), self.projects) {
            Ok(settings) => settings,
            Err(error) => return Ok(Err(AttestRefusal::Config { top: top_text, why: error.summary() })),
        };
        let mut refused = None;
        let evidence = self.store.journal_find_all::<EvidenceVerified>(Lookup::EvidenceByGitTree, &commit.tree)?;
        for (_, evidence) in evidence.into_iter().filter(|(_, e)| in_repository(e.cwd.as_deref(), top)) {
            match self.refusal_of(&commit.id, &evidence, settings.evidence_assurance)? {
                None => return Ok(Ok(Covering::Evidence(Box::new(evidence)))),
                Some(refusal) => _ = refused.get_or_insert(refusal),
            }
        }
        let juries = self.store.journal_find_all::<JuryConvened>(Lookup::PanelByGitTree, &commit.tree)?;
        // The newest jury on the tree decides: an older pass does not outvote a later fail.
        if let Some((at, jury)) = juries.into_iter().find(|(_, p)| in_repository(Some(&p.cwd), top)) {
            let review = format!("jury {}", jury.key);
            let refusal = if jury.final_verdict != FinalVerdict::Pass || jury.degraded {
                Some(AttestRefusal::JuryDidNotPass {
                    commit: commit.id.clone(),
                    packet_id: jury.key.clone(),
                    verdict: wire_name(&jury.final_verdict),
                    degraded: jury.degraded,
                })
            } else if jury.author_model.is_none() {
                // Without the author, no reviewer of its is known to be of another family.
                Some(AttestRefusal::JuryWithoutAuthor { commit: commit.id.clone(), packet_id: jury.key.clone() })
            } else {
                base_refusal(&commit.id, review, jury.git_base.as_ref())
            };
            match refusal {
                None => return Ok(Ok(Covering::Jury(Box::new(jury), at))),
                Some(refusal) => _ = refused.get_or_insert(refusal),
            }
        }
        if let Some(refusal) = refused {
            return Ok(Err(refusal));
        }
        self.unreviewed(top, commit).map(Err)
    }

    /// Why `evidence` of the commit's tree does not count, if it does not.
    fn refusal_of(
        &mut self,
        commit: &str,
        evidence: &EvidenceVerified,
        assurance: judged_core::rules::IdentityAssurance,
    ) -> Result<Option<AttestRefusal>, StoreError> {
        let (commit, evidence_id) = (commit.to_owned(), evidence.evidence_id.clone());
        let executor_model = evidence.executor_model.clone().unwrap_or_default();
        let reviewer_model = evidence.reviewer_model.clone().unwrap_or_default();
        if evidence.status != judged_core::rules::EvidenceStatus::Verified {
            return Ok(Some(match (&evidence.executor_family, &evidence.reviewer_family) {
                (Some(a), Some(b)) if a == b && a != "unknown" => {
                    AttestRefusal::SameFamily { commit, evidence_id, executor_model, reviewer_model, family: a.clone() }
                }
                _ => AttestRefusal::UnknownFamily { commit, evidence_id, executor_model, reviewer_model },
            }));
        }
        if evidence.identity_assurance < assurance {
            return Ok(Some(AttestRefusal::CallerDeclared { commit, evidence_id, reviewer_model }));
        }
        if !evidence.score.zip(evidence.verdict.as_deref()).is_some_and(|(s, v)| is_positive(s, v)) {
            let (score, verdict) = (evidence.score, evidence.verdict.clone());
            return Ok(Some(AttestRefusal::NotApproved { commit, evidence_id, score, verdict }));
        }
        if !self.evidence_stands(evidence)? {
            return Ok(Some(AttestRefusal::LogUndone { commit, evidence_id }));
        }
        Ok(base_refusal(&commit, format!("evidence {evidence_id}"), evidence.git_base.as_ref()))
    }

    /// No review saw the commit's tree: what the newest review of the repository saw
    /// instead, and whether the commit's parent holds a reviewed tree.
    fn unreviewed(&mut self, top: &Path, commit: &Commit) -> Result<AttestRefusal, StoreError> {
        let mut newest: Option<(String, String, String)> = None;
        self.store.journal_newest_first(|_, _, evidence: EvidenceVerified| {
            if let Some(tree) = evidence.git_tree.filter(|_| in_repository(evidence.cwd.as_deref(), top)) {
                let at = evidence.reviewed_at.unwrap_or(evidence.verified_at);
                newest = Some((format!("evidence {}", evidence.evidence_id), at, tree));
                return false;
            }
            true
        })?;
        let mut jury: Option<(String, String, String)> = None;
        self.store.journal_newest_first(|_, at, panel: JuryConvened| {
            if let Some(tree) = panel.git_tree.filter(|_| in_repository(Some(&panel.cwd), top)) {
                jury = Some((format!("jury {}", panel.key), at.to_owned(), tree));
                return false;
            }
            true
        })?;
        let newest = match (newest, jury) {
            (Some(evidence), Some(jury)) => Some(if jury.1 > evidence.1 { jury } else { evidence }),
            (evidence, jury) => evidence.or(jury),
        };
        let Some((review, reviewed_at, reviewed_tree)) = newest else {
            return Ok(AttestRefusal::NotReviewed { commit: commit.id.clone(), tree: commit.tree.clone() });
        };
        let mut parent_reviewed = None;
        if let Some(parent) = commit.parents.first().and_then(|p| self.trees.commit(top, p)) {
            let reviewed = |lookup| self.store.journal_find_all::<EvidenceVerified>(lookup, &parent.tree);
            let evidence = reviewed(Lookup::EvidenceByGitTree)?;
            let juries = self.store.journal_find_all::<JuryConvened>(Lookup::PanelByGitTree, &parent.tree)?;
            if !evidence.is_empty() || !juries.is_empty() {
                parent_reviewed = Some(parent.id);
            }
        }
        Ok(AttestRefusal::TreeDiffers {
            commit: commit.id.clone(),
            tree: commit.tree.clone(),
            review,
            reviewed_at,
            reviewed_tree,
            parent_reviewed,
        })
    }
}
