//! `judged init`: set judged up on this machine in one step, and `judged plugin write`.
//!
//! It finds the reviewer CLIs on PATH (each is also a host), says which are logged in
//! where the CLI's own files or variables tell offline, writes a `[jury]` whose two
//! stage-1 jurors are of two model families and whose tiebreakers span another (the
//! families derived from the models, as the jury derives them), installs the plugin into
//! each host found (or only the hooks), and runs `judged doctor`.

use crate::CliError;
use crate::install::host_cli::{self, Listed, Login};
use crate::install::{CodexHookSource, Plan, find_on_path};
use judged_core::event::Host;
use judged_core::family::{self, Table};
use judged_jury::config::JuryConfig;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args)]
pub struct InitArgs {
    /// Print what would be written and run, and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Install only the hooks (Claude Code user settings, Copilot CLI project file), not the plugin.
    #[arg(long)]
    hooks_only: bool,
    /// The project whose `.github/hooks/judged.json` `--hooks-only` writes for Copilot CLI (default: .).
    #[arg(long, requires = "hooks_only")]
    project: Option<PathBuf>,
}

#[derive(clap::Subcommand)]
pub enum PluginCmd {
    /// Write the plugin (every host's manifest, the hooks, the MCP server, the skill) into DIR.
    Write { dir: PathBuf },
}

/// Why `judged init` could not finish; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(transparent)]
    Plugin(#[from] crate::plugin::PluginError),
    #[error(
        "the [jury] judged init rendered is refused ({0}); this is a bug in judged init, write [jury] by hand (docs/configuration.md, \"The jury\")"
    )]
    Rendered(judged_jury::config::ConfigError),
    #[error("{} host(s) could not take the plugin; each is listed above with the command to run by hand", .0)]
    HostsFailed(usize),
}

pub fn plugin(command: PluginCmd) -> Result<(), CliError> {
    let PluginCmd::Write { dir } = command;
    crate::plugin::write(&dir).map_err(InitError::from)?;
    println!("wrote the judged plugin to {}", dir.display());
    Ok(())
}

/// The hosts init looks for, in the order it prefers their CLIs as jurors: a family's
/// own CLI before Copilot CLI, which serves all three.
const ORDER: [Host; 4] = [Host::CodexCli, Host::GeminiCli, Host::ClaudeCode, Host::CopilotCli];

/// How to get a host's CLI, for the message that says a family is missing.
fn install_hint(host: Host) -> &'static str {
    match host {
        Host::CodexCli => "Codex CLI (`npm install -g @openai/codex`, then `codex login`)",
        Host::GeminiCli => "Gemini CLI (`npm install -g @google/gemini-cli`, then run `gemini` once to log in)",
        Host::ClaudeCode => "Claude Code (`npm install -g @anthropic-ai/claude-code`, then `claude` to log in)",
        Host::CopilotCli => "Copilot CLI (`npm install -g @github/copilot`, then `copilot` and /login)",
    }
}

/// The small (stage 1) and big (tiebreaker) model of `family` a host's CLI serves: the
/// three family CLIs serve their own, Copilot CLI serves all three.
fn models(host: Host, family: &str) -> Option<(&'static str, &'static str)> {
    match (host, family) {
        (Host::CodexCli | Host::CopilotCli, family::OPENAI) => Some(("gpt-5.4-mini", "gpt-5.4")),
        (Host::GeminiCli | Host::CopilotCli, family::GOOGLE) => Some(("gemini-2.5-flash", "gemini-2.5-pro")),
        (Host::ClaudeCode, family::ANTHROPIC) => Some(("claude-haiku-4-5", "claude-sonnet-4-6")),
        (Host::CopilotCli, family::ANTHROPIC) => Some(("claude-haiku-4.5", "claude-sonnet-4.6")),
        _ => None,
    }
}

/// One juror `judged init` writes.
struct Pick {
    name: String,
    host: Host,
    model: &'static str,
}

/// The jurors for the CLIs that can serve: two stage-1 jurors of two families, and
/// tiebreakers spanning two families, a third one first when there is one. `None` when
/// fewer than two families are served (a jury there could never be cross-family).
fn choose(usable: &[Host]) -> Option<(Vec<Pick>, Vec<Pick>)> {
    // Each family by the first CLI that serves it, a family's own CLI before Copilot's.
    let mut served: Vec<(&'static str, Host)> = Vec::new();
    for host in usable.iter().copied().filter(|c| *c != Host::CopilotCli).chain(usable.iter().copied()) {
        for family in family::HOST_FAMILIES {
            if models(host, family).is_some() && !served.iter().any(|(f, _)| *f == family) {
                served.push((family, host));
            }
        }
    }
    if served.len() < 2 {
        return None;
    }
    // A juror is named by what answers it: the CLI and the model it asks for.
    let pick = |(family, host): (&str, Host), big: bool| {
        let (small, large) = models(host, family).expect("served");
        let model = if big { large } else { small };
        Pick { name: format!("{}/{model}", host_cli::program(host)), host, model }
    };
    let stage_1 = vec![pick(served[0], false), pick(served[1], false)];
    // A third family first: it is never the author's when stage 1 disagrees about an
    // author of either stage-1 family. Then a stage-1 family, so the list never holds
    // only the author's family.
    let mut tiebreakers: Vec<Pick> = served.get(2).map(|s| pick(*s, true)).into_iter().collect();
    tiebreakers.push(pick(served[0], true));
    if tiebreakers.len() < 2 {
        tiebreakers.push(pick(served[1], true));
    }
    Some((stage_1, tiebreakers))
}

/// The `[jury]` table for the chosen jurors.
fn jury_toml(stage_1: &[Pick], tiebreakers: &[Pick], bins: &dyn Fn(Host) -> PathBuf, unchecked: &[Host]) -> String {
    let names = |picks: &[Pick]| picks.iter().map(|p| format!("{:?}", p.name)).collect::<Vec<_>>().join(", ");
    let mut text = format!(
        "\n# Written by `judged init`: two stage-1 jurors of two model families, tiebreakers of others.\n\
         [jury]\nstage_1 = [{}]\ntiebreaker = [{}]\nthreshold = {}\ndeadline_seconds = {}\n",
        names(stage_1),
        names(tiebreakers),
        judged_jury::config::DEFAULT_THRESHOLD,
        judged_jury::config::DEFAULT_DEADLINE_SECONDS,
    );
    for pick in stage_1.iter().chain(tiebreakers) {
        if unchecked.contains(&pick.host) {
            text.push_str(&format!(
                "\n# Its login was not checked ({} keeps it where judged cannot look offline).",
                host_cli::program(pick.host)
            ));
        }
        text.push_str(&format!(
            "\n[[jury.jurors]]\nname = {:?}\npreset = {:?}\nmodel = {:?}\nbin = {:?}\n",
            pick.name,
            host_cli::program(pick.host),
            pick.model,
            bins(pick.host).display().to_string(),
        ));
    }
    text
}

pub fn run(args: &InitArgs) -> Result<(), CliError> {
    if !args.dry_run {
        // The data dir holds the plugin init writes, and later the store and the key:
        // made private now, as `judged start` would make it.
        judged_daemon::private_dir(&judged_protocol::paths::data_dir())?;
    }
    let path_var = std::env::var_os("PATH");
    let found: Vec<(Host, PathBuf)> = ORDER
        .iter()
        .filter_map(|host| Some((*host, find_on_path(host_cli::program(*host), path_var.as_deref())?)))
        .collect();
    println!("Reviewer CLIs and hosts on PATH:");
    let mut usable = Vec::new();
    let mut unchecked = Vec::new();
    for host in ORDER {
        let Some((_, bin)) = found.iter().find(|(c, _)| *c == host) else {
            println!("  {:<8} not found", host_cli::program(host));
            continue;
        };
        match host_cli::login(host, &host_cli::env_var) {
            Login::Yes(how) => {
                println!("  {:<8} {} (logged in: {how})", host_cli::program(host), bin.display());
                usable.push(host);
            }
            Login::Unknown(why) => {
                println!(
                    "  {:<8} {} (login not checked: {why}; counted as usable; if its jurors fail, log in with `{}`)",
                    host_cli::program(host),
                    bin.display(),
                    host_cli::program(host)
                );
                usable.push(host);
                unchecked.push(host);
            }
            Login::No { file, variables: keys } => println!(
                "  {:<8} {} (not logged in: no {file} and no {keys}; log in, then run judged init again to use it as a juror)",
                host_cli::program(host),
                bin.display()
            ),
        }
    }
    write_jury(args, &usable, &unchecked, &found)?;
    let hosts: Vec<(Host, PathBuf)> = found;
    if hosts.is_empty() {
        println!("No host found (claude, copilot, codex, gemini): nothing to install the plugin into.");
    } else if args.hooks_only {
        install_hooks(args, &hosts)?;
    } else {
        install_plugin(args, &hosts)?;
    }
    if args.dry_run {
        return Ok(());
    }
    println!("\njudged doctor:");
    if crate::doctor::run(false) { Ok(()) } else { Err(CliError::DoctorFailed) }
}

/// Merge the chosen `[jury]` into config.toml, unless it has one or no cross-family
/// jury can be made.
fn write_jury(args: &InitArgs, usable: &[Host], unchecked: &[Host], found: &[(Host, PathBuf)]) -> Result<(), CliError> {
    let config = judged_protocol::paths::config_path();
    let file = crate::install::read_user_file(&config)?;
    let before = file.text.clone();
    // A config that does not parse is not appended to: a [jury] there would be one more
    // on each run, and judged reads none of it.
    if file.toml()?.contains_key("jury") {
        println!(
            "\n{} already has a [jury]: left as it is (judged init never replaces one). To have judged init write \
             one, move that table out of the file and run judged init again.",
            config.display()
        );
        return Ok(());
    }
    let Some((stage_1, tiebreakers)) = choose(usable) else {
        let families: Vec<&str> =
            usable.iter().filter_map(|c| family::HOST_FAMILIES.into_iter().find(|f| models(*c, f).is_some())).collect();
        let missing: Vec<&str> = ORDER.iter().filter(|c| !usable.contains(c)).map(|c| install_hint(*c)).collect();
        println!(
            "\nNo [jury] written: a jury needs reviewers of two model families, and the usable CLIs serve {}. \
             Install and log in to one of: {}; then run judged init again.",
            if families.is_empty() { "none".to_owned() } else { format!("only {}", families.join(", ")) },
            missing.join("; ")
        );
        return Ok(());
    };
    let bins = |host: Host| found.iter().find(|(c, _)| *c == host).map(|(_, b)| b.clone()).unwrap_or_default();
    let jury = jury_toml(&stage_1, &tiebreakers, &bins, unchecked);
    JuryConfig::from_toml(&jury).and_then(|j| j.validate()).map_err(InitError::Rendered)?;
    let served: Vec<&str> =
        stage_1.iter().chain(&tiebreakers).filter_map(|p| family::family(p.model, Table::Evidence)).collect();
    if !family::HOST_FAMILIES.iter().all(|f| served.contains(f)) {
        println!(
            "\nThe jury spans two families only: a tiebreaker is then of the author's family when stage 1 is of \
             the other two. Install a third ({}) and run judged init again for one that never is.",
            ORDER.iter().filter(|c| !usable.contains(c)).map(|c| install_hint(*c)).collect::<Vec<_>>().join("; ")
        );
    }
    let after = format!("{}{jury}", before.clone().unwrap_or_default());
    carry_out(Plan::new(file, Some(after)), args.dry_run)
}

fn carry_out(plan: Plan, dry_run: bool) -> Result<(), CliError> {
    println!();
    crate::commands::carry_out(plan, dry_run)
}

/// Only the hooks, with `install-hooks`' own functions and command.
fn install_hooks(args: &InitArgs, hosts: &[(Host, PathBuf)]) -> Result<(), CliError> {
    let config_path = judged_protocol::paths::config_path();
    let config = judged_daemon::config::ConfigFile::load(&config_path)?;
    let timeout = crate::commands::install_hooks::hook_timeout_seconds(&config, &config_path)?;
    let project = args.project.clone().unwrap_or_else(|| PathBuf::from("."));
    for &(host, _) in hosts {
        // Copilot CLI's hook goes into the project's file, the team's: said, not refused.
        crate::commands::install_hooks::plugin_already_gates(host, host != Host::CopilotCli)?;
        let plan = match host {
            Host::ClaudeCode => {
                let user = crate::HookTarget {
                    claude: true,
                    copilot: false,
                    codex: false,
                    gemini: false,
                    project: None,
                    user: true,
                    managed: false,
                    managed_only: false,
                };
                let settings = user.claude_settings();
                let command = crate::commands::install_hooks::hook_command(
                    "claude-code",
                    judged_daemon::config::OnError::Block,
                    timeout,
                    false,
                    None,
                )?;
                crate::install::claude_install(&settings, &command, &["TaskCompleted".into()], timeout)?
            }
            Host::CopilotCli => {
                let committed = crate::install::copilot_path(&project);
                let command = crate::commands::install_hooks::hook_command(
                    "copilot-cli",
                    judged_daemon::config::OnError::Block,
                    timeout,
                    false,
                    Some(&committed),
                )?;
                crate::install::copilot_install(&committed, &command, timeout)?
            }
            Host::CodexCli => {
                let hooks = crate::install::codex_hooks_path(None);
                let command = crate::commands::install_hooks::hook_command(
                    "codex-cli",
                    judged_daemon::config::OnError::Block,
                    timeout,
                    false,
                    None,
                )?;
                crate::install::check_codex_config()?;
                carry_out(crate::install::codex_install(&hooks, &command, timeout)?, args.dry_run)?;
                let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
                let source = crate::install::CodexHookSource::File(&hooks);
                crate::commands::install_hooks::trust_codex_hook(source, &cwd, args.dry_run)?;
                continue;
            }
            Host::GeminiCli => {
                let settings = crate::install::gemini_settings_path(None);
                let command = crate::commands::install_hooks::hook_command(
                    "gemini-cli",
                    judged_daemon::config::OnError::Block,
                    timeout,
                    false,
                    None,
                )?;
                crate::install::gemini_install(&settings, &command, timeout)?
            }
        };
        carry_out(plan, args.dry_run)?;
    }
    Ok(())
}

/// How long one of a host's own install commands may take: each finishes in a few
/// seconds offline; a host that asks a question no one can answer is stopped here.
const INSTALL_DEADLINE: Duration = Duration::from_secs(60);

/// One of a host's own commands that install the plugin.
struct Step {
    args: Vec<String>,
    /// Set for the command alone: what it needs so that it never asks.
    env: &'static [(&'static str, &'static str)],
    /// What it says, failing, when the step was already done (by an earlier init).
    already: Option<&'static str>,
}

fn step(args: &[&str]) -> Step {
    Step { args: args.iter().map(|a| (*a).to_owned()).collect(), env: &[], already: None }
}

/// The id a host lists judged by once init installed it.
fn installed_id(host: Host) -> String {
    match host {
        Host::GeminiCli => crate::plugin::NAME.to_owned(),
        _ => host_cli::marketplace_id(),
    }
}

/// The host's own commands that install the plugin from `dir`, given what it listed
/// before (`before`). Claude Code, Copilot CLI and Codex CLI install from `dir` as a
/// local marketplace (Copilot CLI keeps only marketplace installs in the future); a
/// Gemini CLI extension is a copy, so one already there is uninstalled first.
fn install_steps(host: Host, dir: &Path, before: Option<&Listed>) -> Vec<Step> {
    let dir = dir.to_string_lossy();
    let at = host_cli::marketplace_id();
    match host {
        Host::ClaudeCode => vec![step(&["plugin", "marketplace", "add", &dir]), step(&["plugin", "install", &at])],
        Host::CopilotCli => {
            // A direct install (deprecated by Copilot CLI) goes before the marketplace's.
            let direct = before.filter(|b| b.id == crate::plugin::NAME);
            let uninstall = direct.map(|_| step(&["plugin", "uninstall", crate::plugin::NAME]));
            let add = Step { already: Some("already registered"), ..step(&["plugin", "marketplace", "add", &dir]) };
            uninstall.into_iter().chain([add, step(&["plugin", "install", &at])]).collect()
        }
        Host::CodexCli => vec![step(&["plugin", "marketplace", "add", &dir]), step(&["plugin", "add", &at])],
        Host::GeminiCli => {
            let extension = Path::new(dir.as_ref()).join(crate::plugin::GEMINI_DIR);
            let uninstall = before.map(|_| step(&["extensions", "uninstall", crate::plugin::NAME]));
            // Gemini CLI asks whether to trust the folder it installs from, even with
            // --consent: that folder is judged's own plugin directory, trusted for
            // this one command.
            let install = Step {
                env: &[("GEMINI_CLI_TRUST_WORKSPACE", "true")],
                ..step(&["extensions", "install", &extension.to_string_lossy(), "--consent"])
            };
            uninstall.into_iter().chain([install]).collect()
        }
    }
}

/// Run one step with no terminal and under [`INSTALL_DEADLINE`], in `cwd`.
fn run_step(bin: &Path, step: &Step, cwd: &Path) -> Result<(), host_cli::HostCliError> {
    let env: Vec<(&str, &str)> = step.env.to_vec();
    match host_cli::run(bin, &step.args, cwd, &env, INSTALL_DEADLINE) {
        Err(host_cli::HostCliError::Failed { said, .. }) if step.already.is_some_and(|a| said.contains(a)) => Ok(()),
        outcome => outcome.map(drop),
    }
}

/// Whether a host lists judged as init installs it: this version, enabled, by its id.
fn is_current(host: Host, listed: &Listed) -> bool {
    listed.enabled && listed.version == env!("CARGO_PKG_VERSION") && listed.id == installed_id(host)
}

/// Write the plugin into the data dir and install it into each host with its own
/// commands; then ask each host whether it lists judged enabled, and trust the plugin's
/// hook in Codex CLI. Every host is run in the plugin's own directory, so no project
/// file where init was run configures it. Ends with what is still to do, if anything.
fn install_plugin(args: &InitArgs, hosts: &[(Host, PathBuf)]) -> Result<(), CliError> {
    let dir = judged_protocol::paths::data_dir().join("plugin");
    println!(
        "\nThe plugin, written to {}, installed with each host's own commands (no terminal; each stopped after {} s):",
        dir.display(),
        INSTALL_DEADLINE.as_secs()
    );
    if !args.dry_run {
        crate::plugin::write(&dir).map_err(InitError::from)?;
    }
    let mut still_to_do: Vec<String> = Vec::new();
    for (host, bin) in hosts {
        let host = *host;
        let listing = host_cli::shown(bin, host_cli::listing_args(host));
        let before = if args.dry_run { None } else { host_cli::judged_listed(host, bin, &dir).ok().flatten() };
        let current = before.as_ref().is_some_and(|b| is_current(host, b));
        if current {
            println!(
                "  {:<8} judged {} is installed and enabled already ({listing})",
                host_cli::program(host),
                env!("CARGO_PKG_VERSION")
            );
        } else {
            for step in install_steps(host, &dir, before.as_ref()) {
                let command = host_cli::shown(bin, &step.args.iter().map(String::as_str).collect::<Vec<_>>());
                if args.dry_run {
                    println!("  {command}");
                    continue;
                }
                match run_step(bin, &step, &dir) {
                    Ok(()) => println!("  {command}: done"),
                    Err(why) => {
                        println!("  {command}: {why}");
                        still_to_do
                            .push(format!("{}: run `{command}` by hand and see what it says", host_cli::program(host)));
                        break;
                    }
                }
            }
        }
        if args.dry_run {
            if host == Host::CodexCli {
                println!(
                    "  then: trust the plugin's Stop hook in $CODEX_HOME/config.toml, as `codex app-server` lists it"
                );
            }
            continue;
        }
        let left = if current { trust_codex_plugin(host, &dir) } else { check_installed(host, bin, &dir, &listing) };
        still_to_do.extend(left);
    }
    if still_to_do.is_empty() {
        return Ok(());
    }
    println!("\nNot every host is gated yet. Still to do:");
    for left in &still_to_do {
        println!("  - {left}");
    }
    Err(InitError::HostsFailed(still_to_do.len()).into())
}

/// Ask the host whether it lists judged as installed and enabled now (and for Codex CLI,
/// trust the plugin's hook); what is still to do when it does not.
fn check_installed(host: Host, bin: &Path, dir: &Path, listing: &str) -> Option<String> {
    match host_cli::judged_listed(host, bin, dir) {
        Ok(Some(listed)) if is_current(host, &listed) => {
            println!("  {:<8} lists {} {}, enabled ({listing})", host_cli::program(host), listed.id, listed.version);
        }
        Ok(Some(listed)) => {
            let state = if listed.enabled { "enabled" } else { "disabled" };
            return Some(format!(
                "{}: `{listing}` lists {} {}, {state}, not {} {}, enabled: enable or update it with {}'s own plugin commands",
                host_cli::program(host),
                listed.id,
                listed.version,
                installed_id(host),
                env!("CARGO_PKG_VERSION"),
                host_cli::program(host)
            ));
        }
        Ok(None) => {
            return Some(format!("{}: `{listing}` does not list judged after the install", host_cli::program(host)));
        }
        Err(why) => {
            return Some(format!("{}: cannot tell whether judged is installed: {why}", host_cli::program(host)));
        }
    }
    trust_codex_plugin(host, dir)
}

/// Codex CLI runs a plugin's command hook only once its config.toml trusts it: trust ours,
/// as Codex lists it. What is still to do when that fails.
fn trust_codex_plugin(host: Host, dir: &Path) -> Option<String> {
    if host != Host::CodexCli {
        return None;
    }
    match crate::commands::install_hooks::trust_codex_hook(CodexHookSource::Plugin, dir, false) {
        Ok(true) => {
            println!(
                "  {:<8} trusts the plugin's Stop hook ({})",
                host_cli::program(host),
                crate::install::codex_config_path().display()
            );
            None
        }
        Ok(false) => Some(
            "codex: the plugin's Stop hook is not trusted, so Codex CLI skips it: start `codex`, open /hooks and \
             trust judge-hook's Stop hook"
                .to_owned(),
        ),
        Err(why) => Some(format!(
            "codex: the plugin's Stop hook is not trusted ({why}): start `codex`, open /hooks and trust it"
        )),
    }
}
