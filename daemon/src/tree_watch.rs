//! The working trees evidence records and the gate keys its decisions by, watched with
//! inotify, so that asking again about an unchanged tree costs no `git` process (a gate
//! answer from a recorded decision or a reused jury verdict should cost about a process
//! spawn: issue 12's bench; a `challenge` about as much as a status round trip: issue 11's).
//!
//! Sound because the kernel queues an event when a write happens: the queue is read, without
//! blocking, before every digest, so any change made before the hook was asked has moved its
//! tree's generation by then, and the tree is read again with `git`. The watches are in
//! place before the tree is read, so a change made while it is read moves the generation
//! too. A repository is set up again (its ignore rules read and its directories watched
//! anew) when a directory of it is moved or deleted, when its ignore rules or its config
//! change, and, while it skips ignored directories, when its index changes (a `git add -f`
//! can track a file in one). A repository too large to watch, a linked worktree or
//! submodule (its index and HEAD live elsewhere), one on a network or FUSE file system
//! (where other machines' writes raise no event), an overflowed queue or a machine without
//! inotify falls back to `git` every time.
//!
//! Not watched, because nothing written there changes what `git status` reports: object
//! and reflog storage, and directories an ignore rule matches that hold no tracked file (a
//! build's `target/`, a `node_modules/`: git never looks inside those, and they churn).
//! Lock files in `.git` are not changes either: an agent's or an editor's `git status`
//! creates and removes `index.lock` on every run (ours takes no optional locks), and a lock
//! that takes effect is renamed onto the file it guards, which is seen.
//!
//! Not seen: a change to the user's global excludes file, a write through a hard link that
//! lives outside the repository, and a write through a shared memory mapping.

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
use judged_io::worktree::{self, ChangesText, Commit, DiffBase, Reader, ReviewedTree, Tree, work_tree_git as git};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Directories watched at most; past that a repository's tree is read with `git` every
/// time (inotify watches are the user's too: an editor needs them).
const MAX_WATCHES: usize = 20_000;
/// Repositories watched at most; the one asked about least recently makes room for a new
/// one (a daemon serves every project its user works on, over weeks).
const MAX_REPOS: usize = 64;
/// Directories whose writes do not change what `git status` reports (object and reflog
/// storage); refs, the index and HEAD are watched.
const UNWATCHED: &[&str] = &[".git/objects", ".git/logs", ".git/lfs"];
/// File systems where a write made elsewhere raises no inotify event here: NFS, SMB/CIFS,
/// 9p, FUSE (virtiofs, sshfs, WSL's drives), Ceph, AFS.
const REMOTE_FILE_SYSTEMS: &[u64] =
    &[0x6969, 0x517b, 0xff53_4d42, 0xfe53_4d42, 0x0102_1997, 0x6573_5546, 0x00c3_6400, 0x5346_414f];

/// One repository: its generation, and the tree read at some generation.
#[derive(Default)]
struct Repo {
    /// When it was last asked about (a count of questions).
    asked: u64,
    generation: u64,
    tree: Option<(u64, Tree)>,
    /// Too large to watch, or a watch could not be added: always `git`.
    unwatched: bool,
    /// The directories an ignore rule matches that hold no tracked file, not watched.
    ignored: HashSet<PathBuf>,
}

/// What a jury is shown of a work tree ([`TreeWatch::shown`]).
pub struct Shown {
    /// The changes, when the tree could be read.
    pub changes: Option<ChangesText>,
    /// The git id of the tree they show and the commit they are against, when it held
    /// still while they were read and they were shown whole.
    pub git_tree: Option<ReviewedTree>,
    /// Whether the tree was the one asked about all along.
    pub held_still: bool,
}

/// The watched trees, and every read of a repository the daemon makes: a witness
/// account's reads only tree ids and commits, and runs nothing of the repository's.
pub struct TreeWatch {
    reader: Reader,
    inotify: Option<Inotify>,
    repos: HashMap<PathBuf, Repo>,
    /// Each watch's directory, by repository: a directory can be in two (a repository
    /// nested in another), and the kernel gives it one watch.
    watches: HashMap<WatchDescriptor, Vec<(PathBuf, PathBuf)>>,
    buffer: Vec<u8>,
    /// Questions asked so far, to tell which repository was asked about least recently.
    questions: u64,
    /// Trees read with `git`, for the tests to tell a cached answer from a new one.
    #[cfg(test)]
    computed: usize,
}

impl TreeWatch {
    /// The trees `reader` reads.
    pub fn new(reader: Reader) -> TreeWatch {
        TreeWatch {
            reader,
            inotify: Inotify::init().ok(),
            repos: HashMap::new(),
            watches: HashMap::new(),
            buffer: vec![0; 64 * 1024],
            questions: 0,
            #[cfg(test)]
            computed: 0,
        }
    }
}

fn mask() -> WatchMask {
    WatchMask::MODIFY
        | WatchMask::CLOSE_WRITE
        | WatchMask::ATTRIB
        | WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::EXCL_UNLINK
}

/// The directories at or under `under` (in `top`'s work tree) an ignore rule matches
/// (`!! dir/`) and that hold no tracked file; none when git cannot say.
fn ignored_dirs(top: &Path, under: &Path) -> Option<HashSet<PathBuf>> {
    let under = under.to_str()?;
    let args = [
        "status",
        "--porcelain",
        "-z",
        "--ignored=matching",
        "--untracked-files=normal",
        "--ignore-submodules=dirty",
        "--",
        under,
    ];
    let listed = String::from_utf8(git(top, &args)?).ok()?;
    let mut dirs: HashSet<PathBuf> = listed
        .split('\0')
        .filter_map(|entry| entry.strip_prefix("!! ")?.strip_suffix('/'))
        .map(|d| top.join(d))
        .collect();
    if dirs.is_empty() {
        return Some(dirs);
    }
    // A file tracked inside an ignored directory (`git add -f`) is reported like any other.
    let mut args = vec!["ls-files", "-z", "--"];
    let named: Vec<String> = dirs.iter().filter_map(|d| d.to_str().map(str::to_owned)).collect();
    args.extend(named.iter().map(String::as_str));
    let tracked = String::from_utf8(git(top, &args)?).ok()?;
    for file in tracked.split('\0').filter(|f| !f.is_empty()) {
        let file = top.join(file);
        dirs.retain(|dir| !file.starts_with(dir));
    }
    Some(dirs)
}

/// Whether `top`'s file system raises inotify events for every write to it.
fn is_local(top: &Path) -> bool {
    let kind = rustix::fs::statfs(top).map(|s| s.f_type as u64);
    kind.is_ok_and(|kind| !REMOTE_FILE_SYSTEMS.contains(&kind))
}

/// Whether a change to `name` in `dir` calls for setting `top` up again: its ignore rules
/// or its config changed, or, while it skips ignored directories, its index.
fn sets_up_again(top: &Path, dir: &Path, name: &std::ffi::OsStr, skips_ignored: bool) -> bool {
    let git_dir = top.join(".git");
    name == ".gitignore"
        || (dir == git_dir.join("info") && name == "exclude")
        || (dir == git_dir && (name == "config" || (skips_ignored && name == "index")))
}

impl TreeWatch {
    /// The digest of the tree of the repository holding `dir`, as `Tree::of(dir, &[])`
    /// gives it; `None` outside a repository. A witness account's is the git tree id
    /// (every file hashed again: it keeps no status of a served user's tree).
    pub fn digest(&mut self, dir: &Path) -> Option<String> {
        match self.reader {
            Reader::Owner => self.tree(dir, &[]).map(|tree| tree.digest()),
            Reader::Witness { .. } => self.git_tree_id(dir, &[]),
        }
    }

    /// Read the tree of the repository holding `dir` again at the next question, whatever
    /// the watcher heard: a write through a hard link from outside the repository (or the
    /// link itself) raises no event in it, so a status kept since could be of a tree that is
    /// no longer there. What a gate's answer rests on is read so.
    pub fn read_again(&mut self, dir: &Path) {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let top = dir.ancestors().find(|d| self.repos.contains_key(*d)).map(Path::to_path_buf);
        if let Some(repo) = top.and_then(|top| self.repos.get_mut(&top)) {
            repo.tree = None;
        }
    }

    /// Who reads the trees.
    pub fn reader(&self) -> Reader {
        self.reader
    }

    /// Read for `uid` from now on: a witness reads only that user's repositories.
    pub fn serve(&mut self, uid: u32) {
        if let Reader::Witness { serving } = &mut self.reader {
            *serving = uid;
        }
    }

    /// The tree of the repository holding `dir` but for the `excluded` paths, as
    /// `Tree::of(dir, excluded)` gives it; `None` outside a repository, and for a witness
    /// account (`git status` runs the repository's config).
    pub fn tree(&mut self, dir: &Path, excluded: &[PathBuf]) -> Option<Tree> {
        if self.reader != Reader::Owner {
            return None;
        }
        // One repository under two names (a symlink, a cwd as the host spelled it) is one.
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let top = dir.ancestors().find(|d| d.join(".git").exists())?.to_path_buf();
        self.drain();
        if !self.repos.contains_key(&top) {
            if self.repos.len() >= MAX_REPOS {
                self.forget_least_recent();
            }
            let repo = self.set_up(&top);
            self.repos.insert(top.clone(), repo);
        }
        self.questions += 1;
        let repo = self.repos.get_mut(&top).expect("inserted above");
        repo.asked = self.questions;
        if let Some((generation, tree)) = &repo.tree
            && !repo.unwatched
            && *generation == repo.generation
        {
            return Some(tree.without(&top, excluded));
        }
        let generation = repo.generation;
        let tree = Tree::of(&top, &[])?;
        #[cfg(test)]
        {
            self.computed += 1;
        }
        let without = tree.without(&top, excluded);
        if let Some(repo) = self.repos.get_mut(&top) {
            repo.tree = Some((generation, tree));
        }
        Some(without)
    }

    /// The top of the work tree holding `dir`.
    pub fn top(&self, dir: &Path) -> Option<PathBuf> {
        worktree::top_of(dir, self.reader)
    }

    /// The git tree id of the work tree holding `dir`, but for `excluded`
    /// ([`worktree::git_tree_id`]).
    pub fn git_tree_id(&self, dir: &Path, excluded: &[PathBuf]) -> Option<String> {
        worktree::git_tree_id(dir, excluded, self.reader)
    }

    /// What a review of the work tree holding `dir` begins on ([`worktree::base`]).
    pub fn base(&self, dir: &Path) -> Option<DiffBase> {
        worktree::base(dir, self.reader)
    }

    /// The changes of the work tree holding `dir` as text for a jury.
    pub fn changes_text(&self, dir: &Path, limit: usize) -> Option<ChangesText> {
        worktree::changes_text(dir, limit, self.reader)
    }

    /// What a jury is shown of the work tree holding `dir`, asked about while its digest
    /// was `before`: its changes (from `since`, the commit a session began on, when given,
    /// else from HEAD), and the git id of the tree they show unless the tree moved while
    /// they were read (a verdict on them then covers no git tree).
    pub fn shown(&mut self, dir: &Path, limit: usize, before: &str, since: Option<&DiffBase>) -> Shown {
        let (changes, read) = match worktree::changes_and_tree(dir, limit, self.reader, since) {
            Some((changes, tree)) => (Some(changes), tree),
            None => (None, None),
        };
        let held_still = match self.reader {
            // The owner's digest is its status, read again after the changes.
            Reader::Owner => self.digest(dir).as_deref() == Some(before),
            // The witness's digest is the tree id, and the changes are of the tree it read.
            Reader::Witness { .. } => read.as_deref() == Some(before),
        };
        // Changes shown in part (cut at the limit, a file shown by a stand-in) were not all
        // reviewed: a verdict on them covers no tree.
        let whole = changes.as_ref().filter(|changes| changes.cut_bytes == 0);
        let git_tree =
            read.filter(|_| held_still).zip(whole).map(|(id, changes)| ReviewedTree { id, base: changes.base.clone() });
        Shown { changes, git_tree, held_still }
    }

    /// The commit `id` of the repository at `top`, read there; none for a witness account.
    pub fn commit(&self, top: &Path, id: &str) -> Option<Commit> {
        (self.reader == Reader::Owner).then(|| worktree::commit(top, id)).flatten()
    }

    /// Watch a repository not watched yet: every directory but the unwatched ones.
    fn set_up(&mut self, top: &Path) -> Repo {
        let mut repo = Repo::default();
        // A linked worktree or a submodule has a `.git` file: its index is elsewhere.
        let watched = top.join(".git").is_dir()
            && is_local(top)
            && ignored_dirs(top, top).is_some_and(|ignored| {
                repo.ignored = ignored;
                self.watch_from(top, top, &repo.ignored)
            });
        if !watched {
            self.unwatch(top);
            repo.unwatched = true;
        }
        repo
    }

    /// Watch `dir` and every directory below it but the unwatched ones; false when a
    /// watch cannot be added or there would be too many.
    fn watch_from(&mut self, top: &Path, dir: &Path, ignored: &HashSet<PathBuf>) -> bool {
        let mut directories = vec![dir.to_path_buf()];
        while let Some(dir) = directories.pop() {
            if self.watches.len() >= MAX_WATCHES || !self.watch_dir(top, &dir) {
                return false;
            }
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                let skipped = ignored.contains(&path) || UNWATCHED.iter().any(|u| path == top.join(u));
                if !skipped && entry.file_type().is_ok_and(|t| t.is_dir()) {
                    directories.push(path);
                }
            }
        }
        true
    }

    /// Watch one directory for `top`; a directory gone already (made and removed between
    /// two questions) needs none. False when a watch cannot be added.
    fn watch_dir(&mut self, top: &Path, dir: &Path) -> bool {
        let Some(inotify) = &mut self.inotify else { return false };
        match inotify.watches().add(dir, mask()) {
            Ok(wd) => {
                let owners = self.watches.entry(wd).or_default();
                if !owners.iter().any(|(t, _)| t == top) {
                    owners.push((top.to_path_buf(), dir.to_path_buf()));
                }
                true
            }
            Err(error) => error.kind() == std::io::ErrorKind::NotFound,
        }
    }

    /// Stop watching the repository asked about least recently.
    fn forget_least_recent(&mut self) {
        let oldest = self.repos.iter().min_by_key(|(_, repo)| repo.asked).map(|(top, _)| top.clone());
        if let Some(top) = oldest {
            self.unwatch(&top);
            self.repos.remove(&top);
        }
    }

    /// Remove every watch of `top`, but those another repository shares.
    fn unwatch(&mut self, top: &Path) {
        let Some(inotify) = &mut self.inotify else { return };
        let mut unused = Vec::new();
        for (wd, owners) in &mut self.watches {
            owners.retain(|(t, _)| t != top);
            if owners.is_empty() {
                unused.push(wd.clone());
            }
        }
        for wd in unused {
            self.watches.remove(&wd);
            // Gone already when its directory was removed.
            let _ = inotify.watches().remove(wd);
        }
    }

    /// Read every queued event: each moves its repositories' generations; a new directory
    /// is watched too, and a repository is set up again as the module doc says.
    fn drain(&mut self) {
        let mut moved: Vec<PathBuf> = Vec::new();
        let mut new_dirs: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut set_up_again: Vec<PathBuf> = Vec::new();
        let mut overflowed = false;
        loop {
            let Some(inotify) = &mut self.inotify else { return };
            let Ok(events) = inotify.read_events(&mut self.buffer) else { break };
            let mut any = false;
            for event in events {
                any = true;
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    overflowed = true;
                    continue;
                }
                if event.mask.contains(EventMask::IGNORED) {
                    self.watches.remove(&event.wd);
                    continue;
                }
                for (top, dir) in self.watches.get(&event.wd).into_iter().flatten() {
                    if event.mask.intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF) {
                        set_up_again.push(top.clone());
                    }
                    if let Some(name) = event.name {
                        if dir.starts_with(top.join(".git")) && name.as_encoded_bytes().ends_with(b".lock") {
                            continue;
                        }
                        let skips_ignored = self.repos.get(top).is_some_and(|r| !r.ignored.is_empty());
                        if sets_up_again(top, dir, name, skips_ignored) {
                            set_up_again.push(top.clone());
                        } else if event.mask.contains(EventMask::ISDIR)
                            && event.mask.intersects(EventMask::CREATE | EventMask::MOVED_TO)
                        {
                            new_dirs.push((top.clone(), dir.join(name)));
                        }
                    }
                    moved.push(top.clone());
                }
            }
            if !any {
                break;
            }
        }
        for top in moved {
            if let Some(repo) = self.repos.get_mut(&top) {
                repo.generation += 1;
            }
        }
        if overflowed {
            // Events were lost: nothing cached or watched can be trusted.
            set_up_again = self.repos.keys().cloned().collect();
        }
        for top in &set_up_again {
            self.unwatch(top);
            self.repos.remove(top);
        }
        for (top, dir) in new_dirs {
            if !set_up_again.contains(&top) {
                self.watch_new_dir(&top, &dir);
            }
        }
    }

    /// Watch a directory that appeared in `top` and everything under it, but what an
    /// ignore rule matches.
    fn watch_new_dir(&mut self, top: &Path, dir: &Path) {
        let Some(repo) = self.repos.get_mut(top) else { return };
        if repo.unwatched || UNWATCHED.iter().any(|u| dir == top.join(u)) {
            return;
        }
        let mut ignored = std::mem::take(&mut repo.ignored);
        let watched = if dir.starts_with(top.join(".git")) {
            self.watch_from(top, dir, &ignored)
        } else {
            match ignored_dirs(top, dir) {
                Some(found) => {
                    ignored.extend(found);
                    ignored.contains(dir) || self.watch_from(top, dir, &ignored)
                }
                None => !dir.exists(),
            }
        };
        if let Some(repo) = self.repos.get_mut(top) {
            repo.ignored = ignored;
            repo.unwatched |= !watched;
        }
        if !watched {
            self.unwatch(top);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        assert!(Command::new("git").arg("-C").arg(dir).args(args).output().unwrap().status.success(), "git {args:?}");
    }

    /// A repository whose one commit holds `a.rs`.
    fn committed_repository() -> tempfile::TempDir {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        git(dir, &["init", "-q"]);
        fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
        git(dir, &["add", "."]);
        git(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        repo
    }

    /// What a jury is shown names its tree only when it is shown whole: changes cut at the
    /// limit, or a file too large to show, leave the verdict covering no tree (it covered
    /// one before, a file it never saw among its contents).
    #[test]
    fn changes_shown_in_part_name_no_tree() {
        let repo = committed_repository();
        let dir = repo.path();
        fs::write(dir.join("a.rs"), "fn a() { 1 }\n").unwrap();
        let mut trees = TreeWatch::new(Reader::Owner);
        let before = trees.digest(dir).unwrap();
        let whole = trees.shown(dir, 10_000, &before, None);
        assert!(whole.held_still && whole.git_tree.is_some(), "{:?}", whole.changes);
        fs::write(dir.join("blob.rs"), "x".repeat(20_000)).unwrap();
        let before = trees.digest(dir).unwrap();
        let large = trees.shown(dir, 10_000, &before, None);
        let changes = large.changes.as_ref().unwrap();
        assert!(changes.text.contains("(larger than can be shown)") && changes.cut_bytes >= 20_000, "{changes:?}");
        assert!(large.held_still && large.git_tree.is_none(), "a file the jury never saw");
        let cut = trees.shown(dir, 40, &before, None);
        assert!(cut.changes.as_ref().unwrap().cut_bytes > 0 && cut.git_tree.is_none());
    }

    /// Every kind of change moves the digest, as `git` would tell it, and an unchanged
    /// tree is answered from the watch.
    #[test]
    fn the_watched_digest_follows_every_change_git_would_show() {
        let repo = committed_repository();
        let dir = repo.path();
        let mut trees = TreeWatch::new(Reader::Owner);
        let truth = || Tree::of(dir, &[]).unwrap().digest();
        assert_eq!(trees.digest(dir), Some(truth()));
        assert_eq!(trees.digest(&dir.join("sub-not-there")), Some(truth()), "any dir inside the repository");
        let changes: Vec<Box<dyn Fn()>> = vec![
            Box::new(|| fs::write(dir.join("a.rs"), "fn a() { 1 }\n").unwrap()),
            Box::new(|| fs::write(dir.join("new.rs"), "fn n() {}\n").unwrap()),
            Box::new(|| {
                fs::create_dir(dir.join("nested")).unwrap();
                fs::write(dir.join("nested/deep.rs"), "x").unwrap();
            }),
            Box::new(|| fs::write(dir.join("nested/deep.rs"), "y").unwrap()),
            Box::new(|| git(dir, &["add", "."])),
            Box::new(|| git(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two"])),
            Box::new(|| fs::remove_file(dir.join("new.rs")).unwrap()),
        ];
        for (n, change) in changes.iter().enumerate() {
            change();
            let before = trees.computed;
            assert_eq!(trees.digest(dir), Some(truth()), "after change {n}");
            assert!(trees.computed > before, "change {n} is seen, not answered from the watch");
            // `git status` may refresh the index once; after that the tree is quiet.
            trees.digest(dir);
            let settled = trees.computed;
            assert_eq!(trees.digest(dir), Some(truth()), "again after change {n}");
            assert_eq!(trees.computed, settled, "an unchanged tree after change {n} costs no `git`");
        }
        // Past git's racy-timestamp second, a plain `git status` only takes and drops the
        // index lock: no change.
        std::thread::sleep(std::time::Duration::from_millis(1100));
        git(dir, &["status", "--porcelain"]);
        trees.digest(dir);
        let settled = trees.computed;
        git(dir, &["status", "--porcelain"]);
        assert_eq!(trees.digest(dir), Some(truth()));
        assert_eq!(trees.computed, settled, "another tool's `git status` is not a change");
        let outside = tempfile::tempdir().unwrap();
        assert_eq!(trees.digest(outside.path()), None, "no repository, no tree");
    }

    /// A linked worktree keeps its index and HEAD in the main repository's `.git`: its
    /// tree is read with `git` every time, so a commit there is never missed.
    #[test]
    fn a_linked_worktree_is_read_with_git_every_time() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path().join("main");
        fs::create_dir(&dir).unwrap();
        git(&dir, &["init", "-q"]);
        fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
        git(&dir, &["add", "."]);
        git(&dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        let linked = repo.path().join("linked");
        git(&dir, &["worktree", "add", "-q", linked.to_str().unwrap()]);
        let mut trees = TreeWatch::new(Reader::Owner);
        let first = trees.digest(&linked);
        let before = trees.computed;
        fs::write(linked.join("b.rs"), "x").unwrap();
        git(&linked, &["add", "."]);
        git(&linked, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two"]);
        assert_eq!(trees.digest(&linked), Some(Tree::of(&linked, &[]).unwrap().digest()));
        assert_ne!(trees.digest(&linked), first, "the commit moved HEAD");
        assert!(trees.computed > before + 1, "read with `git` each time");
    }

    /// What git ignores is not watched, so a build's churn costs no `git`; once the rule
    /// is gone, the directory counts again.
    #[test]
    fn ignored_directories_are_not_watched_until_the_rule_goes() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        git(dir, &["init", "-q"]);
        fs::write(dir.join(".gitignore"), "target/\n").unwrap();
        fs::create_dir_all(dir.join("target/debug")).unwrap();
        git(dir, &["add", "."]);
        git(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        let mut trees = TreeWatch::new(Reader::Owner);
        let truth = || Tree::of(dir, &[]).unwrap().digest();
        assert_eq!(trees.digest(dir), Some(truth()));
        trees.digest(dir);
        let settled = trees.computed;
        fs::write(dir.join("target/debug/app"), "binary").unwrap();
        fs::create_dir_all(dir.join("target/debug/deps/x")).unwrap();
        fs::write(dir.join("target/debug/deps/x/lib.rlib"), "rlib").unwrap();
        assert_eq!(trees.digest(dir), Some(truth()));
        assert_eq!(trees.computed, settled, "writes in an ignored directory cost no `git`");
        // A new ignored directory elsewhere: one `git check-ignore`, then quiet.
        fs::write(dir.join(".gitignore"), "target/\nbuild/\n").unwrap();
        assert_eq!(trees.digest(dir), Some(truth()), "a changed .gitignore is a change");
        fs::create_dir_all(dir.join("sub/build")).unwrap();
        trees.digest(dir);
        let settled = trees.computed;
        fs::write(dir.join("sub/build/out.o"), "o").unwrap();
        assert_eq!(trees.digest(dir), Some(truth()));
        assert_eq!(trees.computed, settled, "a new ignored directory is not watched");
        // The rule goes: `target/` holds work now, and a write there is seen.
        fs::write(dir.join(".gitignore"), "build/\n").unwrap();
        assert_eq!(trees.digest(dir), Some(truth()));
        fs::write(dir.join("target/debug/app"), "another binary").unwrap();
        assert_eq!(trees.digest(dir), Some(truth()), "a write in a directory no longer ignored is seen");
    }

    fn repository(dir: &Path) {
        fs::create_dir_all(dir).unwrap();
        git(dir, &["init", "-q"]);
        fs::write(dir.join("a.rs"), "a").unwrap();
        git(dir, &["add", "."]);
        git(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
    }

    fn truth(dir: &Path) -> Option<String> {
        Tree::of(dir, &[]).map(|t| t.digest())
    }

    /// Ask a few times, so that whatever the last change set off has been drained.
    fn settle(trees: &mut TreeWatch, dir: &Path) {
        for _ in 0..3 {
            trees.digest(dir);
        }
    }

    /// The ways a cached tree could go stale that a review found (each failed before its
    /// fix): the watch agrees with `git` after every one of them.
    #[test]
    fn the_watched_tree_survives_what_a_review_tried() {
        // The file is force-added once the watch is set up, or was tracked before it.
        for (what, tracked_before) in [("force-added later", false), ("tracked before", true)] {
            let root = tempfile::tempdir().unwrap();
            let d = root.path().join("r");
            repository(&d);
            fs::write(d.join(".gitignore"), "target/\n").unwrap();
            fs::create_dir(d.join("target")).unwrap();
            fs::write(d.join("target/gen.rs"), "1").unwrap();
            git(&d, &["add", ".gitignore"]);
            if tracked_before {
                git(&d, &["add", "-f", "target/gen.rs"]);
            }
            let mut trees = TreeWatch::new(Reader::Owner);
            settle(&mut trees, &d);
            git(&d, &["add", "-f", "target/gen.rs"]);
            settle(&mut trees, &d);
            assert_eq!(trees.digest(&d), truth(&d), "{what}");
            fs::write(d.join("target/gen.rs"), "2 changed").unwrap();
            assert_eq!(trees.digest(&d), truth(&d), "{what}: an edit of the tracked file");
        }
    }

    #[test]
    fn a_nested_repository_and_a_second_name_share_watches_without_losing_them() {
        let root = tempfile::tempdir().unwrap();
        let outer = root.path().join("outer");
        repository(&outer);
        let inner = outer.join("vendor/inner");
        repository(&inner);
        let alias = root.path().join("alias");
        std::os::unix::fs::symlink(&outer, &alias).unwrap();
        let mut trees = TreeWatch::new(Reader::Owner);
        settle(&mut trees, &inner);
        settle(&mut trees, &outer);
        settle(&mut trees, &alias);
        fs::write(inner.join("a.rs"), "changed").unwrap();
        assert_eq!(trees.digest(&inner), truth(&inner), "the inner repository, set up first");
        fs::write(outer.join("a.rs"), "changed").unwrap();
        assert_eq!(trees.digest(&outer), truth(&outer), "the outer one");
        fs::write(outer.join("a.rs"), "changed again").unwrap();
        assert_eq!(trees.digest(&alias), truth(&outer), "the outer one by its other name");
    }

    #[test]
    fn a_repository_replaced_at_its_path_is_watched_anew() {
        for replace in ["remove", "move away"] {
            let root = tempfile::tempdir().unwrap();
            let d = root.path().join("r");
            repository(&d);
            let mut trees = TreeWatch::new(Reader::Owner);
            settle(&mut trees, &d);
            match replace {
                "remove" => fs::remove_dir_all(&d).unwrap(),
                _ => fs::rename(&d, root.path().join("r.old")).unwrap(),
            }
            repository(&d);
            settle(&mut trees, &d);
            assert_eq!(trees.digest(&d), truth(&d), "{replace}");
            fs::write(d.join("a.rs"), "changed").unwrap();
            assert_eq!(trees.digest(&d), truth(&d), "{replace}: an edit in the new repository");
        }
    }

    #[test]
    fn renames_config_and_symlinks_are_followed_as_git_sees_them() {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("r");
        repository(&d);
        // A rule anchored to a path: renaming its parent un-ignores the directory.
        fs::write(d.join(".gitignore"), "/a/build/\n").unwrap();
        fs::create_dir_all(d.join("a/build")).unwrap();
        fs::write(d.join("a/build/o.rs"), "1").unwrap();
        // An excludes file named in the repository's config.
        let excludes = root.path().join("ignore");
        fs::write(&excludes, "gen/\n").unwrap();
        git(&d, &["config", "core.excludesFile", excludes.to_str().unwrap()]);
        fs::create_dir(d.join("gen")).unwrap();
        fs::write(d.join("gen/x.rs"), "1").unwrap();
        // A symlink to a file outside: git sees the link, not what it points at.
        let outside = root.path().join("payload.rs");
        fs::write(&outside, "1").unwrap();
        std::os::unix::fs::symlink(&outside, d.join("link.rs")).unwrap();
        let mut trees = TreeWatch::new(Reader::Owner);
        settle(&mut trees, &d);
        fs::rename(d.join("a"), d.join("b")).unwrap();
        settle(&mut trees, &d);
        fs::write(d.join("b/build/o.rs"), "2 changed").unwrap();
        assert_eq!(trees.digest(&d), truth(&d), "a write in the renamed, no longer ignored directory");
        git(&d, &["config", "--unset", "core.excludesFile"]);
        settle(&mut trees, &d);
        fs::write(d.join("gen/x.rs"), "2 changed").unwrap();
        assert_eq!(trees.digest(&d), truth(&d), "a write in the directory the config no longer ignores");
        fs::write(&outside, "2 changed").unwrap();
        assert_eq!(trees.digest(&d), truth(&d), "the symlink's target is not the tree");
    }

    /// A directory made and removed between two questions leaves the repository watched.
    #[test]
    fn a_directory_gone_before_its_watch_is_no_failure() {
        let root = tempfile::tempdir().unwrap();
        let d = root.path().join("r");
        repository(&d);
        let mut trees = TreeWatch::new(Reader::Owner);
        settle(&mut trees, &d);
        fs::create_dir(d.join("tmpdir")).unwrap();
        fs::remove_dir(d.join("tmpdir")).unwrap();
        settle(&mut trees, &d);
        let settled = trees.computed;
        trees.digest(&d);
        assert_eq!(trees.computed, settled, "still answered from the watch");
    }

    /// Past `MAX_REPOS`, the repository asked about least recently is no longer watched,
    /// and asking about it again sets it up anew.
    #[test]
    fn the_least_recently_asked_repository_makes_room() {
        let root = tempfile::tempdir().unwrap();
        let first = root.path().join("first");
        repository(&first);
        let mut trees = TreeWatch::new(Reader::Owner);
        settle(&mut trees, &first);
        for n in 0..MAX_REPOS {
            let other = root.path().join(format!("r{n}"));
            fs::create_dir_all(other.join(".git")).unwrap();
            trees.repos.insert(other, Repo { asked: n as u64 + 1, ..Repo::default() });
        }
        trees.repos.get_mut(&first.canonicalize().unwrap()).unwrap().asked = 0;
        let newest = root.path().join("newest");
        repository(&newest);
        assert_eq!(trees.digest(&newest), truth(&newest));
        assert!(!trees.repos.contains_key(&first.canonicalize().unwrap()), "the least recent went");
        assert!(trees.watches.values().flatten().all(|(top, _)| top != &first.canonicalize().unwrap()));
        fs::write(first.join("a.rs"), "changed").unwrap();
        assert_eq!(trees.digest(&first), truth(&first), "asked again, it is set up anew");
    }
}
