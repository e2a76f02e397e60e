//! The jury's answer: docs/spec/jury.md §4's packet, keys in the reference's order so its consumers
//! parse it, plus what judged adds (always after the reference's keys of the same object).
//!
//! serde_json here has no `preserve_order`, so a `Value` would sort keys; these structs
//! are serialized directly, and field order is key order.

use serde::Serialize;

use crate::codex_judge::CodexJudgeVerdict;
use crate::identity::IdentitySource;
use crate::verdict::{Verdict, VerdictFormat};

/// The `version` of packets this crate writes.
pub const VERSION: &str = "judged-jury/1";

/// How stage 1's answers relate (the packet's `cascade.agreement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agreement {
    /// Every juror that answered gave the same verdict, none of them uncertain.
    Agree,
    /// Pass against fail, or any uncertain answer.
    Disagree,
    /// Fewer than two jurors answered: nothing to agree on.
    Insufficient,
}

/// Whether an agreement is confident enough to stand without a tiebreaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ConfidenceTier {
    /// Every agreeing juror's confidence reached the threshold: the verdict stands.
    #[serde(rename = "high")]
    High,
    /// They agreed, but at least one below the threshold: the tiebreaker decides.
    #[serde(rename = "low")]
    Low,
    /// There was no agreement to rate.
    #[serde(rename = "n/a")]
    NotApplicable,
}

/// The jury's verdict: a real one, or `error` when no verdict could be reached (the
/// cascade escalated and the tiebreaker was down or could not run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FinalVerdict {
    /// The artifact passes the rubric.
    Pass,
    /// It does not.
    Fail,
    /// The deciding juror could not tell.
    Uncertain,
    /// No verdict: a gate must not read this as pass.
    Error,
}

impl From<Verdict> for FinalVerdict {
    fn from(v: Verdict) -> FinalVerdict {
        match v {
            Verdict::Pass => FinalVerdict::Pass,
            Verdict::Fail => FinalVerdict::Fail,
            Verdict::Uncertain => FinalVerdict::Uncertain,
        }
    }
}

/// One juror's line in the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JurorVerdict {
    /// Answered: the artifact passes.
    Pass,
    /// Answered: it does not.
    Fail,
    /// Answered, without a verdict: escalates.
    Uncertain,
    /// Down: failed, answered unreadably, or its identity did not check out (`error` says).
    Error,
    /// Down: killed at a deadline.
    Timeout,
}

impl JurorVerdict {
    /// The real verdict, or `None` for a down juror (§2.9).
    pub fn real(self) -> Option<Verdict> {
        match self {
            JurorVerdict::Pass => Some(Verdict::Pass),
            JurorVerdict::Fail => Some(Verdict::Fail),
            JurorVerdict::Uncertain => Some(Verdict::Uncertain),
            JurorVerdict::Error | JurorVerdict::Timeout => None,
        }
    }
}

impl From<Verdict> for JurorVerdict {
    fn from(v: Verdict) -> JurorVerdict {
        match v {
            Verdict::Pass => JurorVerdict::Pass,
            Verdict::Fail => JurorVerdict::Fail,
            Verdict::Uncertain => JurorVerdict::Uncertain,
        }
    }
}

/// One juror's line: the reference's keys, then what judged adds about who answered.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JurorLine {
    /// The configured (requested) model, as the reference names it.
    pub model: String,
    /// Derived from the configured model.
    pub family: &'static str,
    /// What it answered, or why it is down.
    pub verdict: JurorVerdict,
    /// 0..=100; 0 for a down juror.
    pub confidence: u8,
    /// The juror's own remarks, as strings.
    pub flags: Vec<String>,
    /// The reference's estimate of the prompt's tokens (for the cost only).
    pub tokens_in: u64,
    /// The reference's estimate of the answer's tokens.
    pub tokens_out: u64,
    /// Wall time of the run, retries included.
    pub latency_ms: u64,
    /// Dropped by [`Packet::silence`], as the reference's `--silent` does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_response: Option<String>,
    /// Why the juror is down; `None` when it answered.
    pub error: Option<String>,
    // judged's additions.
    /// The configured name.
    pub name: String,
    /// The configured model again, under a name that pairs with `model_reported`.
    pub model_requested: String,
    /// What the CLI's own record says answered; `None` when there was no record.
    pub model_reported: Option<String>,
    /// Which record `model_reported` was read from.
    pub identity_source: Option<IdentitySource>,
    /// Program and arguments, which never hold the prompt.
    pub argv: Vec<String>,
    /// The CLI's exit status, when it exited with one.
    pub exit_code: Option<i32>,
    /// 2 when the first answer held no JSON and the juror was asked once more.
    pub attempts: u8,
    /// The whole codex-judge answer, when the rubric asked for that format.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<CodexJudgeVerdict>,
}

impl JurorLine {
    /// Down jurors do not count toward a verdict or cross-family health.
    pub fn is_down(&self) -> bool {
        self.verdict.real().is_none()
    }
}

/// How the verdict was reached: stage 1, and the tiebreaker if it escalated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cascade {
    /// Stage 1's jurors in configured order ("small fish": small, cheap models).
    pub stage_1_small_fish: Vec<JurorLine>,
    /// How their answers related.
    pub agreement: Agreement,
    /// Whether an agreement was confident enough to stand.
    pub confidence_tier: ConfidenceTier,
    /// Whether a tiebreaker was needed.
    pub escalated: bool,
    /// The tiebreaker's line, when one ran (or was cut short).
    pub stage_2_tiebreaker: Option<JurorLine>,
    /// Why no tiebreaker ran although the cascade escalated (none could be cross-family).
    pub tiebreaker_unavailable: Option<String>,
}

/// A down juror, as the health block lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DownLane {
    /// The family that is missing because of it.
    pub family: &'static str,
    /// Its configured model.
    pub model: String,
    /// Its error, else its first flag, else "no verdict returned".
    pub reason: String,
    /// Its name (judged's addition).
    pub juror: String,
}

/// Whether the jury was really cross-family: the one block a gate must read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CrossFamily {
    /// Distinct families among the jurors with a real verdict.
    pub distinct_families_returned: usize,
    /// Fewer than two families answered, or no cross-family tiebreaker could run: the
    /// verdict is not cross-family evidence.
    pub degraded: bool,
    /// Every down juror, in juror order.
    pub down_lanes: Vec<DownLane>,
}

/// Why a juror's run ended early.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CutBy {
    /// Its own `timeout_seconds`.
    JurorTimeout,
    /// The one deadline of the whole cascade.
    CascadeDeadline,
    /// The cascade deadline had passed before the tiebreaker could start.
    NotStarted,
}

/// A juror a deadline stopped, and whose.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CutShort {
    /// The juror's name.
    pub juror: String,
    /// Which deadline.
    pub by: CutBy,
}

/// The jury's whole answer (docs/spec/jury.md §4), serialized in this field order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Packet {
    /// [`VERSION`].
    pub version: &'static str,
    /// The rubric's slug.
    pub rubric: String,
    /// The persona every juror was asked to judge as, if any.
    pub persona: Option<String>,
    /// Every juror's line and how they were combined.
    pub cascade: Cascade,
    /// The verdict a gate acts on, together with `cross_family.degraded`.
    pub final_verdict: FinalVerdict,
    /// 0..=100, weighed as §3.2 says.
    pub final_confidence: u8,
    /// Whether two families really answered.
    pub cross_family: CrossFamily,
    /// Every juror's flags once, then the degraded banner.
    pub all_flags: Vec<String>,
    /// List-price estimate of this run in US dollars.
    pub cost_usd_estimate: f64,
    /// The estimate against three big-model calls; `None` without prices.
    pub cost_vs_naive_parallel_jury_ratio: Option<f64>,
    // judged's additions.
    /// The answer format the rubric asked for.
    pub format: VerdictFormat,
    /// The family of the work's author, which the tiebreaker had to avoid.
    pub author_family: Option<&'static str>,
    /// The cascade's deadline.
    pub deadline_ms: u64,
    /// How long the whole cascade took.
    pub elapsed_ms: u64,
    /// The jurors a deadline stopped.
    pub cut_short: Vec<CutShort>,
}

impl Packet {
    /// Every juror that ran, stage 1 first.
    pub fn jurors(&self) -> impl Iterator<Item = &JurorLine> {
        self.cascade.stage_1_small_fish.iter().chain(&self.cascade.stage_2_tiebreaker)
    }

    /// Drop every juror's `raw_response` (the reference's `--silent`).
    pub fn silence(&mut self) {
        let cascade = &mut self.cascade;
        for juror in cascade.stage_1_small_fish.iter_mut().chain(cascade.stage_2_tiebreaker.as_mut()) {
            juror.raw_response = None;
        }
    }
}
