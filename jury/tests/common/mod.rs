//! Juries of fake command jurors (`fixtures/jurors/`) for the integration tests.

use std::path::Path;

use judged_jury::config::{JurorConfig, Jury, JuryConfig, Preset, Tiebreaker};
use judged_jury::convene::{Options, Request, convene};
use judged_jury::packet::{JurorLine, Packet};
use judged_jury::rubric::Rubric;

pub const GOOGLE: &str = "gemini-3.5-flash";
pub const OPENAI: &str = "gpt-5.4-mini";
pub const ANTHROPIC: &str = "claude-sonnet-4.6";

pub fn fixture(script: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/jurors");
    dir.join(script).display().to_string()
}

/// A command juror running `script` with `args` (`{model}` is substituted by the crate).
pub fn juror(name: &str, model: &str, script: &str, args: &[&str]) -> JurorConfig {
    let command = std::iter::once(fixture(script)).chain(args.iter().map(|a| (*a).to_owned())).collect();
    JurorConfig {
        name: name.into(),
        preset: Preset::Command,
        model: model.into(),
        bin: None,
        extra_args: vec![],
        env: Default::default(),
        env_strip: vec![],
        timeout_seconds: None,
        command: Some(command),
        price: None,
    }
}

/// A jury of `stage_1` then the `tiebreakers` candidates, validated.
pub fn jury(stage_1: Vec<JurorConfig>, tiebreakers: Vec<JurorConfig>, deadline_seconds: u64) -> Jury {
    let config = JuryConfig {
        stage_1: stage_1.iter().map(|j| j.name.clone()).collect(),
        tiebreaker: Tiebreaker::Many(tiebreakers.iter().map(|j| j.name.clone()).collect()),
        threshold: 80,
        deadline_seconds,
        jurors: stage_1.into_iter().chain(tiebreakers).collect(),
    };
    config.validate().expect("a valid test jury")
}

/// Convene `jury` on a small artifact in a fresh project directory, which is returned
/// with the packet.
pub fn judge(jury: &Jury, rubric: &str, author_model: Option<&str>) -> (Packet, tempfile::TempDir) {
    let project = tempfile::tempdir().expect("project dir");
    let rubric = Rubric::resolve(rubric, None).expect("known rubric");
    let request = Request {
        rubric: &rubric,
        persona: None,
        artifact: "fn add(a: u8, b: u8) -> u8 { a + b }",
        project: project.path(),
        author_model,
    };
    let packet = convene(jury, &request, &Options::default(), &|_| {});
    (packet, project)
}

pub fn stage_1(packet: &Packet, i: usize) -> &JurorLine {
    &packet.cascade.stage_1_small_fish[i]
}
