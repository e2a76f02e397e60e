//! `judge-evidence`: prove that a reviewer of another model family reviewed this
//! session's work. A drop-in for the reference `copilot_native_evidence.py` (same
//! subcommands, flags, artifacts, output bytes and exit codes) plus `gate`, the
//! reference `review_gate.py` table.

mod attest;
mod check;
mod decider;
mod git;
mod offline;
mod panel;
mod route;
mod trace;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use decider::{CallError, Decider, VerifyInput};
use judge_evidence::round_gate::{self, GateInput, NativeEvidence};
use judge_evidence::routing::{Backend, Directive, ErrorClass, Tier};
use judged_core::pyjson;
use judged_core::review_text::{self, ParseError};
use judged_core::rules::{self, Artifact, ArtifactKind, EvidenceError, IdentityAssurance};
use judged_io::files::{self, Destination};
use judged_io::round::{self, DEFAULT_WAIT_SECONDS};
use judged_protocol::ChallengeArgs;
use judged_protocol::autostart::{self, AutoStartError};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(name = "judge-evidence", version, about = "Cross-family reviewer evidence, witnessed by judged")]
struct Cli {
    /// Where decisions are made: `daemon` (judged, witnessed), `direct` (this process,
    /// from the log files), or `auto` (the daemon when its socket answers).
    #[arg(long, value_enum, env = "JUDGE_EVIDENCE_MODE", default_value = "auto", global = true)]
    mode: Mode,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Mode {
    Auto,
    Daemon,
    Direct,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print the marker for a root Bash call to record in the host's session log.
    Marker {
        #[arg(long)]
        binding: String,
    },
    /// Bind a fresh nonce to this session's marker call.
    Challenge(ChallengeCmd),
    /// Verify the nonce-bound reviewer lifecycle and write the evidence and response.
    Verify(VerifyCmd),
    /// Re-check a challenge against its log (or, with --public-key, its signature alone).
    ValidateChallenge {
        #[arg(long)]
        challenge: String,
        #[command(flatten)]
        keys: offline::KeyArgs,
    },
    /// Re-check evidence against its log as it is now (or, with --public-key, its
    /// signature alone).
    Validate {
        #[arg(long)]
        evidence: String,
        #[command(flatten)]
        keys: offline::KeyArgs,
    },
    /// The review-gate transition for one completed round (reference review_gate.py).
    Gate(GateArgs),
    /// Convene the cross-family jury on an artifact and print its packet (docs/spec/jury.md §4).
    Panel(PanelCmd),
    /// Which reviewer backend a review call uses, per the reviewer-routing document, or
    /// REVIEW_UNAVAILABLE with the reason.
    #[command(after_help = route::AFTER_HELP)]
    Route(RouteArgs),
    /// Print judge-evidence's shell completions.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write a review-tracing record (reference `save_trace.sh`) and journal it.
    Trace(Box<trace::TraceCmd>),
    /// Have judged sign that a commit holds a tree a cross-family review covered, and
    /// append the attestation to the commit's note under refs/notes/judged.
    Attest(attest::AttestCmd),
    /// Check that the commits of a range carry attestations of trusted witnesses that the
    /// policy counts (in CI); exit 0 only if it holds. Writes nothing.
    Check(check::CheckCmd),
}

#[derive(clap::Args)]
struct ChallengeCmd {
    #[arg(long)]
    output: String,
    #[arg(long)]
    binding: String,
    #[arg(long)]
    cwd: Option<String>,
    #[arg(long = "session-root")]
    session_root: Option<String>,
    #[arg(long = "max-age-seconds", default_value_t = 60, allow_negative_numbers = true)]
    max_age_seconds: i64,
    #[arg(long)]
    replace: bool,
    /// How long to wait for the host to persist the marker call (0..=60).
    #[arg(long = "wait-seconds", default_value_t = DEFAULT_WAIT_SECONDS, value_parser = clap::value_parser!(u64).range(0..=60))]
    wait_seconds: u64,
}

#[derive(clap::Args)]
struct VerifyCmd {
    #[arg(long)]
    challenge: String,
    #[arg(long)]
    output: String,
    #[arg(long = "response-output")]
    response_output: String,
    #[arg(long)]
    replace: bool,
    /// How long to wait for the host to persist the reviewer's lifecycle (0..=60).
    #[arg(long = "wait-seconds", default_value_t = DEFAULT_WAIT_SECONDS, value_parser = clap::value_parser!(u64).range(0..=60))]
    wait_seconds: u64,
    /// For a review no host records (an MCP reviewer tool, another command): the
    /// reviewer's model, on your word. The evidence says `identity_assurance:
    /// caller-declared`, and the gate accepts it only when configured to.
    #[arg(long = "declared-reviewer-model", value_name = "MODEL")]
    declared_reviewer_model: Option<String>,
}

/// `route`'s flags; `route.rs` turns them into a typed `judge_evidence::routing::RouteInput`.
#[derive(clap::Args)]
struct RouteArgs {
    /// The executor's model, as the caller declares it (required by `--reviewer copilot`;
    /// the native path uses the model the bound challenge's host event reports instead).
    #[arg(long = "executor-model")]
    executor_model: Option<String>,
    /// An explicit reviewer directive: it always wins, and skips the native probe.
    #[arg(long, value_parser = route::named_value!(Directive))]
    reviewer: Option<Directive>,
    /// The backends positively available (space- or comma-separated): an MCP tool that is
    /// registered, `copilot` = the Copilot CLI advertising --model, --effort and --allow-tool,
    /// `llm-chat` = the opt-in HTTP fallback enabled. Codex is assumed only where the
    /// document assumes it.
    #[arg(long, num_args = 1.., value_delimiter = ',', value_parser = route::named_value!(Backend, route::availables()))]
    available: Vec<Backend>,
    /// This round's challenge: native review when it revalidates (as `validate-challenge`)
    /// and binds a Copilot CLI session; a native fallback takes the executor from it.
    #[arg(long = "bound-challenge")]
    bound_challenge: Option<String>,
    /// How the `--attempted` call failed.
    #[arg(long = "error-class", requires = "attempted", value_parser = route::named_value!(ErrorClass))]
    error_class: Option<ErrorClass>,
    /// What failed: a backend name, or the Codex pair MODEL:EFFORT (`gpt-5.6-sol:ultra`).
    #[arg(long, requires = "error_class")]
    attempted: Option<String>,
    /// The error itself positively establishes that no model request was dispatched.
    #[arg(long = "not-dispatched", requires = "error_class")]
    not_dispatched: bool,
    /// The reviewer-invoking skill: it decides the tier and which backends are wired.
    #[arg(long, default_value = "auto-review-loop")]
    skill: String,
    /// Override the skill's tier (e.g. `regular` for a beast-mode axis probe).
    #[arg(long, value_parser = route::named_value!(Tier))]
    tier: Option<Tier>,
    /// An explicit Codex reviewer-model override (legacy/repro runs): no automatic chain.
    #[arg(long = "reviewer-model")]
    reviewer_model: Option<String>,
    /// The manual reviewer's response: its first line must be `Reviewer-Model: <id>`.
    #[arg(long = "manual-response")]
    manual_response: Option<String>,
    /// Where the custom-agent profiles of `--reviewer copilot` live.
    #[arg(long = "agents-dir", default_value = ".github/agents")]
    agents_dir: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct PanelCmd {
    /// The rubric (`custom` takes `--rubric-text`); an unknown slug lists the known ones.
    #[arg(long)]
    rubric: String,
    #[arg(long = "rubric-text")]
    rubric_text: Option<String>,
    /// The artifact to judge, from a file (`-` for stdin).
    #[arg(long = "artifact-file", conflicts_with = "artifact", required_unless_present = "artifact")]
    artifact_file: Option<String>,
    /// The artifact to judge, inline.
    #[arg(long)]
    artifact: Option<String>,
    /// The lens every juror judges as (the rubric's default otherwise).
    #[arg(long)]
    persona: Option<String>,
    /// The model that wrote the work: the tiebreaker must be of another family.
    #[arg(long = "author-model")]
    author_model: Option<String>,
    /// The project (jurors run there; its `.judged.toml` may hold the `[jury]`).
    #[arg(long)]
    cwd: Option<String>,
    /// Print the packet on one line instead of indented.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
struct GateArgs {
    #[arg(long = "round-backend", value_parser = route::round_backends())]
    round_backend: String,
    #[arg(long, allow_negative_numbers = true)]
    score: f64,
    #[arg(long, value_parser = ["almost", "not ready", "ready"])]
    verdict: String,
    #[arg(long = "requires-external-acquittal", overrides_with = "no_requires_external_acquittal")]
    requires_external_acquittal: bool,
    #[arg(long = "no-requires-external-acquittal")]
    no_requires_external_acquittal: bool,
    #[arg(long = "executor-model", default_value = "")]
    executor_model: String,
    #[arg(long = "reviewer-model", default_value = "")]
    reviewer_model: String,
    #[arg(long = "codex-available", overrides_with = "no_codex_available")]
    codex_available: bool,
    #[arg(long = "no-codex-available")]
    no_codex_available: bool,
    #[arg(long = "manual-available", overrides_with = "no_manual_available")]
    manual_available: bool,
    #[arg(long = "no-manual-available")]
    no_manual_available: bool,
    #[arg(long = "manual-identity-reported", overrides_with = "no_manual_identity_reported")]
    manual_identity_reported: bool,
    #[arg(long = "no-manual-identity-reported")]
    no_manual_identity_reported: bool,
    #[arg(long = "native-evidence", default_value = "")]
    native_evidence: String,
}

fn main() -> ExitCode {
    run(Cli::parse())
}

/// Run a command: the evidence commands print one line, or the reference's error object
/// with the refusal's exit code; `route`, `completions` and `trace` print their own.
fn run(cli: Cli) -> ExitCode {
    let mode = cli.mode;
    // Age checks use the time the command started, however long it waits for the host.
    let started = chrono::Utc::now();
    match cli.command {
        Cmd::Marker { binding } => {
            printed(rules::Binding::parse(&binding).map(|binding| pyjson::one_line(&rules::marker(&binding))))
        }
        Cmd::Challenge(args) => printed(challenge(mode, started, args)),
        Cmd::Verify(args) => printed(verify(mode, started, args)),
        Cmd::ValidateChallenge { challenge, keys } => {
            printed(validated(mode, ArtifactKind::Challenge, &challenge, &keys))
        }
        Cmd::Validate { evidence, keys } => printed(validated(mode, ArtifactKind::Evidence, &evidence, &keys)),
        Cmd::Gate(args) => printed(Ok(gate_line(mode, args))),
        Cmd::Panel(args) => printed(panel_packet(mode, args)),
        // `route` prints its decision whether routed or not, with its own exit codes.
        Cmd::Route(args) => route::main(mode, &args),
        Cmd::Completions { shell } => completions(shell),
        // `trace` answers as the reference does: `Error: …` and exit 1.
        Cmd::Trace(args) => trace::main(mode, &args),
        // `attest` prints what it attested, or why not, with its own exit codes.
        Cmd::Attest(args) => attest::main(mode, &args),
        // `check` needs no daemon: the repository and the trusted keys are enough.
        Cmd::Check(args) => check::main(&args),
    }
}

/// Print an evidence command's line, or its refusal as the reference does.
fn printed(result: rules::Result<String>) -> ExitCode {
    match result {
        Ok(output) => {
            println!("{output}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            let code = error.code as u8;
            let body = format!(
                "{{\"status\": \"error\", \"error\": {}, \"exit_code\": {code}}}",
                pyjson::ascii_only(&Value::String(error.message).to_string())
            );
            eprintln!("{body}");
            ExitCode::from(code)
        }
    }
}

fn completions(shell: clap_complete::Shell) -> ExitCode {
    // Into a buffer first: `| head` must not make it panic on a closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "judge-evidence", &mut script);
    let _ = std::io::Write::write_all(&mut std::io::stdout(), &script);
    ExitCode::SUCCESS
}

/// Run an operation where the chosen mode decides; `auto` falls back to direct mode with a
/// notice when no daemon answers.
fn with_decider<T>(mode: Mode, op: impl Fn(&Decider) -> Result<T, CallError>) -> rules::Result<T> {
    let unreachable = || match autostarted().err() {
        // `judged start` itself failed: advising it again would fail the same way.
        Some(failed @ AutoStartError::Failed { .. }) => {
            EvidenceError::evidence(format!("{failed}; fix that, or use --mode direct"))
        }
        why => EvidenceError::evidence(format!(
            "judged is not running ({}); start it with `judged start`, or use --mode direct",
            why.map(ToString::to_string).unwrap_or_default()
        )),
    };
    let decider = if mode == Mode::Direct { Decider::Direct } else { Decider::daemon() };
    // The daemon was reached and no evidence decision came back: exit 2, saying so.
    let transport = |error| EvidenceError::evidence(format!("judged: {error}"));
    let answer = match op(&decider) {
        // No daemon: start one (once per command), then ask it.
        Err(CallError::Unreachable) if mode != Mode::Direct && autostarted().is_ok() => op(&decider),
        answer => answer,
    };
    match answer {
        Ok(value) => Ok(value),
        Err(CallError::Evidence(error)) => Err(error),
        Err(CallError::Transport(error)) => Err(transport(error)),
        Err(CallError::Unreachable) if mode == Mode::Daemon => Err(unreachable()),
        Err(CallError::Unreachable) => {
            static NOTICE: std::sync::Once = std::sync::Once::new();
            NOTICE
                .call_once(|| eprintln!("judge-evidence: judged is not running; deciding in direct mode (no witness)"));
            op(&Decider::Direct).map_err(|e| match e {
                CallError::Evidence(error) => error,
                CallError::Transport(error) => transport(error),
                CallError::Unreachable => unreachable(),
            })
        }
    }
}

/// How long a command waits for a daemon it started (the catch-up of a large root first).
const AUTOSTART_WAIT: Duration = Duration::from_secs(30);

/// Start `judged` when its socket does not answer, once per command (a command asks
/// again while the host persists its log); why it was not, when it was not.
pub(crate) fn autostarted() -> Result<(), &'static AutoStartError> {
    static STARTED: std::sync::OnceLock<Result<(), AutoStartError>> = std::sync::OnceLock::new();
    STARTED.get_or_init(|| autostart::start_judged(AUTOSTART_WAIT)).as_ref().copied()
}

fn load_artifact(path: &str) -> rules::Result<Artifact> {
    let (resolved, bytes) = files::read_artifact(path)?;
    Artifact::parse(&resolved, &bytes)
}

/// Bind a fresh nonce to this session's marker call, write the challenge, and show it.
fn challenge(mode: Mode, started: chrono::DateTime<chrono::Utc>, args: ChallengeCmd) -> rules::Result<String> {
    let ChallengeCmd { output, binding, cwd, session_root, max_age_seconds, replace, wait_seconds } = args;
    let output = PathBuf::from(files::resolve(&output));
    let step = round::ChallengeStep {
        binding: &binding,
        max_age_seconds,
        output: Destination::Named(&output),
        replace,
        wait_seconds,
    };
    let cwd = files::resolve(&cwd.unwrap_or_else(|| ".".into()));
    // Resolved here, so the daemon (with its own cwd) reads the same root.
    let session_root = session_root.map(|root| files::resolve(&root));
    let challenge = round::challenge(&step, |binding| {
        let args = ChallengeArgs {
            binding: binding.to_string(),
            cwd: cwd.clone(),
            max_age_seconds,
            session_root: session_root.clone(),
            started_at: started,
            writes: vec![output.clone()],
        };
        with_decider(mode, |decider| decider.challenge(&args))
    })?;
    Ok(challenge.one_line())
}

/// Verify the reviewer's lifecycle, write the response and the evidence, and show it.
fn verify(mode: Mode, started: chrono::DateTime<chrono::Utc>, args: VerifyCmd) -> rules::Result<String> {
    let VerifyCmd { challenge: given, output, response_output, replace, wait_seconds, declared_reviewer_model } = args;
    let challenge_path = files::resolve(&given);
    let challenge = load_artifact(&given)?;
    let (output, response_output) = (files::resolve(&output), files::resolve(&response_output));
    let challenge_name = Path::new(&given).file_name().and_then(|n| n.to_str()).unwrap_or(&given);
    let step = round::VerifyStep {
        challenge_path: &challenge_path,
        output: Destination::Named(Path::new(&output)),
        response_output: Destination::Named(Path::new(&response_output)),
        replace,
        wait_seconds,
    };
    let args = VerifyInput {
        challenge: &challenge,
        challenge_name,
        response_path: &response_output,
        output: &output,
        started,
        declared_model: declared_reviewer_model.as_deref(),
    };
    let verified = round::verify(&step, || with_decider(mode, |b| b.verify(&args)))?;
    Ok(verified.evidence.one_line())
}

/// Convene the jury and show its packet. Like the reference, a jury that ran exits 0
/// whatever its verdict: the packet says it.
fn panel_packet(mode: Mode, args: PanelCmd) -> rules::Result<String> {
    let artifact = match (&args.artifact, &args.artifact_file) {
        (Some(text), _) => text.clone(),
        (None, Some(path)) if path == "-" => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|e| EvidenceError::evidence(format!("failed to read the artifact from stdin: {e}")))?;
            text
        }
        (None, Some(path)) => std::fs::read_to_string(path)
            .map_err(|e| EvidenceError::evidence(format!("failed to read --artifact-file {path}: {e}")))?,
        (None, None) => return Err(EvidenceError::evidence("give --artifact-file F or --artifact TEXT")),
    };
    let request = panel::PanelRequest {
        rubric: args.rubric,
        rubric_text: args.rubric_text,
        persona: args.persona,
        artifact,
        cwd: files::resolve(args.cwd.as_deref().unwrap_or(".")),
        author_model: args.author_model,
    };
    let answer = with_decider(mode, |d| d.panel(&request))?;
    Ok(if args.json { answer.packet } else { panel::indent(&answer.packet) })
}

/// Print a revalidated artifact with whether the daemon's witness was checked, and the
/// review's time where it was derived from the log (`reviewed_at_derived` says so; the
/// artifact's own fields are printed as they are). With public keys, its signature is
/// checked offline instead, whatever the mode.
fn validated(mode: Mode, kind: ArtifactKind, path: &str, keys: &offline::KeyArgs) -> rules::Result<String> {
    let artifact = load_artifact(path)?;
    if let Some(keys) = keys.keys()? {
        return offline::validate(kind, artifact, &keys).map_err(|e| e.about_artifact(&files::resolve(path)));
    }
    let validation =
        with_decider(mode, |b| b.validate(kind, &artifact)).map_err(|e| e.about_artifact(&files::resolve(path)))?;
    let mut shown = vec![("witness_checked", Value::from(validation.witness_checked))];
    if let Some(reviewed_at) = validation.derived_reviewed_at {
        shown.extend([("reviewed_at", reviewed_at.into()), ("reviewed_at_derived", true.into())]);
    }
    Ok(artifact.shown_with(shown))
}

fn gate_line(mode: Mode, args: GateArgs) -> String {
    let rea = args.requires_external_acquittal && !args.no_requires_external_acquittal;
    let native_evidence = if args.native_evidence.is_empty() {
        None
    } else {
        match round_gate::admit_native_evidence(&args.round_backend, rea, || {
            native_evidence(mode, &args.native_evidence)
        }) {
            Ok(evidence) => Some(evidence),
            Err(transition) => return pyjson::ascii_only(&pyjson::one_line(&transition.to_json())),
        }
    };
    let input = GateInput {
        backend: args.round_backend,
        score: args.score,
        verdict: args.verdict,
        requires_external_acquittal: rea,
        executor_model: args.executor_model,
        reviewer_model: args.reviewer_model,
        codex_available: args.codex_available && !args.no_codex_available,
        manual_available: args.manual_available && !args.no_manual_available,
        manual_identity_reported: args.manual_identity_reported && !args.no_manual_identity_reported,
        native_evidence,
    };
    pyjson::ascii_only(&pyjson::one_line(&round_gate::evaluate(&input).to_json()))
}

/// Why native evidence could not be loaded for `gate`; the gate prints the message as
/// the reason of a refused round.
#[derive(Debug)]
enum NativeEvidenceError {
    /// The evidence did not revalidate, or an artifact could not be read.
    Evidence(EvidenceError),
    /// The stored response (at this path) is not text.
    ResponseNotUtf8(String),
    /// The response has no single Score and Verdict.
    Response(ParseError),
}

impl std::fmt::Display for NativeEvidenceError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            NativeEvidenceError::Evidence(error) => f.write_str(&error.message),
            NativeEvidenceError::ResponseNotUtf8(path) => write!(f, "response is not UTF-8: {path}"),
            NativeEvidenceError::Response(error) => error.fmt(f),
        }
    }
}

impl From<EvidenceError> for NativeEvidenceError {
    fn from(error: EvidenceError) -> Self {
        NativeEvidenceError::Evidence(error)
    }
}

/// Revalidate native evidence and read the verdict from its bound response (§4.3).
fn native_evidence(mode: Mode, path: &str) -> Result<NativeEvidence, NativeEvidenceError> {
    let evidence = load_artifact(path)?;
    with_decider(mode, |b| b.validate(ArtifactKind::Evidence, &evidence))?;
    // A review only its caller vouches for is no host-event verification.
    if evidence.identity_assurance() != IdentityAssurance::HostRecorded {
        return Err(NativeEvidenceError::Evidence(EvidenceError::evidence(
            "native evidence must be of a host-recorded review; this one's reviewer is caller-declared",
        )));
    }
    // Validated: every way of reviewing requires these fields.
    let field = |value: Option<&str>| value.unwrap_or_default().to_owned();
    let response_path = field(evidence.response_path());
    let (_, bytes) = files::read_artifact(&response_path)?;
    // The response validate checked, and no other put there since: its verdict is what
    // counts, so it is read from bytes of the digest the evidence binds.
    let digest = judged_core::chain::to_hex(&judged_core::chain::sha256(&bytes));
    if evidence.response_sha256() != Some(digest.as_str()) {
        return Err(NativeEvidenceError::Evidence(EvidenceError::evidence(format!(
            "the response {response_path} changed after validate read it; run the gate again"
        ))));
    }
    let response = String::from_utf8(bytes).map_err(|_| NativeEvidenceError::ResponseNotUtf8(response_path))?;
    let (score, verdict) = review_text::parse_score_verdict(&response).map_err(NativeEvidenceError::Response)?;
    Ok(NativeEvidence {
        evidence_id: field(evidence.evidence_id()),
        executor_model: field(evidence.executor_model()),
        reviewer_model: field(evidence.reviewer_model()),
        score,
        verdict,
    })
}
