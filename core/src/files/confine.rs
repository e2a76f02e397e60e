//! Paths a caller names, held to its project. An agent that wants the gate open names
//! whatever path serves it: `../../home/.bashrc` to overwrite, `~/.ssh/id_ed25519` to have
//! read and sent on, a symlink in the project that leads out of it, a FIFO that blocks the
//! reader. Every path a tool takes from a caller goes through [`target`] (to write) or
//! [`read`] (to read): inside the project once symlinks are resolved, a regular file, of
//! bounded size.

use super::OpenedFileRefusal;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The most a caller's file may hold to be read on its behalf (a challenge, a file to
/// review): far above any artifact, and under the protocol's 8 MiB frame with room to spare.
pub const MAX_NAMED_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// Why a path a caller named is not used.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The project itself cannot be resolved.
    #[error("the project {} cannot be used: {source}; pass cwd, an existing directory", project.display())]
    Project {
        /// The project as given.
        project: PathBuf,
        /// Why it cannot be resolved.
        source: io::Error,
    },
    /// The path, resolved (symlinks followed), is not inside the project.
    #[error(
        "`{given}` leads outside the project {} (to {}): name a path inside the project, relative to it",
        project.display(), resolved.display()
    )]
    Outside {
        /// The path as the caller named it.
        given: String,
        /// The project, resolved.
        project: PathBuf,
        /// Where the path leads.
        resolved: PathBuf,
    },
    /// The path names a directory entry no file can be written as (empty, `.`, `..`).
    #[error("`{given}` names no file: name a file inside the project, relative to it")]
    NoFileName {
        /// The path as named.
        given: String,
    },
    /// Nothing is there.
    #[error("`{given}` is not a file of the project {}: name an existing file, relative to it", project.display())]
    Missing {
        /// The path as named.
        given: String,
        /// The project, resolved.
        project: PathBuf,
    },
    /// A directory, FIFO, socket or device: nothing a tool reads on a caller's behalf.
    #[error("`{given}` is {kind}, not a regular file: name a regular file of the project")]
    NotRegular {
        /// The path as named.
        given: String,
        /// What it is.
        kind: &'static str,
    },
    /// Larger than the bound.
    #[error("`{given}` is {len} bytes, more than the {max} read on a caller's behalf: name a smaller file")]
    TooLarge {
        /// The path as named.
        given: String,
        /// Its length.
        len: u64,
        /// The bound.
        max: u64,
    },
    /// Owned by another user where the reader requires the caller's own.
    #[error("refusing `{given}`, owned by another user (uid {uid}): an artifact must be your own")]
    NotOwned {
        /// The path as named.
        given: String,
        /// Its owner.
        uid: u32,
    },
    /// The read itself failed.
    #[error("cannot read `{given}`: {source}")]
    Read {
        /// The path as named.
        given: String,
        /// Why.
        source: io::Error,
    },
}

/// Whose file may be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// Anyone's (a file to review: the caller could show it anyway).
    Any,
    /// Only the caller's own (an artifact, as the reference reads them).
    Caller,
}

/// A file read from inside a project.
#[derive(Debug)]
pub struct Confined {
    /// Where it is, resolved.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// The project, resolved (symlinks followed): what containment is measured against.
fn project_root(project: &Path) -> Result<PathBuf, ConfineError> {
    fs::canonicalize(project).map_err(|source| ConfineError::Project { project: project.to_owned(), source })
}

/// Where to write the file a caller named as `given` (relative to `project`, or absolute):
/// its directory's existing part resolved and inside the project, the rest plain names
/// (no `..`), so that creating it creates nothing outside. The final name is not resolved:
/// an atomic rename replaces a symlink there, it never writes through one.
pub fn target(project: &Path, given: &str) -> Result<PathBuf, ConfineError> {
    let root = project_root(project)?;
    let joined = root.join(given);
    // The name as given: joined to the project, `.` and `` would name the project itself.
    let name = match Path::new(given).components().next_back() {
        Some(Component::Normal(name)) if !given.ends_with('/') => name.to_owned(),
        _ => return Err(ConfineError::NoFileName { given: given.to_owned() }),
    };
    let parent = joined.parent().unwrap_or(&root);
    // The deepest ancestor that exists is resolved; what is below it does not exist yet,
    // and must be plain names (a `..` there could climb out once the rest is created).
    let mut existing = parent;
    let mut rest = Vec::new();
    while fs::symlink_metadata(existing).is_err() {
        let Some(up) = existing.parent() else { break };
        rest.push(existing.components().next_back());
        existing = up;
    }
    let outside =
        |resolved: PathBuf| ConfineError::Outside { given: given.to_owned(), project: root.clone(), resolved };
    let mut dir = fs::canonicalize(existing).map_err(|_| outside(joined.clone()))?;
    for component in rest.into_iter().rev() {
        match component {
            Some(Component::Normal(part)) => dir.push(part),
            _ => return Err(outside(joined.clone())),
        }
    }
    if !dir.starts_with(&root) {
        return Err(outside(dir.join(&name)));
    }
    Ok(dir.join(name))
}

/// Read the file a caller named as `given` (relative to `project`, or absolute): inside the
/// project once every symlink is resolved, a regular file of at most `max` bytes, owned as
/// `owner` says. The checks are made on the file opened (without following a last
/// symlink, and without blocking on a FIFO), so a swap after them changes nothing read.
pub fn read(project: &Path, given: &str, max: u64, owner: Owner) -> Result<Confined, ConfineError> {
    let root = project_root(project)?;
    let joined = root.join(given);
    let missing = || ConfineError::Missing { given: given.to_owned(), project: root.clone() };
    let resolved = fs::canonicalize(&joined).map_err(|_| missing())?;
    if !resolved.starts_with(&root) {
        return Err(ConfineError::Outside { given: given.to_owned(), project: root, resolved });
    }
    let read_error = |source: io::Error| ConfineError::Read { given: given.to_owned(), source };
    let (meta, bytes) = super::read_not_following(&resolved, max).map_err(|refusal| match refusal {
        OpenedFileRefusal::NotRegular(kind) => {
            let kind = if kind.is_dir() { "a directory" } else { "a FIFO, socket or device" };
            ConfineError::NotRegular { given: given.to_owned(), kind }
        }
        OpenedFileRefusal::TooLarge(len) => ConfineError::TooLarge { given: given.to_owned(), len, max },
        OpenedFileRefusal::Io(source) => read_error(source),
    })?;
    if owner == Owner::Caller && meta.uid() != super::current_uid() {
        return Err(ConfineError::NotOwned { given: given.to_owned(), uid: meta.uid() });
    }
    Ok(Confined { path: resolved, bytes })
}

impl From<ConfineError> for crate::rules::EvidenceError {
    /// A refused path is an evidence error (exit 2), as any file-safety refusal is.
    fn from(error: ConfineError) -> Self {
        crate::rules::EvidenceError::evidence(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A project inside a directory that also holds what lies outside it.
    fn layout() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        fs::create_dir_all(project.join("sub")).unwrap();
        fs::write(dir.path().join("secret"), b"outside").unwrap();
        fs::write(project.join("inside.txt"), b"inside").unwrap();
        (dir, project)
    }

    fn message(error: ConfineError) -> String {
        error.to_string()
    }

    #[test]
    fn a_file_is_read_only_from_inside_the_project_after_symlinks() {
        let (dir, project) = layout();
        let read_it = |given: &str| read(&project, given, MAX_NAMED_FILE_BYTES, Owner::Any);
        assert_eq!(read_it("inside.txt").unwrap().bytes, b"inside");
        assert_eq!(read_it("sub/../inside.txt").unwrap().bytes, b"inside", "a `..` that stays inside");
        let inside = project.join("inside.txt").display().to_string();
        assert_eq!(read_it(&inside).unwrap().bytes, b"inside", "an absolute path inside");
        symlink(dir.path().join("secret"), project.join("link")).unwrap();
        symlink("inside.txt", project.join("near")).unwrap();
        assert_eq!(read_it("near").unwrap().bytes, b"inside", "a symlink that stays inside");
        for escape in ["../secret", "link", "sub/../../secret", &dir.path().join("secret").display().to_string()] {
            let said = message(read_it(escape).unwrap_err());
            assert!(said.contains(&format!("`{escape}` leads outside the project")), "{escape}: {said}");
            assert!(said.contains("name a path inside the project, relative to it"), "{said}");
        }
        assert!(message(read_it("absent").unwrap_err()).contains("`absent` is not a file of the project"));
    }

    #[test]
    fn only_a_regular_file_of_bounded_size_is_read() {
        let (_dir, project) = layout();
        let said = message(read(&project, "sub", MAX_NAMED_FILE_BYTES, Owner::Any).unwrap_err());
        assert!(said.contains("`sub` is a directory, not a regular file"), "{said}");
        rustix::fs::mknodat(rustix::fs::CWD, project.join("fifo"), rustix::fs::FileType::Fifo, 0o600.into(), 0)
            .unwrap();
        // A FIFO with no writer would block a plain open for ever.
        let said = message(read(&project, "fifo", MAX_NAMED_FILE_BYTES, Owner::Any).unwrap_err());
        assert!(said.contains("`fifo` is a FIFO, socket or device, not a regular file"), "{said}");
        let said = message(read(&project, "inside.txt", 3, Owner::Any).unwrap_err());
        assert!(said.contains("`inside.txt` is 6 bytes, more than the 3 read on a caller's behalf"), "{said}");
        assert!(read(&project, "inside.txt", 6, Owner::Caller).is_ok(), "the caller's own file");
    }

    #[test]
    fn a_file_is_written_only_inside_the_project_creating_nothing_outside() {
        let (dir, project) = layout();
        let root = fs::canonicalize(&project).unwrap();
        assert_eq!(target(&project, "out.json").unwrap(), root.join("out.json"));
        assert_eq!(target(&project, "new/dir/out.json").unwrap(), root.join("new/dir/out.json"));
        assert_eq!(target(&project, "sub/../out.json").unwrap(), root.join("out.json"));
        symlink(dir.path(), project.join("up")).unwrap();
        for escape in ["../../home/.bashrc", "../out.json", "up/out.json", "new/../../../out.json", "/tmp/out.json"] {
            let said = message(target(&project, escape).unwrap_err());
            assert!(said.contains(&format!("`{escape}` leads outside the project")), "{escape}: {said}");
        }
        for no_name in ["", ".", "..", "sub/"] {
            let said = message(target(&project, no_name).unwrap_err());
            assert!(said.contains("names no file"), "{no_name}: {said}");
        }
        assert!(!dir.path().join("home").exists() && !project.join("new").exists(), "nothing was created");
        let said = message(target(&dir.path().join("gone"), "out.json").unwrap_err());
        assert!(said.contains("cannot be used") && said.contains("pass cwd, an existing directory"), "{said}");
    }
}
