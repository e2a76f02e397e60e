//! Rubrics, personas and the prompt every juror receives (docs/spec/jury.md §2.1, §8).
//!
//! A rubric is a template that asks for pass/fail/uncertain semantics plus the verdict
//! format the answer must follow. The same prompt goes to every juror of a run, tiebreaker
//! included, so jurors judge the same thing. The wording is ours; the slugs, the persona
//! sentence and the layout (persona, template, fenced artifact, JSON instruction) are the
//! reference's, because callers and tests depend on them.

use std::borrow::Cow;

use crate::verdict::VerdictFormat;

/// The slug that takes its template from the caller.
pub const CUSTOM: &str = "custom";

/// Built-in rubrics in the order the "unknown rubric" message lists them: the reference's
/// ten, then the insistir codex-judge (our addition; it selects the second verdict format).
const BUILT_INS: &[(&str, VerdictFormat, &str)] = &[
    (
        "hallucination",
        VerdictFormat::Panel,
        "You are an independent fact-checker. Judge whether the artifact is grounded. Check the \
         specificity of its claims, whether its citations are plausible, whether it contradicts \
         itself, whether its confidence is calibrated, and look for the usual fabrication \
         patterns (invented APIs, papers, numbers, quotes). pass: every claim is grounded or \
         hedged. fail: unsupported claims, fake citations or contradictions (one flag each). \
         uncertain: you cannot resolve it from the artifact.",
    ),
    (
        "flattery",
        VerdictFormat::Panel,
        "You detect sycophancy. Look for praise the work has not earned, agreement without \
         argument, and warmth that replaces substance. fail on any high-severity marker. Put \
         every phrase you detected, verbatim, in flags. pass: the tone is neutral and earned. \
         uncertain: the markers are mild and the intent is unclear.",
    ),
    (
        "spec-coherence",
        VerdictFormat::Panel,
        "You are a software architect reviewing a change against its specification. Check \
         internal consistency, whether what it claims matches what it implements, version \
         bumps without a migration, and references to files, functions or flags that do not \
         exist. One flag per gap, naming the place. pass: coherent. fail: at least one real \
         gap. uncertain: the artifact does not show enough to decide.",
    ),
    (
        "patent-safety",
        VerdictFormat::Panel,
        "You review a patent draft. Judge the risk of anticipation by prior art (35 U.S.C. §102) \
         and any leakage between what the claims cover and what the specification discloses. \
         One flag per risk. pass: low risk. fail: a concrete risk. uncertain: it depends on art \
         you cannot see.",
    ),
    (
        "prompt-quality",
        VerdictFormat::Panel,
        "You judge how effective a user's prompt is: specificity, context, stated intent and \
         success criteria. One flag per missing element. pass: a capable model could do the \
         task well from it alone. fail: it is missing something the task needs. uncertain: it \
         depends on context the prompt does not show.",
    ),
    (
        "prompt-sharpen",
        VerdictFormat::Panel,
        "You rewrite a user's prompt so a capable model does the task well on the first try. \
         flags[0] must be the sharpened prompt, or ALREADY_SHARP when it needs no change, or \
         NEEDS_USER_INPUT: followed by the question only the user can answer. pass: \
         ALREADY_SHARP. fail: you rewrote it. uncertain: NEEDS_USER_INPUT.",
    ),
    (
        "persona-detect",
        VerdictFormat::Panel,
        "Pick the one expert persona whose standard best fits judging this artifact, as a slug \
         (for example jeff-dean, shreyas-doshi, steve-jobs-jony-ive), in flags[0]. When two fit \
         equally, give both, best first, and answer uncertain. pass: one persona clearly fits. \
         fail: none fits.",
    ),
    (
        "calibration-scan",
        VerdictFormat::Panel,
        "You scan for miscalibrated tone. HIGH markers: unearned superlatives, certainty \
         without evidence, praise of the reader. MEDIUM markers: stacked intensifiers, hedges \
         that contradict the claim. fail on any HIGH marker; put every detected phrase verbatim \
         in flags. pass: none. uncertain: only MEDIUM markers.",
    ),
    (
        "hallucination-preflight",
        VerdictFormat::Panel,
        "Classify the hallucination risk of answering this prompt before it is answered. \
         flags[0] is the risk: FACTUAL, LEGAL, MEDICAL, FINANCIAL, TEMPORAL, CITATION or NONE. \
         flags[1] is the grounding needed: WEB_SEARCH, PRIMARY_SOURCE, USER_CONFIRMATION, \
         ARXIV_RECENT, PATENT_DB or NONE_NEEDED. pass: NONE. fail: a risk that needs grounding. \
         uncertain: you cannot tell.",
    ),
    (
        "t0t2-jury",
        VerdictFormat::Panel,
        "Lightweight ship/no-ship check of a reversible artifact. pass: safe to ship now. fail: \
         something would break or mislead. uncertain: it needs a closer look. flags[0] is a \
         one-line reason.",
    ),
    (
        "codex-judge",
        VerdictFormat::CodexJudge,
        "You are the judge of a code change. Score it on four criteria from 1 (failing) to 5 \
         (excellent): correctness (weight 40%), spec_compliance, security and maintainability \
         (20% each). Be length-neutral, give no benefit of the doubt, cite file:line for every \
         claim or mark it UNVERIFIED, form your own judgment before reading any reviewer's \
         findings, and judge the code as written, not its intent. PASS: overall 4 or more and \
         no critical violation. NEEDS_REVISION: overall 2 to 3, or major violations. REJECT: \
         overall 1, or a critical security or correctness failure.",
    ),
];

/// Personas the reference gives a rubric when the caller names none.
const DEFAULT_PERSONAS: &[(&str, &str)] =
    &[("spec-coherence", "Jeff Dean"), ("prompt-quality", "Shreyas Doshi"), ("prompt-sharpen", "Shreyas Doshi")];

/// A rubric a caller named that cannot be used, worded as the reference's CLI errors.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RubricError {
    /// No built-in rubric has this slug.
    #[error("--rubric must be one of: {known} (got '{got}')")]
    Unknown {
        /// The slug asked for.
        got: String,
        /// Every accepted slug, comma-separated.
        known: String,
    },
    /// `custom` without a (non-blank) template.
    #[error("rubric=custom requires --rubric-text")]
    CustomWithoutText,
    /// A template given with a built-in rubric (this slug), which would be ignored.
    #[error("--rubric-text is only read with --rubric custom (got '{0}')")]
    TextWithoutCustom(String),
}

/// A rubric ready to build prompts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rubric {
    slug: String,
    template: Cow<'static, str>,
    format: VerdictFormat,
}

impl Rubric {
    /// The rubric a caller names, as `--rubric SLUG [--rubric-text T]` does.
    pub fn resolve(slug: &str, text: Option<&str>) -> Result<Rubric, RubricError> {
        match (slug, text) {
            (CUSTOM, Some(text)) => Rubric::custom(text, VerdictFormat::Panel),
            (CUSTOM, None) => Err(RubricError::CustomWithoutText),
            (_, Some(_)) if Rubric::known(slug) => Err(RubricError::TextWithoutCustom(slug.to_owned())),
            (_, _) => BUILT_INS
                .iter()
                .find(|(s, _, _)| *s == slug)
                .map(|&(s, format, template)| Rubric { slug: s.to_owned(), template: Cow::Borrowed(template), format })
                .ok_or_else(|| RubricError::Unknown { got: slug.to_owned(), known: Rubric::slugs().join(", ") }),
        }
    }

    /// A caller's own template, answered in `format`.
    pub fn custom(text: &str, format: VerdictFormat) -> Result<Rubric, RubricError> {
        if text.trim().is_empty() {
            return Err(RubricError::CustomWithoutText);
        }
        Ok(Rubric { slug: CUSTOM.to_owned(), template: Cow::Owned(text.to_owned()), format })
    }

    /// Every accepted slug, `custom` last.
    pub fn slugs() -> Vec<&'static str> {
        BUILT_INS.iter().map(|(s, _, _)| *s).chain([CUSTOM]).collect()
    }

    fn known(slug: &str) -> bool {
        BUILT_INS.iter().any(|(s, _, _)| *s == slug)
    }

    /// The slug the packet names the rubric by (`custom` for a caller's template).
    pub fn slug(&self) -> &str {
        &self.slug
    }

    /// The answer format this rubric asks jurors for.
    pub fn format(&self) -> VerdictFormat {
        self.format
    }

    /// The caller's persona when it is not blank, else this rubric's default, else none.
    pub fn persona(&self, requested: Option<&str>) -> Option<String> {
        match requested.map(str::trim) {
            Some(p) if !p.is_empty() => Some(p.to_owned()),
            _ => DEFAULT_PERSONAS.iter().find(|(s, _)| *s == self.slug).map(|(_, p)| (*p).to_owned()),
        }
    }

    /// The prompt for every juror: persona line, template, fenced artifact, JSON instruction.
    pub fn prompt(&self, persona: Option<&str>, artifact: &str) -> String {
        let mut prompt = String::with_capacity(artifact.len() + self.template.len() + 1024);
        if let Some(persona) = persona {
            prompt.push_str(&format!(
                "Judge as {persona} — channel the top-0.001% standard in their domain; scrutinize as they \
                 would and catch the minute details they would catch.\n\n"
            ));
        }
        prompt.push_str(&self.template);
        // A fence longer than any backtick run inside the artifact cannot be closed by it.
        let fence = "`".repeat(longest_backtick_run(artifact).max(2) + 1);
        prompt.push_str(&format!("\n\nARTIFACT:\n{fence}\n{artifact}\n{fence}\n\n"));
        prompt.push_str(self.format.instruction());
        prompt
    }
}

/// The prompt of the one retry after an answer without a JSON object.
pub fn retry_prompt(prompt: &str) -> String {
    format!("{prompt}\n\nYour previous answer was not valid JSON. Return only the verdict JSON object.")
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reference_slug_is_known_in_order_and_unknown_ones_are_listed() {
        let reference = [
            "hallucination",
            "flattery",
            "spec-coherence",
            "patent-safety",
            "prompt-quality",
            "prompt-sharpen",
            "persona-detect",
            "calibration-scan",
            "hallucination-preflight",
            "t0t2-jury",
        ];
        for slug in reference {
            let rubric = Rubric::resolve(slug, None).expect(slug);
            assert_eq!((rubric.slug(), rubric.format()), (slug, VerdictFormat::Panel));
        }
        assert_eq!(Rubric::slugs()[..10], reference);
        assert_eq!(Rubric::slugs()[10..], ["codex-judge", "custom"]);
        assert_eq!(Rubric::resolve("codex-judge", None).map(|r| r.format()), Ok(VerdictFormat::CodexJudge));
        let unknown = Rubric::resolve("ux", None).expect_err("ux is only a persona key");
        assert_eq!(
            unknown.to_string(),
            "--rubric must be one of: hallucination, flattery, spec-coherence, patent-safety, \
             prompt-quality, prompt-sharpen, persona-detect, calibration-scan, \
             hallucination-preflight, t0t2-jury, codex-judge, custom (got 'ux')"
        );
    }

    #[test]
    fn custom_needs_text_and_text_needs_custom() {
        assert_eq!(Rubric::resolve("custom", None), Err(RubricError::CustomWithoutText));
        assert_eq!(Rubric::resolve("custom", Some("  ")), Err(RubricError::CustomWithoutText));
        assert_eq!(Rubric::resolve("flattery", Some("x")), Err(RubricError::TextWithoutCustom("flattery".into())));
        let custom = Rubric::resolve("custom", Some("Is it blue?")).expect("custom");
        assert!(custom.prompt(None, "sky").starts_with("Is it blue?\n\nARTIFACT:\n```\nsky\n```\n\n"));
        let judged = Rubric::custom("Judge it.", VerdictFormat::CodexJudge).expect("custom");
        assert!(judged.prompt(None, "x").contains("\"overall_score\""));
    }

    #[test]
    fn persona_rules() {
        let spec = Rubric::resolve("spec-coherence", None).expect("known");
        assert_eq!(spec.persona(None).as_deref(), Some("Jeff Dean"));
        assert_eq!(spec.persona(Some("   ")).as_deref(), Some("Jeff Dean"));
        assert_eq!(spec.persona(Some(" Grace Hopper ")).as_deref(), Some("Grace Hopper"));
        let sharpen = Rubric::resolve("prompt-sharpen", None).expect("known");
        assert_eq!(sharpen.persona(None).as_deref(), Some("Shreyas Doshi"));
        for slug in ["hallucination", "t0t2-jury", "codex-judge"] {
            assert_eq!(Rubric::resolve(slug, None).expect("known").persona(None), None, "{slug}");
        }
    }

    #[test]
    fn the_persona_sentence_comes_first_and_the_artifact_cannot_close_its_fence() {
        let rubric = Rubric::resolve("spec-coherence", None).expect("known");
        let prompt = rubric.prompt(Some("Jeff Dean"), "a\n```\nb");
        assert!(prompt.starts_with(
            "Judge as Jeff Dean — channel the top-0.001% standard in their domain; scrutinize as they \
             would and catch the minute details they would catch.\n\nYou are a software architect"
        ));
        assert!(prompt.contains("ARTIFACT:\n````\na\n```\nb\n````\n\n"), "{prompt}");
        assert!(prompt.ends_with(VerdictFormat::Panel.instruction()));
        assert!(retry_prompt(&prompt).ends_with("Return only the verdict JSON object."));
    }
}
