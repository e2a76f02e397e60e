//! Codex CLI as a juror: `codex exec --json`, read-only, the prompt on stdin; who answered
//! is read from its reroute event or its SSE trace.

use serde_json::Value;

use super::{Invocation, Invoked, JurorCli, PresetError, RunRecord, mkdir, strings};
use crate::identity::{Identity, IdentityError, IdentitySource, distinct, json_lines, one};

/// Codex CLI (`codex exec`).
#[derive(Debug)]
pub(super) struct Codex;

/// The variable through which Codex's ad-hoc provider reads the endpoint's key.
pub(super) const KEY_VAR: &str = "JUDGED_JUROR_API_KEY";

/// The `RUST_LOG` directive that makes Codex print every raw Responses API event on
/// stderr, `response.model` included (observed in Codex CLI 0.169.0).
pub(super) const SSE_TRACE: &str = "codex_api::sse::responses=trace";

/// What precedes each raw Responses API event in Codex's trace on stderr
/// (`RUST_LOG=codex_api::sse::responses=trace`, Codex CLI 0.169.0).
const SSE_EVENT: &str = "codex_api::sse::responses: SSE event: ";

impl JurorCli for Codex {
    /// `codex exec --json`, read-only, the prompt on stdin.
    fn invoke(&self, inv: &mut Invocation) -> Result<Invoked, PresetError> {
        let mut args = strings(&["exec", "--json", "--skip-git-repo-check", "-s", "read-only", "--disable", "plugins"]);
        args.extend(strings(&["-c", "analytics.enabled=false", "-m", inv.model]));
        let home = match inv.endpoint {
            Some(endpoint) => {
                inv.scratch_home()?;
                inv.env.push((KEY_VAR.into(), endpoint.api_key.clone().into()));
                args.extend(provider_flags(&endpoint.base_url));
                mkdir(&inv.dir.join("codex"))?
            }
            None => inv.user_dir("CODEX_HOME", ".codex")?,
        };
        inv.env.push(("CODEX_HOME".into(), home.into()));
        // The only place Codex shows the model the server says answered (without a
        // reroute) is its raw SSE trace on stderr; its rollout records the request.
        let rust_log = match inv.juror.config.env.get("RUST_LOG").map(|v| v.trim()).filter(|v| !v.is_empty()) {
            Some(user) => format!("{user},{SSE_TRACE}"),
            None => SSE_TRACE.to_owned(),
        };
        inv.env.push(("RUST_LOG".into(), rust_log.into()));
        Ok(Invoked { program: "codex".into(), args, record: Box::new(Codex) })
    }

    /// The prompt is stdin; options must come before it.
    fn last_args(&self) -> &'static [&'static str] {
        &["-"]
    }
}

impl RunRecord for Codex {
    /// Its last agent message of its `--json` events.
    fn answer(&self, stdout: &str) -> Option<String> {
        json_lines(stdout)
            .filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "agent_message")
            .filter_map(|e| e["item"]["text"].as_str().map(str::to_owned))
            .last()
    }

    fn identity(&self, stdout: &str, stderr: &str, _answer_model: Option<&str>) -> Result<Identity, IdentityError> {
        identity(stdout, stderr)
    }
}

/// Codex: a reroute event on `--json` stdout names the model that answered; without one,
/// the `response.model` of the raw Responses API events Codex traces on stderr (the preset
/// sets `RUST_LOG` for it) names the model the server says answered. Its rollout under
/// `CODEX_HOME/sessions/` records only the model asked for (docs/spec/host-formats.md §G), so it is
/// no record of who answered: without an event or a trace, the juror is down.
fn identity(stdout: &str, stderr: &str) -> Result<Identity, IdentityError> {
    let events: Vec<Value> = json_lines(stdout).collect();
    let rerouted =
        events.iter().filter(|e| e["type"] == "item.completed" && e["item"]["type"] == "error").find_map(|e| {
            let message = e["item"]["message"].as_str()?;
            let target = message.strip_prefix("model rerouted: ")?.split_once("->")?.1;
            target.split_whitespace().next().map(str::to_owned)
        });
    if let Some(model) = rerouted {
        return Ok(Identity { model, source: IdentitySource::CodexRerouteEvent });
    }
    let traced = distinct(
        stderr
            .lines()
            .filter_map(|l| l.split_once(SSE_EVENT).map(|(_, json)| json))
            .filter_map(|json| serde_json::from_str::<Value>(json.trim()).ok())
            .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("response.")))
            .map(|e| e["response"]["model"].clone()),
    );
    if !traced.is_empty() {
        return one(traced, IdentitySource::CodexSseTrace, "the codex SSE trace names no model");
    }
    Err(IdentityError::NoRecord(
        "codex left no record of the model that answered: no reroute event on stdout and no SSE trace on stderr \
         (its rollout names only the model asked for)",
    ))
}

/// `-c` flags that define a provider for `base_url` (Codex accepts only the Responses API).
fn provider_flags(base_url: &str) -> Vec<String> {
    let url = toml::Value::String(base_url.to_owned());
    let provider = format!(
        "model_providers.judged={{name=\"judged\",base_url={url},wire_api=\"responses\",\
         env_key=\"{KEY_VAR}\",request_max_retries=0,stream_max_retries=0}}"
    );
    strings(&["-c", "model_provider=judged", "-c", &provider])
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::preset::tests::{repo_fixture, sample};

    #[test]
    fn codex_without_a_reroute_event_or_a_trace_has_no_record_of_who_answered() {
        let stdout = sample("codex-exec_json_stdout_echo.jsonl");
        let err = identity(&stdout, "").expect_err("the rollout does not count");
        assert!(matches!(err, IdentityError::NoRecord(m) if m.contains("no SSE trace")));
        assert!(matches!(identity("", ""), Err(IdentityError::NoRecord(_))));
    }

    #[test]
    fn codex_reroute_event_names_the_model_that_answered() {
        let stdout = sample("codex-exec_json_stdout_reroute.jsonl");
        let id = identity(&stdout, "").expect("identity");
        assert_eq!(id, Identity { model: "gpt-IMPOSTOR-9".into(), source: IdentitySource::CodexRerouteEvent });
    }

    #[test]
    fn codex_sse_trace_names_the_server_model_the_rollout_does_not() {
        // Codex CLI 0.169.0 against a server answering gpt-5.4-mini as gemini-2.5-flash,
        // without an `openai-model` header: no reroute event, the rollout says gpt-5.4-mini.
        let read = |name: &str| fs::read_to_string(repo_fixture(&format!("jurors/{name}"))).expect("fixture");
        let stdout = read("codex-0.169.0_json_stdout_impostor_no_header.jsonl");
        let stderr = read("codex-0.169.0_sse_trace_impostor.stderr");
        let id = identity(&stdout, &stderr).expect("identity");
        assert_eq!(id, Identity { model: "gemini-2.5-flash".into(), source: IdentitySource::CodexSseTrace });
        let two = format!(
            "{stderr}\nX codex_api::sse::responses: SSE event: {{\"type\":\"response.completed\",\"response\":{{\"model\":\"gpt-5.4-mini\"}}}}"
        );
        assert!(matches!(identity(&stdout, &two), Err(IdentityError::SeveralModels(_))));
    }
}
