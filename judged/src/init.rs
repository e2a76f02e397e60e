//! `judged init`: set judged up on this machine in one step, and `judged plugin write`.
//!
//! It finds the reviewer CLIs on PATH (each is also a host), says which are logged in
//! where the CLI's own files or variables tell offline, writes a `[jury]` whose two
//! stage-1 jurors are of two model families and whose tiebreakers span another (the
//! families derived from the models, as the jury derives them), installs the plugin into
//! each host found (or only the hooks), and runs `judged doctor`.

use crate::CliError;
use crate::hosts::CodexHookSource;
use crate::hosts::{self, HostCliError, Listed, Login, Step};
use crate::install::toml_string;
use crate::install::{Plan, find_on_path};
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
    #[error("{} host(s) are not gated yet; each is listed above with what to do", .0)]
    HostsFailed(usize),
}

pub fn plugin(command: PluginCmd) -> Result<(), CliError> {
    let PluginCmd::Write { dir } = command;
    crate::plugin::write(&dir, crate::hosts::plugin_files()).map_err(InitError::from)?;
    println!("wrote the judged plugin to {}", dir.display());
    Ok(())
}

/// A host's program, as PATH finds it.
fn program(host: Host) -> &'static str {
    hosts::of(host).program()
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
    // Each family by the first CLI that serves it, a family's own CLI before one that
    // serves several (Copilot CLI's).
    let families =
        |host: Host| family::HOST_FAMILIES.iter().filter(|f| hosts::of(host).juror_models(f).is_some()).count();
    let mut served: Vec<(&'static str, Host)> = Vec::new();
    for host in usable.iter().copied().filter(|h| families(*h) == 1).chain(usable.iter().copied()) {
        for family in family::HOST_FAMILIES {
            if hosts::of(host).juror_models(family).is_some() && !served.iter().any(|(f, _)| *f == family) {
                served.push((family, host));
            }
        }
    }
    if served.len() < 2 {
        return None;
    }
    // A juror is named by what answers it: the CLI and the model it asks for.
    let pick = |(family, host): (&str, Host), big: bool| {
        let (small, large) = hosts::of(host).juror_models(family).expect("served");
        let model = if big { large } else { small };
        Pick { name: format!("{}/{model}", program(host)), host, model }
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
    let names = |picks: &[Pick]| picks.iter().map(|p| toml_string(&p.name)).collect::<Vec<_>>().join(", ");
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
                program(pick.host)
            ));
        }
        text.push_str(&format!(
            "\n[[jury.jurors]]\nname = {}\npreset = {}\nmodel = {}\nbin = {}\n",
            toml_string(&pick.name),
            toml_string(program(pick.host)),
            toml_string(pick.model),
            toml_string(&bins(pick.host).display().to_string()),
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
    let found: Vec<(Host, PathBuf)> = hosts::ALL
        .iter()
        .filter_map(|host| Some((*host, find_on_path(program(*host), path_var.as_deref())?)))
        .collect();
    println!("Reviewer CLIs and hosts on PATH:");
    let mut usable = Vec::new();
    let mut unchecked = Vec::new();
    for host in hosts::ALL {
        let Some((_, bin)) = found.iter().find(|(c, _)| *c == host) else {
            println!("  {:<8} not found", program(host));
            continue;
        };
        match hosts::of(host).login(&hosts::env_var) {
            Login::Yes(how) => {
                println!("  {:<8} {} (logged in: {how})", program(host), bin.display());
                usable.push(host);
            }
            Login::Unknown(why) => {
                println!(
                    "  {:<8} {} (login not checked: {why}; counted as usable; if its jurors fail, log in with `{}`)",
                    program(host),
                    bin.display(),
                    program(host)
                );
                usable.push(host);
                unchecked.push(host);
            }
            Login::No { file, variables: keys } => println!(
                "  {:<8} {} (not logged in: no {file} and no {keys}; log in, then run judged init again to use it as a juror)",
                program(host),
                bin.display()
            ),
        }
    }
    write_jury(args, &usable, &unchecked, &found)?;
    let hosts: Vec<(Host, PathBuf)> = found;
    if hosts.is_empty() {
        let programs: Vec<&str> = hosts::ALL.iter().map(|host| program(*host)).collect();
        println!("No host found ({}): nothing to install the plugin into.", programs.join(", "));
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
        let families: Vec<&str> = usable
            .iter()
            .filter_map(|c| family::HOST_FAMILIES.into_iter().find(|f| hosts::of(*c).juror_models(f).is_some()))
            .collect();
        let missing: Vec<&str> =
            hosts::ALL.iter().filter(|c| !usable.contains(c)).map(|c| hosts::of(*c).install_hint()).collect();
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
            hosts::ALL
                .iter()
                .filter(|c| !usable.contains(c))
                .map(|c| hosts::of(*c).install_hint())
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    let after = format!("{}{jury}", before.clone().unwrap_or_default());
    carry_out(Plan::new(file, Some(after)), args.dry_run)
}

fn carry_out(plan: Plan, dry_run: bool) -> Result<(), CliError> {
    println!();
    Ok(crate::install::carry_out(plan, dry_run)?)
}

/// Only the hooks: `install-hooks` for each host found, in the user's settings (Copilot
/// CLI, which has none, in the project's file). A host that refuses goes on the list of
/// what is still to do, and the other hosts are set up all the same; a host the plugin
/// gates already needs nothing.
fn install_hooks(args: &InitArgs, found: &[(Host, PathBuf)]) -> Result<(), CliError> {
    let mut still_to_do: Vec<String> = Vec::new();
    for &(host, _) in found {
        let target = crate::HookTarget::user_level(host, args.project.clone());
        // Each host's end event, the default.
        let installed = crate::commands::install_hooks::run(
            &target,
            Vec::new(),
            judged_daemon::config::OnError::Block,
            args.dry_run,
            false,
        );
        match installed {
            Ok(()) => {}
            Err(gated @ CliError::PluginGates { .. }) => println!("{}: nothing to add: {gated}", program(host)),
            Err(error) => still_to_do.push(format!("{}: {error}", program(host))),
        }
    }
    report_still_to_do(still_to_do)
}

/// What is left for the user when some host is not gated: listed, and an error.
fn report_still_to_do(still_to_do: Vec<String>) -> Result<(), CliError> {
    if still_to_do.is_empty() {
        return Ok(());
    }
    println!("\nNot every host is gated yet. Still to do:");
    for left in &still_to_do {
        println!("  - {left}");
    }
    Err(InitError::HostsFailed(still_to_do.len()).into())
}

/// How long one of a host's own install commands may take: each finishes in a few
/// seconds offline; a host that asks a question no one can answer is stopped here.
const INSTALL_DEADLINE: Duration = Duration::from_secs(60);

/// Run one step with no terminal and under [`INSTALL_DEADLINE`], in `cwd`.
fn run_step(bin: &Path, step: &Step, cwd: &Path) -> Result<(), HostCliError> {
    let env: Vec<(&str, &str)> = step.env.to_vec();
    match hosts::run(bin, &step.args, cwd, &env, INSTALL_DEADLINE) {
        Err(HostCliError::Failed { said, .. }) if step.already.is_some_and(|a| said.contains(a)) => Ok(()),
        outcome => outcome.map(drop),
    }
}

/// Whether a host lists judged as init installs it: this version, enabled, by its id.
fn is_current(host: Host, listed: &Listed) -> bool {
    listed.enabled && listed.version == env!("CARGO_PKG_VERSION") && listed.id == hosts::of(host).installed_id()
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
        crate::plugin::write(&dir, crate::hosts::plugin_files()).map_err(InitError::from)?;
    }
    let mut still_to_do: Vec<String> = Vec::new();
    for (host, bin) in hosts {
        let host = *host;
        let listing = hosts::shown(bin, hosts::of(host).listing_args());
        let before = if args.dry_run { None } else { hosts::judged_listed(host, bin, &dir).ok().flatten() };
        let current = before.as_ref().is_some_and(|b| is_current(host, b));
        if current {
            println!(
                "  {:<8} judged {} is installed and enabled already ({listing})",
                program(host),
                env!("CARGO_PKG_VERSION")
            );
        } else {
            for step in hosts::of(host).install_steps(&dir, before.as_ref()) {
                let command = hosts::shown(bin, &step.args.iter().map(String::as_str).collect::<Vec<_>>());
                if args.dry_run {
                    println!("  {command}");
                    continue;
                }
                match run_step(bin, &step, &dir) {
                    Ok(()) => println!("  {command}: done"),
                    Err(why) => {
                        println!("  {command}: {why}");
                        still_to_do.push(format!("{}: run `{command}` by hand and see what it says", program(host)));
                        break;
                    }
                }
            }
        }
        if args.dry_run {
            if hosts::of(host).trusts_hooks() {
                println!(
                    "  then: trust the plugin's Stop hook in $CODEX_HOME/config.toml, as `codex app-server` lists it"
                );
            }
            continue;
        }
        let left = if current { trust_codex_plugin(host, &dir) } else { check_installed(host, bin, &dir, &listing) };
        still_to_do.extend(left);
    }
    report_still_to_do(still_to_do)
}

/// Ask the host whether it lists judged as installed and enabled now (and for Codex CLI,
/// trust the plugin's hook); what is still to do when it does not.
fn check_installed(host: Host, bin: &Path, dir: &Path, listing: &str) -> Option<String> {
    match hosts::judged_listed(host, bin, dir) {
        Ok(Some(listed)) if is_current(host, &listed) => {
            println!("  {:<8} lists {} {}, enabled ({listing})", program(host), listed.id, listed.version);
        }
        Ok(Some(listed)) => {
            let state = if listed.enabled { "enabled" } else { "disabled" };
            return Some(format!(
                "{}: `{listing}` lists {} {}, {state}, not {} {}, enabled: enable or update it with {}'s own plugin commands",
                program(host),
                listed.id,
                listed.version,
                hosts::of(host).installed_id(),
                env!("CARGO_PKG_VERSION"),
                program(host)
            ));
        }
        Ok(None) => {
            return Some(format!("{}: `{listing}` does not list judged after the install", program(host)));
        }
        Err(why) => {
            return Some(format!("{}: cannot tell whether judged is installed: {why}", program(host)));
        }
    }
    trust_codex_plugin(host, dir)
}

/// Codex CLI runs a plugin's command hook only once its config.toml trusts it: trust ours,
/// as Codex lists it. What is still to do when that fails.
fn trust_codex_plugin(host: Host, dir: &Path) -> Option<String> {
    if !hosts::of(host).trusts_hooks() {
        return None;
    }
    match crate::hosts::trust_codex_hook(CodexHookSource::Plugin, dir, false) {
        Ok(true) => {
            println!(
                "  {:<8} trusts the plugin's Stop hook ({})",
                program(host),
                crate::hosts::codex_config_path().display()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jury_whose_bin_path_has_a_combining_mark_is_valid_toml() {
        let picks = [
            Pick { name: "codex-a".into(), host: Host::CodexCli, model: "gpt-5.4" },
            Pick { name: "gemini-\"b\"".into(), host: Host::GeminiCli, model: "gemini-3-flash" },
        ];
        let bins = |host: Host| PathBuf::from(format!("/home/cafe\u{301}/bin/{}", program(host)));
        let text = jury_toml(&picks, &picks, &bins, &[]);
        let jury = JuryConfig::from_toml(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
        assert_eq!(jury.jurors[0].bin.as_deref(), Some(Path::new("/home/cafe\u{301}/bin/codex")));
        assert_eq!(jury.jurors[1].name, "gemini-\"b\"");
    }
}
