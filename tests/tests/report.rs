//! `judged report` (issue 15): after a blocked task, one the jury passed (`panel`, with
//! `command` jurors from `fixtures/jurors/`) and one allowed on verified evidence (a live
//! copy of the real Copilot CLI `cross-family-ok` log, challenged and verified through the
//! daemon), the report lists each with its reason and what stood behind each allow, as
//! text and as one self-contained HTML file that headless Chromium renders.

use judged_tests::timestamps::shift_timestamps;
use judged_tests::{Daemon, bin, judge_hook, skip, workspace};
use serde_json::{Value, json};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BINDING: &str = "run_20261130_a1b2c3d4_r1_review_7e91c4ab";
/// The nonce of the stand-in `judge-evidence` the fixtures were recorded with.
const STAND_IN_NONCE: &str = "kX3v9Qm2LrT8wYb5NcJ7dHf1ZsA6uEoP";
const FIXTURE_CWD: &str = "/tmp/judged-fixture/copilot/cross-family-ok/project";

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git").arg("-C").arg(dir).args(args).status().expect("git runs");
    assert!(status.success(), "git {args:?}");
}

fn canned(verdict: &str, confidence: &str) -> String {
    let path = workspace().join("fixtures/jurors/canned.sh");
    serde_json::to_string(&[path.display().to_string(), verdict.into(), confidence.into(), "{model}".into()]).unwrap()
}

fn jury() -> String {
    let mut text = "[jury]\nstage_1 = [\"small-openai\", \"small-google\"]\ntiebreaker = \"big\"\n".to_owned();
    for (name, model, confidence) in [
        ("small-openai", "gpt-5.4-mini", "90"),
        ("small-google", "gemini-3-flash", "85"),
        ("big", "claude-sonnet-4.6", "95"),
    ] {
        text.push_str(&format!(
            "\n[[jury.jurors]]\nname = \"{name}\"\npreset = \"command\"\nmodel = \"{model}\"\ncommand = {}\n",
            canned("pass", confidence)
        ));
    }
    text
}

fn hook(home: &Path, payload: &Value) -> Output {
    judge_hook(home, payload.to_string().as_bytes(), &[])
}

fn task(cwd: &Path, session: &str, id: &str, subject: &str) -> Value {
    json!({"session_id": session, "cwd": cwd, "hook_event_name": "TaskCompleted", "task_id": id,
        "task_subject": subject, "task_description": "Totals must round half-even"})
}

fn evidence_cli(home: &Path, cwd: &Path, args: &[&str]) -> Output {
    let output = Command::new(bin("judge-evidence"))
        .args(["--mode", "daemon"])
        .args(args)
        .env("JUDGED_HOME", home)
        .env_remove("JUDGE_EVIDENCE_MODE")
        .current_dir(cwd)
        .output()
        .expect("judge-evidence runs");
    assert!(output.status.success(), "judge-evidence {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Three projects and their decisions: blocked (evidence policy, no review), allowed by
/// the jury (panel policy), allowed on verified evidence.
struct Decided {
    home: PathBuf,
    blocked: PathBuf,
    jury: PathBuf,
    reviewed: PathBuf,
    out: PathBuf,
    _daemon: Daemon,
    _tmp: tempfile::TempDir,
}

fn decide() -> Decided {
    let _ = bin("judged"); // build before any clock starts
    let tmp = tempfile::tempdir().unwrap();
    let (home, out) = (tmp.path().join("home"), tmp.path().join("out"));
    let (blocked, jury_project, reviewed) =
        (tmp.path().join("blocked"), tmp.path().join("jury <b>&</b>"), tmp.path().join("reviewed"));
    for dir in [&home, &out, &blocked, &jury_project, &reviewed] {
        fs::create_dir_all(dir).unwrap();
    }
    // The jury's project sets its own gate: its user trusts it to.
    let config = format!("auto_start = false\n[gate]\ntrust_project_files = true\n\n{}", jury());
    fs::write(home.join("config.toml"), config).unwrap();
    // The jury's project: a git repository gated by the panel.
    git(&jury_project, &["init", "-q"]);
    fs::write(jury_project.join("cart.rs"), "fn total() -> u32 { 1 }\n").unwrap();
    git(&jury_project, &["add", "."]);
    git(&jury_project, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"]);
    fs::write(jury_project.join(".judged.toml"), "[gate]\npolicy = \"panel\"\n").unwrap();
    fs::write(jury_project.join("cart.rs"), "fn total() -> u32 { round_half_even(1) }\n").unwrap();

    // The reviewed project: a live copy of the real Copilot CLI log, up to the challenge.
    let fixture = fs::read(workspace().join("fixtures/copilot-1.0.102/cross-family-ok/events.jsonl")).unwrap();
    let text = String::from_utf8(fixture).unwrap().replace(FIXTURE_CWD, reviewed.to_str().unwrap());
    let text = shift_timestamps(text.as_bytes(), chrono::Duration::seconds(2));
    let session_id = {
        let at = text.windows(13).position(|w| w == b"\"sessionId\":\"").expect("session id") + 13;
        String::from_utf8(text[at..at + 36].to_vec()).unwrap()
    };
    let split = {
        let nonce_at = text.windows(32).position(|w| w == STAND_IN_NONCE.as_bytes()).expect("stand-in nonce");
        text[..nonce_at].iter().rposition(|&b| b == b'\n').unwrap() + 1
    };
    let root = tmp.path().join("copilot/session-state");
    let log = root.join(&session_id).join("events.jsonl");
    fs::create_dir_all(log.parent().unwrap()).unwrap();
    fs::write(&log, &text[..split]).unwrap();
    let claude = tmp.path().join("claude/projects");
    fs::create_dir_all(&claude).unwrap();
    // The session the jury's task completes in, witnessed: the gate knows who wrote its work.
    judged_tests::claude_session_by(&claude, "-jury", "session-jury", &jury_project, "qwen3-coder-plus");
    let daemon = Daemon::start(&home, &[&root], &[&claude]);

    // 1. Blocked: the default `evidence` policy, and no review.
    let output = hook(&home, &task(&blocked, "session-blocked", "1", "Ship the <script>alert(1)</script> fix"));
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    // 2. Allowed by the jury.
    let output = hook(&home, &task(&jury_project, "session-jury", "2", "Fix cart rounding"));
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    // 3. Allowed on verified evidence: challenge, the review with its nonce, verify.
    let challenge = out.join("r1.challenge.json");
    let c = challenge.to_str().unwrap();
    let cwd = reviewed.to_str().unwrap();
    let r = root.to_str().unwrap();
    let args = ["challenge", "--output", c, "--binding", BINDING, "--cwd", cwd, "--session-root", r];
    evidence_cli(&home, &out, &[&args[..], &["--wait-seconds", "0", "--max-age-seconds", "600"]].concat());
    let nonce =
        serde_json::from_slice::<Value>(&fs::read(&challenge).unwrap()).unwrap()["nonce"].as_str().unwrap().to_owned();
    let rest = String::from_utf8(text[split..].to_vec()).unwrap().replace(STAND_IN_NONCE, &nonce);
    append(&log, &rest);
    let (e, resp) = (out.join("r1.evidence.json"), out.join("r1.response.md"));
    let args =
        ["verify", "--challenge", c, "--output", e.to_str().unwrap(), "--response-output", resp.to_str().unwrap()];
    evidence_cli(&home, &out, &[&args[..], &["--wait-seconds", "0"]].concat());
    let output = hook(&home, &task(&reviewed, &session_id, "3", "Fix the cart"));
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    Decided { home, blocked, jury: jury_project, reviewed, out, _daemon: daemon, _tmp: tmp }
}

fn report(d: &Decided, args: &[&str]) -> String {
    let output = Command::new(bin("judged")).arg("report").args(args).env("JUDGED_HOME", &d.home).output().unwrap();
    assert!(output.status.success(), "judged report {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

#[test]
fn the_report_lists_each_decision_with_its_reason_and_what_stood_behind_it() {
    let d = decide();
    let text = report(&d, &["--since", "1h"]);
    assert!(text.contains("3 decision(s)") && text.contains("2 allowed, 1 blocked"), "{text}");
    // Grouped by project, then session.
    for project in [&d.blocked, &d.jury, &d.reviewed] {
        assert!(text.contains(&format!("project {}", project.display())), "{project:?} in:\n{text}");
    }
    assert!(text.contains("session session-jury (claude-code)"), "{text}");
    // The block, and why.
    assert!(text.contains("BLOCK") && text.contains("reason: no fresh positive evidence"), "{text}");
    assert!(text.contains("no verified cross-family review of this work"), "{text}");
    // The jury behind the panel allow: each juror, asked and answered, and its identity source.
    assert!(text.contains("reason: jury pass"), "{text}");
    assert!(text.contains("jury pass: confidence"), "{text}");
    assert!(text.contains("stage_1 small-openai (openai): asked gpt-5.4-mini, answered gpt-5.4-mini"), "{text}");
    assert!(text.contains("identity: command_verdict"), "{text}");
    // The review behind the evidence allow: reviewer and executor with their families,
    // where the identity was read, the witness.
    assert!(text.contains("reason: fresh positive evidence"), "{text}");
    let evidence: Value = serde_json::from_slice(&fs::read(d.out.join("r1.evidence.json")).unwrap()).unwrap();
    let id = evidence["evidence_id"].as_str().unwrap();
    assert!(text.contains(&format!("review {id}: gpt-5.4 (openai) reviewed claude-sonnet-4.6 (anthropic)")), "{text}");
    assert!(text.contains("identity host-recorded, from the copilot-cli session log"), "{text}");
    assert!(text.contains(&format!("witness {}", evidence["witness"].as_str().unwrap())), "{text}");
    // The same as data, and nothing before a later start.
    let data: Value = serde_json::from_str(&report(&d, &["--json"])).unwrap();
    let decisions = data["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 3);
    assert_eq!(decisions[1]["jury"]["jurors"].as_array().map(Vec::len), Some(2));
    assert_eq!(decisions[2]["review"]["reviewer_family"], "openai");
    assert_eq!(decisions[2]["review"]["identity_assurance"], "host-recorded");
    // The decision names its evidence by a field of its own, not only in its words.
    assert_eq!(decisions[2]["decision"]["evidence_id"], id);
    let later = report(&d, &["--since", "2999-01-01T00:00:00Z"]);
    assert!(later.contains("0 decision(s)"), "{later}");
}

#[test]
fn the_html_report_is_self_contained_escaped_and_renders() {
    let d = decide();
    let file = d.out.join("report.html");
    report(&d, &["--since", "7d", "--html", file.to_str().unwrap()]);
    let html = fs::read_to_string(&file).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    for wanted in
        ["Timeline", "<svg", "BLOCK", "ALLOW", "no fresh positive evidence", "jury pass", "small-google", "gpt-5.4"]
    {
        assert!(html.contains(wanted), "{wanted} in the HTML");
    }
    assert!(html.contains(&d.reviewed.display().to_string()));
    // No network: no URL, no external script, style or font.
    for banned in ["http://", "https://", "<script", "<link", "@import", "src="] {
        assert!(!html.contains(banned), "{banned} in the HTML");
    }
    // What the journal holds is text: escaped, never markup.
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the task subject is escaped");
    assert!(html.contains("jury &lt;b&gt;&amp;&lt;/b&gt;"), "the project path is escaped");
    assert!(!html.contains("<b>&</b>"));

    let Some(chromium) = find_chromium() else {
        // Installing Chromium in CI is not robust (it is large and distribution-specific): skip there too.
        return skip(false, "no chromium on PATH to render the HTML report (apt-get install chromium)");
    };
    let profile = d.out.join("chromium-profile");
    let output = Command::new(&chromium)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", file.display()))
        .stdin(Stdio::null())
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success() && !dom.is_empty(), "chromium: {}", String::from_utf8_lossy(&output.stderr));
    // The rendered document holds the table's rows, with no script of the journal's run.
    assert!(dom.contains("<table>") && dom.contains("class=\"verdict block\""), "{dom}");
    assert!(dom.contains("small-openai") && dom.contains("<circle"), "{dom}");
    assert!(!dom.contains("<script>alert"), "{dom}");
}

/// A Claude Code root record of `session` in `cwd`, chained after `parent`.
fn claude_record(session: &str, cwd: &Path, uuid: &str, parent: &str, kind: &str, message: Value) -> String {
    let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    let record = json!({"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": false, "sessionId": session,
        "cwd": cwd, "timestamp": now, "message": message});
    record.to_string() + "\n"
}

/// A task marked completed through `TaskUpdate`: the call, and the host's result (an
/// error when the completion was refused); the result's uuid.
fn completed(session: &str, cwd: &Path, task: &str, after: &str, refused: bool) -> (String, String) {
    let call = ToolCall {
        name: "TaskUpdate",
        input: json!({"taskId": task, "status": "completed"}),
        id: format!("task-{task}"),
    };
    call.with_result(session, cwd, after, json!({"is_error": refused, "content": format!("task #{task}")}))
}

/// A root tool call of Claude Code's.
struct ToolCall {
    name: &'static str,
    input: Value,
    /// What its records' uuids and the tool use id are made of.
    id: String,
}

impl ToolCall {
    /// The call, chained after `after`, and the host's result with `outcome`'s fields
    /// (`content`, `is_error`); the result's uuid.
    fn with_result(&self, session: &str, cwd: &Path, after: &str, outcome: Value) -> (String, String) {
        let (call, result, tool) =
            (format!("call-{}", self.id), format!("result-{}", self.id), format!("toolu_{}", self.id));
        let mut block = json!({"type": "tool_result", "tool_use_id": tool});
        block.as_object_mut().unwrap().extend(outcome.as_object().unwrap().clone());
        let text =
            claude_record(
                session,
                cwd,
                &call,
                after,
                "assistant",
                json!({"role": "assistant", "model": "claude-sonnet-4-6",
                "content": [{"type": "tool_use", "id": tool, "name": self.name, "input": self.input}]}),
            ) + &claude_record(session, cwd, &result, &call, "user", json!({"role": "user", "content": [block]}));
        (text, result)
    }
}

/// A home, the hosts' roots, and two projects: one whose gate will be armed, one off.
struct Projects {
    dir: PathBuf,
    home: PathBuf,
    claude: PathBuf,
    copilot: PathBuf,
    armed: PathBuf,
    off: PathBuf,
}

fn projects() -> (tempfile::TempDir, Projects) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = fs::canonicalize(tmp.path()).unwrap();
    let (home, claude, copilot) = (dir.join("home"), dir.join("claude"), dir.join("copilot"));
    let (armed, off) = (dir.join("armed"), dir.join("off"));
    for d in [&home, &claude, &copilot, &armed, &off] {
        fs::create_dir_all(d).unwrap();
    }
    (tmp, Projects { dir, home, claude, copilot, armed, off })
}

/// Every completion on the record: in a project whose gate is armed for `TaskCompleted`,
/// a task the transcript shows completed with a decision that allowed it is not a bypass;
/// one no decision allowed (its hook never asked) is, counted by `judged status` and listed
/// by `judged report` in its own section. A completion the host refused is none, and a
/// project whose gate is off has none.
#[test]
fn a_task_completed_without_the_gate_allowing_it_is_journaled_as_a_bypass() {
    let (_tmp, Projects { dir, home, claude, copilot, armed, off }) = projects();
    let notified = dir.join("notified.jsonl");
    let on_bypass =
        serde_json::to_string(&["sh", "-c", &format!("cat >> {}; echo >> {0}", notified.display())]).unwrap();
    fs::write(
        home.join("config.toml"),
        format!("auto_start = false\n[gate]\ntrust_project_files = true\non_bypass = {on_bypass}\n"),
    )
    .unwrap();
    // Short tasks are let through at once: a decision that allows, with the gate armed.
    fs::write(armed.join(".judged.toml"), "[gate]\nmin_task_chars = 1000\n").unwrap();
    fs::write(off.join(".judged.toml"), "[gate]\npolicy = \"off\"\n").unwrap();
    let daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    let session = "0b5e7f6a-1111-4c2d-9e8f-000000000001";
    let log = transcript(&claude, &armed, session);
    // Task 1, whose words the log shows (a skip answers only such a task's completion).
    let (made, last) = created(session, &armed, "1", ("Fix the cart", "Totals must round half-even"), "u-0");
    append(&log, &made);
    let output = hook(&home, &task(&armed, session, "1", "Fix the cart"));
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let (allowed, last) = completed(session, &armed, "1", &last, false);
    append(&log, &allowed);
    let (bypassing, last) = completed(session, &armed, "2", &last, false);
    append(&log, &bypassing);
    // A completion the host refused (a blocking hook) did not happen.
    append(&log, &completed(session, &armed, "3", &last, true).0);
    let quiet = "0b5e7f6a-1111-4c2d-9e8f-000000000002";
    let off_log = transcript(&claude, &off, quiet);
    append(&off_log, &completed(quiet, &off, "7", "u-0", false).0);

    daemon.call("sessions", Value::Null).unwrap();
    let status = daemon.call("status", Value::Null).unwrap();
    assert_eq!(status["completions_bypassed"], 1, "{status}");
    // `[gate] on_bypass` heard of it, with the record on its stdin.
    let told = judged_tests::eventually("[gate] on_bypass to run", std::time::Duration::from_secs(10), || {
        fs::read_to_string(&notified).ok().filter(|text| text.ends_with('\n'))
    });
    let told: Vec<Value> = told.lines().map(|line| serde_json::from_str(line).expect("the bypass as JSON")).collect();
    assert_eq!(told.len(), 1, "{told:?}");
    assert_eq!((&told[0]["task_id"], &told[0]["event"]), (&json!("2"), &json!("TaskCompleted")));
    // doctor says so, with where to look.
    let doctor = Command::new(bin("judged")).args(["doctor", "--json"]).env("JUDGED_HOME", &home).output().unwrap();
    let checks: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let bypasses = checks["checks"].as_array().unwrap().iter().find(|c| c["name"] == "bypasses").cloned().unwrap();
    assert_eq!(bypasses["status"], "warn", "{bypasses}");
    assert!(bypasses["detail"].as_str().unwrap().starts_with("1 completion(s) went without the gate"), "{bypasses}");
    assert!(bypasses["fix"].as_str().unwrap().contains("`judged report` lists each"), "{bypasses}");
    let output = Command::new(bin("judged")).args(["report", "--json"]).env("JUDGED_HOME", &home).output().unwrap();
    let data: Value = serde_json::from_slice(&output.stdout).unwrap();
    let bypassed = data["bypassed"].as_array().unwrap();
    assert_eq!(bypassed.len(), 1, "{data}");
    assert_eq!((&bypassed[0]["task_id"], &bypassed[0]["session_id"]), (&json!("2"), &json!(session)));
    assert_eq!(bypassed[0]["path"], json!(log));
    let output = Command::new(bin("judged")).arg("report").env("JUDGED_HOME", &home).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    let section = text.split("completions without the gate allowing them\n").nth(1).expect("its own section");
    assert!(section.contains(&format!("session {session} task 2 in {}", armed.display())), "{text}");
    assert!(
        section.contains("why: no decision of the gate allowed it: the hook did not run, or its answer was not heeded"),
        "{text}"
    );
}

/// A daemon killed between a `TaskUpdate` call and its result (a crash, an upgrade, a
/// reboot) takes the call up when it starts again, so the completion no decision allowed,
/// whose result the host wrote meanwhile, is a bypass all the same. The call was known only
/// in the memory of the daemon that read it: this completion went unrecorded.
#[test]
fn a_completion_under_way_when_the_daemon_dies_is_still_on_the_record() {
    let (_tmp, Projects { home, claude, copilot, armed, .. }) = projects();
    fs::write(home.join("config.toml"), "auto_start = false\n").unwrap();
    let session = "0b5e7f6a-1111-4c2d-9e8f-000000000003";
    let daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    let log = transcript(&claude, &armed, session);
    // The call, then (written once the daemon is back) its result.
    let split = |update: &str| update.split_at(update.find('\n').unwrap() + 1).1.to_owned();
    let (update, _) = completed(session, &armed, "1", "u-0", false);
    append(&log, update.strip_suffix(&split(&update)).unwrap());
    daemon.call("sessions", Value::Null).unwrap();
    judged_tests::kill_9(daemon.pid());
    drop(daemon);

    let daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    append(&log, &split(&completed(session, &armed, "1", "u-0", false).0));
    assert_eq!(bypassed(&daemon), 1);
}

/// The Claude Code transcript of `session` in `project` under the `claude` root, begun with
/// the user's prompt (uuid `u-0`); its path.
fn transcript(claude: &Path, project: &Path, session: &str) -> PathBuf {
    let dir = claude.join(project.to_string_lossy().replace('/', "-"));
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{session}.jsonl"));
    fs::write(&path, opening_record(session, project, "Fix the cart")).unwrap();
    path
}

/// The user's first prompt of a Claude Code session, `opening`, as the client writes it.
fn opening_record(session: &str, project: &Path, opening: &str) -> String {
    claude_record(session, project, "u-0", "", "user", json!({"role": "user", "content": opening}))
        .replace("\"parentUuid\":\"\"", "\"parentUuid\":null")
}

/// A Claude Code session of `project` whose opening prompt is `opening`, then its task 1
/// completed with no gate asked, written at once (a log the daemon read before a rewrite
/// would be a rewritten log).
fn opened_with_then_completed(claude: &Path, project: &Path, session: &str, opening: &str) {
    let dir = claude.join(project.to_string_lossy().replace('/', "-"));
    fs::create_dir_all(&dir).unwrap();
    let (done, _) = completed(session, project, "1", "u-0", false);
    fs::write(dir.join(format!("{session}.jsonl")), opening_record(session, project, opening) + &done).unwrap();
}

/// The completions on the record as bypasses, once the daemon has caught up with the logs.
fn bypassed(daemon: &Daemon) -> u64 {
    daemon.call("sessions", Value::Null).unwrap();
    let status = daemon.call("status", Value::Null).unwrap();
    status["completions_bypassed"].as_u64().unwrap_or_else(|| panic!("no count: {status}"))
}

/// `text` appended to the log at `path`, as the host writes it.
fn append(path: &Path, text: &str) {
    fs::OpenOptions::new().append(true).open(path).unwrap().write_all(text.as_bytes()).unwrap();
}

/// A task created through `TaskCreate`, and the host's result, which names its id; the
/// result's uuid.
fn created(session: &str, cwd: &Path, task: &str, words: (&str, &str), after: &str) -> (String, String) {
    let (subject, description) = words;
    let input = json!({"subject": subject, "description": description});
    let call = ToolCall { name: "TaskCreate", input, id: format!("create-{task}") };
    call.with_result(session, cwd, after, json!({"content": format!("Task #{task} created successfully: {subject}")}))
}

/// A Qwen Code answer nothing followed is an end once its quiet time passed; a daemon
/// started again takes up what the log's ends waited for, and finds that end once more:
/// it is on the record once, however often the daemon starts (each start recorded it again).
#[test]
fn an_end_found_again_after_a_restart_is_recorded_once() {
    let (_tmp, Projects { dir, home, claude, copilot, armed, .. }) = projects();
    let qwen = dir.join("qwen");
    let config = format!("auto_start = false\nqwen_roots = [{qwen:?}]\n[gate]\nanswer_quiet_seconds = 1\n");
    fs::write(home.join("config.toml"), config).unwrap();
    let daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    // Something on the record first: ends from before judged kept one are not counted.
    hook(&home, &task(&armed, "0b5e7f6a-1111-4c2d-9e8f-000000000009", "1", "Seed the journal"));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let session = "90000000-0000-0000-0000-000000000001";
    let chats = qwen.join(armed.to_string_lossy().replace('/', "-")).join("chats");
    fs::create_dir_all(&chats).unwrap();
    let record = |uuid: &str, parent: Option<&str>, kind: &str, role: &str, text: &str| {
        let now = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
        json!({"uuid": uuid, "parentUuid": parent, "sessionId": session, "timestamp": now, "type": kind,
            "cwd": armed, "version": "0.24.4", "message": {"role": role, "parts": [{"text": text}]}})
        .to_string()
            + "\n"
    };
    let log = chats.join(format!("{session}.jsonl"));
    let text = record("q-1", None, "user", "user", "Rewrite payments")
        + &record("q-2", Some("q-1"), "assistant", "model", "Done.");
    fs::write(&log, text).unwrap();
    let bypassed = |daemon: &Daemon| {
        judged_tests::eventually("the answer to settle", std::time::Duration::from_secs(20), || {
            daemon.call("sessions", Value::Null).unwrap();
            let status = daemon.call("status", Value::Null).unwrap();
            status["completions_bypassed"].as_u64().filter(|n| *n > 0)
        })
    };
    assert_eq!(bypassed(&daemon), 1);
    let mut daemon = Some(daemon);
    for _ in 0..2 {
        daemon.take().expect("running").stop();
        let restarted = Daemon::start(&home, &[&copilot], &[&claude]);
        std::thread::sleep(std::time::Duration::from_millis(3000));
        assert_eq!(bypassed(&restarted), 1, "recorded once");
        daemon = Some(restarted);
    }
}

/// Under `min_task_chars`, an agent whose hook is gone cannot cover a task's completion
/// with a skip it asked for itself under the task's id with short words, however often it
/// asks: its log shows the task's own words (its `TaskCreate`), which are not short. Nor
/// does an allow asked long before the task's update (an earlier completion's) answer it:
/// the host runs the hook between the update's call and its result. A task whose own words
/// are short, asked about then, is still skipped. The three got through before.
#[test]
fn a_skip_asked_for_with_other_words_than_the_tasks_does_not_cover_its_completion() {
    let (_tmp, Projects { home, claude, copilot, armed, .. }) = projects();
    fs::write(home.join("config.toml"), "auto_start = false\n[gate]\nmin_task_chars = 100\n").unwrap();
    let daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    let session = "0b5e7f6a-1111-4c2d-9e8f-000000000004";
    let log = transcript(&claude, &armed, session);
    let long =
        "Move card payments to the new provider, with retries, idempotency keys and refunds, and keep the old path.";
    let short = ("Fix typo", "Totals must round half-even");
    let (big, last) = created(session, &armed, "1", ("Rewrite the payment flow", long), "u-0");
    let (small, last) = created(session, &armed, "2", short, &last);
    let (early, last) = created(session, &armed, "3", short, &last);
    append(&log, &format!("{big}{small}{early}"));
    daemon.call("sessions", Value::Null).unwrap();

    // The forged questions: task 1's id, short words of its own, asked twice (the second
    // time it is answered from the record of the first).
    for _ in 0..2 {
        let forged = hook(&home, &task(&armed, session, "1", "x"));
        assert_eq!(forged.status.code(), Some(0), "skipped: {}", String::from_utf8_lossy(&forged.stderr));
    }
    assert_eq!(hook(&home, &task(&armed, session, "3", "Fix typo")).status.code(), Some(0));
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // Task 2 as the host completes it: the update's call, its hook, the result.
    let (update, last) = completed(session, &armed, "2", &last, false);
    let (call, result) = update.split_at(update.find('\n').unwrap() + 1);
    append(&log, call);
    assert_eq!(hook(&home, &task(&armed, session, "2", "Fix typo")).status.code(), Some(0));
    append(&log, result);
    let (first, last) = completed(session, &armed, "1", &last, false);
    let (third, _) = completed(session, &armed, "3", &last, false);
    append(&log, &format!("{first}{third}"));
    daemon.call("sessions", Value::Null).unwrap();
    let output = Command::new(bin("judged")).args(["report", "--json"]).env("JUDGED_HOME", &home).output().unwrap();
    let data: Value = serde_json::from_slice(&output.stdout).unwrap();
    let mut bypassed: Vec<&str> =
        data["bypassed"].as_array().unwrap().iter().map(|b| b["task_id"].as_str().unwrap()).collect();
    bypassed.sort_unstable();
    assert_eq!(bypassed, ["1", "3"], "{data}");
}

/// An agent with its hook removed cannot cover a completion with an allow it asked for
/// itself: one for its task as a sub-agent's stop (let through at once), or one asked with
/// the cwd of another project whose gate is off. Neither answered the end its transcript
/// records in the armed project: both are bypasses. Nor does the armed project named by
/// way of the other (`off/../armed`) get the other's gate.
#[test]
fn an_allow_the_agent_asked_for_elsewhere_or_as_a_sub_agent_does_not_cover_its_completion() {
    let (_tmp, Projects { home, claude, copilot, armed, off, .. }) = projects();
    // The other project's gate is off as its user lets it be.
    fs::write(home.join("config.toml"), "auto_start = false\n[gate]\ntrust_project_files = true\n").unwrap();
    fs::write(off.join(".judged.toml"), "[gate]\npolicy = \"off\"\n").unwrap();
    let daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    let session = "0b5e7f6a-1111-4c2d-9e8f-000000000003";
    let log = transcript(&claude, &armed, session);
    let mut as_sub_agent = task(&armed, session, "4", "Fix the cart");
    as_sub_agent["parentAgentId"] = json!("x");
    assert_eq!(hook(&home, &as_sub_agent).status.code(), Some(0));
    assert_eq!(hook(&home, &task(&off, session, "5", "Fix the cart")).status.code(), Some(0));
    // The armed project named by way of the one whose gate is off: its gate is the armed one.
    let by_way_of_off = off.join("..").join(armed.file_name().unwrap());
    assert_eq!(hook(&home, &task(&by_way_of_off, session, "6", "Fix the cart")).status.code(), Some(2));
    let (fourth, last) = completed(session, &armed, "4", "u-0", false);
    let (fifth, last) = completed(session, &armed, "5", &last, false);
    let (sixth, _) = completed(session, &armed, "6", &last, false);
    append(&log, &(fourth + &fifth + &sixth));
    assert_eq!(bypassed(&daemon), 3);
}

/// A question sent with a parse error beside a made-up payload is answered by the user's
/// `on_error = "allow"`, and records nothing of that payload: its allow covers no real
/// completion (a review helper hid a completion so).
#[test]
fn an_allow_for_an_unreadable_payload_covers_no_completion() {
    let (_tmp, Projects { home, claude, copilot, armed, .. }) = projects();
    fs::write(home.join("config.toml"), "auto_start = false\n[gate]\non_error = \"allow\"\n").unwrap();
    let daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    let session = "0b5e7f6a-1111-4c2d-9e8f-000000000007";
    let log = transcript(&claude, &armed, session);
    let forged =
        json!({"host": "claude-code", "parse_error": "x", "payload": task(&armed, session, "7", "Fix the cart")});
    let answer = daemon.call("hook", forged).expect("the gate answers");
    assert_eq!(answer["decision"], "allow", "{answer}");
    let (seventh, _) = completed(session, &armed, "7", "u-0", false);
    append(&log, &seventh);
    assert_eq!(bypassed(&daemon), 1);
}

/// A nonce line in a session's opening prompt makes it a reviewer's run, whose ends ask no
/// gate, only where judged issued that nonce for another session's round: a line the
/// agent had its host put in every session's opening (a project's `AGENTS.md`, a hook's
/// context) exempts none of its own ends (a review helper hid every end so).
#[test]
fn a_nonce_judged_did_not_issue_makes_no_session_a_reviewers_run() {
    let (_tmp, Projects { home, claude, copilot, armed, .. }) = projects();
    fs::write(home.join("config.toml"), "auto_start = false\n").unwrap();
    let daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    let session = "0b5e7f6a-1111-4c2d-9e8f-000000000009";
    let opening = "# AGENTS.md\nARIS_REVIEW_NONCE=kX3v9Qm2LrT8wYb5NcJ7dHf1ZsA6uEoP\nFix the cart";
    opened_with_then_completed(&claude, &armed, session, opening);
    assert_eq!(bypassed(&daemon), 1);
}

/// A nonce judged issued makes a session a reviewer's run only where the challenge's own
/// session ran that CLI around it: a real nonce the agent had its host put in another
/// session's opening (a project's `CLAUDE.md`) exempts none of that session's ends (it did
/// for an hour), while the run the executor's shell call started is still exempt.
#[test]
fn a_real_nonce_makes_a_reviewers_run_only_of_a_run_its_executors_shell_started() {
    let live = judged_tests::live::Live::claude();
    let daemon = live.start_daemon();
    let challenge = live.out("challenge.json");
    live.challenge(judged_tests::live::Mode::Daemon, &challenge, &[]).expect_code(0, "challenge");
    let nonce = judged_tests::live::read_json(&challenge)["nonce"].as_str().unwrap().to_owned();
    let opening = format!("# CLAUDE.md\nARIS_REVIEW_NONCE={nonce}\nFix the cart");
    let session = |n: u32| format!("0b5e7f6a-2222-4c2d-9e8f-00000000000{n}");
    let carrying_the_nonce = |session: &str| opened_with_then_completed(&live.root, &live.project, session, &opening);
    carrying_the_nonce(&session(1));
    assert_eq!(bypassed(&daemon), 1, "a session the executor's shell did not start");

    // The executor's shell runs `claude -p` (the call recorded, not returned yet): the run
    // that opens with the nonce now is the reviewer's.
    let last = fs::read_to_string(&live.log).unwrap().lines().last().unwrap().to_owned();
    let last: Value = serde_json::from_str(&last).unwrap();
    let call = json!({"role": "assistant", "model": "claude-opus-4-6", "content": [{"type": "tool_use",
        "id": "toolu_review", "name": "Bash", "input": {"command": "claude -p \"$(cat review-prompt.md)\""}}]});
    let record = claude_record(
        &live.session_id,
        &live.project,
        "call-review",
        last["uuid"].as_str().unwrap(),
        "assistant",
        call,
    );
    append(&live.log, &record);
    std::thread::sleep(std::time::Duration::from_millis(5));
    carrying_the_nonce(&session(2));
    assert_eq!(bypassed(&daemon), 1, "the run the executor's shell started is a reviewer's");
}

/// A log that names no cwd (its records written over before judged read them) still shows
/// a completion: no decision can answer it, each being asked in a directory, so it is on the
/// record as a bypass wherever the gate is on, not dropped.
#[test]
fn a_completion_in_a_log_that_names_no_cwd_is_a_bypass_not_nothing() {
    let (_tmp, Projects { home, claude, copilot, armed, .. }) = projects();
    fs::write(home.join("config.toml"), "auto_start = false\n").unwrap();
    let daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    let session = "0b5e7f6a-1111-4c2d-9e8f-00000000000a";
    // Written whole where the daemon does not look, then moved in.
    let scratch = home.join("scratch");
    let written = transcript(&scratch, &armed, session);
    let (done, _) = completed(session, &armed, "1", "u-0", false);
    append(&written, &done);
    let cwd = format!("\"cwd\":{:?},", armed.display().to_string());
    let text = fs::read_to_string(&written).unwrap().replace(&cwd, "");
    assert!(!text.contains("\"cwd\""), "{text}");
    fs::write(&written, text).unwrap();
    let log = claude.join(written.strip_prefix(&scratch).unwrap());
    fs::create_dir_all(log.parent().unwrap()).unwrap();
    fs::rename(&written, &log).unwrap();
    assert_eq!(bypassed(&daemon), 1);
    let output = Command::new(bin("judged")).arg("report").env("JUDGED_HOME", &home).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("task 1 in unknown ("), "{text}");
}

/// The report names a task by the subject the gate recorded, not by cutting it out of the
/// message again: a subject with quotes in it is shown whole.
#[test]
fn a_task_subject_with_quotes_is_reported_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, project) = (tmp.path().join("home"), tmp.path().join("project"));
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&project).unwrap();
    fs::write(home.join("config.toml"), "auto_start = false\n").unwrap();
    let (copilot, claude) = (tmp.path().join("copilot"), tmp.path().join("claude"));
    let _daemon = Daemon::start(&home, &[&copilot], &[&claude]);
    let output = hook(&home, &task(&project, "session-q", "9", r#"Say "hi" on start"#));
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stderr));
    let output = Command::new(bin("judged")).arg("report").env("JUDGED_HOME", &home).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains(r#"task 9 "Say "hi" on start""#), "{text}");
}
