//! `judge-evidence trace`: the reference `save_trace.sh` record (docs/spec/evidence-protocol.md §5):
//! the trace files under `.aris/traces/`, and, with the daemon, a `review_traced` journal
//! event. Provenance is `judged_core::trace`'s: identities and `independence_verified` come
//! only from validated evidence (the daemon derives them itself when it journals).

use crate::Mode;
use crate::decider::{CallError, Decider};
use judged_core::rules::{Artifact, ArtifactKind};
use judged_core::trace::{EvidenceFacts, Provenance, TraceInput};
use judged_io::files;
use serde_json::{Value, json};
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
    let input = trace_input(args);
    let traced = crate::with_decider(mode, |d| provenance(d, skill, purpose, &run_dir, call_number, &input, &evidence));
    let provenance = traced.map_err(|e| TraceFailed(e.message))?;
    for warning in &provenance.warnings {
        eprintln!("{warning}");
    }
    let call = Call::of(args, skill, purpose, call_number, &provenance)?;
    std::fs::create_dir_all(&run_dir).map_err(|e| TraceFailed(format!("cannot create {}: {e}", run_dir.display())))?;
    write_if_missing(&run_dir.join("run.meta.json"), &call.run_meta(args, &run_dir))?;
    let prefix = format!("{call_number:03}-{purpose}");
    let mut request = call.request(args);
    let body = request.as_object_mut().expect("an object literal");
    if args.trace_mode == "full" {
        body.insert("prompt".into(), format!("{}\n", call.prompt).into());
        write(&run_dir.join(format!("{prefix}.response.md")), call.response.as_bytes())?;
    } else {
        body.insert("prompt_length".into(), call.prompt.chars().count().into());
        body.insert("response_length".into(), call.response.chars().count().into());
    }
    write(&run_dir.join(format!("{prefix}.request.json")), pretty(&request).as_bytes())?;
    write(&run_dir.join(format!("{prefix}.meta.json")), pretty(&call.meta(args)).as_bytes())?;
    let events = Path::new(".aris/meta");
    if events.is_dir() {
        let event = call.event(args, &run_dir);
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

/// What the provenance is derived from: the flags that claim identities.
fn trace_input(args: &TraceCmd) -> TraceInput {
    TraceInput {
        backend: args.backend.clone(),
        status: args.status.clone(),
        model: args.model.clone(),
        executor_model: args.executor_model.clone(),
        executor_family: args.executor_family.clone(),
        reviewer_family: args.reviewer_family.clone(),
        requested_reviewer_model: args.requested_reviewer_model.clone(),
        reported_reviewer_model: args.reported_reviewer_model.clone(),
        independence_verified: args.independence_verified.clone(),
    }
}

/// One traced call, as its four records (`run.meta.json` once per run, the call's
/// `request.json` and `meta.json`, the `events.jsonl` line) tell it.
struct Call<'a> {
    skill: &'a str,
    purpose: &'a str,
    call_number: u32,
    prompt: String,
    response: String,
    executor: String,
    tool: String,
    effort_unpinned: bool,
    now: String,
    /// The provenance as JSON, whose fields the records repeat.
    provenance: &'a Provenance,
}

impl<'a> Call<'a> {
    fn of(
        args: &TraceCmd,
        skill: &'a str,
        purpose: &'a str,
        call_number: u32,
        provenance: &'a Provenance,
    ) -> Result<Call<'a>, TraceFailed> {
        let native = args.backend.eq_ignore_ascii_case("copilot-native");
        let response = match &provenance.response_path {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|e| TraceFailed(format!("cannot read the response {path}: {e}")))?,
            None => text(&args.response, args.response_file.as_deref()),
        };
        let executor =
            args.executor.clone().unwrap_or_else(|| if native { "copilot".into() } else { "claude-code".into() });
        let tool = args
            .tool
            .clone()
            .unwrap_or_else(|| if native { "task(agent_type=rubber-duck)".into() } else { "mcp__codex__codex".into() });
        Ok(Call {
            skill,
            purpose,
            call_number,
            prompt: text(&args.prompt, args.prompt_file.as_deref()),
            response,
            executor,
            tool,
            effort_unpinned: args.backend == "copilot" && !args.effort.eq_ignore_ascii_case("xhigh"),
            now: judged_core::timestamp::format_utc(chrono::Utc::now()),
            provenance,
        })
    }

    /// The identity fields every record but the run's repeats from the provenance.
    fn identities(&self, extra: Value) -> Value {
        let p = self.provenance;
        let mut fields = json!({
            "executor_model": p.executor_model, "executor_model_source": p.executor_model_source,
            "executor_family": p.executor_family, "reviewer_model_source": p.reviewer_model_source,
            "native_evidence_id": p.native_evidence_id, "native_evidence_path": p.native_evidence_path,
            "family_relation": p.family_relation, "independence_verified": p.independence_verified,
        });
        let body = fields.as_object_mut().expect("an object literal");
        body.extend(extra.as_object().expect("an object literal").clone());
        fields
    }

    /// The call's fields `request.json` and `meta.json` share.
    fn call_fields(&self, args: &TraceCmd, extra: Value) -> Value {
        let mut fields = self.identities(json!({
            "call_number": self.call_number, "purpose": self.purpose, "timestamp": self.now,
            "model": self.provenance.model, "effort": args.effort, "effort_unpinned": self.effort_unpinned,
            "fallback_reason": args.fallback_reason, "status": args.status, "executor": self.executor,
            "reviewer_profile": none_if_empty(&args.reviewer_profile),
            "requested_reviewer_model": none_if_empty(&args.requested_reviewer_model),
            "reported_reviewer_model": self.provenance.reported_reviewer_model,
            "memory_hash": none_if_empty(&args.memory_hash),
        }));
        let body = fields.as_object_mut().expect("an object literal");
        body.extend(extra.as_object().expect("an object literal").clone());
        fields
    }

    fn run_meta(&self, args: &TraceCmd, run_dir: &Path) -> Value {
        self.identities(json!({
            "skill": self.skill, "run_id": run_dir.file_name().map(|n| n.to_string_lossy().into_owned()),
            "started_at": self.now, "executor": self.executor, "reviewer_family": self.provenance.reviewer_family,
            "reviewer_backend": none_if_empty(&args.backend),
            "project_dir": std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default(),
        }))
    }

    fn request(&self, args: &TraceCmd) -> Value {
        let extra =
            json!({"tool": self.tool, "backend": args.backend, "reviewer_family": self.provenance.reviewer_family});
        self.call_fields(args, extra)
    }

    fn meta(&self, args: &TraceCmd) -> Value {
        let extra = json!({"thread_id": args.thread_id, "model_family": self.provenance.reviewer_family});
        self.call_fields(args, extra)
    }

    fn event(&self, args: &TraceCmd, run_dir: &Path) -> Value {
        self.identities(json!({
            "event": "review_trace", "skill": self.skill, "purpose": self.purpose, "thread_id": args.thread_id,
            "trace_path": format!("{}/", run_dir.display()), "backend": args.backend, "tool": self.tool,
            "executor": self.executor, "reviewer_family": self.provenance.reviewer_family,
            "effort_unpinned": self.effort_unpinned, "memory_hash": none_if_empty(&args.memory_hash),
            "status": args.status,
        }))
    }
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
    evidence: &Option<(Artifact, String)>,
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
                files: evidence.as_ref().map(|(artifact, _)| crate::decider::sent_files(artifact)).unwrap_or_default(),
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
