//! The gate's config in a user's day: an edit of `config.toml` or `.judged.toml` takes
//! effect without a restart, an edit that does not parse keeps the last good version and
//! says so, every table refuses a key it does not know, and every decision names the
//! config it was made under.

use judged_tests::{Daemon, judge_hook, judged_foreground};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// Fields drop in order: the daemon stops before its home directory is removed.
struct Setup {
    daemon: Daemon,
    home: PathBuf,
    project: PathBuf,
    _dir: tempfile::TempDir,
}

impl Setup {
    fn config(&self) -> PathBuf {
        self.home.join("config.toml")
    }

    /// Replace config.toml as an editor saves it: written aside, then renamed over.
    fn edit_config(&self, text: &str) {
        replace(&self.config(), text);
    }

    fn hook(&self, subject: &str) -> Output {
        self.hook_on("TaskCompleted", subject)
    }

    /// A Claude Code hook of `event` about a task.
    fn hook_on(&self, event: &str, subject: &str) -> Output {
        let payload = json!({
            "session_id": "5d1c2b3a-7e8f-4a90-b1c2-d3e4f5a6b7c8", "cwd": self.project, "hook_event_name": event,
            "task_id": "7", "task_subject": subject, "task_description": "Totals must round half-even",
        });
        judge_hook(&self.home, payload.to_string().as_bytes(), &[])
    }

    fn decisions(&self) -> Vec<Value> {
        self.daemon.call("decisions", Value::Null).expect("decisions").as_array().cloned().unwrap_or_default()
    }

    fn status(&self) -> Value {
        self.daemon.call("status", Value::Null).expect("status")
    }
}

fn replace(path: &Path, text: &str) {
    let aside = path.with_extension("saving");
    std::fs::write(&aside, text).unwrap();
    std::fs::rename(&aside, path).unwrap();
}

/// A daemon whose config.toml holds `config` (the hook starts no daemon of its own).
fn setup(config: &str) -> Setup {
    let dir = tempfile::tempdir().expect("temp dir");
    let (home, project) = (dir.path().join("home"), dir.path().join("project"));
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("config.toml"), format!("auto_start = false\n{config}")).unwrap();
    let daemon = Daemon::start(&home, &[&dir.path().join("sessions")], &[]);
    Setup { daemon, home, project, _dir: dir }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn sha256_of(path: &Path) -> String {
    judged_core::chain::to_hex(&judged_core::chain::sha256(&std::fs::read(path).unwrap()))
}

#[test]
fn an_edit_of_config_toml_takes_effect_without_a_restart() {
    let s = setup("");
    let blocked = s.hook("Fix cart rounding");
    assert_eq!(blocked.status.code(), Some(2));
    assert!(stderr(&blocked).contains("(policy `evidence`, from defaults)"), "{}", stderr(&blocked));

    s.edit_config("auto_start = false\n[gate]\npolicy = \"off\"\n");
    let allowed = s.hook("Fix cart rounding");
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr(&allowed));
    let decisions = s.decisions();
    assert_eq!(decisions[1]["policy"], "off");
    assert_eq!(decisions[1]["config"][0]["sha256"], sha256_of(&s.config()));
    assert_eq!(s.status()["config"]["file"]["sha256"], sha256_of(&s.config()));
}

#[test]
fn an_edit_that_does_not_parse_keeps_the_last_good_config_and_says_where() {
    let s = setup("[gate]\npolicy = \"evidence\"\n");
    let good = sha256_of(&s.config());
    s.edit_config("auto_start = false\n[gate]\npolcy = \"off\"\n");

    let blocked = s.hook("Fix cart rounding");
    assert_eq!(blocked.status.code(), Some(2), "the last good policy, evidence, is in force");
    let message = stderr(&blocked);
    let config = s.config().display().to_string();
    for said in [
        format!("Decided under: {config} (sha256 {})", &good[..12]),
        format!("Not applied: {config} line 3: unknown field `polcy`"),
        "(did you mean `policy`?)".to_owned(),
        "takes effect at the next decision (no restart)".to_owned(),
    ] {
        assert!(message.contains(&said), "`{said}` not in: {message}");
    }
    let rejected = &s.status()["config"]["rejected"];
    assert!(rejected["error"].as_str().unwrap().contains("line 3: unknown field `polcy`"), "{rejected}");
    assert_eq!(rejected["sha256"], sha256_of(&s.config()));
    assert_eq!(s.decisions()[0]["config"][0]["sha256"], good, "the decision names the version in force");

    s.edit_config("auto_start = false\n[gate]\npolicy = \"off\"\n");
    assert_eq!(s.hook("Fix cart rounding").status.code(), Some(0), "the fix takes effect");
    assert_eq!(s.status()["config"]["rejected"], Value::Null);
}

#[test]
fn a_project_file_edit_takes_effect_and_a_broken_one_keeps_its_last_good_version() {
    let s = setup("[gate]\ntrust_project_files = true\n");
    let file = s.project.join(".judged.toml");
    replace(&file, "[gate]\npolicy = \"off\"\n");
    assert_eq!(s.hook("Fix cart rounding").status.code(), Some(0));
    let good = sha256_of(&file);
    assert_eq!(s.decisions()[0]["config"][1], json!({"path": file, "sha256": good}));

    replace(&file, "[gate]\npolicy = \"off\"\nevnts = [\"Stop\"]\n");
    let allowed = s.hook("Fix cart rounding");
    assert_eq!(allowed.status.code(), Some(0), "the last good version (off) stays in force");
    replace(&file, "[gate]\npolicy = \"evidence\"\n");
    let blocked = s.hook("Fix cart rounding");
    assert_eq!(blocked.status.code(), Some(2));
    assert!(stderr(&blocked).contains(&format!("{} (sha256 {})", file.display(), &sha256_of(&file)[..12])));
}

#[test]
fn a_project_file_with_an_unknown_key_is_named_with_its_line_and_the_nearest_key() {
    let s = setup("");
    let file = s.project.join(".judged.toml");
    std::fs::write(&file, "[gate]\nfreshnes_seconds = 60\n").unwrap();
    let blocked = s.hook("Fix cart rounding");
    assert_eq!(blocked.status.code(), Some(2), "on_error = block");
    let message = stderr(&blocked);
    let said = format!("{} line 2: unknown field `freshnes_seconds`", file.display());
    assert!(message.contains(&said), "{message}");
    assert!(message.contains("(did you mean `freshness_seconds`?)"), "{message}");
}

/// `judged start` with the config refused: the error on stderr, as the terminal shows it.
fn refused_start(config: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let mut child = judged_foreground(dir.path(), &[&dir.path().join("sessions")], &[])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A config taken in silence starts a daemon that never exits: the test fails, not hangs.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("judged started on {config:?}: the config was accepted");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1), "judged refuses to start on {config:?}");
    stderr(&output)
}

#[test]
fn every_table_refuses_an_unknown_key_at_the_key_with_the_nearest_valid_name() {
    let cases = [
        ("[gate]\npolcy = \"panel\"\n", 2, "polcy", Some("policy")),
        (
            "[gate]\n[[gate.projects]]\npath = \"/x\"\npolicy = \"off\"\non_eror = \"allow\"\n",
            5,
            "on_eror",
            Some("on_error"),
        ),
        ("[server]\nidle_second = 3\n", 2, "idle_second", Some("idle_seconds")),
        ("auto_strat = false\n", 1, "auto_strat", Some("auto_start")),
        ("[gate]\ncolour = \"red\"\n", 2, "colour", None),
    ];
    for (config, line, key, nearest) in cases {
        let error = refused_start(config);
        // The line up to its `=`: the key, never the value, which may be an API key.
        let text = config.lines().nth(line - 1).unwrap();
        let shown = format!("{} …", &text[..=text.find('=').unwrap()]);
        let caret = format!("{line} | {shown}\n  | {}\n", "^".repeat(key.len()));
        assert!(error.contains(&caret), "the caret is not under `{key}`:\n{error}");
        assert!(error.contains(&format!("unknown field `{key}`")), "{error}");
        match nearest {
            Some(nearest) => assert!(error.contains(&format!("help: did you mean `{nearest}`?")), "{error}"),
            None => assert!(!error.contains("did you mean"), "{error}"),
        }
    }
}

#[test]
fn sighup_reads_the_config_again_and_leaves_the_daemon_serving() {
    let s = setup("");
    s.edit_config("auto_start = false\n[gate]\npolicy = \"off\"\n");
    let status = std::process::Command::new("kill").args(["-HUP", &s.daemon.pid().to_string()]).status().unwrap();
    assert!(status.success());
    // The reload happens on the engine's thread; the daemon answers after it as before.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while s.status()["config"]["file"]["sha256"] != sha256_of(&s.config()) {
        assert!(std::time::Instant::now() < deadline, "SIGHUP did not reload config.toml");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(s.hook("Fix cart rounding").status.code(), Some(0));
}

#[test]
fn a_changed_root_is_reported_as_waiting_for_a_restart() {
    let s = setup("");
    s.edit_config("auto_start = false\nclaude_roots = [\"/elsewhere\"]\n");
    assert_eq!(s.status()["config"]["restart_needed"], json!(["claude_roots"]));
}

/// A config stricter than the defaults: it gates Claude Code's `TaskCreated` too, which
/// the defaults let through.
fn strict_setup() -> Setup {
    let s = setup("[gate]\nevents = [\"TaskCompleted\", \"TaskCreated\"]\n");
    assert_eq!(s.strict_hook().status.code(), Some(2), "strict: TaskCreated is gated");
    s
}

impl Setup {
    /// The hook the strict config blocks and the defaults allow.
    fn strict_hook(&self) -> Output {
        self.hook_on("TaskCreated", "Fix cart rounding")
    }
}

/// An editor that saves in place truncates config.toml and writes it again: hooks that
/// come meanwhile are decided under the version in force, never under the defaults (which
/// would let `TaskCreated` through).
#[test]
fn a_config_rewritten_in_place_while_hooks_run_never_opens_the_gate() {
    let s = strict_setup();
    let text = std::fs::read(s.config()).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let allowed = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            use std::io::Write;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut file = std::fs::File::create(s.config()).unwrap(); // truncates in place
                std::thread::sleep(Duration::from_millis(1));
                file.write_all(&text).unwrap();
            }
        });
        let allowed = (0..60).filter(|_| s.strict_hook().status.code() != Some(2)).count();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap();
        allowed
    });
    assert_eq!(allowed, 0, "hooks allowed while config.toml was being rewritten in place");
}

/// A config removed (or emptied) is not the defaults at once: the last good version stays
/// in force until the file has been gone for the settle time, and that change is journaled.
#[test]
fn a_removed_config_keeps_the_gate_shut_until_the_removal_settles() {
    let s = strict_setup();
    std::fs::write(s.config(), "").unwrap();
    assert_eq!(s.strict_hook().status.code(), Some(2), "emptied: the last good version stays");
    std::fs::remove_file(s.config()).unwrap();
    let output = s.strict_hook();
    assert_eq!(output.status.code(), Some(2), "removed: the last good version stays: {}", stderr(&output));
    std::thread::sleep(Duration::from_millis(2500));
    let output = s.strict_hook();
    assert_eq!(output.status.code(), Some(0), "removed for good, the defaults: {}", stderr(&output));
    let status = s.status();
    assert_eq!(status["config"]["file"]["sha256"], Value::Null, "the defaults are in force: {status}");
}

/// A config.toml that is a link to a FIFO would hang a reader in `open`: it is refused at
/// once, the daemon keeps answering, and the last good version stays in force.
#[test]
fn a_config_that_is_a_fifo_is_refused_and_the_daemon_keeps_answering() {
    let s = strict_setup();
    let fifo = s.home.join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    std::fs::remove_file(s.config()).unwrap();
    std::os::unix::fs::symlink(&fifo, s.config()).unwrap();
    let output = s.hook("Fix cart rounding");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("is a FIFO, not a regular file"), "{}", stderr(&output));
    let status = s.status();
    assert!(status["config"]["rejected"]["error"].as_str().is_some_and(|e| e.contains("FIFO")), "{status}");
}

/// A project file of more than a config file may be is refused, not read whole at every
/// decision.
#[test]
fn a_huge_project_file_is_refused_by_its_size() {
    let s = setup("");
    let file = std::fs::File::create(s.project.join(".judged.toml")).unwrap();
    file.set_len(64 * 1024 * 1024).unwrap();
    let output = s.hook("Fix cart rounding");
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("more than a config file may be"), "{}", stderr(&output));
}

/// Plain `judged status` shows what `--json` holds about the config: the file in force, an
/// edit that was not applied (and why), and the settings that wait for a restart.
#[test]
fn plain_status_names_the_config_in_force_an_edit_not_applied_and_a_restart_needed() {
    let s = setup("");
    let plain = || {
        let output = std::process::Command::new(judged_tests::bin("judged"))
            .arg("status")
            .env("JUDGED_HOME", &s.home)
            .output()
            .expect("judged status runs");
        assert!(output.status.success(), "judged status: {}", stderr(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let row = |text: &str, key: &str| {
        text.lines().find_map(|line| line.strip_prefix(&format!("{key:<16} "))).map(str::to_owned)
    };
    let text = plain();
    let in_force = format!("{} (sha256 {}), read ", s.config().display(), &sha256_of(&s.config())[..12]);
    assert!(row(&text, "config").is_some_and(|r| r.starts_with(&in_force)), "{text}");
    assert_eq!(row(&text, "config_rejected"), None, "{text}");
    assert_eq!(row(&text, "restart_needed"), None, "{text}");
    assert_eq!(
        row(&text, "catch_up").as_deref(),
        Some("done: 0/0 logs, 0.0/0.0 MiB; 0 bytes of the logs not read yet")
    );

    s.edit_config("auto_start = false\n[gate]\npolcy = \"off\"\n");
    let text = plain();
    assert!(row(&text, "config").is_some_and(|r| r.starts_with(&in_force)), "the last good version stays: {text}");
    let rejected = row(&text, "config_rejected").unwrap_or_else(|| panic!("no config_rejected row: {text}"));
    assert!(rejected.starts_with("an edit read "), "{rejected}");
    assert!(
        rejected.contains(&format!(" was not applied: {} line 3: unknown field `polcy`", s.config().display())),
        "{rejected}"
    );
    assert!(rejected.ends_with("the config above is in force until the file is fixed (no restart needed)"));

    s.edit_config("auto_start = false\nclaude_roots = [\"/elsewhere\"]\n");
    let text = plain();
    assert_eq!(row(&text, "config_rejected"), None, "{text}");
    assert_eq!(
        row(&text, "restart_needed").as_deref(),
        Some("claude_roots changed in the file and take effect at the next start: `judged stop && judged start`"),
        "{text}"
    );
}
