//! Requests in, answers out: the daemon's state and what each operation does with it.
//!
//! Every operation that names a session, file or cwd first catches the store up with the
//! files (read-your-writes). Evidence operations run the same `judged_core::rules` as the
//! CLI's direct mode, over the log as the daemon witnessed it, after checking that the
//! file still holds exactly those bytes.

use crate::ingest::{IN_PLACE_WRITE, Ingestor};
use crate::store::{FileState, JournalLookup, StoreError};
use crate::witness::Witness;
use judged_core::event::Host;
use judged_core::files::{self, Roots};
use judged_core::log::SessionLog;
use judged_core::rules::{self, Artifact, Env, EvidenceError, LogState};
use judged_core::worktree::Tree;
use judged_protocol::ErrorBody;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Parsed session logs by file id, extended as lines arrive, so an evidence request
/// parses only what the host wrote since the last one.
#[derive(Default)]
pub struct LogCache(HashMap<i64, SessionLog>);

impl LogCache {
    /// Sessions kept parsed between requests.
    const CAPACITY: usize = 16;

    /// Make room before a request; a request itself may add as many logs as it needs,
    /// so nothing it refreshed is evicted while it runs.
    fn trim(&mut self) {
        if self.0.len() > Self::CAPACITY {
            self.0.clear();
        }
    }

    /// Bring the cached log of `file` up to the store.
    fn refresh(&mut self, store: &crate::store::Store, file: &FileState) -> Result<(), StoreError> {
        let log =
            self.0.entry(file.id).or_insert_with(|| SessionLog::from_bytes(file.host, file.path.clone(), Vec::new()));
        let have = log.lines.len() as u64;
        if have < file.lines {
            let mut more = Vec::new();
            store.scan_lines(file.id, have + 1, true, |line| {
                more.extend_from_slice(&line.raw);
                true
            })?;
            log.append(&more);
        }
        Ok(())
    }

    fn get(&self, file_id: i64) -> &SessionLog {
        &self.0[&file_id]
    }
}

/// Recorded session cwds, resolved: a challenge compares every session's cwd, and
/// resolving is several syscalls a path.
#[derive(Default)]
pub struct ResolvedCwds(rustc_hash::FxHashMap<String, String>);

impl ResolvedCwds {
    /// Cwds remembered at most; a daemon's users have far fewer projects.
    const CAPACITY: usize = 10_000;

    /// Whether the session's recorded cwd resolves to `cwd` (itself resolved).
    fn same(&mut self, file: &FileState, cwd: &str) -> bool {
        let Some(recorded) = file.cwd.as_deref() else { return false };
        if let Some(resolved) = self.0.get(recorded) {
            return resolved == cwd;
        }
        if self.0.len() >= Self::CAPACITY {
            self.0.clear();
        }
        let resolved = files::resolve(recorded);
        let same = resolved == cwd;
        self.0.insert(recorded.to_owned(), resolved);
        same
    }
}

pub struct Engine {
    pub ingest: Ingestor,
    pub logs: LogCache,
    pub resolved_cwds: ResolvedCwds,
    pub gate: crate::gate::GateConfig,
    pub witness: Witness,
    pub started: Instant,
    pub data_dir: PathBuf,
    pub socket: PathBuf,
}

/// Why an operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An evidence decision: the client reports it with its exit code.
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    #[error("{0}")]
    BadRequest(String),
}

impl From<EngineError> for ErrorBody {
    fn from(error: EngineError) -> ErrorBody {
        let (exit_code, log_state) = match &error {
            EngineError::Evidence(e) => (Some(e.code as u8), e.log_state),
            _ => (None, None),
        };
        ErrorBody { message: error.to_string(), exit_code, log_state }
    }
}

type Answer = Result<Value, EngineError>;

fn bad_request(message: impl Into<String>) -> EngineError {
    EngineError::BadRequest(message.into())
}

fn evidence_error(message: impl Into<String>) -> EngineError {
    EvidenceError::evidence(message).into()
}

fn arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, EngineError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| bad_request(format!("request is missing string argument `{key}`")))
}

fn object_arg<'a>(args: &'a Value, key: &str) -> Result<&'a Map<String, Value>, EngineError> {
    args.get(key)
        .and_then(Value::as_object)
        .ok_or_else(|| bad_request(format!("request is missing object argument `{key}`")))
}

/// Real paths; artifact files the client sent along are read from the request.
struct DaemonEnv<'a> {
    sent: HashMap<&'a str, Vec<u8>>,
}

impl Env for DaemonEnv<'_> {
    fn resolve(&self, path: &str) -> String {
        files::resolve(path)
    }
    fn read_file(&self, path: &str) -> rules::Result<Vec<u8>> {
        match self.sent.get(path) {
            Some(bytes) => Ok(bytes.clone()),
            None => files::read_artifact(path).map(|(_, bytes)| bytes),
        }
    }
}

impl Engine {
    pub fn handle(&mut self, op: &str, args: &Value) -> Answer {
        match op {
            "status" => self.status(),
            "sessions" => self.sessions(),
            "events" => self.events(args),
            "chain_head" => self.chain_head(args),
            "verify_log" => self.verify_log(args),
            "challenge" => self.challenge(args),
            "verify" => self.verify(args),
            "validate_challenge" => self.validate_artifact(args, "challenge"),
            "validate" => self.validate_artifact(args, "evidence"),
            "rebuild" => {
                self.ingest.store.rebuild_files()?;
                self.sessions()
            }
            "hook" => Ok(self.hook(args)?),
            "decisions" => Ok(self.decisions()?),
            _ => Err(bad_request(format!("unknown operation `{op}`"))),
        }
    }

    fn status(&mut self) -> Answer {
        let files: Vec<&FileState> = self.ingest.store.files().collect();
        Ok(json!({
            "pid": std::process::id(),
            "version": env!("CARGO_PKG_VERSION"),
            "protocol": judged_protocol::PROTOCOL_VERSION,
            "uptime_seconds": self.started.elapsed().as_secs(),
            "data_dir": self.data_dir,
            "socket": self.socket,
            "copilot_roots": self.ingest.roots.copilot,
            "claude_roots": self.ingest.roots.claude,
            "files": files.len(),
            "lines": files.iter().map(|f| f.lines).sum::<u64>(),
            "bytes": files.iter().map(|f| f.offset).sum::<u64>(),
            "tampered": files.iter().filter(|f| f.tampered).count(),
            "journal_events": self.ingest.store.journal_len()?,
            "catch_up_passes": self.ingest.passes,
        }))
    }

    fn sessions(&mut self) -> Answer {
        self.ingest.catch_up_all()?;
        let sessions: Vec<Value> = self.ingest.store.files().map(session_summary).collect();
        Ok(Value::Array(sessions))
    }

    /// The file a request names by session id, session key or path, caught up.
    fn named_file(&mut self, args: &Value) -> Result<FileState, EngineError> {
        let name = arg(args, "session")?;
        self.ingest.catch_up_all()?;
        self.ingest
            .store
            .file_by_session(name)
            .cloned()
            .ok_or_else(|| bad_request(format!("no session or log named `{name}`")))
    }

    fn events(&mut self, args: &Value) -> Answer {
        let file = self.named_file(args)?;
        let from = args.get("from").and_then(Value::as_u64).unwrap_or(1);
        let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(1000).min(10_000);
        let lines = self.ingest.store.lines(file.id, from, limit)?;
        Ok(Value::Array(
            lines
                .iter()
                .map(|l| {
                    json!({"seq": l.seq, "start": l.start, "end": l.end, "kind": l.kind,
                        "line_sha256": hex::encode(l.sha256), "chain_sha256": hex::encode(l.chain),
                        "raw": String::from_utf8_lossy(&l.raw)})
                })
                .collect(),
        ))
    }

    fn chain_head(&mut self, args: &Value) -> Answer {
        let file = self.named_file(args)?;
        let seq = args.get("seq").and_then(Value::as_u64).unwrap_or(file.lines);
        let head = self.ingest.store.chain_at(file.id, seq)?.ok_or_else(|| bad_request(format!("no line {seq}")))?;
        Ok(json!({"session": file.session, "seq": seq, "chain_sha256": hex::encode(head)}))
    }

    fn verify_log(&mut self, args: &Value) -> Answer {
        let file = self.named_file(args)?;
        Ok(serde_json::to_value(self.ingest.verify_prefix(&file)?).expect("a prefix check serializes"))
    }

    /// The witnessed log at `path`, after checking the file still holds those bytes;
    /// its state, whose id keys it in the log cache.
    fn witnessed_log(&mut self, path: &str, host: Host) -> Result<FileState, EngineError> {
        let resolved = files::resolve(path);
        let meta = files::check_safe_file(Path::new(&resolved))?;
        // The same cap as direct mode, so both modes refuse the same logs.
        if meta.len() > files::MAX_LOG_BYTES {
            return Err(evidence_error(format!("file exceeds {} bytes: {resolved}", files::MAX_LOG_BYTES)));
        }
        self.ingest.catch_up(Path::new(&resolved), host)?;
        let file = self
            .ingest
            .store
            .file_by_path(&resolved)
            .cloned()
            .ok_or_else(|| evidence_error(format!("file not found: {resolved}")))?;
        if self.ingest.verify_prefix_if_changed(&file)?.tampered {
            return Err(evidence_error(format!("session log was rewritten after judged witnessed it: {resolved}")));
        }
        self.logs.trim();
        self.logs.refresh(&self.ingest.store, &file)?;
        Ok(self.ingest.store.file_by_path(&resolved).cloned().unwrap_or(file))
    }

    fn challenge(&mut self, args: &Value) -> Answer {
        let binding = arg(args, "binding")?;
        let cwd = files::resolve(arg(args, "cwd")?);
        let max_age_seconds = args.get("max_age_seconds").and_then(Value::as_i64).unwrap_or(60);
        rules::check_max_age(max_age_seconds)?;
        rules::check_binding(binding)?;
        // As in direct mode, `--session-root` is where to look, for either host's layout.
        // It is looked at for this request only: watching every root a client ever named
        // would keep a watch per root until restart (issue 10).
        let root = args.get("session_root").and_then(Value::as_str).map(|r| PathBuf::from(files::resolve(r)));
        let nonce = rules::new_nonce();
        let now = request_time(args)?;
        let request = rules::ChallengeRequest { binding, cwd: &cwd, max_age_seconds, now, nonce: &nonce };
        let mut artifact = self.challenge_over(&request, root.as_deref())?;
        let tree = Tree::of(Path::new(&cwd), &excluded_paths(args)?);
        artifact.insert("tree_sha256".into(), tree.map(|t| t.digest()).into());
        let seen = json!({"binding": binding, "session_events": artifact["session_events"],
            "event_id": artifact["challenge_event_id"], "completion_event_id": artifact["challenge_completion_event_id"]});
        let witness = self.witness.sign(&artifact);
        let issued = json!({"nonce": nonce, "binding": binding, "session_events": artifact["session_events"], "witness": witness});
        self.ingest.store.journal_together(&[("marker_seen", &seen), ("challenge_issued", &issued)])?;
        artifact.insert("witness".into(), witness.into());
        Ok(Value::Object(artifact))
    }

    /// The challenge over the logs of `request.cwd` (under `root`, when given).
    ///
    /// Only the logs that can hold the binding are caught up: this cwd's, those whose cwd
    /// is not recorded yet, and those not in the store yet (a second one holding the
    /// binding makes it ambiguous). Other projects' logs cannot, and following them is
    /// the watcher's job, so the answer costs about the same however many sessions the
    /// user has. New logs are looked for in the roots and in every Claude Code project
    /// directory (one `stat` each; several cwds can share a directory name, `/w/my-app`
    /// and `/w/my_app` both write to `-w-my-app`); sub-agent transcripts never hold a root
    /// marker, so their directories are taken as last read.
    fn challenge_over(
        &mut self,
        request: &rules::ChallengeRequest,
        root: Option<&Path>,
    ) -> Result<Map<String, Value>, EngineError> {
        let mut stale: Vec<(PathBuf, Host)> = (self.ingest.store.files())
            .filter(|f| f.cwd.is_none() || self.resolved_cwds.same(f, request.cwd))
            .map(|f| (PathBuf::from(&f.path), f.host))
            .collect();
        // Paths compare as bytes here: `Path`'s component-wise comparison cost more than
        // the rest of the request at a few hundred sessions.
        let same_path = |a: &Path, b: &Path| a.as_os_str() == b.as_os_str();
        let roots: Vec<PathBuf> = self.ingest.roots.all().cloned().collect();
        let claude_roots = self.ingest.roots.claude.clone();
        let check = |dir: &Path| {
            roots.iter().any(|r| same_path(r, dir))
                || dir.parent().is_some_and(|p| claude_roots.iter().any(|r| same_path(r, p)))
        };
        let found = match root {
            Some(root) => self.ingest.discover_in(&Roots::named(root.to_path_buf())),
            None => self.ingest.discover_checking(check),
        };
        for found in found {
            if self.ingest.store.file_by_path(&found.path.to_string_lossy()).is_none() {
                stale.push((found.path, found.host));
            }
        }
        for (path, host) in stale {
            self.ingest.catch_up(&path, host)?;
        }
        self.logs.trim();
        let mut ids = Vec::new();
        for file in self.ingest.store.files() {
            let under_root = root.is_none_or(|r| Path::new(&file.path).starts_with(r));
            if !file.tampered && under_root && self.resolved_cwds.same(file, request.cwd) {
                self.logs.refresh(&self.ingest.store, file)?;
                ids.push(file.id);
            }
        }
        let logs: Vec<&SessionLog> = ids.iter().map(|&id| self.logs.get(id)).collect();
        rules::challenge(request, &logs, &DaemonEnv { sent: HashMap::new() })
            .map_err(|e| e.with_log_state(LogState::of(&logs, &["challenge", request.binding])).into())
    }

    /// The artifact was issued by this daemon, unchanged: its witness verifies and the
    /// journal recorded it.
    fn check_witnessed(&self, artifact: &Map<String, Value>, issued: JournalLookup) -> Result<(), EngineError> {
        let what = if matches!(issued, JournalLookup::IssuedChallenge) { "challenge" } else { "evidence" };
        let Some(witness) = artifact.get("witness").and_then(Value::as_str) else {
            return Err(evidence_error(format!("{what} carries no judged witness: it was not issued by this daemon")));
        };
        if !self.witness.check(artifact) {
            return Err(evidence_error(format!("{what} witness does not match its fields: the artifact was edited")));
        }
        if self.ingest.store.journal_find(issued, witness)?.is_none() {
            return Err(evidence_error(format!("{what} is not in judged's journal: it was not issued by this daemon")));
        }
        Ok(())
    }

    fn verify(&mut self, args: &Value) -> Answer {
        let challenge = object_arg(args, "challenge")?;
        let response_path = arg(args, "response_path")?;
        // How the calling command names the challenge file, to find its own call in the log.
        let challenge_name = args.get("challenge_name").and_then(Value::as_str).unwrap_or("");
        self.check_witnessed(challenge, JournalLookup::IssuedChallenge)?;
        let file = self.log_for(challenge)?;
        let log = self.logs.get(file.id);
        let env = DaemonEnv { sent: HashMap::new() };
        let verified = rules::verify(challenge, log, response_path, request_time(args)?, &env)
            .map_err(|e| e.with_log_state(LogState::of(&[log], &["verify", challenge_name])))?;
        self.check_findings(&file, verified.window_start)?;
        let mut evidence = verified.evidence;
        let excluded = excluded_paths(args)?;
        let tree = evidence["cwd"].as_str().and_then(|cwd| Tree::of(Path::new(cwd), &excluded));
        // One review is one record: verifying it again neither renews it nor adds a newer
        // one; the evidence is issued again as it was first (same time, same witness).
        let id = evidence["evidence_id"].as_str().unwrap_or_default().to_owned();
        let first = self.ingest.store.journal_find(JournalLookup::EvidenceById, &id)?;
        let tree_sha256 = match &first {
            // The tree the review saw is the one recorded when it was first verified.
            Some(first) => {
                evidence.insert("verified_at".into(), first["verified_at"].clone());
                first["tree_sha256"].clone()
            }
            None => tree.as_ref().map(Tree::digest).into(),
        };
        evidence.insert("tree_sha256".into(), tree_sha256);
        let witness = self.witness.sign(&evidence);
        evidence.insert("witness".into(), witness.clone().into());
        if first.is_none() {
            // The verdict is read once here, so the gate can answer from the journal.
            let (score, verdict) = match judged_core::gate::parse_score_verdict(&verified.response) {
                Ok((score, verdict)) => (json!(score), json!(verdict)),
                Err(_) => (Value::Null, Value::Null),
            };
            self.ingest.store.journal(
                "evidence_verified",
                &json!({"evidence_id": id, "status": evidence["status"], "reason": evidence["reason"],
                    "session_events": evidence["session_events"], "host": evidence["host"],
                    "session_id": evidence["session_id"], "cwd": evidence["cwd"],
                    "executor_model": evidence["executor_model"], "reviewer_model": evidence["reviewer_model"],
                    "verified_at": evidence["verified_at"], "reviewed_at": evidence["reviewed_at"],
                    "window_start": verified.window_start, "file_id": file.id,
                    "tree_sha256": evidence["tree_sha256"], "tree": tree, "tree_excluded": excluded,
                    "score": score, "verdict": verdict, "witness": witness}),
            )?;
        }
        Ok(json!({"evidence": evidence, "response": verified.response, "window_start": verified.window_start}))
    }

    /// Refuse evidence whose log has an integrity finding that undoes it: an in-place
    /// write anywhere (the log was open to rewriting, whatever it holds now), or a chain
    /// break from the start of its reviewed window on.
    pub(crate) fn check_findings(&self, file: &FileState, window_start: u64) -> Result<(), EngineError> {
        if file.findings == 0 {
            return Ok(());
        }
        for (at, finding) in self.ingest.store.findings_of(file.id)? {
            let what = finding["finding"].as_str().unwrap_or("integrity finding");
            let offset = finding["offset"].as_u64().unwrap_or(0);
            if what == IN_PLACE_WRITE {
                let within = finding["within_bytes"].as_u64().unwrap_or(0);
                return Err(evidence_error(format!(
                    "session log {} was written in place (an {what} within its first {within} bytes, recorded by judged at {at}): \
                     host logs only grow, so its history cannot be trusted; review again in a new session",
                    file.path
                )));
            }
            if offset >= window_start {
                return Err(evidence_error(format!(
                    "session log {} has an integrity finding inside the reviewed window ({what} at byte {offset}, line {}, recorded by judged at {at}); \
                     review again in a new session",
                    file.path, finding["seq"]
                )));
            }
        }
        Ok(())
    }

    fn log_for(&mut self, artifact: &Map<String, Value>) -> Result<FileState, EngineError> {
        let path = Artifact(artifact).required("session_events")?;
        let host = artifact.get("host").and_then(Value::as_str).and_then(Host::parse).unwrap_or(Host::CopilotCli);
        self.witnessed_log(path, host)
    }

    fn validate_artifact(&mut self, args: &Value, kind: &str) -> Answer {
        let artifact = object_arg(args, kind)?;
        let issued = if kind == "challenge" { JournalLookup::IssuedChallenge } else { JournalLookup::VerifiedEvidence };
        self.check_witnessed(artifact, issued)?;
        let file = self.log_for(artifact)?;
        let log = self.logs.get(file.id);
        let sent: HashMap<&str, Vec<u8>> = args
            .get("files")
            .and_then(Value::as_object)
            .map(|files| {
                files.iter().filter_map(|(p, hex)| Some((p.as_str(), hex::decode(hex.as_str()?).ok()?))).collect()
            })
            .unwrap_or_default();
        let env = DaemonEnv { sent };
        let window_start = if kind == "challenge" {
            rules::validate_challenge(artifact, log, &env)?
        } else {
            rules::validate(artifact, log, &env)?
        };
        self.check_findings(&file, window_start)?;
        Ok(json!({"witness_checked": true}))
    }
}

/// The time a request's age checks use: when the client's command started (it may retry
/// while the host persists its log, and a marker dated ahead must not grow acceptable
/// while it waits), or now. A start time in the future, or older than the longest wait,
/// is refused.
fn request_time(args: &Value) -> Result<chrono::DateTime<chrono::Utc>, EngineError> {
    let now = chrono::Utc::now();
    let Some(started) = args.get("started_at") else { return Ok(now) };
    let started = started
        .as_str()
        .and_then(judged_core::timestamp::parse)
        .ok_or_else(|| bad_request("`started_at` must be an ISO-8601 timestamp"))?;
    let age = now - started;
    if age < chrono::Duration::seconds(-2) || age > chrono::Duration::seconds(MAX_REQUEST_AGE_SECONDS) {
        return Err(bad_request(format!(
            "`started_at` {started} is not within the last {MAX_REQUEST_AGE_SECONDS} s of judged's clock"
        )));
    }
    Ok(started)
}

/// The files the asking command writes after the answer (its artifacts), which are no
/// part of the work a review saw.
fn excluded_paths(args: &Value) -> Result<Vec<PathBuf>, EngineError> {
    match args.get("writes") {
        None => Ok(Vec::new()),
        Some(paths) => serde_json::from_value(paths.clone())
            .map_err(|_| bad_request("`writes` must be a list of the paths the command writes")),
    }
}

/// The longest a client retries one command (`--wait-seconds` is at most 60), with room.
const MAX_REQUEST_AGE_SECONDS: i64 = 90;

pub fn session_summary(file: &FileState) -> Value {
    json!({
        "host": file.host.as_str(), "session": file.session, "session_id": file.session_id, "cwd": file.cwd,
        "path": file.path, "events": file.lines, "bytes": file.offset, "last_event_time": file.last_event_time,
        "tampered": file.tampered, "integrity_findings": file.findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;
    use std::fs;

    const FIXTURE: &str =
        include_str!("../../fixtures/claude-code-2.1.328/marker-challenge/70e11cfc-c3fb-426c-9dfc-374e15ffb0af.jsonl");
    const FIXTURE_CWD: &str = "/tmp/judged-fixture/claude/marker-challenge/project";

    fn engine(dir: &Path, roots: Roots) -> Engine {
        let store = Store::open(&dir.join("judged.db")).unwrap();
        Engine {
            ingest: Ingestor::new(store, roots),
            logs: LogCache::default(),
            resolved_cwds: Default::default(),
            gate: Default::default(),
            witness: Witness::load_or_create(&dir.join("witness.key")).unwrap(),
            started: Instant::now(),
            data_dir: dir.to_path_buf(),
            socket: dir.join("sock"),
        }
    }

    /// Claude Code names a project's directory after its cwd with every byte outside
    /// [A-Za-z0-9] turned into `-`, so `/w/my-app` and `/w/my_app` share `-w-my-app`: a
    /// directory whose known sessions have another cwd can still get one of this cwd
    /// (found by a review). Driven through the engine, without the watcher, whose timing
    /// would decide an end-to-end test.
    #[test]
    fn a_new_session_in_a_project_directory_shared_with_another_cwd_is_caught_up() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fs::canonicalize(tmp.path()).unwrap();
        let (mine, theirs) = (dir.join("my_app"), dir.join("my-app"));
        fs::create_dir_all(&mine).unwrap();
        fs::create_dir_all(&theirs).unwrap();
        let root = dir.join("projects");
        let project = root.join("-w-my-app");
        fs::create_dir_all(&project).unwrap();
        let log = |cwd: &Path| FIXTURE.replace(FIXTURE_CWD, cwd.to_str().unwrap());
        fs::write(project.join("theirs.jsonl"), log(&theirs)).unwrap();
        // Past the listings' settle time, so the directory's listing is kept.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let mut engine = engine(&dir, Roots { claude: vec![root.clone()], ..Roots::default() });
        let request =
            json!({"binding": "run_20261130_a1b2c3d4_r1_review_7e91c4ab", "cwd": mine, "max_age_seconds": 600});
        assert!(engine.handle("challenge", &request).is_err(), "no session of this cwd yet");
        let new = project.join("mine.jsonl");
        fs::write(&new, log(&mine)).unwrap();
        let _ = engine.handle("challenge", &request);
        assert!(
            engine.ingest.store.file_by_path(new.to_str().unwrap()).is_some(),
            "{} was not caught up",
            new.display()
        );
    }
}
