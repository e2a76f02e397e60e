//! The append-only, hash-chained SQLite store.
//!
//! Three tables of record: `lines` (every complete line of every watched log, raw bytes
//! kept, chained per file: [`lines`]), `journal` (the daemon's own decisions, chained:
//! [`journal`]), and `files` (per-file ingest state: [`files`]). Lines and journal are
//! append-only, enforced by triggers. The `files` row is derived: replay
//! (`crate::ingest::replay`) recomputes it from lines and journal. A batch of lines and
//! the file's new offset commit in one transaction, so a crash loses nothing and
//! duplicates nothing. Checkpoints run on their own thread ([`checkpoint`]).

mod checkpoint;
mod codec;
mod files;
mod journal;
mod lines;

pub use files::FileState;
pub use journal::{
    AskedBy, Attested, ChallengeIssued, ConfigLoaded, ConfigRejected, EvidenceVerified, FileRefused, Finding,
    IntegrityFinding, JournalBody, JournalEvent, JurorRan, JuryConvened, LinesPruned, Lookup, MalformedLine,
    MarkerSeen, ReviewTraced, SessionBegan, StoreIntegrityFailed, TamperDetected,
};
pub use lines::{Batch, Columns, NewLine, StoredLine};

use checkpoint::Checkpointer;
use judged_core::chain::Hash;
use rusqlite::Connection;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::path::Path;

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("store integrity: {0}")]
    Integrity(String),
    #[error("cannot encode a journal event: {0}")]
    Body(serde_json::Error),
    #[error("cannot start the checkpoint thread: {0}")]
    Thread(std::io::Error),
    #[error("cannot compress or decompress a line: {0}")]
    Codec(std::io::Error),
    #[error(
        "the stored bytes of {path} (its first {lines} lines) were pruned from the store (`judged prune` or \
         [store] keep_days): their hashes and chain still check, but its records cannot be read again"
    )]
    Pruned { path: String, lines: u64 },
    #[error("cannot make {} owner-only: {source}", path.display())]
    Private { path: std::path::PathBuf, source: std::io::Error },
}

/// The store's result.
pub type Result<T> = std::result::Result<T, StoreError>;

const SCHEMA: &str = r#"
PRAGMA page_size = 16384;
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
-- Checkpoints run on their own thread (see `Checkpointer`); the writer's own, at twice
-- the thread's restart size, is only a backstop.
PRAGMA wal_autocheckpoint = 32000;
PRAGMA journal_size_limit = 67108864;
CREATE TABLE IF NOT EXISTS files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    host TEXT NOT NULL,
    session TEXT NOT NULL,
    session_id TEXT,
    cwd TEXT,
    offset INTEGER NOT NULL DEFAULT 0,
    lines INTEGER NOT NULL DEFAULT 0,
    chain BLOB NOT NULL,
    last_host_id TEXT,
    last_event_time TEXT,
    tampered INTEGER NOT NULL DEFAULT 0,
    findings INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS files_cwd ON files(cwd);
CREATE INDEX IF NOT EXISTS files_session ON files(session);
-- A rowid table: lines average a few KB, more than a WITHOUT ROWID row keeps inline,
-- and 16 KB pages keep most of them out of overflow chains (bench: +30% ingest).
CREATE TABLE IF NOT EXISTS lines (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    line_sha256 BLOB NOT NULL,
    chain BLOB NOT NULL,
    kind TEXT,
    raw BLOB NOT NULL,
    UNIQUE (file_id, seq)
);
-- The dictionaries lines are compressed with (store/codec.rs), one per host, written once.
CREATE TABLE IF NOT EXISTS dictionaries (
    id INTEGER PRIMARY KEY,
    host TEXT NOT NULL,
    bytes BLOB NOT NULL
);
-- One row the checkpoint thread rewrites once it has copied the whole log, so that the
-- log restarts (a new header, synced) on that thread, not under a request's commit.
CREATE TABLE IF NOT EXISTS log_restarts (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    count INTEGER NOT NULL
);
-- What a log's ends wait for (a call's result, a turn's next record), written with the
-- lines that led to it, so that a daemon started again takes it up.
CREATE TABLE IF NOT EXISTS ends_waiting (
    file_id INTEGER PRIMARY KEY REFERENCES files(id),
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    chain BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS journal_kind ON journal(kind);
-- Lookups by a field of one kind of event; partial, so an event is entered only in the
-- index of its own kind (every index entry is one more page a commit writes).
DROP INDEX IF EXISTS journal_key;
DROP INDEX IF EXISTS journal_witness;
CREATE INDEX IF NOT EXISTS journal_gate_key ON journal(json_extract(body, '$.key')) WHERE kind = 'gate_decided';
CREATE INDEX IF NOT EXISTS journal_challenge_witness ON journal(json_extract(body, '$.witness'))
    WHERE kind = 'challenge_issued';
CREATE INDEX IF NOT EXISTS journal_evidence_witness ON journal(json_extract(body, '$.witness'))
    WHERE kind = 'evidence_verified';
CREATE INDEX IF NOT EXISTS journal_evidence_id ON journal(json_extract(body, '$.evidence_id'))
    WHERE kind = 'evidence_verified';
CREATE INDEX IF NOT EXISTS journal_finding_file ON journal(json_extract(body, '$.file_id'))
    WHERE kind = 'integrity_finding';
CREATE INDEX IF NOT EXISTS journal_panel_key ON journal(json_extract(body, '$.key'))
    WHERE kind = 'panel_convened';
CREATE INDEX IF NOT EXISTS journal_evidence_git_tree ON journal(json_extract(body, '$.git_tree'))
    WHERE kind = 'evidence_verified';
CREATE INDEX IF NOT EXISTS journal_panel_git_tree ON journal(json_extract(body, '$.git_tree'))
    WHERE kind = 'panel_convened';
CREATE INDEX IF NOT EXISTS journal_attested_commit ON journal(json_extract(body, '$.commit'))
    WHERE kind = 'attested';
CREATE INDEX IF NOT EXISTS journal_bypass_log ON journal(json_extract(body, '$.path'))
    WHERE kind = 'completion_bypassed';
CREATE INDEX IF NOT EXISTS journal_challenge_nonce ON journal(json_extract(body, '$.nonce'))
    WHERE kind = 'challenge_issued';
CREATE INDEX IF NOT EXISTS journal_session_began_log ON journal(json_extract(body, '$.path'))
    WHERE kind = 'session_began';
-- Lines are append-only but for one change: pruning drops a line's bytes (raw empty,
-- codec -1) and keeps every other column, its hash and chain among them.
DROP TRIGGER IF EXISTS lines_append_only_u;
CREATE TRIGGER lines_append_only_u BEFORE UPDATE ON lines
WHEN NOT (NEW.raw = x'' AND NEW.codec = -1 AND NEW.id = OLD.id AND NEW.file_id = OLD.file_id AND NEW.seq = OLD.seq
          AND NEW.start = OLD.start AND NEW.end = OLD.end AND NEW.line_sha256 = OLD.line_sha256
          AND NEW.chain = OLD.chain AND NEW.kind IS OLD.kind)
BEGIN SELECT RAISE(ABORT, 'lines are append-only (pruning may only drop their bytes)'); END;
CREATE TRIGGER IF NOT EXISTS lines_append_only_d BEFORE DELETE ON lines BEGIN SELECT RAISE(ABORT, 'lines are append-only'); END;
CREATE TRIGGER IF NOT EXISTS dictionaries_append_only_u BEFORE UPDATE ON dictionaries BEGIN SELECT RAISE(ABORT, 'dictionaries are append-only'); END;
CREATE TRIGGER IF NOT EXISTS dictionaries_append_only_d BEFORE DELETE ON dictionaries BEGIN SELECT RAISE(ABORT, 'dictionaries are append-only'); END;
CREATE TRIGGER IF NOT EXISTS journal_append_only_u BEFORE UPDATE ON journal BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS journal_append_only_d BEFORE DELETE ON journal BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
"#;

/// The store: one connection, the one writer.
pub struct Store {
    conn: Connection,
    checkpointer: Checkpointer,
    /// The `files` table, mirrored in memory and written through: every query consults
    /// it, it has one row per log, and only this type changes it.
    files: BTreeMap<i64, FileState>,
    /// Fx: looked up for every log at every challenge; SipHash was a tenth of one.
    ids_by_path: FxHashMap<String, i64>,
    /// How lines' bytes are compressed and read back.
    codecs: codec::Codecs,
    /// The database file.
    path: std::path::PathBuf,
}

/// Bring a store of an earlier version up to this one's schema: lines gained a `codec`
/// column (a store written before reads as it is: its lines are raw, `codec` NULL).
fn migrate(conn: &Connection) -> Result<()> {
    let has_codec: bool =
        conn.query_row("SELECT count(*) FROM pragma_table_info('lines') WHERE name = 'codec'", [], |r| r.get(0))?;
    if !has_codec {
        conn.execute_batch("ALTER TABLE lines ADD COLUMN codec INTEGER")?;
    }
    Ok(())
}

/// A stored hash column. Only this module writes those columns, always 32 bytes; a
/// blob of another length (a hand-edited database) reads as zeros, which then fails
/// every chain check rather than panicking.
fn hash_from(blob: Vec<u8>) -> Hash {
    blob.try_into().unwrap_or([0; 32])
}

impl Store {
    /// Open (creating) the store at `path`, and start its checkpoint thread.
    pub fn open(path: &Path) -> Result<Store> {
        let mut conn = Connection::open(path)?;
        conn.execute_batch(SCHEMA)?;
        migrate(&conn)?;
        // The store holds every log line: owner-only, whatever the umask (the WAL and its
        // index are created by the schema's first write above).
        for file in [path.to_path_buf(), path.with_extension("db-wal"), path.with_extension("db-shm")] {
            if file.exists() {
                std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                    .map_err(|source| StoreError::Private { path: file.clone(), source })?;
            }
        }
        // Transactions take the write lock when they begin. A deferred one that reads first
        // (every journal write reads the chain head) gets BUSY at once, without waiting,
        // when it must upgrade while the checkpoint thread's RESTART holds the lock.
        conn.set_transaction_behavior(rusqlite::TransactionBehavior::Immediate);
        // Every statement here is prepared once and kept (rusqlite keeps 16 by default,
        // close to the number this module uses; one more would evict on every request).
        conn.set_prepared_statement_cache_capacity(32);
        let checkpointer = Checkpointer::start(path)?;
        let codecs = codec::Codecs::load(&conn)?;
        let mut store = Store {
            conn,
            checkpointer,
            files: BTreeMap::new(),
            ids_by_path: FxHashMap::default(),
            codecs,
            path: path.to_owned(),
        };
        for file in store.read_files()? {
            store.mirror(file);
        }
        for (_, _, pruned) in store.journal_of_kind::<LinesPruned>()? {
            if let Some(file) = store.files.get_mut(&pruned.file_id) {
                file.pruned = file.pruned.max(pruned.lines);
            }
        }
        Ok(store)
    }

    /// Copy the whole log into the database and cut the log file to nothing: after the
    /// catch-up on start, the log holds every page the catch-up wrote, as large as the
    /// store itself, until later commits reuse it. A pass of the checkpoint thread under
    /// way makes this one busy (SQLite gives no wait for the checkpoint lock), so it tries
    /// again for up to a second; after that it gives up, which costs only disk until the
    /// log's next restart.
    pub fn truncate_log(&self) {
        const TRIES: u32 = 50;
        for _ in 0..TRIES {
            match self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get::<_, i64>(0)) {
                Ok(0) => return,
                Ok(_busy) => {}
                Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::DatabaseBusy => {}
                Err(error) => {
                    tracing::debug!(%error, "the log was not truncated after the catch-up");
                    return;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        tracing::debug!("the log was not truncated after the catch-up: the checkpoint thread kept it busy");
    }

    /// Rewrite the database without its free pages (what pruning freed), and cut the log:
    /// the file shrinks to what is kept. Blocks the one writer for as long as it takes.
    pub fn vacuum(&self) -> Result<()> {
        self.conn.execute_batch("VACUUM")?;
        self.truncate_log();
        Ok(())
    }

    /// The store's size on disk: the database and its log.
    pub fn disk_bytes(&self) -> u64 {
        [self.path.clone(), self.path.with_extension("db-wal")]
            .iter()
            .filter_map(|file| std::fs::metadata(file).ok())
            .map(|meta| meta.len())
            .sum()
    }

    /// Re-check both chains in the store; `Err(Integrity)` names the first break.
    pub fn verify_chains(&self) -> Result<()> {
        self.verify_journal_chain()?;
        self.verify_line_chains()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logs::LogCache;
    use judged_core::chain;
    use judged_core::event::Host;
    use judged_core::log::SessionLog;
    use rusqlite::params;

    const REAL_LOG: &[u8] = include_bytes!("../../../fixtures/copilot-1.0.102/cross-family-ok/events.jsonl");

    /// A store holding `bytes` as the lines of one Copilot session.
    fn stored(dir: &Path, bytes: &[u8]) -> Store {
        let mut store = Store::open(&dir.join("judged.db")).unwrap();
        let mut file = store.add_file("/logs/s1/events.jsonl", Host::CopilotCli, "s1").unwrap();
        let mut start = 0;
        let lines: Vec<NewLine> = judged_core::log::complete_lines(bytes)
            .map(|raw| {
                let line = NewLine { start, raw, kind: None };
                start += raw.len() as u64;
                line
            })
            .collect();
        store.append_lines(&mut file, Batch { lines: &lines, events: &[], ends_waiting: None }).unwrap();
        store
    }

    /// Every stored line of the store's one log, as read back.
    fn read_back(store: &Store) -> Vec<u8> {
        let file = store.files().next().unwrap();
        let mut bytes = Vec::new();
        store
            .scan_lines(file.id, 0, Columns::WithRaw, |line| {
                bytes.extend_from_slice(&line.raw);
                true
            })
            .unwrap();
        bytes
    }

    /// A journal event with no meaning beyond being one.
    fn refusal(path: &str) -> JournalEvent {
        JournalEvent::FileRefused(journal::FileRefused { path: path.into(), reason: "test".into() })
    }

    #[test]
    fn stored_lines_rebuild_the_exact_log_and_its_chain() {
        let dir = tempfile::tempdir().unwrap();
        let store = stored(dir.path(), REAL_LOG);
        let file = store.files().next().unwrap();
        let log = SessionLog::from_bytes(file.host, file.path.clone(), read_back(&store));
        assert_eq!(log.bytes(), REAL_LOG);
        assert_eq!(log.chain_at(log.len()).unwrap(), chain::to_hex(&file.chain));
        store.verify_chains().unwrap();
    }

    #[test]
    fn journal_lookups_search_their_partial_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("judged.db")).unwrap();
        for (lookup, index) in [
            (Lookup::DecisionByKey, "journal_gate_key"),
            (Lookup::ChallengeByWitness, "journal_challenge_witness"),
            (Lookup::EvidenceByWitness, "journal_evidence_witness"),
            (Lookup::EvidenceById, "journal_evidence_id"),
            (Lookup::PanelByKey, "journal_panel_key"),
            (Lookup::EvidenceByGitTree, "journal_evidence_git_tree"),
            (Lookup::PanelByGitTree, "journal_panel_git_tree"),
            (Lookup::AttestedByCommit, "journal_attested_commit"),
            (Lookup::BypassByLog, "journal_bypass_log"),
            (Lookup::ChallengeByNonce, "journal_challenge_nonce"),
            (Lookup::SessionBeganByLog, "journal_session_began_log"),
        ] {
            let plan: String = store
                .conn
                .query_row(&format!("EXPLAIN QUERY PLAN {}", lookup.sql()), params!["x"], |r| r.get(3))
                .unwrap();
            assert!(plan.contains(&format!("USING INDEX {index}")), "{lookup:?}: {plan}");
        }
    }

    #[test]
    fn history_is_append_only_and_edits_behind_the_triggers_break_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let store = stored(dir.path(), REAL_LOG);
        let conn = &store.conn;
        assert!(conn.execute("UPDATE lines SET raw = x'00' WHERE seq = 3", []).is_err());
        assert!(conn.execute("DELETE FROM journal", []).is_err());
        conn.execute_batch(
            "DROP TRIGGER lines_append_only_u; UPDATE lines SET raw = CAST('{}' AS BLOB), codec = NULL WHERE seq = 3;",
        )
        .unwrap();
        let error = store.verify_chains().unwrap_err().to_string();
        assert!(error.contains("chain breaks at line 3"), "{error}");
    }

    /// Lines are kept compressed (each line alone, with the host's dictionary once one is
    /// trained), while every hash is over the raw bytes: a store holding more than the
    /// dictionary's training share reads back byte for byte, is smaller than the log, and
    /// a compressed line edited behind the triggers is an integrity error, not a panic.
    #[test]
    fn lines_are_kept_compressed_and_read_back_exactly() {
        let dir = tempfile::tempdir().unwrap();
        // Enough of the real log, repeated, to train the host's dictionary.
        let mut bytes = Vec::new();
        while bytes.len() < 4 << 20 {
            bytes.extend_from_slice(REAL_LOG);
        }
        let store = stored(dir.path(), &bytes);
        let back = read_back(&store);
        assert!(back == bytes, "the lines read back byte for byte");
        let (kept, dictionaries): (i64, i64) = store
            .conn
            .query_row("SELECT sum(length(raw)), (SELECT count(*) FROM dictionaries) FROM lines", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(dictionaries, 1, "the Copilot CLI dictionary was trained");
        assert!((kept as usize) < bytes.len() / 2, "kept {kept} of {} bytes", bytes.len());
        store.verify_chains().unwrap();
        store
            .conn
            .execute_batch("DROP TRIGGER lines_append_only_u; UPDATE lines SET raw = x'28b52ffd00' WHERE seq = 2000;")
            .unwrap();
        let error = store.verify_chains().unwrap_err().to_string();
        assert!(error.contains("the stored bytes of line 2000 do not read back"), "{error}");
    }

    /// After the catch-up on start the log is cut to nothing: it held every page the
    /// catch-up wrote, as much again as the store.
    #[test]
    fn the_log_is_truncated_after_a_catch_up() {
        let dir = tempfile::tempdir().unwrap();
        let store = stored(dir.path(), REAL_LOG);
        let wal = dir.path().join("judged.db-wal");
        assert!(std::fs::metadata(&wal).unwrap().len() > 0, "the lines went to the log first");
        store.truncate_log();
        assert_eq!(std::fs::metadata(&wal).unwrap().len(), 0);
        assert!(read_back(&store) == REAL_LOG, "and nothing was lost");
    }

    /// A checkpoint of another connection under way (here one waiting for a reader, as
    /// the checkpoint thread's RESTART waits for the writer) holds the checkpoint lock,
    /// which SQLite does not wait for: the truncation tries again until it is free.
    #[test]
    fn the_log_is_truncated_when_another_checkpoint_holds_it_for_a_while() {
        let dir = tempfile::tempdir().unwrap();
        let store = stored(dir.path(), REAL_LOG);
        let path = dir.path().join("judged.db");
        let reader = Connection::open(&path).unwrap();
        reader.execute_batch("BEGIN; SELECT count(*) FROM lines;").unwrap();
        let (started, checkpoint_started) = std::sync::mpsc::channel();
        let checkpoint = std::thread::spawn(move || {
            let conn = Connection::open(&path).unwrap();
            started.send(()).unwrap();
            conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |r| r.get::<_, i64>(0)).unwrap()
        });
        checkpoint_started.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            reader.execute_batch("COMMIT").unwrap();
        });
        store.truncate_log();
        release.join().unwrap();
        checkpoint.join().unwrap();
        assert_eq!(std::fs::metadata(dir.path().join("judged.db-wal")).unwrap().len(), 0);
    }

    /// Pruning drops a log's bytes and keeps every line's hash and the chain: the store
    /// still verifies, a reopened store knows the log was pruned, a read of its records
    /// says so, and the trigger lets nothing else change a line.
    #[test]
    fn pruning_drops_the_bytes_and_keeps_every_hash_and_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = stored(dir.path(), REAL_LOG);
        let file = store.files().next().unwrap().clone();
        let hashes = |store: &Store| {
            let mut kept = Vec::new();
            store
                .scan_lines(file.id, 0, Columns::WithRaw, |line| {
                    kept.push((line.seq, line.sha256, line.chain, line.pruned));
                    true
                })
                .unwrap();
            kept
        };
        let before = hashes(&store);
        assert_eq!(store.unpruned_bytes(file.id, 0).unwrap(), REAL_LOG.len() as u64);

        let pruned = store.prune_file(file.id, "2026-09-01T00:00:00Z").unwrap().expect("something to prune");
        assert_eq!((pruned.lines, pruned.bytes), (file.lines, REAL_LOG.len() as u64));
        assert_eq!(pruned.chain, chain::to_hex(&file.chain));
        assert!(store.prune_file(file.id, "2026-09-01T00:00:00Z").unwrap().is_none(), "nothing is left to prune");
        let kept: i64 = store.conn.query_row("SELECT sum(length(raw)) FROM lines", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, 0, "no byte of the log is kept");
        let after = hashes(&store);
        assert!(after.iter().all(|line| line.3), "every line reads as pruned");
        let unmarked = |lines: &[(u64, Hash, Hash, bool)]| lines.iter().map(|l| (l.0, l.1, l.2)).collect::<Vec<_>>();
        assert_eq!(unmarked(&after), unmarked(&before), "every hash and chain head is kept");
        store.verify_chains().unwrap();
        drop(store);

        let store = Store::open(&dir.path().join("judged.db")).unwrap();
        let file = store.files().next().unwrap().clone();
        assert_eq!(file.pruned, file.lines, "a reopened store knows from the journal");
        let error = LogCache::default().refresh(&store, &file).unwrap_err().to_string();
        assert!(
            error.contains("were pruned from the store") && error.contains("hashes and chain still check"),
            "{error}"
        );
        for edit in [
            "UPDATE lines SET raw = x'00' WHERE seq = 3",
            "UPDATE lines SET raw = x'', codec = -1, line_sha256 = zeroblob(32) WHERE seq = 3",
            "UPDATE lines SET raw = x'', codec = 0 WHERE seq = 3",
        ] {
            let refused = store.conn.execute_batch(edit).unwrap_err().to_string();
            assert!(refused.contains("lines are append-only"), "{edit}: {refused}");
        }
    }

    /// A store written before lines were compressed has no `codec` column: it gains one
    /// on open, and its lines read as they were kept.
    #[test]
    fn a_store_of_the_previous_version_is_read_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("judged.db");
        {
            let store = stored(dir.path(), REAL_LOG);
            // The previous version's lines: raw bytes and no codec column.
            store
                .conn
                .execute_batch(
                    "DROP TRIGGER lines_append_only_u; DROP TRIGGER lines_append_only_d; \
                     CREATE TABLE old AS SELECT id, file_id, seq, start, end, line_sha256, chain, kind, raw FROM lines; \
                     DROP TABLE lines; ALTER TABLE old RENAME TO lines;",
                )
                .unwrap();
            let raw_lines: Vec<Vec<u8>> = judged_core::log::complete_lines(REAL_LOG).map(<[u8]>::to_vec).collect();
            for (seq, raw) in raw_lines.iter().enumerate() {
                store.conn.execute("UPDATE lines SET raw = ?1 WHERE seq = ?2", params![raw, seq as i64 + 1]).unwrap();
            }
        }
        let store = Store::open(&path).unwrap();
        let back = read_back(&store);
        assert!(back == REAL_LOG, "the previous version's lines read back");
        store.verify_chains().unwrap();
    }

    /// The log restarts on the checkpoint thread: a commit after a pause appends to the
    /// log as it is and syncs nothing (SQLite syncs a restarted log's new header; under a
    /// request's commit that cost every hook after a pause 0.4 ms here).
    #[test]
    fn a_commit_after_a_pause_does_not_restart_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("judged.db");
        let mut store = Store::open(&path).unwrap();
        store.journal(&refusal("first")).unwrap();
        // A pause: the checkpoint thread copies the whole log meanwhile.
        std::thread::sleep(Checkpointer::EVERY * 4);
        // A restarted log has a new salt in its header (bytes 16..24).
        let salt = || std::fs::read(path.with_extension("db-wal")).unwrap()[16..24].to_vec();
        let before = salt();
        store.journal(&refusal("second")).unwrap();
        assert_eq!(salt(), before, "the commit after the pause restarted the log");
    }

    /// The checkpoint thread's RESTART holds the log's write lock while it waits for
    /// readers; a journal write meanwhile waits for it instead of failing (found by a
    /// review: deferred transactions that read first got BUSY at once).
    #[test]
    fn a_journal_write_during_a_restart_checkpoint_waits_instead_of_failing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("judged.db");
        let mut store = Store::open(&path).unwrap();
        store.journal(&refusal("first")).unwrap();
        // A reader holding a snapshot for 600 ms, which the RESTART waits for.
        let reader = {
            let path = path.clone();
            std::thread::spawn(move || {
                let conn = Connection::open(&path).unwrap();
                conn.execute_batch("BEGIN; SELECT count(*) FROM journal;").unwrap();
                std::thread::sleep(std::time::Duration::from_millis(600));
                conn.execute_batch("COMMIT").unwrap();
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(100));
        store.journal(&refusal("second")).unwrap();
        let restart = {
            let path = path.clone();
            std::thread::spawn(move || {
                let conn = Connection::open(&path).unwrap();
                conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |r| r.get::<_, i64>(0)).unwrap()
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(100));
        let journal = store.journal(&refusal("third"));
        reader.join().unwrap();
        restart.join().unwrap();
        assert!(journal.is_ok(), "{journal:?}");
    }
}
