//! Discovery configuration (`.aptitude.yaml`, the original aptitude's): read with the test
//! loader's checks and diagnostics, and the test search it drives.
//!
//! ```yaml
//! test_pattern: "*.aptitude.{yaml,yml}"
//! root: tests
//! recursive: true
//! exclude: [target, node_modules, .git]
//! ```
//!
//! The rule that joins it with suite defaults (`aptitude.yaml`, [`super::suite`]): the
//! discovery configuration says **which files are tests**, `aptitude.yaml` says **how each
//! test found runs**. Neither reads the other's keys; a key written in the wrong one is an
//! error naming the right file. The original aptitude ignored a configuration it could not
//! read and used its default; here it is an error like any other file's.

use std::path::{Path, PathBuf};

use super::super::diagnostic::{Diagnostic, FileDiagnostics};
use super::super::discover::{
    self, DISCOVERY_KEYS, DiscoverError, DiscoveryConfig, DiscoveryOverrides,
};
use super::super::node::{self, Node, Pos, Value};
use super::super::suite::{Origin, Setting};
use super::{Ctx, Fields};

/// Whether a parsed file holds discovery configuration rather than a test: it is named
/// `.aptitude.yaml`, or it is a mapping whose keys are all discovery keys (the original
/// aptitude's `default.aptitude.yaml`, found by a test pattern).
pub(super) fn is_discovery(path: &Path, root: &Node) -> bool {
    if discover::is_config_file(path) {
        return true;
    }
    match &root.value {
        Value::Map(entries) => {
            !entries.is_empty()
                && entries
                    .iter()
                    .all(|(k, _)| DISCOVERY_KEYS.contains(&k.name.as_str()))
        }
        _ => false,
    }
}

/// Reads and validates a discovery configuration file.
///
/// # Errors
/// Its diagnostics, as for a test file.
pub fn load_discovery_file(path: &Path) -> Result<DiscoveryConfig, FileDiagnostics> {
    let fail = |source: String, diagnostics: Vec<Diagnostic>| FileDiagnostics {
        path: path.to_owned(),
        source,
        diagnostics,
    };
    let source = super::read_source(path, "discovery configuration")?;
    let root = node::parse(&source).map_err(|err| {
        fail(
            source.clone(),
            vec![
                Diagnostic::new(
                    err.pos.unwrap_or_default(),
                    format!("invalid YAML: {}", err.message),
                )
                .label("here"),
            ],
        )
    })?;
    discovery_of(path, &root).map_err(|diagnostics| fail(source, diagnostics))
}

/// Validates a parsed discovery configuration.
///
/// # Errors
/// Every problem found, in file order.
pub(super) fn discovery_of(path: &Path, root: &Node) -> Result<DiscoveryConfig, Vec<Diagnostic>> {
    let mut ctx = Ctx::default();
    let config = ctx.discovery(path, root);
    let mut diags = std::mem::take(&mut ctx.diags);
    if diags.is_empty() {
        Ok(config)
    } else {
        diags.sort_by_key(|d| (d.pos.line, d.pos.column));
        Err(diags)
    }
}

impl Ctx {
    fn discovery(&mut self, path: &Path, root: &Node) -> DiscoveryConfig {
        let mut config = DiscoveryConfig {
            file: Some(path.to_owned()),
            ..DiscoveryConfig::default()
        };
        if matches!(root.value, Value::Null) {
            return config;
        }
        let Value::Map(entries) = &root.value else {
            self.push(
                Diagnostic::new(root.pos, "a discovery configuration must be a mapping")
                    .label(format!("found {}", root.value.type_name()))
                    .hint(format!("allowed keys: {}", super::list(&DISCOVERY_KEYS))),
            );
            return config;
        };
        let fields = Fields {
            entries,
            pos: Pos {
                line: 1,
                column: 1,
                len: 0,
            },
        };
        self.discovery_keys(&fields);
        let setting = |key: &str| Origin {
            file: path.to_owned(),
            line: fields.key_pos(key).line,
        };
        config.test_pattern = fields
            .get("test_pattern")
            .and_then(|n| self.test_pattern(n))
            .map(|value| Setting {
                value,
                origin: setting("test_pattern"),
            });
        // `root` is relative to the configuration file's directory.
        let base = path.parent().filter(|p| !p.as_os_str().is_empty());
        config.root = fields
            .get("root")
            .and_then(|n| self.non_empty_string(n, "root"))
            .map(|value| Setting {
                value: base.map_or_else(|| PathBuf::from(&value), |b| b.join(&value)),
                origin: setting("root"),
            });
        config.recursive = fields
            .get("recursive")
            .and_then(|n| self.bool(n, "recursive"))
            .map(|value| Setting {
                value,
                origin: setting("recursive"),
            });
        config.exclude = fields
            .get("exclude")
            .and_then(|n| self.exclude(n))
            .map(|value| Setting {
                value,
                origin: setting("exclude"),
            });
        config
    }

    /// Unknown keys, and those of a test or of `aptitude.yaml` written here by mistake.
    fn discovery_keys(&mut self, fields: &Fields<'_>) {
        for (key, _) in fields.entries {
            let name = key.name.as_str();
            if DISCOVERY_KEYS.contains(&name) {
                continue;
            }
            let misplaced = if super::suite::SUITE_KEYS.contains(&name) {
                Some(format!(
                    "`{name}` is a suite default: write it in `aptitude.yaml` (without the dot), \
                     which gives defaults to the tests found"
                ))
            } else if super::TEST_KEYS.contains(&name) {
                Some(format!(
                    "`{name}` belongs in a test file: this is a discovery configuration, which \
                     only says which files are tests"
                ))
            } else {
                None
            };
            let hint = misplaced.or_else(|| {
                super::super::diagnostic::did_you_mean(name, DISCOVERY_KEYS.iter().copied())
                    .map(|s| format!("did you mean `{s}`?"))
                    .or_else(|| {
                        Some(format!(
                            "allowed keys here: {}",
                            super::list(&DISCOVERY_KEYS)
                        ))
                    })
            });
            self.push(
                Diagnostic::new(
                    key.pos,
                    format!("unknown key `{name}` in a discovery configuration"),
                )
                .label("unknown key")
                .maybe_hint(hint),
            );
        }
    }

    /// `test_pattern:`: a glob on file names.
    fn test_pattern(&mut self, node: &Node) -> Option<String> {
        let pattern = self.non_empty_string(node, "test_pattern")?;
        match globset::Glob::new(&pattern) {
            Ok(_) => Some(pattern),
            Err(e) => {
                self.push(
                    Diagnostic::new(node.pos, format!("`test_pattern: {pattern}` is not a glob"))
                        .label(e.kind().to_string())
                        .hint("a glob matched against each file's name, e.g. \"*.aptitude.{yaml,yml}\""),
                );
                None
            }
        }
    }

    /// `exclude:`: a list of path components.
    fn exclude(&mut self, node: &Node) -> Option<Vec<String>> {
        match &node.value {
            Value::Seq(items) => {
                let names: Vec<String> = items
                    .iter()
                    .filter_map(|item| self.non_empty_string(item, "exclude"))
                    .collect();
                (names.len() == items.len()).then_some(names)
            }
            Value::Null => Some(Vec::new()),
            _ => {
                self.type_error(node, "exclude", "a list of directory names");
                None
            }
        }
    }
}

/// The test files of a command line, and what decided them.
#[derive(Debug, Default)]
pub struct Discovered {
    /// Test files: directories searched, files as given; sorted within each directory,
    /// without duplicates.
    pub files: Vec<PathBuf>,
    /// The discovery configuration each searched directory used (the built-in default has
    /// `file: None`), with that directory, in the order searched.
    pub searches: Vec<(PathBuf, DiscoveryConfig)>,
}

/// Why discovery failed.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    /// A path or the walk failed.
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    /// A discovery configuration could not be read.
    #[error("invalid discovery configuration {}", .0.path.display())]
    Config(Box<FileDiagnostics>),
}

/// Finds the test files of `paths`: each directory is searched by the discovery
/// configuration `config` (from `-c FILE`), else the `.aptitude.yaml` nearest to it, else
/// the built-in default, with `overrides` applied (`--root` replaces the searched
/// directory, relative to the current directory).
///
/// # Errors
/// A missing path, a walk that fails, or a configuration file with problems.
pub fn discover_tests(
    paths: &[PathBuf],
    config: Option<&Path>,
    overrides: &DiscoveryOverrides,
) -> Result<Discovered, DiscoveryError> {
    let explicit = config
        .map(|file| load_discovery_file(file).map_err(|d| DiscoveryError::Config(Box::new(d))))
        .transpose()?;
    let mut searches = Vec::new();
    let files = discover::discover_each(paths, |dir| -> Result<_, DiscoveryError> {
        let mut found = match (&explicit, discover::find_config(dir)) {
            (Some(c), _) => c.clone(),
            (None, Some(file)) => {
                load_discovery_file(&file).map_err(|d| DiscoveryError::Config(Box::new(d)))?
            }
            (None, None) => DiscoveryConfig::default(),
        };
        apply_overrides(&mut found, overrides);
        searches.push((dir.to_owned(), found.clone()));
        Ok(found)
    })?;
    Ok(Discovered { files, searches })
}

/// `--pattern`, `--root`, `--no-recursive` over a configuration (as settings without an
/// origin line: line 0 means the command line).
fn apply_overrides(config: &mut DiscoveryConfig, overrides: &DiscoveryOverrides) {
    let cli = Origin {
        file: PathBuf::from("command line"),
        line: 0,
    };
    if let Some(pattern) = &overrides.pattern {
        config.test_pattern = Some(Setting {
            value: pattern.clone(),
            origin: cli.clone(),
        });
    }
    if let Some(root) = &overrides.root {
        // Relative to the current directory, like every path on a command line.
        config.root = Some(Setting {
            value: root.clone(),
            origin: cli.clone(),
        });
    }
    if overrides.no_recursive {
        config.recursive = Some(Setting {
            value: false,
            origin: cli,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(src: &str) -> Result<DiscoveryConfig, Vec<Diagnostic>> {
        discovery_of(
            Path::new(".aptitude.yaml"),
            &node::parse(src).expect("yaml"),
        )
    }

    #[test]
    fn the_original_default_reads_as_its_own_values() {
        let config = load(
            "test_pattern: \"*.aptitude.{yaml,yml}\"\nrecursive: true\nexclude:\n  - target\n  - node_modules\n  - .git\n",
        )
        .unwrap();
        assert_eq!(config.pattern(), "*.aptitude.{yaml,yml}");
        assert!(config.is_recursive());
        assert_eq!(config.excluded(), ["target", "node_modules", ".git"]);
        assert_eq!(config.test_pattern.unwrap().origin.line, 1);
    }

    #[test]
    fn every_key_is_optional_and_defaults_to_the_built_in_ones() {
        let config = load("root: tests\n").unwrap();
        assert_eq!(config.pattern(), discover::DEFAULT_TEST_PATTERN);
        assert!(config.is_recursive());
        assert_eq!(config.search_dir(Path::new(".")), PathBuf::from("tests"));
        assert_eq!(
            config.search_dir(Path::new("elsewhere")),
            PathBuf::from("elsewhere"),
            "a directory given that is not the configuration's own is searched as given"
        );
    }

    #[test]
    fn misplaced_and_unknown_keys_say_where_they_belong() {
        let errs =
            load("test_patern: x\nmodel: sonnet\nprompt: hi\nrecursive: yes please\n").unwrap_err();
        let hints: Vec<String> = errs.iter().filter_map(|d| d.hint.clone()).collect();
        assert!(
            hints
                .iter()
                .any(|h| h.contains("did you mean `test_pattern`")),
            "{hints:?}"
        );
        assert!(
            hints.iter().any(|h| h.contains("aptitude.yaml")),
            "{hints:?}"
        );
        assert!(
            hints.iter().any(|h| h.contains("belongs in a test file")),
            "{hints:?}"
        );
        assert!(
            errs.iter()
                .any(|d| d.message.contains("`recursive` must be a boolean"))
        );
    }

    #[test]
    fn a_file_of_discovery_keys_is_no_test() {
        let root = node::parse("test_pattern: \"*.yaml\"\nrecursive: false\n").unwrap();
        assert!(is_discovery(Path::new("default.aptitude.yaml"), &root));
        let test = node::parse("name: t\nprompt: p\nassertions: []\n").unwrap();
        assert!(!is_discovery(Path::new("t.aptitude.yaml"), &test));
        assert!(
            is_discovery(Path::new("x/.aptitude.yaml"), &test),
            "by its name"
        );
    }
}
