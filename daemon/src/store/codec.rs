//! How a line's bytes are kept: zstd-compressed, one line at a time, with a dictionary
//! trained on the host's own lines once enough of them were seen.
//!
//! Session logs are JSON lines whose keys and shapes repeat from line to line and session
//! to session, so a dictionary is what makes single lines compress well (measured on the
//! hosts' real logs: about 2.5× per line without one, 4–8× with a 32 KiB dictionary
//! trained on other lines of the same host) while each line stays readable by its
//! sequence number alone. Level 1 keeps ingest near the speed of hashing.
//!
//! Every hash and chain is over the raw bytes, computed before compression: what is kept
//! is a representation, not the record. A dictionary is written once and never changed
//! (the table is append-only), so a line compressed with it reads back for as long as the
//! store lives.

use super::{Result, StoreError};
use judged_core::event::Host;
use rusqlite::{Connection, params};
use rustc_hash::FxHashMap;

/// The zstd level lines are compressed at: the fastest, for ingest's sake.
const LEVEL: i32 = 1;
/// How much of a host's line starts is gathered before its dictionary is trained (measured:
/// half a MiB trains in a third less time than one, for a ratio within 2 %).
const TRAINING_BYTES: usize = 512 << 10;
/// The dictionary's size: zstd's usual, and what the measurements used.
const DICTIONARY_BYTES: usize = 32 << 10;
/// The most of one line kept as a training sample: its start, where the keys every line
/// shares are (a long tool output is not what the lines have in common).
const SAMPLE_MAX_BYTES: usize = 4 << 10;

/// How a stored line's `raw` column is to be read (the `codec` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// The bytes as they are (every line of a store from before compression; a line that
    /// would not get smaller).
    Raw,
    /// zstd with no dictionary (a host's first lines, before its dictionary exists).
    Zstd,
    /// zstd with the dictionary of that id.
    ZstdDictionary(i64),
    /// Dropped by pruning: nothing is kept but the line's hash and chain.
    Pruned,
}

impl Codec {
    /// The `codec` column: NULL (raw), 0 (zstd), or a dictionary's id.
    pub fn column(self) -> Option<i64> {
        match self {
            Codec::Raw => None,
            Codec::Zstd => Some(0),
            Codec::ZstdDictionary(id) => Some(id),
            Codec::Pruned => Some(Codec::PRUNED),
        }
    }

    /// The `codec` column of a pruned line (the schema's trigger names it too).
    pub const PRUNED: i64 = -1;

    pub fn from_column(value: Option<i64>) -> Codec {
        match value {
            None => Codec::Raw,
            Some(0) => Codec::Zstd,
            Some(Codec::PRUNED) => Codec::Pruned,
            Some(id) => Codec::ZstdDictionary(id),
        }
    }
}

/// A host's compression state: its trained dictionary, or the samples gathered for it.
enum HostCodec {
    Gathering { samples: Vec<u8>, sizes: Vec<usize> },
    Trained { id: i64, compressor: Box<zstd::bulk::Compressor<'static>> },
}

/// The compressors and decompressors of the store, one per host and dictionary.
pub struct Codecs {
    hosts: FxHashMap<Host, HostCodec>,
    plain: zstd::bulk::Compressor<'static>,
    /// Every dictionary, prepared for decompression once.
    dictionaries: FxHashMap<i64, zstd::dict::DecoderDictionary<'static>>,
}

impl Codecs {
    /// The codecs over the dictionaries `conn` holds.
    pub fn load(conn: &Connection) -> Result<Codecs> {
        let mut hosts = FxHashMap::default();
        let mut dictionaries = FxHashMap::default();
        let mut stmt = conn.prepare("SELECT id, host, bytes FROM dictionaries ORDER BY id")?;
        let rows =
            stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, Vec<u8>>(2)?)))?;
        for row in rows {
            let (id, host, bytes) = row?;
            if let Some(host) = Host::parse(&host) {
                hosts.insert(host, HostCodec::Trained { id, compressor: Box::new(compressor(Some(&bytes))?) });
            }
            dictionaries.insert(id, zstd::dict::DecoderDictionary::copy(&bytes));
        }
        Ok(Codecs { hosts, plain: compressor(None)?, dictionaries })
    }

    /// `raw` as it is to be stored for a line of `host`, and how. A host's first lines
    /// gather its dictionary's samples; once there are enough, the dictionary is trained
    /// and written through `conn` (in the caller's transaction, with the lines).
    pub fn compress(&mut self, conn: &Connection, host: Host, raw: &[u8]) -> Result<(Vec<u8>, Codec)> {
        let state =
            self.hosts.entry(host).or_insert_with(|| HostCodec::Gathering { samples: Vec::new(), sizes: Vec::new() });
        if let HostCodec::Gathering { samples, sizes } = state {
            let sample = &raw[..raw.len().min(SAMPLE_MAX_BYTES)];
            samples.extend_from_slice(sample);
            sizes.push(sample.len());
            if samples.len() >= TRAINING_BYTES {
                // A dictionary that cannot be trained (too few distinct samples) leaves the
                // host on plain zstd, gathering afresh.
                match zstd::dict::from_continuous(samples, sizes, DICTIONARY_BYTES) {
                    Ok(dictionary) => {
                        conn.prepare_cached("INSERT INTO dictionaries (host, bytes) VALUES (?1, ?2)")?
                            .execute(params![host.as_str(), dictionary])?;
                        let id = conn.last_insert_rowid();
                        let compressor = Box::new(compressor(Some(&dictionary))?);
                        self.dictionaries.insert(id, zstd::dict::DecoderDictionary::copy(&dictionary));
                        *state = HostCodec::Trained { id, compressor };
                    }
                    Err(error) => {
                        tracing::debug!(%error, host = host.as_str(), "no dictionary trained yet");
                        samples.clear();
                        sizes.clear();
                    }
                }
            }
        }
        let (packed, codec) = match state {
            HostCodec::Trained { id, compressor } => (compressor.compress(raw), Codec::ZstdDictionary(*id)),
            HostCodec::Gathering { .. } => (self.plain.compress(raw), Codec::Zstd),
        };
        let packed = packed.map_err(StoreError::Codec)?;
        Ok(if packed.len() < raw.len() { (packed, codec) } else { (raw.to_vec(), Codec::Raw) })
    }

    /// A stored `raw` column back as the line's bytes.
    pub fn decompress(&self, stored: Vec<u8>, codec: Codec, len: usize) -> Result<Vec<u8>> {
        let dictionary = match codec {
            Codec::Raw | Codec::Pruned => return Ok(stored),
            Codec::Zstd => None,
            Codec::ZstdDictionary(id) => Some(self.dictionaries.get(&id).ok_or_else(|| {
                StoreError::Integrity(format!("a line names compression dictionary {id}, which the store lacks"))
            })?),
        };
        let mut decompressor = match dictionary {
            Some(dictionary) => zstd::bulk::Decompressor::with_prepared_dictionary(dictionary),
            None => zstd::bulk::Decompressor::new(),
        }
        .map_err(StoreError::Codec)?;
        decompressor.decompress(&stored, len).map_err(StoreError::Codec)
    }
}

fn compressor(dictionary: Option<&[u8]>) -> Result<zstd::bulk::Compressor<'static>> {
    match dictionary {
        Some(dictionary) => zstd::bulk::Compressor::with_dictionary(LEVEL, dictionary),
        None => zstd::bulk::Compressor::new(LEVEL),
    }
    .map_err(StoreError::Codec)
}
