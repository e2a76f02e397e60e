//! What a review round's commands do around the rules, whoever runs them
//! (`judge-evidence`, `judged mcp`'s tools): ask again while the host may still be writing
//! its log, and write the artifacts the way the reference does.

use crate::files::{self, Destination};
use judged_core::rules::{Binding, Challenge, RefusalCode, Result, Verified, check_max_age};

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

/// What a `challenge` step is asked, by whichever command asks it.
pub struct ChallengeStep<'a> {
    /// The binding as given, checked here before anything is asked.
    pub binding: &'a str,
    /// How old the marker call may be (1..600).
    pub max_age_seconds: i64,
    /// The file the challenge is written to.
    pub output: Destination<'a>,
    /// Whether an existing file at `output` may be overwritten.
    pub replace: bool,
    /// How long to wait for the host to persist the marker call.
    pub wait_seconds: u64,
}

/// A `challenge` step: check what was asked, then have `decide` (this process or the
/// daemon) bind a fresh nonce until the host's log has settled, and write the challenge.
pub fn challenge(step: &ChallengeStep, mut decide: impl FnMut(&Binding) -> Result<Challenge>) -> Result<Challenge> {
    // The reference's order: the age before the binding.
    check_max_age(step.max_age_seconds)?;
    let binding = Binding::parse(step.binding)?;
    files::check_writable(step.output.path(), step.replace)?;
    let challenge = until_persisted(step.wait_seconds, || decide(&binding))?;
    step.output.write(challenge.pretty().as_bytes(), step.replace)?;
    Ok(challenge)
}

/// What a `verify` step is asked, by whichever command asks it.
pub struct VerifyStep<'a> {
    /// The challenge file, resolved, which refusals name.
    pub challenge_path: &'a str,
    /// Where the evidence is written.
    pub output: Destination<'a>,
    /// Where the reviewer's response is written.
    pub response_output: Destination<'a>,
    /// Whether existing files there may be overwritten.
    pub replace: bool,
    /// How long to wait for the host to persist the reviewer's lifecycle.
    pub wait_seconds: u64,
}

/// A `verify` step: refuse what could not be written before anything is (so a refusal
/// leaves no orphan response, evidence-protocol.md §8.11), have `decide` verify the
/// reviewer's lifecycle until the host's log has settled, and write both files.
pub fn verify(step: &VerifyStep, decide: impl FnMut() -> Result<Verified>) -> Result<Verified> {
    files::check_writable(step.response_output.path(), step.replace)?;
    files::check_writable(step.output.path(), step.replace)?;
    let verified = until_persisted(step.wait_seconds, decide).map_err(|e| e.about_artifact(step.challenge_path))?;
    write_evidence(&verified, step.output, step.response_output, step.replace)?;
    Ok(verified)
}

/// Write a verification's response, then its evidence (removing the response again when
/// the evidence cannot be written, so no orphan is left), then apply the policy: `Err`
/// with exit 10 when it rejected the pair, which is written all the same.
fn write_evidence(verified: &Verified, output: Destination, response_output: Destination, replace: bool) -> Result<()> {
    response_output.write(verified.response.as_bytes(), replace)?;
    let evidence = verified.evidence.pretty();
    if let Err(error) = output.write(evidence.as_bytes(), replace) {
        response_output.remove();
        return Err(error);
    }
    verified.policy()
}

#[cfg(test)]
mod tests {
    use super::*;
    use judged_core::rules::{EvidenceError, LogState, RefusalCode as Code};
    use std::cell::Cell;

    fn refusal(state: LogState) -> Result<()> {
        Err(EvidenceError::new(Code::NoBinding, "binding marker is not present").with_log_state(state))
    }

    #[test]
    fn a_log_showing_the_caller_answers_at_once() {
        let calls = Cell::new(0);
        let result = until_persisted(5, || {
            calls.set(calls.get() + 1);
            refusal(LogState { caller_seen: true, bytes: calls.get() })
        });
        assert_eq!(result.unwrap_err().code, Code::NoBinding);
        assert_eq!(calls.get(), 1, "nothing the refusal looked for can still be on its way");
    }

    #[test]
    fn a_quiet_log_answers_once_quiet_and_a_busy_one_is_asked_again() {
        let calls = Cell::new(0u64);
        let quiet = until_persisted(5, || {
            calls.set(calls.get() + 1);
            refusal(LogState { caller_seen: false, bytes: 7 })
        });
        assert!(quiet.is_err());
        let quiet_calls = calls.replace(0);
        assert!(quiet_calls >= 2, "asked again within the quiet interval");
        // The log grows at every look until the 1 s bound: asked until then.
        let busy = until_persisted(1, || {
            calls.set(calls.get() + 1);
            refusal(LogState { caller_seen: false, bytes: calls.get() })
        });
        assert!(busy.is_err());
        assert!(calls.get() > quiet_calls, "a busy log is waited on longer: {} vs {quiet_calls}", calls.get());
        // A refusal a write cannot change is not asked again.
        calls.set(0);
        let final_refusal = until_persisted(5, || {
            calls.set(calls.get() + 1);
            Err::<(), _>(EvidenceError::new(Code::PolicyRejected, "same family"))
        });
        assert_eq!((final_refusal.unwrap_err().code, calls.get()), (Code::PolicyRejected, 1));
    }

    /// What was asked is checked before the decider is asked anything, in the reference's
    /// order, and a file that would not be written is refused before the wait.
    #[test]
    fn a_challenge_step_refuses_what_was_asked_before_it_asks() {
        let dir = tempfile::tempdir().unwrap();
        let output = dir.path().join("review.challenge.json");
        std::fs::write(&output, "earlier").unwrap();
        let asked = Cell::new(0);
        let step = |binding, max_age_seconds| ChallengeStep {
            binding,
            max_age_seconds,
            output: Destination::Named(&output),
            replace: false,
            wait_seconds: 0,
        };
        let decide = |_: &Binding| -> Result<Challenge> {
            asked.set(asked.get() + 1);
            Err(EvidenceError::evidence("asked"))
        };
        let age_first = challenge(&step("short", 601), decide).unwrap_err().message;
        assert!(age_first.contains("--max-age-seconds must be within 1..600"), "{age_first}");
        let binding = challenge(&step("short", 60), decide).unwrap_err().message;
        assert!(binding.contains("--binding must be a 16..128 character stable token"), "{binding}");
        let existing = challenge(&step("binding-0123456789", 60), decide).unwrap_err().message;
        assert!(existing.contains("review.challenge.json"), "the file named: {existing}");
        assert_eq!(asked.get(), 0, "nothing asked of the decider");
        assert_eq!(std::fs::read_to_string(&output).unwrap(), "earlier", "nothing written");
    }
}
