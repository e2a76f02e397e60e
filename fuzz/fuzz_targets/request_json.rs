//! A frame body as the server parses it (`daemon/src/server.rs`): `Header` first, then
//! the typed `Envelope`. Whatever parses must re-encode to a request that parses to the
//! same thing (a client and the daemon agree on every request either accepts).
#![no_main]

use judged_protocol::{Envelope, Header};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = serde_json::from_slice::<Header>(data);
    if let Ok(envelope) = serde_json::from_slice::<Envelope>(data) {
        let encoded = serde_json::to_vec(&envelope).expect("an envelope serializes");
        let back: Envelope = serde_json::from_slice(&encoded).expect("an encoded envelope parses");
        assert_eq!(serde_json::to_value(&back).unwrap(), serde_json::to_value(&envelope).unwrap());
        let header: Header = serde_json::from_slice(&encoded).expect("an encoded envelope has a header");
        assert_eq!((header.v, header.id), (envelope.v, envelope.id));
    }
});
