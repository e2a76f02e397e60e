//! The daemon's configuration: where it keeps its files, which roots it watches, what the
//! socket grants, the gate's settings and the jury.
//!
//! Roots: command-line flags, then the config file, then the hosts' own environment
//! variables (`COPILOT_HOME`, `CLAUDE_CONFIG_DIR`, `CODEX_HOME`), then their defaults.
//! The schema is `judged_protocol::config`'s, shared with judge-evidence and auto-start.
//! The gate and the jury follow `config.toml` and each project's
//! `.judged.toml` as they change, keeping the last good version of a file whose edit does
//! not parse ([`live`]).

mod live;

use judged_core::event::Host;
pub use judged_protocol::config::{
    AttestConfig, ConfigError, ConfigFile, GateConfig, GateLayer, OnError, ProjectLayer, ProjectTrust, ServerLimits,
    StoreConfig, parse_toml,
};
pub use live::{ConfigChange, LiveConfig, ProjectFiles};

use judged_io::files::{HostRoots, Roots};
use judged_protocol::ConfigFileUsed;
use std::path::{Path, PathBuf};

/// The daemon's settings, resolved at start.
#[derive(Clone, Debug)]
pub struct Config {
    pub data_dir: PathBuf,
    socket_dir: PathBuf,
    pub roots: Roots,
    /// The OpenCode databases whose sessions are read into the OpenCode roots.
    pub opencode_databases: Vec<PathBuf>,
    /// How many clients, bytes and seconds the socket grants.
    pub server: ServerLimits,
    /// The config file, as read at start; the gate and the jury follow its changes.
    pub user: UserConfig,
    /// The config file's path.
    pub path: PathBuf,
    /// The users it serves besides its own (`[server] allow_users`, resolved): a witness
    /// under its own account. Empty: the daemon is its user's alone.
    pub serves: Vec<u32>,
}

/// The SHA-256 of a file's bytes, in hex: what names the version of a config a decision
/// was made under.
pub fn digest_of_bytes(bytes: &[u8]) -> String {
    judged_core::chain::to_hex(&judged_core::chain::sha256(bytes))
}

/// `config.toml` as the daemon uses it: parsed, its jury checked, and which bytes it was
/// read from.
#[derive(Clone, Debug, Default)]
pub struct UserConfig {
    pub file: ConfigFile,
    /// The file and its digest (`None`: there is no file, the defaults are in force).
    pub used: ConfigFileUsed,
}

impl UserConfig {
    /// Read and check `path`; a missing file is the defaults.
    pub fn load(path: &Path) -> Result<UserConfig, ConfigError> {
        match judged_io::config_file::read(path)? {
            None => Ok(UserConfig::defaults(path)),
            Some(bytes) => UserConfig::parse(path, &bytes),
        }
    }

    /// The defaults, in force because there is no file at `path`.
    pub fn defaults(path: &Path) -> UserConfig {
        UserConfig { file: ConfigFile::default(), used: ConfigFileUsed { path: path.to_owned(), sha256: None } }
    }

    /// Check the bytes of `path`.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<UserConfig, ConfigError> {
        let file = ConfigFile::parse(path, bytes)?;
        let used = ConfigFileUsed { path: path.to_owned(), sha256: Some(digest_of_bytes(bytes)) };
        Ok(UserConfig { file, used })
    }
}

/// Roots named on the command line, one flag per host named after its config key
/// (`--claude-root` for `claude_roots`); each replaces the config file's for its host.
#[derive(Clone, Debug, Default)]
pub struct RootFlags(HostRoots);

impl RootFlags {
    /// The flag naming `host`'s roots, without its dashes.
    fn flag(host: Host) -> String {
        format!("{}-root", judged_core::adapter::of(host).roots_key().trim_end_matches("_roots"))
    }

    /// The roots named for `host`.
    pub fn of(&self, host: Host) -> &[PathBuf] {
        self.0.of(host)
    }

    /// The flags again, to start another `judged` with the same roots.
    pub fn as_args(&self) -> Vec<std::ffi::OsString> {
        let mut args = Vec::new();
        for (host, roots) in self.0.iter() {
            for root in roots {
                args.push(format!("--{}", RootFlags::flag(host)).into());
                args.push(root.clone().into_os_string());
            }
        }
        args
    }
}

impl clap::FromArgMatches for RootFlags {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<RootFlags, clap::Error> {
        let mut flags = RootFlags::default();
        flags.update_from_arg_matches(matches)?;
        Ok(flags)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        for host in Host::ALL {
            if let Some(roots) = matches.get_many::<PathBuf>(&RootFlags::flag(host)) {
                self.0 = std::mem::take(&mut self.0).with(host, roots.cloned().collect());
            }
        }
        Ok(())
    }
}

impl clap::Args for RootFlags {
    fn augment_args(command: clap::Command) -> clap::Command {
        Host::ALL.into_iter().fold(command, |command, host| {
            let log = judged_core::adapter::of(host);
            let flag = RootFlags::flag(host);
            command.arg(
                clap::Arg::new(flag.clone())
                    .long(flag)
                    .value_name("DIR")
                    .action(clap::ArgAction::Append)
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(format!(
                        "Watch this root of {} (repeatable; replaces the config's `{}`)",
                        log.root_noun(),
                        log.roots_key()
                    )),
            )
        })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        RootFlags::augment_args(command)
    }
}

/// OpenCode's own database: `$XDG_DATA_HOME/opencode/opencode.db`, else
/// `~/.local/share/opencode/opencode.db`.
pub fn default_opencode_database() -> PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()).map(PathBuf::from);
    data.unwrap_or_else(|| judged_io::files::home_dir().join(".local/share")).join("opencode/opencode.db")
}

impl Config {
    /// Flags over the config file over the hosts' defaults.
    pub fn resolve(flags: RootFlags) -> Result<Config, ConfigError> {
        let path = judged_protocol::paths::config_path();
        let user = UserConfig::load(&path)?;
        let file = &user.file;
        let pick = |flags: &[PathBuf], configured: &[PathBuf], default: PathBuf| {
            if !flags.is_empty() {
                flags.to_vec()
            } else if !configured.is_empty() {
                configured.to_vec()
            } else {
                vec![default]
            }
        };
        let absolute = |roots: Vec<PathBuf>| {
            roots.into_iter().map(|r| PathBuf::from(judged_io::files::resolve(&r.to_string_lossy()))).collect()
        };
        Ok(Config {
            data_dir: judged_protocol::paths::data_dir(),
            socket_dir: judged_protocol::paths::socket_dir(),
            roots: Host::ALL.into_iter().fold(Roots::default(), |roots, host| {
                let default = judged_io::files::default_root(host);
                roots.with(host, absolute(pick(flags.of(host), file.roots_of(host), default)))
            }),
            opencode_databases: absolute(pick(&[], &file.opencode_databases, default_opencode_database())),
            serves: file
                .server
                .allow_users
                .iter()
                .map(|name| {
                    crate::account::uid_of(name)
                        .ok_or_else(|| ConfigError::UnknownUser { path: path.clone(), name: name.clone() })
                })
                .collect::<Result<_, _>>()?,
            server: file.server.clone(),
            user,
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
