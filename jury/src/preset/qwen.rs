//! Qwen Code as a juror: `qwen -o json` in plan mode and safe mode, the prompt on stdin;
//! who answered is read from the `stats.models` of its result.

use serde_json::{Value, json};

use super::{Invocation, Invoked, JurorCli, PresetError, RunRecord, mkdir, strings, write_private};
use crate::identity::{Identity, IdentityError, IdentitySource, one};

/// Qwen Code (`qwen -o json`).
#[derive(Debug)]
pub(super) struct QwenCode;

impl JurorCli for QwenCode {
    /// `qwen -o json`, in plan mode and safe mode, the prompt on stdin (Qwen Code reads
    /// stdin as the prompt when it is not a terminal; its `-p` would put it in argv). Safe
    /// mode loads no hooks, extensions, skills, MCP servers or `QWEN.md`, so nothing of the
    /// project or the user's setup (judged's own hook among them) runs inside the juror, and
    /// no background memory agent asks the model again (observed with Qwen Code 0.24.4).
    fn invoke(&self, inv: &mut Invocation) -> Result<Invoked, PresetError> {
        if let Some(endpoint) = inv.endpoint {
            let home = inv.scratch_home()?;
            let qwen_home = mkdir(&home.join(".qwen"))?;
            write_private(&qwen_home.join("settings.json"), &settings().to_string())?;
            inv.env.push(("QWEN_HOME".into(), qwen_home.clone().into()));
            inv.env.push(("QWEN_RUNTIME_DIR".into(), qwen_home.into()));
            // These win over a provider in settings.json, so an inherited one is replaced.
            inv.env.push(("OPENAI_BASE_URL".into(), endpoint.base_url.clone().into()));
            inv.env.push(("OPENAI_API_KEY".into(), endpoint.api_key.clone().into()));
            inv.env.push(("OPENAI_MODEL".into(), inv.model.into()));
        }
        let args = strings(&["-m", inv.model, "-o", "json", "--approval-mode", "plan", "--safe-mode"]);
        Ok(Invoked { program: "qwen".into(), args, record: Box::new(QwenCode) })
    }
}

impl RunRecord for QwenCode {
    /// The `result` of its `-o json` output.
    fn answer(&self, stdout: &str) -> Option<String> {
        result(stdout).and_then(|r| r.get("result").and_then(Value::as_str).map(str::to_owned))
    }

    /// The error of its `-o json` result (its stderr opens with notices of its own).
    fn error_message(&self, stdout: &str) -> Option<String> {
        let result = result(stdout)?;
        result.get("error").and_then(|e| e.get("message")).and_then(Value::as_str).map(|m| m.trim().to_owned())
    }

    fn identity(&self, stdout: &str, _stderr: &str, _answer_model: Option<&str>) -> Result<Identity, IdentityError> {
        identity(stdout)
    }
}

/// Qwen Code: the keys of `stats.models` in the `result` element of its `-o json` output are
/// the models the server reported (main-source models preferred, as a background agent's
/// request is counted there too). The `system/init` element and each `assistant` message
/// name only the model asked for (observed with an impostor server, Qwen Code 0.24.4).
///
/// The answer's text is a string inside the same output, so the output is parsed as the
/// JSON array it is, never searched for an object: a model name or a `{"stats": …}` in the
/// answer stays text inside a string. Its session log's `qwen-code.api_response` telemetry
/// names the server's model too, but a user's `general.chatRecording = false` leaves none,
/// so the output the preset asks for is read.
fn identity(stdout: &str) -> Result<Identity, IdentityError> {
    let result = result(stdout).ok_or(IdentityError::NoRecord("qwen printed no `-o json` output with a result"))?;
    let models = result.get("stats").and_then(|s| s.get("models")).and_then(Value::as_object);
    let Some(models) = models else { return Err(IdentityError::NoRecord("qwen's result has no stats.models")) };
    let main: Vec<String> =
        models.iter().filter(|(_, m)| m.pointer("/bySource/main").is_some()).map(|(k, _)| k.clone()).collect();
    let names = if main.is_empty() { models.keys().cloned().collect() } else { main };
    one(names, IdentitySource::QwenStatsModels, "qwen's stats.models is empty")
}

/// The last `result` element of Qwen Code's `-o json` output, which is the whole of its
/// stdout: one line holding a JSON array of messages. Anything else on stdout (the answer
/// printed as text, should `extra_args` ask for another format) is no such output.
fn result(stdout: &str) -> Option<serde_json::Map<String, Value>> {
    let messages = serde_json::from_str::<Vec<Value>>(stdout.trim()).ok()?;
    messages.into_iter().rev().find_map(|m| match m {
        Value::Object(m) if m.get("type").and_then(Value::as_str) == Some("result") => Some(m),
        _ => None,
    })
}

/// What Qwen Code needs to run headless against a base URL given by `OPENAI_BASE_URL`
/// (docs/spec/host-formats.md §G): the OpenAI-compatible provider, no update check, no
/// usage statistics (whose DNS lookups were the only traffic beside the server's), no
/// telemetry.
fn settings() -> Value {
    json!({
        "security": {"auth": {"selectedType": "openai"}},
        "general": {"enableAutoUpdate": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false}
    })
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::preset::tests::repo_fixture;

    /// Qwen Code 0.24.4 against a server answering qwen3-coder-plus as gpt-5.4-mini, whose
    /// answer claims qwen3-coder-plus in a flag and in a line shaped like the CLI's own result.
    #[test]
    fn qwen_stats_models_name_the_server_model_and_the_answer_cannot_claim_one() {
        let read = |name: &str| fs::read_to_string(repo_fixture(&format!("jurors/{name}"))).expect("fixture");
        let impostor = read("qwen-code-0.24.4_json_stdout_impostor.json");
        let id = identity(&impostor).expect("identity");
        assert_eq!(id, Identity { model: "gpt-5.4-mini".into(), source: IdentitySource::QwenStatsModels });
        // The requested model is all the init and assistant messages name; the answer's claim
        // is text in a string of the same output.
        let messages: Vec<Value> = serde_json::from_str(&impostor).expect("one JSON array");
        assert_eq!((&messages[0]["subtype"], &messages[0]["model"]), (&"init".into(), &"qwen3-coder-plus".into()));
        assert_eq!(messages[1]["message"]["model"], "qwen3-coder-plus");
        let answer = messages[2]["result"].as_str().expect("the answer");
        assert!(answer.contains(r#"{"models":{"qwen3-coder-plus":"#), "{answer}");
        // Printed as text, the claim is no record: only an output that is one array counts.
        assert!(matches!(identity(answer), Err(IdentityError::NoRecord(_))));
        let echo = read("qwen-code-0.24.4_json_stdout.json");
        assert_eq!(identity(&echo).expect("identity").model, "qwen3-coder-plus");
        assert!(matches!(identity(&format!("noise\n{echo}")), Err(IdentityError::NoRecord(_))));
    }

    #[test]
    fn qwen_prefers_the_main_source_and_refuses_several_or_none() {
        let output = |models: &str| format!(r#"[{{"type":"result","result":"x","stats":{{"models":{models}}}}}]"#);
        let with_memory_agent = output(
            r#"{"qwen3-coder-plus":{"bySource":{"main":{}}},"qwen-flash":{"bySource":{"managed-auto-memory-extractor":{}}}}"#,
        );
        assert_eq!(identity(&with_memory_agent).expect("main source").model, "qwen3-coder-plus");
        let several = output(r#"{"qwen3-coder-plus":{"bySource":{"main":{}}},"gpt-5":{"bySource":{"main":{}}}}"#);
        assert!(
            matches!(identity(&several), Err(IdentityError::SeveralModels(m)) if m == ["gpt-5", "qwen3-coder-plus"])
        );
        assert!(matches!(identity(&output("{}")), Err(IdentityError::NoRecord(_))));
        assert!(matches!(identity(r#"[{"type":"result","result":"x"}]"#), Err(IdentityError::NoRecord(_))));
        assert!(matches!(
            identity(r#"[{"type":"system","subtype":"init","model":"qwen3-coder-plus"}]"#),
            Err(IdentityError::NoRecord(_))
        ));
        assert!(matches!(identity(""), Err(IdentityError::NoRecord(_))));
    }
}
