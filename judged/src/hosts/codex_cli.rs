//! Codex CLI (`codex`): a plugin from a local marketplace; its hook in a `hooks.json` (a
//! project's or the user's) or root's managed requirements. Codex runs a command hook
//! only once its `config.toml` trusts it, so the trust is a step of the install here, and
//! what Codex itself lists (`codex app-server`'s `hooks/list`) says whether it runs.

use super::{
    HookPlace, HookSpec, HostCliError, HostSetup, LISTING_DEADLINE, Listed, Login, Managed, SettingsFile, Step,
    env_dir, shown, step,
};
use crate::CliError;
use crate::install::{self, CodexHookSource};
use crate::plugin::{self, HostPlugin};
use judged_core::event::Host;
use judged_core::family;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

pub struct CodexCli;

/// `codex plugin list --json`.
#[derive(Deserialize)]
struct Plugins {
    installed: Vec<Plugin>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Plugin {
    plugin_id: String,
    version: String,
    installed: bool,
    enabled: bool,
}

impl HostSetup for CodexCli {
    fn host(&self) -> Host {
        Host::CodexCli
    }

    fn program(&self) -> &'static str {
        "codex"
    }

    fn title(&self) -> &'static str {
        "Codex CLI"
    }

    fn hook_settings(&self) -> &'static str {
        "Codex CLI `.codex/hooks.json` (its `Stop` hook), trusted in `$CODEX_HOME/config.toml`"
    }

    /// `.codex-plugin/plugin.json`, read before `.claude-plugin/plugin.json`; its
    /// `marketplace add` reads `.claude-plugin/marketplace.json`.
    fn plugin(&self) -> Option<HostPlugin> {
        const HOOK_FILE: &str = "hooks/codex-cli.json";
        let manifest = plugin::manifest(
            json!({"hooks": format!("./{HOOK_FILE}"), "mcpServers": "./.mcp.json", "skills": "./skills/"}),
        );
        let files = vec![
            plugin::json_file(".codex-plugin/plugin.json", &manifest),
            plugin::json_file(HOOK_FILE, &plugin::hook_file(self.host(), plugin::end_hook_group(self.host()))),
        ];
        Some(HostPlugin { hook_file: HOOK_FILE, extension_dir: None, files })
    }

    fn install_hint(&self) -> &'static str {
        "Codex CLI (`npm install -g @openai/codex`, then `codex login`)"
    }

    fn juror_models(&self, family: &str) -> Option<(&'static str, &'static str)> {
        (family == family::OPENAI).then_some(("gpt-5.4-mini", "gpt-5.4"))
    }

    fn login(&self, env: &dyn Fn(&str) -> Option<String>) -> Login {
        let auth = env_dir(env, "CODEX_HOME", ".codex").join("auth.json");
        Login::by(env, &["OPENAI_API_KEY", "CODEX_API_KEY"], &[auth])
    }

    fn listing_args(&self) -> &'static [&'static str] {
        &["plugin", "list", "--json"]
    }

    /// The listing says nothing of the hook's file: whether Codex runs the hook is for
    /// [`codex_hooks`] to say.
    fn parse_listing(&self, listing: &str) -> Result<Option<Listed>, serde_json::Error> {
        let plugins: Plugins = serde_json::from_str(listing)?;
        let ours = |p: &Plugin| p.plugin_id == crate::plugin::marketplace_id() && p.installed;
        Ok(plugins.installed.into_iter().find(ours).map(|p| Listed {
            id: p.plugin_id,
            version: p.version,
            enabled: p.enabled,
            hooks_file: None,
        }))
    }

    fn install_steps(&self, dir: &Path, _before: Option<&Listed>) -> Vec<Step> {
        let dir = dir.to_string_lossy();
        vec![step(&["plugin", "marketplace", "add", &dir]), step(&["plugin", "add", &self.installed_id()])]
    }

    fn enable_hint(&self, _bin: &str) -> String {
        format!(
            "set `enabled = true` under [plugins.\"{}\"] in {}",
            crate::plugin::marketplace_id(),
            install::codex_config_path().display()
        )
    }

    fn uninstall_hint(&self, bin: &str) -> String {
        format!("{bin} plugin remove {}", crate::plugin::marketplace_id())
    }

    fn trusts_hooks(&self) -> bool {
        true
    }

    fn settings_files(&self, cwd: &Path) -> Vec<SettingsFile> {
        vec![
            SettingsFile {
                place: "project",
                path: install::codex_hooks_path(Some(cwd)),
                reinstall: "judged install-hooks --codex --project",
            },
            SettingsFile {
                place: "user",
                path: install::codex_hooks_path(None),
                reinstall: "judged install-hooks --codex --user",
            },
            // Root's managed requirements (TOML): their hooks run without trust.
            SettingsFile {
                place: "managed",
                path: install::codex_managed_path(),
                reinstall: "sudo judged install-hooks --codex --managed",
            },
        ]
    }

    fn managed(&self) -> Managed {
        Managed::HooksOnly
    }

    fn install_hook(&self, place: &HookPlace, hook: &HookSpec) -> Result<Option<install::Plan>, CliError> {
        if place.target.managed {
            return managed_install(place, hook).map(Some);
        }
        let hooks = install::codex_hooks_path(place.project.as_deref());
        let committed = Some(hooks.as_path()).filter(|_| place.project.is_some());
        let command = hook.command(hook.absolute, committed)?;
        install::check_codex_config()?;
        // Codex names the hook it trusts after the file that holds it: written first.
        install::carry_out(install::codex_install(&hooks, &command, hook.events, hook.timeout)?, place.dry_run)?;
        let cwd =
            place.project.clone().unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")));
        trust_codex_hook(CodexHookSource::File(&hooks), &cwd, place.dry_run)?;
        Ok(None)
    }

    fn uninstall_hook(&self, place: &HookPlace) -> Result<install::Plan, CliError> {
        if place.target.managed {
            let requirements = install::codex_managed_path();
            place.needs_root(&requirements, self.program())?;
            return Ok(install::codex_managed_uninstall(&requirements)?);
        }
        let hooks = install::codex_hooks_path(place.project.as_deref());
        let untrust = install::codex_untrust(&install::codex_config_path(), CodexHookSource::File(&hooks))?;
        install::carry_out(untrust, place.dry_run)?;
        Ok(install::codex_uninstall(&hooks)?)
    }
}

/// Codex CLI's managed requirements with our hook, and the managed hook directory they
/// name (which Codex CLI needs to exist).
fn managed_install(place: &HookPlace, hook: &HookSpec) -> Result<install::Plan, CliError> {
    let requirements = install::codex_managed_path();
    place.needs_root(&requirements, "codex")?;
    // Every user's Codex CLI runs it, with their own PATH: named by its path.
    let command = hook.command(true, None)?;
    let managed_dir = install::codex_managed_dir();
    if !place.dry_run {
        std::fs::create_dir_all(&managed_dir).map_err(|source| install::InstallError::Io {
            action: "create",
            path: managed_dir.clone(),
            source,
        })?;
    }
    let only = place.target.managed_only;
    Ok(install::codex_managed_install(&requirements, &command, hook.events, hook.timeout, only)?)
}

/// Trust the Codex CLI hook just written (from `source`), as Codex itself identifies it
/// for `cwd`; when Codex cannot be asked, say how to trust it by hand (the hook stays
/// written). Returns whether it is trusted.
pub fn trust_codex_hook(source: CodexHookSource, cwd: &Path, dry_run: bool) -> Result<bool, CliError> {
    let by_hand = "Codex runs a command hook only once it is trusted: start `codex`, open /hooks and trust \
                   judge-hook's Stop hook, or run install-hooks again with `codex` on PATH to have it trusted";
    if dry_run {
        println!("then: the hook's trust in $CODEX_HOME/config.toml, as `codex app-server` identifies it");
        return Ok(false);
    }
    let Some(codex) = install::find_on_path("codex", std::env::var_os("PATH").as_deref()) else {
        eprintln!("judged: warning: `codex` is not on PATH. {by_hand}.");
        return Ok(false);
    };
    match codex_hook_id(&codex, cwd, source) {
        Ok(hook) => {
            let trust = install::codex_trust(&install::codex_config_path(), source, &hook.key, &hook.current_hash)?;
            install::carry_out(trust, dry_run)?;
            Ok(true)
        }
        Err(why) => {
            eprintln!("judged: warning: the hook is written but not trusted: {why}. {by_hand}.");
            Ok(false)
        }
    }
}

/// Whether Codex CLI runs a hook: its `hooks/list` `trustStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CodexTrust {
    /// Trusted in `config.toml` with the hash it has now.
    Trusted,
    /// From managed requirements: runs without trust.
    Managed,
    /// Never trusted: Codex skips it.
    Untrusted,
    /// Trusted once, changed since: Codex skips it.
    Modified,
}

impl CodexTrust {
    pub fn runs(self) -> bool {
        matches!(self, CodexTrust::Trusted | CodexTrust::Managed)
    }
}

/// One hook as `codex app-server` lists it for a directory.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CodexHook {
    /// How `config.toml` names it: `<file>:stop:<group>:<handler>`, or
    /// `<plugin>@<marketplace>:<file in the plugin>:stop:…` for a plugin's.
    pub key: String,
    pub event_name: String,
    #[serde(default)]
    pub command: Option<String>,
    pub source_path: PathBuf,
    #[serde(default)]
    pub plugin_id: Option<String>,
    pub enabled: bool,
    /// The hash `config.toml` must trust: `sha256:…`, or for a plugin's hook
    /// `sha256:<hook>/sha256:<content>`.
    pub current_hash: String,
    pub trust_status: CodexTrust,
}

impl CodexHook {
    /// Whether it runs judge-hook.
    pub fn is_ours(&self) -> bool {
        self.command.as_deref().is_some_and(|c| c.contains("judge-hook"))
    }
}

/// Every hook Codex CLI (`codex`) loads for `project`, asked through `codex app-server`, its
/// own JSON-RPC API (the one its `/hooks` screen uses). The server must see its stdin open
/// until it has answered (it stops at the end of its input without answering), so this is
/// a dialog of its own rather than a [`super::run`].
pub fn codex_hooks(codex: &Path, project: &Path) -> Result<Vec<CodexHook>, HostCliError> {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    let command = shown(codex, &["app-server"]);
    let mut child = Command::new(codex)
        .arg("app-server")
        // It is asked about `project`, and runs elsewhere: see `neutral_dir`.
        .current_dir(super::neutral_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| HostCliError::Spawn { command: command.clone(), source })?;
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "judged", "version": env!("CARGO_PKG_VERSION")}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [project]}}),
    ];
    let mut stdin = child.stdin.take();
    let lines: String = requests.iter().map(|r| format!("{r}\n")).collect();
    let written = stdin.as_mut().map(|s| s.write_all(lines.as_bytes()));
    let (send, receive) = std::sync::mpsc::channel();
    if let (Some(stdout), Some(Ok(()))) = (child.stdout.take(), written) {
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(answer) = serde_json::from_str::<Value>(&line).ok().filter(|v| v["id"] == 2) {
                    let _ = send.send(answer);
                    return;
                }
            }
        });
    } else {
        // Nothing will answer (it exited before it was asked): say so now, not at the deadline.
        drop(send);
    }
    let answer = receive.recv_timeout(LISTING_DEADLINE);
    // It has said all that is asked of it.
    drop(stdin);
    let _ = child.kill();
    let exit = child.wait();
    let mut answer = match answer {
        Ok(answer) => answer,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            return Err(HostCliError::Deadline { command, seconds: LISTING_DEADLINE.as_secs() });
        }
        // Its output closed with no answer: it exited, or could not be written to.
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            let exit = exit.map_or_else(|e| e.to_string(), |status| status.to_string());
            let said = "it ended without listing its hooks".to_owned();
            return Err(HostCliError::Failed { command, exit, said });
        }
    };
    if answer.get("result").is_none() {
        return Err(HostCliError::NoHookList { command, said: answer["error"].to_string() });
    }
    #[derive(Deserialize)]
    struct Entry {
        hooks: Vec<CodexHook>,
    }
    let entries: Vec<Entry> = serde_json::from_value(answer["result"]["data"].take())
        .map_err(|source| HostCliError::Unreadable { command: command.clone(), source })?;
    Ok(entries.into_iter().flat_map(|e| e.hooks).collect())
}

/// Why Codex CLI could not say how it identifies our hook; the hook is written, and runs
/// once trusted in Codex's `/hooks`.
#[derive(Debug, thiserror::Error)]
pub enum CodexTrustError {
    #[error(transparent)]
    Asking(#[from] HostCliError),
    #[error("{} app-server lists no judge-hook Stop hook from {from}", codex.display())]
    NotListed { codex: PathBuf, from: String },
}

/// Ask Codex CLI how it identifies our `Stop` hook from `source`, as loaded for `cwd`.
/// Codex runs a non-managed command hook only once `config.toml` trusts its hash; the
/// hash is Codex's to compute, so it is asked, not recomputed here.
pub fn codex_hook_id(codex: &Path, cwd: &Path, source: CodexHookSource) -> Result<CodexHook, CodexTrustError> {
    let prefix = source.key_prefix();
    codex_hooks(codex, cwd)?
        .into_iter()
        .find(|h| h.is_ours() && h.event_name == "stop" && h.key.starts_with(&prefix))
        .ok_or_else(|| CodexTrustError::NotListed { codex: codex.to_owned(), from: source.to_string() })
}
