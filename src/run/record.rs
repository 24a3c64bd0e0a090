//! `--record`: the agent's raw transcript written beside its test file
//! (`x.transcript.jsonl`), redacted, atomically, and saying when another run of the same
//! test replaced it.

use crate::spec::diagnostic::display_path;

/// The transcripts this process recorded: another run of the same test (on another
/// agent, a later repeat) may replace them without the test being named.
static RECORDED: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Whether `--record` may write the transcript `path` of the test file `test`: when no
/// transcript is there, when this process wrote it, or when the test was asked for by
/// name — `test` itself, or its own directory, is one of the paths `named` on the command
/// line. A transcript found beside a test reached only by discovery (a bundled example's,
/// recorded elsewhere and kept as a fixture) is never overwritten.
pub fn may_replace(
    path: &std::path::Path,
    test: &std::path::Path,
    named: &[std::path::PathBuf],
) -> bool {
    if !path.exists() {
        return true;
    }
    let canonical = |p: &std::path::Path| std::fs::canonicalize(p).ok();
    let Some(path) = canonical(path) else {
        return false;
    };
    if RECORDED.lock().map(|r| r.contains(&path)).unwrap_or(false) {
        return true;
    }
    let test = canonical(test);
    let dir = test
        .as_deref()
        .and_then(std::path::Path::parent)
        .map(std::path::Path::to_owned);
    named
        .iter()
        .filter_map(|p| canonical(p))
        .any(|p| Some(&p) == test.as_ref() || Some(&p) == dir.as_ref())
}

/// Notes that this process wrote the transcript `path` ([`may_replace`]).
fn note_recorded(path: &std::path::Path) {
    if let (Ok(path), Ok(mut recorded)) = (std::fs::canonicalize(path), RECORDED.lock())
        && !recorded.contains(&path)
    {
        recorded.push(path);
    }
}

/// A transcript this run recorded: where, and the file's identity right after.
pub(super) type Written = (std::path::PathBuf, FileIdentity);

/// What identifies one version of a file: (inode, size in bytes, mtime in ns).
pub(super) type FileIdentity = (u64, u64, i128);

/// The identity of the file at `path`, when there is one.
pub(super) fn file_identity(path: &std::path::Path) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.ino(),
        m.len(),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    ))
}

/// Writes a recorded transcript (`x.transcript.jsonl`, already redacted) atomically: to a
/// temp file in the same directory, then renamed over the old one, so that a reader — or a
/// concurrent run recording the same test — never sees a mix of two runs. Returns where
/// it went, saying when this run replaced a transcript another run wrote since `before`
/// (the file's identity when this test started): the last run to record wins, and says so.
/// Also returns the identity of the file it wrote.
pub(super) fn record_atomically(
    path: &std::path::Path,
    text: &str,
    before: Option<FileIdentity>,
) -> (String, Option<FileIdentity>) {
    let replaced = file_identity(path).is_some_and(|now| Some(now) != before);
    match crate::shared::files::write_output(path, text.as_bytes()) {
        Ok(()) => {
            note_recorded(path);
            let identity = file_identity(path);
            let said = if replaced {
                format!(
                    "{} (this run's transcript replaced one another run recorded while this test ran)",
                    display_path(path)
                )
            } else {
                display_path(path)
            };
            (said, identity)
        }
        Err(e) => (format!("not recorded: {e}"), None),
    }
}

/// Says in `recorded` when the transcript at `path` is no longer the one this run wrote
/// (`identity`): another run recorded the same test after this one, and won.
pub(super) fn note_if_replaced(
    recorded: &mut Option<String>,
    path: &std::path::Path,
    identity: FileIdentity,
) {
    if file_identity(path) != Some(identity)
        && let Some(text) = recorded.as_mut()
    {
        text.push_str(" (since replaced: another run recorded this test after this one)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_says_when_it_replaced_another_runs_transcript() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.transcript.jsonl");
        // This run starts with no recording; another run records while it runs.
        let before = file_identity(&path);
        std::fs::write(&path, "{\"other\":1}\n").unwrap();
        let (said, _) = record_atomically(&path, "{\"mine\":1}\n", before);
        assert!(
            said.ends_with(
                "(this run's transcript replaced one another run recorded while this test ran)"
            ),
            "{said}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"mine\":1}\n");

        // A run that finds the file as it was when it started says nothing more.
        let before = file_identity(&path);
        let (said, mine) = record_atomically(&path, "{\"again\":1}\n", before);
        assert_eq!(said, display_path(&path));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"again\":1}\n");
        // The temp file was renamed, not left beside the transcript.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["t.transcript.jsonl"]);

        // Another run records the same test afterwards: this run's result says it lost.
        let mut recorded = Some(said);
        note_if_replaced(&mut recorded, &path, mine.unwrap());
        assert_eq!(recorded.as_deref(), Some(display_path(&path).as_str()));
        std::fs::write(&path, "{\"later\":1}\n").unwrap();
        note_if_replaced(&mut recorded, &path, mine.unwrap());
        assert_eq!(
            recorded.unwrap(),
            format!(
                "{} (since replaced: another run recorded this test after this one)",
                display_path(&path)
            )
        );
    }

    #[test]
    fn concurrent_recordings_never_mix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.transcript.jsonl");
        let texts: Vec<String> = (0..8)
            .map(|i| format!("{{\"run\":{i}}}\n").repeat(20_000))
            .collect();
        std::thread::scope(|s| {
            for text in &texts {
                let path = &path;
                s.spawn(move || record_atomically(path, text, None));
            }
        });
        let kept = std::fs::read_to_string(&path).unwrap();
        assert!(
            texts.contains(&kept),
            "the file is one run's transcript, whole"
        );
    }
}
