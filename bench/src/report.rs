//! The figures as markdown tables, and the issue's targets as ratios, each met or missed.

use crate::attest::AttestFigures;
use crate::jury::{FAST_SECONDS, JuryFigures, SLOW_SECONDS};
use crate::load::LoadFigures;
use crate::measure::Samples;
use crate::{CONCURRENT_CALLERS, MB, Mode, Options, PAUSE, Results, Stage};
use serde_json::{Map, Value, json};
use std::fmt::Write;

fn ms(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0} ms")
    } else if value >= 10.0 {
        format!("{value:.1} ms")
    } else {
        format!("{value:.2} ms")
    }
}

fn ratio(value: f64) -> String {
    if value >= 100.0 { format!("{value:.0}×") } else { format!("{value:.2}×") }
}

fn mb_per_s(bytes: u64, ms: f64) -> f64 {
    bytes as f64 / MB as f64 / (ms / 1000.0)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// The floor of a daemon-mode call: spawning `/bin/true` plus one socket round trip.
fn floor(spawn_true: &Samples, stage: &Stage) -> f64 {
    spawn_true.median() + stage.rtt.median()
}

/// One line of progress per root size, on stderr.
pub fn stage_line(stage: &Stage, spawn_true: &Samples) -> String {
    format!(
        "judged-bench: {} MB: ingest {:.0} MB/s (sha256sum {:.0} MB/s); challenge daemon {} (floor {}), direct {} ({}), --session-root {} ({}), re-read {}; refusal daemon {}, direct {}; verify daemon {}, direct {}",
        stage.mb,
        mb_per_s(stage.bytes, stage.ingest_ms),
        mb_per_s(stage.bytes, stage.sha_ms),
        ms(stage.challenge_daemon.median()),
        ms(floor(spawn_true, stage)),
        ms(stage.challenge_direct.median()),
        mib(stage.challenge_direct_rss.median() as u64),
        ms(stage.challenge_session_root.median()),
        mib(stage.challenge_session_root_rss.median() as u64),
        ms(stage.reparse.median()),
        ms(stage.refusal_daemon.median()),
        ms(stage.refusal_direct.median()),
        ms(stage.verify_daemon.median()),
        ms(stage.verify_direct.median()),
    )
}

struct Target {
    /// A stable name, for comparing runs.
    key: &'static str,
    what: String,
    target: String,
    measured: String,
    met: bool,
    /// The figure itself, and which way is better.
    value: f64,
    lower_is_better: bool,
}

/// The stage the issue's 192 MB figures are read at (the nearest size run).
fn at_192(stages: &[Stage]) -> &Stage {
    stages.iter().min_by_key(|s| s.mb.abs_diff(192)).expect("at least one stage")
}

/// Every target a run of this mode measured.
fn targets(r: &Results) -> Vec<Target> {
    let mut out = if r.mode == Mode::Full { stage_targets(r) } else { Vec::new() };
    out.extend(r.jury.as_ref().map(jury_targets).unwrap_or_default());
    out.extend(r.load.as_ref().map(load_targets).unwrap_or_default());
    out.extend(r.attest.as_ref().map(attest_targets).unwrap_or_default());
    out
}

fn attest_targets(a: &AttestFigures) -> Vec<Target> {
    let value = a.every_commit.median();
    vec![Target {
        key: "attest_check_every_commit_ms",
        what: format!(
            "`judge-evidence check --every-commit` of {} attested commits, median of {} (issue 34)",
            a.commits,
            a.every_commit.len()
        ),
        target: "≤ 1000 ms".into(),
        measured: ms(value),
        met: value <= 1000.0,
        value,
        lower_is_better: true,
    }]
}

/// A spawned client's latency next to spawning `/bin/true`, median and p99: ≤ 2×.
fn vs_true(out: &mut Vec<Target>, keys: [&'static str; 2], what: &str, s: &Samples, spawn_true: &Samples) {
    for (key, name, q) in [(keys[0], "median", 0.5), (keys[1], "p99", 0.99)] {
        let (value, floor) = (s.quantile(q), spawn_true.quantile(q));
        out.push(Target {
            key,
            what: format!("{what} vs `/bin/true` spawn, {name}"),
            target: "≤ 2×".into(),
            measured: format!("{} ({} vs {})", ratio(value / floor), ms(value), ms(floor)),
            met: value / floor <= 2.0,
            value: value / floor,
            lower_is_better: true,
        });
    }
}

fn jury_targets(j: &JuryFigures) -> Vec<Target> {
    let mut out = Vec::new();
    for (key, name, value) in
        [("jury_overhead_median_ms", "median", j.overhead.median()), ("jury_overhead_p99_ms", "p99", j.overhead.p99())]
    {
        out.push(Target {
            key,
            what: format!(
                "jury overhead over its slowest juror (`judge-evidence panel` end to end − the slowest juror's own wall time), {name} of {} (issue 12)",
                j.overhead.len()
            ),
            target: "≤ 50 ms".into(),
            measured: ms(value),
            met: value <= 50.0,
            value,
            lower_is_better: true,
        });
    }
    vs_true(
        &mut out,
        ["gate_panel_recorded_vs_true_median", "gate_panel_recorded_vs_true_p99"],
        "gate (policy panel), the same `TaskCompleted` again (answered from the recorded decision)",
        &j.gate_recorded,
        &j.spawn_true,
    );
    vs_true(
        &mut out,
        ["gate_panel_reused_vs_true_median", "gate_panel_reused_vs_true_p99"],
        "gate (policy panel), a new task with the same work and tree (the jury's verdict reused)",
        &j.gate_reused,
        &j.spawn_true,
    );
    let review = j.mcp_review_overhead.median();
    out.push(Target {
        key: "mcp_review_overhead_median_ms",
        what: format!(
            "`judged mcp` `tools/call review` overhead over its slowest juror, median of {}",
            j.mcp_review_overhead.len()
        ),
        target: "≤ 20 ms".into(),
        measured: ms(review),
        met: review <= 20.0,
        value: review,
        lower_is_better: true,
    });
    vs_true(
        &mut out,
        ["mcp_gate_status_vs_true_median", "mcp_gate_status_vs_true_p99"],
        "`judged mcp` `tools/call gate_status` round trip",
        &j.mcp_gate_status,
        &j.spawn_true,
    );
    out
}

fn load_targets(l: &LoadFigures) -> Vec<Target> {
    let requests = l.kinds.iter().map(|k| k.samples.len() + k.errors).sum::<usize>();
    vec![
        Target {
            key: "load_errors",
            what: format!("load: failed requests of {requests} ({} clients × {}, issue 13)", l.clients, l.per_client),
            target: "0".into(),
            measured: l.errors.to_string(),
            met: l.errors == 0,
            value: l.errors as f64,
            lower_is_better: true,
        },
        Target {
            key: "load_appends_visible",
            what: "load: every line appended during the load visible afterwards".into(),
            target: "all".into(),
            measured: if l.all_visible {
                format!("all, {} after the last client", ms(l.visible_after_ms))
            } else {
                "**not all**".into()
            },
            met: l.all_visible,
            value: if l.all_visible { 1.0 } else { 0.0 },
            lower_is_better: false,
        },
    ]
}

fn stage_targets(r: &Results) -> Vec<Target> {
    let stages = &r.stages;
    let (first, last) = (stages.first().expect("a stage"), stages.last().expect("a stage"));
    let mut out = Vec::new();
    let worst = stages
        .iter()
        .map(|s| (s.challenge_daemon.median() / floor(&r.spawn_true, s), s.mb))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .expect("a stage");
    out.push(Target {
        key: "challenge_daemon_vs_floor",
        what: "`challenge` (daemon) vs floor (/bin/true + one round trip), every root size".into(),
        target: "≤ 3×".into(),
        measured: format!("{} (worst, at {} MB)", ratio(worst.0), worst.1),
        met: worst.0 <= 3.0,
        value: worst.0,
        lower_is_better: true,
    });
    for (key, name, pick) in [
        ("challenge_daemon_growth", "`challenge`", (|s: &Stage| s.challenge_daemon.median()) as fn(&Stage) -> f64),
        ("verify_daemon_growth", "`verify`", |s: &Stage| s.verify_daemon.median()),
    ] {
        if stages.len() > 1 {
            let growth = pick(last) / pick(first);
            out.push(Target {
                key,
                what: format!("{name} (daemon) flat as the root grows, {} MB → {} MB", first.mb, last.mb),
                target: "≤ 1.5× (flat)".into(),
                measured: format!("{} ({} → {})", ratio(growth), ms(pick(first)), ms(pick(last))),
                met: growth <= 1.5,
                value: growth,
                lower_is_better: true,
            });
        }
    }
    let s = at_192(stages);
    let faster = s.reparse.median() / s.challenge_daemon.median();
    out.push(Target {
        key: "challenge_daemon_vs_reread",
        what: format!("`challenge` (daemon) vs full re-read and parse, at {} MB", s.mb),
        target: "≥ 100× faster".into(),
        measured: format!("{} ({} vs {})", ratio(faster), ms(s.challenge_daemon.median()), ms(s.reparse.median())),
        met: faster >= 100.0,
        value: faster,
        lower_is_better: false,
    });
    let faster = s.reparse.median() / s.challenge_direct.median();
    out.push(Target {
        key: "challenge_direct_vs_reread",
        what: format!("`challenge` (direct) vs full re-read and parse, at {} MB", s.mb),
        target: "several (≥ 3×) faster".into(),
        measured: format!("{} ({} vs {})", ratio(faster), ms(s.challenge_direct.median()), ms(s.reparse.median())),
        met: faster >= 3.0,
        value: faster,
        lower_is_better: false,
    });
    for (key, mode, pick) in [
        ("refusal_daemon_p99_ms", "daemon", (|s: &Stage| &s.refusal_daemon) as fn(&Stage) -> &Samples),
        ("refusal_direct_p99_ms", "direct", |s: &Stage| &s.refusal_direct),
    ] {
        // Every refusal counts, not the typical one: the worst p99 over the sizes.
        let worst = stages.iter().max_by(|a, b| pick(a).p99().total_cmp(&pick(b).p99())).expect("a stage");
        let p99 = pick(worst).p99();
        out.push(Target {
            key,
            what: format!(
                "`challenge` ({mode}) refusal on a quiet log, default flags, p99, every root size (issue 10)"
            ),
            target: "≤ 500 ms".into(),
            measured: format!("{} (worst, at {} MB; median {})", ms(p99), worst.mb, ms(pick(worst).median())),
            met: p99 <= 500.0,
            value: p99,
            lower_is_better: true,
        });
    }
    let share = last.sha_ms / last.ingest_ms;
    out.push(Target {
        key: "ingest_vs_sha256sum",
        what: format!("ingest throughput vs `sha256sum`, {} MB cold start", last.mb),
        target: "≥ 50 %".into(),
        measured: format!(
            "{:.0} % ({:.0} vs {:.0} MB/s)",
            share * 100.0,
            mb_per_s(last.bytes, last.ingest_ms),
            mb_per_s(last.bytes, last.sha_ms)
        ),
        met: share >= 0.5,
        value: share,
        lower_is_better: false,
    });
    let h = &r.hooks;
    for (key, name, q) in [("hook_vs_true_median", "median", 0.5), ("hook_vs_true_p99", "p99", 0.99)] {
        let (hook, floor) = (h.decision.quantile(q), h.spawn_true.quantile(q));
        out.push(Target {
            key,
            what: format!("hook round trip (evidence decision) vs `/bin/true` spawn, {name}"),
            target: "≤ 2×".into(),
            measured: format!("{} ({} vs {})", ratio(hook / floor), ms(hook), ms(floor)),
            met: hook / floor <= 2.0,
            value: hook / floor,
            lower_is_better: true,
        });
    }
    let at = if last.mb >= 1000 {
        String::new()
    } else {
        format!(" (measured at {} MB; the target is stated at 1 GB)", last.mb)
    };
    out.push(Target {
        key: "rss_mib_after_ingest",
        what: format!("daemon peak RSS after ingesting the largest root{at}"),
        target: "≤ 32 MiB".into(),
        measured: mib(last.rss_kib),
        met: last.rss_kib <= 32 * 1024,
        value: last.rss_kib as f64 / 1024.0,
        lower_is_better: true,
    });
    out
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|v| v.split_once(':')).map(|(_, v)| v.trim().to_owned()))
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mem_kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    format!("{cpu}, {cores} cores, {:.0} GiB RAM, Linux {}", mem_kib as f64 / 1024.0 / 1024.0, kernel.trim())
}

/// The workspace's commit, and whether the tree had changes (besides earlier results).
fn commit() -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    // The results this run is about to overwrite are not a change to what is measured.
    let status = ["status", "--porcelain", "--untracked-files=no", "--", ":(top)"];
    let results = [":(top,exclude,glob)bench/results*.md", ":(top,exclude,glob)bench/results*.json"];
    match (git(&["rev-parse", "--short", "HEAD"]), git(&[&status[..], &results[..]].concat())) {
        (Some(head), Some(changes)) if !changes.is_empty() => format!("commit {head} with uncommitted changes"),
        (Some(head), _) => format!("commit {head}"),
        _ => "an unknown commit".into(),
    }
}

/// A regression bigger than this, of any target's figure against an earlier run, is a bug
/// (issue 6).
const REGRESSION: f64 = 1.2;

/// The targets' figures of this run, for `--compare` in a later one.
pub fn figures(r: &Results) -> Value {
    let max_mb = if matches!(r.mode, Mode::Jury | Mode::Attest) { None } else { r.stages.last().map(|s| s.mb) };
    let ratios: Map<String, Value> = targets(r)
        .into_iter()
        .map(|t| {
            (t.key.to_owned(), json!({"value": t.value, "better": if t.lower_is_better { "lower" } else { "higher" }}))
        })
        .collect();
    let mode = match r.mode {
        Mode::Full => "full",
        Mode::Jury => "jury",
        Mode::Load => "load",
        Mode::Attest => "attest",
    };
    json!({"commit": commit(), "run": r.started_at, "mode": mode, "max_mb": max_mb, "targets": ratios})
}

/// Each target's figure next to the same figure of an earlier run (`figures` output), as
/// markdown; and whether any got worse by more than [`REGRESSION`].
pub fn compare(r: &Results, earlier: &Value, earlier_path: &str) -> (String, bool) {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "\n## Compared with an earlier run\n\n`{earlier_path}`: {}, run {}. A figure more than {:.0} % worse is a regression.\n",
        earlier["commit"].as_str().unwrap_or("?"),
        earlier["run"].as_str().unwrap_or("?"),
        (REGRESSION - 1.0) * 100.0
    );
    let max_mb = r.stages.last().map(|s| s.mb);
    if earlier["max_mb"].as_u64() != max_mb {
        let _ = writeln!(
            md,
            "The earlier run's largest root was {} MB, this one's {} MB: figures read at a given size may not compare.\n",
            earlier["max_mb"],
            max_mb.unwrap_or(0)
        );
    }
    let _ = writeln!(md, "| target | before | now | change (+ is worse) | |");
    let _ = writeln!(md, "|---|---:|---:|---:|---|");
    let mut regressed = false;
    for t in targets(r) {
        let Some(before) = earlier["targets"][t.key]["value"].as_f64() else { continue };
        // A figure of 0 (no errors) compares by whether it stayed 0.
        let (better, worse) = if t.lower_is_better { (before, t.value) } else { (t.value, before) };
        let worse_by = if better == 0.0 { if worse == 0.0 { 1.0 } else { f64::INFINITY } } else { worse / better };
        let verdict = if worse_by > REGRESSION {
            regressed = true;
            "**regression**"
        } else {
            "ok"
        };
        let _ = writeln!(
            md,
            "| {} | {before:.3} | {:.3} | {:+.0} % | {verdict} |",
            t.what,
            t.value,
            (worse_by - 1.0) * 100.0
        );
    }
    (md, regressed)
}

pub fn render(options: &Options, r: &Results) -> String {
    let mut md = String::new();
    let command = std::iter::once("cargo run --release -p judged-bench --".to_owned())
        .chain(options.args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let (title, issues) = match r.mode {
        Mode::Full => ("judged benchmark", "issues 6, 10 and 12"),
        Mode::Jury => ("judged benchmark: the jury", "issue 12"),
        Mode::Load => ("judged benchmark: load", "issue 13"),
        Mode::Attest => ("judged benchmark: checking attestations", "issue 34"),
    };
    let _ = writeln!(md, "# {title}\n");
    let _ = writeln!(md, "- Machine: {}", machine());
    let _ = writeln!(
        md,
        "- Run: {} UTC, {:.0} s, load average {} before, {} after",
        r.started_at, r.seconds, r.load_before, r.load_after
    );
    let _ = writeln!(md, "- Command: `{command}` (seed {:#x}), at {}", options.seed, commit());
    match r.mode {
        Mode::Full => render_stages(&mut md, options, r),
        Mode::Load => {
            if let Some(load) = &r.load {
                render_load(&mut md, options, r, load);
            }
        }
        Mode::Jury | Mode::Attest => md.push('\n'),
    }
    if let Some(jury) = &r.jury {
        render_jury(&mut md, jury);
    }
    if let Some(attest) = &r.attest {
        render_attest(&mut md, attest);
    }
    let _ = writeln!(md, "\n## Targets ({issues})\n");
    let _ = writeln!(md, "| target | wanted | measured | |");
    let _ = writeln!(md, "|---|---:|---:|---|");
    for t in targets(r) {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            t.what,
            t.target,
            t.measured,
            if t.met { "met" } else { "**missed**" }
        );
    }
    md
}

/// The figures of the root sizes, the hook shim, append-to-visible and memory.
fn render_stages(md: &mut String, options: &Options, r: &Results) {
    let runs = options.runs();
    let last = r.stages.last().expect("a stage");
    let _ = writeln!(
        md,
        "- Root: generated Copilot CLI and Claude Code logs, {} Copilot and {} Claude Code sessions at {} MB, all but one in other cwds; the live project session has {:.1} MB of history and gets each round's marker and reviewer lifecycle appended with fresh timestamps. Logs are in the page cache (just written, then synced to disk), as for a daemon tailing them.",
        r.copilot_sessions, r.claude_sessions, last.mb, options.live_mb
    );
    let _ = writeln!(
        md,
        "- Latencies are wall-clock, spawn to exit, timed from {} s after the ingest and a `sync`, medians of {} (daemon) / {} (direct) runs after 2 warm-ups; the floor is the median `/bin/true` spawn ({}, {} runs) plus the median round trip of the cheapest request (`progress`, answered without the engine) from an in-process client.",
        crate::SETTLE.as_secs(),
        runs.challenge_daemon,
        runs.challenge_direct,
        ms(r.spawn_true.median()),
        r.spawn_true.len()
    );
    let _ = writeln!(
        md,
        "- The full re-read baseline is the reference's approach done in Rust in the bench process (read every log of the root, `serde_json` every line), so it is faster than the Python reference and the ratios against it are conservative.\n"
    );
    render_ingest(md, r);
    render_challenge(md, r);
    render_refusals(md, options, r);
    render_hooks(md, options, r);
    render_storage(md, r);
}

/// The cold-start ingest of each root.
fn render_ingest(md: &mut String, r: &Results) {
    let _ = writeln!(md, "## Ingest from a cold start (fresh `JUDGED_HOME`, spawn to first `status` answer)\n");
    let _ = writeln!(
        md,
        "| root | logs | lines | `sha256sum` | `judged` ingest | lines/s | ingest / `sha256sum` | DB (+WAL) / logs | peak RSS (VmHWM) |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for s in &r.stages {
        let _ = writeln!(
            md,
            "| {} MB | {} | {} | {:.0} MB/s ({}) | {:.1} MB/s ({}) | {:.0} | {:.0} % | {:.2}× | {} |",
            s.mb,
            s.files,
            s.lines,
            mb_per_s(s.bytes, s.sha_ms),
            ms(s.sha_ms),
            mb_per_s(s.bytes, s.ingest_ms),
            ms(s.ingest_ms),
            s.lines as f64 / (s.ingest_ms / 1000.0),
            s.sha_ms / s.ingest_ms * 100.0,
            s.db_bytes as f64 / s.bytes as f64,
            mib(s.rss_kib)
        );
    }
}

/// `challenge` and `verify` in both modes as the root grows, against their floor and the full re-read.
fn render_challenge(md: &mut String, r: &Results) {
    let _ = writeln!(md, "\n## `challenge` and `verify` as the root grows (medians)\n");
    let _ = writeln!(
        md,
        "| root | floor | `challenge` daemon | ×floor | `challenge` direct | full re-read + parse | re-read ÷ daemon | re-read ÷ direct | `verify` daemon | `verify` direct |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for s in &r.stages {
        let f = floor(&r.spawn_true, s);
        let _ = writeln!(
            md,
            "| {} MB | {} | {} (p99 {}) | {} | {} | {} | {} | {} | {} | {} |",
            s.mb,
            ms(f),
            ms(s.challenge_daemon.median()),
            ms(s.challenge_daemon.p99()),
            ratio(s.challenge_daemon.median() / f),
            ms(s.challenge_direct.median()),
            ms(s.reparse.median()),
            ratio(s.reparse.median() / s.challenge_daemon.median()),
            ratio(s.reparse.median() / s.challenge_direct.median()),
            ms(s.verify_daemon.median()),
            ms(s.verify_direct.median()),
        );
    }
}

/// Refusals, and direct mode with `--session-root`, as the root grows.
fn render_refusals(md: &mut String, options: &Options, r: &Results) {
    let runs = options.runs();
    let _ = writeln!(md, "\n## Refusals, and `--session-root` in direct mode, as the root grows\n");
    let _ = writeln!(
        md,
        "A refusal is `challenge` of a binding no marker carries with default flags (no `--wait-seconds`), on a quiet log, {} runs after 1 warm-up: it waits until the log has been quiet for 300 ms, not the whole 5 s. Direct mode's `challenge` is the accepted one above, with the generated roots as `COPILOT_HOME` / `CLAUDE_CONFIG_DIR`, and again with the Copilot root as `--session-root`; peak RSS is each process's own (`wait4`), medians.\n",
        runs.refusal
    );
    let _ = writeln!(
        md,
        "| root | refusal daemon | refusal direct | `challenge` direct, `COPILOT_HOME` | peak RSS | `challenge` direct, `--session-root` | peak RSS | `--session-root` ÷ `COPILOT_HOME` (time, RSS) |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|");
    for s in &r.stages {
        let (home_rss, named_rss) = (s.challenge_direct_rss.median(), s.challenge_session_root_rss.median());
        let _ = writeln!(
            md,
            "| {} MB | {} (p99 {}) | {} (p99 {}) | {} | {} | {} | {} | {}, {} |",
            s.mb,
            ms(s.refusal_daemon.median()),
            ms(s.refusal_daemon.p99()),
            ms(s.refusal_direct.median()),
            ms(s.refusal_direct.p99()),
            ms(s.challenge_direct.median()),
            mib(home_rss as u64),
            ms(s.challenge_session_root.median()),
            mib(named_rss as u64),
            ratio(s.challenge_session_root.median() / s.challenge_direct.median()),
            ratio(named_rss / home_rss),
        );
    }
}

/// The hook shim against spawning `/bin/true` (alone, after a pause, concurrent), and append-to-visible, at the largest root.
fn render_hooks(md: &mut String, options: &Options, r: &Results) {
    let (runs, last) = (options.runs(), r.stages.last().expect("a stage"));
    let h = &r.hooks;
    let _ = writeln!(md, "\n## Hook shim round trip ({} MB root, {} runs each)\n", last.mb, runs.hook);
    let _ = writeln!(md, "| what | median | p99 | median ÷ `/bin/true` | p99 ÷ `/bin/true` |");
    let _ = writeln!(md, "|---|---:|---:|---:|---:|");
    row(md, "spawn `/bin/true`", &h.spawn_true, &h.spawn_true);
    row(md, "`judge-hook`, ungated event (spawn + one round trip, no decision)", &h.ungated, &h.spawn_true);
    row(
        md,
        "`judge-hook`, `TaskCompleted`, a new task each call (evidence decision, journaled)",
        &h.decision,
        &h.spawn_true,
    );
    row(
        md,
        "`judge-hook`, `TaskCompleted`, the same question again (answered from the record)",
        &h.recorded,
        &h.spawn_true,
    );
    let pause = PAUSE.as_millis();
    row(md, &format!("spawn `/bin/true`, each after {pause} ms idle"), &h.paused_true, &h.paused_true);
    row(
        md,
        &format!("`judge-hook`, `TaskCompleted`, a new task each after {pause} ms idle (as a user's hooks come)"),
        &h.paused_decision,
        &h.paused_true,
    );
    let (ct, wall_t) = &h.concurrent_true;
    let (ch, wall_h) = &h.concurrent_hook;
    row(md, &format!("spawn `/bin/true`, {CONCURRENT_CALLERS} concurrent callers"), ct, ct);
    row(md, &format!("`judge-hook` `TaskCompleted`, {CONCURRENT_CALLERS} concurrent callers"), ch, ct);
    let _ = writeln!(
        md,
        "\nUnder {CONCURRENT_CALLERS} concurrent callers ({} calls each): `/bin/true` {:.0} calls/s, `judge-hook` {:.0} decisions/s.",
        runs.concurrent_per_caller,
        ct.len() as f64 / (wall_t / 1000.0),
        ch.len() as f64 / (wall_h / 1000.0)
    );

    let _ = writeln!(md, "\n## Append to visible ({} appends to the live session)\n", h.append_visible.len());
    let _ = writeln!(
        md,
        "One event appended in one `write`, then `status` (reads the store, no catch-up) polled every 0.2 ms until `lines` grows.\n"
    );
    let _ = writeln!(
        md,
        "| median | p99 |\n|---:|---:|\n| {} | {} |",
        ms(h.append_visible.median()),
        ms(h.append_visible.p99())
    );
}

/// Memory, the database, and retention at the largest root.
fn render_storage(md: &mut String, r: &Results) {
    let (h, last) = (&r.hooks, r.stages.last().expect("a stage"));
    let _ = writeln!(md, "\n## Memory and storage ({} MB root)\n", last.mb);
    let _ = writeln!(
        md,
        "Peak RSS (VmHWM) after the cold-start ingest: {}; after the `challenge` and `verify` runs: {}; after the single-caller hook runs: {}; after the {CONCURRENT_CALLERS} concurrent callers: {}; at the end: {}. Database `judged.db` + WAL after ingest: {:.0} MB for {:.0} MB of logs ({:.2}×).",
        mib(last.rss_kib),
        mib(last.rss_after_calls_kib),
        mib(h.rss_after_hooks_kib),
        mib(h.rss_after_concurrent_kib),
        mib(h.rss_end_kib),
        last.db_bytes as f64 / MB as f64,
        last.bytes as f64 / MB as f64,
        last.db_bytes as f64 / last.bytes as f64
    );
    if let Some(p) = &r.prune {
        let _ = writeln!(md, "\n## Retention (`judged prune` of half the store, {} MB root)\n", last.mb);
        let _ = writeln!(
            md,
            "Cutoff: the median of the sessions' last records, after every figure above. {} of {} sessions pruned ({} idle ones kept: a decision or review of the bench names them), {:.0} MB of log bytes dropped, in {}. `judged.db` + WAL: {:.0} MB before, {:.0} MB after (pruned pages stay in the file and take later lines); `judged prune --vacuum` then took {} and left {:.0} MB ({:.2}× the logs).",
            p.pruned,
            p.sessions,
            p.kept,
            p.log_bytes as f64 / MB as f64,
            ms(p.ms),
            p.db_before as f64 / MB as f64,
            p.db_after as f64 / MB as f64,
            ms(p.vacuum_ms),
            p.db_vacuumed as f64 / MB as f64,
            p.db_vacuumed as f64 / last.bytes as f64
        );
    }
}

/// A row of latencies next to spawning `/bin/true`.
fn row(md: &mut String, what: &str, s: &Samples, base: &Samples) {
    let _ = writeln!(
        md,
        "| {what} | {} | {} | {} | {} |",
        ms(s.median()),
        ms(s.p99()),
        ratio(s.median() / base.median()),
        ratio(s.p99() / base.p99())
    );
}

/// `judge-evidence check` over attested commits.
fn render_attest(md: &mut String, a: &AttestFigures) {
    let _ = writeln!(md, "\n## Checking attestations (issue 34)\n");
    let _ = writeln!(
        md,
        "A repository of {} commits (one file changed each), every one with a note under `refs/notes/judged` holding a signed attestation of it (written with two `git fast-import` runs in {}), and a trusted file with the signing key. `judge-evidence check main --trusted F`, spawn to exit, as a CI runs it (no daemon): it lists the range, the notes, their sizes and their blobs in four git processes, opens every envelope, checks its Ed25519 signature and judges its statement. Each review began at its commit's parent, so a check of the head alone follows the reviews' bases down the whole range.\n",
        a.commits,
        ms(a.setup_ms)
    );
    let _ = writeln!(md, "| check | median | p99 | runs |");
    let _ = writeln!(md, "|---|---:|---:|---:|");
    for (what, s) in [("`--every-commit`", &a.every_commit), ("head only", &a.head_only)] {
        let _ = writeln!(md, "| {what} | {} | {} | {} |", ms(s.median()), ms(s.p99()), s.len());
    }
}

/// The jury's overhead over its slowest juror, and the gate on a verdict already given.
fn render_jury(md: &mut String, j: &JuryFigures) {
    let _ = writeln!(md, "\n## The jury (issue 12)\n");
    let _ = writeln!(
        md,
        "A daemon of its own (no logs; `[gate] policy = \"panel\"`, a `[jury]` in its `config.toml`) over a small git repository with uncommitted changes. Stage 1: two `preset = \"command\"` jurors, `fast-openai` (gpt-5.4-mini) sleeping {:.0} ms and `slow-google` (gemini-3-flash) sleeping {:.0} ms, each a bash script that reads the prompt, sleeps, prints a confident `pass` and records its own start and end (`EPOCHREALTIME`); the `claude-sonnet-4.6` tiebreaker is configured but never asked (stage 1 agrees at confidence 90). {} runs of `judge-evidence --mode daemon panel --rubric spec-coherence --artifact-file F --json` after 1 warm-up, spawn to exit. The overhead is, run by run, that time minus the slowest juror's own; its launch (the `bash` start before its first clock reading) counts as overhead.\n",
        FAST_SECONDS * 1000.0,
        SLOW_SECONDS * 1000.0,
        j.runs
    );
    let _ = writeln!(md, "| what | median | p99 |\n|---|---:|---:|");
    for (what, s) in [
        ("`judge-evidence panel`, spawn to exit", &j.end_to_end),
        ("the packet's `elapsed_ms` (the cascade, in the daemon)", &j.elapsed),
        ("the slowest juror's own wall time (its script, start to end)", &j.slowest_self),
        ("the slowest juror's `latency_ms` in the packet", &j.slowest_reported),
        ("**overhead: spawn to exit − the slowest juror's own time**", &j.overhead),
        ("spawn to exit − the slowest `latency_ms`", &j.overhead_reported),
        ("`elapsed_ms` − the slowest `latency_ms` (in the daemon)", &j.cascade_overhead),
    ] {
        let _ = writeln!(md, "| {what} | {} | {} |", ms(s.median()), ms(s.p99()));
    }
    let _ = writeln!(
        md,
        "\n### The gate on a verdict already given ({} runs each after 5 warm-ups)\n",
        j.gate_recorded.len()
    );
    let _ = writeln!(
        md,
        "`judge-hook --host claude-code` with a `TaskCompleted` for the repository: the first call convenes the jury ({}); then the same payload again, and a new `task_id` each call with the same subject, description and tree (the decision is new, the jury's verdict is looked up by its question). Decisions as journaled: {}. Daemon peak RSS at the end: {}.\n",
        ms(j.gate_first_ms),
        j.reasons.iter().map(|(reason, n)| format!("{n} × {reason}")).collect::<Vec<_>>().join(", "),
        mib(j.rss_kib)
    );
    let _ = writeln!(md, "| what | median | p99 | median ÷ `/bin/true` | p99 ÷ `/bin/true` |");
    let _ = writeln!(md, "|---|---:|---:|---:|---:|");
    row(md, "spawn `/bin/true` (stdin piped)", &j.spawn_true, &j.spawn_true);
    row(
        md,
        "`judge-hook`, the same `TaskCompleted` again (answered from the recorded decision)",
        &j.gate_recorded,
        &j.spawn_true,
    );
    row(
        md,
        "`judge-hook`, a new task with the same work and tree (the jury's verdict reused)",
        &j.gate_reused,
        &j.spawn_true,
    );
    let _ = writeln!(
        md,
        "\n### `judged mcp`\n\nOne `judged mcp` over its stdio, initialized, in the repository: `tools/call review` with the task's subject and description, the tree changed before each call (so the jury convenes), its time minus the slowest juror's own; and `tools/call gate_status` round trips.\n"
    );
    let _ = writeln!(md, "| what | median | p99 |\n|---|---:|---:|");
    for (what, s) in [
        ("**`review` overhead over the slowest juror**", &j.mcp_review_overhead),
        ("`gate_status` round trip", &j.mcp_gate_status),
    ] {
        let _ = writeln!(md, "| {what} | {} | {} |", ms(s.median()), ms(s.p99()));
    }
}

/// The load suite: latencies per kind next to `/bin/true`, failures, the daemon's memory.
fn render_load(md: &mut String, options: &Options, r: &Results, l: &LoadFigures) {
    let stage = r.stages.last();
    let _ = writeln!(
        md,
        "- Root: generated Copilot CLI and Claude Code logs, {} MB in {} logs ({} lines, ingested cold in {}); the live project session ({:.1} MB of history) carries the marker every `challenge` asks for and a verified cross-family review, so every `TaskCompleted` is allowed.\n",
        stage.map_or(0, |s| s.mb),
        stage.map_or(0, |s| s.files),
        stage.map_or(0, |s| s.lines),
        ms(stage.map_or(f64::NAN, |s| s.ingest_ms)),
        options.live_mb
    );
    let _ = writeln!(md, "## Load (issue 13)\n");
    let requests = l.clients * l.per_client;
    let _ = writeln!(
        md,
        "{} client threads released together, each spawning {} requests back to back, the kinds in turn: `judged status --json`; an accepted daemon-mode `challenge` of the live session's marker (`--wait-seconds 0`, its own output file per client, `--replace`); a `judge-hook --host claude-code` `TaskCompleted` with a new `task_id` (an evidence decision, journaled). Meanwhile one event is appended to the live session every {} ms ({} events, {} bytes, {} failed appends, over both harnesses). First the same harness spawns `/bin/true` ({:.1} s, {} failures), then the real clients ({:.1} s, {:.0} requests/s). A request fails when it cannot be spawned or exits other than 0.\n",
        l.clients,
        l.per_client,
        2,
        l.appended,
        l.appended_bytes,
        l.append_errors,
        l.true_wall_ms / 1000.0,
        l.true_errors,
        l.wall_ms / 1000.0,
        requests as f64 / (l.wall_ms / 1000.0)
    );
    let _ = writeln!(md, "| kind | requests | errors | p50 | p99 | p50 ÷ `/bin/true` | p99 ÷ `/bin/true` |");
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|");
    let base = &l.spawn_true;
    let _ = writeln!(
        md,
        "| spawn `/bin/true`, same harness | {} | {} | {} | {} | 1.00× | 1.00× |",
        base.len() + l.true_errors,
        l.true_errors,
        ms(base.median()),
        ms(base.p99())
    );
    for k in &l.kinds {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} |",
            k.name,
            k.samples.len() + k.errors,
            k.errors,
            ms(k.samples.median()),
            ms(k.samples.p99()),
            ratio(k.samples.median() / base.median()),
            ratio(k.samples.p99() / base.p99())
        );
    }
    if l.first_errors.is_empty() {
        let _ = writeln!(md, "\nNo request failed.");
    } else {
        let _ = writeln!(md, "\n{} requests failed. By what they said (numbers as `N`):\n", l.errors);
        for (said, count) in &l.error_kinds {
            let _ = writeln!(md, "- {count} × `{}`", said.replace('`', "'"));
        }
        let _ = writeln!(md, "\nThe first {} as they came:\n", l.first_errors.len());
        for e in &l.first_errors {
            let _ = writeln!(md, "- `{}`", e.replace('`', "'"));
        }
    }
    let _ = writeln!(
        md,
        "\nDuring the real clients the daemon used {:.1} s of CPU and the clients {:.1} s, in {:.1} s on {} cores. After the last client, every appended line was {} in `status` ({} later). Daemon RSS: {} before the load, {} after, peak (VmHWM) {}. `judged.log` (level warn) got {} lines during the load{}",
        l.daemon_cpu_s,
        l.clients_cpu_s,
        l.wall_ms / 1000.0,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if l.all_visible { "visible" } else { "**not** visible" },
        ms(l.visible_after_ms),
        mib(l.rss_before_kib),
        mib(l.rss_after_kib),
        mib(l.hwm_after_kib),
        l.log_lines,
        if l.log_first.is_empty() { ".".to_owned() } else { ", the first:".to_owned() }
    );
    if !l.log_first.is_empty() {
        let _ = writeln!(md);
        for line in &l.log_first {
            let _ = writeln!(md, "    {}", line.chars().take(300).collect::<String>());
        }
    }
}
