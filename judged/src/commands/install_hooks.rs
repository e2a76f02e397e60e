//! `judged install-hooks`: register the `judge-hook` gate with a host, warning about
//! events the gate in force would not decide.

use crate::hook_entry::HOOK_TIMEOUT_SECONDS;
use crate::hosts::{self, Managed};
use crate::install::carry_out;
use crate::{CliError, HookTarget};
use judged_core::adapter::HookEvent;
use judged_core::event::Host;
use judged_daemon::config::ConfigError;
use judged_daemon::config::OnError;
use judged_daemon::hook_gate::GateSettings;
use judged_protocol::paths;
use std::path::Path;

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
    let setup = hosts::of(host);
    let events = setup.hook_events(&events)?;
    let warning = ungated_events_warning(&config, &config_path, host, &events, &target.project_dir(), target.user)?;
    if let Some(warning) = warning {
        eprintln!("{warning}");
    }
    let place = hosts::HookPlace { target, project: target.project_files(), dry_run };
    refuse_managed_not_held(target, host)?;
    if !target.managed {
        plugin_already_gates(host, place.project.is_none())?;
    }
    let hook = hosts::HookSpec { host, events: &events, on_error, timeout, absolute };
    match setup.install_hook(&place, &hook)? {
        Some(plan) => Ok(carry_out(plan, dry_run)?),
        None => Ok(()),
    }
}

/// Refuse `--managed` for a host whose managed settings hold no hook, and `--managed-only`
/// for one whose managed settings cannot turn the other hooks off.
pub fn refuse_managed_not_held(target: &HookTarget, host: Host) -> Result<(), CliError> {
    let managed = hosts::of(host).managed();
    if target.managed && managed == Managed::None {
        return Err(CliError::ManagedNotFor(host));
    }
    if target.managed_only && managed != Managed::HooksOnly {
        return Err(CliError::ManagedOnlyNotFor(hosts::of(host).title()));
    }
    Ok(())
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
    events: &[HookEvent],
    dir: &Path,
    user: bool,
) -> Result<Option<String>, CliError> {
    let gate = &config.gate;
    let settings = if user {
        gate.user_settings()
    } else {
        let dir = judged_io::files::resolve(&dir.to_string_lossy());
        gate.settings_for(Path::new(&dir), gate.project_trust(config.is_witness()))?
    };
    let ungated: Vec<&str> = events.iter().filter(|e| !settings.decides(host, **e)).map(|e| e.as_str()).collect();
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
