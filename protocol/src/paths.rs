//! Where `judged` keeps its files. One function per location, so the daemon, the CLI
//! and the hook shim can never disagree.
//!
//! `JUDGED_HOME`, when set, holds everything. Otherwise XDG: data in
//! `$XDG_DATA_HOME/judged` (default `~/.local/share/judged`), the socket in
//! `$XDG_RUNTIME_DIR/judged/` when that is set (else the data dir), config in
//! `$XDG_CONFIG_HOME/judged/config.toml` (default `~/.config/judged/config.toml`).
//!
//! A witness under its own account (`judged service install --system`) runs with
//! `XDG_DATA_HOME=/var/lib`, `XDG_RUNTIME_DIR=/run` and `XDG_CONFIG_HOME=/etc`, so the same
//! functions place its store in `/var/lib/judged`, its socket at [`WITNESS_SOCKET`] and
//! its config in `/etc/judged/config.toml`. A client of a user who runs no daemon of their
//! own talks to that socket.

use std::env;
use std::path::{Path, PathBuf};

/// The socket of a witness under its own account.
pub const WITNESS_SOCKET: &str = "/run/judged/judged.sock";

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

/// The socket of this user's own daemon: where `judged start` listens.
pub fn own_socket_path() -> PathBuf {
    socket_dir().join("judged.sock")
}

/// The socket a client talks to: a witness account's ([`WITNESS_SOCKET`]) wherever one
/// serves this machine, else this user's own daemon's. A daemon the user (or the agent
/// under judgment) starts of its own does not take the hooks from the witness; only
/// `JUDGED_HOME`, set in the client's own environment, names the user's own instead.
pub fn socket_path() -> PathBuf {
    let witness = Path::new(WITNESS_SOCKET);
    if var("JUDGED_HOME").is_none() && witness.exists() { witness.to_path_buf() } else { own_socket_path() }
}

/// The socket the gate (`judge-hook`) asks: a witness account's wherever one serves this
/// machine, whatever the hook's environment says, else this user's own daemon's. A hook's
/// environment is partly its project's (Claude Code's settings `env`, Gemini CLI's and Qwen
/// Code's `.env` files): a `JUDGED_HOME` the agent under judgment puts there must not take
/// its gate from the witness to a daemon of its own with the gate off.
pub fn gate_socket_path() -> PathBuf {
    let witness = Path::new(WITNESS_SOCKET);
    if witness.exists() { witness.to_path_buf() } else { own_socket_path() }
}

/// Whether `socket` is a witness account's, whose daemon no client starts.
pub fn is_witness_socket(socket: &Path) -> bool {
    socket == Path::new(WITNESS_SOCKET)
}

/// The user's config file.
pub fn config_path() -> PathBuf {
    match var("JUDGED_HOME") {
        Some(home) => home.join("config.toml"),
        None => var("XDG_CONFIG_HOME").unwrap_or_else(|| home().join(".config")).join("judged/config.toml"),
    }
}
