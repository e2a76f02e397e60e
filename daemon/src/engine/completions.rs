//! Every completion on the record: a Claude Code task completed in a transcript of a
//! project whose gate is armed for `TaskCompleted` is matched to the gate decision that
//! allowed it, and one no decision allowed (the hook was not installed, was removed, or its
//! answer not heeded) is journaled as a bypass, which `judged status` counts and `judged
//! report` lists.

use super::Engine;
use crate::ingest::TaskCompletion;
use crate::store::{JournalEvent, StoreError};
use judged_core::timestamp;
use judged_protocol::{CompletionBypassed, Decision, GateDecision, GatePolicy};
use std::path::Path;

impl Engine {
    /// Match the task completions ingested since the last call to the gate's decisions.
    pub(super) fn account_for_completions(&mut self) {
        for completion in self.ingest.take_completions() {
            if let Err(error) = self.account_for(&completion) {
                tracing::warn!(%error, path = %completion.path, "cannot match a task completion to the gate's decisions");
            }
        }
    }

    fn account_for(&mut self, completion: &TaskCompletion) -> Result<(), StoreError> {
        let Some(cwd) = completion.cwd.as_deref() else { return Ok(()) };
        // A completion from before judged kept a record (a transcript it found on its
        // first start) had no gate to ask.
        let began = self.store.journal_began()?.as_deref().and_then(timestamp::parse);
        let at = completion.completed_at.as_deref().and_then(timestamp::parse);
        if began.zip(at).is_none_or(|(began, at)| at < began) {
            return Ok(());
        }
        let settings = (self.config.settings_for(Some(Path::new(cwd)), &mut self.projects))
            .unwrap_or_else(|_| self.config.user_settings());
        let armed = settings.policy != GatePolicy::Off && settings.events.iter().any(|e| e == "TaskCompleted");
        if !armed {
            return Ok(());
        }
        let mut allowed = false;
        self.store.journal_newest_first(|_, _, decision: GateDecision| {
            allowed = decision.event == "TaskCompleted"
                && decision.decision == Decision::Allow
                && decision.session_id == completion.session_id
                && decision.task_id.as_deref() == Some(completion.task_id.as_str());
            !allowed
        })?;
        if allowed {
            return Ok(());
        }
        tracing::warn!(path = %completion.path, task = %completion.task_id, "a task was completed without the gate allowing it");
        let bypassed = CompletionBypassed {
            session_id: completion.session_id.clone(),
            task_id: completion.task_id.clone(),
            completed_at: completion.completed_at.clone(),
            cwd: cwd.to_owned(),
            path: completion.path.clone(),
            line: completion.line,
        };
        self.store.journal(&JournalEvent::CompletionBypassed(bypassed))?;
        Ok(())
    }
}
