//! The rules after a call failed: the native review's fail-closed fallback, the explicit
//! backend that failed, Codex's capability chain and the opt-in HTTP fallback.

use super::*;
use judged_core::family::{ANTHROPIC, GOOGLE, OPENAI, Table, family};

impl Ctx<'_> {
    /// "Fail-closed fallback" after a failed native review (evidence-protocol.md §7 step 7): the executor
    /// family only from the revalidated challenge; Anthropic/Google → Codex when
    /// positively available, else manual; OpenAI → manual only; else unavailable. The
    /// fallback round carries the external-acquittal obligation.
    pub(super) fn native_fallback(&self) -> Routing {
        let Some(executor) = self.host_executor() else {
            return self.unavailable(
                Rule::NativeFallbackUnvalidated,
                "a native fallback takes the executor family only from a revalidated Copilot challenge \
                 (--bound-challenge), and none revalidated",
            );
        };
        let executor_family = family(&executor.model, Table::Evidence).unwrap_or(judged_core::family::UNKNOWN);
        let manual_available = self.available(Backend::Manual) || self.input.manual_response.is_some();
        match executor_family {
            ANTHROPIC | GOOGLE if self.available(Backend::Codex) => Routing {
                requires_external_acquittal: true,
                ..self.codex(
                    None,
                    Rule::NativeFallbackCodex,
                    format!("native review failed; the host-reported {executor_family} executor falls back to Codex"),
                )
            },
            OPENAI | ANTHROPIC | GOOGLE if manual_available => {
                self.manual(Rule::NativeFallbackManual, Some(executor), true)
            }
            OPENAI => self.unavailable(
                Rule::NativeFallbackUnavailable,
                "native review failed; Codex is not an independent fallback for an OpenAI-family executor and \
                 manual review is not available",
            ),
            _ => self.unavailable(
                Rule::NativeFallbackUnavailable,
                format!("native review failed and no known opposite-family backend is available ({executor_family} executor)"),
            ),
        }
    }

    /// The re-route after `failure`.
    pub(super) fn after_failure(&self, before: &Routing, failure: &Failure) -> Result<Routing, RouteError> {
        let attempted = failure.attempted.backend();
        let mismatch = |expected: &str| RouteError::AttemptMismatch {
            attempted: failure.attempted.to_string(),
            expected: expected.to_owned(),
        };
        if failure.class == ErrorClass::NativeFailure && attempted != Backend::CopilotNative {
            return Err(RouteError::NativeClassMismatch(failure.attempted.to_string()));
        }
        let native_context = consults_challenge(&self.input.skill, self.input.directive)
            && matches!(self.input.challenge, BoundChallenge::Valid { host: Host::CopilotCli, .. });
        if attempted == Backend::CopilotNative {
            if !consults_challenge(&self.input.skill, self.input.directive) {
                return Err(mismatch(&before.backend.map_or("REVIEW_UNAVAILABLE".to_owned(), |b| b.to_string())));
            }
            return Ok(self.native_fallback());
        }
        // A codex or manual attempt while a Copilot challenge binds is the native fallback's.
        let current = if native_context { self.native_fallback() } else { before.clone() };
        let Some(routed) = current.backend else {
            // Already unavailable before the attempt: it stays so.
            return Ok(current);
        };
        match (routed, attempted) {
            (Backend::Codex, Backend::Codex) => self.codex_failure(&current, failure),
            (Backend::Codex, Backend::LlmChat) if !current.requires_external_acquittal => Ok(self.unavailable(
                Rule::ExplicitBackendFailed,
                format!("the HTTP fallback failed ({}): no further fallback", failure.class),
            )),
            (Backend::Codex, Backend::OraclePro | Backend::Agy)
                if self.input.directive.map(Directive::backend) == Some(attempted) =>
            {
                Ok(self.explicit_failure(attempted, failure))
            }
            (routed, attempted) if routed == attempted => Ok(self.explicit_failure(attempted, failure)),
            (routed, _) => Err(mismatch(routed.as_str())),
        }
    }

    /// A failed call of a backend other than Codex. Oracle and agy that never started are
    /// "not installed" and fall back to Codex; manual never does; nothing else has an
    /// automatic fallback once asked ("NEVER fabricate", no second paid review).
    pub(super) fn explicit_failure(&self, backend: Backend, failure: &Failure) -> Routing {
        let never_started = matches!(failure.class, ErrorClass::ToolAbsent | ErrorClass::SpawnFailed);
        match backend {
            Backend::OraclePro | Backend::Agy if never_started => self.oracle_or_agy_fallback(backend),
            Backend::Manual if never_started => self.unavailable(Rule::ManualNotInstalled, MANUAL_NOT_INSTALLED),
            Backend::Copilot => self.unavailable(
                Rule::ExplicitBackendFailed,
                format!(
                    "the copilot drive call failed ({}): REVIEW_UNAVAILABLE; the drive transport is not \
                     silently moved to Codex or manual",
                    failure.class
                ),
            ),
            _ => self.unavailable(
                Rule::ExplicitBackendFailed,
                format!("{backend} failed ({}) after it was asked: no automatic fallback", failure.class),
            ),
        }
    }

    /// "Codex capability fallback" and the HTTP fallback's "Safe switch boundary".
    pub(super) fn codex_failure(&self, current: &Routing, failure: &Failure) -> Result<Routing, RouteError> {
        let chain = self.codex_chain();
        let attempted = match &failure.attempted {
            Attempted::Codex(pair) => {
                if !chain.iter().any(|p| p.same(pair)) {
                    return Err(RouteError::PairNotInChain {
                        pair: pair.to_string(),
                        tier: self.tier.as_str(),
                        chain: chain.iter().map(Pair::to_string).collect::<Vec<_>>().join(", "),
                    });
                }
                pair.clone()
            }
            Attempted::Backend(_) => chain[0].clone(),
        };
        let rea = current.requires_external_acquittal;
        let keep = |routing: Routing| Routing {
            requires_external_acquittal: rea,
            executor: current.executor.clone(),
            ..routing
        };
        let class = failure.class;
        if class.is_capability() {
            if self.override_model().is_some() {
                return Ok(keep(self.http_or_unavailable(
                    current,
                    Rule::OverrideNoChain,
                    format!("{class} on the explicit reviewer-model override {attempted}: the automatic chain does not apply"),
                )));
            }
            let sol = attempted.model.eq_ignore_ascii_case(CODEX_MODEL);
            let next = match class {
                // Only the deep tier's `ultra` has this step; `xhigh` predates 0.144.1.
                ErrorClass::EffortUnsupported if sol && attempted.effort == Effort::Ultra => {
                    Some((Pair::new(CODEX_MODEL, Effort::Xhigh), Rule::CapabilityEffort))
                }
                // Straight to gpt-5.5 + xhigh, skipping redundant intermediate steps.
                ErrorClass::ModelUnavailable if sol => {
                    Some((Pair::new(CODEX_FALLBACK_MODEL, Effort::Xhigh), Rule::CapabilityModel))
                }
                _ => None,
            };
            return Ok(match next {
                Some((pair, rule)) => {
                    keep(self.codex(Some(pair.clone()), rule, format!("{class} on {attempted}: retry {pair}")))
                }
                None => keep(self.http_or_unavailable(
                    current,
                    Rule::CapabilityExhausted,
                    format!(
                        "{class} on {attempted}: no allowed pair is left (never below xhigh; gpt-5.4 is only an \
                         explicit override)"
                    ),
                )),
            });
        }
        if matches!(class, ErrorClass::ToolAbsent | ErrorClass::SpawnFailed) {
            return Ok(keep(self.http_or_unavailable(
                current,
                Rule::CodexNotStarted,
                format!("Codex never started ({class}): no review was produced"),
            )));
        }
        // The never-downgrade list.
        if failure.not_dispatched {
            return Ok(keep(self.http_or_unavailable(
                current,
                Rule::NeverDowngrade,
                format!(
                    "{class} on {attempted}, which positively establishes that nothing was dispatched: no downgrade"
                ),
            )));
        }
        Ok(keep(self.unavailable(
            Rule::NeverDowngrade,
            format!(
                "{class} on {attempted}: never a downgrade, never a second paid review (the first may have gone through)"
            ),
        )))
    }

    /// Codex is known not to have produced a review: the opt-in HTTP reviewer when it is
    /// enabled and can establish families, else `REVIEW_UNAVAILABLE` under `rule`.
    pub(super) fn http_or_unavailable(&self, current: &Routing, rule: Rule, reason: String) -> Routing {
        if !self.available(Backend::LlmChat) {
            return self.unavailable(rule, format!("{reason}; the HTTP fallback is not enabled"));
        }
        if current.requires_external_acquittal {
            return self.unavailable(
                Rule::HttpFallbackRefused,
                format!(
                    "{reason}; the HTTP fallback is no finalizer and cannot discharge this round's \
                     external-acquittal obligation"
                ),
            );
        }
        let executor = current.executor.as_ref();
        if executor.and_then(|e| family(&e.model, Table::Gate)).is_none() {
            return self.unavailable(
                Rule::HttpFallbackRefused,
                format!(
                    "{reason}; the HTTP reviewer fails closed without an executor model of known family \
                     (--executor-model)"
                ),
            );
        }
        self.routed(
            Backend::LlmChat,
            Rule::HttpFallback,
            format!(
                "{reason}; the Codex path is known not to have produced a review: the opt-in HTTP reviewer \
                 (round_backend llm-chat, no external-acquittal obligation)"
            ),
        )
    }
}
