//! Caches an agent fills on its first run and reads on every later one (Copilot CLI
//! unpacks ~235 MB into `$XDG_CACHE_HOME/copilot/pkg`): aptitude fills them once per
//! installed binary, outside any sandbox, in its own cache directory, and every run gets
//! them read-only — so a hostile run can not plant code in what the next run executes, and
//! no run pays for the unpacking.
//!
//! Filling runs the agent's binary with harmless arguments (`--version`) and a scratch
//! `HOME`, into a temp directory renamed into place: a reader never sees half a cache, and
//! two aptitude processes filling at once leave one.
//!
//! Each install gets its own cache (`agents/copilot-<install id>`), so an upgrade leaves the
//! old one behind. Every run marks its cache used (the `.used` file's modification time);
//! filling a new one removes those of the same agent unused for [`UNUSED_FOR`], so a
//! machine that upgrades Copilot CLI keeps one or two caches, not 235 MB per release.

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

/// How long an install's cache may go unused before filling another removes it: 7 days,
/// longer than any run could hold it.
pub const UNUSED_FOR: Duration = Duration::from_secs(7 * 24 * 3600);

/// The file in a filled cache whose modification time is its last use.
const USED: &str = ".used";

/// The filled cache of `binary`: the directory holding `cache.subdir`, or `None` when it
/// could not be filled (the run then fills a private one).
pub fn filled(binary: &Path, cache: &SharedCache) -> Option<PathBuf> {
    let root = crate::shared::files::cache_root()?.join("agents");
    let dir = root.join(format!("{}-{}", cache.subdir, install_id(binary)?));
    if dir.join(cache.subdir).is_dir() {
        mark_used(&dir);
        return Some(dir);
    }
    std::fs::create_dir_all(&root).ok()?;
    prune(&root, cache.subdir, UNUSED_FOR);
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
    mark_used(scratch.path());
    let scratch = scratch.keep();
    if std::fs::rename(&scratch, &dir).is_err() {
        // Another process filled it first.
        let _ = std::fs::remove_dir_all(&scratch);
    }
    dir.join(cache.subdir).is_dir().then_some(dir)
}

/// Records that `dir`'s cache is used now (best effort: a cache not marked is only pruned
/// sooner).
fn mark_used(dir: &Path) {
    let used = dir.join(USED);
    let now = std::time::SystemTime::now();
    let marked = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&used)
        .and_then(|f| f.set_modified(now));
    if let Err(e) = marked {
        tracing::debug!(path = %used.display(), "the agent's cache could not be marked used: {e}");
    }
}

/// Removes the caches of `subdir`'s other installs under `root` (`<subdir>-<install id>`)
/// last used over `unused_for` ago; leftovers of an interrupted fill (`.filling-*`) go
/// after the same time. Best effort: what can not be read or removed stays.
fn prune(root: &Path, subdir: &str, unused_for: Duration) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let prefix = format!("{subdir}-");
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with(&prefix) || name.starts_with(".filling-")) {
            continue;
        }
        let path = entry.path();
        // The marker's time, else the directory's own (a fill that never finished).
        let last = std::fs::metadata(path.join(USED))
            .or_else(|_| std::fs::symlink_metadata(&path))
            .and_then(|m| m.modified());
        let stale = last
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > unused_for);
        if stale && entry.file_type().is_ok_and(|t| t.is_dir()) {
            tracing::debug!(path = %path.display(), "removing an agent's cache unused for {}", humantime::format_duration(unused_for));
            let _ = std::fs::remove_dir_all(&path);
        }
    }
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

    /// Sets `path`'s modification time `age` ago (a file, or a directory opened read-only).
    fn aged(path: &Path, age: Duration) {
        std::fs::File::open(path)
            .unwrap()
            .set_modified(std::time::SystemTime::now() - age)
            .unwrap();
    }

    const DAY: Duration = Duration::from_secs(24 * 3600);

    /// Filling a new install's cache removes the same agent's caches unused for longer
    /// than the limit, and a fill abandoned as long ago (no `.used`: its directory's own
    /// time); it leaves the recently used ones, other agents' and other files.
    #[test]
    fn caches_of_installs_unused_for_a_week_are_removed() {
        let root = tempfile::tempdir().unwrap();
        let make = |name: &str, age: Option<Duration>| {
            let dir = root.path().join(name);
            std::fs::create_dir_all(dir.join("copilot/pkg")).unwrap();
            mark_used(&dir);
            if let Some(age) = age {
                aged(&dir.join(USED), age);
            }
            dir
        };
        let old = make("copilot-0000000000000001", Some(8 * DAY));
        let recent = make("copilot-0000000000000002", Some(6 * DAY));
        let current = make("copilot-0000000000000003", None);
        let other_agent = make("kiro-0000000000000004", Some(30 * DAY));
        let abandoned = root.path().join(".filling-old");
        let filling = root.path().join(".filling-now");
        for dir in [&abandoned, &filling] {
            std::fs::create_dir_all(dir).unwrap();
        }
        aged(&abandoned, 8 * DAY);
        let versions = root.path().join("versions");
        std::fs::create_dir_all(&versions).unwrap();
        prune(root.path(), "copilot", UNUSED_FOR);
        for gone in [&old, &abandoned] {
            assert!(
                !gone.exists(),
                "{} unused for 8 days: removed",
                gone.display()
            );
        }
        for kept in [&recent, &current, &other_agent, &filling, &versions] {
            assert!(kept.exists(), "{} is kept", kept.display());
        }
    }

    /// A cache found filled is marked used, so the next prune keeps it.
    #[test]
    fn a_run_marks_its_cache_used() {
        let dir = tempfile::tempdir().unwrap();
        mark_used(dir.path());
        aged(&dir.path().join(USED), 30 * DAY);
        mark_used(dir.path());
        let age = std::fs::metadata(dir.path().join(USED))
            .unwrap()
            .modified()
            .unwrap()
            .elapsed()
            .unwrap_or_default();
        assert!(age < DAY, "marked {age:?} ago");
    }
}
