//! The shared heart of `judged` and `judge-evidence`.
//!
//! Everything here is deterministic and free of async runtimes, so the daemon and the
//! CLI's direct mode run exactly the same code, and tests need no daemon:
//!
//! * [`adapter`] turns one raw log line of a host (Copilot CLI, Claude Code) into the one
//!   normalized [`event::Record`] that everything downstream reads;
//! * [`log::SessionLog`] is a session log as a sequence of complete lines with byte ranges
//!   and chain hashes, whether it came from a file or from the daemon's store;
//! * [`rules`] are the evidence rules (marker, challenge, verify, validate), pure
//!   functions over a `SessionLog`, and [`review_text`] reads the score and verdict out of
//!   a reviewer's answer;
//! * [`host_chain`] is Copilot CLI's own `parentId` chain, checked by ingest and the rules;
//! * [`signature`] is judged's Ed25519 signature on the artifacts it issues, which anyone
//!   holding its public key checks, and [`attestation`] the signed statement that a
//!   commit's tree was reviewed (in-toto in DSSE), which git carries;
//! * [`config_file`] reads a config file that may be hostile (bounded, never blocking);
//! * [`files`] holds the few file-system helpers both modes share (safe reads, atomic
//!   writes, session discovery), and [`round`] what every client of a review round does
//!   around the rules (ask again while the host persists its log, write the artifacts).
//!   With [`worktree`] (the reviewed git tree), the only modules here that touch the disk;
//! * [`sandbox`] keeps a process's file system within bounds (Landlock): a witness
//!   account's jurors away from its key, its git inside the work tree it reads.

#![warn(missing_docs)]

pub mod adapter;
pub mod attestation;
pub mod chain;
pub mod config_file;
pub mod event;
pub mod family;
pub mod files;
pub mod host_chain;
pub mod log;
pub mod pyjson;
pub mod review_text;
pub mod round;
pub mod rules;
pub mod sandbox;
pub mod signature;
pub mod timestamp;
pub mod trace;
pub mod worktree;
