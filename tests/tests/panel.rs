//! The jury run by the daemon (issue 12): `judge-evidence panel`, and the gate's `panel`
//! and `evidence_or_panel` policies, with `preset = "command"` jurors from
//! `fixtures/jurors/` standing in for the CLIs (the real CLIs are in `real_jurors.rs`).

use judged_tests::{Daemon, bin, claude_session_by, command_jury, judge_hook, juror, workspace};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A `[jury]` with two stage-1 command jurors of two families and a third-family
/// tiebreaker who passes; each juror line is `(name, model, command, extra)`.
fn jury_toml(stage_1: [(&str, &str, String, &str); 2], deadline_seconds: u64) -> String {
    command_jury(stage_1, juror("canned.sh", &["pass", "95", "{model}"]), deadline_seconds)
}

/// Two agreeing, confident jurors of two families.
fn passing_jury(record: &Path) -> String {
    let recorded = format!("env = {{ JURY_RECORD = \"{}\" }}", record.display());
    jury_toml(
        [
            ("small-openai", "gpt-5.4-mini", juror("canned.sh", &["pass", "90", "{model}"]), &recorded),
            ("small-google", "gemini-3-flash", juror("canned.sh", &["pass", "85", "{model}"]), ""),
        ],
        30,
    )
}

/// Fields drop in order: the daemon stops before its home directory is removed.
struct Setup {
    daemon: Daemon,
    home: PathBuf,
    project: PathBuf,
    dir: tempfile::TempDir,
}

/// A daemon whose config.toml holds `config`, and a git repository as the project.
fn setup(config: &str) -> Setup {
    let dir = tempfile::tempdir().expect("temp dir");
    let (home, project) = (dir.path().join("home"), dir.path().join("project"));
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), config).unwrap();
    git(&project, &["init", "-q"]);
    std::fs::write(project.join("cart.rs"), "fn total() -> u32 { 1 }\n").unwrap();
    git(&project, &["add", "."]);
    git(&project, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
    // The session the tests' tasks complete in, witnessed, so the gate knows who wrote the
    // work: a model of a family none of the tests' jurors is of, so none is left out.
    claude_session_by(&dir.path().join("claude"), "-project", SESSION, &project, "qwen3-coder-plus");
    let daemon = Daemon::start(&home, &[&dir.path().join("sessions")], &[&dir.path().join("claude")]);
    Setup { daemon, home, project, dir }
}

/// The session of the tests' tasks ([`setup`] writes its transcript).
const SESSION: &str = "5d1c2b3a-7e8f-4a90-b1c2-d3e4f5a6b7c8";

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git").arg("-C").arg(dir).args(args).status().expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn evidence(home: &Path, args: &[&str]) -> Output {
    Command::new(bin("judge-evidence")).args(args).env("JUDGED_HOME", home).output().expect("judge-evidence runs")
}

fn panel(s: &Setup, artifact: &str) -> Output {
    let file = s.dir.path().join("artifact.md");
    std::fs::write(&file, artifact).unwrap();
    let cwd = s.project.to_str().unwrap();
    evidence(
        &s.home,
        &["panel", "--rubric", "spec-coherence", "--artifact-file", file.to_str().unwrap(), "--cwd", cwd, "--json"],
    )
}

fn journal_events(daemon: &Daemon) -> u64 {
    daemon.call("status", Value::Null).expect("status")["journal_events"].as_u64().unwrap()
}

fn task_completed(cwd: &Path, subject: &str) -> Value {
    json!({
        "session_id": SESSION, "cwd": cwd, "hook_event_name": "TaskCompleted",
        "task_id": "7", "task_subject": subject, "task_description": "Totals must round half-even",
    })
}

fn hook(home: &Path, payload: &Value) -> Output {
    judge_hook(home, payload.to_string().as_bytes(), &[])
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn decisions(daemon: &Daemon) -> Vec<Value> {
    daemon.call("decisions", Value::Null).expect("decisions").as_array().cloned().unwrap_or_default()
}

#[test]
fn panel_through_the_daemon_prints_the_packet_and_journals_every_juror() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup(&passing_jury(&dir.path().join("prompt")));
    let before = journal_events(&s.daemon);
    let output = panel(&s, "The cart totals round half-even now.");
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let packet: Value = serde_json::from_slice(&output.stdout).expect("the packet is JSON");
    assert_eq!(
        (packet["final_verdict"].as_str(), packet["cross_family"]["degraded"].as_bool()),
        (Some("pass"), Some(false))
    );
    assert_eq!(packet["version"], "judged-jury/1");
    let jurors = packet["cascade"]["stage_1_small_fish"].as_array().unwrap();
    assert_eq!(jurors.len(), 2);
    assert_eq!(
        (jurors[0]["model_requested"].as_str(), jurors[0]["model_reported"].as_str()),
        (Some("gpt-5.4-mini"), Some("gpt-5.4-mini"))
    );
    // The reference's key order is kept: `version` first, `cascade` before `final_verdict`.
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.starts_with("{\"version\":") && text.find("\"cascade\"") < text.find("\"final_verdict\""), "{text}");
    // Two juror runs and the packet, in the journal.
    assert_eq!(journal_events(&s.daemon) - before, 3);
    // The juror ran in the project and read the artifact on stdin.
    let prompt = std::fs::read_to_string(dir.path().join("prompt")).unwrap();
    assert!(prompt.contains("The cart totals round half-even now."), "{prompt}");
    let cwd = std::fs::read_to_string(dir.path().join("prompt.cwd")).unwrap();
    assert_eq!(Path::new(cwd.trim()).canonicalize().unwrap(), s.project.canonicalize().unwrap());
}

#[test]
fn a_bad_rubric_or_a_missing_jury_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup(&passing_jury(&dir.path().join("prompt")));
    let file = s.dir.path().join("a.md");
    std::fs::write(&file, "x").unwrap();
    let output = evidence(&s.home, &["panel", "--rubric", "vibes", "--artifact-file", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("--rubric must be one of: hallucination, flattery, spec-coherence"), "{message}");
    let bare = setup("");
    let output =
        evidence(&bare.home, &["panel", "--rubric", "spec-coherence", "--artifact-file", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no [jury] is configured"), "{}", stderr(&output));
}

/// A jury of a minute must not stop the daemon answering anything else meanwhile.
#[test]
fn the_daemon_answers_while_a_jury_sits() {
    let slow = jury_toml(
        [
            ("slow-openai", "gpt-5.4-mini", juror("sleep.sh", &[]), ""),
            ("slow-google", "gemini-3-flash", juror("sleep.sh", &[]), ""),
        ],
        4,
    );
    let s = setup(&slow);
    let sitting = std::thread::scope(|scope| {
        let jury = scope.spawn(|| panel(&s, "anything"));
        // Wait until the jurors have started: the panel is on its way.
        let started = std::time::Instant::now();
        while journal_events(&s.daemon) == 0 && started.elapsed() < std::time::Duration::from_secs(1) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let status = s.daemon.call("status", Value::Null);
        let sessions = s.daemon.call("sessions", Value::Null);
        let still_sitting = !jury.is_finished();
        let output = jury.join().unwrap();
        (status.is_ok() && sessions.is_ok(), still_sitting, output)
    });
    let (answered, still_sitting, output) = sitting;
    assert!(answered, "status and sessions answered");
    assert!(still_sitting, "they were answered while the jury sat");
    let packet: Value = serde_json::from_slice(&output.stdout).expect("the packet is JSON");
    assert_eq!(packet["final_verdict"], "error", "both jurors cut short: {packet}");
    let cut: Vec<&str> = packet["cut_short"].as_array().unwrap().iter().map(|c| c["juror"].as_str().unwrap()).collect();
    assert_eq!(cut, ["slow-openai", "slow-google", "big"], "the tiebreaker had no time left to start");
}

/// Work the agent committed during its session is shown to the jury: the changes are from
/// the commit the session began on, as judged read it when the session's log first named
/// its cwd, not from HEAD (a jury shown only a README fix left uncommitted passed a commit
/// of anything).
#[test]
fn work_committed_during_the_session_is_shown_to_the_jury() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("prompt");
    let s = setup(&format!("[gate]\npolicy = \"panel\"\n\n{}", passing_jury(&record)));
    // The daemon has read the session's log, which named the project at its first commit.
    s.daemon.call("sessions", Value::Null).expect("sessions");
    std::fs::write(s.project.join("cart.rs"), "fn total() -> u32 { skip_the_checks() }\n").unwrap();
    git(&s.project, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "wip"]);
    std::fs::write(s.project.join("README.md"), "A cart.\n").unwrap();
    let output = hook(&s.home, &task_completed(&s.project, "Fix a typo in the README"));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let prompt = std::fs::read_to_string(&record).unwrap();
    for shown in ["+fn total() -> u32 { skip_the_checks() }", "README.md (untracked)"] {
        assert!(prompt.contains(shown), "`{shown}` not in the jury's prompt: {prompt}");
    }
    // Asked from a directory of the repository below where the session began (`cd src`).
    std::fs::remove_file(&record).unwrap();
    std::fs::create_dir_all(s.project.join("src")).unwrap();
    let output = hook(&s.home, &task_completed(&s.project.join("src"), "Fix another typo in the README"));
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let prompt = std::fs::read_to_string(&record).unwrap();
    assert!(prompt.contains("skip_the_checks()"), "asked from below: {prompt}");
}

/// A write the watcher cannot hear (through a hard link from outside the repository) is a
/// new tree all the same: the gate reads the tree again before it answers, so the jury is
/// asked about it rather than its pass of the tree before reused (it was).
#[test]
fn a_write_through_a_hard_link_from_outside_is_judged_again() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("prompt");
    let s = setup(&format!("[gate]\npolicy = \"panel\"\n\n{}", passing_jury(&record)));
    std::fs::write(s.project.join("cart.rs"), "fn total() -> u32 { 2 }\n").unwrap();
    let payload = task_completed(&s.project, "Fix cart rounding");
    assert_eq!(hook(&s.home, &payload).status.code(), Some(0));
    let outside = dir.path().join("outside.rs");
    std::fs::hard_link(s.project.join("cart.rs"), &outside).unwrap();
    std::fs::remove_file(&record).unwrap();
    std::fs::write(&outside, "fn total() -> u32 { skip_the_checks() }\n").unwrap();
    assert_eq!(hook(&s.home, &payload).status.code(), Some(0));
    let prompt = std::fs::read_to_string(&record).expect("the jury was asked about the new tree");
    assert!(prompt.contains("skip_the_checks()"), "{prompt}");
}

/// A session whose log names no model yet when its hook runs (a host writes its records a
/// moment after): the shim asks again for a while, and the jury is seated once the log is
/// there (it was blocked at once).
#[test]
fn a_session_whose_log_comes_a_moment_later_is_asked_about_again() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup(&format!("[gate]\npolicy = \"panel\"\n\n{}", passing_jury(&dir.path().join("prompt"))));
    let late = "5d1c2b3a-7e8f-4a90-b1c2-00000000000d";
    let (claude, project) = (s.dir.path().join("claude"), s.project.clone());
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(600));
        claude_session_by(&claude, "-late", late, &project, "qwen3-coder-plus");
    });
    let mut payload = task_completed(&s.project, "Fix cart rounding");
    payload["session_id"] = late.into();
    let output = hook(&s.home, &payload);
    writer.join().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

#[test]
fn the_gate_asks_the_jury_about_the_work_and_reuses_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("prompt");
    let s = setup(&format!("[gate]\npolicy = \"panel\"\n\n{}", passing_jury(&record)));
    std::fs::write(s.project.join("cart.rs"), "fn total() -> u32 { round_half_even(1) }\n").unwrap();
    std::fs::write(s.project.join("rounding.rs"), "fn round_half_even() {}\n").unwrap();
    let payload = task_completed(&s.project, "Fix cart rounding");
    let output = hook(&s.home, &payload);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // The jury judged the work: the task and the tree's changes, untracked files included.
    let prompt = std::fs::read_to_string(&record).unwrap();
    for shown in [
        "task \"Fix cart rounding\"",
        "Totals must round half-even",
        "+fn total() -> u32 { round_half_even(1) }",
        "rounding.rs (untracked)",
    ] {
        assert!(prompt.contains(shown), "`{shown}` not in the jury's prompt: {prompt}");
    }
    let recorded = decisions(&s.daemon);
    assert_eq!((recorded[0]["decision"].as_str(), recorded[0]["reason"].as_str()), (Some("allow"), Some("jury pass")));
    assert!(recorded[0]["panel"].is_string());
    // The same task on the same tree: answered without a jury.
    std::fs::remove_file(&record).unwrap();
    let again = hook(&s.home, &payload);
    assert_eq!(again.status.code(), Some(0));
    assert!(!record.exists(), "no juror ran again");
    // A changed tree is judged again.
    std::fs::write(s.project.join("rounding.rs"), "fn round_half_even() { todo!() }\n").unwrap();
    let changed = hook(&s.home, &payload);
    assert_eq!(changed.status.code(), Some(0));
    assert!(record.exists(), "the jury saw the new tree");
    // Another task about the same work on the same tree: the verdict is reused.
    std::fs::remove_file(&record).unwrap();
    let mut another = payload.clone();
    another["task_id"] = json!("8");
    assert_eq!(hook(&s.home, &another).status.code(), Some(0));
    assert!(!record.exists(), "no juror ran for the same work");
    // A file in a directory that did not exist is a new tree too.
    std::fs::create_dir_all(s.project.join("src/new")).unwrap();
    std::fs::write(s.project.join("src/new/tax.rs"), "fn tax() {}\n").unwrap();
    let mut third = payload.clone();
    third["task_id"] = json!("9");
    assert_eq!(hook(&s.home, &third).status.code(), Some(0));
    assert!(record.exists(), "the jury saw the new directory's file");
    let prompt = std::fs::read_to_string(&record).unwrap();
    assert!(prompt.contains("src/new/tax.rs (untracked)"), "{prompt}");
    let reasons: Vec<String> = decisions(&s.daemon).iter().map(|d| d["reason"].as_str().unwrap().to_owned()).collect();
    assert_eq!(
        reasons,
        ["jury pass", "answered from the recorded decision", "jury pass", "reused jury verdict", "jury pass"]
    );
}

#[test]
fn a_degraded_jury_blocks_naming_the_lane_that_was_down() {
    // The OpenAI juror's record names a Google model, and the tiebreaker answers nothing:
    // only one family really answered.
    let impostor = command_jury(
        [
            ("small-openai", "gpt-5.4-mini", juror("impostor.sh", &[]), ""),
            ("small-google", "gemini-3-flash", juror("canned.sh", &["pass", "90", "{model}"]), ""),
        ],
        juror("empty.sh", &[]),
        30,
    );
    let s = setup(&format!("[gate]\npolicy = \"panel\"\n\n{impostor}"));
    let output = hook(&s.home, &task_completed(&s.project, "Fix cart rounding"));
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("could not judge it") && message.contains("small-openai"), "{message}");
    let recorded = decisions(&s.daemon);
    assert_eq!(recorded[0]["decision"], "block");
}

#[test]
fn without_evidence_evidence_or_panel_asks_the_jury_and_a_fail_blocks_with_its_flags() {
    let failing = jury_toml(
        [
            (
                "small-openai",
                "gpt-5.4-mini",
                juror("canned.sh", &["fail", "90", "{model}", "rounding is still half-up"]),
                "",
            ),
            ("small-google", "gemini-3-flash", juror("canned.sh", &["fail", "88", "{model}"]), ""),
        ],
        30,
    );
    let s = setup(&format!("[gate]\npolicy = \"evidence_or_panel\"\n\n{failing}"));
    let output = hook(&s.home, &task_completed(&s.project, "Fix cart rounding"));
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("was not passed by the cross-family jury")
            && message.contains("  - rounding is still half-up"),
        "{message}"
    );
    assert_eq!(decisions(&s.daemon)[0]["reason"], "jury did not pass");
}

#[test]
fn install_hooks_gives_the_hook_more_time_than_the_jury() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup(&jury_toml(
        [
            ("small-openai", "gpt-5.4-mini", juror("canned.sh", &["pass", "90", "{model}"]), ""),
            ("small-google", "gemini-3-flash", juror("canned.sh", &["pass", "90", "{model}"]), ""),
        ],
        300,
    ));
    let output = Command::new(bin("judged"))
        .args(["install-hooks", "--claude", "--project"])
        .arg(dir.path())
        .env("JUDGED_HOME", &s.home)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let settings: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join(".claude/settings.json")).unwrap()).unwrap();
    let hook = &settings["hooks"]["TaskCompleted"][0]["hooks"][0];
    assert_eq!(hook["timeout"], 320, "the jury's deadline and a margin");
    assert!(hook["command"].as_str().unwrap().ends_with("--timeout 310"), "{hook}");
}

#[test]
fn a_client_that_asks_for_progress_hears_each_juror_before_the_packet() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup(&passing_jury(&dir.path().join("prompt")));
    let args = judged_protocol::PanelArgs {
        rubric: "spec-coherence".into(),
        rubric_text: None,
        persona: None,
        artifact: "anything".into(),
        cwd: s.project.display().to_string(),
        author_model: None,
        progress: true,
    };
    let mut steps = Vec::new();
    let reply: judged_protocol::PanelReply = judged_protocol::call_with_progress(
        &s.daemon.socket(),
        judged_protocol::Request::Panel(args),
        std::time::Duration::from_secs(60),
        |progress| steps.push(serde_json::to_value(progress.step).unwrap()),
    )
    .expect("the jury answers");
    assert_eq!(reply.final_verdict, judged_jury::packet::FinalVerdict::Pass);
    let started = steps.iter().filter(|s| s.get("started").is_some()).count();
    let finished = steps.iter().filter(|s| s.get("finished").is_some()).count();
    assert_eq!((started, finished), (2, 2), "{steps:?}");
}

/// A Claude Code session wrote the work (its transcript names claude-sonnet-4-6): the
/// tiebreaker may not be a Claude, so when stage 1 splits and the only tiebreaker left is
/// one, no cross-family verdict can be had and the gate blocks.
#[test]
fn the_gate_tells_the_jury_who_wrote_the_work() {
    let split = jury_toml(
        [
            ("small-openai", "gpt-5.4-mini", juror("canned.sh", &["pass", "90", "{model}"]), ""),
            ("small-google", "gemini-3-flash", juror("canned.sh", &["fail", "90", "{model}"]), ""),
        ],
        30,
    );
    let s = setup(&format!("[gate]\npolicy = \"panel\"\n\n{split}"));
    let session = "70e11cfc-c3fb-426c-9dfc-374e15ffb0af";
    let fixture = workspace().join(format!("fixtures/claude-code-2.1.328/marker-challenge/{session}.jsonl"));
    let project = s.dir.path().join("claude/-project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(fixture, project.join(format!("{session}.jsonl"))).unwrap();
    let mut payload = task_completed(&s.project, "Fix cart rounding");
    payload["session_id"] = session.into();
    let output = hook(&s.home, &payload);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let recorded = decisions(&s.daemon);
    assert_eq!(recorded[0]["reason"], "jury degraded", "{recorded:?}");
    // The message carries the packet's cause and the fix that follows from it.
    let message = stderr(&output);
    for said in [
        "no tiebreaker could run: no tiebreaker is cross-family against the author (anthropic)",
        "add a juror of a family other than anthropic and ",
        "to `tiebreaker` in [jury]",
    ] {
        assert!(message.contains(said), "`{said}` not in: {message}");
    }
    assert!(!message.contains("none reported"), "{message}");
    // Without an author on record no jury is seated (the Claude tiebreaker broke the tie of
    // a Claude author's work, and the task passed): the block says why.
    let mut unknown = task_completed(&s.project, "Fix cart rounding");
    unknown["session_id"] = "no-such-session".into();
    let output = hook(&s.home, &unknown);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("judged does not know which model wrote this work"), "{}", stderr(&output));
}

/// A block that came from outside the work is asked again: the juror that was down (its
/// program missing) is installed, nothing else changes, and the same task on the same tree
/// is judged anew instead of being answered from the recorded block.
#[test]
fn a_block_from_a_jury_that_was_down_is_asked_again_once_the_juror_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("bin/judge.sh");
    let argv =
        serde_json::to_string(&[missing.display().to_string(), "pass".into(), "90".into(), "{model}".into()]).unwrap();
    // The tiebreaker's program is the missing one too, so no second family answers.
    let jury = command_jury(
        [
            ("small-openai", "gpt-5.4-mini", argv.clone(), ""),
            ("small-google", "gemini-3-flash", juror("canned.sh", &["pass", "90", "{model}"]), ""),
        ],
        argv,
        30,
    );
    let s = setup(&format!("[gate]\npolicy = \"panel\"\n\n{jury}"));
    let payload = task_completed(&s.project, "Fix cart rounding");
    let down = hook(&s.home, &payload);
    assert_eq!(down.status.code(), Some(2));
    assert!(stderr(&down).contains("small-openai"), "{}", stderr(&down));

    std::fs::create_dir_all(missing.parent().unwrap()).unwrap();
    std::fs::copy(workspace().join("fixtures/jurors/canned.sh"), &missing).unwrap();
    let back = hook(&s.home, &payload);
    assert_eq!(back.status.code(), Some(0), "{}", stderr(&back));
    let reasons: Vec<Value> = decisions(&s.daemon).iter().map(|d| d["reason"].clone()).collect();
    assert_eq!(reasons, ["jury degraded", "jury pass"]);
}

/// The jury is fixed in config.toml while the daemon runs: the next question is judged by
/// the fixed jury, with no restart.
#[test]
fn a_jury_fixed_in_config_toml_judges_the_next_question_without_a_restart() {
    let s = setup("[gate]\npolicy = \"panel\"\n");
    let payload = task_completed(&s.project, "Fix cart rounding");
    let output = hook(&s.home, &payload);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no [jury] is configured"), "{}", stderr(&output));

    let dir = tempfile::tempdir().unwrap();
    let config = format!("[gate]\npolicy = \"panel\"\n\n{}", passing_jury(&dir.path().join("prompt")));
    std::fs::write(s.home.join("config.toml.new"), config).unwrap();
    std::fs::rename(s.home.join("config.toml.new"), s.home.join("config.toml")).unwrap();
    let output = hook(&s.home, &payload);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let panel = panel(&s, "The cart totals round half-even now.");
    assert_eq!(panel.status.code(), Some(0), "`panel` sees the new jury too: {}", stderr(&panel));
}

/// Issue 33: judge-evidence's direct mode reads config.toml with the daemon's one schema,
/// so a key it does not know is refused with the file, the line and the nearest key,
/// as the daemon refuses it, instead of being passed over.
#[test]
fn direct_mode_reads_config_toml_with_the_daemons_schema_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let config = format!("[gate]\npolcy = \"off\"\n\n{}", passing_jury(&dir.path().join("prompt")));
    std::fs::write(home.join("config.toml"), config).unwrap();
    let file = dir.path().join("a.md");
    std::fs::write(&file, "x").unwrap();
    let args = ["--mode", "direct", "panel", "--rubric", "spec-coherence", "--artifact-file", file.to_str().unwrap()];
    let output = evidence(&home, &args);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{message}");
    assert!(message.contains(&home.join("config.toml").display().to_string()), "names the file: {message}");
    assert!(message.contains("unknown field `polcy`") && message.contains("did you mean `policy`?"), "{message}");
    assert!(!dir.path().join("prompt").exists(), "no juror ran");
}

/// A client can ask for juries faster than they answer, and each runs juror processes:
/// judged seats a few juries at once and the others wait their turn, so however many are
/// asked for, only so many jurors run (here two a jury, four juries at once), and every
/// asker still gets its packet.
#[test]
fn juries_asked_for_at_once_sit_a_few_at_a_time_and_all_answer() {
    let dir = tempfile::tempdir().unwrap();
    let seats = dir.path().join("seats");
    std::fs::create_dir_all(&seats).unwrap();
    let counting = |model: &str| {
        let script = format!(
            "cat >/dev/null; mkdir {0}/juror.$$; ls {0} | grep -c juror >> {0}.seen; sleep 1; rmdir {0}/juror.$$; \
             echo '{{\"verdict\":\"pass\",\"confidence\":90,\"flags\":[],\"model\":\"{model}\"}}'",
            seats.display()
        );
        serde_json::to_string(&["sh", "-c", &script]).unwrap()
    };
    let s = setup(&jury_toml(
        [
            ("small-openai", "gpt-5.4-mini", counting("gpt-5.4-mini"), ""),
            ("small-google", "gemini-3-flash", counting("gemini-3-flash"), ""),
        ],
        60,
    ));
    let s = &s;
    let outputs: Vec<Output> = std::thread::scope(|scope| {
        let asked: Vec<_> = (0..8)
            .map(|n| {
                scope.spawn(move || {
                    let file = s.dir.path().join(format!("artifact-{n}.md"));
                    std::fs::write(&file, format!("Change number {n}.")).unwrap();
                    let (file, cwd) = (file.to_str().unwrap().to_owned(), s.project.to_str().unwrap().to_owned());
                    evidence(&s.home, &["panel", "--rubric", "spec-coherence", "--artifact-file", &file, "--cwd", &cwd])
                })
            })
            .collect();
        asked.into_iter().map(|asking| asking.join().unwrap()).collect()
    });
    for output in &outputs {
        assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
    }
    let seen = std::fs::read_to_string(dir.path().join("seats.seen")).unwrap();
    let most = seen.lines().filter_map(|n| n.trim().parse::<u32>().ok()).max().unwrap();
    assert_eq!(seen.lines().count(), 16, "two jurors for each of eight juries: {seen}");
    assert!(most <= 8, "{most} jurors ran at once: {seen}");
}
