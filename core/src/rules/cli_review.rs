//! Reviewer evidence for an agent that runs its reviewer as a shell call (issues 14, 24):
//! after a `host: claude-code`, `host: codex-cli` or `host: gemini-cli` challenge, the
//! agent runs a reviewer
//! CLI of another family as a root shell call, the Codex CLI (`codex exec`), the Copilot
//! CLI (`copilot -p`), Claude Code (`claude -p`) or Gemini CLI (`gemini -p`), and that
//! CLI's own log of the run (a Codex rollout, a Copilot session log, a Claude Code
//! transcript, a Gemini CLI recording) is the record of the review.
//!
//! Exactly one reviewer run may carry the challenge's nonce line in its prompt; it must run
//! in the challenge's cwd, start after the challenge and inside the one root shell call of
//! the executor's log that started it (between the call and its result), and complete. The
//! reviewer's model comes from the run's log (a rollout's `turn_context.model`, the model
//! the run asked for, which is all a rollout records, docs/spec/host-formats.md §G; the model on a
//! Copilot session's own records; the `message.model` of a transcript's answers, the
//! model that answered; the `model` of a recording's answers, the one asked for), the executor's from its own log (a Claude Code
//! transcript's `message.model`, a Codex rollout's `turn_context.model`, the `model` of a
//! Gemini CLI recording's answers); the same family
//! is rejected (exit 10) as for Copilot's rubber-duck.

use super::challenge::revalidate;
use super::session;
use super::validate::{revalidate_marker, revalidate_prefix};
use super::verify::{Review, Verified, VerifyRequest};
use super::{
    Artifact, EVIDENCE_SCHEMA, Env, EvidenceError, EvidenceId, FamilyPair, IdentityAssurance, RefusalCode, Result,
    has_nonce_line,
};
use super::{EvidenceStatus, Nonce};
use crate::adapter::{ReviewerRun, RunAnswers, RunOpens, RunsOnce};
use crate::event::{Host, Record, SessionId, ToolCall, ToolResult};
use crate::log::{Line, SessionLog};
use crate::{adapter, chain, timestamp};
use chrono::{DateTime, Utc};
use serde_json::Value;

/// An agent that runs its reviewer as a shell call, by the host that writes its log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Executor(Host);

impl Executor {
    /// Where the executor's model was read (`executor_model_source`).
    fn model_source(self) -> &'static str {
        adapter::of(self.0).model_source()
    }

    /// A shell call of this executor as messages name it (Claude Code's tool is `Bash`).
    fn shell_call(self) -> String {
        format!("{} call", adapter::hooks(self.0).shell_tool())
    }
}

/// Whether an agent on `host` runs its reviewer as a shell call whose reviewer CLI's own
/// log is the record: every host some reviewer CLI reviews ([`ReviewerCli::reviewing`]).
pub fn reviews_by_shell_call(host: Host) -> bool {
    !ReviewerCli::reviewing(host).is_empty()
}

/// A reviewer CLI whose own log of a run is the record of a review: the host that writes
/// that log, and what its module says of such a run ([`ReviewerRun`]).
#[derive(Clone, Copy, Debug)]
pub struct ReviewerCli {
    host: Host,
    run: &'static ReviewerRun,
}

impl PartialEq for ReviewerCli {
    fn eq(&self, other: &ReviewerCli) -> bool {
        self.host == other.host
    }
}

impl Eq for ReviewerCli {}

impl ReviewerCli {
    /// Every reviewer CLI: each host whose module says how its CLI runs as a reviewer.
    pub fn all() -> impl Iterator<Item = ReviewerCli> {
        Host::ALL.into_iter().filter_map(ReviewerCli::of_host)
    }

    /// The reviewer CLI of `host`, when its CLI runs as one.
    pub fn of_host(host: Host) -> Option<ReviewerCli> {
        adapter::of(host).reviewer_run().map(|run| ReviewerCli { host, run })
    }

    /// The `agent_name` of evidence of a review by this CLI.
    pub fn agent_name(self) -> &'static str {
        self.run.agent_name
    }

    /// Where the reviewer's model was read (`identity_source`).
    pub fn identity_source(self) -> &'static str {
        adapter::of(self.host).model_source()
    }

    /// The host that writes this CLI's log of a run.
    pub fn host(self) -> Host {
        self.host
    }

    /// The program that runs it, as found on a `PATH`.
    pub fn program(self) -> &'static str {
        self.run.program
    }

    /// The reviewer CLIs of another family that review an agent on `host`, each with how
    /// the gate tells the agent to run it ([`HostHooks::reviewed_by`]).
    ///
    /// [`HostHooks::reviewed_by`]: crate::adapter::HostHooks::reviewed_by
    pub fn reviewing(host: Host) -> Vec<(ReviewerCli, &'static str)> {
        let reviewed_by = adapter::hooks(host).reviewed_by().iter();
        reviewed_by
            .filter_map(|by| ReviewerCli::of_host(by.reviewer).map(|cli| (cli, by.run_as.unwrap_or(cli.command()))))
            .collect()
    }

    /// The CLI whose review `agent_name` names.
    pub fn of_evidence(agent_name: &str) -> Option<ReviewerCli> {
        ReviewerCli::all().find(|cli| cli.agent_name() == agent_name)
    }

    /// The CLI as messages name it.
    fn name(self) -> &'static str {
        self.run.name
    }

    /// The command as messages name it.
    pub fn command(self) -> &'static str {
        self.run.command
    }

    /// Whether a shell call runs this CLI non-interactively: one of its simple commands
    /// (past `NAME=value` assignments and wrappers such as `env`, `timeout 900` or `npx`)
    /// is its program (or `npx` of its package) with the arguments that run it once
    /// ([`RunsOnce`]: `codex … exec …`, `copilot … -p|--prompt …`), also inside a
    /// subshell or a command substitution.
    fn runs_in(self, call: &ToolCall) -> bool {
        let command = call.command().unwrap_or_default();
        // Subshells and command substitutions run commands too: `(cd x && codex exec -)`.
        command.split([';', '|', '&', '\n', '(', ')', '`']).any(|simple| {
            let words: Vec<&str> = simple.split_whitespace().collect();
            let Some((program, args)) = program_words(&words).split_first() else { return false };
            let name = program.rsplit('/').next().unwrap_or_default();
            let is_it = name == self.run.program || program.split('@').nth(1) == Some(self.run.package);
            is_it
                && match self.run.once {
                    RunsOnce::Flag { words, prefixes } => args
                        .iter()
                        .any(|arg| words.contains(arg) || prefixes.iter().any(|prefix| arg.starts_with(prefix))),
                    RunsOnce::Subcommand { first, anywhere } => {
                        anywhere.is_some_and(|sub| args.contains(&sub))
                            || args.iter().find(|arg| !arg.starts_with('-')) == Some(&first)
                    }
                }
        })
    }
}

/// On the wire (a hook's `installed_reviewers`) a reviewer CLI is its [`ReviewerRun::key`].
impl serde::Serialize for ReviewerCli {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        serializer.serialize_str(self.run.key)
    }
}

impl<'de> serde::Deserialize<'de> for ReviewerCli {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<ReviewerCli, D::Error> {
        static KEYS: std::sync::LazyLock<Vec<&'static str>> =
            std::sync::LazyLock::new(|| ReviewerCli::all().map(|cli| cli.run.key).collect());
        let key = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        ReviewerCli::all().find(|cli| cli.run.key == key).ok_or_else(|| serde::de::Error::unknown_variant(&key, &KEYS))
    }
}

/// A simple command's words from its program on: past `NAME=value` assignments and the
/// wrappers that run the rest as a command (with their options, and `timeout`'s duration).
fn program_words<'a>(words: &'a [&'a str]) -> &'a [&'a str] {
    let mut at = 0;
    while let Some(word) = words.get(at) {
        let wrapper = word.rsplit('/').next().unwrap_or_default();
        if is_assignment(word) {
            at += 1;
            continue;
        }
        if !matches!(wrapper, "env" | "timeout" | "nice" | "nohup" | "command" | "exec" | "npx" | "pnpx" | "bunx") {
            break;
        }
        at += 1;
        while words.get(at).is_some_and(|w| w.starts_with('-')) {
            at += 1;
        }
        if wrapper == "timeout" {
            at += 1;
        }
    }
    &words[at.min(words.len())..]
}

/// A shell `NAME=value` word.
fn is_assignment(word: &str) -> bool {
    word.split_once('=')
        .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

/// A reviewer CLI's run as its own log records it, up to where it completed.
struct CliRun<'a> {
    cli: ReviewerCli,
    log: &'a SessionLog,
    session_id: SessionId,
    cwd: String,
    started: DateTime<Utc>,
    model: String,
    /// The run's answer, and when and where (the line's end) it completed.
    completed: Option<(String, String, u64)>,
}

impl<'a> CliRun<'a> {
    /// The run a reviewer CLI's log records, when its prompt carries `nonce`; `None` for
    /// any other log.
    fn bound(log: &'a SessionLog, nonce: &Nonce) -> Option<CliRun<'a>> {
        let cli = ReviewerCli::of_host(log.host)?;
        let own = || log.records().filter(|(_, r)| r.root);
        if !prompts(log, cli).any(|prompt| has_nonce_line(prompt, nonce)) {
            return None;
        }
        let meta = session::metadata(log, log.len()).ok()?;
        // A transcript has no opening record: its first conversation record opens the run.
        let (_, start) = match cli.run.opens {
            RunOpens::FirstNamed => own().find(|(_, r)| r.session_id.is_some() && r.cwd.is_some())?,
            RunOpens::SessionStart => own().find(|(_, r)| r.session_start)?,
        };
        let mut models: Vec<&str> = own().filter_map(|(_, r)| r.model.as_deref()).collect();
        models.dedup();
        let completed = completion(log, cli.run.answers);
        Some(CliRun {
            cli,
            log,
            session_id: meta.session_id,
            cwd: meta.cwd,
            started: start.timestamp.as_deref().and_then(timestamp::parse)?,
            model: if models.len() == 1 { models[0].to_owned() } else { String::new() },
            completed,
        })
    }
}

/// The root prompts a reviewer CLI's log opens with: those before its model's first
/// answer ([`ReviewerRun::answer_kind`]), or its first prompt alone.
fn prompts(log: &SessionLog, cli: ReviewerCli) -> impl Iterator<Item = &str> {
    let run = cli.run;
    let opening =
        log.records().filter(|(_, r)| r.root).take_while(move |(_, r)| Some(r.kind.as_str()) != run.answer_kind);
    let prompts = opening.filter(move |(_, r)| r.kind == run.prompt_kind);
    prompts.take(if run.answer_kind.is_some() { usize::MAX } else { 1 }).filter_map(|(_, r)| r.text.as_deref())
}

/// The review nonces (`ARIS_REVIEW_NONCE=…` lines) the prompts a Codex CLI, Copilot CLI,
/// Claude Code, Gemini CLI or Qwen Code session opens with carry: what may make it a
/// reviewer's run, whose end is a reviewer's answer, not an agent's finished work. The
/// host may put text the agent wrote in those prompts (a project's `AGENTS.md`, a hook's
/// context), so a nonce says so only where the daemon issued it, for another session.
pub fn reviewer_run_nonces(log: &SessionLog) -> Vec<&str> {
    let Some(cli) = ReviewerCli::of_host(log.host) else { return Vec::new() };
    let lines = prompts(log, cli).flat_map(|prompt| prompt.split('\n'));
    lines.filter_map(|line| line.trim_end().strip_prefix("ARIS_REVIEW_NONCE=")).filter(|n| !n.is_empty()).collect()
}

/// The run's answer, and when and where (the line's end) it completed, as its CLI's log
/// records them ([`RunAnswers`]); `None` while it has not completed.
fn completion(log: &SessionLog, answers: RunAnswers) -> Option<(String, String, u64)> {
    match answers {
        RunAnswers::EndRecord(kind) => log
            .records()
            .find(|(_, r)| r.root && r.kind == kind)
            .and_then(|(line, r)| Some((r.text.clone().unwrap_or_default(), r.timestamp.clone()?, line.end))),
        RunAnswers::SessionEnd { answer, error, end } => session_end(log, answer, error, end),
        RunAnswers::LastAnswer(kind) => last_answer(log, kind),
        RunAnswers::FinishedAfterText(kind) => finished_after_text(log, kind),
    }
}

/// A run whose log records no end of its own (`claude -p`, `gemini -p`, `qwen -p`) completes
/// with the model's last answer (records of
/// `kind`) that called no tool: a transcript or recording records no end of its own, and
/// the shell call's exit says the process ended.
fn last_answer<'a>(log: &'a SessionLog, kind: &'a str) -> Option<(String, String, u64)> {
    let mut answer = None;
    for (line, record) in log.records().filter(|(_, r)| r.root && r.kind == kind) {
        answer = match (&record.text, record.tool_calls.is_empty()) {
            (Some(text), true) if !text.is_empty() => Some((text.clone(), record.timestamp.clone()?, line.end)),
            (_, false) => None,
            _ => answer,
        };
    }
    answer
}

/// A run whose log records its messages' ends (`opencode run`) completes with its last
/// record of `finished`, a message done for another reason than to call tools; its answer
/// is the last text written before that.
fn finished_after_text(log: &SessionLog, finished: &str) -> Option<(String, String, u64)> {
    let mut text = None;
    let mut completed = None;
    for (line, record) in log.records().filter(|(_, r)| r.root) {
        if record.kind == finished {
            completed = Some((text.clone()?, record.timestamp.clone()?, line.end));
        } else if let Some(part) = record.text.as_ref().filter(|t| !t.is_empty()) {
            text = Some(part.clone());
        }
    }
    completed
}

/// A run whose log records its session's end (`copilot -p`'s shutdown) completes there, no
/// `error` before it; its answer is the last thing the model said (`answer` records).
fn session_end(log: &SessionLog, answer: &str, error: &str, end: &str) -> Option<(String, String, u64)> {
    let mut said = None;
    for (line, record) in log.records().filter(|(_, r)| r.root) {
        if record.kind == answer {
            said = record.text.clone().filter(|t| !t.is_empty()).or(said);
        } else if record.kind == error {
            return None;
        } else if record.kind == end {
            return Some((said?, record.timestamp.clone()?, line.end));
        }
    }
    None
}

/// A root shell call of the executor's log that runs a reviewer CLI, with where it ended.
struct ShellRun<'a> {
    call: &'a ToolCall,
    started: DateTime<Utc>,
    returned: Option<Returned<'a>>,
}

/// Where a shell call ended: the result that says how, its record and line, and when.
#[derive(Clone, Copy)]
struct Returned<'a> {
    line: &'a Line,
    record: &'a Record,
    result: &'a ToolResult,
    at: DateTime<Utc>,
}

/// The result of the call `id`, the first the log records.
fn result_of<'a>(log: &'a SessionLog, id: &str) -> Option<Returned<'a>> {
    log.records().find_map(|(line, record)| {
        let result = record.tool_results.iter().find(|r| r.tool_call_id.as_deref() == Some(id))?;
        let at = record.timestamp.as_deref().and_then(timestamp::parse)?;
        Some(Returned { line, record, result, at })
    })
}

/// Where a call that first returned as `first` ended: there, or, when its process was still
/// running then, at the first root `write_stdin` poll of that session that found it exited
/// (`None` while none has).
fn ended<'a>(log: &'a SessionLog, first: Returned<'a>) -> Option<Returned<'a>> {
    let Some(session) = first.result.still_running else { return Some(first) };
    let polls = log.records().filter(|(line, r)| r.root && line.start >= first.line.end).flat_map(|(_, r)| {
        r.tool_calls
            .iter()
            .filter(|c| c.name == "write_stdin" && c.arguments.get("session_id") == Some(&session.into()))
    });
    polls
        .filter_map(|poll| result_of(log, poll.id.as_deref()?))
        .find(|returned| returned.result.still_running != Some(session))
}

/// The root shell calls after byte `after` that run `cli`.
fn cli_calls(log: &SessionLog, after: u64, cli: ReviewerCli) -> Vec<ShellRun<'_>> {
    let mut runs: Vec<ShellRun> = Vec::new();
    for (line, record) in log.records() {
        if line.start < after || !record.root {
            continue;
        }
        let Some(started) = record.timestamp.as_deref().and_then(timestamp::parse) else { continue };
        for call in record.tool_calls.iter().filter(|c| session::is_shell_tool(&c.name) && cli.runs_in(c)) {
            let returned = call.id.as_deref().and_then(|id| result_of(log, id)).and_then(|first| ended(log, first));
            runs.push(ShellRun { call, started, returned });
        }
    }
    runs
}

/// Whether the executor's `log` holds a root shell call, made since `since` (its
/// challenge), that runs `cli` around a run that began at `began` (started before it, not
/// returned before it), as verify binds a review to its shell call: what makes a session
/// that opens with the nonce of the executor's challenge that challenge's reviewer's run,
/// rather than any session whose opening the agent had carry the nonce (a project's
/// `AGENTS.md`).
pub fn runs_reviewer_around(log: &SessionLog, cli: ReviewerCli, since: DateTime<Utc>, began: DateTime<Utc>) -> bool {
    cli_calls(log, 0, cli)
        .iter()
        .any(|c| since <= c.started && c.started <= began && c.returned.is_none_or(|returned| began <= returned.at))
}

/// Whether `path` is `dir` or below it (both resolved).
fn within(path: &str, dir: &str) -> bool {
    std::path::Path::new(path).starts_with(dir)
}

/// The one root shell call of the executor's log after byte `after` that runs `run`'s CLI
/// around it (started before the run, returned after its start), returned successfully:
/// its id, and the line and record of its result.
fn the_shell_call<'a>(log: &'a SessionLog, after: u64, run: &CliRun) -> Result<(Option<String>, &'a Line, &'a Record)> {
    let shell_call = Executor(log.host).shell_call();
    let calls: Vec<ShellRun> = cli_calls(log, after, run.cli)
        .into_iter()
        .filter(|c| c.started <= run.started && c.returned.is_none_or(|returned| run.started <= returned.at))
        .collect();
    let [call] = calls.as_slice() else {
        return Err(EvidenceError::new(
            RefusalCode::InvocationCount,
            format!(
                "expected exactly one root {shell_call} running {} around the {} run {}, found {}",
                run.cli.command(),
                run.cli.name(),
                run.log.path,
                calls.len()
            ),
        ));
    };
    let Some(returned) = call.returned else {
        let message = format!("the {shell_call} running {} has not returned", run.cli.command());
        return Err(EvidenceError::new(RefusalCode::Lifecycle, message));
    };
    if !returned.result.success {
        let message = format!("the {shell_call} running {} did not succeed", run.cli.command());
        return Err(EvidenceError::new(RefusalCode::Lifecycle, message));
    }
    Ok((call.call.id.clone(), returned.line, returned.record))
}

/// Verify the reviewer CLI's review bound to a Claude Code, Codex CLI or Gemini CLI
/// `challenge`: `log`
/// is the executor's log, `reviewer_logs` the reviewer CLIs' logs that may hold the run
/// (any cwd; those of another cwd are refused by name; `log` itself, should it be among
/// them, is not a reviewer's).
pub fn verify_cli_review(
    challenge: &Artifact,
    log: &SessionLog,
    reviewer_logs: &[&SessionLog],
    request: &VerifyRequest,
    env: &dyn Env,
) -> Result<Verified> {
    let bound = revalidate(challenge, log, env)?;
    let nonce = &Nonce::of(challenge)?;
    let executor_model = bound.ids.executor_model;
    let cwd = env.resolve(bound.cwd);
    let challenge_time = challenge.timestamp("challenge_event_timestamp")?;
    let prefix = bound.prefix;

    let runs: Vec<CliRun> =
        reviewer_logs.iter().filter(|l| l.path != log.path).filter_map(|l| CliRun::bound(l, nonce)).collect();
    if let Some(elsewhere) = runs.iter().find(|r| !within(&env.resolve(&r.cwd), &cwd)) {
        return Err(EvidenceError::new(
            RefusalCode::InvocationCount,
            format!(
                "the nonce-bound {} run {} ran in {}, not in the challenge's cwd {cwd} or below it",
                elsewhere.cli.name(),
                elsewhere.log.path,
                elsewhere.cwd
            ),
        ));
    }
    let runs: Vec<CliRun> = runs.into_iter().filter(|r| r.started >= challenge_time).collect();
    let [run] = runs.as_slice() else {
        return Err(EvidenceError::new(
            RefusalCode::InvocationCount,
            format!(
                "expected exactly one nonce-bound reviewer run (`codex exec`, `copilot -p`, `claude -p` or `gemini -p`) after the challenge, found {}",
                runs.len()
            ),
        ));
    };
    let (call_id, tool_line, tool_record) = the_shell_call(log, prefix, run)?;
    let Some((answer, completed_at, run_end)) = run.completed.clone() else {
        let message = format!("the {} reviewer run did not complete", run.cli.name());
        return Err(EvidenceError::new(RefusalCode::Lifecycle, message));
    };
    if run.model.is_empty() {
        return Err(EvidenceError::evidence(format!(
            "the {} log {} names no single model for the run",
            run.cli.name(),
            run.log.path
        )));
    }
    let review = Review {
        pair: FamilyPair::of(executor_model, &run.model, "host-event-verified-cross-family"),
        log,
        prefix: tool_line.end,
        request,
        reviewed_at: Some(tool_record.timestamp.clone().unwrap_or(completed_at)),
        tool_call_id: call_id,
        agent_name: run.cli.agent_name().to_owned(),
        executor_model,
        reviewer_model: &run.model,
        reviewer_model_source: run.cli.identity_source(),
        response: &answer,
    };
    let mut evidence = review.evidence(&bound, nonce);
    evidence.executor_model_source = Some(Executor(log.host).model_source().to_owned());
    evidence.identity_source = Some(run.cli.identity_source().to_owned());
    evidence.identity_assurance = Some(IdentityAssurance::HostRecorded);
    evidence.reviewer_host = Some(run.cli.host());
    evidence.reviewer_session_events = Some(run.log.path.clone());
    evidence.reviewer_session_id = Some(run.session_id.clone());
    evidence.reviewer_prefix_bytes = Some(run_end);
    evidence.reviewer_prefix_sha256 = Some(run.log.prefix_sha256(run_end));
    evidence.challenge_event_timestamp = challenge.str("challenge_event_timestamp").map(str::to_owned);
    Ok(Verified { evidence, response: answer, window_start: bound.marker.start_line.start })
}

/// What [`validate_cli_review`] refuses from the evidence's own fields: a reviewer CLI's
/// evidence schema and a verified pair. The reviewer CLI it names.
pub(super) fn check_standing(ev: &Artifact) -> Result<ReviewerCli> {
    let fail = |message: &str| Err(EvidenceError::evidence(message));
    let Some(cli) = ev.str("agent_name").and_then(ReviewerCli::of_evidence) else {
        return fail("not evidence of a reviewer CLI's review");
    };
    if ev.str("schema") != Some(EVIDENCE_SCHEMA) {
        return fail("not evidence of a reviewer CLI's review");
    }
    if ev.str("status") != Some("verified") || ev.get("independence_verified") != Some(&Value::Bool(true)) {
        return fail(&format!("{} review evidence is not verified", cli.name()));
    }
    Ok(cli)
}

/// Revalidate evidence of a reviewer CLI's review against the executor's log and the run's log
/// as they are now: both bound prefixes unchanged, the marker lifecycle and the run
/// re-derived from them, the response file the run's answer. Where the reviewed window
/// starts.
pub fn validate_cli_review(ev: &Artifact, log: &SessionLog, run_log: &SessionLog, env: &dyn Env) -> Result<u64> {
    let fail = |message: &str| Err(EvidenceError::evidence(message));
    let cli = check_standing(ev)?;
    let kind = adapter::of(cli.host()).log_noun();
    let name = cli.name();
    let executor = Executor(log.host);
    let executor_log = adapter::of(log.host);
    let modified = format!("{} evidence {} prefix was modified", executor_log.name(), executor_log.log_noun());
    let prefix = revalidate_prefix(ev, log, env, &modified)?;
    let marker = revalidate_marker(ev, log, prefix)?;
    session::ensure_parsed(run_log)?;
    let Some(run_prefix) = ev.prefix_len("reviewer_prefix_bytes", run_log.len()) else {
        return fail("evidence reviewer prefix length is invalid");
    };
    if run_log.prefix_sha256(run_prefix) != ev.required("reviewer_prefix_sha256")? {
        return fail(&format!("the {name} {kind} of the review was modified"));
    }
    let cwd = env.resolve(ev.required("cwd")?);
    // Re-derive the run from its log as bound, and the shell call around it from the
    // executor's log as bound, and compare: what verify established holds for what they hold.
    let bound =
        SessionLog::from_bytes(cli.host(), run_log.path.clone(), run_log.bytes()[..run_prefix as usize].to_vec());
    let Some(run) = CliRun::bound(&bound, &Nonce::of(ev)?) else {
        return fail(&format!("the {name} {kind} no longer carries the nonce"));
    };
    let Some((answer, _, _)) = run.completed.clone() else { return fail(&format!("the {name} run did not complete")) };
    let challenged = ev.str("challenge_event_timestamp").and_then(timestamp::parse);
    if !within(&env.resolve(&run.cwd), &cwd)
        || challenged.is_none_or(|at| run.started < at)
        || Some(run.model.as_str()) != ev.str("reviewer_model")
        || Some(run.session_id.as_str()) != ev.str("reviewer_session_id")
    {
        return fail(&format!("evidence does not match the {name} {kind} of the review"));
    }
    let executor_log = SessionLog::from_bytes(log.host, log.path.clone(), log.bytes()[..prefix as usize].to_vec());
    let shell_call = executor.shell_call();
    let (call_id, tool_line, _) = the_shell_call(&executor_log, marker.start_line.start, &run)
        .map_err(|e| EvidenceError::evidence(format!("the reviewer's {shell_call} no longer holds: {}", e.message)))?;
    if call_id.as_deref() != ev.str("tool_call_id") || tool_line.end != prefix {
        return fail(&format!("evidence does not match the {shell_call} that ran {}", cli.command()));
    }
    let pair = FamilyPair::of(ev.required("executor_model")?, &run.model, "");
    if pair.status != EvidenceStatus::Verified
        || ev.str("executor_family") != pair.executor_family
        || ev.str("reviewer_family") != pair.reviewer_family
    {
        return fail("evidence no longer establishes a known cross-family pair");
    }
    let stored = env.read_file(ev.required("response_path")?)?;
    if stored != answer.as_bytes() || ev.str("response_sha256") != Some(chain::to_hex(&chain::sha256(&stored)).as_str())
    {
        return fail(&format!("the response artifact does not match the {name} run's answer"));
    }
    if ev.str("evidence_id") != Some(EvidenceId::of(ev).as_str()) {
        return fail("native evidence id does not match its bound fields");
    }
    Ok(marker.start_line.start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn carries_a_nonce(log: &SessionLog) -> bool {
        !reviewer_run_nonces(log).is_empty()
    }
    use serde_json::json;

    fn bash(command: &str) -> ToolCall {
        ToolCall { id: Some("t".into()), name: "Bash".into(), arguments: json!({ "command": command }) }
    }

    /// A reviewer run is a simple command of the Bash call, past its assignments; the
    /// CLI's name elsewhere in the line is not one.
    #[test]
    fn a_bash_call_runs_a_reviewer_cli_only_as_a_command() {
        let cases = [
            ("codex exec -", Some(Host::CodexCli)),
            ("printf 'x' | FOO=1 /usr/local/bin/codex exec --skip-git-repo-check -", Some(Host::CodexCli)),
            ("N=1; codex exec \"$N\"", Some(Host::CodexCli)),
            ("codex -c model_provider=mock exec -", Some(Host::CodexCli)),
            ("timeout 900 codex e -", Some(Host::CodexCli)),
            ("env -i X=1 codex exec -", Some(Host::CodexCli)),
            ("npx -y @openai/codex@0.169.0 exec -", Some(Host::CodexCli)),
            ("(cd parser && codex exec -)", Some(Host::CodexCli)),
            ("(codex exec -)", Some(Host::CodexCli)),
            ("echo \"$(codex exec -)\" > review.md", Some(Host::CodexCli)),
            ("echo `codex exec -`", Some(Host::CodexCli)),
            ("codex login", None),
            ("echo codex exec", None),
            ("copilot -p 'review this'", Some(Host::CopilotCli)),
            ("COPILOT_MODEL=gpt-5.4 copilot --no-color --prompt='review'", Some(Host::CopilotCli)),
            ("cd x && copilot --model gpt-5.4 --prompt review", Some(Host::CopilotCli)),
            ("copilot", None),
            ("gh copilot -p review", None),
            ("npx @github/copilot -p review", Some(Host::CopilotCli)),
            ("claude -p 'review' --model claude-sonnet-4-6", Some(Host::ClaudeCode)),
            ("ANTHROPIC_BASE_URL=x claude --print review", Some(Host::ClaudeCode)),
            ("claude mcp list", None),
            ("gemini -m gemini-2.5-pro -p review", Some(Host::GeminiCli)),
            ("gemini extensions list", None),
            ("qwen --prompt='review'", Some(Host::QwenCode)),
            ("qwen mcp list", None),
            ("opencode run 'review'", Some(Host::OpenCode)),
            ("opencode serve", None),
        ];
        // Codex CLI's `exec_command` names its command line `cmd`.
        let exec = ToolCall { id: None, name: "exec_command".into(), arguments: json!({"cmd": "copilot -p x"}) };
        assert!(ReviewerCli::of_host(Host::CopilotCli).unwrap().runs_in(&exec));
        for (command, expected) in cases {
            let found = ReviewerCli::all().find(|cli| cli.runs_in(&bash(command))).map(ReviewerCli::host);
            assert_eq!(found, expected, "{command}");
        }
    }

    /// A `copilot -p` run prompted with a nonce line is a reviewer's run; an agent's own
    /// session (the real ones of fixtures/) is not, though it ran judge-evidence.
    #[test]
    fn a_reviewer_run_is_a_session_prompted_with_a_nonce_line() {
        let fixture = |path: &str| {
            let path = format!("{}/../fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        };
        let reviewer = fixture("codex-0.169.0/copilot-review/copilot-events.jsonl");
        assert!(carries_a_nonce(&SessionLog::from_bytes(Host::CopilotCli, "r", reviewer)));
        let agent = fixture("copilot-1.0.102/cross-family-ok/events.jsonl");
        assert!(!carries_a_nonce(&SessionLog::from_bytes(Host::CopilotCli, "a", agent)));
    }

    /// What a session records after its model first answered (a hook's feedback, which
    /// Claude Code writes as a user record, or a block's reason, which judged's own message
    /// may carry) is no prompt of a run: a nonce line there does not make an agent's
    /// session a reviewer's run, whose ends the gate would then never count. The nonce
    /// must be in what the run was started with (Codex CLI's rollout opens with its
    /// environment context before the prompt).
    #[test]
    fn only_a_nonce_line_in_the_opening_prompt_makes_a_reviewer_run() {
        let record = |uuid: &str, parent: Value, kind: &str, message: Value, meta: bool| {
            json!({"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": false, "isMeta": meta,
                "sessionId": "s", "cwd": "/p", "timestamp": "2026-12-01T10:00:00.000Z", "message": message})
            .to_string()
        };
        let answer =
            json!({"role": "assistant", "model": "claude-sonnet-4-6", "content": [{"type": "text", "text": "Done."}]});
        let feedback = "Stop hook feedback:\n[sh hook.sh]: x\nARIS_REVIEW_NONCE=1\n";
        let agent = [
            record("u1", Value::Null, "user", json!({"role": "user", "content": "Fix the cart"}), false),
            record("a1", json!("u1"), "assistant", answer.clone(), false),
            record("u2", json!("a1"), "user", json!({"role": "user", "content": feedback}), true),
        ];
        let log = SessionLog::from_bytes(Host::ClaudeCode, "a", format!("{}\n", agent.join("\n")).into_bytes());
        assert!(!carries_a_nonce(&log), "a hook's feedback made the agent's session a reviewer's run");
        let reviewer = [
            record(
                "u1",
                Value::Null,
                "user",
                json!({"role": "user", "content": "Review this.\nARIS_REVIEW_NONCE=1\n"}),
                false,
            ),
            record("a1", json!("u1"), "assistant", answer, false),
        ];
        let log = SessionLog::from_bytes(Host::ClaudeCode, "r", format!("{}\n", reviewer.join("\n")).into_bytes());
        assert!(carries_a_nonce(&log));
        let rollout = std::fs::read(format!(
            "{}/../fixtures/gemini-cli-0.61.0/codex-review/rollout-2026-12-02T03-33-12-01a234d0-3f77-7ff2-9eae-c6c57f775f00.jsonl",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert!(carries_a_nonce(&SessionLog::from_bytes(Host::CodexCli, "r", rollout)));
    }

    /// A `copilot -p` run that errored has not completed, even though its session shuts
    /// down routinely after the error (as the real client's log shows).
    #[test]
    fn a_copilot_run_completes_with_its_shutdown_and_not_after_an_error() {
        let line = |kind: &str, data: Value| {
            json!({"type": kind, "data": data, "id": kind, "timestamp": "2026-12-01T10:00:00.000Z", "parentId": null})
                .to_string()
        };
        let answered = [
            line("assistant.message", json!({"content": "Score: 8/10", "model": "gpt-5.4"})),
            line("assistant.message", json!({"content": "", "model": "gpt-5.4"})),
            line("session.shutdown", json!({"shutdownType": "routine"})),
        ];
        let log = SessionLog::from_bytes(Host::CopilotCli, "x", format!("{}\n", answered.join("\n")).into_bytes());
        let copilot = ReviewerCli::of_host(Host::CopilotCli).unwrap().run.answers;
        let (answer, _, end) = completion(&log, copilot).expect("completed");
        assert_eq!((answer.as_str(), end), ("Score: 8/10", log.len()), "the last thing said, to the shutdown");
        let errored = [
            line("assistant.message", json!({"content": "Score: 8/10", "model": "gpt-5.4"})),
            line("session.error", json!({"message": "model unreachable"})),
            line("session.shutdown", json!({"shutdownType": "routine"})),
        ];
        let log = SessionLog::from_bytes(Host::CopilotCli, "x", format!("{}\n", errored.join("\n")).into_bytes());
        assert_eq!(completion(&log, copilot), None);
    }
}
