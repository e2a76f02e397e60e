//! Whether the project's remotes carry the attestations: a clone sees other machines'
//! notes under `refs/notes/judged` only when its remote's fetch refspecs cover them
//! (docs/attestations.md, "Carrying the notes"). Only in a git repository with a remote.

use super::{Check, Status, check, ok};
use std::path::Path;
use std::process::Command;

/// The notes ref attestations are kept under.
const NOTES_REF: &str = "refs/notes/judged";
/// The fetch refspec the docs give: every notes ref of the remote, beside one's own.
const FETCH_REFSPEC: &str = "+refs/notes/*:refs/notes/remotes/{remote}/*";

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git").arg("-C").arg(dir).args(args).env("GIT_OPTIONAL_LOCKS", "0").output().ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Whether a fetch refspec's source covers `refs/notes/judged` (exactly, or by a glob).
fn covers(refspec: &str) -> bool {
    let source = refspec.trim_start_matches('+').split(':').next().unwrap_or_default();
    match source.split_once('*') {
        Some((prefix, suffix)) => {
            NOTES_REF.len() >= prefix.len() + suffix.len()
                && NOTES_REF.starts_with(prefix)
                && NOTES_REF.ends_with(suffix)
        }
        None => source == NOTES_REF,
    }
}

/// One check per remote of the repository holding `cwd`; none outside a repository.
pub fn checks(checks: &mut Vec<Check>, cwd: &Path) {
    if git(cwd, &["rev-parse", "--git-dir"]).is_none() {
        return;
    }
    let remotes = git(cwd, &["remote"]).unwrap_or_default();
    for remote in remotes.lines().filter(|r| !r.is_empty()) {
        let name = format!("notes from {remote}");
        let key = format!("remote.{remote}.fetch");
        let fetched = git(cwd, &["config", "--get-all", &key]).unwrap_or_default();
        if fetched.lines().any(covers) {
            checks
                .push(ok(name, format!("{key} carries {NOTES_REF}, so attestations made elsewhere reach this clone")));
            continue;
        }
        let refspec = FETCH_REFSPEC.replace("{remote}", remote);
        checks.push(check(
            name,
            Status::Warn,
            format!(
                "{key} does not fetch {NOTES_REF}: attestations other machines pushed do not reach this clone, and \
                 pushing this clone's notes will be refused once {remote} holds notes it has not seen"
            ),
            Some(format!(
                "git config --add {key} '{refspec}'\nafter attesting: git fetch {remote} && git notes --ref=judged merge \
                 -s cat_sort_uniq refs/notes/remotes/{remote}/judged; git push {remote} HEAD {NOTES_REF}"
            )),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::covers;

    #[test]
    fn a_refspec_covers_the_notes_exactly_or_by_a_glob() {
        for refspec in
            ["+refs/notes/*:refs/notes/remotes/origin/*", "refs/notes/judged:refs/notes/judged", "+refs/*:refs/*"]
        {
            assert!(covers(refspec), "{refspec}");
        }
        for refspec in
            ["+refs/heads/*:refs/remotes/origin/*", "refs/notes/commits:refs/notes/commits", "refs/notes/j*x:y"]
        {
            assert!(!covers(refspec), "{refspec}");
        }
    }
}
