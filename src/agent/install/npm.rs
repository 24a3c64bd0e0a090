//! npm CLIs: versions asked of the registry with `npm view`, installed with `npm install`
//! into a private prefix, checked against the registry's `dist.integrity` and with `npm
//! audit signatures`. Formats as npm 11 writes them (`--json`; `package-lock.json`
//! lockfileVersion 3, `packages["node_modules/<name>"]`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{INSTALL_TIMEOUT, InstallError, Integrity, QUERY_TIMEOUT, Signatures, run_tool, tail};

/// The program run as npm: `$APTITUDE_NPM`, else `npm` on `PATH`.
fn npm() -> tokio::process::Command {
    let program = std::env::var_os("APTITUDE_NPM")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "npm".into());
    let mut command = tokio::process::Command::new(program);
    // The user's npmrc (registry, proxy, credentials) applies; its prompts do not.
    command
        .env("npm_config_update_notifier", "false")
        .env("npm_config_fund", "false")
        .env("npm_config_yes", "false");
    command
}

const NPM_HINT: &str = "install Node.js and npm (https://nodejs.org), or set APTITUDE_NPM";

/// `npm view PKG@TAG_OR_VERSION FIELD --json`, its JSON answer.
async fn view(package: &str, asked: &str, field: &str) -> Result<Value, InstallError> {
    let mut command = npm();
    command
        .args(["view", "--json"])
        .arg(format!("{package}@{asked}"))
        .arg(field);
    let output = run_tool(command, "npm view", QUERY_TIMEOUT, NPM_HINT).await?;
    let registry = |reason: String| InstallError::Registry {
        package: package.to_owned(),
        version: asked.to_owned(),
        reason,
        list: format!("npm view {package} versions"),
    };
    if !output.status.success() {
        return Err(registry(tail(&output, 3)));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    if text.trim().is_empty() {
        return Err(registry("the registry has no such release".to_owned()));
    }
    serde_json::from_str(&text).map_err(|e| registry(format!("unreadable answer: {e}")))
}

/// The exact version `asked` (`latest` or an exact version) names, from the registry.
pub(super) async fn view_version(package: &str, asked: &str) -> Result<String, InstallError> {
    let answer = view(package, asked, "version").await?;
    exact_version(&answer, asked).map_err(|e| InstallError::Registry {
        package: package.to_owned(),
        version: asked.to_owned(),
        reason: e.to_string(),
        list: format!("npm view {package} versions"),
    })
}

/// Why `npm view … version --json` did not answer the one release asked; the message
/// follows `PACKAGE@ASKED: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum NotOneVersion {
    /// The request matched several releases (the number).
    #[error("names {0} releases, not one")]
    Several(usize),
    /// Neither a string nor an array.
    #[error("unexpected answer {0}")]
    Unexpected(Value),
    /// A string that is not an exact version.
    #[error("the registry answered `{0}`, not a version")]
    NotAVersion(String),
    /// Another release than the exact version asked.
    #[error("the registry answered {0}")]
    Other(String),
}

/// The one version in `npm view … version --json`'s answer: a string, or (when `asked`
/// matched several) an array, which is an error for an exact request.
fn exact_version(answer: &Value, asked: &str) -> Result<String, NotOneVersion> {
    let version = match answer {
        Value::String(v) => v.clone(),
        Value::Array(all) if all.len() == 1 => all[0].as_str().unwrap_or_default().to_owned(),
        Value::Array(all) => return Err(NotOneVersion::Several(all.len())),
        other => return Err(NotOneVersion::Unexpected(other.clone())),
    };
    if !super::is_exact_version(&version) {
        return Err(NotOneVersion::NotAVersion(version));
    }
    if asked != "latest" && version != asked {
        return Err(NotOneVersion::Other(version));
    }
    Ok(version)
}

/// Installs `package@version` into `prefix`; returns the binary `program` relative to it
/// and what was verified.
pub(super) async fn install(
    package: &str,
    version: &str,
    program: &str,
    prefix: &Path,
) -> Result<(PathBuf, Integrity), InstallError> {
    let published = match view(package, version, "dist.integrity").await? {
        Value::String(s) if s.starts_with("sha512-") => s,
        other => {
            return Err(verification(
                package,
                version,
                Unverified::NoIntegrity(other),
            ));
        }
    };
    let manifest = serde_json::json!({
        "name": "aptitude-agent-install",
        "private": true,
        "dependencies": { package: version },
        // Only the agent's own install scripts run (npm ≥ 11.10 reads this; Claude Code
        // copies its native binary in its postinstall).
        "allowScripts": { package: true },
    });
    let manifest_path = prefix.join("package.json");
    std::fs::write(&manifest_path, manifest.to_string())
        .map_err(InstallError::io(&manifest_path))?;
    let mut command = npm();
    command
        .args(["install", "--no-audit", "--save-exact", "--prefix"])
        .arg(prefix)
        .current_dir(prefix);
    let output = run_tool(command, "npm install", INSTALL_TIMEOUT, NPM_HINT).await?;
    if !output.status.success() {
        return Err(InstallError::Failed {
            package: package.to_owned(),
            version: version.to_owned(),
            command: format!("npm install {package}@{version}"),
            output: tail(&output, 20),
        });
    }
    let lock_path = prefix.join("package-lock.json");
    let lock: Value = std::fs::read(&lock_path)
        .map_err(InstallError::io(&lock_path))
        .and_then(|bytes| {
            serde_json::from_slice(&bytes).map_err(|e| InstallError::Io {
                path: lock_path.clone(),
                source: e.into(),
            })
        })?;
    check_lock(&lock, package, version, &published)
        .map_err(|e| verification(package, version, e))?;
    let binary = PathBuf::from("node_modules/.bin").join(program);
    if !prefix.join(&binary).is_file() {
        return Err(verification(
            package,
            version,
            Unverified::NoExecutable(program.to_owned()),
        ));
    }
    let signatures = audit_signatures(prefix, registry_packages(&lock))
        .await
        .map_err(|e| verification(package, version, e))?;
    Ok((
        binary,
        Integrity::Npm {
            package: package.to_owned(),
            integrity: published,
            signatures,
        },
    ))
}

/// Why an npm install is not what the registry published; the message follows
/// `PACKAGE@VERSION failed verification: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum Unverified {
    /// `npm view … dist.integrity` answered no `sha512-` integrity (its answer).
    #[error("the registry publishes no sha512 integrity ({0})")]
    NoIntegrity(Value),
    /// The lock file installed another version, or none.
    #[error("the lock file installed {} instead", .0.as_deref().unwrap_or("nothing"))]
    OtherVersion(Option<String>),
    /// The lock file's integrity is not the one the registry publishes.
    #[error("the installed tarball's integrity {locked} is not the registry's {published}")]
    Integrity {
        /// The lock file's.
        locked: String,
        /// The registry's.
        published: String,
    },
    /// The lock file records no integrity for the package.
    #[error("the lock file records no integrity for it")]
    NoLockedIntegrity,
    /// The package installs no executable of the agent's name.
    #[error("the package installs no `{0}` executable")]
    NoExecutable(String),
    /// `npm audit signatures` found invalid signatures (`NAME@VERSION` each).
    #[error("invalid registry signature: {}", .0.join(", "))]
    InvalidSignature(Vec<String>),
}

fn verification(package: &str, version: &str, reason: Unverified) -> InstallError {
    InstallError::Verification {
        package: package.to_owned(),
        version: version.to_owned(),
        reason: reason.to_string(),
        dir: PathBuf::new(),
    }
}

/// Checks that the lock installed `package` at `version` with the registry's integrity.
fn check_lock(
    lock: &Value,
    package: &str,
    version: &str,
    published: &str,
) -> Result<(), Unverified> {
    let entry = &lock["packages"][format!("node_modules/{package}")];
    let installed = entry["version"].as_str();
    if installed != Some(version) {
        return Err(Unverified::OtherVersion(installed.map(str::to_owned)));
    }
    match entry["integrity"].as_str() {
        Some(locked) if locked == published => Ok(()),
        Some(locked) => Err(Unverified::Integrity {
            locked: locked.to_owned(),
            published: published.to_owned(),
        }),
        None => Err(Unverified::NoLockedIntegrity),
    }
}

/// How many of the lock's packages came from a registry (they carry an integrity).
fn registry_packages(lock: &Value) -> u64 {
    lock["packages"]
        .as_object()
        .map(|all| {
            all.iter()
                .filter(|(path, entry)| !path.is_empty() && entry["integrity"].is_string())
                .count() as u64
        })
        .unwrap_or(0)
}

/// `npm audit signatures --json` in `prefix`: `Ok` verified or unavailable (with why),
/// `Err` when a signature is invalid.
async fn audit_signatures(prefix: &Path, audited: u64) -> Result<Signatures, Unverified> {
    let mut command = npm();
    command
        .args([
            "audit",
            "signatures",
            "--json",
            "--fetch-retries=0",
            "--prefix",
        ])
        .arg(prefix)
        .current_dir(prefix);
    let output = match run_tool(command, "npm audit signatures", QUERY_TIMEOUT, NPM_HINT).await {
        Ok(output) => output,
        Err(e) => {
            return Ok(Signatures::Unavailable {
                reason: e.to_string(),
            });
        }
    };
    read_audit(&String::from_utf8_lossy(&output.stdout), audited).unwrap_or_else(|| {
        Ok(Signatures::Unavailable {
            reason: audit_failure(&output),
        })
    })
}

/// Why `npm audit signatures` made no check: the `error.summary` of its `--json` answer,
/// else its first `npm error` line.
fn audit_failure(output: &std::process::Output) -> String {
    let answer: Option<Value> = serde_json::from_slice(&output.stdout).ok();
    if let Some(summary) = answer.as_ref().and_then(|a| a["error"]["summary"].as_str()) {
        return summary.to_owned();
    }
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .find_map(|l| l.strip_prefix("npm error "))
        .map_or_else(
            || format!("npm ended with {}", output.status),
            str::to_owned,
        )
}

/// Reads `npm audit signatures --json`'s `{invalid: [...], missing: [...]}`; `None` when
/// the answer is not that (an `{error: …}`, no output): the check was not made.
fn read_audit(stdout: &str, audited: u64) -> Option<Result<Signatures, Unverified>> {
    let answer: Value = serde_json::from_str(stdout).ok()?;
    let invalid = answer.get("invalid")?.as_array()?;
    let missing = answer.get("missing")?.as_array()?;
    if !invalid.is_empty() {
        let names: Vec<String> = invalid
            .iter()
            .map(|i| {
                format!(
                    "{}@{}",
                    i["name"].as_str().unwrap_or("?"),
                    i["version"].as_str().unwrap_or("?")
                )
            })
            .collect();
        return Some(Err(Unverified::InvalidSignature(names)));
    }
    let missing = missing.len() as u64;
    Some(Ok(Signatures::Verified {
        packages: audited.saturating_sub(missing),
        missing,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npm_views_answer_one_exact_version_or_an_error() {
        assert_eq!(
            exact_version(&Value::from("0.73.1"), "latest"),
            Ok("0.73.1".to_owned())
        );
        assert_eq!(
            exact_version(&Value::from("0.72.1"), "0.72.1"),
            Ok("0.72.1".to_owned())
        );
        assert!(exact_version(&serde_json::json!(["0.72.0", "0.72.1"]), "0.72").is_err());
        assert!(exact_version(&Value::from("0.72.1"), "0.72.0").is_err());
        assert!(exact_version(&Value::from("$(rm -rf)"), "latest").is_err());
    }

    #[test]
    fn the_lock_must_hold_the_registrys_integrity() {
        let lock = serde_json::json!({"packages": {
            "": {"dependencies": {"p": "1.0.0"}},
            "node_modules/p": {"version": "1.0.0", "integrity": "sha512-AAA"},
            "node_modules/dep": {"version": "2.0.0", "integrity": "sha512-BBB"},
        }});
        assert_eq!(check_lock(&lock, "p", "1.0.0", "sha512-AAA"), Ok(()));
        let err = check_lock(&lock, "p", "1.0.0", "sha512-ZZZ")
            .unwrap_err()
            .to_string();
        assert!(err.contains("sha512-ZZZ"), "{err}");
        assert!(check_lock(&lock, "p", "1.0.1", "sha512-AAA").is_err());
        assert!(check_lock(&lock, "q", "1.0.0", "sha512-AAA").is_err());
        assert_eq!(registry_packages(&lock), 2);
    }

    #[test]
    fn audit_signatures_invalid_fails_missing_counts_and_errors_are_unavailable() {
        assert_eq!(
            read_audit(r#"{"invalid": [], "missing": []}"#, 40),
            Some(Ok(Signatures::Verified {
                packages: 40,
                missing: 0
            }))
        );
        assert_eq!(
            read_audit(
                r#"{"invalid": [], "missing": [{"name": "a", "version": "1.0.0"}]}"#,
                40
            ),
            Some(Ok(Signatures::Verified {
                packages: 39,
                missing: 1
            }))
        );
        let invalid = read_audit(
            r#"{"invalid": [{"name": "evil", "version": "6.6.6", "code": "EINTEGRITYSIGNATURE"}], "missing": []}"#,
            40,
        );
        assert_eq!(
            invalid
                .and_then(Result::err)
                .map(|e| e.to_string())
                .as_deref(),
            Some("invalid registry signature: evil@6.6.6")
        );
        // What npm 11 prints with --json when the signing keys can not be fetched.
        assert_eq!(
            read_audit(
                r#"{"error": {"code": "ENOTFOUND", "summary": "request failed"}}"#,
                40
            ),
            None
        );
        assert_eq!(read_audit("", 40), None);
    }
}
