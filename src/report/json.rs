//! The results JSON writer (`--json FILE`) and reader.

use std::path::Path;

use crate::results::Results;

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
}

/// Writes results as pretty JSON, creating parent directories.
///
/// # Errors
/// When the file can not be written.
pub fn write(results: &Results, path: &Path) -> Result<(), JsonError> {
    let io = |source| JsonError::Io {
        path: path.to_owned(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(results).map_err(|e| io(std::io::Error::other(e)))?;
    std::fs::write(path, text + "\n").map_err(io)
}

/// Reads a results file.
///
/// # Errors
/// When the file can not be read or is not results JSON.
pub fn read(path: &Path) -> Result<Results, JsonError> {
    let text = std::fs::read_to_string(path).map_err(|source| JsonError::Io {
        path: path.to_owned(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|source| JsonError::Parse {
        path: path.to_owned(),
        source,
    })
}
