//! The working trees evidence records and the gate keys its decisions by, watched with
//! inotify, so that asking again about an unchanged tree costs no `git` process (a gate
//! answer from a recorded decision or a reused jury verdict should cost about a process
//! spawn: issue 12's bench; a `challenge` about as much as a status round trip: issue 11's).
//!
//! Sound because the kernel queues an event when a write happens: the queue is read, without
//! blocking, before every digest, so any change made before the hook was asked has moved its
//! tree's generation by then, and the digest is computed again with `git`. The watches are
//! in place before a digest is computed, so a change made while it is computed moves the
//! generation too. A repository too large to watch, a linked worktree or submodule (its
//! index and HEAD live elsewhere), an overflowed queue or a machine without inotify falls
//! back to `git` every time.
//!
//! Not watched, because nothing written there changes what `git status` reports: object
//! and reflog storage, and directories an ignore rule matches (a build's `target/`, a
//! `node_modules/`: git never looks inside those, and they churn). A changed `.gitignore`
//! or `.git/info/exclude` sets the repository's watches up again. (A change to the user's
//! global excludes file is not seen.) Lock files in `.git` are not changes either: an
//! agent's or an editor's `git status` creates and removes `index.lock` on every run (ours
//! takes no optional locks), and a lock that takes effect is renamed onto the file it
//! guards, which is seen.

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
use judged_core::worktree::Tree;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Directories watched at most; past that a repository's tree is read with `git` every
/// time (inotify watches are the user's too: an editor needs them).
const MAX_WATCHES: usize = 20_000;
/// Directories whose writes do not change what `git status` reports (object and reflog
/// storage); refs, the index and HEAD are watched.
const UNWATCHED: &[&str] = &[".git/objects", ".git/logs", ".git/lfs"];

/// One repository: its generation, and the tree read at some generation.
#[derive(Default)]
struct Repo {
    generation: u64,
    tree: Option<(u64, Tree)>,
    /// Too large to watch, or a watch could not be added: always `git`.
    unwatched: bool,
    /// The directories an ignore rule matches, not watched.
    ignored: HashSet<PathBuf>,
}

/// The watched trees.
pub struct TreeWatch {
    inotify: Option<Inotify>,
    repos: HashMap<PathBuf, Repo>,
    /// Each watch's repository and directory.
    watches: HashMap<WatchDescriptor, (PathBuf, PathBuf)>,
    buffer: Vec<u8>,
    /// Digests computed with `git`, for the tests to tell a cached answer from a new one.
    #[cfg(test)]
    computed: usize,
}

impl Default for TreeWatch {
    fn default() -> TreeWatch {
        TreeWatch {
            inotify: Inotify::init().ok(),
            repos: HashMap::new(),
            watches: HashMap::new(),
            buffer: vec![0; 64 * 1024],
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

/// Run `git` in `top` without taking optional locks, paths taken as they are (a directory
/// may be named `[a]`); its output, when it ran.
fn git(top: &Path, args: &[&str]) -> Option<std::process::Output> {
    let mut command = Command::new("git");
    command.arg("-C").arg(top).args(args).env("GIT_OPTIONAL_LOCKS", "0").env("GIT_LITERAL_PATHSPECS", "1");
    command.output().ok()
}

/// The directories at or under `under` (in `top`'s work tree) an ignore rule matches
/// (`!! dir/`); none when git cannot say.
fn ignored_dirs(top: &Path, under: &Path) -> Option<HashSet<PathBuf>> {
    let under = under.to_str()?;
    let args = ["status", "--porcelain", "-z", "--ignored=matching", "--untracked-files=normal", "--", under];
    let output = git(top, &args)?;
    if !output.status.success() {
        return None;
    }
    let listed = String::from_utf8_lossy(&output.stdout).into_owned();
    let dirs = listed.split('\0').filter_map(|entry| entry.strip_prefix("!! ")?.strip_suffix('/'));
    Some(dirs.map(|dir| top.join(dir)).collect())
}

/// Whether a change to `name` in `dir` changes `top`'s ignore rules.
fn changes_ignore_rules(top: &Path, dir: &Path, name: &std::ffi::OsStr) -> bool {
    name == ".gitignore" || (name == "exclude" && dir == top.join(".git/info"))
}

impl TreeWatch {
    /// The digest of the tree of the repository holding `dir`, as `Tree::of(dir, &[])`
    /// gives it; `None` outside a repository.
    pub fn digest(&mut self, dir: &Path) -> Option<String> {
        self.tree(dir, &[]).map(|tree| tree.digest())
    }

    /// The tree of the repository holding `dir` but for the `excluded` paths, as
    /// `Tree::of(dir, excluded)` gives it; `None` outside a repository.
    pub fn tree(&mut self, dir: &Path, excluded: &[PathBuf]) -> Option<Tree> {
        let top = dir.ancestors().find(|d| d.join(".git").exists())?.to_path_buf();
        self.drain();
        if !self.repos.contains_key(&top) {
            let repo = self.set_up(&top);
            self.repos.insert(top.clone(), repo);
        }
        let repo = self.repos.get(&top).expect("inserted above");
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

    /// Watch a repository not watched yet: every directory but the unwatched ones.
    fn set_up(&mut self, top: &Path) -> Repo {
        let mut repo = Repo::default();
        // A linked worktree or a submodule has a `.git` file: its index is elsewhere.
        let watched = top.join(".git").is_dir()
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

    fn watch_dir(&mut self, top: &Path, dir: &Path) -> bool {
        let Some(inotify) = &mut self.inotify else { return false };
        match inotify.watches().add(dir, mask()) {
            Ok(wd) => {
                self.watches.insert(wd, (top.to_path_buf(), dir.to_path_buf()));
                true
            }
            Err(_) => false,
        }
    }

    /// Remove every watch of `top`.
    fn unwatch(&mut self, top: &Path) {
        let Some(inotify) = &mut self.inotify else { return };
        let mine: Vec<WatchDescriptor> =
            self.watches.iter().filter(|(_, (t, _))| t == top).map(|(wd, _)| wd.clone()).collect();
        for wd in mine {
            self.watches.remove(&wd);
            // Gone already when its directory was removed.
            let _ = inotify.watches().remove(wd);
        }
    }

    /// Read every queued event: each moves its repository's generation; a new directory
    /// is watched too, and changed ignore rules set the repository up again.
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
                let Some((top, dir)) = self.watches.get(&event.wd) else { continue };
                if event.mask.contains(EventMask::IGNORED) {
                    self.watches.remove(&event.wd);
                    continue;
                }
                let in_git_dir = dir.starts_with(top.join(".git"));
                if let Some(name) = event.name {
                    if in_git_dir && name.as_encoded_bytes().ends_with(b".lock") {
                        continue;
                    }
                    if changes_ignore_rules(top, dir, name) {
                        set_up_again.push(top.clone());
                    } else if event.mask.contains(EventMask::ISDIR)
                        && event.mask.intersects(EventMask::CREATE | EventMask::MOVED_TO)
                    {
                        new_dirs.push((top.clone(), dir.join(name)));
                    }
                }
                moved.push(top.clone());
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
        for top in set_up_again {
            self.unwatch(&top);
            self.repos.remove(&top);
        }
        for (top, dir) in new_dirs {
            self.watch_new_dir(&top, &dir);
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
                None => false,
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

    /// Every kind of change moves the digest, as `git` would tell it, and an unchanged
    /// tree is answered from the watch.
    #[test]
    fn the_watched_digest_follows_every_change_git_would_show() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        git(dir, &["init", "-q"]);
        fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
        git(dir, &["add", "."]);
        git(dir, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
        let mut trees = TreeWatch::default();
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
        let mut trees = TreeWatch::default();
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
        let mut trees = TreeWatch::default();
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
}
