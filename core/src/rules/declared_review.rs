//! Reviews whose reviewer no host records (issue 14): an MCP tool call to a reviewer
//! server, or any other command, run by the agent as a root tool call. The session log
//! shows that the call carried the challenge's nonce and what it returned; who answered is
//! only the caller's word (`verify --declared-reviewer-model`). Such evidence says so:
//! `identity_assurance: caller-declared`, `independence_verified: false`, and the gate
//! accepts it only where `[gate] evidence_assurance = "caller-declared"` says to.
//!
//! Exactly one root tool call after the challenge may carry the nonce line in its
//! arguments (any string among them, for an MCP tool's `prompt` as for a shell command's
//! here-document); it must have returned successfully, and its result is the response.

use super::challenge::revalidate;
use super::validate::{revalidate_marker, revalidate_prefix};
use super::verify::{Review, Verified, VerifyRequest};
use super::{
    Artifact, EVIDENCE_SCHEMA, Env, EvidenceError, EvidenceId, FamilyPair, RefusalCode, Result, has_nonce_line,
};
use super::{EvidenceStatus, Nonce};
use crate::chain;
use crate::event::{ToolCall, ToolResult};
use crate::log::{Line, SessionLog};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The `agent_name` prefix of evidence of a caller-declared review: `declared:<tool>`.
const DECLARED: &str = "declared:";
/// How the reviewer's identity in evidence is known (`identity_assurance`; evidence of a
/// rubber-duck review, which predates the field, is host-recorded).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdentityAssurance {
    /// The caller's word only.
    CallerDeclared,
    /// A host's own log of the reviewer's run.
    #[default]
    HostRecorded,
}

impl IdentityAssurance {
    /// The name evidence and the gate's config use.
    pub fn as_str(self) -> &'static str {
        match self {
            IdentityAssurance::CallerDeclared => "caller-declared",
            IdentityAssurance::HostRecorded => "host-recorded",
        }
    }
}

const CALLER_DECLARED: IdentityAssurance = IdentityAssurance::CallerDeclared;

/// Whether evidence is of a caller-declared review.
pub fn is_declared(evidence: &Artifact) -> bool {
    evidence.str("agent_name").is_some_and(|name| name.starts_with(DECLARED))
}

/// Whether any string in `value` (at any depth) carries the nonce line.
fn carries_nonce(value: &Value, nonce: &Nonce) -> bool {
    match value {
        Value::String(text) => has_nonce_line(text, nonce),
        Value::Array(items) => items.iter().any(|v| carries_nonce(v, nonce)),
        Value::Object(fields) => fields.values().any(|v| carries_nonce(v, nonce)),
        _ => false,
    }
}

/// A root tool call that carried the nonce, with where it started and its result.
struct DeclaredCall<'a> {
    call: &'a ToolCall,
    returned: Option<(&'a Line, &'a ToolResult, Option<&'a str>)>,
}

/// The root tool calls after byte `after` whose arguments carry `nonce`, with their
/// results.
fn nonce_calls<'a>(log: &'a SessionLog, after: u64, nonce: &Nonce) -> Vec<DeclaredCall<'a>> {
    let mut calls: Vec<DeclaredCall> = log
        .records()
        .filter(|(line, record)| line.start >= after && record.root)
        .flat_map(|(_, record)| record.tool_calls.iter())
        .filter(|call| call.id.is_some() && carries_nonce(&call.arguments, nonce))
        .map(|call| DeclaredCall { call, returned: None })
        .collect();
    for (line, record) in log.records() {
        for result in &record.tool_results {
            if let Some(found) = calls.iter_mut().find(|c| c.call.id == result.tool_call_id) {
                found.returned.get_or_insert((line, result, record.timestamp.as_deref()));
            }
        }
    }
    calls
}

/// The one nonce-carrying call of the window, returned successfully: the call, and where
/// and when it returned with what.
fn the_declared_call<'a>(
    log: &'a SessionLog,
    after: u64,
    nonce: &Nonce,
) -> Result<(&'a ToolCall, &'a Line, &'a ToolResult, Option<&'a str>)> {
    let calls = nonce_calls(log, after, nonce);
    let [only] = calls.as_slice() else {
        return Err(EvidenceError::new(
            RefusalCode::InvocationCount,
            format!(
                "expected exactly one root tool call after the challenge carrying the line ARIS_REVIEW_NONCE={nonce} \
                 in its arguments, found {}",
                calls.len()
            ),
        ));
    };
    let Some((line, result, at)) = only.returned else {
        return Err(EvidenceError::new(RefusalCode::Lifecycle, "the reviewer call has not returned"));
    };
    if !result.success {
        return Err(EvidenceError::new(RefusalCode::Lifecycle, "the reviewer call did not succeed"));
    }
    Ok((only.call, line, result, at))
}

/// Verify a caller-declared review bound to `challenge`: the one root tool call of `log`
/// after the challenge that carried the nonce, its result the response, its reviewer
/// `declared_model` on the caller's word.
pub fn verify_declared_review(
    challenge: &Artifact,
    log: &SessionLog,
    declared_model: &str,
    request: &VerifyRequest,
    env: &dyn Env,
) -> Result<Verified> {
    let bound = revalidate(challenge, log, env)?;
    let nonce = &Nonce::of(challenge)?;
    let executor_model = bound.ids.executor_model;
    let (call, line, result, returned_at) = the_declared_call(log, bound.prefix, nonce)?;
    let declared_model = declared_model.trim();
    if declared_model.is_empty() {
        return Err(EvidenceError::evidence("--declared-reviewer-model is empty: name the model that reviewed"));
    }
    let review = Review {
        pair: FamilyPair::of(executor_model, declared_model, "caller-declared-cross-family"),
        log,
        prefix: line.end,
        request,
        reviewed_at: returned_at.map(str::to_owned),
        tool_call_id: call.id.clone(),
        agent_name: format!("{DECLARED}{}", call.name),
        executor_model,
        reviewer_model: declared_model,
        reviewer_model_source: CALLER_DECLARED.as_str(),
        response: &result.text,
    };
    let mut evidence = review.evidence(&bound, nonce);
    evidence.identity_source = Some("caller".to_owned());
    evidence.identity_assurance = Some(CALLER_DECLARED);
    // The session log shows the call, not who answered it.
    evidence.independence_verified = false;
    evidence.challenge_event_timestamp = challenge.str("challenge_event_timestamp").map(str::to_owned);
    Ok(Verified { evidence, response: result.text.clone(), window_start: bound.marker.start_line.start })
}

/// What [`validate_declared_review`] refuses from the evidence's own fields: the schema of
/// a caller-declared review, and a verified one.
pub(super) fn check_standing(ev: &Artifact) -> Result<()> {
    let fail = |message: &str| Err(EvidenceError::evidence(message));
    if ev.str("schema") != Some(EVIDENCE_SCHEMA) || !is_declared(ev) {
        return fail("not evidence of a caller-declared review");
    }
    if ev.str("status") != Some("verified") || ev.identity_assurance() != CALLER_DECLARED {
        return fail("caller-declared review evidence is not verified");
    }
    Ok(())
}

/// Revalidate evidence of a caller-declared review against `log` as it is now: the bound
/// prefix unchanged, the marker lifecycle and the call re-derived from it, the response
/// file the call's result. Where the reviewed window starts.
pub fn validate_declared_review(ev: &Artifact, log: &SessionLog, env: &dyn Env) -> Result<u64> {
    let fail = |message: &str| Err(EvidenceError::evidence(message));
    check_standing(ev)?;
    let prefix = revalidate_prefix(ev, log, env, "evidence session log prefix was modified")?;
    let marker = revalidate_marker(ev, log, prefix)?;
    let bound = SessionLog::from_bytes(log.host, log.path.clone(), log.bytes()[..prefix as usize].to_vec());
    let (call, line, result, returned_at) = the_declared_call(&bound, marker.start_line.start, &Nonce::of(ev)?)
        .map_err(|e| EvidenceError::evidence(format!("the reviewer call no longer holds: {}", e.message)))?;
    if Some(format!("{DECLARED}{}", call.name).as_str()) != ev.str("agent_name")
        || call.id.as_deref() != ev.str("tool_call_id")
        || line.end != prefix
        || returned_at != ev.str("reviewed_at")
    {
        return fail("evidence does not match the reviewer call in the session log");
    }
    let pair = FamilyPair::of(ev.required("executor_model")?, ev.required("reviewer_model")?, "");
    if pair.status != EvidenceStatus::Verified
        || ev.str("executor_family") != pair.executor_family
        || ev.str("reviewer_family") != pair.reviewer_family
    {
        return fail("evidence no longer establishes a known cross-family pair");
    }
    let stored = env.read_file(ev.required("response_path")?)?;
    if stored != result.text.as_bytes()
        || ev.str("response_sha256") != Some(chain::to_hex(&chain::sha256(&stored)).as_str())
    {
        return fail("the response artifact does not match the reviewer call's result");
    }
    if ev.str("evidence_id") != Some(EvidenceId::of(ev).as_str()) {
        return fail("evidence id does not match its bound fields");
    }
    Ok(marker.start_line.start)
}
