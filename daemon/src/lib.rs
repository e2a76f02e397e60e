//! `judged-daemon`: the witness, the daemon that watches coding-agent session logs. The
//! `judged` binary (judged/) runs it, and holds the setup and operations around it.
//!
//! Layout, in the order a request flows: [`server`] (socket, frames, peer check) →
//! [`engine`] (the one owner of the state, one file per operation) → [`ingest`]
//! (tailing, tamper checks) → [`store`] (append-only hash-chained SQLite). The review
//! gate a hook asks is [`hook_gate`]; [`witness`] signs what the daemon issues.

pub mod account;
pub mod caller;
pub mod config;
pub mod engine;
pub mod hook_gate;
pub mod ingest;
mod integrity;
pub mod jury;
mod logs;
pub mod server;
pub mod store;
mod tree_watch;
mod watch;
pub mod witness;

use config::Config;
use engine::Engine;
use engine::actor::EngineHandle;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Why the daemon could not start or run.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("judged is already running (pid file {} is locked)", .0.display())]
    AlreadyRunning(PathBuf),
    #[error("{} must be a directory owned by this user (not a symlink)", .0.display())]
    NotOurDirectory(PathBuf),
    #[error("cannot {action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: std::io::Error },
    #[error("cannot start the async runtime or the engine thread: {0}")]
    Threads(std::io::Error),
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error("cannot listen on the socket: {0}")]
    Bind(#[from] server::BindError),
    #[error(transparent)]
    Witness(#[from] witness::WitnessError),
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> DaemonError + use<> {
    let path = path.to_owned();
    move |source| DaemonError::Io { action, path, source }
}

/// Create `dir` with mode 0700 if needed and check it is ours and private.
pub fn private_dir(dir: &Path) -> Result<(), DaemonError> {
    owned_dir(dir, 0o700)
}

/// Create `dir` with mode 0755 if needed and check it is ours and writable by us alone:
/// the socket directory of a witness serving other users.
pub fn open_dir(dir: &Path) -> Result<(), DaemonError> {
    owned_dir(dir, 0o755)
}

/// Create `dir` with `mode` if needed, check it is ours (not a symlink), and set `mode`
/// again when what its group and others may do differs from it.
fn owned_dir(dir: &Path, mode: u32) -> Result<(), DaemonError> {
    fs::DirBuilder::new().recursive(true).mode(mode).create(dir).map_err(io_error("create", dir))?;
    let meta = fs::symlink_metadata(dir).map_err(io_error("stat", dir))?;
    if !meta.is_dir() || meta.uid() != judged_io::files::current_uid() {
        return Err(DaemonError::NotOurDirectory(dir.to_owned()));
    }
    if meta.mode() & 0o077 != mode & 0o077 {
        fs::set_permissions(dir, fs::Permissions::from_mode(mode)).map_err(io_error("set the mode of", dir))?;
    }
    Ok(())
}

/// Take the pid file's lock and write our pid into it; the lock lasts as long as the file.
fn lock_pid_file(path: &Path) -> Result<File, DaemonError> {
    let mut pid_file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(io_error("open", path))?;
    if pid_file.try_lock().is_err() {
        return Err(DaemonError::AlreadyRunning(path.to_owned()));
    }
    pid_file.set_len(0).map_err(io_error("truncate", path))?;
    writeln!(pid_file, "{}", std::process::id()).map_err(io_error("write", path))?;
    Ok(pid_file)
}

/// Run the daemon in the foreground until `shutdown` or a signal. The pid file stays
/// locked until the process exits, so a process runs it once.
pub fn run(config: Config) -> Result<(), DaemonError> {
    private_dir(&config.data_dir)?;
    let shared = !config.serves.is_empty();
    if shared {
        open_dir(&config.socket_dir())?;
    } else {
        private_dir(&config.socket_dir())?;
    }
    let pid_path = config.data_dir.join("judged.pid");
    let pid_lock = lock_pid_file(&pid_path)?;

    let started = Instant::now();
    let store = store::Store::open(&config.data_dir.join("judged.db"))?;
    let witness = witness::Witness::load_or_create(&config.data_dir)?;
    let socket = config.socket_path();
    let ingest = ingest::Ingestor::new(config.roots.clone())
        .serving(&config.serves)
        .transcribing(ingest::transcribers(&config.opencode_databases));
    let live = config::LiveConfig::new(config.path.clone(), config.user.clone());
    // The socket answers `progress` during the catch-up on start; everything else waits
    // for it (read-your-writes holds from the first answer on).
    let catch_up = std::sync::Arc::new(ingest::CatchUpProgress::default());
    let engine =
        Engine::new(store, ingest, live, catch_up.clone(), witness, started, config.data_dir.clone(), socket.clone());
    let (handle, engine_thread) = EngineHandle::spawn(engine, catch_up.clone()).map_err(DaemonError::Threads)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(DaemonError::Threads)?;
    runtime.block_on(async {
        let listener = server::bind(&socket, shared)?;
        tracing::info!(socket = %socket.display(), "listening");
        let (shutdown, _) = tokio::sync::watch::channel(false);
        watch::spawn(handle.clone(), shutdown.subscribe());
        let signals = shutdown.clone();
        let reload = handle.clone();
        tokio::spawn(async move {
            // `SIGHUP` reads config.toml again at once, as daemons do; the engine also
            // notices a change by itself before each decision.
            let Ok(mut hangup) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) else {
                return;
            };
            while hangup.recv().await.is_some() {
                reload.reload_config().await;
            }
        });
        tokio::spawn(async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("signal handler");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            let _ = signals.send(true);
        });
        server::serve(listener, handle, shutdown, &config.server, &config.serves, catch_up).await;
        Ok::<(), DaemonError>(())
    })?;
    // Dropping the runtime drops every task's handle to the engine; the engine thread
    // then finishes its last job and closes the store.
    drop(runtime);
    engine_thread.join();
    let _ = fs::remove_file(&socket);
    let _ = fs::remove_file(&pid_path);
    tracing::info!("stopped");
    // Held until the process exits, when the kernel lets go of it: `judged stop` returns
    // once it is free, so the daemon it stopped is gone, not just done with its store.
    std::mem::forget(pid_lock);
    Ok(())
}
