//! Helpers shared by the integration tests.

use std::path::PathBuf;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tests/data/<rel>`.
pub fn data(rel: &str) -> PathBuf {
    root().join("tests/data").join(rel)
}
