//! `judged service install --system --serve USER…`: a witness under its own account.
//!
//! The agent's user must not be able to read the witness's key, write its store, edit its
//! config or stop it. So a system account (`judged` by default, made here) runs the
//! daemon from a systemd system unit, with:
//! - its store and key in `/var/lib/judged` (0700, the account's), its config in
//!   `/etc/judged/config.toml` (root's), its socket at [`paths::WITNESS_SOCKET`] (the
//!   directory 0755, the socket open to all, each peer checked against `[server]
//!   allow_users`);
//! - `CAP_DAC_READ_SEARCH` and nothing else: it reads the served users' host logs however
//!   their modes are set and can write none of them (`ProtectHome=read-only` besides). An
//!   ACL would not do: a host that creates its logs owner-only masks out any ACL entry;
//! - a binary only root can replace.
//!
//! The served users' clients find the socket without flags ([`paths::socket_path`]) and
//! never start a daemon of their own for it.

use super::{MARK, ServiceError, Step, io_error, is_ours, read, run_steps, write_service_file};
use crate::install::toml_string;
use judged_daemon::account::{self, Account};
use judged_protocol::paths;
use std::fmt::Write as _;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The system unit.
const UNIT_PATH: &str = "/etc/systemd/system/judged.service";
/// The witness's config.
const CONFIG_PATH: &str = "/etc/judged/config.toml";
/// The witness's store, key and log.
pub(crate) const DATA_DIR: &str = "/var/lib/judged";

/// `--system` and what goes with it.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SystemArgs {
    /// A witness under its own account, for the users named by --serve (as root).
    #[arg(long)]
    pub system: bool,
    /// A user whose host logs the witness reads and whom its socket serves (repeat for
    /// each).
    #[arg(long = "serve", value_name = "USER", requires = "system")]
    pub serve: Vec<String>,
    /// The system account the witness runs as (made when missing).
    #[arg(long, value_name = "NAME", default_value = "judged", requires = "system")]
    pub account: String,
}

/// Install the witness: account, directories, config, unit; then enable and start it.
pub fn install(args: &SystemArgs, dry_run: bool, files_only: bool) -> Result<(), ServiceError> {
    if args.serve.is_empty() {
        return Err(ServiceError::NoneServed);
    }
    let served = args
        .serve
        .iter()
        .map(|who| account::find(who).ok_or_else(|| ServiceError::UnknownUser(who.clone())))
        .collect::<Result<Vec<Account>, _>>()?;
    let exe = std::env::current_exe().and_then(fs::canonicalize).map_err(ServiceError::Exe)?;
    let (config, unit) = (config_text(&served), unit_text(&exe, &args.account));
    if dry_run {
        println!("# {CONFIG_PATH}\n{config}\n# {UNIT_PATH}\n{unit}");
        eprintln!(
            "judged: --dry-run: would make the account {} (if missing), {DATA_DIR} and {}, and write the two files above",
            args.account,
            socket_dir().display()
        );
        return Ok(());
    }
    if !rustix::process::geteuid().is_root() {
        return Err(ServiceError::NeedsRoot);
    }
    only_root_replaces(&exe)?;
    let witness = ensure_account(&args.account)?;
    own_dir(Path::new(DATA_DIR), &witness, 0o700)?;
    own_dir(&socket_dir(), &witness, 0o755)?;
    // The config may hold what its jurors need (an API key in a juror's `env`): root's,
    // readable by the witness's group alone, never by a served user.
    write_ours(Path::new(CONFIG_PATH), &config, Readers::Group(&witness))?;
    write_ours(Path::new(UNIT_PATH), &unit, Readers::Everyone)?;
    let steps = [Step::new(&["systemctl", "daemon-reload"]), Step::new(&["systemctl", "enable", "--now", "judged"])];
    if files_only || !Path::new("/run/systemd/system").is_dir() {
        let why = if files_only { "not run (--files-only)" } else { "no systemd runs this machine" };
        println!(
            "systemctl: {why}; enable and start the witness with:\n  {}\nor run it as the unit does: User={}, \
             AmbientCapabilities=CAP_DAC_READ_SEARCH, {}",
            steps.iter().map(Step::shown).collect::<Vec<_>>().join(" && "),
            witness.name,
            ENVIRONMENT.join(" ")
        );
    } else {
        run_steps(&steps)?;
    }
    let names: Vec<&str> = served.iter().map(|a| a.name.as_str()).collect();
    println!(
        "the witness runs as {} (uid {}) and serves {}: their judge-evidence and judge-hook use {} without flags; \
         each of them should stop any judged of their own (`judged stop`, `judged service uninstall`), which \
         would be asked first",
        witness.name,
        witness.uid,
        names.join(", "),
        paths::WITNESS_SOCKET
    );
    Ok(())
}

/// Stop and disable the witness and remove the files `install` wrote (only those); the
/// store and the account stay.
pub fn uninstall(dry_run: bool, files_only: bool) -> Result<(), ServiceError> {
    let ours: Vec<&Path> = [Path::new(UNIT_PATH), Path::new(CONFIG_PATH)]
        .into_iter()
        .filter(|p| read(p).ok().flatten().is_some_and(|text| is_ours(&text)))
        .collect();
    // The account the unit ran as (`--account` may have named another than `judged`).
    let unit = read(Path::new(UNIT_PATH)).ok().flatten().unwrap_or_default();
    let account = unit.lines().find_map(|line| line.strip_prefix("User=")).unwrap_or("judged").to_owned();
    if dry_run {
        for path in &ours {
            println!("would remove {}", path.display());
        }
        return Ok(());
    }
    if !rustix::process::geteuid().is_root() {
        return Err(ServiceError::NeedsRoot);
    }
    if !files_only && Path::new("/run/systemd/system").is_dir() {
        run_steps(&[Step::new(&["systemctl", "disable", "--now", "judged"])])?;
    }
    for path in ours {
        fs::remove_file(path).map_err(io_error("remove", path))?;
        println!("removed  {}", path.display());
    }
    println!("kept the store {DATA_DIR} and the account: `userdel {account} && rm -r {DATA_DIR}` removes them");
    Ok(())
}

/// Whether the witness is set up, what systemd says of it, and whether it answers (this
/// user, when it does not serve them, is told so by the witness itself).
pub fn status() {
    let unit = match read(Path::new(UNIT_PATH)) {
        Ok(None) => "not installed (`sudo judged service install --system --serve USER` installs it)".to_owned(),
        Ok(Some(text)) if is_ours(&text) => "installed".to_owned(),
        Ok(Some(_)) => "present, not written by judged".to_owned(),
        Err(error) => error.to_string(),
    };
    println!("{:<9} {UNIT_PATH}: {unit}", "unit");
    if Path::new("/run/systemd/system").is_dir() {
        let step = Step::new(&["systemctl", "show", "judged", "--property=ActiveState,SubState,MainPID"]);
        match step.run() {
            Ok(state) => println!("{:<9} {}", "systemd", state.replace('\n', ", ")),
            Err(detail) => println!("{:<9} `{}` failed: {detail}", "systemd", step.shown()),
        }
    }
    let socket = Path::new(paths::WITNESS_SOCKET);
    let answer: Result<judged_protocol::StatusReport, _> =
        judged_protocol::call(socket, judged_protocol::Request::Status, std::time::Duration::from_secs(2));
    match answer {
        Ok(status) => println!("{:<9} answers on {} (pid {})", "daemon", socket.display(), status.pid),
        Err(error) => println!("{:<9} {error}", "daemon"),
    }
}

/// The directory of [`paths::WITNESS_SOCKET`].
fn socket_dir() -> PathBuf {
    Path::new(paths::WITNESS_SOCKET).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// How the unit places the store, the socket and the config ([`paths`]).
const ENVIRONMENT: [&str; 4] =
    ["HOME=/var/lib/judged", "XDG_DATA_HOME=/var/lib", "XDG_RUNTIME_DIR=/run", "XDG_CONFIG_HOME=/etc"];

fn config_text(served: &[Account]) -> String {
    let roots = |under: &str| {
        let listed: Vec<String> =
            served.iter().map(|a| toml_string(&a.home.join(under).display().to_string())).collect();
        format!("[{}]", listed.join(", "))
    };
    let users: Vec<String> = served.iter().map(|a| toml_string(&a.name)).collect();
    let mut text =
        format!("# {MARK}\n# The witness account's config: whose host logs it reads, and who may use its socket.\n");
    for host in judged_core::event::Host::ALL {
        // judged keeps its logs of OpenCode's sessions itself, in the witness's own data
        // directory: what it reads of each served user is their OpenCode database.
        if host == judged_core::event::Host::OpenCode {
            let _ = writeln!(text, "opencode_databases = {}", roots(".local/share/opencode/opencode.db"));
            continue;
        }
        let log = judged_core::adapter::of(host);
        let _ = writeln!(text, "{} = {}", log.roots_key(), roots(log.default_root().under_home));
    }
    // What a served user writes in a repository never sets this witness's gate (a
    // project's [jury] it never runs at all: see ProjectTrust).
    text.push_str("\n[gate]\ntrust_project_files = false\n");
    let _ = write!(text, "\n[server]\nallow_users = [{}]\n", users.join(", "));
    text
}

fn unit_text(exe: &Path, account: &str) -> String {
    let environment: Vec<String> = ENVIRONMENT.iter().map(|e| format!("Environment={e}")).collect();
    format!(
        "# {MARK}\n[Unit]\nDescription=judged: the review witness, under its own account\n\n[Service]\nType=notify\n\
         User={account}\nGroup={account}\nExecStart={} start --foreground\n{}\n\
         AmbientCapabilities=CAP_DAC_READ_SEARCH\nCapabilityBoundingSet=CAP_DAC_READ_SEARCH\nNoNewPrivileges=yes\n\
         StateDirectory=judged\nStateDirectoryMode=0700\nRuntimeDirectory=judged\nRuntimeDirectoryMode=0755\n\
         ProtectSystem=strict\nProtectHome=read-only\nPrivateTmp=yes\nRestart=on-failure\n\n\
         [Install]\nWantedBy=multi-user.target\n",
        exe.display(),
        environment.join("\n")
    )
}

/// Refuse a binary the served users could replace: it and every directory above it must
/// be root's and writable by nobody else (a sticky directory, as `/tmp`, protects what
/// root owns in it).
fn only_root_replaces(exe: &Path) -> Result<(), ServiceError> {
    for path in exe.ancestors() {
        let meta = fs::metadata(path).map_err(io_error("inspect", path))?;
        let sticky_dir = meta.is_dir() && meta.mode() & 0o1000 != 0;
        if meta.uid() != 0 || (meta.mode() & 0o022 != 0 && !sticky_dir) {
            return Err(ServiceError::Replaceable { exe: exe.to_owned(), by: path.to_owned() });
        }
    }
    Ok(())
}

/// The system account `name`, made when missing.
fn ensure_account(name: &str) -> Result<Account, ServiceError> {
    if let Some(found) = account::find(name) {
        return Ok(found);
    }
    let shell =
        ["/usr/sbin/nologin", "/sbin/nologin"].into_iter().find(|s| Path::new(s).exists()).unwrap_or("/bin/false");
    run_steps(&[Step::new(&[
        "useradd",
        "--system",
        "--user-group",
        "--home-dir",
        DATA_DIR,
        "--no-create-home",
        "--shell",
        shell,
        name,
    ])])?;
    account::find(name).ok_or_else(|| ServiceError::UnknownUser(name.to_owned()))
}

/// `dir`, made if needed, owned by `owner` with `mode`.
fn own_dir(dir: &Path, owner: &Account, mode: u32) -> Result<(), ServiceError> {
    fs::create_dir_all(dir).map_err(io_error("create", dir))?;
    std::os::unix::fs::chown(dir, Some(owner.uid), Some(owner.gid)).map_err(io_error("hand over", dir))?;
    fs::set_permissions(dir, fs::Permissions::from_mode(mode)).map_err(io_error("set the mode of", dir))?;
    println!("made     {} ({mode:o}, {})", dir.display(), owner.name);
    Ok(())
}

/// Who may read a file root writes for the witness.
enum Readers<'a> {
    /// Root, and the group of this account (0640).
    Group(&'a Account),
    /// Everyone (0644).
    Everyone,
}

/// Write `text` to `path` (root's, readable by `readers`) unless a file there is not ours.
fn write_ours(path: &Path, text: &str, readers: Readers) -> Result<(), ServiceError> {
    let before = read(path)?;
    if before.as_deref().is_some_and(|b| !is_ours(b)) {
        return Err(ServiceError::NotOurs(path.to_owned()));
    }
    write_service_file(path, text, before.as_deref() != Some(text))?;
    let mode = match readers {
        Readers::Group(account) => {
            std::os::unix::fs::chown(path, Some(0), Some(account.gid)).map_err(io_error("hand over", path))?;
            0o640
        }
        Readers::Everyone => 0o644,
    };
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(io_error("set the mode of", path))
}
