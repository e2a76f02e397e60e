//! `verify`: prove that exactly one nonce-bound rubber-duck sub-agent of another model
//! family reviewed the work after the challenge, and build the evidence artifact.

use super::challenge::{BoundChallenge, revalidate};
use super::session::{self, Reviewer, ReviewerFault, ReviewerLifecycle};
use super::{
    Artifact, EVIDENCE_SCHEMA, Env, Evidence, EvidenceError, EvidenceId, FamilyPair, HOST_SESSION_EVENT,
    REVIEWER_AGENT, RefusalCode, Result, extract_response,
};
use super::{EvidenceStatus, Nonce};
use crate::event::{Record, SessionId};
use crate::family;
use crate::log::{Line, SessionLog};
use crate::{chain, timestamp};
use chrono::{DateTime, Utc};

/// What `verify` is asked besides the challenge: where the response goes, when, and what
/// the evidence records of the moment.
pub struct VerifyRequest<'a> {
    /// The resolved path the response will be written to.
    pub response_path: &'a str,
    /// When the command started: stamps `verified_at`.
    pub now: DateTime<Utc>,
    /// `--declared-reviewer-model`: a review only the caller vouches for.
    pub declared_model: Option<&'a str>,
}

/// A verification outcome: the evidence and the response to write beside it.
#[derive(Debug)]
pub struct Verified {
    /// The evidence artifact; `status` says whether the policy accepted the pair.
    pub evidence: Evidence,
    /// The reviewer's response, exactly as `response_sha256` hashes it.
    pub response: String,
    /// Where the reviewed window starts in the log (the marker call): an integrity finding
    /// from here on undoes the evidence.
    pub window_start: u64,
}

impl Verified {
    /// `Err` with exit 10 when the policy rejected the pair; the artifacts are still
    /// written first.
    pub fn policy(&self) -> Result<()> {
        if self.evidence.is_verified() {
            return Ok(());
        }
        let reason = &self.evidence.reason;
        Err(EvidenceError::new(RefusalCode::PolicyRejected, format!("native reviewer evidence rejected: {reason}")))
    }
}

/// What every review's evidence records, whichever way the review was established
/// (the host's reviewer sub-agent, a reviewer CLI, the caller's word).
pub(super) struct Review<'a> {
    pub pair: FamilyPair,
    /// The executor's session log, bound up to `prefix` bytes.
    pub log: &'a SessionLog,
    pub prefix: u64,
    pub request: &'a VerifyRequest<'a>,
    /// The host's time of the review's end (none when the host did not stamp it).
    pub reviewed_at: Option<String>,
    pub tool_call_id: Option<String>,
    pub agent_name: String,
    pub executor_model: &'a str,
    pub reviewer_model: &'a str,
    pub reviewer_model_source: &'a str,
    pub response: &'a str,
}

impl Review<'_> {
    /// The evidence artifact: these fields, the challenge's repeated fields (`bound`, and
    /// its `nonce`), and the evidence id over the result; the fields of one way of
    /// reviewing are the caller's to add.
    pub(super) fn evidence(self, bound: &BoundChallenge, nonce: &Nonce) -> Evidence {
        let Review {
            pair,
            log,
            prefix,
            request,
            reviewed_at,
            tool_call_id,
            agent_name,
            executor_model,
            reviewer_model,
            reviewer_model_source,
            response,
        } = self;
        let mut evidence = Evidence {
            schema: EVIDENCE_SCHEMA.to_owned(),
            status: pair.status,
            reason: pair.reason.to_owned(),
            verified_at: timestamp::format_utc(request.now),
            reviewed_at,
            session_events: log.path.clone(),
            tool_call_id,
            agent_name,
            executor_model: executor_model.to_owned(),
            executor_family: pair.executor_family.unwrap_or(family::UNKNOWN).to_owned(),
            reviewer_model: reviewer_model.to_owned(),
            reviewer_model_source: reviewer_model_source.to_owned(),
            reviewer_family: pair.reviewer_family.unwrap_or(family::UNKNOWN).to_owned(),
            family_relation: pair.relation,
            independence_verified: pair.status == EvidenceStatus::Verified,
            response_path: request.response_path.to_owned(),
            response_sha256: chain::to_hex(&chain::sha256(response.as_bytes())),
            event_prefix_bytes: prefix,
            event_prefix_sha256: log.prefix_sha256(prefix),
            host: log.host,
            chain_sha256: log.chain_at(prefix),
            binding: bound.ids.binding.to_owned(),
            nonce: nonce.clone(),
            cwd: bound.cwd.to_owned(),
            session_id: SessionId::from(bound.session_id),
            challenge_event_id: bound.ids.start_event_id.to_owned(),
            challenge_completion_event_id: bound.ids.completion_event_id.to_owned(),
            challenge_tool_call_id: bound.ids.tool_call_id.to_owned(),
            // Computed below, from the fields it does not cover.
            evidence_id: EvidenceId::default(),
            // The review covers the work the round began on, not what the tree holds by
            // the time verify runs (the agent may have changed it since the review).
            tree_sha256: bound.tree_sha256.map(str::to_owned),
            witness: None,
            child_agent_id: None,
            executor_model_source: None,
            identity_source: None,
            identity_assurance: None,
            challenge_event_timestamp: None,
            reviewer_host: None,
            reviewer_session_events: None,
            reviewer_session_id: None,
            reviewer_prefix_bytes: None,
            reviewer_prefix_sha256: None,
            other: Default::default(),
        };
        evidence.evidence_id = EvidenceId::of(&Artifact::from(evidence.clone()));
        evidence
    }
}

/// Verify the reviewer lifecycle bound to `challenge`.
pub fn verify(challenge: &Artifact, log: &SessionLog, request: &VerifyRequest, env: &dyn Env) -> Result<Verified> {
    let bound = revalidate(challenge, log, env)?;
    let nonce = &Nonce::of(challenge)?;
    let challenge_time = challenge.timestamp("challenge_event_timestamp")?;
    let (prefix, executor_model) = (bound.prefix, bound.ids.executor_model);

    // Defect fix (evidence-protocol.md §8.4): only invocations need a timestamp; a malformed timestamp
    // on any other event no longer aborts verification.
    let invocations: Vec<_> = session::nonce_bound_invocations(log.records(), nonce)
        .filter(|(_, r, _)| r.timestamp.as_deref().and_then(timestamp::parse).is_some_and(|t| t >= challenge_time))
        .collect();
    let [(invocation_line, invocation, call)] = invocations.as_slice() else {
        return Err(EvidenceError::new(
            RefusalCode::InvocationCount,
            format!("expected exactly one nonce-bound native rubber-duck invocation, found {}", invocations.len()),
        ));
    };
    if invocation_line.end <= prefix {
        return Err(EvidenceError::evidence("native rubber-duck invocation does not follow the bound challenge"));
    }
    let tool_call_id = call
        .id
        .as_deref()
        .ok_or_else(|| EvidenceError::evidence("native rubber-duck invocation is missing toolCallId"))?;
    let invocation_model = invocation
        .model
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .ok_or_else(|| EvidenceError::evidence("native invocation is missing host-reported executor model"))?;
    if invocation_model != executor_model.trim() {
        return Err(EvidenceError::evidence("executor model changed between challenge and native review"));
    }

    let lifecycle = ReviewerLifecycle::collect(log.records(), tool_call_id);
    if let Some(fault) = lifecycle.failure() {
        return Err(lifecycle_refusal(fault));
    }
    let Reviewer {
        started: (started_line, started),
        completed: (completed_line, completed),
        tool_completion: (tool_line, tool_result, tool_record),
        child,
    } = lifecycle.reviewer(log.records(), nonce).map_err(lifecycle_refusal)?;
    if !session::lifecycle_ordered(invocation_line.end, started_line.end, completed_line.end, tool_line.end) {
        return Err(EvidenceError::evidence("native rubber-duck lifecycle events are out of order"));
    }
    if tool_record.model.as_deref().is_some_and(|m| m.trim() != executor_model.trim()) {
        return Err(EvidenceError::evidence("root executor model changed before native tool completion"));
    }
    let reviewer_model = reviewer_model(started, completed)?;
    let response = extract_response(&tool_result.result)?;
    let reviewed_at = reviewed_at((completed_line, completed), (tool_line, tool_record))?;

    let pair = FamilyPair::of(invocation_model, &reviewer_model, "host-event-verified-cross-family");
    let review = Review {
        pair,
        log,
        prefix: tool_line.end.max(completed_line.end),
        request,
        reviewed_at: Some(reviewed_at),
        tool_call_id: Some(tool_call_id.to_owned()),
        agent_name: REVIEWER_AGENT.to_owned(),
        executor_model: invocation_model,
        reviewer_model: &reviewer_model,
        reviewer_model_source: HOST_SESSION_EVENT,
        response: &response,
    };
    let mut evidence = review.evidence(&bound, nonce);
    evidence.child_agent_id = Some(child.to_owned());
    evidence.executor_model_source = Some(HOST_SESSION_EVENT.to_owned());
    Ok(Verified { evidence, response, window_start: bound.marker.start_line.start })
}

/// `verify`'s words and exit codes for a faulty reviewer lifecycle: the reference
/// helper's, so a failed or incomplete review exits 7, a child without the nonce exits 6.
fn lifecycle_refusal(fault: ReviewerFault) -> EvidenceError {
    match fault {
        ReviewerFault::Failed => EvidenceError::new(RefusalCode::Lifecycle, "native rubber-duck subagent failed"),
        ReviewerFault::ToolUnsuccessful => {
            EvidenceError::new(RefusalCode::Lifecycle, "native rubber-duck tool execution did not succeed")
        }
        ReviewerFault::Incomplete { started: s, completed: c, tool_completions: t } => EvidenceError::new(
            RefusalCode::Lifecycle,
            format!(
                "native rubber-duck lifecycle is incomplete or ambiguous (started={s}, completed={c}, tool_complete={t})"
            ),
        ),
        ReviewerFault::NotReviewer => {
            EvidenceError::evidence("nonce-bound task was not completed by the rubber-duck subagent")
        }
        // Host fix (evidence-protocol.md §9): the child is bound by the agent id both lifecycle ends name,
        // not by requiring it to equal the toolCallId, which the real host never writes.
        ReviewerFault::ChildUnbound => {
            EvidenceError::evidence("rubber-duck lifecycle is not bound to one child agent id")
        }
        ReviewerFault::ChildWithoutNonce(child) => EvidenceError::new(
            RefusalCode::InvocationCount,
            format!("rubber-duck child agent {child} did not receive the nonce line"),
        ),
    }
}

/// When the review ended, as the host recorded it: the timestamp of the later of the
/// reviewer's completion and the root task's return. Freshness is measured from here, so
/// running `verify` again can never make an old review look new.
pub(super) fn reviewed_at(completed: (&Line, &Record), tool_completion: (&Line, &Record)) -> Result<String> {
    let (_, last) = if tool_completion.0.end > completed.0.end { tool_completion } else { completed };
    last.timestamp
        .clone()
        .filter(|t| timestamp::parse(t).is_some())
        .ok_or_else(|| EvidenceError::evidence("the host recorded no timestamp for the reviewer's completion"))
}

/// The resolved reviewer model: the completed one, else the started one; both ends must
/// agree when both name one.
pub(super) fn reviewer_model(started: &Record, completed: &Record) -> Result<String> {
    let model_of = |r: &Record| r.subagent.as_ref().and_then(|s| s.model.clone()).filter(|m| !m.is_empty());
    let (started_model, completed_model) = (model_of(started), model_of(completed));
    let reviewer = completed_model
        .or_else(|| started_model.clone())
        .ok_or_else(|| EvidenceError::evidence("native reviewer completion is missing its resolved model"))?;
    if started_model.is_some_and(|m| m != reviewer) {
        return Err(EvidenceError::evidence("native reviewer model changed within one subagent lifecycle"));
    }
    Ok(reviewer)
}
