//! `judge-evidence trace`: the reference `save_trace.sh` record (docs/spec/evidence-protocol.md §5):
//! the trace files under `.aris/traces/`, and, with the daemon, a `review_traced` journal
//! event. Provenance is `judged_core::trace`'s: identities and `independence_verified` come
//! only from validated evidence (the daemon derives them itself when it journals).

use crate::Mode;
use crate::decider::{CallError, Decider};
use judged_core::files;
use judged_core::rules::{Artifact, ArtifactKind};
use judged_core::trace::{EvidenceFacts, Provenance, TraceInput};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `trace`'s flags, each taking a value (`save_trace.sh`'s).
#[derive(clap::Args)]
pub struct TraceCmd {
    #[arg(long)]
    skill: Option<String>,
    #[arg(long)]
    purpose: Option<String>,
    #[arg(long, default_value = "")]
    model: String,
    #[arg(long, default_value = "")]
    effort: String,
    #[arg(long = "fallback-reason", default_value = "")]
    fallback_reason: String,
    #[arg(long, default_value = "ok")]
    status: String,
    #[arg(long = "thread-id")]
    thread_id: Option<String>,
    #[arg(long, default_value = "")]
    prompt: String,
    #[arg(long, default_value = "")]
    response: String,
    #[arg(long = "prompt-file")]
    prompt_file: Option<PathBuf>,
    #[arg(long = "response-file")]
    response_file: Option<PathBuf>,
    /// `full`, `meta` or `off` (env `ARIS_TRACE_MODE`, default `full`).
    #[arg(long = "trace-mode", env = "ARIS_TRACE_MODE", default_value = "full", value_parser = ["full", "meta", "off"])]
    trace_mode: String,
    #[arg(long, default_value = "codex")]
    backend: String,
    #[arg(long)]
    tool: Option<String>,
    #[arg(long)]
    executor: Option<String>,
    #[arg(long = "executor-model", default_value = "")]
    executor_model: String,
    #[arg(long = "executor-family", default_value = "")]
    executor_family: String,
    #[arg(long = "reviewer-profile", default_value = "")]
    reviewer_profile: String,
    #[arg(long = "reviewer-family", default_value = "")]
    reviewer_family: String,
    #[arg(long = "requested-reviewer-model", default_value = "")]
    requested_reviewer_model: String,
    #[arg(long = "reported-reviewer-model", default_value = "")]
    reported_reviewer_model: String,
    #[arg(long = "independence-verified", default_value = "")]
    independence_verified: String,
    #[arg(long = "memory-hash", default_value = "")]
    memory_hash: String,
    #[arg(long = "native-evidence")]
    native_evidence: Option<String>,
}

/// Why a trace was not written (exit 1, `Error: …` on stderr, as the reference).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct TraceFailed(String);

/// Run `trace`; its own exit codes (0 written or off, 1 refused).
pub fn main(mode: Mode, args: &TraceCmd) -> ExitCode {
    match trace(mode, args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(TraceFailed(message)) => {
            eprintln!("Error: {message}");
            ExitCode::from(1)
        }
    }
}

fn none_if_empty(value: &str) -> Value {
    if value.is_empty() { Value::Null } else { Value::String(value.to_owned()) }
}

/// A file that exists overrides the inline value; read from a file, trailing newlines go
/// (the reference's command substitution).
fn text(inline: &str, file: Option<&Path>) -> String {
    match file.filter(|f| f.is_file()).and_then(|f| std::fs::read_to_string(f).ok()) {
        Some(read) => read.trim_end_matches('\n').to_owned(),
        None => inline.to_owned(),
    }
}

fn trace(mode: Mode, args: &TraceCmd) -> Result<(), TraceFailed> {
    let (Some(skill), Some(purpose)) = (args.skill.as_deref(), args.purpose.as_deref()) else {
        return Err(TraceFailed("--skill and --purpose are required".into()));
    };
    if args.trace_mode == "off" {
        return Ok(());
    }
    let native = args.backend.eq_ignore_ascii_case("copilot-native");
    let input = TraceInput {
        backend: args.backend.clone(),
        status: args.status.clone(),
        model: args.model.clone(),
        executor_model: args.executor_model.clone(),
        executor_family: args.executor_family.clone(),
        reviewer_family: args.reviewer_family.clone(),
        requested_reviewer_model: args.requested_reviewer_model.clone(),
        reported_reviewer_model: args.reported_reviewer_model.clone(),
        independence_verified: args.independence_verified.clone(),
    };
    let evidence = match &args.native_evidence {
        None => None,
        Some(path) => {
            let (resolved, bytes) = files::read_artifact(path).map_err(|e| TraceFailed(e.message))?;
            let artifact = Artifact::parse(&resolved, &bytes).map_err(|e| TraceFailed(e.message))?;
            let absolute = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
            Some((artifact, absolute.display().to_string()))
        }
    };
    let run_dir = run_dir(skill)?;
    let call_number = call_number(&run_dir);
    let traced = crate::with_decider(mode, |d| provenance(d, skill, purpose, &run_dir, call_number, &input, &evidence));
    let provenance = traced.map_err(|e| TraceFailed(e.message))?;
    for warning in &provenance.warnings {
        eprintln!("{warning}");
    }
    let prompt = text(&args.prompt, args.prompt_file.as_deref());
    let response = match &provenance.response_path {
        Some(path) => {
            std::fs::read_to_string(path).map_err(|e| TraceFailed(format!("cannot read the response {path}: {e}")))?
        }
        None => text(&args.response, args.response_file.as_deref()),
    };
    let executor =
        args.executor.clone().unwrap_or_else(|| if native { "copilot".into() } else { "claude-code".into() });
    let tool = args
        .tool
        .clone()
        .unwrap_or_else(|| if native { "task(agent_type=rubber-duck)".into() } else { "mcp__codex__codex".into() });
    let effort_unpinned = args.backend == "copilot" && !args.effort.eq_ignore_ascii_case("xhigh");
    let now = judged_core::timestamp::format_utc(chrono::Utc::now());
    let p = serde_json::to_value(&provenance).expect("provenance serializes");
    std::fs::create_dir_all(&run_dir).map_err(|e| TraceFailed(format!("cannot create {}: {e}", run_dir.display())))?;
    write_if_missing(
        &run_dir.join("run.meta.json"),
        &json!({
            "skill": skill, "run_id": run_dir.file_name().map(|n| n.to_string_lossy().into_owned()),
            "started_at": now, "executor": executor, "executor_model": p["executor_model"],
            "executor_model_source": p["executor_model_source"], "executor_family": p["executor_family"],
            "reviewer_model_source": p["reviewer_model_source"], "reviewer_family": p["reviewer_family"],
            "reviewer_backend": none_if_empty(&args.backend), "native_evidence_id": p["native_evidence_id"],
            "native_evidence_path": p["native_evidence_path"], "family_relation": p["family_relation"],
            "independence_verified": p["independence_verified"],
            "project_dir": std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
        }),
    )?;
    let prefix = format!("{call_number:03}-{purpose}");
    let mut request = json!({
        "call_number": call_number, "purpose": purpose, "timestamp": now, "tool": tool, "backend": args.backend,
        "model": provenance.model, "effort": args.effort, "effort_unpinned": effort_unpinned,
        "fallback_reason": args.fallback_reason, "status": args.status, "executor": executor,
        "executor_model": p["executor_model"], "executor_model_source": p["executor_model_source"],
        "executor_family": p["executor_family"], "reviewer_model_source": p["reviewer_model_source"],
        "reviewer_family": p["reviewer_family"], "reviewer_profile": none_if_empty(&args.reviewer_profile),
        "requested_reviewer_model": none_if_empty(&args.requested_reviewer_model),
        "reported_reviewer_model": p["reported_reviewer_model"], "native_evidence_id": p["native_evidence_id"],
        "native_evidence_path": p["native_evidence_path"], "family_relation": p["family_relation"],
        "independence_verified": p["independence_verified"], "memory_hash": none_if_empty(&args.memory_hash),
    });
    let body = request.as_object_mut().expect("an object literal");
    if args.trace_mode == "full" {
        body.insert("prompt".into(), format!("{prompt}\n").into());
        write(&run_dir.join(format!("{prefix}.response.md")), response.as_bytes())?;
    } else {
        body.insert("prompt_length".into(), prompt.chars().count().into());
        body.insert("response_length".into(), response.chars().count().into());
    }
    write(&run_dir.join(format!("{prefix}.request.json")), pretty(&request).as_bytes())?;
    let meta = json!({
        "call_number": call_number, "purpose": purpose, "timestamp": now, "thread_id": args.thread_id,
        "model": provenance.model, "model_family": p["reviewer_family"], "effort": args.effort,
        "effort_unpinned": effort_unpinned, "fallback_reason": args.fallback_reason, "status": args.status,
        "executor": executor, "executor_model": p["executor_model"], "executor_model_source": p["executor_model_source"],
        "executor_family": p["executor_family"], "reviewer_model_source": p["reviewer_model_source"],
        "requested_reviewer_model": none_if_empty(&args.requested_reviewer_model),
        "reported_reviewer_model": p["reported_reviewer_model"], "native_evidence_id": p["native_evidence_id"],
        "native_evidence_path": p["native_evidence_path"], "family_relation": p["family_relation"],
        "independence_verified": p["independence_verified"], "reviewer_profile": none_if_empty(&args.reviewer_profile),
        "memory_hash": none_if_empty(&args.memory_hash),
    });
    write(&run_dir.join(format!("{prefix}.meta.json")), pretty(&meta).as_bytes())?;
    let events = Path::new(".aris/meta");
    if events.is_dir() {
        let event = json!({
            "event": "review_trace", "skill": skill, "purpose": purpose, "thread_id": args.thread_id,
            "trace_path": format!("{}/", run_dir.display()), "backend": args.backend, "tool": tool, "executor": executor,
            "executor_model": p["executor_model"], "executor_model_source": p["executor_model_source"],
            "executor_family": p["executor_family"], "reviewer_model_source": p["reviewer_model_source"],
            "reviewer_family": p["reviewer_family"], "native_evidence_id": p["native_evidence_id"],
            "native_evidence_path": p["native_evidence_path"], "family_relation": p["family_relation"],
            "effort_unpinned": effort_unpinned, "independence_verified": p["independence_verified"],
            "memory_hash": none_if_empty(&args.memory_hash), "status": args.status,
        });
        // The reference ignores errors here too: the trace itself is written.
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(events.join("events.jsonl"))
            .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{event}\n").as_bytes()));
    }
    eprintln!("Trace saved: {}/{prefix}", run_dir.display());
    Ok(())
}

/// The provenance: derived by the daemon (which validates the evidence and journals the
/// record), or here in direct mode after validating the evidence against its logs.
fn provenance(
    decider: &Decider,
    skill: &str,
    purpose: &str,
    run_dir: &Path,
    call_number: u32,
    input: &TraceInput,
    evidence: &Option<(Map<String, Value>, String)>,
) -> Result<Provenance, CallError> {
    match decider {
        Decider::Daemon(socket) => {
            let args = judged_protocol::TraceArgs {
                skill: skill.to_owned(),
                purpose: purpose.to_owned(),
                trace_path: format!("{}/", run_dir.display()),
                call_number,
                input: input.clone(),
                evidence: evidence.as_ref().map(|(artifact, _)| artifact.clone()),
                evidence_path: evidence.as_ref().map(|(_, path)| path.clone()),
            };
            let reply: judged_protocol::TraceReply = Decider::call(socket, judged_protocol::Request::Trace(args))?;
            Ok(reply.provenance)
        }
        Decider::Direct => {
            let facts = match evidence {
                None => None,
                Some((artifact, path)) => {
                    decider.validate(ArtifactKind::Evidence, artifact).map_err(|e| match e {
                        CallError::Evidence(error) => CallError::Evidence(judged_core::rules::EvidenceError::evidence(
                            format!("native Copilot evidence validation failed: {}", error.message),
                        )),
                        other => other,
                    })?;
                    Some(EvidenceFacts::of(artifact, path.clone()).map_err(CallError::Evidence)?)
                }
            };
            judged_core::trace::provenance(input, facts.as_ref())
                .map_err(|e| CallError::Evidence(judged_core::rules::EvidenceError::evidence(e.to_string())))
        }
    }
}

/// `.aris/traces/<skill>/<YYYY-MM-DD>_run<NN>` (local date): the first with a
/// `run.meta.json`, skipping others, else the first free one (created only once the
/// trace is accepted, so a refused one leaves nothing behind).
fn run_dir(skill: &str) -> Result<PathBuf, TraceFailed> {
    let day = chrono::Local::now().format("%Y-%m-%d");
    (1..=99)
        .map(|n| PathBuf::from(format!(".aris/traces/{skill}/{day}_run{n:02}")))
        .find(|dir| dir.join("run.meta.json").is_file() || !dir.exists())
        .ok_or_else(|| TraceFailed(format!("no free run directory under .aris/traces/{skill} for {day}")))
}

/// One more than the `*.request.json` files already in `run_dir`.
fn call_number(run_dir: &Path) -> u32 {
    let requests = std::fs::read_dir(run_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".request.json"))
        .count();
    u32::try_from(requests).unwrap_or(u32::MAX - 1) + 1
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("a Value serializes");
    text.push('\n');
    text
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), TraceFailed> {
    std::fs::write(path, bytes).map_err(|e| TraceFailed(format!("cannot write {}: {e}", path.display())))
}

fn write_if_missing(path: &Path, value: &Value) -> Result<(), TraceFailed> {
    if path.exists() { Ok(()) } else { write(path, pretty(value).as_bytes()) }
}
