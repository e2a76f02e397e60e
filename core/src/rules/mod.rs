//! The evidence rules of the copilot-native protocol, as pure functions.
//!
//! Behaviour follows the reference helper (`docs/spec/evidence-protocol.md` §2–§3)
//! except where the spec lists a defect (§8) or the real host disagrees (§9); each such
//! place says so and has a test named after it. Path resolution and file reads are the
//! caller's business, through [`Env`].

mod artifact;
mod challenge;
mod cli_review;
mod declared_review;
mod session;
mod validate;
mod verify;

#[cfg(test)]
mod tests;

pub use artifact::{Artifact, Challenge, ChallengeStatus, Evidence, EvidenceStatus, FamilyRelation, Signable};
pub use challenge::{ChallengeRequest, SearchedRoot, challenge, check_max_age, validate_challenge};
pub use cli_review::{
    ReviewerCli, reviewer_run_nonces, reviews_by_shell_call, runs_reviewer_around, validate_cli_review,
    verify_cli_review,
};
pub use declared_review::{IdentityAssurance, is_declared, validate_declared_review, verify_declared_review};
pub use validate::validate;
pub use verify::{Verified, VerifyRequest, verify};

use crate::event::Host;
use crate::log::SessionLog;
use serde_json::{Map, Value};

/// The `schema` of a challenge artifact (and of the marker object).
pub const CHALLENGE_SCHEMA: &str = "aris.copilot-native.challenge/v1";
/// The `schema` of an evidence artifact.
pub const EVIDENCE_SCHEMA: &str = "aris.copilot-native.evidence/v1";
/// Where evidence says its models came from (`*_model_source`): the host's session log,
/// never the caller.
pub const HOST_SESSION_EVENT: &str = "host-session-event";
/// The host's name for the reviewer sub-agent, the only agent whose review counts.
pub const REVIEWER_AGENT: &str = "rubber-duck";

/// Why the rules refused, as the stable exit code of `judge-evidence` (shared with the
/// reference helper; `code as u8` is the process exit code). Named apart from
/// `std::process::ExitCode`, which the binaries return and which also means success.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RefusalCode {
    /// 2: anything else wrong with the evidence, an artifact or the log.
    Evidence = 2,
    /// 3: no current root marker call for the binding (not in a bound session).
    NoBinding = 3,
    /// 4: more than one marker call matches the binding.
    AmbiguousBinding = 4,
    /// 5: the executor's host-reported model has no known family.
    UnknownExecutorFamily = 5,
    /// 6: not exactly one nonce-bound reviewer invocation (or its child lacks the nonce).
    InvocationCount = 6,
    /// 7: the reviewer's lifecycle failed or is incomplete.
    Lifecycle = 7,
    /// 10: verified, but the policy rejects the pair (same or unknown family); the
    /// artifacts are still written.
    PolicyRejected = 10,
}

impl RefusalCode {
    /// The code a refusal carried over the wire; anything unknown is the generic 2.
    pub fn from_code(code: u8) -> RefusalCode {
        [
            RefusalCode::NoBinding,
            RefusalCode::AmbiguousBinding,
            RefusalCode::UnknownExecutorFamily,
            RefusalCode::InvocationCount,
            RefusalCode::Lifecycle,
            RefusalCode::PolicyRejected,
        ]
        .into_iter()
        .find(|c| *c as u8 == code)
        .unwrap_or(RefusalCode::Evidence)
    }
}

/// A deterministic refusal with its exit code and a message naming what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EvidenceError {
    /// The exit code the refusal maps to.
    pub code: RefusalCode,
    /// What is wrong, in the reference helper's words where it has them: callers match
    /// on these, so they are kept byte for byte.
    pub message: String,
    /// How far the logs the refusal read had got, when a later host write could change it.
    pub log_state: Option<LogState>,
}

/// How far a host's logs had got when a refusal was decided: whether waiting for the host
/// to persist more can still change the answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LogState {
    /// A log shows the calling command's own call, still running. The host persists a
    /// call when it starts, after everything before it, so nothing the refusal looked
    /// for is still on its way.
    pub caller_seen: bool,
    /// The bytes of the logs read: while this changes, the host is still writing.
    pub bytes: u64,
}

impl LogState {
    /// The state of `logs` for a caller whose command line holds every one of `words`
    /// (`challenge` and the binding, or `verify` and the challenge's file name).
    pub fn of(logs: &[&SessionLog], words: &[&str]) -> LogState {
        LogState {
            caller_seen: logs.iter().any(|log| session::shows_running_call(log, words)),
            bytes: logs.iter().map(|log| log.len()).sum(),
        }
    }
}

impl EvidenceError {
    /// The evidence decision a refusal carried over the wire, with its exit code.
    pub fn from_wire(exit_code: u8, message: String, log_state: Option<LogState>) -> EvidenceError {
        EvidenceError { code: RefusalCode::from_code(exit_code), message, log_state }
    }

    /// A refusal with `code`, before anyone knows how far the logs had got.
    pub fn new(code: RefusalCode, message: impl Into<String>) -> EvidenceError {
        EvidenceError { code, message: message.into(), log_state: None }
    }

    /// The same refusal, saying how far the logs it read had got.
    pub fn with_log_state(mut self, state: LogState) -> EvidenceError {
        self.log_state = Some(state);
        self
    }

    /// Exit 2, the generic evidence error.
    pub fn evidence(message: impl Into<String>) -> EvidenceError {
        EvidenceError::new(RefusalCode::Evidence, message)
    }

    /// Name the artifact the refusal is about, unless the message already does. The
    /// reference's wording stays first, so callers matching on it keep working.
    pub fn about_artifact(mut self, path: &str) -> EvidenceError {
        if !self.message.contains(path) {
            self.message = format!("{} (artifact {path})", self.message);
        }
        self
    }
}

/// A rule's result: the value, or the refusal to print and exit with.
pub type Result<T> = std::result::Result<T, EvidenceError>;

/// What the rules need from the outside world.
pub trait Env {
    /// The fully resolved form of `path` (absolute, symlinks followed; a path that does
    /// not exist resolves to its absolute self).
    fn resolve(&self, path: &str) -> String;
    /// The bytes of an artifact file, after the safe-file checks.
    fn read_file(&self, path: &str) -> Result<Vec<u8>>;
}

/// A binding token, checked where it comes in (the command line, an MCP call, a request
/// on the socket): `[A-Za-z0-9][A-Za-z0-9_.:-]{15,127}`. The rules take only this.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding(String);

impl Binding {
    /// `text` as a binding, or the reference's refusal.
    pub fn parse(text: &str) -> Result<Binding> {
        let bytes = text.as_bytes();
        let valid = (16..=128).contains(&bytes.len())
            && bytes[0].is_ascii_alphanumeric()
            && bytes[1..].iter().all(|&b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b));
        if valid {
            Ok(Binding(text.to_owned()))
        } else {
            Err(EvidenceError::evidence("--binding must be a 16..128 character stable token"))
        }
    }

    /// The token.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Binding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The marker object, whose one-line text `challenge` looks for in the host's record.
pub fn marker(binding: &Binding) -> Value {
    marker_object(binding.as_str())
}

fn marker_object(binding: &str) -> Value {
    object([("binding", binding.into()), ("schema", CHALLENGE_SCHEMA.into()), ("status", "marker".into())])
}

/// The exact bytes `marker` prints, as the host records them in the tool result.
fn marker_text(binding: &str) -> String {
    crate::pyjson::one_line(&marker_object(binding))
}

fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// What revalidating an artifact established.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validated {
    /// Where its reviewed window starts in the log (the marker call): an integrity finding
    /// from here on undoes it.
    pub window_start: u64,
    /// The host's time of the reviewer's completion, derived from the log, for evidence
    /// that does not record `reviewed_at` (the reference helper's); `None` when the
    /// artifact records it (checked against the log) or has no such time.
    pub derived_reviewed_at: Option<String>,
}

impl Validated {
    /// An artifact whose window starts at `window_start`, with nothing derived.
    fn at(window_start: u64) -> Validated {
        Validated { window_start, derived_reviewed_at: None }
    }
}

/// The two artifacts a client can ask to revalidate. Each has its own schema and rule,
/// and the daemon looks each up in its own journal entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArtifactKind {
    /// A challenge, written by `challenge` ([`CHALLENGE_SCHEMA`]).
    Challenge,
    /// Evidence, written by `verify` ([`EVIDENCE_SCHEMA`]).
    Evidence,
}

impl ArtifactKind {
    /// The kind's name, as the wire and the messages spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            ArtifactKind::Challenge => "challenge",
            ArtifactKind::Evidence => "evidence",
        }
    }

    /// What the rules refuse from an artifact of this kind by its own fields, before any
    /// log is read (its schema, a bound challenge, a verified pair), in the words its rule
    /// uses: an offline check of the signature alone refuses the same, as the daemon would.
    pub fn check_standing(self, artifact: &Artifact) -> Result<()> {
        match (self, reviewer_log(artifact)) {
            (ArtifactKind::Challenge, _) => challenge::check_standing(artifact),
            (ArtifactKind::Evidence, None) if is_declared(artifact) => declared_review::check_standing(artifact),
            (ArtifactKind::Evidence, None) => validate::check_standing(artifact),
            (ArtifactKind::Evidence, Some(_)) => cli_review::check_standing(artifact).map(|_| ()),
        }
    }

    /// Revalidate an artifact of this kind against `log` (and, for evidence of a review
    /// recorded in another host's log, that `reviewer` log: see [`reviewer_log`]) with its
    /// rule.
    pub fn validate(
        self,
        artifact: &Artifact,
        log: &SessionLog,
        reviewer: Option<&SessionLog>,
        env: &dyn Env,
    ) -> Result<Validated> {
        match (self, reviewer_log(artifact)) {
            (ArtifactKind::Challenge, _) => validate_challenge(artifact, log, env).map(Validated::at),
            (ArtifactKind::Evidence, None) if is_declared(artifact) => {
                validate_declared_review(artifact, log, env).map(Validated::at)
            }
            (ArtifactKind::Evidence, None) => validate(artifact, log, env),
            (ArtifactKind::Evidence, Some((path, _))) => match reviewer {
                Some(run_log) => validate_cli_review(artifact, log, run_log, env).map(Validated::at),
                None => Err(EvidenceError::evidence(format!("the reviewer's log {path} was not read"))),
            },
        }
    }
}

/// The other host's log that evidence rests on besides its session log (the reviewer
/// CLI's log of a Claude Code review), with that host; `None` for a review recorded in the
/// session log itself.
pub fn reviewer_log(evidence: &Artifact) -> Option<(&str, Host)> {
    let cli = evidence.str("agent_name").and_then(ReviewerCli::of_evidence)?;
    evidence.str("reviewer_session_events").map(|path| (path, cli.host()))
}

/// Verify the review a challenge binds, whichever host wrote the session: a Copilot CLI
/// rubber-duck recorded in `log` itself ([`verify`]), or, for Claude Code and Codex CLI, a
/// reviewer CLI's run among `reviewer_logs` ([`verify_cli_review`]; callers pass the Codex
/// rollouts and Copilot session logs that may hold it only where
/// [`reviews_by_shell_call`]); or, when the
/// caller names the reviewer's model, a review only the caller vouches for
/// ([`verify_declared_review`]).
pub fn verify_review(
    challenge: &Artifact,
    log: &SessionLog,
    reviewer_logs: &[&SessionLog],
    request: &VerifyRequest,
    env: &dyn Env,
) -> Result<Verified> {
    if let Some(model) = request.declared_model {
        return verify_declared_review(challenge, log, model, request, env);
    }
    if reviews_by_shell_call(log.host) {
        verify_cli_review(challenge, log, reviewer_logs, request, env)
    } else {
        verify(challenge, log, request, env)
    }
}

/// What the evidence policy makes of an executor and a reviewer model: their families,
/// and the evidence's `status`, `reason` and `family_relation`. Only a known pair of
/// different families is verified.
struct FamilyPair {
    executor_family: Option<&'static str>,
    reviewer_family: Option<&'static str>,
    status: EvidenceStatus,
    reason: &'static str,
    relation: FamilyRelation,
}

impl FamilyPair {
    /// The pair, `cross_family_reason` naming how a verified one was established.
    fn of(executor_model: &str, reviewer_model: &str, cross_family_reason: &'static str) -> FamilyPair {
        let executor_family = crate::family::family(executor_model, crate::family::Table::Evidence);
        let reviewer_family = crate::family::family(reviewer_model, crate::family::Table::Evidence);
        let (status, reason, relation) = match (executor_family, reviewer_family) {
            (Some(e), Some(r)) if e != r => (EvidenceStatus::Verified, cross_family_reason, FamilyRelation::Different),
            (Some(_), Some(_)) => (EvidenceStatus::Rejected, "same-model-family", FamilyRelation::Same),
            _ => (EvidenceStatus::Rejected, "unknown-model-family", FamilyRelation::Unknown),
        };
        FamilyPair { executor_family, reviewer_family, status, reason, relation }
    }
}

/// The nonce line the reviewer's prompt must carry: `ARIS_REVIEW_NONCE=<nonce>` alone on
/// a line, trailing whitespace allowed.
pub fn has_nonce_line(prompt: &str, nonce: &Nonce) -> bool {
    let wanted = format!("ARIS_REVIEW_NONCE={nonce}");
    prompt.split('\n').any(|line| line.strip_prefix(wanted.as_str()).is_some_and(|rest| rest.trim().is_empty()))
}

/// The reviewer's response from the native tool result (evidence-protocol.md §3.6).
pub fn extract_response(result: &Value) -> Result<String> {
    let Some(result) = result.as_object() else {
        return Err(EvidenceError::evidence("native reviewer tool result is not an object"));
    };
    let content = result
        .get("content")
        .and_then(Value::as_str)
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| EvidenceError::evidence("native reviewer tool result has no text content"))?;
    let detailed = result.get("detailedContent").and_then(Value::as_str);
    Ok(match detailed {
        Some(d) if d.chars().count() >= content.chars().count() && !d.contains("(Full response provided to agent)") => {
            d.to_owned()
        }
        _ => content.to_owned(),
    })
}

/// An evidence's id: `cne_` and 32 hex digits of the SHA-256 of its seven canonical
/// identity fields (evidence-protocol.md §3.5). Computed from the evidence
/// ([`EvidenceId::of`]), or read where judged wrote one (its journal, a reply, an
/// attestation), checked for its form there; an `evidence_id` field of an evidence file
/// is compared with the one computed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct EvidenceId(String);

/// Text that is not `cne_` and 32 lowercase hex digits.
#[derive(Debug, thiserror::Error)]
#[error("`{0}` is not an evidence id (`cne_` and 32 lowercase hex digits)")]
pub struct NotAnEvidenceId(String);

impl EvidenceId {
    /// The id of `evidence`, from its identity fields.
    pub fn of(evidence: &Artifact) -> EvidenceId {
        EvidenceId(evidence_id(evidence))
    }

    /// `text` as an id, when it has the form of one.
    pub fn parse(text: &str) -> std::result::Result<EvidenceId, NotAnEvidenceId> {
        let hex = text.strip_prefix("cne_").filter(|hex| hex.len() == 32);
        match hex.filter(|hex| hex.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))) {
            Some(_) => Ok(EvidenceId(text.to_owned())),
            None => Err(NotAnEvidenceId(text.to_owned())),
        }
    }

    /// The id as evidence writes it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for EvidenceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<EvidenceId> for String {
    fn from(id: EvidenceId) -> String {
        id.0
    }
}

impl TryFrom<String> for EvidenceId {
    type Error = NotAnEvidenceId;
    fn try_from(text: String) -> std::result::Result<EvidenceId, NotAnEvidenceId> {
        EvidenceId::parse(&text)
    }
}

impl PartialEq<str> for EvidenceId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

/// `cne_` + 32 hex of the SHA-256 of the canonical seven identity fields.
fn evidence_id(evidence: &Artifact) -> String {
    let identity: Map<String, Value> = [
        "session_id",
        "challenge_event_id",
        "tool_call_id",
        "executor_model",
        "reviewer_model",
        "response_sha256",
        "event_prefix_sha256",
    ]
    .iter()
    .map(|k| (k.to_string(), evidence.get(k).cloned().unwrap_or(Value::Null)))
    .collect();
    let digest = crate::chain::sha256(crate::pyjson::canonical(&Value::Object(identity)).as_bytes());
    format!("cne_{}", &hex::encode(digest)[..32])
}

/// A challenge's nonce, the line the reviewer's prompt must carry. Made only by
/// `challenge` ([`Nonce::fresh`]); read back from an artifact or judged's journal, where
/// it must be a non-empty string (evidence-protocol.md §2.5), as the reference asks.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Nonce(String);

/// A nonce field that is empty.
#[derive(Debug, thiserror::Error)]
#[error("a nonce is a non-empty string")]
pub struct EmptyNonce;

impl Nonce {
    /// A fresh nonce: 24 CSPRNG bytes as 32 URL-safe base64 characters.
    pub fn fresh() -> Nonce {
        let mut bytes = [0u8; 24];
        rand::fill(&mut bytes);
        Nonce(encode_nonce(&bytes))
    }

    /// The nonce of a challenge or evidence artifact, where the rules require one.
    fn of(artifact: &Artifact) -> Result<Nonce> {
        artifact.required("nonce").map(|nonce| Nonce(nonce.to_owned()))
    }

    /// The nonce as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Nonce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Nonce> for String {
    fn from(nonce: Nonce) -> String {
        nonce.0
    }
}

impl TryFrom<String> for Nonce {
    type Error = EmptyNonce;
    fn try_from(text: String) -> std::result::Result<Nonce, EmptyNonce> {
        if text.is_empty() { Err(EmptyNonce) } else { Ok(Nonce(text)) }
    }
}

/// URL-safe base64 without padding, as Python's `secrets.token_urlsafe` writes a nonce.
fn encode_nonce(bytes: &[u8; 24]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    bytes
        .chunks(3)
        .flat_map(|c| {
            let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
            [18, 12, 6, 0].map(|shift| ALPHABET[(n >> shift) as usize & 63] as char)
        })
        .collect()
}

#[cfg(test)]
mod nonce_tests {
    #[test]
    fn nonces_are_32_url_safe_characters_and_fresh() {
        assert_eq!(super::encode_nonce(&[0xfb; 24]), "-_v7".repeat(8));
        let (a, b) = (super::Nonce::fresh().0, super::Nonce::fresh().0);
        assert_ne!(a, b);
        assert!(a.len() == 32 && a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
    }

    /// A nonce read back (a journal entry, a reply) is one only when it is not empty, as an
    /// artifact's is: an empty one would be carried by every prompt's `ARIS_REVIEW_NONCE=`.
    #[test]
    fn a_nonce_read_back_is_a_non_empty_string() {
        let read = |json: &str| serde_json::from_str::<super::Nonce>(json).map_err(|e| e.to_string());
        assert_eq!(read(r#""kX3v9Qm2""#).unwrap().as_str(), "kX3v9Qm2");
        assert_eq!(read(r#""""#).unwrap_err(), "a nonce is a non-empty string");
        let artifact = super::Artifact::parse("c.json", br#"{"nonce": ""}"#).unwrap();
        let refusal = super::Nonce::of(&artifact).unwrap_err().message;
        assert_eq!(refusal, "artifact is missing non-empty string field: nonce");
    }
}

#[cfg(test)]
mod evidence_id_tests {
    use super::EvidenceId;

    /// An id judged reads back (its journal, a reply, an attestation) has the form of
    /// one, or the record is refused; it travels as the plain string.
    #[test]
    fn an_evidence_id_is_cne_and_32_lowercase_hex_digits_on_the_wire_as_a_string() {
        let id = EvidenceId::parse("cne_924eca850956e98735967f7721456b57").unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"cne_924eca850956e98735967f7721456b57\"");
        let read: EvidenceId = serde_json::from_str("\"cne_924eca850956e98735967f7721456b57\"").unwrap();
        assert_eq!(read, id);
        for bad in ["", "cne_", "cne_924ECA850956E98735967F7721456B57", "cne_924eca850956e98735967f7721456b5", "ev"] {
            let error = serde_json::from_str::<EvidenceId>(&format!("\"{bad}\"")).unwrap_err().to_string();
            assert!(error.contains(&format!("`{bad}` is not an evidence id")), "{error}");
        }
    }
}
