//! Where `judged` keeps its files. One function per location, so the daemon, the CLI
//! and the hook shim can never disagree.
//!
//! `JUDGED_HOME`, when set, holds everything. Otherwise XDG: data in
//! `$XDG_DATA_HOME/judged` (default `~/.local/share/judged`), the socket in
//! `$XDG_RUNTIME_DIR/judged/` when that is set (else the data dir), config in
//! `$XDG_CONFIG_HOME/judged/config.toml` (default `~/.config/judged/config.toml`).

use std::env;
use std::path::PathBuf;

fn var(name: &str) -> Option<PathBuf> {
    env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

fn home() -> PathBuf {
    var("HOME").unwrap_or_else(|| PathBuf::from("/"))
}

/// The directory holding the store, the witness key and the daemon's log.
pub fn data_dir() -> PathBuf {
    var("JUDGED_HOME")
        .unwrap_or_else(|| var("XDG_DATA_HOME").unwrap_or_else(|| home().join(".local/share")).join("judged"))
}

/// The directory holding the socket (created 0700 by the daemon).
pub fn socket_dir() -> PathBuf {
    match (var("JUDGED_HOME"), var("XDG_RUNTIME_DIR")) {
        (Some(home), _) => home,
        (None, Some(runtime)) => runtime.join("judged"),
        (None, None) => data_dir(),
    }
}

/// The daemon's socket.
pub fn socket_path() -> PathBuf {
    socket_dir().join("judged.sock")
}

/// The user's config file.
pub fn config_path() -> PathBuf {
    match var("JUDGED_HOME") {
        Some(home) => home.join("config.toml"),
        None => var("XDG_CONFIG_HOME").unwrap_or_else(|| home().join(".config")).join("judged/config.toml"),
    }
}
