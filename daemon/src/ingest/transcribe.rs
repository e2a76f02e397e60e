//! Sessions a host keeps in a database rather than in log files (OpenCode's SQLite
//! database). A [`Transcriber`] writes them out as logs of judged's own under the host's
//! first root before each full catch-up; ingest then witnesses those logs like any host's,
//! and a session the database no longer holds as it was becomes its log's tamper.

use judged_core::adapter;
use judged_core::event::Host;
use std::path::{Path, PathBuf};

/// A reader of one host's session databases into logs.
pub trait Transcriber: Send {
    /// The host whose sessions these are.
    fn host(&self) -> Host;
    /// The databases it is set to read.
    fn databases(&self) -> &[PathBuf];
    /// Append what each of `admitted` (of [`Transcriber::databases`], those admitted now:
    /// made, and no link) holds past its logs under `root`; the sessions found rewritten,
    /// and the databases that could not be read (each says why; they are read again at
    /// the next catch-up).
    fn read_into(&mut self, root: &Path, admitted: &[PathBuf]) -> (Vec<Rewritten>, Vec<ReadError>);
}

/// A session whose events in the database no longer are those its log holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewritten {
    /// The session's log.
    pub log: PathBuf,
    /// The first line that no longer holds (from 1), and its byte offset.
    pub line: u64,
    pub offset: u64,
}

/// Why a database could not be read this time; the next catch-up tries again.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {}'s database {}: {source}", adapter::of(*host).name(), path.display())]
    Database { host: Host, path: PathBuf, source: rusqlite::Error },
    #[error("cannot write judged's log of an {} session, {}: {source}", adapter::of(*host).name(), path.display())]
    Log { host: Host, path: PathBuf, source: std::io::Error },
}
