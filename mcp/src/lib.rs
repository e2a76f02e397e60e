//! `judged mcp`: an MCP server over stdio that a host starts from its MCP config, and a
//! thin client of the daemon. Each tool is one request over the socket (the daemon is
//! started as `judge-evidence` and `judge-hook` start it); nothing here judges, counts
//! or records anything itself, so the tools answer exactly what the gate would.
//!
//! Its own crate so that it can reach the daemon only through `judged-protocol` (the
//! crate boundary keeps it a client), and so that `rmcp` and `schemars` stay out of the
//! daemon's library. One file per tool: [`review`], [`gate_status`], and the round of
//! [`marker`], [`challenge`], [`verify`] (as `judge-evidence` runs it in daemon mode).

mod challenge;
mod daemon;
mod gate_status;
mod marker;
mod review;
mod verify;

use judged_core::event::SessionId;
use judged_io::files::{ConfineError, Project};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ServerHandler, ServiceExt, tool_handler};
use std::path::Path;
use std::sync::Arc;

/// Why `judged mcp` stopped.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("the MCP session on stdin/stdout failed: {0}")]
    Session(Box<dyn std::error::Error + Send + Sync>),
}

/// The server: the tools, the directory it was started in when that is the project (a
/// tool's default cwd, opened once: see [`Project`]), and the host session that started
/// it, when the host says (a tool's default session).
#[derive(Clone)]
pub struct Judged {
    tool_router: ToolRouter<Judged>,
    cwd: Option<Arc<Project>>,
    session: Option<SessionId>,
}

/// Where a host names the plugin an MCP server belongs to (Copilot CLI 1.0.102 sets the
/// first two, Claude Code 2.1.328 the last). Copilot CLI starts a plugin's server in the
/// plugin's directory, not the project's.
const PLUGIN_ROOT_VARIABLES: &[&str] = &["COPILOT_PLUGIN_ROOT", "PLUGIN_ROOT", "CLAUDE_PLUGIN_ROOT"];

/// The directory the server was started in, opened, unless it is the plugin's own.
fn project_dir() -> Option<Project> {
    let cwd = Project::open(Path::new(".")).ok()?;
    let in_plugin = PLUGIN_ROOT_VARIABLES
        .iter()
        .filter_map(std::env::var_os)
        .any(|root| std::fs::canonicalize(root).is_ok_and(|root| root == cwd.path()));
    (!in_plugin).then_some(cwd)
}

/// Where a host tells the MCP servers it starts which session they serve: Claude Code
/// 2.1.328 sets `CLAUDE_CODE_SESSION_ID`, Copilot CLI 1.0.102 `COPILOT_AGENT_SESSION_ID`
/// (its session-state directory's name) in their environment. Codex CLI 0.169.0 and
/// Gemini CLI 0.61.0 name none: there the agent passes `session_id`.
const SESSION_VARIABLES: &[&str] = &["CLAUDE_CODE_SESSION_ID", "COPILOT_AGENT_SESSION_ID"];

/// The session the host that started this server says it serves.
fn host_session() -> Option<SessionId> {
    SESSION_VARIABLES.iter().find_map(|name| std::env::var(name).ok().filter(|id| !id.is_empty())).map(SessionId::from)
}

#[tool_handler(
    router = self.tool_router,
    name = "judged",
    instructions = "judged's cross-family jury and review gate. `review` convenes the jury on the working tree's \
                    changes as the gate would (the gate then counts its verdict for a task completed on that tree); \
                    `gate_status` says what the gate needs now."
)]
impl ServerHandler for Judged {}

impl Judged {
    fn new(cwd: Option<Project>, session: Option<SessionId>) -> Judged {
        let tool_router = Judged::review_router()
            + Judged::gate_status_router()
            + Judged::marker_router()
            + Judged::challenge_router()
            + Judged::verify_router();
        Judged { tool_router, cwd: cwd.map(Arc::new), session }
    }

    /// A tool's cwd: the one it was given, opened inside the project this server serves;
    /// else the server's when that is the project; else none: the daemon takes the cwd the
    /// session's log records.
    async fn cwd(&self, given: Option<String>) -> Result<Option<Project>, daemon::AskError> {
        let Some(given) = given else { return Ok(self.cwd.as_deref().map(Project::try_clone).transpose()?) };
        // Refused as the daemon would refuse it, before it is resolved or shown.
        judged_protocol::check_path("cwd", &given).map_err(|e| daemon::AskError::Client(e.into()))?;
        let served = self.served_project().await?;
        match served.subdirectory(&given) {
            Ok(cwd) => Ok(Some(cwd)),
            Err(ConfineError::Outside { .. } | ConfineError::Missing { .. }) => {
                Err(daemon::AskError::OutsideProject { given, served: served.path().display().to_string() })
            }
            Err(error) => Err(error.into()),
        }
    }

    /// The directory the server was started in, when that is the project.
    fn server_cwd(&self) -> Option<String> {
        self.cwd.as_ref().map(|cwd| cwd.path().display().to_string())
    }

    /// The project this server serves: the directory it was started in, else the cwd the
    /// session's log records, opened. A tool's cwd must lie inside it, or a caller could
    /// point a tool at any file of the user's (a dotfile holding keys, sent to the jurors;
    /// a round's output written over a file of the user's) past the host's sandbox.
    async fn served_project(&self) -> Result<Project, daemon::AskError> {
        if let Some(cwd) = &self.cwd {
            return Ok(cwd.try_clone()?);
        }
        let args = judged_protocol::GateStatusArgs { cwd: None, session_id: self.session.clone(), host: None };
        let status: judged_protocol::GateStatus = daemon::ask(judged_protocol::Request::GateStatus(args), None).await?;
        Ok(Project::open(Path::new(&status.cwd))?)
    }

    /// The project a round tool works in: the cwd it was given (inside the served
    /// project), else the served project. Never the home directory or one holding it
    /// (told by what is opened): a host started there would make every file of the
    /// user's, the keys in its dotfiles among them, one a tool reads or writes.
    async fn project(&self, given: Option<String>) -> Result<Project, daemon::AskError> {
        let project = match self.cwd(given).await? {
            Some(cwd) => cwd,
            None => self.served_project().await?,
        };
        if project.holds(&judged_io::files::home_dir()) {
            return Err(daemon::AskError::HomeAsProject { project: project.path().display().to_string() });
        }
        Ok(project)
    }

    /// Run a round step (blocking: it asks the daemon and writes files) in the project,
    /// and answer with its text or its refusal.
    async fn round_step(
        &self,
        cwd: Option<String>,
        step: impl FnOnce(&Project) -> judged_core::rules::Result<String> + Send + 'static,
    ) -> CallToolResult {
        let project = match self.project(cwd).await {
            Ok(project) => project,
            Err(error) => return refused(&error),
        };
        let outcome = tokio::task::spawn_blocking(move || step(&project)).await;
        text_answer(outcome.unwrap_or_else(|error| Err(judged_core::rules::EvidenceError::evidence(error.to_string()))))
    }

    /// A tool's session: the one it was given, else the host's.
    fn session(&self, given: Option<String>) -> Option<SessionId> {
        given.map(SessionId::from).or_else(|| self.session.clone())
    }
}

/// A tool's answer: `text` for a person, `value` for a program (structured content).
fn answer(text: String, value: serde_json::Value) -> CallToolResult {
    let mut result = CallToolResult::structured(value);
    result.content = vec![ContentBlock::text(text)];
    result
}

/// A round step's answer: its text, or its refusal with the exit code `judge-evidence`
/// would give (text only: a host shows it to the agent as it is).
fn text_answer(outcome: judged_core::rules::Result<String>) -> CallToolResult {
    match outcome {
        Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
        Err(error) => CallToolResult::error(vec![ContentBlock::text(format!(
            "judged: {} (exit code {} as judge-evidence)",
            error.message, error.code as u8
        ))]),
    }
}

/// A refusal as a tool result (the agent reads it and acts on it), not a protocol error.
fn refused(error: &daemon::AskError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("judged: {error}"))])
}

/// Serve MCP on stdin/stdout until the host closes it.
pub fn serve() -> Result<(), McpError> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(McpError::Runtime)?;
    runtime.block_on(async {
        let running = Judged::new(project_dir(), host_session())
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|error| McpError::Session(Box::new(error)))?;
        running.waiting().await.map_err(|error| McpError::Session(Box::new(error)))?;
        Ok(())
    })
}
