//! OpenCode (1.18.33; docs/spec/host-formats.md §J). OpenCode keeps its sessions in SQLite
//! (`opencode.db`), and each session's history in its `event` table: one row per event,
//! numbered `seq` from 0 within the session (`aggregate_id`), with a `type`
//! (`session.created.1`, `message.updated.1`, `message.part.updated.1`, …) and its `data`.
//! judged reads those rows without blocking the writer and appends each, in order, to a log
//! of its own, one line an event ([`MirrorLine`]); this module reads those lines.
//!
//! A record's kind is the event's type (an assistant message's update once it is done for
//! another reason than to call tools: [`FINISHED`]), its id the event's, its parent the event before it
//! (the session's chain), its body the event's `data`. The session opens with
//! `session.created.1`, which names its directory (the cwd) and, for a sub-agent's session,
//! the parent session. A shell call is a `tool` part (`tool: "bash"`) once its state is
//! `completed` or `error`: the call and its result in one record. An assistant message
//! names its model (`modelID`) and, once it is done, its `finish` (`tool-calls`, `stop`, …).

use super::{
    DefaultRoot, EndEvent, Ends, Envelope, Fields, HookEvent, HostHooks, HostLog, Layout, Level, LineError,
    ReviewerRun, RunAnswers, RunOpens, RunsOnce, SessionNamed, raw_non_empty, raw_str,
};
use crate::event::{Record, SessionId, ToolCall, ToolResult};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// One line of judged's log of an OpenCode session: an `event` row as read.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MirrorLine<'a> {
    /// The event's id (`evt_…`).
    pub id: &'a str,
    /// The id of the session's event before it (`None` for its first).
    #[serde(rename = "parentId")]
    pub parent_id: Option<&'a str>,
    /// The session (`aggregate_id`).
    #[serde(rename = "sessionId")]
    pub session_id: &'a str,
    /// Its place in the session, from 0.
    pub seq: u64,
    /// The event's type.
    #[serde(rename = "type")]
    pub kind: &'a str,
    /// When OpenCode says it happened, as judged writes times (ISO 8601, UTC), when the
    /// event says.
    pub timestamp: Option<String>,
    /// The event's `data`, as stored.
    pub data: &'a RawValue,
}

impl MirrorLine<'_> {
    /// The line, without its terminator.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a mirror line serializes")
    }
}

/// When an event's `data` says it happened (epoch ms): a part's `time`, else its message's
/// or session's latest time.
pub fn event_time(data: &Value) -> Option<i64> {
    let info_time = &data["info"]["time"];
    data["time"]
        .as_i64()
        .or_else(|| ["completed", "updated", "created"].iter().find_map(|key| info_time[*key].as_i64()))
}

/// The kind of an assistant message's update once the message is done for another reason
/// than to call tools: its answer is complete.
pub const FINISHED: &str = "message.updated.1.finished";

fn envelope<'a>(fields: &Fields<'a>) -> (Envelope, Option<&'a RawValue>) {
    let mut kind = raw_str(fields.kind).unwrap_or_default();
    let session_start = kind == "session.created.1";
    // Only the opening event and message updates are read whole: the envelope parses no
    // more of the other lines.
    let data = fields
        .data
        .filter(|_| session_start || kind == "message.updated.1")
        .and_then(|data| serde_json::from_str::<Value>(data.get()).ok());
    let info = data.as_ref().map(|data| &data["info"]);
    let cwd = info.filter(|_| session_start).and_then(|info| info["directory"].as_str().map(str::to_owned));
    if info.is_some_and(finished) {
        kind = FINISHED.to_owned();
    }
    let envelope = Envelope {
        id: raw_non_empty(fields.id),
        parent_id: raw_non_empty(fields.parent_id),
        agent_id: None,
        root: true,
        timestamp: raw_str(fields.timestamp),
        session_start,
        session_id: raw_non_empty(fields.session_id).map(SessionId::from),
        cwd,
        kind,
    };
    (envelope, fields.data)
}

/// Whether a message's `info` says it is an assistant's, done for another reason than to
/// call tools.
fn finished(info: &Value) -> bool {
    info["role"] == "assistant"
        && info["time"]["completed"].is_number()
        && info["finish"].as_str().is_some_and(|finish| finish != "tool-calls")
}

fn record(envelope: Envelope, data: &Map<String, Value>) -> Record {
    let mut record = Record { envelope, ..Record::default() };
    match record.kind.as_str() {
        "message.updated.1" | FINISHED => {
            let info = &data.get("info").cloned().unwrap_or(Value::Null);
            if info["role"] == "assistant" {
                record.model = info["modelID"].as_str().map(str::to_owned);
            }
        }
        "message.part.updated.1" => {
            let part = data.get("part").cloned().unwrap_or(Value::Null);
            let state = &part["state"];
            let done = matches!(state["status"].as_str(), Some("completed" | "error"));
            match part["type"].as_str() {
                Some("tool") if done => {
                    let id = part["callID"].as_str().filter(|id| !id.is_empty()).map(str::to_owned);
                    record.tool_calls.push(ToolCall {
                        id: id.clone(),
                        name: part["tool"].as_str().unwrap_or_default().to_owned(),
                        arguments: state["input"].clone(),
                    });
                    let exit = &state["metadata"]["exit"];
                    record.tool_results.push(ToolResult {
                        tool_call_id: id,
                        success: state["status"] == "completed" && (exit.is_null() || *exit == 0),
                        text: state["output"].as_str().unwrap_or_default().to_owned(),
                        result: state.clone(),
                        still_running: None,
                    });
                }
                Some("text") => record.text = part["text"].as_str().map(str::to_owned),
                _ => {}
            }
        }
        _ => {}
    }
    record
}

pub(super) struct OpenCode;

/// `opencode run`: judged's log of the run's session, read out of OpenCode's database.
const REVIEWER_RUN: ReviewerRun = ReviewerRun {
    key: "opencode",
    agent_name: "opencode-run",
    program: "opencode",
    package: "opencode-ai",
    once: RunsOnce::Subcommand { first: "run", anywhere: None },
    name: "OpenCode",
    command: "`opencode run`",
    // A text part's update: the log does not say whose message it is in.
    prompt_kind: "message.part.updated.1",
    answer_kind: None,
    opens: RunOpens::SessionStart,
    answers: RunAnswers::FinishedAfterText(FINISHED),
};

impl HostLog for OpenCode {
    fn reviewer_run(&self) -> Option<&'static ReviewerRun> {
        Some(&REVIEWER_RUN)
    }

    fn name(&self) -> &'static str {
        "OpenCode"
    }

    fn record_noun(&self) -> &'static str {
        "OpenCode event"
    }

    fn chain(&self) -> Option<super::ChainRule> {
        Some(super::ChainRule {
            field: "parentId",
            title: "OpenCode",
            own_log: "judged's log of the session's events",
            lanes: false,
            opens_on_another: false,
        })
    }

    /// judged's logs of OpenCode's sessions, under its own data directory: set by the
    /// daemon (`judged_io::files::Roots`), never one of OpenCode's.
    fn default_root(&self) -> DefaultRoot {
        let vars = &[("JUDGED_HOME", "opencode"), ("XDG_DATA_HOME", "judged/opencode")];
        DefaultRoot { vars, under_home: ".local/share/judged/opencode" }
    }

    /// `<database>/<session id>.jsonl`.
    fn layouts(&self) -> &'static [Layout] {
        &[&[Level::AnyDir, Level::File { prefix: "ses_", suffix: ".jsonl" }]]
    }

    fn root_noun(&self) -> &'static str {
        "OpenCode sessions judged read"
    }

    fn roots_key(&self) -> &'static str {
        "opencode_roots"
    }

    fn session_named(&self) -> SessionNamed {
        SessionNamed::InTheOpening { missing: "no session.created event with its directory" }
    }

    fn ends(&self) -> Ends {
        Ends::FinishedMessage
    }

    fn log_noun(&self) -> &'static str {
        "event log"
    }

    fn model_source(&self) -> &'static str {
        "opencode-event"
    }

    fn envelope<'a>(&self, fields: &Fields<'a>, _text: &'a str) -> Result<(Envelope, Option<&'a RawValue>), LineError> {
        Ok(envelope(fields))
    }

    fn record(&self, envelope: Envelope, body: &Map<String, Value>) -> Record {
        record(envelope, body)
    }
}

/// OpenCode has no hook that can stop its agent's end (its plugins' `session.idle` comes
/// after it): every end is recorded as one no gate decided.
/// Reviewed by no CLI ([`HostHooks::reviewed_by`]): no hook can stop its agent's end, so no round is asked of it.
impl HostHooks for OpenCode {
    /// None: OpenCode runs no shell-command hook (its plugins are JavaScript modules).
    fn events(&self) -> &'static [HookEvent] {
        hook_events![]
    }

    fn end_event(&self) -> EndEvent {
        EndEvent { name: HookEvent("session.idle"), name_shared: false }
    }

    fn hears_block(&self) -> Option<super::HearsBlock> {
        None
    }
}
