//! Big instruction files stay fast (`cargo bench --bench rules_big`): an `AGENTS.md` of
//! 100,000 rules (about 1 MB, under the 1 MiB a file is read up to) in a fresh workspace
//! with one test that `covers:` its last rule; the wall time of `aptitude coverage` and of
//! `aptitude validate` (which matches `covers:` against the rules) through the built
//! binary, each the best of three. Figures are printed, not asserted (issue 44.9 targets
//! ≤ 5 s and ≤ 1 s; before the rules' lines were found by binary search: 66 s and 35 s).

#![expect(
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark stops loudly on any failure and prints its figures"
)]

use std::process::Command;
use std::time::{Duration, Instant};

const RULES: usize = 100_000;

fn best_of_three(args: &[&str], dir: &std::path::Path) -> Duration {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            let out = Command::new(env!("CARGO_BIN_EXE_aptitude"))
                .args(args)
                .current_dir(dir)
                .output()
                .expect("aptitude runs");
            assert!(
                out.status.success(),
                "aptitude {args:?}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            start.elapsed()
        })
        .min()
        .expect("three runs")
}

fn base36(mut n: usize) -> String {
    let digits = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(digits[n % 36]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).expect("ascii digits")
}

fn main() {
    let repo = tempfile::tempdir().expect("a temporary directory");
    // `- Do 2n9c`: a short imperative rule each, numbered in base 36 to stay under 1 MiB.
    let agents: String = (0..RULES)
        .map(|i| format!("- Do {}\n", base36(i)))
        .collect();
    std::fs::write(repo.path().join("AGENTS.md"), &agents).expect("AGENTS.md written");
    std::fs::create_dir_all(repo.path().join("tests")).expect("tests/");
    std::fs::write(
        repo.path().join("tests/big.aptitude.yaml"),
        format!(
            "name: big\nworkspace: ..\ncovers: \"Do {}\"\nprompt: \"hello\"\nassertions:\n  - tool: Read\n",
            base36(RULES - 1)
        ),
    )
    .expect("the test written");
    let coverage = best_of_three(&["coverage", "tests"], repo.path());
    let validate = best_of_three(&["validate", "tests"], repo.path());
    println!(
        "AGENTS.md of {RULES} rules ({} bytes): coverage {:.2} s, validate {:.2} s",
        agents.len(),
        coverage.as_secs_f64(),
        validate.as_secs_f64()
    );
}
