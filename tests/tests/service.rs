//! `judged service`: the login service's files, checked by `systemd-analyze verify` where
//! it exists, installed and removed under a temporary `XDG_CONFIG_HOME` without touching
//! the machine's service manager (`--files-only`), and the daemon's readiness
//! notification that `Type=notify` waits on.

use judged_tests::bin;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// `judged service …` with its config, data and home in `dir`, and no user service
/// manager to reach (whatever this machine runs): its socket and bus point at nothing.
fn service(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin("judged"))
        .arg("service")
        .args(args)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("JUDGED_HOME", dir.join("home"))
        .env("HOME", dir)
        .env("XDG_RUNTIME_DIR", dir.join("no-runtime-dir"))
        .env("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={}", dir.join("no-bus").display()))
        .output()
        .expect("judged runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn dry_run_prints_the_unit_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = service(dir.path(), &["install", "--dry-run", "--manager", "systemd"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let unit = stdout(&output);
    let exe = std::fs::canonicalize(bin("judged")).unwrap();
    assert!(unit.contains(&format!("ExecStart={} start --foreground\n", exe.display())), "{unit}");
    assert!(unit.contains(&format!("Environment=JUDGED_HOME={}\n", dir.path().join("home").display())), "{unit}");
    assert!(unit.contains("Type=notify\n") && unit.contains("Restart=on-failure\n"), "{unit}");
    assert!(!dir.path().join("config").exists(), "--dry-run writes nothing");

    let output = service(dir.path(), &["install", "--dry-run", "--manager", "launchd"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("<string>dev.judged</string>"));
    assert!(stderr(&output).contains("Library/LaunchAgents/dev.judged.plist"));
}

#[test]
fn install_writes_the_unit_uninstall_removes_only_it() {
    let dir = tempfile::tempdir().unwrap();
    let unit_path = dir.path().join("config/systemd/user/judged.service");
    let output = service(dir.path(), &["install", "--files-only", "--manager", "systemd"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stdout(&output).contains("systemctl --user enable --now judged.service"), "{}", stdout(&output));
    let unit = std::fs::read_to_string(&unit_path).expect("the unit is written");
    assert!(unit.starts_with("# Written by `judged service install`"), "{unit}");

    let status = service(dir.path(), &["status", "--manager", "systemd"]);
    assert!(status.status.success(), "{}", stderr(&status));
    assert!(stdout(&status).contains("installed, as `judged service install` writes it here"), "{}", stdout(&status));

    // What `systemctl enable` links, which uninstall removes when it does not run systemctl.
    let wants = dir.path().join("config/systemd/user/default.target.wants");
    std::fs::create_dir_all(&wants).unwrap();
    std::os::unix::fs::symlink(&unit_path, wants.join("judged.service")).unwrap();
    let output = service(dir.path(), &["uninstall", "--files-only", "--manager", "systemd"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!unit_path.exists() && std::fs::symlink_metadata(wants.join("judged.service")).is_err());
    assert!(stdout(&output).contains("systemctl --user stop judged.service"), "{}", stdout(&output));

    let output = service(dir.path(), &["uninstall", "--files-only", "--manager", "systemd"]);
    assert!(output.status.success() && stdout(&output).contains("not installed"), "{}", stdout(&output));
}

#[test]
fn a_unit_judged_did_not_write_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let unit_path = dir.path().join("config/systemd/user/judged.service");
    std::fs::create_dir_all(unit_path.parent().unwrap()).unwrap();
    let theirs = "[Service]\nExecStart=/usr/bin/their-judged\n";
    std::fs::write(&unit_path, theirs).unwrap();
    for args in [["install", "--files-only"], ["uninstall", "--files-only"]] {
        let output = service(dir.path(), &[args[0], args[1], "--manager", "systemd"]);
        assert!(!output.status.success(), "{args:?}");
        assert!(stderr(&output).contains("was not written by `judged service install`"), "{}", stderr(&output));
    }
    assert_eq!(std::fs::read_to_string(&unit_path).unwrap(), theirs);
    let status = service(dir.path(), &["status", "--manager", "systemd"]);
    assert!(stdout(&status).contains("present, not written by judged"), "{}", stdout(&status));
}

#[test]
fn where_no_user_service_manager_answers_install_says_so_and_what_starts_judged_instead() {
    if Command::new("systemctl").arg("--version").output().is_err() {
        return judged_tests::skip(false, "systemctl is not installed");
    }
    let dir = tempfile::tempdir().unwrap();
    let output = service(dir.path(), &["install", "--manager", "systemd"]);
    assert!(output.status.success(), "the unit is written; nothing failed: {}", stderr(&output));
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(dir.path().join("config/systemd/user/judged.service").is_file(), "{out}");
    for wanted in [
        "no systemd user manager answers here",
        "nothing runs judged at login",
        "the first judge-hook or judge-evidence call starts judged",
        "`judged start` at login",
        "systemctl --user daemon-reload && systemctl --user enable --now judged.service",
    ] {
        assert!(out.contains(wanted), "{wanted} in:\n{out}");
    }
    for unwanted in ["Failed to connect to bus", "once the service manager answers", "running  systemctl"] {
        assert!(!out.contains(unwanted) && !err.contains(unwanted), "{unwanted} in:\n{out}{err}");
    }

    let status = service(dir.path(), &["status", "--manager", "systemd"]);
    assert!(stdout(&status).contains("no systemd user manager answers here"), "{}", stdout(&status));
    assert!(!stdout(&status).contains("Failed to connect to bus"), "{}", stdout(&status));

    let output = service(dir.path(), &["uninstall", "--manager", "systemd"]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!dir.path().join("config/systemd/user/judged.service").exists());
    assert!(stdout(&output).contains("no systemd user manager answers here"), "{}", stdout(&output));
    assert!(!stderr(&output).contains("Failed to connect to bus"), "{}", stderr(&output));
}

#[test]
fn the_written_launchd_agent_is_found_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let output = service(dir.path(), &["install", "--files-only", "--manager", "launchd"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let plist = dir.path().join("Library/LaunchAgents/dev.judged.plist");
    let text = std::fs::read_to_string(&plist).unwrap();
    assert!(text.contains("<key>RunAtLoad</key>"), "{text}");
    assert!(stdout(&output).contains("launchctl bootstrap gui/"), "{}", stdout(&output));
    let output = service(dir.path(), &["uninstall", "--files-only", "--manager", "launchd"]);
    assert!(output.status.success() && !plist.exists(), "{}", stderr(&output));
}

#[test]
fn systemd_analyze_verifies_the_unit() {
    if Command::new("systemd-analyze").arg("--version").output().is_err() {
        return judged_tests::skip(false, "systemd-analyze is not installed");
    }
    let dir = tempfile::tempdir().unwrap();
    let output = service(dir.path(), &["install", "--files-only", "--manager", "systemd"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let unit = dir.path().join("config/systemd/user/judged.service");
    // The system manager's view: no user manager is needed, and it checks every key
    // and that ExecStart's binary exists.
    let verify = Command::new("systemd-analyze").arg("verify").arg(&unit).output().unwrap();
    let complaints: Vec<String> = stderr(&verify)
        .lines()
        .filter(|line| line.contains("judged.service") || line.contains("ignoring"))
        .map(str::to_owned)
        .collect();
    assert!(verify.status.success() && complaints.is_empty(), "systemd-analyze verify: {}", stderr(&verify));

    // And it does complain about a broken one: the check checks.
    let broken = dir.path().join("broken/judged.service");
    std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
    let text = std::fs::read_to_string(&unit).unwrap().replace("Restart=on-failure", "Restart=sometimes");
    std::fs::write(&broken, text).unwrap();
    let verify = Command::new("systemd-analyze").arg("verify").arg(&broken).output().unwrap();
    assert!(stderr(&verify).contains("restart specifier, ignoring"), "{}", stderr(&verify));
}

#[test]
fn under_type_notify_the_daemon_says_ready_once_its_socket_answers() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let notify = dir.path().join("notify");
    let listener = std::os::unix::net::UnixDatagram::bind(&notify).unwrap();
    listener.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut child = judged_tests::judged_foreground(&home, &[], &[])
        .env("NOTIFY_SOCKET", &notify)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("judged starts");
    let mut buffer = [0u8; 256];
    let received = listener.recv(&mut buffer);
    let answers = judged_tests::status_at(&home, Duration::from_secs(30));
    let _ = judged_protocol::call::<serde_json::Value>(
        &home.join("judged.sock"),
        judged_protocol::Request::Shutdown,
        Duration::from_secs(10),
    );
    let exited = child.wait();
    let n = received.expect("a notification within 60 s");
    assert_eq!(&buffer[..n], b"READY=1");
    assert!(answers.is_some(), "the socket answers once READY=1 is sent");
    assert!(exited.is_ok_and(|s| s.success()));
}
