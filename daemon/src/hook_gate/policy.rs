//! The review gate's policy, with no I/O but reading a project's `.judged.toml`: the
//! settings and how they layer, what a hook's payload asks, and the decision table.
//!
//! Layers, nearest wins: defaults, the user's `[gate]` in config.toml, the longest
//! matching `[[gate.projects]]` entry, the project's own `.judged.toml`.

use crate::config::{
    ConfigError, GateConfig, GateLayer, LiveConfig, OnError, ProjectFiles, ProjectLayer, ProjectTrust,
};
use crate::store::{EvidenceVerified, JuryConvened};
use judged_core::adapter::{self, EventName, HookEvent};
use judged_core::event::{Host, SessionId};
use judged_core::rules::{IdentityAssurance, ReviewerCli};
use judged_io::config_file;
use judged_io::worktree::ChangesText;
use judged_jury::packet::FinalVerdict;
use judged_protocol::config::{GateEvent, GateTrust};
use judged_protocol::wire_name;
use judged_protocol::{ConfigFileUsed, Decision, GatePolicy};
use judged_protocol::{MAX_NAME_BYTES, MAX_SESSION_BYTES, MAX_TASK_BYTES};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The settings in force for one decision, and where they came from.
#[derive(Clone, Debug)]
pub struct Settings {
    pub policy: GatePolicy,
    pub freshness_seconds: u64,
    pub min_task_chars: usize,
    pub on_error: OnError,
    pub require_reviewed_tree: bool,
    /// The gated hook events: `Event` for every host that sends it, `host:Event` for one
    /// host's only (see [`Settings::decides`]).
    pub events: Vec<GateEvent>,
    pub panel_rubric: String,
    pub evidence_assurance: IdentityAssurance,
    pub sources: Vec<String>,
    /// The config files the settings were read from, each with its version's digest.
    pub files: Vec<ConfigFileUsed>,
    /// Edits of those files that were not applied (they do not parse), each on one line.
    pub not_applied: Vec<String>,
    /// What a project's file said that would loosen the gate, ignored: `key = value in
    /// file`, each on one line.
    pub loosening_ignored: Vec<String>,
}

impl Settings {
    /// The oldest a review may have ended and still count as fresh at `now`. A window
    /// longer than the clock can count back reaches to its beginning (everything is fresh)
    /// instead of overflowing.
    pub fn fresh_since(&self, now: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
        i64::try_from(self.freshness_seconds)
            .ok()
            .and_then(chrono::Duration::try_seconds)
            .and_then(|window| now.checked_sub_signed(window))
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC)
    }

    fn overlay(&mut self, layer: &GateLayer, source: String) {
        let before = self.compared();
        self.policy = layer.policy.unwrap_or(self.policy);
        self.freshness_seconds = layer.freshness_seconds.unwrap_or(self.freshness_seconds);
        self.min_task_chars = layer.min_task_chars.unwrap_or(self.min_task_chars);
        self.require_reviewed_tree = layer.require_reviewed_tree.unwrap_or(self.require_reviewed_tree);
        self.on_error = layer.on_error.unwrap_or(self.on_error);
        self.events = layer.events.clone().unwrap_or_else(|| self.events.clone());
        self.panel_rubric = layer.panel_rubric.clone().unwrap_or_else(|| self.panel_rubric.clone());
        self.evidence_assurance = layer.evidence_assurance.unwrap_or(self.evidence_assurance);
        if before != self.compared() {
            self.sources.push(source);
        }
    }

    /// A project's layer where its file may only make the gate stricter: each value that
    /// would loosen it is ignored and noted, with the file it came from.
    fn tighten(&mut self, layer: &GateLayer, source: String) {
        let before = self.compared();
        let mut ignored: Vec<String> = Vec::new();
        if let Some(policy) = layer.policy {
            // A review where the user asked for none, or one kind where either would do.
            // The two kinds are not ranked: under `evidence` the agent drives its reviewer,
            // under `panel` judged's jury decides (and with no jury configured, the user's
            // `on_error` would decide), so neither stands in for the other.
            let tightens = match (self.policy, policy) {
                (current, asked) if current == asked => true,
                (GatePolicy::Off, _) => true,
                (GatePolicy::EvidenceOrPanel, GatePolicy::Evidence | GatePolicy::Panel) => true,
                _ => false,
            };
            match tightens {
                true => self.policy = policy,
                false => ignored.push(format!("policy = \"{}\"", wire_name(&policy))),
            }
        }
        if let Some(seconds) = layer.freshness_seconds {
            match seconds <= self.freshness_seconds {
                true => self.freshness_seconds = seconds,
                false => ignored.push(format!("freshness_seconds = {seconds}")),
            }
        }
        if let Some(chars) = layer.min_task_chars {
            match chars <= self.min_task_chars {
                true => self.min_task_chars = chars,
                false => ignored.push(format!("min_task_chars = {chars}")),
            }
        }
        if let Some(required) = layer.require_reviewed_tree {
            match required || !self.require_reviewed_tree {
                true => self.require_reviewed_tree = required,
                false => ignored.push("require_reviewed_tree = false".into()),
            }
        }
        if let Some(on_error) = layer.on_error {
            match on_error == OnError::Block || self.on_error == on_error {
                true => self.on_error = on_error,
                false => ignored.push(format!("on_error = \"{}\"", on_error.as_str())),
            }
        }
        if let Some(events) = &layer.events {
            let dropped: Vec<String> =
                self.events.iter().filter(|e| !events.contains(e)).map(ToString::to_string).collect();
            let added: Vec<GateEvent> = events.iter().filter(|e| !self.events.contains(e)).cloned().collect();
            self.events.extend(added);
            if !dropped.is_empty() {
                ignored.push(format!("events without {}", dropped.join(", ")));
            }
        }
        if let Some(rubric) = layer.panel_rubric.as_ref().filter(|r| **r != self.panel_rubric) {
            // Another rubric is another meaning of "pass", not a stricter one.
            ignored.push(format!("panel_rubric = \"{rubric}\""));
        }
        if let Some(assurance) = layer.evidence_assurance {
            match assurance >= self.evidence_assurance {
                true => self.evidence_assurance = assurance,
                false => ignored.push(format!("evidence_assurance = \"{}\"", assurance.as_str())),
            }
        }
        self.loosening_ignored.extend(ignored.into_iter().map(|key| format!("{key} in {source}")));
        if before != self.compared() {
            self.sources.push(source);
        }
    }

    /// Everything a layer can set, to tell whether it set anything.
    fn compared(&self) -> (GatePolicy, u64, usize, OnError, bool, Vec<GateEvent>, String, IdentityAssurance) {
        let s = self;
        let events = s.events.clone();
        (
            s.policy,
            s.freshness_seconds,
            s.min_task_chars,
            s.on_error,
            s.require_reviewed_tree,
            events,
            s.panel_rubric.clone(),
            s.evidence_assurance,
        )
    }

    /// Whether the gate decides `event` from `host`. `Stop` is both Claude Code's and
    /// Codex CLI's, and gated by default only for Codex CLI, where it is the one event
    /// that ends the agent's work (Claude Code's is opt-in, `TaskCompleted` its default):
    /// so an entry names an event for every host, or, as `codex-cli:Stop`, for one.
    pub fn decides(&self, host: Host, event: HookEvent) -> bool {
        self.events.iter().any(|entry| entry.names(host, event))
    }

    /// The events the gate decides, as `[gate] events` spells them, joined by `separator`.
    pub fn events_listed(&self, separator: &str) -> String {
        self.events.iter().map(ToString::to_string).collect::<Vec<_>>().join(separator)
    }

    /// Whether the jury may be asked.
    pub fn asks_the_jury(&self) -> bool {
        matches!(self.policy, GatePolicy::Panel | GatePolicy::EvidenceOrPanel)
    }

    /// Whether verified evidence is looked for.
    pub fn uses_evidence(&self) -> bool {
        matches!(self.policy, GatePolicy::Evidence | GatePolicy::EvidenceOrPanel)
    }

    /// The policy's name as written in the config (serde's, the one spelling).
    pub fn policy_name(&self) -> String {
        wire_name(&self.policy)
    }

    /// The config a decision was made under, for a block message: each file with its
    /// version, and each edit that was not applied.
    pub fn config_lines(&self) -> String {
        let files: Vec<String> = self.files.iter().map(ToString::to_string).collect();
        let mut lines = format!("\nDecided under: {}.", files.join(", "));
        for error in &self.not_applied {
            lines.push_str(&format!(
                "\nNot applied: {error}. The gate keeps the last good version of that file; fix it and the fix \
                 takes effect at the next decision (no restart)."
            ));
        }
        for ignored in &self.loosening_ignored {
            lines.push_str(&format!("\nIgnored: {ignored}. {LOOSENING_IGNORED}"));
        }
        lines
    }
}

/// Why a project's file did not loosen the gate, and how a user lets it.
pub const LOOSENING_IGNORED: &str = "A project's .judged.toml may only make the gate stricter (the agent can write it); \
     to loosen the gate for this project, put it in a [[gate.projects]] entry of config.toml, or set \
     trust_project_files = true in its [gate]";

/// The gate's settings a `[gate]` table gives: the user's alone, or layered with a
/// project's.
pub trait GateSettings {
    /// The settings with no project's layers (for a question without a cwd, or whose
    /// project file cannot be read).
    fn user_settings(&self) -> Settings;
    /// Settings for a hook fired in `cwd`, reading its project file afresh.
    fn settings_for(&self, cwd: &Path, trust: ProjectTrust) -> Result<Settings, ConfigError>;
    /// Settings for a hook fired in `cwd`: the user's, then the longest matching
    /// `[[gate.projects]]`, then the nearest `.judged.toml` where `trust` lets it count
    /// (through `projects`, which keeps the last good version of each).
    fn settings_with(
        &self,
        cwd: &Path,
        projects: &mut ProjectFiles,
        trust: ProjectTrust,
    ) -> Result<Settings, ConfigError>;
}

/// The `[gate] events` entry for where `host`'s agent declares its work done, named with the
/// host when another host's event has that name.
fn end_event(host: Host) -> GateEvent {
    let end = adapter::hooks(host).end_event();
    if end.name_shared { GateEvent::of(host, end.name) } else { GateEvent::every(end.name) }
}

impl GateSettings for GateConfig {
    fn user_settings(&self) -> Settings {
        let mut settings = Settings {
            policy: GatePolicy::Evidence,
            freshness_seconds: 3600,
            min_task_chars: 0,
            require_reviewed_tree: false,
            on_error: OnError::Block,
            // Where each host's agent declares its work done, of the hosts a hook can stop.
            events: adapter::gated_hosts().map(end_event).collect(),
            panel_rubric: "spec-coherence".into(),
            evidence_assurance: IdentityAssurance::HostRecorded,
            sources: vec!["defaults".into()],
            files: Vec::new(),
            not_applied: Vec::new(),
            loosening_ignored: Vec::new(),
        };
        settings.overlay(&self.layer(), "user config [gate]".into());
        settings
    }

    fn settings_for(&self, cwd: &Path, trust: ProjectTrust) -> Result<Settings, ConfigError> {
        self.settings_with(cwd, &mut ProjectFiles::default(), trust)
    }

    fn settings_with(
        &self,
        cwd: &Path,
        projects: &mut ProjectFiles,
        trust: ProjectTrust,
    ) -> Result<Settings, ConfigError> {
        let mut settings = self.user_settings();
        // Both sides with their links resolved (`cwd` is, by the gate's caller): a project
        // entry is a directory, whatever path names it, and a cwd spelled `off/../armed` is
        // in `armed`.
        let resolved = |p: &ProjectLayer| PathBuf::from(judged_io::files::resolve(&p.path.to_string_lossy()));
        let within = self.projects.iter().map(|p| (resolved(p), p)).filter(|(path, _)| cwd.starts_with(path));
        if let Some((_, project)) = within.max_by_key(|(path, _)| path.as_os_str().len()) {
            settings.overlay(&project.layer(), format!("user config [[gate.projects]] {}", project.path.display()));
        }
        if let Some(file) = (trust.gate != GateTrust::Ignored).then(|| config_file::project_file(cwd)).flatten() {
            let project = projects.gate(&file)?;
            match trust.gate {
                GateTrust::Full => settings.overlay(&project.layer, file.display().to_string()),
                _ => settings.tighten(&project.layer, file.display().to_string()),
            }
            settings.files.push(project.used);
            settings.not_applied.extend(project.rejected);
        }
        Ok(settings)
    }
}

impl LiveConfig {
    /// The settings for a question in `cwd` (or with none) under the config in force, with
    /// the user's file first among those it was read from.
    pub fn settings_for(&self, cwd: Option<&Path>, projects: &mut ProjectFiles) -> Result<Settings, ConfigError> {
        let gate = &self.current().file.gate;
        let mut settings = match cwd {
            Some(cwd) => gate.settings_with(cwd, projects, self.project_trust())?,
            None => gate.user_settings(),
        };
        self.name_user_file(&mut settings);
        Ok(settings)
    }

    /// The settings for a question in `cwd` whose project file cannot be used: the user's,
    /// with the `[[gate.projects]]` entry for `cwd`.
    pub fn settings_without_project_file(&self, cwd: Option<&Path>) -> Settings {
        let ignored = ProjectTrust { gate: GateTrust::Ignored, jury: false };
        let gate = &self.current().file.gate;
        let mut settings = match cwd {
            Some(cwd) => {
                gate.settings_with(cwd, &mut ProjectFiles::default(), ignored).unwrap_or_else(|_| gate.user_settings())
            }
            None => gate.user_settings(),
        };
        self.name_user_file(&mut settings);
        settings
    }

    /// The user's settings alone, for a question with no project.
    pub fn user_settings(&self) -> Settings {
        let mut settings = self.current().file.gate.user_settings();
        self.name_user_file(&mut settings);
        settings
    }

    fn name_user_file(&self, settings: &mut Settings) {
        settings.files.insert(0, self.current().used.clone());
        if let Some(rejected) = self.rejected() {
            settings.not_applied.insert(0, rejected.error.clone());
        }
    }
}

fn text(payload: &Value, key: &str) -> Option<String> {
    payload.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// `key`'s text, cut to `max` bytes at a character's end: what the decision journals of a
/// payload, which a served user writes as it likes.
fn bounded(payload: &Value, key: &str, max: usize) -> Option<String> {
    let mut text = text(payload, key)?;
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    Some(text)
}

/// What the hook is asking about.
#[derive(Clone)]
pub struct Question {
    pub event: EventName,
    pub session_id: Option<SessionId>,
    pub cwd: Option<String>,
    pub task_id: Option<String>,
    /// Who asked: the host, and the teammate when an agent team's member did.
    pub host: Host,
    pub teammate: Option<String>,
    /// The sub-agent whose stop this is, when it is one (Copilot CLI 1.0.102 runs its
    /// `agentStop` hooks for a `task` sub-agent too, naming its `agentType` and the
    /// `parentAgentId`): a reviewer finishing its answer, not the work declared done.
    pub subagent: Option<String>,
    /// What would be judged: the task's subject and description, or the final message.
    pub work: String,
    pub label: String,
    /// The task's subject, for a task event (Claude Code's `task_subject`).
    pub task_subject: Option<String>,
    /// The reviewer CLIs the agent can run, when the asker looked (judge-hook does, on the
    /// agent's `PATH`).
    pub installed_reviewers: Option<Vec<ReviewerCli>>,
    /// The host already went on after a block of this stop (`stop_hook_active`).
    pub stop_hook_active: bool,
}

impl Question {
    /// Read a hook's payload. Copilot CLI's `agentStop` payload names no event.
    pub fn from_payload(host: Host, payload: &Value) -> Question {
        let named = text(payload, "hook_event_name").map(|name| EventName::read(&name));
        let unnamed = adapter::hooks(host).unnamed_event().map(EventName::Sent);
        let event = named.or(unnamed).unwrap_or_else(|| EventName::Unknown(String::new()));
        let subject = bounded(payload, "task_subject", MAX_TASK_BYTES);
        let work = match &subject {
            Some(subject) => [Some(subject.clone()), text(payload, "task_description")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n"),
            // Claude Code's and Codex CLI's stop, Gemini CLI's `AfterAgent`.
            None => {
                text(payload, "last_assistant_message").or_else(|| text(payload, "prompt_response")).unwrap_or_default()
            }
        };
        let label = match &subject {
            Some(subject) => format!("task \"{subject}\""),
            None => format!("this {event}"),
        };
        Question {
            event,
            session_id: bounded(payload, "session_id", MAX_SESSION_BYTES)
                .or_else(|| bounded(payload, "sessionId", MAX_SESSION_BYTES))
                .map(SessionId::from),
            cwd: text(payload, "cwd"),
            task_id: bounded(payload, "task_id", MAX_NAME_BYTES),
            host,
            teammate: bounded(payload, "teammate_name", MAX_NAME_BYTES),
            subagent: text(payload, "parentAgentId")
                .map(|_| bounded(payload, "agentType", MAX_NAME_BYTES).unwrap_or_default()),
            work,
            label,
            task_subject: subject,
            installed_reviewers: None,
            stop_hook_active: payload.get("stop_hook_active").and_then(Value::as_bool).unwrap_or(false),
        }
    }
}

/// The gate's ruling on one question: its decision, and what the host is told.
pub struct Ruling {
    pub decision: Decision,
    pub message: String,
    /// Whether the working tree was the one the review saw, when the gate required it.
    pub tree_unchanged: Option<bool>,
}

impl Ruling {
    /// An allow that says nothing.
    pub fn allow() -> Ruling {
        Ruling { decision: Decision::Allow, message: String::new(), tree_unchanged: None }
    }

    pub fn blocks(&self) -> bool {
        self.decision == Decision::Block
    }

    /// The on_error rule's answer to a question the gate could not judge.
    pub fn failure(settings: &Settings, why: &str) -> Ruling {
        Ruling {
            decision: match settings.on_error {
                OnError::Block => Decision::Block,
                OnError::Allow => Decision::Allow,
            },
            message: format!("judged: {why}; the gate's on_error rule is `{}`.", settings.on_error.as_str()),
            tree_unchanged: None,
        }
    }
}

/// The decision when nothing needs looking up, if there is one: the policy is off, or
/// the work is too short to gate.
pub fn decide_at_once(question: &Question, settings: &Settings) -> Option<(Ruling, &'static str)> {
    if settings.policy == GatePolicy::Off {
        return Some((Ruling::allow(), "policy off"));
    }
    if question.subagent.is_some() {
        // The root agent's own stop is the one that declares the work done; blocking a
        // reviewer sub-agent's would only make it go on answering.
        return Some((Ruling::allow(), "a sub-agent's stop"));
    }
    if settings.skips(&question.work) {
        return Some((Ruling::allow(), SKIPPED_SHORT));
    }
    None
}

/// Why the gate let short work through without a review.
pub const SKIPPED_SHORT: &str = "skipped: shorter than min_task_chars";

impl Settings {
    /// Whether work described by `work` is let through without a review for its shortness.
    /// Only work that says something can be short: a stop whose payload carries no text
    /// (Copilot CLI's `agentStop`) is gated, never skipped for its silence.
    pub fn skips(&self, work: &str) -> bool {
        self.skips_length(work.chars().count())
    }

    /// [`Settings::skips`], for work of `chars` characters.
    pub fn skips_length(&self, chars: usize) -> bool {
        chars > 0 && chars < self.min_task_chars
    }
}

/// The working tree against the one the review saw.
pub enum TreeChange {
    /// As reviewed.
    Unchanged,
    /// What the status tells changed.
    Changed {
        /// HEAD moved (or one of the two is not a repository).
        head_moved: bool,
        /// Paths whose content differs.
        paths: Vec<String>,
    },
    /// Its git tree id is not the reviewed one (a witness account keeps no status of a
    /// served user's tree, only its tree ids); none when the review's was not read.
    OtherTree { reviewed: Option<String>, now: String },
    /// It is in a repository that could not be read now (no git where judged runs, a
    /// read that failed or ran out of time): it cannot be shown to be the one reviewed.
    Unreadable,
}

/// The decision on the newest fresh positive evidence, with the tree's change since its
/// review when the settings require the reviewed tree.
pub fn decide_with_evidence(
    question: &Question,
    evidence: &EvidenceVerified,
    change: Option<TreeChange>,
) -> (Ruling, &'static str) {
    let unknown = || "?".to_owned();
    let message = format!(
        "judged: {} has verified cross-family review {} ({} reviewed {}, {} {}).",
        question.label,
        evidence.evidence_id,
        evidence.reviewer_model.clone().unwrap_or_else(unknown),
        evidence.executor_model.clone().unwrap_or_else(unknown),
        evidence.score.map_or_else(|| "null".to_owned(), |s| serde_json::json!(s).to_string()),
        evidence.verdict.clone().unwrap_or_else(unknown),
    );
    match change {
        None => (Ruling { decision: Decision::Allow, message, tree_unchanged: None }, "fresh positive evidence"),
        Some(TreeChange::Unchanged) => (
            Ruling { decision: Decision::Allow, message, tree_unchanged: Some(true) },
            "fresh positive evidence, tree unchanged",
        ),
        Some(change) => (tree_changed(question, &change), "working tree changed since the review"),
    }
}

/// Positive evidence of the project the gate passed over, and why: what the block says.
#[derive(Debug, Default)]
pub struct PassedOver {
    /// Its reviewer only its caller vouches for.
    pub declared: bool,
    /// It reviewed another agent's work: that agent's model, as the evidence names it.
    pub of_another_author: Option<String>,
    /// Whether judged knows the asking session's model.
    pub author_known: bool,
}

/// The decision when no evidence counts, saying what positive evidence was passed over.
pub fn decide_without_evidence(
    question: &Question,
    settings: &Settings,
    passed_over: &PassedOver,
) -> (Ruling, &'static str) {
    let mut message = missing_evidence_message(question, settings);
    if let Some(other) = &passed_over.of_another_author {
        // The asking session's own model is not repeated: a payload names its session, and
        // a served user could name another user's.
        let this = match passed_over.author_known {
            true => "of another model family than this session's agent",
            false => "and judged does not know this session's model (its log is not one judged witnesses)",
        };
        let _ = write!(
            message,
            "\nA review was verified in this project of the work of `{other}`, {this}: a review counts for the \
             work of the family it reviewed. Run the round (marker, challenge, review, verify) in this session."
        );
    }
    if passed_over.declared {
        message.push_str(
            "\nA review was verified whose reviewer only its caller declared (verify --declared-reviewer-model): \
             this gate counts reviews whose reviewer a host recorded. Run one of those, or accept caller-declared \
             reviews with `evidence_assurance = \"caller-declared\"` in [gate].",
        );
    }
    (Ruling { decision: Decision::Block, message, tree_unchanged: None }, "no fresh positive evidence")
}

/// The decision on the jury's verdict. Only a healthy cross-family pass allows: a degraded
/// or errored jury is no cross-family review, whatever it said.
pub fn decide_with_jury(label: &str, jury: &JuryConvened) -> (Ruling, &'static str) {
    let verdict = wire_name(&jury.final_verdict);
    let block = |message: String| Ruling { decision: Decision::Block, message, tree_unchanged: None };
    if jury.degraded || jury.final_verdict == FinalVerdict::Error {
        let message = format!(
            "judged: {label} cannot be marked done yet: the cross-family jury could not judge it (verdict {verdict}{}).\n{}",
            if jury.degraded { ", degraded" } else { "" },
            jury_down_cause(jury),
        );
        return (block(message), if jury.degraded { "jury degraded" } else { "jury error" });
    }
    if jury.final_verdict == FinalVerdict::Pass {
        let message = format!(
            "judged: {label} passed the cross-family jury ({verdict}, confidence {}, rubric {}).",
            jury.final_confidence, jury.rubric
        );
        return (Ruling { decision: Decision::Allow, message, tree_unchanged: None }, "jury pass");
    }
    let flags: String = jury.flags.iter().map(|f| format!("\n  - {f}")).collect();
    let message = format!(
        "judged: {label} was not passed by the cross-family jury.\nVerdict: {verdict} (confidence {}). Flags:{flags}\n\
         Address the flagged issues, update the work, and complete again.",
        jury.final_confidence
    );
    (block(message), "jury did not pass")
}

/// Why a jury gave no cross-family verdict, and the fix that follows: the tiebreaker that
/// could not be cross-family, each juror that was down with its reason, or the one family
/// that answered.
fn jury_down_cause(panel: &JuryConvened) -> String {
    let packet = format!("`judge-evidence panel --rubric {} --artifact-file F` shows the whole packet", panel.rubric);
    let mut cause = String::new();
    if let Some(why) = &panel.tiebreaker_unavailable {
        cause.push_str(&format!("The jurors disagreed or were not confident, and no tiebreaker could run: {why}.\n"));
    }
    if !panel.down.is_empty() {
        let down: String = panel.down.iter().map(|d| format!("\n  - {d}")).collect();
        cause.push_str(&format!("Down:{down}\nFix the juror(s) named ({packet}), then complete again."));
    } else if panel.tiebreaker_unavailable.is_some() {
        cause.push_str(&format!("Fix the [jury] as said ({packet}), then complete again."));
    } else {
        // Degraded with every juror up and a tiebreaker found: one family answered.
        let banner = panel.flags.last().map_or("fewer than two model families answered", String::as_str);
        cause.push_str(&format!(
            "{banner}\nGive stage_1 jurors of two different model families in [jury] ({packet}), then complete again."
        ));
    }
    cause
}

/// What the jury judges for a gated task: the work as the host described it, and the
/// working tree's changes.
pub fn jury_artifact(label: &str, work: &str, changes: Option<&ChangesText>) -> String {
    let mut artifact = format!("{label}\n\n{work}\n");
    let cut = |bytes: usize| if bytes > 0 { format!(", cut: {bytes} more bytes not shown") } else { String::new() };
    match changes {
        Some(changes) => {
            if let Some(committed) = &changes.committed {
                let since =
                    committed.since.commit().map_or_else(|| "no commit".to_owned(), |id| format!("commit {id}"));
                artifact.push_str(&format!(
                    "\nCommitted in this session (the diff from {since}, where the session began, to HEAD{}):\n{}",
                    cut(committed.cut_bytes),
                    committed.text
                ));
            }
            artifact.push_str(&format!(
                "\nWorking tree changes (the diff against HEAD, then untracked files{}):\n{}",
                cut(changes.cut_bytes),
                changes.text
            ));
        }
        None => artifact.push_str("\n(The project is not a git repository: no changes could be shown.)\n"),
    }
    artifact
}

fn tree_changed(question: &Question, change: &TreeChange) -> Ruling {
    let how = match change {
        TreeChange::Unchanged => "nothing changed".to_owned(),
        TreeChange::Changed { head_moved, paths } => {
            let shown: Vec<&str> = paths.iter().take(5).map(String::as_str).collect();
            let more = if paths.len() > shown.len() {
                format!(" and {} more", paths.len() - shown.len())
            } else {
                String::new()
            };
            let head = if *head_moved { "HEAD moved since the review; " } else { "" };
            let shown = if shown.is_empty() { "-".to_owned() } else { shown.join(", ") };
            format!("{head}{} file(s) changed: {shown}{more}", paths.len())
        }
        TreeChange::OtherTree { reviewed, now } => {
            let reviewed = reviewed.as_deref().unwrap_or("none judged could read");
            format!("its git tree is {now} now, the review saw {reviewed}")
        }
        TreeChange::Unreadable => {
            "judged cannot read it now (is git on the PATH judged runs with? `judged doctor` says), so it \
             cannot be shown to be the one reviewed"
                .to_owned()
        }
    };
    let message = format!(
        "judged: {} cannot be marked done yet: the working tree changed since its review ({how}).\n\
         The gate requires the reviewed tree (require_reviewed_tree). Review the work as it is now: \
         run a new round (judge-evidence marker, challenge, {}, verify).",
        question.label,
        reviewer_for(question),
    );
    Ruling { decision: Decision::Block, message, tree_unchanged: Some(false) }
}

fn missing_evidence_message(question: &Question, settings: &Settings) -> String {
    let binding = suggested_binding();
    let cwd = question.cwd.clone().unwrap_or_else(|| ".".into());
    let needs = format!(
        "judged: {label} cannot be marked done yet: no verified cross-family review of this work.\n\
         The gate (policy `{policy}`, from {sources}) needs a positive verdict (Score >= 6/10, Verdict ready or almost) \
         from a reviewer of another model family, verified by judge-evidence within the last {minutes} min in this project ({cwd}).",
        label = question.label,
        policy = settings.policy_name(),
        sources = settings.sources.join(" < "),
        minutes = settings.freshness_seconds / 60,
    );
    format!("{needs}\n{}", review_steps(question, &binding, &cwd))
}

/// The review round that satisfies the gate, as the agent of `question`'s host runs it.
fn review_steps(question: &Question, binding: &str, cwd: &str) -> String {
    format!(
        "To satisfy it, run these as separate root {tool} calls:\n\
         \x20 judge-evidence marker --binding {binding}\n\
         \x20 judge-evidence challenge --output review.challenge.json --binding {binding} --cwd {cwd}\n\
         then run {reviewer} with the line ARIS_REVIEW_NONCE=<nonce from review.challenge.json> alone in its prompt, then:\n\
         \x20 judge-evidence verify --challenge review.challenge.json --output review.evidence.json --response-output review.response.md",
        tool = adapter::hooks(question.host).shell_tool(),
        reviewer = reviewer_for(question),
    )
}

/// The reviewer the agent of `question` runs in a round: the reviewer CLIs of another
/// family that review an agent of its host, those on its `PATH` when the hook looked.
fn reviewer_for(question: &Question) -> String {
    let host = question.host;
    let reviewing = ReviewerCli::reviewing(host);
    if reviewing.is_empty() {
        return "the rubber-duck reviewer (task tool, agent_type rubber-duck)".into();
    }
    let installed = question.installed_reviewers.as_deref();
    let here: Vec<(ReviewerCli, &str)> =
        reviewing.iter().copied().filter(|(cli, _)| installed.is_none_or(|i| i.contains(cli))).collect();
    let call = format!("a root {} call", adapter::hooks(host).shell_tool());
    let named = |clis: &[(ReviewerCli, &str)]| clis.iter().map(|(_, run_as)| *run_as).collect::<Vec<_>>().join(" or ");
    if here.is_empty() {
        let programs: Vec<&str> = reviewing.iter().map(|(cli, _)| cli.program()).collect();
        return format!(
            "a reviewer CLI of another family as {call} ({}; none of {} is on the PATH this hook ran with: install one \
             and log it in)",
            named(&reviewing),
            programs.join(", ")
        );
    }
    format!("a reviewer CLI of another family as {call} ({})", named(&here))
}

/// A fresh binding in the SKILL's convention: `run_<YYYYMMDD>_<8hex>_r1_review_<8hex>`.
fn suggested_binding() -> String {
    let hex = || format!("{:08x}", rand::random::<u32>());
    format!("run_{}_{}_r1_review_{}", chrono::Utc::now().format("%Y%m%d"), hex(), hex())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hook event some host sends of that name.
    fn sent(name: &str) -> HookEvent {
        HookEvent::of_any_host(name).unwrap()
    }

    /// A project's layer its user has not said to trust makes the gate stricter and no
    /// looser: each value that would loosen it is ignored and named with its file.
    #[test]
    fn a_project_layer_only_tightens_the_gate_and_names_what_it_could_not_loosen() {
        let layer = |text: &str| -> GateLayer { toml::from_str(text).unwrap() };
        let tightened = |user: &str, project: &str| {
            let user: GateConfig = toml::from_str(user).unwrap();
            let mut settings = user.user_settings();
            settings.tighten(&layer(project), "/p/.judged.toml".into());
            settings
        };
        let strict = tightened(
            "policy = \"evidence_or_panel\"",
            "policy = \"panel\"\nfreshness_seconds = 60\nmin_task_chars = 0\nrequire_reviewed_tree = true\n\
             on_error = \"block\"\nevents = [\"TaskCompleted\", \"agentStop\", \"codex-cli:Stop\", \"AfterAgent\", \
             \"qwen-code:Stop\", \"TaskCreated\"]",
        );
        assert_eq!(strict.policy, GatePolicy::Panel, "one kind of review where either would do");
        assert_eq!((strict.freshness_seconds, strict.require_reviewed_tree), (60, true));
        assert!(strict.decides(Host::ClaudeCode, sent("TaskCreated")) && strict.decides(Host::CodexCli, sent("Stop")));
        assert!(strict.loosening_ignored.is_empty(), "{:?}", strict.loosening_ignored);
        assert_eq!(strict.sources.last().map(String::as_str), Some("/p/.judged.toml"));

        let loose = tightened(
            "min_task_chars = 10\non_error = \"block\"",
            "policy = \"off\"\nfreshness_seconds = 99999\nmin_task_chars = 1000\non_error = \"allow\"\n\
             events = [\"TaskCompleted\"]\npanel_rubric = \"persona-detect\"\nevidence_assurance = \"caller-declared\"",
        );
        let user = GateConfig { min_task_chars: Some(10), ..GateConfig::default() }.user_settings();
        assert_eq!(loose.policy, user.policy);
        assert_eq!((loose.freshness_seconds, loose.min_task_chars), (user.freshness_seconds, 10));
        assert_eq!((loose.on_error, loose.evidence_assurance), (OnError::Block, IdentityAssurance::HostRecorded));
        assert_eq!(loose.events, user.events, "no event the user gates is dropped");
        assert_eq!(loose.panel_rubric, user.panel_rubric);
        assert_eq!(
            loose.loosening_ignored,
            [
                "policy = \"off\"",
                "freshness_seconds = 99999",
                "min_task_chars = 1000",
                "on_error = \"allow\"",
                "events without agentStop, codex-cli:Stop, AfterAgent, qwen-code:Stop",
                "panel_rubric = \"persona-detect\"",
                "evidence_assurance = \"caller-declared\"",
            ]
            .map(|key| format!("{key} in /p/.judged.toml"))
        );
        let either = tightened("policy = \"evidence\"", "policy = \"evidence_or_panel\"");
        assert_eq!(either.policy, GatePolicy::Evidence, "either review where one kind was asked is looser");
        for (user, project) in [("evidence", "panel"), ("panel", "evidence")] {
            let swapped = tightened(&format!("policy = \"{user}\""), &format!("policy = \"{project}\""));
            assert_eq!(wire_name(&swapped.policy), user, "one kind of review does not stand in for the other");
            assert_eq!(swapped.loosening_ignored, [format!("policy = \"{project}\" in /p/.judged.toml")]);
        }
    }

    /// A stop with no text to measure (Copilot CLI's `agentStop` carries none) is gated
    /// whatever `min_task_chars` says; a short task is skipped.
    #[test]
    fn a_stop_with_nothing_to_measure_is_never_skipped_as_short() {
        let settings = Settings { min_task_chars: 10, ..GateConfig::default().user_settings() };
        let silent = Question::from_payload(Host::CopilotCli, &serde_json::json!({"sessionId": "s", "cwd": "/w"}));
        assert!(silent.work.is_empty());
        assert!(decide_at_once(&silent, &settings).is_none(), "a silent stop was skipped");
        let short = Question { work: "Done.".into(), ..question() };
        assert_eq!(decide_at_once(&short, &settings).map(|(_, why)| why), Some("skipped: shorter than min_task_chars"));
    }

    fn question() -> Question {
        let payload = serde_json::json!({
            "hook_event_name": "TaskCompleted", "session_id": "s", "cwd": "/w", "task_subject": "Fix cart rounding",
        });
        Question::from_payload(Host::ClaudeCode, &payload)
    }

    /// A changed tree sends each host's agent round its own reviewer: a Claude Code agent
    /// has no rubber-duck.
    #[test]
    fn a_changed_tree_names_the_reviewer_of_the_agents_host() {
        let change = TreeChange::Changed { head_moved: false, paths: vec!["cart.rs".into()] };
        let claude = tree_changed(&question(), &change).message;
        assert!(claude.contains("challenge, a reviewer CLI of another family as a root Bash call"), "{claude}");
        assert!(!claude.contains("rubber-duck"), "{claude}");
        let copilot = Question { host: Host::CopilotCli, ..question() };
        assert!(tree_changed(&copilot, &change).message.contains("the rubber-duck reviewer"));
    }

    /// `freshness_seconds` is any u64 a config holds: a window past what the clock counts
    /// reaches to its beginning, without a panic on the engine's thread.
    #[test]
    fn a_freshness_window_longer_than_the_clock_reaches_to_its_beginning() {
        let now = chrono::Utc::now();
        let mut settings = GateConfig::default().user_settings();
        assert_eq!(settings.fresh_since(now), now - chrono::Duration::seconds(3600));
        for huge in [100_000_000_000_000_000, u64::MAX] {
            settings.freshness_seconds = huge;
            assert_eq!(settings.fresh_since(now), chrono::DateTime::<chrono::Utc>::MIN_UTC, "{huge}");
        }
    }

    /// A payload's words the decision journals are cut to their bounds, at a character's
    /// end: a served user's megabytes of task subject would stay in the witness's store.
    #[test]
    fn a_payloads_journaled_words_are_bounded() {
        let subject = format!("{}é", "s".repeat(MAX_TASK_BYTES - 1));
        let payload = serde_json::json!({"hook_event_name": "TaskCompleted", "session_id": "i".repeat(1000),
            "task_subject": subject, "teammate_name": "t".repeat(1000), "cwd": "/w"});
        let question = Question::from_payload(Host::ClaudeCode, &payload);
        assert_eq!(question.task_subject.as_deref(), Some(&subject[..MAX_TASK_BYTES - 1]));
        assert_eq!(question.session_id.map(|id| id.as_str().len()), Some(MAX_SESSION_BYTES));
        assert_eq!(question.teammate.map(|t| t.len()), Some(MAX_NAME_BYTES));
    }

    /// Another user's `.judged.toml` above a project (in `/tmp`, say) is none of the
    /// project's: trusted, it would turn the gate off for every project below it, and its
    /// `[jury]` would run commands as the project's owner. Needs root to give the file and
    /// the directory another owner.
    #[test]
    fn a_project_file_of_another_owner_above_the_project_is_not_read() {
        use std::os::unix::fs::chown;
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let above = dir.path().join(".judged.toml");
        std::fs::write(&above, "[gate]\npolicy = \"off\"\n").unwrap();
        let trusted = ProjectTrust { gate: GateTrust::Full, jury: true };
        let policy = || GateConfig::default().settings_for(&project, trusted).unwrap().policy;
        assert_eq!(policy(), GatePolicy::Off, "the owner's own file above the project counts");
        const OTHER: u32 = 65534;
        if let Err(error) = chown(&above, Some(OTHER), None) {
            assert!(std::env::var_os("CI").is_none(), "giving the file another owner needs root: {error}");
            eprintln!("SKIP: a_project_file_of_another_owner_above_the_project_is_not_read: not root ({error})");
            return;
        }
        assert_eq!(policy(), GatePolicy::Evidence, "a file of another owner");
        chown(&above, Some(judged_io::files::current_uid()), None).unwrap();
        chown(dir.path(), Some(OTHER), None).unwrap();
        assert_eq!(policy(), GatePolicy::Evidence, "a file past a directory of another owner");
    }

    #[test]
    fn by_default_each_host_is_gated_where_its_agent_says_it_is_done() {
        let settings = GateConfig::default().user_settings();
        for (host, event) in [
            (Host::ClaudeCode, "TaskCompleted"),
            (Host::CopilotCli, "agentStop"),
            (Host::CodexCli, "Stop"),
            (Host::GeminiCli, "AfterAgent"),
            (Host::QwenCode, "Stop"),
        ] {
            assert!(settings.decides(host, sent(event)), "{host:?} {event}");
        }
        assert!(!settings.decides(Host::ClaudeCode, sent("Stop")), "Claude Code's Stop stays opt-in");
        let shown: Vec<String> = settings.events.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["agentStop", "TaskCompleted", "codex-cli:Stop", "AfterAgent", "qwen-code:Stop"]);
        let mut both = settings.clone();
        both.events = vec![GateEvent::every(sent("TaskCompleted")), GateEvent::every(sent("Stop"))];
        assert!(
            both.decides(Host::ClaudeCode, sent("Stop")) && both.decides(Host::CodexCli, sent("Stop")),
            "a bare name: every host"
        );
        assert!(!both.decides(Host::GeminiCli, sent("AfterAgent")));
    }

    /// A Codex CLI or Gemini CLI agent is told the round it can run: its shell calls, and a
    /// reviewer of another family than its own, run as that host allows.
    #[test]
    fn a_codex_or_gemini_agent_is_told_the_round_with_a_reviewer_of_another_family() {
        let settings = GateConfig::default().user_settings();
        let payload = serde_json::json!({"hook_event_name": "Stop", "session_id": "s", "cwd": "/w"});
        let (verdict, _) = decide_without_evidence(
            &Question::from_payload(Host::CodexCli, &payload),
            &settings,
            &PassedOver::default(),
        );
        let message = verdict.message;
        assert!(message.contains("run these as separate root shell calls:\n  judge-evidence marker --binding run_"));
        assert!(
            message.contains(
                "then run a reviewer CLI of another family as a root shell call (`copilot -p` with a \
                                   model of another family than yours, such as `--model claude-sonnet-4.6` or \
                                   `claude -p` or `gemini -p` or `qwen -p` or `opencode run` with the nonce line \
                                   before the prompt's last line) with the line ARIS_REVIEW_NONCE="
            ),
            "{message}"
        );
        let payload = serde_json::json!({"hook_event_name": "AfterAgent", "session_id": "s", "cwd": "/w"});
        let (verdict, _) = decide_without_evidence(
            &Question::from_payload(Host::GeminiCli, &payload),
            &settings,
            &PassedOver::default(),
        );
        assert!(verdict.message.contains("root shell calls:\n  judge-evidence marker"), "{}", verdict.message);
        assert!(verdict.message.contains("(`codex exec -`, the prompt piped in"), "{}", verdict.message);
        let (verdict, _) = decide_without_evidence(&question(), &settings, &PassedOver::default());
        assert!(verdict.message.contains("run these as separate root Bash calls"), "{}", verdict.message);
    }

    #[test]
    fn a_gemini_after_agent_payload_is_read_as_the_turn_it_ends() {
        let payload = serde_json::json!({
            "session_id": "e74f", "cwd": "/w", "hook_event_name": "AfterAgent", "prompt": "say hi",
            "prompt_response": "Done: the cart rounds half up.", "stop_hook_active": false,
        });
        let question = Question::from_payload(Host::GeminiCli, &payload);
        assert_eq!((question.event.as_str(), question.work.as_str()), ("AfterAgent", "Done: the cart rounds half up."));
        assert_eq!(question.session_id.as_ref().map(SessionId::as_str), Some("e74f"));
    }

    #[test]
    fn a_review_only_its_caller_vouches_for_is_said_in_one_paragraph() {
        let settings = GateConfig::default().user_settings();
        let (verdict, _) =
            decide_without_evidence(&question(), &settings, &PassedOver { declared: true, ..PassedOver::default() });
        let said = "\nA review was verified whose reviewer only its caller declared (verify --declared-reviewer-model): \
                    this gate counts reviews whose reviewer a host recorded. Run one of those, or accept \
                    caller-declared reviews with `evidence_assurance = \"caller-declared\"` in [gate].";
        assert!(verdict.message.ends_with(said), "{}", verdict.message);
        assert!(!verdict.message.contains("   "), "no run of spaces from a broken literal: {}", verdict.message);
    }

    fn panel(tiebreaker_unavailable: Option<&str>, down: &[&str], flags: &[&str]) -> JuryConvened {
        JuryConvened {
            key: "k".into(),
            source: crate::store::AskedBy::Gate,
            rubric: "spec-coherence".into(),
            cwd: "/w".into(),
            artifact_sha256: String::new(),
            final_verdict: FinalVerdict::Error,
            final_confidence: 0,
            degraded: true,
            down: down.iter().map(|d| (*d).to_owned()).collect(),
            tiebreaker_unavailable: tiebreaker_unavailable.map(str::to_owned),
            flags: flags.iter().map(|f| (*f).to_owned()).collect(),
            packet: String::new(),
            author_model: None,
            git_tree: None,
            git_base: None,
        }
    }

    #[test]
    fn a_jury_without_a_cross_family_tiebreaker_is_blocked_with_that_cause_and_its_fix() {
        let why = "no tiebreaker is cross-family against the author (anthropic) and the escalating juror(s) \
                   (openai, google); candidates: big (anthropic); add a juror of a family other than anthropic, \
                   openai and google to `tiebreaker` in [jury]";
        let (verdict, reason) = decide_with_jury(&question().label, &panel(Some(why), &[], &[]));
        assert_eq!(reason, "jury degraded");
        assert!(verdict.message.contains(&format!("no tiebreaker could run: {why}.")), "{}", verdict.message);
        assert!(!verdict.message.contains("none reported"), "{}", verdict.message);
    }

    #[test]
    fn a_jury_with_a_juror_down_names_it_with_its_reason() {
        let (verdict, _) = decide_with_jury(&question().label, &panel(None, &["small-openai: exited 1"], &[]));
        assert!(
            verdict.message.contains("Down:\n  - small-openai: exited 1\nFix the juror(s) named"),
            "{}",
            verdict.message
        );
        let banner = "⚠ CROSS-FAMILY DEGRADED: only openai family returned a verdict";
        let (verdict, _) = decide_with_jury(&question().label, &panel(None, &[], &[banner]));
        assert!(verdict.message.contains(banner) && verdict.message.contains("two different model families"));
    }
}
