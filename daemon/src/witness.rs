//! The daemon's witness: an HMAC-SHA256 over an artifact, by a key only the daemon's
//! account can read. It proves "judged issued (or verified) exactly this artifact", which
//! a hash recomputed by hand cannot.

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value};
use sha2::Sha256;
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub struct Witness {
    key: [u8; 32],
}

impl Witness {
    /// Load the key, creating it (mode 0600) on first start.
    pub fn load_or_create(path: &Path) -> std::io::Result<Witness> {
        if let Ok(bytes) = fs::read(path) {
            if let Ok(key) = <[u8; 32]>::try_from(bytes.as_slice()) {
                return Ok(Witness { key });
            }
            return Err(std::io::Error::other(format!("{} is not a 32-byte witness key", path.display())));
        }
        let mut key = [0u8; 32];
        rand::fill(&mut key);
        let mut file = fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
        file.write_all(&key)?;
        file.sync_all()?;
        Ok(Witness { key })
    }

    /// The witness of `artifact`, over its canonical JSON without the `witness` field.
    pub fn sign(&self, artifact: &Map<String, Value>) -> String {
        let mut unsigned = artifact.clone();
        unsigned.remove("witness");
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        mac.update(judged_core::pyjson::canonical(&Value::Object(unsigned)).as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    pub fn check(&self, artifact: &Map<String, Value>) -> bool {
        artifact.get("witness").and_then(Value::as_str).is_some_and(|w| w == self.sign(artifact))
    }
}
