//! Who may talk to the daemon, and what its files let others see (issue 13, "Socket
//! security").
//!
//! Two layers keep other users out: the data dir (and the socket in it) is the owner's
//! alone, and the daemon checks each connection's peer uid. The first test creates a
//! throwaway user (`useradd`, needs root) and runs a real client as that user against
//! both layers: as deployed, and with the directory and socket opened up by hand so that
//! only the peer-uid check stands between that user and the daemon. Where no user can be
//! created it prints `SKIP: ...` (CI included: containers often lack `useradd`).
//!
//! The second test checks the modes of the data dir, socket, witness key and database:
//! created under a permissive umask, and after they were loosened while the daemon was
//! down and it restarts.

use judged_tests::{Daemon, bin, skip, status_at};
use serde_json::Value;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o7777
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

// ---------------------------------------------------------------------------------------
// Another uid
// ---------------------------------------------------------------------------------------

/// A system user made for one test and removed when it ends.
struct ThrowawayUser(String);

impl ThrowawayUser {
    fn create() -> Option<ThrowawayUser> {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!("judgedt{}x{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
        let created = Command::new("useradd")
            .args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", &name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        created.then(|| ThrowawayUser(name))
    }

    /// Run `program args` as this user (`runuser`, else `setpriv`), with `env` set.
    fn run(&self, program: &Path, args: &[&str], env: &[(&str, &Path)]) -> Option<Output> {
        let mut env_args: Vec<String> = env.iter().map(|(k, v)| format!("{k}={}", v.display())).collect();
        env_args.push(program.display().to_string());
        env_args.extend(args.iter().map(|a| (*a).to_owned()));
        let runuser =
            Command::new("runuser").args(["-u", &self.0, "--", "env"]).args(&env_args).stdin(Stdio::null()).output();
        if let Ok(output) = runuser
            && output.status.code() != Some(127)
            && !String::from_utf8_lossy(&output.stderr).contains("runuser:")
        {
            return Some(output);
        }
        let uid = String::from_utf8(Command::new("id").args(["-u", &self.0]).output().ok()?.stdout).ok()?;
        let gid = String::from_utf8(Command::new("id").args(["-g", &self.0]).output().ok()?.stdout).ok()?;
        Command::new("setpriv")
            .args(["--reuid", uid.trim(), "--regid", gid.trim(), "--clear-groups", "--", "env"])
            .args(&env_args)
            .stdin(Stdio::null())
            .output()
            .ok()
    }
}

impl Drop for ThrowawayUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.0).stderr(Stdio::null()).status();
    }
}

#[test]
fn a_client_of_another_uid_is_kept_out_by_the_directory_and_refused_by_the_peer_check() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, copilot) = (tmp.path().join("home"), tmp.path().join("copilot"));
    fs::create_dir_all(&copilot).unwrap();
    let daemon = Daemon::start(&home, &[&copilot], &[]);
    let pid = daemon.call("status", Value::Null).unwrap()["pid"].clone();
    let Some(user) = ThrowawayUser::create() else {
        return skip(false, "cannot create a throwaway user (needs root and useradd)");
    };
    // The other user may run the client and reach the data dir's parent.
    let judged = bin("judged");
    chmod(tmp.path(), 0o755);
    let client = |what: &str| -> Output {
        let output =
            user.run(&judged, &["status", "--json"], &[("JUDGED_HOME", &home), ("JUDGED_LOG", Path::new("error"))]);
        output.unwrap_or_else(|| panic!("{what}: could not run a client as {}", user.0))
    };
    let can_run = user.run(&judged, &["--help"], &[]);
    if !can_run.is_some_and(|o| o.status.success()) {
        return skip(false, &format!("user {} cannot run {} here", user.0, judged.display()));
    }

    // As deployed: the data dir is 0700, so the socket cannot even be reached.
    assert_eq!(mode(&home), 0o700);
    let output = client("as deployed");
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    eprintln!("another uid, data dir 0700: exit {:?}: {}", output.status.code(), said.trim());
    assert!(!output.status.success(), "another uid must not be served: {said}");
    assert!(!said.contains(&format!("\"pid\": {pid}")) && !said.contains(&format!("\"pid\":{pid}")), "{said}");

    // The directory and socket opened up (as a shared-socket setup would): the file
    // system lets the other uid connect, and only the daemon's peer-uid check is left.
    chmod(&home, 0o755);
    chmod(&daemon.socket(), 0o666);
    let output = client("with the socket reachable");
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    eprintln!("another uid, socket reachable: exit {:?}: {}", output.status.code(), said.trim());
    assert!(!said.to_lowercase().contains("permission denied"), "the connect itself must succeed here: {said}");
    assert!(!output.status.success(), "the peer-uid check must refuse another uid: {said}");
    assert!(!said.contains(&format!("\"pid\": {pid}")) && !said.contains(&format!("\"pid\":{pid}")), "{said}");

    // The owner is still served, by the same daemon.
    assert_eq!(daemon.call("status", Value::Null).expect("the owner is served")["pid"], pid);
    chmod(&home, 0o700);
}

// ---------------------------------------------------------------------------------------
// Modes
// ---------------------------------------------------------------------------------------

/// A daemon this test spawned itself; shut down (or killed) on drop, pass or fail.
struct Running {
    home: PathBuf,
    child: Child,
}

impl Drop for Running {
    fn drop(&mut self) {
        let socket = self.home.join("judged.sock");
        let _ = judged_protocol::call::<Value>(&socket, judged_protocol::Request::Shutdown, Duration::from_secs(5));
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.child.try_wait().ok().flatten().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Wait until `child` answers on `home`'s socket; `Err(child)` when it exits first.
fn answering(home: &Path, mut child: Child) -> Result<Running, Child> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while status_at(home, Duration::from_secs(5)).is_none() {
        if let Ok(Some(_)) = child.try_wait() {
            return Err(child);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("judged did not answer in time");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    Ok(Running { home: home.to_path_buf(), child })
}

/// `judged start --foreground` under `umask 000` (the most permissive a user can have).
fn start_with_umask_000(home: &Path, copilot: &Path) -> Running {
    let child = Command::new("sh")
        .args(["-c", "umask 000; exec \"$0\" start --foreground --copilot-root \"$1\""])
        .arg(bin("judged"))
        .arg(copilot)
        .env("JUDGED_HOME", home)
        .env("JUDGED_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("sh runs");
    answering(home, child).unwrap_or_else(|child| panic!("judged exited during start: {:?}", child.id()))
}

/// What in `home` is not its owner's alone: the dir must be 0700, the socket and the key
/// 0600, and nothing (database, WAL, pid file, log) open to group or others.
fn not_private(home: &Path, when: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (path, want) in
        [(home.to_path_buf(), 0o700), (home.join("judged.sock"), 0o600), (home.join("signing.key"), 0o600)]
    {
        if mode(&path) != want {
            problems.push(format!("{when}: {} is {:o}, not {want:o}", path.display(), mode(&path)));
        }
    }
    assert!(home.join("judged.db").exists(), "{when}: the database is in the data dir");
    for entry in fs::read_dir(home).unwrap() {
        let path = entry.unwrap().path();
        if mode(&path) & 0o077 != 0 && !problems.iter().any(|p| p.contains(&format!("{} is", path.display()))) {
            problems.push(format!("{when}: {} is {:o}, open to group or others", path.display(), mode(&path)));
        }
    }
    problems
}

#[test]
fn the_data_dir_socket_key_and_database_stay_private_across_restarts() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, copilot) = (tmp.path().join("home"), tmp.path().join("copilot"));
    fs::create_dir_all(&copilot).unwrap();

    // Created from nothing under umask 000.
    let mut problems = Vec::new();
    let running = start_with_umask_000(&home, &copilot);
    problems.extend(not_private(&home, "first start under umask 000"));
    drop(running);

    // Restarted under umask 000 over what it created.
    let running = start_with_umask_000(&home, &copilot);
    problems.extend(not_private(&home, "restart under umask 000"));
    drop(running);

    // Loosened while it was down: a restart makes them private again, or refuses to run
    // with a key others can read (either is safe; serving with it is not).
    chmod(&home, 0o755);
    chmod(&home.join("signing.key"), 0o644);
    chmod(&home.join("judged.db"), 0o666);
    let child = judged_tests::judged_foreground(&home, &[&copilot], &[]).stderr(Stdio::piped()).spawn().unwrap();
    match answering(&home, child) {
        Ok(_running) => problems.extend(not_private(&home, "restart after the modes were loosened")),
        Err(child) => {
            let output = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(!output.status.success() && stderr.contains("signing.key"), "refused, naming the key: {stderr}");
        }
    }
    assert!(problems.is_empty(), "not private:\n{}", problems.join("\n"));
}
