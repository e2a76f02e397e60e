//! `judged install-hooks`: register the `judge-hook` gate with a host, warning about
//! events the gate in force would not decide.

use super::carry_out;
use crate::hook_entry::HOOK_TIMEOUT_SECONDS;
use crate::hosts;
use crate::install::CodexHookSource;
use crate::{CliError, HookTarget};
use judged_core::event::Host;
use judged_daemon::config::ConfigError;
use judged_daemon::config::OnError;
use judged_daemon::hook_gate::GateSettings;
use judged_protocol::paths;
use std::path::{Path, PathBuf};

pub fn run(
    target: &HookTarget,
    events: Vec<String>,
    on_error: OnError,
    dry_run: bool,
    absolute: bool,
) -> Result<(), CliError> {
    let config_path = paths::config_path();
    let config = judged_daemon::config::ConfigFile::load(&config_path)?;
    let timeout = hook_timeout_seconds(&config, &config_path)?;
    let host = target.host();
    // Claude Code's events are the caller's to choose; the others' end has one event.
    let events = match host {
        Host::ClaudeCode => events,
        Host::CopilotCli => Vec::new(),
        _ => vec![judged_core::adapter::hooks(host).end_event().name.to_owned()],
    };
    let warning = ungated_events_warning(&config, &config_path, host, &events, &target.project_dir(), target.user)?;
    if let Some(warning) = warning {
        eprintln!("{warning}");
    }
    let project = target.project_files();
    if target.managed && host == Host::GeminiCli {
        return Err(CliError::ManagedNotFor(host));
    }
    // Only Claude Code's and Codex CLI's managed settings can turn the other hooks off.
    if target.managed_only && !matches!(host, Host::ClaudeCode | Host::CodexCli) {
        return Err(CliError::ManagedOnlyNotFor(hosts::of(host).title()));
    }
    if !target.managed {
        plugin_already_gates(host, project.is_none())?;
    }
    let plan = match host {
        Host::CopilotCli if target.managed => {
            let policy = crate::install::copilot_managed_path();
            needs_root(&policy, "copilot", dry_run)?;
            // Every user's Copilot CLI runs it, with their own PATH: named by its path.
            let command = hook_command(host.as_str(), on_error, timeout, true, None)?;
            crate::install::copilot_install(&policy, &command, timeout)?
        }
        Host::CopilotCli => {
            let committed = crate::install::copilot_path(&target.project_dir());
            let command = hook_command(host.as_str(), on_error, timeout, absolute, Some(&committed))?;
            crate::install::copilot_install(&committed, &command, timeout)?
        }
        Host::CodexCli if target.managed => codex_managed(on_error, timeout, target.managed_only, dry_run)?,
        Host::CodexCli => {
            let hooks = crate::install::codex_hooks_path(project.as_deref());
            let committed = Some(hooks.as_path()).filter(|_| project.is_some());
            let command = hook_command(host.as_str(), on_error, timeout, absolute, committed)?;
            crate::install::check_codex_config()?;
            let plan = crate::install::codex_install(&hooks, &command, timeout)?;
            carry_out(plan, dry_run)?;
            let cwd = project.clone().unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")));
            return trust_codex_hook(CodexHookSource::File(&hooks), &cwd, dry_run).map(drop);
        }
        Host::GeminiCli => {
            let settings = crate::install::gemini_settings_path(project.as_deref());
            let committed = Some(settings.as_path()).filter(|_| project.is_some());
            let command = hook_command(host.as_str(), on_error, timeout, absolute, committed)?;
            crate::install::gemini_install(&settings, &command, timeout)?
        }
        Host::QwenCode => {
            let settings = match target.managed {
                true => crate::install::qwen_managed_path(),
                false => crate::install::qwen_settings_path(project.as_deref()),
            };
            if target.managed {
                needs_root(&settings, "qwen", dry_run)?;
            }
            // Every user's Qwen Code runs a managed hook, with their own PATH: named by its path.
            let committed = Some(settings.as_path()).filter(|_| project.is_some() && !target.managed);
            let command = hook_command(host.as_str(), on_error, timeout, absolute || target.managed, committed)?;
            crate::install::qwen_install(&settings, &command, timeout, target.managed)?
        }
        // No flag names it: no hook can stop its end.
        Host::OpenCode => return Err(CliError::Ungated(hosts::of(host).title())),
        Host::ClaudeCode if target.managed => {
            let settings = target.claude_settings();
            needs_root(&settings, "claude", dry_run)?;
            // Every user's Claude Code runs it, with their own PATH: named by its path.
            let command = hook_command(host.as_str(), on_error, timeout, true, None)?;
            crate::install::claude_managed_install(&settings, &command, &events, timeout, target.managed_only)?
        }
        Host::ClaudeCode => {
            let settings = target.claude_settings();
            let committed = Some(settings.as_path()).filter(|_| !target.user);
            let command = hook_command(host.as_str(), on_error, timeout, absolute, committed)?;
            crate::install::claude_install(&settings, &command, &events, timeout)?
        }
    };
    carry_out(plan, dry_run)
}

/// Refuse a hook in the user's settings of a host that the judged plugin gates already,
/// as the host lists it: it would run judge-hook a second time at each end. A project's
/// file is the team's, so there it is said, not refused.
pub fn plugin_already_gates(host: Host, user: bool) -> Result<(), CliError> {
    let Some(bin) = crate::install::find_on_path(hosts::of(host).program(), std::env::var_os("PATH").as_deref()) else {
        return Ok(());
    };
    let Ok(Some(listed)) = hosts::judged_listed(host, &bin, &hosts::neutral_dir()) else { return Ok(()) };
    if !listed.enabled {
        return Ok(());
    }
    let gated = CliError::PluginGates {
        host: hosts::of(host).title(),
        listing: hosts::shown(&bin, hosts::of(host).listing_args()),
        id: listed.id,
        uninstall: hosts::of(host).uninstall_hint(&crate::install::shell_word(&bin.to_string_lossy())),
    };
    if user {
        return Err(gated);
    }
    eprintln!("judged: warning: {gated}; for you, this project's hook and the plugin would both run judge-hook");
    Ok(())
}

/// Codex CLI's managed requirements with our hook, and the managed hook directory they
/// name (which Codex CLI needs to exist).
fn codex_managed(on_error: OnError, timeout: u64, only: bool, dry_run: bool) -> Result<crate::install::Plan, CliError> {
    let requirements = crate::install::codex_managed_path();
    needs_root(&requirements, "codex", dry_run)?;
    // Every user's Codex CLI runs it, with their own PATH: named by its path.
    let command = hook_command(Host::CodexCli.as_str(), on_error, timeout, true, None)?;
    let managed_dir = crate::install::codex_managed_dir();
    if !dry_run {
        std::fs::create_dir_all(&managed_dir).map_err(|source| crate::install::InstallError::Io {
            action: "create",
            path: managed_dir.clone(),
            source,
        })?;
    }
    Ok(crate::install::codex_managed_install(&requirements, &command, timeout, only)?)
}

/// Refuse to write a host's managed settings (`path`) but as root: they are root's.
pub fn needs_root(path: &Path, host: &'static str, dry_run: bool) -> Result<(), CliError> {
    if judged_core::files::current_uid() == 0 || dry_run {
        return Ok(());
    }
    Err(crate::install::InstallError::NeedsRoot { path: path.to_owned(), host }.into())
}

/// The host's hook timeout: larger than the configured jury's whole deadline.
pub fn hook_timeout_seconds(config: &judged_daemon::config::ConfigFile, path: &Path) -> Result<u64, CliError> {
    match config.jury.as_ref().map(judged_jury::config::JuryConfig::validate) {
        None => Ok(HOOK_TIMEOUT_SECONDS),
        Some(Ok(jury)) => Ok(jury.hook_timeout_seconds().max(HOOK_TIMEOUT_SECONDS)),
        Some(Err(source)) => Err(ConfigError::Jury { path: path.to_path_buf(), source }.into()),
    }
}

/// A warning for each of `events` that the gate in force for `dir` does not decide: the
/// hook would run and allow it without a decision.
fn ungated_events_warning(
    config: &judged_daemon::config::ConfigFile,
    config_path: &Path,
    host: judged_core::event::Host,
    events: &[String],
    dir: &Path,
    user: bool,
) -> Result<Option<String>, CliError> {
    let gate = &config.gate;
    let settings = if user {
        gate.user_settings()
    } else {
        let dir = judged_core::files::resolve(&dir.to_string_lossy());
        gate.settings_for(Path::new(&dir), gate.project_trust(config.is_witness()))?
    };
    let ungated: Vec<&str> = events.iter().filter(|e| !settings.decides(host, e)).map(String::as_str).collect();
    if ungated.is_empty() {
        return Ok(None);
    }
    let (names, them) = (ungated.join(", "), if ungated.len() == 1 { "it" } else { "them" });
    Ok(Some(format!(
        "judged: warning: the gate decides only its [gate] events ({}), so {names} would be allowed without a \
         decision; add {names} to `events` under [gate] in {} to gate {them}",
        settings.events_listed(", "),
        config_path.display(),
    )))
}

/// The shim's command line, naming `judge-hook` as [`crate::install::hook_program`]
/// decides (by name when PATH finds it); its warnings go to stderr. `committed` is the
/// file it goes into when that is a project file that gets committed.
pub fn hook_command(
    host: &str,
    on_error: OnError,
    hook_timeout: u64,
    absolute: bool,
    committed: Option<&std::path::Path>,
) -> Result<String, CliError> {
    let beside =
        std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.join("judge-hook"))).filter(|p| p.is_file());
    let on_path = crate::install::find_on_path("judge-hook", std::env::var_os("PATH").as_deref());
    let shim = crate::install::hook_program(beside.as_deref(), on_path.as_deref(), absolute, committed)?;
    for warning in &shim.warnings {
        eprintln!("judged: warning: {warning}");
    }
    Ok(crate::hook_entry::shim_command(&shim.program, host, on_error == OnError::Allow, hook_timeout))
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
    let Some(codex) = crate::install::find_on_path("codex", std::env::var_os("PATH").as_deref()) else {
        eprintln!("judged: warning: `codex` is not on PATH. {by_hand}.");
        return Ok(false);
    };
    match crate::hosts::codex_hook_id(&codex, cwd, source) {
        Ok(hook) => {
            carry_out(
                crate::install::codex_trust(
                    &crate::install::codex_config_path(),
                    source,
                    &hook.key,
                    &hook.current_hash,
                )?,
                dry_run,
            )?;
            Ok(true)
        }
        Err(why) => {
            eprintln!("judged: warning: the hook is written but not trusted: {why}. {by_hand}.");
            Ok(false)
        }
    }
}
