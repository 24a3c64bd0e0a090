//! A routing suite with and without early stop (`cargo bench --bench routing`): 3 skills
//! (pdf, docx, csv) × 10 prompts each × 3 runs on the pinned Claude Code against the
//! scripted model, once with `stop: first_call` (the default) and once with `stop: never`.
//! Every reply of the model comes after a scripted latency (`APTITUDE_BENCH_LATENCY_MS`,
//! default 1000 ms, a fast real model's time to a short reply; 0 measures the agent's own
//! overhead alone). Printed for each: wall time, model requests (as the scripted model
//! counted them and as aptitude's gateway metered them), tokens and cost; then each skill's recall and
//! false-trigger rate with their 95% Wilson intervals and the confusion matrix, beside
//! the same figures worked out from the scripted choices, for a check by hand.
//!
//! The scripted choices, the same for each skill S:
//! - S's should-trigger prompts 1–5: every run calls `Skill {skill: S}`;
//! - prompt 6: one run of three calls it, two answer in plain text;
//! - S's near-misses 7–9: plain text; near-miss 10: every run calls S (a false trigger).
//!
//! By hand, each prompt counted once: recall (5 × 1 + 1/3) / 6 = 0.889; S's false
//! triggers are over its 4 near-misses and the other skills' 20 prompts, one of them
//! always: 1/24 = 0.042. Matrix (runs): S's row holds 16 of the 18 runs of its column and
//! 3 of the 36 runs of `(none)`; `(none)`'s row 2 runs of each skill's column and 27 of its
//! own. A whole run of a prompt that triggers takes two model requests (the call, then the
//! answer after the skill's text), one stopped at its first call takes one: 90 requests
//! against 57 × 2 + 33 = 147. Figures are printed, not asserted.

#![expect(
    clippy::expect_used,
    clippy::print_stdout,
    reason = "a benchmark stops loudly on any failure and prints its figures"
)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

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
#[expect(dead_code, reason = "the benchmark uses the environment helper only")]
mod agents;

use model::{ScriptedModel, Turn};

/// The skills, with their descriptions.
const SKILLS: [(&str, &str); 3] = [
    ("pdf", "Fill in, rotate and merge PDF files."),
    ("docx", "Write and edit Word documents."),
    ("csv", "Clean, join and summarise CSV files."),
];

/// Runs per prompt.
const RUNS: u32 = 3;

/// Concurrent runs.
const JOBS: usize = 4;

/// One prompt of the suite: its marker, the skill whose list holds it, whether it is a
/// should-trigger prompt, and how many of its [`RUNS`] runs call that skill.
struct Prompt {
    marker: String,
    skill: &'static str,
    should: bool,
    triggering: u32,
}

/// The 30 prompts, as the module docs script them.
fn prompts() -> Vec<Prompt> {
    let mut all = Vec::new();
    for (skill, _) in SKILLS {
        for i in 1..=10 {
            all.push(Prompt {
                marker: format!("RB-{}-{i:02}", skill.to_uppercase()),
                skill,
                should: i <= 6,
                triggering: match i {
                    1..=5 | 10 => RUNS,
                    6 => 1,
                    _ => 0,
                },
            });
        }
    }
    all
}

/// The suite file with `stop`.
fn suite_file(stop: &str, prompts: &[Prompt]) -> String {
    let mut text = format!("name: routing bench\nruns: {RUNS}\nstop: {stop}\nrouting:\n");
    for (skill, _) in SKILLS {
        text.push_str(&format!("  {skill}:\n"));
        for (key, should) in [("should_trigger", true), ("should_not_trigger", false)] {
            text.push_str(&format!("    {key}:\n"));
            for p in prompts
                .iter()
                .filter(|p| p.skill == skill && p.should == should)
            {
                text.push_str(&format!(
                    "      - \"{}: help me with the {} task\"\n",
                    p.marker, p.skill
                ));
            }
        }
    }
    text
}

/// The model's time to reply ([`LATENCY_VAR`], default 1 s).
fn latency() -> Duration {
    Duration::from_millis(
        std::env::var(LATENCY_VAR)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000),
    )
}

/// The variable that sets the scripted model's latency, in ms.
const LATENCY_VAR: &str = "APTITUDE_BENCH_LATENCY_MS";

/// Scripts each prompt's choice on a fresh model, each reply after `latency`.
fn scripted(prompts: &[Prompt], latency: Duration) -> ScriptedModel {
    let model = ScriptedModel::start();
    let late = |turn: Turn| Turn::Delay(latency, Box::new(turn));
    let call = |skill: &str| late(Turn::Tool("Skill", json!({"skill": skill})));
    let answer = || late(Turn::Text("Done.".into()));
    for p in prompts {
        let first = match p.triggering {
            0 => answer(),
            n if n == RUNS => call(p.skill),
            n => Turn::Sequence(
                (0..RUNS)
                    .map(|i| if i < n { call(p.skill) } else { answer() })
                    .collect(),
            ),
        };
        model.script(&p.marker, vec![first, answer()]);
    }
    model
}

/// What one mode measured.
struct Measured {
    wall: Duration,
    upstream_requests: usize,
    results: Value,
}

fn run(root: &Path, stop: &str, prompts: &[Prompt]) -> Measured {
    let dir = tempfile::tempdir().expect("a temp dir");
    let home = tempfile::tempdir().expect("a temp dir");
    let ws = dir.path().join("tests/ws");
    for (skill, description) in SKILLS {
        let d = ws.join(".claude/skills").join(skill);
        std::fs::create_dir_all(&d).expect("the fixture");
        std::fs::write(
            d.join("SKILL.md"),
            format!("---\nname: {skill}\ndescription: {description}\n---\nFollow the steps.\n"),
        )
        .expect("the fixture");
    }
    std::fs::write(ws.join("routing.aptitude.yaml"), suite_file(stop, prompts)).expect("the suite");
    let model = scripted(prompts, latency());
    let claude = root.join("node_modules/.bin/claude");
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_aptitude"))
        .current_dir(dir.path())
        .env_clear()
        .envs(agents::bench_env(home.path()))
        .envs(model.claude_env())
        .args(["run", "tests", "--no-grade", "--json", "results.json"])
        .args(["--jobs", &JOBS.to_string()])
        .arg(format!("--claude-bin={}", claude.display()))
        .stdout(std::process::Stdio::null())
        .status()
        .expect("aptitude runs");
    let wall = started.elapsed();
    let text = std::fs::read_to_string(dir.path().join("results.json"))
        .unwrap_or_else(|_| panic!("no results (exit {status})"));
    Measured {
        wall,
        upstream_requests: model.requests().len(),
        results: serde_json::from_str(&text).expect("results JSON"),
    }
}

/// (model requests, tokens, cost in USD) the gateway metered over every run.
fn metered(results: &Value) -> (u64, u64, f64) {
    let (mut requests, mut tokens, mut cost) = (0, 0, 0.0);
    for test in results["tests"].as_array().into_iter().flatten() {
        let runs = test["runs"].as_array().filter(|r| !r.is_empty());
        for run in runs.map_or_else(|| vec![test], |r| r.iter().collect()) {
            let t = &run["model_traffic"];
            requests += t["requests"].as_u64().unwrap_or(0);
            tokens += [
                "input_tokens",
                "output_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
            ]
            .iter()
            .map(|k| t[k].as_u64().unwrap_or(0))
            .sum::<u64>();
            cost += t["cost_usd"].as_f64().unwrap_or(0.0);
        }
    }
    (requests, tokens, cost)
}

/// The mean over prompts of each prompt's rate of runs that triggered `skill`, over the
/// prompts `which` selects: the figure worked out from the script.
fn by_hand(prompts: &[Prompt], skill: &str, which: impl Fn(&Prompt) -> bool) -> f64 {
    let rates: Vec<f64> = prompts
        .iter()
        .filter(|p| which(p))
        .map(|p| {
            if p.skill == skill {
                f64::from(p.triggering) / f64::from(RUNS)
            } else {
                0.0
            }
        })
        .collect();
    rates.iter().sum::<f64>() / rates.len() as f64
}

fn phrase(f: &Value) -> String {
    match (f["value"].as_f64(), f["low"].as_f64(), f["high"].as_f64()) {
        (Some(v), Some(l), Some(h)) => format!("{v:.3} (95% CI {l:.3}–{h:.3})"),
        _ => "–".to_owned(),
    }
}

fn print_figures(results: &Value, prompts: &[Prompt]) {
    for (skill, _) in SKILLS {
        let Some(entry) = results["routing"]["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["skill"] == skill)
        else {
            println!("  {skill}: no routing entry");
            continue;
        };
        let recall = by_hand(prompts, skill, |p| p.skill == skill && p.should);
        let false_rate = by_hand(prompts, skill, |p| !(p.skill == skill && p.should));
        println!(
            "  {skill:5} recall {}  [by hand {recall:.3}]   false triggers {}  [by hand {false_rate:.3}]   errored runs {}",
            phrase(&entry["recall"]),
            phrase(&entry["false_trigger_rate"]),
            entry["errors"]["runs"]
        );
    }
    if let Some(m) = results["routing"]["matrices"].get(0) {
        let classes: Vec<String> = m["classes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c.as_str().unwrap_or("?").to_owned())
            .collect();
        println!(
            "  matrix (runs; triggered ↓, should trigger →): {}",
            classes.join(" ")
        );
        for row in m["rows"].as_array().into_iter().flatten() {
            println!(
                "    {:7} {}",
                row["triggered"].as_str().unwrap_or("?"),
                row["counts"]
            );
        }
        println!("    judged  {}", m["runs"]);
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !root.join("node_modules/.bin/claude").exists() {
        println!("skipped: node_modules/.bin/claude is missing (run `scripts/test`)");
        return;
    }
    let prompts = prompts();
    println!(
        "routing: {} skills × {} prompts × {RUNS} runs on Claude Code, --jobs {JOBS}, model latency {} ms",
        SKILLS.len(),
        prompts.len() / SKILLS.len(),
        latency().as_millis()
    );
    let mut walls = Vec::new();
    for stop in ["first_call", "never"] {
        let m = run(root, stop, &prompts);
        let (requests, tokens, cost) = metered(&m.results);
        println!(
            "\nstop: {stop}: {:.1} s wall; model requests {} (gateway {requests}); {tokens} tokens; ${cost:.4}",
            m.wall.as_secs_f64(),
            m.upstream_requests
        );
        let s = &m.results["summary"];
        println!(
            "  tests {} passed {} failed {} errors {}",
            s["total"], s["passed"], s["failed"], s["errors"]
        );
        print_figures(&m.results, &prompts);
        walls.push((m.wall, requests, tokens, cost));
    }
    if let [(w1, r1, t1, c1), (w2, r2, t2, c2)] = walls.as_slice() {
        println!(
            "\nearly stop against whole runs: wall {:.0}%, requests {:.0}%, tokens {:.0}%, cost {:.0}%",
            100.0 * w1.as_secs_f64() / w2.as_secs_f64(),
            100.0 * *r1 as f64 / (*r2).max(1) as f64,
            100.0 * *t1 as f64 / (*t2).max(1) as f64,
            if *c2 > 0.0 { 100.0 * c1 / c2 } else { f64::NAN }
        );
    }
}
