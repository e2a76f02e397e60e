//! One file per `judged` subcommand that talks to the daemon or writes a host's files:
//! each asks, and formats what it prints.

pub mod completions;
pub mod decisions;
pub mod install_hooks;
pub mod key;
pub mod prune;
pub mod rebuild;
pub mod report;
pub mod sessions;
pub mod start;
pub mod status;
pub mod stop;
pub mod uninstall_hooks;
pub mod verify_log;

use judged_protocol::{ClientError, Request, paths};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::time::Duration;

fn call<T: DeserializeOwned>(request: Request) -> Result<T, ClientError> {
    judged_protocol::call(&paths::socket_path(), request, Duration::from_secs(30))
}

/// As [`call`], for a request whose work grows with the store (a prune of a large one).
fn call_long<T: DeserializeOwned>(request: Request) -> Result<T, ClientError> {
    judged_protocol::call(&paths::socket_path(), request, Duration::from_secs(3600))
}

pub(crate) fn print_json<T: Serialize>(value: &T) {
    println!("{}", serde_json::to_string(value).expect("a reply serializes"));
}

fn shown<T: std::fmt::Display>(value: &Option<T>) -> String {
    value.as_ref().map_or_else(|| "-".to_owned(), T::to_string)
}
