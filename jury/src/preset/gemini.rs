//! Gemini CLI as a juror: `gemini --output-format json` in plan mode; who answered is read
//! from its `stats.models`.

use serde_json::{Value, json};

use super::{Invocation, Invoked, JurorCli, PresetError, RunRecord, mkdir, strings, write_private};
use crate::extract;
use crate::identity::{Identity, IdentityError, IdentitySource, one};

/// Google Gemini CLI.
#[derive(Debug)]
pub(super) struct Gemini;

impl JurorCli for Gemini {
    /// `gemini --output-format json`, in plan mode.
    fn invoke(&self, inv: &mut Invocation) -> Result<Invoked, PresetError> {
        inv.env.push(("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into()));
        if let Some(endpoint) = inv.endpoint {
            let home = inv.scratch_home()?;
            write_private(&mkdir(&home.join(".gemini"))?.join("settings.json"), &settings().to_string())?;
            inv.env.push(("GEMINI_CLI_HOME".into(), home.into()));
            inv.env.push(("GOOGLE_GEMINI_BASE_URL".into(), endpoint.base_url.clone().into()));
            inv.env.push(("GEMINI_API_KEY".into(), endpoint.api_key.clone().into()));
        }
        let args = strings(&["-m", inv.model, "--approval-mode", "plan", "--output-format", "json"]);
        Ok(Invoked { program: "gemini".into(), args, record: Box::new(Gemini) })
    }
}

impl RunRecord for Gemini {
    /// The `response` of its JSON output.
    fn answer(&self, stdout: &str) -> Option<String> {
        extract::object_with_key(stdout, "response")
            .ok()
            .and_then(|o| o.get("response").and_then(Value::as_str).map(str::to_owned))
    }

    fn identity(&self, stdout: &str, _stderr: &str, _answer_model: Option<&str>) -> Result<Identity, IdentityError> {
        identity(stdout)
    }
}

/// Gemini: the keys of `stats.models` in the JSON output are the models that answered.
/// A routing call (`-m auto`) adds a utility model, so main-role models are preferred.
fn identity(stdout: &str) -> Result<Identity, IdentityError> {
    let output = extract::object_with_key(stdout, "stats")
        .map_err(|_| IdentityError::NoRecord("gemini printed no JSON output with stats"))?;
    let models = output.get("stats").and_then(|s| s.get("models")).and_then(Value::as_object);
    let Some(models) = models else { return Err(IdentityError::NoRecord("gemini's stats has no models")) };
    let main: Vec<String> =
        models.iter().filter(|(_, m)| m.pointer("/roles/main").is_some()).map(|(k, _)| k.clone()).collect();
    let names = if main.is_empty() { models.keys().cloned().collect() } else { main };
    one(names, IdentitySource::GeminiStatsModels, "gemini's stats.models is empty")
}

/// What Gemini CLI needs to run headless against a base URL (docs/spec/host-formats.md §G): API-key
/// auth (the default choice fails its own validator), no tools, one attempt, no updates.
fn settings() -> Value {
    json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false,
                    "maxAttempts": 1, "retryFetchErrors": false},
        "tools": {"core": []}
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::tests::sample;

    #[test]
    fn gemini_stats_models_name_the_server_model_not_the_requested_one() {
        let json = sample("gemini-output_format_json_server_reports_other_model.json");
        let id = identity(&format!("Loaded cached credentials.\n{json}")).expect("identity");
        assert_eq!(id, Identity { model: "gemini-IMPOSTOR-9".into(), source: IdentitySource::GeminiStatsModels });
        // The chat log names the requested model only: it is not a record of who answered.
        assert!(sample("gemini-chat_session_server_reports_other_model.jsonl").contains("\"model\":\"juror-gem-a\""));
        assert!(matches!(identity("{\"response\":\"x\"}"), Err(IdentityError::NoRecord(_))));
        let two = r#"{"stats":{"models":{"gemini-a":{"roles":{"main":{}}},"gemini-router":{"roles":{"utility_router":{}}}}}}"#;
        assert_eq!(identity(two).expect("main role").model, "gemini-a");
        let several = r#"{"stats":{"models":{"gemini-a":{},"gpt-5":{}}}}"#;
        assert!(matches!(identity(several), Err(IdentityError::SeveralModels(m)) if m == ["gemini-a", "gpt-5"]));
    }
}
