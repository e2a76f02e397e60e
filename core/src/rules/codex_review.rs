//! Reviewer evidence for Claude Code (issue 14): after a `host: claude-code` challenge, the
//! agent runs the Codex CLI (`codex exec`) as a root Bash call, and the Codex CLI's own
//! rollout of that run is the record of the review.
//!
//! Exactly one Codex run may carry the challenge's nonce line in its prompt; it must run
//! in the challenge's cwd, start after the challenge and inside the one root Bash call of
//! the transcript that started it (between the call and its result), and complete. The
//! reviewer's model comes from the rollout (`turn_context.model`: the model the run asked
//! for, which is all a rollout records, host-formats.md §G), the executor's from the
//! transcript; the same family is rejected (exit 10) as for Copilot's rubber-duck.

use super::challenge::revalidate;
use super::session::{self, MarkerIds};
use super::verify::Verified;
use super::{
    Artifact, EVIDENCE_SCHEMA, Env, EvidenceError, RefusalCode, Result, evidence_id, has_nonce_line, repeat_challenge,
};
use crate::event::{Host, Record, ToolCall};
use crate::family::{self, Table};
use crate::log::{Line, SessionLog};
use crate::{chain, timestamp};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};

/// The `agent_name` of evidence of a Codex CLI review.
pub const CODEX_REVIEWER: &str = "codex-exec";
/// Where the reviewer's model was read: the Codex CLI's rollout of the run.
pub const CODEX_ROLLOUT: &str = "codex-rollout";
/// Where the executor's model was read: the Claude Code transcript.
const CLAUDE_TRANSCRIPT: &str = "claude-transcript";

/// A Codex run as its rollout records it, up to where it completed.
struct CodexRun<'a> {
    log: &'a SessionLog,
    session_id: String,
    cwd: String,
    started: DateTime<Utc>,
    model: String,
    /// The turn's last answer, and when and where (the line's end) it completed.
    completed: Option<(String, String, u64)>,
}

impl<'a> CodexRun<'a> {
    /// The run of a rollout whose prompt carries `nonce`; `None` for any other rollout.
    fn bound(log: &'a SessionLog, nonce: &str) -> Option<CodexRun<'a>> {
        if log.host != Host::CodexCli {
            return None;
        }
        let records = || log.records().map(|(_, r)| r);
        let prompted = records()
            .filter(|r| r.kind == "response_item.message.user")
            .any(|r| r.text.as_deref().is_some_and(|t| has_nonce_line(t, nonce)));
        if !prompted {
            return None;
        }
        let start = records().find(|r| r.session_start)?;
        let mut models: Vec<&str> = records().filter_map(|r| r.model.as_deref()).collect();
        models.dedup();
        let completed = log
            .records()
            .find(|(_, r)| r.kind == "event_msg.task_complete")
            .and_then(|(line, r)| Some((r.text.clone().unwrap_or_default(), r.timestamp.clone()?, line.end)));
        Some(CodexRun {
            log,
            session_id: start.session_id.clone()?,
            cwd: start.cwd.clone()?,
            started: start.timestamp.as_deref().and_then(timestamp::parse)?,
            model: if models.len() == 1 { models[0].to_owned() } else { String::new() },
            completed,
        })
    }
}

/// A root Bash call of the transcript that runs the Codex CLI, with its result.
struct BashRun<'a> {
    call: &'a ToolCall,
    started: DateTime<Utc>,
    returned: Option<(&'a Line, &'a Record, DateTime<Utc>)>,
}

/// Whether a shell command runs `codex exec`.
fn runs_codex(call: &ToolCall) -> bool {
    let command = call.arguments.get("command").and_then(Value::as_str).unwrap_or_default();
    let words: Vec<&str> = command.split(|c: char| c.is_whitespace() || c == ';' || c == '|' || c == '&').collect();
    words.windows(2).any(|w| (w[0] == "codex" || w[0].ends_with("/codex")) && w[1] == "exec")
}

/// The root Bash calls after byte `after` that run `codex exec`.
fn codex_calls(log: &SessionLog, after: u64) -> Vec<BashRun<'_>> {
    let mut runs: Vec<BashRun> = Vec::new();
    for (line, record) in log.records() {
        if line.start < after || !record.root {
            continue;
        }
        let Some(started) = record.timestamp.as_deref().and_then(timestamp::parse) else { continue };
        for call in record.tool_calls.iter().filter(|c| session::is_shell_tool(&c.name) && runs_codex(c)) {
            runs.push(BashRun { call, started, returned: None });
        }
    }
    for (line, record) in log.records() {
        for result in &record.tool_results {
            let Some(at) = record.timestamp.as_deref().and_then(timestamp::parse) else { continue };
            if let Some(run) = runs.iter_mut().find(|r| r.call.id.is_some() && r.call.id == result.tool_call_id) {
                run.returned.get_or_insert((line, record, at));
            }
        }
    }
    runs
}

/// Verify the Codex review bound to a Claude Code `challenge`: `log` is the transcript,
/// `rollouts` the Codex CLI rollouts that may hold the run (any cwd; those of another
/// cwd are refused by name).
pub fn verify_codex_review(
    challenge: &Map<String, Value>,
    log: &SessionLog,
    rollouts: &[&SessionLog],
    response_path: &str,
    now: DateTime<Utc>,
    env: &dyn Env,
) -> Result<Verified> {
    let challenge = Artifact(challenge);
    let marker = revalidate(&challenge, log, env)?;
    let nonce = challenge.required("nonce")?;
    let executor_model = challenge.required("executor_model")?;
    let cwd = env.resolve(challenge.required("cwd")?);
    let challenge_time = challenge
        .str("challenge_event_timestamp")
        .and_then(timestamp::parse)
        .ok_or_else(|| EvidenceError::evidence("challenge_event_timestamp is not an ISO-8601 timestamp"))?;
    let prefix = challenge.prefix_len("event_prefix_bytes", log.len()).expect("revalidated");

    let runs: Vec<CodexRun> = rollouts.iter().filter_map(|l| CodexRun::bound(l, nonce)).collect();
    if let Some(elsewhere) = runs.iter().find(|r| env.resolve(&r.cwd) != cwd) {
        return Err(EvidenceError::new(
            RefusalCode::InvocationCount,
            format!(
                "the nonce-bound Codex run {} ran in {}, not in the challenge's cwd {cwd}",
                elsewhere.log.path, elsewhere.cwd
            ),
        ));
    }
    let runs: Vec<CodexRun> = runs.into_iter().filter(|r| r.started >= challenge_time).collect();
    let [run] = runs.as_slice() else {
        return Err(EvidenceError::new(
            RefusalCode::InvocationCount,
            format!("expected exactly one nonce-bound Codex reviewer run after the challenge, found {}", runs.len()),
        ));
    };
    let calls: Vec<BashRun> = codex_calls(log, prefix)
        .into_iter()
        .filter(|c| c.started <= run.started && c.returned.as_ref().is_none_or(|(_, _, at)| run.started <= *at))
        .collect();
    let [call] = calls.as_slice() else {
        return Err(EvidenceError::new(
            RefusalCode::InvocationCount,
            format!(
                "expected exactly one root Bash call running `codex exec` around the Codex run {}, found {}",
                run.log.path,
                calls.len()
            ),
        ));
    };
    let Some((answer, completed_at, run_end)) = run.completed.clone() else {
        return Err(EvidenceError::new(RefusalCode::Lifecycle, "the Codex reviewer run did not complete"));
    };
    let Some((tool_line, tool_record, _)) = call.returned else {
        return Err(EvidenceError::new(RefusalCode::Lifecycle, "the Bash call running Codex has not returned"));
    };
    if tool_record.tool_results.iter().any(|r| r.tool_call_id == call.call.id && !r.success) {
        return Err(EvidenceError::new(RefusalCode::Lifecycle, "the Bash call running Codex did not succeed"));
    }
    if run.model.is_empty() {
        return Err(EvidenceError::evidence("the Codex rollout names no single model for the run"));
    }
    let executor_family = family::family(executor_model, Table::Evidence);
    let reviewer_family = family::family(&run.model, Table::Evidence);
    let (status, reason, relation) = match (executor_family, reviewer_family) {
        (Some(e), Some(r)) if e != r => ("verified", "host-event-verified-cross-family", "different"),
        (Some(_), Some(_)) => ("rejected", "same-model-family", "same"),
        _ => ("rejected", "unknown-model-family", "unknown"),
    };
    let final_offset = tool_line.end;
    let reviewed_at = tool_record.timestamp.clone().unwrap_or(completed_at);
    let mut evidence = json!({
        "schema": EVIDENCE_SCHEMA,
        "status": status,
        "reason": reason,
        "verified_at": timestamp::format_utc(now),
        "reviewed_at": reviewed_at,
        "session_events": log.path,
        "tool_call_id": call.call.id,
        "agent_name": CODEX_REVIEWER,
        "executor_model": executor_model,
        "executor_model_source": CLAUDE_TRANSCRIPT,
        "executor_family": executor_family.unwrap_or(family::UNKNOWN),
        "reviewer_model": run.model,
        "reviewer_model_source": CODEX_ROLLOUT,
        "reviewer_family": reviewer_family.unwrap_or(family::UNKNOWN),
        "family_relation": relation,
        "identity_source": CODEX_ROLLOUT,
        "identity_assurance": "host-recorded",
        "independence_verified": status == "verified",
        "response_path": response_path,
        "response_sha256": chain::to_hex(&chain::sha256(answer.as_bytes())),
        "event_prefix_bytes": final_offset,
        "event_prefix_sha256": log.prefix_sha256(final_offset),
        "host": log.host.as_str(),
        "chain_sha256": log.chain_at(final_offset),
        "reviewer_host": Host::CodexCli.as_str(),
        "reviewer_session_events": run.log.path,
        "reviewer_session_id": run.session_id,
        "reviewer_prefix_bytes": run_end,
        "reviewer_prefix_sha256": run.log.prefix_sha256(run_end),
    });
    let evidence = evidence.as_object_mut().expect("an object literal");
    repeat_challenge(evidence, &challenge, &["challenge_event_timestamp"]);
    let id = evidence_id(evidence);
    evidence.insert("evidence_id".to_owned(), id.into());
    Ok(Verified { evidence: evidence.clone(), response: answer, window_start: marker.start_line.start })
}

/// Revalidate evidence of a Codex review against the transcript and the rollout as they
/// are now: both bound prefixes unchanged, the marker lifecycle and the run re-derived from
/// them, the response file the run's answer. Where the reviewed window starts.
pub fn validate_codex_review(
    evidence: &Map<String, Value>,
    log: &SessionLog,
    rollout: &SessionLog,
    env: &dyn Env,
) -> Result<u64> {
    let fail = |message: &str| Err(EvidenceError::evidence(message));
    let ev = Artifact(evidence);
    if ev.str("schema") != Some(EVIDENCE_SCHEMA) || ev.str("agent_name") != Some(CODEX_REVIEWER) {
        return fail("not evidence of a Codex review");
    }
    if ev.str("status") != Some("verified") || evidence.get("independence_verified") != Some(&Value::Bool(true)) {
        return fail("Codex review evidence is not verified");
    }
    session::ensure_parsed(log)?;
    session::ensure_parsed(rollout)?;
    let Some(prefix) = ev.prefix_len("event_prefix_bytes", log.len()) else {
        return fail("evidence event prefix length is invalid");
    };
    if log.prefix_sha256(prefix) != ev.required("event_prefix_sha256")? {
        return fail("Claude Code evidence transcript prefix was modified");
    }
    let Some(run_prefix) = ev.prefix_len("reviewer_prefix_bytes", rollout.len()) else {
        return fail("evidence reviewer prefix length is invalid");
    };
    if rollout.prefix_sha256(run_prefix) != ev.required("reviewer_prefix_sha256")? {
        return fail("the Codex rollout of the review was modified");
    }
    let ids = MarkerIds {
        start_event_id: ev.required("challenge_event_id")?,
        completion_event_id: ev.required("challenge_completion_event_id")?,
        tool_call_id: ev.required("challenge_tool_call_id")?,
        executor_model: ev.required("executor_model")?,
        binding: ev.required("binding")?,
    };
    let marker = session::bound_marker(log, &ids, prefix)
        .map_err(|_| EvidenceError::evidence("evidence challenge marker lifecycle is invalid"))?;
    // Re-derive the run from the rollout as bound, and compare.
    let bound =
        SessionLog::from_bytes(Host::CodexCli, rollout.path.clone(), rollout.bytes()[..run_prefix as usize].to_vec());
    let Some(run) = CodexRun::bound(&bound, ev.required("nonce")?) else {
        return fail("the Codex rollout no longer carries the nonce");
    };
    let Some((answer, _, _)) = run.completed.clone() else { return fail("the Codex run did not complete") };
    if env.resolve(&run.cwd) != env.resolve(ev.required("cwd")?)
        || Some(run.model.as_str()) != ev.str("reviewer_model")
        || Some(run.session_id.as_str()) != ev.str("reviewer_session_id")
    {
        return fail("evidence does not match the Codex rollout of the review");
    }
    let (Some(ef), Some(rf)) =
        (family::family(ev.required("executor_model")?, Table::Evidence), family::family(&run.model, Table::Evidence))
    else {
        return fail("evidence no longer establishes a known cross-family pair");
    };
    if ef == rf || ev.str("executor_family") != Some(ef) || ev.str("reviewer_family") != Some(rf) {
        return fail("evidence no longer establishes a known cross-family pair");
    }
    let stored = env.read_file(ev.required("response_path")?)?;
    if stored != answer.as_bytes() || ev.str("response_sha256") != Some(chain::to_hex(&chain::sha256(&stored)).as_str())
    {
        return fail("the response artifact does not match the Codex run's answer");
    }
    if ev.str("evidence_id") != Some(evidence_id(evidence).as_str()) {
        return fail("native evidence id does not match its bound fields");
    }
    Ok(marker.start_line.start)
}
