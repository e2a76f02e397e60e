//! The journal: the daemon's own record of what it saw and decided, append-only and
//! hash-chained. Every event is a [`JournalEvent`]; its kind and its typed body are
//! written and read through the same type, so a body that does not parse is an
//! integrity error, never a silent null.

use super::{Result, Store, StoreError, hash_from};
use judged_core::chain::{self, Hash};
use judged_core::event::{Host, SessionId};
use judged_core::rules::{EvidenceId, EvidenceStatus, IdentityAssurance, Nonce};
use judged_io::worktree::{DiffBase, Tree};
use judged_jury::packet::FinalVerdict;
use judged_jury::packet::JurorVerdict;
use judged_protocol::{CompletionBypassed, ConfigFileUsed, GateDecision};
use rusqlite::{OptionalExtension, params};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One journal event: `kind` names the variant, `body` holds its fields.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", content = "body", rename_all = "snake_case")]
pub enum JournalEvent {
    /// A log was found and registered.
    FileDiscovered(FileDiscovered),
    /// A file in a root was not read (a symlink, another user's, not a regular file).
    FileRefused(FileRefused),
    /// A log no longer holds the bytes ingested; it is not read again.
    TamperDetected(TamperDetected),
    /// Something about a log that undoes evidence resting on it.
    IntegrityFinding(IntegrityFinding),
    /// A line that is not a record of its host.
    MalformedLine(MalformedLine),
    /// A challenge found its marker call.
    MarkerSeen(MarkerSeen),
    /// A challenge was issued.
    ChallengeIssued(ChallengeIssued),
    /// Evidence was verified (once per review).
    EvidenceVerified(Box<EvidenceVerified>),
    /// The review gate decided a hook call.
    GateDecided(GateDecision),
    /// The store's own chains did not verify on start.
    StoreIntegrityFailed(StoreIntegrityFailed),
    /// A juror ran (one per juror of a panel, before the panel's own event).
    JurorRan(JurorRan),
    /// A jury answered (stored under the name the reference's judge-panel gave it).
    #[serde(rename = "panel_convened")]
    JuryConvened(Box<JuryConvened>),
    /// A review call was traced (docs/spec/evidence-protocol.md §5).
    ReviewTraced(Box<ReviewTraced>),
    /// A version of `config.toml` came into force (on a change; not at start).
    ConfigLoaded(ConfigLoaded),
    /// An edit of `config.toml` was not applied; the last good version stays in force.
    ConfigRejected(ConfigRejected),
    /// A task completion in a transcript no gate decision allowed.
    CompletionBypassed(CompletionBypassed),
    /// The bytes of a log's lines were dropped (their hashes and chain stay).
    LinesPruned(LinesPruned),
    /// A commit was attested: the envelope signed.
    Attested(Box<Attested>),
    /// The commit a session's work tree was on when judged first read the session's cwd.
    SessionBegan(SessionBegan),
}

/// A body type of one journal kind, for reading events of that kind back.
pub trait JournalBody: DeserializeOwned {
    /// The kind it is written under.
    const KIND: &'static str;
}

macro_rules! journal_bodies {
    ($($body:ident => $kind:literal),* $(,)?) => {
        $(impl JournalBody for $body { const KIND: &'static str = $kind; })*
    };
}

journal_bodies! {
    FileDiscovered => "file_discovered",
    FileRefused => "file_refused",
    TamperDetected => "tamper_detected",
    IntegrityFinding => "integrity_finding",
    MalformedLine => "malformed_line",
    MarkerSeen => "marker_seen",
    ChallengeIssued => "challenge_issued",
    EvidenceVerified => "evidence_verified",
    GateDecision => "gate_decided",
    StoreIntegrityFailed => "store_integrity_failed",
    JurorRan => "juror_ran",
    JuryConvened => "panel_convened",
    ReviewTraced => "review_traced",
    ConfigLoaded => "config_loaded",
    ConfigRejected => "config_rejected",
    CompletionBypassed => "completion_bypassed",
    LinesPruned => "lines_pruned",
    Attested => "attested",
    SessionBegan => "session_began",
}

impl JournalEvent {
    /// The kind column, and the body as stored.
    fn split(&self) -> Result<(String, String)> {
        let serde_json::Value::Object(mut wire) = serde_json::to_value(self).map_err(StoreError::Body)? else {
            unreachable!("an adjacently tagged enum serializes as an object")
        };
        let kind = wire.remove("kind").and_then(|k| k.as_str().map(str::to_owned)).unwrap_or_default();
        Ok((kind, wire.remove("body").unwrap_or_default().to_string()))
    }
}

/// `session_began`: the commit the work tree of a session's cwd was on when judged first
/// read that cwd in its log (the session had just begun, unless judged was not running):
/// what a jury is shown the changes from, so that work the agent committed since is shown
/// too. Recorded by judged's own read, never from what the repository later says.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SessionBegan {
    pub file_id: i64,
    /// The session's log.
    pub path: String,
    /// The session's working directory, as its log names it.
    pub cwd: String,
    /// The commit HEAD named; none when the repository had no commit yet.
    pub commit: Option<String>,
}

/// `file_discovered`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileDiscovered {
    pub file_id: i64,
    pub path: String,
    pub host: Host,
    pub session: String,
}

/// `file_refused`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileRefused {
    pub path: String,
    pub reason: String,
}

/// `lines_pruned`: the bytes of a log's first `lines` lines were dropped from the store, by
/// `judged prune` or `[store] keep_days`. Every line's hash and the chain over them stay,
/// so the log's history is still checked against the file and the chain still verifies;
/// what needed the bytes themselves (re-reading the records) can no longer be done.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LinesPruned {
    pub file_id: i64,
    pub path: String,
    pub session: String,
    /// Lines pruned, from the first.
    pub lines: u64,
    /// The log's bytes those lines held.
    pub bytes: u64,
    /// The chain head after the last pruned line (hex).
    pub chain: String,
    /// The session's last record was older than this (RFC 3339).
    pub older_than: String,
}

/// `tamper_detected`: where the file stopped holding what was ingested.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TamperDetected {
    pub file_id: i64,
    pub path: String,
    pub reason: String,
    pub offset: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_len: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_len: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_sha256: Option<String>,
}

/// What an integrity finding found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "finding")]
pub enum Finding {
    /// The log changed without growing: it was open to rewriting, whatever it holds now.
    #[serde(rename = "in-place write")]
    InPlaceWrite {
        /// Bytes ingested when the write was seen: the history it could have changed.
        within_bytes: u64,
        len_before: u64,
        len_after: u64,
        /// The file was replaced (a new inode), not written through.
        replaced: bool,
    },
    /// A record does not name the one before it as its parent (Copilot CLI's chain).
    #[serde(rename = "parentId chain break")]
    ParentChainBreak { expected_parent: Option<String>, found_parent: Option<String> },
}

/// `integrity_finding`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IntegrityFinding {
    pub file_id: i64,
    pub path: String,
    /// The line it was found at (the last line ingested, for an in-place write).
    pub seq: u64,
    /// Its byte offset (0 for an in-place write: it taints the whole log).
    pub offset: u64,
    #[serde(flatten)]
    pub finding: Finding,
}

/// `malformed_line`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MalformedLine {
    pub file_id: i64,
    pub path: String,
    #[serde(default)]
    pub seq: Option<u64>,
    pub offset: u64,
    pub error: String,
}

/// `marker_seen`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MarkerSeen {
    pub binding: String,
    pub session_events: String,
    pub event_id: Option<String>,
    pub completion_event_id: Option<String>,
}

/// `challenge_issued`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChallengeIssued {
    pub nonce: Nonce,
    pub binding: String,
    pub session_events: String,
    pub witness: String,
    /// The working tree the round began on (less the challenge's own file): the one its
    /// review covers, which verify records as reviewed (absent outside a repository, under
    /// a witness, and in records from before it was kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<Tree>,
    /// That tree as git's tree id (absent where judged could not read one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_tree: Option<String>,
    /// The commit HEAD named when the round began: its review covers the changes from
    /// there (absent where judged could not read it, and in records from before it was
    /// kept: such a review covers no commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_base: Option<DiffBase>,
    /// The files the challenge command writes (left out of that tree).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<PathBuf>,
    /// The SHA-256 of the challenge as the client writes it, which tells its file from
    /// work written at its path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge_sha256: Option<String>,
}

/// `evidence_verified`: what the gate needs to answer from the journal alone.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EvidenceVerified {
    pub evidence_id: EvidenceId,
    pub status: EvidenceStatus,
    #[serde(default)]
    pub reason: Option<String>,
    pub session_events: String,
    pub host: Host,
    pub session_id: Option<SessionId>,
    pub cwd: Option<String>,
    pub executor_model: Option<String>,
    pub reviewer_model: Option<String>,
    pub verified_at: String,
    /// The host's time of the review's end (absent in records from before it was kept).
    #[serde(default)]
    pub reviewed_at: Option<String>,
    #[serde(default)]
    pub window_start: u64,
    #[serde(default)]
    pub file_id: Option<i64>,
    #[serde(default)]
    pub tree_sha256: Option<String>,
    #[serde(default)]
    pub tree: Option<Tree>,
    #[serde(default)]
    pub tree_excluded: Vec<PathBuf>,
    /// The SHA-256 of the response `verify` wrote, which tells its file from work written
    /// at its path (absent in records from before it was kept).
    #[serde(default)]
    pub response_sha256: Option<String>,
    /// The SHA-256 of the evidence and of the challenge as the client writes them, which
    /// tell their files from work written at their paths (absent in records from before
    /// they were kept: such files are compared as work).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_sha256: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub challenge_sha256: Option<String>,
    /// The response's Score and Verdict, when it states them.
    pub score: Option<f64>,
    pub verdict: Option<String>,
    pub witness: String,
    /// How the reviewer's identity is known (records from before it was kept are of
    /// host-recorded reviews).
    #[serde(default)]
    pub identity_assurance: IdentityAssurance,
    /// The git tree id of the reviewed working tree, as a commit of that work holds it
    /// ([`judged_io::worktree::git_tree_id`]): what an attestation binds a commit to.
    /// Absent outside git, and in records from before it was kept (those are not attested).
    #[serde(default)]
    pub git_tree: Option<String>,
    /// Where the review's changes began (the round's [`ChallengeIssued::git_base`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_base: Option<DiffBase>,
    /// How the reviewer was reached (the evidence's `agent_name`), the record its model
    /// was read from and both families, as verified: what an attestation says of the review.
    #[serde(default)]
    pub agent_name: Option<String>,
    #[serde(default)]
    pub reviewer_model_source: Option<String>,
    #[serde(default)]
    pub executor_family: Option<String>,
    #[serde(default)]
    pub reviewer_family: Option<String>,
}

/// `config_loaded`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConfigLoaded {
    pub file: ConfigFileUsed,
}

/// `config_rejected`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ConfigRejected {
    /// The version refused (its digest).
    pub file: ConfigFileUsed,
    /// What is wrong, on one line: the file, the line and the error.
    pub error: String,
}

/// `store_integrity_failed`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StoreIntegrityFailed {
    pub error: String,
}

/// `juror_ran`: who ran, as asked and as its own record says, and how it ended.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JurorRan {
    /// The panel's key.
    pub panel: String,
    pub name: String,
    /// Program and arguments; never the prompt.
    pub argv: Vec<String>,
    pub model_requested: String,
    pub model_reported: Option<String>,
    /// Which of the CLI's records the reported model was read from.
    pub identity_source: Option<String>,
    pub exit_code: Option<i32>,
    pub latency_ms: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub verdict: JurorVerdict,
    pub error: Option<String>,
}

/// Who asked for a jury.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AskedBy {
    /// `judge-evidence panel`.
    Cli,
    /// The review gate, for a hook.
    Gate,
    /// `judged mcp`'s `review`: asked ahead of the gate, counted by it (see
    /// `hook_gate::review`).
    Review,
}

/// `panel_convened`: the jury's verdict, and its whole packet.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JuryConvened {
    /// What makes two panels the same question of the same jury.
    pub key: String,
    pub source: AskedBy,
    pub rubric: String,
    pub cwd: String,
    pub artifact_sha256: String,
    pub final_verdict: FinalVerdict,
    pub final_confidence: u8,
    pub degraded: bool,
    /// `juror: reason` of every juror that was down.
    pub down: Vec<String>,
    /// Why no tiebreaker ran although the cascade escalated (absent in records from
    /// before it was kept).
    #[serde(default)]
    pub tiebreaker_unavailable: Option<String>,
    /// Every juror's flags, then the degraded banner (the packet's `all_flags`).
    pub flags: Vec<String>,
    /// The packet as JSON text, as the jury wrote it (its key order is the reference's,
    /// which a `Value` would not keep).
    pub packet: String,
    /// The model that wrote the work, as the jury was told it.
    #[serde(default)]
    pub author_model: Option<String>,
    /// The git tree id of the working tree whose changes the jury judged, when it judged
    /// a git repository's tree (the gate's jury, a review): what an attestation binds a
    /// commit to. Absent for any other artifact, and in records from before it was kept.
    #[serde(default)]
    pub git_tree: Option<String>,
    /// The commit the changes shown were read against (absent with `git_tree`, and in
    /// records from before it was kept: such a verdict covers no commit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_base: Option<DiffBase>,
}

/// `attested`: a commit attested on a review of its tree, and the envelope signed. One
/// review of one commit is attested once: asked again, the daemon answers this envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Attested {
    pub commit: String,
    pub tree: String,
    /// The repository's top directory.
    pub top: String,
    /// The evidence the attestation rests on, or the jury's key.
    pub evidence_id: Option<EvidenceId>,
    pub packet_id: Option<String>,
    pub envelope: judged_core::attestation::Envelope,
}

/// `review_traced`: a review call's trace record, its provenance derived by the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReviewTraced {
    pub skill: String,
    pub purpose: String,
    pub trace_path: String,
    pub call_number: u32,
    pub backend: String,
    pub status: String,
    pub provenance: judged_core::trace::Provenance,
}

/// The journal lookups by one field of one kind (each has its partial index).
#[derive(Clone, Copy, Debug)]
pub enum Lookup {
    /// A gate decision by its input key.
    DecisionByKey,
    /// An issued challenge by its witness.
    ChallengeByWitness,
    /// Verified evidence by its witness.
    EvidenceByWitness,
    /// Verified evidence by its evidence id (one review, however often verified).
    EvidenceById,
    /// A jury's verdict by its question's key.
    PanelByKey,
    /// Verified evidence by the git tree it reviewed.
    EvidenceByGitTree,
    /// A jury's verdict by the git tree whose changes it judged.
    PanelByGitTree,
    /// An attestation by its commit.
    AttestedByCommit,
    /// A completion recorded as a bypass, by its log.
    BypassByLog,
    /// An issued challenge by its nonce.
    ChallengeByNonce,
    /// The commit a session began on, by its log.
    SessionBeganByLog,
}

impl Lookup {
    fn kind_and_field(self) -> (&'static str, &'static str) {
        match self {
            Lookup::DecisionByKey => (GateDecision::KIND, "$.key"),
            Lookup::ChallengeByWitness => (ChallengeIssued::KIND, "$.witness"),
            Lookup::EvidenceByWitness => (EvidenceVerified::KIND, "$.witness"),
            Lookup::EvidenceById => (EvidenceVerified::KIND, "$.evidence_id"),
            Lookup::PanelByKey => (JuryConvened::KIND, "$.key"),
            Lookup::EvidenceByGitTree => (EvidenceVerified::KIND, "$.git_tree"),
            Lookup::PanelByGitTree => (JuryConvened::KIND, "$.git_tree"),
            Lookup::AttestedByCommit => (Attested::KIND, "$.commit"),
            Lookup::BypassByLog => (CompletionBypassed::KIND, "$.path"),
            Lookup::ChallengeByNonce => (ChallengeIssued::KIND, "$.nonce"),
            Lookup::SessionBeganByLog => (SessionBegan::KIND, "$.path"),
        }
    }

    /// Kind and path are spelled out, so the lookup's partial expression index applies;
    /// newest first.
    pub(super) fn sql(self) -> String {
        let (kind, path) = self.kind_and_field();
        format!(
            "SELECT seq, at, body FROM journal WHERE kind = '{kind}' AND json_extract(body, '{path}') = +?1 ORDER BY seq DESC"
        )
    }
}

/// A stored body read back as its type.
fn parse<B: JournalBody>(seq: i64, body: &str) -> Result<B> {
    serde_json::from_str(body)
        .map_err(|error| StoreError::Integrity(format!("journal event {seq} ({}) does not parse: {error}", B::KIND)))
}

fn journal_digest(at: &str, kind: &str, body: &str) -> Hash {
    chain::sha256(format!("{at}\n{kind}\n{body}").as_bytes())
}

/// Append one event inside `tx`; its sequence number.
pub(super) fn append(tx: &rusqlite::Transaction, event: &JournalEvent) -> Result<i64> {
    let (kind, body) = event.split()?;
    let previous: Option<Vec<u8>> = tx
        .prepare_cached("SELECT chain FROM journal ORDER BY seq DESC LIMIT 1")?
        .query_row([], |r| r.get(0))
        .optional()?;
    let previous = previous.map(hash_from).unwrap_or_else(|| chain::genesis(chain::JOURNAL_GENESIS_DOMAIN));
    let at = judged_core::timestamp::format_utc(chrono::Utc::now());
    let head = chain::link(&previous, &journal_digest(&at, &kind, &body));
    tx.prepare_cached("INSERT INTO journal (at, kind, body, chain) VALUES (?1, ?2, ?3, ?4)")?.execute(params![
        at,
        kind,
        body,
        head.to_vec()
    ])?;
    Ok(tx.last_insert_rowid())
}

impl Store {
    /// Append one event to the journal.
    pub fn journal(&mut self, event: &JournalEvent) -> Result<i64> {
        self.journal_together(std::slice::from_ref(event))
    }

    /// Append events to the journal in one transaction (one commit, not one per event);
    /// the sequence number of the last.
    pub fn journal_together(&mut self, events: &[JournalEvent]) -> Result<i64> {
        let tx = self.conn.transaction()?;
        let mut seq = 0;
        for event in events {
            seq = append(&tx, event)?;
        }
        tx.commit()?;
        self.checkpointer.poke();
        Ok(seq)
    }

    /// Events of one kind as `(seq, at, body)`, oldest first.
    pub fn journal_of_kind<B: JournalBody>(&self) -> Result<Vec<(i64, String, B)>> {
        let mut events = Vec::new();
        self.journal_newest_first(|seq, at, body: B| {
            events.push((seq, at.to_owned(), body));
            true
        })?;
        events.reverse();
        Ok(events)
    }

    /// Visit the events of one kind, newest first, until `visit` returns false, so a
    /// caller that wants only recent events reads only those.
    pub fn journal_newest_first<B: JournalBody>(&self, mut visit: impl FnMut(i64, &str, B) -> bool) -> Result<()> {
        // `+?1`: a parameter compared with an indexed column makes this SQLite build
        // (STAT4) re-plan the statement at every call; the unary plus keeps the plan.
        let mut stmt =
            self.conn.prepare_cached("SELECT seq, at, body FROM journal WHERE kind = +?1 ORDER BY seq DESC")?;
        let mut rows = stmt.query(params![B::KIND])?;
        while let Some(row) = rows.next()? {
            let (seq, at, body): (i64, String, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
            if !visit(seq, &at, parse(seq, &body)?) {
                break;
            }
        }
        Ok(())
    }

    /// The newest event that `lookup` finds by `value`.
    pub fn journal_find<B: JournalBody>(&self, lookup: Lookup, value: &str) -> Result<Option<B>> {
        debug_assert_eq!(lookup.kind_and_field().0, B::KIND, "{lookup:?} reads another kind");
        let row: Option<(i64, String)> = self
            .conn
            .prepare_cached(&lookup.sql())?
            .query_row(params![value], |r| Ok((r.get(0)?, r.get(2)?)))
            .optional()?;
        row.map(|(seq, body)| parse(seq, &body)).transpose()
    }

    /// Every event that `lookup` finds by `value`, newest first, as `(at, body)`.
    pub fn journal_find_all<B: JournalBody>(&self, lookup: Lookup, value: &str) -> Result<Vec<(String, B)>> {
        debug_assert_eq!(lookup.kind_and_field().0, B::KIND, "{lookup:?} reads another kind");
        let mut stmt = self.conn.prepare_cached(&lookup.sql())?;
        let rows = stmt.query_map(params![value], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?, r.get::<_, String>(2)?)))?;
        let mut found = Vec::new();
        for row in rows {
            let (seq, at, body) = row?;
            found.push((at, parse(seq, &body)?));
        }
        Ok(found)
    }

    /// The sequence number of the newest event of one kind (0 when there is none).
    pub fn journal_last_seq<B: JournalBody>(&self) -> Result<i64> {
        Ok(self
            .conn
            .prepare_cached("SELECT seq FROM journal WHERE kind = +?1 ORDER BY seq DESC LIMIT 1")?
            .query_row(params![B::KIND], |r| r.get(0))
            .optional()?
            .unwrap_or(0))
    }

    /// When the journal's first event was recorded (none while it is empty).
    pub fn journal_began(&self) -> Result<Option<String>> {
        Ok(self.conn.query_row("SELECT at FROM journal ORDER BY seq LIMIT 1", [], |r| r.get(0)).optional()?)
    }

    /// Events in the journal.
    pub fn journal_len(&self) -> Result<u64> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM journal", [], |r| r.get::<_, i64>(0))? as u64)
    }

    /// The integrity findings recorded about one file, oldest first, as `(at, finding)`.
    pub fn findings_of(&self, file_id: i64) -> Result<Vec<(String, IntegrityFinding)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT seq, at, body FROM journal WHERE kind = 'integrity_finding' AND json_extract(body, '$.file_id') = +?1 ORDER BY seq",
        )?;
        let rows = stmt.query_map(params![file_id], |row| {
            Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?, row.get::<_, String>(2)?))
        })?;
        let mut findings = Vec::new();
        for row in rows {
            let (seq, at, body) = row?;
            findings.push((at, parse(seq, &body)?));
        }
        Ok(findings)
    }

    /// Re-check the journal's chain; `Err(Integrity)` names the first break.
    pub(super) fn verify_journal_chain(&self) -> Result<()> {
        let mut head = chain::genesis(chain::JOURNAL_GENESIS_DOMAIN);
        let mut stmt = self.conn.prepare("SELECT seq, at, kind, body, chain FROM journal ORDER BY seq")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let (seq, at, kind, body): (i64, String, String, String) =
                (row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?);
            head = chain::link(&head, &journal_digest(&at, &kind, &body));
            if hash_from(row.get(4)?) != head {
                return Err(StoreError::Integrity(format!("journal chain breaks at seq {seq}")));
            }
        }
        Ok(())
    }
}
