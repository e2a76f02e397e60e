//! The git commands `attest` and `check` run, as the user, in the user's repository
//! (`attest` appends its note through `judged_io::worktree::append_note`, which the
//! daemon shares).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why a git command gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// git could not be started.
    #[error("cannot run git: {0}; install git, or put it on PATH")]
    Spawn(std::io::Error),
    /// It ran and failed.
    #[error("`git {args}` failed in {}: {said}", dir.display())]
    Failed {
        /// The arguments, as typed.
        args: String,
        /// Where it ran.
        dir: PathBuf,
        /// What it said on stderr (its last line).
        said: String,
    },
}

/// `git ARGS` in `dir`, with `input` on its stdin; its stdout.
pub fn run(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, GitError> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        // The repository may be one the agent under judgment prepared (a reused
        // workspace, a developer's clone): what `check` reads is the history as its
        // objects say, whatever replacements or grafts the repository holds, and nothing it
        // configures runs (no fsmonitor, no fetch of a missing object from a promisor
        // remote, whose upload-pack may be any command).
        // No commit-graph either: a prepared one can give a commit other parents than its
        // object names, and take a commit out of the range.
        .args(["-c", "core.fsmonitor=false", "-c", "protocol.allow=never", "-c", "core.commitGraph=false"])
        .args(args)
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_GRAFT_FILE", "/dev/null")
        .env("GIT_NO_LAZY_FETCH", "1")
        // No pager, no prompt, and none of the user's optional locks on the index.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(GitError::Spawn)?;
    // Written from a thread of its own: git answers a batch as it reads it, and a pipe
    // full both ways would stop both.
    let writer = input.map(|bytes| {
        let mut stdin = child.stdin.take().expect("piped");
        let bytes = bytes.to_vec();
        std::thread::spawn(move || stdin.write_all(&bytes))
    });
    let output = child.wait_with_output().map_err(GitError::Spawn)?;
    if let Some(writer) = writer {
        // A git that stopped reading has failed, and says why below.
        let _ = writer.join();
    }
    if output.status.success() {
        return Ok(output.stdout);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let said = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(nothing on stderr)").trim().to_owned();
    Err(GitError::Failed { args: args.join(" "), dir: dir.to_owned(), said })
}

/// `git ARGS` in `dir`, its stdout as text without the last newline.
pub fn text(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let out = run(dir, args, None)?;
    Ok(String::from_utf8_lossy(&out).trim_end_matches('\n').to_owned())
}

/// The tree git's own merge of commits `ours` and `theirs` gives when it merges cleanly;
/// none on a conflict or a git before 2.38. It runs as `check` must in a repository the
/// agent may have prepared: in a scratch repository of its own that borrows the
/// repository's objects as data, with no config of the repository's, the user's or the
/// system's, so no merge driver of theirs runs (an in-tree `merge=` attribute names a
/// driver defined nowhere, and git merges that file as text).
pub fn merged_tree(dir: &Path, ours: &str, theirs: &str) -> Option<String> {
    let objects = text(dir, &["rev-parse", "--path-format=absolute", "--git-path", "objects"]).ok()?;
    let scratch = tempfile::Builder::new().prefix("judged-merge-").tempdir().ok()?;
    let git_dir = scratch.path().join("git");
    for made in ["objects", "refs"] {
        std::fs::create_dir_all(git_dir.join(made)).ok()?;
    }
    std::fs::write(git_dir.join("HEAD"), "ref: refs/heads/judged\n").ok()?;
    let output = Command::new("git")
        .args(["merge-tree", "--write-tree", "--no-messages", "--end-of-options", ours, theirs])
        .env_clear()
        .envs(std::env::var_os("PATH").map(|path| ("PATH", path)))
        .env("HOME", scratch.path())
        .env("XDG_CONFIG_HOME", scratch.path())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_PARAMETERS", "'core.commitGraph'='false'")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_DIR", &git_dir)
        .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", objects)
        .current_dir(scratch.path())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let tree = String::from_utf8(output.stdout).ok()?;
    let tree = tree.lines().next()?.trim();
    (output.status.success() && judged_io::worktree::is_object_id(tree)).then(|| tree.to_owned())
}
