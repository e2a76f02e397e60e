//! `gate_status`: what the review gate needs now for a session and project, as the daemon
//! works it out with the gate's own lookups (nothing is decided or recorded).

use crate::{Judged, answer, daemon, refused};
use judged_core::event::Host;
use judged_protocol::{GateStatus, GateStatusArgs, Request};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{Peer, RoleServer, tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// Which session and project to ask about.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GateStatusParams {
    /// The project (default: where the host started judged mcp, unless that is the
    /// plugin's directory; then the cwd your session's log records).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Your host session's id (default: the one the host started this server for, where
    /// it says): its evidence counts, and its log names the author.
    #[serde(default)]
    pub session_id: Option<String>,
}

#[tool_router(router = gate_status_router, vis = "pub(crate)")]
impl Judged {
    /// What the review gate needs right now: its policy and where that comes from (the
    /// config files and their digests), whether a fresh positive review or evidence exists
    /// that it would count, and what is missing, in the words its block would use.
    #[tool(name = "gate_status")]
    async fn gate_status(
        &self,
        Parameters(params): Parameters<GateStatusParams>,
        client: Peer<RoleServer>,
    ) -> CallToolResult {
        let host = client.peer_info().and_then(|info| host_named(&info.client_info.name));
        let args = GateStatusArgs {
            cwd: params.cwd.or_else(|| self.server_cwd()),
            session_id: self.session(params.session_id),
            host,
        };
        match daemon::ask::<GateStatus>(Request::GateStatus(args), None).await {
            Ok(status) => answer(summary(&status), serde_json::to_value(&status).unwrap_or_default()),
            Err(error) => refused(&error),
        }
    }
}

/// The host an MCP client's name says it is, if it says.
fn host_named(client: &str) -> Option<Host> {
    let client = client.to_ascii_lowercase();
    let word = |host: Host| judged_core::adapter::hooks(host).mcp_client_word();
    Host::ALL.into_iter().find(|&host| word(host).is_some_and(|word| client.contains(word)))
}

/// The status for a person.
fn summary(status: &GateStatus) -> String {
    let policy = serde_json::to_value(status.policy).ok().and_then(|v| v.as_str().map(str::to_owned));
    let files: Vec<String> = status.config.iter().map(ToString::to_string).collect();
    let mut text = format!(
        "Gate policy `{}` for {} (from {}; config: {}).",
        policy.unwrap_or_default(),
        status.cwd,
        status.sources.join(" < "),
        files.join(", ")
    );
    for error in &status.not_applied {
        text.push_str(&format!("\nNot applied: {error}"));
    }
    if let Some(evidence) = &status.evidence_id {
        text.push_str(&format!("\nThe gate counts fresh positive evidence {evidence}."));
    }
    if let Some(review) = &status.review {
        text.push_str(&format!(
            "\nThe gate counts review {} of this tree: {} (confidence {}).",
            review.key, review.final_verdict, review.final_confidence
        ));
    }
    match &status.missing {
        None => text.push_str("\nNothing is missing: a task completed now is allowed."),
        Some(missing) => text.push_str(&format!("\nMissing:\n{missing}")),
    }
    text
}
