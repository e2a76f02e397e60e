//! Evidence that travels with the code (issue 34), with real git and a real daemon: an
//! agent's clone of a bare `origin` makes a commit reviewed by a real review round (a
//! live copy of a real Copilot CLI log, [`judged_tests::live`]), attests it into
//! `refs/notes/judged`, and pushes the commit and the notes; a fresh clone (the CI)
//! fetches both and checks the range with the witness's public key. Then each way a
//! range must fail, each naming the commit and the reason.

use judged_tests::Daemon;
use judged_tests::live::{Live, Mode, Run, p};
use serde_json::Value;
use std::fs;
use std::path::Path;
use std::process::Command;

/// `git ARGS` in `dir`, which must succeed; its stdout, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git").arg("-C").arg(dir).args(args).output().expect("git runs");
    assert!(output.status.success(), "git {args:?} in {}: {}", dir.display(), String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("git prints UTF-8").trim().to_owned()
}

/// `run`, which must have exited with `code`.
fn exited(run: Run, code: i32, what: &str) -> Run {
    run.expect_code(code, what);
    run
}

/// A repository's own identity, so that commits and notes need no global git config.
fn identify(dir: &Path, name: &str) {
    git(dir, &["config", "user.name", name]);
    git(dir, &["config", "user.email", &format!("{name}@example.invalid")]);
}

/// The team's world: a bare origin, and the agent's clone (the live session's project)
/// with a daemon on its own `JUDGED_HOME`.
struct Team {
    // Dropped first: the daemon stops before its temp dir goes.
    _daemon: Daemon,
    live: Live,
}

impl Team {
    /// A team whose agent works in a Copilot CLI session of `scenario`.
    fn new(scenario: &str) -> Team {
        let live = Live::copilot(scenario);
        let tmp = live.tmp.path();
        let origin = tmp.join("origin.git");
        git(tmp, &["init", "-q", "--bare", "-b", "main", p(&origin)]);
        git(tmp, &["clone", "-q", p(&origin), p(&live.project)]);
        identify(&live.project, "agent");
        fs::write(live.project.join("README.md"), "A cart.\n").unwrap();
        fs::write(live.project.join(".gitignore"), "target/\n").unwrap();
        git(&live.project, &["add", "-A"]);
        git(&live.project, &["commit", "-qm", "base"]);
        git(&live.project, &["push", "-q", "origin", "HEAD:main"]);
        let daemon = live.start_daemon();
        Team { _daemon: daemon, live }
    }

    fn agent(&self) -> &Path {
        &self.live.project
    }

    /// Write `text` to the agent's `path` (the work).
    fn write(&self, path: &str, text: &str) {
        let file = self.agent().join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }

    /// The review round of this session, in daemon mode, its files outside the clone.
    fn review(&self) {
        let (challenge, evidence, response) = (self.live.out("c.json"), self.live.out("e.json"), self.live.out("r.md"));
        self.live.challenge_and_review(&challenge);
        self.live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]).expect_code(0, "verify");
    }

    /// Commit everything in the agent's clone; the commit's id.
    fn commit(&self, message: &str) -> String {
        git(self.agent(), &["add", "-A"]);
        git(self.agent(), &["commit", "-qm", message]);
        git(self.agent(), &["rev-parse", "HEAD"])
    }

    /// `judge-evidence attest ARGS` in the agent's clone.
    fn attest(&self, args: &[&str]) -> Run {
        self.live.judge_in(self.agent(), Mode::Daemon, &[&["attest"], args].concat())
    }

    /// The note of `commit`, as lines.
    fn note(&self, commit: &str) -> Vec<String> {
        git(self.agent(), &["notes", "--ref=judged", "show", commit]).lines().map(str::to_owned).collect()
    }
}

#[test]
fn a_reviewed_commit_is_attested_in_its_note_once_and_a_commit_the_review_did_not_see_is_refused_naming_why() {
    let team = Team::new("cross-family-ok");
    team.write("src/cart.rs", "pub fn total(items: &[u32]) -> u32 { items.iter().sum() }\n");
    team.review();
    let reviewed = team.commit("cart: total");

    let run = exited(team.attest(&[]), 0, "attest HEAD");
    let said = &run.stdout;
    assert!(said.starts_with(&format!("attested commit {reviewed} (tree ")), "{said}");
    assert!(said.contains("gpt-5.4 (openai, host-recorded, rubber-duck) reviewed claude-sonnet-4.6's work (anthropic): Score 8/10, Verdict ready"), "{said}");
    assert!(said.ends_with("note appended to refs/notes/judged\n"), "{said}");
    let note = team.note(&reviewed);
    assert_eq!(note.len(), 1, "one JSON line per envelope: {note:?}");
    let envelope: Value = serde_json::from_str(&note[0]).unwrap();
    assert_eq!(envelope["payloadType"], "application/vnd.in-toto+json");

    // Asked again: the same envelope, and the note keeps one copy.
    let again = exited(team.attest(&[&reviewed]), 0, "attest again");
    assert!(again.stdout.ends_with("the note in refs/notes/judged holds it already\n"), "{}", again.stdout);
    assert_eq!(team.note(&reviewed), note);

    // A commit after the review, on top of the reviewed one.
    team.write("src/cart.rs", "pub fn total(items: &[u32]) -> u32 { items.iter().copied().sum() }\n");
    let extra = team.commit("cart: copied");
    let refused = exited(team.attest(&[]), 11, "an extra commit");
    let said = &refused.stderr;
    assert!(said.contains(&format!("no attestation for commit {extra}: commit {extra} holds tree ")), "{said}");
    assert!(
        said.contains(&format!("(its parent {reviewed} holds a reviewed tree: this commit came after the review)")),
        "{said}"
    );

    // The reviewed commit amended after its review.
    git(team.agent(), &["reset", "-q", "--hard", &reviewed]);
    team.write("src/cart.rs", "pub fn total(items: &[u32]) -> u32 { 0 }\n");
    git(team.agent(), &["commit", "-qa", "--amend", "--no-edit"]);
    let amended = git(team.agent(), &["rev-parse", "HEAD"]);
    let said = exited(team.attest(&[]), 11, "an amended commit").stderr.clone();
    assert!(said.contains(&format!("commit {amended} holds tree ")), "{said}");
    assert!(said.contains("which no review saw: the newest review of this repository (evidence cne_"), "{said}");
    assert!(said.contains("so the commit was amended or holds changes made after that review"), "{said}");
    assert!(git(team.agent(), &["notes", "--ref=judged", "list"]).lines().count() == 1, "no note for what was refused");

    let direct = exited(team.live.judge_in(team.agent(), Mode::Direct, &["attest"]), 2, "direct mode");
    assert!(direct.stderr.contains("attest needs judged: only its witness holds the key"), "{}", direct.stderr);
    let unknown = exited(team.attest(&["no-such-branch"]), 2, "no such commit");
    assert!(unknown.stderr.contains("`no-such-branch` names no commit of the repository in"), "{}", unknown.stderr);
}
