//! `judge-evidence route`: the reviewer-routing document as a command. The flags become a
//! typed [`RouteInput`] (the bound challenge revalidated as `validate-challenge` does, the
//! custom-agent profiles and a manual response read from disk), and
//! [`judge_evidence::routing::route`] decides.

use crate::{Mode, RouteArgs};
use judge_evidence::routing::{
    self, Attempted, Backend, BoundChallenge, CopilotProfiles, Failure, Profile, ProfileState, RouteError, RouteInput,
    RouteOutcome, Routing,
};
use judged_core::pyjson;
use judged_core::rules::ArtifactKind;
use serde_json::Value;
use std::path::Path;
use std::process::ExitCode;

/// A clap parser for one of the routing's named enums: the names `--help` lists, in their
/// order, and the typed value (`ALL` and `parse` are the enum's own, so no list of names
/// is kept here).
macro_rules! named_value {
    ($ty:ty) => {
        $crate::route::named_value!($ty, <$ty>::ALL)
    };
    ($ty:ty, $values:expr) => {{
        use clap::builder::TypedValueParser;
        clap::builder::PossibleValuesParser::new($values.into_iter().map(<$ty>::as_str))
            .map(|name| <$ty>::parse(&name).expect("clap admits only the names it was given"))
    }};
}
pub(crate) use named_value;

/// The backends `--available` takes: every one but `copilot-native`, which the bound
/// challenge establishes instead.
pub fn availables() -> impl Iterator<Item = Backend> {
    Backend::ALL.into_iter().filter(|b| *b != Backend::CopilotNative)
}

/// The names `--round-backend` takes, in the reference's (alphabetical) order. They stay
/// names: the round gate's table has a row of its own for a backend it does not know.
pub fn round_backends() -> clap::builder::PossibleValuesParser {
    let mut names = Backend::ALL.map(Backend::as_str);
    names.sort_unstable();
    clap::builder::PossibleValuesParser::new(names)
}

/// The end of `route --help`.
pub const AFTER_HELP: &str = "\
Rules (reviewer-routing document): an explicit --reviewer wins; without one,
/auto-review-loop uses copilot-native when --bound-challenge revalidates and binds a
Copilot CLI session, else codex (gpt-5.6-sol, ultra for deep-audit skills, xhigh
otherwise). After a failed call (--attempted, --error-class) the Codex chain retries only
on effort-unsupported (ultra -> xhigh) and model-unavailable (-> gpt-5.5 xhigh); the
HTTP fallback (--available llm-chat) runs only when nothing was dispatched; a failed
copilot-native review falls back to codex or manual by the host-reported executor family.

Error classes: effort-unsupported, model-unavailable (capability); tool-absent,
spawn-failed (never started); timeout, rate-limit, auth, transport, server, sandbox,
context-length, malformed-request, parse (never a downgrade; HTTP fallback only with
--not-dispatched); native-failure (with --attempted copilot-native).

Output: text, or with --json one object with the keys decision (route |
REVIEW_UNAVAILABLE), backend, model, effort, tier, rule, section, reason, warning,
profile, executor_model, executor_model_source, executor_family,
requires_external_acquittal.

Exit codes: 0 routed; 1 REVIEW_UNAVAILABLE (the decision is still printed on stdout);
2 invalid or contradictory flags (an error object on stderr).";

/// Why the flags could not become a routing input.
#[derive(Debug, thiserror::Error)]
enum RouteCliError {
    #[error(transparent)]
    Route(#[from] RouteError),
    #[error("failed to read --manual-response {path}: {source}")]
    ManualResponse { path: String, source: std::io::Error },
}

/// Run `route` and print its decision; the exit code says route, unavailable or usage.
pub fn main(mode: Mode, args: &RouteArgs) -> ExitCode {
    match input(mode, args).and_then(|input| Ok(routing::route(&input)?)) {
        Ok(routing) => {
            if args.json {
                println!("{}", pyjson::ascii_only(&pyjson::one_line(&routing.to_json())));
            } else {
                println!("{}", text(&routing));
            }
            match routing.decision {
                RouteOutcome::Route => ExitCode::SUCCESS,
                RouteOutcome::ReviewUnavailable => ExitCode::from(1),
            }
        }
        Err(error) => {
            let message = pyjson::ascii_only(&Value::String(error.to_string()).to_string());
            eprintln!("{{\"status\": \"error\", \"error\": {message}, \"exit_code\": 2}}");
            ExitCode::from(2)
        }
    }
}

/// The typed input: parsed flags, plus what only the disk can say.
fn input(mode: Mode, args: &RouteArgs) -> Result<RouteInput, RouteCliError> {
    let directive = args.reviewer;
    let failure = match (&args.attempted, &args.error_class) {
        (Some(attempted), Some(class)) => Some(Failure {
            attempted: Attempted::parse(attempted)?,
            class: *class,
            not_dispatched: args.not_dispatched,
        }),
        _ => None,
    };
    let challenge = match &args.bound_challenge {
        None => BoundChallenge::NotGiven,
        Some(_) if !routing::consults_challenge(&args.skill, directive) => BoundChallenge::NotConsulted,
        Some(path) => bound_challenge(mode, path),
    };
    let profiles = if routing::consults_profiles(&args.skill, directive) {
        let dir = Path::new(&args.agents_dir);
        CopilotProfiles { openai: profile(dir, Profile::OpenAi), claude: profile(dir, Profile::Claude) }
    } else {
        CopilotProfiles::default()
    };
    let manual_response = match &args.manual_response {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .map_err(|source| RouteCliError::ManualResponse { path: path.clone(), source })?,
        ),
        None => None,
    };
    Ok(RouteInput {
        skill: args.skill.clone(),
        tier: args.tier,
        directive,
        executor_model: args.executor_model.clone(),
        reviewer_model: args.reviewer_model.clone(),
        available: args.available.clone(),
        challenge,
        failure,
        manual_response,
        profiles,
    })
}

/// Revalidate the challenge exactly as `validate-challenge` does (the daemon's witness
/// included in daemon mode). A challenge that cannot be read or does not revalidate binds
/// nothing; its refusal is carried into the reason.
fn bound_challenge(mode: Mode, path: &str) -> BoundChallenge {
    let validated = crate::load_artifact(path).and_then(|artifact| {
        crate::with_decider(mode, |d| d.validate(ArtifactKind::Challenge, &artifact)).map(|_| artifact)
    });
    match validated {
        Ok(challenge) => BoundChallenge::Valid {
            host: challenge.host(),
            executor_model: challenge.executor_model().unwrap_or_default().to_owned(),
        },
        Err(error) => BoundChallenge::Invalid { reason: error.message },
    }
}

/// A custom-agent profile file, `<dir>/<name>.agent.md`.
fn profile(dir: &Path, profile: Profile) -> ProfileState {
    match std::fs::read(dir.join(format!("{}.agent.md", profile.name()))) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => ProfileState::Missing,
        Err(_) => ProfileState::Unreadable,
        Ok(bytes) => String::from_utf8(bytes).map_or(ProfileState::Unreadable, |text| ProfileState::from_text(&text)),
    }
}

/// The decision for people: the first line is the answer.
fn text(routing: &Routing) -> String {
    let mut lines = Vec::new();
    match (routing.decision, routing.backend) {
        (RouteOutcome::Route, Some(backend)) => {
            let mut head = format!("route: {backend}");
            if let Some(model) = &routing.model {
                head.push_str(&format!(" model {model}"));
            }
            if let Some(effort) = routing.effort {
                head.push_str(&format!(" effort {effort}"));
            }
            head.push_str(&format!(" ({} tier)", routing.tier.as_str()));
            lines.push(head);
            lines.push(format!("reason: {}", routing.reason));
        }
        _ => lines.push(format!("REVIEW_UNAVAILABLE: {}", routing.reason)),
    }
    if let Some(profile) = routing.profile {
        lines.push(format!("profile: {}", profile.name()));
    }
    if let Some(executor) = &routing.executor {
        lines.push(format!("executor: {} ({})", executor.model, executor.source.as_str()));
    }
    if routing.requires_external_acquittal {
        lines.push("requires external acquittal: only a codex or manual finalizer of another family may stop".into());
    }
    if let Some(warning) = &routing.warning {
        lines.push(format!("warning: {warning}"));
    }
    lines.push(format!("rule: {} ({})", routing.rule, routing.rule.section()));
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;
    use judge_evidence::routing::ErrorClass;

    /// The names each flag takes are the enums' own, in the order `--help` has always
    /// listed them (the reference's lists).
    #[test]
    fn each_flag_lists_the_names_of_its_enum_in_the_reference_order() {
        let command = crate::Cli::command();
        let route = command.find_subcommand("route").unwrap();
        let gate = command.find_subcommand("gate").unwrap();
        let names = |cmd: &clap::Command, flag: &str| -> Vec<String> {
            let arg = cmd.get_arguments().find(|a| a.get_id() == flag).unwrap();
            arg.get_possible_values().iter().map(|v| v.get_name().to_owned()).collect()
        };
        assert_eq!(names(route, "reviewer"), ["codex", "oracle-pro", "agy", "manual", "copilot"]);
        assert_eq!(names(route, "available"), ["codex", "copilot", "oracle-pro", "agy", "manual", "llm-chat"]);
        assert_eq!(names(route, "tier"), ["deep-audit", "regular"]);
        assert_eq!(names(route, "error_class").len(), ErrorClass::ALL.len());
        assert_eq!(names(route, "error_class")[..2], ["effort-unsupported", "model-unavailable"]);
        assert_eq!(
            names(gate, "round_backend"),
            ["agy", "codex", "copilot", "copilot-native", "llm-chat", "manual", "oracle-pro"]
        );
    }
}
