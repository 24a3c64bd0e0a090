//! Caches an agent fills on its first run and reads on every later one (Copilot CLI
//! unpacks ~235 MB into `$XDG_CACHE_HOME/copilot/pkg`): aptitude fills them once per
//! installed binary, outside any sandbox, in its own cache directory, and every run gets
//! them read-only — so a hostile run can not plant code in what the next run executes, and
//! no run pays for the unpacking.
//!
//! Filling runs the agent's binary with harmless arguments (`--version`) and a scratch
//! `HOME`, into a temp directory renamed into place: a reader never sees half a cache, and
//! two aptitude processes filling at once leave one.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A cache an agent fills on first use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedCache {
    /// The variable naming the cache's parent directory (`XDG_CACHE_HOME`).
    pub var: &'static str,
    /// The agent's directory below it (`copilot`).
    pub subdir: &'static str,
    /// Arguments that fill it and exit (`--version`).
    pub fill_args: &'static [&'static str],
}

/// How long filling may take.
const FILL_TIMEOUT: Duration = Duration::from_secs(300);

/// The filled cache of `binary`: the directory holding `cache.subdir`, or `None` when it
/// could not be filled (the run then fills a private one).
pub fn filled(binary: &Path, cache: &SharedCache) -> Option<PathBuf> {
    let root = crate::shared::files::cache_root()?.join("agents");
    let dir = root.join(format!("{}-{}", cache.subdir, install_id(binary)?));
    if dir.join(cache.subdir).is_dir() {
        return Some(dir);
    }
    std::fs::create_dir_all(&root).ok()?;
    let scratch = tempfile::Builder::new()
        .prefix(".filling-")
        .tempdir_in(&root)
        .ok()?;
    let filled = run_with_timeout(
        std::process::Command::new(binary)
            .args(cache.fill_args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", scratch.path())
            .env(cache.var, scratch.path())
            .current_dir(scratch.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
    );
    if !filled || !scratch.path().join(cache.subdir).is_dir() {
        tracing::debug!(binary = %binary.display(), "the agent's cache could not be filled");
        return None;
    }
    let scratch = scratch.keep();
    if std::fs::rename(&scratch, &dir).is_err() {
        // Another process filled it first.
        let _ = std::fs::remove_dir_all(&scratch);
    }
    dir.join(cache.subdir).is_dir().then_some(dir)
}

/// Runs `cmd` to its end within [`FILL_TIMEOUT`]; whether it succeeded.
fn run_with_timeout(cmd: &mut std::process::Command) -> bool {
    let Ok(mut child) = cmd.spawn() else {
        return false;
    };
    let started = std::time::Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if started.elapsed() < FILL_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// One installed binary: its real path, size and modification time, hashed.
fn install_id(binary: &Path) -> Option<String> {
    use sha2::Digest;
    let real = std::fs::canonicalize(binary).ok()?;
    let meta = std::fs::metadata(&real).ok()?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let hash = sha2::Sha256::digest(format!("{}\0{}\0{mtime}", real.display(), meta.len()));
    Some(crate::shared::hex(&hash[..8]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_install_has_a_stable_id_that_changes_with_the_binary() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("agent");
        std::fs::write(&bin, "one").unwrap();
        let a = install_id(&bin).unwrap();
        assert_eq!(a, install_id(&bin).unwrap());
        std::fs::write(&bin, "a longer binary").unwrap();
        assert_ne!(a, install_id(&bin).unwrap());
    }
}
