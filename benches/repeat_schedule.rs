//! Scheduling of repeated runs (`cargo bench --bench repeat_schedule`).
//!
//! 16 tests × `--runs 5` = 80 runs, `--jobs 4`, each run a two-turn conversation (a Bash
//! call, then an answer) with the scripted model answering after a fixed latency per
//! turn. Reported: the wall time of `aptitude run` against the ideal — the sum of the 80
//! runs' own times (`duration_ms` of every run in results JSON) ÷ 4 slots — i.e. how well
//! the runs keep every slot busy, start-up and reports included. Target ≤ 1.10.
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

#[path = "../tests/it/support/recorded.rs"]
#[expect(
    dead_code,
    reason = "the double's recorded replies, a turn the benchmark does not script"
)]
mod recorded;

use model::{ScriptedModel, Turn};

const TESTS: usize = 16;
const RUNS: u32 = 5;
const JOBS: usize = 4;
const LATENCY: Duration = Duration::from_millis(400);
const ROUNDS: usize = 2;

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
        let marker = format!("repeat-marker-{i:02}");
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
        ])
        .collect();
    let results = dir.path().join("results.json");

    let mut ratios = Vec::new();
    for round in 0..ROUNDS {
        let t = Instant::now();
        let status = Command::new(env!("CARGO_BIN_EXE_aptitude"))
            .env_clear()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .current_dir(dir.path())
            .args(["run", "tests", "--jobs", &JOBS.to_string()])
            .args(["--runs", &RUNS.to_string(), "--json"])
            .arg(&results)
            .arg("--claude-bin")
            .arg(&claude)
            .stdout(std::process::Stdio::null())
            .status()?;
        let wall = t.elapsed().as_secs_f64();
        if !status.success() {
            writeln!(out, "aptitude run failed: {status}")?;
        }
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&results)?)
            .map_err(std::io::Error::other)?;
        let run_ms: Vec<u64> = json["tests"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|t| t["runs"].as_array().into_iter().flatten())
            .filter_map(|r| r["duration_ms"].as_u64())
            .collect();
        let ideal = run_ms.iter().sum::<u64>() as f64 / 1000.0 / JOBS as f64;
        let ratio = wall / ideal;
        writeln!(
            out,
            "round {}: {} runs, wall {wall:.2} s, ideal (Σ run times ÷ {JOBS}) {ideal:.2} s, ratio {ratio:.3}",
            round + 1,
            run_ms.len(),
        )?;
        ratios.push(ratio);
    }
    ratios.sort_by(f64::total_cmp);
    writeln!(
        out,
        "{TESTS} tests × {RUNS} runs, --jobs {JOBS}, scripted model latency {} ms per turn: median ratio {:.3} (target ≤ 1.10)",
        LATENCY.as_millis(),
        ratios[ratios.len() / 2]
    )?;
    Ok(())
}
