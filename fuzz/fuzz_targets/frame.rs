//! The frame decoder as the daemon reads a connection: 4-byte big-endian length, then a
//! JSON body, read through `Connection::receive` over arbitrary bytes until the stream
//! ends or a frame fails. Each body is also parsed as the server does: the `Header`
//! first (version and id), then the typed `Envelope`.
#![no_main]

use judged_protocol::{Connection, Envelope, Header};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::io::{Cursor, Read, Write};

/// A stream that reads the fuzzer's bytes and swallows whatever is written back.
struct Duplex<'a>(Cursor<&'a [u8]>);

impl Read for Duplex<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Duplex<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    // As raw JSON values: every frame boundary the decoder finds.
    let mut raw = Connection::new(Duplex(Cursor::new(data)));
    for _ in 0..64 {
        match raw.receive::<Value>() {
            Ok(Some(body)) => {
                let bytes = serde_json::to_vec(&body).expect("a parsed value serializes");
                if let Ok(header) = serde_json::from_slice::<Header>(&bytes) {
                    let _ = header.v == judged_protocol::PROTOCOL_VERSION;
                    let _ = serde_json::from_slice::<Envelope>(&bytes);
                }
            }
            Ok(None) | Err(_) => break,
        }
    }
    // As typed requests, the way a client-side reader of envelopes would.
    let mut typed = Connection::new(Duplex(Cursor::new(data)));
    for _ in 0..64 {
        match typed.receive::<Envelope>() {
            Ok(Some(envelope)) => {
                // What was accepted re-encodes and reads back as the same request.
                let again = serde_json::to_vec(&envelope).expect("an envelope serializes");
                let back: Envelope = serde_json::from_slice(&again).expect("an encoded envelope parses");
                assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&envelope).unwrap());
            }
            Ok(None) | Err(_) => break,
        }
    }
});
