//! Session roots in the shapes the real hosts write, deterministic from a seed.
//!
//! Copilot CLI: `<root>/copilot/session-state/<uuid>/events.jsonl`, envelope
//! `{type, data, [agentId,] id, timestamp, parentId}` with `parentId` chaining every line
//! to the one before (as in `fixtures/copilot-1.0.102`). Claude Code:
//! `<root>/claude/projects/<project>/<session>.jsonl` (+ `<session>/subagents/agent-*.jsonl`),
//! records chained by `parentUuid` and carrying `cwd` and `sessionId` (as in
//! `fixtures/claude-code-2.1.328`). The `session-state` and `projects` levels make the two
//! directories usable as `COPILOT_HOME` and `CLAUDE_CONFIG_DIR` for direct mode.
//!
//! Background sessions have old timestamps and other cwds. One Copilot session (the
//! [`LiveSession`]) has the bench's project dir as cwd; marker and reviewer lifecycles
//! are appended to it with the current time, as the host would write them live.

use std::fmt::Write as _;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// SplitMix64: small, fast, and good enough to make text look varied.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next_u64() % items.len() as u64) as usize]
    }

    /// An independent stream (for things generated later, such as the live session).
    pub fn fork(&mut self) -> Rng {
        Rng(self.next_u64())
    }

    pub fn hex(&mut self, digits: usize) -> String {
        let mut out = String::with_capacity(digits);
        while out.len() < digits {
            let _ = write!(out, "{:016x}", self.next_u64());
        }
        out.truncate(digits);
        out
    }

    /// A version-4 UUID.
    pub fn uuid(&mut self) -> String {
        let h = self.hex(32);
        let variant = ["8", "9", "a", "b"][(self.next_u64() % 4) as usize];
        format!("{}-{}-4{}-{}{}-{}", &h[0..8], &h[8..12], &h[13..16], variant, &h[17..20], &h[20..32])
    }

    /// Text of about `len` bytes: prose, code and tool output mixed, with newlines,
    /// quotes, backslashes and some non-ASCII, so the JSON has escapes to decode.
    pub fn text(&mut self, len: usize) -> String {
        const WORDS: &[&str] = &[
            "the",
            "a",
            "to",
            "of",
            "and",
            "is",
            "in",
            "that",
            "for",
            "it",
            "with",
            "as",
            "on",
            "this",
            "be",
            "fn",
            "let",
            "mut",
            "self",
            "return",
            "match",
            "Some(x)",
            "None",
            "Ok(())",
            "Err(e)",
            "impl",
            "struct",
            "pub",
            "use",
            "crate::store",
            "async",
            "await",
            "->",
            "=>",
            "::",
            "{",
            "}",
            "(",
            ");",
            "&str",
            "Vec<u8>",
            "String",
            "config",
            "error",
            "session",
            "daemon",
            "review",
            "offset",
            "buffer",
            "request",
            "response",
            "handler",
            "parse",
            "value",
            "field",
            "index",
            "cache",
            "token",
            "should",
            "could",
            "because",
            "which",
            "update",
            "test",
            "assert_eq!",
            "src/main.rs",
            "core/src/log.rs",
            "tests/daemon.rs",
            "42",
            "1024",
            "0x1f",
            "true",
            "false",
            "null",
            "\"quoted\"",
            "it's",
            "// TODO:",
            "#[derive(Debug)]",
            "cargo",
            "build",
            "warning:",
            "error[E0308]:",
            "-->",
            "|",
            "^^^^",
            "naïve",
            "café",
            "—",
            "✓",
            "→",
            "C:\\tmp\\x",
            "$HOME/.config",
            "https://example.com/a?b=c&d=e",
            "<div>",
            "</div>",
            "SELECT",
            "FROM",
            "WHERE",
        ];
        let mut out = String::with_capacity(len + 32);
        while out.len() < len {
            out.push_str(self.pick::<&str>(WORDS));
            match self.next_u64() % 16 {
                0 => out.push('\n'),
                1 => out.push_str("\n    "),
                2 => out.push('\t'),
                _ => out.push(' '),
            }
        }
        out
    }

    pub fn text_between(&mut self, lo: u64, hi: u64) -> String {
        let len = self.range(lo, hi) as usize;
        self.text(len)
    }

    /// A tool's output: mostly small, sometimes a whole file, rarely huge.
    fn output_text(&mut self) -> String {
        let len = match self.next_u64() % 100 {
            0..75 => self.range(80, 2_500),
            75..97 => self.range(2_500, 20_000),
            _ => self.range(20_000, 120_000),
        };
        self.text(len as usize)
    }
}

/// A JSON string literal.
pub fn js(text: &str) -> String {
    serde_json::to_string(text).expect("strings serialize")
}

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// `2026-11-30T01:25:06.284Z`, the hosts' timestamp format.
pub fn iso(ms: u64) -> String {
    chrono::DateTime::from_timestamp_millis(ms as i64)
        .expect("a time within chrono's range")
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// Where a generated root lives.
#[derive(Clone, Debug)]
pub struct Layout {
    /// `COPILOT_HOME`: holds `session-state/`.
    pub copilot_home: PathBuf,
    /// `CLAUDE_CONFIG_DIR`: holds `projects/`.
    pub claude_home: PathBuf,
    /// The project the live session works in (exists, canonical).
    pub project: PathBuf,
}

impl Layout {
    pub fn create(root: &Path) -> std::io::Result<Layout> {
        let copilot_home = root.join("copilot");
        let claude_home = root.join("claude");
        fs::create_dir_all(copilot_home.join("session-state"))?;
        fs::create_dir_all(claude_home.join("projects"))?;
        let project = root.join("project");
        fs::create_dir_all(&project)?;
        // A repository of its own, as a user's project is: evidence records the reviewed
        // tree of the repository holding the cwd, and the bench's work dir sits inside the
        // judged checkout, whose tree is no part of what is measured.
        let init = std::process::Command::new("git").args(["init", "-q"]).current_dir(&project).status()?;
        if !init.success() {
            return Err(std::io::Error::other("git init failed in the bench project"));
        }
        Ok(Layout { project: fs::canonicalize(&project)?, copilot_home, claude_home })
    }

    pub fn copilot_root(&self) -> PathBuf {
        self.copilot_home.join("session-state")
    }

    pub fn claude_root(&self) -> PathBuf {
        self.claude_home.join("projects")
    }
}

const COPILOT_MODELS: &[&str] =
    &["claude-sonnet-4.6", "claude-sonnet-4.6", "gpt-5.4", "claude-opus-4.6", "gemini-3-pro"];
const EXECUTOR_MODEL: &str = "claude-sonnet-4.6";
const REVIEWER_MODEL: &str = "gpt-5.4";
/// 2026-09-01T00:00:00Z: background history starts here.
const HISTORY_START_MS: u64 = 1_788_220_800_000;

/// Lines of one Copilot `events.jsonl`, chained by `parentId`.
struct CopilotLog {
    out: Vec<u8>,
    last_id: Option<String>,
    /// Milliseconds since the epoch of the next event; `None`: the wall clock.
    clock: Option<u64>,
    lines: u64,
}

impl CopilotLog {
    fn new(clock: Option<u64>, last_id: Option<String>) -> CopilotLog {
        CopilotLog { out: Vec::with_capacity(1 << 20), last_id, clock, lines: 0 }
    }

    fn event(&mut self, kind: &str, data: &str, agent: Option<&str>, rng: &mut Rng) {
        let id = rng.uuid();
        let at = match &mut self.clock {
            Some(clock) => {
                *clock += rng.range(1, 900);
                *clock
            }
            None => now_ms(),
        };
        let parent = self.last_id.as_deref().map_or("null".to_owned(), |p| format!("\"{p}\""));
        let agent = agent.map(|a| format!("\"agentId\":\"{a}\",")).unwrap_or_default();
        let _ = writeln!(
            self.out,
            r#"{{"type":"{kind}","data":{data},{agent}"id":"{id}","timestamp":"{}","parentId":{parent}}}"#,
            iso(at)
        );
        self.last_id = Some(id);
        self.lines += 1;
    }

    fn usage(&mut self, rng: &mut Rng, model: &str, initiator: &str) {
        let data = format!(
            r#"{{"usage":{{"model":"{model}","modelDisplayName":"{model}","inputTokens":{},"outputTokens":{},"cacheReadTokens":{},"cacheWriteTokens":0,"cost":0.0,"duration":{},"timeToFirstTokenMs":{}.{},"outputTtftMs":{}.{},"interTokenLatencyMs":0.{},"initiator":"{initiator}","interactionType":"conversation-agent","isByok":false,"modelProvider":"github","providerType":"copilot","isAuto":false,"maxPromptTokens":936000,"maxOutputTokens":64000,"transport":"http","requestBodyBytes":{},"requestBodyWireBytes":{},"requestBodyEncoding":"identity","apiCallId":"chatcmpl-{}","rte":false,"apiEndpoint":"/chat/completions","aiCreditsStatus":"available","reasoningEffort":"medium","availableToolCount":17,"toolTokenCount":6725,"customToolCallCount":0,"unmatchedToolResultCount":0,"orphanToolCallCount":0,"frontierSource":"estimated","cacheDetailsReported":true,"numToolCalls":1,"finishReason":"tool_calls","contentFilterTriggered":false}}}}"#,
            rng.range(5_000, 200_000),
            rng.range(10, 4_000),
            rng.range(0, 150_000),
            rng.range(300, 40_000),
            rng.range(100, 3_000),
            rng.range(0, 999_999),
            rng.range(100, 3_000),
            rng.range(0, 999_999),
            rng.range(1, 99_999_999),
            rng.range(40_000, 900_000),
            rng.range(40_000, 900_000),
            rng.hex(24)
        );
        self.event("session.usage_record", &data, None, rng);
    }

    /// One tool call of the root agent (or of `agent`): request, start, completion.
    fn tool_call(&mut self, rng: &mut Rng, model: &str, turn: u32, interaction: &str, agent: Option<&str>) {
        let call_id = format!("toolu_{}", rng.hex(24));
        let (name, arguments) = match rng.next_u64() % 4 {
            0 => ("view", format!(r#"{{"path":{}}}"#, js(&format!("/home/dev/src/{}/{}.rs", rng.hex(6), rng.hex(8))))),
            1 => (
                "edit",
                format!(
                    r#"{{"path":{},"old_str":{},"new_str":{}}}"#,
                    js(&format!("/home/dev/src/{}.rs", rng.hex(8))),
                    js(&rng.text_between(40, 1_200)),
                    js(&rng.text_between(40, 1_500))
                ),
            ),
            2 => ("grep", format!(r#"{{"pattern":{},"path":"/home/dev/src"}}"#, js(&rng.text(16)))),
            _ => (
                "bash",
                format!(
                    r#"{{"command":{},"description":{}}}"#,
                    js(&format!("cargo test -p {} -- {}", rng.hex(6), rng.hex(10))),
                    js(&rng.text(30))
                ),
            ),
        };
        let request = format!(
            r#"{{"messageId":"{}","originatingMessageId":"{}","model":"{model}","content":{},"toolRequests":[{{"toolCallId":"{call_id}","name":"{name}","arguments":{arguments},"type":"function","intentionSummary":{},"toolTitle":"Running command"}}],"interactionId":"{interaction}","turnId":"{turn}","rte":false,"apiCallId":"chatcmpl-{}"}}"#,
            rng.uuid(),
            rng.uuid(),
            js(&if rng.chance(40) { rng.text_between(20, 1_500) } else { String::new() }),
            js(&rng.text(24)),
            rng.hex(24)
        );
        self.event("assistant.message", &request, agent, rng);
        let start = format!(
            r#"{{"toolCallId":"{call_id}","toolName":"{name}","arguments":{arguments},"turnId":"{turn}","model":"{model}","toolTitle":"Running command"}}"#
        );
        self.event("tool.execution_start", &start, agent, rng);
        let output = rng.output_text();
        let detailed =
            if rng.chance(30) { format!(r#","detailedContent":{}"#, js(&rng.output_text())) } else { String::new() };
        let complete = format!(
            r#"{{"toolCallId":"{call_id}","model":"{model}","interactionId":"{interaction}","turnId":"{turn}","rte":false,"success":{},"result":{{"content":{}{detailed}}},"toolTelemetry":{{"properties":{{"customTimeout":"false","executionMode":"sync"}},"metrics":{{"commandTimeout":30000.0,"context_token_limit":936000.0,"context_current_tokens":{}.0,"result_token_count":{}}}}}}}"#,
            !rng.chance(5),
            js(&output),
            rng.range(10_000, 400_000),
            output.len() / 4
        );
        self.event("tool.execution_complete", &complete, agent, rng);
    }

    fn user_message(&mut self, rng: &mut Rng, content: &str, turn: u32, interaction: &str, agent: Option<&str>) {
        let at = iso(self.clock.unwrap_or_else(now_ms));
        let data = format!(
            r#"{{"content":{},"transformedContent":{},"messageId":"{}","supportedNativeDocumentMimeTypes":[],"delivery":"idle","interactionId":"{interaction}","turnId":"{turn}","parentAgentTaskId":"{}"}}"#,
            js(content),
            js(&format!("<current_datetime>{at}</current_datetime>\n\n{content}")),
            rng.uuid(),
            rng.uuid()
        );
        self.event("user.message", &data, agent, rng);
    }

    /// One user turn of the root agent: prompt, model calls, tool calls, sometimes an
    /// `explore` sub-agent whose events carry its own `agentId`.
    fn turn(&mut self, rng: &mut Rng, model: &str, turn: u32) {
        let interaction = rng.uuid();
        let prompt = rng.text_between(40, 2_000);
        self.user_message(rng, &prompt, turn, &interaction, None);
        for step in 0..rng.range(1, 4) {
            self.event(
                "assistant.turn_start",
                &format!(r#"{{"turnId":"{turn}.{step}","interactionId":"{interaction}"}}"#),
                None,
                rng,
            );
            self.usage(rng, model, if step == 0 { "user" } else { "agent" });
            self.tool_call(rng, model, turn, &interaction, None);
            if rng.chance(5) {
                self.explore_subagent(rng, model, turn, &interaction);
            }
            self.event("assistant.turn_end", &format!(r#"{{"turnId":"{turn}.{step}"}}"#), None, rng);
        }
        let answer = format!(
            r#"{{"messageId":"{}","model":"{model}","content":{},"toolRequests":[],"interactionId":"{interaction}","turnId":"{turn}","rte":false}}"#,
            rng.uuid(),
            js(&rng.text_between(50, 2_500))
        );
        self.event("assistant.message", &answer, None, rng);
    }

    fn explore_subagent(&mut self, rng: &mut Rng, model: &str, turn: u32, interaction: &str) {
        let call_id = format!("toolu_{}", rng.hex(24));
        let child = rng.uuid();
        let prompt = rng.text_between(100, 1_500);
        let arguments =
            format!(r#"{{"agent_type":"explore","name":"explore-{}","prompt":{}}}"#, rng.hex(4), js(&prompt));
        self.event(
            "tool.execution_start",
            &format!(
                r#"{{"toolCallId":"{call_id}","toolName":"task","arguments":{arguments},"turnId":"{turn}","model":"{model}"}}"#
            ),
            None,
            rng,
        );
        let started = format!(
            r#"{{"toolCallId":"{call_id}","agentName":"explore","agentDisplayName":"Explore","model":"{model}","agentType":"explore","executionMode":"sync"}}"#
        );
        self.event("subagent.started", &started, Some(&child), rng);
        self.user_message(rng, &prompt, 0, interaction, Some(&child));
        for _ in 0..rng.range(1, 3) {
            self.tool_call(rng, model, 0, interaction, Some(&child));
        }
        let answer = rng.text_between(100, 3_000);
        self.event(
            "subagent.completed",
            &format!(r#"{{"toolCallId":"{call_id}","agentName":"explore","model":"{model}","totalToolCalls":2}}"#),
            Some(&child),
            rng,
        );
        self.event(
            "tool.execution_complete",
            &format!(
                r#"{{"toolCallId":"{call_id}","model":"{model}","turnId":"{turn}","success":true,"result":{{"content":{}}}}}"#,
                js(&answer)
            ),
            None,
            rng,
        );
    }

    fn session_start(&mut self, rng: &mut Rng, session_id: &str, model: &str, cwd: &str) {
        let at = iso(self.clock.unwrap_or_else(now_ms));
        let data = format!(
            r#"{{"sessionId":"{session_id}","version":1,"producer":"copilot-agent","copilotVersion":"1.0.102","startTime":"{at}","selectedModel":"{model}","reasoningEffort":"medium","contextTier":null,"context":{{"cwd":{}}},"alreadyInUse":false,"remoteSteerable":false}}"#,
            js(cwd)
        );
        self.event("session.start", &data, None, rng);
        let system = rng.text_between(15_000, 35_000);
        self.event("system.message", &format!(r#"{{"role":"system","content":{}}}"#, js(&system)), None, rng);
    }
}

/// Claude Code transcript records, chained by `parentUuid`.
struct ClaudeLog {
    out: Vec<u8>,
    last_uuid: Option<String>,
    clock: u64,
    lines: u64,
    /// `,"userType":…,"cwd":…,"sessionId":…,…` closing every conversation record.
    tail: String,
    sidechain: bool,
}

impl ClaudeLog {
    fn new(clock: u64, cwd: &str, session_id: &str, agent: Option<&str>) -> ClaudeLog {
        let agent = agent.map(|a| format!(r#","agentId":"{a}""#)).unwrap_or_default();
        let tail = format!(
            r#","userType":"external","entrypoint":"cli","cwd":{},"sessionId":"{session_id}","version":"2.1.328","gitBranch":"main"{agent}}}"#,
            js(cwd)
        );
        ClaudeLog {
            out: Vec::with_capacity(1 << 20),
            last_uuid: None,
            clock,
            lines: 0,
            tail,
            sidechain: !agent.is_empty(),
        }
    }

    /// A conversation record: `{"parentUuid":…,"isSidechain":…,<body>,"uuid":…,"timestamp":…<tail>`.
    fn record(&mut self, body: &str, rng: &mut Rng) -> String {
        let uuid = rng.uuid();
        self.clock += rng.range(5, 3_000);
        let parent = self.last_uuid.as_deref().map_or("null".to_owned(), |p| format!("\"{p}\""));
        let _ = writeln!(
            self.out,
            r#"{{"parentUuid":{parent},"isSidechain":{},{body},"uuid":"{uuid}","timestamp":"{}"{}"#,
            self.sidechain,
            iso(self.clock),
            self.tail
        );
        self.last_uuid = Some(uuid.clone());
        self.lines += 1;
        uuid
    }

    /// A bookkeeping line without uuid or cwd.
    fn plain(&mut self, line: &str) {
        self.out.extend_from_slice(line.as_bytes());
        self.out.push(b'\n');
        self.lines += 1;
    }

    fn turn(&mut self, rng: &mut Rng, session_id: &str) {
        let prompt = rng.text_between(40, 2_000);
        self.plain(&format!(
            r#"{{"type":"queue-operation","operation":"enqueue","timestamp":"{}","sessionId":"{session_id}","content":{}}}"#,
            iso(self.clock),
            js(&prompt)
        ));
        let prompt_id = rng.uuid();
        self.record(
            &format!(
                r#""promptId":"{prompt_id}","type":"user","message":{{"role":"user","content":{}}},"permissionMode":"default""#,
                js(&prompt)
            ),
            rng,
        );
        if rng.chance(12) {
            let snapshot = rng.text_between(30_000, 110_000);
            self.record(
                &format!(
                    r#""attachment":{{"type":"prompt_snapshot","systemPrompt":[{}]}},"type":"attachment""#,
                    js(&snapshot)
                ),
                rng,
            );
        }
        for _ in 0..rng.range(1, 4) {
            self.plain(&format!(
                r#"{{"type":"api-request","sessionId":"{session_id}","id":"{}","timestamp":"{}","version":"2.1.328","querySource":"repl_main_thread","params":{{"model":"claude-sonnet-4-6","max_tokens":32000,"thinking":{{"type":"adaptive"}}}},"tail":["{}","{}"],"requestDigest":"{}"}}"#,
                rng.uuid(),
                iso(self.clock),
                rng.hex(64),
                rng.hex(64),
                rng.hex(64)
            ));
            let tool_id = format!("toolu_{}", rng.hex(24));
            let (name, input) = match rng.next_u64() % 3 {
                0 => ("Read", format!(r#"{{"file_path":{}}}"#, js(&format!("/home/dev/src/{}.ts", rng.hex(8))))),
                1 => (
                    "Edit",
                    format!(
                        r#"{{"file_path":{},"old_string":{},"new_string":{}}}"#,
                        js(&format!("/home/dev/src/{}.ts", rng.hex(8))),
                        js(&rng.text_between(40, 1_000)),
                        js(&rng.text_between(40, 1_200))
                    ),
                ),
                _ => (
                    "Bash",
                    format!(
                        r#"{{"command":{},"description":{}}}"#,
                        js(&format!("npm test -- {}", rng.hex(8))),
                        js(&rng.text(30))
                    ),
                ),
            };
            let assistant = self.record(
                &format!(
                    r#""message":{{"id":"msg_{}","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{{"type":"tool_use","id":"{tool_id}","name":"{name}","input":{input}}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{{"input_tokens":{},"cache_creation_input_tokens":{},"cache_read_input_tokens":{},"output_tokens":{},"service_tier":"standard"}}}},"requestId":"req_{}","type":"assistant""#,
                    rng.hex(24),
                    rng.range(1, 5_000),
                    rng.range(0, 50_000),
                    rng.range(0, 200_000),
                    rng.range(10, 4_000),
                    rng.hex(24)
                ),
                rng,
            );
            let output = rng.output_text();
            self.record(
                &format!(
                    r#""promptId":"{prompt_id}","type":"user","message":{{"role":"user","content":[{{"tool_use_id":"{tool_id}","type":"tool_result","content":{},"is_error":false}}]}},"toolUseResult":{{"stdout":{},"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}},"sourceToolAssistantUUID":"{assistant}""#,
                    js(&output),
                    js(&output)
                ),
                rng,
            );
        }
        self.record(
            &format!(
                r#""message":{{"id":"msg_{}","type":"message","role":"assistant","model":"claude-sonnet-4-6","content":[{{"type":"text","text":{}}}],"stop_reason":"end_turn","stop_sequence":null}},"type":"assistant""#,
                rng.hex(24),
                js(&rng.text_between(50, 2_500))
            ),
            rng,
        );
        let leaf = self.last_uuid.clone().unwrap_or_default();
        self.plain(&format!(
            r#"{{"type":"last-prompt","lastPrompt":{},"leafUuid":"{leaf}","sessionId":"{session_id}"}}"#,
            js(&prompt.chars().take(200).collect::<String>())
        ));
    }
}

/// What was written so far.
#[derive(Clone, Debug, Default)]
pub struct Written {
    pub files: Vec<PathBuf>,
    pub bytes: u64,
    pub lines: u64,
    pub copilot_sessions: u64,
    pub claude_sessions: u64,
}

/// Writes background sessions into a [`Layout`] until it holds a given size.
pub struct Generator {
    rng: Rng,
    pub layout: Layout,
    clock: u64,
    pub written: Written,
}

/// Append `bytes` to `path` in one `write`, creating the file and its directory.
fn append(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    OpenOptions::new().create(true).append(true).open(path)?.write_all(bytes)
}

/// A log being generated: the bytes not yet written to its file.
trait Pending {
    fn pending(&mut self) -> &mut Vec<u8>;
}

impl Pending for CopilotLog {
    fn pending(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }
}

impl Pending for ClaudeLog {
    fn pending(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }
}

/// Add turns to `log` until `path` holds at least `size` bytes, writing a MiB at a
/// time; the bytes written.
fn fill<L: Pending>(path: &Path, size: u64, log: &mut L, mut turn: impl FnMut(&mut L)) -> std::io::Result<u64> {
    let mut written = 0u64;
    while written + (log.pending().len() as u64) < size {
        turn(log);
        if log.pending().len() > 1 << 20 {
            written += log.pending().len() as u64;
            append(path, log.pending())?;
            log.pending().clear();
        }
    }
    append(path, log.pending())?;
    Ok(written + log.pending().len() as u64)
}

impl Generator {
    pub fn new(seed: u64, layout: Layout) -> Generator {
        Generator { rng: Rng::new(seed), layout, clock: HISTORY_START_MS, written: Written::default() }
    }

    /// A session's size: many small ones, some large, a few very large.
    fn session_bytes(&mut self) -> u64 {
        let rng = &mut self.rng;
        match rng.next_u64() % 10 {
            0..4 => rng.range(50_000, 500_000),
            4..8 => rng.range(500_000, 5_000_000),
            _ => rng.range(5_000_000, 16_000_000),
        }
    }

    /// A cwd of some other project.
    fn other_cwd(&mut self) -> String {
        let names = ["api", "web", "infra", "scratch", "notes", "cli", "sdk", "site", "ml", "tools"];
        format!("/home/dev/src/{}-{}", self.rng.pick(&names), self.rng.range(1, 40))
    }

    fn record(&mut self, path: PathBuf, bytes: u64, lines: u64) {
        self.written.files.push(path);
        self.written.bytes += bytes;
        self.written.lines += lines;
    }

    /// Write background sessions until the root holds at least `target` bytes.
    pub fn grow_to(&mut self, target: u64) -> std::io::Result<()> {
        while self.written.bytes < target {
            let size = self.session_bytes().min(target - self.written.bytes + 50_000);
            if self.rng.chance(60) {
                let cwd = self.other_cwd();
                self.copilot_session(&cwd, size)?;
            } else {
                self.claude_session(size)?;
            }
            self.clock += self.rng.range(600_000, 86_400_000);
        }
        Ok(())
    }

    fn copilot_session(&mut self, cwd: &str, size: u64) -> std::io::Result<PathBuf> {
        let rng = &mut self.rng;
        let session_id = rng.uuid();
        let path = self.layout.copilot_root().join(&session_id).join("events.jsonl");
        let model = *rng.pick(COPILOT_MODELS);
        let mut log = CopilotLog::new(Some(self.clock), None);
        log.session_start(rng, &session_id, model, cwd);
        let mut turn = 0;
        let bytes = fill(&path, size, &mut log, |log| {
            log.turn(rng, model, turn);
            turn += 1;
        })?;
        let lines = log.lines;
        self.record(path.clone(), bytes, lines);
        self.written.copilot_sessions += 1;
        Ok(path)
    }

    fn claude_session(&mut self, size: u64) -> std::io::Result<()> {
        let cwd = self.other_cwd();
        let rng = &mut self.rng;
        let session_id = rng.uuid();
        let dir = self.layout.claude_root().join(cwd.replace('/', "-"));
        let path = dir.join(format!("{session_id}.jsonl"));
        let mut log = ClaudeLog::new(self.clock, &cwd, &session_id, None);
        let bytes = fill(&path, size, &mut log, |log| log.turn(rng, &session_id))?;
        let lines = log.lines;
        self.record(path, bytes, lines);
        self.written.claude_sessions += 1;
        let rng = &mut self.rng;
        if rng.chance(15) {
            let agent = rng.hex(17);
            let path = dir.join(&session_id).join("subagents").join(format!("agent-a{agent}.jsonl"));
            let mut child = ClaudeLog::new(self.clock, &cwd, &session_id, Some(&format!("a{agent}")));
            for _ in 0..rng.range(1, 6) {
                child.turn(rng, &session_id);
            }
            append(&path, &child.out)?;
            let (bytes, lines) = (child.out.len() as u64, child.lines);
            self.record(path, bytes, lines);
        }
        Ok(())
    }

    /// The Copilot session working in the project dir: `history` bytes of earlier
    /// turns (old timestamps); marker and review lifecycles are appended live.
    pub fn live_session(&mut self, history: u64) -> std::io::Result<LiveSession> {
        let rng = &mut self.rng;
        let session_id = rng.uuid();
        let path = self.layout.copilot_root().join(&session_id).join("events.jsonl");
        let mut log = CopilotLog::new(Some(self.clock), None);
        let cwd = self.layout.project.to_string_lossy().into_owned();
        log.session_start(rng, &session_id, EXECUTOR_MODEL, &cwd);
        let mut turn = 0;
        while (log.out.len() as u64) < history {
            log.turn(rng, EXECUTOR_MODEL, turn);
            turn += 1;
        }
        append(&path, &log.out)?;
        let live =
            LiveSession { rng: rng.fork(), path: path.clone(), session_id, last_id: log.last_id.clone(), calls: 0 };
        let (bytes, lines) = (log.out.len() as u64, log.lines);
        self.record(path, bytes, lines);
        self.written.copilot_sessions += 1;
        Ok(live)
    }
}

/// The project's Copilot session, appended to with the wall clock.
pub struct LiveSession {
    rng: Rng,
    pub path: PathBuf,
    pub session_id: String,
    last_id: Option<String>,
    calls: u32,
}

impl LiveSession {
    /// Write `events` (built on a log continuing this session) in one append.
    fn append_with(&mut self, events: impl FnOnce(&mut CopilotLog, &mut Rng)) -> std::io::Result<(u64, u64)> {
        let mut log = CopilotLog::new(None, self.last_id.take());
        events(&mut log, &mut self.rng);
        append(&self.path, &log.out)?;
        self.last_id = log.last_id;
        Ok((log.out.len() as u64, log.lines))
    }

    /// The root agent runs `judge-evidence marker --binding <binding>` (Bash), which
    /// prints the marker; returns (bytes, lines) appended.
    pub fn append_marker(&mut self, binding: &str) -> std::io::Result<(u64, u64)> {
        self.calls += 1;
        let call_id = format!("call_m{}", self.calls);
        let shell = self.calls;
        self.append_with(|log, rng| {
            let arguments = format!(
                r#"{{"command":"judge-evidence marker --binding {binding}","description":"Record ARIS binding marker"}}"#
            );
            let interaction = rng.uuid();
            log.event(
                "assistant.message",
                &format!(
                    r#"{{"messageId":"{}","model":"{EXECUTOR_MODEL}","content":"","toolRequests":[{{"toolCallId":"{call_id}","name":"bash","arguments":{arguments},"type":"function","intentionSummary":"Record ARIS binding marker","toolTitle":"Running command"}}],"interactionId":"{interaction}","turnId":"m{shell}","rte":false}}"#,
                    rng.uuid()
                ),
                None,
                rng,
            );
            log.event(
                "tool.execution_start",
                &format!(
                    r#"{{"toolCallId":"{call_id}","toolName":"bash","arguments":{arguments},"turnId":"m{shell}","model":"{EXECUTOR_MODEL}","toolTitle":"Running command"}}"#
                ),
                None,
                rng,
            );
            let marker = format!(
                r#"{{"binding": "{binding}", "schema": "aris.copilot-native.challenge/v1", "status": "marker"}}"#
            );
            let content = js(&format!("{marker}\n<shellId: {shell} completed with exit code 0>"));
            log.event(
                "tool.execution_complete",
                &format!(
                    r#"{{"toolCallId":"{call_id}","model":"{EXECUTOR_MODEL}","interactionId":"{interaction}","turnId":"m{shell}","rte":false,"shellExecution":{{"exitCode":0}},"success":true,"result":{{"content":{content}}}}}"#
                ),
                None,
                rng,
            );
        })
    }

    /// The root agent runs the built-in `rubber-duck` reviewer (another family) with the
    /// nonce line; the child answers and both lifecycle ends are recorded.
    pub fn append_review(&mut self, nonce: &str) -> std::io::Result<(u64, u64)> {
        self.calls += 1;
        let call_id = format!("call_r{}", self.calls);
        let turn = self.calls;
        self.append_with(|log, rng| {
            let child = rng.uuid();
            let interaction = rng.uuid();
            let prompt = format!(
                "ARIS_REVIEW_NONCE={nonce}\n\nReview the work in this directory as an independent critic. Reply with a score out of 10, a verdict, the weaknesses, and a memory update."
            );
            let arguments = format!(
                r#"{{"agent_type":"rubber-duck","name":"aris-native-review-round-{turn}","description":"Independent cross-model review","prompt":{},"model":"{REVIEWER_MODEL}"}}"#,
                js(&prompt)
            );
            log.event(
                "assistant.message",
                &format!(
                    r#"{{"messageId":"{}","model":"{EXECUTOR_MODEL}","content":"","toolRequests":[{{"toolCallId":"{call_id}","name":"task","arguments":{arguments},"type":"function","intentionSummary":"Independent cross-model review"}}],"interactionId":"{interaction}","turnId":"r{turn}","rte":false}}"#,
                    rng.uuid()
                ),
                None,
                rng,
            );
            log.event(
                "tool.execution_start",
                &format!(
                    r#"{{"toolCallId":"{call_id}","toolName":"task","arguments":{arguments},"turnId":"r{turn}","model":"{EXECUTOR_MODEL}"}}"#
                ),
                None,
                rng,
            );
            log.event(
                "subagent.started",
                &format!(
                    r#"{{"toolCallId":"{call_id}","agentName":"rubber-duck","agentDisplayName":"aris-native-review-round-{turn}","agentDescription":"Independent cross-model review","model":"{REVIEWER_MODEL}","taskModelSource":"task_argument","modelSelectionSource":"explicit_override","resumable":false,"agentType":"rubber-duck","executionMode":"sync"}}"#
                ),
                Some(&child),
                rng,
            );
            log.event(
                "subagent.selected",
                r#"{"agentName":"rubber-duck","agentDisplayName":"Rubber Duck Agent","tools":["*"]}"#,
                Some(&child),
                rng,
            );
            log.user_message(rng, &prompt, 0, &interaction, Some(&child));
            let response = "Score: 8/10\nVerdict: ready\n\n1. Weakness: none\nMemory update: none";
            log.event(
                "assistant.message",
                &format!(
                    r#"{{"messageId":"{}","model":"{REVIEWER_MODEL}","content":{},"toolRequests":[],"interactionId":"{interaction}","turnId":"0","rte":false,"parentToolCallId":"{call_id}"}}"#,
                    rng.uuid(),
                    js(response)
                ),
                Some(&child),
                rng,
            );
            log.event(
                "tool.execution_complete",
                &format!(
                    r#"{{"toolCallId":"{call_id}","model":"{EXECUTOR_MODEL}","interactionId":"{interaction}","turnId":"r{turn}","rte":false,"success":true,"result":{{"content":{}}},"toolTelemetry":{{"restrictedProperties":{{"agent_name":"rubber-duck","model":"{REVIEWER_MODEL}","agent_id":"{child}"}}}}}}"#,
                    js(response)
                ),
                None,
                rng,
            );
            log.event(
                "subagent.completed",
                &format!(
                    r#"{{"toolCallId":"{call_id}","agentName":"rubber-duck","agentDisplayName":"aris-native-review-round-{turn}","model":"{REVIEWER_MODEL}","totalToolCalls":0,"totalTokens":110,"durationMs":70}}"#
                ),
                Some(&child),
                rng,
            );
        })
    }

    /// One small event (a turn boundary), as the host writes many times a second.
    pub fn append_tick(&mut self) -> std::io::Result<(u64, u64)> {
        self.calls += 1;
        let turn = self.calls;
        self.append_with(|log, rng| {
            let interaction = rng.uuid();
            log.event(
                "assistant.turn_start",
                &format!(r#"{{"turnId":"t{turn}","interactionId":"{interaction}"}}"#),
                None,
                rng,
            );
        })
    }
}

/// Every log under a layout, as the daemon discovers them, sorted.
pub fn discover(layout: &Layout) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&layout.copilot_root(), &mut out);
    walk(&layout.claude_root(), &mut out);
    out.sort();
    out
}

/// A binding in the SKILL's convention, unique per call.
pub fn binding(rng: &mut Rng) -> String {
    format!("run_{}_{}_r1_review_{}", &iso(now_ms())[..10].replace('-', ""), rng.hex(8), rng.hex(8))
}

/// The file's size on disk now.
pub fn file_len(path: &Path) -> u64 {
    File::open(path).and_then(|f| f.metadata()).map(|m| m.len()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_the_hosts_format() {
        assert_eq!(iso(1_796_001_906_284), "2026-11-30T01:25:06.284Z");
        assert_eq!(iso(HISTORY_START_MS), "2026-09-01T00:00:00.000Z");
    }

    #[test]
    fn lines_are_json_and_chained() {
        let dir = std::env::temp_dir().join(format!("judged-bench-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let mut generator = Generator::new(7, Layout::create(&dir).unwrap());
        let mut live = generator.live_session(50_000).unwrap();
        generator.grow_to(3_000_000).unwrap();
        live.append_marker("run_20261130_a1b2c3d4_r1_review_7e91c4ab").unwrap();
        live.append_review("kX3v9Qm2LrT8wYb5NcJ7dHf1ZsA6uEoP").unwrap();
        let files = discover(&generator.layout);
        assert_eq!(files.len(), generator.written.files.len());
        for file in &files {
            let text = fs::read_to_string(file).unwrap();
            let mut previous: Option<String> = None;
            for line in text.lines() {
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                if file.ends_with("events.jsonl") {
                    assert_eq!(value["parentId"].as_str().map(str::to_owned), previous);
                    previous = value["id"].as_str().map(str::to_owned);
                }
            }
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
