//! The artifact loader (`rules::Artifact::parse`, what `judge-evidence` and the daemon
//! read a challenge or evidence file with) and every rule that reads an artifact's fields:
//! `validate_challenge`, `verify` (a challenge) and `validate` (evidence), against the
//! spec's example log, with the example's reviewer response served for any path. The
//! seeds are the challenge and evidence the rules issue for that log; mutations of them
//! reach deep into each rule's field checks.
#![no_main]

use judged_core::event::Host;
use judged_core::log::SessionLog;
use judged_core::rules::{self, Artifact, Env, EvidenceError};
use judged_core::timestamp;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

const LOG: &[u8] = include_bytes!("../../fixtures/spec-example/events-host-chain.jsonl");
const RESPONSE: &[u8] =
    b"Score: 8/10\nVerdict: ready\n\n1. Weakness: ablation missing (minimum fix: add it)\nMemory update: none";

struct FixedEnv;

impl Env for FixedEnv {
    fn resolve(&self, path: &str) -> String {
        path.to_owned()
    }
    fn read_file(&self, path: &str) -> rules::Result<Vec<u8>> {
        if path.is_empty() { Err(EvidenceError::evidence("empty path")) } else { Ok(RESPONSE.to_vec()) }
    }
}

fn log() -> &'static SessionLog {
    static LOG_ONCE: OnceLock<SessionLog> = OnceLock::new();
    LOG_ONCE.get_or_init(|| SessionLog::from_bytes(Host::CopilotCli, "/s/events.jsonl", LOG.to_vec()))
}

fuzz_target!(|data: &[u8]| {
    let Ok(artifact) = Artifact::parse("/fuzz/artifact.json", data) else { return };
    let view = Artifact(&artifact);
    let _ = view.host();
    let log = log();
    let env = FixedEnv;
    let _ = rules::validate_challenge(&artifact, log, &env);
    let now = timestamp::parse("2026-07-15T12:00:15Z").expect("a fixed time");
    if let Ok(verified) = rules::verify(&artifact, log, "/reviews/response.md", now, &env) {
        let _ = verified.policy();
        let _ = rules::validate(&verified.evidence, log, &env);
    }
    let _ = rules::validate(&artifact, log, &env);
});
