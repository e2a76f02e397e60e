//! What the gate needs now for a session and project (`judged mcp`'s `gate_status`): the
//! lookups a decision makes, and the words its block would say, with nothing decided or
//! recorded.

use super::policy::{self, Question, Ruling, Settings};
use super::{AskError, HookGate, review, tree_change};
use crate::caller::Caller;
use crate::jury::{self, JuryAsk};
use crate::store::AskedBy;
use judged_core::adapter;
use judged_core::event::Host;
use judged_protocol::{GatePolicy, GateStatus, GateStatusArgs};
use std::path::{Path, PathBuf};

impl HookGate<'_> {
    /// The gate's settings for `args`, what it would count, and what is missing; a served
    /// `caller` is answered only about a directory of its own.
    pub fn status(&mut self, args: &GateStatusArgs, caller: Caller) -> Result<GateStatus, AskError> {
        let cwd = self.project(args.cwd.as_deref(), args.session_id.as_ref(), caller)?;
        let settings = self
            .config
            .settings_for(Some(Path::new(&cwd)), self.projects)
            .map_err(|error| AskError::Config(error.summary()))?;
        let session_host =
            args.session_id.as_ref().and_then(|s| self.store.file_by_session(s.as_str())).map(|f| f.host);
        // The session's own host says which reviewer to run; else the one asking, else the
        // host a question naming none is taken for.
        let host = session_host.or(args.host).unwrap_or(Host::UNNAMED);
        let question = Question {
            event: adapter::hooks(host).end_event().name.into(),
            session_id: args.session_id.clone(),
            cwd: Some(cwd.clone()),
            task_id: None,
            host,
            teammate: None,
            subagent: None,
            work: String::new(),
            label: "this work".into(),
            task_subject: None,
            installed_reviewers: None,
            stop_hook_active: false,
        };
        let mut status = GateStatus {
            cwd,
            policy: settings.policy,
            sources: settings.sources.clone(),
            config: settings.files.clone(),
            not_applied: settings.not_applied.clone(),
            events: settings.events.iter().map(ToString::to_string).collect(),
            panel_rubric: settings.panel_rubric.clone(),
            freshness_seconds: settings.freshness_seconds,
            require_reviewed_tree: settings.require_reviewed_tree,
            evidence_id: None,
            review: None,
            satisfied: false,
            missing: None,
        };
        status.missing = self.missing(&question, &settings, &mut status)?;
        status.satisfied = status.missing.is_none();
        Ok(status)
    }

    /// What the gate lacks to allow `question` now, filling in what it would count.
    fn missing(
        &mut self,
        question: &Question,
        settings: &Settings,
        status: &mut GateStatus,
    ) -> Result<Option<String>, AskError> {
        if settings.policy == GatePolicy::Off {
            return Ok(None);
        }
        if settings.uses_evidence() {
            let (evidence, passed_over) = self.fresh_positive_evidence(question, settings)?;
            if let Some(evidence) = evidence {
                let change = settings.require_reviewed_tree.then(|| tree_change(self.trees, question, &evidence));
                let (verdict, _) = policy::decide_with_evidence(question, &evidence, change);
                if verdict.blocks() {
                    return Ok(Some(verdict.message));
                }
                status.evidence_id = Some(evidence.evidence_id);
                return Ok(None);
            }
            if !settings.asks_the_jury() {
                return Ok(Some(policy::decide_without_evidence(question, settings, &passed_over).0.message));
            }
        }
        let project = PathBuf::from(&status.cwd);
        let (jury, _) = match self.juries.jury_for(&project) {
            Ok(found) => found,
            Err(error) => return Ok(Some(Ruling::failure(settings, &error.to_string()).message)),
        };
        let Some(tree) = self.trees.digest(&project) else {
            return Ok(Some(format!(
                "judged: {} has no review the gate can count: the project is not a git repository, so no review \
                 can be tied to its tree; the gate convenes the cross-family jury itself when the task completes.",
                question.label
            )));
        };
        let ask = JuryAsk {
            rubric: &settings.panel_rubric,
            rubric_text: None,
            persona: None,
            project,
            author_model: self.author_model(question.session_id.as_ref())?,
            source: AskedBy::Gate,
        };
        let Some(review) = jury::reusable(self.store, &review::counted_key(&ask, &jury, &tree))? else {
            return Ok(Some(format!(
                "judged: {} has no review of the working tree as it is now. Call judged mcp's `review` tool (with \
                 the task's subject and description, and session_id), or the gate convenes the cross-family jury \
                 (rubric {}) on it when the task completes.",
                question.label, settings.panel_rubric
            )));
        };
        let (verdict, _) = policy::decide_with_jury(&question.label, &review);
        status.review = Some(jury::report_jury(review));
        Ok(verdict.blocks().then_some(verdict.message))
    }
}
