//! Qwen Code (`qwen`): an extension, a copy of the plugin's `qwen/` directory, whose
//! manifest holds its hook; or its hook in a `settings.json` (a project's, the user's, or
//! the system's).

use super::{HookPlace, HookSpec, HooksSwitch, HostSetup, Listed, Login, Managed, SettingsFile, Step, env_dir, step};
use crate::CliError;
use crate::install;
use crate::plugin::{self, HostPlugin};
use judged_core::adapter::HookEvent;
use judged_core::event::Host;
use serde_json::json;
use std::path::{Path, PathBuf};

/// Where its extension lives in judged's plugin.
const EXTENSION_DIR: &str = "qwen";

pub struct QwenCode;

impl HostSetup for QwenCode {
    fn host(&self) -> Host {
        Host::QwenCode
    }

    fn program(&self) -> &'static str {
        "qwen"
    }

    fn title(&self) -> &'static str {
        "Qwen Code"
    }

    fn hook_settings(&self) -> &'static str {
        "Qwen Code `.qwen/settings.json` (its `Stop` hook)"
    }

    /// An extension, as Gemini CLI's is: `qwen-extension.json`, whose inline `hooks` it
    /// reads before any hook file (timeouts in seconds), and its MCP servers there too.
    fn plugin(&self) -> Option<HostPlugin> {
        const MANIFEST: &str = "qwen/qwen-extension.json";
        let manifest = json!({
            "name": plugin::NAME,
            "version": env!("CARGO_PKG_VERSION"),
            "description": plugin::DESCRIPTION,
            "mcpServers": plugin::mcp_server(&[]),
            "hooks": {plugin::end_event(self.host()): [plugin::end_hook_group(self.host())]},
        });
        let files =
            vec![plugin::json_file(MANIFEST, &manifest), plugin::skill_at("qwen/skills/judged-review/SKILL.md")];
        Some(HostPlugin { hook_file: MANIFEST, extension_dir: Some(EXTENSION_DIR), files })
    }

    fn install_hint(&self) -> &'static str {
        "Qwen Code (`npm install -g @qwen-code/qwen-code`, then `qwen` to log in)"
    }

    /// None: Qwen Code is a juror preset (`qwen`), but `judged init` seats only the three
    /// families of `family::HOST_FAMILIES`, and a Qwen model's family is none of them.
    fn juror_models(&self, _family: &str) -> Option<(&'static str, &'static str)> {
        None
    }

    /// Its login is an OpenAI-compatible key, or Qwen's own OAuth file.
    fn login(&self, env: &dyn Fn(&str) -> Option<String>) -> Login {
        let credentials = env_dir(env, "QWEN_HOME", ".qwen").join("oauth_creds.json");
        Login::by(env, &["OPENAI_API_KEY", "DASHSCOPE_API_KEY"], &[credentials])
    }

    /// Qwen Code 0.24.4 lists extensions as text only (`✓ judged (0.1.0)`, then indented
    /// `Path:`, `Enabled (User):` … lines; `✗` for a disabled one).
    fn listing_args(&self) -> &'static [&'static str] {
        &["extensions", "list"]
    }

    fn parse_listing(&self, listing: &str) -> Result<Option<Listed>, serde_json::Error> {
        Ok(parse_text_listing(listing).map(|(enabled, version, path)| Listed {
            id: crate::plugin::NAME.to_owned(),
            version,
            enabled,
            hooks_file: path.and_then(|root| self.installed_hooks_file(&root)),
        }))
    }

    fn installed_id(&self) -> String {
        crate::plugin::NAME.to_owned()
    }

    /// An extension is a copy: one already there is uninstalled first.
    fn install_steps(&self, dir: &Path, before: Option<&Listed>) -> Vec<Step> {
        let extension = dir.join(EXTENSION_DIR);
        let uninstall = before.map(|_| step(&["extensions", "uninstall", crate::plugin::NAME]));
        let install = step(&["extensions", "install", &extension.to_string_lossy(), "--consent"]);
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
                path: qwen_settings_path(Some(cwd)),
                reinstall: "judged install-hooks --qwen --project",
            },
            SettingsFile {
                place: "user",
                path: qwen_settings_path(None),
                reinstall: "judged install-hooks --qwen --user",
            },
            // Root's system settings: they override the user's and the project's.
            SettingsFile {
                place: "managed",
                path: qwen_managed_path(),
                reinstall: "sudo judged install-hooks --qwen --managed",
            },
        ]
    }

    fn hooks_switch(&self) -> HooksSwitch {
        HooksSwitch::DisableAllHooks
    }

    fn managed(&self) -> Managed {
        Managed::Hooks
    }

    fn install_hook(&self, place: &HookPlace, hook: &HookSpec) -> Result<Option<install::Plan>, CliError> {
        let managed = place.target.managed;
        let settings = match managed {
            true => qwen_managed_path(),
            false => qwen_settings_path(place.project.as_deref()),
        };
        if managed {
            place.needs_root(&settings, self.program())?;
        }
        // Every user's Qwen Code runs a managed hook, with their own PATH: named by its path.
        let committed = Some(settings.as_path()).filter(|_| place.project.is_some() && !managed);
        let command = hook.command(hook.absolute || managed, committed)?;
        Ok(Some(qwen_install(&settings, &command, hook.events, hook.timeout, managed)?))
    }

    fn uninstall_hook(&self, place: &HookPlace) -> Result<install::Plan, CliError> {
        if place.target.managed {
            let settings = qwen_managed_path();
            place.needs_root(&settings, self.program())?;
            return Ok(qwen_uninstall(&settings, true)?);
        }
        Ok(qwen_uninstall(&qwen_settings_path(place.project.as_deref()), false)?)
    }
}

/// judged in `qwen extensions list`: whether it is enabled, its version and its path.
fn parse_text_listing(listing: &str) -> Option<(bool, String, Option<PathBuf>)> {
    let ours = |line: &str| {
        let name = line.strip_prefix("✓ ").or_else(|| line.strip_prefix("✗ "));
        name.and_then(|n| n.split_once(" (")).is_some_and(|(name, _)| name == crate::plugin::NAME)
    };
    let mut lines = listing.lines().skip_while(|line| !ours(line));
    let head = lines.next()?;
    let enabled = head.starts_with('✓');
    let version = head.rsplit_once(" (")?.1.trim_end().trim_end_matches(')').to_owned();
    let path = lines
        .take_while(|line| line.starts_with(' '))
        .find_map(|line| line.trim_start().strip_prefix("Path: "))
        .map(PathBuf::from);
    Some((enabled, version, path))
}

/// Qwen Code's settings: `$QWEN_HOME/settings.json` (else `~/.qwen/settings.json`) for the
/// user, `<project>/.qwen/settings.json` for a project (which it reads only in a folder the
/// user trusts).
fn qwen_settings_path(project: Option<&Path>) -> PathBuf {
    match project {
        Some(project) => project.join(".qwen/settings.json"),
        None => qwen_home().join("settings.json"),
    }
}

/// Qwen Code's own directory: `$QWEN_HOME`, else `~/.qwen`.
fn qwen_home() -> PathBuf {
    std::env::var_os("QWEN_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| judged_io::files::home_dir().join(".qwen"), PathBuf::from)
}

/// Qwen Code's system settings, root's: `$QWEN_CODE_SYSTEM_SETTINGS_PATH`, else
/// `/etc/qwen-code/settings.json`. They override user and project settings, and their
/// hooks run whatever folder the user trusts.
fn qwen_managed_path() -> PathBuf {
    std::env::var_os("QWEN_CODE_SYSTEM_SETTINGS_PATH").filter(|v| !v.is_empty()).map_or_else(
        || {
            let base =
                if cfg!(target_os = "macos") { "/Library/Application Support/QwenCode" } else { "/etc/qwen-code" };
            Path::new(base).join("settings.json")
        },
        PathBuf::from,
    )
}

/// Add our hook of each of `events` (Qwen Code's `Stop`) to a Qwen Code settings file
/// (Claude Code's shape, timeout in seconds; comments allowed, as Gemini CLI's). In its
/// system settings, `disableAllHooks: false` too: the system's value overrides a user's
/// or a project's `disableAllHooks: true`.
fn qwen_install(
    settings: &Path,
    command: &str,
    events: &[HookEvent],
    timeout_seconds: u64,
    managed: bool,
) -> Result<install::Plan, install::InstallError> {
    let top = managed.then_some((QWEN_HOOKS_OFF, Some(serde_json::Value::Bool(false))));
    install::command_hooks_install(settings, install::Syntax::JsonWithComments, command, events, timeout_seconds, top)
}

/// Remove our hooks from a Qwen Code settings file (and, from its system settings, the
/// `disableAllHooks` we wrote); the file too when nothing else is left in it but the
/// `$version` Qwen Code 0.24.4 adds to a settings file it loads.
fn qwen_uninstall(settings: &Path, managed: bool) -> Result<install::Plan, install::InstallError> {
    let top = managed.then_some(QWEN_HOOKS_OFF);
    install::command_hooks_uninstall_from(settings, install::Syntax::JsonWithComments, top, &["$version"])
}

/// Qwen Code's setting that turns every hook off.
const QWEN_HOOKS_OFF: &str = "disableAllHooks";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::tests::end;

    /// What Qwen Code 0.24.4 printed for `qwen extensions list` with judged installed and
    /// then disabled for the user.
    const LISTED: &str = "✓ judged (0.1.0)\n Path: /h/.qwen/extensions/judged\n Source: /p/qwen (Type: local)\n \
                          Origin: QwenCode\n Enabled (User): true\n Enabled (Workspace): true\n";

    #[test]
    fn the_text_listing_says_whether_judged_is_there_and_enabled() {
        let (enabled, version, path) = parse_text_listing(LISTED).unwrap();
        assert!(enabled);
        assert_eq!((version.as_str(), path), ("0.1.0", Some(PathBuf::from("/h/.qwen/extensions/judged"))));
        let disabled = LISTED.replacen('✓', "✗", 1);
        assert!(!parse_text_listing(&disabled).unwrap().0);
        assert_eq!(parse_text_listing("No extensions installed.\n"), None);
        let other = "✓ judged-not (1.0.0)\n Path: /x\n";
        assert_eq!(parse_text_listing(other), None, "another extension whose name starts with ours is not judged");
    }

    /// Qwen Code's settings: the Stop hook in seconds; in its system settings, hooks forced
    /// on; taken out again, the file goes when Qwen Code's own `$version` is all that is
    /// left, and stays with a user's setting.
    #[test]
    fn a_qwen_hook_goes_in_and_out_leaving_the_users_settings() {
        let dir = tempfile::tempdir().unwrap();
        let system = dir.path().join("settings.json");
        qwen_install(&system, "judge-hook --host qwen-code", &end(Host::QwenCode), 120, true).unwrap().apply().unwrap();
        let written: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&system).unwrap()).unwrap();
        assert_eq!(written["hooks"]["Stop"][0]["hooks"][0]["timeout"], 120);
        assert_eq!(written["disableAllHooks"], false);
        // What Qwen Code 0.24.4 does to a settings file it loads.
        let loaded = std::fs::read_to_string(&system).unwrap().replacen('{', "{\n  \"$version\": 4,", 1);
        std::fs::write(&system, loaded).unwrap();
        qwen_uninstall(&system, true).unwrap().apply().unwrap();
        assert!(!system.exists(), "nothing of anyone's was left");

        let user = dir.path().join("user.json");
        std::fs::write(&user, "{\n  // mine\n  \"$version\": 4,\n  \"model\": {\"name\": \"qwen3-coder-plus\"}\n}\n")
            .unwrap();
        let before = std::fs::read_to_string(&user).unwrap();
        qwen_install(&user, "judge-hook --host qwen-code", &end(Host::QwenCode), 120, false).unwrap().apply().unwrap();
        assert!(!std::fs::read_to_string(&user).unwrap().contains("disableAllHooks"));
        qwen_uninstall(&user, false).unwrap().apply().unwrap();
        assert_eq!(std::fs::read_to_string(&user).unwrap(), before, "the user's file, byte for byte");
    }
}
