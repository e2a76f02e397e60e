//! A review asked ahead of the gate (`judged mcp`'s `review`): the jury convened on the
//! work in a project as the gate convenes it, journaled under a key the gate looks up, so
//! that a task completed on the same tree is answered from that verdict exactly as from
//! the gate's own. No new trust: it is the daemon's own jury, shown the same artifact
//! (the task's words and the tree's changes) and told the same author.
//!
//! The key names the tree, not the task's words: a review comes before the host's task
//! event, with whatever words the agent has for the work, and the gate must find it for
//! any task completed on that tree. That loosens nothing: under `panel` the agent writes
//! the task's words too, and the gate's own jury would be shown those. A review asked any
//! other way (a persona, another rubric, one file, a tree that moved while it was read)
//! is journaled under a key the gate never looks up.

use super::policy::{self, Settings};
use super::{HookGate, PANEL_CHANGES_BYTES, digest_of};
use crate::caller::{Caller, NotYours};
use crate::jury::{self, JuryAsk, JuryError, JuryRun};
use crate::store::{AskedBy, JuryConvened, StoreError};
use judged_core::event::SessionId;
use judged_jury::config::JuryConfig;
use judged_jury::packet::FinalVerdict;
use judged_protocol::{ReviewArgs, ReviewCount, ReviewFile};
use std::path::{Path, PathBuf};

/// Why a review or a status cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error("the gate's config cannot be used: {0}; fix that file (a fix takes effect at the next question)")]
    Config(String),
    #[error(transparent)]
    Jury(#[from] JuryError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(
        "no cwd was given, and {} names none judged knows: pass cwd, the project's directory",
        session.as_ref().map_or_else(|| "no session".to_owned(), |id| format!("the log of session {id}"))
    )]
    NoProject { session: Option<SessionId> },
    #[error(
        "the log of session {session} names no model yet, so the jury cannot be told whose work it is; ask \
         again once your session has answered once"
    )]
    NoAuthorYet { session: SessionId },
    /// A directory a served user named, or its session's log records, that is not its own.
    #[error(transparent)]
    NotYours(#[from] NotYours),
}

/// What a review comes to.
pub enum ReviewAsked {
    /// The same review was convened before and its verdict stands: asking a jury again
    /// until one passes would be shopping for a verdict. Change the work to be judged anew.
    Recorded(Box<JuryConvened>, Counting),
    /// A jury to convene (off the engine's thread).
    Jury(Box<JuryRun>, Counting),
}

/// Whether the gate will count a review, as far as is known before its verdict.
pub struct Counting {
    /// Why the gate will not count it whatever it says, when that is so.
    not_counted: Option<String>,
    /// How the gate names the work in its messages.
    label: String,
}

impl Counting {
    /// What the gate makes of `convened`: the answer it would give a task completed on the
    /// reviewed tree.
    pub fn of(&self, convened: &JuryConvened) -> ReviewCount {
        if let Some(why) = &self.not_counted {
            return ReviewCount { counted: false, allows: false, why: why.clone() };
        }
        let (verdict, _) = policy::decide_with_jury(&self.label, convened);
        if convened.degraded || convened.final_verdict == FinalVerdict::Error {
            let why = format!(
                "{}\nThe gate does not count a jury that could not judge: it convenes its own when the task completes.",
                verdict.message
            );
            return ReviewCount { counted: false, allows: false, why };
        }
        let allows = !verdict.blocks();
        let why = if allows {
            format!("{} The gate counts it for a task completed on this tree, until a file changes.", verdict.message)
        } else {
            verdict.message
        };
        ReviewCount { counted: true, allows, why }
    }
}

/// What a review of `tree` in `project` is about, as the key's `work`.
fn tree_work(project: &Path, tree: &str) -> String {
    digest_of(&serde_json::json!(["tree", project, tree]))
}

/// The key the gate finds a review by: the one a review gets when asked as `gate` asks
/// its jury (the gate's rubric, no persona, the author it found) of `tree`.
pub(super) fn counted_key(gate: &JuryAsk, jury: &JuryConfig, tree: &str) -> String {
    let review = JuryAsk {
        rubric: gate.rubric,
        rubric_text: None,
        persona: None,
        project: gate.project.clone(),
        author_model: gate.author_model.clone(),
        source: AskedBy::Review,
    };
    review.key(jury, &tree_work(&gate.project, tree))
}

impl HookGate<'_> {
    /// The project a question is about: the cwd it gives, else the one its session's log
    /// records (a host may start an MCP server elsewhere: Copilot CLI starts a plugin's
    /// in the plugin's directory), the logs read first when that session is new.
    /// A served `caller` is answered only about a directory of its own.
    pub fn project(
        &mut self,
        cwd: Option<&str>,
        session: Option<&SessionId>,
        caller: Caller,
    ) -> Result<String, AskError> {
        if let Some(cwd) = cwd {
            return Ok(caller.directory("`cwd`", cwd)?);
        }
        if session.is_some_and(|id| self.store.file_by_session(id.as_str()).is_none()) {
            self.ingest.catch_up_all(self.store)?;
        }
        let recorded = session.and_then(|id| self.store.file_by_session(id.as_str())).and_then(|f| f.cwd.as_deref());
        let recorded = recorded.ok_or_else(|| AskError::NoProject { session: session.cloned() })?;
        Ok(caller.directory("the cwd your session's log records", recorded)?)
    }

    /// The review `args` asks for of `project` (its [`HookGate::project`]): a recorded
    /// verdict, or a jury to convene.
    pub fn review(&mut self, project: PathBuf, args: &ReviewArgs) -> Result<ReviewAsked, AskError> {
        let settings = self
            .config
            .settings_for(Some(&project), self.projects)
            .map_err(|error| AskError::Config(error.summary()))?;
        let (jury, from) = self.juries.jury_for(&project)?;
        let author_model = self.author_model(args.session_id.as_ref())?;
        let knows_the_author = author_model.is_some();
        // A witnessed session whose log names no model yet is one the host has not written
        // its answer to yet (the tool call runs before the record asking for it is on
        // disk): the gate will read the model once it is, and key the review by it.
        if author_model.is_none()
            && let Some(session) =
                args.session_id.as_ref().filter(|id| self.store.file_by_session(id.as_str()).is_some())
        {
            return Err(AskError::NoAuthorYet { session: session.clone() });
        }
        // The gate's words for a task, so that the artifact is the one its jury would see.
        let label = format!("task \"{}\"", args.task);
        let work = args.description.as_ref().map_or_else(|| args.task.clone(), |d| format!("{}\n{d}", args.task));
        let ask = JuryAsk {
            rubric: args.rubric.as_deref().unwrap_or(&settings.panel_rubric),
            rubric_text: None,
            persona: args.persona.as_deref(),
            project: project.clone(),
            author_model,
            source: AskedBy::Review,
        };
        let gate_ask = JuryAsk { rubric: &settings.panel_rubric, persona: None, ..ask.clone() };
        let mut not_counted = uncounted_as_asked(&settings, args.session_id.as_ref(), knows_the_author);
        let tree = if args.file.is_none() { self.trees.digest(&project) } else { None };
        // The tree whose changes the jury is shown, as git names it, when they are.
        let mut git_tree = None;
        let (key, artifact) = match (&args.file, &tree) {
            (Some(file), _) => {
                not_counted.get_or_insert_with(|| {
                    "a review of one file is not counted: the gate judges the working tree's changes; review \
                     without `file` for the gate to count it"
                        .to_owned()
                });
                let artifact = file_artifact(&label, &work, file);
                (ask.key(&jury, &digest_of(&artifact)), artifact)
            }
            (None, Some(tree)) => {
                let key = ask.key(&jury, &tree_work(&project, tree));
                if key != counted_key(&gate_ask, &jury, tree) {
                    not_counted.get_or_insert_with(|| {
                        format!(
                            "it was asked another way than the gate asks its jury (rubric {}, no persona): ask \
                             with the gate's rubric and no persona for it to count",
                            settings.panel_rubric
                        )
                    });
                }
                let shown = self.trees.shown(&project, PANEL_CHANGES_BYTES, tree, None);
                let artifact = policy::jury_artifact(&label, &work, shown.changes.as_ref());
                if shown.held_still {
                    // Only a review the gate counts names the tree it judged: one asked
                    // another way (another rubric, a persona, no author) covers no commit.
                    if not_counted.is_none() {
                        git_tree = shown.git_tree;
                    }
                    (key, artifact)
                } else {
                    // Keyed by what the jury saw, so that the gate finds it for neither tree.
                    not_counted = Some(
                        "the working tree changed while its changes were read: review again once it is still".into(),
                    );
                    (ask.key(&jury, &digest_of(&artifact)), artifact)
                }
            }
            (None, None) => {
                not_counted.get_or_insert_with(|| {
                    "the project is not a git repository: the gate cannot tell a later tree from the one reviewed, \
                     so it convenes its own jury when the task completes"
                        .to_owned()
                });
                let artifact = policy::jury_artifact(&label, &work, None);
                (ask.key(&jury, &digest_of(&artifact)), artifact)
            }
        };
        let counting = Counting { not_counted, label };
        if let Some(recorded) = jury::reusable(self.store, &key)? {
            return Ok(ReviewAsked::Recorded(Box::new(recorded), counting));
        }
        let run = JuryRun::new(&jury, &from, ask, artifact, key)?.judging_tree(git_tree);
        Ok(ReviewAsked::Jury(Box::new(run), counting))
    }
}

/// Why the gate will not count a review, as far as the asking alone tells: a gate that
/// does not ask the jury, or a review that does not know whose work it is.
/// A review counts only told its author's model, read from a session judged witnesses:
/// any other id would leave the tiebreaker free to be of the author's family.
fn uncounted_as_asked(settings: &Settings, session: Option<&SessionId>, knows_the_author: bool) -> Option<String> {
    if !settings.asks_the_jury() {
        return Some(format!(
            "the gate's policy here is `{}` (from {}): it does not ask the jury, so it does not count reviews; \
             set policy = \"panel\" or \"evidence_or_panel\" in [gate] for it to",
            settings.policy_name(),
            settings.sources.join(" < ")
        ));
    }
    match (session, knows_the_author) {
        (_, true) => None,
        (None, false) => Some(
            "the review does not know whose work it is (no session_id was given, and the host did not say): the \
             gate reads the author's model from the completed task's session and counts only a review told the \
             same author; pass your session's id as session_id for it to count"
                .to_owned(),
        ),
        (Some(session), false) => Some(format!(
            "the review does not know whose work it is: judged witnesses no session `{session}`, so it could not \
             read the author's model; pass your own session's id (as your host names it) as session_id for it to \
             count"
        )),
    }
}

/// The artifact of a review of one file: the work's words and the file, cut as the
/// tree's changes are. The client sent its text: the daemon reads no file a caller names.
fn file_artifact(label: &str, work: &str, file: &ReviewFile) -> String {
    let bytes = file.text.as_bytes();
    let shown = bytes.len().min(PANEL_CHANGES_BYTES);
    let text = String::from_utf8_lossy(&bytes[..shown]);
    let cut = bytes.len() - shown;
    let note = if cut > 0 { format!(", cut: {cut} more bytes not shown") } else { String::new() };
    format!("{label}\n\n{work}\n\nThe file {}{note}:\n{text}", file.name)
}
