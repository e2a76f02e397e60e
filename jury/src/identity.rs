//! Who really answered: each juror CLI's own record of the run.
//!
//! A juror's family is derived from the model it was configured with, but a CLI can be
//! rerouted (Codex's "model rerouted" fallback), a gateway can answer with another model,
//! and a wrapper can lie. So after every run the model is read back from what the CLI
//! itself recorded, in the place that carries the model that *answered* where one exists
//! (docs/spec/host-formats.md §G; findings in the crate README):
//!
//! | preset  | record read                                        | carries            |
//! |---------|----------------------------------------------------|--------------------|
//! | codex   | `--json` stdout "model rerouted: A -> X" event      | answered (X)       |
//! | codex   | stderr SSE trace, `response.model`                  | answered (server)  |
//! | codex   | rollout `turn_context.model`: not read              | requested only     |
//! | gemini  | `--output-format json` `stats.models` keys          | answered           |
//! | claude  | transcript `assistant` records, `message.model`     | answered (API)     |
//! | copilot | debug log `[rust:model_wire] response` `model`      | answered (server)  |
//! | copilot | `events.jsonl` `data.model`: not read               | configured only    |
//! | qwen    | `-o json` `result` element, `stats.models` keys     | answered (server)  |
//! | qwen    | `system/init` and `assistant` `model`: not read     | requested only     |
//! | command | the verdict's own `"model"` key                     | what it says       |
//!
//! No record at all is an error: an answer nobody recorded does not count.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::extract;

/// What starts a Copilot CLI debug-log entry holding a model's response (1.0.102).
const COPILOT_WIRE_RESPONSE: &str = "[rust:model_wire] response";

/// What precedes each raw Responses API event in Codex's trace on stderr
/// (`RUST_LOG=codex_api::sse::responses=trace`, Codex CLI 0.169.0).
const CODEX_SSE_EVENT: &str = "codex_api::sse::responses: SSE event: ";

/// Which record named the model that answered (the packet's `identity_source`), so a
/// reader can weigh the check: a CLI's own log, or a `command` juror's word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IdentitySource {
    /// A model-reroute event on Codex's `--json` stdout.
    CodexRerouteEvent,
    /// `response.model` in Codex's trace of the raw Responses API events (stderr).
    CodexSseTrace,
    /// Gemini CLI's `stats.models` in its JSON output.
    GeminiStatsModels,
    /// Claude Code's transcript of the session.
    ClaudeTranscript,
    /// The `model` of the wire responses in Copilot CLI's debug log.
    CopilotDebugLog,
    /// Qwen Code's `stats.models` in the `result` of its `-o json` output.
    QwenStatsModels,
    /// The `model` key of a `command` juror's own answer: declared, not witnessed.
    CommandVerdict,
}

/// The model a juror's own record names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// The model id as the record spells it.
    pub model: String,
    /// Where it was read.
    pub source: IdentitySource,
}

/// Why no single answering model could be read back; the juror is then down.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// The CLI left no record where it should have (what was missing).
    #[error("no record of the run: {0}")]
    NoRecord(&'static str),
    /// The record names more than one model, so who answered is ambiguous.
    #[error("the record names several models that answered: {}", .0.join(", "))]
    SeveralModels(Vec<String>),
    /// A record exists but could not be read.
    #[error("reading {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The read error.
        source: io::Error,
    },
}

/// Codex: a reroute event on `--json` stdout names the model that answered; without one,
/// the `response.model` of the raw Responses API events Codex traces on stderr (the preset
/// sets `RUST_LOG` for it) names the model the server says answered. Its rollout under
/// `CODEX_HOME/sessions/` records only the model asked for (docs/spec/host-formats.md §G), so it is
/// no record of who answered: without an event or a trace, the juror is down.
pub fn codex(stdout: &str, stderr: &str) -> Result<Identity, IdentityError> {
    let events: Vec<Value> = json_lines(stdout).collect();
    let rerouted =
        events.iter().filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "error").find_map(|e| {
            let message = e["item"]["message"].as_str()?;
            let target = message.strip_prefix("model rerouted: ")?.split_once("->")?.1;
            target.split_whitespace().next().map(str::to_owned)
        });
    if let Some(model) = rerouted {
        return Ok(Identity { model, source: IdentitySource::CodexRerouteEvent });
    }
    let traced = distinct(
        stderr
            .lines()
            .filter_map(|l| l.split_once(CODEX_SSE_EVENT).map(|(_, json)| json))
            .filter_map(|json| serde_json::from_str::<Value>(json.trim()).ok())
            .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("response.")))
            .map(|e| e["response"]["model"].clone()),
    );
    if !traced.is_empty() {
        return one(traced, IdentitySource::CodexSseTrace, "the codex SSE trace names no model");
    }
    Err(IdentityError::NoRecord(
        "codex left no record of the model that answered: no reroute event on stdout and no SSE trace on stderr \
         (its rollout names only the model asked for)",
    ))
}

/// Gemini: the keys of `stats.models` in the JSON output are the models that answered.
/// A routing call (`-m auto`) adds a utility model, so main-role models are preferred.
pub fn gemini(stdout: &str) -> Result<Identity, IdentityError> {
    let output = extract::object_with_key(stdout, "stats")
        .map_err(|_| IdentityError::NoRecord("gemini printed no JSON output with stats"))?;
    let models = output.get("stats").and_then(|s| s.get("models")).and_then(Value::as_object);
    let Some(models) = models else { return Err(IdentityError::NoRecord("gemini's stats has no models")) };
    let main: Vec<String> =
        models.iter().filter(|(_, m)| m.pointer("/roles/main").is_some()).map(|(k, _)| k.clone()).collect();
    let names = if main.is_empty() { models.keys().cloned().collect() } else { main };
    one(names, IdentitySource::GeminiStatsModels, "gemini's stats.models is empty")
}

/// Claude Code: assistant records of this session's transcript carry the API's model.
pub fn claude(config_dir: &Path, session_id: &str) -> Result<Identity, IdentityError> {
    let name = format!("{session_id}.jsonl");
    let transcript = find_file(&config_dir.join("projects"), 1, &|n| n == name)?
        .ok_or(IdentityError::NoRecord("claude wrote no transcript for this session"))?;
    let text = read(&transcript)?;
    let models = distinct(
        json_lines(&text)
            .filter(|l| l["type"] == "assistant" && l["message"]["model"] != "<synthetic>")
            .map(|l| l["message"]["model"].clone()),
    );
    one(models, IdentitySource::ClaudeTranscript, "the claude transcript has no assistant message")
}

/// Copilot CLI: the session whose first prompt holds `marker` (a path unique to this run)
/// shows the run happened; the `model` of the wire responses in its debug log (the preset
/// passes `--log-level debug --log-dir`) names the model the server says answered. The
/// session's own `data.model` is only the model configured (observed with an impostor
/// server, Copilot CLI 1.0.102), so without the debug log the juror is down.
pub fn copilot(copilot_home: &Path, marker: &str, log_dir: &Path) -> Result<Identity, IdentityError> {
    let root = copilot_home.join("session-state");
    let sessions = match fs::read_dir(&root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(IdentityError::NoRecord("copilot wrote no session-state"));
        }
        Err(source) => return Err(IdentityError::Io { path: root, source }),
    };
    for entry in sessions.flatten() {
        let path = entry.path().join("events.jsonl");
        let Ok(text) = fs::read_to_string(&path) else { continue };
        let mut lines = json_lines(&text);
        let first_prompt = lines.by_ref().find(|l| l["type"] == "user.message");
        if !first_prompt.is_some_and(|l| l["data"]["content"].as_str().is_some_and(|c| c.contains(marker))) {
            continue;
        }
        if !lines.any(|l| l["type"] == "assistant.message" && l.get("agentId").is_none()) {
            return Err(IdentityError::NoRecord("the copilot session has no assistant message"));
        }
        return one(
            copilot_wire_models(log_dir)?,
            IdentitySource::CopilotDebugLog,
            "copilot's debug log names no model that answered (its session log names only the model configured)",
        );
    }
    Err(IdentityError::NoRecord("copilot wrote no session for this run"))
}

/// The `model` of every model response in the Copilot CLI debug logs under `log_dir`: an
/// entry `<timestamp> [DEBUG] [rust:model_wire] response (…):` followed by `data:` and the
/// response as pretty-printed JSON, up to the next timestamped entry.
fn copilot_wire_models(log_dir: &Path) -> Result<Vec<String>, IdentityError> {
    let entries = match fs::read_dir(log_dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(IdentityError::Io { path: log_dir.to_owned(), source }),
    };
    let mut models = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "log") {
            continue;
        }
        let text = read(&path)?;
        let mut body: Option<String> = None;
        for line in text.lines().chain(std::iter::once("0000-00-00T end")) {
            if !starts_with_timestamp(line) {
                if let Some(body) = body.as_mut() {
                    body.push_str(line);
                    body.push('\n');
                }
                continue;
            }
            if let Some(done) = body.take()
                && let Some(at) = done.find('{')
                && let Some(Ok(response)) = serde_json::Deserializer::from_str(&done[at..]).into_iter::<Value>().next()
            {
                models.push(response["model"].clone());
            }
            if line.contains(COPILOT_WIRE_RESPONSE) {
                body = Some(String::new());
            }
        }
    }
    Ok(distinct(models.into_iter()))
}

/// `YYYY-MM-DDT…`: the start of a log entry.
fn starts_with_timestamp(line: &str) -> bool {
    let b = line.as_bytes();
    b.len() > 10 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[7] == b'-' && b[10] == b'T'
}

/// Qwen Code: the keys of `stats.models` in the `result` element of its `-o json` output are
/// the models the server reported (main-source models preferred, as a background agent's
/// request is counted there too). The `system/init` element and each `assistant` message
/// name only the model asked for (observed with an impostor server, Qwen Code 0.24.4).
///
/// The answer's text is a string inside the same output, so the output is parsed as the
/// JSON array it is, never searched for an object: a model name or a `{"stats": …}` in the
/// answer stays text inside a string. Its session log's `qwen-code.api_response` telemetry
/// names the server's model too, but a user's `general.chatRecording = false` leaves none,
/// so the output the preset asks for is read.
pub fn qwen(stdout: &str) -> Result<Identity, IdentityError> {
    let result =
        qwen_result(stdout).ok_or(IdentityError::NoRecord("qwen printed no `-o json` output with a result"))?;
    let models = result.get("stats").and_then(|s| s.get("models")).and_then(Value::as_object);
    let Some(models) = models else { return Err(IdentityError::NoRecord("qwen's result has no stats.models")) };
    let main: Vec<String> =
        models.iter().filter(|(_, m)| m.pointer("/bySource/main").is_some()).map(|(k, _)| k.clone()).collect();
    let names = if main.is_empty() { models.keys().cloned().collect() } else { main };
    one(names, IdentitySource::QwenStatsModels, "qwen's stats.models is empty")
}

/// The last `result` element of Qwen Code's `-o json` output, which is the whole of its
/// stdout: one line holding a JSON array of messages. Anything else on stdout (the answer
/// printed as text, should `extra_args` ask for another format) is no such output.
pub(crate) fn qwen_result(stdout: &str) -> Option<serde_json::Map<String, Value>> {
    let messages = serde_json::from_str::<Vec<Value>>(stdout.trim()).ok()?;
    messages.into_iter().rev().find_map(|m| match m {
        Value::Object(m) if m.get("type").and_then(Value::as_str) == Some("result") => Some(m),
        _ => None,
    })
}

/// A `command` juror: the `model` key of its verdict, the only record it has.
pub fn command(answer_model: Option<&str>) -> Result<Identity, IdentityError> {
    answer_model
        .map(|m| Identity { model: m.to_owned(), source: IdentitySource::CommandVerdict })
        .ok_or(IdentityError::NoRecord("the command's verdict has no \"model\" key"))
}

fn json_lines(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines().filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
}

/// Distinct non-empty strings, in first-seen order.
fn distinct(values: impl Iterator<Item = Value>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for value in values {
        if let Some(s) = value.as_str().map(str::trim).filter(|s| !s.is_empty())
            && !seen.iter().any(|x| x == s)
        {
            seen.push(s.to_owned());
        }
    }
    seen
}

fn one(mut models: Vec<String>, source: IdentitySource, none: &'static str) -> Result<Identity, IdentityError> {
    match models.len() {
        0 => Err(IdentityError::NoRecord(none)),
        1 => Ok(Identity { model: models.remove(0), source }),
        _ => Err(IdentityError::SeveralModels(models)),
    }
}

fn read(path: &Path) -> Result<String, IdentityError> {
    fs::read_to_string(path).map_err(|source| IdentityError::Io { path: path.to_owned(), source })
}

/// The first file under `dir` (at most `depth` directories down) whose name matches.
fn find_file(dir: &Path, depth: usize, matches: &dyn Fn(&str) -> bool) -> Result<Option<PathBuf>, IdentityError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(IdentityError::Io { path: dir.to_owned(), source }),
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && depth > 0 {
            if let Some(found) = find_file(&path, depth - 1, matches)? {
                return Ok(Some(found));
            }
        } else if !is_dir && entry.file_name().to_str().is_some_and(matches) {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples").join(name);
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn repo_fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures").join(rel)
    }

    #[test]
    fn codex_without_a_reroute_event_or_a_trace_has_no_record_of_who_answered() {
        let stdout = sample("codex-exec_json_stdout_echo.jsonl");
        let err = codex(&stdout, "").expect_err("the rollout does not count");
        assert!(matches!(err, IdentityError::NoRecord(m) if m.contains("no SSE trace")));
        assert!(matches!(codex("", ""), Err(IdentityError::NoRecord(_))));
    }

    #[test]
    fn codex_reroute_event_names_the_model_that_answered() {
        let stdout = sample("codex-exec_json_stdout_reroute.jsonl");
        let id = codex(&stdout, "").expect("identity");
        assert_eq!(id, Identity { model: "gpt-IMPOSTOR-9".into(), source: IdentitySource::CodexRerouteEvent });
    }

    #[test]
    fn codex_sse_trace_names_the_server_model_the_rollout_does_not() {
        // Codex CLI 0.169.0 against a server answering gpt-5.4-mini as gemini-2.5-flash,
        // without an `openai-model` header: no reroute event, the rollout says gpt-5.4-mini.
        let read = |name: &str| fs::read_to_string(repo_fixture(&format!("jurors/{name}"))).expect("fixture");
        let stdout = read("codex-0.169.0_json_stdout_impostor_no_header.jsonl");
        let stderr = read("codex-0.169.0_sse_trace_impostor.stderr");
        let id = codex(&stdout, &stderr).expect("identity");
        assert_eq!(id, Identity { model: "gemini-2.5-flash".into(), source: IdentitySource::CodexSseTrace });
        let two = format!(
            "{stderr}\nX codex_api::sse::responses: SSE event: {{\"type\":\"response.completed\",\"response\":{{\"model\":\"gpt-5.4-mini\"}}}}"
        );
        assert!(matches!(codex(&stdout, &two), Err(IdentityError::SeveralModels(_))));
    }

    #[test]
    fn gemini_stats_models_name_the_server_model_not_the_requested_one() {
        let json = sample("gemini-output_format_json_server_reports_other_model.json");
        let id = gemini(&format!("Loaded cached credentials.\n{json}")).expect("identity");
        assert_eq!(id, Identity { model: "gemini-IMPOSTOR-9".into(), source: IdentitySource::GeminiStatsModels });
        // The chat log names the requested model only: it is not a record of who answered.
        assert!(sample("gemini-chat_session_server_reports_other_model.jsonl").contains("\"model\":\"juror-gem-a\""));
        assert!(matches!(gemini("{\"response\":\"x\"}"), Err(IdentityError::NoRecord(_))));
        let two = r#"{"stats":{"models":{"gemini-a":{"roles":{"main":{}}},"gemini-router":{"roles":{"utility_router":{}}}}}}"#;
        assert_eq!(gemini(two).expect("main role").model, "gemini-a");
        let several = r#"{"stats":{"models":{"gemini-a":{},"gpt-5":{}}}}"#;
        assert!(matches!(gemini(several), Err(IdentityError::SeveralModels(m)) if m == ["gemini-a", "gpt-5"]));
    }

    #[test]
    fn claude_transcript_message_model() {
        let session = "70e11cfc-c3fb-426c-9dfc-374e15ffb0af";
        let config = tempfile::tempdir().expect("tempdir");
        let project = config.path().join("projects/-tmp-judged-fixture-claude-marker-challenge-project");
        fs::create_dir_all(&project).expect("mkdir");
        let fixture = repo_fixture(&format!("claude-code-2.1.328/marker-challenge/{session}.jsonl"));
        fs::copy(fixture, project.join(format!("{session}.jsonl"))).expect("copy");
        let id = claude(config.path(), session).expect("identity");
        assert_eq!(id, Identity { model: "claude-sonnet-4-6".into(), source: IdentitySource::ClaudeTranscript });
        assert!(matches!(claude(config.path(), "other-session"), Err(IdentityError::NoRecord(_))));
    }

    #[test]
    fn copilot_session_found_by_its_prompt_marker_and_root_model_read() {
        let home = tempfile::tempdir().expect("tempdir");
        for (dir, fixture) in [("a", "copilot-1.0.102/cross-family-ok"), ("b", "copilot-1.0.102/same-family")] {
            let session = home.path().join("session-state").join(dir);
            fs::create_dir_all(&session).expect("mkdir");
            fs::copy(repo_fixture(fixture).join("events.jsonl"), session.join("events.jsonl")).expect("copy");
        }
        // Both fixtures share the prompt; the sub-agent's gpt-5.4 messages are not the root's.
        let no_logs = home.path().join("no-logs");
        let configured_only = copilot(home.path(), "Run ARIS native review round 1", &no_logs);
        assert!(matches!(configured_only, Err(IdentityError::NoRecord(m)) if m.contains("debug log")));
        let other = copilot(home.path(), "/tmp/judged-juror-x/prompt.md", &no_logs);
        assert!(matches!(other, Err(IdentityError::NoRecord(_))));
        // Copilot CLI 1.0.102 against a server answering as gpt-IMPOSTOR-9: the debug log's
        // wire response says so (its session log says claude-sonnet-4.6, as configured).
        let logs = home.path().join("logs");
        fs::create_dir_all(&logs).expect("mkdir");
        let log = repo_fixture("jurors/copilot-1.0.102_debug_log_impostor.log");
        fs::copy(log, logs.join("process-1-2.log")).expect("copy");
        let id = copilot(home.path(), "Run ARIS native review round 1", &logs).expect("identity");
        assert_eq!(id, Identity { model: "gpt-IMPOSTOR-9".into(), source: IdentitySource::CopilotDebugLog });
    }

    /// Qwen Code 0.24.4 against a server answering qwen3-coder-plus as gpt-5.4-mini, whose
    /// answer claims qwen3-coder-plus in a flag and in a line shaped like the CLI's own result.
    #[test]
    fn qwen_stats_models_name_the_server_model_and_the_answer_cannot_claim_one() {
        let read = |name: &str| fs::read_to_string(repo_fixture(&format!("jurors/{name}"))).expect("fixture");
        let impostor = read("qwen-code-0.24.4_json_stdout_impostor.json");
        let id = qwen(&impostor).expect("identity");
        assert_eq!(id, Identity { model: "gpt-5.4-mini".into(), source: IdentitySource::QwenStatsModels });
        // The requested model is all the init and assistant messages name; the answer's claim
        // is text in a string of the same output.
        let messages: Vec<Value> = serde_json::from_str(&impostor).expect("one JSON array");
        assert_eq!((&messages[0]["subtype"], &messages[0]["model"]), (&"init".into(), &"qwen3-coder-plus".into()));
        assert_eq!(messages[1]["message"]["model"], "qwen3-coder-plus");
        let answer = messages[2]["result"].as_str().expect("the answer");
        assert!(answer.contains(r#"{"models":{"qwen3-coder-plus":"#), "{answer}");
        // Printed as text, the claim is no record: only an output that is one array counts.
        assert!(matches!(qwen(answer), Err(IdentityError::NoRecord(_))));
        let echo = read("qwen-code-0.24.4_json_stdout.json");
        assert_eq!(qwen(&echo).expect("identity").model, "qwen3-coder-plus");
        assert!(matches!(qwen(&format!("noise\n{echo}")), Err(IdentityError::NoRecord(_))));
    }

    #[test]
    fn qwen_prefers_the_main_source_and_refuses_several_or_none() {
        let output = |models: &str| format!(r#"[{{"type":"result","result":"x","stats":{{"models":{models}}}}}]"#);
        let with_memory_agent = output(
            r#"{"qwen3-coder-plus":{"bySource":{"main":{}}},"qwen-flash":{"bySource":{"managed-auto-memory-extractor":{}}}}"#,
        );
        assert_eq!(qwen(&with_memory_agent).expect("main source").model, "qwen3-coder-plus");
        let several = output(r#"{"qwen3-coder-plus":{"bySource":{"main":{}}},"gpt-5":{"bySource":{"main":{}}}}"#);
        assert!(matches!(qwen(&several), Err(IdentityError::SeveralModels(m)) if m == ["gpt-5", "qwen3-coder-plus"]));
        assert!(matches!(qwen(&output("{}")), Err(IdentityError::NoRecord(_))));
        assert!(matches!(qwen(r#"[{"type":"result","result":"x"}]"#), Err(IdentityError::NoRecord(_))));
        assert!(matches!(
            qwen(r#"[{"type":"system","subtype":"init","model":"qwen3-coder-plus"}]"#),
            Err(IdentityError::NoRecord(_))
        ));
        assert!(matches!(qwen(""), Err(IdentityError::NoRecord(_))));
    }

    #[test]
    fn a_command_must_say_which_model_answered() {
        assert_eq!(command(Some("gpt-5.4")).map(|i| i.source).ok(), Some(IdentitySource::CommandVerdict));
        assert!(matches!(command(None), Err(IdentityError::NoRecord(_))));
    }
}
