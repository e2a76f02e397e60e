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

pub(crate) fn json_lines(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines().filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
}

/// Distinct non-empty strings, in first-seen order.
pub(crate) fn distinct(values: impl Iterator<Item = Value>) -> Vec<String> {
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

pub(crate) fn one(
    mut models: Vec<String>,
    source: IdentitySource,
    none: &'static str,
) -> Result<Identity, IdentityError> {
    match models.len() {
        0 => Err(IdentityError::NoRecord(none)),
        1 => Ok(Identity { model: models.remove(0), source }),
        _ => Err(IdentityError::SeveralModels(models)),
    }
}

pub(crate) fn read(path: &Path) -> Result<String, IdentityError> {
    fs::read_to_string(path).map_err(|source| IdentityError::Io { path: path.to_owned(), source })
}

/// The first file under `dir` (at most `depth` directories down) whose name matches.
pub(crate) fn find_file(
    dir: &Path,
    depth: usize,
    matches: &dyn Fn(&str) -> bool,
) -> Result<Option<PathBuf>, IdentityError> {
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
