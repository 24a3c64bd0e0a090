//! A large suite's results, for the benchmarks that render or compare them
//! (`report_render`, `diff`): 5,000 tests × 3 runs, each run a 10-call transcript with its
//! 11 turns (the assistant's text, tokens and time), two changed files with their diffs
//! (one bounded text diff, one binary file named), and the 11 model requests the gateway
//! saw. `Shape::Stopped` runs are a regression's: the agent edits and stops, without the
//! test run that follows the edit.

use aptitude::gateway::{ModelRequest, Traffic};
use aptitude::transcript::{Format, Outcome, ToolCall, Transcript, Turn, TurnTokens, Usage};
use aptitude::verdict::results::{
    AssertionResult, AssertionStatus, Results, TestResult, TestStatus,
};
use aptitude::workspace::{ChangeKind, FileChange};

/// What a run did.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Ten test commands, the last failing (every 7th test's third run fails an assertion).
    Full,
    /// An edit, then nothing: a regression.
    Stopped,
}

/// Run `r` of test `i`'s transcript.
pub fn transcript(i: usize, shape: Shape) -> Transcript {
    let n = if shape == Shape::Full { 10 } else { 1 };
    let tool_calls: Vec<ToolCall> = (0..n)
        .map(|k| {
            let (name, input) = if k == 0 {
                (
                    "Edit",
                    serde_json::json!({"file_path": format!("/tmp/aptitude-ws-{i}/workspace/src/lib{i}.rs"), "old_string": "a - b", "new_string": "a + b"}),
                )
            } else {
                (
                    "Bash",
                    serde_json::json!({"command": format!("cargo test --package p{k} -- --nocapture"), "description": "run tests"}),
                )
            };
            ToolCall {
                id: format!("toolu_{i}_{k}"),
                name: name.into(),
                canonical: name.into(),
                input,
                params: None,
                output: Some("running 12 tests\ntest a ... ok\n".repeat(20)),
                is_error: k == 9,
                blocked: None,
                exit_code: (k > 0).then_some(if k == 9 { 101 } else { 0 }),
                stdout: None,
                stderr: None,
                agent: "main".into(),
                timestamp: None,
                server_side: false,
                exit_by_kernel: false,
            }
        })
        .collect();
    let mut turns: Vec<Turn> = (0..n)
        .map(|k| Turn {
            agent: "main".into(),
            text: Some(format!(
                "Step {k}: the failing assertion is in package p{k}; I will run its tests again with output shown."
            )),
            calls: vec![k as u32],
            tokens: Some(TurnTokens {
                input: 1_200 + k as u64 * 300,
                output: 90,
                cache_read: 9_000,
                cache_creation: 0,
            }),
            timestamp: None,
            duration_ms: Some(1_800),
        })
        .collect();
    turns.push(Turn {
        agent: "main".into(),
        text: Some("I ran the tests; one package fails.".into()),
        tokens: Some(TurnTokens {
            input: 4_000,
            output: 40,
            ..TurnTokens::default()
        }),
        duration_ms: Some(900),
        ..Turn::default()
    });
    Transcript {
        format: Format::ClaudeStreamJson,
        session_id: Some(format!("s{i}")),
        agent_version: Some("claude-code 2.1.328".into()),
        model: Some("claude".into()),
        tool_calls,
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
        skills_shown: None,
        mcp_params: None,
        warnings: Vec::new(),
        warnings_total: 0,
        lost: Default::default(),
        turns,
        turns_left_out: 0,
        unclaimed_execs: Vec::new(),
    }
}

/// The files a run changed: `src/lib{i}.rs` with a 40-line diff, and a binary file.
pub fn files(i: usize) -> Vec<FileChange> {
    let mut diff = format!("--- a/src/lib{i}.rs\n+++ b/src/lib{i}.rs\n@@ -1,20 +1,20 @@\n");
    for l in 0..20 {
        diff.push_str(&format!(
            "-    let x{l} = a - b; // line {l}\n+    let x{l} = a + b; // line {l}\n"
        ));
    }
    let mut source = FileChange::new(format!("src/lib{i}.rs"), ChangeKind::Modified, Some(900));
    source.diff = Some(diff);
    let mut binary = FileChange::new("target/out.bin", ChangeKind::Created, Some(4_096));
    binary.diff_omitted = Some("not shown: binary".into());
    vec![source, binary]
}

/// The model requests of a run of `n` turns.
pub fn traffic(n: u32) -> Traffic {
    Traffic {
        upstream: "https://api.anthropic.com".into(),
        requests: n,
        input_tokens: 1_200 * u64::from(n),
        output_tokens: 90 * u64::from(n),
        models: vec!["claude-sonnet-4-5".into()],
        request_log: (1..=n)
            .map(|index| ModelRequest {
                index,
                model: Some("claude-sonnet-4-5".into()),
                status: Some(200),
                failed: false,
                input_tokens: 1_200,
                output_tokens: 90,
                cache_tokens: 9_000,
                duration_ms: Some(1_700 + u64::from(index)),
            })
            .collect(),
        ..Traffic::default()
    }
}

/// Run `r` of test `i`: its assertions (a failing one in run 3 of every 7th test, and in a
/// `Stopped` run), its transcript, files and model requests.
pub fn run(i: usize, r: usize, shape: Shape) -> TestResult {
    let failed = shape == Shape::Stopped || (i.is_multiple_of(7) && r == 2);
    let assertions = vec![
        AssertionResult::new(
            "tool",
            "Bash called with command ~ glob \"cargo test*\"".into(),
            if shape == Shape::Full {
                AssertionStatus::Pass
            } else {
                AssertionStatus::Fail
            },
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
    let t = transcript(i, shape);
    TestResult {
        prompt: Some("Fix the failing test and run the suite.".into()),
        duration_ms: 12_000,
        usage: Some(t.usage.clone()),
        assertions,
        model_traffic: Some(traffic(t.turns.len() as u32)),
        transcript: Some(t),
        files: files(i),
        agent: Some("claude 2.1.328 (Claude Code)".into()),
        agent_id: Some(aptitude::agent::AgentKind::Claude),
        ..TestResult::new(
            format!("test number {i}"),
            format!("tests/suite{}/t{i}.aptitude.yaml", i % 50),
            if failed {
                TestStatus::Failed
            } else {
                TestStatus::Passed
            },
        )
    }
}

/// `tests` tests × 3 runs; in `stopped` of every 10 tests (the first ones), every run
/// stops after its edit.
pub fn results(tests: usize, stopped: usize) -> Results {
    let tests = (0..tests)
        .map(|i| {
            let shape = if i % 10 < stopped {
                Shape::Stopped
            } else {
                Shape::Full
            };
            aptitude::verdict::repeat::aggregate((0..3).map(|r| run(i, r, shape)).collect(), 3)
        })
        .collect();
    Results::new(tests, 600_000)
}
