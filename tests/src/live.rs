//! A real host's log made live: a fixture with every timestamp moved to now (relative
//! spacing kept) and the fixture's cwd replaced by a temp project dir, written in two
//! steps as the host writes it: up to the `challenge` call first, and the rest (reviewer
//! lifecycle included) after the challenge, with the challenge's real nonce in place of
//! the stand-in nonce the fixture was recorded with. Then `judge-evidence` over it.

use crate::timestamps::shift_timestamps;
use crate::{Daemon, bin, workspace};
use serde_json::{Map, Value};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use tempfile::TempDir;

/// The binding the fixtures' marker calls carry.
pub const BINDING: &str = "run_20261130_a1b2c3d4_r1_review_7e91c4ab";
/// The nonce of the stand-in `judge-evidence` the fixtures were recorded with.
pub const STAND_IN_NONCE: &str = "kX3v9Qm2LrT8wYb5NcJ7dHf1ZsA6uEoP";

/// `haystack` (UTF-8) with every `from` replaced by `to`.
pub fn replace_all(haystack: &[u8], from: &str, to: &str) -> Vec<u8> {
    String::from_utf8(haystack.to_vec()).expect("fixture is UTF-8").replace(from, to).into_bytes()
}

/// Where `judge-evidence` decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Direct,
    Daemon,
    Auto,
}

/// Both modes that decide, the daemon first.
pub const BOTH: [Mode; 2] = [Mode::Daemon, Mode::Direct];

impl Mode {
    /// The `--mode` value.
    pub fn flag(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Daemon => "daemon",
            Mode::Auto => "auto",
        }
    }
}

/// One finished `judge-evidence` run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Stdout, as the one JSON value it holds.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }

    /// The `{"status": "error", …}` line on stderr.
    pub fn error(&self) -> Value {
        let line = self.stderr.lines().last().unwrap_or_default();
        serde_json::from_str(line).unwrap_or_else(|e| panic!("stderr does not end in JSON ({e}): {self:?}"))
    }

    /// Fail unless it exited with `code`.
    pub fn expect_code(&self, code: i32, what: &str) -> &Run {
        assert_eq!(self.code, code, "{what}: {self:?}");
        self
    }
}

/// A Copilot CLI fixture's session id (its `session.start`'s), and where the line that
/// holds the stand-in nonce starts: the log up to there is written first, the rest once
/// the real nonce is known.
pub fn session_and_split(text: &[u8]) -> (String, usize) {
    let at = text.windows(13).position(|w| w == b"\"sessionId\":\"").expect("session.start names its id") + 13;
    let session_id = String::from_utf8(text[at..at + 36].to_vec()).unwrap();
    let nonce_at = text.windows(32).position(|w| w == STAND_IN_NONCE.as_bytes()).expect("stand-in nonce");
    (session_id, text[..nonce_at].iter().rposition(|&b| b == b'\n').unwrap() + 1)
}

/// A temp path as text.
pub fn p(path: &Path) -> &str {
    path.to_str().expect("temp paths are UTF-8")
}

/// The JSON object a file holds.
pub fn read_json(path: &Path) -> Map<String, Value> {
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(map)) => map,
        other => panic!("{} is not a JSON object: {other:?}", path.display()),
    }
}

/// A fixture session made live under a temp dir, with a `JUDGED_HOME` of its own.
pub struct Live {
    pub tmp: TempDir,
    /// Its `JUDGED_HOME` (`auto_start = false`).
    pub home: PathBuf,
    /// The session's working directory (`<tmp>/project`, empty).
    pub project: PathBuf,
    /// The session root: `--session-root`, and the daemon's root for this host.
    pub root: PathBuf,
    claude: bool,
    /// The host's log.
    pub log: PathBuf,
    /// The host's id of the session.
    pub session_id: String,
    /// The lines from the `challenge` call's completion on, not yet written.
    rest: Vec<u8>,
}

impl Live {
    /// A Copilot CLI scenario under `<tmp>/copilot/session-state/<session id>/events.jsonl`.
    pub fn copilot(scenario: &str) -> Live {
        Live::copilot_aged(scenario, chrono::Duration::seconds(2))
    }

    /// As [`Live::copilot`], with the session starting `age` ago.
    pub fn copilot_aged(scenario: &str, age: chrono::Duration) -> Live {
        let fixture = format!("fixtures/copilot-1.0.102/{scenario}/events.jsonl");
        Live::build(&fixture, &format!("/tmp/judged-fixture/copilot/{scenario}/project"), false, age)
    }

    /// The Claude Code marker-challenge transcript under `<tmp>/claude/projects/<dir>/<session id>.jsonl`.
    pub fn claude() -> Live {
        let fixture = "fixtures/claude-code-2.1.328/marker-challenge/70e11cfc-c3fb-426c-9dfc-374e15ffb0af.jsonl";
        Live::build(fixture, "/tmp/judged-fixture/claude/marker-challenge/project", true, chrono::Duration::seconds(2))
    }

    fn build(fixture: &str, fixture_cwd: &str, claude: bool, age: chrono::Duration) -> Live {
        let _ = bin("judge-evidence"); // build before the clock starts
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().join("project");
        fs::create_dir_all(&project).unwrap();
        fs::create_dir_all(tmp.path().join("out")).unwrap();
        let fixture = fs::read(workspace().join(fixture)).unwrap();
        let text = shift_timestamps(&replace_all(&fixture, fixture_cwd, p(&project)), age);
        let (session_id, split) = session_and_split(&text);
        let (root, log) = if claude {
            let root = tmp.path().join("claude/projects");
            (root.clone(), root.join("-project").join(format!("{session_id}.jsonl")))
        } else {
            let root = tmp.path().join("copilot/session-state");
            (root.clone(), root.join(&session_id).join("events.jsonl"))
        };
        fs::create_dir_all(log.parent().unwrap()).unwrap();
        fs::write(&log, &text[..split]).unwrap();
        // The no-daemon paths are tested as such: nothing starts a daemon behind them.
        let home = tmp.path().join("home");
        fs::create_dir_all(&home).unwrap();
        fs::write(home.join("config.toml"), "auto_start = false\n").unwrap();
        Live { home, project, root, claude, log, session_id, rest: text[split..].to_vec(), tmp }
    }

    /// A daemon watching this session's root (and an empty root for the other host).
    pub fn start_daemon(&self) -> Daemon {
        let (copilot, claude) = if self.claude {
            (self.tmp.path().join("copilot/session-state"), self.root.clone())
        } else {
            (self.root.clone(), self.tmp.path().join("claude/projects"))
        };
        Daemon::start(&self.home, &[&copilot], &[&claude])
    }

    /// Write the rest of the host's log, as if the reviewer was given `nonce`.
    pub fn finish(&self, nonce: &str) {
        append(&self.log, &replace_all(&self.rest, STAND_IN_NONCE, nonce));
    }

    /// `challenge` in daemon mode, then the rest of the host's log with its nonce.
    pub fn challenge_and_review(&self, challenge: &Path) {
        self.challenge(Mode::Daemon, challenge, &[]).expect_code(0, "challenge");
        self.finish(read_json(challenge)["nonce"].as_str().unwrap());
    }

    /// A daemon over a Copilot CLI scenario whose review round has been verified in daemon
    /// mode, and the evidence's path.
    pub fn verified_in_daemon_mode(scenario: &str) -> (Live, Daemon, PathBuf) {
        let live = Live::copilot(scenario);
        let daemon = live.start_daemon();
        let challenge = live.out("challenge.json");
        live.challenge_and_review(&challenge);
        let (evidence, response) = (live.out("e.json"), live.out("r.md"));
        live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]).expect_code(0, "verify");
        (live, daemon, evidence)
    }

    /// A file of `<tmp>/out`, outside the project.
    pub fn out(&self, name: &str) -> PathBuf {
        self.tmp.path().join("out").join(name)
    }

    /// `judge-evidence --mode MODE ARGS` in `<tmp>`, with this `JUDGED_HOME`.
    pub fn judge(&self, mode: Mode, args: &[&str]) -> Run {
        self.judge_in(self.tmp.path(), mode, args)
    }

    /// As [`Live::judge`], run in `dir`.
    pub fn judge_in(&self, dir: &Path, mode: Mode, args: &[&str]) -> Run {
        let output = Command::new(bin("judge-evidence"))
            .arg("--mode")
            .arg(mode.flag())
            .args(args)
            .env("JUDGED_HOME", &self.home)
            .env_remove("JUDGE_EVIDENCE_MODE")
            .current_dir(dir)
            .output()
            .expect("judge-evidence runs");
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("output is UTF-8");
        Run { code: output.status.code().expect("exited"), stdout: text(output.stdout), stderr: text(output.stderr) }
    }

    /// `challenge` for this session. Unless `extra` says otherwise the marker may be up
    /// to 600 s old, so a slow machine cannot turn a decision test into a timing test.
    pub fn challenge(&self, mode: Mode, output: &Path, extra: &[&str]) -> Run {
        let args = ["challenge", "--output", p(output), "--binding", BINDING, "--cwd", p(&self.project)];
        let mut args = [&args[..], &["--session-root", p(&self.root), "--wait-seconds", "0"], extra].concat();
        if !extra.contains(&"--max-age-seconds") {
            args.extend(["--max-age-seconds", "600"]);
        }
        self.judge(mode, &args)
    }

    pub fn verify(&self, mode: Mode, challenge: &Path, evidence: &Path, response: &Path, extra: &[&str]) -> Run {
        let args = ["verify", "--challenge", p(challenge), "--output", p(evidence), "--response-output", p(response)];
        self.judge(mode, &[&args[..], &["--wait-seconds", "0"], extra].concat())
    }

    pub fn validate(&self, mode: Mode, evidence: &Path) -> Run {
        self.judge(mode, &["validate", "--evidence", p(evidence)])
    }

    pub fn validate_challenge(&self, mode: Mode, challenge: &Path) -> Run {
        self.judge(mode, &["validate-challenge", "--challenge", p(challenge)])
    }
}

/// Append `bytes` to the file at `path`, as a host appends to its log.
pub fn append(path: &Path, bytes: &[u8]) {
    fs::OpenOptions::new().append(true).open(path).and_then(|mut f| f.write_all(bytes)).expect("append to log");
}
