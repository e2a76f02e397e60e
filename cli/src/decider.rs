//! Where the evidence decisions are made: in this process over the log files (direct
//! mode), or by `judged` over the logs it witnessed (daemon mode). Both run the same
//! `judged_core::rules`; the daemon adds its witness.

use crate::panel::{self, PanelAnswer, PanelRequest};
use chrono::{DateTime, Utc};
use judged_core::event::Host;
use judged_core::log::SessionLog;
use judged_core::rules::{self, Artifact, ArtifactKind, Challenge, EvidenceError, LogState, Verified, VerifyRequest};
use judged_io::files::{self, FsEnv, Roots};
use judged_io::worktree::Tree;
use judged_protocol::{ChallengeArgs, ClientError, PanelReply, Request, Validation, Verification, paths};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `verify` is asked.
pub struct VerifyInput<'a> {
    pub challenge: &'a Artifact,
    /// The challenge file's name, as the calling command wrote it (to find that command's
    /// own call in the host's log).
    pub challenge_name: &'a str,
    pub response_path: &'a str,
    pub output: &'a str,
    pub started: DateTime<Utc>,
    /// `--declared-reviewer-model`: a review only the caller vouches for.
    pub declared_model: Option<&'a str>,
}

/// Where one command's evidence decision is made.
pub enum Decider {
    /// In this process, from the log files.
    Direct,
    /// By the daemon listening at this socket.
    Daemon(PathBuf),
}

/// Why a backend gave no answer.
pub enum CallError {
    /// Nothing listens at the socket: `auto` mode decides in direct mode instead.
    Unreachable,
    /// An evidence decision, with its exit code (either mode).
    Evidence(EvidenceError),
    /// The daemon was reached but the exchange failed (a bad frame, a refused request,
    /// another protocol version): no evidence decision was made.
    Transport(ClientError),
}

impl Decider {
    /// The daemon at its default socket.
    pub fn daemon() -> Decider {
        Decider::Daemon(paths::socket_path())
    }

    /// One request to the daemon at `socket`, its refusals sorted.
    pub(crate) fn call<T: DeserializeOwned>(socket: &Path, request: Request) -> Result<T, CallError> {
        judged_protocol::call(socket, request, Duration::from_secs(120)).map_err(refusal)
    }

    pub fn challenge(&self, args: &ChallengeArgs) -> Result<Challenge, CallError> {
        match self {
            Decider::Direct => direct_challenge(args).map_err(CallError::Evidence),
            Decider::Daemon(socket) => Self::call(socket, Request::Challenge(args.clone())),
        }
    }

    pub fn verify(&self, args: &VerifyInput) -> Result<Verified, CallError> {
        match self {
            Decider::Direct => {
                let log = load_log(args.challenge).map_err(CallError::Evidence)?;
                let reviewer_logs =
                    if rules::reviews_by_shell_call(log.host) { reviewer_logs(args.challenge) } else { Vec::new() };
                let reviewer_logs: Vec<&SessionLog> = reviewer_logs.iter().collect();
                let request = VerifyRequest {
                    response_path: args.response_path,
                    now: args.started,
                    declared_model: args.declared_model,
                };
                rules::verify_review(args.challenge, &log, &reviewer_logs, &request, &FsEnv::default()).map_err(|e| {
                    CallError::Evidence(e.with_log_state(LogState::of(&[&log], &["verify", args.challenge_name])))
                })
            }
            Decider::Daemon(socket) => {
                let request = Request::Verify(judged_protocol::VerifyArgs {
                    challenge: args.challenge.clone(),
                    response_path: args.response_path.to_owned(),
                    challenge_name: args.challenge_name.to_owned(),
                    started_at: args.started,
                    writes: vec![PathBuf::from(args.output), PathBuf::from(args.response_path)],
                    declared_reviewer_model: args.declared_model.map(str::to_owned),
                });
                let verification: Verification = Self::call(socket, request)?;
                Ok(Verified {
                    evidence: verification.evidence,
                    response: verification.response,
                    window_start: verification.window_start,
                })
            }
        }
    }

    /// Revalidate a challenge or evidence artifact: whether the daemon's witness was
    /// checked, and what was derived from the log.
    pub fn validate(&self, kind: ArtifactKind, artifact: &Artifact) -> Result<Validation, CallError> {
        match self {
            Decider::Direct => {
                let log = load_log(artifact).map_err(CallError::Evidence)?;
                let reviewer = match rules::reviewer_log(artifact) {
                    Some((path, host)) => Some(read_log(path, host).map_err(CallError::Evidence)?),
                    None => None,
                };
                kind.validate(artifact, &log, reviewer.as_ref(), &FsEnv::default())
                    .map(|validated| Validation {
                        witness_checked: false,
                        derived_reviewed_at: validated.derived_reviewed_at,
                    })
                    .map_err(CallError::Evidence)
            }
            Decider::Daemon(socket) => {
                let files = sent_files(artifact);
                let request =
                    Request::Validate(judged_protocol::ValidateArgs { kind, artifact: artifact.clone(), files });
                Self::call(socket, request)
            }
        }
    }
}

impl Decider {
    /// Convene the jury: the daemon's (journaled, with progress frames while a person
    /// watches) or this process's.
    pub fn panel(&self, request: &PanelRequest) -> Result<PanelAnswer, CallError> {
        match self {
            Decider::Direct => {
                panel::convene_here(request).map_err(|e| CallError::Evidence(EvidenceError::evidence(e.to_string())))
            }
            Decider::Daemon(socket) => {
                let args = judged_protocol::PanelArgs {
                    rubric: request.rubric.clone(),
                    rubric_text: request.rubric_text.clone(),
                    persona: request.persona.clone(),
                    artifact: request.artifact.clone(),
                    cwd: request.cwd.clone(),
                    author_model: request.author_model.clone(),
                    progress: panel::wants_progress(),
                };
                // A jury takes up to its deadline; without progress frames that is one wait.
                let reply: PanelReply =
                    judged_protocol::call_with_progress(socket, Request::Panel(args), PANEL_WAIT, |progress| {
                        panel::show_progress(&progress);
                    })
                    .map_err(refusal)?;
                Ok(PanelAnswer { packet: reply.packet })
            }
        }
    }
}

/// The files an artifact names that the daemon's rules read (its response), as a request
/// sends them: the daemon reads no file a client names (it may run under another account).
pub fn sent_files(artifact: &Artifact) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    if let Some(path) = artifact.response_path()
        && let Ok((_, bytes)) = files::read_artifact(path)
    {
        files.insert(path.to_owned(), hex::encode(bytes));
    }
    files
}

/// The longest a client waits for one frame of a jury's answer; the daemon's jury deadline
/// is what really bounds it.
const PANEL_WAIT: Duration = Duration::from_secs(3600);

/// What a failed call comes to: an evidence decision (with its code), no daemon, or a
/// transport failure.
fn refusal(error: ClientError) -> CallError {
    match error {
        ClientError::Unreachable(_) => CallError::Unreachable,
        ClientError::Refused(body) if let Some(code) = body.exit_code => {
            CallError::Evidence(EvidenceError::from_wire(code, body.message, body.log_state))
        }
        other => CallError::Transport(other),
    }
}

/// The log an artifact names, read from disk.
fn load_log(artifact: &Artifact) -> rules::Result<SessionLog> {
    read_log(artifact.session_events()?, artifact.host())
}

/// A `host` log read from disk, with the safe-file checks.
fn read_log(path: &str, host: Host) -> rules::Result<SessionLog> {
    let resolved = files::resolve(path);
    let bytes = files::read_safe(Path::new(&resolved), files::MAX_LOG_BYTES)?;
    Ok(SessionLog::from_bytes(host, resolved, bytes))
}

/// The reviewer CLIs' logs (Codex rollouts, Copilot session logs, Claude Code transcripts,
/// Gemini CLI recordings) that may hold the review of a challenge whose agent runs its
/// reviewer as a shell call: those written to since the challenge (a run after it can
/// only be in one of them).
fn reviewer_logs(challenge: &Artifact) -> Vec<SessionLog> {
    let since = challenge.challenge_time();
    let recent = |path: &Path| {
        let modified =
            std::fs::metadata(path).and_then(|m| m.modified()).ok().map(chrono::DateTime::<chrono::Utc>::from);
        since.is_none_or(|since| modified.is_some_and(|m| m >= since))
    };
    Roots::defaults()
        .discover()
        .into_iter()
        .filter(|found| files::check_safe_file(&found.path).is_ok() && recent(&found.path))
        .filter_map(|found| read_log(&found.path.to_string_lossy(), found.host).ok())
        .collect()
}

/// Direct-mode challenge: stream the roots, read only the sessions whose recorded cwd
/// is the requested one, and bind.
fn direct_challenge(args: &ChallengeArgs) -> rules::Result<Challenge> {
    // Checked where this decider takes the request, as the daemon checks it.
    let binding = rules::Binding::parse(&args.binding)?;
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
    let nonce = rules::Nonce::fresh();
    let searched = roots.searched();
    let tree = Tree::of(Path::new(&args.cwd), &args.writes);
    let request = rules::ChallengeRequest {
        binding: &binding,
        cwd: &args.cwd,
        max_age_seconds: args.max_age_seconds,
        now: args.started_at,
        nonce: &nonce,
        searched: &searched,
        tree_sha256: tree.map(|t| t.digest()),
    };
    let logs: Vec<&SessionLog> = logs.iter().collect();
    rules::challenge(&request, &logs, &FsEnv::default())
        .map_err(|e| e.with_log_state(LogState::of(&logs, &["challenge", binding.as_str()])))
}
