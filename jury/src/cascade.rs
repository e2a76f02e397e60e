//! The cascade of docs/spec/jury.md §3 as pure functions over juror results.
//!
//! Nothing here runs a process, so every row of the spec's tables is a unit test. The
//! driver ([`crate::convene`]) runs the jurors and calls these in order: [`aggregate`]
//! stage 1, [`choose_tiebreaker`] when it escalates, then [`final_verdict`],
//! [`cross_family`] and [`all_flags`].

use std::collections::BTreeSet;

use crate::config;
use crate::packet::{Agreement, ConfidenceTier, CrossFamily, DownLane, FinalVerdict, JurorLine};
use crate::verdict::Verdict;

/// Stage 1's outcome (§3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StageOne {
    /// How the answers relate.
    pub agreement: Agreement,
    /// Whether an agreement was confident.
    pub confidence_tier: ConfidenceTier,
    /// Whether a tiebreaker must decide: anything but a confident agreement.
    pub escalate: bool,
    /// The families the tiebreaker must not merely repeat: those of the jurors whose
    /// answers caused the escalation (the ones that answered, when too few did).
    pub escalating_families: BTreeSet<&'static str>,
}

/// §3.1, in its order: too few answers, any uncertain, all equal (tier by threshold,
/// inclusive), otherwise pass against fail.
pub fn aggregate(stage_1: &[JurorLine], threshold: u8) -> StageOne {
    let answered: Vec<(&JurorLine, Verdict)> =
        stage_1.iter().filter_map(|j| j.verdict.real().map(|v| (j, v))).collect();
    let families = |pick: &dyn Fn(&JurorLine, Verdict) -> bool| -> BTreeSet<&'static str> {
        answered.iter().filter(|(j, v)| pick(j, *v)).map(|(j, _)| j.family).collect()
    };
    let outcome = |agreement, confidence_tier, escalate, escalating_families| StageOne {
        agreement,
        confidence_tier,
        escalate,
        escalating_families,
    };
    if answered.len() < 2 {
        return outcome(Agreement::Insufficient, ConfidenceTier::NotApplicable, true, families(&|_, _| true));
    }
    if answered.iter().any(|(_, v)| *v == Verdict::Uncertain) {
        let uncertain = families(&|_, v| v == Verdict::Uncertain);
        return outcome(Agreement::Disagree, ConfidenceTier::NotApplicable, true, uncertain);
    }
    if answered.iter().all(|(_, v)| *v == answered[0].1) {
        let low = families(&|j, _| j.confidence < threshold);
        let tier = if low.is_empty() { ConfidenceTier::High } else { ConfidenceTier::Low };
        return outcome(Agreement::Agree, tier, !low.is_empty(), low);
    }
    outcome(Agreement::Disagree, ConfidenceTier::NotApplicable, true, families(&|_, _| true))
}

/// Why no configured tiebreaker could be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "no tiebreaker is cross-family against the author ({}) and the escalating juror(s) ({}); \
     candidates: {candidates}; add a juror of a family other than {} to `tiebreaker` in [jury]",
    author.unwrap_or("unknown"),
    escalating.join(", "),
    self.families_to_avoid().join(" and ")
)]
pub struct NoTiebreaker {
    /// The author's family, which no tiebreaker may share (`None`: unknown author).
    pub author: Option<&'static str>,
    /// The families of the jurors whose answers escalated.
    pub escalating: Vec<&'static str>,
    /// Every configured candidate as `name (family)`, so the message says what to add.
    pub candidates: String,
}

impl NoTiebreaker {
    /// The families a tiebreaker that surely fits is of none of: the author's and the
    /// escalating jurors'.
    fn families_to_avoid(&self) -> Vec<&'static str> {
        let mut families: Vec<&'static str> = self.author.into_iter().collect();
        families.extend(self.escalating.iter().filter(|f| Some(**f) != self.author));
        families
    }
}

/// The first candidate of another family than the author that is not of the same family
/// as every escalating juror, preferring one of a family none of them has.
pub fn choose_tiebreaker<'a>(
    candidates: &'a [config::Juror],
    author: Option<&'static str>,
    stage: &StageOne,
) -> Result<&'a config::Juror, NoTiebreaker> {
    let escalating = &stage.escalating_families;
    let eligible = |c: &&config::Juror| {
        Some(c.family) != author && (escalating.is_empty() || escalating.iter().any(|f| *f != c.family))
    };
    let mut eligible = candidates.iter().filter(eligible).peekable();
    let first = eligible.peek().copied();
    eligible.find(|c| !escalating.contains(c.family)).or(first).ok_or_else(|| NoTiebreaker {
        author,
        escalating: escalating.iter().copied().collect(),
        candidates: candidates.iter().map(|c| format!("{} ({})", c.name(), c.family)).collect::<Vec<_>>().join(", "),
    })
}

/// §3.2, "tiebreaker-weighted"; every division floored. `tiebreaker` is `None` when the
/// cascade escalated but none could run, which is an error like a failed tiebreaker.
pub fn final_verdict(stage_1: &[JurorLine], stage: &StageOne, tiebreaker: Option<&JurorLine>) -> (FinalVerdict, u8) {
    let answered = || stage_1.iter().filter_map(|j| j.verdict.real().map(|v| (j.confidence, v)));
    if !stage.escalate {
        let verdict = answered().next().map_or(FinalVerdict::Error, |(_, v)| v.into());
        return (verdict, floor_mean(answered().map(|(c, _)| c), None));
    }
    match tiebreaker.and_then(|t| t.verdict.real().map(|v| (t.confidence, v))) {
        None => (FinalVerdict::Error, 0),
        Some((confidence, Verdict::Uncertain)) => (FinalVerdict::Uncertain, confidence),
        Some((confidence, verdict)) => {
            let siding = answered().filter(|(_, v)| *v == verdict).map(|(c, _)| c);
            (verdict.into(), floor_mean(siding, Some(confidence)))
        }
    }
}

/// floor(mean), or with `weight`: floor((weight + mean) / 2), and just `weight` when
/// there is nothing to average. Integer arithmetic, so exactly the spec's floors.
fn floor_mean(values: impl Iterator<Item = u8>, weight: Option<u8>) -> u8 {
    let (sum, n) = values.fold((0u64, 0u64), |(s, n), c| (s + u64::from(c), n + 1));
    let value = match (weight, n) {
        (None, 0) => 0,
        (None, n) => sum / n,
        (Some(w), 0) => u64::from(w),
        (Some(w), n) => (u64::from(w) * n + sum) / (2 * n),
    };
    value.min(100) as u8
}

/// §3.5 over every juror that ran. A cascade that needed a tiebreaker and could not get a
/// cross-family one is degraded whatever stage 1 returned.
pub fn cross_family(jurors: &[&JurorLine], tiebreaker_unavailable: bool) -> CrossFamily {
    let returned = families_returned(jurors);
    let down_lanes = jurors
        .iter()
        .filter(|j| j.is_down())
        .map(|j| DownLane { family: j.family, model: j.model.clone(), reason: down_reason(j), juror: j.name.clone() })
        .collect();
    CrossFamily {
        distinct_families_returned: returned.len(),
        degraded: returned.len() < 2 || tiebreaker_unavailable,
        down_lanes,
    }
}

/// The families that returned a real verdict, in first-seen order.
fn families_returned(jurors: &[&JurorLine]) -> Vec<&'static str> {
    let mut seen = Vec::new();
    for j in jurors.iter().filter(|j| !j.is_down()) {
        if !seen.contains(&j.family) {
            seen.push(j.family);
        }
    }
    seen
}

fn down_reason(juror: &JurorLine) -> String {
    let error = juror.error.as_deref().map(str::trim).filter(|e| !e.is_empty());
    let flag = juror.flags.first().map(|f| f.trim()).filter(|f| !f.is_empty());
    error.or(flag).unwrap_or("no verdict returned").to_owned()
}

/// §3.4: every juror's flags once, in juror order, then the degraded banner (not deduped).
pub fn all_flags(jurors: &[&JurorLine], health: &CrossFamily, tiebreaker_unavailable: Option<&str>) -> Vec<String> {
    let mut flags: Vec<String> = Vec::new();
    for flag in jurors.iter().flat_map(|j| &j.flags) {
        if !flags.contains(flag) {
            flags.push(flag.clone());
        }
    }
    if health.degraded {
        flags.push(banner(jurors, health, tiebreaker_unavailable));
    }
    flags
}

/// The degraded banner, in the reference's three forms plus ours for a missing tiebreaker.
fn banner(jurors: &[&JurorLine], health: &CrossFamily, tiebreaker_unavailable: Option<&str>) -> String {
    let returned = families_returned(jurors).join(", ");
    let down = health.down_lanes.iter().map(|d| format!("{} ({})", d.family, d.reason)).collect::<Vec<_>>().join(", ");
    match (tiebreaker_unavailable, returned.is_empty(), down.is_empty()) {
        (Some(why), _, _) => format!("⚠ CROSS-FAMILY DEGRADED: escalated but no tiebreaker could run: {why}"),
        (None, true, true) => "⚠ CROSS-FAMILY DEGRADED: no lane returned a verdict".to_owned(),
        (None, true, false) => format!("⚠ CROSS-FAMILY DEGRADED: no lane returned a verdict ({down})"),
        (None, false, false) => format!("⚠ CROSS-FAMILY DEGRADED: only {returned} returned; {down} lane(s) down"),
        (None, false, true) => format!(
            "⚠ CROSS-FAMILY DEGRADED: only {returned} family returned a verdict (need ≥2 distinct families for cross-family)"
        ),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::packet::JurorVerdict;

    /// A packet juror for the tables: `verdict` with `confidence`, family from `family`.
    pub(crate) fn juror(name: &str, family: &'static str, verdict: JurorVerdict, confidence: u8) -> JurorLine {
        JurorLine {
            model: format!("{family}-model"),
            family,
            verdict,
            confidence,
            flags: Vec::new(),
            tokens_in: 0,
            tokens_out: 0,
            latency_ms: 0,
            raw_response: None,
            error: None,
            name: name.into(),
            model_requested: format!("{family}-model"),
            model_reported: None,
            identity_source: None,
            argv: Vec::new(),
            exit_code: None,
            attempts: 1,
            judge: None,
        }
    }

    use JurorVerdict::{Error as E, Fail as F, Pass as P, Timeout as T, Uncertain as U};

    fn pair(a: (JurorVerdict, u8), b: (JurorVerdict, u8)) -> Vec<JurorLine> {
        vec![juror("g", "google", a.0, a.1), juror("o", "openai", b.0, b.1)]
    }

    fn set(families: &[&'static str]) -> BTreeSet<&'static str> {
        families.iter().copied().collect()
    }

    #[test]
    fn aggregation_table_of_section_3_1() {
        use Agreement::*;
        use ConfidenceTier::*;
        let cases = [
            ((E, 0), (P, 90), Insufficient, NotApplicable, true, set(&["openai"])),
            ((T, 0), (E, 0), Insufficient, NotApplicable, true, set(&[])),
            ((U, 90), (P, 95), Disagree, NotApplicable, true, set(&["google"])),
            ((U, 90), (U, 95), Disagree, NotApplicable, true, set(&["google", "openai"])),
            ((P, 80), (P, 100), Agree, High, false, set(&[])),
            ((F, 80), (F, 80), Agree, High, false, set(&[])),
            ((P, 79), (P, 100), Agree, Low, true, set(&["google"])),
            ((P, 90), (F, 90), Disagree, NotApplicable, true, set(&["google", "openai"])),
        ];
        for (a, b, agreement, tier, escalate, families) in cases {
            let got = aggregate(&pair(a, b), 80);
            assert_eq!(
                got,
                StageOne { agreement, confidence_tier: tier, escalate, escalating_families: families },
                "{a:?} {b:?}"
            );
        }
    }

    #[test]
    fn final_verdict_table_of_section_3_2() {
        let tb = |v, c| Some(juror("t", "anthropic", v, c));
        let cases = [
            ((P, 85), (P, 90), None, FinalVerdict::Pass, 87),
            ((F, 80), (F, 81), None, FinalVerdict::Fail, 80),
            ((P, 79), (P, 90), tb(P, 90), FinalVerdict::Pass, 87), // floor((90 + 84.5) / 2)
            ((P, 90), (F, 85), tb(F, 70), FinalVerdict::Fail, 77),
            ((P, 60), (P, 70), tb(F, 88), FinalVerdict::Fail, 88), // nobody sided: tb alone
            ((U, 90), (P, 90), tb(U, 55), FinalVerdict::Uncertain, 55),
            ((P, 70), (P, 70), tb(E, 0), FinalVerdict::Error, 0), // no fallback to the agreement
            ((E, 0), (P, 95), tb(T, 0), FinalVerdict::Error, 0),
            ((P, 50), (F, 50), None, FinalVerdict::Error, 0), // escalated, no tiebreaker
        ];
        for (a, b, tiebreaker, verdict, confidence) in cases {
            let stage_1 = pair(a, b);
            let stage = aggregate(&stage_1, 80);
            assert_eq!(final_verdict(&stage_1, &stage, tiebreaker.as_ref()), (verdict, confidence), "{a:?} {b:?}");
        }
    }

    #[test]
    fn health_same_family_is_degraded_and_a_tiebreaker_restores_it() {
        let same = [juror("a", "openai", P, 90), juror("b", "openai", P, 90)];
        let health = cross_family(&same.iter().collect::<Vec<_>>(), false);
        assert_eq!((health.distinct_families_returned, health.degraded), (1, true));
        assert_eq!(
            all_flags(&same.iter().collect::<Vec<_>>(), &health, None).last().map(String::as_str),
            Some(
                "⚠ CROSS-FAMILY DEGRADED: only openai family returned a verdict (need ≥2 distinct families for cross-family)"
            )
        );

        let mut down = juror("g", "google", E, 0);
        down.error = Some(" no JSON object in response ".into());
        let stage = [down, juror("o", "openai", P, 90)];
        let alone = cross_family(&stage.iter().collect::<Vec<_>>(), false);
        assert!(alone.degraded);
        let tb = juror("t", "anthropic", P, 90);
        let restored = cross_family(&[&stage[0], &stage[1], &tb], false);
        assert_eq!((restored.distinct_families_returned, restored.degraded), (2, false));
        // The lane down in stage 1 stays listed.
        assert_eq!(
            restored.down_lanes,
            [DownLane {
                family: "google",
                model: "google-model".into(),
                reason: "no JSON object in response".into(),
                juror: "g".into()
            }]
        );
        assert!(cross_family(&[&stage[0], &stage[1], &tb], true).degraded);
    }

    #[test]
    fn down_reason_falls_back_to_the_first_flag_then_a_default() {
        let mut flagged = juror("g", "google", E, 0);
        flagged.flags = vec![" CLI_NOT_INSTALLED ".into()];
        let bare = juror("o", "openai", T, 0);
        let health = cross_family(&[&flagged, &bare], false);
        let reasons: Vec<_> = health.down_lanes.iter().map(|d| d.reason.as_str()).collect();
        assert_eq!(reasons, ["CLI_NOT_INSTALLED", "no verdict returned"]);
        assert_eq!(
            all_flags(&[&flagged, &bare], &health, None).last().map(String::as_str),
            Some(
                "⚠ CROSS-FAMILY DEGRADED: no lane returned a verdict (google (CLI_NOT_INSTALLED), openai (no verdict returned))"
            )
        );
    }

    #[test]
    fn flags_are_deduplicated_in_juror_order_and_the_banner_is_appended() {
        let mut a = juror("g", "google", P, 90);
        a.flags = vec!["x".into(), "y".into()];
        let mut b = juror("o", "openai", E, 0);
        b.flags = vec!["y".into(), "z".into(), "X".into()];
        let health = cross_family(&[&a, &b], false);
        let flags = all_flags(&[&a, &b], &health, None);
        assert_eq!(flags[..4], ["x", "y", "z", "X"]);
        assert_eq!(flags[4], "⚠ CROSS-FAMILY DEGRADED: only google returned; openai (y) lane(s) down");
        let healthy = CrossFamily { distinct_families_returned: 2, degraded: false, down_lanes: vec![] };
        assert_eq!(all_flags(&[&a], &healthy, None), ["x", "y"]);
        assert!(all_flags(&[&a], &health, Some("why"))[2].ends_with("no tiebreaker could run: why"));
    }

    fn candidate(name: &str, family: &'static str) -> config::Juror {
        let config = config::JurorConfig {
            name: name.into(),
            preset: config::Preset::Command,
            model: format!("{family}-model"),
            bin: None,
            extra_args: vec![],
            env: Default::default(),
            env_strip: vec![],
            timeout_seconds: None,
            command: Some(vec!["true".into()]),
            price: None,
        };
        config::Juror { config, family }
    }

    #[test]
    fn tiebreaker_is_cross_family_against_author_and_escalating_jurors() {
        let candidates = [candidate("gpt", "openai"), candidate("gem", "google"), candidate("claude", "anthropic")];
        let pick = |a, b, author| {
            choose_tiebreaker(&candidates, author, &aggregate(&pair(a, b), 80)).map(|c| c.name().to_owned())
        };
        // google uncertain: anything but google; gpt is first.
        assert_eq!(pick((U, 90), (P, 90), None).as_deref(), Ok("gpt"));
        // pass against fail: a third family is preferred ...
        assert_eq!(pick((P, 90), (F, 90), None).as_deref(), Ok("claude"));
        // ... unless it is the author's; then one of the two sides will do.
        assert_eq!(pick((P, 90), (F, 90), Some("anthropic")).as_deref(), Ok("gpt"));
        // Only openai answered: the tiebreaker must bring another family.
        assert_eq!(pick((E, 0), (P, 90), Some("google")).as_deref(), Ok("claude"));
        assert_eq!(pick((E, 0), (P, 90), Some("anthropic")).as_deref(), Ok("gem"));
        let only_same = choose_tiebreaker(&candidates[..1], None, &aggregate(&pair((E, 0), (P, 90)), 80));
        assert_eq!(
            only_same.map(super::super::config::Juror::name).expect_err("only openai").to_string(),
            "no tiebreaker is cross-family against the author (unknown) and the escalating juror(s) (openai); \
             candidates: gpt (openai); add a juror of a family other than openai to `tiebreaker` in [jury]"
        );
    }
}
