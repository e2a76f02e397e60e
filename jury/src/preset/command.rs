//! A `command` juror: any program the user names, run in the project, which says in its
//! answer which model answered.

use std::path::PathBuf;

use super::{Invocation, Invoked, JurorCli, PresetError, RunRecord};
use crate::identity::{Identity, IdentityError, IdentitySource};

/// Any program given by `command`.
#[derive(Debug)]
pub(super) struct Command;

impl JurorCli for Command {
    fn invoke(&self, inv: &mut Invocation) -> Result<Invoked, PresetError> {
        // Validation guarantees a non-empty command for this preset.
        let argv: Vec<String> =
            inv.juror.config.command.iter().flatten().map(|part| part.replace("{model}", inv.model)).collect();
        let (program, rest) = argv.split_first().map_or((String::new(), &[][..]), |(p, r)| (p.clone(), r));
        Ok(Invoked { program: PathBuf::from(program), args: rest.to_vec(), record: Box::new(Command) })
    }

    /// A program of whoever configured it, unlike a CLI, runs in the project.
    fn runs_in_project(&self) -> bool {
        true
    }
}

impl RunRecord for Command {
    fn identity(&self, _stdout: &str, _stderr: &str, answer_model: Option<&str>) -> Result<Identity, IdentityError> {
        identity(answer_model)
    }
}

/// A `command` juror: the `model` key of its verdict, the only record it has.
fn identity(answer_model: Option<&str>) -> Result<Identity, IdentityError> {
    answer_model
        .map(|m| Identity { model: m.to_owned(), source: IdentitySource::CommandVerdict })
        .ok_or(IdentityError::NoRecord("the command's verdict has no \"model\" key"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_must_say_which_model_answered() {
        assert_eq!(identity(Some("gpt-5.4")).map(|i| i.source).ok(), Some(IdentitySource::CommandVerdict));
        assert!(matches!(identity(None), Err(IdentityError::NoRecord(_))));
    }
}
