//! Every branch of the cascade (docs/spec/jury.md §3.1, §3.2) and the health block (§3.5), driven
//! through real processes: `preset = "command"` jurors running `fixtures/jurors/`.

mod common;

use std::fs;
use std::time::{Duration, Instant};

use common::*;
use judged_jury::identity::IdentitySource;
use judged_jury::packet::{Agreement, ConfidenceTier, CutBy, CutShort, FinalVerdict, JurorLine, JurorVerdict, Packet};

fn tiebreaker(packet: &Packet) -> &JurorLine {
    packet.cascade.stage_2_tiebreaker.as_ref().expect("a tiebreaker ran")
}

fn claude_tb(verdict: &str, confidence: &str) -> judged_jury::config::JurorConfig {
    juror("claude-tb", ANTHROPIC, "canned.sh", &[verdict, confidence, "{model}"])
}

#[test]
fn confident_agreement_at_the_threshold_does_not_escalate() {
    let mut g = juror("gem", GOOGLE, "canned.sh", &["pass", "80", "{model}", "minor nit"]);
    let record = tempfile::tempdir().expect("tempdir");
    let prompt_file = record.path().join("prompt");
    g.env.insert("JURY_RECORD".into(), prompt_file.display().to_string());
    let o = juror("gpt", OPENAI, "canned.sh", &["PASS", "95", "{model}"]);
    let (packet, project) = judge(&jury(vec![g, o], vec![claude_tb("fail", "99")], 30), "t0t2-jury", None);
    let p = &packet;

    assert_eq!(
        (p.cascade.agreement, p.cascade.confidence_tier, p.cascade.escalated),
        (Agreement::Agree, ConfidenceTier::High, false)
    );
    assert!(p.cascade.stage_2_tiebreaker.is_none());
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Pass, 87));
    assert_eq!((p.cross_family.distinct_families_returned, p.cross_family.degraded), (2, false));
    assert_eq!(p.all_flags, ["minor nit"]);

    let gem = stage_1(p, 0);
    assert_eq!((gem.verdict, gem.confidence, gem.family), (JurorVerdict::Pass, 80, "google"));
    assert_eq!(gem.model_reported.as_deref(), Some(GOOGLE));
    assert_eq!(gem.identity_source, Some(IdentitySource::CommandVerdict));
    assert_eq!((gem.exit_code, gem.attempts, gem.error.as_deref()), (Some(0), 1, None));
    assert_eq!(gem.argv, [fixture("canned.sh"), "pass".into(), "80".into(), GOOGLE.into(), "minor nit".into()]);
    // The prompt arrived on stdin, in the project directory; argv never had it.
    let prompt = fs::read_to_string(&prompt_file).expect("the juror saved its prompt");
    assert!(prompt.contains("ARTIFACT:\n```\nfn add(a: u8, b: u8) -> u8 { a + b }\n```"), "{prompt}");
    let cwd = fs::read_to_string(record.path().join("prompt.cwd")).expect("cwd");
    let project = project.path().canonicalize().expect("project dir");
    assert_eq!(cwd.trim(), project.display().to_string());
    assert!(gem.tokens_in >= prompt.encode_utf16().count() as u64 / 4);
}

#[test]
fn agreement_below_the_threshold_escalates_and_the_tiebreaker_weighs_in() {
    let g = juror("gem", GOOGLE, "canned.sh", &["pass", "79", "{model}"]);
    let o = juror("gpt", OPENAI, "canned.sh", &["pass", "90", "{model}"]);
    let p = judge(&jury(vec![g, o], vec![claude_tb("pass", "90")], 30), "t0t2-jury", None).0;
    assert_eq!((p.cascade.agreement, p.cascade.confidence_tier), (Agreement::Agree, ConfidenceTier::Low));
    assert!(p.cascade.escalated);
    // floor((90 + (79 + 90) / 2) / 2) = floor(87.25)
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Pass, 87));
    assert_eq!(tiebreaker(&p).name, "claude-tb");
    assert_eq!(p.cross_family.distinct_families_returned, 3);
}

#[test]
fn pass_against_fail_is_decided_by_the_tiebreaker() {
    let g = juror("gem", GOOGLE, "canned.sh", &["pass", "90", "{model}"]);
    let o = juror("gpt", OPENAI, "noisy.sh", &["fail", "85", "{model}"]);
    let p = judge(&jury(vec![g, o], vec![claude_tb("fail", "70")], 30), "t0t2-jury", None).0;
    assert_eq!((p.cascade.agreement, p.cascade.confidence_tier), (Agreement::Disagree, ConfidenceTier::NotApplicable));
    // Only the fail juror sided with the tiebreaker: floor((70 + 85) / 2).
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Fail, 77));
    assert_eq!(p.all_flags, ["checked it"]);
}

#[test]
fn any_uncertain_escalates_and_an_uncertain_tiebreaker_is_final() {
    let g = juror("gem", GOOGLE, "canned.sh", &["uncertain", "95", "{model}"]);
    let o = juror("gpt", OPENAI, "canned.sh", &["pass", "95", "{model}"]);
    let p = judge(&jury(vec![g, o], vec![claude_tb("uncertain", "55")], 30), "t0t2-jury", None).0;
    assert_eq!((p.cascade.agreement, p.cascade.escalated), (Agreement::Disagree, true));
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Uncertain, 55));
}

#[test]
fn noisy_answers_braces_in_strings_and_fractional_confidence_are_read() {
    let g = juror("gem", GOOGLE, "braces.sh", &["{model}"]);
    let o = juror("gpt", OPENAI, "fraction.sh", &["fail", "{model}"]);
    let p = judge(&jury(vec![g, o], vec![claude_tb("pass", "99")], 30), "t0t2-jury", None).0;
    assert_eq!(stage_1(&p, 0).flags, ["use {x} not }y{", "a \"quoted\" }"]);
    assert_eq!((stage_1(&p, 0).verdict, stage_1(&p, 0).confidence), (JurorVerdict::Fail, 85));
    assert_eq!((stage_1(&p, 1).verdict, stage_1(&p, 1).confidence), (JurorVerdict::Fail, 95));
    assert_eq!((p.cascade.confidence_tier, p.cascade.escalated), (ConfidenceTier::High, false));
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Fail, 90));
}

#[test]
fn an_empty_answer_is_retried_once_then_down_and_a_cross_family_tiebreaker_restores_health() {
    let g = juror("gem", GOOGLE, "empty.sh", &[]);
    let o = juror("gpt", OPENAI, "canned.sh", &["pass", "90", "{model}"]);
    // gpt-big is first in the list but of the only family that answered: it is skipped.
    let gpt_big = juror("gpt-big", "gpt-5.4", "canned.sh", &["fail", "99", "{model}"]);
    let p = judge(&jury(vec![g, o], vec![gpt_big, claude_tb("pass", "90")], 30), "t0t2-jury", None).0;

    let gem = stage_1(&p, 0);
    assert_eq!((gem.verdict, gem.attempts), (JurorVerdict::Error, 2));
    assert_eq!(gem.error.as_deref(), Some("no JSON object in response"));
    assert_eq!((p.cascade.agreement, p.cascade.escalated), (Agreement::Insufficient, true));
    assert_eq!(tiebreaker(&p).name, "claude-tb");
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Pass, 90));
    assert_eq!((p.cross_family.distinct_families_returned, p.cross_family.degraded), (2, false));
    let down: Vec<_> =
        p.cross_family.down_lanes.iter().map(|d| (d.family, d.juror.as_str(), d.reason.as_str())).collect();
    assert_eq!(down, [("google", "gem", "no JSON object in response")]);
    assert!(p.all_flags.is_empty(), "no banner when health is restored: {:?}", p.all_flags);
}

#[test]
fn a_prose_answer_gets_one_retry_that_can_succeed() {
    let g = juror("gem", GOOGLE, "json-on-retry.sh", &["{model}"]);
    let o = juror("gpt", OPENAI, "prose.sh", &[]);
    let p = judge(&jury(vec![g, o], vec![claude_tb("pass", "90")], 30), "t0t2-jury", None).0;
    assert_eq!((stage_1(&p, 0).verdict, stage_1(&p, 0).attempts), (JurorVerdict::Pass, 2));
    assert_eq!((stage_1(&p, 1).verdict, stage_1(&p, 1).attempts), (JurorVerdict::Error, 2));
    assert_eq!(stage_1(&p, 1).raw_response.as_deref(), Some("It looks fine to me, ship it."));
}

#[test]
fn a_juror_exiting_non_zero_is_down_with_its_stderr() {
    let g = juror("gem", GOOGLE, "exit-nonzero.sh", &[]);
    let o = juror("gpt", OPENAI, "canned.sh", &["fail", "90", "{model}"]);
    let p = judge(&jury(vec![g, o], vec![claude_tb("fail", "80")], 30), "t0t2-jury", None).0;
    let gem = stage_1(&p, 0);
    assert_eq!((gem.verdict, gem.exit_code, gem.attempts), (JurorVerdict::Error, Some(3), 1));
    assert_eq!(gem.error, Some(format!("{} exit 3: rate_limit: quota exceeded", fixture("exit-nonzero.sh"))));
    // The tiebreaker sides with gpt: floor((80 + 90) / 2).
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Fail, 85));
}

#[test]
fn an_impostor_of_another_family_is_down_and_never_counts() {
    let g = juror("gem", GOOGLE, "canned.sh", &["pass", "95", "{model}"]);
    let o = juror("gpt", OPENAI, "impostor.sh", &[]);
    let p = judge(&jury(vec![g, o], vec![claude_tb("pass", "90")], 30), "t0t2-jury", None).0;
    let gpt = stage_1(&p, 1);
    assert_eq!(gpt.verdict, JurorVerdict::Error);
    assert_eq!((gpt.model_requested.as_str(), gpt.model_reported.as_deref()), (OPENAI, Some("gemini-IMPOSTOR-9")));
    assert_eq!(
        gpt.error.as_deref(),
        Some(
            "identity: the run's record says gemini-IMPOSTOR-9 answered (family google), but this juror \
             is configured as gpt-5.4-mini (family openai)"
        )
    );
    assert!(gpt.flags.is_empty());
    // Without the check this would have been a confident cross-family agreement.
    assert_eq!(p.cascade.agreement, Agreement::Insufficient);
    assert_eq!(tiebreaker(&p).family, "anthropic");
    assert_eq!((p.cross_family.distinct_families_returned, p.cross_family.degraded), (2, false));
}

#[test]
fn a_verdict_without_a_record_of_its_model_is_down_and_the_jury_degraded() {
    let g = juror("gem", GOOGLE, "canned.sh", &["pass", "95", "{model}"]);
    let o = juror("gpt", OPENAI, "no-model.sh", &["pass", "95"]);
    let tb = juror("claude-tb", ANTHROPIC, "no-model.sh", &["pass", "95"]);
    let p = judge(&jury(vec![g, o], vec![tb], 30), "t0t2-jury", None).0;
    let reason = "identity: no record of the run: the command's verdict has no \"model\" key";
    assert_eq!(stage_1(&p, 1).error.as_deref(), Some(reason));
    assert_eq!((stage_1(&p, 1).model_reported.as_deref(), stage_1(&p, 1).identity_source), (None, None));
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Error, 0));
    assert_eq!((p.cross_family.distinct_families_returned, p.cross_family.degraded), (1, true));
    assert_eq!(
        p.all_flags.last().map(String::as_str),
        Some(
            format!(
                "⚠ CROSS-FAMILY DEGRADED: only google returned; openai ({reason}), anthropic ({reason}) lane(s) down"
            )
            .as_str()
        )
    );
}

#[test]
fn the_cascade_deadline_cuts_stage_1_and_leaves_the_tiebreaker_no_time() {
    let started = Instant::now();
    let g = juror("gem", GOOGLE, "sleep.sh", &[]);
    let o = juror("gpt", OPENAI, "canned.sh", &["pass", "95", "{model}"]);
    let p = judge(&jury(vec![g, o], vec![claude_tb("pass", "90")], 2), "t0t2-jury", None).0;
    assert!(started.elapsed() < Duration::from_secs(6), "the deadline was not enforced: {:?}", started.elapsed());

    let gem = stage_1(&p, 0);
    assert_eq!(gem.verdict, JurorVerdict::Timeout);
    assert_eq!(gem.error.as_deref(), Some("timeout after 2s (the cascade deadline)"));
    assert_eq!(tiebreaker(&p).verdict, JurorVerdict::Timeout);
    assert_eq!(tiebreaker(&p).error.as_deref(), Some("the cascade deadline passed before this juror could start"));
    assert_eq!(
        p.cut_short,
        [
            CutShort { juror: "gem".into(), by: CutBy::CascadeDeadline },
            CutShort { juror: "claude-tb".into(), by: CutBy::NotStarted }
        ]
    );
    assert_eq!((p.deadline_ms, p.final_verdict), (2000, FinalVerdict::Error));
    assert!(p.elapsed_ms >= 2000 && p.elapsed_ms < 6000, "{}", p.elapsed_ms);
    assert!(p.cross_family.degraded);
}

#[test]
fn a_juror_timeout_shorter_than_the_deadline_leaves_time_for_the_tiebreaker() {
    let mut g = juror("gem", GOOGLE, "sleep.sh", &[]);
    g.timeout_seconds = Some(1);
    let o = juror("gpt", OPENAI, "canned.sh", &["pass", "95", "{model}"]);
    let p = judge(&jury(vec![g, o], vec![claude_tb("pass", "85")], 20), "t0t2-jury", None).0;
    assert_eq!(stage_1(&p, 0).error.as_deref(), Some("timeout after 1s (its timeout_seconds)"));
    assert_eq!(p.cut_short, [CutShort { juror: "gem".into(), by: CutBy::JurorTimeout }]);
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Pass, 90));
    assert!(p.elapsed_ms < 5000, "{}", p.elapsed_ms);
}

#[test]
fn no_cross_family_tiebreaker_is_said_and_degrades_the_packet() {
    let g = juror("gem", GOOGLE, "exit-nonzero.sh", &[]);
    let o = juror("gpt", OPENAI, "canned.sh", &["pass", "95", "{model}"]);
    let gpt_big = juror("gpt-big", "gpt-5.4", "canned.sh", &["pass", "99", "{model}"]);
    // The author is Claude: claude-tb may not judge its own family's work.
    let p =
        judge(&jury(vec![g, o], vec![claude_tb("pass", "99"), gpt_big], 30), "t0t2-jury", Some("claude-opus-4.6")).0;
    assert_eq!(p.author_family, Some("anthropic"));
    assert!(p.cascade.escalated && p.cascade.stage_2_tiebreaker.is_none());
    let why = "no tiebreaker is cross-family against the author (anthropic) and the escalating juror(s) \
               (openai); candidates: claude-tb (anthropic), gpt-big (openai); add a juror of a family other than \
               anthropic and openai to `tiebreaker` in [jury]";
    assert_eq!(p.cascade.tiebreaker_unavailable.as_deref(), Some(why));
    assert_eq!((p.final_verdict, p.cross_family.degraded), (FinalVerdict::Error, true));
    assert_eq!(
        p.all_flags.last().map(String::as_str),
        Some(format!("⚠ CROSS-FAMILY DEGRADED: escalated but no tiebreaker could run: {why}").as_str())
    );
}

#[test]
fn every_lane_down_gives_an_error_and_the_no_lane_banner() {
    let g = juror("gem", GOOGLE, "exit-nonzero.sh", &[]);
    let o = juror("gpt", OPENAI, "empty.sh", &[]);
    let tb = juror("claude-tb", ANTHROPIC, "prose.sh", &[]);
    let p = judge(&jury(vec![g, o], vec![tb], 30), "t0t2-jury", None).0;
    assert_eq!((p.final_verdict, p.final_confidence), (FinalVerdict::Error, 0));
    assert_eq!((p.cross_family.distinct_families_returned, p.cross_family.down_lanes.len()), (0, 3));
    let banner = p.all_flags.last().expect("banner");
    assert!(banner.starts_with("⚠ CROSS-FAMILY DEGRADED: no lane returned a verdict (google ("), "{banner}");
    assert!(banner.ends_with("anthropic (no JSON object in response))"), "{banner}");
}
