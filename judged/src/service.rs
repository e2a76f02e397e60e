//! `judged service install | uninstall | status`: run the daemon at login.
//!
//! Linux: a systemd user unit, `$XDG_CONFIG_HOME/systemd/user/judged.service`, of
//! `Type=notify`: the daemon tells systemd it is ready once its socket answers, so
//! `systemctl --user start` and units ordered after it wait for a daemon that answers. macOS: a launchd agent,
//! `~/Library/LaunchAgents/dev.judged.plist`. Either runs `judged start --foreground`
//! with the environment `judged start` resolves its paths and config from (the
//! variables set when `service install` runs are written into the file), restarts it
//! when it fails, and carries a first line that marks it as ours: `uninstall` removes
//! only a file with that line.

pub(crate) mod system;

use crate::install::{find_on_path, same_file};
use judged_protocol::{CatchUp, Request, StatusReport, paths};
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The first line of every file `service install` writes.
const MARK: &str = "Written by `judged service install`; `judged service uninstall` removes it.";
/// The systemd unit's name.
const UNIT: &str = "judged.service";
/// The launchd agent's label.
const LABEL: &str = "dev.judged";

/// The variables `judged start` resolves its paths, config and jurors from; with each
/// host's own that move its logs ([`passed`]), the ones set (and not empty) when `service
/// install` runs are written into the file, so the service runs with the same paths and
/// config and finds the same juror CLIs.
const PASSED: [&str; 6] = ["JUDGED_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", "JUDGED_LOG", "PATH"];

/// [`PASSED`], and every variable a host's default root is read from (`COPILOT_HOME`,
/// `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`, `QWEN_RUNTIME_DIR`, `QWEN_HOME`).
fn passed() -> Vec<&'static str> {
    let hosts =
        judged_core::event::Host::ALL.into_iter().flat_map(|host| judged_core::adapter::of(host).default_root().vars);
    let mut names: Vec<&'static str> = PASSED.into_iter().chain(hosts.map(|(name, _)| *name)).collect();
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(*name));
    names
}

#[derive(clap::Subcommand)]
pub enum ServiceCmd {
    /// Write the login service and enable and start it (or, with --system, a witness under
    /// its own account).
    Install {
        #[command(flatten)]
        target: Target,
        #[command(flatten)]
        system: system::SystemArgs,
        /// Print the file instead of writing it.
        #[arg(long)]
        dry_run: bool,
        /// Write the file only; do not run systemctl / launchctl.
        #[arg(long)]
        files_only: bool,
    },
    /// Stop and disable the service and remove the file `install` wrote (only that).
    Uninstall {
        #[command(flatten)]
        target: Target,
        /// The witness under its own account `install --system` set up (as root).
        #[arg(long)]
        system: bool,
        /// Say what would be removed and run, without doing it.
        #[arg(long)]
        dry_run: bool,
        /// Remove the file only; do not run systemctl / launchctl.
        #[arg(long)]
        files_only: bool,
    },
    /// Whether the service file is installed and what the service manager says of it.
    Status {
        #[command(flatten)]
        target: Target,
        /// The witness under its own account `install --system` set up.
        #[arg(long)]
        system: bool,
    },
}

#[derive(clap::Args)]
pub struct Target {
    /// The service manager (default: launchd on macOS, systemd elsewhere).
    #[arg(long, value_enum)]
    manager: Option<Manager>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Manager {
    Systemd,
    Launchd,
}

impl Target {
    fn manager(&self) -> Manager {
        self.manager.unwrap_or_default()
    }
}

impl Default for Manager {
    /// launchd on macOS, systemd elsewhere.
    fn default() -> Manager {
        if cfg!(target_os = "macos") { Manager::Launchd } else { Manager::Systemd }
    }
}

impl Manager {
    /// The program that talks to it.
    pub fn program(self) -> &'static str {
        match self {
            Manager::Systemd => "systemctl",
            Manager::Launchd => "launchctl",
        }
    }

    /// The file `install` writes for it.
    pub fn file(self) -> PathBuf {
        match self {
            Manager::Systemd => unit_path(),
            Manager::Launchd => plist_path(),
        }
    }

    /// Whether this user's instance of it answers: a systemd user instance (over its
    /// socket in `$XDG_RUNTIME_DIR` or the D-Bus session bus), a launchd GUI domain.
    fn answers(self) -> bool {
        match self {
            Manager::Systemd => Step::new(&["systemctl", "--user", "show", "--property=Version"]).run().is_ok(),
            Manager::Launchd => Step::new(&["launchctl", "print", &launchd_domain()]).run().is_ok(),
        }
    }
}

/// Whether the service manager runs the service: `Err` with what it says instead
/// (`inactive`, `failed`, `not loaded`).
pub fn running(manager: Manager) -> Result<(), String> {
    match manager {
        Manager::Systemd => {
            let state = Step::new(&["systemctl", "--user", "show", UNIT, "--property=ActiveState", "--value"]).run()?;
            if state == "active" { Ok(()) } else { Err(state) }
        }
        Manager::Launchd => Step::new(&["launchctl", "print", &format!("{}/{LABEL}", launchd_domain())])
            .run()
            .map(|_| ())
            .map_err(|_| "not loaded".to_owned()),
    }
}

/// Why the service manager is not asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmanaged {
    /// `--files-only`.
    FilesOnly,
    /// Its program is not on PATH.
    NotFound,
    /// It runs no instance for this user: a container, WSL without systemd, an ssh login
    /// that starts none.
    NoAnswer,
}

/// What starts judged when no service does.
pub const WITHOUT_A_SERVICE: &str = "auto-start covers it: the first judge-hook or judge-evidence call starts \
     judged (unless auto_start = false in config.toml); or run `judged start` at login (in ~/.profile, say)";

impl Unmanaged {
    /// Whether `manager` can be asked, and why not.
    pub fn of(manager: Manager, files_only: bool) -> Option<Unmanaged> {
        if files_only {
            Some(Unmanaged::FilesOnly)
        } else if !program_found(manager.program()) {
            Some(Unmanaged::NotFound)
        } else if !manager.answers() {
            Some(Unmanaged::NoAnswer)
        } else {
            None
        }
    }

    /// What was found, after the program's name.
    pub fn why(self, manager: Manager) -> String {
        match (self, manager) {
            (Unmanaged::FilesOnly, _) => "not run (--files-only)".to_owned(),
            (Unmanaged::NotFound, _) => "not found on PATH".to_owned(),
            (Unmanaged::NoAnswer, Manager::Systemd) => {
                "no systemd user manager answers here (no `systemd --user` instance, no D-Bus session bus), so \
                 nothing runs judged at login"
                    .to_owned()
            }
            (Unmanaged::NoAnswer, Manager::Launchd) => format!(
                "launchd has no {} domain here (no GUI login: an ssh session?), so nothing runs judged at login",
                launchd_domain()
            ),
        }
    }
}

/// Why a `service` command failed; each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("cannot {action} {}: {source}", path.display())]
    Io { action: &'static str, path: PathBuf, source: io::Error },
    #[error(transparent)]
    Write(#[from] judged_io::files::AtomicWriteError),
    #[error("cannot find this executable: {0}")]
    Exe(io::Error),
    #[error(
        "{} was not written by `judged service install`; move it away (or remove it) and run again",
        .0.display()
    )]
    NotOurs(PathBuf),
    #[error("`{command}` failed: {detail}\nrun this yourself once the service manager answers:\n  {then}")]
    Manager { command: String, detail: String, then: String },
    #[error("a witness under its own account is set up by root: run it with sudo")]
    NeedsRoot,
    #[error("name the users the witness serves: --serve USER (repeat for each)")]
    NoneServed,
    #[error("no user `{0}` in /etc/passwd: name a user of this machine, or give the uid")]
    UnknownUser(String),
    #[error(
        "the witness would run {}, which others than root can replace ({} is not root's, or is writable by \
         others); install judged where only root writes (`sudo install -m 0755 {} /usr/local/bin/judged`) and run \
         that one",
        exe.display(),
        by.display(),
        exe.display()
    )]
    Replaceable { exe: PathBuf, by: PathBuf },
}

fn io_error(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> ServiceError + use<> {
    let path = path.to_owned();
    move |source| ServiceError::Io { action, path, source }
}

/// What the service runs: this `judged`, with the environment `judged start` would see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    pub exe: PathBuf,
    /// `(name, value)` for each of [`passed`] that is set, paths made absolute.
    pub env: Vec<(String, String)>,
    /// Where launchd writes the daemon's stderr (systemd sends it to the journal).
    pub log: PathBuf,
}

impl Spec {
    /// The spec for this process's environment.
    pub fn here() -> Result<Spec, ServiceError> {
        let exe = std::env::current_exe().and_then(fs::canonicalize).map_err(ServiceError::Exe)?;
        let env = passed()
            .into_iter()
            .filter_map(|name| {
                let value = std::env::var_os(name).filter(|v| !v.is_empty())?;
                // Paths relative to where `service install` ran mean nothing to the service.
                let value = match name {
                    "PATH" | "JUDGED_LOG" => value,
                    _ => std::path::absolute(&value).map_or(value, PathBuf::into_os_string),
                };
                Some((name.to_owned(), value.to_string_lossy().into_owned()))
            })
            .collect();
        Ok(Spec { exe, env, log: paths::data_dir().join("judged.log") })
    }

    fn is_set(&self, name: &str) -> bool {
        self.env.iter().any(|(n, _)| n == name)
    }
}

/// The systemd user unit's path (`$XDG_CONFIG_HOME`, else `~/.config`).
pub fn unit_path() -> PathBuf {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .unwrap_or_else(|| judged_io::files::home_dir().join(".config"))
        .join("systemd/user")
        .join(UNIT)
}

/// The launchd agent's path.
pub fn plist_path() -> PathBuf {
    judged_io::files::home_dir().join("Library/LaunchAgents").join(format!("{LABEL}.plist"))
}

/// A systemd value with its specifiers (`%`) escaped, double-quoted when it has to be.
fn systemd_quoted(value: &str, exec: bool) -> String {
    let mut escaped = value.replace('%', "%%");
    if exec {
        escaped = escaped.replace('$', "$$");
    }
    if escaped.bytes().all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b'\'' | b'\\' | b';')) {
        escaped
    } else {
        format!("\"{}\"", escaped.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// The text of the systemd user unit.
pub fn systemd_unit(spec: &Spec) -> String {
    let mut unit = format!(
        "# {MARK}\n\
         # More environment (a juror's API key, say): `systemctl --user edit judged` keeps it across reinstalls.\n\
         [Unit]\n\
         Description=judged: witness coding-agent session logs and judge review evidence\n\
         \n\
         [Service]\n\
         # Ready once the socket answers (the daemon sends READY=1 to $NOTIFY_SOCKET).\n\
         Type=notify\n\
         ExecStart={} start --foreground\n",
        systemd_quoted(&spec.exe.to_string_lossy(), true)
    );
    for (name, value) in &spec.env {
        let _ = writeln!(unit, "Environment={}", systemd_quoted(&format!("{name}={value}"), false));
    }
    if !spec.is_set("XDG_RUNTIME_DIR") && !spec.is_set("JUDGED_HOME") {
        // Without it the clients look for the socket in the data dir: so must the daemon.
        unit.push_str("UnsetEnvironment=XDG_RUNTIME_DIR\n");
    }
    unit.push_str(
        "Restart=on-failure\n\
         RestartSec=2\n\
         TimeoutStopSec=30\n\
         \n\
         [Install]\n\
         WantedBy=default.target\n",
    );
    unit
}

fn xml_escaped(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The text of the launchd agent.
pub fn launchd_plist(spec: &Spec) -> String {
    let string = |text: &str| format!("<string>{}</string>", xml_escaped(text));
    let mut plist = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!-- {} -->\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <plist version=\"1.0\">\n\
         <dict>\n\
         \t<key>Label</key>\n\t{}\n\
         \t<key>ProgramArguments</key>\n\
         \t<array>\n\t\t{}\n\t\t<string>start</string>\n\t\t<string>--foreground</string>\n\t</array>\n",
        xml_escaped(MARK).replace("--", "- -"),
        string(LABEL),
        string(&spec.exe.to_string_lossy()),
    );
    if !spec.env.is_empty() {
        plist.push_str("\t<key>EnvironmentVariables</key>\n\t<dict>\n");
        for (name, value) in &spec.env {
            let _ = writeln!(plist, "\t\t<key>{}</key>\n\t\t{}", xml_escaped(name), string(value));
        }
        plist.push_str("\t</dict>\n");
    }
    let _ = write!(
        plist,
        "\t<key>RunAtLoad</key>\n\t<true/>\n\
         \t<key>KeepAlive</key>\n\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n\
         \t<key>ThrottleInterval</key>\n\t<integer>2</integer>\n\
         \t<key>ProcessType</key>\n\t<string>Background</string>\n\
         \t<key>StandardErrorPath</key>\n\t{}\n\
         </dict>\n\
         </plist>\n",
        string(&spec.log.to_string_lossy())
    );
    plist
}

/// The text of the file `install` writes for `manager`.
fn service_text(manager: Manager, spec: &Spec) -> String {
    match manager {
        Manager::Systemd => systemd_unit(spec),
        Manager::Launchd => launchd_plist(spec),
    }
}

/// Whether a service file's text is one `install` wrote.
fn is_ours(text: &str) -> bool {
    text.lines().take(2).any(|line| line.contains(MARK) || line.contains(&xml_escaped(MARK).replace("--", "- -")))
}

fn read(path: &Path) -> Result<Option<String>, ServiceError> {
    match fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error("read", path)(e)),
    }
}

/// One service-manager command line.
struct Step(Vec<String>);

impl Step {
    fn new(args: &[&str]) -> Step {
        Step(args.iter().map(|&a| a.to_owned()).collect())
    }

    fn shown(&self) -> String {
        self.0.iter().map(|a| crate::install::shell_word(a)).collect::<Vec<_>>().join(" ")
    }

    /// Run it; its trimmed stdout, or what went wrong.
    fn run(&self) -> Result<String, String> {
        let output = Command::new(&self.0[0]).args(&self.0[1..]).output().map_err(|e| e.to_string())?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            Err(if stderr.is_empty() { output.status.to_string() } else { stderr })
        }
    }
}

fn shown_all(steps: &[Step]) -> String {
    steps.iter().map(Step::shown).collect::<Vec<_>>().join(" && ")
}

/// Run `steps` in order; the first failure names what is left to run.
fn run_steps(steps: &[Step]) -> Result<(), ServiceError> {
    for (i, step) in steps.iter().enumerate() {
        println!("running  {}", step.shown());
        if let Err(detail) = step.run() {
            return Err(ServiceError::Manager { command: step.shown(), detail, then: shown_all(&steps[i..]) });
        }
    }
    Ok(())
}

/// Run `steps` in order, reporting a failure and going on.
fn run_reporting(steps: &[Step]) {
    for step in steps {
        println!("running  {}", step.shown());
        if let Err(detail) = step.run() {
            eprintln!("judged: warning: `{}` failed: {detail}", step.shown());
        }
    }
}

fn program_found(name: &str) -> bool {
    find_on_path(name, std::env::var_os("PATH").as_deref()).is_some()
}

fn launchd_domain() -> String {
    format!("gui/{}", rustix::process::getuid().as_raw())
}

/// Whether the daemon answers on its socket (whoever started it).
fn daemon_answers() -> Option<u32> {
    let status: Result<StatusReport, _> =
        judged_protocol::call(&paths::socket_path(), Request::Status, Duration::from_secs(2));
    status.ok().map(|s| s.pid)
}

/// Warn when the service would run a `judged` that PATH does not find: a build tree's
/// binary stops working on `cargo clean`.
fn warn_when_not_installed(exe: &Path) {
    let on_path = find_on_path("judged", std::env::var_os("PATH").as_deref());
    if !on_path.is_some_and(|p| same_file(&p, exe)) {
        eprintln!(
            "judged: warning: the service runs {}, which is not the `judged` on PATH; if that is a build tree, \
             `cargo clean` breaks the service: install the tools (`{}`) and run `judged service install` again",
            exe.display(),
            crate::install::INSTALL_COMMAND
        );
    }
}

pub fn run(command: ServiceCmd) -> Result<(), ServiceError> {
    match command {
        ServiceCmd::Install { system, dry_run, files_only, .. } if system.system => {
            system::install(&system, dry_run, files_only)
        }
        ServiceCmd::Install { target, dry_run, files_only, .. } => install(target.manager(), dry_run, files_only),
        ServiceCmd::Uninstall { system: true, dry_run, files_only, .. } => system::uninstall(dry_run, files_only),
        ServiceCmd::Uninstall { target, dry_run, files_only, .. } => uninstall(target.manager(), dry_run, files_only),
        ServiceCmd::Status { system: true, .. } => {
            system::status();
            Ok(())
        }
        ServiceCmd::Status { target, .. } => status(target.manager()),
    }
}

fn install(manager: Manager, dry_run: bool, files_only: bool) -> Result<(), ServiceError> {
    let spec = Spec::here()?;
    let (path, text) = (manager.file(), service_text(manager, &spec));
    if dry_run {
        print!("{text}");
        eprintln!("judged: --dry-run: would write {}", path.display());
        return Ok(());
    }
    let before = read(&path)?;
    if before.as_deref().is_some_and(|b| !is_ours(b)) {
        return Err(ServiceError::NotOurs(path));
    }
    warn_when_not_installed(&spec.exe);
    let changed = before.as_deref() != Some(text.as_str());
    write_service_file(&path, &text, changed)?;
    // A daemon started by hand holds the pid lock: the service's would fail to start.
    let answering = if files_only { None } else { daemon_answers() };
    let mut by_hand = None;
    let steps = match manager {
        Manager::Systemd => {
            let mut steps = vec![Step::new(&["systemctl", "--user", "daemon-reload"])];
            let active = Step::new(&["systemctl", "--user", "is-active", "--quiet", UNIT]).run().is_ok();
            if answering.is_some() && !active {
                by_hand = answering;
                steps.push(Step::new(&["systemctl", "--user", "enable", UNIT]));
            } else {
                steps.push(Step::new(&["systemctl", "--user", "enable", "--now", UNIT]));
                if changed && active {
                    steps.push(Step::new(&["systemctl", "--user", "restart", UNIT]));
                }
            }
            steps
        }
        Manager::Launchd => {
            let domain = launchd_domain();
            let loaded = format!("{domain}/{LABEL}");
            let mut steps = Vec::new();
            if Step::new(&["launchctl", "print", &loaded]).run().is_ok() {
                steps.push(Step::new(&["launchctl", "bootout", &loaded]));
            }
            steps.push(Step::new(&["launchctl", "bootstrap", &domain, &path.to_string_lossy()]));
            steps
        }
    };
    match Unmanaged::of(manager, files_only) {
        Some(Unmanaged::NoAnswer) => {
            println!(
                "{}: {};\n{WITHOUT_A_SERVICE}.\nWhere a user service manager runs, enable and start the service \
                 with:\n  {}",
                manager.program(),
                Unmanaged::NoAnswer.why(manager),
                shown_all(&steps)
            );
            return Ok(());
        }
        Some(unmanaged) => {
            let (program, why) = (manager.program(), unmanaged.why(manager));
            println!("{program}: {why}; to enable and start the service, run:\n  {}", shown_all(&steps));
            return Ok(());
        }
        None => {}
    }
    run_steps(&steps)?;
    match by_hand {
        Some(pid) => println!(
            "enabled; judged is already running outside the service (pid {pid}): the service starts at the next \
             login, or now after `judged stop && systemctl --user start {UNIT}`"
        ),
        None => println!("enabled and started; `judged service status` shows it"),
    }
    Ok(())
}

/// Write the service file when it `changed` (atomically, creating its directory), and say so.
fn write_service_file(path: &Path, text: &str, changed: bool) -> Result<(), ServiceError> {
    if !changed {
        println!("{}: already as wanted", path.display());
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(io_error("create", parent))?;
    }
    judged_io::files::replace_atomically(path, text.as_bytes(), judged_io::files::Keep::NEW, false)?;
    println!("wrote    {}", path.display());
    Ok(())
}

fn uninstall(manager: Manager, dry_run: bool, files_only: bool) -> Result<(), ServiceError> {
    let path = manager.file();
    let Some(text) = read(&path)? else {
        println!("{}: not installed, nothing to remove", path.display());
        return Ok(());
    };
    if !is_ours(&text) {
        return Err(ServiceError::NotOurs(path));
    }
    let loaded = format!("{}/{LABEL}", launchd_domain());
    // Stop and disable before the file goes; reload after; by hand, stop and reload.
    let (before, after, by_hand) = match manager {
        Manager::Systemd => (
            vec![Step::new(&["systemctl", "--user", "disable", "--now", UNIT])],
            vec![Step::new(&["systemctl", "--user", "daemon-reload"])],
            vec![
                Step::new(&["systemctl", "--user", "stop", UNIT]),
                Step::new(&["systemctl", "--user", "daemon-reload"]),
            ],
        ),
        Manager::Launchd => (
            vec![Step::new(&["launchctl", "bootout", &loaded])],
            vec![],
            vec![Step::new(&["launchctl", "bootout", &loaded])],
        ),
    };
    // What `enable` links to the unit, removed here when systemctl does not.
    let wants = path.parent().map(|dir| dir.join("default.target.wants").join(UNIT));
    let wants = wants.filter(|link| fs::read_link(link).is_ok_and(|target| target == path));
    let unmanaged = Unmanaged::of(manager, files_only);
    let managed = unmanaged.is_none();
    if dry_run {
        if managed {
            println!("would run    {}", shown_all(&before));
        }
        println!("would remove {}", path.display());
        if let Some(link) = wants.as_ref().filter(|_| !managed) {
            println!("would remove {}", link.display());
        }
        if managed && !after.is_empty() {
            println!("would run    {}", shown_all(&after));
        }
        return Ok(());
    }
    if managed {
        // A service that is not loaded has nothing to stop: go on and remove the file.
        run_reporting(&before);
    }
    fs::remove_file(&path).map_err(io_error("remove", &path))?;
    println!("removed  {}", path.display());
    if let Some(link) = wants.filter(|link| fs::symlink_metadata(link).is_ok()) {
        fs::remove_file(&link).map_err(io_error("remove", &link))?;
        println!("removed  {}", link.display());
    }
    match unmanaged {
        // The file is gone, as asked; a manager that cannot reload is only reported.
        None => run_reporting(&after),
        // Nothing ran it, so there is nothing to stop.
        Some(Unmanaged::NoAnswer) => println!("{}: {}", manager.program(), Unmanaged::NoAnswer.why(manager)),
        Some(unmanaged) => println!(
            "{}: {}; to stop a running service, run:\n  {}",
            manager.program(),
            unmanaged.why(manager),
            shown_all(&by_hand)
        ),
    }
    Ok(())
}

fn status(manager: Manager) -> Result<(), ServiceError> {
    let spec = Spec::here()?;
    let (path, wanted) = (manager.file(), service_text(manager, &spec));
    let file = match read(&path)? {
        None => "not installed (`judged service install` installs it)".to_owned(),
        Some(text) if !is_ours(&text) => "present, not written by judged".to_owned(),
        Some(text) if text == wanted => "installed, as `judged service install` writes it here".to_owned(),
        Some(_) => {
            "installed, but differs from what `judged service install` writes here (run it again to update)".to_owned()
        }
    };
    println!("{:<9} {}", "file", path.display());
    println!("{:<9} {file}", "state");
    let program = manager.program();
    let step = match manager {
        Manager::Systemd => Step::new(&[
            "systemctl",
            "--user",
            "show",
            UNIT,
            "--property=LoadState,UnitFileState,ActiveState,SubState,MainPID",
        ]),
        Manager::Launchd => Step::new(&["launchctl", "print", &format!("{}/{LABEL}", launchd_domain())]),
    };
    if let Some(unmanaged) = Unmanaged::of(manager, false) {
        println!("{program:<9} {}", unmanaged.why(manager));
        if unmanaged == Unmanaged::NoAnswer {
            println!("{:<9} {WITHOUT_A_SERVICE}", "");
        }
    } else {
        match step.run() {
            Ok(out) if manager == Manager::Systemd => {
                for line in out.lines() {
                    println!("{program:<9} {line}");
                }
            }
            Ok(_) => println!("{program:<9} loaded"),
            Err(detail) => println!("{program:<9} {}", detail.lines().next().unwrap_or_default()),
        }
    }
    match daemon_answers() {
        Some(pid) => println!("{:<9} answers on {} (pid {pid})", "daemon", paths::socket_path().display()),
        None => println!("{:<9} does not answer on {}", "daemon", paths::socket_path().display()),
    }
    Ok(())
}

/// Under systemd (`$NOTIFY_SOCKET` set, `Type=notify`): tell it `READY=1` once the socket
/// at `socket` answers, from a thread that ends when it has told. It asks for the
/// catch-up's progress, answered while a first catch-up of a large root runs (requests
/// made meanwhile wait for it), so a long catch-up does not run into the start timeout.
pub fn notify_when_ready(socket: PathBuf) {
    let Some(target) = std::env::var_os("NOTIFY_SOCKET").filter(|v| !v.is_empty()) else {
        return;
    };
    let spawned = std::thread::Builder::new().name("sd-notify".into()).spawn(move || {
        while judged_protocol::call::<CatchUp>(&socket, Request::Progress, Duration::from_secs(5)).is_err() {
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Err(error) = sd_notify(&target, "READY=1") {
            tracing::warn!(%error, "cannot tell systemd the daemon is ready");
        }
    });
    if let Err(error) = spawned {
        tracing::warn!(%error, "cannot start the readiness thread");
    }
}

/// Send one `sd_notify` datagram to `target` (a path, or `@name` for an abstract socket).
fn sd_notify(target: &OsStr, message: &str) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let socket = std::os::unix::net::UnixDatagram::unbound()?;
    match target.as_bytes().strip_prefix(b"@") {
        #[cfg(target_os = "linux")]
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            let address = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            socket.send_to_addr(message.as_bytes(), &address)?;
        }
        #[cfg(not(target_os = "linux"))]
        Some(_) => return Err(io::Error::new(io::ErrorKind::Unsupported, "abstract sockets are Linux-only")),
        None => {
            socket.send_to(message.as_bytes(), Path::new(target))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(env: &[(&str, &str)]) -> Spec {
        Spec {
            exe: PathBuf::from("/home/me/.cargo/bin/judged"),
            env: env.iter().map(|&(n, v)| (n.to_owned(), v.to_owned())).collect(),
            log: PathBuf::from("/home/me/.local/share/judged/judged.log"),
        }
    }

    /// A variable that moves a host's logs reaches the service, so it watches where the
    /// user's hosts write: each host's, once.
    #[test]
    fn the_service_gets_every_hosts_root_variable_once() {
        let names = passed();
        for name in
            ["COPILOT_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME", "QWEN_RUNTIME_DIR"]
        {
            assert!(names.contains(&name), "{name}: {names:?}");
        }
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
    }

    #[test]
    fn the_unit_runs_judged_in_the_foreground_with_the_same_environment() {
        let unit = systemd_unit(&spec(&[("JUDGED_HOME", "/srv/judged"), ("PATH", "/home/me/.cargo/bin:/usr/bin")]));
        assert!(is_ours(&unit));
        let lines: Vec<&str> = unit.lines().collect();
        for wanted in [
            "[Service]",
            "Type=notify",
            "ExecStart=/home/me/.cargo/bin/judged start --foreground",
            "Environment=JUDGED_HOME=/srv/judged",
            "Environment=PATH=/home/me/.cargo/bin:/usr/bin",
            "Restart=on-failure",
            "[Install]",
            "WantedBy=default.target",
        ] {
            assert!(lines.contains(&wanted), "{wanted} in\n{unit}");
        }
        assert!(!unit.contains("UnsetEnvironment"), "JUDGED_HOME holds the socket: {unit}");
    }

    #[test]
    fn without_a_runtime_dir_the_daemon_does_not_get_systemds() {
        let unit = systemd_unit(&spec(&[]));
        assert!(unit.lines().any(|l| l == "UnsetEnvironment=XDG_RUNTIME_DIR"), "{unit}");
        let unit = systemd_unit(&spec(&[("XDG_RUNTIME_DIR", "/run/user/1000")]));
        assert!(unit.lines().any(|l| l == "Environment=XDG_RUNTIME_DIR=/run/user/1000"), "{unit}");
        assert!(!unit.contains("UnsetEnvironment"));
    }

    #[test]
    fn unit_values_are_quoted_and_specifiers_escaped() {
        let mut spec = spec(&[("JUDGED_HOME", "/home/me/My Stuff/100%\"x\"")]);
        spec.exe = PathBuf::from("/opt/my tools/$judged");
        let unit = systemd_unit(&spec);
        assert!(unit.contains("ExecStart=\"/opt/my tools/$$judged\" start --foreground"), "{unit}");
        assert!(unit.contains("Environment=\"JUDGED_HOME=/home/me/My Stuff/100%%\\\"x\\\"\""), "{unit}");
    }

    #[test]
    fn the_plist_runs_judged_at_load_and_again_when_it_fails() {
        let plist = launchd_plist(&spec(&[("JUDGED_HOME", "/srv/a&b")]));
        assert!(is_ours(&plist), "{plist}");
        for wanted in [
            "<key>Label</key>\n\t<string>dev.judged</string>",
            "<array>\n\t\t<string>/home/me/.cargo/bin/judged</string>\n\t\t<string>start</string>\n\t\t<string>--foreground</string>\n\t</array>",
            "<key>JUDGED_HOME</key>\n\t\t<string>/srv/a&amp;b</string>",
            "<key>RunAtLoad</key>\n\t<true/>",
            "<key>KeepAlive</key>\n\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>",
            "<key>StandardErrorPath</key>\n\t<string>/home/me/.local/share/judged/judged.log</string>",
        ] {
            assert!(plist.contains(wanted), "{wanted} in\n{plist}");
        }
        assert!(plist.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
        assert!(plist.ends_with("</dict>\n</plist>\n"));
        let comment = plist.lines().nth(1).unwrap();
        assert!(comment.starts_with("<!-- ") && comment.ends_with(" -->"));
        assert!(!comment[5..comment.len() - 4].contains("--"), "an XML comment holds no `--`: {comment}");
        assert_eq!(plist.matches("<dict>").count(), plist.matches("</dict>").count());
        assert_eq!(plist.matches("<array>").count(), plist.matches("</array>").count());
    }

    #[test]
    fn a_file_without_our_mark_is_not_ours() {
        assert!(!is_ours("[Unit]\nDescription=someone else's judged\n"));
        assert!(is_ours(&systemd_unit(&spec(&[]))));
    }

    #[test]
    fn readiness_reaches_a_notify_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let listener = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
        sd_notify(path.as_os_str(), "READY=1").unwrap();
        let mut buffer = [0u8; 64];
        let n = listener.recv(&mut buffer).unwrap();
        assert_eq!(&buffer[..n], b"READY=1");
    }
}
