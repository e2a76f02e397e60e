//! The routing document's rules: each rule's stable name (`rule` in the JSON output) and
//! the section of the document it comes from (`section`), in one table.

use std::fmt;

/// Declares [`Rule`]: each variant with its name and its section, once.
macro_rules! rules {
    ($($(#[$doc:meta])* $variant:ident => $name:literal in $section:ident,)+) => {
        /// The document rule a decision applied; [`Rule::as_str`] is the stable `rule` key.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Rule {
            $($(#[$doc])* $variant,)+
        }

        named!(Rule { $($variant => $name),+ });

        impl Rule {
            /// The section of the routing document the rule comes from (`section` in the JSON).
            pub fn section(self) -> &'static str {
                match self {
                    $(Rule::$variant => $section,)+
                }
            }
        }
    };
}

/// The routing document's sections, as `section` spells them.
const DEFAULT_ROUTING: &str = "Default Routing";
const ORACLE: &str = "Optional: GPT-5.5 Pro via Oracle";
const AGY: &str = "Optional: Gemini via Antigravity CLI";
const MANUAL: &str = "Optional: Manual Review";
const COPILOT_PROFILES: &str = "Copilot CLI Custom Agent Profiles";
const NATIVE_FALLBACK: &str = "Copilot CLI Native Rubber Duck: Fail-closed fallback";
const CAPABILITY_FALLBACK: &str = "Codex capability fallback";
const HTTP_FALLBACK: &str = "Optional HTTP API fallback for Codex pre-dispatch failures";
const INVARIANTS: &str = "Default Routing: Invariants";

rules! {
    /// No directive, not in a bound Copilot session (or another skill): Codex.
    DefaultCodex => "default-codex" in DEFAULT_ROUTING,
    /// No directive, a bound Copilot CLI challenge revalidates: `copilot-native`.
    NativeDefault => "native-default" in DEFAULT_ROUTING,
    /// A challenge was given but did not revalidate: it never bound, so Codex.
    ChallengeNotBound => "challenge-not-bound" in DEFAULT_ROUTING,
    /// `--reviewer codex`.
    ExplicitCodex => "explicit-codex" in DEFAULT_ROUTING,
    /// `--reviewer oracle-pro` with Oracle MCP available.
    ExplicitOraclePro => "explicit-oracle-pro" in ORACLE,
    /// `--reviewer oracle-pro` without it: Codex at the declared tier, with a warning.
    OracleProNotInstalled => "oracle-pro-not-installed" in ORACLE,
    /// `--reviewer agy` with the gemini-review (agy) MCP available.
    ExplicitAgy => "explicit-agy" in AGY,
    /// `--reviewer agy` without it: Codex at the declared tier, with a warning.
    AgyNotInstalled => "agy-not-installed" in AGY,
    /// `--reviewer manual` with the manual-review MCP available.
    ExplicitManual => "explicit-manual" in MANUAL,
    /// `--reviewer manual` without it: stop, never Codex.
    ManualNotInstalled => "manual-not-installed" in MANUAL,
    /// `--reviewer manual` for a skill not wired for manual review.
    ManualNotWired => "manual-not-wired" in MANUAL,
    /// Manual review needs a known executor family to compare the reviewer's with.
    ManualExecutorUnknown => "manual-executor-unknown" in MANUAL,
    /// The manual response does not start with `Reviewer-Model: <id>`.
    ManualIdentityMissing => "manual-identity-missing" in MANUAL,
    /// The reported reviewer model has no single known family.
    ManualIdentityUnknown => "manual-identity-unknown" in MANUAL,
    /// The reported reviewer model is of the executor's family.
    ManualIdentitySameFamily => "manual-identity-same-family" in MANUAL,
    /// `--reviewer copilot`: the opposite-family custom-agent profile.
    CopilotCompat => "copilot-compat" in COPILOT_PROFILES,
    /// `--reviewer copilot` for another skill: not wired, Codex as before.
    CopilotOtherSkill => "copilot-other-skill" in COPILOT_PROFILES,
    /// `--reviewer copilot` without `--executor-model`.
    CopilotExecutorMissing => "copilot-executor-missing" in COPILOT_PROFILES,
    /// `--reviewer copilot` with an executor model of unknown family.
    CopilotExecutorUnknown => "copilot-executor-unknown" in COPILOT_PROFILES,
    /// The selected profile file does not exist or cannot be read.
    CopilotProfileMissing => "copilot-profile-missing" in COPILOT_PROFILES,
    /// The selected profile has no single non-empty `model:`.
    CopilotProfileNoModel => "copilot-profile-no-model" in COPILOT_PROFILES,
    /// The profile model's family is unknown or the executor's.
    CopilotReviewerFamily => "copilot-reviewer-family" in COPILOT_PROFILES,
    /// The Copilot CLI (with `--model`, `--effort`, `--allow-tool`) is not available.
    CopilotCliUnavailable => "copilot-cli-unavailable" in COPILOT_PROFILES,
    /// Native review failed; Anthropic/Google executor and Codex available: Codex.
    NativeFallbackCodex => "native-fallback-codex" in NATIVE_FALLBACK,
    /// Native review failed; manual review available (required for an OpenAI executor).
    NativeFallbackManual => "native-fallback-manual" in NATIVE_FALLBACK,
    /// Native review failed and no known opposite-family backend is available.
    NativeFallbackUnavailable => "native-fallback-unavailable" in NATIVE_FALLBACK,
    /// Native review failed but no revalidated challenge names the executor.
    NativeFallbackUnvalidated => "native-fallback-unvalidated" in NATIVE_FALLBACK,
    /// `ultra` unsupported: retry `gpt-5.6-sol` + `xhigh`.
    CapabilityEffort => "capability-effort" in CAPABILITY_FALLBACK,
    /// `gpt-5.6-sol` unknown or unavailable: retry `gpt-5.5` + `xhigh`.
    CapabilityModel => "capability-model" in CAPABILITY_FALLBACK,
    /// No allowed pair is left (never below `xhigh`, `gpt-5.4` never automatic).
    CapabilityExhausted => "capability-exhausted" in CAPABILITY_FALLBACK,
    /// An explicit reviewer-model override: no automatic chain.
    OverrideNoChain => "override-no-chain" in CAPABILITY_FALLBACK,
    /// Codex never started (tool absent, MCP process cannot spawn) and no HTTP fallback.
    CodexNotStarted => "codex-not-started" in HTTP_FALLBACK,
    /// Timeout, rate limit, auth, transport, server, sandbox, context length, malformed
    /// request or parse: never a downgrade, never a second paid review.
    NeverDowngrade => "never-downgrade" in CAPABILITY_FALLBACK,
    /// Codex is known not to have dispatched: the opt-in HTTP reviewer.
    HttpFallback => "http-fallback" in HTTP_FALLBACK,
    /// The HTTP fallback cannot be used (unknown executor family, or a finalizer round).
    HttpFallbackRefused => "http-fallback-refused" in HTTP_FALLBACK,
    /// An explicitly requested backend failed after it was asked: no automatic fallback.
    ExplicitBackendFailed => "explicit-backend-failed" in INVARIANTS,
}
