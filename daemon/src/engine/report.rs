//! `report`: the gate's decisions over a period, each with the review or the jury it
//! rested on, read from the journal alone (nothing is caught up or recorded).
//!
//! An allow under an evidence policy carries its evidence id, and a decision of the jury
//! the panel's key; each is looked up by it. Records from before the evidence id was kept
//! name it only in their message, where it is read from.

use super::{Answer, Engine};
use crate::caller::Caller;
use crate::store::{EvidenceVerified, JuryConvened, Lookup, ReviewTraced, Store, StoreError};
use judged_core::family::{Table, family};
use judged_core::rules::{EvidenceId, IdentityAssurance};
use judged_core::timestamp;
use judged_protocol::{
    CompletionBypassed, Decision, GateDecision, Reply, ReportArgs, ReportData, ReportDecision, ReportJury,
    ReportReview, ReportTrace,
};
use rustc_hash::FxHashMap;

/// What the gate wrote before the evidence id in an evidence allow's message, in records
/// from before the id was a field of its own.
const EVIDENCE_MARK: &str = "has verified cross-family review ";
/// How the reason of an allow on evidence begins (`fresh positive evidence, tree unchanged`).
const ON_EVIDENCE: &str = "fresh positive evidence";

impl Engine {
    /// What the gate did since `args.since`, of what `caller` may be shown: for a served
    /// user, the decisions and bypasses in directories of its own and its own traces.
    pub(super) fn report(&mut self, args: &ReportArgs, caller: Caller) -> Answer {
        let since = args.since;
        let within = |at: &str| since.is_none_or(|since| timestamp::parse(at).is_some_and(|t| t >= since));
        let mut decisions = Vec::new();
        self.store.journal_newest_first(|seq, at, decision: GateDecision| {
            if !within(at) {
                return false;
            }
            if caller.owns(decision.cwd.as_deref()) {
                decisions.push((seq, at.to_owned(), decision));
            }
            true
        })?;
        decisions.reverse();
        let mut reviews: FxHashMap<EvidenceId, Option<ReportReview>> = FxHashMap::default();
        let mut juries: FxHashMap<String, Option<ReportJury>> = FxHashMap::default();
        let mut reported = Vec::with_capacity(decisions.len());
        for (seq, at, decision) in decisions {
            let review = match evidence_id(&decision) {
                Some(id) => match reviews.get(&id) {
                    Some(found) => found.clone(),
                    None => {
                        let found = review_by_id(&self.store, &id)?;
                        reviews.insert(id, found.clone());
                        found
                    }
                },
                None => None,
            };
            let jury = match &decision.panel {
                Some(key) => match juries.get(key) {
                    Some(found) => found.clone(),
                    None => {
                        let found = self
                            .store
                            .journal_find::<JuryConvened>(Lookup::PanelByKey, key)?
                            .map(crate::jury::report_jury);
                        juries.insert(key.clone(), found.clone());
                        found
                    }
                },
                None => None,
            };
            reported.push(ReportDecision { seq, at, decision, review, jury });
        }
        let mut traces = Vec::new();
        self.store.journal_newest_first(|_, at, traced: ReviewTraced| {
            if !within(at) {
                return false;
            }
            if !caller.owns(Some(&traced.trace_path)) {
                return true;
            }
            traces.push(ReportTrace {
                at: at.to_owned(),
                skill: traced.skill,
                purpose: traced.purpose,
                trace_path: traced.trace_path,
                backend: traced.backend,
                status: traced.status,
                provenance: traced.provenance,
            });
            true
        })?;
        traces.reverse();
        let mut bypassed = Vec::new();
        self.store.journal_newest_first(|_, at, completion: CompletionBypassed| {
            if !within(at) {
                return false;
            }
            if caller.owns(Some(&completion.cwd)) {
                bypassed.push(completion);
            }
            true
        })?;
        bypassed.reverse();
        Ok(Reply::Report(ReportData {
            since: since.map(timestamp::format_utc),
            generated_at: timestamp::format_utc(chrono::Utc::now()),
            decisions: reported,
            traces,
            bypassed,
        }))
    }
}

/// The evidence an evidence allow rested on: recorded with it, or, in a record from before
/// it was kept, named in its message.
fn evidence_id(decision: &GateDecision) -> Option<EvidenceId> {
    if let Some(id) = &decision.evidence_id {
        return Some(id.clone());
    }
    // Only an allow on evidence names it: any other's message may hold words a payload
    // chose (an unknown event's name), which must not pass for a review behind it.
    if decision.decision != Decision::Allow || decision.panel.is_some() || !decision.reason.starts_with(ON_EVIDENCE) {
        return None;
    }
    let rest = &decision.message[decision.message.find(EVIDENCE_MARK)? + EVIDENCE_MARK.len()..];
    EvidenceId::parse(rest.split([' ', '\n']).next()?).ok()
}

fn review_by_id(store: &Store, id: &EvidenceId) -> Result<Option<ReportReview>, StoreError> {
    Ok(store.journal_find::<EvidenceVerified>(Lookup::EvidenceById, id.as_str())?.map(review))
}

fn family_of(model: Option<&str>) -> Option<String> {
    model.and_then(|m| family(m, Table::Evidence)).map(str::to_owned)
}

fn review(evidence: EvidenceVerified) -> ReportReview {
    let identity_source = match evidence.identity_assurance {
        IdentityAssurance::HostRecorded => format!("the {} session log", evidence.host.as_str()),
        IdentityAssurance::CallerDeclared => "the caller's word (verify --declared-reviewer-model)".to_owned(),
    };
    ReportReview {
        identity_source,
        identity_assurance: evidence.identity_assurance,
        executor_family: family_of(evidence.executor_model.as_deref()),
        reviewer_family: family_of(evidence.reviewer_model.as_deref()),
        evidence_id: evidence.evidence_id,
        host: evidence.host,
        session_id: evidence.session_id,
        session_events: evidence.session_events,
        executor_model: evidence.executor_model,
        reviewer_model: evidence.reviewer_model,
        score: evidence.score,
        verdict: evidence.verdict,
        reviewed_at: evidence.reviewed_at,
        verified_at: evidence.verified_at,
        witness: evidence.witness,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record from before an allow kept its evidence named it only in its message: that
    /// is read back for an allow on evidence alone, never for another allow whose message
    /// holds words a payload chose (an unknown event named after a real evidence id, allowed
    /// under `on_error = "allow"`, showed that review behind it).
    #[test]
    fn only_an_allow_on_evidence_is_read_back_for_its_evidence() {
        let id = "cne_0123456789abcdef0123456789abcdef";
        let decision = |reason: &str, message: String| -> GateDecision {
            serde_json::from_value(serde_json::json!({"event": "TaskCompleted", "host": "claude-code",
                "policy": "evidence", "settings_from": [], "decision": "allow", "reason": reason,
                "message": message, "latency_ms": 1.0}))
            .unwrap()
        };
        let on_evidence =
            decision("fresh positive evidence", format!("judged: task 1 has verified cross-family review {id} (x)"));
        assert_eq!(evidence_id(&on_evidence).map(|id| id.as_str().to_owned()).as_deref(), Some(id));
        let forged = decision("unknown event", format!("judged: x has verified cross-family review {id} as its event"));
        assert_eq!(evidence_id(&forged), None);
    }
}
