//! `trace`: journal a review call's trace record (docs/spec/evidence-protocol.md §5), its provenance
//! derived here: identities and `independence_verified` only from evidence this daemon
//! issued and that still validates.

use super::{Answer, Engine, EngineError};
use crate::store::{JournalEvent, ReviewTraced};
use judged_core::rules::ArtifactKind;
use judged_core::trace::{self, EvidenceFacts};
use judged_protocol::{Reply, TraceArgs, TraceReply, ValidateArgs};

impl Engine {
    pub(super) fn trace(&mut self, args: &TraceArgs) -> Answer {
        let facts = match &args.evidence {
            None => None,
            Some(evidence) => {
                let validate = ValidateArgs {
                    kind: ArtifactKind::Evidence,
                    artifact: evidence.clone(),
                    files: args.files.clone(),
                };
                self.validate(&validate)?;
                Some(EvidenceFacts::of(evidence, args.evidence_path.clone().unwrap_or_default())?)
            }
        };
        let provenance =
            trace::provenance(&args.input, facts.as_ref()).map_err(|e| EngineError::BadRequest(e.to_string()))?;
        let traced = ReviewTraced {
            skill: args.skill.clone(),
            purpose: args.purpose.clone(),
            trace_path: args.trace_path.clone(),
            call_number: args.call_number,
            backend: args.input.backend.clone(),
            status: args.input.status.clone(),
            provenance: provenance.clone(),
        };
        let journal_seq = self.store.journal(&JournalEvent::ReviewTraced(Box::new(traced)))?;
        Ok(Reply::Trace(TraceReply { provenance, journal_seq }))
    }
}
