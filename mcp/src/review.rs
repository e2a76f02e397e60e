//! `review`: convene judged's jury on the work, as the gate convenes it. The daemon builds
//! the artifact (the task's words and the working tree's changes, or one file), journals
//! the run, and says whether the gate now counts it; this tool relays the jury's steps as
//! MCP progress notifications while it sits.

use crate::{Judged, answer, daemon, refused};
use judged_io::files;
use judged_protocol::{Request, ReviewArgs, ReviewFile, ReviewReply};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, RequestMetaObject};
use rmcp::{Peer, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// What the agent asks the jury about.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReviewParams {
    /// The project (default: where the host started judged mcp, unless that is the
    /// plugin's directory; then the cwd your session's log records).
    #[serde(default)]
    pub cwd: Option<String>,
    /// What the work is for: the task's subject as it was created, or a one-line
    /// description of the work.
    pub task: String,
    /// The task's description, as it was created.
    #[serde(default)]
    pub description: Option<String>,
    /// Judge this file instead of the working tree's changes: a regular file inside the
    /// project (relative to cwd), of at most 4 MiB; the gate does not count such a review.
    #[serde(default)]
    pub file: Option<String>,
    /// The rubric (hallucination, flattery, spec-coherence, ...); default: the gate's
    /// panel_rubric. Another rubric than the gate's is not counted by it.
    #[serde(default)]
    pub rubric: Option<String>,
    /// The lens every juror judges as; the gate counts only reviews without one.
    #[serde(default)]
    pub persona: Option<String>,
    /// Your host session's id (default: the one the host started this server for, where
    /// it says): the author's model is read from its log, as the gate does, so that the
    /// tiebreaker is of another family. The gate counts only a review that knew it.
    #[serde(default)]
    pub session_id: Option<String>,
}

#[tool_router(router = review_router, vis = "pub(crate)")]
impl Judged {
    /// Convene judged's cross-family jury on the work: the task and the working tree's
    /// changes (as the review gate builds them), or one file. Returns the verdict, each
    /// juror's requested and reported model and family, the flags, whether the jury was
    /// degraded, and whether the gate now counts it for a task completed on this tree.
    #[tool(name = "review")]
    async fn review(
        &self,
        Parameters(params): Parameters<ReviewParams>,
        meta: RequestMetaObject,
        client: Peer<RoleServer>,
    ) -> CallToolResult {
        // A file is read here, with the caller's rights and held to the project: the
        // daemon is sent its text, never its path.
        let (cwd, file) = match params.file {
            None => match self.cwd(params.cwd).await {
                Ok(cwd) => (cwd.map(|cwd| cwd.path().display().to_string()), None),
                Err(error) => return refused(&error),
            },
            Some(name) => match self.project(params.cwd).await {
                Err(error) => return refused(&error),
                Ok(project) => match read_file(&project, name) {
                    Ok(file) => (Some(project.path().display().to_string()), Some(file)),
                    Err(error) => return CallToolResult::error(vec![ContentBlock::text(format!("judged: {error}"))]),
                },
            },
        };
        let args = ReviewArgs {
            cwd,
            task: params.task,
            description: params.description,
            file,
            rubric: params.rubric,
            persona: params.persona,
            session_id: self.session(params.session_id),
            progress: true,
        };
        let (steps, mut heard) = tokio::sync::mpsc::unbounded_channel();
        let asked = daemon::ask::<ReviewReply>(Request::Review(args), Some(steps));
        tokio::pin!(asked);
        let token = meta.get_progress_token();
        let mut told = 0u32;
        let reply = loop {
            tokio::select! {
                reply = &mut asked => break reply,
                Some(step) = heard.recv() => {
                    told += 1;
                    if let Some(token) = &token {
                        let note = ProgressNotificationParam::new(token.clone(), f64::from(told))
                            .with_message(step.to_string());
                        let _ = client.notify_progress(note).await;
                    }
                }
            }
        };
        match reply {
            Ok(reply) => answer(summary(&reply), structured(&reply)),
            Err(error) => refused(&error),
        }
    }
}

/// The file `name` of `project`, as a review is sent it. Read on the runtime's thread: it
/// is bounded, and a FIFO or device is refused without blocking on it.
fn read_file(project: &files::Project, name: String) -> Result<ReviewFile, files::ConfineError> {
    let read = files::read_confined(project, &name, files::MAX_NAMED_FILE_BYTES, files::Owner::Any)?;
    Ok(ReviewFile { name, text: String::from_utf8_lossy(&read.bytes).into_owned() })
}

/// The review for a program: everything but the packet, which the journal keeps.
fn structured(reply: &ReviewReply) -> serde_json::Value {
    json!({
        "verdict": reply.jury.final_verdict,
        "confidence": reply.jury.final_confidence,
        "rubric": reply.jury.rubric,
        "degraded": reply.jury.degraded,
        "down": reply.jury.down,
        "tiebreaker_unavailable": reply.tiebreaker_unavailable,
        "flags": reply.jury.flags,
        "jurors": reply.jury.jurors,
        "from_record": reply.from_record,
        "gate": reply.gate,
        "key": reply.jury.key,
    })
}

/// The review for a person.
fn summary(reply: &ReviewReply) -> String {
    let jury = &reply.jury;
    let mut text = format!(
        "Verdict: {} (confidence {}, rubric {}){}{}\nJurors:",
        jury.final_verdict,
        jury.final_confidence,
        jury.rubric,
        if jury.degraded { ", degraded" } else { "" },
        if reply.from_record { ", the recorded verdict on this same work" } else { "" },
    );
    for juror in &jury.jurors {
        text.push_str(&format!(
            "\n  - {} ({}): {} requested, {} answered ({}): {} {}",
            juror.name,
            juror.stage,
            juror.model_requested,
            juror.model_reported.as_deref().unwrap_or("no record of who"),
            juror.family.as_deref().unwrap_or("unknown family"),
            juror.verdict,
            juror.confidence,
        ));
        if let Some(error) = &juror.error {
            text.push_str(&format!(" ({error})"));
        }
    }
    if !jury.flags.is_empty() {
        text.push_str("\nFlags:");
        jury.flags.iter().for_each(|flag| text.push_str(&format!("\n  - {flag}")));
    }
    if let Some(why) = &reply.tiebreaker_unavailable {
        text.push_str(&format!("\nNo tiebreaker could run: {why}"));
    }
    let gate = match (reply.gate.counted, reply.gate.allows) {
        (true, true) => "counted, allows",
        (true, false) => "counted, blocks",
        (false, _) => "not counted",
    };
    text.push_str(&format!("\nGate: {gate}. {}", reply.gate.why));
    text
}
