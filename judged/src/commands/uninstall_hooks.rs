//! `judged uninstall-hooks`: remove what `install-hooks` added, and only that.

use crate::hosts;
use crate::install::carry_out;
use crate::{CliError, HookTarget};

pub fn run(target: &HookTarget, dry_run: bool) -> Result<(), CliError> {
    let host = target.host();
    if target.managed && hosts::of(host).managed() == hosts::Managed::None {
        return Err(CliError::ManagedNotFor(host));
    }
    let place = hosts::HookPlace { target, project: target.project_files(), dry_run };
    Ok(carry_out(hosts::of(host).uninstall_hook(&place)?, dry_run)?)
}
