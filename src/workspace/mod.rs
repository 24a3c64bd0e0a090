//! Workspaces: where a test's agent runs.
//!
//! Each test runs in a fresh temporary copy of its workspace (by default the directory that
//! holds the test file). Hidden files such as `.env` are copied — tests are about them;
//! `.git` is not, unless asked, and neither are aptitude's own test files and recorded
//! transcripts, so the agent can not read the assertions it is judged by. The source is
//! never modified. A snapshot taken before the agent runs tells which files it created,
//! modified or deleted. The copy is removed when the workspace is dropped, unless kept.
//!
//! The copy never gives the agent a way out of it:
//! - a symbolic link that resolves inside the source is recreated as a *relative* link to
//!   the same place inside the copy, so writing through it changes the copy, not the
//!   original;
//! - a link that leads outside the source (or dangles outside it) is replaced by a
//!   dangling link whose target names the original, [`OUTSIDE_LINK_PREFIX`]`<target>`:
//!   reading it fails and writing through it creates nothing outside the copy;
//! - only regular files, directories and links are copied (FIFOs, sockets and devices are
//!   skipped), files are copied sparse (holes stay holes) through a fixed buffer, and the
//!   snapshot hashes each file by streaming it, so memory stays flat in file size.

use std::collections::BTreeMap;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod diff;

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
    /// The change as a unified diff (`--- a/path`, `+++ b/path`, hunks), bounded
    /// ([`diff::DIFF_FILE_MAX`] per file, [`diff::DIFF_RUN_MAX`] per run); absent for a
    /// change not shown (see `diff_omitted`) and in results written before diffs were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// Why the change is not shown as a diff: `not shown: binary`, `… over 64 KiB`, `… a
    /// symbolic link`, `… the run's diffs reached 256 KiB`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff_omitted: Option<String>,
}

impl FileChange {
    /// A change of `path` (`size` afterwards, in bytes), without a diff.
    pub fn new(path: impl Into<String>, change: ChangeKind, size: Option<u64>) -> Self {
        FileChange {
            path: path.into(),
            change,
            size,
            diff: None,
            diff_omitted: None,
        }
    }
}

/// Content fingerprints of a tree: path → (size in bytes, hash).
pub(crate) type Snapshot = BTreeMap<String, (u64, u64)>;

/// The target given to a link of the source that leads outside it, followed by the original
/// target: `aptitude-outside-link:/etc/passwd`. Such a link dangles in the copy.
pub const OUTSIDE_LINK_PREFIX: &str = "aptitude-outside-link:";

/// Why a variant's `remove`/`add` could not be applied to the copy.
#[derive(Debug, thiserror::Error)]
pub enum VariantError {
    /// The path names no file (`remove: .`).
    #[error("`{key}: {path}` names no file")]
    NoFile {
        /// `remove` or `add`.
        key: &'static str,
        /// The path as written.
        path: String,
    },
    /// A `remove` path that is not in the copy.
    #[error("`remove: {0}`: there is no such path in the workspace")]
    NotThere(String),
    /// A path whose parent leads outside the copy through a link.
    #[error("{0} leads outside the workspace")]
    Outside(String),
    /// Reading or writing the copy failed.
    #[error("`{key}: {path}`: {source}")]
    Io {
        /// `remove` or `add`.
        key: &'static str,
        /// The path as written.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// A temporary copy of a workspace.
#[derive(Debug)]
pub struct Workspace {
    dir: Option<tempfile::TempDir>,
    root: PathBuf,
    /// The tree the copy was made from: the content before the run, for diffs.
    source: PathBuf,
    before: Snapshot,
}

impl Workspace {
    /// Applies a variant to the copy: deletes `remove` paths (a link itself, never its
    /// target; a directory with its contents) and writes `add` files, creating their
    /// directories. Paths are relative to the copy and were checked at load to stay inside
    /// it; a parent that leads outside through a link is refused here.
    ///
    /// # Errors
    /// [`VariantError`] naming the path: a `remove` path that is not in the copy, a path
    /// that leads outside it, or an I/O failure.
    pub fn apply_variant(
        &self,
        remove: &[String],
        add: &[(String, String)],
    ) -> Result<(), VariantError> {
        let root = self.path();
        let io = |key: &'static str, rel: &str| {
            let path = rel.to_owned();
            move |source| VariantError::Io { key, path, source }
        };
        let inside_parent =
            |key: &'static str, rel: &str| -> Result<std::path::PathBuf, VariantError> {
                let path = Path::new(rel);
                let parent = path.parent().unwrap_or(Path::new(""));
                match crate::shared::files::resolve_in(root, parent).map_err(io(key, rel))? {
                    crate::shared::files::Resolved::Inside(p) => Ok(p),
                    crate::shared::files::Resolved::Missing => Ok(root.join(parent)),
                    crate::shared::files::Resolved::Outside(_) => {
                        Err(VariantError::Outside(rel.to_owned()))
                    }
                }
            };
        let no_file = |key: &'static str, rel: &str| VariantError::NoFile {
            key,
            path: rel.to_owned(),
        };
        for rel in remove {
            let name = Path::new(rel)
                .file_name()
                .ok_or_else(|| no_file("remove", rel))?;
            let path = inside_parent("remove", rel)?.join(name);
            let meta = std::fs::symlink_metadata(&path)
                .map_err(|_| VariantError::NotThere(rel.clone()))?;
            let removed = if meta.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            removed.map_err(io("remove", rel))?;
        }
        for (rel, content) in add {
            let name = Path::new(rel)
                .file_name()
                .ok_or_else(|| no_file("add", rel))?;
            let dir = inside_parent("add", rel)?;
            std::fs::create_dir_all(&dir).map_err(io("add", rel))?;
            let path = dir.join(name);
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                std::fs::remove_file(&path).map_err(io("add", rel))?;
            }
            std::fs::write(&path, content).map_err(io("add", rel))?;
        }
        Ok(())
    }

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
        copy_tree(source, source, &root, include_git)?;
        let before = snapshot(&root)?;
        tracing::debug!(
            source = %source.display(),
            copy = %root.display(),
            files = before.len(),
            "workspace copied"
        );
        Ok(Workspace {
            dir: Some(dir),
            root,
            source: source.to_owned(),
            before,
        })
    }

    /// The copy's root directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The files created, modified or deleted since the copy was made, sorted by path,
    /// each with its unified diff when it is shown ([`diff`]).
    ///
    /// # Errors
    /// When the tree can not be read.
    pub fn changes(&self) -> Result<Vec<FileChange>, WorkspaceError> {
        let after = snapshot(&self.root)?;
        let mut changes = Vec::new();
        for (path, (size, hash)) in &after {
            match self.before.get(path) {
                None => changes.push(FileChange::new(
                    path.clone(),
                    ChangeKind::Created,
                    Some(*size),
                )),
                Some(old) if old != &(*size, *hash) => changes.push(FileChange::new(
                    path.clone(),
                    ChangeKind::Modified,
                    Some(*size),
                )),
                Some(_) => {}
            }
        }
        for path in self.before.keys() {
            if !after.contains_key(path) {
                changes.push(FileChange::new(path.clone(), ChangeKind::Deleted, None));
            }
        }
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        diff::add_diffs(&mut changes, &self.source, &self.before, &self.root);
        Ok(changes)
    }

    /// Copies each plugin directory (a test's `plugins:`) beside the workspace copy, as
    /// `<temp dir>/plugins/<n>/<directory name>`, and returns the copies in order: the
    /// agent loads, and can change, only copies. Links that leave a plugin dangle, as in
    /// the workspace copy.
    ///
    /// # Errors
    /// When a directory is missing or a file can not be copied.
    pub fn copy_plugins(&self, dirs: &[PathBuf]) -> Result<Vec<PathBuf>, WorkspaceError> {
        let base = self.root.parent().unwrap_or(&self.root).join("plugins");
        let mut copies = Vec::new();
        for (n, dir) in dirs.iter().enumerate() {
            if !dir.is_dir() {
                return Err(WorkspaceError::Missing(dir.clone()));
            }
            let name = dir
                .canonicalize()
                .ok()
                .and_then(|d| d.file_name().map(ToOwned::to_owned))
                .unwrap_or_else(|| "plugin".into());
            let copy = base.join(n.to_string()).join(name);
            copy_tree(dir, dir, &copy, false)?;
            copies.push(copy);
        }
        Ok(copies)
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

/// Copies the tree `from` (the source root is `source`) into `to`.
fn copy_tree(
    source: &Path,
    from: &Path,
    to: &Path,
    include_git: bool,
) -> Result<(), WorkspaceError> {
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
            let target = link_target_in_copy(source, &src)?;
            std::os::unix::fs::symlink(&target, &dst).map_err(io_err(&dst))?;
        } else if file_type.is_dir() {
            copy_tree(source, &src, &dst, include_git)?;
            let perms = std::fs::metadata(&src).map_err(io_err(&src))?.permissions();
            std::fs::set_permissions(&dst, perms).map_err(io_err(&dst))?;
        } else if file_type.is_file() {
            copy_sparse(&src, &dst)?;
        }
    }
    Ok(())
}

/// What a link of the source points to in the copy: the same place relative to the link
/// when it stays inside the source, else a dangling [`OUTSIDE_LINK_PREFIX`] target.
fn link_target_in_copy(source: &Path, link: &Path) -> Result<PathBuf, WorkspaceError> {
    let original = std::fs::read_link(link).map_err(io_err(link))?;
    let rel_link = link.strip_prefix(source).unwrap_or(link);
    let resolved = crate::shared::files::resolve_in(source, rel_link).map_err(io_err(link))?;
    let source_canon = std::fs::canonicalize(source).map_err(io_err(source))?;
    let inside = match &resolved {
        crate::shared::files::Resolved::Inside(p) => p.strip_prefix(&source_canon).ok(),
        // A link to a missing file inside the source keeps its relative form.
        crate::shared::files::Resolved::Missing if original.is_relative() => {
            return Ok(original);
        }
        _ => None,
    };
    match inside {
        Some(target) => {
            // From the link's directory (relative to the source) up to the root, then down.
            let depth = rel_link.parent().map_or(0, |p| p.components().count());
            let mut rel = PathBuf::new();
            for _ in 0..depth {
                rel.push("..");
            }
            rel.push(target);
            if rel.as_os_str().is_empty() {
                rel.push(".");
            }
            Ok(rel)
        }
        None => Ok(PathBuf::from(format!(
            "{OUTSIDE_LINK_PREFIX}{}",
            original.display()
        ))),
    }
}

/// Copies a regular file through a fixed buffer, skipping holes (`SEEK_DATA` /
/// `SEEK_HOLE`) so that a sparse file stays sparse; keeps its permissions.
fn copy_sparse(src: &Path, dst: &Path) -> Result<(), WorkspaceError> {
    use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
    use std::os::fd::AsFd as _;
    let (mut input, meta) = crate::shared::files::open_regular(src).map_err(|e| match e {
        crate::shared::files::FileError::Io(source) => io_err(src)(source),
        other => io_err(src)(std::io::Error::other(other.to_string())),
    })?;
    let len = meta.len();
    let mut output = std::fs::File::create(dst).map_err(io_err(dst))?;
    let mut buf = vec![0u8; 256 * 1024];
    let mut offset: u64 = 0;
    while offset < len {
        let Ok(at) = i64::try_from(offset) else { break };
        // The next data at or after `offset`; none means the rest is a hole. A file system
        // without SEEK_DATA reports all of the file as data.
        let data = match nix::unistd::lseek(input.as_fd(), at, nix::unistd::Whence::SeekData) {
            Ok(d) => u64::try_from(d).unwrap_or(offset),
            Err(nix::errno::Errno::ENXIO) => break,
            Err(_) => offset,
        };
        let hole = match nix::unistd::lseek(
            input.as_fd(),
            i64::try_from(data).unwrap_or(at),
            nix::unistd::Whence::SeekHole,
        ) {
            Ok(h) => u64::try_from(h).unwrap_or(len),
            Err(_) => len,
        };
        input.seek(SeekFrom::Start(data)).map_err(io_err(src))?;
        output.seek(SeekFrom::Start(data)).map_err(io_err(dst))?;
        let mut left = hole.saturating_sub(data);
        while left > 0 {
            let want = usize::try_from(left.min(buf.len() as u64)).unwrap_or(buf.len());
            let n = input.read(&mut buf[..want]).map_err(io_err(src))?;
            if n == 0 {
                break;
            }
            output.write_all(&buf[..n]).map_err(io_err(dst))?;
            left -= n as u64;
        }
        offset = hole.max(data + 1);
    }
    output.set_len(len).map_err(io_err(dst))?;
    std::fs::set_permissions(dst, meta.permissions()).map_err(io_err(dst))?;
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
            continue;
        }
        let rel = path
            .strip_prefix(root)
            .map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_default();
        // A link is fingerprinted by its target, never followed; a file by streaming its
        // content; a FIFO, socket or device the agent made by its kind alone, never opened
        // (it still shows as created).
        let fingerprint = if file_type.is_symlink() {
            let target = std::fs::read_link(&path).unwrap_or_default();
            (0, hash_bytes(target.as_os_str().as_encoded_bytes()))
        } else if file_type.is_file() {
            crate::shared::files::hash(&path).unwrap_or((0, 0))
        } else {
            let kind = std::fs::symlink_metadata(&path)
                .map_or("special file", |m| crate::shared::files::kind_name(&m));
            (0, hash_bytes(kind.as_bytes()))
        };
        out.insert(rel, fingerprint);
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

    #[test]
    fn links_never_reach_outside_the_copy() {
        use std::os::unix::fs::symlink;
        let outer = tempfile::tempdir().unwrap();
        let src = outer.path().join("fixture");
        std::fs::create_dir_all(src.join("conf")).unwrap();
        std::fs::write(src.join("conf/app.toml"), "original").unwrap();
        std::fs::write(outer.path().join("host.txt"), "host").unwrap();
        // An absolute link into the fixture, a relative one, one up and out, one to /etc.
        symlink(src.join("conf/app.toml"), src.join("abs")).unwrap();
        symlink("conf/app.toml", src.join("rel")).unwrap();
        symlink(src.join("conf"), src.join("conf/dirlink")).unwrap();
        symlink("../host.txt", src.join("up")).unwrap();
        symlink("/etc/passwd", src.join("passwd")).unwrap();
        let ws = Workspace::create(&src, false).unwrap();
        let copy = ws.path();
        for link in ["abs", "rel"] {
            std::fs::write(copy.join(link), "written through").unwrap();
        }
        std::fs::write(copy.join("conf/dirlink/app.toml"), "again").unwrap();
        assert_eq!(
            std::fs::read_to_string(src.join("conf/app.toml")).unwrap(),
            "original",
            "the fixture is never written through a link"
        );
        assert_eq!(
            std::fs::read_to_string(copy.join("conf/app.toml")).unwrap(),
            "again"
        );
        assert_eq!(
            std::fs::read_link(copy.join("abs")).unwrap(),
            Path::new("conf/app.toml")
        );
        assert_eq!(
            std::fs::read_link(copy.join("conf/dirlink")).unwrap(),
            Path::new("../conf")
        );
        for (link, original) in [("up", "../host.txt"), ("passwd", "/etc/passwd")] {
            let target = std::fs::read_link(copy.join(link)).unwrap();
            assert_eq!(
                target,
                Path::new(&format!("{OUTSIDE_LINK_PREFIX}{original}"))
            );
            assert!(std::fs::read(copy.join(link)).is_err(), "{link} dangles");
            assert!(
                std::fs::write(copy.join(link), "x").is_err(),
                "{link} writes nowhere"
            );
        }
        assert_eq!(
            std::fs::read_to_string(outer.path().join("host.txt")).unwrap(),
            "host"
        );
    }

    #[test]
    fn sparse_files_stay_sparse_and_fifos_are_not_opened() {
        use std::os::unix::fs::MetadataExt as _;
        let src = tempfile::tempdir().unwrap();
        let big = std::fs::File::create(src.path().join("disk.img")).unwrap();
        big.set_len(1 << 34).unwrap();
        {
            use std::io::{Seek as _, SeekFrom, Write as _};
            let mut f = &big;
            f.seek(SeekFrom::Start(1 << 20)).unwrap();
            f.write_all(b"data in the middle").unwrap();
        }
        let ws = Workspace::create(src.path(), false).unwrap();
        let copied = std::fs::metadata(ws.path().join("disk.img")).unwrap();
        assert_eq!(copied.len(), 1 << 34);
        assert!(
            copied.blocks() * 512 < 1 << 24,
            "holes stay holes: {} blocks",
            copied.blocks()
        );
        let mut middle = [0u8; 18];
        {
            use std::io::{Read as _, Seek as _, SeekFrom};
            let mut f = std::fs::File::open(ws.path().join("disk.img")).unwrap();
            f.seek(SeekFrom::Start(1 << 20)).unwrap();
            f.read_exact(&mut middle).unwrap();
        }
        assert_eq!(&middle, b"data in the middle");
        nix::unistd::mkfifo(&ws.path().join("out.json"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let changes = ws.changes().unwrap();
        assert!(
            changes
                .iter()
                .any(|c| c.path == "out.json" && c.change == ChangeKind::Created),
            "a FIFO the agent made shows as created, without being opened: {changes:?}"
        );
    }
}
