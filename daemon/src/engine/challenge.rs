//! `challenge`: bind a fresh nonce to this session's marker call.

use super::{Answer, Engine, EngineError, request_time};
use crate::caller::Caller;
use crate::config::digest_of_bytes;
use crate::store::{ChallengeIssued, JournalEvent, MarkerSeen};
use judged_core::event::Host;
use judged_core::log::SessionLog;
use judged_core::rules::{self, Challenge, LogState};
use judged_io::files::{FsEnv, Roots};
use judged_io::worktree::Tree;
use judged_protocol::{ChallengeArgs, Reply};
use std::path::{Path, PathBuf};

impl Engine {
    pub(super) fn challenge(&mut self, args: &ChallengeArgs, caller: Caller) -> Answer {
        let cwd = caller.directory("`cwd`", &args.cwd)?;
        // As in direct mode, `--session-root` is where to look, for either host's layout.
        // It is looked at for this request only: watching every root a client ever named
        // would keep a watch per root until restart (issue 10).
        let root = args.session_root.as_deref().map(|root| caller.directory("`session_root`", root)).transpose()?;
        let root = root.map(PathBuf::from);
        let nonce = rules::Nonce::fresh();
        let searched = match &root {
            Some(root) => Roots::named(root.clone()).searched(),
            None => self.ingest.roots().searched(),
        };
        let now = request_time(args.started_at)?;
        // Checked as the rules check them, the age before the binding.
        rules::check_max_age(args.max_age_seconds)?;
        let binding = rules::Binding::parse(&args.binding)?;
        // The tree the round begins on: what its review covers, and verify records.
        let tree = self.trees.tree(Path::new(&cwd), &args.writes);
        let git_tree = self.trees.git_tree_id(Path::new(&cwd), &args.writes);
        // Read after the tree: a commit made meanwhile makes the base newer, which asks
        // more of a check (docs/spec/attestation.md §7.3), never less.
        let git_base = git_tree.as_ref().and_then(|_| self.trees.base(Path::new(&cwd)));
        let request = rules::ChallengeRequest {
            binding: &binding,
            cwd: &cwd,
            max_age_seconds: args.max_age_seconds,
            now,
            nonce: &nonce,
            searched: &searched,
            tree_sha256: tree.as_ref().map(Tree::digest),
        };
        let mut challenge = self.challenge_over(&request, root.as_deref())?;
        let seen = MarkerSeen {
            binding: args.binding.clone(),
            session_events: challenge.session_events.clone(),
            event_id: Some(challenge.challenge_event_id.clone()),
            completion_event_id: Some(challenge.challenge_completion_event_id.clone()),
        };
        let witness = self.witness.sign(&challenge);
        challenge.witness = Some(witness.clone());
        let issued = ChallengeIssued {
            nonce,
            binding: args.binding.clone(),
            session_events: challenge.session_events.clone(),
            witness: witness.clone(),
            tree,
            git_tree,
            git_base,
            excluded: args.writes.clone(),
            challenge_sha256: Some(digest_of_bytes(challenge.pretty().as_bytes())),
        };
        self.store.journal_together(&[JournalEvent::MarkerSeen(seen), JournalEvent::ChallengeIssued(issued)])?;
        Ok(Reply::Challenge(challenge))
    }

    /// The challenge over the logs of `request.cwd` (under `root`, when given).
    ///
    /// Only the logs that can hold the binding are caught up: this cwd's, those whose cwd
    /// is not recorded yet, and those not in the store yet (a second one holding the
    /// binding makes it ambiguous). Other projects' logs cannot, and following them is
    /// the watcher's job, so the answer costs about the same however many sessions the
    /// user has. New logs are looked for in the roots and in every Claude Code project
    /// directory (one `stat` each; several cwds can share a directory name, `/w/my-app`
    /// and `/w/my_app` both write to `-w-my-app`); sub-agent transcripts never hold a root
    /// marker, so their directories are taken as last read.
    fn challenge_over(
        &mut self,
        request: &rules::ChallengeRequest,
        root: Option<&Path>,
    ) -> Result<Challenge, EngineError> {
        let mut stale: Vec<(PathBuf, Host)> = (self.store.files())
            .filter(|f| f.cwd.is_none() || self.resolved_cwds.same(f, request.cwd))
            .map(|f| (PathBuf::from(&f.path), f.host))
            .collect();
        // Paths compare as bytes here: `Path`'s component-wise comparison cost more than
        // the rest of the request at a few hundred sessions.
        let same_path = |a: &Path, b: &Path| a.as_os_str() == b.as_os_str();
        let roots: Vec<PathBuf> = self.ingest.roots().all().cloned().collect();
        let of_log_dirs = self.ingest.roots().of_log_dirs();
        let look = |dir: &Path| {
            roots.iter().any(|r| same_path(r, dir))
                || dir.parent().is_some_and(|p| of_log_dirs.iter().any(|r| same_path(r, p)))
        };
        let found = match root {
            Some(root) => self.ingest.discover_in(&Roots::named(root.to_path_buf())),
            None => self.ingest.discover_looking_at(look),
        };
        for found in found {
            if self.store.file_by_path(&found.path.to_string_lossy()).is_none() {
                stale.push((found.path, found.host));
            }
        }
        for (path, host) in stale {
            self.ingest.catch_up(&mut self.store, &path, host)?;
        }
        let mut ids = Vec::new();
        for file in self.store.files() {
            let under_root = root.is_none_or(|r| Path::new(&file.path).starts_with(r));
            // A pruned log's records cannot be read again; it was idle past the cutoff.
            let readable = !file.tampered && file.pruned == 0;
            if readable && under_root && self.resolved_cwds.same(file, request.cwd) {
                self.logs.refresh(&self.store, file)?;
                ids.push(file.id);
            }
        }
        let logs: Vec<&SessionLog> = ids.iter().map(|&id| self.logs.get(id)).collect();
        rules::challenge(request, &logs, &FsEnv::default())
            .map_err(|e| e.with_log_state(LogState::of(&logs, &["challenge", request.binding.as_str()])).into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::dispatch::Dispatch;
    use crate::engine::test_engine as engine;
    use std::fs;

    const FIXTURE: &str = include_str!(
        "../../../fixtures/claude-code-2.1.328/marker-challenge/70e11cfc-c3fb-426c-9dfc-374e15ffb0af.jsonl"
    );
    const FIXTURE_CWD: &str = "/tmp/judged-fixture/claude/marker-challenge/project";

    /// Claude Code names a project's directory after its cwd with every byte outside
    /// [A-Za-z0-9] turned into `-`, so `/w/my-app` and `/w/my_app` share `-w-my-app`: a
    /// directory whose known sessions have another cwd can still get one of this cwd
    /// (found by a review). Driven through the engine, without the watcher, whose timing
    /// would decide an end-to-end test.
    #[test]
    fn a_new_session_in_a_project_directory_shared_with_another_cwd_is_caught_up() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = fs::canonicalize(tmp.path()).unwrap();
        let (mine, theirs) = (dir.join("my_app"), dir.join("my-app"));
        fs::create_dir_all(&mine).unwrap();
        fs::create_dir_all(&theirs).unwrap();
        let root = dir.join("projects");
        let project = root.join("-w-my-app");
        fs::create_dir_all(&project).unwrap();
        let log = |cwd: &Path| FIXTURE.replace(FIXTURE_CWD, cwd.to_str().unwrap());
        fs::write(project.join("theirs.jsonl"), log(&theirs)).unwrap();
        // Past the listings' settle time, so the directory's listing is kept.
        std::thread::sleep(std::time::Duration::from_millis(300));
        let mut engine = engine(&dir, Roots::default().with(Host::ClaudeCode, vec![root.clone()]));
        let request = || {
            judged_protocol::Request::Challenge(ChallengeArgs {
                binding: "run_20261130_a1b2c3d4_r1_review_7e91c4ab".into(),
                cwd: mine.to_string_lossy().into_owned(),
                max_age_seconds: 600,
                session_root: None,
                started_at: chrono::Utc::now(),
                writes: Vec::new(),
            })
        };
        let mut ask = || {
            let Dispatch::Engine(operation) = Dispatch::of(request(), Caller::Own) else {
                panic!("a challenge is the engine's")
            };
            engine.handle(operation)
        };
        let refused = matches!(ask(), crate::engine::Handled::Answer(Err(_)));
        assert!(refused, "no session of this cwd yet");
        let new = project.join("mine.jsonl");
        fs::write(&new, log(&mine)).unwrap();
        let _ = ask();
        assert!(engine.store.file_by_path(new.to_str().unwrap()).is_some(), "{} was not caught up", new.display());
    }
}
