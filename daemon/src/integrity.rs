//! What the daemon's integrity findings mean for evidence resting on a log: asked by
//! evidence requests and by the review gate alike.

use crate::store::{FileState, Finding, Store, StoreError};
use judged_core::rules::EvidenceError;

/// The refusal an integrity finding about `file` makes of evidence whose reviewed window
/// starts at byte `window_start`, if one does: an in-place write anywhere (the log was
/// open to rewriting, whatever it holds now), or a chain break from the window's start
/// on.
pub fn undoing_finding(
    store: &Store,
    file: &FileState,
    window_start: u64,
) -> Result<Option<EvidenceError>, StoreError> {
    if file.findings == 0 {
        return Ok(None);
    }
    for (at, found) in store.findings_of(file.id)? {
        let message = match &found.finding {
            Finding::InPlaceWrite { within_bytes, .. } => format!(
                "session log {} was written in place (an in-place write within its first {within_bytes} bytes, recorded by judged at {at}): \
                 host logs only grow, so its history cannot be trusted; review again in a new session",
                file.path
            ),
            Finding::ParentChainBreak { .. } if found.offset >= window_start => format!(
                "session log {} has an integrity finding inside the reviewed window (parentId chain break at byte {}, line {}, recorded by judged at {at}); \
                 review again in a new session",
                file.path, found.offset, found.seq
            ),
            Finding::ParentChainBreak { .. } => continue,
        };
        return Ok(Some(EvidenceError::evidence(message)));
    }
    Ok(None)
}
