//! Checking attestations in CI (issue 34): `judge-evidence check` over a range of 1,000
//! commits, each with a note holding a signed attestation, as a pull request's check reads
//! them (no daemon).
//!
//! The repository is written with two `git fast-import` runs: the commits (one file
//! changed each), then one notes commit holding an envelope per commit, each an in-toto
//! statement of that commit and its tree signed with a key of the trusted file, its review
//! begun at the commit's parent, so that every note is opened, its signature checked and
//! its statement judged, whether every commit is checked or the head alone.

use crate::Bins;
use crate::measure::{self, Samples};
use judged_core::attestation::{Envelope, Executor, Review, ReviewPredicate, ReviewerReview, Statement};
use judged_core::event::Host;
use judged_core::rules::IdentityAssurance;
use judged_core::signature::SigningKey;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The commits of the range.
pub const COMMITS: usize = 1000;

/// What the attestation phase measured.
#[derive(Debug, Default)]
pub struct AttestFigures {
    pub commits: usize,
    /// `check --every-commit` of the whole range, spawn to exit.
    pub every_commit: Samples,
    /// `check` of its head only.
    pub head_only: Samples,
    /// Writing the repository and its notes.
    pub setup_ms: f64,
}

fn git(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> String {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("git runs");
    if let Some(bytes) = stdin {
        child.stdin.take().expect("piped").write_all(bytes).expect("git reads its input");
    }
    let output = child.wait_with_output().expect("git exits");
    assert!(output.status.success(), "git {args:?} failed");
    String::from_utf8(output.stdout).expect("git prints UTF-8")
}

/// `data` of a fast-import stream.
fn data(stream: &mut Vec<u8>, bytes: &[u8]) {
    stream.extend_from_slice(format!("data {}\n", bytes.len()).as_bytes());
    stream.extend_from_slice(bytes);
    stream.push(b'\n');
}

/// The predicate of a verified cross-family review, as the daemon writes one.
/// Each review began at the commit's parent (none for the first), so that a check of the
/// head walks the whole chain of reviews down to the first commit.
fn predicate(key: &SigningKey, n: usize, base: Option<&str>) -> ReviewPredicate {
    ReviewPredicate {
        reviewed_at: "2026-12-01T10:00:00Z".into(),
        attested_at: "2026-12-01T10:00:01Z".into(),
        witness_key_id: key.public_key().spki_id(),
        reviewed_base: base.map(str::to_owned),
        executor: Executor {
            host: Some(Host::CopilotCli),
            model: Some("claude-sonnet-4.6".into()),
            family: Some("anthropic".into()),
        },
        review: Review::Reviewer(ReviewerReview {
            evidence_id: judged_core::rules::EvidenceId::parse(&format!("cne_{n:032x}")).expect("an evidence id"),
            path: "rubber-duck".into(),
            model: "gpt-5.4".into(),
            family: "openai".into(),
            identity_source: "host-session-event".into(),
            assurance: IdentityAssurance::HostRecorded,
            verdict: Some("ready".into()),
            score: Some(8.0),
        }),
    }
}

/// A repository of [`COMMITS`] attested commits in `dir`, and its trusted file.
fn write_repository(dir: &Path) -> std::path::PathBuf {
    git(dir, &["init", "-q", "-b", "main"], None);
    let mut stream = Vec::new();
    for n in 0..COMMITS {
        stream.extend_from_slice(b"commit refs/heads/main\n");
        stream.extend_from_slice(
            format!("committer bench <bench@example.invalid> {} +0000\n", 1_764_000_000 + n).as_bytes(),
        );
        data(&mut stream, format!("work {n}").as_bytes());
        stream.extend_from_slice(b"M 100644 inline work.txt\n");
        data(&mut stream, format!("{n}\n").as_bytes());
        stream.push(b'\n');
    }
    git(dir, &["fast-import", "--quiet"], Some(&stream));
    let key = SigningKey::from_seed(&[42; 32]);
    let listed = git(dir, &["rev-list", "--format=%T %P", "main"], None);
    let mut notes = Vec::new();
    notes.extend_from_slice(b"commit refs/notes/judged\ncommitter bench <bench@example.invalid> 1764000000 +0000\n");
    data(&mut notes, b"attestations");
    let mut lines = listed.lines();
    let mut n = 0;
    while let (Some(header), Some(fields)) = (lines.next(), lines.next()) {
        let commit = header.strip_prefix("commit ").expect("rev-list names each commit");
        let mut fields = fields.split_whitespace();
        let (tree, parent) = (fields.next().expect("rev-list names each tree"), fields.next());
        let line = Envelope::seal(&Statement::of_commit(commit, tree, predicate(&key, n, parent)), &key).line();
        notes.extend_from_slice(format!("N inline {commit}\n").as_bytes());
        data(&mut notes, format!("{line}\n").as_bytes());
        n += 1;
    }
    git(dir, &["fast-import", "--quiet"], Some(&notes));
    let trusted = dir.join("trusted-witnesses");
    std::fs::write(&trusted, format!("bench {}\n", key.public_key())).expect("trusted file written");
    trusted
}

/// Time `check` over the range, every commit and head only, `runs` times each.
pub fn measure(bins: &Bins, work: &Path, runs: usize) -> AttestFigures {
    let dir = work.join("attest");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("attest dir");
    let started = std::time::Instant::now();
    let trusted = write_repository(&dir);
    let setup_ms = measure::ms_since(started);
    let check = |every: bool| {
        let mut command = Command::new(&bins.evidence);
        command.current_dir(&dir).arg("check").arg("main").arg("--trusted").arg(&trusted);
        if every {
            command.arg("--every-commit");
        }
        (command, None)
    };
    let (every_commit, output) = measure::repeat("check --every-commit (1,000 commits)", runs, 1, 0, |_| check(true));
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(said.contains(&format!("policy holds: {COMMITS} of {COMMITS} checked commits attested")), "{said}");
    let (head_only, _) = measure::repeat("check (head only)", runs, 1, 0, |_| check(false));
    AttestFigures { commits: COMMITS, every_commit, head_only, setup_ms }
}
