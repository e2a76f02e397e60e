//! `validate`: re-check a challenge or evidence this daemon issued against its log as
//! witnessed now.

use super::{Answer, Engine, bad_request};
use judged_core::files::FsEnv;
use judged_protocol::{Reply, ValidateArgs, Validation};
use std::collections::HashMap;

impl Engine {
    pub(super) fn validate(&mut self, args: &ValidateArgs) -> Answer {
        self.check_witnessed(&args.artifact, args.kind)?;
        let file = self.log_for(&args.artifact)?;
        let log = self.logs.get(file.id);
        let sent = args
            .files
            .iter()
            .map(|(path, hex)| match hex::decode(hex) {
                Ok(bytes) => Ok((path.clone(), bytes)),
                Err(_) => Err(bad_request(format!("`files.{path}` must be the file's bytes in hex"))),
            })
            .collect::<Result<HashMap<String, Vec<u8>>, _>>()?;
        let env = FsEnv::with_sent_files(sent);
        let window_start = args.kind.validate(&args.artifact, log, &env)?;
        self.check_findings(&file, window_start)?;
        Ok(Reply::Validation(Validation { witness_checked: true }))
    }
}
