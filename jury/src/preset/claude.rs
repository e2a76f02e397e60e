//! Claude Code as a juror: `claude -p` in plan mode, with a session id of its own; who
//! answered is read from that session's transcript.

use std::path::{Path, PathBuf};

use super::{Invocation, Invoked, JurorCli, PresetError, RunRecord, mkdir, strings};
use crate::identity::{Identity, IdentityError, IdentitySource, distinct, find_file, json_lines, one, read};

/// Claude Code (`claude -p`).
#[derive(Debug)]
pub(super) struct ClaudeCode;

/// Where the run's transcript will be: the session id it was given, under its config
/// directory.
#[derive(Debug)]
struct Transcript {
    config_dir: PathBuf,
    session_id: String,
}

impl JurorCli for ClaudeCode {
    /// `claude -p`, in plan mode, with a session id of its own to find its transcript by.
    fn invoke(&self, inv: &mut Invocation) -> Result<Invoked, PresetError> {
        let config_dir = match inv.endpoint {
            Some(endpoint) => {
                inv.scratch_home()?;
                inv.env.push(("ANTHROPIC_BASE_URL".into(), endpoint.base_url.clone().into()));
                inv.env.push(("ANTHROPIC_API_KEY".into(), endpoint.api_key.clone().into()));
                inv.env.push(("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(), "1".into()));
                inv.env.push(("DISABLE_AUTOUPDATER".into(), "1".into()));
                mkdir(&inv.dir.join("claude"))?
            }
            None => inv.user_dir("CLAUDE_CONFIG_DIR", ".claude")?,
        };
        inv.env.push(("CLAUDE_CONFIG_DIR".into(), config_dir.clone().into()));
        let session_id = uuid_v4();
        let args = strings(&["-p", "--model", inv.model, "--session-id", &session_id, "--permission-mode", "plan"]);
        Ok(Invoked { program: "claude".into(), args, record: Box::new(Transcript { config_dir, session_id }) })
    }
}

impl RunRecord for Transcript {
    fn identity(&self, _stdout: &str, _stderr: &str, _answer_model: Option<&str>) -> Result<Identity, IdentityError> {
        identity(&self.config_dir, &self.session_id)
    }
}

/// Claude Code: assistant records of this session's transcript carry the API's model.
fn identity(config_dir: &Path, session_id: &str) -> Result<Identity, IdentityError> {
    let name = format!("{session_id}.jsonl");
    let transcript = find_file(&config_dir.join("projects"), 1, &|n| n == name)?
        .ok_or(IdentityError::NoRecord("claude wrote no transcript for this session"))?;
    let text = read(&transcript)?;
    let models = distinct(
        json_lines(&text)
            .filter(|l| l["type"] == "assistant" && l["message"]["model"] != "<synthetic>")
            .map(|l| l["message"]["model"].clone()),
    );
    one(models, IdentitySource::ClaudeTranscript, "the claude transcript has no assistant message")
}

/// A random RFC 4122 version-4 UUID, the form Claude Code's `--session-id` requires.
fn uuid_v4() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::preset::tests::repo_fixture;

    #[test]
    fn claude_transcript_message_model() {
        let session = "70e11cfc-c3fb-426c-9dfc-374e15ffb0af";
        let config = tempfile::tempdir().expect("tempdir");
        let project = config.path().join("projects/-tmp-judged-fixture-claude-marker-challenge-project");
        fs::create_dir_all(&project).expect("mkdir");
        let fixture = repo_fixture(&format!("claude-code-2.1.328/marker-challenge/{session}.jsonl"));
        fs::copy(fixture, project.join(format!("{session}.jsonl"))).expect("copy");
        let id = identity(config.path(), session).expect("identity");
        assert_eq!(id, Identity { model: "claude-sonnet-4-6".into(), source: IdentitySource::ClaudeTranscript });
        assert!(matches!(identity(config.path(), "other-session"), Err(IdentityError::NoRecord(_))));
    }
}
