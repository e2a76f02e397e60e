//! `judged report`: the gate's decisions since a time, as text or JSON, and as HTML on
//! request (the rendering is [`render`]'s).

mod render;

use super::{call, print_json};
use crate::CliError;
use judged_protocol::Request;
use std::path::PathBuf;

pub fn run(since: chrono::DateTime<chrono::Utc>, html: Option<PathBuf>, json: bool) -> Result<(), CliError> {
    let data: judged_protocol::ReportData = call(Request::Report(judged_protocol::ReportArgs { since: Some(since) }))?;
    if json {
        print_json(&data);
    } else {
        print!("{}", render::text(&data));
    }
    if let Some(path) = html {
        std::fs::write(&path, render::html(&data)).map_err(|source| CliError::Write { path: path.clone(), source })?;
        eprintln!("judged: wrote {}", path.display());
    }
    Ok(())
}
