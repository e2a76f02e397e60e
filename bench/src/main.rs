//! `judged-bench`: whole-process figures for `judged`, in one run on one machine.
//!
//! ```text
//! cargo run --release -p judged-bench -- [jury | load | attest] [--quick] [--max-mb N] [--out PATH]
//!                                        [--work DIR] [--seed N] [--live-mb N] [--no-build]
//!                                        [--keep] [--compare RESULTS.json]
//!                                        [--clients N] [--requests N]
//! ```
//!
//! It first runs `$CARGO build --release --workspace --bins` (skipped with `--no-build`
//! or outside `cargo run`), then uses `target/release/{judged,judge-evidence,judge-hook}`.
//! For each root size it generates the logs (deterministic from `--seed`), times
//! `sha256sum` over them and a cold-start ingest, then `challenge` and `verify` in
//! daemon and direct mode next to their baselines, direct mode's `challenge` again under
//! `--session-root` (time and peak RSS), and a refused `challenge` with default flags. On
//! the largest root it times the hook shim (alone and under 64 concurrent callers),
//! append-to-visible latency and the daemon's memory. The tables go to stdout and, as markdown, to `--out`
//! (default `bench/results.md`; a directory gets `results.md` inside), and the targets'
//! figures to the `.json` beside it. `--compare` an earlier `results.json` adds each
//! figure's change and exits 3 when one is more than 20 % worse. Last, on a daemon of its
//! own, the jury (issue 12): its overhead over its slowest juror and a gate answer from a
//! reused verdict.
//!
//! `jury` takes only the jury's figures (`bench/results-jury.md`); `load` runs the load
//! suite of issue 13 (`bench/results-load.md`): `--clients` concurrent clients (200) each
//! making `--requests` (50) mixed requests while the live session is appended to;
//! `attest` only `judge-evidence check` over 1,000 attested commits (issue 34,
//! `bench/results-attest.md`), which the full run takes last.

mod attest;
mod generate;
mod jury;
mod load;
mod mcp;
mod measure;
mod prune;
mod report;

use generate::{Generator, Layout, LiveSession, Rng};
use measure::{Daemon, Samples};
use serde_json::{Value, json};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const MB: u64 = 1_000_000;

/// What a run measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Every figure but the load suite (the default).
    #[default]
    Full,
    /// Only the jury's figures.
    Jury,
    /// The load suite.
    Load,
    /// Only `judge-evidence check` over attested commits.
    Attest,
}

impl Mode {
    /// The report's default file name.
    fn report(self) -> &'static str {
        match self {
            Mode::Full => "results.md",
            Mode::Jury => "results-jury.md",
            Mode::Load => "results-load.md",
            Mode::Attest => "results-attest.md",
        }
    }
}

/// Command-line options.
#[derive(Clone, Debug)]
pub struct Options {
    pub mode: Mode,
    pub quick: bool,
    pub max_mb: u64,
    pub out: PathBuf,
    pub work: PathBuf,
    pub seed: u64,
    pub live_mb: f64,
    pub build: bool,
    pub keep: bool,
    /// An earlier run's figures (`results.json`) to compare with.
    pub compare: Option<PathBuf>,
    /// The load suite's concurrent clients, and the requests each makes.
    pub clients: usize,
    pub requests: usize,
    /// The arguments as given, for the reproduce line.
    pub args: Vec<String>,
}

/// How many times each thing is timed.
#[derive(Clone, Copy, Debug)]
pub struct Runs {
    pub spawn: usize,
    pub rtt: usize,
    pub challenge_daemon: usize,
    pub challenge_direct: usize,
    pub reparse: usize,
    /// Refusals wait for the log to be quiet (300 ms) each: a few runs.
    pub refusal: usize,
    pub sha: usize,
    pub hook: usize,
    /// Hook calls each after a pause ([`PAUSE`]), as a user's hooks come.
    pub paused: usize,
    pub concurrent_per_caller: usize,
    pub append: usize,
    /// `judge-evidence panel` runs, and gate answers from a reused verdict.
    pub jury_panel: usize,
    pub jury_gate: usize,
    /// `judge-evidence check` runs over the attested commits, each way.
    pub attest_check: usize,
}

impl Runs {
    fn jury(&self) -> jury::JuryRuns {
        jury::JuryRuns { panel: self.jury_panel, gate: self.jury_gate, spawn: self.spawn }
    }
}

pub const CONCURRENT_CALLERS: usize = 64;
/// The pause between a cold-start ingest and the first timed query: one reconcile period
/// of the daemon's watcher.
pub const SETTLE: std::time::Duration = std::time::Duration::from_secs(2);
/// The quiet before each "after a pause" call: longer than the checkpoint thread's period,
/// so the daemon is idle and its log checkpointed, as between a user's hooks.
pub const PAUSE: std::time::Duration = std::time::Duration::from_millis(600);

impl Options {
    fn parse() -> Result<Options, String> {
        let workspace = workspace();
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut options = Options {
            mode: Mode::Full,
            quick: false,
            max_mb: 0,
            out: workspace.join("bench/results.md"),
            work: workspace.join("target/bench-work"),
            seed: 0x6a75_6467_6564,
            live_mb: 2.0,
            build: std::env::var_os("CARGO").is_some(),
            keep: false,
            compare: None,
            clients: 0,
            requests: 0,
            args: args.clone(),
        };
        let mut it = args.into_iter().peekable();
        match it.peek().map(String::as_str) {
            Some("jury") => options.mode = Mode::Jury,
            Some("load") => options.mode = Mode::Load,
            Some("attest") => options.mode = Mode::Attest,
            _ => {}
        }
        if options.mode != Mode::Full {
            it.next();
            options.out = workspace.join("bench").join(options.mode.report());
        }
        while let Some(arg) = it.next() {
            let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
            match arg.as_str() {
                "--quick" => options.quick = true,
                "--max-mb" => options.max_mb = value("--max-mb")?.parse().map_err(|e| format!("--max-mb: {e}"))?,
                "--out" => options.out = PathBuf::from(value("--out")?),
                "--work" => options.work = PathBuf::from(value("--work")?),
                "--seed" => options.seed = value("--seed")?.parse().map_err(|e| format!("--seed: {e}"))?,
                "--live-mb" => options.live_mb = value("--live-mb")?.parse().map_err(|e| format!("--live-mb: {e}"))?,
                "--no-build" => options.build = false,
                "--keep" => options.keep = true,
                "--compare" => options.compare = Some(PathBuf::from(value("--compare")?)),
                "--clients" => {
                    options.clients = value("--clients")?.parse().map_err(|e| format!("--clients: {e}"))?;
                }
                "--requests" => {
                    options.requests = value("--requests")?.parse().map_err(|e| format!("--requests: {e}"))?;
                }
                "-h" | "--help" => {
                    println!(
                        "usage: judged-bench [jury | load | attest] [--quick] [--max-mb N] [--out PATH] [--work DIR] [--seed N] [--live-mb N] [--no-build] [--keep] [--compare RESULTS.json] [--clients N] [--requests N]"
                    );
                    std::process::exit(0);
                }
                other => return Err(format!("unknown argument `{other}` (see --help)")),
            }
        }
        if options.max_mb == 0 {
            options.max_mb = match (options.mode, options.quick) {
                (Mode::Load, true) => 5,
                (Mode::Load, false) | (_, true) => 20,
                _ => 400,
            };
        }
        if options.clients == 0 {
            options.clients = if options.quick { 50 } else { 200 };
        }
        if options.requests == 0 {
            options.requests = if options.quick { 10 } else { 50 };
        }
        if options.out.is_dir() || options.out.extension().is_none_or(|e| e != "md") {
            options.out = options.out.join(options.mode.report());
        }
        Ok(options)
    }

    /// Root sizes, in MB, smallest first.
    pub fn stages(&self) -> Vec<u64> {
        let wanted: &[u64] = if self.quick { &[5] } else { &[10, 100, 192] };
        let mut stages: Vec<u64> = wanted.iter().copied().filter(|&mb| mb < self.max_mb).collect();
        stages.push(self.max_mb);
        stages
    }

    pub fn runs(&self) -> Runs {
        if self.quick {
            Runs {
                spawn: 100,
                rtt: 50,
                challenge_daemon: 7,
                challenge_direct: 5,
                reparse: 1,
                refusal: 3,
                sha: 1,
                hook: 100,
                paused: 5,
                concurrent_per_caller: 2,
                append: 50,
                jury_panel: 5,
                jury_gate: 50,
                attest_check: 3,
            }
        } else {
            Runs {
                spawn: 500,
                rtt: 200,
                challenge_daemon: 21,
                challenge_direct: 11,
                reparse: 3,
                refusal: 7,
                sha: 3,
                hook: 500,
                paused: 30,
                concurrent_per_caller: 8,
                append: 200,
                jury_panel: 20,
                jury_gate: 200,
                attest_check: 11,
            }
        }
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("bench/ has a parent").to_path_buf()
}

/// The release binaries under test.
pub struct Bins {
    pub judged: PathBuf,
    pub evidence: PathBuf,
    pub hook: PathBuf,
}

impl Bins {
    fn locate() -> Result<Bins, String> {
        let dir = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf))
            .filter(|d| d.join("judged").is_file())
            .unwrap_or_else(|| workspace().join("target/release"));
        let bins =
            Bins { judged: dir.join("judged"), evidence: dir.join("judge-evidence"), hook: dir.join("judge-hook") };
        for bin in [&bins.judged, &bins.evidence, &bins.hook] {
            if !bin.is_file() {
                return Err(format!("{} is missing: run `cargo build --release --workspace` first", bin.display()));
            }
        }
        Ok(bins)
    }
}

fn build() -> Result<(), String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("judged-bench: cargo build --release --workspace --bins");
    let status = Command::new(cargo)
        .args(["build", "--release", "--workspace", "--bins", "--quiet"])
        .current_dir(workspace())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() { Ok(()) } else { Err("building the release binaries failed".into()) }
}

/// Figures for one root size.
#[derive(Debug, Default)]
pub struct Stage {
    pub mb: u64,
    pub files: usize,
    pub bytes: u64,
    pub lines: u64,
    pub sha_ms: f64,
    pub ingest_ms: f64,
    /// VmHWM after the cold-start ingest, and after the challenge and verify runs.
    pub rss_kib: u64,
    pub rss_after_calls_kib: u64,
    pub db_bytes: u64,
    pub rtt: Samples,
    pub challenge_daemon: Samples,
    pub challenge_direct: Samples,
    /// Peak RSS (KiB) of each direct-mode `challenge` process, the root given as
    /// `COPILOT_HOME` / `CLAUDE_CONFIG_DIR`.
    pub challenge_direct_rss: Samples,
    /// The same direct-mode `challenge` with the Copilot root given as `--session-root`,
    /// and its peak RSS (KiB).
    pub challenge_session_root: Samples,
    pub challenge_session_root_rss: Samples,
    /// `challenge` of a binding no marker carries, default flags: the refusal (exit 3).
    pub refusal_daemon: Samples,
    pub refusal_direct: Samples,
    pub reparse: Samples,
    pub verify_daemon: Samples,
    pub verify_direct: Samples,
}

/// Figures taken once, on the largest root.
#[derive(Debug, Default)]
pub struct Hooks {
    pub spawn_true: Samples,
    pub ungated: Samples,
    pub decision: Samples,
    pub recorded: Samples,
    /// `/bin/true` and a new task's `TaskCompleted`, each after a [`PAUSE`].
    pub paused_true: Samples,
    pub paused_decision: Samples,
    pub concurrent_true: (Samples, f64),
    pub concurrent_hook: (Samples, f64),
    pub append_visible: Samples,
    /// VmHWM after the single-caller hook runs, after the concurrent ones, at the end.
    pub rss_after_hooks_kib: u64,
    pub rss_after_concurrent_kib: u64,
    pub rss_end_kib: u64,
}

/// Everything one run measured.
#[derive(Debug, Default)]
pub struct Results {
    pub spawn_true: Samples,
    pub stages: Vec<Stage>,
    pub hooks: Hooks,
    /// The jury's figures (issue 12).
    pub jury: Option<jury::JuryFigures>,
    /// The load suite (issue 13), and the root it ran over.
    pub load: Option<load::LoadFigures>,
    /// `judged prune` of half the store, on the largest root.
    pub prune: Option<prune::PruneFigures>,
    /// `judge-evidence check` over attested commits (issue 34).
    pub attest: Option<attest::AttestFigures>,
    pub copilot_sessions: u64,
    pub claude_sessions: u64,
    pub mode: Mode,
    pub load_before: String,
    pub load_after: String,
    pub started_at: String,
    pub seconds: f64,
}

/// The bench's view of the project: where artifacts go and how commands are made.
struct Bench<'a> {
    options: &'a Options,
    bins: &'a Bins,
    runs: Runs,
    layout: Layout,
    artifacts: PathBuf,
}

impl Bench<'_> {
    fn evidence(&self, mode: &str, home: &Path) -> Command {
        let mut command = Command::new(&self.bins.evidence);
        command
            .arg("--mode")
            .arg(mode)
            .current_dir(&self.layout.project)
            .env("JUDGED_HOME", home)
            .env("COPILOT_HOME", &self.layout.copilot_home)
            .env("CLAUDE_CONFIG_DIR", &self.layout.claude_home);
        command
    }

    fn artifact(&self, name: &str) -> PathBuf {
        self.artifacts.join(name)
    }

    /// `judge-evidence challenge` of `binding` for the project, in `mode`, writing
    /// `<label>.challenge.json`, with default flags but for `extra`.
    fn challenge_command(&self, label: &str, mode: &str, home: &Path, binding: &str, extra: &[&OsStr]) -> Command {
        let project = self.layout.project.to_string_lossy().into_owned();
        let mut command = self.evidence(mode, home);
        command.args(["challenge", "--binding", binding, "--cwd", &project, "--max-age-seconds", "600"]);
        command.arg("--replace").arg("--output").arg(self.artifact(&format!("{label}.challenge.json"))).args(extra);
        command
    }

    /// An accepted `challenge` (`--wait-seconds 0`, and `extra`), timed, as `label`;
    /// returns the samples, each process's peak RSS in KiB (direct mode only: in daemon
    /// mode the memory is the daemon's), and the nonce of the last run.
    fn challenge(
        &self,
        label: &str,
        mode: &str,
        home: &Path,
        binding: &str,
        runs: usize,
        extra: &[&OsStr],
    ) -> (Samples, Samples, String) {
        let extra = [&[OsStr::new("--wait-seconds"), OsStr::new("0")], extra].concat();
        let what = format!("challenge ({label})");
        let make = |_| (self.challenge_command(label, mode, home, binding, &extra), None);
        let (samples, rss_kib) = if mode == "direct" {
            let (samples, rss_kib, _) = measure::repeat_rss(&what, runs, 2, 0, make);
            (samples, rss_kib)
        } else {
            (measure::repeat(&what, runs, 2, 0, make).0, Samples::default())
        };
        let output = self.artifact(&format!("{label}.challenge.json"));
        let challenge: Value =
            serde_json::from_slice(&std::fs::read(&output).expect("challenge written")).expect("challenge is JSON");
        (samples, rss_kib, challenge["nonce"].as_str().expect("challenge has a nonce").to_owned())
    }

    /// A refused `challenge` (`unbound`: a binding no marker carries) with default flags,
    /// as a user runs it: it waits until the log has been quiet long enough, not the
    /// whole `--wait-seconds` (issue 10). The log is quiet: nothing appends meanwhile.
    fn refusal(&self, mode: &str, home: &Path, unbound: &str, runs: usize) -> Samples {
        let label = format!("{mode}.refused");
        measure::repeat(&format!("challenge --mode {mode} (refused)"), runs, 1, 3, |_| {
            (self.challenge_command(&label, mode, home, unbound, &[]), None)
        })
        .0
    }

    fn verify(&self, mode: &str, home: &Path, runs: usize) -> Samples {
        let challenge = self.artifact(&format!("{mode}.challenge.json"));
        let (evidence, response) =
            (self.artifact(&format!("{mode}.evidence.json")), self.artifact(&format!("{mode}.response.md")));
        let (samples, output) = measure::repeat(&format!("verify --mode {mode}"), runs, 2, 0, |_| {
            let mut command = self.evidence(mode, home);
            command.arg("verify").arg("--challenge").arg(&challenge).arg("--output").arg(&evidence);
            command.arg("--response-output").arg(&response).args(["--replace", "--wait-seconds", "0"]);
            (command, None)
        });
        let evidence: Value = serde_json::from_slice(&output.stdout).expect("evidence is JSON");
        assert_eq!(evidence["status"], "verified", "the generated lifecycle verifies cross-family");
        samples
    }

    fn hook(&self, home: &Path, payload: Value) -> (Command, Option<Vec<u8>>) {
        let mut command = Command::new(&self.bins.hook);
        command.args(["--host", "claude-code"]).env("JUDGED_HOME", home);
        (command, Some(payload.to_string().into_bytes()))
    }

    /// A Claude Code `TaskCompleted` payload for the project.
    fn task_completed(&self, live: &LiveSession, task: usize) -> Value {
        self.task_payload(&live.session_id, &live.path, task)
    }

    /// A Claude Code `TaskCompleted` payload for the project, from session `session_id`.
    fn task_payload(&self, session_id: &str, transcript: &Path, task: usize) -> Value {
        json!({
            "session_id": session_id,
            "transcript_path": transcript,
            "cwd": self.layout.project,
            "permission_mode": "default",
            "hook_event_name": "TaskCompleted",
            "task_id": task.to_string(),
            "task_subject": format!("Implement step {task}"),
            "task_description": "Totals must round half-even",
        })
    }

    /// Grow the root to `mb` MB and put a fresh marker in the live session: the marker's
    /// binding, the root's logs and their bytes.
    fn grow_root(
        &self,
        generator: &mut Generator,
        live: &mut LiveSession,
        rng: &mut Rng,
        mb: u64,
    ) -> (String, Vec<PathBuf>, u64) {
        generator.grow_to(mb * MB).expect("root written");
        // Write the new logs back to disk before timing: otherwise the kernel flushes them
        // during the ingest, behind the store's own syncs, and the ingest figure measures
        // the generator's writeback.
        let _ = Command::new("sync").status();
        let binding = generate::binding(rng);
        live.append_marker(&binding).expect("marker appended");
        let files = generate::discover(&self.layout);
        let bytes: u64 = files.iter().map(|f| generate::file_len(f)).sum();
        (binding, files, bytes)
    }

    /// One root size: grow, hash, ingest cold, then challenge and verify.
    fn stage(&self, generator: &mut Generator, live: &mut LiveSession, rng: &mut Rng, mb: u64) -> (Stage, Daemon) {
        eprintln!("judged-bench: generating a {mb} MB root");
        let (binding, files, bytes) = self.grow_root(generator, live, rng, mb);
        let mut stage = Stage { mb, files: files.len(), bytes, ..Stage::default() };
        let runs = self.runs;

        eprintln!("judged-bench: {mb} MB: sha256sum and cold-start ingest");
        stage.sha_ms = Samples::new((0..self.runs.sha).map(|_| measure::sha256sum(&files)).collect()).median();
        let home = self.options.work.join(format!("home-{mb}"));
        let (daemon, ready_ms) =
            Daemon::start(&self.bins.judged, &home, &self.layout.copilot_root(), &self.layout.claude_root());
        let status = daemon.status();
        assert_eq!(status["bytes"].as_u64(), Some(bytes), "the daemon ingested every byte before answering");
        stage.ingest_ms = ready_ms;
        stage.lines = status["lines"].as_u64().unwrap_or(0);
        stage.rss_kib = daemon.vm_kib("VmHWM");
        stage.db_bytes = daemon.db_bytes();
        // Let the daemon settle before timing queries: right after a cold catch-up its
        // checkpoint thread is still syncing the database, the kernel is writing back
        // what the catch-up wrote (a gigabyte at the largest size) and the watcher is
        // adding a watch per directory; the latency figures are about a daemon at work.
        std::thread::sleep(SETTLE);
        let _ = Command::new("sync").status();
        stage.rtt = daemon.round_trips(self.runs.rtt);

        eprintln!("judged-bench: {mb} MB: challenge");
        let home = &daemon.home;
        let (samples, _, daemon_nonce) = self.challenge("daemon", "daemon", home, &binding, runs.challenge_daemon, &[]);
        stage.challenge_daemon = samples;
        let (samples, rss_kib, direct_nonce) =
            self.challenge("direct", "direct", home, &binding, runs.challenge_direct, &[]);
        (stage.challenge_direct, stage.challenge_direct_rss) = (samples, rss_kib);
        let copilot_root = self.layout.copilot_root();
        let named = [OsStr::new("--session-root"), copilot_root.as_os_str()];
        let (samples, rss_kib, _) =
            self.challenge("session-root", "direct", home, &binding, runs.challenge_direct, &named);
        (stage.challenge_session_root, stage.challenge_session_root_rss) = (samples, rss_kib);
        eprintln!("judged-bench: {mb} MB: refusals");
        let unbound = generate::binding(rng);
        stage.refusal_daemon = self.refusal("daemon", home, &unbound, runs.refusal);
        stage.refusal_direct = self.refusal("direct", home, &unbound, runs.refusal);
        stage.reparse = Samples::new(
            (0..self.runs.reparse)
                .map(|_| {
                    let (ms, lines) = measure::full_reparse(&files);
                    assert!(lines > 0);
                    ms
                })
                .collect(),
        );

        eprintln!("judged-bench: {mb} MB: verify");
        live.append_review(&daemon_nonce).expect("review appended");
        live.append_review(&direct_nonce).expect("review appended");
        stage.verify_daemon = self.verify("daemon", &daemon.home, runs.challenge_daemon);
        stage.verify_direct = self.verify("direct", &daemon.home, runs.challenge_direct);
        stage.rss_after_calls_kib = daemon.vm_kib("VmHWM");
        (stage, daemon)
    }

    /// The load suite's daemon: a root of `mb` MB with a marker in the live session, a
    /// cold-start ingest, then one accepted `challenge` and its verified review, so that
    /// a `TaskCompleted` for the project is allowed. Returns the root's figures, the
    /// daemon and the marker's binding.
    fn load_setup(
        &self,
        generator: &mut Generator,
        live: &mut LiveSession,
        rng: &mut Rng,
        mb: u64,
    ) -> (Stage, Daemon, String) {
        eprintln!("judged-bench: load: generating a {mb} MB root");
        let (binding, files, bytes) = self.grow_root(generator, live, rng, mb);
        let home = self.options.work.join("home-load");
        let (daemon, ready_ms) =
            Daemon::start(&self.bins.judged, &home, &self.layout.copilot_root(), &self.layout.claude_root());
        let status = daemon.status();
        let lines = status["lines"].as_u64().unwrap_or(0);
        let stage = Stage { mb, files: files.len(), bytes, lines, ingest_ms: ready_ms, ..Stage::default() };
        std::thread::sleep(SETTLE);
        let (_, _, nonce) = self.challenge("daemon", "daemon", &daemon.home, &binding, 1, &[]);
        live.append_review(&nonce).expect("review appended");
        self.verify("daemon", &daemon.home, 1);
        (stage, daemon, binding)
    }

    /// The hook shim and append-to-visible, against the daemon of the largest root.
    fn hooks(&self, daemon: &Daemon, live: &mut LiveSession) -> Hooks {
        eprintln!("judged-bench: hook round trips");
        let runs = self.runs;
        let home = &daemon.home;
        let spawn_true = || (Command::new("/bin/true"), Some(b"{}".to_vec()));
        let mut hooks = Hooks {
            spawn_true: measure::repeat("/bin/true", runs.spawn, 5, 0, |_| spawn_true()).0,
            ..Hooks::default()
        };
        let ungated = json!({"session_id": live.session_id, "cwd": self.layout.project, "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"}});
        hooks.ungated =
            measure::repeat("judge-hook (ungated)", runs.hook, 5, 0, |_| self.hook(home, ungated.clone())).0;
        // A new task each call: a decision is made and journaled every time.
        hooks.decision = measure::repeat("judge-hook TaskCompleted", runs.hook, 5, 0, |i| {
            self.hook(home, self.task_completed(live, i))
        })
        .0;
        let repeated = self.task_completed(live, usize::MAX);
        hooks.recorded = measure::repeat("judge-hook TaskCompleted (repeated)", runs.hook, 5, 0, |_| {
            self.hook(home, repeated.clone())
        })
        .0;

        let paused = |make: (Command, Option<Vec<u8>>)| {
            std::thread::sleep(PAUSE);
            make
        };
        hooks.paused_true = measure::repeat("/bin/true after a pause", runs.paused, 1, 0, |_| paused(spawn_true())).0;
        hooks.paused_decision = measure::repeat("judge-hook TaskCompleted after a pause", runs.paused, 1, 0, |i| {
            paused(self.hook(home, self.task_completed(live, 2_000_000 + i)))
        })
        .0;

        hooks.rss_after_hooks_kib = daemon.vm_kib("VmHWM");

        eprintln!("judged-bench: {CONCURRENT_CALLERS} concurrent callers");
        let per = runs.concurrent_per_caller;
        hooks.concurrent_true = measure::concurrent("/bin/true", CONCURRENT_CALLERS, per, 0, &|_| spawn_true());
        let offset = 1_000_000;
        hooks.concurrent_hook = measure::concurrent("judge-hook TaskCompleted", CONCURRENT_CALLERS, per, 0, &|i| {
            self.hook(home, self.task_completed(live, offset + i))
        });

        hooks.rss_after_concurrent_kib = daemon.vm_kib("VmHWM");

        eprintln!("judged-bench: append-to-visible");
        hooks.append_visible = daemon.append_to_visible(live, runs.append);
        hooks.rss_end_kib = daemon.vm_kib("VmHWM");
        hooks
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() {
    let options = match Options::parse() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("judged-bench: {message}");
            std::process::exit(2);
        }
    };
    if options.build
        && let Err(message) = build()
    {
        eprintln!("judged-bench: {message}");
        std::process::exit(1);
    }
    let bins = match Bins::locate() {
        Ok(bins) => bins,
        Err(message) => {
            eprintln!("judged-bench: {message}");
            std::process::exit(1);
        }
    };
    let earlier = match options.compare.as_deref().map(|path| read_earlier(path).map(|f| (path.to_path_buf(), f))) {
        Some(Ok(earlier)) => Some(earlier),
        Some(Err(message)) => {
            eprintln!("judged-bench: {message}");
            std::process::exit(2);
        }
        None => None,
    };
    let started = std::time::Instant::now();
    let mut results = Results {
        mode: options.mode,
        load_before: load_average(),
        started_at: generate::iso(generate::now_ms()),
        ..Results::default()
    };

    let _ = std::fs::remove_dir_all(&options.work);
    let layout = Layout::create(&options.work.join("root")).expect("work dir");
    let artifacts = options.work.join("artifacts");
    std::fs::create_dir_all(&artifacts).expect("artifacts dir");
    let bench = Bench { options: &options, bins: &bins, runs: options.runs(), layout: layout.clone(), artifacts };

    let mut generator = Generator::new(options.seed, layout);
    let mut rng = Rng::new(options.seed ^ 0xb1d);
    match options.mode {
        Mode::Jury => results.jury = Some(jury::measure(&bins, &options.work, bench.runs.jury())),
        Mode::Attest => results.attest = Some(attest::measure(&bins, &options.work, bench.runs.attest_check)),
        Mode::Load => {
            let mut live = generator.live_session((options.live_mb * MB as f64) as u64).expect("live session written");
            let (stage, daemon, binding) = bench.load_setup(&mut generator, &mut live, &mut rng, options.max_mb);
            let (clients, requests) = (options.clients, options.requests);
            results.load = Some(load::run(&bench, &bins, &daemon, &mut live, &binding, clients, requests));
            results.stages.push(stage);
            daemon.stop();
        }
        Mode::Full => {
            let mut live = generator.live_session((options.live_mb * MB as f64) as u64).expect("live session written");
            results.spawn_true =
                measure::repeat("/bin/true", bench.runs.spawn, 5, 0, |_| (Command::new("/bin/true"), None)).0;
            let stages = options.stages();
            let mut last_daemon = None;
            for (i, &mb) in stages.iter().enumerate() {
                let (stage, daemon) = bench.stage(&mut generator, &mut live, &mut rng, mb);
                eprintln!("{}", report::stage_line(&stage, &results.spawn_true));
                results.stages.push(stage);
                if i + 1 < stages.len() {
                    let home = daemon.home.clone();
                    daemon.stop();
                    let _ = std::fs::remove_dir_all(home);
                } else {
                    last_daemon = Some(daemon);
                }
            }
            let daemon = last_daemon.expect("at least one stage");
            results.hooks = bench.hooks(&daemon, &mut live);
            results.prune = Some(prune::measure(&bins.judged, &daemon));
            daemon.stop();
            results.jury = Some(jury::measure(&bins, &options.work, bench.runs.jury()));
            results.attest = Some(attest::measure(&bins, &options.work, bench.runs.attest_check));
        }
    }

    results.copilot_sessions = generator.written.copilot_sessions;
    results.claude_sessions = generator.written.claude_sessions;
    results.load_after = load_average();
    results.seconds = started.elapsed().as_secs_f64();
    let mut markdown = report::render(&options, &results);
    let regressed = earlier.as_ref().is_some_and(|(path, earlier)| {
        let (table, regressed) = report::compare(&results, earlier, &path.display().to_string());
        markdown.push_str(&table);
        regressed
    });
    println!("{markdown}");
    if let Some(dir) = options.out.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(&options.out, &markdown).expect("results written");
    let figures = options.out.with_extension("json");
    let json = serde_json::to_string_pretty(&report::figures(&results)).expect("figures serialise");
    std::fs::write(&figures, json + "\n").expect("figures written");
    eprintln!("judged-bench: wrote {} and {}", options.out.display(), figures.display());
    if !options.keep {
        let _ = std::fs::remove_dir_all(&options.work);
    }
    if regressed {
        eprintln!("judged-bench: a target's figure is more than 20 % worse than in the earlier run (see the report)");
        std::process::exit(3);
    }
}

/// The earlier run's figures named by `--compare`, read before anything is measured.
fn read_earlier(path: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("--compare {}: {e}", path.display()))?;
    let figures: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("--compare {}: not JSON ({e}); pass a results.json this bench wrote", path.display()))?;
    if !figures["targets"].is_object() {
        return Err(format!("--compare {}: no `targets` object; pass a results.json this bench wrote", path.display()));
    }
    Ok(figures)
}
