//! The installer and the user's own files (issue 31): `install-hooks`, `uninstall-hooks`
//! and `judged init` edit files where users keep API keys, often managed by a dotfiles
//! tool. They keep each file's mode, owner, key order, layout and comments, write through
//! a symbolic link, refuse a read-only file or one that does not parse (naming the file,
//! the line and the column), and an uninstall gives back the bytes there were (or no file,
//! where there was none).

use judged_tests::bin;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A temp world: HOME, JUDGED_HOME and each host's home under one directory, and a `bin/`
/// of stand-in CLIs.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let world = World { dir: tempfile::tempdir().unwrap() };
        for sub in ["home", "judged", "claude", "codex", "gemini", "bin", "project"] {
            std::fs::create_dir_all(world.path(sub)).unwrap();
        }
        world
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// A stand-in for the CLI `name` on PATH, which fails whatever it is asked.
    fn stand_in(&self, name: &str) {
        let file = self.path("bin").join(name);
        std::fs::write(&file, "#!/bin/sh\nexit 1\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// `judged ARGS` with this build's binaries and the stand-ins on PATH.
    fn judged(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let build = bin("judged").parent().unwrap().to_path_buf();
        let path = std::env::join_paths([self.path("bin"), build, "/usr/bin".into(), "/bin".into()]).unwrap();
        Command::new(bin("judged"))
            .args(args)
            .env_clear()
            .env("PATH", path)
            .env("HOME", self.path("home"))
            .env("JUDGED_HOME", self.path("judged"))
            .env("CLAUDE_CONFIG_DIR", self.path("claude"))
            .env("CODEX_HOME", self.path("codex"))
            .env("GEMINI_CLI_HOME", self.path("gemini"))
            .envs(env.iter().copied())
            .current_dir(self.path("project"))
            .output()
            .unwrap()
    }

    /// Every file name in `dir`.
    fn names(&self, dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }
}

fn said(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

fn ok(output: Output) -> String {
    let said = said(&output);
    assert!(output.status.success(), "expected success: {said}");
    said
}

fn refused(output: Output) -> String {
    let said = said(&output);
    assert!(!output.status.success(), "expected a refusal: {said}");
    said
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

/// A user's Claude Code settings, as people write them: not sorted, four spaces, and an
/// API key.
const CLAUDE_SETTINGS: &str = "{\n    \"model\": \"opus\",\n    \"env\": {\n        \"ANTHROPIC_API_KEY\": \"sk-ant-secret\"\n    },\n    \"alwaysThinkingEnabled\": true\n}\n";

#[test]
fn a_private_settings_file_stays_private_and_keeps_its_owner() {
    let world = World::new();
    let settings = world.path("claude/settings.json");
    std::fs::write(&settings, CLAUDE_SETTINGS).unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Another owner, where the tests may give one (as root): the file must stay theirs.
    let other = std::os::unix::fs::chown(&settings, Some(4242), Some(4243)).is_ok();
    ok(world.judged(&["install-hooks", "--claude", "--user"], &[]));
    assert!(std::fs::read_to_string(&settings).unwrap().contains("judge-hook"));
    assert_eq!(mode(&settings), 0o600, "the settings stay 0600");
    if other {
        let meta = std::fs::metadata(&settings).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (4242, 4243), "the settings keep their owner");
    }
    for name in world.names(&world.path("claude")) {
        let file = world.path("claude").join(&name);
        assert_eq!(mode(&file), 0o600, "{name} (a backup holds the same keys) is 0600 too");
        assert!(!name.contains("tmp"), "no temp file is left: {name}");
    }
    ok(world.judged(&["uninstall-hooks", "--claude", "--user"], &[]));
    assert_eq!(mode(&settings), 0o600);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), CLAUDE_SETTINGS, "uninstall gives back the bytes");
}

#[test]
fn a_symlinked_settings_file_is_written_through_the_link() {
    let world = World::new();
    let dotfiles = world.path("home/dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("claude-settings.json");
    std::fs::write(&real, CLAUDE_SETTINGS).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = world.path("claude/settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();

    ok(world.judged(&["install-hooks", "--claude", "--user"], &[]));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    assert_eq!(std::fs::read_link(&link).unwrap(), real);
    assert!(std::fs::read_to_string(&real).unwrap().contains("judge-hook"), "the real file gets the hook");
    assert_eq!(mode(&real), 0o600);
    assert!(world.names(&dotfiles).iter().all(|n| !n.contains("tmp")), "{:?}", world.names(&dotfiles));
    // The backup of what the file held goes beside the file, not beside the link: a link a
    // project holds to the user's settings must not put their copy into the project.
    assert_eq!(world.names(&world.path("claude")), ["settings.json"], "nothing beside the link");
    assert!(world.names(&dotfiles).iter().any(|n| n.starts_with("claude-settings.json.judged-backup-")));

    ok(world.judged(&["uninstall-hooks", "--claude", "--user"], &[]));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), CLAUDE_SETTINGS);

    // A link to nothing: refused, naming both, and nothing is made.
    std::fs::remove_file(&real).unwrap();
    let said = refused(world.judged(&["install-hooks", "--claude", "--user"], &[]));
    assert!(said.contains(&format!("{} is a symbolic link to {}", link.display(), real.display())), "{said}");
    assert!(said.contains("which does not exist"), "{said}");
    assert!(!real.exists());
}

#[test]
fn a_read_only_settings_file_is_refused_and_left_alone() {
    let world = World::new();
    let settings = world.path("claude/settings.json");
    std::fs::write(&settings, CLAUDE_SETTINGS).unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o444)).unwrap();
    let said = refused(world.judged(&["install-hooks", "--claude", "--user"], &[]));
    assert!(said.contains(&format!("{} is read-only", settings.display())), "{said}");
    assert!(said.contains("chmod u+w"), "says what to do: {said}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), CLAUDE_SETTINGS);
    assert_eq!(mode(&settings), 0o444);
    assert_eq!(world.names(&world.path("claude")), ["settings.json"], "no backup, no temp file");
}

#[test]
fn broken_json_is_refused_with_its_line_and_column() {
    let world = World::new();
    let settings = world.path("claude/settings.json");
    let broken = "{\n    \"model\": \"opus\"\n    \"env\": {}\n}\n";
    std::fs::write(&settings, broken).unwrap();
    let said = refused(world.judged(&["install-hooks", "--claude", "--user"], &[]));
    assert!(said.contains(&format!("{}:3:5", settings.display())), "file, line and column: {said}");
    assert!(said.contains("not valid JSON") && said.contains("fix it"), "{said}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), broken);
}

/// Gemini CLI reads its settings as JSON with comments (it strips `//` and `/* */`
/// comments, then `JSON.parse`s, so a trailing comma is an error there too).
#[test]
fn gemini_settings_with_comments_are_edited_in_place_and_given_back() {
    let world = World::new();
    let settings = world.path("gemini/.gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let theirs = "// my Gemini settings\n{\n  /* the model */\n  \"model\": {\"name\": \"gemini-2.5-pro\"}, // pinned\n  \"general\": {\n    \"vimMode\": true\n  }\n}\n";
    std::fs::write(&settings, theirs).unwrap();
    ok(world.judged(&["install-hooks", "--gemini", "--user"], &[]));
    let written = std::fs::read_to_string(&settings).unwrap();
    assert!(written.contains("AfterAgent") && written.contains("judge-hook --host gemini-cli"), "{written}");
    for line in theirs.lines().filter(|l| l.contains("//") || l.contains("/*")) {
        assert!(written.contains(line.trim_end_matches(", // pinned")), "the comment {line:?} stays: {written}");
    }
    assert!(written.find("\"model\"").unwrap() < written.find("\"general\"").unwrap(), "order kept: {written}");
    ok(world.judged(&["uninstall-hooks", "--gemini", "--user"], &[]));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), theirs, "uninstall gives back the bytes");

    let trailing = "{\n  \"general\": {\n    \"vimMode\": true,\n  }\n}\n";
    std::fs::write(&settings, trailing).unwrap();
    let said = refused(world.judged(&["install-hooks", "--gemini", "--user"], &[]));
    assert!(said.contains(&format!("{}:4:3", settings.display())), "file, line and column: {said}");
    assert!(said.contains("comments"), "says how Gemini CLI reads it: {said}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), trailing);
}

/// Qwen Code's user settings, which hold its provider's key: edited in place with their
/// comments, private file kept private, and given back byte for byte. `--managed-only`,
/// which its system settings have no switch for, is refused before anything is written.
#[test]
fn qwen_settings_keep_their_key_comments_and_mode_and_managed_only_is_refused() {
    let world = World::new();
    let settings = world.path("qwen/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let theirs = "{\n  // my provider\n  \"env\": {\"OPENAI_API_KEY\": \"sk-secret\"},\n  \"model\": {\"name\": \"qwen3-coder-plus\"}\n}\n";
    std::fs::write(&settings, theirs).unwrap();
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o600)).unwrap();
    let qwen_home = world.path("qwen").display().to_string();
    let env = [("QWEN_HOME", qwen_home.as_str())];
    ok(world.judged(&["install-hooks", "--qwen", "--user"], &env));
    let written = std::fs::read_to_string(&settings).unwrap();
    assert!(written.contains("\"Stop\"") && written.contains("judge-hook --host qwen-code"), "{written}");
    assert!(written.contains("// my provider") && written.contains("sk-secret"), "{written}");
    assert_eq!(mode(&settings), 0o600, "still private");
    ok(world.judged(&["uninstall-hooks", "--qwen", "--user"], &env));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), theirs, "uninstall gives back the bytes");

    let system = world.path("etc-qwen/settings.json");
    let system_env = [("QWEN_CODE_SYSTEM_SETTINGS_PATH", system.to_str().unwrap())];
    let said = refused(world.judged(&["install-hooks", "--qwen", "--managed", "--managed-only"], &system_env));
    assert!(said.contains("--managed-only is not written for Qwen Code"), "{said}");
    assert!(!system.exists(), "nothing written: {said}");
}

#[test]
fn key_order_and_layout_are_kept_and_uninstall_gives_back_the_bytes_or_no_file() {
    let world = World::new();
    let settings = world.path("claude/settings.json");
    std::fs::write(&settings, CLAUDE_SETTINGS).unwrap();
    ok(world.judged(&["install-hooks", "--claude", "--user"], &[]));
    let written = std::fs::read_to_string(&settings).unwrap();
    assert!(written.starts_with(CLAUDE_SETTINGS.trim_end().trim_end_matches('}').trim_end()), "{written}");
    assert!(written.contains("\n    \"hooks\": {\n        \"TaskCompleted\": ["), "four spaces as theirs: {written}");
    ok(world.judged(&["uninstall-hooks", "--claude", "--user"], &[]));
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), CLAUDE_SETTINGS);

    // No file before, no file after.
    std::fs::remove_file(&settings).unwrap();
    ok(world.judged(&["install-hooks", "--claude", "--user"], &[]));
    assert!(settings.exists());
    ok(world.judged(&["uninstall-hooks", "--claude", "--user"], &[]));
    assert!(!settings.exists(), "uninstall leaves no file where there was none");
}

/// Codex CLI refuses to start on a `config.toml` that does not parse, so its app-server
/// lists no hook: the installer names the file and the line instead, before writing.
#[test]
fn a_broken_codex_config_is_named_before_anything_is_written() {
    let world = World::new();
    let config = world.path("codex/config.toml");
    let broken = "model = \"gpt-5.5\"\n\n[profiles.work\nmodel = \"o3\"\n";
    std::fs::write(&config, broken).unwrap();
    let said = refused(world.judged(&["install-hooks", "--codex", "--user"], &[]));
    assert!(said.contains(&format!("{}:3:", config.display())), "file and line: {said}");
    assert!(said.contains("not valid TOML") && said.contains("fix it"), "{said}");
    assert!(!said.contains("lists no hook"), "{said}");
    assert!(!world.path("codex/hooks.json").exists(), "nothing is written");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), broken);
}

/// `judged init --hooks-only` on a judged `config.toml` that does not parse: refused,
/// however often, and the file stays as it was.
#[test]
fn init_refuses_a_config_that_does_not_parse_and_adds_no_jury() {
    let world = World::new();
    world.stand_in("codex");
    world.stand_in("gemini");
    let config = world.path("judged/config.toml");
    let broken = "[gate]\nevents = [\"TaskCompleted\"\n";
    std::fs::write(&config, broken).unwrap();
    let keys = [("OPENAI_API_KEY", "k"), ("GEMINI_API_KEY", "k")];
    for _ in 0..2 {
        let said = refused(world.judged(&["init", "--hooks-only"], &keys));
        assert!(said.contains(&format!("{}:", config.display())) && said.contains("not valid TOML"), "{said}");
        assert_eq!(std::fs::read_to_string(&config).unwrap(), broken, "no [jury] appended: {said}");
    }
}

/// A `codex` that exits at once is said to have, with its status, not to have run past
/// the deadline; the hook file is written and awaits Codex's own trust.
#[test]
fn a_codex_that_exits_at_once_is_named_as_failed_not_as_slow() {
    let world = World::new();
    world.stand_in("codex");
    let said = said(&world.judged(&["install-hooks", "--codex", "--user"], &[]));
    assert!(said.contains("app-server` failed (exit status: 1): it ended without listing its hooks"), "{said}");
    assert!(!said.contains("did not finish within"), "{said}");
}
