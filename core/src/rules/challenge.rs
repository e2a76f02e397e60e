//! `challenge` and `validate-challenge`: bind a fresh nonce to the root marker call of
//! exactly one current session, and re-check such a binding later.

use super::session::{self, MarkerFault, MarkerIds, MarkerLifecycle, proves_marker};
use super::{
    Artifact, Binding, CHALLENGE_SCHEMA, Challenge, ChallengeStatus, Env, EvidenceError, Nonce, RefusalCode, Result,
};
use crate::event::Host;
use crate::family::{self, Table};
use crate::log::SessionLog;
use crate::timestamp;
use chrono::{DateTime, Utc};
use std::path::PathBuf;

/// What `challenge` is asked: bind this nonce to the one fresh marker call for `binding`
/// made in a session of `cwd`.
pub struct ChallengeRequest<'a> {
    /// `--binding`: the token the marker call carries.
    pub binding: &'a Binding,
    /// The resolved `--cwd`.
    pub cwd: &'a str,
    /// `--max-age-seconds`: how old the marker call may be (1..=600).
    pub max_age_seconds: i64,
    /// The time ages are measured against: when the command started, so that waiting
    /// for the host to persist its log cannot make a marker look fresher or staler.
    pub now: DateTime<Utc>,
    /// 32 URL-safe base64 characters from 24 CSPRNG bytes; the caller draws it.
    pub nonce: &'a Nonce,
    /// Where the caller looked for the `logs` it passes: named when none holds the marker.
    pub searched: &'a [SearchedRoot],
    /// The working tree's digest now (`None` outside git), which the challenge records.
    pub tree_sha256: Option<String>,
}

/// A directory `challenge`'s caller searched for session logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchedRoot {
    /// A host's own root: Copilot CLI's or Codex CLI's sessions, Claude Code's projects.
    Host(Host, PathBuf),
    /// A root named by `--session-root`: each log's host is told by its shape, so it holds
    /// Copilot CLI sessions or Claude Code projects.
    Named(PathBuf),
}

impl SearchedRoot {
    /// The hosts whose logs were looked for under this root.
    fn hosts(&self) -> &[Host] {
        match self {
            SearchedRoot::Host(host, _) => std::slice::from_ref(host),
            SearchedRoot::Named(_) => &Host::UNDER_A_NAMED_ROOT,
        }
    }
}

impl std::fmt::Display for SearchedRoot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SearchedRoot::Host(host, root) => {
                write!(f, "the {} under {}", crate::adapter::of(*host).root_noun(), root.display())
            }
            SearchedRoot::Named(root) => {
                write!(f, "the Copilot CLI sessions and Claude Code projects under {}", root.display())
            }
        }
    }
}

/// "a", "a or b", "a, b or c" (`last` joins the last two).
fn listed(items: &[String], last: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., final_item] => format!("{} {last} {final_item}", init.join(", ")),
    }
}

/// Exit 3, naming the hosts and the roots searched: a user of another host than Copilot
/// CLI was told only that no Copilot event holds the marker. The reference's words stay
/// first where they are all the truth (only Copilot CLI was searched), so a caller matching
/// on them keeps working there.
fn no_binding(request: &ChallengeRequest) -> EvidenceError {
    let mut hosts: Vec<String> = Vec::new();
    for host in request.searched.iter().flat_map(SearchedRoot::hosts) {
        let name = crate::adapter::of(*host).name();
        if !hosts.iter().any(|h| h == name) {
            hosts.push(name.to_owned());
        }
    }
    let roots: Vec<String> = request.searched.iter().map(ToString::to_string).collect();
    let (binding, seconds) = (request.binding, request.max_age_seconds);
    let event = match hosts.as_slice() {
        [] => "root session event".to_owned(),
        _ => format!("{} root session event", listed(&hosts, "or")),
    };
    let among = match roots.as_slice() {
        [] => String::new(),
        _ => format!(" among {}", listed(&roots, "and")),
    };
    EvidenceError::new(
        RefusalCode::NoBinding,
        format!(
            "binding marker is not present in a current {event}: no session of {cwd}{among} has a root shell call \
             printing the marker for binding {binding} that completed within the last {seconds} s; run \
             `judge-evidence marker --binding {binding}` as its own shell call in this session, let it finish, then \
             run challenge again",
            cwd = request.cwd,
        ),
    )
}

/// Check `--max-age-seconds` (before the binding, as the reference does).
pub fn check_max_age(seconds: i64) -> Result<()> {
    if (1..=600).contains(&seconds) {
        Ok(())
    } else {
        Err(EvidenceError::evidence("--max-age-seconds must be within 1..600"))
    }
}

/// Find the one current root marker lifecycle for the binding among `logs` and build the
/// challenge artifact.
pub fn challenge(request: &ChallengeRequest, logs: &[&SessionLog], env: &dyn Env) -> Result<Challenge> {
    check_max_age(request.max_age_seconds)?;
    let mut candidates = Vec::new();
    for &log in logs {
        // As in the reference, a log that cannot be read as a session is not a candidate.
        if session::ensure_parsed(log).is_err() {
            continue;
        }
        let Ok(meta) = session::metadata(log, log.len()) else {
            continue;
        };
        if env.resolve(&meta.cwd) != request.cwd {
            continue;
        }
        candidates.extend(marker_candidates(log, request).map(|m| (log, meta.session_id.clone(), m)));
    }
    let (log, session_id, marker) = match candidates.len() {
        0 => return Err(no_binding(request)),
        1 => candidates.pop().expect("one candidate"),
        n => {
            return Err(EvidenceError::new(
                RefusalCode::AmbiguousBinding,
                format!("ambiguous Copilot session binding: found {n} matching events"),
            ));
        }
    };
    session::check_host_chain(log, marker.start_line.start)?;
    let model = marker.start.model.as_deref().unwrap_or_default().trim();
    let Some(executor_family) = family::family(model, Table::Evidence) else {
        return Err(EvidenceError::new(
            RefusalCode::UnknownExecutorFamily,
            format!("host-reported executor model has unknown family: {model}"),
        ));
    };
    let start_id =
        marker.start.id.as_deref().ok_or_else(|| EvidenceError::evidence("challenge tool event is missing id"))?;
    let completion_id = marker
        .completion
        .id
        .as_deref()
        .ok_or_else(|| EvidenceError::evidence("challenge marker completion is missing id"))?;
    let prefix = marker.completion_line.end;
    Ok(Challenge {
        schema: CHALLENGE_SCHEMA.to_owned(),
        status: ChallengeStatus::Bound,
        binding: request.binding.to_string(),
        nonce: request.nonce.clone(),
        issued_at: timestamp::format_utc(request.now),
        cwd: request.cwd.to_owned(),
        session_id,
        session_events: log.path.clone(),
        challenge_event_id: start_id.to_owned(),
        challenge_completion_event_id: completion_id.to_owned(),
        challenge_tool_call_id: marker.call.id.clone(),
        challenge_event_timestamp: marker.start.timestamp.clone(),
        executor_model: model.to_owned(),
        executor_family: executor_family.to_owned(),
        event_prefix_bytes: prefix,
        event_prefix_sha256: log.prefix_sha256(prefix),
        host: log.host,
        chain_sha256: log.chain_at(prefix),
        tree_sha256: request.tree_sha256.clone(),
        witness: None,
        other: Default::default(),
    })
}

/// Root shell calls in `log` that carry the binding and `marker` (or root calls of judged's
/// MCP `marker` tool that carry the binding), are fresh, and have exactly one later
/// successful completion printing the marker.
fn marker_candidates<'a>(
    log: &'a SessionLog,
    request: &'a ChallengeRequest,
) -> impl Iterator<Item = MarkerLifecycle<'a>> {
    log.records().filter(|(_, r)| r.root).flat_map(move |(start_line, start)| {
        start.tool_calls.iter().filter_map(move |call| {
            let model_ok = start.model.as_deref().is_some_and(|m| !m.trim().is_empty());
            // Defect fix (evidence-protocol.md §8.4): a bad timestamp makes this call no candidate; it
            // does not abort the scan of every other session.
            let age =
                start.timestamp.as_deref().and_then(timestamp::parse).map(|t| (request.now - t).num_milliseconds());
            let fresh = age.is_some_and(|ms| (-5_000..=request.max_age_seconds * 1000).contains(&ms));
            // A shell call whose command holds the word, or judged's MCP marker tool.
            let (shell, tool) = (session::is_shell_tool(&call.name), session::is_marker_tool(&call.name));
            if !((shell || tool) && model_ok && fresh) {
                return None;
            }
            // Serialised only for the few fresh calls: a long session has thousands.
            let arguments = call.arguments_text();
            if !(arguments.contains(request.binding.as_str()) && (tool || arguments.contains("marker"))) {
                return None;
            }
            // Defect fix (evidence-protocol.md §8.9): a call without an id matches no completion.
            let call_id = call.id.as_deref()?;
            let mut completions = log.records().filter(|(line, r)| {
                r.root
                    && line.end > start_line.end
                    && r.tool_results.iter().any(|res| proves_marker(res, call_id, request.binding.as_str()))
            });
            let (completion_line, completion) = completions.next()?;
            completions.next().is_none().then_some(MarkerLifecycle {
                start_line,
                start,
                call,
                completion_line,
                completion,
            })
        })
    })
}

/// What revalidating a challenge established: the fields it checked against the log, and
/// the marker lifecycle they name.
pub(super) struct BoundChallenge<'c, 'l> {
    /// The marker lifecycle's ids (and the binding and executor model) as the challenge
    /// names them.
    pub ids: MarkerIds<'c>,
    pub session_id: &'c str,
    pub cwd: &'c str,
    /// The bound prefix of the log: its length.
    pub prefix: u64,
    pub marker: MarkerLifecycle<'l>,
    /// The working tree the round began on (`tree_sha256`): the one its review covers.
    pub tree_sha256: Option<&'c str>,
}

/// What [`revalidate`] refuses from the challenge's own fields: its schema and a bound
/// status.
pub(super) fn check_standing(challenge: &Artifact) -> Result<()> {
    if challenge.str("schema") != Some(CHALLENGE_SCHEMA) || challenge.str("status") != Some("bound") {
        return Err(EvidenceError::evidence("unsupported or unbound Copilot challenge"));
    }
    Ok(())
}

/// Re-check a challenge artifact against its log (evidence-protocol.md §2.3), and the host's chain from
/// the marker call to the end of the log as it is now; shared by every way of verifying.
pub(super) fn revalidate<'c, 'l>(
    challenge: &'c Artifact,
    log: &'l SessionLog,
    env: &dyn Env,
) -> Result<BoundChallenge<'c, 'l>> {
    check_standing(challenge)?;
    session::ensure_parsed(log)?;
    let prefix = challenge
        .prefix_len("event_prefix_bytes", log.len())
        .ok_or_else(|| EvidenceError::evidence("challenge event prefix length is invalid"))?;
    if log.prefix_sha256(prefix) != challenge.required("event_prefix_sha256")? {
        return Err(EvidenceError::evidence("Copilot challenge event prefix changed after binding"));
    }
    let meta = session::metadata(log, prefix)?;
    let session_id = match challenge.str("session_id") {
        Some(id) if meta.session_id == *id => id,
        _ => return Err(EvidenceError::evidence("challenge session id does not match its event log")),
    };
    let cwd = challenge.required("cwd")?;
    if env.resolve(&meta.cwd) != env.resolve(cwd) {
        return Err(EvidenceError::evidence("challenge cwd does not match its event log"));
    }
    let ids = MarkerIds::of(challenge)?;
    let marker = session::bound_marker(log, &ids, prefix).map_err(|fault| {
        EvidenceError::evidence(match fault {
            MarkerFault::StartCount => "challenge root tool event is missing or duplicated",
            MarkerFault::NotRoot => "challenge was not issued by the root Copilot agent",
            MarkerFault::ToolCallMismatch => "challenge tool-call id mismatch",
            MarkerFault::ModelMismatch => "challenge executor model mismatch",
            MarkerFault::BindingAbsent => "challenge binding token is absent from the host tool event",
            MarkerFault::CompletionCount => "challenge marker completion is missing or duplicated",
            MarkerFault::CompletionInvalid => "challenge marker completion does not prove a successful marker call",
        })
    })?;
    session::check_host_chain(log, marker.start_line.start)?;
    let tree_sha256 = challenge.str("tree_sha256");
    Ok(BoundChallenge { ids, session_id, cwd, prefix, marker, tree_sha256 })
}

/// `validate-challenge`: revalidate and check the stored family.
///
/// Defect fix (evidence-protocol.md §8.6): an unknown executor family is exit 5 here as in `challenge`,
/// not the reference's generic 2.
/// Returns where the challenge's window starts in the log (the marker call).
pub fn validate_challenge(challenge: &Artifact, log: &SessionLog, env: &dyn Env) -> Result<u64> {
    let bound = revalidate(challenge, log, env)?;
    let model = bound.ids.executor_model;
    let derived = family::family(model, Table::Evidence).ok_or_else(|| {
        EvidenceError::new(
            RefusalCode::UnknownExecutorFamily,
            format!("host-reported executor model has unknown family: {model}"),
        )
    })?;
    if challenge.str("executor_family") != Some(derived) {
        return Err(EvidenceError::evidence("challenge executor family does not match its host model"));
    }
    Ok(bound.marker.start_line.start)
}
