//! Where the daemon keeps its files and which roots it watches.
//!
//! Precedence: command-line flags, then the config file, then the hosts' own
//! environment variables (`COPILOT_HOME`, `CLAUDE_CONFIG_DIR`), then their defaults.

use judged_core::files::Roots;
use judged_core::rules::IdentityAssurance;
use judged_jury::config::JuryConfig;
use judged_protocol::GatePolicy;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The daemon's settings, resolved.
#[derive(Clone, Debug)]
pub struct Config {
    pub data_dir: PathBuf,
    socket_dir: PathBuf,
    pub roots: Roots,
    pub gate: GateConfig,
    /// The user's `[jury]`, checked.
    pub jury: Option<JuryConfig>,
    /// How many clients, bytes and seconds the socket grants.
    pub server: ServerLimits,
    /// The config file these came from.
    pub path: PathBuf,
}

/// A config file that cannot be used; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Parse { path: PathBuf, source: toml::de::Error },
    #[error("{}: {source}", path.display())]
    Jury { path: PathBuf, source: judged_jury::config::ConfigError },
}

/// Read a TOML file as `T`; `None` when it does not exist.
pub fn read_toml<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, ConfigError> {
    match std::fs::read_to_string(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read { path: path.to_owned(), source }),
        Ok(text) => {
            toml::from_str(&text).map(Some).map_err(|source| ConfigError::Parse { path: path.to_owned(), source })
        }
    }
}

/// Roots named on the command line; each replaces the config file's for its host.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct RootFlags {
    /// A Copilot CLI session-state root to watch (repeatable).
    #[arg(long = "copilot-root")]
    pub copilot: Vec<PathBuf>,
    /// A Claude Code projects root to watch (repeatable).
    #[arg(long = "claude-root")]
    pub claude: Vec<PathBuf>,
    /// A Codex CLI sessions root to watch (repeatable).
    #[arg(long = "codex-root")]
    pub codex: Vec<PathBuf>,
}

impl RootFlags {
    /// The flags again, to start another `judged` with the same roots.
    pub fn as_args(&self) -> Vec<std::ffi::OsString> {
        let mut args = Vec::new();
        for (flag, roots) in
            [("--copilot-root", &self.copilot), ("--claude-root", &self.claude), ("--codex-root", &self.codex)]
        {
            for root in roots {
                args.push(flag.into());
                args.push(root.clone().into_os_string());
            }
        }
        args
    }
}

/// `config.toml`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub copilot_roots: Vec<PathBuf>,
    #[serde(default)]
    pub claude_roots: Vec<PathBuf>,
    #[serde(default)]
    pub codex_roots: Vec<PathBuf>,
    #[serde(default)]
    pub gate: GateConfig,
    /// The jury `panel` and the gate's panel policies convene.
    #[serde(default)]
    pub jury: Option<JuryConfig>,
    #[serde(default)]
    pub server: ServerLimits,
    /// Whether `judge-evidence` and `judge-hook` start judged when its socket does not
    /// answer (default true; read by them, not by the daemon).
    #[serde(default)]
    pub auto_start: Option<bool>,
}

/// `[server]`: what the socket grants its clients. The defaults suit any user; a test
/// lowers them to watch each limit work.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerLimits {
    /// Seconds a connection may sit between requests.
    pub idle_seconds: u64,
    /// Seconds a client has to finish a frame it started.
    pub frame_seconds: u64,
    /// Connections served at once (fewer when the descriptor limit is low).
    pub max_connections: usize,
    /// MiB of large requests held for all clients together; a frame of up to 64 KiB is
    /// not counted (the connection limit bounds those).
    pub buffered_mib: usize,
}

impl Default for ServerLimits {
    fn default() -> ServerLimits {
        ServerLimits { idle_seconds: 30, frame_seconds: 10, max_connections: 512, buffered_mib: 64 }
    }
}

impl ConfigFile {
    /// Read the file; a missing file is the empty config, a malformed one an error
    /// naming the file and what is wrong.
    pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
        Ok(read_toml(path)?.unwrap_or_default())
    }
}

impl Config {
    /// Flags over the config file over the hosts' defaults.
    pub fn resolve(flags: RootFlags) -> Result<Config, ConfigError> {
        let path = judged_protocol::paths::config_path();
        let file = ConfigFile::load(&path)?;
        // A jury that cannot run is refused at start, not at the first gated task.
        if let Some(jury) = &file.jury {
            jury.validate().map_err(|source| ConfigError::Jury { path: path.clone(), source })?;
        }
        let pick = |flags: Vec<PathBuf>, configured: Vec<PathBuf>, default: PathBuf| {
            if !flags.is_empty() {
                flags
            } else if !configured.is_empty() {
                configured
            } else {
                vec![default]
            }
        };
        let absolute = |roots: Vec<PathBuf>| {
            roots.into_iter().map(|r| PathBuf::from(judged_core::files::resolve(&r.to_string_lossy()))).collect()
        };
        Ok(Config {
            data_dir: judged_protocol::paths::data_dir(),
            socket_dir: judged_protocol::paths::socket_dir(),
            roots: Roots {
                copilot: absolute(pick(flags.copilot, file.copilot_roots, judged_core::files::default_copilot_root())),
                claude: absolute(pick(flags.claude, file.claude_roots, judged_core::files::default_claude_root())),
                codex: absolute(pick(flags.codex, file.codex_roots, judged_core::files::default_codex_root())),
                named: Vec::new(),
            },
            gate: file.gate,
            jury: file.jury,
            server: file.server,
            path,
        })
    }

    pub fn socket_dir(&self) -> PathBuf {
        self.socket_dir.clone()
    }

    pub fn socket_path(&self) -> PathBuf {
        self.socket_dir.join("judged.sock")
    }
}

/// What the gate does with a question it cannot judge.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    Block,
    Allow,
}

impl OnError {
    pub fn as_str(self) -> &'static str {
        match self {
            OnError::Block => "block",
            OnError::Allow => "allow",
        }
    }
}

/// One layer of gate settings; unset fields fall through to the layer below.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct GateLayer {
    pub policy: Option<GatePolicy>,
    pub freshness_seconds: Option<u64>,
    pub min_task_chars: Option<usize>,
    pub on_error: Option<OnError>,
    /// Allow only while the working tree is the one the review saw (off by default).
    pub require_reviewed_tree: Option<bool>,
    pub events: Option<Vec<String>>,
    /// The rubric the jury judges a task by under the panel policies (default
    /// `spec-coherence`, the reference gate's).
    pub panel_rubric: Option<String>,
    /// The least assurance of the reviewer's identity evidence must have to count
    /// (default `host-recorded`; `caller-declared` also accepts a review only its caller
    /// vouches for).
    pub evidence_assurance: Option<IdentityAssurance>,
}

/// A `[[gate.projects]]` entry: a layer for the projects under `path`.
#[derive(Clone, Debug, Deserialize)]
pub struct ProjectLayer {
    pub path: PathBuf,
    #[serde(flatten)]
    pub layer: GateLayer,
}

/// `[gate]` of the user's config.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct GateConfig {
    #[serde(flatten)]
    pub base: GateLayer,
    #[serde(default)]
    pub projects: Vec<ProjectLayer>,
    /// Whether a repository's own `.judged.toml` is read (default true). An agent can
    /// write its repository, so a user who does not trust it to set its own gate turns
    /// this off and keeps per-project policy in `[[gate.projects]]`.
    pub trust_project_files: Option<bool>,
}
