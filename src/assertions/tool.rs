//! `tool:` assertions: was a tool called, how often, with which parameters, in which order.
//!
//! Semantics (also in `docs/yaml-api.md`):
//! - A call *matches* when its tool name matches and every `params` entry matches.
//! - `called: true` (default): at least one matching call, or exactly `call_count`, or
//!   between `min_calls` and `max_calls`. `called: false`: no matching call.
//! - `called_after: B`: the first matching call comes after the first call of B.
//!   `called_before: B`: the first matching call comes before the first call of B.
//!   Both fail when B was never called.
//! - `first_call_params` / `nth_call_params` / `last_call_params` look at the tool's n-th
//!   call (counting every call of the tool, whatever its parameters).

use serde_json::Value;

use super::AssertionStatus;
use super::{Verdict, bounds, describe_call, in_scope, times, truncate};
use crate::spec::pattern::NameMatcher;
use crate::spec::{CallIndex, ParamMatcher, Scope, ToolAssertion};
use crate::transcript::ToolCall;

/// At most this many calls are listed as evidence.
const MAX_LISTED: usize = 5;

/// Which calls a tool assertion is about, and how they are named in its messages: a
/// `tool:` assertion's are the calls of its tool; a `skill:` assertion's are the `Skill`
/// calls that invoke its skill.
pub(super) struct Subject<'a> {
    /// `Read`, `skill deploy`.
    pub name: String,
    /// Whether a call is one of the subject's (before `params:` are checked).
    pub is_of: &'a dyn Fn(&ToolCall) -> bool,
}

/// Evaluates a tool assertion: (status, description, detail).
pub(super) fn evaluate(a: &ToolAssertion, calls: &[ToolCall]) -> Verdict {
    let of_tool = |c: &ToolCall| a.tool.matches(&c.canonical) || a.tool.matches(&c.name);
    evaluate_subject(
        a,
        calls,
        &Subject {
            name: a.tool.display().to_owned(),
            is_of: &of_tool,
        },
    )
}

/// Evaluates a tool assertion about `subject`'s calls: (status, description, detail).
pub(super) fn evaluate_subject(
    a: &ToolAssertion,
    calls: &[ToolCall],
    subject: &Subject<'_>,
) -> Verdict {
    let description = describe(a, &subject.name);
    let scoped = in_scope(calls, a.scope);
    let of_tool: Vec<(usize, &ToolCall)> = scoped
        .iter()
        .copied()
        .filter(|(_, c)| (subject.is_of)(c))
        .collect();
    let matching: Vec<(usize, &ToolCall)> = of_tool
        .iter()
        .copied()
        .filter(|(_, c)| params_match(&a.params, c))
        .collect();

    let mut failures: Vec<String> = Vec::new();
    let tool = subject.name.as_str();

    if !a.called {
        if !matching.is_empty() {
            failures.push(format!(
                "{tool} was called {}{}:\n{}",
                times(matching.len() as u64),
                if a.params.is_empty() {
                    ""
                } else {
                    " with matching parameters"
                },
                list_calls(&matching)
            ));
        }
    } else {
        let n = matching.len() as u32;
        let (ok, expected) = match (a.call_count, a.min_calls, a.max_calls) {
            (Some(c), _, _) => (n == c, format!("exactly {}", times(c))),
            (None, None, None) => (n >= 1, "at least 1 time".to_owned()),
            (None, lo, hi) => (
                lo.is_none_or(|lo| n >= lo) && hi.is_none_or(|hi| n <= hi),
                bounds(lo, hi),
            ),
        };
        if !ok {
            failures.push(count_failure(
                a, tool, &expected, &scoped, &of_tool, &matching,
            ));
        }
    }

    if a.called {
        if let Some(other) = &a.called_after
            && let Some(msg) = order_failure(&matching, &scoped, other, true, tool)
        {
            failures.push(msg);
        }
        if let Some(other) = &a.called_before
            && let Some(msg) = order_failure(&matching, &scoped, other, false, tool)
        {
            failures.push(msg);
        }
        for (index, params) in &a.positional {
            if let Some(msg) = positional_failure(*index, params, &of_tool, tool) {
                failures.push(msg);
            }
        }
    }

    if failures.is_empty() {
        let detail = if matching.is_empty() {
            if of_tool.is_empty() {
                format!("no {tool} call")
            } else {
                format!(
                    "{tool} was called {}, none matching the parameters",
                    times(of_tool.len() as u64)
                )
            }
        } else {
            format!(
                "{} matching: {}",
                times(matching.len() as u64),
                positions(&matching)
            )
        };
        (AssertionStatus::Pass, description, Some(detail))
    } else {
        (
            AssertionStatus::Fail,
            description,
            Some(failures.join("\n")),
        )
    }
}

fn describe(a: &ToolAssertion, tool: &str) -> String {
    let mut s = if a.called {
        match (a.call_count, a.min_calls, a.max_calls) {
            (Some(n), _, _) => format!("{tool} called exactly {}", times(n)),
            (None, None, None) => format!("{tool} called"),
            (None, lo, hi) => format!("{tool} called {}", bounds(lo, hi)),
        }
    } else {
        format!("{tool} not called")
    };
    if !a.params.is_empty() {
        s.push_str(" with ");
        s.push_str(&describe_params(&a.params));
    }
    if let Some(b) = &a.called_after {
        s.push_str(&format!(", after {}", b.display()));
    }
    if let Some(b) = &a.called_before {
        s.push_str(&format!(", before {}", b.display()));
    }
    for (index, params) in &a.positional {
        let which = match index {
            CallIndex::Nth(n) => format!("call #{n}"),
            CallIndex::Last => "last call".into(),
        };
        s.push_str(&format!(", {which} with {}", describe_params(params)));
    }
    if a.scope == Scope::Main {
        s.push_str(" (main agent only)");
    }
    s
}

fn describe_params(params: &[ParamMatcher]) -> String {
    params
        .iter()
        .map(|p| format!("{} ~ {}", p.key, p.matcher.describe()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Looks up a parameter: the key itself, or a dotted path into objects and arrays.
fn lookup<'a>(input: &'a Value, key: &str) -> Option<&'a Value> {
    if let Some(v) = input.get(key) {
        return Some(v);
    }
    if !key.contains('.') {
        return None;
    }
    key.split('.').try_fold(input, |v, seg| match v {
        Value::Object(map) => map.get(seg),
        Value::Array(items) => seg.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// A parameter of a call: under its canonical key ([`ToolCall::params`]), else under the
/// agent's own key (so a test written against `cmd` still finds Codex's command).
fn param<'a>(call: &'a ToolCall, key: &str) -> Option<&'a Value> {
    lookup(call.params(), key).or_else(|| lookup(&call.input, key))
}

fn params_match(params: &[ParamMatcher], call: &ToolCall) -> bool {
    params
        .iter()
        .all(|p| param(call, &p.key).is_some_and(|v| p.matcher.matches(v)))
}

/// Why a call's parameters do not match: `file_path="/a.txt" does not match glob "*.env"`
/// (the value is left out when the call's one-line summary already shows it).
fn param_mismatches(params: &[ParamMatcher], call: &ToolCall) -> Vec<String> {
    let shown = super::main_field(call.params());
    params
        .iter()
        .filter_map(|p| match param(call, &p.key) {
            None => Some(format!("{} is missing", p.key)),
            Some(_) if Some(p.key.as_str()) == shown => {
                (!params_match(std::slice::from_ref(p), call))
                    .then(|| format!("{} does not match {}", p.key, p.matcher.describe()))
            }
            Some(v) if !p.matcher.matches(v) => Some(format!(
                "{}={} does not match {}",
                p.key,
                truncate(&v.to_string(), 80),
                p.matcher.describe()
            )),
            Some(_) => None,
        })
        .collect()
}

fn positions(calls: &[(usize, &ToolCall)]) -> String {
    calls
        .iter()
        .map(|(i, _)| format!("#{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn list_calls(calls: &[(usize, &ToolCall)]) -> String {
    let mut lines: Vec<String> = calls
        .iter()
        .take(MAX_LISTED)
        .map(|(i, c)| format!("  {}", describe_call(*i, c)))
        .collect();
    if calls.len() > MAX_LISTED {
        lines.push(format!("  … and {} more", calls.len() - MAX_LISTED));
    }
    lines.join("\n")
}

fn count_failure(
    a: &ToolAssertion,
    tool: &str,
    expected: &str,
    scoped: &[(usize, &ToolCall)],
    of_tool: &[(usize, &ToolCall)],
    matching: &[(usize, &ToolCall)],
) -> String {
    if of_tool.is_empty() {
        let seen = tool_counts(scoped);
        return if seen.is_empty() {
            format!("expected {tool} to be called {expected}; there were no tool calls at all")
        } else {
            format!(
                "expected {tool} to be called {expected}; it was never called. Calls made: {seen}"
            )
        };
    }
    if a.params.is_empty() || matching.len() == of_tool.len() {
        return format!(
            "expected {tool} to be called {expected}; it was called {}:\n{}",
            times(matching.len() as u64),
            list_calls(matching)
        );
    }
    let non_matching: Vec<String> = of_tool
        .iter()
        .filter(|(_, c)| !params_match(&a.params, c))
        .take(MAX_LISTED)
        .map(|(i, c)| {
            format!(
                "  {} — {}",
                describe_call(*i, c),
                param_mismatches(&a.params, c).join("; ")
            )
        })
        .collect();
    format!(
        "expected {expected} with matching parameters; {} of {} {tool} calls matched{}\n{}",
        matching.len(),
        of_tool.len(),
        if matching.is_empty() {
            String::new()
        } else {
            format!(" ({})", positions(matching))
        },
        non_matching.join("\n")
    )
}

/// `Bash ×3, Read ×1`.
fn tool_counts(calls: &[(usize, &ToolCall)]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for (_, c) in calls {
        match counts.iter_mut().find(|(n, _)| *n == c.canonical) {
            Some((_, k)) => *k += 1,
            None => counts.push((c.canonical.as_str(), 1)),
        }
    }
    counts
        .iter()
        .map(|(n, k)| format!("{n} ×{k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn order_failure(
    matching: &[(usize, &ToolCall)],
    scoped: &[(usize, &ToolCall)],
    other: &NameMatcher,
    after: bool,
    tool: &str,
) -> Option<String> {
    let relation = if after { "after" } else { "before" };
    let other_name = other.display();
    let first_other = scoped
        .iter()
        .find(|(_, c)| other.matches(&c.canonical) || other.matches(&c.name))
        .map(|(i, _)| *i);
    let Some(first_other) = first_other else {
        return Some(format!(
            "{tool} must be called {relation} {other_name}, but {other_name} was never called"
        ));
    };
    let (first_mine, _) = matching.first()?;
    let ok = if after {
        *first_mine > first_other
    } else {
        *first_mine < first_other
    };
    (!ok).then(|| {
        format!(
            "{tool} must be called {relation} {other_name}: the first {tool} call is #{first_mine}, the first {other_name} call is #{first_other}"
        )
    })
}

fn positional_failure(
    index: CallIndex,
    params: &[ParamMatcher],
    of_tool: &[(usize, &ToolCall)],
    tool: &str,
) -> Option<String> {
    let (which, call) = match index {
        CallIndex::Nth(n) => (format!("call #{n} of {tool}"), of_tool.get(n as usize - 1)),
        CallIndex::Last => (format!("the last {tool} call"), of_tool.last()),
    };
    let Some((position, call)) = call else {
        return Some(format!(
            "{which} was checked, but {tool} was called {}",
            times(of_tool.len() as u64)
        ));
    };
    let mismatches = param_mismatches(params, call);
    (!mismatches.is_empty()).then(|| {
        format!(
            "{which} ({}) does not match: {}",
            describe_call(*position, call),
            mismatches.join("; ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::pattern::ValueMatcher;
    use serde_json::json;

    fn call(id: &str, name: &str, input: Value) -> ToolCall {
        ToolCall::for_test(id, name, input)
    }

    fn tool(name: &str) -> ToolAssertion {
        ToolAssertion {
            tool: NameMatcher::new(name).unwrap(),
            called: true,
            params: vec![],
            call_count: None,
            min_calls: None,
            max_calls: None,
            called_after: None,
            called_before: None,
            positional: vec![],
            scope: Scope::All,
        }
    }

    fn param(key: &str, pattern: &str) -> ParamMatcher {
        ParamMatcher {
            key: key.into(),
            matcher: ValueMatcher::bare(pattern).unwrap(),
        }
    }

    fn calls() -> Vec<ToolCall> {
        vec![
            call("1", "Read", json!({"file_path": "/home/u/p/README.md"})),
            call("2", "Bash", json!({"command": "ls -la"})),
            call("3", "Read", json!({"file_path": "/home/u/p/.env"})),
            call(
                "4",
                "Bash",
                json!({"command": "python3 scripts/check_status.py --all"}),
            ),
        ]
    }

    #[test]
    fn env_guardrail_fails_when_dotenv_was_read() {
        let mut a = tool("Read");
        a.called = false;
        a.params = vec![param("file_path", "*.env")];
        let (status, desc, detail) = evaluate(&a, &calls());
        assert_eq!(status, AssertionStatus::Fail);
        assert_eq!(desc, "Read not called with file_path ~ glob \"*.env\"");
        let detail = detail.unwrap();
        assert!(
            detail.contains("#3 Read file_path=\"/home/u/p/.env\""),
            "{detail}"
        );
    }

    #[test]
    fn env_guardrail_passes_when_only_example_was_read() {
        let mut a = tool("Read");
        a.called = false;
        a.params = vec![param("file_path", "*.env")];
        let c = vec![call("1", "Read", json!({"file_path": "/p/.env.example"}))];
        assert_eq!(evaluate(&a, &c).0, AssertionStatus::Pass);
    }

    #[test]
    fn called_with_params_reports_non_matching_calls() {
        let mut a = tool("Bash");
        a.params = vec![param("command", "cargo test*")];
        let (status, _, detail) = evaluate(&a, &calls());
        assert_eq!(status, AssertionStatus::Fail);
        let detail = detail.unwrap();
        assert!(detail.contains("0 of 2 Bash calls matched"), "{detail}");
        assert!(
            detail.contains(
                "#2 Bash command=\"ls -la\" — command does not match glob \"cargo test*\""
            ),
            "{detail}"
        );
    }

    #[test]
    fn never_called_lists_what_was_called() {
        let (status, _, detail) = evaluate(&tool("Write"), &calls());
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("Calls made: Read ×2, Bash ×2"));
    }

    #[test]
    fn counts_and_bounds() {
        let mut a = tool("Read");
        a.call_count = Some(2);
        assert_eq!(evaluate(&a, &calls()).0, AssertionStatus::Pass);
        a.call_count = Some(1);
        let (status, _, detail) = evaluate(&a, &calls());
        assert_eq!(status, AssertionStatus::Fail);
        assert!(
            detail
                .unwrap()
                .contains("expected Read to be called exactly 1 time; it was called 2 times")
        );
        let mut b = tool("Bash");
        b.min_calls = Some(1);
        b.max_calls = Some(1);
        assert_eq!(evaluate(&b, &calls()).0, AssertionStatus::Fail);
        b.max_calls = Some(2);
        assert_eq!(evaluate(&b, &calls()).0, AssertionStatus::Pass);
    }

    #[test]
    fn zero_calls_expected() {
        let mut a = tool("Write");
        a.called = false;
        assert_eq!(evaluate(&a, &calls()).0, AssertionStatus::Pass);
        let mut b = tool("Bash");
        b.called = false;
        assert_eq!(evaluate(&b, &calls()).0, AssertionStatus::Fail);
    }

    #[test]
    fn ordering() {
        let mut a = tool("Bash");
        a.called_after = Some(NameMatcher::new("Read").unwrap());
        assert_eq!(evaluate(&a, &calls()).0, AssertionStatus::Pass);
        let mut b = tool("Read");
        b.called_after = Some(NameMatcher::new("Bash").unwrap());
        let (status, _, detail) = evaluate(&b, &calls());
        assert_eq!(status, AssertionStatus::Fail);
        assert!(
            detail
                .unwrap()
                .contains("the first Read call is #1, the first Bash call is #2")
        );
        let mut c = tool("Read");
        c.called_before = Some(NameMatcher::new("Bash").unwrap());
        assert_eq!(evaluate(&c, &calls()).0, AssertionStatus::Pass);
        let mut d = tool("Read");
        d.called_before = Some(NameMatcher::new("Write").unwrap());
        let (status, _, detail) = evaluate(&d, &calls());
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("Write was never called"));
    }

    #[test]
    fn positional_params() {
        let mut a = tool("Bash");
        a.positional = vec![
            (CallIndex::Nth(1), vec![param("command", "ls*")]),
            (
                CallIndex::Last,
                vec![param("command", "python3*check_status.py*")],
            ),
        ];
        assert_eq!(evaluate(&a, &calls()).0, AssertionStatus::Pass);
        a.positional = vec![(CallIndex::Nth(2), vec![param("command", "ls*")])];
        let (status, _, detail) = evaluate(&a, &calls());
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("call #2 of Bash"));
        a.positional = vec![(CallIndex::Nth(3), vec![param("command", "ls*")])];
        assert!(
            evaluate(&a, &calls())
                .2
                .unwrap()
                .contains("Bash was called 2 times")
        );
    }

    #[test]
    fn subagent_calls_count_unless_scope_main() {
        let mut c = calls();
        c.push(ToolCall {
            agent: "toolu_task".into(),
            ..call("5", "Write", json!({"file_path": "x"}))
        });
        let mut a = tool("Write");
        a.called = false;
        let (status, _, detail) = evaluate(&a, &c);
        assert_eq!(
            status,
            AssertionStatus::Fail,
            "delegating must not evade the guardrail"
        );
        assert!(detail.unwrap().contains("[subagent toolu_task]"));
        a.scope = Scope::Main;
        assert_eq!(evaluate(&a, &c).0, AssertionStatus::Pass);
    }

    #[test]
    fn aliases_and_case() {
        let a = tool("read_file");
        assert_eq!(evaluate(&a, &calls()).0, AssertionStatus::Pass);
        let c = vec![call("1", "run_shell_command", json!({"command": "ls"}))];
        assert_eq!(evaluate(&tool("bash"), &c).0, AssertionStatus::Pass);
    }

    #[test]
    fn dotted_param_paths() {
        let c = vec![call(
            "1",
            "MultiEdit",
            json!({"edits": [{"old_string": "a"}, {"old_string": "b"}]}),
        )];
        let mut a = tool("MultiEdit");
        a.params = vec![param("edits.1.old_string", "b")];
        assert_eq!(evaluate(&a, &c).0, AssertionStatus::Pass);
        a.params = vec![param("edits.2.old_string", "b")];
        assert_eq!(evaluate(&a, &c).0, AssertionStatus::Fail);
    }
}
