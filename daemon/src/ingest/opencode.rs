//! OpenCode's sessions, read out of its SQLite database into logs of judged's own.
//!
//! OpenCode keeps each session's history as numbered rows of its `event` table
//! (`aggregate_id` = the session, `seq` from 0), and the last number of each session in
//! `event_sequence`. At each catch-up the reader opens each database read-only (a reader of
//! a WAL database never blocks its writer, and this one waits at most 100 ms for a lock,
//! then tries again at the next catch-up), asks which
//! sessions have events past those it has, and appends each new event, in order, as one
//! line of `<root>/<database key>/<session id>.jsonl` ([`MirrorLine`]); ingest then
//! witnesses those lines like any host's log.
//!
//! The database is OpenCode's, and anything that can write it can rewrite a session's
//! past. So each time a session grows, the events already read are read again and compared
//! with the lines written for them: one that changed, went missing or moved is a rewritten
//! history, and that session's log is written no more.

use super::transcribe::{ReadError, Rewritten, Transcriber};
use judged_core::adapter::{MirrorLine, event_time};
use judged_core::event::Host;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// How long a read waits for OpenCode's writer to let go of a lock before trying again at
/// the next catch-up.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// How often every session of a database that changed is read again whole, though it did
/// not grow: a rewrite of a session's past needs no new event.
const CHECK_ALL_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// The OpenCode databases read, and how far each session's log goes.
pub struct EventReader {
    databases: Vec<PathBuf>,
    sessions: HashMap<PathBuf, Written>,
    /// By database: how it looked (its and its WAL's size and time) when every session was
    /// last read whole, and when.
    checked: HashMap<PathBuf, (Stamp, std::time::Instant)>,
}

/// How a database and its WAL look: each one's size, and modification time (seconds and
/// nanoseconds).
type Stamp = Vec<(u64, i64, i64)>;

/// What a session's log holds: its next event's number (its lines' count), or that a
/// rewrite stopped it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Written {
    next_seq: u64,
    stopped: bool,
}

/// One `event` row.
struct Event {
    id: String,
    seq: u64,
    kind: String,
    data: String,
}

impl Transcriber for EventReader {
    fn host(&self) -> Host {
        Host::OpenCode
    }

    fn databases(&self) -> &[PathBuf] {
        &self.databases
    }

    fn read_into(&mut self, root: &Path, databases: &[PathBuf]) -> (Vec<Rewritten>, Vec<ReadError>) {
        let (mut rewritten, mut errors) = (Vec::new(), Vec::new());
        for database in databases {
            let dir = root.join(database_key(database));
            match self.read_database(database, &dir) {
                Ok(found) => rewritten.extend(found),
                Err(error) => errors.push(error),
            }
        }
        (rewritten, errors)
    }
}

impl EventReader {
    /// A reader of `databases`.
    pub fn new(databases: Vec<PathBuf>) -> EventReader {
        EventReader { databases, sessions: HashMap::new(), checked: HashMap::new() }
    }

    fn read_database(&mut self, database: &Path, dir: &Path) -> Result<Vec<Rewritten>, ReadError> {
        let failed = |source| ReadError::Database { host: Host::OpenCode, path: database.to_owned(), source };
        let db = open(database)?;
        let mut sequences = db.prepare("SELECT aggregate_id, seq FROM event_sequence").map_err(failed)?;
        let last: Vec<(String, i64)> = sequences
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .and_then(|rows| rows.collect())
            .map_err(failed)?;
        let look = stamp(database);
        let check_all =
            self.checked.get(database).is_none_or(|(looked, at)| *looked != look && at.elapsed() >= CHECK_ALL_EVERY);
        if check_all {
            self.checked.insert(database.to_owned(), (look, std::time::Instant::now()));
        }
        let mut rewritten = Vec::new();
        for (session, last_seq) in last {
            // A name that is not a plain id is no file name of ours.
            if !session.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || session.is_empty() {
                continue;
            }
            let log = dir.join(format!("{session}.jsonl"));
            let written = match self.sessions.get(&log) {
                Some(written) => written.clone(),
                None => written_in(&log).map_err(|source| ReadError::Log {
                    host: Host::OpenCode,
                    path: log.clone(),
                    source,
                })?,
            };
            let grew = u64::try_from(last_seq).is_ok_and(|last| last >= written.next_seq);
            if written.stopped || !(grew || check_all) {
                self.sessions.insert(log, written);
                continue;
            }
            let events = events_of(&db, &session).map_err(failed)?;
            let (written, found) = append(&log, &session, &events, written)?;
            rewritten.extend(found);
            self.sessions.insert(log, written);
        }
        Ok(rewritten)
    }
}

/// How `database` and its WAL look: size and modification time of each.
fn stamp(database: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let wal = PathBuf::from(format!("{}-wal", database.display()));
    [database, wal.as_path()]
        .iter()
        .map(|path| fs::metadata(path).map_or((0, 0, 0), |m| (m.len(), m.mtime(), m.mtime_nsec())))
        .collect()
}

/// `database` opened as the reader reads it: read-only, waiting [`BUSY_WAIT`] at most for a
/// lock.
fn open(database: &Path) -> Result<rusqlite::Connection, ReadError> {
    let failed = |source| ReadError::Database { host: Host::OpenCode, path: database.to_owned(), source };
    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let db = rusqlite::Connection::open_with_flags(database, flags).map_err(failed)?;
    db.busy_timeout(BUSY_WAIT).map_err(failed)?;
    Ok(db)
}

/// How many sessions `database` holds, read as the reader reads it: what `doctor` says of a
/// database judged is set to read.
pub fn sessions_in(database: &Path) -> Result<usize, ReadError> {
    let db = open(database)?;
    db.query_row("SELECT count(*) FROM event_sequence", [], |row| row.get::<_, i64>(0))
        .map(|n| n.max(0) as usize)
        .map_err(|source| ReadError::Database { host: Host::OpenCode, path: database.to_owned(), source })
}

/// The key of a database's logs: the first 16 hex digits of its path's SHA-256, so two
/// databases never share a directory and a path never becomes one.
fn database_key(database: &Path) -> String {
    let digest = judged_core::chain::sha256(database.as_os_str().as_encoded_bytes());
    judged_core::chain::to_hex(&digest)[..16].to_owned()
}

/// Every event of `session`, in order.
fn events_of(db: &rusqlite::Connection, session: &str) -> rusqlite::Result<Vec<Event>> {
    let mut query = db.prepare("SELECT id, seq, type, data FROM event WHERE aggregate_id = ?1 ORDER BY seq")?;
    let rows = query.query_map([session], |row| {
        Ok(Event { id: row.get(0)?, seq: row.get::<_, i64>(1)?.max(0) as u64, kind: row.get(2)?, data: row.get(3)? })
    })?;
    rows.collect()
}

/// How far the log at `log` goes: its lines' count (none of a log not written yet).
fn written_in(log: &Path) -> std::io::Result<Written> {
    let bytes = match fs::read(log) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Written::default()),
        Err(error) => return Err(error),
    };
    // A last line without its terminator (a write cut short) counts: it then compares as
    // no line the database holds.
    let unterminated = bytes.last().is_some_and(|&b| b != b'\n');
    let lines = memchr::memchr_iter(b'\n', &bytes).count() + usize::from(unterminated);
    Ok(Written { next_seq: lines as u64, stopped: false })
}

/// The log line of `event`, after the event `parent`.
fn line_of(session: &str, event: &Event, parent: Option<&str>) -> String {
    // OpenCode writes `data` as one line of JSON; anything else is carried as a string.
    let parsed = serde_json::from_str::<serde_json::Value>(&event.data).ok();
    let compact = match &parsed {
        Some(value) => value.to_string(),
        None => serde_json::Value::String(event.data.clone()).to_string(),
    };
    let data = RawValue::from_string(compact).expect("serde_json wrote valid JSON");
    let time = parsed.as_ref().and_then(event_time);
    let timestamp = time.and_then(chrono::DateTime::from_timestamp_millis).map(judged_core::timestamp::format_utc);
    let line = MirrorLine {
        id: &event.id,
        parent_id: parent,
        session_id: session,
        seq: event.seq,
        kind: &event.kind,
        timestamp,
        data: &data,
    };
    line.to_line()
}

/// Append to `log` the events past what it holds, having checked that those it holds are
/// still the database's; what it holds then, and the rewrite found, if one was.
fn append(
    log: &Path,
    session: &str,
    events: &[Event],
    mut written: Written,
) -> Result<(Written, Option<Rewritten>), ReadError> {
    let log_error = |source| ReadError::Log { host: Host::OpenCode, path: log.to_owned(), source };
    let held = if written.next_seq == 0 { Vec::new() } else { fs::read(log).map_err(log_error)? };
    let mut offset = 0u64;
    let mut parent: Option<&str> = None;
    let mut lines = Vec::new();
    for (n, event) in events.iter().enumerate() {
        let line = line_of(session, event, parent);
        let in_order = event.seq == n as u64;
        if (n as u64) < written.next_seq {
            let end = held[offset as usize..].iter().position(|&b| b == b'\n').map(|at| offset as usize + at);
            let same = end.is_some_and(|end| &held[offset as usize..end] == line.as_bytes());
            if !(same && in_order) {
                written.stopped = true;
                return Ok((written, Some(Rewritten { log: log.to_owned(), line: n as u64 + 1, offset })));
            }
            offset = end.map_or(offset, |end| end as u64 + 1);
        } else if in_order {
            lines.push(line);
        } else {
            // A gap in the numbers: the events after it wait until it is filled.
            break;
        }
        parent = Some(&event.id);
    }
    if (events.len() as u64) < written.next_seq {
        written.stopped = true;
        return Ok((written, Some(Rewritten { log: log.to_owned(), line: events.len() as u64 + 1, offset })));
    }
    if lines.is_empty() {
        return Ok((written, None));
    }
    if let Some(dir) = log.parent() {
        fs::create_dir_all(dir).map_err(log_error)?;
    }
    let mut file = fs::OpenOptions::new().append(true).create(true).mode(0o600).open(log).map_err(log_error)?;
    let mut text = lines.join("\n");
    text.push('\n');
    file.write_all(text.as_bytes()).map_err(log_error)?;
    written.next_seq += lines.len() as u64;
    Ok((written, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database with OpenCode 1.18.33's two tables the reader reads.
    fn database(dir: &Path) -> (PathBuf, rusqlite::Connection) {
        let path = dir.join("opencode.db");
        let db = rusqlite::Connection::open(&path).unwrap();
        db.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE event (id TEXT PRIMARY KEY, aggregate_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL);
             CREATE TABLE event_sequence (aggregate_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, owner_id TEXT);",
        )
        .unwrap();
        (path, db)
    }

    fn add(db: &rusqlite::Connection, seq: i64, kind: &str, data: &str) {
        let id = format!("evt_{seq:03}");
        db.execute("INSERT INTO event VALUES (?1, 'ses_a1', ?2, ?3, ?4)", rusqlite::params![id, seq, kind, data])
            .unwrap();
        db.execute("INSERT OR REPLACE INTO event_sequence VALUES ('ses_a1', ?1, NULL)", [seq]).unwrap();
    }

    const OPENED: &str =
        r#"{"sessionID":"ses_a1","info":{"id":"ses_a1","directory":"/w/shop","time":{"created":1796407762734}}}"#;
    const ANSWERED: &str = r#"{"sessionID":"ses_a1","info":{"id":"msg_2","role":"assistant","modelID":"qwen3-coder-plus","time":{"created":1796407765545,"completed":1796407765700},"finish":"stop"}}"#;

    /// Each event becomes one line, in order, chained to the one before; a later read
    /// appends only the new events.
    #[test]
    fn a_sessions_events_become_its_log_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let (path, db) = database(dir.path());
        add(&db, 0, "session.created.1", OPENED);
        let mut reader = EventReader::new(vec![path.clone()]);
        let root = dir.path().join("logs");
        assert_eq!(reader.read_into(&root, std::slice::from_ref(&path)).0, []);
        let log = root.join(database_key(&path)).join("ses_a1.jsonl");
        let first = fs::read_to_string(&log).unwrap();
        let line: serde_json::Value = serde_json::from_str(first.trim_end()).unwrap();
        assert_eq!(
            (line["id"].as_str(), line["seq"].as_u64(), &line["parentId"]),
            (Some("evt_000"), Some(0), &json!(null))
        );
        assert_eq!(line["timestamp"], "2026-12-04T18:09:22.734000Z");
        let record = judged_core::adapter::parse_line(judged_core::event::Host::OpenCode, first.trim_end().as_bytes());
        assert_eq!(record.unwrap().cwd.as_deref(), Some("/w/shop"));

        add(&db, 1, "message.updated.1", ANSWERED);
        assert_eq!(reader.read_into(&root, std::slice::from_ref(&path)).0, []);
        let text = fs::read_to_string(&log).unwrap();
        assert!(text.starts_with(&first), "the first line stays as it was");
        let second: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        assert_eq!(
            (second["parentId"].as_str(), second["type"].as_str()),
            (Some("evt_000"), Some("message.updated.1"))
        );

        // A reader started afresh (the daemon restarted) goes on from the log.
        let mut again = EventReader::new(vec![path.clone()]);
        assert_eq!(again.read_into(&root, std::slice::from_ref(&path)).0, []);
        assert_eq!(fs::read_to_string(&log).unwrap(), text);
    }

    /// An event read before that the database now holds otherwise (or no more) is a
    /// rewritten history: found at its line, and the log is written no more.
    #[test]
    fn an_event_changed_in_the_database_is_a_rewrite_at_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let (path, db) = database(dir.path());
        add(&db, 0, "session.created.1", OPENED);
        add(&db, 1, "message.updated.1", ANSWERED);
        let mut reader = EventReader::new(vec![path.clone()]);
        let root = dir.path().join("logs");
        reader.read_into(&root, std::slice::from_ref(&path));
        let log = root.join(database_key(&path)).join("ses_a1.jsonl");
        let first_line_len = fs::read_to_string(&log).unwrap().lines().next().unwrap().len() as u64 + 1;

        db.execute("UPDATE event SET data = replace(data, 'stop', 'length') WHERE seq = 1", []).unwrap();
        add(&db, 2, "session.updated.1", OPENED);
        let (found, errors) = reader.read_into(&root, std::slice::from_ref(&path));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(found, [Rewritten { log: log.clone(), line: 2, offset: first_line_len }]);
        assert_eq!(fs::read_to_string(&log).unwrap().lines().count(), 2, "nothing appended after the rewrite");
        add(&db, 3, "session.updated.1", OPENED);
        assert_eq!(reader.read_into(&root, std::slice::from_ref(&path)).0, [], "found once");
    }

    /// A database that is not OpenCode's says why it could not be read (one not there yet
    /// is not admitted: `Ingestor`'s tests).
    #[test]
    fn a_database_unreadable_is_said_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.db");
        fs::write(&other, b"not a database").unwrap();
        let mut reader = EventReader::new(vec![other.clone()]);
        let (_, errors) = reader.read_into(dir.path(), std::slice::from_ref(&other));
        let said = errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
        assert!(said.contains("cannot read OpenCode's database") && said.contains("other.db"), "{said}");
    }

    use serde_json::json;
}
