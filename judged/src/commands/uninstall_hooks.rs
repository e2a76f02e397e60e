//! `judged uninstall-hooks`: remove what `install-hooks` added, and only that.

use super::carry_out;
use crate::{CliError, HookTarget};
use judged_core::event::Host;

pub fn run(target: &HookTarget, dry_run: bool) -> Result<(), CliError> {
    let project = target.project_files();
    let plan = if target.copilot && target.managed {
        let policy = crate::install::copilot_managed_path();
        super::install_hooks::needs_root(&policy, "copilot", dry_run)?;
        crate::install::copilot_uninstall(&policy)?
    } else if target.copilot {
        crate::install::copilot_uninstall(&crate::install::copilot_path(&target.project_dir()))?
    } else if target.codex && target.managed {
        let requirements = crate::install::codex_managed_path();
        super::install_hooks::needs_root(&requirements, "codex", dry_run)?;
        crate::install::codex_managed_uninstall(&requirements)?
    } else if target.codex {
        let hooks = crate::install::codex_hooks_path(project.as_deref());
        carry_out(
            crate::install::codex_untrust(
                &crate::install::codex_config_path(),
                crate::install::CodexHookSource::File(&hooks),
            )?,
            dry_run,
        )?;
        crate::install::codex_uninstall(&hooks)?
    } else if target.gemini && target.managed {
        return Err(CliError::ManagedNotFor(Host::GeminiCli));
    } else if target.gemini {
        crate::install::gemini_uninstall(&crate::install::gemini_settings_path(project.as_deref()))?
    } else if target.qwen && target.managed {
        let settings = crate::install::qwen_managed_path();
        super::install_hooks::needs_root(&settings, "qwen", dry_run)?;
        crate::install::qwen_uninstall(&settings, true)?
    } else if target.qwen {
        crate::install::qwen_uninstall(&crate::install::qwen_settings_path(project.as_deref()), false)?
    } else if target.managed {
        let settings = target.claude_settings();
        super::install_hooks::needs_root(&settings, "claude", dry_run)?;
        crate::install::claude_managed_uninstall(&settings)?
    } else {
        crate::install::claude_uninstall(&target.claude_settings())?
    };
    carry_out(plan, dry_run)
}
