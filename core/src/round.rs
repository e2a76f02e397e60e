//! What a review round's commands do around the rules, whoever runs them
//! (`judge-evidence`, `judged mcp`'s tools): ask again while the host may still be writing
//! its log, and write the artifacts the way the reference does.

use crate::files;
use crate::rules::{Challenge, RefusalCode, Result, Verified};

use std::path::Path;
use std::time::{Duration, Instant};

/// Copilot CLI persists events asynchronously: a tool call can start before the file
/// holds the previous call's completion (observed: ~100 ms with 1.0.102). Outcomes that
/// a later flush can change (no binding yet, lifecycle not yet complete) are asked again,
/// at most this long.
pub const DEFAULT_WAIT_SECONDS: u64 = 5;
/// A log the host has not written to for this long, since the command started, is taken
/// as persisted: several times the host's own flush delay, and a refusal on a quiet log
/// still answers within half a second.
const QUIET: Duration = Duration::from_millis(300);
const RETRY_EVERY: Duration = Duration::from_millis(50);

/// Ask `op` again while it fails with an exit code a later host flush could change, the
/// host may still be writing, and `wait_seconds` have not passed. Once the log shows the
/// calling command's own call, everything before it is persisted and the answer stands; a
/// log that has not changed for [`QUIET`] is taken as settled too.
pub fn until_persisted<T>(wait_seconds: u64, mut op: impl FnMut() -> Result<T>) -> Result<T> {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(wait_seconds);
    let (mut bytes, mut changed) = (None, started);
    loop {
        let error = match op() {
            Err(error)
                if matches!(
                    error.code,
                    RefusalCode::NoBinding | RefusalCode::InvocationCount | RefusalCode::Lifecycle
                ) =>
            {
                error
            }
            result => return result,
        };
        let now = Instant::now();
        let state = error.log_state.unwrap_or_default();
        if bytes != Some(state.bytes) {
            (bytes, changed) = (Some(state.bytes), now);
        }
        if state.caller_seen || now >= deadline || now.duration_since(changed) >= QUIET {
            return Err(error);
        }
        std::thread::sleep(RETRY_EVERY);
    }
}

/// Write a challenge artifact as the reference does (pretty JSON, atomically).
pub fn write_challenge(output: &Path, challenge: &Challenge, replace: bool) -> Result<()> {
    files::write_atomic(output, challenge.pretty().as_bytes(), replace)
}

/// Write a verification's response, then its evidence (removing the response again when
/// the evidence cannot be written, so no orphan is left), then apply the policy: `Err`
/// with exit 10 when it rejected the pair, which is written all the same.
pub fn write_evidence(verified: &Verified, output: &Path, response_output: &Path, replace: bool) -> Result<()> {
    files::write_atomic(response_output, verified.response.as_bytes(), replace)?;
    let evidence = verified.evidence.pretty();
    if let Err(error) = files::write_atomic(output, evidence.as_bytes(), replace) {
        let _ = std::fs::remove_file(response_output);
        return Err(error);
    }
    verified.policy()
}
