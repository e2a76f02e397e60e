//! Hostile conditions around the daemon (issue 13, "Hostile input"): its database made
//! read-only under it, a full disk, something other than a socket where its socket goes,
//! wrong-typed request arguments, and a log line longer than ingest holds. In each the
//! daemon must give the client a clear error, keep serving other clients, and lose
//! nothing it already stored once the condition is gone.
//!
//! The read-only and full-disk tests need root (`chattr +i`, `mount -t tmpfs` or a loop
//! mount); where the machine does not allow them they print `SKIP: ...` and return (CI
//! included: containers often forbid both).

use judged_tests::{Daemon, bin, judged_foreground, skip, workspace};
use serde_json::{Value, json};
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const COPILOT_FIXTURE: &str = "fixtures/copilot-1.0.102/cross-family-ok/events.jsonl";

// ---------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------

fn copilot_lines() -> Vec<Vec<u8>> {
    let bytes = fs::read(workspace().join(COPILOT_FIXTURE)).expect("fixture");
    bytes.split_inclusive(|&b| b == b'\n').map(<[u8]>::to_vec).collect()
}

/// `len` characters that do not compress (the store compresses lines, and a test that
/// fills the disk must write what it means to).
fn noise(seed: u64, len: usize) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ALPHABET[(state >> 58) as usize] as char
        })
        .collect()
}

/// `n` more Copilot events of about `size` bytes each, chained after `parent`.
fn more_lines(parent: &str, n: usize, size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut parent = parent.to_owned();
    for i in 0..n {
        let id = format!("22222222-0000-4000-8000-{i:012x}");
        let line = json!({
            "type": "assistant.message", "data": {"content": noise(i as u64, size)},
            "id": id, "timestamp": "2026-11-30T01:26:00.000Z", "parentId": parent,
        });
        out.extend_from_slice(&serde_json::to_vec(&line).unwrap());
        out.push(b'\n');
        parent = id;
    }
    out
}

fn last_id(lines: &[Vec<u8>]) -> String {
    let last: Value = serde_json::from_slice(lines.last().unwrap()).unwrap();
    last["id"].as_str().unwrap().to_owned()
}

fn append(path: &Path, bytes: &[u8]) {
    fs::OpenOptions::new().create(true).append(true).open(path).and_then(|mut f| f.write_all(bytes)).expect("append");
}

/// A temp dir with a Copilot root holding session `s1`, and a home for the daemon.
struct Setup {
    tmp: tempfile::TempDir,
    home: PathBuf,
    copilot: PathBuf,
    log: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let tmp = tempfile::tempdir().expect("temp dir");
        let (home, copilot) = (tmp.path().join("home"), tmp.path().join("copilot/session-state"));
        fs::create_dir_all(copilot.join("s1")).unwrap();
        let log = copilot.join("s1/events.jsonl");
        Setup { tmp, home, copilot, log }
    }

    fn start(&self) -> Daemon {
        Daemon::start(&self.home, &[&self.copilot], &[])
    }

    /// A second daemon on a fresh home over the same root: a clean ingest to compare with.
    fn fresh(&self) -> Daemon {
        Daemon::start(&self.tmp.path().join("fresh-home"), &[&self.copilot], &[])
    }

    fn verify_log(&self, session: &str) -> Output {
        Command::new(bin("judged"))
            .args(["verify-log", session])
            .env("JUDGED_HOME", &self.home)
            .env("JUDGED_LOG", "warn")
            .stdin(Stdio::null())
            .output()
            .expect("verify-log runs")
    }
}

fn events(daemon: &Daemon, session: &str) -> Result<Vec<Value>, judged_protocol::ClientError> {
    let reply = daemon.call("events", json!({"session": session, "from": 1, "limit": 100_000}))?;
    Ok(reply.as_array().expect("events is an array").clone())
}

fn chain_head(daemon: &Daemon, session: &str, seq: u64) -> String {
    let head = daemon.call("chain_head", json!({"session": session, "seq": seq})).expect("chain_head answers");
    head["chain_sha256"].as_str().expect("a chain head").to_owned()
}

fn status(daemon: &Daemon) -> Value {
    daemon.call("status", Value::Null).expect("status answers")
}

/// The refusal a client got: the daemon's own message, not a dropped connection.
fn refusal(result: Result<Vec<Value>, judged_protocol::ClientError>, what: &str) -> String {
    match result {
        Err(judged_protocol::ClientError::Refused(body)) => body.message,
        Err(other) => panic!("{what}: the client got no answer from the daemon, only: {other}"),
        Ok(events) => panic!(
            "{what}: answered with {} events as if nothing were wrong (the appended lines could not be stored)",
            events.len()
        ),
    }
}

/// Whether `message` says what is wrong in words a user can act on.
fn names_the_storage_problem(message: &str) -> bool {
    let message = message.to_lowercase();
    ["read-only", "readonly", "permission", "not permitted", "no space", "full", "disk", "database", "store"]
        .iter()
        .any(|word| message.contains(word))
}

/// What stays true once the condition is gone: the first `kept` events and their chain
/// head are what was stored before, the rest is caught up, the log verifies, and a fresh
/// daemon ingesting the same log ends at the same head, before and after a restart.
fn assert_intact_after(setup: &Setup, daemon: Daemon, kept: u64, head_kept: &str) {
    let lines = fs::read(&setup.log).unwrap().iter().filter(|&&b| b == b'\n').count() as u64;
    let stored = events(&daemon, "s1").expect("events answer once the store is writable again");
    assert_eq!(stored.len() as u64, lines, "every complete line is stored once the store is writable again");
    assert_eq!(chain_head(&daemon, "s1", kept), head_kept, "what was stored before is unchanged");
    let output = setup.verify_log("s1");
    assert!(
        output.status.success(),
        "verify-log: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let head = chain_head(&daemon, "s1", lines);
    daemon.stop();

    let daemon = setup.start();
    assert_eq!(events(&daemon, "s1").unwrap().len() as u64, lines, "after a restart");
    assert_eq!(chain_head(&daemon, "s1", lines), head, "after a restart");
    let summary = &daemon.call("sessions", Value::Null).unwrap()[0];
    assert_eq!(summary["tampered"], false, "{summary}");
    daemon.stop();
    let fresh = setup.fresh();
    assert_eq!(chain_head(&fresh, "s1", lines), head, "a clean ingest of the same log ends at the same head");
}

// ---------------------------------------------------------------------------------------
// A read-only database
// ---------------------------------------------------------------------------------------

/// Files made immutable (`chattr +i`: even root cannot write them, through descriptors
/// already open too); made mutable again on drop, so a failing test leaves no debris.
struct Immutable(Vec<PathBuf>);

impl Immutable {
    fn set(paths: Vec<PathBuf>) -> Option<Immutable> {
        let ok =
            Command::new("chattr").arg("+i").args(&paths).stderr(Stdio::null()).status().is_ok_and(|s| s.success());
        let guard = Immutable(paths);
        ok.then_some(guard)
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").args(&self.0).stderr(Stdio::null()).status();
    }
}

#[test]
fn a_read_only_database_is_a_clear_error_other_clients_are_served_and_nothing_is_lost() {
    let setup = Setup::new();
    let lines = copilot_lines();
    append(&setup.log, &lines[..10].concat());
    let daemon = setup.start();
    assert_eq!(events(&daemon, "s1").unwrap().len(), 10);
    let head_10 = chain_head(&daemon, "s1", 10);
    let pid = status(&daemon)["pid"].clone();

    // The database, its WAL, and the directory (no new files either). Not the WAL index
    // (`judged.db-shm`): SQLite writes it through a shared mapping, and a write fault on an
    // immutable file's page is SIGBUS, which no process survives; a read-only database
    // as a user meets it (chmod, a read-only remount) leaves mappings already made alone.
    let paths: Vec<PathBuf> = ["judged.db", "judged.db-wal", ""]
        .iter()
        .map(|name| if name.is_empty() { setup.home.clone() } else { setup.home.join(name) })
        .filter(|path| path.exists())
        .collect();
    let Some(read_only) = Immutable::set(paths) else {
        return skip(false, "chattr +i is not available here (needs root and a filesystem with the immutable flag)");
    };

    append(&setup.log, &lines[10..20].concat());
    let message = refusal(events(&daemon, "s1"), "events while the database is read-only");
    eprintln!("read-only database: the client was told: {message}");
    assert!(names_the_storage_problem(&message), "the error says what is wrong: {message}");
    assert_eq!(status(&daemon)["pid"], pid, "status is still served by the same daemon");
    assert!(daemon.call("sessions", Value::Null).is_ok() || daemon.call("status", Value::Null).is_ok());

    drop(read_only);
    assert_intact_after(&setup, daemon, 10, &head_10);
}

// ---------------------------------------------------------------------------------------
// A full disk
// ---------------------------------------------------------------------------------------

/// A small filesystem mounted at a directory (tmpfs, else an ext4 image on a loop
/// device); unmounted on drop.
struct SmallDisk {
    mount_point: PathBuf,
}

impl SmallDisk {
    fn mount(mount_point: &Path, image: &Path) -> Option<SmallDisk> {
        fs::create_dir_all(mount_point).unwrap();
        let run = |program: &str, args: &[&std::ffi::OsStr]| {
            Command::new(program)
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let point = mount_point.as_os_str();
        if run(
            "mount",
            &["-t".as_ref(), "tmpfs".as_ref(), "-o".as_ref(), "size=8m,mode=0700".as_ref(), "tmpfs".as_ref(), point],
        ) {
            return Some(SmallDisk { mount_point: mount_point.to_path_buf() });
        }
        let file = fs::File::create(image).ok()?;
        file.set_len(16 * 1024 * 1024).ok()?;
        if run("mkfs.ext4", &["-q".as_ref(), "-F".as_ref(), image.as_os_str()])
            && run("mount", &["-o".as_ref(), "loop".as_ref(), image.as_os_str(), point])
        {
            return Some(SmallDisk { mount_point: mount_point.to_path_buf() });
        }
        None
    }

    /// Write a file until the filesystem is full; its path.
    fn fill(&self) -> PathBuf {
        let filler = self.mount_point.join("filler");
        let mut file = fs::File::create(&filler).expect("create filler");
        let chunk = vec![0u8; 64 * 1024];
        loop {
            match file.write(&chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(28) => break, // ENOSPC
                Err(e) => panic!("filling the disk: {e}"),
            }
        }
        // Whatever fits in the last partial block too.
        while file.write(&[0u8; 512]).is_ok_and(|n| n > 0) {}
        let _ = file.sync_all();
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.mount_point).stderr(Stdio::null()).status();
    }
}

#[test]
fn a_full_disk_is_a_clear_error_other_clients_are_served_and_nothing_is_lost() {
    let setup = Setup::new();
    let Some(disk) = SmallDisk::mount(&setup.home, &setup.tmp.path().join("disk.img")) else {
        return skip(false, "cannot mount a small tmpfs or loop filesystem here (needs root, not in a container)");
    };
    let lines = copilot_lines();
    append(&setup.log, &lines.concat());
    let daemon = setup.start();
    assert_eq!(events(&daemon, "s1").unwrap().len(), 43);
    let head_43 = chain_head(&daemon, "s1", 43);
    let pid = status(&daemon)["pid"].clone();

    let filler = disk.fill();
    // More than the WAL can take in pages it already has (800 KB), and little enough that
    // the database and its WAL both fit in the 8 MB once the filler is gone: ingest commits
    // a 1 MiB read at a time, and the checkpoint thread grows the database meanwhile (200
    // lines of 16 KB, two 16 KB pages each, left that to the timing of the checkpoints).
    append(&setup.log, &more_lines(&last_id(&lines), 200, 4 * 1024));
    let message = refusal(events(&daemon, "s1"), "events while the disk is full");
    eprintln!("full disk: the client was told: {message}");
    assert!(names_the_storage_problem(&message), "the error says what is wrong: {message}");
    assert_eq!(status(&daemon)["pid"], pid, "status is still served by the same daemon");

    fs::remove_file(filler).unwrap();
    assert_intact_after(&setup, daemon, 43, &head_43);
    drop(disk);
}

// ---------------------------------------------------------------------------------------
// Issue 13, item 6
// ---------------------------------------------------------------------------------------

/// Run `judged start --foreground` on `home` and wait (at most 30 s) for it to exit.
fn start_expecting_exit(home: &Path, root: &Path) -> Output {
    let mut child = judged_foreground(home, &[root], &[]).stderr(Stdio::piped()).spawn().expect("judged starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = judged_protocol::call::<Value>(
                &home.join("judged.sock"),
                judged_protocol::Request::Shutdown,
                Duration::from_secs(5),
            );
            let _ = child.kill();
            let _ = child.wait();
            panic!("judged started over what is at its socket path instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn whatever_is_at_the_socket_path_that_is_not_a_socket_is_kept_and_start_is_refused() {
    type Place = fn(&Path, &Path);
    let cases: [(&str, Place); 3] = [
        ("a regular file", |socket, _| fs::write(socket, "my notes").unwrap()),
        ("a directory", |socket, _| {
            fs::create_dir(socket).unwrap();
            fs::write(socket.join("inside"), "kept").unwrap();
        }),
        ("a symlink to a regular file", |socket, elsewhere| {
            fs::write(elsewhere, "target").unwrap();
            std::os::unix::fs::symlink(elsewhere, socket).unwrap();
        }),
    ];
    for (what, place) in cases {
        let setup = Setup::new();
        fs::create_dir_all(&setup.home).unwrap();
        fs::set_permissions(&setup.home, fs::Permissions::from_mode(0o700)).unwrap();
        let socket = setup.home.join("judged.sock");
        let elsewhere = setup.tmp.path().join("elsewhere");
        place(&socket, &elsewhere);
        let before = fs::symlink_metadata(&socket).unwrap().file_type();

        let output = start_expecting_exit(&setup.home, &setup.copilot);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{what}: start must be refused");
        assert!(stderr.contains("not a socket"), "{what}: the refusal says why: {stderr}");
        assert!(stderr.contains(socket.to_str().unwrap()), "{what}: the refusal names the path: {stderr}");
        let after = fs::symlink_metadata(&socket).unwrap_or_else(|_| panic!("{what} at the socket path was deleted"));
        assert_eq!(after.file_type(), before, "{what} is left as it was");
        if before.is_dir() {
            assert_eq!(fs::read_to_string(socket.join("inside")).unwrap(), "kept");
        } else if before.is_symlink() {
            assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "target", "the symlink's target is untouched");
        } else {
            assert_eq!(fs::read_to_string(&socket).unwrap(), "my notes");
        }
    }
}

fn raw_request(socket: &Path, body: &Value) -> Value {
    let body = serde_json::to_vec(body).unwrap();
    let mut stream = UnixStream::connect(socket).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    stream.write_all(&frame).unwrap();
    let mut header = [0u8; 4];
    stream.read_exact(&mut header).expect("an answer frame");
    let mut answer = vec![0u8; u32::from_be_bytes(header) as usize];
    stream.read_exact(&mut answer).expect("the whole answer");
    serde_json::from_slice(&answer).expect("the answer is JSON")
}

#[test]
fn wrong_typed_arguments_are_refused_not_defaulted() {
    let setup = Setup::new();
    let daemon = setup.start();
    let socket = daemon.socket();
    let challenge = |max_age: Value| {
        json!({"v": 2, "id": 7, "op": "challenge", "args": {
            "binding": "run_20261130_a1b2c3d4_r1_review_7e91c4ab", "cwd": "/nonexistent/project",
            "max_age_seconds": max_age, "started_at": "2026-12-01T00:00:00Z", "writes": [],
        }})
    };
    let refused = [
        ("max_age_seconds as the string \"60\"", challenge(json!("60"))),
        ("max_age_seconds as a fraction", challenge(json!(60.5))),
        ("max_age_seconds null", challenge(Value::Null)),
        (
            "events limit as a string",
            json!({"v": 2, "id": 8, "op": "events", "args": {"session": "s1", "from": 1, "limit": "10"}}),
        ),
        ("chain_head seq negative", json!({"v": 2, "id": 9, "op": "chain_head", "args": {"session": "s1", "seq": -1}})),
    ];
    for (what, body) in refused {
        let answer = raw_request(&socket, &body);
        let message = answer["error"]["message"].as_str().unwrap_or_else(|| panic!("{what}: not refused: {answer}"));
        assert!(message.contains("invalid type") || message.contains("invalid value"), "{what}: {message}");
        assert_eq!(answer["id"], body["id"], "{what}: the refusal answers that request");
    }
    // The same challenge with a number is not refused for its type (it finds no marker).
    let answer = raw_request(&socket, &challenge(json!(60)));
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(!message.contains("invalid type"), "a number is the right type: {answer}");
    assert!(daemon.call("status", Value::Null).is_ok());
}

/// A line longer than ingest can hold (64 MiB without a newline) is journaled once, with
/// what to do; not again at each later append, nor at each restart.
#[test]
fn a_line_over_64_mib_is_journaled_once_across_appends_and_restarts() {
    let setup = Setup::new();
    let lines = copilot_lines();
    append(&setup.copilot.join("s1/events.jsonl"), &lines[..5].concat());
    let daemon = setup.start();
    let journal = |daemon: &Daemon| status(daemon)["journal_events"].as_u64().unwrap();
    let before = journal(&daemon);
    let huge = setup.copilot.join("huge");
    fs::create_dir(&huge).unwrap();
    let log = huge.join("events.jsonl");
    append(&log, &vec![b'x'; 64 * 1024 * 1024 + 10]);
    daemon.call("sessions", Value::Null).unwrap();
    let _ = daemon.call("events", json!({"session": "huge", "from": 1, "limit": 1}));
    let after_first = journal(&daemon);
    assert!(after_first > before, "the paused log is journaled");
    for _ in 0..3 {
        append(&log, b"xxxx");
        let _ = daemon.call("events", json!({"session": "huge", "from": 1, "limit": 1}));
        daemon.call("sessions", Value::Null).unwrap();
    }
    assert_eq!(journal(&daemon), after_first, "not journaled again at each later append");
    // Other sessions go on.
    append(&setup.log, &lines[5..8].concat());
    assert_eq!(events(&daemon, "s1").unwrap().len(), 8);
    daemon.stop();

    let daemon = setup.start();
    append(&log, b"xxxx");
    let _ = daemon.call("events", json!({"session": "huge", "from": 1, "limit": 1}));
    daemon.call("sessions", Value::Null).unwrap();
    assert_eq!(journal(&daemon), after_first, "not journaled again after a restart: nothing changed");
    fs::remove_file(&log).unwrap();
}
