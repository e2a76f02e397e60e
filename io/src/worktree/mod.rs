//! The working tree a review saw: for a git repository, HEAD plus every staged, unstaged
//! and untracked change, each path by the SHA-256 of what it holds now. A review is only
//! worth something for the work it saw, so evidence records this and the gate can require
//! that the tree is still the one reviewed.
//!
//! Runs `git` (the only other IO in the crate besides [`crate::files`]); a directory in
//! no repository, or a machine without git, has no tree. [`git_tree_id`] is the same
//! working tree as git's own tree id, which a commit of that work holds.

use crate::files;
use judged_core::chain;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

mod witness;

/// Who reads a repository, which decides what of the repository may run as the reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reader {
    /// The repository's own user (a daemon of the agent's user, the CLI): git runs in it
    /// as the user's own `git status` and `git add` would, but in a repository of judged's
    /// own over the work tree, so that nothing the repository's config names runs
    /// ([`OwnerScratch`]).
    Owner,
    /// A witness account, reading a served user's repository: git runs in a repository of
    /// the witness's own over the user's work tree, and nothing of the user's config runs
    /// (its fsmonitor or clean filters would run with the witness's rights, next to its
    /// key). It reads tree ids and changes, no status, and only of a repository of the
    /// user it serves.
    Witness {
        /// The uid of the user served: the repository and the directory asked about are
        /// theirs, or nothing is read.
        serving: u32,
    },
}

/// A repository's working tree, as far as a review can tell it apart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tree {
    /// The commit HEAD names; empty in a repository without commits.
    pub head: String,
    /// Each path (relative to the repository's top) that git reports staged, changed or
    /// untracked, with the SHA-256 of its content, or `deleted`.
    pub changes: BTreeMap<String, String>,
}

impl Tree {
    /// The tree of the repository holding `dir`, leaving out `excluded` paths (the files
    /// the evidence command itself writes); none outside a repository.
    pub fn of(dir: &Path, excluded: &[PathBuf]) -> Option<Tree> {
        Tree::of_at(dir, excluded, NESTED_DEPTH)
    }

    /// [`Tree::of`], reading repositories of their own inside it `depth` levels down.
    fn of_at(dir: &Path, excluded: &[PathBuf], depth: u8) -> Option<Tree> {
        // Found by looking, not by asking git: an evidence call outside any repository
        // pays no process start, and one inside pays one.
        let top = dir.ancestors().find(|d| d.join(".git").exists())?;
        let scratch = OwnerScratch::of(top)?;
        let status = scratch.git(
            &[
                "status",
                "--porcelain=v2",
                "-z",
                "--branch",
                "--untracked-files=all",
                "--no-renames",
                "--ignore-submodules=dirty",
            ],
            None,
        )?;
        let status = String::from_utf8_lossy(&status).into_owned();
        let mut head = String::new();
        let mut changes = BTreeMap::new();
        let mut nested = 0;
        for entry in status.split('\0').filter(|e| !e.is_empty()) {
            let path = match entry.as_bytes()[0] {
                b'#' => {
                    if let Some(oid) = entry.strip_prefix("# branch.oid ").filter(|oid| *oid != "(initial)") {
                        head = oid.to_owned();
                    }
                    continue;
                }
                // `1 XY sub mH mI mW hH hI path`, `u XY sub m1 m2 m3 mW h1 h2 h3 path`, `? path`
                b'1' => entry.splitn(9, ' ').nth(8),
                b'u' => entry.splitn(11, ' ').nth(10),
                b'?' => entry.get(2..),
                _ => None,
            };
            let Some(path) = path else { continue };
            if excluded.iter().any(|e| e == &top.join(path)) {
                continue;
            }
            let file = top.join(path);
            let digest = if is_repository(&file) {
                nested += 1;
                Tree::nested_digest(&file, if nested > MAX_NESTED { 0 } else { depth })
            } else {
                content_digest(&file)
            };
            changes.insert(path.to_owned(), digest);
        }
        Some(Tree { head, changes })
    }

    /// The digest of a repository of its own inside a work tree (`dir`, with its `.git`),
    /// from its own status (its HEAD, and what each of its changed and untracked files
    /// holds), to `depth` repositories down: git's status of the outer one names it alone
    /// (or its commit, for a submodule), so a change inside would otherwise change no
    /// digest. Not read (too deep, too many): a digest no two reads share, so that no
    /// answer is reused for it.
    fn nested_digest(dir: &Path, depth: u8) -> String {
        match (depth > 0).then(|| Tree::of_at(dir, &[], depth - 1)).flatten() {
            Some(tree) => format!("repository {}", tree.digest()),
            None => format!("repository not read {:032x}", rand::random::<u128>()),
        }
    }

    /// This tree of the repository at `top`, but for the `excluded` paths: what
    /// [`Tree::of`] gives with them, from a tree read without.
    pub fn without(&self, top: &Path, excluded: &[PathBuf]) -> Tree {
        let changes = self.changes.iter().filter(|(path, _)| !excluded.iter().any(|e| e == &top.join(path)));
        Tree { head: self.head.clone(), changes: changes.map(|(p, d)| (p.clone(), d.clone())).collect() }
    }

    /// One digest of the whole tree.
    pub fn digest(&self) -> String {
        let canonical = serde_json::to_string(self).expect("a tree serializes");
        chain::to_hex(&chain::sha256(canonical.as_bytes()))
    }

    /// What differs in `now` from this (reviewed) tree: the paths whose content changed,
    /// appeared or went back to HEAD's, sorted; and whether HEAD itself moved.
    pub fn changes_since(&self, now: &Tree) -> (bool, Vec<String>) {
        let mut paths: Vec<String> = self
            .changes
            .iter()
            .filter(|(path, digest)| now.changes.get(*path) != Some(digest))
            .map(|(path, _)| path.clone())
            .chain(now.changes.keys().filter(|path| !self.changes.contains_key(*path)).cloned())
            .collect();
        paths.sort();
        (self.head != now.head, paths)
    }
}

/// Where a review's changes began: what the reviewer was shown is the way from this
/// commit's tree to the reviewed tree. A pass of the reviewed tree says nothing of the
/// changes that led to the base, so an attestation names it (docs/spec/attestation.md §4.2)
/// and a check requires the base itself covered (§7.3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DiffBase {
    /// The commit HEAD named: the changes from its tree.
    Commit(String),
    /// The repository had no commit: every file was new, so all of the tree was shown.
    NoCommit,
}

impl DiffBase {
    /// The base as the attestation writes it: the commit, or none when every file was new.
    pub fn commit(&self) -> Option<&str> {
        match self {
            DiffBase::Commit(id) => Some(id),
            DiffBase::NoCommit => None,
        }
    }
}

/// A working tree as a review saw it: git's id of the tree, and where its changes began.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReviewedTree {
    /// The tree's id as a commit of it holds it ([`git_tree_id`]).
    pub id: String,
    /// The commit the review's changes were read against.
    pub base: DiffBase,
}

/// The working tree's changes as text for a reader (a jury): the diff against HEAD, then
/// each untracked file whole, at most `limit` bytes, with a note of what was cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangesText {
    /// The diff and the untracked files, cut to the limit.
    pub text: String,
    /// Bytes left out to stay within the limit, and what the files shown by a stand-in
    /// held (one too large to show, one that could not be read): a reader not shown them
    /// reviewed no tree that holds them.
    pub cut_bytes: usize,
    /// What the diff is against.
    pub base: DiffBase,
    /// What was committed since the commit a session began on, when that is not HEAD
    /// ([`changes_and_tree`]): work the agent committed is its work too.
    pub committed: Option<Committed>,
}

/// The changes committed between the commit a session began on and HEAD, as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Committed {
    /// Where they start.
    pub since: DiffBase,
    /// The diff, cut at the limit.
    pub text: String,
    /// Bytes left out to stay within the limit.
    pub cut_bytes: usize,
}

/// `diff`'s output as text of at most `limit` bytes (cut on a character's boundary), and
/// how many bytes were left out.
fn cut_text(diff: &[u8], limit: usize) -> (String, usize) {
    let mut text = String::from_utf8_lossy(diff).into_owned();
    let mut end = text.len().min(limit);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = text.len() - end;
    text.truncate(end);
    (text, cut)
}

/// The changes of the work tree holding `dir` as text for a jury, and the git id of the
/// tree they show: a witness reads both from one staging (so the changes are exactly those
/// of the tree the id names), the owner reads them one after the other from one copy of its
/// index (its caller checks that the tree held still). With `since` (the commit a session
/// began on, or none: every file was new), what was committed since it too, when HEAD moved
/// from it; a `since` that cannot be read gives nothing, never less. None outside a
/// repository.
pub fn changes_and_tree(
    dir: &Path,
    limit: usize,
    reader: Reader,
    since: Option<&DiffBase>,
) -> Option<(ChangesText, Option<String>)> {
    match reader {
        // One copy of the index for both: the changes first, then the staging (which
        // writes that copy).
        Reader::Owner => {
            let scratch = OwnerScratch::of(dir.ancestors().find(|d| d.join(".git").exists())?)?;
            Some((scratch.changes(limit, since)?, scratch.tree_id(&[])))
        }
        Reader::Witness { serving } => {
            let (tree, changes) = witness::tree_and_changes(dir, limit, serving, since)?;
            Some((changes, Some(tree)))
        }
    }
}

/// The changes of the repository holding `dir` as text; none outside a repository. A
/// witness reads them as [`witness`] says: a patch against HEAD in which untracked files
/// are new files.
pub fn changes_text(dir: &Path, limit: usize, reader: Reader) -> Option<ChangesText> {
    if let Reader::Witness { serving } = reader {
        return witness::changes_text(dir, limit, serving);
    }
    let top = dir.ancestors().find(|d| d.join(".git").exists())?;
    OwnerScratch::of(top)?.changes(limit, None)
}

/// What a review of the work tree holding `dir` begins on: the commit HEAD names, or no
/// commit when its branch has none yet; none outside a repository, or when HEAD cannot be
/// read (then no base can be claimed, and the review covers no commit).
pub fn base(dir: &Path, reader: Reader) -> Option<DiffBase> {
    match reader {
        Reader::Owner => {
            // From HEAD's files, as for the work tree's reads; else as git resolves it.
            let top = dir.ancestors().find(|d| d.join(".git").exists())?;
            let uid = files::current_uid();
            if let Some(base) = witness::git_dir(top, uid).and_then(|git_dir| witness::head_of(&git_dir, uid)) {
                return Some(base);
            }
            if let Some(id) = head(top) {
                return Some(DiffBase::Commit(id));
            }
            // No commit yet: HEAD names a branch, and no ref of that name exists.
            let branch = git(top, &["symbolic-ref", "-q", "HEAD"])?;
            let exists = git(top, &["show-ref", "--verify", "--quiet", branch.trim_end()]).is_some();
            (!exists).then_some(DiffBase::NoCommit)
        }
        Reader::Witness { serving } => witness::base(dir, serving),
    }
}

/// The id git would give the working tree of the repository holding `dir` if everything
/// in it were committed now (`git add -A && git write-tree`): the tracked files as they
/// are and the untracked ones no ignore rule matches, but the `excluded` paths (the files
/// the evidence command itself writes). None outside a repository or without git. A
/// witness reads it as [`witness`] says; the owner as follows.
///
/// The repository is not written: git works on a copy of its index (its time kept, so
/// that git's check for files changed within the index's last second still holds) and
/// writes the objects it hashes to a directory of its own, reading the repository's
/// through `GIT_ALTERNATE_OBJECT_DIRECTORIES`. Nothing the config names runs
/// ([`OwnerScratch`]), so a repository whose commits pass through a clean filter holds
/// other trees than the one read.
pub fn git_tree_id(dir: &Path, excluded: &[PathBuf], reader: Reader) -> Option<String> {
    if let Reader::Witness { serving } = reader {
        return witness::git_tree_id(dir, excluded, serving);
    }
    let top = dir.ancestors().find(|d| d.join(".git").exists())?;
    OwnerScratch::of(top)?.tree_id(excluded)
}

/// A repository of judged's own over the owner's work tree at `top`, for every read of the
/// work tree: the repository's HEAD (as its commit), a copy of its index (for the stat
/// data that spares hashing unchanged files), its objects read through
/// `GIT_ALTERNATE_OBJECT_DIRECTORIES`, and its `info/exclude` with the user's global
/// ignore file; none of its config, nor the user's or the system's. So nothing the
/// repository's config names runs, and it is never read twice: no fsmonitor, hook or
/// filter driver, no `core.worktree` elsewhere. The agent can write that config (a
/// nested repository of its own will do), and the daemon runs outside its sandbox.
///
/// The price: a clean filter (Git LFS's too) or a line-ending conversion of the config's
/// does not run, so the tree read is what the files hold, and a commit made through one
/// holds another tree (it is not attested).
struct OwnerScratch {
    dir: tempfile::TempDir,
    top: PathBuf,
    objects: PathBuf,
    /// The commit the repository's HEAD names; none without commits.
    head: Option<String>,
}

impl OwnerScratch {
    fn of(top: &Path) -> Option<OwnerScratch> {
        // Found by looking, as a repository of the user's own (no git process to start):
        // its git directory, and the one its shared parts are in.
        let uid = files::current_uid();
        let git_dir = witness::git_dir(top, uid)?;
        let common = witness::common_dir(&git_dir, uid);
        let (index, objects, exclude) = (git_dir.join("index"), common.join("objects"), common.join("info/exclude"));
        // HEAD from its files, else (a reftable) as git resolves it; a HEAD neither reads
        // (broken) is no tree, never taken for a branch with no commit.
        let head = match witness::head_of(&git_dir, uid) {
            Some(DiffBase::Commit(id)) => Some(id),
            Some(DiffBase::NoCommit) => None,
            None => Some(head(top)?),
        };
        let dir = tempfile::Builder::new().prefix("judged-tree-").tempdir().ok()?;
        let own = dir.path().join("git");
        for made in ["objects", "refs", "info"] {
            std::fs::create_dir_all(own.join(made)).ok()?;
        }
        let named = head.as_ref().map_or_else(|| "ref: refs/heads/judged\n".to_owned(), |id| format!("{id}\n"));
        std::fs::write(own.join("HEAD"), named).ok()?;
        // The repository's ignore rules that are not in its tree, and the user's own.
        let mut ignored = read_small(&exclude).unwrap_or_default();
        if let Some(global) = global_excludes(top) {
            ignored.push(b'\n');
            ignored.extend(read_small(&global).unwrap_or_default());
        }
        std::fs::write(own.join("info/exclude"), ignored).ok()?;
        let scratch = OwnerScratch { dir, top: top.to_path_buf(), objects, head };
        // An index that cannot be copied (none yet, not a plain file): none, every file
        // hashed.
        let _ = seed_index(&index, &scratch.index());
        Some(scratch)
    }

    fn index(&self) -> PathBuf {
        self.dir.path().join("index")
    }

    /// Every file of the work tree a commit of the repository does not hold, or that its
    /// index tracks: for a repository of its own inside the work tree judged, all of it is
    /// new work (its own ignore rules apply).
    fn new_files(&self) -> Option<Vec<Vec<u8>>> {
        let listed = self.git(&["ls-files", "--cached", "--others", "--exclude-standard", "-z"], None)?;
        Some(listed.split(|&b| b == 0).filter(|p| !p.is_empty()).map(<[u8]>::to_vec).collect())
    }

    /// The changes of the work tree as text ([`changes_text`]), and what was committed
    /// since `since` ([`changes_and_tree`]).
    fn changes(&self, limit: usize, since: Option<&DiffBase>) -> Option<ChangesText> {
        let top = self.top.as_path();
        // What the files hold, whatever the repository's attributes and config say: no text
        // conversion (a `textconv` can show the jury another file than the one there), no
        // "binary" (`* -diff` in `.git/info/attributes`, which the jury never sees, hides a
        // change), no external diff. Against the commit HEAD names when it is read, so that
        // the base named is the one diffed against. A repository without commits has no HEAD
        // to diff against: its staged files are the change.
        let shown = [
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--text",
            "--no-renames",
            "--ignore-submodules=dirty",
            "--submodule=short",
        ];
        let (diff, base) = match &self.head {
            Some(id) => (self.git(&[&shown[..], &[id.as_str(), "--"]].concat(), None), DiffBase::Commit(id.clone())),
            None => (self.git(&[&shown[..], &["--cached"]].concat(), None), base(top, Reader::Owner)?),
        };
        // What was committed since the session began, when HEAD moved from there; from no
        // commit at all when that one can no longer be read (taken out of the repository):
        // more, never less.
        let committed = match (since, &self.head) {
            (Some(since), Some(head)) if since.commit() != Some(head.as_str()) => {
                let from = |base: &str| self.git(&[&shown[..], &[base, head.as_str(), "--"]].concat(), None);
                let (diff, since) = match from(since.commit().unwrap_or(witness::EMPTY_TREE)) {
                    Some(diff) => (diff, since.clone()),
                    None => (from(witness::EMPTY_TREE)?, DiffBase::NoCommit),
                };
                let (text, cut_bytes) = cut_text(&diff, limit);
                Some(Committed { since, text, cut_bytes })
            }
            _ => None,
        };
        let mut whole = diff.map(|d| String::from_utf8_lossy(&d).into_owned()).unwrap_or_default();
        // What a file shown by a stand-in held and the reader was not shown: counted as cut.
        let mut not_shown: usize = 0;
        let untracked = self.git(&["ls-files", "--others", "--exclude-standard", "-z"], None).unwrap_or_default();
        let listed = untracked.split(|&b| b == 0).filter(|p| !p.is_empty()).map(<[u8]>::to_vec).collect();
        show_new_files(top, "", "untracked", listed, limit, NESTED_DEPTH, &mut whole, &mut not_shown);
        if whole.len() <= limit {
            return Some(ChangesText { text: whole, cut_bytes: not_shown, base, committed });
        }
        let mut end = limit;
        while !whole.is_char_boundary(end) {
            end -= 1;
        }
        let cut_bytes = (whole.len() - end).saturating_add(not_shown);
        whole.truncate(end);
        Some(ChangesText { text: whole, cut_bytes, base, committed })
    }

    /// The work tree's git tree id but for `excluded` ([`git_tree_id`]); it stages the
    /// scratch index, so it is read after [`OwnerScratch::changes`] when both are.
    fn tree_id(&self, excluded: &[PathBuf]) -> Option<String> {
        let top = self.top.as_path();
        let in_scratch =
            |args: &[&str]| self.git(args, None).map(|out| String::from_utf8_lossy(&out).trim().to_owned());
        // A copied index git cannot read (a split index whose shared part it looks for
        // beside the copy) is started afresh: slower, the same tree.
        if in_scratch(&["add", "-A"]).is_none() {
            std::fs::remove_file(self.index()).ok()?;
            in_scratch(&["add", "-A"])?;
        }
        let excluded: Vec<u8> = excluded
            .iter()
            .filter_map(|path| path.strip_prefix(top).ok())
            .flat_map(|relative| relative.as_os_str().as_bytes().iter().copied().chain([0]))
            .collect();
        if !excluded.is_empty() {
            self.git(&["update-index", "--force-remove", "-z", "--stdin"], Some(&excluded))?;
        }
        in_scratch(&["write-tree"]).filter(|id| is_object_id(id))
    }

    /// `git ARGS` in this repository over the work tree, with `stdin` given, within
    /// [`OWNER_GIT_DEADLINE`]: its output, when it succeeded.
    fn git(&self, args: &[&str], stdin: Option<&[u8]>) -> Option<Vec<u8>> {
        use std::process::Stdio;
        let child = Command::new("git")
            .args(args)
            .env_clear()
            .envs(std::env::var_os("PATH").map(|path| ("PATH", path)))
            .env("HOME", self.dir.path())
            .env("XDG_CONFIG_HOME", self.dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_DIR", self.dir.path().join("git"))
            .env("GIT_WORK_TREE", &self.top)
            .env("GIT_INDEX_FILE", self.index())
            .env("GIT_OBJECT_DIRECTORY", self.dir.path().join("git/objects"))
            .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &self.objects)
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .current_dir(&self.top)
            .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        finish(child, stdin, usize::MAX, std::time::Instant::now() + OWNER_GIT_DEADLINE).map(|(out, _)| out)
    }
}

/// The user's global ignore file: `core.excludesFile` of their global config (read as
/// data, once a process), else git's default place for it.
fn global_excludes(top: &Path) -> Option<PathBuf> {
    static NAMED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let named = NAMED
        .get_or_init(|| git(top, &["config", "--global", "--path", "core.excludesFile"]).map(|n| n.trim().to_owned()));
    if let Some(named) = named.as_ref().filter(|n| !n.is_empty()) {
        return Some(PathBuf::from(named));
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    Some(config.join("git/ignore"))
}

/// A small file's bytes, read without following a link or blocking on a FIFO.
fn read_small(path: &Path) -> Option<Vec<u8>> {
    files::read_not_following(path, 1 << 20).ok().map(|(_, bytes)| bytes)
}

/// A commit, as its object names its tree and parents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    /// Its object id.
    pub id: String,
    /// The tree it holds.
    pub tree: String,
    /// Its parents, first parent first.
    pub parents: Vec<String>,
}

impl Commit {
    /// The commit `id` whose object is `object` (as `git cat-file commit` prints it),
    /// when that object hashes to `id`: a commit named by someone who cannot be trusted
    /// is read without reading their repository.
    pub fn from_object(id: &str, object: &[u8]) -> Option<Commit> {
        let mut hashed = format!("commit {}\0", object.len()).into_bytes();
        hashed.extend_from_slice(object);
        let hash = match id.len() {
            40 => hex::encode(<sha1::Sha1 as sha1::Digest>::digest(&hashed)),
            _ => chain::to_hex(&chain::sha256(&hashed)),
        };
        if !is_object_id(id) || hash != id {
            return None;
        }
        let header = &object[..memchr::memmem::find(object, b"\n\n").unwrap_or(object.len())];
        let header = std::str::from_utf8(header).ok()?;
        let field =
            |name: &'static str| header.lines().filter_map(move |line| line.strip_prefix(name)).map(str::to_owned);
        let tree = field("tree ").next().filter(|t| is_object_id(t))?;
        Some(Commit { id: id.to_owned(), tree, parents: field("parent ").collect() })
    }
}

/// The top directory of the work tree holding `dir`; none outside a repository.
pub fn top_of(dir: &Path, reader: Reader) -> Option<PathBuf> {
    match reader {
        Reader::Owner => {
            git(dir, &["rev-parse", "--show-toplevel"]).map(|top| PathBuf::from(top.trim_end_matches('\n')))
        }
        Reader::Witness { .. } => witness::top(dir),
    }
}

/// The commit HEAD names in the repository at `top`; none without commits.
pub fn head(top: &Path) -> Option<String> {
    git(top, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).map(|id| id.trim_end().to_owned())
}

/// Whether `id` is a full object id as git writes it (40 or 64 lower-case hex digits).
pub fn is_object_id(id: &str) -> bool {
    matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The commit `id` (a full object id) of the repository at `top`, as its object says;
/// none when there is no such commit.
pub fn commit(top: &Path, id: &str) -> Option<Commit> {
    if !is_object_id(id) {
        return None;
    }
    Commit::from_object(id, &git_bytes(top, &["cat-file", "commit", id])?)
}

/// Where attestations are kept: one note per commit, one envelope per line
/// (docs/spec/attestation.md §6).
pub const NOTES_REF: &str = "refs/notes/judged";

/// Why a commit's note could not be written.
#[derive(Debug, thiserror::Error)]
pub enum NoteError {
    /// git could not be started.
    #[error("cannot run git: {0}; install git, or put it on PATH")]
    Spawn(std::io::Error),
    /// It ran and failed.
    #[error("`git notes --ref {NOTES_REF} append` failed in {}: {said}", dir.display())]
    Failed {
        /// The repository.
        dir: PathBuf,
        /// What git said on stderr (its last line).
        said: String,
    },
}

/// Append `line` to `commit`'s note under [`NOTES_REF`] in the repository holding `dir`,
/// unless the note holds that line already; whether it was appended.
pub fn append_note(dir: &Path, commit: &str, line: &str) -> Result<bool, NoteError> {
    // The note as a blob (`notes show` would render whatever object the notes name, a
    // commit's diff with its text conversions among them); no note yet, an empty one.
    let blob = git(dir, &["notes", "--ref", NOTES_REF, "list", commit]).unwrap_or_default();
    let blob = blob.trim();
    let note = match is_object_id(blob) {
        true => git(dir, &["cat-file", "blob", blob]).unwrap_or_default(),
        false => String::new(),
    };
    if note.lines().any(|held| held == line) {
        return Ok(false);
    }
    let append = |separator: &[&str]| {
        let failed = |said: &str| NoteError::Failed { dir: dir.to_owned(), said: said.to_owned() };
        let mut child = owner_git(dir)
            .args(["notes", "--ref", NOTES_REF, "append"])
            .args(separator)
            .args(["-m", line, commit])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(NoteError::Spawn)?;
        let errors = child.stderr.take();
        let said = std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = errors {
                let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
            }
            text
        });
        let done = finish(child, None, usize::MAX, std::time::Instant::now() + OWNER_GIT_DEADLINE);
        let stderr = said.join().unwrap_or_default();
        let said = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(nothing on stderr)").trim();
        done.map(|_| true).ok_or_else(|| failed(said))
    };
    match append(&["--no-separator"]) {
        // A git before 2.42 knows no `--no-separator`: its blank line between notes is
        // skipped by every reader.
        Err(NoteError::Failed { said, .. }) if said.contains("no-separator") => append(&[]),
        appended => appended,
    }
}

/// A copy of the repository's index at `to`, with the original's modification time.
fn seed_index(index: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    // Opened as a file someone else may have swapped: no link followed, no FIFO waited on.
    let flags = (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOFOLLOW).bits() as i32;
    let mut from = std::fs::File::options().read(true).custom_flags(flags).open(index)?;
    let meta = from.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("the index is not a regular file"));
    }
    let mut out = std::fs::File::create(to)?;
    std::io::copy(&mut from, &mut out)?;
    out.set_modified(meta.modified()?)
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    git_bytes(dir, args).map(|out| String::from_utf8_lossy(&out).into_owned())
}

/// git in the repository holding `dir` as the owner runs it, for what reads no work tree
/// (refs, objects, notes; every read of the work tree goes through [`OwnerScratch`]): the
/// config read as data, and what it could run overridden: no fsmonitor, no hook
/// (`core.hooksPath` an empty place: appending a note would run `reference-transaction`).
fn owner_git(dir: &Path) -> Command {
    let overrides = [("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null")];
    let mut command = Command::new("git");
    command.arg("-C").arg(dir).env("GIT_CONFIG_COUNT", overrides.len().to_string());
    for (n, (key, value)) in overrides.iter().enumerate() {
        command.env(format!("GIT_CONFIG_KEY_{n}"), key).env(format!("GIT_CONFIG_VALUE_{n}"), value);
    }
    command
}

/// `git ARGS` over the owner's work tree at `top`, in a repository of judged's own
/// ([`OwnerScratch`]): its output, when it succeeded in time.
pub fn work_tree_git(top: &Path, args: &[&str]) -> Option<Vec<u8>> {
    OwnerScratch::of(top)?.git(args, None)
}

/// How long the owner's git may take to read a repository: the engine waits for it, and
/// a repository's size or its config (an fsmonitor that never answers) must not hold the
/// daemon's answers to everyone else for longer.
const OWNER_GIT_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// `git ARGS` in `dir` as the owner runs it ([`owner_git`]), within [`OWNER_GIT_DEADLINE`]:
/// its output, when it succeeded. Paths are taken as they are (a directory may be named `[a]`).
fn git_bytes(dir: &Path, args: &[&str]) -> Option<Vec<u8>> {
    use std::process::Stdio;
    let child = owner_git(dir)
        .args(args)
        // A status must not take the index lock the agent's own git commands need.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_LITERAL_PATHSPECS", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    finish(child, None, usize::MAX, std::time::Instant::now() + OWNER_GIT_DEADLINE).map(|(bytes, _)| bytes)
}

/// What a started git printed, its first `keep` bytes and how many it printed in all, when
/// it succeeded by `deadline` (killed then): `stdin` written to it meanwhile, its output
/// read to the end as it comes (a long patch costs no memory past `keep`).
fn finish(
    mut child: std::process::Child,
    stdin: Option<&[u8]>,
    keep: usize,
    deadline: std::time::Instant,
) -> Option<(Vec<u8>, usize)> {
    use std::io::{Read, Write};
    let feeding = stdin.map(<[u8]>::to_vec).zip(child.stdin.take()).map(|(bytes, mut pipe)| {
        std::thread::spawn(move || {
            _ = pipe.write_all(&bytes);
        })
    });
    let mut out = child.stdout.take()?;
    let reading = std::thread::spawn(move || {
        let (mut kept, mut total, mut chunk) = (Vec::new(), 0, vec![0; 64 * 1024]);
        loop {
            match out.read(&mut chunk) {
                Ok(0) => return Ok((kept, total)),
                Ok(n) => {
                    kept.extend_from_slice(&chunk[..n.min(keep.saturating_sub(kept.len()))]);
                    total += n;
                }
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(std::time::Duration::from_millis(2)),
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
    let output = reading.join().ok()?.ok()?;
    status?.success().then_some(output)
}

/// What a changed path holds, as git sees it: a symbolic link is the path it names (its
/// target's content is not the repository's, and can change without a write in it). The
/// path is opened without following a link or blocking (a FIFO put there holds nothing up)
/// and hashed as it is read, however large.
/// Show each of `listed` (paths under `top`, as `prefix` names it) as a new file, whole:
/// each read as a file of the repository, not through a link (to a FIFO that would hold the
/// engine, to `/dev/zero`), and none larger than all that can be shown; by its name's bytes,
/// whatever they are. A repository of its own among them (`plugin/`, with its `.git`) is work
/// too: its files are shown the same way, to `depth` repositories down. What a stand-in
/// stood for is counted in `not_shown`.
#[allow(clippy::too_many_arguments)]
fn show_new_files(
    top: &Path,
    prefix: &str,
    what: &str,
    listed: Vec<Vec<u8>>,
    limit: usize,
    depth: u8,
    out: &mut String,
    not_shown: &mut usize,
) {
    let mut nested = 0;
    for path in listed {
        let shown_path = format!("{prefix}{}", String::from_utf8_lossy(&path));
        let file = top.join(std::ffi::OsStr::from_bytes(&path));
        if is_repository(&file) {
            nested += 1;
            // Past the limit nothing more is shown: no repository is read for it.
            let read = depth > 0 && nested <= MAX_NESTED && out.len() <= limit;
            let inner = read.then(|| OwnerScratch::of(&file)).flatten().and_then(|scratch| scratch.new_files());
            match inner {
                Some(inner) => {
                    let what = format!("in the repository {shown_path} of its own");
                    show_new_files(&file, &shown_path, &what, inner, limit, depth - 1, out, not_shown);
                }
                None => {
                    *not_shown = not_shown.saturating_add(1);
                    out.push_str(&format!("--- /dev/null\n+++ b/{shown_path} (a repository of its own, not read)\n\n"));
                }
            }
            continue;
        }
        let content = match files::read_not_following(&file, limit as u64) {
            Ok((_, bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(_) if file.is_symlink() => {
                format!("(a symbolic link to {})", std::fs::read_link(&file).unwrap_or_default().display())
            }
            Err(files::OpenedFileRefusal::TooLarge(len)) => {
                *not_shown = not_shown.saturating_add(usize::try_from(len).unwrap_or(usize::MAX));
                "(larger than can be shown)".to_owned()
            }
            Err(why) => {
                *not_shown = not_shown.saturating_add(1);
                format!("(unreadable: {why})")
            }
        };
        out.push_str(&format!("--- /dev/null\n+++ b/{shown_path} ({what})\n{content}\n"));
    }
}

/// How many repositories of their own, one inside the other, a work tree's digest and the
/// changes a jury is shown reach into.
const NESTED_DEPTH: u8 = 1;
/// How many repositories of their own inside one work tree are read; the rest are not.
const MAX_NESTED: usize = 8;

/// Whether `path` is a repository of its own inside a work tree (an untracked clone, a
/// submodule): a directory with a `.git`.
fn is_repository(path: &Path) -> bool {
    path.is_dir() && path.join(".git").exists()
}

fn content_digest(path: &Path) -> String {
    use sha2::Digest;
    if let Ok(target) = std::fs::read_link(path) {
        let named = format!("symlink:{}", target.display());
        return chain::to_hex(&chain::sha256(named.as_bytes()));
    }
    let Ok(mut file) = files::open_not_following(path) else {
        return if path.is_dir() { "directory" } else { "deleted" }.to_owned();
    };
    match file.metadata() {
        Ok(meta) if meta.is_file() => {}
        Ok(meta) if meta.is_dir() => return "directory".to_owned(),
        _ => return "not a file".to_owned(),
    }
    let mut hasher = sha2::Sha256::new();
    let mut chunk = vec![0; 64 * 1024];
    loop {
        match std::io::Read::read(&mut file, &mut chunk) {
            Ok(0) => return chain::to_hex(&hasher.finalize().into()),
            Ok(n) => hasher.update(&chunk[..n]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return "unreadable".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A witness serving this test's own user.
    fn witness() -> Reader {
        Reader::Witness { serving: crate::files::current_uid() }
    }

    fn run(dir: &Path, args: &[&str]) {
        let status = Command::new("git").arg("-C").arg(dir).args(args).status().expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn a_tree_tells_every_kind_of_change_and_leaves_out_the_evidence_files() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        assert_eq!(Tree::of(dir, &[]), None, "no repository, no tree");
        run(dir, &["init", "-q"]);
        fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
        fs::write(dir.join("b.rs"), "fn b() {}\n").unwrap();
        run(dir, &["add", "."]);
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        let clean = Tree::of(dir, &[]).unwrap();
        assert!(clean.changes.is_empty() && clean.head.len() == 40, "{clean:?}");

        fs::write(dir.join("a.rs"), "fn a() { todo!() }\n").unwrap(); // unstaged
        fs::write(dir.join("new.rs"), "fn n() {}\n").unwrap(); // untracked
        fs::write(dir.join("evidence.json"), "{}").unwrap(); // the command's own output
        let reviewed = Tree::of(dir, &[dir.join("evidence.json")]).unwrap();
        assert_eq!(Tree::of(dir, &[]).unwrap().without(dir, &[dir.join("evidence.json")]), reviewed);
        assert_eq!(reviewed.changes.keys().collect::<Vec<_>>(), ["a.rs", "new.rs"]);
        assert_ne!(reviewed.digest(), clean.digest());
        assert_eq!(Tree::of(dir, &[dir.join("evidence.json")]).unwrap().digest(), reviewed.digest(), "stable");

        fs::write(dir.join("b.rs"), "fn b() { 1 }\n").unwrap();
        run(dir, &["add", "b.rs"]); // staged
        fs::write(dir.join("new.rs"), "fn n() { 2 }\n").unwrap();
        let now = Tree::of(dir, &[dir.join("evidence.json")]).unwrap();
        assert_eq!(reviewed.changes_since(&now), (false, vec!["b.rs".to_owned(), "new.rs".to_owned()]));
    }

    fn output(dir: &Path, args: &[&str]) -> String {
        let output = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git runs");
        assert!(output.status.success(), "git {args:?}");
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// Every object of the repository, loose or packed, to tell that nothing was written.
    fn objects(dir: &Path) -> String {
        output(dir, &["count-objects", "-v"])
    }

    #[test]
    fn the_git_tree_of_the_working_tree_is_the_one_its_commit_gets_and_nothing_is_written() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        assert_eq!(git_tree_id(dir, &[], Reader::Owner), None, "no repository, no tree");
        run(dir, &["init", "-q"]);
        fs::write(dir.join(".gitignore"), "target/\n").unwrap();
        fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
        run(dir, &["add", "."]);
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        assert_eq!(
            git_tree_id(dir, &[], Reader::Owner).unwrap(),
            output(dir, &["rev-parse", "HEAD^{tree}"]),
            "a clean tree is HEAD's"
        );

        fs::write(dir.join("a.rs"), "fn a() { 1 }\n").unwrap(); // changed, not staged
        fs::create_dir(dir.join("src")).unwrap();
        fs::write(dir.join("src/new.rs"), "fn n() {}\n").unwrap(); // untracked
        fs::create_dir(dir.join("target")).unwrap();
        fs::write(dir.join("target/out"), "built").unwrap(); // ignored
        fs::write(dir.join("evidence.json"), "{}").unwrap(); // the command's own output
        let (index, before) = (fs::read(dir.join(".git/index")).unwrap(), objects(dir));
        let reviewed = git_tree_id(dir, &[dir.join("evidence.json")], Reader::Owner).unwrap();
        assert_eq!(fs::read(dir.join(".git/index")).unwrap(), index, "the user's index is not touched");
        assert_eq!(objects(dir), before, "no object is written to the repository");
        assert_eq!(output(dir, &["status", "--porcelain"]), "M a.rs\n?? evidence.json\n?? src/", "nothing staged");

        fs::remove_file(dir.join("evidence.json")).unwrap();
        run(dir, &["add", "-A"]);
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two"]);
        assert_eq!(
            reviewed,
            output(dir, &["rev-parse", "HEAD^{tree}"]),
            "the commit of that work holds the reviewed tree"
        );

        let (head, first) = (output(dir, &["rev-parse", "HEAD"]), output(dir, &["rev-parse", "HEAD~1"]));
        assert_eq!(top_of(&dir.join("src"), Reader::Owner).unwrap(), dir.canonicalize().unwrap());
        assert_eq!(commit(dir, &head), Some(Commit { id: head.clone(), tree: reviewed, parents: vec![first] }));
        assert_eq!(commit(dir, "HEAD"), None, "only a full id names a commit");
        assert_eq!(commit(dir, &"0".repeat(40)), None);
    }

    /// A repository whose own config would run commands: its fsmonitor and a clean filter
    /// applied to every file (through `info/attributes`, outside the tree) append to
    /// `marker`. Returns the tree id its next commit gets.
    fn armed_repository(dir: &Path, marker: &Path) -> String {
        run(dir, &["init", "-q"]);
        fs::write(dir.join(".gitignore"), "target/\n").unwrap();
        fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
        fs::create_dir(dir.join("target")).unwrap();
        fs::write(dir.join("target/kept"), "tracked though ignored").unwrap();
        fs::write(dir.join("target/out"), "built").unwrap();
        run(dir, &["add", "-A"]);
        run(dir, &["add", "-f", "target/kept"]);
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        fs::write(dir.join("a.rs"), "fn a() { 1 }\n").unwrap();
        fs::write(dir.join("target/kept"), "changed").unwrap();
        fs::write(dir.join("new.rs"), "fn n() {}\n").unwrap();
        let expected = git_tree_id(dir, &[], Reader::Owner).unwrap();
        let spy = format!("echo ran >> {}", marker.display());
        run(dir, &["config", "core.fsmonitor", &spy]);
        run(dir, &["config", "filter.spy.clean", &format!("{spy}; cat")]);
        fs::write(dir.join(".git/info/attributes"), "* filter=spy\n").unwrap();
        expected
    }

    /// A repository of one commit of `a.rs`.
    fn committed_repository() -> tempfile::TempDir {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        run(dir, &["init", "-q"]);
        fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
        run(dir, &["add", "-A"]);
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        repo
    }

    /// With the commit a session began on, the changes show what was committed since too,
    /// for the owner and a witness alike, beside the changes from HEAD (their base, as
    /// before); from a commit no longer in the repository, all that HEAD holds, never less.
    #[test]
    fn changes_with_where_a_session_began_show_what_it_committed_since() {
        let repo = committed_repository();
        let dir = repo.path();
        let began = DiffBase::Commit(head(dir).unwrap());
        fs::write(dir.join("a.rs"), "fn a() { committed() }\n").unwrap();
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two"]);
        fs::write(dir.join("b.rs"), "fn b() {}\n").unwrap();
        for reader in [Reader::Owner, witness()] {
            let (changes, _) = changes_and_tree(dir, 10_000, reader, Some(&began)).unwrap();
            let committed = changes.committed.as_ref().expect("what was committed since");
            assert!(committed.text.contains("+fn a() { committed() }"), "{reader:?}: {}", committed.text);
            assert_eq!(committed.since, began);
            assert!(changes.text.contains("fn b() {}") && !changes.text.contains("committed()"), "{}", changes.text);
            assert_eq!(changes.base, DiffBase::Commit(head(dir).unwrap()));
            let (from_head, _) = changes_and_tree(dir, 10_000, reader, None).unwrap();
            assert_eq!(from_head.committed, None);
            let now = DiffBase::Commit(head(dir).unwrap());
            assert_eq!(changes_and_tree(dir, 10_000, reader, Some(&now)).unwrap().0.committed, None);
        }
        // A commit taken out of the repository: everything HEAD holds is shown, from none.
        let gone = DiffBase::Commit("0123456789abcdef0123456789abcdef01234567".into());
        for reader in [Reader::Owner, witness()] {
            let committed = changes_and_tree(dir, 10_000, reader, Some(&gone)).unwrap().0.committed.unwrap();
            assert_eq!(committed.since, DiffBase::NoCommit, "{reader:?}");
            assert!(committed.text.contains("+fn a() { committed() }"), "{reader:?}: {}", committed.text);
        }
    }

    /// A repository of its own inside the work tree (`git init plugin`) is work like any
    /// other: what its files hold is in the tree's digest (a change inside moved none) and
    /// in the changes a jury is shown (which showed its name alone).
    #[test]
    fn a_repository_inside_the_work_tree_is_digested_and_shown_whole() {
        let repo = committed_repository();
        let dir = repo.path();
        let plugin = dir.join("plugin");
        fs::create_dir(&plugin).unwrap();
        run(&plugin, &["init", "-q"]);
        fs::write(plugin.join("auth.py"), "def check(p): return verify(p)\n").unwrap();
        run(&plugin, &["add", "-A"]);
        run(&plugin, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        fs::write(plugin.join("more.py"), "def more(): pass\n").unwrap();
        let before = Tree::of(dir, &[]).unwrap().digest();
        assert_eq!(Tree::of(dir, &[]).unwrap().digest(), before, "read twice, one digest");
        fs::write(plugin.join("auth.py"), "def check(p): return True\n").unwrap();
        assert_ne!(Tree::of(dir, &[]).unwrap().digest(), before, "a change inside moves the digest");
        let shown = changes_text(dir, 10_000, Reader::Owner).unwrap();
        assert!(
            shown
                .text
                .contains("+++ b/plugin/auth.py (in the repository plugin/ of its own)\ndef check(p): return True"),
            "{}",
            shown.text
        );
        assert!(shown.text.contains("+++ b/plugin/more.py"), "{}", shown.text);
        assert_eq!(shown.cut_bytes, 0, "{}", shown.text);
    }

    #[test]
    fn a_witness_reads_the_tree_id_the_commit_gets_and_runs_nothing_the_repository_configures() {
        let (repo, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (dir, marker) = (repo.path(), elsewhere.path().join("ran"));
        assert_eq!(git_tree_id(dir, &[], witness()), None, "no repository, no tree");
        let expected = armed_repository(dir, &marker);
        fs::write(dir.join("evidence.json"), "{}").unwrap();
        let index = fs::read(dir.join(".git/index")).unwrap();
        let read = git_tree_id(&dir.join("target"), &[dir.join("evidence.json")], witness());
        assert_eq!(read.as_deref(), Some(expected.as_str()), "tracked, untracked and tracked-though-ignored files");
        assert!(!marker.exists(), "the repository's fsmonitor or clean filter ran for the witness");
        // Another user's repository is not read for the user served, whatever path led there.
        let other_user = Reader::Witness { serving: crate::files::current_uid() + 1 };
        assert_eq!(git_tree_id(dir, &[], other_user), None);
        assert_eq!(changes_text(dir, 100, other_user), None);
        assert_eq!(fs::read(dir.join(".git/index")).unwrap(), index, "the user's index is not touched");
        assert_eq!(top_of(&dir.join("target"), witness()).unwrap(), dir.canonicalize().unwrap());
    }

    /// The owner runs nothing a repository's config names either: the agent can write that
    /// config (a nested repository of its own will do), and the daemon runs outside the
    /// agent's sandbox. No fsmonitor, no clean filter (nor a filter process): each read
    /// hashes what the files hold. They all ran before.
    #[test]
    fn the_owner_runs_nothing_the_repository_configures() {
        let (repo, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (dir, marker) = (repo.path(), elsewhere.path().join("ran"));
        let expected = armed_repository(dir, &marker);
        run(dir, &["config", "filter.spied.process", &format!("sh -c 'echo ran >> {}; exit 1'", marker.display())]);
        fs::write(dir.join(".git/info/attributes"), "* filter=spy\n*.rs filter=spied\n").unwrap();
        assert_eq!(git_tree_id(dir, &[], Reader::Owner).as_deref(), Some(expected.as_str()), "what the files hold");
        let changes = changes_text(dir, 10_000, Reader::Owner).unwrap();
        assert!(changes.text.contains("+fn a() { 1 }"), "{changes:?}");
        let tree = Tree::of(dir, &[]).unwrap();
        assert!(tree.changes.contains_key("a.rs") && tree.changes.contains_key("new.rs"), "{tree:?}");
        assert!(base(dir, Reader::Owner).is_some());
        assert!(
            !marker.exists(),
            "the repository's config ran for the owner: {}",
            fs::read_to_string(&marker).unwrap()
        );
        // Nor a hook (writing the scratch index runs `post-index-change`), nor Git LFS's
        // commands (its extensions run what config names); nor is another directory read
        // as the work tree.
        let hook = dir.join(".git/hooks/post-index-change");
        fs::write(&hook, format!("#!/bin/sh\necho ran >> {}\n", marker.display())).unwrap();
        fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        run(dir, &["config", "filter.lfs.clean", &format!("sh -c 'echo ran >> {}; cat'", marker.display())]);
        fs::write(dir.join(".git/info/attributes"), "* filter=spy\n*.rs filter=lfs\n").unwrap();
        let elsewhere_tree = elsewhere.path().join("tree");
        fs::create_dir(&elsewhere_tree).unwrap();
        fs::write(elsewhere_tree.join("a.rs"), "SECRET\n").unwrap();
        run(dir, &["config", "core.worktree", elsewhere_tree.to_str().unwrap()]);
        assert_eq!(git_tree_id(dir, &[], Reader::Owner).as_deref(), Some(expected.as_str()));
        assert!(!changes_text(dir, 10_000, Reader::Owner).unwrap().text.contains("SECRET"));
        assert!(Tree::of(dir, &[]).is_some());
        assert!(!marker.exists(), "the repository's hook or Git LFS filter ran for the owner");
    }
    #[test]
    fn a_witness_reads_the_changes_against_head_and_runs_nothing_the_repository_configures() {
        let (repo, elsewhere) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (dir, marker) = (repo.path(), elsewhere.path().join("ran"));
        assert_eq!(changes_text(dir, 100, witness()), None, "no repository, no changes");
        armed_repository(dir, &marker);
        // A text conversion the owner's `git diff` would run.
        run(dir, &["config", "diff.spy.textconv", &format!("echo ran >> {}; cat", marker.display())]);
        fs::write(dir.join(".git/info/attributes"), "* filter=spy diff=spy\n").unwrap();
        let changes = changes_text(dir, 10_000, witness()).unwrap();
        assert!(!marker.exists(), "the repository's config ran for the witness");
        let text = &changes.text;
        assert!(text.contains("-fn a() {}\n+fn a() { 1 }"), "{text}");
        assert!(text.contains("+++ b/new.rs\n") && text.contains("+fn n() {}"), "an untracked file is new: {text}");
        assert!(text.contains("-tracked though ignored\n") && text.contains("+changed\n"), "{text}");
        assert!(!text.contains("built"), "an ignored file is no change: {text}");
        assert_eq!(changes.cut_bytes, 0);
        let cut = changes_text(dir, 20, witness()).unwrap();
        assert_eq!((cut.text.len(), cut.cut_bytes), (20, text.len() - 20));
        // Read together, the changes are those of the tree the id names.
        let (together, tree) = changes_and_tree(dir, 10_000, witness(), None).unwrap();
        assert_eq!((together.text.as_str(), tree), (text.as_str(), git_tree_id(dir, &[], witness())));
        // Objects borrowed from another repository are not read: no diff that could show its files.
        fs::write(dir.join(".git/objects/info/alternates"), format!("{}\n", elsewhere.path().display())).unwrap();
        assert_eq!(changes_text(dir, 10_000, witness()), None);
        fs::remove_file(dir.join(".git/objects/info/alternates")).unwrap();
        // The work tree's attributes cannot hide a change as binary.
        fs::write(dir.join(".gitattributes"), "*.rs -diff\n").unwrap();
        let hidden = changes_text(dir, 10_000, witness()).unwrap();
        assert!(hidden.text.contains("+fn a() { 1 }"), "{}", hidden.text);

        // No commit yet: every file is new.
        let fresh = tempfile::tempdir().unwrap();
        run(fresh.path(), &["init", "-q"]);
        fs::write(fresh.path().join("first.rs"), "fn first() {}\n").unwrap();
        let changes = changes_text(fresh.path(), 10_000, witness()).unwrap();
        assert!(changes.text.contains("+++ b/first.rs\n") && changes.text.contains("+fn first() {}"), "{changes:?}");
    }

    /// The witness's git reads nothing outside the work tree, though its capability would
    /// read everything: a nested `.git` naming another repository's git directory does not
    /// have git read that repository's HEAD into the tree (nor would a directory swapped for
    /// a link while git walks the tree lead it elsewhere).
    #[test]
    fn a_witness_reads_nothing_outside_the_work_tree_for_a_nested_git_that_names_another_repository() {
        let (repo, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (dir, theirs) = (repo.path(), other.path());
        run(theirs, &["init", "-q"]);
        run(theirs, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "theirs"]);
        let their_head = output(theirs, &["rev-parse", "HEAD"]);
        run(dir, &["init", "-q"]);
        fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
        fs::create_dir(dir.join("sub")).unwrap();
        fs::write(dir.join("sub/.git"), format!("gitdir: {}\n", theirs.join(".git").display())).unwrap();
        let read = changes_text(dir, 10_000, witness()).expect("the work tree is read");
        assert!(read.text.contains("+fn a() {}"), "{read:?}");
        assert!(!read.text.contains(&their_head), "their HEAD was read: {read:?}");
    }

    #[test]
    fn a_witness_hashes_what_each_file_holds_whatever_the_index_says() {
        let repo = committed_repository();
        let dir = repo.path();
        let head = output(dir, &["rev-parse", "HEAD^{tree}"]);
        // What the reviewer reads is the file; the index says it did not change.
        fs::write(dir.join("a.rs"), "fn a() { unreviewed() }\n").unwrap();
        run(dir, &["update-index", "--assume-unchanged", "a.rs"]);
        assert_eq!(git_tree_id(dir, &[], Reader::Owner).unwrap(), head, "the owner's git believes its index");
        let read = git_tree_id(dir, &[], witness()).unwrap();
        run(dir, &["update-index", "--no-assume-unchanged", "a.rs"]);
        assert_ne!(read, head);
        assert_eq!(read, git_tree_id(dir, &[], Reader::Owner).unwrap(), "the tree of what the file holds");

        // A linked worktree: its `.git` file names its git directory.
        let linked = tempfile::tempdir().unwrap();
        let linked = linked.path().join("wt");
        run(dir, &["worktree", "add", "-q", "--detach", linked.to_str().unwrap()]);
        fs::write(linked.join("b.rs"), "fn b() {}\n").unwrap();
        let owner = git_tree_id(&linked, &[], Reader::Owner).unwrap();
        assert_eq!(git_tree_id(&linked, &[], witness()), Some(owner));
    }

    /// Where a review's changes begin, as both readers tell it: no commit in a new
    /// repository (every file is shown), else the commit HEAD names, loose or packed.
    #[test]
    fn a_reviews_base_is_the_commit_head_names_or_no_commit_for_both_readers() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        assert_eq!((base(dir, Reader::Owner), base(dir, witness())), (None, None), "no repository, no base");
        run(dir, &["init", "-q"]);
        fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
        for reader in [Reader::Owner, witness()] {
            assert_eq!(base(dir, reader), Some(DiffBase::NoCommit), "{reader:?}");
            assert_eq!(changes_text(dir, 10_000, reader).unwrap().base, DiffBase::NoCommit, "{reader:?}");
        }
        run(dir, &["add", "-A"]);
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        let head = DiffBase::Commit(output(dir, &["rev-parse", "HEAD"]));
        fs::write(dir.join("a.rs"), "fn a() { 1 }\n").unwrap();
        for reader in [Reader::Owner, witness()] {
            assert_eq!(base(&dir.join("."), reader).as_ref(), Some(&head), "{reader:?}");
            assert_eq!(changes_text(dir, 10_000, reader).unwrap().base, head, "{reader:?}");
        }
        run(dir, &["pack-refs", "--all"]);
        assert_eq!(base(dir, witness()).as_ref(), Some(&head), "a packed ref");
        run(dir, &["checkout", "-q", "--orphan", "fresh"]);
        assert_eq!(
            (base(dir, Reader::Owner), base(dir, witness())),
            (Some(DiffBase::NoCommit), Some(DiffBase::NoCommit))
        );
    }

    #[test]
    fn a_commit_is_read_from_its_object_only_when_the_object_hashes_to_its_id() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        run(dir, &["init", "-q"]);
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one"]);
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "two"]);
        let (id, parent) = (output(dir, &["rev-parse", "HEAD"]), output(dir, &["rev-parse", "HEAD~1"]));
        let object = git_bytes(dir, &["cat-file", "commit", &id]).unwrap();
        let tree = output(dir, &["rev-parse", "HEAD^{tree}"]);
        assert_eq!(
            Commit::from_object(&id, &object),
            Some(Commit { id: id.clone(), tree, parents: vec![parent.clone()] })
        );
        assert_eq!(Commit::from_object(&parent, &object), None, "another commit's object");
        let mut edited = object.clone();
        *edited.last_mut().unwrap() = b'!';
        assert_eq!(Commit::from_object(&id, &edited), None, "an edited object");
        assert_eq!(Commit::from_object("HEAD", &object), None);
    }

    #[test]
    fn the_changes_a_jury_reads_are_the_diff_and_the_untracked_files_cut_to_a_limit() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        assert_eq!(changes_text(dir, 100, Reader::Owner), None, "no repository, no changes");
        run(dir, &["init", "-q"]);
        fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
        run(dir, &["add", "."]);
        let staged = changes_text(dir, 10_000, Reader::Owner).unwrap();
        assert!(staged.text.contains("+fn a() {}"), "no commit yet: the staged files: {staged:?}");
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        fs::write(dir.join("a.rs"), "fn a() { 1 }\n").unwrap();
        fs::write(dir.join("new.rs"), "fn n() {}\n").unwrap();
        let changes = changes_text(dir, 10_000, Reader::Owner).unwrap();
        assert!(changes.text.contains("-fn a() {}") && changes.text.contains("+fn a() { 1 }"), "{changes:?}");
        assert!(changes.text.contains("+++ b/new.rs (untracked)\nfn n() {}"), "{changes:?}");
        assert_eq!(changes.cut_bytes, 0);
        let cut = changes_text(dir, 20, Reader::Owner).unwrap();
        assert_eq!((cut.text.len(), cut.cut_bytes), (20, changes.text.len() - 20));
    }

    /// What the owner shows a jury is what the files hold: the repository's attributes
    /// (`* -diff` in `.git/info/attributes`, which the jury never sees) and its `textconv`
    /// cannot hide or rewrite a change, and an untracked link to a FIFO is shown as a link,
    /// not opened (which held the daemon's engine until someone wrote to the FIFO).
    #[test]
    fn the_owner_shows_the_jury_what_the_files_hold_whatever_the_repository_configures() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        run(dir, &["init", "-q"]);
        fs::write(dir.join("auth.py"), "return check(p)\n").unwrap();
        run(dir, &["add", "."]);
        run(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        fs::write(dir.join("auth.py"), "return True # BACKDOOR\n").unwrap();
        fs::write(dir.join(".git/info/attributes"), "*.py diff=clean\n").unwrap();
        run(dir, &["config", "diff.clean.textconv", "sed s/BACKDOOR/fine/"]);
        let shown = changes_text(dir, 10_000, Reader::Owner).unwrap().text;
        assert!(shown.contains("+return True # BACKDOOR"), "{shown}");
        fs::write(dir.join(".git/info/attributes"), "* -diff\n").unwrap();
        let shown = changes_text(dir, 10_000, Reader::Owner).unwrap().text;
        assert!(shown.contains("+return True # BACKDOOR") && !shown.contains("Binary files"), "{shown}");
        let fifo = dir.join("held");
        assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        std::os::unix::fs::symlink(&fifo, dir.join("notes.txt")).unwrap();
        let shown = changes_text(dir, 10_000, Reader::Owner).unwrap().text;
        assert!(
            shown.contains(&format!("+++ b/notes.txt (untracked)\n(a symbolic link to {})", fifo.display())),
            "{shown}"
        );
    }
}
