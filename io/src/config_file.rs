//! Reading a configuration file that someone else may have made hostile: `config.toml`
//! (which a daemon reads before every decision) and a project's `.judged.toml` (which the
//! agent under watch can write). Only a regular file (a link to one is followed, as
//! dotfile managers make them) of at most [`MAX_CONFIG_BYTES`] is read, opened without
//! blocking: a FIFO or a device named in its place would otherwise hang the reader in
//! `open` or `read`, and a huge file would cost every decision its size in memory.

use crate::files::OpenedFileRefusal;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The largest config file read; a real one is a few KiB.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Why a config file's bytes were not read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    /// Not a regular file (a FIFO, a socket, a device, a directory).
    #[error("{} is a {kind}, not a regular file; a config file must be a plain file (or a link to one)", path.display())]
    NotRegular {
        /// The file.
        path: PathBuf,
        /// What it is instead.
        kind: &'static str,
    },
    /// Larger than [`MAX_CONFIG_BYTES`].
    #[error("{} is {len} bytes, more than a config file may be ({MAX_CONFIG_BYTES} bytes); it is not read", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, or the bytes read before the limit was passed.
        len: u64,
    },
    /// A project's file a witness account would read with its own rights: a link, or a
    /// file of another user than its directory's.
    #[error(
        "{} is {what}, not a file of its directory's owner; a witness account reads a project's file only as \
         that project's user wrote it (replace it with a plain file of theirs)",
        path.display()
    )]
    NotTheirs {
        /// The file.
        path: PathBuf,
        /// `a symbolic link`, or whose it is.
        what: String,
    },
    /// It could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The project's `.judged.toml` for `cwd`: the nearest above it that is its owner's, found
/// without leaving what its owner owns. The search stops at a directory of another owner
/// (`/tmp`, `/home`), and a file of another owner is never one: another user's
/// `/tmp/.judged.toml` would otherwise set the gate, and under `trust_project_files` run
/// its jury's commands, for every project below it.
pub fn project_file(cwd: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::symlink_metadata(cwd).ok()?.uid();
    for dir in cwd.ancestors() {
        if std::fs::symlink_metadata(dir).ok()?.uid() != owner {
            return None;
        }
        let file = dir.join(".judged.toml");
        match std::fs::symlink_metadata(&file) {
            Ok(meta) if meta.uid() != owner => return None,
            // A link is read as the file's reader decides (a witness refuses one).
            Ok(meta) if meta.is_file() || file.is_file() => return Some(file),
            _ => {}
        }
    }
    None
}

/// The bytes of the config file at `path`; `None` when there is none.
pub fn read(path: &Path) -> Result<Option<Vec<u8>>, ConfigFileError> {
    let io = |source| ConfigFileError::Io { path: path.to_owned(), source };
    // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a
    // writer; `read_opened` then refuses it by its type before any read.
    let file = match File::options().read(true).custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32).open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(io(source)),
    };
    match crate::files::read_opened(file, MAX_CONFIG_BYTES) {
        Ok((_, bytes)) => Ok(Some(bytes)),
        Err(OpenedFileRefusal::NotRegular(kind)) => {
            Err(ConfigFileError::NotRegular { path: path.to_owned(), kind: kind_of(&kind) })
        }
        Err(OpenedFileRefusal::TooLarge(len)) => Err(ConfigFileError::TooLarge { path: path.to_owned(), len }),
        Err(OpenedFileRefusal::Io(source)) => Err(io(source)),
    }
}

/// The bytes of a project's file at `path` as a daemon serving other users reads it: no
/// link is followed and the file must be its directory owner's. The daemon reads it with
/// its own rights, so a link (or a hard link) the served user put there in its place could
/// otherwise show them, in a parse error, a file only the daemon may read (its signing
/// key). `None` when there is none.
pub fn read_in_place(path: &Path) -> Result<Option<Vec<u8>>, ConfigFileError> {
    use std::os::unix::fs::MetadataExt;
    let not_theirs = |what: String| ConfigFileError::NotTheirs { path: path.to_owned(), what };
    match crate::files::read_not_following(path, MAX_CONFIG_BYTES) {
        Ok((meta, bytes)) => {
            let dir = path
                .parent()
                .map_or(Path::new("/"), |dir| if dir.as_os_str().is_empty() { Path::new(".") } else { dir });
            let dir_owner =
                std::fs::metadata(dir).map_err(|source| ConfigFileError::Io { path: path.to_owned(), source })?;
            if meta.uid() != dir_owner.uid() {
                return Err(not_theirs(format!("uid {}'s, in a directory of uid {}", meta.uid(), dir_owner.uid())));
            }
            Ok(Some(bytes))
        }
        Err(OpenedFileRefusal::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(OpenedFileRefusal::Io(error)) if error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            Err(not_theirs("a symbolic link".into()))
        }
        Err(OpenedFileRefusal::NotRegular(kind)) => {
            Err(ConfigFileError::NotRegular { path: path.to_owned(), kind: kind_of(&kind) })
        }
        Err(OpenedFileRefusal::TooLarge(len)) => Err(ConfigFileError::TooLarge { path: path.to_owned(), len }),
        Err(OpenedFileRefusal::Io(source)) => Err(ConfigFileError::Io { path: path.to_owned(), source }),
    }
}

fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "directory"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_socket() {
        "socket"
    } else if file_type.is_char_device() || file_type.is_block_device() {
        "device"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_plain_file_and_a_link_to_one_are_read_and_a_missing_one_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        assert!(read(&path).unwrap().is_none());
        std::fs::write(&path, "[gate]\n").unwrap();
        let link = dir.path().join("link.toml");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read(&link).unwrap().unwrap(), b"[gate]\n");
    }

    #[test]
    fn a_fifo_is_refused_at_once_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(status.success());
        let link = dir.path().join("config.toml");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let started = Instant::now();
        let error = read(&link).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5), "the read waited for a writer");
        assert!(error.to_string().contains("config.toml is a FIFO, not a regular file"), "{error}");
        let error = read(dir.path()).unwrap_err();
        assert!(error.to_string().contains("is a directory"), "{error}");
    }

    /// A daemon serving other users reads a project's file only as that project's user
    /// wrote it: a link to a file only the daemon may read (its key), or another user's
    /// file linked hard into the project, is refused without being read, naming what it is.
    #[test]
    fn a_project_file_read_in_place_is_never_a_link_nor_another_users() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("signing.key");
        std::fs::write(&secret, "the key").unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let file = project.join(".judged.toml");
        assert!(read_in_place(&file).unwrap().is_none());
        std::os::unix::fs::symlink(&secret, &file).unwrap();
        let error = read_in_place(&file).unwrap_err();
        assert!(
            error.to_string().contains(".judged.toml is a symbolic link, not a file of its directory's owner"),
            "{error}"
        );
        assert!(!error.to_string().contains("the key"));
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, "[gate]\n").unwrap();
        assert_eq!(read_in_place(&file).unwrap().unwrap(), b"[gate]\n");
        // Another user's file in the project (as a hard link to theirs would be).
        let owner = crate::files::current_uid();
        if owner == 0 {
            std::os::unix::fs::chown(&file, Some(4242), None).unwrap();
            let error = read_in_place(&file).unwrap_err();
            assert!(error.to_string().contains("is uid 4242's, in a directory of uid 0"), "{error}");
        }
    }

    #[test]
    fn a_file_over_the_limit_is_refused_with_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".judged.toml");
        let file = File::create(&path).unwrap();
        file.set_len(MAX_CONFIG_BYTES + 1).unwrap();
        let error = read(&path).unwrap_err();
        assert!(error.to_string().contains("is 1048577 bytes, more than a config file may be"), "{error}");
    }
}
