//! Finding the verdict object in a model's noisy answer.
//!
//! Models wrap JSON in prose and fences, and put braces inside strings (`"use {x}"`). The
//! reference took the shortest `{…}` span after the first `{`, which any nested object or
//! brace in a string truncates, and which takes a stray `{x}` in the preamble for the
//! answer (docs/spec/jury.md §2.7). Here every `{` starts a candidate whose end is found by a scanner
//! that knows JSON strings and escapes; the first candidate that parses as an object and
//! that the caller accepts wins.

use serde_json::{Map, Value};

/// More candidates than this means the text is not an answer; stop looking (and keep the
/// scan linear in practice on hostile input).
const MAX_CANDIDATES: usize = 64;

/// Why no answer object was found; all of these make the juror ask once more.
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    /// Nothing in the text parses as a JSON object.
    #[error("no JSON object in response")]
    NoObject,
    /// Objects parse, but none has the key the format requires.
    #[error("no JSON object with a \"{0}\" key in response")]
    NoAcceptedObject(&'static str),
    /// Something looked like the answer but is not valid JSON (the first such error).
    #[error("json decode: {0}")]
    Decode(#[source] serde_json::Error),
}

/// The first JSON object in `text` that has the key `required`.
pub fn object_with_key(text: &str, required: &'static str) -> Result<Map<String, Value>, ExtractError> {
    let mut first_error = None;
    let mut parsed_any = false;
    let starts = text.match_indices('{').map(|(i, _)| i).take(MAX_CANDIDATES);
    for start in starts {
        let Some(end) = balanced_end(&text[start..]) else { continue };
        match serde_json::from_str::<Value>(&text[start..start + end]) {
            Ok(Value::Object(object)) if object.contains_key(required) => return Ok(object),
            Ok(_) => parsed_any = true,
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match (first_error, parsed_any) {
        (_, true) => Err(ExtractError::NoAcceptedObject(required)),
        (Some(e), false) => Err(ExtractError::Decode(e)),
        (None, false) => Err(ExtractError::NoObject),
    }
}

/// The length of the balanced `{…}` that starts `text`, braces in strings ignored.
fn balanced_end(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(text: &str) -> Option<String> {
        object_with_key(text, "verdict").ok().and_then(|o| o.get("verdict").and_then(Value::as_str).map(str::to_owned))
    }

    #[test]
    fn prose_fences_and_braces_inside_strings() {
        assert_eq!(verdict(r#"{"verdict":"pass"}"#).as_deref(), Some("pass"));
        let noisy = "Sure! Here is my verdict:\n```json\n{\"verdict\": \"fail\", \"flags\": [\"use {x} not }y{\", \"a \\\"quoted\\\" }\"]}\n```\nHope it helps {:}";
        assert_eq!(verdict(noisy).as_deref(), Some("fail"));
    }

    #[test]
    fn a_stray_object_in_the_preamble_is_skipped_and_nested_objects_survive() {
        let text = r#"I considered {"note": 1} first. {"meta": {"k": {"z": 2}}, "verdict": "uncertain"}"#;
        assert_eq!(verdict(text).as_deref(), Some("uncertain"));
        let wrapped = r#"{"result": {"verdict": "pass", "confidence": 90}}"#;
        assert_eq!(verdict(wrapped).as_deref(), Some("pass"));
    }

    #[test]
    fn errors_say_what_was_missing() {
        assert!(matches!(object_with_key("no json here", "verdict"), Err(ExtractError::NoObject)));
        assert!(matches!(object_with_key("{unclosed", "verdict"), Err(ExtractError::NoObject)));
        let bad = object_with_key("{'verdict': 'pass'}", "verdict").expect_err("single quotes");
        assert!(bad.to_string().starts_with("json decode: "), "{bad}");
        let other = object_with_key(r#"{"answer": "pass"}"#, "verdict").expect_err("no verdict key");
        assert_eq!(other.to_string(), "no JSON object with a \"verdict\" key in response");
    }
}
