//! The results JSON writer (`--json FILE`) and reader. Every command that reads results
//! (`report`, `publish`, `--baseline`) reads them here, so each one refuses a results file
//! of another schema version with the same clear error.

use std::path::Path;

use crate::verdict::results::{OLDEST_READABLE_VERSION, RESULTS_VERSION, ReadError, Results};

/// Why results could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// The file could not be written or read.
    #[error("can not access results file {}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not results JSON.
    #[error("{} is not an aptitude results file: {source}", path.display())]
    Parse {
        /// The file.
        path: std::path::PathBuf,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// The file is results JSON of another schema version.
    #[error(
        "{} has results version {found}; this aptitude reads versions {OLDEST_READABLE_VERSION} to {RESULTS_VERSION} (re-run the tests or use the aptitude that wrote it)",
        path.display()
    )]
    Version {
        /// The file.
        path: std::path::PathBuf,
        /// Its `version`.
        found: u64,
    },
}

/// The results JSON file format (`--json FILE`).
pub const FORMAT: super::FileFormat = super::FileFormat {
    name: "json",
    render: |results, _| Ok(serde_json::to_string_pretty(results)? + "\n"),
};

/// Writes results as pretty JSON, creating parent directories.
///
/// # Errors
/// When the file can not be written.
pub fn write(results: &Results, path: &Path) -> Result<(), JsonError> {
    let io = |source| JsonError::Io {
        path: path.to_owned(),
        source,
    };
    let text = serde_json::to_string_pretty(results).map_err(|e| io(std::io::Error::other(e)))?;
    crate::shared::files::write_output(path, (text + "\n").as_bytes())
        .map_err(|e| io(std::io::Error::other(e.to_string())))
}

/// Reads a results file, checking its schema version first (a file of another version
/// gets [`JsonError::Version`], not a parse error about some field).
///
/// # Errors
/// When the file can not be read, is not results JSON, or has another version.
pub fn read(path: &Path) -> Result<Results, JsonError> {
    let io = |source| JsonError::Io {
        path: path.to_owned(),
        source,
    };
    // A FIFO or a device (a link to /dev/zero) would block or never end: refused.
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut crate::shared::files::open_regular_file(path).map_err(io)?,
        &mut text,
    )
    .map_err(io)?;
    Results::from_json(&text).map_err(|e| match e {
        ReadError::Parse(source) => JsonError::Parse {
            path: path.to_owned(),
            source,
        },
        ReadError::Version { found } => JsonError::Version {
            path: path.to_owned(),
            found,
        },
    })
}

/// Reads a results file one test at a time, handing each to `each` as soon as it is read,
/// with where it is in the file (`each` keeps it, keeps a lighter copy, or drops it): peak memory is one test plus what
/// `each` keeps ([`crate::verdict::results::stream`]). The version is checked as in
/// [`read`].
///
/// # Errors
/// When the file can not be read, is not results JSON, or has another version.
pub fn read_each(
    path: &Path,
    each: crate::verdict::results::stream::Each<'_>,
) -> Result<Results, JsonError> {
    let file = crate::shared::files::open_regular_file(path).map_err(|source| JsonError::Io {
        path: path.to_owned(),
        source,
    })?;
    crate::verdict::results::stream::read_each(file, each).map_err(|e| match e {
        ReadError::Parse(source) => JsonError::Parse {
            path: path.to_owned(),
            source,
        },
        ReadError::Version { found } => JsonError::Version {
            path: path.to_owned(),
            found,
        },
    })
}

/// Reads the one test at `span` of the results file at `path` (a span that [`read_each`]
/// gave).
///
/// # Errors
/// When the file can not be read or holds no test there (it changed since).
pub fn read_test_at(
    path: &Path,
    span: crate::verdict::results::stream::Span,
) -> Result<crate::verdict::results::TestResult, JsonError> {
    let mut file =
        crate::shared::files::open_regular_file(path).map_err(|source| JsonError::Io {
            path: path.to_owned(),
            source,
        })?;
    crate::verdict::results::stream::read_test_at(&mut file, span).map_err(|e| match e {
        ReadError::Version { found } => JsonError::Version {
            path: path.to_owned(),
            found,
        },
        ReadError::Parse(source) => JsonError::Parse {
            path: path.to_owned(),
            source,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_results_version_is_refused_by_every_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, r#"{"version": 3, "tests": "whatever a v3 has"}"#).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("results version 3; this aptitude reads versions 1 to 2"),
            "{e}"
        );
    }

    /// `merge`, `report`, `publish`, `--baseline` and `--reuse` read results through here:
    /// a FIFO (or a link to a device) is refused at once, never waited on.
    #[test]
    fn a_fifo_or_a_device_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("results.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read(&fifo).unwrap_err().to_string();
        assert!(
            e.contains("FIFO") && e.contains("not a regular file"),
            "{e}"
        );
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read(&zero).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
