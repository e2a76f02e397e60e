//! A juror's answer: the panel verdict of docs/spec/jury.md §2.7 or the codex-judge verdict of §8.
//!
//! Both formats end as the same [`Answer`] (pass / fail / uncertain, a 0–100 confidence,
//! flags), so the cascade treats every juror alike. Fixes against the reference: the
//! object is found by [`crate::extract`]; a confidence given on the 0–1 scale is scaled,
//! not floored to 0 (which silently forced escalation, §9.5); flags that are not strings
//! keep their JSON text instead of `[object Object]`; an unrecognised verdict says so.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::codex_judge::{self, Band, CodexJudgeError, CodexJudgeVerdict};
use crate::extract::{self, ExtractError};

/// Which schema a rubric asks jurors to answer in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictFormat {
    /// `{"verdict":"pass"|"fail"|"uncertain","confidence":0-100,"flags":[…]}`.
    Panel,
    /// insistir's PASS / NEEDS_REVISION / REJECT with four criteria and remediation.
    CodexJudge,
}

impl VerdictFormat {
    /// The closing instruction of the prompt.
    pub fn instruction(self) -> &'static str {
        match self {
            VerdictFormat::Panel => {
                "Answer with exactly one JSON object on one line, no code fences, no prose: \
                 {\"verdict\":\"pass\"|\"fail\"|\"uncertain\",\"confidence\":0-100,\"flags\":[\"...\"]}"
            }
            VerdictFormat::CodexJudge => {
                "Answer with exactly one JSON object, no code fences, no prose: \
                 {\"verdict\":\"PASS\"|\"NEEDS_REVISION\"|\"REJECT\",\"confidence\":0.0-1.0,\
                 \"criteria\":{\"correctness\":{\"score\":1-5,\"evidence\":\"file:line ...\",\"violations\":[]},\
                 \"security\":{...},\"maintainability\":{...},\"spec_compliance\":{...}},\
                 \"overall_score\":1-5,\"rationale\":\"2-3 sentences\",\
                 \"remediation\":[{\"severity\":\"critical\"|\"major\"|\"minor\",\"description\":\"...\",\
                 \"suggestion\":\"...\",\"file\":\"...\",\"line\":1}]}"
            }
        }
    }
}

/// A real verdict: the three a cascade can aggregate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The artifact passes the rubric.
    Pass,
    /// It does not.
    Fail,
    /// The juror cannot tell: never agrees, always escalates.
    Uncertain,
}

impl From<Band> for Verdict {
    /// The panel verdict a codex-judge band stands for, so both formats aggregate alike.
    fn from(band: Band) -> Verdict {
        match band {
            Band::AutoApprove => Verdict::Pass,
            Band::AutoRevise => Verdict::Fail,
            Band::Middle => Verdict::Uncertain,
        }
    }
}

/// What a juror answered, in either format.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The verdict, mapped from the codex-judge band when that was the format.
    pub verdict: Verdict,
    /// 0..=100 (a 0–1 confidence is scaled, not floored).
    pub confidence: u8,
    /// Remarks as strings (a non-string flag keeps its JSON text).
    pub flags: Vec<String>,
    /// The `model` key of the answer, which a `command` juror uses to say who answered.
    pub model: Option<String>,
    /// The full codex-judge verdict when the rubric asked for that format.
    pub judge: Option<CodexJudgeVerdict>,
}

/// Why an answer could not be read; only [`AnswerError::NotJson`] is worth asking again.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// No answer object in the text.
    #[error(transparent)]
    NotJson(#[from] ExtractError),
    /// A panel answer whose `verdict` is none of the three (as given).
    #[error("unrecognised verdict {0} (expected pass, fail or uncertain)")]
    UnknownVerdict(Value),
    /// A codex-judge answer that breaks its schema.
    #[error(transparent)]
    CodexJudge(#[from] CodexJudgeError),
}

impl AnswerError {
    /// Whether asking again may help: the answer held no usable JSON at all.
    pub fn is_not_json(&self) -> bool {
        matches!(self, AnswerError::NotJson(_))
    }
}

/// Parse a juror's answer text in `format`.
pub fn parse(format: VerdictFormat, text: &str) -> Result<Answer, AnswerError> {
    let object = extract::object_with_key(text, "verdict")?;
    let model = object.get("model").and_then(Value::as_str).map(str::trim).filter(|m| !m.is_empty()).map(str::to_owned);
    match format {
        VerdictFormat::Panel => {
            let verdict = panel_verdict(&object)?;
            let confidence = object.get("confidence").map_or(0, confidence);
            Ok(Answer { verdict, confidence, flags: flags(object.get("flags")), model, judge: None })
        }
        VerdictFormat::CodexJudge => {
            let judge = codex_judge::from_object(&object)?;
            Ok(Answer {
                verdict: judge.band.into(),
                confidence: object.get("confidence").map_or(0, confidence),
                flags: judge.remediation.iter().map(ToString::to_string).collect(),
                model,
                judge: Some(judge),
            })
        }
    }
}

fn panel_verdict(object: &Map<String, Value>) -> Result<Verdict, AnswerError> {
    let raw = object.get("verdict").unwrap_or(&Value::Null);
    match raw.as_str().map(|s| s.trim().to_lowercase()).as_deref() {
        Some("pass") => Ok(Verdict::Pass),
        Some("fail") => Ok(Verdict::Fail),
        Some("uncertain") => Ok(Verdict::Uncertain),
        _ => Err(AnswerError::UnknownVerdict(raw.clone())),
    }
}

/// A 0–100 confidence from whatever the model wrote.
///
/// Integers and numbers above 1 are percentages (floored, clamped). A fractional number in
/// [0, 1] (`0.95`, `1.0`) is the 0–1 scale and is scaled. Strings are read the same way
/// (`"85%"`, `"0.9"`); anything else is 0.
pub fn confidence(value: &Value) -> u8 {
    match value {
        Value::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.clamp(0, 100) as u8,
            (None, Some(f)) => scale(f, false),
            (None, None) => 0,
        },
        Value::String(s) => {
            let s = s.trim();
            let percent = s.ends_with('%');
            let number = leading_number(s.trim_end_matches('%').trim_end());
            match number.parse::<i64>() {
                Ok(i) => i.clamp(0, 100) as u8,
                Err(_) => number.parse::<f64>().map_or(0, |f| scale(f, percent)),
            }
        }
        _ => 0,
    }
}

fn scale(f: f64, percent: bool) -> u8 {
    if !f.is_finite() {
        0
    } else if !percent && (0.0..=1.0).contains(&f) {
        (f * 100.0).round() as u8
    } else {
        f.floor().clamp(0.0, 100.0) as u8
    }
}

/// `[+-]digits[.digits]` at the start of `s`, like JavaScript's parseFloat prefix.
fn leading_number(s: &str) -> &str {
    let bytes = s.as_bytes();
    let mut end = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let mut dot = false;
    while let Some(&b) = bytes.get(end) {
        match b {
            b'0'..=b'9' => {}
            b'.' if !dot => dot = true,
            _ => break,
        }
        end += 1;
    }
    &s[..end]
}

fn flags(value: Option<&Value>) -> Vec<String> {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match value {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.iter().map(text).collect(),
        Some(other) => vec![text(other)],
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn panel(text: &str) -> Answer {
        parse(VerdictFormat::Panel, text).expect("parses")
    }

    #[test]
    fn verdicts_are_trimmed_and_case_blind_and_unknown_ones_say_so() {
        assert_eq!(panel(r#"{"verdict":" PASS ","confidence":90}"#).verdict, Verdict::Pass);
        assert_eq!(panel(r#"{"verdict":"Fail"}"#).verdict, Verdict::Fail);
        let err = parse(VerdictFormat::Panel, r#"{"verdict":"maybe"}"#).expect_err("unknown");
        assert_eq!(err.to_string(), "unrecognised verdict \"maybe\" (expected pass, fail or uncertain)");
        assert!(!err.is_not_json());
        let err = parse(VerdictFormat::Panel, r#"{"verdict":null}"#).expect_err("null");
        assert!(err.to_string().starts_with("unrecognised verdict null"));
        assert!(parse(VerdictFormat::Panel, "I think it passes.").expect_err("prose").is_not_json());
    }

    #[test]
    fn confidence_scales() {
        let cases = [
            (json!(85), 85),
            (json!(85.7), 85),
            (json!(0.95), 95),
            (json!(0.29), 29),
            (json!(1.0), 100),
            (json!(1), 1),
            (json!(0), 0),
            (json!(150), 100),
            (json!(-3), 0),
            (json!("85%"), 85),
            (json!("0.9"), 90),
            (json!(" 72 points"), 72),
            (json!("0.5%"), 0),
            (json!("abc"), 0),
            (json!(true), 0),
            (json!(null), 0),
        ];
        for (value, want) in cases {
            assert_eq!(confidence(&value), want, "{value}");
        }
    }

    #[test]
    fn flags_keep_json_text_and_a_model_key_is_read() {
        let a = panel(r#"{"verdict":"pass","flags":["x",1,null,{"k":"v"}],"model":" gpt-5.4 "}"#);
        assert_eq!(a.flags, ["x", "1", "null", r#"{"k":"v"}"#]);
        assert_eq!(a.model.as_deref(), Some("gpt-5.4"));
        assert_eq!(panel(r#"{"verdict":"pass","flags":"solo"}"#).flags, ["solo"]);
        assert!(panel(r#"{"verdict":"pass","flags":null}"#).flags.is_empty());
    }

    #[test]
    fn codex_judge_answers_map_through_the_gating_band() {
        let text = r#"Verdict follows. {"verdict":"NEEDS_REVISION","confidence":0.8,
          "criteria":{"correctness":{"score":3,"evidence":"a.rs:1","violations":[]},
                      "security":{"score":4,"evidence":"","violations":[]},
                      "maintainability":{"score":3,"evidence":"","violations":[]},
                      "spec_compliance":{"score":3,"evidence":"","violations":[]}},
          "overall_score":3,"rationale":"ok",
          "remediation":[{"severity":"major","description":"off by one","suggestion":"use <=","file":"a.rs","line":7}]}"#;
        let a = parse(VerdictFormat::CodexJudge, text).expect("parses");
        assert_eq!((a.verdict, a.confidence), (Verdict::Uncertain, 80));
        assert_eq!(a.flags, ["major: off by one (a.rs:7)"]);
        assert!(a.judge.is_some());
    }
}
