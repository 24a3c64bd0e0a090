//! Finding test files: `*.aptitude.yaml` and `*.aptitude.yml` under the given paths.
//!
//! A directory is searched recursively with the `ignore` crate, so `.gitignore`,
//! `.ignore` and global git excludes are respected (also outside a git repository);
//! hidden directories such as `.github/` are searched, `.git/` never. A file named
//! explicitly is taken whatever its name.

use std::path::{Path, PathBuf};

/// Why discovery failed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// A path given on the command line does not exist.
    #[error("no such file or directory: {}", .0.display())]
    Missing(PathBuf),
    /// The directory walk failed (permissions, a broken symlink loop).
    #[error("can not search {}: {source}", path.display())]
    Walk {
        /// The directory searched.
        path: PathBuf,
        /// The walker's error.
        #[source]
        source: ignore::Error,
    },
}

/// The suffixes that mark a test file.
const TEST_SUFFIXES: [&str; 2] = [".aptitude.yaml", ".aptitude.yml"];

/// The suffixes of a recorded transcript, the one `aptitude run --record` writes first.
const TRANSCRIPT_SUFFIXES: [&str; 2] = [".transcript.jsonl", ".transcript.json"];

/// A test file's name without its suffix: `x.aptitude.yaml` → `x`; `None` for any other
/// file.
fn test_stem(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    TEST_SUFFIXES.iter().find_map(|s| name.strip_suffix(s))
}

/// Whether a file name marks a test file.
pub fn is_test_file(path: &Path) -> bool {
    test_stem(path).is_some()
}

/// Whether a file name marks one of aptitude's own files: a test file, a recorded
/// transcript or a suite defaults file (`aptitude.yaml`; never copied into an agent's
/// workspace).
pub fn is_aptitude_file(name: &str) -> bool {
    name == super::suite::SUITE_FILE
        || TEST_SUFFIXES
            .iter()
            .chain(&TRANSCRIPT_SUFFIXES)
            .any(|s| name.ends_with(s))
}

/// Where `aptitude run --record` writes a test's transcript: `x.aptitude.yaml` →
/// `x.transcript.jsonl` beside it; `None` when `test_file` is not named as a test file.
pub fn transcript_path(test_file: &Path) -> Option<PathBuf> {
    let stem = test_stem(test_file)?;
    Some(test_file.with_file_name(format!("{stem}{}", TRANSCRIPT_SUFFIXES[0])))
}

/// The transcript recorded beside a test file, if one exists: `x.transcript.jsonl`, else
/// `x.transcript.json`.
pub fn recorded_transcript(test_file: &Path) -> Option<PathBuf> {
    let stem = test_stem(test_file)?;
    TRANSCRIPT_SUFFIXES
        .iter()
        .map(|s| test_file.with_file_name(format!("{stem}{s}")))
        .find(|p| p.is_file())
}

/// Expands `paths` into test files: directories recursively, files as given.
///
/// The result is sorted within each directory and free of duplicates, so runs are
/// reproducible.
///
/// # Errors
/// A path that does not exist, or a directory that can not be walked.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, DiscoverError> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        if !path.is_dir() {
            // A file named explicitly is taken whatever it is; loading it says when it is
            // not a regular file (a FIFO, a device) rather than "no such file".
            if std::fs::symlink_metadata(path).is_err() {
                return Err(DiscoverError::Missing(path.clone()));
            }
            out.push(path.clone());
            continue;
        }
        let mut found = Vec::new();
        let walker = ignore::WalkBuilder::new(path)
            .hidden(false)
            .require_git(false)
            .filter_entry(|entry| entry.file_name() != ".git")
            .build();
        for entry in walker {
            let entry = entry.map_err(|source| DiscoverError::Walk {
                path: path.clone(),
                source,
            })?;
            // Anything named as a test but a directory is taken, links and FIFOs included,
            // so that loading reports it instead of a test silently going missing.
            if entry.file_type().is_some_and(|t| !t.is_dir()) && is_test_file(entry.path()) {
                found.push(entry.into_path());
            }
        }
        found.sort();
        out.extend(found);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_files_and_their_transcripts_are_paired_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let yml = dir.path().join("a.aptitude.yml");
        assert_eq!(
            transcript_path(&yml),
            Some(dir.path().join("a.transcript.jsonl"))
        );
        assert_eq!(transcript_path(&dir.path().join("a.yaml")), None);
        assert_eq!(recorded_transcript(&yml), None);
        std::fs::write(dir.path().join("a.transcript.json"), "").unwrap();
        assert_eq!(
            recorded_transcript(&yml),
            Some(dir.path().join("a.transcript.json"))
        );
        std::fs::write(dir.path().join("a.transcript.jsonl"), "").unwrap();
        assert_eq!(
            recorded_transcript(&yml),
            Some(dir.path().join("a.transcript.jsonl")),
            "the recorded .jsonl wins"
        );
        for own in [
            "t.aptitude.yaml",
            "t.aptitude.yml",
            "t.transcript.jsonl",
            "t.transcript.json",
            "aptitude.yaml",
        ] {
            assert!(is_aptitude_file(own), "{own}");
        }
        assert!(!is_aptitude_file("transcript.md"));
        assert!(
            !is_test_file(Path::new("tests/aptitude.yaml")),
            "suite defaults are no test"
        );
    }

    #[test]
    fn finds_nested_tests_and_respects_gitignore() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("ignored")).unwrap();
        std::fs::create_dir_all(root.join(".github")).unwrap();
        std::fs::write(root.join("a/b/x.aptitude.yaml"), "").unwrap();
        std::fs::write(root.join("a/y.aptitude.yml"), "").unwrap();
        std::fs::write(root.join("a/not-a-test.yaml"), "").unwrap();
        std::fs::write(root.join("ignored/z.aptitude.yaml"), "").unwrap();
        std::fs::write(root.join(".github/h.aptitude.yaml"), "").unwrap();
        std::fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
        let found = discover(&[root.to_owned()]).unwrap();
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                ".github/h.aptitude.yaml",
                "a/b/x.aptitude.yaml",
                "a/y.aptitude.yml"
            ]
        );
    }

    #[test]
    fn explicit_files_are_kept_and_missing_paths_fail() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("custom.yaml");
        std::fs::write(&file, "").unwrap();
        assert_eq!(
            discover(std::slice::from_ref(&file)).unwrap(),
            std::slice::from_ref(&file)
        );
        assert!(matches!(
            discover(&[dir.path().join("nope")]),
            Err(DiscoverError::Missing(_))
        ));
    }
}
