//! One test per rule of the routing document, each named as the document says it.
//! Rows build a [`RouteInput`] from the review-loop default and state only what differs.

use super::*;
use Backend::{Agy, Codex, Copilot, CopilotNative, LlmChat, Manual, OraclePro};
use Effort::{Ultra, Xhigh};

const SOL: &str = CODEX_MODEL;

/// What a row expects.
struct Want {
    decision: RouteOutcome,
    backend: Option<Backend>,
    model: Option<&'static str>,
    effort: Option<Effort>,
    rule: Rule,
}

fn routes(backend: Backend, model: Option<&'static str>, effort: Option<Effort>, rule: Rule) -> Want {
    Want { decision: RouteOutcome::Route, backend: Some(backend), model, effort, rule }
}

fn codex(model: &'static str, effort: Effort, rule: Rule) -> Want {
    routes(Codex, Some(model), Some(effort), rule)
}

fn refused(rule: Rule) -> Want {
    Want { decision: RouteOutcome::ReviewUnavailable, backend: None, model: None, effort: None, rule }
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

fn bound(executor_model: &str) -> BoundChallenge {
    BoundChallenge::Valid { host: Host::CopilotCli, executor_model: executor_model.to_owned() }
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
    let input = RouteInput { challenge: BoundChallenge::Invalid { reason: "prefix changed".into() }, ..review_loop() };
    let got = check(&input, &codex(SOL, Xhigh, Rule::ChallengeNotBound));
    assert!(got.warning.unwrap().contains("prefix changed"));
}

#[test]
fn outside_copilot_cli_the_challenge_cannot_select_native_review() {
    let input = RouteInput {
        challenge: BoundChallenge::Valid { host: Host::ClaudeCode, executor_model: "claude-sonnet-4-6".into() },
        ..review_loop()
    };
    check(&input, &codex(SOL, Xhigh, Rule::DefaultCodex));
}

#[test]
fn all_other_reviewer_skills_default_to_codex_mcp_even_in_a_bound_session() {
    let input = RouteInput { challenge: BoundChallenge::NotConsulted, ..call("/research-lit") };
    let got = check(&input, &codex(SOL, Xhigh, Rule::DefaultCodex));
    assert!(got.warning.unwrap().contains("not consulted"));
    assert!(!consults_challenge("research-lit", None));
    assert!(consults_challenge("/auto-review-loop", None));
}

#[test]
fn an_explicit_directive_wins_and_skips_the_native_probe() {
    assert!(!consults_challenge(REVIEW_LOOP, Some(Directive::Codex)));
    let input =
        RouteInput { directive: Some(Directive::Codex), challenge: BoundChallenge::NotConsulted, ..review_loop() };
    check(&input, &codex(SOL, Xhigh, Rule::ExplicitCodex));
    // Even a revalidated challenge handed in does not make it native.
    let input = RouteInput { directive: Some(Directive::Codex), challenge: bound("claude-opus-4.6"), ..review_loop() };
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
    let deep =
        RouteInput { failure: failed("gpt-5.6-sol:ultra", ErrorClass::ModelUnavailable), ..call("research-review") };
    check(&deep, &codex(CODEX_FALLBACK_MODEL, Xhigh, Rule::CapabilityModel));
    let regular = RouteInput { failure: failed("gpt-5.6-sol:xhigh", ErrorClass::ModelUnavailable), ..review_loop() };
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
    let input = RouteInput { reviewer_model: declared("gpt-5.4"), directive: Some(Directive::Codex), ..review_loop() };
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
    let base = RouteInput { available: vec![LlmChat], executor_model: declared("claude-opus-4.6"), ..review_loop() };
    let proven = RouteInput { failure: failed_before_dispatch("gpt-5.6-sol:xhigh", ErrorClass::Auth), ..base.clone() };
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
    let failed_once = RouteInput { failure: failed("manual", ErrorClass::Timeout), ..manual_call("claude-opus-4.6") };
    check(&failed_once, &refused(Rule::ExplicitBackendFailed));
}

#[test]
fn manual_review_is_not_wired_for_research_lit() {
    let input = RouteInput { skill: "research-lit".into(), ..manual_call("claude-opus-4.6") };
    check(&input, &refused(Rule::ManualNotWired));
    for skill in MANUAL_SKILLS {
        let input = RouteInput { skill: (*skill).into(), ..manual_call("claude-opus-4.6") };
        assert_eq!(route(&input).unwrap().decision, RouteOutcome::Route, "{skill}");
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
    let got =
        check(&copilot_drive("claude-sonnet-4-5"), &routes(Copilot, Some("gpt-5.4"), Some(Xhigh), Rule::CopilotCompat));
    assert_eq!(got.profile, Some(Profile::OpenAi));
    let executor = got.executor.unwrap();
    assert_eq!(executor.source, ExecutorSource::CallerDeclared);
    assert!(got.reason.contains("unverified"));
}

#[test]
fn copilot_with_an_openai_executor_selects_the_claude_profile() {
    let got =
        check(&copilot_drive("gpt-5.4"), &routes(Copilot, Some("claude-sonnet-4.5"), Some(Xhigh), Rule::CopilotCompat));
    assert_eq!(got.profile, Some(Profile::Claude));
}

#[test]
fn copilot_with_a_google_executor_selects_the_openai_profile_by_default() {
    let got =
        check(&copilot_drive("gemini-3.1-pro"), &routes(Copilot, Some("gpt-5.4"), Some(Xhigh), Rule::CopilotCompat));
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
    let reported =
        RouteInput { manual_response: Some("Reviewer-Model: gpt-5.5\n".into()), ..native_failed("gpt-5.4", &[Manual]) };
    check(&reported, &refused(Rule::ManualIdentitySameFamily));
    let reported = RouteInput {
        manual_response: Some("Reviewer-Model: claude-opus-4.6\n".into()),
        ..native_failed("gpt-5.4", &[])
    };
    check(&reported, &routes(Manual, Some("claude-opus-4.6"), Some(Xhigh), Rule::NativeFallbackManual));
}

#[test]
fn the_native_fallback_takes_the_executor_family_only_from_a_revalidated_challenge() {
    for challenge in [BoundChallenge::NotGiven, BoundChallenge::Invalid { reason: "edited".into() }] {
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
    let native_class = RouteInput { failure: failed("gpt-5.6-sol:xhigh", ErrorClass::NativeFailure), ..review_loop() };
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
