//! File-system helpers shared by direct mode and the daemon: safe reads, atomic artifact
//! writes, path resolution, session discovery, and [`FsEnv`], the rules' view of the real
//! file system; [`confine`] holds a path a caller names to its project. With `worktree`
//! (which runs git), the only module of the crate that touches the disk.

mod confine;
mod host_roots;

pub use confine::{ConfineError, Confined, MAX_NAMED_FILE_BYTES, Owner, Project, Target};
pub use confine::{read as read_confined, target as confined_target};
pub use host_roots::HostRoots;

use judged_core::adapter::{self, Level};
use judged_core::event::Host;
use judged_core::rules::{Env, EvidenceError, Result, SearchedRoot};
use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Logs larger than this are refused, as the reference does.
pub const MAX_LOG_BYTES: u64 = 256 * 1024 * 1024;

/// Absolute, symlinks resolved; a path that does not exist resolves to its absolute self.
pub fn resolve(path: &str) -> String {
    let path = Path::new(path);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf())
    };
    fs::canonicalize(&absolute).unwrap_or(absolute).to_string_lossy().into_owned()
}

/// The real uid of this process.
pub fn current_uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// Refuse a missing file, or a symlink or non-regular file.
pub fn check_regular_file(path: &Path) -> Result<fs::Metadata> {
    let shown = path.display();
    let meta = fs::symlink_metadata(path).map_err(|_| EvidenceError::evidence(format!("file not found: {shown}")))?;
    if !meta.file_type().is_file() {
        return Err(EvidenceError::evidence(format!("expected a non-symlink regular file: {shown}")));
    }
    Ok(meta)
}

/// Refuse a missing file, a symlink or non-regular file, or one owned by another user.
pub fn check_safe_file(path: &Path) -> Result<fs::Metadata> {
    let shown = path.display();
    let meta = check_regular_file(path)?;
    if meta.uid() != current_uid() {
        return Err(EvidenceError::evidence(format!("refusing event file owned by another user: {shown}")));
    }
    Ok(meta)
}

/// Read a file after [`check_safe_file`], with a size cap.
pub fn read_safe(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    let meta = check_safe_file(path)?;
    if meta.len() > max_bytes {
        return Err(EvidenceError::evidence(format!("file exceeds {max_bytes} bytes: {}", path.display())));
    }
    fs::read(path).map_err(|e| EvidenceError::evidence(format!("cannot read {}: {e}", path.display())))
}

/// Resolve an artifact path (symlinks followed, as the reference does) and read it safely.
pub fn read_artifact(path: &str) -> Result<(String, Vec<u8>)> {
    let resolved = resolve(path);
    let bytes = read_safe(Path::new(&resolved), MAX_LOG_BYTES)?;
    Ok((resolved, bytes))
}

/// The rules' [`Env`] on the real file system, for direct mode and the daemon alike.
///
/// Direct mode reads the artifact files a rule reads (the stored response) from the disk,
/// with its caller's rights. The daemon reads none a caller names: it may run as another
/// account, and would read with that account's rights whatever path an artifact holds; the
/// client sends those files along with its request, and they are read from here alone.
#[derive(Clone, Debug, Default)]
pub struct FsEnv {
    /// The files sent along, when only those may be read.
    sent: Option<HashMap<String, Vec<u8>>>,
}

impl FsEnv {
    /// Only `sent` (path to bytes, as the client named them) is read, never the disk.
    pub fn sent_only(sent: HashMap<String, Vec<u8>>) -> FsEnv {
        FsEnv { sent: Some(sent) }
    }
}

impl Env for FsEnv {
    fn resolve(&self, path: &str) -> String {
        resolve(path)
    }

    fn read_file(&self, path: &str) -> Result<Vec<u8>> {
        match &self.sent {
            None => read_artifact(path).map(|(_, bytes)| bytes),
            Some(sent) => sent.get(path).cloned().ok_or_else(|| {
                EvidenceError::evidence(format!(
                    "the file {path} was not sent with the request: judged reads no file a client names; send its \
                     bytes in `files` (judge-evidence does)"
                ))
            }),
        }
    }
}

/// Refuse to overwrite `path` unless `replace`.
pub fn check_writable(path: &Path, replace: bool) -> Result<()> {
    if !replace && fs::symlink_metadata(path).is_ok() {
        return Err(EvidenceError::evidence(format!("refusing to overwrite existing artifact: {}", path.display())));
    }
    Ok(())
}

/// Why an opened file was not read by [`read_opened`].
#[derive(Debug, thiserror::Error)]
pub enum OpenedFileRefusal {
    /// Not a regular file (a FIFO, socket, device or directory): what it is.
    #[error("not a regular file")]
    NotRegular(fs::FileType),
    /// More than the bound: its length, or what was read before the bound was passed.
    #[error("{0} bytes, over the bound")]
    TooLarge(u64),
    /// The stat or the read failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Read a file opened without blocking (`O_NONBLOCK`, so that a FIFO opens at once) when
/// it is a regular file of at most `max` bytes, with its metadata. The checks are made on
/// the file opened, so a swap of the path after the open changes nothing read, and the
/// read is bounded again, since the file may grow after the stat.
pub fn read_opened(file: fs::File, max: u64) -> std::result::Result<(fs::Metadata, Vec<u8>), OpenedFileRefusal> {
    use std::io::Read;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(OpenedFileRefusal::NotRegular(meta.file_type()));
    }
    if meta.len() > max {
        return Err(OpenedFileRefusal::TooLarge(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(OpenedFileRefusal::TooLarge(bytes.len() as u64));
    }
    Ok((meta, bytes))
}

/// Open `path` for reading without following a link in its place or blocking on a FIFO,
/// and read it as [`read_opened`] does: a file someone else names, read where a swap of
/// the path must change nothing read.
pub fn read_not_following(path: &Path, max: u64) -> std::result::Result<(fs::Metadata, Vec<u8>), OpenedFileRefusal> {
    read_opened(open_not_following(path)?, max)
}

/// Open `path` for reading without following a link in its place or blocking on a FIFO:
/// what is opened is what the caller then checks (its type, its owner) and reads.
pub fn open_not_following(path: &Path) -> std::io::Result<fs::File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    Ok(fs::File::from(rustix::fs::open(path, flags, Mode::empty())?))
}

/// Write `bytes` to `path` atomically with mode 0600: a temp file in the same directory,
/// fsync, then rename. A half-written artifact is never visible under the final name.
pub fn write_atomic(path: &Path, bytes: &[u8], replace: bool) -> Result<()> {
    let fail =
        |what: &str, e: std::io::Error| EvidenceError::evidence(format!("cannot {what} {}: {e}", path.display()));
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|e| fail("create the directory of", e))?;
    check_writable(path, replace)?;
    match replace_atomically(path, bytes, Keep::PRIVATE, !replace) {
        Ok(()) => Ok(()),
        // Made meanwhile: refused as the first check refuses it.
        Err(AtomicWriteError::Exists { .. }) => check_writable(path, replace),
        Err(AtomicWriteError::Write { source, .. } | AtomicWriteError::Owner { source, .. }) => {
            Err(fail("write", source))
        }
    }
}

/// Where a review round writes an artifact.
#[derive(Clone, Copy, Debug)]
pub enum Destination<'a> {
    /// A path the command's own user named (`judge-evidence`: its caller could write
    /// there itself).
    Named(&'a Path),
    /// A file a caller named, held to its project (`judged mcp`: written from the
    /// project's handle, never through a directory swapped for a link).
    Held(&'a Target),
}

impl Destination<'_> {
    /// Where it is.
    pub fn path(&self) -> &Path {
        match self {
            Destination::Named(path) => path,
            Destination::Held(target) => target.path(),
        }
    }

    /// Write `bytes` there atomically, 0600 ([`write_atomic`]).
    pub fn write(&self, bytes: &[u8], replace: bool) -> Result<()> {
        match self {
            Destination::Named(path) => write_atomic(path, bytes, replace),
            Destination::Held(target) => target.write(bytes, replace),
        }
    }

    /// Take what was written there out again.
    pub fn remove(&self) {
        match self {
            Destination::Named(path) => {
                let _ = fs::remove_file(path);
            }
            Destination::Held(target) => target.remove(),
        }
    }
}

/// The mode and owner a file written by [`replace_atomically`] gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep {
    /// Its permission bits.
    pub mode: Mode,
    /// The owner (uid, gid) to give it; `None` leaves the writer's.
    pub owner: Option<(u32, u32)>,
}

/// The permission bits of a written file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Exactly these bits (those of the file replaced): the umask does not apply.
    Exact(u32),
    /// These bits less the umask, as a new file gets them.
    Umasked(u32),
}

impl Keep {
    /// 0600, the writer's own: for what only its owner may read.
    pub const PRIVATE: Keep = Keep { mode: Mode::Exact(0o600), owner: None };
    /// A new file as any program makes one: 0666 less the umask, the writer's own.
    pub const NEW: Keep = Keep { mode: Mode::Umasked(0o666), owner: None };

    /// The mode and owner of the file `meta` describes.
    pub fn of(meta: &fs::Metadata) -> Keep {
        Keep { mode: Mode::Exact(meta.mode() & 0o7777), owner: Some((meta.uid(), meta.gid())) }
    }
}

/// Why [`replace_atomically`] wrote nothing; the file named is the one asked for.
#[derive(Debug, thiserror::Error)]
pub enum AtomicWriteError {
    /// The temp file could not be made, written or renamed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file asked for.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The new file could not be given the owner to keep.
    #[error(
        "cannot give the new {} its owner back (uid {uid}, gid {gid}): {source}; run it as that user or as root",
        path.display()
    )]
    Owner {
        /// The file asked for.
        path: PathBuf,
        /// The owner to keep.
        uid: u32,
        /// The group to keep.
        gid: u32,
        /// What the system said.
        source: std::io::Error,
    },
    /// `no_clobber`, and the file exists.
    #[error("{} exists already", path.display())]
    Exists {
        /// The file asked for.
        path: PathBuf,
    },
}

/// Write `bytes` to `path` atomically, with the mode and owner of `keep`: a temp file in
/// `path`'s directory (so the rename stays on one file system) that gets its mode and
/// owner before it is renamed over `path`, fsynced, then the directory fsynced. Readers
/// see the old file or the new, never a half-written one, and the new one is never
/// readable by more people than `keep` says, not even for a moment: the temp file is
/// 0600 until it has its mode. With `no_clobber`, an existing `path` is left alone.
///
/// `path` is written as named: a symbolic link there is replaced, so callers that mean to
/// write through one pass its target.
pub fn replace_atomically(
    path: &Path,
    bytes: &[u8],
    keep: Keep,
    no_clobber: bool,
) -> std::result::Result<(), AtomicWriteError> {
    let write = |source| AtomicWriteError::Write { path: path.to_owned(), source };
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp =
        parent.join(format!(".{name}.{}.{:012x}.tmp", std::process::id(), rand::random::<u64>() & 0xffff_ffff_ffff));
    let result =
        (|| {
            let create_mode = match keep.mode {
                Mode::Exact(_) => 0o600,
                Mode::Umasked(mode) => mode,
            };
            // `create_new` (O_EXCL) also refuses a link planted under the temp name.
            let mut file =
                fs::OpenOptions::new().write(true).create_new(true).mode(create_mode).open(&temp).map_err(write)?;
            if let Some((uid, gid)) = keep.owner {
                let meta = file.metadata().map_err(write)?;
                if (meta.uid(), meta.gid()) != (uid, gid) {
                    std::os::unix::fs::fchown(&file, Some(uid), Some(gid))
                        .map_err(|source| AtomicWriteError::Owner { path: path.to_owned(), uid, gid, source })?;
                }
            }
            // After the owner: chown clears the set-id bits.
            if let Mode::Exact(mode) = keep.mode {
                file.set_permissions(fs::Permissions::from_mode(mode)).map_err(write)?;
            }
            file.write_all(bytes).and_then(|_| file.sync_all()).map_err(write)?;
            if no_clobber && fs::symlink_metadata(path).is_ok() {
                return Err(AtomicWriteError::Exists { path: path.to_owned() });
            }
            fs::rename(&temp, path).map_err(write)?;
            // The rename is durable once the directory is.
            fs::File::open(parent).and_then(|dir| dir.sync_all()).map_err(write)
        })();
    let _ = fs::remove_file(&temp);
    result
}

/// A session log found under a root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discovered {
    /// The host whose log it is, told by where it was found (or by its shape).
    pub host: Host,
    /// The log file, under the root it was found in (not resolved).
    pub path: PathBuf,
}

/// The logs under `dir` whose paths below it have one of `layouts`' shapes; each
/// directory listed once, however many layouts pass through it. Entry types come from the
/// listing (no `stat` per entry), and symlinked directories are not followed.
fn walk(dir: &Path, layouts: &[adapter::Layout], list: &mut dyn FnMut(&Path) -> Listing, found: &mut Vec<PathBuf>) {
    let listed = layouts
        .iter()
        .any(|layout| matches!(layout.first(), Some(Level::AnyDir | Level::File { .. })))
        .then(|| list(dir));
    let mut below: Vec<(PathBuf, Vec<adapter::Layout>)> = Vec::new();
    let mut descend = |path: PathBuf, rest: adapter::Layout| match below.iter_mut().find(|(p, _)| *p == path) {
        Some((_, rests)) => rests.push(rest),
        None => below.push((path, vec![rest])),
    };
    for layout in layouts {
        let Some((level, rest)) = layout.split_first() else { continue };
        match level {
            Level::Dir(name) => descend(dir.join(name), rest),
            Level::Named(name) if rest.is_empty() => found.push(dir.join(name)),
            Level::AnyDir | Level::File { .. } => {
                for (path, is_dir) in listed.iter().flat_map(|l| l.iter()) {
                    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
                    if !level.admits(name, *is_dir) {
                        continue;
                    }
                    match rest.is_empty() {
                        true => found.push(path.clone()),
                        false => descend(path.clone(), rest),
                    }
                }
            }
            Level::Named(_) => {}
        }
    }
    for (path, rests) in below {
        walk(&path, &rests, list, found);
    }
}

/// The logs of `host` under `root`, sorted bytewise: `Path`'s own order compares
/// component by component, which was a fifth of the daemon's time per challenge at a
/// few hundred sessions.
fn discover_host(host: Host, root: &Path, list: &mut dyn FnMut(&Path) -> Listing) -> Vec<Discovered> {
    let mut found = Vec::new();
    walk(root, adapter::of(host).layouts(), list, &mut found);
    found.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    found.into_iter().map(|path| Discovered { host, path }).collect()
}

/// Session logs under a root of either host, each read as the host its shape says: a
/// session directory holding `events.jsonl` is Copilot CLI's (and nothing else in it is a
/// log), any other is a Claude Code project directory. Reading every Copilot log as a
/// Claude Code transcript too found no cwd in it, so each was read whole (issue 10).
fn discover_named(root: &Path, list: &mut dyn FnMut(&Path) -> Listing) -> Vec<Discovered> {
    let (copilot, claude): (Vec<Discovered>, Vec<Discovered>) = discover_host(Host::ClaudeCode, root, list)
        .into_iter()
        .partition(|log| log.path.file_name().is_some_and(|n| n == "events.jsonl"));
    let sessions: Vec<&Path> = copilot.iter().filter_map(|log| log.path.parent()).collect();
    let claude = claude.into_iter().filter(|log| !log.path.ancestors().any(|dir| sessions.contains(&dir)));
    let copilot = copilot.iter().map(|log| Discovered { host: Host::CopilotCli, path: log.path.clone() });
    let mut found: Vec<Discovered> = copilot.chain(claude).collect();
    found.sort_by(|a, b| a.path.as_os_str().cmp(b.path.as_os_str()));
    found
}

/// A directory entry: its path, and whether it is a directory.
pub type Entry = (PathBuf, bool);

/// A directory's entries, shared: the daemon keeps listings and hands them out uncopied.
pub type Listing = std::sync::Arc<[Entry]>;

/// A directory's entries with whether each is a directory (from the listing itself); none
/// when it cannot be read.
pub fn entries(dir: &Path) -> Listing {
    read_entries(dir).unwrap_or_default()
}

/// As [`entries`], telling a directory that cannot be read from an empty one.
pub fn read_entries(dir: &Path) -> std::io::Result<Listing> {
    let listing = fs::read_dir(dir)?;
    Ok(listing
        .filter_map(std::result::Result::ok)
        .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect())
}

/// Session roots, per host: where the daemon watches, and where direct mode looks.
#[derive(Clone, Debug, Default)]
pub struct Roots {
    /// Each host's own roots (what [`HostLog::default_root`](adapter::HostLog::default_root)
    /// names), in the order discovery reads them.
    hosts: HostRoots,
    /// Roots named without a host (`--session-root`): each log's host is told by its shape,
    /// a Copilot CLI session or a Claude Code project.
    pub named: Vec<PathBuf>,
}

impl Roots {
    /// One root named by a user, which may be either host's (a `--session-root`).
    pub fn named(root: PathBuf) -> Roots {
        Roots { named: vec![root], ..Roots::default() }
    }

    /// The hosts' own defaults (`$COPILOT_HOME`, `$CLAUDE_CONFIG_DIR`, …, else under the
    /// home directory).
    pub fn defaults() -> Roots {
        Host::ALL.into_iter().fold(Roots::default(), |roots, host| roots.with(host, vec![default_root(host)]))
    }

    /// These roots, with `roots` as `host`'s.
    pub fn with(mut self, host: Host, roots: Vec<PathBuf>) -> Roots {
        self.hosts = self.hosts.with(host, roots);
        self
    }

    /// `host`'s roots.
    pub fn of(&self, host: Host) -> &[PathBuf] {
        self.hosts.of(host)
    }

    /// Each host's roots.
    pub fn of_hosts(&self) -> &HostRoots {
        &self.hosts
    }

    /// Every session log under the roots.
    pub fn discover(&self) -> Vec<Discovered> {
        self.discover_with(&mut entries)
    }

    /// As [`Roots::discover`], reading each directory through `list` (the daemon keeps
    /// listings between queries and reads again only the directories that changed).
    pub fn discover_with(&self, list: &mut dyn FnMut(&Path) -> Listing) -> Vec<Discovered> {
        let mut found = Vec::new();
        for (host, roots) in self.hosts.iter() {
            for root in roots {
                found.extend(discover_host(host, root, list));
            }
        }
        for root in &self.named {
            found.extend(discover_named(root, list));
        }
        found
    }

    /// Every root with the hosts whose logs are looked for there, as a challenge that
    /// finds no marker names them.
    pub fn searched(&self) -> Vec<SearchedRoot> {
        let own = self
            .hosts
            .iter()
            .flat_map(|(host, roots)| roots.iter().map(move |root| SearchedRoot::Host(host, root.clone())));
        own.chain(self.named.iter().cloned().map(SearchedRoot::Named)).collect()
    }

    /// The roots of the hosts that keep logs in the directories right under them (Claude
    /// Code's projects): a new log shows in one of those directories.
    pub fn of_log_dirs(&self) -> Vec<PathBuf> {
        let direct =
            |host: Host| adapter::of(host).layouts().iter().any(|l| matches!(l, [Level::AnyDir, Level::File { .. }]));
        self.hosts.iter().filter(|(host, _)| direct(*host)).flat_map(|(_, roots)| roots.iter().cloned()).collect()
    }

    /// Every root, whatever its host (to watch them all).
    pub fn all(&self) -> impl Iterator<Item = &PathBuf> {
        self.hosts.iter().flat_map(|(_, roots)| roots).chain(&self.named)
    }

    /// The host whose log `path` is, when it has the shape discovery finds under a root
    /// (one of its host's [`layouts`](adapter::HostLog::layouts)); under a named root, a
    /// Copilot CLI session's `events.jsonl` or a Claude Code project's log.
    pub fn classify(&self, path: &Path) -> Option<Host> {
        let shaped = |host: Host, root: &PathBuf| {
            let Ok(rest) = path.strip_prefix(root) else { return false };
            let names: Vec<&str> = rest.components().filter_map(|c| c.as_os_str().to_str()).collect();
            adapter::of(host).layouts().iter().any(|layout| {
                layout.len() == names.len()
                    && layout.iter().zip(&names).enumerate().all(|(i, (level, name))| {
                        let dir = i + 1 < names.len();
                        // A named file is a log whatever else its directory holds.
                        level.admits(name, dir)
                    })
            })
        };
        let own = self.hosts.iter().find(|(host, roots)| roots.iter().any(|root| shaped(*host, root)));
        if let Some((host, _)) = own {
            return Some(host);
        }
        Host::UNDER_A_NAMED_ROOT.into_iter().find(|host| self.named.iter().any(|root| shaped(*host, root)))
    }
}

/// The default root of `host`'s logs ([`HostLog::default_root`](adapter::HostLog::default_root)).
pub fn default_root(host: Host) -> PathBuf {
    let root = adapter::of(host).default_root();
    let set = root.vars.iter().find_map(|(var, under)| {
        std::env::var_os(var).filter(|v| !v.is_empty()).map(|dir| PathBuf::from(dir).join(under))
    });
    set.unwrap_or_else(|| home_dir().join(root.under_home))
}

/// `$HOME`, else `/`: the default roots then name paths that do not exist, and
/// discovery finds nothing rather than failing.
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"))
}

/// The cwd a session log records, from its first records only (up to 64 KiB), so a
/// scan can skip other projects' sessions without reading or parsing them whole.
pub fn peek_cwd(host: Host, path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::with_capacity(64 * 1024);
    fs::File::open(path).ok()?.take(64 * 1024).read_to_end(&mut head).ok()?;
    let at_start_only = judged_core::adapter::of(host).cwd_at_start_only();
    head.split(|&b| b == b'\n')
        .filter_map(|line| judged_core::adapter::envelope(host, line.trim_ascii()).ok())
        .find_map(|record| (record.session_start || !at_start_only).then_some(record.cwd).flatten())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_in_the_discovered_shapes_are_logs() {
        let roots = Roots { named: vec!["/n".into()], ..Roots::default() }
            .with(Host::CopilotCli, vec!["/c".into()])
            .with(Host::ClaudeCode, vec!["/p".into()])
            .with(Host::CodexCli, vec!["/x".into()])
            .with(Host::GeminiCli, vec!["/g".into()])
            .with(Host::QwenCode, vec!["/q".into()]);
        let host = |p: &str| roots.classify(Path::new(p));
        assert_eq!(host("/g/project/chats/session-2026-12-01T21-30-2fc163c2.jsonl"), Some(Host::GeminiCli));
        assert_eq!(host("/c/s1/events.jsonl"), Some(Host::CopilotCli));
        assert_eq!(host("/p/proj/s.jsonl"), Some(Host::ClaudeCode));
        assert_eq!(host("/p/proj/s/subagents/agent-a1.jsonl"), Some(Host::ClaudeCode));
        assert_eq!(host("/n/s1/events.jsonl"), Some(Host::CopilotCli));
        assert_eq!(host("/n/proj/s.jsonl"), Some(Host::ClaudeCode));
        assert_eq!(host("/x/2026/12/01/rollout-2026-12-01T03-06-02-01a2.jsonl"), Some(Host::CodexCli));
        assert_eq!(host("/q/-tmp-w-project/chats/160de1c6-5d59-4190-9424-780ba057b0df.jsonl"), Some(Host::QwenCode));
        for not_a_log in [
            "/q/-tmp-w-project/160de1c6.jsonl",
            "/q/-tmp-w-project/chats/notes.txt",
            "/q/-tmp-w-project/chats/deep/s.jsonl",
            "/x/2026/12/rollout-2026-12-01T03-06-02-01a2.jsonl",
            "/x/2026/12/01/history.jsonl",
            "/c/s1/deep/notes.jsonl",
            "/c/s1/workspace.yaml",
            "/c/events.jsonl",
            "/p/proj/s/other/agent-a.jsonl",
            "/p/proj/s/subagents/notes.jsonl",
            "/elsewhere/s1/events.jsonl",
            "/c/s1/notes.jsonl",
            "/g/project/session-2026-12-01T21-30-2fc163c2.jsonl",
            "/g/project/chats/logs.jsonl",
            "/g/project/other/session-2026-12-01T21-30-2fc163c2.jsonl",
        ] {
            assert_eq!(host(not_a_log), None, "{not_a_log}");
        }
    }

    #[test]
    fn fs_env_reads_the_disk_or_only_the_files_sent_along() {
        let dir = tempfile::tempdir().unwrap();
        let on_disk = dir.path().join("r1.response.md");
        fs::write(&on_disk, b"from disk").unwrap();
        let on_disk = on_disk.to_string_lossy().into_owned();
        let sent_only = dir.path().join("elsewhere.md").to_string_lossy().into_owned();

        let plain = FsEnv::default();
        assert_eq!(plain.read_file(&on_disk).unwrap(), b"from disk");
        assert!(plain.read_file(&sent_only).unwrap_err().message.starts_with("file not found"));
        assert_eq!(plain.resolve(&on_disk), resolve(&on_disk));

        let env = FsEnv::sent_only([(sent_only.clone(), b"sent".to_vec())].into_iter().collect());
        assert_eq!(env.read_file(&sent_only).unwrap(), b"sent");
        let refused = env.read_file(&on_disk).unwrap_err().message;
        assert!(refused.contains("was not sent with the request: judged reads no file a client names"), "{refused}");
    }

    /// A root named without a host reads each log once, as the host its shape says.
    #[test]
    fn a_named_root_reads_copilot_sessions_as_copilot_only() {
        let root = tempfile::tempdir().unwrap();
        let session = root.path().join("3b6f2d1a");
        let project = root.path().join("-home-dev-shop");
        fs::create_dir_all(session.join("checkpoints")).unwrap();
        fs::create_dir_all(project.join("70e11cfc/subagents")).unwrap();
        for file in [
            session.join("events.jsonl"),
            session.join("notes.jsonl"),
            project.join("70e11cfc.jsonl"),
            project.join("70e11cfc/subagents/agent-a1.jsonl"),
        ] {
            fs::write(file, b"").unwrap();
        }
        let found = Roots::named(root.path().to_path_buf()).discover();
        let shown: Vec<(Host, String)> = found
            .iter()
            .map(|d| (d.host, d.path.strip_prefix(root.path()).unwrap().to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            shown,
            [
                (Host::ClaudeCode, "-home-dev-shop/70e11cfc.jsonl".to_owned()),
                (Host::ClaudeCode, "-home-dev-shop/70e11cfc/subagents/agent-a1.jsonl".to_owned()),
                (Host::CopilotCli, "3b6f2d1a/events.jsonl".to_owned()),
            ]
        );
    }
}
