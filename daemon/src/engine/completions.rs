//! Every completion on the record: a Claude Code task completed or a turn it ended past its
//! cap on the `Stop` hook's blocks, a Copilot CLI root agent's stop, a Codex CLI turn's end
//! or a Gemini CLI agent's end, in a log of a project whose gate is armed for that event, is
//! matched to the gate's last answer to that end's hook calls. An allow lets it through;
//! none (the hook was not installed, was removed, or its answer not heeded) is journaled as
//! a bypass, and so is a block the turn ended on all the same (a forced end: the host's cap
//! on a hook's blocks in a row, or judge-hook's end of a turn the agent would loop in),
//! which `judged status` counts and `judged report` lists. A reviewer CLI's run (`copilot
//! -p` prompted with a review nonce) ends a review, not an agent's work: it is no bypass.

use super::Engine;
use crate::hook_gate::SKIPPED_SHORT;
use crate::ingest::{Asked, TaskCompletion};
use crate::store::{ChallengeIssued, JournalEvent, Lookup, StoreError};
use chrono::{DateTime, Utc};
use judged_core::adapter;
use judged_core::event::Host;
use judged_core::{rules, timestamp};
use judged_io::files;
use judged_protocol::{CompletionBypassed, Decision, ForcedEnd, GateDecision, GatePolicy, block_ends_turn};
use std::path::Path;

impl Engine {
    /// Match the task completions ingested since the last call to the gate's decisions.
    pub(super) fn account_for_completions(&mut self) {
        let completions = self.ingest.take_completions();
        for completion in &completions {
            match self.account_for(completion) {
                Ok(Accounted::Done) => {}
                Ok(Accounted::NotYet) => self.ingest.defer(completion.clone()),
                Err(error) => {
                    tracing::warn!(%error, path = %completion.path, "cannot match a task completion to the gate's decisions");
                }
            }
        }
        // Only once they are matched: a daemon stopped before takes them up again.
        if let Err(error) = self.ingest.accounted(&mut self.store, &completions) {
            tracing::warn!(%error, "cannot keep that the completions found were matched");
        }
    }

    fn account_for(&mut self, completion: &TaskCompletion) -> Result<Accounted, StoreError> {
        // Copilot CLI's and Codex CLI's records name the session and its cwd only at its
        // start: the file's.
        let file = self.store.file(completion.file_id);
        let Some(host) = file.map(|f| f.host) else { return Ok(Accounted::Done) };
        let session_id = completion.session_id.clone().or_else(|| file.and_then(|f| f.session_id.clone()));
        let cwd = completion.cwd.clone().or_else(|| file.and_then(|f| f.cwd.clone()));
        // A completion from before judged kept a record (a log it found on its first
        // start) had no gate to ask. It began with its journal's first event, or with this
        // daemon's start when that was earlier: a fresh store journals nothing until it
        // finds a log, which the host may have written to the end by then.
        let started = chrono::Utc::now() - chrono::Duration::from_std(self.started.elapsed()).unwrap_or_default();
        let journaled = self.store.journal_began()?.as_deref().and_then(timestamp::parse);
        let began = journaled.map_or(started, |first| first.min(started));
        let at = completion.completed_at.as_deref().and_then(timestamp::parse);
        if at.is_some_and(|at| at < began) {
            return Ok(Accounted::Done);
        }
        let settings = match &cwd {
            Some(cwd) => (self.config.settings_for(Some(Path::new(cwd)), &mut self.projects))
                .unwrap_or_else(|_| self.config.settings_without_project_file(Some(Path::new(cwd)))),
            None => self.config.settings_without_project_file(None),
        };
        // The end of a host no hook can stop (OpenCode) is a bypass wherever the gate is on,
        // whatever `[gate] events` names: no event of it could ever be decided.
        let ungated = completion.asked == Asked::Never;
        let armed = settings.policy != GatePolicy::Off && (ungated || settings.decides(host, completion.event));
        if !armed {
            return Ok(Accounted::Done);
        }
        // An end whose log names no cwd, or whose time does not read (a log written over
        // before judged read it), is one no decision answers: each is asked in a directory,
        // at a time. It is a bypass all the same, not nothing.
        let forced_end = match (&cwd, at) {
            (Some(cwd), Some(at)) => match self.gates_answer(completion, host, &session_id, cwd, at, &settings)? {
                Some(forced_end) => forced_end,
                None => return Ok(Accounted::Done),
            },
            _ => None,
        };
        match self.reviewer_run(completion, at)? {
            ReviewerRun::Is => return Ok(Accounted::Done),
            ReviewerRun::NotYetKnown => return Ok(Accounted::NotYet),
            ReviewerRun::IsNot => {}
        }
        match forced_end {
            Some(forced) => {
                tracing::warn!(path = %completion.path, event = %completion.event, %forced, "a turn ended on the gate's block");
            }
            None => {
                tracing::warn!(path = %completion.path, event = %completion.event, "a completion went without the gate allowing it");
            }
        }
        let bypassed = CompletionBypassed {
            event: completion.event.into(),
            session_id,
            task_id: completion.task_id().map(str::to_owned),
            completed_at: completion.completed_at.clone(),
            cwd: cwd.unwrap_or_default(),
            path: completion.path.clone(),
            line: completion.line,
            forced_end,
        };
        // Found again (a daemon that stopped before the state that found it was stored
        // takes it up, and finds it once more): recorded once.
        let recorded = self.store.journal_find_all::<CompletionBypassed>(Lookup::BypassByLog, &bypassed.path)?;
        if recorded.iter().any(|(_, b)| b.line == bypassed.line && b.event == bypassed.event) {
            return Ok(Accounted::Done);
        }
        if let Some(command) = self.config.current().file.gate.on_bypass.clone() {
            notify(command, &bypassed);
        }
        self.store.journal(&JournalEvent::CompletionBypassed(bypassed))?;
        Ok(Accounted::Done)
    }
}

/// Whether `decision`, journaled at `decided_at`, answered a hook call of the end
/// `completion` recorded at `at` in `cwd` (resolved). What the host wrote after the gate answered (the
/// next prompt, the turn's end past the cap) was written after the answer, on the same
/// clock. An answer to a sub-agent's stop, or to a question asked in another directory
/// (whose gate may be off), is no answer to this end: anyone can ask those.
fn answers(
    completion: &TaskCompletion,
    host: Host,
    cwd: &str,
    at: DateTime<Utc>,
    decision: &GateDecision,
    decided_at: &str,
) -> bool {
    // A decision's cwd is recorded resolved; one recorded before it was is resolved here.
    // One asked as another host (the same event name, a payload made up) is no answer.
    if decision.subagent.is_some()
        || decision.host != host
        || decision.cwd.as_deref().map(files::resolve).as_deref() != Some(cwd)
    {
        return false;
    }
    let decided = timestamp::parse(decided_at);
    let before = |until: &Option<String>| {
        decided.is_some_and(|decided| until.as_deref().and_then(timestamp::parse).is_none_or(|until| decided <= until))
    };
    match &completion.asked {
        // Only an allow lets a task's update through: a blocked one failed. The hook runs
        // between the update's call and its result, so an allow from before the call (one
        // the agent asked for itself, an earlier completion's of the same task) is not
        // this one's.
        Asked::ForTask { task, called_at, .. } => {
            let since = called_at.as_deref().and_then(timestamp::parse).map(|called| called - SLACK);
            decision.decision == Decision::Allow
                && decision.task_id.as_deref() == Some(task)
                && decided.is_some_and(|decided| since.is_none_or(|since| since <= decided) && decided <= at + SLACK)
        }
        // A Codex CLI turn's end, recorded as soon as the gate answered its last stop. An
        // answer to an earlier stop of the turn is not this one's.
        Asked::WithinTurn { began } => {
            let from = at - ANSWERED_WITHIN;
            let from = began.as_deref().and_then(timestamp::parse).map_or(from, |began| began.max(from));
            decided.is_some_and(|decided| from <= decided && decided <= at + SLACK)
        }
        // The gate is asked after the end was recorded, so a decision from before it (a
        // second's slack for the two clocks' rounding) is another's.
        Asked::AfterStop { until } | Asked::AfterAnswer { until, .. } => {
            decided.is_some_and(|decided| decided >= at - SLACK) && before(until)
        }
        Asked::BeforeCap => before(&completion.completed_at),
        Asked::Never => false,
    }
}

impl Engine {
    /// What the gate's decisions say of `completion` (of a `host` log, at `at` in `cwd`):
    /// `None` when one answered it (an allow, or a block the agent went on from); else
    /// whether the turn ended on the gate's block, and after how many in a row.
    fn gates_answer(
        &mut self,
        completion: &TaskCompletion,
        host: Host,
        session_id: &Option<judged_core::event::SessionId>,
        cwd: &str,
        at: DateTime<Utc>,
        settings: &crate::hook_gate::Settings,
    ) -> Result<Option<Option<ForcedEnd>>, StoreError> {
        // The gate's last answer to this end, and the blocks in a row it closed: back to
        // the first of them (the host had not gone on after a block yet), or an allow.
        let mut last: Option<GateDecision> = None;
        let mut blocks = 0;
        let resolved_cwd = files::resolve(cwd);
        // A skip answers only a task whose own words, as its log shows them, are short: one
        // asked about other words (a forged question with the task's id), about a task whose
        // words the log does not show, or about a stop (whose payload the agent can make up)
        // answers nothing here.
        let skipped_other_words = |decision: &GateDecision| {
            let short =
                matches!(&completion.asked, Asked::ForTask { work_chars: Some(n), .. } if settings.skips_length(*n));
            decision.reason == SKIPPED_SHORT && !short
        };
        self.store.journal_newest_first(|_, decided_at, decision: GateDecision| {
            if decision.event != completion.event || decision.session_id != *session_id {
                return true;
            }
            if last.is_none()
                && (!answers(completion, host, &resolved_cwd, at, &decision, decided_at)
                    || skipped_other_words(&decision))
            {
                return true;
            }
            if decision.decision != Decision::Block {
                last.get_or_insert(decision);
                return false;
            }
            blocks += 1;
            let earlier_blocks = decision.stop_hook_active;
            last.get_or_insert(decision);
            earlier_blocks
        })?;
        Ok(match last {
            Some(last) if last.decision == Decision::Allow => None,
            // Gemini CLI goes on after a block judge-hook did not end the turn with: the
            // block's reason is the user message that followed the answer, and that answer
            // was no end. A block whose reason did not follow (one the agent asked for
            // itself, with its hook gone) says nothing of this end.
            Some(last)
                if matches!(&completion.asked, Asked::AfterAnswer { reason_recorded: true, followed_by: Some(said), .. }
                    if *said == crate::ingest::said(&last.message))
                    && !block_ends_turn(host, last.stop_hook_active) =>
            {
                None
            }
            Some(_) => Some(Some(ForcedEnd { blocks })),
            None => Some(None),
        })
    }

    /// Whether the log of `completion` (which ended at `ended`) is a reviewer CLI's run
    /// (looked at only for a completion no decision allowed, so a log is read for it
    /// rarely): its opening prompts carry the nonce of a challenge this daemon issued for
    /// another session, the run began within the round's time after it, and that
    /// session's log holds the shell call that ran this CLI around the run. A nonce the
    /// agent wrote where its host puts it in every session's opening (a project's
    /// `AGENTS.md`, a hook's context) so exempts no session its shell did not start. A host
    /// that records a shell call once it returned (Gemini CLI) may not show it yet: asked
    /// again for a while, one that records it as it starts not.
    fn reviewer_run(
        &mut self,
        completion: &TaskCompletion,
        ended: Option<DateTime<Utc>>,
    ) -> Result<ReviewerRun, StoreError> {
        let Some(file) = self.store.file(completion.file_id).cloned() else { return Ok(ReviewerRun::IsNot) };
        let Some(cli) = rules::ReviewerCli::of_host(file.host).filter(|_| file.pruned == 0) else {
            return Ok(ReviewerRun::IsNot);
        };
        self.logs.refresh(&self.store, &file)?;
        let log = self.logs.get(file.id);
        let Some(began) = log.records().find_map(|(_, r)| r.timestamp.as_deref().and_then(timestamp::parse)) else {
            return Ok(ReviewerRun::IsNot);
        };
        let nonces: Vec<String> = rules::reviewer_run_nonces(log).into_iter().map(str::to_owned).collect();
        let mut executors = Vec::new();
        for nonce in nonces {
            let issued = self.store.journal_find_all::<ChallengeIssued>(Lookup::ChallengeByNonce, &nonce)?;
            executors.extend(issued.into_iter().filter_map(|(at, challenge)| {
                let issued = timestamp::parse(&at)?;
                let this_round = issued - SLACK <= began && began <= issued + REVIEW_ROUND;
                (challenge.session_events != file.path && this_round).then_some((challenge.session_events, issued))
            }));
        }
        if executors.is_empty() {
            return Ok(ReviewerRun::IsNot);
        }
        let mut may_record_later = false;
        for (path, issued) in executors {
            // A log judged no longer holds whole (pruned), or cannot read now, shows no call:
            // the end is then recorded, never lost.
            let Some(executor) = self.store.file_by_path(&path).cloned().filter(|file| file.pruned == 0) else {
                continue;
            };
            if self.logs.refresh(&self.store, &executor).is_err() {
                continue;
            }
            if rules::runs_reviewer_around(self.logs.get(executor.id), cli, issued - SLACK, began) {
                return Ok(ReviewerRun::Is);
            }
            may_record_later |= adapter::of(executor.host).records_calls_when_returned();
        }
        // Asked again only for a while after an end the host timed: one with no time, or a
        // time to come (a line written by hand), is not waited for.
        let waited = ended.map(|ended| chrono::Utc::now() - ended);
        let waiting = waited.is_some_and(|waited| waited >= chrono::TimeDelta::zero() && waited < CALL_RECORDED_WITHIN);
        Ok(if may_record_later && waiting { ReviewerRun::NotYetKnown } else { ReviewerRun::IsNot })
    }
}

/// What became of a completion matched to the gate's decisions.
enum Accounted {
    /// Matched: recorded as a bypass, or answered.
    Done,
    /// Not yet: whether it is a reviewer's run is not known yet; matched again later.
    NotYet,
}

/// Whether a log is a reviewer CLI's run ([`Engine::reviewer_run`]).
enum ReviewerRun {
    Is,
    IsNot,
    /// Its executor's log may not show the shell call that ran it yet.
    NotYetKnown,
}

/// How long after a reviewer's run ended its executor's host may take to record the shell
/// call that ran it (Gemini CLI writes a call once it returned).
const CALL_RECORDED_WITHIN: chrono::Duration = chrono::Duration::minutes(5);

/// Run `[gate] on_bypass` with `bypassed` on its stdin, on a thread of its own (a slow or
/// stuck command holds up nothing); a command that fails is logged.
fn notify(command: Vec<String>, bypassed: &CompletionBypassed) {
    let Some((program, args)) = command.split_first() else { return };
    let (program, args) = (program.clone(), args.to_vec());
    let input = serde_json::to_vec(bypassed).unwrap_or_default();
    let spawned = std::thread::Builder::new().name("on-bypass".into()).spawn(move || {
        let child = std::process::Command::new(&program)
            .args(&args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn();
        let outcome = child.and_then(|mut child| {
            if let Some(mut stdin) = child.stdin.take() {
                std::io::Write::write_all(&mut stdin, &input)?;
            }
            child.wait()
        });
        match outcome {
            Ok(status) if status.success() => {}
            Ok(status) => tracing::warn!(%program, %status, "[gate] on_bypass failed"),
            Err(error) => tracing::warn!(%program, %error, "[gate] on_bypass could not run"),
        }
    });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start [gate] on_bypass");
    }
}

/// How much earlier than the stop's record a decision may be stamped and still be its.
const SLACK: chrono::Duration = chrono::Duration::seconds(1);

/// How long after its challenge a review round's reviewer run may begin.
const REVIEW_ROUND: chrono::Duration = chrono::Duration::hours(1);

/// How long before a Codex CLI turn's recorded end the gate's answer to its last stop may
/// be stamped: the client records the end as soon as the hook returns.
const ANSWERED_WITHIN: chrono::Duration = chrono::Duration::seconds(10);
