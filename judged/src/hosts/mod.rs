//! Everything judged's setup knows about each host, one file per host behind the
//! [`HostSetup`] trait: its program and name; how its own CLI lists judged's plugin, and
//! how to enable or remove it there; how `init` installs the plugin; where its hook
//! settings live; whether its CLI is logged in; which juror models it serves. `init`,
//! `doctor` and `install-hooks` ask the trait, and [`of`] is the one place that names
//! each host. To set up a new host, start here.
//!
//! A host's CLI is asked as a user would ask it (the JSON forms of its listing commands),
//! never by reading its private files: its answer is what it will load. Every run has no
//! terminal (stdin closed) and a deadline, in a process group of its own killed at that
//! deadline, so a host that prompts or hangs cannot hang judged.

mod claude_code;
mod codex_cli;
mod copilot_cli;
mod gemini_cli;
mod hook;
mod opencode;
mod qwen_code;

pub use codex_cli::{CodexHook, CodexHookSource, codex_config_path, codex_hooks, trust_codex_hook};
pub use hook::{HookHost, HookPlace, HookSpec, Managed};

use crate::CliError;
use judged_core::adapter::HookEvent;
use judged_core::event::Host;
use judged_jury::run::{Exit, Outcome, Spawn};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long one listing may take: each answers in a second or two offline.
pub const LISTING_DEADLINE: Duration = Duration::from_secs(30);
/// The most of a listing's output read (Gemini CLI's includes every skill's whole text).
const OUTPUT_CAP: usize = 4 << 20;

/// What judged's setup knows about one host.
pub trait HostSetup: Sync {
    fn host(&self) -> Host;
    /// Its program, as PATH finds it.
    fn program(&self) -> &'static str;
    /// Its name, for people.
    fn title(&self) -> &'static str;
    /// How to get its CLI, for the message that says a model family is missing.
    fn install_hint(&self) -> &'static str;
    /// The small (stage 1) and big (tiebreaker) model of `family` its CLI serves as a juror.
    fn juror_models(&self, family: &str) -> Option<(&'static str, &'static str)>;
    /// Whether its CLI is logged in, as far as can be told offline (`env` reads a variable).
    fn login(&self, env: &dyn Fn(&str) -> Option<String>) -> Login;
    /// The arguments that make it list its plugins or extensions as JSON.
    fn listing_args(&self) -> &'static [&'static str];
    /// judged in that listing, if it is there.
    fn parse_listing(&self, listing: &str) -> Result<Option<Listed>, serde_json::Error>;
    /// The id it lists judged by once `init` installed it.
    fn installed_id(&self) -> String {
        crate::plugin::marketplace_id()
    }
    /// Its own commands that install the plugin from `dir`, given what it listed before.
    fn install_steps(&self, dir: &Path, before: Option<&Listed>) -> Vec<Step>;
    /// How to enable judged's plugin when it lists it disabled (`bin`: its CLI, quoted).
    fn enable_hint(&self, bin: &str) -> String;
    /// How to take judged's plugin out.
    fn uninstall_hint(&self, bin: &str) -> String;
    /// The settings files that can hold its hook, for a project at `cwd`.
    fn settings_files(&self, cwd: &Path) -> Vec<SettingsFile>;
    /// Its part of judged's plugin; none for a host the plugin does not gate.
    fn plugin(&self) -> Option<crate::plugin::HostPlugin> {
        None
    }
    /// Its hook's file in an installed copy of the plugin at `root`.
    fn installed_hooks_file(&self, root: &Path) -> Option<PathBuf> {
        self.plugin().map(|plugin| crate::plugin::installed_hooks_file(&plugin, root))
    }
    /// Where `install-hooks --<program>` writes its hook, for the flag's help.
    fn hook_settings(&self) -> &'static str;
    /// Whether it has a user-level hook settings file (Copilot CLI has only a project's).
    fn has_user_settings(&self) -> bool {
        self.settings_files(Path::new(".")).iter().any(|f| f.place == "user")
    }
    /// Whether a hook of its can stop its agent's end (not OpenCode's: judged records its
    /// ends as bypasses, and installs nothing into it).
    fn gatable(&self) -> bool {
        true
    }
    /// Whether it runs a command hook only once its own config trusts it (Codex CLI).
    fn trusts_hooks(&self) -> bool {
        false
    }
    /// How its settings turn its hooks off, short of taking them out.
    fn hooks_switch(&self) -> HooksSwitch {
        HooksSwitch::None
    }
    /// Whether `settings`, a project's settings file of this host, turns judged's plugin
    /// (`plugin`, its id as the host lists it) off for that project, which the host's own
    /// listing, asked outside any project, does not show.
    fn plugin_off_in_project(&self, _settings: &serde_json::Value, _plugin: &str) -> bool {
        false
    }
    /// Settings files besides [`HostSetup::settings_files`] whose switch turns its hooks
    /// off (Copilot CLI's `settings.json`s).
    fn hooks_switch_files(&self, _cwd: &Path) -> Vec<PathBuf> {
        Vec::new()
    }
    /// What its managed settings can do.
    fn managed(&self) -> Managed;
    /// The events `install-hooks` registers its hook for, of those `asked` (`--events`):
    /// by default its end's alone.
    fn hook_events(&self, _asked: &[String]) -> Result<Vec<HookEvent>, CliError> {
        Ok(vec![self.end_event()])
    }
    /// The event where its agent's end is decided.
    fn end_event(&self) -> HookEvent {
        judged_core::adapter::hooks(self.host()).end_event().name
    }
    /// `install-hooks`: the plan that writes `hook` into its settings at `place`; none
    /// when it carried its plan out itself (a step that needs the file written).
    fn install_hook(&self, place: &HookPlace, hook: &HookSpec) -> Result<Option<crate::install::Plan>, CliError>;
    /// `uninstall-hooks`: the plan that takes judged's hook out of its settings at `place`.
    fn uninstall_hook(&self, place: &HookPlace) -> Result<crate::install::Plan, CliError>;
}

/// The setup facts of `host`: the registry.
pub fn of(host: Host) -> &'static dyn HostSetup {
    match host {
        Host::ClaudeCode => &claude_code::ClaudeCode,
        Host::CopilotCli => &copilot_cli::CopilotCli,
        Host::CodexCli => &codex_cli::CodexCli,
        Host::GeminiCli => &gemini_cli::GeminiCli,
        Host::QwenCode => &qwen_code::QwenCode,
        Host::OpenCode => &opencode::OpenCode,
    }
}

/// Every host judged sets up, in the order `init` prefers their CLIs as jurors: a family's
/// own CLI before Copilot CLI, which serves all three. OpenCode is not one ([`ungated`]).
pub const ALL: [Host; 5] = [Host::CodexCli, Host::GeminiCli, Host::ClaudeCode, Host::CopilotCli, Host::QwenCode];

/// Every file of judged's plugin: those the hosts share, then each gated host's own.
pub fn plugin_files() -> Vec<crate::plugin::PluginFile> {
    let own = ALL.into_iter().filter_map(|host| of(host).plugin());
    crate::plugin::shared_files().into_iter().chain(own.flat_map(|plugin| plugin.files)).collect()
}

/// The hosts judged witnesses but cannot gate: `doctor` says so of each on PATH.
pub fn ungated() -> impl Iterator<Item = Host> {
    Host::ALL.into_iter().filter(|host| !of(*host).gatable())
}

/// A settings file that can hold a host's hook.
pub struct SettingsFile {
    /// `project`, `local` (Claude Code's uncommitted project settings), `user` or `managed`.
    pub place: &'static str,
    pub path: PathBuf,
    /// The command that writes our hook there again.
    pub reinstall: &'static str,
}

/// How a host's settings turn its hooks off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HooksSwitch {
    /// They cannot.
    None,
    /// `disableAllHooks: true` in any of its settings but the managed ones turns every
    /// hook off, its plugin's too (Claude Code, Qwen Code, Copilot CLI); Qwen Code's
    /// managed `false` turns them back on.
    DisableAllHooks,
    /// `hooksConfig.enabled: false` turns every hook off, and `hooksConfig.disabled` the
    /// hooks it names by their command, in the user's and the project's settings alike
    /// (Gemini CLI).
    HooksConfig,
}

/// One of a host's own commands that install the plugin.
pub struct Step {
    pub args: Vec<String>,
    /// Set for the command alone: what it needs so that it never asks.
    pub env: &'static [(&'static str, &'static str)],
    /// What it says, failing, when the step was already done (by an earlier init).
    pub already: Option<&'static str>,
}

/// A step that needs nothing more.
pub fn step(args: &[&str]) -> Step {
    Step { args: args.iter().map(|a| (*a).to_owned()).collect(), env: &[], already: None }
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

impl Login {
    /// Logged in by one of `variables` or `files`, or else the login that was looked for.
    fn by(env: &dyn Fn(&str) -> Option<String>, variables: &[&str], files: &[PathBuf]) -> Login {
        if let Some(variable) = variables.iter().find(|v| env(v).is_some()) {
            return Login::Yes(format!("${variable}"));
        }
        if let Some(file) = files.iter().find(|f| f.is_file()) {
            return Login::Yes(file.display().to_string());
        }
        Login::No {
            file: files.first().map(|f| f.display().to_string()).unwrap_or_default(),
            variables: variables.join(" or "),
        }
    }
}

/// The directory a host keeps its files in: `var` when set, else `default` under HOME.
fn env_dir(env: &dyn Fn(&str) -> Option<String>, var: &str, default: &str) -> PathBuf {
    env(var).map_or_else(|| env("HOME").map(PathBuf::from).unwrap_or_default().join(default), PathBuf::from)
}

/// A variable of this process, unset when empty.
pub fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Why a host's CLI could not answer; each names the command.
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

/// Where judged runs a host's CLI to ask it something, unless the question is about a
/// directory of judged's own: the user's home. A host reads the settings of the
/// directory it runs in, and a project's are the agent's to write; the home's are the
/// user's own, which the host reads wherever it runs.
pub fn neutral_dir() -> PathBuf {
    judged_io::files::home_dir()
}

/// Ask `host` (its CLI at `bin`, run in `cwd`: [`neutral_dir`], or a directory of
/// judged's own) whether judged is installed, and how. `Ok(None)`: the host lists no
/// judged.
pub fn judged_listed(host: Host, bin: &Path, cwd: &Path) -> Result<Option<Listed>, HostCliError> {
    let setup = of(host);
    let args: Vec<String> = setup.listing_args().iter().map(|a| (*a).to_owned()).collect();
    let said = run(bin, &args, cwd, &[], LISTING_DEADLINE)?;
    // Gemini CLI prints its listing on stderr, and nothing at all when it has no extension.
    let listing = if said.stdout.trim().is_empty() { said.stderr } else { said.stdout };
    if listing.trim().is_empty() {
        return Ok(None);
    }
    setup
        .parse_listing(&listing)
        .map_err(|source| HostCliError::Unreadable { command: shown(bin, setup.listing_args()), source })
}

/// `bin args…` as a user would type it.
pub fn shown(bin: &Path, args: &[&str]) -> String {
    std::iter::once(bin.to_string_lossy().as_ref())
        .chain(args.iter().copied())
        .map(crate::install::shell_word)
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
        out_of_reach: Vec::new(),
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
fn exit_words(exit: Exit) -> String {
    match exit {
        Exit::Code(code) => format!("exit {code}"),
        Exit::Signal(signal) => format!("killed by signal {signal}"),
        Exit::Unknown => "exit status unknown".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each gated host has its hook in the plugin, running judge-hook as `install-hooks`
    /// writes it.
    #[test]
    fn every_hook_of_the_plugin_runs_judge_hook_as_install_hooks_writes_it() {
        let files = plugin_files();
        let paths: Vec<&str> = files.iter().map(|f| f.path).collect();
        for host in ALL {
            let command = crate::plugin::hook_command(host);
            assert_eq!(command, format!("judge-hook --host {} --timeout 110", host.as_str()));
            let plugin = of(host).plugin().expect("a gated host is in the plugin");
            let hook_file = files.iter().find(|f| f.path == plugin.hook_file).expect("its hook file is rendered");
            assert!(String::from_utf8_lossy(&hook_file.contents).contains(&command), "{}", plugin.hook_file);
        }
        assert!(paths.contains(&".mcp.json"));
    }
}
