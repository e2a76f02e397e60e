//! The one normalized event type everything downstream of the host adapters reads.

use serde_json::Value;

/// Which coding-agent host wrote a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Host {
    /// GitHub Copilot CLI: `session-state/<id>/events.jsonl`.
    CopilotCli,
    /// Claude Code: `projects/<dir>/<session>.jsonl` and its sub-agent transcripts.
    ClaudeCode,
    /// OpenAI Codex CLI: `sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl`.
    CodexCli,
    /// Google Gemini CLI: `tmp/<project>/chats/session-<ts>-<id8>.jsonl`.
    GeminiCli,
    /// Qwen Code: `projects/<project>/chats/<session id>.jsonl`.
    QwenCode,
    /// OpenCode: the `event` rows of its SQLite database, one log a session as judged
    /// reads them.
    #[serde(rename = "opencode")]
    OpenCode,
}

impl Host {
    /// Every host, in the order judged lists them (and discovers their logs).
    pub const ALL: [Host; 6] =
        [Host::CopilotCli, Host::ClaudeCode, Host::CodexCli, Host::GeminiCli, Host::QwenCode, Host::OpenCode];

    /// The host a hook or a gate question that names none is taken for (`judge-hook`
    /// without `--host`): Claude Code, the first host judge-hook gated.
    pub const UNNAMED: Host = Host::ClaudeCode;

    /// The hosts whose logs a root named without a host (the reference's
    /// `--session-root`) holds, each log's host told by its shape: Copilot CLI sessions and
    /// Claude Code projects, the two hosts the reference helper reads.
    pub const UNDER_A_NAMED_ROOT: [Host; 2] = [Host::CopilotCli, Host::ClaudeCode];

    /// The name artifacts, the store and the wire use (`copilot-cli`, `claude-code`,
    /// `codex-cli`, `gemini-cli`, `qwen-code`, `opencode`).
    pub fn as_str(self) -> &'static str {
        match self {
            Host::CopilotCli => "copilot-cli",
            Host::ClaudeCode => "claude-code",
            Host::CodexCli => "codex-cli",
            Host::GeminiCli => "gemini-cli",
            Host::QwenCode => "qwen-code",
            Host::OpenCode => "opencode",
        }
    }

    /// The host [`Host::as_str`] names; `None` for any other spelling, so callers decide
    /// what an unknown name means (see `rules::Artifact::host`).
    pub fn parse(name: &str) -> Option<Host> {
        match name {
            "copilot-cli" => Some(Host::CopilotCli),
            "claude-code" => Some(Host::ClaudeCode),
            "codex-cli" => Some(Host::CodexCli),
            "gemini-cli" => Some(Host::GeminiCli),
            "qwen-code" => Some(Host::QwenCode),
            "opencode" => Some(Host::OpenCode),
            _ => None,
        }
    }
}

/// A host's id of one of its sessions, as its log or a hook's payload names it (a UUID
/// for most hosts). It is not judged's name for a log (`session` in the store and on the
/// command line), which a log's path can stand in for. A request on the socket bounds
/// its length where it comes in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct SessionId(String);

impl SessionId {
    /// The id as its host writes it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for SessionId {
    fn from(id: String) -> SessionId {
        SessionId(id)
    }
}

impl From<&str> for SessionId {
    fn from(id: &str) -> SessionId {
        SessionId(id.to_owned())
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for SessionId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

/// The fields every record carries, whatever the host: all that ingest reads of a line,
/// and the start of every [`Record`].
///
/// Ids are kept only when they are non-empty strings, so two absent ids can never be
/// mistaken for a match.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Envelope {
    /// Copilot `type` (`tool.execution_start`, …) or Claude Code record `type` (`assistant`, …).
    pub kind: String,
    /// Copilot `id`, Claude Code `uuid`.
    pub id: Option<String>,
    /// Copilot `parentId`, Claude Code `parentUuid` (or, on a compaction record, which has
    /// none, `logicalParentUuid`).
    pub parent_id: Option<String>,
    /// The sub-agent that emitted the record (Copilot `agentId`, Claude Code `agentId`).
    pub agent_id: Option<String>,
    /// Emitted by the root agent: Copilot without a truthy `agentId`, Claude Code
    /// without `isSidechain: true`.
    pub root: bool,
    /// The host's own timestamp string, unparsed: only the rules that need a time parse
    /// it, so one malformed timestamp cannot make a line unreadable.
    pub timestamp: Option<String>,
    /// Whether this is the record that opens a session (Copilot `session.start`).
    pub session_start: bool,
    /// Copilot `session.start` `data.sessionId`; Claude Code `sessionId` of any record.
    pub session_id: Option<SessionId>,
    /// Copilot `session.start` `data.context.cwd`; Claude Code `cwd` of any record.
    pub cwd: Option<String>,
}

/// One parsed log record, whatever the host: its [`Envelope`] (reached through `Deref`)
/// and what the host's body says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Record {
    /// The fields every record carries; read through `Deref` as if they were this
    /// record's own.
    pub envelope: Envelope,
    /// The host-reported model of the agent that wrote the record.
    pub model: Option<String>,
    /// The tools the record starts (Copilot `tool.execution_start`: one; a Claude Code
    /// assistant record: its `tool_use` blocks).
    pub tool_calls: Vec<ToolCall>,
    /// The tool outcomes the record reports (Copilot `tool.execution_complete`, Claude
    /// Code `tool_result` blocks).
    pub tool_results: Vec<ToolResult>,
    /// Set on a Copilot `subagent.*` lifecycle record.
    pub subagent: Option<SubagentEvent>,
    /// Plain message text (Copilot `user.message` and `assistant.message` `data.content`,
    /// Claude Code string content).
    pub text: Option<String>,
}

impl std::ops::Deref for Record {
    type Target = Envelope;
    fn deref(&self) -> &Envelope {
        &self.envelope
    }
}

/// A tool invocation as the host recorded it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    /// Copilot `toolCallId`, Claude Code `tool_use` `id`: what the result names.
    pub id: Option<String>,
    /// The tool's name as the host spells it (`bash`, `task`, `Bash`, …).
    pub name: String,
    /// The arguments as recorded (`null` when absent).
    pub arguments: Value,
}

/// The outcome of a tool invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolResult {
    /// The [`ToolCall::id`] this result answers.
    pub tool_call_id: Option<String>,
    /// Exactly JSON `true` in the host record (Copilot `success`; Claude Code: not `is_error`).
    pub success: bool,
    /// The text the tool returned (Copilot `content` and `detailedContent` joined by `\n`).
    pub text: String,
    /// The raw result object, for response extraction.
    pub result: Value,
    /// The call returned while its process still runs, as this session (Codex CLI's
    /// `exec_command` past its wait: `Process running with session ID N`); a later
    /// `write_stdin` call with that `session_id` polls it, and the first poll that finds it
    /// exited is where the call ends.
    pub still_running: Option<u64>,
}

/// Which end of a sub-agent's life a [`SubagentEvent`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubagentPhase {
    /// `subagent.started`: the child agent was spawned.
    Started,
    /// `subagent.completed`: the child answered.
    Completed,
    /// `subagent.failed`: the child ended without an answer.
    Failed,
}

/// A sub-agent lifecycle record (Copilot `subagent.started|completed|failed`).
#[derive(Clone, Debug, PartialEq)]
pub struct SubagentEvent {
    /// Which lifecycle record this is.
    pub phase: SubagentPhase,
    /// The id of the root tool call that spawned the sub-agent.
    pub tool_call_id: Option<String>,
    /// The kind of agent (`rubber-duck` for the reviewer), as the host names it.
    pub agent_name: Option<String>,
    /// The resolved model of the sub-agent.
    pub model: Option<String>,
}

impl ToolCall {
    /// The command line a shell call runs: Claude Code's and Copilot CLI's `command`, Codex
    /// CLI's `exec_command` `cmd`; an argv (Codex CLI's legacy `shell`: `["bash", "-lc",
    /// "…"]`) is its script when it runs one, else its words joined.
    pub fn command(&self) -> Option<String> {
        ["command", "cmd"].iter().find_map(|key| match self.arguments.get(key)? {
            Value::String(line) => Some(line.clone()),
            Value::Array(argv) => {
                let words: Option<Vec<&str>> = argv.iter().map(Value::as_str).collect();
                match words?.as_slice() {
                    [_, flag, script] if flag.starts_with('-') && flag.ends_with('c') => Some((*script).to_owned()),
                    words => Some(words.join(" ")),
                }
            }
            _ => None,
        })
    }

    /// The arguments as the reference serialises them for substring checks:
    /// `json.dumps(arguments or {}, sort_keys=True, ensure_ascii=False)`.
    pub fn arguments_text(&self) -> String {
        let falsy = match &self.arguments {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::String(s) => s.is_empty(),
            Value::Object(m) => m.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Number(n) => n.as_f64() == Some(0.0),
        };
        if falsy { "{}".to_owned() } else { crate::pyjson::one_line(&self.arguments) }
    }
}

#[cfg(test)]
mod tests {
    use super::Host;

    /// A host is one name everywhere: on the wire (serde), in the store and messages
    /// (`as_str`), and read back (`parse`).
    #[test]
    fn every_host_has_one_name() {
        for host in Host::ALL {
            let wire = serde_json::to_value(host).unwrap();
            assert_eq!(wire.as_str(), Some(host.as_str()), "{host:?}");
            assert_eq!(Host::parse(host.as_str()), Some(host));
            assert_eq!(serde_json::from_value::<Host>(wire).unwrap(), host);
        }
    }
}
