//! The jury, as the daemon runs it: which jury applies to a project, the run itself (off
//! the engine's thread: a jury takes up to its deadline), and what the journal keeps of
//! it. The cascade, the jurors and the packet are `judged_jury`'s.

use crate::config::ProjectTrust;
use crate::store::{AskedBy, JournalEvent, JurorRan, JuryConvened, Lookup, Store, StoreError};
use judged_core::chain;
use judged_core::family::{Table, family};
use judged_io::worktree::ReviewedTree;
use judged_jury::config::{Jury, JuryConfig};
use judged_jury::convene::{self, Options, Progress};
use judged_jury::packet::Packet;
use judged_jury::rubric::{Rubric, RubricError};
use judged_protocol::wire_name;
use judged_protocol::{JuryProgress, JuryStep, PanelReply, ReportJuror, ReportJury};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The most of a juror's raw answer the journal keeps: enough to read why it said what it
/// said, bounded so one chatty juror cannot fill the store or a reply frame.
const RAW_RESPONSE_BYTES: usize = 64 * 1024;

/// Why no jury can be convened.
#[derive(Debug, thiserror::Error)]
pub enum JuryError {
    #[error(transparent)]
    NoJury(#[from] judged_protocol::config::NoJury),
    #[error("{source} (in {})", path.display())]
    InvalidJury { path: PathBuf, source: judged_jury::config::ConfigError },
    #[error(transparent)]
    ProjectFile(#[from] judged_jury::config::FileError),
    #[error(transparent)]
    Rubric(#[from] RubricError),
}

/// Where the jury for a project comes from: the project's own `[jury]` (when project
/// files are trusted), else the user's.
pub struct JurySource<'a> {
    /// The user's `[jury]`, validated when its file was read.
    pub user: Option<&'a JuryConfig>,
    /// The user's config file, to name in messages.
    pub user_path: &'a Path,
    /// What a project's `.judged.toml` may set.
    pub trust: ProjectTrust,
    /// Whether this daemon is a witness account's.
    pub witness: bool,
    /// Why the newest edit of the user's file is not in force, when it is not.
    pub not_applied: Option<&'a str>,
}

impl JurySource<'_> {
    /// The jury for work in `cwd`, with the file it came from.
    pub fn jury_for(&self, cwd: &Path) -> Result<(JuryConfig, PathBuf), JuryError> {
        let user = self.user.map(|jury| (jury, self.user_path));
        let missing = || judged_protocol::config::NoJury {
            config: self.user_path.to_owned(),
            witness: self.witness,
            not_applied: self.not_applied.map(str::to_owned),
        };
        Ok(judged_jury::config::for_project(user, self.trust.jury, cwd)?.ok_or_else(missing)?)
    }
}

/// What a jury is asked, owned, so it can run on a thread of its own.
pub struct JuryRun {
    /// What makes two runs the same question of the same jury.
    pub key: String,
    pub source: AskedBy,
    jury: Jury,
    rubric: Rubric,
    persona: Option<String>,
    artifact: String,
    project: PathBuf,
    /// The model that wrote the work; the tiebreaker must be of another family.
    author_model: Option<String>,
    /// The working tree whose changes are the artifact, when they are.
    git_tree: Option<ReviewedTree>,
    /// Paths no juror of this run may open ([`judged_io::sandbox`]).
    out_of_reach: Vec<PathBuf>,
}

/// A jury to convene, but for the artifact.
#[derive(Clone)]
pub struct JuryAsk<'a> {
    pub rubric: &'a str,
    pub rubric_text: Option<&'a str>,
    pub persona: Option<&'a str>,
    pub project: PathBuf,
    pub author_model: Option<String>,
    pub source: AskedBy,
}

impl JuryAsk<'_> {
    /// What makes two runs the same question of the same jury, `work` naming what is
    /// judged: the artifact's digest, or whatever determines the artifact (for the gate,
    /// the task and the working tree's digest, so a reused verdict costs no `git diff`).
    /// Who asked and for whose work are part of the question: the gate reuses only the
    /// verdicts it convened itself, on the author it found in the session's log.
    pub fn key(&self, config: &JuryConfig, work: &str) -> String {
        let material = serde_json::json!([
            self.source,
            self.rubric,
            self.rubric_text,
            self.persona,
            self.author_model,
            work,
            format!("{config:?}"),
        ]);
        chain::to_hex(&chain::sha256(material.to_string().as_bytes()))
    }
}

impl JuryRun {
    /// Check the jury and the rubric: the run of `ask` on `artifact`, under `key` (from
    /// [`JuryAsk::key`]).
    pub fn new(
        config: &JuryConfig,
        from: &Path,
        ask: JuryAsk,
        artifact: String,
        key: String,
    ) -> Result<JuryRun, JuryError> {
        let jury = config.validate().map_err(|source| JuryError::InvalidJury { path: from.to_owned(), source })?;
        let rubric = Rubric::resolve(ask.rubric, ask.rubric_text)?;
        Ok(JuryRun {
            key,
            source: ask.source,
            jury,
            rubric,
            persona: ask.persona.map(str::to_owned),
            artifact,
            project: ask.project,
            author_model: ask.author_model,
            git_tree: None,
            out_of_reach: Vec::new(),
        })
    }

    /// This run, its artifact being the changes of the working tree `git_tree`: a passing
    /// verdict covers a commit of that tree, as far as its changes go from their base.
    pub fn judging_tree(self, git_tree: Option<ReviewedTree>) -> JuryRun {
        JuryRun { git_tree, ..self }
    }

    /// This run, its jurors kept from `out_of_reach`.
    pub fn keeping_out(self, out_of_reach: Vec<PathBuf>) -> JuryRun {
        JuryRun { out_of_reach, ..self }
    }

    /// Run the jury (seconds to minutes; never on the engine's thread), telling
    /// `progress` each step.
    pub fn convene(&self, progress: &(dyn Fn(JuryProgress) + Sync)) -> Packet {
        let started = Instant::now();
        let deadline_ms = self.jury.deadline.as_millis() as u64;
        let request = convene::Request {
            rubric: &self.rubric,
            persona: self.persona.as_deref(),
            artifact: &self.artifact,
            project: &self.project,
            author_model: self.author_model.as_deref(),
        };
        let tell = |step: &Progress<'_>| {
            let step = JuryStep::from(step);
            progress(JuryProgress { elapsed_ms: started.elapsed().as_millis() as u64, deadline_ms, step });
        };
        let options = Options { out_of_reach: self.out_of_reach.clone(), ..Options::default() };
        convene::convene(&self.jury, &request, &options, &tell)
    }

    /// The hook timeout a gate running this jury needs.
    pub fn hook_timeout_seconds(&self) -> u64 {
        self.jury.hook_timeout_seconds()
    }

    /// Journal every juror's run and the packet, in one transaction.
    pub fn record(&self, store: &mut Store, mut packet: Packet, cwd: &str) -> Result<JuryConvened, StoreError> {
        let lines = packet.cascade.stage_1_small_fish.iter_mut().chain(packet.cascade.stage_2_tiebreaker.as_mut());
        for line in lines {
            if let Some(raw) = &mut line.raw_response
                && raw.len() > RAW_RESPONSE_BYTES
            {
                let mut end = RAW_RESPONSE_BYTES;
                while !raw.is_char_boundary(end) {
                    end -= 1;
                }
                let cut = raw.len() - end;
                raw.truncate(end);
                raw.push_str(&format!("\n[judged: {cut} more bytes not kept]"));
            }
        }
        let mut events: Vec<JournalEvent> = packet
            .jurors()
            .map(|line| {
                JournalEvent::JurorRan(JurorRan {
                    panel: self.key.clone(),
                    name: line.name.clone(),
                    argv: line.argv.clone(),
                    model_requested: line.model_requested.clone(),
                    model_reported: line.model_reported.clone(),
                    identity_source: line.identity_source.map(|s| wire_name(&s)),
                    exit_code: line.exit_code,
                    latency_ms: line.latency_ms,
                    tokens_in: line.tokens_in,
                    tokens_out: line.tokens_out,
                    verdict: line.verdict,
                    error: line.error.clone(),
                })
            })
            .collect();
        let text = serde_json::to_string(&packet).map_err(StoreError::Body)?;
        let convened = JuryConvened {
            key: self.key.clone(),
            source: self.source,
            rubric: packet.rubric.clone(),
            cwd: cwd.to_owned(),
            artifact_sha256: chain::to_hex(&chain::sha256(self.artifact.as_bytes())),
            final_verdict: packet.final_verdict,
            final_confidence: packet.final_confidence,
            degraded: packet.cross_family.degraded,
            down: packet.cross_family.down_lanes.iter().map(|d| format!("{}: {}", d.juror, d.reason)).collect(),
            tiebreaker_unavailable: packet.cascade.tiebreaker_unavailable.clone(),
            flags: packet.all_flags.clone(),
            packet: text,
            author_model: self.author_model.clone(),
            git_tree: self.git_tree.as_ref().map(|tree| tree.id.clone()),
            git_base: self.git_tree.as_ref().map(|tree| tree.base.clone()),
        };
        events.push(JournalEvent::JuryConvened(Box::new(convened.clone())));
        store.journal_together(&events)?;
        Ok(convened)
    }
}

/// The newest healthy verdict on the same question of the same jury: a degraded or
/// errored one is asked again, since a juror that was down may be back.
pub fn reusable(store: &Store, key: &str) -> Result<Option<JuryConvened>, StoreError> {
    let found = store.journal_find::<JuryConvened>(Lookup::PanelByKey, key)?;
    Ok(found.filter(|p| !p.degraded && p.final_verdict != judged_jury::packet::FinalVerdict::Error))
}

/// The reply to `judge-evidence panel`.
pub fn reply(convened: JuryConvened) -> PanelReply {
    PanelReply {
        key: convened.key,
        final_verdict: convened.final_verdict,
        final_confidence: convened.final_confidence,
        degraded: convened.degraded,
        packet: convened.packet,
    }
}

/// A journaled jury, with each juror read from its packet.
pub fn report_jury(panel: JuryConvened) -> ReportJury {
    let packet: Value = serde_json::from_str(&panel.packet).unwrap_or(Value::Null);
    let cascade = &packet["cascade"];
    let stage_1 = cascade["stage_1_small_fish"].as_array().into_iter().flatten().map(|j| ("stage_1", j));
    let tiebreaker = Some(&cascade["stage_2_tiebreaker"]).filter(|j| j.is_object()).map(|j| ("tiebreaker", j));
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let jurors = stage_1
        .chain(tiebreaker)
        .map(|(stage, j)| {
            let requested = text(&j["model_requested"]).or_else(|| text(&j["model"])).unwrap_or_default();
            let reported = text(&j["model_reported"]);
            ReportJuror {
                name: text(&j["name"]).unwrap_or_default(),
                stage: stage.to_owned(),
                family: family(reported.as_deref().unwrap_or(&requested), Table::Gate).map(str::to_owned),
                model_requested: requested,
                model_reported: reported,
                identity_source: text(&j["identity_source"]),
                verdict: text(&j["verdict"]).unwrap_or_default(),
                confidence: j["confidence"].as_u64().map_or(0, |c| c.min(100) as u8),
                latency_ms: j["latency_ms"].as_u64().unwrap_or(0),
                error: text(&j["error"]),
            }
        })
        .collect();
    ReportJury {
        key: panel.key,
        rubric: panel.rubric,
        final_verdict: wire_name(&panel.final_verdict),
        final_confidence: panel.final_confidence,
        degraded: panel.degraded,
        down: panel.down,
        flags: panel.flags,
        jurors,
    }
}
