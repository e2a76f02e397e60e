//! What `judged` and `judge-evidence` do on the disk, the same in the daemon and the
//! CLI's direct mode, over the pure rules of `judged_core`:
//!
//! * [`files`] holds the file-system helpers both modes share (safe reads, atomic writes,
//!   session discovery, [`files::FsEnv`]: the rules' view of the real file system), and a
//!   path a caller names confined to its project;
//! * [`config_file`] reads a config file that may be hostile (bounded, never blocking, its
//!   owner checked);
//! * [`round`] is what every client of a review round does around the rules (ask again
//!   while the host persists its log, write the artifacts);
//! * [`worktree`] reads the reviewed git tree (and, for a witness account, reads it without
//!   running anything the repository configures);
//! * [`sandbox`] keeps a process's file system within bounds (Landlock): a witness
//!   account's jurors away from its key, its git inside the work tree it reads.

#![warn(missing_docs)]

pub mod config_file;
pub mod files;
pub mod round;
pub mod sandbox;
pub mod worktree;
