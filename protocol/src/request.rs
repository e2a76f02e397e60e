//! What a client can ask: one [`Request`] enum, a struct per operation that takes
//! arguments. The daemon answers each with the reply type its variant names.

use chrono::{DateTime, Utc};
use judged_core::event::{Host, SessionId};
use judged_core::rules::{Artifact, ArtifactKind, ReviewerCli};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// One request, as `{"op": <name>, "args": <arguments>}` on the wire.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", content = "args", rename_all = "snake_case")]
pub enum Request {
    /// The daemon's state. Reply: [`crate::StatusReport`].
    Status,
    /// How far the catch-up on start has got, answered even while it runs. Reply:
    /// [`crate::CatchUp`].
    Progress,
    /// Every witnessed session, caught up. Reply: a list of [`crate::SessionSummary`].
    Sessions,
    /// Stored lines of one session. Reply: a list of [`crate::EventLine`].
    Events(EventsArgs),
    /// The chain head after one line. Reply: [`crate::ChainHead`].
    ChainHead(ChainHeadArgs),
    /// Re-hash a session's ingested prefix against its file. Reply: [`crate::PrefixCheck`].
    VerifyLog(SessionName),
    /// Bind a nonce to this session's marker call. Reply: the challenge artifact.
    Challenge(ChallengeArgs),
    /// Verify a reviewer's lifecycle against a challenge. Reply: [`crate::Verification`].
    Verify(VerifyArgs),
    /// Re-check a challenge or evidence artifact. Reply: [`crate::Validation`].
    Validate(ValidateArgs),
    /// Recompute the per-session summaries from the store. Reply: as [`Request::Sessions`].
    Rebuild,
    /// A host's hook asks the review gate. Reply: [`crate::HookAnswer`].
    Hook(HookQuestion),
    /// Every recorded gate decision. Reply: a list of [`crate::DecisionRecord`].
    Decisions,
    /// Journal a review-tracing record. Reply: [`crate::TraceReply`].
    Trace(TraceArgs),
    /// Convene the jury on an artifact. Reply: [`crate::PanelReply`], after
    /// [`crate::JuryProgress`] frames when `progress` is asked for.
    Panel(PanelArgs),
    /// Stop the daemon. Reply: [`crate::Stopping`].
    Shutdown,
    /// The gate's decisions over a period, each with the review or jury behind it, for
    /// `judged report` (read-only). Reply: [`crate::ReportData`].
    Report(ReportArgs),
    /// Convene the jury on the work in a project as the gate convenes it, so that the gate
    /// counts the verdict for a task completed on the same tree (`judged mcp`'s `review`).
    /// Reply: [`crate::ReviewReply`], after [`crate::JuryProgress`] frames when
    /// `progress` is asked for.
    Review(ReviewArgs),
    /// What the gate needs now for a session and project, deciding nothing (`judged
    /// mcp`'s `gate_status`). Reply: [`crate::GateStatus`].
    GateStatus(GateStatusArgs),
    /// Drop the stored bytes of sessions idle since a time that nothing recent needs
    /// (`judged prune`). Reply: [`crate::PruneReport`].
    Prune(PruneArgs),
    /// Sign that a commit holds a tree a cross-family review covered (`judge-evidence
    /// attest`). Reply: [`crate::AttestReply`].
    Attest(AttestArgs),
}

impl Request {
    /// Whether the request changes the daemon itself (stops it, rewrites its summaries,
    /// drops stored bytes): a witness serving other users takes these only from its own
    /// account or root, so that the user it watches cannot stop or thin its witness.
    pub fn is_administrative(&self) -> bool {
        matches!(self, Request::Shutdown | Request::Rebuild | Request::Prune(_))
    }

    /// Whether its answer can fill a frame (a log's lines, every session, decision or
    /// report): the daemon builds one only once its budget of large frames holds a frame.
    pub fn answer_may_be_large(&self) -> bool {
        matches!(self, Request::Events(_) | Request::Sessions | Request::Decisions | Request::Report(_))
    }

    /// Whether the client asked to hear a jury's steps before the reply.
    pub fn wants_progress(&self) -> bool {
        match self {
            Request::Panel(args) => args.progress,
            Request::Review(args) => args.progress,
            _ => false,
        }
    }
}

/// `judged report`: which decisions to report.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ReportArgs {
    /// Decisions recorded at or after this time; every one when absent.
    #[serde(default)]
    pub since: Option<DateTime<Utc>>,
}

/// `judged prune`'s question.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PruneArgs {
    /// Sessions whose last record is older than this are pruned, unless a decision,
    /// evidence or challenge since then names them.
    pub older_than: DateTime<Utc>,
    /// Say what would be pruned, and prune nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Then rewrite the database file without the freed pages (SQLite's `VACUUM`: the
    /// daemon answers nothing else meanwhile, and needs the store's size free on disk).
    #[serde(default)]
    pub vacuum: bool,
}

/// A session named by its key, its host session id, or its log's path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SessionName {
    /// The name.
    pub session: String,
}

/// Which lines of a session to list.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EventsArgs {
    /// The session.
    pub session: String,
    /// The first line (1-based).
    #[serde(default = "first_line")]
    pub from: u64,
    /// Lines at most; the daemon caps it at [`EventsArgs::MAX_LIMIT`].
    #[serde(default = "EventsArgs::default_limit")]
    pub limit: u64,
}

fn first_line() -> u64 {
    1
}

impl EventsArgs {
    /// The most lines one request lists.
    pub const MAX_LIMIT: u64 = 10_000;

    fn default_limit() -> u64 {
        1000
    }
}

/// Which chain head to show.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChainHeadArgs {
    /// The session.
    pub session: String,
    /// After this line (0 is the genesis); the last line when absent.
    #[serde(default)]
    pub seq: Option<u64>,
}

/// `judge-evidence challenge`, asked of the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChallengeArgs {
    /// The marker's binding.
    pub binding: String,
    /// The session's working directory, resolved by the client.
    pub cwd: String,
    /// How old the marker call may be.
    pub max_age_seconds: i64,
    /// Where to look for session logs instead of the watched roots (either host's layout).
    #[serde(default)]
    pub session_root: Option<String>,
    /// When the client's command started: age checks use it however long it retries.
    pub started_at: DateTime<Utc>,
    /// The files the command writes after the answer, which are no part of the work.
    #[serde(default)]
    pub writes: Vec<PathBuf>,
}

/// `judge-evidence verify`, asked of the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VerifyArgs {
    /// The challenge artifact as written.
    pub challenge: Artifact,
    /// Where the client writes the reviewer's response.
    pub response_path: String,
    /// How the calling command names the challenge file, to find its own call in the log.
    #[serde(default)]
    pub challenge_name: String,
    /// When the client's command started.
    pub started_at: DateTime<Utc>,
    /// The files the command writes after the answer.
    #[serde(default)]
    pub writes: Vec<PathBuf>,
    /// The reviewer's model on the caller's word, for a review no host records
    /// (`--declared-reviewer-model`).
    #[serde(default)]
    pub declared_reviewer_model: Option<String>,
}

/// `judge-evidence validate-challenge` or `validate`, asked of the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ValidateArgs {
    /// Which artifact this is.
    pub kind: ArtifactKind,
    /// The artifact as written.
    pub artifact: Artifact,
    /// Files the artifact names, sent along as hex, since the daemon may run under
    /// another account and not be able to read them.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

/// What a host's hook asks, as the shim read it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HookQuestion {
    /// The host that ran the hook.
    pub host: Host,
    /// The hook's stdin JSON, as the host wrote it (free-form: each host and event has
    /// its own fields).
    #[serde(default)]
    pub payload: Value,
    /// Why the payload could not be read, when it could not.
    #[serde(default)]
    pub parse_error: Option<String>,
    /// The reviewer CLIs on the `PATH` the hook ran with (the agent's), so that a block
    /// names those the agent can run; `None` when the asker did not look.
    #[serde(default)]
    pub installed_reviewers: Option<Vec<ReviewerCli>>,
}

/// `judge-evidence panel`, asked of the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PanelArgs {
    /// The rubric's slug (`custom` with `rubric_text`).
    pub rubric: String,
    /// The template of a `custom` rubric.
    #[serde(default)]
    pub rubric_text: Option<String>,
    /// The lens every juror judges as; the rubric's default when absent.
    #[serde(default)]
    pub persona: Option<String>,
    /// The text under judgment.
    pub artifact: String,
    /// The project: jurors run there, and its `.judged.toml` may hold the `[jury]`.
    pub cwd: String,
    /// The model that wrote the work; the tiebreaker must be of another family.
    #[serde(default)]
    pub author_model: Option<String>,
    /// Send progress frames while the jury runs.
    #[serde(default)]
    pub progress: bool,
}

/// `judge-evidence trace`, asked of the daemon: the caller's flags and, for a host-recorded
/// backend, the evidence artifact. The daemon derives the provenance itself (identities
/// only from evidence it verified) and journals the record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TraceArgs {
    /// `--skill`.
    pub skill: String,
    /// `--purpose`.
    pub purpose: String,
    /// The run directory the record is written to.
    pub trace_path: String,
    /// The call's number in its run.
    pub call_number: u32,
    /// The caller's flags that bear on provenance.
    pub input: judged_core::trace::TraceInput,
    /// `--native-evidence`, as read.
    #[serde(default)]
    pub evidence: Option<Artifact>,
    /// The evidence file as given (absolute).
    #[serde(default)]
    pub evidence_path: Option<String>,
    /// The files the evidence names (its response), as in [`ValidateArgs::files`]: the
    /// daemon reads none itself.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
}

/// `judged mcp`'s `review`, asked of the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReviewArgs {
    /// The project: its working tree's changes are judged, jurors run there, and its
    /// settings name the rubric. Absent: the cwd the session's log records.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What the work is for: the task's subject as the host knows it, or the agent's
    /// words for the work.
    pub task: String,
    /// The task's description, when it has one.
    #[serde(default)]
    pub description: Option<String>,
    /// Judge this file of the project instead of the tree's changes; such a review is
    /// not counted by the gate. The client reads it, held to the project: the daemon
    /// reads no file a caller names.
    #[serde(default)]
    pub file: Option<ReviewFile>,
    /// The rubric's slug; the gate's `panel_rubric` when absent.
    #[serde(default)]
    pub rubric: Option<String>,
    /// The lens every juror judges as; the rubric's default when absent.
    #[serde(default)]
    pub persona: Option<String>,
    /// The host's session that wrote the work: the author's model is read from its log,
    /// as the gate does, so that the tiebreaker is of another family.
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// Send progress frames while the jury runs.
    #[serde(default)]
    pub progress: bool,
}

/// A file to review, as the client read it from inside its project. The daemon, which may
/// run as another account and read with that account's rights, is sent its text rather
/// than its path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReviewFile {
    /// The path as the caller named it, relative to the project (the jurors are shown it).
    pub name: String,
    /// Its text, invalid UTF-8 replaced.
    pub text: String,
}

/// `judge-evidence attest`, asked of the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AttestArgs {
    /// A directory of the repository's work tree, resolved by the client.
    pub cwd: String,
    /// The commit's full object id, as the client resolved it (`git rev-parse`).
    pub commit: String,
    /// The commit's object as `git cat-file commit` prints it (base64 on the wire): the
    /// daemon checks it hashes to `commit` and reads its tree there.
    #[serde(with = "base64_bytes")]
    pub commit_object: Vec<u8>,
}

/// `judged mcp`'s `gate_status`, asked of the daemon.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateStatusArgs {
    /// The project. Absent: the cwd the session's log records.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The host's session, whose evidence and author count.
    #[serde(default)]
    pub session_id: Option<SessionId>,
    /// The host asking, for the reviewer its next step names; the session's host when
    /// the daemon knows the session.
    #[serde(default)]
    pub host: Option<Host>,
}

/// The longest path a request names: Linux's `PATH_MAX`.
pub const MAX_PATH_BYTES: usize = 4096;
/// The longest session id or session name: every host's is a UUID or a file path.
pub const MAX_SESSION_BYTES: usize = 256;
/// The longest task subject a review is asked with (a line, as a host's task subject is).
pub const MAX_TASK_BYTES: usize = 16 * 1024;
/// The longest name a request gives (a rubric's slug, a skill, a model, a status): every
/// real one is a word or two.
pub const MAX_NAME_BYTES: usize = 256;
/// The longest prose a request gives that the daemon keeps (a trace's purpose, a persona):
/// a paragraph, as [`MAX_TASK_BYTES`].
pub const MAX_PROSE_BYTES: usize = MAX_TASK_BYTES;
/// The longest custom rubric's template.
pub const MAX_RUBRIC_TEXT_BYTES: usize = 64 * 1024;
/// The largest commit object `attest` sends (git's own objects are rarely past a few KiB).
pub const MAX_COMMIT_OBJECT_BYTES: usize = 1024 * 1024;

/// A request no client sends in earnest: refused by name, on both sides of the socket,
/// before it costs anything (the frame limit alone let a 10 MB `cwd` wait for the daemon's
/// idle limit).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RequestError {
    /// A field longer than any real value of it.
    #[error("`{field}` is {len} bytes, more than the {max} {what}: {fix}")]
    TooLong {
        /// The field, as the wire names it.
        field: &'static str,
        /// Its length.
        len: usize,
        /// The bound.
        max: usize,
        /// What the bound is.
        what: &'static str,
        /// What to pass instead.
        fix: &'static str,
    },
    /// More entries of a list than any real request holds.
    #[error("`{field}` has {count} entries, more than the {max} a request may name: {fix}")]
    TooMany {
        /// The field, as the wire names it.
        field: &'static str,
        /// Its entries.
        count: usize,
        /// The bound.
        max: usize,
        /// What to pass instead.
        fix: &'static str,
    },
}

/// Refuse `value` of `field` when longer than a path may be.
pub fn check_path(field: &'static str, value: &str) -> Result<(), RequestError> {
    check_len(field, value, MAX_PATH_BYTES, "a path may be", "name the directory or file by a real path")
}

/// Bytes as base64 text on the wire (a commit object need not be UTF-8).
mod base64_bytes {
    use base64ct::{Base64, Encoding};
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&Base64::encode_string(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        Base64::decode_vec(&text).map_err(|_| D::Error::custom("not base64"))
    }
}

fn check_len(
    field: &'static str,
    value: &str,
    max: usize,
    what: &'static str,
    fix: &'static str,
) -> Result<(), RequestError> {
    if value.len() > max { Err(RequestError::TooLong { field, len: value.len(), max, what, fix }) } else { Ok(()) }
}

fn check_name(field: &'static str, value: &str) -> Result<(), RequestError> {
    check_len(field, value, MAX_NAME_BYTES, "a name may be", "pass the name alone")
}

fn check_persona(persona: Option<&str>) -> Result<(), RequestError> {
    persona
        .map_or(Ok(()), |text| check_len("persona", text, MAX_PROSE_BYTES, "a persona may be", "say it in a paragraph"))
}

/// The most files a round's command names as its own writes: the artifact and the response.
pub const MAX_WRITES: usize = 4;

/// The files a round's command writes after the answer: a few paths. Each is compared with
/// every changed file of the work, on the engine's thread, and the list is journaled.
fn check_writes(writes: &[PathBuf]) -> Result<(), RequestError> {
    if writes.len() > MAX_WRITES {
        let fix = "name the files the command itself writes (its artifact and the response)";
        return Err(RequestError::TooMany { field: "writes", count: writes.len(), max: MAX_WRITES, fix });
    }
    writes.iter().try_for_each(|path| check_path("writes", &path.to_string_lossy()))
}

fn check_session(field: &'static str, value: &str) -> Result<(), RequestError> {
    check_len(field, value, MAX_SESSION_BYTES, "a session id may be", "pass your host session's id")
}

impl Request {
    /// Refuse a field no real request holds that much of (the frame limit bounds the rest).
    pub fn check(&self) -> Result<(), RequestError> {
        let path = |field, value: &Option<String>| value.as_deref().map_or(Ok(()), |v| check_path(field, v));
        let session =
            |field, value: &Option<SessionId>| value.as_ref().map_or(Ok(()), |v| check_session(field, v.as_str()));
        let name = |field, value: Option<&str>| value.map_or(Ok(()), |v| check_name(field, v));
        match self {
            Request::Events(EventsArgs { session: name, .. })
            | Request::ChainHead(ChainHeadArgs { session: name, .. })
            | Request::VerifyLog(SessionName { session: name }) => {
                // A session is named by its id or by its log's path.
                check_path("session", name)
            }
            Request::Challenge(args) => {
                check_path("cwd", &args.cwd)?;
                check_writes(&args.writes)?;
                path("session_root", &args.session_root)
            }
            Request::Verify(args) => {
                // Journaled for good with the evidence, a new record for each new value.
                check_path("response_path", &args.response_path)?;
                check_path("challenge_name", &args.challenge_name)?;
                check_writes(&args.writes)?;
                name("declared_reviewer_model", args.declared_reviewer_model.as_deref())
            }
            Request::Panel(args) => {
                check_path("cwd", &args.cwd)?;
                check_name("rubric", &args.rubric)?;
                check_persona(args.persona.as_deref())?;
                name("author_model", args.author_model.as_deref())?;
                args.rubric_text.as_deref().map_or(Ok(()), |text| {
                    let fix = "shorten the rubric";
                    check_len("rubric_text", text, MAX_RUBRIC_TEXT_BYTES, "a rubric's template may be", fix)
                })
            }
            Request::Trace(args) => {
                // Journaled for good: a served user could fill the witness's disk with it.
                check_path("trace_path", &args.trace_path)?;
                path("evidence_path", &args.evidence_path)?;
                check_name("skill", &args.skill)?;
                check_len(
                    "purpose",
                    &args.purpose,
                    MAX_PROSE_BYTES,
                    "a trace's purpose may be",
                    "say it in a paragraph",
                )?;
                let input = &args.input;
                for (field, value) in [
                    ("input.backend", &input.backend),
                    ("input.status", &input.status),
                    ("input.model", &input.model),
                    ("input.executor_model", &input.executor_model),
                    ("input.executor_family", &input.executor_family),
                    ("input.reviewer_family", &input.reviewer_family),
                    ("input.requested_reviewer_model", &input.requested_reviewer_model),
                    ("input.reported_reviewer_model", &input.reported_reviewer_model),
                    ("input.independence_verified", &input.independence_verified),
                ] {
                    check_name(field, value)?;
                }
                Ok(())
            }
            Request::Review(args) => {
                path("cwd", &args.cwd)?;
                session("session_id", &args.session_id)?;
                check_len(
                    "task",
                    &args.task,
                    MAX_TASK_BYTES,
                    "a task's subject may be",
                    "put the details in `description`",
                )?;
                name("rubric", args.rubric.as_deref())?;
                check_persona(args.persona.as_deref())?;
                path("file", &args.file.as_ref().map(|file| file.name.clone()))
            }
            Request::Hook(question) => {
                // The decision journals the cwd it was asked about.
                path("cwd", &question.payload.get("cwd").and_then(Value::as_str).map(str::to_owned))
            }
            Request::GateStatus(args) => {
                path("cwd", &args.cwd)?;
                session("session_id", &args.session_id)
            }
            Request::Attest(args) => {
                check_path("cwd", &args.cwd)?;
                check_len("commit", &args.commit, 64, "an object id may be", "pass the commit's full id")?;
                if args.commit_object.len() > MAX_COMMIT_OBJECT_BYTES {
                    let len = args.commit_object.len();
                    let (what, fix) = ("a commit object may be", "attest a commit whose message is shorter");
                    return Err(RequestError::TooLong {
                        field: "commit_object",
                        len,
                        max: MAX_COMMIT_OBJECT_BYTES,
                        what,
                        fix,
                    });
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
