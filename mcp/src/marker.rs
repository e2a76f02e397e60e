//! `marker`: the first step of the marker / challenge / verify round, as `judge-evidence
//! marker` prints it. The host records this tool's call in its session log as it records
//! a shell call, and the rules bind a challenge to either.

use crate::{Judged, text_answer};
use judged_core::{pyjson, rules};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// The round's binding.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct MarkerParams {
    /// The binding token (16..128 characters) the gate's message or your task names.
    pub binding: String,
}

#[tool_router(router = marker_router, vis = "pub(crate)")]
impl Judged {
    /// Start a review round: print the marker for `binding`. Call it as its own call,
    /// let it finish, then call `challenge` with the same binding.
    #[tool(name = "marker")]
    async fn marker(&self, Parameters(params): Parameters<MarkerParams>) -> CallToolResult {
        // The marker's own line, and a next step: a text that is JSON alone is rewritten
        // by Copilot CLI 1.0.102 (re-serialized without spaces) before it records it, and
        // the rules look for the marker's bytes.
        text_answer(rules::Binding::parse(&params.binding).map(|binding| {
            format!("{}\nNow call challenge with the same binding.", pyjson::one_line(&rules::marker(&binding)))
        }))
    }
}
