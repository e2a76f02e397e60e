//! `judge-hook`: the command a coding-agent host runs as a hook.
//!
//! It reads the hook's stdin JSON, asks `judged` for the decision, and answers the host
//! the way that host listens (its `HostHooks::hears_block`): Claude Code, Gemini CLI
//! (`AfterAgent`) and Qwen Code block on exit 2 with the reason on stderr; Copilot CLI's
//! `agentStop` and Codex CLI's `Stop` block on a `{"decision": "block"}` object on stdout. The decision, and its record, are the
//! daemon's; this process only carries the question, so it starts without an async
//! runtime or a config parser.
//!
//! Usage: `judge-hook [--host claude-code|copilot-cli|codex-cli|gemini-cli|qwen-code] [--on-error
//! block|allow] [--timeout SECONDS]`, or `judge-hook --version`.
//! `--on-error` is what to do when the daemon cannot be asked (default `block`: an armed
//! gate fails closed).

use judged_core::adapter::HearsBlock;
use judged_core::event::Host;
use judged_core::rules::ReviewerCli;
use judged_protocol::autostart::{self, AutoStartError};
use judged_protocol::{ClientError, Decision, HookAnswer, HookQuestion, Request, block_ends_turn};
use serde_json::{Value, json};
use std::io::Read;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// How long to wait for the daemon unless `--timeout` says: it answers in milliseconds
/// unless a jury sits, and `install-hooks` writes the jury's deadline in `--timeout`, with
/// the host's own hook timeout larger still, so the shim answers before the host kills it.
const DEFAULT_TIMEOUT_SECONDS: u64 = 110;
/// How long a block the host's next write can lift is asked about again, and how often.
const HOST_WRITE_WAIT: Duration = Duration::from_secs(10);
const ASK_AGAIN_EVERY: Duration = Duration::from_millis(200);
/// The longest a hook waits for a daemon it started.
const AUTOSTART_WAIT: Duration = Duration::from_secs(20);
/// More stdin than any hook payload has; the rest is not read.
const MAX_PAYLOAD_BYTES: u64 = 4 * 1024 * 1024;

struct Options {
    host: Host,
    /// How the host hears a block: only a host a hook can stop is one judge-hook answers.
    hears: HearsBlock,
    block_on_error: bool,
    timeout: Duration,
}

/// An argument the shim does not take: the hook is misconfigured.
struct UnexpectedArgument(String);

impl std::fmt::Display for UnexpectedArgument {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let hosts: Vec<&str> = judged_core::adapter::gated_hosts().map(Host::as_str).collect();
        write!(
            f,
            "unexpected argument `{}`; usage: judge-hook [--host {}] [--on-error block|allow] [--timeout SECONDS]",
            self.0,
            hosts.join("|")
        )
    }
}

fn parse_args() -> Result<Options, UnexpectedArgument> {
    let mut options = Options {
        host: Host::UNNAMED,
        hears: HearsBlock::ExitTwo,
        block_on_error: true,
        timeout: Duration::from_secs(DEFAULT_TIMEOUT_SECONDS),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next();
        match (arg.as_str(), value.as_deref()) {
            ("--host", Some(name)) => {
                let host = Host::parse(name).ok_or_else(|| UnexpectedArgument(arg.clone()))?;
                options.hears = judged_core::adapter::hooks(host).hears_block().ok_or(UnexpectedArgument(arg))?;
                options.host = host;
            }
            ("--on-error", Some("block")) => options.block_on_error = true,
            ("--on-error", Some("allow")) => options.block_on_error = false,
            ("--timeout", Some(seconds)) if seconds.parse::<u64>().is_ok_and(|s| s > 0) => {
                options.timeout = Duration::from_secs(seconds.parse().unwrap_or(DEFAULT_TIMEOUT_SECONDS));
            }
            _ => return Err(UnexpectedArgument(arg)),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    // `judge-hook --version` alone: the same line as `judged --version`'s, for checks.
    if std::env::args().len() == 2 && matches!(std::env::args().nth(1).as_deref(), Some("--version" | "-V")) {
        println!("judge-hook {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) => {
            // A misconfigured hook must not silently open the gate.
            eprintln!("judge-hook: {message}");
            return ExitCode::from(2);
        }
    };
    let mut raw = Vec::new();
    let read = std::io::stdin().take(MAX_PAYLOAD_BYTES).read_to_end(&mut raw);
    let (payload, parse_error) = match read
        .map_err(|e| e.to_string())
        .and_then(|_| serde_json::from_slice::<Value>(&raw).map_err(|e| e.to_string()))
    {
        Ok(payload) => (payload, None),
        Err(error) => (Value::Null, Some(format!("unparseable hook payload: {error}"))),
    };
    let again = payload.get("stop_hook_active") == Some(&Value::Bool(true));
    let installed_reviewers = Some(installed_reviewers());
    let question = Request::Hook(HookQuestion { host: options.host, payload, parse_error, installed_reviewers });
    let socket = judged_protocol::paths::gate_socket_path();
    // One deadline for the whole hook: the host kills a hook that outlives its own timeout
    // (`--timeout` is set below it), and most hosts let the agent go on when it does.
    let deadline = Instant::now() + options.timeout;
    let left = || deadline.saturating_duration_since(Instant::now());
    let ask = |within: Duration| judged_protocol::call::<HookAnswer>(&socket, question.clone(), within);
    let mut answer = ask(options.timeout);
    let mut not_started = None;
    if let Err(ClientError::Unreachable(_)) = answer {
        if judged_protocol::paths::is_witness_socket(&socket) {
            // A witness that does not answer is root's to start, never a hook's.
            not_started = Some(AutoStartError::Witness);
        } else {
            // No daemon: start one (a wait out of the hook's own time), then ask it with
            // what time is left; with none left, the daemon was not reached.
            match autostart::start_judged(AUTOSTART_WAIT.min(left())) {
                Ok(()) if !left().is_zero() => answer = ask(left()),
                Ok(()) => {}
                Err(why) => not_started = Some(why),
            }
        }
    }
    // A block the host's next write can lift (its log names no model yet): asked again.
    let asked_until = Instant::now() + HOST_WRITE_WAIT.min(left());
    while matches!(&answer, Ok(a) if a.ask_again) && Instant::now() < asked_until {
        std::thread::sleep(ASK_AGAIN_EVERY);
        answer = ask(left());
    }
    match answer {
        Ok(answer) if answer.decision == Decision::Block => block(&options, again, &answer.message),
        Ok(_) => ExitCode::SUCCESS,
        Err(error) => {
            let why = match (&error, not_started) {
                // judged answered, refusing the question with its cause and its fix:
                // starting judged is no next step.
                (ClientError::Refused(_), _) => format!("judge-hook: judged refused this question: {error}."),
                // `judged start` said why it failed, and what to fix: by hand it would fail
                // the same way, so that is the next step, not starting it.
                (_, Some(failed @ AutoStartError::Failed { .. })) => format!("judge-hook: {failed}."),
                (_, Some(why)) => format!(
                    "judge-hook: cannot ask judged ({error}); it could not be started for you: {why}. Start it \
                     with `judged start`."
                ),
                (_, None) => format!("judge-hook: cannot ask judged ({error}). Start it with `judged start`."),
            };
            if options.block_on_error {
                block(
                    &options,
                    again,
                    &format!("{why} The review gate is armed, so this step is blocked until judged can answer it."),
                )
            } else {
                eprintln!("{why} Allowed because this hook was installed with --on-error allow.");
                ExitCode::SUCCESS
            }
        }
    }
}

/// The reviewer CLIs on this process's `PATH`, the agent's: a block names those.
fn installed_reviewers() -> Vec<ReviewerCli> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<std::path::PathBuf> = std::env::split_paths(&path).collect();
    let runnable = |file: std::path::PathBuf| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    ReviewerCli::all().filter(|cli| dirs.iter().any(|dir| runnable(dir.join(cli.program())))).collect()
}

/// Block the way `options.host` listens. `again`: the host already continued once on a block of
/// this stop (`stop_hook_active`). Where the host would loop the agent on every block
/// ([`block_ends_turn`]), the block ends the agent's turn instead, with the reason as the
/// stop's: the work is not let through, and the agent is not looped (the daemon records
/// that end as a forced one).
fn block(options: &Options, again: bool, message: &str) -> ExitCode {
    if block_ends_turn(options.host, again) {
        println!("{}", json!({"continue": false, "stopReason": message}));
        return ExitCode::SUCCESS;
    }
    match options.hears {
        HearsBlock::ExitTwo => {
            eprintln!("{message}");
            ExitCode::from(2)
        }
        HearsBlock::DecisionObject => {
            println!("{}", json!({"decision": "block", "reason": message}));
            ExitCode::SUCCESS
        }
    }
}
