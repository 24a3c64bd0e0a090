//! Harness overhead of `aptitude run`, per agent (`cargo bench --bench run_overhead
//! [-- AGENT...]`; default: every agent installed in `node_modules/.bin`).
//!
//! N = 16 tests, each a two-turn conversation (the agent's own shell tool call, then an
//! answer) with the scripted model answering after a fixed latency per turn, run with
//! `--jobs 4`. Measured per agent in one process, alternating:
//! - `aptitude run tests --agent A --jobs 4`;
//! - the same 16 agent commands launched directly, 4 at a time, each in its own copy of
//!   the workspace and its own private home: the command line, environment and config
//!   files come from the agent's own registry entry ([`aptitude::agent::registry::cli`]),
//!   so the baseline runs exactly what aptitude runs — what any harness must do at least.
//!
//! Reported per agent: the ratio of wall times (target ≤ 1.10) and the overhead per test in
//! ms. `aptitude run` is sandboxed (the default) and the direct runs are not, so the ratio
//! is what the sandbox and the harness cost together (issue #24: ≤ 1.10);
//! `APTITUDE_BENCH_SANDBOX=off` runs aptitude with `--sandbox off`, the harness alone.
//! Figures are printed, not asserted. Aider (no tool calls) and Cursor (not installable)
//! are not measured.
//!
//! First, the sandbox's own start (target ≤ 50 ms): the median of 30 fenced `true` (the
//! sandbox set up, bubblewrap started, the helper's proof, `true` run) against 30 unfenced
//! ones, through the same process runner.

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

#[path = "support/agents.rs"]
mod agents;
use agents::{Bench, benches};

use model::{ScriptedModel, Turn};

const TESTS: usize = 16;
const JOBS: usize = 4;
const LATENCY: Duration = Duration::from_millis(400);
const ROUNDS: usize = 3;

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{TESTS} tests, --jobs {JOBS}, scripted model latency {} ms per turn, median of {ROUNDS}",
        LATENCY.as_millis()
    )?;
    sandbox_start(&mut out)?;
    for bench in benches() {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == bench.name) {
            continue;
        }
        let bin = root.join("node_modules/.bin").join(bench.name);
        if !bin.exists() {
            writeln!(
                out,
                "{}: skipped, {} is missing (run `scripts/test`)",
                bench.name,
                bin.display()
            )?;
            continue;
        }
        measure(&mut out, &bench, &bin)?;
    }
    Ok(())
}

/// The sandbox's start: fenced `true` against unfenced `true`, medians of 30.
/// `--sandbox off` when `APTITUDE_BENCH_SANDBOX=off`: the harness's cost apart from the
/// sandbox's (the default measures both together).
fn sandbox_flag() -> Vec<String> {
    match std::env::var("APTITUDE_BENCH_SANDBOX") {
        Ok(v) if v == "off" => vec!["--sandbox".into(), "off".into()],
        _ => Vec::new(),
    }
}

fn sandbox_start(out: &mut impl Write) -> std::io::Result<()> {
    use aptitude::agent::process::{self, Spec};
    use aptitude::sandbox::{Policy, Sandbox};
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let ws = tempfile::tempdir()?;
    let home = tempfile::tempdir()?;
    let once = |fenced: bool| -> std::io::Result<f64> {
        runtime.block_on(async {
            let t = Instant::now();
            let fence = if fenced {
                let policy = Policy {
                    cwd: ws.path().to_owned(),
                    writable: vec![ws.path().to_owned(), home.path().to_owned()],
                    env: aptitude::sandbox::base_env(home.path(), &[]),
                    ..Policy::default()
                };
                Sandbox::default()
                    .fence(policy, None)
                    .map_err(std::io::Error::other)?
                    .map(std::sync::Arc::new)
            } else {
                None
            };
            let spec = Spec {
                program: "true".into(),
                args: Vec::new(),
                cwd: ws.path().to_owned(),
                env: Vec::new(),
                timeout: Duration::from_secs(30),
                grace: Duration::from_secs(1),
                fence,
                limits: None,
            };
            let output = process::run(&spec, &Default::default(), |_| {}).await?;
            if fenced && output.proof.is_none_or(|p| !p.held()) {
                return Err(std::io::Error::other(format!(
                    "no proof: {}",
                    output.stderr
                )));
            }
            Ok(t.elapsed().as_secs_f64() * 1000.0)
        })
    };
    // The first fenced run also checks bubblewrap once per process: not counted.
    once(true)?;
    let (mut fenced, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..30 {
        fenced.push(once(true)?);
        plain.push(once(false)?);
    }
    fenced.sort_by(f64::total_cmp);
    plain.sort_by(f64::total_cmp);
    writeln!(
        out,
        "sandbox start: fenced `true` {:.1} ms, unfenced {:.1} ms (medians of 30; target ≤ 50 ms)",
        fenced[15], plain[15]
    )
}

fn measure(out: &mut impl Write, bench: &Bench, bin: &Path) -> std::io::Result<()> {
    use aptitude::agent::registry::{self, AgentOptions};
    use aptitude::agent::{AgentKind, Task};

    let kind: AgentKind = bench.name.parse().map_err(std::io::Error::other)?;
    let model = ScriptedModel::start();
    let base_url = format!("{}{}", model.base_url(), bench.base_path);
    let dir = tempfile::tempdir()?;
    let tests = dir.path().join("tests");
    for i in 0..TESTS {
        let marker = format!("bench-marker-{}-{i:02}", bench.name);
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
            format!("name: t{i:02}\nprompt: \"{marker}\"\nassertions:\n  - tool: Bash\n"),
        )?;
    }
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home)?;
    let env = agents::bench_env(&home);

    let cli = registry::cli(kind, &AgentOptions::default());
    // One direct run: copy the workspace, make a private home, run the agent's own
    // invocation (the defaults, then the isolation variables, as aptitude sets them).
    let direct_one = |i: usize| -> std::io::Result<()> {
        let ws = tempfile::tempdir()?;
        let copied = Command::new("cp")
            .arg("-r")
            .arg(tests.join(format!("t{i:02}/.")))
            .arg(ws.path())
            .status()?;
        if !copied.success() {
            return Err(std::io::Error::other("cp failed"));
        }
        let run_home = tempfile::tempdir()?;
        let prompt = format!("bench-marker-{}-{i:02}", bench.name);
        let task = Task {
            prompt: &prompt,
            workspace: ws.path(),
            model: Some("fake-model"),
            max_turns: None,
            base_url: Some(&base_url),
            mcp_servers: &Default::default(),
            plugins: &[],
            hooks: Default::default(),
            converse: false,
        };
        let inv = cli
            .task(&task, run_home.path())
            .map_err(std::io::Error::other)?;
        let status = Command::new(bin)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .envs(
                inv.defaults
                    .iter()
                    .chain(&inv.isolation)
                    .map(|(k, v)| (k.as_str(), v.as_str())),
            )
            .args(&inv.args)
            .current_dir(ws.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()?;
        if !status.success() {
            return Err(std::io::Error::other(format!(
                "{} exited {status}",
                bench.name
            )));
        }
        Ok(())
    };

    let mut harness = Vec::new();
    let mut direct = Vec::new();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        let status = agents::aptitude_run(dir.path(), &env, (bench, bin, &base_url), JOBS, None)
            .args(sandbox_flag())
            .status()?;
        harness.push(t.elapsed().as_secs_f64());
        if !status.success() {
            writeln!(out, "{}: aptitude run failed: {status}", bench.name)?;
        }

        let t = Instant::now();
        let next = std::sync::atomic::AtomicUsize::new(0);
        let failures = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..JOBS {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        if i >= TESTS {
                            break;
                        }
                        if let Err(e) = direct_one(i)
                            && let Ok(mut f) = failures.lock()
                        {
                            f.push(e.to_string());
                        }
                    }
                });
            }
        });
        direct.push(t.elapsed().as_secs_f64());
        if let Ok(f) = failures.lock()
            && !f.is_empty()
        {
            writeln!(
                out,
                "{}: direct runs failed: {:?}",
                bench.name,
                &f[..f.len().min(3)]
            )?;
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (h, d) = (median(&mut harness), median(&mut direct));
    writeln!(
        out,
        "{:9} aptitude run {h:6.2} s, direct {d:6.2} s, ratio {:.3} (target ≤ 1.10), overhead {:.0} ms per test  (runs: {harness:.2?} vs {direct:.2?})",
        bench.name,
        h / d,
        (h - d) * 1000.0 / TESTS as f64,
    )?;
    Ok(())
}
