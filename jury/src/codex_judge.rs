//! The insistir codex-judge verdict (docs/spec/jury.md §8) as a second verdict format.
//!
//! The judge's own `verdict` string is advisory; what decides is the dual-threshold band
//! computed from `overall_score` and the remediation severities. The band maps onto the
//! panel's verdicts (approve → pass, revise → fail, middle → uncertain), so a middle-band
//! answer escalates to the tiebreaker exactly as the SKILL's "lead judgment" row asks for a
//! second opinion. [`reconcile`] is docs/spec/jury.md §8.4's reviewer/judge matrix for callers that also hold
//! a reviewer's verdict.

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

/// The four criteria, in the order the schema lists them.
pub const CRITERIA: [&str; 4] = ["correctness", "security", "maintainability", "spec_compliance"];

/// The judge's own verdict string. Advisory only: the [`Band`] decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JudgeVerdict {
    /// `PASS`.
    Pass,
    /// `NEEDS_REVISION`.
    NeedsRevision,
    /// `REJECT`.
    Reject,
}

/// How bad a remediation item is; a critical one forces the auto-revise band, a major one
/// keeps the answer out of auto-approve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Must be fixed before anything else: revise, whatever the score.
    Critical,
    /// Must be fixed; the verdict needs a second opinion.
    Major,
    /// Worth fixing; does not affect the band.
    Minor,
}

/// One criterion's score (1–5), the evidence cited and the violations listed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Criterion {
    /// One of [`CRITERIA`].
    pub name: &'static str,
    /// 1 (worst) to 5.
    pub score: u8,
    /// Where the judge looked (`file:line`), as it wrote it; may be empty.
    pub evidence: String,
    /// What the judge found wrong under this criterion.
    pub violations: Vec<String>,
}

/// One thing the judge asks to be fixed; shown as a flag (see its `Display`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Remediation {
    /// How bad it is, which moves the band.
    pub severity: Severity,
    /// What is wrong.
    pub description: String,
    /// How to fix it.
    pub suggestion: String,
    /// Where, when the judge named a file.
    pub file: Option<String>,
    /// The line in `file`, when named.
    pub line: Option<u64>,
}

impl fmt::Display for Remediation {
    /// The flag text: `major: off by one (a.rs:7)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Critical => "critical",
            Severity::Major => "major",
            Severity::Minor => "minor",
        };
        write!(f, "{severity}: {}", self.description)?;
        match (&self.file, self.line) {
            (Some(file), Some(line)) => write!(f, " ({file}:{line})"),
            (Some(file), None) => write!(f, " ({file})"),
            _ => Ok(()),
        }
    }
}

/// The dual-threshold gating band (codex-judge SKILL.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    /// overall ≥ 4, no critical and no major violation.
    AutoApprove,
    /// overall ≤ 2, or any critical violation.
    AutoRevise,
    /// Everything else: score 3, or major-only violations.
    Middle,
}

/// A whole codex-judge answer, kept in the packet beside the juror's panel verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CodexJudgeVerdict {
    /// What the judge said; advisory.
    pub verdict: JudgeVerdict,
    /// Every one of [`CRITERIA`], in that order.
    pub criteria: Vec<Criterion>,
    /// 1 to 5; with the severities, it decides the band.
    pub overall_score: u8,
    /// The judge's reasoning, as written.
    pub rationale: String,
    /// What to fix, in the judge's order.
    pub remediation: Vec<Remediation>,
    /// The band computed from score and severities: what decides.
    pub band: Band,
}

/// Why an answer is not a codex-judge verdict; the juror is then down with this reason.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CodexJudgeError {
    /// The `verdict` string is none of the three.
    #[error("codex-judge: verdict {0} is not PASS, NEEDS_REVISION or REJECT")]
    Verdict(String),
    /// A score (named by its path) is missing or outside 1..=5.
    #[error("codex-judge: `{0}` must be an integer from 1 to 5")]
    Score(String),
    /// A criterion of [`CRITERIA`] is absent.
    #[error("codex-judge: criteria.{0} is missing")]
    MissingCriterion(&'static str),
    /// The remediation item at this index has an unknown severity.
    #[error("codex-judge: remediation[{0}].severity must be critical, major or minor")]
    Severity(usize),
    /// A field (named by its path) is not of the schema's type.
    #[error("codex-judge: `{0}` has the wrong type")]
    Shape(String),
}

/// Read a codex-judge verdict from the object the extractor found.
pub fn from_object(object: &Map<String, Value>) -> Result<CodexJudgeVerdict, CodexJudgeError> {
    let verdict = match object.get("verdict").and_then(Value::as_str).map(|s| s.trim().to_uppercase()).as_deref() {
        Some("PASS") => JudgeVerdict::Pass,
        Some("NEEDS_REVISION") => JudgeVerdict::NeedsRevision,
        Some("REJECT") => JudgeVerdict::Reject,
        _ => return Err(CodexJudgeError::Verdict(object.get("verdict").map_or("null".into(), Value::to_string))),
    };
    let criteria_object = object.get("criteria").and_then(Value::as_object);
    let criteria = CRITERIA
        .iter()
        .map(|&name| {
            let c = criteria_object.and_then(|o| o.get(name)).ok_or(CodexJudgeError::MissingCriterion(name))?;
            Ok(Criterion {
                name,
                score: score(c.get("score"), &format!("criteria.{name}.score"))?,
                evidence: text(c.get("evidence"), &format!("criteria.{name}.evidence"))?,
                violations: c
                    .get("violations")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned)).collect())
                    .unwrap_or_default(),
            })
        })
        .collect::<Result<Vec<_>, CodexJudgeError>>()?;
    let overall_score = score(object.get("overall_score"), "overall_score")?;
    let remediation = match object.get("remediation") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().enumerate().map(remediation).collect::<Result<_, _>>()?,
        Some(_) => return Err(CodexJudgeError::Shape("remediation".into())),
    };
    let band = band(overall_score, &remediation);
    Ok(CodexJudgeVerdict {
        verdict,
        criteria,
        overall_score,
        rationale: text(object.get("rationale"), "rationale")?,
        remediation,
        band,
    })
}

fn band(overall: u8, remediation: &[Remediation]) -> Band {
    let has = |s: Severity| remediation.iter().any(|r| r.severity == s);
    if overall <= 2 || has(Severity::Critical) {
        Band::AutoRevise
    } else if overall >= 4 && !has(Severity::Major) {
        Band::AutoApprove
    } else {
        Band::Middle
    }
}

fn score(value: Option<&Value>, field: &str) -> Result<u8, CodexJudgeError> {
    value
        .and_then(Value::as_u64)
        .filter(|s| (1..=5).contains(s))
        .map(|s| s as u8)
        .ok_or_else(|| CodexJudgeError::Score(field.to_owned()))
}

fn text(value: Option<&Value>, field: &str) -> Result<String, CodexJudgeError> {
    match value {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(_) => Err(CodexJudgeError::Shape(field.to_owned())),
    }
}

fn remediation((i, item): (usize, &Value)) -> Result<Remediation, CodexJudgeError> {
    let severity = match item.get("severity").and_then(Value::as_str).map(|s| s.trim().to_lowercase()).as_deref() {
        Some("critical") => Severity::Critical,
        Some("major") => Severity::Major,
        Some("minor") => Severity::Minor,
        _ => return Err(CodexJudgeError::Severity(i)),
    };
    Ok(Remediation {
        severity,
        description: text(item.get("description"), &format!("remediation[{i}].description"))?,
        suggestion: text(item.get("suggestion"), &format!("remediation[{i}].suggestion"))?,
        file: item.get("file").and_then(Value::as_str).filter(|f| !f.is_empty()).map(str::to_owned),
        line: item.get("line").and_then(Value::as_u64),
    })
}

/// A same-family reviewer's verdict that the judge is layered on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewerVerdict {
    /// The reviewer approved the work.
    Approved,
    /// The reviewer asked for changes.
    Revise,
}

/// The outcome of §8.4's matrix and which judge items go where.
#[derive(Clone, Debug, PartialEq)]
pub enum Reconciled<'a> {
    /// Approved; the judge's items become follow-ups in the summary.
    Approved {
        /// Items to list as follow-ups, not blockers.
        follow_ups: &'a [Remediation],
    },
    /// Revise; the judge's items are findings for the fixer, after the reviewer's own
    /// findings when the reviewer also asked for a revision.
    Revise {
        /// Items the fixer must address.
        fixes: &'a [Remediation],
    },
}

/// docs/spec/jury.md §8.4, "the single source of truth": a REVISE from the reviewer always
/// stands; an APPROVED stands unless the judge lands in the auto-revise band.
pub fn reconcile(reviewer: ReviewerVerdict, judge: &CodexJudgeVerdict) -> Reconciled<'_> {
    let items = judge.remediation.as_slice();
    match (reviewer, judge.band) {
        (ReviewerVerdict::Approved, Band::AutoApprove | Band::Middle) => Reconciled::Approved { follow_ups: items },
        (ReviewerVerdict::Approved, Band::AutoRevise) | (ReviewerVerdict::Revise, _) => {
            Reconciled::Revise { fixes: items }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn judge(overall: u64, severities: &[&str]) -> Result<CodexJudgeVerdict, CodexJudgeError> {
        let criterion = json!({"score": 3, "evidence": "x.rs:1", "violations": []});
        let remediation: Vec<_> =
            severities.iter().map(|s| json!({"severity": s, "description": "d", "suggestion": "s"})).collect();
        let value = json!({
            "verdict": "PASS", "confidence": 0.9, "overall_score": overall, "rationale": "r",
            "criteria": {"correctness": criterion, "security": criterion,
                         "maintainability": criterion, "spec_compliance": criterion},
            "remediation": remediation,
        });
        from_object(value.as_object().expect("object"))
    }

    #[test]
    fn dual_threshold_bands() {
        let band = |overall, sev: &[&str]| judge(overall, sev).expect("valid").band;
        assert_eq!(band(5, &[]), Band::AutoApprove);
        assert_eq!(band(4, &["minor"]), Band::AutoApprove);
        assert_eq!(band(4, &["major"]), Band::Middle);
        assert_eq!(band(3, &[]), Band::Middle);
        assert_eq!(band(2, &[]), Band::AutoRevise);
        assert_eq!(band(1, &[]), Band::AutoRevise);
        assert_eq!(band(5, &["critical"]), Band::AutoRevise);
    }

    #[test]
    fn the_reviewer_judge_matrix_of_section_4_4() {
        let approve = judge(5, &["minor"]).expect("valid");
        let middle = judge(3, &["minor"]).expect("valid");
        let revise = judge(2, &["major"]).expect("valid");
        let approved = ReviewerVerdict::Approved;
        assert_eq!(reconcile(approved, &approve), Reconciled::Approved { follow_ups: &approve.remediation });
        assert_eq!(reconcile(approved, &middle), Reconciled::Approved { follow_ups: &middle.remediation });
        assert_eq!(reconcile(approved, &revise), Reconciled::Revise { fixes: &revise.remediation });
        for j in [&approve, &middle, &revise] {
            assert_eq!(reconcile(ReviewerVerdict::Revise, j), Reconciled::Revise { fixes: &j.remediation });
        }
    }

    #[test]
    fn malformed_verdicts_name_the_field() {
        assert_eq!(judge(0, &[]), Err(CodexJudgeError::Score("overall_score".into())));
        assert_eq!(judge(6, &[]), Err(CodexJudgeError::Score("overall_score".into())));
        assert_eq!(judge(4, &["blocker"]), Err(CodexJudgeError::Severity(0)));
        let missing = json!({"verdict": "REJECT", "overall_score": 1, "criteria": {}});
        assert_eq!(
            from_object(missing.as_object().expect("object")),
            Err(CodexJudgeError::MissingCriterion("correctness"))
        );
        let bad = json!({"verdict": "MAYBE"});
        assert_eq!(from_object(bad.as_object().expect("object")), Err(CodexJudgeError::Verdict("\"MAYBE\"".into())));
    }
}
