//! `validate`: re-check an evidence artifact against the log as it is now. Appends after
//! the bound prefix are fine; any change inside it is not.

use super::session::{self, MarkerFault, MarkerIds, MarkerLifecycle, Reviewer, ReviewerFault, ReviewerLifecycle};
use super::verify::{reviewed_at, reviewer_model};
use super::{
    Artifact, EVIDENCE_SCHEMA, Env, EvidenceError, EvidenceId, HOST_SESSION_EVENT, Nonce, REVIEWER_AGENT, Result,
    Validated, extract_response,
};
use crate::chain;
use crate::family::{self, Table};
use crate::log::SessionLog;
use serde_json::Value;

fn fail<T>(message: &str) -> Result<T> {
    Err(EvidenceError::evidence(message))
}

/// The executor's log as any evidence bound it (§2.6 steps 5–8): the bound prefix
/// unchanged (`modified` says so when it is not, in the words of that kind of evidence),
/// and the session and cwd those of the evidence. The prefix.
pub(super) fn revalidate_prefix(ev: &Artifact, log: &SessionLog, env: &dyn Env, modified: &str) -> Result<u64> {
    session::ensure_parsed(log)?;
    let Some(prefix) = ev.prefix_len("event_prefix_bytes", log.len()) else {
        return fail("evidence event prefix length is invalid");
    };
    if log.prefix_sha256(prefix) != ev.required("event_prefix_sha256")? {
        return fail(modified);
    }
    let meta = session::metadata(log, prefix)?;
    if meta.session_id.as_str() != ev.required("session_id")?
        || env.resolve(&meta.cwd) != env.resolve(ev.required("cwd")?)
    {
        return fail("evidence session metadata mismatch");
    }
    Ok(prefix)
}

/// The marker lifecycle inside the bound prefix (§2.6 steps 10–11), and the host's chain
/// intact from the marker call to the end of the log as it is now.
pub(super) fn revalidate_marker<'a>(ev: &Artifact, log: &'a SessionLog, prefix: u64) -> Result<MarkerLifecycle<'a>> {
    let marker = session::bound_marker(log, &MarkerIds::of(ev)?, prefix).map_err(|fault| {
        EvidenceError::evidence(match fault {
            MarkerFault::StartCount | MarkerFault::CompletionCount => {
                "evidence challenge marker lifecycle is missing or duplicated"
            }
            _ => "evidence challenge marker lifecycle is invalid",
        })
    })?;
    // The whole log as it is now: lines slipped in right after a forged lifecycle show
    // only where the host writes its next event, after the bound prefix.
    session::check_host_chain(log, marker.start_line.start)?;
    Ok(marker)
}

/// What [`validate`] refuses from the evidence's own fields (§2.6 steps 2–4): its schema,
/// a verified pair, the host's reviewer.
pub(super) fn check_standing(ev: &Artifact) -> Result<()> {
    if ev.str("schema") != Some(EVIDENCE_SCHEMA) {
        return fail("unsupported Copilot native evidence schema");
    }
    if ev.str("status") != Some("verified") || ev.get("independence_verified") != Some(&Value::Bool(true)) {
        return fail("Copilot native evidence is not verified");
    }
    if ev.required("agent_name")? != REVIEWER_AGENT {
        return fail("evidence agent is not rubber-duck");
    }
    Ok(())
}

/// Revalidate evidence: where its reviewed window starts in the log (the marker call),
/// and the review's time when the evidence does not record it.
pub fn validate(ev: &Artifact, log: &SessionLog, env: &dyn Env) -> Result<Validated> {
    check_standing(ev)?;
    let prefix = revalidate_prefix(ev, log, env, "Copilot evidence event prefix was modified")?;
    let tool_call_id = ev.required("tool_call_id")?;
    let nonce = &Nonce::of(ev)?;
    let executor_model = ev.required("executor_model")?;
    let marker = revalidate_marker(ev, log, prefix)?;

    let invocations: Vec<_> = session::nonce_bound_invocations(log.records_within(prefix), nonce)
        .filter(|(_, _, call)| call.id.as_deref() == Some(tool_call_id))
        .collect();
    let [(invocation_line, invocation, _)] = invocations.as_slice() else {
        return fail("evidence lifecycle events are missing or duplicated");
    };
    let lifecycle = ReviewerLifecycle::collect(log.records_within(prefix), tool_call_id);
    let Reviewer {
        started: (started_line, started),
        completed: (completed_line, completed),
        tool_completion: (tool_line, tool_result, tool_record),
        child,
    } = lifecycle.reviewer(log.records_within(prefix), nonce).map_err(lifecycle_refusal)?;
    if ev.str("child_agent_id").is_some_and(|stored| stored != child) {
        return fail("evidence child agent id mismatch");
    }
    if marker.completion_line.end >= invocation_line.end
        || !session::lifecycle_ordered(invocation_line.end, started_line.end, completed_line.end, tool_line.end)
    {
        return fail("evidence lifecycle events are out of order");
    }
    // Defect fix (evidence-protocol.md §8.7): success is exactly `true` here as in verify.
    if !tool_result.success {
        return Err(lifecycle_refusal(ReviewerFault::ToolUnsuccessful));
    }
    let invocation_model = invocation.model.as_deref().map(str::trim).unwrap_or_default();
    let reviewer =
        reviewer_model(started, completed).or_else(|_| fail("evidence model ids differ from host lifecycle events"))?;
    if invocation_model != executor_model || reviewer != ev.required("reviewer_model")? {
        return fail("evidence model ids differ from host lifecycle events");
    }
    // Defect fix (evidence-protocol.md §8.7): an empty completion model is a change, as in verify.
    if tool_record.model.as_deref().is_some_and(|m| m.trim() != executor_model) {
        return fail("evidence executor model changed before tool completion");
    }
    check_families(ev, executor_model, &reviewer)?;
    let host_time = reviewed_at((completed_line, completed), (tool_line, tool_record))?;
    // The reference helper's evidence has no `reviewed_at` (nor had this tool's, before it
    // was added): the host's log still says when the review ended. One that is recorded must
    // be that time, or an old review could be renewed by hand.
    let derived_reviewed_at = match ev.get("reviewed_at") {
        None | Some(Value::Null) => Some(host_time),
        Some(stored) if stored.as_str() == Some(host_time.as_str()) => None,
        Some(_) => return fail("evidence reviewed_at is not the host's time of the reviewer's completion"),
    };
    check_response(ev, &extract_response(&tool_result.result)?, env)?;
    if ev.required("evidence_id")? != EvidenceId::of(ev).as_str() {
        return fail("native evidence id does not match its bound fields");
    }
    Ok(Validated { window_start: marker.start_line.start, derived_reviewed_at })
}

/// The evidence's families, relation and model sources against its two model ids, as the
/// host's lifecycle names them.
fn check_families(ev: &Artifact, executor_model: &str, reviewer: &str) -> Result<()> {
    let executor_family = family::family(executor_model, Table::Evidence);
    let reviewer_family = family::family(reviewer, Table::Evidence);
    let (Some(ef), Some(rf)) = (executor_family, reviewer_family) else {
        return fail("evidence no longer establishes a known cross-family pair");
    };
    if ef == rf {
        return fail("evidence no longer establishes a known cross-family pair");
    }
    if ev.required("executor_family")? != ef || ev.required("reviewer_family")? != rf {
        return fail("evidence family fields do not match its model ids");
    }
    if ev.required("family_relation")? != "different" {
        return fail("evidence family relation is not different");
    }
    if ev.required("executor_model_source")? != HOST_SESSION_EVENT
        || ev.required("reviewer_model_source")? != HOST_SESSION_EVENT
    {
        return fail("evidence model sources are not host session events");
    }
    Ok(())
}

/// The response file the evidence names against the reviewer's answer in the host's log.
fn check_response(ev: &Artifact, response: &str, env: &dyn Env) -> Result<()> {
    let stored = env.read_file(ev.required("response_path")?)?;
    if stored != response.as_bytes()
        || ev.required("response_sha256")? != chain::to_hex(&chain::sha256(&stored)).as_str()
    {
        return fail("native reviewer response artifact does not match the host tool result");
    }
    Ok(())
}

/// `validate`'s words for a faulty reviewer lifecycle, all exit 2: evidence that no
/// longer matches its log is forged or stale, whatever the fault.
fn lifecycle_refusal(fault: ReviewerFault) -> EvidenceError {
    EvidenceError::evidence(match fault {
        ReviewerFault::Incomplete { .. } => "evidence lifecycle events are missing or duplicated",
        ReviewerFault::Failed => "evidence contains a failed native reviewer lifecycle",
        ReviewerFault::NotReviewer => "evidence lifecycle agent mismatch",
        ReviewerFault::ChildUnbound | ReviewerFault::ChildWithoutNonce(_) => "evidence child agent id mismatch",
        ReviewerFault::ToolUnsuccessful => "evidence tool completion is not successful",
    })
}
