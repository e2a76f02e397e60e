//! Who a request comes from, as the socket's peer credentials say, and what the daemon
//! reads on its behalf. A witness account reads with its own rights (and, as its unit
//! grants, past every file's permissions): a directory a user it serves names (a `cwd`, a
//! session root, or the cwd its session's log records) is that user's project, whose tree,
//! settings and changes the daemon reads and shows its jury. So it must be that user's own:
//! not another user's, not the witness's data dir, not a system directory.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// Who a request comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Caller {
    /// The daemon's own account, or root: nothing either names is beyond its own reach.
    Own,
    /// A user a witness account serves, by uid.
    Served(u32),
}

/// Why a directory a served user named is not read for it.
#[derive(Debug, thiserror::Error)]
pub enum NotYours {
    #[error("refusing {field} {}: it cannot be resolved ({source}); {}", given.display(), rule(*uid))]
    Unresolved { field: String, given: PathBuf, uid: u32, source: io::Error },
    #[error("refusing {field} {}: it is not a directory; {}", resolved.display(), rule(*uid))]
    NotADirectory { field: String, resolved: PathBuf, uid: u32 },
    #[error("refusing {field} {}: it is owned by uid {owner}, links resolved; {}", resolved.display(), rule(*uid))]
    Owned { field: String, resolved: PathBuf, owner: u32, uid: u32 },
}

/// The rule a refusal names, and what to do instead.
fn rule(uid: u32) -> String {
    format!(
        "this judged is a witness account, and it reads only directories owned by the user asking (uid {uid}); name \
         your own project's directory"
    )
}

impl Caller {
    /// Whether what is at `path` (a log, a project's directory) is this caller's to be
    /// shown: anything for the daemon's own account; for a served user, what it owns now,
    /// not following a last link. What is gone, or unnamed, is nobody's.
    pub fn owns(self, path: Option<&str>) -> bool {
        match self {
            Caller::Own => true,
            Caller::Served(uid) => {
                path.is_some_and(|path| std::fs::symlink_metadata(path).is_ok_and(|m| m.uid() == uid))
            }
        }
    }

    /// The directory `given` resolved (links followed), when the daemon may read it for
    /// this caller: for a served user, an existing directory that user owns. `field` is
    /// how a refusal names it (`` `cwd` ``, the cwd a session's log records).
    pub fn directory(self, field: &str, given: &str) -> Result<String, NotYours> {
        let Caller::Served(uid) = self else { return Ok(judged_io::files::resolve(given)) };
        let field = field.to_owned();
        let resolved = std::fs::canonicalize(given).map_err(|source| NotYours::Unresolved {
            field: field.clone(),
            given: given.into(),
            uid,
            source,
        })?;
        let meta = std::fs::metadata(&resolved).map_err(|source| NotYours::Unresolved {
            field: field.clone(),
            given: given.into(),
            uid,
            source,
        })?;
        if !meta.is_dir() {
            return Err(NotYours::NotADirectory { field, resolved, uid });
        }
        if meta.uid() != uid {
            return Err(NotYours::Owned { field, resolved, owner: meta.uid(), uid });
        }
        Ok(resolved.to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A served user's own directory is read for it, resolved; one of another owner, a
    /// file, or nothing at all is refused naming the path and the rule. The daemon's own
    /// account is refused nothing.
    #[test]
    fn a_served_user_has_only_its_own_directories_read() {
        let dir = tempfile::tempdir().unwrap();
        let own = judged_io::files::current_uid();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let link = base.join("link");
        std::os::unix::fs::symlink(&base, &link).unwrap();
        let served = Caller::Served(own);
        assert_eq!(served.directory("`cwd`", link.to_str().unwrap()).unwrap(), base.to_str().unwrap());

        let other = Caller::Served(own + 1);
        let refused = other.directory("`cwd`", link.to_str().unwrap()).unwrap_err().to_string();
        let owned = format!("refusing `cwd` {}: it is owned by uid {own}, links resolved", base.display());
        assert!(refused.starts_with(&owned), "{refused}");
        assert!(refused.contains(&format!("reads only directories owned by the user asking (uid {})", own + 1)));
        let file = base.join("file");
        std::fs::write(&file, "x").unwrap();
        let refused = served.directory("`session_root`", file.to_str().unwrap()).unwrap_err().to_string();
        assert!(refused.starts_with(&format!("refusing `session_root` {}: it is not a directory", file.display())));
        let missing = base.join("missing");
        let refused = served.directory("`cwd`", missing.to_str().unwrap()).unwrap_err().to_string();
        assert!(refused.starts_with(&format!("refusing `cwd` {}: it cannot be resolved", missing.display())));
        assert_eq!(Caller::Own.directory("`cwd`", missing.to_str().unwrap()).unwrap(), missing.to_str().unwrap());
    }
}
