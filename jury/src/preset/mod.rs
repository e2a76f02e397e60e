//! How each juror CLI is run, and where its answer and its record are read afterwards.
//!
//! Every run gets a private scratch directory (0700, removed when the [`Prepared`] is
//! dropped) for its temp files and, when the caller gives a [`ModelEndpoint`], for the
//! CLI's whole home/config directory and its `HOME` and XDG base directories (where
//! Copilot CLI unpacks ~235 MB and writes a device id), so a test or an offline setup can
//! point the CLI at a local server without touching the user's. Without an endpoint the CLI keeps the user's
//! config directory (that is where its login lives), which is set explicitly in the child's
//! environment so that the record is read where the CLI wrote it. The prompt is never in
//! argv: it goes on stdin, or for Copilot CLI (whose `-p` takes the prompt as an argument)
//! in a 0600 file the argument points to. Flags and environment: docs/spec/host-formats.md §G and the
//! real-host tests.

use std::ffi::OsString;
use std::fs::{self, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tempfile::TempDir;

use crate::config::{Juror, Preset};
use crate::identity::{Identity, IdentityError};
use crate::run::Spawn;

mod claude;
mod codex;
mod command;
mod copilot;
mod gemini;
mod qwen;

/// The XDG base directories, each set to its default under a scratch `HOME`.
const XDG_DIRS: [(&str, &str); 4] = [
    ("XDG_CACHE_HOME", ".cache"),
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_STATE_HOME", ".local/state"),
];

/// A model server to use instead of the CLI's provider (tests, offline setups). A
/// `command` juror ignores it: its `env` is where it is pointed at a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelEndpoint {
    /// Codex: the Responses API root (`http://127.0.0.1:PORT/v1`); Gemini and Claude Code:
    /// the server root; Copilot CLI and Qwen Code: the chat-completions root (`…/v1`).
    pub base_url: String,
    /// Sent by Codex, Gemini, Claude Code and Qwen Code; Copilot CLI's offline mode needs none.
    pub api_key: String,
}

/// Why a juror's run could not be set up; the juror is down before it starts.
#[derive(Debug, thiserror::Error)]
pub enum PresetError {
    /// The private scratch directory could not be created.
    #[error("creating the juror's scratch directory: {0}")]
    Scratch(#[source] io::Error),
    /// A config or prompt file for the CLI could not be written.
    #[error("writing {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The write error.
        source: io::Error,
    },
    /// The CLI's config directory defaults under `$HOME`, which is unset (the variable
    /// that would name it instead).
    #[error("HOME is not set, so {0} cannot be found; set {0} in the juror's `env`")]
    NoHome(&'static str),
}

/// A juror run ready to spawn, and how to read it afterwards.
#[derive(Debug)]
pub struct Prepared {
    /// The process to run.
    pub spawn: Spawn,
    record: Box<dyn RunRecord>,
    /// Kept alive until the record has been read.
    _scratch: TempDir,
}

/// Build the invocation of `juror` for `prompt`, about the work of `project`.
///
/// A juror CLI runs in an empty directory of its own, never in the project: a CLI loads
/// what it finds where it runs (instruction files such as `CLAUDE.md` or `AGENTS.md`, its
/// project settings and their hooks), which would let the author under judgment talk its
/// jury round, or run commands as whoever runs the jury (a witness account, next to its
/// key). The work reaches it in the prompt. A `command` juror, a program of whoever
/// configured it, runs in the project.
pub fn prepare(
    juror: &Juror,
    prompt: &str,
    project: &Path,
    endpoint: Option<&ModelEndpoint>,
) -> Result<Prepared, PresetError> {
    let scratch = tempfile::Builder::new()
        .prefix("judged-juror-")
        .permissions(Permissions::from_mode(0o700))
        .tempdir()
        .map_err(PresetError::Scratch)?;
    let dir = scratch.path().to_owned();
    let config = &juror.config;
    let model = config.model.as_str();
    let tmp = mkdir(&dir.join("tmp"))?;
    let work = mkdir(&dir.join("work"))?;
    let mut env: Vec<(String, OsString)> = config.env.iter().map(|(k, v)| (k.clone(), v.into())).collect();
    env.push(("TMPDIR".into(), tmp.into()));
    let mut stdin = prompt.as_bytes().to_vec();
    let mut invocation = Invocation { juror, prompt, dir: &dir, model, endpoint, env: &mut env, stdin: &mut stdin };
    let cli = cli(config.preset);
    let Invoked { program, mut args, record } = cli.invoke(&mut invocation)?;
    args.extend(config.extra_args.iter().map(|arg| arg.replace("{model}", model)));
    args.extend(strings(cli.last_args()));
    let spawn = Spawn {
        program: config.bin.clone().unwrap_or(program),
        args,
        env_remove: config.env_strip.clone(),
        env_set: env,
        cwd: if cli.runs_in_project() { project.to_owned() } else { work },
        stdin,
        out_of_reach: Vec::new(),
    };
    Ok(Prepared { spawn, record, _scratch: scratch })
}

/// What one juror's invocation is built from: its scratch directory, and the environment
/// and stdin the preset adds to.
struct Invocation<'a> {
    juror: &'a Juror,
    prompt: &'a str,
    dir: &'a Path,
    model: &'a str,
    endpoint: Option<&'a ModelEndpoint>,
    env: &'a mut Vec<(String, OsString)>,
    stdin: &'a mut Vec<u8>,
}

impl Invocation<'_> {
    /// A CLI's own config directory (`CODEX_HOME`, …) when no endpoint gives it a scratch one.
    fn user_dir(&self, var: &'static str, default: &str) -> Result<PathBuf, PresetError> {
        config_dir(self.juror, var, default)
    }

    /// With an endpoint, the CLI's `HOME` and XDG base directories in the scratch
    /// directory: what it writes beside its config (caches, a device id) is not the user's.
    fn scratch_home(&mut self) -> Result<PathBuf, PresetError> {
        let home = mkdir(&self.dir.join("home"))?;
        self.env.push(("HOME".into(), home.clone().into()));
        for (var, under) in XDG_DIRS {
            self.env.push((var.into(), home.join(under).into()));
        }
        Ok(home)
    }
}

impl Prepared {
    /// The answer text in the CLI's output (see [`RunRecord::answer`]), trimmed.
    pub fn answer(&self, stdout: &str) -> String {
        self.record.answer(stdout).unwrap_or_default().trim().to_owned()
    }

    /// What a run that failed said, for the reason its juror is down: the error the CLI's
    /// own output names (see [`RunRecord::error_message`]), otherwise stderr, or stdout when
    /// stderr is blank.
    pub fn failure(&self, stdout: &[u8], stderr: &[u8]) -> String {
        if let Some(message) = self.record.error_message(&String::from_utf8_lossy(stdout)) {
            return message;
        }
        let text = if stderr.iter().all(u8::is_ascii_whitespace) { stdout } else { stderr };
        String::from_utf8_lossy(text).trim().to_owned()
    }

    /// Who answered, from the CLI's own record (see [`crate::identity`]): its output
    /// (Codex's SSE trace is on stderr) or the files it wrote.
    pub fn identity(&self, stdout: &str, stderr: &str, answer_model: Option<&str>) -> Result<Identity, IdentityError> {
        self.record.identity(stdout, stderr, answer_model)
    }
}

/// One juror CLI: how it is run headless on a prompt. Every fact about running one CLI is
/// in its own file here; [`cli`] is the registry.
trait JurorCli: Sync {
    /// Its program (unless the juror's `bin` names another), its arguments before the
    /// juror's `extra_args`, and where its record of the run will be.
    fn invoke(&self, invocation: &mut Invocation) -> Result<Invoked, PresetError>;

    /// Arguments after the juror's `extra_args`.
    fn last_args(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether it runs in the project rather than in an empty directory of its own.
    fn runs_in_project(&self) -> bool {
        false
    }
}

/// A juror CLI's run, about to be spawned.
struct Invoked {
    program: PathBuf,
    args: Vec<String>,
    record: Box<dyn RunRecord>,
}

/// Where a run's answer, its failure and who answered are read afterwards.
trait RunRecord: std::fmt::Debug + Send + Sync {
    /// The answer in its stdout (all of it, unless the CLI wraps its answer).
    fn answer(&self, stdout: &str) -> Option<String> {
        Some(stdout.to_owned())
    }

    /// The error its own output names for a failed run, where stderr is not the place.
    fn error_message(&self, _stdout: &str) -> Option<String> {
        None
    }

    /// Who answered, from its own record of the run.
    fn identity(&self, stdout: &str, stderr: &str, answer_model: Option<&str>) -> Result<Identity, IdentityError>;
}

/// The juror CLI of `preset`: the registry.
fn cli(preset: Preset) -> &'static dyn JurorCli {
    match preset {
        Preset::Codex => &codex::Codex,
        Preset::Gemini => &gemini::Gemini,
        Preset::Claude => &claude::ClaudeCode,
        Preset::Copilot => &copilot::CopilotCli,
        Preset::Qwen => &qwen::QwenCode,
        Preset::Command => &command::Command,
    }
}

/// The user's config directory of a CLI: the juror's `env`, the daemon's environment, or
/// `$HOME/<default>`.
fn config_dir(juror: &Juror, var: &'static str, default: &str) -> Result<PathBuf, PresetError> {
    if let Some(dir) = juror.config.env.get(var) {
        return Ok(dir.into());
    }
    if let Some(dir) = std::env::var_os(var).filter(|d| !d.is_empty()) {
        return Ok(dir.into());
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| Path::new(&h).join(default))
        .ok_or(PresetError::NoHome(var))
}

fn mkdir(path: &Path) -> Result<PathBuf, PresetError> {
    fs::create_dir_all(path).map_err(|source| PresetError::Write { path: path.to_owned(), source })?;
    Ok(path.to_owned())
}

/// Create `path` readable by the owner only, and fail rather than reuse an existing file.
fn write_private(path: &Path, text: &str) -> Result<(), PresetError> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|source| PresetError::Write { path: path.to_owned(), source })
}

fn strings(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| (*s).to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::Value;

    use super::codex::{KEY_VAR, SSE_TRACE};
    use super::*;
    use crate::config::JurorConfig;

    /// A juror CLI's output kept in `tests/samples`.
    pub(super) fn sample(name: &str) -> String {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples").join(name);
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// A file of the repository's `fixtures`.
    pub(super) fn repo_fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures").join(rel)
    }

    const PROMPT: &str = "SECRET PROMPT TEXT";

    fn juror(preset: Preset, model: &str) -> Juror {
        let config = JurorConfig {
            name: "j".into(),
            preset,
            model: model.into(),
            bin: None,
            extra_args: vec!["--extra".into()],
            env: BTreeMap::from([("FROM_CONFIG".to_owned(), "1".to_owned())]),
            env_strip: vec!["OPENAI_API_KEY".into()],
            timeout_seconds: None,
            command: (preset == Preset::Command).then(|| vec!["judge".into(), "--model={model}".into()]),
            price: None,
        };
        Juror { config, family: "openai" }
    }

    fn endpoint() -> ModelEndpoint {
        ModelEndpoint { base_url: "http://127.0.0.1:9/v1".into(), api_key: "k".into() }
    }

    fn env<'a>(p: &'a Prepared, name: &str) -> Option<&'a OsString> {
        p.spawn.env_set.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    fn prepared(preset: Preset, endpoint: Option<&ModelEndpoint>) -> Prepared {
        prepare(&juror(preset, "gpt-5.4"), PROMPT, Path::new("/project"), endpoint).expect("prepared")
    }

    #[test]
    fn the_prompt_is_never_in_argv() {
        for preset in [Preset::Codex, Preset::Gemini, Preset::Claude, Preset::Copilot, Preset::Qwen, Preset::Command] {
            let p = prepared(preset, Some(&endpoint()));
            assert!(!p.spawn.argv().iter().any(|a| a.contains(PROMPT)), "{preset:?}");
            // A CLI runs where nothing of the project is; a command juror in the project.
            if preset == Preset::Command {
                assert_eq!(p.spawn.cwd, Path::new("/project"));
            } else {
                assert!(!p.spawn.cwd.starts_with("/project"), "{preset:?}");
                assert_eq!(std::fs::read_dir(&p.spawn.cwd).map(Iterator::count).ok(), Some(0), "{preset:?}");
            }
            assert_eq!(p.spawn.env_remove, ["OPENAI_API_KEY"]);
            assert_eq!(env(&p, "FROM_CONFIG").map(std::ffi::OsString::as_os_str), Some("1".as_ref()));
            assert!(p.spawn.args.contains(&"--extra".to_owned()), "{preset:?}");
        }
    }

    #[test]
    fn codex_argv_reads_stdin_and_gets_provider_flags_only_with_an_endpoint() {
        let with = prepared(Preset::Codex, Some(&endpoint()));
        assert_eq!(with.spawn.program, Path::new("codex"));
        assert_eq!(
            with.spawn.args[..7],
            strings(&["exec", "--json", "--skip-git-repo-check", "-s", "read-only", "--disable", "plugins"])
        );
        assert_eq!(with.spawn.args.last().map(String::as_str), Some("-"));
        assert_eq!(with.spawn.stdin, PROMPT.as_bytes());
        assert!(with.spawn.args.iter().any(|a| a.contains(r#"base_url="http://127.0.0.1:9/v1""#)));
        assert_eq!(env(&with, KEY_VAR).map(std::ffi::OsString::as_os_str), Some("k".as_ref()));
        let home = env(&with, "CODEX_HOME").expect("CODEX_HOME");
        assert!(Path::new(home).starts_with(std::env::temp_dir()));
        assert_eq!(env(&with, "RUST_LOG").map(std::ffi::OsString::as_os_str), Some(SSE_TRACE.as_ref()));
        let mut j = juror(Preset::Codex, "gpt-5.4");
        j.config.env.insert("RUST_LOG".into(), "warn".into());
        let p = prepare(&j, PROMPT, Path::new("/"), None).expect("prepared");
        let rust_log = format!("warn,{SSE_TRACE}");
        assert_eq!(env(&p, "RUST_LOG").map(std::ffi::OsString::as_os_str), Some(rust_log.as_ref()));

        let without = prepared(Preset::Codex, None);
        assert!(!without.spawn.args.iter().any(|a| a.contains("model_provider")));
        assert!(env(&without, KEY_VAR).is_none());
    }

    #[test]
    fn gemini_gets_the_headless_settings_with_an_endpoint() {
        let p = prepared(Preset::Gemini, Some(&endpoint()));
        assert_eq!(
            p.spawn.args,
            strings(&["-m", "gpt-5.4", "--approval-mode", "plan", "--output-format", "json", "--extra"])
        );
        let home = PathBuf::from(env(&p, "GEMINI_CLI_HOME").expect("GEMINI_CLI_HOME"));
        assert_eq!(env(&p, "HOME").map(PathBuf::from), Some(home.clone()));
        let settings_path = home.join(".gemini/settings.json");
        let settings: Value =
            serde_json::from_str(&fs::read_to_string(&settings_path).expect("settings")).expect("json");
        assert_eq!(settings["security"]["auth"]["selectedType"], "gemini-api-key");
        assert_eq!(settings["general"]["maxAttempts"], 1);
        assert_eq!(fs::metadata(&settings_path).expect("meta").permissions().mode() & 0o777, 0o600);
        assert_eq!(env(&p, "GEMINI_CLI_TRUST_WORKSPACE").map(std::ffi::OsString::as_os_str), Some("true".as_ref()));
        assert!(env(&prepared(Preset::Gemini, None), "GEMINI_CLI_HOME").is_none());
    }

    /// With an endpoint, nothing a CLI writes beside its config reaches the user's home
    /// (Copilot CLI 1.0.102 unpacks ~235 MB under `$XDG_CACHE_HOME` or `~/.cache`).
    #[test]
    fn with_an_endpoint_every_cli_gets_a_scratch_home_and_xdg_dirs() {
        for preset in [Preset::Codex, Preset::Gemini, Preset::Claude, Preset::Copilot, Preset::Qwen] {
            let p = prepared(preset, Some(&endpoint()));
            let scratch = p._scratch.path();
            let home = PathBuf::from(env(&p, "HOME").unwrap_or_else(|| panic!("{preset:?}: no HOME")));
            assert!(home.starts_with(scratch), "{preset:?}: HOME {}", home.display());
            for (var, under) in XDG_DIRS {
                assert_eq!(env(&p, var).map(PathBuf::from), Some(home.join(under)), "{preset:?}: {var}");
            }
            assert!(env(&prepared(preset, None), "HOME").is_none(), "{preset:?}: the user's HOME without one");
        }
    }

    /// Qwen Code reads the prompt on stdin, runs read-only (plan mode) with nothing of the
    /// project's or the user's setup (safe mode), and gets the endpoint in the variables
    /// that win over any provider in its settings.
    #[test]
    fn qwen_runs_read_only_in_safe_mode_with_the_endpoint_in_its_environment() {
        let p = prepared(Preset::Qwen, Some(&endpoint()));
        assert_eq!(p.spawn.program, Path::new("qwen"));
        assert_eq!(
            p.spawn.args,
            strings(&["-m", "gpt-5.4", "-o", "json", "--approval-mode", "plan", "--safe-mode", "--extra"])
        );
        assert_eq!(p.spawn.stdin, PROMPT.as_bytes());
        let var = |name: &str| env(&p, name).map(|v| v.to_string_lossy().into_owned());
        assert_eq!(var("OPENAI_BASE_URL").as_deref(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(var("OPENAI_API_KEY").as_deref(), Some("k"));
        assert_eq!(var("OPENAI_MODEL").as_deref(), Some("gpt-5.4"));
        let home = PathBuf::from(var("HOME").expect("HOME"));
        let qwen_home = home.join(".qwen");
        assert_eq!(var("QWEN_HOME").map(PathBuf::from), Some(qwen_home.clone()));
        assert_eq!(var("QWEN_RUNTIME_DIR").map(PathBuf::from), Some(qwen_home.clone()));
        let settings_path = qwen_home.join("settings.json");
        let settings: Value =
            serde_json::from_str(&fs::read_to_string(&settings_path).expect("settings")).expect("json");
        assert_eq!(settings["security"]["auth"]["selectedType"], "openai");
        assert_eq!(settings["privacy"]["usageStatisticsEnabled"], false);
        assert_eq!(fs::metadata(&settings_path).expect("meta").permissions().mode() & 0o777, 0o600);
        // Without an endpoint it keeps the user's setup, where its login lives.
        let user = prepared(Preset::Qwen, None);
        for name in ["QWEN_HOME", "OPENAI_BASE_URL", "OPENAI_API_KEY", "HOME"] {
            assert!(env(&user, name).is_none(), "{name}");
        }
    }

    #[test]
    fn a_failed_run_is_told_by_its_error_and_qwen_code_by_its_result() {
        let qwen = prepared(Preset::Qwen, None);
        // Qwen Code 0.24.4 on an unreachable endpoint: exit 1, the error in the result.
        let stdout = br#"[{"type":"system","subtype":"init","model":"m"},{"type":"result","subtype":"error_during_execution","is_error":true,"error":{"message":"[API Error: Connection error. (cause: fetch failed)]"}}]"#;
        let notices = "\u{26a0} SAFE MODE \u{2014} all customizations disabled\nRipgrep not available\n{\"error\": {}}";
        assert_eq!(qwen.failure(stdout, notices.as_bytes()), "[API Error: Connection error. (cause: fetch failed)]");
        assert_eq!(qwen.failure(b"", notices.as_bytes()), notices);
        let codex = prepared(Preset::Codex, None);
        assert_eq!(codex.failure(b"out", b" rate limited \n"), "rate limited");
        assert_eq!(codex.failure(b" out \n", b"\n"), "out");
    }

    #[test]
    fn claude_gets_a_fresh_session_id_and_its_transcript_is_read_as_its_record() {
        let p = prepared(Preset::Claude, Some(&endpoint()));
        let session_id = |p: &Prepared| {
            let at = p.spawn.args.iter().position(|a| a == "--session-id").expect("flag");
            p.spawn.args[at + 1].clone()
        };
        let session = session_id(&p);
        assert_eq!((session.len(), &session[14..15]), (36, "4"));
        assert_ne!(session, session_id(&prepared(Preset::Claude, Some(&endpoint()))));
        assert_eq!(p.spawn.stdin, PROMPT.as_bytes());
        let config_dir = PathBuf::from(env(&p, "CLAUDE_CONFIG_DIR").expect("CLAUDE_CONFIG_DIR"));
        let project = mkdir(&config_dir.join("projects/-scratch")).expect("mkdir");
        let answered = r#"{"type":"assistant","message":{"model":"claude-x","content":[]}}"#;
        fs::write(project.join(format!("{session}.jsonl")), answered).expect("transcript");
        assert_eq!(p.identity("", "", None).expect("identity").model, "claude-x");
    }

    #[test]
    fn copilot_reads_the_prompt_from_a_private_file() {
        let p = prepared(Preset::Copilot, Some(&endpoint()));
        assert!(p.spawn.stdin.is_empty());
        let scratch = p._scratch.path().to_owned();
        let prompt_file = scratch.join("prompt.md");
        assert_eq!(fs::read_to_string(&prompt_file).expect("prompt file"), PROMPT);
        assert_eq!(fs::metadata(&prompt_file).expect("meta").permissions().mode() & 0o777, 0o600);
        assert!(p.spawn.args[1].contains(&prompt_file.display().to_string()));
        assert_eq!(fs::metadata(&scratch).expect("meta").permissions().mode() & 0o777, 0o700);
        drop(p);
        assert!(!scratch.exists(), "the scratch directory outlived the run");
    }

    #[test]
    fn command_substitutes_the_model_and_bin_overrides_the_program() {
        let p = prepared(Preset::Command, None);
        assert_eq!(
            (p.spawn.program.as_path(), p.spawn.args.as_slice()),
            (Path::new("judge"), &strings(&["--model=gpt-5.4", "--extra"])[..])
        );
        let mut j = juror(Preset::Command, "gpt-5.4");
        j.config.bin = Some("/opt/judge".into());
        let p = prepare(&j, PROMPT, Path::new("/"), None).expect("prepared");
        assert_eq!(p.spawn.program, Path::new("/opt/judge"));
    }

    #[test]
    fn answers_are_read_where_each_cli_prints_them() {
        let codex_out = sample("codex-exec_json_stdout_reroute.jsonl");
        assert_eq!(
            prepared(Preset::Codex, None).answer(&codex_out),
            r#"{"verdict":"PASS","confidence":90,"reasoning":"ok"}"#
        );
        let gemini_out = sample("gemini-output_format_json_server_reports_other_model.json");
        assert_eq!(
            prepared(Preset::Gemini, None).answer(&gemini_out),
            r#"{"verdict":"PASS","confidence":90,"reasoning":"ok"}"#
        );
        let qwen_out = fs::read_to_string(repo_fixture("jurors/qwen-code-0.24.4_json_stdout.json")).expect("fixture");
        assert_eq!(
            prepared(Preset::Qwen, None).answer(&qwen_out),
            r#"{"verdict":"pass","confidence":92,"flags":["scripted juror"]}"#
        );
        assert_eq!(prepared(Preset::Qwen, None).answer(r#"{"result":"not an array"}"#), "");
        assert_eq!(prepared(Preset::Command, None).answer("  text \n"), "text");
        assert_eq!(prepared(Preset::Codex, None).answer("not json"), "");
    }
}
