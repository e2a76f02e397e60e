//! Where the daemon keeps its files and which roots it watches.
//!
//! Precedence: command-line flags, then the config file, then the hosts' own
//! environment variables (`COPILOT_HOME`, `CLAUDE_CONFIG_DIR`), then their defaults.

use judged_core::files::Roots;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub struct Config {
    pub data_dir: PathBuf,
    socket_dir: PathBuf,
    pub roots: Roots,
    pub gate: crate::gate::GateConfig,
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
    pub gate: crate::gate::GateConfig,
}

impl ConfigFile {
    /// Read the file; a missing file is the empty config, a malformed one an error
    /// naming the file and what is wrong.
    pub fn load(path: &Path) -> Result<ConfigFile, String> {
        match std::fs::read_to_string(path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(ConfigFile::default()),
            Err(error) => Err(format!("cannot read {}: {error}", path.display())),
            Ok(text) => toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
        }
    }
}

impl Config {
    pub fn resolve(copilot_flags: Vec<PathBuf>, claude_flags: Vec<PathBuf>) -> Result<Config, String> {
        let file = ConfigFile::load(&judged_protocol::paths::config_path())?;
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
                copilot: absolute(pick(copilot_flags, file.copilot_roots, judged_core::files::default_copilot_root())),
                claude: absolute(pick(claude_flags, file.claude_roots, judged_core::files::default_claude_root())),
                named: Vec::new(),
            },
            gate: file.gate,
        })
    }

    pub fn socket_dir(&self) -> PathBuf {
        self.socket_dir.clone()
    }

    pub fn socket_path(&self) -> PathBuf {
        self.socket_dir.join("judged.sock")
    }
}
