//! Test harness: the real binaries, a real daemon on a temp `JUDGED_HOME`, real files.
//!
//! Integration tests live in `tests/tests/`; this crate gives them the binaries (built
//! once per test run with the same profile) and a daemon guard that stops the daemon
//! when the test ends, pass or fail.

pub mod hosts;
pub mod live;
pub mod timestamps;
pub mod verifiers;

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Run `judge-hook ARGS` with `stdin` as its input, against the daemon of `home`.
pub fn judge_hook(home: &Path, stdin: &[u8], args: &[&str]) -> Output {
    let mut child = Command::new(bin("judge-hook"))
        .args(args)
        .env("JUDGED_HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("judge-hook runs");
    child.stdin.take().expect("piped").write_all(stdin).expect("stdin written");
    child.wait_with_output().expect("judge-hook exits")
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// Path of a workspace binary (`judged`, `judge-evidence`, `judge-hook`), built on first
/// use so `cargo test` alone is enough.
pub fn bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    let dir = BUILT.get_or_init(|| {
        let profile_dir = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent()?.parent().map(Path::to_path_buf))
            .expect("test binary lives in target/<profile>/deps");
        let release = profile_dir.file_name().is_some_and(|n| n == "release");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args(["build", "--quiet", "-p", "judged", "-p", "judge-evidence", "-p", "judge-hook"])
            .current_dir(workspace());
        if release {
            build.arg("--release");
        }
        let status = build.status().expect("cargo build runs");
        assert!(status.success(), "building the workspace binaries failed");
        profile_dir
    });
    dir.join(name)
}

/// A directory with the binaries, to put first on a host's PATH.
pub fn bin_dir() -> PathBuf {
    bin("judged").parent().expect("binary has a directory").to_path_buf()
}

/// A running `judged start --foreground` on its own `JUDGED_HOME`; stopped on drop. Its
/// log (stderr) goes to a file, not among cargo's output where its `WARN` lines read as
/// failures; a test that fails with a daemon shows the log's last lines.
pub struct Daemon {
    pub home: PathBuf,
    log: PathBuf,
    child: Child,
}

/// The most lines of a daemon's log a failed test shows.
const LOG_TAIL_LINES: usize = 40;

impl Daemon {
    /// Start this build's daemon watching the given roots and wait until its socket
    /// answers; it logs to `<home>.log`, beside its home in the test's temp dir.
    pub fn start(home: &Path, copilot_roots: &[&Path], claude_roots: &[&Path]) -> Daemon {
        let mut log = home.as_os_str().to_owned();
        log.push(".log");
        Daemon::spawn(&bin("judged"), home, copilot_roots, claude_roots, Path::new(&log), Duration::from_secs(30))
    }

    /// Start `judged` (any build) with its log appended to `log`, and wait up to
    /// `deadline` until its socket answers; it catches up with every log before it listens.
    pub fn spawn(
        judged: &Path,
        home: &Path,
        copilot_roots: &[&Path],
        claude_roots: &[&Path],
        log: &Path,
        deadline: Duration,
    ) -> Daemon {
        if let Some(dir) = log.parent() {
            std::fs::create_dir_all(dir).expect("the log's directory");
        }
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", log.display()));
        let mut command = Command::new(judged);
        command.args(["start", "--foreground"]).env("JUDGED_HOME", home).env("JUDGED_LOG", "warn");
        for root in copilot_roots {
            command.arg("--copilot-root").arg(root);
        }
        for root in claude_roots {
            command.arg("--claude-root").arg(root);
        }
        let child = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(stderr).spawn().expect("judged starts");
        let mut daemon = Daemon { home: home.to_path_buf(), log: log.to_path_buf(), child };
        let deadline = Instant::now() + deadline;
        while daemon.call("status", Value::Null).is_err() {
            if let Ok(Some(status)) = daemon.child.try_wait() {
                panic!("judged exited during start: {status}");
            }
            assert!(Instant::now() < deadline, "judged did not answer in time");
            std::thread::sleep(Duration::from_millis(2));
        }
        daemon
    }

    /// Where its log (stderr) goes.
    pub fn log(&self) -> &Path {
        &self.log
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn socket(&self) -> PathBuf {
        self.home.join("judged.sock")
    }

    /// One request over the real socket, named as the wire spells it, its reply as JSON.
    pub fn call(&self, op: &str, args: Value) -> Result<Value, judged_protocol::ClientError> {
        judged_protocol::call(&self.socket(), request(op, args), Duration::from_secs(60))
    }

    /// Stop the daemon and wait for it to exit.
    pub fn stop(self) {
        drop(self); // `Drop` shuts it down
    }

    fn shutdown(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return; // already stopped (and reaped): nothing to signal
        }
        if self.call("shutdown", Value::Null).is_err() {
            // The socket is gone (its directory removed first?): SIGTERM stops it cleanly too.
            let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The typed request `op` with `args`, as a client would build it from the wire's
/// spelling (panics on one the protocol does not define: a test's typo).
pub fn request(op: &str, args: Value) -> judged_protocol::Request {
    serde_json::from_value(serde_json::json!({"op": op, "args": args}))
        .unwrap_or_else(|error| panic!("`{op}` with {args} is no request: {error}"))
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.shutdown();
        if std::thread::panicking() {
            // Captured with the test's output, which the harness shows for a failed test.
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            match &lines[lines.len().saturating_sub(LOG_TAIL_LINES)..] {
                [] => eprintln!("judged's log ({}) is empty", self.log.display()),
                tail => eprintln!("judged's log ({}), its last lines:\n{}", self.log.display(), tail.join("\n")),
            }
        }
    }
}

/// `judged start --foreground` on `home` watching the given roots, not yet spawned: for
/// tests that must act before the socket answers (kill it during catch-up, see it refuse
/// to start) and so cannot use [`Daemon::start`].
pub fn judged_foreground(home: &Path, copilot_roots: &[&Path], claude_roots: &[&Path]) -> Command {
    let mut command = Command::new(bin("judged"));
    command.args(["start", "--foreground"]).env("JUDGED_HOME", home).env("JUDGED_LOG", "warn");
    for root in copilot_roots {
        command.arg("--copilot-root").arg(root);
    }
    for root in claude_roots {
        command.arg("--claude-root").arg(root);
    }
    command.stdin(Stdio::null()).stdout(Stdio::null());
    command
}

/// `status` over the socket of `home`, if something answers there within `timeout`.
pub fn status_at(home: &Path, timeout: Duration) -> Option<Value> {
    judged_protocol::call(&home.join("judged.sock"), judged_protocol::Request::Status, timeout).ok()
}

/// SIGKILL `pid` (no chance to clean up: what a crash or the OOM killer does).
pub fn kill_9(pid: u32) {
    let status = Command::new("kill").args(["-9", &pid.to_string()]).status().expect("kill runs");
    assert!(status.success(), "kill -9 {pid} failed");
}

/// Every file under `dir` (none when it cannot be read).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let entries = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path());
    entries.flat_map(|path| if path.is_dir() { files_under(&path) } else { vec![path] }).collect()
}

/// Print the conventional `SKIP: reason` for a test the machine cannot run, or fail when
/// `CI` is set and `ci_must_have` says CI has to provide what is missing. Returns so the
/// caller can `return` right after.
pub fn skip(ci_must_have: bool, reason: &str) {
    assert!(!(ci_must_have && std::env::var_os("CI").is_some()), "CI must be able to run this: {reason}");
    eprintln!("SKIP: {reason}");
}

/// Probe every 50 ms until `probe` yields, failing after `limit` with what was awaited.
pub fn eventually<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Daemon {
    /// The first witnessed session of `host` (`codex-cli`, `gemini-cli`, …), as `sessions`
    /// lists it.
    pub fn session_of(&self, host: &str) -> Option<Value> {
        let sessions = self.call("sessions", Value::Null).expect("sessions");
        sessions.as_array().expect("sessions is an array").iter().find(|s| s["host"] == host).cloned()
    }
}

/// A Claude Code transcript of session `session` in `cwd` holding one root answer by
/// `model`, at `<projects>/<dir>/<session>.jsonl`: a session judged witnesses, whose work
/// `model` wrote. Its path.
pub fn claude_session_by(projects: &Path, dir: &str, session: &str, cwd: &Path, model: &str) -> PathBuf {
    let transcript = projects.join(dir).join(format!("{session}.jsonl"));
    std::fs::create_dir_all(transcript.parent().expect("a directory")).expect("transcript dir");
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    let record = serde_json::json!({"type": "assistant", "uuid": "a1", "parentUuid": null, "isSidechain": false,
        "sessionId": session, "cwd": cwd, "timestamp": now,
        "message": {"role": "assistant", "model": model, "content": [{"type": "text", "text": "Done."}]}});
    std::fs::write(&transcript, format!("{record}\n")).expect("transcript written");
    transcript
}

/// A `command` juror's command line, as TOML: a script of `fixtures/jurors/` and its
/// arguments.
pub fn juror(script: &str, args: &[&str]) -> String {
    let path = workspace().join("fixtures/jurors").join(script);
    let argv: Vec<String> =
        std::iter::once(path.display().to_string()).chain(args.iter().map(ToString::to_string)).collect();
    serde_json::to_string(&argv).expect("an argv serializes")
}

/// A `[jury]` of two stage-1 `command` jurors, each `(name, model, command, extra lines)`,
/// and the tiebreaker `big` (claude-sonnet-4.6, a third family) running `tiebreaker`.
pub fn command_jury(stage_1: [(&str, &str, String, &str); 2], tiebreaker: String, deadline_seconds: u64) -> String {
    let mut text = format!(
        "[jury]\nstage_1 = [\"{}\", \"{}\"]\ntiebreaker = \"big\"\ndeadline_seconds = {deadline_seconds}\n",
        stage_1[0].0, stage_1[1].0
    );
    let tiebreaker = ("big", "claude-sonnet-4.6", tiebreaker, "");
    for (name, model, command, extra) in stage_1.into_iter().chain([tiebreaker]) {
        text.push_str(&format!(
            "\n[[jury.jurors]]\nname = \"{name}\"\npreset = \"command\"\nmodel = \"{model}\"\ncommand = {command}\n{extra}\n"
        ));
    }
    text
}
