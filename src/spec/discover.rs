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

/// Whether a file name marks a test file.
pub fn is_test_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".aptitude.yaml") || n.ends_with(".aptitude.yml"))
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
        if path.is_file() {
            out.push(path.clone());
            continue;
        }
        if !path.is_dir() {
            return Err(DiscoverError::Missing(path.clone()));
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
            if entry.file_type().is_some_and(|t| t.is_file()) && is_test_file(entry.path()) {
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
