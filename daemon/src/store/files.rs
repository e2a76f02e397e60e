//! The `files` table: per-log ingest state, mirrored in memory and written through.

use super::journal::{self, FileDiscovered, IntegrityFinding, JournalEvent, TamperDetected};
use super::{Result, Store, hash_from};
use judged_core::chain::{self, Hash};
use judged_core::event::{Host, SessionId};
use rusqlite::{Connection, params};

/// Ingest state of one log file.
#[derive(Clone, Debug)]
pub struct FileState {
    pub id: i64,
    pub path: String,
    pub host: Host,
    pub session: String,
    pub session_id: Option<SessionId>,
    pub cwd: Option<String>,
    pub offset: u64,
    pub lines: u64,
    pub chain: Hash,
    pub last_host_id: Option<String>,
    pub last_event_time: Option<String>,
    pub tampered: bool,
    pub findings: u64,
    /// Lines, from the first, whose bytes were pruned (from the journal's `lines_pruned`).
    pub pruned: u64,
}

impl FileState {
    /// A log registered with nothing ingested yet.
    fn new(id: i64, path: &str, host: Host, session: &str) -> FileState {
        FileState {
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
            pruned: 0,
        }
    }

    /// The state with everything derived from its lines cleared, as replay starts it. A
    /// log whose first lines were pruned keeps the summary they gave (its session id and
    /// cwd, where its host chain had reached, its last time): replay cannot read them again.
    pub fn unreplayed(&self) -> FileState {
        let fresh = FileState {
            tampered: self.tampered,
            findings: self.findings,
            pruned: self.pruned,
            ..FileState::new(self.id, &self.path, self.host, &self.session)
        };
        if self.pruned == 0 {
            return fresh;
        }
        FileState {
            session_id: self.session_id.clone(),
            cwd: self.cwd.clone(),
            last_host_id: self.last_host_id.clone(),
            last_event_time: self.last_event_time.clone(),
            ..fresh
        }
    }
}

/// Write a file's derived state (everything but its identity).
pub(super) fn save(conn: &Connection, file: &FileState) -> Result<()> {
    conn.prepare_cached(
        "UPDATE files SET offset = ?2, lines = ?3, chain = ?4, session_id = ?5, cwd = ?6, last_host_id = ?7, \
         last_event_time = ?8, tampered = ?9, findings = ?10 WHERE id = ?1",
    )?
    .execute(params![
        file.id,
        file.offset as i64,
        file.lines as i64,
        file.chain.to_vec(),
        file.session_id.as_ref().map(SessionId::as_str),
        file.cwd,
        file.last_host_id,
        file.last_event_time,
        file.tampered,
        file.findings as i64
    ])?;
    Ok(())
}

impl Store {
    pub fn file_by_path(&self, path: &str) -> Option<&FileState> {
        self.ids_by_path.get(path).map(|id| &self.files[id])
    }

    /// The first log (by id) whose session key, session id or path is `name`.
    pub fn file_by_session(&self, name: &str) -> Option<&FileState> {
        self.files().find(|f| f.session == name || f.session_id.as_ref().is_some_and(|id| id == name) || f.path == name)
    }

    /// The log of id `id`.
    pub fn file(&self, id: i64) -> Option<&FileState> {
        self.files.get(&id)
    }

    /// Every log, by id.
    pub fn files(&self) -> impl Iterator<Item = &FileState> {
        self.files.values()
    }

    /// Record a file's state as read from the database.
    pub(super) fn mirror(&mut self, file: FileState) {
        self.ids_by_path.insert(file.path.clone(), file.id);
        self.files.insert(file.id, file);
    }

    /// After a commit that changed `file`: mirror its new state, and note the commit.
    pub(super) fn committed(&mut self, file: &FileState) {
        self.mirror(file.clone());
        self.checkpointer.poke();
    }

    pub(super) fn read_files(&self) -> Result<Vec<FileState>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, path, host, session, session_id, cwd, offset, lines, chain, last_host_id, last_event_time, tampered, findings FROM files",
        )?;
        let rows = stmt.query_map([], |row| {
            let host: String = row.get(2)?;
            let host = Host::parse(&host).ok_or_else(|| {
                rusqlite::Error::FromSqlConversionFailure(
                    2,
                    rusqlite::types::Type::Text,
                    format!("unknown host `{host}`").into(),
                )
            })?;
            Ok(FileState {
                id: row.get(0)?,
                path: row.get(1)?,
                host,
                session: row.get(3)?,
                session_id: row.get::<_, Option<String>>(4)?.map(SessionId::from),
                cwd: row.get(5)?,
                offset: row.get::<_, i64>(6)? as u64,
                lines: row.get::<_, i64>(7)? as u64,
                chain: hash_from(row.get(8)?),
                last_host_id: row.get(9)?,
                last_event_time: row.get(10)?,
                tampered: row.get(11)?,
                findings: row.get::<_, i64>(12)? as u64,
                pruned: 0,
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
        let discovered = FileDiscovered { file_id: id, path: path.to_owned(), host, session: session.to_owned() };
        journal::append(&tx, &JournalEvent::FileDiscovered(discovered))?;
        tx.commit()?;
        let file = FileState::new(id, path, host, session);
        self.committed(&file);
        Ok(file)
    }

    /// Mark `file` tampered and journal what was found.
    pub fn mark_tampered(&mut self, file: &mut FileState, tamper: TamperDetected) -> Result<()> {
        let tx = self.conn.transaction()?;
        journal::append(&tx, &JournalEvent::TamperDetected(tamper))?;
        tx.execute("UPDATE files SET tampered = 1 WHERE id = ?1", params![file.id])?;
        tx.commit()?;
        file.tampered = true;
        self.committed(file);
        Ok(())
    }

    /// Journal an integrity finding about `file` and count it in its state.
    pub fn record_finding(&mut self, file: &mut FileState, finding: IntegrityFinding) -> Result<()> {
        let tx = self.conn.transaction()?;
        journal::append(&tx, &JournalEvent::IntegrityFinding(finding))?;
        file.findings += 1;
        save(&tx, file)?;
        tx.commit()?;
        self.committed(file);
        Ok(())
    }

    /// Store a file's state recomputed by replay.
    pub fn save_replayed(&mut self, file: &FileState) -> Result<()> {
        save(&self.conn, file)?;
        self.committed(file);
        Ok(())
    }
}
