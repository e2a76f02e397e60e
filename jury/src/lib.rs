//! The jury: judged runs reviewer CLIs of other model families itself, checks who really
//! answered, and hands back one verdict packet a gate can act on.
//!
//! # What a jury is
//!
//! A review only counts when a model of *another family* than the author did it. A jury
//! (the co-dialectic judge-panel cascade, `docs/spec/jury.md`) asks two or more small
//! *jurors* of different families the same question in parallel: does this artifact pass
//! the *rubric*? Each answers pass, fail or uncertain with a confidence. When they agree
//! confidently (every confidence ≥ the threshold, 80 by default) that is the verdict;
//! otherwise (disagreement, low confidence, any uncertain, or too few answers) a
//! *tiebreaker* juror of yet another family decides, and the final confidence weighs it
//! with the stage-1 jurors that sided with it. The packet also says whether at least two
//! families really answered (`cross_family.degraded`): the one field a gate must read.
//!
//! # The rule that makes it evidence
//!
//! A juror's identity is checked, never trusted. Its family is derived from its configured
//! model (never declared), and after every run the model that answered is read back from
//! the juror CLI's *own* record (Codex's reroute event or its trace of the server's events,
//! Gemini's `stats.models`, Claude Code's transcript, Copilot's debug log of the wire
//! responses, Qwen Code's `stats.models`). A juror whose record names a model of another family, or that left no
//! record of who answered (a record of the model *asked for* is none), is down with the
//! reason and never counts toward cross-family health.
//!
//! # Modules, in the order a run uses them
//!
//! * [`config`]: the `[jury]` TOML table and its validation into a [`config::Jury`].
//! * [`rubric`]: the built-in rubrics, personas, and the prompt every juror receives.
//! * [`convene`]: the driver. Stage 1 in parallel threads, the tiebreaker when needed,
//!   one deadline for everything; returns the [`packet::Packet`].
//! * [`juror`]: one juror end to end (run, one retry on an answer without JSON, parse,
//!   identity check), always ending as a packet line.
//! * [`preset`]: per CLI, the argv (never the prompt), environment, scratch home and where
//!   the answer is printed.
//! * [`run`]: one process in its own group, killed with its group at the deadline, output
//!   capped.
//! * [`identity`]: reading each CLI's record of which model answered.
//! * [`extract`], [`verdict`], [`codex_judge`]: finding the JSON in a noisy answer and
//!   reading it as a panel verdict or an insistir codex-judge verdict.
//! * [`cascade`]: the spec's aggregation, tiebreaker choice, final verdict, health and
//!   flags as pure functions; [`cost`]: the pay-per-token estimate.
//! * [`packet`]: the output, keys in the reference's order.
//!
//! Everything is synchronous std code with threads; the daemon calls [`convene::convene`]
//! from a worker thread so a minute-long jury does not hold up anything else.

#![warn(missing_docs)]

pub mod cascade;
pub mod codex_judge;
pub mod config;
pub mod convene;
pub mod cost;
pub mod extract;
pub mod identity;
pub mod juror;
pub mod packet;
pub mod preset;
pub mod rubric;
pub mod run;
pub mod verdict;
