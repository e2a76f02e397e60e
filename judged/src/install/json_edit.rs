//! A host's JSON settings, edited in place: the installer adds or removes its hook entries
//! and leaves every other byte of the user's file as it was (key order, indentation,
//! comments, line endings). Removing what an install added gives back the bytes there
//! were before it.
//!
//! The text is checked by `serde_json` (which gives the line and column of a fault); a
//! file with comments is first blanked of them byte for byte, as Gemini CLI strips them
//! (`strip-json-comments`, whitespace kept), so positions stay those of the user's file.
//! Then a small scanner of that valid JSON finds where each value starts and ends, and
//! the edits are spliced into the user's own text.

use serde_json::Value;
use std::ops::Range;

/// How a host reads its JSON settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// Plain JSON (`JSON.parse`, `serde_json`): Claude Code, Codex CLI, Copilot CLI.
    Json,
    /// JSON with `//` and `/* */` comments and no trailing commas: Gemini CLI strips the
    /// comments (`strip-json-comments`), then `JSON.parse`s.
    JsonWithComments,
}

impl std::fmt::Display for Syntax {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Syntax::Json => "JSON",
            Syntax::JsonWithComments => {
                "JSON (as Gemini CLI reads it: // and /* */ comments allowed, trailing commas not)"
            }
        })
    }
}

/// Why a text is not a settings document.
#[derive(Debug)]
pub enum ParseError {
    /// Not valid JSON (for its syntax): where and why.
    Syntax(serde_json::Error),
    /// Valid, but not a JSON object.
    NotAnObject,
}

/// `serde_json`'s reason without its own " at line L column C" (the caller puts the
/// position first, after the file's name, as compilers do).
pub fn reason(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let position = format!(" at line {} column {}", error.line(), error.column());
    text.strip_suffix(&position).unwrap_or(&text).to_owned()
}

/// Where a value is in the text, and what it holds.
#[derive(Debug)]
pub struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

#[derive(Debug)]
pub enum Kind {
    Object(Vec<Member>),
    Array(Vec<Node>),
    Scalar,
}

/// One `"key": value` of an object; it starts at its key.
#[derive(Debug)]
pub struct Member {
    pub key: String,
    pub start: usize,
    pub value: Node,
}

impl Node {
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    pub fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The index of `key`'s member: the last one, as `JSON.parse` and `serde_json` take
    /// the last of duplicate keys.
    pub fn index_of(&self, key: &str) -> Option<usize> {
        self.members()?.iter().rposition(|m| m.key == key)
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        Some(&self.members()?[self.index_of(key)?].value)
    }

    /// Where each element (a member from its key, or an item) starts and ends.
    fn elements(&self) -> Vec<Range<usize>> {
        match &self.kind {
            Kind::Object(members) => members.iter().map(|m| m.start..m.value.end).collect(),
            Kind::Array(items) => items.iter().map(|i| i.start..i.end).collect(),
            Kind::Scalar => Vec::new(),
        }
    }
}

/// A parsed settings document (an object at its root).
pub struct Doc {
    /// The user's text.
    text: String,
    /// The same text with comments blanked: what the nodes and values are read from.
    plain: String,
    root: Node,
    /// The line ending of the file, for the lines added.
    newline: &'static str,
    /// One level of indentation as the file has it.
    unit: String,
}

/// An element to add to a container.
pub enum Entry {
    Member(String, Value),
    Item(Value),
}

impl Doc {
    pub fn parse(text: &str, syntax: Syntax) -> Result<Doc, ParseError> {
        let plain = match syntax {
            Syntax::Json => text.to_owned(),
            Syntax::JsonWithComments => blank_comments(text),
        };
        match serde_json::from_str::<Value>(&plain) {
            Err(e) => return Err(ParseError::Syntax(e)),
            Ok(Value::Object(_)) => {}
            Ok(_) => return Err(ParseError::NotAnObject),
        }
        // serde_json accepted it, so the scanner, which reads only valid JSON, does too.
        let root = Scanner { bytes: plain.as_bytes(), at: 0, text: &plain }.value().ok_or(ParseError::NotAnObject)?;
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let mut doc = Doc { text: text.to_owned(), plain, root, newline, unit: "  ".to_owned() };
        doc.unit = doc.indent_unit();
        Ok(doc)
    }

    pub fn root(&self) -> &Node {
        &self.root
    }

    /// The value at `node`.
    pub fn value(&self, node: &Node) -> Value {
        serde_json::from_str(&self.plain[node.start..node.end]).unwrap_or(Value::Null)
    }

    /// The whitespace that opens the line `at` is on.
    fn line_indent(&self, at: usize) -> &str {
        let start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &self.text[start..];
        &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
    }

    /// Whether `at` is the first thing on its line.
    fn starts_line(&self, at: usize) -> bool {
        self.text[..at].rsplit('\n').next().is_some_and(|before| before.trim_matches([' ', '\t', '\r']).is_empty())
            && self.text[..at].contains('\n')
    }

    /// The file's indentation step: what its first member on a line of its own adds to
    /// the root's; two spaces when no line shows it.
    fn indent_unit(&self) -> String {
        let root = self.line_indent(self.root.start);
        self.root
            .elements()
            .iter()
            .find(|e| self.starts_line(e.start))
            .and_then(|e| self.line_indent(e.start).strip_prefix(root).filter(|u| !u.is_empty()).map(str::to_owned))
            .unwrap_or_else(|| "  ".to_owned())
    }

    /// `value` as this file writes it, its lines after the first indented by `base`.
    fn render(&self, value: &Value, base: &str, pretty: bool) -> String {
        if !pretty {
            return value.to_string();
        }
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.unit.as_bytes());
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        serde::Serialize::serialize(value, &mut serializer).expect("a Value serializes");
        // JSON strings hold no raw newline: every one here is a line break.
        String::from_utf8_lossy(&out).replace('\n', &format!("{}{base}", self.newline))
    }

    fn render_entry(&self, entry: &Entry, base: &str, pretty: bool) -> String {
        match entry {
            Entry::Member(key, value) => {
                format!("{}: {}", Value::from(key.as_str()), self.render(value, base, pretty))
            }
            Entry::Item(value) => self.render(value, base, pretty),
        }
    }

    pub fn edits(&self) -> Edits<'_> {
        Edits { doc: self, splices: Vec::new() }
    }
}

/// Changes to a [`Doc`], spliced into its text at the end.
pub struct Edits<'d> {
    doc: &'d Doc,
    splices: Vec<(Range<usize>, String)>,
}

impl Edits<'_> {
    pub fn is_empty(&self) -> bool {
        self.splices.is_empty()
    }

    /// Add `entries` at the end of `container`, laid out as its last element is (on a line
    /// of its own at its indentation, or on the same line); into an empty container, one
    /// level in from the container's line.
    pub fn append(&mut self, container: &Node, entries: &[Entry]) {
        if entries.is_empty() {
            return;
        }
        let doc = self.doc;
        let newline = doc.newline;
        match doc_last(container) {
            Some(last) => {
                let (separator, base, pretty) = if doc.starts_line(last.start) {
                    let indent = doc.line_indent(last.start).to_owned();
                    (format!("{newline}{indent}"), indent, true)
                } else {
                    (" ".to_owned(), String::new(), false)
                };
                let text: String =
                    entries.iter().map(|e| format!(",{separator}{}", doc.render_entry(e, &base, pretty))).collect();
                self.splices.push((last.end..last.end, text));
            }
            None => {
                let outer = doc.line_indent(container.start).to_owned();
                let inner = format!("{outer}{}", doc.unit);
                let body: Vec<String> = entries.iter().map(|e| doc.render_entry(e, &inner, true)).collect();
                let text = format!("{newline}{inner}{}{newline}{outer}", body.join(&format!(",{newline}{inner}")));
                // `{}` or `{ }` becomes the block; anything else inside (a comment) stays.
                let inside = container.start + 1..container.end - 1;
                let blank = doc.text[inside.clone()].trim().is_empty();
                self.splices.push((if blank { inside } else { inside.start..inside.start }, text));
            }
        }
    }

    /// Remove the elements of `container` at `indices`, with the separator before each (or
    /// after a leading one): the exact inverse of [`Self::append`]. Removing them all
    /// leaves the container empty (`{}`, `[]`).
    pub fn remove(&mut self, container: &Node, indices: &[usize]) {
        let elements = container.elements();
        let removed = |i: usize| indices.contains(&i);
        if elements.is_empty() || indices.is_empty() {
            return;
        }
        if (0..elements.len()).all(removed) {
            self.splices.push((container.start + 1..container.end - 1, String::new()));
            return;
        }
        let first_kept = (0..elements.len()).find(|i| !removed(*i)).unwrap_or(0);
        if first_kept > 0 {
            self.splices.push((elements[0].start..elements[first_kept].start, String::new()));
        }
        for i in (first_kept + 1..elements.len()).filter(|i| removed(*i)) {
            self.splices.push((elements[i - 1].end..elements[i].end, String::new()));
        }
    }

    /// Put `value` where `node` is.
    pub fn replace(&mut self, node: &Node, value: &Value) {
        let base = self.doc.line_indent(node.start).to_owned();
        let text = self.doc.render(value, &base, true);
        self.splices.push((node.start..node.end, text));
    }

    /// The user's text with the edits made.
    pub fn finish(mut self) -> String {
        let mut text = self.doc.text.clone();
        self.splices.sort_by_key(|(range, _)| std::cmp::Reverse((range.start, range.end)));
        for (range, with) in self.splices {
            text.replace_range(range, &with);
        }
        text
    }
}

fn doc_last(container: &Node) -> Option<Range<usize>> {
    container.elements().pop()
}

/// `text` with its `//` and `/* */` comments turned into spaces, byte for byte (line
/// breaks kept), as `strip-json-comments` does for Gemini CLI: a comment starts outside a
/// string, a `//` one ends at a line break, an unterminated one runs to the end.
pub fn blank_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let (mut at, mut in_string) = (0, false);
    while at < bytes.len() {
        let pair = (bytes[at], bytes.get(at + 1).copied());
        if in_string {
            match pair.0 {
                b'\\' => at += 1,
                b'"' => in_string = false,
                _ => {}
            }
            at += 1;
            continue;
        }
        let end = match pair {
            (b'"', _) => {
                in_string = true;
                at += 1;
                continue;
            }
            (b'/', Some(b'/')) => text[at..].find('\n').map_or(bytes.len(), |i| at + i),
            (b'/', Some(b'*')) => text[at + 2..].find("*/").map_or(bytes.len(), |i| at + 2 + i + 2),
            _ => {
                at += 1;
                continue;
            }
        };
        for byte in &mut out[at..end] {
            if !byte.is_ascii_whitespace() {
                *byte = b' ';
            }
        }
        at = end;
    }
    // Only ASCII bytes were replaced, each whole character's bytes alike: still UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// Finds where each value of valid JSON starts and ends.
struct Scanner<'a> {
    bytes: &'a [u8],
    text: &'a str,
    at: usize,
}

impl Scanner<'_> {
    fn skip_blank(&mut self) {
        while self.bytes.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        self.skip_blank();
        (self.bytes.get(self.at) == Some(&byte)).then(|| self.at += 1)
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_blank();
        self.bytes.get(self.at).copied()
    }

    fn string(&mut self) -> Option<Range<usize>> {
        let start = self.at;
        self.eat(b'"')?;
        loop {
            match self.bytes.get(self.at)? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return Some(start..self.at);
                }
                _ => self.at += 1,
            }
        }
    }

    fn value(&mut self) -> Option<Node> {
        let start = {
            self.skip_blank();
            self.at
        };
        let kind = match self.peek()? {
            b'{' => {
                self.at += 1;
                let mut members = Vec::new();
                while self.peek()? != b'}' {
                    if !members.is_empty() {
                        self.eat(b',')?;
                    }
                    self.skip_blank();
                    let key = self.string()?;
                    let key_start = key.start;
                    let key: String = serde_json::from_str(&self.text[key]).ok()?;
                    self.eat(b':')?;
                    members.push(Member { key, start: key_start, value: self.value()? });
                }
                self.at += 1;
                Kind::Object(members)
            }
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                while self.peek()? != b']' {
                    if !items.is_empty() {
                        self.eat(b',')?;
                    }
                    items.push(self.value()?);
                }
                self.at += 1;
                Kind::Array(items)
            }
            b'"' => {
                self.string()?;
                Kind::Scalar
            }
            _ => {
                while self.bytes.get(self.at).is_some_and(|b| !b",]} \t\r\n".contains(b)) {
                    self.at += 1;
                }
                Kind::Scalar
            }
        };
        Some(Node { start, end: self.at, kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Doc {
        Doc::parse(text, Syntax::JsonWithComments).unwrap()
    }

    /// Append `entries` to the container at `path` (keys), then remove them again: the
    /// first text, exactly.
    fn append_and_remove(text: &str, path: &[&str], entries: Vec<Entry>, shows: &str) {
        let doc = parse(text);
        let container = path.iter().fold(doc.root(), |node, key| node.get(key).unwrap());
        let count = entries.len();
        let mut edits = doc.edits();
        edits.append(container, &entries);
        let added = edits.finish();
        assert!(added.contains(shows), "{added}");
        let again = parse(&added);
        let container = path.iter().fold(again.root(), |node, key| node.get(key).unwrap());
        let total = container.elements().len();
        let mut edits = again.edits();
        edits.remove(container, &(total - count..total).collect::<Vec<_>>());
        assert_eq!(edits.finish(), text, "after {added}");
    }

    #[test]
    fn appending_follows_the_layout_and_removing_gives_the_bytes_back() {
        let hooks = || Entry::Member("hooks".into(), json!({"Stop": [{"command": "judge-hook"}]}));
        append_and_remove("{}\n", &[], vec![hooks()], "{\n  \"hooks\": {\n    \"Stop\": [\n");
        append_and_remove("{}", &[], vec![hooks()], "\n  \"hooks\"");
        append_and_remove(
            "{\n    \"z\": 1,\n    \"a\": 2\n}\n",
            &[],
            vec![hooks()],
            "{\n    \"z\": 1,\n    \"a\": 2,\n    \"hooks\": {\n        \"Stop\": [\n",
        );
        append_and_remove("{\n\t\"a\": 2\n}", &[], vec![hooks()], "\"a\": 2,\n\t\"hooks\": {\n\t\t\"Stop\"");
        append_and_remove(
            "{\r\n  \"a\": 2\r\n}\r\n",
            &[],
            vec![hooks()],
            "\"a\": 2,\r\n  \"hooks\": {\r\n    \"Stop\"",
        );
        append_and_remove("{\"a\": {\"b\": [1]}}", &["a"], vec![hooks()], "{\"a\": {\"b\": [1], \"hooks\": {\"Stop\"");
        append_and_remove(
            "// mine\n{\n  \"a\": 1 // the one\n  /* end */\n}\n",
            &[],
            vec![hooks(), Entry::Member("b".into(), json!(true))],
            "\"a\": 1,\n  \"hooks\": {",
        );
        append_and_remove("{\"a\": [\n  1\n]}", &["a"], vec![Entry::Item(json!(2))], "  1,\n  2\n]");
    }

    #[test]
    fn removing_keeps_what_is_around() {
        let doc = parse("[1, 2, 3, 4]".replace('[', "{\"a\": [").replace(']', "]}").as_str());
        let array = doc.root().get("a").unwrap();
        for (indices, left) in [
            (vec![0], "[2, 3, 4]"),
            (vec![0, 1], "[3, 4]"),
            (vec![1, 3], "[1, 3]"),
            (vec![0, 2, 3], "[2]"),
            (vec![0, 1, 2, 3], "[]"),
        ] {
            let mut edits = doc.edits();
            edits.remove(array, &indices);
            assert_eq!(edits.finish(), format!("{{\"a\": {left}}}"), "{indices:?}");
        }
        let mut edits = doc.edits();
        edits.replace(&array.items().unwrap()[2], &json!("x"));
        assert_eq!(edits.finish(), "{\"a\": [1, 2, \"x\", 4]}");
    }

    #[test]
    fn errors_have_a_line_and_a_column_and_comments_are_the_hosts() {
        let Err(ParseError::Syntax(e)) = Doc::parse("{\n  \"a\": 1\n  \"b\": 2\n}", Syntax::Json) else { panic!() };
        assert_eq!((e.line(), e.column()), (3, 3));
        assert_eq!(reason(&e), "expected `,` or `}`");
        assert!(matches!(Doc::parse("// c\n{}", Syntax::Json), Err(ParseError::Syntax(_))), "no comments in JSON");
        assert!(matches!(Doc::parse("[1]", Syntax::Json), Err(ParseError::NotAnObject)));
        let Err(ParseError::Syntax(e)) = Doc::parse("{\"a\": [1,],}", Syntax::JsonWithComments) else { panic!() };
        assert_eq!((e.line(), e.column()), (1, 10), "a trailing comma, as JSON.parse refuses it");
        // Comment markers inside strings are text; an escaped quote does not end a string.
        let doc = parse("{\"u\": \"http://x/*y*/\", \"q\": \"a\\\"//b\" /* c \"d */, \"é\": 1 // ü\n}");
        assert_eq!(doc.value(doc.root()), json!({"u": "http://x/*y*/", "q": "a\"//b", "é": 1}));
        assert_eq!(blank_comments("{} /* open"), "{}        ", "an unterminated comment runs to the end");
    }
}
