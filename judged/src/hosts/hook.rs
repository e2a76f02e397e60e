//! What `install-hooks` and `uninstall-hooks` hand a host's [`super::HostSetup`]: where
//! its hook goes, and the hook itself; the host decides which of its files that is and
//! how its format holds the hook.

use crate::{CliError, HookTarget};
use judged_core::adapter::HookEvent;
use judged_core::event::Host;
use judged_daemon::config::OnError;
use std::path::{Path, PathBuf};

/// What a host's managed settings (root's, under `/etc`) can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Managed {
    /// It has none that hold a hook (`--managed` is refused).
    None,
    /// They hold a hook no user or project setting removes (`--managed-only` is refused:
    /// they have no switch that turns the other hooks off).
    Hooks,
    /// They hold a hook, and can let only managed hooks run (`--managed-only`).
    HooksOnly,
}

/// The host `install-hooks` and `uninstall-hooks` write for: one flag per host a hook can
/// gate, named after its program (`--claude`), with its [`HostSetup::hook_settings`] as
/// help; exactly one is given.
///
/// [`HostSetup::hook_settings`]: super::HostSetup::hook_settings
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HookHost(pub Host);

impl HookHost {
    /// The hosts a flag names, in [`Host::ALL`]'s order (the help's).
    fn flagged() -> impl Iterator<Item = Host> {
        Host::ALL.into_iter().filter(|host| super::ALL.contains(host))
    }
}

impl clap::FromArgMatches for HookHost {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<HookHost, clap::Error> {
        let named = HookHost::flagged().find(|host| matches.get_flag(super::of(*host).program()));
        // The group is required: clap has refused the command line that names none.
        named.map(HookHost).ok_or_else(|| clap::Error::new(clap::error::ErrorKind::MissingRequiredArgument))
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = HookHost::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for HookHost {
    fn augment_args(command: clap::Command) -> clap::Command {
        let flags: Vec<&'static str> = HookHost::flagged().map(|host| super::of(host).program()).collect();
        let command = HookHost::flagged().fold(command, |command, host| {
            let setup = super::of(host);
            let flag = clap::Arg::new(setup.program())
                .long(setup.program())
                .action(clap::ArgAction::SetTrue)
                .help(setup.hook_settings());
            // A host with no settings of the user's (Copilot CLI) has no `--user`.
            command.arg(if setup.has_user_settings() { flag } else { flag.conflicts_with("user") })
        });
        command.group(clap::ArgGroup::new("host").args(flags).required(true).multiple(false))
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        HookHost::augment_args(command)
    }
}

/// Where a host's hook is written or taken out.
pub struct HookPlace<'a> {
    /// The flags that named the host and the settings.
    pub target: &'a HookTarget,
    /// The project whose settings are written, absolute; none for the user's.
    pub project: Option<PathBuf>,
    /// Say what would change, write nothing.
    pub dry_run: bool,
}

impl HookPlace<'_> {
    /// Refuse to write a host's managed settings (`path`, of `program`) but as root: they
    /// are root's.
    pub fn needs_root(&self, path: &Path, program: &'static str) -> Result<(), CliError> {
        if judged_io::files::current_uid() == 0 || self.dry_run {
            return Ok(());
        }
        Err(crate::install::InstallError::NeedsRoot { path: path.to_owned(), host: program }.into())
    }
}

/// The hook `install-hooks` writes.
pub struct HookSpec<'a> {
    pub host: Host,
    /// The events it is registered for, where the host's settings name them.
    pub events: &'a [HookEvent],
    pub on_error: OnError,
    /// The host's timeout for it, in seconds.
    pub timeout: u64,
    /// Name `judge-hook` by its absolute path even where PATH finds it.
    pub absolute: bool,
}

impl HookSpec<'_> {
    /// The shim's command line, naming `judge-hook` as [`crate::install::hook_program`]
    /// decides (by name when PATH finds it, unless `absolute`); its warnings go to stderr.
    /// `committed` is the file it goes into when that is a project file that gets
    /// committed.
    pub fn command(&self, absolute: bool, committed: Option<&Path>) -> Result<String, CliError> {
        let beside =
            std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.join("judge-hook"))).filter(|p| p.is_file());
        let on_path = crate::install::find_on_path("judge-hook", std::env::var_os("PATH").as_deref());
        let shim = crate::install::hook_program(beside.as_deref(), on_path.as_deref(), absolute, committed)?;
        for warning in &shim.warnings {
            eprintln!("judged: warning: {warning}");
        }
        let allow = self.on_error == OnError::Allow;
        Ok(crate::hook_entry::shim_command(&shim.program, self.host.as_str(), allow, self.timeout))
    }
}
