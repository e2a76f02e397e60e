//! The configuration as it changes, without a restart.
//!
//! `config.toml` is looked at again before every decision, on the watcher's tick and on
//! `SIGHUP`; a project's `.judged.toml` whenever a decision reads it. Looking costs a
//! `stat`: the file is read again only when its inode, size, mtime or ctime moved. An
//! edit takes effect whole or not at all: a version that does not parse, or whose jury
//! cannot run, leaves the last good version in force and says so (the log, the journal,
//! `status`, the next block message) until the file is fixed.
//!
//! The gate fails closed on its own file: a version saved by rename (a new inode with
//! something in it, as editors and `judged init` save) is complete and counts at once,
//! but one written in place, emptied or removed may be an editor half way through its
//! write (truncate, then write), so it counts only once it has stayed the same for
//! [`SETTLE`]; until then the last good version stays in force. Read that way, a file
//! removed for good brings back the defaults after the settle time, logged and journaled.

use super::{ConfigError, ConfigFile, GateLayer, ProjectTrust, UserConfig, digest_of_bytes, parse_toml};
use judged_core::event::Host;
use judged_protocol::{ConfigFileUsed, ConfigStatus, UnappliedConfig};
use serde::Deserialize;
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a version written in place, emptied or removed must stay unchanged before
/// it counts: far longer than an editor's truncate-then-write, short enough for a person.
pub const SETTLE: Duration = Duration::from_secs(2);

/// What a file's metadata says of its content: equal stamps, same bytes (an editor that
/// saves by rename makes a new inode; a write in place moves mtime and ctime).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    /// The file's stamp; `None` when it does not exist (or cannot be looked at, which the
    /// read then reports).
    fn of(path: &Path) -> Option<Stamp> {
        let meta = std::fs::metadata(path).ok()?;
        let ns = |seconds: i64, nanos: i64| i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        Some(Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        })
    }

    fn same_file(&self, other: &Stamp) -> bool {
        (self.dev, self.ino) == (other.dev, other.ino)
    }
}

/// A change of the config in force, to journal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigChange {
    /// A new version is in force (`sha256: None`: the file was removed, the defaults are).
    Loaded(ConfigFileUsed),
    /// A new version was not applied; the last good one stays in force.
    Rejected { file: ConfigFileUsed, error: String },
}

/// What the last look at the file saw.
#[derive(Clone, Copy)]
struct Look {
    /// The file's stamp (`None`: no file).
    stamp: Option<Stamp>,
    /// Since when the file has had that stamp, as far as the looks saw.
    since: Instant,
    /// Whether its bytes wait for [`SETTLE`] before they count.
    waiting: bool,
}

/// `config.toml`, followed as it changes.
pub struct LiveConfig {
    path: PathBuf,
    /// The last look at the file; `None` before the first.
    looked: Option<Look>,
    /// The stamp of the file when the daemon started following it (`None`: no file):
    /// what the first look compares with.
    started_stamp: Option<Stamp>,
    good: UserConfig,
    loaded_at: String,
    rejected: Option<UnappliedConfig>,
    /// The file the daemon started with, for the settings that do not follow it.
    started: ConfigFile,
    settle: Duration,
}

impl LiveConfig {
    /// Follow `path`, whose version read at start is `user`.
    pub fn new(path: PathBuf, user: UserConfig) -> LiveConfig {
        let started = user.file.clone();
        let started_stamp = user.used.sha256.as_ref().and_then(|_| Stamp::of(&path));
        LiveConfig {
            path,
            looked: None,
            started_stamp,
            good: user,
            loaded_at: now(),
            rejected: None,
            started,
            settle: SETTLE,
        }
    }

    /// The version in force.
    pub fn current(&self) -> &UserConfig {
        &self.good
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What project files may set: a daemon started as a witness account (serving other
    /// users) stays one until it restarts, whatever the file says meanwhile.
    pub fn project_trust(&self) -> ProjectTrust {
        self.good.file.gate.project_trust(self.is_witness())
    }

    /// Whether the daemon started as a witness account's.
    pub fn is_witness(&self) -> bool {
        self.started.is_witness()
    }

    /// The newest version that was not applied, when the file on disk is not in force.
    pub fn rejected(&self) -> Option<&UnappliedConfig> {
        self.rejected.as_ref()
    }

    /// Look at the file again (read it whatever its stamp when `force`, as on `SIGHUP`);
    /// the change to journal, if the version in force or the rejected one changed.
    pub fn refresh(&mut self, force: bool) -> Option<ConfigChange> {
        // The stamp is taken before the read: a write between the two moves the stamp
        // again, and the next look reads the file once more.
        let stamp = Stamp::of(&self.path);
        let settled = match self.looked {
            Some(look) if look.stamp == stamp => {
                let settled = look.waiting && look.since.elapsed() >= self.settle;
                if !force && !settled {
                    return None;
                }
                settled
            }
            _ => false,
        };
        // `since` stays the first time this stamp was seen; whether it waits is decided
        // again below.
        let previous = self.looked;
        let since = previous.filter(|look| look.stamp == stamp).map_or_else(Instant::now, |look| look.since);
        self.looked = Some(Look { stamp, since, waiting: false });
        let bytes = match judged_io::config_file::read(&self.path) {
            Ok(bytes) => bytes,
            Err(source) => return self.reject(None, &ConfigError::File(source)),
        };
        let sha256 = bytes.as_deref().map(digest_of_bytes);
        if sha256 == self.good.used.sha256 {
            // Back to (or still) the version in force: an edit that was refused is over.
            return self.rejected.take().map(|_| ConfigChange::Loaded(self.good.used.clone()));
        }
        if self.rejected.as_ref().is_some_and(|r| Some(&r.sha256) == sha256.as_ref()) {
            return None;
        }
        let loaded = match &bytes {
            Some(bytes) => UserConfig::parse(&self.path, bytes),
            None => Ok(UserConfig::defaults(&self.path)),
        };
        // A version that does not parse changes nothing in force: it is refused at once.
        // One that does waits, when it may be half written.
        if loaded.is_ok() && !settled && self.may_be_half_written(previous, stamp, bytes.as_deref()) {
            if let Some(look) = &mut self.looked {
                look.waiting = true;
            }
            tracing::info!(
                config = %self.path.display(),
                settle_seconds = self.settle.as_secs_f64(),
                "config.toml changed in place, emptied or removed; the version in force stays until the file has been unchanged for the settle time"
            );
            return None;
        }
        match loaded {
            Ok(user) => {
                self.good = user;
                self.loaded_at = now();
                self.rejected = None;
                Some(ConfigChange::Loaded(self.good.used.clone()))
            }
            Err(error) => self.reject(sha256, &error),
        }
    }

    /// Whether what the file holds now may be half way through a write, and so counts only
    /// once it has settled: a file written in place, empty, gone, or appearing where a
    /// version in force was removed may be; one that took the place of the file seen
    /// before (a rename: editors, `judged init`) is whole.
    fn may_be_half_written(&self, previous: Option<Look>, stamp: Option<Stamp>, bytes: Option<&[u8]>) -> bool {
        let Some(now) = stamp else { return true };
        if bytes.is_none_or(|b| b.iter().all(u8::is_ascii_whitespace)) {
            return true;
        }
        let replaced = match previous.map(|look| look.stamp) {
            Some(Some(before)) => !now.same_file(&before),
            // It appeared where there was none: whole only if nothing but the defaults was
            // in force (a first config).
            Some(None) => self.good.used.sha256.is_none(),
            None => self.started_stamp.is_none_or(|started| !now.same_file(&started)),
        };
        !replaced
    }

    fn reject(&mut self, sha256: Option<String>, error: &ConfigError) -> Option<ConfigChange> {
        let sha256 = sha256.unwrap_or_default();
        if self.rejected.as_ref().is_some_and(|r| r.sha256 == sha256 && r.error == error.summary()) {
            return None;
        }
        let rejected = UnappliedConfig { sha256: sha256.clone(), error: error.summary(), at: now() };
        self.rejected = Some(rejected);
        let file = ConfigFileUsed { path: self.path.clone(), sha256: Some(sha256) };
        Some(ConfigChange::Rejected { file, error: error.summary() })
    }

    /// What `status` reports.
    pub fn status(&self) -> ConfigStatus {
        let (now, then) = (&self.good.file, &self.started);
        let roots_moved = Host::ALL
            .into_iter()
            .map(|host| (judged_core::adapter::of(host).roots_key(), now.roots_of(host) != then.roots_of(host)));
        let others = [
            ("opencode_databases", now.opencode_databases != then.opencode_databases),
            ("[server]", now.server != then.server),
        ];
        let restart_needed: Vec<(&str, bool)> = roots_moved.chain(others).collect();
        ConfigStatus {
            file: self.good.used.clone(),
            loaded_at: self.loaded_at.clone(),
            rejected: self.rejected.clone(),
            restart_needed: restart_needed.iter().filter(|(_, moved)| *moved).map(|(k, _)| (*k).to_owned()).collect(),
        }
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `.judged.toml` in a project.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProjectFile {
    #[serde(default)]
    gate: GateLayer,
    /// Checked by the jury when it is convened (`judged_jury::config::for_project`).
    #[serde(default, rename = "jury")]
    _jury: Option<serde::de::IgnoredAny>,
}

/// A project's `[gate]` as a decision uses it.
#[derive(Clone, Debug)]
pub struct ProjectGate {
    pub layer: GateLayer,
    /// The file and the digest of the version in force.
    pub used: ConfigFileUsed,
    /// Why the file's current bytes are not in force (they do not parse), when they are
    /// not: the last good version is.
    pub rejected: Option<String>,
}

/// The project files seen, with the last good version of each.
#[derive(Default)]
pub struct ProjectFiles {
    files: HashMap<PathBuf, ProjectEntry>,
    /// Read each as its project's user wrote it (no link, their own file): a daemon that
    /// serves other users reads them with its own rights.
    in_place: bool,
}

/// A project file of which a good version was read.
struct ProjectEntry {
    stamp: Option<Stamp>,
    /// The last version that parsed.
    good: ProjectGate,
    /// Whether the file's bytes at `stamp` are that version (else they did not parse).
    current: bool,
}

/// More project files than any user has open at once; past it the cache starts over.
const MAX_PROJECT_FILES: usize = 256;

impl ProjectFiles {
    /// The project files of a daemon that serves other users ([`ProjectFiles::in_place`]).
    pub fn read_in_place() -> ProjectFiles {
        ProjectFiles { in_place: true, ..ProjectFiles::default() }
    }

    /// The `[gate]` of the project file at `path`: as the file is now, or, when it does
    /// not parse now, the last good version this daemon read of it, with the error. An
    /// error when no good version was ever read.
    pub fn gate(&mut self, path: &Path) -> Result<ProjectGate, ConfigError> {
        let stamp = Stamp::of(path);
        if let Some(entry) = self.files.get(path)
            && entry.current
            && entry.stamp.is_some()
            && entry.stamp == stamp
        {
            return Ok(entry.good.clone());
        }
        let read = if self.in_place {
            judged_io::config_file::read_in_place(path)
        } else {
            judged_io::config_file::read(path)
        };
        let read = match read {
            Ok(Some(bytes)) => Ok(bytes),
            // Gone since the directory was looked through: as if it had not been found.
            Ok(None) => Ok(Vec::new()),
            Err(error) => Err(ConfigError::File(error)),
        };
        let parsed = read.and_then(|bytes| {
            let project: ProjectFile = parse_toml(path, &String::from_utf8_lossy(&bytes))?;
            let used = ConfigFileUsed { path: path.to_owned(), sha256: Some(digest_of_bytes(&bytes)) };
            Ok(ProjectGate { layer: project.gate, used, rejected: None })
        });
        match (parsed, self.files.get_mut(path)) {
            (Ok(gate), _) => {
                if self.files.len() >= MAX_PROJECT_FILES && !self.files.contains_key(path) {
                    self.files.clear();
                }
                self.files.insert(path.to_owned(), ProjectEntry { stamp, good: gate.clone(), current: true });
                Ok(gate)
            }
            (Err(error), Some(entry)) => {
                (entry.stamp, entry.current) = (stamp, false);
                Ok(ProjectGate { rejected: Some(error.summary()), ..entry.good.clone() })
            }
            (Err(error), None) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use judged_protocol::GatePolicy;

    fn write(path: &Path, text: &str) {
        // A new inode each time, as editors save: the stamp moves even within one tick
        // of the clock.
        let temporary = path.with_extension("new");
        std::fs::write(&temporary, text).unwrap();
        std::fs::rename(&temporary, path).unwrap();
    }

    #[test]
    fn an_edit_takes_effect_and_a_broken_one_keeps_the_last_good_version() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        write(&path, "[gate]\npolicy = \"evidence\"\n");
        let mut live = LiveConfig::new(path.clone(), UserConfig::load(&path).unwrap());
        assert_eq!(live.refresh(false), None, "the version read at start is in force");

        write(&path, "[gate]\npolicy = \"panel\"\n");
        assert!(matches!(live.refresh(false), Some(ConfigChange::Loaded(_))));
        assert_eq!(live.current().file.gate.policy, Some(GatePolicy::Panel));

        write(&path, "[gate]\npolcy = \"off\"\n");
        let Some(ConfigChange::Rejected { error, .. }) = live.refresh(false) else {
            panic!("a broken edit is refused")
        };
        assert!(error.contains("config.toml line 2"), "{error}");
        assert!(error.contains("did you mean `policy`?"), "{error}");
        assert_eq!(live.current().file.gate.policy, Some(GatePolicy::Panel), "the last good version stays");
        assert!(live.status().rejected.is_some());
        assert_eq!(live.refresh(false), None, "the same broken version is reported once");

        write(&path, "[gate]\npolicy = \"panel\"\n");
        assert!(matches!(live.refresh(false), Some(ConfigChange::Loaded(_))), "fixing it ends the refusal");
        assert_eq!(live.status().rejected, None);

        std::fs::remove_file(&path).unwrap();
        assert_eq!(live.refresh(false), None, "a removal counts only once it has settled");
        assert_eq!(live.current().file.gate.policy, Some(GatePolicy::Panel));
        live.settle = Duration::ZERO;
        assert_eq!(
            live.refresh(false),
            Some(ConfigChange::Loaded(ConfigFileUsed { path: path.clone(), sha256: None }))
        );
        assert_eq!(live.current().file.gate.policy, None, "removed for good: the defaults");
    }

    /// An editor that saves in place truncates the file, then writes it: between the two,
    /// and while it writes, the file is not the version meant, and the gate must not fall
    /// back to the defaults (or to half a file) meanwhile.
    #[test]
    fn a_file_emptied_or_written_in_place_counts_only_once_it_has_settled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let strict = "[gate]\ntrust_project_files = false\nfreshness_seconds = 60\n";
        write(&path, strict);
        let mut live = LiveConfig::new(path.clone(), UserConfig::load(&path).unwrap());
        assert_eq!(live.refresh(false), None);

        std::fs::write(&path, "").unwrap();
        assert_eq!(live.refresh(false), None, "emptied: not the defaults");
        std::fs::write(&path, "[gate]\n").unwrap();
        assert_eq!(live.refresh(false), None, "half written: not applied");
        assert_eq!(live.current().file.gate.trust_project_files, Some(false), "the last good version stays");
        std::fs::write(&path, strict).unwrap();
        assert_eq!(live.refresh(false), None, "the write completed: the same version, nothing changed");
        assert_eq!(live.current().file.gate.freshness_seconds, Some(60));

        std::fs::write(&path, "[gate]\nfreshness_seconds = 30\n").unwrap();
        assert_eq!(live.refresh(false), None, "an edit in place waits");
        assert_eq!(live.refresh(false), None, "and keeps waiting while the settle time runs");
        live.settle = Duration::ZERO;
        assert!(matches!(live.refresh(false), Some(ConfigChange::Loaded(_))), "then it counts");
        assert_eq!(live.current().file.gate.freshness_seconds, Some(30));
        assert_eq!(live.refresh(false), None, "once");
    }

    #[test]
    fn a_config_that_is_a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        write(&path, "[gate]\npolicy = \"panel\"\n");
        let mut live = LiveConfig::new(path.clone(), UserConfig::load(&path).unwrap());
        std::fs::remove_file(&path).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(&path).status().unwrap().success());
        let Some(ConfigChange::Rejected { error, .. }) = live.refresh(false) else { panic!("a FIFO is refused") };
        assert!(error.contains("is a FIFO, not a regular file"), "{error}");
        assert_eq!(live.current().file.gate.policy, Some(GatePolicy::Panel));
        let error = UserConfig::load(&path).unwrap_err().to_string();
        assert!(error.contains("config.toml is a FIFO"), "a start on it is refused: {error}");
    }

    #[test]
    fn a_changed_root_or_server_limit_waits_for_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        write(&path, "");
        let mut live = LiveConfig::new(path.clone(), UserConfig::load(&path).unwrap());
        write(&path, "claude_roots = [\"/elsewhere\"]\n[server]\nidle_seconds = 5\n");
        live.refresh(false);
        assert_eq!(live.status().restart_needed, ["claude_roots", "[server]"]);
    }

    /// A witness account reads a project's file as its user wrote it: a link the served
    /// user put there (to the witness's key, whose bytes a parse error would show) is
    /// refused, naming it; its own daemon follows the link as before.
    #[test]
    fn a_witness_reads_no_project_file_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("signing.key");
        write(&key, "secret key bytes\n");
        let path = dir.path().join(".judged.toml");
        std::os::unix::fs::symlink(&key, &path).unwrap();
        let error = ProjectFiles::read_in_place().gate(&path).unwrap_err().to_string();
        assert!(error.contains("is a symbolic link, not a file of its directory's owner"), "{error}");
        assert!(!error.contains("secret"), "{error}");
        let own = ProjectFiles::default().gate(&path).unwrap_err().to_string();
        assert!(own.contains("line 1, column 8: key with no value"), "its own daemon reads through the link: {own}");
        assert!(!own.contains("secret"), "and shows none of what it read: {own}");
    }

    #[test]
    fn a_project_file_that_stops_parsing_keeps_its_last_good_gate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".judged.toml");
        let mut projects = ProjectFiles::default();
        write(&path, "[gate]\npolicy = \"off\"\n");
        assert_eq!(projects.gate(&path).unwrap().layer.policy, Some(GatePolicy::Off));
        write(&path, "[gate]\npolicy = \"of\"\n");
        let kept = projects.gate(&path).unwrap();
        assert_eq!(kept.layer.policy, Some(GatePolicy::Off));
        assert!(kept.rejected.as_deref().is_some_and(|e| e.contains(".judged.toml line 2")), "{kept:?}");

        let never_good = dir.path().join("other.toml");
        write(&never_good, "[gate]\npolicy = 3\n");
        assert!(projects.gate(&never_good).is_err(), "with no good version, the error is the answer");
    }
}
