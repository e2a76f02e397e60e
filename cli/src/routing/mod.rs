//! Reviewer routing: which reviewer backend (and, for Codex, which model/effort pair) a
//! review call uses, or `REVIEW_UNAVAILABLE` with the reason, as the reviewer-routing
//! document (`docs/spec/routing.md`, its rules in order) prescribes and
//! `docs/spec/evidence-protocol.md` §7 summarises for the review loop.
//!
//! Everything here is a pure function of typed inputs; the CLI (`judge-evidence route`)
//! does the I/O: it revalidates a bound challenge, reads the custom-agent profiles and a
//! manual response, and hands the results in. The rules, in the document's order:
//!
//! * an explicit `--reviewer` directive always wins ("Default Routing", "Invariants");
//! * without one, `/auto-review-loop` uses `copilot-native` when a bound Copilot CLI
//!   challenge revalidates, otherwise Codex; every other skill uses Codex ("Default
//!   Routing");
//! * Codex runs `gpt-5.6-sol` at the tier's effort, `ultra` for deep audits and `xhigh`
//!   for everything else ("Codex MCP Tiered Reasoning-Effort Policy");
//! * a failed Codex call retries a lower pair only on the two capability errors the
//!   document names, never on timeout, rate limit, auth, transport, server, sandbox,
//!   context length, malformed request or parse errors ("Codex capability fallback");
//! * the opt-in HTTP reviewer (`llm-chat`) runs only when Codex is known not to have
//!   dispatched a request ("Optional HTTP API fallback for Codex pre-dispatch failures");
//! * `oracle-pro` and `agy` fall back to Codex when not installed, `manual` never does,
//!   and a manual verdict needs a `Reviewer-Model:` first line naming a classifiable
//!   family other than the executor's ("Optional: …" sections);
//! * `--reviewer copilot` is the compatibility drive mode: opposite-family custom-agent
//!   profile from the caller-declared executor model, fail closed on an unknown or same
//!   family ("Copilot CLI Custom Agent Profiles");
//! * a failed native review falls back to Codex (Anthropic/Google executor) or manual
//!   (OpenAI executor), with the executor family taken only from the revalidated
//!   challenge ("Copilot CLI Native Rubber Duck", "Fail-closed fallback"; evidence-protocol.md §7 step 7).
//!
//! Families are always derived from model strings ([`judged_core::family`]), never declared.
//!
//! Layout: `types` (inputs and the routing), `rule` (each rule's name and section, in
//! one table), `before` (the rules before anything ran), `after` (the rules after a
//! call failed) and the shared helpers of both here, on `Ctx`.

use judged_core::event::Host;

/// The Codex reviewer model the document declares for both tiers.
pub const CODEX_MODEL: &str = "gpt-5.6-sol";
/// The model of the capability fallback when `gpt-5.6-sol` is unknown or unavailable.
pub const CODEX_FALLBACK_MODEL: &str = "gpt-5.5";
/// The model Oracle MCP is asked for (`— reviewer: oracle-pro`).
pub const ORACLE_MODEL: &str = "gpt-5.5-pro";
/// The skill whose no-directive default is native, and the only one wired for
/// `--reviewer copilot`.
pub const REVIEW_LOOP: &str = "auto-review-loop";

/// The deep-audit tier's skills ("Codex MCP Tiered Reasoning-Effort Policy").
const DEEP_AUDIT_SKILLS: &[&str] = &[
    "proof-checker",
    "kill-argument",
    "research-review",
    "experiment-audit",
    "paper-claim-audit",
    "result-to-claim",
    "meta-apply",
];

/// The skills wired for `— reviewer: manual` ("Skills That Support `— reviewer: manual`").
const MANUAL_SKILLS: &[&str] =
    &["research-review", "auto-review-loop", "experiment-audit", "proof-checker", "rebuttal", "idea-creator"];

/// What to print when the manual-review MCP is missing ("NOT installed = explicit error").
const MANUAL_NOT_INSTALLED: &str = "⚠️ Manual Review MCP not installed. Install with: claude mcp add manual-review \
     -s user -- python3 /path/to/mcp-servers/manual-review/server.py (no fallback to Codex)";

/// An enum whose variants each have one name, as flags, the document and records spell
/// it: `ALL` (in the order `--help` lists them), `as_str`, `parse` (trimmed, any case) and
/// `Display`.
macro_rules! named {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every one, in the order `--help` lists them.
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            /// Its name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }

            /// The one [`Self::as_str`] names (trimmed, any case).
            pub fn parse(name: &str) -> Option<$ty> {
                let name = name.trim().to_ascii_lowercase();
                $ty::ALL.into_iter().find(|v| v.as_str() == name)
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

mod after;
mod before;
mod rule;
#[cfg(test)]
mod tests;
mod types;

pub use rule::Rule;
pub use types::*;

/// Whether routing reads the bound challenge: only the no-directive review loop runs the
/// native probe ("Activation and explicit overrides": explicit directives skip it).
pub fn consults_challenge(skill: &str, directive: Option<Directive>) -> bool {
    directive.is_none() && is_review_loop(skill)
}

/// Whether routing reads the custom-agent profiles: the compatibility drive mode, which
/// is wired for the review loop only.
pub fn consults_profiles(skill: &str, directive: Option<Directive>) -> bool {
    directive == Some(Directive::Copilot) && is_review_loop(skill)
}

/// Route one reviewer call.
///
/// Without a failure this is the route before dispatch. With one (`input.failure`), it is
/// the re-route after that attempt failed: the capability chain, the HTTP fallback and the
/// native fallback are the only ways on, and only on the errors that name them.
pub fn route(input: &RouteInput) -> Result<Routing, RouteError> {
    let tier = match input.tier {
        Some(Tier::DeepAudit) if is_review_loop(&input.skill) => return Err(RouteError::LoopIsRegular),
        Some(tier) => tier,
        None => Tier::of_skill(&input.skill),
    };
    let ctx = Ctx { input, tier };
    let before = ctx.before_dispatch();
    let Some(failure) = &input.failure else {
        return Ok(before);
    };
    ctx.after_failure(&before, failure)
}

struct Ctx<'a> {
    input: &'a RouteInput,
    tier: Tier,
}

impl Ctx<'_> {
    fn available(&self, backend: Backend) -> bool {
        self.input.available.contains(&backend)
    }

    fn declared_executor(&self) -> Option<Executor> {
        let model = self.input.executor_model.as_deref().map(str::trim).filter(|m| !m.is_empty())?;
        Some(Executor { model: model.to_owned(), source: ExecutorSource::CallerDeclared })
    }

    /// The executor model of a revalidated Copilot CLI challenge.
    fn host_executor(&self) -> Option<Executor> {
        match &self.input.challenge {
            BoundChallenge::Valid { host: Host::CopilotCli, executor_model } => {
                Some(Executor { model: executor_model.clone(), source: ExecutorSource::HostSessionEvent })
            }
            _ => None,
        }
    }

    /// The executor identity this call goes by: the host's, where the native probe ran and
    /// a Copilot challenge revalidated ("no caller-provided `--executor-model` is used on
    /// this path"), else the caller's declaration.
    fn executor(&self) -> Option<Executor> {
        let probed = consults_challenge(&self.input.skill, self.input.directive);
        probed.then(|| self.host_executor()).flatten().or_else(|| self.declared_executor())
    }

    fn routed(&self, backend: Backend, rule: Rule, reason: impl Into<String>) -> Routing {
        Routing {
            decision: RouteOutcome::Route,
            backend: Some(backend),
            model: None,
            effort: None,
            tier: self.tier,
            rule,
            reason: reason.into(),
            warning: None,
            profile: None,
            executor: self.executor(),
            requires_external_acquittal: false,
        }
    }

    fn unavailable(&self, rule: Rule, reason: impl Into<String>) -> Routing {
        Routing {
            decision: RouteOutcome::ReviewUnavailable,
            backend: None,
            ..self.routed(Backend::Codex, rule, reason)
        }
    }

    /// The pairs Codex may run for this call: the declared pair, then the capability
    /// chain; an explicit override is the only pair ("applies only when no explicit
    /// reviewer-model override was supplied").
    fn codex_chain(&self) -> Vec<Pair> {
        if let Some(model) = self.override_model() {
            return vec![Pair::new(model, self.tier.effort())];
        }
        let mut chain = vec![Pair::new(CODEX_MODEL, self.tier.effort())];
        if self.tier == Tier::DeepAudit {
            chain.push(Pair::new(CODEX_MODEL, Effort::Xhigh));
        }
        chain.push(Pair::new(CODEX_FALLBACK_MODEL, Effort::Xhigh));
        chain
    }

    fn override_model(&self) -> Option<&str> {
        self.input.reviewer_model.as_deref().map(str::trim).filter(|m| !m.is_empty())
    }

    /// Codex with `pair` (the chain's first pair when `None`).
    fn codex(&self, pair: Option<Pair>, rule: Rule, reason: impl Into<String>) -> Routing {
        let pair = pair.unwrap_or_else(|| self.codex_chain().swap_remove(0));
        Routing { model: Some(pair.model), effort: Some(pair.effort), ..self.routed(Backend::Codex, rule, reason) }
    }
}

fn normalized_skill(skill: &str) -> String {
    skill.trim().trim_start_matches('/').to_ascii_lowercase()
}

fn is_review_loop(skill: &str) -> bool {
    normalized_skill(skill) == REVIEW_LOOP
}
