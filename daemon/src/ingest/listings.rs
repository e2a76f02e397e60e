//! Directory listings kept between discoveries, and the file fingerprints that tell
//! whether something changed since it was last read.

use judged_io::files;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Size, change time and inode: what changes when a host appends or a file is replaced.
/// The change time, unlike the modification time, cannot be set back by the writer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Fingerprint {
    pub len: u64,
    ctime: (i64, i64),
    pub ino: u64,
}

impl Fingerprint {
    pub fn of(meta: &fs::Metadata) -> Fingerprint {
        Fingerprint { len: meta.len(), ctime: (meta.ctime(), meta.ctime_nsec()), ino: meta.ino() }
    }
}

/// Directory listings, each with how its directory looked when read: a directory that
/// still looks the same holds the same entries, so discovering costs one `stat` per
/// directory, not reading each one.
#[derive(Default)]
pub(super) struct Listings {
    kept: rustc_hash::FxHashMap<std::ffi::OsString, Kept>,
}

struct Kept {
    looked: Fingerprint,
    /// Read well after the directory last changed. A change within the file system's
    /// timestamp granularity of the read can leave the change time as it was, so a
    /// listing read that close to a change is read again next time.
    settled: bool,
    entries: files::Listing,
}

impl Listings {
    /// Longer than any file system's timestamp granularity (coarse clocks tick at 1-10 ms).
    const SETTLE: std::time::Duration = std::time::Duration::from_millis(100);
    /// Directories remembered at most; past that the cache starts over.
    const CAPACITY: usize = 100_000;

    /// The entries of `dir` as kept, without looking at the directory; read when none is
    /// kept.
    pub fn kept_or_list(&mut self, dir: &Path) -> files::Listing {
        match self.kept.get(dir.as_os_str()) {
            Some(kept) => kept.entries.clone(),
            None => self.list(dir),
        }
    }

    /// The entries of `dir`, read again unless the directory looks as it did when kept.
    pub fn list(&mut self, dir: &Path) -> files::Listing {
        // Followed, as reading the directory follows a symlinked root.
        let Ok(meta) = fs::metadata(dir) else {
            self.kept.remove(dir.as_os_str());
            return files::Listing::default();
        };
        let looked = Fingerprint::of(&meta);
        if let Some(kept) = self.kept.get(dir.as_os_str()).filter(|k| k.settled && k.looked == looked) {
            return kept.entries.clone();
        }
        // A read that failed (say, out of file descriptors) is not kept: the directory's
        // logs would stay hidden until it changed.
        let Ok(entries) = files::read_entries(dir) else { return files::Listing::default() };
        // A change time before the epoch or in the future: never settled, read each time.
        let changed = u64::try_from(meta.ctime())
            .ok()
            .and_then(|s| std::time::UNIX_EPOCH.checked_add(std::time::Duration::new(s, meta.ctime_nsec() as u32)));
        let settled = changed
            .and_then(|changed| std::time::SystemTime::now().duration_since(changed).ok())
            .is_some_and(|age| age > Self::SETTLE);
        if self.kept.len() >= Self::CAPACITY {
            self.kept.clear();
        }
        self.kept.insert(dir.as_os_str().to_owned(), Kept { looked, settled, entries: entries.clone() });
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(entries: &[files::Entry]) -> Vec<String> {
        let mut names: Vec<String> =
            entries.iter().map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_kept_listing_never_hides_an_entry_added_since() {
        let dir = tempfile::tempdir().unwrap();
        let mut listings = Listings::default();
        fs::write(dir.path().join("a"), b"").unwrap();
        assert_eq!(names(&listings.list(dir.path())), ["a"]);
        // Within the timestamp granularity of that read: the change time may not move.
        fs::write(dir.path().join("b"), b"").unwrap();
        assert_eq!(names(&listings.list(dir.path())), ["a", "b"]);
        // Long after: the listing is kept, and a later entry still changes the directory.
        std::thread::sleep(Listings::SETTLE * 2);
        assert_eq!(names(&listings.list(dir.path())), ["a", "b"]);
        assert!(listings.kept[dir.path().as_os_str()].settled, "a listing read well after the last change is kept");
        fs::create_dir(dir.path().join("c")).unwrap();
        // Taken as kept, the listing is as it was; looked at, the change shows.
        assert_eq!(names(&listings.kept_or_list(dir.path())), ["a", "b"]);
        let entries = listings.list(dir.path());
        assert_eq!(names(&entries), ["a", "b", "c"]);
        assert!(entries.iter().any(|(p, is_dir)| p.ends_with("c") && *is_dir));
        // A directory that goes away lists as empty and is forgotten.
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(listings.list(&path).is_empty());
        assert!(listings.kept.is_empty());
    }
}
