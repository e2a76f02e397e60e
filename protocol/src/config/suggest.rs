//! "Did you mean `policy`?": the nearest valid key (or value) to one a table does not know.
//!
//! serde names an unknown key or variant and lists the valid ones in its message
//! (``unknown field `polcy`, expected one of `policy`, …``); the nearest of those by edit
//! distance, when it is near enough to be a typo, is the hint.

/// The hint for a parse error's message, if it is about an unknown key or value with a
/// near valid one.
pub fn for_message(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `").or_else(|| message.strip_prefix("unknown variant `"))?;
    let (unknown, expected) = rest.split_once('`')?;
    let nearest = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|valid| (distance(unknown, valid), valid))
        .filter(|&(d, _)| d <= unknown.chars().count().div_ceil(3).max(1))
        .min_by_key(|&(d, _)| d)?;
    Some(format!("did you mean `{}`?", nearest.1))
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb)).min(row[j] + 1).min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_gets_the_nearest_valid_key() {
        let message = "unknown field `polcy`, expected one of `projects`, `policy`, `on_error`";
        assert_eq!(for_message(message).as_deref(), Some("did you mean `policy`?"));
        let two = "unknown field `frehsness_seconds`, expected `freshness_seconds` or `events`";
        assert_eq!(for_message(two).as_deref(), Some("did you mean `freshness_seconds`?"));
        let value = "unknown variant `evidnce`, expected one of `off`, `evidence`, `panel`, `evidence_or_panel`";
        assert_eq!(for_message(value).as_deref(), Some("did you mean `evidence`?"));
    }

    #[test]
    fn a_key_near_nothing_gets_no_hint() {
        assert_eq!(for_message("unknown field `colour`, expected one of `policy`, `events`"), None);
        assert_eq!(for_message("invalid type: integer `3`, expected a string"), None);
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(distance("polcy", "policy"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
