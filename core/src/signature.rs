//! judged's signature on the artifacts it issues, as anyone holding its public key can
//! check it (docs/spec/evidence-protocol.md §2.7).
//!
//! The daemon signs an artifact's canonical bytes with an Ed25519 key only its account
//! can read; the `witness` field carries `ed25519:<key id>:<signature>`. The public key
//! checks it anywhere (another machine, a CI job) without the daemon, its journal or the
//! session log. What a signature proves is that judged issued exactly these fields; that
//! the log still holds what it rests on is a daemon-mode `validate`'s to say.

use crate::rules::{Artifact, Signable};
use ed25519_dalek::Signer;
use ed25519_dalek::pkcs8::{DecodePublicKey, EncodePublicKey};
use serde_json::Value;
use sha2::Digest;

/// What the `witness` field of a signed artifact starts with.
const SCHEME: &str = "ed25519:";

/// The bytes a witness signs: the artifact's fields except `witness`, as canonical JSON
/// (sorted keys, no spaces, non-ASCII kept as UTF-8: [`crate::pyjson::canonical`]).
pub fn signed_bytes(artifact: &impl Signable) -> Vec<u8> {
    let mut unsigned = artifact.json();
    if let Value::Object(fields) = &mut unsigned {
        fields.remove("witness");
    }
    crate::pyjson::canonical(&unsigned).into_bytes()
}

/// A judged signing key (the daemon's secret).
pub struct SigningKey(ed25519_dalek::SigningKey);

impl SigningKey {
    /// The key whose 32-byte secret seed is `seed`.
    pub fn from_seed(seed: &[u8; 32]) -> SigningKey {
        SigningKey(ed25519_dalek::SigningKey::from_bytes(seed))
    }

    /// The public key that checks this key's signatures.
    pub fn public_key(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// The `witness` of `artifact`: `ed25519:<key id>:<signature, hex>`. Ed25519 is
    /// deterministic, so the same fields signed again give the same witness.
    pub fn sign(&self, artifact: &impl Signable) -> String {
        format!("{SCHEME}{}:{}", self.public_key().key_id(), hex::encode(self.sign_message(&signed_bytes(artifact))))
    }

    /// The Ed25519 signature (RFC 8032) of `message` itself: what an attestation's
    /// envelope carries over its pre-authentication encoding ([`crate::attestation`]).
    pub fn sign_message(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }
}

/// A judged public key: 32 bytes, written as 64 hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicKey(ed25519_dalek::VerifyingKey);

/// Why a text is not a public key.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "`{text}` is not a judged public key: expected 64 hex digits, as `judged key` prints it, or the base64 \
     line of its PEM (`judged key --pem`)"
)]
pub struct BadPublicKey {
    /// The text given (trimmed).
    pub text: String,
}

impl std::str::FromStr for PublicKey {
    type Err = BadPublicKey;

    /// The key as `judged key` prints it (64 hex digits), or its SubjectPublicKeyInfo in
    /// base64 (the line between a PEM's markers, as other tools print it).
    fn from_str(text: &str) -> Result<PublicKey, BadPublicKey> {
        let text = text.trim();
        let bad = || BadPublicKey { text: text.to_owned() };
        if let Ok(bytes) = hex::decode(text) {
            let bytes: [u8; 32] = bytes.try_into().map_err(|_| bad())?;
            return ed25519_dalek::VerifyingKey::from_bytes(&bytes).map(PublicKey).map_err(|_| bad());
        }
        let der = <base64ct::Base64 as base64ct::Encoding>::decode_vec(text).map_err(|_| bad())?;
        PublicKey::from_spki_der(&der).ok_or_else(bad)
    }
}

impl std::fmt::Display for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex::encode(self.0.as_bytes()))
    }
}

impl PublicKey {
    /// The short name a witness gives its key: the first 8 bytes of the key's SHA-256, hex.
    pub fn key_id(&self) -> String {
        hex::encode(&sha2::Sha256::digest(self.0.as_bytes())[..8])
    }

    /// The key as X.509 SubjectPublicKeyInfo, DER (RFC 8410): the form other tools read.
    pub fn spki_der(&self) -> Vec<u8> {
        self.0.to_public_key_der().expect("an Ed25519 key encodes").into_vec()
    }

    /// [`PublicKey::spki_der`] as PEM (`-----BEGIN PUBLIC KEY-----`), `\n` line ends.
    pub fn pem(&self) -> String {
        self.0.to_public_key_pem(ed25519_dalek::pkcs8::spki::der::pem::LineEnding::LF).expect("an Ed25519 key encodes")
    }

    /// The id an attestation names its key by (its DSSE `keyid`): the SHA-256 of
    /// [`PublicKey::spki_der`], 64 hex digits, which anyone holding the key in any form
    /// computes alike.
    pub fn spki_id(&self) -> String {
        hex::encode(sha2::Sha256::digest(self.spki_der()))
    }

    /// The Ed25519 key a SubjectPublicKeyInfo holds; none for anything else.
    pub fn from_spki_der(der: &[u8]) -> Option<PublicKey> {
        ed25519_dalek::VerifyingKey::from_public_key_der(der).ok().map(PublicKey)
    }

    /// Whether `signature` is this key's over `message`, in the one encoding RFC 8032
    /// allows (`verify_strict`: no malleable forms).
    pub fn verifies(&self, message: &[u8], signature: &[u8; 64]) -> bool {
        self.0.verify_strict(message, &ed25519_dalek::Signature::from_bytes(signature)).is_ok()
    }
}

/// Why an artifact's witness does not check against the keys given.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SignatureError {
    /// No `witness` field: decided without the daemon.
    #[error(
        "carries no judged witness: it was decided without the daemon (direct mode), so nothing signed it; \
         verify it again with judged running"
    )]
    Unwitnessed,
    /// A witness from before signatures: an HMAC only the daemon holding its key can check.
    #[error(
        "carries a shared-secret (HMAC) witness from an older judged, which only that daemon can check; \
         validate it without a public key where that daemon runs, or verify the review again for a signed witness"
    )]
    SharedSecret,
    /// A `witness` field that is neither form judged writes.
    #[error("witness `{0}` is not one judged writes (ed25519:<key id>:<signature>): the artifact was edited")]
    Malformed(String),
    /// Signed by a key none of those given is.
    #[error(
        "was signed by judged key {key_id}, which is not among the keys given ({given}); \
         pass the key `judged key --json` lists with that id"
    )]
    UnknownKey {
        /// The signing key's id, from the witness.
        key_id: String,
        /// The ids of the keys given.
        given: String,
    },
    /// The signature does not match the fields.
    #[error(
        "signature by judged key {key_id} does not match its fields: the artifact was edited after judged signed it"
    )]
    Edited {
        /// The signing key's id.
        key_id: String,
    },
}

/// Check `artifact`'s witness against `keys` (any of them may have signed it); the key
/// that did.
pub fn check(artifact: &Artifact, keys: &[PublicKey]) -> Result<PublicKey, SignatureError> {
    let Some(witness) = artifact.get("witness") else { return Err(SignatureError::Unwitnessed) };
    let Some(text) = witness.as_str() else { return Err(SignatureError::Malformed(witness.to_string())) };
    let Some(signed) = text.strip_prefix(SCHEME) else {
        // The HMAC witness judged wrote before: 32 bytes, lower-case hex as it wrote them.
        let shared_secret = text.len() == 64 && is_lower_hex(text);
        return Err(if shared_secret { SignatureError::SharedSecret } else { SignatureError::Malformed(text.into()) });
    };
    let malformed = || SignatureError::Malformed(text.into());
    let (key_id, signature) = signed.split_once(':').ok_or_else(malformed)?;
    // Only the encoding judged writes (lower-case hex; `hex::decode` takes upper case too),
    // so that one set of fields has one valid witness per key.
    if key_id.len() != 16 || !is_lower_hex(key_id) || signature.len() != 128 || !is_lower_hex(signature) {
        return Err(malformed());
    }
    let signature: [u8; 64] = hex::decode(signature).ok().and_then(|b| b.try_into().ok()).ok_or_else(malformed)?;
    let Some(key) = keys.iter().find(|k| k.key_id() == key_id) else {
        let given = keys.iter().map(PublicKey::key_id).collect::<Vec<_>>().join(", ");
        return Err(SignatureError::UnknownKey { key_id: key_id.into(), given });
    };
    // Strict: one set of fields has one valid witness per key.
    if key.verifies(&signed_bytes(artifact), &signature) {
        Ok(*key)
    } else {
        Err(SignatureError::Edited { key_id: key_id.into() })
    }
}

/// Whether `text` is hex as judged writes it: digits and `a`..`f`.
fn is_lower_hex(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether `witness` is a signature (not an HMAC from before signatures).
pub fn is_signature(witness: &str) -> bool {
    witness.starts_with(SCHEME)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn artifact(value: Value) -> Artifact {
        serde_json::from_value(value).unwrap()
    }

    fn with(artifact: &Artifact, key: &str, value: &str) -> Artifact {
        let mut fields = artifact.0.clone();
        fields.insert(key.into(), value.into());
        Artifact::from(fields)
    }

    #[test]
    fn the_signed_bytes_are_the_sorted_compact_fields_without_the_witness() {
        let a = artifact(json!({"status": "verified", "nonce": "n", "witness": "x", "cwd": "/é"}));
        assert_eq!(String::from_utf8(signed_bytes(&a)).unwrap(), r#"{"cwd":"/é","nonce":"n","status":"verified"}"#);
    }

    #[test]
    fn a_signature_checks_with_its_key_only_and_only_on_the_fields_it_signed() {
        let key = SigningKey::from_seed(&[7; 32]);
        let other = SigningKey::from_seed(&[8; 32]).public_key();
        let mut a = artifact(json!({"nonce": "n", "status": "verified"}));
        let witness = key.sign(&a);
        assert_eq!(witness, key.sign(&a), "deterministic");
        a = with(&a, "witness", &witness);
        assert_eq!(check(&a, &[other, key.public_key()]), Ok(key.public_key()));
        let id = key.public_key().key_id();
        let unknown = check(&a, &[other]).unwrap_err();
        assert_eq!(unknown, SignatureError::UnknownKey { key_id: id.clone(), given: other.key_id() });
        assert!(unknown.to_string().contains(&format!("signed by judged key {id}")), "{unknown}");
        a = with(&a, "status", "forged");
        let edited = check(&a, &[key.public_key()]).unwrap_err();
        assert_eq!(edited, SignatureError::Edited { key_id: id });
        assert!(edited.to_string().contains("the artifact was edited after judged signed it"), "{edited}");
    }

    #[test]
    fn unsigned_hmac_and_malformed_witnesses_say_which_they_are() {
        let key = SigningKey::from_seed(&[7; 32]).public_key();
        let mut a = artifact(json!({"nonce": "n"}));
        assert_eq!(check(&a, &[key]), Err(SignatureError::Unwitnessed));
        assert!(SignatureError::Unwitnessed.to_string().contains("verify it again with judged running"));
        a = with(&a, "witness", &"ab".repeat(32));
        let hmac = check(&a, &[key]).unwrap_err();
        assert_eq!(hmac, SignatureError::SharedSecret);
        assert!(hmac.to_string().contains("verify the review again"), "{hmac}");
        let signed = SigningKey::from_seed(&[7; 32]).sign(&a);
        let (head, signature) = signed.rsplit_once(':').unwrap();
        let upper = format!("{head}:{}", signature.to_uppercase());
        let upper_id = format!("ed25519:{}:{signature}", key.key_id().to_uppercase());
        for bad in ["ed25519:nocolon", "ed25519:id:zz", "hello", &upper, &upper_id, &"AB".repeat(32)] {
            a = with(&a, "witness", bad);
            assert_eq!(check(&a, &[key]), Err(SignatureError::Malformed(bad.into())), "{bad}");
        }
    }

    #[test]
    fn a_public_key_reads_back_as_printed_and_bad_text_says_what_is_expected() {
        let key = SigningKey::from_seed(&[7; 32]).public_key();
        assert_eq!(format!(" {key}\n").parse::<PublicKey>(), Ok(key));
        let pem_body: String = key.pem().lines().filter(|l| !l.starts_with("-----")).collect();
        assert_eq!(pem_body.parse::<PublicKey>(), Ok(key), "the PEM's base64 line: {pem_body}");
        let bad = "abc".parse::<PublicKey>().unwrap_err();
        assert!(bad.to_string().contains("expected 64 hex digits, as `judged key` prints it"), "{bad}");
    }

    /// RFC 8410 §10.1's example key, as OpenSSL prints it: the SPKI, its PEM and the id
    /// anyone holding the key computes.
    #[test]
    fn a_public_key_exports_as_the_spki_of_rfc_8410() {
        let key: PublicKey = "19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1".parse().unwrap();
        assert_eq!(
            key.pem(),
            "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n"
        );
        assert_eq!(PublicKey::from_spki_der(&key.spki_der()), Some(key));
        assert_eq!(key.spki_id(), hex::encode(sha2::Sha256::digest(key.spki_der())));
        assert_eq!(key.spki_id().len(), 64);
    }
}
