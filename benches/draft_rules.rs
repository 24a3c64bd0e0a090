//! Rule coverage of a real instruction file before and after drafting (`cargo bench --bench
//! draft_rules`): pydantic-ai's AGENTS.md (MIT; tests/data/coverage/SOURCES.tsv) in a
//! fresh repository with one test covering one rule; `aptitude coverage`, then `aptitude
//! init --rules AGENTS.md` through the pinned `claude -p` against the scripted model
//! (which answers every drafting call with the same small test), then `aptitude coverage`
//! again. Printed: rules, covered before and after, drafts written, the tokens and
//! dollars the drafting reported, and its wall time. Figures are printed, not asserted.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

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

#[path = "support/agents.rs"]
#[expect(dead_code, reason = "the benchmark uses the environment helper only")]
mod agents;

use model::{ScriptedModel, Turn};

fn aptitude(dir: &Path, home: &Path, model: &ScriptedModel, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_aptitude"))
        .current_dir(dir)
        .env_clear()
        .envs(agents::bench_env(home))
        .envs(model.claude_env())
        .args(args)
        .output()
        .expect("aptitude runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn covered(line: &str) -> &str {
    line.lines()
        .rev()
        .find(|l| l.starts_with("rules covered"))
        .unwrap_or("?")
}

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let claude = root.join("node_modules/.bin/claude");
    if !claude.exists() {
        println!("skipped: {} is missing (run `scripts/test`)", claude.display());
        return Ok(());
    }
    let repo = tempfile::tempdir()?;
    let home = tempfile::tempdir()?;
    std::fs::copy(
        root.join("tests/data/coverage/pydantic-ai/AGENTS.md"),
        repo.path().join("AGENTS.md"),
    )?;
    std::fs::create_dir_all(repo.path().join("tests/agents"))?;
    std::fs::write(
        repo.path().join("tests/agents/verify.aptitude.yaml"),
        "name: trust but verify\nprompt: p\nworkspace: ../..\ncovers: \"trust but verify\"\nassertions:\n  - tool: WebFetch\n",
    )?;
    let model = ScriptedModel::start();
    model.script(
        "You write tests for aptitude",
        vec![Turn::Text(
            "```yaml\nprompt: \"Make the change the issue asks for, then say what you did\"\nassertions:\n  - tool: Read\n  - not_ran: \"git push\"\n```".into(),
        )],
    );
    let claude_bin = format!("--claude-bin={}", claude.display());
    let (_, before) = aptitude(repo.path(), home.path(), &model, &["coverage", "tests/agents"]);
    let started = Instant::now();
    let (code, drafted) = aptitude(
        repo.path(),
        home.path(),
        &model,
        &["init", "--rules", "AGENTS.md", &claude_bin],
    );
    let took = started.elapsed();
    let (_, after) = aptitude(repo.path(), home.path(), &model, &["coverage", "tests/agents"]);
    let summary = drafted
        .lines()
        .find(|l| l.contains("drafting used"))
        .unwrap_or("?");
    println!("pydantic-ai AGENTS.md");
    println!("  before:   {}", covered(&before));
    println!("  drafting: {summary} (exit {code}), {:.1} s", took.as_secs_f64());
    println!("  after:    {}", covered(&after));
    println!("  model requests: {}", model.requests().len());
    Ok(())
}
