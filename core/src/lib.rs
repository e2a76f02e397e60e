//! The shared heart of `judged` and `judge-evidence`: the pure part.
//!
//! Everything here is deterministic, reads no disk and runs no process, so the daemon and
//! the CLI's direct mode run exactly the same rules, and tests need no daemon. What both do
//! on the disk (safe reads, artifact writes, git trees, the sandbox) is `judged_io`'s.
//!
//! * [`adapter`] is what judged knows of each host's logs, one file per host behind
//!   `HostLog`: how one raw line becomes the one normalized [`event::Record`] that
//!   everything downstream reads;
//! * [`log::SessionLog`] is a session log as a sequence of complete lines with byte ranges
//!   and chain hashes, whether it came from a file or from the daemon's store;
//! * [`rules`] are the evidence rules (marker, challenge, verify, validate), pure
//!   functions over a `SessionLog` that reach the world through the `Env` trait, and
//!   [`review_text`] reads the score and verdict out of a reviewer's answer;
//! * [`host_chain`] is a host's own chain of records (`parentId`, `parentUuid`), checked by
//!   ingest and the rules;
//! * [`signature`] is judged's Ed25519 signature on the artifacts it issues, which anyone
//!   holding its public key checks, and [`attestation`] the signed statement that a
//!   commit's tree was reviewed (in-toto in DSSE), which git carries.

#![warn(missing_docs)]

pub mod adapter;
pub mod attestation;
pub mod chain;
pub mod event;
pub mod family;
pub mod host_chain;
pub mod log;
pub mod pyjson;
pub mod review_text;
pub mod rules;
pub mod signature;
pub mod timestamp;
pub mod trace;
