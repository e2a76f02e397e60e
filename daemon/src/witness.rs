//! The daemon's witness: an Ed25519 signature over an artifact
//! ([`judged_core::signature`]), by a key only the daemon's account can read. It proves
//! "judged issued (or verified) exactly this artifact", which a hash recomputed by hand
//! cannot, and anyone holding the public key checks it without the daemon. The same key
//! seals the attestations of reviewed commits ([`judged_core::attestation`]).
//!
//! In the data dir: `signing.key` (the current key's 32-byte secret seed, 0600) and
//! `signing.pub` (every public key that has been current, one per line, current first:
//! rotation keeps the old ones, so artifacts signed before still check). `witness.key`,
//! the shared HMAC key judged witnessed with before, is read when present so artifacts
//! it witnessed still validate in daemon mode; it is never created again.

use hmac::{Hmac, KeyInit, Mac};
use judged_core::attestation::{Envelope, Statement};
use judged_core::rules::{Artifact, Signable};
use judged_core::signature::{self, PublicKey, SignatureError, SigningKey};
use judged_io::files;
use sha2::Sha256;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The current key's secret seed.
const SIGNING_KEY: &str = "signing.key";
/// Every public key that has been current, current first.
const PUBLIC_KEYS: &str = "signing.pub";
/// The shared HMAC key of judged before signatures.
const SHARED_SECRET: &str = "witness.key";

/// Why the witness keys cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum WitnessError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Write(#[from] files::AtomicWriteError),
    #[error(
        "{} is not a 32-byte key; move it away to start with a new key (artifacts it witnessed will no longer validate)",
        .0.display()
    )]
    BadKey(PathBuf),
    #[error("{}, line {line}: {error}; restore the file or remove the line", path.display())]
    BadPublicKey { path: PathBuf, line: usize, error: signature::BadPublicKey },
}

/// Why the daemon does not take an artifact's witness as its own.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Refusal {
    #[error("carries no judged witness: it was not issued by this daemon")]
    Unwitnessed,
    #[error("witness does not match its fields: the artifact was edited")]
    Edited,
    #[error(
        "was signed by judged key {0}, which this daemon does not hold (`judged key --json` lists the keys it does): \
         it was not issued by this daemon"
    )]
    UnknownKey(String),
    #[error(
        "carries a shared-secret (HMAC) witness, and this daemon has no {SHARED_SECRET} to check it with: \
         verify the review again for a signed witness"
    )]
    NoSharedSecret,
}

/// `judged key --json`: every key that has been current, current first.
#[derive(Debug, serde::Serialize)]
pub struct KeyListing {
    pub keys: Vec<ListedKey>,
}

/// One public key, and the ids its signatures name it by.
#[derive(Debug, serde::Serialize)]
pub struct ListedKey {
    pub public_key: String,
    /// What an artifact's `witness` names it by.
    pub key_id: String,
    /// What an attestation's envelope names it by (its DSSE `keyid`): the SHA-256 of its
    /// SubjectPublicKeyInfo.
    pub spki_id: String,
    /// The key as PEM (SubjectPublicKeyInfo).
    pub pem: String,
    pub current: bool,
}

/// How the seed file looked when read: a rotation renames a new one into place.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp {
    ino: u64,
    mtime: (i64, i64),
}

impl Stamp {
    fn of(path: &Path) -> Option<Stamp> {
        let meta = fs::metadata(path).ok()?;
        Some(Stamp { ino: meta.ino(), mtime: (meta.mtime(), meta.mtime_nsec()) })
    }
}

/// The witness keys of one data dir.
pub struct Witness {
    dir: PathBuf,
    signing: SigningKey,
    /// Every public key that has been current, current first.
    keys: Vec<PublicKey>,
    stamp: Option<Stamp>,
    shared_secret: Option<[u8; 32]>,
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> WitnessError + use<> {
    let path = path.to_owned();
    move |source| WitnessError::Io { action, path, source }
}

/// Write `bytes` to `path` whole, owner-only: a crash never leaves a partial key behind.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), WitnessError> {
    Ok(files::replace_atomically(path, bytes, files::Keep::PRIVATE, false)?)
}

/// A 32-byte key file, made owner-only again if its mode was loosened; none if absent.
fn read_key(path: &Path) -> Result<Option<[u8; 32]>, WitnessError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(io("read", path)(error)),
    };
    let key = <[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| WitnessError::BadKey(path.to_owned()))?;
    make_private(path)?;
    Ok(Some(key))
}

fn make_private(path: &Path) -> Result<(), WitnessError> {
    let mode = fs::metadata(path).map_err(io("stat", path))?.permissions().mode();
    if mode & 0o077 != 0 {
        tracing::warn!(path = %path.display(), mode = format!("{mode:o}"), "witness key was readable by others; made owner-only");
        fs::set_permissions(path, fs::Permissions::from_mode(0o600)).map_err(io("make owner-only", path))?;
    }
    Ok(())
}

impl Witness {
    /// The keys of `dir`, the signing key created on first start.
    pub fn load_or_create(dir: &Path) -> Result<Witness, WitnessError> {
        let seed_path = dir.join(SIGNING_KEY);
        let seed = match read_key(&seed_path)? {
            Some(seed) => seed,
            None => {
                let mut seed = [0u8; 32];
                rand::fill(&mut seed);
                write_private(&seed_path, &seed)?;
                seed
            }
        };
        let signing = SigningKey::from_seed(&seed);
        let keys_path = dir.join(PUBLIC_KEYS);
        let mut keys = match fs::read_to_string(&keys_path) {
            Ok(text) => text
                .lines()
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .map(|(n, line)| {
                    line.parse::<PublicKey>().map_err(|error| WitnessError::BadPublicKey {
                        path: keys_path.clone(),
                        line: n + 1,
                        error,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => return Err(io("read", &keys_path)(error)),
        };
        // The seed is written before the list, so a crash between the two (on first
        // start or in a rotation) leaves a current key the list does not name yet.
        let current = signing.public_key();
        if keys.first() != Some(&current) {
            keys.retain(|k| *k != current);
            keys.insert(0, current);
            let text: String = keys.iter().map(|k| format!("{k}\n")).collect();
            write_private(&keys_path, text.as_bytes())?;
        } else {
            make_private(&keys_path)?;
        }
        Ok(Witness {
            dir: dir.to_owned(),
            signing,
            keys,
            stamp: Stamp::of(&seed_path),
            shared_secret: read_key(&dir.join(SHARED_SECRET))?,
        })
    }

    /// Start signing with a new key; the old public keys stay listed, so what they signed
    /// still checks. A running daemon takes the new key at its next signature.
    pub fn rotate(dir: &Path) -> Result<Witness, WitnessError> {
        // Read first: the current key must be listed before its seed is replaced.
        Witness::load_or_create(dir)?;
        let mut seed = [0u8; 32];
        rand::fill(&mut seed);
        write_private(&dir.join(SIGNING_KEY), &seed)?;
        Witness::load_or_create(dir)
    }

    /// Every public key that has been current, current first.
    pub fn keys(&self) -> &[PublicKey] {
        &self.keys
    }

    /// What `judged key --json` prints.
    pub fn listing(&self) -> KeyListing {
        let keys = (self.keys.iter().enumerate())
            .map(|(n, key)| ListedKey {
                public_key: key.to_string(),
                key_id: key.key_id(),
                spki_id: key.spki_id(),
                pem: key.pem(),
                current: n == 0,
            })
            .collect();
        KeyListing { keys }
    }

    /// Read the keys again if `judged key rotate` replaced the seed since they were read;
    /// a rotation that cannot be read now leaves the keys in use as they were.
    fn follow_rotation(&mut self) {
        if Stamp::of(&self.dir.join(SIGNING_KEY)) == self.stamp {
            return;
        }
        match Witness::load_or_create(&self.dir) {
            Ok(witness) => {
                tracing::info!(key = %witness.keys[0].key_id(), "witness key rotated; signing with the new key");
                *self = witness;
            }
            Err(error) => tracing::warn!(%error, "cannot read the rotated witness key; signing with the one in use"),
        }
    }

    /// The witness of `artifact`.
    pub fn sign(&mut self, artifact: &impl Signable) -> String {
        self.follow_rotation();
        self.signing.sign(artifact)
    }

    /// The statement `statement_for` makes, given the id of the key that signs it
    /// ([`PublicKey::spki_id`]), sealed in a DSSE envelope with that key.
    pub fn seal(&mut self, statement_for: impl FnOnce(String) -> Statement) -> Envelope {
        self.follow_rotation();
        Envelope::seal(&statement_for(self.signing.public_key().spki_id()), &self.signing)
    }

    /// Whether `artifact`'s `witness` is this daemon's: a signature by one of its keys, or
    /// an HMAC by the shared key it witnessed with before signatures.
    pub fn check(&mut self, artifact: &Artifact) -> Result<(), Refusal> {
        self.follow_rotation();
        match signature::check(artifact, &self.keys) {
            Ok(_) => Ok(()),
            Err(SignatureError::Unwitnessed) => Err(Refusal::Unwitnessed),
            Err(SignatureError::UnknownKey { key_id, .. }) => Err(Refusal::UnknownKey(key_id)),
            Err(SignatureError::Edited { .. } | SignatureError::Malformed(_)) => Err(Refusal::Edited),
            Err(SignatureError::SharedSecret) => self.check_shared_secret(artifact),
        }
    }

    /// The HMAC-SHA256 witness of judged before signatures, over the same bytes. Compared
    /// in constant time, so the time a refusal takes tells nothing about how much of a
    /// forged witness matched.
    fn check_shared_secret(&self, artifact: &Artifact) -> Result<(), Refusal> {
        let key = self.shared_secret.as_ref().ok_or(Refusal::NoSharedSecret)?;
        let witness = artifact.witness().and_then(|w| hex::decode(w).ok());
        let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("any key length");
        mac.update(&signature::signed_bytes(artifact));
        match witness {
            Some(witness) if mac.verify_slice(&witness).is_ok() => Ok(()),
            _ => Err(Refusal::Edited),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value, json};

    fn artifact() -> Map<String, Value> {
        let Value::Object(artifact) = json!({"nonce": "n", "status": "verified"}) else { unreachable!() };
        artifact
    }

    /// `fields` read back as an artifact.
    fn read(fields: &Map<String, Value>) -> Artifact {
        Artifact::from(fields.clone())
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_witness_checks_only_on_the_fields_it_signed_and_the_key_is_kept_private_across_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let mut witness = Witness::load_or_create(dir.path()).unwrap();
        assert_eq!((mode(&dir.path().join(SIGNING_KEY)), mode(&dir.path().join(PUBLIC_KEYS))), (0o600, 0o600));
        assert!(!dir.path().join(SHARED_SECRET).exists(), "no shared secret is created any more");
        let mut signed = artifact();
        signed.insert("witness".into(), witness.sign(&read(&signed)).into());
        assert_eq!(witness.check(&read(&signed)), Ok(()));
        signed.insert("status".into(), "forged".into());
        assert_eq!(witness.check(&read(&signed)), Err(Refusal::Edited), "an edited field");
        signed.insert("status".into(), "verified".into());
        assert_eq!(witness.check(&read(&artifact())), Err(Refusal::Unwitnessed));
        fs::set_permissions(dir.path().join(SIGNING_KEY), fs::Permissions::from_mode(0o644)).unwrap();
        let mut reloaded = Witness::load_or_create(dir.path()).unwrap();
        assert_eq!(reloaded.check(&read(&signed)), Ok(()), "the key is kept across restarts");
        assert_eq!(mode(&dir.path().join(SIGNING_KEY)), 0o600, "made owner-only again");
    }

    #[test]
    fn after_a_rotation_what_the_old_key_signed_still_checks_and_a_running_daemon_signs_with_the_new_key() {
        let dir = tempfile::tempdir().unwrap();
        let mut running = Witness::load_or_create(dir.path()).unwrap();
        let old = running.keys()[0];
        let mut before = artifact();
        before.insert("witness".into(), running.sign(&read(&before)).into());
        let rotated = Witness::rotate(dir.path()).unwrap();
        assert_eq!(rotated.keys().len(), 2);
        assert_eq!(rotated.keys()[1], old, "the old key stays listed, after the current one");
        let mut after = artifact();
        after.insert("witness".into(), running.sign(&read(&after)).into());
        assert_eq!(
            signature::check(&read(&after), &[rotated.keys()[0]]).map(|_| ()),
            Ok(()),
            "signed with the new key"
        );
        assert_eq!(running.check(&read(&before)), Ok(()), "the old key's artifact still checks");
        let text = fs::read_to_string(dir.path().join(PUBLIC_KEYS)).unwrap();
        assert_eq!(text, format!("{}\n{old}\n", rotated.keys()[0]));
    }

    #[test]
    fn an_hmac_witness_of_judged_before_signatures_still_checks_with_its_key() {
        let dir = tempfile::tempdir().unwrap();
        let key = [9u8; 32];
        let mut old = artifact();
        let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
        mac.update(&signature::signed_bytes(&read(&old)));
        old.insert("witness".into(), hex::encode(mac.finalize().into_bytes()).into());
        let mut without = Witness::load_or_create(dir.path()).unwrap();
        assert_eq!(without.check(&read(&old)), Err(Refusal::NoSharedSecret));
        fs::write(dir.path().join(SHARED_SECRET), key).unwrap();
        let mut with = Witness::load_or_create(dir.path()).unwrap();
        assert_eq!(with.check(&read(&old)), Ok(()));
        old.insert("status".into(), "forged".into());
        assert_eq!(with.check(&read(&old)), Err(Refusal::Edited));
    }
}
