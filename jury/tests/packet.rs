//! The packet (docs/spec/jury.md §4) as consumers see it, the `[jury]` TOML table end to end, live
//! progress, and the codex-judge format through the whole cascade.

mod common;

use std::sync::Mutex;

use common::*;
use judged_jury::codex_judge::Band;
use judged_jury::config::JuryConfig;
use judged_jury::convene::{Options, Progress, Request, convene};
use judged_jury::packet::FinalVerdict;
use judged_jury::packet::JurorVerdict;
use judged_jury::rubric::Rubric;
use judged_jury::verdict::VerdictFormat;

/// Positions of `keys` (as `"key":`) in `json`, which must be increasing.
fn assert_key_order(json: &str, keys: &[&str]) {
    let mut last = 0;
    for key in keys {
        let at = json[last..].find(&format!("\"{key}\":")).unwrap_or_else(|| panic!("{key} missing or out of order"));
        last += at + 1;
    }
}

#[test]
fn keys_come_in_the_reference_order_with_ours_after_and_silent_drops_raw_responses() {
    let g = juror("gem", GOOGLE, "canned.sh", &["pass", "70", "{model}"]);
    let o = juror("gpt", OPENAI, "canned.sh", &["pass", "90", "{model}"]);
    let tb = juror("claude-tb", ANTHROPIC, "canned.sh", &["pass", "90", "{model}"]);
    let mut packet = judge(&jury(vec![g, o], vec![tb], 30), "spec-coherence", None).0;
    let json = serde_json::to_string(&packet).expect("serializes");
    assert!(
        json.starts_with("{\"version\":\"judged-jury/1\",\"rubric\":\"spec-coherence\",\"persona\":\"Jeff Dean\",")
    );
    assert_key_order(
        &json,
        &[
            "version",
            "rubric",
            "persona",
            "cascade",
            "stage_1_small_fish",
            "agreement",
            "confidence_tier",
            "escalated",
            "stage_2_tiebreaker",
            "tiebreaker_unavailable",
            "final_verdict",
            "final_confidence",
            "cross_family",
            "distinct_families_returned",
            "degraded",
            "down_lanes",
            "all_flags",
            "cost_usd_estimate",
            "cost_vs_naive_parallel_jury_ratio",
            "format",
            "author_family",
            "deadline_ms",
            "elapsed_ms",
            "cut_short",
        ],
    );
    let juror_keys = [
        "model",
        "family",
        "verdict",
        "confidence",
        "flags",
        "tokens_in",
        "tokens_out",
        "latency_ms",
        "raw_response",
        "error",
        "name",
        "model_requested",
        "model_reported",
        "identity_source",
        "argv",
        "exit_code",
        "attempts",
    ];
    let tiebreaker_json = &json[json.find("\"stage_2_tiebreaker\":").expect("tiebreaker")..];
    assert_key_order(&json[json.find("\"stage_1_small_fish\":").expect("stage 1")..], &juror_keys);
    assert_key_order(tiebreaker_json, &juror_keys);
    assert!(json.contains("\"identity_source\":\"command_verdict\""));
    assert!(json.contains("\"confidence_tier\":\"low\""));

    packet.silence();
    let silent = serde_json::to_string(&packet).expect("serializes");
    assert!(json.contains("\"raw_response\":"));
    assert!(!silent.contains("\"raw_response\""), "{silent}");
}

#[test]
fn a_toml_jury_table_runs_as_written() {
    let text = format!(
        r#"
[gate]
policy = "panel"

[jury]
stage_1 = ["gem", "gpt"]
tiebreaker = "claude-tb"
deadline_seconds = 30

[[jury.jurors]]
name = "gem"
preset = "command"
model = "{GOOGLE}"
command = ["{canned}", "fail", "88", "{{model}}"]
env = {{ UNUSED = "1" }}
env_strip = ["OPENAI_API_KEY"]
price = {{ input_per_mtok = 0.30, output_per_mtok = 2.50 }}

[[jury.jurors]]
name = "gpt"
preset = "command"
model = "{OPENAI}"
command = ["{canned}", "fail"]
extra_args = ["91", "{{model}}"]
timeout_seconds = 20
price = {{ input_per_mtok = 1.25, output_per_mtok = 10.0 }}

[[jury.jurors]]
name = "claude-tb"
preset = "command"
model = "{ANTHROPIC}"
command = ["{canned}", "pass", "99", "{{model}}"]
"#,
        canned = fixture("canned.sh")
    );
    let jury = JuryConfig::from_toml(&text).expect("parses").validate().expect("valid");
    let p = judge(&jury, "t0t2-jury", None).0;
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Fail, 89));
    assert_eq!(stage_1(&p, 1).argv[1..], ["fail", "91", OPENAI]);
    // Both jurors priced on their own entries; the ratio is against three calls of the priciest.
    assert!(p.cost_usd_estimate > 0.0);
    let ratio = p.cost_vs_naive_parallel_jury_ratio.expect("priced jurors give a ratio");
    assert!(ratio > 0.0 && ratio < 1.0, "{ratio}");
}

#[test]
fn progress_reports_each_juror_and_the_escalation() {
    let g = juror("gem", GOOGLE, "canned.sh", &["pass", "95", "{model}"]);
    let o = juror("gpt", OPENAI, "canned.sh", &["fail", "95", "{model}"]);
    let tb = juror("claude-tb", ANTHROPIC, "canned.sh", &["pass", "90", "{model}"]);
    let jury = jury(vec![g, o], vec![tb], 30);
    let project = tempfile::tempdir().expect("project");
    let rubric = Rubric::resolve("hallucination", None).expect("known");
    let request =
        Request { rubric: &rubric, persona: Some("Ada"), artifact: "a", project: project.path(), author_model: None };
    let events = Mutex::new(Vec::new());
    let packet = convene(&jury, &request, &Options::default(), &|e: &Progress<'_>| {
        let line = match e {
            Progress::Started { juror, stage } => format!("start {juror} {stage:?}"),
            Progress::Finished { juror, verdict, .. } => format!("done {juror} {verdict:?}"),
            Progress::Escalated { agreement, tiebreaker } => format!("escalate {agreement:?} {tiebreaker:?}"),
        };
        events.lock().expect("lock").push(line);
    });
    assert_eq!(packet.persona.as_deref(), Some("Ada"));
    let mut events = events.into_inner().expect("lock");
    // Stage 1 runs in parallel: its four events may interleave.
    events[..4].sort();
    assert_eq!(
        events,
        [
            "done gem Pass",
            "done gpt Fail",
            "start gem One",
            "start gpt One",
            "escalate Disagree Some(\"claude-tb\")",
            "start claude-tb Tiebreaker",
            "done claude-tb Pass",
        ]
    );
}

#[test]
fn the_codex_judge_format_runs_through_the_cascade() {
    let g = juror("gem", GOOGLE, "codex-judge.sh", &["5", "minor", "{model}"]);
    let o = juror("gpt", OPENAI, "codex-judge.sh", &["4", "major", "{model}"]);
    let tb = juror("claude-tb", ANTHROPIC, "codex-judge.sh", &["2", "none", "{model}"]);
    let p = judge(&jury(vec![g, o], vec![tb], 30), "codex-judge", None).0;
    assert_eq!(p.format, VerdictFormat::CodexJudge);
    let gem = stage_1(&p, 0);
    assert_eq!((gem.verdict, gem.confidence), (JurorVerdict::Pass, 90));
    assert_eq!(gem.judge.as_ref().map(|j| j.band), Some(Band::AutoApprove));
    assert_eq!(gem.flags, ["minor: off by one (src/a.rs:7)"]);
    // A major violation at overall 4 is the middle band: uncertain, so it escalates.
    assert_eq!(stage_1(&p, 1).verdict, JurorVerdict::Uncertain);
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Fail, 90));
    let json = serde_json::to_string(&p).expect("serializes");
    assert!(json.contains("\"format\":\"codex-judge\""));
    assert!(json.contains("\"band\":\"auto_revise\""));
}
