//! The fluent Rust API on a recorded transcript: `cargo run --example fluent_api`.
//!
//! Tool-call assertions run offline; the `stdout` review is graded by `claude` when it is
//! installed (with `ANTHROPIC_API_KEY` or a login), and reported as an error otherwise.

#![expect(clippy::print_stdout, reason = "an example shows its results")]

use std::sync::Arc;

use aptitude::agent::claude::Claude;
use aptitude::agent::{AgentSettings, CliAgent};
use aptitude::fluent::expect;
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/counter/counter.transcript.jsonl");
    let output = aptitude::transcript::parse_file(&path)?;

    // Panics, with what was seen, when an assertion does not hold.
    expect(&output)
        .tool("Bash")
        .called()
        .with_param("command", "cat counter.txt*")
        .to_pass();
    expect(&output).tool("Write").not_called().to_pass();
    expect(&output)
        .tool("Bash")
        .called()
        .times(1)
        .last_call_params(json!({"command": {"contains": "counter.txt"}}))
        .to_pass();

    // Or inspect the result.
    let read = expect(&output)
        .tool("Read")
        .called()
        .with_param("file_path", "counter.txt")
        .evaluate();
    println!(
        "{:?}: {}\n  {}",
        read.status,
        read.description,
        read.detail.unwrap_or_default()
    );

    // The final answer, graded 1–10 by an LLM judge through the Claude Code adapter.
    let grader = Arc::new(CliAgent::new(
        Arc::new(Claude::default()),
        AgentSettings::default(),
    ));
    let review = expect(&output)
        .with_grader(grader)
        .with_task("What is in counter.txt?")
        .stdout()
        .review("states that counter.txt contains 42")
        .with_threshold(8)
        .evaluate();
    println!(
        "{:?}: {}\n  {}",
        review.status,
        review.description,
        review.detail.unwrap_or_default()
    );
    Ok(())
}
