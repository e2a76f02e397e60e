//! Driving the real Copilot CLI and Claude Code (see tests/hosts/README.md).
//!
//! A [`Lab`] is one test's world: a temp dir with a `JUDGED_HOME`, a daemon (in daemon
//! mode) watching where the clients will write, and one drive.py WORKDIR per client
//! (`<lab>/copilot`, `<lab>/claude`). [`Lab::run`] runs one scenario through the real
//! client with the workspace binaries first on PATH, and returns the session log.

use crate::{Daemon, bin, bin_dir, workspace};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The installed client binaries.
#[derive(Clone, Debug)]
pub struct Clients {
    pub copilot: PathBuf,
    pub claude: PathBuf,
}

/// The pinned clients, installed (or found in the cache) by `tests/hosts/install.sh`.
///
/// When they cannot be installed this prints `SKIP: …` straight to the process's stderr
/// (past the test harness's capture, so it shows on a passing run) and returns `None`;
/// with `CI` set it panics instead, because CI installs the clients and must run these.
pub fn clients() -> Option<Clients> {
    static INSTALLED: OnceLock<Result<Clients, String>> = OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        let bins = install(&["copilot", "claude"])?;
        Ok(Clients { copilot: bins[0].clone(), claude: bins[1].clone() })
    });
    available(installed, "the real host clients")
}

/// The pinned juror CLIs (Codex CLI, Gemini CLI), as [`clients`] (same `SKIP`/`CI` rule).
#[derive(Clone, Debug)]
pub struct JurorClients {
    /// The native `codex` binary of the platform package.
    pub codex: PathBuf,
    /// `bundle/gemini.js` (a node script).
    pub gemini: PathBuf,
}

/// The pinned juror CLIs, installed (or found in the cache) by `tests/hosts/install.sh`.
pub fn jurors() -> Option<JurorClients> {
    static INSTALLED: OnceLock<Result<JurorClients, String>> = OnceLock::new();
    let installed = INSTALLED.get_or_init(|| {
        let bins = install(&["codex", "gemini"])?;
        Ok(JurorClients { codex: bins[0].clone(), gemini: bins[1].clone() })
    });
    available(installed, "the real juror CLIs")
}

/// The pinned Qwen Code's `cli-entry.js` (a node script), as [`clients`] (same `SKIP`/`CI`
/// rule).
pub fn qwen() -> Option<PathBuf> {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let installed = INSTALLED.get_or_init(|| Ok(install(&["qwen"])?.remove(0)));
    available(installed, "Qwen Code")
}

/// The pinned OpenCode's native binary, as [`clients`] (same `SKIP`/`CI` rule).
pub fn opencode() -> Option<PathBuf> {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let installed = INSTALLED.get_or_init(|| Ok(install(&["opencode"])?.remove(0)));
    available(installed, "OpenCode")
}

/// What was installed, or `None` after a `SKIP:` line on the process's stderr (past the
/// harness's capture); with `CI` set, a panic: CI provides what these tests need.
pub(crate) fn available<T: Clone>(installed: &Result<T, String>, what: &str) -> Option<T> {
    let test = std::thread::current().name().unwrap_or("real-host test").to_owned();
    match installed {
        Ok(clients) => Some(clients.clone()),
        Err(why) if std::env::var_os("CI").is_some() => {
            panic!("{test}: {what} are required when CI is set: {why}")
        }
        Err(why) => {
            let _ = writeln!(std::io::stderr(), "SKIP: {test}: {what} are not available: {why}");
            None
        }
    }
}

/// The environment that keeps a client run inside `home`: `HOME`, and the XDG base
/// directories at their defaults under it (an inherited `XDG_CACHE_HOME` would otherwise
/// take Copilot CLI's ~235 MB unpacked package and a device id to the user's).
pub fn client_home(home: &Path) -> [(&'static str, PathBuf); 5] {
    [
        ("HOME", home.to_path_buf()),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_STATE_HOME", home.join(".local/state")),
    ]
}

/// Run `test` of this test binary again, in a child whose `HOME` and XDG base directories
/// are in a fresh temp dir, and fail naming what the run left there: a client that was
/// given the user's home, or an inherited XDG directory, writes into it. `CARGO_HOME`
/// and `RUSTUP_HOME` stay the caller's (the binaries are built on first use).
pub fn assert_leaves_home_untouched(test: &str) {
    let home = tempfile::Builder::new().prefix("judged-guarded-home-").tempdir().expect("temp dir");
    let exe = std::env::current_exe().expect("this test binary");
    let mut command = Command::new(exe);
    command.args(["--exact", test, "--test-threads", "1"]).env("HOME", home.path());
    // Not the defaults under HOME, as a user's may be set: a client must not follow them.
    for var in ["XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"] {
        command.env(var, home.path().join(var.to_lowercase()));
    }
    let real_home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    for (var, default) in [("CARGO_HOME", ".cargo"), ("RUSTUP_HOME", ".rustup")] {
        command.env(var, std::env::var_os(var).map_or_else(|| real_home.join(default), PathBuf::from));
    }
    let output = command.output().expect("the test binary runs");
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && said.contains("test result: ok. 1 passed"), "{test} failed:\n{said}");
    assert!(!said.contains("SKIP:"), "{test} skipped, so it proves nothing:\n{said}");
    let relative = |path: PathBuf| path.strip_prefix(home.path()).unwrap_or(&path).display().to_string();
    let entries: Vec<String> =
        std::fs::read_dir(home.path()).expect("the guarded home").flatten().map(|e| relative(e.path())).collect();
    let files: Vec<String> = crate::files_under(home.path()).into_iter().map(relative).collect();
    assert!(
        entries.is_empty(),
        "{test} left {entries:?} in the HOME it was given (a client ran with it, or with its XDG dirs): {} files, \
         among them {:?}",
        files.len(),
        &files[..files.len().min(5)]
    );
}

/// `install.sh NAMES…`; the binaries it printed, in the order of `names`. What it says
/// before a download goes straight to the process's stderr, past the harness's capture
/// as `SKIP:` lines do: a first run downloads about 1 GB, which must not look like a hang.
fn install(names: &[&str]) -> Result<Vec<PathBuf>, String> {
    let python = Command::new("python3").arg("--version").output();
    if !python.is_ok_and(|o| o.status.success()) {
        return Err("python3 is not on PATH (tests/hosts/drive.py needs it)".into());
    }
    relay_install(install_command(names), names, &mut std::io::stderr())
}

/// `bash tests/hosts/install.sh NAMES…`.
fn install_command(names: &[&str]) -> Command {
    let mut command = Command::new("bash");
    command.arg(workspace().join(INSTALL_SH)).args(names);
    command
}

const INSTALL_SH: &str = "tests/hosts/install.sh";

/// Run `install` (an [`install_command`]), writing each download it announces to `shown`
/// as it comes; the binaries it printed, in the order of `names`.
fn relay_install(mut install: Command, names: &[&str], shown: &mut dyn Write) -> Result<Vec<PathBuf>, String> {
    use std::io::{BufRead, Read};
    let mut child = install
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {INSTALL_SH}: {e}"))?;
    let mut stdout = child.stdout.take().expect("piped stdout");
    let printed = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let mut said = Vec::new();
    for line in std::io::BufReader::new(child.stderr.take().expect("piped stderr")).lines().map_while(Result::ok) {
        if line.starts_with("install.sh: downloading ") {
            let _ = writeln!(shown, "{line}");
        }
        said.push(line);
    }
    let status = child.wait().map_err(|e| format!("cannot wait for {INSTALL_SH}: {e}"))?;
    let stdout = printed.join().unwrap_or_default();
    if !status.success() {
        let said: Vec<&str> = said.iter().map(|l| l.trim()).filter(|l| !l.is_empty()).collect();
        return Err(format!("{INSTALL_SH} failed ({status}): {}", said.join(" | ")));
    }
    let find = |name: &&str| {
        let key = format!("{}_BIN=", name.to_uppercase());
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(&key))
            .map(PathBuf::from)
            .filter(|p| p.is_file())
            .ok_or_else(|| format!("{INSTALL_SH} printed no usable {key}: {stdout}"))
    };
    names.iter().map(find).collect()
}

/// `tests/hosts/model_server.py` on a free port, stopped when dropped.
pub struct ModelServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Where it logs every request (JSON lines).
    pub log: PathBuf,
    child: std::process::Child,
    _dir: tempfile::TempDir,
}

impl ModelServer {
    /// Serve `tests/hosts/scenarios/<scenario>.json`, with extra server `args` (e.g.
    /// `--impostor gemini-2.5-flash=gpt-5.4-mini`).
    pub fn start(scenario: &str, args: &[&str]) -> ModelServer {
        use std::io::BufRead;
        let dir = tempfile::Builder::new().prefix("judged-model-server-").tempdir().expect("temp dir");
        let log = dir.path().join("server.jsonl");
        let scenario_path = workspace().join("tests/hosts/scenarios").join(format!("{scenario}.json"));
        let mut child = Command::new("python3")
            .arg(workspace().join("tests/hosts/model_server.py"))
            .arg("--scenario")
            .arg(&scenario_path)
            .arg("--log")
            .arg(&log)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs model_server.py");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped stdout");
        let read = std::io::BufReader::new(stdout).read_line(&mut line);
        let Some(port) = read.ok().and_then(|_| line.trim().parse().ok()) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("model_server.py printed no port: {line:?}");
        };
        ModelServer { port, log, child, _dir: dir }
    }

    /// `http://127.0.0.1:PORT` (append `/v1` for the OpenAI APIs).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request logged so far.
    pub fn requests(&self) -> Vec<Value> {
        if self.log.exists() { read_jsonl(&self.log) } else { Vec::new() }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where `judge-evidence` makes its decisions in a lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Through the lab's daemon (witnessed).
    Daemon,
    /// In the `judge-evidence` process, from the log files; no daemon runs.
    Direct,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Daemon => "daemon",
            Mode::Direct => "direct",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    Copilot,
    Claude,
}

impl Host {
    fn as_str(self) -> &'static str {
        match self {
            Host::Copilot => "copilot",
            Host::Claude => "claude",
        }
    }
}

/// One test's temp world; the daemon (if any) stops and the dir is removed on drop.
pub struct Lab {
    pub mode: Mode,
    pub daemon: Option<Daemon>,
    pub judged_home: PathBuf,
    clients: Clients,
    /// Directories put on the clients' PATH after the workspace's binaries (a reviewer CLI).
    tools: Vec<PathBuf>,
    /// The overlay's upper and work directories when the lab's commands see a private `/etc`.
    private_etc: Option<(PathBuf, PathBuf)>,
    // Declared last: dropped after the daemon has stopped.
    dir: tempfile::TempDir,
}

/// A failed test keeps its lab (the clients' logs, the daemon's store) to look at.
impl Drop for Lab {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.dir.disable_cleanup(true);
            eprintln!("the failed test's lab is kept: {}", self.dir.path().display());
        }
    }
}

impl Lab {
    /// A lab in `mode`; in daemon mode the daemon watches both clients' log roots, and the
    /// Codex CLI and Copilot CLI roots of the Claude Code home (where a review run from
    /// Claude Code writes).
    pub fn new(clients: &Clients, mode: Mode) -> Lab {
        let dir = tempfile::Builder::new().prefix("judged-hosts-").tempdir().expect("temp dir");
        let judged_home = dir.path().join("judged-home");
        let mut lab = Lab {
            mode,
            daemon: None,
            judged_home,
            clients: clients.clone(),
            tools: Vec::new(),
            private_etc: None,
            dir,
        };
        let codex_root = lab.workdir(Host::Claude).join("home/.codex/sessions");
        std::fs::create_dir_all(&lab.judged_home).expect("judged home");
        std::fs::write(
            lab.judged_home.join("config.toml"),
            // The tests set each project's gate and jury in its `.judged.toml`.
            format!("codex_roots = [{codex_root:?}]\nauto_start = false\n[gate]\ntrust_project_files = true\n"),
        )
        .expect("config.toml");
        if mode == Mode::Daemon {
            let copilot_root = lab.workdir(Host::Copilot).join("home/.copilot/session-state");
            // Where a `copilot -p` review run from Claude Code writes.
            let reviewer_root = lab.workdir(Host::Claude).join("home/.copilot/session-state");
            let claude_root = lab.workdir(Host::Claude).join("home/.claude/projects");
            lab.daemon = Some(Daemon::start(&lab.judged_home, &[&copilot_root, &reviewer_root], &[&claude_root]));
        }
        lab
    }

    pub fn daemon(&self) -> &Daemon {
        self.daemon.as_ref().expect("a daemon-mode lab")
    }

    /// drive.py's WORKDIR for `host`.
    pub fn workdir(&self, host: Host) -> PathBuf {
        self.dir.path().join(host.as_str())
    }

    /// The client's cwd for `host`; create it before [`Lab::run`] to prepare it.
    pub fn project(&self, host: Host) -> PathBuf {
        self.workdir(host).join("project")
    }

    /// Put the directory of `program` (a reviewer CLI) on the clients' PATH.
    pub fn with_tool(mut self, program: &Path) -> Lab {
        self.tools.push(program.parent().expect("a program in a directory").to_path_buf());
        self
    }

    /// Run the lab's commands (the clients, `judged`, `judge-evidence`) in a private mount
    /// namespace whose `/etc` is an overlay of the machine's: what they write there lands in
    /// the lab, and the machine's `/etc` is never touched. For what only root's files under
    /// `/etc` do (managed settings). `None` (after a `SKIP:` line) where no such namespace
    /// can be made: not root, or no mount namespaces or overlayfs.
    pub fn with_private_etc(mut self) -> Option<Lab> {
        let (upper, work) = (self.dir.path().join("etc-upper"), self.dir.path().join("etc-work"));
        std::fs::create_dir_all(&upper).expect("the overlay's upper dir");
        std::fs::create_dir_all(&work).expect("the overlay's work dir");
        self.private_etc = Some((upper, work));
        if self.command("true").status().is_ok_and(|s| s.success()) {
            return Some(self);
        }
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        let _ = writeln!(std::io::stderr(), "SKIP: {test}: no private mount namespace with an overlay of /etc here");
        None
    }

    /// A file under the lab's private `/etc`, as its commands see it at `path`.
    pub fn private_etc_file(&self, path: &Path) -> PathBuf {
        let (upper, _) = self.private_etc.as_ref().expect("a lab with a private /etc");
        upper.join(path.strip_prefix("/etc").expect("a path under /etc"))
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = match &self.private_etc {
            None => Command::new(program),
            Some((upper, work)) => {
                let mut unshare = Command::new("unshare");
                let mount = format!(
                    "mount -t overlay overlay -o lowerdir=/etc,upperdir={},workdir={} /etc && exec \"$@\"",
                    upper.display(),
                    work.display()
                );
                unshare.args(["-m", "--propagation", "private", "sh", "-c", &mount, "sh"]).arg(program);
                unshare
            }
        };
        let path = std::env::var_os("PATH").unwrap_or_default();
        let dirs = std::iter::once(bin_dir()).chain(self.tools.iter().cloned()).chain(std::env::split_paths(&path));
        let path = std::env::join_paths(dirs).expect("PATH joins");
        command
            .env("PATH", path)
            .env("JUDGED_HOME", &self.judged_home)
            .env("JUDGE_EVIDENCE_MODE", self.mode.as_str())
            .env_remove("XDG_RUNTIME_DIR");
        command
    }

    /// Run `tests/hosts/scenarios/<scenario>.json` through the real client; the client
    /// must exit 0 and write a session log.
    pub fn run(&self, host: Host, scenario: &str) -> Run {
        bin("judged"); // built before the client needs judge-evidence / judge-hook
        let workdir = self.workdir(host);
        let scenario_path = workspace().join("tests/hosts/scenarios").join(format!("{scenario}.json"));
        let client = match host {
            Host::Copilot => &self.clients.copilot,
            Host::Claude => &self.clients.claude,
        };
        let output = self
            .command("python3")
            .arg(workspace().join("tests/hosts/drive.py"))
            .arg(host.as_str())
            .arg(&scenario_path)
            .arg(&workdir)
            .arg("--bin")
            .arg(client)
            .output()
            .expect("python3 runs drive.py");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let logs: Vec<PathBuf> =
            stdout.lines().filter_map(|l| l.strip_prefix("SESSION_LOG=")).map(PathBuf::from).collect();
        let exit = stdout.lines().find_map(|l| l.strip_prefix("EXIT=")).unwrap_or("?").to_owned();
        let run = Run { workdir, logs, exit };
        assert!(
            output.status.success() && run.exit == "0" && !run.logs.is_empty(),
            "{} scenario {scenario} failed (EXIT={}):\ndrive.py stdout: {stdout}\ndrive.py stderr: {}\nclient stderr: {}\n(see {}/server.jsonl)",
            host.as_str(),
            run.exit,
            String::from_utf8_lossy(&output.stderr),
            std::fs::read_to_string(run.workdir.join("client.stderr")).unwrap_or_default(),
            run.workdir.display()
        );
        run
    }

    /// `judge-evidence --mode <lab mode> ARGS` in `cwd`.
    pub fn judge_evidence(&self, args: &[&str], cwd: &Path) -> Output {
        self.command(bin("judge-evidence"))
            .args(["--mode", self.mode.as_str()])
            .args(args)
            .current_dir(cwd)
            .output()
            .expect("judge-evidence runs")
    }

    /// `judged ARGS` against the lab's `JUDGED_HOME`.
    pub fn judged(&self, args: &[&str]) -> Output {
        self.command(bin("judged")).args(args).output().expect("judged runs")
    }

    /// `judged decisions --json`.
    pub fn decisions(&self) -> Vec<Value> {
        let output = self.judged(&["decisions", "--json"]);
        assert!(output.status.success(), "judged decisions failed: {}", String::from_utf8_lossy(&output.stderr));
        match serde_json::from_slice(&output.stdout) {
            Ok(Value::Array(decisions)) => decisions,
            other => panic!("judged decisions --json printed {other:?}"),
        }
    }
}

/// A finished client run.
pub struct Run {
    pub workdir: PathBuf,
    /// Every session log drive.py found (Claude Code: subagent transcripts too).
    pub logs: Vec<PathBuf>,
    pub exit: String,
}

impl Run {
    pub fn project(&self) -> PathBuf {
        self.workdir.join("project")
    }

    /// The root session's log (Copilot `events.jsonl`, Claude Code `<session>.jsonl`).
    pub fn log(&self) -> &Path {
        self.logs.iter().find(|p| !p.components().any(|c| c.as_os_str() == "subagents")).expect("a root session log")
    }

    /// The root log's records.
    pub fn records(&self) -> Vec<Value> {
        read_jsonl(self.log())
    }

    /// What the client printed.
    pub fn stdout(&self) -> String {
        std::fs::read_to_string(self.workdir.join("client.stdout")).unwrap_or_default()
    }
}

pub fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: bad line {l}: {e}", path.display())))
        .collect()
}

pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Copilot: the `tool.execution_complete` data of the one root bash call whose command
/// contains `needle`.
pub fn copilot_completion<'a>(records: &'a [Value], needle: &str) -> &'a Value {
    let starts: Vec<&str> = records
        .iter()
        .filter(|r| r["type"] == "tool.execution_start" && r.get("agentId").is_none())
        .filter(|r| r["data"]["arguments"]["command"].as_str().is_some_and(|c| c.contains(needle)))
        .filter_map(|r| r["data"]["toolCallId"].as_str())
        .collect();
    let [call] = starts.as_slice() else { panic!("expected one root bash call running `{needle}`, found {starts:?}") };
    let completions: Vec<&Value> = records
        .iter()
        .filter(|r| r["type"] == "tool.execution_complete" && r["data"]["toolCallId"] == *call)
        .map(|r| &r["data"])
        .collect();
    let [completion] = completions.as_slice() else {
        panic!("expected one completion of {call}, found {completions:?}")
    };
    completion
}

/// Copilot: the exit code of the root bash call running `needle`, from the
/// `<shellId: N completed with exit code X>` line the CLI appends to its output (checked
/// against `shellExecution.exitCode` when the CLI recorded it).
pub fn copilot_exit_code(records: &[Value], needle: &str) -> i64 {
    let completion = copilot_completion(records, needle);
    let content = completion["result"]["content"].as_str().unwrap_or_default();
    let code = content
        .rsplit_once("completed with exit code ")
        .and_then(|(_, rest)| rest.split(|c: char| !c.is_ascii_digit()).next()?.parse::<i64>().ok())
        .unwrap_or_else(|| panic!("no `completed with exit code` line in the `{needle}` result: {completion}"));
    if let Some(recorded) = completion["shellExecution"]["exitCode"].as_i64() {
        assert_eq!(recorded, code, "shellExecution.exitCode disagrees with the output line: {completion}");
    }
    code
}

/// Claude Code: the `(tool_result block, toolUseResult)` answering the one root
/// `tool_use` that `matches` (by its name and input).
pub fn claude_result(records: &[Value], matches: impl Fn(&str, &Value) -> bool) -> (&Value, &Value) {
    let blocks = |kind: &'static str, role: &'static str| {
        records.iter().filter(move |r| r["type"] == role && r["isSidechain"] != true).flat_map(move |r| {
            r["message"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(move |b| b["type"] == kind)
                .map(move |b| (r, b))
        })
    };
    let ids: Vec<&str> = blocks("tool_use", "assistant")
        .filter(|(_, b)| matches(b["name"].as_str().unwrap_or_default(), &b["input"]))
        .filter_map(|(_, b)| b["id"].as_str())
        .collect();
    let [id] = ids.as_slice() else { panic!("expected one matching root tool_use, found {ids:?}") };
    let results: Vec<(&Value, &Value)> = blocks("tool_result", "user")
        .filter(|(_, b)| b["tool_use_id"] == *id)
        .map(|(r, b)| (b, &r["toolUseResult"]))
        .collect();
    let [result] = results.as_slice() else { panic!("expected one tool_result for {id}, found {results:?}") };
    *result
}

/// Claude Code: the text of a tool_result block (a string, or its text items joined).
pub fn claude_result_text(block: &Value) -> String {
    match &block["content"] {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().filter_map(|i| i["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `npm` that lays out what `npm install @google/gemini-cli@V` would, offline.
    const STUB_NPM: &str = r#"#!/bin/sh
for arg; do spec=$arg; done
pkg=${spec%@*}
mkdir -p "node_modules/$pkg/bundle"
printf '{"version":"%s"}' "${spec##*@}" > "node_modules/$pkg/package.json"
printf '#!/usr/bin/env node\n' > "node_modules/$pkg/bundle/gemini.js"
chmod +x "node_modules/$pkg/bundle/gemini.js"
"#;

    #[test]
    fn a_download_is_announced_with_its_size_and_where_it_stays_and_a_cached_client_is_not() {
        if Command::new("node").arg("--version").output().is_err() {
            return crate::skip(false, "node is not on PATH (install.sh reads the installed version with it)");
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let (stubs, cache) = (dir.path().join("bin"), dir.path().join("cache"));
        std::fs::create_dir_all(&stubs).unwrap();
        std::fs::write(stubs.join("npm"), STUB_NPM).unwrap();
        std::fs::set_permissions(stubs.join("npm"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let path = std::env::join_paths(std::iter::once(stubs).chain(std::env::split_paths(&path))).unwrap();
        let install = || {
            let mut command = install_command(&["gemini"]);
            command.env("PATH", &path).env("JUDGED_HOSTS_CACHE", &cache);
            let mut shown = Vec::new();
            let bins = relay_install(command, &["gemini"], &mut shown);
            (bins, String::from_utf8(shown).unwrap())
        };
        let versions = std::fs::read_to_string(workspace().join("tests/hosts/versions.env")).unwrap();
        let version = versions.lines().find_map(|l| l.strip_prefix("GEMINI_CLI_VERSION=")).unwrap();
        let prefix = cache.join(format!("gemini-cli-{version}"));

        let (bins, shown) = install();
        assert_eq!(
            shown,
            format!(
                "install.sh: downloading @google/gemini-cli@{version} (about 100 MB) into {}; it stays there for the \
                 next runs\n",
                prefix.display()
            )
        );
        assert_eq!(bins, Ok(vec![prefix.join("node_modules/@google/gemini-cli/bundle/gemini.js")]));
        let (bins, shown) = install();
        assert_eq!((bins.map(|b| b.len()), shown.as_str()), (Ok(1), ""), "a cached client is not downloaded again");
        let left: Vec<String> = std::fs::read_dir(&cache)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, [format!("gemini-cli-{version}")], "npm's download cache of the run is gone");
    }
}
