//! `judged key [rotate] [--json | --pem]`: the witness's public keys, which check its
//! artifacts' signatures (`judge-evidence validate --public-key KEY`) and its attestations
//! (`judge-evidence check --trusted FILE`) anywhere.

use super::print_json;
use crate::{CliError, KeyAction};
use judged_protocol::paths;

/// Print the public keys, after a rotation when asked; the key is created here when
/// judged has not run yet, so it can be handed out first.
pub fn run(action: Option<KeyAction>, json: bool, pem: bool) -> Result<(), CliError> {
    let data_dir = paths::data_dir();
    judged_daemon::private_dir(&data_dir)?;
    let witness = match action {
        Some(KeyAction::Rotate) => judged_daemon::witness::Witness::rotate(&data_dir)?,
        None => judged_daemon::witness::Witness::load_or_create(&data_dir)?,
    };
    if json {
        print_json(&witness.listing());
    } else if pem {
        print!("{}", witness.keys()[0].pem());
    } else {
        println!("{}", witness.keys()[0]);
    }
    Ok(())
}
