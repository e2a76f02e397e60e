//! The review-tracing record's provenance (`docs/spec/evidence-protocol.md` §5.2): who
//! reviewed what, and how that is known. Model identities and `independence_verified` come
//! only from validated evidence; anything else is marked caller-declared or requested, and
//! a host-recorded backend without evidence is refused (unless the attempt failed).

use crate::family::{self, Table};
use crate::rules::{Artifact, EvidenceError, FamilyRelation, IdentityAssurance};
use serde::{Deserialize, Serialize};

/// Backends whose reviewer identity the host records; a successful trace of one needs
/// evidence (`copilot-native`: the rubber-duck; `codex-exec` and `copilot-prompt`: Claude
/// Code's Codex or Copilot CLI run).
const HOST_RECORDED: &[&str] = &["copilot-native", "codex-exec", "copilot-prompt"];
/// Reported models that say nothing about who answered.
const NO_MODEL: &[&str] = &["unknown", "unavailable", "none", "null"];

/// Where a model name in a trace comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// The host's own session log, through validated evidence.
    HostSessionEvent,
    /// The caller's word.
    CallerDeclared,
    /// What the backend reported.
    BackendReported,
    /// What was asked for.
    Requested,
    /// Nothing to say.
    Unavailable,
}

/// `independence_verified`: `true`, `false`, or the string `"unverified"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Independence {
    /// A revalidated host-recorded cross-family pair.
    Verified,
    /// A known same-family pair.
    SameFamily,
    /// Anything else, different but caller-declared pairs included.
    Unverified,
}

impl Serialize for Independence {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Independence::Verified => serializer.serialize_bool(true),
            Independence::SameFamily => serializer.serialize_bool(false),
            Independence::Unverified => serializer.serialize_str("unverified"),
        }
    }
}

impl<'de> Deserialize<'de> for Independence {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::Bool(true) => Ok(Independence::Verified),
            serde_json::Value::Bool(false) => Ok(Independence::SameFamily),
            serde_json::Value::String(s) if s == "unverified" => Ok(Independence::Unverified),
            other => Err(serde::de::Error::custom(format!("independence_verified cannot be {other}"))),
        }
    }
}

/// What validated evidence says about a review.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvidenceFacts {
    /// `evidence_id`.
    pub evidence_id: String,
    /// The executor's model as the host recorded it.
    pub executor_model: String,
    /// The reviewer's model as the host recorded it.
    pub reviewer_model: String,
    /// Where the reviewer's response was written.
    pub response_path: String,
    /// The evidence file as given (absolute, symlinks not resolved).
    pub path: String,
}

impl EvidenceFacts {
    /// The facts of `evidence` (validated by the caller), written at `path`. Evidence of a
    /// review only its caller vouches for names no host-recorded model, so it is refused.
    pub fn of(ev: &Artifact, path: String) -> Result<EvidenceFacts, EvidenceError> {
        if ev.identity_assurance() != IdentityAssurance::HostRecorded {
            return Err(EvidenceError::evidence(
                "--native-evidence must be evidence of a host-recorded review; trace a caller-declared review \
                 without it, its models given as --executor-model and --reported-reviewer-model",
            ));
        }
        Ok(EvidenceFacts {
            evidence_id: ev.required("evidence_id")?.to_owned(),
            executor_model: ev.required("executor_model")?.to_owned(),
            reviewer_model: ev.required("reviewer_model")?.to_owned(),
            response_path: ev.required("response_path")?.to_owned(),
            path,
        })
    }
}

/// What the caller says about a review call (the `save_trace.sh` flags; empty when not
/// given).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TraceInput {
    /// `--backend`, raw.
    pub backend: String,
    /// `--status` (`ok` by default).
    pub status: String,
    /// `--model`.
    pub model: String,
    /// `--executor-model`.
    pub executor_model: String,
    /// `--executor-family` (a hint only).
    pub executor_family: String,
    /// `--reviewer-family` (a hint only).
    pub reviewer_family: String,
    /// `--requested-reviewer-model`.
    pub requested_reviewer_model: String,
    /// `--reported-reviewer-model`.
    pub reported_reviewer_model: String,
    /// `--independence-verified` (a hint only).
    pub independence_verified: String,
}

/// The derived provenance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The model the record names (the host's reviewer with evidence).
    pub model: String,
    /// The executor's model, if known.
    pub executor_model: Option<String>,
    /// Where it comes from.
    pub executor_model_source: Source,
    /// Its family (3-family rule), if known.
    pub executor_family: Option<String>,
    /// The effective reviewer model, if any.
    pub reviewer_model: Option<String>,
    /// Where it comes from.
    pub reviewer_model_source: Source,
    /// Its family, if known.
    pub reviewer_family: Option<String>,
    /// The reported reviewer model (the host's with evidence).
    pub reported_reviewer_model: Option<String>,
    /// Whether the two families are the same.
    pub family_relation: FamilyRelation,
    /// `true` only for a revalidated host-recorded cross-family pair.
    pub independence_verified: Independence,
    /// The evidence's id, with evidence.
    pub native_evidence_id: Option<String>,
    /// The evidence file, with evidence.
    pub native_evidence_path: Option<String>,
    /// The response comes from the evidence's `response_path`, not the caller.
    pub response_path: Option<String>,
    /// `warning: ignoring …` lines for hints that disagree (never stored).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Why a trace is refused (exit 1, the reference's messages).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// A host-recorded backend traced as successful without evidence.
    #[error("successful --backend {0} traces require --native-evidence")]
    EvidenceRequired(String),
    /// Evidence given with a backend whose reviewer no host records.
    #[error("--native-evidence is valid only with --backend copilot-native (or codex-exec, copilot-prompt)")]
    EvidenceWithOtherBackend,
    /// A caller value contradicts the evidence.
    #[error("--{flag} {given} disagrees with the host-recorded {host}")]
    Disagrees {
        /// The flag.
        flag: &'static str,
        /// The caller's value.
        given: String,
        /// The evidence's.
        host: String,
    },
}

fn non_empty(value: &str) -> Option<String> {
    (!value.trim().is_empty()).then(|| value.to_owned())
}

/// Derive a trace's provenance from the caller's input and, when given, validated
/// evidence (§5.2).
pub fn provenance(input: &TraceInput, evidence: Option<&EvidenceFacts>) -> Result<Provenance, TraceError> {
    let host_recorded = HOST_RECORDED.iter().any(|b| b.eq_ignore_ascii_case(input.backend.trim()));
    let (mut model, mut executor_model, mut reported) =
        (input.model.clone(), non_empty(&input.executor_model), non_empty(&input.reported_reviewer_model));
    let (executor_source, reviewer_host) = match (host_recorded, evidence) {
        (false, Some(_)) => return Err(TraceError::EvidenceWithOtherBackend),
        (true, None) if !input.status.eq_ignore_ascii_case("error") => {
            return Err(TraceError::EvidenceRequired(input.backend.clone()));
        }
        (true, Some(facts)) => {
            let disagree = |flag: &'static str, given: &Option<String>, host: &str| match given {
                Some(given) if given.trim() != host.trim() => {
                    Err(TraceError::Disagrees { flag, given: given.clone(), host: host.to_owned() })
                }
                _ => Ok(()),
            };
            disagree("executor-model", &executor_model, &facts.executor_model)?;
            disagree("reported-reviewer-model", &reported, &facts.reviewer_model)?;
            disagree("model", &non_empty(&model), &facts.reviewer_model)?;
            executor_model = Some(facts.executor_model.clone());
            reported = Some(facts.reviewer_model.clone());
            model = facts.reviewer_model.clone();
            (Source::HostSessionEvent, true)
        }
        _ if executor_model.is_some() => (Source::CallerDeclared, false),
        _ => (Source::Unavailable, false),
    };
    let real_report = reported.clone().filter(|r| !NO_MODEL.iter().any(|n| n.eq_ignore_ascii_case(r.trim())));
    let (reviewer_model, reviewer_source) = match real_report {
        Some(model) if reviewer_host => (Some(model), Source::HostSessionEvent),
        Some(model) => (Some(model), Source::BackendReported),
        None => match non_empty(&input.requested_reviewer_model).or_else(|| non_empty(&model)) {
            Some(model) => (Some(model), Source::Requested),
            None => (None, Source::Unavailable),
        },
    };
    let executor_family = executor_model.as_deref().and_then(|m| family::family(m, Table::Evidence));
    let reviewer_family = reviewer_model.as_deref().and_then(|m| family::family(m, Table::Evidence));
    let (relation, independence) = match (executor_family, reviewer_family) {
        (Some(e), Some(r)) if e == r => (FamilyRelation::Same, Independence::SameFamily),
        (Some(_), Some(_))
            if host_recorded
                && executor_source == Source::HostSessionEvent
                && reviewer_source == Source::HostSessionEvent =>
        {
            (FamilyRelation::Different, Independence::Verified)
        }
        (Some(_), Some(_)) => (FamilyRelation::Different, Independence::Unverified),
        _ => (FamilyRelation::Unknown, Independence::Unverified),
    };
    let warnings = ignored_hints(input, executor_family, reviewer_family, independence);
    Ok(Provenance {
        model,
        executor_model,
        executor_model_source: executor_source,
        executor_family: executor_family.map(str::to_owned),
        reviewer_model,
        reviewer_model_source: reviewer_source,
        reviewer_family: reviewer_family.map(str::to_owned),
        reported_reviewer_model: reported,
        family_relation: relation,
        independence_verified: independence,
        native_evidence_id: evidence.map(|f| f.evidence_id.clone()),
        native_evidence_path: evidence.map(|f| f.path.clone()),
        response_path: evidence.map(|f| f.response_path.clone()),
        warnings,
    })
}

/// A warning for each hint of the caller (`--executor-family`, `--reviewer-family`,
/// `--independence-verified`) that the derived provenance contradicts: the hint is ignored.
fn ignored_hints(
    input: &TraceInput,
    executor_family: Option<&str>,
    reviewer_family: Option<&str>,
    independence: Independence,
) -> Vec<String> {
    let mut warnings = Vec::new();
    for (flag, hint, derived) in [
        ("executor-family", &input.executor_family, executor_family),
        ("reviewer-family", &input.reviewer_family, reviewer_family),
    ] {
        if !hint.trim().is_empty() && Some(hint.trim()) != derived {
            warnings.push(format!("warning: ignoring --{flag} {hint}: derived {}", derived.unwrap_or("unknown")));
        }
    }
    let declared = input.independence_verified.trim();
    let stored = match independence {
        Independence::Verified => "true",
        Independence::SameFamily => "false",
        Independence::Unverified => "unverified",
    };
    if !declared.is_empty() && !declared.eq_ignore_ascii_case(stored) {
        warnings.push(format!("warning: ignoring --independence-verified {declared}: derived {stored}"));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(backend: &str, status: &str) -> TraceInput {
        TraceInput { backend: backend.into(), status: status.into(), ..TraceInput::default() }
    }

    fn facts() -> EvidenceFacts {
        EvidenceFacts {
            evidence_id: "cne_1".into(),
            executor_model: "claude-sonnet-4.6".into(),
            reviewer_model: "gpt-5.4".into(),
            response_path: "/p/r1.response.md".into(),
            path: "/p/r1.evidence.json".into(),
        }
    }

    #[test]
    fn a_native_trace_takes_every_identity_from_the_evidence_and_is_verified() {
        let traced = provenance(&input("Copilot-Native", "ok"), Some(&facts())).unwrap();
        assert_eq!(traced.executor_model.as_deref(), Some("claude-sonnet-4.6"));
        assert_eq!((traced.reviewer_model.as_deref(), traced.model.as_str()), (Some("gpt-5.4"), "gpt-5.4"));
        assert_eq!(
            (traced.executor_model_source, traced.reviewer_model_source),
            (Source::HostSessionEvent, Source::HostSessionEvent)
        );
        assert_eq!(
            (traced.family_relation, traced.independence_verified),
            (FamilyRelation::Different, Independence::Verified)
        );
        assert_eq!(traced.response_path.as_deref(), Some("/p/r1.response.md"));
        assert_eq!(serde_json::to_value(traced.independence_verified).unwrap(), serde_json::json!(true));
    }

    #[test]
    fn a_successful_native_trace_without_evidence_is_refused_and_a_failed_one_claims_nothing() {
        let refused = provenance(&input("copilot-native", "ok"), None).unwrap_err();
        assert_eq!(refused.to_string(), "successful --backend copilot-native traces require --native-evidence");
        let failed = TraceInput { executor_model: "claude-sonnet-4.6".into(), ..input("copilot-native", "error") };
        let traced = provenance(&failed, None).unwrap();
        assert_eq!(traced.executor_model_source, Source::CallerDeclared);
        assert_eq!(traced.native_evidence_id, None);
        assert_eq!(traced.independence_verified, Independence::Unverified);
    }

    #[test]
    fn evidence_belongs_only_to_a_host_recorded_backend_and_disagreeing_callers_are_refused() {
        assert_eq!(provenance(&input("codex", "ok"), Some(&facts())), Err(TraceError::EvidenceWithOtherBackend));
        let wrong = TraceInput { reported_reviewer_model: "gpt-5.5".into(), ..input("copilot-native", "ok") };
        assert!(matches!(
            provenance(&wrong, Some(&facts())),
            Err(TraceError::Disagrees { flag: "reported-reviewer-model", .. })
        ));
        let wrong = TraceInput { model: "gemini-3-pro".into(), ..input("codex-exec", "ok") };
        assert!(matches!(provenance(&wrong, Some(&facts())), Err(TraceError::Disagrees { flag: "model", .. })));
    }

    #[test]
    fn a_declared_cross_family_pair_is_different_but_unverified_and_hints_are_only_warnings() {
        let declared = TraceInput {
            executor_model: "claude-sonnet-4.6".into(),
            reported_reviewer_model: "gpt-5.4".into(),
            reviewer_family: "google".into(),
            independence_verified: "true".into(),
            ..input("codex", "ok")
        };
        let traced = provenance(&declared, None).unwrap();
        assert_eq!(
            (traced.executor_model_source, traced.reviewer_model_source),
            (Source::CallerDeclared, Source::BackendReported)
        );
        assert_eq!(
            (traced.family_relation, traced.independence_verified),
            (FamilyRelation::Different, Independence::Unverified)
        );
        assert_eq!(serde_json::to_value(traced.independence_verified).unwrap(), serde_json::json!("unverified"));
        assert_eq!(traced.warnings.len(), 2, "{:?}", traced.warnings);
        let same = TraceInput {
            executor_model: "gpt-5.5".into(),
            reported_reviewer_model: "gpt-5.4".into(),
            ..input("codex", "ok")
        };
        assert_eq!(provenance(&same, None).unwrap().independence_verified, Independence::SameFamily);
    }

    #[test]
    fn a_reported_model_that_says_nothing_falls_back_to_the_request() {
        let vague = TraceInput {
            reported_reviewer_model: "Unknown".into(),
            requested_reviewer_model: "gpt-5.4".into(),
            ..input("codex", "ok")
        };
        let traced = provenance(&vague, None).unwrap();
        assert_eq!(
            (traced.reviewer_model.as_deref(), traced.reviewer_model_source),
            (Some("gpt-5.4"), Source::Requested)
        );
        assert_eq!(traced.executor_model_source, Source::Unavailable);
        assert_eq!(traced.family_relation, FamilyRelation::Unknown);
    }
}
