//! What `judge-evidence` keeps of the reference helper's contract beyond the evidence rules
//! (which live in `judged_core`, shared with the daemon): its reviewer routing and its
//! review-round gate, pure functions over typed inputs that only this CLI asks.
//!
//! * [`routing`] decides which reviewer backend a review call uses (`judge-evidence route`);
//! * [`round_gate`] is the review-gate transition table for one completed round
//!   (`judge-evidence gate`).

#![warn(missing_docs)]

pub mod round_gate;
pub mod routing;
