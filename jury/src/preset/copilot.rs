//! Copilot CLI as a juror: `copilot -p`, told to view a private prompt file; who answered
//! is read from the wire responses in its debug log.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Invocation, Invoked, JurorCli, PresetError, RunRecord, mkdir, strings, write_private};
use crate::identity::{Identity, IdentityError, IdentitySource, distinct, json_lines, one, read};

/// GitHub Copilot CLI.
#[derive(Debug)]
pub(super) struct CopilotCli;

/// What starts a Copilot CLI debug-log entry holding a model's response (1.0.102).
const COPILOT_WIRE_RESPONSE: &str = "[rust:model_wire] response";

/// Where the run's record will be: its home (the session holding `marker`, the prompt
/// file's path, in its first prompt) and its debug logs.
#[derive(Debug)]
struct DebugLog {
    home: PathBuf,
    marker: String,
    logs: PathBuf,
}

impl JurorCli for CopilotCli {
    /// `copilot -p`, told to view a 0600 prompt file, with a debug log to read the answering
    /// model from.
    fn invoke(&self, inv: &mut Invocation) -> Result<Invoked, PresetError> {
        let home = match inv.endpoint {
            Some(endpoint) => {
                inv.scratch_home()?;
                inv.env.push(("COPILOT_OFFLINE".into(), "true".into()));
                inv.env.push(("COPILOT_PROVIDER_BASE_URL".into(), endpoint.base_url.clone().into()));
                mkdir(&inv.dir.join("copilot"))?
            }
            None => inv.user_dir("COPILOT_HOME", ".copilot")?,
        };
        inv.env.push(("COPILOT_HOME".into(), home.clone().into()));
        inv.env.push(("COPILOT_MODEL".into(), inv.model.into()));
        let prompt_file = inv.dir.join("prompt.md");
        write_private(&prompt_file, inv.prompt)?;
        inv.stdin.clear();
        let marker = prompt_file.display().to_string();
        let instruction = format!("Read the file {marker} with the view tool and answer exactly as it asks.");
        let mut args = strings(&["-p", &instruction, "-s", "--no-ask-user", "--model", inv.model]);
        args.extend(strings(&["--available-tools=view", &format!("--add-dir={}", inv.dir.display())]));
        // Its session log names only the configured model; the model the server says
        // answered is in its debug log's wire responses (Copilot CLI 1.0.102).
        let logs = mkdir(&inv.dir.join("copilot-logs"))?;
        args.extend(strings(&["--log-level", "debug", &format!("--log-dir={}", logs.display())]));
        Ok(Invoked { program: "copilot".into(), args, record: Box::new(DebugLog { home, marker, logs }) })
    }
}

impl RunRecord for DebugLog {
    fn identity(&self, _stdout: &str, _stderr: &str, _answer_model: Option<&str>) -> Result<Identity, IdentityError> {
        identity(&self.home, &self.marker, &self.logs)
    }
}

/// Copilot CLI: the session whose first prompt holds `marker` (a path unique to this run)
/// shows the run happened; the `model` of the wire responses in its debug log (the preset
/// passes `--log-level debug --log-dir`) names the model the server says answered. The
/// session's own `data.model` is only the model configured (observed with an impostor
/// server, Copilot CLI 1.0.102), so without the debug log the juror is down.
fn identity(copilot_home: &Path, marker: &str, log_dir: &Path) -> Result<Identity, IdentityError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::tests::repo_fixture;

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
        let configured_only = identity(home.path(), "Run ARIS native review round 1", &no_logs);
        assert!(matches!(configured_only, Err(IdentityError::NoRecord(m)) if m.contains("debug log")));
        let other = identity(home.path(), "/tmp/judged-juror-x/prompt.md", &no_logs);
        assert!(matches!(other, Err(IdentityError::NoRecord(_))));
        // Copilot CLI 1.0.102 against a server answering as gpt-IMPOSTOR-9: the debug log's
        // wire response says so (its session log says claude-sonnet-4.6, as configured).
        let logs = home.path().join("logs");
        fs::create_dir_all(&logs).expect("mkdir");
        let log = repo_fixture("jurors/copilot-1.0.102_debug_log_impostor.log");
        fs::copy(log, logs.join("process-1-2.log")).expect("copy");
        let id = identity(home.path(), "Run ARIS native review round 1", &logs).expect("identity");
        assert_eq!(id, Identity { model: "gpt-IMPOSTOR-9".into(), source: IdentitySource::CopilotDebugLog });
    }
}
