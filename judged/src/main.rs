//! `judged start | status | sessions | verify-log | stop`.

mod commands;
mod doctor;
mod hook_entry;
mod hosts;
mod init;
mod install;
mod plugin;
mod service;

use crate::install::InstallError;
use clap::{Parser, Subcommand};
use judged_daemon::config::{ConfigError, RootFlags};
use judged_protocol::ClientError;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "judged", version, about = "Witness coding-agent session logs and judge review evidence")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Start the daemon; returns once its first catch-up of the logs is done.
    Start {
        /// Run attached, logging to stderr (for systemd, launchd and tests).
        #[arg(long)]
        foreground: bool,
        #[command(flatten)]
        roots: RootFlags,
    },
    /// Show the daemon's state.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// List the sessions the daemon witnessed.
    Sessions {
        #[arg(long)]
        json: bool,
    },
    /// Recompute the per-session summaries from the stored lines and journal (replay).
    Rebuild,
    /// Re-hash a session's whole ingested prefix against its file.
    VerifyLog { session: String },
    /// Stop the daemon.
    Stop,
    /// List the review gate's decisions.
    Decisions {
        #[arg(long)]
        json: bool,
    },
    /// Register the `judge-hook` gate with Claude Code, Copilot CLI, Codex CLI, Gemini CLI or Qwen Code.
    InstallHooks {
        #[command(flatten)]
        target: HookTarget,
        /// Claude Code events to gate (default: TaskCompleted only).
        #[arg(long, value_delimiter = ',')]
        events: Vec<String>,
        /// What the hook does when judged cannot be asked.
        #[arg(long = "on-error", value_enum, default_value_t = judged_daemon::config::OnError::Block)]
        on_error: judged_daemon::config::OnError,
        /// Show the change without writing it.
        #[arg(long)]
        dry_run: bool,
        /// Name `judge-hook` by its absolute path, not by its name on PATH.
        #[arg(long)]
        absolute: bool,
    },
    /// Remove what `install-hooks` added, and only that.
    UninstallHooks {
        #[command(flatten)]
        target: HookTarget,
        #[arg(long)]
        dry_run: bool,
    },
    /// Run judged at login: a systemd user unit (Linux) or a launchd agent (macOS).
    #[command(subcommand)]
    Service(service::ServiceCmd),
    /// Check the daemon, roots, hooks, gate policy, jurors and data dir; each problem with its fix.
    Doctor {
        /// One JSON object: each check's name, status (ok/warn/fail), detail and fix.
        #[arg(long)]
        json: bool,
    },
    /// Drop the stored bytes of sessions idle for a while that nothing recent needs; their hashes and chain stay.
    Prune {
        /// Sessions whose last record is older than this: `90d`, `12w` or an ISO-8601 time
        /// (default: `[store] keep_days`, else 90d).
        #[arg(long, value_parser = time_ago)]
        older_than: Option<chrono::DateTime<chrono::Utc>>,
        /// Say what would be pruned, and prune nothing.
        #[arg(long)]
        dry_run: bool,
        /// Then give the freed space back to the disk (rewrites the database; judged answers
        /// nothing else meanwhile, and needs the store's size free on disk).
        #[arg(long)]
        vacuum: bool,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
    /// What the gate decided, per project and session, with the review or jury behind each allow.
    Report {
        /// Only decisions since then: `7d`, `24h`, `30m` or an ISO-8601 time (default: 7d).
        #[arg(long, default_value = "7d", value_parser = time_ago)]
        since: chrono::DateTime<chrono::Utc>,
        /// Also write a self-contained HTML report (timeline and table) to FILE.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
        /// Print the report's data as JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Set judged up: a cross-family jury from the reviewer CLIs found, the plugin (or hooks) in each host, then doctor.
    Init(init::InitArgs),
    /// The judged plugin for Claude Code, Copilot CLI, Codex CLI and Gemini CLI.
    #[command(subcommand)]
    Plugin(init::PluginCmd),
    /// Serve MCP on stdin/stdout (the `review` and `gate_status` tools), for a host's MCP config.
    Mcp,
    /// Print judged's public key, which checks its artifacts' signatures and attestations
    /// anywhere (`judge-evidence validate --public-key KEY`, `judge-evidence check --trusted FILE`).
    Key {
        #[command(subcommand)]
        action: Option<KeyAction>,
        /// Every key that has been current (current first), as JSON.
        #[arg(long, conflicts_with = "pem")]
        json: bool,
        /// The current key as PEM (SubjectPublicKeyInfo), as other tools read it.
        #[arg(long)]
        pem: bool,
    },
    /// Print judged's shell completions (`judged completions bash > ~/.local/share/bash-completion/completions/judged`).
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

#[derive(Subcommand)]
enum KeyAction {
    /// Sign with a new key from now on (a running daemon too); the old public keys stay
    /// listed, so what they signed still checks.
    Rotate,
}

#[derive(clap::Args)]
struct HookTarget {
    #[command(flatten)]
    host: hosts::HookHost,
    /// The project directory (default: the current directory).
    #[arg(long, conflicts_with = "user")]
    project: Option<PathBuf>,
    /// The user's settings (Claude Code: `$CLAUDE_CONFIG_DIR` or `~/.claude`; Codex CLI:
    /// `$CODEX_HOME` or `~/.codex`; Gemini CLI: `$GEMINI_CLI_HOME/.gemini` or `~/.gemini`;
    /// Qwen Code: `$QWEN_HOME` or `~/.qwen`).
    #[arg(long)]
    user: bool,
    /// The host's managed settings, root's: a hook no user or project setting removes or
    /// disables (Claude Code `/etc/claude-code/managed-settings.d/judged.json`, Copilot CLI
    /// `/etc/github-copilot/policy.d/judged.json`, Codex CLI `/etc/codex/requirements.toml`,
    /// Qwen Code `/etc/qwen-code/settings.json`).
    /// Needs root.
    #[arg(long, conflicts_with_all = ["project", "user"])]
    managed: bool,
    /// With `--managed`: only managed hooks run, no user, project or plugin hook
    /// (Claude Code `allowManagedHooksOnly`, Codex CLI `allow_managed_hooks_only`).
    #[arg(long, requires = "managed")]
    managed_only: bool,
}

impl HookTarget {
    /// The user's settings of `host`, or, for a host without them (Copilot CLI), the
    /// settings of `project`.
    fn user_level(host: judged_core::event::Host, project: Option<PathBuf>) -> HookTarget {
        let user = hosts::of(host).has_user_settings();
        HookTarget {
            host: hosts::HookHost(host),
            project: if user { None } else { project },
            user,
            managed: false,
            managed_only: false,
        }
    }

    /// The host the flags name.
    fn host(&self) -> judged_core::event::Host {
        self.host.0
    }

    fn project_dir(&self) -> PathBuf {
        self.project.clone().unwrap_or_else(|| PathBuf::from("."))
    }

    /// The project, absolute (Codex CLI names a hook by its file's absolute path); none
    /// for the user's settings.
    fn project_files(&self) -> Option<PathBuf> {
        (!self.user).then(|| std::path::absolute(self.project_dir()).unwrap_or_else(|_| self.project_dir()))
    }
}

/// Why a `judged` command failed; each says what to do.
#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Daemon(#[from] judged_daemon::DaemonError),
    #[error(transparent)]
    Witness(#[from] judged_daemon::witness::WitnessError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Install(#[from] InstallError),
    #[error(
        "--managed is not written for {}: its system settings (/etc/gemini-cli/settings.json) cannot keep a \
         user's `hooksConfig.disabled` from naming the hook, nor run it in a folder the user does not trust; \
         install its hook with --user or --project (Claude Code, Copilot CLI, Codex CLI and Qwen Code have --managed)",
        .0.as_str()
    )]
    ManagedNotFor(judged_core::event::Host),
    #[error(transparent)]
    Service(#[from] service::ServiceError),
    #[error(transparent)]
    Init(#[from] init::InitError),
    #[error(transparent)]
    Mcp(#[from] judged_mcp::McpError),
    #[error(
        "{host} is gated by the judged plugin already (`{listing}` lists {id}, enabled): a hook from install-hooks \
         would run judge-hook a second time at every end. Keep the plugin (nothing more to do), or take it out \
         first (`{uninstall}`) to gate with hooks instead"
    )]
    PluginGates { host: &'static str, listing: String, id: String, uninstall: String },
    #[error(
        "--managed-only is not written for {0}: its managed settings have no switch that keeps the user's, a \
         project's or a plugin's hooks from running; run install-hooks --managed without it (Claude Code and Codex \
         CLI have --managed-only)"
    )]
    ManagedOnlyNotFor(&'static str),
    #[error(
        "{0} has no hook that can stop its agent's end: judged reads its sessions and records each end as a \
         bypass (`judged report`); there is no hook to install"
    )]
    Ungated(&'static str),
    #[error(
        "`{event}` is not a hook event {} sends; its events are {}",
        host.as_str(),
        judged_core::adapter::hooks(*host).events().iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")
    )]
    NoSuchEvent { host: judged_core::event::Host, event: String },
    #[error("judged is already running (pid {0})")]
    AlreadyRunning(u32),
    #[error("judged is not running")]
    NotRunning,
    #[error(
        "judged (pid {pid}) is still running {seconds} s after it was asked to stop; `kill {pid}` stops it \
         (`kill -9 {pid}` if it does not)"
    )]
    StillRunning { pid: u32, seconds: u64 },
    #[error("some checks failed; each is listed above with its fix")]
    DoctorFailed,
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("session {0} was rewritten after it was ingested")]
    Tampered(String),
    #[error("session {0}'s log no longer exists; its history is kept in the store")]
    Vanished(String),
    #[error("cannot {action}: {source}")]
    Start { action: String, source: std::io::Error },
    #[error("{}\nfix that file, then start judged again", .0.to_string().trim_end())]
    StartConfig(ConfigError),
    #[error("judged exited during start ({status}); it wrote to {}:\n{said}", log.display())]
    ExitedDuringStart { status: std::process::ExitStatus, log: PathBuf, said: String },
    #[error("{what} within {seconds} s{}", log.as_ref().map(|l| format!("; see {}", l.display())).unwrap_or_default())]
    TimedOut { what: &'static str, seconds: u64, log: Option<PathBuf> },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("judged: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Run one subcommand; each formats its own output (`commands/`).
fn run(command: Cmd) -> Result<(), CliError> {
    match command {
        Cmd::Start { foreground: true, roots } => commands::start::foreground(roots),
        Cmd::Start { foreground: false, roots } => commands::start::background(&roots),
        Cmd::Status { json } => commands::status::run(json),
        Cmd::Sessions { json } => commands::sessions::run(json),
        Cmd::VerifyLog { session } => commands::verify_log::run(session),
        Cmd::Rebuild => commands::rebuild::run(),
        Cmd::Decisions { json } => commands::decisions::run(json),
        Cmd::InstallHooks { target, events, on_error, dry_run, absolute } => {
            commands::install_hooks::run(&target, events, on_error, dry_run, absolute)
        }
        Cmd::Service(command) => Ok(service::run(command)?),
        Cmd::Init(args) => init::run(&args),
        Cmd::Plugin(command) => init::plugin(command),
        Cmd::Doctor { json } => doctor::run(json).then_some(()).ok_or(CliError::DoctorFailed),
        Cmd::Report { since, html, json } => commands::report::run(since, html, json),
        Cmd::Prune { older_than, dry_run, vacuum, json } => commands::prune::run(older_than, dry_run, vacuum, json),
        Cmd::Completions { shell } => commands::completions::run(shell),
        Cmd::UninstallHooks { target, dry_run } => commands::uninstall_hooks::run(&target, dry_run),
        Cmd::Stop => commands::stop::run(),
        Cmd::Key { action, json, pem } => commands::key::run(action, json, pem),
        Cmd::Mcp => Ok(judged_mcp::serve()?),
    }
}

/// `--since` and `--older-than` as clap parses them, so a bad one is a usage error (exit
/// 2) that names the option.
fn time_ago(text: &str) -> Result<chrono::DateTime<chrono::Utc>, judged_core::timestamp::NotATime> {
    judged_core::timestamp::before(text, chrono::Utc::now())
}
