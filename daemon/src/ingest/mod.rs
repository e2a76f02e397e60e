//! Tailing: bring the store up to date with the log files, and notice when a file's
//! history changed under us.
//!
//! Every entry point is synchronous and idempotent: the watcher calls
//! [`Ingestor::catch_up`] as a hint, and every query calls it first (read-your-writes), so
//! a line a host wrote before a query is visible to it whatever the watcher's latency.
//! The [`Ingestor`] keeps only what makes catching up cheap (what each file and directory
//! looked like); the history itself is the [`Store`]'s, passed in by its owner.

mod listings;
mod opencode;
mod replay;
mod tasks;
mod transcribe;

pub use opencode::sessions_in as opencode_sessions_in;
pub use replay::replay;
pub use tasks::{Asked, TaskCompletion, said};
pub use transcribe::Transcriber;

use crate::store::{
    Batch, FileRefused, FileState, Finding, IntegrityFinding, JournalEvent, MalformedLine, NewLine, SessionBegan,
    Store, StoreError, TamperDetected,
};
use judged_core::event::Host;
use judged_core::host_chain::HostChain;
use judged_core::{adapter, chain};
use judged_io::files::{self, Roots};
use judged_io::worktree::{self, Reader};
use judged_protocol::PrefixCheck;
use listings::{Fingerprint, Listings};
use replay::FileUpdate;
use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Lines per transaction while catching up a large file.
const BATCH_LINES: usize = 4096;
/// Bytes read from a file at a time (and so at most per transaction): the read buffer,
/// which grows only to hold a longer line.
const READ_CHUNK: usize = 1024 * 1024;
/// How long to wait before looking again at a log that seems changed without growing.
const APPEND_SETTLE: std::time::Duration = std::time::Duration::from_millis(20);
/// How long after a look the watcher may still hear of a write that look saw: the
/// notification comes once the write is done, a little after a query may have read it.
const HEARD_LATENCY: std::time::Duration = std::time::Duration::from_millis(50);
/// The longest line ingest holds while waiting for its newline.
const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// Whether a prefix check re-hashes a file that looks as it did at its last clean check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recheck {
    /// Always (on start and on `verify-log`).
    Always,
    /// Only when it changed (evidence requests, which clients retry).
    IfChanged,
}

/// The transcribers of the hosts whose sessions live in databases, each reading the
/// databases the config names for it (`opencode_databases`): the one place here that names
/// such a host.
pub fn transcribers(opencode_databases: &[PathBuf]) -> Vec<Box<dyn Transcriber>> {
    vec![Box::new(opencode::EventReader::new(opencode_databases.to_vec()))]
}

/// How far the catch-up on start has got, shared with the server, which answers
/// `progress` from it while the engine is busy catching up.
#[derive(Debug, Default)]
pub struct CatchUpProgress {
    files_found: AtomicU64,
    files_done: AtomicU64,
    bytes_found: AtomicU64,
    bytes_done: AtomicU64,
    done: AtomicBool,
}

impl CatchUpProgress {
    /// The catch-up has ended (or failed; the daemon serves what it has).
    pub fn finish(&self) {
        self.done.store(true, Ordering::Release);
    }

    /// As the wire says it.
    pub fn report(&self) -> judged_protocol::CatchUp {
        judged_protocol::CatchUp {
            files_found: self.files_found.load(Ordering::Relaxed),
            files_done: self.files_done.load(Ordering::Relaxed),
            bytes_found: self.bytes_found.load(Ordering::Relaxed),
            bytes_done: self.bytes_done.load(Ordering::Relaxed),
            done: self.done.load(Ordering::Acquire),
        }
    }
}

/// A watcher's hint: a path that changed, and, for a write to a file (not a rename, a
/// new entry or a change of its times), when the watcher heard of it.
#[derive(Clone, Debug)]
pub struct Hint {
    pub path: PathBuf,
    pub written: Option<Instant>,
}

/// What makes catching up cheap: the roots, and how each file and directory looked.
pub struct Ingestor {
    roots: Roots,
    /// Whose logs it reads: the daemon's own user, and the users a witness account serves.
    owners: Vec<u32>,
    /// Paths already journaled as refused, so a refusal is recorded once.
    refused: HashSet<PathBuf>,
    /// Logs whose ingest is paused at a line too long to hold, journaled once.
    paused: HashSet<PathBuf>,
    /// Full reconciliations so far (`status` shows it: a busy idle daemon is a bug).
    passes: u64,
    /// How each file looked when it was last found consistent and fully ingested; a file
    /// that still looks the same costs one `lstat` per query.
    unchanged: HashMap<PathBuf, Fingerprint>,
    /// When a look last accounted for every write to each file before it: it saw the
    /// file grow, or recorded a write in place (see [`Ingestor::catch_up_heard`]).
    accounted: HashMap<PathBuf, Instant>,
    /// How each file looked when its whole ingested prefix last re-hashed clean.
    verified: HashMap<PathBuf, Fingerprint>,
    listings: Listings,
    /// Each log's host chain as followed so far, by file id, with the events it holds
    /// ahead of their parent (positions: line number and offset). After a restart it
    /// resumes from the event the store says it reached.
    chains: HashMap<i64, HostChain<(u64, u64)>>,
    /// Claude Code task completions, for the engine to match to gate decisions.
    tasks: tasks::Tasks,
    /// The hosts' session databases, each read into logs under its host's first root.
    transcribers: Vec<Box<dyn Transcriber>>,
}

impl Ingestor {
    /// An ingestor for the logs under `roots`.
    pub fn new(roots: Roots) -> Ingestor {
        Ingestor {
            roots,
            owners: vec![files::current_uid()],
            refused: HashSet::new(),
            paused: HashSet::new(),
            passes: 0,
            unchanged: HashMap::new(),
            accounted: HashMap::new(),
            verified: HashMap::new(),
            listings: Listings::default(),
            chains: HashMap::new(),
            tasks: tasks::Tasks::default(),
            transcribers: Vec::new(),
        }
    }

    /// The same, reading the logs of `users` too (a witness under its own account).
    pub fn serving(mut self, users: &[u32]) -> Ingestor {
        self.owners.extend_from_slice(users);
        self
    }

    /// An ingestor that reads the sessions of the hosts' databases into logs under each
    /// host's first root before each full catch-up.
    pub fn transcribing(mut self, transcribers: Vec<Box<dyn Transcriber>>) -> Ingestor {
        self.transcribers = transcribers;
        self
    }

    /// The session databases of `host` read.
    pub fn databases_of(&self, host: Host) -> Vec<PathBuf> {
        let of_host = self.transcribers.iter().filter(|reader| reader.host() == host);
        of_host.flat_map(|reader| reader.databases().iter().cloned()).collect()
    }

    /// Append what the hosts' databases hold past judged's logs of them, and record each
    /// session found rewritten as its log's tamper (the log is caught up first, so the
    /// store knows it).
    pub fn read_databases(&mut self, store: &mut Store) -> Result<(), StoreError> {
        let mut transcribers = std::mem::take(&mut self.transcribers);
        let read = transcribers.iter_mut().try_for_each(|reader| self.transcribe(store, reader.as_mut()));
        self.transcribers = transcribers;
        read
    }

    fn transcribe(&mut self, store: &mut Store, reader: &mut dyn Transcriber) -> Result<(), StoreError> {
        let host = reader.host();
        let Some(root) = self.roots.of(host).first().cloned() else { return Ok(()) };
        // A database is admitted as a log is: a regular file, not a link, of a user served.
        let mut admitted = Vec::new();
        for database in reader.databases().to_vec() {
            if self.admissible(store, &database)?.is_some() {
                admitted.push(database);
            }
        }
        let (rewritten, errors) = reader.read_into(&root, &admitted);
        let name = adapter::of(host).name();
        for error in errors {
            tracing::warn!(%error, "{name}'s sessions are read again at the next catch-up");
        }
        for found in rewritten {
            self.catch_up(store, &found.log, host)?;
            let Some(mut file) = store.file_by_path(&found.log.to_string_lossy()).cloned() else { continue };
            if file.tampered {
                continue;
            }
            let rewrite = TamperDetected {
                reason: format!("{name}'s database no longer holds the event of line {} of this session", found.line),
                ..tamper(&file, found.offset)
            };
            tampered(store, &mut file, rewrite)?;
        }
        Ok(())
    }

    /// Whether a log owned by `uid` is one it reads.
    pub fn reads_logs_of(&self, uid: u32) -> bool {
        self.owners.contains(&uid)
    }

    /// The offset of the oldest event of file `file_id` still waiting for its parent (see
    /// `judged_core::host_chain`): evidence whose window it falls in is not known to hold.
    pub fn chain_waits_from(&self, file_id: i64) -> Option<u64> {
        self.chains.get(&file_id)?.oldest_waiting().map(|(_, offset)| *offset)
    }

    /// Every log with an event waiting for its parent, and where the oldest is: what a
    /// gate decision made now rests on, with the journal.
    pub fn chains_waiting(&self) -> Vec<(i64, u64)> {
        let mut waiting: Vec<(i64, u64)> = self
            .chains
            .iter()
            .filter_map(|(id, chain)| chain.oldest_waiting().map(|(_, offset)| (*id, *offset)))
            .collect();
        waiting.sort_unstable();
        waiting
    }

    /// Take up what each log's ends waited for when the store last kept it: a daemon
    /// stopped between a `TaskUpdate` call and its result (or a stop and what followed it)
    /// still sees that completion. A kept state that does not parse is logged and left.
    pub fn resume_ends(&mut self, store: &Store) -> Result<(), StoreError> {
        for (file_id, kept) in store.ends_waiting()? {
            let Some(file) = store.file(file_id) else { continue };
            if let Err(error) = self.tasks.resume(file.host, file_id, &file.path, &kept) {
                tracing::warn!(path = %file.path, %error, "cannot take up what this log's ends waited for");
            }
        }
        Ok(())
    }

    /// The task completions ingested since the last call. The store keeps each with its
    /// log until [`Ingestor::accounted`] is told it was matched.
    pub fn take_completions(&mut self) -> Vec<TaskCompletion> {
        self.tasks.take()
    }

    /// Take `completion` up again at the next call of [`Ingestor::take_completions`]: it
    /// could not be matched yet.
    pub fn defer(&mut self, completion: TaskCompletion) {
        self.tasks.defer(completion);
    }

    /// The store no longer keeps `completions` (taken, and matched to the gate's
    /// decisions) as found: a daemon started again does not take them up again.
    pub fn accounted(&mut self, store: &mut Store, completions: &[TaskCompletion]) -> Result<(), StoreError> {
        let mut files: Vec<i64> = completions.iter().map(|completion| completion.file_id).collect();
        files.sort_unstable();
        files.dedup();
        for file_id in files {
            if let Some(now) = self.tasks.waiting_changed(file_id) {
                store.set_ends_waiting(file_id, now.as_deref())?;
            }
        }
        Ok(())
    }

    /// Count as ends the Gemini CLI answers nothing has followed for `quiet`.
    pub fn settle_answers(&mut self, quiet: std::time::Duration) {
        self.tasks.settle(quiet);
    }

    /// The watched roots.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// Full reconciliations so far.
    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// Every log under the roots (directories unchanged since the last time are not
    /// read again).
    pub fn discover(&mut self) -> Vec<files::Discovered> {
        self.discover_looking_at(|_| true)
    }

    /// As [`Ingestor::discover`], but a directory `look` rejects is taken as last read
    /// when it was read before (for a caller that knows no log it cares for can be new
    /// there; the watcher and the periodic reconcile still look at every directory).
    pub fn discover_looking_at(&mut self, look: impl Fn(&Path) -> bool) -> Vec<files::Discovered> {
        let listings = &mut self.listings;
        self.roots.discover_with(&mut |dir| if look(dir) { listings.list(dir) } else { listings.kept_or_list(dir) })
    }

    /// Every log under `roots`, which are not the watched ones (a root a request names),
    /// through the same kept listings.
    pub fn discover_in(&mut self, roots: &Roots) -> Vec<files::Discovered> {
        let listings = &mut self.listings;
        roots.discover_with(&mut |dir| listings.list(dir))
    }

    /// The catch-up on start: every log under the roots, counted in `progress` as it goes.
    pub fn catch_up_counted(&mut self, store: &mut Store, progress: &CatchUpProgress) -> Result<(), StoreError> {
        self.passes += 1;
        let found = self.discover();
        let size = |path: &Path| fs::symlink_metadata(path).map_or(0, |m| m.len());
        let sizes: Vec<u64> = found.iter().map(|f| size(&f.path)).collect();
        progress.files_found.store(found.len() as u64, Ordering::Relaxed);
        progress.bytes_found.store(sizes.iter().sum(), Ordering::Relaxed);
        for (log, bytes) in found.iter().zip(sizes) {
            self.catch_up(store, &log.path, log.host)?;
            progress.files_done.fetch_add(1, Ordering::Relaxed);
            progress.bytes_done.fetch_add(bytes, Ordering::Relaxed);
        }
        progress.finish();
        Ok(())
    }

    /// Discover every log under the roots and catch each up.
    pub fn catch_up_all(&mut self, store: &mut Store) -> Result<(), StoreError> {
        self.passes += 1;
        self.read_databases(store)?;
        for found in self.discover() {
            self.catch_up(store, &found.path, found.host)?;
        }
        Ok(())
    }

    /// Catch up the logs under `dir`, a directory that just appeared: what a reconcile
    /// would find there, at a cost proportional to it, not to every root. Logs sit at most
    /// four levels below a root (Claude Code's sub-agent transcripts), so three levels of
    /// directories below `dir` are enough.
    pub fn catch_up_under(&mut self, store: &mut Store, dir: &Path) -> Result<(), StoreError> {
        let mut directories = vec![(dir.to_path_buf(), 0)];
        while let Some((directory, depth)) = directories.pop() {
            let Ok(entries) = fs::read_dir(&directory) else { continue };
            for entry in entries.flatten() {
                let path = entry.path();
                match entry.file_type() {
                    Ok(kind) if kind.is_dir() && depth < 3 => directories.push((path, depth + 1)),
                    Ok(kind) if kind.is_file() => {
                        if let Some(host) = self.roots.classify(&path) {
                            self.catch_up(store, &path, host)?;
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// Record the commit the work tree of `cwd` is on, now that a session's log first named
    /// it (`file`, of user `uid`): the changes a jury is shown are from there, so that work
    /// the agent commits in the session is shown too. Read as the gate reads that user's
    /// trees (a witness, as the user's files say); nothing is recorded outside a repository.
    fn session_began(&self, store: &mut Store, file: &FileState, cwd: &str, uid: u32) -> Result<(), StoreError> {
        let reader = if self.owners.len() > 1 { Reader::Witness { serving: uid } } else { Reader::Owner };
        let Some(base) = worktree::base(Path::new(cwd), reader) else { return Ok(()) };
        let commit = base.commit().map(str::to_owned);
        let began = SessionBegan { file_id: file.id, path: file.path.clone(), cwd: cwd.to_owned(), commit };
        store.journal(&JournalEvent::SessionBegan(began)).map(drop)
    }

    /// Check a file is one we may read; journal a refusal once.
    fn admissible(&mut self, store: &mut Store, path: &Path) -> Result<Option<fs::Metadata>, StoreError> {
        // Vanished: nothing to read, nothing lost.
        let Ok(meta) = fs::symlink_metadata(path) else { return Ok(None) };
        let reason = if meta.file_type().is_symlink() {
            Some("symlink")
        } else if !meta.is_file() {
            Some("not a regular file")
        } else if !self.owners.contains(&meta.uid()) {
            Some("owned by a user judged does not serve")
        } else {
            None
        };
        match reason {
            None => Ok(Some(meta)),
            Some(reason) => {
                if self.refused.insert(path.to_path_buf()) {
                    tracing::warn!(path = %path.display(), reason, "refusing log file");
                    let refused = FileRefused { path: path.to_string_lossy().into_owned(), reason: reason.into() };
                    store.journal(&JournalEvent::FileRefused(refused))?;
                }
                Ok(None)
            }
        }
    }

    /// Ingest what was appended to `path` since the stored offset.
    pub fn catch_up(&mut self, store: &mut Store, path: &Path, host: Host) -> Result<(), StoreError> {
        self.catch_up_heard(store, path, host, None)
    }

    /// As [`Ingestor::catch_up`], for a log the watcher heard written at `heard` (a write
    /// notification on it, not a rename or a change of its times).
    ///
    /// Host logs only grow, so a write the watcher hears of on a log that did not grow
    /// was made in place, whatever the file looks like by the time it is looked at: the
    /// bytes may be back already, and its change time cannot be trusted to have moved (a
    /// coarse clock tick, a file system that caches attributes). A write is accounted for
    /// by a look at or after it that saw the file grow (the host's append, which a query
    /// may have ingested before the notification came) or recorded the write in place.
    pub fn catch_up_heard(
        &mut self,
        store: &mut Store,
        path: &Path,
        host: Host,
        heard: Option<Instant>,
    ) -> Result<(), StoreError> {
        let mut looked = Instant::now();
        let Some(mut meta) = self.admissible(store, path)? else { return Ok(()) };
        let mut fingerprint = Fingerprint::of(&meta);
        let last = self.unchanged.get(path).copied();
        let unaccounted = heard.is_some_and(|heard| {
            last.is_some() && self.accounted.get(path).is_none_or(|&at| at + HEARD_LATENCY < heard)
        });
        if last == Some(fingerprint) && !unaccounted {
            return Ok(());
        }
        if let Some(last) = last
            && fingerprint.len <= last.len
        {
            // A write(2) updates the change time before the size, so a look inside a
            // host's append sees the file changed without growing (the load bench caught
            // it: appends taken for in-place writes). Look again once the append is done.
            // A write the watcher heard of is done (the notification comes after it), so
            // it is judged as it stands: waiting would let the host's next append hide it.
            if !unaccounted {
                std::thread::sleep(APPEND_SETTLE);
                looked = Instant::now();
                let Some(again) = self.admissible(store, path)? else { return Ok(()) };
                (meta, fingerprint) = (again.clone(), Fingerprint::of(&again));
            }
            if fingerprint.len <= last.len && (fingerprint != last || unaccounted) {
                self.in_place_write(store, path, last, fingerprint)?;
                self.accounted.insert(path.to_path_buf(), looked);
            }
        }
        if self.bring_up_to_date(store, path, host, &meta)? {
            if last.is_none_or(|last| fingerprint.len > last.len) {
                self.accounted.insert(path.to_path_buf(), looked);
            }
            self.unchanged.insert(path.to_path_buf(), fingerprint);
        }
        Ok(())
    }

    /// Host logs only grow, so a file that changed without growing was written in place.
    /// Its whole prefix is hashed again (a changed byte marks it tampered), and the write
    /// itself is journaled even when the bytes are already back: the log was open to
    /// rewriting, and evidence resting on it is refused.
    fn in_place_write(
        &mut self,
        store: &mut Store,
        path: &Path,
        last: Fingerprint,
        now: Fingerprint,
    ) -> Result<(), StoreError> {
        let Some(file) = store.file_by_path(&path.to_string_lossy()).cloned() else { return Ok(()) };
        if file.tampered || self.verify_prefix(store, &file)?.tampered {
            return Ok(());
        }
        let mut file = store.file_by_path(&file.path).cloned().unwrap_or(file);
        tracing::warn!(path = %file.path, within = file.offset, "log written in place inside its ingested history");
        let finding = IntegrityFinding {
            file_id: file.id,
            path: file.path.clone(),
            seq: file.lines,
            offset: 0,
            finding: Finding::InPlaceWrite {
                within_bytes: file.offset,
                len_before: last.len,
                len_after: now.len,
                replaced: last.ino != now.ino,
            },
        };
        store.record_finding(&mut file, finding)
    }

    /// Check the stored history against the file and ingest what was appended; false
    /// when the file's history changed (then it is recorded as tampered and left alone).
    fn bring_up_to_date(
        &mut self,
        store: &mut Store,
        path: &Path,
        host: Host,
        meta: &fs::Metadata,
    ) -> Result<bool, StoreError> {
        let shown = path.to_string_lossy().into_owned();
        let mut file = match store.file_by_path(&shown).cloned() {
            Some(file) => file,
            None => store.add_file(&shown, host, &judged_core::adapter::of(host).session_key(path))?,
        };
        if file.tampered {
            return Ok(false); // never re-ingest over a history that changed
        }
        if meta.len() < file.offset {
            let tamper = truncated(&file, meta.len());
            tampered(store, &mut file, tamper)?;
            return Ok(false);
        }
        if file.lines > 0 && !self.last_line_intact(store, &file, path)? {
            return Ok(false); // last_line_intact recorded the tamper
        }
        let reached = file.last_host_id.clone();
        let host_chain = self.chains.entry(file.id).or_insert_with(|| HostChain::after(file.host, reached));
        let unnamed = file.cwd.is_none();
        let appended = if meta.len() > file.offset {
            read_appended(store, &mut file, path, meta.len(), host_chain, &mut self.tasks)?
        } else {
            Appended::Read
        };
        if unnamed && let Some(cwd) = file.cwd.clone() {
            self.session_began(store, &file, &cwd, meta.uid())?;
        }
        if let Appended::Paused(offset) = appended
            && self.paused.insert(path.to_path_buf())
            && !paused_on_record(store, &file, offset)?
        {
            let error = format!(
                "a line at byte {offset} is longer than {MAX_LINE_BYTES} bytes without a newline; no host writes such \
                 lines, so ingest of this file is paused here (move the file out of the root if it is not a session log)"
            );
            tracing::warn!(path = %file.path, offset, "{error}");
            let malformed = MalformedLine { file_id: file.id, path: file.path.clone(), seq: None, offset, error };
            store.journal(&JournalEvent::MalformedLine(malformed))?;
        }
        Ok(true)
    }

    /// Compare the last ingested line with the file; record a tamper when it changed.
    fn last_line_intact(&mut self, store: &mut Store, file: &FileState, path: &Path) -> Result<bool, StoreError> {
        let Some(last) = store.lines(file.id, file.lines, 1)?.pop() else { return Ok(true) };
        let found = read_range(path, last.start, last.end);
        if found.as_deref().map(chain::sha256) == Some(last.sha256) {
            return Ok(true);
        }
        record_rewrite(store, &mut file.clone(), last.start, &last.sha256, found.as_deref())?;
        Ok(false)
    }

    /// Re-hash every ingested line against the file (on start and on `verify-log`).
    pub fn verify_prefix(&mut self, store: &mut Store, file: &FileState) -> Result<PrefixCheck, StoreError> {
        self.check_prefix(store, file, Recheck::Always)
    }

    /// As [`Ingestor::verify_prefix`], but skip the re-hash when the file still looks as
    /// it did at its last full check (for evidence requests, which clients retry).
    pub fn verify_prefix_if_changed(&mut self, store: &mut Store, file: &FileState) -> Result<PrefixCheck, StoreError> {
        self.check_prefix(store, file, Recheck::IfChanged)
    }

    fn check_prefix(
        &mut self,
        store: &mut Store,
        file: &FileState,
        recheck: Recheck,
    ) -> Result<PrefixCheck, StoreError> {
        let path = Path::new(&file.path);
        let mut file = file.clone();
        let meta = fs::symlink_metadata(path).ok();
        let fingerprint = meta.as_ref().map(Fingerprint::of);
        let unchanged =
            recheck == Recheck::IfChanged && fingerprint.is_some() && self.verified.get(path) == fingerprint.as_ref();
        // A log that is gone was removed, not rewritten (Claude Code sweeps transcripts
        // after `cleanupPeriodDays`): its history stays in the store and is reported
        // as vanished, not as tampered.
        let vanished = meta.is_none();
        if !file.tampered && !unchanged && !vanished {
            let len = meta.as_ref().map_or(0, fs::Metadata::len);
            if meta.as_ref().is_some_and(|m| !m.is_file()) {
                let tamper =
                    TamperDetected { reason: "replaced by a symlink or non-regular file".into(), ..tamper(&file, 0) };
                tampered(store, &mut file, tamper)?;
            } else if len < file.offset {
                let tamper = truncated(&file, len);
                tampered(store, &mut file, tamper)?;
            } else if let Some(handle) = open_log(path) {
                // Stream both sides: a session may be larger than the daemon's memory budget.
                let mut reader = std::io::BufReader::with_capacity(1 << 20, handle);
                let mut mismatch = None;
                store.scan_lines(file.id, 0, crate::store::Columns::WithoutRaw, |line| {
                    let mut found = vec![0u8; (line.end - line.start) as usize];
                    if reader.read_exact(&mut found).is_err() || chain::sha256(&found) != line.sha256 {
                        mismatch = Some((line.start, line.sha256, found));
                    }
                    mismatch.is_none()
                })?;
                match (mismatch, fingerprint) {
                    (Some((offset, expected, found)), _) => {
                        record_rewrite(store, &mut file, offset, &expected, Some(&found))?;
                    }
                    (None, Some(fingerprint)) => {
                        self.verified.insert(path.to_path_buf(), fingerprint);
                    }
                    (None, None) => {}
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
}

/// A tamper record about `file` at `offset`, its reason to be filled in.
fn tamper(file: &FileState, offset: u64) -> TamperDetected {
    TamperDetected {
        file_id: file.id,
        path: file.path.clone(),
        reason: String::new(),
        offset,
        expected_len: None,
        found_len: None,
        expected_sha256: None,
        found_sha256: None,
    }
}

/// The file is shorter than what was ingested.
fn truncated(file: &FileState, len: u64) -> TamperDetected {
    TamperDetected {
        reason: "truncated".into(),
        expected_len: Some(file.offset),
        found_len: Some(len),
        ..tamper(file, len)
    }
}

fn record_rewrite(
    store: &mut Store,
    file: &mut FileState,
    offset: u64,
    expected: &chain::Hash,
    found: Option<&[u8]>,
) -> Result<(), StoreError> {
    let rewritten = TamperDetected {
        reason: "rewritten".into(),
        expected_sha256: Some(chain::to_hex(expected)),
        found_sha256: found.map(|b| chain::to_hex(&chain::sha256(b))),
        ..tamper(file, offset)
    };
    tampered(store, file, rewritten)
}

/// Record that `file` no longer holds what was ingested, in the journal and the daemon's
/// log: it is not read again.
fn tampered(store: &mut Store, file: &mut FileState, tamper: TamperDetected) -> Result<(), StoreError> {
    tracing::warn!(path = %file.path, reason = %tamper.reason, offset = tamper.offset,
        "log no longer holds what judged ingested; it is not read again and evidence resting on it is refused");
    store.mark_tampered(file, tamper)
}

/// Whether the journal already holds the pause of `file` at `offset` (from before a
/// restart): it is recorded once.
fn paused_on_record(store: &Store, file: &FileState, offset: u64) -> Result<bool, StoreError> {
    let mut found = false;
    store.journal_newest_first(|_, _, line: MalformedLine| {
        found = line.file_id == file.id && line.seq.is_none() && line.offset == offset;
        !found
    })?;
    Ok(found)
}

/// How far reading what was appended got.
enum Appended {
    /// Every complete line is ingested (or the file cannot be read now).
    Read,
    /// Stopped at a line too long to hold, starting at this offset.
    Paused(u64),
}

/// Ingest what was appended to `path` after `file.offset` (`len` long when looked at). A
/// file that cannot be opened or read now (replaced, gone, an I/O error) is left as it
/// is: the next pass reads it again, and a replacement is caught by the prefix checks.
fn read_appended(
    store: &mut Store,
    file: &mut FileState,
    path: &Path,
    len: u64,
    host_chain: &mut HostChain<(u64, u64)>,
    tasks: &mut tasks::Tasks,
) -> Result<Appended, StoreError> {
    let Some(mut handle) = open_log(path) else { return Ok(Appended::Read) };
    if let Err(error) = handle.seek(SeekFrom::Start(file.offset)) {
        tracing::warn!(path = %file.path, %error, "cannot seek in log; it is read again next pass");
        return Ok(Appended::Read);
    }
    // One buffer per file, filled only as far as its capacity: reading a fixed amount
    // past what it held doubled it (16 MiB, most of the daemon's peak at 1 GB), and a
    // fresh zeroed chunk per call stayed resident in the allocator's arenas (164 MiB).
    // A live append is a few hundred bytes: no more room than that to start with.
    let appended = usize::try_from(len.saturating_sub(file.offset)).unwrap_or(usize::MAX);
    let mut pending: Vec<u8> = Vec::with_capacity(READ_CHUNK.min(appended));
    loop {
        if pending.len() == pending.capacity() {
            // A line longer than the buffer: make room for more of it (bounded below).
            pending.reserve(pending.len());
        }
        let room = pending.capacity() - pending.len();
        match (&mut handle).take(room as u64).read_to_end(&mut pending) {
            Ok(0) => break,
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(path = %file.path, %error, "cannot read log; the rest is read next pass");
                break;
            }
        }
        if pending.len() > MAX_LINE_BYTES && !pending.contains(&b'\n') {
            // No host writes such a line; holding it would grow without bound.
            return Ok(Appended::Paused(file.offset));
        }
        let complete = judged_core::log::complete_len(&pending);
        if complete > 0 {
            ingest_complete(store, file, &pending[..complete], host_chain, tasks)?;
            pending.drain(..complete);
        }
    }
    Ok(Appended::Read)
}

/// Ingest bytes that are whole lines, starting at `file.offset`.
fn ingest_complete(
    store: &mut Store,
    file: &mut FileState,
    bytes: &[u8],
    host_chain: &mut HostChain<(u64, u64)>,
    tasks: &mut tasks::Tasks,
) -> Result<(), StoreError> {
    let raws: Vec<&[u8]> = judged_core::log::complete_lines(bytes).collect();
    for batch in raws.chunks(BATCH_LINES) {
        let mut start = file.offset;
        let mut update = FileUpdate::default();
        let mut events = Vec::new();
        let mut lines: Vec<NewLine> = Vec::with_capacity(batch.len());
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
                    if HostChain::<(u64, u64)>::kept_by(file.host)
                        && let Err(((seq, offset), broken)) = host_chain.follow(&record, (seq, start))
                    {
                        events.push(JournalEvent::IntegrityFinding(IntegrityFinding {
                            file_id: file.id,
                            path: file.path.clone(),
                            seq,
                            offset,
                            finding: Finding::ParentChainBreak {
                                expected_parent: broken.expected_parent,
                                found_parent: broken.found_parent,
                            },
                        }));
                        file.findings += 1;
                    }
                    update.observe(file.host, &record);
                    tasks.observe(file.host, file.id, &file.path, seq, trimmed);
                    tasks.observe_turn(file.host, file.id, &file.path, seq, &record);
                    Some(record.kind)
                }
                Some(Err(error)) => {
                    events.push(JournalEvent::MalformedLine(MalformedLine {
                        file_id: file.id,
                        path: file.path.clone(),
                        seq: Some(seq),
                        offset: start,
                        error: error.to_string(),
                    }));
                    None
                }
                None => None,
            };
            lines.push(NewLine { start, raw, kind });
            start += raw.len() as u64;
        }
        update.apply(file);
        if HostChain::<(u64, u64)>::kept_by(file.host) {
            // Where the chain resumes after a restart: the event it reached, which is not
            // the last line's while an event waits for its parent.
            file.last_host_id = host_chain.reached();
        }
        let changed = tasks.waiting_changed(file.id);
        store.append_lines(
            file,
            Batch { lines: &lines, events: &events, ends_waiting: changed.as_ref().map(Option::as_deref) },
        )?;
        let malformed = events.iter().filter(|e| matches!(e, JournalEvent::MalformedLine(_))).count();
        if malformed > 0 {
            tracing::warn!(path = %file.path, lines = malformed, "lines that are not records of their host (journaled)");
        }
    }
    Ok(())
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
    use std::io::Write;

    const REAL_LOG: &[u8] = include_bytes!("../../../fixtures/copilot-1.0.102/cross-family-ok/events.jsonl");

    fn findings(store: &Store, log: &Path) -> u64 {
        store.file_by_path(&log.to_string_lossy()).expect("ingested").findings
    }

    /// A write the watcher heard of on a log that did not grow was made in place, even
    /// when the file looks as it did at the last look (a change time that did not move: a
    /// coarse clock tick, a file system caching attributes; here, the look after the
    /// restore is made the last one). A write a look accounted for (the host's append,
    /// ingested by a query before its notification came) is not.
    #[test]
    fn a_write_heard_on_a_log_that_did_not_grow_is_in_place_however_the_file_looks() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fs::canonicalize(tmp.path()).unwrap();
        let session = dir.join("root/s1");
        fs::create_dir_all(&session).unwrap();
        let log = session.join("events.jsonl");
        fs::write(&log, REAL_LOG).unwrap();
        let mut store = Store::open(&dir.join("judged.db")).unwrap();
        let mut ingest = Ingestor::new(Roots::default().with(Host::CopilotCli, vec![dir.join("root")]));
        ingest.catch_up_all(&mut store).unwrap();

        let last_id = {
            let text = std::str::from_utf8(REAL_LOG).unwrap();
            let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
            last["id"].as_str().unwrap().to_owned()
        };
        let append = format!(
            "{{\"type\":\"assistant.turn_start\",\"data\":{{\"turnId\":\"9\"}},\"id\":\"next\",\"timestamp\":\"2026-12-01T00:00:00.000Z\",\"parentId\":\"{last_id}\"}}\n"
        );
        fs::OpenOptions::new().append(true).open(&log).unwrap().write_all(append.as_bytes()).unwrap();
        let heard = Instant::now();
        ingest.catch_up(&mut store, &log, Host::CopilotCli).unwrap();
        ingest.catch_up_heard(&mut store, &log, Host::CopilotCli, Some(heard)).unwrap();
        assert_eq!(findings(&store, &log), 0, "an append a query ingested before its notification came");

        std::thread::sleep(HEARD_LATENCY * 2);
        let middle = REAL_LOG.len() as u64 / 2;
        let write_at = |byte: &[u8]| {
            let mut file = fs::OpenOptions::new().write(true).open(&log).unwrap();
            file.seek(SeekFrom::Start(middle)).unwrap();
            file.write_all(byte).unwrap();
        };
        let original = [REAL_LOG[middle as usize]];
        write_at(b"#");
        let heard = Instant::now();
        write_at(&original);
        let restored = Fingerprint::of(&fs::symlink_metadata(&log).unwrap());
        ingest.unchanged.insert(log.clone(), restored);
        ingest.catch_up_heard(&mut store, &log, Host::CopilotCli, Some(heard)).unwrap();
        assert_eq!(findings(&store, &log), 1, "the write heard, on a log that did not grow");
        let file = store.file_by_path(&log.to_string_lossy()).unwrap().clone();
        assert!(!file.tampered, "the bytes are back");
        ingest.catch_up_heard(&mut store, &log, Host::CopilotCli, Some(heard)).unwrap();
        assert_eq!(findings(&store, &log), 1, "recorded once");
    }

    /// An OpenCode database judged is set to read is admitted as a log is: a symbolic link
    /// there (a served user pointing the witness at a database of someone else's) is
    /// refused and journaled, and nothing of it is read.
    #[test]
    fn an_opencode_database_that_is_a_link_is_refused_as_a_log_is() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fs::canonicalize(tmp.path()).unwrap();
        let theirs = dir.join("theirs.db");
        let db = rusqlite::Connection::open(&theirs).unwrap();
        db.execute_batch(
            "CREATE TABLE event (id TEXT, aggregate_id TEXT, seq INTEGER, type TEXT, data TEXT);
             CREATE TABLE event_sequence (aggregate_id TEXT, seq INTEGER, owner_id TEXT);
             INSERT INTO event VALUES ('evt_0', 'ses_a1', 0, 'session.created.1', '{\"info\":{\"directory\":\"/w\"}}');
             INSERT INTO event_sequence VALUES ('ses_a1', 0, NULL);",
        )
        .unwrap();
        let link = dir.join("opencode.db");
        std::os::unix::fs::symlink(&theirs, &link).unwrap();
        let mut store = Store::open(&dir.join("judged.db")).unwrap();
        let logs = dir.join("opencode-logs");
        let roots = Roots::default().with(Host::OpenCode, vec![logs.clone()]);
        let mut ingest = Ingestor::new(roots).transcribing(transcribers(std::slice::from_ref(&link)));
        ingest.catch_up_all(&mut store).unwrap();
        assert!(!logs.exists(), "nothing read through the link");
        let refused = store.journal_of_kind::<FileRefused>().unwrap();
        let refused: Vec<(String, String)> = refused.into_iter().map(|(_, _, r)| (r.path, r.reason)).collect();
        assert_eq!(refused, [(link.display().to_string(), "symlink".to_owned())]);
        ingest.catch_up_all(&mut store).unwrap();
        assert_eq!(store.journal_of_kind::<FileRefused>().unwrap().len(), 1, "journaled once");

        // A database not there yet is OpenCode not run yet: nothing read, nothing refused.
        let roots = Roots::default().with(Host::OpenCode, vec![logs.clone()]);
        let mut ingest = Ingestor::new(roots).transcribing(transcribers(&[dir.join("absent.db")]));
        ingest.catch_up_all(&mut store).unwrap();
        assert!(!logs.exists());
        assert_eq!(store.journal_of_kind::<FileRefused>().unwrap().len(), 1);
    }
}
