//! `judged completions`: the shell completions of `judged`'s own command line.

use crate::{Cli, CliError};
use clap::CommandFactory;

pub fn run(shell: clap_complete::Shell) -> Result<(), CliError> {
    // Into a buffer first: `| head` must not make it panic on a closed pipe.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "judged", &mut script);
    let _ = std::io::Write::write_all(&mut std::io::stdout(), &script);
    Ok(())
}
