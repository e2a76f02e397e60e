//! Codex CLI and Gemini CLI as the agents being reviewed (issue 24): the gate installed by
//! `judged install-hooks --codex` / `--gemini` answers the real clients' `Stop` and
//! `AfterAgent` hooks, offline against `tests/hosts/model_server.py`. Each test skips with
//! `SKIP: …` when the clients cannot be installed (and fails under `CI`).

use judged_tests::hosts::{self, JurorClients, ModelServer};
use judged_tests::{Daemon, bin, bin_dir};
use serde_json::Value;
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
    _daemon: Daemon,
    server: ModelServer,
    clients: JurorClients,
}

impl World {
    fn new(clients: JurorClients) -> World {
        let dir = tempfile::Builder::new().prefix("judged-executors-").tempdir().expect("temp dir");
        let judged_home = dir.path().join("judged-home");
        std::fs::create_dir_all(&judged_home).unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::create_dir_all(dir.path().join("home/.gemini")).unwrap();
        std::fs::write(judged_home.join("config.toml"), "auto_start = false\n").unwrap();
        let daemon = Daemon::start(&judged_home, &[], &[]);
        let server = ModelServer::start("executor-done", &[]);
        World { dir, judged_home, _daemon: daemon, server, clients }
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

    /// A client's environment: nothing of the caller's but a PATH with the workspace's
    /// binaries and the Codex CLI first.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let codex_dir = self.clients.codex.parent().unwrap().to_path_buf();
        let path =
            std::env::join_paths([bin_dir(), codex_dir, "/usr/local/bin".into(), "/usr/bin".into(), "/bin".into()]);
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", path.unwrap())
            .env("HOME", self.home())
            .env("CODEX_HOME", self.codex_home())
            .env("GEMINI_CLI_HOME", self.home())
            .env("JUDGED_HOME", &self.judged_home)
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
                let _ = Command::new("kill").args(["-KILL", &format!("-{}", child.id())]).status();
                let _ = child.wait();
                panic!("the client ran past {CLIENT_DEADLINE:?}; see {}", err.display());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        Output { status, stdout: std::fs::read(&out).unwrap(), stderr: std::fs::read(&err).unwrap() }
    }

    /// `codex exec` as an agent, its prompt on the command line.
    fn codex_exec(&self) -> Output {
        let provider = format!(
            "model_providers.mock={{name=\"mock\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"MOCK_KEY\",request_max_retries=0,stream_max_retries=0}}",
            self.server.url()
        );
        let mut command = self.command(&self.clients.codex);
        command
            .env("MOCK_KEY", "scripted-offline-key")
            .args(["exec", "--json", "--skip-git-repo-check", "--disable", "plugins", "-c", "analytics.enabled=false"])
            .args(["-m", "gpt-5.5", "-c", "model_provider=mock", "-c", &provider])
            .arg("Make the cart round half up.");
        self.run(command)
    }

    /// `gemini -p` as an agent, offered no tools.
    fn gemini_p(&self) -> Output {
        let settings = self.home().join(".gemini/settings.json");
        if !settings.exists() {
            std::fs::write(&settings, GEMINI_SETTINGS).unwrap();
        }
        let mut command = self.command("node");
        command
            .env("GOOGLE_GEMINI_BASE_URL", self.server.url())
            .env("GEMINI_API_KEY", "scripted-offline-key")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .arg(&self.clients.gemini)
            .args(["-m", "gemini-2.5-pro", "-p", "Make the cart round half up."]);
        self.run(command)
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
    // What install-hooks wrote, and only that, goes again.
    world.judged(&["uninstall-hooks", "--codex", "--user"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), theirs);
    assert!(!world.codex_home().join("hooks.json").exists());
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
