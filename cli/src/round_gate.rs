//! The round gate: the stop/continue/escalate table of `review_gate.py` for one
//! completed review round (`docs/spec/evidence-protocol.md` §4).
//!
//! The orchestrator may stop a review loop only when this table says so, which is why it
//! is executable rather than prose. Everything here is pure: the caller loads native
//! evidence (validate, read the response, [`parse_score_verdict`]) and hands the result
//! in, and [`admit_native_evidence`] turns the caller's load into the pre-checks of the
//! reference `main`. Families are always derived from model strings, never declared.
//!
//! Not to be confused with the daemon's hook gate, which decides whether a host may finish
//! a task; this table only advises the review loop what to do after a round.
//!
//! [`parse_score_verdict`]: judged_core::review_text::parse_score_verdict

use crate::routing::Backend;
use judged_core::family::{Table, family};
use judged_core::review_text::{is_positive, is_py_space};
use serde_json::{Value, json};

/// What the orchestrator does next. `ReviewUnavailable` is terminal for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextStep {
    /// The review is done: the work may go on.
    Stop,
    /// Review again, with `next_backend`.
    Continue,
    /// Hand the verdict to a finalizer of another family (`next_backend`).
    Escalate,
    /// No review the gate can accept is possible; the loop must not claim one.
    ReviewUnavailable,
}

impl NextStep {
    /// The reference's spelling in the output object.
    pub fn as_str(self) -> &'static str {
        match self {
            NextStep::Stop => "stop",
            NextStep::Continue => "continue",
            NextStep::Escalate => "escalate",
            NextStep::ReviewUnavailable => "review_unavailable",
        }
    }
}

/// How far the executor/reviewer identities behind a transition can be trusted: the round
/// gate's `identity_assurance`, the reference's five values. (Evidence says how its
/// reviewer's identity is known with [`judged_core::rules::IdentityAssurance`]: host-recorded
/// evidence admitted here is `HostEventVerified`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransitionAssurance {
    /// The backend's old contract never asked who the executor was.
    NotRequired,
    /// The models are as the caller declared them; nothing checked them.
    CallerDeclared,
    /// The host's own session log names both models (copilot-native evidence).
    HostEventVerified,
    /// The identities could not be established (unknown backend, family or state).
    Unverified,
    /// The identities were checked and disqualify the round (same family, mismatch).
    Failed,
}

impl TransitionAssurance {
    /// The reference's spelling in the output object (`identity_assurance`).
    pub fn as_str(self) -> &'static str {
        match self {
            TransitionAssurance::NotRequired => "not_required",
            TransitionAssurance::CallerDeclared => "caller_declared",
            TransitionAssurance::HostEventVerified => "host_event_verified",
            TransitionAssurance::Unverified => "unverified",
            TransitionAssurance::Failed => "failed",
        }
    }
}

/// What a revalidated copilot-native evidence artifact and its response say (§4.3 step 5).
#[derive(Clone, Debug, PartialEq)]
pub struct NativeEvidence {
    /// The evidence's `evidence_id`, named in the reason of a native transition.
    pub evidence_id: String,
    /// Host-reported models; for copilot-native they replace the caller's declarations.
    pub executor_model: String,
    /// The reviewer sub-agent's model, as the host resolved it.
    pub reviewer_model: String,
    /// From [`parse_score_verdict`](judged_core::review_text::parse_score_verdict) on the
    /// stored response.
    pub score: f64,
    /// The response's verdict, normalized by the parser.
    pub verdict: String,
}

/// One completed review round, as the orchestrator declares it (the CLI flags of §4.1).
///
/// `backend` and `verdict` stay raw so that unknown values reach the table and are
/// refused there (rows 1 and 2) with the caller's own spelling in the reason.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GateInput {
    /// `--round-backend`, as given.
    pub backend: String,
    /// `--score`, any float: row 3 refuses what is not finite or not in 1..10.
    pub score: f64,
    /// `--verdict`, as given.
    pub verdict: String,
    /// Set by an earlier `escalate`: only a codex or manual finalizer may stop the loop.
    pub requires_external_acquittal: bool,
    /// Caller-declared models; ignored for copilot-native, whose evidence names them.
    pub executor_model: String,
    /// The caller-declared reviewer model (see `executor_model`).
    pub reviewer_model: String,
    /// Whether a codex finalizer can be run, should a copilot round escalate.
    pub codex_available: bool,
    /// Whether a manual finalizer can be asked, should a copilot round escalate.
    pub manual_available: bool,
    /// Whether a manual verdict came with the reviewer's model (required to count).
    pub manual_identity_reported: bool,
    /// Loaded evidence, through [`admit_native_evidence`] when the caller was given a path.
    pub native_evidence: Option<NativeEvidence>,
}

/// The gate's answer. Callers act on everything but `reason`, which is for humans.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// What the loop does next.
    pub decision: NextStep,
    /// Who reviews next, on `continue` or `escalate`.
    pub next_backend: Option<Backend>,
    /// Whether only a codex or manual finalizer may now stop the loop; the orchestrator
    /// carries it into the next round.
    pub requires_external_acquittal: bool,
    /// How far the identities behind this decision can be trusted.
    pub identity_assurance: TransitionAssurance,
    /// Why, in the reference's words; callers must never parse it.
    pub reason: String,
}

impl Transition {
    fn new(
        decision: NextStep,
        next_backend: Option<Backend>,
        requires_external_acquittal: bool,
        identity_assurance: TransitionAssurance,
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

fn unavailable(rea: bool, assurance: TransitionAssurance, reason: impl Into<String>) -> Transition {
    Transition::new(NextStep::ReviewUnavailable, None, rea, assurance, reason)
}

/// Stopping always clears the finalizer obligation: the loop is over.
fn stop(assurance: TransitionAssurance, reason: impl Into<String>) -> Transition {
    Transition::new(NextStep::Stop, None, false, assurance, reason)
}

/// The reference `main`'s pre-checks for a native evidence path (§4.1, checks 1 and 2).
///
/// Evidence is only loaded for a copilot-native round, so `load` (validation, response
/// read and [`parse_score_verdict`]) is not called otherwise; any load error fails closed
/// with its message. The backend is compared normalized, like the table, so that a
/// spelling the table accepts is not refused here.
///
/// [`parse_score_verdict`]: judged_core::review_text::parse_score_verdict
pub fn admit_native_evidence<E: std::fmt::Display>(
    backend: &str,
    requires_external_acquittal: bool,
    load: impl FnOnce() -> Result<NativeEvidence, E>,
) -> Result<NativeEvidence, Transition> {
    let refuse = |reason: String| unavailable(requires_external_acquittal, TransitionAssurance::Failed, reason);
    if backend_named(backend) != Some(Backend::CopilotNative) {
        return Err(refuse("native Copilot evidence is valid only for --round-backend copilot-native".to_owned()));
    }
    load().map_err(|message| refuse(format!("invalid native Copilot evidence: {message}")))
}

/// Who reviewed a round (`--round-backend`, a [`Backend`]) decides how far the round's
/// claimed identities can be trusted, and so which rows apply: `codex` is the default
/// reviewer and a finalizer after an `escalate`; `copilot-native` is the host's rubber-duck
/// sub-agent, with evidence of who it was; `copilot` (the compatibility drive mode),
/// `llm-chat` (an HTTP reviewer) and `manual` (a verdict handed in by hand, which must
/// report its model) have only declared identities, so a positive verdict escalates to a
/// finalizer instead of stopping; `agy` and `oracle-pro`, reviewers from before Copilot,
/// stop the loop on a positive verdict by the old contract but cannot finalize.
///
/// The transition for one completed round: rows 1–32 of §4.2, in the reference's order.
pub fn evaluate(input: &GateInput) -> Transition {
    use Backend::{Agy, Codex, Copilot, CopilotNative, LlmChat, Manual, OraclePro};
    use TransitionAssurance::{CallerDeclared, Failed, NotRequired, Unverified};

    let rea = input.requires_external_acquittal;
    let score = input.score;
    let Some(backend) = backend_named(&input.backend) else {
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

    let positive = is_positive(score, &verdict);
    let relation = || Relation::of(&input.executor_model, &input.reviewer_model);
    match backend {
        CopilotNative => native(input, &verdict, positive),
        Copilot => copilot(input, positive),
        other if !positive => {
            Transition::new(NextStep::Continue, Some(other), rea, Unverified, "positive threshold not met")
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
            TransitionAssurance::Unverified,
            "invalid state: native Copilot review cannot inherit a compatibility-finalizer obligation",
        );
    }
    let Some(evidence) = &input.native_evidence else {
        return unavailable(
            false,
            TransitionAssurance::Unverified,
            "native Copilot round is missing host-event evidence",
        );
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
        return unavailable(false, TransitionAssurance::Failed, reason);
    }
    let id = &evidence.evidence_id;
    if positive {
        stop(
            TransitionAssurance::HostEventVerified,
            format!("native cross-family reviewer {id} returned a host-bound positive verdict"),
        )
    } else {
        Transition::new(
            NextStep::Continue,
            Some(Backend::CopilotNative),
            false,
            TransitionAssurance::HostEventVerified,
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
            TransitionAssurance::Unverified,
            "invalid state: copilot cannot resume after finalizer escalation",
        );
    }
    if !positive {
        let reason = "copilot drive verdict is not positive";
        return Transition::new(
            NextStep::Continue,
            Some(Backend::Copilot),
            false,
            TransitionAssurance::Unverified,
            reason,
        );
    }
    let Some(executor) = family(&input.executor_model, Table::Gate) else {
        return unavailable(
            false,
            TransitionAssurance::Unverified,
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
            NextStep::Escalate,
            Some(next),
            true,
            TransitionAssurance::CallerDeclared,
            "copilot is drive-only; a positive verdict requires an external finalizer",
        ),
        Err(reason) => unavailable(false, TransitionAssurance::CallerDeclared, reason),
    }
}

/// Row 31: a policy-approved finalizer discharges the obligation set by `escalate`.
fn finalizer_stop() -> Transition {
    stop(
        TransitionAssurance::CallerDeclared,
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

/// `value.strip().lower()`, the reference's normalization of backend and verdict.
/// The backend `--round-backend` names, normalized as the reference does (Python's
/// `strip()` takes more than Rust's `trim()`: `\x1c`–`\x1f` too).
fn backend_named(name: &str) -> Option<Backend> {
    Backend::parse(&normalized(name))
}

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
    use NextStep::*;
    use TransitionAssurance::*;
    use judged_core::review_text::ParseError;

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
            judged_core::pyjson::one_line(&continued),
            r#"{"decision": "continue", "identity_assurance": "unverified", "next_backend": "codex", "reason": "positive threshold not met", "requires_external_acquittal": false}"#
        );
        assert_eq!(evaluate(&round("codex", 8.0, "ready")).to_json()["next_backend"], Value::Null);
    }

    #[test]
    fn native_evidence_is_admitted_only_for_copilot_native() {
        let loaded = evidence(CLAUDE, GPT, 8.0, "ready");
        assert_eq!(admit_native_evidence::<ParseError>(" Copilot-Native", false, || Ok(loaded.clone())), Ok(loaded));

        let refused = admit_native_evidence::<ParseError>("codex", true, || panic!("must not load")).unwrap_err();
        assert_eq!(
            (refused.decision, refused.next_backend, refused.requires_external_acquittal, refused.identity_assurance),
            (ReviewUnavailable, None, true, Failed)
        );
        assert_eq!(refused.reason, "native Copilot evidence is valid only for --round-backend copilot-native");

        let failed = admit_native_evidence("copilot-native", false, || Err(ParseError::NotExactlyOne)).unwrap_err();
        assert_eq!((failed.decision, failed.identity_assurance), (ReviewUnavailable, Failed));
        assert_eq!(
            failed.reason,
            "invalid native Copilot evidence: native reviewer response must contain exactly one anchored Score and Verdict field"
        );
    }
}
