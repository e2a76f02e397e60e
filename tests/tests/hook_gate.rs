//! The real `judge-hook` binary against a real daemon, with real-shaped Claude Code
//! hook payloads (`docs/spec/host-formats.md` §B.5, fixtures/claude-code-2.1.328).

use judged_tests::{Daemon, bin, judge_hook as hook};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Output};

fn task_completed(cwd: &Path, subject: &str) -> Value {
    json!({
        "session_id": "5d1c2b3a-7e8f-4a90-b1c2-d3e4f5a6b7c8",
        "transcript_path": "/nowhere/5d1c2b3a.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": "TaskCompleted",
        "task_id": "7",
        "task_subject": subject,
        "task_description": "Totals must round half-even",
        "teammate_name": "implementer",
        "team_name": "session-5d1c2b3a"
    })
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Fields drop in order: the daemon stops before its home directory is removed.
struct Setup {
    daemon: Option<Daemon>,
    home: std::path::PathBuf,
    project: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

/// A daemon with no sessions and a project dir, optionally with a `.judged.toml`.
fn setup(project_gate: Option<&str>) -> Setup {
    setup_with(project_gate, None)
}

/// As [`setup`], optionally with a `[gate]` in the user's config.toml as well. A project
/// file here sets the gate as it likes, its user trusting it to, unless `user_gate` says
/// how far it trusts it.
fn setup_with(project_gate: Option<&str>, user_gate: Option<&str>) -> Setup {
    let trusted = project_gate.is_some() && !user_gate.is_some_and(|gate| gate.contains("trust_project_files"));
    let trust = if trusted { "trust_project_files = true\n" } else { "" };
    let user = match (user_gate, trust) {
        (None, "") => String::new(),
        (gate, trust) => format!("[gate]\n{trust}{}\n", gate.unwrap_or_default()),
    };
    setup_configured(project_gate.map(|gate| format!("[gate]\n{gate}\n")).as_deref(), &user)
}

/// A daemon whose config.toml holds `user`, and a project whose `.judged.toml` holds
/// `project_file`, when there is one.
fn setup_configured(project_file: Option<&str>, user: &str) -> Setup {
    let dir = tempfile::tempdir().expect("temp dir");
    let (home, project, root) = (dir.path().join("home"), dir.path().join("project"), dir.path().join("sessions"));
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    if let Some(text) = project_file {
        std::fs::write(project.join(".judged.toml"), text).unwrap();
    }
    // The daemon-down paths are tested as such: the hook starts no daemon here (but in
    // `a_hook_with_no_daemon_starts_one`).
    std::fs::write(home.join("config.toml"), format!("auto_start = false\n{user}")).unwrap();
    let daemon = Daemon::start(&home, &[&root], &[]);
    Setup { daemon: Some(daemon), home, project, _dir: dir }
}

fn decisions(daemon: &Daemon) -> Vec<Value> {
    daemon.call("decisions", Value::Null).expect("decisions").as_array().cloned().unwrap_or_default()
}

#[test]
fn task_without_evidence_is_blocked_with_the_commands_that_would_satisfy_the_gate() {
    let s = setup(None);
    let payload = task_completed(&s.project, "Fix cart rounding");
    let output = hook(&s.home, payload.to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(message.contains("task \"Fix cart rounding\" cannot be marked done yet"), "{message}");
    for command in [
        "judge-evidence marker --binding run_",
        "judge-evidence challenge",
        "judge-evidence verify",
        "ARIS_REVIEW_NONCE=",
    ] {
        assert!(message.contains(command), "missing `{command}` in: {message}");
    }
    let recorded = decisions(s.daemon.as_ref().unwrap());
    assert_eq!(recorded.len(), 1);
    assert_eq!(
        (recorded[0]["event"].as_str(), recorded[0]["decision"].as_str()),
        (Some("TaskCompleted"), Some("block"))
    );
    assert_eq!((recorded[0]["task_id"].as_str(), recorded[0]["teammate"].as_str()), (Some("7"), Some("implementer")));
    assert_eq!(recorded[0]["host"], "claude-code");
    assert!(recorded[0]["latency_ms"].is_number());
}

/// A question decided at once (here under `policy = "off"`) is decided again when repeated:
/// as cheap as reading the record, and its reason stays its own (a skip stays a skip on the
/// record, which the bypass accounting reads). A jury's allow repeated is answered from the
/// record (`panel.rs`).
#[test]
fn a_repeated_question_decided_at_once_is_decided_again_and_a_repeated_block_is_asked_again() {
    let s = setup(Some("policy = \"off\""));
    let payload = task_completed(&s.project, "Fix cart rounding").to_string();
    let first = hook(&s.home, payload.as_bytes(), &[]);
    let second = hook(&s.home, payload.as_bytes(), &[]);
    assert_eq!((first.status.code(), second.status.code()), (Some(0), Some(0)));
    let recorded = decisions(s.daemon.as_ref().unwrap());
    assert_eq!(recorded.len(), 2, "the repeat is recorded too");
    assert_eq!(recorded[1]["reason"], recorded[0]["reason"]);
    assert_ne!(recorded[1]["reason"], "answered from the recorded decision");
    assert_eq!(recorded[0]["key"], recorded[1]["key"]);

    // A block for want of evidence comes from outside the work: it is decided again, so
    // that the review the agent runs next is seen.
    let s = setup(None);
    let payload = task_completed(&s.project, "Fix cart rounding").to_string();
    let first = hook(&s.home, payload.as_bytes(), &[]);
    let second = hook(&s.home, payload.as_bytes(), &[]);
    assert_eq!((first.status.code(), second.status.code()), (Some(2), Some(2)));
    let recorded = decisions(s.daemon.as_ref().unwrap());
    assert_eq!(recorded[1]["reason"], "no fresh positive evidence", "a block is asked again");
    assert_eq!(recorded[0]["key"], recorded[1]["key"]);
}

#[test]
fn policy_off_and_short_tasks_allow_and_are_recorded() {
    let s = setup(Some("policy = \"off\""));
    let output = hook(&s.home, task_completed(&s.project, "Fix").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let recorded = decisions(s.daemon.as_ref().unwrap());
    assert_eq!((recorded[0]["decision"].as_str(), recorded[0]["policy"].as_str()), (Some("allow"), Some("off")));

    let s = setup(Some("min_task_chars = 500"));
    let output = hook(&s.home, task_completed(&s.project, "Tiny").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(0));
    let recorded = decisions(s.daemon.as_ref().unwrap());
    assert!(recorded[0]["reason"].as_str().unwrap().starts_with("skipped"), "{recorded:?}");
}

#[test]
fn panel_without_a_configured_jury_follows_the_on_error_rule() {
    let s = setup(Some("policy = \"panel\""));
    let output = hook(&s.home, task_completed(&s.project, "Fix cart rounding").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("no [jury] is configured"), "{}", stderr(&output));
    let recorded = decisions(s.daemon.as_ref().unwrap());
    assert_eq!(recorded[0]["reason"], "jury not available");
    let s = setup(Some("policy = \"panel\"\non_error = \"allow\""));
    let output = hook(&s.home, task_completed(&s.project, "Fix cart rounding").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn malformed_payloads_and_unknown_events_follow_the_on_error_rule() {
    let s = setup(None);
    let output = hook(&s.home, b"{not json", &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unparseable hook payload"), "{}", stderr(&output));
    let mut unknown = task_completed(&s.project, "x");
    unknown["hook_event_name"] = "MadeUpEvent".into();
    let output = hook(&s.home, unknown.to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unknown hook event `MadeUpEvent`"));
    // An event the gate does not cover passes untouched and unrecorded.
    let mut stop = task_completed(&s.project, "x");
    stop["hook_event_name"] = "SessionStart".into();
    assert_eq!(hook(&s.home, stop.to_string().as_bytes(), &[]).status.code(), Some(0));
    assert_eq!(decisions(s.daemon.as_ref().unwrap()).len(), 2);

    // A payload without a cwd names no project, so the user's config decides.
    let s = setup_with(Some("on_error = \"block\""), Some("on_error = \"allow\""));
    assert_eq!(hook(&s.home, b"[]", &[]).status.code(), Some(0));
}

#[test]
fn daemon_down_blocks_when_armed_and_allows_when_installed_to() {
    let mut s = setup(None);
    s.daemon.take().expect("running").stop();
    let payload = task_completed(&s.project, "Fix cart rounding").to_string();
    let armed = hook(&s.home, payload.as_bytes(), &[]);
    assert_eq!(armed.status.code(), Some(2));
    assert!(stderr(&armed).contains("judged start"), "{}", stderr(&armed));
    let unarmed = hook(&s.home, payload.as_bytes(), &["--on-error", "allow"]);
    assert_eq!(unarmed.status.code(), Some(0));
    assert!(stderr(&unarmed).contains("--on-error allow"));
}

#[test]
fn copilot_agent_stop_blocks_through_stdout_json() {
    let s = setup(None);
    let payload = json!({"sessionId": "3b6f", "timestamp": 1788081242000u64, "cwd": s.project, "transcriptPath": "/x/events.jsonl",
        "stopReason": "end_turn", "stop_hook_active": false});
    let output = hook(&s.home, payload.to_string().as_bytes(), &["--host", "copilot-cli"]);
    assert_eq!(output.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&output.stdout).expect("a JSON decision on stdout");
    assert_eq!(answer["decision"], "block");
    assert!(answer["reason"].as_str().unwrap().contains("cannot be marked done yet"));
}

/// Copilot CLI runs `agentStop` hooks for a `task` sub-agent too (the real client, with
/// its rubber-duck reviewer): that stop is the reviewer finishing its answer, so the gate
/// lets it through and records why, while the root agent's stop is still gated.
#[test]
fn a_copilot_sub_agents_stop_is_let_through_and_recorded_as_such() {
    let s = setup(None);
    let payload = json!({"sessionId": "7a4d", "transcriptPath": "/x/events.jsonl", "stopReason": "end_turn",
        "stop_hook_active": false, "timestamp": 1796169003533u64, "agentId": "7a4d", "agentType": "rubber-duck",
        "parentAgentId": "c237", "cwd": s.project});
    let output = hook(&s.home, payload.to_string().as_bytes(), &["--host", "copilot-cli"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&output.stdout).contains("block"), "{}", String::from_utf8_lossy(&output.stdout));
    let recorded = decisions(s.daemon.as_ref().unwrap());
    assert_eq!(
        (recorded[0]["decision"].as_str(), recorded[0]["reason"].as_str()),
        (Some("allow"), Some("a sub-agent's stop"))
    );
}

/// An agent that wants its task through pipes its own completion into judge-hook marked as
/// a sub-agent's stop (`parentAgentId`, which any payload can carry): that question is let
/// through, but its allow answers only itself. The host's real hook, asked the same task
/// after, is still blocked (the forged allow was answered from the record before).
#[test]
fn a_forged_sub_agent_stop_does_not_answer_the_real_completion_of_the_same_task() {
    let s = setup(None);
    let real = task_completed(&s.project, "Fix cart rounding");
    let mut forged = real.clone();
    forged["parentAgentId"] = json!("x");
    let output = hook(&s.home, forged.to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let output = hook(&s.home, real.to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2), "the forged allow answered the real hook: {}", stderr(&output));
    assert!(stderr(&output).contains("cannot be marked done yet"), "{}", stderr(&output));
    let recorded = decisions(s.daemon.as_ref().unwrap());
    let reasons: Vec<&str> = recorded.iter().filter_map(|d| d["reason"].as_str()).collect();
    assert!(!reasons.contains(&"answered from the recorded decision"), "{reasons:?}");
}

#[test]
fn a_broken_project_config_is_named_and_fails_closed() {
    let s = setup(Some("policy = \"sometimes\""));
    let output = hook(&s.home, task_completed(&s.project, "Fix cart rounding").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains(".judged.toml"), "{}", stderr(&output));
}

#[test]
fn install_hooks_writes_a_settings_file_the_shim_runs_from() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let run = |args: &[&str]| Command::new(bin("judged")).args(args).output().expect("judged runs");
    let dry = run(&["install-hooks", "--claude", "--project", project.to_str().unwrap(), "--dry-run"]);
    assert!(dry.status.success());
    assert!(String::from_utf8_lossy(&dry.stdout).contains("+"));
    assert!(!project.join(".claude/settings.json").exists(), "--dry-run writes nothing");
    assert!(run(&["install-hooks", "--claude", "--project", project.to_str().unwrap()]).status.success());
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(project.join(".claude/settings.json")).unwrap()).unwrap();
    let command = settings["hooks"]["TaskCompleted"][0]["hooks"][0]["command"].as_str().unwrap();
    assert!(command.contains("judge-hook") && command.contains("--host claude-code"), "{command}");
    assert!(run(&["uninstall-hooks", "--claude", "--project", project.to_str().unwrap()]).status.success());
    assert!(!project.join(".claude/settings.json").exists(), "no file before the install, none after the uninstall");
}

#[test]
fn a_user_who_does_not_trust_project_files_keeps_the_gate_shut() {
    let s = setup_with(Some("policy = \"off\""), Some("trust_project_files = false"));
    let output = hook(&s.home, task_completed(&s.project, "Fix cart rounding").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2), "the repository's policy = off is ignored");
}

/// By default a repository's `.judged.toml` may only make the gate stricter: the agent can
/// write it (often it can write nothing else: its host's sandbox keeps it in the project).
/// `policy = "off"` does not open the gate, and the block names what was ignored and how a
/// user lets a project loosen it; a `[jury]` of its own is not read, so its `command`
/// juror does not run (as the user, outside the agent's sandbox). Both got through before.
#[test]
fn a_project_file_may_only_make_the_gate_stricter_unless_its_user_trusts_it() {
    let s = setup_configured(Some("[gate]\npolicy = \"off\"\nfreshness_seconds = 999999\n"), "");
    let file = s.project.join(".judged.toml");
    let output = hook(&s.home, task_completed(&s.project, "Fix cart rounding").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2), "the repository's policy = off is ignored: {}", stderr(&output));
    for ignored in ["policy = \"off\"", "freshness_seconds = 999999"] {
        let said = format!(
            "Ignored: {ignored} in {}. A project's .judged.toml may only make the gate stricter",
            file.display()
        );
        assert!(stderr(&output).contains(&said), "{}", stderr(&output));
    }
    assert!(stderr(&output).contains("set trust_project_files = true in its [gate]"), "{}", stderr(&output));

    // A user whose gate asks either kind of review, and no jury of theirs: the project's
    // own jury would decide its `policy = "panel"`.
    let ran = s.project.join("juror-ran");
    let juror = serde_json::to_string(&["sh", "-c", &format!("touch {}; false", ran.display())]).unwrap();
    let jury = judged_tests::command_jury(
        [("a", "gpt-5.4", juror.clone(), ""), ("b", "gemini-2.5-pro", juror.clone(), "")],
        juror,
        30,
    );
    let either = setup_configured(
        Some(&format!("[gate]\npolicy = \"panel\"\n\n{jury}")),
        "[gate]\npolicy = \"evidence_or_panel\"\n",
    );
    let output = hook(&either.home, task_completed(&either.project, "Fix cart rounding").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("no [jury] is configured"), "{}", stderr(&output));
    assert!(!ran.exists(), "the project's juror ran");

    // Its user trusts it: the file sets the gate as it likes.
    let trusted = setup_configured(Some("[gate]\npolicy = \"off\"\n"), "[gate]\ntrust_project_files = true\n");
    let output = hook(&trusted.home, task_completed(&trusted.project, "Fix cart rounding").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
}

/// Under a user's `on_error = "allow"`, a project file the agent wrote still cannot open the
/// gate: one that does not parse blocks (the user's own settings decide, and the agent's
/// broken file is no error of the user's), and `policy = "panel"` in place of the user's
/// `evidence` is ignored (with no jury, `on_error` would have decided). Both were let
/// through before.
#[test]
fn a_project_file_cannot_open_the_gate_through_the_users_on_error() {
    let user = "[gate]\non_error = \"allow\"\n";
    let broken = setup_configured(Some("[gate]\npolicy = \"of\"\n"), user);
    let output = hook(&broken.home, task_completed(&broken.project, "Fix cart rounding").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("the gate's config cannot be used"), "{}", stderr(&output));
    let swapped = setup_configured(Some("[gate]\npolicy = \"panel\"\n"), user);
    let output = hook(&swapped.home, task_completed(&swapped.project, "Fix cart rounding").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("Ignored: policy = \"panel\""), "{}", stderr(&output));
}

/// With no daemon running, the hook starts one (as ssh-agent's clients do) and is answered
/// by it; callers at once start one daemon between them.
#[test]
fn a_hook_with_no_daemon_starts_one() {
    let s = setup(None);
    std::fs::write(s.home.join("config.toml"), "").unwrap();
    let mut s = s;
    s.daemon.take().expect("running").stop();
    let payload = task_completed(&s.project, "Fix cart rounding").to_string();
    let outputs: Vec<Output> = std::thread::scope(|scope| {
        let calls: Vec<_> = (0..3).map(|_| scope.spawn(|| hook(&s.home, payload.as_bytes(), &[]))).collect();
        calls.into_iter().map(|c| c.join().unwrap()).collect()
    });
    let socket = s.home.join("judged.sock");
    let status =
        judged_protocol::call::<Value>(&socket, judged_protocol::Request::Status, std::time::Duration::from_secs(10));
    let decisions = judged_protocol::call::<Value>(
        &socket,
        judged_protocol::Request::Decisions,
        std::time::Duration::from_secs(10),
    );
    let _ =
        judged_protocol::call::<Value>(&socket, judged_protocol::Request::Shutdown, std::time::Duration::from_secs(5));
    assert!(status.is_ok(), "a daemon was started");
    for output in &outputs {
        assert_eq!(output.status.code(), Some(2));
        assert!(stderr(output).contains("cannot be marked done yet"), "answered by the gate: {}", stderr(output));
    }
    assert_eq!(decisions.unwrap().as_array().map(Vec::len), Some(3), "one daemon decided all three");
}

#[test]
fn a_hook_with_auto_start_off_says_why_the_daemon_was_not_started() {
    let mut s = setup(None);
    s.daemon.take().expect("running").stop();
    let output = hook(&s.home, task_completed(&s.project, "Fix cart rounding").to_string().as_bytes(), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("auto_start = false"), "{}", stderr(&output));
}

#[test]
fn a_hook_whose_daemon_cannot_start_names_the_cause_not_judged_start() {
    let dir = tempfile::tempdir().unwrap();
    let (home, project) = (dir.path().join("home"), dir.path().join("project"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    let config = home.join("config.toml");
    std::fs::write(&config, "[gate]\npolicy = \"nope\"\n").unwrap();
    for host in ["claude-code", "copilot-cli"] {
        let output =
            hook(&home, task_completed(&project, "Fix cart rounding").to_string().as_bytes(), &["--host", host]);
        let message = match host {
            "claude-code" => {
                assert_eq!(output.status.code(), Some(2), "blocked");
                stderr(&output)
            }
            _ => {
                let answer: Value = serde_json::from_slice(&output.stdout).expect("a JSON answer");
                assert_eq!(answer["decision"], "block", "{answer}");
                answer["reason"].as_str().unwrap().to_owned()
            }
        };
        assert!(message.contains("judged could not be started"), "{host}: {message}");
        assert!(message.contains(&format!("{}: ", config.display())), "{host}: names the file: {message}");
        assert!(message.contains("unknown variant, expected one of `off`"), "{host}: names the error: {message}");
        assert!(message.contains("fix that file"), "{host}: says what to do: {message}");
        assert!(!message.contains("Start it with `judged start`"), "{host}: that fails the same way: {message}");
    }
}

/// A block names the reviewer CLIs of another family that are on the agent's `PATH`, as
/// judge-hook found them there, and says so when none is.
#[test]
fn a_block_names_the_reviewer_clis_the_agent_can_run() {
    let s = setup(None);
    let tools = s.home.join("tools");
    std::fs::create_dir_all(&tools).unwrap();
    let stop = |path: &Path| {
        let payload = json!({"session_id": "01a2", "cwd": s.project, "hook_event_name": "Stop",
            "stop_hook_active": false, "last_assistant_message": "Done: the cart rounds half up."});
        let mut child = Command::new(bin("judge-hook"))
            .args(["--host", "codex-cli"])
            .env("JUDGED_HOME", &s.home)
            .env("PATH", path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("judge-hook runs");
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.to_string().as_bytes()).unwrap();
        let answer: Value = serde_json::from_slice(&child.wait_with_output().unwrap().stdout).expect("a JSON answer");
        answer["reason"].as_str().expect("a reason").to_owned()
    };
    let reason = stop(&tools);
    assert!(
        reason.contains(
            "(`copilot -p` with a model of another family than yours, such as `--model \
                         claude-sonnet-4.6` or `claude -p` or `gemini -p` or `qwen -p` or `opencode run` with the \
                         nonce line before the prompt's last line; none of copilot, claude, gemini, qwen, opencode \
                         is on the PATH this hook ran with: install one and log it in)"
        ),
        "{reason}"
    );
    let claude = tools.join("claude");
    std::fs::write(&claude, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let reason = stop(&tools);
    assert!(
        reason.contains("then run a reviewer CLI of another family as a root shell call (`claude -p`) with"),
        "{reason}"
    );
}

/// A hook named for a host no hook can stop (OpenCode), or for no host judged knows, is a
/// misconfiguration: judge-hook blocks (exit 2) and names the argument, never asking.
#[test]
fn judge_hook_refuses_a_host_it_cannot_answer_for() {
    let s = setup(None);
    for host in ["opencode", "codx-cli"] {
        // No stdin: it refuses before reading any.
        let output = Command::new(bin("judge-hook"))
            .args(["--host", host])
            .env("JUDGED_HOME", &s.home)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("judge-hook runs");
        let said = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{host}: {said}");
        assert!(said.contains("unexpected argument `--host`") && said.contains("qwen-code]"), "{host}: {said}");
    }
}
