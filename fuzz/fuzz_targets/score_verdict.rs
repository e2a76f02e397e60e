//! The reviewer response's Score/Verdict parser (`review_text::parse_score_verdict`), a
//! hand-written port of the reference's Python regular expressions, over any UTF-8 text.
#![no_main]

use judged_core::review_text::{is_positive, parse_score_verdict};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok((score, verdict)) = parse_score_verdict(text) {
        // Digits only: never negative or NaN (a long run of digits is +inf, as in Python).
        assert!(score >= 0.0, "score {score}");
        // Python's IGNORECASE matches `ſ` (U+017F) for `s` and `lower()` keeps it.
        let folded = verdict.replace('\u{17f}', "s");
        assert!(matches!(folded.as_str(), "ready" | "almost" | "not ready"), "verdict {verdict:?}");
        let _ = is_positive(score, &verdict);
    }
});
