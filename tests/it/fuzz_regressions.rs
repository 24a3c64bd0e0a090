//! Inputs that once crashed a fuzz target stay harmless: every file under
//! `fuzz/corpus-regressions/<target>/` (minimized crashes found by `cargo fuzz`, and the
//! triggers of issue #10 item 4) goes through the very function its fuzz target calls
//! (`fuzz/src/lib.rs`, included here by path) and must not panic. See docs/fuzzing.md.

use std::path::Path;

use crate::support::root;

#[path = "../../fuzz/src/lib.rs"]
mod harness;

/// Each committed crash input, through its target's body, without a panic.
#[test]
fn fuzz_regression_inputs_do_not_panic() {
    let dir = root().join("fuzz/corpus-regressions");
    let mut inputs = 0;
    let mut panics = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let target_dir = entry.unwrap().path();
        let target = target_dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let body = harness::TARGETS
            .iter()
            .find(|(name, _)| *name == target)
            .map(|(_, body)| *body)
            .unwrap_or_else(|| panic!("{}: no fuzz target of that name", target_dir.display()));
        let mut files: Vec<_> = std::fs::read_dir(&target_dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap();
            inputs += 1;
            if let Err(payload) = std::panic::catch_unwind(|| body(&data)) {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                panics.push(format!("{target}/{}: {message}", name_of(&file)));
            }
        }
    }
    assert!(inputs >= 2, "no inputs under {}", dir.display());
    assert!(
        panics.is_empty(),
        "{} of {inputs} regression inputs panic:\n{}",
        panics.len(),
        panics.join("\n")
    );
}

/// Every shared body has its `cargo fuzz` target, so what the test replays is what runs
/// under the fuzzer.
#[test]
fn every_fuzz_target_has_a_shared_body() {
    let manifest = std::fs::read_to_string(root().join("fuzz/Cargo.toml")).unwrap();
    let mut bins: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("name = \"")?.strip_suffix('"'))
        .filter(|name| *name != "aptitude-fuzz" && *name != "aptitude_fuzz")
        .collect();
    bins.sort_unstable();
    let mut names: Vec<&str> = harness::TARGETS.iter().map(|(name, _)| *name).collect();
    names.sort_unstable();
    assert_eq!(
        bins, names,
        "[[bin]]s of fuzz/Cargo.toml vs harness::TARGETS"
    );
    for name in names {
        let source = std::fs::read_to_string(root().join(format!("fuzz/fuzz_targets/{name}.rs")))
            .unwrap_or_else(|e| panic!("fuzz/fuzz_targets/{name}.rs: {e}"));
        assert!(
            source.contains(&format!("aptitude_fuzz::{name}(data)")),
            "fuzz/fuzz_targets/{name}.rs does not call aptitude_fuzz::{name}"
        );
    }
}

fn name_of(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}
