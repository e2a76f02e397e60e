//! What one hook entry of judged's looks like, wherever it is written: the shim's command
//! line and the host's timeout, and the JSON shapes the hosts read. The installer writes
//! these into a user's settings, the plugin into its manifests.

use judged_core::adapter::HookEvent;
use serde_json::{Value, json};

/// The host's hook timeout when no jury is configured: the evidence gate answers in
/// milliseconds.
pub const HOOK_TIMEOUT_SECONDS: u64 = 120;
/// How much sooner than the host the shim gives up, so it answers (blocking, with a
/// message) before the host kills it.
pub const SHIM_MARGIN_SECONDS: u64 = 10;

/// The hook's command line: `program` (see [`crate::install::hook_program`]) as `host`'s gate, giving up
/// [`SHIM_MARGIN_SECONDS`] before the host's `hook_timeout` kills it.
pub fn shim_command(program: &str, host: &str, on_error_allow: bool, hook_timeout: u64) -> String {
    let mut command = format!("{program} --host {host}");
    if on_error_allow {
        command.push_str(" --on-error allow");
    }
    command.push_str(&format!(" --timeout {}", hook_timeout - SHIM_MARGIN_SECONDS));
    command
}

/// `value` as the JSON files here are written: pretty, with a final newline.
pub fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("a Value serializes");
    text.push('\n');
    text
}

/// One matcher group running `command`, in the shape Claude Code (and Codex CLI, whose
/// hooks have the same three levels) read: event → group → handlers.
pub fn command_hook_group(command: &str, timeout: u64) -> Value {
    json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]})
}

/// A Copilot CLI hooks file holding our hook of its `end` event (`agentStop`): a
/// repository's `.github/hooks/*.json` and a plugin's hooks file have this one shape.
pub fn copilot_hooks(end: HookEvent, command: &str, timeout_seconds: u64) -> Value {
    let handler = json!({"type": "command", "bash": command, "timeoutSec": timeout_seconds});
    json!({"version": 1, "hooks": {end.as_str(): [handler]}})
}
