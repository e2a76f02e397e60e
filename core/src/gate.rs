//! The review gate: the stop/continue/escalate table of `review_gate.py`
//! (`shared/spec/evidence-protocol.md` §4).
//!
//! The orchestrator may stop a review loop only when this table says so, which is why it
//! is executable rather than prose. Everything here is pure: the caller loads native
//! evidence (validate, read the response, [`parse_score_verdict`]) and hands the result
//! in, and [`admit_native_evidence`] turns the caller's load into the pre-checks of the
//! reference `main`. Families are always derived from model strings, never declared.

use crate::family::{Table, family};
use serde_json::{Value, json};

/// A reviewer backend of the review loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Agy,
    Codex,
    Copilot,
    CopilotNative,
    LlmChat,
    Manual,
    OraclePro,
}

impl Backend {
    const ALL: [Backend; 7] = [
        Backend::Agy,
        Backend::Codex,
        Backend::Copilot,
        Backend::CopilotNative,
        Backend::LlmChat,
        Backend::Manual,
        Backend::OraclePro,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Agy => "agy",
            Backend::Codex => "codex",
            Backend::Copilot => "copilot",
            Backend::CopilotNative => "copilot-native",
            Backend::LlmChat => "llm-chat",
            Backend::Manual => "manual",
            Backend::OraclePro => "oracle-pro",
        }
    }

    /// Trimmed and lowercased first, as the reference table does before its checks.
    pub fn parse(name: &str) -> Option<Backend> {
        let name = normalized(name);
        Backend::ALL.into_iter().find(|backend| backend.as_str() == name)
    }
}

/// What the orchestrator does next. `ReviewUnavailable` is terminal for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Stop,
    Continue,
    Escalate,
    ReviewUnavailable,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Stop => "stop",
            Decision::Continue => "continue",
            Decision::Escalate => "escalate",
            Decision::ReviewUnavailable => "review_unavailable",
        }
    }
}

/// How far the executor/reviewer identities behind a transition can be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Assurance {
    NotRequired,
    CallerDeclared,
    HostEventVerified,
    Unverified,
    Failed,
}

impl Assurance {
    pub fn as_str(self) -> &'static str {
        match self {
            Assurance::NotRequired => "not_required",
            Assurance::CallerDeclared => "caller_declared",
            Assurance::HostEventVerified => "host_event_verified",
            Assurance::Unverified => "unverified",
            Assurance::Failed => "failed",
        }
    }
}

/// What a revalidated copilot-native evidence artifact and its response say (§4.3 step 5).
#[derive(Clone, Debug, PartialEq)]
pub struct NativeEvidence {
    pub evidence_id: String,
    /// Host-reported models; for copilot-native they replace the caller's declarations.
    pub executor_model: String,
    pub reviewer_model: String,
    /// From [`parse_score_verdict`] on the stored response.
    pub score: f64,
    pub verdict: String,
}

/// One completed review round, as the orchestrator declares it (the CLI flags of §4.1).
///
/// `backend` and `verdict` stay raw so that unknown values reach the table and are
/// refused there (rows 1 and 2) with the caller's own spelling in the reason.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GateInput {
    pub backend: String,
    pub score: f64,
    pub verdict: String,
    /// Set by an earlier `escalate`: only a codex or manual finalizer may stop the loop.
    pub requires_external_acquittal: bool,
    /// Caller-declared models; ignored for copilot-native, whose evidence names them.
    pub executor_model: String,
    pub reviewer_model: String,
    pub codex_available: bool,
    pub manual_available: bool,
    pub manual_identity_reported: bool,
    /// Loaded evidence, through [`admit_native_evidence`] when the caller was given a path.
    pub native_evidence: Option<NativeEvidence>,
}

/// The gate's answer. Callers act on everything but `reason`, which is for humans.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub decision: Decision,
    pub next_backend: Option<Backend>,
    pub requires_external_acquittal: bool,
    pub identity_assurance: Assurance,
    pub reason: String,
}

impl Transition {
    fn new(
        decision: Decision,
        next_backend: Option<Backend>,
        requires_external_acquittal: bool,
        identity_assurance: Assurance,
        reason: impl Into<String>,
    ) -> Transition {
        Transition { decision, next_backend, requires_external_acquittal, identity_assurance, reason: reason.into() }
    }

    /// The reference's output object; keys come out sorted, as `sort_keys=True` writes them.
    pub fn to_json(&self) -> Value {
        json!({
            "decision": self.decision.as_str(),
            "identity_assurance": self.identity_assurance.as_str(),
            "next_backend": self.next_backend.map(Backend::as_str),
            "reason": self.reason,
            "requires_external_acquittal": self.requires_external_acquittal,
        })
    }
}

fn unavailable(rea: bool, assurance: Assurance, reason: impl Into<String>) -> Transition {
    Transition::new(Decision::ReviewUnavailable, None, rea, assurance, reason)
}

/// Stopping always clears the finalizer obligation: the loop is over.
fn stop(assurance: Assurance, reason: impl Into<String>) -> Transition {
    Transition::new(Decision::Stop, None, false, assurance, reason)
}

/// The reference `main`'s pre-checks for a native evidence path (§4.1, checks 1 and 2).
///
/// Evidence is only loaded for a copilot-native round, so `load` (validation, response
/// read and [`parse_score_verdict`]) is not called otherwise; any load error fails closed
/// with its message. The backend is compared normalized, like the table, so that a
/// spelling the table accepts is not refused here.
pub fn admit_native_evidence(
    backend: &str,
    requires_external_acquittal: bool,
    load: impl FnOnce() -> Result<NativeEvidence, String>,
) -> Result<NativeEvidence, Transition> {
    let refuse = |reason: String| unavailable(requires_external_acquittal, Assurance::Failed, reason);
    if Backend::parse(backend) != Some(Backend::CopilotNative) {
        return Err(refuse("native Copilot evidence is valid only for --round-backend copilot-native".to_owned()));
    }
    load().map_err(|message| refuse(format!("invalid native Copilot evidence: {message}")))
}

/// The transition for one completed round: rows 1–32 of §4.2, in the reference's order.
pub fn evaluate(input: &GateInput) -> Transition {
    use Assurance::{CallerDeclared, Failed, NotRequired, Unverified};
    use Backend::{Agy, Codex, Copilot, CopilotNative, LlmChat, Manual, OraclePro};

    let rea = input.requires_external_acquittal;
    let score = input.score;
    let Some(backend) = Backend::parse(&input.backend) else {
        return unavailable(rea, Unverified, format!("unknown reviewer backend: {}", input.backend));
    };
    let verdict = normalized(&input.verdict);
    if !matches!(verdict.as_str(), "ready" | "almost" | "not ready") {
        return unavailable(rea, Unverified, format!("unknown verdict: {}", input.verdict));
    }
    if !score.is_finite() || !(1.0..=10.0).contains(&score) {
        return unavailable(rea, Unverified, format!("score must be finite and within 1..10: {}", py_float(score)));
    }
    if backend != CopilotNative && input.native_evidence.is_some() {
        return unavailable(rea, Failed, "native Copilot evidence was supplied for a non-native backend");
    }

    let positive = score >= 6.0 && matches!(verdict.as_str(), "ready" | "almost");
    let relation = || Relation::of(&input.executor_model, &input.reviewer_model);
    match backend {
        CopilotNative => native(input, &verdict, positive),
        Copilot => copilot(input, positive),
        other if !positive => {
            Transition::new(Decision::Continue, Some(other), rea, Unverified, "positive threshold not met")
        }
        LlmChat if rea => unavailable(true, Unverified, "Copilot finalizer state permits only codex or manual"),
        LlmChat => match relation() {
            Relation::Unknown => unavailable(false, Unverified, "HTTP reviewer family relation cannot be derived"),
            Relation::Same => unavailable(false, Failed, "HTTP reviewer is same-family as the declared executor model"),
            Relation::Cross => stop(
                CallerDeclared,
                "HTTP reviewer returned a positive cross-family verdict; executor identity remains caller-declared",
            ),
        },
        Codex | OraclePro | Agy if !rea => {
            stop(NotRequired, "non-Copilot backend preserves the pre-Copilot positive-stop contract")
        }
        OraclePro | Agy => unavailable(true, Unverified, "Copilot finalizer state permits only codex or manual"),
        Manual if !input.manual_identity_reported => {
            unavailable(rea, Unverified, "manual final verdict is missing its required reported model identity")
        }
        Manual => match relation() {
            Relation::Unknown => unavailable(rea, Unverified, "manual verdict family relation cannot be derived"),
            Relation::Same => unavailable(rea, Failed, "manual reviewer is same-family as the declared executor model"),
            Relation::Cross if rea => finalizer_stop(),
            Relation::Cross => stop(
                CallerDeclared,
                "explicit manual backend returned a positive verdict with its required model identity",
            ),
        },
        // Only a codex finalizer with the obligation set is left (rows 29–31).
        Codex => match relation() {
            Relation::Unknown => unavailable(true, Unverified, "finalizer family relation cannot be derived"),
            Relation::Same => unavailable(true, Failed, "finalizer is same-family as the declared executor model"),
            Relation::Cross => finalizer_stop(),
        },
    }
}

/// Rows 5–12: identities and the verdict come from host-bound evidence, so a positive
/// cross-family review stops the loop without a finalizer.
fn native(input: &GateInput, verdict: &str, positive: bool) -> Transition {
    if input.requires_external_acquittal {
        return unavailable(
            true,
            Assurance::Unverified,
            "invalid state: native Copilot review cannot inherit a compatibility-finalizer obligation",
        );
    }
    let Some(evidence) = &input.native_evidence else {
        return unavailable(false, Assurance::Unverified, "native Copilot round is missing host-event evidence");
    };
    // `math.isclose(abs_tol=1e-9)`: false, as there, for a NaN or infinite evidence score.
    let same_score = (input.score - evidence.score).abs() <= 1e-9;
    let refusal = match Relation::of(&evidence.executor_model, &evidence.reviewer_model) {
        Relation::Unknown => Some("native Copilot evidence contains an unknown model family"),
        Relation::Same => Some("native Copilot reviewer is same-family as the host-reported executor"),
        Relation::Cross if !same_score => Some("declared score does not match the host-bound native reviewer response"),
        Relation::Cross if verdict != normalized(&evidence.verdict) => {
            Some("declared verdict does not match the host-bound native reviewer response")
        }
        Relation::Cross => None,
    };
    if let Some(reason) = refusal {
        return unavailable(false, Assurance::Failed, reason);
    }
    let id = &evidence.evidence_id;
    if positive {
        stop(
            Assurance::HostEventVerified,
            format!("native cross-family reviewer {id} returned a host-bound positive verdict"),
        )
    } else {
        Transition::new(
            Decision::Continue,
            Some(Backend::CopilotNative),
            false,
            Assurance::HostEventVerified,
            format!("native cross-family reviewer {id} did not meet the positive threshold"),
        )
    }
}

/// Rows 13–18: the compatibility drive mode never stops by itself; a positive verdict
/// escalates to a finalizer from outside the executor's family.
fn copilot(input: &GateInput, positive: bool) -> Transition {
    if input.requires_external_acquittal {
        return unavailable(
            true,
            Assurance::Unverified,
            "invalid state: copilot cannot resume after finalizer escalation",
        );
    }
    if !positive {
        let reason = "copilot drive verdict is not positive";
        return Transition::new(Decision::Continue, Some(Backend::Copilot), false, Assurance::Unverified, reason);
    }
    let Some(executor) = family(&input.executor_model, Table::Gate) else {
        return unavailable(
            false,
            Assurance::Unverified,
            "cannot select an opposite-family finalizer from an unknown executor family",
        );
    };
    let finalizer = match executor {
        // Codex is itself OpenAI-family, so an OpenAI executor can only be finalized manually.
        "openai" if input.manual_available => Ok(Backend::Manual),
        "openai" => Err("OpenAI-family executor requires a non-OpenAI manual finalizer"),
        _ if input.codex_available => Ok(Backend::Codex),
        _ if input.manual_available => Ok(Backend::Manual),
        _ => Err("no policy-approved finalizer is available"),
    };
    match finalizer {
        Ok(next) => Transition::new(
            Decision::Escalate,
            Some(next),
            true,
            Assurance::CallerDeclared,
            "copilot is drive-only; a positive verdict requires an external finalizer",
        ),
        Err(reason) => unavailable(false, Assurance::CallerDeclared, reason),
    }
}

/// Row 31: a policy-approved finalizer discharges the obligation set by `escalate`.
fn finalizer_stop() -> Transition {
    stop(
        Assurance::CallerDeclared,
        "policy-approved finalizer returned a positive verdict; executor identity remains caller-declared",
    )
}

/// Whether reviewer and executor are known to be of different families; an unknown or
/// ambiguous family on either side never counts as different.
enum Relation {
    Unknown,
    Same,
    Cross,
}

impl Relation {
    fn of(executor_model: &str, reviewer_model: &str) -> Relation {
        match (family(executor_model, Table::Gate), family(reviewer_model, Table::Gate)) {
            (Some(executor), Some(reviewer)) if executor == reviewer => Relation::Same,
            (Some(_), Some(_)) => Relation::Cross,
            _ => Relation::Unknown,
        }
    }
}

const NOT_EXACTLY_ONE: &str = "native reviewer response must contain exactly one anchored Score and Verdict field";

/// The score and verdict of a native reviewer response (§4.3 step 4).
///
/// This reproduces the reference's two `re.findall` calls with `(?im)`:
/// `^\s*(?:[-*]\s*)?score:\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*10\s*$` and
/// `^\s*(?:[-*]\s*)?verdict:\s*(ready|almost|not\s+ready)\s*$`. Each must match exactly
/// once. Python's `\s` includes newlines, so every gap in these patterns may span lines
/// (`Verdict: not\nready` is `not ready`); the score is not range-checked here (row 3 does).
pub fn parse_score_verdict(response: &str) -> Result<(f64, String), String> {
    let scores = find_all(response, score_field);
    let verdicts = find_all(response, verdict_field);
    match (scores.as_slice(), verdicts.as_slice()) {
        ([score], [verdict]) => Ok((*score, verdict.clone())),
        _ => Err(NOT_EXACTLY_ONE.to_owned()),
    }
}

/// `re.findall` for a `^`-anchored MULTILINE pattern: try each line start (offset 0 or
/// after `\n`) and resume at the end of a match, so a match spanning lines counts once.
fn find_all<T>(text: &str, field: fn(&mut Cursor) -> Option<T>) -> Vec<T> {
    let after_next_newline = |from: usize| text[from..].find('\n').map(|i| from + i + 1);
    let mut found = Vec::new();
    let mut line_start = Some(0);
    while let Some(start) = line_start {
        let mut cursor = Cursor { text, pos: start };
        line_start = match field(&mut cursor) {
            Some(value) => {
                found.push(value);
                let end = cursor.pos;
                if text[..end].ends_with('\n') { Some(end) } else { after_next_newline(end) }
            }
            None => after_next_newline(start),
        };
    }
    found
}

/// `score:\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*10\s*$` after the common prefix.
fn score_field(cursor: &mut Cursor) -> Option<f64> {
    if !cursor.field("score") {
        return None;
    }
    let score = cursor.number()?;
    (cursor.spaced("/") && cursor.spaced("10") && cursor.line_end()).then_some(score)
}

/// `verdict:\s*(ready|almost|not\s+ready)\s*$`, lowercased with spaces collapsed.
fn verdict_field(cursor: &mut Cursor) -> Option<String> {
    if !cursor.field("verdict") {
        return None;
    }
    let start = cursor.pos;
    let matched = cursor.literal("ready")
        || cursor.literal("almost")
        || (cursor.literal("not") && cursor.skip_space() && cursor.literal("ready"));
    let verdict = &cursor.text[start..cursor.pos];
    (matched && cursor.line_end()).then(|| {
        verdict.to_lowercase().split(is_py_space).filter(|word| !word.is_empty()).collect::<Vec<_>>().join(" ")
    })
}

/// A position in the response, advanced the way the reference regex engine consumes it.
/// The patterns never need backtracking beyond what these methods do themselves.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl Cursor<'_> {
    fn eat(&mut self, accept: impl Fn(char) -> bool) -> bool {
        match self.text[self.pos..].chars().next() {
            Some(c) if accept(c) => {
                self.pos += c.len_utf8();
                true
            }
            _ => false,
        }
    }

    /// `\s*`; the result tells whether it was `\s+`.
    fn skip_space(&mut self) -> bool {
        let start = self.pos;
        while self.eat(is_py_space) {}
        self.pos > start
    }

    /// A literal under IGNORECASE; consumes nothing when it does not match.
    fn literal(&mut self, literal: &str) -> bool {
        let start = self.pos;
        let matched = literal.chars().all(|want| self.eat(|c| same_ignoring_case(c, want)));
        if !matched {
            self.pos = start;
        }
        matched
    }

    /// `\s*` then a literal.
    fn spaced(&mut self, literal: &str) -> bool {
        self.skip_space();
        self.literal(literal)
    }

    /// `\s*(?:[-*]\s*)?<name>:\s*`, the prefix both fields share after `^`.
    fn field(&mut self, name: &str) -> bool {
        self.skip_space();
        if self.eat(|c| c == '-' || c == '*') {
            self.skip_space();
        }
        let matched = self.literal(name) && self.literal(":");
        self.skip_space();
        matched
    }

    /// `[0-9]+(?:\.[0-9]+)?` as Python's `float()` reads it.
    fn number(&mut self) -> Option<f64> {
        let start = self.pos;
        while self.eat(|c| c.is_ascii_digit()) {}
        if self.pos == start {
            return None;
        }
        let integer_end = self.pos;
        if !(self.eat(|c| c == '.') && self.eat(|c| c.is_ascii_digit())) {
            self.pos = integer_end;
        }
        while self.eat(|c| c.is_ascii_digit()) {}
        self.text[start..self.pos].parse().ok()
    }

    /// `\s*$` under MULTILINE: `$` holds at the end or before a `\n`, so the greedy
    /// `\s*` gives back to the last `\n` it swallowed, where the match then ends.
    fn line_end(&mut self) -> bool {
        let start = self.pos;
        self.skip_space();
        if self.pos == self.text.len() {
            return true;
        }
        match self.text[start..self.pos].rfind('\n') {
            Some(newline) => {
                self.pos = start + newline;
                true
            }
            None => false,
        }
    }
}

/// Python's `\s` (and `str.strip`): Unicode whitespace plus the separators U+001C–U+001F.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's Unicode IGNORECASE for the ASCII `want`: besides ASCII case it equates
/// `ſ` with `s` and `İ`/`ı` with `i`, so `ſcore:` and `verdıct:` count as fields too.
fn same_ignoring_case(c: char, want: char) -> bool {
    c.to_ascii_lowercase() == want || matches!((want, c), ('s', 'ſ') | ('i', 'İ' | 'ı'))
}

/// `value.strip().lower()`, the reference's normalization of backend and verdict.
fn normalized(value: &str) -> String {
    value.trim_matches(is_py_space).to_lowercase()
}

/// Python's `repr(float)`, so the row 3 reason reads as the reference writes it
/// (`nan`, `11.0`, `1e+16`). Rust's `{:?}` already picks the same digits and notation.
fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".to_owned();
    }
    let debug = format!("{x:?}");
    match debug.split_once('e') {
        Some((mantissa, exponent)) => {
            let (sign, digits) = exponent.strip_prefix('-').map_or(('+', exponent), |digits| ('-', digits));
            format!("{mantissa}e{sign}{digits:0>2}")
        }
        None => debug,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Assurance::*;
    use Decision::*;

    fn round(backend: &str, score: f64, verdict: &str) -> GateInput {
        GateInput { backend: backend.into(), score, verdict: verdict.into(), ..GateInput::default() }
    }

    fn evidence(executor: &str, reviewer: &str, score: f64, verdict: &str) -> NativeEvidence {
        NativeEvidence {
            evidence_id: "cne_0123456789abcdef0123456789abcdef".into(),
            executor_model: executor.into(),
            reviewer_model: reviewer.into(),
            score,
            verdict: verdict.into(),
        }
    }

    /// Test-only builders, so each table row below reads as its condition.
    impl GateInput {
        fn rea(self) -> Self {
            GateInput { requires_external_acquittal: true, ..self }
        }
        fn models(self, executor: &str, reviewer: &str) -> Self {
            GateInput { executor_model: executor.into(), reviewer_model: reviewer.into(), ..self }
        }
        fn codex(self) -> Self {
            GateInput { codex_available: true, ..self }
        }
        fn manual(self) -> Self {
            GateInput { manual_available: true, ..self }
        }
        fn identity(self) -> Self {
            GateInput { manual_identity_reported: true, ..self }
        }
        fn native(self, evidence: NativeEvidence) -> Self {
            GateInput { native_evidence: Some(evidence), ..self }
        }
    }

    const GPT: &str = "gpt-5.4";
    const CLAUDE: &str = "claude-opus-4.6";
    const SONNET: &str = "claude-sonnet-4.6";
    const QWEN: &str = "qwen3.6-plus";

    #[test]
    fn every_row_of_the_transition_table() {
        let cross = || evidence(CLAUDE, GPT, 8.0, "ready");
        #[rustfmt::skip]
        let rows = [
            ("1", round("gemini", 8.0, "ready").rea(), ReviewUnavailable, None, true, Unverified, "unknown reviewer backend: gemini"),
            ("2", round("codex", 8.0, "maybe").rea(), ReviewUnavailable, None, true, Unverified, "unknown verdict: maybe"),
            ("3", round("codex", 11.0, "ready"), ReviewUnavailable, None, false, Unverified, "score must be finite and within 1..10: 11.0"),
            ("4", round("codex", 8.0, "ready").native(cross()), ReviewUnavailable, None, false, Failed, "non-native backend"),
            ("5", round("copilot-native", 8.0, "ready").rea().native(cross()), ReviewUnavailable, None, true, Unverified, "cannot inherit"),
            ("6", round("copilot-native", 8.0, "ready"), ReviewUnavailable, None, false, Unverified, "missing host-event evidence"),
            ("7", round("copilot-native", 8.0, "ready").native(evidence(CLAUDE, "deepseek-gpt", 8.0, "ready")), ReviewUnavailable, None, false, Failed, "unknown model family"),
            ("8", round("copilot-native", 8.0, "ready").native(evidence(CLAUDE, SONNET, 8.0, "ready")), ReviewUnavailable, None, false, Failed, "same-family"),
            ("9", round("copilot-native", 8.0, "ready").native(evidence(CLAUDE, GPT, 7.0, "ready")), ReviewUnavailable, None, false, Failed, "declared score"),
            ("10", round("copilot-native", 8.0, "almost").native(cross()), ReviewUnavailable, None, false, Failed, "declared verdict"),
            ("11", round("copilot-native", 5.0, "ready").native(evidence(CLAUDE, GPT, 5.0, "ready")), Continue, Some(Backend::CopilotNative), false, HostEventVerified, "cne_0123456789abcdef0123456789abcdef did not meet"),
            ("12", round("copilot-native", 8.0, "ready").native(cross()), Stop, None, false, HostEventVerified, "cne_0123456789abcdef0123456789abcdef returned a host-bound positive verdict"),
            ("13", round("copilot", 8.0, "ready").rea(), ReviewUnavailable, None, true, Unverified, "cannot resume"),
            ("14", round("copilot", 9.0, "not ready"), Continue, Some(Backend::Copilot), false, Unverified, "not positive"),
            ("15", round("copilot", 8.0, "ready").models("auto", CLAUDE).codex(), ReviewUnavailable, None, false, Unverified, "unknown executor family"),
            ("16 manual", round("copilot", 8.0, "almost").models(GPT, "").codex().manual(), Escalate, Some(Backend::Manual), true, CallerDeclared, "drive-only"),
            ("16 none", round("copilot", 8.0, "ready").models(GPT, "").codex(), ReviewUnavailable, None, false, CallerDeclared, "OpenAI-family executor requires a non-OpenAI manual finalizer"),
            ("17 manual", round("copilot", 8.0, "ready").models(QWEN, "").manual(), Escalate, Some(Backend::Manual), true, CallerDeclared, "drive-only"),
            ("17 none", round("copilot", 8.0, "ready").models(CLAUDE, ""), ReviewUnavailable, None, false, CallerDeclared, "no policy-approved finalizer is available"),
            ("18", round("copilot", 6.0, "ready").models(CLAUDE, "").codex().manual(), Escalate, Some(Backend::Codex), true, CallerDeclared, "drive-only"),
            ("19", round("agy", 5.9, "ready").rea(), Continue, Some(Backend::Agy), true, Unverified, "positive threshold not met"),
            ("20", round("llm-chat", 8.0, "ready").rea().models(CLAUDE, GPT), ReviewUnavailable, None, true, Unverified, "permits only codex or manual"),
            ("21", round("llm-chat", 8.0, "ready").models(CLAUDE, "mystery-model"), ReviewUnavailable, None, false, Unverified, "cannot be derived"),
            ("22", round("llm-chat", 8.0, "ready").models(CLAUDE, SONNET), ReviewUnavailable, None, false, Failed, "same-family"),
            ("23", round("llm-chat", 8.0, "ready").models(QWEN, GPT), Stop, None, false, CallerDeclared, "positive cross-family verdict"),
            ("24 codex", round("codex", 8.0, "ready"), Stop, None, false, NotRequired, "pre-Copilot positive-stop contract"),
            ("24 oracle-pro", round("oracle-pro", 8.0, "ready").models(GPT, GPT), Stop, None, false, NotRequired, "pre-Copilot positive-stop contract"),
            ("24 agy", round("agy", 8.0, "almost"), Stop, None, false, NotRequired, "pre-Copilot positive-stop contract"),
            ("25 oracle-pro", round("oracle-pro", 8.0, "ready").rea().models(CLAUDE, GPT), ReviewUnavailable, None, true, Unverified, "permits only codex or manual"),
            ("25 agy", round("agy", 8.0, "ready").rea().models(CLAUDE, GPT), ReviewUnavailable, None, true, Unverified, "permits only codex or manual"),
            ("26", round("manual", 8.0, "ready").rea().models(CLAUDE, GPT), ReviewUnavailable, None, true, Unverified, "missing its required reported model identity"),
            ("27", round("manual", 8.0, "ready").identity().models("", GPT), ReviewUnavailable, None, false, Unverified, "cannot be derived"),
            ("28", round("manual", 8.0, "ready").rea().identity().models(CLAUDE, SONNET), ReviewUnavailable, None, true, Failed, "same-family"),
            ("29", round("codex", 8.0, "ready").rea().models("gpt5", GPT), ReviewUnavailable, None, true, Unverified, "finalizer family relation cannot be derived"),
            ("30", round("codex", 8.0, "ready").rea().models(GPT, "codex-mini"), ReviewUnavailable, None, true, Failed, "finalizer is same-family"),
            ("31 codex", round("codex", 8.0, "ready").rea().models(CLAUDE, GPT), Stop, None, false, CallerDeclared, "policy-approved finalizer"),
            ("31 manual", round("manual", 8.0, "ready").rea().identity().models(GPT, CLAUDE), Stop, None, false, CallerDeclared, "policy-approved finalizer"),
            ("32", round("manual", 10.0, "ready").identity().models(GPT, "gemini-3.1-pro"), Stop, None, false, CallerDeclared, "explicit manual backend"),
        ];
        for (row, input, decision, next, rea, assurance, reason) in rows {
            let got = evaluate(&input);
            assert_eq!(
                (got.decision, got.next_backend, got.requires_external_acquittal, got.identity_assurance),
                (decision, next, rea, assurance),
                "row {row}: {got:?}"
            );
            assert!(got.reason.contains(reason), "row {row}: {:?} lacks {reason:?}", got.reason);
        }
    }

    #[test]
    fn score_must_be_finite_and_within_one_to_ten() {
        for (score, shown) in [
            (f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (0.99, "0.99"),
            (10.5, "10.5"),
            (1e16, "1e+16"),
            (-1e-5, "-1e-05"),
        ] {
            let got = evaluate(&round("codex", score, "ready"));
            assert_eq!(got.decision, ReviewUnavailable);
            assert_eq!(got.reason, format!("score must be finite and within 1..10: {shown}"));
        }
        assert_eq!(evaluate(&round("codex", 1.0, "not ready")).decision, Continue);
        assert_eq!(evaluate(&round("codex", 10.0, "ready")).decision, Stop);
    }

    #[test]
    fn backend_and_verdict_are_trimmed_and_lowercased() {
        let got = evaluate(&round(" Codex\u{1c}", 8.0, " READY\n"));
        assert_eq!((got.decision, got.identity_assurance), (Stop, NotRequired));
        assert_eq!(Backend::parse("LLM-Chat "), Some(Backend::LlmChat));
        assert_eq!(Backend::parse("copilot_native"), None);
        for backend in Backend::ALL {
            assert_eq!(Backend::parse(backend.as_str()), Some(backend));
        }
    }

    #[test]
    fn native_rounds_ignore_the_declared_models() {
        let input =
            round("copilot-native", 7.0, "Almost").models(CLAUDE, SONNET).native(evidence(QWEN, CLAUDE, 7.0, "almost"));
        assert_eq!(evaluate(&input).decision, Stop);
        let input =
            round("copilot-native", 7.0, "almost").models(CLAUDE, GPT).native(evidence(CLAUDE, SONNET, 7.0, "almost"));
        assert_eq!(evaluate(&input).identity_assurance, Failed);
    }

    #[test]
    fn native_score_comparison_tolerates_only_rounding() {
        let with_score = |score| round("copilot-native", 8.0, "ready").native(evidence(CLAUDE, GPT, score, "ready"));
        assert_eq!(evaluate(&with_score(8.0 + 1e-10)).decision, Stop);
        for score in [8.0 + 1e-8, f64::NAN, f64::INFINITY] {
            assert_eq!(
                evaluate(&with_score(score)).reason,
                "declared score does not match the host-bound native reviewer response"
            );
        }
    }

    #[test]
    fn to_json_writes_the_reference_object() {
        let continued = evaluate(&round("codex", 5.0, "ready")).to_json();
        assert_eq!(
            crate::pyjson::one_line(&continued),
            r#"{"decision": "continue", "identity_assurance": "unverified", "next_backend": "codex", "reason": "positive threshold not met", "requires_external_acquittal": false}"#
        );
        assert_eq!(evaluate(&round("codex", 8.0, "ready")).to_json()["next_backend"], Value::Null);
    }

    #[test]
    fn native_evidence_is_admitted_only_for_copilot_native() {
        let loaded = evidence(CLAUDE, GPT, 8.0, "ready");
        assert_eq!(admit_native_evidence(" Copilot-Native", false, || Ok(loaded.clone())), Ok(loaded));

        let refused = admit_native_evidence("codex", true, || panic!("must not load")).unwrap_err();
        assert_eq!(
            (refused.decision, refused.next_backend, refused.requires_external_acquittal, refused.identity_assurance),
            (ReviewUnavailable, None, true, Failed)
        );
        assert_eq!(refused.reason, "native Copilot evidence is valid only for --round-backend copilot-native");

        let failed = admit_native_evidence("copilot-native", false, || Err(NOT_EXACTLY_ONE.to_owned())).unwrap_err();
        assert_eq!((failed.decision, failed.identity_assurance), (ReviewUnavailable, Failed));
        assert_eq!(failed.reason, format!("invalid native Copilot evidence: {NOT_EXACTLY_ONE}"));
    }

    #[test]
    fn accepted_score_lines() {
        for (line, want) in [
            ("- Score: 8/10", 8.0),
            ("* score: 7.5/10", 7.5),
            ("Score: 8 / 10", 8.0),
            ("Score:8/10", 8.0),
            ("  SCORE:\t08.50/10  ", 8.5),
            ("Score: 11/10", 11.0),
            ("ſcore: 6/10", 6.0),
            ("-\nScore: 8\n/\n10", 8.0),
        ] {
            let response = format!("Summary.\n{line}\nVerdict: ready\n");
            assert_eq!(parse_score_verdict(&response), Ok((want, "ready".to_owned())), "{line:?}");
        }
    }

    #[test]
    fn accepted_verdict_lines() {
        for (line, want) in [
            ("Verdict: ready", "ready"),
            ("- verdict: Almost", "almost"),
            ("VERDICT: Not   Ready", "not ready"),
            ("Verdict: not\nready", "not ready"),
            ("Verdict: NOT\t\r\n  ready", "not ready"),
            ("* Verdıct:almoſt", "almoſt"),
        ] {
            let response = format!("Score: 8/10\n{line}");
            assert_eq!(parse_score_verdict(&response), Ok((8.0, want.to_owned())), "{line:?}");
        }
    }

    #[test]
    fn crlf_line_endings_are_accepted() {
        let response = "Review\r\n- Score: 9/10\r\nVerdict: almost\r\n\r\nThanks\r\n";
        assert_eq!(parse_score_verdict(response), Ok((9.0, "almost".to_owned())));
    }

    #[test]
    fn rejected_score_lines() {
        for line in [
            "**Score:** 8/10",
            "Final Score: 8/10",
            "Score: 8/10 (good)",
            "Score: .5/10",
            "Score: 8./10",
            "- - Score: 8/10",
            "Score: 8/100",
            "Score: -8/10",
            "Score: 8/10\rVerdict: almost",
            "Score: 8/10\nScore: 8/10",
            "Score: 8/10\n\n  score: 7/10",
        ] {
            let response = format!("{line}\nVerdict: ready\n");
            assert_eq!(parse_score_verdict(&response), Err(NOT_EXACTLY_ONE.to_owned()), "{line:?}");
        }
    }

    #[test]
    fn rejected_verdict_lines() {
        for line in [
            "Verdict: almost.",
            "Verdict: not",
            "Verdict: notready",
            "Verdict: maybe",
            "Verdict: ready\nverdict: ready",
            "",
        ] {
            let response = format!("Score: 8/10\n{line}\n");
            assert_eq!(parse_score_verdict(&response), Err(NOT_EXACTLY_ONE.to_owned()), "{line:?}");
        }
    }

    #[test]
    fn a_match_spanning_lines_is_counted_once() {
        // The bullet's `\s*` reaches the next line, so this is one Score field, not two.
        assert_eq!(parse_score_verdict("-\nScore: 8/10\nVerdict: ready"), Ok((8.0, "ready".to_owned())));
        // Trailing blank lines are swallowed up to the last newline; the next field still counts.
        assert_eq!(parse_score_verdict("Verdict: ready \n\n\nScore: 8/10\n\n"), Ok((8.0, "ready".to_owned())));
    }
}
