//! The host's own event chain, as Copilot CLI writes it (spec evidence-protocol §9):
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

/// The chain followed line by line.
#[derive(Clone, Debug, Default)]
pub struct HostChain {
    previous_id: Option<String>,
}

impl HostChain {
    /// Whether `host` writes a chain this checks (Claude Code's `parentUuid` forms a tree
    /// with sidechains and compaction, so it is not one).
    pub fn kept_by(host: Host) -> bool {
        host == Host::CopilotCli
    }

    /// The chain as it stands after the event `previous_id` (a log read from the middle).
    pub fn after(previous_id: Option<String>) -> HostChain {
        HostChain { previous_id }
    }

    /// Follow one more event; a break when its parent is not the event before it.
    pub fn follow(&mut self, envelope: &Envelope) -> Result<(), ChainBreak> {
        let result = if envelope.parent_id == self.previous_id {
            Ok(())
        } else {
            Err(ChainBreak { expected_parent: self.previous_id.clone(), found_parent: envelope.parent_id.clone() })
        };
        if envelope.id.is_some() {
            self.previous_id.clone_from(&envelope.id);
        }
        result
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

    #[test]
    fn a_linear_chain_holds_and_an_event_pointing_past_inserted_lines_breaks_it() {
        let mut chain = HostChain::default();
        assert_eq!(chain.follow(&event("a", None)), Ok(()));
        assert_eq!(chain.follow(&event("b", Some("a"))), Ok(()));
        // Two lines appended by someone else, consistent among themselves ...
        assert_eq!(chain.follow(&event("x", Some("b"))), Ok(()));
        assert_eq!(chain.follow(&event("y", Some("x"))), Ok(()));
        // ... and the host's next event still points at its own last one.
        let broken = chain.follow(&event("c", Some("b"))).unwrap_err();
        assert_eq!((broken.expected_parent.as_deref(), broken.found_parent.as_deref()), (Some("y"), Some("b")));
        assert!(broken.to_string().contains("parent `b` where the event before it is `y`"));
    }

    #[test]
    fn the_first_event_has_no_parent() {
        assert!(HostChain::default().follow(&event("a", Some("z"))).is_err());
    }
}
