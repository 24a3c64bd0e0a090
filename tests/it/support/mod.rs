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

pub mod cli;
pub mod mcp_names;
pub mod model;
pub mod procs;
pub mod recorded;
pub mod wire;

/// Runs a Node helper script of this repository (`tests/...mjs`) from the root with `args`
/// and `env`, asserts it succeeded (showing its stderr otherwise) and parses its stdout as
/// JSON.
pub fn node_json(
    script: &str,
    args: &[&std::ffi::OsStr],
    env: &[(&str, &str)],
) -> serde_json::Value {
    let out = std::process::Command::new("node")
        .current_dir(root())
        .arg(script)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("node runs (scripts/test installs it with the npm packages)");
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{script} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

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

pub mod consumers;
pub mod github_double;
pub mod workflow_commands;

/// The results file at `path` as JSON text with every run's detail inline: read by
/// aptitude's own reader, which puts back what the results keep in their blob pack
/// (`<path>.blobs`), then written pretty. Tests look into transcripts, diffs and model
/// requests through this, as a user reading the results with aptitude would.
pub fn results_text(path: impl AsRef<std::path::Path>) -> Result<String, String> {
    let results = aptitude::report::json::read(path.as_ref()).map_err(|e| e.to_string())?;
    serde_json::to_string_pretty(&results).map_err(|e| e.to_string())
}

/// Copies the results file `from` to `to` with its blob pack (`<from>.blobs`, when there
/// is one), as a user keeps a results file: the two go together.
pub fn copy_results(from: impl AsRef<std::path::Path>, to: impl AsRef<std::path::Path>) {
    let (from, to) = (from.as_ref(), to.as_ref());
    std::fs::copy(from, to).unwrap();
    let pack = |p: &std::path::Path| {
        let mut name = p.as_os_str().to_owned();
        name.push(".blobs");
        std::path::PathBuf::from(name)
    };
    if pack(from).exists() {
        std::fs::copy(pack(from), pack(to)).unwrap();
    }
}
