//! Completions as the hosts' logs show them, for the engine to match each to the gate
//! decision that allowed it:
//!
//! * Claude Code: a root `TaskUpdate` call setting a task's `status` to `completed`, and
//!   its result, which the host writes only once the `TaskCompleted` hook let it through
//!   (a blocked completion's result is an error). Lines are only parsed whole when they
//!   can hold one: a line naming `TaskUpdate`, or a tool result while a call waits for
//!   one, so ingest costs the same otherwise. And a root turn the client ended past its
//!   cap on a `Stop` hook's blocks, which it writes in so many words ([`CAPPED`]).
//! * Copilot CLI: the root agent's stop: a root turn that ran no tool ends
//!   (`assistant.turn_end`), and what follows is not another turn but the next prompt or
//!   the session's end. A stop an `agentStop` hook blocked (its `hook.end` says
//!   `decision: block`) is followed by the block's reason as a prompt, and the agent goes
//!   on: that one is no completion, unless the session ends there or another prompt comes
//!   (the client gave up on the block: its cap).
//! * Codex CLI: a turn's end, `event_msg` `task_complete`, which the client records only
//!   once its `Stop` hook let the turn end (a blocked stop goes on within the turn); the
//!   gate is asked before it, within the turn that `task_started` opened.
//! * Gemini CLI: the agent's answer (a `gemini` message) that no tool call follows. The
//!   client records a tool-calling answer twice, the second time with its `toolCalls`
//!   once the tool has run, and the tool's result as a `user` message; its `AfterAgent`
//!   hook runs after the answer is recorded. So an answer is the agent's end when a `user`
//!   message that is no tool result follows it (a blocked end's reason, or the next
//!   prompt), or when nothing has followed it for a quiet time ([`Tasks::settle`]).
//! * Qwen Code: the same, with `assistant` records as the answers and `tool_result`
//!   records as the tools' results; its `Stop` hook runs once the answer is recorded, and a
//!   block's reason is not recorded: the agent's next answer follows.
//!
//! Which of these a host's log shows is its [`Ends`].
//!
//! What a log's ends wait for (a call's result, a turn's next record, an answer's quiet
//! time) is kept in the store with the lines that led to it ([`Tasks::waiting_in`]), so
//! that a daemon started again meanwhile finds the end its predecessor began to see.

use judged_core::adapter::{self, Ends, Envelope, HookEvent};
use judged_core::event::{Host, Record, SessionId};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// What Claude Code 2.1.328 writes (a `system` record, subtype `informational`) when it
/// ends a turn past its cap on a stop hook's blocks in a row (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`,
/// default 8): "A hook blocked the turn from ending 9 consecutive times—overriding and
/// ending turn. …".
const CAPPED: &[u8] = b"A hook blocked the turn from ending ";

/// A completion the host carried out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskCompletion {
    /// The gated event it is the host's side of (`TaskCompleted`, `agentStop`).
    pub event: HookEvent,
    pub file_id: i64,
    pub path: String,
    /// The session and its cwd, when its records name them (Copilot CLI's name them only
    /// in `session.start`: the file's).
    pub session_id: Option<SessionId>,
    pub cwd: Option<String>,
    /// The host's time of the result.
    pub completed_at: Option<String>,
    /// When the gate was asked about it, against the records of the log.
    pub asked: Asked,
    /// The line of the result.
    pub line: u64,
}

impl TaskCompletion {
    /// The task, for a task completed.
    pub fn task_id(&self) -> Option<&str> {
        match &self.asked {
            Asked::ForTask { task, .. } => Some(task),
            _ => None,
        }
    }
}

/// When a host asks the gate about an end, against the records its log shows of that end:
/// the gate's answers to the end's hook calls were made then.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Asked {
    /// Claude Code's `TaskCompleted`, about this task: the client writes a successful
    /// result only for an update its hook let through (a blocked one fails, and no cap
    /// lets it through). With how long the task's words are as the log shows them (its
    /// `TaskCreate` and the `TaskUpdate`s since), joined as the hook's payload joins them,
    /// when it shows them: a skip the gate granted for other words is no answer to this
    /// task. And when the update was called: the hook runs between the call and its result.
    ForTask { task: String, work_chars: Option<usize>, called_at: Option<String> },
    /// Codex CLI's `Stop`, within the turn that began at `began`: the client records the
    /// turn's end once its hook let the turn end.
    WithinTurn { began: Option<String> },
    /// Copilot CLI's `agentStop`, after the stop was recorded and before what followed it,
    /// at `until` (the next prompt, the session's end): a stop the agent went on from is
    /// none.
    AfterStop { until: Option<String> },
    /// Gemini CLI's `AfterAgent`, Qwen Code's `Stop`: after the answer was recorded and
    /// before the user message that followed it, at `until` (none when the answer was
    /// followed by nothing for the quiet time). Where the host records a block's reason
    /// (`reason_recorded`, Gemini CLI), that message may be the gate's reason or the next
    /// prompt: `followed_by` is the digest of its text (trimmed), which says whether the
    /// agent went on from a block with that reason.
    AfterAnswer { until: Option<String>, reason_recorded: bool, followed_by: Option<String> },
    /// Claude Code's `Stop`, before the client recorded that it ended the turn past its cap
    /// on the hook's blocks ([`CAPPED`]).
    BeforeCap,
    /// Never: no hook can stop the host's end (OpenCode), so no decision answers it.
    Never,
}

/// The digest a message is known by when it follows an answer: its text, trimmed (a
/// block's reason is the gate's message, which the host records as it got it).
pub fn said(text: &str) -> String {
    judged_core::chain::to_hex(&judged_core::chain::sha256(text.trim().as_bytes()))
}

/// Where a line is: its log's host, its file and path, and its number.
#[derive(Clone, Copy)]
struct Place<'a> {
    host: Host,
    file_id: i64,
    path: &'a str,
    line: u64,
}

/// How long a Claude Code task's words are (in characters), as its `TaskCreate` and
/// `TaskUpdate` calls set them: all the gate's `min_task_chars` asks of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct TaskWords {
    subject: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<usize>,
}

impl TaskWords {
    /// The words' length as the `TaskCompleted` hook's payload gives them to the gate: the
    /// subject, then the description on the next line.
    fn work_chars(&self) -> usize {
        self.subject + self.description.map_or(0, |description| description + 1)
    }
}

/// A `TaskUpdate` call waiting for its result: its task, the words it sets (applied only
/// when the host accepts it), whether it completes the task, and when it was called.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Update {
    task: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subject: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<usize>,
    #[serde(default)]
    completes: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    called_at: Option<String>,
}

/// The most tasks of one log whose words are kept: a log of more is not a task list a
/// person keeps, and each costs the store a few bytes at every batch that changes it.
const MAX_TASKS: usize = 4096;

/// The `TaskUpdate` calls waiting for their result, Copilot CLI's turns, and the
/// completions found.
#[derive(Default)]
pub struct Tasks {
    /// By file id and tool call id: a `TaskUpdate` waiting for its result.
    waiting: HashMap<(i64, String), Update>,
    /// By file id and tool call id: a `TaskCreate` waiting for the id its result gives.
    creating: HashMap<(i64, String), TaskWords>,
    /// By file id and task id: each task's words.
    words: HashMap<i64, HashMap<String, TaskWords>>,
    /// By file id: the root turn under way.
    turns: HashMap<i64, Turn>,
    /// By file id: an answer with no tool call (yet), waiting for what follows.
    answers: HashMap<i64, Answer>,
    /// OpenCode: the messages counted as ends, by file id and message id, and the files of
    /// sub-agents' sessions.
    finished: HashMap<i64, HashSet<String>>,
    subagents: HashSet<i64>,
    found: Vec<TaskCompletion>,
    /// By file id: what the store holds of what the log's ends wait for (absent: nothing),
    /// so that a batch that changed none of it writes nothing.
    stored: HashMap<i64, String>,
}

/// An answer that may be its agent's end.
struct Answer {
    completion: TaskCompletion,
    /// When judged read it: the quiet time runs from here.
    read: Instant,
}

/// A root turn under way. Copilot CLI: whether it ran a tool, and the stop it ended in,
/// waiting for what comes next to say whether it held; the reason a hook blocked that stop
/// with, and whether the prompt that came next was that reason (the agent went on). Codex
/// CLI: when it began.
#[derive(Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Turn {
    ran_tool: bool,
    stop: Option<(Option<String>, u64)>,
    blocked: Option<String>,
    went_on: bool,
    began: Option<String>,
}

/// What one log's ends wait for, as the store keeps it between batches of its lines.
#[derive(Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Waiting {
    /// `TaskUpdate` calls waiting for their result, by tool call id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    updates: Vec<(String, Update)>,
    /// `TaskCreate` calls waiting for their result (tool call id), and each task's words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    creating: Vec<(String, TaskWords)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tasks: Vec<(String, TaskWords)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    turn: Option<Turn>,
    /// An answer that may be the agent's end: its time and line, and whether the host
    /// records a block's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    answer: Option<(Option<String>, u64, bool)>,
    /// OpenCode: the messages counted as ends, and whether the session is a sub-agent's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    finished: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    subagent: bool,
    /// Ends found but not yet matched to the gate's decisions: kept with the lines they
    /// were found in, so that a daemon stopped before it matched them (killed during a
    /// long catch-up) finds them again rather than never.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    found: Vec<FoundEnd>,
}

/// An end found in a log, as the store keeps it until it is matched
/// ([`Waiting::found`]).
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct FoundEnd {
    event: String,
    line: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    completed_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session_id: Option<SessionId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    asked: Asked,
}

impl FoundEnd {
    fn of(completion: &TaskCompletion) -> FoundEnd {
        FoundEnd {
            event: completion.event.as_str().to_owned(),
            line: completion.line,
            completed_at: completion.completed_at.clone(),
            session_id: completion.session_id.clone(),
            cwd: completion.cwd.clone(),
            asked: completion.asked.clone(),
        }
    }

    /// The completion again, of a `host` log (`file_id`, at `path`); an event the host no
    /// longer sends is its end event.
    fn completion(self, host: Host, file_id: i64, path: &str) -> TaskCompletion {
        let event = HookEvent::sent_by(host, &self.event).unwrap_or(adapter::hooks(host).end_event().name);
        let FoundEnd { line, completed_at, session_id, cwd, asked, .. } = self;
        TaskCompletion { event, file_id, path: path.to_owned(), session_id, cwd, completed_at, asked, line }
    }
}

impl Tasks {
    /// What the ends of log `file_id` wait for, as JSON for the store; none when nothing.
    pub fn waiting_in(&self, file_id: i64) -> Option<String> {
        let mut updates: Vec<(String, Update)> = self
            .waiting
            .iter()
            .filter(|((file, _), _)| *file == file_id)
            .map(|((_, call), update)| (call.clone(), update.clone()))
            .collect();
        updates.sort_by(|a, b| a.0.cmp(&b.0));
        let mut creating: Vec<(String, TaskWords)> = self
            .creating
            .iter()
            .filter(|((file, _), _)| *file == file_id)
            .map(|((_, call), words)| (call.clone(), *words))
            .collect();
        creating.sort_by(|a, b| a.0.cmp(&b.0));
        let mut tasks: Vec<(String, TaskWords)> =
            self.words.get(&file_id).into_iter().flatten().map(|(task, words)| (task.clone(), *words)).collect();
        tasks.sort_by(|a, b| a.0.cmp(&b.0));
        let answer = self.answers.get(&file_id).map(|answer| {
            let reason_recorded = matches!(answer.completion.asked, Asked::AfterAnswer { reason_recorded: true, .. });
            (answer.completion.completed_at.clone(), answer.completion.line, reason_recorded)
        });
        let mut finished: Vec<String> = self.finished.get(&file_id).into_iter().flatten().cloned().collect();
        finished.sort();
        let waiting = Waiting {
            updates,
            creating,
            tasks,
            turn: self.turns.get(&file_id).filter(|turn| **turn != Turn::default()).cloned(),
            answer,
            finished,
            subagent: self.subagents.contains(&file_id),
            found: self.found.iter().filter(|found| found.file_id == file_id).map(FoundEnd::of).collect(),
        };
        (waiting != Waiting::default()).then(|| serde_json::to_string(&waiting).expect("what waits serializes"))
    }

    /// What the ends of log `file_id` wait for now, when that is not what the store holds
    /// (`Some(None)`: nothing waits any more), taken as stored from here on.
    pub fn waiting_changed(&mut self, file_id: i64) -> Option<Option<String>> {
        let now = self.waiting_in(file_id);
        if now.as_ref() == self.stored.get(&file_id) {
            return None;
        }
        match &now {
            Some(state) => _ = self.stored.insert(file_id, state.clone()),
            None => _ = self.stored.remove(&file_id),
        }
        Some(now)
    }

    /// Take up what the ends of a `host` log (`file_id`, at `path`) waited for when the
    /// store last kept it ([`Tasks::waiting_in`]). An answer's quiet time starts again now:
    /// its end is counted later than it would have been, never sooner.
    pub fn resume(&mut self, host: Host, file_id: i64, path: &str, kept: &str) -> Result<(), serde_json::Error> {
        let waiting: Waiting = serde_json::from_str(kept)?;
        self.stored.insert(file_id, kept.to_owned());
        for (call, update) in waiting.updates {
            self.waiting.insert((file_id, call), update);
        }
        for (call, words) in waiting.creating {
            self.creating.insert((file_id, call), words);
        }
        if !waiting.tasks.is_empty() {
            self.words.entry(file_id).or_default().extend(waiting.tasks);
        }
        if let Some(turn) = waiting.turn {
            self.turns.insert(file_id, turn);
        }
        if let Some((completed_at, line, reason_recorded)) = waiting.answer {
            let completion = TaskCompletion {
                event: adapter::hooks(host).end_event().name,
                file_id,
                path: path.to_owned(),
                session_id: None,
                cwd: None,
                completed_at,
                asked: Asked::AfterAnswer { until: None, reason_recorded, followed_by: None },
                line,
            };
            self.answers.insert(file_id, Answer { completion, read: Instant::now() });
        }
        self.finished.entry(file_id).or_default().extend(waiting.finished);
        if waiting.subagent {
            self.subagents.insert(file_id);
        }
        self.found.extend(waiting.found.into_iter().map(|found| found.completion(host, file_id, path)));
        Ok(())
    }

    /// Look at line `line` (`raw`, without its terminator) of a `host` log.
    pub fn observe(&mut self, host: Host, file_id: i64, path: &str, line: u64, raw: &[u8]) {
        match adapter::of(host).ends() {
            Ends::TurnEnd => self.observe_blocked_stop(host, file_id, raw),
            Ends::Answer { answer, reason_recorded } => {
                let at = Place { host, file_id, path, line };
                self.observe_answer(at, answer, reason_recorded, raw);
            }
            Ends::TaskUpdate { capped } => self.observe_task_update(Place { host, file_id, path, line }, capped, raw),
            Ends::FinishedMessage => self.observe_finished_message(Place { host, file_id, path, line }, raw),
            Ends::TaskComplete => {}
        }
    }

    /// An OpenCode event: a root session's assistant message that is done, for another
    /// reason than to call tools, is an end, once (a message is updated again after it is
    /// done); a sub-agent's session (its opening event names its parent) has none. Only a
    /// line naming a message update or the session's opening is parsed.
    fn observe_finished_message(&mut self, at: Place, raw: &[u8]) {
        let named = |word: &[u8]| memchr::memmem::find(raw, word).is_some();
        if !(named(b"\"message.updated.1\"") || named(b"\"session.created.1\"")) {
            return;
        }
        let Ok(event) = serde_json::from_slice::<serde_json::Value>(raw) else { return };
        let info = &event["data"]["info"];
        if event["type"] == "session.created.1" {
            if info["parentID"].as_str().is_some_and(|p| !p.is_empty()) {
                self.subagents.insert(at.file_id);
            }
            return;
        }
        let done = info["time"]["completed"].is_number();
        let finish = info["finish"].as_str();
        let ended = info["role"] == "assistant" && done && finish.is_some_and(|f| f != "tool-calls");
        let Some(message) = info["id"].as_str().filter(|_| ended && !self.subagents.contains(&at.file_id)) else {
            return;
        };
        if !self.finished.entry(at.file_id).or_default().insert(message.to_owned()) {
            return;
        }
        self.found.push(TaskCompletion {
            event: adapter::hooks(at.host).end_event().name,
            file_id: at.file_id,
            path: at.path.to_owned(),
            session_id: event["sessionId"].as_str().map(SessionId::from),
            cwd: None,
            completed_at: event["timestamp"].as_str().map(str::to_owned),
            asked: Asked::Never,
            line: at.line,
        });
    }

    /// A Claude Code root `TaskUpdate` completing a task, its result, or a turn ended past
    /// the cap.
    fn observe_task_update(&mut self, at: Place, capped: HookEvent, raw: &[u8]) {
        // The cap's words in any other record (a task's own description, say) are no cap:
        // that line is read on as any other.
        if memchr::memmem::find(raw, CAPPED).is_some() && self.observe_cap(at, capped, raw) {
            return;
        }
        let Place { host, file_id, path, line } = at;
        let named = |word: &[u8]| memchr::memmem::find(raw, word).is_some();
        let calls = named(b"\"TaskUpdate\"") || named(b"\"TaskCreate\"");
        let results = !(self.waiting.is_empty() && self.creating.is_empty()) && named(b"\"tool_result\"");
        if !(calls || results) {
            return;
        }
        let Ok(record) = judged_core::adapter::parse_line(host, raw) else { return };
        if !record.root {
            return;
        }
        self.calls(file_id, &record);
        for result in &record.tool_results {
            let Some(call) = &result.tool_call_id else { continue };
            if let Some(words) = self.creating.remove(&(file_id, call.clone())) {
                // `Task #<id> created successfully: <subject>`, as Claude Code reads it back.
                let id = result.text.strip_prefix("Task #").and_then(|rest| rest.split_once(" created successfully"));
                let tasks = self.words.entry(file_id).or_default();
                if let Some((id, _)) = id.filter(|_| result.success && tasks.len() < MAX_TASKS) {
                    tasks.insert(id.to_owned(), words);
                }
                continue;
            }
            let Some(update) = self.waiting.remove(&(file_id, call.clone())) else { continue };
            if !result.success || update_refused(raw) {
                continue;
            }
            // The host took the update: its words are the task's now.
            if let Some(words) = self.words.get_mut(&file_id).and_then(|tasks| tasks.get_mut(&update.task)) {
                words.subject = update.subject.unwrap_or(words.subject);
                words.description = update.description.or(words.description);
            }
            if update.completes {
                let work_chars =
                    self.words.get(&file_id).and_then(|tasks| tasks.get(&update.task)).map(TaskWords::work_chars);
                self.found.push(TaskCompletion {
                    event: adapter::hooks(host).end_event().name,
                    file_id,
                    path: path.to_owned(),
                    session_id: record.session_id.clone(),
                    cwd: record.cwd.clone(),
                    completed_at: record.timestamp.clone(),
                    asked: Asked::ForTask { task: update.task, work_chars, called_at: update.called_at },
                    line,
                });
            }
        }
    }

    /// A root turn Claude Code ended past its cap on the `Stop` hook's blocks: the end of
    /// the agent's work, whatever the hook said. Whether the line is that record.
    fn observe_cap(&mut self, at: Place, capped: HookEvent, raw: &[u8]) -> bool {
        let Place { file_id, path, line, .. } = at;
        let Ok(record) = serde_json::from_slice::<serde_json::Value>(raw) else { return false };
        let text = |key: &str| record[key].as_str().map(str::to_owned);
        let past_cap = record["content"].as_str().is_some_and(|content| content.as_bytes().starts_with(CAPPED));
        let is_cap = record["type"] == "system" && record["subtype"] == "informational" && past_cap;
        if is_cap && record["isSidechain"] != true {
            self.found.push(TaskCompletion {
                event: capped,
                file_id,
                path: path.to_owned(),
                session_id: text("sessionId").map(SessionId::from),
                cwd: text("cwd"),
                completed_at: text("timestamp"),
                asked: Asked::BeforeCap,
                line,
            });
        }
        is_cap
    }

    /// A Copilot CLI root `agentStop` hook that blocked the stop waiting for what follows
    /// it, and whether the prompt that follows is the block's reason. Only a line naming
    /// `hook.end` and a block, or a `user.message` after one, is parsed.
    fn observe_blocked_stop(&mut self, host: Host, file_id: i64, raw: &[u8]) {
        let Some(turn) = self.turns.get_mut(&file_id).filter(|turn| turn.stop.is_some()) else { return };
        let named = |word: &[u8]| memchr::memmem::find(raw, word).is_some();
        let reason_may_come = turn.blocked.is_some() && named(b"\"user.message\"");
        if !(named(b"\"hook.end\"") && named(b"\"block\"") || reason_may_come) {
            return;
        }
        let Ok(line) = serde_json::from_slice::<serde_json::Value>(raw) else { return };
        let data = &line["data"];
        if !line.get("agentId").is_none_or(|agent| agent.is_null() || agent == "") {
            return;
        }
        let stop = adapter::hooks(host).end_event().name.as_str();
        if line["type"] == "hook.end" && data["hookType"] == stop && data["output"]["decision"] == "block" {
            turn.blocked = Some(data["output"]["reason"].as_str().unwrap_or_default().to_owned());
        } else if line["type"] == "user.message" {
            turn.went_on = turn.blocked.as_deref() == data["content"].as_str();
        }
    }

    /// A message of a log whose ends are answers: an answer without a tool call waits; a
    /// tool call says it was no end, and so does another answer (the agent went on after a
    /// block that left no record); a user message that is no tool result says it was. Only
    /// a line naming an answer's or a user message's kind is parsed.
    fn observe_answer(&mut self, at: Place, answer: &str, reason_recorded: bool, raw: &[u8]) {
        if !(names_kind(raw, answer) || names_kind(raw, "user")) {
            return;
        }
        let Ok(record) = adapter::parse_line(at.host, raw) else { return };
        let Place { file_id, path, line, .. } = at;
        if record.kind == answer && !record.tool_calls.is_empty() {
            self.answers.remove(&file_id);
        } else if record.kind == answer {
            let completion = TaskCompletion {
                event: adapter::hooks(at.host).end_event().name,
                file_id,
                path: path.to_owned(),
                session_id: None,
                cwd: None,
                completed_at: record.timestamp.clone(),
                asked: Asked::AfterAnswer { until: None, reason_recorded, followed_by: None },
                line,
            };
            self.answers.insert(file_id, Answer { completion, read: Instant::now() });
        } else if record.kind == "user"
            && record.tool_results.is_empty()
            && let Some(answer) = self.answers.remove(&file_id)
        {
            let followed_by = record.text.as_deref().map(said);
            let asked = Asked::AfterAnswer { until: record.timestamp.clone(), reason_recorded, followed_by };
            self.found.push(TaskCompletion { asked, ..answer.completion });
        }
    }

    /// Count as ends the answers nothing has followed for `quiet`: a tool the agent called
    /// has run by then (Gemini CLI records its call again when it has), and the end hook
    /// has answered.
    pub fn settle(&mut self, quiet: Duration) {
        let settled: Vec<i64> =
            self.answers.iter().filter(|(_, answer)| answer.read.elapsed() >= quiet).map(|(&id, _)| id).collect();
        for file_id in settled {
            if let Some(answer) = self.answers.remove(&file_id) {
                self.found.push(answer.completion);
            }
        }
    }

    fn calls(&mut self, file_id: i64, record: &Record) {
        for call in &record.tool_calls {
            let field = |key: &str| call.arguments.get(key).and_then(serde_json::Value::as_str);
            let length = |key: &str| field(key).map(|text| text.chars().count());
            let Some(id) = &call.id else { continue };
            match call.name.as_str() {
                "TaskCreate" => {
                    if let Some(subject) = length("subject") {
                        let words = TaskWords { subject, description: length("description") };
                        self.creating.insert((file_id, id.clone()), words);
                    }
                }
                "TaskUpdate" => {
                    let Some(task) = field("taskId") else { continue };
                    // An update may reword the task before (or as) it completes it.
                    let update = Update {
                        task: task.to_owned(),
                        subject: length("subject"),
                        description: length("description"),
                        completes: field("status") == Some("completed"),
                        called_at: record.timestamp.clone(),
                    };
                    self.waiting.insert((file_id, id.clone()), update);
                }
                _ => {}
            }
        }
    }

    /// Follow a log's root turns by their envelopes (line `line`), where they show its ends
    /// (Copilot CLI, Codex CLI).
    pub fn observe_turn(&mut self, host: Host, file_id: i64, path: &str, line: u64, record: &Envelope) {
        if !matches!(adapter::of(host).ends(), Ends::TurnEnd | Ends::TaskComplete) || !record.root {
            return;
        }
        let turn = self.turns.entry(file_id).or_default();
        match record.kind.as_str() {
            "event_msg.task_started" => turn.began.clone_from(&record.timestamp),
            "event_msg.task_complete" => self.found.push(TaskCompletion {
                event: adapter::hooks(host).end_event().name,
                file_id,
                path: path.to_owned(),
                session_id: None,
                cwd: None,
                completed_at: record.timestamp.clone(),
                asked: Asked::WithinTurn { began: turn.began.take() },
                line,
            }),
            "assistant.turn_start" => *turn = Turn::default(),
            "tool.execution_start" => turn.ran_tool = true,
            "assistant.turn_end" if !turn.ran_tool => turn.stop = Some((record.timestamp.clone(), line)),
            // A blocked stop's reason comes back as the next prompt: the agent went on.
            "user.message" if std::mem::take(&mut turn.went_on) => {
                turn.stop = None;
                turn.blocked = None;
            }
            "user.message" | "session.shutdown" => {
                turn.blocked = None;
                if let Some((completed_at, line)) = turn.stop.take() {
                    self.found.push(TaskCompletion {
                        event: adapter::hooks(host).end_event().name,
                        file_id,
                        path: path.to_owned(),
                        session_id: None,
                        cwd: None,
                        completed_at,
                        asked: Asked::AfterStop { until: record.timestamp.clone() },
                        line,
                    });
                }
            }
            _ => {}
        }
    }

    /// The completions found since the last call.
    pub fn take(&mut self) -> Vec<TaskCompletion> {
        std::mem::take(&mut self.found)
    }

    /// Give back a completion taken, to be taken again.
    pub fn defer(&mut self, completion: TaskCompletion) {
        self.found.push(completion);
    }
}

/// Whether `raw` has `"type":"<kind>"` in it (as the hosts write their records, without
/// spaces): a line of another kind is not parsed.
fn names_kind(raw: &[u8], kind: &str) -> bool {
    const TYPE: &[u8] = b"\"type\":\"";
    memchr::memmem::find_iter(raw, TYPE).any(|at| {
        let rest = &raw[at + TYPE.len()..];
        rest.starts_with(kind.as_bytes()) && rest.get(kind.len()) == Some(&b'"')
    })
}

/// Whether Claude Code refused the `TaskUpdate` whose result `raw` holds: when a
/// `TaskCompleted` hook blocks (exit 2), Claude Code 2.1.328 writes the result with
/// `toolUseResult.success: false` and the hook's feedback as its text, but no `is_error`
/// on the `tool_result` block; the task stays pending, so it is no completion.
fn update_refused(raw: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Line {
        #[serde(rename = "toolUseResult")]
        tool_use_result: Option<Outcome>,
    }
    #[derive(serde::Deserialize)]
    struct Outcome {
        success: Option<bool>,
    }
    serde_json::from_slice::<Line>(raw).ok().and_then(|line| line.tool_use_result?.success) == Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Copilot CLI session as the real client wrote it: marker, challenge, the
    /// rubber-duck, verify, then a last answer that ran no tool, and the session's end.
    const REAL_LOG: &str = include_str!("../../../fixtures/copilot-1.0.102/cross-family-ok/events.jsonl");

    fn stops(text: &str) -> Vec<TaskCompletion> {
        let mut tasks = Tasks::default();
        for (n, line) in text.lines().enumerate() {
            // As ingest does: the raw line first, then its envelope.
            tasks.observe(Host::CopilotCli, 1, "/s/events.jsonl", n as u64 + 1, line.as_bytes());
            let record = judged_core::adapter::envelope(Host::CopilotCli, line.as_bytes()).unwrap();
            tasks.observe_turn(Host::CopilotCli, 1, "/s/events.jsonl", n as u64 + 1, &record);
        }
        tasks.take()
    }

    /// What a log's ends wait for, kept after any line and taken up by a fresh `Tasks`,
    /// gives the completions one `Tasks` reading the whole log gives: a daemon that stops
    /// anywhere in a session loses none of its ends (nor counts one twice).
    #[test]
    fn what_the_ends_wait_for_taken_up_anywhere_gives_the_same_completions() {
        let observe = |tasks: &mut Tasks, n: usize, line: &str| {
            tasks.observe(Host::CopilotCli, 1, "/s/events.jsonl", n as u64 + 1, line.as_bytes());
            let record = judged_core::adapter::envelope(Host::CopilotCli, line.as_bytes()).unwrap();
            tasks.observe_turn(Host::CopilotCli, 1, "/s/events.jsonl", n as u64 + 1, &record);
        };
        let lines: Vec<&str> = REAL_LOG.lines().collect();
        let whole = stops(REAL_LOG);
        assert_eq!(whole.len(), 1, "{whole:?}");
        for cut in 0..lines.len() {
            let mut before = Tasks::default();
            lines[..cut].iter().enumerate().for_each(|(n, line)| observe(&mut before, n, line));
            let mut found = before.take();
            let mut after = Tasks::default();
            if let Some(kept) = before.waiting_in(1) {
                after.resume(Host::CopilotCli, 1, "/s/events.jsonl", &kept).unwrap();
            }
            lines.iter().enumerate().skip(cut).for_each(|(n, line)| observe(&mut after, n, line));
            found.extend(after.take());
            assert_eq!(found, whole, "taken up after line {cut}");
        }

        // A Claude Code `TaskUpdate` call whose result comes after the daemon started again.
        let call = r#"{"type":"assistant","uuid":"a","parentUuid":null,"isSidechain":false,"sessionId":"s","cwd":"/p","timestamp":"2026-12-05T01:00:00.000Z","message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"TaskUpdate","input":{"taskId":"3","status":"completed"}}]}}"#;
        let result = r#"{"type":"user","uuid":"b","parentUuid":"a","isSidechain":false,"sessionId":"s","cwd":"/p","timestamp":"2026-12-05T01:00:01.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"Updated task #3 status"}]}}"#;
        let mut before = Tasks::default();
        before.observe(Host::ClaudeCode, 2, "/t.jsonl", 1, call.as_bytes());
        let kept = before.waiting_in(2).expect("the call waits for its result");
        assert_eq!(before.waiting_in(1), None, "another log waits for nothing");
        let mut after = Tasks::default();
        after.resume(Host::ClaudeCode, 2, "/t.jsonl", &kept).unwrap();
        after.observe(Host::ClaudeCode, 2, "/t.jsonl", 2, result.as_bytes());
        let found = after.take();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].asked,
            Asked::ForTask { task: "3".into(), work_chars: None, called_at: Some("2026-12-05T01:00:00.000Z".into()) }
        );
        assert_eq!(after.waiting_in(2), None, "nothing waits once the result came");
    }

    /// An end found but not yet matched to the gate's decisions is kept with what the log's
    /// ends wait for: a daemon stopped between finding it and matching it (killed during a
    /// long catch-up) takes it up again, once; matched, it is kept no more.
    #[test]
    fn an_end_found_and_not_yet_matched_is_taken_up_by_the_next_daemon() {
        let mut before = Tasks::default();
        for (n, line) in REAL_LOG.lines().enumerate() {
            before.observe(Host::CopilotCli, 1, "/s/events.jsonl", n as u64 + 1, line.as_bytes());
            let record = judged_core::adapter::envelope(Host::CopilotCli, line.as_bytes()).unwrap();
            before.observe_turn(Host::CopilotCli, 1, "/s/events.jsonl", n as u64 + 1, &record);
        }
        let kept = before.waiting_in(1).expect("the end found is kept until it is matched");
        let mut after = Tasks::default();
        after.resume(Host::CopilotCli, 1, "/s/events.jsonl", &kept).unwrap();
        assert_eq!(after.take(), stops(REAL_LOG), "the next daemon takes up the end found");
        assert_eq!(after.waiting_in(1), None, "matched, it is kept no more");
    }

    /// A stop an `agentStop` hook blocked, after which the agent went on (the block's
    /// reason is the next prompt, as the real client writes it), is no completion; one the
    /// session ended on all the same, or that the user's next prompt followed (the client
    /// gave up on the block), is.
    #[test]
    fn a_copilot_stop_a_hook_blocked_is_no_completion_unless_the_client_gave_up_on_it() {
        let lines: Vec<&str> = REAL_LOG.lines().collect();
        let shutdown = lines.len() - 1;
        let last_turn_end = lines.iter().rposition(|l| l.contains(r#""type":"assistant.turn_end""#)).unwrap();
        let event = |kind: &str, data: serde_json::Value| {
            serde_json::json!({"type": kind, "data": data, "id": kind, "timestamp": "2026-12-02T04:12:30.000Z",
                "parentId": null})
            .to_string()
        };
        let blocked = event(
            "hook.end",
            serde_json::json!({"hookType": "agentStop", "success": true,
            "output": {"decision": "block", "reason": "judged: this agentStop cannot be marked done yet"}}),
        );
        let reason =
            event("user.message", serde_json::json!({"content": "judged: this agentStop cannot be marked done yet"}));
        let (start, end) = (lines[last_turn_end - 3], lines[last_turn_end]);
        assert!(start.contains("assistant.turn_start"), "{start}");
        let head = lines[..=last_turn_end].join("\n");
        let went_on = [head.as_str(), &blocked, &reason, start, end, lines[shutdown]].join("\n");
        let found = stops(&went_on);
        assert_eq!(found.len(), 1, "only the last stop held: {found:?}");
        assert!(found[0].line > last_turn_end as u64 + 1, "{found:?}");
        let gave_up = [head.as_str(), &blocked, lines[shutdown]].join("\n");
        let found = stops(&gave_up);
        assert_eq!(found.len(), 1, "the session ended on the blocked stop: {found:?}");
        assert_eq!(found[0].line, last_turn_end as u64 + 1);
        // A session that goes on (interactive): the client gave up on the block, and the
        // next prompt is the user's, not the block's reason. The stop held, and the gate's
        // answers to it came before that prompt.
        let prompt = serde_json::json!({"type": "user.message", "data": {"content": "Now the tests, please."},
            "id": "prompt", "timestamp": "2026-12-02T04:12:41.000Z", "parentId": null});
        let next = [head.as_str(), &blocked, &prompt.to_string(), start, end, lines[shutdown]].join("\n");
        let found = stops(&next);
        assert_eq!(found.len(), 2, "the stop the client gave up blocking, and the next one: {found:?}");
        assert_eq!(found[0].line, last_turn_end as u64 + 1);
        assert_eq!(found[0].asked, Asked::AfterStop { until: Some("2026-12-02T04:12:41.000Z".into()) });
    }

    /// Claude Code 2.1.328's record of a root turn it ended past its cap on the `Stop`
    /// hook's blocks (as the real client wrote it, `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=3`) is
    /// that turn's end; a sub-agent's (a sidechain's) is not the agent's.
    #[test]
    fn a_claude_turn_ended_past_the_stop_hooks_cap_is_a_completion() {
        let capped = r#"{"parentUuid":"f9fb5ddf-5dfd-4fe8-9a8a-7d8ff54da3a4","isSidechain":false,"type":"system","subtype":"informational","content":"A hook blocked the turn from ending 4 consecutive times—overriding and ending turn. For Stop/SubagentStop hooks, check stop_hook_active in the input and return success while it's true. Set CLAUDE_CODE_STOP_HOOK_BLOCK_CAP to raise this limit.","isMeta":false,"timestamp":"2026-12-04T15:27:04.574Z","uuid":"626b7b9e-45ba-4eb4-a753-2661f7011fa9","level":"warning","userType":"external","entrypoint":"sdk-cli","cwd":"/tmp/fe/crun/project","sessionId":"447cf7e1-9bbd-45f0-ad94-8cc41848c341","version":"2.1.328","gitBranch":"HEAD"}"#;
        let mut tasks = Tasks::default();
        tasks.observe(Host::ClaudeCode, 1, "/p/s.jsonl", 40, capped.as_bytes());
        let sidechain = capped.replace(r#""isSidechain":false"#, r#""isSidechain":true"#);
        tasks.observe(Host::ClaudeCode, 2, "/p/s/subagents/agent-a.jsonl", 9, sidechain.as_bytes());
        let found = tasks.take();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].event.as_str(), found[0].line, &found[0].asked), ("Stop", 40, &Asked::BeforeCap));
        assert_eq!(found[0].session_id.as_ref().map(SessionId::as_str), Some("447cf7e1-9bbd-45f0-ad94-8cc41848c341"));
        assert_eq!(found[0].cwd.as_deref(), Some("/tmp/fe/crun/project"));
        assert_eq!(found[0].completed_at.as_deref(), Some("2026-12-04T15:27:04.574Z"));
    }

    /// The cap's words in a task's own text are no cap: the `TaskUpdate` that completes the
    /// task is still found (a review helper hid its completion so, its hook removed).
    #[test]
    fn a_task_update_carrying_the_caps_words_is_still_a_completion() {
        let words = std::str::from_utf8(CAPPED).unwrap();
        let call = format!(
            r#"{{"type":"assistant","uuid":"a","parentUuid":null,"isSidechain":false,"sessionId":"s","cwd":"/p","timestamp":"2026-12-05T01:00:00.000Z","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_1","name":"TaskUpdate","input":{{"taskId":"3","status":"completed","description":"{words}"}}}}]}}}}"#
        );
        let result = r#"{"type":"user","uuid":"b","parentUuid":"a","isSidechain":false,"sessionId":"s","cwd":"/p","timestamp":"2026-12-05T01:00:01.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"Updated task #3 description, status"}]}}"#;
        let mut tasks = Tasks::default();
        tasks.observe(Host::ClaudeCode, 1, "/t.jsonl", 1, call.as_bytes());
        tasks.observe(Host::ClaudeCode, 1, "/t.jsonl", 2, result.as_bytes());
        let found = tasks.take();
        assert_eq!(found.iter().map(|c| (c.event.as_str(), c.line)).collect::<Vec<_>>(), [("TaskCompleted", 2)]);
    }

    /// Only the root's last turn, which ran no tool and was followed by the session's end,
    /// is a stop: the turns that ran tools, and the rubber-duck's own, are not.
    #[test]
    fn a_copilot_stop_is_the_root_turn_without_tools_that_the_session_did_not_go_on_from() {
        let found = stops(REAL_LOG);
        let lines: Vec<&str> = REAL_LOG.lines().collect();
        let last_turn_end = lines.iter().rposition(|l| l.contains(r#""type":"assistant.turn_end""#)).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].event.as_str(), found[0].line), ("agentStop", last_turn_end as u64 + 1));
        assert_eq!(found[0].task_id(), None);

        // A stop the agent went on from (a blocked stop: another turn follows) is none.
        let shutdown = lines.len() - 1;
        let went_on = [&lines[..shutdown], &[lines[last_turn_end - 3]], &lines[shutdown..]].concat().join("\n");
        assert!(lines[last_turn_end - 3].contains("assistant.turn_start"), "{}", lines[last_turn_end - 3]);
        assert!(stops(&went_on).is_empty(), "a turn started after the stop");
    }

    /// A Codex CLI turn's end is its `task_complete`, with the time the turn began: the
    /// real rollout of fixtures/codex-0.169.0 holds one turn.
    #[test]
    fn a_codex_stop_is_the_turns_recorded_end_with_its_beginning() {
        let text = include_str!(
            "../../../fixtures/codex-0.169.0/copilot-review/rollout-2026-12-02T03-06-22-01a234b7-ad65-70a1-8a28-3953cf556152.jsonl"
        );
        let mut tasks = Tasks::default();
        for (n, line) in text.lines().enumerate() {
            let record = judged_core::adapter::envelope(Host::CodexCli, line.as_bytes()).unwrap();
            tasks.observe_turn(Host::CodexCli, 1, "/r.jsonl", n as u64 + 1, &record);
        }
        let found = tasks.take();
        let lines: Vec<&str> = text.lines().collect();
        let at = |kind: &str| lines.iter().position(|l| l.contains(kind)).unwrap();
        let (started, completed) = (at(r#""type":"task_started""#), at(r#""type":"task_complete""#));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].event.as_str(), found[0].line), ("Stop", completed as u64 + 1));
        let time = |line: &str| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["timestamp"].as_str().map(str::to_owned)
        };
        assert_eq!(found[0].asked, Asked::WithinTurn { began: time(lines[started]) });
        assert_eq!(found[0].completed_at, time(lines[completed]));
    }

    /// The answers of a Gemini CLI recording (the real one of fixtures/gemini-cli-0.61.0)
    /// that end its agent: the first, which the gate blocked (its reason is the next user
    /// message), and the last once nothing has followed it for the quiet time; none of the
    /// answers that called a tool (each recorded first without its call).
    #[test]
    fn a_gemini_end_is_an_answer_no_tool_call_follows() {
        let text =
            include_str!("../../../fixtures/gemini-cli-0.61.0/codex-review/session-2026-12-02T03-33-043b2553.jsonl");
        let mut tasks = Tasks::default();
        for (n, line) in text.lines().enumerate() {
            tasks.observe(Host::GeminiCli, 1, "/r/session.jsonl", n as u64 + 1, line.as_bytes());
        }
        let lines: Vec<&str> = text.lines().collect();
        let answers: Vec<u64> = (1..=lines.len() as u64)
            .filter(|&n| {
                lines[n as usize - 1].contains(r#""type":"gemini""#) && lines[n as usize - 1].contains("Done: ")
            })
            .collect();
        let found = tasks.take();
        assert_eq!(found.iter().map(|c| (c.event.as_str(), c.line)).collect::<Vec<_>>(), [("AfterAgent", answers[0])]);
        tasks.settle(Duration::from_secs(3600));
        assert!(tasks.take().is_empty(), "the last answer is still within its quiet time");
        tasks.settle(Duration::ZERO);
        let found = tasks.take();
        assert_eq!(found.iter().map(|c| c.line).collect::<Vec<_>>(), [*answers.last().unwrap()]);
        assert_eq!(found[0].completed_at.as_deref(), Some("2026-12-02T03:33:13.011Z"));
    }

    /// The ends in a Qwen Code log (the real ones of fixtures/qwen-code-0.24.4): only the
    /// last answer, once nothing has followed it for the quiet time. The answers before it
    /// were blocked by the `Stop` hook (which the client does not record): the agent's next
    /// answer follows each, so none of them is an end, and no answer that called a tool is.
    #[test]
    fn a_qwen_end_is_the_answer_no_other_answer_or_tool_call_follows() {
        for (scenario, answers) in [("stop-blocked", 2), ("stop-cap", 3), ("shell-call", 1)] {
            let dir = format!("{}/../fixtures/qwen-code-0.24.4/{scenario}", env!("CARGO_MANIFEST_DIR"));
            let log = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.extension().is_some_and(|e| e == "jsonl") && !p.ends_with("usage_record.jsonl"))
                .unwrap();
            let text = std::fs::read_to_string(log).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let texts: Vec<u64> = (1..=lines.len() as u64)
                .filter(|&n| {
                    let line = lines[n as usize - 1];
                    line.contains(r#""type":"assistant""#) && !line.contains("functionCall")
                })
                .collect();
            assert_eq!(texts.len(), answers, "{scenario}");
            let mut tasks = Tasks::default();
            for (n, line) in lines.iter().enumerate() {
                tasks.observe(Host::QwenCode, 1, "/q/chats/s.jsonl", n as u64 + 1, line.as_bytes());
            }
            assert!(tasks.take().is_empty(), "{scenario}: no prompt followed any answer");
            tasks.settle(Duration::ZERO);
            let found = tasks.take();
            assert_eq!(
                found.iter().map(|c| (c.event.as_str(), c.line)).collect::<Vec<_>>(),
                [("Stop", texts[answers - 1])]
            );
            assert_eq!(
                found[0].asked,
                Asked::AfterAnswer { until: None, reason_recorded: false, followed_by: None },
                "{scenario}"
            );
        }
    }

    /// A Qwen Code user record after an answer is the next prompt: the answer was the end,
    /// asked about before that prompt.
    #[test]
    fn a_qwen_prompt_after_an_answer_ends_it() {
        let record = |kind: &str, at: &str, body: &str| {
            format!(
                r#"{{"uuid":"{at}","parentUuid":null,"sessionId":"s","timestamp":"{at}","type":"{kind}","cwd":"/w","message":{body}}}"#
            )
        };
        let answer = record("assistant", "2026-12-04T16:00:01.000Z", r#"{"role":"model","parts":[{"text":"Done."}]}"#);
        let prompt = record("user", "2026-12-04T16:05:00.000Z", r#"{"role":"user","parts":[{"text":"Next."}]}"#);
        let mut tasks = Tasks::default();
        tasks.observe(Host::QwenCode, 7, "/q/chats/s.jsonl", 1, answer.as_bytes());
        tasks.observe(Host::QwenCode, 7, "/q/chats/s.jsonl", 2, prompt.as_bytes());
        let found = tasks.take();
        assert_eq!(found.len(), 1);
        let Asked::AfterAnswer { until, reason_recorded: false, .. } = &found[0].asked else { panic!("{found:?}") };
        assert_eq!(until.as_deref(), Some("2026-12-04T16:05:00.000Z"));
        assert_eq!(found[0].completed_at.as_deref(), Some("2026-12-04T16:00:01.000Z"));
    }
}
