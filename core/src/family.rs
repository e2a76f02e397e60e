//! Model-family derivation from a host-reported model id.
//!
//! A review counts only when executor and reviewer come from different families, and the
//! family is always derived from the model string, never declared by a caller. A token
//! matches as a whole word (no ASCII letter or digit on either side); the gate's extra
//! families also let digits and dots follow the token directly (`qwen3.6-plus`). When no
//! family or more than one family matches, the result is unknown: ambiguity fails closed.

/// Which table to use: the evidence rules know the hosts' four families, the review gate
/// thirteen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// The reference helper's three (OpenAI, Anthropic, Google), strict word boundaries,
    /// and Qwen, Qwen Code's own family (`qwen3-coder-plus`: digits and dots may follow its
    /// token): what `challenge`, `verify` and `validate` write and check.
    Evidence,
    /// All thirteen, as `review_gate.py` derives families for the round gate.
    Gate,
}

struct Family {
    name: &'static str,
    tokens: &'static [&'static str],
    /// Whether `[0-9.]*` may follow the token before the word boundary.
    version_suffix: bool,
}

// The three families the hosts and reviewer CLIs belong to, named once for the code that
// decides by them (routing, fallbacks, `judged init`).
/// OpenAI's models (GPT, Codex).
pub const OPENAI: &str = "openai";
/// Anthropic's models (Claude).
pub const ANTHROPIC: &str = "anthropic";
/// Google's models (Gemini).
pub const GOOGLE: &str = "google";
/// Alibaba's Qwen models (Qwen Code's own).
pub const QWEN: &str = "qwen";
/// The three, in the order `judged init` looks for them.
pub const HOST_FAMILIES: [&str; 3] = [OPENAI, GOOGLE, ANTHROPIC];

const FAMILIES: &[Family] = &[
    Family { name: OPENAI, tokens: &["gpt", "chatgpt", "codex", "oracle", "o1", "o3", "o4"], version_suffix: false },
    Family { name: ANTHROPIC, tokens: &["claude", "sonnet", "opus", "haiku", "anthropic"], version_suffix: false },
    Family { name: GOOGLE, tokens: &["gemini", "google"], version_suffix: false },
    Family { name: QWEN, tokens: &["qwen", "tongyi"], version_suffix: true },
    Family { name: "deepseek", tokens: &["deepseek"], version_suffix: true },
    Family { name: "moonshot", tokens: &["kimi", "moonshot"], version_suffix: true },
    Family { name: "zhipu", tokens: &["glm", "zhipu"], version_suffix: true },
    Family { name: "minimax", tokens: &["minimax", "abab"], version_suffix: true },
    Family { name: "xiaomi", tokens: &["mimo", "xiaomi"], version_suffix: true },
    Family { name: "bytedance", tokens: &["doubao", "bytedance", "volcengine"], version_suffix: true },
    Family { name: "xai", tokens: &["grok"], version_suffix: true },
    Family { name: "meta", tokens: &["llama"], version_suffix: true },
    Family { name: "mistral", tokens: &["mistral", "mixtral"], version_suffix: true },
];

/// The string written where no single family is known.
pub const UNKNOWN: &str = "unknown";

/// The family of `model`, or `None` when it is unknown or ambiguous.
pub fn family(model: &str, table: Table) -> Option<&'static str> {
    let model = model.trim().to_lowercase();
    let families = match table {
        Table::Evidence => &FAMILIES[..4],
        Table::Gate => FAMILIES,
    };
    let mut found: Option<&'static str> = None;
    for family in families {
        if family.tokens.iter().any(|t| contains_word(&model, t, family.version_suffix)) {
            if found.is_some() {
                return None;
            }
            found = Some(family.name);
        }
    }
    found
}

fn contains_word(haystack: &str, token: &str, version_suffix: bool) -> bool {
    let bytes = haystack.as_bytes();
    let is_word = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    haystack.match_indices(token).any(|(start, _)| {
        if start > 0 && is_word(bytes[start - 1]) {
            return false;
        }
        let mut end = start + token.len();
        if version_suffix {
            while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b'.') {
                end += 1;
            }
        }
        end == bytes.len() || !is_word(bytes[end])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_table_examples_from_the_spec() {
        for (model, want) in [
            ("gpt-5.4", "openai"),
            ("GPT-5.5", "openai"),
            ("gpt-5-mini", "openai"),
            ("o3-mini", "openai"),
            ("o1-preview", "openai"),
            ("codex-mini", "openai"),
            ("chatgpt-4o-latest", "openai"),
            ("openai/gpt-5", "openai"),
            ("claude-sonnet-4.6", "anthropic"),
            ("claude_opus", "anthropic"),
            ("  Claude-Haiku  ", "anthropic"),
            ("gemini-3.1-pro", "google"),
            ("google/gemini", "google"),
            ("anthropic/claude", "anthropic"),
            ("deepseek-gpt", "openai"),
            // Beyond the reference helper's three: Qwen Code's own family.
            ("qwen3-coder-plus", "qwen"),
            ("qwen3.6-plus", "qwen"),
        ] {
            assert_eq!(family(model, Table::Evidence), Some(want), "{model}");
        }
        for model in [
            "gpt5",
            "o4mini",
            "claude3",
            "4o1",
            "gpt-5.4-claude",
            "google-gpt",
            "auto",
            "mystery-model",
            "",
            "openai",
            "qwen-gpt",
            "deepseek-v3",
        ] {
            assert_eq!(family(model, Table::Evidence), None, "{model}");
        }
    }

    #[test]
    fn gate_table_adds_ten_families_with_version_suffixes() {
        for (model, want) in [
            ("qwen3.6-plus", "qwen"),
            ("deepseek-v3", "deepseek"),
            ("kimi-k2", "moonshot"),
            ("glm4.5", "zhipu"),
            ("abab6.5", "minimax"),
            ("mimo-7b", "xiaomi"),
            ("doubao-pro", "bytedance"),
            ("grok-4", "xai"),
            ("llama3.1-70b", "meta"),
            ("mixtral-8x7b", "mistral"),
            ("gpt-5.4", "openai"),
        ] {
            assert_eq!(family(model, Table::Gate), Some(want), "{model}");
        }
        // The original three keep the strict boundary even in the gate table.
        assert_eq!(family("gpt5", Table::Gate), None);
        // Two families is unknown in the gate even where the helper sees one.
        assert_eq!(family("deepseek-gpt", Table::Gate), None);
    }
}
