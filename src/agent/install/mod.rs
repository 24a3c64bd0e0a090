//! Installing an agent CLI at a chosen version into aptitude's own cache, so that a suite
//! can run on several releases of one agent (issue 42: the version as a matrix axis) while
//! the user's own install is never touched.
//!
//! Two steps, each its own call:
//! - [`resolve`]: a [`VersionSpec`] (`pinned`, `latest` or an exact version) to the exact
//!   version it names today, asked of the package's registry (npm's for the npm CLIs,
//!   PyPI's JSON API for Aider). `latest` moves; a run resolves it once.
//! - [`install`]: that version into `<cache>/<agent>/<version>/`, verified, atomically
//!   (built in a temporary directory beside it, then renamed), under a lock (two runs
//!   installing the same agent wait for each other) and cached: a second install of the
//!   same version reads the receipt the first left and starts no process.
//!
//! The cache is `$APTITUDE_AGENT_CACHE`, else `<aptitude's cache>/agents`
//! (`$APTITUDE_CACHE_DIR`, `$XDG_CACHE_HOME/aptitude`, `~/.cache/aptitude`).
//!
//! Verification (what [`Integrity`] records):
//! - npm: the `sha512` integrity the registry publishes for the version (`npm view
//!   PKG@V dist.integrity`) must be the one the install's lock file holds for the package;
//!   then the registry signatures of every installed package are checked with `npm audit
//!   signatures`. An invalid signature fails the install; signatures that could not be
//!   checked (no network to the signing keys, an npm without the command) are recorded as
//!   unavailable with npm's reason, never as verified.
//! - Aider (pip): the `aider-chat` distribution is installed with `--require-hashes`
//!   against the SHA-256 digests PyPI's JSON API publishes for that release; its
//!   dependencies are installed by pip without hashes (Aider publishes no hashed lock),
//!   which the receipt says (`dependencies_hashed: false`).
//!
//! Only the agent package's own install scripts run (npm's `allowScripts`, npm ≥ 11.10;
//! Claude Code's copies its native binary into place); its dependencies' are skipped.

mod npm;
mod pip;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::AgentKind;
use super::registry::{AgentOptions, cli};

/// How long one registry question may take before it is an error.
const QUERY_TIMEOUT: Duration = Duration::from_secs(120);
/// How long one install (download, unpack, scripts, checks) may take.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(900);
/// The receipt an install leaves in its directory; its presence is what "installed" means.
const RECEIPT: &str = "aptitude-install.json";

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

/// Where an agent's releases come from, read from its install hint
/// ([`super::AgentCli::install_hint`]): `npm install -g PKG@V` or `pip install PKG==V`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// An npm package (`@anthropic-ai/claude-code`).
    Npm(&'static str),
    /// A PyPI distribution (`aider-chat`).
    Pip(&'static str),
}

/// The registry package of `install_hint`; `None` for an install by script (`curl … |
/// bash`: Cursor, Kiro), which aptitude can not install at a chosen version.
pub fn source_of(install_hint: &'static str) -> Option<Source> {
    let words: Vec<&'static str> = install_hint.split_whitespace().collect();
    let last = *words.last()?;
    match *words.first()? {
        "npm" if words.contains(&"install") => {
            // `@scope/name@1.2.3`: the version's `@` is the last one after the first byte.
            let name = match last.get(1..).and_then(|rest| rest.rfind('@')) {
                Some(at) => &last[..at + 1],
                None => last,
            };
            Some(Source::Npm(name))
        }
        "pip" if words.contains(&"install") => {
            Some(Source::Pip(last.split("==").next().unwrap_or(last)))
        }
        _ => None,
    }
}

/// What an install checked, kept in its receipt and shown by reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Integrity {
    /// An npm package.
    Npm {
        /// The package (`@mariozechner/pi-coding-agent`).
        package: String,
        /// The registry's `dist.integrity` (`sha512-…`, base64), equal to the lock's.
        integrity: String,
        /// The registry signatures of the installed tree.
        signatures: Signatures,
    },
    /// A PyPI distribution.
    Pip {
        /// The distribution (`aider-chat`).
        package: String,
        /// The SHA-256 digests (hex) PyPI publishes for the release, which pip required.
        sha256: Vec<String>,
        /// Whether the dependencies were hash-checked too (false: Aider has no hashed lock).
        dependencies_hashed: bool,
    },
}

/// The outcome of `npm audit signatures` on an install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Signatures {
    /// Every package with a registry signature had a valid one.
    Verified {
        /// Packages whose registry signature npm verified.
        packages: u64,
        /// Packages the registry published no signature for.
        missing: u64,
    },
    /// The check could not be made; why, in npm's words. Never counted as verified.
    Unavailable {
        /// npm's reason (`getaddrinfo ENOTFOUND tuf-repo-cdn.sigstore.dev`).
        reason: String,
    },
}

/// An agent installed in aptitude's cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledAgent {
    /// Which agent.
    pub kind: AgentKind,
    /// The exact version installed (never `latest`).
    pub version: String,
    /// The executable to run (`…/node_modules/.bin/pi`), for [`super::AgentSettings`]'s
    /// binary override.
    pub binary: PathBuf,
    /// What was verified.
    pub integrity: Integrity,
    /// Whether this call found it installed already (a lookup, no process started).
    #[serde(skip)]
    pub cached: bool,
}

/// Why a version could not be resolved or installed. Each says what to do.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The agent installs by a script, not from a registry.
    #[error(
        "{agent} installs with `{hint}`, not from a package registry: aptitude can not install a chosen version of it; install it yourself and use `--agent-bin {agent}=PATH`"
    )]
    NotInstallable {
        /// The agent.
        agent: AgentKind,
        /// Its install hint.
        hint: &'static str,
    },
    /// `pinned` asked of an agent whose hint names no version.
    #[error("{agent} has no pinned version in aptitude; name an exact version or `latest`")]
    NoPin {
        /// The agent.
        agent: AgentKind,
    },
    /// No cache directory could be found.
    #[error(
        "no cache directory for agent installs: set APTITUDE_AGENT_CACHE (or XDG_CACHE_HOME or HOME)"
    )]
    NoCache,
    /// A tool aptitude runs (npm, python3) could not be started or did not finish.
    #[error("could not run `{program}`: {reason}; {hint}")]
    Tool {
        /// The program.
        program: String,
        /// Why.
        reason: String,
        /// What to do.
        hint: String,
    },
    /// The registry has no such release, or answered what aptitude could not read.
    #[error("{package}@{version}: {reason}; list the releases with `{list}`")]
    Registry {
        /// The package.
        package: String,
        /// The version or tag asked.
        version: String,
        /// What went wrong.
        reason: String,
        /// The command that lists the releases.
        list: String,
    },
    /// The package manager failed; the tail of its output.
    #[error("installing {package}@{version} failed (`{command}`):\n{output}")]
    Failed {
        /// The package.
        package: String,
        /// The version.
        version: String,
        /// The command.
        command: String,
        /// Its last lines of output.
        output: String,
    },
    /// What was installed is not what the registry published.
    #[error(
        "{package}@{version} failed verification: {reason}; nothing was installed (remove {} if the problem persists)",
        dir.display()
    )]
    Verification {
        /// The package.
        package: String,
        /// The version.
        version: String,
        /// What did not match.
        reason: String,
        /// The agent's cache directory.
        dir: PathBuf,
    },
    /// A file of the cache could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl InstallError {
    fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Self + '_ {
        move |source| Self::Io {
            path: path.to_owned(),
            source,
        }
    }
}

/// aptitude's cache of installed agents.
#[derive(Debug, Clone)]
pub struct Installer {
    root: PathBuf,
}

impl Installer {
    /// The cache named by the environment: `$APTITUDE_AGENT_CACHE`, else `agents/` in
    /// aptitude's cache directory ([`crate::shared::files::cache_root`]).
    ///
    /// # Errors
    /// [`InstallError::NoCache`] when none of the variables is set.
    pub fn from_env() -> Result<Self, InstallError> {
        std::env::var_os("APTITUDE_AGENT_CACHE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| crate::shared::files::cache_root().map(|c| c.join("agents")))
            .map(Self::at)
            .ok_or(InstallError::NoCache)
    }

    /// The cache at `root`.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// Where `version` of `kind` is (or would be) installed: `<root>/<agent>/<version>`.
    pub fn dir(&self, kind: AgentKind, version: &str) -> PathBuf {
        self.root.join(kind.name()).join(version)
    }

    /// The exact version `spec` names for `kind` today.
    ///
    /// # Errors
    /// [`InstallError::NoPin`], [`InstallError::NotInstallable`] (asked of the registry
    /// only), [`InstallError::Registry`] for a release the registry does not have,
    /// [`InstallError::Tool`] when npm or the network fails.
    pub async fn resolve(
        &self,
        kind: AgentKind,
        spec: &VersionSpec,
    ) -> Result<String, InstallError> {
        let agent = cli(kind, &AgentOptions::default());
        if *spec == VersionSpec::Pinned {
            return agent
                .pinned_version()
                .map(str::to_owned)
                .ok_or(InstallError::NoPin { agent: kind });
        }
        let asked = spec.to_string();
        match source(kind)? {
            Source::Npm(package) => npm::view_version(package, &asked).await,
            Source::Pip(package) => pip::resolve(package, &asked).await,
        }
    }

    /// `version` of `kind` in the cache, if a complete install of it is there.
    pub fn cached(&self, kind: AgentKind, version: &str) -> Option<InstalledAgent> {
        let dir = self.dir(kind, version);
        let receipt = std::fs::read(dir.join(RECEIPT)).ok()?;
        let mut installed: InstalledAgent = serde_json::from_slice(&receipt).ok()?;
        installed.binary = dir.join(&installed.binary);
        (installed.kind == kind && installed.version == version && installed.binary.is_file())
            .then_some(InstalledAgent {
                cached: true,
                ..installed
            })
    }

    /// Installs `version` (exact, as [`Installer::resolve`] returns it) of `kind`, or finds
    /// it installed.
    ///
    /// # Errors
    /// Every [`InstallError`]: nothing is left in the cache by a failed install.
    pub async fn install(
        &self,
        kind: AgentKind,
        version: &str,
    ) -> Result<InstalledAgent, InstallError> {
        if !is_exact_version(version) {
            return Err(InstallError::Registry {
                package: kind.name().to_owned(),
                version: version.to_owned(),
                reason: "not an exact version".to_owned(),
                list: "aptitude agents".to_owned(),
            });
        }
        if let Some(found) = self.cached(kind, version) {
            return Ok(found);
        }
        let source = source(kind)?;
        let agent_dir = self.root.join(kind.name());
        std::fs::create_dir_all(&agent_dir).map_err(InstallError::io(&agent_dir))?;
        let _lock = lock(&agent_dir).await?;
        // Another process may have finished the same install while this one waited.
        if let Some(found) = self.cached(kind, version) {
            return Ok(found);
        }
        let staging = tempfile::Builder::new()
            .prefix(&format!(".staging-{version}-"))
            .tempdir_in(&agent_dir)
            .map_err(InstallError::io(&agent_dir))?;
        let program = cli(kind, &AgentOptions::default()).program();
        let built = match source {
            Source::Npm(package) => npm::install(package, version, program, staging.path()).await,
            Source::Pip(package) => pip::install(package, version, program, staging.path()).await,
        };
        let (relative_binary, integrity) = built.map_err(|e| match e {
            InstallError::Verification {
                package,
                version,
                reason,
                ..
            } => InstallError::Verification {
                package,
                version,
                reason,
                dir: agent_dir.clone(),
            },
            other => other,
        })?;
        let receipt = InstalledAgent {
            kind,
            version: version.to_owned(),
            binary: relative_binary,
            integrity,
            cached: false,
        };
        let receipt_path = staging.path().join(RECEIPT);
        let json = serde_json::to_vec_pretty(&receipt).map_err(|e| InstallError::Io {
            path: receipt_path.clone(),
            source: e.into(),
        })?;
        std::fs::write(&receipt_path, json).map_err(InstallError::io(&receipt_path))?;
        let target = self.dir(kind, version);
        // A directory without a receipt is a leftover of an interrupted older layout.
        if target.exists() {
            std::fs::remove_dir_all(&target).map_err(InstallError::io(&target))?;
        }
        let staged = staging.keep();
        std::fs::rename(&staged, &target).map_err(InstallError::io(&target))?;
        Ok(InstalledAgent {
            binary: target.join(&receipt.binary),
            ..receipt
        })
    }
}

/// The registry `kind` installs from.
fn source(kind: AgentKind) -> Result<Source, InstallError> {
    let hint = cli(kind, &AgentOptions::default()).install_hint();
    source_of(hint).ok_or(InstallError::NotInstallable { agent: kind, hint })
}

/// An exclusive lock on `<dir>/.lock`, held while the returned file lives: concurrent
/// installs of one agent, in this process or another, go one after the other.
async fn lock(dir: &Path) -> Result<std::fs::File, InstallError> {
    let path = dir.join(".lock");
    tokio::task::spawn_blocking(move || {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(InstallError::io(&path))?;
        file.lock().map_err(InstallError::io(&path))?;
        Ok(file)
    })
    .await
    .map_err(|e| InstallError::Tool {
        program: "lock".to_owned(),
        reason: e.to_string(),
        hint: "retry".to_owned(),
    })?
}

/// [`Installer::resolve`] on the cache named by the environment.
///
/// # Errors
/// As [`Installer::from_env`] and [`Installer::resolve`].
pub async fn resolve(kind: AgentKind, spec: &VersionSpec) -> Result<String, InstallError> {
    Installer::from_env()?.resolve(kind, spec).await
}

/// [`Installer::install`] on the cache named by the environment.
///
/// # Errors
/// As [`Installer::from_env`] and [`Installer::install`].
pub async fn install(kind: AgentKind, version: &str) -> Result<InstalledAgent, InstallError> {
    Installer::from_env()?.install(kind, version).await
}

/// Runs `command` to its end within `limit`, its output captured; the program's name for
/// errors is `program`.
async fn run_tool(
    mut command: tokio::process::Command,
    program: &str,
    limit: Duration,
    hint: &str,
) -> Result<std::process::Output, InstallError> {
    command
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let tool = |reason: String| InstallError::Tool {
        program: program.to_owned(),
        reason,
        hint: hint.to_owned(),
    };
    match tokio::time::timeout(limit, command.output()).await {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(e)) => Err(tool(e.to_string())),
        Err(_) => Err(tool(format!("no answer within {} s", limit.as_secs()))),
    }
}

/// The last `n` lines of a process's output, for an error.
fn tail(output: &std::process::Output, n: usize) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
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

    #[test]
    fn the_registry_package_is_read_from_the_install_hint() {
        assert_eq!(
            source_of("npm install -g @anthropic-ai/claude-code@2.1.328"),
            Some(Source::Npm("@anthropic-ai/claude-code"))
        );
        assert_eq!(
            source_of("npm install -g opencode-ai@1.18.33"),
            Some(Source::Npm("opencode-ai"))
        );
        assert_eq!(
            source_of("pip install aider-chat==0.86.2"),
            Some(Source::Pip("aider-chat"))
        );
        assert_eq!(
            source_of("curl https://cursor.com/install -fsS | bash"),
            None
        );
    }

    #[test]
    fn every_registry_agent_has_a_source_and_the_script_installed_ones_say_why_not() {
        for kind in AgentKind::ALL {
            match (kind, source(kind)) {
                (AgentKind::Cursor | AgentKind::Kiro, Err(e)) => {
                    assert!(e.to_string().contains("--agent-bin"), "{e}");
                }
                (_, Ok(_)) => {}
                (kind, Err(e)) => panic!("{kind}: {e}"),
            }
        }
    }

    #[tokio::test]
    async fn pinned_resolves_without_asking_a_registry() {
        let installer = Installer::at("/nonexistent");
        let pinned = installer.resolve(AgentKind::Pi, &VersionSpec::Pinned).await;
        assert_eq!(
            pinned.ok().as_deref(),
            cli(AgentKind::Pi, &AgentOptions::default()).pinned_version()
        );
    }

    #[tokio::test]
    async fn a_cached_install_is_found_from_its_receipt_and_a_broken_one_is_not() {
        let root = tempfile::tempdir().unwrap();
        let installer = Installer::at(root.path());
        let dir = installer.dir(AgentKind::Pi, "0.1.0");
        std::fs::create_dir_all(dir.join("node_modules/.bin")).unwrap();
        let receipt = InstalledAgent {
            kind: AgentKind::Pi,
            version: "0.1.0".to_owned(),
            binary: "node_modules/.bin/pi".into(),
            integrity: Integrity::Npm {
                package: "p".to_owned(),
                integrity: "sha512-x".to_owned(),
                signatures: Signatures::Unavailable {
                    reason: "r".to_owned(),
                },
            },
            cached: false,
        };
        std::fs::write(dir.join(RECEIPT), serde_json::to_vec(&receipt).unwrap()).unwrap();
        // The binary is missing: not installed.
        assert!(installer.cached(AgentKind::Pi, "0.1.0").is_none());
        std::fs::write(dir.join("node_modules/.bin/pi"), "").unwrap();
        let found = installer.cached(AgentKind::Pi, "0.1.0").unwrap();
        assert!(found.cached);
        assert_eq!(found.binary, dir.join("node_modules/.bin/pi"));
        let found = installer.install(AgentKind::Pi, "0.1.0").await.unwrap();
        assert!(found.cached, "a second install is a lookup");
        // Another version's receipt in this directory does not count.
        assert!(installer.cached(AgentKind::Pi, "0.2.0").is_none());
    }

    #[tokio::test]
    async fn a_script_installed_agent_is_refused_with_the_fix() {
        let root = tempfile::tempdir().unwrap();
        let e = Installer::at(root.path())
            .install(AgentKind::Cursor, "1.0.0")
            .await
            .unwrap_err();
        assert!(matches!(e, InstallError::NotInstallable { .. }), "{e}");
    }
}
