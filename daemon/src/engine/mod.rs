//! Requests in, replies out: the daemon's state and what each operation does with it.
//!
//! One owner. The [`Engine`] holds the store, the ingest caches, the parsed logs and the
//! witness key, and lives on one thread ([`actor`]): requests and the watcher's hints
//! reach it as jobs over a channel and are applied one at a time, so no lock guards its
//! state. Socket I/O stays on the async runtime. The rule that keeps it answering: a job
//! runs in milliseconds. Work that takes seconds or minutes (a jury of reviewer
//! processes) runs outside the engine and reports back as a job of its own, so `status`,
//! `challenge` and hook questions are answered while it runs.
//!
//! Every operation that names a session, file or cwd first catches the store up with the
//! files (read-your-writes). Evidence operations run the same `judged_core::rules` as the
//! CLI's direct mode, over the log as the daemon witnessed it, after checking that the
//! file still holds exactly those bytes. [`dispatch`] says where each request is answered;
//! one file per operation: [`queries`], [`challenge`], [`verify`], [`validate`],
//! [`trace`], [`report`], [`hook`], [`panel`], [`review`], [`gate_status`], [`attest`];
//! the gate is [`crate::hook_gate`].

pub mod actor;
mod attest;
mod challenge;
mod completions;
pub mod dispatch;
mod gate_status;
mod hook;
mod panel;
pub mod prune;
mod queries;
mod report;
mod review;
mod trace;
mod validate;
mod verify;

use crate::config::{ConfigChange, LiveConfig, ProjectFiles};
use crate::hook_gate::{self, HookGate, PendingDecision};
use crate::ingest::{Hint, Ingestor};
use crate::integrity;
use crate::jury::{JuryRun, JurySource};
use crate::logs::{LogCache, ResolvedCwds};
use crate::store::{
    ChallengeIssued, ConfigLoaded, ConfigRejected, EvidenceVerified, FileState, JournalEvent, Lookup, Store, StoreError,
};
use crate::tree_watch::TreeWatch;
use crate::witness::Witness;
use judged_core::event::Host;
use judged_core::rules::{Artifact, ArtifactKind, EvidenceError};
use judged_io::files;
use judged_io::worktree::Reader;
use judged_protocol::{ErrorBody, Reply};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The daemon's state.
pub struct Engine {
    store: Store,
    ingest: Ingestor,
    logs: LogCache,
    resolved_cwds: ResolvedCwds,
    /// The working trees the gate keys its decisions by.
    trees: TreeWatch,
    /// `config.toml`, followed as it changes.
    config: LiveConfig,
    /// Projects' `.judged.toml`, with the last good version of each.
    projects: ProjectFiles,
    catch_up: std::sync::Arc<crate::ingest::CatchUpProgress>,
    witness: Witness,
    started: Instant,
    /// When `[store] keep_days` was last applied.
    retained_at: Option<Instant>,
    /// The repositories `[attest] auto` follows.
    auto_attest: attest::AutoAttest,
    data_dir: PathBuf,
    socket: PathBuf,
}

/// Why an operation was refused.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An evidence decision: the client reports it with its exit code.
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    /// The request names something that is not there or asks for something out of range.
    #[error("{0}")]
    BadRequest(String),
    /// A review or gate status that cannot be had (config, jury, file).
    #[error(transparent)]
    Ask(#[from] hook_gate::AskError),
    /// A directory a served user named that is not its own.
    #[error(transparent)]
    NotYours(#[from] crate::caller::NotYours),
}

impl From<EngineError> for ErrorBody {
    fn from(error: EngineError) -> ErrorBody {
        match error {
            EngineError::Evidence(e) => {
                ErrorBody { message: e.message, exit_code: Some(e.code as u8), log_state: e.log_state }
            }
            // A session not written yet: the host's next write can change the answer.
            EngineError::Ask(
                error @ (hook_gate::AskError::NoProject { .. } | hook_gate::AskError::NoAuthorYet { .. }),
            ) => ErrorBody {
                message: error.to_string(),
                exit_code: None,
                log_state: Some(judged_core::rules::LogState::default()),
            },
            other => ErrorBody::message(other.to_string()),
        }
    }
}

type Answer = Result<Reply, EngineError>;

/// Where a project's jury comes from under the config in force.
fn jury_source(config: &LiveConfig) -> JurySource<'_> {
    let file = &config.current().file;
    JurySource {
        user: file.jury.as_ref(),
        user_path: config.path(),
        trust: config.project_trust(),
        witness: config.is_witness(),
        not_applied: config.rejected().map(|r| r.error.as_str()),
    }
}

/// What a request comes to: an answer now, or a jury to convene first.
pub enum Handled {
    Answer(Answer),
    Jury(JuryWork),
}

/// A jury to convene off the engine's thread, and what to do with its packet.
pub struct JuryWork {
    pub run: JuryRun,
    pub then: AfterJury,
}

/// Who waits for a jury.
pub enum AfterJury {
    /// `judge-evidence panel`: the packet is the reply.
    Panel { cwd: String },
    /// A hook: the gate decides on the packet.
    Gate(Box<PendingDecision>),
    /// `judged mcp`'s `review`: the packet is the reply, with what the gate makes of it.
    Review { cwd: String, counting: hook_gate::Counting },
}

fn bad_request(message: impl Into<String>) -> EngineError {
    EngineError::BadRequest(message.into())
}

fn evidence_error(message: impl Into<String>) -> EngineError {
    EvidenceError::evidence(message).into()
}

impl Engine {
    /// The engine over an opened store; `started` is when the daemon started.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: Store,
        ingest: Ingestor,
        config: LiveConfig,
        catch_up: std::sync::Arc<crate::ingest::CatchUpProgress>,
        witness: Witness,
        started: Instant,
        data_dir: PathBuf,
        socket: PathBuf,
    ) -> Engine {
        let projects = match config.is_witness() {
            true => ProjectFiles::read_in_place(),
            false => ProjectFiles::default(),
        };
        let mut ingest = ingest;
        if let Err(error) = ingest.resume_ends(&store) {
            tracing::warn!(%error, "cannot read what the logs' ends waited for; completions under way may be missed");
        }
        Engine {
            store,
            ingest,
            logs: LogCache::default(),
            resolved_cwds: ResolvedCwds::default(),
            trees: TreeWatch::new(match config.is_witness() {
                true => Reader::Witness { serving: files::current_uid() },
                false => Reader::Owner,
            }),
            config,
            projects,
            catch_up,
            witness,
            started,
            retained_at: None,
            auto_attest: attest::AutoAttest::default(),
            data_dir,
            socket,
        }
    }

    /// Apply one request's operation ([`dispatch::Dispatch::of`]). A jury is not convened
    /// here: it comes back as work for the caller to run off this thread, and
    /// [`Engine::after_jury`] finishes the request.
    pub fn handle(&mut self, operation: dispatch::Operation) -> Handled {
        // Room for the logs this request reads; none it reads is dropped while it runs.
        self.logs.trim();
        // What earlier catch-ups found, before `status` or `report` counts it.
        self.account_for_completions();
        match operation.apply(self) {
            Handled::Jury(mut work) if self.config.is_witness() => {
                work.run = work.run.keeping_out(self.witness_secrets());
                Handled::Jury(work)
            }
            handled => handled,
        }
    }

    /// What a witness account's jurors (of its rights, reading a prompt the judged work
    /// wrote) must not open: every entry of its data dir, its key and store among them,
    /// and what is created there later, but the dot-directories where the juror CLIs keep
    /// their own setup (the witness's home is its data dir).
    fn witness_secrets(&self) -> Vec<PathBuf> {
        let data_dir = self.data_dir.canonicalize().unwrap_or_else(|_| self.data_dir.clone());
        let entries = std::fs::read_dir(&data_dir).into_iter().flatten().flatten();
        let mut secrets: Vec<PathBuf> =
            entries.filter(|entry| !entry.file_name().to_string_lossy().starts_with('.')).map(|e| e.path()).collect();
        // Kept out even before it exists: the key is always among them.
        secrets.push(data_dir.join("signing.key"));
        secrets.sort();
        secrets.dedup();
        secrets
    }

    /// Finish a request that waited for a jury: journal the jury, then answer.
    pub fn after_jury(&mut self, work: JuryWork, packet: judged_jury::packet::Packet) -> Answer {
        let JuryWork { run, then } = work;
        match then {
            AfterJury::Panel { cwd } => {
                let convened = run.record(&mut self.store, packet, &cwd)?;
                Ok(Reply::Panel(crate::jury::reply(convened)))
            }
            AfterJury::Gate(pending) => {
                let cwd = pending.cwd().to_owned();
                let convened = run.record(&mut self.store, packet, &cwd)?;
                if convened.git_tree.is_some() {
                    self.reviewed_in(Path::new(&cwd));
                }
                Ok(Reply::Hook(self.hook_gate().finish(*pending, &convened)?))
            }
            AfterJury::Review { cwd, counting } => {
                let convened = run.record(&mut self.store, packet, &cwd)?;
                if convened.git_tree.is_some() {
                    self.reviewed_in(Path::new(&cwd));
                }
                Ok(Reply::Review(review::review_reply(convened, &counting, false)))
            }
        }
    }

    /// Where a project's jury comes from.
    fn jury_source(&self) -> JurySource<'_> {
        jury_source(&self.config)
    }

    /// The review gate over this engine's store and logs.
    fn hook_gate(&mut self) -> HookGate<'_> {
        HookGate {
            store: &mut self.store,
            ingest: &mut self.ingest,
            logs: &mut self.logs,
            trees: &mut self.trees,
            config: &self.config,
            projects: &mut self.projects,
            juries: jury_source(&self.config),
        }
    }

    /// Look at `config.toml` again (read it whatever its stamp when `force`: `SIGHUP`),
    /// and log and journal what changed.
    pub fn follow_config(&mut self, force: bool) {
        let Some(change) = self.config.refresh(force) else { return };
        let event = match change {
            ConfigChange::Loaded(file) => {
                tracing::info!(config = %file, "config in force");
                JournalEvent::ConfigLoaded(ConfigLoaded { file })
            }
            ConfigChange::Rejected { file, error } => {
                tracing::warn!(%error, "config edit not applied; the last good version stays in force");
                JournalEvent::ConfigRejected(ConfigRejected { file, error })
            }
        };
        if let Err(error) = self.store.journal(&event) {
            tracing::warn!(%error, "cannot journal the config change");
        }
    }

    /// A watcher's hint: catch up what a notification names. A log in the shape
    /// discovery finds is caught up alone; a new directory (a session appearing) is looked
    /// through; a rescan or the periodic tick (no paths) reconciles everything; other
    /// files (checkpoints, workspace files) are not logs. Returns the roots to watch.
    pub fn follow(&mut self, paths: &[Hint]) -> Vec<PathBuf> {
        // The watcher's tick is also when a broken edit of config.toml is noticed (and
        // logged) without waiting for a decision to need it.
        if paths.is_empty() {
            self.follow_config(false);
        }
        let caught_up = if paths.is_empty() {
            self.ingest.catch_up_all(&mut self.store)
        } else {
            paths.iter().try_for_each(|Hint { path, written }| {
                if path.is_dir() {
                    return self.ingest.catch_up_under(&mut self.store, path);
                }
                match self.ingest.roots().classify(path) {
                    Some(host) => self.ingest.catch_up_heard(&mut self.store, path, host, *written),
                    None => Ok(()),
                }
            })
        };
        if let Err(error) = caught_up {
            tracing::warn!(%error, "ingest failed");
        }
        if paths.is_empty() {
            let quiet = self.config.current().file.gate.answer_quiet_seconds.unwrap_or(ANSWER_QUIET_SECONDS);
            self.ingest.settle_answers(std::time::Duration::from_secs(quiet));
        }
        self.account_for_completions();
        if paths.is_empty() {
            self.retain();
            self.attest_new_commits();
        }
        self.ingest.roots().all().cloned().collect()
    }

    /// Apply `[store] keep_days`, at most once an hour (sessions go idle by the day).
    fn retain(&mut self) {
        const EVERY: std::time::Duration = std::time::Duration::from_secs(3600);
        let Some(days) = self.config.current().file.store.keep_days else { return };
        if self.retained_at.is_some_and(|at| at.elapsed() < EVERY) {
            return;
        }
        self.retained_at = Some(Instant::now());
        let now = chrono::Utc::now();
        let older_than = now - chrono::Duration::days(i64::from(days.get()));
        let live_since = self.live_since(now);
        match prune::prune(&mut self.store, older_than, live_since, false) {
            Ok(report) if !report.pruned.is_empty() => {
                tracing::info!(sessions = report.pruned.len(), bytes = report.bytes, days, "pruned idle sessions");
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "pruning under [store] keep_days failed"),
        }
    }

    /// On start: re-check the store's own chains, re-hash every ingested prefix against
    /// its file, then catch up from the stored offsets.
    pub fn recover(&mut self, progress: &crate::ingest::CatchUpProgress) -> Result<(), StoreError> {
        if let Err(error) = self.store.verify_chains() {
            tracing::error!(%error, "the store's own history does not verify");
            let failed = crate::store::StoreIntegrityFailed { error: error.to_string() };
            self.store.journal(&crate::store::JournalEvent::StoreIntegrityFailed(failed))?;
        }
        let files: Vec<FileState> = self.store.files().cloned().collect();
        for file in files {
            self.ingest.verify_prefix(&mut self.store, &file)?;
        }
        self.ingest.catch_up_counted(&mut self.store, progress)?;
        self.retain();
        self.store.truncate_log();
        tracing::info!(files = self.store.files().count(), "caught up");
        Ok(())
    }

    /// The witnessed log at `path`, after checking the file still holds those bytes;
    /// its state, whose id keys it in the log cache.
    fn witnessed_log(&mut self, path: &str, host: Host) -> Result<FileState, EngineError> {
        let resolved = files::resolve(path);
        let meta = files::check_regular_file(Path::new(&resolved))?;
        if !self.ingest.reads_logs_of(meta.uid()) {
            return Err(evidence_error(format!("refusing event file owned by another user: {resolved}")));
        }
        // The same cap as direct mode, so both modes refuse the same logs.
        if meta.len() > files::MAX_LOG_BYTES {
            return Err(evidence_error(format!("file exceeds {} bytes: {resolved}", files::MAX_LOG_BYTES)));
        }
        self.ingest.catch_up(&mut self.store, Path::new(&resolved), host)?;
        let file = self
            .store
            .file_by_path(&resolved)
            .cloned()
            .ok_or_else(|| evidence_error(format!("file not found: {resolved}")))?;
        if self.ingest.verify_prefix_if_changed(&mut self.store, &file)?.tampered {
            return Err(evidence_error(format!("session log was rewritten after judged witnessed it: {resolved}")));
        }
        // Evidence that rests on a pruned log is refused as evidence, saying why.
        self.logs.refresh(&self.store, &file).map_err(|error| match error {
            StoreError::Pruned { .. } => evidence_error(format!(
                "{error}; evidence on it is no longer checked by the daemon (`judge-evidence --mode direct` reads \
                 the host's own log, while the host keeps it)"
            )),
            other => other.into(),
        })?;
        Ok(self.store.file_by_path(&resolved).cloned().unwrap_or(file))
    }

    /// The witnessed log an artifact names.
    fn log_for(&mut self, artifact: &Artifact) -> Result<FileState, EngineError> {
        self.witnessed_log(artifact.session_events()?, artifact.host())
    }

    /// The artifact was issued by this daemon, unchanged: its witness verifies (a
    /// signature by one of its keys, or the HMAC of judged before signatures) and the
    /// journal recorded it.
    fn check_witnessed(&mut self, artifact: &Artifact, kind: ArtifactKind) -> Result<(), EngineError> {
        let what = kind.as_str();
        self.witness.check(artifact).map_err(|refusal| evidence_error(format!("{what} {refusal}")))?;
        let (witness, evidence_id) =
            (artifact.witness().unwrap_or_default(), artifact.evidence_id().unwrap_or_default());
        let recorded = match kind {
            ArtifactKind::Challenge => {
                self.store.journal_find::<ChallengeIssued>(Lookup::ChallengeByWitness, witness)?.is_some()
            }
            // A review verified again after a key rotation (or after signatures replaced
            // the HMAC) is signed anew but journaled once, under its first witness: its
            // id finds it, and the signature says this daemon issued these fields.
            ArtifactKind::Evidence => {
                self.store.journal_find::<EvidenceVerified>(Lookup::EvidenceByWitness, witness)?.is_some()
                    || (judged_core::signature::is_signature(witness)
                        && self.store.journal_find::<EvidenceVerified>(Lookup::EvidenceById, evidence_id)?.is_some())
            }
        };
        if !recorded {
            return Err(evidence_error(format!("{what} is not in judged's journal: it was not issued by this daemon")));
        }
        Ok(())
    }

    /// Refuse evidence whose log has an integrity finding that undoes it.
    fn check_findings(&self, file: &FileState, window_start: u64) -> Result<(), EngineError> {
        match integrity::undoing_finding(&self.store, file, window_start)? {
            Some(refusal) => Err(refusal.into()),
            None => Ok(()),
        }
    }
}

/// How long an answer nothing followed waits before it counts as its agent's end (Gemini
/// CLI, Qwen Code), unless `[gate] answer_quiet_seconds` says otherwise.
const ANSWER_QUIET_SECONDS: u64 = 600;

/// The time a request's age checks use: when the client's command started (it may retry
/// while the host persists its log, and a marker dated ahead must not grow acceptable
/// while it waits). A start time in the future, or older than the longest wait, is
/// refused.
fn request_time(started_at: chrono::DateTime<chrono::Utc>) -> Result<chrono::DateTime<chrono::Utc>, EngineError> {
    let age = chrono::Utc::now() - started_at;
    if age < chrono::Duration::seconds(-2) || age > chrono::Duration::seconds(MAX_REQUEST_AGE_SECONDS) {
        return Err(bad_request(format!(
            "`started_at` {started_at} is not within the last {MAX_REQUEST_AGE_SECONDS} s of judged's clock"
        )));
    }
    Ok(started_at)
}

/// The longest a client retries one command (`--wait-seconds` is at most 60), with room.
const MAX_REQUEST_AGE_SECONDS: i64 = 90;

/// An engine over a store and a witness key in `dir`, reading the logs under `roots`, with
/// no config file: what the engine's unit tests drive, without a socket or a watcher.
#[cfg(test)]
fn test_engine(dir: &std::path::Path, roots: judged_io::files::Roots) -> Engine {
    Engine::new(
        Store::open(&dir.join("judged.db")).unwrap(),
        crate::ingest::Ingestor::new(roots),
        crate::config::LiveConfig::new(dir.join("config.toml"), Default::default()),
        Default::default(),
        crate::witness::Witness::load_or_create(dir).unwrap(),
        Instant::now(),
        dir.to_path_buf(),
        dir.join("sock"),
    )
}
