//! Reading a reviewer's free-text answer: the `Score:`/`Verdict:` fields of a native
//! reviewer response, and what counts as a positive verdict.
//!
//! The parser reproduces the reference `review_gate.py`'s regular expressions by hand
//! (§4.3 step 4) rather than with a regex crate, because Python's `re` differs from
//! every Rust engine in the places that matter here: `\s` includes U+001C–U+001F,
//! IGNORECASE equates `ſ` with `s`, and `findall` resumes after a match that spans lines.
//! Evidence the reference accepts must be accepted here, and nothing more.

/// Why a response yields no score and verdict. The message is printed as the reason of a
/// refused round, so it is the reference's wording, byte for byte.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Zero, or more than one, `Score: N/10` or `Verdict: …` field matched.
    #[error("native reviewer response must contain exactly one anchored Score and Verdict field")]
    NotExactlyOne,
}

/// The lowest score that can count as positive, on the reference's 1..10 scale.
const POSITIVE_SCORE: f64 = 6.0;

/// Whether a round's score and verdict meet the positive threshold of the review loop
/// (§4.2): Score ≥ 6 and the verdict `ready` or `almost`. Below it, a loop continues; at
/// or above it, the gate may stop or escalate depending on who reviewed. `verdict` is
/// compared as given, so callers pass the normalized (trimmed, lowercased) form, as
/// [`parse_score_verdict`] returns it.
pub fn is_positive(score: f64, verdict: &str) -> bool {
    score >= POSITIVE_SCORE && matches!(verdict, "ready" | "almost")
}

/// The score and verdict of a native reviewer response (§4.3 step 4).
///
/// This reproduces the reference's two `re.findall` calls with `(?im)`:
/// `^\s*(?:[-*]\s*)?score:\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*10\s*$` and
/// `^\s*(?:[-*]\s*)?verdict:\s*(ready|almost|not\s+ready)\s*$`. Each must match exactly
/// once. Python's `\s` includes newlines, so every gap in these patterns may span lines
/// (`Verdict: not\nready` is `not ready`); the score is not range-checked here (row 3 does).
pub fn parse_score_verdict(response: &str) -> Result<(f64, String), ParseError> {
    let scores = find_all(response, score_field);
    let verdicts = find_all(response, verdict_field);
    match (scores.as_slice(), verdicts.as_slice()) {
        ([score], [verdict]) => Ok((*score, verdict.clone())),
        _ => Err(ParseError::NotExactlyOne),
    }
}

/// `re.findall` for a `^`-anchored MULTILINE pattern: try each line start (offset 0 or
/// after `\n`) and resume at the end of a match, so a match spanning lines counts once.
fn find_all<T>(text: &str, field: fn(&mut Cursor) -> Option<T>) -> Vec<T> {
    let after_next_newline = |from: usize| text[from..].find('\n').map(|i| from + i + 1);
    let mut found = Vec::new();
    let mut line_start = Some(0);
    while let Some(start) = line_start {
        let mut cursor = Cursor { text, pos: start };
        line_start = match field(&mut cursor) {
            Some(value) => {
                found.push(value);
                let end = cursor.pos;
                if text[..end].ends_with('\n') { Some(end) } else { after_next_newline(end) }
            }
            None => after_next_newline(start),
        };
    }
    found
}

/// `score:\s*([0-9]+(?:\.[0-9]+)?)\s*/\s*10\s*$` after the common prefix.
fn score_field(cursor: &mut Cursor) -> Option<f64> {
    if !cursor.field("score") {
        return None;
    }
    let score = cursor.number()?;
    (cursor.spaced("/") && cursor.spaced("10") && cursor.line_end()).then_some(score)
}

/// `verdict:\s*(ready|almost|not\s+ready)\s*$`, lowercased with spaces collapsed.
fn verdict_field(cursor: &mut Cursor) -> Option<String> {
    if !cursor.field("verdict") {
        return None;
    }
    let start = cursor.pos;
    let matched = cursor.literal("ready")
        || cursor.literal("almost")
        || (cursor.literal("not") && cursor.skip_space() && cursor.literal("ready"));
    let verdict = &cursor.text[start..cursor.pos];
    (matched && cursor.line_end()).then(|| {
        verdict.to_lowercase().split(is_py_space).filter(|word| !word.is_empty()).collect::<Vec<_>>().join(" ")
    })
}

/// A position in the response, advanced the way the reference regex engine consumes it.
/// The patterns never need backtracking beyond what these methods do themselves.
struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl Cursor<'_> {
    fn eat(&mut self, accept: impl Fn(char) -> bool) -> bool {
        match self.text[self.pos..].chars().next() {
            Some(c) if accept(c) => {
                self.pos += c.len_utf8();
                true
            }
            _ => false,
        }
    }

    /// `\s*`; the result tells whether it was `\s+`.
    fn skip_space(&mut self) -> bool {
        let start = self.pos;
        while self.eat(is_py_space) {}
        self.pos > start
    }

    /// A literal under IGNORECASE; consumes nothing when it does not match.
    fn literal(&mut self, literal: &str) -> bool {
        let start = self.pos;
        let matched = literal.chars().all(|want| self.eat(|c| same_ignoring_case(c, want)));
        if !matched {
            self.pos = start;
        }
        matched
    }

    /// `\s*` then a literal.
    fn spaced(&mut self, literal: &str) -> bool {
        self.skip_space();
        self.literal(literal)
    }

    /// `\s*(?:[-*]\s*)?<name>:\s*`, the prefix both fields share after `^`.
    fn field(&mut self, name: &str) -> bool {
        self.skip_space();
        if self.eat(|c| c == '-' || c == '*') {
            self.skip_space();
        }
        let matched = self.literal(name) && self.literal(":");
        self.skip_space();
        matched
    }

    /// `[0-9]+(?:\.[0-9]+)?` as Python's `float()` reads it.
    fn number(&mut self) -> Option<f64> {
        let start = self.pos;
        while self.eat(|c| c.is_ascii_digit()) {}
        if self.pos == start {
            return None;
        }
        let integer_end = self.pos;
        if !(self.eat(|c| c == '.') && self.eat(|c| c.is_ascii_digit())) {
            self.pos = integer_end;
        }
        while self.eat(|c| c.is_ascii_digit()) {}
        self.text[start..self.pos].parse().ok()
    }

    /// `\s*$` under MULTILINE: `$` holds at the end or before a `\n`, so the greedy
    /// `\s*` gives back to the last `\n` it swallowed, where the match then ends.
    fn line_end(&mut self) -> bool {
        let start = self.pos;
        self.skip_space();
        if self.pos == self.text.len() {
            return true;
        }
        match self.text[start..self.pos].rfind('\n') {
            Some(newline) => {
                self.pos = start + newline;
                true
            }
            None => false,
        }
    }
}

/// Python's `\s` (and `str.strip`): Unicode whitespace plus the separators U+001C–U+001F.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's Unicode IGNORECASE for the ASCII `want`: besides ASCII case it equates
/// `ſ` with `s` and `İ`/`ı` with `i`, so `ſcore:` and `verdıct:` count as fields too.
fn same_ignoring_case(c: char, want: char) -> bool {
    c.to_ascii_lowercase() == want || matches!((want, c), ('s', 'ſ') | ('i', 'İ' | 'ı'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_score_lines() {
        for (line, want) in [
            ("- Score: 8/10", 8.0),
            ("* score: 7.5/10", 7.5),
            ("Score: 8 / 10", 8.0),
            ("Score:8/10", 8.0),
            ("  SCORE:\t08.50/10  ", 8.5),
            ("Score: 11/10", 11.0),
            ("ſcore: 6/10", 6.0),
            ("-\nScore: 8\n/\n10", 8.0),
        ] {
            let response = format!("Summary.\n{line}\nVerdict: ready\n");
            assert_eq!(parse_score_verdict(&response), Ok((want, "ready".to_owned())), "{line:?}");
        }
    }

    #[test]
    fn accepted_verdict_lines() {
        for (line, want) in [
            ("Verdict: ready", "ready"),
            ("- verdict: Almost", "almost"),
            ("VERDICT: Not   Ready", "not ready"),
            ("Verdict: not\nready", "not ready"),
            ("Verdict: NOT\t\r\n  ready", "not ready"),
            ("* Verdıct:almoſt", "almoſt"),
        ] {
            let response = format!("Score: 8/10\n{line}");
            assert_eq!(parse_score_verdict(&response), Ok((8.0, want.to_owned())), "{line:?}");
        }
    }

    #[test]
    fn crlf_line_endings_are_accepted() {
        let response = "Review\r\n- Score: 9/10\r\nVerdict: almost\r\n\r\nThanks\r\n";
        assert_eq!(parse_score_verdict(response), Ok((9.0, "almost".to_owned())));
    }

    #[test]
    fn rejected_score_lines() {
        for line in [
            "**Score:** 8/10",
            "Final Score: 8/10",
            "Score: 8/10 (good)",
            "Score: .5/10",
            "Score: 8./10",
            "- - Score: 8/10",
            "Score: 8/100",
            "Score: -8/10",
            "Score: 8/10\rVerdict: almost",
            "Score: 8/10\nScore: 8/10",
            "Score: 8/10\n\n  score: 7/10",
        ] {
            let response = format!("{line}\nVerdict: ready\n");
            assert_eq!(parse_score_verdict(&response), Err(ParseError::NotExactlyOne), "{line:?}");
        }
    }

    #[test]
    fn rejected_verdict_lines() {
        for line in [
            "Verdict: almost.",
            "Verdict: not",
            "Verdict: notready",
            "Verdict: maybe",
            "Verdict: ready\nverdict: ready",
            "",
        ] {
            let response = format!("Score: 8/10\n{line}\n");
            assert_eq!(parse_score_verdict(&response), Err(ParseError::NotExactlyOne), "{line:?}");
        }
    }

    #[test]
    fn a_match_spanning_lines_is_counted_once() {
        // The bullet's `\s*` reaches the next line, so this is one Score field, not two.
        assert_eq!(parse_score_verdict("-\nScore: 8/10\nVerdict: ready"), Ok((8.0, "ready".to_owned())));
        // Trailing blank lines are swallowed up to the last newline; the next field still counts.
        assert_eq!(parse_score_verdict("Verdict: ready \n\n\nScore: 8/10\n\n"), Ok((8.0, "ready".to_owned())));
    }

    #[test]
    fn the_refusal_reads_as_the_reference_writes_it() {
        assert_eq!(
            ParseError::NotExactlyOne.to_string(),
            "native reviewer response must contain exactly one anchored Score and Verdict field"
        );
    }

    #[test]
    fn positive_means_score_six_or_more_and_ready_or_almost() {
        assert!(is_positive(6.0, "ready"));
        assert!(is_positive(10.0, "almost"));
        assert!(!is_positive(5.9, "ready"));
        assert!(!is_positive(9.0, "not ready"));
        assert!(!is_positive(f64::NAN, "ready"));
    }
}
