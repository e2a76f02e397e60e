//! The checkpoint thread.

use super::{Result, StoreError};
use rusqlite::Connection;
use std::path::Path;

/// Copies the write-ahead log into the database on a thread of its own, with its own
/// connection, so a commit never waits for a checkpoint: catching up a large root
/// otherwise spent a fifth of its time checkpointing, on the one thread that ingests.
///
/// Once it has copied the whole log, it also restarts the log with a write of its own.
/// SQLite restarts a log that is wholly copied at the next write, and syncs the new
/// header there: left to the engine, that sync (0.4 ms here) fell on the first request
/// after every pause, so on every hook of a user who is not typing.
pub(super) struct Checkpointer {
    commits: std::sync::mpsc::SyncSender<()>,
}

impl Checkpointer {
    /// The least time between two checkpoints: each syncs the database file.
    pub(super) const EVERY: std::time::Duration = std::time::Duration::from_millis(250);
    /// A log this long (in pages: 256 MB of 16 KB pages) is restarted. Each restart stalls
    /// the writer for a sync; at 64 MB a 1 GB catch-up took 8 s instead of 5.
    const RESTART_PAGES: i64 = 16000;

    pub(super) fn start(path: &Path) -> Result<Checkpointer> {
        let conn = Connection::open(path)?;
        let (commits, committed) = std::sync::mpsc::sync_channel::<()>(1);
        std::thread::Builder::new()
            .name("checkpoint".into())
            .spawn(move || {
                // After commits until the store is dropped (the channel closes), then once
                // more.
                let (mut logged, mut backfilled) = (0, 0);
                loop {
                    let open = committed.recv().is_ok();
                    // PASSIVE copies what readers allow and never blocks the writer. Copy
                    // again at once while there was something to copy (a bulk catch-up),
                    // and pause once caught up. A writer that never pauses keeps the log
                    // from restarting, though (its start moves only once a checkpoint
                    // has caught up with its end), so once the log is long, RESTART:
                    // it waits for the writer's transaction, copies the little the last
                    // passes left, and the next commit writes the log from its start.
                    loop {
                        let mode = if logged >= Self::RESTART_PAGES { "RESTART" } else { "PASSIVE" };
                        let pass = conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| {
                            Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
                        });
                        match pass {
                            Ok((log, now)) => {
                                // Pages copied into the database so far; the count
                                // starts again from zero when the log restarts.
                                let copied = if now >= backfilled { now - backfilled } else { now };
                                (logged, backfilled) = (log, now);
                                if copied == 0 {
                                    break;
                                }
                            }
                            Err(error) => {
                                tracing::warn!(%error, "checkpoint failed");
                                break;
                            }
                        }
                    }
                    if !open {
                        break;
                    }
                    if logged > 0 && logged == backfilled {
                        match Self::restart_log(&conn) {
                            Ok(()) => (logged, backfilled) = (1, 0),
                            Err(error) => tracing::warn!(%error, "restarting the log failed"),
                        }
                    }
                    std::thread::sleep(Self::EVERY);
                }
            })
            .map_err(StoreError::Thread)?;
        Ok(Checkpointer { commits })
    }

    /// Restart the wholly copied log: one row rewritten, which makes SQLite start the log
    /// again from its beginning, header synced, here.
    fn restart_log(conn: &Connection) -> rusqlite::Result<()> {
        conn.execute(
            "INSERT INTO log_restarts (id, count) VALUES (1, 1) ON CONFLICT (id) DO UPDATE SET count = count + 1",
            [],
        )
        .map(drop)
    }

    /// Note a commit; a checkpoint follows within [`Checkpointer::EVERY`].
    pub(super) fn poke(&self) {
        let _ = self.commits.try_send(());
    }
}
