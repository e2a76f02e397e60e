//! ISO-8601 timestamps, as lenient as the reference's Python 3.11 `fromisoformat`
//! where hosts actually differ (fraction length, `Z`, offsets, space separator,
//! date-only), and never lenient about garbage.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

/// Parse a host timestamp; naive values are taken as UTC.
pub fn parse(text: &str) -> Option<DateTime<Utc>> {
    let text = text.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&Utc));
    }
    let normalized = text.replacen(' ', "T", 1);
    let normalized = match normalized.strip_suffix('Z') {
        Some(rest) => format!("{rest}+00:00"),
        None => normalized,
    };
    for format in ["%Y-%m-%dT%H:%M:%S%.f%:z", "%Y-%m-%dT%H:%M%:z", "%Y%m%dT%H%M%S%.f%:z"] {
        if let Ok(t) = DateTime::parse_from_str(&normalized, format) {
            return Some(t.with_timezone(&Utc));
        }
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M", "%Y%m%dT%H%M%S%.f"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(&normalized, format) {
            return Some(t.and_utc());
        }
    }
    NaiveDate::parse_from_str(&normalized, "%Y-%m-%d").ok().and_then(|d| d.and_hms_opt(0, 0, 0)).map(|t| t.and_utc())
}

/// `datetime.now(UTC).isoformat()` with `+00:00` written as `Z`: microseconds only
/// when non-zero.
pub fn format_utc(t: DateTime<Utc>) -> String {
    if t.timestamp_subsec_micros() == 0 {
        t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
    } else {
        t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
    }
}

/// A time given as a duration before `now` (`7d`, `24h`, `30m`, `45s`, `2w`) or as an
/// ISO-8601 time, as `--since` and `--older-than` take it.
pub fn before(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, NotATime> {
    let text = text.trim();
    let unit_seconds = |unit: char| match unit {
        's' => Some(1),
        'm' => Some(60),
        'h' => Some(3600),
        'd' => Some(86_400),
        'w' => Some(7 * 86_400),
        _ => None,
    };
    if let Some(unit) = text.chars().last().filter(char::is_ascii_alphabetic)
        && let Some(seconds) = unit_seconds(unit)
        && let Ok(count) = text[..text.len() - 1].parse::<i64>()
        && count >= 0
    {
        // A duration past what a date holds reads as the earliest date there is.
        let ago = chrono::TimeDelta::try_seconds(count.saturating_mul(seconds));
        return Ok(ago.and_then(|ago| now.checked_sub_signed(ago)).unwrap_or(DateTime::<Utc>::MIN_UTC));
    }
    parse(text).ok_or_else(|| NotATime(text.to_owned()))
}

/// A text [`before`] reads as no time.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("`{0}` is neither a duration (7d, 24h, 30m) nor an ISO-8601 time (2026-11-30T09:00:00Z)")]
pub struct NotATime(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_host_forms_and_rejects_garbage() {
        let base = parse("2026-07-15T12:00:05Z").unwrap();
        for ok in [
            "2026-07-15T12:00:05.000Z",
            "2026-07-15T12:00:05+00:00",
            "2026-07-15 12:00:05",
            "2026-07-15T14:00:05+02:00",
            "20260715T120005Z",
        ] {
            assert_eq!(parse(ok), Some(base), "{ok}");
        }
        assert!(parse("2026-07-15").is_some());
        for bad in ["", "yesterday", "2026-13-01T00:00:00Z", "12:00"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn formats_like_python_isoformat() {
        let t = parse("2026-07-15T12:00:08.123456Z").unwrap();
        assert_eq!(format_utc(t), "2026-07-15T12:00:08.123456Z");
        assert_eq!(format_utc(parse("2026-07-15T12:00:08Z").unwrap()), "2026-07-15T12:00:08Z");
    }

    #[test]
    fn before_takes_durations_and_timestamps() {
        let now = parse("2026-12-01T12:00:00Z").unwrap();
        let at = |text| before(text, now).map(format_utc).map_err(|e| e.to_string());
        assert_eq!(at("7d").unwrap(), "2026-11-24T12:00:00Z");
        assert_eq!(at("24h").unwrap(), "2026-11-30T12:00:00Z");
        assert_eq!(at("30m").unwrap(), "2026-12-01T11:30:00Z");
        assert_eq!(at("2026-11-30T09:00:00Z").unwrap(), "2026-11-30T09:00:00Z");
        assert_eq!(at("2026-11-30").unwrap(), "2026-11-30T00:00:00Z");
        assert!(at("7 days").unwrap_err().starts_with("`7 days` is neither a duration"));
        assert!(at("-3d").is_err());
        assert_eq!(at("99999999999999d").unwrap(), format_utc(DateTime::<Utc>::MIN_UTC));
    }
}
