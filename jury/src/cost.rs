//! What the run would cost on pay-per-token APIs (docs/spec/jury.md §3.6, §2.8).
//!
//! The reference kept one price table keyed by model name and filled it per role, so when
//! two roles used the same model the later role's price overwrote the earlier one's (the
//! small OpenAI tier was priced as the big one). Here a price belongs to the juror that
//! declares it and is looked up by juror, so no entry can overwrite another.

use crate::config::Price;
use crate::packet::JurorLine;

/// The reference's token estimate: a quarter of the UTF-16 length, at least 1.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.encode_utf16().count() as u64 / 4).max(1)
}

/// Output tokens the "naive jury" of three big-model calls is assumed to produce each.
const NAIVE_OUTPUT_TOKENS: f64 = 64.0;

/// The packet's cost figures: list-price estimates, not bills.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// Rounded to 6 decimals.
    pub usd: f64,
    /// `usd` over three calls of the priciest configured juror, rounded to 4 decimals;
    /// `None` when no juror has a price.
    pub vs_naive_ratio: Option<f64>,
}

/// Sum each juror's tokens at its own price; `price_of` maps a juror name to its price.
pub fn estimate(
    jurors: &[&JurorLine],
    price_of: impl Fn(&str) -> Option<Price>,
    prompt: &str,
    priciest: Option<Price>,
) -> Cost {
    let usd = jurors.iter().fold(0.0, |total, j| match price_of(&j.name) {
        Some(p) => total + j.tokens_in as f64 / 1e6 * p.input_per_mtok + j.tokens_out as f64 / 1e6 * p.output_per_mtok,
        None => total,
    });
    let usd = round_half_up(usd, 1e6);
    let naive = priciest.map_or(0.0, |p| {
        3.0 * (estimate_tokens(prompt) as f64 / 1e6 * p.input_per_mtok + NAIVE_OUTPUT_TOKENS / 1e6 * p.output_per_mtok)
    });
    Cost { usd, vs_naive_ratio: (naive > 0.0).then(|| round_half_up(usd / naive, 1e4)) }
}

/// JavaScript's `Math.round(x * scale) / scale` (halves toward +∞).
fn round_half_up(x: f64, scale: f64) -> f64 {
    (x * scale + 0.5).floor() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cascade::tests::juror;
    use crate::packet::JurorVerdict;

    #[test]
    fn estimates_count_utf16_units() {
        assert_eq!(estimate_tokens(""), 1);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
        assert_eq!(estimate_tokens("⚠⚠⚠⚠"), 1); // 4 units, 12 bytes
        assert_eq!(estimate_tokens("😀😀"), 1); // 4 units (surrogate pairs)
    }

    #[test]
    fn two_jurors_with_the_same_model_keep_their_own_prices() {
        let mut small = juror("small", "openai", JurorVerdict::Pass, 90);
        let mut big = juror("big", "openai", JurorVerdict::Pass, 90);
        assert_eq!(small.model, big.model);
        (small.tokens_in, small.tokens_out, big.tokens_in, big.tokens_out) = (1000, 100, 1000, 100);
        let small_price = Price { input_per_mtok: 0.05, output_per_mtok: 0.40 };
        let big_price = Price { input_per_mtok: 1.25, output_per_mtok: 10.0 };
        let price_of = |name: &str| match name {
            "small" => Some(small_price),
            "big" => Some(big_price),
            _ => None,
        };
        let cost = estimate(&[&small, &big], price_of, &"x".repeat(4000), Some(big_price));
        // small: 0.00005 + 0.00004; big: 0.00125 + 0.001.
        assert!((cost.usd - 0.00234).abs() < 1e-12, "{}", cost.usd);
        // naive: 3 × (1000 × 1.25 + 64 × 10) / 1e6 = 0.00567.
        assert_eq!(cost.vs_naive_ratio, Some(0.4127));
        let unpriced = estimate(&[&small], |_| None, "p", None);
        assert_eq!(unpriced, Cost { usd: 0.0, vs_naive_ratio: None });
    }
}
