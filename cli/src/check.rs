//! `judge-evidence check REV-RANGE --trusted FILE`: was each commit about to land (or the
//! range's head) reviewed by another model family, and who says so? Per commit: the
//! trusted witness whose attestation counts, or the exact reason none does. A review covers
//! the changes from its base, so the bases are followed down to the base branch. Read-only:
//! one `rev-list`, one `notes list` and two `cat-file` batches whatever the range's size,
//! one `merge-base --is-ancestor` per base outside the range, and one `merge-tree` per
//! merge whose own note does not count. No daemon: a CI job has the repository and the
//! witnesses' public keys, nothing else.

use crate::git::{self, GitError};
use judged_core::attestation::{Envelope, GIT_COMMIT, GIT_TREE, OpenError, Review, ReviewPredicate, TrustedKey};
use judged_core::review_text::is_positive;
use judged_core::rules::IdentityAssurance;
use judged_core::signature::PublicKey;
use judged_io::worktree::NOTES_REF;
use judged_protocol::{GatePolicy, wire_name};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `check`'s arguments: the range, the trusted witnesses, and the policy, by `[gate]`'s names.
#[derive(clap::Args)]
pub struct CheckCmd {
    /// The commits to check, as git names a range (`origin/main..HEAD`), or several revisions.
    #[arg(required = true, value_name = "REV-RANGE")]
    revisions: Vec<String>,
    /// The witnesses whose attestations count: one `NAME KEY` per line, KEY as `judged key`
    /// prints it or the base64 line of `judged key --pem`; `#` starts a comment.
    #[arg(long, value_name = "FILE")]
    trusted: PathBuf,
    /// Check every commit of the range, not only its head (each tip, when it has several).
    #[arg(long)]
    every_commit: bool,
    /// Which reviews count, as `[gate] policy` names them: `evidence` (one reviewer's
    /// verified review), `panel` (judged's jury), `evidence_or_panel`.
    #[arg(long, default_value = "evidence", value_parser = policy_named)]
    policy: GatePolicy,
    /// How a reviewer's identity must be known, as `[gate] evidence_assurance` names it:
    /// `host-recorded`, or `caller-declared` to count reviews only their caller vouches for.
    #[arg(long = "evidence-assurance", default_value = "host-recorded", value_parser = assurance_named)]
    evidence_assurance: IdentityAssurance,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// A `[gate] policy` name that checks something.
fn policy_named(name: &str) -> Result<GatePolicy, String> {
    match serde_json::from_value(serde_json::Value::String(name.to_owned())) {
        Ok(GatePolicy::Off) => Err("`off` counts no review, so it would check nothing: drop the check instead".into()),
        Ok(policy) => Ok(policy),
        Err(_) => Err(format!("`{name}` is no [gate] policy: evidence, panel or evidence_or_panel")),
    }
}

/// A `[gate] evidence_assurance` name.
fn assurance_named(name: &str) -> Result<IdentityAssurance, String> {
    serde_json::from_value(serde_json::Value::String(name.to_owned()))
        .map_err(|_| format!("`{name}` is no evidence assurance: host-recorded or caller-declared"))
}

/// Why the check could not be made (exit 2); a policy not met is a result, not an error.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("cannot read --trusted {}: {source}", path.display())]
    TrustedUnreadable { path: PathBuf, source: std::io::Error },
    #[error("--trusted {}, line {line}: expected `NAME KEY`, found `{found}`", path.display())]
    TrustedLine { path: PathBuf, line: usize, found: String },
    #[error("--trusted {}, line {line}: {source}", path.display())]
    TrustedKey { path: PathBuf, line: usize, source: judged_core::signature::BadPublicKey },
    #[error(
        "--trusted {} holds no key: put one `NAME KEY` line in it per witness, KEY as `judged key` prints it",
        .0.display()
    )]
    NoTrustedKey(PathBuf),
    #[error("cannot list the commits of {range}: {source}")]
    Range { range: String, source: GitError },
    #[error("cannot read the notes under {NOTES_REF}: {0}")]
    Notes(GitError),
    #[error("no working directory: {0}")]
    NoDirectory(std::io::Error),
    #[error(
        "this clone is shallow: its oldest commits look as if they had no parent, which would let a review of a \
         root commit cover them; fetch the whole history (`git fetch --unshallow`, or `fetch-depth: 0` in \
         actions/checkout), then run check again"
    )]
    Shallow,
}

/// Run `check`: the table (or JSON) on stdout; exit 0 when the policy holds, 10 when a
/// checked commit fails it, 2 when the check cannot be made.
pub fn main(cmd: &CheckCmd) -> ExitCode {
    match check(cmd) {
        Ok(report) => {
            println!(
                "{}",
                if cmd.json { serde_json::to_string(&report).expect("a report serializes") } else { table(&report) }
            );
            if report.passed { ExitCode::SUCCESS } else { ExitCode::from(10) }
        }
        Err(error) => {
            eprintln!("judge-evidence check: {error}");
            ExitCode::from(2)
        }
    }
}

/// The trusted witnesses of `path`.
fn trusted_keys(path: &Path) -> Result<Vec<TrustedKey>, CheckError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| CheckError::TrustedUnreadable { path: path.to_owned(), source })?;
    let mut keys = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, key] = fields[..] else {
            return Err(CheckError::TrustedLine { path: path.to_owned(), line: n + 1, found: line.to_owned() });
        };
        let key = key.parse::<PublicKey>().map_err(|source| CheckError::TrustedKey {
            path: path.to_owned(),
            line: n + 1,
            source,
        })?;
        keys.push(TrustedKey { name: name.to_owned(), key });
    }
    if keys.is_empty() {
        return Err(CheckError::NoTrustedKey(path.to_owned()));
    }
    Ok(keys)
}

/// The policy a check applied.
#[derive(Serialize)]
struct Policy {
    every_commit: bool,
    policy: String,
    evidence_assurance: IdentityAssurance,
}

/// What the check found.
#[derive(Serialize)]
struct Report {
    range: Vec<String>,
    policy: Policy,
    /// Every checked commit passed (none to check passes).
    passed: bool,
    /// The checked commits, newest first.
    commits: Vec<Checked>,
}

/// One checked commit.
#[derive(Clone, Serialize)]
struct Checked {
    commit: String,
    tree: String,
    passed: bool,
    /// The trusted witness whose attestation counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    attested_by: Option<String>,
    /// What that attestation says.
    #[serde(skip_serializing_if = "Option::is_none")]
    review: Option<ReviewPredicate>,
    /// A merge that passed with no attestation of its own: its parents, each covered, and
    /// the tree git's merge of them gives is the one it holds.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    merge_of: Vec<String>,
    /// Why no attestation counts: one per line of the note (or that there is none).
    reasons: Vec<String>,
}

/// A commit of the range, as `rev-list` names it.
struct Commit {
    id: String,
    tree: String,
    parents: Vec<String>,
}

/// Why one note line does not count for its commit.
#[derive(Debug, thiserror::Error)]
enum Refusal {
    #[error("no note: nothing attests this commit (attest it where judged witnessed its review, and push {NOTES_REF})")]
    NoNote,
    #[error(
        "the note is {bytes} bytes, more than check reads ({MAX_NOTE_BYTES}): no attestation of judged's is that large"
    )]
    NoteTooLarge { bytes: usize },
    #[error("line {line}: {source}")]
    Unopened { line: usize, source: OpenError },
    #[error(
        "line {line}: the attestation is of commit {subject}, not this one: a note copied or moved onto another commit"
    )]
    OtherCommit { line: usize, subject: String },
    #[error("line {line}: the attestation says the commit holds tree {attested}, but it holds {actual}")]
    TreeDiffers { line: usize, attested: String, actual: String },
    #[error(
        "line {line}: same family: {reviewer} reviewed the work of {executor}, both {family}; no cross-family review"
    )]
    SameFamily { line: usize, executor: String, reviewer: String, family: String },
    #[error("line {line}: a family is unknown ({executor} reviewed by {reviewer}), so no cross-family review is shown")]
    UnknownFamily { line: usize, executor: String, reviewer: String },
    #[error(
        "line {line}: caller-declared: the reviewer {reviewer} is only its caller's word, and the policy asks for host-recorded reviews (--evidence-assurance)"
    )]
    CallerDeclared { line: usize, reviewer: String },
    #[error(
        "line {line}: the review did not approve it ({said}): a Score of 6/10 or more with Verdict ready or almost counts"
    )]
    NotApproved { line: usize, said: String },
    #[error("line {line}: a jury's verdict, and the policy `{policy}` counts only a reviewer's (--policy)")]
    JuryNotCounted { line: usize, policy: String },
    #[error("line {line}: a reviewer's review, and the policy `{policy}` counts only judged's jury (--policy)")]
    ReviewerNotCounted { line: usize, policy: String },
    #[error("line {line}: the jury said {verdict}{}: only a healthy cross-family pass counts", if *degraded { ", degraded" } else { "" })]
    JuryDidNotPass { line: usize, verdict: String, degraded: bool },
    #[error(
        "line {line}: the review began when HEAD was already this commit, so it was shown none of the changes this commit makes"
    )]
    ReviewedNothing { line: usize },
    #[error(
        "line {line}: the review was shown the changes since {base}, which is no ancestor of this commit here, so what \
         the tree holds beyond that was never shown"
    )]
    BaseNotAncestor { line: usize, base: String },
    #[error(
        "line {line}: the review was shown only the changes since {base}, a commit of this range that is not attested \
         itself ({why}): review the changes since the base branch (`git reset --soft` to it, then review), or attest {base}"
    )]
    BaseNotAttested { line: usize, base: String, why: String },
    #[error(
        "line {line}: the review was shown every file as new (its repository had no commit), which covers a first \
         commit, not this one, made on top of others"
    )]
    NoBaseOverParents { line: usize },
    #[error(
        "line {line}: the review was shown the changes since {base}, but {outside} of the base branch came between \
         that and this commit: what this commit holds or undoes of the base branch was never shown; review the work \
         again from the base branch's tip"
    )]
    BaseBranchBetween { line: usize, base: String, outside: String },
    #[error(
        "line {line}: the reviews' bases lead back to this commit ({base}), so none of them began outside the range"
    )]
    BaseCycle { line: usize, base: String },
    #[error(
        "a clean merge, but of {parent}, a commit of this range that is not attested itself ({why}): what it brings \
         was never reviewed"
    )]
    MergedUncovered { parent: String, why: String },
}

fn check(cmd: &CheckCmd) -> Result<Report, CheckError> {
    let trusted = trusted_keys(&cmd.trusted)?;
    let dir = std::env::current_dir().map_err(CheckError::NoDirectory)?;
    if git::text(&dir, &["rev-parse", "--is-shallow-repository"]).is_ok_and(|said| said.trim() == "true") {
        return Err(CheckError::Shallow);
    }
    let range = cmd.revisions.join(" ");
    let commits = commits(&dir, &cmd.revisions).map_err(|source| CheckError::Range { range, source })?;
    let checked: Vec<&Commit> = if cmd.every_commit { commits.iter().collect() } else { heads(&commits) };
    // Every commit's note: a review's base in the range is checked as a commit of its own.
    let notes = notes(&dir, commits.iter().map(|c| c.id.as_str()).collect()).map_err(CheckError::Notes)?;
    let mut checker = Checker {
        cmd,
        dir: &dir,
        trusted: &trusted,
        range: commits.iter().map(|c| (c.id.as_str(), c)).collect(),
        notes,
        opened: HashMap::new(),
        judged: HashMap::new(),
        ancestors: HashMap::new(),
    };
    let commits: Vec<Checked> = checked.into_iter().map(|commit| checker.checked(&commit.id)).collect();
    Ok(Report {
        range: cmd.revisions.clone(),
        policy: Policy {
            every_commit: cmd.every_commit,
            policy: wire_name(&cmd.policy),
            evidence_assurance: cmd.evidence_assurance,
        },
        passed: commits.iter().all(|c| c.passed),
        commits,
    })
}

/// The commits `revisions` names, newest first, each with its tree and parents.
fn commits(dir: &Path, revisions: &[String]) -> Result<Vec<Commit>, GitError> {
    let mut args = vec!["rev-list", "--format=%T %P", "--end-of-options"];
    args.extend(revisions.iter().map(String::as_str));
    let listed = git::text(dir, &args)?;
    let mut lines = listed.lines();
    let mut commits = Vec::new();
    while let Some(header) = lines.next() {
        let (Some(id), Some(fields)) = (header.strip_prefix("commit "), lines.next()) else { continue };
        let mut fields = fields.split_whitespace();
        let tree = fields.next().unwrap_or_default().to_owned();
        commits.push(Commit { id: id.to_owned(), tree, parents: fields.map(str::to_owned).collect() });
    }
    Ok(commits)
}

/// The range's heads: its commits no other commit of it has as a parent.
fn heads(commits: &[Commit]) -> Vec<&Commit> {
    let parents: HashSet<&str> = commits.iter().flat_map(|c| c.parents.iter().map(String::as_str)).collect();
    commits.iter().filter(|c| !parents.contains(c.id.as_str())).collect()
}

/// The notes of `wanted` commits under [`NOTES_REF`], by commit, read in one batch.
fn notes(dir: &Path, wanted: HashSet<&str>) -> Result<HashMap<String, Note>, GitError> {
    let listed = git::text(dir, &["notes", "--ref", NOTES_REF, "list"])?;
    let blobs: Vec<(&str, &str)> =
        listed.lines().filter_map(|line| line.split_once(' ')).filter(|(_, commit)| wanted.contains(commit)).collect();
    if blobs.is_empty() {
        return Ok(HashMap::new());
    }
    // Sizes first: a note larger than any list of attestations is not read.
    let input: String = blobs.iter().map(|(blob, _)| format!("{blob}\n")).collect();
    let sizes = git::run(dir, &["cat-file", "--batch-check=%(objectsize)"], Some(input.as_bytes()))?;
    let sizes = String::from_utf8_lossy(&sizes).into_owned();
    let mut notes = HashMap::new();
    let mut readable = Vec::new();
    for ((blob, commit), size) in blobs.into_iter().zip(sizes.lines()) {
        match size.parse::<usize>() {
            Ok(size) if size > MAX_NOTE_BYTES => _ = notes.insert(commit.to_owned(), Note::TooLarge(size)),
            Ok(_) => readable.push((blob, commit)),
            // `<oid> missing`: a note whose blob a partial clone lacks is no note, as far as
            // the check can tell.
            Err(_) => {}
        }
    }
    let blobs = readable;
    if blobs.is_empty() {
        return Ok(notes);
    }
    let input: String = blobs.iter().map(|(blob, _)| format!("{blob}\n")).collect();
    let out = git::run(dir, &["cat-file", "--batch"], Some(input.as_bytes()))?;
    let mut rest = out.as_slice();
    for (_, commit) in blobs {
        // `<oid> blob <size>\n<content>\n`, or `<oid> missing\n` (a note whose blob a
        // partial clone lacks: no note, as far as the check can tell).
        let Some(end) = rest.iter().position(|&b| b == b'\n') else { break };
        let header = String::from_utf8_lossy(&rest[..end]).into_owned();
        rest = &rest[end + 1..];
        let Some(size) = header.strip_suffix(" missing").map_or_else(|| header.rsplit(' ').next(), |_| None) else {
            continue;
        };
        let size: usize = size.parse().unwrap_or(0);
        let size = size.min(rest.len());
        notes.insert(commit.to_owned(), Note::Text(String::from_utf8_lossy(&rest[..size]).into_owned()));
        rest = rest.get(size + 1..).unwrap_or_default();
    }
    Ok(notes)
}

/// The largest note read: a few hundred attestations of one commit. A larger one, which
/// only a hostile writer makes, would cost every check its size in memory and signatures.
const MAX_NOTE_BYTES: usize = 1 << 20;
/// The most lines of a note check opens: each may cost a signature check per trusted key
/// it names, and a commit reviewed more often than this is no commit a CI meets.
const MAX_NOTE_LINES: usize = 256;

/// A commit's note, as far as it is read.
enum Note {
    Text(String),
    TooLarge(usize),
}

/// A note's line that counts under the policy: who signed it and what it says.
type Counted = Result<(String, ReviewPredicate), Refusal>;

/// What a line's review base says of the commit: covered, not, or not known until the
/// base (a commit of the range) is checked.
enum Coverage {
    Covered,
    NotCovered(Refusal),
    Pending(String),
}

/// The range's commits, checked on demand: a commit passes when a line of its note counts
/// and the review it names began where the check can trust (attestation.md §7.3): at no
/// commit (every file shown), at an ancestor outside the range, or at a commit of the
/// range that passes in turn.
struct Checker<'a> {
    cmd: &'a CheckCmd,
    dir: &'a Path,
    trusted: &'a [TrustedKey],
    range: HashMap<&'a str, &'a Commit>,
    notes: HashMap<String, Note>,
    /// Each commit's lines, opened once.
    opened: HashMap<String, Vec<Counted>>,
    judged: HashMap<String, Checked>,
    /// Whether a commit outside the range is an ancestor of one of it, asked of git once.
    ancestors: HashMap<(String, String), bool>,
}

impl Checker<'_> {
    /// `id` judged, and each base of the range it needs first (a stack, not recursion: a
    /// range may be a long chain of reviews).
    fn checked(&mut self, id: &str) -> Checked {
        let mut stack = vec![id.to_owned()];
        let mut on_stack: HashSet<String> = HashSet::from([id.to_owned()]);
        while let Some(top) = stack.last().cloned() {
            if self.judged.contains_key(&top) {
                on_stack.remove(&stack.pop().expect("the top"));
                continue;
            }
            match self.judge(&top, &on_stack) {
                Ok(checked) => {
                    self.judged.insert(top, checked);
                }
                Err(base) => {
                    on_stack.insert(base.clone());
                    stack.push(base);
                }
            }
        }
        self.judged[id].clone()
    }

    /// One commit judged by its note: the first line that counts and whose base is
    /// covered, else every line's reason; or the base of the range to judge first.
    fn judge(&mut self, id: &str, on_stack: &HashSet<String>) -> Result<Checked, String> {
        let commit = self.range[id];
        if !self.opened.contains_key(id) {
            let opened = match self.notes.get(id) {
                Some(Note::TooLarge(bytes)) => vec![Err(Refusal::NoteTooLarge { bytes: *bytes })],
                Some(Note::Text(note)) => note
                    .lines()
                    .take(MAX_NOTE_LINES)
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty())
                    .map(|(n, line)| counted(n + 1, line, commit, self.trusted, self.cmd))
                    .collect(),
                None => Vec::new(),
            };
            self.opened.insert(id.to_owned(), opened);
        }
        let mut reasons = Vec::new();
        for at in 0..self.opened[id].len() {
            let (signer, review) = match &self.opened[id][at] {
                Ok(counted) => counted.clone(),
                Err(refusal) => {
                    reasons.push(refusal.to_string());
                    continue;
                }
            };
            match self.coverage(commit, at + 1, &review, on_stack) {
                Coverage::Covered => {
                    return Ok(Checked {
                        commit: commit.id.clone(),
                        tree: commit.tree.clone(),
                        passed: true,
                        attested_by: Some(signer),
                        review: Some(review),
                        merge_of: Vec::new(),
                        reasons: Vec::new(),
                    });
                }
                Coverage::NotCovered(refusal) => reasons.push(refusal.to_string()),
                Coverage::Pending(base) => return Err(base),
            }
        }
        if reasons.is_empty() {
            reasons.push(Refusal::NoNote.to_string());
        }
        let mut merge_of = Vec::new();
        if let [ours, theirs] = &commit.parents[..]
            && self.merges_cleanly(commit, ours, theirs)
        {
            match self.parents_covered(commit) {
                Ok(None) => merge_of = commit.parents.clone(),
                Ok(Some(refusal)) => reasons.push(refusal.to_string()),
                Err(parent) => return Err(parent),
            }
        }
        Ok(Checked {
            commit: commit.id.clone(),
            tree: commit.tree.clone(),
            passed: !merge_of.is_empty(),
            attested_by: None,
            review: None,
            reasons: if merge_of.is_empty() { reasons } else { Vec::new() },
            merge_of,
        })
    }

    /// Whether `commit` holds exactly the tree git's merge of its two parents gives: a
    /// merge that brings no change of its own (an evil merge, or a conflict resolved by
    /// hand, does and needs its review).
    fn merges_cleanly(&self, commit: &Commit, ours: &str, theirs: &str) -> bool {
        git::merged_tree(self.dir, ours, theirs).is_some_and(|tree| tree == commit.tree)
    }

    /// Whether a clean merge's parents are covered: each outside the range (the base
    /// branch's), or a commit of the range that passes; the first that does not, as the
    /// reason; or a parent of the range to judge first.
    fn parents_covered(&self, commit: &Commit) -> Result<Option<Refusal>, String> {
        for parent in &commit.parents {
            if !self.range.contains_key(parent.as_str()) {
                continue;
            }
            match self.judged.get(parent) {
                Some(judged) if judged.passed => {}
                Some(judged) => {
                    return Ok(Some(Refusal::MergedUncovered { parent: parent.clone(), why: first_reason(judged) }));
                }
                None => return Err(parent.clone()),
            }
        }
        Ok(None)
    }

    /// Whether the base of a review counted on line `line` of `commit`'s note is covered.
    fn coverage(
        &mut self,
        commit: &Commit,
        line: usize,
        review: &ReviewPredicate,
        on_stack: &HashSet<String>,
    ) -> Coverage {
        let Some(base) = review.reviewed_base.as_deref() else {
            // No commit yet when it was reviewed: every file was shown, which covers a
            // first commit, not one made on top of others (an orphan branch's review).
            return match commit.parents.is_empty() {
                true => Coverage::Covered,
                false => Coverage::NotCovered(Refusal::NoBaseOverParents { line }),
            };
        };
        if base == commit.id {
            return Coverage::NotCovered(Refusal::ReviewedNothing { line });
        }
        // The base must be where this commit's own changes begin: no commit of the base
        // branch between them, or what this commit holds (or undoes) of it was never shown.
        if let Some(outside) = self.outside_between(base, commit) {
            return Coverage::NotCovered(Refusal::BaseBranchBetween { line, base: base.to_owned(), outside });
        }
        if self.range.contains_key(base) {
            return match self.judged.get(base) {
                Some(judged) if judged.passed => Coverage::Covered,
                Some(judged) => Coverage::NotCovered(Refusal::BaseNotAttested {
                    line,
                    base: base.to_owned(),
                    why: first_reason(judged),
                }),
                None if on_stack.contains(base) => {
                    Coverage::NotCovered(Refusal::BaseCycle { line, base: base.to_owned() })
                }
                None => Coverage::Pending(base.to_owned()),
            };
        }
        let key = (base.to_owned(), commit.id.clone());
        let dir = self.dir;
        // A commit (not a tag that names one: git would follow it), in this commit's history.
        let is_ancestor = *self.ancestors.entry(key).or_insert_with(|| {
            judged_io::worktree::is_object_id(base)
                && git::text(dir, &["cat-file", "-t", base]).is_ok_and(|kind| kind == "commit")
                && git::run(dir, &["merge-base", "--is-ancestor", base, &commit.id], None).is_ok()
        });
        if is_ancestor {
            Coverage::Covered
        } else {
            Coverage::NotCovered(Refusal::BaseNotAncestor { line, base: base.to_owned() })
        }
    }

    /// A commit of the base branch between `base` and `commit` (reachable from the commit
    /// and not from the base, outside the range), if there is one. A commit whose only
    /// parent is the base has none, without asking git.
    fn outside_between(&self, base: &str, commit: &Commit) -> Option<String> {
        if commit.parents == [base] {
            return None;
        }
        if !judged_io::worktree::is_object_id(base) {
            return Some(base.to_owned());
        }
        let excluded = format!("^{base}");
        let Ok(listed) = git::text(self.dir, &["rev-list", "--end-of-options", &commit.id, &excluded]) else {
            return Some(base.to_owned());
        };
        listed.lines().find(|id| !self.range.contains_key(id)).map(str::to_owned)
    }
}

/// The first reason a commit failed, as another commit's reason repeats it: cut short, so
/// that a long chain of failures does not repeat each one inside the next.
fn first_reason(judged: &Checked) -> String {
    const SHOWN: usize = 240;
    let reason = judged.reasons.first().map(String::as_str).unwrap_or_default();
    match reason.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &reason[..end]),
        None => reason.to_owned(),
    }
}

/// Whether line `line` of a note counts for `commit` under the policy: who signed it and
/// what it says, or why not.
fn counted(
    line: usize,
    text: &str,
    commit: &Commit,
    trusted: &[TrustedKey],
    cmd: &CheckCmd,
) -> Result<(String, ReviewPredicate), Refusal> {
    let opened = Envelope::open(text, trusted).map_err(|source| Refusal::Unopened { line, source })?;
    let statement = opened.statement;
    let subject = statement.subject_digest(GIT_COMMIT).unwrap_or("(none)");
    if subject != commit.id {
        return Err(Refusal::OtherCommit { line, subject: subject.to_owned() });
    }
    let attested = statement.subject_digest(GIT_TREE).unwrap_or("(none)");
    if attested != commit.tree {
        return Err(Refusal::TreeDiffers { line, attested: attested.to_owned(), actual: commit.tree.clone() });
    }
    let predicate = statement.predicate;
    let policy = wire_name(&cmd.policy);
    match &predicate.review {
        Review::Reviewer(_) if cmd.policy == GatePolicy::Panel => {
            return Err(Refusal::ReviewerNotCounted { line, policy });
        }
        Review::Jury(_) if cmd.policy == GatePolicy::Evidence => return Err(Refusal::JuryNotCounted { line, policy }),
        Review::Reviewer(review) => {
            let executor = predicate.executor.model.clone().unwrap_or_else(|| "an unknown model".into());
            let reviewer = review.model.clone();
            match predicate.executor.family.as_deref() {
                Some(family) if family == review.family && family != "unknown" => {
                    return Err(Refusal::SameFamily { line, executor, reviewer, family: family.to_owned() });
                }
                Some(family) if family != "unknown" && !review.family.is_empty() && review.family != "unknown" => {}
                _ => return Err(Refusal::UnknownFamily { line, executor, reviewer }),
            }
            if review.assurance < cmd.evidence_assurance {
                return Err(Refusal::CallerDeclared { line, reviewer });
            }
            if !review.score.zip(review.verdict.as_deref()).is_some_and(|(s, v)| is_positive(s, v)) {
                let said = match (review.score, &review.verdict) {
                    (Some(score), Some(verdict)) => format!("Score {score}/10, Verdict {verdict}"),
                    _ => "no Score and Verdict".into(),
                };
                return Err(Refusal::NotApproved { line, said });
            }
        }
        Review::Jury(jury) => {
            if jury.final_verdict != "pass" || jury.degraded || jury.families.len() < 2 {
                return Err(Refusal::JuryDidNotPass {
                    line,
                    verdict: jury.final_verdict.clone(),
                    degraded: jury.degraded,
                });
            }
        }
    }
    Ok((opened.signer.name, predicate))
}

/// The report for people: one row per checked commit, then the policy and the outcome.
fn table(report: &Report) -> String {
    let mut rows: Vec<[String; 3]> = vec![["COMMIT".into(), "RESULT".into(), "ATTESTED BY, OR WHY NOT".into()]];
    for checked in &report.commits {
        let (result, said) = match (&checked.attested_by, &checked.review) {
            (Some(by), Some(review)) => ("ok", format!("{by}: {}", review.summary())),
            _ if checked.passed => (
                "ok",
                format!(
                    "a clean merge of {}, each covered: it holds the tree git's merge of them gives",
                    checked.merge_of.join(" and ")
                ),
            ),
            _ => ("FAIL", checked.reasons.join("; ")),
        };
        rows.push([checked.commit.clone(), result.into(), said]);
    }
    let width = |i: usize| rows.iter().map(|r| r[i].len()).max().unwrap_or(0);
    let (w0, w1) = (width(0), width(1));
    let mut text: String = rows.iter().map(|[a, b, c]| format!("{a:w0$}  {b:w1$}  {c}\n")).collect();
    let failed = report.commits.iter().filter(|c| !c.passed).count();
    let which = if report.policy.every_commit { "every commit" } else { "the range's head" };
    let outcome = match (report.commits.len(), failed) {
        (0, _) => format!("{} names no commit: nothing to check", report.range.join(" ")),
        (n, 0) => format!("policy holds: {n} of {n} checked commits attested"),
        (n, failed) => format!("policy does not hold: {failed} of {n} checked commits not attested"),
    };
    text.push_str(&format!(
        "checked {which} under policy {}, evidence assurance {}; {outcome}",
        report.policy.policy,
        report.policy.evidence_assurance.as_str()
    ));
    text
}
