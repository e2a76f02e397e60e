//! The judged plugin (`plugin/` in the repository): one directory that Claude Code,
//! Copilot CLI, Codex CLI, Gemini CLI and Qwen Code each install with their own command.
//!
//! Each host reads its own manifest, and no one manifest serves two of them (each names
//! its hooks file, and each host's hook events and units differ), so every manifest is
//! rendered here from one description ([`NAME`], [`DESCRIPTION`], [`AUTHOR`], the
//! crate's version and licence, and [`HOSTS`]); `judged plugin write DIR` writes them,
//! and a test fails when the committed `plugin/` differs from what this renders. The
//! files written by hand (the skill, the README, the icon) are taken in as they are,
//! so the rendered directory is the whole plugin: `judged init` installs from it.
//!
//! What each host reads, as observed in the pinned clients:
//! - Claude Code: `.claude-plugin/plugin.json` (its `hooks` names a file besides
//!   `hooks/hooks.json`, which it always reads as well), `.mcp.json`, `skills/`;
//!   `.claude-plugin/marketplace.json` for `claude plugin marketplace add`.
//! - Copilot CLI: a root `plugin.json` before `.claude-plugin/plugin.json`.
//! - Codex CLI: `.codex-plugin/plugin.json` before `.claude-plugin/plugin.json`; its
//!   `marketplace add` reads `.claude-plugin/marketplace.json`.
//! - Gemini CLI: `gemini-extension.json` and always `hooks/hooks.json` of the extension's
//!   root. Its events would be unknown events to the other three, which read
//!   `hooks/hooks.json` too, so the extension is the `gemini/` subdirectory, with its own
//!   copy of the skill (an installed extension is a copy of that directory alone).
//! - Qwen Code: `qwen-extension.json`, whose inline `hooks` it reads before any hook file;
//!   the extension is the `qwen/` subdirectory, as Gemini CLI's is, with its skill.

use crate::hook_entry::{HOOK_TIMEOUT_SECONDS, command_hook_group, copilot_hooks, pretty, shim_command};
use serde_json::{Value, json};
use std::fs;
use std::path::{Path, PathBuf};

/// The plugin's name in every host (and the marketplace's).
pub const NAME: &str = "judged";
/// The id every host with marketplaces gives the plugin: `<plugin>@<marketplace>`, the
/// plugin directory being its own marketplace.
pub fn marketplace_id() -> String {
    format!("{NAME}@{NAME}")
}
/// What every manifest says the plugin does.
pub const DESCRIPTION: &str = "A cross-family review gate for coding agents: a hook that lets work be marked done \
     only after a reviewer of another model family reviewed it, the judged MCP server, and a skill that teaches the \
     review round.";
/// Who the manifests name as the author (the LICENSE's copyright holder).
pub const AUTHOR: &str = "the judged authors";
/// Where the Gemini CLI extension lives in the plugin (see the module comment).
pub const GEMINI_DIR: &str = "gemini";
/// Where the Qwen Code extension lives in the plugin (see the module comment).
pub const QWEN_DIR: &str = "qwen";

const SKILL_TEXT: &str = include_str!("../../plugin/skills/judged-review/SKILL.md");
const README_TEXT: &str = include_str!("../../plugin/README.md");
const ICON: &[u8] = include_bytes!("../../plugin/.claude-plugin/icon.png");

/// A host the plugin gates: the `--host` judge-hook answers as, the event where its agent
/// declares the work done, and the plugin file holding that hook.
pub struct HostHook {
    pub host: &'static str,
    pub event: &'static str,
    pub file: &'static str,
}

/// The five hosts' hooks. Codex CLI's, Gemini CLI's and Qwen Code's stop events are
/// answered by judge-hook as `codex-cli`, `gemini-cli` and `qwen-code`; Qwen Code's is in
/// its extension's manifest.
pub const HOSTS: [HostHook; 5] = [
    HostHook { host: "claude-code", event: "TaskCompleted", file: "hooks/claude-code.json" },
    HostHook { host: "copilot-cli", event: "agentStop", file: "hooks/copilot-cli.json" },
    HostHook { host: "codex-cli", event: "Stop", file: "hooks/codex-cli.json" },
    HostHook { host: "gemini-cli", event: "AfterAgent", file: "gemini/hooks/hooks.json" },
    HostHook { host: "qwen-code", event: "Stop", file: "qwen/qwen-extension.json" },
];

/// The hook file of `host` in an installed copy of the plugin at `root`: a Gemini CLI or
/// Qwen Code extension is a copy of its directory alone.
pub fn installed_hooks_file(host: judged_core::event::Host, root: &Path) -> PathBuf {
    let hook = HOSTS.iter().find(|h| h.host == host.as_str()).expect("every host has a hook in the plugin");
    let in_extension = [GEMINI_DIR, QWEN_DIR].iter().find_map(|dir| hook.file.strip_prefix(dir)?.strip_prefix('/'));
    root.join(in_extension.unwrap_or(hook.file))
}

/// One file of the plugin, its path relative to the plugin's root.
pub struct PluginFile {
    pub path: &'static str,
    pub contents: Vec<u8>,
}

/// Why the plugin could not be written.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("cannot write {}: {source}; check that the directory is writable, then run again", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// The command every hook runs: judge-hook by its name on PATH, as `install-hooks` writes
/// it once the tools are installed, with the default hook timeout.
pub fn hook_command(host: &str) -> String {
    shim_command("judge-hook", host, false, HOOK_TIMEOUT_SECONDS)
}

fn author() -> Value {
    json!({"name": AUTHOR})
}

/// What every plugin manifest shares.
fn manifest(extra: Value) -> Value {
    let mut manifest = json!({
        "name": NAME,
        "version": env!("CARGO_PKG_VERSION"),
        "description": DESCRIPTION,
        "author": author(),
        "license": env!("CARGO_PKG_LICENSE"),
        "keywords": ["code-review", "hooks", "mcp", "cross-family"],
    });
    manifest.as_object_mut().expect("an object").extend(extra.as_object().expect("an object").clone());
    manifest
}

fn hook_file(event: &str, group: Value) -> Value {
    json!({"hooks": {event: [group]}})
}

/// The judged MCP server as each host starts it. Gemini CLI passes an MCP server only a
/// few safe variables, so its entry hands on the ones that say where judged's socket is.
fn mcp_server(gemini: bool) -> Value {
    let mut server = json!({"command": "judged", "args": ["mcp"]});
    if gemini {
        let passed = ["JUDGED_HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME"];
        server["env"] = passed.iter().map(|name| (name.to_string(), json!(format!("${name}")))).collect();
    }
    json!({NAME: server})
}

fn json_file(path: &'static str, value: &Value) -> PluginFile {
    PluginFile { path, contents: pretty(value).into_bytes() }
}

/// Every file of the plugin.
pub fn files() -> Vec<PluginFile> {
    let [claude, copilot, codex, gemini, qwen] = &HOSTS;
    let timeout = HOOK_TIMEOUT_SECONDS;
    vec![
        json_file(
            ".claude-plugin/plugin.json",
            // The hook and the MCP server talk only to judged's local socket (its
            // directory profile asks what a plugin reaches).
            &manifest(json!({"hooks": format!("./{}", claude.file), "network": {"hosts": []}})),
        ),
        json_file(
            ".claude-plugin/marketplace.json",
            &json!({
                "name": NAME,
                "owner": author(),
                "description": "The judged plugin: a cross-family review gate for coding agents.",
                "plugins": [{"name": NAME, "source": "./", "description": DESCRIPTION, "version": env!("CARGO_PKG_VERSION"), "author": author()}],
            }),
        ),
        json_file(claude.file, &hook_file(claude.event, command_hook_group(&hook_command(claude.host), timeout))),
        json_file(
            "plugin.json",
            &manifest(json!({"hooks": copilot.file, "mcpServers": ".mcp.json", "skills": "skills/"})),
        ),
        json_file(copilot.file, &copilot_hooks(&hook_command(copilot.host), timeout)),
        json_file(
            ".codex-plugin/plugin.json",
            &manifest(
                json!({"hooks": format!("./{}", codex.file), "mcpServers": "./.mcp.json", "skills": "./skills/"}),
            ),
        ),
        json_file(codex.file, &hook_file(codex.event, command_hook_group(&hook_command(codex.host), timeout))),
        json_file(".mcp.json", &json!({"mcpServers": mcp_server(false)})),
        json_file(
            "gemini/gemini-extension.json",
            &json!({"name": NAME, "version": env!("CARGO_PKG_VERSION"), "description": DESCRIPTION, "mcpServers": mcp_server(true)}),
        ),
        // Gemini CLI's timeouts are in milliseconds.
        json_file(
            gemini.file,
            &hook_file(
                gemini.event,
                json!({"hooks": [{"type": "command", "name": NAME, "command": hook_command(gemini.host), "timeout": timeout * 1000}]}),
            ),
        ),
        // Qwen Code reads inline hooks in its manifest before any hook file (timeouts in
        // seconds), and its MCP servers there too.
        json_file(
            qwen.file,
            &json!({
                "name": NAME,
                "version": env!("CARGO_PKG_VERSION"),
                "description": DESCRIPTION,
                "mcpServers": mcp_server(false),
                "hooks": {qwen.event: [command_hook_group(&hook_command(qwen.host), timeout)]},
            }),
        ),
        PluginFile { path: "skills/judged-review/SKILL.md", contents: SKILL_TEXT.into() },
        PluginFile { path: "qwen/skills/judged-review/SKILL.md", contents: SKILL_TEXT.into() },
        PluginFile { path: "gemini/skills/judged-review/SKILL.md", contents: SKILL_TEXT.into() },
        PluginFile { path: "README.md", contents: README_TEXT.into() },
        PluginFile { path: ".claude-plugin/icon.png", contents: ICON.to_vec() },
    ]
}

/// Write the plugin into `dir`, replacing the files it renders and leaving others.
pub fn write(dir: &Path) -> Result<(), PluginError> {
    for file in files() {
        let path = dir.join(file.path);
        let error = |source| PluginError::Write { path: path.clone(), source };
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(error)?;
        }
        fs::write(&path, &file.contents).map_err(error)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hook_runs_judge_hook_as_install_hooks_writes_it() {
        for host in &HOSTS {
            assert_eq!(hook_command(host.host), format!("judge-hook --host {} --timeout 110", host.host));
        }
        let paths: Vec<&str> = files().iter().map(|f| f.path).collect();
        for host in &HOSTS {
            assert!(paths.contains(&host.file), "{} is rendered", host.file);
        }
    }
}
