//! OpenCode (`opencode`): witnessed, never gated. No hook of its can stop its agent's end
//! in `opencode run` (a plugin's `session.idle` comes once the run is over), so judged
//! installs nothing into it: it reads OpenCode's sessions out of its database and records
//! each end as one no gate decided. `doctor` says so; `init` and `install-hooks` leave it.

use super::{HookPlace, HookSpec, HostSetup, Listed, Login, Managed, SettingsFile, Step};
use crate::{CliError, install};
use judged_core::event::Host;
use std::path::Path;

pub struct OpenCode;

impl HostSetup for OpenCode {
    fn host(&self) -> Host {
        Host::OpenCode
    }

    fn program(&self) -> &'static str {
        "opencode"
    }

    fn title(&self) -> &'static str {
        "OpenCode"
    }

    fn hook_settings(&self) -> &'static str {
        "none: no hook of OpenCode's can stop its agent's end"
    }

    fn install_hint(&self) -> &'static str {
        "OpenCode (`npm install -g opencode-ai`)"
    }

    fn juror_models(&self, _family: &str) -> Option<(&'static str, &'static str)> {
        None
    }

    fn login(&self, _env: &dyn Fn(&str) -> Option<String>) -> Login {
        Login::Unknown("its providers are in its own config")
    }

    fn gatable(&self) -> bool {
        false
    }

    /// Never asked: there is nothing of judged's in it to list.
    fn listing_args(&self) -> &'static [&'static str] {
        &[]
    }

    fn parse_listing(&self, _listing: &str) -> Result<Option<Listed>, serde_json::Error> {
        Ok(None)
    }

    fn install_steps(&self, _dir: &Path, _before: Option<&Listed>) -> Vec<Step> {
        Vec::new()
    }

    fn enable_hint(&self, _bin: &str) -> String {
        String::new()
    }

    fn uninstall_hint(&self, _bin: &str) -> String {
        String::new()
    }

    fn settings_files(&self, _cwd: &Path) -> Vec<SettingsFile> {
        Vec::new()
    }

    fn managed(&self) -> Managed {
        Managed::None
    }

    /// No hook can stop its end: nothing is installed.
    fn install_hook(&self, _place: &HookPlace, _hook: &HookSpec) -> Result<Option<install::Plan>, CliError> {
        Err(CliError::Ungated(self.title()))
    }

    fn uninstall_hook(&self, _place: &HookPlace) -> Result<install::Plan, CliError> {
        Err(CliError::Ungated(self.title()))
    }
}
