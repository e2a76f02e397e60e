//! `judged uninstall-hooks`: remove what `install-hooks` added, and only that.

use super::carry_out;
use crate::{CliError, HookTarget};
use judged_core::event::Host;

pub fn run(target: &HookTarget, dry_run: bool) -> Result<(), CliError> {
    let project = target.project_files();
    let plan = if target.copilot && target.managed {
        let policy = judged::install::copilot_managed_path();
        super::install_hooks::needs_root(&policy, "copilot", dry_run)?;
        judged::install::copilot_uninstall(&policy)?
    } else if target.copilot {
        judged::install::copilot_uninstall(&judged::install::copilot_path(&target.project_dir()))?
    } else if target.codex && target.managed {
        let requirements = judged::install::codex_managed_path();
        super::install_hooks::needs_root(&requirements, "codex", dry_run)?;
        judged::install::codex_managed_uninstall(&requirements)?
    } else if target.codex {
        let hooks = judged::install::codex_hooks_path(project.as_deref());
        carry_out(
            judged::install::codex_untrust(
                &judged::install::codex_config_path(),
                judged::install::CodexHookSource::File(&hooks),
            )?,
            dry_run,
        )?;
        judged::install::codex_uninstall(&hooks)?
    } else if target.gemini && target.managed {
        return Err(CliError::ManagedNotFor(Host::GeminiCli));
    } else if target.gemini {
        judged::install::gemini_uninstall(&judged::install::gemini_settings_path(project.as_deref()))?
    } else if target.managed {
        let settings = target.claude_settings();
        super::install_hooks::needs_root(&settings, "claude", dry_run)?;
        judged::install::claude_managed_uninstall(&settings)?
    } else {
        judged::install::claude_uninstall(&target.claude_settings())?
    };
    carry_out(plan, dry_run)
}
