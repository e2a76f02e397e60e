//! The judged plugin (`plugin/`) as the real clients take it, and `judged init`.
//!
//! Each pinned client (tests/hosts/versions.env) validates the plugin where it has a
//! validate command, installs it from the repository with its own command into a temp
//! HOME, lists what it installed (Claude Code also starts the MCP server: only its `mcp
//! list` reports health; Copilot CLI's and Codex CLI's list the config), and uninstalls
//! it. Those skip with `SKIP:` when the clients cannot be installed and fail under `CI`. `judged init --dry-run` runs with
//! stand-in CLIs on PATH; the committed plugin must be what `judged plugin write` renders.

use judged_core::family::{self, Table};
use judged_jury::config::{JuryConfig, Tiebreaker};
use judged_tests::{bin, files_under, hosts, workspace};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// Every file under `dir`, relative to it.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> =
        files_under(dir).iter().map(|file| file.strip_prefix(dir).unwrap().to_path_buf()).collect();
    files.sort();
    files
}

#[test]
fn the_committed_plugin_is_what_judged_renders() {
    let rendered = tempfile::tempdir().unwrap();
    let output = Command::new(bin("judged")).arg("plugin").arg("write").arg(rendered.path()).output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    let committed = workspace().join("plugin");
    assert_eq!(
        tree(&committed),
        tree(rendered.path()),
        "plugin/ holds other files than judged renders: run `cargo run -p judged -- plugin write plugin/`"
    );
    for file in tree(rendered.path()) {
        assert!(
            std::fs::read(committed.join(&file)).unwrap() == std::fs::read(rendered.path().join(&file)).unwrap(),
            "plugin/{} differs from what judged renders (judged/src/plugin.rs): run `cargo run -p judged -- plugin \
             write plugin/` and commit the result",
            file.display()
        );
    }
}

// ---------------------------------------------------------------- judged init

/// A temp world: stand-in CLIs named `clis` in `bin/`, a HOME and a JUDGED_HOME.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new(clis: &[&str]) -> World {
        let dir = tempfile::tempdir().unwrap();
        let bin_dir = dir.path().join("bin");
        std::fs::create_dir_all(&bin_dir).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        std::fs::create_dir_all(dir.path().join("judged")).unwrap();
        for name in clis {
            let path = bin_dir.join(name);
            std::fs::write(&path, "#!/bin/sh\nexit 0\n").unwrap();
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        World { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("judged/config.toml")
    }

    /// `judged init ARGS` with only the stand-ins and the system's tools on PATH.
    fn init(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let path = format!("{}:/usr/bin:/bin", self.dir.path().join("bin").display());
        Command::new(bin("judged"))
            .arg("init")
            .args(args)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.home())
            .env("JUDGED_HOME", self.dir.path().join("judged"))
            .envs(env.iter().copied())
            .output()
            .unwrap()
    }
}

/// The `[jury]` a dry run shows as added lines of its diff.
fn shown_jury(stdout: &str) -> JuryConfig {
    let added: String = stdout
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
        .map(|l| format!("{}\n", &l[1..]))
        .collect();
    JuryConfig::from_toml(&added).unwrap_or_else(|e| panic!("no [jury] in the dry run ({e}):\n{stdout}"))
}

fn families(jury: &JuryConfig, names: &[String]) -> Vec<&'static str> {
    names
        .iter()
        .map(|name| {
            let juror = jury.jurors.iter().find(|j| &j.name == name).expect("a named juror");
            family::family(&juror.model, Table::Evidence).expect("a known family")
        })
        .collect()
}

#[test]
fn init_dry_run_writes_a_cross_family_jury_and_nothing_else() {
    let world = World::new(&["codex", "gemini", "claude", "copilot"]);
    std::fs::create_dir_all(world.home().join(".codex")).unwrap();
    std::fs::write(world.home().join(".codex/auth.json"), "{}").unwrap();
    let output = world.init(&["--dry-run"], &[("GEMINI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")]);
    let stdout = text(&output);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("logged in: ") && stdout.contains("auth.json"), "{stdout}");

    let jury = shown_jury(&stdout);
    jury.validate().unwrap_or_else(|e| panic!("the jury shown is refused: {e}\n{stdout}"));
    let stage_1 = families(&jury, &jury.stage_1);
    assert_ne!(stage_1[0], stage_1[1], "stage 1 of two families: {stdout}");
    let Tiebreaker::Many(names) = &jury.tiebreaker else { panic!("a tiebreaker list: {stdout}") };
    let tiebreakers = families(&jury, names);
    assert!(tiebreakers.iter().any(|f| !stage_1.contains(f)), "a tiebreaker of a third family: {stdout}");
    assert!(tiebreakers.iter().any(|f| *f != tiebreakers[0]), "tiebreakers of two families: {stdout}");
    for host in ["claude plugin install", "copilot plugin install", "codex plugin add", "gemini extensions install"] {
        assert!(stdout.contains(host), "the plugin goes into every host found ({host}): {stdout}");
    }
    assert!(!world.config().exists(), "a dry run writes nothing");
}

#[test]
fn init_with_one_family_says_what_is_missing_and_writes_no_jury() {
    let world = World::new(&["codex"]);
    let output = world.init(&["--dry-run"], &[("OPENAI_API_KEY", "k")]);
    let stdout = text(&output);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("No [jury] written"), "{stdout}");
    assert!(stdout.contains("serve only openai"), "{stdout}");
    assert!(stdout.contains("npm install -g @google/gemini-cli"), "names what to install: {stdout}");
    assert!(!stdout.contains("[jury]\n") && !stdout.contains("+[jury]"), "no jury shown: {stdout}");

    // A CLI found but not logged in serves no family either, and says how to fix it.
    let world = World::new(&["codex", "gemini"]);
    let stdout = text(&world.init(&["--dry-run"], &[("OPENAI_API_KEY", "k")]));
    assert!(stdout.contains("gemini") && stdout.contains("not logged in"), "{stdout}");
    assert!(stdout.contains("No [jury] written"), "{stdout}");
}

/// Issue 32: a juror is named by what answers it (the CLI and the model), and what init
/// could not check of a login is said, in its output and in the jury it writes.
#[test]
fn init_names_jurors_by_cli_and_model_and_says_which_login_it_did_not_check() {
    let world = World::new(&["copilot"]);
    let output = world.init(&["--dry-run"], &[]);
    let stdout = text(&output);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("login not checked: Copilot CLI keeps its login in the system keychain"), "{stdout}");
    let jury = shown_jury(&stdout);
    let names: Vec<&str> = jury.jurors.iter().map(|j| j.name.as_str()).collect();
    assert!(names.iter().all(|n| n.starts_with("copilot/")), "{names:?}");
    for juror in &jury.jurors {
        assert_eq!(juror.name, format!("copilot/{}", juror.model), "named by its model: {stdout}");
    }
    assert!(
        stdout.contains("+# Its login was not checked (copilot keeps it where judged cannot look offline)."),
        "{stdout}"
    );
}

#[test]
fn init_keeps_an_existing_jury_and_says_so() {
    let world = World::new(&["codex", "gemini"]);
    let theirs = "[jury]\nstage_1 = [\"a\", \"b\"]\ntiebreaker = \"c\"\n";
    std::fs::write(world.config(), theirs).unwrap();
    let output = world.init(&["--dry-run"], &[("OPENAI_API_KEY", "k"), ("GEMINI_API_KEY", "k")]);
    let stdout = text(&output);
    assert!(stdout.contains("already has a [jury]: left as it is"), "{stdout}");
    assert!(!stdout.contains("+[jury]"), "{stdout}");
    assert_eq!(std::fs::read_to_string(world.config()).unwrap(), theirs);
}

// ---------------------------------------------------------------- the real clients

/// A client run in a temp HOME of its own, offline.
struct Client {
    program: PathBuf,
    /// Gemini CLI is a node script.
    node: bool,
    home: tempfile::TempDir,
}

impl Client {
    fn new(program: &Path) -> Client {
        let node = program.extension().is_some_and(|e| e == "js");
        Client { program: program.to_path_buf(), node, home: tempfile::tempdir().unwrap() }
    }

    fn run(&self, args: &[&str]) -> Output {
        let mut command = if self.node {
            let mut command = Command::new("node");
            command.arg(&self.program);
            command
        } else {
            Command::new(&self.program)
        };
        let home = self.home.path();
        // This build's judged first, for the MCP server a client starts.
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(std::iter::once(judged_tests::bin_dir()).chain(std::env::split_paths(&path)));
        command
            .args(args)
            .env("PATH", path.unwrap())
            .env("JUDGED_HOME", home.join("judged"))
            .current_dir(workspace())
            .envs(hosts::client_home(home))
            .env("CODEX_HOME", home.join(".codex"))
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("COPILOT_OFFLINE", "true")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .stdin(std::process::Stdio::null());
        for var in ["CLAUDE_CONFIG_DIR", "COPILOT_HOME", "GEMINI_CLI_HOME"] {
            command.env_remove(var);
        }
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        command.output().unwrap()
    }

    /// Run `args`; it must succeed. Returns what it printed.
    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        let said = text(&output);
        assert!(output.status.success(), "{args:?} failed ({}): {said}", output.status);
        said
    }
}

fn plugin_dir() -> String {
    workspace().join("plugin").display().to_string()
}

/// The hook file an installed copy of the plugin holds names judge-hook for `host`.
fn installed_hook(root: &Path, file: &str, host: &str) {
    let text = std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{}/{file}: {e}", root.display()));
    assert!(text.contains(&format!("judge-hook --host {host} --timeout 110")), "{text}");
}

#[test]
fn claude_code_validates_installs_lists_and_uninstalls_the_plugin() {
    let Some(clients) = hosts::clients() else { return };
    let claude = Client::new(&clients.claude);
    let said = claude.ok(&["plugin", "validate", &plugin_dir(), "--profile", "directory"]);
    assert!(said.contains("Validation passed") && !said.contains('⚠') && !said.contains('✘'), "{said}");
    claude.ok(&["plugin", "marketplace", "add", &plugin_dir()]);
    claude.ok(&["plugin", "install", "judged@judged"]);
    let details = claude.ok(&["plugin", "details", "judged"]);
    for part in ["Hooks (1)  TaskCompleted", "MCP servers (1)  judged", "Skills (1)  judged-review"] {
        assert!(details.contains(part), "{part}: {details}");
    }
    // Claude Code starts the MCP server to report its health.
    let mcp = claude.ok(&["mcp", "list"]);
    assert!(mcp.contains("plugin:judged:judged: judged mcp - ✔ Connected"), "{mcp}");
    claude.ok(&["plugin", "uninstall", "judged@judged"]);
    let list = claude.ok(&["plugin", "list"]);
    assert!(!list.contains("judged@judged"), "uninstalled: {list}");
}

#[test]
fn copilot_cli_installs_lists_and_uninstalls_the_plugin() {
    let Some(clients) = hosts::clients() else { return };
    let copilot = Client::new(&clients.copilot);
    // From a marketplace: Copilot CLI warns that direct installs will not be supported.
    let said = copilot.ok(&["plugin", "marketplace", "add", &plugin_dir()]);
    assert!(!said.contains("deprecated"), "{said}");
    let said = copilot.ok(&["plugin", "install", "judged@judged"]);
    assert!(!said.contains("deprecated"), "{said}");
    let list = copilot.ok(&["plugin", "list"]);
    assert!(list.contains(&format!("judged@judged (v{})", env!("CARGO_PKG_VERSION"))), "{list}");
    let mcp = copilot.ok(&["mcp", "list"]);
    assert!(mcp.contains("judged"), "{mcp}");
    // A local marketplace's plugin is loaded where it is, not copied.
    installed_hook(&workspace().join("plugin"), "hooks/copilot-cli.json", "copilot-cli");
    // Uninstalling a live plugin only disables it; removing its marketplace removes it.
    copilot.ok(&["plugin", "marketplace", "remove", "judged"]);
    let list = copilot.ok(&["plugin", "list"]);
    assert!(!list.contains("judged@judged ("), "removed: {list}");
}

#[test]
fn codex_cli_installs_lists_and_uninstalls_the_plugin() {
    let Some(jurors) = hosts::jurors() else { return };
    let codex = Client::new(&jurors.codex);
    codex.ok(&["plugin", "marketplace", "add", &plugin_dir()]);
    codex.ok(&["plugin", "add", "judged@judged"]);
    let list = codex.ok(&["plugin", "list"]);
    assert!(list.lines().any(|l| l.starts_with("judged@judged") && l.contains("installed, enabled")), "{list}");
    let mcp = codex.ok(&["mcp", "list"]);
    assert!(mcp.lines().any(|l| l.starts_with("judged") && l.contains("mcp")), "{mcp}");
    let installed = codex.home.path().join(".codex/plugins/cache/judged/judged").join(env!("CARGO_PKG_VERSION"));
    installed_hook(&installed, "hooks/codex-cli.json", "codex-cli");
    codex.ok(&["plugin", "remove", "judged@judged"]);
    let list = codex.ok(&["plugin", "list"]);
    assert!(list.lines().any(|l| l.starts_with("judged@judged") && l.contains("not installed")), "{list}");
}

#[test]
fn gemini_cli_validates_installs_lists_and_uninstalls_the_extension() {
    let Some(jurors) = hosts::jurors() else { return };
    let gemini = Client::new(&jurors.gemini);
    let extension = workspace().join("plugin/gemini").display().to_string();
    let said = gemini.ok(&["extensions", "validate", &extension]);
    assert!(said.contains("has been successfully validated"), "{said}");
    gemini.ok(&["extensions", "install", &extension, "--consent"]);
    let list = gemini.ok(&["extensions", "list"]);
    for part in ["judged (", "MCP servers:\n  judged", "judged-review: "] {
        assert!(list.contains(part), "{part}: {list}");
    }
    installed_hook(&gemini.home.path().join(".gemini/extensions/judged"), "hooks/hooks.json", "gemini-cli");
    gemini.ok(&["extensions", "uninstall", "judged"]);
    let list = gemini.ok(&["extensions", "list"]);
    assert!(list.contains("No extensions installed"), "{list}");
}

/// Issue 32: a client run keeps the user's home as it found it, an inherited
/// `XDG_CACHE_HOME` included (Copilot CLI unpacks ~235 MB there).
#[test]
fn plugin_runs_leave_the_users_home_as_they_found_it() {
    if hosts::clients().is_none() || hosts::jurors().is_none() {
        return;
    }
    // Not Gemini CLI's (20 s): the jurors' guard runs it with an inherited XDG_CACHE_HOME.
    for test in [
        "copilot_cli_installs_lists_and_uninstalls_the_plugin",
        "claude_code_validates_installs_lists_and_uninstalls_the_plugin",
        "codex_cli_installs_lists_and_uninstalls_the_plugin",
    ] {
        hosts::assert_leaves_home_untouched(test);
    }
}
