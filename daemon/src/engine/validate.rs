//! `validate`: re-check a challenge or evidence this daemon issued against its log as
//! witnessed now.

use super::{Answer, Engine, bad_request};
use judged_core::rules;
use judged_io::files::FsEnv;
use judged_protocol::{Reply, ValidateArgs, Validation};
use std::collections::HashMap;

impl Engine {
    pub(super) fn validate(&mut self, args: &ValidateArgs) -> Answer {
        self.check_witnessed(&args.artifact, args.kind)?;
        let file = self.log_for(&args.artifact)?;
        // Evidence of a review recorded in another host's log rests on that log too.
        let reviewer = match rules::reviewer_log(&args.artifact) {
            Some((path, host)) => {
                let path = path.to_owned();
                Some(self.witnessed_log(&path, host)?)
            }
            None => None,
        };
        let log = self.logs.get(file.id);
        let reviewer_log = reviewer.as_ref().map(|f| self.logs.get(f.id));
        let sent = args
            .files
            .iter()
            .map(|(path, hex)| match hex::decode(hex) {
                Ok(bytes) => Ok((path.clone(), bytes)),
                Err(_) => Err(bad_request(format!("`files.{path}` must be the file's bytes in hex"))),
            })
            .collect::<Result<HashMap<String, Vec<u8>>, _>>()?;
        let env = FsEnv::sent_only(sent);
        let validated = args.kind.validate(&args.artifact, log, reviewer_log, &env)?;
        self.check_findings(&file, validated.window_start)?;
        if let Some(reviewer) = &reviewer {
            self.check_findings(reviewer, 0)?;
        }
        Ok(Reply::Validation(Validation { witness_checked: true, derived_reviewed_at: validated.derived_reviewed_at }))
    }
}
