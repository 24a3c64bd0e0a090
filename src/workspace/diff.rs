//! The changes a run made, as unified diffs: what a reader opens to see what the agent
//! did to a file, not just that it touched it.
//!
//! Diffs are made when the run's changes are snapshotted ([`super::Workspace::changes`]),
//! bounded: a file is shown when it is text (valid UTF-8, no NUL byte) and at most
//! [`DIFF_FILE_MAX`] bytes before and after, its diff cut at [`DIFF_FILE_MAX`] bytes, and
//! a run's diffs stop at [`DIFF_RUN_MAX`] bytes in all; any other change is named with why
//! it is not shown ([`super::FileChange::diff_omitted`]). The content before the run is
//! read from the workspace's source and used only when it is what the copy held (same
//! size and hash as the snapshot): a source edited during the run is never passed off as
//! the file before. Links are never followed out of either tree, and neither tree's
//! FIFOs or devices are opened ([`crate::shared::files::read_capped`]).
//!
//! The diff itself is `similar`'s (Myers, with a deadline): `--- a/path` / `+++ b/path`
//! headers (`/dev/null` for a created or deleted file), three lines of context.

use std::path::Path;
use std::time::Duration;

use super::{ChangeKind, FileChange, Snapshot};

/// The largest file shown as a diff, before or after the run, and the most bytes of one
/// file's diff kept (64 KiB).
pub const DIFF_FILE_MAX: usize = 64 * 1024;

/// The most bytes of diffs one run keeps (256 KiB); later files are named only.
pub const DIFF_RUN_MAX: usize = 256 * 1024;

/// How long one file's diff may take before `similar` settles for a coarser one.
const DIFF_DEADLINE: Duration = Duration::from_millis(500);

/// One side of a change: its text, or why it can not be shown.
type Side = Result<String, NotShown>;

/// Why a change is not shown as a diff ([`super::FileChange::diff_omitted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum NotShown {
    /// The file (or its metadata) could not be read, or leads out of its tree.
    #[error("not shown: it can not be read")]
    Unreadable,
    /// A symbolic link, never followed.
    #[error("not shown: a symbolic link")]
    Link,
    /// The file before the run is not known: the snapshot has none, or the source no
    /// longer holds what the copy held.
    #[error("not shown: the file before the run is no longer in the source")]
    Gone,
    /// Over [`DIFF_FILE_MAX`] bytes, before or after.
    #[error("not shown: over {} KiB", DIFF_FILE_MAX / 1024)]
    Over,
    /// Not UTF-8, or holds a NUL byte.
    #[error("not shown: binary")]
    Binary,
    /// A directory, FIFO, socket or device.
    #[error("not shown: not a regular file")]
    NotRegular,
}

/// Fills each change's `diff` (or `diff_omitted`): `source` is the tree the copy was made
/// from, `before` the copy's snapshot when it was made, `root` the copy after the run.
pub(super) fn add_diffs(changes: &mut [FileChange], source: &Path, before: &Snapshot, root: &Path) {
    let mut left = DIFF_RUN_MAX;
    for change in changes {
        if left == 0 {
            change.diff_omitted = Some(format!(
                "not shown: the run's diffs reached {} KiB",
                DIFF_RUN_MAX / 1024
            ));
            continue;
        }
        let old: Side = match change.change {
            ChangeKind::Created => Ok(String::new()),
            _ => text_before(source, &change.path, before.get(&change.path).copied()),
        };
        let new: Side = match change.change {
            ChangeKind::Deleted => Ok(String::new()),
            _ => text_in(root, &change.path),
        };
        match (old, new) {
            (Ok(old), Ok(new)) => {
                let diff = unified(&change.path, change.change, &old, &new);
                let cut = crate::shared::cut::bytes(&diff, DIFF_FILE_MAX.min(left));
                left = left.saturating_sub(cut.kept.len());
                change.diff = Some(if cut.was_cut() {
                    format!(
                        "{}\n… [diff cut: {} more characters]",
                        cut.kept, cut.left_out
                    )
                } else {
                    cut.kept
                });
            }
            (Err(why), _) | (_, Err(why)) => change.diff_omitted = Some(why.to_string()),
        }
    }
}

/// `git diff`'s unified form of `old` → `new` for `path`.
fn unified(path: &str, kind: ChangeKind, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::configure()
        .algorithm(similar::Algorithm::Myers)
        .timeout(DIFF_DEADLINE)
        .diff_lines(old, new);
    let (a, b) = (format!("a/{path}"), format!("b/{path}"));
    let (a, b) = match kind {
        ChangeKind::Created => ("/dev/null", b.as_str()),
        ChangeKind::Deleted => (a.as_str(), "/dev/null"),
        ChangeKind::Modified => (a.as_str(), b.as_str()),
    };
    diff.unified_diff()
        .context_radius(3)
        .header(a, b)
        .to_string()
}

/// The text of `rel` in `root` after the run, or why it is not shown. A link is not
/// followed; a path that leads out of `root` is not read.
fn text_in(root: &Path, rel: &str) -> Side {
    let path = root.join(rel);
    let meta = std::fs::symlink_metadata(&path).map_err(|_| NotShown::Unreadable)?;
    if meta.file_type().is_symlink() {
        return Err(NotShown::Link);
    }
    match crate::shared::files::resolve_in(root, Path::new(rel)) {
        Ok(crate::shared::files::Resolved::Inside(p)) => read_text(&p),
        _ => Err(NotShown::Unreadable),
    }
}

/// The text of `rel` before the run, read from the source, when the source still holds
/// what the copy held (`fingerprint`, the snapshot's size and hash).
fn text_before(source: &Path, rel: &str, fingerprint: Option<(u64, u64)>) -> Side {
    let fingerprint = fingerprint.ok_or(NotShown::Gone)?;
    if fingerprint.0 > DIFF_FILE_MAX as u64 {
        return Err(NotShown::Over);
    }
    let path = match crate::shared::files::resolve_in(source, Path::new(rel)) {
        Ok(crate::shared::files::Resolved::Inside(p)) => p,
        _ => return Err(NotShown::Gone),
    };
    let meta = std::fs::symlink_metadata(source.join(rel)).map_err(|_| NotShown::Gone)?;
    if meta.file_type().is_symlink() {
        return Err(NotShown::Link);
    }
    if crate::shared::files::hash(&path).ok() != Some(fingerprint) {
        return Err(NotShown::Gone);
    }
    read_text(&path)
}

/// A regular file's content as text: at most [`DIFF_FILE_MAX`] bytes, UTF-8, no NUL.
fn read_text(path: &Path) -> Side {
    use crate::shared::files::{FileError, read_capped};
    match read_capped(path, DIFF_FILE_MAX as u64) {
        Ok(bytes) if bytes.contains(&0) => Err(NotShown::Binary),
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| NotShown::Binary),
        Err(FileError::TooLarge { .. }) => Err(NotShown::Over),
        Err(FileError::NotRegular(_)) => Err(NotShown::NotRegular),
        Err(FileError::Io(_)) => Err(NotShown::Unreadable),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Workspace;
    use super::*;

    fn diff_of<'a>(changes: &'a [FileChange], path: &str) -> &'a FileChange {
        changes.iter().find(|c| c.path == path).unwrap()
    }

    #[test]
    fn text_changes_are_unified_diffs_and_others_are_named_with_why() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("app.py"), "a\nb\nc\n").unwrap();
        std::fs::write(src.path().join("gone.txt"), "bye\n").unwrap();
        std::fs::write(src.path().join("blob.bin"), b"\x00\x01").unwrap();
        std::fs::write(src.path().join("big.txt"), "x\n".repeat(DIFF_FILE_MAX)).unwrap();
        let ws = Workspace::create(src.path(), false).unwrap();
        let root = ws.path();
        std::fs::write(root.join("app.py"), "a\nB\nc\n").unwrap();
        std::fs::remove_file(root.join("gone.txt")).unwrap();
        std::fs::write(root.join("new.md"), "hello\n").unwrap();
        std::fs::write(root.join("blob.bin"), b"\x00\x02").unwrap();
        std::fs::write(root.join("big.txt"), "y\n").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("link")).unwrap();
        let changes = ws.changes().unwrap();
        assert_eq!(
            diff_of(&changes, "app.py").diff.as_deref(),
            Some("--- a/app.py\n+++ b/app.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
        );
        assert_eq!(
            diff_of(&changes, "gone.txt").diff.as_deref(),
            Some("--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n")
        );
        assert_eq!(
            diff_of(&changes, "new.md").diff.as_deref(),
            Some("--- /dev/null\n+++ b/new.md\n@@ -0,0 +1 @@\n+hello\n")
        );
        let omitted = |p: &str| diff_of(&changes, p).diff_omitted.clone().unwrap();
        assert_eq!(omitted("blob.bin"), "not shown: binary");
        assert_eq!(omitted("big.txt"), "not shown: over 64 KiB");
        assert_eq!(omitted("link"), "not shown: a symbolic link");
        assert!(diff_of(&changes, "link").diff.is_none());
    }

    /// A source edited during the run is not passed off as the file before it.
    #[test]
    fn a_source_changed_since_the_copy_is_not_the_file_before() {
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("a.txt"), "one\n").unwrap();
        let ws = Workspace::create(src.path(), false).unwrap();
        std::fs::write(src.path().join("a.txt"), "edited meanwhile\n").unwrap();
        std::fs::write(ws.path().join("a.txt"), "two\n").unwrap();
        let changes = ws.changes().unwrap();
        assert_eq!(
            changes[0].diff_omitted.as_deref(),
            Some("not shown: the file before the run is no longer in the source")
        );
    }

    #[test]
    fn a_runs_diffs_are_bounded_in_all() {
        let src = tempfile::tempdir().unwrap();
        let ws = Workspace::create(src.path(), false).unwrap();
        // Ten files of 60 KiB each: about four fit in 256 KiB of diffs.
        for i in 0..10 {
            let line = format!("line of file {i} ........................................\n");
            std::fs::write(
                ws.path().join(format!("f{i}.txt")),
                line.repeat(60 * 1024 / line.len()),
            )
            .unwrap();
        }
        let changes = ws.changes().unwrap();
        let shown: usize = changes
            .iter()
            .filter_map(|c| c.diff.as_ref())
            .map(String::len)
            .sum();
        assert!(shown <= DIFF_RUN_MAX + 1_000, "{shown}");
        assert!(changes.iter().filter(|c| c.diff.is_some()).count() >= 4);
        assert_eq!(
            changes[9].diff_omitted.as_deref(),
            Some("not shown: the run's diffs reached 256 KiB")
        );
    }
}
