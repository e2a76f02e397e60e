//! The jury's answer: jury.md §4's packet, keys in the reference's order so its consumers
//! parse it, plus what judged adds (always after the reference's keys of the same object).
//!
//! serde_json here has no `preserve_order`, so a `Value` would sort keys; these structs
//! are serialized directly, and field order is key order.

use serde::Serialize;

use crate::cascade::{Agreement, ConfidenceTier, FinalVerdict};
use crate::codex_judge::CodexJudgeVerdict;
use crate::identity::IdentitySource;
use crate::verdict::{Verdict, VerdictFormat};

/// The `version` of packets this crate writes.
pub const VERSION: &str = "judged-jury/1";

/// One juror's line in the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JurorVerdict {
    Pass,
    Fail,
    Uncertain,
    Error,
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

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Juror {
    /// The configured (requested) model, as the reference names it.
    pub model: String,
    /// Derived from the configured model.
    pub family: &'static str,
    pub verdict: JurorVerdict,
    pub confidence: u8,
    pub flags: Vec<String>,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub latency_ms: u64,
    /// Dropped by [`Packet::silence`], as the reference's `--silent` does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_response: Option<String>,
    pub error: Option<String>,
    // judged's additions.
    pub name: String,
    pub model_requested: String,
    /// What the CLI's own record says answered; `None` when there was no record.
    pub model_reported: Option<String>,
    pub identity_source: Option<IdentitySource>,
    /// Program and arguments, which never hold the prompt.
    pub argv: Vec<String>,
    pub exit_code: Option<i32>,
    /// 2 when the first answer held no JSON and the juror was asked once more.
    pub attempts: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<CodexJudgeVerdict>,
}

impl Juror {
    /// Down jurors do not count toward a verdict or cross-family health.
    pub fn is_down(&self) -> bool {
        self.verdict.real().is_none()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cascade {
    pub stage_1_small_fish: Vec<Juror>,
    pub agreement: Agreement,
    pub confidence_tier: ConfidenceTier,
    pub escalated: bool,
    pub stage_2_tiebreaker: Option<Juror>,
    /// Why no tiebreaker ran although the cascade escalated (none could be cross-family).
    pub tiebreaker_unavailable: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DownLane {
    pub family: &'static str,
    pub model: String,
    pub reason: String,
    pub juror: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CrossFamily {
    pub distinct_families_returned: usize,
    pub degraded: bool,
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

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CutShort {
    pub juror: String,
    pub by: CutBy,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Packet {
    pub version: &'static str,
    pub rubric: String,
    pub persona: Option<String>,
    pub cascade: Cascade,
    pub final_verdict: FinalVerdict,
    pub final_confidence: u8,
    pub cross_family: CrossFamily,
    pub all_flags: Vec<String>,
    pub cost_usd_estimate: f64,
    pub cost_vs_naive_parallel_jury_ratio: Option<f64>,
    // judged's additions.
    pub format: VerdictFormat,
    /// The family of the work's author, which the tiebreaker had to avoid.
    pub author_family: Option<&'static str>,
    pub deadline_ms: u64,
    pub elapsed_ms: u64,
    pub cut_short: Vec<CutShort>,
}

impl Packet {
    /// Every juror that ran, stage 1 first.
    pub fn jurors(&self) -> impl Iterator<Item = &Juror> {
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
