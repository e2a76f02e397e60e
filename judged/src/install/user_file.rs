//! A file of the user's that the installer changes (a host's settings, Codex's
//! `config.toml`, judged's own `config.toml`), read and written one way for every host.
//!
//! Users keep API keys in these files, often 0600, and often as links into a dotfiles
//! repository. So a rewrite keeps the file's mode and owner, goes through a link to the
//! file it names (written atomically in that file's own directory), and a read-only file,
//! a link to nothing or something that is not a file is refused, naming it.

use super::InstallError;
use judged_io::files::{Keep, replace_atomically};
use std::fs;
use std::path::{Path, PathBuf};

/// A file as read before a change.
#[derive(Debug, Clone)]
pub struct UserFile {
    /// The path as the user knows it (a link's own path).
    pub path: PathBuf,
    /// The file a write goes to: `path` with its links resolved.
    target: PathBuf,
    /// Its text; `None` when there is no file.
    pub text: Option<String>,
    /// The mode and owner a rewrite keeps; `None` when there is no file.
    keep: Option<Keep>,
}

/// Where a file at `path` is, its directory's links resolved: a project's `.claude` may be a
/// link to the user's own, and a write there is a write to the user's settings.
fn in_resolved_directory(path: &Path) -> PathBuf {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return path.to_owned() };
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    match (fs::canonicalize(dir), std::path::absolute(dir)) {
        (Ok(resolved), Ok(named)) if resolved != named => resolved.join(name),
        _ => path.to_owned(),
    }
}

/// Read the file at `path`, following a link to the file it names (or in a directory of
/// its path); no file is `text: None`.
pub fn read(path: &Path) -> Result<UserFile, InstallError> {
    let io = |action, path: &Path| super::io_error(action, path);
    let link = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let target = in_resolved_directory(path);
            return Ok(UserFile { path: path.to_owned(), target, text: None, keep: None });
        }
        Err(e) => return Err(io("read", path)(e)),
        Ok(meta) => meta.file_type().is_symlink(),
    };
    let target = if link {
        fs::canonicalize(path).map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => {
                InstallError::DanglingLink { path: path.to_owned(), to: fs::read_link(path).unwrap_or_default() }
            }
            _ => io("resolve the link", path)(source),
        })?
    } else {
        in_resolved_directory(path)
    };
    let meta = fs::metadata(&target).map_err(io("read", &target))?;
    if !meta.is_file() {
        return Err(InstallError::NotAFile { path: path.to_owned() });
    }
    // Bounded, as doctor reads it: a settings file planted gigabytes long would otherwise
    // cost its size in memory before it failed to parse.
    let file = judged_io::files::open_not_following(&target).map_err(io("read", &target))?;
    let max = judged_io::config_file::MAX_CONFIG_BYTES;
    let bytes = match judged_io::files::read_opened(file, max) {
        Ok((_, bytes)) => bytes,
        Err(judged_io::files::OpenedFileRefusal::TooLarge(len)) => {
            return Err(InstallError::TooLarge { path: path.to_owned(), len, max });
        }
        Err(judged_io::files::OpenedFileRefusal::NotRegular(_)) => {
            return Err(InstallError::NotAFile { path: path.to_owned() });
        }
        Err(judged_io::files::OpenedFileRefusal::Io(error)) => return Err(io("read", &target)(error)),
    };
    let text = String::from_utf8(bytes)
        .map_err(|_| io("read", &target)(std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text")))?;
    Ok(UserFile { path: path.to_owned(), target, text: Some(text), keep: Some(Keep::of(&meta)) })
}

impl UserFile {
    /// The file as TOML (no file: an empty table); one that does not parse is refused,
    /// naming its line and column.
    pub fn toml(&self) -> Result<toml::Table, InstallError> {
        parse_toml(&self.path, self.text.as_deref().unwrap_or_default())
    }

    /// Whether the path the user named is a link (to [`Self::target`]).
    pub fn is_link(&self) -> bool {
        self.target != self.path
    }

    /// The file a write goes to.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// What is left after an uninstall took judged's part out, `empty` when that is all the
    /// file held: no file then, as before the install; but a link stays (removing it would
    /// leave the hook in the file it names), and gets what is left.
    pub fn leftover(&self, left: String, empty: bool) -> Option<String> {
        (!empty || self.is_link()).then_some(left)
    }

    /// Refuse, before anything is written, a file this user cannot rewrite as it is: a
    /// read-only one (its owner said so), one not writable by this user, or another
    /// user's (a rewrite by this user would make it theirs).
    pub fn check_writable(&self) -> Result<(), InstallError> {
        let Some(keep) = self.keep else { return Ok(()) };
        let path = self.path.clone();
        if let judged_io::files::Mode::Exact(mode) = keep.mode
            && mode & 0o222 == 0
        {
            return Err(InstallError::ReadOnly { path, mode });
        }
        let euid = rustix::process::geteuid().as_raw();
        if let Some((uid, _)) = keep.owner
            && uid != euid
            && euid != 0
        {
            return Err(InstallError::OtherOwner { path, uid });
        }
        rustix::fs::access(&self.target, rustix::fs::Access::WRITE_OK)
            .map_err(|e| InstallError::NotWritable { path, source: e.into() })
    }

    /// Refuse to write over a change made since the file was read (the host itself may
    /// write its settings meanwhile): that change would be lost.
    /// Read as [`read`] reads it (bounded, never blocking on a FIFO put in its place): a
    /// file that is no longer one judged would read is a change too.
    pub fn check_unchanged(&self) -> Result<(), InstallError> {
        use judged_io::files::{OpenedFileRefusal, read_not_following};
        let now = match read_not_following(&self.target, judged_io::config_file::MAX_CONFIG_BYTES) {
            Err(OpenedFileRefusal::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(OpenedFileRefusal::Io(e)) => return Err(super::io_error("read", &self.target)(e)),
            Err(_) => return Err(InstallError::Changed { path: self.path.clone() }),
            Ok((_, bytes)) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        };
        if now == self.text { Ok(()) } else { Err(InstallError::Changed { path: self.path.clone() }) }
    }

    /// Write `text` to the file (through a link), atomically, keeping its mode and owner;
    /// a new file gets the mode any program would give it.
    pub fn write(&self, text: &str) -> Result<(), InstallError> {
        if let Some(parent) = self.target.parent().filter(|_| self.keep.is_none()) {
            fs::create_dir_all(parent).map_err(super::io_error("create", parent))?;
        }
        Ok(replace_atomically(&self.target, text.as_bytes(), self.keep.unwrap_or(Keep::NEW), false)?)
    }

    /// Write `text` to `path`, a new file beside this one, with this one's mode and owner
    /// (a backup holds the same keys).
    pub fn write_beside(&self, path: &Path, text: &str) -> Result<(), InstallError> {
        Ok(replace_atomically(path, text.as_bytes(), self.keep.unwrap_or(Keep::NEW), true)?)
    }
}

/// `text`, the contents of `path`, as TOML; a fault is named by line and column.
pub fn parse_toml(path: &Path, text: &str) -> Result<toml::Table, InstallError> {
    toml::from_str(text).map_err(|source| {
        let at = source.span().map_or(0, |span| span.start).min(text.len());
        let before = text.get(..at).unwrap_or(text);
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        InstallError::Toml { path: path.to_owned(), line, column, source: Box::new(source) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_rewrite_keeps_the_mode_and_goes_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/settings.json");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "{}").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let file = read(&link).unwrap();
        assert!(file.is_link());
        assert_eq!(file.text.as_deref(), Some("{}"));
        file.check_writable().unwrap();
        file.write("{\"a\": 1}").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "{\"a\": 1}");
        assert_eq!(mode(&real), 0o640);
        let backup = dir.path().join("settings.json.backup");
        file.write_beside(&backup, "{}").unwrap();
        assert_eq!(mode(&backup), 0o640, "a backup is as private as the file");
        assert!(file.write_beside(&backup, "{}").is_err(), "a backup never replaces a file");
        assert_eq!(file.leftover("{}\n".into(), true).as_deref(), Some("{}\n"), "a link is not removed");
        let error = file.check_unchanged().unwrap_err().to_string();
        assert!(error.contains("settings.json changed since judged read it") && error.contains("run again"), "{error}");
    }

    /// A project's settings directory that is a link to the user's own: the file is the
    /// user's, and the installer says where it writes, as for a linked file.
    #[test]
    fn a_file_in_a_linked_directory_is_written_where_the_link_leads_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let (own, project) = (base.join("home/.claude"), base.join("project"));
        fs::create_dir_all(&own).unwrap();
        fs::create_dir_all(&project).unwrap();
        std::os::unix::fs::symlink(&own, project.join(".claude")).unwrap();
        let missing = read(&project.join(".claude/settings.json")).unwrap();
        assert!(missing.is_link() && missing.target() == own.join("settings.json"), "{missing:?}");
        fs::write(own.join("settings.json"), "{}").unwrap();
        let file = read(&project.join(".claude/settings.json")).unwrap();
        assert!(file.is_link() && file.target() == own.join("settings.json"), "{file:?}");
        let plain = read(&own.join("settings.json")).unwrap();
        assert!(!plain.is_link(), "{plain:?}");
    }

    /// A settings file planted gigabytes long is refused by its size, before it is read.
    #[test]
    fn a_settings_file_past_the_bound_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        fs::File::create(&path).unwrap().set_len(3 << 30).unwrap();
        let error = read(&path).unwrap_err().to_string();
        assert!(error.contains("settings.json is 3221225472 bytes, more than a settings file may be"), "{error}");
    }

    #[test]
    fn read_only_missing_targets_and_directories_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("settings.json");
        fs::write(&file, "{}").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o444)).unwrap();
        let error = read(&file).unwrap().check_writable().unwrap_err().to_string();
        assert!(error.contains("settings.json is read-only (mode 0444)") && error.contains("chmod u+w"), "{error}");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(dir.path().join("gone.json"), &link).unwrap();
        let error = read(&link).unwrap_err().to_string();
        assert!(error.contains("link.json is a symbolic link to") && error.contains("gone.json, which does not exist"));
        let error = read(dir.path()).unwrap_err().to_string();
        assert!(error.contains("is not a regular file"), "{error}");
        let missing = read(&dir.path().join("none.json")).unwrap();
        assert!(missing.text.is_none() && !missing.is_link());
        assert_eq!(missing.leftover(String::new(), true), None, "no file before, none after");
    }
}
