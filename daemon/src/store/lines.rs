//! The `lines` table: every complete line of every watched log, raw bytes kept, chained
//! per file.

use super::codec::{Codec, Codecs};
use super::journal::{self, JournalEvent, LinesPruned};
use super::{FileState, Result, Store, StoreError, hash_from};
use judged_core::chain::{self, Hash};
use rusqlite::{OptionalExtension, params};

/// What one batch of a log's lines stores, in one transaction.
pub struct Batch<'a> {
    /// The lines, in order, from the file's offset.
    pub lines: &'a [NewLine<'a>],
    /// The journal events they produced.
    pub events: &'a [JournalEvent],
    /// What the log's ends wait for after them, when that changed (`Some(None)`: nothing).
    pub ends_waiting: Option<Option<&'a str>>,
}

/// One complete line ready to append.
pub struct NewLine<'a> {
    /// Its first byte's offset in the file.
    pub start: u64,
    /// The line, newline included.
    pub raw: &'a [u8],
    /// The record type, when the line parsed.
    pub kind: Option<String>,
}

/// One stored line.
pub struct StoredLine {
    pub seq: u64,
    pub start: u64,
    pub end: u64,
    pub sha256: Hash,
    pub chain: Hash,
    pub kind: Option<String>,
    /// The line as the log held it; empty when pruned.
    pub raw: Vec<u8>,
    /// Its bytes were dropped by pruning: `sha256` and `chain` are what is left.
    pub pruned: bool,
}

/// The columns of a stored line, `raw` as kept and `codec` saying how.
const LINE_COLUMNS: &str = "seq, start, end, line_sha256, chain, kind";

fn stored_line(r: &rusqlite::Row) -> rusqlite::Result<(StoredLine, Codec)> {
    let line = StoredLine {
        seq: r.get::<_, i64>(0)? as u64,
        start: r.get::<_, i64>(1)? as u64,
        end: r.get::<_, i64>(2)? as u64,
        sha256: hash_from(r.get(3)?),
        chain: hash_from(r.get(4)?),
        kind: r.get(5)?,
        raw: r.get(6)?,
        pruned: false,
    };
    Ok((line, Codec::from_column(r.get(7)?)))
}

/// A stored line with its bytes as the log held them.
fn unpacked(codecs: &Codecs, (mut line, codec): (StoredLine, Codec)) -> Result<StoredLine> {
    line.pruned = codec == Codec::Pruned;
    let len = line.end.saturating_sub(line.start) as usize;
    line.raw = codecs.decompress(std::mem::take(&mut line.raw), codec, len).map_err(|error| {
        StoreError::Integrity(format!("the stored bytes of line {} do not read back: {error}", line.seq))
    })?;
    Ok(line)
}

/// Whether a scan reads the lines' bytes or only their hashes and offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Columns {
    /// Everything, `raw` included.
    WithRaw,
    /// Everything but `raw`, which reads as empty (re-hashing a file reads its own bytes).
    WithoutRaw,
}

impl Store {
    /// Append a batch of complete lines of `file` and move its offset, in one transaction,
    /// with what the batch produced ([`Batch`]). `file` carries the summary fields the
    /// caller moved forward; this fills in lines, chain and offset.
    pub fn append_lines(&mut self, file: &mut FileState, batch: Batch) -> Result<()> {
        let appended = self.append_lines_once(file, batch);
        if appended.is_err() {
            // A dictionary trained in the transaction that failed is not in the store:
            // forget it with the rest.
            self.codecs = Codecs::load(&self.conn)?;
        }
        appended
    }

    fn append_lines_once(&mut self, file: &mut FileState, batch: Batch) -> Result<()> {
        let Batch { lines: batch, events, ends_waiting } = batch;
        let tx = self.conn.transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT INTO lines (file_id, seq, start, end, line_sha256, chain, kind, raw, codec) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            let (mut seq, mut head) = (file.lines, file.chain);
            for line in batch {
                // The chain is over the bytes the log holds; compression only changes how
                // they are kept.
                let sha = chain::sha256(line.raw);
                head = chain::link(&head, &sha);
                seq += 1;
                let end = line.start + line.raw.len() as u64;
                let (kept, codec) = self.codecs.compress(&tx, file.host, line.raw)?;
                insert.execute(params![
                    file.id,
                    seq as i64,
                    line.start as i64,
                    end as i64,
                    sha.to_vec(),
                    head.to_vec(),
                    line.kind.as_deref(),
                    kept,
                    codec.column()
                ])?;
            }
            file.lines = seq;
            file.chain = head;
        }
        if let Some(last) = batch.last() {
            file.offset = last.start + last.raw.len() as u64;
        }
        for event in events {
            journal::append(&tx, event)?;
        }
        if let Some(state) = ends_waiting {
            save_ends_waiting(&tx, file.id, state)?;
        }
        super::files::save(&tx, file)?;
        tx.commit()?;
        self.committed(file);
        Ok(())
    }

    /// Keep what log `file_id`'s ends wait for now (`None`: nothing), between batches of
    /// its lines: after the ends it had found were matched to the gate's decisions.
    pub fn set_ends_waiting(&mut self, file_id: i64, state: Option<&str>) -> Result<()> {
        save_ends_waiting(&self.conn, file_id, state)
    }

    /// What each log's ends waited for when its last batch was stored, by file id.
    pub fn ends_waiting(&self) -> Result<Vec<(i64, String)>> {
        let mut stmt = self.conn.prepare("SELECT file_id, state FROM ends_waiting")?;
        let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<_, _>>()?)
    }

    /// Stored lines of a file, from `from_seq`, at most `limit`.
    pub fn lines(&self, file_id: i64, from_seq: u64, limit: u64) -> Result<Vec<StoredLine>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {LINE_COLUMNS}, raw, codec FROM lines WHERE file_id = +?1 AND seq >= +?2 ORDER BY seq LIMIT ?3"
        ))?;
        let rows = stmt.query_map(
            params![file_id, from_seq.min(i64::MAX as u64) as i64, limit.min(i64::MAX as u64) as i64],
            stored_line,
        )?;
        rows.map(|row| unpacked(&self.codecs, row?)).collect()
    }

    /// Visit a file's stored lines in order, one row at a time (a session can be larger
    /// than the memory the daemon should use), until `visit` returns false.
    pub fn scan_lines(
        &self,
        file_id: i64,
        from_seq: u64,
        columns: Columns,
        mut visit: impl FnMut(StoredLine) -> bool,
    ) -> Result<()> {
        let raw = if columns == Columns::WithRaw { "raw, codec" } else { "x'', NULL" };
        let sql = format!("SELECT {LINE_COLUMNS}, {raw} FROM lines WHERE file_id = +?1 AND seq >= +?2 ORDER BY seq");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(params![file_id, from_seq.min(i64::MAX as u64) as i64])?;
        while let Some(row) = rows.next()? {
            if !visit(unpacked(&self.codecs, stored_line(row)?)?) {
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

    /// Drop the bytes of every line `file_id` has now, keeping each line's hash and the
    /// chain, and journal it (in one transaction); `None` when nothing is left to drop.
    /// `older_than` is the cutoff the caller chose the log by, for the record.
    pub fn prune_file(&mut self, file_id: i64, older_than: &str) -> Result<Option<LinesPruned>> {
        let Some(mut file) = self.files.get(&file_id).cloned() else { return Ok(None) };
        if file.lines == file.pruned {
            return Ok(None);
        }
        let bytes = self.unpruned_bytes(file.id, file.pruned)?;
        let tx = self.conn.transaction()?;
        tx.execute(
            "UPDATE lines SET raw = x'', codec = ?4 WHERE file_id = +?1 AND seq > ?2 AND seq <= ?3",
            params![file.id, file.pruned as i64, file.lines as i64, Codec::PRUNED],
        )?;
        let pruned = LinesPruned {
            file_id: file.id,
            path: file.path.clone(),
            session: file.session.clone(),
            lines: file.lines,
            bytes,
            chain: chain::to_hex(&file.chain),
            older_than: older_than.to_owned(),
        };
        journal::append(&tx, &JournalEvent::LinesPruned(pruned.clone()))?;
        tx.commit()?;
        file.pruned = file.lines;
        self.committed(&file);
        Ok(Some(pruned))
    }

    /// The log bytes held by the lines of `file_id` after line `from` (what pruning them
    /// would drop).
    pub fn unpruned_bytes(&self, file_id: i64, from: u64) -> Result<u64> {
        let bytes: i64 = self
            .conn
            .prepare_cached("SELECT coalesce(sum(end - start), 0) FROM lines WHERE file_id = +?1 AND seq > ?2")?
            .query_row(params![file_id, from as i64], |r| r.get(0))?;
        Ok(bytes as u64)
    }

    /// Re-check every file's line chain; `Err(Integrity)` names the first break.
    pub(super) fn verify_line_chains(&self) -> Result<()> {
        for file in self.files() {
            let mut head = chain::genesis(chain::SESSION_GENESIS_DOMAIN);
            let mut broken = None;
            self.scan_lines(file.id, 0, Columns::WithRaw, |line| {
                // A pruned line's hash is all that is left to link.
                let sha = if line.pruned { line.sha256 } else { chain::sha256(&line.raw) };
                head = chain::link(&head, &sha);
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
}

/// Store what log `file_id`'s ends wait for (`None`: nothing, and the row goes).
fn save_ends_waiting(conn: &rusqlite::Connection, file_id: i64, state: Option<&str>) -> Result<()> {
    match state {
        None => _ = conn.execute("DELETE FROM ends_waiting WHERE file_id = ?1", params![file_id])?,
        Some(state) => {
            let upsert = "INSERT INTO ends_waiting (file_id, state) VALUES (?1, ?2) \
                          ON CONFLICT (file_id) DO UPDATE SET state = excluded.state";
            conn.execute(upsert, params![file_id, state])?;
        }
    }
    Ok(())
}
