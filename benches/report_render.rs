//! Rendering reports for 5,000 tests × 3 runs (`cargo bench --bench report_render`).
//!
//! Builds results for 5,000 tests repeated 3 times — each run with assertions, a failure
//! detail and a 10-call transcript, 150,000 tool calls in all — then times the HTML,
//! Markdown and JUnit renderers and reports the HTML file size. Targets: HTML in under
//! 1 s and at most 10 MB. Figures are printed, not asserted.
//!
//! With `REPORT_RENDER_HTML=FILE` the HTML report is also written to FILE, for
//! `node tests/browser/first-screen.mjs FILE` to measure its first screen in Chromium.

use std::io::Write;
use std::time::Instant;

use aptitude::transcript::{Format, Outcome, ToolCall, Transcript, Usage};
use aptitude::verdict::results::{
    AssertionResult, AssertionStatus, Results, TestResult, TestStatus,
};

fn transcript(i: usize) -> Transcript {
    let calls = (0..10)
        .map(|n| ToolCall {
            id: format!("toolu_{i}_{n}"),
            name: "Bash".into(),
            canonical: "Bash".into(),
            input: serde_json::json!({"command": format!("cargo test --package p{n} -- --nocapture"), "description": "run tests"}),
            params: None,
            output: Some("running 12 tests\ntest a ... ok\n".repeat(20)),
            is_error: n == 9,
            blocked: None,
            exit_code: Some(if n == 9 { 101 } else { 0 }),
            stdout: None,
            stderr: None,
            agent: "main".into(),
            timestamp: None,
        })
        .collect();
    Transcript {
        format: Format::ClaudeStreamJson,
        session_id: Some(format!("s{i}")),
        agent_version: Some("claude-code 2.1.328".into()),
        model: Some("claude".into()),
        tool_calls: calls,
        final_text: Some("I ran the tests; one package fails.".into()),
        usage: Usage {
            input_tokens: 1200,
            output_tokens: 300,
            cost_usd: Some(0.01),
            turns: Some(11),
            duration_ms: Some(12_000),
            ..Usage::default()
        },
        outcome: Outcome::Completed,
        runs: 1,
        records_only: None,
        skills: None,
        warnings: Vec::new(),
        warnings_total: 0,
        lost: Default::default(),
    }
}

/// One run of test `i`: its assertions (a failing one in run 3 of every 7th test), and a
/// 10-call transcript.
fn run(i: usize, r: usize) -> TestResult {
    let failed = i.is_multiple_of(7) && r == 2;
    let assertions = vec![
        AssertionResult::new(
            "tool",
            "Bash called with command ~ glob \"cargo test*\"".into(),
            AssertionStatus::Pass,
            6,
            Some("10 matching".into()),
        ),
        AssertionResult::new(
            "ran",
            "ran no command matching /rm -rf/".into(),
            AssertionStatus::Pass,
            9,
            None,
        ),
        AssertionResult::new(
            "command_succeeded",
            "a command matching /cargo test/ succeeded".into(),
            if failed {
                AssertionStatus::Fail
            } else {
                AssertionStatus::Pass
            },
            12,
            failed.then(|| {
                "matching commands ran but none exited 0:\n  #10 `cargo test` → exit 101".into()
            }),
        ),
    ];
    let status = if failed {
        TestStatus::Failed
    } else {
        TestStatus::Passed
    };
    TestResult {
        prompt: Some("Fix the failing test and run the suite.".into()),
        duration_ms: 12_000,
        usage: Some(transcript(i).usage),
        assertions,
        transcript: Some(transcript(i)),
        agent: Some("claude 2.1.328 (Claude Code)".into()),
        agent_id: Some(aptitude::agent::AgentKind::Claude),
        ..TestResult::new(
            format!("test number {i}"),
            format!("tests/suite{}/t{i}.aptitude.yaml", i % 50),
            status,
        )
    }
}

fn main() -> std::io::Result<()> {
    let tests: Vec<TestResult> = (0..5_000)
        .map(|i| aptitude::verdict::repeat::aggregate((0..3).map(|r| run(i, r)).collect(), 3))
        .collect();
    let results = Results::new(tests, 600_000);
    let mut out = std::io::stdout().lock();

    let t = Instant::now();
    let html = aptitude::report::html::render(&results).map_err(std::io::Error::other)?;
    let html_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let md = aptitude::report::markdown::render(
        &results,
        &aptitude::report::markdown::MarkdownOptions::default(),
    );
    let md_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let junit = aptitude::report::junit::render(&results).map_err(std::io::Error::other)?;
    let junit_s = t.elapsed().as_secs_f64();
    if let Some(path) = std::env::var_os("REPORT_RENDER_HTML") {
        std::fs::write(path, &html)?;
    }
    writeln!(out, "5,000 tests × 3 runs, 150,000 tool calls")?;
    writeln!(
        out,
        "HTML:     {:.3} s, {} bytes = {:.1} MB (targets < 1 s, ≤ 10 MB)",
        html_s,
        html.len(),
        html.len() as f64 / 1e6
    )?;
    writeln!(
        out,
        "Markdown: {:.3} s, {} chars (bounded at 65,000)",
        md_s,
        md.chars().count()
    )?;
    writeln!(
        out,
        "JUnit:    {:.3} s, {:.1} MB",
        junit_s,
        junit.len() as f64 / 1e6
    )?;
    Ok(())
}
