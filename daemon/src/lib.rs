//! `judged`: the daemon that witnesses coding-agent session logs.
//!
//! Layout, in the order a request flows: [`server`] (socket, frames, peer check) →
//! [`engine`] (one function per operation) → [`ingest`] (tailing, tamper checks) →
//! [`store`] (append-only hash-chained SQLite). [`witness`] signs what the daemon issues.

pub mod config;
pub mod engine;
pub mod gate;
pub mod ingest;
pub mod install;
pub mod server;
pub mod store;
mod watch;
pub mod witness;

use config::Config;
use engine::Engine;
use std::fs::{self, File};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("judged is already running (pid file {0} is locked)")]
    AlreadyRunning(String),
    #[error("{0}")]
    Setup(String),
    #[error(transparent)]
    Store(#[from] store::StoreError),
}

fn setup(message: String) -> DaemonError {
    DaemonError::Setup(message)
}

/// Create `dir` with mode 0700 if needed and check it is ours and private.
pub fn private_dir(dir: &Path) -> Result<(), DaemonError> {
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| setup(format!("cannot create {}: {e}", dir.display())))?;
    let meta = fs::symlink_metadata(dir).map_err(|e| setup(format!("cannot stat {}: {e}", dir.display())))?;
    if !meta.is_dir() || meta.uid() != judged_core::files::current_uid() {
        return Err(setup(format!("{} must be a directory owned by this user (not a symlink)", dir.display())));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|e| setup(format!("cannot make {} private: {e}", dir.display())))?;
    }
    Ok(())
}

/// Run the daemon in the foreground until `shutdown` or a signal.
pub fn run(config: Config) -> Result<(), DaemonError> {
    private_dir(&config.data_dir)?;
    private_dir(&config.socket_dir())?;
    let pid_path = config.data_dir.join("judged.pid");
    let pid_file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&pid_path)
        .map_err(|e| setup(format!("cannot open {}: {e}", pid_path.display())))?;
    if pid_file.try_lock().is_err() {
        return Err(DaemonError::AlreadyRunning(pid_path.display().to_string()));
    }
    pid_file.set_len(0).and_then(|_| fs::write(&pid_path, format!("{}\n", std::process::id()))).ok();

    let store = store::Store::open(&config.data_dir.join("judged.db"))?;
    let witness = witness::Witness::load_or_create(&config.data_dir.join("witness.key"))
        .map_err(|e| setup(format!("witness key: {e}")))?;
    let mut ingest = ingest::Ingestor::new(store, config.roots.clone());
    // On start: re-check the store's own chains, re-hash every ingested prefix against
    // its file, then catch up from the stored offsets.
    if let Err(error) = ingest.store.verify_chains() {
        tracing::error!(%error, "the store's own history does not verify");
        ingest.store.journal("store_integrity_failed", &serde_json::json!({"error": error.to_string()}))?;
    }
    let files: Vec<store::FileState> = ingest.store.files().cloned().collect();
    for file in files {
        ingest.verify_prefix(&file)?;
    }
    ingest.catch_up_all()?;
    tracing::info!(files = ingest.store.files().count(), "caught up");

    let socket = config.socket_path();
    let engine = Arc::new(Mutex::new(Engine {
        ingest,
        logs: engine::LogCache::default(),
        resolved_cwds: Default::default(),
        gate: config.gate.clone(),
        witness,
        started: Instant::now(),
        data_dir: config.data_dir.clone(),
        socket: socket.clone(),
    }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| setup(format!("runtime: {e}")))?;
    runtime.block_on(async {
        let listener =
            server::bind(&socket).map_err(|e| setup(format!("cannot listen on {}: {e}", socket.display())))?;
        tracing::info!(socket = %socket.display(), "listening");
        let (shutdown, _) = tokio::sync::watch::channel(false);
        watch::spawn(engine.clone(), shutdown.subscribe());
        let signals = shutdown.clone();
        tokio::spawn(async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("signal handler");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            let _ = signals.send(true);
        });
        server::serve(listener, engine, shutdown).await;
        Ok::<(), DaemonError>(())
    })?;
    let _ = fs::remove_file(&socket);
    let _ = fs::remove_file(&pid_path);
    tracing::info!("stopped");
    Ok(())
}
