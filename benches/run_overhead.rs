//! Harness overhead of `aptitude run` (`cargo bench --bench run_overhead`).
//!
//! N = 16 tests, each a two-turn conversation (a Bash call, then an answer) with the
//! scripted model answering after a fixed latency per turn, run with `--jobs 4`. Measured
//! in one run, alternating:
//! - `aptitude run tests --jobs 4`;
//! - the same 16 `claude -p … --output-format stream-json` commands launched directly with
//!   `xargs -P 4`, each in its own copy of the workspace and its own config dir — what any
//!   harness must do at least.
//!
//! Reported: the ratio of wall times (target ≤ 1.10) and the overhead per test in ms.
//! Requires the pinned `claude` (`npm ci`). Figures are printed, not asserted.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../tests/it/support/model.rs"]
#[expect(
    dead_code,
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "the benchmark uses part of the test double, which fails loudly"
)]
mod model;

#[path = "../tests/it/support/wire.rs"]
#[expect(
    clippy::unwrap_used,
    reason = "the double's other protocols, served beside the one the benchmark uses"
)]
mod wire;

use model::{ScriptedModel, Turn};

const TESTS: usize = 16;
const JOBS: usize = 4;
const LATENCY: Duration = Duration::from_millis(400);
const ROUNDS: usize = 3;

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let claude = root.join("node_modules/.bin/claude");
    let mut out = std::io::stdout().lock();
    if !claude.exists() {
        writeln!(
            out,
            "skipped: {} is missing (run `npm ci`)",
            claude.display()
        )?;
        return Ok(());
    }
    let model = ScriptedModel::start();
    let dir = tempfile::tempdir()?;
    let tests = dir.path().join("tests");
    for i in 0..TESTS {
        let marker = format!("bench-marker-{i:02}");
        model.script(
            &marker,
            vec![
                Turn::Delay(
                    LATENCY,
                    Box::new(Turn::Tool(
                        "Bash",
                        serde_json::json!({"command": format!("echo {i} > out.txt")}),
                    )),
                ),
                Turn::Delay(LATENCY, Box::new(Turn::Text(format!("wrote {i}")))),
            ],
        );
        let ws = tests.join(format!("t{i:02}"));
        std::fs::create_dir_all(&ws)?;
        std::fs::write(ws.join("input.txt"), "fixture\n")?;
        std::fs::write(
            ws.join("t.aptitude.yaml"),
            format!("name: t{i:02}\nprompt: \"{marker}\"\nassertions:\n  - tool: Bash\n"),
        )?;
    }
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home)?;
    let env: Vec<(&str, String)> = model
        .claude_env()
        .into_iter()
        .chain([
            ("HOME", home.display().to_string()),
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("IS_SANDBOX", "1".to_owned()),
            ("DISABLE_AUTOUPDATER", "1".to_owned()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
        ])
        .collect();

    // The direct baseline: per test, copy the workspace, make a config dir, run claude.
    let script = format!(
        "set -e; ws=$(mktemp -d); cp -r {tests}/t$1/. \"$ws\"; cfg=$(mktemp -d); cd \"$ws\"; \
         CLAUDE_CONFIG_DIR=\"$cfg\" {claude} -p \"bench-marker-$1\" --output-format stream-json --verbose \
         --dangerously-skip-permissions </dev/null >/dev/null; rm -rf \"$ws\" \"$cfg\"",
        tests = tests.display(),
        claude = claude.display()
    );
    let ids: String = (0..TESTS).map(|i| format!("{i:02}\n")).collect();

    let mut harness = Vec::new();
    let mut direct = Vec::new();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_aptitude"))
            .env_clear()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .current_dir(dir.path())
            .args(["run", "tests", "--jobs", &JOBS.to_string(), "--claude-bin"])
            .arg(&claude)
            .stdout(std::process::Stdio::null())
            .status()?;
        harness.push(t.elapsed().as_secs_f64());
        if !status.success() {
            writeln!(out, "aptitude run failed: {status}")?;
        }

        let t = Instant::now();
        let mut xargs = Command::new("xargs")
            .env_clear()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .args([
                "-P",
                &JOBS.to_string(),
                "-I{}",
                "sh",
                "-c",
                &script,
                "sh",
                "{}",
            ])
            .stdin(std::process::Stdio::piped())
            .spawn()?;
        if let Some(mut stdin) = xargs.stdin.take() {
            stdin.write_all(ids.as_bytes())?;
        }
        let status = xargs.wait()?;
        direct.push(t.elapsed().as_secs_f64());
        if !status.success() {
            writeln!(out, "direct claude runs failed: {status}")?;
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (h, d) = (median(&mut harness), median(&mut direct));
    writeln!(
        out,
        "{TESTS} tests, --jobs {JOBS}, scripted model latency {} ms per turn, median of {ROUNDS}",
        LATENCY.as_millis()
    )?;
    writeln!(
        out,
        "aptitude run:           {h:.2} s  (runs: {harness:.2?})"
    )?;
    writeln!(
        out,
        "claude -p via xargs -P: {d:.2} s  (runs: {direct:.2?})"
    )?;
    writeln!(out, "ratio: {:.3} (target ≤ 1.10)", h / d)?;
    writeln!(
        out,
        "overhead per test: {:.0} ms of wall time ({:.0} ms per test slot)",
        (h - d) * 1000.0 / TESTS as f64,
        (h - d) * 1000.0 * JOBS as f64 / TESTS as f64
    )?;
    Ok(())
}
