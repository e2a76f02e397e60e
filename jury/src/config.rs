//! The `[jury]` table of `config.toml` (or of a project's `.judged.toml`).
//!
//! Users and scripts write these names, so they are kept exactly as issue 12 gives them.
//! Deserializing only checks shapes; [`JuryConfig::validate`] checks meaning and turns the
//! table into a [`Jury`]: every name resolved, every juror's family derived from its model
//! (never declared) with the gate's table of families (docs/spec/jury.md §2.2), and every
//! mistake reported with the field to fix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest a jury or one juror may be given: a day (longer than any hook waits, and
/// within what the clock can add).
pub const MAX_SECONDS: u64 = 24 * 60 * 60;

use judged_core::family::{self, Table};
use serde::{Deserialize, Serialize};

/// The confidence at or above which an agreeing stage 1 is trusted (inclusive).
pub const DEFAULT_THRESHOLD: u32 = 80;
/// The budget of the whole cascade, escalation included.
pub const DEFAULT_DEADLINE_SECONDS: u64 = 100;
/// What a hook timeout must add to the cascade deadline: reading the payload, the socket
/// round trip and writing the answer must still fit after the slowest jury.
pub const HOOK_TIMEOUT_MARGIN_SECONDS: u64 = 20;

/// The `[jury]` table as written.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JuryConfig {
    /// Names of the jurors that run first, in parallel.
    pub stage_1: Vec<String>,
    /// The juror, or the jurors to choose from, that break a tie.
    pub tiebreaker: Tiebreaker,
    /// The confidence (0..=100) every agreeing juror must reach for stage 1 to stand;
    /// read as `u32` so that an out-of-range value is named, not a TOML type error.
    #[serde(default = "default_threshold")]
    pub threshold: u32,
    /// One deadline for the whole cascade, tiebreaker included.
    #[serde(default = "default_deadline")]
    pub deadline_seconds: u64,
    /// Every juror the stages may name.
    #[serde(default)]
    pub jurors: Vec<JurorConfig>,
}

/// `tiebreaker = "name"` or `tiebreaker = ["a", "b"]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Tiebreaker {
    /// One juror, always used (if it is cross-family).
    One(String),
    /// Candidates in order of preference; the first fitting one is used.
    Many(Vec<String>),
}

impl Tiebreaker {
    fn names(&self) -> &[String] {
        match self {
            Tiebreaker::One(name) => std::slice::from_ref(name),
            Tiebreaker::Many(names) => names,
        }
    }
}

/// One `[[jury.jurors]]` entry as written.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JurorConfig {
    /// How stages, progress and the packet refer to this juror; unique.
    pub name: String,
    /// Which CLI it is, which decides argv, environment and the identity check.
    pub preset: Preset,
    /// The model to ask for; the juror's family is derived from it, never declared.
    pub model: String,
    /// The CLI to run; the preset's program name on `PATH` when absent.
    #[serde(default)]
    pub bin: Option<PathBuf>,
    /// Appended to the preset's argv; `{model}` is replaced as in `command`.
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// Variables set for the CLI (after `env_strip`), e.g. its API key.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Inherited variables removed before the CLI starts, e.g. another provider's key.
    #[serde(default)]
    pub env_strip: Vec<String>,
    /// This juror's own limit; the cascade deadline bounds it anyway.
    #[serde(default)]
    pub timeout_seconds: Option<u64>,
    /// argv of a `preset = "command"` juror; `{model}` is replaced by `model`.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// Pay-per-token list price of this juror, for the cost estimate only.
    #[serde(default)]
    pub price: Option<Price>,
}

/// US dollars per million tokens.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million prompt tokens.
    pub input_per_mtok: f64,
    /// Per million answer tokens.
    pub output_per_mtok: f64,
}

/// Which CLI a juror is.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// OpenAI Codex CLI (`codex exec`).
    Codex,
    /// Google Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
    /// Claude Code (`claude -p`).
    Claude,
    /// Qwen Code (`qwen -o json`).
    Qwen,
    /// Any program given by `command`, which names its model in its answer.
    Command,
}

impl Preset {
    /// The spelling in the config file and the packet.
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::Codex => "codex",
            Preset::Gemini => "gemini",
            Preset::Copilot => "copilot",
            Preset::Claude => "claude",
            Preset::Qwen => "qwen",
            Preset::Command => "command",
        }
    }

    /// The host whose CLI the preset runs; none for a program of the user's.
    pub fn host(self) -> Option<judged_core::event::Host> {
        use judged_core::event::Host;
        match self {
            Preset::Codex => Some(Host::CodexCli),
            Preset::Gemini => Some(Host::GeminiCli),
            Preset::Copilot => Some(Host::CopilotCli),
            Preset::Claude => Some(Host::ClaudeCode),
            Preset::Qwen => Some(Host::QwenCode),
            Preset::Command => None,
        }
    }
}

fn default_threshold() -> u32 {
    DEFAULT_THRESHOLD
}

fn default_deadline() -> u64 {
    DEFAULT_DEADLINE_SECONDS
}

/// A configuration mistake, named by its field, with what to do about it.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    /// The document has no `[jury]` table.
    #[error("jury: the file has no [jury] table")]
    NoJuryTable,
    /// The TOML does not parse, or a field has the wrong type (the parser's message).
    #[error("jury: {0}")]
    Toml(String),
    /// A juror without a name.
    #[error("jury.jurors: an entry has an empty `name`; give every juror a name")]
    EmptyName,
    /// Two jurors share this name.
    #[error("jury.jurors: two jurors are named `{0}`; names must be unique")]
    DuplicateName(String),
    /// This juror names no model.
    #[error("jury.jurors `{0}`: `model` is empty; name the model the CLI should ask for")]
    EmptyModel(String),
    /// The model has no single known family, so the juror could never count as cross-family.
    #[error(
        "jury.jurors `{juror}`: model `{model}` has no known family (openai, anthropic, google, qwen, deepseek, \
         …: docs/spec/evidence-protocol.md §4.4), or names two; write the provider's model id, e.g. \
         gpt-5.4-mini, claude-sonnet-4.6, gemini-3.1-pro, qwen3-coder-plus"
    )]
    UnknownFamily {
        /// The juror's name.
        juror: String,
        /// The model as configured.
        model: String,
    },
    /// A `command` juror without `command`.
    #[error("jury.jurors `{0}`: preset \"command\" needs `command = [\"program\", ...]`")]
    CommandMissing(String),
    /// A `command` juror whose `command` is empty.
    #[error("jury.jurors `{0}`: `command` is empty; give at least the program to run")]
    CommandEmpty(String),
    /// `command` on a juror of a preset that builds its own argv.
    #[error(
        "jury.jurors `{juror}`: `command` is only for preset \"command\", not \"{preset}\"; use `bin` and `extra_args`"
    )]
    CommandNotAllowed {
        /// The juror's name.
        juror: String,
        /// Its preset.
        preset: &'static str,
    },
    /// A name in `env` or `env_strip` that cannot be an environment variable.
    #[error("jury.jurors `{juror}`: `{field}` has an invalid variable name `{name}`")]
    InvalidEnvName {
        /// The juror's name.
        juror: String,
        /// `env` or `env_strip`.
        field: &'static str,
        /// The offending name.
        name: String,
    },
    /// `timeout_seconds = 0` on this juror.
    #[error("jury.jurors `{0}`: `timeout_seconds` is 0; leave it out to use the cascade deadline")]
    ZeroTimeout(String),
    /// This juror's price is negative or not finite.
    #[error("jury.jurors `{0}`: `price` must be finite and not negative")]
    InvalidPrice(String),
    /// Stage 1 lists fewer than two jurors (this many).
    #[error("jury.stage_1 lists {0} juror(s); list at least two names of [[jury.jurors]]")]
    StageOneTooSmall(usize),
    /// A stage names a juror that is not configured.
    #[error("jury.{field}: `{name}` is not a [[jury.jurors]] name (known: {known})")]
    UnknownJuror {
        /// `stage_1` or `tiebreaker`.
        field: &'static str,
        /// The unknown name.
        name: String,
        /// The configured names, to pick from.
        known: String,
    },
    /// A stage names one juror twice.
    #[error("jury.{field}: `{name}` is listed twice")]
    Repeated {
        /// `stage_1` or `tiebreaker`.
        field: &'static str,
        /// The repeated name.
        name: String,
    },
    /// Every stage-1 juror is of this one family: no jury could be cross-family.
    #[error(
        "jury.stage_1: every juror is of family {0}; a jury needs two families, so add a juror \
         of another family"
    )]
    SingleFamilyStageOne(&'static str),
    /// `tiebreaker = []`.
    #[error("jury.tiebreaker: the list is empty; name at least one juror")]
    NoTiebreaker,
    /// This tiebreaker also sits in stage 1, so it could only repeat itself.
    #[error("jury.tiebreaker: `{0}` also sits in stage_1; a tiebreaker must be another juror")]
    TiebreakerInStageOne(String),
    /// The threshold is above 100.
    #[error("jury.threshold: {0} is not a confidence; use 0 to 100 (default 80)")]
    ThresholdOutOfRange(u32),
    /// `deadline_seconds = 0`.
    #[error("jury.deadline_seconds: 0 leaves the jury no time; use at least 1 (default 100)")]
    ZeroDeadline,
    /// A deadline or timeout longer than any wait judged keeps.
    #[error("{field}: {seconds} seconds is longer than a day, the longest a jury may take; use at most {MAX_SECONDS}")]
    TooLong {
        /// The field (`jury.deadline_seconds`, or a juror's `timeout_seconds`).
        field: String,
        /// The seconds given.
        seconds: u64,
    },
    /// The file holding the table cannot be read (the reason).
    #[error("cannot read it: {0}")]
    Unreadable(String),
}

/// A `[jury]` table that cannot be used, with the file it is in.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{}: {source}", path.display())]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong in it.
    pub source: ConfigError,
}

/// The jury for work in `cwd`: the nearest `.judged.toml`'s `[jury]` when project files
/// are trusted and it has one, else the user's (`user`, with the file it came from).
/// `None` when neither has a jury.
pub fn for_project(
    user: Option<(&JuryConfig, &Path)>,
    trust_project_files: bool,
    cwd: &Path,
) -> Result<Option<(JuryConfig, PathBuf)>, FileError> {
    if let Some(path) = trust_project_files.then(|| judged_io::config_file::project_file(cwd)).flatten() {
        let unreadable = |why: String| FileError { path: path.clone(), source: ConfigError::Unreadable(why) };
        let bytes = judged_io::config_file::read(&path).map_err(|e| unreadable(e.to_string()))?.unwrap_or_default();
        let text = String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))?;
        match JuryConfig::from_toml(&text) {
            Ok(jury) => return Ok(Some((jury, path))),
            Err(ConfigError::NoJuryTable) => {}
            Err(source) => return Err(FileError { path, source }),
        }
    }
    Ok(user.map(|(jury, path)| (jury.clone(), path.to_owned())))
}

/// A validated juror: the config entry plus what was derived from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Juror {
    /// The entry as written.
    pub config: JurorConfig,
    /// Derived from `config.model` with the gate's table.
    pub family: &'static str,
}

impl Juror {
    /// The configured name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The configured (requested) model.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// This juror's own limit, if it has one.
    pub fn timeout(&self) -> Option<Duration> {
        self.config.timeout_seconds.map(Duration::from_secs)
    }
}

/// A validated jury: jurors resolved, in the order the user listed them.
#[derive(Clone, Debug, PartialEq)]
pub struct Jury {
    /// The jurors asked first, in parallel; at least two, of at least two families.
    pub stage_1: Vec<Juror>,
    /// Candidates in the user's order of preference.
    pub tiebreakers: Vec<Juror>,
    /// The confidence (0..=100) a stage-1 agreement needs to stand.
    pub threshold: u8,
    /// The one deadline of the whole cascade.
    pub deadline: Duration,
}

impl Jury {
    /// The hook timeout `install-hooks` should write: larger than the whole cascade.
    pub fn hook_timeout_seconds(&self) -> u64 {
        self.deadline.as_secs() + HOOK_TIMEOUT_MARGIN_SECONDS
    }
}

impl JuryConfig {
    /// The `[jury]` table of a whole TOML document; other tables are not looked at.
    pub fn from_toml(text: &str) -> Result<JuryConfig, ConfigError> {
        #[derive(Deserialize)]
        struct Document {
            jury: Option<JuryConfig>,
        }
        let document: Document = toml::from_str(text).map_err(|e| ConfigError::Toml(e.to_string()))?;
        document.jury.ok_or(ConfigError::NoJuryTable)
    }

    /// Check everything and resolve names; the first mistake found is returned.
    pub fn validate(&self) -> Result<Jury, ConfigError> {
        if self.threshold > 100 {
            return Err(ConfigError::ThresholdOutOfRange(self.threshold));
        }
        if self.deadline_seconds == 0 {
            return Err(ConfigError::ZeroDeadline);
        }
        if self.deadline_seconds > MAX_SECONDS {
            return Err(ConfigError::TooLong { field: "jury.deadline_seconds".into(), seconds: self.deadline_seconds });
        }
        let mut jurors: BTreeMap<&str, Juror> = BTreeMap::new();
        for config in &self.jurors {
            let juror = validate_juror(config)?;
            if jurors.insert(config.name.as_str(), juror).is_some() {
                return Err(ConfigError::DuplicateName(config.name.clone()));
            }
        }
        let resolve = |field: &'static str, names: &[String]| -> Result<Vec<Juror>, ConfigError> {
            let mut seen = Vec::new();
            for name in names {
                if seen.iter().any(|j: &Juror| j.name() == name) {
                    return Err(ConfigError::Repeated { field, name: name.clone() });
                }
                let juror = jurors.get(name.as_str()).ok_or_else(|| ConfigError::UnknownJuror {
                    field,
                    name: name.clone(),
                    known: jurors.keys().copied().collect::<Vec<_>>().join(", "),
                })?;
                seen.push(juror.clone());
            }
            Ok(seen)
        };
        let stage_1 = resolve("stage_1", &self.stage_1)?;
        if stage_1.len() < 2 {
            return Err(ConfigError::StageOneTooSmall(stage_1.len()));
        }
        if stage_1.iter().all(|j| j.family == stage_1[0].family) {
            return Err(ConfigError::SingleFamilyStageOne(stage_1[0].family));
        }
        let tiebreakers = resolve("tiebreaker", self.tiebreaker.names())?;
        if tiebreakers.is_empty() {
            return Err(ConfigError::NoTiebreaker);
        }
        if let Some(both) = tiebreakers.iter().find(|t| stage_1.iter().any(|s| s.name() == t.name())) {
            return Err(ConfigError::TiebreakerInStageOne(both.name().to_owned()));
        }
        Ok(Jury {
            stage_1,
            tiebreakers,
            threshold: self.threshold as u8,
            deadline: Duration::from_secs(self.deadline_seconds),
        })
    }
}

fn validate_juror(config: &JurorConfig) -> Result<Juror, ConfigError> {
    let name = &config.name;
    if name.trim().is_empty() {
        return Err(ConfigError::EmptyName);
    }
    if config.model.trim().is_empty() {
        return Err(ConfigError::EmptyModel(name.clone()));
    }
    let family = family::family(&config.model, Table::Gate)
        .ok_or_else(|| ConfigError::UnknownFamily { juror: name.clone(), model: config.model.clone() })?;
    match (config.preset, &config.command) {
        (Preset::Command, None) => return Err(ConfigError::CommandMissing(name.clone())),
        (Preset::Command, Some(argv)) if argv.is_empty() => return Err(ConfigError::CommandEmpty(name.clone())),
        (Preset::Command, Some(_)) | (_, None) => {}
        (preset, Some(_)) => {
            return Err(ConfigError::CommandNotAllowed { juror: name.clone(), preset: preset.as_str() });
        }
    }
    let env_names = config.env.keys().map(|k| ("env", k)).chain(config.env_strip.iter().map(|k| ("env_strip", k)));
    for (field, key) in env_names {
        if key.is_empty() || key.contains(['=', '\0']) {
            return Err(ConfigError::InvalidEnvName { juror: name.clone(), field, name: key.clone() });
        }
    }
    if config.timeout_seconds == Some(0) {
        return Err(ConfigError::ZeroTimeout(name.clone()));
    }
    if let Some(seconds) = config.timeout_seconds.filter(|s| *s > MAX_SECONDS) {
        return Err(ConfigError::TooLong { field: format!("jury.jurors `{name}`: `timeout_seconds`"), seconds });
    }
    if let Some(price) = config.price {
        let valid = |x: f64| x.is_finite() && x >= 0.0;
        if !valid(price.input_per_mtok) || !valid(price.output_per_mtok) {
            return Err(ConfigError::InvalidPrice(name.clone()));
        }
    }
    Ok(Juror { config: config.clone(), family })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUE_EXAMPLE: &str = r#"
[jury]
stage_1 = ["gemini-small", "codex-small"]
tiebreaker = "claude-big"
threshold = 80
deadline_seconds = 100

[[jury.jurors]]
name = "codex-small"
preset = "codex"
model = "gpt-5.4-mini"
bin = "/opt/codex/bin/codex"
extra_args = []
env = {}
env_strip = ["OPENAI_API_KEY"]
timeout_seconds = 60

[[jury.jurors]]
name = "gemini-small"
preset = "gemini"
model = "gemini-3.5-flash"

[[jury.jurors]]
name = "claude-big"
preset = "claude"
model = "claude-opus-4.6"

[[jury.jurors]]
name = "local-judge"
preset = "command"
model = "claude-sonnet-4.6"
command = ["my-judge", "--model", "{model}"]
"#;

    fn example() -> JuryConfig {
        JuryConfig::from_toml(ISSUE_EXAMPLE).expect("the issue's example parses")
    }

    /// Another user's `.judged.toml` above a project names no jury of the project's, even
    /// where project files are trusted: its `command` juror would run as the project's
    /// owner. Needs root to give the file another owner.
    #[test]
    fn a_project_jury_of_another_owner_above_the_project_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let above = dir.path().join(".judged.toml");
        std::fs::write(&above, ISSUE_EXAMPLE).unwrap();
        let found = || for_project(None, true, &project).unwrap().map(|(_, from)| from);
        assert_eq!(found(), Some(above.clone()), "the owner's own file above the project counts");
        if let Err(error) = std::os::unix::fs::chown(&above, Some(65534), None) {
            assert!(std::env::var_os("CI").is_none(), "giving the file another owner needs root: {error}");
            eprintln!("SKIP: a_project_jury_of_another_owner_above_the_project_is_not_read: not root ({error})");
            return;
        }
        assert_eq!(found(), None);
    }

    #[test]
    fn the_issue_example_parses_and_validates() {
        let jury = example().validate().expect("valid");
        let names: Vec<_> = jury.stage_1.iter().map(|j| (j.name(), j.family)).collect();
        assert_eq!(names, [("gemini-small", "google"), ("codex-small", "openai")]);
        assert_eq!(jury.tiebreakers[0].family, "anthropic");
        assert_eq!(jury.threshold, 80);
        assert_eq!(jury.deadline, Duration::from_secs(100));
        assert!(jury.hook_timeout_seconds() > 100);
        assert_eq!(jury.stage_1[1].timeout(), Some(Duration::from_secs(60)));
    }

    #[test]
    fn defaults_and_a_tiebreaker_list() {
        let text = ISSUE_EXAMPLE
            .replace("threshold = 80\n", "")
            .replace("deadline_seconds = 100\n", "")
            .replace(r#"tiebreaker = "claude-big""#, r#"tiebreaker = ["claude-big", "local-judge"]"#);
        let config = JuryConfig::from_toml(&text).expect("parses");
        assert_eq!((config.threshold, config.deadline_seconds), (80, 100));
        let jury = config.validate().expect("valid");
        let names: Vec<_> = jury.tiebreakers.iter().map(Juror::name).collect();
        assert_eq!(names, ["claude-big", "local-judge"]);
    }

    #[test]
    fn unknown_keys_and_presets_are_refused_by_the_parser() {
        let typo = ISSUE_EXAMPLE.replace("threshold = 80", "treshold = 80");
        assert!(matches!(JuryConfig::from_toml(&typo), Err(ConfigError::Toml(m)) if m.contains("treshold")));
        let preset = ISSUE_EXAMPLE.replace(r#"preset = "gemini""#, r#"preset = "agy""#);
        assert!(matches!(JuryConfig::from_toml(&preset), Err(ConfigError::Toml(m)) if m.contains("agy")));
        assert_eq!(JuryConfig::from_toml("[gate]\npolicy = \"off\"\n"), Err(ConfigError::NoJuryTable));
    }

    /// The gate's table (docs/spec/jury.md §2.2): its ten families beyond the three are
    /// jurors' families too, and a model naming two of them is of none.
    #[test]
    fn families_come_from_the_gates_table() {
        let mut config = example();
        juror(&mut config, "gemini-small").model = "qwen3-coder-plus".into();
        let jury = config.validate().expect("a qwen juror beside an openai one is cross-family");
        let families: Vec<_> = jury.stage_1.iter().map(|j| (j.name(), j.family)).collect();
        assert_eq!(families, [("gemini-small", "qwen"), ("codex-small", "openai")]);
        // The evidence rules' table would call this openai; the gate's sees two families.
        let two = refused(|c| juror(c, "codex-small").model = "deepseek-gpt-5".into());
        assert!(matches!(&two, ConfigError::UnknownFamily { model, .. } if model == "deepseek-gpt-5"), "{two}");
        assert!(two.to_string().contains("qwen3-coder-plus"), "{two}");
    }

    /// `preset = "qwen"` runs Qwen Code, the host judged knows as qwen-code; a Qwen model's
    /// juror is of family qwen.
    #[test]
    fn a_qwen_code_juror() {
        let text = format!(
            "{ISSUE_EXAMPLE}\n[[jury.jurors]]\nname = \"qwen-small\"\npreset = \"qwen\"\nmodel = \"qwen3-coder-plus\"\n"
        )
        .replace(r#"stage_1 = ["gemini-small", "codex-small"]"#, r#"stage_1 = ["qwen-small", "codex-small"]"#);
        let jury = JuryConfig::from_toml(&text).expect("parses").validate().expect("valid");
        let qwen = &jury.stage_1[0];
        assert_eq!((qwen.name(), qwen.family, qwen.config.preset), ("qwen-small", "qwen", Preset::Qwen));
        assert_eq!(Preset::Qwen.as_str(), "qwen");
        assert_eq!(Preset::Qwen.host(), Some(judged_core::event::Host::QwenCode));
        let with_command = text.replace(
            "preset = \"qwen\"\nmodel = \"qwen3-coder-plus\"",
            "preset = \"qwen\"\nmodel = \"qwen3-coder-plus\"\ncommand = [\"qwen\"]",
        );
        let refused = JuryConfig::from_toml(&with_command).expect("parses").validate().expect_err("refused");
        assert_eq!(
            refused.to_string(),
            "jury.jurors `qwen-small`: `command` is only for preset \"command\", not \"qwen\"; use `bin` and `extra_args`"
        );
        let typo = text.replace(r#"preset = "qwen""#, r#"preset = "qwen-code""#);
        assert!(matches!(JuryConfig::from_toml(&typo), Err(ConfigError::Toml(m)) if m.contains("qwen-code")));
    }

    fn refused(edit: impl FnOnce(&mut JuryConfig)) -> ConfigError {
        let mut config = example();
        edit(&mut config);
        config.validate().expect_err("must be refused")
    }

    fn juror<'a>(config: &'a mut JuryConfig, name: &str) -> &'a mut JurorConfig {
        config.jurors.iter_mut().find(|j| j.name == name).expect("juror in the example")
    }

    #[test]
    fn every_mistake_names_its_field() {
        let unknown = refused(|c| c.stage_1[0] = "gemini-smal".into());
        assert_eq!(
            unknown.to_string(),
            "jury.stage_1: `gemini-smal` is not a [[jury.jurors]] name \
             (known: claude-big, codex-small, gemini-small, local-judge)"
        );
        assert!(matches!(
            refused(|c| c.tiebreaker = Tiebreaker::One("nobody".into())),
            ConfigError::UnknownJuror { field: "tiebreaker", .. }
        ));
        assert_eq!(
            refused(|c| juror(c, "local-judge").command = None),
            ConfigError::CommandMissing("local-judge".into())
        );
        assert_eq!(
            refused(|c| juror(c, "local-judge").command = Some(vec![])),
            ConfigError::CommandEmpty("local-judge".into())
        );
        assert!(matches!(
            refused(|c| juror(c, "codex-small").command = Some(vec!["x".into()])),
            ConfigError::CommandNotAllowed { preset: "codex", .. }
        ));
        assert_eq!(
            refused(|c| juror(c, "codex-small").model = " ".into()),
            ConfigError::EmptyModel("codex-small".into())
        );
        let family = refused(|c| juror(c, "codex-small").model = "mystery-7b".into());
        assert!(family.to_string().contains("model `mystery-7b` has no known family"), "{family}");
        assert!(matches!(
            refused(|c| juror(c, "codex-small").model = "gpt-5.4-claude".into()),
            ConfigError::UnknownFamily { .. }
        ));
        assert_eq!(refused(|c| c.stage_1.truncate(1)), ConfigError::StageOneTooSmall(1));
        assert_eq!(
            refused(|c| c.stage_1[1] = "gemini-small".into()),
            ConfigError::Repeated { field: "stage_1", name: "gemini-small".into() }
        );
        assert_eq!(
            refused(|c| c.stage_1[1] = "claude-big".into()),
            ConfigError::TiebreakerInStageOne("claude-big".into())
        );
        assert_eq!(
            refused(|c| juror(c, "gemini-small").model = "gpt-5.4".into()),
            ConfigError::SingleFamilyStageOne("openai")
        );
        assert_eq!(refused(|c| c.tiebreaker = Tiebreaker::Many(vec![])), ConfigError::NoTiebreaker);
        assert_eq!(refused(|c| c.threshold = 101), ConfigError::ThresholdOutOfRange(101));
        assert_eq!(refused(|c| c.deadline_seconds = 0), ConfigError::ZeroDeadline);
        // A deadline past the clock's range panicked the jury's thread.
        let too_long = refused(|c| c.deadline_seconds = u64::MAX);
        assert!(
            too_long
                .to_string()
                .starts_with("jury.deadline_seconds: 18446744073709551615 seconds is longer than a day")
        );
        assert!(matches!(
            refused(|c| juror(c, "codex-small").timeout_seconds = Some(u64::MAX)),
            ConfigError::TooLong { .. }
        ));
        assert_eq!(
            refused(|c| juror(c, "codex-small").timeout_seconds = Some(0)),
            ConfigError::ZeroTimeout("codex-small".into())
        );
        assert!(matches!(
            refused(|c| juror(c, "codex-small").env_strip.push("A=B".into())),
            ConfigError::InvalidEnvName { field: "env_strip", .. }
        ));
        assert_eq!(
            refused(|c| juror(c, "codex-small").price = Some(Price { input_per_mtok: -1.0, output_per_mtok: 1.0 })),
            ConfigError::InvalidPrice("codex-small".into())
        );
        assert_eq!(
            refused(|c| juror(c, "claude-big").name = "codex-small".into()),
            ConfigError::DuplicateName("codex-small".into())
        );
        assert_eq!(refused(|c| juror(c, "claude-big").name = "".into()), ConfigError::EmptyName);
    }
}
