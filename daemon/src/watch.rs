//! File-system notifications as hints: a changed path is caught up at once; anything
//! else (a new session directory, a root that appeared, an overflow) and a periodic
//! tick reconcile everything. Queries never depend on this latency: they catch up first.

use crate::engine::actor::EngineHandle;
use crate::ingest::Hint;
use notify::event::{EventKind, ModifyKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// How often roots are reconciled even without notifications.
const RECONCILE_EVERY: Duration = Duration::from_secs(2);

/// Watch the roots and hand the engine what changed, until `shutdown`.
pub fn spawn(engine: EngineHandle, mut shutdown: watch::Receiver<bool>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<Hint>>();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let hints = match event {
            // Our own reads of watched files and directories raise open/read/close
            // events; following them would make every catch-up trigger the next.
            Ok(event) if event.kind.is_access() => return,
            Ok(event) if event.need_rescan() => Vec::new(),
            Ok(event) => {
                // When it was heard, not when the engine gets to it: a write on a log that
                // did not grow was made in place, even once the bytes are back.
                let written =
                    matches!(event.kind, EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Any)).then(Instant::now);
                event.paths.into_iter().map(|path| Hint { path, written }).collect()
            }
            Err(_) => Vec::new(),
        };
        let _ = tx.send(hints);
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
            let hints = tokio::select! {
                _ = shutdown.changed() => return,
                _ = tick.tick() => Vec::new(),
                Some(hints) = rx.recv() => hints,
            };
            let roots = engine.follow(coalesce(hints, &mut rx)).await;
            add_watches(&mut watcher, &roots, &mut watched);
        }
    });
}

/// `first` and every hint already waiting, as one: a burst of new session directories
/// (thousands at once) costs one reconcile, not one each. An empty list means reconcile.
/// A path heard written is kept with the first time it was, so a write merged with the
/// notifications after it is still one the engine checks as a write.
fn coalesce(first: Vec<Hint>, waiting: &mut mpsc::UnboundedReceiver<Vec<Hint>>) -> Vec<Hint> {
    let mut everything = first.is_empty();
    let mut hints = first;
    while let Ok(more) = waiting.try_recv() {
        everything |= more.is_empty();
        hints.extend(more);
    }
    if everything {
        return Vec::new();
    }
    // By path; for each, a hint heard written before one not, the earliest first: if
    // any write is one no look accounted for, the earliest is.
    hints.sort_by(|a, b| {
        a.path.cmp(&b.path).then(a.written.is_none().cmp(&b.written.is_none())).then(a.written.cmp(&b.written))
    });
    hints.dedup_by(|later, kept| later.path == kept.path);
    hints
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
