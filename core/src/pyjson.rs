//! JSON text exactly as the reference Python helper writes it.
//!
//! Byte-exactness matters in three places: the `marker` output is searched for verbatim
//! in the host's record of the marker call, the evidence id hashes a canonical form, and
//! existing tools compare artifacts by text. `serde_json::Value` keeps object keys sorted
//! (no `preserve_order`), which is what `sort_keys=True` gives in Python.

use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use std::io;

/// `json.dumps(v, sort_keys=True, ensure_ascii=False)`: one line, `", "` and `": "`.
pub fn one_line(value: &Value) -> String {
    write_with(value, PythonDefaultFormatter)
}

/// `json.dumps(v, indent=2, sort_keys=True, ensure_ascii=False) + "\n"`.
pub fn pretty(value: &Value) -> String {
    let mut text = write_with(value, PrettyFormatter::with_indent(b"  "));
    text.push('\n');
    text
}

/// `json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`.
pub fn canonical(value: &Value) -> String {
    write_with(value, CompactFormatter)
}

/// Escape every non-ASCII character as `\uXXXX` (surrogate pairs above the BMP), the
/// way `ensure_ascii=True` does. The input must already be JSON text.
pub fn ascii_only(json_text: &str) -> String {
    let mut out = String::with_capacity(json_text.len());
    for ch in json_text.chars() {
        if ch.is_ascii() {
            out.push(ch);
        } else {
            let mut units = [0u16; 2];
            for unit in ch.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

fn write_with<F: Formatter>(value: &Value, formatter: F) -> String {
    let mut buffer = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut buffer, formatter);
    serde::Serialize::serialize(value, &mut serializer).expect("a Value always serializes");
    String::from_utf8(buffer).expect("serde_json writes UTF-8")
}

/// Python's default separators: a space after every `,` and `:`.
#[derive(Default)]
struct PythonDefaultFormatter;

impl Formatter for PythonDefaultFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn python_separators_and_sorted_keys() {
        let v = json!({"status": "marker", "binding": "b", "schema": "s", "n": [1, 2]});
        assert_eq!(one_line(&v), r#"{"binding": "b", "n": [1, 2], "schema": "s", "status": "marker"}"#);
        assert_eq!(canonical(&v), r#"{"binding":"b","n":[1,2],"schema":"s","status":"marker"}"#);
        assert_eq!(pretty(&json!({"b": 1, "a": {}})), "{\n  \"a\": {},\n  \"b\": 1\n}\n");
    }

    #[test]
    fn escapes_like_python() {
        let v = json!({"k": "é\u{1}\n/\u{7f}\u{1F600}"});
        assert_eq!(canonical(&v), "{\"k\":\"é\\u0001\\n/\u{7f}\u{1F600}\"}");
        assert_eq!(ascii_only(&canonical(&v)), "{\"k\":\"\\u00e9\\u0001\\n/\u{7f}\\ud83d\\ude00\"}");
    }
}
