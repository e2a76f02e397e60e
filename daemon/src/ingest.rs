//! Tailing: bring the store up to date with the log files, and notice when a file's
//! history changed under us.
//!
//! Every entry point is synchronous and idempotent: the watcher calls [`Ingestor::catch_up`]
//! as a hint, and every query calls it first (read-your-writes), so a line a host wrote
//! before a query is visible to it whatever the watcher's latency.

use crate::store::{FileState, FileUpdate, NewLine, Store, StoreError};
use judged_core::chain;
use judged_core::event::Host;
use judged_core::files::{self, Roots};
use judged_core::host_chain::HostChain;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Lines per transaction while catching up a large file.
const BATCH_LINES: usize = 4096;
/// Bytes read from a file at a time.
const READ_CHUNK: usize = 8 * 1024 * 1024;
/// The finding an in-place write is journaled as; it taints the whole log.
pub const IN_PLACE_WRITE: &str = "in-place write";
/// The longest line ingest holds while waiting for its newline.
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

pub struct Ingestor {
    pub store: Store,
    pub roots: Roots,
    /// Paths already journaled as refused, so a refusal is recorded once.
    refused: HashSet<PathBuf>,
    /// Full reconciliations so far (`status` shows it: a busy idle daemon is a bug).
    pub passes: u64,
    /// How each file looked when it was last found consistent and fully ingested; a file
    /// that still looks the same costs one `lstat` per query.
    unchanged: HashMap<PathBuf, Fingerprint>,
    /// How each file looked when its whole ingested prefix last re-hashed clean.
    verified: HashMap<PathBuf, Fingerprint>,
    listings: Listings,
}

/// Directory listings kept between discoveries, each with how its directory looked when
/// read: a directory that still looks the same holds the same entries, so discovering
/// costs one `stat` per directory, not reading each one.
#[derive(Default)]
struct Listings {
    kept: rustc_hash::FxHashMap<std::ffi::OsString, Kept>,
}

struct Kept {
    looked: Fingerprint,
    /// Read well after the directory last changed. A change within the file system's
    /// timestamp granularity of the read can leave the change time as it was, so a
    /// listing read that close to a change is read again next time.
    settled: bool,
    entries: files::Listing,
}

impl Listings {
    /// Longer than any file system's timestamp granularity (coarse clocks tick at 1-10 ms).
    const SETTLE: std::time::Duration = std::time::Duration::from_millis(100);
    /// Directories remembered at most; past that the cache starts over.
    const CAPACITY: usize = 100_000;

    /// The entries of `dir`. Unless `check`, a listing already kept is taken as it is,
    /// without looking at the directory.
    fn list(&mut self, dir: &Path, check: bool) -> files::Listing {
        if !check && let Some(kept) = self.kept.get(dir.as_os_str()) {
            return kept.entries.clone();
        }
        // Followed, as reading the directory follows a symlinked root.
        let Ok(meta) = fs::metadata(dir) else {
            self.kept.remove(dir.as_os_str());
            return files::Listing::default();
        };
        let looked = Fingerprint::of(&meta);
        if let Some(kept) = self.kept.get(dir.as_os_str()).filter(|k| k.settled && k.looked == looked) {
            return kept.entries.clone();
        }
        // A read that failed (say, out of file descriptors) is not kept: the directory's
        // logs would stay hidden until it changed.
        let Ok(entries) = files::read_entries(dir) else { return files::Listing::default() };
        // A change time before the epoch or in the future: never settled, read each time.
        let changed = u64::try_from(meta.ctime())
            .ok()
            .and_then(|s| std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(s, meta.ctime_nsec() as u32)));
        let settled = changed
            .and_then(|changed| std::time::SystemTime::now().duration_since(changed).ok())
            .is_some_and(|age| age > Self::SETTLE);
        if self.kept.len() >= Self::CAPACITY {
            self.kept.clear();
        }
        self.kept.insert(dir.as_os_str().to_owned(), Kept { looked, settled, entries: entries.clone() });
        entries
    }
}

/// A log's ingested history checked against its file (`judged verify-log` prints it).
#[derive(Debug, serde::Serialize)]
pub struct PrefixCheck {
    pub session: String,
    pub path: String,
    pub lines: u64,
    pub bytes: u64,
    pub chain_sha256: String,
    /// The file no longer holds the bytes ingested (now or at an earlier check).
    pub tampered: bool,
    /// The file is gone; its history stays in the store.
    pub vanished: bool,
    pub findings: u64,
}

/// Size, change time and inode: what changes when a host appends or a file is replaced.
/// The change time, unlike the modification time, cannot be set back by the writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprint {
    len: u64,
    ctime: (i64, i64),
    ino: u64,
}

impl Fingerprint {
    fn of(meta: &fs::Metadata) -> Fingerprint {
        Fingerprint { len: meta.len(), ctime: (meta.ctime(), meta.ctime_nsec()), ino: meta.ino() }
    }
}

/// The session a log file belongs to, from its place under the root.
fn session_key(host: Host, path: &Path) -> String {
    let name =
        |p: Option<&Path>| p.and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match host {
        Host::CopilotCli => name(path.parent()),
        Host::ClaudeCode => {
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let parent = path.parent();
            if parent.and_then(Path::file_name).is_some_and(|n| n == "subagents") {
                format!("{}/{stem}", name(parent.and_then(Path::parent)))
            } else {
                stem
            }
        }
    }
}

impl Ingestor {
    pub fn new(store: Store, roots: Roots) -> Ingestor {
        Ingestor {
            store,
            roots,
            refused: HashSet::new(),
            passes: 0,
            unchanged: HashMap::new(),
            verified: HashMap::new(),
            listings: Listings::default(),
        }
    }

    /// Every log under the roots (directories unchanged since the last time are not
    /// read again).
    pub fn discover(&mut self) -> Vec<files::Discovered> {
        self.discover_checking(|_| true)
    }

    /// As [`Ingestor::discover`], but a directory `check` rejects is taken as last read
    /// when it was read before (for a caller that knows no log it cares for can be new
    /// there; the watcher and the periodic reconcile still look at every directory).
    pub fn discover_checking(&mut self, check: impl Fn(&Path) -> bool) -> Vec<files::Discovered> {
        let listings = &mut self.listings;
        self.roots.discover_with(&mut |dir| listings.list(dir, check(dir)))
    }

    /// Every log under `roots`, which are not the watched ones (a root a request names),
    /// through the same kept listings.
    pub fn discover_in(&mut self, roots: &Roots) -> Vec<files::Discovered> {
        let listings = &mut self.listings;
        roots.discover_with(&mut |dir| listings.list(dir, true))
    }

    /// Discover every log under the roots and catch each up.
    pub fn catch_up_all(&mut self) -> Result<(), StoreError> {
        self.passes += 1;
        for found in self.discover() {
            self.catch_up(&found.path, found.host)?;
        }
        Ok(())
    }

    /// Check a file is one we may read; journal a refusal once.
    fn admissible(&mut self, path: &Path) -> Result<Option<fs::Metadata>, StoreError> {
        let meta = match fs::symlink_metadata(path) {
            Ok(meta) => meta,
            Err(_) => return Ok(None), // vanished: nothing to read, nothing lost
        };
        let reason = if meta.file_type().is_symlink() {
            Some("symlink")
        } else if !meta.is_file() {
            Some("not a regular file")
        } else if meta.uid() != files::current_uid() {
            Some("owned by another user")
        } else {
            None
        };
        match reason {
            None => Ok(Some(meta)),
            Some(reason) => {
                if self.refused.insert(path.to_path_buf()) {
                    tracing::warn!(path = %path.display(), reason, "refusing log file");
                    self.store.journal("file_refused", &json!({"path": path.to_string_lossy(), "reason": reason}))?;
                }
                Ok(None)
            }
        }
    }

    /// Ingest what was appended to `path` since the stored offset.
    pub fn catch_up(&mut self, path: &Path, host: Host) -> Result<(), StoreError> {
        let Some(meta) = self.admissible(path)? else { return Ok(()) };
        let fingerprint = Fingerprint::of(&meta);
        let last = self.unchanged.get(path).copied();
        if last == Some(fingerprint) {
            return Ok(());
        }
        if let Some(last) = last
            && fingerprint.len <= last.len
        {
            self.in_place_write(path, last, fingerprint)?;
        }
        if self.bring_up_to_date(path, host, &meta)? {
            self.unchanged.insert(path.to_path_buf(), fingerprint);
        }
        Ok(())
    }

    /// Host logs only grow, so a file that changed without growing was written in place.
    /// Its whole prefix is hashed again (a changed byte marks it tampered), and the write
    /// itself is journaled even when the bytes are already back: the log was open to
    /// rewriting, and evidence resting on it is refused.
    fn in_place_write(&mut self, path: &Path, last: Fingerprint, now: Fingerprint) -> Result<(), StoreError> {
        let Some(file) = self.store.file_by_path(&path.to_string_lossy()).cloned() else { return Ok(()) };
        if file.tampered {
            return Ok(());
        }
        if self.verify_prefix(&file)?.tampered {
            return Ok(());
        }
        let mut file = self.store.file_by_path(&file.path).cloned().unwrap_or(file);
        tracing::warn!(path = %file.path, within = file.offset, "log written in place inside its ingested history");
        let detail = json!({"file_id": file.id, "path": file.path, "seq": file.lines, "offset": 0, "within_bytes": file.offset,
            "finding": IN_PLACE_WRITE, "len_before": last.len, "len_after": now.len,
            "replaced": last.ino != now.ino});
        self.store.record_finding(&mut file, &detail)
    }

    /// Check the stored history against the file and ingest what was appended; false
    /// when the file's history changed (then it is recorded as tampered and left alone).
    fn bring_up_to_date(&mut self, path: &Path, host: Host, meta: &fs::Metadata) -> Result<bool, StoreError> {
        let shown = path.to_string_lossy().into_owned();
        let mut file = match self.store.file_by_path(&shown).cloned() {
            Some(file) => file,
            None => self.store.add_file(&shown, host, &session_key(host, path))?,
        };
        if file.tampered {
            return Ok(false); // never re-ingest over a history that changed
        }
        if meta.len() < file.offset {
            let detail = json!({"file_id": file.id, "path": shown, "reason": "truncated", "offset": meta.len(),
                "expected_len": file.offset, "found_len": meta.len()});
            self.store.mark_tampered(&mut file, detail)?;
            return Ok(false);
        }
        if file.lines > 0 && !self.last_line_intact(&file, path)? {
            return Ok(false); // last_line_intact recorded the tamper
        }
        if meta.len() > file.offset {
            self.read_appended(&mut file, path)?;
        }
        Ok(true)
    }

    /// Compare the last ingested line with the file; record a tamper when it changed.
    fn last_line_intact(&mut self, file: &FileState, path: &Path) -> Result<bool, StoreError> {
        let Some(last) = self.store.lines(file.id, file.lines, 1)?.pop() else { return Ok(true) };
        let found = read_range(path, last.start, last.end);
        if found.as_deref().map(chain::sha256) == Some(last.sha256) {
            return Ok(true);
        }
        let mut file = file.clone();
        self.record_rewrite(&mut file, last.start, &last.sha256, found.as_deref())?;
        Ok(false)
    }

    fn record_rewrite(
        &mut self,
        file: &mut FileState,
        offset: u64,
        expected: &chain::Hash,
        found: Option<&[u8]>,
    ) -> Result<(), StoreError> {
        let detail = json!({"file_id": file.id, "path": file.path, "reason": "rewritten", "offset": offset,
            "expected_sha256": chain::to_hex(expected), "found_sha256": found.map(|b| chain::to_hex(&chain::sha256(b)))});
        tracing::warn!(path = %file.path, offset, "log rewritten inside its ingested history");
        self.store.mark_tampered(file, detail)
    }

    /// Re-hash every ingested line against the file (on start and on `verify-log`).
    pub fn verify_prefix(&mut self, file: &FileState) -> Result<PrefixCheck, StoreError> {
        self.verify_prefix_if(file, true)
    }

    /// As [`Ingestor::verify_prefix`], but skip the re-hash when the file still looks as
    /// it did at its last full check (for evidence requests, which clients retry).
    pub fn verify_prefix_if_changed(&mut self, file: &FileState) -> Result<PrefixCheck, StoreError> {
        self.verify_prefix_if(file, false)
    }

    fn verify_prefix_if(&mut self, file: &FileState, always: bool) -> Result<PrefixCheck, StoreError> {
        let path = Path::new(&file.path);
        let mut file = file.clone();
        let meta = fs::symlink_metadata(path).ok();
        let fingerprint = meta.as_ref().map(Fingerprint::of);
        let unchanged = !always && fingerprint.is_some() && self.verified.get(path) == fingerprint.as_ref();
        // A log that is gone was removed, not rewritten (Claude Code sweeps transcripts
        // after `cleanupPeriodDays`): its history stays in the store and is reported
        // as vanished, not as tampered.
        let vanished = meta.is_none();
        if !file.tampered && !unchanged && !vanished {
            let len = meta.as_ref().map_or(0, fs::Metadata::len);
            if meta.as_ref().is_some_and(|m| !m.is_file()) {
                let detail = json!({"file_id": file.id, "path": file.path, "reason": "replaced by a symlink or non-regular file",
                    "offset": 0});
                self.store.mark_tampered(&mut file, detail)?;
            } else if len < file.offset {
                let detail = json!({"file_id": file.id, "path": file.path, "reason": "truncated", "offset": len,
                    "expected_len": file.offset, "found_len": len});
                self.store.mark_tampered(&mut file, detail)?;
            } else if let Some(handle) = open_log(path) {
                // Stream both sides: a session may be larger than the daemon's memory budget.
                let mut reader = std::io::BufReader::with_capacity(1 << 20, handle);
                let mut mismatch = None;
                self.store.scan_lines(file.id, 0, false, |line| {
                    let mut found = vec![0u8; (line.end - line.start) as usize];
                    if reader.read_exact(&mut found).is_err() || chain::sha256(&found) != line.sha256 {
                        mismatch = Some((line.start, line.sha256, found));
                    }
                    mismatch.is_none()
                })?;
                match mismatch {
                    Some((offset, expected, found)) => {
                        self.record_rewrite(&mut file, offset, &expected, Some(&found))?
                    }
                    None => {
                        self.verified.insert(path.to_path_buf(), fingerprint.expect("the file was just read"));
                    }
                }
            }
        }
        Ok(PrefixCheck {
            session: file.session,
            path: file.path,
            lines: file.lines,
            bytes: file.offset,
            chain_sha256: chain::to_hex(&file.chain),
            tampered: file.tampered,
            vanished,
            findings: file.findings,
        })
    }

    fn read_appended(&mut self, file: &mut FileState, path: &Path) -> Result<(), StoreError> {
        let Some(mut handle) = open_log(path) else { return Ok(()) };
        if handle.seek(SeekFrom::Start(file.offset)).is_err() {
            return Ok(());
        }
        let mut pending: Vec<u8> = Vec::new();
        loop {
            // Read into the one growing buffer: a fresh zeroed chunk per call stayed
            // resident in the allocator's arenas (bench: 164 MiB after a 1 GB run).
            match (&mut handle).take(READ_CHUNK as u64).read_to_end(&mut pending) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if pending.len() > MAX_LINE_BYTES && !pending.contains(&b'\n') {
                // No host writes such a line; holding it would grow without bound.
                let detail = json!({"file_id": file.id, "path": file.path, "offset": file.offset,
                    "error": format!("line longer than {MAX_LINE_BYTES} bytes; ingest of this file paused")});
                self.store.journal("malformed_line", &detail)?;
                return Ok(());
            }
            let complete = judged_core::log::complete_len(&pending);
            if complete > 0 {
                self.ingest_complete(file, &pending[..complete])?;
                pending.drain(..complete);
            }
        }
        Ok(())
    }

    /// Ingest bytes that are whole lines, starting at `file.offset`.
    fn ingest_complete(&mut self, file: &mut FileState, bytes: &[u8]) -> Result<(), StoreError> {
        let raws: Vec<&[u8]> = judged_core::log::complete_lines(bytes).collect();
        for batch in raws.chunks(BATCH_LINES) {
            let mut start = file.offset;
            let mut update = FileUpdate::default();
            let mut events: Vec<(&str, Value)> = Vec::new();
            let mut lines: Vec<NewLine> = Vec::with_capacity(batch.len());
            let mut host_chain = HostChain::after(file.last_host_id.clone());
            let mut seq = file.lines;
            for raw in batch {
                seq += 1;
                let trimmed = raw.trim_ascii_end();
                let parsed = if trimmed.trim_ascii().is_empty() {
                    None
                } else {
                    Some(judged_core::adapter::envelope(file.host, trimmed))
                };
                let kind = match parsed {
                    Some(Ok(record)) => {
                        if HostChain::kept_by(file.host)
                            && let Err(broken) = host_chain.follow(&record)
                        {
                            events.push(("integrity_finding", json!({"file_id": file.id, "path": file.path, "seq": seq, "offset": start,
                                "finding": "parentId chain break", "expected_parent": broken.expected_parent, "found_parent": broken.found_parent})));
                            file.findings += 1;
                        }
                        update.observe(file.host, &record);
                        Some(record.kind)
                    }
                    Some(Err(error)) => {
                        events.push(("malformed_line", json!({"file_id": file.id, "path": file.path, "seq": seq, "offset": start, "error": error.to_string()})));
                        None
                    }
                    None => None,
                };
                lines.push(NewLine { start, raw, kind });
                start += raw.len() as u64;
            }
            self.store.append_lines(file, &lines, &update, &events)?;
        }
        Ok(())
    }
}

/// Open a log for reading without following a symlink or blocking on a FIFO that took
/// its place, and only if it is (still) a regular file.
fn open_log(path: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path).ok()?;
    file.metadata().ok().filter(fs::Metadata::is_file).map(|_| file)
}

fn read_range(path: &Path, start: u64, end: u64) -> Option<Vec<u8>> {
    let mut file = open_log(path)?;
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut buffer = vec![0u8; (end - start) as usize];
    file.read_exact(&mut buffer).ok()?;
    Some(buffer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(entries: &[files::Entry]) -> Vec<String> {
        let mut names: Vec<String> =
            entries.iter().map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_kept_listing_never_hides_an_entry_added_since() {
        let dir = tempfile::tempdir().unwrap();
        let mut listings = Listings::default();
        fs::write(dir.path().join("a"), b"").unwrap();
        assert_eq!(names(&listings.list(dir.path(), true)), ["a"]);
        // Within the timestamp granularity of that read: the change time may not move.
        fs::write(dir.path().join("b"), b"").unwrap();
        assert_eq!(names(&listings.list(dir.path(), true)), ["a", "b"]);
        // Long after: the listing is kept, and a later entry still changes the directory.
        std::thread::sleep(Listings::SETTLE * 2);
        assert_eq!(names(&listings.list(dir.path(), true)), ["a", "b"]);
        assert!(listings.kept[dir.path().as_os_str()].settled, "a listing read well after the last change is kept");
        fs::create_dir(dir.path().join("c")).unwrap();
        // Unchecked, the kept listing is taken as it is; checked, the change shows.
        assert_eq!(names(&listings.list(dir.path(), false)), ["a", "b"]);
        let entries = listings.list(dir.path(), true);
        assert_eq!(names(&entries), ["a", "b", "c"]);
        assert!(entries.iter().any(|(p, is_dir)| p.ends_with("c") && *is_dir));
        // A directory that goes away lists as empty and is forgotten.
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(listings.list(&path, true).is_empty());
        assert!(listings.kept.is_empty());
    }
}
