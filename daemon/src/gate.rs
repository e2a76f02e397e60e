//! The review gate a hook asks: may this task (or turn) be marked done?
//!
//! Policy comes from the user's config (`[gate]` in config.toml, with per-project
//! `[[gate.projects]]` entries) and the project's own `.judged.toml`, nearest wins. Every
//! decision on a gated event is a journal event; a repeated question with unchanged
//! inputs is answered from that record.

use crate::engine::Engine;
use crate::store::{FileState, JournalLookup, StoreError};
use judged_core::event::Host;
use judged_core::files;
use judged_core::worktree::Tree;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    Off,
    Evidence,
    Panel,
    EvidenceOrPanel,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OnError {
    Block,
    Allow,
}

impl Policy {
    /// The name as written in the config.
    pub fn as_str(self) -> &'static str {
        match self {
            Policy::Off => "off",
            Policy::Evidence => "evidence",
            Policy::Panel => "panel",
            Policy::EvidenceOrPanel => "evidence_or_panel",
        }
    }
}

impl OnError {
    pub fn as_str(self) -> &'static str {
        match self {
            OnError::Block => "block",
            OnError::Allow => "allow",
        }
    }
}

/// One layer of gate settings; unset fields fall through to the layer below.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct GateLayer {
    pub policy: Option<Policy>,
    pub freshness_seconds: Option<u64>,
    pub min_task_chars: Option<usize>,
    pub on_error: Option<OnError>,
    /// Allow only while the working tree is the one the review saw (off by default).
    pub require_reviewed_tree: Option<bool>,
    pub events: Option<Vec<String>>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct ProjectLayer {
    pub path: PathBuf,
    #[serde(flatten)]
    pub layer: GateLayer,
}

/// `[gate]` of the user's config.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct GateConfig {
    #[serde(flatten)]
    pub base: GateLayer,
    #[serde(default)]
    pub projects: Vec<ProjectLayer>,
    /// Whether a repository's own `.judged.toml` is read (default true). An agent can
    /// write its repository, so a user who does not trust it to set its own gate turns
    /// this off and keeps per-project policy in `[[gate.projects]]`.
    pub trust_project_files: Option<bool>,
}

/// `.judged.toml` in a project.
#[derive(Debug, Default, Deserialize)]
struct ProjectFile {
    #[serde(default)]
    gate: GateLayer,
}

/// The settings in force for one decision, and where they came from.
#[derive(Clone, Debug)]
pub struct Settings {
    pub policy: Policy,
    pub freshness_seconds: u64,
    pub min_task_chars: usize,
    pub on_error: OnError,
    pub require_reviewed_tree: bool,
    pub events: Vec<String>,
    pub sources: Vec<String>,
}

impl Settings {
    fn overlay(&mut self, layer: &GateLayer, source: String) {
        let before = self.compared();
        self.policy = layer.policy.unwrap_or(self.policy);
        self.freshness_seconds = layer.freshness_seconds.unwrap_or(self.freshness_seconds);
        self.min_task_chars = layer.min_task_chars.unwrap_or(self.min_task_chars);
        self.require_reviewed_tree = layer.require_reviewed_tree.unwrap_or(self.require_reviewed_tree);
        self.on_error = layer.on_error.unwrap_or(self.on_error);
        self.events = layer.events.clone().unwrap_or_else(|| self.events.clone());
        if before != self.compared() {
            self.sources.push(source);
        }
    }

    /// Everything a layer can set, to tell whether it set anything.
    fn compared(&self) -> (Policy, u64, usize, OnError, bool, Vec<String>) {
        let s = self;
        (s.policy, s.freshness_seconds, s.min_task_chars, s.on_error, s.require_reviewed_tree, s.events.clone())
    }
}

impl GateConfig {
    /// Settings for a hook fired in `cwd`: defaults, then the user's `[gate]`, then the
    /// longest matching `[[gate.projects]]`, then the nearest `.judged.toml`.
    pub fn settings_for(&self, cwd: Option<&Path>) -> Result<Settings, String> {
        let mut settings = Settings {
            policy: Policy::Evidence,
            freshness_seconds: 3600,
            min_task_chars: 0,
            require_reviewed_tree: false,
            on_error: OnError::Block,
            events: vec!["TaskCompleted".into(), "agentStop".into()],
            sources: vec!["defaults".into()],
        };
        settings.overlay(&self.base, "user config [gate]".into());
        let Some(cwd) = cwd else { return Ok(settings) };
        if let Some(project) =
            self.projects.iter().filter(|p| cwd.starts_with(&p.path)).max_by_key(|p| p.path.as_os_str().len())
        {
            settings.overlay(&project.layer, format!("user config [[gate.projects]] {}", project.path.display()));
        }
        let project_file = || cwd.ancestors().map(|d| d.join(".judged.toml")).find(|f| f.is_file());
        if let Some(file) = self.trust_project_files.unwrap_or(true).then(project_file).flatten() {
            let text = std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let project: ProjectFile = toml::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
            settings.overlay(&project.gate, file.display().to_string());
        }
        Ok(settings)
    }
}

/// Hook events the hosts can send (Claude Code 2.1.328's list, Copilot CLI's camelCase names).
const KNOWN_EVENTS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "PreModelSwitch",
    "PostModelSwitch",
    "PermissionRequest",
    "PermissionDenied",
    "Setup",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "DirectoryAdded",
    "MessageDisplay",
    "sessionStart",
    "sessionEnd",
    "userPromptSubmitted",
    "preToolUse",
    "postToolUse",
    "agentStop",
    "subagentStop",
    "subagentStart",
    "preCompact",
    "errorOccurred",
    "notification",
    "permissionRequest",
];

fn text(payload: &Value, key: &str) -> Option<String> {
    payload.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// What the hook is asking about.
struct Question {
    event: String,
    session_id: Option<String>,
    cwd: Option<String>,
    task_id: Option<String>,
    /// Who asked: the host, and the teammate when an agent team's member did.
    host: String,
    teammate: Option<String>,
    /// What would be judged: the task's subject and description, or the final message.
    work: String,
    label: String,
}

impl Question {
    fn from_payload(host: &str, payload: &Value) -> Question {
        let default_event = if host == "copilot-cli" { "agentStop" } else { "" };
        let event = text(payload, "hook_event_name").unwrap_or_else(|| default_event.into());
        let subject = text(payload, "task_subject");
        let work = match &subject {
            Some(subject) => [Some(subject.clone()), text(payload, "task_description")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n"),
            None => text(payload, "last_assistant_message").unwrap_or_default(),
        };
        let label = match &subject {
            Some(subject) => format!("task \"{subject}\""),
            None => format!("this {event}"),
        };
        Question {
            event,
            session_id: text(payload, "session_id").or_else(|| text(payload, "sessionId")),
            cwd: text(payload, "cwd"),
            task_id: text(payload, "task_id"),
            host: host.to_owned(),
            teammate: text(payload, "teammate_name"),
            work,
            label,
        }
    }
}

#[derive(Default)]
pub struct Verdict {
    pub block: bool,
    pub message: String,
    /// Whether the working tree was the one the review saw, when the gate required it.
    pub tree_unchanged: Option<bool>,
}

/// How a hook call was settled.
enum Outcome {
    /// The event is not one the gate covers: allowed, not recorded.
    NotGated,
    Decided {
        verdict: Verdict,
        settings: Settings,
        reason: &'static str,
        key: Option<String>,
        from_record: bool,
    },
}

impl Outcome {
    /// The on_error rule's answer to a question the gate could not judge.
    fn failure(settings: Settings, why: String, reason: &'static str) -> Outcome {
        let verdict = Verdict {
            block: settings.on_error == OnError::Block,
            message: format!("judged: {why}; the gate's on_error rule is `{}`.", settings.on_error.as_str()),
            tree_unchanged: None,
        };
        Outcome::Decided { verdict, settings, reason, key: None, from_record: false }
    }
}

impl Engine {
    /// Decide a hook call and record the decision; the answer the shim relays.
    pub fn hook(&mut self, args: &Value) -> Result<Value, StoreError> {
        let started = Instant::now();
        let host = args.get("host").and_then(Value::as_str).unwrap_or("claude-code");
        let payload = args.get("payload").cloned().unwrap_or(Value::Null);
        let question = Question::from_payload(host, &payload);
        let parse_error = args.get("parse_error").and_then(Value::as_str);
        match self.settle(&question, &payload, parse_error)? {
            Outcome::NotGated => Ok(json!({"decision": "allow", "message": "", "gated": false})),
            Outcome::Decided { verdict, settings, reason, key, from_record } => {
                let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
                self.record(&question, &settings, &verdict, reason, latency_ms, key)?;
                Ok(json!({"decision": if verdict.block { "block" } else { "allow" }, "message": verdict.message,
                    "gated": true, "from_record": from_record}))
            }
        }
    }

    fn settle(
        &mut self,
        question: &Question,
        payload: &Value,
        parse_error: Option<&str>,
    ) -> Result<Outcome, StoreError> {
        let settings = match self.gate.settings_for(question.cwd.as_deref().map(Path::new)) {
            Ok(settings) => settings,
            Err(error) => {
                let settings = self.gate.settings_for(None).expect("no project file is read without a cwd");
                return Ok(Outcome::failure(settings, format!("gate config is invalid: {error}"), "config error"));
            }
        };
        if let Some(error) = parse_error {
            return Ok(Outcome::failure(settings, error.to_owned(), "unparseable payload"));
        }
        if !payload.is_object() {
            return Ok(Outcome::failure(settings, "hook payload is not a JSON object".into(), "unparseable payload"));
        }
        if !KNOWN_EVENTS.contains(&question.event.as_str()) {
            return Ok(Outcome::failure(settings, format!("unknown hook event `{}`", question.event), "unknown event"));
        }
        if !settings.events.contains(&question.event) {
            return Ok(Outcome::NotGated);
        }
        let key = self.decision_key(question, &settings)?;
        if let Some(recorded) = self.ingest.store.journal_find(JournalLookup::GateDecision, &key)? {
            let verdict = Verdict {
                block: recorded["decision"] == "block",
                message: recorded["message"].as_str().unwrap_or_default().to_owned(),
                tree_unchanged: recorded["tree_unchanged"].as_bool(),
            };
            let reason = "answered from the recorded decision";
            return Ok(Outcome::Decided { verdict, settings, reason, key: Some(key), from_record: true });
        }
        let (verdict, reason) = self.judge(question, &settings)?;
        Ok(Outcome::Decided { verdict, settings, reason, key: Some(key), from_record: false })
    }

    /// What makes two questions the same: the question and the evidence it could see.
    fn decision_key(&self, question: &Question, settings: &Settings) -> Result<String, StoreError> {
        let evidence_seen = self.ingest.store.journal_last_seq("evidence_verified")?;
        // A finding or tamper recorded since can undo the evidence an answer rested on.
        let findings_seen = self.ingest.store.journal_last_seq("integrity_finding")?;
        let tampers_seen = self.ingest.store.journal_last_seq("tamper_detected")?;
        // A recorded answer lives at most one freshness window, so an allow never
        // outlives the evidence it rested on by more than that.
        let window = chrono::Utc::now().timestamp() / settings.freshness_seconds.max(1) as i64;
        // A recorded answer holds only for the tree it saw, when the gate looks at trees.
        let tree = (settings.require_reviewed_tree)
            .then(|| question.cwd.as_deref().and_then(|cwd| Tree::of(Path::new(cwd), &[])))
            .flatten()
            .map(|tree| tree.digest());
        let material = json!([
            question.event,
            question.session_id,
            question.cwd,
            question.task_id,
            question.work,
            settings.policy.as_str(),
            settings.freshness_seconds,
            evidence_seen,
            findings_seen,
            tampers_seen,
            window,
            tree
        ]);
        Ok(judged_core::chain::to_hex(&judged_core::chain::sha256(material.to_string().as_bytes())))
    }

    fn judge(&mut self, question: &Question, settings: &Settings) -> Result<(Verdict, &'static str), StoreError> {
        if settings.policy == Policy::Off {
            return Ok((Verdict::default(), "policy off"));
        }
        if question.work.chars().count() < settings.min_task_chars {
            return Ok((Verdict::default(), "skipped: shorter than min_task_chars"));
        }
        let panel_unavailable = || Verdict {
            block: settings.on_error == OnError::Block,
            message: format!(
                "judged: {} cannot be judged: the jury panel is not available in this version of judged, and on_error is `{}`.",
                question.label,
                settings.on_error.as_str()
            ),
            tree_unchanged: None,
        };
        if settings.policy == Policy::Panel {
            return Ok((panel_unavailable(), "panel not available"));
        }
        if let Some(found) = self.fresh_positive_evidence(question, settings)? {
            let message = format!(
                "judged: {} has verified cross-family review {} ({} reviewed {}, {} {}).",
                question.label,
                found["evidence_id"].as_str().unwrap_or("?"),
                found["reviewer_model"].as_str().unwrap_or("?"),
                found["executor_model"].as_str().unwrap_or("?"),
                found["score"],
                found["verdict"].as_str().unwrap_or("?")
            );
            if settings.require_reviewed_tree {
                return Ok(self.reviewed_tree(question, &found, message));
            }
            return Ok((Verdict { block: false, message, tree_unchanged: None }, "fresh positive evidence"));
        }
        let missing = self.missing_evidence_message(question, settings);
        if settings.policy == Policy::EvidenceOrPanel {
            let panel = panel_unavailable();
            return Ok((
                Verdict { block: panel.block, message: format!("{missing}\n{}", panel.message), tree_unchanged: None },
                "no evidence, panel not available",
            ));
        }
        Ok((Verdict { block: true, message: missing, tree_unchanged: None }, "no fresh positive evidence"))
    }

    /// The newest verified, positive, fresh evidence bound to this session or cwd whose
    /// log is still what the daemon witnessed (checked now, for that log only).
    fn fresh_positive_evidence(
        &mut self,
        question: &Question,
        settings: &Settings,
    ) -> Result<Option<Value>, StoreError> {
        let oldest = chrono::Utc::now() - chrono::Duration::seconds(settings.freshness_seconds as i64);
        let cwd = question.cwd.as_deref().map(files::resolve);
        // Newest first, and only until the freshness window ends or a candidate holds:
        // the journal keeps every verification ever made, and a decision must not cost
        // more as it grows. (Should the clock have been set back, older evidence is
        // missed and the gate blocks.) A candidate whose log was rewritten since is
        // skipped, and the scan resumes past it.
        for skip in 0.. {
            let mut found = None;
            let mut seen = 0;
            self.ingest.store.journal_newest_first("evidence_verified", |_, at, body| {
                // Verified after the review ended, so nothing older can be fresh.
                if judged_core::timestamp::parse(at).is_none_or(|t| t < oldest) {
                    return false;
                }
                // Fresh means the review itself is recent, as the host recorded its end:
                // verifying an old review again does not renew it (issue 10).
                let reviewed = body["reviewed_at"].as_str().and_then(judged_core::timestamp::parse);
                let positive = reviewed.is_some_and(|t| t >= oldest)
                    && body["status"] == "verified"
                    && body["score"].as_f64().is_some_and(|s| s >= 6.0)
                    && matches!(body["verdict"].as_str(), Some("ready" | "almost"));
                let bound = (question.session_id.is_some()
                    && body["session_id"].as_str() == question.session_id.as_deref())
                    || (cwd.is_some() && body["cwd"].as_str().map(files::resolve) == cwd);
                if positive && bound {
                    if seen == skip {
                        found = Some(body);
                        return false;
                    }
                    seen += 1;
                }
                true
            })?;
            let Some(evidence) = found else { break };
            let Some(path) = evidence["session_events"].as_str() else { continue };
            let host = evidence["host"].as_str().and_then(Host::parse).unwrap_or(Host::CopilotCli);
            self.ingest.catch_up(Path::new(path), host)?;
            let window_start = evidence["window_start"].as_u64().unwrap_or(0);
            let intact = |file: &&FileState| !file.tampered && self.check_findings(file, window_start).is_ok();
            if self.ingest.store.file_by_path(path).filter(intact).is_some() {
                return Ok(Some(evidence));
            }
        }
        Ok(None)
    }

    /// Allow on `found` only while the working tree is the one its review saw.
    fn reviewed_tree(&self, question: &Question, found: &Value, allowed: String) -> (Verdict, &'static str) {
        let excluded: Vec<PathBuf> = serde_json::from_value(found["tree_excluded"].clone()).unwrap_or_default();
        let reviewed: Option<Tree> = serde_json::from_value(found["tree"].clone()).unwrap_or(None);
        let now = question.cwd.as_deref().and_then(|cwd| Tree::of(Path::new(cwd), &excluded));
        let (moved, paths) = match (&reviewed, &now) {
            (Some(reviewed), Some(now)) => reviewed.changes_since(now),
            (None, None) => (false, Vec::new()),
            _ => (true, Vec::new()),
        };
        if !moved && paths.is_empty() {
            let verdict = Verdict { block: false, message: allowed, tree_unchanged: Some(true) };
            return (verdict, "fresh positive evidence, tree unchanged");
        }
        let shown: Vec<&str> = paths.iter().take(5).map(String::as_str).collect();
        let more =
            if paths.len() > shown.len() { format!(" and {} more", paths.len() - shown.len()) } else { String::new() };
        let head = if moved { "HEAD moved since the review; " } else { "" };
        let message = format!(
            "judged: {} cannot be marked done yet: the working tree changed since its review ({head}{} file(s) changed: {}{more}).\n\
             The gate requires the reviewed tree (require_reviewed_tree). Review the work as it is now: \
             run a new round (judge-evidence marker, challenge, the rubber-duck review, verify).",
            question.label,
            paths.len(),
            if shown.is_empty() { "-".to_owned() } else { shown.join(", ") },
        );
        (Verdict { block: true, message, tree_unchanged: Some(false) }, "working tree changed since the review")
    }

    fn missing_evidence_message(&self, question: &Question, settings: &Settings) -> String {
        let binding = suggested_binding();
        let cwd = question.cwd.clone().unwrap_or_else(|| ".".into());
        format!(
            "judged: {label} cannot be marked done yet: no verified cross-family review of this work.\n\
             The gate (policy `{policy}`, from {sources}) needs a positive verdict (Score >= 6/10, Verdict ready or almost) \
             from a reviewer of another model family, verified by judge-evidence within the last {minutes} min for session {session} or cwd {cwd}.\n\
             To satisfy it, run these as separate root Bash calls:\n\
             \x20 judge-evidence marker --binding {binding}\n\
             \x20 judge-evidence challenge --output review.challenge.json --binding {binding} --cwd {cwd}\n\
             then run the rubber-duck reviewer (task tool, agent_type rubber-duck) with the line ARIS_REVIEW_NONCE=<nonce from review.challenge.json> alone in its prompt, then:\n\
             \x20 judge-evidence verify --challenge review.challenge.json --output review.evidence.json --response-output review.response.md",
            label = question.label,
            policy = settings.policy.as_str(),
            sources = settings.sources.join(" < "),
            minutes = settings.freshness_seconds / 60,
            session = question.session_id.as_deref().unwrap_or("?"),
        )
    }

    fn record(
        &mut self,
        q: &Question,
        s: &Settings,
        v: &Verdict,
        reason: &str,
        latency_ms: f64,
        key: Option<String>,
    ) -> Result<(), StoreError> {
        let body = json!({
            "event": q.event, "host": q.host, "teammate": q.teammate, "session_id": q.session_id, "cwd": q.cwd, "task_id": q.task_id,
            "policy": s.policy.as_str(), "settings_from": s.sources,
            "decision": if v.block { "block" } else { "allow" }, "reason": reason, "message": v.message,
            "tree_unchanged": v.tree_unchanged,
            "latency_ms": (latency_ms * 1000.0).round() / 1000.0, "key": key,
        });
        self.ingest.store.journal("gate_decided", &body).map(|_| ())
    }

    /// Every recorded gate decision, oldest first.
    pub fn decisions(&self) -> Result<Value, StoreError> {
        let decisions = self.ingest.store.journal_of_kind("gate_decided")?;
        Ok(Value::Array(
            decisions
                .into_iter()
                .map(|(seq, at, mut body)| {
                    body["seq"] = seq.into();
                    body["at"] = at.into();
                    body
                })
                .collect(),
        ))
    }
}

/// A fresh binding in the SKILL's convention: `run_<YYYYMMDD>_<8hex>_r1_review_<8hex>`.
fn suggested_binding() -> String {
    let hex = || format!("{:08x}", rand::random::<u32>());
    format!("run_{}_{}_r1_review_{}", chrono::Utc::now().format("%Y%m%d"), hex(), hex())
}
