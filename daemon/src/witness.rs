//! The daemon's witness: an HMAC-SHA256 over an artifact, by a key only the daemon's
//! account can read. It proves "judged issued (or verified) exactly this artifact", which
//! a hash recomputed by hand cannot.

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// The witness key.
pub struct Witness {
    key: [u8; 32],
}

impl Witness {
    /// Load the key (made owner-only again if its mode was loosened), creating it on first
    /// start: written whole to a temporary file, synced, then renamed into place, so a
    /// crash can never leave a partial key behind.
    pub fn load_or_create(path: &Path) -> std::io::Result<Witness> {
        match fs::read(path) {
            Ok(bytes) => {
                let key = <[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| {
                    std::io::Error::other(format!(
                        "{} is not a 32-byte witness key; move it away to start with a new key \
                         (artifacts it witnessed will no longer validate)",
                        path.display()
                    ))
                })?;
                let mode = fs::metadata(path)?.permissions().mode();
                if mode & 0o077 != 0 {
                    tracing::warn!(path = %path.display(), mode = format!("{mode:o}"), "witness key was readable by others; made owner-only");
                    fs::set_permissions(path, fs::Permissions::from_mode(0o600))?;
                }
                Ok(Witness { key })
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let mut key = [0u8; 32];
                rand::fill(&mut key);
                let temp = path.with_extension("key.tmp");
                let _ = fs::remove_file(&temp);
                let mut file = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temp)?;
                file.write_all(&key)?;
                file.sync_all()?;
                fs::rename(&temp, path)?;
                Ok(Witness { key })
            }
            Err(error) => Err(error),
        }
    }

    /// The MAC over `artifact`'s canonical JSON without the `witness` field.
    fn mac(&self, artifact: &Map<String, Value>) -> Hmac<Sha256> {
        let mut unsigned = artifact.clone();
        unsigned.remove("witness");
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        mac.update(judged_core::pyjson::canonical(&Value::Object(unsigned)).as_bytes());
        mac
    }

    /// The witness of `artifact`, hex.
    pub fn sign(&self, artifact: &Map<String, Value>) -> String {
        hex::encode(self.mac(artifact).finalize().into_bytes())
    }

    /// Whether `artifact`'s `witness` field is its witness. Compared in constant time, so
    /// the time a refusal takes tells nothing about how much of a forged witness matched.
    pub fn check(&self, artifact: &Map<String, Value>) -> bool {
        let Some(witness) = artifact.get("witness").and_then(Value::as_str).and_then(|w| hex::decode(w).ok()) else {
            return false;
        };
        self.mac(artifact).verify_slice(&witness).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_witness_checks_only_on_the_fields_it_signed() {
        let dir = tempfile::tempdir().unwrap();
        let witness = Witness::load_or_create(&dir.path().join("witness.key")).unwrap();
        let Value::Object(mut artifact) = json!({"nonce": "n", "status": "verified"}) else { unreachable!() };
        let signed = witness.sign(&artifact);
        artifact.insert("witness".into(), signed.clone().into());
        assert!(witness.check(&artifact));
        artifact.insert("status".into(), "forged".into());
        assert!(!witness.check(&artifact), "an edited field");
        artifact.insert("status".into(), "verified".into());
        // Uppercase alone could still be valid hex: the first character makes it not hex,
        // whatever the random key signed.
        artifact.insert("witness".into(), format!("g{}", &signed[1..]).into());
        assert!(!witness.check(&artifact), "a witness that is not hex");
        let reloaded = Witness::load_or_create(&dir.path().join("witness.key")).unwrap();
        artifact.insert("witness".into(), signed.into());
        assert!(reloaded.check(&artifact), "the key is kept across restarts");
    }
}
