//! File-system notifications as hints: a changed path is caught up at once; anything
//! else (a new session directory, a root that appeared, an overflow) and a periodic
//! tick reconcile everything. Queries never depend on this latency: they catch up first.

use crate::engine::actor::EngineHandle;
use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// How often roots are reconciled even without notifications.
const RECONCILE_EVERY: Duration = Duration::from_secs(2);

/// Watch the roots and hand the engine what changed, until `shutdown`.
pub fn spawn(engine: EngineHandle, mut shutdown: watch::Receiver<bool>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<PathBuf>>();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let paths = match event {
            // Our own reads of watched files and directories raise open/read/close
            // events; following them would make every catch-up trigger the next.
            Ok(event) if event.kind.is_access() => return,
            Ok(event) if event.need_rescan() => Vec::new(),
            Ok(event) => event.paths,
            Err(_) => Vec::new(),
        };
        let _ = tx.send(paths);
    });
    let mut watcher = match watcher {
        Ok(w) => Some(w),
        Err(error) => {
            tracing::warn!(%error, "file notifications unavailable; polling only");
            None
        }
    };
    let mut watched: Vec<PathBuf> = Vec::new();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(RECONCILE_EVERY);
        loop {
            let paths = tokio::select! {
                _ = shutdown.changed() => return,
                _ = tick.tick() => Vec::new(),
                Some(paths) = rx.recv() => paths,
            };
            let roots = engine.follow(coalesce(paths, &mut rx)).await;
            add_watches(&mut watcher, &roots, &mut watched);
        }
    });
}

/// `first` and every hint already waiting, as one: a burst of new session directories
/// (thousands at once) costs one reconcile, not one each. An empty list means reconcile.
fn coalesce(first: Vec<PathBuf>, waiting: &mut mpsc::UnboundedReceiver<Vec<PathBuf>>) -> Vec<PathBuf> {
    let mut everything = first.is_empty();
    let mut paths = first;
    while let Ok(more) = waiting.try_recv() {
        everything |= more.is_empty();
        paths.extend(more);
    }
    if everything {
        return Vec::new();
    }
    paths.sort();
    paths.dedup();
    paths
}

fn add_watches(watcher: &mut Option<RecommendedWatcher>, roots: &[PathBuf], watched: &mut Vec<PathBuf>) {
    let Some(watcher) = watcher else { return };
    for root in roots {
        if !root.is_dir() || watched.contains(root) {
            continue;
        }
        match watcher.watch(root, RecursiveMode::Recursive) {
            Ok(()) => watched.push(root.clone()),
            Err(error) => tracing::warn!(root = %root.display(), %error, "cannot watch root"),
        }
    }
}
