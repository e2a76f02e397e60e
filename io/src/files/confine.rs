//! Paths a caller names, held to its project. An agent that wants the gate open names
//! whatever path serves it: `../../home/.bashrc` to overwrite, `~/.ssh/id_ed25519` to have
//! read and sent on, a symlink in the project that leads out of it, a FIFO that blocks the
//! reader. Every path a tool takes from a caller goes through [`target`] (to write) or
//! [`read`] (to read): inside the project once symlinks are resolved, a regular file, of
//! bounded size.
//!
//! A check of a path by name and a later open by name would leave a window: the caller
//! swaps a directory of the path for a link to `~` in between. So the file is reached from
//! the project opened as a directory: a read with `openat2(RESOLVE_BENEATH)` (the kernel
//! refuses every step out of the project, whatever was swapped), a write step by step
//! from the project's handle with no link followed, the temp file made and renamed in the
//! directory opened.

use super::OpenedFileRefusal;
use rustix::fs::{Mode, OFlags};
use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
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
    /// A file with more than one name: another of its names may be outside the project
    /// (a hard link made to a key), and no name tells.
    #[error(
        "`{given}` has {names} names (hard links), and another may be outside the project, so it is not read: \
         copy the file into the project and name the copy"
    )]
    HardLinked {
        /// The path as named.
        given: String,
        /// How many names the file has.
        names: u64,
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

/// A file to write that a caller named, held to its project ([`target`]): written from the
/// project's directory handle, never by its name.
#[derive(Debug)]
pub struct Target {
    /// The project's handle.
    root: OwnedFd,
    /// The directory it goes in, below the project: plain names, resolved when named.
    dir: PathBuf,
    /// Its name there.
    name: OsString,
    /// Where it is, for messages and for what the command writes.
    path: PathBuf,
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

/// A project opened as a directory, once: every path a caller names is reached from this
/// handle, so what happens to the names on the way to the project afterwards (a
/// directory above it renamed, a link put in its place) changes nothing reached.
#[derive(Debug)]
pub struct Project {
    dir: OwnedFd,
    /// Where it was when opened, for messages and for what a request names.
    path: PathBuf,
}

impl Project {
    /// The directory at `path` (links followed, this once), opened.
    pub fn open(path: &Path) -> Result<Project, ConfineError> {
        let unusable = |source: io::Error| ConfineError::Project { project: path.to_owned(), source };
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir = rustix::fs::open(path, flags, Mode::empty()).map_err(|errno| unusable(errno.into()))?;
        let path = opened_path(&dir).map_or_else(|| fs::canonicalize(path).map_err(unusable), Ok)?;
        Ok(Project { dir, path })
    }

    /// The directory `given` names inside the project (a tool's `cwd`), opened from it:
    /// never one outside it, whatever was swapped on the way.
    pub fn subdirectory(&self, given: &str) -> Result<Project, ConfineError> {
        let below = self.below(given)?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir = openat_beneath(&self.dir, &below, flags).map_err(|errno| self.refusal(given, errno))?;
        let path = opened_path(&dir).unwrap_or_else(|| self.path.join(&below));
        Ok(Project { dir, path })
    }

    /// Where it is (as it was when opened).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether it is `dir` or holds it (the home directory), told by what is opened,
    /// not by names.
    pub fn holds(&self, dir: &Path) -> bool {
        let Ok(me) = rustix::fs::fstat(&self.dir) else { return true };
        dir.ancestors().any(|a| rustix::fs::stat(a).is_ok_and(|s| (s.st_dev, s.st_ino) == (me.st_dev, me.st_ino)))
    }

    /// `given` as a path below the project: a relative one as it is; an absolute one as
    /// the part of it below the project, where it resolves now (it is then reached from
    /// the project's handle all the same).
    fn below(&self, given: &str) -> Result<PathBuf, ConfineError> {
        if !Path::new(given).is_absolute() {
            return Ok(PathBuf::from(given));
        }
        let missing = || ConfineError::Missing { given: given.to_owned(), project: self.path.clone() };
        let resolved = fs::canonicalize(given).map_err(|_| missing())?;
        let below = resolved.strip_prefix(&self.path).map_err(|_| self.outside(given, resolved.clone()))?;
        // The project itself, named by its absolute path.
        Ok(if below.as_os_str().is_empty() { PathBuf::from(".") } else { below.to_path_buf() })
    }

    fn outside(&self, given: &str, resolved: PathBuf) -> ConfineError {
        ConfineError::Outside { given: given.to_owned(), project: self.path.clone(), resolved }
    }

    /// Why opening `given` beneath the project failed.
    fn refusal(&self, given: &str, errno: rustix::io::Errno) -> ConfineError {
        match errno {
            rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR => {
                ConfineError::Missing { given: given.to_owned(), project: self.path.clone() }
            }
            // Out of the project: where the path leads now, as far as it can be told.
            rustix::io::Errno::XDEV => {
                let joined = self.path.join(given);
                self.outside(given, fs::canonicalize(&joined).unwrap_or(joined))
            }
            errno => ConfineError::Read { given: given.to_owned(), source: errno.into() },
        }
    }

    /// A handle of its own on the same directory.
    fn reopened(&self) -> io::Result<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        Ok(rustix::fs::openat(&self.dir, ".", flags, Mode::empty())?)
    }

    /// The same project, with a handle of its own.
    pub fn try_clone(&self) -> Result<Project, ConfineError> {
        let dir = self.reopened().map_err(|source| ConfineError::Project { project: self.path.clone(), source })?;
        Ok(Project { dir, path: self.path.clone() })
    }
}

/// Where an opened file or directory is, read back from the kernel.
fn opened_path(fd: &OwnedFd) -> Option<PathBuf> {
    fs::read_link(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(fd))).ok()
}

/// `below` opened from `dir` with `flags`: the kernel refuses every step out of `dir` (a
/// `..` past it, an absolute link, a link leading out, a magic link of `/proc`).
fn openat_beneath(dir: &OwnedFd, below: &Path, flags: OFlags) -> rustix::io::Result<OwnedFd> {
    let resolve = rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_MAGICLINKS;
    rustix::fs::openat2(dir.as_fd(), below, flags | OFlags::CLOEXEC, Mode::empty(), resolve)
}

/// Where to write the file a caller named as `given` (relative to `project`, or absolute):
/// its directory's existing part resolved and inside the project, the rest plain names
/// (no `..`), so that creating it creates nothing outside. The final name is not resolved:
/// an atomic rename replaces a symlink there, it never writes through one.
pub fn target(project: &Project, given: &str) -> Result<Target, ConfineError> {
    let root = project.path.clone();
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
    let Ok(below) = dir.strip_prefix(&root).map(Path::to_path_buf) else {
        return Err(outside(dir.join(&name)));
    };
    let path = dir.join(&name);
    let handle = project.reopened().map_err(|source| ConfineError::Project { project: root.clone(), source })?;
    Ok(Target { root: handle, dir: below, name: name.to_owned(), path })
}

impl Target {
    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `bytes` as the file, atomically and 0600, as [`super::write_atomic`] writes a
    /// path: its directory made (and each directory on the way reached) from the project's
    /// handle with no link followed, the temp file made and renamed in that directory.
    pub fn write(&self, bytes: &[u8], replace: bool) -> judged_core::rules::Result<()> {
        let fail = |what: &str, e: io::Error| {
            judged_core::rules::EvidenceError::evidence(format!("cannot {what} {}: {e}", self.path.display()))
        };
        let dir = self.open_dir(true).map_err(|e| fail("create the directory of", e))?;
        super::check_writable(&self.path, replace)?;
        let temp = format!(
            ".{}.{}.{:012x}.tmp",
            self.name.to_string_lossy(),
            std::process::id(),
            rand::random::<u64>() & 0xffff_ffff_ffff
        );
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let written = (|| -> io::Result<()> {
            let mut file = fs::File::from(rustix::fs::openat(&dir, &temp, flags, Mode::from_raw_mode(0o600))?);
            io::Write::write_all(&mut file, bytes)?;
            file.sync_all()?;
            let how = if replace { rustix::fs::RenameFlags::empty() } else { rustix::fs::RenameFlags::NOREPLACE };
            rustix::fs::renameat_with(&dir, &temp, &dir, &self.name, how)?;
            Ok(rustix::fs::fsync(&dir)?)
        })();
        let _ = rustix::fs::unlinkat(&dir, &temp, rustix::fs::AtFlags::empty());
        match written {
            Ok(()) => Ok(()),
            // Made meanwhile: refused as the first check refuses it.
            Err(error) if error.raw_os_error() == Some(rustix::io::Errno::EXIST.raw_os_error()) => {
                super::check_writable(&self.path, replace)
            }
            Err(error) => Err(fail("write", error)),
        }
    }

    /// Take the file out again (a response whose evidence could not be written).
    pub fn remove(&self) {
        if let Ok(dir) = self.open_dir(false) {
            let _ = rustix::fs::unlinkat(&dir, &self.name, rustix::fs::AtFlags::empty());
        }
    }

    /// The file's directory, reached from the project one name at a time with no link
    /// followed (each name plain: [`target`] let no `..` through); made where `create`.
    fn open_dir(&self, create: bool) -> io::Result<OwnedFd> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut dir = rustix::fs::openat(&self.root, ".", flags, Mode::empty())?;
        for part in self.dir.components() {
            let Component::Normal(part) = part else { return Err(io::ErrorKind::InvalidInput.into()) };
            let opened = match rustix::fs::openat(&dir, part, flags, Mode::empty()) {
                Err(rustix::io::Errno::NOENT) if create => {
                    rustix::fs::mkdirat(&dir, part, Mode::from_raw_mode(0o777))?;
                    rustix::fs::openat(&dir, part, flags, Mode::empty())
                }
                opened => opened,
            };
            dir = opened?;
        }
        Ok(dir)
    }
}

/// Read the file a caller named as `given` (relative to `project`, or absolute): inside the
/// project once every symlink is resolved, a regular file of at most `max` bytes, owned as
/// `owner` says. It is opened from the project's handle with `RESOLVE_BENEATH` (an
/// absolute path as the part of it below the project), without blocking on a FIFO, and
/// the checks are made on the file opened, so a swap of any part of the path changes
/// nothing read.
pub fn read(project: &Project, given: &str, max: u64, owner: Owner) -> Result<Confined, ConfineError> {
    let below = project.below(given)?;
    let flags = OFlags::RDONLY | OFlags::NONBLOCK;
    let opened = openat_beneath(&project.dir, &below, flags).map_err(|errno| project.refusal(given, errno))?;
    let path = opened_path(&opened).unwrap_or_else(|| project.path.join(&below));
    let read_error = |source: io::Error| ConfineError::Read { given: given.to_owned(), source };
    let (meta, bytes) = super::read_opened(fs::File::from(opened), max).map_err(|refusal| match refusal {
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
    if meta.nlink() > 1 {
        return Err(ConfineError::HardLinked { given: given.to_owned(), names: meta.nlink() });
    }
    Ok(Confined { path, bytes })
}

impl From<ConfineError> for judged_core::rules::EvidenceError {
    /// A refused path is an evidence error (exit 2), as any file-safety refusal is.
    fn from(error: ConfineError) -> Self {
        judged_core::rules::EvidenceError::evidence(error.to_string())
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
        let opened = Project::open(&project).unwrap();
        let read_it = |given: &str| read(&opened, given, MAX_NAMED_FILE_BYTES, Owner::Any);
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
        let said =
            message(read(&Project::open(&project).unwrap(), "sub", MAX_NAMED_FILE_BYTES, Owner::Any).unwrap_err());
        assert!(said.contains("`sub` is a directory, not a regular file"), "{said}");
        rustix::fs::mknodat(rustix::fs::CWD, project.join("fifo"), rustix::fs::FileType::Fifo, 0o600.into(), 0)
            .unwrap();
        // A FIFO with no writer would block a plain open for ever.
        let said =
            message(read(&Project::open(&project).unwrap(), "fifo", MAX_NAMED_FILE_BYTES, Owner::Any).unwrap_err());
        assert!(said.contains("`fifo` is a FIFO, socket or device, not a regular file"), "{said}");
        let said = message(read(&Project::open(&project).unwrap(), "inside.txt", 3, Owner::Any).unwrap_err());
        assert!(said.contains("`inside.txt` is 6 bytes, more than the 3 read on a caller's behalf"), "{said}");
        assert!(
            read(&Project::open(&project).unwrap(), "inside.txt", 6, Owner::Caller).is_ok(),
            "the caller's own file"
        );
        // A hard link made in the project to a file outside it (a key) is that file.
        fs::hard_link(project.parent().unwrap().join("secret"), project.join("linked")).unwrap();
        let said =
            message(read(&Project::open(&project).unwrap(), "linked", MAX_NAMED_FILE_BYTES, Owner::Any).unwrap_err());
        assert!(said.contains("`linked` has 2 names (hard links)") && said.contains("copy the file"), "{said}");
    }

    #[test]
    fn a_file_is_written_only_inside_the_project_creating_nothing_outside() {
        let (dir, project) = layout();
        let root = fs::canonicalize(&project).unwrap();
        assert_eq!(target(&Project::open(&project).unwrap(), "out.json").unwrap().path(), root.join("out.json"));
        assert_eq!(
            target(&Project::open(&project).unwrap(), "new/dir/out.json").unwrap().path(),
            root.join("new/dir/out.json")
        );
        assert_eq!(target(&Project::open(&project).unwrap(), "sub/../out.json").unwrap().path(), root.join("out.json"));
        symlink(dir.path(), project.join("up")).unwrap();
        for escape in ["../../home/.bashrc", "../out.json", "up/out.json", "new/../../../out.json", "/tmp/out.json"] {
            let said = message(target(&Project::open(&project).unwrap(), escape).unwrap_err());
            assert!(said.contains(&format!("`{escape}` leads outside the project")), "{escape}: {said}");
        }
        for no_name in ["", ".", "..", "sub/"] {
            let said = message(target(&Project::open(&project).unwrap(), no_name).unwrap_err());
            assert!(said.contains("names no file"), "{no_name}: {said}");
        }
        assert!(!dir.path().join("home").exists() && !project.join("new").exists(), "nothing was created");
        let said = message(Project::open(&dir.path().join("gone")).unwrap_err());
        assert!(said.contains("cannot be used") && said.contains("pass cwd, an existing directory"), "{said}");
    }

    /// A directory of the path swapped for a link to outside after the path was checked
    /// (the caller's race against a check by name) leads nowhere else: the write goes
    /// through no link, and the read stays beneath the project whatever the path does.
    #[test]
    fn a_directory_swapped_for_a_link_after_the_check_leads_nowhere_else() {
        let (dir, project) = layout();
        let outside = dir.path().join("home");
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("secret"), b"key").unwrap();
        fs::create_dir(project.join("d")).unwrap();
        fs::write(project.join("d/secret"), b"inside").unwrap();

        let held = target(&Project::open(&project).unwrap(), "d/.bashrc").unwrap();
        fs::rename(project.join("d"), project.join("d.was")).unwrap();
        symlink(&outside, project.join("d")).unwrap();
        let said = held.write(b"{}", true).unwrap_err().message;
        assert!(said.contains("cannot create the directory of") && said.contains("d/.bashrc"), "{said}");
        assert!(!outside.join(".bashrc").exists(), "nothing written through the link");
        held.remove();
        assert!(outside.join("secret").exists());

        let said =
            message(read(&Project::open(&project).unwrap(), "d/secret", MAX_NAMED_FILE_BYTES, Owner::Any).unwrap_err());
        assert!(said.contains("`d/secret` leads outside the project"), "{said}");
        fs::remove_file(project.join("d")).unwrap();
        fs::rename(project.join("d.was"), project.join("d")).unwrap();
        held.write(b"{}", false).unwrap();
        assert_eq!(fs::read(project.join("d/.bashrc")).unwrap(), b"{}");
        let again = held.write(b"[]", false).unwrap_err().message;
        assert!(again.contains("refusing to overwrite existing artifact"), "{again}");
        held.remove();
        assert!(!project.join("d/.bashrc").exists());
    }

    /// The project opened once is the project: its name swapped for a link to outside, or
    /// a tool's cwd in it swapped so, leads nowhere else, and the home directory or one
    /// holding it is told by what is opened.
    #[test]
    fn the_project_opened_once_stays_the_project_whatever_its_names_become() {
        let (dir, project) = layout();
        let outside = dir.path().join("home");
        fs::create_dir_all(outside.join("sub")).unwrap();
        fs::write(outside.join("inside.txt"), b"key").unwrap();
        fs::write(project.join("sub/x"), b"in sub").unwrap();
        fs::write(outside.join("sub/x"), b"key").unwrap();
        let opened = Project::open(&project).unwrap();
        let sub = opened.subdirectory("sub").unwrap();
        fs::rename(&project, dir.path().join("moved")).unwrap();
        symlink(&outside, &project).unwrap();
        let read_it = |project: &Project, given: &str| read(project, given, MAX_NAMED_FILE_BYTES, Owner::Any);
        assert_eq!(read_it(&opened, "inside.txt").unwrap().bytes, b"inside", "the project opened, not the link");
        assert_eq!(read_it(&sub, "x").unwrap().bytes, b"in sub", "the cwd opened in it");
        fs::remove_file(&project).unwrap();
        fs::rename(dir.path().join("moved"), &project).unwrap();
        fs::rename(project.join("sub"), project.join("sub.was")).unwrap();
        symlink(outside.join("sub"), project.join("sub")).unwrap();
        let said = message(opened.subdirectory("sub").unwrap_err());
        assert!(said.contains("`sub` leads outside the project"), "{said}");
        assert!(opened.holds(&project.join("sub.was")) && opened.holds(&project));
        assert!(!opened.holds(&outside) && !sub.holds(&project));
    }
}
