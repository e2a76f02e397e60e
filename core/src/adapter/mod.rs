//! What the witness knows of each host's logs, one file per host behind [`HostLog`]: how
//! one raw line becomes one [`Record`], what its chain of records is, and how messages
//! name it. [`of`] is the one place that names each host; to witness a new host, start
//! here.
//!
//! Nothing downstream looks at raw JSON. A line is read in two steps: the [`Envelope`]
//! (the fields every record carries, read without building the rest of the line, which is
//! all ingest needs) and then, for a full [`Record`], the host's body (`data` or `message`).

/// A host's hook events, as its module lists them ([`HostHooks::events`]).
macro_rules! hook_events {
    ($($name:literal),* $(,)?) => {
        &[$(HookEvent($name)),*]
    };
}

mod claude;
mod codex;
mod copilot;
mod gemini;
mod opencode;
mod qwen;

pub use opencode::{MirrorLine, event_time};

pub use crate::event::Envelope;
use crate::event::{Host, Record};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::path::Path;

/// What the witness knows of one host's logs.
pub trait HostLog: Sync {
    /// The host's name in evidence messages (Copilot CLI's is the reference's word,
    /// `Copilot`).
    fn name(&self) -> &'static str;
    /// What one line of its log is called in a message.
    fn record_noun(&self) -> &'static str;
    /// Where its logs name their session and cwd.
    fn session_named(&self) -> SessionNamed {
        SessionNamed::OnEveryRecord { missing: "no record with sessionId and cwd" }
    }
    /// Whether its logs record the session's cwd in their opening record only (Copilot
    /// CLI's `session.start`, Codex CLI's `session_meta`), rather than on any record.
    fn cwd_at_start_only(&self) -> bool {
        matches!(self.session_named(), SessionNamed::InOneOpening | SessionNamed::InTheOpening { .. })
    }
    /// How its records chain, when they do.
    fn chain(&self) -> Option<ChainRule> {
        None
    }
    /// The envelope of one line (`text`, as `fields`), and the body the record is read from.
    fn envelope<'a>(&self, fields: &Fields<'a>, text: &'a str) -> Result<(Envelope, Option<&'a RawValue>), LineError>;
    /// The record of a line, from its envelope and body.
    fn record(&self, envelope: Envelope, body: &Map<String, Value>) -> Record;
    /// Take what `record` states for the records after it, and give it what it lacks.
    fn carry(&self, _carried: &mut Carried, _record: &mut Record) {}
    /// The session a log file belongs to, from its place under the root: by default its
    /// file name without `.jsonl`, unique under the root.
    fn session_key(&self, path: &Path) -> String {
        stem(path)
    }
    /// Where it keeps its logs unless told otherwise.
    fn default_root(&self) -> DefaultRoot;
    /// The shapes of its logs' paths under a root.
    fn layouts(&self) -> &'static [Layout];
    /// What its root holds, in a message (`Copilot CLI sessions`).
    fn root_noun(&self) -> &'static str;
    /// The config key (and, less `s`, the `judged start` flag `--<host>-root`) naming its
    /// roots.
    fn roots_key(&self) -> &'static str;
    /// How its log shows its agent's end.
    fn ends(&self) -> Ends;
    /// What one of its logs is called in a message (`rollout`, `transcript`).
    fn log_noun(&self) -> &'static str;
    /// Where a model read from one of its logs was read, as evidence names it
    /// (`executor_model_source`, `identity_source`).
    fn model_source(&self) -> &'static str;
    /// Its CLI run once as a reviewer, when an agent's shell call can run it so and its
    /// own log of the run is the record of a review.
    fn reviewer_run(&self) -> Option<&'static ReviewerRun> {
        None
    }
    /// Whether its log records an agent's shell call only once the call returned (Gemini
    /// CLI), rather than as it starts.
    fn records_calls_when_returned(&self) -> bool {
        false
    }
}

/// A host's CLI run once, non-interactively, as a reviewer by an agent's root shell call:
/// how the call's words show it, and how the CLI's own log of the run records its prompt,
/// its start and its answer.
#[derive(Debug)]
pub struct ReviewerRun {
    /// Its name where a hook lists the reviewer CLIs installed (`codex`).
    pub key: &'static str,
    /// The `agent_name` of evidence of a review by it (`codex-exec`).
    pub agent_name: &'static str,
    /// The program, as found on a `PATH`.
    pub program: &'static str,
    /// Its npm package as `npx` names it, less the leading `@` (`openai/codex`).
    pub package: &'static str,
    /// How the arguments after the program say it runs once.
    pub once: RunsOnce,
    /// The CLI as messages name it (`Codex`).
    pub name: &'static str,
    /// The command as messages name it (`` `codex exec` ``).
    pub command: &'static str,
    /// The kind of the records of its log that carry the prompt.
    pub prompt_kind: &'static str,
    /// The kind of its model's answers: the run's prompt is what its log records before
    /// the first of them (what comes after, a hook's feedback or a block's reason, is no
    /// prompt of the run). `None`: its first prompt record alone (its log does not say whose
    /// text a record is).
    pub answer_kind: Option<&'static str>,
    /// The record of its log that opens the run.
    pub opens: RunOpens,
    /// How its log records that the run completed, and its answer.
    pub answers: RunAnswers,
}

/// How the arguments of a reviewer CLI say it runs once.
#[derive(Clone, Copy, Debug)]
pub enum RunsOnce {
    /// One argument is one of `words`, or starts with one of `prefixes` (`--prompt=`).
    Flag {
        /// Whole arguments (`-p`, `--prompt`).
        words: &'static [&'static str],
        /// Beginnings of an argument that carries its value (`--prompt=`).
        prefixes: &'static [&'static str],
    },
    /// Its first argument that is no option is `first`, or `anywhere` is one of its
    /// arguments (an option's value may come before the subcommand: `codex -m x exec`).
    Subcommand {
        /// The first argument that is no option (`run`, Codex's short `e`).
        first: &'static str,
        /// A subcommand found among any of its arguments.
        anywhere: Option<&'static str>,
    },
}

/// The record of a reviewer CLI's log that opens the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunOpens {
    /// Its session's opening record.
    SessionStart,
    /// Its first root record naming the session and the cwd (a transcript has no opening
    /// record of its own).
    FirstNamed,
}

/// How a reviewer CLI's log records that the run completed, and its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunAnswers {
    /// Its first root record of this kind, whose text is the answer (Codex CLI's turn end).
    EndRecord(&'static str),
    /// The last root answer (a record of this kind) that called no tool: the log records
    /// no end of its own, and the shell call's exit says the process ended.
    LastAnswer(&'static str),
    /// The session's end (`end`), no `error` before it; the answer is the last non-empty
    /// text of an `answer` record.
    SessionEnd {
        /// The kind of the model's answers.
        answer: &'static str,
        /// The kind of a session's error, which fails the run.
        error: &'static str,
        /// The kind of the session's end.
        end: &'static str,
    },
    /// Its last record of this kind (a message done for another reason than to call
    /// tools); the answer is the last text written before it.
    FinishedAfterText(&'static str),
}

/// Where a host's log names its session and its cwd; `missing` ends the message about a log
/// that does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionNamed {
    /// In its one opening record, both (Copilot CLI's `session.start`: a second one is
    /// refused).
    InOneOpening,
    /// In its opening record, both (Codex CLI's `session_meta`).
    InTheOpening {
        /// What the log lacks, for the message.
        missing: &'static str,
    },
    /// The session in its opening record, the cwd in a later one (Gemini CLI's header, and
    /// the session context a patch sets).
    OpeningThenLater {
        /// What the log lacks, for the message.
        missing: &'static str,
    },
    /// Both on any record (Claude Code, Qwen Code).
    OnEveryRecord {
        /// What the log lacks, for the message.
        missing: &'static str,
    },
}

/// How a host's log shows its agent's end, the completion its end hook was asked about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ends {
    /// Claude Code: a root `TaskUpdate` call setting a task's `status` to `completed`, and
    /// its result; and the record of a turn it ended past its cap on a `Stop` hook's blocks.
    TaskUpdate {
        /// The event whose blocks the host caps (`Stop`).
        capped: HookEvent,
    },
    /// Copilot CLI: a root turn that ran no tool ends, and the next prompt or the session's
    /// end follows.
    TurnEnd,
    /// Codex CLI: its turn-end record, within the turn that its turn-start record opened.
    TaskComplete,
    /// An answer (a record of kind `answer` with no tool call) that no other answer or tool
    /// call follows: a user record (the next prompt) or nothing for a quiet time.
    Answer {
        /// The kind of the agent's answer records.
        answer: &'static str,
        /// The host records a block's reason as a user record after the answer (Gemini
        /// CLI), so the user record that follows an answer may be that reason; else a
        /// blocked answer is followed by the agent's next answer.
        reason_recorded: bool,
    },
    /// OpenCode: an assistant message of a root session that is done (`time.completed`)
    /// for another reason than to call tools.
    FinishedMessage,
}

/// Where a host keeps its logs: under the first of `vars` that is set (each with the path
/// under it), else under the home directory.
#[derive(Clone, Copy, Debug)]
pub struct DefaultRoot {
    /// A variable naming a directory, and where the logs are under it.
    pub vars: &'static [(&'static str, &'static str)],
    /// Where the logs are under the home directory otherwise.
    pub under_home: &'static str,
}

/// The shape of a log's path under a root, one step a level.
pub type Layout = &'static [Level];

/// One level of a [`Layout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Any directory.
    AnyDir,
    /// The directory of this name.
    Dir(&'static str),
    /// A file whose name starts with `prefix` and ends with `suffix`.
    File {
        /// How its name starts.
        prefix: &'static str,
        /// How its name ends.
        suffix: &'static str,
    },
    /// The file of this name, found whether or not it is there yet (a session directory
    /// whose log is not written yet).
    Named(&'static str),
}

impl Level {
    /// Whether the path component `name` (a directory when `dir`) is at this level.
    pub fn admits(self, name: &str, dir: bool) -> bool {
        match self {
            Level::AnyDir => dir,
            Level::Dir(want) => dir && name == want,
            Level::File { prefix, suffix } => !dir && name.starts_with(prefix) && name.ends_with(suffix),
            Level::Named(want) => !dir && name == want,
        }
    }
}

/// A file's name without its extension.
fn stem(path: &Path) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

/// How a host's records chain, each naming the one before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainRule {
    /// The field naming a record's parent, as the host spells it.
    pub field: &'static str,
    /// The host's name in the message about a log that carries no chain.
    pub title: &'static str,
    /// Where its own log is, for that message.
    pub own_log: &'static str,
    /// Only records with an id are on the chain, each of one lane (a sub-agent's sidechain
    /// records are not on a chain of root records).
    pub lanes: bool,
    /// Its first record may continue another session's (a resumed or forked one).
    pub opens_on_another: bool,
}

/// What judged knows of a host's hooks: the event where its agent's end is decided, and
/// how it hears a block.
pub trait HostHooks: Sync {
    /// Every hook event the host can send, as it names them in its settings and payloads.
    fn events(&self) -> &'static [HookEvent];
    /// The hook event at which the host's agent declares its work done: the one the gate
    /// decides unless `[gate] events` says otherwise.
    fn end_event(&self) -> EndEvent;
    /// The event a payload of this host is about when it names none (Copilot CLI's
    /// `agentStop` payload has no `hook_event_name`).
    fn unnamed_event(&self) -> Option<HookEvent> {
        None
    }
    /// How the host hears a hook's block of its end; `None` for a host no hook can stop.
    fn hears_block(&self) -> Option<HearsBlock>;
    /// Whether the host goes on after every block of its end, with no cap of its own on
    /// blocks in a row (Codex CLI 0.169.0 and Gemini CLI 0.61.0: hundreds of turns a
    /// minute against a model that stops again at once).
    fn blocks_uncapped(&self) -> bool {
        false
    }
    /// What its agent's shell tool is called in a message (`Bash`, `shell`).
    fn shell_tool(&self) -> &'static str {
        "shell"
    }
    /// A word its name has as an MCP client (the `clientInfo.name` it sends), where that
    /// was seen.
    fn mcp_client_word(&self) -> Option<&'static str> {
        None
    }
    /// The reviewer CLIs of another family (by the family its agent's models mostly are)
    /// its agent runs as a root shell call, as far as a real client of each pair was seen
    /// to; none for a host whose reviewer is no CLI run so.
    fn reviewed_by(&self) -> &'static [ReviewedBy] {
        &[]
    }
}

/// A reviewer CLI a host's agent runs, by the host that writes the run's log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReviewedBy {
    /// The host whose CLI reviews.
    pub reviewer: Host,
    /// How the gate tells the agent to run it, where the command alone would not do.
    pub run_as: Option<&'static str>,
}

impl ReviewedBy {
    /// `reviewer`, run as its command alone.
    pub const fn cli(reviewer: Host) -> ReviewedBy {
        ReviewedBy { reviewer, run_as: None }
    }
}

/// The hook event at which a host's agent declares its work done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndEvent {
    /// The event.
    pub name: HookEvent,
    /// Another host fires an event of that name that is not its end (Claude Code's `Stop`
    /// beside its `TaskCompleted`): the default names this host with it.
    pub name_shared: bool,
}

/// How a host hears a hook's block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HearsBlock {
    /// Exit status 2, the reason on stderr.
    ExitTwo,
    /// `{"decision": "block", "reason": …}` on stdout, exit 0.
    DecisionObject,
}

/// The host module of `host`: the registry, and the one place outside a host's own file
/// that names it.
fn module(host: Host) -> &'static (dyn HostModule + 'static) {
    match host {
        Host::CopilotCli => &copilot::CopilotCli,
        Host::ClaudeCode => &claude::ClaudeCode,
        Host::CodexCli => &codex::CodexCli,
        Host::GeminiCli => &gemini::GeminiCli,
        Host::QwenCode => &qwen::QwenCode,
        Host::OpenCode => &opencode::OpenCode,
    }
}

/// Both faces of one host's module.
trait HostModule: HostLog + HostHooks {}

impl<T: HostLog + HostHooks> HostModule for T {}

/// What the witness knows of `host`'s logs.
pub fn of(host: Host) -> &'static dyn HostLog {
    module(host)
}

/// What judged knows of `host`'s hooks.
pub fn hooks(host: Host) -> &'static dyn HostHooks {
    module(host)
}

/// The hosts a hook can gate (whose end a hook's block can stop), in [`Host::ALL`]'s order.
pub fn gated_hosts() -> impl Iterator<Item = Host> {
    Host::ALL.into_iter().filter(|host| hooks(*host).hears_block().is_some())
}

/// A hook event, as the hosts that send it name it in their settings and payloads. Only a
/// host's module names one; everywhere else an event comes from [`HostHooks`], or is a
/// name read as one ([`HookEvent::sent_by`], [`HookEvent::of_any_host`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HookEvent(&'static str);

impl HookEvent {
    /// The event `name` names, when `host` sends it.
    pub fn sent_by(host: Host, name: &str) -> Option<HookEvent> {
        hooks(host).events().iter().copied().find(|event| event.0 == name)
    }

    /// The event `name` names, when some host sends it.
    pub fn of_any_host(name: &str) -> Option<HookEvent> {
        Host::ALL.into_iter().find_map(|host| HookEvent::sent_by(host, name))
    }

    /// The event's name.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl PartialEq<str> for HookEvent {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

/// The event a hook's payload or a record names: one a host sends, or another name (a
/// newer client's event, or a forged payload's), kept as given. Written as the name alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventName {
    /// An event some host sends.
    Sent(HookEvent),
    /// A name no host judged knows sends.
    Unknown(String),
}

impl EventName {
    /// `name`, as the event some host sends when one does.
    pub fn read(name: &str) -> EventName {
        HookEvent::of_any_host(name).map_or_else(|| EventName::Unknown(name.to_owned()), EventName::Sent)
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        match self {
            EventName::Sent(event) => event.as_str(),
            EventName::Unknown(name) => name,
        }
    }
}

impl From<HookEvent> for EventName {
    fn from(event: HookEvent) -> EventName {
        EventName::Sent(event)
    }
}

impl std::fmt::Display for EventName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<HookEvent> for EventName {
    fn eq(&self, other: &HookEvent) -> bool {
        *self == EventName::Sent(*other)
    }
}

impl serde::Serialize for EventName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for EventName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<EventName, D::Error> {
        Ok(EventName::read(&String::deserialize(deserializer)?))
    }
}

/// Why a line could not become a record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    /// Not UTF-8, or not JSON at all (a torn or garbled write).
    #[error("malformed JSON")]
    Malformed,
    /// Valid JSON, but an array, string or number where a record must be an object.
    #[error("non-object record")]
    NotAnObject,
    /// A field the host always writes as an object (Copilot's `data`) holds something
    /// else; the reference crashes there, so the line fails closed.
    #[error("`{0}` is not an object")]
    FieldNotAnObject(&'static str),
}

/// The top-level fields of every host, as unparsed JSON.
#[derive(Default, Deserialize)]
#[serde(default)]
pub struct Fields<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<&'a RawValue>,
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(rename = "parentId", borrow)]
    parent_id: Option<&'a RawValue>,
    #[serde(rename = "agentId", borrow)]
    agent_id: Option<&'a RawValue>,
    #[serde(borrow)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow)]
    data: Option<&'a RawValue>,
    #[serde(borrow)]
    uuid: Option<&'a RawValue>,
    #[serde(rename = "parentUuid", borrow)]
    parent_uuid: Option<&'a RawValue>,
    #[serde(rename = "logicalParentUuid", borrow)]
    logical_parent_uuid: Option<&'a RawValue>,
    #[serde(rename = "isSidechain", borrow)]
    is_sidechain: Option<&'a RawValue>,
    #[serde(rename = "sessionId", borrow)]
    session_id: Option<&'a RawValue>,
    #[serde(borrow)]
    cwd: Option<&'a RawValue>,
    #[serde(borrow)]
    message: Option<&'a RawValue>,
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
    #[serde(rename = "$set", borrow)]
    set: Option<&'a RawValue>,
    #[serde(rename = "startTime", borrow)]
    start_time: Option<&'a RawValue>,
}

/// Read the envelope of one line (without its terminator) of a `host` log.
pub fn envelope(host: Host, line: &[u8]) -> Result<Envelope, LineError> {
    read(host, line).map(|(envelope, _)| envelope)
}

/// Parse one line (without its terminator) of a `host` log.
pub fn parse_line(host: Host, line: &[u8]) -> Result<Record, LineError> {
    let (envelope, body) = read(host, line)?;
    let empty = Map::new();
    let body: Map<String, Value> = match body {
        Some(raw) if raw.get().starts_with('{') => serde_json::from_str(raw.get()).map_err(|_| LineError::Malformed)?,
        _ => empty,
    };
    Ok(of(host).record(envelope, &body))
}

/// What a host states once for the records after it, carried onto them as a log is read
/// in order: Codex CLI's `turn_context` names the model of its turn, and the turn's
/// function calls and answers name none of their own.
#[derive(Clone, Debug, Default)]
pub struct Carried {
    turn_model: Option<String>,
}

impl Carried {
    /// Take what `record` states, and give it what it lacks.
    pub fn carry(&mut self, host: Host, record: &mut Record) {
        of(host).carry(self, record);
    }
}

/// The envelope and the host's body (`data`, `message`, `payload`, or Gemini CLI's whole
/// line), unparsed.
fn read(host: Host, line: &[u8]) -> Result<(Envelope, Option<&RawValue>), LineError> {
    let text = std::str::from_utf8(line).map_err(|_| LineError::Malformed)?;
    if !text.trim_start().starts_with('{') {
        return Err(match serde_json::from_str::<serde::de::IgnoredAny>(text) {
            Ok(_) => LineError::NotAnObject,
            Err(_) => LineError::Malformed,
        });
    }
    let fields: Fields = serde_json::from_str(text).map_err(|_| LineError::Malformed)?;
    of(host).envelope(&fields, text)
}

/// A raw JSON value as a string, when it is one.
fn raw_str(raw: Option<&RawValue>) -> Option<String> {
    raw.filter(|r| r.get().starts_with('"')).and_then(|r| serde_json::from_str(r.get()).ok())
}

fn raw_non_empty(raw: Option<&RawValue>) -> Option<String> {
    raw_str(raw).filter(|s| !s.is_empty())
}

/// Python truthiness of an optional raw JSON value.
fn raw_truthy(raw: Option<&RawValue>) -> bool {
    raw.is_some_and(|r| truthy(serde_json::from_str::<Value>(r.get()).ok().as_ref()))
}

fn non_empty_str(object: &Map<String, Value>, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
}

fn any_str(object: &Map<String, Value>, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Python truthiness of an optional JSON value.
fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

#[cfg(test)]
mod tests;
