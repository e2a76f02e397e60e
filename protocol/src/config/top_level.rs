//! The top level of `config.toml`, read key by key: each host's roots come under the key
//! its own module names, so no field here names a host. A key that is neither is refused
//! as a derived schema would refuse it, at its line and with every valid key listed (the
//! hint for a misspelling reads that list).

use super::ConfigFile;
use judged_core::event::Host;
use judged_io::files::HostRoots;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::sync::LazyLock;

/// The top level's keys besides the hosts' roots, in the order a refusal lists them.
const OWN_KEYS: [&str; 7] = ["opencode_databases", "gate", "jury", "server", "store", "attest", "auto_start"];

/// Every key of the top level: each host's roots, then [`OWN_KEYS`].
fn every_key() -> &'static [&'static str] {
    static KEYS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
        let roots = Host::ALL.into_iter().map(|host| judged_core::adapter::of(host).roots_key());
        roots.chain(OWN_KEYS).collect()
    });
    &KEYS
}

/// One key of the top level.
enum Key {
    Roots(Host),
    OpencodeDatabases,
    Gate,
    Jury,
    Server,
    Store,
    Attest,
    AutoStart,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key of config.toml")
            }
            // Refused here, while the key is read, the error keeps the key's place.
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                if let Some(host) = HostRoots::host_of_key(key) {
                    return Ok(Key::Roots(host));
                }
                Ok(match key {
                    "opencode_databases" => Key::OpencodeDatabases,
                    "gate" => Key::Gate,
                    "jury" => Key::Jury,
                    "server" => Key::Server,
                    "store" => Key::Store,
                    "attest" => Key::Attest,
                    "auto_start" => Key::AutoStart,
                    _ => return Err(E::unknown_field(key, every_key())),
                })
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}

impl<'de> Deserialize<'de> for ConfigFile {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ConfigFile, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = ConfigFile;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("config.toml's tables and keys")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ConfigFile, A::Error> {
                let mut file = ConfigFile::default();
                while let Some(key) = map.next_key::<Key>()? {
                    match key {
                        Key::Roots(host) => file.roots = std::mem::take(&mut file.roots).with(host, map.next_value()?),
                        Key::OpencodeDatabases => file.opencode_databases = map.next_value()?,
                        Key::Gate => file.gate = map.next_value()?,
                        Key::Jury => file.jury = Some(map.next_value()?),
                        Key::Server => file.server = map.next_value()?,
                        Key::Store => file.store = map.next_value()?,
                        Key::Attest => file.attest = map.next_value()?,
                        Key::AutoStart => file.auto_start = Some(map.next_value()?),
                    }
                }
                Ok(file)
            }
        }
        deserializer.deserialize_struct("ConfigFile", every_key(), Keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// Each host's roots are read under its own key; any other key is refused at its
    /// line, every valid key listed in the order the file's reference gives them, so the
    /// nearest one is suggested.
    #[test]
    fn each_hosts_roots_are_read_under_its_key_and_an_unknown_key_is_refused_at_its_line() {
        let path = Path::new("/c/config.toml");
        let text = "qwen_roots = [\"/q\"]\nauto_start = false\n[server]\nidle_seconds = 5\n";
        let file: ConfigFile = super::super::parse_toml(path, text).unwrap();
        assert_eq!(file.roots_of(Host::QwenCode), [PathBuf::from("/q")]);
        assert!(file.roots_of(Host::ClaudeCode).is_empty());
        assert_eq!((file.auto_start, file.server.idle_seconds), (Some(false), 5));
        let error = super::super::parse_toml::<ConfigFile>(path, "auto_start = true\n\nclaude_root = [\"/p\"]\n")
            .unwrap_err()
            .summary();
        assert!(error.starts_with("/c/config.toml line 3: unknown field `claude_root`, expected one of `copilot_roots`, `claude_roots`, `codex_roots`, `gemini_roots`, `qwen_roots`, `opencode_roots`, `opencode_databases`, `gate`, `jury`, `server`, `store`, `attest`, `auto_start`"), "{error}");
        assert!(error.ends_with("(did you mean `claude_roots`?)"), "{error}");
        let error = super::super::parse_toml::<ConfigFile>(path, "\ncodex_roots = 3\n").unwrap_err().summary();
        assert!(error.starts_with("/c/config.toml line 2: invalid type: integer `3`, expected a sequence"), "{error}");
    }
}
