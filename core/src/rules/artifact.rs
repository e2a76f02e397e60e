//! The two artifacts the rules write and read again: a challenge (`challenge` binds a
//! nonce to a marker call) and evidence (`verify` records a review of another family).
//!
//! Each is written as a typed struct, [`Challenge`] and [`Evidence`], whose sorted fields
//! serialize to the reference helper's exact bytes. What comes back from a file or the
//! wire is an [`Artifact`]: a JSON object the rules check field by field, in the
//! reference's order and words, because a forged or older artifact may hold anything. Both
//! keep fields they do not know, so an artifact of another version survives a round trip.

use super::{EvidenceError, Result};
use crate::event::{Host, SessionId};
use crate::timestamp;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What the evidence policy made of a review's pair of families.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EvidenceStatus {
    /// A known pair of different families.
    Verified,
    /// Anything else (`reason` says which).
    Rejected,
}

/// A challenge's `status`: `challenge` writes only challenges bound to a marker call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChallengeStatus {
    /// Bound to the marker call its log records.
    Bound,
}

/// Whether the executor and the reviewer are of different families.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FamilyRelation {
    /// Both known, and different.
    Different,
    /// Both known, and the same.
    Same,
    /// Either unknown (or ambiguous).
    Unknown,
}

impl FamilyRelation {
    /// The name evidence and traces give it (`different`, `same`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            FamilyRelation::Different => "different",
            FamilyRelation::Same => "same",
            FamilyRelation::Unknown => "unknown",
        }
    }
}

/// A challenge as `challenge` writes it (`schema` [`super::CHALLENGE_SCHEMA`], `status`
/// [`ChallengeStatus::Bound`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Challenge {
    /// [`super::CHALLENGE_SCHEMA`].
    pub schema: String,
    /// Always `bound`.
    pub status: ChallengeStatus,
    /// The token the marker call carries.
    pub binding: String,
    /// The nonce the reviewer's prompt must carry.
    pub nonce: super::Nonce,
    /// When `challenge` ran.
    pub issued_at: String,
    /// The session's working directory, resolved.
    pub cwd: String,
    /// The host's id of the session.
    pub session_id: SessionId,
    /// The executor's session log.
    pub session_events: String,
    /// The record of the marker call.
    pub challenge_event_id: String,
    /// The record of the marker call's completion.
    pub challenge_completion_event_id: String,
    /// The marker call's id.
    pub challenge_tool_call_id: Option<String>,
    /// The host's time of the marker call: reviews count from here.
    pub challenge_event_timestamp: Option<String>,
    /// The executor's model, as the host recorded it at the marker call.
    pub executor_model: String,
    /// Its family.
    pub executor_family: String,
    /// The length of the log's bound prefix.
    pub event_prefix_bytes: u64,
    /// The bound prefix's SHA-256.
    pub event_prefix_sha256: String,
    /// The host that wrote the log.
    pub host: Host,
    /// The chain digest at the end of the bound prefix.
    pub chain_sha256: Option<String>,
    /// The working tree's digest when the challenge was issued (`null` outside git).
    pub tree_sha256: Option<String>,
    /// The daemon's signature; absent in direct mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
    /// Fields of another version.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// Evidence as `verify` writes it (`schema` [`super::EVIDENCE_SCHEMA`]): which review of
/// which work it binds, and whether the policy accepted the pair (`status`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// [`super::EVIDENCE_SCHEMA`].
    pub schema: String,
    /// `verified`, or `rejected` with the policy's `reason`.
    pub status: EvidenceStatus,
    /// How the pair was established, or why it was rejected.
    pub reason: String,
    /// When `verify` first verified the review.
    pub verified_at: String,
    /// The host's time of the review's end.
    pub reviewed_at: Option<String>,
    /// The executor's session log.
    pub session_events: String,
    /// The executor's call that ran (or spawned) the reviewer.
    pub tool_call_id: Option<String>,
    /// Who reviewed: `rubber-duck`, a reviewer CLI's name, or `declared:<tool>`.
    pub agent_name: String,
    /// The executor's model, as its host recorded it.
    pub executor_model: String,
    /// Its family.
    pub executor_family: String,
    /// The reviewer's model.
    pub reviewer_model: String,
    /// Where the reviewer's model came from.
    pub reviewer_model_source: String,
    /// Its family.
    pub reviewer_family: String,
    /// `different`, `same` or `unknown`.
    pub family_relation: FamilyRelation,
    /// Whether a host's record establishes the pair as of different families.
    pub independence_verified: bool,
    /// The response file written beside the evidence.
    pub response_path: String,
    /// Its SHA-256.
    pub response_sha256: String,
    /// The length of the executor's log's bound prefix.
    pub event_prefix_bytes: u64,
    /// The bound prefix's SHA-256.
    pub event_prefix_sha256: String,
    /// The host that wrote the executor's log.
    pub host: Host,
    /// The chain digest at the end of the bound prefix.
    pub chain_sha256: Option<String>,
    /// The challenge's binding, repeated (as are the next six).
    pub binding: String,
    /// The challenge's nonce.
    pub nonce: super::Nonce,
    /// The session's working directory.
    pub cwd: String,
    /// The host's id of the session.
    pub session_id: SessionId,
    /// The record of the marker call.
    pub challenge_event_id: String,
    /// The record of the marker call's completion.
    pub challenge_completion_event_id: String,
    /// The marker call's id.
    pub challenge_tool_call_id: String,
    /// `cne_` and 32 hex digits over the identity fields.
    pub evidence_id: super::EvidenceId,
    /// The working tree's digest when the review was verified (`null` outside git).
    pub tree_sha256: Option<String>,
    /// The daemon's signature; absent in direct mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub witness: Option<String>,
    /// The host's reviewer sub-agent (and only it): the child agent that reviewed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub child_agent_id: Option<String>,
    /// The host's reviewer and a reviewer CLI: where the executor's model came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_model_source: Option<String>,
    /// A reviewer CLI and the caller's word: the record of the reviewer's identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_source: Option<String>,
    /// A reviewer CLI and the caller's word: how far that record is to be trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_assurance: Option<super::IdentityAssurance>,
    /// A reviewer CLI and the caller's word: the challenge's time of the marker call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge_event_timestamp: Option<String>,
    /// A reviewer CLI: the host whose log records its run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_host: Option<Host>,
    /// A reviewer CLI: that log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_session_events: Option<String>,
    /// A reviewer CLI: the run's session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_session_id: Option<SessionId>,
    /// A reviewer CLI: the length of the bound prefix of its log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_prefix_bytes: Option<u64>,
    /// A reviewer CLI: that prefix's SHA-256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer_prefix_sha256: Option<String>,
    /// Fields of another version.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// What a judged signature covers: an artifact's fields, without its `witness`.
pub trait Signable {
    /// The artifact's fields as a JSON object (its `witness` among them, if any).
    fn json(&self) -> Value;
}

fn json_of(artifact: &impl Serialize) -> Value {
    serde_json::to_value(artifact).expect("an artifact serializes")
}

impl Signable for Challenge {
    fn json(&self) -> Value {
        json_of(self)
    }
}

impl Signable for Evidence {
    fn json(&self) -> Value {
        json_of(self)
    }
}

impl Signable for Artifact {
    fn json(&self) -> Value {
        Value::Object(self.0.clone())
    }
}

impl Challenge {
    /// The challenge as the reference writes it to a file: pretty, sorted, a final newline.
    pub fn pretty(&self) -> String {
        crate::pyjson::pretty(&self.json())
    }

    /// The challenge on one line, as `challenge` prints it.
    pub fn one_line(&self) -> String {
        crate::pyjson::one_line(&self.json())
    }
}

impl Evidence {
    /// The evidence as the reference writes it to a file.
    pub fn pretty(&self) -> String {
        crate::pyjson::pretty(&self.json())
    }

    /// The evidence on one line, as `verify` prints it.
    pub fn one_line(&self) -> String {
        crate::pyjson::one_line(&self.json())
    }

    /// Whether the policy accepted the pair.
    pub fn is_verified(&self) -> bool {
        self.status == EvidenceStatus::Verified
    }
}

/// A challenge or evidence as read back from a file or the wire, before (or without) the
/// rules' checks: any JSON object whose objects each hold a key once (see [`Unique`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Artifact(pub(crate) Map<String, Value>);

/// A key an object holds twice.
#[derive(Clone, Debug, PartialEq, Eq)]
struct DuplicateKey(String);

/// JSON read with every object's keys checked unique, at any depth. `serde_json` keeps the
/// last of two values and another parser may keep the first: a same-family pair prepended
/// to signed evidence would be what that parser sees behind a signature that checks over
/// the last. One reading of an artifact's text, for a file and the wire alike.
struct Unique(std::result::Result<Value, DuplicateKey>);

impl<'de> Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Unique, D::Error> {
        deserializer.deserialize_any(UniqueVisitor)
    }
}

struct UniqueVisitor;

impl<'de> serde::de::Visitor<'de> for UniqueVisitor {
    type Value = Unique;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Unique, E> {
        Ok(Unique(Ok(v.into())))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Unique, E> {
        Ok(Unique(Ok(v.into())))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Unique, E> {
        Ok(Unique(Ok(v.into())))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Unique, E> {
        Ok(Unique(Ok(v.into())))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Unique, E> {
        Ok(Unique(Ok(v.into())))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Unique, E> {
        Ok(Unique(Ok(v.into())))
    }

    fn visit_unit<E>(self) -> std::result::Result<Unique, E> {
        Ok(Unique(Ok(Value::Null)))
    }

    fn visit_none<E>(self) -> std::result::Result<Unique, E> {
        Ok(Unique(Ok(Value::Null)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Unique, A::Error> {
        let mut items = Vec::new();
        let mut duplicate = None;
        // Read to the end whatever is found: the parser expects the whole array consumed.
        while let Some(Unique(item)) = seq.next_element()? {
            match item {
                Ok(item) => items.push(item),
                Err(key) => _ = duplicate.get_or_insert(key),
            }
        }
        Ok(Unique(duplicate.map_or(Ok(Value::Array(items)), Err)))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<Unique, A::Error> {
        let mut fields = Map::new();
        let mut duplicate = None;
        while let Some(key) = map.next_key::<String>()? {
            let Unique(value) = map.next_value()?;
            match value {
                Err(inner) => _ = duplicate.get_or_insert(inner),
                Ok(_) if fields.contains_key(&key) => _ = duplicate.get_or_insert(DuplicateKey(key)),
                Ok(value) => _ = fields.insert(key, value),
            }
        }
        Ok(Unique(duplicate.map_or(Ok(Value::Object(fields)), Err)))
    }
}

impl<'de> Deserialize<'de> for Artifact {
    /// As [`Artifact::parse`] reads a file: an object, each key once.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Artifact, D::Error> {
        use serde::de::Error;
        match Unique::deserialize(deserializer)?.0 {
            Ok(Value::Object(fields)) => Ok(Artifact(fields)),
            Ok(_) => Err(D::Error::custom("a JSON artifact must be an object")),
            Err(DuplicateKey(key)) => Err(D::Error::custom(duplicate_message(&key))),
        }
    }
}

/// The words for an artifact holding `key` twice.
fn duplicate_message(key: &str) -> String {
    format!("duplicate key `{key}` in JSON artifact: judged writes each key once, so it was edited")
}

impl From<Map<String, Value>> for Artifact {
    fn from(fields: Map<String, Value>) -> Artifact {
        Artifact(fields)
    }
}

impl From<Challenge> for Artifact {
    fn from(challenge: Challenge) -> Artifact {
        Artifact::of(&challenge)
    }
}

impl From<Evidence> for Artifact {
    fn from(evidence: Evidence) -> Artifact {
        Artifact::of(&evidence)
    }
}

impl Artifact {
    fn of(artifact: &impl Signable) -> Artifact {
        let Value::Object(fields) = artifact.json() else { unreachable!("an artifact is an object") };
        Artifact(fields)
    }

    /// Parse artifact bytes read from `path`.
    pub fn parse(path: &str, bytes: &[u8]) -> Result<Artifact> {
        match serde_json::from_slice::<Unique>(bytes).map(|unique| unique.0) {
            Ok(Ok(Value::Object(map))) => Ok(Artifact(map)),
            Ok(Ok(_)) => Err(EvidenceError::evidence(format!("JSON artifact must be an object: {path}"))),
            Ok(Err(DuplicateKey(key))) => Err(EvidenceError::evidence(format!("{} ({path})", duplicate_message(&key)))),
            Err(_) => Err(EvidenceError::evidence(format!("invalid JSON artifact: {path}"))),
        }
    }

    /// The artifact on one line with `shown` fields added (or replaced), as `validate`
    /// and `validate-challenge` print it.
    pub fn shown_with(&self, shown: impl IntoIterator<Item = (&'static str, Value)>) -> String {
        let mut fields = self.0.clone();
        fields.extend(shown.into_iter().map(|(key, value)| (key.to_owned(), value)));
        crate::pyjson::one_line(&Value::Object(fields))
    }

    /// The host whose session log the artifact is bound to.
    pub fn host(&self) -> Host {
        // Artifacts written before the `host` field existed are Copilot CLI's: it was the
        // only host then, so an absent (or unknown) field keeps reading them as before.
        self.str("host").and_then(Host::parse).unwrap_or(Host::CopilotCli)
    }

    /// The executor's session log the artifact names (required).
    pub fn session_events(&self) -> Result<&str> {
        self.required("session_events")
    }

    /// The host's time of the marker call, when the artifact records a readable one.
    pub fn challenge_time(&self) -> Option<DateTime<Utc>> {
        self.str("challenge_event_timestamp").and_then(timestamp::parse)
    }

    /// The `schema` field, when it is a string.
    pub fn schema(&self) -> Option<&str> {
        self.str("schema")
    }

    /// The `cwd` field, when it is a string.
    pub fn cwd(&self) -> Option<&str> {
        self.str("cwd")
    }

    /// The `witness` field, when it is a string.
    pub fn witness(&self) -> Option<&str> {
        self.str("witness")
    }

    /// The `evidence_id` field, when it is a string.
    pub fn evidence_id(&self) -> Option<&str> {
        self.str("evidence_id")
    }

    /// The `response_path` field, when it is a string.
    pub fn response_path(&self) -> Option<&str> {
        self.str("response_path")
    }

    /// The `response_sha256` field, when it is a string: the digest of the response file.
    pub fn response_sha256(&self) -> Option<&str> {
        self.str("response_sha256")
    }

    /// The `executor_model` field, when it is a string.
    pub fn executor_model(&self) -> Option<&str> {
        self.str("executor_model")
    }

    /// The `reviewer_model` field, when it is a string.
    pub fn reviewer_model(&self) -> Option<&str> {
        self.str("reviewer_model")
    }

    /// How the reviewer's identity is known: `caller-declared` when the evidence says so,
    /// else host-recorded.
    pub fn identity_assurance(&self) -> super::IdentityAssurance {
        let stated = self.get("identity_assurance").cloned().map(serde_json::from_value);
        stated.and_then(std::result::Result::ok).unwrap_or_default()
    }

    /// A field's value, if present.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// A string field, if present and a string.
    pub(crate) fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    /// A required non-empty string field.
    pub(crate) fn required(&self, key: &str) -> Result<&str> {
        self.str(key)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| EvidenceError::evidence(format!("artifact is missing non-empty string field: {key}")))
    }

    /// A required ISO-8601 timestamp field.
    pub(crate) fn timestamp(&self, key: &str) -> Result<DateTime<Utc>> {
        self.str(key)
            .and_then(timestamp::parse)
            .ok_or_else(|| EvidenceError::evidence(format!("{key} is not an ISO-8601 timestamp")))
    }

    /// A positive integer no larger than `limit` (JSON booleans are not integers).
    pub(crate) fn prefix_len(&self, key: &str, limit: u64) -> Option<u64> {
        self.0.get(key).and_then(Value::as_u64).filter(|&n| n > 0 && n <= limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn challenge_json() -> Value {
        json!({
            "schema": super::super::CHALLENGE_SCHEMA, "status": "bound", "binding": "b", "nonce": "n",
            "issued_at": "2026-12-02T10:00:00Z", "cwd": "/p", "session_id": "s", "session_events": "/l",
            "challenge_event_id": "e1", "challenge_completion_event_id": "e2", "challenge_tool_call_id": "c",
            "challenge_event_timestamp": null, "executor_model": "gpt-5.4", "executor_family": "openai",
            "event_prefix_bytes": 10, "event_prefix_sha256": "00", "host": "codex-cli", "chain_sha256": null,
            "tree_sha256": null, "witness": "ed25519:k:s", "from_a_later_version": {"kept": [1, 2]},
        })
    }

    /// A challenge of a later version passes through the wire and back with every field it
    /// had, `null`s included, and so keeps its signature.
    #[test]
    fn a_challenge_keeps_every_field_through_its_type() {
        let typed: Challenge = serde_json::from_value(challenge_json()).unwrap();
        assert_eq!(typed.other["from_a_later_version"], json!({"kept": [1, 2]}));
        assert_eq!(typed.json(), challenge_json());
        let unsigned = Challenge { witness: None, ..typed };
        assert!(unsigned.json().get("witness").is_none(), "a challenge of direct mode has no witness field");
    }

    /// An artifact read back prints as it was written, with what validation adds.
    #[test]
    fn an_artifact_read_back_prints_as_written() {
        let text = challenge_json().to_string();
        let artifact = Artifact::parse("/c.json", text.as_bytes()).unwrap();
        let shown: Value = serde_json::from_str(&artifact.shown_with([("witness_checked", true.into())])).unwrap();
        let mut expected = challenge_json();
        expected["witness_checked"] = true.into();
        assert_eq!(shown, expected);
        assert_eq!(artifact.host(), Host::CodexCli);
        let error = Artifact::parse("/c.json", b"[1]").unwrap_err();
        assert_eq!(error.message, "JSON artifact must be an object: /c.json");
    }

    /// A key twice, at the top or deeper, is refused by name from a file and the wire alike.
    #[test]
    fn an_artifact_holding_a_key_twice_is_refused_naming_it() {
        let twice = br#"{"status": "rejected", "nonce": "n", "status": "verified"}"#;
        let error = Artifact::parse("/e.json", twice).unwrap_err();
        assert_eq!(
            error.message,
            "duplicate key `status` in JSON artifact: judged writes each key once, so it was edited (/e.json)"
        );
        let deep = br#"{"nonce": "n", "other": [{"a": 1, "a": 2}]}"#;
        assert!(Artifact::parse("/e.json", deep).unwrap_err().message.starts_with("duplicate key `a`"));
        let wire = serde_json::from_slice::<Artifact>(twice).unwrap_err().to_string();
        assert!(wire.starts_with("duplicate key `status` in JSON artifact"), "{wire}");
        let once = br#"{"nonce": "n", "other": [{"a": 1}, {"a": 2}], "x": 1.5, "y": null}"#;
        assert_eq!(serde_json::from_slice::<Artifact>(once).unwrap(), Artifact::parse("/e.json", once).unwrap());
    }
}
