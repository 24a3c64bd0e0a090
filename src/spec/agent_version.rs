//! The version of an agent CLI a test runs on (`agents: [{agent: claude, versions: [pinned,
//! latest, "2.1.300"]}]`, `--agent claude@latest`): the words a test file and the command
//! line use; `agent::install` resolves and installs them.

use serde::{Deserialize, Serialize};

/// Which version of an agent a test or `--agent NAME@SPEC` asks for.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum VersionSpec {
    /// The version aptitude is tested with ([`super::AgentCli::pinned_version`]).
    Pinned,
    /// The registry's `latest` release, resolved once per run.
    Latest,
    /// One exact release (`2.1.300`, `0.86.2`, `1.0.0-beta.3`).
    Exact(String),
}

/// A version spec that is neither `pinned`, `latest` nor an exact version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{given}` is not a version: write `pinned`, `latest` or an exact release such as `2.1.300` (no ranges, no `^` or `~`)"
)]
pub struct VersionSpecError {
    /// What was written.
    pub given: String,
}

impl std::str::FromStr for VersionSpec {
    type Err = VersionSpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pinned" => Ok(Self::Pinned),
            "latest" => Ok(Self::Latest),
            exact if is_exact_version(exact) => Ok(Self::Exact(exact.to_owned())),
            other => Err(VersionSpecError {
                given: other.to_owned(),
            }),
        }
    }
}

impl std::fmt::Display for VersionSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pinned => f.write_str("pinned"),
            Self::Latest => f.write_str("latest"),
            Self::Exact(v) => f.write_str(v),
        }
    }
}

/// Whether `s` names one release: dot-separated numbers (at least two) with an optional
/// pre-release or build suffix of letters, digits, `.`, `-` and `+` (semver for npm, PEP
/// 440's common forms for PyPI, e.g. `0.86.2`, `1.0.0-beta.3`, `0.86.0rc1`). Nothing a
/// shell or a path would read specially.
pub fn is_exact_version(s: &str) -> bool {
    let core_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (core, rest) = s.split_at(core_end);
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() >= 2
        && parts.iter().all(|p| !p.is_empty())
        && s.len() <= 64
        && rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
        && !rest.starts_with('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_specs_are_pinned_latest_or_one_exact_release() {
        assert_eq!("pinned".parse(), Ok(VersionSpec::Pinned));
        assert_eq!("latest".parse(), Ok(VersionSpec::Latest));
        for exact in ["2.1.300", "0.86.2", "1.0.0-beta.3", "0.86.0rc1", "1.2"] {
            assert_eq!(
                exact.parse(),
                Ok(VersionSpec::Exact(exact.to_owned())),
                "{exact}"
            );
        }
        for bad in [
            "^2.1.0",
            "~1.0",
            ">=1",
            "2",
            "next",
            "1..2",
            "1.2.3 || 2",
            "../1.2",
            "1.2/x",
            "",
        ] {
            assert!(bad.parse::<VersionSpec>().is_err(), "{bad}");
        }
    }
}
