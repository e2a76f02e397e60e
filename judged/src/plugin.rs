//! The judged plugin (`plugin/` in the repository): one directory that Claude Code,
//! Copilot CLI, Codex CLI, Gemini CLI and Qwen Code each install with their own command.
//!
//! Each host reads its own manifest, and no one manifest serves two of them (each names
//! its hooks file, and each host's hook events and units differ), so every manifest is
//! rendered from one description ([`NAME`], [`DESCRIPTION`], [`AUTHOR`], the crate's
//! version and licence): what the hosts share here (`.claude-plugin/marketplace.json`,
//! `.mcp.json`, the skill), each host's own files in its [`HostPlugin`], as its pinned
//! client was seen to read them. `judged plugin write DIR` writes them, and a test fails
//! when the committed `plugin/` differs from what this renders. The files written by hand
//! (the skill, the README, the icon) are taken in as they are, so the rendered directory is
//! the whole plugin: `judged init` installs from it.

use crate::hook_entry::{HOOK_TIMEOUT_SECONDS, command_hook_group, pretty, shim_command};
use judged_core::event::Host;
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
const SKILL_TEXT: &str = include_str!("../../plugin/skills/judged-review/SKILL.md");
const README_TEXT: &str = include_str!("../../plugin/README.md");
const ICON: &[u8] = include_bytes!("../../plugin/.claude-plugin/icon.png");

/// A host's part of the plugin (its `HostSetup::plugin`).
pub struct HostPlugin {
    /// The file holding its hook, from the plugin's root.
    pub hook_file: &'static str,
    /// The directory that is its extension, installed as a copy of that directory alone
    /// (Gemini CLI's and Qwen Code's); none for a host that reads the plugin's root.
    pub extension_dir: Option<&'static str>,
    /// The files it reads and no other host does: its manifest and its hook's file.
    pub files: Vec<PluginFile>,
}

/// The hook file of `host` in an installed copy of the plugin at `root`: an extension is
/// a copy of its directory alone.
pub fn installed_hooks_file(plugin: &HostPlugin, root: &Path) -> PathBuf {
    let in_extension = plugin.extension_dir.and_then(|dir| plugin.hook_file.strip_prefix(dir)?.strip_prefix('/'));
    root.join(in_extension.unwrap_or(plugin.hook_file))
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
pub fn hook_command(host: Host) -> String {
    shim_command("judge-hook", host.as_str(), false, HOOK_TIMEOUT_SECONDS)
}

/// The hook group of `host`'s end event, as hook files of Claude Code's format hold it.
pub fn end_hook_group(host: Host) -> Value {
    command_hook_group(&hook_command(host), HOOK_TIMEOUT_SECONDS)
}

/// The name of `host`'s end event, which its hook answers.
pub fn end_event(host: Host) -> &'static str {
    judged_core::adapter::hooks(host).end_event().name.as_str()
}

fn author() -> Value {
    json!({"name": AUTHOR})
}

/// What every plugin manifest shares.
pub fn manifest(extra: Value) -> Value {
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

/// A hook file holding `group` for `host`'s end event.
pub fn hook_file(host: Host, group: Value) -> Value {
    json!({"hooks": {end_event(host): [group]}})
}

/// The judged MCP server as a host starts it, handed `passed` of the host's environment
/// (for a host that passes an MCP server only a few safe variables).
pub fn mcp_server(passed: &[&str]) -> Value {
    let mut server = json!({"command": "judged", "args": ["mcp"]});
    if !passed.is_empty() {
        server["env"] = passed.iter().map(|name| (name.to_string(), json!(format!("${name}")))).collect();
    }
    json!({NAME: server})
}

/// The skill at `path`, where a host's own extension carries a copy of it.
pub fn skill_at(path: &'static str) -> PluginFile {
    PluginFile { path, contents: SKILL_TEXT.into() }
}

pub fn json_file(path: &'static str, value: &Value) -> PluginFile {
    PluginFile { path, contents: pretty(value).into_bytes() }
}

/// The files of the plugin every host reads, or several do: the marketplace, the MCP
/// server, the skill, the README and the icon. Each host's own come from its `HostSetup`.
pub fn shared_files() -> Vec<PluginFile> {
    vec![
        json_file(
            ".claude-plugin/marketplace.json",
            &json!({
                "name": NAME,
                "owner": author(),
                "description": "The judged plugin: a cross-family review gate for coding agents.",
                "plugins": [{"name": NAME, "source": "./", "description": DESCRIPTION, "version": env!("CARGO_PKG_VERSION"), "author": author()}],
            }),
        ),
        json_file(".mcp.json", &json!({"mcpServers": mcp_server(&[])})),
        PluginFile { path: "skills/judged-review/SKILL.md", contents: SKILL_TEXT.into() },
        PluginFile { path: "README.md", contents: README_TEXT.into() },
        PluginFile { path: ".claude-plugin/icon.png", contents: ICON.to_vec() },
    ]
}

/// Write the plugin's `files` into `dir`, replacing those and leaving others. Each file is
/// written beside itself and renamed into place, so a host that reads the plugin meanwhile
/// (or after a write cut short) finds each file whole, the old or the new: a hooks file
/// cut in two would gate nothing.
pub fn write(dir: &Path, files: Vec<PluginFile>) -> Result<(), PluginError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    for file in files {
        let path = dir.join(file.path);
        let error = |source| PluginError::Write { path: path.clone(), source };
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(error)?;
        }
        let mut aside = path.clone().into_os_string();
        aside.push(".judged-new");
        let written = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&aside)
            .and_then(|mut out| out.write_all(&file.contents).and_then(|()| out.sync_all()));
        written.and_then(|()| fs::rename(&aside, &path)).map_err(error)?;
    }
    Ok(())
}
