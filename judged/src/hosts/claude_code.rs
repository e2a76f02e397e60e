//! Claude Code (`claude`): a plugin from a local marketplace; its hook in `settings.json`
//! (a project's, the user's, root's managed one).

use super::{HookPlace, HookSpec, HooksSwitch, HostSetup, Listed, Login, Managed, SettingsFile, Step, env_dir, step};
use crate::CliError;
use crate::install;
use crate::plugin::{self, HostPlugin};
use judged_core::adapter::HookEvent;
use judged_core::event::Host;
use judged_core::family;
use serde::Deserialize;
use serde_json::json;
use std::path::{Path, PathBuf};

pub struct ClaudeCode;

/// One plugin in `claude plugin list --json`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Plugin {
    id: String,
    version: String,
    enabled: bool,
    install_path: Option<PathBuf>,
}

impl HostSetup for ClaudeCode {
    fn host(&self) -> Host {
        Host::ClaudeCode
    }

    fn program(&self) -> &'static str {
        "claude"
    }

    fn title(&self) -> &'static str {
        "Claude Code"
    }

    fn hook_settings(&self) -> &'static str {
        "Claude Code settings.json"
    }

    fn plugin(&self) -> Option<HostPlugin> {
        const HOOK_FILE: &str = "hooks/claude-code.json";
        // Its manifest names its hook file (it always reads `hooks/hooks.json` as well). The
        // hook and the MCP server talk only to judged's local socket (its directory profile
        // asks what a plugin reaches).
        let manifest = plugin::manifest(json!({"hooks": format!("./{HOOK_FILE}"), "network": {"hosts": []}}));
        let files = vec![
            plugin::json_file(".claude-plugin/plugin.json", &manifest),
            plugin::json_file(HOOK_FILE, &plugin::hook_file(self.host(), plugin::end_hook_group(self.host()))),
        ];
        Some(HostPlugin { hook_file: HOOK_FILE, extension_dir: None, files })
    }

    fn install_hint(&self) -> &'static str {
        "Claude Code (`npm install -g @anthropic-ai/claude-code`, then `claude` to log in)"
    }

    fn juror_models(&self, family: &str) -> Option<(&'static str, &'static str)> {
        (family == family::ANTHROPIC).then_some(("claude-haiku-4-5", "claude-sonnet-4-6"))
    }

    fn login(&self, env: &dyn Fn(&str) -> Option<String>) -> Login {
        let credentials = env_dir(env, "CLAUDE_CONFIG_DIR", ".claude").join(".credentials.json");
        Login::by(env, &["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"], &[credentials])
    }

    fn listing_args(&self) -> &'static [&'static str] {
        &["plugin", "list", "--json"]
    }

    fn parse_listing(&self, listing: &str) -> Result<Option<Listed>, serde_json::Error> {
        let plugins: Vec<Plugin> = serde_json::from_str(listing)?;
        Ok(plugins.into_iter().find(|p| p.id == crate::plugin::marketplace_id()).map(|p| Listed {
            hooks_file: p.install_path.as_deref().and_then(|root| self.installed_hooks_file(root)),
            id: p.id,
            version: p.version,
            enabled: p.enabled,
        }))
    }

    fn install_steps(&self, dir: &Path, _before: Option<&Listed>) -> Vec<Step> {
        // Installing again is answered as done: the plugin loads in place from `dir`.
        let dir = dir.to_string_lossy();
        vec![step(&["plugin", "marketplace", "add", &dir]), step(&["plugin", "install", &self.installed_id()])]
    }

    fn enable_hint(&self, bin: &str) -> String {
        format!("{bin} plugin enable {}", crate::plugin::marketplace_id())
    }

    fn uninstall_hint(&self, bin: &str) -> String {
        format!("{bin} plugin uninstall {}", crate::plugin::marketplace_id())
    }

    /// Claude Code reads `enabledPlugins` from the project's and the local settings over
    /// the user's: `"judged@judged": false` there turns the plugin off in that project.
    fn plugin_off_in_project(&self, settings: &serde_json::Value, plugin: &str) -> bool {
        settings.get("enabledPlugins").and_then(|plugins| plugins.get(plugin)) == Some(&serde_json::Value::Bool(false))
    }

    fn settings_files(&self, cwd: &Path) -> Vec<SettingsFile> {
        vec![
            SettingsFile {
                place: "project",
                path: cwd.join(".claude/settings.json"),
                reinstall: "judged install-hooks --claude",
            },
            // The project's own, not committed: install-hooks writes nothing there, but
            // a hook or a switch in it counts.
            SettingsFile {
                place: "local",
                path: cwd.join(".claude/settings.local.json"),
                reinstall: "judged install-hooks --claude",
            },
            SettingsFile {
                place: "user",
                path: claude_user_settings_path(),
                reinstall: "judged install-hooks --claude --user",
            },
            // Root's managed settings: the one place an agent cannot take the hook out of.
            SettingsFile {
                place: "managed",
                path: claude_managed_path(),
                reinstall: "sudo judged install-hooks --claude --managed",
            },
        ]
    }

    fn hooks_switch(&self) -> HooksSwitch {
        HooksSwitch::DisableAllHooks
    }

    fn managed(&self) -> Managed {
        Managed::HooksOnly
    }

    /// Its events are the caller's to choose (`--events`), each one it sends; by default
    /// its end's.
    fn hook_events(&self, asked: &[String]) -> Result<Vec<HookEvent>, CliError> {
        if asked.is_empty() {
            return Ok(vec![self.end_event()]);
        }
        let event = |name: &String| {
            HookEvent::sent_by(self.host(), name)
                .ok_or_else(|| CliError::NoSuchEvent { host: self.host(), event: name.clone() })
        };
        asked.iter().map(event).collect()
    }

    fn install_hook(&self, place: &HookPlace, hook: &HookSpec) -> Result<Option<install::Plan>, CliError> {
        let settings = settings_at(place);
        if place.target.managed {
            place.needs_root(&settings, self.program())?;
            // Every user's Claude Code runs it, with their own PATH: named by its path.
            let command = hook.command(true, None)?;
            let only = place.target.managed_only;
            return Ok(Some(claude_managed_install(&settings, &command, hook.events, hook.timeout, only)?));
        }
        let committed = Some(settings.as_path()).filter(|_| !place.target.user);
        let command = hook.command(hook.absolute, committed)?;
        Ok(Some(install::json_hooks_install(&settings, &command, hook.events, hook.timeout)?))
    }

    fn uninstall_hook(&self, place: &HookPlace) -> Result<install::Plan, CliError> {
        let settings = settings_at(place);
        if place.target.managed {
            place.needs_root(&settings, self.program())?;
            return Ok(claude_managed_uninstall(&settings)?);
        }
        Ok(install::json_hooks_uninstall(&settings)?)
    }
}

/// The settings file `install-hooks` writes at `place`: root's managed file, the user's
/// `settings.json`, or the project's `.claude/settings.json`.
fn settings_at(place: &HookPlace) -> PathBuf {
    if place.target.managed {
        claude_managed_path()
    } else if place.target.user {
        claude_user_settings_path()
    } else {
        place.target.project_dir().join(".claude/settings.json")
    }
}

/// Claude Code's user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else
/// `~/.claude/settings.json`.
fn claude_user_settings_path() -> PathBuf {
    let config = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()).map(PathBuf::from);
    config.unwrap_or_else(|| judged_io::files::home_dir().join(".claude")).join("settings.json")
}

/// judged's file in Claude Code's managed-settings drop-in directory: root's, read by
/// every Claude Code on the machine, and not overridden by user or project settings
/// (`disableAllHooks` there leaves managed hooks running). A drop-in of its own leaves an
/// administrator's `managed-settings.json` alone.
fn claude_managed_path() -> PathBuf {
    let base = if cfg!(target_os = "macos") { "/Library/Application Support/ClaudeCode" } else { "/etc/claude-code" };
    Path::new(base).join("managed-settings.d/judged.json")
}

/// Our hooks as Claude Code managed settings at `path` ([`claude_managed_path`]), with
/// `allowManagedHooksOnly` when `only` (no user, project or plugin hook runs then).
fn claude_managed_install(
    path: &Path,
    command: &str,
    events: &[HookEvent],
    timeout_seconds: u64,
    only: bool,
) -> Result<install::Plan, install::InstallError> {
    let top = (MANAGED_ONLY, only.then_some(serde_json::Value::Bool(true)));
    install::command_hooks_install(path, install::Syntax::Json, command, events, timeout_seconds, Some(top))
}

/// Remove our managed hooks; the drop-in file goes when nothing but what we wrote is left.
fn claude_managed_uninstall(path: &Path) -> Result<install::Plan, install::InstallError> {
    install::command_hooks_uninstall(path, install::Syntax::Json, Some(MANAGED_ONLY))
}

/// The managed setting under which only managed hooks run.
const MANAGED_ONLY: &str = "allowManagedHooksOnly";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::tests::{end, round_trip};
    use std::fs;

    /// The managed drop-in is ours: written with the hook (and `allowManagedHooksOnly` when
    /// asked), and gone again on uninstall, in the place Claude Code reads it.
    #[test]
    fn the_managed_drop_in_is_written_and_removed_whole() {
        let expected = if cfg!(target_os = "macos") {
            "/Library/Application Support/ClaudeCode/managed-settings.d/judged.json"
        } else {
            "/etc/claude-code/managed-settings.d/judged.json"
        };
        assert_eq!(claude_managed_path(), Path::new(expected));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("managed-settings.d/judged.json");
        let command = "/usr/local/bin/judge-hook --host claude-code --timeout 110";
        let events = end(Host::ClaudeCode);
        for only in [false, true] {
            round_trip(
                &path,
                None,
                || claude_managed_install(&path, command, &events, 120, only).unwrap(),
                || claude_managed_uninstall(&path).unwrap(),
            );
        }
        claude_managed_install(&path, command, &events, 120, true).unwrap().apply().unwrap();
        let written: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(written["allowManagedHooksOnly"], true);
        assert_eq!(written["hooks"]["TaskCompleted"][0]["hooks"][0]["command"], command);
        claude_managed_install(&path, command, &events, 120, false).unwrap().apply().unwrap();
        let written: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert!(written.get("allowManagedHooksOnly").is_none(), "installed again without it: {written}");
    }
}
