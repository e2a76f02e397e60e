//! The host's own record chain (docs/spec/evidence-protocol.md §9, docs/spec/host-formats.md
//! §B.2): Copilot CLI names the event before each persisted event in `parentId` (the first
//! event has none); Claude Code names the record before each record that has a `uuid` in
//! `parentUuid` (records without a `uuid`, its bookkeeping, sit between and are not on the
//! chain).
//!
//! Nothing but the host writes that chain, so lines inserted into a log by anyone else
//! (or removed from it) show where the host's next event points past them. The daemon
//! journals a break as it ingests; the evidence rules check the same chain over the bytes
//! they read, so both modes refuse a forged reviewer lifecycle alike.
//!
//! Where Claude Code's order is not a plain list: a compaction record names no parent but
//! the record it follows in `logicalParentUuid` (the adapter reads that as its parent); a
//! sub-agent transcript is all sidechain records, chained from its own first record; and
//! sidechain records in a main transcript (older clients wrote sub-agents' records there)
//! form their own conversations, so a chain of root records passes over them. A rewind
//! (a message edited in place, continuing from an earlier record) or one session resumed
//! in two terminals at once is not a list either: each shows as a break, as a forged line
//! would, and a review round across it is run again. A transcript's first record may name
//! a parent from another session (one resumed or forked): nothing precedes it.

use crate::adapter::{self, ChainRule};
use crate::event::{Envelope, Host};

/// Where the chain broke: the host's event names a parent that is not the event before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainBreak {
    /// The field that names the parent (`parentId`, `parentUuid`), for messages.
    pub field: &'static str,
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
    host: Host,
    /// The event the next one should name.
    reached: Option<String>,
    ahead: Vec<Held<P>>,
    /// Claude Code: whether the chain is of root records (a main transcript) or of
    /// sidechain records (a sub-agent's), from the first record it followed.
    root_lane: Option<bool>,
}

impl<P: Clone> HostChain<P> {
    /// Whether `host` writes a chain this checks.
    pub fn kept_by(host: Host) -> bool {
        adapter::of(host).chain().is_some()
    }

    /// The host's chain rule, if it keeps one.
    fn rule(&self) -> Option<ChainRule> {
        adapter::of(self.host).chain()
    }

    /// The chain of a log of `host` read from its start.
    pub fn new(host: Host) -> HostChain<P> {
        HostChain::after(host, None)
    }

    /// The chain as it stands after the event `reached` (a log read from the middle).
    pub fn after(host: Host, reached: Option<String>) -> HostChain<P> {
        HostChain { host, reached, ahead: Vec::new(), root_lane: None }
    }

    /// The field naming a record's parent, as the host spells it.
    fn field(&self) -> &'static str {
        self.rule().map_or("parentId", |rule| rule.field)
    }

    /// Whether `envelope` is on this chain: every record of a host without lanes (every
    /// Copilot event); else a record with an id, of the chain's lane (a Claude Code
    /// sidechain record is not on a chain of root records).
    fn on_chain(&mut self, envelope: &Envelope) -> bool {
        if !self.rule().is_some_and(|rule| rule.lanes) {
            return true;
        }
        if envelope.id.is_none() {
            return false;
        }
        let lane = *self.root_lane.get_or_insert(envelope.root);
        envelope.root || !lane
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
        if !self.on_chain(envelope) {
            return Ok(());
        }
        // A Claude Code transcript may open by continuing another session's conversation
        // (a resumed or forked session names the record it continues from); nothing
        // before its first record can have been slipped in.
        let opening =
            self.rule().is_some_and(|rule| rule.opens_on_another) && self.reached.is_none() && self.ahead.is_empty();
        if envelope.parent_id == self.reached || opening {
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
        let broken = ChainBreak { field: self.field(), expected_parent: oldest.reached, found_parent: oldest.parent };
        if oldest.id.is_some() {
            self.reached = oldest.id;
        }
        self.release_waiting();
        Err((oldest.at, broken))
    }

    /// The break the log ends with, if an event still waits for its parent.
    pub fn finish(mut self) -> Option<(P, ChainBreak)> {
        let field = self.field();
        (!self.ahead.is_empty()).then(|| {
            let oldest = self.ahead.remove(0);
            (oldest.at, ChainBreak { field, expected_parent: oldest.reached, found_parent: oldest.parent })
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
            "{} chain break: the event names parent {} where the event before it is {}",
            self.field,
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
        let mut chain = HostChain::new(Host::CopilotCli);
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
            let mut chain = HostChain::new(Host::CopilotCli);
            let broken: Vec<_> =
                log.records().filter_map(|(line, record)| chain.follow(record, line.number).err()).collect();
            assert_eq!(broken, []);
            assert_eq!(chain.finish(), None);
        }
    }

    const CLAUDE_TRANSCRIPTS: [(&str, &[u8]); 4] = [
        (
            "marker-challenge",
            include_bytes!(
                "../../fixtures/claude-code-2.1.328/marker-challenge/70e11cfc-c3fb-426c-9dfc-374e15ffb0af.jsonl"
            ),
        ),
        (
            "stop-block",
            include_bytes!("../../fixtures/claude-code-2.1.328/stop-block/842a47e8-8d5c-4a93-b57f-50bbacc45aae.jsonl"),
        ),
        (
            "stop-hook",
            include_bytes!("../../fixtures/claude-code-2.1.328/stop-hook/2a79783f-e47d-4d9a-9a70-e45e5ba0c980.jsonl"),
        ),
        (
            "stop-hook sub-agent",
            include_bytes!(
                "../../fixtures/claude-code-2.1.328/stop-hook/2a79783f-e47d-4d9a-9a70-e45e5ba0c980/subagents/agent-af2eb9c1b263f2ac6.jsonl"
            ),
        ),
    ];

    /// The breaks in a Claude Code transcript, each at its line number.
    fn claude_breaks(bytes: &[u8]) -> Vec<(u64, ChainBreak)> {
        let log = crate::log::SessionLog::from_bytes(Host::ClaudeCode, "t.jsonl", bytes.to_vec());
        let mut chain = HostChain::new(Host::ClaudeCode);
        let mut found: Vec<_> =
            log.records().filter_map(|(line, record)| chain.follow(record, line.number).err()).collect();
        found.extend(chain.finish());
        found
    }

    /// A Claude Code record with a uuid, as the host writes its envelope.
    fn claude_record(uuid: &str, parent: Option<&str>, sidechain: bool) -> String {
        let parent = parent.map_or_else(|| "null".to_owned(), |p| format!("\"{p}\""));
        format!(
            "{{\"type\":\"user\",\"uuid\":\"{uuid}\",\"parentUuid\":{parent},\"isSidechain\":{sidechain},\
             \"sessionId\":\"s\",\"cwd\":\"/p\",\"timestamp\":\"2026-12-01T00:00:00.000Z\",\
             \"message\":{{\"role\":\"user\",\"content\":\"hi\"}}}}\n"
        )
    }

    fn last_uuid(bytes: &[u8]) -> String {
        let mut records = std::str::from_utf8(bytes).unwrap().lines().rev();
        let uuid =
            |line: &str| serde_json::from_str::<serde_json::Value>(line).ok()?["uuid"].as_str().map(str::to_owned);
        records.find_map(uuid).expect("a record with a uuid")
    }

    /// Every transcript Claude Code 2.1.328 wrote for the fixtures (a main transcript with
    /// records without a uuid between the others, one that ran a sub-agent, and the
    /// sub-agent's own, all sidechain) is one chain.
    #[test]
    fn the_real_claude_code_transcripts_are_one_chain_each() {
        for (name, bytes) in CLAUDE_TRANSCRIPTS {
            assert_eq!(claude_breaks(bytes), [], "{name}");
        }
    }

    /// A record appended by anyone but the host: naming a parent that is not the last
    /// record is a break where it stands; naming the last one, consistent, is a break
    /// once the host's own next record points past it.
    #[test]
    fn a_record_appended_to_a_claude_code_transcript_by_someone_else_breaks_the_chain() {
        let (_, real) = CLAUDE_TRANSCRIPTS[0];
        let lines = real.iter().filter(|&&b| b == b'\n').count() as u64;
        let host_last = last_uuid(real);
        let mut forged = real.to_vec();
        forged.extend(claude_record("forged-1", Some("not-the-last"), false).as_bytes());
        let found = claude_breaks(&forged);
        assert_eq!(found.iter().map(|(at, _)| *at).collect::<Vec<_>>(), [lines + 1], "{found:?}");
        let message = found[0].1.to_string();
        assert!(message.contains("parentUuid chain break: the event names parent `not-the-last`"), "{message}");

        let mut forged = real.to_vec();
        forged.extend(claude_record("forged-1", Some(&host_last), false).as_bytes());
        assert_eq!(claude_breaks(&forged), [], "consistent so far: nothing says it is not the host's");
        forged.extend(claude_record("host-next", Some(&host_last), false).as_bytes());
        let found = claude_breaks(&forged);
        assert_eq!(found.iter().map(|(at, _)| *at).collect::<Vec<_>>(), [lines + 2], "{found:?}");
        assert_eq!(found[0].1.expected_parent.as_deref(), Some("forged-1"));
    }

    /// What the client writes that is not a plain list: a compaction record with no
    /// parent but a logical one, and a main transcript with sidechain records (its
    /// sub-agents', as older clients wrote them) between its own.
    #[test]
    fn compaction_and_sidechain_records_keep_a_claude_code_chain_whole() {
        let (_, real) = CLAUDE_TRANSCRIPTS[0];
        let last = last_uuid(real);
        let mut log = real.to_vec();
        let compaction = format!(
            "{{\"type\":\"system\",\"subtype\":\"compact_boundary\",\"uuid\":\"c-1\",\"parentUuid\":null,\
             \"logicalParentUuid\":\"{last}\",\"isSidechain\":false,\"sessionId\":\"s\",\"timestamp\":\"2026-12-01T00:00:00.000Z\"}}\n"
        );
        log.extend(compaction.as_bytes());
        log.extend(claude_record("after-compaction", Some("c-1"), false).as_bytes());
        log.extend(claude_record("side-1", None, true).as_bytes());
        log.extend(claude_record("side-2", Some("side-1"), true).as_bytes());
        log.extend(claude_record("main-next", Some("after-compaction"), false).as_bytes());
        assert_eq!(claude_breaks(&log), []);
        // A transcript that opens by naming a record of another session.
        let resumed = [claude_record("r-1", Some("elsewhere"), false), claude_record("r-2", Some("r-1"), false)];
        assert_eq!(claude_breaks(resumed.concat().as_bytes()), []);
        // A compaction whose logical parent is not the last record is no continuation.
        let mut wrong = real.to_vec();
        wrong.extend(compaction.replace(&last, "elsewhere").as_bytes());
        assert_eq!(claude_breaks(&wrong).len(), 1);
    }
}
