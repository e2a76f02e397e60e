//! The per-session hash chain.
//!
//! `chain_0 = GENESIS`, `chain_n = sha256(chain_{n-1} ‖ line_sha256_n)`, where
//! `line_sha256_n` is the SHA-256 of the raw bytes of line `n` including its `\n`.
//! The genesis value is the SHA-256 of the ASCII string `judged.session-chain.v1`, so a
//! chain can never be confused with a hash of empty input. The daemon's own journal uses
//! the same construction with the genesis of `judged.journal.v1`.

use sha2::{Digest, Sha256};

/// A SHA-256 digest.
pub type Hash = [u8; 32];

/// Domain string whose SHA-256 starts every session chain.
pub const SESSION_GENESIS_DOMAIN: &str = "judged.session-chain.v1";
/// Domain string whose SHA-256 starts the daemon's journal chain.
pub const JOURNAL_GENESIS_DOMAIN: &str = "judged.journal.v1";

/// The SHA-256 of `bytes`: a line's hash, a prefix's digest, the evidence id's input.
pub fn sha256(bytes: &[u8]) -> Hash {
    Sha256::digest(bytes).into()
}

/// `chain_0` of a chain named by `domain` ([`SESSION_GENESIS_DOMAIN`] or
/// [`JOURNAL_GENESIS_DOMAIN`]): distinct domains can never produce the same chain.
pub fn genesis(domain: &str) -> Hash {
    sha256(domain.as_bytes())
}

/// One step of the chain.
pub fn link(previous: &Hash, line_sha256: &Hash) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(previous);
    hasher.update(line_sha256);
    hasher.finalize().into()
}

/// Lowercase hex, as every artifact and the journal write a digest.
pub fn to_hex(hash: &Hash) -> String {
    hex::encode(hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_depends_on_order() {
        let g = genesis(SESSION_GENESIS_DOMAIN);
        let (a, b) = (sha256(b"a\n"), sha256(b"b\n"));
        assert_ne!(link(&link(&g, &a), &b), link(&link(&g, &b), &a));
        assert_ne!(g, genesis(JOURNAL_GENESIS_DOMAIN));
    }
}
