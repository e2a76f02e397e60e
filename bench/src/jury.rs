//! The jury's figures (issue 12): what convening it costs over its slowest juror, and a
//! gate answer from a verdict it already gave.
//!
//! A daemon of its own (roots holding the one session whose tasks the gate is asked
//! about, `[gate] policy = "panel"` and a `[jury]` in its `config.toml`) over a small git
//! repository with one uncommitted change. The jurors are `preset = "command"` jurors
//! running `juror.sh`, written here: it reads the prompt, sleeps a known time, prints a
//! confident `pass` naming its configured model, and appends its own start and end (bash's
//! `EPOCHREALTIME`) to a file, so the bench knows how long the slowest juror's process
//! itself ran.

use crate::Bins;
use crate::measure::{self, Daemon, Samples};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How long each juror sleeps, in seconds: the two stage-1 jurors, and the tiebreaker
/// (configured, never asked: stage 1 agrees confidently).
pub const FAST_SECONDS: f64 = 0.2;
pub const SLOW_SECONDS: f64 = 0.3;
const TIEBREAKER_SECONDS: f64 = 0.1;

/// The jurors' models: two families in stage 1, a third as the tiebreaker.
const FAST_MODEL: &str = "gpt-5.4-mini";
const SLOW_MODEL: &str = "gemini-3-flash";
const TIEBREAKER_MODEL: &str = "claude-sonnet-4.6";

/// How many times each figure is taken.
#[derive(Clone, Copy, Debug)]
pub struct JuryRuns {
    pub panel: usize,
    pub gate: usize,
    pub spawn: usize,
}

/// Everything the jury phase measured.
#[derive(Debug, Default)]
pub struct JuryFigures {
    pub runs: usize,
    /// `judge-evidence panel`, spawn to exit.
    pub end_to_end: Samples,
    /// The packet's `elapsed_ms` (the cascade, inside the daemon).
    pub elapsed: Samples,
    /// The slowest juror's own wall time (its script's start to end).
    pub slowest_self: Samples,
    /// The slowest juror's `latency_ms` as the packet reports it.
    pub slowest_reported: Samples,
    /// Per run: end to end minus the slowest juror's own wall time (the figure).
    pub overhead: Samples,
    /// Per run: end to end minus the slowest `latency_ms` in the packet.
    pub overhead_reported: Samples,
    /// Per run: the packet's `elapsed_ms` minus its slowest `latency_ms`.
    pub cascade_overhead: Samples,
    /// `/bin/true` spawned as the hook shim is (stdin piped).
    pub spawn_true: Samples,
    /// The first `TaskCompleted`: the jury convenes.
    pub gate_first_ms: f64,
    /// The same payload again: answered from the recorded decision.
    pub gate_recorded: Samples,
    /// A new task id with the same work on the same tree: the jury's verdict reused.
    pub gate_reused: Samples,
    /// How the gate's decisions were made (reason, count), as `judged decisions` shows.
    pub reasons: Vec<(String, usize)>,
    /// `judged mcp`, `tools/call review` on a tree changed before each call, minus the
    /// slowest juror's own wall time.
    pub mcp_review_overhead: Samples,
    /// `judged mcp`, `tools/call gate_status` round trips.
    pub mcp_gate_status: Samples,
    /// The daemon's VmHWM at the end, KiB.
    pub rss_kib: u64,
}

const JUROR_SCRIPT: &str = r#"#!/bin/bash
# juror.sh SECONDS MODEL TIMES: a command juror for judged-bench. It reads the prompt on
# stdin, sleeps SECONDS, prints a confident pass naming MODEL, and appends its own start
# and end (EPOCHREALTIME, no process spawned to read the clock) to TIMES.
start=$EPOCHREALTIME
cat > /dev/null
sleep "$1"
printf '{"verdict":"pass","confidence":90,"flags":[],"model":"%s"}\n' "$2"
echo "$start $EPOCHREALTIME" >> "$3"
"#;

fn toml_string(path: &Path) -> String {
    // A JSON string is a valid TOML basic string.
    serde_json::to_string(&path.to_string_lossy()).expect("a string serializes")
}

/// The daemon's `config.toml`: the gate asks the jury, and the jury of three command jurors.
fn config(script: &Path, times: &Path) -> String {
    let mut text = String::from(
        "[gate]\npolicy = \"panel\"\n\n[jury]\nstage_1 = [\"fast-openai\", \"slow-google\"]\ntiebreaker = \"big-anthropic\"\ndeadline_seconds = 30\n",
    );
    for (name, model, seconds) in [
        ("fast-openai", FAST_MODEL, FAST_SECONDS),
        ("slow-google", SLOW_MODEL, SLOW_SECONDS),
        ("big-anthropic", TIEBREAKER_MODEL, TIEBREAKER_SECONDS),
    ] {
        let record = toml_string(&times.join(name));
        text.push_str(&format!(
            "\n[[jury.jurors]]\nname = \"{name}\"\npreset = \"command\"\nmodel = \"{model}\"\ncommand = [{}, \"{seconds}\", \"{{model}}\", {record}]\n",
            toml_string(script)
        ));
    }
    text
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git").arg("-C").arg(dir).args(args).status().expect("git runs");
    assert!(status.success(), "git {args:?} in {}", dir.display());
}

/// The project: one commit, one file changed since and one untracked, as work in progress.
fn project(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).expect("jury project");
    git(dir, &["init", "-q"]);
    std::fs::write(dir.join("cart.rs"), "fn total() -> u32 { 1 }\n").expect("file written");
    git(dir, &["add", "."]);
    git(dir, &["-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "commit", "-qm", "one"]);
    std::fs::write(dir.join("cart.rs"), "fn total() -> u32 { round_half_even(1) }\n").expect("file written");
    std::fs::write(dir.join("rounding.rs"), "fn round_half_even(x: u32) -> u32 { x }\n").expect("file written");
    std::fs::canonicalize(dir).expect("project path")
}

/// Seconds from one `EPOCHREALTIME` to another (either decimal mark).
fn span_ms(line: &str) -> Option<f64> {
    let mut parts = line.split_whitespace().map(|t| t.replace(',', ".").parse::<f64>().ok());
    let (start, end) = (parts.next()??, parts.next()??);
    Some((end - start) * 1000.0)
}

/// The jurors' own wall times of one run, by name.
fn juror_times(times: &Path) -> Vec<(String, f64)> {
    ["fast-openai", "slow-google", "big-anthropic"]
        .iter()
        .filter_map(|name| {
            let text = std::fs::read_to_string(times.join(name)).ok()?;
            let ms = text.lines().filter_map(span_ms).next_back()?;
            Some(((*name).to_owned(), ms))
        })
        .collect()
}

/// The session whose tasks the gate is asked about.
const SESSION: &str = "5d1c2b3a-7e8f-4a90-b1c2-d3e4f5a6b7c8";

/// A Claude Code `TaskCompleted` for the jury's project.
fn task_completed(project: &Path, task: usize) -> Value {
    json!({
        "session_id": SESSION,
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": project,
        "permission_mode": "default",
        "hook_event_name": "TaskCompleted",
        "task_id": task.to_string(),
        "task_subject": "Fix cart rounding",
        "task_description": "Totals must round half-even",
    })
}

/// Convene the jury `runs` times through `judge-evidence panel`, then time the gate.
pub fn measure(bins: &Bins, work: &Path, runs: JuryRuns) -> JuryFigures {
    eprintln!("judged-bench: jury: a daemon with a [jury] of command jurors ({FAST_SECONDS} s and {SLOW_SECONDS} s)");
    let dir = work.join("jury");
    let _ = std::fs::remove_dir_all(&dir);
    let times = dir.join("times");
    std::fs::create_dir_all(&times).expect("jury dir");
    let script = dir.join("juror.sh");
    std::fs::write(&script, JUROR_SCRIPT).expect("juror script written");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("juror executable");
    let project = project(&dir.join("project"));
    let (copilot, claude) = (dir.join("copilot"), dir.join("claude"));
    std::fs::create_dir_all(&copilot).expect("root");
    std::fs::create_dir_all(&claude).expect("root");
    // Witnessed, so that the gate knows who wrote the work (a jury is seated only then): a
    // model of a family none of the jurors is of.
    judged_tests::claude_session_by(&claude, "-project", SESSION, &project, "qwen3-coder-plus");
    let (daemon, _) =
        Daemon::start_configured(&bins.judged, &dir.join("home"), &copilot, &claude, Some(&config(&script, &times)));

    let artifact = dir.join("artifact.md");
    std::fs::write(
        &artifact,
        "# Cart totals\n\nTotals round half-even now; `round_half_even` is applied once, at the end.\n",
    )
    .expect("artifact written");
    let mut figures = JuryFigures { runs: runs.panel, ..JuryFigures::default() };
    let (mut e2e, mut elapsed, mut own, mut reported) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut overhead, mut overhead_reported, mut cascade) = (Vec::new(), Vec::new(), Vec::new());
    let warmup = 1;
    for i in 0..warmup + runs.panel {
        for entry in std::fs::read_dir(&times).expect("times dir").flatten() {
            let _ = std::fs::remove_file(entry.path());
        }
        let mut command = Command::new(&bins.evidence);
        command.args(["--mode", "daemon", "panel", "--rubric", "spec-coherence", "--artifact-file"]).arg(&artifact);
        command.arg("--cwd").arg(&project).arg("--json").env("JUDGED_HOME", &daemon.home);
        let (ms, output) = measure::run(&mut command, None);
        measure::expect_exit("judge-evidence panel", &output, 0);
        let packet: Value = serde_json::from_slice(&output.stdout).expect("the packet is JSON");
        assert_eq!(packet["final_verdict"], "pass", "the jury passes: {packet}");
        assert!(packet["cascade"]["stage_2_tiebreaker"].is_null(), "stage 1 agrees, no escalation: {packet}");
        let latency = packet["cascade"]["stage_1_small_fish"]
            .as_array()
            .expect("stage 1 jurors")
            .iter()
            .filter_map(|j| j["latency_ms"].as_f64())
            .fold(f64::NAN, f64::max);
        let packet_ms = packet["elapsed_ms"].as_f64().expect("the packet has elapsed_ms");
        let slowest = juror_times(&times).into_iter().map(|(_, ms)| ms).fold(f64::NAN, f64::max);
        assert!(slowest.is_finite(), "the jurors recorded their times in {}", times.display());
        if i >= warmup {
            e2e.push(ms);
            elapsed.push(packet_ms);
            own.push(slowest);
            reported.push(latency);
            overhead.push(ms - slowest);
            overhead_reported.push(ms - latency);
            cascade.push(packet_ms - latency);
        }
    }
    figures.end_to_end = Samples::new(e2e);
    figures.elapsed = Samples::new(elapsed);
    figures.slowest_self = Samples::new(own);
    figures.slowest_reported = Samples::new(reported);
    figures.overhead = Samples::new(overhead);
    figures.overhead_reported = Samples::new(overhead_reported);
    figures.cascade_overhead = Samples::new(cascade);

    eprintln!("judged-bench: jury: the gate (policy panel), a verdict reused");
    let spawn_true = || (Command::new("/bin/true"), Some(b"{}".to_vec()));
    figures.spawn_true = measure::repeat("/bin/true", runs.spawn, 5, 0, |_| spawn_true()).0;
    let hook = |payload: &Value| {
        let mut command = Command::new(&bins.hook);
        command.args(["--host", "claude-code"]).env("JUDGED_HOME", &daemon.home);
        (command, Some(payload.to_string().into_bytes()))
    };
    let first = task_completed(&project, 1);
    let (mut command, stdin) = hook(&first);
    let (ms, output) = measure::run(&mut command, stdin.as_deref());
    measure::expect_exit("judge-hook TaskCompleted (the jury convenes)", &output, 0);
    figures.gate_first_ms = ms;
    figures.gate_recorded =
        measure::repeat("judge-hook TaskCompleted (same payload)", runs.gate, 5, 0, |_| hook(&first)).0;
    let offset = 1_000;
    figures.gate_reused = measure::repeat("judge-hook TaskCompleted (new task, same work)", runs.gate, 5, 0, |i| {
        hook(&task_completed(&project, offset + i))
    })
    .0;
    let decisions = daemon.call("decisions", Value::Null).expect("decisions answer");
    let mut reasons: Vec<(String, usize)> = Vec::new();
    for decision in decisions.as_array().into_iter().flatten() {
        let reason = decision["reason"].as_str().unwrap_or("?").to_owned();
        match reasons.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, n)) => *n += 1,
            None => reasons.push((reason, 1)),
        }
    }
    figures.reasons = reasons;

    eprintln!("judged-bench: jury: judged mcp (review, gate_status)");
    let mut server = crate::mcp::Server::start(&bins.judged, &daemon.home, &project);
    let mut overhead = Vec::new();
    for i in 0..warmup + runs.panel {
        for entry in std::fs::read_dir(&times).expect("times dir").flatten() {
            let _ = std::fs::remove_file(entry.path());
        }
        // A new tree each time, so that the jury convenes rather than answering from the
        // verdict it gave on this one.
        std::fs::write(project.join("notes.md"), format!("round {i}\n")).expect("file written");
        let task = json!({"task": "Fix cart rounding", "description": "Totals must round half-even"});
        let (ms, review) = server.tool("review", task);
        assert_eq!(review["verdict"], "pass", "the jury passes: {review}");
        assert_eq!(review["from_record"], false, "the jury convened: {review}");
        let slowest = juror_times(&times).into_iter().map(|(_, ms)| ms).fold(f64::NAN, f64::max);
        if i >= warmup {
            overhead.push(ms - slowest);
        }
    }
    figures.mcp_review_overhead = Samples::new(overhead);
    let statuses: Vec<f64> = (0..5 + runs.gate).map(|_| server.tool("gate_status", json!({})).0).skip(5).collect();
    figures.mcp_gate_status = Samples::new(statuses);
    drop(server);
    figures.rss_kib = daemon.vm_kib("VmHWM");
    daemon.stop();
    figures
}
