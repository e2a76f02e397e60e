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
//! Families are always derived from model strings ([`crate::family`]), never declared.

use crate::event::Host;
use crate::family::{Table, family};
use serde_json::{Value, json};
use std::fmt;

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

/// A reviewer backend, spelled as `review_gate.py --round-backend` spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Backend {
    /// Codex MCP (`mcp__codex__codex`), the default outside a bound Copilot session.
    Codex,
    /// Copilot CLI's built-in `rubber-duck` sub-agent, with host-event evidence.
    CopilotNative,
    /// Copilot CLI custom-agent profiles: the explicit compatibility drive mode.
    Copilot,
    /// GPT-5.5 Pro through Oracle MCP.
    OraclePro,
    /// Gemini through the gemini-review MCP with the Antigravity backend.
    Agy,
    /// The manual-review MCP: a person pastes the answer of a model of their choice.
    Manual,
    /// The opt-in HTTP reviewer (`mcp__llm-chat__review`).
    LlmChat,
}

named!(Backend {
    Codex => "codex",
    CopilotNative => "copilot-native",
    Copilot => "copilot",
    OraclePro => "oracle-pro",
    Agy => "agy",
    Manual => "manual",
    LlmChat => "llm-chat",
});

/// An explicit `--reviewer` directive ("Default Routing": the opt-in overrides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Directive {
    /// `codex`: Codex MCP, skipping the native probe.
    Codex,
    /// `oracle-pro`: Oracle MCP, else Codex.
    OraclePro,
    /// `agy`: gemini-review (agy) MCP, else Codex.
    Agy,
    /// `manual`: manual-review MCP, never Codex.
    Manual,
    /// `copilot`: the compatibility custom-agent drive mode.
    Copilot,
}

impl Directive {
    /// The backend the directive asks for.
    pub fn backend(self) -> Backend {
        match self {
            Directive::Codex => Backend::Codex,
            Directive::OraclePro => Backend::OraclePro,
            Directive::Agy => Backend::Agy,
            Directive::Manual => Backend::Manual,
            Directive::Copilot => Backend::Copilot,
        }
    }
}

/// The reasoning-effort tier of a Codex call ("Codex MCP Tiered Reasoning-Effort Policy").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// One-shot verdict-bearing audits: `ultra`.
    DeepAudit,
    /// Every other reviewer call, all review-loop rounds included: `xhigh`.
    Regular,
}

impl Tier {
    /// `deep-audit` or `regular`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::DeepAudit => "deep-audit",
            Tier::Regular => "regular",
        }
    }

    /// The tier the document assigns to a skill (given with or without its `/`).
    pub fn of_skill(skill: &str) -> Tier {
        if DEEP_AUDIT_SKILLS.contains(&normalized_skill(skill).as_str()) { Tier::DeepAudit } else { Tier::Regular }
    }

    /// The declared effort: `ultra` for deep audits, `xhigh` otherwise.
    pub fn effort(self) -> Effort {
        match self {
            Tier::DeepAudit => Effort::Ultra,
            Tier::Regular => Effort::Xhigh,
        }
    }
}

/// A Codex `model_reasoning_effort`: the enums codex-cli ≥ 0.144.1 accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effort {
    /// `none`.
    None,
    /// `minimal`.
    Minimal,
    /// `low` (the catalog default for gpt-5.6-sol, far below the review floor).
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
    /// `xhigh`: the regular tier and the floor of every verdict-bearing review.
    Xhigh,
    /// `max`.
    Max,
    /// `ultra`: the deep-audit tier.
    Ultra,
}

named!(Effort {
    None => "none",
    Minimal => "minimal",
    Low => "low",
    Medium => "medium",
    High => "high",
    Xhigh => "xhigh",
    Max => "max",
    Ultra => "ultra",
});

/// A Codex model/effort pair, written `MODEL:EFFORT` (`gpt-5.6-sol:ultra`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    /// The model id, as passed to Codex.
    pub model: String,
    /// `config.model_reasoning_effort`.
    pub effort: Effort,
}

impl Pair {
    fn new(model: &str, effort: Effort) -> Pair {
        Pair { model: model.to_owned(), effort }
    }

    /// Parse `MODEL:EFFORT`, split at the last `:`.
    pub fn parse(text: &str) -> Result<Pair, RouteError> {
        let bad = || RouteError::BadPair(text.to_owned());
        let (model, effort) = text.rsplit_once(':').ok_or_else(bad)?;
        let model = model.trim();
        if model.is_empty() {
            return Err(bad());
        }
        Ok(Pair { model: model.to_owned(), effort: Effort::parse(effort).ok_or_else(bad)? })
    }

    fn same(&self, other: &Pair) -> bool {
        self.effort == other.effort && self.model.eq_ignore_ascii_case(&other.model)
    }
}

impl fmt::Display for Pair {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}", self.model, self.effort)
    }
}

/// How a reviewer call failed (`--error-class`). The classes are the document's own
/// categories; what each allows is in [`route`]'s rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorClass {
    /// The call failed before returning a usable thread and the error explicitly names the
    /// requested effort as unsupported (older codex-cli). A capability error.
    EffortUnsupported,
    /// The error explicitly names the model as unknown or unavailable to this account or
    /// plan. A capability error.
    ModelUnavailable,
    /// The reviewer's tool is absent or unregistered (for native review: `rubber-duck`
    /// is not in `/subagents`). Nothing was dispatched.
    ToolAbsent,
    /// The local MCP process could not spawn or initialize. Nothing was dispatched.
    SpawnFailed,
    /// Timeout: never a downgrade.
    Timeout,
    /// Rate limit or capacity: never a downgrade.
    RateLimit,
    /// Authentication: never a downgrade.
    Auth,
    /// Transport or protocol: never a downgrade.
    Transport,
    /// Server error: never a downgrade.
    Server,
    /// Sandbox or tool error: never a downgrade.
    Sandbox,
    /// Context length: never a downgrade.
    ContextLength,
    /// Malformed request: never a downgrade.
    MalformedRequest,
    /// Response parse error: never a downgrade.
    Parse,
    /// A native review that cannot produce acceptance: failure to dispatch `rubber-duck`,
    /// `complementary_model_unavailable`, an incomplete lifecycle, unknown or same-family
    /// models, no single anchored Score and Verdict, or failed evidence validation.
    NativeFailure,
}

named!(ErrorClass {
    EffortUnsupported => "effort-unsupported",
    ModelUnavailable => "model-unavailable",
    ToolAbsent => "tool-absent",
    SpawnFailed => "spawn-failed",
    Timeout => "timeout",
    RateLimit => "rate-limit",
    Auth => "auth",
    Transport => "transport",
    Server => "server",
    Sandbox => "sandbox",
    ContextLength => "context-length",
    MalformedRequest => "malformed-request",
    Parse => "parse",
    NativeFailure => "native-failure",
});

impl ErrorClass {
    /// The two errors the capability chain may retry on.
    pub fn is_capability(self) -> bool {
        matches!(self, ErrorClass::EffortUnsupported | ErrorClass::ModelUnavailable)
    }

    /// Errors that by their nature prove no model request was dispatched.
    pub fn is_pre_dispatch(self) -> bool {
        self.is_capability() || matches!(self, ErrorClass::ToolAbsent | ErrorClass::SpawnFailed)
    }

    /// The document's "NEVER downgrade on …" list.
    pub fn is_never_downgrade(self) -> bool {
        !self.is_pre_dispatch() && self != ErrorClass::NativeFailure
    }
}

/// What was attempted when the call failed (`--attempted`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attempted {
    /// A backend by name; `codex` alone is Codex before any pair was sent.
    Backend(Backend),
    /// A Codex call with this model/effort pair.
    Codex(Pair),
}

impl Attempted {
    /// A backend name, else a Codex `MODEL:EFFORT` pair.
    pub fn parse(text: &str) -> Result<Attempted, RouteError> {
        match Backend::parse(text) {
            Some(backend) => Ok(Attempted::Backend(backend)),
            None => Pair::parse(text).map(Attempted::Codex),
        }
    }

    /// The backend that was attempted.
    pub fn backend(&self) -> Backend {
        match self {
            Attempted::Backend(backend) => *backend,
            Attempted::Codex(_) => Backend::Codex,
        }
    }
}

impl fmt::Display for Attempted {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Attempted::Backend(backend) => backend.fmt(f),
            Attempted::Codex(pair) => pair.fmt(f),
        }
    }
}

/// A failed reviewer attempt of this call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// What was attempted.
    pub attempted: Attempted,
    /// How it failed.
    pub class: ErrorClass,
    /// The error itself positively establishes that no model request was dispatched
    /// (`--not-dispatched`): only then may an error of the never-downgrade list activate
    /// the HTTP fallback.
    pub not_dispatched: bool,
}

/// The bound challenge (`--bound-challenge`), as the CLI found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Challenge {
    /// No challenge was given: the host did not bind (challenge exit 3) or is not Copilot.
    NotGiven,
    /// A challenge was given, but an explicit directive or another skill means the native
    /// probe is not run, so it was not read.
    NotConsulted,
    /// The challenge did not load or revalidate (`validate-challenge` refused it).
    Invalid {
        /// The refusal, for the reason shown.
        reason: String,
    },
    /// The challenge revalidated.
    Valid {
        /// The host whose session it binds (only Copilot CLI has native review).
        host: Host,
        /// The host-reported executor model.
        executor_model: String,
    },
}

/// A custom-agent profile of the compatibility drive mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// `aris-reviewer-openai`, for Anthropic and Google executors.
    OpenAi,
    /// `aris-reviewer-claude`, for OpenAI executors.
    Claude,
}

impl Profile {
    /// The profile name (`copilot --agent NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Profile::OpenAi => "aris-reviewer-openai",
            Profile::Claude => "aris-reviewer-claude",
        }
    }

    /// The model the document pins in the profile, named when asking to create it.
    pub fn documented_model(self) -> &'static str {
        match self {
            Profile::OpenAi => "gpt-5.4",
            Profile::Claude => "claude-sonnet-4.5",
        }
    }
}

/// What a profile file said, as the document's frontmatter reader reads it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ProfileState {
    /// The file does not exist (or was not read).
    #[default]
    Missing,
    /// The file exists but could not be read as text.
    Unreadable,
    /// The frontmatter has no single non-empty `model:` value.
    NoModel,
    /// The frontmatter's `model:` value.
    Model(String),
}

impl ProfileState {
    /// Read profile text as the document's reader does: a first line `---`, then the
    /// frontmatter up to the next `---`, where exactly one line starts `model:`; its value
    /// trimmed of whitespace and then of quotes.
    pub fn from_text(text: &str) -> ProfileState {
        let mut lines = text.lines();
        if lines.next().map(str::trim) != Some("---") {
            return ProfileState::NoModel;
        }
        let models: Vec<&str> = lines
            .take_while(|line| line.trim() != "---")
            .filter_map(|line| line.strip_prefix("model:"))
            .map(|value| value.trim().trim_matches(|c| c == '"' || c == '\''))
            .collect();
        match models.as_slice() {
            [model] if !model.is_empty() => ProfileState::Model((*model).to_owned()),
            _ => ProfileState::NoModel,
        }
    }
}

/// The two profiles the compatibility drive mode may select.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CopilotProfiles {
    /// `aris-reviewer-openai.agent.md`.
    pub openai: ProfileState,
    /// `aris-reviewer-claude.agent.md`.
    pub claude: ProfileState,
}

impl CopilotProfiles {
    fn get(&self, profile: Profile) -> &ProfileState {
        match profile {
            Profile::OpenAi => &self.openai,
            Profile::Claude => &self.claude,
        }
    }
}

/// Everything a routing decision depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteInput {
    /// The reviewer-invoking skill, with or without its `/` (default `auto-review-loop`).
    pub skill: String,
    /// An explicit tier; the skill's tier otherwise.
    pub tier: Option<Tier>,
    /// The explicit `--reviewer` directive, if any.
    pub directive: Option<Directive>,
    /// The caller-declared executor model (`--executor-model`).
    pub executor_model: Option<String>,
    /// An explicit Codex reviewer-model override (legacy/repro runs, e.g. `gpt-5.4`):
    /// it replaces the automatic capability chain.
    pub reviewer_model: Option<String>,
    /// The backends positively available (`--available`).
    pub available: Vec<Backend>,
    /// The bound challenge, as revalidated by the caller.
    pub challenge: Challenge,
    /// A failed attempt of this call, if it is being re-routed.
    pub failure: Option<Failure>,
    /// The manual reviewer's response, whose first line must name its model.
    pub manual_response: Option<String>,
    /// The custom-agent profiles (read for `--reviewer copilot` only).
    pub profiles: CopilotProfiles,
}

impl Default for RouteInput {
    fn default() -> RouteInput {
        RouteInput {
            skill: REVIEW_LOOP.to_owned(),
            tier: None,
            directive: None,
            executor_model: None,
            reviewer_model: None,
            available: Vec::new(),
            challenge: Challenge::NotGiven,
            failure: None,
            manual_response: None,
            profiles: CopilotProfiles::default(),
        }
    }
}

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

/// The document rule a decision applied; [`Rule::as_str`] is the stable `rule` key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// No directive, not in a bound Copilot session (or another skill): Codex.
    DefaultCodex,
    /// No directive, a bound Copilot CLI challenge revalidates: `copilot-native`.
    NativeDefault,
    /// A challenge was given but did not revalidate: it never bound, so Codex.
    ChallengeNotBound,
    /// `--reviewer codex`.
    ExplicitCodex,
    /// `--reviewer oracle-pro` with Oracle MCP available.
    ExplicitOraclePro,
    /// `--reviewer oracle-pro` without it: Codex at the declared tier, with a warning.
    OracleProNotInstalled,
    /// `--reviewer agy` with the gemini-review (agy) MCP available.
    ExplicitAgy,
    /// `--reviewer agy` without it: Codex at the declared tier, with a warning.
    AgyNotInstalled,
    /// `--reviewer manual` with the manual-review MCP available.
    ExplicitManual,
    /// `--reviewer manual` without it: stop, never Codex.
    ManualNotInstalled,
    /// `--reviewer manual` for a skill not wired for manual review.
    ManualNotWired,
    /// Manual review needs a known executor family to compare the reviewer's with.
    ManualExecutorUnknown,
    /// The manual response does not start with `Reviewer-Model: <id>`.
    ManualIdentityMissing,
    /// The reported reviewer model has no single known family.
    ManualIdentityUnknown,
    /// The reported reviewer model is of the executor's family.
    ManualIdentitySameFamily,
    /// `--reviewer copilot`: the opposite-family custom-agent profile.
    CopilotCompat,
    /// `--reviewer copilot` for another skill: not wired, Codex as before.
    CopilotOtherSkill,
    /// `--reviewer copilot` without `--executor-model`.
    CopilotExecutorMissing,
    /// `--reviewer copilot` with an executor model of unknown family.
    CopilotExecutorUnknown,
    /// The selected profile file does not exist or cannot be read.
    CopilotProfileMissing,
    /// The selected profile has no single non-empty `model:`.
    CopilotProfileNoModel,
    /// The profile model's family is unknown or the executor's.
    CopilotReviewerFamily,
    /// The Copilot CLI (with `--model`, `--effort`, `--allow-tool`) is not available.
    CopilotCliUnavailable,
    /// Native review failed; Anthropic/Google executor and Codex available: Codex.
    NativeFallbackCodex,
    /// Native review failed; manual review available (required for an OpenAI executor).
    NativeFallbackManual,
    /// Native review failed and no known opposite-family backend is available.
    NativeFallbackUnavailable,
    /// Native review failed but no revalidated challenge names the executor.
    NativeFallbackUnvalidated,
    /// `ultra` unsupported: retry `gpt-5.6-sol` + `xhigh`.
    CapabilityEffort,
    /// `gpt-5.6-sol` unknown or unavailable: retry `gpt-5.5` + `xhigh`.
    CapabilityModel,
    /// No allowed pair is left (never below `xhigh`, `gpt-5.4` never automatic).
    CapabilityExhausted,
    /// An explicit reviewer-model override: no automatic chain.
    OverrideNoChain,
    /// Codex never started (tool absent, MCP process cannot spawn) and no HTTP fallback.
    CodexNotStarted,
    /// Timeout, rate limit, auth, transport, server, sandbox, context length, malformed
    /// request or parse: never a downgrade, never a second paid review.
    NeverDowngrade,
    /// Codex is known not to have dispatched: the opt-in HTTP reviewer.
    HttpFallback,
    /// The HTTP fallback cannot be used (unknown executor family, or a finalizer round).
    HttpFallbackRefused,
    /// An explicitly requested backend failed after it was asked: no automatic fallback.
    ExplicitBackendFailed,
}

impl Rule {
    /// The stable name (`rule` in the JSON output).
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::DefaultCodex => "default-codex",
            Rule::NativeDefault => "native-default",
            Rule::ChallengeNotBound => "challenge-not-bound",
            Rule::ExplicitCodex => "explicit-codex",
            Rule::ExplicitOraclePro => "explicit-oracle-pro",
            Rule::OracleProNotInstalled => "oracle-pro-not-installed",
            Rule::ExplicitAgy => "explicit-agy",
            Rule::AgyNotInstalled => "agy-not-installed",
            Rule::ExplicitManual => "explicit-manual",
            Rule::ManualNotInstalled => "manual-not-installed",
            Rule::ManualNotWired => "manual-not-wired",
            Rule::ManualExecutorUnknown => "manual-executor-unknown",
            Rule::ManualIdentityMissing => "manual-identity-missing",
            Rule::ManualIdentityUnknown => "manual-identity-unknown",
            Rule::ManualIdentitySameFamily => "manual-identity-same-family",
            Rule::CopilotCompat => "copilot-compat",
            Rule::CopilotOtherSkill => "copilot-other-skill",
            Rule::CopilotExecutorMissing => "copilot-executor-missing",
            Rule::CopilotExecutorUnknown => "copilot-executor-unknown",
            Rule::CopilotProfileMissing => "copilot-profile-missing",
            Rule::CopilotProfileNoModel => "copilot-profile-no-model",
            Rule::CopilotReviewerFamily => "copilot-reviewer-family",
            Rule::CopilotCliUnavailable => "copilot-cli-unavailable",
            Rule::NativeFallbackCodex => "native-fallback-codex",
            Rule::NativeFallbackManual => "native-fallback-manual",
            Rule::NativeFallbackUnavailable => "native-fallback-unavailable",
            Rule::NativeFallbackUnvalidated => "native-fallback-unvalidated",
            Rule::CapabilityEffort => "capability-effort",
            Rule::CapabilityModel => "capability-model",
            Rule::CapabilityExhausted => "capability-exhausted",
            Rule::OverrideNoChain => "override-no-chain",
            Rule::CodexNotStarted => "codex-not-started",
            Rule::NeverDowngrade => "never-downgrade",
            Rule::HttpFallback => "http-fallback",
            Rule::HttpFallbackRefused => "http-fallback-refused",
            Rule::ExplicitBackendFailed => "explicit-backend-failed",
        }
    }

    /// The section of the routing document the rule comes from (`section` in the JSON).
    pub fn section(self) -> &'static str {
        match self {
            Rule::DefaultCodex | Rule::NativeDefault | Rule::ChallengeNotBound | Rule::ExplicitCodex => {
                "Default Routing"
            }
            Rule::ExplicitOraclePro | Rule::OracleProNotInstalled => "Optional: GPT-5.5 Pro via Oracle",
            Rule::ExplicitAgy | Rule::AgyNotInstalled => "Optional: Gemini via Antigravity CLI",
            Rule::ExplicitManual
            | Rule::ManualNotInstalled
            | Rule::ManualNotWired
            | Rule::ManualExecutorUnknown
            | Rule::ManualIdentityMissing
            | Rule::ManualIdentityUnknown
            | Rule::ManualIdentitySameFamily => "Optional: Manual Review",
            Rule::CopilotCompat
            | Rule::CopilotOtherSkill
            | Rule::CopilotExecutorMissing
            | Rule::CopilotExecutorUnknown
            | Rule::CopilotProfileMissing
            | Rule::CopilotProfileNoModel
            | Rule::CopilotReviewerFamily
            | Rule::CopilotCliUnavailable => "Copilot CLI Custom Agent Profiles",
            Rule::NativeFallbackCodex
            | Rule::NativeFallbackManual
            | Rule::NativeFallbackUnavailable
            | Rule::NativeFallbackUnvalidated => "Copilot CLI Native Rubber Duck: Fail-closed fallback",
            Rule::CapabilityEffort
            | Rule::CapabilityModel
            | Rule::CapabilityExhausted
            | Rule::OverrideNoChain
            | Rule::NeverDowngrade => "Codex capability fallback",
            Rule::CodexNotStarted | Rule::HttpFallback | Rule::HttpFallbackRefused => {
                "Optional HTTP API fallback for Codex pre-dispatch failures"
            }
            Rule::ExplicitBackendFailed => "Default Routing: Invariants",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Route or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Use `backend`.
    Route,
    /// No reviewer the document allows can be used: never a substantive verdict.
    ReviewUnavailable,
}

impl Decision {
    /// `route` or `REVIEW_UNAVAILABLE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Route => "route",
            Decision::ReviewUnavailable => "REVIEW_UNAVAILABLE",
        }
    }
}

/// Where the executor model came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExecutorSource {
    /// `--executor-model`: the caller's word.
    CallerDeclared,
    /// The revalidated challenge: the host's own session event.
    HostSessionEvent,
}

impl ExecutorSource {
    /// The trace's spelling (`executor_model_source`).
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutorSource::CallerDeclared => "caller-declared",
            ExecutorSource::HostSessionEvent => "host-session-event",
        }
    }
}

/// The executor identity a decision used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Executor {
    /// The model id.
    pub model: String,
    /// Where it came from.
    pub source: ExecutorSource,
}

/// A routing decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Routing {
    /// Route or `REVIEW_UNAVAILABLE`.
    pub decision: Decision,
    /// The backend to use (on `route`).
    pub backend: Option<Backend>,
    /// The model to pin, where the backend takes one (Codex, Oracle, the copilot profile),
    /// or the manual reviewer's verified model.
    pub model: Option<String>,
    /// The reasoning effort to pin (Codex and copilot; a badge for manual).
    pub effort: Option<Effort>,
    /// The call's tier.
    pub tier: Tier,
    /// The rule applied.
    pub rule: Rule,
    /// Why, for people; never to be parsed.
    pub reason: String,
    /// What the document says to print alongside (a fallback taken, an input ignored).
    pub warning: Option<String>,
    /// The custom-agent profile of the copilot drive mode.
    pub profile: Option<Profile>,
    /// The executor identity the decision used, if any.
    pub executor: Option<Executor>,
    /// A native fallback round: only a codex or manual finalizer of another family may
    /// stop the loop (`review_gate.py --requires-external-acquittal`).
    pub requires_external_acquittal: bool,
}

impl Routing {
    /// The command's JSON object; every key is always present (null where not applicable).
    pub fn to_json(&self) -> Value {
        let executor = self.executor.as_ref();
        let executor_family = executor.map(|e| family(&e.model, Table::Gate).unwrap_or(crate::family::UNKNOWN));
        json!({
            "decision": self.decision.as_str(),
            "backend": self.backend.map(Backend::as_str),
            "model": self.model,
            "effort": self.effort.map(Effort::as_str),
            "tier": self.tier.as_str(),
            "rule": self.rule.as_str(),
            "section": self.rule.section(),
            "reason": self.reason,
            "warning": self.warning,
            "profile": self.profile.map(Profile::name),
            "executor_model": executor.map(|e| e.model.as_str()),
            "executor_model_source": executor.map(|e| e.source.as_str()),
            "executor_family": executor_family,
            "requires_external_acquittal": self.requires_external_acquittal,
        })
    }
}

/// Inputs that contradict each other or the document: a usage error, not a routing
/// decision.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RouteError {
    /// `--attempted` is neither a backend nor `MODEL:EFFORT`.
    #[error("--attempted {0}: expected a backend name or a Codex MODEL:EFFORT pair (gpt-5.6-sol:ultra)")]
    BadPair(String),
    /// The attempted Codex pair is not one this call's chain can produce.
    #[error("--attempted {pair} is not a pair of the {tier} tier's Codex chain ({chain})")]
    PairNotInChain {
        /// The attempted pair.
        pair: String,
        /// The call's tier.
        tier: &'static str,
        /// The pairs the chain may run.
        chain: String,
    },
    /// The attempted backend is not the one this call routes to.
    #[error("--attempted {attempted} does not match this call's route ({expected})")]
    AttemptMismatch {
        /// What the caller says was attempted.
        attempted: String,
        /// What this call routes to before the failure.
        expected: String,
    },
    /// `native-failure` describes a native review only.
    #[error("--error-class native-failure applies to --attempted copilot-native only, not {0}")]
    NativeClassMismatch(String),
    /// The review loop runs at the regular tier, every round.
    #[error("--tier deep-audit contradicts /auto-review-loop: all of its rounds are regular (xhigh)")]
    LoopIsRegular,
}

/// Why a manual response carries no usable reviewer identity.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ManualIdentityError {
    /// The first line is not `Reviewer-Model: …`.
    #[error("the response's first line is not `Reviewer-Model: <exact-model-id>`")]
    Missing,
    /// `Reviewer-Model:` names no model.
    #[error("the response's `Reviewer-Model:` line names no model")]
    Empty,
}

/// The model a manual response names on its first line, `Reviewer-Model: <exact-model-id>`
/// ("Optional: Manual Review", Invariants). Nothing else counts: not a later line, not a
/// different spelling of the label.
pub fn reviewer_model_line(response: &str) -> Result<&str, ManualIdentityError> {
    let first = response.split('\n').next().unwrap_or_default();
    let first = first.strip_suffix('\r').unwrap_or(first);
    let model = first.strip_prefix("Reviewer-Model:").ok_or(ManualIdentityError::Missing)?.trim();
    if model.is_empty() { Err(ManualIdentityError::Empty) } else { Ok(model) }
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
            Challenge::Valid { host: Host::CopilotCli, executor_model } => {
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
            decision: Decision::Route,
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
        Routing { decision: Decision::ReviewUnavailable, backend: None, ..self.routed(Backend::Codex, rule, reason) }
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

    /// "Default Routing" and the explicit directives: the route before anything ran.
    fn before_dispatch(&self) -> Routing {
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
        if input.challenge == Challenge::NotConsulted && routing.warning.is_none() {
            routing.warning = Some(
                "--bound-challenge was not consulted: only the no-directive /auto-review-loop runs the native probe"
                    .to_owned(),
            );
        }
        routing
    }

    /// No directive in the review loop: native when a bound Copilot challenge revalidates.
    fn review_loop_default(&self) -> Routing {
        match &self.input.challenge {
            Challenge::Valid { host: Host::CopilotCli, executor_model } => {
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
            Challenge::Valid { host, .. } => self.codex(
                None,
                Rule::DefaultCodex,
                format!("the challenge binds a {} session, not Copilot CLI: the Codex default", host.as_str()),
            ),
            Challenge::Invalid { reason } => Routing {
                warning: Some(format!("the bound challenge did not revalidate: {reason}")),
                ..self.codex(
                    None,
                    Rule::ChallengeNotBound,
                    "the challenge did not revalidate, so no Copilot session is bound: the Codex default",
                )
            },
            Challenge::NotGiven | Challenge::NotConsulted => {
                self.codex(None, Rule::DefaultCodex, "no bound Copilot challenge: the Codex default")
            }
        }
    }

    /// Oracle or agy not installed: "gracefully falls back to Codex at the call's declared
    /// tier", with the document's warning.
    fn oracle_or_agy_fallback(&self, backend: Backend) -> Routing {
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
    fn manual(&self, rule: Rule, executor: Option<Executor>, requires_external_acquittal: bool) -> Routing {
        let input = self.input;
        let with = |mut routing: Routing| {
            routing.executor.clone_from(&executor);
            routing.requires_external_acquittal = requires_external_acquittal && routing.decision == Decision::Route;
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
    fn copilot_compat(&self) -> Routing {
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
        let profile = if executor_family == "openai" { Profile::Claude } else { Profile::OpenAi };
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

    /// "Fail-closed fallback" after a failed native review (evidence-protocol.md §7 step 7): the executor
    /// family only from the revalidated challenge; Anthropic/Google → Codex when
    /// positively available, else manual; OpenAI → manual only; else unavailable. The
    /// fallback round carries the external-acquittal obligation.
    fn native_fallback(&self) -> Routing {
        let Some(executor) = self.host_executor() else {
            return self.unavailable(
                Rule::NativeFallbackUnvalidated,
                "a native fallback takes the executor family only from a revalidated Copilot challenge \
                 (--bound-challenge), and none revalidated",
            );
        };
        let executor_family = family(&executor.model, Table::Evidence).unwrap_or(crate::family::UNKNOWN);
        let manual_available = self.available(Backend::Manual) || self.input.manual_response.is_some();
        match executor_family {
            "anthropic" | "google" if self.available(Backend::Codex) => Routing {
                requires_external_acquittal: true,
                ..self.codex(
                    None,
                    Rule::NativeFallbackCodex,
                    format!("native review failed; the host-reported {executor_family} executor falls back to Codex"),
                )
            },
            "openai" | "anthropic" | "google" if manual_available => {
                self.manual(Rule::NativeFallbackManual, Some(executor), true)
            }
            "openai" => self.unavailable(
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
    fn after_failure(&self, before: &Routing, failure: &Failure) -> Result<Routing, RouteError> {
        let attempted = failure.attempted.backend();
        let mismatch = |expected: &str| RouteError::AttemptMismatch {
            attempted: failure.attempted.to_string(),
            expected: expected.to_owned(),
        };
        if failure.class == ErrorClass::NativeFailure && attempted != Backend::CopilotNative {
            return Err(RouteError::NativeClassMismatch(failure.attempted.to_string()));
        }
        let native_context = consults_challenge(&self.input.skill, self.input.directive)
            && matches!(self.input.challenge, Challenge::Valid { host: Host::CopilotCli, .. });
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
    fn explicit_failure(&self, backend: Backend, failure: &Failure) -> Routing {
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
    fn codex_failure(&self, current: &Routing, failure: &Failure) -> Result<Routing, RouteError> {
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
    fn http_or_unavailable(&self, current: &Routing, rule: Rule, reason: String) -> Routing {
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

fn normalized_skill(skill: &str) -> String {
    skill.trim().trim_start_matches('/').to_ascii_lowercase()
}

fn is_review_loop(skill: &str) -> bool {
    normalized_skill(skill) == REVIEW_LOOP
}

#[cfg(test)]
mod tests {
    //! One test per rule of the routing document, each named as the document says it.
    //! Rows build a [`RouteInput`] from the review-loop default and state only what differs.

    use super::*;
    use Backend::{Agy, Codex, Copilot, CopilotNative, LlmChat, Manual, OraclePro};
    use Effort::{Ultra, Xhigh};

    const SOL: &str = CODEX_MODEL;

    /// What a row expects.
    struct Want {
        decision: Decision,
        backend: Option<Backend>,
        model: Option<&'static str>,
        effort: Option<Effort>,
        rule: Rule,
    }

    fn routes(backend: Backend, model: Option<&'static str>, effort: Option<Effort>, rule: Rule) -> Want {
        Want { decision: Decision::Route, backend: Some(backend), model, effort, rule }
    }

    fn codex(model: &'static str, effort: Effort, rule: Rule) -> Want {
        routes(Codex, Some(model), Some(effort), rule)
    }

    fn refused(rule: Rule) -> Want {
        Want { decision: Decision::ReviewUnavailable, backend: None, model: None, effort: None, rule }
    }

    #[track_caller]
    fn check(input: &RouteInput, want: &Want) -> Routing {
        let got = route(input).unwrap_or_else(|e| panic!("usage error {e} for {input:?}"));
        let shown = format!("{got:?}");
        assert_eq!(got.rule, want.rule, "rule: {shown}");
        assert_eq!(got.decision, want.decision, "decision: {shown}");
        assert_eq!(got.backend, want.backend, "backend: {shown}");
        assert_eq!(got.model.as_deref(), want.model, "model: {shown}");
        assert_eq!(got.effort, want.effort, "effort: {shown}");
        got
    }

    /// A call of `skill` with no directive, nothing available and no challenge.
    fn call(skill: &str) -> RouteInput {
        RouteInput { skill: skill.to_owned(), ..RouteInput::default() }
    }

    fn review_loop() -> RouteInput {
        call(REVIEW_LOOP)
    }

    fn bound(executor_model: &str) -> Challenge {
        Challenge::Valid { host: Host::CopilotCli, executor_model: executor_model.to_owned() }
    }

    fn declared(model: &str) -> Option<String> {
        Some(model.to_owned())
    }

    fn failed(attempted: &str, class: ErrorClass) -> Option<Failure> {
        Some(Failure { attempted: Attempted::parse(attempted).unwrap(), class, not_dispatched: false })
    }

    fn failed_before_dispatch(attempted: &str, class: ErrorClass) -> Option<Failure> {
        Some(Failure { attempted: Attempted::parse(attempted).unwrap(), class, not_dispatched: true })
    }

    fn profiles() -> CopilotProfiles {
        CopilotProfiles {
            openai: ProfileState::Model("gpt-5.4".into()),
            claude: ProfileState::Model("claude-sonnet-4.5".into()),
        }
    }

    /// `--reviewer copilot` with both documented profiles and the CLI available.
    fn copilot_drive(executor: &str) -> RouteInput {
        RouteInput {
            directive: Some(Directive::Copilot),
            executor_model: declared(executor),
            profiles: profiles(),
            available: vec![Copilot],
            ..review_loop()
        }
    }

    /// A failed native review in a session bound with `executor`.
    fn native_failed(executor: &str, available: &[Backend]) -> RouteInput {
        RouteInput {
            challenge: bound(executor),
            available: available.to_vec(),
            failure: failed("copilot-native", ErrorClass::NativeFailure),
            ..review_loop()
        }
    }

    // --- Default Routing -------------------------------------------------------------

    #[test]
    fn no_directive_outside_a_bound_copilot_session_keeps_the_codex_default() {
        let got = check(&review_loop(), &codex(SOL, Xhigh, Rule::DefaultCodex));
        assert!(got.executor.is_none() && got.warning.is_none());
    }

    #[test]
    fn no_directive_in_a_bound_copilot_session_is_copilot_native_and_pins_no_model() {
        let input = RouteInput { challenge: bound("claude-sonnet-4.6"), ..review_loop() };
        let got = check(&input, &routes(CopilotNative, None, None, Rule::NativeDefault));
        let executor = got.executor.unwrap();
        assert_eq!((executor.model.as_str(), executor.source), ("claude-sonnet-4.6", ExecutorSource::HostSessionEvent));
        assert!(!got.requires_external_acquittal);
    }

    #[test]
    fn the_native_path_uses_the_host_reported_executor_not_the_callers() {
        let input =
            RouteInput { challenge: bound("claude-sonnet-4.6"), executor_model: declared("gpt-5.4"), ..review_loop() };
        let got = check(&input, &routes(CopilotNative, None, None, Rule::NativeDefault));
        assert_eq!(got.executor.unwrap().model, "claude-sonnet-4.6");
        assert!(got.warning.unwrap().contains("not used on the native path"));
    }

    #[test]
    fn a_challenge_that_does_not_revalidate_never_bound_so_codex_remains_the_default() {
        let input = RouteInput { challenge: Challenge::Invalid { reason: "prefix changed".into() }, ..review_loop() };
        let got = check(&input, &codex(SOL, Xhigh, Rule::ChallengeNotBound));
        assert!(got.warning.unwrap().contains("prefix changed"));
    }

    #[test]
    fn outside_copilot_cli_the_challenge_cannot_select_native_review() {
        let input = RouteInput {
            challenge: Challenge::Valid { host: Host::ClaudeCode, executor_model: "claude-sonnet-4-6".into() },
            ..review_loop()
        };
        check(&input, &codex(SOL, Xhigh, Rule::DefaultCodex));
    }

    #[test]
    fn all_other_reviewer_skills_default_to_codex_mcp_even_in_a_bound_session() {
        let input = RouteInput { challenge: Challenge::NotConsulted, ..call("/research-lit") };
        let got = check(&input, &codex(SOL, Xhigh, Rule::DefaultCodex));
        assert!(got.warning.unwrap().contains("not consulted"));
        assert!(!consults_challenge("research-lit", None));
        assert!(consults_challenge("/auto-review-loop", None));
    }

    #[test]
    fn an_explicit_directive_wins_and_skips_the_native_probe() {
        assert!(!consults_challenge(REVIEW_LOOP, Some(Directive::Codex)));
        let input =
            RouteInput { directive: Some(Directive::Codex), challenge: Challenge::NotConsulted, ..review_loop() };
        check(&input, &codex(SOL, Xhigh, Rule::ExplicitCodex));
        // Even a revalidated challenge handed in does not make it native.
        let input =
            RouteInput { directive: Some(Directive::Codex), challenge: bound("claude-opus-4.6"), ..review_loop() };
        check(&input, &codex(SOL, Xhigh, Rule::ExplicitCodex));
    }

    // --- Codex MCP Tiered Reasoning-Effort Policy --------------------------------------

    #[test]
    fn deep_audit_skills_pin_gpt_5_6_sol_at_ultra() {
        for skill in DEEP_AUDIT_SKILLS {
            let got = check(&call(skill), &codex(SOL, Ultra, Rule::DefaultCodex));
            assert_eq!(got.tier, Tier::DeepAudit, "{skill}");
        }
        check(&call("/proof-checker"), &codex(SOL, Ultra, Rule::DefaultCodex));
    }

    #[test]
    fn every_other_call_is_regular_at_xhigh_including_every_review_loop_round() {
        for skill in [REVIEW_LOOP, "citation-audit", "idea-creator", "rebuttal", "research-lit"] {
            let got = check(&call(skill), &codex(SOL, Xhigh, Rule::DefaultCodex));
            assert_eq!(got.tier, Tier::Regular, "{skill}");
        }
    }

    #[test]
    fn a_beast_mode_axis_probe_of_a_deep_skill_stays_xhigh_by_an_explicit_tier() {
        let input = RouteInput { tier: Some(Tier::Regular), ..call("kill-argument") };
        check(&input, &codex(SOL, Xhigh, Rule::DefaultCodex));
    }

    #[test]
    fn the_review_loop_cannot_be_made_deep_audit() {
        let input = RouteInput { tier: Some(Tier::DeepAudit), ..review_loop() };
        assert_eq!(route(&input), Err(RouteError::LoopIsRegular));
    }

    // --- Codex capability fallback ---------------------------------------------------

    #[test]
    fn ultra_unsupported_before_a_usable_thread_retries_gpt_5_6_sol_at_xhigh() {
        let input =
            RouteInput { failure: failed("gpt-5.6-sol:ultra", ErrorClass::EffortUnsupported), ..call("proof-checker") };
        check(&input, &codex(SOL, Xhigh, Rule::CapabilityEffort));
    }

    #[test]
    fn a_regular_xhigh_call_skips_the_effort_step_so_no_pair_is_left() {
        let input = RouteInput { failure: failed("gpt-5.6-sol:xhigh", ErrorClass::EffortUnsupported), ..review_loop() };
        check(&input, &refused(Rule::CapabilityExhausted));
    }

    #[test]
    fn gpt_5_6_sol_unknown_goes_straight_to_gpt_5_5_at_xhigh_skipping_intermediate_steps() {
        let deep = RouteInput {
            failure: failed("gpt-5.6-sol:ultra", ErrorClass::ModelUnavailable),
            ..call("research-review")
        };
        check(&deep, &codex(CODEX_FALLBACK_MODEL, Xhigh, Rule::CapabilityModel));
        let regular =
            RouteInput { failure: failed("gpt-5.6-sol:xhigh", ErrorClass::ModelUnavailable), ..review_loop() };
        check(&regular, &codex(CODEX_FALLBACK_MODEL, Xhigh, Rule::CapabilityModel));
        // After the effort step the model step still applies.
        let after_effort =
            RouteInput { failure: failed("gpt-5.6-sol:xhigh", ErrorClass::ModelUnavailable), ..call("proof-checker") };
        check(&after_effort, &codex(CODEX_FALLBACK_MODEL, Xhigh, Rule::CapabilityModel));
    }

    #[test]
    fn gpt_5_4_is_not_part_of_the_automatic_chain() {
        for class in [ErrorClass::ModelUnavailable, ErrorClass::EffortUnsupported] {
            let input = RouteInput { failure: failed("gpt-5.5:xhigh", class), ..review_loop() };
            check(&input, &refused(Rule::CapabilityExhausted));
        }
    }

    #[test]
    fn a_codex_tool_absent_error_names_no_capability_so_no_pair_is_tried() {
        let input = RouteInput { failure: failed("codex", ErrorClass::ToolAbsent), ..review_loop() };
        check(&input, &refused(Rule::CodexNotStarted));
    }

    #[test]
    fn never_below_xhigh_and_never_a_pair_outside_the_tiers_chain() {
        for pair in ["gpt-5.4:xhigh", "gpt-5.6-sol:high", "gpt-5.6-sol:ultra", "gpt-5.5:ultra"] {
            let input = RouteInput { failure: failed(pair, ErrorClass::ModelUnavailable), ..review_loop() };
            assert!(matches!(route(&input), Err(RouteError::PairNotInChain { .. })), "{pair}");
        }
    }

    #[test]
    fn an_explicit_reviewer_model_override_is_pinned_at_the_tiers_effort_and_has_no_chain() {
        let input =
            RouteInput { reviewer_model: declared("gpt-5.4"), directive: Some(Directive::Codex), ..review_loop() };
        check(&input, &codex("gpt-5.4", Xhigh, Rule::ExplicitCodex));
        for class in [ErrorClass::ModelUnavailable, ErrorClass::EffortUnsupported] {
            let input = RouteInput { failure: failed("gpt-5.4:xhigh", class), ..input.clone() };
            check(&input, &refused(Rule::OverrideNoChain));
        }
        let automatic = RouteInput { failure: failed("gpt-5.6-sol:xhigh", ErrorClass::ModelUnavailable), ..input };
        assert!(matches!(route(&automatic), Err(RouteError::PairNotInChain { .. })));
    }

    #[test]
    fn never_downgrade_on_any_error_of_the_list() {
        let never = [
            ErrorClass::Timeout,
            ErrorClass::RateLimit,
            ErrorClass::Auth,
            ErrorClass::Transport,
            ErrorClass::Server,
            ErrorClass::Sandbox,
            ErrorClass::ContextLength,
            ErrorClass::MalformedRequest,
            ErrorClass::Parse,
        ];
        for class in never {
            assert!(class.is_never_downgrade(), "{class}");
            for pair in ["gpt-5.6-sol:ultra", "gpt-5.6-sol:xhigh", "gpt-5.5:xhigh"] {
                // Even with the HTTP fallback enabled: the call may have gone through.
                let input = RouteInput {
                    failure: failed(pair, class),
                    available: vec![LlmChat, Codex, Manual],
                    executor_model: declared("claude-opus-4.6"),
                    ..call("proof-checker")
                };
                check(&input, &refused(Rule::NeverDowngrade));
            }
        }
    }

    #[test]
    fn every_error_class_is_classified_as_the_document_names_it() {
        for class in ErrorClass::ALL {
            let input = RouteInput { failure: failed("gpt-5.6-sol:xhigh", class), ..review_loop() };
            let rule = match route(&input) {
                Ok(routing) => routing.rule,
                Err(RouteError::NativeClassMismatch(_)) => {
                    assert_eq!(class, ErrorClass::NativeFailure);
                    continue;
                }
                Err(e) => panic!("{class}: {e}"),
            };
            let want = match class {
                ErrorClass::EffortUnsupported => Rule::CapabilityExhausted,
                ErrorClass::ModelUnavailable => Rule::CapabilityModel,
                ErrorClass::ToolAbsent | ErrorClass::SpawnFailed => Rule::CodexNotStarted,
                _ => Rule::NeverDowngrade,
            };
            assert_eq!(rule, want, "{class}");
            assert_eq!(ErrorClass::parse(class.as_str()), Some(class));
        }
    }

    // --- Optional HTTP API fallback for Codex pre-dispatch failures ---------------------

    #[test]
    fn http_fallback_runs_when_codex_never_started_and_it_is_enabled() {
        for class in [ErrorClass::ToolAbsent, ErrorClass::SpawnFailed] {
            let input = RouteInput {
                failure: failed("codex", class),
                available: vec![LlmChat],
                executor_model: declared("claude-opus-4.6"),
                ..review_loop()
            };
            let got = check(&input, &routes(LlmChat, None, None, Rule::HttpFallback));
            assert!(!got.requires_external_acquittal);
        }
    }

    #[test]
    fn http_fallback_only_after_the_capability_chain() {
        let input = RouteInput {
            failure: failed("gpt-5.6-sol:ultra", ErrorClass::ModelUnavailable),
            available: vec![LlmChat],
            executor_model: declared("claude-opus-4.6"),
            ..call("proof-checker")
        };
        check(&input, &codex(CODEX_FALLBACK_MODEL, Xhigh, Rule::CapabilityModel));
        let exhausted = RouteInput { failure: failed("gpt-5.5:xhigh", ErrorClass::ModelUnavailable), ..input };
        check(&exhausted, &routes(LlmChat, None, None, Rule::HttpFallback));
    }

    #[test]
    fn a_listed_error_activates_http_fallback_only_when_it_proves_nothing_was_dispatched() {
        let base =
            RouteInput { available: vec![LlmChat], executor_model: declared("claude-opus-4.6"), ..review_loop() };
        let proven =
            RouteInput { failure: failed_before_dispatch("gpt-5.6-sol:xhigh", ErrorClass::Auth), ..base.clone() };
        check(&proven, &routes(LlmChat, None, None, Rule::HttpFallback));
        let ambiguous = RouteInput { failure: failed("gpt-5.6-sol:xhigh", ErrorClass::Timeout), ..base.clone() };
        check(&ambiguous, &refused(Rule::NeverDowngrade));
        // Proven, but the fallback is disabled: never a Codex downgrade either.
        let disabled = RouteInput { available: vec![], ..proven };
        check(&disabled, &refused(Rule::NeverDowngrade));
    }

    #[test]
    fn http_fallback_is_disabled_by_default() {
        let input = RouteInput {
            failure: failed("codex", ErrorClass::SpawnFailed),
            executor_model: declared("claude-opus-4.6"),
            ..review_loop()
        };
        check(&input, &refused(Rule::CodexNotStarted));
    }

    #[test]
    fn the_http_reviewer_fails_closed_without_a_known_executor_family() {
        for executor in [None, declared("mystery-model")] {
            let input = RouteInput {
                failure: failed("codex", ErrorClass::ToolAbsent),
                available: vec![LlmChat],
                executor_model: executor,
                ..review_loop()
            };
            check(&input, &refused(Rule::HttpFallbackRefused));
        }
    }

    #[test]
    fn the_http_fallback_failing_in_turn_is_review_unavailable() {
        let input = RouteInput {
            failure: failed("llm-chat", ErrorClass::Server),
            available: vec![LlmChat],
            executor_model: declared("claude-opus-4.6"),
            ..review_loop()
        };
        check(&input, &refused(Rule::ExplicitBackendFailed));
    }

    // --- Optional: GPT-5.5 Pro via Oracle / Gemini via Antigravity ------------------------

    #[test]
    fn explicit_oracle_pro_uses_oracle_mcp_with_gpt_5_5_pro() {
        let input =
            RouteInput { directive: Some(Directive::OraclePro), available: vec![OraclePro], ..call("proof-checker") };
        check(&input, &routes(OraclePro, Some(ORACLE_MODEL), None, Rule::ExplicitOraclePro));
    }

    #[test]
    fn oracle_not_installed_falls_back_to_codex_at_the_declared_tier_with_a_warning() {
        let input = RouteInput { directive: Some(Directive::OraclePro), ..call("proof-checker") };
        let got = check(&input, &codex(SOL, Ultra, Rule::OracleProNotInstalled));
        assert!(got.warning.unwrap().contains("Oracle MCP not installed"));
        let never_started = RouteInput {
            available: vec![OraclePro],
            failure: failed("oracle-pro", ErrorClass::ToolAbsent),
            ..input.clone()
        };
        check(&never_started, &codex(SOL, Ultra, Rule::OracleProNotInstalled));
    }

    #[test]
    fn explicit_agy_uses_the_gemini_review_mcp() {
        let input = RouteInput { directive: Some(Directive::Agy), available: vec![Agy], ..review_loop() };
        check(&input, &routes(Agy, None, None, Rule::ExplicitAgy));
    }

    #[test]
    fn agy_not_configured_falls_back_to_codex_at_the_declared_tier_with_a_warning() {
        let input = RouteInput { directive: Some(Directive::Agy), ..review_loop() };
        let got = check(&input, &codex(SOL, Xhigh, Rule::AgyNotInstalled));
        assert!(got.warning.unwrap().contains("agy"));
        let spawn = RouteInput { available: vec![Agy], failure: failed("agy", ErrorClass::SpawnFailed), ..input };
        check(&spawn, &codex(SOL, Xhigh, Rule::AgyNotInstalled));
    }

    #[test]
    fn an_explicit_backend_that_failed_once_asked_has_no_automatic_fallback() {
        for (directive, backend) in [(Directive::OraclePro, "oracle-pro"), (Directive::Agy, "agy")] {
            let input = RouteInput {
                directive: Some(directive),
                available: vec![directive.backend(), Codex],
                failure: failed(backend, ErrorClass::Timeout),
                ..review_loop()
            };
            check(&input, &refused(Rule::ExplicitBackendFailed));
        }
    }

    #[test]
    fn a_codex_fallback_of_oracle_follows_the_codex_chain() {
        let input = RouteInput {
            directive: Some(Directive::OraclePro),
            failure: failed("gpt-5.6-sol:ultra", ErrorClass::EffortUnsupported),
            ..call("proof-checker")
        };
        check(&input, &codex(SOL, Xhigh, Rule::CapabilityEffort));
    }

    // --- Optional: Manual Review ---------------------------------------------------------

    fn manual_call(executor: &str) -> RouteInput {
        RouteInput {
            directive: Some(Directive::Manual),
            available: vec![Manual],
            executor_model: declared(executor),
            ..review_loop()
        }
    }

    #[test]
    fn explicit_manual_routes_to_the_manual_review_mcp_at_xhigh_pending_the_reviewer_model() {
        let got = check(&manual_call("claude-opus-4.6"), &routes(Manual, None, Some(Xhigh), Rule::ExplicitManual));
        assert!(got.reason.contains("Reviewer-Model:") && got.reason.contains("anthropic"));
    }

    #[test]
    fn manual_not_installed_prints_install_instructions_and_never_falls_back_to_codex() {
        let input = RouteInput { available: vec![Codex], ..manual_call("claude-opus-4.6") };
        let got = check(&input, &refused(Rule::ManualNotInstalled));
        assert!(got.reason.contains("claude mcp add manual-review"));
        let never_started =
            RouteInput { failure: failed("manual", ErrorClass::ToolAbsent), ..manual_call("claude-opus-4.6") };
        check(&never_started, &refused(Rule::ManualNotInstalled));
        let failed_once =
            RouteInput { failure: failed("manual", ErrorClass::Timeout), ..manual_call("claude-opus-4.6") };
        check(&failed_once, &refused(Rule::ExplicitBackendFailed));
    }

    #[test]
    fn manual_review_is_not_wired_for_research_lit() {
        let input = RouteInput { skill: "research-lit".into(), ..manual_call("claude-opus-4.6") };
        check(&input, &refused(Rule::ManualNotWired));
        for skill in MANUAL_SKILLS {
            let input = RouteInput { skill: (*skill).into(), ..manual_call("claude-opus-4.6") };
            assert_eq!(route(&input).unwrap().decision, Decision::Route, "{skill}");
        }
    }

    #[test]
    fn manual_review_needs_the_actual_executor_model_of_a_known_family() {
        check(&RouteInput { executor_model: None, ..manual_call("") }, &refused(Rule::ManualExecutorUnknown));
        check(&manual_call("mystery-model"), &refused(Rule::ManualExecutorUnknown));
    }

    #[test]
    fn a_manual_response_naming_a_classifiable_non_executor_family_is_accepted() {
        for (reported, executor) in [
            ("gpt-5.5", "claude-opus-4.6"),
            ("deepseek-v3", "claude-opus-4.6"),
            ("kimi-k2", "gpt-5.4"),
            ("qwen3.6-plus", "gemini-3.1-pro"),
        ] {
            let input = RouteInput {
                manual_response: Some(format!("Reviewer-Model: {reported}\r\nScore: 8/10\nVerdict: ready\n")),
                ..manual_call(executor)
            };
            check(&input, &routes(Manual, Some(reported), Some(Xhigh), Rule::ExplicitManual));
        }
    }

    #[test]
    fn a_manual_response_is_itself_proof_that_manual_review_was_available() {
        let input = RouteInput {
            available: vec![],
            manual_response: Some("Reviewer-Model: gpt-5.5\nScore: 8/10".into()),
            ..manual_call("claude-opus-4.6")
        };
        check(&input, &routes(Manual, Some("gpt-5.5"), Some(Xhigh), Rule::ExplicitManual));
    }

    #[test]
    fn a_manual_response_without_the_reviewer_model_first_line_is_review_unavailable() {
        for response in [
            "",
            "Score: 8/10\nReviewer-Model: gpt-5.5",
            "reviewer-model: gpt-5.5",
            " Reviewer-Model: gpt-5.5",
            "Reviewer-Model:   \nScore: 8/10",
        ] {
            let input = RouteInput { manual_response: Some(response.into()), ..manual_call("claude-opus-4.6") };
            check(&input, &refused(Rule::ManualIdentityMissing));
        }
    }

    #[test]
    fn a_manual_reviewer_of_unknown_or_ambiguous_family_is_review_unavailable() {
        for reported in ["mystery-model", "deepseek-gpt", "gpt5"] {
            let input = RouteInput {
                manual_response: Some(format!("Reviewer-Model: {reported}\n")),
                ..manual_call("claude-opus-4.6")
            };
            check(&input, &refused(Rule::ManualIdentityUnknown));
        }
    }

    #[test]
    fn a_manual_reviewer_of_the_executors_family_is_review_unavailable() {
        let input = RouteInput {
            manual_response: Some("Reviewer-Model: claude-sonnet-4.5\n".into()),
            ..manual_call("claude-opus-4.6")
        };
        check(&input, &refused(Rule::ManualIdentitySameFamily));
    }

    #[test]
    fn the_reviewer_model_line_is_the_first_line_exactly() {
        assert_eq!(reviewer_model_line("Reviewer-Model: gpt-5.5\nrest"), Ok("gpt-5.5"));
        assert_eq!(reviewer_model_line("Reviewer-Model:gpt-5.5\r\n"), Ok("gpt-5.5"));
        assert_eq!(reviewer_model_line("\nReviewer-Model: gpt-5.5"), Err(ManualIdentityError::Missing));
        assert_eq!(reviewer_model_line("Reviewer-Model: "), Err(ManualIdentityError::Empty));
    }

    // --- Copilot CLI Custom Agent Profiles (compatibility drive mode) ---------------------

    #[test]
    fn copilot_with_an_anthropic_executor_selects_the_openai_profile_pinned_at_xhigh() {
        let got = check(
            &copilot_drive("claude-sonnet-4-5"),
            &routes(Copilot, Some("gpt-5.4"), Some(Xhigh), Rule::CopilotCompat),
        );
        assert_eq!(got.profile, Some(Profile::OpenAi));
        let executor = got.executor.unwrap();
        assert_eq!(executor.source, ExecutorSource::CallerDeclared);
        assert!(got.reason.contains("unverified"));
    }

    #[test]
    fn copilot_with_an_openai_executor_selects_the_claude_profile() {
        let got = check(
            &copilot_drive("gpt-5.4"),
            &routes(Copilot, Some("claude-sonnet-4.5"), Some(Xhigh), Rule::CopilotCompat),
        );
        assert_eq!(got.profile, Some(Profile::Claude));
    }

    #[test]
    fn copilot_with_a_google_executor_selects_the_openai_profile_by_default() {
        let got = check(
            &copilot_drive("gemini-3.1-pro"),
            &routes(Copilot, Some("gpt-5.4"), Some(Xhigh), Rule::CopilotCompat),
        );
        assert_eq!(got.profile, Some(Profile::OpenAi));
    }

    #[test]
    fn copilot_without_executor_model_fails_closed() {
        let input = RouteInput { executor_model: None, ..copilot_drive("") };
        check(&input, &refused(Rule::CopilotExecutorMissing));
        check(&copilot_drive("  "), &refused(Rule::CopilotExecutorMissing));
    }

    #[test]
    fn copilot_with_an_unknown_executor_family_fails_closed() {
        for model in ["mystery-model", "auto", "deepseek-v3", "gpt-5.4-claude"] {
            let got = check(&copilot_drive(model), &refused(Rule::CopilotExecutorUnknown));
            assert!(got.reason.contains("Cannot determine model family"), "{model}");
        }
    }

    #[test]
    fn copilot_with_the_selected_profile_file_missing_fails_closed_naming_it() {
        for state in [ProfileState::Missing, ProfileState::Unreadable] {
            let input = RouteInput {
                profiles: CopilotProfiles { openai: state, ..profiles() },
                ..copilot_drive("claude-opus-4.6")
            };
            let got = check(&input, &refused(Rule::CopilotProfileMissing));
            assert!(got.reason.contains("aris-reviewer-openai.agent.md"));
        }
        // The other profile missing does not matter.
        let input = RouteInput {
            profiles: CopilotProfiles { claude: ProfileState::Missing, ..profiles() },
            ..copilot_drive("claude-opus-4.6")
        };
        check(&input, &routes(Copilot, Some("gpt-5.4"), Some(Xhigh), Rule::CopilotCompat));
    }

    #[test]
    fn copilot_with_a_profile_without_a_model_fails_closed() {
        let input = RouteInput {
            profiles: CopilotProfiles { claude: ProfileState::NoModel, ..profiles() },
            ..copilot_drive("gpt-5.4")
        };
        check(&input, &refused(Rule::CopilotProfileNoModel));
    }

    #[test]
    fn copilot_with_a_same_or_unknown_family_profile_model_fails_closed() {
        for model in ["claude-opus-4.6", "mystery-model"] {
            let input = RouteInput {
                profiles: CopilotProfiles { openai: ProfileState::Model(model.into()), ..profiles() },
                ..copilot_drive("claude-sonnet-4.5")
            };
            check(&input, &refused(Rule::CopilotReviewerFamily));
        }
    }

    #[test]
    fn copilot_without_the_copilot_cli_fails_closed_and_does_not_move_the_drive_to_codex() {
        let input = RouteInput { available: vec![Codex, Manual], ..copilot_drive("claude-opus-4.6") };
        check(&input, &refused(Rule::CopilotCliUnavailable));
        let failed_once =
            RouteInput { failure: failed("copilot", ErrorClass::ToolAbsent), ..copilot_drive("claude-opus-4.6") };
        check(&failed_once, &refused(Rule::ExplicitBackendFailed));
    }

    #[test]
    fn copilot_is_wired_for_the_review_loop_only_other_skills_keep_codex() {
        assert!(!consults_profiles("research-review", Some(Directive::Copilot)));
        let input = RouteInput { skill: "research-review".into(), ..copilot_drive("claude-opus-4.6") };
        let got = check(&input, &codex(SOL, Ultra, Rule::CopilotOtherSkill));
        assert!(got.warning.is_some());
    }

    #[test]
    fn profile_frontmatter_is_read_like_the_documents_reader() {
        let read = ProfileState::from_text;
        assert_eq!(read("---\nname: x\nmodel: \"gpt-5.4\"\n---\nbody"), ProfileState::Model("gpt-5.4".into()));
        assert_eq!(read("---\nmodel: 'claude-sonnet-4.5'  \n---\n"), ProfileState::Model("claude-sonnet-4.5".into()));
        assert_eq!(read("---\nmodel: a\nmodel: b\n---\n"), ProfileState::NoModel);
        assert_eq!(read("---\nmodel:\n---\n"), ProfileState::NoModel);
        assert_eq!(read("model: gpt-5.4\n"), ProfileState::NoModel);
        assert_eq!(read("---\n---\nmodel: gpt-5.4\n"), ProfileState::NoModel);
    }

    // --- Copilot CLI Native Rubber Duck: Fail-closed fallback -------------------------

    #[test]
    fn a_failed_native_review_of_an_anthropic_executor_falls_back_to_an_available_codex() {
        let got =
            check(&native_failed("claude-sonnet-4.6", &[Codex, Manual]), &codex(SOL, Xhigh, Rule::NativeFallbackCodex));
        assert!(got.requires_external_acquittal, "the gate must re-derive the fallback reviewer's family");
        assert_eq!(got.executor.unwrap().source, ExecutorSource::HostSessionEvent);
    }

    #[test]
    fn a_failed_native_review_of_a_google_executor_falls_back_to_an_available_codex() {
        check(&native_failed("gemini-3.1-pro", &[Codex]), &codex(SOL, Xhigh, Rule::NativeFallbackCodex));
    }

    #[test]
    fn codex_must_be_positively_available_for_the_native_fallback() {
        check(&native_failed("claude-sonnet-4.6", &[]), &refused(Rule::NativeFallbackUnavailable));
        let got = check(
            &native_failed("claude-sonnet-4.6", &[Manual]),
            &routes(Manual, None, Some(Xhigh), Rule::NativeFallbackManual),
        );
        assert!(got.requires_external_acquittal);
    }

    #[test]
    fn codex_is_no_independent_fallback_for_an_openai_executor_manual_is() {
        check(&native_failed("gpt-5.4", &[Codex]), &refused(Rule::NativeFallbackUnavailable));
        let got = check(
            &native_failed("gpt-5.4", &[Codex, Manual]),
            &routes(Manual, None, Some(Xhigh), Rule::NativeFallbackManual),
        );
        assert!(got.reason.contains("openai"));
        let reported = RouteInput {
            manual_response: Some("Reviewer-Model: gpt-5.5\n".into()),
            ..native_failed("gpt-5.4", &[Manual])
        };
        check(&reported, &refused(Rule::ManualIdentitySameFamily));
        let reported = RouteInput {
            manual_response: Some("Reviewer-Model: claude-opus-4.6\n".into()),
            ..native_failed("gpt-5.4", &[])
        };
        check(&reported, &routes(Manual, Some("claude-opus-4.6"), Some(Xhigh), Rule::NativeFallbackManual));
    }

    #[test]
    fn the_native_fallback_takes_the_executor_family_only_from_a_revalidated_challenge() {
        for challenge in [Challenge::NotGiven, Challenge::Invalid { reason: "edited".into() }] {
            let input = RouteInput {
                challenge,
                executor_model: declared("claude-opus-4.6"),
                ..native_failed("claude-sonnet-4.6", &[Codex])
            };
            check(&input, &refused(Rule::NativeFallbackUnvalidated));
        }
    }

    #[test]
    fn every_native_failure_class_takes_the_same_fallback() {
        for class in ErrorClass::ALL {
            let input =
                RouteInput { failure: failed("copilot-native", class), ..native_failed("claude-sonnet-4.6", &[Codex]) };
            check(&input, &codex(SOL, Xhigh, Rule::NativeFallbackCodex));
        }
    }

    #[test]
    fn the_native_fallbacks_codex_call_follows_the_chain_and_keeps_the_obligation() {
        let input = RouteInput {
            failure: failed("gpt-5.6-sol:xhigh", ErrorClass::ModelUnavailable),
            ..native_failed("claude-sonnet-4.6", &[Codex, LlmChat])
        };
        let got = check(&input, &codex(CODEX_FALLBACK_MODEL, Xhigh, Rule::CapabilityModel));
        assert!(got.requires_external_acquittal);
        // The HTTP reviewer is no finalizer: it cannot discharge the obligation.
        let input = RouteInput { failure: failed("codex", ErrorClass::ToolAbsent), ..input };
        check(&input, &refused(Rule::HttpFallbackRefused));
    }

    // --- Usage errors ------------------------------------------------------------------

    #[test]
    fn inputs_that_contradict_the_route_are_usage_errors() {
        let native_class =
            RouteInput { failure: failed("gpt-5.6-sol:xhigh", ErrorClass::NativeFailure), ..review_loop() };
        assert!(matches!(route(&native_class), Err(RouteError::NativeClassMismatch(_))));
        let explicit_native = RouteInput {
            directive: Some(Directive::Codex),
            failure: failed("copilot-native", ErrorClass::NativeFailure),
            ..review_loop()
        };
        assert!(matches!(route(&explicit_native), Err(RouteError::AttemptMismatch { .. })));
        let other_backend = RouteInput { failure: failed("oracle-pro", ErrorClass::ToolAbsent), ..review_loop() };
        assert!(matches!(route(&other_backend), Err(RouteError::AttemptMismatch { .. })));
        let codex_for_openai =
            RouteInput { failure: failed("codex", ErrorClass::ToolAbsent), ..native_failed("gpt-5.4", &[Manual]) };
        assert!(matches!(route(&codex_for_openai), Err(RouteError::AttemptMismatch { .. })));
        assert_eq!(Attempted::parse("gpt-5.6-sol"), Err(RouteError::BadPair("gpt-5.6-sol".into())));
        assert_eq!(Attempted::parse(":xhigh"), Err(RouteError::BadPair(":xhigh".into())));
        assert_eq!(Attempted::parse("openai/gpt-5:xhigh"), Ok(Attempted::Codex(Pair::new("openai/gpt-5", Xhigh))));
    }

    #[test]
    fn the_json_object_has_every_key_always() {
        let got = route(&review_loop()).unwrap().to_json();
        let keys: Vec<&str> = got.as_object().unwrap().keys().map(String::as_str).collect();
        for key in [
            "decision",
            "backend",
            "model",
            "effort",
            "tier",
            "rule",
            "section",
            "reason",
            "warning",
            "profile",
            "executor_model",
            "executor_model_source",
            "executor_family",
            "requires_external_acquittal",
        ] {
            assert!(keys.contains(&key), "{key}");
        }
        assert_eq!(got["decision"], "route");
        let refused = route(&manual_call("mystery-model")).unwrap().to_json();
        assert_eq!((refused["decision"].as_str(), refused["backend"].as_str()), (Some("REVIEW_UNAVAILABLE"), None));
    }
}
