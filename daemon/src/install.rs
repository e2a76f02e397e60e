//! `judged install-hooks` / `uninstall-hooks`: register `judge-hook` with the hosts.
//!
//! Claude Code: a `TaskCompleted` command hook (more events on request) merged into the
//! chosen `settings.json`, leaving everything else as it was. Copilot CLI: a
//! `.github/hooks/judged.json` file with an `agentStop` hook, the one Copilot event where
//! an agent declares its work done (Copilot has no task-completion hook). Our entries
//! are recognised by their command naming `judge-hook`, so uninstall removes only them.

use serde_json::{Map, Value, json};
use std::fs;
use std::path::{Path, PathBuf};

/// What marks a hook entry as ours.
const SHIM: &str = "judge-hook";

/// Why a hooks file cannot be changed; each names the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: std::io::Error },
    #[error("{} is not a JSON object; fix or move it, then run again", .0.display())]
    NotAnObject(PathBuf),
    #[error("{}: `{field}` is not {expected}; fix it, then run again", path.display())]
    Field { path: PathBuf, field: String, expected: &'static str },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> InstallError + use<> {
    let path = path.to_owned();
    move |source| InstallError::Io { action, path, source }
}

/// A planned change to one file: its text before and after.
pub struct Plan {
    pub path: PathBuf,
    pub before: Option<String>,
    /// `None` removes the file.
    pub after: Option<String>,
}

impl Plan {
    pub fn changes(&self) -> bool {
        self.before != self.after
    }

    /// A line diff of the planned change, for `--dry-run`.
    pub fn diff(&self) -> String {
        let before: Vec<&str> = self.before.as_deref().map(|t| t.lines().collect()).unwrap_or_default();
        let after: Vec<&str> = self.after.as_deref().map(|t| t.lines().collect()).unwrap_or_default();
        let mut out = format!("--- {}\n+++ {}\n", self.path.display(), self.path.display());
        let common = lcs(&before, &after);
        let (mut i, mut j) = (0, 0);
        for (bi, aj) in common.into_iter().chain([(before.len(), after.len())]) {
            out.extend(before[i..bi].iter().map(|l| format!("-{l}\n")));
            out.extend(after[j..aj].iter().map(|l| format!("+{l}\n")));
            if bi < before.len() {
                out.push_str(&format!(" {}\n", before[bi]));
            }
            (i, j) = (bi + 1, aj + 1);
        }
        out
    }

    /// Write the change, keeping a backup of the file it replaces.
    pub fn apply(&self) -> Result<Option<PathBuf>, InstallError> {
        let backup = match &self.before {
            Some(before) => {
                let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
                let backup = self.path.with_file_name(format!(
                    "{}.judged-backup-{stamp}",
                    self.path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
                ));
                fs::write(&backup, before).map_err(io_error("back up to", &backup))?;
                Some(backup)
            }
            None => None,
        };
        match &self.after {
            Some(after) => {
                if let Some(parent) = self.path.parent() {
                    fs::create_dir_all(parent).map_err(io_error("create", parent))?;
                }
                let temp = self.path.with_extension("judged-tmp");
                fs::write(&temp, after)
                    .and_then(|_| fs::rename(&temp, &self.path))
                    .map_err(io_error("write", &self.path))?;
            }
            None => fs::remove_file(&self.path).map_err(io_error("remove", &self.path))?,
        }
        Ok(backup)
    }
}

/// Longest common subsequence of lines, as index pairs.
fn lcs(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
    let mut table = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            table[i][j] = if a[i] == b[j] { table[i + 1][j + 1] + 1 } else { table[i + 1][j].max(table[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut pairs) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            pairs.push((i, j));
            (i, j) = (i + 1, j + 1);
        } else if table[i + 1][j] >= table[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

fn read_json(path: &Path) -> Result<(Option<String>, Map<String, Value>), InstallError> {
    match fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((None, Map::new())),
        Err(e) => Err(io_error("read", path)(e)),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok((Some(text), map)),
            _ => Err(InstallError::NotAnObject(path.to_owned())),
        },
    }
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("a Value serializes");
    text.push('\n');
    text
}

fn is_ours(group: &Value) -> bool {
    group["hooks"]
        .as_array()
        .is_some_and(|hooks| hooks.iter().any(|h| h["command"].as_str().is_some_and(|c| c.contains(SHIM))))
}

/// Add our command hook for each of `events` to a Claude Code settings file.
pub fn claude_install(
    settings: &Path,
    command: &str,
    events: &[String],
    timeout_seconds: u64,
) -> Result<Plan, InstallError> {
    let (before, mut map) = read_json(settings)?;
    let hooks = map.entry("hooks").or_insert_with(|| json!({}));
    let Some(hooks) = hooks.as_object_mut() else {
        return Err(InstallError::Field { path: settings.to_owned(), field: "hooks".into(), expected: "an object" });
    };
    for event in events {
        let groups = hooks.entry(event.clone()).or_insert_with(|| json!([]));
        let Some(groups) = groups.as_array_mut() else {
            let field = format!("hooks.{event}");
            return Err(InstallError::Field { path: settings.to_owned(), field, expected: "an array" });
        };
        if !groups.iter().any(is_ours) {
            groups.push(json!({"hooks": [{"type": "command", "command": command, "timeout": timeout_seconds}]}));
        }
    }
    Ok(Plan { path: settings.to_path_buf(), after: Some(pretty(&Value::Object(map))), before })
}

/// Remove our hook groups from a Claude Code settings file, and nothing else.
pub fn claude_uninstall(settings: &Path) -> Result<Plan, InstallError> {
    let (before, mut map) = read_json(settings)?;
    if before.is_none() {
        return Ok(Plan { path: settings.to_path_buf(), before: None, after: None });
    }
    if let Some(hooks) = map.get_mut("hooks").and_then(Value::as_object_mut) {
        for groups in hooks.values_mut().filter_map(Value::as_array_mut) {
            groups.retain(|g| !is_ours(g));
        }
        hooks.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
        if hooks.is_empty() {
            map.remove("hooks");
        }
    }
    Ok(Plan { path: settings.to_path_buf(), before, after: Some(pretty(&Value::Object(map))) })
}

/// The Copilot CLI repository hook file.
pub fn copilot_path(project: &Path) -> PathBuf {
    project.join(".github/hooks/judged.json")
}

/// Write the Copilot CLI repository hook file with our `agentStop` hook.
pub fn copilot_install(project: &Path, command: &str, timeout_seconds: u64) -> Result<Plan, InstallError> {
    let path = copilot_path(project);
    let (before, _) = read_json(&path)?;
    let file = json!({"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": command, "timeoutSec": timeout_seconds}]}});
    Ok(Plan { path, before, after: Some(pretty(&file)) })
}

/// Remove the Copilot CLI repository hook file (it holds only our hook).
pub fn copilot_uninstall(project: &Path) -> Result<Plan, InstallError> {
    let path = copilot_path(project);
    let (before, _) = read_json(&path)?;
    Ok(Plan { path, before, after: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_merges_idempotently_and_uninstall_removes_only_ours() {
        let dir = std::env::temp_dir().join(format!("judged-install-{}", std::process::id()));
        let settings = dir.join("settings.json");
        fs::create_dir_all(&dir).unwrap();
        let theirs = json!({"model": "opus", "hooks": {"TaskCompleted": [{"hooks": [{"type": "command", "command": "their-gate"}]}]}});
        fs::write(&settings, pretty(&theirs)).unwrap();

        let plan =
            claude_install(&settings, "/bin/judge-hook --host claude-code", &["TaskCompleted".into()], 120).unwrap();
        assert!(plan.changes());
        assert!(plan.diff().contains("+") && plan.diff().contains("judge-hook"));
        plan.apply().unwrap().expect("a backup of the replaced file");
        let again =
            claude_install(&settings, "/bin/judge-hook --host claude-code", &["TaskCompleted".into()], 120).unwrap();
        assert!(!again.changes(), "installing twice changes nothing");
        let installed: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
        assert_eq!(installed["hooks"]["TaskCompleted"].as_array().unwrap().len(), 2);
        assert_eq!(installed["model"], "opus");

        claude_uninstall(&settings).unwrap().apply().unwrap();
        let restored: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
        assert_eq!(restored, theirs);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn malformed_settings_are_refused_with_the_file_named() {
        let dir = std::env::temp_dir().join(format!("judged-install-bad-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let settings = dir.join("settings.json");
        fs::write(&settings, "[1, 2]").unwrap();
        let error = claude_install(&settings, "judge-hook", &["TaskCompleted".into()], 120).err().unwrap().to_string();
        assert!(error.contains("settings.json is not a JSON object"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
