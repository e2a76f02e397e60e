//! The driver: stage 1 in parallel, the tiebreaker when needed, all under one deadline.
//!
//! The reference ran stage 1 and stage 2 each with their own 120 s timeout, so a slow
//! escalation took up to 240 s while its hook was killed at 90 s (docs/spec/jury.md §6.3). Here the
//! deadline is set once, when the jury is convened; every juror's run is bounded by it
//! (and by its own timeout, when shorter), the tiebreaker gets only what is left, and a
//! tiebreaker the deadline leaves no time for is reported as cut short, not started late.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Instant;

use judged_core::family::{self, Table};

use crate::cascade;
use crate::config::Jury;
use crate::cost;
use crate::juror::{self, Context, Down};
use crate::packet::{self, Agreement, Cascade, CutBy, CutShort, JurorVerdict, Packet};
use crate::preset::ModelEndpoint;
use crate::rubric::Rubric;

/// Default cap on each of a juror's stdout and stderr.
pub const DEFAULT_OUTPUT_CAP: usize = 4 << 20;

/// What the jury judges.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// What the artifact must pass.
    pub rubric: &'a Rubric,
    /// `--persona`; blank means the rubric's default.
    pub persona: Option<&'a str>,
    /// The text under judgment, put into every juror's prompt.
    pub artifact: &'a str,
    /// Where jurors run (read-only).
    pub project: &'a Path,
    /// The model that wrote the work; the tiebreaker must be of another family.
    pub author_model: Option<&'a str>,
}

/// Knobs the caller sets, not the user's config.
#[derive(Clone, Debug)]
pub struct Options {
    /// Per juror name: a model server to use instead of the CLI's provider.
    pub endpoints: BTreeMap<String, ModelEndpoint>,
    /// Bytes kept of each of a juror's stdout and stderr, so a runaway CLI cannot
    /// exhaust memory.
    pub output_cap: usize,
    /// Paths no juror process may open: a witness account's key and store
    /// ([`judged_io::sandbox`]). A juror that cannot be kept from them is down.
    pub out_of_reach: Vec<PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options { endpoints: BTreeMap::new(), output_cap: DEFAULT_OUTPUT_CAP, out_of_reach: Vec::new() }
    }
}

/// Stage of the cascade a juror runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// The parallel first round.
    One,
    /// The one juror asked after an escalation.
    Tiebreaker,
}

/// Live progress, for a terminal or a log; called from the jurors' threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Progress<'a> {
    /// A juror's process is about to start.
    Started {
        /// The juror's name.
        juror: &'a str,
        /// Which stage it runs in.
        stage: Stage,
    },
    /// A juror is done, answered or down.
    Finished {
        /// The juror's name.
        juror: &'a str,
        /// Its line's verdict (`error`/`timeout` when down).
        verdict: JurorVerdict,
        /// How long it ran.
        latency_ms: u64,
    },
    /// Stage 1 did not settle it.
    Escalated {
        /// Why: how stage 1's answers related.
        agreement: Agreement,
        /// The tiebreaker chosen, or `None` when none could be cross-family.
        tiebreaker: Option<&'a str>,
    },
}

/// Run the jury on `request` and return its packet. Never fails: every failure is a down
/// juror, an `error` verdict or a degraded health block in the packet.
pub fn convene(
    jury: &Jury,
    request: &Request<'_>,
    options: &Options,
    progress: &(dyn Fn(&Progress<'_>) + Sync),
) -> Packet {
    let started = Instant::now();
    let deadline = started + jury.deadline;
    let persona = request.rubric.persona(request.persona);
    let prompt = request.rubric.prompt(persona.as_deref(), request.artifact);
    let context = Context {
        project: request.project,
        prompt: &prompt,
        format: request.rubric.format(),
        endpoints: &options.endpoints,
        output_cap: options.output_cap,
        out_of_reach: &options.out_of_reach,
    };
    let run = |j: &crate::config::Juror, stage| {
        progress(&Progress::Started { juror: j.name(), stage });
        let (line, cut) = juror::run(j, &context, deadline);
        progress(&Progress::Finished { juror: j.name(), verdict: line.verdict, latency_ms: line.latency_ms });
        (line, cut.map(|by| CutShort { juror: j.name().to_owned(), by }))
    };

    let stage_1_runs: Vec<_> = thread::scope(|s| {
        let handles: Vec<_> = jury.stage_1.iter().map(|j| s.spawn(move || run(j, Stage::One))).collect();
        handles.into_iter().zip(&jury.stage_1).map(|(h, j)| h.join().unwrap_or_else(|_| panicked(j))).collect()
    });
    let (stage_1, cuts): (Vec<_>, Vec<_>) = stage_1_runs.into_iter().unzip();
    let mut cut_short: Vec<CutShort> = cuts.into_iter().flatten().collect();

    let author = request.author_model.and_then(|m| family::family(m, Table::Gate));
    let stage = cascade::aggregate(&stage_1, jury.threshold);
    let (mut tiebreaker, mut unavailable) = (None, None);
    if stage.escalate {
        match cascade::choose_tiebreaker(&jury.tiebreakers, author, &stage) {
            Ok(j) => {
                progress(&Progress::Escalated { agreement: stage.agreement, tiebreaker: Some(j.name()) });
                let (line, cut) = if Instant::now() < deadline { run(j, Stage::Tiebreaker) } else { not_started(j) };
                cut_short.extend(cut);
                tiebreaker = Some(line);
            }
            Err(none) => {
                progress(&Progress::Escalated { agreement: stage.agreement, tiebreaker: None });
                unavailable = Some(none.to_string());
            }
        }
    }

    let (final_verdict, final_confidence) = cascade::final_verdict(&stage_1, &stage, tiebreaker.as_ref());
    let ran: Vec<&packet::JurorLine> = stage_1.iter().chain(&tiebreaker).collect();
    let cross_family = cascade::cross_family(&ran, unavailable.is_some());
    let all_flags = cascade::all_flags(&ran, &cross_family, unavailable.as_deref());
    let cost = cost_of(jury, &ran, &prompt);
    Packet {
        version: packet::VERSION,
        rubric: request.rubric.slug().to_owned(),
        persona,
        cascade: Cascade {
            stage_1_small_fish: stage_1,
            agreement: stage.agreement,
            confidence_tier: stage.confidence_tier,
            escalated: stage.escalate,
            stage_2_tiebreaker: tiebreaker,
            tiebreaker_unavailable: unavailable,
        },
        final_verdict,
        final_confidence,
        cross_family,
        all_flags,
        cost_usd_estimate: cost.usd,
        cost_vs_naive_parallel_jury_ratio: cost.vs_naive_ratio,
        format: request.rubric.format(),
        author_family: author,
        deadline_ms: u64::try_from(jury.deadline.as_millis()).unwrap_or(u64::MAX),
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        cut_short,
    }
}

/// What the jurors that ran cost at their configured prices, against a parallel jury of
/// the priciest juror configured.
fn cost_of(jury: &Jury, ran: &[&packet::JurorLine], prompt: &str) -> cost::Cost {
    let configured = || jury.stage_1.iter().chain(&jury.tiebreakers);
    let price_of = |name: &str| configured().find(|j| j.name() == name)?.config.price;
    let priciest = configured()
        .filter_map(|j| j.config.price)
        .max_by(|a, b| (a.input_per_mtok + a.output_per_mtok).total_cmp(&(b.input_per_mtok + b.output_per_mtok)));
    cost::estimate(ran, price_of, prompt, priciest)
}

/// A tiebreaker the deadline left no time to start.
fn not_started(j: &crate::config::Juror) -> (packet::JurorLine, Option<CutShort>) {
    let cut = CutShort { juror: j.name().to_owned(), by: CutBy::NotStarted };
    (juror::down(juror::not_run(j), &Down::NotStarted), Some(cut))
}

/// A juror thread that panicked is a down juror, not a crashed daemon.
fn panicked(j: &crate::config::Juror) -> (packet::JurorLine, Option<CutShort>) {
    let mut line = juror::not_run(j);
    line.error = Some("internal error: the juror's thread panicked".to_owned());
    (line, None)
}
