//! A session log as the rules see it: complete lines with byte ranges, hashes and records.
//!
//! Built the same way from a file (direct mode) or from the daemon's stored lines, so both
//! modes hash and parse identical bytes. Only complete lines (ending in `\n`) count; a
//! trailing partial line is a record the host has not finished writing.

use crate::adapter::{self, LineError};
use crate::chain::{self, Hash};
use crate::event::{Host, Record};
use sha2::{Digest, Sha256};

/// Bytes between two saved states of the running prefix hash: a prefix hash then costs at
/// most this much hashing, however long the log (the daemon keeps logs parsed between
/// requests, and a challenge hashes the prefix up to its marker).
const PREFIX_CHECKPOINT_BYTES: usize = 64 * 1024;

/// The complete lines of `bytes`, each with its `\n`; bytes after the last `\n` are not
/// a line yet. (`memchr` finds the newlines: a byte-at-a-time split was an eighth of the
/// daemon's ingest time.)
pub fn complete_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', bytes).map(move |newline| {
        let line = &bytes[start..=newline];
        start = newline + 1;
        line
    })
}

/// The length of the complete lines at the start of `bytes`.
pub fn complete_len(bytes: &[u8]) -> usize {
    memchr::memrchr(b'\n', bytes).map_or(0, |i| i + 1)
}

/// One complete line of a log.
#[derive(Clone, Debug)]
pub struct Line {
    /// 1-based line number.
    pub number: u64,
    /// Byte offset of the line's first byte in the log.
    pub start: u64,
    /// End offset, terminator included.
    pub end: u64,
    /// SHA-256 of the line's raw bytes, terminator included: the chain's input.
    pub sha256: Hash,
    /// The session chain through this line.
    pub chain: Hash,
    /// What the host adapter made of the line.
    pub parsed: Parsed,
}

/// A line as the host adapter read it. A malformed line is kept, not dropped: the rules
/// fail closed on it, naming the line, rather than reasoning over a log with a gap.
#[derive(Clone, Debug)]
pub enum Parsed {
    /// A record (boxed: most lines are records, and a `Line` stays small to move).
    Record(Box<Record>),
    /// Only whitespace: skipped, as the reference does.
    Blank,
    /// Not a record of this host, and why.
    Malformed(LineError),
}

/// One session log's complete lines, with a running prefix hash so that any prefix's
/// digest (what artifacts bind) is cheap to compute, however often it is asked.
#[derive(Clone, Debug)]
pub struct SessionLog {
    /// The host that writes the log, which decides how each line is read.
    pub host: Host,
    /// The path the log was read from (resolved by the caller).
    pub path: String,
    bytes: Vec<u8>,
    /// Every complete line, in file order.
    pub lines: Vec<Line>,
    /// The hash state after each whole multiple of [`PREFIX_CHECKPOINT_BYTES`].
    checkpoints: Vec<Sha256>,
    /// The hash state after the last checkpoint, fed up to the end of `bytes`.
    running: Sha256,
    /// What earlier lines stated for the lines after them.
    carried: adapter::Carried,
}

impl SessionLog {
    /// Split `bytes` into complete lines and parse each with the host's adapter.
    pub fn from_bytes(host: Host, path: impl Into<String>, bytes: Vec<u8>) -> SessionLog {
        let mut log = SessionLog {
            host,
            path: path.into(),
            bytes: Vec::new(),
            lines: Vec::new(),
            checkpoints: Vec::new(),
            running: Sha256::new(),
            carried: adapter::Carried::default(),
        };
        log.append(&bytes);
        log
    }

    /// Extend the log with bytes that followed it; only complete lines are taken. A log
    /// that only grows can so be kept and extended instead of re-read and re-parsed.
    pub fn append(&mut self, more: &[u8]) {
        let complete = complete_len(more);
        let mut chain = self.lines.last().map_or_else(|| chain::genesis(chain::SESSION_GENESIS_DOMAIN), |l| l.chain);
        let mut start = self.bytes.len() as u64;
        for raw in complete_lines(&more[..complete]) {
            let sha256 = chain::sha256(raw);
            chain = chain::link(&chain, &sha256);
            let end = start + raw.len() as u64;
            let number = self.lines.len() as u64 + 1;
            let mut parsed = parse(self.host, raw);
            if let Parsed::Record(record) = &mut parsed {
                self.carried.carry(self.host, record);
            }
            self.lines.push(Line { number, start, end, sha256, chain, parsed });
            start = end;
        }
        self.feed_prefix_hash(&more[..complete]);
        self.bytes.extend_from_slice(&more[..complete]);
    }

    /// Feed bytes appended at the end of the log to the running prefix hash, saving its
    /// state at every checkpoint boundary they cross.
    fn feed_prefix_hash(&mut self, mut more: &[u8]) {
        let mut at = self.bytes.len();
        while !more.is_empty() {
            let to_boundary = PREFIX_CHECKPOINT_BYTES - at % PREFIX_CHECKPOINT_BYTES;
            let (now, rest) = more.split_at(to_boundary.min(more.len()));
            self.running.update(now);
            at += now.len();
            if at.is_multiple_of(PREFIX_CHECKPOINT_BYTES) {
                self.checkpoints.push(self.running.clone());
            }
            more = rest;
        }
    }

    /// Length of the complete lines.
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Whether no complete line has been written yet.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The complete lines' raw bytes, as hashed.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// SHA-256 of the first `n` bytes (`n <= len`).
    pub fn prefix_sha256(&self, n: u64) -> String {
        let n = n as usize;
        let whole = (n / PREFIX_CHECKPOINT_BYTES).min(self.checkpoints.len());
        let mut hasher = whole.checked_sub(1).map_or_else(Sha256::new, |i| self.checkpoints[i].clone());
        hasher.update(&self.bytes[whole * PREFIX_CHECKPOINT_BYTES..n]);
        chain::to_hex(&hasher.finalize().into())
    }

    /// The chain head at the line that ends exactly at `offset`, if one does.
    pub fn chain_at(&self, offset: u64) -> Option<String> {
        let index = self.lines.binary_search_by_key(&offset, |l| l.end).ok()?;
        Some(chain::to_hex(&self.lines[index].chain))
    }

    /// Records with their lines, in file order.
    pub fn records(&self) -> impl DoubleEndedIterator<Item = (&Line, &Record)> {
        self.lines.iter().filter_map(|line| match &line.parsed {
            Parsed::Record(record) => Some((line, record.as_ref())),
            _ => None,
        })
    }

    /// Records whose line ends within the first `offset` bytes.
    pub fn records_within(&self, offset: u64) -> impl Iterator<Item = (&Line, &Record)> {
        self.records().take_while(move |(line, _)| line.end <= offset)
    }

    /// The first malformed line, as `(line number, what is wrong)`.
    pub fn first_malformed(&self) -> Option<(u64, &LineError)> {
        self.lines.iter().find_map(|line| match &line.parsed {
            Parsed::Malformed(error) => Some((line.number, error)),
            _ => None,
        })
    }
}

fn parse(host: Host, raw: &[u8]) -> Parsed {
    let trimmed = raw.trim_ascii_end();
    if trimmed.trim_ascii().is_empty() {
        return Parsed::Blank;
    }
    match adapter::parse_line(host, trimmed) {
        Ok(record) => Parsed::Record(Box::new(record)),
        Err(error) => Parsed::Malformed(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::SessionId;

    const EXAMPLE: &[u8] = include_bytes!("../../fixtures/spec-example/events.jsonl");

    #[test]
    fn offsets_and_prefix_hashes_match_the_spec_vectors() {
        let log = SessionLog::from_bytes(Host::CopilotCli, "x", EXAMPLE.to_vec());
        let ends: Vec<u64> = log.lines.iter().map(|l| l.end).collect();
        assert_eq!(ends, [292, 440, 794, 1197, 1679, 1974, 2494, 2782, 3031, 3281, 3589, 4043, 4170]);
        assert_eq!(log.prefix_sha256(1197), "0e2ca0a715bb26afe7aaa2772e90e2e7ee2ce1986fb7cb6fa5f2d8e1a9360fba");
        assert_eq!(log.prefix_sha256(4043), "208254ae1727cadc3819fadacbcd341dabadb2573ccf02a190b7b8f21a5e8d8f");
        assert!(log.chain_at(1197).is_some());
        assert!(log.chain_at(1198).is_none());
    }

    #[test]
    fn appending_equals_reading_the_whole() {
        let whole = SessionLog::from_bytes(Host::CopilotCli, "x", EXAMPLE.to_vec());
        let mut grown = SessionLog::from_bytes(Host::CopilotCli, "x", EXAMPLE[..1197].to_vec());
        grown.append(&EXAMPLE[1197..]);
        assert_eq!(grown.bytes(), whole.bytes());
        assert_eq!(grown.chain_at(4170), whole.chain_at(4170));
        assert_eq!(
            grown.lines.iter().map(|l| (l.number, l.start, l.end)).collect::<Vec<_>>(),
            whole.lines.iter().map(|l| (l.number, l.start, l.end)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn prefix_hashes_from_checkpoints_equal_hashing_the_prefix() {
        // Lines of varied lengths so that line ends and checkpoint boundaries interleave.
        let mut bytes = Vec::new();
        for i in 0..3000 {
            bytes.extend_from_slice(format!("{{\"type\":\"t\",\"pad\":\"{}\"}}\n", "x".repeat(i % 97)).as_bytes());
        }
        // Appended in whole lines, as the daemon does, a few hundred at a time.
        let mut grown = SessionLog::from_bytes(Host::CopilotCli, "x", Vec::new());
        let lines: Vec<&[u8]> = complete_lines(&bytes).collect();
        for piece in lines.chunks(333) {
            grown.append(&piece.concat());
        }
        let whole = SessionLog::from_bytes(Host::CopilotCli, "x", bytes.clone());
        assert!(whole.checkpoints.len() >= 2, "the test log spans several checkpoints");
        let stored = grown.len() as usize;
        for n in [0, 1, PREFIX_CHECKPOINT_BYTES - 1, PREFIX_CHECKPOINT_BYTES, PREFIX_CHECKPOINT_BYTES + 1, stored] {
            let expected = chain::to_hex(&chain::sha256(&bytes[..n]));
            assert_eq!(whole.prefix_sha256(n as u64), expected, "prefix of {n} bytes");
            assert_eq!(grown.prefix_sha256(n as u64), expected, "prefix of {n} bytes, appended in pieces");
        }
    }

    #[test]
    fn complete_lines_keep_their_newlines_and_drop_the_partial_tail() {
        let bytes = b"a\n\nbc\npartial";
        assert_eq!(complete_lines(bytes).collect::<Vec<_>>(), [&b"a\n"[..], b"\n", b"bc\n"]);
        assert_eq!(complete_len(bytes), 6);
        assert_eq!(complete_len(b"no newline"), 0);
    }

    #[test]
    fn partial_last_line_waits_for_its_newline() {
        let log = SessionLog::from_bytes(Host::CopilotCli, "x", b"{\"type\":\"a\"}\n{\"type\":".to_vec());
        assert_eq!(log.len(), 13);
        assert_eq!(log.lines.len(), 1);
    }

    #[test]
    fn blank_and_malformed_lines_keep_their_offsets() {
        let log = SessionLog::from_bytes(Host::CopilotCli, "x", b"\n{oops\n[1]\n{}\n".to_vec());
        assert!(matches!(log.lines[0].parsed, Parsed::Blank));
        assert_eq!(log.first_malformed(), Some((2, &LineError::Malformed)));
        assert!(matches!(log.lines[2].parsed, Parsed::Malformed(LineError::NotAnObject)));
        assert_eq!(log.records().count(), 1);
        assert_eq!(log.lines[3].start, 11);
    }

    /// The real Codex CLI 0.169.0 rollout of an agent's review round
    /// (fixtures/codex-0.169.0/copilot-review): each `exec_command` call and its output are a
    /// tool call and its result, named by the items' own ids, with the turn's model carried
    /// onto the call.
    #[test]
    fn a_codex_agents_shell_calls_read_as_tool_calls_with_the_turns_model() {
        let rollout = include_bytes!(
            "../../fixtures/codex-0.169.0/copilot-review/rollout-2026-12-02T03-06-22-01a234b7-ad65-70a1-8a28-3953cf556152.jsonl"
        );
        let log = SessionLog::from_bytes(Host::CodexCli, "r", rollout.to_vec());
        let calls: Vec<&crate::event::Record> =
            log.records().map(|(_, r)| r).filter(|r| !r.tool_calls.is_empty()).collect();
        assert_eq!(calls.len(), 4, "marker, challenge, the reviewer, verify");
        let marker = &calls[0];
        assert_eq!((marker.id.as_deref(), marker.model.as_deref()), (Some("fc_msg_scripted_2"), Some("gpt-5.5")));
        let call = &marker.tool_calls[0];
        assert_eq!((call.id.as_deref(), call.name.as_str()), (Some("call_s0"), "exec_command"));
        assert_eq!(
            call.command().as_deref(),
            Some("judge-evidence marker --binding run_20261202_c0dexexe_r1_review_5b2f9d01")
        );
        let output = log.records().map(|(_, r)| r).find(|r| !r.tool_results.is_empty()).unwrap();
        assert!(output.id.as_deref().is_some_and(|id| id.starts_with("fco_")), "{:?}", output.id);
        let result = &output.tool_results[0];
        assert_eq!((result.tool_call_id.as_deref(), result.success), (Some("call_s0"), true));
        assert!(result.text.contains(r#"{"binding": "run_20261202_c0dexexe_r1_review_5b2f9d01""#), "{}", result.text);
        assert!(output.model.is_none(), "the output is the tool's, not the model's");
    }

    /// Qwen Code's real log (fixtures/qwen-code-0.24.4/shell-call): every record on the chain,
    /// the prompt, the shell call and its result keyed by the call's id, and each answer's
    /// model the one the server reported for it (the telemetry record before it).
    #[test]
    fn a_qwen_code_log_reads_as_its_records_say() {
        let bytes =
            include_bytes!("../../fixtures/qwen-code-0.24.4/shell-call/160de1c6-5d59-4190-9424-780ba057b0df.jsonl");
        let log = SessionLog::from_bytes(Host::QwenCode, "s.jsonl", bytes.to_vec());
        let records: Vec<&Record> = log.records().map(|(_, r)| r).collect();
        assert!(records.iter().all(|r| r.id.is_some()
            && r.session_id.as_ref().map(SessionId::as_str) == Some("160de1c6-5d59-4190-9424-780ba057b0df")));
        assert!(records.windows(2).all(|w| w[1].parent_id == w[0].id), "each names the one before");
        assert_eq!(records[0].text.as_deref(), Some("Write hi into note.txt."));
        let call = records.iter().find(|r| !r.tool_calls.is_empty()).unwrap();
        assert_eq!(call.tool_calls[0].command().as_deref(), Some("echo hi > note.txt"));
        assert_eq!(call.model.as_deref(), Some("qwen3-coder-plus"));
        let result = records.iter().find(|r| !r.tool_results.is_empty()).unwrap();
        assert_eq!(result.tool_results[0].tool_call_id.as_deref(), Some("call_s0"));
        assert!(result.tool_results[0].success && result.tool_results[0].text.contains("Exit Code: 0"));
        let answer = records.last().unwrap();
        assert_eq!((answer.kind.as_str(), answer.text.as_deref()), ("assistant", Some("Wrote hi into note.txt.")));

        // An answer the server gave as another model than asked for is that model's.
        let impostor = String::from_utf8(bytes.to_vec()).unwrap().replacen(
            r#""model":"qwen3-coder-plus","status_code""#,
            r#""model":"gpt-5.4","status_code""#,
            1,
        );
        let log = SessionLog::from_bytes(Host::QwenCode, "s.jsonl", impostor.into_bytes());
        let call = log.records().map(|(_, r)| r).find(|r| !r.tool_calls.is_empty()).unwrap();
        assert_eq!(call.model.as_deref(), Some("gpt-5.4"));
    }
}
