//! The version probe's answer, kept per installed binary: `AGENT --version` costs 1–2 CPU-s
//! for the agents that start a JavaScript runtime (measured on 2 cores: pi 0.73 2.2 CPU-s,
//! Gemini CLI 0.61 1.4, opencode 1.18 1.3, Claude Code and Codex 0.02–0.1), and every
//! `aptitude` invocation probes each agent it runs. An answer is kept in
//! `$APTITUDE_CACHE_DIR/agents/versions/<key>` (see [`crate::shared::files::cache_root`]),
//! outside every sandbox, and read back only while nothing that could change the answer
//! changed.
//!
//! The key hashes, for the binary, the `package.json` of the package holding it
//! (npm rewrites it on every install) and the interpreter its `#!` line names (`node`,
//! `python3`, resolved on `PATH` as the kernel and `env` would): the canonical path, size,
//! modification and change times (ns), inode and device, and the whole content of a file
//! of at most [`HASHED_BYTES`] (a launcher script rewritten in place within a clock tick
//! keeps its times). It also hashes the probe's arguments and environment. A file that can
//! not be read gives no key, and the probe runs. A failed probe is never kept.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::Digest;
use tokio_util::sync::CancellationToken;

use super::process::{self, Spec};

/// A private home (the `HOME` of a run, a grading call or the version probe) that could
/// not be made.
#[derive(Debug, thiserror::Error)]
#[error("can not create a private home for {agent}: {source}")]
pub struct NoHome {
    /// The agent it was for.
    pub agent: super::AgentKind,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// Why the version probe gave no version; the message follows `can not run BINARY: `
/// ([`super::AgentError::Start`]).
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The private home it runs in could not be made.
    #[error(transparent)]
    Home(#[from] NoHome),
    /// The binary could not be started (the OS's message).
    #[error("{0}")]
    Start(#[from] std::io::Error),
    /// It ran and failed.
    #[error("`{args}` {how}: {stderr}")]
    Failed {
        /// Its arguments, joined by spaces.
        args: String,
        /// How it ended (`exited with code 1`, `timed out after 1m`).
        how: String,
        /// Its stderr, trimmed, at most 2,000 characters.
        stderr: String,
    },
}

/// `binary`'s version: the answer kept for this install, else the first non-empty line
/// `binary ARGS` prints, run with `env` (over aptitude's own) in the private home `home`
/// makes, within 60 s; that answer is then kept.
///
/// # Errors
/// [`ProbeError`]: the home could not be made, the binary did not start, or it failed.
pub async fn version(
    binary: &Path,
    args: Vec<OsString>,
    env: Vec<(String, String)>,
    home: impl FnOnce() -> Result<tempfile::TempDir, NoHome>,
) -> Result<String, ProbeError> {
    let slot = root().zip(key(binary, &args, &env));
    if let Some(version) = slot.as_ref().and_then(|(root, key)| kept(root, key)) {
        return Ok(version);
    }
    let home = home()?;
    let spec = Spec {
        program: binary.to_owned(),
        args,
        cwd: home.path().to_owned(),
        env,
        timeout: Duration::from_secs(60),
        grace: Duration::from_secs(1),
        fence: None,
        limits: None,
    };
    let mut lines = Vec::new();
    let out = process::run(&spec, &CancellationToken::new(), |l| {
        lines.push(l.to_owned())
    })
    .await?;
    if !out.success() {
        return Err(ProbeError::Failed {
            args: spec
                .args
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            how: out.describe(spec.timeout),
            stderr: crate::shared::cut::chars(out.stderr.trim(), 2000).kept,
        });
    }
    let version = lines
        .iter()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .unwrap_or_default()
        .to_owned();
    if let Some((root, key)) = &slot {
        keep(root, key, &version);
    }
    Ok(version)
}

/// Files up to this size (bytes) are hashed whole into the key: launcher scripts and
/// `package.json`, not 100–200 MB native binaries.
pub const HASHED_BYTES: u64 = 1 << 20;

/// The longest version line kept (bytes); a longer answer is probed every time.
const MAX_VERSION: usize = 4096;

/// The key of `binary`'s probe with `args` and `env` (hex SHA-256), or `None` when a
/// file it depends on can not be read.
fn key(binary: &Path, args: &[OsString], env: &[(String, String)]) -> Option<String> {
    let mut hash = sha2::Sha256::new();
    hash.update(b"aptitude version probe 1\0");
    let real = std::fs::canonicalize(binary).ok()?;
    identity(&mut hash, &real)?;
    if let Some(manifest) = package_manifest(&real) {
        hash.update(b"package\0");
        identity(&mut hash, &manifest)?;
    }
    if let Some(interpreter) = interpreter(&real, env)? {
        hash.update(b"interpreter\0");
        identity(&mut hash, &std::fs::canonicalize(interpreter).ok()?)?;
    }
    for arg in args {
        hash.update(b"arg\0");
        hash.update(arg.as_encoded_bytes());
    }
    for (name, value) in env {
        hash.update(b"env\0");
        hash.update(name.as_bytes());
        hash.update(b"=");
        hash.update(value.as_bytes());
    }
    Some(crate::shared::hex(&hash.finalize()))
}

/// Adds what identifies the file at `real` (a canonical path) to `hash`.
fn identity(hash: &mut sha2::Sha256, real: &Path) -> Option<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(real).ok()?;
    hash.update(real.as_os_str().as_encoded_bytes());
    hash.update(b"\0");
    for n in [
        meta.len(),
        meta.ino(),
        meta.dev(),
        meta.mtime().cast_unsigned(),
        meta.mtime_nsec().cast_unsigned(),
        meta.ctime().cast_unsigned(),
        meta.ctime_nsec().cast_unsigned(),
    ] {
        hash.update(n.to_le_bytes());
    }
    if meta.len() <= HASHED_BYTES {
        hash.update(std::fs::read(real).ok()?);
    }
    Some(())
}

/// The `package.json` of the npm package holding `real`: the nearest one in its directory
/// or the four above it (`bundle/gemini.js`, `dist/cli.js`, `bin/codex.js`).
fn package_manifest(real: &Path) -> Option<PathBuf> {
    real.ancestors()
        .skip(1)
        .take(5)
        .map(|dir| dir.join("package.json"))
        .find(|m| m.is_file())
}

/// The interpreter `real`'s `#!` line runs it with: `Some(None)` without such a line (a
/// native binary), else its program, or for `/usr/bin/env [-S] NAME`, `NAME` found on the
/// probe's `PATH` (from `env`, else aptitude's own); `None` when the file can not be read
/// or the line names nothing to be found (the probe would tell how it fails).
fn interpreter(real: &Path, env: &[(String, String)]) -> Option<Option<PathBuf>> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let mut file = std::fs::File::open(real).ok()?;
    let n = file.read(&mut head).ok()?;
    let Some(line) = head[..n].strip_prefix(b"#!") else {
        return Some(None);
    };
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let program = PathBuf::from(words.next()?);
    if program.file_name().is_none_or(|n| n != "env") {
        return Some(Some(program));
    }
    let name = words.find(|w| !w.starts_with('-'))?;
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| OsString::from(v))
        .or_else(|| std::env::var_os("PATH"))?;
    crate::shared::files::find_in_path(&path, name).map(Some)
}

/// The version kept under `key` in `root`, if any.
fn kept(root: &Path, key: &str) -> Option<String> {
    let bytes = crate::shared::files::read_capped(&root.join(key), MAX_VERSION as u64).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    (!text.is_empty() && !text.contains('\n')).then_some(text)
}

/// Keeps `version` under `key` in `root` (created when missing), as every output is
/// written ([`crate::shared::files::write_output`]: never through a link, a temp file
/// renamed into place, so a reader never sees half an answer and two aptitude processes
/// keeping at once leave one). Best effort: a cache that can not be written is skipped.
fn keep(root: &Path, key: &str, version: &str) {
    if version.is_empty() || version.len() > MAX_VERSION || version.contains('\n') {
        return;
    }
    if let Err(e) = crate::shared::files::write_output(&root.join(key), version.as_bytes()) {
        tracing::debug!("the agent's version could not be kept: {e}");
    }
}

/// Where versions are kept: `agents/versions` in aptitude's cache directory.
fn root() -> Option<PathBuf> {
    crate::shared::files::cache_root().map(|r| r.join("agents").join("versions"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(path: &Path, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// The same binary, arguments and environment give the same key; a binary rewritten
    /// (even at its old size), its package's manifest, its interpreter, the arguments or
    /// the environment each give another.
    #[test]
    fn a_key_changes_with_whatever_could_change_the_answer() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("pkg/dist");
        std::fs::create_dir_all(&bin).unwrap();
        let node = dir.path().join("tools/node");
        std::fs::create_dir_all(node.parent().unwrap()).unwrap();
        script(&node, "#!/bin/sh\n");
        let cli = bin.join("cli.js");
        script(&cli, "#!/usr/bin/env node\nconsole.log('1.0.0')\n");
        let manifest = dir.path().join("pkg/package.json");
        std::fs::write(&manifest, r#"{"version": "1.0.0"}"#).unwrap();
        let path = vec![(
            "PATH".to_owned(),
            dir.path().join("tools").display().to_string(),
        )];
        let args = [OsString::from("--version")];
        let first = key(&cli, &args, &path).unwrap();
        assert_eq!(first, key(&cli, &args, &path).unwrap());

        assert_ne!(first, key(&cli, &[], &path).unwrap(), "arguments");
        let mut more = path.clone();
        more.push(("NODE_OPTIONS".into(), "--require x".into()));
        assert_ne!(first, key(&cli, &args, &more).unwrap(), "environment");

        std::fs::write(&manifest, r#"{"version": "2.0.0"}"#).unwrap();
        let upgraded = key(&cli, &args, &path).unwrap();
        assert_ne!(first, upgraded, "the package's manifest");

        script(&node, "#!/bin/bash\n");
        let new_node = key(&cli, &args, &path).unwrap();
        assert_ne!(upgraded, new_node, "the interpreter");

        script(&cli, "#!/usr/bin/env node\nconsole.log('2.0.0')\n");
        assert_ne!(
            new_node,
            key(&cli, &args, &path).unwrap(),
            "the binary, rewritten at its old size"
        );

        let native = dir.path().join("native");
        std::fs::write(&native, b"\x7fELF").unwrap();
        assert_eq!(interpreter(&native, &path), Some(None), "a native binary");
        assert!(key(&native, &args, &path).is_some());

        std::fs::remove_file(&node).unwrap();
        assert_eq!(
            key(&cli, &args, &path),
            None,
            "an interpreter no longer on PATH gives no key: the probe runs and says so"
        );
        assert!(key(&dir.path().join("gone"), &args, &path).is_none());
    }

    /// A kept version reads back; an empty or multi-line one is never kept, and a key
    /// never kept reads as none.
    #[test]
    fn a_version_is_kept_whole_or_not_at_all() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("versions");
        assert_eq!(kept(&root, "k"), None);
        keep(&root, "k", "0.61.0");
        assert_eq!(kept(&root, "k").as_deref(), Some("0.61.0"));
        keep(&root, "e", "");
        keep(&root, "m", "1.0\nsecond line");
        assert_eq!(kept(&root, "e"), None);
        assert_eq!(kept(&root, "m"), None);
        assert_eq!(
            std::fs::read_dir(&root).unwrap().count(),
            1,
            "no temp file is left"
        );
    }
}
