//! What the daemon answers: one type per operation (named on each [`crate::Request`]
//! variant), and the envelope around it.

use judged_core::adapter::EventName;
use judged_core::event::{Host, SessionId};
use judged_core::rules::{Challenge, Evidence, EvidenceId, LogState};
use judged_io::files::HostRoots;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Any reply, as the daemon sends it: the body alone, untagged (the client knows which
/// type it asked for).
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Reply {
    /// To [`crate::Request::Status`].
    Status(Box<StatusReport>),
    /// To [`crate::Request::Progress`].
    CatchUp(CatchUp),
    /// To [`crate::Request::Sessions`] and [`crate::Request::Rebuild`].
    Sessions(Vec<SessionSummary>),
    /// To [`crate::Request::Events`].
    Events(Vec<EventLine>),
    /// To [`crate::Request::ChainHead`].
    ChainHead(ChainHead),
    /// To [`crate::Request::VerifyLog`].
    PrefixCheck(PrefixCheck),
    /// To [`crate::Request::Challenge`]: the challenge artifact, witnessed.
    Challenge(Challenge),
    /// To [`crate::Request::Verify`].
    Verification(Box<Verification>),
    /// To [`crate::Request::Validate`].
    Validation(Validation),
    /// To [`crate::Request::Hook`].
    Hook(HookAnswer),
    /// To [`crate::Request::Decisions`].
    Decisions(Vec<DecisionRecord>),
    /// To [`crate::Request::Shutdown`].
    Stopping(Stopping),
    /// To [`crate::Request::Panel`].
    Panel(PanelReply),
    /// To [`crate::Request::Trace`].
    Trace(TraceReply),
    /// To [`crate::Request::Report`].
    Report(ReportData),
    /// To [`crate::Request::Review`].
    Review(ReviewReply),
    /// To [`crate::Request::GateStatus`].
    GateStatus(GateStatus),
    /// To [`crate::Request::Prune`].
    Prune(PruneReport),
    /// To [`crate::Request::Attest`].
    Attest(AttestReply),
}

/// One response: the request's id echoed, and the reply or a refusal.
#[derive(Debug, Serialize, Deserialize)]
pub struct Response<T> {
    /// The protocol version.
    pub v: u32,
    /// The request's id.
    pub id: u64,
    /// The answer.
    #[serde(flatten)]
    pub outcome: Outcome<T>,
}

/// A reply, or why there is none, or news of the work before either.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome<T> {
    /// The operation's reply.
    Ok(T),
    /// A refusal.
    Error(ErrorBody),
    /// How a long operation is going; the reply follows on the same connection.
    Progress(JuryProgress),
}

/// A refusal. `exit_code` is set when the error is an evidence decision the CLI must
/// report with that code (the same one direct mode would give).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorBody {
    /// What is wrong and what to do, for a person.
    pub message: String,
    /// The evidence exit code, for an evidence decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<u8>,
    /// For a refusal a later host write could change: how far the logs it read had got,
    /// so the client knows whether to ask again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_state: Option<LogState>,
}

impl ErrorBody {
    /// A refusal that is no evidence decision (a bad request, a transport failure).
    pub fn message(message: impl Into<String>) -> ErrorBody {
        ErrorBody { message: message.into(), exit_code: None, log_state: None }
    }
}

/// The daemon's state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StatusReport {
    /// The daemon's process id.
    pub pid: u32,
    /// Its version.
    pub version: String,
    /// The protocol it speaks.
    pub protocol: u32,
    /// Seconds since it started.
    pub uptime_seconds: u64,
    /// Where its store, key and log live.
    pub data_dir: PathBuf,
    /// Where it listens.
    pub socket: PathBuf,
    /// The roots watched, under each host's key (`copilot_roots`, `claude_roots`, …).
    #[serde(flatten)]
    pub roots: HostRoots,
    /// The OpenCode databases read.
    #[serde(default)]
    pub opencode_databases: Vec<PathBuf>,
    /// Logs witnessed.
    pub files: u64,
    /// Lines stored, over all logs.
    pub lines: u64,
    /// Bytes ingested, over all logs.
    pub bytes: u64,
    /// The store's size on disk (database and its log), to set against `bytes`.
    #[serde(default)]
    pub store_bytes: u64,
    /// Lines whose bytes were pruned (`judged prune`, `[store] keep_days`).
    #[serde(default)]
    pub pruned_lines: u64,
    /// Logs found rewritten.
    pub tampered: u64,
    /// Starts at which the store's own chains did not verify (journaled each time).
    #[serde(default)]
    pub store_integrity_failures: u64,
    /// Task completions no gate decision allowed (`judged report` lists them).
    #[serde(default)]
    pub completions_bypassed: u64,
    /// Of those, the turns that ended on the gate's block ([`ForcedEnd`]).
    #[serde(default)]
    pub forced_ends: u64,
    /// Events in the daemon's journal.
    pub journal_events: u64,
    /// Full reconciliations of the roots so far (a busy idle daemon is a bug).
    pub catch_up_passes: u64,
    /// The catch-up on start.
    #[serde(default)]
    pub catch_up: CatchUp,
    /// Bytes the logs hold that are not ingested yet (what the watcher has still to read).
    #[serde(default)]
    pub lag_bytes: u64,
    /// The config in force, and an edit that was not applied.
    #[serde(default)]
    pub config: ConfigStatus,
}

/// How far the catch-up on start has got: the logs found under the roots, and how much
/// of them is ingested.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CatchUp {
    /// Logs found.
    pub files_found: u64,
    /// Logs caught up.
    pub files_done: u64,
    /// Their bytes.
    pub bytes_found: u64,
    /// Bytes caught up.
    pub bytes_done: u64,
    /// The catch-up has ended (the daemon answers everything else from here on).
    pub done: bool,
}

/// One witnessed session.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SessionSummary {
    /// The host that writes it.
    pub host: Host,
    /// Its key: the session directory (Copilot) or transcript name (Claude Code).
    pub session: String,
    /// The host's session id, once a line names it.
    pub session_id: Option<SessionId>,
    /// The session's working directory, once a line names it.
    pub cwd: Option<String>,
    /// The log file.
    pub path: String,
    /// Lines stored.
    pub events: u64,
    /// Bytes ingested.
    pub bytes: u64,
    /// The newest line's timestamp.
    pub last_event_time: Option<String>,
    /// The file no longer holds the bytes ingested.
    pub tampered: bool,
    /// Integrity findings recorded about it.
    pub integrity_findings: u64,
    /// Its first lines whose bytes were pruned (0: all are kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pruned_lines: u64,
}

/// One stored line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EventLine {
    /// Its number in the log (1-based).
    pub seq: u64,
    /// Its first byte's offset.
    pub start: u64,
    /// The offset after its last byte.
    pub end: u64,
    /// The record type, when it parsed.
    pub kind: Option<String>,
    /// SHA-256 of its bytes, hex.
    pub line_sha256: String,
    /// The log's chain head after it, hex.
    pub chain_sha256: String,
    /// The line as written (lossy UTF-8); empty when pruned.
    pub raw: String,
    /// Its bytes were pruned from the store: its hash and chain are what is left.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pruned: bool,
}

/// A session's chain head after one line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChainHead {
    /// The session's key.
    pub session: String,
    /// The line.
    pub seq: u64,
    /// The chain head, hex.
    pub chain_sha256: String,
}

/// A log's ingested history checked against its file (`judged verify-log` prints it).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrefixCheck {
    /// The session's key.
    pub session: String,
    /// The log file.
    pub path: String,
    /// Lines ingested.
    pub lines: u64,
    /// Bytes ingested.
    pub bytes: u64,
    /// The chain head after the last line, hex.
    pub chain_sha256: String,
    /// The file no longer holds the bytes ingested (now or at an earlier check).
    pub tampered: bool,
    /// The file is gone; its history stays in the store.
    pub vanished: bool,
    /// Integrity findings recorded about it.
    pub findings: u64,
}

/// Verified evidence.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Verification {
    /// The evidence artifact, witnessed.
    pub evidence: Evidence,
    /// The reviewer's response, for the client to write.
    pub response: String,
    /// The byte offset where the reviewed window starts in the log.
    pub window_start: u64,
}

/// A revalidated artifact.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Validation {
    /// The daemon's witness on it was checked (always, when the daemon answers).
    pub witness_checked: bool,
    /// The host's time of the reviewer's completion, derived from the log, for evidence
    /// that does not record `reviewed_at` (`judged_core::rules::Validated`). Absent from
    /// a daemon that never derives it, which then reads as none derived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived_reviewed_at: Option<String>,
}

/// The gate's answer to a hook.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HookAnswer {
    /// Allow or block.
    pub decision: Decision,
    /// What the host shows when it blocks: what to do.
    pub message: String,
    /// Whether the event is one the gate covers (otherwise allowed, not recorded).
    pub gated: bool,
    /// Answered from an earlier decision on the same inputs.
    #[serde(default)]
    pub from_record: bool,
    /// A block the host's next write can lift (a session whose log names no model yet:
    /// a host writes its records a moment after it runs its hook): ask again for a while.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ask_again: bool,
}

/// Allow or block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The step may go on.
    Allow,
    /// The step is blocked.
    Block,
}

/// Which review the gate asks for (`policy` in `[gate]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GatePolicy {
    /// The gate allows everything.
    Off,
    /// Verified cross-family evidence.
    Evidence,
    /// A verdict of judged's own jury.
    Panel,
    /// Evidence, else the jury.
    EvidenceOrPanel,
}

/// One gate decision, as the journal records it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateDecision {
    /// The hook event (`TaskCompleted`, `agentStop`, …), as the payload named it.
    pub event: EventName,
    /// The host that asked.
    pub host: Host,
    /// The agent-team member that asked, when one did.
    pub teammate: Option<String>,
    /// The sub-agent whose stop it was (its type, possibly empty), when the payload said
    /// so: an answer to that stop, never to the root agent's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<String>,
    /// The host's session id.
    pub session_id: Option<SessionId>,
    /// The session's working directory.
    pub cwd: Option<String>,
    /// The task, for a task event.
    pub task_id: Option<String>,
    /// The task's subject, for a task event whose host named it (absent in records from
    /// before it was kept: `judged report` then reads it from the message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_subject: Option<String>,
    /// The policy in force.
    pub policy: GatePolicy,
    /// Where the settings came from, lowest layer first.
    pub settings_from: Vec<String>,
    /// The decision.
    pub decision: Decision,
    /// Why, in a few words.
    pub reason: String,
    /// What the host was told.
    pub message: String,
    /// Whether the working tree was the one the review saw, when the gate required it.
    pub tree_unchanged: Option<bool>,
    /// How long deciding took.
    pub latency_ms: f64,
    /// What makes two questions the same (absent for a question the gate could not judge).
    pub key: Option<String>,
    /// The key of the jury verdict it rested on, when the jury decided.
    #[serde(default)]
    pub panel: Option<String>,
    /// The evidence it rested on, when verified evidence decided (absent in records from
    /// before it was kept: `judged report` then reads it from the message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_id: Option<EvidenceId>,
    /// The config files it was made under, each with the digest of the version in force
    /// (absent in records from before it was kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<ConfigFileUsed>,
    /// The host had already gone on after a block of this stop (its hook input's
    /// `stop_hook_active`): a block in a row, not the first (absent in records from
    /// before it was kept).
    #[serde(default)]
    pub stop_hook_active: bool,
}

/// A config file a decision was made under.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigFileUsed {
    /// The file (`config.toml` or a project's `.judged.toml`).
    pub path: PathBuf,
    /// The SHA-256 of the version in force; `None` when the file does not exist (the
    /// defaults are in force).
    pub sha256: Option<String>,
}

impl std::fmt::Display for ConfigFileUsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.sha256 {
            Some(sha256) => write!(f, "{} (sha256 {})", self.path.display(), &sha256[..sha256.len().min(12)]),
            None => write!(f, "{} (absent: the defaults)", self.path.display()),
        }
    }
}

/// The daemon's config as `status` reports it: the version in force, and an edit that was
/// not applied.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigStatus {
    /// `config.toml` in force.
    pub file: ConfigFileUsed,
    /// When that version was read (RFC 3339).
    pub loaded_at: String,
    /// The newest version that was not applied, and why; `None` when the file on disk is
    /// the one in force.
    pub rejected: Option<UnappliedConfig>,
    /// Settings that changed in the file but take effect only at the next start (the
    /// roots, `[server]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restart_needed: Vec<String>,
}

/// A version of a config file that was not applied.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnappliedConfig {
    /// Its SHA-256.
    pub sha256: String,
    /// What is wrong, on one line: the file, the line and the error.
    pub error: String,
    /// When it was read (RFC 3339).
    pub at: String,
}

/// A recorded gate decision with its place in the journal.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// The journal sequence number.
    pub seq: i64,
    /// When it was recorded.
    pub at: String,
    /// The decision.
    #[serde(flatten)]
    pub decision: GateDecision,
}

/// The daemon is stopping.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Stopping {
    /// Always true.
    pub stopping: bool,
}

/// The jury's answer: what a caller acts on, and the packet as the daemon wrote it.
#[derive(Debug, Serialize, Deserialize)]
pub struct PanelReply {
    /// The journal key of this panel (rubric, persona, artifact and jury).
    pub key: String,
    /// The verdict a gate acts on, together with `degraded`.
    pub final_verdict: judged_jury::packet::FinalVerdict,
    /// 0..=100.
    pub final_confidence: u8,
    /// Fewer than two families really answered: the verdict is not cross-family evidence.
    pub degraded: bool,
    /// The packet (docs/spec/jury.md §4 plus judged's keys) as JSON text, byte for byte as
    /// journaled: its key order is the reference's, which a `Value` would not keep.
    pub packet: String,
}

/// One step of a running jury.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JuryProgress {
    /// Since the jury was convened.
    pub elapsed_ms: u64,
    /// The whole cascade's deadline.
    pub deadline_ms: u64,
    /// What happened.
    pub step: JuryStep,
}

/// One line for a person: `[  1.2s / 100s] small-openai finished: pass in 1.1s`.
impl std::fmt::Display for JuryProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{:5.1}s / {}s] ", self.elapsed_ms as f64 / 1000.0, self.deadline_ms / 1000)?;
        match &self.step {
            JuryStep::Started { juror, stage } => write!(f, "{juror} started ({})", wire_name(stage)),
            JuryStep::Finished { juror, verdict, latency_ms } => {
                write!(f, "{juror} finished: {} in {:.1}s", wire_name(verdict), *latency_ms as f64 / 1000.0)
            }
            JuryStep::Escalated { agreement, tiebreaker: Some(tiebreaker) } => {
                write!(f, "escalated ({}): asking {tiebreaker}", wire_name(agreement))
            }
            JuryStep::Escalated { agreement, tiebreaker: None } => {
                write!(f, "escalated ({}): no tiebreaker can be cross-family", wire_name(agreement))
            }
        }
    }
}

/// A unit enum's name as the wire spells it (`allow`, `evidence_or_panel`, `stage_1`,
/// `pass`): serde's, the one spelling.
pub fn wire_name<T: Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        other => other.map(|v| v.to_string()).unwrap_or_default(),
    }
}

/// What happened in a running jury.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JuryStep {
    /// A juror's process is starting.
    Started {
        /// The juror's name.
        juror: String,
        /// Stage 1 or the tiebreaker.
        stage: judged_jury::convene::Stage,
    },
    /// A juror is done, answered or down.
    Finished {
        /// The juror's name.
        juror: String,
        /// Its answer, or `error`/`timeout` when down.
        verdict: judged_jury::packet::JurorVerdict,
        /// How long it ran.
        latency_ms: u64,
    },
    /// Stage 1 did not settle it; the tiebreaker (if one can be cross-family) is asked.
    Escalated {
        /// How stage 1's answers related.
        agreement: judged_jury::packet::Agreement,
        /// The tiebreaker chosen, or none when none could be cross-family.
        tiebreaker: Option<String>,
    },
}

/// A journaled review trace.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TraceReply {
    /// The provenance as the daemon derived it: what the trace files must say.
    pub provenance: judged_core::trace::Provenance,
    /// The journal event's sequence number.
    pub journal_seq: i64,
}

impl From<&judged_jury::convene::Progress<'_>> for JuryStep {
    fn from(progress: &judged_jury::convene::Progress<'_>) -> JuryStep {
        use judged_jury::convene::Progress;
        match *progress {
            Progress::Started { juror, stage } => JuryStep::Started { juror: juror.to_owned(), stage },
            Progress::Finished { juror, verdict, latency_ms } => {
                JuryStep::Finished { juror: juror.to_owned(), verdict, latency_ms }
            }
            Progress::Escalated { agreement, tiebreaker } => {
                JuryStep::Escalated { agreement, tiebreaker: tiebreaker.map(str::to_owned) }
            }
        }
    }
}

/// What `judged prune` did (or, dry, would do).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PruneReport {
    /// The cutoff: sessions idle since before it were considered.
    pub older_than: String,
    /// Nothing was pruned: this is what would be.
    pub dry_run: bool,
    /// Sessions whose bytes were (or would be) dropped.
    pub pruned: Vec<PrunedSession>,
    /// Idle sessions kept, each with why.
    pub kept: Vec<KeptSession>,
    /// The log bytes dropped (or that would be), in all.
    pub bytes: u64,
    /// The store's size on disk after `vacuum` rewrote it, when asked.
    #[serde(default)]
    pub vacuumed_to: Option<u64>,
}

/// A session whose stored bytes were dropped.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrunedSession {
    /// The session's key.
    pub session: String,
    /// Its log.
    pub path: String,
    /// The host that wrote it.
    pub host: Host,
    /// Its lines whose bytes went; their hashes and chain stay.
    pub lines: u64,
    /// The log bytes they held.
    pub bytes: u64,
    /// Its last record's time, as the host wrote it.
    pub last_record: String,
}

/// An idle session prune left alone, and why.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct KeptSession {
    /// The session's key.
    pub session: String,
    /// Its log.
    pub path: String,
    /// What still needs its bytes.
    pub why: String,
}

/// What `judged report` shows: the gate's decisions over a period, oldest first, each
/// with what it rested on, and the review calls traced in that period.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportData {
    /// The start of the period (absent: since the journal began).
    pub since: Option<String>,
    /// When the daemon answered.
    pub generated_at: String,
    /// The gate's decisions, oldest first.
    pub decisions: Vec<ReportDecision>,
    /// Review calls traced (`judge-evidence trace`), oldest first.
    #[serde(default)]
    pub traces: Vec<ReportTrace>,
    /// Task completions no gate decision allowed, oldest first.
    #[serde(default)]
    pub bypassed: Vec<CompletionBypassed>,
}

/// A completion a host logged in a project whose gate is armed for its event, that no gate
/// decision allowed: the hook did not run, or its answer was not heeded, or the turn ended
/// on the gate's block ([`ForcedEnd`]). Claude Code: a task marked completed
/// (`TaskCompleted`), or a stop the client ended past its cap (`Stop`); Copilot CLI: the
/// root agent's stop (`agentStop`); Codex CLI: a turn's end (`Stop`); Gemini CLI: the
/// agent's end (`AfterAgent`). Journaled once per completion.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionBypassed {
    /// The gated event it went around (records from before this field: `TaskCompleted`).
    #[serde(default = "task_completed")]
    pub event: EventName,
    /// The host's session id.
    pub session_id: Option<SessionId>,
    /// The task (`TaskUpdate`'s `taskId`), for a task completed.
    #[serde(default)]
    pub task_id: Option<String>,
    /// The host's time of the completion (its tool result's timestamp).
    pub completed_at: Option<String>,
    /// The session's working directory.
    pub cwd: String,
    /// The transcript.
    pub path: String,
    /// The line of the completion's result in it.
    pub line: u64,
    /// When the last answer of the gate to this end was a block: the turn ended on it
    /// (absent in records from before it was kept, and when no decision answered).
    #[serde(default)]
    pub forced_end: Option<ForcedEnd>,
}

/// A turn that ended on the gate's block: the host's cap on a hook's blocks in a row (Claude
/// Code's, Copilot CLI's), or the end judge-hook makes of a turn the agent would otherwise
/// loop in ([`block_ends_turn`]). The gate did not allow it: it is a bypass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForcedEnd {
    /// The gate's blocks in a row the turn ended after, the last included.
    pub blocks: u32,
}

impl std::fmt::Display for ForcedEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.blocks {
            1 => f.write_str("the host ended the turn after judged blocked it once: the gate's block cap"),
            n => write!(f, "the host ended the turn after judged blocked it {n} times: the gate's block cap"),
        }
    }
}

/// Whether judge-hook's block of a stop ends the agent's turn, rather than make it go on.
/// `again`: the host already went on after a block of this stop (`stop_hook_active`).
/// A host that goes on after every block with no cap of its own
/// ([`HostHooks::blocks_uncapped`](judged_core::adapter::HostHooks::blocks_uncapped)) has
/// the second block end the turn, with the reason as the stop's; the others cap the
/// blocks themselves.
pub fn block_ends_turn(host: Host, again: bool) -> bool {
    again && judged_core::adapter::hooks(host).blocks_uncapped()
}

fn task_completed() -> EventName {
    EventName::read("TaskCompleted")
}

/// One gate decision and what it rested on.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportDecision {
    /// The journal sequence number of the decision.
    pub seq: i64,
    /// When it was recorded.
    pub at: String,
    /// The decision as journaled.
    pub decision: GateDecision,
    /// The verified review an allow rested on (evidence policies).
    #[serde(default)]
    pub review: Option<ReportReview>,
    /// The jury verdict it rested on (panel policies), allow or block.
    #[serde(default)]
    pub jury: Option<ReportJury>,
}

/// Verified evidence, as the journal recorded it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportReview {
    /// The review's evidence id.
    pub evidence_id: EvidenceId,
    /// The host whose log recorded the review.
    pub host: Host,
    /// The host's session id.
    pub session_id: Option<SessionId>,
    /// The log the reviewer's identity was read from.
    pub session_events: String,
    /// Where the reviewer's identity comes from (the host's own log, or the caller's word).
    pub identity_source: String,
    /// How far the reviewer's identity is known: a host recorded it, or only the caller
    /// declared it (records from before it was kept are of host-recorded reviews).
    #[serde(default)]
    pub identity_assurance: judged_core::rules::IdentityAssurance,
    /// The executor's model, as the host recorded it.
    pub executor_model: Option<String>,
    /// Its family, derived from the model.
    pub executor_family: Option<String>,
    /// The reviewer's model, as the host recorded it.
    pub reviewer_model: Option<String>,
    /// Its family, derived from the model.
    pub reviewer_family: Option<String>,
    /// The response's Score.
    pub score: Option<f64>,
    /// The response's Verdict.
    pub verdict: Option<String>,
    /// The host's time of the review's end.
    pub reviewed_at: Option<String>,
    /// When judged verified it.
    pub verified_at: String,
    /// judged's witness (HMAC) on the evidence.
    pub witness: String,
}

/// A jury verdict, as the journal recorded it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportJury {
    /// The panel's key.
    pub key: String,
    /// The rubric it judged by.
    pub rubric: String,
    /// `pass`, `fail`, `uncertain` or `error`.
    pub final_verdict: String,
    /// 0..=100.
    pub final_confidence: u8,
    /// Fewer than two families answered.
    pub degraded: bool,
    /// `juror: reason` of every juror that was down.
    pub down: Vec<String>,
    /// Every juror's flags.
    pub flags: Vec<String>,
    /// Each juror that ran, stage 1 first.
    pub jurors: Vec<ReportJuror>,
}

/// One juror of a jury, from its packet.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportJuror {
    /// The configured name.
    pub name: String,
    /// `stage_1` or `tiebreaker`.
    pub stage: String,
    /// The model configured.
    pub model_requested: String,
    /// The model the CLI's own record says answered.
    pub model_reported: Option<String>,
    /// The family, derived from the model.
    pub family: Option<String>,
    /// Which record `model_reported` was read from.
    pub identity_source: Option<String>,
    /// Its verdict, or `error`/`timeout` when down.
    pub verdict: String,
    /// 0..=100.
    pub confidence: u8,
    /// Wall time.
    pub latency_ms: u64,
    /// Why it was down.
    pub error: Option<String>,
}

/// A traced review call.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReportTrace {
    /// When it was journaled.
    pub at: String,
    /// `--skill`.
    pub skill: String,
    /// `--purpose`.
    pub purpose: String,
    /// The run directory.
    pub trace_path: String,
    /// The review backend.
    pub backend: String,
    /// The call's status.
    pub status: String,
    /// The provenance the daemon derived.
    pub provenance: judged_core::trace::Provenance,
}

/// A review's verdict, and what the gate will make of it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReviewReply {
    /// The verdict, each juror (model requested and reported, family) and the flags
    /// (a codex-judge juror's remediation items among them).
    pub jury: ReportJury,
    /// Why no tiebreaker could run, when none could.
    pub tiebreaker_unavailable: Option<String>,
    /// The same review was convened before: this is its verdict, not a new one.
    pub from_record: bool,
    /// Whether the gate counts it.
    pub gate: ReviewCount,
    /// The packet as journaled (JSON text, the reference's key order).
    pub packet: String,
}

/// Whether the gate counts a review for a task completed on the reviewed tree.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReviewCount {
    /// The gate answers such a task from this verdict (as from its own jury's).
    pub counted: bool,
    /// ... and that answer is an allow.
    pub allows: bool,
    /// Why, and what to do next, for a person.
    pub why: String,
}

/// What the gate needs now for a session and project.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateStatus {
    /// The project, resolved.
    pub cwd: String,
    /// The policy in force there.
    pub policy: GatePolicy,
    /// Where the settings came from, lowest layer first.
    pub sources: Vec<String>,
    /// The config files read, each with the digest of the version in force.
    pub config: Vec<ConfigFileUsed>,
    /// Edits of those files that were not applied, each on one line.
    pub not_applied: Vec<String>,
    /// The hook events the gate decides.
    pub events: Vec<String>,
    /// The rubric the gate's jury judges by.
    pub panel_rubric: String,
    /// How recent evidence must be.
    pub freshness_seconds: u64,
    /// Whether evidence counts only while the tree is the one reviewed.
    pub require_reviewed_tree: bool,
    /// The fresh positive evidence the gate would count, by id.
    pub evidence_id: Option<EvidenceId>,
    /// The review of the tree as it is now that the gate would count.
    pub review: Option<ReportJury>,
    /// A task completed now would be allowed without anything more.
    pub satisfied: bool,
    /// What is missing, in the words the gate's block would use; absent when satisfied.
    pub missing: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The answer to [`crate::Request::Attest`]: the witness's signed attestation, or why the
/// commit gets none.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum AttestReply {
    /// The commit holds a tree a review covered: signed.
    Attested(Box<Attestation>),
    /// It does not, or that review does not count.
    Refused(AttestRefusal),
}

/// A signed attestation of one commit.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Attestation {
    /// The commit's id.
    pub commit: String,
    /// The tree it holds, the one reviewed.
    pub tree: String,
    /// The statement, as the envelope's payload holds it.
    pub statement: judged_core::attestation::Statement,
    /// The DSSE envelope: what a note carries, one line of JSON.
    pub envelope: judged_core::attestation::Envelope,
    /// False when this review of this commit was attested before: the envelope is that
    /// one again (the note needs no second copy).
    pub first: bool,
}

/// Why a commit gets no attestation. Each names the commit, the cause and what to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[serde(tag = "refusal", rename_all = "snake_case")]
pub enum AttestRefusal {
    /// The directory is in no repository judged can read.
    #[error("{cwd} is in no git repository judged can read: run attest inside the repository's work tree")]
    NotARepository {
        /// The directory asked about.
        cwd: String,
    },
    /// The object sent as the commit does not hash to its id.
    #[error(
        "the object sent as commit {commit} is not that commit (it hashes to another id): send the commit as \
         `git cat-file commit {commit}` prints it"
    )]
    NotThatCommit {
        /// The id asked about.
        commit: String,
    },
    /// The gate's config for the repository cannot be used.
    #[error("the gate's config for {top} cannot be used: {why}; fix that file and attest again")]
    Config {
        /// The repository's top directory.
        top: String,
        /// What is wrong with it.
        why: String,
    },
    /// No review of this project at all.
    #[error(
        "commit {commit} holds tree {tree}, and judged witnessed no review of this repository's work: run a \
         review round (marker, challenge, the review, verify) or the jury on the work before committing it, \
         then attest the commit"
    )]
    NotReviewed {
        /// The commit.
        commit: String,
        /// Its tree.
        tree: String,
    },
    /// Reviews of this project, but none of this tree: the commit holds changes made after.
    #[error(
        "commit {commit} holds tree {tree}, which no review saw: the newest review of this repository ({review}, \
         {reviewed_at}) saw tree {reviewed_tree}, so the commit was amended or holds changes made after that \
         review{}; review the work as committed and attest again",
        parent_reviewed.as_ref().map(|p| format!(" (its parent {p} holds a reviewed tree: this commit came after the review)")).unwrap_or_default()
    )]
    TreeDiffers {
        /// The commit.
        commit: String,
        /// Its tree.
        tree: String,
        /// The newest review of the repository: `evidence cne_…` or `jury <key>`.
        review: String,
        /// When that review ended.
        reviewed_at: String,
        /// The tree it saw.
        reviewed_tree: String,
        /// The commit's parent, when its tree is one a review saw.
        parent_reviewed: Option<String>,
    },
    /// The review of this tree was of the executor's own family.
    #[error(
        "the review of commit {commit}'s tree (evidence {evidence_id}) is by {reviewer_model}, of the same family \
         as the work's author {executor_model} ({family}): that is no cross-family review; review it with a model \
         of another family and attest again"
    )]
    SameFamily {
        /// The commit.
        commit: String,
        /// The evidence.
        evidence_id: EvidenceId,
        /// The author's model.
        executor_model: String,
        /// The reviewer's.
        reviewer_model: String,
        /// Their family.
        family: String,
    },
    /// A family of the review of this tree is unknown.
    #[error(
        "the review of commit {commit}'s tree (evidence {evidence_id}) pairs {executor_model} with {reviewer_model}, \
         and the family of one is unknown, so it is no cross-family review; review it with a model of a known \
         other family and attest again"
    )]
    UnknownFamily {
        /// The commit.
        commit: String,
        /// The evidence.
        evidence_id: EvidenceId,
        /// The author's model.
        executor_model: String,
        /// The reviewer's.
        reviewer_model: String,
    },
    /// The review of this tree names its reviewer on the caller's word only.
    #[error(
        "the review of commit {commit}'s tree (evidence {evidence_id}) names its reviewer {reviewer_model} on the \
         caller's word alone (caller-declared), and the gate of this repository counts only host-recorded \
         reviews: review it through a path whose host records the reviewer, or set evidence_assurance = \
         \"caller-declared\" in [gate] to attest such reviews"
    )]
    CallerDeclared {
        /// The commit.
        commit: String,
        /// The evidence.
        evidence_id: EvidenceId,
        /// The reviewer's model, as declared.
        reviewer_model: String,
    },
    /// The reviewer did not approve the tree.
    #[error(
        "the review of commit {commit}'s tree (evidence {evidence_id}) did not approve it ({}): the gate counts a \
         Score of 6/10 or more with Verdict ready or almost; fix the work, review it again and attest",
        match (score, verdict) { (Some(s), Some(v)) => format!("Score {s}/10, Verdict {v}"), _ => "its answer has no single Score and Verdict".into() }
    )]
    NotApproved {
        /// The commit.
        commit: String,
        /// The evidence.
        evidence_id: EvidenceId,
        /// Its score.
        score: Option<f64>,
        /// Its verdict.
        verdict: Option<String>,
    },
    /// The review of this tree rests on a log no longer what was verified.
    #[error(
        "the review of commit {commit}'s tree (evidence {evidence_id}) rests on a session log that was rewritten, \
         pruned or broke its chain since it was verified, so it no longer counts: review the work again and attest"
    )]
    LogUndone {
        /// The commit.
        commit: String,
        /// The evidence.
        evidence_id: EvidenceId,
    },
    /// The jury on this tree did not pass it.
    #[error(
        "the jury on commit {commit}'s tree ({packet_id}) said {verdict}{}: only a healthy cross-family pass \
         counts; fix the work and ask the jury again",
        if *degraded { ", degraded (a juror was down, so two families did not judge)" } else { "" }
    )]
    JuryDidNotPass {
        /// The commit.
        commit: String,
        /// The jury's record.
        packet_id: String,
        /// Its final verdict.
        verdict: String,
        /// Whether a juror was down.
        degraded: bool,
    },
    /// The jury on this tree was not told whose work it judged.
    #[error(
        "the jury on commit {commit}'s tree ({packet_id}) was not told whose work it judged (its session is none \
         judged witnesses, or named none), so it cannot say its reviewers were of another family than the author: \
         ask for the review with your own session's id, then attest"
    )]
    JuryWithoutAuthor {
        /// The commit.
        commit: String,
        /// The jury's record.
        packet_id: String,
    },
    /// The review of this tree does not record where its changes began.
    #[error(
        "the review of commit {commit}'s tree ({review}) does not record the commit its changes were read \
         against (it was made before judged kept that, or HEAD could not be read then), so it cannot say which \
         changes it saw: review the work again and attest"
    )]
    BaseUnknown {
        /// The commit.
        commit: String,
        /// The review: `evidence cne_…` or `jury <key>`.
        review: String,
    },
    /// The review of this tree began at the commit itself: it saw none of its changes.
    #[error(
        "the review of commit {commit}'s tree ({review}) began when HEAD was already {commit}, so it was shown \
         none of the changes that commit makes: review work before committing it (or `git reset --soft HEAD~1` \
         and review again), then attest"
    )]
    ReviewedNothing {
        /// The commit.
        commit: String,
        /// The review: `evidence cne_…` or `jury <key>`.
        review: String,
    },
}

impl AttestRefusal {
    /// `judge-evidence attest`'s exit code for the refusal (docs/spec/attestation.md): 11
    /// when no review saw the commit's tree, 10 when one did and does not count, 2 when
    /// the question cannot be answered.
    pub fn exit_code(&self) -> u8 {
        match self {
            AttestRefusal::NotARepository { .. }
            | AttestRefusal::NotThatCommit { .. }
            | AttestRefusal::Config { .. } => 2,
            AttestRefusal::NotReviewed { .. } | AttestRefusal::TreeDiffers { .. } => 11,
            AttestRefusal::SameFamily { .. }
            | AttestRefusal::UnknownFamily { .. }
            | AttestRefusal::CallerDeclared { .. }
            | AttestRefusal::NotApproved { .. }
            | AttestRefusal::LogUndone { .. }
            | AttestRefusal::JuryDidNotPass { .. }
            | AttestRefusal::JuryWithoutAuthor { .. }
            | AttestRefusal::BaseUnknown { .. }
            | AttestRefusal::ReviewedNothing { .. } => 10,
        }
    }
}
