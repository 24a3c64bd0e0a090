//! Workspaces: where a test's agent runs.
//!
//! Each test runs in a fresh temporary copy of its workspace (by default the directory that
//! holds the test file). Hidden files such as `.env` are copied — tests are about them;
//! `.git` is not, unless asked, and neither are aptitude's own test files and recorded
//! transcripts, so the agent can not read the assertions it is judged by. The source is
//! never modified. A snapshot taken before the agent runs tells which files it created,
//! modified or deleted. The copy is removed when the workspace is dropped, unless kept.

use std::collections::BTreeMap;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Why a workspace could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The source directory does not exist.
    #[error("workspace {} does not exist or is not a directory", .0.display())]
    Missing(PathBuf),
    /// Copying or reading failed.
    #[error("can not copy workspace {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// How a file changed during the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// The file did not exist before.
    Created,
    /// Its content changed.
    Modified,
    /// It existed before and is gone.
    Deleted,
}

/// A file the agent created, modified or deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Path relative to the workspace root, `/`-separated.
    pub path: String,
    /// What happened to it.
    pub change: ChangeKind,
    /// Its size afterwards in bytes (absent when deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// Content fingerprints of a tree: path → (size in bytes, hash).
type Snapshot = BTreeMap<String, (u64, u64)>;

/// A temporary copy of a workspace.
#[derive(Debug)]
pub struct Workspace {
    dir: Option<tempfile::TempDir>,
    root: PathBuf,
    before: Snapshot,
}

impl Workspace {
    /// Copies `source` into a new temp dir (`.git` only when `include_git`) and snapshots it.
    ///
    /// # Errors
    /// When `source` is not a directory or a file can not be copied.
    pub fn create(source: &Path, include_git: bool) -> Result<Self, WorkspaceError> {
        if !source.is_dir() {
            return Err(WorkspaceError::Missing(source.to_owned()));
        }
        let dir = tempfile::Builder::new()
            .prefix("aptitude-ws-")
            .tempdir()
            .map_err(|source_err| WorkspaceError::Io {
                path: std::env::temp_dir(),
                source: source_err,
            })?;
        let root = dir.path().join("workspace");
        copy_tree(source, &root, include_git)?;
        let before = snapshot(&root)?;
        Ok(Workspace {
            dir: Some(dir),
            root,
            before,
        })
    }

    /// The copy's root directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The files created, modified or deleted since the copy was made, sorted by path.
    ///
    /// # Errors
    /// When the tree can not be read.
    pub fn changes(&self) -> Result<Vec<FileChange>, WorkspaceError> {
        let after = snapshot(&self.root)?;
        let mut changes = Vec::new();
        for (path, (size, hash)) in &after {
            match self.before.get(path) {
                None => changes.push(FileChange {
                    path: path.clone(),
                    change: ChangeKind::Created,
                    size: Some(*size),
                }),
                Some(old) if old != &(*size, *hash) => changes.push(FileChange {
                    path: path.clone(),
                    change: ChangeKind::Modified,
                    size: Some(*size),
                }),
                Some(_) => {}
            }
        }
        for path in self.before.keys() {
            if !after.contains_key(path) {
                changes.push(FileChange {
                    path: path.clone(),
                    change: ChangeKind::Deleted,
                    size: None,
                });
            }
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(changes)
    }

    /// Keeps the copy on disk after the workspace is dropped; returns its path.
    pub fn keep(&mut self) -> PathBuf {
        if let Some(dir) = self.dir.take() {
            let _ = dir.keep();
        }
        self.root.clone()
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> WorkspaceError + '_ {
    move |source| WorkspaceError::Io {
        path: path.to_owned(),
        source,
    }
}

fn copy_tree(from: &Path, to: &Path, include_git: bool) -> Result<(), WorkspaceError> {
    std::fs::create_dir_all(to).map_err(io_err(to))?;
    for entry in std::fs::read_dir(from).map_err(io_err(from))? {
        let entry = entry.map_err(io_err(from))?;
        let name = entry.file_name();
        let name_str = name.to_string_lossy();
        if (name_str == ".git" && !include_git)
            || crate::spec::discover::is_aptitude_file(&name_str)
        {
            continue;
        }
        let src = entry.path();
        let dst = to.join(&name);
        let file_type = entry.file_type().map_err(io_err(&src))?;
        if file_type.is_symlink() {
            let target = std::fs::read_link(&src).map_err(io_err(&src))?;
            std::os::unix::fs::symlink(&target, &dst).map_err(io_err(&dst))?;
        } else if file_type.is_dir() {
            copy_tree(&src, &dst, include_git)?;
            let perms = std::fs::metadata(&src).map_err(io_err(&src))?.permissions();
            std::fs::set_permissions(&dst, perms).map_err(io_err(&dst))?;
        } else if file_type.is_file() {
            std::fs::copy(&src, &dst).map_err(io_err(&src))?;
        }
    }
    Ok(())
}

fn snapshot(root: &Path) -> Result<Snapshot, WorkspaceError> {
    let mut out = Snapshot::new();
    walk(root, root, &mut out)?;
    Ok(out)
}

fn walk(root: &Path, dir: &Path, out: &mut Snapshot) -> Result<(), WorkspaceError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        // A directory the agent made unreadable is skipped, not fatal.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => return Ok(()),
        Err(e) => return Err(io_err(dir)(e)),
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if entry.file_name() == ".git" {
            continue;
        }
        if file_type.is_dir() {
            walk(root, &path, out)?;
        } else if file_type.is_file() || file_type.is_symlink() {
            let rel = path
                .strip_prefix(root)
                .map(|p| {
                    p.components()
                        .map(|c| c.as_os_str().to_string_lossy())
                        .collect::<Vec<_>>()
                        .join("/")
                })
                .unwrap_or_default();
            let fingerprint = if file_type.is_symlink() {
                let target = std::fs::read_link(&path).unwrap_or_default();
                (0, hash_bytes(target.as_os_str().as_encoded_bytes()))
            } else {
                match std::fs::read(&path) {
                    Ok(bytes) => (bytes.len() as u64, hash_bytes(&bytes)),
                    Err(_) => (0, 0),
                }
            };
            out.insert(rel, fingerprint);
        }
    }
    Ok(())
}

fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("src")).unwrap();
        std::fs::create_dir_all(p.join(".git")).unwrap();
        std::fs::write(p.join(".git/HEAD"), "ref").unwrap();
        std::fs::write(p.join(".env"), "KEY=1").unwrap();
        std::fs::write(p.join("src/a.txt"), "a").unwrap();
        std::fs::write(p.join("gone.txt"), "x").unwrap();
        std::fs::write(p.join("t.aptitude.yaml"), "name: t").unwrap();
        dir
    }

    #[test]
    fn copies_hidden_files_but_not_git_or_tests() {
        let src = fixture();
        let ws = Workspace::create(src.path(), false).unwrap();
        assert!(ws.path().join(".env").is_file());
        assert!(ws.path().join("src/a.txt").is_file());
        assert!(!ws.path().join(".git").exists());
        assert!(
            !ws.path().join("t.aptitude.yaml").exists(),
            "the agent must not see its test"
        );
        let with_git = Workspace::create(src.path(), true).unwrap();
        assert!(with_git.path().join(".git/HEAD").is_file());
    }

    #[test]
    fn records_changes_and_leaves_the_source_alone() {
        let src = fixture();
        let ws = Workspace::create(src.path(), false).unwrap();
        std::fs::write(ws.path().join("src/a.txt"), "changed").unwrap();
        std::fs::create_dir_all(ws.path().join("out/deep")).unwrap();
        std::fs::write(ws.path().join("out/deep/new.txt"), "n").unwrap();
        std::fs::remove_file(ws.path().join("gone.txt")).unwrap();
        let changes = ws.changes().unwrap();
        let summary: Vec<(&str, ChangeKind)> = changes
            .iter()
            .map(|c| (c.path.as_str(), c.change))
            .collect();
        assert_eq!(
            summary,
            [
                ("gone.txt", ChangeKind::Deleted),
                ("out/deep/new.txt", ChangeKind::Created),
                ("src/a.txt", ChangeKind::Modified)
            ]
        );
        assert_eq!(
            std::fs::read_to_string(src.path().join("src/a.txt")).unwrap(),
            "a"
        );
        assert!(src.path().join("gone.txt").is_file());
    }

    #[test]
    fn copy_is_removed_unless_kept() {
        let src = fixture();
        let ws = Workspace::create(src.path(), false).unwrap();
        let path = ws.path().to_owned();
        drop(ws);
        assert!(!path.exists());
        let mut kept = Workspace::create(src.path(), false).unwrap();
        let path = kept.keep();
        drop(kept);
        assert!(path.is_dir());
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn missing_source_is_an_error() {
        let err = Workspace::create(Path::new("/nonexistent/ws"), false).unwrap_err();
        assert!(err.to_string().contains("does not exist"));
    }
}
