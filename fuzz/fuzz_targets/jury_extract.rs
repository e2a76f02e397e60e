//! The jury's JSON extraction from a model's noisy answer (`extract::object_with_key`):
//! any text; what it returns is an object with the key asked for.
#![no_main]

use judged_jury::extract::object_with_key;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(object) = object_with_key(text, "verdict") {
        assert!(object.contains_key("verdict"));
    }
});
