//! The review gate a hook asks: may this task (or turn) be marked done?
//!
//! [`policy`] decides from the settings and what was found; this module finds it: the
//! newest fresh positive evidence in the journal, whether its log still holds, and how
//! the working tree moved since its review. Every decision on a gated event is a journal
//! event; a repeated question with unchanged inputs is answered from that record.

mod covering;
mod policy;
mod review;
mod status;

pub use covering::Covering;
pub use policy::{GateSettings, LOOSENING_IGNORED, SKIPPED_SHORT};
pub use review::{AskError, Counting, ReviewAsked};

use crate::caller::Caller;
use crate::config::{LiveConfig, ProjectFiles};
use crate::ingest::Ingestor;
use crate::integrity;
use crate::jury::{self, JuryAsk, JuryRun, JurySource};
use crate::logs::{LogCache, author_model};
use crate::store::{
    AskedBy, EvidenceVerified, IntegrityFinding, JournalEvent, JuryConvened, Lookup, SessionBegan, Store, StoreError,
    TamperDetected,
};
use crate::tree_watch::TreeWatch;
use judged_core::adapter::EventName;
use judged_core::event::SessionId;
use judged_core::family;
use judged_core::review_text::is_positive;
use judged_core::rules::EvidenceId;
use judged_io::files;
use judged_io::worktree::{DiffBase, Reader};
use judged_protocol::{Decision, DecisionRecord, GateDecision, HookAnswer, HookQuestion};
pub(crate) use policy::Settings;
use policy::{PassedOver, Question, Ruling, TreeChange};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The most of the working tree's changes a jury is shown: small models judge, and the
/// prompt must fit them.
const PANEL_CHANGES_BYTES: usize = 60 * 1024;

/// How a hook call was settled.
enum Settlement {
    /// The event is not one the gate covers: allowed, not recorded.
    NotGated,
    Decided(Decided),
    /// Only the jury can decide: it is to be convened (off the engine's thread).
    Jury(Box<PendingDecision>, JuryRun),
}

/// A decision made, to record and answer.
struct Decided {
    verdict: Ruling,
    settings: Settings,
    reason: &'static str,
    key: Option<String>,
    from_record: bool,
    panel: Option<String>,
    evidence_id: Option<EvidenceId>,
}

impl Settlement {
    /// A ruling made now on the question `key` names, resting on the jury verdict `panel`
    /// or the evidence `evidence_id` when one decided.
    fn decided(
        (verdict, reason): (Ruling, &'static str),
        settings: Settings,
        key: &str,
        panel: Option<String>,
        evidence_id: Option<EvidenceId>,
    ) -> Settlement {
        let key = Some(key.to_owned());
        Settlement::Decided(Decided { verdict, settings, reason, key, from_record: false, panel, evidence_id })
    }

    /// The on_error rule's answer to a question the gate could not judge.
    fn failure(settings: Settings, why: &str, reason: &'static str) -> Settlement {
        let verdict = Ruling::failure(&settings, why);
        Settlement::Decided(Decided {
            verdict,
            settings,
            reason,
            key: None,
            from_record: false,
            panel: None,
            evidence_id: None,
        })
    }
}

/// A hook question that waits for the jury.
pub struct PendingDecision {
    question: Question,
    settings: Settings,
    key: String,
    started: Instant,
}

impl PendingDecision {
    /// The project the question is about.
    pub fn cwd(&self) -> &str {
        self.question.cwd.as_deref().unwrap_or(".")
    }
}

/// The gate's answer: now, or once the jury (to convene off the engine's thread) has.
pub enum GateAnswer {
    Now(HookAnswer),
    Jury(Box<PendingDecision>, Box<JuryRun>),
}

/// The gate, over the store and the logs, for one question.
pub struct HookGate<'a> {
    pub store: &'a mut Store,
    pub ingest: &'a mut Ingestor,
    pub logs: &'a mut LogCache,
    pub trees: &'a mut TreeWatch,
    pub config: &'a LiveConfig,
    pub projects: &'a mut ProjectFiles,
    pub juries: JurySource<'a>,
}

impl HookGate<'_> {
    /// Decide a hook call and record the decision; the answer the shim relays, or the
    /// jury to convene first. A served `caller` is answered only about a directory of its
    /// own: a question about another's is refused, and nothing of it read.
    pub fn answer(&mut self, asked: &HookQuestion, caller: Caller) -> Result<GateAnswer, AskError> {
        let started = Instant::now();
        // A payload that could not be read names nothing: a forged one sent with a parse
        // error beside it would otherwise have its session, task and cwd recorded with the
        // on_error rule's answer, and that answer cover a real completion there.
        let payload = if asked.parse_error.is_some() { &serde_json::Value::Null } else { &asked.payload };
        let mut question = Question {
            installed_reviewers: asked.installed_reviewers.clone(),
            ..Question::from_payload(asked.host, payload)
        };
        // The cwd resolved once (links, `..`), as a completion's is when it is matched to
        // the answer: the settings, the decision's key and its record are of the directory
        // it names, however it is spelled.
        if let Some(cwd) = &question.cwd {
            question.cwd = Some(caller.directory("`cwd`", cwd)?);
        }
        match self.settle(&question, asked, started)? {
            Settlement::NotGated => Ok(GateAnswer::Now(HookAnswer {
                decision: Decision::Allow,
                message: String::new(),
                gated: false,
                from_record: false,
                ask_again: false,
            })),
            Settlement::Decided(decided) => Ok(GateAnswer::Now(self.record(&question, decided, started)?)),
            Settlement::Jury(pending, run) => Ok(GateAnswer::Jury(pending, Box::new(run))),
        }
    }

    /// Decide a question that waited for the jury, on its verdict.
    pub fn finish(&mut self, pending: PendingDecision, panel: &JuryConvened) -> Result<HookAnswer, StoreError> {
        let (verdict, reason) = policy::decide_with_jury(&pending.question.label, panel);
        let decided = Decided {
            verdict,
            settings: pending.settings,
            reason,
            key: Some(pending.key),
            from_record: false,
            panel: Some(panel.key.clone()),
            evidence_id: None,
        };
        self.record(&pending.question, decided, pending.started)
    }

    /// Journal a decision; the answer to relay.
    fn record(&mut self, question: &Question, decided: Decided, started: Instant) -> Result<HookAnswer, StoreError> {
        let Decided { mut verdict, settings, reason, key, from_record, panel, evidence_id } = decided;
        let decision = verdict.decision;
        // A recorded block already names its config.
        if verdict.blocks() && !from_record {
            verdict.message.push_str(&settings.config_lines());
        }
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        let record = GateDecision {
            event: question.event.clone(),
            host: question.host,
            teammate: question.teammate.clone(),
            subagent: question.subagent.clone(),
            session_id: question.session_id.clone(),
            cwd: question.cwd.clone(),
            task_id: question.task_id.clone(),
            task_subject: question.task_subject.clone(),
            policy: settings.policy,
            settings_from: settings.sources,
            decision,
            reason: reason.to_owned(),
            message: verdict.message.clone(),
            tree_unchanged: verdict.tree_unchanged,
            latency_ms: (latency_ms * 1000.0).round() / 1000.0,
            key,
            panel,
            evidence_id,
            config: settings.files,
            stop_hook_active: question.stop_hook_active,
        };
        self.store.journal(&JournalEvent::GateDecided(record))?;
        let ask_again = reason == AUTHOR_UNKNOWN;
        Ok(HookAnswer { decision, message: verdict.message, gated: true, from_record, ask_again })
    }

    fn settle(
        &mut self,
        question: &Question,
        asked: &HookQuestion,
        started: Instant,
    ) -> Result<Settlement, StoreError> {
        let settings = match self.config.settings_for(question.cwd.as_deref().map(Path::new), self.projects) {
            Ok(settings) => settings,
            Err(error) => {
                // Only a project's file fails here (the user's keeps its last good version),
                // and the agent can write that one: it blocks, whatever `on_error` says.
                let why = format!(
                    "the gate's config cannot be used: {}; fix that file (a fix takes effect at the next decision)",
                    error.summary()
                );
                let mut settings = self.config.settings_without_project_file(question.cwd.as_deref().map(Path::new));
                settings.on_error = crate::config::OnError::Block;
                return Ok(Settlement::failure(settings, &why, "config error"));
            }
        };
        if let Some(error) = &asked.parse_error {
            return Ok(Settlement::failure(settings, error, "unparseable payload"));
        }
        if !asked.payload.is_object() {
            return Ok(Settlement::failure(settings, "hook payload is not a JSON object", "unparseable payload"));
        }
        let event = match &question.event {
            EventName::Sent(event) => *event,
            EventName::Unknown(name) => {
                let why = format!("unknown hook event `{name}`");
                return Ok(Settlement::failure(settings, &why, "unknown event"));
            }
        };
        if !settings.decides(question.host, event) {
            return Ok(Settlement::NotGated);
        }
        // What the answer rests on is the tree as it is: read it again rather than from the
        // watcher's last status, which a write it cannot hear (through a hard link from
        // outside the repository) leaves as it was.
        if (settings.require_reviewed_tree || settings.asks_the_jury())
            && let Some(cwd) = &question.cwd
        {
            self.trees.read_again(Path::new(cwd));
        }
        let key = self.decision_key(question, &settings)?;
        let decided =
            |ruled, settings, panel, evidence_id| Settlement::decided(ruled, settings, &key, panel, evidence_id);
        // Decided afresh, never answered from a record: what decides at once is as cheap to
        // decide again, and a skip must stay a skip on the record (the bypass accounting
        // tells a skip's answer from a review's).
        if let Some(at_once) = policy::decide_at_once(question, &settings) {
            return Ok(decided(at_once, settings, None, None));
        }
        if let Some(recorded) = self.store.journal_find::<GateDecision>(Lookup::DecisionByKey, &key)?
            && worth_keeping(self.store, &recorded)?
        {
            let verdict = Ruling {
                decision: recorded.decision,
                message: recorded.message,
                tree_unchanged: recorded.tree_unchanged,
            };
            let reason = "answered from the recorded decision";
            let decided = Decided {
                verdict,
                settings,
                reason,
                key: Some(key),
                from_record: true,
                panel: recorded.panel,
                evidence_id: recorded.evidence_id,
            };
            return Ok(Settlement::Decided(decided));
        }
        if settings.uses_evidence() {
            let (evidence, passed_over) = self.fresh_positive_evidence(question, &settings)?;
            if let Some(evidence) = evidence {
                let change = settings.require_reviewed_tree.then(|| tree_change(self.trees, question, &evidence));
                let (verdict, reason) = policy::decide_with_evidence(question, &evidence, change);
                let rested_on = (!verdict.blocks()).then_some(evidence.evidence_id);
                return Ok(decided((verdict, reason), settings, None, rested_on));
            }
            if !settings.asks_the_jury() {
                let without = policy::decide_without_evidence(question, &settings, &passed_over);
                return Ok(decided(without, settings, None, None));
            }
        }
        self.settle_by_jury(question, settings, key, started)
    }

    /// What only the jury can decide: on the work as it is now, told who wrote it; a
    /// verdict already given on the same work and tree is reused.
    fn settle_by_jury(
        &mut self,
        question: &Question,
        settings: Settings,
        key: String,
        started: Instant,
    ) -> Result<Settlement, StoreError> {
        let decided = |ruled, settings, panel| Settlement::decided(ruled, settings, &key, panel, None);
        let project = PathBuf::from(question.cwd.as_deref().map_or_else(|| ".".into(), files::resolve));
        let (jury, from) = match self.juries.jury_for(&project) {
            Ok(found) => found,
            Err(error) => return Ok(Settlement::failure(settings, &error.to_string(), "jury not available")),
        };
        // A jury seated without knowing the author may seat the author's own family: it
        // cross-examines nothing then, so the gate does not ask one.
        let Some(author_model) = self.author_model(question.session_id.as_ref())? else {
            let message = format!(
                "judged: {} cannot be marked done yet: judged does not know which model wrote this work (this \
                 session's log is not one judged witnesses, or names no model yet), so it cannot seat a jury of \
                 other families. See that judged watches this host's logs (`judged doctor`), then complete again.",
                question.label
            );
            let ruling = Ruling { decision: Decision::Block, message, tree_unchanged: None };
            return Ok(decided((ruling, AUTHOR_UNKNOWN), settings, None));
        };
        let ask = JuryAsk {
            rubric: &settings.panel_rubric,
            rubric_text: None,
            persona: None,
            project: project.clone(),
            author_model: Some(author_model),
            source: AskedBy::Gate,
        };
        // Besides the changes from HEAD, the jury is shown what was committed since the
        // commit the session began on, when judged saw it begin in this project: work the
        // agent committed is its work too, and a jury shown only what was left uncommitted
        // passed a commit of anything.
        let since = self.session_began_on(question, &project)?;
        // The artifact is the task and the tree's changes, so the task, the tree's digest
        // and where the changes start name it: a verdict on them is found without building
        // it. Outside a repository nothing names it but the artifact itself.
        let work_of_tree = |tree: &str| {
            digest_of(&serde_json::json!([question.label, question.work, tree, since.as_ref().map(|s| s.commit())]))
        };
        let (panel_key, asked) = match self.trees.digest(&project) {
            Some(tree) => (ask.key(&jury, &work_of_tree(&tree)), Asked::Tree(tree)),
            None => {
                let changes = self.trees.changes_text(&project, PANEL_CHANGES_BYTES);
                let built = policy::jury_artifact(&question.label, &question.work, changes.as_ref());
                (ask.key(&jury, &digest_of(&built)), Asked::Built(built))
            }
        };
        if let Some(reused) = jury::reusable(self.store, &panel_key)? {
            let (verdict, _) = policy::decide_with_jury(&question.label, &reused);
            return Ok(decided((verdict, "reused jury verdict"), settings, Some(reused.key)));
        }
        // A review asked ahead (`judged mcp`) of this tree, as this gate would ask it: one
        // shown the changes from HEAD alone, so only where the session began on HEAD.
        let began_on_head = since.as_ref().is_none_or(|since| self.trees.base(&project).as_ref() == Some(since));
        if let Asked::Tree(tree) = &asked
            && began_on_head
            && let Some(review) = jury::reusable(self.store, &review::counted_key(&ask, &jury, tree))?
        {
            let (verdict, _) = policy::decide_with_jury(&question.label, &review);
            return Ok(decided((verdict, "review verdict"), settings, Some(review.key)));
        }
        // The changes the jury is shown, and the tree they are of as git names it. A tree
        // that moved while its changes were read: the verdict is keyed by what the jury
        // saw, so that no later question about either tree reuses it, and it covers no git
        // tree.
        let (built, git_tree, moved) = match asked {
            Asked::Built(built) => (built, None, false),
            Asked::Tree(tree) => {
                let shown = self.trees.shown(&project, PANEL_CHANGES_BYTES, &tree, since.as_ref());
                if shown.changes.is_none() {
                    let message = format!(
                        "judged: {} cannot be marked done yet: the changes of {} cannot be read, so no jury can be \
                         shown the work. Check the repository with `git status` and `git log`, then complete again.",
                        question.label,
                        project.display()
                    );
                    let ruling = Ruling { decision: Decision::Block, message, tree_unchanged: None };
                    return Ok(decided((ruling, "changes unreadable"), settings, None));
                }
                let built = policy::jury_artifact(&question.label, &question.work, shown.changes.as_ref());
                (built, shown.git_tree, !shown.held_still)
            }
        };
        let panel_key = if moved { ask.key(&jury, &digest_of(&built)) } else { panel_key };
        let run = match JuryRun::new(&jury, &from, ask, built, panel_key) {
            Ok(run) => run.judging_tree(git_tree),
            Err(error) => return Ok(Settlement::failure(settings, &error.to_string(), "jury not available")),
        };
        let question = question.clone();
        Ok(Settlement::Jury(Box::new(PendingDecision { question, settings, key, started }), run))
    }

    /// The commit the asking session began on in the repository of `project`, as judged
    /// read it when the session's log first named its cwd ([`SessionBegan`]); none for a
    /// session judged did not see begin in that repository (the changes are then from HEAD).
    fn session_began_on(&mut self, question: &Question, project: &Path) -> Result<Option<DiffBase>, StoreError> {
        let Some(session) = &question.session_id else { return Ok(None) };
        let Some(path) = self.store.file_by_session(session.as_str()).map(|file| file.path.clone()) else {
            return Ok(None);
        };
        let Some(began) = self.store.journal_find::<SessionBegan>(Lookup::SessionBeganByLog, &path)? else {
            return Ok(None);
        };
        // Of this repository, wherever in it the session began or asks from (`cd src`).
        let top = self.trees.top(project);
        let same = top.is_some() && self.trees.top(Path::new(&began.cwd)) == top;
        Ok(same.then(|| began.commit.map_or(DiffBase::NoCommit, DiffBase::Commit)))
    }

    /// The model that wrote the session's work, its log caught up first (the jury takes
    /// seconds, this milliseconds); every log is caught up only for a session not seen yet.
    fn author_model(&mut self, session: Option<&SessionId>) -> Result<Option<String>, StoreError> {
        let Some(session) = session else { return Ok(None) };
        match self.store.file_by_session(session.as_str()).map(|file| (PathBuf::from(&file.path), file.host)) {
            Some((path, host)) => self.ingest.catch_up(self.store, &path, host)?,
            None => self.ingest.catch_up_all(self.store)?,
        }
        Ok(author_model(self.store, self.logs, session))
    }

    /// What makes two questions the same: the question and the evidence it could see. Every
    /// part of the question a ruling can turn on is in it: a sub-agent's stop is let
    /// through at once, so an allow recorded for one (which any payload can claim to be)
    /// must never answer the root agent's end of the same task.
    fn decision_key(&mut self, question: &Question, settings: &Settings) -> Result<String, StoreError> {
        let evidence_seen = self.store.journal_last_seq::<EvidenceVerified>()?;
        // A finding or tamper recorded since can undo the evidence an answer rested on.
        let findings_seen = self.store.journal_last_seq::<IntegrityFinding>()?;
        let tampers_seen = self.store.journal_last_seq::<TamperDetected>()?;
        // So can an event of the host's chain still waiting for its parent.
        let chains_waiting = self.ingest.chains_waiting();
        // A recorded answer lives at most one freshness window, so an allow never
        // outlives the evidence it rested on by more than that.
        let window = chrono::Utc::now().timestamp() / settings.freshness_seconds.max(1) as i64;
        // A recorded answer holds only for the tree it saw, when the gate looks at trees
        // (the reviewed tree, or the jury's artifact, which shows the tree's changes).
        let tree = (settings.require_reviewed_tree || settings.asks_the_jury())
            .then(|| question.cwd.as_deref().and_then(|cwd| self.trees.digest(Path::new(cwd))))
            .flatten();
        let material = serde_json::json!([
            question.event,
            question.host,
            question.subagent,
            question.teammate,
            question.session_id,
            question.cwd,
            question.task_id,
            question.work,
            settings.policy_name(),
            settings.panel_rubric,
            settings.evidence_assurance,
            settings.freshness_seconds,
            // A decision made under another version of the config is never reused.
            settings.files,
            evidence_seen,
            findings_seen,
            tampers_seen,
            chains_waiting,
            window,
            tree
        ]);
        Ok(digest_of(&material))
    }

    /// The newest verified, positive, fresh evidence of this project (its cwd), of the
    /// assurance the settings ask, of a review of work by the asking session's own family,
    /// whose log is still what the daemon witnessed (checked now, for that log only); and
    /// what such evidence was passed over, for the block's message.
    fn fresh_positive_evidence(
        &mut self,
        question: &Question,
        settings: &Settings,
    ) -> Result<(Option<EvidenceVerified>, PassedOver), StoreError> {
        let mut passed_over = PassedOver::default();
        let oldest = settings.fresh_since(chrono::Utc::now());
        let cwd = question.cwd.as_deref().map(files::resolve);
        // The work is the asking session's agent's: a review of another session's work (a
        // round run in a session of another model) reviewed no work of this one, and a
        // reviewer of that other session's family may be of this one's.
        let author = self.author_model(question.session_id.as_ref())?;
        let author_family = author.as_deref().and_then(|model| family::family(model, family::Table::Evidence));
        for skip in 0.. {
            let mut found = None;
            let mut seen = 0;
            self.store.journal_newest_first(|_, at, evidence: EvidenceVerified| {
                // Verified after the review ended, so nothing older can be fresh.
                if judged_core::timestamp::parse(at).is_none_or(|t| t < oldest) {
                    return false;
                }
                // Fresh means the review itself is recent, as the host recorded its end:
                // verifying an old review again does not renew it (issue 10).
                let reviewed = evidence.reviewed_at.as_deref().and_then(judged_core::timestamp::parse);
                let positive = reviewed.is_some_and(|t| t >= oldest)
                    && evidence.status == judged_core::rules::EvidenceStatus::Verified
                    && evidence.score.zip(evidence.verdict.as_deref()).is_some_and(|(s, v)| is_positive(s, v));
                // Of this project: a review covers the work of the directory it was run
                // in, whichever session asks (a question naming another project's session
                // is not answered with that project's review).
                let bound = cwd.is_some() && evidence.cwd.as_deref().map(files::resolve) == cwd;
                let authored = author_family.is_some() && evidence.executor_family.as_deref() == author_family;
                if positive && bound && !authored {
                    passed_over
                        .of_another_author
                        .get_or_insert_with(|| evidence.executor_model.clone().unwrap_or_default());
                } else if positive && bound && evidence.identity_assurance < settings.evidence_assurance {
                    passed_over.declared = true;
                } else if positive && bound {
                    if seen == skip {
                        found = Some(evidence);
                        return false;
                    }
                    seen += 1;
                }
                true
            })?;
            let Some(evidence) = found else { break };
            if self.evidence_stands(&evidence)? {
                return Ok((Some(evidence), passed_over));
            }
        }
        passed_over.author_known = author.is_some();
        Ok((None, passed_over))
    }

    /// Whether the log `evidence` rests on is still what was verified (caught up and
    /// checked now, for that log only): not rewritten, not pruned (pruned bytes are no
    /// record to allow on: `validate` refuses such evidence too), no event of its host's
    /// chain waiting in the reviewed window, no finding that undoes it.
    fn evidence_stands(&mut self, evidence: &EvidenceVerified) -> Result<bool, StoreError> {
        self.ingest.catch_up(self.store, Path::new(&evidence.session_events), evidence.host)?;
        let Some(file) = self.store.file_by_path(&evidence.session_events) else { return Ok(false) };
        let waiting = self.ingest.chain_waits_from(file.id).is_some_and(|offset| offset >= evidence.window_start);
        Ok(!file.tampered
            && file.pruned == 0
            && !waiting
            && integrity::undoing_finding(self.store, file, evidence.window_start)?.is_none())
    }
}

/// The reason of a block for work whose author judged does not know yet.
const AUTHOR_UNKNOWN: &str = "author unknown";

/// Whether a recorded decision may answer the same question again: an allow, or a verdict
/// of a healthy jury (pass or fail), which cost minutes and would come out the same. A
/// block that came from outside the work (no evidence yet, a jury that was down, the
/// config, a payload) is asked again, so that fixing its cause undoes it.
fn worth_keeping(store: &Store, recorded: &GateDecision) -> Result<bool, StoreError> {
    if recorded.decision == Decision::Allow {
        return Ok(true);
    }
    match &recorded.panel {
        Some(key) => Ok(jury::reusable(store, key)?.is_some()),
        None => Ok(false),
    }
}

/// What a gate's jury is asked about: a repository's tree, whose changes are read when the
/// jury is convened, or, outside one, the artifact already built.
enum Asked {
    Tree(String),
    Built(String),
}

/// The SHA-256 of a text, or of a value's JSON, in hex.
fn digest_of(material: &impl ToString) -> String {
    judged_core::chain::to_hex(&judged_core::chain::sha256(material.to_string().as_bytes()))
}

/// The round's own files (its challenge, evidence and response) that still hold, byte for
/// byte, what was written there: those stay out of the tree compared with the reviewed
/// one. A path named as written that holds anything else is part of the work, so that
/// naming a file of the work as a "write" keeps no change of it out of sight.
fn still_written(evidence: &EvidenceVerified) -> Vec<PathBuf> {
    /// Larger than any evidence or response judged writes.
    const MAX_ARTIFACT_BYTES: u64 = 16 << 20;
    let written = [&evidence.response_sha256, &evidence.evidence_sha256, &evidence.challenge_sha256];
    let holds_what_was_written = |path: &PathBuf| {
        let Ok((_, bytes)) = files::read_not_following(path, MAX_ARTIFACT_BYTES) else { return false };
        let digest = judged_core::chain::to_hex(&judged_core::chain::sha256(&bytes));
        written.iter().any(|sha256| sha256.as_deref() == Some(digest.as_str()))
    };
    evidence.tree_excluded.iter().filter(|path| holds_what_was_written(path)).cloned().collect()
}

/// How the working tree moved since `evidence`'s review.
fn tree_change(trees: &mut TreeWatch, question: &Question, evidence: &EvidenceVerified) -> TreeChange {
    let cwd = question.cwd.as_deref().map(Path::new);
    let excluded = still_written(evidence);
    // A tree judged cannot read is no tree the review saw: a repository whose read failed
    // is not taken for no repository.
    let in_repository = cwd.is_some_and(|cwd| cwd.ancestors().any(|d| d.join(".git").exists()));
    if trees.reader() != Reader::Owner {
        // A witness keeps no status of a served user's tree: the git tree id tells.
        return match (&evidence.git_tree, cwd.and_then(|cwd| trees.git_tree_id(cwd, &excluded))) {
            (Some(reviewed), Some(now)) if *reviewed == now => TreeChange::Unchanged,
            (reviewed, Some(now)) => TreeChange::OtherTree { reviewed: reviewed.clone(), now },
            (None, None) if !in_repository => TreeChange::Unchanged,
            (_, None) => TreeChange::Unreadable,
        };
    }
    let now = cwd.and_then(|cwd| trees.tree(cwd, &excluded));
    if now.is_none() && in_repository {
        return TreeChange::Unreadable;
    }
    let (head_moved, paths) = match (&evidence.tree, &now) {
        (Some(reviewed), Some(now)) => reviewed.changes_since(now),
        (None, None) => (false, Vec::new()),
        _ => (true, Vec::new()),
    };
    if !head_moved && paths.is_empty() { TreeChange::Unchanged } else { TreeChange::Changed { head_moved, paths } }
}

/// Every recorded gate decision, oldest first.
pub fn decisions(store: &Store) -> Result<Vec<DecisionRecord>, StoreError> {
    Ok(store
        .journal_of_kind::<GateDecision>()?
        .into_iter()
        .map(|(seq, at, decision)| DecisionRecord { seq, at, decision })
        .collect())
}
