//! The rules before anything ran: "Default Routing", the explicit directives, the
//! review loop's native default, the optional backends and the Copilot compatibility mode.

use super::*;
use judged_core::family::{OPENAI, Table, family};

impl Ctx<'_> {
    /// "Default Routing" and the explicit directives: the route before anything ran.
    pub(super) fn before_dispatch(&self) -> Routing {
        let input = self.input;
        let mut routing = match input.directive {
            Some(Directive::Codex) => {
                self.codex(None, Rule::ExplicitCodex, "explicit --reviewer codex: Codex MCP at the tier's pair")
            }
            Some(Directive::OraclePro) if self.available(Backend::OraclePro) => Routing {
                model: Some(ORACLE_MODEL.to_owned()),
                ..self.routed(Backend::OraclePro, Rule::ExplicitOraclePro, "explicit --reviewer oracle-pro: Oracle MCP")
            },
            Some(Directive::OraclePro) => self.oracle_or_agy_fallback(Backend::OraclePro),
            Some(Directive::Agy) if self.available(Backend::Agy) => self.routed(
                Backend::Agy,
                Rule::ExplicitAgy,
                "explicit --reviewer agy: gemini-review MCP (agy); it recovers the Gemini-family model itself",
            ),
            Some(Directive::Agy) => self.oracle_or_agy_fallback(Backend::Agy),
            Some(Directive::Manual) => self.manual(Rule::ExplicitManual, self.executor(), false),
            Some(Directive::Copilot) if !is_review_loop(&input.skill) => Routing {
                warning: Some(format!(
                    "--reviewer copilot is wired for /{REVIEW_LOOP} only; /{} uses Codex MCP",
                    normalized_skill(&input.skill)
                )),
                ..self.codex(None, Rule::CopilotOtherSkill, "the copilot drive mode is not wired for this skill")
            },
            Some(Directive::Copilot) => self.copilot_compat(),
            None if !is_review_loop(&input.skill) => self.codex(
                None,
                Rule::DefaultCodex,
                "reviewer skills other than /auto-review-loop default to Codex MCP",
            ),
            None => self.review_loop_default(),
        };
        if input.challenge == BoundChallenge::NotConsulted && routing.warning.is_none() {
            routing.warning = Some(
                "--bound-challenge was not consulted: only the no-directive /auto-review-loop runs the native probe"
                    .to_owned(),
            );
        }
        routing
    }

    /// No directive in the review loop: native when a bound Copilot challenge revalidates.
    pub(super) fn review_loop_default(&self) -> Routing {
        match &self.input.challenge {
            BoundChallenge::Valid { host: Host::CopilotCli, executor_model } => {
                let mut routing = self.routed(
                    Backend::CopilotNative,
                    Rule::NativeDefault,
                    "a bound Copilot CLI challenge revalidated: native rubber-duck review; \
                     Copilot picks the complementary model (pin none)",
                );
                if let Some(declared) = self.declared_executor().filter(|d| d.model != *executor_model) {
                    routing.warning = Some(format!(
                        "--executor-model {} is not used on the native path; the host reports {executor_model}",
                        declared.model
                    ));
                }
                routing
            }
            BoundChallenge::Valid { host, .. } => self.codex(
                None,
                Rule::DefaultCodex,
                format!("the challenge binds a {} session, not Copilot CLI: the Codex default", host.as_str()),
            ),
            BoundChallenge::Invalid { reason } => Routing {
                warning: Some(format!("the bound challenge did not revalidate: {reason}")),
                ..self.codex(
                    None,
                    Rule::ChallengeNotBound,
                    "the challenge did not revalidate, so no Copilot session is bound: the Codex default",
                )
            },
            BoundChallenge::NotGiven | BoundChallenge::NotConsulted => {
                self.codex(None, Rule::DefaultCodex, "no bound Copilot challenge: the Codex default")
            }
        }
    }

    /// Oracle or agy not installed: "gracefully falls back to Codex at the call's declared
    /// tier", with the document's warning.
    pub(super) fn oracle_or_agy_fallback(&self, backend: Backend) -> Routing {
        let (rule, warning) = if backend == Backend::OraclePro {
            (
                Rule::OracleProNotInstalled,
                "⚠️ Oracle MCP not installed. Falling back to Codex at this call's declared tier.",
            )
        } else {
            (
                Rule::AgyNotInstalled,
                "⚠️ gemini-review (agy) MCP not configured. Falling back to Codex at this call's declared tier.",
            )
        };
        Routing {
            warning: Some(warning.to_owned()),
            ..self.codex(None, rule, format!("{backend} is not available: Codex at the declared tier"))
        }
    }

    /// Manual review ("Optional: Manual Review"): wired skills only, never a Codex
    /// fallback, and a verdict counts only with a `Reviewer-Model:` of a known family
    /// other than the executor's.
    pub(super) fn manual(&self, rule: Rule, executor: Option<Executor>, requires_external_acquittal: bool) -> Routing {
        let input = self.input;
        let with = |mut routing: Routing| {
            routing.executor.clone_from(&executor);
            routing.requires_external_acquittal =
                requires_external_acquittal && routing.decision == RouteOutcome::Route;
            routing
        };
        let skill = normalized_skill(&input.skill);
        if !MANUAL_SKILLS.contains(&skill.as_str()) {
            return with(self.unavailable(Rule::ManualNotWired, format!("manual review is not wired for /{skill}")));
        }
        if !self.available(Backend::Manual) && input.manual_response.is_none() {
            return with(self.unavailable(Rule::ManualNotInstalled, MANUAL_NOT_INSTALLED));
        }
        let Some(executor_family) = executor.as_ref().and_then(|e| family(&e.model, Table::Gate)) else {
            let model = executor.as_ref().map_or("none given", |e| e.model.as_str());
            return with(self.unavailable(
                Rule::ManualExecutorUnknown,
                format!(
                    "manual review needs the actual executor model of a known family to compare the reviewer's \
                     with (--executor-model: {model})"
                ),
            ));
        };
        let Some(response) = &input.manual_response else {
            return with(Routing {
                effort: Some(Effort::Xhigh),
                ..self.routed(
                    Backend::Manual,
                    rule,
                    format!(
                        "manual review: the response must start with `Reviewer-Model: <exact-model-id>` of a \
                         classifiable family other than {executor_family}"
                    ),
                )
            });
        };
        let reported = match reviewer_model_line(response) {
            Ok(model) => model,
            Err(error) => return with(self.unavailable(Rule::ManualIdentityMissing, error.to_string())),
        };
        match family(reported, Table::Gate) {
            None => with(self.unavailable(
                Rule::ManualIdentityUnknown,
                format!("reported reviewer model {reported} has no single known family"),
            )),
            Some(reviewer_family) if reviewer_family == executor_family => with(self.unavailable(
                Rule::ManualIdentitySameFamily,
                format!("reported reviewer model {reported} is {reviewer_family}, the executor's family"),
            )),
            Some(reviewer_family) => with(Routing {
                model: Some(reported.to_owned()),
                effort: Some(Effort::Xhigh),
                ..self.routed(
                    Backend::Manual,
                    rule,
                    format!("manual reviewer {reported} is {reviewer_family}, not the executor's {executor_family}"),
                )
            }),
        }
    }

    /// `--reviewer copilot`: the opposite-family custom-agent profile of the declared
    /// executor, checked in the document's order; every refusal is `REVIEW_UNAVAILABLE`
    /// and never a silent change of transport.
    pub(super) fn copilot_compat(&self) -> Routing {
        let Some(executor) = self.declared_executor() else {
            return self.unavailable(
                Rule::CopilotExecutorMissing,
                "⚠️ --reviewer: copilot requires --executor-model <model> for opposite-family routing \
                 (identity remains caller-declared).",
            );
        };
        let Some(executor_family) = family(&executor.model, Table::Evidence) else {
            return self.unavailable(
                Rule::CopilotExecutorUnknown,
                format!(
                    "⚠️ Cannot determine model family for executor model '{}'. Known families: openai (gpt, o1, \
                     o3, o4, chatgpt), anthropic (claude, sonnet, opus, haiku), google (gemini).",
                    executor.model
                ),
            );
        };
        let profile = if executor_family == OPENAI { Profile::Claude } else { Profile::OpenAi };
        let name = profile.name();
        let with_profile = |routing: Routing| Routing { profile: Some(profile), ..routing };
        let model = match self.input.profiles.get(profile) {
            ProfileState::Missing => {
                return with_profile(self.unavailable(
                    Rule::CopilotProfileMissing,
                    format!(
                        "⚠️ Custom agent profile '{name}.agent.md' not found. Create it at \
                         .github/agents/{name}.agent.md with model: {}.",
                        profile.documented_model()
                    ),
                ));
            }
            ProfileState::Unreadable => {
                return with_profile(self.unavailable(
                    Rule::CopilotProfileMissing,
                    format!("custom agent profile '{name}.agent.md' cannot be read as UTF-8 text"),
                ));
            }
            ProfileState::NoModel => {
                return with_profile(
                    self.unavailable(Rule::CopilotProfileNoModel, format!("profile {name} has no model")),
                );
            }
            ProfileState::Model(model) => model,
        };
        match family(model, Table::Evidence) {
            None => {
                return with_profile(self.unavailable(
                    Rule::CopilotReviewerFamily,
                    format!("profile {name} model {model} has an unknown family"),
                ));
            }
            Some(reviewer_family) if reviewer_family == executor_family => {
                return with_profile(self.unavailable(
                    Rule::CopilotReviewerFamily,
                    format!("profile {name} model {model} is {reviewer_family}, the executor's family"),
                ));
            }
            Some(_) => {}
        }
        if !self.available(Backend::Copilot) {
            return with_profile(self.unavailable(
                Rule::CopilotCliUnavailable,
                "⚠️ --reviewer: copilot requires Copilot CLI (`copilot` command) advertising --model, --effort \
                 and --allow-tool; the drive is not moved to Codex or manual.",
            ));
        }
        with_profile(Routing {
            model: Some(model.clone()),
            effort: Some(Effort::Xhigh),
            ..self.routed(
                Backend::Copilot,
                Rule::CopilotCompat,
                format!(
                    "compatibility drive mode: {name} opposite the declared {executor_family} executor; \
                     independence_verified: unverified, and a positive verdict still needs a finalizer"
                ),
            )
        })
    }
}
