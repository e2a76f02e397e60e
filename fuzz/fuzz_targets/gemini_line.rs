//! One raw line of a Gemini CLI session recording through its host adapter: the envelope ingest reads
//! (`adapter::envelope`) and the full record the rules read (`adapter::parse_line`).
//! A line that parses as a record has the envelope `envelope` reads alone.
#![no_main]

use judged_core::adapter;
use judged_core::event::Host;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let envelope = adapter::envelope(Host::GeminiCli, data);
    if let Ok(record) = adapter::parse_line(Host::GeminiCli, data) {
        assert_eq!(envelope.as_ref(), Ok(&record.envelope), "parse_line and envelope disagree");
        for call in &record.tool_calls {
            let _ = call.arguments_text();
        }
    }
});
