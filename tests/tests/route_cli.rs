//! `judge-evidence route` end to end: the real binary, its flags, its output and exit
//! codes, and `--bound-challenge` with a real challenge issued over a live copy of a real
//! Copilot CLI 1.0.102 log (as `evidence_cli.rs` makes them), in direct mode.

use judged_tests::live::session_and_split;
use judged_tests::timestamps::shift_timestamps;
use judged_tests::{bin, workspace};
use serde_json::Value;
use std::fs;
use std::path::PathBuf;
use std::process::Command;
use tempfile::TempDir;

const BINDING: &str = "run_20261130_a1b2c3d4_r1_review_7e91c4ab";
/// The nonce of the stand-in `judge-evidence` the fixtures were recorded with: the log up
/// to its line is what the host had written when `challenge` ran.
const FIXTURE_CWD: &str = "/tmp/judged-fixture/copilot/cross-family-ok/project";

/// One finished `judge-evidence route` run.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }

    /// Exit code, then the decision's `(decision, backend, model, effort, rule)`.
    #[track_caller]
    fn expect(&self, code: i32, want: (&str, Option<&str>, Option<&str>, Option<&str>, &str)) -> Value {
        assert_eq!(self.code, code, "{self:?}");
        let json = self.json();
        let got = (
            json["decision"].as_str().unwrap(),
            json["backend"].as_str(),
            json["model"].as_str(),
            json["effort"].as_str(),
            json["rule"].as_str().unwrap(),
        );
        assert_eq!(got, want, "{self:?}");
        json
    }
}

struct Env {
    tmp: TempDir,
}

impl Env {
    fn new() -> Env {
        let _ = bin("judge-evidence");
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("project")).unwrap();
        Env { tmp }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.path(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    }

    fn judge(&self, args: &[&str]) -> Run {
        let output = Command::new(bin("judge-evidence"))
            .args(["--mode", "direct"])
            .args(args)
            .env("JUDGED_HOME", self.path("home"))
            .env_remove("JUDGE_EVIDENCE_MODE")
            .current_dir(self.tmp.path())
            .output()
            .expect("judge-evidence runs");
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("output is UTF-8");
        Run { code: output.status.code().expect("exited"), stdout: text(output.stdout), stderr: text(output.stderr) }
    }

    fn route(&self, args: &[&str]) -> Run {
        self.judge(&[&["route", "--json"], args].concat())
    }

    /// A live copy of the cross-family-ok Copilot session up to the `challenge` call, with
    /// `executor` as the host-reported executor model, and its challenge (direct mode).
    fn challenge(&self, executor: &str) -> String {
        let fixture = fs::read(workspace().join("fixtures/copilot-1.0.102/cross-family-ok/events.jsonl")).unwrap();
        let text = String::from_utf8(fixture).unwrap();
        let project = self.path("project");
        let text = text.replace(FIXTURE_CWD, project.to_str().unwrap()).replace("claude-sonnet-4.6", executor);
        let text = shift_timestamps(text.as_bytes(), chrono::Duration::seconds(2));
        let (session_id, split) = session_and_split(&text);
        let root = self.path("copilot/session-state");
        let log = root.join(&session_id).join("events.jsonl");
        fs::create_dir_all(log.parent().unwrap()).unwrap();
        fs::write(&log, &text[..split]).unwrap();
        let output = self.path(&format!("{executor}.challenge.json"));
        let run = self.judge(&[
            "challenge",
            "--output",
            output.to_str().unwrap(),
            "--binding",
            BINDING,
            "--cwd",
            project.to_str().unwrap(),
            "--session-root",
            root.to_str().unwrap(),
            "--wait-seconds",
            "0",
            "--max-age-seconds",
            "600",
        ]);
        assert_eq!(run.code, 0, "challenge: {run:?}");
        output.to_str().unwrap().to_owned()
    }
}

fn profile(model: &str) -> String {
    format!("---\nname: reviewer\nmodel: {model}\n---\nReview read-only.\n")
}

#[test]
fn without_a_directive_or_challenge_codex_is_the_default_at_the_skills_tier() {
    let env = Env::new();
    let json = env.route(&[]).expect(0, ("route", Some("codex"), Some("gpt-5.6-sol"), Some("xhigh"), "default-codex"));
    assert_eq!(json["tier"], "regular");
    assert_eq!(json["section"], "Default Routing");
    env.route(&["--skill", "/proof-checker"])
        .expect(0, ("route", Some("codex"), Some("gpt-5.6-sol"), Some("ultra"), "default-codex"));
    env.route(&["--skill", "kill-argument", "--tier", "regular"])
        .expect(0, ("route", Some("codex"), Some("gpt-5.6-sol"), Some("xhigh"), "default-codex"));
}

#[test]
fn text_output_leads_with_the_answer() {
    let env = Env::new();
    let run = env.judge(&["route"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.starts_with("route: codex model gpt-5.6-sol effort xhigh (regular tier)\n"), "{run:?}");
    assert!(run.stdout.contains("rule: default-codex (Default Routing)"), "{run:?}");
    let run = env.judge(&["route", "--reviewer", "manual", "--executor-model", "claude-opus-4.6"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.starts_with("REVIEW_UNAVAILABLE: "), "{run:?}");
    assert!(run.stdout.contains("manual-not-installed"), "{run:?}");
}

#[test]
fn a_bound_copilot_challenge_routes_copilot_native_with_the_host_reported_executor() {
    let env = Env::new();
    let challenge = env.challenge("claude-sonnet-4.6");
    let json = env
        .route(&["--bound-challenge", &challenge, "--executor-model", "gpt-5.4"])
        .expect(0, ("route", Some("copilot-native"), None, None, "native-default"));
    assert_eq!(json["executor_model"], "claude-sonnet-4.6");
    assert_eq!(json["executor_model_source"], "host-session-event");
    assert_eq!(json["executor_family"], "anthropic");
    assert!(json["warning"].as_str().unwrap().contains("not used on the native path"));
    // An explicit directive wins; the challenge is not even read.
    let json = env
        .route(&["--bound-challenge", &challenge, "--reviewer", "codex"])
        .expect(0, ("route", Some("codex"), Some("gpt-5.6-sol"), Some("xhigh"), "explicit-codex"));
    assert!(json["warning"].as_str().unwrap().contains("not consulted"));
}

#[test]
fn a_failed_native_review_falls_back_by_the_challenges_executor_family() {
    let env = Env::new();
    let anthropic = env.challenge("claude-sonnet-4.6");
    let native_failed = ["--attempted", "copilot-native", "--error-class", "native-failure"];
    let json = env
        .route(&[&["--bound-challenge", &anthropic, "--available", "codex"], &native_failed[..]].concat())
        .expect(0, ("route", Some("codex"), Some("gpt-5.6-sol"), Some("xhigh"), "native-fallback-codex"));
    assert_eq!(json["requires_external_acquittal"], true);
    env.route(&[&["--bound-challenge", &anthropic], &native_failed[..]].concat())
        .expect(1, ("REVIEW_UNAVAILABLE", None, None, None, "native-fallback-unavailable"));

    let openai = env.challenge("gpt-5.5");
    env.route(&[&["--bound-challenge", &openai, "--available", "codex"], &native_failed[..]].concat())
        .expect(1, ("REVIEW_UNAVAILABLE", None, None, None, "native-fallback-unavailable"));
    let response = env.write("manual.md", "Reviewer-Model: claude-opus-4.6\nScore: 8/10\nVerdict: ready\n");
    env.route(&[&["--bound-challenge", &openai, "--manual-response", &response], &native_failed[..]].concat())
        .expect(0, ("route", Some("manual"), Some("claude-opus-4.6"), Some("xhigh"), "native-fallback-manual"));
    // Codex attempted as the fallback for an OpenAI executor contradicts the route.
    let run = env.route(&[
        "--bound-challenge",
        &openai,
        "--available",
        "manual",
        "--attempted",
        "codex",
        "--error-class",
        "tool-absent",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn a_challenge_that_does_not_revalidate_is_refused_and_codex_stays_the_default() {
    let env = Env::new();
    let challenge = env.challenge("claude-sonnet-4.6");
    let mut artifact: Value = serde_json::from_str(&fs::read_to_string(&challenge).unwrap()).unwrap();
    artifact["executor_model"] = "gpt-5.4".into();
    artifact["executor_family"] = "openai".into();
    let edited = env.write("edited.challenge.json", &serde_json::to_string_pretty(&artifact).unwrap());
    let json = env
        .route(&["--bound-challenge", &edited])
        .expect(0, ("route", Some("codex"), Some("gpt-5.6-sol"), Some("xhigh"), "challenge-not-bound"));
    assert!(json["warning"].as_str().unwrap().contains("executor model mismatch"), "{json}");
    let missing = env.path("missing.json");
    env.route(&["--bound-challenge", missing.to_str().unwrap()])
        .expect(0, ("route", Some("codex"), Some("gpt-5.6-sol"), Some("xhigh"), "challenge-not-bound"));
    // And a native fallback cannot take its executor from it.
    env.route(&[
        "--bound-challenge",
        &edited,
        "--available",
        "codex",
        "--attempted",
        "copilot-native",
        "--error-class",
        "native-failure",
    ])
    .expect(1, ("REVIEW_UNAVAILABLE", None, None, None, "native-fallback-unvalidated"));
}

#[test]
fn the_copilot_drive_mode_reads_the_opposite_family_profile() {
    let env = Env::new();
    let agents = env.path("agents");
    env.write("agents/aris-reviewer-openai.agent.md", &profile("gpt-5.4"));
    let dir = agents.to_str().unwrap();
    let drive = ["--reviewer", "copilot", "--agents-dir", dir, "--available", "copilot"];
    let json = env
        .route(&[&drive[..], &["--executor-model", "claude-sonnet-4.5"]].concat())
        .expect(0, ("route", Some("copilot"), Some("gpt-5.4"), Some("xhigh"), "copilot-compat"));
    assert_eq!(json["profile"], "aris-reviewer-openai");
    assert_eq!(json["executor_model_source"], "caller-declared");
    // An OpenAI executor needs the claude profile, which does not exist.
    let json = env
        .route(&[&drive[..], &["--executor-model", "gpt-5.4"]].concat())
        .expect(1, ("REVIEW_UNAVAILABLE", None, None, None, "copilot-profile-missing"));
    assert!(json["reason"].as_str().unwrap().contains("aris-reviewer-claude.agent.md"));
    env.write("agents/aris-reviewer-claude.agent.md", "---\nname: reviewer\n---\n");
    env.route(&[&drive[..], &["--executor-model", "gpt-5.4"]].concat())
        .expect(1, ("REVIEW_UNAVAILABLE", None, None, None, "copilot-profile-no-model"));
    env.route(&["--reviewer", "copilot", "--agents-dir", dir, "--executor-model", "mystery"])
        .expect(1, ("REVIEW_UNAVAILABLE", None, None, None, "copilot-executor-unknown"));
    env.route(&["--reviewer", "copilot", "--agents-dir", dir, "--executor-model", "claude-opus-4.6"])
        .expect(1, ("REVIEW_UNAVAILABLE", None, None, None, "copilot-cli-unavailable"));
}

#[test]
fn manual_review_needs_a_reviewer_model_first_line_of_another_family() {
    let env = Env::new();
    let manual = ["--reviewer", "manual", "--executor-model", "claude-opus-4.6"];
    env.route(&[&manual[..], &["--available", "manual"]].concat())
        .expect(0, ("route", Some("manual"), None, Some("xhigh"), "explicit-manual"));
    let cross = env.write("cross.md", "Reviewer-Model: kimi-k2\nScore: 8/10\n");
    env.route(&[&manual[..], &["--manual-response", &cross]].concat())
        .expect(0, ("route", Some("manual"), Some("kimi-k2"), Some("xhigh"), "explicit-manual"));
    let same = env.write("same.md", "Reviewer-Model: claude-sonnet-4.5\nScore: 8/10\n");
    env.route(&[&manual[..], &["--manual-response", &same]].concat())
        .expect(1, ("REVIEW_UNAVAILABLE", None, None, None, "manual-identity-same-family"));
    let missing = env.write("missing.md", "Score: 8/10\nReviewer-Model: gpt-5.5\n");
    env.route(&[&manual[..], &["--manual-response", &missing]].concat())
        .expect(1, ("REVIEW_UNAVAILABLE", None, None, None, "manual-identity-missing"));
    let run = env.route(&[&manual[..], &["--manual-response", env.path("nope.md").to_str().unwrap()]].concat());
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn failed_codex_calls_follow_the_capability_chain_and_never_downgrade() {
    let env = Env::new();
    let deep = ["--skill", "proof-checker", "--executor-model", "claude-opus-4.6"];
    env.route(&[&deep[..], &["--attempted", "gpt-5.6-sol:ultra", "--error-class", "effort-unsupported"]].concat())
        .expect(0, ("route", Some("codex"), Some("gpt-5.6-sol"), Some("xhigh"), "capability-effort"));
    env.route(&[&deep[..], &["--attempted", "gpt-5.6-sol:ultra", "--error-class", "model-unavailable"]].concat())
        .expect(0, ("route", Some("codex"), Some("gpt-5.5"), Some("xhigh"), "capability-model"));
    for class in [
        "timeout",
        "rate-limit",
        "auth",
        "transport",
        "server",
        "sandbox",
        "context-length",
        "malformed-request",
        "parse",
    ] {
        env.route(
            &[&deep[..], &["--available", "llm-chat", "--attempted", "gpt-5.6-sol:ultra", "--error-class", class]]
                .concat(),
        )
        .expect(1, ("REVIEW_UNAVAILABLE", None, None, None, "never-downgrade"));
    }
    env.route(
        &[
            &deep[..],
            &[
                "--available",
                "llm-chat",
                "--attempted",
                "gpt-5.6-sol:ultra",
                "--error-class",
                "auth",
                "--not-dispatched",
            ],
        ]
        .concat(),
    )
    .expect(0, ("route", Some("llm-chat"), None, None, "http-fallback"));
    env.route(
        &[&deep[..], &["--available", "llm-chat", "--attempted", "codex", "--error-class", "tool-absent"]].concat(),
    )
    .expect(0, ("route", Some("llm-chat"), None, None, "http-fallback"));
}

#[test]
fn contradictory_or_malformed_flags_exit_2() {
    let env = Env::new();
    for args in [
        &["--error-class", "timeout"][..],
        &["--attempted", "codex"],
        &["--reviewer", "gemini"],
        &["--available", "copilot-native"],
        &["--tier", "deep-audit"],
        &["--attempted", "gpt-5.6-sol", "--error-class", "timeout"],
        &["--attempted", "gpt-5.4:xhigh", "--error-class", "model-unavailable"],
        &["--attempted", "gpt-5.6-sol:xhigh", "--error-class", "native-failure"],
        &["--reviewer", "codex", "--attempted", "copilot-native", "--error-class", "native-failure"],
    ] {
        let run = env.route(args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {run:?}");
    }
    let run = env.route(&["--tier", "deep-audit"]);
    let error: Value = serde_json::from_str(run.stderr.lines().last().unwrap()).unwrap();
    assert_eq!(error["exit_code"], 2);
    assert!(error["error"].as_str().unwrap().contains("auto-review-loop"));
}

#[test]
fn the_help_documents_the_exit_codes() {
    let env = Env::new();
    let run = env.judge(&["route", "--help"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("Exit codes: 0 routed; 1 REVIEW_UNAVAILABLE"), "{run:?}");
}
