//! `judged install-hooks` / `uninstall-hooks`: the settings-file writers each host's
//! `HostSetup` installs its hook through (`judged/src/hosts/<host>.rs` says which file,
//! which events and which format).
//!
//! A file of Claude Code's hook shape (`{"hooks": {Event: [{"hooks": [{type, command,
//! timeout}]}]}}`, which Codex CLI's `hooks.json`, Gemini CLI's and Qwen Code's
//! `settings.json` share) gets our command hook merged in ([`command_hooks_install`]),
//! leaving everything else as it was, byte for byte. Our entries are recognised by their
//! command naming `judge-hook`, so uninstall removes only them, and installing again
//! brings their command up to date. [`hook_program`] decides how the command names
//! `judge-hook`: by its bare name when PATH finds it. Every change is a [`Plan`]: shown
//! as a diff on `--dry-run`, or written with a backup.

mod json_edit;
mod user_file;

use crate::hook_entry::command_hook_group;
pub use json_edit::Syntax;
use json_edit::{Doc, Entry, Node, ParseError};
use judged_core::adapter::HookEvent;
use serde_json::{Map, Value, json};
use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
pub use user_file::{UserFile, parse_toml, read as read_user_file};

/// What marks a hook entry as ours.
const SHIM: &str = "judge-hook";

/// How the three binaries get on PATH (README, "Install for daily use"); named in every
/// message that asks the user to install them.
pub const INSTALL_COMMAND: &str =
    "for crate in judged cli hook-shims; do cargo install --locked --path \"$crate\"; done";

/// Why a hooks file cannot be changed; each names the file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: std::io::Error },
    #[error(
        "{} is {len} bytes, more than a settings file may be ({max} bytes); it is not read: look at what made it \
         that large, and make it a settings file again",
        path.display()
    )]
    TooLarge { path: PathBuf, len: u64, max: u64 },
    #[error(
        "{} is a symbolic link to {}, which does not exist; create that file or remove the link, then run again",
        path.display(),
        to.display()
    )]
    DanglingLink { path: PathBuf, to: PathBuf },
    #[error("{} is not a regular file; move it away, then run again", path.display())]
    NotAFile { path: PathBuf },
    #[error(
        "{} is read-only (mode {mode:04o}), so judged leaves it as it is; to have judged change it, make it \
         writable (`chmod u+w {}`) and run again",
        path.display(),
        path.display()
    )]
    ReadOnly { path: PathBuf, mode: u32 },
    #[error(
        "{} belongs to uid {uid}, and rewriting it as this user would make it this user's; run this as that \
         user (or as root, which keeps the owner)",
        path.display()
    )]
    OtherOwner { path: PathBuf, uid: u32 },
    #[error("{} is not writable by this user ({source}); fix its permissions, then run again", path.display())]
    NotWritable { path: PathBuf, source: std::io::Error },
    #[error("{} changed since judged read it, so nothing was written; run again", path.display())]
    Changed { path: PathBuf },
    #[error(transparent)]
    Write(#[from] judged_io::files::AtomicWriteError),
    #[error(
        "{}:{}:{}: not valid {syntax}: {}; fix it, then run again",
        path.display(),
        source.line(),
        source.column(),
        json_edit::reason(source)
    )]
    Json { path: PathBuf, syntax: Syntax, source: serde_json::Error },
    #[error("{} is not a JSON object; fix or move it, then run again", .0.display())]
    NotAnObject(PathBuf),
    #[error("{}: `{field}` is not {expected}; fix it, then run again", path.display())]
    Field { path: PathBuf, field: String, expected: &'static str },
    #[error(
        "cannot find `judge-hook` on PATH or beside judged{}; install the tools from a checkout with `{INSTALL_COMMAND}`, then run again",
        beside.as_ref().map(|b| format!(" ({})", b.display())).unwrap_or_default()
    )]
    ShimNotFound { beside: Option<PathBuf> },
    #[error(
        "{} is the host's managed settings, which only root may write (that is what keeps an agent from \
         removing the hook): run it as root, e.g. `sudo judged install-hooks --{host} --managed`",
        path.display()
    )]
    NeedsRoot { path: PathBuf, host: &'static str },
    #[error("{}:{line}:{column}: not valid TOML: {}; fix it, then run again", path.display(), source.message())]
    Toml { path: PathBuf, line: usize, column: usize, source: Box<toml::de::Error> },
    #[error(
        "{} already trusts `{key}` with another hash, written by someone else; trust the hook judged wrote in \
         Codex's /hooks, or remove that table and run again",
        path.display()
    )]
    TrustedElsewhere { path: PathBuf, key: String },
    #[error(
        "{} writes its [hooks] (or hooks.state) in a form a table of judged's cannot be added to ({reason}), so \
         judge-hook's Stop hook is written but not trusted; trust it in Codex's /hooks, or write hooks.state as \
         [hooks.state.\"…\"] tables and run again",
        path.display()
    )]
    TrustNotAddable { path: PathBuf, reason: String },
    #[error(
        "{} holds requirements judged did not write, which it will not rewrite; add these lines to it yourself \
         (merging them into its [features] and [hooks] tables, if it has them):\n{add}",
        path.display()
    )]
    RequirementsTheirs { path: PathBuf, add: String },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> InstallError + use<> {
    let path = path.to_owned();
    move |source| InstallError::Io { action, path, source }
}

/// A planned change to one file: its text before and after.
#[derive(Debug)]
pub struct Plan {
    pub path: PathBuf,
    pub before: Option<String>,
    /// `None` removes the file.
    pub after: Option<String>,
    /// The file as read, which the change is written to.
    file: UserFile,
}

impl Plan {
    /// Change `file` (as read) to `after`; `None` removes it.
    pub fn new(file: UserFile, after: Option<String>) -> Plan {
        Plan { path: file.path.clone(), before: file.text.clone(), after, file }
    }

    pub fn changes(&self) -> bool {
        self.before != self.after
    }

    /// Refuse a change to a file this user cannot rewrite as it is (read-only, another
    /// user's), before anything is written; a dry run says so too.
    pub fn check(&self) -> Result<(), InstallError> {
        if self.changes() { self.file.check_writable() } else { Ok(()) }
    }

    /// Where the change is written when the path is a link: the file it names.
    pub fn link_target(&self) -> Option<&Path> {
        self.file.is_link().then(|| self.file.target())
    }

    /// A line diff of the planned change, for `--dry-run`: the lines changed with three of
    /// context around them (a settings file's other lines are the user's, its keys among
    /// them), and of any line shown that names a key, a token, a secret or a password, its
    /// value hidden.
    pub fn diff(&self) -> String {
        let (before, after) = (self.before.as_deref().unwrap_or_default(), self.after.as_deref().unwrap_or_default());
        let mut out = format!("--- {}\n+++ {}\n", self.path.display(), self.path.display());
        let diff = similar::TextDiff::from_lines(before, after);
        for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
            out.push_str(&format!("{}\n", hunk.header()));
            for change in hunk.iter_changes() {
                let sign = match change.tag() {
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                    similar::ChangeTag::Equal => ' ',
                };
                let line = change.value();
                let line = line.strip_suffix('\n').unwrap_or(line);
                out.push(sign);
                out.push_str(&value_hidden(line.strip_suffix('\r').unwrap_or(line)));
                out.push('\n');
            }
        }
        out
    }

    /// Write the change, keeping a backup of the file it replaces (as private as it).
    pub fn apply(&self) -> Result<Option<PathBuf>, InstallError> {
        self.check()?;
        self.file.check_unchanged()?;
        let backup = match &self.before {
            Some(before) => Some(self.back_up(before)?),
            None => None,
        };
        match &self.after {
            Some(after) => self.file.write(after)?,
            None => fs::remove_file(&self.path).map_err(io_error("remove", &self.path))?,
        }
        Ok(backup)
    }
}

/// Show (`dry_run`) or apply `plan`, saying what it did.
pub fn carry_out(plan: Plan, dry_run: bool) -> Result<(), InstallError> {
    if !plan.changes() {
        println!("{}: already as wanted, nothing to change", plan.path.display());
        return Ok(());
    }
    // A refusal (a read-only file, another user's) is what a dry run would meet too.
    plan.check()?;
    let through = plan.link_target().map(|t| format!(" (a link: written to {})", t.display())).unwrap_or_default();
    if dry_run {
        print!("{}", plan.diff());
        if !through.is_empty() {
            println!("{}{through}", plan.path.display());
        }
    } else {
        let backup = plan.apply()?;
        println!("updated {}{through}", plan.path.display());
        if let Some(backup) = backup {
            println!("backup  {}", backup.display());
        }
    }
    Ok(())
}

impl Plan {
    /// Write `before` beside the file under a name no file has: a backup never replaces
    /// another (two installs within a millisecond get `-2`, `-3`, …).
    fn back_up(&self, before: &str) -> Result<PathBuf, InstallError> {
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
        // Beside the file the link names, never beside a link: a link a project holds to
        // the user's own settings would have their copy, API keys and all, in the project.
        let file = self.file.target();
        let name = file.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let mut tries = 1..;
        loop {
            let n = tries.next().unwrap_or(u32::MAX);
            let suffix = if n == 1 { String::new() } else { format!("-{n}") };
            let backup = file.with_file_name(format!("{name}.judged-backup-{stamp}{suffix}"));
            match self.file.write_beside(&backup, before) {
                Err(InstallError::Write(judged_io::files::AtomicWriteError::Exists { .. })) if n < 100 => continue,
                written => return written.map(|()| backup),
            }
        }
    }
}

/// `line` with the value it sets hidden when its name says it is a credential (`"apiKey":
/// "…"`, `OPENAI_API_KEY = "…"`, a token, a secret, a password): what a dry run shows
/// may be pasted where others read it.
fn value_hidden(line: &str) -> std::borrow::Cow<'_, str> {
    const NAMES: [&str; 6] = ["key", "token", "secret", "password", "credential", "bearer"];
    let Some(at) = line.find([':', '=']) else { return line.into() };
    let name = line[..at].to_lowercase();
    if !NAMES.iter().any(|word| name.contains(word)) || line[at + 1..].trim().is_empty() {
        return line.into();
    }
    format!("{} (hidden)", &line[..=at]).into()
}

/// A host's JSON settings as a value, comments allowed (as Gemini CLI and Qwen Code read
/// them); `None` for text that is not such a document.
pub fn settings_value(text: &str) -> Option<Value> {
    let doc = Doc::parse(text, Syntax::JsonWithComments).ok()?;
    Some(doc.value(doc.root()))
}

/// Where `name` resolves on `path` (a `PATH` value) as a shell finds it: the first
/// executable file of that name. Empty and relative entries are skipped: a hook must not
/// depend on the directory the host runs it in.
pub fn find_on_path(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|file| fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// Whether two paths name the same file (symlinks followed, hard links included).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// `word` as one word of a POSIX shell command line (the hosts run hooks through a shell).
pub fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'+' | b':' | b','));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', "'\\''")) }
}

/// The program a hook command runs, and what the user should know about it.
#[derive(Debug, PartialEq, Eq)]
pub struct HookProgram {
    /// The first word of the hook command: `judge-hook`, or a quoted absolute path.
    pub program: String,
    pub warnings: Vec<String>,
}

/// How a hook names `judge-hook`, so it resolves wherever the tools are installed.
///
/// - `judge-hook` on PATH (`on_path`) is the one beside this `judged` (`beside`), or there
///   is none beside it: the bare name.
/// - On PATH, but another binary than the one beside `judged` (say, judged run from a
///   build tree with an older install on PATH): the bare name too, with a warning naming
///   both, since the hook will run the one on PATH.
/// - Not on PATH: the absolute path of the one beside `judged` (what a build tree's
///   tests and `cargo run` need), with a warning that it breaks when the build moves.
/// - `absolute`: that absolute path whatever PATH says (the one beside `judged`, else
///   the one on PATH).
///
/// `committed` is the file the command goes into when it is a project file that gets
/// committed: an absolute path there is a path on this machine only, so it is warned of.
pub fn hook_program(
    beside: Option<&Path>,
    on_path: Option<&Path>,
    absolute: bool,
    committed: Option<&Path>,
) -> Result<HookProgram, InstallError> {
    let not_found = || InstallError::ShimNotFound { beside: beside.map(Path::to_path_buf) };
    let committed_warning = |path: &Path| {
        committed.map(|file| {
            format!(
                "{} is a project file that gets committed, and {} is a path on this machine only: on another \
                 checkout or machine the hook does not run and the gate is off there; without --absolute \
                 it names `judge-hook` as found on PATH",
                file.display(),
                path.display()
            )
        })
    };
    let mut warnings = Vec::new();
    let chosen = if absolute {
        beside.or(on_path).ok_or_else(not_found)?
    } else {
        match (beside, on_path) {
            (Some(beside), Some(on_path)) if !same_file(beside, on_path) => {
                warnings.push(format!(
                    "`judge-hook` on PATH is {}, not {} beside this judged; the hook runs the one on PATH \
                     (compare `judge-hook --version` with `judged --version`, or pass --absolute to pin {})",
                    on_path.display(),
                    beside.display(),
                    beside.display()
                ));
                return Ok(HookProgram { program: SHIM.to_owned(), warnings });
            }
            (_, Some(_)) => return Ok(HookProgram { program: SHIM.to_owned(), warnings }),
            (Some(beside), None) => {
                warnings.push(format!(
                    "`judge-hook` is not on PATH, so the hook names {} by its absolute path, which breaks when \
                     that build moves (cargo clean, another checkout); install the tools with `{INSTALL_COMMAND}` \
                     and run install-hooks again to write the bare name",
                    beside.display()
                ));
                beside
            }
            (None, None) => return Err(not_found()),
        }
    };
    warnings.extend(committed_warning(chosen));
    Ok(HookProgram { program: shell_word(&chosen.to_string_lossy()), warnings })
}

/// The JSON settings at `path`, read and parsed as its host reads them (`syntax`); no file
/// reads as [`NEW_JSON`].
pub(crate) fn read_json(path: &Path, syntax: Syntax) -> Result<(UserFile, Doc), InstallError> {
    let file = user_file::read(path)?;
    let doc = parse_json(path, file.text.as_deref().unwrap_or(NEW_JSON), syntax)?;
    Ok((file, doc))
}

fn parse_json(path: &Path, text: &str, syntax: Syntax) -> Result<Doc, InstallError> {
    Doc::parse(text, syntax).map_err(|e| match e {
        ParseError::Syntax(source) => InstallError::Json { path: path.to_owned(), syntax, source },
        ParseError::NotAnObject => InstallError::NotAnObject(path.to_owned()),
    })
}

/// What a JSON settings file starts from when there is none. An uninstall that leaves
/// exactly this removes the file: there was none before the install.
const NEW_JSON: &str = "{}\n";

fn is_ours(group: &Value) -> bool {
    group["hooks"]
        .as_array()
        .is_some_and(|hooks| hooks.iter().any(|h| h["command"].as_str().is_some_and(|c| c.contains(SHIM))))
}

/// Add our command hook for each of `events` to a file of Claude Code's hook shape
/// (`{"hooks": {Event: [{"hooks": [{type, command, timeout}]}]}}`), which Codex CLI's
/// `hooks.json` and Gemini CLI's `settings.json` share; `timeout` in the host's unit.
/// `top` sets (or, `None`, removes) one top-level setting too. The rest of the file stays
/// as the user wrote it, byte for byte.
pub(crate) fn command_hooks_install(
    settings: &Path,
    syntax: Syntax,
    command: &str,
    events: &[HookEvent],
    timeout: u64,
    top: Option<(&str, Option<Value>)>,
) -> Result<Plan, InstallError> {
    let (file, doc) = read_json(settings, syntax)?;
    let field = |field: String, expected| InstallError::Field { path: settings.to_owned(), field, expected };
    let group = command_hook_group(command, timeout);
    let mut events: Vec<&str> = events.iter().map(|event| event.as_str()).collect();
    events.dedup();
    let mut edits = doc.edits();
    match doc.root().get("hooks") {
        None => {
            let hooks: Map<String, Value> = events.iter().map(|e| ((*e).to_owned(), json!([group]))).collect();
            edits.append(doc.root(), &[Entry::Member("hooks".into(), Value::Object(hooks))]);
        }
        Some(hooks) if hooks.members().is_none() => return Err(field("hooks".into(), "an object")),
        Some(hooks) => {
            let mut added = Vec::new();
            for event in events {
                let Some(groups) = hooks.get(event) else {
                    added.push(Entry::Member(event.to_owned(), json!([group])));
                    continue;
                };
                let Some(items) = groups.items() else { return Err(field(format!("hooks.{event}"), "an array")) };
                let ours: Vec<&Node> = items.iter().filter(|g| is_ours(&doc.value(g))).collect();
                if ours.is_empty() {
                    edits.append(groups, &[Entry::Item(group.clone())]);
                    continue;
                }
                // Ours already: bring its command up to date (a build-tree path becomes the
                // installed name), leaving the rest of the group as it is.
                for handler in ours.iter().filter_map(|g| g.get("hooks")).filter_map(Node::items).flatten() {
                    let Some(old) = handler.get("command") else { continue };
                    if !doc.value(old).as_str().is_some_and(|c| c.contains(SHIM)) {
                        continue;
                    }
                    if doc.value(old) != json!(command) {
                        edits.replace(old, &json!(command));
                    }
                    match handler.get("timeout") {
                        Some(old) if doc.value(old) == json!(timeout) => {}
                        Some(old) => edits.replace(old, &json!(timeout)),
                        None => edits.append(handler, &[Entry::Member("timeout".into(), json!(timeout))]),
                    }
                }
            }
            edits.append(hooks, &added);
        }
    }
    let text = set_top(settings, syntax, edits.finish(), top)?;
    Ok(Plan::new(file, Some(text)))
}

/// `text` (JSON settings as `syntax`) with the top-level `key` set to `value`, or removed.
fn set_top(
    path: &Path,
    syntax: Syntax,
    text: String,
    top: Option<(&str, Option<Value>)>,
) -> Result<String, InstallError> {
    let Some((key, value)) = top else { return Ok(text) };
    let doc = parse_json(path, &text, syntax)?;
    let root = doc.root();
    let mut edits = doc.edits();
    match (root.index_of(key), value) {
        (Some(at), None) => edits.remove(root, &[at]),
        (Some(_), Some(value)) => match root.get(key) {
            Some(old) if doc.value(old) != value => edits.replace(old, &value),
            _ => {}
        },
        (None, Some(value)) => edits.append(root, &[Entry::Member(key.to_owned(), value)]),
        (None, None) => {}
    }
    Ok(if edits.is_empty() { text } else { edits.finish() })
}

/// Add our command hook for each of `events` to a JSON file of Claude Code's hook shape
/// (Claude Code's settings, Codex CLI's `hooks.json`), timeout in seconds.
pub(crate) fn json_hooks_install(
    settings: &Path,
    command: &str,
    events: &[HookEvent],
    timeout_seconds: u64,
) -> Result<Plan, InstallError> {
    command_hooks_install(settings, Syntax::Json, command, events, timeout_seconds, None)
}

/// Remove our hook groups from a JSON file of Claude Code's hook shape, and nothing else;
/// the file too when the install made it.
pub(crate) fn json_hooks_uninstall(settings: &Path) -> Result<Plan, InstallError> {
    command_hooks_uninstall(settings, Syntax::Json, None)
}

/// Remove our hook groups from a file of Claude Code's hook shape, and nothing else (and
/// the top-level setting `top`): an event or `hooks` goes only when we emptied it. What
/// an install added goes byte for byte, and a file that holds nothing else (the install
/// made it) goes too.
pub(crate) fn command_hooks_uninstall(
    settings: &Path,
    syntax: Syntax,
    top: Option<&str>,
) -> Result<Plan, InstallError> {
    command_hooks_uninstall_from(settings, syntax, top, &[])
}

/// As [`command_hooks_uninstall`]; a file left holding only `host_keys` (what the host
/// itself writes into a settings file it loads, such as Qwen Code's `$version`) holds
/// nothing of anyone's, and goes too.
pub(crate) fn command_hooks_uninstall_from(
    settings: &Path,
    syntax: Syntax,
    top: Option<&str>,
    host_keys: &[&str],
) -> Result<Plan, InstallError> {
    let (file, doc) = read_json(settings, syntax)?;
    if file.text.is_none() {
        return Ok(Plan::new(file, None));
    }
    let root = doc.root();
    let mut edits = doc.edits();
    if let (Some(at), Some(hooks)) = (root.index_of("hooks"), root.get("hooks"))
        && let Some(events) = hooks.members()
    {
        let mut emptied = Vec::new();
        for (i, event) in events.iter().enumerate() {
            let Some(groups) = event.value.items() else { continue };
            let ours: Vec<usize> = (0..groups.len()).filter(|g| is_ours(&doc.value(&groups[*g]))).collect();
            if ours.len() == groups.len() && !ours.is_empty() {
                emptied.push(i);
            } else {
                edits.remove(&event.value, &ours);
            }
        }
        if !emptied.is_empty() && emptied.len() == events.len() {
            edits.remove(root, &[at]);
        } else {
            edits.remove(hooks, &emptied);
        }
    }
    let text = set_top(settings, syntax, edits.finish(), top.map(|key| (key, None)))?;
    let left = parse_json(settings, &text, syntax)?;
    let only_the_hosts = left
        .root()
        .members()
        .is_some_and(|members| !members.is_empty() && members.iter().all(|m| host_keys.contains(&m.key.as_str())));
    let empty = text == NEW_JSON || only_the_hosts;
    let after = file.leftover(text, empty);
    Ok(Plan::new(file, after))
}

/// `text` as a TOML string, for a config file judged writes. Rust's `{:?}` is not TOML: it
/// writes a combining mark in a path (a decomposed "café", as macOS names it) as `\u{301}`,
/// which TOML refuses.
pub fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::hook_entry::pretty;
    use judged_core::event::Host;

    /// `--dry-run` shows each line taken out or put in, with three lines of context, as a
    /// line diff (Myers' through `similar`: linear memory, however long the user's file);
    /// the rest of the user's file, and the value of any line shown that names a key, a
    /// token or a secret, are not shown (it printed the whole file, API keys and all).
    #[test]
    fn a_dry_run_shows_the_lines_changed_and_hides_what_holds_a_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "a\nb\r\nc\n").unwrap();
        let plan = Plan::new(user_file::read(&path).unwrap(), Some("a\nB\nc\nd\n".into()));
        let shown = path.display();
        assert_eq!(plan.diff(), format!("--- {shown}\n+++ {shown}\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n"));
        let long: String = (0..100_000).map(|n| format!("{n}\n")).collect();
        std::fs::write(&path, &long).unwrap();
        let plan = Plan::new(user_file::read(&path).unwrap(), Some(format!("{long}end\n")));
        let diff = plan.diff();
        assert!(diff.ends_with(" 99999\n+end\n") && !diff.contains(" 5000\n"), "{}", &diff[..200]);
        let settings =
            "{\n  \"env\": {\n    \"ANTHROPIC_API_KEY\": \"sk-ant-SECRET\"\n  },\n  \"model\": \"opus\"\n}\n";
        std::fs::write(&path, settings).unwrap();
        let plan = Plan::new(
            user_file::read(&path).unwrap(),
            Some(settings.replace("\"opus\"", "\"opus\",\n  \"hooks\": {}")),
        );
        let diff = plan.diff();
        assert!(diff.contains("     \"ANTHROPIC_API_KEY\": (hidden)\n") && !diff.contains("SECRET"), "{diff}");
        assert!(diff.contains("+  \"hooks\": {}"), "{diff}");
    }

    /// The end event of `host`, which its hook is installed for.
    pub(crate) fn end(host: Host) -> [HookEvent; 1] {
        [judged_core::adapter::hooks(host).end_event().name]
    }

    #[test]
    fn install_merges_idempotently_and_uninstall_removes_only_ours() {
        let dir = std::env::temp_dir().join(format!("judged-install-{}", std::process::id()));
        let settings = dir.join("settings.json");
        fs::create_dir_all(&dir).unwrap();
        let theirs = json!({"model": "opus", "hooks": {"TaskCompleted": [{"hooks": [{"type": "command", "command": "their-gate"}]}]}});
        fs::write(&settings, pretty(&theirs)).unwrap();

        let install = || {
            let command = "/bin/judge-hook --host claude-code";
            command_hooks_install(&settings, Syntax::Json, command, &end(Host::ClaudeCode), 120, None).unwrap()
        };
        let plan = install();
        assert!(plan.changes());
        assert!(plan.diff().contains("+") && plan.diff().contains("judge-hook"));
        plan.apply().unwrap().expect("a backup of the replaced file");
        let again = install();
        assert!(!again.changes(), "installing twice changes nothing");
        let installed: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
        assert_eq!(installed["hooks"]["TaskCompleted"].as_array().unwrap().len(), 2);
        assert_eq!(installed["model"], "opus");

        command_hooks_uninstall(&settings, Syntax::Json, None).unwrap().apply().unwrap();
        let restored: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
        assert_eq!(restored, theirs);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn installing_again_updates_our_command_and_keeps_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        let events = end(Host::ClaudeCode);
        command_hooks_install(
            &settings,
            Syntax::Json,
            "/build/target/release/judge-hook --host claude-code",
            &events,
            120,
            None,
        )
        .unwrap()
        .apply()
        .unwrap();
        let plan = command_hooks_install(
            &settings,
            Syntax::Json,
            "judge-hook --host claude-code --timeout 50",
            &events,
            60,
            None,
        )
        .unwrap();
        assert!(plan.changes());
        plan.apply().unwrap();
        let installed: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
        let groups = installed["hooks"]["TaskCompleted"].as_array().unwrap();
        assert_eq!(groups.len(), 1, "updated in place, not added twice: {installed}");
        assert_eq!(groups[0]["hooks"][0]["command"], "judge-hook --host claude-code --timeout 50");
        assert_eq!(groups[0]["hooks"][0]["timeout"], 60);
    }

    /// Two executables in `dir`, and a hard link to the first.
    fn programs(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
        let (a, b, link) = (dir.join("a/judge-hook"), dir.join("b/judge-hook"), dir.join("c/judge-hook"));
        for file in [&a, &b] {
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            fs::write(file, "#!/bin/sh\n").unwrap();
            fs::set_permissions(file, fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        fs::hard_link(&a, &link).unwrap();
        (a, b, link)
    }

    #[test]
    fn path_lookup_finds_the_first_executable_and_skips_relative_entries() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, _) = programs(dir.path());
        fs::write(dir.path().join("b/plain"), "").unwrap();
        let path = std::env::join_paths([
            "relative",
            b.parent().unwrap().to_str().unwrap(),
            a.parent().unwrap().to_str().unwrap(),
        ])
        .unwrap();
        assert_eq!(find_on_path("judge-hook", Some(&path)), Some(b.clone()));
        assert_eq!(find_on_path("plain", Some(&path)), None, "not executable");
        assert_eq!(find_on_path("judge-hook", None), None);
    }

    #[test]
    fn the_hook_names_judge_hook_bare_when_path_finds_this_one() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, link) = programs(dir.path());
        let bare = |beside: Option<&Path>, on_path: &Path| hook_program(beside, Some(on_path), false, None).unwrap();
        assert_eq!(bare(Some(&a), &link), HookProgram { program: "judge-hook".into(), warnings: vec![] });
        assert_eq!(bare(None, &b), HookProgram { program: "judge-hook".into(), warnings: vec![] });
        let other = bare(Some(&a), &b);
        assert_eq!(other.program, "judge-hook");
        assert!(other.warnings[0].contains("not ") && other.warnings[0].contains("--absolute"), "{other:?}");
    }

    #[test]
    fn an_absolute_path_only_when_asked_or_when_path_finds_none() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, _) = programs(dir.path());
        let asked = hook_program(Some(&a), Some(&b), true, None).unwrap();
        assert_eq!(asked, HookProgram { program: a.display().to_string(), warnings: vec![] });
        let committed = Path::new("/p/.github/hooks/judged.json");
        let asked = hook_program(None, Some(&b), true, Some(committed)).unwrap();
        assert_eq!(asked.program, b.display().to_string());
        assert!(asked.warnings[0].contains("judged.json is a project file that gets committed"), "{asked:?}");
        let fallback = hook_program(Some(&a), None, false, None).unwrap();
        assert_eq!(fallback.program, a.display().to_string());
        assert!(fallback.warnings[0].contains("not on PATH") && fallback.warnings[0].contains(INSTALL_COMMAND));
        let error = hook_program(None, None, false, None).unwrap_err().to_string();
        assert!(error.contains("cannot find `judge-hook`") && error.contains("cargo install --locked"), "{error}");
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("/usr/local/bin/judge-hook"), "/usr/local/bin/judge-hook");
        assert_eq!(shell_word("/home/me/My Tools/judge-hook"), "'/home/me/My Tools/judge-hook'");
        assert_eq!(shell_word("/x/it's"), "'/x/it'\\''s'");
    }

    /// Install into `file` (holding `text`, or absent), then uninstall: the bytes (or the
    /// absence) are back.
    pub(crate) fn round_trip(
        file: &Path,
        text: Option<&str>,
        install: impl Fn() -> Plan,
        uninstall: impl Fn() -> Plan,
    ) {
        if let Some(text) = text {
            fs::write(file, text).unwrap();
        }
        let plan = install();
        assert!(plan.changes(), "{}", plan.diff());
        plan.apply().unwrap();
        assert!(
            fs::read_to_string(file).unwrap().contains("judge-hook") || file.extension().is_some_and(|e| e == "toml")
        );
        uninstall().apply().unwrap();
        match text {
            Some(text) => assert_eq!(fs::read_to_string(file).unwrap(), text, "{}", file.display()),
            None => assert!(!file.exists(), "{} made by the install stays after uninstall", file.display()),
        }
    }

    #[test]
    fn malformed_settings_are_refused_with_the_file_named() {
        let dir = std::env::temp_dir().join(format!("judged-install-bad-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let settings = dir.join("settings.json");
        fs::write(&settings, "[1, 2]").unwrap();
        let error = command_hooks_install(&settings, Syntax::Json, "judge-hook", &end(Host::ClaudeCode), 120, None)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("settings.json is not a JSON object"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
