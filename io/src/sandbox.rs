//! Keeping a process's file system within bounds, with Landlock (Linux 5.13 and later,
//! unprivileged): a thread of its own restricts itself, for good, and so every process it
//! then starts. Two shapes:
//!
//! * [`restrict`]: the whole file system but some paths. A juror CLI run by a witness
//!   account reads a prompt the judged work wrote, and has tools that read files: it could
//!   be talked into reading the witness's signing key. Every entry beside the way from `/`
//!   to each path kept out is allowed, the paths themselves and what is created later
//!   beside them are not, and directories on the way can still be listed.
//! * [`restrict_to`]: only some hierarchies. The witness's git reads a served user's work
//!   tree by path with a capability that reads everything; a directory of the tree swapped
//!   for a link while git walks it must not lead it into another user's files.

use landlock::{
    ABI, Access, AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError,
    RulesetStatus,
};
use std::collections::HashSet;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};

/// The newest rights asked for; an older kernel enforces what it knows of them.
const ABI_ASKED: ABI = ABI::V5;

/// Why a juror cannot be kept from the paths.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel enforces no Landlock ruleset (too old, or Landlock not enabled).
    #[error("Landlock is not enforced by this kernel (Linux 5.13 or later with Landlock enabled): {0}")]
    NotEnforced(String),
    /// A directory on the way could not be listed.
    #[error("cannot list {}: {source}", dir.display())]
    List {
        /// The directory.
        dir: PathBuf,
        /// Why it could not be listed.
        source: std::io::Error,
    },
    /// The ruleset could not be built or applied.
    #[error("cannot restrict the juror with Landlock: {0}")]
    Ruleset(#[from] RulesetError),
}

/// Restrict the calling thread, and every process it starts from now on, to the whole
/// file system but `out_of_reach` (absolute paths, links resolved). Irreversible for the
/// thread: call it on a thread of its own.
pub fn restrict(out_of_reach: &[PathBuf]) -> Result<(), SandboxError> {
    let all = AccessFs::from_all(ABI_ASKED);
    let mut ruleset = Ruleset::default().handle_access(all)?.create()?;
    let (allowed, ways) = beside_the_ways(out_of_reach)?;
    for path in allowed {
        // Gone since it was listed: nothing to allow.
        let Ok(fd) = PathFd::new(&path) else { continue };
        let access = if path.is_dir() { all } else { AccessFs::from_file(ABI_ASKED) };
        ruleset = ruleset.add_rule(PathBeneath::new(fd, access))?;
    }
    for dir in ways {
        let Ok(fd) = PathFd::new(&dir) else { continue };
        ruleset = ruleset.add_rule(PathBeneath::new(fd, AccessFs::ReadDir))?;
    }
    let shown: Vec<String> = out_of_reach.iter().map(|p| p.display().to_string()).collect();
    enforced(ruleset, || format!("{} would stay within reach", shown.join(", ")))
}

/// Restrict the calling thread, and every process it starts from now on, to reading (and
/// running what is in) the `readable` hierarchies and the directories `opened`, and to
/// anything in the `writable` ones; a path in none, or one that does not exist, is out of
/// reach. A directory given opened is the one that was opened (and checked): a link put at
/// its path since leads out of reach. Irreversible for the thread: call it on a thread of
/// its own.
pub fn restrict_to(readable: &[PathBuf], opened: &[BorrowedFd], writable: &[PathBuf]) -> Result<(), SandboxError> {
    let all = AccessFs::from_all(ABI_ASKED);
    let mut ruleset = Ruleset::default().handle_access(all)?.create()?;
    for dir in opened {
        ruleset = ruleset.add_rule(PathBeneath::new(dir, AccessFs::from_read(ABI_ASKED)))?;
    }
    for (paths, access) in [(readable, AccessFs::from_read(ABI_ASKED)), (writable, all)] {
        for path in paths {
            let Ok(fd) = PathFd::new(path) else { continue };
            let access = if path.is_dir() { access } else { access & AccessFs::from_file(ABI_ASKED) };
            ruleset = ruleset.add_rule(PathBeneath::new(fd, access))?;
        }
    }
    enforced(ruleset, || "the whole file system would stay within reach".to_owned())
}

/// Apply `ruleset` to the calling thread; an error when the kernel enforces none of it.
fn enforced(ruleset: RulesetCreated, unenforced: impl Fn() -> String) -> Result<(), SandboxError> {
    let status = ruleset.restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(SandboxError::NotEnforced(unenforced()));
    }
    Ok(())
}

/// The entries of the directories on the way from `/` to each path of `out_of_reach` that
/// are on no such way, and those directories.
fn beside_the_ways(out_of_reach: &[PathBuf]) -> Result<(Vec<PathBuf>, Vec<PathBuf>), SandboxError> {
    let on_a_way: HashSet<&Path> = out_of_reach.iter().flat_map(|path| path.ancestors()).collect();
    let kept_out: HashSet<&Path> = out_of_reach.iter().map(PathBuf::as_path).collect();
    let ways: Vec<PathBuf> =
        on_a_way.iter().filter(|dir| !kept_out.contains(*dir) && dir.is_dir()).map(|dir| dir.to_path_buf()).collect();
    let mut allowed = Vec::new();
    for dir in &ways {
        let entries = std::fs::read_dir(dir).map_err(|source| SandboxError::List { dir: dir.clone(), source })?;
        for entry in entries.flatten() {
            let path = entry.path();
            if !on_a_way.contains(path.as_path()) {
                allowed.push(path);
            }
        }
    }
    Ok((allowed, ways))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A process started by a restricted thread reads everything but what is kept out:
    /// not the file, not a file created beside it later; a sibling and its parent's
    /// listing it can.
    #[test]
    fn a_process_started_from_a_restricted_thread_cannot_read_what_is_kept_out() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().canonicalize().unwrap().join("data");
        fs::create_dir(&data).unwrap();
        fs::write(data.join("signing.key"), "secret").unwrap();
        fs::write(data.join("notes"), "readable").unwrap();
        let key = data.join("signing.key");
        let run = |script: String| {
            let key = key.clone();
            std::thread::spawn(move || {
                restrict(&[key])?;
                let output = std::process::Command::new("sh").args(["-c", &script]).output().expect("sh runs");
                Ok::<_, SandboxError>(String::from_utf8_lossy(&output.stdout).into_owned())
            })
            .join()
            .unwrap()
        };
        let script = format!(
            "cat {0}/signing.key || echo key-refused; cat {0}/notes; ls {0} | tr '\\n' ' '; echo; \
             echo x > {0}/later && echo later-written || echo later-refused",
            data.display()
        );
        match run(script) {
            Ok(said) => {
                assert!(said.contains("key-refused") && !said.contains("secret"), "{said}");
                assert!(said.contains("readable"), "{said}");
                assert!(said.contains("notes signing.key"), "the directory lists: {said}");
                assert!(said.contains("later-refused"), "{said}");
            }
            // A kernel without Landlock: the refusal says so, and nothing ran (CI has one).
            Err(error @ SandboxError::NotEnforced(_)) if std::env::var_os("CI").is_none() => {
                eprintln!("SKIP: {error}");
            }
            Err(error) => panic!("{error}"),
        }
        // The test's own thread is not restricted.
        assert_eq!(fs::read_to_string(&key).unwrap(), "secret");
    }

    /// A process started by a thread restricted to some hierarchies reads there, writes
    /// where it may, and reads nothing else, not through a link inside what it may read.
    #[test]
    fn a_process_restricted_to_some_hierarchies_reads_nothing_else_even_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (tree, scratch, other) = (root.join("tree"), root.join("scratch"), root.join("other"));
        for made in [&tree, &scratch, &other] {
            fs::create_dir(made).unwrap();
        }
        fs::write(tree.join("work.rs"), "mine").unwrap();
        fs::write(other.join("secret"), "theirs").unwrap();
        std::os::unix::fs::symlink(&other, tree.join("swapped")).unwrap();
        let system: Vec<PathBuf> = ["/usr", "/bin", "/lib", "/lib64", "/etc"].iter().map(PathBuf::from).collect();
        let readable: Vec<PathBuf> = system.into_iter().chain([tree.clone()]).collect();
        let script = format!(
            "cat {0}/work.rs; cat {0}/swapped/secret || echo link-refused; cat {1}/secret || echo other-refused; \
             echo x > {2}/made && echo scratch-written; echo x > {0}/made || echo tree-read-only",
            tree.display(),
            other.display(),
            scratch.display()
        );
        let said = std::thread::spawn(move || {
            restrict_to(&readable, &[], &[scratch, PathBuf::from("/dev/null")])?;
            let output = std::process::Command::new("/bin/sh").args(["-c", &script]).output().expect("sh runs");
            Ok::<_, SandboxError>(String::from_utf8_lossy(&output.stdout).into_owned())
        })
        .join()
        .unwrap();
        match said {
            Ok(said) => {
                assert!(said.starts_with("mine"), "{said}");
                assert!(said.contains("link-refused") && said.contains("other-refused"), "{said}");
                assert!(!said.contains("theirs"), "{said}");
                assert!(said.contains("scratch-written") && said.contains("tree-read-only"), "{said}");
            }
            Err(error @ SandboxError::NotEnforced(_)) if std::env::var_os("CI").is_none() => {
                eprintln!("SKIP: {error}");
            }
            Err(error) => panic!("{error}"),
        }
    }

    /// A directory given opened is held as the directory that was opened: its path made a
    /// link to another user's directory since leads nowhere.
    #[test]
    fn a_directory_given_opened_stays_the_one_opened_when_its_path_is_swapped_for_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let (tree, moved, other) = (root.join("tree"), root.join("moved"), root.join("other"));
        fs::create_dir(&tree).unwrap();
        fs::create_dir(&other).unwrap();
        fs::write(tree.join("work.rs"), "mine").unwrap();
        fs::write(other.join("work.rs"), "theirs").unwrap();
        let opened: std::os::fd::OwnedFd = fs::File::open(&tree).unwrap().into();
        fs::rename(&tree, &moved).unwrap();
        std::os::unix::fs::symlink(&other, &tree).unwrap();
        let system: Vec<PathBuf> = ["/usr", "/bin", "/lib", "/lib64", "/etc"].iter().map(PathBuf::from).collect();
        let script =
            format!("cat {0}/work.rs; cat {1}/work.rs || echo swapped-refused", moved.display(), tree.display());
        let said = std::thread::spawn(move || {
            use std::os::fd::AsFd;
            restrict_to(&system, &[opened.as_fd()], &[PathBuf::from("/dev/null")])?;
            let output = std::process::Command::new("/bin/sh").args(["-c", &script]).output().expect("sh runs");
            Ok::<_, SandboxError>(String::from_utf8_lossy(&output.stdout).into_owned())
        })
        .join()
        .unwrap();
        match said {
            Ok(said) => assert!(said.starts_with("mine") && said.contains("swapped-refused"), "{said}"),
            Err(error @ SandboxError::NotEnforced(_)) if std::env::var_os("CI").is_none() => {
                eprintln!("SKIP: {error}");
            }
            Err(error) => panic!("{error}"),
        }
    }
}
