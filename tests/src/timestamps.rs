//! Recorded logs made current: every ISO-8601 timestamp moved by one shift, so a fixture
//! recorded days ago reads as a session that just ran (the rules refuse stale markers).

use chrono::{Duration, NaiveDateTime, Utc};

/// An ISO-8601 timestamp `YYYY-MM-DDTHH:MM:SS[.f…]` at the start of `s`: the time, its
/// number of fraction digits, and its length.
fn parse_iso(s: &[u8]) -> Option<(NaiveDateTime, usize, usize)> {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:dd";
    let fits = s.len() >= SHAPE.len()
        && SHAPE.iter().zip(s).all(|(p, c)| if *p == b'd' { c.is_ascii_digit() } else { p == c });
    if !fits {
        return None;
    }
    let digits = if s.get(19) == Some(&b'.') { s[20..].iter().take_while(|c| c.is_ascii_digit()).count() } else { 0 };
    let len = if digits > 0 { 20 + digits } else { 19 };
    let text = std::str::from_utf8(&s[..len]).ok()?;
    let time = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").ok()?;
    Some((time, digits, len))
}

/// Every ISO timestamp in `text` moved so the first one becomes `now - age`, each keeping
/// its number of fraction digits.
pub fn shift_timestamps(text: &[u8], age: Duration) -> Vec<u8> {
    let first = (0..text.len()).find_map(|i| parse_iso(&text[i..])).expect("the log has timestamps").0;
    let shift = Utc::now().naive_utc() - age - first;
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        match parse_iso(&text[i..]) {
            Some((time, digits, len)) => {
                let shifted = (time + shift).format("%Y-%m-%dT%H:%M:%S%.f").to_string();
                // `%.f` prints 0, 3, 6 or 9 digits; keep the fixture's count.
                let (whole, fraction) = shifted.split_once('.').unwrap_or((&shifted, ""));
                out.extend_from_slice(whole.as_bytes());
                if digits > 0 {
                    out.extend_from_slice(format!(".{fraction:0<digits$.digits$}").as_bytes());
                }
                i += len;
            }
            None => {
                out.push(text[i]);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_move_together_and_keep_their_fraction_digits() {
        let text =
            b"{\"a\":\"2026-01-01T00:00:00.123Z\",\"b\":\"2026-01-01T00:00:10Z\",\"c\":\"2026-01-01T00:00:01.5Z\"}";
        let shifted = String::from_utf8(shift_timestamps(text, Duration::seconds(60))).unwrap();
        let times: Vec<&str> = shifted.split('"').filter(|s| s.ends_with('Z')).collect();
        assert_eq!(times.len(), 3, "{shifted}");
        assert_eq!((times[0].len(), times[1].len(), times[2].len()), (24, 20, 22), "{shifted}");
        let parse = |s: &str| parse_iso(s.as_bytes()).unwrap().0;
        // Each keeps its own precision, so the gap is kept to within a second.
        let gap = parse(times[1]) - parse(times[0]) - Duration::milliseconds(9877);
        assert!(gap.abs() < Duration::seconds(1), "{gap}");
        let age = Utc::now().naive_utc() - parse(times[0]);
        assert!(age >= Duration::seconds(59) && age < Duration::seconds(70), "{age}");
    }
}
