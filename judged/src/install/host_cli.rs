//! What each host's own CLI says about judged: whether the plugin (Claude Code, Copilot
//! CLI, Codex CLI) or the extension (Gemini CLI) is installed and enabled, and which hooks
//! Codex CLI loads and trusts.
//!
//! Each host is asked with its own listing command, as a user would ask it (the JSON forms
//! of `claude plugin list`, `copilot plugin list`, `codex plugin list`, `gemini extensions
//! list`, and `codex app-server`'s `hooks/list`), never by reading its private files:
//! the host's answer is what it will load. Every question runs with no terminal (stdin
//! closed) and under a deadline, so a host that prompts or hangs cannot hang judged.

use judged_core::event::Host;
use judged_jury::run::{Exit, Outcome, Spawn};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long one listing may take: each answers in a second or two offline.
pub const LISTING_DEADLINE: Duration = Duration::from_secs(30);
/// The most of a listing's output read (Gemini CLI's includes every skill's whole text).
const OUTPUT_CAP: usize = 4 << 20;

/// Why a host could not say what it has installed; each names the command.
#[derive(Debug, thiserror::Error)]
pub enum HostCliError {
    #[error("cannot run `{command}`: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("`{command}` did not finish within {seconds} s, so it was stopped")]
    Deadline { command: String, seconds: u64 },
    #[error("`{command}` failed ({exit}): {said}")]
    Failed { command: String, exit: String, said: String },
    #[error("`{command}` printed what judged cannot read: {source}")]
    Unreadable { command: String, source: serde_json::Error },
    #[error("`{command}` did not list its hooks: {said}")]
    NoHookList { command: String, said: String },
}

/// judged's plugin (or extension) as its host lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// What the host calls it: `judged@judged`, or `judged`.
    pub id: String,
    pub version: String,
    pub enabled: bool,
    /// The hook file of the copy the host loads, when the listing says where that is.
    pub hooks_file: Option<PathBuf>,
}

/// A host's program, as PATH finds it.
pub fn program(host: Host) -> &'static str {
    match host {
        Host::ClaudeCode => "claude",
        Host::CopilotCli => "copilot",
        Host::CodexCli => "codex",
        Host::GeminiCli => "gemini",
    }
}

/// A host's name, for people.
pub fn title(host: Host) -> &'static str {
    match host {
        Host::ClaudeCode => "Claude Code",
        Host::CopilotCli => "Copilot CLI",
        Host::CodexCli => "Codex CLI",
        Host::GeminiCli => "Gemini CLI",
    }
}

/// The id every host with marketplaces gives the plugin (`<plugin>@<marketplace>`).
pub fn marketplace_id() -> String {
    format!("{0}@{0}", crate::plugin::NAME)
}

/// The command that lists `host`'s plugins or extensions, as JSON.
pub fn listing_args(host: Host) -> &'static [&'static str] {
    match host {
        Host::ClaudeCode | Host::CopilotCli | Host::CodexCli => &["plugin", "list", "--json"],
        Host::GeminiCli => &["extensions", "list", "-o", "json"],
    }
}

/// Ask `host` (its CLI at `bin`, run in `cwd`) whether judged is installed, and how.
/// `Ok(None)`: the host lists no judged.
pub fn judged_listed(host: Host, bin: &Path, cwd: &Path) -> Result<Option<Listed>, HostCliError> {
    let args: Vec<String> = listing_args(host).iter().map(|a| (*a).to_owned()).collect();
    let said = run(bin, &args, cwd, &[], LISTING_DEADLINE)?;
    let command = shown(bin, listing_args(host));
    // Gemini CLI prints its listing on stderr, and nothing at all when it has no extension.
    let stdout = if said.stdout.trim().is_empty() { said.stderr } else { said.stdout };
    if stdout.trim().is_empty() {
        return Ok(None);
    }
    let unreadable = |source| HostCliError::Unreadable { command: command.clone(), source };
    let hook_file = |root: &Path| crate::plugin::installed_hooks_file(host, root);
    let listed = match host {
        Host::ClaudeCode => {
            let plugins: Vec<ClaudePlugin> = serde_json::from_str(&stdout).map_err(unreadable)?;
            plugins.into_iter().find(|p| p.id == marketplace_id()).map(|p| Listed {
                hooks_file: p.install_path.as_deref().map(hook_file),
                id: p.id,
                version: p.version,
                enabled: p.enabled,
            })
        }
        Host::CopilotCli => {
            let plugins: Vec<CopilotPlugin> = serde_json::from_str(&stdout).map_err(unreadable)?;
            plugins.into_iter().find(|p| p.name == crate::plugin::NAME).map(|p| Listed {
                // A marketplace install is loaded live from the marketplace's directory.
                hooks_file: p.installed_from.as_deref().filter(|_| p.source == "live").map(hook_file),
                id: if p.marketplace.is_empty() { p.name } else { format!("{}@{}", p.name, p.marketplace) },
                version: p.version,
                enabled: p.enabled,
            })
        }
        Host::CodexCli => {
            let plugins: CodexPlugins = serde_json::from_str(&stdout).map_err(unreadable)?;
            plugins.installed.into_iter().find(|p| p.plugin_id == marketplace_id() && p.installed).map(|p| Listed {
                id: p.plugin_id,
                version: p.version,
                enabled: p.enabled,
                hooks_file: None,
            })
        }
        Host::GeminiCli => {
            let extensions: Vec<GeminiExtension> = serde_json::from_str(&stdout).map_err(unreadable)?;
            extensions.into_iter().find(|e| e.name == crate::plugin::NAME).map(|e| Listed {
                hooks_file: Some(hook_file(&e.path)),
                id: e.name,
                version: e.version,
                enabled: e.is_active,
            })
        }
    };
    Ok(listed)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClaudePlugin {
    id: String,
    version: String,
    enabled: bool,
    install_path: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CopilotPlugin {
    name: String,
    #[serde(default)]
    marketplace: String,
    version: String,
    enabled: bool,
    #[serde(default)]
    source: String,
    installed_from: Option<PathBuf>,
}

#[derive(Deserialize)]
struct CodexPlugins {
    installed: Vec<CodexPlugin>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CodexPlugin {
    plugin_id: String,
    version: String,
    installed: bool,
    enabled: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GeminiExtension {
    name: String,
    version: String,
    path: PathBuf,
    is_active: bool,
}

/// Whether Codex CLI runs a hook: its `hooks/list` `trustStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CodexTrust {
    /// Trusted in `config.toml` with the hash it has now.
    Trusted,
    /// From managed requirements: runs without trust.
    Managed,
    /// Never trusted: Codex skips it.
    Untrusted,
    /// Trusted once, changed since: Codex skips it.
    Modified,
}

impl CodexTrust {
    pub fn runs(self) -> bool {
        matches!(self, CodexTrust::Trusted | CodexTrust::Managed)
    }
}

/// One hook as `codex app-server` lists it for a directory.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CodexHook {
    /// How `config.toml` names it: `<file>:stop:<group>:<handler>`, or
    /// `<plugin>@<marketplace>:<file in the plugin>:stop:…` for a plugin's.
    pub key: String,
    pub event_name: String,
    #[serde(default)]
    pub command: Option<String>,
    pub source_path: PathBuf,
    #[serde(default)]
    pub plugin_id: Option<String>,
    pub enabled: bool,
    /// The hash `config.toml` must trust: `sha256:…`, or for a plugin's hook
    /// `sha256:<hook>/sha256:<content>`.
    pub current_hash: String,
    pub trust_status: CodexTrust,
}

impl CodexHook {
    /// Whether it runs judge-hook.
    pub fn is_ours(&self) -> bool {
        self.command.as_deref().is_some_and(|c| c.contains("judge-hook"))
    }
}

/// Every hook Codex CLI (`codex`) loads for `cwd`, asked through `codex app-server`, its
/// own JSON-RPC API (the one its `/hooks` screen uses). The server must see its stdin open
/// until it has answered (it stops at the end of its input without answering), so this is
/// a dialog of its own rather than a [`run`].
pub fn codex_hooks(codex: &Path, cwd: &Path) -> Result<Vec<CodexHook>, HostCliError> {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    let command = shown(codex, &["app-server"]);
    let mut child = Command::new(codex)
        .arg("app-server")
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| HostCliError::Spawn { command: command.clone(), source })?;
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "judged", "version": env!("CARGO_PKG_VERSION")}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [cwd]}}),
    ];
    let mut stdin = child.stdin.take();
    let lines: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let written = stdin.as_mut().map(|s| s.write_all(lines.as_bytes()));
    let (send, receive) = std::sync::mpsc::channel();
    if let (Some(stdout), Some(Ok(()))) = (child.stdout.take(), written) {
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(answer) = serde_json::from_str::<Value>(&line).ok().filter(|v| v["id"] == 2) {
                    let _ = send.send(answer);
                    return;
                }
            }
        });
    }
    let answer = receive.recv_timeout(LISTING_DEADLINE);
    // It has said all that is asked of it.
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let Ok(mut answer) = answer else {
        return Err(HostCliError::Deadline { command, seconds: LISTING_DEADLINE.as_secs() });
    };
    if answer.get("result").is_none() {
        return Err(HostCliError::NoHookList { command, said: answer["error"].to_string() });
    }
    #[derive(Deserialize)]
    struct Entry {
        hooks: Vec<CodexHook>,
    }
    let entries: Vec<Entry> = serde_json::from_value(answer["result"]["data"].take())
        .map_err(|source| HostCliError::Unreadable { command: command.clone(), source })?;
    Ok(entries.into_iter().flat_map(|e| e.hooks).collect())
}

/// `bin args…` as a user would type it.
pub fn shown(bin: &Path, args: &[&str]) -> String {
    std::iter::once(bin.to_string_lossy().as_ref())
        .chain(args.iter().copied())
        .map(super::shell_word)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The last lines of what a command said, for an error.
fn tail(said: &str) -> String {
    let lines: Vec<&str> = said.trim().lines().collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

/// What a command that succeeded printed.
pub struct Said {
    pub stdout: String,
    pub stderr: String,
}

/// Run `bin args` in `cwd`, with `env` set, no terminal (stdin closed) and under
/// `deadline`, in a process group of its own that is killed at the deadline.
pub fn run(
    bin: &Path,
    args: &[String],
    cwd: &Path,
    env: &[(&str, &str)],
    deadline: Duration,
) -> Result<Said, HostCliError> {
    let spawn = Spawn {
        program: bin.to_owned(),
        args: args.to_vec(),
        env_remove: Vec::new(),
        env_set: env.iter().map(|(k, v)| ((*k).to_owned(), (*v).into())).collect(),
        cwd: cwd.to_owned(),
        stdin: Vec::new(),
    };
    let command = || shown(bin, &args.iter().map(String::as_str).collect::<Vec<_>>());
    match judged_jury::run::run(&spawn, Instant::now() + deadline, OUTPUT_CAP) {
        Outcome::Answered(done) => Ok(Said {
            stdout: String::from_utf8_lossy(&done.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&done.stderr).into_owned(),
        }),
        Outcome::ExitedNonZero(exit, done) => {
            let said = if done.stderr.iter().all(u8::is_ascii_whitespace) { &done.stdout } else { &done.stderr };
            Err(HostCliError::Failed {
                command: command(),
                exit: exit_words(exit),
                said: tail(&String::from_utf8_lossy(said)),
            })
        }
        Outcome::TimedOut(_) => Err(HostCliError::Deadline { command: command(), seconds: deadline.as_secs() }),
        Outcome::SpawnFailed(source) => Err(HostCliError::Spawn { command: command(), source }),
    }
}

/// How a process ended, in words.
pub fn exit_words(exit: Exit) -> String {
    match exit {
        Exit::Code(code) => format!("exit {code}"),
        Exit::Signal(signal) => format!("killed by signal {signal}"),
        Exit::Unknown => "exit status unknown".to_owned(),
    }
}

/// How to enable judged's plugin in `host` (its CLI at `bin`) when it lists it disabled.
pub fn enable_hint(host: Host, bin: &Path) -> String {
    let bin = super::shell_word(&bin.to_string_lossy());
    match host {
        Host::ClaudeCode | Host::CopilotCli => format!("{bin} plugin enable {}", marketplace_id()),
        Host::CodexCli => format!(
            "set `enabled = true` under [plugins.\"{}\"] in {}",
            marketplace_id(),
            super::codex_config_path().display()
        ),
        Host::GeminiCli => format!("{bin} extensions enable {}", crate::plugin::NAME),
    }
}

/// How to take judged's plugin out of `host` (its CLI at `bin`).
pub fn uninstall_hint(host: Host, bin: &Path) -> String {
    let bin = super::shell_word(&bin.to_string_lossy());
    match host {
        Host::ClaudeCode => format!("{bin} plugin uninstall {}", marketplace_id()),
        // Uninstalling a plugin of a local marketplace only disables it.
        Host::CopilotCli => format!("{bin} plugin marketplace remove {}", crate::plugin::NAME),
        Host::CodexCli => format!("{bin} plugin remove {}", marketplace_id()),
        Host::GeminiCli => format!("{bin} extensions uninstall {}", crate::plugin::NAME),
    }
}

/// Whether a host's CLI is logged in, as far as can be told offline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Login {
    /// Logged in, and where that shows (a variable or a file).
    Yes(String),
    /// No login found: the file looked for and the variables that would do.
    No { file: String, variables: String },
    /// Cannot be told offline, and why.
    Unknown(&'static str),
}

/// Whether `host`'s CLI is logged in, from what it keeps on disk or reads from the
/// environment (`env` reads a variable; empty ones count as unset).
pub fn login(host: Host, env: &dyn Fn(&str) -> Option<String>) -> Login {
    let home = env("HOME").map(PathBuf::from).unwrap_or_default();
    let dir = |var: &str, default: &str| env(var).map(PathBuf::from).unwrap_or_else(|| home.join(default));
    let (keys, files): (&[&str], Vec<PathBuf>) = match host {
        Host::CodexCli => (&["OPENAI_API_KEY", "CODEX_API_KEY"], vec![dir("CODEX_HOME", ".codex").join("auth.json")]),
        Host::GeminiCli => {
            (&["GEMINI_API_KEY", "GOOGLE_API_KEY"], vec![dir("GEMINI_CLI_HOME", "").join(".gemini/oauth_creds.json")])
        }
        Host::ClaudeCode => (
            &["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
            vec![dir("CLAUDE_CONFIG_DIR", ".claude").join(".credentials.json")],
        ),
        Host::CopilotCli => (&["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"], Vec::new()),
    };
    if let Some(key) = keys.iter().find(|k| env(k).is_some()) {
        return Login::Yes(format!("${key}"));
    }
    if let Some(file) = files.iter().find(|f| f.is_file()) {
        return Login::Yes(file.display().to_string());
    }
    match host {
        // Copilot CLI keeps its token in the system keychain; only a plaintext fallback
        // would show in its config file.
        Host::CopilotCli => {
            let config = dir("COPILOT_HOME", ".copilot").join("config.json");
            match std::fs::read_to_string(&config) {
                Ok(text) if text.contains("logged_in_users") => Login::Yes(config.display().to_string()),
                _ => Login::Unknown("Copilot CLI keeps its login in the system keychain"),
            }
        }
        _ => Login::No {
            file: files.first().map(|f| f.display().to_string()).unwrap_or_default(),
            variables: keys.join(" or "),
        },
    }
}

/// A variable of this process, unset when empty.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}
