//! Rule tests over the spec's exact-bytes example log and logs derived from it.
//! Tests named `defect_*` pin a fix of a reference defect listed in evidence-protocol.md §8; tests named
//! `host_*` pin what the real Copilot CLI 1.0.102 writes (evidence-protocol.md §9).

use super::*;
use crate::event::Host;
use crate::log::SessionLog;
use crate::timestamp;
use serde_json::{Map, Value, json};
use std::cell::RefCell;
use std::collections::HashMap;

/// The spec's example log, byte for byte: its parentIds name causal parents, not the event
/// before each, which the real host never writes (§9).
const SPEC_EXAMPLE: &str = include_str!("../../../fixtures/spec-example/events.jsonl");
/// The example with the host's linear parentId chain (fixtures/spec-example/README.md).
const EXAMPLE: &str = include_str!("../../../fixtures/spec-example/events-host-chain.jsonl");
const BINDING: &str = "run_20260715_a1b2c3d4_r1_review_7e91c4ab";
const NONCE: &str = "kX3v9Qm2LrT8wYb5NcJ7dHf1ZsA6uEoP";

fn nonce() -> Nonce {
    Nonce::try_from(NONCE.to_owned()).unwrap()
}
const RESPONSE_PATH: &str = "/reviews/response.md";

/// A verification with its evidence as a JSON object, as these tests read and edit
/// artifacts field by field (the rules' own types are pinned by the byte-exact tests).
#[derive(Debug)]
struct Verified {
    evidence: Map<String, Value>,
    response: String,
    typed: super::Verified,
}

impl Verified {
    fn policy(&self) -> Result<()> {
        self.typed.policy()
    }
}

fn fields(artifact: impl Into<Artifact>) -> Map<String, Value> {
    artifact.into().0
}

fn verify(
    challenge: &Map<String, Value>,
    log: &SessionLog,
    response_path: &str,
    now: chrono::DateTime<chrono::Utc>,
    env: &dyn Env,
) -> Result<Verified> {
    let request = VerifyRequest { response_path, now, declared_model: None };
    let typed = super::verify(&Artifact::from(challenge.clone()), log, &request, env)?;
    Ok(Verified { evidence: fields(typed.evidence.clone()), response: typed.response.clone(), typed })
}

fn validate(evidence: &Map<String, Value>, log: &SessionLog, env: &dyn Env) -> Result<Validated> {
    super::validate(&Artifact::from(evidence.clone()), log, env)
}

fn validate_challenge(challenge: &Map<String, Value>, log: &SessionLog, env: &dyn Env) -> Result<u64> {
    super::validate_challenge(&Artifact::from(challenge.clone()), log, env)
}

fn challenge(request: &ChallengeRequest, logs: &[&SessionLog], env: &dyn Env) -> Result<Map<String, Value>> {
    super::challenge(request, logs, env).map(fields)
}

/// Paths resolve to themselves; artifact files live in memory.
#[derive(Default)]
struct MemoryEnv(RefCell<HashMap<String, Vec<u8>>>);

impl Env for MemoryEnv {
    fn resolve(&self, path: &str) -> String {
        path.to_owned()
    }
    fn read_file(&self, path: &str) -> Result<Vec<u8>> {
        self.0.borrow().get(path).cloned().ok_or_else(|| EvidenceError::evidence(format!("file not found: {path}")))
    }
}

fn log_of(text: &str) -> SessionLog {
    SessionLog::from_bytes(Host::CopilotCli, "/s/events.jsonl", text.as_bytes().to_vec())
}

/// The example with line `n` (1-based) rewritten by `edit`.
fn edited(n: usize, edit: impl Fn(&mut Value)) -> String {
    EXAMPLE
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if i + 1 != n {
                return format!("{line}\n");
            }
            let mut value: Value = serde_json::from_str(line).unwrap();
            edit(&mut value);
            format!("{}\n", serde_json::to_string(&value).unwrap())
        })
        .collect()
}

/// The challenge `challenge` would have issued for the example (evidence-protocol.md §1.6), with the
/// prefix hash of `log`.
fn challenge_for(log: &SessionLog) -> Map<String, Value> {
    let prefix = log.records().find(|(_, r)| r.id.as_deref() == Some("ev-0004")).unwrap().0.end;
    json!({
        "schema": CHALLENGE_SCHEMA, "status": "bound", "binding": BINDING, "nonce": NONCE,
        "issued_at": "2026-07-15T12:00:08Z", "cwd": "/home/user/project",
        "session_id": "5d0e9a4c-2b7f-4c1e-9a55-0c3f2d1b8e77", "session_events": log.path,
        "challenge_event_id": "ev-0003", "challenge_completion_event_id": "ev-0004",
        "challenge_tool_call_id": "call_marker_01", "challenge_event_timestamp": "2026-07-15T12:00:05.000Z",
        "executor_model": "claude-sonnet-4.6", "executor_family": "anthropic",
        "event_prefix_bytes": prefix, "event_prefix_sha256": log.prefix_sha256(prefix),
    })
    .as_object()
    .unwrap()
    .clone()
}

fn now() -> chrono::DateTime<chrono::Utc> {
    timestamp::parse("2026-07-15T12:00:15Z").unwrap()
}

fn verify_text(text: &str) -> Result<Verified> {
    let log = log_of(text);
    verify(&challenge_for(&log), &log, RESPONSE_PATH, now(), &MemoryEnv::default())
}

/// Verify `text`, store the response, and validate against `later` (the log as it is now).
fn validate_after(text: &str, later: &str) -> Result<Validated> {
    let verified = verify_text(text).expect("verifies");
    let env = MemoryEnv::default();
    env.0.borrow_mut().insert(RESPONSE_PATH.into(), verified.response.into_bytes());
    validate(&verified.evidence, &log_of(later), &env)
}

fn code(result: Result<impl std::fmt::Debug>) -> (RefusalCode, String) {
    let error = result.expect_err("must fail");
    (error.code, error.message)
}

#[test]
fn spec_vector_verifies_to_the_published_evidence_id() {
    let verified = verify_text(EXAMPLE).unwrap();
    let ev = &verified.evidence;
    // The published id is over the example's own bytes, whose prefix hash differs only
    // by the two repaired parentIds.
    let mut over_spec_bytes = ev.clone();
    over_spec_bytes.insert("event_prefix_sha256".into(), log_of(SPEC_EXAMPLE).prefix_sha256(4043).into());
    assert_eq!(
        EvidenceId::of(&Artifact::from(over_spec_bytes.clone())).as_str(),
        "cne_924eca850956e98735967f7721456b57"
    );
    assert_eq!(ev["evidence_id"], EvidenceId::of(&Artifact::from(ev.clone())).as_str());
    assert_eq!(ev["event_prefix_bytes"], 4043);
    assert_eq!(ev["reviewed_at"], "2026-07-15T12:01:31.000Z");
    assert_eq!(ev["response_sha256"], "d475b8ccc1f3c1adc9edc1bf6b922f5afda0fb0597496c2c1dc672b4584ce2bc");
    assert_eq!((ev["status"].as_str(), ev["reviewer_family"].as_str()), (Some("verified"), Some("openai")));
    assert_eq!(verified.response.chars().count(), 99);
    verified.policy().unwrap();
    validate_after(EXAMPLE, EXAMPLE).unwrap();
}

#[test]
fn appends_after_the_prefix_keep_evidence_valid_but_edits_inside_do_not() {
    let appended = format!(
        "{EXAMPLE}{}\n",
        r#"{"type":"assistant.turn_end","id":"ev-0014","timestamp":"2026-07-15T12:02:00.000Z","parentId":"ev-0013","data":{}}"#
    );
    validate_after(EXAMPLE, &appended).unwrap();
    let tampered = EXAMPLE.replacen("Score: 8/10", "Score: 9/10", 1);
    assert_eq!(code(validate_after(EXAMPLE, &tampered)).1, "Copilot evidence event prefix was modified");
    let truncated = &EXAMPLE[..3000];
    assert_eq!(code(validate_after(EXAMPLE, truncated)).1, "evidence event prefix length is invalid");
}

#[test]
fn same_family_reviewer_is_written_but_rejected_with_exit_10() {
    let text = edited(8, |v| v["data"]["model"] = "claude-opus-4.5".into());
    let text = text.replace(r#""model":"gpt-5.5","durationMs""#, r#""model":"claude-opus-4.5","durationMs""#);
    let verified = verify_text(&text).unwrap();
    assert_eq!(verified.evidence["reason"], "same-model-family");
    assert_eq!(verified.evidence["independence_verified"], false);
    assert_eq!(verified.policy().unwrap_err().code, RefusalCode::PolicyRejected);
}

#[test]
fn reviewer_prompt_without_the_nonce_line_is_exit_6() {
    let text = edited(7, |v| {
        v["data"]["arguments"]["prompt"] = "Review the work, nonce kX3v9Qm2LrT8wYb5NcJ7dHf1ZsA6uEoP".into();
    });
    assert_eq!(code(verify_text(&text)).0, RefusalCode::InvocationCount);
}

#[test]
fn another_agent_type_is_no_reviewer_exit_6() {
    let text = edited(7, |v| v["data"]["arguments"]["agent_type"] = "explore".into());
    assert_eq!(code(verify_text(&text)).0, RefusalCode::InvocationCount);
}

#[test]
fn failed_subagent_or_unsuccessful_tool_is_exit_7() {
    let failed = edited(11, |v| v["type"] = "subagent.failed".into());
    assert_eq!(code(verify_text(&failed)), (RefusalCode::Lifecycle, "native rubber-duck subagent failed".into()));
    let unsuccessful = edited(12, |v| v["data"]["success"] = false.into());
    assert_eq!(code(verify_text(&unsuccessful)).0, RefusalCode::Lifecycle);
    let missing = edited(11, |v| v["type"] = "assistant.message".into());
    assert!(code(verify_text(&missing)).1.contains("started=1, completed=0, tool_complete=1"));
}

/// Copilot CLI 1.0.102 gives the child its own UUID agent id (evidence-protocol.md §9).
fn real_host_form(child_started: &str, child_completed: &str, child_prompt: Option<&str>) -> String {
    let mut text = edited(8, |v| v["agentId"] = child_started.into());
    text = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            match i + 1 {
                // The host chains the child's prompt in after line 8.
                9 if child_prompt.is_some() => {
                    v["agentId"] = child_started.into();
                    v["parentId"] = "ev-0008b".into();
                }
                9 | 10 => v["agentId"] = child_started.into(),
                11 => v["agentId"] = child_completed.into(),
                _ => {}
            }
            let mut out = format!("{}\n", serde_json::to_string(&v).unwrap());
            if let (8, Some(prompt)) = (i + 1, child_prompt) {
                let message = json!({"type": "user.message", "id": "ev-0008b", "timestamp": "2026-07-15T12:00:13.000Z",
                    "parentId": "ev-0008", "agentId": child_started, "data": {"content": prompt}});
                out.push_str(&format!("{message}\n"));
            }
            out
        })
        .collect();
    text
}

#[test]
fn host_child_agent_uuid_is_accepted_where_the_reference_rejects_it() {
    let child = "b2279c56-9a0e-4c55-8f3e-0d6f1e2a7b11";
    let text = real_host_form(child, child, Some(&format!("ARIS_REVIEW_NONCE={NONCE}\n\nReview it.")));
    let verified = verify_text(&text).unwrap();
    assert_eq!(verified.evidence["child_agent_id"], child);
    validate_after(&text, &text).unwrap();
}

#[test]
fn host_lifecycle_ends_naming_different_children_are_refused() {
    let text = real_host_form("child-a", "child-b", None);
    assert!(code(verify_text(&text)).1.contains("not bound to one child agent id"));
}

#[test]
fn host_child_prompt_must_carry_the_nonce_too() {
    let text = real_host_form("child-a", "child-a", Some("Review it, no nonce here."));
    assert_eq!(code(verify_text(&text)).0, RefusalCode::InvocationCount);
}

#[test]
fn defect_4_bad_timestamp_on_an_unrelated_event_does_not_abort_verify() {
    let text = edited(2, |v| v["timestamp"] = "not a time".into());
    verify_text(&text).unwrap();
}

#[test]
fn defect_4_bad_timestamp_on_a_marker_candidate_does_not_abort_challenge() {
    let log = log_of(EXAMPLE);
    let other = log_of(&edited(3, |v| v["timestamp"] = "garbage".into()));
    let env = MemoryEnv::default();
    let request = request(BINDING);
    assert_eq!(code(challenge(&request, &[&other], &env)).0, RefusalCode::NoBinding);
    assert!(challenge(&request, &[&other, &log], &env).is_ok());
}

#[test]
fn defect_5_non_object_data_fails_closed_with_file_and_line() {
    let text = edited(2, |v| v["data"] = json!([1]));
    assert_eq!(
        code(verify_text(&text)),
        (RefusalCode::Evidence, "`data` is not an object in Copilot event at /s/events.jsonl:2".into())
    );
}

#[test]
fn defect_6_validate_challenge_unknown_family_is_exit_5() {
    let text = edited(3, |v| v["data"]["model"] = "mystery-model".into());
    let log = log_of(&text);
    let mut ch = challenge_for(&log);
    ch.insert("executor_model".into(), "mystery-model".into());
    assert_eq!(code(validate_challenge(&ch, &log, &MemoryEnv::default())).0, RefusalCode::UnknownExecutorFamily);
    validate_challenge(&challenge_for(&log_of(EXAMPLE)), &log_of(EXAMPLE), &MemoryEnv::default()).unwrap();
}

/// Evidence verified on the example, then re-pointed at `later` with every hash
/// recomputed, as a forger (or a looser validator) would.
fn rehashed_evidence_on(later: &str) -> Result<Validated> {
    let verified = verify_text(EXAMPLE).unwrap();
    let log = log_of(later);
    let mut ev = verified.evidence;
    let prefix = log.records().find(|(_, r)| r.id.as_deref() == Some("ev-0012")).unwrap().0.end;
    ev.insert("event_prefix_bytes".into(), prefix.into());
    ev.insert("event_prefix_sha256".into(), log.prefix_sha256(prefix).into());
    let id = EvidenceId::of(&Artifact::from(ev.clone())).to_string();
    ev.insert("evidence_id".into(), id.into());
    let env = MemoryEnv::default();
    env.0.borrow_mut().insert(RESPONSE_PATH.into(), verified.response.into_bytes());
    validate(&ev, &log, &env)
}

#[test]
fn defect_7_validate_requires_exact_success_and_a_stable_completion_model() {
    rehashed_evidence_on(EXAMPLE).unwrap();
    let truthy = edited(12, |v| v["data"]["success"] = "yes".into());
    assert_eq!(code(rehashed_evidence_on(&truthy)).1, "evidence tool completion is not successful");
    let empty_model = edited(12, |v| v["data"]["model"] = "".into());
    assert_eq!(code(rehashed_evidence_on(&empty_model)).1, "evidence executor model changed before tool completion");
}

/// A challenge request for `binding` (a valid one: the rules take only a parsed binding).
fn request(binding: &str) -> ChallengeRequest<'static> {
    let binding: &'static Binding = Box::leak(Box::new(Binding::parse(binding).expect("a valid binding")));
    ChallengeRequest {
        binding,
        cwd: "/home/user/project",
        max_age_seconds: 60,
        now: now(),
        nonce: Box::leak(Box::new(nonce())),
        searched: &[],
        tree_sha256: None,
    }
}

#[test]
fn defect_8_whitespace_around_the_host_model_binds_and_revalidates() {
    let text = edited(3, |v| v["data"]["model"] = " claude-sonnet-4.6 ".into());
    let log = log_of(&text);
    let env = MemoryEnv::default();
    let ch = challenge(&request(BINDING), &[&log], &env).unwrap();
    assert_eq!(ch["executor_model"], "claude-sonnet-4.6");
    validate_challenge(&ch, &log, &env).unwrap();
}

#[test]
fn defect_9_absent_tool_call_ids_never_match() {
    let text = edited(3, |v| v["data"].as_object_mut().unwrap().retain(|k, _| k != "toolCallId"));
    let text = {
        let log_text = text;
        let n4: Vec<&str> = log_text.lines().collect();
        let mut v: Value = serde_json::from_str(n4[3]).unwrap();
        v["data"].as_object_mut().unwrap().remove("toolCallId");
        log_text.replacen(n4[3], &serde_json::to_string(&v).unwrap(), 1)
    };
    let log = log_of(&text);
    assert_eq!(code(challenge(&request(BINDING), &[&log], &MemoryEnv::default())).0, RefusalCode::NoBinding);
}

#[test]
fn defect_10_a_session_start_appended_after_binding_does_not_invalidate() {
    let later = format!(
        "{EXAMPLE}{}\n",
        r#"{"type":"session.start","id":"ev-0099","timestamp":"2026-07-15T12:05:00.000Z","parentId":"ev-0013","data":{"sessionId":"other","context":{"cwd":"/elsewhere"}}}"#
    );
    validate_after(EXAMPLE, &later).unwrap();
    validate_challenge(&challenge_for(&log_of(EXAMPLE)), &log_of(&later), &MemoryEnv::default()).unwrap();
}

#[test]
fn challenge_binds_exactly_one_fresh_root_marker() {
    let env = MemoryEnv::default();
    let log = log_of(EXAMPLE);
    let ch = challenge(&request(BINDING), &[&log], &env).unwrap();
    let by_hand = challenge_for(&log);
    for key in [
        "event_prefix_bytes",
        "event_prefix_sha256",
        "challenge_event_id",
        "challenge_completion_event_id",
        "executor_family",
        "session_id",
    ] {
        assert_eq!(ch[key], by_hand[key], "{key}");
    }
    assert_eq!(ch["event_prefix_sha256"], "0e2ca0a715bb26afe7aaa2772e90e2e7ee2ce1986fb7cb6fa5f2d8e1a9360fba");
    assert_eq!((ch["host"].as_str(), ch["nonce"].as_str()), (Some("copilot-cli"), Some(NONCE)));
    validate_challenge(&ch, &log, &env).unwrap();

    let again = log_of(EXAMPLE);
    let twice = [&log, &again];
    assert_eq!(code(challenge(&request(BINDING), &twice, &env)).0, RefusalCode::AmbiguousBinding);
    assert_eq!(code(challenge(&request("run_20260715_other_binding_0001"), &twice, &env)).0, RefusalCode::NoBinding);
    let stale = ChallengeRequest { now: now() + chrono::Duration::seconds(120), ..request(BINDING) };
    assert_eq!(code(challenge(&stale, &[&log], &env)).0, RefusalCode::NoBinding);
    let elsewhere = ChallengeRequest { cwd: "/other", ..request(BINDING) };
    assert_eq!(code(challenge(&elsewhere, &[&log], &env)).0, RefusalCode::NoBinding);
    let mystery = log_of(&edited(3, |v| v["data"]["model"] = "mystery".into()));
    assert_eq!(code(challenge(&request(BINDING), &[&mystery], &env)).0, RefusalCode::UnknownExecutorFamily);
    let bad_age = ChallengeRequest { max_age_seconds: 601, ..request(BINDING) };
    assert_eq!(code(challenge(&bad_age, &[], &env)).1, "--max-age-seconds must be within 1..600");
    assert_eq!(Binding::parse("short").unwrap_err().message, "--binding must be a 16..128 character stable token");
}

/// judged's MCP `marker` tool binds as the shell call does: its call carries the binding
/// and its result the marker; another tool, or the binding without that tool, does not.
#[test]
fn the_mcp_marker_tool_binds_as_the_marker_command_does() {
    let env = MemoryEnv::default();
    let marker_result = |v: &mut Value| {
        let marker = crate::pyjson::one_line(&marker(&Binding::parse(BINDING).unwrap()));
        v["data"]["result"] = json!({"content": marker, "detailedContent": marker});
    };
    let by_tool = |tool: &str| {
        let text = edited(3, |v| {
            v["data"]["toolName"] = tool.into();
            v["data"]["arguments"] = json!({"binding": BINDING});
        });
        let lines: Vec<&str> = text.lines().collect();
        let mut completion: Value = serde_json::from_str(lines[3]).unwrap();
        marker_result(&mut completion);
        text.replacen(lines[3], &serde_json::to_string(&completion).unwrap(), 1)
    };
    for tool in ["judged-marker", "mcp__judged__marker", "mcp__plugin_judged_judged__marker"] {
        let log = log_of(&by_tool(tool));
        let ch = challenge(&request(BINDING), &[&log], &env).unwrap_or_else(|e| panic!("{tool}: {e:?}"));
        assert_eq!(ch["challenge_tool_call_id"], "call_marker_01", "{tool}");
        validate_challenge(&ch, &log, &env).unwrap();
    }
    for tool in ["judged-review", "other-marker", "mcp__elsewhere__marker"] {
        let log = log_of(&by_tool(tool));
        assert_eq!(code(challenge(&request(BINDING), &[&log], &env)).0, RefusalCode::NoBinding, "{tool}");
    }
}

#[test]
fn revalidation_names_what_changed() {
    let log = log_of(EXAMPLE);
    let env = MemoryEnv::default();
    let mut ch = challenge_for(&log);
    ch.insert("challenge_tool_call_id".into(), "call_other".into());
    assert_eq!(code(validate_challenge(&ch, &log, &env)).1, "challenge tool-call id mismatch");
    let mut ch = challenge_for(&log);
    ch.insert("event_prefix_bytes".into(), true.into());
    assert_eq!(code(validate_challenge(&ch, &log, &env)).1, "challenge event prefix length is invalid");
    let mut ch = challenge_for(&log);
    ch.insert("status".into(), "marker".into());
    assert_eq!(code(validate_challenge(&ch, &log, &env)).1, "unsupported or unbound Copilot challenge");
}

#[test]
fn marker_prints_the_reference_bytes() {
    assert_eq!(
        crate::pyjson::one_line(&marker(&Binding::parse(BINDING).unwrap())),
        format!(r#"{{"binding": "{BINDING}", "schema": "aris.copilot-native.challenge/v1", "status": "marker"}}"#)
    );
    for bad in ["short", "-starts-with-dash-000", &"x".repeat(129), "has space in the token here"] {
        assert!(Binding::parse(bad).is_err(), "{bad}");
    }
    Binding::parse(&"x".repeat(128)).unwrap();
}

#[test]
fn nonce_line_must_stand_alone() {
    let line = format!("ARIS_REVIEW_NONCE={NONCE}");
    assert!(has_nonce_line(&format!("intro\n{line}  \r\nmore"), &nonce()));
    assert!(!has_nonce_line(&format!(" {line}"), &nonce()));
    assert!(!has_nonce_line(&format!("{line}x"), &nonce()));
    assert!(!has_nonce_line(&format!("{line} trailing text"), &nonce()));
}

#[test]
fn response_prefers_full_detailed_content() {
    let r = |v: Value| extract_response(&v);
    assert_eq!(r(json!({"content": "short", "detailedContent": "longer text"})).unwrap(), "longer text");
    assert_eq!(r(json!({"content": "long content", "detailedContent": "tiny"})).unwrap(), "long content");
    assert_eq!(r(json!({"content": "c", "detailedContent": "(Full response provided to agent) x"})).unwrap(), "c");
    assert!(r(json!({"content": "  "})).is_err());
    assert!(r(json!("text")).is_err());
}

/// Logs the real Copilot CLI 1.0.102 wrote offline (see fixtures/copilot-1.0.102).
mod real_host {
    use super::*;

    const FIXTURE_NONCE: &str = "kX3v9Qm2LrT8wYb5NcJ7dHf1ZsA6uEoP";
    const FIXTURE_BINDING: &str = "run_20261130_a1b2c3d4_r1_review_7e91c4ab";

    fn fixture(scenario: &str) -> SessionLog {
        let path = format!("{}/../fixtures/copilot-1.0.102/{scenario}/events.jsonl", env!("CARGO_MANIFEST_DIR"));
        SessionLog::from_bytes(Host::CopilotCli, path.clone(), std::fs::read(&path).unwrap())
    }

    /// Challenge as `judge-evidence challenge` would have, 10 s after the marker call.
    fn bound(log: &SessionLog, scenario: &str) -> Map<String, Value> {
        let (_, marker) = log
            .records()
            .find(|(_, r)| r.tool_calls.iter().any(|c| c.arguments_text().contains("marker --binding")))
            .unwrap();
        let at = timestamp::parse(marker.timestamp.as_deref().unwrap()).unwrap() + chrono::Duration::seconds(10);
        let cwd = format!("/tmp/judged-fixture/copilot/{scenario}/project");
        let binding = Binding::parse(FIXTURE_BINDING).unwrap();
        let request = ChallengeRequest {
            binding: &binding,
            cwd: &cwd,
            max_age_seconds: 60,
            now: at,
            nonce: &Nonce::try_from(FIXTURE_NONCE.to_owned()).unwrap(),
            searched: &[],
            tree_sha256: None,
        };
        challenge(&request, &[log], &MemoryEnv::default()).unwrap()
    }

    fn verify_fixture(scenario: &str) -> (SessionLog, Result<Verified>) {
        let log = fixture(scenario);
        let ch = bound(&log, scenario);
        let result = verify(&ch, &log, RESPONSE_PATH, now(), &MemoryEnv::default());
        (log, result)
    }

    #[test]
    fn host_cross_family_review_verifies_and_validates() {
        let (log, verified) = verify_fixture("cross-family-ok");
        let verified = verified.unwrap();
        assert_eq!(verified.evidence["executor_model"], "claude-sonnet-4.6");
        assert_eq!(verified.evidence["reviewer_model"], "gpt-5.4");
        assert_ne!(verified.evidence["child_agent_id"], verified.evidence["tool_call_id"]);
        verified.policy().unwrap();
        let env = MemoryEnv::default();
        env.0.borrow_mut().insert(RESPONSE_PATH.into(), verified.response.clone().into_bytes());
        validate(&verified.evidence, &log, &env).unwrap();
    }

    #[test]
    fn host_same_family_reviewer_is_exit_10() {
        let verified = verify_fixture("same-family").1.unwrap();
        assert_eq!(verified.policy().unwrap_err().code, RefusalCode::PolicyRejected);
    }

    #[test]
    fn host_missing_nonce_and_wrong_agent_type_are_exit_6() {
        assert_eq!(code(verify_fixture("no-nonce").1).0, RefusalCode::InvocationCount);
        assert_eq!(code(verify_fixture("wrong-agent-type").1).0, RefusalCode::InvocationCount);
    }

    #[test]
    fn host_failed_reviewer_is_exit_7() {
        assert_eq!(
            code(verify_fixture("reviewer-error").1),
            (RefusalCode::Lifecycle, "native rubber-duck subagent failed".into())
        );
        assert_eq!(code(verify_fixture("reviewer-error-400").1).0, RefusalCode::Lifecycle);
    }

    #[test]
    fn host_parent_id_chain_is_unbroken() {
        let log = fixture("cross-family-ok");
        let mut previous: Option<String> = None;
        for (_, record) in log.records() {
            assert_eq!(record.parent_id, previous);
            previous = record.id.clone();
        }
    }
}

/// The example's own parentIds (lines 11 and 12 name causal parents) are what lines slipped
/// into the log look like: the host's next event points past them (issue 10).
#[test]
fn host_a_chain_break_in_the_reviewed_window_refuses_verify_naming_the_line() {
    let (exit, message) = code(verify_text(SPEC_EXAMPLE));
    assert_eq!(exit, RefusalCode::Evidence);
    assert!(message.contains("parentId chain break") && message.contains("/s/events.jsonl:11"), "{message}");
}

/// A forged lifecycle appended by the executor's own shell call passes `verify` while that
/// call is still running; the host's next event then breaks the chain after the bound
/// prefix, and `validate` (and so the gate) refuses from then on.
#[test]
fn host_a_chain_break_after_the_bound_prefix_refuses_validate() {
    let broken = format!(
        "{EXAMPLE}{}\n",
        r#"{"type":"assistant.turn_end","id":"ev-0014","timestamp":"2026-07-15T12:02:00.000Z","parentId":"ev-0009","data":{}}"#
    );
    let message = code(validate_after(EXAMPLE, &broken)).1;
    assert!(message.contains("parentId chain break") && message.contains(":14"), "{message}");
}

#[test]
fn a_chain_break_before_the_marker_is_outside_the_window() {
    let text = edited(2, |v| v["parentId"] = "elsewhere".into());
    verify_text(&text).unwrap();
}

#[test]
fn reviewed_at_is_the_hosts_time_and_cannot_be_renewed_by_hand() {
    let verified = verify_text(EXAMPLE).unwrap();
    let mut renewed = verified.evidence.clone();
    renewed.insert("reviewed_at".into(), "2026-07-15T13:00:00.000Z".into());
    let env = MemoryEnv::default();
    env.0.borrow_mut().insert(RESPONSE_PATH.into(), verified.response.into_bytes());
    assert!(code(validate(&renewed, &log_of(EXAMPLE), &env)).1.contains("reviewed_at"));
    // A later verify of the same lifecycle names the same review time.
    let later = verify(
        &challenge_for(&log_of(EXAMPLE)),
        &log_of(EXAMPLE),
        RESPONSE_PATH,
        now() + chrono::Duration::hours(5),
        &env,
    )
    .unwrap();
    assert_eq!(later.evidence["reviewed_at"], verified.evidence["reviewed_at"]);
}

#[test]
fn log_state_sees_the_calling_command_only_while_it_runs() {
    let call = |id: &str, command: &str| {
        json!({"type": "tool.execution_start", "id": format!("ev-c-{id}"), "timestamp": "2026-07-15T12:02:00.000Z",
            "parentId": "ev-0013", "data": {"toolCallId": id, "toolName": "bash", "arguments": {"command": command}}})
    };
    let running = format!("{EXAMPLE}{}\n", call("call_v", "judge-evidence verify --challenge r1.challenge.json"));
    let log = log_of(&running);
    let state = LogState::of(&[&log], &["verify", "r1.challenge.json"]);
    assert_eq!(state, LogState { caller_seen: true, bytes: running.len() as u64 });
    assert!(!LogState::of(&[&log], &["verify", "r2.challenge.json"]).caller_seen, "another command");
    // The marker call carries the binding but has returned: not the caller.
    assert!(!LogState::of(&[&log_of(EXAMPLE)], &[BINDING]).caller_seen);
    let returned = format!(
        "{running}{}\n",
        json!({"type": "tool.execution_complete", "id": "ev-c-done", "parentId": "ev-c-call_v",
            "data": {"toolCallId": "call_v", "success": true}})
    );
    assert!(!LogState::of(&[&log_of(&returned)], &["verify", "r1.challenge.json"]).caller_seen);
}

#[test]
fn validate_requires_its_ids_before_it_looks_for_the_marker() {
    // evidence-protocol.md §2.6: step 9 (`tool_call_id`, `nonce`) comes before step 10 (the marker).
    let verified = verify_text(EXAMPLE).unwrap();
    let mut ev = verified.evidence;
    ev.remove("tool_call_id");
    ev.insert("challenge_event_id".into(), "ev-none".into());
    let env = MemoryEnv::default();
    env.0.borrow_mut().insert(RESPONSE_PATH.into(), verified.response.into_bytes());
    assert_eq!(
        code(validate(&ev, &log_of(EXAMPLE), &env)).1,
        "artifact is missing non-empty string field: tool_call_id"
    );
}

/// The fields the reference helper writes into evidence (evidence-protocol.md §2.5's table): no
/// `reviewed_at`, `child_agent_id`, `host` or `chain_sha256`.
const REFERENCE_EVIDENCE_FIELDS: &[&str] = &[
    "schema",
    "status",
    "reason",
    "verified_at",
    "binding",
    "nonce",
    "cwd",
    "session_id",
    "challenge_event_id",
    "challenge_completion_event_id",
    "challenge_tool_call_id",
    "session_events",
    "tool_call_id",
    "agent_name",
    "executor_model",
    "executor_model_source",
    "executor_family",
    "reviewer_model",
    "reviewer_model_source",
    "reviewer_family",
    "family_relation",
    "independence_verified",
    "response_path",
    "response_sha256",
    "event_prefix_bytes",
    "event_prefix_sha256",
    "evidence_id",
];

/// Evidence as the reference helper writes it for the example, and the env holding its
/// response: this crate's evidence cut to the reference's fields, its id recomputed.
fn reference_evidence() -> (Map<String, Value>, MemoryEnv) {
    let verified = verify_text(EXAMPLE).unwrap();
    let mut ev: Map<String, Value> =
        verified.evidence.into_iter().filter(|(k, _)| REFERENCE_EVIDENCE_FIELDS.contains(&k.as_str())).collect();
    let id = EvidenceId::of(&Artifact::from(ev.clone())).to_string();
    ev.insert("evidence_id".into(), id.into());
    let env = MemoryEnv::default();
    env.0.borrow_mut().insert(RESPONSE_PATH.into(), verified.response.into_bytes());
    (ev, env)
}

/// The drop-in promise covers the reference's artifacts: its evidence has no `reviewed_at`,
/// which is then the host's time of the reviewer's completion, as verify computes it.
#[test]
fn reference_evidence_without_reviewed_at_validates_with_the_time_derived_from_the_log() {
    let (ev, env) = reference_evidence();
    assert_eq!(ev["evidence_id"], verify_text(EXAMPLE).unwrap().evidence["evidence_id"], "the id covers none of them");
    let validated = validate(&ev, &log_of(EXAMPLE), &env).expect("reference evidence validates");
    assert_eq!(validated.derived_reviewed_at.as_deref(), Some("2026-07-15T12:01:31.000Z"));
    // Evidence that records the time is checked against it and derives nothing.
    assert_eq!(validate_after(EXAMPLE, EXAMPLE).unwrap().derived_reviewed_at, None);
    let mut wrong = ev;
    wrong.insert("reviewed_at".into(), "2026-07-15T13:00:00.000Z".into());
    assert_eq!(
        code(validate(&wrong, &log_of(EXAMPLE), &env)).1,
        "evidence reviewed_at is not the host's time of the reviewer's completion"
    );
}

/// A field the rule needs that the artifact lacks is named as missing, not as wrong.
#[test]
fn evidence_lacking_a_required_field_says_it_is_missing() {
    for field in [
        "agent_name",
        "session_id",
        "reviewer_model",
        "executor_family",
        "reviewer_family",
        "family_relation",
        "executor_model_source",
        "reviewer_model_source",
        "response_sha256",
        "evidence_id",
    ] {
        let (mut ev, env) = reference_evidence();
        ev.remove(field);
        assert_eq!(
            code(validate(&ev, &log_of(EXAMPLE), &env)).1,
            format!("artifact is missing non-empty string field: {field}"),
            "{field}"
        );
    }
}

/// A log in which no event names a parent is no Copilot CLI log: every known version
/// chains each event to the one before it. The refusal says so, not that lines were
/// inserted.
#[test]
fn a_log_without_any_parent_id_is_refused_as_carrying_no_host_chain() {
    let unchained: String = EXAMPLE
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            value.as_object_mut().unwrap().remove("parentId");
            format!("{}\n", serde_json::to_string(&value).unwrap())
        })
        .collect();
    let log = log_of(&unchained);
    let refusals = [
        code(verify_text(&unchained)),
        code(challenge(&request(BINDING), &[&log], &MemoryEnv::default())),
        code(validate_challenge(&challenge_for(&log), &log, &MemoryEnv::default())),
    ];
    for (exit, message) in refusals {
        assert_eq!(exit, RefusalCode::Evidence);
        assert!(message.contains("/s/events.jsonl carries no host chain: no event in it has a parentId"), "{message}");
        assert!(message.contains("not written by Copilot CLI"), "{message}");
        assert!(!message.contains("lines were inserted"), "{message}");
    }
}

/// A challenge that finds no marker names the hosts and the roots it searched, and what to
/// run; the reference's words stay first where only Copilot CLI was searched.
#[test]
fn no_binding_names_the_hosts_and_roots_searched() {
    use std::path::PathBuf;
    let env = MemoryEnv::default();
    let refusal = |searched: &[SearchedRoot]| {
        let request = ChallengeRequest { searched, ..request("run_20260715_other_binding_0001") };
        let (exit, message) = code(challenge(&request, &[&log_of(EXAMPLE)], &env));
        assert_eq!(exit, RefusalCode::NoBinding);
        message
    };
    let copilot_only = refusal(&[SearchedRoot::Host(Host::CopilotCli, PathBuf::from("/a"))]);
    assert!(
        copilot_only.starts_with(
            "binding marker is not present in a current Copilot root session event: no session of \
             /home/user/project among the Copilot CLI sessions under /a has a root shell call printing the marker \
             for binding run_20260715_other_binding_0001 that completed within the last 60 s; run `judge-evidence \
             marker --binding run_20260715_other_binding_0001` as its own shell call"
        ),
        "{copilot_only}"
    );
    let every_host = refusal(&[
        SearchedRoot::Host(Host::CopilotCli, PathBuf::from("/a")),
        SearchedRoot::Host(Host::ClaudeCode, PathBuf::from("/b")),
        SearchedRoot::Host(Host::CodexCli, PathBuf::from("/c")),
    ]);
    assert!(
        every_host.contains(
            "in a current Copilot, Claude Code or Codex CLI root session event: no session of /home/user/project \
             among the Copilot CLI sessions under /a, the Claude Code projects under /b and the Codex CLI sessions \
             under /c has"
        ),
        "{every_host}"
    );
    let named = refusal(&[SearchedRoot::Named(PathBuf::from("/r"))]);
    assert!(
        named.contains(
            "in a current Copilot or Claude Code root session event: no session of /home/user/project among the \
             Copilot CLI sessions and Claude Code projects under /r has"
        ),
        "{named}"
    );
}
