//! Gemini CLI (`gemini`): an extension, a copy of the plugin's `gemini/` directory; its
//! hook in a `settings.json` (a project's or the user's).

use super::{HookPlace, HookSpec, HooksSwitch, HostSetup, Listed, Login, Managed, SettingsFile, Step, env_dir, step};
use crate::CliError;
use crate::hook_entry::HOOK_TIMEOUT_SECONDS;
use crate::install;
use crate::plugin::{self, HostPlugin};
use judged_core::adapter::HookEvent;
use judged_core::event::Host;
use judged_core::family;
use serde::Deserialize;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Where its extension lives in judged's plugin.
const EXTENSION_DIR: &str = "gemini";

pub struct GeminiCli;

/// One extension in `gemini extensions list -o json`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Extension {
    name: String,
    version: String,
    path: PathBuf,
    is_active: bool,
}

impl HostSetup for GeminiCli {
    fn host(&self) -> Host {
        Host::GeminiCli
    }

    fn program(&self) -> &'static str {
        "gemini"
    }

    fn title(&self) -> &'static str {
        "Gemini CLI"
    }

    fn hook_settings(&self) -> &'static str {
        "Gemini CLI `.gemini/settings.json` (its `AfterAgent` hook)"
    }

    /// An extension: `gemini-extension.json` and always `hooks/hooks.json` of its root.
    /// Its events would be unknown events to the hosts that read the plugin's root
    /// `hooks/hooks.json` too, so the extension is a directory of its own, with its own
    /// copy of the skill (an installed extension is a copy of that directory alone).
    fn plugin(&self) -> Option<HostPlugin> {
        // Gemini CLI passes an MCP server only a few safe variables: its entry hands on
        // the ones that say where judged's socket is.
        const PASSED: [&str; 4] = ["JUDGED_HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME"];
        const HOOK_FILE: &str = "gemini/hooks/hooks.json";
        let manifest = json!({
            "name": plugin::NAME,
            "version": env!("CARGO_PKG_VERSION"),
            "description": plugin::DESCRIPTION,
            "mcpServers": plugin::mcp_server(&PASSED),
        });
        // Its timeouts are in milliseconds.
        let command = plugin::hook_command(self.host());
        let group = json!({"hooks": [{"type": "command", "name": plugin::NAME, "command": command, "timeout": HOOK_TIMEOUT_SECONDS * 1000}]});
        let files = vec![
            plugin::json_file("gemini/gemini-extension.json", &manifest),
            plugin::json_file(HOOK_FILE, &plugin::hook_file(self.host(), group)),
            plugin::skill_at("gemini/skills/judged-review/SKILL.md"),
        ];
        Some(HostPlugin { hook_file: HOOK_FILE, extension_dir: Some(EXTENSION_DIR), files })
    }

    fn install_hint(&self) -> &'static str {
        "Gemini CLI (`npm install -g @google/gemini-cli`, then run `gemini` once to log in)"
    }

    fn juror_models(&self, family: &str) -> Option<(&'static str, &'static str)> {
        (family == family::GOOGLE).then_some(("gemini-2.5-flash", "gemini-2.5-pro"))
    }

    fn login(&self, env: &dyn Fn(&str) -> Option<String>) -> Login {
        let credentials = env_dir(env, "GEMINI_CLI_HOME", "").join(".gemini/oauth_creds.json");
        Login::by(env, &["GEMINI_API_KEY", "GOOGLE_API_KEY"], &[credentials])
    }

    fn listing_args(&self) -> &'static [&'static str] {
        &["extensions", "list", "-o", "json"]
    }

    fn parse_listing(&self, listing: &str) -> Result<Option<Listed>, serde_json::Error> {
        let extensions: Vec<Extension> = serde_json::from_str(listing)?;
        Ok(extensions.into_iter().find(|e| e.name == crate::plugin::NAME).map(|e| Listed {
            hooks_file: self.installed_hooks_file(&e.path),
            id: e.name,
            version: e.version,
            enabled: e.is_active,
        }))
    }

    fn installed_id(&self) -> String {
        crate::plugin::NAME.to_owned()
    }

    /// An extension is a copy: one already there is uninstalled first. Gemini CLI asks
    /// whether to trust the folder it installs from, even with `--consent`: that folder
    /// is judged's own plugin directory, trusted for this one command.
    fn install_steps(&self, dir: &Path, before: Option<&Listed>) -> Vec<Step> {
        let extension = dir.join(EXTENSION_DIR);
        let uninstall = before.map(|_| step(&["extensions", "uninstall", crate::plugin::NAME]));
        let install = Step {
            env: &[("GEMINI_CLI_TRUST_WORKSPACE", "true")],
            ..step(&["extensions", "install", &extension.to_string_lossy(), "--consent"])
        };
        uninstall.into_iter().chain([install]).collect()
    }

    fn enable_hint(&self, bin: &str) -> String {
        format!("{bin} extensions enable {}", crate::plugin::NAME)
    }

    fn uninstall_hint(&self, bin: &str) -> String {
        format!("{bin} extensions uninstall {}", crate::plugin::NAME)
    }

    fn settings_files(&self, cwd: &Path) -> Vec<SettingsFile> {
        vec![
            SettingsFile {
                place: "project",
                path: gemini_settings_path(Some(cwd)),
                reinstall: "judged install-hooks --gemini --project",
            },
            SettingsFile {
                place: "user",
                path: gemini_settings_path(None),
                reinstall: "judged install-hooks --gemini --user",
            },
        ]
    }

    fn hooks_switch(&self) -> HooksSwitch {
        HooksSwitch::HooksConfig
    }

    /// Its system settings merge a user's `hooksConfig.disabled`: no hook there holds.
    fn managed(&self) -> Managed {
        Managed::None
    }

    fn install_hook(&self, place: &HookPlace, hook: &HookSpec) -> Result<Option<install::Plan>, CliError> {
        let settings = gemini_settings_path(place.project.as_deref());
        let committed = Some(settings.as_path()).filter(|_| place.project.is_some());
        let command = hook.command(hook.absolute, committed)?;
        Ok(Some(gemini_install(&settings, &command, hook.events, hook.timeout)?))
    }

    fn uninstall_hook(&self, place: &HookPlace) -> Result<install::Plan, CliError> {
        Ok(gemini_uninstall(&gemini_settings_path(place.project.as_deref()))?)
    }
}

/// Gemini CLI's settings: `$GEMINI_CLI_HOME/.gemini/settings.json` (else
/// `~/.gemini/settings.json`) for the user, `<project>/.gemini/settings.json` for a project.
fn gemini_settings_path(project: Option<&Path>) -> PathBuf {
    match project {
        Some(project) => project.join(".gemini/settings.json"),
        None => std::env::var_os("GEMINI_CLI_HOME")
            .filter(|v| !v.is_empty())
            .map_or_else(judged_io::files::home_dir, PathBuf::from)
            .join(".gemini/settings.json"),
    }
}

/// Add our hook of each of `events` (Gemini CLI's `AfterAgent`) to a Gemini CLI settings
/// file. Gemini counts a hook's timeout in milliseconds.
fn gemini_install(
    settings: &Path,
    command: &str,
    events: &[HookEvent],
    timeout_seconds: u64,
) -> Result<install::Plan, install::InstallError> {
    install::command_hooks_install(
        settings,
        install::Syntax::JsonWithComments,
        command,
        events,
        timeout_seconds * 1000,
        None,
    )
}

/// Remove our hooks from a Gemini CLI settings file; the file too when nothing else is
/// left in it.
fn gemini_uninstall(settings: &Path) -> Result<install::Plan, install::InstallError> {
    install::command_hooks_uninstall(settings, install::Syntax::JsonWithComments, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::tests::{end, round_trip};
    use std::fs;

    /// A Gemini CLI settings file goes back to the same bytes after an install and an
    /// uninstall, and one the install made goes away; the hook's timeout is in milliseconds.
    #[test]
    fn gemini_hooks_round_trip_to_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \
                      \"command\": \"their-stop\",\n            \"type\": \"command\"\n          }\n        ]\n      }\n    \
                      ]\n  },\n  \"model\": \"gemini-2.5-pro\"\n}\n";
        let settings = dir.path().join("settings.json");
        let command = "judge-hook --host gemini-cli --timeout 110";
        for text in [Some(theirs), None] {
            let _ = fs::remove_file(&settings);
            round_trip(
                &settings,
                text,
                || gemini_install(&settings, command, &end(Host::GeminiCli), 120).unwrap(),
                || gemini_uninstall(&settings).unwrap(),
            );
        }
        gemini_install(&settings, command, &end(Host::GeminiCli), 120).unwrap().apply().unwrap();
        let written: serde_json::Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
        assert_eq!(written["hooks"]["AfterAgent"][0]["hooks"][0]["timeout"], 120_000, "Gemini counts milliseconds");
    }
}
