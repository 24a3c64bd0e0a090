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

pub mod model;

/// The pinned `claude` binary installed by `scripts/test` (`npm ci`).
pub fn claude_bin() -> PathBuf {
    let bin = root().join("node_modules/.bin/claude");
    assert!(
        bin.exists(),
        "{} is missing: run `scripts/test` (it installs the pinned agent CLIs with `npm ci`)",
        bin.display()
    );
    bin
}
