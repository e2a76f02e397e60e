//! The figures as markdown tables, and the targets as ratios, each met or missed.

use crate::measure::Samples;
use crate::{CONCURRENT_CALLERS, MB, Options, Results, Stage};
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

/// The stage the 192 MB figures are read at (the nearest size run).
fn at_192(stages: &[Stage]) -> &Stage {
    stages.iter().min_by_key(|s| s.mb.abs_diff(192)).expect("at least one stage")
}

fn targets(r: &Results) -> Vec<Target> {
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
    let results = [":(top,exclude)bench/results.md", ":(top,exclude)bench/results.json"];
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
    let ratios: Map<String, Value> = targets(r)
        .into_iter()
        .map(|t| {
            (t.key.to_owned(), json!({"value": t.value, "better": if t.lower_is_better { "lower" } else { "higher" }}))
        })
        .collect();
    json!({"commit": commit(), "run": r.started_at, "max_mb": r.stages.last().map(|s| s.mb), "targets": ratios})
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
        let worse_by = if t.lower_is_better { t.value / before } else { before / t.value };
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
    let runs = options.runs();
    let mut md = String::new();
    let command = std::iter::once("cargo run --release -p judged-bench --".to_owned())
        .chain(options.args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ");
    let last = r.stages.last().expect("a stage");
    let _ = writeln!(md, "# judged benchmark\n");
    let _ = writeln!(md, "- Machine: {}", machine());
    let _ = writeln!(
        md,
        "- Run: {} UTC, {:.0} s, load average {} before, {} after",
        r.started_at, r.seconds, r.load_before, r.load_after
    );
    let _ = writeln!(md, "- Command: `{command}` (seed {:#x}), at {}", options.seed, commit());
    let _ = writeln!(
        md,
        "- Root: generated Copilot CLI and Claude Code logs, {} Copilot and {} Claude Code sessions at {} MB, all but one in other cwds; the live project session has {:.1} MB of history and gets each round's marker and reviewer lifecycle appended with fresh timestamps. Logs are in the page cache (just written, then synced to disk), as for a daemon tailing them.",
        r.copilot_sessions, r.claude_sessions, last.mb, options.live_mb
    );
    let _ = writeln!(
        md,
        "- Latencies are wall-clock, spawn to exit, timed from {} s after the ingest and a `sync`, medians of {} (daemon) / {} (direct) runs after 2 warm-ups; the floor is the median `/bin/true` spawn ({}, {} runs) plus the median `status` round trip from an in-process client.",
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

    let h = &r.hooks;
    let _ = writeln!(md, "\n## Hook shim round trip ({} MB root, {} runs each)\n", last.mb, runs.hook);
    let _ = writeln!(md, "| what | median | p99 | median ÷ `/bin/true` | p99 ÷ `/bin/true` |");
    let _ = writeln!(md, "|---|---:|---:|---:|---:|");
    let row = |md: &mut String, what: &str, s: &Samples, base: &Samples| {
        let _ = writeln!(
            md,
            "| {what} | {} | {} | {} | {} |",
            ms(s.median()),
            ms(s.p99()),
            ratio(s.median() / base.median()),
            ratio(s.p99() / base.p99())
        );
    };
    row(&mut md, "spawn `/bin/true`", &h.spawn_true, &h.spawn_true);
    row(&mut md, "`judge-hook`, ungated event (spawn + one round trip, no decision)", &h.ungated, &h.spawn_true);
    row(
        &mut md,
        "`judge-hook`, `TaskCompleted`, a new task each call (evidence decision, journaled)",
        &h.decision,
        &h.spawn_true,
    );
    row(
        &mut md,
        "`judge-hook`, `TaskCompleted`, the same question again (answered from the record)",
        &h.recorded,
        &h.spawn_true,
    );
    let (ct, wall_t) = &h.concurrent_true;
    let (ch, wall_h) = &h.concurrent_hook;
    row(&mut md, &format!("spawn `/bin/true`, {CONCURRENT_CALLERS} concurrent callers"), ct, ct);
    row(&mut md, &format!("`judge-hook` `TaskCompleted`, {CONCURRENT_CALLERS} concurrent callers"), ch, ct);
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

    let _ = writeln!(md, "\n## Targets (issues 6 and 10)\n");
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
