//! Lookups shared by the rules: session metadata, the marker lifecycle, the rubber-duck
//! invocation test and the reviewer lifecycle. Where two rules refuse the same finding
//! in different words (the reference helper's, kept byte for byte), the lookup returns a
//! fault enum and each rule words it.

use super::{Artifact, EvidenceError, Nonce, Result, has_nonce_line, marker_text};
use crate::adapter::{self, SessionNamed};
use crate::event::{Record, SessionId, SubagentPhase, ToolCall, ToolResult};
use crate::host_chain::HostChain;
use crate::log::{Line, SessionLog};
use serde_json::Value;

/// Fail closed on the first malformed line, naming file and line.
pub(super) fn ensure_parsed(log: &SessionLog) -> Result<()> {
    match log.first_malformed() {
        None => Ok(()),
        Some((number, error)) => {
            let record = crate::adapter::of(log.host).record_noun();
            Err(EvidenceError::evidence(format!("{error} in {record} at {}:{number}", log.path)))
        }
    }
}

pub(super) struct SessionMeta {
    pub session_id: SessionId,
    pub cwd: String,
}

/// Session id and cwd as recorded within the first `within` bytes.
///
/// Defect fix (evidence-protocol.md §8.10): the reference reads the whole current file, so a second
/// `session.start` appended after binding invalidated earlier artifacts. What was bound
/// is the prefix, so the metadata comes from the prefix.
pub(super) fn metadata(log: &SessionLog, within: u64) -> Result<SessionMeta> {
    let named = adapter::of(log.host);
    let missing = |what: &str| EvidenceError::evidence(format!("{} {} has {what}", named.name(), named.log_noun()));
    let records = || log.records_within(within).map(|(_, r)| r);
    let both = |r: &Record| Some(SessionMeta { session_id: r.session_id.clone()?, cwd: r.cwd.clone()? });
    match named.session_named() {
        SessionNamed::InOneOpening => {
            let starts: Vec<&Record> = records().filter(|r| r.session_start).collect();
            let [start] = starts.as_slice() else {
                return Err(EvidenceError::evidence(format!(
                    "expected exactly one session.start event, found {}",
                    starts.len()
                )));
            };
            let session_id = start
                .session_id
                .clone()
                .ok_or_else(|| EvidenceError::evidence("session.start is missing sessionId"))?;
            let cwd =
                start.cwd.clone().ok_or_else(|| EvidenceError::evidence("session.start is missing context.cwd"))?;
            Ok(SessionMeta { session_id, cwd })
        }
        SessionNamed::InTheOpening { missing: what } => {
            records().find(|r| r.session_start).and_then(both).ok_or_else(|| missing(what))
        }
        SessionNamed::OpeningThenLater { missing: what } => {
            let session_id = records().find(|r| r.session_start).and_then(|r| r.session_id.clone());
            session_id
                .zip(records().find_map(|r| r.cwd.clone()))
                .map(|(session_id, cwd)| SessionMeta { session_id, cwd })
                .ok_or_else(|| missing(what))
        }
        SessionNamed::OnEveryRecord { missing: what } => records().find_map(both).ok_or_else(|| missing(what)),
    }
}

/// Refuse a log whose host chain breaks at or after byte `from` (the start of the window
/// evidence rests on: the marker call through the reviewer's completion and whatever the
/// host wrote since), naming the line and the finding; or, when no event names a parent,
/// saying the log carries no chain at all.
pub(super) fn check_host_chain(log: &SessionLog, from: u64) -> Result<()> {
    let Some(rule) = crate::adapter::of(log.host).chain() else { return Ok(()) };
    let mut chain = HostChain::new(log.host);
    let mut broken = log.records().filter_map(|(line, record)| chain.follow(record, line).err()).collect::<Vec<_>>();
    broken.extend(chain.finish());
    match broken.into_iter().find(|(line, _)| line.start >= from) {
        // Not a chain with lines slipped in: no chain at all, which says where the log came
        // from rather than what someone did to it.
        Some(_) if log.records().all(|(_, record)| record.parent_id.is_none()) => {
            let (field, host, own_log) = (rule.field, rule.title, rule.own_log);
            Err(EvidenceError::evidence(format!(
                "{} carries no host chain: no event in it has a {field}, which no known {host} version \
                 writes (each event names the one before it); the log was not written by {host}, or its \
                 {field}s were stripped: use the host's own log (the session's {own_log} directory), not a copy or \
                 an export",
                log.path
            )))
        }
        Some((line, broken)) => Err(EvidenceError::evidence(format!(
            "{broken} at {}:{}: lines were inserted into or removed from the host's log within the reviewed \
             window (if nobody edited the log, run a new review round: a fresh marker and challenge)",
            log.path, line.number
        ))),
        None => Ok(()),
    }
}

/// The tool names a marker call may run under: Claude Code's `Bash`, Copilot CLI's `bash`
/// (or `powershell`), Codex CLI's `exec_command` (or its legacy `shell`), Gemini CLI's
/// `run_shell_command`.
pub(super) fn is_shell_tool(name: &str) -> bool {
    matches!(name.to_lowercase().as_str(), "bash" | "shell" | "powershell" | "exec_command" | "run_shell_command")
}

/// The names a host gives the `marker` tool of an MCP server named `judged` (`judged mcp`):
/// Copilot CLI `<server>-<tool>`, Claude Code `mcp__<server>__<tool>`, and
/// `mcp__plugin_<plugin>_<server>__<tool>` for a plugin's server. The tool prints the same
/// marker as `judge-evidence marker`; its call, recorded by the host, binds as that
/// command's shell call does.
pub(super) fn is_marker_tool(name: &str) -> bool {
    matches!(name, "judged-marker" | "mcp__judged__marker" | "mcp__plugin_judged_judged__marker")
}

/// Whether `log` shows a root shell call that has not returned yet and whose arguments
/// hold every one of `words`: the command asking, as the host recorded it at its start.
/// Searched from the end, where a running call is.
pub(super) fn shows_running_call(log: &SessionLog, words: &[&str]) -> bool {
    // A set: a refusal scans a long log to its start, past every call that returned.
    let mut returned: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for (_, record) in log.records().rev() {
        returned.extend(record.tool_results.iter().filter_map(|r| r.tool_call_id.as_deref()));
        if !record.root {
            continue;
        }
        let running = record.tool_calls.iter().filter(|call| is_shell_tool(&call.name)).any(|call| {
            call.id.as_deref().is_some_and(|id| !returned.contains(id)) && {
                let arguments = call.arguments_text();
                words.iter().all(|word| arguments.contains(word))
            }
        });
        if running {
            return true;
        }
    }
    false
}

/// Whether `result` answers `call_id` and proves a successful marker call for `binding`.
pub(super) fn proves_marker(result: &ToolResult, call_id: &str, binding: &str) -> bool {
    result.tool_call_id.as_deref() == Some(call_id) && result.success && result.text.contains(&marker_text(binding))
}

/// A marker call and its completion, as located in a log.
pub(super) struct MarkerLifecycle<'a> {
    pub start_line: &'a Line,
    pub start: &'a Record,
    pub call: &'a ToolCall,
    pub completion_line: &'a Line,
    pub completion: &'a Record,
}

/// The ids an artifact binds the marker lifecycle by.
pub(super) struct MarkerIds<'a> {
    pub start_event_id: &'a str,
    pub completion_event_id: &'a str,
    pub tool_call_id: &'a str,
    pub executor_model: &'a str,
    pub binding: &'a str,
}

impl<'a> MarkerIds<'a> {
    /// The marker lifecycle a challenge, or evidence repeating it, names.
    pub(super) fn of(artifact: &'a Artifact) -> Result<MarkerIds<'a>> {
        Ok(MarkerIds {
            start_event_id: artifact.required("challenge_event_id")?,
            completion_event_id: artifact.required("challenge_completion_event_id")?,
            tool_call_id: artifact.required("challenge_tool_call_id")?,
            executor_model: artifact.required("executor_model")?,
            binding: artifact.required("binding")?,
        })
    }
}

/// What is wrong with a recorded marker lifecycle; each caller words it its own way.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum MarkerFault {
    StartCount,
    NotRoot,
    ToolCallMismatch,
    ModelMismatch,
    BindingAbsent,
    CompletionCount,
    CompletionInvalid,
}

/// Find the marker lifecycle named by `ids` within the first `within` bytes.
pub(super) fn bound_marker<'a>(
    log: &'a SessionLog,
    ids: &MarkerIds,
    within: u64,
) -> std::result::Result<MarkerLifecycle<'a>, MarkerFault> {
    let (start_line, start) = exactly_one(
        log.records_within(within)
            .filter(|(_, r)| r.id.as_deref() == Some(ids.start_event_id) && !r.tool_calls.is_empty()),
    )
    .ok_or(MarkerFault::StartCount)?;
    if !start.root {
        return Err(MarkerFault::NotRoot);
    }
    let call = start
        .tool_calls
        .iter()
        .find(|c| c.id.as_deref() == Some(ids.tool_call_id))
        .ok_or(MarkerFault::ToolCallMismatch)?;
    // Defect fix (evidence-protocol.md §8.8): the challenge stores the trimmed model, so compare trimmed.
    if start.model.as_deref().map(str::trim) != Some(ids.executor_model.trim()) {
        return Err(MarkerFault::ModelMismatch);
    }
    if !call.arguments_text().contains(ids.binding) {
        return Err(MarkerFault::BindingAbsent);
    }
    let (completion_line, completion) = exactly_one(
        log.records_within(within)
            .filter(|(_, r)| r.id.as_deref() == Some(ids.completion_event_id) && !r.tool_results.is_empty()),
    )
    .ok_or(MarkerFault::CompletionCount)?;
    let proves = completion.root
        && completion.tool_results.iter().any(|r| proves_marker(r, ids.tool_call_id, ids.binding))
        && completion_line.end > start_line.end;
    if !proves {
        return Err(MarkerFault::CompletionInvalid);
    }
    Ok(MarkerLifecycle { start_line, start, call, completion_line, completion })
}

fn exactly_one<T>(mut items: impl Iterator<Item = T>) -> Option<T> {
    let first = items.next()?;
    items.next().is_none().then_some(first)
}

/// If `call` is a native rubber-duck invocation, its prompt.
///
/// The `task` tool with `agent_type` (or `agentType`) `rubber-duck`, or a tool named
/// `rubber-duck`/`rubberduck`; arguments must be an object.
pub(super) fn rubber_duck_prompt(call: &ToolCall) -> Option<&str> {
    let arguments = match &call.arguments {
        Value::Object(map) => Some(map),
        Value::Null => None,
        _ => return None,
    };
    let field = |key: &str| arguments.and_then(|a| a.get(key));
    let tool = call.name.to_lowercase().replace('_', "-");
    let agent = field("agent_type").or_else(|| field("agentType"));
    let qualifies = (tool == "task" && agent.and_then(Value::as_str) == Some(super::REVIEWER_AGENT))
        || tool == "rubber-duck"
        || tool == "rubberduck";
    if !qualifies {
        return None;
    }
    let prompt = ["prompt", "query", "input"].iter().find_map(|k| field(k).and_then(Value::as_str));
    Some(prompt.unwrap_or(""))
}

/// Root tool calls in `records` that are rubber-duck invocations carrying `nonce`.
pub(super) fn nonce_bound_invocations<'a>(
    records: impl Iterator<Item = (&'a Line, &'a Record)>,
    nonce: &'a Nonce,
) -> impl Iterator<Item = (&'a Line, &'a Record, &'a ToolCall)> {
    records.filter(|(_, r)| r.root).flat_map(move |(line, record)| {
        record
            .tool_calls
            .iter()
            .filter(move |call| rubber_duck_prompt(call).is_some_and(|p| has_nonce_line(p, nonce)))
            .map(move |call| (line, record, call))
    })
}

/// Every record of one reviewer lifecycle, keyed by the root task's tool-call id.
#[derive(Default)]
pub(super) struct ReviewerLifecycle<'a> {
    pub started: Vec<(&'a Line, &'a Record)>,
    pub completed: Vec<(&'a Line, &'a Record)>,
    pub failed: Vec<(&'a Line, &'a Record)>,
    pub tool_completions: Vec<(&'a Line, &'a ToolResult, &'a Record)>,
}

/// What is wrong with a recorded reviewer lifecycle; `verify` and `validate` each word a
/// fault (and choose its exit code) their own way, as with [`MarkerFault`].
#[derive(Debug, PartialEq, Eq)]
pub(super) enum ReviewerFault<'a> {
    /// The host recorded `subagent.failed` for the task.
    Failed,
    /// The root task returned with `success` other than exactly `true`.
    ToolUnsuccessful,
    /// Not exactly one `subagent.started`, one `subagent.completed` and one tool
    /// completion (the counts found).
    Incomplete { started: usize, completed: usize, tool_completions: usize },
    /// An end of the lifecycle names another agent than the rubber-duck reviewer.
    NotReviewer,
    /// The two ends do not name one and the same child agent.
    ChildUnbound,
    /// The child's recorded prompt lacks the nonce line.
    ChildWithoutNonce(&'a str),
}

/// A reviewer lifecycle that passed [`ReviewerLifecycle::reviewer`]: the one record of
/// each kind, and the child agent both ends name.
pub(super) struct Reviewer<'a> {
    pub started: (&'a Line, &'a Record),
    pub completed: (&'a Line, &'a Record),
    pub tool_completion: (&'a Line, &'a ToolResult, &'a Record),
    pub child: &'a str,
}

impl<'a> ReviewerLifecycle<'a> {
    pub fn collect(records: impl Iterator<Item = (&'a Line, &'a Record)>, tool_call_id: &str) -> Self {
        let mut lifecycle = ReviewerLifecycle::default();
        for (line, record) in records {
            if let Some(sub) = record.subagent.as_ref().filter(|s| s.tool_call_id.as_deref() == Some(tool_call_id)) {
                match sub.phase {
                    SubagentPhase::Started => lifecycle.started.push((line, record)),
                    SubagentPhase::Completed => lifecycle.completed.push((line, record)),
                    SubagentPhase::Failed => lifecycle.failed.push((line, record)),
                }
            }
            for result in record.tool_results.iter().filter(|r| r.tool_call_id.as_deref() == Some(tool_call_id)) {
                lifecycle.tool_completions.push((line, result, record));
            }
        }
        lifecycle
    }

    /// How the lifecycle failed, if the host recorded a failure: a `subagent.failed`, or
    /// a single tool completion that did not succeed. `verify` says so before counting,
    /// since a failed reviewer usually never completes and "incomplete" would hide why.
    pub fn failure(&self) -> Option<ReviewerFault<'a>> {
        if !self.failed.is_empty() {
            return Some(ReviewerFault::Failed);
        }
        match self.tool_completions.as_slice() {
            [(_, result, _)] if !result.success => Some(ReviewerFault::ToolUnsuccessful),
            _ => None,
        }
    }

    /// The one rubber-duck reviewer of the task, faults checked in this order: exactly one
    /// of each lifecycle record, no failure, the rubber-duck agent at both ends, one child
    /// agent named by both, and the nonce in that child's prompt when one is recorded
    /// among `records` (the same records the lifecycle was collected from).
    ///
    /// Whether the tool completion succeeded is left to the caller, which checks it at
    /// its own point (see [`ReviewerLifecycle::failure`]).
    pub fn reviewer(
        &self,
        records: impl Iterator<Item = (&'a Line, &'a Record)>,
        nonce: &Nonce,
    ) -> std::result::Result<Reviewer<'a>, ReviewerFault<'a>> {
        let ([started], [completed], [tool_completion]) =
            (self.started.as_slice(), self.completed.as_slice(), self.tool_completions.as_slice())
        else {
            return Err(ReviewerFault::Incomplete {
                started: self.started.len(),
                completed: self.completed.len(),
                tool_completions: self.tool_completions.len(),
            });
        };
        if !self.failed.is_empty() {
            return Err(ReviewerFault::Failed);
        }
        let names = [started.1, completed.1].map(|r| r.subagent.as_ref().and_then(|s| s.agent_name.as_deref()));
        if names != [Some(super::REVIEWER_AGENT); 2] {
            return Err(ReviewerFault::NotReviewer);
        }
        let child = child_agent(started.1, completed.1).ok_or(ReviewerFault::ChildUnbound)?;
        if !child_prompt_has_nonce(records, child, nonce) {
            return Err(ReviewerFault::ChildWithoutNonce(child));
        }
        Ok(Reviewer { started: *started, completed: *completed, tool_completion: *tool_completion, child })
    }
}

/// The child agent both lifecycle ends name, when they name the same one.
///
/// Copilot CLI 1.0.102 gives the child its own UUID `agentId`; older hosts used the
/// task's toolCallId. Either way `subagent.started` and `subagent.completed` must agree.
fn child_agent<'a>(started: &'a Record, completed: &'a Record) -> Option<&'a str> {
    match (started.agent_id.as_deref(), completed.agent_id.as_deref()) {
        (Some(a), Some(b)) if a == b => Some(a),
        _ => None,
    }
}

/// Whether the child's first prompt, when the host recorded one, carries the nonce.
fn child_prompt_has_nonce<'a>(
    records: impl Iterator<Item = (&'a Line, &'a Record)>,
    child: &str,
    nonce: &Nonce,
) -> bool {
    records
        .map(|(_, r)| r)
        .find(|r| r.agent_id.as_deref() == Some(child) && r.kind == "user.message")
        .and_then(|r| r.text.as_deref())
        .is_none_or(|prompt| has_nonce_line(prompt, nonce))
}

/// Invocation, then the child starts, then it completes and the root tool call returns.
///
/// Host fix (the real 1.0.102 fixtures): the reference demands `subagent.completed`
/// before the tool completion, but the host writes those two in either order, so each
/// is only required to follow `subagent.started`.
pub(super) fn lifecycle_ordered(invocation: u64, started: u64, completed: u64, tool_completion: u64) -> bool {
    invocation < started && started <= completed && started < tool_completion
}
