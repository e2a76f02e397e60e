//! `judge-evidence attest [COMMIT]`: ask judged to sign that a commit holds a tree a
//! cross-family review covered, and append the envelope to the commit's note under
//! `refs/notes/judged` (one JSON line per envelope, every review's kept). The daemon
//! signs (the key never leaves it); this process writes the note, as the user.

use crate::git::{self, GitError};
use judged_io::worktree::{self, NOTES_REF, NoteError};
use judged_protocol::autostart::AutoStartError;
use judged_protocol::{AttestRefusal, AttestReply, Attestation, ClientError, Request};
use serde_json::json;
use std::process::ExitCode;
use std::time::Duration;

/// `attest`'s arguments.
#[derive(clap::Args)]
pub struct AttestCmd {
    /// The commit to attest (any name git takes for one).
    #[arg(default_value = "HEAD")]
    commit: String,
    /// Print one JSON object instead of a line of text.
    #[arg(long)]
    json: bool,
}

/// Why a commit was not attested.
#[derive(Debug, thiserror::Error)]
pub enum AttestError {
    /// The name given is no commit here.
    #[error("`{name}` names no commit of the repository in {}: {source}", dir.display())]
    NoCommit { name: String, dir: std::path::PathBuf, source: GitError },
    /// `--mode direct`: only the daemon holds the key.
    #[error(
        "attest needs judged: only its witness holds the key that signs an attestation (--mode direct cannot \
         attest); run it with judged running"
    )]
    Direct,
    /// No daemon answers, and none could be started.
    #[error("judged is not running ({0}); start it with `judged start`, then attest again")]
    NotRunning(String),
    /// `judged start` itself failed.
    #[error("{0}; fix that, then attest again")]
    NotStarted(&'static AutoStartError),
    /// The daemon was reached, and the exchange failed.
    #[error("judged: {0}")]
    Daemon(String),
    /// The working directory is gone.
    #[error("no working directory: {0}")]
    NoDirectory(std::io::Error),
    /// judged answered that the commit gets no attestation.
    #[error("no attestation for commit {commit}: {refusal}")]
    Refused { commit: String, refusal: Box<AttestRefusal> },
    /// The envelope was signed, and the note could not be written.
    #[error(
        "judged attested commit {commit}, but its note could not be written: {source}; attest again once that is fixed (the same envelope comes back)"
    )]
    Note { commit: String, source: NoteError },
}

impl AttestError {
    /// The exit code (docs/spec/attestation.md): a refusal's own, else 2.
    fn code(&self) -> u8 {
        match self {
            AttestError::Refused { refusal, .. } => refusal.exit_code(),
            _ => 2,
        }
    }
}

/// What was attested, and whether the note gained a line.
struct Attested {
    attestation: Attestation,
    appended: bool,
}

/// Run `attest`, printing what was attested or why not.
pub fn main(mode: crate::Mode, cmd: &AttestCmd) -> ExitCode {
    match attest(mode, cmd) {
        Ok(done) => {
            println!("{}", if cmd.json { shown_json(&done) } else { shown(&done) });
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("judge-evidence attest: {error}");
            ExitCode::from(error.code())
        }
    }
}

fn attest(mode: crate::Mode, cmd: &AttestCmd) -> Result<Attested, AttestError> {
    if mode == crate::Mode::Direct {
        return Err(AttestError::Direct);
    }
    let dir = std::env::current_dir().map_err(AttestError::NoDirectory)?;
    let named = format!("{}^{{commit}}", cmd.commit);
    let commit = git::text(&dir, &["rev-parse", "--verify", "--end-of-options", &named])
        .map_err(|source| AttestError::NoCommit { name: cmd.commit.clone(), dir: dir.clone(), source })?;
    // The commit's object goes with its id: the daemon checks one against the other and
    // reads nothing out of the repository.
    let commit_object = git::run(&dir, &["cat-file", "commit", &commit], None)
        .map_err(|source| AttestError::NoCommit { name: cmd.commit.clone(), dir: dir.clone(), source })?;
    let args = judged_protocol::AttestArgs { cwd: dir.display().to_string(), commit: commit.clone(), commit_object };
    let socket = judged_protocol::paths::socket_path();
    let ask = || judged_protocol::call::<AttestReply>(&socket, Request::Attest(args.clone()), Duration::from_secs(120));
    let reply = match ask() {
        // No daemon: start one, as every judge-evidence command does, then ask it.
        Err(ClientError::Unreachable(_)) if crate::autostarted().is_ok() => ask(),
        answer => answer,
    };
    let attestation = match reply {
        Err(ClientError::Unreachable(socket)) => {
            return Err(match crate::autostarted().err() {
                Some(failed @ AutoStartError::Failed { .. }) => AttestError::NotStarted(failed),
                Some(why) => AttestError::NotRunning(why.to_string()),
                None => AttestError::NotRunning(format!("no socket answers at {socket}")),
            });
        }
        Err(error) => return Err(AttestError::Daemon(error.to_string())),
        Ok(reply) => reply,
    };
    let attestation = match attestation {
        AttestReply::Attested(attestation) => *attestation,
        AttestReply::Refused(refusal) => return Err(AttestError::Refused { commit, refusal: Box::new(refusal) }),
    };
    let appended = worktree::append_note(&dir, &attestation.commit, &attestation.envelope.line())
        .map_err(|source| AttestError::Note { commit, source })?;
    Ok(Attested { attestation, appended })
}

fn shown(done: &Attested) -> String {
    let a = &done.attestation;
    let p = &a.statement.predicate;
    let note = if done.appended {
        format!("note appended to {NOTES_REF}")
    } else {
        format!("the note in {NOTES_REF} holds it already")
    };
    format!(
        "attested commit {} (tree {}): {}; signed by judged key {}; {note}",
        a.commit,
        a.tree,
        p.summary(),
        p.witness_key_id
    )
}

fn shown_json(done: &Attested) -> String {
    let a = &done.attestation;
    json!({
        "commit": a.commit,
        "tree": a.tree,
        "notes_ref": NOTES_REF,
        "appended": done.appended,
        "statement": a.statement,
        "envelope": a.envelope,
    })
    .to_string()
}
