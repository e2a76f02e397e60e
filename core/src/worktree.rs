//! The working tree a review saw: for a git repository, HEAD plus every staged, unstaged
//! and untracked change, each path by the SHA-256 of what it holds now. A review is only
//! worth something for the work it saw, so evidence records this and the gate can require
//! that the tree is still the one reviewed.
//!
//! Runs `git` (the only other IO in the crate besides [`crate::files`]); a directory in
//! no repository, or a machine without git, has no tree.

use crate::chain;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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
        // Looked for before spawning git: most evidence calls in a non-repository would
        // otherwise pay a process start to learn there is nothing to record.
        dir.ancestors().find(|d| d.join(".git").exists())?;
        let top = PathBuf::from(git(dir, &["rev-parse", "--show-toplevel"])?.trim_end());
        let head = git(dir, &["rev-parse", "--verify", "--quiet", "HEAD"]).unwrap_or_default().trim().to_owned();
        let status = git(dir, &["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"])?;
        let changes = status
            .split('\0')
            .filter(|entry| entry.len() > 3)
            .map(|entry| &entry[3..])
            .filter(|path| !excluded.iter().any(|e| e == &top.join(path)))
            .map(|path| (path.to_owned(), content_digest(&top.join(path))))
            .collect();
        Some(Tree { head, changes })
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

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        // A status must not take the index lock the agent's own git commands need.
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

fn content_digest(path: &Path) -> String {
    match std::fs::read(path) {
        Ok(bytes) => chain::to_hex(&chain::sha256(&bytes)),
        Err(_) if path.is_dir() => "directory".to_owned(),
        Err(_) => "deleted".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
        assert_eq!(reviewed.changes.keys().collect::<Vec<_>>(), ["a.rs", "new.rs"]);
        assert_ne!(reviewed.digest(), clean.digest());
        assert_eq!(Tree::of(dir, &[dir.join("evidence.json")]).unwrap().digest(), reviewed.digest(), "stable");

        fs::write(dir.join("b.rs"), "fn b() { 1 }\n").unwrap();
        run(dir, &["add", "b.rs"]); // staged
        fs::write(dir.join("new.rs"), "fn n() { 2 }\n").unwrap();
        let now = Tree::of(dir, &[dir.join("evidence.json")]).unwrap();
        assert_eq!(reviewed.changes_since(&now), (false, vec!["b.rs".to_owned(), "new.rs".to_owned()]));
    }
}
