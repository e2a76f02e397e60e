//! `panel`: convene the jury on an artifact (the run itself happens off the engine's
//! thread; see [`super::actor`]).

use super::{AfterJury, Engine, EngineError, Handled, JuryWork};
use crate::caller::Caller;
use crate::jury::{JuryAsk, JuryRun};
use crate::store::AskedBy;
use judged_core::chain;
use judged_protocol::PanelArgs;
use std::path::PathBuf;

impl Engine {
    /// The jury `args` asks for, to convene; or why it cannot be.
    pub(super) fn panel(&mut self, args: PanelArgs, caller: Caller) -> Handled {
        // The jury of the config in force now.
        self.follow_config(false);
        match self.panel_run(&args, caller) {
            Ok(run) => Handled::Jury(JuryWork { run, then: AfterJury::Panel { cwd: args.cwd } }),
            Err(error) => Handled::Answer(Err(error)),
        }
    }

    /// The jury run `args` asks for, checked.
    fn panel_run(&self, args: &PanelArgs, caller: Caller) -> Result<JuryRun, EngineError> {
        let project = PathBuf::from(caller.directory("`cwd`", &args.cwd)?);
        let (jury, from) = self.jury_source().jury_for(&project).map_err(|e| EngineError::BadRequest(e.to_string()))?;
        let ask = JuryAsk {
            rubric: &args.rubric,
            rubric_text: args.rubric_text.as_deref(),
            persona: args.persona.as_deref(),
            project,
            author_model: args.author_model.clone(),
            source: AskedBy::Cli,
        };
        let key = ask.key(&jury, &chain::to_hex(&chain::sha256(args.artifact.as_bytes())));
        JuryRun::new(&jury, &from, ask, args.artifact.clone(), key).map_err(|e| EngineError::BadRequest(e.to_string()))
    }
}
