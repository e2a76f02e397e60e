//! `judged uninstall-hooks`: remove what `install-hooks` added, and only that.

use super::carry_out;
use crate::{CliError, HookTarget};

pub fn run(target: &HookTarget, dry_run: bool) -> Result<(), CliError> {
    let project = target.project_files();
    let plan = if target.copilot {
        judged::install::copilot_uninstall(&target.project_dir())?
    } else if target.codex {
        let hooks = judged::install::codex_hooks_path(project.as_deref());
        let config = judged::install::codex_home().join("config.toml");
        carry_out(judged::install::codex_untrust(&config, &hooks)?, dry_run)?;
        judged::install::codex_uninstall(&hooks)?
    } else if target.gemini {
        judged::install::gemini_uninstall(&judged::install::gemini_settings_path(project.as_deref()))?
    } else if target.managed {
        let settings = target.claude_settings();
        if judged_core::files::current_uid() != 0 && !dry_run {
            return Err(judged::install::InstallError::NeedsRoot(settings).into());
        }
        judged::install::claude_managed_uninstall(&settings)?
    } else {
        judged::install::claude_uninstall(&target.claude_settings())?
    };
    carry_out(plan, dry_run)
}
