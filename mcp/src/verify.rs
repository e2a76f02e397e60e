//! `verify`: check the reviewer's lifecycle against the challenge and write the response
//! and the evidence in the project, as `judge-evidence verify` does in daemon mode.

use crate::{Judged, daemon};
use judged_core::rules::{Artifact, Verified};
use judged_io::files::{self, Destination};
use judged_io::round::{self, DEFAULT_WAIT_SECONDS};
use judged_protocol::{Request, Verification, VerifyArgs};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// The round to verify.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct VerifyParams {
    /// The challenge `challenge` wrote, relative to the project and inside it (default
    /// review.challenge.json).
    #[serde(default)]
    pub challenge: Option<String>,
    /// Where to write the evidence, inside the project (default review.evidence.json).
    #[serde(default)]
    pub output: Option<String>,
    /// Where to write the reviewer's response, inside the project (default
    /// review.response.md).
    #[serde(default)]
    pub response_output: Option<String>,
    /// Overwrite existing files at `output` and `response_output`.
    #[serde(default)]
    pub replace: bool,
    /// The project (default: where the host started judged mcp, unless that is the
    /// plugin's directory; then the cwd your session's log records).
    #[serde(default)]
    pub cwd: Option<String>,
}

#[tool_router(router = verify_router, vis = "pub(crate)")]
impl Judged {
    /// After the reviewer ran with the challenge's nonce: verify its lifecycle in your
    /// session's log and write the evidence (default review.evidence.json) and the
    /// reviewer's response (review.response.md). The gate counts verified evidence of a
    /// reviewer of another family with a positive verdict.
    #[tool(name = "verify")]
    async fn verify(&self, Parameters(params): Parameters<VerifyParams>) -> CallToolResult {
        self.round_step(params.cwd.clone(), move |project| verify(project, &params)).await
    }
}

fn verify(project: &files::Project, params: &VerifyParams) -> judged_core::rules::Result<String> {
    let given = params.challenge.as_deref().unwrap_or("review.challenge.json");
    let read = files::read_confined(project, given, files::MAX_NAMED_FILE_BYTES, files::Owner::Caller)?;
    let resolved = read.path.to_string_lossy().into_owned();
    let challenge = Artifact::parse(&resolved, &read.bytes)?;
    let output = files::confined_target(project, params.output.as_deref().unwrap_or("review.evidence.json"))?;
    let response_output =
        files::confined_target(project, params.response_output.as_deref().unwrap_or("review.response.md"))?;
    let step = round::VerifyStep {
        challenge_path: &resolved,
        output: Destination::Held(&output),
        response_output: Destination::Held(&response_output),
        replace: params.replace,
        wait_seconds: DEFAULT_WAIT_SECONDS,
    };
    let args = VerifyArgs {
        challenge,
        response_path: response_output.path().to_string_lossy().into_owned(),
        challenge_name: given.to_owned(),
        started_at: chrono::Utc::now(),
        writes: vec![output.path().to_owned(), response_output.path().to_owned()],
        declared_reviewer_model: None,
    };
    let verified = round::verify(&step, || {
        let verification: Verification = daemon::evidence(Request::Verify(args.clone()))?;
        Ok(Verified {
            evidence: verification.evidence,
            response: verification.response,
            window_start: verification.window_start,
        })
    })?;
    Ok(format!(
        "{}\nWrote {} and {}.",
        verified.evidence.one_line(),
        output.path().display(),
        response_output.path().display()
    ))
}
