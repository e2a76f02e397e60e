//! The routing's inputs and outputs: backends, directives, tiers and efforts, the
//! failure a call reports, the challenge and profiles the CLI read, and the routing.

use super::{DEEP_AUDIT_SKILLS, REVIEW_LOOP, Rule, normalized_skill};
use judged_core::event::Host;
use judged_core::family::{Table, family};
use serde_json::{Value, json};
use std::fmt;

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

named!(Directive {
    Codex => "codex",
    OraclePro => "oracle-pro",
    Agy => "agy",
    Manual => "manual",
    Copilot => "copilot",
});

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

named!(Tier {
    DeepAudit => "deep-audit",
    Regular => "regular",
});

impl Tier {
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
    pub(super) fn new(model: &str, effort: Effort) -> Pair {
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

    pub(super) fn same(&self, other: &Pair) -> bool {
        self.effort == other.effort && self.model.eq_ignore_ascii_case(&other.model)
    }
}

impl fmt::Display for Pair {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}", self.model, self.effort)
    }
}

/// How a reviewer call failed (`--error-class`). The classes are the document's own
/// categories; what each allows is in [`route`](super::route)'s rules.
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
pub enum BoundChallenge {
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
    pub(super) fn get(&self, profile: Profile) -> &ProfileState {
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
    pub challenge: BoundChallenge,
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
            challenge: BoundChallenge::NotGiven,
            failure: None,
            manual_response: None,
            profiles: CopilotProfiles::default(),
        }
    }
}

/// Route or not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RouteOutcome {
    /// Use `backend`.
    Route,
    /// No reviewer the document allows can be used: never a substantive verdict.
    ReviewUnavailable,
}

impl RouteOutcome {
    /// `route` or `REVIEW_UNAVAILABLE`.
    pub fn as_str(self) -> &'static str {
        match self {
            RouteOutcome::Route => "route",
            RouteOutcome::ReviewUnavailable => "REVIEW_UNAVAILABLE",
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
    pub decision: RouteOutcome,
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
        let executor_family = executor.map(|e| family(&e.model, Table::Gate).unwrap_or(judged_core::family::UNKNOWN));
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
