//! `expect:` of a `mock:` MCP server's tool: every call the mock received must match the
//! parameters written, and a tool with `expect:` must be called. The calls are the ones
//! the mock itself answered ([`crate::agent::Execution::mcp_calls`]), kept in aptitude's
//! process, not the agent's account of them in its transcript; parameters match as a
//! `tool:` assertion's `params:` do.

use super::{AssertionResult, AssertionStatus};
use crate::spec::McpMocks;
use crate::transcript::ToolCall;

/// The assertion kind of an `expect:` result.
pub const KIND: &str = "expect";

/// What a run's mocks received.
#[derive(Debug, Clone, Copy)]
pub struct MockCalls<'a> {
    /// The calls kept, in order.
    pub calls: &'a [ToolCall],
    /// Calls received past what aptitude keeps ([`crate::agent::mcp::host::MAX_CALLS`]):
    /// an `expect:` the kept calls pass is then `error`, since a call not kept may not
    /// match.
    pub dropped: u32,
}

/// One result per mock tool with `expect:`, in server and tool order. `calls`: what the
/// mocks received, `None` when there was no run (a transcript checked alone), which makes
/// each one `error`.
pub fn expectations(mocks: &McpMocks, calls: Option<MockCalls<'_>>) -> Vec<AssertionResult> {
    let mut out = Vec::new();
    for (server, mock) in mocks {
        for (name, tool) in mock.tools.iter().filter(|(_, t)| !t.expect.is_empty()) {
            let description = format!(
                "mcp_servers.{server}: every call of `{name}` has {}",
                super::tool::describe_params(&tool.expect)
            );
            let (status, detail) = match calls {
                None => (
                    AssertionStatus::Error,
                    "needs the calls the mock received, which only a run of the test has"
                        .to_owned(),
                ),
                Some(seen) => match judge(server, name, &tool.expect, seen.calls) {
                    (AssertionStatus::Pass, detail) if seen.dropped > 0 => (
                        AssertionStatus::Error,
                        format!(
                            "{detail}, but the mocks received {} more calls than aptitude keeps, which were not checked",
                            seen.dropped
                        ),
                    ),
                    verdict => verdict,
                },
            };
            out.push(AssertionResult::new(
                KIND,
                description,
                status,
                tool.expect_line,
                Some(detail),
            ));
        }
    }
    out
}

fn judge(
    server: &str,
    name: &str,
    expect: &[crate::spec::ParamMatcher],
    calls: &[ToolCall],
) -> (AssertionStatus, String) {
    let canonical = format!("mcp__{server}__{name}");
    let mine: Vec<&ToolCall> = calls.iter().filter(|c| c.canonical == canonical).collect();
    if mine.is_empty() {
        return (
            AssertionStatus::Fail,
            format!("the mock received no call of `{name}`"),
        );
    }
    let failed: Vec<String> = mine
        .iter()
        .enumerate()
        .filter_map(|(i, call)| {
            let why = super::tool::param_mismatches(expect, call);
            (!why.is_empty()).then(|| {
                format!(
                    "call {} with {}: {}",
                    i + 1,
                    crate::shared::cut::chars(&call.input.to_string(), 200).kept,
                    why.join("; ")
                )
            })
        })
        .collect();
    if failed.is_empty() {
        let n = mine.len();
        (
            AssertionStatus::Pass,
            format!(
                "{n} call{} of `{name}`, each as expected",
                if n == 1 { "" } else { "s" }
            ),
        )
    } else {
        (
            AssertionStatus::Fail,
            format!(
                "{} of {} calls of `{name}` did not match:\n  {}",
                failed.len(),
                mine.len(),
                failed.join("\n  ")
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::pattern::ValueMatcher;
    use crate::spec::{MockServer, MockTool, ParamMatcher};
    use serde_json::json;

    fn mocks() -> McpMocks {
        let tool = MockTool {
            description: String::new(),
            input_schema: json!({"type": "object"}),
            replies: Vec::new(),
            expect: vec![ParamMatcher {
                key: "title".into(),
                matcher: ValueMatcher::Contains("login".into()),
            }],
            expect_line: 7,
        };
        [(
            "tickets".to_owned(),
            MockServer {
                tools: [("create".to_owned(), tool)].into(),
                from: None,
                line: 3,
            },
        )]
        .into()
    }

    fn call(title: &str) -> ToolCall {
        ToolCall::new("mcp__tickets__create", json!({"title": title}))
    }

    #[test]
    fn every_call_must_match_and_the_tool_must_be_called() {
        let seen = |calls: &'static [ToolCall], dropped| Some(MockCalls { calls, dropped });
        let pass = expectations(
            &mocks(),
            seen(
                Box::leak(Box::new([call("login fails"), call("fix login")])),
                0,
            ),
        );
        assert_eq!(
            pass[0].status,
            AssertionStatus::Pass,
            "{:?}",
            pass[0].detail
        );
        assert_eq!(pass[0].line, 7);
        let one_bad = expectations(
            &mocks(),
            seen(
                Box::leak(Box::new([call("login fails"), call("logout")])),
                0,
            ),
        );
        assert_eq!(one_bad[0].status, AssertionStatus::Fail);
        let detail = one_bad[0].detail.as_deref().unwrap();
        assert!(
            detail.contains("1 of 2 calls") && detail.contains("call 2"),
            "{detail}"
        );
        let none = expectations(&mocks(), seen(&[], 0));
        assert_eq!(none[0].status, AssertionStatus::Fail);
        let no_run = expectations(&mocks(), None);
        assert_eq!(no_run[0].status, AssertionStatus::Error);
        let unkept = expectations(
            &mocks(),
            seen(Box::leak(Box::new([call("login fails")])), 3),
        );
        assert_eq!(
            unkept[0].status,
            AssertionStatus::Error,
            "calls not kept may not match"
        );
        let failing = expectations(&mocks(), seen(Box::leak(Box::new([call("logout")])), 3));
        assert_eq!(
            failing[0].status,
            AssertionStatus::Fail,
            "a call seen not to match fails"
        );
    }
}
