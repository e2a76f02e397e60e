//! `validate --public-key`: check an artifact's signature offline, with judged's public
//! key alone (another machine, a CI job): no daemon, no journal, no session log. It proves
//! judged issued exactly these fields, and refuses what the rules refuse of those fields
//! alone (a rejected pair); that the log still holds what they rest on is what `validate`
//! without a key checks.

use judged_core::rules::{self, Artifact, ArtifactKind, CHALLENGE_SCHEMA, EVIDENCE_SCHEMA, EvidenceError};
use judged_core::signature::{self, PublicKey};
use judged_io::files;

/// Where the keys to check with come from.
#[derive(clap::Args)]
pub struct KeyArgs {
    /// Check the artifact's signature offline with this judged public key (`judged key`
    /// prints it), without the daemon or the session log.
    #[arg(long = "public-key", value_name = "KEY", conflicts_with = "public_key_file")]
    public_key: Option<String>,
    /// As --public-key, with the keys read from FILE, one per line (any may have signed
    /// it: keep the keys of before a rotation there).
    #[arg(long = "public-key-file", value_name = "FILE")]
    public_key_file: Option<String>,
}

impl KeyArgs {
    /// The keys given, if any: none means a check against the log (daemon or direct mode).
    pub fn keys(&self) -> rules::Result<Option<Vec<PublicKey>>> {
        let parse = |text: &str, flag: &str| {
            text.parse::<PublicKey>().map_err(|e| EvidenceError::evidence(format!("{flag}: {e}")))
        };
        match (&self.public_key, &self.public_key_file) {
            (Some(key), _) => Ok(Some(vec![parse(key, "--public-key")?])),
            (None, Some(path)) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    EvidenceError::evidence(format!("cannot read --public-key-file {}: {e}", files::resolve(path)))
                })?;
                let flag = format!("--public-key-file {path}");
                let keys = (text.lines().filter(|l| !l.trim().is_empty()))
                    .map(|line| parse(line, &flag))
                    .collect::<rules::Result<Vec<_>>>()?;
                if keys.is_empty() {
                    return Err(EvidenceError::evidence(format!(
                        "{flag} holds no key; put `judged key`'s output in it"
                    )));
                }
                Ok(Some(keys))
            }
            (None, None) => Ok(None),
        }
    }
}

/// Check that `artifact` is a `kind` judged signed with one of `keys`; the artifact as
/// shown, with `witness_checked` and the key that signed it.
pub fn validate(kind: ArtifactKind, artifact: Artifact, keys: &[PublicKey]) -> rules::Result<String> {
    let what = kind.as_str();
    let schema = match kind {
        ArtifactKind::Challenge => CHALLENGE_SCHEMA,
        ArtifactKind::Evidence => EVIDENCE_SCHEMA,
    };
    let found = artifact.schema();
    if found != Some(schema) {
        let found = found.map_or_else(|| "none".to_owned(), |s| format!("`{s}`"));
        return Err(EvidenceError::evidence(format!("its schema is {found}, not the {what} schema `{schema}`")));
    }
    let key = signature::check(&artifact, keys).map_err(|e| EvidenceError::evidence(format!("{what} {e}")))?;
    // A signature proves judged issued these fields, rejected evidence among them (verify
    // writes and signs it with exit 10): refuse what the rules refuse of the fields alone,
    // in their words, as the daemon does.
    kind.check_standing(&artifact)?;
    Ok(artifact.shown_with([("witness_checked", true.into()), ("signed_by", key.to_string().into())]))
}
