//! The attestation verifiers judged did not write: Python's `securesystemslib` (DSSE,
//! Ed25519) and `in-toto-attestation` (the Statement), installed from PyPI at the versions
//! `tests/attest/requirements.txt` pins into a venv under `<workspace>/.cache/`, once.
//! Without them (no python3, no PyPI) the tests that need them print `SKIP:` and pass,
//! unless `CI` is set ([`crate::hosts`]' rule).

use crate::hosts::available;
use crate::workspace;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The venv's python, with the verifiers installed; `None` after a `SKIP:` line.
pub fn python() -> Option<PathBuf> {
    static INSTALLED: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    available(INSTALLED.get_or_init(install), "the attestation verifiers (securesystemslib, in-toto-attestation)")
}

/// `tests/attest/verify.py`.
pub fn verify_script() -> PathBuf {
    workspace().join("tests/attest/verify.py")
}

/// The venv, made and filled when it does not hold the pinned set yet.
fn install() -> Result<PathBuf, String> {
    let requirements = workspace().join("tests/attest/requirements.txt");
    let pinned = std::fs::read_to_string(&requirements).map_err(|e| format!("{}: {e}", requirements.display()))?;
    let venv = std::env::var_os("JUDGED_VERIFIERS_CACHE")
        .map_or_else(|| workspace().join(".cache/attest-verifiers"), PathBuf::from);
    let python = venv.join("bin/python");
    // What was installed, so a changed pin installs again.
    let stamp = venv.join("installed-requirements.txt");
    if python.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s == pinned) {
        return Ok(python);
    }
    let mut said = std::io::stderr();
    let _ = writeln!(said, "installing the attestation verifiers ({}) into {}", requirements.display(), venv.display());
    run(Command::new("python3").args(["-m", "venv", "--clear"]).arg(&venv), "python3 -m venv")?;
    // pip's own lines say what it downloads; they go to this process's stderr as they come.
    let mut pip = Command::new(&python);
    pip.args(["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--progress-bar", "off", "-r"])
        .arg(&requirements);
    run(&mut pip, "pip install (is PyPI reachable?)")?;
    std::fs::write(&stamp, pinned).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(python)
}

/// Run `command` with its output on this process's stderr; an error naming `what`.
fn run(command: &mut Command, what: &str) -> Result<(), String> {
    let status = command
        .stdin(Stdio::null())
        .stdout(std::io::stderr())
        .stderr(std::io::stderr())
        .status()
        .map_err(|e| format!("{what}: cannot run: {e}"))?;
    status.success().then_some(()).ok_or_else(|| format!("{what} failed ({status})"))
}

/// `verify.py PEM NOTE` with the venv's python: its exit code, stdout and stderr.
pub fn verify(python: &Path, pem: &Path, note: &Path) -> std::process::Output {
    Command::new(python).arg(verify_script()).arg(pem).arg(note).output().expect("the venv's python runs")
}
