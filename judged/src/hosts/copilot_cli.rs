//! Copilot CLI (`copilot`): a plugin from a local marketplace (its direct installs are
//! deprecated), loaded where it lies; its hook in a project's `.github/hooks/judged.json`
//! or root's policy directory.

use super::{HookPlace, HookSpec, HooksSwitch, HostSetup, Listed, Login, Managed, SettingsFile, Step, env_dir, step};
use crate::CliError;
use crate::hook_entry::{HOOK_TIMEOUT_SECONDS, copilot_hooks};
use crate::install;
use crate::plugin::{self, HostPlugin};
use judged_core::adapter::HookEvent;
use judged_core::event::Host;
use judged_core::family;
use serde::Deserialize;
use serde_json::json;
use std::path::{Path, PathBuf};

pub struct CopilotCli;

/// One plugin in `copilot plugin list --json`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Plugin {
    name: String,
    #[serde(default)]
    marketplace: String,
    version: String,
    enabled: bool,
    #[serde(default)]
    source: String,
    installed_from: Option<PathBuf>,
}

impl HostSetup for CopilotCli {
    fn host(&self) -> Host {
        Host::CopilotCli
    }

    fn program(&self) -> &'static str {
        "copilot"
    }

    fn title(&self) -> &'static str {
        "Copilot CLI"
    }

    fn hook_settings(&self) -> &'static str {
        "Copilot CLI `.github/hooks/judged.json` in the project"
    }

    /// A root `plugin.json`, read before `.claude-plugin/plugin.json`.
    fn plugin(&self) -> Option<HostPlugin> {
        const HOOK_FILE: &str = "hooks/copilot-cli.json";
        let manifest = plugin::manifest(json!({"hooks": HOOK_FILE, "mcpServers": ".mcp.json", "skills": "skills/"}));
        let hooks = copilot_hooks(self.end_event(), &plugin::hook_command(self.host()), HOOK_TIMEOUT_SECONDS);
        let files = vec![plugin::json_file("plugin.json", &manifest), plugin::json_file(HOOK_FILE, &hooks)];
        Some(HostPlugin { hook_file: HOOK_FILE, extension_dir: None, files })
    }

    fn install_hint(&self) -> &'static str {
        "Copilot CLI (`npm install -g @github/copilot`, then `copilot` and /login)"
    }

    /// It serves all three families.
    fn juror_models(&self, family: &str) -> Option<(&'static str, &'static str)> {
        match family {
            family::OPENAI => Some(("gpt-5.4-mini", "gpt-5.4")),
            family::GOOGLE => Some(("gemini-2.5-flash", "gemini-2.5-pro")),
            family::ANTHROPIC => Some(("claude-haiku-4.5", "claude-sonnet-4.6")),
            _ => None,
        }
    }

    fn login(&self, env: &dyn Fn(&str) -> Option<String>) -> Login {
        let by_variable = Login::by(env, &["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"], &[]);
        if matches!(by_variable, Login::Yes(_)) {
            return by_variable;
        }
        // It keeps its token in the system keychain; only a plaintext fallback would show
        // in its config file.
        let config = env_dir(env, "COPILOT_HOME", ".copilot").join("config.json");
        match std::fs::read_to_string(&config) {
            Ok(text) if text.contains("logged_in_users") => Login::Yes(config.display().to_string()),
            _ => Login::Unknown("Copilot CLI keeps its login in the system keychain"),
        }
    }

    fn listing_args(&self) -> &'static [&'static str] {
        &["plugin", "list", "--json"]
    }

    fn parse_listing(&self, listing: &str) -> Result<Option<Listed>, serde_json::Error> {
        let plugins: Vec<Plugin> = serde_json::from_str(listing)?;
        Ok(plugins.into_iter().find(|p| p.name == crate::plugin::NAME).map(|p| Listed {
            // A marketplace install is loaded live from the marketplace's directory.
            hooks_file: p
                .installed_from
                .as_deref()
                .filter(|_| p.source == "live")
                .and_then(|root| self.installed_hooks_file(root)),
            id: if p.marketplace.is_empty() { p.name } else { format!("{}@{}", p.name, p.marketplace) },
            version: p.version,
            enabled: p.enabled,
        }))
    }

    fn install_steps(&self, dir: &Path, before: Option<&Listed>) -> Vec<Step> {
        let dir = dir.to_string_lossy();
        // A direct install goes before the marketplace's.
        let direct = before.filter(|b| b.id == crate::plugin::NAME);
        let uninstall = direct.map(|_| step(&["plugin", "uninstall", crate::plugin::NAME]));
        let add = Step { already: Some("already registered"), ..step(&["plugin", "marketplace", "add", &dir]) };
        uninstall.into_iter().chain([add, step(&["plugin", "install", &self.installed_id()])]).collect()
    }

    fn enable_hint(&self, bin: &str) -> String {
        format!("{bin} plugin enable {}", crate::plugin::marketplace_id())
    }

    /// Uninstalling a plugin of a local marketplace only disables it.
    fn uninstall_hint(&self, bin: &str) -> String {
        format!("{bin} plugin marketplace remove {}", crate::plugin::NAME)
    }

    fn settings_files(&self, cwd: &Path) -> Vec<SettingsFile> {
        vec![
            SettingsFile { place: "project", path: copilot_path(cwd), reinstall: "judged install-hooks --copilot" },
            SettingsFile {
                place: "managed",
                path: copilot_managed_path(),
                reinstall: "sudo judged install-hooks --copilot --managed",
            },
        ]
    }

    fn managed(&self) -> Managed {
        Managed::Hooks
    }

    /// Its hook files and its settings take `disableAllHooks`; its policy files do not.
    fn hooks_switch(&self) -> HooksSwitch {
        HooksSwitch::DisableAllHooks
    }

    /// The user's and the repository's `settings.json` (and `settings.local.json`), and the
    /// `.claude/` settings it reads for the subset it shares with Claude Code.
    fn hooks_switch_files(&self, cwd: &Path) -> Vec<PathBuf> {
        let home = env_dir(&super::env_var, "COPILOT_HOME", ".copilot");
        let mut files = vec![home.join("settings.json")];
        for dir in [".github/copilot", ".claude"] {
            files.extend(["settings.json", "settings.local.json"].map(|name| cwd.join(dir).join(name)));
        }
        files
    }

    /// Its hook file names no event to choose: the file is its `agentStop` hook.
    fn hook_events(&self, _asked: &[String]) -> Result<Vec<HookEvent>, CliError> {
        Ok(Vec::new())
    }

    fn install_hook(&self, place: &HookPlace, hook: &HookSpec) -> Result<Option<install::Plan>, CliError> {
        if place.target.managed {
            let policy = copilot_managed_path();
            place.needs_root(&policy, self.program())?;
            // Every user's Copilot CLI runs it, with their own PATH: named by its path.
            let command = hook.command(true, None)?;
            return Ok(Some(copilot_install(&policy, self.end_event(), &command, hook.timeout)?));
        }
        let committed = copilot_path(&place.target.project_dir());
        let command = hook.command(hook.absolute, Some(&committed))?;
        Ok(Some(copilot_install(&committed, self.end_event(), &command, hook.timeout)?))
    }

    fn uninstall_hook(&self, place: &HookPlace) -> Result<install::Plan, CliError> {
        if place.target.managed {
            let policy = copilot_managed_path();
            place.needs_root(&policy, self.program())?;
            return Ok(copilot_uninstall(&policy)?);
        }
        Ok(copilot_uninstall(&copilot_path(&place.target.project_dir()))?)
    }
}

/// The Copilot CLI repository hook file.
fn copilot_path(project: &Path) -> PathBuf {
    project.join(".github/hooks/judged.json")
}

/// judged's file in Copilot CLI's policy directory: root's, loaded for every user, and
/// not disabled by `disableAllHooks` in any user or repository setting.
fn copilot_managed_path() -> PathBuf {
    PathBuf::from("/etc/github-copilot/policy.d/judged.json")
}

/// Write a Copilot CLI hook file of ours (the repository's [`copilot_path`] or the policy
/// directory's [`copilot_managed_path`]) with our hook of its `end` event (`agentStop`).
fn copilot_install(
    path: &Path,
    end: HookEvent,
    command: &str,
    timeout_seconds: u64,
) -> Result<install::Plan, install::InstallError> {
    let (file, _) = install::read_json(path, install::Syntax::Json)?;
    Ok(install::Plan::new(file, Some(crate::hook_entry::pretty(&copilot_hooks(end, command, timeout_seconds)))))
}

/// Remove a Copilot CLI hook file of ours (it holds only our hook).
fn copilot_uninstall(path: &Path) -> Result<install::Plan, install::InstallError> {
    let (file, _) = install::read_json(path, install::Syntax::Json)?;
    Ok(install::Plan::new(file, None))
}
