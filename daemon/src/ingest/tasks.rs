//! Claude Code task completions as its transcripts show them: a root `TaskUpdate` call
//! setting a task's `status` to `completed`, and its result, which the host writes only
//! once the `TaskCompleted` hook let it through (a blocked completion's result is an
//! error). The engine matches each to the gate decision that allowed it.
//!
//! Lines are only parsed whole when they can hold one: a line naming `TaskUpdate`, or a
//! tool result while a call waits for one, so ingest costs the same otherwise.

use judged_core::event::{Host, Record};
use std::collections::HashMap;

/// A task completion the host carried out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskCompletion {
    pub file_id: i64,
    pub path: String,
    pub session_id: Option<String>,
    pub cwd: Option<String>,
    pub task_id: String,
    /// The host's time of the result.
    pub completed_at: Option<String>,
    /// The line of the result.
    pub line: u64,
}

/// The `TaskUpdate` calls waiting for their result, and the completions found.
#[derive(Default)]
pub struct Tasks {
    /// By file id and tool call id: the task being completed.
    waiting: HashMap<(i64, String), String>,
    found: Vec<TaskCompletion>,
}

impl Tasks {
    /// Look at line `line` (`raw`, without its terminator) of a `host` log.
    pub fn observe(&mut self, host: Host, file_id: i64, path: &str, line: u64, raw: &[u8]) {
        if host != Host::ClaudeCode {
            return;
        }
        let calls = memchr::memmem::find(raw, b"\"TaskUpdate\"").is_some();
        let results = !self.waiting.is_empty() && memchr::memmem::find(raw, b"\"tool_result\"").is_some();
        if !(calls || results) {
            return;
        }
        let Ok(record) = judged_core::adapter::parse_line(host, raw) else { return };
        if !record.root {
            return;
        }
        self.calls(file_id, &record);
        for result in &record.tool_results {
            let Some(call) = &result.tool_call_id else { continue };
            let Some(task_id) = self.waiting.remove(&(file_id, call.clone())) else { continue };
            if result.success {
                self.found.push(TaskCompletion {
                    file_id,
                    path: path.to_owned(),
                    session_id: record.session_id.clone(),
                    cwd: record.cwd.clone(),
                    task_id,
                    completed_at: record.timestamp.clone(),
                    line,
                });
            }
        }
    }

    fn calls(&mut self, file_id: i64, record: &Record) {
        for call in record.tool_calls.iter().filter(|c| c.name == "TaskUpdate") {
            let field = |key: &str| call.arguments.get(key).and_then(serde_json::Value::as_str);
            if let (Some(id), Some(task), Some("completed")) = (&call.id, field("taskId"), field("status")) {
                self.waiting.insert((file_id, id.clone()), task.to_owned());
            }
        }
    }

    /// The completions found since the last call.
    pub fn take(&mut self) -> Vec<TaskCompletion> {
        std::mem::take(&mut self.found)
    }
}
