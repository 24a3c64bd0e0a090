//! The fluent Rust API: agents run and checked from Rust tests, with the assertions of the
//! YAML files (seeds 000 and 001; upstream aptitude's `prompt` / `expect`).
//!
//! [`prompt()`] runs a real agent once in a copy of a directory, on the same path as
//! `aptitude run` ([`crate::run::single`]); [`expect()`] checks what an agent did — a run's
//! [`ExecutionOutput`], its [`ToolCalls`], a parsed [`crate::transcript::Transcript`], or a
//! bare list of calls — with tool assertions (the YAML `tool:`) and LLM-graded reviews of
//! the final answer (the YAML `stdout: {review}`). Upstream's spellings
//! ([`Tool`], [`params!`](crate::params), `to_be_called`, `after`, `AgentHarness` …) work
//! alongside ours; [`upstream`] holds upstream's documented examples, each compiled here.
//!
//! The user guide follows (`docs/fluent-api.md`).
//!
#![doc = include_str!("../../docs/fluent-api.md")]

mod calls;
mod evaluation;
mod expectation;
mod harness;
pub mod params;
mod prompt;
pub mod review;
mod stdout;
mod subject;
mod tool;
pub mod upstream;

pub use calls::{ToolCalls, parse_session};
pub use evaluation::Evaluation;
pub use expectation::{Expectation, NthCallAssertion, ToolExpectation};
pub use harness::{AgentHarness, ExecutionConfig};
pub use params::{Params, ParamsError, params_match, value_matcher};
pub use prompt::{ExecutionOutput, NormalizedResult, PromptBuilder, RunError, prompt};
pub use stdout::{StdoutAssertion, StdoutAssertionBuilder};
pub use subject::{Subject, TranscriptRef};
pub use tool::Tool;

/// Starts expectations on what an agent did: a run's [`ExecutionOutput`] or
/// [`ToolCalls`], a [`crate::transcript::Transcript`], or a list of calls
/// (`Vec<ToolCall>`, `&[ToolCall]`).
pub fn expect<S: Subject + ?Sized>(output: &S) -> Expectation<'_> {
    Expectation::new(output)
}

/// Upstream's entry point for a list of tool calls; the same as [`expect()`].
pub fn expect_tools<S: Subject + ?Sized>(calls: &S) -> Expectation<'_> {
    Expectation::new(calls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assertions::AssertionStatus;
    use crate::transcript::{ToolCall, Transcript, parse_reader};

    fn transcript() -> Transcript {
        let lines = [
            r#"{"type":"system","subtype":"init","session_id":"s"}"#,
            r#"{"type":"assistant","session_id":"s","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/p/README.md"}}]}}"#,
            r#"{"type":"assistant","session_id":"s","message":{"id":"m2","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"cargo test --all"}}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"All tests pass.","session_id":"s"}"#,
        ];
        parse_reader(lines.join("\n").as_bytes()).unwrap()
    }

    #[test]
    fn tool_chain() {
        let t = transcript();
        expect(&t).tool("Read").called().to_pass();
        expect(&t)
            .tool("read_file")
            .not_called()
            .with_param("file_path", "*.env")
            .to_pass();
        expect(&t)
            .tool("Bash")
            .called()
            .times(1)
            .called_after("Read")
            .with_param("command", "cargo test*")
            .to_pass();
        expect(&t)
            .tool("Bash")
            .with_params(serde_json::json!({"command": {"regex": "--all$"}}))
            .last_call_params(serde_json::json!({"command": {"contains": "test"}}))
            .to_pass();
        let r = expect(&t).tool("Write").called().evaluate();
        assert_eq!(r.status, AssertionStatus::Fail);
        assert!(r.detail.unwrap().contains("never called"));
    }

    #[test]
    fn skill_chain() {
        let lines = [
            r#"{"type":"system","subtype":"init","session_id":"s","skills":["greet","ops:deploy"]}"#,
            r#"{"type":"assistant","session_id":"s","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Skill","input":{"skill":"ops:deploy"}}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}"#,
        ];
        let t = parse_reader(lines.join("\n").as_bytes()).unwrap();
        expect(&t).skill("deploy").called().times(1).to_pass();
        expect(&t).skill("greet").not_called().to_pass();
        let r = expect(&t).skill("gone").not_called().evaluate();
        assert_eq!(r.status, AssertionStatus::Error, "{:?}", r.detail);
    }

    #[test]
    #[should_panic(expected = "aptitude: assertion failed: Bash not called")]
    fn to_pass_panics_with_what_was_seen() {
        expect(&transcript()).tool("Bash").not_called().to_pass();
    }

    #[test]
    #[should_panic(expected = "invalid regex")]
    fn invalid_patterns_panic_at_the_call() {
        let _ = expect(&transcript())
            .tool("Bash")
            .with_params(serde_json::json!({"command": {"regex": "("}}));
    }

    #[test]
    fn a_review_without_a_grader_is_an_error_not_a_pass() {
        let t = transcript();
        let r = expect(&t).stdout().review("says the tests pass").evaluate();
        assert_eq!(r.status, AssertionStatus::Error);
        assert!(r.detail.unwrap().contains("with_grader"));
    }

    #[test]
    fn upstream_spellings_read_the_same_assertions() {
        let t = transcript();
        expect(&t).tool(Tool::Read).to_be_called();
        expect(&t)
            .tool(Tool::Read)
            .with_params(crate::params! {"file_path" => "*README*"})
            .to_be_called();
        expect(&t)
            .tool(Tool::Read)
            .with_params(crate::params! {"file_path" => "*.env"})
            .not_to_be_called();
        expect(&t).tool(Tool::Bash).after(Tool::Read).to_be_called();
        let result = expect(&t).tool(Tool::Write).evaluate();
        assert!(!result.passed);
        assert!(result.reason.unwrap().contains("never called"));
        assert!(expect(&t).tool(Tool::Write).evaluate_not_called().passed);
        let bash = expect(&t).tool(Tool::Bash);
        let first = bash.nth_call(1);
        assert_eq!(first.index(), 1);
        assert_eq!(first.params()["command"], "cargo test --all");
        first.has_params(crate::params! {"command" => "cargo test*"});
        assert!(
            !bash
                .last_call()
                .evaluate_params(crate::params! {"command" => "*build*"})
                .passed
        );
    }

    #[test]
    #[should_panic(expected = "Read call #2 does not exist (1 calls made)")]
    fn nth_call_panics_when_there_is_no_such_call() {
        let _ = expect(&transcript()).tool(Tool::Read).nth_call(2);
    }

    /// Upstream's `expect(&tool_calls)` with a `Vec<ToolCall>` (even an empty `vec![]`,
    /// whose element type only `expect` tells) and with a slice.
    #[test]
    fn lists_of_calls_are_subjects() {
        let calls = vec![
            ToolCall::new("read_file", serde_json::json!({"file_path": "/p/a.rs"})),
            ToolCall::new("Write", serde_json::json!({"file_path": "/p/b.rs"})),
        ];
        expect(&calls).tool(Tool::Read).to_be_called();
        expect_tools(&calls[..])
            .tool(Tool::Write)
            .after(Tool::Read)
            .with_params(crate::params! {"file_path" => "*.rs"})
            .times(1)
            .to_be_called();
        let none = vec![];
        assert!(!expect(&none).tool(Tool::Read).evaluate().passed);
        assert!(expect(&none).tool(Tool::Read).evaluate_not_called().passed);
    }

    /// The calls a run or a session file gives keep their transcript: a transcript that
    /// lost calls, or an agent that records no shell commands, can not make `not_called`
    /// pass, where a bare list of the same calls would.
    #[test]
    fn tool_calls_keep_what_their_transcript_could_not_see() {
        let mut lossy = transcript();
        lossy.lost.lines = 1;
        lossy.lost.first = Some("line 7".into());
        let calls = ToolCalls::new(lossy);
        assert_eq!(calls.len(), 2);
        assert_eq!((&calls).into_iter().count(), 2);
        let r = expect(&calls).tool(Tool::Write).evaluate_not_called();
        assert_eq!(r.status, AssertionStatus::Error, "{r:?}");
        assert!(!r.passed);
        let bare: Vec<ToolCall> = calls.clone().into();
        assert!(expect(&bare).tool(Tool::Write).evaluate_not_called().passed);

        let mut aider = Transcript::of_calls(Vec::new(), None);
        aider.records_only = Some(crate::transcript::RecordsOnly::aider());
        let r = expect(&ToolCalls::new(aider))
            .tool(Tool::Bash)
            .evaluate_not_called();
        assert_eq!(r.status, AssertionStatus::Error, "{r:?}");
    }

    #[test]
    fn a_bare_answer_without_a_grader_is_an_error_not_a_pass() {
        let r = StdoutAssertion::with_review(Some("done".into()), "says done").evaluate();
        assert_eq!(r.status, AssertionStatus::Error);
        assert!(!r.passed);
        let built = StdoutAssertion::builder()
            .stdout(Some("done".into()))
            .review("says done")
            .with_threshold(9)
            .build()
            .evaluate();
        assert!(built.description.contains("threshold: 9"), "{built:?}");
        assert!(built.reason.unwrap().contains("with_grader"));
    }
}
