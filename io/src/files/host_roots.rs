//! The roots named for each host, each under its host's own key
//! ([`HostLog::roots_key`](judged_core::adapter::HostLog::roots_key): `copilot_roots`,
//! `claude_roots`, …). `config.toml` names them so and the status reply shows them so; a
//! new host's key comes from its own module, not from a field here.

use judged_core::adapter;
use judged_core::event::Host;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::path::PathBuf;

/// Roots per host, in the order they were named; a host named none has none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostRoots(Vec<(Host, Vec<PathBuf>)>);

impl HostRoots {
    /// These roots, with `roots` as `host`'s.
    pub fn with(mut self, host: Host, roots: Vec<PathBuf>) -> HostRoots {
        match self.0.iter_mut().find(|(h, _)| *h == host) {
            Some((_, had)) => *had = roots,
            None => self.0.push((host, roots)),
        }
        self
    }

    /// `host`'s roots.
    pub fn of(&self, host: Host) -> &[PathBuf] {
        self.0.iter().find(|(h, _)| *h == host).map_or(&[], |(_, roots)| roots)
    }

    /// Each host named with its roots, in the order they were named.
    pub fn iter(&self) -> impl Iterator<Item = (Host, &[PathBuf])> {
        self.0.iter().map(|(host, roots)| (*host, roots.as_slice()))
    }

    /// The host whose roots `key` names (`claude_roots`: Claude Code).
    pub fn host_of_key(key: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|host| adapter::of(*host).roots_key() == key)
    }
}

/// Every host's key, in [`Host::ALL`]'s order, an empty list for a host with none: the
/// status reply shows each.
impl Serialize for HostRoots {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(Host::ALL.len()))?;
        for host in Host::ALL {
            map.serialize_entry(adapter::of(host).roots_key(), self.of(host))?;
        }
        map.end()
    }
}

/// The hosts' keys of a map, other keys passed over: the roots of a reply flattened into
/// it. `config.toml`, which refuses a key it does not know, reads each key itself.
impl<'de> Deserialize<'de> for HostRoots {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<HostRoots, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = HostRoots;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map of each host's roots")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HostRoots, A::Error> {
                let mut roots = HostRoots::default();
                while let Some(key) = map.next_key::<String>()? {
                    match HostRoots::host_of_key(&key) {
                        Some(host) => roots = roots.with(host, map.next_value()?),
                        None => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(roots)
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each host's roots go under its own key, every host shown; read back, the other
    /// keys of the map are passed over.
    #[test]
    fn each_hosts_roots_travel_under_its_own_key() {
        let roots = HostRoots::default().with(Host::ClaudeCode, vec!["/p".into()]);
        let json = serde_json::to_value(&roots).unwrap();
        assert_eq!(json["claude_roots"], serde_json::json!(["/p"]));
        assert_eq!(json.as_object().unwrap().len(), Host::ALL.len());
        assert_eq!(json["copilot_roots"], serde_json::json!([]));
        let read: HostRoots = serde_json::from_str(r#"{"pid": 7, "qwen_roots": ["/q"]}"#).unwrap();
        assert_eq!(read.of(Host::QwenCode), [PathBuf::from("/q")]);
        assert!(read.of(Host::ClaudeCode).is_empty());
        assert_eq!(HostRoots::host_of_key("codex_roots"), Some(Host::CodexCli));
        assert_eq!(HostRoots::host_of_key("codex_root"), None);
    }
}
