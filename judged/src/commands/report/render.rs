//! `judged report [--since 7d] [--html FILE] [--json]`: what the gate decided, per
//! project and session, with the review or jury behind each allow and why each block.
//!
//! The daemon answers `Request::Report` from its journal; this renders it as a text
//! table, or as one self-contained HTML file (inline CSS, no scripts, no network) with a
//! timeline and a table. Every string from the journal is escaped in the HTML.

use chrono::{DateTime, Utc};
use judged_core::event::SessionId;
use judged_core::rules::IdentityAssurance;
use judged_protocol::{CompletionBypassed, Decision, ReportData, ReportDecision, ReportJury, ReportReview};
use std::collections::BTreeMap;
use std::fmt::Write;

/// What was completed: the task, or the host's stop.
fn completion(b: &CompletionBypassed) -> String {
    match &b.task_id {
        Some(task) => format!("task {task}"),
        None => format!("stop ({})", b.event),
    }
}

/// How it went around the gate: ended on the gate's block, or with no decision allowing it.
fn bypass_why(b: &CompletionBypassed) -> String {
    match &b.forced_end {
        Some(forced) => forced.to_string(),
        None => "no decision of the gate allowed it: the hook did not run, or its answer was not heeded".into(),
    }
}

/// The decisions grouped by project, then session, each in the order first seen.
type Groups<'a> = BTreeMap<String, Vec<(String, Vec<&'a ReportDecision>)>>;

fn groups(data: &ReportData) -> Groups<'_> {
    let mut groups: Groups = BTreeMap::new();
    for d in &data.decisions {
        let project = d.decision.cwd.clone().unwrap_or_else(|| "(no project)".into());
        let session = d.decision.session_id.as_ref().map_or_else(|| "(no session)".to_owned(), ToString::to_string);
        let sessions = groups.entry(project).or_default();
        match sessions.iter_mut().find(|(s, _)| *s == session) {
            Some((_, decisions)) => decisions.push(d),
            None => sessions.push((session, vec![d])),
        }
    }
    groups
}

fn allowed(d: &ReportDecision) -> bool {
    d.decision.decision == Decision::Allow
}

/// The task as the gate named it: `task 7 "Fix cart rounding"`, or the event. A record
/// from before the subject was kept has it only in the message.
fn task(d: &ReportDecision) -> String {
    let subject = d.decision.task_subject.clone().or_else(|| {
        let (_, rest) = d.decision.message.split_once("task \"")?;
        let end = rest.find("\" ").or_else(|| rest.find("\"."))?;
        Some(rest[..end].to_owned())
    });
    match (&d.decision.task_id, subject) {
        (Some(id), Some(subject)) => format!("task {id} \"{subject}\""),
        (Some(id), None) => format!("task {id}"),
        (None, Some(subject)) => format!("task \"{subject}\""),
        (None, None) => format!("this {}", d.decision.event),
    }
}

/// Why a block: the first line of what the host was told, without the `judged:` prefix.
fn why(d: &ReportDecision) -> String {
    let first = d.decision.message.lines().next().unwrap_or_default();
    first.strip_prefix("judged: ").unwrap_or(first).to_owned()
}

fn or_unknown(value: Option<&str>) -> &str {
    value.unwrap_or("unknown")
}

fn review_line(r: &ReportReview) -> String {
    let score = r.score.map_or_else(|| "no score".to_owned(), |s| format!("score {s}"));
    format!(
        "review {}: {} ({}) reviewed {} ({}), {score} {}; identity {}; reviewed {}, verified {}; witness {}",
        r.evidence_id,
        or_unknown(r.reviewer_model.as_deref()),
        or_unknown(r.reviewer_family.as_deref()),
        or_unknown(r.executor_model.as_deref()),
        or_unknown(r.executor_family.as_deref()),
        or_unknown(r.verdict.as_deref()),
        identity(r),
        or_unknown(r.reviewed_at.as_deref()),
        r.verified_at,
        r.witness
    )
}

/// How the reviewer's identity is known, and from where: a host's record, or only the
/// word of the caller, whose call the host's log holds.
fn identity(r: &ReportReview) -> String {
    match r.identity_assurance {
        IdentityAssurance::HostRecorded => {
            format!("host-recorded, from {} {}", r.identity_source, r.session_events)
        }
        IdentityAssurance::CallerDeclared => format!(
            "caller-declared: the reviewer is only {} (the call is in the {} session log {})",
            r.identity_source,
            r.host.as_str(),
            r.session_events
        ),
    }
}

fn jury_line(j: &ReportJury) -> String {
    let families: std::collections::BTreeSet<&str> = j
        .jurors
        .iter()
        .filter(|juror| !matches!(juror.verdict.as_str(), "error" | "timeout"))
        .filter_map(|juror| juror.family.as_deref())
        .collect();
    format!(
        "jury {}: confidence {}, rubric {}, {} famil{} answered ({}){}; panel {}",
        j.final_verdict,
        j.final_confidence,
        j.rubric,
        families.len(),
        if families.len() == 1 { "y" } else { "ies" },
        families.into_iter().collect::<Vec<_>>().join(", "),
        if j.degraded { ", DEGRADED" } else { "" },
        j.key
    )
}

fn juror_line(juror: &judged_protocol::ReportJuror) -> String {
    format!(
        "{} {} ({}): asked {}, answered {} [{}; identity: {}] -> {} {}{}",
        juror.stage,
        juror.name,
        or_unknown(juror.family.as_deref()),
        juror.model_requested,
        or_unknown(juror.model_reported.as_deref()),
        or_unknown(juror.family.as_deref()),
        or_unknown(juror.identity_source.as_deref()),
        juror.verdict,
        juror.confidence,
        juror.error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default()
    )
}

fn summary(data: &ReportData) -> String {
    let allows = data.decisions.iter().filter(|d| allowed(d)).count();
    format!(
        "{} decision(s) since {} (generated {}): {allows} allowed, {} blocked",
        data.decisions.len(),
        data.since.as_deref().unwrap_or("the journal began"),
        data.generated_at,
        data.decisions.len() - allows
    )
}

/// The text report.
pub fn text(data: &ReportData) -> String {
    let mut out = format!("judged report: {}\n", summary(data));
    for (project, sessions) in groups(data) {
        let _ = write!(out, "\nproject {project}\n");
        for (session, decisions) in sessions {
            let host = decisions.first().map(|d| d.decision.host.as_str()).unwrap_or_default();
            let _ = writeln!(out, "  session {session} ({host})");
            for d in decisions {
                text_decision(&mut out, d);
            }
        }
    }
    text_traces(&mut out, data);
    text_bypassed(&mut out, data);
    out
}

/// One decision of the text report, with what is behind it.
fn text_decision(out: &mut String, d: &ReportDecision) {
    let g = &d.decision;
    let _ = writeln!(
        out,
        "    {:<27} {:<5} {:<14} policy {:<17} {}",
        d.at,
        if allowed(d) { "ALLOW" } else { "BLOCK" },
        g.event,
        judged_protocol::wire_name(&g.policy),
        task(d)
    );
    let _ = writeln!(out, "        reason: {}", g.reason);
    if !allowed(d) && !g.message.is_empty() {
        let _ = writeln!(out, "        why:    {}", why(d));
    }
    if let Some(review) = &d.review {
        let _ = writeln!(out, "        {}", review_line(review));
    }
    if let Some(jury) = &d.jury {
        let _ = writeln!(out, "        {}", jury_line(jury));
        for juror in &jury.jurors {
            let _ = writeln!(out, "          {}", juror_line(juror));
        }
        for down in &jury.down {
            let _ = writeln!(out, "          down: {down}");
        }
        if !allowed(d) {
            for flag in &jury.flags {
                let _ = writeln!(out, "          flag: {flag}");
            }
        }
    }
    if allowed(d) && d.review.is_none() && d.jury.is_none() {
        let _ = writeln!(out, "        behind it: no review (allowed by the rule above)");
    }
}

/// The text report's review calls traced.
fn text_traces(out: &mut String, data: &ReportData) {
    if !data.traces.is_empty() {
        out.push_str("\nreview calls traced\n");
        for t in &data.traces {
            let p = &t.provenance;
            let _ = writeln!(
                out,
                "  {:<27} {} {} {} {}: reviewer {} ({}), executor {} ({}), families {}",
                t.at,
                t.skill,
                t.purpose,
                t.backend,
                t.status,
                or_unknown(p.reviewer_model.as_deref()),
                or_unknown(p.reviewer_family.as_deref()),
                or_unknown(p.executor_model.as_deref()),
                or_unknown(p.executor_family.as_deref()),
                p.family_relation.as_str()
            );
        }
    }
}

/// The text report's completions no gate decision allowed.
fn text_bypassed(out: &mut String, data: &ReportData) {
    if !data.bypassed.is_empty() {
        out.push_str("\ncompletions without the gate allowing them\n");
        for b in &data.bypassed {
            let _ = writeln!(
                out,
                "  {:<27} session {} {} in {} ({}:{})",
                or_unknown(b.completed_at.as_deref()),
                or_unknown(b.session_id.as_ref().map(SessionId::as_str)),
                completion(b),
                or_unknown(Some(b.cwd.as_str()).filter(|cwd| !cwd.is_empty())),
                b.path,
                b.line
            );
            let _ = writeln!(out, "        why: {}", bypass_why(b));
        }
    }
}

/// `text` escaped for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem;color:#1d232a;background:#fff}
h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.15rem;margin:2rem 0 .5rem}
.summary{color:#4a5560;margin-bottom:1rem}
.counts span{display:inline-block;margin-right:1rem;padding:.2rem .6rem;border-radius:4px}
.allow{background:#e3f4e6;color:#17642a}.block{background:#fbe3e3;color:#8a1c1c}
table{border-collapse:collapse;width:100%;margin-top:.5rem}
th,td{border-bottom:1px solid #dde2e6;padding:.35rem .5rem;text-align:left;vertical-align:top}
th{background:#f3f5f7;font-weight:600}
tr.project td{background:#eef1f4;font-weight:600;padding-top:.8rem}
tr.session td{background:#f8f9fa;color:#4a5560}
td.verdict{font-weight:700;white-space:nowrap}
td.time{white-space:nowrap;font-family:ui-monospace,monospace;font-size:12px}
ul.jurors{margin:.2rem 0 0;padding-left:1.1rem}
code{font-family:ui-monospace,monospace;font-size:12px;word-break:break-all}
details pre{white-space:pre-wrap;background:#f8f9fa;padding:.5rem;margin:.3rem 0}
.timeline{border:1px solid #dde2e6;border-radius:4px;background:#fbfcfd}
.muted{color:#6b7680}
";

/// The HTML report: one self-contained file.
pub fn html(data: &ReportData) -> String {
    let allows = data.decisions.iter().filter(|d| allowed(d)).count();
    let blocks = data.decisions.len() - allows;
    let mut out = String::new();
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>judged report</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<h1>judged: review gate report</h1>\n");
    let _ = writeln!(out, "<p class=\"summary\">{}</p>", escape(&summary(data)));
    let _ = writeln!(
        out,
        "<p class=\"counts\"><span class=\"allow\">{allows} allowed</span><span class=\"block\">{blocks} blocked</span></p>"
    );
    out.push_str("<h2>Timeline</h2>\n");
    out.push_str(&timeline(data));
    out.push_str("<h2>Decisions by project and session</h2>\n<table>\n<thead><tr><th>Time (UTC)</th><th>Task</th>");
    out.push_str(
        "<th>Event</th><th>Policy</th><th>Decision</th><th>Reason</th><th>Behind it</th></tr></thead>\n<tbody>\n",
    );
    for (project, sessions) in groups(data) {
        let _ = writeln!(
            out,
            "<tr class=\"project\"><td colspan=\"7\">Project <code>{}</code></td></tr>",
            escape(&project)
        );
        for (session, decisions) in sessions {
            let host = decisions.first().map(|d| d.decision.host.as_str()).unwrap_or_default();
            let _ = writeln!(
                out,
                "<tr class=\"session\"><td colspan=\"7\">Session <code>{}</code> ({})</td></tr>",
                escape(&session),
                escape(host)
            );
            for d in decisions {
                row(&mut out, d);
            }
        }
    }
    if data.decisions.is_empty() {
        out.push_str("<tr><td colspan=\"7\" class=\"muted\">No gate decisions in this period.</td></tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    html_traces(&mut out, data);
    html_bypassed(&mut out, data);
    out.push_str(
        "<p class=\"muted\">Written by <code>judged report</code> from the daemon's hash-chained journal.</p>\n",
    );
    out.push_str("</body>\n</html>\n");
    out
}

/// The HTML report's review calls traced.
fn html_traces(out: &mut String, data: &ReportData) {
    if !data.traces.is_empty() {
        out.push_str(
            "<h2>Review calls traced</h2>\n<table>\n<thead><tr><th>Time (UTC)</th><th>Skill</th><th>Purpose</th>",
        );
        out.push_str("<th>Backend</th><th>Status</th><th>Reviewer</th><th>Executor</th><th>Families</th></tr></thead>\n<tbody>\n");
        for t in &data.traces {
            let p = &t.provenance;
            let _ = writeln!(
                out,
                "<tr><td class=\"time\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} ({})</td><td>{} ({})</td><td>{}</td></tr>",
                escape(&t.at),
                escape(&t.skill),
                escape(&t.purpose),
                escape(&t.backend),
                escape(&t.status),
                escape(or_unknown(p.reviewer_model.as_deref())),
                escape(or_unknown(p.reviewer_family.as_deref())),
                escape(or_unknown(p.executor_model.as_deref())),
                escape(or_unknown(p.executor_family.as_deref())),
                escape(p.family_relation.as_str())
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
}

/// The HTML report's completions no gate decision allowed.
fn html_bypassed(out: &mut String, data: &ReportData) {
    if !data.bypassed.is_empty() {
        out.push_str(
            "<h2>Completions without the gate allowing them</h2>\n<table>\n<thead><tr><th>Completed (UTC)</th>",
        );
        out.push_str(
            "<th>Session</th><th>Completion</th><th>Why</th><th>Project</th><th>Log</th></tr></thead>\n<tbody>\n",
        );
        for b in &data.bypassed {
            let _ = writeln!(
                out,
                "<tr><td class=\"time\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}:{}</td></tr>",
                escape(or_unknown(b.completed_at.as_deref())),
                escape(or_unknown(b.session_id.as_ref().map(SessionId::as_str))),
                escape(&completion(b)),
                escape(&bypass_why(b)),
                escape(or_unknown(Some(b.cwd.as_str()).filter(|cwd| !cwd.is_empty()))),
                escape(&b.path),
                b.line
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
}

fn row(out: &mut String, d: &ReportDecision) {
    let g = &d.decision;
    let (class, verdict) = if allowed(d) { ("allow", "ALLOW") } else { ("block", "BLOCK") };
    let mut behind = String::new();
    if let Some(r) = &d.review {
        let _ = write!(
            behind,
            "<div><b>Review</b> <code>{}</code>: {} ({}) reviewed {} ({}), score {} {}.<br>Identity {}; \
             reviewed {}, verified {}; witness <code>{}</code></div>",
            escape(r.evidence_id.as_str()),
            escape(or_unknown(r.reviewer_model.as_deref())),
            escape(or_unknown(r.reviewer_family.as_deref())),
            escape(or_unknown(r.executor_model.as_deref())),
            escape(or_unknown(r.executor_family.as_deref())),
            r.score.map_or_else(|| "-".to_owned(), |s| s.to_string()),
            escape(or_unknown(r.verdict.as_deref())),
            escape(&identity(r)),
            escape(or_unknown(r.reviewed_at.as_deref())),
            escape(&r.verified_at),
            escape(&r.witness)
        );
    }
    if let Some(j) = &d.jury {
        let _ = write!(behind, "<div><b>Jury</b> {}<ul class=\"jurors\">", escape(&jury_line(j)));
        for juror in &j.jurors {
            let _ = write!(behind, "<li>{}</li>", escape(&juror_line(juror)));
        }
        for down in &j.down {
            let _ = write!(behind, "<li>down: {}</li>", escape(down));
        }
        if !allowed(d) {
            for flag in &j.flags {
                let _ = write!(behind, "<li>flag: {}</li>", escape(flag));
            }
        }
        behind.push_str("</ul></div>");
    }
    if allowed(d) && d.review.is_none() && d.jury.is_none() {
        behind.push_str("<span class=\"muted\">no review: allowed by the rule in the reason</span>");
    }
    let mut reason = escape(&g.reason);
    if !g.message.is_empty() {
        let _ = write!(
            reason,
            "<details><summary>{}</summary><pre>{}</pre></details>",
            if allowed(d) { "message" } else { "why it blocked" },
            escape(&g.message)
        );
    }
    let _ = writeln!(
        out,
        "<tr id=\"d{}\"><td class=\"time\">{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"verdict {class}\">{verdict}</td>\
         <td>{reason}</td><td>{behind}</td></tr>",
        d.seq,
        escape(&d.at),
        escape(&task(d)),
        escape(g.event.as_str()),
        escape(&judged_protocol::wire_name(&g.policy)),
    );
}

/// An inline SVG: one mark per decision along the period, allows above, blocks below.
fn timeline(data: &ReportData) -> String {
    let parse = |at: &str| judged_core::timestamp::parse(at);
    let times: Vec<DateTime<Utc>> = data.decisions.iter().filter_map(|d| parse(&d.at)).collect();
    let (Some(first), Some(last)) = (times.iter().min(), times.iter().max()) else {
        return "<p class=\"muted\">No decisions to place on the timeline.</p>\n".to_owned();
    };
    // The decisions' own span: a week's window with a morning's decisions would crowd them.
    let start = *first;
    let span = (*last - start).num_milliseconds().max(1) as f64;
    let (width, left, right) = (960.0, 70.0, 20.0);
    let mut svg = format!(
        "<svg class=\"timeline\" role=\"img\" aria-label=\"decisions over time\" viewBox=\"0 0 {width} 110\" width=\"100%\">\n"
    );
    let _ = writeln!(svg, "<text x=\"8\" y=\"34\" font-size=\"12\" fill=\"#17642a\">allowed</text>");
    let _ = writeln!(svg, "<text x=\"8\" y=\"74\" font-size=\"12\" fill=\"#8a1c1c\">blocked</text>");
    let _ = writeln!(svg, "<line x1=\"{left}\" y1=\"90\" x2=\"{}\" y2=\"90\" stroke=\"#9aa5b1\"/>", width - right);
    for d in &data.decisions {
        let Some(at) = parse(&d.at) else { continue };
        let x = left + (at - start).num_milliseconds() as f64 / span * (width - left - right);
        let (y, fill) = if allowed(d) { (30.0, "#2e9e4a") } else { (70.0, "#d13b3b") };
        let label = format!(
            "{} {} {} ({}): {}",
            d.at,
            if allowed(d) { "ALLOW" } else { "BLOCK" },
            task(d),
            d.decision.cwd.as_deref().unwrap_or("-"),
            d.decision.reason
        );
        let _ = writeln!(
            svg,
            "<a href=\"#d{}\"><circle cx=\"{x:.1}\" cy=\"{y}\" r=\"6\" fill=\"{fill}\" fill-opacity=\"0.8\"><title>{}</title></circle></a>",
            d.seq,
            escape(&label)
        );
    }
    let _ = writeln!(
        svg,
        "<text x=\"{left}\" y=\"105\" font-size=\"11\" fill=\"#4a5560\">{}</text>",
        escape(&judged_core::timestamp::format_utc(start))
    );
    let _ = writeln!(
        svg,
        "<text x=\"{}\" y=\"105\" font-size=\"11\" fill=\"#4a5560\" text-anchor=\"end\">{}</text>",
        width - right,
        escape(&d_at(last))
    );
    svg.push_str("</svg>\n");
    svg
}

fn d_at(t: &DateTime<Utc>) -> String {
    judged_core::timestamp::format_utc(*t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_only_its_caller_vouches_for_says_so() {
        let review = ReportReview {
            evidence_id: judged_core::rules::EvidenceId::parse("cne_0123456789abcdef0123456789abcdef").unwrap(),
            host: judged_core::event::Host::ClaudeCode,
            session_id: None,
            session_events: "/p/s.jsonl".into(),
            identity_source: "the caller's word (verify --declared-reviewer-model)".into(),
            identity_assurance: IdentityAssurance::CallerDeclared,
            executor_model: Some("claude-sonnet-4.6".into()),
            executor_family: Some("anthropic".into()),
            reviewer_model: Some("gpt-5.4".into()),
            reviewer_family: Some("openai".into()),
            score: Some(8.0),
            verdict: Some("ready".into()),
            reviewed_at: None,
            verified_at: "t".into(),
            witness: "w".into(),
        };
        let line = review_line(&review);
        assert!(
            line.contains(
                "identity caller-declared: the reviewer is only the caller's word (verify --declared-reviewer-model) \
                 (the call is in the claude-code session log /p/s.jsonl)"
            ),
            "{line}"
        );
        let recorded = ReportReview { identity_assurance: IdentityAssurance::HostRecorded, ..review };
        assert!(review_line(&recorded).contains("identity host-recorded, from "), "{}", review_line(&recorded));
    }

    #[test]
    fn html_escapes_what_it_is_given() {
        assert_eq!(
            escape("<script>\"a\" & 'b'</script>"),
            "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;"
        );
    }
}
