//! Where the evidence decisions are made: in this process over the log files (direct
//! mode), or by `judged` over the logs it witnessed (daemon mode). Both run the same
//! `judged_core::rules`; the daemon adds its witness.

use chrono::{DateTime, Utc};
use judged_core::event::Host;
use judged_core::files::{self, Roots};
use judged_core::log::SessionLog;
use judged_core::rules::{self, Artifact, Env, EvidenceError, ExitCode, LogState, Verified};
use judged_core::timestamp;
use judged_core::worktree::Tree;
use judged_protocol::{ClientError, paths};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The real file system.
pub struct FsEnv;

impl Env for FsEnv {
    fn resolve(&self, path: &str) -> String {
        files::resolve(path)
    }
    fn read_file(&self, path: &str) -> rules::Result<Vec<u8>> {
        files::read_artifact(path).map(|(_, bytes)| bytes)
    }
}

pub struct ChallengeArgs<'a> {
    pub binding: &'a str,
    pub cwd: String,
    pub session_root: Option<String>,
    pub max_age_seconds: i64,
    /// When the command started: age checks use it however long the command waits.
    pub started: DateTime<Utc>,
    /// The artifact the command writes (no part of the reviewed tree).
    pub output: &'a str,
}

/// What `verify` is asked.
pub struct VerifyArgs<'a> {
    pub challenge: &'a Map<String, Value>,
    /// The challenge file's name, as the calling command wrote it (to find that command's
    /// own call in the host's log).
    pub challenge_name: &'a str,
    pub response_path: &'a str,
    pub output: &'a str,
    pub started: DateTime<Utc>,
}

pub enum Backend {
    Direct,
    Daemon(PathBuf),
}

/// What a daemon-mode call needs from a refusal: the evidence exit code, or a
/// fallback to direct mode when nothing listens.
pub enum CallError {
    Unreachable,
    Evidence(EvidenceError),
}

impl Backend {
    pub fn daemon() -> Backend {
        Backend::Daemon(paths::socket_path())
    }

    fn call(socket: &Path, op: &str, args: Value) -> Result<Value, CallError> {
        match judged_protocol::call(socket, op, args, Duration::from_secs(120)) {
            Ok(value) => Ok(value),
            Err(ClientError::Unreachable(_)) => Err(CallError::Unreachable),
            Err(ClientError::Refused(body)) => {
                let code = ExitCode::from_code(body.exit_code.unwrap_or(2));
                let mut error = EvidenceError::new(code, body.message);
                error.log_state = body.log_state;
                Err(CallError::Evidence(error))
            }
            Err(other) => Err(CallError::Evidence(EvidenceError::evidence(format!("judged: {other}")))),
        }
    }

    pub fn challenge(&self, args: &ChallengeArgs) -> Result<Map<String, Value>, CallError> {
        match self {
            Backend::Direct => direct_challenge(args).map_err(CallError::Evidence),
            Backend::Daemon(socket) => {
                let request = json!({"binding": args.binding, "cwd": args.cwd, "max_age_seconds": args.max_age_seconds,
                    "session_root": args.session_root, "started_at": timestamp::format_utc(args.started),
                    "writes": [args.output]});
                into_object(Self::call(socket, "challenge", request)?)
            }
        }
    }

    pub fn verify(&self, args: &VerifyArgs) -> Result<Verified, CallError> {
        match self {
            Backend::Direct => {
                let log = load_log(args.challenge).map_err(CallError::Evidence)?;
                let mut verified = rules::verify(args.challenge, &log, args.response_path, args.started, &FsEnv)
                    .map_err(|e| {
                        CallError::Evidence(e.with_log_state(LogState::of(&[&log], &["verify", args.challenge_name])))
                    })?;
                let cwd = verified.evidence.get("cwd").and_then(Value::as_str).unwrap_or(".");
                let tree = Tree::of(Path::new(cwd), &[PathBuf::from(args.output), PathBuf::from(args.response_path)]);
                verified.evidence.insert("tree_sha256".into(), tree.map(|t| t.digest()).into());
                Ok(verified)
            }
            Backend::Daemon(socket) => {
                let request = json!({"challenge": args.challenge, "response_path": args.response_path,
                    "challenge_name": args.challenge_name, "started_at": timestamp::format_utc(args.started),
                    "writes": [args.output, args.response_path]});
                let answer = Self::call(socket, "verify", request)?;
                let response = answer["response"].as_str().unwrap_or_default().to_owned();
                let window_start = answer["window_start"].as_u64().unwrap_or_default();
                Ok(Verified { evidence: into_object(answer["evidence"].clone())?, response, window_start })
            }
        }
    }

    /// Revalidate a challenge (`kind == "challenge"`) or evidence artifact; returns
    /// whether the daemon's witness was checked.
    pub fn validate(&self, kind: &str, artifact: &Map<String, Value>) -> Result<bool, CallError> {
        match self {
            Backend::Direct => {
                let log = load_log(artifact).map_err(CallError::Evidence)?;
                let result = if kind == "challenge" {
                    rules::validate_challenge(artifact, &log, &FsEnv)
                } else {
                    rules::validate(artifact, &log, &FsEnv)
                };
                result.map(|_| false).map_err(CallError::Evidence)
            }
            Backend::Daemon(socket) => {
                // The daemon may run under another account: send the response file along.
                let mut files = Map::new();
                if let Some(path) = artifact.get("response_path").and_then(Value::as_str)
                    && let Ok((_, bytes)) = files::read_artifact(path)
                {
                    files.insert(path.to_owned(), hex::encode(bytes).into());
                }
                let op = if kind == "challenge" { "validate_challenge" } else { "validate" };
                let answer = Self::call(socket, op, json!({kind: artifact, "files": files}))?;
                Ok(answer["witness_checked"] == true)
            }
        }
    }
}

fn into_object(value: Value) -> Result<Map<String, Value>, CallError> {
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(CallError::Evidence(EvidenceError::evidence("judged answered with a non-object artifact"))),
    }
}

/// The log an artifact names, read from disk.
fn load_log(artifact: &Map<String, Value>) -> rules::Result<SessionLog> {
    let path = Artifact(artifact).required("session_events")?;
    let host = artifact.get("host").and_then(Value::as_str).and_then(Host::parse).unwrap_or(Host::CopilotCli);
    let resolved = files::resolve(path);
    let bytes = files::read_safe(Path::new(&resolved), files::MAX_LOG_BYTES)?;
    Ok(SessionLog::from_bytes(host, resolved, bytes))
}

/// Direct-mode challenge: stream the roots, read only the sessions whose recorded cwd
/// is the requested one, and bind.
fn direct_challenge(args: &ChallengeArgs) -> rules::Result<Map<String, Value>> {
    rules::check_max_age(args.max_age_seconds)?;
    rules::check_binding(args.binding)?;
    let roots = match &args.session_root {
        Some(root) => Roots::named(PathBuf::from(files::resolve(root))),
        None => Roots::defaults(),
    };
    let mut logs = Vec::new();
    for log in roots.discover() {
        // As in the reference, a log that cannot be read safely is not a candidate.
        if files::check_safe_file(&log.path).is_err() {
            continue;
        }
        if files::peek_cwd(log.host, &log.path).is_some_and(|cwd| files::resolve(&cwd) != args.cwd) {
            continue;
        }
        let path = files::resolve(&log.path.to_string_lossy());
        if let Ok(bytes) = files::read_safe(Path::new(&path), files::MAX_LOG_BYTES) {
            logs.push(SessionLog::from_bytes(log.host, path, bytes));
        }
    }
    let nonce = rules::new_nonce();
    let request = rules::ChallengeRequest {
        binding: args.binding,
        cwd: &args.cwd,
        max_age_seconds: args.max_age_seconds,
        now: args.started,
        nonce: &nonce,
    };
    let logs: Vec<&SessionLog> = logs.iter().collect();
    let mut challenge = rules::challenge(&request, &logs, &FsEnv)
        .map_err(|e| e.with_log_state(LogState::of(&logs, &["challenge", args.binding])))?;
    let tree = Tree::of(Path::new(&args.cwd), &[PathBuf::from(args.output)]);
    challenge.insert("tree_sha256".into(), tree.map(|t| t.digest()).into());
    Ok(challenge)
}
