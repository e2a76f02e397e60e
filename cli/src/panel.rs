//! `judge-evidence panel`: convene the cross-family jury on an artifact and print its
//! packet. The daemon convenes it and journals every juror's run; in direct mode this
//! process does, from the user's `[jury]`, and nothing is recorded.

use judged_io::files;
use judged_jury::config::for_project;
use judged_jury::convene::{self, Options, Progress};
use judged_jury::rubric::Rubric;
use judged_protocol::config::{ConfigFile, NoJury};
use judged_protocol::{JuryProgress, JuryStep};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

/// What `panel` was asked.
pub struct PanelRequest {
    pub rubric: String,
    pub rubric_text: Option<String>,
    pub persona: Option<String>,
    pub artifact: String,
    pub cwd: String,
    pub author_model: Option<String>,
}

/// The jury's answer, as printed.
pub struct PanelAnswer {
    /// The packet, key order as the jury wrote it.
    pub packet: String,
}

/// Why direct mode cannot convene a jury.
#[derive(Debug, thiserror::Error)]
pub enum DirectPanelError {
    #[error(transparent)]
    Config(#[from] judged_protocol::config::ConfigError),
    #[error(transparent)]
    Jury(#[from] judged_jury::config::FileError),
    #[error(transparent)]
    NoJury(#[from] NoJury),
    #[error("{}: {source}", path.display())]
    Invalid { path: PathBuf, source: judged_jury::config::ConfigError },
    #[error(transparent)]
    Rubric(#[from] judged_jury::rubric::RubricError),
}

/// Convene the jury in this process, from the user's `config.toml` read as the daemon
/// reads it (the same schema, and the same trust of a project's own `[jury]`).
pub fn convene_here(request: &PanelRequest) -> Result<PanelAnswer, DirectPanelError> {
    let path = judged_protocol::paths::config_path();
    let user = ConfigFile::load(&path)?;
    let cwd = PathBuf::from(files::resolve(&request.cwd));
    let trust = user.gate.project_trust(user.is_witness());
    let (config, from) = for_project(user.jury.as_ref().map(|j| (j, path.as_path())), trust.jury, &cwd)?
        .ok_or(NoJury { config: path, witness: user.is_witness(), not_applied: None })?;
    let jury = config.validate().map_err(|source| DirectPanelError::Invalid { path: from, source })?;
    let rubric = Rubric::resolve(&request.rubric, request.rubric_text.as_deref())?;
    let asked = convene::Request {
        rubric: &rubric,
        persona: request.persona.as_deref(),
        artifact: &request.artifact,
        project: &cwd,
        author_model: request.author_model.as_deref(),
    };
    let started = Instant::now();
    let deadline_ms = jury.deadline.as_millis() as u64;
    let show = |step: &Progress<'_>| {
        let step = JuryStep::from(step);
        show_progress(&JuryProgress { elapsed_ms: started.elapsed().as_millis() as u64, deadline_ms, step });
    };
    let packet = convene::convene(&jury, &asked, &Options::default(), &show);
    Ok(PanelAnswer { packet: serde_json::to_string(&packet).expect("a packet serializes") })
}

/// Whether progress is shown: only to a person at a terminal.
pub fn wants_progress() -> bool {
    std::io::stderr().is_terminal()
}

/// One line of progress on stderr, when a person is watching.
pub fn show_progress(progress: &JuryProgress) {
    if !wants_progress() {
        return;
    }
    eprintln!("judge-evidence: {progress}");
}

/// Indent compact JSON two spaces a level, keeping its key order (a `Value` would sort
/// the keys, and the packet's order is the reference's).
pub fn indent(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() * 2);
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut chars = compact.chars().peekable();
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    };
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '{' | '[' => {
                out.push(c);
                let close = if c == '{' { '}' } else { ']' };
                if chars.peek() == Some(&close) {
                    out.push(chars.next().unwrap_or(close));
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::indent;

    #[test]
    fn indenting_keeps_key_order_and_strings() {
        let compact = r#"{"z":1,"a":{"s":"x, {y}: \"q\"","e":[],"o":{}},"l":[1,2]}"#;
        let shown = indent(compact);
        assert_eq!(
            shown,
            "{\n  \"z\": 1,\n  \"a\": {\n    \"s\": \"x, {y}: \\\"q\\\"\",\n    \"e\": [],\n    \"o\": {}\n  },\n  \"l\": [\n    1,\n    2\n  ]\n}"
        );
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, serde_json::from_str::<serde_json::Value>(compact).unwrap());
    }
}
