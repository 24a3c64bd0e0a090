//! Record once, replay for free (`cargo bench --bench replay_speed [-- AGENT...]`; default:
//! every agent installed in `node_modules/.bin`).
//!
//! N = 16 tests, each a two-turn conversation (the agent's own shell tool call writing a
//! file, then an answer) with a workspace assertion on the file, the scripted model
//! answering after a fixed latency per turn (a stand-in for a real model), `--jobs 4`.
//! Measured per agent:
//! - `aptitude run --record-model`: the live run, recorded;
//! - `aptitude run --replay RESULTS.json`: every agent runs again, answered from the
//!   cassettes;
//! - `aptitude run --reuse RESULTS.json` unchanged: the workspace assertions make every run
//!   a replay of its baseline cassette.
//!
//! Reported: wall times, the model requests each made (the replays' must be 0), tests
//! passed, the cassette size per run and the results file's size. Printed, not asserted.

use std::io::Write;
use std::path::Path;
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

#[path = "support/agents.rs"]
mod agents;
use agents::{Bench, benches};

use model::{ScriptedModel, Turn};

const TESTS: usize = 16;
const JOBS: usize = 4;
const LATENCY: Duration = Duration::from_millis(400);

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{TESTS} tests with a workspace assertion, --jobs {JOBS}, scripted model latency {} ms per turn",
        LATENCY.as_millis()
    )?;
    for bench in benches() {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == bench.name) {
            continue;
        }
        let bin = root.join("node_modules/.bin").join(bench.name);
        if !bin.exists() {
            writeln!(out, "{}: skipped, {} is missing", bench.name, bin.display())?;
            continue;
        }
        measure(&mut out, &bench, &bin)?;
    }
    Ok(())
}

/// The number of tests passed in a results file, and how many were reused.
fn tally(path: &Path) -> (usize, usize) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return (0, 0);
    };
    let Ok(results) = serde_json::from_str::<serde_json::Value>(&text) else {
        return (0, 0);
    };
    let tests = results["tests"].as_array().cloned().unwrap_or_default();
    (
        tests.iter().filter(|t| t["status"] == "passed").count(),
        tests.iter().filter(|t| t.get("reused").is_some()).count(),
    )
}

fn measure(out: &mut impl Write, bench: &Bench, bin: &Path) -> std::io::Result<()> {
    let model = ScriptedModel::start();
    let base_url = format!("{}{}", model.base_url(), bench.base_path);
    let dir = tempfile::tempdir()?;
    let tests = dir.path().join("tests");
    for i in 0..TESTS {
        let marker = format!("replay-marker-{}-{i:02}", bench.name);
        let mut args = serde_json::json!({ bench.key: format!("echo {i} > out.txt") });
        if let (Some(a), Some(e)) = (args.as_object_mut(), bench.extra.as_object()) {
            a.extend(e.clone());
        }
        model.script(
            &marker,
            vec![
                Turn::Delay(LATENCY, Box::new(Turn::Tool(bench.shell, args))),
                Turn::Delay(LATENCY, Box::new(Turn::Text(format!("wrote {i}")))),
            ],
        );
        let ws = tests.join(format!("t{i:02}"));
        std::fs::create_dir_all(&ws)?;
        std::fs::write(ws.join("input.txt"), "fixture\n")?;
        std::fs::write(
            ws.join("t.aptitude.yaml"),
            format!(
                "name: t{i:02}\nprompt: \"{marker}\"\nassertions:\n  - tool: Bash\n  - file_contains: {{path: out.txt, text: \"{i}\"}}\n"
            ),
        )?;
    }
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home)?;
    let env = agents::bench_env(&home);
    let run = |json: &str, extra: &[&str]| -> std::io::Result<(f64, usize)> {
        let before = model.requests().len();
        let t = Instant::now();
        let status =
            agents::aptitude_run(dir.path(), &env, (bench, bin, &base_url), JOBS, Some(json))
                .args(extra)
                .status()?;
        let took = t.elapsed().as_secs_f64();
        if !status.success() {
            return Err(std::io::Error::other(format!(
                "aptitude run {extra:?}: {status}"
            )));
        }
        Ok((took, model.requests().len() - before))
    };
    let (live, live_requests) = run("live.json", &["--record-model"])?;
    let (replay, replay_requests) = run("replay.json", &["--replay", "live.json"])?;
    let (reuse, reuse_requests) = run("reuse.json", &["--reuse", "live.json"])?;
    let cassettes: u64 = std::fs::read_dir(dir.path().join("live.cassettes"))?
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum();
    let results = std::fs::metadata(dir.path().join("live.json"))?.len();
    let (replay_passed, _) = tally(&dir.path().join("replay.json"));
    let (reuse_passed, reused) = tally(&dir.path().join("reuse.json"));
    writeln!(
        out,
        "{:9} live {live:6.2} s ({live_requests} requests) · replay {replay:6.2} s ({replay_requests} requests, {replay_passed}/{TESTS} passed) · unchanged re-run with --reuse {reuse:6.2} s ({reuse_requests} requests, {reused} reused by replay, {reuse_passed}/{TESTS} passed) · cassette {} B/run, results.json {results} B",
        bench.name,
        cassettes / TESTS as u64,
    )?;
    Ok(())
}
