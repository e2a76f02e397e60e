//! The git tree id of a served user's working tree, and its changes for a jury, read by
//! the witness account, whose rights (the signing key, every user's logs) are worth more
//! than that user's.
//!
//! git runs in a repository of the witness's own, pointed at the user's work tree: nothing
//! of the user's repository config (its fsmonitor, clean filters, hooks), nor the machine's
//! or the witness's git config, runs or counts, whatever `safe.directory` allows. The
//! user's index is read for the names of its tracked files only: every file is hashed from
//! what it holds now, since an index's cached stat data, `assume-unchanged` or
//! `skip-worktree` bits would let a tree id name content no reviewer saw.
//!
//! The price is a tree id other than the commit's (so no attestation, never a wrong one)
//! for a repository whose commits go through a clean filter (Git LFS) or a line-ending
//! conversion of the user's config, whose files only the user's global ignore file
//! ignores, or whose checkout is sparse.

use super::{ChangesText, DiffBase};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long reading one tree may take: every file is hashed, and the daemon answers
/// other users meanwhile.
const DEADLINE: Duration = Duration::from_secs(60);
/// The largest index read for its names (an index of a million files is about 100 MiB).
const MAX_INDEX_BYTES: u64 = 256 << 20;
/// The largest `info/exclude` or `.git` file read.
const MAX_SMALL_FILE_BYTES: u64 = 1 << 20;

/// The top of the work tree holding `dir`, found by looking (no git runs in it).
pub(super) fn top(dir: &Path) -> Option<PathBuf> {
    let dir = dir.canonicalize().ok()?;
    dir.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

/// The tree id `git add -A && git write-tree` would give the repository holding `dir`,
/// but for the `excluded` paths; none when it cannot be read as the module says.
pub(super) fn git_tree_id(dir: &Path, excluded: &[PathBuf], serving: u32) -> Option<String> {
    Staged::of(dir, excluded, serving)?.write_tree()
}

/// The changes of the work tree holding `dir` against its HEAD, as a patch of at most
/// `limit` bytes (untracked files not ignored as new files), and how many bytes were cut;
/// none when they cannot be read as the module says. The repository's objects are read as
/// data (`GIT_ALTERNATE_OBJECT_DIRECTORIES`); HEAD is resolved from its files; no external
/// diff or text conversion runs.
pub(super) fn changes_text(dir: &Path, limit: usize, serving: u32) -> Option<ChangesText> {
    patch(&Staged::of(dir, &[], serving)?, limit, None)
}

/// The tree id of the work tree holding `dir` and its changes, both of one staging: the
/// patch shows exactly the tree the id names, however the files change meanwhile.
pub(super) fn tree_and_changes(
    dir: &Path,
    limit: usize,
    serving: u32,
    since: Option<&DiffBase>,
) -> Option<(String, ChangesText)> {
    let staged = Staged::of(dir, &[], serving)?;
    Some((staged.write_tree()?, patch(&staged, limit, since)?))
}

/// What the user's HEAD names in the work tree holding `dir` ([`head_of`]).
pub(super) fn base(dir: &Path, serving: u32) -> Option<DiffBase> {
    let top = top(dir)?;
    if std::fs::metadata(dir).ok()?.uid() != serving {
        return None;
    }
    head_of(&git_dir(&top, serving)?, serving)
}

/// The staged index against the user's HEAD, as [`changes_text`] says; and what was
/// committed since `since` (the commit a session began on, or none: every file was new),
/// when HEAD moved from it.
fn patch(staged: &Staged, limit: usize, since: Option<&DiffBase>) -> Option<ChangesText> {
    // A repository without commits (or whose HEAD cannot be resolved from its files):
    // every file is new, so all of the tree is shown.
    let head = head_commit(&staged.their_git_dir, staged.uid);
    let base = head.clone().unwrap_or_else(|| EMPTY_TREE.to_owned());
    let objects = own_objects(&common_dir(&staged.their_git_dir, staged.uid), staged.uid)?;
    let objects_opened = opened_dir(&objects, staged.uid)?;
    let git = Isolated { alternates: Some((&objects, objects_opened.as_fd())), ..staged.git() };
    // `--text`: the repository's attributes (`*.rs -diff`) must not hide a change from the jury.
    let shown = ["-p", "--text", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames"];
    // Cut on a character's boundary, as the owner's text is.
    let text_of = |(kept, total): (Vec<u8>, usize)| {
        let (text, _) = super::cut_text(&kept, limit);
        let cut_bytes = total.saturating_sub(text.len());
        (text, cut_bytes)
    };
    let (text, cut_bytes) =
        text_of(git.run(&staged.index, &[&["diff-index", "--cached"], &shown[..], &[&base]].concat(), None, limit)?);
    // From no commit at all when that one can no longer be read: more, never less.
    let committed = match (since, &head) {
        (Some(since), Some(head)) if since.commit() != Some(head.as_str()) => {
            let from = |base: &str| {
                let args = [&["diff-tree", "-r"], &shown[..], &[base, head.as_str()]].concat();
                git.run(&staged.index, &args, None, limit)
            };
            let (read, since) = match from(since.commit().unwrap_or(EMPTY_TREE)) {
                Some(read) => (read, since.clone()),
                None => (from(EMPTY_TREE)?, DiffBase::NoCommit),
            };
            let (text, cut_bytes) = text_of(read);
            Some(super::Committed { since, text, cut_bytes })
        }
        _ => None,
    };
    Some(ChangesText { text, cut_bytes, base: head.map_or(DiffBase::NoCommit, DiffBase::Commit), committed })
}

/// git's id of the empty tree, which every git knows without storing it.
pub(super) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// A work tree staged whole into an index of the witness's own: every file hashed from
/// what it holds, as `git add -A` would stage it.
struct Staged {
    top: PathBuf,
    /// The work tree's top as opened when its owner was checked: what git is held to.
    top_opened: OwnedFd,
    uid: u32,
    their_git_dir: PathBuf,
    scratch: tempfile::TempDir,
    index: PathBuf,
    deadline: Instant,
}

impl Staged {
    /// The work tree holding `dir`, when it and `dir` are the `serving` user's.
    fn of(dir: &Path, excluded: &[PathBuf], serving: u32) -> Option<Staged> {
        let deadline = Instant::now() + DEADLINE;
        let top = top(dir)?;
        // The repository of the user served, and not one around its directory that
        // another user holds, nor one its path has been made to point at since it was
        // checked: whoever owns it is asked, and the sandbox holds git to it.
        let uid = serving;
        if std::fs::metadata(dir).ok()?.uid() != uid {
            return None;
        }
        let top_opened = opened_dir(&top, uid)?;
        let their_git_dir = git_dir(&top, uid)?;
        let scratch = tempfile::Builder::new().prefix("judged-tree-").tempdir().ok()?;
        let git_dir = scratch.path().join("git");
        for made in ["objects", "refs", "info"] {
            std::fs::create_dir_all(git_dir.join(made)).ok()?;
        }
        std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/judged\n").ok()?;
        let exclude = common_dir(&their_git_dir, uid).join("info/exclude");
        std::fs::write(
            git_dir.join("info/exclude"),
            read_owned(&exclude, uid, MAX_SMALL_FILE_BYTES).unwrap_or_default(),
        )
        .ok()?;
        let index = scratch.path().join("index");
        let staged = Staged { top, top_opened, uid, their_git_dir, scratch, index, deadline };
        staged.stage(excluded)?;
        Some(staged)
    }

    /// The tree id of the staged index.
    fn write_tree(&self) -> Option<String> {
        let id = self.git().run(&self.index, &["write-tree"], None, usize::MAX)?.0;
        let id = String::from_utf8(id).ok()?.trim().to_owned();
        super::is_object_id(&id).then_some(id)
    }

    /// git over the user's work tree, in the witness's own repository.
    fn git(&self) -> Isolated<'_> {
        Isolated {
            top: &self.top,
            top_opened: self.top_opened.as_fd(),
            git_dir: self.scratch.path().join("git"),
            home: self.scratch.path(),
            alternates: None,
            deadline: self.deadline,
        }
    }

    /// `git add -A`, the tracked files an ignore rule matches, less `excluded`.
    fn stage(&self, excluded: &[PathBuf]) -> Option<()> {
        let (git, top, index) = (self.git(), &self.top, &self.index);
        // A repository without an index (no commit, nothing added) tracks nothing.
        let tracked = match read_owned(&self.their_git_dir.join("index"), self.uid, MAX_INDEX_BYTES) {
            Some(bytes) => {
                let theirs = self.scratch.path().join("their-index");
                std::fs::write(&theirs, bytes).ok()?;
                git.run(&theirs, &["ls-files", "-z", "--cached"], None, usize::MAX)
                    .map(|(out, _)| out)
                    .unwrap_or_default()
            }
            None => Vec::new(),
        };
        git.run(index, &["add", "-A"], None, usize::MAX)?;
        // Tracked files an ignore rule matches stay in the tree, as in the user's `git add -A`.
        let staged = git.run(index, &["ls-files", "-z"], None, usize::MAX)?.0;
        let staged: std::collections::HashSet<&[u8]> = staged.split(|&b| b == 0).collect();
        let excluded: Vec<&[u8]> = excluded
            .iter()
            .filter_map(|path| path.strip_prefix(top).ok())
            .filter_map(|relative| relative.to_str().map(str::as_bytes))
            .collect();
        let mut ignored_tracked = Vec::new();
        for path in tracked.split(|&b| b == 0).filter(|p| !p.is_empty() && !staged.contains(p)) {
            let on_disk = std::str::from_utf8(path).ok().map(|p| top.join(p));
            if on_disk.is_some_and(|p| p.symlink_metadata().is_ok_and(|m| !m.is_dir())) && !excluded.contains(&path) {
                ignored_tracked.extend_from_slice(path);
                ignored_tracked.push(0);
            }
        }
        if !ignored_tracked.is_empty() {
            let args = ["add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"];
            git.run(index, &args, Some(&ignored_tracked), usize::MAX)?;
        }
        if !excluded.is_empty() {
            let names: Vec<u8> = excluded.iter().flat_map(|path| path.iter().copied().chain([0])).collect();
            git.run(index, &["update-index", "--force-remove", "-z", "--stdin"], Some(&names), usize::MAX)?;
        }
        Some(())
    }
}

/// The commit the user's HEAD names, resolved from the files of `git_dir` (a loose ref or
/// `packed-refs`; not a reftable); none without commits.
fn head_commit(git_dir: &Path, uid: u32) -> Option<String> {
    match head_of(git_dir, uid)? {
        DiffBase::Commit(id) => Some(id),
        DiffBase::NoCommit => None,
    }
}

/// What the user's HEAD names, from the files of `git_dir`: a commit (detached, a loose
/// ref or `packed-refs`), or no commit when it names a branch no ref file holds; none when
/// that cannot be told (a reftable, a name git would not take, a file not the user's).
pub(super) fn head_of(git_dir: &Path, uid: u32) -> Option<DiffBase> {
    let head = String::from_utf8(read_owned(&git_dir.join("HEAD"), uid, MAX_SMALL_FILE_BYTES)?).ok()?;
    let head = head.trim();
    let Some(name) = head.strip_prefix("ref: ") else {
        return super::is_object_id(head).then(|| DiffBase::Commit(head.to_owned()));
    };
    // A ref name git would take: no way out of the directory.
    if !name.starts_with("refs/") || name.split('/').any(|part| part.is_empty() || part.starts_with('.')) {
        return None;
    }
    let common = common_dir(git_dir, uid);
    if common.join("reftable").exists() {
        return None;
    }
    if let Some(loose) = read_owned(&common.join(name), uid, MAX_SMALL_FILE_BYTES) {
        let id = String::from_utf8(loose).ok()?.trim().to_owned();
        return super::is_object_id(&id).then_some(DiffBase::Commit(id));
    }
    if common.join(name).symlink_metadata().is_ok() {
        return None;
    }
    let packed = match common.join("packed-refs").symlink_metadata() {
        Ok(_) => String::from_utf8(read_owned(&common.join("packed-refs"), uid, MAX_INDEX_BYTES)?).ok()?,
        Err(_) => String::new(),
    };
    let packed = packed.lines().filter_map(|line| line.split_once(' ')).find(|(_, named)| *named == name);
    match packed {
        Some((id, _)) => super::is_object_id(id).then(|| DiffBase::Commit(id.to_owned())),
        None => Some(DiffBase::NoCommit),
    }
}

/// The user's object directory, read as data only when it is the user's own: a real
/// directory of theirs, borrowing no other repository's objects (`info/alternates`), so
/// that the diff cannot show another user's files.
fn own_objects(common: &Path, uid: u32) -> Option<PathBuf> {
    let objects = common.join("objects");
    let meta = objects.symlink_metadata().ok()?;
    let own = meta.is_dir() && meta.uid() == uid && !objects.join("info/alternates").exists();
    own.then_some(objects)
}

/// Where a git directory's shared parts (refs, objects, `info/exclude`) are: the one its
/// `commondir` file names (a linked worktree's), else itself.
pub(super) fn common_dir(git_dir: &Path, uid: u32) -> PathBuf {
    let named = read_owned(&git_dir.join("commondir"), uid, MAX_SMALL_FILE_BYTES)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| git_dir.join(text.trim()).canonicalize().ok());
    named.filter(|dir| std::fs::metadata(dir).is_ok_and(|m| m.uid() == uid)).unwrap_or_else(|| git_dir.to_path_buf())
}

/// The git directory of the work tree at `top`: its `.git` directory, or the one its
/// `.git` file names (a linked worktree, a submodule); either the user's own.
pub(super) fn git_dir(top: &Path, uid: u32) -> Option<PathBuf> {
    let dot_git = top.join(".git");
    let meta = dot_git.symlink_metadata().ok()?;
    let named = if meta.is_dir() {
        dot_git
    } else {
        let text = String::from_utf8(read_owned(&dot_git, uid, MAX_SMALL_FILE_BYTES)?).ok()?;
        top.join(text.strip_prefix("gitdir:")?.trim())
    };
    let named = named.canonicalize().ok()?;
    (std::fs::metadata(&named).ok()?.uid() == uid).then_some(named)
}

/// What `path` holds when it is a regular file `uid` owns, not a link, of at most `cap`
/// bytes. Checked on the file opened, so that it cannot be swapped between check and read.
fn read_owned(path: &Path, uid: u32, cap: u64) -> Option<Vec<u8>> {
    let (meta, bytes) = crate::files::read_not_following(path, cap).ok()?;
    (meta.uid() == uid).then_some(bytes)
}

/// The directory at `path`, opened without following a link in its last step, when it is
/// `uid`'s (checked on the directory opened).
fn opened_dir(path: &Path, uid: u32) -> Option<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::open(path, flags, Mode::empty()).ok()?;
    (rustix::fs::fstat(&fd).ok()?.st_uid == uid).then_some(fd)
}

/// git, in the witness's own repository over the user's work tree, with no config but
/// its own and no environment but `PATH`.
struct Isolated<'a> {
    top: &'a Path,
    top_opened: BorrowedFd<'a>,
    git_dir: PathBuf,
    home: &'a Path,
    /// The user's object directory, read as data, and as opened when its owner was checked.
    alternates: Option<(&'a Path, BorrowedFd<'a>)>,
    deadline: Instant,
}

/// What of the system git needs besides its own installation: the loader's cache, and
/// randomness for the names of its temporary files.
const SYSTEM_READ: &[&str] = &["/usr", "/bin", "/lib", "/lib64", "/etc/ld.so.cache", "/dev/urandom"];

impl Isolated<'_> {
    /// What git may read (git's own installation and libraries; the work tree and the
    /// user's objects as the directories opened when their owner was checked, so a link put
    /// at their paths since leads nowhere) and write (the witness's scratch): nothing else,
    /// though the witness's capability would read everything.
    fn bounds(&self) -> (Vec<PathBuf>, Vec<BorrowedFd<'_>>, Vec<PathBuf>) {
        let mut readable: Vec<PathBuf> = SYSTEM_READ.iter().map(PathBuf::from).collect();
        let opened: Vec<BorrowedFd> =
            std::iter::once(self.top_opened).chain(self.alternates.map(|(_, fd)| fd)).collect();
        // An installation of git elsewhere (`<prefix>/bin/git`): its prefix.
        let path = std::env::var_os("PATH").unwrap_or_default();
        let git = std::env::split_paths(&path).map(|dir| dir.join("git")).find(|git| git.is_file());
        if let Some(prefix) = git.and_then(|git| Some(git.canonicalize().ok()?.parent()?.parent()?.to_path_buf())) {
            readable.push(prefix);
        }
        (readable, opened, vec![self.home.to_path_buf(), PathBuf::from("/dev/null")])
    }

    /// What `git ARGS` printed with `index` as its index, its first `keep` bytes, and how
    /// many it printed in all, when it succeeded in time.
    fn run(&self, index: &Path, args: &[&str], stdin: Option<&[u8]>, keep: usize) -> Option<(Vec<u8>, usize)> {
        let mut command = Command::new("git");
        command
            .args(args)
            .env_clear()
            .envs(std::env::var_os("PATH").map(|path| ("PATH", path)))
            .envs(self.alternates.map(|(objects, _)| ("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects)))
            .env("HOME", self.home)
            .env("XDG_CONFIG_HOME", self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", self.top)
            .env("GIT_INDEX_FILE", index)
            .env("GIT_LITERAL_PATHSPECS", "1")
            .current_dir(self.top)
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // Within bounds: a directory of the tree swapped for a link while git walks it
        // leads git nowhere but where it may read.
        let (readable, opened, writable) = self.bounds();
        let child = std::thread::scope(|scope| {
            let starting = scope.spawn(|| {
                crate::sandbox::restrict_to(&readable, &opened, &writable).ok()?;
                command.spawn().ok()
            });
            starting.join().ok().flatten()
        })?;
        super::finish(child, stdin, keep, self.deadline)
    }
}
