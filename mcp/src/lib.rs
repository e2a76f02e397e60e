//! `judged mcp`: an MCP server over stdio that a host starts from its MCP config, and a
//! thin client of the daemon. Each tool is one request over the socket (the daemon is
//! started as `judge-evidence` and `judge-hook` start it); nothing here judges, counts
//! or records anything itself, so the tools answer exactly what the gate would.
//!
//! Its own crate so that it can reach the daemon only through `judged-protocol` (the
//! crate boundary keeps it a client), and so that `rmcp` and `schemars` stay out of the
//! daemon's library. One file per tool: [`review`], [`gate_status`].

mod daemon;
mod gate_status;
mod review;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ServerHandler, ServiceExt, tool_handler};
use std::path::PathBuf;

/// Why `judged mcp` stopped.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("the MCP session on stdin/stdout failed: {0}")]
    Session(Box<dyn std::error::Error + Send + Sync>),
}

/// The server: the tools, and the directory it was started in (a tool's default cwd).
#[derive(Clone)]
pub struct Judged {
    tool_router: ToolRouter<Judged>,
    cwd: PathBuf,
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
    fn new(cwd: PathBuf) -> Judged {
        Judged { tool_router: Judged::review_router() + Judged::gate_status_router(), cwd }
    }

    /// A tool's cwd: the one it was given, else the server's.
    fn cwd(&self, given: Option<String>) -> String {
        given.unwrap_or_else(|| self.cwd.display().to_string())
    }
}

/// A tool's answer: `text` for a person, `value` for a program (structured content).
fn answer(text: String, value: serde_json::Value) -> CallToolResult {
    let mut result = CallToolResult::structured(value);
    result.content = vec![ContentBlock::text(text)];
    result
}

/// A refusal as a tool result (the agent reads it and acts on it), not a protocol error.
fn refused(error: &daemon::AskError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!("judged: {error}"))])
}

/// Serve MCP on stdin/stdout until the host closes it.
pub fn serve() -> Result<(), McpError> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(McpError::Runtime)?;
    runtime.block_on(async {
        let running = Judged::new(cwd)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|error| McpError::Session(Box::new(error)))?;
        running.waiting().await.map_err(|error| McpError::Session(Box::new(error)))?;
        Ok(())
    })
}
