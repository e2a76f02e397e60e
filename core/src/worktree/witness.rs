//! The git tree id of a served user's working tree, read by the witness account, whose
//! rights (the signing key, every user's logs) are worth more than that user's.
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

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
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
pub(super) fn git_tree_id(dir: &Path, excluded: &[PathBuf]) -> Option<String> {
    let deadline = Instant::now() + DEADLINE;
    let top = top(dir)?;
    // The repository of the user whose directory was asked about, not one around it that
    // another user holds.
    let uid = std::fs::metadata(dir).ok()?.uid();
    if std::fs::metadata(&top).ok()?.uid() != uid {
        return None;
    }
    let their_git_dir = git_dir(&top, uid)?;
    let scratch = tempfile::Builder::new().prefix("judged-tree-").tempdir().ok()?;
    let git_dir = scratch.path().join("git");
    for made in ["objects", "refs", "info"] {
        std::fs::create_dir_all(git_dir.join(made)).ok()?;
    }
    std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/judged\n").ok()?;
    let exclude = read_owned(&their_git_dir.join("info/exclude"), uid, MAX_SMALL_FILE_BYTES).unwrap_or_default();
    std::fs::write(git_dir.join("info/exclude"), exclude).ok()?;
    let their_index = scratch.path().join("their-index");
    let git = Isolated { top: &top, git_dir: &git_dir, home: scratch.path(), deadline };
    // A repository without an index (no commit, nothing added) tracks nothing.
    let tracked = match read_owned(&their_git_dir.join("index"), uid, MAX_INDEX_BYTES) {
        Some(index) => {
            std::fs::write(&their_index, index).ok()?;
            git.run(&their_index, &["ls-files", "-z", "--cached"], None).unwrap_or_default()
        }
        None => Vec::new(),
    };
    let index = scratch.path().join("index");
    git.run(&index, &["add", "-A"], None)?;
    // Tracked files an ignore rule matches stay in the tree, as in the user's `git add -A`.
    let staged = git.run(&index, &["ls-files", "-z"], None)?;
    let staged: std::collections::HashSet<&[u8]> = staged.split(|&b| b == 0).collect();
    let excluded: Vec<Vec<u8>> = excluded
        .iter()
        .filter_map(|path| path.strip_prefix(&top).ok())
        .filter_map(|relative| relative.to_str().map(|r| r.as_bytes().to_vec()))
        .collect();
    let mut ignored_tracked = Vec::new();
    for path in tracked.split(|&b| b == 0).filter(|p| !p.is_empty() && !staged.contains(p)) {
        let on_disk = std::str::from_utf8(path).ok().map(|p| top.join(p));
        if on_disk.is_some_and(|p| p.symlink_metadata().is_ok_and(|m| !m.is_dir()))
            && !excluded.iter().any(|e| e == path)
        {
            ignored_tracked.extend_from_slice(path);
            ignored_tracked.push(0);
        }
    }
    if !ignored_tracked.is_empty() {
        let args = ["add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul"];
        git.run(&index, &args, Some(&ignored_tracked))?;
    }
    if !excluded.is_empty() {
        let args = ["update-index", "--force-remove", "-z", "--stdin"];
        let mut names = Vec::new();
        for path in &excluded {
            names.extend_from_slice(path);
            names.push(0);
        }
        git.run(&index, &args, Some(&names))?;
    }
    let id = git.run(&index, &["write-tree"], None)?;
    let id = String::from_utf8(id).ok()?.trim().to_owned();
    super::is_object_id(&id).then_some(id)
}

/// The git directory of the work tree at `top`: its `.git` directory, or the one its
/// `.git` file names (a linked worktree, a submodule); either the user's own.
fn git_dir(top: &Path, uid: u32) -> Option<PathBuf> {
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
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = std::fs::File::options().read(true).custom_flags(flags.bits() as i32).open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.uid() != uid || meta.len() > cap {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// git, in the witness's own repository over the user's work tree, with no config but
/// its own and no environment but `PATH`.
struct Isolated<'a> {
    top: &'a Path,
    git_dir: &'a Path,
    home: &'a Path,
    deadline: Instant,
}

impl Isolated<'_> {
    /// What `git ARGS` printed with `index` as its index, when it succeeded in time.
    fn run(&self, index: &Path, args: &[&str], stdin: Option<&[u8]>) -> Option<Vec<u8>> {
        let mut command = Command::new("git");
        command
            .args(args)
            .env_clear()
            .envs(std::env::var_os("PATH").map(|path| ("PATH", path)))
            .env("HOME", self.home)
            .env("XDG_CONFIG_HOME", self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_DIR", self.git_dir)
            .env("GIT_WORK_TREE", self.top)
            .env("GIT_INDEX_FILE", index)
            .env("GIT_LITERAL_PATHSPECS", "1")
            .current_dir(self.top)
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().ok()?;
        let feeding = stdin.map(<[u8]>::to_vec).zip(child.stdin.take()).map(|(bytes, mut pipe)| {
            std::thread::spawn(move || {
                _ = pipe.write_all(&bytes);
            })
        });
        let mut out = child.stdout.take()?;
        let reading = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            out.read_to_end(&mut bytes).map(|_| bytes)
        });
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < self.deadline => std::thread::sleep(Duration::from_millis(5)),
                _ => {
                    _ = child.kill();
                    _ = child.wait();
                    break None;
                }
            }
        };
        if let Some(feeding) = feeding {
            _ = feeding.join();
        }
        let bytes = reading.join().ok()?.ok()?;
        status?.success().then_some(bytes)
    }
}
