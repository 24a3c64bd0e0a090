//! The fluent Rust API end to end: `prompt(…).run_full()` runs the real `claude` against
//! the scripted model, in a copy of the directory, and `expect(&output)` checks what it
//! did — tool calls by upstream's spelling and ours, and a review graded by the agent that
//! ran.

use std::time::Duration;

use aptitude::{Tool, expect, params, prompt};
use serde_json::json;

use crate::support::claude_bin;
use crate::support::model::{ScriptedModel, Turn};

#[test]
fn prompt_runs_the_real_agent_in_a_copy_and_expect_checks_it() {
    let model = ScriptedModel::start();
    // The grading prompt holds the task too: the judge's script is found first.
    model.script(
        "prompt-api-judge",
        vec![Turn::Text(
            "{\"score\": 9, \"reasoning\": \"quotes the notes\"}".into(),
        )],
    );
    model.script(
        "prompt-api-run",
        vec![
            Turn::Tool(
                "Bash",
                json!({"command": "cat notes.txt > seen.txt", "description": "read the notes"}),
            ),
            Turn::Text("The notes say hello.".into()),
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();

    let mut run = prompt("prompt-api-run: what do the notes say?")
        .in_dir(dir.path())
        .agent(aptitude::AgentType::Claude)
        .agent_binary(claude_bin())
        .timeout(Duration::from_secs(180));
    for (key, value) in model.claude_env() {
        run = run.env(key, &value);
    }
    // A library call has no cleared environment: the test process's reaches the agent. As
    // root, Claude Code takes `--dangerously-skip-permissions` only with IS_SANDBOX=1,
    // which the adapter sets unless that environment has a value of its own.
    run = run.env("IS_SANDBOX", "1");
    let output = run.run_full().expect("the agent ran");

    expect(&output)
        .tool(Tool::Bash)
        .with_params(params! {"command" => "cat notes.txt*"})
        .to_be_called();
    expect(&output).tool(Tool::Read).not_to_be_called();
    expect(&output.result.tool_calls)
        .tool("Bash")
        .times(1)
        .to_pass();
    assert_eq!(output.result.agent_name, "claude");
    assert!(output.agent_version.contains("2.1.328"), "{output:?}");
    assert_eq!(output.stdout.as_deref(), Some("The notes say hello."));
    assert_eq!(output.transcript().tool_calls[0].exit_code, Some(0));
    assert_eq!(
        output
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect::<Vec<_>>(),
        ["seen.txt"]
    );
    assert!(
        !dir.path().join("seen.txt").exists(),
        "the agent worked in a copy"
    );

    // Graded by the agent that ran, with the prompt as context.
    let review = expect(&output)
        .stdout()
        .review("prompt-api-judge: says what the notes say")
        .without_cache();
    review.to_pass();
    assert_eq!(review.evaluate().score, Some(9));
    assert_eq!(model.requests_for("prompt-api-run").len(), 2);
    assert!(
        model
            .requests_for("prompt-api-judge")
            .iter()
            .all(|r| !r.has_tools),
        "a grading call offers no tools"
    );
}
