//! Finding test files: `*.aptitude.yaml` and `*.aptitude.yml` under the given paths.
//!
//! A directory is searched recursively with the `ignore` crate, so `.gitignore`,
//! `.ignore` and global git excludes are respected (also outside a git repository);
//! hidden directories such as `.github/` are searched, `.git/` never. A file named
//! explicitly is taken whatever its name.
//!
//! Which files are tests can be configured as the original aptitude (tatimblin/aptitude
//! 0.3.1–0.4) does it, with a **discovery configuration**: `.aptitude.yaml` (or
//! `.aptitude.yml`, with a leading dot), found in the searched directory or above it (up to
//! the repository root), or named with `run -c FILE`:
//!
//! ```yaml
//! test_pattern: "*.aptitude.{yaml,yml}"   # a glob on the file name; `{a,b}` alternation
//! root: tests                              # searched instead of the path given (relative to this file)
//! recursive: true                          # false: only the directory itself
//! exclude: [target, node_modules, .git]    # a path component equal to one is not searched
//! ```
//!
//! Every key is optional and defaults to the original's built-in `default.aptitude.yaml`
//! (the values above, without `root`). A discovery configuration is never a test: it is
//! not discovered as one, and a file found as a test whose only keys are these is taken as
//! one and skipped (the original's own `default.aptitude.yaml`). It never holds test
//! defaults: those are in `aptitude.yaml` ([`super::suite`]).

use std::path::{Path, PathBuf};

use super::suite::Setting;

/// Why discovery failed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// A path given on the command line does not exist.
    #[error("no such file or directory: {}", .0.display())]
    Missing(PathBuf),
    /// A test pattern (`--pattern`, `test_pattern:`) that is not a glob.
    #[error("test pattern {pattern:?} is not a glob: {reason}")]
    Pattern {
        /// The pattern.
        pattern: String,
        /// Why.
        reason: String,
    },
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

/// The names of a discovery configuration file (the original aptitude reads the first).
pub const CONFIG_FILES: [&str; 2] = [".aptitude.yaml", ".aptitude.yml"];

/// The keys of a discovery configuration.
pub const DISCOVERY_KEYS: [&str; 4] = ["test_pattern", "root", "recursive", "exclude"];

/// The built-in `test_pattern` (the original aptitude's `default.aptitude.yaml`).
pub const DEFAULT_TEST_PATTERN: &str = "*.aptitude.{yaml,yml}";

/// The built-in `exclude` (the original aptitude's `default.aptitude.yaml`).
pub const DEFAULT_EXCLUDE: [&str; 3] = ["target", "node_modules", ".git"];

/// Which files are tests: a discovery configuration's keys (each with the line that set
/// it), and the file they come from; a key not set takes the built-in default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiscoveryConfig {
    /// The `.aptitude.yaml` (or `-c` file) read; `None` for the built-in default.
    pub file: Option<PathBuf>,
    /// `test_pattern:`, a glob matched against each file's name.
    pub test_pattern: Option<Setting<String>>,
    /// `root:`, the directory searched instead of the path given: as the loader resolved
    /// it (relative to the configuration file), or as given on the command line (origin
    /// line 0).
    pub root: Option<Setting<PathBuf>>,
    /// `recursive:`.
    pub recursive: Option<Setting<bool>>,
    /// `exclude:`, path components that are not searched.
    pub exclude: Option<Setting<Vec<String>>>,
}

/// Command-line overrides of a discovery configuration (`run --pattern P --root R
/// --no-recursive`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryOverrides {
    /// `--pattern`: replaces `test_pattern`.
    pub pattern: Option<String>,
    /// `--root`: the directory searched, relative to the current directory.
    pub root: Option<PathBuf>,
    /// `--no-recursive`: only the directory itself.
    pub no_recursive: bool,
}

impl DiscoveryConfig {
    /// The glob test files' names must match.
    pub fn pattern(&self) -> &str {
        self.test_pattern
            .as_ref()
            .map_or(DEFAULT_TEST_PATTERN, |s| s.value.as_str())
    }

    /// Whether subdirectories are searched.
    pub fn is_recursive(&self) -> bool {
        self.recursive.as_ref().is_none_or(|s| s.value)
    }

    /// The path components not searched.
    pub fn excluded(&self) -> Vec<String> {
        self.exclude.as_ref().map_or_else(
            || DEFAULT_EXCLUDE.iter().map(|s| (*s).to_owned()).collect(),
            |s| s.value.clone(),
        )
    }

    /// The directory searched for `path` (a directory given on the command line): `root`
    /// when the configuration's own directory is `path` (`aptitude run .` beside
    /// `.aptitude.yaml`) or `root` came from the command line; else `path` itself, so that a
    /// narrower directory given is never replaced by a wider one.
    pub fn search_dir(&self, path: &Path) -> PathBuf {
        let Some(root) = &self.root else {
            return path.to_owned();
        };
        let from_cli = root.origin.line == 0;
        let beside = self
            .file
            .as_deref()
            .and_then(Path::parent)
            .map(|dir| {
                if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                }
            })
            .is_some_and(|dir| same_dir(dir, path));
        if from_cli || beside {
            root.value.clone()
        } else {
            path.to_owned()
        }
    }
}

/// Whether two directories are the same one.
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The discovery configuration that applies to a directory: the first `.aptitude.yaml`
/// (or `.aptitude.yml`) in it or an ancestor, up to the directory holding `.git` or the
/// filesystem root. Relative to `dir` when `dir` is relative (for messages).
pub fn find_config(dir: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    let mut relative = Some(dir.to_owned());
    for ancestor in absolute.ancestors() {
        let shown = relative.clone().unwrap_or_else(|| ancestor.to_owned());
        for name in CONFIG_FILES {
            if ancestor.join(name).is_file() {
                return Some(if shown.as_os_str() == "." {
                    PathBuf::from(name)
                } else {
                    shown.join(name)
                });
            }
        }
        if ancestor.join(".git").exists() {
            break;
        }
        relative = relative.and_then(|r| super::suite::parent_of_relative(&r));
    }
    None
}

/// Whether a file name is a discovery configuration's (`.aptitude.yaml`).
pub fn is_config_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| CONFIG_FILES.contains(&n))
}

/// The suffixes of a recorded transcript, the one `aptitude run --record` writes first.
const TRANSCRIPT_SUFFIXES: [&str; 2] = [".transcript.jsonl", ".transcript.json"];

/// A test file's name without its suffix: `x.aptitude.yaml` → `x`; `None` for any other
/// file.
fn test_stem(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    TEST_SUFFIXES.iter().find_map(|s| name.strip_suffix(s))
}

/// Whether a file name marks a test file (a discovery configuration's never does).
pub fn is_test_file(path: &Path) -> bool {
    test_stem(path).is_some() && !is_config_file(path)
}

/// Whether a file name marks one of aptitude's own files: a test file, a recorded
/// transcript or a suite defaults file (`aptitude.yaml`; never copied into an agent's
/// workspace).
pub fn is_aptitude_file(name: &str) -> bool {
    name == super::suite::SUITE_FILE
        || CONFIG_FILES.contains(&name)
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

/// Expands `paths` into test files with the built-in discovery configuration: directories
/// recursively, files as given.
///
/// The result is sorted within each directory and free of duplicates, so runs are
/// reproducible.
///
/// # Errors
/// A path that does not exist, or a directory that can not be walked.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, DiscoverError> {
    let default = DiscoveryConfig::default();
    discover_each(paths, |_| Ok(default.clone()))
}

/// Expands `paths` into test files, each directory searched with the configuration
/// `config_for` gives for it (files are taken as given); sorted within each directory,
/// without duplicates.
///
/// # Errors
/// A path that does not exist, a directory that can not be walked, or `config_for`'s
/// error.
pub fn discover_each<E: From<DiscoverError>>(
    paths: &[PathBuf],
    mut config_for: impl FnMut(&Path) -> Result<DiscoveryConfig, E>,
) -> Result<Vec<PathBuf>, E> {
    let mut out: Vec<PathBuf> = Vec::new();
    for path in paths {
        if !path.is_dir() {
            // A file named explicitly is taken whatever it is; loading it says when it is
            // not a regular file (a FIFO, a device) rather than "no such file".
            if std::fs::symlink_metadata(path).is_err() {
                return Err(DiscoverError::Missing(path.clone()).into());
            }
            out.push(path.clone());
            continue;
        }
        let config = config_for(path)?;
        out.extend(walk(&config.search_dir(path), &config)?);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    Ok(out)
}

/// The test files under `dir` by `config`: names matching its pattern (a discovery
/// configuration's own name never does), not below an excluded component, not ignored by
/// `.gitignore`; sorted.
///
/// # Errors
/// A directory that does not exist or can not be walked, or a pattern that is not a glob
/// (the loader checks a configuration's pattern first).
pub fn walk(dir: &Path, config: &DiscoveryConfig) -> Result<Vec<PathBuf>, DiscoverError> {
    if !dir.is_dir() {
        return Err(DiscoverError::Missing(dir.to_owned()));
    }
    let pattern = globset::Glob::new(config.pattern())
        .map_err(|e| DiscoverError::Pattern {
            pattern: config.pattern().to_owned(),
            reason: e.kind().to_string(),
        })?
        .compile_matcher();
    let excluded = config.excluded();
    let mut found = Vec::new();
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .require_git(false)
        .max_depth((!config.is_recursive()).then_some(1))
        .filter_entry(move |entry| {
            entry.depth() == 0
                || (entry.file_name() != ".git"
                    && !excluded.iter().any(|x| entry.file_name() == x.as_str()))
        })
        .build();
    for entry in walker {
        let entry = entry.map_err(|source| DiscoverError::Walk {
            path: dir.to_owned(),
            source,
        })?;
        // Anything named as a test but a directory is taken, links and FIFOs included,
        // so that loading reports it instead of a test silently going missing.
        let named = entry
            .path()
            .file_name()
            .is_some_and(|name| pattern.is_match(name));
        if entry.file_type().is_some_and(|t| !t.is_dir()) && named && !is_config_file(entry.path())
        {
            found.push(entry.into_path());
        }
    }
    found.sort();
    Ok(found)
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

    /// The original aptitude's discovery: a pattern on file names with `{a,b}`, excluded
    /// components, one level only when not recursive; its own configuration file never.
    #[test]
    fn a_discovery_configuration_chooses_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [
            "a.aptitude.yml",
            ".aptitude.yaml",
            "x.test.yaml",
            "sub/b.aptitude.yaml",
            "target/c.aptitude.yaml",
            "node_modules/p/d.aptitude.yaml",
            "target-ok/e.aptitude.yaml",
        ] {
            std::fs::create_dir_all(root.join(rel).parent().unwrap()).unwrap();
            std::fs::write(root.join(rel), "").unwrap();
        }
        let names = |config: &DiscoveryConfig| -> Vec<String> {
            walk(root, config)
                .unwrap()
                .iter()
                .map(|p| p.strip_prefix(root).unwrap().display().to_string())
                .collect()
        };
        assert_eq!(
            names(&DiscoveryConfig::default()),
            [
                "a.aptitude.yml",
                "sub/b.aptitude.yaml",
                "target-ok/e.aptitude.yaml"
            ],
            "the built-in default: target, node_modules and the configuration itself excluded"
        );
        let origin = super::super::suite::Origin {
            file: PathBuf::from(".aptitude.yaml"),
            line: 1,
        };
        let setting = |value| Setting {
            value,
            origin: origin.clone(),
        };
        let config = DiscoveryConfig {
            test_pattern: Some(setting("*.{test,aptitude}.yaml".to_owned())),
            recursive: Some(Setting {
                value: false,
                origin: origin.clone(),
            }),
            ..DiscoveryConfig::default()
        };
        assert_eq!(names(&config), ["x.test.yaml"]);
        let config = DiscoveryConfig {
            exclude: Some(Setting {
                value: vec!["sub".to_owned()],
                origin: origin.clone(),
            }),
            ..DiscoveryConfig::default()
        };
        assert_eq!(
            names(&config),
            [
                "a.aptitude.yml",
                "node_modules/p/d.aptitude.yaml",
                "target/c.aptitude.yaml",
                "target-ok/e.aptitude.yaml"
            ],
            "an exclude list replaces the default one"
        );
        assert!(!is_test_file(Path::new("x/.aptitude.yaml")));
        assert_eq!(
            find_config(&root.join("sub")),
            Some(root.join(".aptitude.yaml"))
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
