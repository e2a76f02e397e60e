//! `challenge`: bind a fresh nonce to this session's marker call and write the challenge
//! artifact in the project, as `judge-evidence challenge` does in daemon mode (the daemon
//! decides and witnesses; this writes what it answered).

use crate::{Judged, daemon};
use judged_core::rules::Challenge;
use judged_io::files::{self, Destination};
use judged_io::round::{self, DEFAULT_WAIT_SECONDS};
use judged_protocol::{ChallengeArgs, Request};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// The challenge to bind.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ChallengeParams {
    /// The binding the marker was called with.
    pub binding: String,
    /// Where to write the challenge, relative to the project and inside it (default
    /// review.challenge.json).
    #[serde(default)]
    pub output: Option<String>,
    /// How old the marker call may be, in seconds (1..600, default 60).
    #[serde(default)]
    pub max_age_seconds: Option<i64>,
    /// Overwrite an existing file at `output`.
    #[serde(default)]
    pub replace: bool,
    /// The project (default: where the host started judged mcp, unless that is the
    /// plugin's directory; then the cwd your session's log records).
    #[serde(default)]
    pub cwd: Option<String>,
}

/// `judge-evidence challenge`'s default age limit.
const MAX_AGE_SECONDS: i64 = 60;

#[tool_router(router = challenge_router, vis = "pub(crate)")]
impl Judged {
    /// Bind a fresh nonce to the `marker` call for `binding` and write the challenge
    /// (default review.challenge.json in the project). Then run your reviewer (Copilot
    /// CLI: the rubber-duck) with the line ARIS_REVIEW_NONCE=<nonce> alone in its prompt,
    /// and call `verify`.
    #[tool(name = "challenge")]
    async fn challenge(&self, Parameters(params): Parameters<ChallengeParams>) -> CallToolResult {
        self.round_step(params.cwd.clone(), move |project| challenge(project, params)).await
    }
}

fn challenge(project: &files::Project, params: ChallengeParams) -> judged_core::rules::Result<String> {
    let ChallengeParams { binding, output, max_age_seconds, replace, .. } = params;
    let max_age_seconds = max_age_seconds.unwrap_or(MAX_AGE_SECONDS);
    let output = files::confined_target(project, output.as_deref().unwrap_or("review.challenge.json"))?;
    let step = round::ChallengeStep {
        binding: &binding,
        max_age_seconds,
        output: Destination::Held(&output),
        replace,
        wait_seconds: DEFAULT_WAIT_SECONDS,
    };
    let challenge: Challenge = round::challenge(&step, |binding| {
        daemon::evidence(Request::Challenge(ChallengeArgs {
            binding: binding.to_string(),
            cwd: project.path().display().to_string(),
            max_age_seconds,
            session_root: None,
            started_at: chrono::Utc::now(),
            writes: vec![output.path().to_owned()],
        }))
    })?;
    let nonce = &challenge.nonce;
    Ok(format!(
        "{}\nWrote {}. Now run the reviewer with the line ARIS_REVIEW_NONCE={nonce} alone in its prompt, then call \
         verify.",
        challenge.one_line(),
        output.path().display()
    ))
}
