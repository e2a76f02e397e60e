//! The append-only, hash-chained SQLite store.
//!
//! Three tables of record: `lines` (every complete line of every watched log, raw bytes
//! kept, chained per file), `journal` (the daemon's own decisions, chained), and `files`
//! (per-file ingest state). Lines and journal are append-only, enforced by triggers. The
//! `files` row is derived: [`Store::rebuild_files`] recomputes it from lines and journal.
//! A batch of lines and the file's new offset commit in one transaction, so a crash loses
//! nothing and duplicates nothing.

use judged_core::chain::{self, Hash};
use judged_core::event::Host;
use rusqlite::{Connection, OptionalExtension, params};
use rustc_hash::FxHashMap;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("store integrity: {0}")]
    Integrity(String),
    #[error("cannot start the checkpoint thread: {0}")]
    Thread(std::io::Error),
}

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
CREATE TRIGGER IF NOT EXISTS lines_append_only_u BEFORE UPDATE ON lines BEGIN SELECT RAISE(ABORT, 'lines are append-only'); END;
CREATE TRIGGER IF NOT EXISTS lines_append_only_d BEFORE DELETE ON lines BEGIN SELECT RAISE(ABORT, 'lines are append-only'); END;
CREATE TRIGGER IF NOT EXISTS journal_append_only_u BEFORE UPDATE ON journal BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS journal_append_only_d BEFORE DELETE ON journal BEGIN SELECT RAISE(ABORT, 'journal is append-only'); END;
"#;

/// Ingest state of one log file.
#[derive(Clone, Debug)]
pub struct FileState {
    pub id: i64,
    pub path: String,
    pub host: Host,
    pub session: String,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub offset: u64,
    pub lines: u64,
    pub chain: Hash,
    pub last_host_id: Option<String>,
    pub last_event_time: Option<String>,
    pub tampered: bool,
    pub findings: u64,
}

/// The journal lookups by a field (each has its partial index).
#[derive(Clone, Copy, Debug)]
pub enum JournalLookup {
    /// A gate decision by its input key.
    GateDecision,
    /// An issued challenge by its witness.
    IssuedChallenge,
    /// Verified evidence by its witness.
    VerifiedEvidence,
    /// Verified evidence by its evidence id (one review, however often verified).
    EvidenceById,
}

impl JournalLookup {
    /// Kind and path are spelled out, so the lookup's partial expression index applies.
    fn sql(self) -> String {
        let (kind, path) = match self {
            JournalLookup::GateDecision => ("gate_decided", "$.key"),
            JournalLookup::IssuedChallenge => ("challenge_issued", "$.witness"),
            JournalLookup::VerifiedEvidence => ("evidence_verified", "$.witness"),
            JournalLookup::EvidenceById => ("evidence_verified", "$.evidence_id"),
        };
        format!(
            "SELECT body FROM journal WHERE kind = '{kind}' AND json_extract(body, '{path}') = +?1 ORDER BY seq DESC LIMIT 1"
        )
    }
}

/// One complete line ready to append.
pub struct NewLine<'a> {
    pub start: u64,
    pub raw: &'a [u8],
    /// The record type, when the line parsed.
    pub kind: Option<String>,
}

pub struct Store {
    conn: Connection,
    checkpointer: Checkpointer,
    /// The `files` table, mirrored in memory and written through: every query consults
    /// it, it has one row per log, and only this type changes it.
    files: BTreeMap<i64, FileState>,
    /// Fx: looked up for every log at every challenge; SipHash was a tenth of one.
    ids_by_path: FxHashMap<String, i64>,
}

/// A stored hash column. Only this module writes those columns, always 32 bytes; a
/// blob of another length (a hand-edited database) reads as zeros, which then fails
/// every chain check rather than panicking.
fn hash_from(blob: Vec<u8>) -> Hash {
    blob.try_into().unwrap_or([0; 32])
}

impl Store {
    pub fn open(path: &Path) -> Result<Store> {
        let mut conn = Connection::open(path)?;
        conn.execute_batch(SCHEMA)?;
        // Transactions take the write lock when they begin. A deferred one that reads first
        // (every journal write reads the chain head) gets BUSY at once, without waiting,
        // when it must upgrade while the checkpoint thread's RESTART holds the lock.
        conn.set_transaction_behavior(rusqlite::TransactionBehavior::Immediate);
        // Every statement here is prepared once and kept (rusqlite keeps 16 by default,
        // close to the number this module uses; one more would evict on every request).
        conn.set_prepared_statement_cache_capacity(32);
        let checkpointer = Checkpointer::start(path)?;
        let mut store = Store { conn, checkpointer, files: BTreeMap::new(), ids_by_path: FxHashMap::default() };
        for file in store.read_files()? {
            store.mirror(file);
        }
        Ok(store)
    }

    pub fn file_by_path(&self, path: &str) -> Option<&FileState> {
        self.ids_by_path.get(path).map(|id| &self.files[id])
    }

    /// The first log (by id) whose session key, session id or path is `name`.
    pub fn file_by_session(&self, name: &str) -> Option<&FileState> {
        self.files().find(|f| f.session == name || f.session_id.as_deref() == Some(name) || f.path == name)
    }

    /// Every log, by id.
    pub fn files(&self) -> impl Iterator<Item = &FileState> {
        self.files.values()
    }

    /// Record a file's state as read from the database.
    fn mirror(&mut self, file: FileState) {
        self.ids_by_path.insert(file.path.clone(), file.id);
        self.files.insert(file.id, file);
    }

    /// After a commit that changed `file`: mirror its new state, and note the commit.
    fn committed(&mut self, file: &FileState) {
        self.mirror(file.clone());
        self.checkpointer.poke();
    }

    fn read_files(&self) -> Result<Vec<FileState>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, path, host, session, session_id, cwd, offset, lines, chain, last_host_id, last_event_time, tampered, findings FROM files",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok(FileState {
                id: row.get(0)?,
                path: row.get(1)?,
                host: Host::parse(&row.get::<_, String>(2)?).unwrap_or(Host::CopilotCli),
                session: row.get(3)?,
                session_id: row.get(4)?,
                cwd: row.get(5)?,
                offset: row.get::<_, i64>(6)? as u64,
                lines: row.get::<_, i64>(7)? as u64,
                chain: hash_from(row.get(8)?),
                last_host_id: row.get(9)?,
                last_event_time: row.get(10)?,
                tampered: row.get(11)?,
                findings: row.get::<_, i64>(12)? as u64,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Register a newly discovered log (journaled as `file_discovered`).
    pub fn add_file(&mut self, path: &str, host: Host, session: &str) -> Result<FileState> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO files (path, host, session, chain) VALUES (?1, ?2, ?3, ?4)",
            params![path, host.as_str(), session, chain::genesis(chain::SESSION_GENESIS_DOMAIN).to_vec()],
        )?;
        let id = tx.last_insert_rowid();
        journal_in(
            &tx,
            "file_discovered",
            &json!({"file_id": id, "path": path, "host": host.as_str(), "session": session}),
        )?;
        tx.commit()?;
        let file = FileState {
            id,
            path: path.to_owned(),
            host,
            session: session.to_owned(),
            session_id: None,
            cwd: None,
            offset: 0,
            lines: 0,
            chain: chain::genesis(chain::SESSION_GENESIS_DOMAIN),
            last_host_id: None,
            last_event_time: None,
            tampered: false,
            findings: 0,
        };
        self.committed(&file);
        Ok(file)
    }

    /// Append a batch of complete lines of `file` and move its offset, in one transaction,
    /// together with the journal events the batch produced.
    pub fn append_lines(
        &mut self,
        file: &mut FileState,
        batch: &[NewLine],
        update: &FileUpdate,
        events: &[(&str, Value)],
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO lines (file_id, seq, start, end, line_sha256, chain, kind, raw) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?;
            let (mut seq, mut head) = (file.lines, file.chain);
            for line in batch {
                let sha = chain::sha256(line.raw);
                head = chain::link(&head, &sha);
                seq += 1;
                let end = line.start + line.raw.len() as u64;
                insert.execute(params![
                    file.id,
                    seq as i64,
                    line.start as i64,
                    end as i64,
                    sha.to_vec(),
                    head.to_vec(),
                    line.kind.as_deref(),
                    line.raw
                ])?;
            }
            file.lines = seq;
            file.chain = head;
        }
        if let Some(last) = batch.last() {
            file.offset = last.start + last.raw.len() as u64;
        }
        update.apply(file);
        for (kind, body) in events {
            journal_in(&tx, kind, body)?;
        }
        save_file(&tx, file)?;
        tx.commit()?;
        self.committed(file);
        Ok(())
    }

    /// Mark `file` tampered and journal what was found.
    pub fn mark_tampered(&mut self, file: &mut FileState, detail: Value) -> Result<()> {
        let tx = self.conn.transaction()?;
        journal_in(&tx, "tamper_detected", &detail)?;
        tx.execute("UPDATE files SET tampered = 1 WHERE id = ?1", params![file.id])?;
        tx.commit()?;
        file.tampered = true;
        self.committed(file);
        Ok(())
    }

    /// Journal an integrity finding about `file` and count it in its state.
    pub fn record_finding(&mut self, file: &mut FileState, detail: &Value) -> Result<()> {
        let tx = self.conn.transaction()?;
        journal_in(&tx, "integrity_finding", detail)?;
        file.findings += 1;
        save_file(&tx, file)?;
        tx.commit()?;
        self.committed(file);
        Ok(())
    }

    /// The integrity findings recorded about one file, oldest first, as `(at, body)`.
    pub fn findings_of(&self, file_id: i64) -> Result<Vec<(String, Value)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT at, body FROM journal WHERE kind = 'integrity_finding' AND json_extract(body, '$.file_id') = +?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![file_id], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))?;
        let mut findings = Vec::new();
        for row in rows {
            let (at, body) = row?;
            findings.push((at, serde_json::from_str(&body).unwrap_or(Value::Null)));
        }
        Ok(findings)
    }

    /// Append one event to the journal.
    pub fn journal(&mut self, kind: &str, body: &Value) -> Result<i64> {
        self.journal_together(&[(kind, body)])
    }

    /// Append events to the journal in one transaction (one commit, not one per event);
    /// the sequence number of the last.
    pub fn journal_together(&mut self, events: &[(&str, &Value)]) -> Result<i64> {
        let tx = self.conn.transaction()?;
        let mut seq = 0;
        for (kind, body) in events {
            seq = journal_in(&tx, kind, body)?;
        }
        tx.commit()?;
        self.checkpointer.poke();
        Ok(seq)
    }

    /// Journal events of one kind as `(seq, at, body)`, oldest first.
    pub fn journal_of_kind(&self, kind: &str) -> Result<Vec<(i64, String, Value)>> {
        let mut events = Vec::new();
        self.journal_newest_first(kind, |seq, at, body| {
            events.push((seq, at.to_owned(), body));
            true
        })?;
        events.reverse();
        Ok(events)
    }

    /// Visit the journal events of one kind, newest first, until `visit` returns false,
    /// so a caller that wants only recent events reads only those.
    pub fn journal_newest_first(&self, kind: &str, mut visit: impl FnMut(i64, &str, Value) -> bool) -> Result<()> {
        // `+?1`: a parameter compared with an indexed column makes this SQLite build
        // (STAT4) re-plan the statement at every call; the unary plus keeps the plan.
        let mut stmt =
            self.conn.prepare_cached("SELECT seq, at, body FROM journal WHERE kind = +?1 ORDER BY seq DESC")?;
        let mut rows = stmt.query(params![kind])?;
        while let Some(row) = rows.next()? {
            let (at, body): (String, String) = (row.get(1)?, row.get(2)?);
            if !visit(row.get(0)?, &at, serde_json::from_str(&body).unwrap_or(Value::Null)) {
                break;
            }
        }
        Ok(())
    }

    /// The newest journal body that `lookup` finds by `value`.
    pub fn journal_find(&self, lookup: JournalLookup, value: &str) -> Result<Option<Value>> {
        let body: Option<String> =
            self.conn.prepare_cached(&lookup.sql())?.query_row(params![value], |r| r.get(0)).optional()?;
        Ok(body.map(|b| serde_json::from_str(&b).unwrap_or(Value::Null)))
    }

    /// The sequence number of the newest journal event of `kind` (0 when there is none).
    pub fn journal_last_seq(&self, kind: &str) -> Result<i64> {
        Ok(self
            .conn
            .prepare_cached("SELECT seq FROM journal WHERE kind = +?1 ORDER BY seq DESC LIMIT 1")?
            .query_row(params![kind], |r| r.get(0))
            .optional()?
            .unwrap_or(0))
    }

    pub fn journal_len(&self) -> Result<u64> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM journal", [], |r| r.get::<_, i64>(0))? as u64)
    }

    /// Stored lines of a file as `(seq, start, end, line_sha256, chain, kind, raw)`.
    pub fn lines(&self, file_id: i64, from_seq: u64, limit: u64) -> Result<Vec<StoredLine>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, start, end, line_sha256, chain, kind, raw FROM lines WHERE file_id = +?1 AND seq >= +?2 ORDER BY seq LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![file_id, from_seq as i64, limit.min(i64::MAX as u64) as i64], stored_line)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Visit a file's stored lines in order, one row at a time (a session can be larger
    /// than the memory the daemon should use), until `visit` returns false. Without
    /// `with_raw` the rows carry an empty `raw`.
    pub fn scan_lines(
        &self,
        file_id: i64,
        from_seq: u64,
        with_raw: bool,
        mut visit: impl FnMut(StoredLine) -> bool,
    ) -> Result<()> {
        let raw = if with_raw { "raw" } else { "x''" };
        let sql = format!(
            "SELECT seq, start, end, line_sha256, chain, kind, {raw} FROM lines WHERE file_id = +?1 AND seq >= +?2 ORDER BY seq"
        );
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(params![file_id, from_seq as i64])?;
        while let Some(row) = rows.next()? {
            if !visit(stored_line(row)?) {
                break;
            }
        }
        Ok(())
    }

    /// The chain head after line `seq` (0 = genesis).
    pub fn chain_at(&self, file_id: i64, seq: u64) -> Result<Option<Hash>> {
        if seq == 0 {
            return Ok(Some(chain::genesis(chain::SESSION_GENESIS_DOMAIN)));
        }
        Ok(self
            .conn
            .prepare_cached("SELECT chain FROM lines WHERE file_id = +?1 AND seq = +?2")?
            .query_row(params![file_id, seq as i64], |r| r.get::<_, Vec<u8>>(0))
            .optional()?
            .map(hash_from))
    }

    /// Re-check both chains in the store; `Err(Integrity)` names the first break.
    pub fn verify_chains(&self) -> Result<()> {
        let mut head = chain::genesis(chain::JOURNAL_GENESIS_DOMAIN);
        let mut stmt = self.conn.prepare("SELECT seq, at, kind, body, chain FROM journal ORDER BY seq")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let (seq, at, kind, body): (i64, String, String, String) =
                (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
            head = chain::link(&head, &journal_digest(&at, &kind, &body));
            if hash_from(row.get(4)?) != head {
                return Err(StoreError::Integrity(format!("journal chain breaks at seq {seq}")));
            }
        }
        for file in self.files() {
            let mut head = chain::genesis(chain::SESSION_GENESIS_DOMAIN);
            let mut broken = None;
            self.scan_lines(file.id, 0, true, |line| {
                head = chain::link(&head, &chain::sha256(&line.raw));
                if head != line.chain {
                    broken = Some(line.seq);
                }
                broken.is_none()
            })?;
            if let Some(seq) = broken {
                return Err(StoreError::Integrity(format!("{} chain breaks at line {seq}", file.path)));
            }
        }
        Ok(())
    }

    /// Recompute every derived `files` column from the lines and the journal (replay).
    pub fn rebuild_files(&mut self) -> Result<()> {
        let files: Vec<FileState> = self.files().cloned().collect();
        let tampered: Vec<i64> = self
            .journal_of_kind("tamper_detected")?
            .into_iter()
            .filter_map(|(_, _, body)| body["file_id"].as_i64())
            .collect();
        let findings = self.journal_of_kind("integrity_finding")?;
        for file in files {
            let mut state = FileState {
                offset: 0,
                lines: 0,
                chain: chain::genesis(chain::SESSION_GENESIS_DOMAIN),
                session_id: None,
                cwd: None,
                last_host_id: None,
                last_event_time: None,
                tampered: tampered.contains(&file.id),
                findings: findings.iter().filter(|(_, _, b)| b["file_id"].as_i64() == Some(file.id)).count() as u64,
                ..file
            };
            let mut update = FileUpdate::default();
            self.scan_lines(state.id, 0, true, |line| {
                if let Ok(record) = judged_core::adapter::envelope(state.host, line.raw.trim_ascii_end()) {
                    update.observe(state.host, &record);
                }
                state.offset = line.end;
                state.lines = line.seq;
                state.chain = line.chain;
                true
            })?;
            update.apply(&mut state);
            save_file(&self.conn, &state)?;
            self.committed(&state);
        }
        Ok(())
    }
}

/// Copies the write-ahead log into the database on a thread of its own, with its own
/// connection, so a commit never waits for a checkpoint: catching up a large root
/// otherwise spent a fifth of its time checkpointing, on the one thread that ingests.
struct Checkpointer {
    commits: std::sync::mpsc::SyncSender<()>,
}

impl Checkpointer {
    /// The least time between two checkpoints: each syncs the database file.
    const EVERY: std::time::Duration = std::time::Duration::from_millis(250);
    /// A log this long (in pages: 256 MB of 16 KB pages) is restarted. Each restart stalls
    /// the writer for a sync; at 64 MB a 1 GB catch-up took 8 s instead of 5.
    const RESTART_PAGES: i64 = 16000;

    fn start(path: &Path) -> Result<Checkpointer> {
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
                    std::thread::sleep(Self::EVERY);
                }
            })
            .map_err(StoreError::Thread)?;
        Ok(Checkpointer { commits })
    }

    /// Note a commit; a checkpoint follows within [`Checkpointer::EVERY`].
    fn poke(&self) {
        let _ = self.commits.try_send(());
    }
}

fn stored_line(r: &rusqlite::Row) -> rusqlite::Result<StoredLine> {
    Ok(StoredLine {
        seq: r.get::<_, i64>(0)? as u64,
        start: r.get::<_, i64>(1)? as u64,
        end: r.get::<_, i64>(2)? as u64,
        sha256: hash_from(r.get(3)?),
        chain: hash_from(r.get(4)?),
        kind: r.get(5)?,
        raw: r.get(6)?,
    })
}

pub struct StoredLine {
    pub seq: u64,
    pub start: u64,
    pub end: u64,
    pub sha256: Hash,
    pub chain: Hash,
    pub kind: Option<String>,
    pub raw: Vec<u8>,
}

/// Summary fields a batch of lines moves forward.
#[derive(Default, Debug)]
pub struct FileUpdate {
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub last_host_id: Option<Option<String>>,
    pub last_event_time: Option<String>,
}

impl FileUpdate {
    /// Fold one record's envelope into the summary.
    pub fn observe(&mut self, host: Host, record: &judged_core::adapter::Envelope) {
        if self.session_id.is_none() && (record.session_start || host == Host::ClaudeCode) {
            self.session_id = record.session_id.clone();
        }
        if self.cwd.is_none() && (record.session_start || host == Host::ClaudeCode) {
            self.cwd = record.cwd.clone();
        }
        if record.id.is_some() {
            self.last_host_id = Some(record.id.clone());
        }
        if let Some(t) = &record.timestamp {
            self.last_event_time = Some(t.clone());
        }
    }

    pub fn apply(&self, file: &mut FileState) {
        if file.session_id.is_none() {
            file.session_id = self.session_id.clone();
        }
        if file.cwd.is_none() {
            file.cwd = self.cwd.clone();
        }
        if let Some(id) = &self.last_host_id {
            file.last_host_id = id.clone();
        }
        if let Some(t) = &self.last_event_time {
            file.last_event_time = Some(t.clone());
        }
    }
}

/// Write a file's derived state (everything but its identity).
fn save_file(conn: &Connection, file: &FileState) -> Result<()> {
    conn.prepare_cached(
        "UPDATE files SET offset = ?2, lines = ?3, chain = ?4, session_id = ?5, cwd = ?6, last_host_id = ?7, \
         last_event_time = ?8, tampered = ?9, findings = ?10 WHERE id = ?1",
    )?
    .execute(params![
        file.id,
        file.offset as i64,
        file.lines as i64,
        file.chain.to_vec(),
        file.session_id,
        file.cwd,
        file.last_host_id,
        file.last_event_time,
        file.tampered,
        file.findings as i64
    ])?;
    Ok(())
}

fn journal_digest(at: &str, kind: &str, body: &str) -> Hash {
    chain::sha256(format!("{at}\n{kind}\n{body}").as_bytes())
}

fn journal_in(tx: &rusqlite::Transaction, kind: &str, body: &Value) -> Result<i64> {
    let previous: Option<Vec<u8>> = tx
        .prepare_cached("SELECT chain FROM journal ORDER BY seq DESC LIMIT 1")?
        .query_row([], |r| r.get(0))
        .optional()?;
    let previous = previous.map(hash_from).unwrap_or_else(|| chain::genesis(chain::JOURNAL_GENESIS_DOMAIN));
    let at = judged_core::timestamp::format_utc(chrono::Utc::now());
    let body = body.to_string();
    let head = chain::link(&previous, &journal_digest(&at, kind, &body));
    tx.prepare_cached("INSERT INTO journal (at, kind, body, chain) VALUES (?1, ?2, ?3, ?4)")?.execute(params![
        at,
        kind,
        body,
        head.to_vec()
    ])?;
    Ok(tx.last_insert_rowid())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Ingestor;
    use judged_core::files::Roots;
    use judged_core::log::SessionLog;
    use std::io::Write;

    const REAL_LOG: &[u8] = include_bytes!("../../fixtures/copilot-1.0.102/cross-family-ok/events.jsonl");

    /// An ingestor over one Copilot session holding `bytes`.
    fn ingested(dir: &Path, bytes: &[u8]) -> (Ingestor, PathBuf) {
        let session = dir.join("root/s1");
        std::fs::create_dir_all(&session).unwrap();
        let log = session.join("events.jsonl");
        std::fs::write(&log, bytes).unwrap();
        let store = Store::open(&dir.join("judged.db")).unwrap();
        let mut ingest = Ingestor::new(store, Roots { copilot: vec![dir.join("root")], ..Roots::default() });
        ingest.catch_up_all().unwrap();
        (ingest, log)
    }

    use std::path::PathBuf;

    #[test]
    fn replay_rebuilds_the_derived_file_state() {
        let dir = tempfile::tempdir().unwrap();
        let (mut ingest, log) = ingested(dir.path(), REAL_LOG);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .unwrap()
            .write_all(b"{\"type\":\"x\",\"id\":\"late\",\"parentId\":\"wrong\"}\n")
            .unwrap();
        ingest.catch_up_all().unwrap();
        let files = |store: &Store| format!("{:?}", store.files().collect::<Vec<_>>());
        let before = files(&ingest.store);
        ingest
            .store
            .conn
            .execute("UPDATE files SET offset = 0, lines = 0, session_id = NULL, cwd = NULL, findings = 0", [])
            .unwrap();
        ingest.store.rebuild_files().unwrap();
        // Read back from the database, not from the in-memory mirror.
        let reopened = Store::open(&dir.path().join("judged.db")).unwrap();
        assert_eq!(files(&reopened), before);
        let file = reopened.files().next().unwrap();
        assert_eq!((file.lines, file.findings), (44, 1));
        assert_eq!(file.cwd.as_deref(), Some("/tmp/judged-fixture/copilot/cross-family-ok/project"));
    }

    #[test]
    fn stored_lines_rebuild_the_exact_log_and_its_chain() {
        let dir = tempfile::tempdir().unwrap();
        let (ingest, _) = ingested(dir.path(), REAL_LOG);
        let file = ingest.store.files().next().unwrap();
        let mut bytes = Vec::new();
        ingest
            .store
            .scan_lines(file.id, 0, true, |line| {
                bytes.extend_from_slice(&line.raw);
                true
            })
            .unwrap();
        let log = SessionLog::from_bytes(file.host, file.path.clone(), bytes);
        assert_eq!(log.bytes(), REAL_LOG);
        assert_eq!(log.chain_at(log.len()).unwrap(), chain::to_hex(&file.chain));
        ingest.store.verify_chains().unwrap();
    }

    #[test]
    fn journal_lookups_search_their_partial_index() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("judged.db")).unwrap();
        for (lookup, index) in [
            (JournalLookup::GateDecision, "journal_gate_key"),
            (JournalLookup::IssuedChallenge, "journal_challenge_witness"),
            (JournalLookup::VerifiedEvidence, "journal_evidence_witness"),
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
        let (ingest, _) = ingested(dir.path(), REAL_LOG);
        let conn = &ingest.store.conn;
        assert!(conn.execute("UPDATE lines SET raw = x'00' WHERE seq = 3", []).is_err());
        assert!(conn.execute("DELETE FROM journal", []).is_err());
        conn.execute_batch(
            "DROP TRIGGER lines_append_only_u; UPDATE lines SET raw = CAST('{}' AS BLOB) WHERE seq = 3;",
        )
        .unwrap();
        let error = ingest.store.verify_chains().unwrap_err().to_string();
        assert!(error.contains("chain breaks at line 3"), "{error}");
    }

    /// The checkpoint thread's RESTART holds the log's write lock while it waits for
    /// readers; a journal write meanwhile waits for it instead of failing (found by a
    /// review: deferred transactions that read first got BUSY at once).
    #[test]
    fn a_journal_write_during_a_restart_checkpoint_waits_instead_of_failing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("judged.db");
        let mut store = Store::open(&path).unwrap();
        store.journal("first", &json!({})).unwrap();
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
        store.journal("second", &json!({})).unwrap();
        let restart = {
            let path = path.clone();
            std::thread::spawn(move || {
                let conn = Connection::open(&path).unwrap();
                conn.query_row("PRAGMA wal_checkpoint(RESTART)", [], |r| r.get::<_, i64>(0)).unwrap()
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(100));
        let journal = store.journal("third", &json!({}));
        reader.join().unwrap();
        restart.join().unwrap();
        assert!(journal.is_ok(), "{journal:?}");
    }
}
