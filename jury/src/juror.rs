//! One juror, end to end: prepare, run, retry once on an answer without JSON, parse, and
//! check who answered. The result is the juror's packet line; a juror never fails the
//! jury, it is *down* with the reason (docs/spec/jury.md §2.9).
//!
//! The identity rule: the answer counts only when the CLI's own record names a model, and
//! that model's family is the configured one. A reroute to another family, an impostor
//! model or a run without a record makes the juror down, so it can never make a
//! single-family jury look cross-family.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use judged_core::family::{self, Table};

use crate::config;
use crate::cost::estimate_tokens;
use crate::identity::IdentityError;
use crate::packet::{CutBy, JurorLine, JurorVerdict};
use crate::preset::{self, ModelEndpoint, PresetError};
use crate::rubric;
use crate::run::{self, Exit, Outcome};
use crate::verdict::{self, AnswerError, VerdictFormat};

/// How much of a failing CLI's output goes into the reason (the reference's 500).
const REASON_CHARS: usize = 500;

/// What every juror of one cascade shares.
pub struct Context<'a> {
    /// The working directory every juror runs in.
    pub project: &'a Path,
    /// The same prompt for every juror, sent on stdin.
    pub prompt: &'a str,
    /// How answers are read.
    pub format: VerdictFormat,
    /// Per juror name, a model server to use instead of the CLI's provider.
    pub endpoints: &'a BTreeMap<String, ModelEndpoint>,
    /// Bytes kept of each output stream.
    pub output_cap: usize,
    /// Paths no juror process may open ([`crate::run::Spawn::out_of_reach`]).
    pub out_of_reach: &'a [PathBuf],
}

/// Why a juror is down.
#[derive(Debug, thiserror::Error)]
pub enum Down {
    /// The juror's scratch home or config could not be set up.
    #[error("{0}")]
    Prepare(#[from] PresetError),
    /// The CLI could not be started.
    #[error("{program} spawn failed: {source}")]
    Spawn {
        /// The program, as configured or found on `PATH`.
        program: String,
        /// Why it did not start.
        source: io::Error,
    },
    /// Killed at a deadline.
    #[error("timeout after {}s ({})", (.after.as_millis() + 500) / 1000, match .by {
        CutBy::JurorTimeout => "its timeout_seconds",
        CutBy::CascadeDeadline | CutBy::NotStarted => "the cascade deadline",
    })]
    TimedOut {
        /// How long it had run.
        after: Duration,
        /// Whose deadline.
        by: CutBy,
    },
    /// A tiebreaker the deadline left no time for.
    #[error("the cascade deadline passed before this juror could start")]
    NotStarted,
    /// The CLI failed.
    #[error("{program} exit {}: {output}", exit_text(*.exit))]
    Exit {
        /// The program.
        program: String,
        /// How it ended.
        exit: Exit,
        /// The start of its output, for the reason.
        output: String,
    },
    /// It answered, but not in the rubric's format (even when asked again).
    #[error(transparent)]
    Answer(#[from] AnswerError),
    /// The model that answered could not be read back from the CLI's record.
    #[error("identity: {0}")]
    Identity(#[from] IdentityError),
    /// The record says a model of another family answered than the one configured.
    #[error(
        "identity: the run's record says {reported} answered (family {}), but this juror is \
         configured as {configured} (family {family})",
        reported_family.unwrap_or("unknown")
    )]
    OtherFamily {
        /// The model the record names.
        reported: String,
        /// Its family, if known.
        reported_family: Option<&'static str>,
        /// The configured model.
        configured: String,
        /// The configured model's family.
        family: &'static str,
    },
}

fn exit_text(exit: Exit) -> String {
    match exit {
        Exit::Code(code) => code.to_string(),
        Exit::Signal(signal) => format!("signal {signal}"),
        Exit::Unknown => "-1".to_owned(),
    }
}

/// The juror's packet line before it runs.
pub fn not_run(juror: &config::Juror) -> JurorLine {
    JurorLine {
        model: juror.model().to_owned(),
        family: juror.family,
        verdict: JurorVerdict::Error,
        confidence: 0,
        flags: Vec::new(),
        tokens_in: 0,
        tokens_out: 0,
        latency_ms: 0,
        raw_response: Some(String::new()),
        error: None,
        name: juror.name().to_owned(),
        model_requested: juror.model().to_owned(),
        model_reported: None,
        identity_source: None,
        argv: Vec::new(),
        exit_code: None,
        attempts: 0,
        judge: None,
    }
}

/// Mark `line` down for `why`.
pub fn down(mut line: JurorLine, why: &Down) -> JurorLine {
    line.verdict = match why {
        Down::TimedOut { .. } | Down::NotStarted => JurorVerdict::Timeout,
        _ => JurorVerdict::Error,
    };
    line.confidence = 0;
    line.flags.clear();
    line.judge = None;
    line.error = Some(why.to_string());
    line
}

/// Run `juror` until it answers, fails, or `cascade_deadline` (or its own timeout) passes.
/// Returns its packet line and, when it was killed at a deadline, which one.
pub fn run(juror: &config::Juror, context: &Context<'_>, cascade_deadline: Instant) -> (JurorLine, Option<CutBy>) {
    let started = Instant::now();
    let (deadline, by) = match juror.timeout().map(|t| started + t) {
        Some(own) if own < cascade_deadline => (own, CutBy::JurorTimeout),
        _ => (cascade_deadline, CutBy::CascadeDeadline),
    };
    let limit = Limit { deadline, by, budget: deadline.saturating_duration_since(started) };
    let mut line = not_run(juror);
    let mut prompt = context.prompt.to_owned();
    loop {
        line.attempts += 1;
        match attempt(juror, context, &prompt, limit, &mut line) {
            Ok(()) => return (line, None),
            Err(Down::Answer(e)) if e.is_not_json() && line.attempts == 1 && Instant::now() < deadline => {
                prompt = rubric::retry_prompt(context.prompt);
            }
            Err(why @ Down::TimedOut { .. }) => return (down(line, &why), Some(by)),
            Err(why) => return (down(line, &why), None),
        }
    }
}

/// When a juror's run must end, and which limit that is.
#[derive(Clone, Copy)]
struct Limit {
    deadline: Instant,
    by: CutBy,
    /// From the juror's start to `deadline`: what a timeout reports.
    budget: Duration,
}

/// One process run until the limit; fills `line` (tokens, latency, argv, answer) as it goes.
fn attempt(
    juror: &config::Juror,
    context: &Context<'_>,
    prompt: &str,
    limit: Limit,
    line: &mut JurorLine,
) -> Result<(), Down> {
    let endpoint = context.endpoints.get(juror.name());
    let mut prepared = preset::prepare(juror, prompt, context.project, endpoint)?;
    prepared.spawn.out_of_reach = context.out_of_reach.to_vec();
    line.argv = prepared.spawn.argv();
    let program = line.argv[0].clone();
    let finished = match run::run(&prepared.spawn, limit.deadline, context.output_cap) {
        Outcome::SpawnFailed(source) => return Err(Down::Spawn { program, source }),
        Outcome::TimedOut(f) => {
            line.latency_ms += millis(f.latency);
            return Err(Down::TimedOut { after: limit.budget, by: limit.by });
        }
        Outcome::ExitedNonZero(exit, f) => {
            line.latency_ms += millis(f.latency);
            line.exit_code = match exit {
                Exit::Code(code) => Some(code),
                Exit::Signal(_) | Exit::Unknown => None,
            };
            let output = prepared.failure(&f.stdout, &f.stderr).chars().take(REASON_CHARS).collect();
            return Err(Down::Exit { program, exit, output });
        }
        Outcome::Answered(f) => f,
    };
    line.latency_ms += millis(finished.latency);
    line.exit_code = Some(0);
    let stdout = String::from_utf8_lossy(&finished.stdout);
    let answer_text = prepared.answer(&stdout);
    line.tokens_in += estimate_tokens(prompt);
    line.tokens_out += estimate_tokens(&answer_text);
    line.raw_response = Some(answer_text.clone());
    let answer = verdict::parse(context.format, &answer_text)?;
    let stderr = String::from_utf8_lossy(&finished.stderr);
    let identity = prepared.identity(&stdout, &stderr, answer.model.as_deref())?;
    line.model_reported = Some(identity.model.clone());
    line.identity_source = Some(identity.source);
    let reported_family = family::family(&identity.model, Table::Gate);
    if reported_family != Some(juror.family) {
        return Err(Down::OtherFamily {
            reported: identity.model,
            reported_family,
            configured: juror.model().to_owned(),
            family: juror.family,
        });
    }
    line.verdict = answer.verdict.into();
    line.confidence = answer.confidence;
    line.flags = answer.flags;
    line.judge = answer.judge;
    Ok(())
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
