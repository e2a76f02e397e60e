//! `judged init`: set judged up on this machine in one step, and `judged plugin write`.
//!
//! It finds the reviewer CLIs on PATH (each is also a host), says which are logged in
//! where the CLI's own files or variables tell offline, writes a `[jury]` whose two
//! stage-1 jurors are of two model families and whose tiebreakers span another (the
//! families derived from the models, as the jury derives them), installs the plugin into
//! each host found (or only the hooks), and runs `judged doctor`.

use crate::CliError;
use judged::install::{Plan, find_on_path};
use judged_core::family::{self, Table};
use judged_jury::config::JuryConfig;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    Plugin(#[from] judged::plugin::PluginError),
    #[error(
        "the [jury] judged init rendered is refused ({0}); this is a bug in judged init, write [jury] by hand (docs/configuration.md, \"The jury\")"
    )]
    Rendered(judged_jury::config::ConfigError),
    #[error("{} host(s) could not take the plugin; each is listed above with the command to run by hand", .0)]
    HostsFailed(usize),
}

pub fn plugin(command: PluginCmd) -> Result<(), CliError> {
    let PluginCmd::Write { dir } = command;
    judged::plugin::write(&dir).map_err(InitError::from)?;
    println!("wrote the judged plugin to {}", dir.display());
    Ok(())
}

/// A CLI judged can run as a juror, and that is a host for the plugin.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cli {
    Codex,
    Gemini,
    Claude,
    Copilot,
}

impl Cli {
    const ALL: [Cli; 4] = [Cli::Codex, Cli::Gemini, Cli::Claude, Cli::Copilot];

    fn name(self) -> &'static str {
        match self {
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
            Cli::Claude => "claude",
            Cli::Copilot => "copilot",
        }
    }

    /// How to get it, for the message that says a family is missing.
    fn install_hint(self) -> &'static str {
        match self {
            Cli::Codex => "Codex CLI (`npm install -g @openai/codex`, then `codex login`)",
            Cli::Gemini => "Gemini CLI (`npm install -g @google/gemini-cli`, then run `gemini` once to log in)",
            Cli::Claude => "Claude Code (`npm install -g @anthropic-ai/claude-code`, then `claude` to log in)",
            Cli::Copilot => "Copilot CLI (`npm install -g @github/copilot`, then `copilot` and /login)",
        }
    }

    /// The small (stage 1) and big (tiebreaker) model of `family` this CLI serves: the
    /// three family CLIs serve their own, Copilot CLI serves all three.
    fn models(self, family: &str) -> Option<(&'static str, &'static str)> {
        match (self, family) {
            (Cli::Codex | Cli::Copilot, family::OPENAI) => Some(("gpt-5.4-mini", "gpt-5.4")),
            (Cli::Gemini | Cli::Copilot, family::GOOGLE) => Some(("gemini-2.5-flash", "gemini-2.5-pro")),
            (Cli::Claude, family::ANTHROPIC) => Some(("claude-haiku-4-5", "claude-sonnet-4-6")),
            (Cli::Copilot, family::ANTHROPIC) => Some(("claude-haiku-4.5", "claude-sonnet-4.6")),
            _ => None,
        }
    }

    /// Whether the CLI is logged in, from what it keeps on disk or reads from the
    /// environment; `None` when that cannot be told offline (a keychain).
    fn login(self, env: &dyn Fn(&str) -> Option<String>) -> Login {
        let home = env("HOME").map(PathBuf::from).unwrap_or_default();
        let dir = |var: &str, default: &str| env(var).map(PathBuf::from).unwrap_or_else(|| home.join(default));
        let (keys, files): (&[&str], Vec<PathBuf>) = match self {
            Cli::Codex => (&["OPENAI_API_KEY", "CODEX_API_KEY"], vec![dir("CODEX_HOME", ".codex").join("auth.json")]),
            Cli::Gemini => (
                &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
                vec![dir("GEMINI_CLI_HOME", "").join(".gemini/oauth_creds.json")],
            ),
            Cli::Claude => (
                &["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"],
                vec![dir("CLAUDE_CONFIG_DIR", ".claude").join(".credentials.json")],
            ),
            Cli::Copilot => (&["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"], Vec::new()),
        };
        if let Some(key) = keys.iter().find(|k| env(k).is_some()) {
            return Login::Yes(format!("${key}"));
        }
        if let Some(file) = files.iter().find(|f| f.is_file()) {
            return Login::Yes(file.display().to_string());
        }
        match self {
            // Copilot CLI keeps its token in the system keychain; only a plaintext
            // fallback would show in its config file.
            Cli::Copilot => {
                let config = dir("COPILOT_HOME", ".copilot").join("config.json");
                match std::fs::read_to_string(&config) {
                    Ok(text) if text.contains("logged_in_users") => Login::Yes(config.display().to_string()),
                    _ => Login::Unknown,
                }
            }
            _ => Login::No(files.first().map(|f| f.display().to_string()).unwrap_or_default(), keys.join(" or ")),
        }
    }
}

enum Login {
    /// Logged in, and where that shows.
    Yes(String),
    /// No login found: the file looked for and the variables that would do.
    No(String, String),
    /// Cannot be told offline.
    Unknown,
}

/// One juror `judged init` writes.
struct Pick {
    name: String,
    cli: Cli,
    model: &'static str,
}

/// The jurors for the CLIs that can serve: two stage-1 jurors of two families, and
/// tiebreakers spanning two families, a third one first when there is one. `None` when
/// fewer than two families are served (a jury there could never be cross-family).
fn choose(usable: &[Cli]) -> Option<(Vec<Pick>, Vec<Pick>)> {
    // Each family by the first CLI that serves it, a family's own CLI before Copilot's.
    let mut served: Vec<(&'static str, Cli)> = Vec::new();
    for cli in usable.iter().copied().filter(|c| *c != Cli::Copilot).chain(usable.iter().copied()) {
        for family in family::HOST_FAMILIES {
            if cli.models(family).is_some() && !served.iter().any(|(f, _)| *f == family) {
                served.push((family, cli));
            }
        }
    }
    if served.len() < 2 {
        return None;
    }
    let pick = |(family, cli): (&str, Cli), big: bool| {
        let (small, large) = cli.models(family).expect("served");
        let size = if big { "big" } else { "small" };
        Pick { name: format!("{}-{size}", cli.name()), cli, model: if big { large } else { small } }
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
    // A name is unique: two jurors of one CLI differ by size, and Copilot CLI serving two
    // families gets the family in the name.
    let mut all: Vec<Pick> = stage_1.into_iter().chain(tiebreakers).collect();
    for i in 0..all.len() {
        if all[..i].iter().any(|p| p.name == all[i].name) || all[i + 1..].iter().any(|p| p.name == all[i].name) {
            let family = family::family(all[i].model, Table::Evidence).unwrap_or(family::UNKNOWN);
            all[i].name = format!("{}-{family}", all[i].name);
        }
    }
    let tiebreakers = all.split_off(2);
    Some((all, tiebreakers))
}

/// The `[jury]` table for the chosen jurors.
fn jury_toml(stage_1: &[Pick], tiebreakers: &[Pick], bins: &dyn Fn(Cli) -> PathBuf) -> String {
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
        text.push_str(&format!(
            "\n[[jury.jurors]]\nname = {:?}\npreset = {:?}\nmodel = {:?}\nbin = {:?}\n",
            pick.name,
            pick.cli.name(),
            pick.model,
            bins(pick.cli).display().to_string(),
        ));
    }
    text
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

pub fn run(args: &InitArgs) -> Result<(), CliError> {
    let path_var = std::env::var_os("PATH");
    let found: Vec<(Cli, PathBuf)> =
        Cli::ALL.iter().filter_map(|cli| Some((*cli, find_on_path(cli.name(), path_var.as_deref())?))).collect();
    println!("Reviewer CLIs and hosts on PATH:");
    let mut usable = Vec::new();
    for cli in Cli::ALL {
        let Some((_, bin)) = found.iter().find(|(c, _)| *c == cli) else {
            println!("  {:<8} not found", cli.name());
            continue;
        };
        match cli.login(&env_var) {
            Login::Yes(how) => {
                println!("  {:<8} {} (logged in: {how})", cli.name(), bin.display());
                usable.push(cli);
            }
            Login::Unknown => {
                println!("  {:<8} {} (login cannot be told offline; counted as usable)", cli.name(), bin.display());
                usable.push(cli);
            }
            Login::No(file, keys) => println!(
                "  {:<8} {} (not logged in: no {file} and no {keys}; log in, then run judged init again to use it as a juror)",
                cli.name(),
                bin.display()
            ),
        }
    }
    write_jury(args, &usable, &found)?;
    let hosts: Vec<(Cli, PathBuf)> = found;
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
fn write_jury(args: &InitArgs, usable: &[Cli], found: &[(Cli, PathBuf)]) -> Result<(), CliError> {
    let config = judged_protocol::paths::config_path();
    let file = judged::install::read_user_file(&config)?;
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
            usable.iter().filter_map(|c| family::HOST_FAMILIES.into_iter().find(|f| c.models(f).is_some())).collect();
        let missing: Vec<&str> = Cli::ALL.iter().filter(|c| !usable.contains(c)).map(|c| c.install_hint()).collect();
        println!(
            "\nNo [jury] written: a jury needs reviewers of two model families, and the usable CLIs serve {}. \
             Install and log in to one of: {}; then run judged init again.",
            if families.is_empty() { "none".to_owned() } else { format!("only {}", families.join(", ")) },
            missing.join("; ")
        );
        return Ok(());
    };
    let bins = |cli: Cli| found.iter().find(|(c, _)| *c == cli).map(|(_, b)| b.clone()).unwrap_or_default();
    let jury = jury_toml(&stage_1, &tiebreakers, &bins);
    JuryConfig::from_toml(&jury).and_then(|j| j.validate()).map_err(InitError::Rendered)?;
    let served: Vec<&str> =
        stage_1.iter().chain(&tiebreakers).filter_map(|p| family::family(p.model, Table::Evidence)).collect();
    if !family::HOST_FAMILIES.iter().all(|f| served.contains(f)) {
        println!(
            "\nThe jury spans two families only: a tiebreaker is then of the author's family when stage 1 is of \
             the other two. Install a third ({}) and run judged init again for one that never is.",
            Cli::ALL.iter().filter(|c| !usable.contains(c)).map(|c| c.install_hint()).collect::<Vec<_>>().join("; ")
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
fn install_hooks(args: &InitArgs, hosts: &[(Cli, PathBuf)]) -> Result<(), CliError> {
    let config_path = judged_protocol::paths::config_path();
    let config = judged::config::ConfigFile::load(&config_path)?;
    let timeout = crate::commands::install_hooks::hook_timeout_seconds(&config, &config_path)?;
    let project = args.project.clone().unwrap_or_else(|| PathBuf::from("."));
    for (cli, _) in hosts {
        let plan = match cli {
            Cli::Claude => {
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
                    judged::config::OnError::Block,
                    timeout,
                    false,
                    None,
                )?;
                judged::install::claude_install(&settings, &command, &["TaskCompleted".into()], timeout)?
            }
            Cli::Copilot => {
                let committed = judged::install::copilot_path(&project);
                let command = crate::commands::install_hooks::hook_command(
                    "copilot-cli",
                    judged::config::OnError::Block,
                    timeout,
                    false,
                    Some(&committed),
                )?;
                judged::install::copilot_install(&committed, &command, timeout)?
            }
            Cli::Codex => {
                let hooks = judged::install::codex_hooks_path(None);
                let command = crate::commands::install_hooks::hook_command(
                    "codex-cli",
                    judged::config::OnError::Block,
                    timeout,
                    false,
                    None,
                )?;
                judged::install::check_codex_config()?;
                carry_out(judged::install::codex_install(&hooks, &command, timeout)?, args.dry_run)?;
                crate::commands::install_hooks::trust_codex_hook(&hooks, &command, None, args.dry_run)?;
                continue;
            }
            Cli::Gemini => {
                let settings = judged::install::gemini_settings_path(None);
                let command = crate::commands::install_hooks::hook_command(
                    "gemini-cli",
                    judged::config::OnError::Block,
                    timeout,
                    false,
                    None,
                )?;
                judged::install::gemini_install(&settings, &command, timeout)?
            }
        };
        carry_out(plan, args.dry_run)?;
    }
    Ok(())
}

/// The host's own commands that install the plugin from `dir`.
fn install_commands(cli: Cli, bin: &Path, dir: &Path) -> Vec<Vec<std::ffi::OsString>> {
    let words = |words: &[&OsStr]| -> Vec<std::ffi::OsString> {
        std::iter::once(bin.as_os_str()).chain(words.iter().copied()).map(OsStr::to_owned).collect()
    };
    let at = format!("{0}@{0}", judged::plugin::NAME);
    let at = OsStr::new(&at);
    let s = |s: &'static str| OsStr::new(s);
    match cli {
        Cli::Claude => vec![
            words(&[s("plugin"), s("marketplace"), s("add"), dir.as_os_str()]),
            words(&[s("plugin"), s("install"), at]),
        ],
        Cli::Copilot => vec![words(&[s("plugin"), s("install"), dir.as_os_str()])],
        Cli::Codex => vec![
            words(&[s("plugin"), s("marketplace"), s("add"), dir.as_os_str()]),
            words(&[s("plugin"), s("add"), at]),
        ],
        Cli::Gemini => {
            let extension = dir.join(judged::plugin::GEMINI_DIR);
            vec![words(&[s("extensions"), s("install"), extension.as_os_str(), s("--consent")])]
        }
    }
}

/// Write the plugin into the data dir and install it into each host with its own commands.
fn install_plugin(args: &InitArgs, hosts: &[(Cli, PathBuf)]) -> Result<(), CliError> {
    let dir = judged_protocol::paths::data_dir().join("plugin");
    println!("\nThe plugin, written to {}, installed with each host's own commands:", dir.display());
    if !args.dry_run {
        judged::plugin::write(&dir).map_err(InitError::from)?;
    }
    let mut failed = 0;
    for (cli, bin) in hosts {
        for command in install_commands(*cli, bin, &dir) {
            let shown: Vec<String> =
                command.iter().map(|w| judged::install::shell_word(&w.to_string_lossy())).collect();
            println!("  {}", shown.join(" "));
            if args.dry_run {
                continue;
            }
            match Command::new(&command[0]).args(&command[1..]).status() {
                Ok(status) if status.success() => {}
                outcome => {
                    let why = outcome.map_or_else(|e| e.to_string(), |s| s.to_string());
                    println!("  {} could not take the plugin ({why}); run the command above by hand", cli.name());
                    failed += 1;
                    break;
                }
            }
        }
    }
    if failed > 0 { Err(InitError::HostsFailed(failed).into()) } else { Ok(()) }
}
