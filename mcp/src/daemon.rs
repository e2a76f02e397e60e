//! Asking the daemon: one request over the socket, starting the daemon first when its
//! socket does not answer (as `judge-evidence` and `judge-hook` do), off the async
//! runtime (the client is blocking), with a jury's progress frames handed on.

use judged_core::rules::EvidenceError;
use judged_protocol::autostart::{self, AutoStartError};
use judged_protocol::{ClientError, JuryProgress, Request, paths};
use serde::de::DeserializeOwned;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a frame may take: a jury reports each juror's start and end, and its whole
/// cascade is bounded by the daemon's `deadline_seconds`; this only catches a daemon that
/// stopped answering.
const FRAME_WAIT: Duration = Duration::from_secs(15 * 60);

/// How long to wait for a daemon this server started (its catch-up of the logs).
const AUTOSTART_WAIT: Duration = Duration::from_secs(20);

/// How long to ask again while the daemon says the host's next write can change its
/// answer (a session whose log is not on disk yet, or names no model yet: a host writes
/// the record of a call a moment after the call may start), and how often.
const HOST_WRITE_WAIT: Duration = Duration::from_secs(10);
const ASK_AGAIN_EVERY: Duration = Duration::from_millis(200);

/// Why the daemon gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error("{0}")]
    Client(#[from] ClientError),
    #[error("judged is not running and was not started ({0}); start it with `judged start`")]
    NotStarted(AutoStartError),
    #[error("the request to judged was lost: {0}")]
    Lost(tokio::task::JoinError),
    /// A tool's cwd outside the project the server serves.
    #[error(
        "cwd `{given}` is outside the project this judged mcp serves ({served}): its tools work on that \
         project's files only; leave cwd out, or name a directory inside it"
    )]
    OutsideProject {
        /// The cwd as given.
        given: String,
        /// The project served.
        served: String,
    },
    /// The project, or a cwd in it, could not be opened.
    #[error(transparent)]
    Project(#[from] judged_io::files::ConfineError),
    /// A project that is the home directory, or holds it: every file of the user's
    /// (its keys among them) would be one a tool reads or writes.
    #[error(
        "judged mcp serves a project, and the one it was given is {project}, which holds your home directory: its \
         tools would read and write any file of yours, your keys among them; start your host in the project's \
         directory, or pass cwd, a directory inside it"
    )]
    HomeAsProject {
        /// The project it was given.
        project: String,
    },
}

/// Ask the daemon `request`; each progress frame goes to `progress` meanwhile.
pub async fn ask<T: DeserializeOwned + Send + 'static>(
    request: Request,
    progress: Option<mpsc::UnboundedSender<JuryProgress>>,
) -> Result<T, AskError> {
    tokio::task::spawn_blocking(move || {
        ask_blocking(request, |step: JuryProgress| {
            if let Some(progress) = &progress {
                let _ = progress.send(step);
            }
        })
    })
    .await
    .map_err(AskError::Lost)?
}

/// [`ask`] on this thread, each progress frame handed to `tell`.
pub fn ask_blocking<T: DeserializeOwned>(request: Request, tell: impl Fn(JuryProgress)) -> Result<T, AskError> {
    let socket = paths::socket_path();
    let deadline = std::time::Instant::now() + HOST_WRITE_WAIT;
    loop {
        let answered = match judged_protocol::call_with_progress(&socket, request.clone(), FRAME_WAIT, &tell) {
            Err(ClientError::Unreachable(_)) => {
                autostart::start_judged(AUTOSTART_WAIT).map_err(AskError::NotStarted)?;
                judged_protocol::call_with_progress(&socket, request.clone(), FRAME_WAIT, &tell)
            }
            answered => answered,
        };
        match answered {
            // Not an evidence decision (those are the caller's to ask again): a session
            // whose log is not on disk yet, or names no model yet.
            Err(ClientError::Refused(body))
                if body.exit_code.is_none() && body.log_state.is_some() && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(ASK_AGAIN_EVERY);
            }
            answered => return Ok(answered?),
        }
    }
}

/// One evidence request, its refusal as the evidence decision it carries (exit code and
/// all), as `judge-evidence` reads it.
pub fn evidence<T: DeserializeOwned>(request: Request) -> judged_core::rules::Result<T> {
    ask_blocking(request, |_| {}).map_err(|error| match error {
        AskError::Client(ClientError::Refused(body)) if let Some(code) = body.exit_code => {
            EvidenceError::from_wire(code, body.message, body.log_state)
        }
        other => EvidenceError::evidence(other.to_string()),
    })
}
