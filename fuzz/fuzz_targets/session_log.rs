//! A whole session log from bytes (`SessionLog::from_bytes`), as direct mode reads a file,
//! for any host (the first byte chooses the host and where to split). The same bytes
//! read at once and read as a prefix plus an `append` (how a kept log is extended) must
//! give the same lines, chain and prefix hashes, and those must be SHA-256 of the bytes.
#![no_main]

use judged_core::chain;
use judged_core::event::Host;
use judged_core::log::{SessionLog, complete_len};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&control, bytes)) = data.split_first() else { return };
    let host = [Host::CopilotCli, Host::ClaudeCode, Host::CodexCli, Host::GeminiCli][usize::from(control & 3)];
    let whole = SessionLog::from_bytes(host, "/fuzz/events.jsonl", bytes.to_vec());
    assert_eq!(whole.len() as usize, complete_len(bytes));
    assert_eq!(whole.bytes(), &bytes[..complete_len(bytes)]);

    // Split at a line boundary chosen by the control byte, then append the rest.
    let cut = complete_len(&bytes[..(usize::from(control >> 2) * bytes.len() / 63).min(bytes.len())]);
    let mut grown = SessionLog::from_bytes(host, "/fuzz/events.jsonl", bytes[..cut].to_vec());
    grown.append(&bytes[cut..]);
    assert_eq!(grown.len(), whole.len());
    assert_eq!(grown.lines.len(), whole.lines.len());
    for (a, b) in grown.lines.iter().zip(&whole.lines) {
        assert_eq!((a.number, a.start, a.end, a.sha256, a.chain), (b.number, b.start, b.end, b.sha256, b.chain));
    }
    let mut expected_chain = chain::genesis(chain::SESSION_GENESIS_DOMAIN);
    for line in &whole.lines {
        let raw = &bytes[line.start as usize..line.end as usize];
        assert_eq!(line.sha256, chain::sha256(raw));
        expected_chain = chain::link(&expected_chain, &line.sha256);
        assert_eq!(line.chain, expected_chain);
        assert_eq!(whole.chain_at(line.end), Some(chain::to_hex(&line.chain)));
    }
    for n in [0, cut as u64, whole.len() / 2, whole.len()] {
        let expected = chain::to_hex(&chain::sha256(&bytes[..n as usize]));
        assert_eq!(whole.prefix_sha256(n), expected);
        assert_eq!(grown.prefix_sha256(n), expected);
    }
    let _ = whole.records().count();
    let _ = whole.first_malformed();
});
