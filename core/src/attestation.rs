//! The review attestation: what judged's witness says about a git commit, in the formats
//! supply-chain tools already read (docs/spec/attestation.md).
//!
//! An in-toto Statement v1 whose subject is the commit (`gitCommit`) and the tree it holds
//! (`gitTree`), and whose predicate ([`ReviewPredicate`]) says who wrote the work, who
//! reviewed it and how that is known. It travels as the payload of a DSSE envelope
//! ([`Envelope`]) signed with the witness's Ed25519 key over DSSE's pre-authentication
//! encoding ([`pae`]); the key id is the SHA-256 of the key's SubjectPublicKeyInfo
//! ([`PublicKey::spki_id`]). The daemon seals; anyone holding the public key opens.

use crate::event::Host;
use crate::rules::IdentityAssurance;
use crate::signature::{PublicKey, SigningKey};
use base64ct::{Base64, Encoding};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The in-toto Statement's `_type`.
pub const STATEMENT_TYPE: &str = "https://in-toto.io/Statement/v1";
/// The DSSE `payloadType` of an in-toto Statement.
pub const PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";
/// The predicate's type: judged's own, versioned (docs/spec/attestation.md says why not
/// the in-toto Simple Verification Result).
pub const PREDICATE_TYPE: &str = "https://judged.dev/attestation/review/v2";
/// The first predicate, which named no base: a pass of the tree it names may have been
/// shown only the last of its changes (docs/spec/attestation.md §8).
pub const PREDICATE_TYPE_V1: &str = "https://judged.dev/attestation/review/v1";
/// The most signatures of one envelope checked.
const MAX_SIGNATURES: usize = 8;
/// The subject digest algorithm of a commit, and of the tree it holds (in-toto's digest set).
pub const GIT_COMMIT: &str = "gitCommit";
/// See [`GIT_COMMIT`].
pub const GIT_TREE: &str = "gitTree";

/// An in-toto Statement v1 about one commit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    /// [`STATEMENT_TYPE`].
    #[serde(rename = "_type")]
    pub statement_type: String,
    /// The commit, then the tree it holds.
    pub subject: Vec<Subject>,
    /// [`PREDICATE_TYPE`].
    #[serde(rename = "predicateType")]
    pub predicate_type: String,
    /// What the witness says of the subject.
    pub predicate: ReviewPredicate,
}

/// One in-toto ResourceDescriptor of the subject: a name and its digests.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    /// `commit` or `tree`.
    pub name: String,
    /// `{"gitCommit": sha}` or `{"gitTree": sha}`.
    pub digest: BTreeMap<String, String>,
}

/// judged's predicate (`https://judged.dev/attestation/review/v2`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewPredicate {
    /// When the review ended (a reviewer: the host's time of its end; a jury: when its
    /// verdict was recorded), RFC 3339 UTC.
    pub reviewed_at: String,
    /// When the witness signed this statement.
    pub attested_at: String,
    /// The signing key's id ([`PublicKey::spki_id`]), as the envelope's `keyid`.
    pub witness_key_id: String,
    /// The commit the review's changes began at: it was shown the way from this commit's
    /// tree to the tree attested, so what led to this commit needs a review of its own.
    /// None when the repository had no commit and every file was shown as new.
    pub reviewed_base: Option<String>,
    /// Who wrote the work.
    pub executor: Executor,
    /// Who reviewed it.
    pub review: Review,
}

/// The agent whose work was reviewed, as its host recorded it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Executor {
    /// The host whose log recorded the agent; none for a jury the gate convened without
    /// knowing the session.
    pub host: Option<Host>,
    /// Its model; none where no log named it.
    pub model: Option<String>,
    /// The model's family (`openai`, `anthropic`, `google`, …); none when unknown.
    pub family: Option<String>,
}

/// Who reviewed the tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Review {
    /// One reviewer, bound to a challenge and verified (docs/spec/evidence-protocol.md).
    Reviewer(ReviewerReview),
    /// judged's own cross-family jury (docs/spec/jury.md).
    Jury(JuryReview),
}

/// A verified review by one reviewer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewerReview {
    /// The evidence's id (`cne_…`).
    pub evidence_id: crate::rules::EvidenceId,
    /// How the reviewer was reached: the evidence's `agent_name` (`rubber-duck`,
    /// `codex-exec`, `copilot-prompt`, `claude-prompt`, `gemini-prompt`, `declared:<tool>`).
    pub path: String,
    /// The reviewer's model.
    pub model: String,
    /// Its family.
    pub family: String,
    /// The record the model was read from (`host-session-event`, `codex-rollout`, …,
    /// `caller-declared`).
    pub identity_source: String,
    /// How far that record is to be trusted.
    pub assurance: IdentityAssurance,
    /// The reviewer's `Verdict:` (`ready`, `almost`, `not ready`), when it gave one.
    pub verdict: Option<String>,
    /// Its `Score:` out of 10, when it gave one.
    pub score: Option<f64>,
}

/// A jury's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JuryReview {
    /// The jury's record (its key in the witness's journal).
    pub packet_id: String,
    /// The rubric it judged by.
    pub rubric: String,
    /// `pass`, `fail`, `uncertain` or `error`.
    pub final_verdict: String,
    /// 0..=100.
    pub final_confidence: u8,
    /// Whether a juror was down, so that the jury was not the cross-family one configured.
    pub degraded: bool,
    /// The families of the jurors that answered, sorted, once each.
    pub families: Vec<String>,
    /// Each juror.
    pub jurors: Vec<RecordedJuror>,
}

/// One juror of a jury, as the attestation records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedJuror {
    /// Its configured name.
    pub name: String,
    /// The model that answered as its CLI recorded it, else the one configured.
    pub model: String,
    /// That model's family, when known.
    pub family: Option<String>,
    /// What it answered (`pass`, `fail`, `uncertain`), or why it is down.
    pub verdict: String,
    /// The record the model was read from, when there was one.
    pub identity_source: Option<String>,
}

impl ReviewPredicate {
    /// The review on one line, for a person: who reviewed whose work, and what it said.
    pub fn summary(&self) -> String {
        let author = match (&self.executor.model, &self.executor.family) {
            (Some(model), Some(family)) => format!("{model}'s work ({family})"),
            (Some(model), None) => format!("{model}'s work"),
            (None, _) => "the work".to_owned(),
        };
        match &self.review {
            Review::Reviewer(r) => {
                let said = match (r.score, &r.verdict) {
                    (Some(score), Some(verdict)) => format!("Score {score}/10, Verdict {verdict}"),
                    _ => "no Score and Verdict".to_owned(),
                };
                format!(
                    "{} ({}, {}, {}) reviewed {author}: {said}; evidence {}; {}",
                    r.model,
                    r.family,
                    r.assurance.as_str(),
                    r.path,
                    r.evidence_id,
                    self.shown()
                )
            }
            Review::Jury(j) => format!(
                "the jury ({}) judged {author}: {} at confidence {}{}; jury {}; {}",
                j.families.join(", "),
                j.final_verdict,
                j.final_confidence,
                if j.degraded { ", degraded" } else { "" },
                j.packet_id,
                self.shown()
            ),
        }
    }

    /// Which changes the review was shown, from its base.
    fn shown(&self) -> String {
        match &self.reviewed_base {
            Some(base) => format!("the changes since {base}"),
            None => "every file (no commit yet)".to_owned(),
        }
    }
}

impl Statement {
    /// The statement that `commit`, holding `tree`, was reviewed as `predicate` says.
    pub fn of_commit(commit: &str, tree: &str, predicate: ReviewPredicate) -> Statement {
        let subject = |name: &str, algorithm: &str, digest: &str| Subject {
            name: name.to_owned(),
            digest: BTreeMap::from([(algorithm.to_owned(), digest.to_owned())]),
        };
        Statement {
            statement_type: STATEMENT_TYPE.to_owned(),
            subject: vec![subject("commit", GIT_COMMIT, commit), subject("tree", GIT_TREE, tree)],
            predicate_type: PREDICATE_TYPE.to_owned(),
            predicate,
        }
    }

    /// The subject's digest by `algorithm` ([`GIT_COMMIT`], [`GIT_TREE`]): the first that
    /// names it.
    pub fn subject_digest(&self, algorithm: &str) -> Option<&str> {
        self.subject.iter().find_map(|s| s.digest.get(algorithm)).map(String::as_str)
    }
}

/// A DSSE envelope (`payload` and `sig` in standard base64 with padding).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope {
    /// The serialized statement, base64.
    pub payload: String,
    /// [`PAYLOAD_TYPE`].
    #[serde(rename = "payloadType")]
    pub payload_type: String,
    /// One signature per key that signed.
    pub signatures: Vec<EnvelopeSignature>,
}

/// One signature of an envelope.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvelopeSignature {
    /// The signing key's id ([`PublicKey::spki_id`]).
    pub keyid: String,
    /// The Ed25519 signature over [`pae`], base64.
    pub sig: String,
}

/// DSSE's pre-authentication encoding of a payload: `DSSEv1 <len> <type> <len> <body>`,
/// lengths in ASCII decimal; what is signed, so that neither part can be read as the other.
pub fn pae(payload_type: &str, payload: &[u8]) -> Vec<u8> {
    let mut encoded = format!("DSSEv1 {} {payload_type} {} ", payload_type.len(), payload.len()).into_bytes();
    encoded.extend_from_slice(payload);
    encoded
}

/// A key an attestation may be signed by, and the name its holder gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustedKey {
    /// Who holds it (`build-witness`, `alice-laptop`).
    pub name: String,
    /// The key.
    pub key: PublicKey,
}

/// An envelope opened: its statement, and the trusted key that signed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Opened {
    /// The statement, read only once its signature checked.
    pub statement: Statement,
    /// The key that signed it.
    pub signer: TrustedKey,
}

/// Why an envelope is no attestation of a trusted witness.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OpenError {
    /// The text ends before the JSON does.
    #[error("the note's line is truncated: its JSON ends early ({0})")]
    Truncated(String),
    /// The text is not JSON.
    #[error("the note's line is not JSON ({0})")]
    NotJson(String),
    /// JSON, but not a DSSE envelope.
    #[error("the note's line is not a DSSE envelope ({0})")]
    NotAnEnvelope(String),
    /// An envelope of something else.
    #[error("the envelope's payloadType is `{0}`, not `{PAYLOAD_TYPE}`")]
    PayloadType(String),
    /// The payload or a signature is not base64.
    #[error("the envelope's {0} is not base64")]
    NotBase64(&'static str),
    /// No signature is by a trusted key.
    #[error("signed by untrusted key {}: no key of the trusted file has that id", keyids.join(", "))]
    UntrustedKey {
        /// The ids of the keys that signed.
        keyids: Vec<String>,
    },
    /// A trusted key's signature does not match the payload.
    #[error(
        "bad signature: the signature by `{name}` (key {keyid}) does not match the payload, which was changed after it was signed"
    )]
    BadSignature {
        /// The trusted key's name.
        name: String,
        /// Its id.
        keyid: String,
    },
    /// Signed, and of judged's first predicate, which names no base.
    #[error(
        "signed by `{signer}`, but of judged's v1 predicate, which does not say where its review's changes began, so \
         it may cover changes no reviewer was shown: attest the commit again with a judged that writes v2"
    )]
    OlderPredicate {
        /// The trusted key's name.
        signer: String,
    },
    /// Signed, but no in-toto Statement v1 of judged's predicate.
    #[error("signed by `{signer}`, but the payload is not a judged review statement: {why}")]
    NotAStatement {
        /// The trusted key's name.
        signer: String,
        /// What is wrong with it.
        why: String,
    },
}

impl Envelope {
    /// `statement` signed by `key`.
    pub fn seal(statement: &Statement, key: &SigningKey) -> Envelope {
        let payload = serde_json::to_vec(statement).expect("a statement serializes");
        let signature = key.sign_message(&pae(PAYLOAD_TYPE, &payload));
        Envelope {
            payload: Base64::encode_string(&payload),
            payload_type: PAYLOAD_TYPE.to_owned(),
            signatures: vec![EnvelopeSignature {
                keyid: key.public_key().spki_id(),
                sig: Base64::encode_string(&signature),
            }],
        }
    }

    /// The statement the payload holds, read without checking a signature: for the
    /// signer reading back its own envelope (everyone else opens it, [`Envelope::open`]).
    /// None when the payload is not a judged review statement.
    pub fn statement(&self) -> Option<Statement> {
        read_statement(&Base64::decode_vec(&self.payload).ok()?).ok()
    }

    /// The envelope on one line, as a note holds it.
    pub fn line(&self) -> String {
        serde_json::to_string(self).expect("an envelope serializes")
    }

    /// Open one line of a note: its envelope's statement, once a signature by one of
    /// `trusted` checks over it. Nothing in the payload is read before that.
    pub fn open(line: &str, trusted: &[TrustedKey]) -> Result<Opened, OpenError> {
        let value: serde_json::Value = serde_json::from_str(line).map_err(|error| match error.classify() {
            serde_json::error::Category::Eof => OpenError::Truncated(error.to_string()),
            _ => OpenError::NotJson(error.to_string()),
        })?;
        let envelope: Envelope =
            serde_json::from_value(value).map_err(|error| OpenError::NotAnEnvelope(error.to_string()))?;
        if envelope.payload_type != PAYLOAD_TYPE {
            return Err(OpenError::PayloadType(envelope.payload_type));
        }
        let payload = Base64::decode_vec(&envelope.payload).map_err(|_| OpenError::NotBase64("payload"))?;
        let signed = pae(&envelope.payload_type, &payload);
        let mut failed = None;
        // A few signatures at most are checked: one per key that signs judged's notes, and
        // a note of thousands would cost a check that many verifications.
        for signature in envelope.signatures.iter().take(MAX_SIGNATURES) {
            let Some(trusted) = trusted.iter().find(|t| t.key.spki_id() == signature.keyid) else { continue };
            let bytes = Base64::decode_vec(&signature.sig).map_err(|_| OpenError::NotBase64("signature"))?;
            match <[u8; 64]>::try_from(bytes.as_slice()) {
                Ok(sig) if trusted.key.verifies(&signed, &sig) => {
                    let signer = trusted.name.clone();
                    let statement = read_statement(&payload).map_err(|why| match why {
                        NotRead::OlderPredicate => OpenError::OlderPredicate { signer },
                        NotRead::Other(why) => OpenError::NotAStatement { signer, why },
                    })?;
                    return Ok(Opened { statement, signer: trusted.clone() });
                }
                _ => {
                    failed.get_or_insert(OpenError::BadSignature {
                        name: trusted.name.clone(),
                        keyid: signature.keyid.clone(),
                    });
                }
            }
        }
        Err(failed.unwrap_or_else(|| OpenError::UntrustedKey {
            keyids: envelope.signatures.iter().map(|s| s.keyid.clone()).collect(),
        }))
    }
}

/// Why a payload holds no statement of judged's.
enum NotRead {
    /// One of the first predicate ([`PREDICATE_TYPE_V1`]).
    OlderPredicate,
    /// Anything else, said.
    Other(String),
}

impl From<serde_json::Error> for NotRead {
    fn from(error: serde_json::Error) -> NotRead {
        NotRead::Other(error.to_string())
    }
}

/// The statement a verified payload holds, or what keeps it from being one of judged's.
fn read_statement(payload: &[u8]) -> Result<Statement, NotRead> {
    #[derive(Deserialize)]
    struct Head {
        #[serde(rename = "_type")]
        statement_type: String,
        #[serde(rename = "predicateType")]
        predicate_type: String,
    }
    let head: Head = serde_json::from_slice(payload)?;
    if head.statement_type != STATEMENT_TYPE {
        return Err(NotRead::Other(format!("its _type is `{}`, not `{STATEMENT_TYPE}`", head.statement_type)));
    }
    if head.predicate_type == PREDICATE_TYPE_V1 {
        return Err(NotRead::OlderPredicate);
    }
    if head.predicate_type != PREDICATE_TYPE {
        let said = format!("its predicateType is `{}`, not `{PREDICATE_TYPE}`", head.predicate_type);
        return Err(NotRead::Other(said));
    }
    Ok(serde_json::from_slice(payload)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn predicate() -> ReviewPredicate {
        ReviewPredicate {
            reviewed_at: "2026-11-30T10:00:00Z".into(),
            attested_at: "2026-11-30T10:05:00Z".into(),
            witness_key_id: SigningKey::from_seed(&[7; 32]).public_key().spki_id(),
            reviewed_base: Some("fedcba9876543210fedcba9876543210fedcba98".into()),
            executor: Executor {
                host: Some(Host::CopilotCli),
                model: Some("claude-sonnet-4.6".into()),
                family: Some("anthropic".into()),
            },
            review: Review::Reviewer(ReviewerReview {
                evidence_id: crate::rules::EvidenceId::parse("cne_924eca850956e98735967f7721456b57").unwrap(),
                path: "rubber-duck".into(),
                model: "gpt-5.5".into(),
                family: "openai".into(),
                identity_source: "host-session-event".into(),
                assurance: IdentityAssurance::HostRecorded,
                verdict: Some("ready".into()),
                score: Some(8.0),
            }),
        }
    }

    fn trusted(seed: u8, name: &str) -> TrustedKey {
        TrustedKey { name: name.into(), key: SigningKey::from_seed(&[seed; 32]).public_key() }
    }

    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
    const TREE: &str = "89abcdef0123456789abcdef0123456789abcdef";

    /// The example of the DSSE protocol document (protocol.md, "Test Vectors").
    #[test]
    fn the_pre_authentication_encoding_is_dsse_v1() {
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
    }

    #[test]
    fn a_sealed_statement_opens_with_its_key_and_names_the_commit_and_tree() {
        let statement = Statement::of_commit(COMMIT, TREE, predicate());
        let line = Envelope::seal(&statement, &SigningKey::from_seed(&[7; 32])).line();
        assert!(!line.contains('\n'), "one line: {line}");
        let opened = Envelope::open(&line, &[trusted(8, "other"), trusted(7, "witness")]).unwrap();
        assert_eq!(opened.signer.name, "witness");
        assert_eq!(opened.statement, statement);
        assert_eq!(opened.statement.subject_digest(GIT_COMMIT), Some(COMMIT));
        assert_eq!(opened.statement.subject_digest(GIT_TREE), Some(TREE));
        assert_eq!(Envelope::seal(&statement, &SigningKey::from_seed(&[7; 32])).statement(), Some(statement.clone()));
        let json: serde_json::Value = serde_json::from_slice(
            &Base64::decode_vec(&Envelope::seal(&statement, &SigningKey::from_seed(&[7; 32])).payload).unwrap(),
        )
        .unwrap();
        assert_eq!(json["_type"], STATEMENT_TYPE);
        assert_eq!(json["predicate"]["review"]["kind"], "reviewer");
        assert_eq!(json["predicate"]["review"]["assurance"], "host-recorded");
        assert_eq!(json["predicate"]["executor"]["host"], "copilot-cli");
        assert_eq!(json["predicate"]["reviewedBase"], "fedcba9876543210fedcba9876543210fedcba98");
        assert_eq!(json["predicateType"], "https://judged.dev/attestation/review/v2");
    }

    #[test]
    fn an_untrusted_key_an_edited_payload_and_broken_lines_each_say_what_they_are() {
        let key = SigningKey::from_seed(&[7; 32]);
        let envelope = Envelope::seal(&Statement::of_commit(COMMIT, TREE, predicate()), &key);
        let untrusted = Envelope::open(&envelope.line(), &[trusted(8, "other")]).unwrap_err();
        assert_eq!(untrusted, OpenError::UntrustedKey { keyids: vec![key.public_key().spki_id()] });
        assert!(untrusted.to_string().starts_with("signed by untrusted key "), "{untrusted}");

        let mut edited = envelope.clone();
        let payload = String::from_utf8(Base64::decode_vec(&edited.payload).unwrap()).unwrap();
        edited.payload = Base64::encode_string(payload.replace("gpt-5.5", "gpt-5.6").as_bytes());
        let bad = Envelope::open(&edited.line(), &[trusted(7, "witness")]).unwrap_err();
        assert_eq!(bad, OpenError::BadSignature { name: "witness".into(), keyid: key.public_key().spki_id() });
        assert!(bad.to_string().starts_with("bad signature: "), "{bad}");

        let line = envelope.line();
        let truncated = Envelope::open(&line[..line.len() / 2], &[trusted(7, "w")]).unwrap_err();
        assert!(matches!(truncated, OpenError::Truncated(_)), "{truncated:?}");
        assert!(matches!(Envelope::open("not json", &[trusted(7, "w")]), Err(OpenError::NotJson(_))));
        assert!(matches!(Envelope::open("{\"a\": 1}", &[trusted(7, "w")]), Err(OpenError::NotAnEnvelope(_))));
        let mut other = envelope;
        other.payload_type = "text/plain".into();
        assert_eq!(Envelope::open(&other.line(), &[trusted(7, "w")]), Err(OpenError::PayloadType("text/plain".into())));
    }

    #[test]
    fn a_signed_payload_of_another_predicate_is_no_review_statement() {
        let key = SigningKey::from_seed(&[7; 32]);
        let payload = br#"{"_type":"https://in-toto.io/Statement/v1","subject":[],"predicateType":"https://slsa.dev/provenance/v1","predicate":{}}"#;
        let envelope = Envelope {
            payload: Base64::encode_string(payload),
            payload_type: PAYLOAD_TYPE.into(),
            signatures: vec![EnvelopeSignature {
                keyid: key.public_key().spki_id(),
                sig: Base64::encode_string(&key.sign_message(&pae(PAYLOAD_TYPE, payload))),
            }],
        };
        let error = Envelope::open(&envelope.line(), &[trusted(7, "witness")]).unwrap_err();
        assert!(error.to_string().contains("its predicateType is `https://slsa.dev/provenance/v1`"), "{error}");
    }

    /// An attestation of the first predicate named no base, so its pass may be of the
    /// last changes alone: it is read, and said to be that, not counted.
    #[test]
    fn a_signed_statement_of_the_first_predicate_is_named_and_not_read() {
        let key = SigningKey::from_seed(&[7; 32]);
        let mut statement = serde_json::to_value(Statement::of_commit(COMMIT, TREE, predicate())).unwrap();
        statement["predicateType"] = PREDICATE_TYPE_V1.into();
        statement["predicate"].as_object_mut().unwrap().remove("reviewedBase");
        let payload = serde_json::to_vec(&statement).unwrap();
        let envelope = Envelope {
            payload: Base64::encode_string(&payload),
            payload_type: PAYLOAD_TYPE.into(),
            signatures: vec![EnvelopeSignature {
                keyid: key.public_key().spki_id(),
                sig: Base64::encode_string(&key.sign_message(&pae(PAYLOAD_TYPE, &payload))),
            }],
        };
        let error = Envelope::open(&envelope.line(), &[trusted(7, "witness")]).unwrap_err();
        assert_eq!(error, OpenError::OlderPredicate { signer: "witness".into() });
        assert!(
            error.to_string().starts_with(
                "signed by `witness`, but of judged's v1 predicate, which does not say where its review's changes began"
            ),
            "{error}"
        );
        assert_eq!(envelope.statement(), None);
    }
}
