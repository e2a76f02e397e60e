//! Codex CLI and Gemini CLI as the agents being reviewed (issue 24): the gate installed by
//! `judged install-hooks --codex` / `--gemini` answers the real clients' `Stop` and
//! `AfterAgent` hooks, offline against `tests/hosts/model_server.py`. Each test skips with
//! `SKIP: …` when the clients cannot be installed (and fails under `CI`).

use judged_tests::hosts::{self, JurorClients, ModelServer};
use judged_tests::{Daemon, bin, bin_dir, eventually, files_under, skip};
use serde_json::{Value, json};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Longer than any run here takes (a few seconds), short of a hung test.
const CLIENT_DEADLINE: Duration = Duration::from_secs(90);

/// What the gate says when it blocks for want of a review.
const BLOCKED: &str = "cannot be marked done yet: no verified cross-family review of this work";

/// A temp world: a daemon, a client home, a project, the model server.
struct World {
    dir: tempfile::TempDir,
    judged_home: PathBuf,
    daemon: Daemon,
    server: ModelServer,
    clients: JurorClients,
    /// Directories on the clients' PATH after the Codex CLI's (a reviewer CLI).
    tools: Vec<PathBuf>,
    /// More of the clients' environment.
    env: Vec<(&'static str, &'static str)>,
    /// The overlay's upper and work directories when the world's commands see a private
    /// `/etc`.
    private_etc: Option<(PathBuf, PathBuf)>,
}

/// A failed test keeps its world (the clients' logs, the daemon's store) to look at.
impl Drop for World {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.dir.disable_cleanup(true);
            eprintln!("the failed test's world is kept: {}", self.dir.path().display());
        }
    }
}

impl World {
    fn new(clients: JurorClients) -> World {
        World::of(clients, "executor-done", &[])
    }

    /// A world whose model server plays `scenario` (with `server_args`), with a daemon
    /// that watches the world's Codex CLI sessions, Gemini CLI projects, Copilot CLI
    /// session state and Claude Code projects.
    fn of(clients: JurorClients, scenario: &str, server_args: &[&str]) -> World {
        let dir = tempfile::Builder::new().prefix("judged-executors-").tempdir().expect("temp dir");
        let judged_home = dir.path().join("judged-home");
        std::fs::create_dir_all(&judged_home).unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::create_dir_all(dir.path().join("home/.gemini")).unwrap();
        std::fs::create_dir_all(dir.path().join("home/.codex")).unwrap();
        let codex_root = dir.path().join("home/.codex/sessions");
        let gemini_root = dir.path().join("home/.gemini/tmp");
        let qwen_root = dir.path().join("home/.qwen/projects");
        let opencode_db = dir.path().join("home/.local/share/opencode/opencode.db");
        let config = format!(
            "codex_roots = [{codex_root:?}]\ngemini_roots = [{gemini_root:?}]\nqwen_roots = [{qwen_root:?}]\n\
             opencode_databases = [{opencode_db:?}]\nauto_start = false\n[gate]\ntrust_project_files = true\n"
        );
        std::fs::write(judged_home.join("config.toml"), config).unwrap();
        let copilot_root = dir.path().join("home/.copilot/session-state");
        let claude_root = dir.path().join("home/.claude/projects");
        let daemon = Daemon::start(&judged_home, &[&copilot_root], &[&claude_root]);
        let server = ModelServer::start(scenario, server_args);
        World { dir, judged_home, daemon, server, clients, tools: Vec::new(), env: Vec::new(), private_etc: None }
    }

    fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn codex_home(&self) -> PathBuf {
        self.home().join(".codex")
    }

    /// The world's commands in a private mount namespace whose `/etc` is an overlay of the
    /// machine's, for what only root's files there do (managed requirements); `None`
    /// (after a `SKIP:` line) where no such namespace can be made.
    fn with_private_etc(mut self) -> Option<World> {
        let (upper, work) = (self.dir.path().join("etc-upper"), self.dir.path().join("etc-work"));
        std::fs::create_dir_all(&upper).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        self.private_etc = Some((upper, work));
        if self.command("true").status().is_ok_and(|s| s.success()) {
            return Some(self);
        }
        let test = std::thread::current().name().unwrap_or("a test").to_owned();
        skip(false, &format!("{test}: no private mount namespace with an overlay of /etc here"));
        None
    }

    /// A file under the world's private `/etc`, as its commands see it at `path`.
    fn private_etc_file(&self, path: &str) -> PathBuf {
        let (upper, _) = self.private_etc.as_ref().expect("a world with a private /etc");
        upper.join(path.strip_prefix("/etc/").expect("a path under /etc"))
    }

    /// A client's environment: nothing of the caller's but a PATH with the workspace's
    /// binaries and the Codex CLI first, then the world's tools.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let codex_dir = self.clients.codex.parent().unwrap().to_path_buf();
        let system = ["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from);
        let dirs = [bin_dir(), codex_dir].into_iter().chain(self.tools.iter().cloned()).chain(system);
        let path = std::env::join_paths(dirs);
        let mut command = match &self.private_etc {
            None => Command::new(program),
            Some((upper, work)) => {
                let mount = format!(
                    "mount -t overlay overlay -o lowerdir=/etc,upperdir={},workdir={} /etc && exec \"$@\"",
                    upper.display(),
                    work.display()
                );
                let mut unshare = Command::new("unshare");
                unshare.args(["-m", "--propagation", "private", "sh", "-c", &mount, "sh"]).arg(program);
                unshare
            }
        };
        command
            .env_clear()
            .env("PATH", path.unwrap())
            .envs(hosts::client_home(&self.home()))
            .env("CODEX_HOME", self.codex_home())
            .env("GEMINI_CLI_HOME", self.home())
            .env("JUDGED_HOME", &self.judged_home)
            // Where a reviewer CLI the agent runs reaches the scripted model.
            .env("JUDGED_TEST_MODEL_URL", self.server.url())
            .envs(self.env.iter().copied())
            .env("TMPDIR", self.dir.path())
            .current_dir(self.project());
        command
    }

    fn judged(&self, args: &[&str]) -> Output {
        let output = self.command(bin("judged")).args(args).output().expect("judged runs");
        assert!(output.status.success(), "judged {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        output
    }

    /// `judged decisions --json` for `event`.
    fn decisions(&self, event: &str) -> Vec<Value> {
        let output = self.judged(&["decisions", "--json"]);
        let all: Vec<Value> = serde_json::from_slice(&output.stdout).expect("decisions JSON");
        all.into_iter().filter(|d| d["event"] == event).collect()
    }

    /// Count a Gemini CLI answer nothing followed as its agent's end after `seconds` (by
    /// the setting's first name, which is read still).
    fn gemini_quiet(&self, seconds: u64) {
        self.answer_quiet("gemini_quiet_seconds", seconds);
    }

    /// Count an answer nothing followed as its agent's end after `seconds`, set as `key`.
    fn answer_quiet(&self, key: &str, seconds: u64) {
        let config = self.judged_home.join("config.toml");
        let text =
            std::fs::read_to_string(&config).unwrap().replace("[gate]\n", &format!("[gate]\n{key} = {seconds}\n"));
        std::fs::write(&config, text).unwrap();
    }

    /// The Gemini CLI agent's recording (the only one the world's `gemini -p` wrote).
    fn recording(&self) -> String {
        let recordings: Vec<PathBuf> = files_under(&self.home().join(".gemini/tmp"))
            .into_iter()
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("session-")))
            .collect();
        let [recording] = recordings.as_slice() else { panic!("one recording: {recordings:?}") };
        recording.display().to_string()
    }

    fn gate_off(&self) {
        std::fs::write(self.project().join(".judged.toml"), "[gate]\npolicy = \"off\"\n").unwrap();
    }

    /// Run `command` under a deadline, in a process group of its own that is killed then
    /// (a client that cannot reach its model, or is blocked at every stop, runs forever).
    fn run(&self, mut command: Command) -> Output {
        let (out, err) = (self.dir.path().join("client.stdout"), self.dir.path().join("client.stderr"));
        let mut child = command
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .process_group(0)
            .spawn()
            .expect("the client starts");
        let deadline = Instant::now() + CLIENT_DEADLINE;
        let status = loop {
            if let Some(status) = child.try_wait().expect("the client can be waited for") {
                break status;
            }
            if Instant::now() > deadline {
                // `--`: a negative pid after it is a process group, not an option.
                let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
                let _ = child.wait();
                panic!("the client ran past {CLIENT_DEADLINE:?}; see {}", err.display());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Output { status, stdout: std::fs::read(&out).unwrap(), stderr: std::fs::read(&err).unwrap() }
    }

    /// `codex exec` as an agent, its prompt on the command line.
    fn codex_exec(&self) -> Output {
        self.codex_exec_prompt("Make the cart round half up.")
    }

    /// `codex exec` as an agent given `prompt`, running its shell calls outside Codex CLI's
    /// sandbox (which cannot start in every container; the calls only write the project).
    fn codex_exec_prompt(&self, prompt: &str) -> Output {
        self.codex_exec_with(prompt, &["--disable", "plugins"])
    }

    /// `codex exec` as an agent given `prompt`, with `flags` besides the world's.
    fn codex_exec_with(&self, prompt: &str, flags: &[&str]) -> Output {
        let provider = format!(
            "model_providers.mock={{name=\"mock\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"MOCK_KEY\",request_max_retries=0,stream_max_retries=0}}",
            self.server.url()
        );
        let mut command = self.command(&self.clients.codex);
        command
            .env("MOCK_KEY", "scripted-offline-key")
            // A reviewer CLI's credential: Codex CLI keeps `*KEY*` variables from its shell.
            .env("MOCK_CREDENTIAL", "scripted-offline-key")
            .args(["exec", "--json", "--skip-git-repo-check", "-c", "analytics.enabled=false"])
            .args(flags)
            .args(["-m", "gpt-5.5", "-c", "model_provider=mock", "-c", &provider])
            .arg("--dangerously-bypass-approvals-and-sandbox")
            .arg(prompt);
        self.run(command)
    }

    /// `gemini -p` as an agent, offered no tools.
    fn gemini_p(&self) -> Output {
        let settings = self.home().join(".gemini/settings.json");
        if !settings.exists() {
            std::fs::write(&settings, GEMINI_SETTINGS).unwrap();
        }
        self.gemini(&["-p", "Make the cart round half up."])
    }

    /// Gemini CLI as an agent, with `args` after its model.
    fn gemini(&self, args: &[&str]) -> Output {
        let mut command = self.command("node");
        command
            .env("GOOGLE_GEMINI_BASE_URL", self.server.url())
            .env("GEMINI_API_KEY", "scripted-offline-key")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .arg(&self.clients.gemini)
            .args(["-m", "gemini-2.5-pro"])
            .args(args);
        self.run(command)
    }

    /// Point a `codex exec` the agent runs at the scripted model, through the user's
    /// config (kept: install-hooks may have written to it).
    fn codex_reviewer_config(&self) {
        let provider = format!(
            "model_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\n\
             wire_api = \"responses\"\nenv_key = \"MOCK_CREDENTIAL\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
            self.server.url()
        );
        let config = self.codex_home().join("config.toml");
        let theirs = std::fs::read_to_string(&config).unwrap_or_default();
        std::fs::write(&config, format!("{provider}\n{theirs}")).unwrap();
    }

    /// The text of the model requests of `flavor` (`responses`, `gemini`), in order.
    fn requests(&self, flavor: &str) -> Vec<String> {
        let requests = self.server.requests().into_iter().filter(|r| r["flavor"] == flavor && r["kind"] == "juror");
        requests.map(|r| format!("{}{}", r["input"], r["contents"])).collect()
    }
}

/// Gemini CLI 0.61.0 offline (host-formats §G): API-key auth, no telemetry, no update
/// checks, one attempt per request, no tools.
const GEMINI_SETTINGS: &str = r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false,"maxAttempts":1,"retryFetchErrors":false},"tools":{"core":[]}}"#;

fn world() -> Option<World> {
    hosts::jurors().map(World::new)
}

fn said(output: &Output) -> String {
    format!("stdout: {}\nstderr: {}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

#[test]
fn codex_stop_is_blocked_without_evidence_and_the_reason_reaches_the_model() {
    let Some(world) = world() else { return };
    let installed = world.judged(&["install-hooks", "--codex", "--user"]);
    let config = std::fs::read_to_string(world.codex_home().join("config.toml")).unwrap();
    assert!(config.contains("trusted_hash = \"sha256:"), "{config}\n{}", said(&installed));
    let output = world.codex_exec();
    assert!(output.status.success(), "{}", said(&output));
    let requests = world.requests("responses");
    assert_eq!(requests.len(), 2, "one continuation on the block, then the turn ends: {requests:#?}");
    assert!(!requests[0].contains(BLOCKED) && requests[1].contains(BLOCKED), "{requests:#?}");
    let decisions = world.decisions("Stop");
    assert!(!decisions.is_empty() && decisions.iter().all(|d| d["decision"] == "block"), "{decisions:#?}");
    assert!(decisions.iter().all(|d| d["host"] == "codex-cli"), "{decisions:#?}");
    // judge-hook ended the turn it blocked twice rather than loop the agent: that end is
    // no allow, but a forced end (issue 31).
    let bypassed = world.bypasses_of(&world.rollout());
    assert_eq!(bypassed.len(), 1, "{bypassed:#?}");
    assert_eq!((bypassed[0]["event"].as_str(), &bypassed[0]["forced_end"]), (Some("Stop"), &json!({"blocks": 2})));
}

/// Issue 25: a Codex CLI turn that ends with no gate asked (no hook installed, the gate
/// armed for Codex CLI's `Stop` by default) is on the record as a bypass.
#[test]
fn a_codex_turn_that_ended_without_the_gate_is_on_the_record() {
    let Some(world) = world() else { return };
    let output = world.codex_exec();
    assert!(output.status.success(), "{}", said(&output));
    assert!(world.decisions("Stop").is_empty(), "no hook, no decision");
    let bypassed = world.bypasses_of(&world.rollout());
    assert_eq!(bypassed.len(), 1, "{bypassed:#?}");
    assert_eq!((bypassed[0]["event"].as_str(), &bypassed[0]["task_id"]), (Some("Stop"), &Value::Null));
}

#[test]
fn codex_stop_is_allowed_when_the_policy_is_off() {
    let Some(world) = world() else { return };
    let config = world.codex_home().join("config.toml");
    let theirs = "model_reasoning_effort = \"high\"\n\n[projects.\"/srv\"]\ntrust_level = \"trusted\"\n";
    std::fs::create_dir_all(world.codex_home()).unwrap();
    std::fs::write(&config, theirs).unwrap();
    world.judged(&["install-hooks", "--codex", "--user"]);
    world.gate_off();
    let output = world.codex_exec();
    assert!(output.status.success(), "{}", said(&output));
    assert_eq!(world.requests("responses").len(), 1, "the turn ends at its first stop");
    let decisions = world.decisions("Stop");
    assert_eq!(decisions.len(), 1, "{decisions:#?}");
    assert_eq!(decisions[0]["decision"], "allow");
    assert_eq!(world.bypasses_of(&world.rollout()), Vec::<Value>::new(), "the gate is off");
    // What install-hooks wrote, and only that, goes again.
    world.judged(&["uninstall-hooks", "--codex", "--user"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), theirs);
    assert!(!world.codex_home().join("hooks.json").exists());
}

/// Issue 25: `install-hooks --codex --managed` writes the gate into Codex CLI's managed
/// requirements (root's, under `/etc`: here a private overlay of it), which the real client
/// runs though the user's config turns hooks off and trusts no hook; `uninstall-hooks
/// --codex --managed` takes the file away.
#[test]
fn a_managed_requirement_gates_codex_cli_though_the_user_turns_hooks_off() {
    let Some(world) = world().and_then(World::with_private_etc) else { return };
    world.judged(&["install-hooks", "--codex", "--managed"]);
    let requirements = world.private_etc_file("/etc/codex/requirements.toml");
    let written = std::fs::read_to_string(&requirements).expect("the requirements file");
    assert!(written.contains("command = \"/") && written.contains("judge-hook --host codex-cli"), "{written}");
    let mode = std::os::unix::fs::MetadataExt::mode(&std::fs::metadata(&requirements).unwrap());
    assert_eq!(mode & 0o022, 0, "root's, writable by nobody else: {mode:o}");
    std::fs::write(world.codex_home().join("config.toml"), "[features]\nhooks = false\n").unwrap();
    let output = world.codex_exec();
    assert!(output.status.success(), "{}", said(&output));
    let requests = world.requests("responses");
    assert_eq!(requests.len(), 2, "one continuation on the block, then the turn ends: {requests:#?}");
    let decisions = world.decisions("Stop");
    assert!(!decisions.is_empty() && decisions.iter().all(|d| d["decision"] == "block"), "{decisions:#?}");
    world.judged(&["uninstall-hooks", "--codex", "--managed"]);
    assert!(!requirements.exists(), "{} is gone", requirements.display());
}

#[test]
fn gemini_after_agent_is_blocked_without_evidence_and_the_reason_reaches_the_model() {
    let Some(world) = world() else { return };
    world.gemini_p(); // writes settings.json first, as a user's would be
    let before = world.requests("gemini").len();
    world.judged(&["install-hooks", "--gemini", "--user"]);
    let output = world.gemini_p();
    assert!(output.status.success(), "{}", said(&output));
    let requests = world.requests("gemini")[before..].to_vec();
    assert_eq!(requests.len(), 2, "one continuation on the block, then the agent stops: {requests:#?}");
    assert!(!requests[0].contains(BLOCKED) && requests[1].contains(BLOCKED), "{requests:#?}");
    let decisions = world.decisions("AfterAgent");
    assert!(!decisions.is_empty() && decisions.iter().all(|d| d["decision"] == "block"), "{decisions:#?}");
    assert!(String::from_utf8_lossy(&output.stderr).contains(BLOCKED), "the user sees why: {}", said(&output));
}

/// Issue 25: a Gemini CLI agent that ends with no gate asked (no hook installed, the gate
/// armed for `AfterAgent` by default) is on the record as a bypass once its last answer
/// has been quiet. Issue 31: under the hook that blocks it, the answer it went on from is
/// no end, and the end judge-hook made with `continue: false` is a forced one.
#[test]
fn a_gemini_agent_that_ended_without_the_gate_is_on_the_record() {
    let Some(world) = world() else { return };
    world.gemini_quiet(1);
    let output = world.gemini_p();
    assert!(output.status.success(), "{}", said(&output));
    assert!(world.decisions("AfterAgent").is_empty(), "no hook, no decision");
    let recording = world.recording();
    let bypassed = eventually("the bypass", Duration::from_secs(30), || {
        Some(world.bypasses_of(&recording)).filter(|b| !b.is_empty())
    });
    assert_eq!(bypassed.len(), 1, "{bypassed:#?}");
    assert_eq!(bypassed[0]["event"], "AfterAgent", "{bypassed:#?}");

    let Some(gated) = world_with_gemini_quiet(1) else { return };
    std::fs::write(gated.home().join(".gemini/settings.json"), GEMINI_SETTINGS).unwrap();
    gated.judged(&["install-hooks", "--gemini", "--user"]);
    let output = gated.gemini_p();
    assert!(output.status.success(), "{}", said(&output));
    let decisions = gated.decisions("AfterAgent");
    assert!(!decisions.is_empty() && decisions.iter().all(|d| d["decision"] == "block"), "{decisions:#?}");
    let header = hosts::read_jsonl(std::path::Path::new(&gated.recording())).remove(0);
    assert_eq!(decisions[0]["session_id"], header["sessionId"], "the hook names the recording's session");
    // Past the quiet time and a tick of the daemon's: the end is matched to the gate's
    // blocks, the first of which the agent went on from.
    let recording = gated.recording();
    let bypassed = eventually("the forced end", Duration::from_secs(30), || {
        Some(gated.bypasses_of(&recording)).filter(|b| !b.is_empty())
    });
    assert_eq!(bypassed.len(), 1, "{bypassed:#?}");
    assert_eq!(
        (bypassed[0]["event"].as_str(), &bypassed[0]["forced_end"]),
        (Some("AfterAgent"), &json!({"blocks": 2}))
    );
}

fn world_with_gemini_quiet(seconds: u64) -> Option<World> {
    let world = world()?;
    world.gemini_quiet(seconds);
    Some(world)
}

#[test]
fn gemini_after_agent_is_allowed_when_the_policy_is_off() {
    let Some(world) = world() else { return };
    std::fs::write(world.home().join(".gemini/settings.json"), GEMINI_SETTINGS).unwrap();
    world.judged(&["install-hooks", "--gemini", "--user"]);
    world.gate_off();
    let output = world.gemini_p();
    assert!(output.status.success(), "{}", said(&output));
    assert_eq!(world.requests("gemini").len(), 1, "the agent ends at its first stop");
    let decisions = world.decisions("AfterAgent");
    assert_eq!(decisions.len(), 1, "{decisions:#?}");
    assert_eq!(decisions[0]["decision"], "allow");
}

/// The prompt of the `codex-*-review` scenarios.
const REVIEW_PROMPT: &str =
    "Make the cart round half up and have it reviewed for binding run_20261202_c0dexexe_r1_review_5b2f9d01.";

/// The scenario's verify step.
const VERIFY: &str = "judge-evidence verify";

/// What the shell call whose command holds `needle` printed, as `codex exec --json`
/// reports it.
fn printed_by(output: &Output, needle: &str) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let call = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .find(|e| e["item"]["command"].as_str().is_some_and(|c| c.contains(needle)));
    match call {
        Some(call) => call["item"]["aggregated_output"].as_str().unwrap_or_default().to_owned(),
        None => panic!("no shell call ran {needle}: {}", said(output)),
    }
}

/// A world for a Codex CLI agent that runs `copilot -p`, `claude -p` or `gemini -p` as
/// its reviewer, under the Stop gate; `None` (the test skips) when the clients cannot be
/// installed.
fn reviewed_world(scenario: &str, server_args: &[&str]) -> Option<World> {
    let (jurors, clients) = (hosts::jurors()?, hosts::clients()?);
    // `bundle/gemini.js`'s package's `node_modules/.bin`, which has `gemini`.
    let gemini_bin = jurors.gemini.ancestors().nth(4).unwrap().join(".bin");
    let mut world = World::of(jurors, scenario, server_args);
    world.tools.extend([&clients.copilot, &clients.claude].map(|bin| bin.parent().unwrap().to_path_buf()));
    world.tools.push(gemini_bin);
    std::fs::write(world.home().join(".gemini/settings.json"), GEMINI_SETTINGS).unwrap();
    world.judged(&["install-hooks", "--codex", "--user"]);
    Some(world)
}

impl World {
    /// `judge-evidence ARGS` in the project, in `mode` (`auto`: through this world's
    /// daemon, when it has one).
    fn judge_evidence(&self, mode: &str, args: &[&str]) -> Output {
        self.command(bin("judge-evidence")).args(["--mode", mode]).args(args).output().expect("judge-evidence runs")
    }

    /// The completions without the gate allowing them that `judged report` lists for the
    /// session of `log`, once the daemon has read all of it (the watcher reads the last
    /// lines a moment after the client exits).
    fn bypasses_of(&self, log: &str) -> Vec<Value> {
        let lines = std::fs::read_to_string(log).expect("the session log").lines().count() as u64;
        let read = || {
            let sessions = self.daemon.call("sessions", Value::Null).expect("sessions");
            sessions.as_array().unwrap().iter().find(|s| s["path"] == log && s["events"] == lines).cloned()
        };
        let summary = eventually(&format!("the daemon to read all of {log}"), Duration::from_secs(30), read);
        let report = self.judged(&["report", "--json", "--since", "1d"]);
        let data: Value = serde_json::from_slice(&report.stdout).expect("report --json");
        let bypassed = data["bypassed"].as_array().cloned().unwrap_or_default();
        bypassed.into_iter().filter(|b| b["session_id"] == summary["session_id"]).collect()
    }

    /// The Codex CLI agent's rollout: the one the world's `codex exec` wrote (a reviewer
    /// CLI's run writes its own elsewhere).
    fn rollout(&self) -> String {
        let sessions = self.codex_home().join("sessions");
        let found = std::fs::read_dir(&sessions).into_iter().flatten().flatten().map(|year| year.path());
        let mut files: Vec<PathBuf> = found
            .flat_map(|dir| files_under(&dir))
            .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rollout-")))
            .collect();
        files.sort();
        files.first().unwrap_or_else(|| panic!("no rollout under {}", sessions.display())).display().to_string()
    }

    /// The gate blocked the agent's first `event` (no review yet) and allowed its last
    /// (on the review's evidence).
    fn blocked_then_allowed(&self, event: &str) {
        let decisions = self.decisions(event);
        let [first, .., last] = decisions.as_slice() else { panic!("two {event}s at least: {decisions:#?}") };
        let decided = (first["decision"].as_str(), last["decision"].as_str());
        assert_eq!(decided, (Some("block"), Some("allow")), "{decisions:#?}");
        assert_eq!(last["reason"], "fresh positive evidence", "{decisions:#?}");
    }

    /// The evidence the scenario's verify step wrote.
    fn evidence(&self) -> Value {
        hosts::read_json(&self.project().join("review.evidence.json"))
    }
}

/// A reviewer CLI a scenario's agent runs, as its evidence names it.
struct Reviewer {
    agent_name: &'static str,
    model: &'static str,
    identity_source: &'static str,
    host: &'static str,
    family: &'static str,
}

/// The agent a scenario reviews, as its evidence names it: its host, model, where the
/// model was read, and its family.
type Executor = [&'static str; 4];

/// `codex exec -m gpt-5.5`, the agent of the `codex-*` scenarios.
const CODEX_AGENT: Executor = ["codex-cli", "gpt-5.5", "codex-rollout", "openai"];

/// `copilot -p` with a Claude model.
const COPILOT_PROMPT: Reviewer = Reviewer {
    agent_name: "copilot-prompt",
    model: "claude-sonnet-4.6",
    identity_source: "copilot-session",
    host: "copilot-cli",
    family: "anthropic",
};

/// `claude -p`.
const CLAUDE_PROMPT: Reviewer = Reviewer {
    agent_name: "claude-prompt",
    model: "claude-sonnet-4-6",
    identity_source: "claude-transcript",
    host: "claude-code",
    family: "anthropic",
};

/// `gemini -p -m gemini-2.5-pro`.
const GEMINI_PROMPT: Reviewer = Reviewer {
    agent_name: "gemini-prompt",
    model: "gemini-2.5-pro",
    identity_source: "gemini-recording",
    host: "gemini-cli",
    family: "google",
};

/// `qwen -p -m qwen3-coder-plus`.
const QWEN_PROMPT: Reviewer = Reviewer {
    agent_name: "qwen-prompt",
    model: "qwen3-coder-plus",
    identity_source: "qwen-chat",
    host: "qwen-code",
    family: "qwen",
};

/// `opencode run` with `mock/qwen3-coder-plus`.
const OPENCODE_RUN: Reviewer = Reviewer {
    agent_name: "opencode-run",
    model: "qwen3-coder-plus",
    identity_source: "opencode-event",
    host: "opencode",
    family: "qwen",
};

/// `codex exec -m gpt-5.4`.
const CODEX_EXEC: Reviewer = Reviewer {
    agent_name: "codex-exec",
    model: "gpt-5.4",
    identity_source: "codex-rollout",
    host: "codex-cli",
    family: "openai",
};

/// Evidence of `executor`'s review by `reviewer`: the executor read from its own log,
/// the reviewer from the reviewer CLI's own log of the run.
fn assert_reviewed_by(evidence: &Value, executor: Executor, reviewer: &Reviewer) {
    assert_eq!(evidence["status"], "verified", "{evidence}");
    let fields = ["host", "executor_model", "executor_model_source", "executor_family"];
    assert_eq!(fields.map(|f| evidence[f].as_str()), executor.map(Some));
    let fields = ["agent_name", "reviewer_model", "identity_source", "reviewer_host", "reviewer_family"];
    let Reviewer { agent_name, model, identity_source, host, family } = reviewer;
    assert_eq!(
        fields.map(|f| evidence[f].as_str()),
        [agent_name, model, identity_source, host, family].map(|f| Some(*f))
    );
}

/// Issue 24: a Codex CLI agent runs `scenario`'s reviewer CLI as a shell call; the review
/// verifies through the daemon, the Stop gate that blocked the turn's end before it lets
/// the turn end after it, the reviewer's own session is no bypass, and the evidence
/// validates in both modes while copies edited to name another run, model or call are
/// refused. The world and the evidence, for more checks.
fn reviewed_under_the_stop_gate(scenario: &str, reviewer: &Reviewer) -> Option<(World, Value)> {
    Some(reviewed_in(reviewed_world(scenario, &[])?, reviewer))
}

/// [`reviewed_under_the_stop_gate`] in `world`.
fn reviewed_in(world: World, reviewer: &Reviewer) -> (World, Value) {
    let output = world.codex_exec_prompt(REVIEW_PROMPT);
    assert!(output.status.success(), "{}", said(&output));
    let verified = printed_by(&output, VERIFY);
    assert!(verified.contains("VERIFY_EXIT=0") && !verified.contains("direct mode"), "{verified}");
    let evidence = world.evidence();
    assert_reviewed_by(&evidence, CODEX_AGENT, reviewer);
    let response = std::fs::read_to_string(world.project().join("review.response.md")).unwrap();
    assert!(response.starts_with("Score: 8/10\nVerdict: ready"), "{response}");
    world.blocked_then_allowed("Stop");
    // The reviewer's own session, which ran in the gated project with no hook of its
    // host, ended a reviewer's run, not an agent's work: no bypass.
    let reviewer_log = evidence["reviewer_session_events"].as_str().unwrap();
    assert_eq!(world.bypasses_of(reviewer_log), Vec::<Value>::new());
    // The turn's end the gate allowed is none either.
    assert_eq!(world.bypasses_of(&world.rollout()), Vec::<Value>::new());
    for mode in ["auto", "direct"] {
        let validated = world.judge_evidence(mode, &["validate", "--evidence", "review.evidence.json"]);
        assert!(validated.status.success(), "{mode}: {}", said(&validated));
    }
    // Validation re-derives the run and the shell call from both logs, so evidence edited
    // to name another run, model or call (its id recomputed, as anyone can) is refused.
    for (field, forged) in [
        ("reviewer_model", Value::from("claude-opus-4.6")),
        ("reviewer_session_id", Value::from("00000000-0000-4000-8000-000000000000")),
        ("tool_call_id", Value::from("call_forged")),
    ] {
        let mut copy = evidence.clone();
        let fields = copy.as_object_mut().unwrap();
        fields.insert(field.to_owned(), forged);
        let id = judged_core::rules::EvidenceId::of(&fields.clone().into()).to_string();
        fields.insert("evidence_id".to_owned(), id.into());
        std::fs::write(world.project().join("forged.evidence.json"), copy.to_string()).unwrap();
        for mode in ["auto", "direct"] {
            let validated = world.judge_evidence(mode, &["validate", "--evidence", "forged.evidence.json"]);
            let stderr = String::from_utf8_lossy(&validated.stderr);
            assert!(!validated.status.success(), "{field} forged, {mode} mode: validated");
            assert!(
                stderr.contains("does not match") || stderr.contains("no longer holds"),
                "{field}, {mode}: {stderr}"
            );
        }
    }
    (world, evidence)
}

/// Copilot CLI with a Claude model reviews a Codex CLI agent; its call returns while
/// Copilot CLI still runs, and the poll that saw it exit is where the call ended.
#[test]
fn a_codex_cli_agent_reviewed_by_copilot_prompt_ends_its_turn_under_the_stop_gate() {
    let Some((_world, evidence)) = reviewed_under_the_stop_gate("codex-copilot-review", &COPILOT_PROMPT) else {
        return;
    };
    let rollout = std::fs::read_to_string(evidence["session_events"].as_str().unwrap()).unwrap();
    let call = format!(r#""call_id":"{}""#, evidence["tool_call_id"].as_str().unwrap());
    let first = rollout.lines().find(|l| l.contains("function_call_output") && l.contains(&call)).unwrap();
    assert!(first.contains("Process running with session ID"), "{first}");
}

/// Claude Code reviews a Codex CLI agent: the reviewer's model is the one its transcript
/// says answered.
#[test]
fn a_codex_cli_agent_reviewed_by_claude_prompt_ends_its_turn_under_the_stop_gate() {
    reviewed_under_the_stop_gate("codex-claude-review", &CLAUDE_PROMPT);
}

/// Gemini CLI reviews a Codex CLI agent: the reviewer's model is the one its recording
/// names for its answer.
#[test]
fn a_codex_cli_agent_reviewed_by_gemini_prompt_ends_its_turn_under_the_stop_gate() {
    reviewed_under_the_stop_gate("codex-gemini-review", &GEMINI_PROMPT);
}

/// Issue 33: Qwen Code reviews a Codex CLI agent: the reviewer's model is the one its chat
/// log names, both for its answer and in its record of the server's response.
#[test]
fn a_codex_cli_agent_reviewed_by_qwen_prompt_ends_its_turn_under_the_stop_gate() {
    let Some(qwen) = hosts::qwen() else { return };
    let Some(mut world) = reviewed_world("codex-qwen-review", &[]) else { return };
    world.qwen_on_path(&qwen);
    reviewed_in(world, &QWEN_PROMPT);
}

/// Issue 33: OpenCode reviews a Codex CLI agent: the daemon reads the run out of OpenCode's
/// database when it verifies, and the reviewer's model is the one its events name.
#[test]
fn a_codex_cli_agent_reviewed_by_opencode_run_ends_its_turn_under_the_stop_gate() {
    let Some(opencode) = hosts::opencode() else { return };
    let Some(mut world) = reviewed_world("codex-opencode-review", &[]) else { return };
    world.opencode_config();
    world.tools.insert(0, opencode.parent().unwrap().to_path_buf());
    world.tools.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    world.env.extend([("OPENCODE_DISABLE_MODELS_FETCH", "1"), ("OPENCODE_DISABLE_AUTOUPDATE", "1")]);
    reviewed_in(world, &OPENCODE_RUN);
}

/// A Qwen Code reviewer answered by another model than it asked for (the server answers
/// `qwen3-coder-plus` as `gpt-5.4`, the agent's family): its identity is what its chat log
/// says the server answered as, and the review is refused as the agent's own family.
#[test]
fn a_qwen_reviewer_answered_by_another_model_is_refused() {
    let Some(qwen) = hosts::qwen() else { return };
    let Some(mut world) = reviewed_world("codex-qwen-review", &["--impostor", "qwen3-coder-plus=gpt-5.4"]) else {
        return;
    };
    world.qwen_on_path(&qwen);
    refused_as_the_agents_family(&world);
}

/// A reviewer whose own record names a model of the agent's family, though it was asked
/// for another (the server answers `claude-sonnet-4-6` as `gpt-5.4`), is refused as the
/// same family: the identity is what the reviewer's record says answered.
#[test]
fn a_reviewer_that_answered_as_the_agents_family_is_refused_whatever_it_was_asked_for() {
    let Some(world) = reviewed_world("codex-claude-review", &["--impostor", "claude-sonnet-4-6=gpt-5.4"]) else {
        return;
    };
    refused_as_the_agents_family(&world);
}

/// The Codex CLI agent's review round in `world`, whose reviewer the server answers as
/// `gpt-5.4`: bound, and refused as the agent's own family (exit 10), the reviewer's model
/// the one its record says answered.
fn refused_as_the_agents_family(world: &World) {
    let output = world.codex_exec_prompt(REVIEW_PROMPT);
    assert!(output.status.success(), "{}", said(&output));
    let verified = printed_by(&output, VERIFY);
    assert!(verified.contains("VERIFY_EXIT=10") && verified.contains("same-model-family"), "{verified}");
    let evidence = world.evidence();
    assert_eq!((evidence["reviewer_model"].as_str(), evidence["status"].as_str()), (Some("gpt-5.4"), Some("rejected")));
}

/// The same review decided in direct mode: judge-evidence reaches the same verdict from
/// the same files, by the same rules (and the gate, which counts only what its daemon
/// witnessed, keeps the turn from ending).
#[test]
fn a_codex_cli_agent_reviewed_by_copilot_prompt_verifies_in_direct_mode() {
    let Some(mut world) = reviewed_world("codex-copilot-review", &[]) else { return };
    world.env.push(("JUDGE_EVIDENCE_MODE", "direct"));
    let output = world.codex_exec_prompt(REVIEW_PROMPT);
    assert!(output.status.success(), "{}", said(&output));
    let verified = printed_by(&output, VERIFY);
    assert!(verified.contains("VERIFY_EXIT=0"), "{verified}");
    assert_reviewed_by(&world.evidence(), CODEX_AGENT, &COPILOT_PROMPT);
    let validated = world.judge_evidence("direct", &["validate", "--evidence", "review.evidence.json"]);
    assert!(validated.status.success(), "{}", said(&validated));
}

/// A Codex CLI agent whose reviewer is another Codex CLI run: the run is bound, and
/// refused as the agent's own family (exit 10).
#[test]
fn a_codex_reviewer_of_a_codex_cli_agent_is_refused_as_the_same_family() {
    let Some(world) = reviewed_world("codex-codex-review", &[]) else { return };
    world.codex_reviewer_config();
    let output = world.codex_exec_prompt(REVIEW_PROMPT);
    assert!(output.status.success(), "{}", said(&output));
    let verified = printed_by(&output, VERIFY);
    assert!(verified.contains("VERIFY_EXIT=10") && verified.contains("same-model-family"), "{verified}");
}

/// Gemini CLI 0.61.0 as an agent: as [`GEMINI_SETTINGS`], offered its shell tool only.
const GEMINI_AGENT_SETTINGS: &str = r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false,"maxAttempts":1,"retryFetchErrors":false},"tools":{"core":["run_shell_command"]}}"#;

/// The prompt of the `gemini-*-review` scenarios.
const GEMINI_REVIEW_PROMPT: &str =
    "Make the cart round half up and have it reviewed for binding run_20261202_9e3141a1_r1_review_5b2f9d01.";

impl World {
    /// What the Gemini CLI agent's shell call whose command holds `needle` returned, as its
    /// recording has it.
    fn gemini_printed_by(&self, needle: &str) -> String {
        let recordings = files_under(&self.home().join(".gemini/tmp"));
        let lines: Vec<Value> = recordings
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
            .flat_map(|p| hosts::read_jsonl(p))
            .collect();
        let mut calls = lines.iter().flat_map(|l| l["toolCalls"].as_array().cloned().unwrap_or_default());
        let call = calls.rfind(|c| c["args"]["command"].as_str().is_some_and(|c| c.contains(needle)));
        let call = call.unwrap_or_else(|| panic!("no shell call ran {needle} in {recordings:?}"));
        call["result"][0]["functionResponse"]["response"]["output"].as_str().unwrap_or_default().to_owned()
    }
}

/// Issue 24: a Gemini CLI agent runs the real Codex CLI as its reviewer in a shell call;
/// the review verifies through the daemon, with the executor read from the agent's
/// recording and the reviewer from the run's rollout, and the AfterAgent gate that blocked
/// the agent's end before it lets the agent end after it.
#[test]
fn a_gemini_cli_agent_reviewed_by_codex_exec_ends_under_the_after_agent_gate() {
    let Some(jurors) = hosts::jurors() else { return };
    let world = World::of(jurors, "gemini-codex-review", &[]);
    std::fs::write(world.home().join(".gemini/settings.json"), GEMINI_AGENT_SETTINGS).unwrap();
    world.judged(&["install-hooks", "--gemini", "--user"]);
    world.codex_reviewer_config();
    let output = world.gemini(&["--approval-mode", "yolo", "-p", GEMINI_REVIEW_PROMPT]);
    assert!(output.status.success(), "{}", said(&output));
    let verified = world.gemini_printed_by(VERIFY);
    assert!(verified.contains("VERIFY_EXIT=0"), "{verified}");
    let gemini_agent = ["gemini-cli", "gemini-2.5-pro", "gemini-recording", "google"];
    assert_reviewed_by(&world.evidence(), gemini_agent, &CODEX_EXEC);
    world.blocked_then_allowed("AfterAgent");
    for mode in ["auto", "direct"] {
        let validated = world.judge_evidence(mode, &["validate", "--evidence", "review.evidence.json"]);
        assert!(validated.status.success(), "{mode}: {}", said(&validated));
    }
}

// ---------------------------------------------------------------- Qwen Code as the agent

/// The prompt of the `qwen-*-review` scenarios.
const QWEN_REVIEW_PROMPT: &str =
    "Make the cart round half up and have it reviewed for binding run_20261204_9e3141a1_r1_review_5b2f9d01.";

/// The model Qwen Code asks for, as its own log records it.
const QWEN_MODEL: &str = "qwen3-coder-plus";

impl World {
    /// Qwen Code as an agent (its `cli-entry.js` at `qwen`) given `prompt`, its shell calls
    /// run without asking (`--yolo`), its provider the scripted model through the user's
    /// settings (kept: install-hooks may have written to them).
    fn qwen(&self, qwen: &std::path::Path, prompt: &str) -> Output {
        let settings = self.home().join(".qwen/settings.json");
        let mut merged: Value =
            std::fs::read(&settings).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_else(|| json!({}));
        let provider = json!({
            "modelProviders": {"openai": [{"id": QWEN_MODEL, "name": QWEN_MODEL,
                "baseUrl": format!("{}/v1", self.server.url()), "envKey": "SCRIPTED_OFFLINE_API_KEY"}]},
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": QWEN_MODEL},
            "general": {"enableAutoUpdate": false},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
        });
        for (key, value) in provider.as_object().unwrap() {
            merged[key] = value.clone();
        }
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        std::fs::write(&settings, merged.to_string()).unwrap();
        let mut command = self.command("node");
        command
            .env("SCRIPTED_OFFLINE_API_KEY", "scripted-offline-key")
            .arg(qwen)
            .args(["--yolo", "-o", "json", prompt]);
        self.run(command)
    }

    /// The Qwen Code agent's log: the one session log under its projects.
    fn qwen_log(&self) -> String {
        let logs: Vec<PathBuf> = files_under(&self.home().join(".qwen/projects"))
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "jsonl") && p.parent().is_some_and(|d| d.ends_with("chats")))
            .collect();
        let [log] = logs.as_slice() else { panic!("one Qwen Code log: {logs:?}") };
        log.display().to_string()
    }

    /// What the Qwen Code agent's shell call whose command holds `needle` returned, as its
    /// log has it.
    fn qwen_printed_by(&self, needle: &str) -> String {
        let lines = hosts::read_jsonl(std::path::Path::new(&self.qwen_log()));
        let calls: Vec<&Value> =
            lines.iter().flat_map(|l| l["message"]["parts"].as_array().into_iter().flatten()).collect();
        let id = calls
            .iter()
            .filter_map(|p| p.get("functionCall"))
            .rfind(|c| c["args"]["command"].as_str().is_some_and(|c| c.contains(needle)))
            .and_then(|c| c["id"].as_str())
            .unwrap_or_else(|| panic!("no shell call ran {needle}"));
        let result = calls.iter().filter_map(|p| p.get("functionResponse")).find(|r| r["id"] == id);
        result.and_then(|r| r["response"]["output"].as_str()).unwrap_or_default().to_owned()
    }
}

impl World {
    /// `qwen` on the clients' PATH: the pinned Qwen Code's `cli-entry.js`, run by the
    /// machine's node.
    fn qwen_on_path(&mut self, qwen: &std::path::Path) {
        let bin = self.dir.path().join("qwen-bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("qwen"), format!("#!/bin/sh\nexec node {} \"$@\"\n", qwen.display())).unwrap();
        std::fs::set_permissions(bin.join("qwen"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        self.tools.push(bin);
        self.tools.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    }
}

/// A world for a Qwen Code agent (the pinned client's `cli-entry.js`), the model server
/// playing `scenario`; `None` (the test skips) when the clients cannot be installed.
fn qwen_world(scenario: &str) -> Option<(World, PathBuf)> {
    let (jurors, qwen) = (hosts::jurors()?, hosts::qwen()?);
    let mut world = World::of(jurors, scenario, &[]);
    // Which node runs Qwen Code, and the python3 of the scenario's reviewer call: the
    // machine's.
    world.tools.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    Some((world, qwen))
}

/// Issue 33: a Qwen Code agent's end is gated through its `Stop` hook, which
/// `judged install-hooks --qwen --user` writes: judge-hook blocks the first end (no review
/// yet), and Qwen Code sends the reason to the model as the next message.
#[test]
fn qwen_stop_is_blocked_without_evidence_and_the_reason_reaches_the_model() {
    let Some((world, qwen)) = qwen_world("executor-done") else { return };
    let installed = world.judged(&["install-hooks", "--qwen", "--user"]);
    let settings = std::fs::read_to_string(world.home().join(".qwen/settings.json")).unwrap();
    assert!(settings.contains("judge-hook") && settings.contains("--host qwen-code"), "{settings}\n{installed:?}");
    let output = world.qwen(&qwen, "Make the cart round half up.");
    assert!(output.status.success(), "{}", said(&output));
    let decisions = world.decisions("Stop");
    assert!(!decisions.is_empty() && decisions[0]["decision"] == "block", "{decisions:#?}");
    assert_eq!(decisions[0]["host"], "qwen-code", "{decisions:#?}");
    let requests = world.server.requests();
    let reason_sent = requests.iter().any(|r| r.to_string().contains(BLOCKED));
    assert!(reason_sent, "the block's reason reached no model request: {requests:#?}");
}

/// Without the hook, Qwen Code's end is on the record as a bypass once its last answer has
/// been quiet: the daemon witnessed the answer that ended the agent's turn, and no gate
/// decided it. Under the hook that blocks every end, the answers the agent went on from
/// are no ends, and the end Qwen Code made at its own cap on blocks in a row is a forced
/// one.
#[test]
fn a_qwen_agent_that_ended_without_the_gate_is_on_the_record() {
    let Some((world, qwen)) = qwen_world("executor-done") else { return };
    world.answer_quiet("answer_quiet_seconds", 1);
    let output = world.qwen(&qwen, "Make the cart round half up.");
    assert!(output.status.success(), "{}", said(&output));
    assert!(world.decisions("Stop").is_empty(), "no hook, no decision");
    let log = world.qwen_log();
    let bypassed =
        eventually("the bypass", Duration::from_secs(30), || Some(world.bypasses_of(&log)).filter(|b| !b.is_empty()));
    assert_eq!(bypassed.len(), 1, "{bypassed:#?}");
    assert_eq!((bypassed[0]["event"].as_str(), &bypassed[0]["forced_end"]), (Some("Stop"), &Value::Null));

    let Some((mut gated, qwen)) = qwen_world("executor-done") else { return };
    gated.answer_quiet("answer_quiet_seconds", 1);
    gated.env.push(("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "3"));
    gated.judged(&["install-hooks", "--qwen", "--user"]);
    let output = gated.qwen(&qwen, "Make the cart round half up.");
    assert!(output.status.success(), "{}", said(&output));
    let decisions = gated.decisions("Stop");
    assert_eq!(decisions.iter().map(|d| d["decision"].as_str()).collect::<Vec<_>>(), [Some("block"); 3]);
    let log = gated.qwen_log();
    let bypassed = eventually("the forced end", Duration::from_secs(30), || {
        Some(gated.bypasses_of(&log)).filter(|b| !b.is_empty())
    });
    assert_eq!(bypassed.len(), 1, "only the last answer ended the turn: {bypassed:#?}");
    assert_eq!((bypassed[0]["event"].as_str(), &bypassed[0]["forced_end"]), (Some("Stop"), &json!({"blocks": 3})));
}

/// `install-hooks --qwen --managed` writes Qwen Code's system settings, root's: their
/// hook runs though the user's own settings turn every hook off (`disableAllHooks`), since
/// the system's `disableAllHooks: false` overrides them; uninstalling takes out only what
/// it wrote.
#[test]
fn qwen_system_settings_gate_qwen_code_though_the_user_turns_hooks_off() {
    let Some((world, qwen)) = qwen_world("executor-done") else { return };
    let Some(mut world) = world.with_private_etc() else { return };
    world.judged(&["install-hooks", "--qwen", "--managed"]);
    let system = world.private_etc_file("/etc/qwen-code/settings.json");
    let written = std::fs::read_to_string(&system).expect("the system settings");
    assert!(written.contains("judge-hook --host qwen-code") && written.contains("\"command\": \"/"), "{written}");
    assert!(written.contains("\"disableAllHooks\": false"), "{written}");
    let user = world.home().join(".qwen/settings.json");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, r#"{"disableAllHooks": true}"#).unwrap();
    world.env.push(("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "2"));
    let output = world.qwen(&qwen, "Make the cart round half up.");
    assert!(output.status.success(), "{}", said(&output));
    let decisions = world.decisions("Stop");
    assert_eq!(decisions.iter().map(|d| d["decision"].as_str()).collect::<Vec<_>>(), [Some("block"); 2]);
    world.judged(&["uninstall-hooks", "--qwen", "--managed"]);
    assert!(!system.exists(), "{} is gone", system.display());
}

/// Issue 33: a Qwen Code agent runs the real Codex CLI as its reviewer in a shell call; the
/// review verifies through the daemon, the executor read from Qwen Code's own log (its
/// model, its family `qwen`) and the reviewer from the run's rollout, and the Stop gate
/// that blocked the agent's end before the review lets it end after it.
#[test]
fn a_qwen_code_agent_reviewed_by_codex_exec_ends_under_the_stop_gate() {
    let Some((world, qwen)) = qwen_world("qwen-codex-review") else { return };
    world.judged(&["install-hooks", "--qwen", "--user"]);
    world.codex_reviewer_config();
    let output = world.qwen(&qwen, QWEN_REVIEW_PROMPT);
    assert!(output.status.success(), "{}", said(&output));
    let verified = world.qwen_printed_by(VERIFY);
    assert!(verified.contains("VERIFY_EXIT=0"), "{verified}");
    let qwen_agent = ["qwen-code", QWEN_MODEL, "qwen-chat", "qwen"];
    assert_reviewed_by(&world.evidence(), qwen_agent, &CODEX_EXEC);
    world.blocked_then_allowed("Stop");
    assert_eq!(world.bypasses_of(&world.qwen_log()), Vec::<Value>::new());
    for mode in ["auto", "direct"] {
        let validated = world.judge_evidence(mode, &["validate", "--evidence", "review.evidence.json"]);
        assert!(validated.status.success(), "{mode}: {}", said(&validated));
    }
}

// ---------------------------------------------------------------- OpenCode, witnessed

impl World {
    /// `opencode run` (the binary at `opencode`) given `prompt`, its provider the scripted
    /// model through the user's config, reaching nothing else (`--pure`, no model list).
    fn opencode(&self, opencode: &std::path::Path, prompt: &str) -> Output {
        self.opencode_config();
        let mut command = self.command(opencode);
        command
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .args(["run", "--format", "json", "--pure", prompt]);
        self.run(command)
    }

    /// OpenCode's user config: the scripted model as its one provider.
    fn opencode_config(&self) {
        let config = self.home().join(".config/opencode/opencode.json");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        let provider = json!({
            "provider": {"mock": {"npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": format!("{}/v1", self.server.url()), "apiKey": "scripted-offline-key"},
                "models": {QWEN_MODEL: {"tool_call": true}}}},
            "model": format!("mock/{QWEN_MODEL}"),
            "autoupdate": false,
            "share": "disabled",
        });
        std::fs::write(&config, provider.to_string()).unwrap();
    }
}

/// Issue 33: OpenCode, which no hook can gate, is witnessed from its own database: the
/// daemon reads the session's events without blocking OpenCode, keeps them as a log of
/// the session (its directory, its model), records the agent's end as a bypass no gate
/// decided, and catches an event of the session rewritten in the database afterwards.
#[test]
fn an_opencode_session_is_witnessed_its_end_a_bypass_and_its_rewrite_caught() {
    let (Some(jurors), Some(opencode)) = (hosts::jurors(), hosts::opencode()) else { return };
    let mut world = World::of(jurors, "opencode-shell-call", &[]);
    // OpenCode runs its bash calls with the machine's shell tools.
    world.tools.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let output = world.opencode(&opencode, "Write hi into note.txt.");
    assert!(output.status.success(), "{}", said(&output));
    assert!(world.project().join("note.txt").is_file(), "the agent's bash call ran: {}", said(&output));

    let session = eventually("the session to be witnessed", Duration::from_secs(30), || {
        let sessions = world.daemon.call("sessions", Value::Null).ok()?;
        sessions.as_array()?.iter().find(|s| s["host"] == "opencode").cloned()
    });
    assert_eq!(session["cwd"], world.project().display().to_string(), "{session:#}");
    let log = session["path"].as_str().unwrap().to_owned();
    assert!(log.starts_with(&world.judged_home.display().to_string()), "judged's own log of it: {log}");

    let bypassed =
        eventually("the bypass", Duration::from_secs(30), || Some(world.bypasses_of(&log)).filter(|b| !b.is_empty()));
    assert_eq!(bypassed.len(), 1, "one end, the final answer: {bypassed:#?}");
    assert_eq!(bypassed[0]["event"], "session.idle", "{bypassed:#?}");

    // An event of the session rewritten in OpenCode's database: the tool call's command.
    let database = world.home().join(".local/share/opencode/opencode.db");
    let rewrite = "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); \
                   db.execute(\"UPDATE event SET data = replace(data, 'echo hi', 'echo ho') WHERE data LIKE '%echo hi%'\"); \
                   db.commit()";
    let status = Command::new("python3").args(["-c", rewrite]).arg(&database).status().unwrap();
    assert!(status.success());
    // The reader reads every session of a database that changed again whole, every ten
    // seconds at most: the rewrite needs no new event to be found.
    let tampered = eventually("the rewrite to be caught", Duration::from_secs(30), || {
        let sessions = world.daemon.call("sessions", Value::Null).ok()?;
        let ours = sessions.as_array()?.iter().find(|s| s["path"] == log.as_str())?.clone();
        (ours["tampered"] == true).then_some(ours)
    });
    assert_eq!(tampered["host"], "opencode");
}

// ---------------------------------------------------------------- judged init, for real

/// What a host's own listing (`<host> … list` as JSON) says of judged: enabled or not.
fn listed_enabled(listing: &Value) -> Option<bool> {
    let entries = listing.get("installed").unwrap_or(listing).as_array()?;
    let ours = |e: &&Value| ["id", "pluginId", "name"].iter().any(|k| e[k] == "judged@judged" || e[k] == "judged");
    let entry = entries.iter().find(ours)?;
    entry["enabled"].as_bool().or(entry["isActive"].as_bool())
}

/// Issue 32: on a fresh HOME with the pinned clients on PATH and no terminal,
/// `judged init` finishes and exits 0; each host's own listing then shows judged enabled,
/// doctor says every host is gated, a Codex CLI turn and a Qwen Code agent's end (issue
/// 33) get gate decisions through the plugin, and `install-hooks` will not put a second
/// hook beside the plugin.
#[test]
fn init_without_a_terminal_arms_every_host() {
    let Some(hosts) = hosts::clients() else { return };
    let Some(qwen) = hosts::qwen() else { return };
    let Some(mut world) = world() else { return };
    // The five hosts by the names PATH finds them by (Gemini CLI and Qwen Code are node
    // scripts).
    let host_bin = world.dir.path().join("hosts-bin");
    std::fs::create_dir_all(&host_bin).unwrap();
    std::os::unix::fs::symlink(&hosts.claude, host_bin.join("claude")).unwrap();
    std::os::unix::fs::symlink(&hosts.copilot, host_bin.join("copilot")).unwrap();
    for (name, script) in [("gemini", &world.clients.gemini), ("qwen", &qwen)] {
        std::fs::write(host_bin.join(name), format!("#!/bin/sh\nexec node {} \"$@\"\n", script.display())).unwrap();
        std::fs::set_permissions(host_bin.join(name), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    world.tools.push(host_bin);
    // Which node runs Gemini CLI and Qwen Code: the machine's.
    world.tools.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    // The clients' own switches for running offline; nothing that answers a prompt.
    world.env.extend([
        ("COPILOT_OFFLINE", "true"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ]);

    let mut init = world.command(bin("judged"));
    init.arg("init");
    let init = world.run(init);
    let words = said(&init);
    assert!(init.status.success(), "init exits 0: {words}");
    for host in ["claude ", "copilot ", "codex ", "gemini ", "qwen "] {
        assert!(
            words.lines().any(|l| l.trim_start().starts_with(host) && l.contains(", enabled (")),
            "{host}: {words}"
        );
    }
    assert!(words.contains("codex    trusts the plugin's Stop hook"), "{words}");
    assert!(!words.contains("Still to do"), "{words}");

    // Each host's own listing shows judged installed and enabled.
    for (program, args) in [
        ("claude", &["plugin", "list", "--json"][..]),
        ("copilot", &["plugin", "list", "--json"]),
        ("codex", &["plugin", "list", "--json"]),
        ("gemini", &["extensions", "list", "-o", "json"]),
    ] {
        let output = world.run({
            let mut command = world.command(program);
            command.args(args);
            command
        });
        // Gemini CLI lists on stderr.
        let text = if output.stdout.iter().all(u8::is_ascii_whitespace) { &output.stderr } else { &output.stdout };
        let text = String::from_utf8_lossy(text);
        let listing: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{program}: {e}: {text}"));
        assert_eq!(listed_enabled(&listing), Some(true), "{program} lists judged enabled: {listing:#}");
    }
    // Qwen Code 0.24.4 lists its extensions as text only.
    let listing = world.run({
        let mut command = world.command("qwen");
        command.args(["extensions", "list"]);
        command
    });
    let listing = String::from_utf8_lossy(&listing.stdout);
    assert!(listing.lines().any(|l| l.starts_with("✓ judged (")), "qwen lists judged enabled: {listing}");

    // With the daemon running, doctor says what gates each host.
    let doctor = world.judged(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&doctor.stdout).expect("doctor --json");
    let checks = report["checks"].as_array().unwrap();
    for (host, by) in [
        ("claude-code", "Claude Code is gated by the plugin judged@judged"),
        ("copilot-cli", "Copilot CLI is gated by the plugin judged@judged"),
        ("codex-cli", "Codex CLI is gated by the Stop hook of the plugin judged@judged (trusted"),
        ("gemini-cli", "Gemini CLI is gated by the plugin judged"),
        ("qwen-code", "Qwen Code is gated by the plugin judged"),
    ] {
        let check = checks.iter().find(|c| c["name"] == format!("hooks.{host}")).expect("a line for the host");
        assert_eq!(check["status"], "ok", "{check:#}");
        assert!(check["detail"].as_str().unwrap().contains(by), "{check:#}");
    }

    // A Codex CLI turn in the project is decided by the gate, through the plugin's hook.
    let output = world.codex_exec_with("Make the cart round half up.", &[]);
    assert!(output.status.success(), "{}", said(&output));
    let decisions = world.decisions("Stop");
    assert!(!decisions.is_empty() && decisions.iter().all(|d| d["host"] == "codex-cli"), "{decisions:#?}");
    // So is a Qwen Code agent's end, through its extension's hook (two blocks, its cap).
    world.env.push(("QWEN_CODE_STOP_HOOK_BLOCK_CAP", "2"));
    let output = world.qwen(&qwen, "Make the cart round half up.");
    assert!(output.status.success(), "{}", said(&output));
    let qwen_decisions: Vec<Value> = world.decisions("Stop").into_iter().filter(|d| d["host"] == "qwen-code").collect();
    assert_eq!(qwen_decisions.len(), 2, "{qwen_decisions:#?}");

    // A second hook beside the plugin is refused, and nothing is written (the settings
    // hold the plugin's marketplace, which Claude Code wrote there).
    let settings = world.home().join(".claude/settings.json");
    let before = std::fs::read(&settings).ok();
    let refused = world.command(bin("judged")).args(["install-hooks", "--claude", "--user"]).output().unwrap();
    let words = said(&refused);
    assert!(!refused.status.success(), "{words}");
    assert!(
        words.contains("Claude Code is gated by the judged plugin already")
            && words.contains("plugin uninstall judged@judged"),
        "{words}"
    );
    assert_eq!(std::fs::read(&settings).ok(), before, "nothing written: {words}");
}

/// Issue 32: an agent run and the reviewer CLI it runs keep the user's home as they
/// found it.
#[test]
fn agent_runs_leave_the_users_home_as_they_found_it() {
    if hosts::clients().is_none() || hosts::jurors().is_none() {
        return;
    }
    hosts::assert_leaves_home_untouched(
        "a_codex_cli_agent_reviewed_by_copilot_prompt_ends_its_turn_under_the_stop_gate",
    );
}
