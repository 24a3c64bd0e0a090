//! PyPI CLIs (Aider): versions asked of PyPI's JSON API (`GET /pypi/<name>/json` for the
//! latest release, `/pypi/<name>/<version>/json` for one; format of warehouse's JSON API,
//! `info.version` and `urls[].digests.sha256`), installed with pip into a private
//! `--target` directory (no virtualenv: its scripts name the directory they were made in,
//! which the atomic rename would break), started by a small relocatable `sh` launcher.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use serde_json::Value;

use super::{INSTALL_TIMEOUT, InstallError, Integrity, QUERY_TIMEOUT, run_tool, tail};

/// PyPI's JSON API: `$APTITUDE_PYPI_JSON`, else `https://pypi.org/pypi`.
fn api() -> String {
    std::env::var("APTITUDE_PYPI_JSON")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "https://pypi.org/pypi".to_owned())
}

/// The release document of `package` (`asked`: `latest` or an exact version).
async fn release(package: &str, asked: &str) -> Result<Value, InstallError> {
    let url = match asked {
        "latest" => format!("{}/{package}/json", api()),
        version => format!("{}/{package}/{version}/json", api()),
    };
    let registry = |reason: String| InstallError::Registry {
        package: package.to_owned(),
        version: asked.to_owned(),
        reason,
        list: format!("pip index versions {package}"),
    };
    let request = hyper::Request::get(&url)
        .header("accept", "application/json")
        .header(
            "user-agent",
            concat!("aptitude/", env!("CARGO_PKG_VERSION")),
        )
        .body(Full::new(Bytes::new()))
        .map_err(|e| registry(e.to_string()))?;
    let exchange = async {
        let reply = crate::shared::http::send(url.starts_with("https:"), request)
            .await
            .map_err(|e| registry(format!("GET {url}: {e}")))?;
        let status = reply.status();
        let body = Limited::new(reply.into_body(), 64 * 1024 * 1024)
            .collect()
            .await
            .map_err(|e| registry(format!("GET {url}: {e}")))?
            .to_bytes();
        if status == hyper::StatusCode::NOT_FOUND {
            return Err(registry("PyPI has no such release".to_owned()));
        }
        if !status.is_success() {
            return Err(registry(format!("GET {url}: HTTP {status}")));
        }
        serde_json::from_slice(&body).map_err(|e| registry(format!("unreadable answer: {e}")))
    };
    tokio::time::timeout(QUERY_TIMEOUT, exchange)
        .await
        .map_err(|_| {
            registry(format!(
                "GET {url}: no answer within {} s",
                QUERY_TIMEOUT.as_secs()
            ))
        })?
}

/// The exact version `asked` names on PyPI.
pub(super) async fn resolve(package: &str, asked: &str) -> Result<String, InstallError> {
    let doc = release(package, asked).await?;
    let version = doc["info"]["version"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if !super::is_exact_version(&version) || (asked != "latest" && version != asked) {
        return Err(InstallError::Registry {
            package: package.to_owned(),
            version: asked.to_owned(),
            reason: format!("PyPI answered `{version}`"),
            list: format!("pip index versions {package}"),
        });
    }
    Ok(version)
}

/// The SHA-256 digests (hex) of a release's files.
fn digests(doc: &Value) -> Vec<String> {
    doc["urls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|file| file["digests"]["sha256"].as_str())
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned)
        .collect()
}

/// The dependencies of an installed distribution's `METADATA` (`Requires-Dist:` lines,
/// core metadata 2.x), without the optional ones (`extra == …`).
fn requirements(metadata: &str) -> Vec<String> {
    metadata
        .lines()
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.strip_prefix("Requires-Dist:"))
        .map(str::trim)
        .filter(|r| !r.contains("extra =="))
        .map(str::to_owned)
        .collect()
}

/// The `module:function` of `program` in an `entry_points.txt`'s `[console_scripts]`.
fn entry_point(entry_points: &str, program: &str) -> Option<(String, String)> {
    let mut in_scripts = false;
    for line in entry_points.lines().map(str::trim) {
        if line.starts_with('[') {
            in_scripts = line == "[console_scripts]";
            continue;
        }
        let Some((name, target)) = line.split_once('=') else {
            continue;
        };
        if in_scripts && name.trim() == program {
            let (module, function) = target.trim().split_once(':')?;
            let ok = |s: &str| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "._".contains(c))
            };
            return (ok(module) && ok(function.trim()))
                .then(|| (module.to_owned(), function.trim().to_owned()));
        }
    }
    None
}

/// The Python interpreter: `$APTITUDE_PYTHON`, else `python3`, as the absolute path it
/// reports (`sys.executable`), which the launcher names.
async fn python() -> Result<PathBuf, InstallError> {
    let program = std::env::var_os("APTITUDE_PYTHON")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "python3".into());
    let mut command = tokio::process::Command::new(&program);
    command.args(["-c", "import sys; print(sys.executable)"]);
    let hint = "install Python 3 with pip, or set APTITUDE_PYTHON";
    let output = run_tool(command, "python3", QUERY_TIMEOUT, hint).await?;
    let path = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || path.is_empty() {
        return Err(InstallError::Tool {
            program: program.to_string_lossy().into_owned(),
            reason: tail(&output, 3),
            hint: hint.to_owned(),
        });
    }
    Ok(PathBuf::from(path))
}

/// Installs `package==version` into `prefix/lib`, with a launcher `prefix/bin/<program>`;
/// returns the launcher relative to `prefix` and what was verified.
pub(super) async fn install(
    package: &str,
    version: &str,
    program: &str,
    prefix: &Path,
) -> Result<(PathBuf, Integrity), InstallError> {
    let doc = release(package, version).await?;
    let sha256 = digests(&doc);
    let verification = |reason: String| InstallError::Verification {
        package: package.to_owned(),
        version: version.to_owned(),
        reason,
        dir: PathBuf::new(),
    };
    if sha256.is_empty() {
        return Err(verification(
            "PyPI publishes no SHA-256 digest for it".to_owned(),
        ));
    }
    let python = python().await?;
    let lib = prefix.join("lib");
    let hashes: Vec<String> = sha256
        .iter()
        .map(|h| format!("--hash=sha256:{h}"))
        .collect();
    let pinned = prefix.join("requirements.txt");
    std::fs::write(
        &pinned,
        format!("{package}=={version} {}\n", hashes.join(" ")),
    )
    .map_err(InstallError::io(&pinned))?;
    pip(
        &python,
        package,
        version,
        &lib,
        &["--no-deps", "--require-hashes", "-r"],
        &pinned,
    )
    .await?;
    let dist_info = std::fs::read_dir(&lib)
        .map_err(InstallError::io(&lib))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            name.ends_with(".dist-info")
                && name.starts_with(&package.replace('-', "_"))
                && name.contains(version)
        })
        .ok_or_else(|| verification("pip installed no metadata for it".to_owned()))?;
    let read = |name: &str| std::fs::read_to_string(dist_info.join(name)).unwrap_or_default();
    let dependencies = prefix.join("dependencies.txt");
    std::fs::write(&dependencies, requirements(&read("METADATA")).join("\n"))
        .map_err(InstallError::io(&dependencies))?;
    pip(&python, package, version, &lib, &["-r"], &dependencies).await?;
    let (module, function) = entry_point(&read("entry_points.txt"), program)
        .ok_or_else(|| verification(format!("it declares no `{program}` command")))?;
    let binary = PathBuf::from("bin").join(program);
    let launcher = prefix.join(&binary);
    write_launcher(&launcher, &python, (&module, &function), program)?;
    Ok((
        binary,
        Integrity::Pip {
            package: package.to_owned(),
            sha256,
            dependencies_hashed: false,
        },
    ))
}

/// `python -m pip install --target lib ARGS FILE`.
async fn pip(
    python: &Path,
    package: &str,
    version: &str,
    lib: &Path,
    args: &[&str],
    file: &Path,
) -> Result<(), InstallError> {
    let mut command = tokio::process::Command::new(python);
    command
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
        ])
        .arg("--target")
        .arg(lib)
        .args(args)
        .arg(file);
    let output = run_tool(command, "pip", INSTALL_TIMEOUT, "install pip for python3").await?;
    if !output.status.success() {
        return Err(InstallError::Failed {
            package: package.to_owned(),
            version: version.to_owned(),
            command: format!("pip install {package}=={version}"),
            output: tail(&output, 20),
        });
    }
    Ok(())
}

/// A `sh` launcher that finds `lib/` beside its own directory, so that it still works
/// after the install directory is renamed into place.
fn write_launcher(
    path: &Path,
    python: &Path,
    (module, function): (&str, &str),
    program: &str,
) -> Result<(), InstallError> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(path);
    std::fs::create_dir_all(dir).map_err(InstallError::io(dir))?;
    let quoted = shlex::try_quote(&python.to_string_lossy())
        .map(|q| q.into_owned())
        .map_err(|e| InstallError::Io {
            path: python.to_owned(),
            source: std::io::Error::other(e.to_string()),
        })?;
    let script = format!(
        "#!/bin/sh\n# Written by aptitude: {module}:{function} from ../lib.\nhere=$(CDPATH= cd -- \"$(dirname -- \"$0\")/..\" && pwd)\nPYTHONPATH=\"$here/lib\" exec {quoted} -c 'import sys; from {module} import {function} as m; sys.argv[0] = \"{program}\"; sys.exit(m())' \"$@\"\n"
    );
    std::fs::write(path, script).map_err(InstallError::io(path))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(InstallError::io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_releases_digests_are_its_files_sha256() {
        let doc = serde_json::json!({"info": {"version": "0.86.2"}, "urls": [
            {"filename": "aider_chat-0.86.2-py3-none-any.whl", "digests": {"sha256": "a".repeat(64), "md5": "x"}},
            {"filename": "aider_chat-0.86.2.tar.gz", "digests": {"sha256": "b".repeat(64)}},
            {"filename": "odd", "digests": {"sha256": "not hex"}},
        ]});
        assert_eq!(digests(&doc), vec!["a".repeat(64), "b".repeat(64)]);
    }

    #[test]
    fn dependencies_are_the_required_dists_without_extras() {
        let metadata = "Metadata-Version: 2.1\nName: aider-chat\nRequires-Dist: aiohttp==3.12.13\nRequires-Dist: tqdm==4.67.1 ; python_version >= \"3.9\"\nRequires-Dist: pytest; extra == \"dev\"\n\nRequires-Dist: not-a-header==1\n";
        assert_eq!(
            requirements(metadata),
            vec![
                "aiohttp==3.12.13",
                "tqdm==4.67.1 ; python_version >= \"3.9\""
            ]
        );
    }

    #[test]
    fn the_launcher_runs_the_console_script_entry_point() {
        let eps = "[console_scripts]\naider = aider.main:main\n\n[other]\naider = x:y\n";
        assert_eq!(
            entry_point(eps, "aider"),
            Some(("aider.main".to_owned(), "main".to_owned()))
        );
        assert_eq!(entry_point(eps, "other"), None);
        assert_eq!(
            entry_point("[console_scripts]\naider = a; rm -rf /:m\n", "aider"),
            None
        );
    }
}
