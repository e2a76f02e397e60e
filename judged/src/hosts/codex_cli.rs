//! Codex CLI (`codex`): a plugin from a local marketplace; its hook in a `hooks.json` (a
//! project's or the user's) or root's managed requirements. Codex runs a command hook
//! only once its `config.toml` trusts it, so the trust is a step of the install here, and
//! what Codex itself lists (`codex app-server`'s `hooks/list`) says whether it runs.

use super::{
    HookPlace, HookSpec, HostCliError, HostSetup, LISTING_DEADLINE, Listed, Login, Managed, SettingsFile, Step,
    env_dir, shown, step,
};
use crate::CliError;
use crate::install;
use crate::plugin::{self, HostPlugin};
use judged_core::adapter::HookEvent;
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
            codex_config_path().display()
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
                path: codex_hooks_path(Some(cwd)),
                reinstall: "judged install-hooks --codex --project",
            },
            SettingsFile {
                place: "user",
                path: codex_hooks_path(None),
                reinstall: "judged install-hooks --codex --user",
            },
            // Root's managed requirements (TOML): their hooks run without trust.
            SettingsFile {
                place: "managed",
                path: codex_managed_path(),
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
        let hooks = codex_hooks_path(place.project.as_deref());
        let committed = Some(hooks.as_path()).filter(|_| place.project.is_some());
        let command = hook.command(hook.absolute, committed)?;
        check_codex_config()?;
        // Codex names the hook it trusts after the file that holds it: written first.
        install::carry_out(install::json_hooks_install(&hooks, &command, hook.events, hook.timeout)?, place.dry_run)?;
        let cwd =
            place.project.clone().unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")));
        trust_codex_hook(CodexHookSource::File(&hooks), &cwd, place.dry_run)?;
        Ok(None)
    }

    fn uninstall_hook(&self, place: &HookPlace) -> Result<install::Plan, CliError> {
        if place.target.managed {
            let requirements = codex_managed_path();
            place.needs_root(&requirements, self.program())?;
            return Ok(codex_managed_uninstall(&requirements)?);
        }
        let hooks = codex_hooks_path(place.project.as_deref());
        let untrust = codex_untrust(&codex_config_path(), CodexHookSource::File(&hooks))?;
        install::carry_out(untrust, place.dry_run)?;
        Ok(install::json_hooks_uninstall(&hooks)?)
    }
}

/// Codex CLI's managed requirements with our hook, and the managed hook directory they
/// name (which Codex CLI needs to exist).
fn managed_install(place: &HookPlace, hook: &HookSpec) -> Result<install::Plan, CliError> {
    let requirements = codex_managed_path();
    place.needs_root(&requirements, "codex")?;
    // Every user's Codex CLI runs it, with their own PATH: named by its path.
    let command = hook.command(true, None)?;
    let managed_dir = codex_managed_dir();
    if !place.dry_run {
        std::fs::create_dir_all(&managed_dir).map_err(|source| install::InstallError::Io {
            action: "create",
            path: managed_dir.clone(),
            source,
        })?;
    }
    let only = place.target.managed_only;
    Ok(codex_managed_install(&requirements, &command, hook.events, hook.timeout, only)?)
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
            let trust = codex_trust(&codex_config_path(), source, &hook.key, &hook.current_hash)?;
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

/// Codex CLI's hooks file: `$CODEX_HOME/hooks.json` (else `~/.codex/hooks.json`) for the
/// user, `<project>/.codex/hooks.json` for a project (which Codex loads only in a project
/// it trusts).
fn codex_hooks_path(project: Option<&Path>) -> PathBuf {
    match project {
        Some(project) => project.join(".codex/hooks.json"),
        None => codex_home().join("hooks.json"),
    }
}

/// `$CODEX_HOME`, else `~/.codex`: where Codex keeps the user's `config.toml`, which holds
/// the trust of every hook, the project's included.
fn codex_home() -> PathBuf {
    std::env::var_os("CODEX_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| judged_io::files::home_dir().join(".codex"), PathBuf::from)
}

/// Refuse a Codex CLI `config.toml` that does not parse, naming its line, before anything
/// is written: Codex does not start on it, so it could neither list nor run the hook (its
/// app-server would only say it lists none).
fn check_codex_config() -> Result<(), install::InstallError> {
    install::read_user_file(&codex_config_path())?.toml().map(drop)
}

/// Codex CLI's user config, which holds the trust of every hook.
pub fn codex_config_path() -> PathBuf {
    codex_home().join("config.toml")
}

/// Codex CLI's managed requirements: root's, read by every Codex CLI on the machine. What
/// they pin holds over the user's config and the command line (`[features] hooks = true`
/// over `hooks = false` and `--disable hooks`, as the real client shows), and their hooks
/// run without the trust a user's hook needs.
fn codex_managed_path() -> PathBuf {
    PathBuf::from("/etc/codex/requirements.toml")
}

/// The directory managed hooks name in the requirements: Codex CLI skips them unless it
/// exists.
fn codex_managed_dir() -> PathBuf {
    PathBuf::from("/etc/codex/hooks")
}

/// The first line of the requirements file judged writes, so that uninstall removes it
/// (and only it).
const CODEX_MANAGED_MARK: &str =
    "# Written by `judged install-hooks --codex --managed`; `judged uninstall-hooks --codex --managed` removes it.";

/// Codex CLI's managed requirements at `path` ([`codex_managed_path`]) holding our `Stop`
/// hook, with hooks pinned on, and `allow_managed_hooks_only` when `only`. A requirements
/// file judged did not write is left alone: the lines to add are named instead.
fn codex_managed_install(
    path: &Path,
    command: &str,
    events: &[HookEvent],
    timeout_seconds: u64,
    only: bool,
) -> Result<install::Plan, install::InstallError> {
    let file = install::read_user_file(path)?;
    let ours = codex_requirements(command, events, timeout_seconds, only);
    if file.text.as_deref().is_some_and(|text| !text.starts_with(CODEX_MANAGED_MARK)) {
        return Err(install::InstallError::RequirementsTheirs { path: path.to_owned(), add: ours });
    }
    Ok(install::Plan::new(file, Some(format!("{CODEX_MANAGED_MARK}\n{ours}"))))
}

/// Remove the requirements file judged wrote; one it did not write stays.
fn codex_managed_uninstall(path: &Path) -> Result<install::Plan, install::InstallError> {
    let file = install::read_user_file(path)?;
    let after = file.text.clone().filter(|text| !text.starts_with(CODEX_MANAGED_MARK));
    Ok(install::Plan::new(file, after))
}

fn codex_requirements(command: &str, events: &[HookEvent], timeout_seconds: u64, only: bool) -> String {
    let only = if only { "allow_managed_hooks_only = true\n\n" } else { "" };
    let command = toml::Value::String(command.to_owned());
    let hooks: String = events
        .iter()
        .map(|event| {
            format!(
                "\n[[hooks.{event}]]\n[[hooks.{event}.hooks]]\ntype = \"command\"\ncommand = {command}\n\
                 timeout = {timeout_seconds}\n"
            )
        })
        .collect();
    format!(
        "{only}[features]\nhooks = true\n\n[hooks]\nmanaged_dir = {}\n{hooks}",
        toml::Value::String(codex_managed_dir().display().to_string()),
    )
}

/// Where a hook Codex CLI is to trust comes from: a hooks file judged wrote, or the
/// plugin. Codex's `config.toml` names each hook by a key that starts with its source.
#[derive(Clone, Copy, Debug)]
pub enum CodexHookSource<'a> {
    File(&'a Path),
    Plugin,
}

impl CodexHookSource<'_> {
    /// How the keys of its hooks start: `<file>:` or `judged@judged:`.
    pub fn key_prefix(&self) -> String {
        match self {
            CodexHookSource::File(file) => format!("{}:", file.display()),
            CodexHookSource::Plugin => format!("{}:", crate::plugin::marketplace_id()),
        }
    }
}

impl std::fmt::Display for CodexHookSource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CodexHookSource::File(file) => write!(f, "{}", file.display()),
            CodexHookSource::Plugin => write!(f, "the plugin {}", crate::plugin::marketplace_id()),
        }
    }
}

/// The line that opens the table judged writes into Codex's `config.toml`, so that
/// uninstall finds it (and only it).
const CODEX_TRUST_MARK: &str =
    "# judged install-hooks: Codex runs judge-hook only once trusted; uninstall-hooks removes this table";

/// The hashes Codex CLI's `config.toml` trusts for a hook: `trusted_hash`, and for a
/// plugin's hook the plugin content's `trusted_content_hash` (`hooks/list` shows the two
/// as one `currentHash`, `<hook>/<content>`; Codex's own `/hooks` writes them apart).
fn trusted_hashes(current_hash: &str) -> [(&'static str, Option<&str>); 2] {
    let (hook, content) = current_hash.split_once('/').map_or((current_hash, None), |(h, c)| (h, Some(c)));
    [("trusted_hash", Some(hook)), ("trusted_content_hash", content)]
}

/// Trust our hook from `source` in Codex CLI's `config.toml` (`[hooks.state."<key>"]`
/// with the hashes Codex lists for it), in a table of our own at the end, replacing one
/// an earlier install wrote for that source.
fn codex_trust(
    config: &Path,
    source: CodexHookSource,
    key: &str,
    current_hash: &str,
) -> Result<install::Plan, install::InstallError> {
    let file = install::read_user_file(config)?;
    // A file that does not parse is not edited (Codex would not start on it either).
    file.toml()?;
    let kept = without_our_trust(file.text.as_deref().unwrap_or_default(), source);
    let parsed = install::parse_toml(config, &kept)?;
    let hashes = trusted_hashes(current_hash);
    if let Some(state) = parsed.get("hooks").and_then(|h| h.get("state")).and_then(|s| s.get(key)) {
        let held = |name: &str| state.get(name).and_then(toml::Value::as_str);
        // Trusted already (in Codex's /hooks): nothing of ours is needed.
        if hashes.iter().all(|(name, hash)| held(name) == *hash) {
            return Ok(install::Plan::new(file, Some(kept)));
        }
        return Err(install::InstallError::TrustedElsewhere { path: config.to_owned(), key: key.to_owned() });
    }
    // One newline before the table: a blank line after a last line that has its own, or
    // the end of one that had none; [`without_our_trust`] takes exactly it away again.
    let separator = if kept.is_empty() { "" } else { "\n" };
    let mut table = format!("{separator}{CODEX_TRUST_MARK}\n[hooks.state.{}]\n", toml::Value::from(key));
    for (name, hash) in hashes {
        if let Some(hash) = hash {
            table.push_str(&format!("{name} = {}\n", toml::Value::from(hash)));
        }
    }
    let after = format!("{kept}{table}");
    // Where the file writes `hooks` or `hooks.state` inline, a table header for them
    // declares it twice: Codex would not start on the file.
    if let Err(error) = after.parse::<toml::Table>() {
        return Err(install::InstallError::TrustNotAddable {
            path: config.to_owned(),
            reason: error.message().to_owned(),
        });
    }
    Ok(install::Plan::new(file, Some(after)))
}

/// Remove the trust table judged wrote for our hook from `source` in Codex CLI's
/// `config.toml`, and nothing else.
fn codex_untrust(config: &Path, source: CodexHookSource) -> Result<install::Plan, install::InstallError> {
    let file = install::read_user_file(config)?;
    file.toml()?;
    // A file that held only our table was made by the install: it goes with it.
    let after = file.text.as_deref().map(|text| without_our_trust(text, source));
    let after = after.and_then(|text| file.leftover(text.clone(), text.is_empty()));
    Ok(install::Plan::new(file, after))
}

/// `text` without our trust tables for hooks from `source`: each one's mark, its header,
/// the `trusted_…` lines under it, and the one newline written before them.
fn without_our_trust(text: &str, source: CodexHookSource) -> String {
    let header = format!("[hooks.state.{}", toml::Value::from(source.key_prefix()));
    let header = header.trim_end_matches('"');
    let mut text = text.to_owned();
    let mut from = 0;
    while let Some(at) = text[from..].find(CODEX_TRUST_MARK).map(|i| from + i) {
        // The mark's line, the header's, then every `trusted_…` line that follows.
        let mut lines = text[at..].split_inclusive('\n');
        let mut end = at;
        for (n, line) in lines.by_ref().enumerate() {
            if n >= 2 && !line.starts_with("trusted_") {
                break;
            }
            end += line.len();
        }
        let ours = text[at + CODEX_TRUST_MARK.len()..end].trim_start().starts_with(header);
        if !ours {
            from = end;
            continue;
        }
        let start = if at > 0 && text.as_bytes()[at - 1] == b'\n' { at - 1 } else { at };
        text.replace_range(start..end, "");
        from = start;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::install::tests::{end, round_trip};
    use std::fs;

    /// Codex CLI's managed requirements are written whole when there are none, with hooks
    /// pinned on (and only managed ones when asked), and removed whole; requirements of
    /// someone else's are left alone, and the lines to add are named.
    #[test]
    fn codex_managed_requirements_are_ours_whole_or_not_written() {
        assert_eq!(codex_managed_path(), Path::new("/etc/codex/requirements.toml"));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requirements.toml");
        let command = "/usr/local/bin/judge-hook --host codex-cli --timeout 110";
        for only in [false, true] {
            round_trip(
                &path,
                None,
                || codex_managed_install(&path, command, &end(Host::CodexCli), 120, only).unwrap(),
                || codex_managed_uninstall(&path).unwrap(),
            );
        }
        codex_managed_install(&path, command, &end(Host::CodexCli), 120, true).unwrap().apply().unwrap();
        let written: toml::Table = toml::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(written["allow_managed_hooks_only"].as_bool(), Some(true));
        assert_eq!(written["features"]["hooks"].as_bool(), Some(true));
        assert_eq!(written["hooks"]["managed_dir"].as_str(), Some("/etc/codex/hooks"));
        assert_eq!(written["hooks"]["Stop"][0]["hooks"][0]["command"].as_str(), Some(command));
        let theirs = "[features]\nweb_search = false\n";
        fs::write(&path, theirs).unwrap();
        let error = codex_managed_install(&path, command, &end(Host::CodexCli), 120, false).unwrap_err().to_string();
        assert!(error.contains("add these lines to it yourself") && error.contains(command), "{error}");
        assert!(codex_managed_uninstall(&path).unwrap().after.as_deref() == Some(theirs), "theirs stays");
    }

    /// A hook as `codex app-server` lists it: its key and current hash.
    struct Listed {
        key: String,
        current_hash: String,
    }

    fn listed(key: &str, current_hash: &str) -> Listed {
        Listed { key: key.into(), current_hash: current_hash.into() }
    }

    #[test]
    fn codex_trust_round_trips_to_the_same_bytes_and_keeps_other_tables() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let file = Path::new("/home/me/.codex/hooks.json");
        let other = "# judged install-hooks: Codex runs judge-hook only once trusted; uninstall-hooks removes this table\n\
                     [hooks.state.\"/p/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:cd34\"\n";
        let sources = [
            (CodexHookSource::File(file), listed("/home/me/.codex/hooks.json:stop:0:0", "sha256:ab12")),
            (CodexHookSource::Plugin, listed("judged@judged:hooks/codex-cli.json:stop:0:0", "sha256:ab12/sha256:c0de")),
        ];
        for (source, hook) in &sources {
            // (An empty config.toml is not kept: what is left of one the install made is empty.)
            for text in [
                Some("model = \"gpt-5.5\"\n"),
                Some("model = \"gpt-5.5\""),
                Some("model = \"gpt-5.5\"\n\n"),
                Some(other),
                None,
            ] {
                let _ = fs::remove_file(&config);
                round_trip(
                    &config,
                    text,
                    || codex_trust(&config, *source, &hook.key, &hook.current_hash).unwrap(),
                    || codex_untrust(&config, *source).unwrap(),
                );
            }
        }
        let (source, hook) = &sources[0];
        let _ = fs::remove_file(&config);
        codex_trust(&config, *source, &hook.key, &hook.current_hash).unwrap().apply().unwrap();
        let table: toml::Table = toml::from_str(&fs::read_to_string(&config).unwrap()).unwrap();
        assert_eq!(table["hooks"]["state"][hook.key.as_str()]["trusted_hash"].as_str(), Some("sha256:ab12"));
        let moved = listed(&hook.key, "sha256:ef56");
        codex_trust(&config, *source, &moved.key, &moved.current_hash).unwrap().apply().unwrap();
        let text = fs::read_to_string(&config).unwrap();
        assert!(text.contains("sha256:ef56") && !text.contains("sha256:ab12"), "our own table is replaced: {text}");
    }

    #[test]
    fn a_plugin_hook_is_trusted_with_both_of_its_hashes() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let hook = listed("judged@judged:hooks/codex-cli.json:stop:0:0", "sha256:ab12/sha256:c0de");
        codex_trust(&config, CodexHookSource::Plugin, &hook.key, &hook.current_hash).unwrap().apply().unwrap();
        let table: toml::Table = toml::from_str(&fs::read_to_string(&config).unwrap()).unwrap();
        let state = &table["hooks"]["state"][hook.key.as_str()];
        assert_eq!(state["trusted_hash"].as_str(), Some("sha256:ab12"));
        assert_eq!(state["trusted_content_hash"].as_str(), Some("sha256:c0de"));
        assert!(
            !codex_trust(&config, CodexHookSource::Plugin, &hook.key, &hook.current_hash).unwrap().changes(),
            "trusted already"
        );
    }

    #[test]
    fn a_hook_someone_else_trusted_is_left_alone_and_said() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.toml");
        let source = CodexHookSource::File(Path::new("/h/hooks.json"));
        let hook = listed("/h/hooks.json:stop:0:0", "sha256:ab12");
        fs::write(&config, "[hooks.state.\"/h/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:ab12\"\n").unwrap();
        assert!(!codex_trust(&config, source, &hook.key, &hook.current_hash).unwrap().changes(), "trusted already");
        fs::write(&config, "[hooks.state.\"/h/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:0ld\"\n").unwrap();
        let error = codex_trust(&config, source, &hook.key, &hook.current_hash).err().unwrap().to_string();
        assert!(
            error.contains("already trusts `/h/hooks.json:stop:0:0` with another hash") && error.contains("/hooks"),
            "{error}"
        );
        fs::write(&config, "model = [").unwrap();
        let error = codex_trust(&config, source, &hook.key, &hook.current_hash).err().unwrap().to_string();
        assert!(error.contains("config.toml:1:10: not valid TOML") && error.contains("fix it"), "{error}");
        // Trust written inline: a table of judged's after it would declare hooks.state twice,
        // and Codex would not start on the file.
        let inline = "[hooks]\nstate = { \"other:stop:0:0\" = { trusted_hash = \"sha256:99\" } }\n";
        fs::write(&config, inline).unwrap();
        let error = codex_trust(&config, source, &hook.key, &hook.current_hash).err().unwrap().to_string();
        assert!(error.contains("a table of judged's cannot be added to") && error.contains("/hooks"), "{error}");
        assert_eq!(fs::read_to_string(&config).unwrap(), inline, "the file is left as it was");
    }

    /// A Codex CLI hooks file goes back to the same bytes after an install and an
    /// uninstall, and one the install made goes away.
    #[test]
    fn codex_hooks_round_trip_to_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \
                      \"command\": \"their-stop\",\n            \"type\": \"command\"\n          }\n        ]\n      }\n    \
                      ]\n  },\n  \"model\": \"gemini-2.5-pro\"\n}\n";
        let hooks = dir.path().join("hooks.json");
        let command = "judge-hook --host codex-cli --timeout 110";
        for text in [Some(theirs), None] {
            let _ = fs::remove_file(&hooks);
            round_trip(
                &hooks,
                text,
                || install::json_hooks_install(&hooks, command, &end(Host::CodexCli), 120).unwrap(),
                || install::json_hooks_uninstall(&hooks).unwrap(),
            );
        }
    }
}
