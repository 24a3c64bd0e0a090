//! `tool:` assertions: was a tool called, how often, with which parameters, in which order.
//!
//! Semantics (also in `docs/yaml-api.md`):
//! - A call *matches* when its tool name matches and every `params` entry matches.
//! - `called: true` (default): at least one matching call, or exactly `call_count`, or
//!   between `min_calls` and `max_calls`. `called: false`: no matching call.
//! - A guardrail is never narrower than any reading of a parameter: `called: false` and
//!   upper bounds (`max_calls`, `call_count`) count calls matching by any reading, the
//!   original aptitude's regex reading included; `called: true` and lower bounds count
//!   those matching by the author's reading ([`crate::spec::pattern`]).
//! - `called_after: B`: some matching call comes after the first call of B.
//!   `called_before: B`: some matching call comes before the last call of B.
//!   Both fail when B was never called; the detail names the calls compared.
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

/// Why an assertion on an MCP tool can not be decided: a `params:` key (or a positional
/// one) that the tool's input schema, as the run's requests offered it to the model
/// ([`crate::transcript::Transcript::mcp_params`]: the server's `tools/list`), does not list.
/// Such a key could never match a call, so `called: false` on it would pass forever: the
/// assertion is `error`. `None` when the tool is no exact MCP name, its schema was not
/// seen, or every key is in it.
pub(super) fn unknown_mcp_params(
    a: &ToolAssertion,
    mcp_params: Option<&std::collections::BTreeMap<String, Vec<String>>>,
) -> Option<String> {
    let NameMatcher::Exact(name) = &a.tool else {
        return None;
    };
    let known = mcp_params?
        .iter()
        .find(|(tool, _)| tool.eq_ignore_ascii_case(name))
        .map(|(_, params)| params)?;
    let mut unknown: Vec<&str> = a
        .params
        .iter()
        .chain(a.positional.iter().flat_map(|(_, p)| p))
        .map(|p| crate::spec::tools::params::top_key(&p.key))
        .filter(|k| !known.iter().any(|p| p == k))
        .collect();
    unknown.dedup();
    if unknown.is_empty() {
        return None;
    }
    let list = |items: &mut dyn Iterator<Item = &str>| {
        items
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(format!(
        "the server's `tools/list` gives `{name}` no parameter {} (its parameters: {}), so no call can match; fix the key in the test",
        list(&mut unknown.iter().copied()),
        list(&mut known.iter().map(String::as_str)),
    ))
}

/// The calls of a tool assertion's subject, and those of them that match its parameters
/// by each reading (see [`crate::spec::pattern`]): `matching` by the author's reading,
/// `guarded` by any reading (a superset: what a guardrail counts).
struct Calls<'a> {
    scoped: Vec<(usize, &'a ToolCall)>,
    of_tool: Vec<(usize, &'a ToolCall)>,
    matching: Vec<(usize, &'a ToolCall)>,
    guarded: Vec<(usize, &'a ToolCall)>,
}

impl<'a> Calls<'a> {
    fn of(a: &ToolAssertion, calls: &'a [ToolCall], subject: &Subject<'_>) -> Self {
        let scoped = in_scope(calls, a.scope);
        let of_tool: Vec<(usize, &ToolCall)> = scoped
            .iter()
            .copied()
            .filter(|(_, c)| (subject.is_of)(c))
            .collect();
        let pick = |guard: bool| -> Vec<(usize, &'a ToolCall)> {
            of_tool
                .iter()
                .copied()
                .filter(|(_, c)| params_match(&a.params, c, guard))
                .collect()
        };
        let (matching, guarded) = (pick(false), pick(true));
        Calls {
            scoped,
            of_tool,
            matching,
            guarded,
        }
    }
}

/// Evaluates a tool assertion about `subject`'s calls: (status, description, detail).
///
/// `called: true` and lower bounds count the calls matching by the author's reading;
/// `called: false` and upper bounds count those matching by any reading, so that a
/// guardrail is never narrower than a reading of the original aptitude.
pub(super) fn evaluate_subject(
    a: &ToolAssertion,
    calls: &[ToolCall],
    subject: &Subject<'_>,
) -> Verdict {
    let description = describe(a, &subject.name);
    let set = Calls::of(a, calls, subject);
    let tool = subject.name.as_str();
    let mut failures: Vec<String> = Vec::new();

    if !a.called {
        if !set.guarded.is_empty() {
            failures.push(format!(
                "{tool} was called {}{}:\n{}{}",
                times(set.guarded.len() as u64),
                if a.params.is_empty() {
                    ""
                } else {
                    " with matching parameters"
                },
                list_calls(&set.guarded),
                guard_note(a, &set)
            ));
        }
    } else {
        if let Some(msg) = count_failure(a, tool, &set) {
            failures.push(msg);
        }
        for (other, after) in [(&a.called_after, true), (&a.called_before, false)] {
            if let Some(other) = other
                && let Some(msg) = order_failure(&set.matching, &set.scoped, other, after, tool)
            {
                failures.push(msg);
            }
        }
        for (index, params) in &a.positional {
            if let Some(msg) = positional_failure(*index, params, &set.of_tool, tool) {
                failures.push(msg);
            }
        }
    }

    if failures.is_empty() {
        (
            AssertionStatus::Pass,
            description,
            Some(pass_detail(a, tool, &set)),
        )
    } else {
        (
            AssertionStatus::Fail,
            description,
            Some(failures.join("\n")),
        )
    }
}

/// What a passing tool assertion saw: the matching calls and, for `called_after` /
/// `called_before`, the calls compared.
fn pass_detail(a: &ToolAssertion, tool: &str, set: &Calls<'_>) -> String {
    let mut detail = if set.matching.is_empty() {
        if set.of_tool.is_empty() {
            format!("no {tool} call")
        } else {
            format!(
                "{tool} was called {}, none matching the parameters",
                times(set.of_tool.len() as u64)
            )
        }
    } else {
        format!(
            "{} matching: {}",
            times(set.matching.len() as u64),
            positions(&set.matching)
        )
    };
    for (other, after) in [(&a.called_after, true), (&a.called_before, false)] {
        if let Some(other) = other
            && let Some(order) = Order::of(&set.matching, &set.scoped, other, after)
            && let Some(mine) = order.witness
        {
            detail.push_str(&format!(
                "; #{mine} comes {} the {} {} call (#{})",
                order.relation(),
                order.which(),
                other.display(),
                order.other
            ));
        }
    }
    detail
}

/// Why a guardrail found calls the author's reading alone would not: the parameters read
/// as the original aptitude's regexes (empty when there are none).
fn guard_note(a: &ToolAssertion, set: &Calls<'_>) -> String {
    if set.guarded.len() == set.matching.len() {
        return String::new();
    }
    let regexes: Vec<String> = a
        .params
        .iter()
        .filter(|p| p.matcher.has_guard_reading())
        .map(|p| format!("{} {}", p.key, p.matcher.describe()))
        .collect();
    format!(
        "\n  ({} of them match only when {} is read as a regex, as the original aptitude read it; a guardrail takes every reading)",
        set.guarded.len() - set.matching.len(),
        regexes.join(", ")
    )
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

pub(super) fn describe_params(params: &[ParamMatcher]) -> String {
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

/// Whether every parameter matches: by the author's reading, or (`guard`) by any reading.
fn params_match(params: &[ParamMatcher], call: &ToolCall, guard: bool) -> bool {
    params
        .iter()
        .all(|p| param(call, &p.key).is_some_and(|v| value_matches(p, call, v, guard)))
}

/// Whether one parameter's value matches. The `skill` of a `Skill` call also matches when
/// written as the slash command that invokes it (`/cloud-status` for `cloud-status`), as
/// `skill:` assertions read it: a guardrail on `/deploy` must find `deploy`.
fn value_matches(p: &ParamMatcher, call: &ToolCall, v: &Value, guard: bool) -> bool {
    let one = |v: &Value| {
        if guard {
            p.matcher.matches_guard(v)
        } else {
            p.matcher.matches(v)
        }
    };
    one(v)
        || (p.key == "skill"
            && call.canonical == crate::spec::tools::SKILL_TOOL
            && v.as_str()
                .is_some_and(|name| one(&Value::String(format!("/{name}")))))
}

/// Why a call's parameters do not match: `file_path="/a.txt" does not match glob "*.env"`
/// (the value is left out when the call's one-line summary already shows it).
pub(super) fn param_mismatches(params: &[ParamMatcher], call: &ToolCall) -> Vec<String> {
    let shown = super::main_field(call.params());
    params
        .iter()
        .filter_map(|p| match param(call, &p.key) {
            None => Some(missing(&p.key, call)),
            Some(_) if Some(p.key.as_str()) == shown => {
                (!params_match(std::slice::from_ref(p), call, false))
                    .then(|| format!("{} does not match {}", p.key, p.matcher.describe()))
            }
            Some(v) if !value_matches(p, call, v, false) => Some(format!(
                "{}={} does not match {}",
                p.key,
                truncate(&v.to_string(), 80),
                p.matcher.describe()
            )),
            Some(_) => None,
        })
        .collect()
}

/// `content is missing (the call has command, description)`: a key the call does not have,
/// with the keys it has (a key written for another tool is the usual slip).
fn missing(key: &str, call: &ToolCall) -> String {
    match call.params().as_object() {
        Some(map) if !map.is_empty() => format!(
            "{key} is missing (the call has {})",
            map.keys()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!("{key} is missing"),
    }
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

/// Why a `called: true` assertion's counts fail, if they do: lower bounds count the calls
/// matching by the author's reading, upper bounds those matching by any reading.
fn count_failure(a: &ToolAssertion, tool: &str, set: &Calls<'_>) -> Option<String> {
    let (lower, upper) = (set.matching.len() as u32, set.guarded.len() as u32);
    let (ok, expected) = match (a.call_count, a.min_calls, a.max_calls) {
        (Some(c), _, _) => (lower >= c && upper <= c, format!("exactly {}", times(c))),
        (None, None, None) => (lower >= 1, "at least 1 time".to_owned()),
        (None, lo, hi) => (
            lo.is_none_or(|lo| lower >= lo) && hi.is_none_or(|hi| upper <= hi),
            bounds(lo, hi),
        ),
    };
    if ok {
        return None;
    }
    if set.of_tool.is_empty() {
        let seen = tool_counts(&set.scoped);
        return Some(if seen.is_empty() {
            format!("expected {tool} to be called {expected}; there were no tool calls at all")
        } else {
            format!(
                "expected {tool} to be called {expected}; it was never called. Calls made: {seen}"
            )
        });
    }
    let too_many = a
        .call_count
        .or(a.max_calls)
        .is_some_and(|hi| upper > hi && lower <= hi);
    if too_many {
        return Some(format!(
            "expected {tool} to be called {expected}; {} calls match:\n{}{}",
            upper,
            list_calls(&set.guarded),
            guard_note(a, set)
        ));
    }
    if a.params.is_empty() || set.matching.len() == set.of_tool.len() {
        return Some(format!(
            "expected {tool} to be called {expected}; it was called {}:\n{}",
            times(lower),
            list_calls(&set.matching)
        ));
    }
    let non_matching: Vec<String> = set
        .of_tool
        .iter()
        .filter(|(_, c)| !params_match(&a.params, c, false))
        .take(MAX_LISTED)
        .map(|(i, c)| {
            format!(
                "  {} — {}",
                describe_call(*i, c),
                param_mismatches(&a.params, c).join("; ")
            )
        })
        .collect();
    Some(format!(
        "expected {expected} with matching parameters; {} of {} {tool} calls matched{}\n{}",
        set.matching.len(),
        set.of_tool.len(),
        if set.matching.is_empty() {
            String::new()
        } else {
            format!(" ({})", positions(&set.matching))
        },
        non_matching.join("\n")
    ))
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

/// A `called_after` / `called_before` check, read as an author means it (and as the
/// original aptitude did): `called_after: B` passes when **some** matching call comes
/// after the **first** call of B; `called_before: B` when some matching call comes before
/// the **last** call of B.
struct Order {
    /// `called_after` (true) or `called_before`.
    after: bool,
    /// The position of B's call compared with: its first (after) or last (before).
    other: usize,
    /// A matching call on the right side of it, when there is one.
    witness: Option<usize>,
}

impl Order {
    /// `None` when B was never called.
    fn of(
        matching: &[(usize, &ToolCall)],
        scoped: &[(usize, &ToolCall)],
        other: &NameMatcher,
        after: bool,
    ) -> Option<Order> {
        let mut of_other = scoped
            .iter()
            .filter(|(_, c)| other.matches(&c.canonical) || other.matches(&c.name))
            .map(|(i, _)| *i);
        let other = if after {
            of_other.next()?
        } else {
            of_other.next_back()?
        };
        let witness = if after {
            matching.iter().map(|(i, _)| *i).find(|i| *i > other)
        } else {
            matching.iter().map(|(i, _)| *i).find(|i| *i < other)
        };
        Some(Order {
            after,
            other,
            witness,
        })
    }

    fn relation(&self) -> &'static str {
        if self.after { "after" } else { "before" }
    }

    fn which(&self) -> &'static str {
        if self.after { "first" } else { "last" }
    }
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
    let Some(order) = Order::of(matching, scoped, other, after) else {
        return Some(format!(
            "{tool} must be called {relation} {other_name}, but {other_name} was never called"
        ));
    };
    // No matching call at all is the count's failure, already reported.
    if matching.is_empty() || order.witness.is_some() {
        return None;
    }
    Some(format!(
        "{tool} must be called {relation} {other_name}: no matching {tool} call comes {relation} the {} {other_name} call (#{}); matching {tool} calls: {}",
        order.which(),
        order.other,
        positions(matching)
    ))
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

    /// A key the MCP tool's schema (as offered to the model) lacks makes the assertion
    /// undecidable; keys it has, tools whose schema was not seen, and runs without a gateway
    /// are left to the ordinary verdict.
    #[test]
    fn an_mcp_key_the_schema_lacks_is_reported() {
        let shown = std::collections::BTreeMap::from([(
            "mcp__gh__create_issue".to_owned(),
            vec!["title".to_owned(), "body".to_owned()],
        )]);
        let mut a = tool("mcp__gh__create_issue");
        a.called = false;
        a.params = vec![param("titel", "*x*")];
        let why = unknown_mcp_params(&a, Some(&shown)).unwrap();
        assert!(why.contains("no parameter `titel`"), "{why}");
        assert!(why.contains("`title`, `body`"), "{why}");
        a.params = vec![param("title", "*x*")];
        a.positional = vec![(CallIndex::Last, vec![param("bdy", "*")])];
        assert!(
            unknown_mcp_params(&a, Some(&shown))
                .unwrap()
                .contains("`bdy`")
        );
        a.positional.clear();
        assert_eq!(unknown_mcp_params(&a, Some(&shown)), None);
        a.params = vec![param("titel", "*x*")];
        assert_eq!(unknown_mcp_params(&a, None), None, "no gateway: not seen");
        let other = tool("mcp__gh__close_issue");
        assert_eq!(unknown_mcp_params(&other, Some(&shown)), None);
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
        let (status, _, detail) = evaluate(&a, &calls());
        assert_eq!(status, AssertionStatus::Pass);
        assert!(
            detail
                .unwrap()
                .contains("#2 comes after the first Read call (#1)")
        );
        // Some Read (#3) comes after the first Bash (#2): the author's "read after running".
        let mut b = tool("Read");
        b.called_after = Some(NameMatcher::new("Bash").unwrap());
        assert_eq!(evaluate(&b, &calls()).0, AssertionStatus::Pass);
        // No README read after the first Bash.
        b.params = vec![param("file_path", "README.md")];
        let (status, _, detail) = evaluate(&b, &calls());
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains(
            "no matching Read call comes after the first Bash call (#2); matching Read calls: #1"
        ));
        let mut c = tool("Read");
        c.called_before = Some(NameMatcher::new("Bash").unwrap());
        assert_eq!(evaluate(&c, &calls()).0, AssertionStatus::Pass);
        let mut d = tool("Read");
        d.called_before = Some(NameMatcher::new("Write").unwrap());
        let (status, _, detail) = evaluate(&d, &calls());
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("Write was never called"));
    }

    /// The original aptitude's "any after any" with one difference: a call is not after
    /// itself (`Read called_after Read` needs two Reads).
    #[test]
    fn order_is_some_matching_call_against_the_first_or_last_other_call() {
        let c = vec![
            call("1", "Write", json!({"file_path": "/p/secret.txt"})),
            call("2", "Read", json!({"file_path": "/p/a.txt"})),
            call("3", "Write", json!({"file_path": "/p/ok.txt"})),
        ];
        let order = |t: &str, after: Option<&str>, before: Option<&str>| {
            let mut a = tool(t);
            a.called_after = after.map(|b| NameMatcher::new(b).unwrap());
            a.called_before = before.map(|b| NameMatcher::new(b).unwrap());
            evaluate(&a, &c).0
        };
        assert_eq!(order("Write", Some("Read"), None), AssertionStatus::Pass);
        assert_eq!(order("Write", None, Some("Read")), AssertionStatus::Pass);
        assert_eq!(order("Read", Some("Write"), None), AssertionStatus::Pass);
        assert_eq!(order("Read", None, Some("Write")), AssertionStatus::Pass);
        assert_eq!(order("Read", Some("Read"), None), AssertionStatus::Fail);
        let mut secret = tool("Write");
        secret.params = vec![param("file_path", "secret.txt")];
        secret.called_after = Some(NameMatcher::new("Read").unwrap());
        let (status, _, detail) = evaluate(&secret, &c);
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("the first Read call (#2)"));
    }

    /// A guardrail takes every reading of a parameter; `called: true` only the author's.
    #[test]
    fn guardrails_count_every_reading_called_true_only_the_authors() {
        let c = vec![call(
            "1",
            "Bash",
            json!({"command": "git push origin main"}),
        )];
        let mut guard = tool("Bash");
        guard.called = false;
        guard.params = vec![param("command", "git push|git commit")];
        let (status, _, detail) = evaluate(&guard, &c);
        assert_eq!(status, AssertionStatus::Fail);
        assert!(detail.unwrap().contains("read as a regex"));
        let mut positive = tool("Bash");
        positive.params = vec![param("command", "git push|git commit")];
        assert_eq!(evaluate(&positive, &c).0, AssertionStatus::Fail);
        let mut at_most = tool("Bash");
        at_most.params = vec![param("command", "git push|git commit")];
        at_most.max_calls = Some(0);
        at_most.called = false;
        assert_eq!(evaluate(&at_most, &c).0, AssertionStatus::Fail);
        let mut exactly = tool("Bash");
        exactly.params = vec![param("command", "git push")];
        exactly.call_count = Some(1);
        assert_eq!(evaluate(&exactly, &c).0, AssertionStatus::Pass);
    }

    /// `tool: Skill` with `skill: "/deploy"` (the slash command) finds a `deploy` call: a
    /// guardrail written so must not pass while the skill ran.
    #[test]
    fn skill_parameter_matches_its_slash_command() {
        let c = vec![call(
            "1",
            "Skill",
            json!({"skill": "cloud-status", "args": "aws"}),
        )];
        let mut guard = tool("Skill");
        guard.called = false;
        guard.params = vec![param("skill", "/cloud-status")];
        assert_eq!(evaluate(&guard, &c).0, AssertionStatus::Fail);
        let mut other = tool("Skill");
        other.params = vec![param("skill", "/deploy")];
        assert_eq!(evaluate(&other, &c).0, AssertionStatus::Fail);
        let mut slip = tool("Skill");
        slip.params = vec![param("content", "aws")];
        let detail = evaluate(&slip, &c).2.unwrap();
        assert!(
            detail.contains("content is missing (the call has args, skill)"),
            "{detail}"
        );
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
