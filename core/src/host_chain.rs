//! The host's own event chain, as Copilot CLI writes it (docs/spec/evidence-protocol.md §9):
//! every persisted event's `parentId` is the `id` of the event before it, and the first
//! event has none.
//!
//! Nothing but the host writes that chain, so lines inserted into a log by anyone else
//! (or removed from it) show where the host's next event points past them. The daemon
//! journals a break as it ingests; the evidence rules check the same chain over the bytes
//! they read, so both modes refuse a forged reviewer lifecycle alike.

use crate::event::{Envelope, Host};

/// Where the chain broke: the host's event names a parent that is not the event before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainBreak {
    /// The id of the event before (none before the first event).
    pub expected_parent: Option<String>,
    /// The parent the event names.
    pub found_parent: Option<String>,
}

/// Events held ahead of their parent at most. The host writes two events it records at
/// the same moment in either order (seen with Copilot CLI 1.0.102: a sub-agent's
/// `subagent.configured` written before the `session.model_change` it names as parent,
/// about once in 400 sessions); more than that is not the host's doing.
const MAX_AHEAD: usize = 2;

/// An event read before its parent, and where (the caller's position).
#[derive(Clone, Debug)]
struct Held<P> {
    id: Option<String>,
    parent: Option<String>,
    /// The event the chain had reached when this one was read.
    reached: Option<String>,
    at: P,
}

/// The chain followed line by line; `P` is how a caller names a line's position.
///
/// An event naming the event the chain has reached continues it. One naming another is
/// held, and continues the chain when its parent arrives: the host may write two events
/// in the other order, and every event still has exactly one place in one chain. Lines
/// inserted by anyone else cannot all find one: the host's next event names the event
/// before them, which a forged line already follows, so it waits for a parent that never
/// comes and is a break once more than [`MAX_AHEAD`] events wait, or at [`HostChain::finish`].
#[derive(Clone, Debug)]
pub struct HostChain<P> {
    /// The event the next one should name.
    reached: Option<String>,
    ahead: Vec<Held<P>>,
}

impl<P> Default for HostChain<P> {
    fn default() -> HostChain<P> {
        HostChain { reached: None, ahead: Vec::new() }
    }
}

impl<P: Clone> HostChain<P> {
    /// Whether `host` writes a chain this checks (Claude Code's `parentUuid` forms a tree
    /// with sidechains and compaction, so it is not one).
    pub fn kept_by(host: Host) -> bool {
        host == Host::CopilotCli
    }

    /// The chain as it stands after the event `reached` (a log read from the middle).
    pub fn after(reached: Option<String>) -> HostChain<P> {
        HostChain { reached, ahead: Vec::new() }
    }

    /// Where the oldest event still waiting for its parent is: until its parent comes, the
    /// chain from there is not known to hold.
    pub fn oldest_waiting(&self) -> Option<&P> {
        self.ahead.first().map(|held| &held.at)
    }

    /// The event the chain has reached: what a log read from the middle resumes after.
    pub fn reached(&self) -> Option<String> {
        self.reached.clone()
    }

    /// Follow one more event, at `at`; a break (and where it was) when an event has waited
    /// for its parent longer than the host ever makes one wait.
    pub fn follow(&mut self, envelope: &Envelope, at: P) -> Result<(), (P, ChainBreak)> {
        if envelope.parent_id == self.reached {
            // The common case, once a line: no allocation (`clone_from` reuses the buffer).
            if envelope.id.is_some() {
                self.reached.clone_from(&envelope.id);
            }
            self.release_waiting();
            return Ok(());
        }
        self.ahead.push(Held {
            id: envelope.id.clone(),
            parent: envelope.parent_id.clone(),
            reached: self.reached.clone(),
            at,
        });
        if self.ahead.len() <= MAX_AHEAD {
            return Ok(());
        }
        // The oldest waited too long: a break. The chain goes on from it, as the host's
        // own events after it name it.
        let oldest = self.ahead.remove(0);
        let broken = ChainBreak { expected_parent: oldest.reached, found_parent: oldest.parent };
        if oldest.id.is_some() {
            self.reached = oldest.id;
        }
        self.release_waiting();
        Err((oldest.at, broken))
    }

    /// The break the log ends with, if an event still waits for its parent.
    pub fn finish(mut self) -> Option<(P, ChainBreak)> {
        (!self.ahead.is_empty()).then(|| {
            let oldest = self.ahead.remove(0);
            (oldest.at, ChainBreak { expected_parent: oldest.reached, found_parent: oldest.parent })
        })
    }

    /// Continue the chain with each waiting event that follows the one it reached.
    fn release_waiting(&mut self) {
        while let Some(next) = self.ahead.iter().position(|h| h.parent == self.reached) {
            let next = self.ahead.remove(next);
            if next.id.is_some() {
                self.reached = next.id;
            }
        }
    }
}

impl std::fmt::Display for ChainBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = |id: &Option<String>| id.as_deref().map_or_else(|| "none".to_owned(), |id| format!("`{id}`"));
        write!(
            f,
            "parentId chain break: the event names parent {} where the event before it is {}",
            name(&self.found_parent),
            name(&self.expected_parent)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: &str, parent: Option<&str>) -> Envelope {
        Envelope { id: Some(id.into()), parent_id: parent.map(Into::into), ..Envelope::default() }
    }

    /// Follow `events` (id, parent) from the start; the breaks, each at its event's index.
    fn breaks(events: &[(&str, Option<&str>)]) -> Vec<(usize, ChainBreak)> {
        let mut chain = HostChain::default();
        let mut found: Vec<(usize, ChainBreak)> = events
            .iter()
            .enumerate()
            .filter_map(|(n, (id, parent))| chain.follow(&event(id, *parent), n).err())
            .collect();
        found.extend(chain.finish());
        found
    }

    #[test]
    fn a_linear_chain_holds_and_an_event_pointing_past_inserted_lines_breaks_it() {
        // Two lines appended by someone else, consistent among themselves, and the host's
        // next events still point at its own last one.
        let forged =
            [("a", None), ("b", Some("a")), ("x", Some("b")), ("y", Some("x")), ("c", Some("b")), ("d", Some("c"))];
        let found = breaks(&forged);
        assert_eq!(found.len(), 1, "{found:?}");
        let (at, broken) = &found[0];
        assert_eq!(*at, 4, "the host's event that points past them");
        assert_eq!((broken.expected_parent.as_deref(), broken.found_parent.as_deref()), (Some("y"), Some("b")));
        assert!(broken.to_string().contains("parent `b` where the event before it is `y`"));
        // However long the host goes on after them.
        let mut long = forged.to_vec();
        long.extend([("e", Some("d")), ("f", Some("e")), ("g", Some("f"))]);
        assert_eq!(breaks(&long).iter().map(|(at, _)| *at).collect::<Vec<_>>(), [4]);
    }

    /// What Copilot CLI 1.0.102 wrote once: two events of one moment in the other order.
    #[test]
    fn two_events_the_host_wrote_in_the_other_order_are_one_chain() {
        let swapped = [("a", None), ("b", Some("a")), ("d", Some("c")), ("c", Some("b")), ("e", Some("d"))];
        assert_eq!(breaks(&swapped), []);
        // A log read between the two ends with one waiting: that is a break until the
        // other arrives.
        assert_eq!(breaks(&swapped[..3]).iter().map(|(at, _)| *at).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn a_removed_line_and_a_wrong_first_event_are_breaks() {
        let removed = [("a", None), ("b", Some("a")), ("d", Some("c")), ("e", Some("d")), ("f", Some("e"))];
        assert_eq!(breaks(&removed).iter().map(|(at, _)| *at).collect::<Vec<_>>(), [2]);
        assert_eq!(breaks(&[("a", Some("z"))]).len(), 1);
    }

    /// The real logs (fixtures/copilot-1.0.102/swapped-events) are one chain each.
    #[test]
    fn the_real_logs_with_two_events_swapped_are_one_chain() {
        let swapped: [&[u8]; 2] = [
            include_bytes!("../../fixtures/copilot-1.0.102/swapped-events/events.jsonl"),
            include_bytes!("../../fixtures/copilot-1.0.102/swapped-events/again.jsonl"),
        ];
        for bytes in swapped {
            let log = crate::log::SessionLog::from_bytes(Host::CopilotCli, "events.jsonl", bytes.to_vec());
            let mut chain = HostChain::default();
            let broken: Vec<_> =
                log.records().filter_map(|(line, record)| chain.follow(record, line.number).err()).collect();
            assert_eq!(broken, []);
            assert_eq!(chain.finish(), None);
        }
    }
}
