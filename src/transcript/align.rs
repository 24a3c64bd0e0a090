//! Two runs' tool calls side by side: where they part, and what each did there.
//!
//! Calls are compared by their [`CallKey`]: the canonical tool name and the canonical
//! parameters, with what differs between two runs of one test for no reason of the
//! agent's taken out — the workspace copy's temporary directory
//! (`/tmp/aptitude-ws-XXXX/workspace/src/a.py` is `src/a.py`) and the cosmetic keys
//! [`COSMETIC_KEYS`] (a shell call's `description`, its `timeout`). The sequences compared
//! are each run's calls in trajectory order ([`trajectory_order`]): the main agent's, each
//! followed by those of the subagent it started, so that subagents running side by side
//! can not make two identical runs look different.
//!
//! The first divergence is the first position where the two sequences differ (a common
//! prefix walk, as `difftastic` and `git diff` show the first change and its context);
//! [`Alignment`] counts the rest with a Myers diff of the keys (`similar`).

use std::collections::HashMap;
use std::sync::LazyLock;

use super::{ToolCall, Transcript};

/// Parameters that do not change what a call does: a shell call's `description` (Claude
/// Code's Bash), `timeout`, an agent's `explanation` of its call.
pub const COSMETIC_KEYS: &[&str] = &["description", "timeout", "explanation"];

/// The workspace copy's directory in a path (`…/aptitude-ws-Ab12/workspace/`).
static WORKSPACE_DIR: LazyLock<regex::Regex> = LazyLock::new(|| {
    #[expect(
        clippy::expect_used,
        reason = "a constant pattern, compiled in every test run"
    )]
    regex::Regex::new(r#"(?:/[^/"\s']+)*/aptitude-ws-[^/"\s']+/workspace(?:/|\b)"#)
        .expect("a valid pattern")
});

/// `text` with the workspace copy's directory taken out of every path in it.
pub fn without_workspace_dir(text: &str) -> std::borrow::Cow<'_, str> {
    WORKSPACE_DIR.replace_all(text, "")
}

/// What makes two calls the same call: canonical name and parameters (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallKey(String);

impl CallKey {
    /// The key of `call`.
    pub fn of(call: &ToolCall) -> CallKey {
        let params = match call.params() {
            serde_json::Value::Object(map) => {
                let kept: serde_json::Map<String, serde_json::Value> = map
                    .iter()
                    .filter(|(k, _)| !COSMETIC_KEYS.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                serde_json::Value::Object(kept).to_string()
            }
            other => other.to_string(),
        };
        CallKey(format!(
            "{}\u{0}{}",
            call.canonical,
            without_workspace_dir(&params)
        ))
    }
}

/// The indices of `t`'s calls in trajectory order: each main-agent call followed by the
/// calls of the subagent it started (Claude Code names a subagent by its `Task` call's
/// id), then the calls of subagents whose starting call is unknown, each agent's in order.
pub fn trajectory_order(t: &Transcript) -> Vec<usize> {
    let mut by_agent: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, c) in t.tool_calls.iter().enumerate() {
        by_agent.entry(c.agent.as_str()).or_default().push(i);
    }
    let mut out = Vec::with_capacity(t.tool_calls.len());
    let mut seen = vec![false; t.tool_calls.len()];
    fn visit(
        agent: &str,
        t: &Transcript,
        by_agent: &HashMap<&str, Vec<usize>>,
        seen: &mut [bool],
        out: &mut Vec<usize>,
        depth: usize,
    ) {
        for &i in by_agent.get(agent).map_or(&[][..], Vec::as_slice) {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            out.push(i);
            let id = t.tool_calls[i].id.as_str();
            if depth < 8 && !id.is_empty() && id != agent {
                visit(id, t, by_agent, seen, out, depth + 1);
            }
        }
    }
    visit(super::MAIN_AGENT, t, &by_agent, &mut seen, &mut out, 0);
    for (i, c) in t.tool_calls.iter().enumerate() {
        if !seen[i] {
            visit(&c.agent, t, &by_agent, &mut seen, &mut out, 0);
        }
    }
    out
}

/// What a call did, for a sentence: ``ran `pytest -q` ``, `called Edit src/app.py`,
/// `called mcp__github__create_issue title="x"`; `(blocked)` when the agent's guard
/// refused it.
pub fn describe(call: &ToolCall) -> String {
    let mut s = match call.command() {
        Some(cmd) if call.canonical == crate::spec::tools::SHELL_TOOL => {
            format!("ran `{}`", short(&cmd, 60).replace('`', "'"))
        }
        _ => format!("called {}", target(call)),
    };
    if call.blocked.is_some() {
        s.push_str(" (blocked)");
    }
    s
}

/// A call as a noun: `Edit src/app.py`, `` `pytest -q` `` for a shell call.
pub fn target(call: &ToolCall) -> String {
    if call.canonical == crate::spec::tools::SHELL_TOOL
        && let Some(cmd) = call.command()
    {
        return format!("`{}`", short(&cmd, 60).replace('`', "'"));
    }
    let params = call.params();
    let main = crate::shared::text::main_field(params).and_then(|k| params.get(k));
    match main {
        Some(serde_json::Value::String(v)) => format!("{} {}", call.canonical, short(v, 60)),
        Some(other) => format!("{} {}", call.canonical, short(&other.to_string(), 60)),
        None => call.canonical.clone(),
    }
}

/// A call's result in a few words: `exit 0`, `error · exit 2`, `error`, `ok`, `blocked`,
/// `no result`.
pub fn result_word(call: &ToolCall) -> String {
    if call.blocked.is_some() {
        return "blocked".into();
    }
    match (&call.output, call.is_error, call.exit_code) {
        (None, _, _) => "no result".into(),
        (Some(_), true, Some(code)) => format!("error · exit {code}"),
        (Some(_), true, None) => "error".into(),
        (Some(_), false, Some(code)) => format!("exit {code}"),
        (Some(_), false, None) => "ok".into(),
    }
}

/// `text` on one line, the workspace directory taken out, cut at `max` characters.
fn short(text: &str, max: usize) -> String {
    crate::shared::text::truncate(without_workspace_dir(text).trim(), max)
}

/// How two runs' calls differ first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DivergenceKind {
    /// A different call at `index`, or one run stopped there.
    Call,
    /// The same calls, but the call at `index` had another result (`exit 0` → `exit 1`).
    Result,
}

/// Where two runs part: `index` in their trajectory orders (0-based), the calls each made
/// there (indices into its `tool_calls`; `None`: it stopped), and the last call they share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Divergence {
    /// What differs.
    pub kind: DivergenceKind,
    /// Calls both made, in the same order, before it.
    pub index: usize,
    /// The base's call there (an index into its `tool_calls`); `None` when it stopped.
    pub base: Option<usize>,
    /// The head's call there; `None` when it stopped.
    pub head: Option<usize>,
    /// The last call both made before it (an index into the base's `tool_calls`).
    pub after: Option<usize>,
}

/// Counts over two runs' calls, aligned as a diff: in both, only in the base, only in the
/// head (`git diff --stat` of a trajectory).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Alignment {
    /// Calls of the base.
    pub base: usize,
    /// Calls of the head.
    pub head: usize,
    /// Calls matched in both.
    pub common: usize,
}

/// The most calls of one run aligned by [`align`]; past it the diff is of the first ones.
pub const MAX_ALIGNED: usize = 20_000;

/// The first point where `head`'s calls part from `base`'s (see the module docs): the
/// first call both made alike but with another result, else the first position where
/// their calls differ or one stopped; and the counts of the whole alignment. `None`: the
/// same calls with the same results.
pub fn align(base: &Transcript, head: &Transcript) -> (Option<Divergence>, Alignment) {
    let (b, h) = (trajectory_order(base), trajectory_order(head));
    let bk: Vec<CallKey> = b
        .iter()
        .take(MAX_ALIGNED)
        .map(|&i| CallKey::of(&base.tool_calls[i]))
        .collect();
    let hk: Vec<CallKey> = h
        .iter()
        .take(MAX_ALIGNED)
        .map(|&i| CallKey::of(&head.tool_calls[i]))
        .collect();
    let common = similar::capture_diff_slices(similar::Algorithm::Myers, &bk, &hk)
        .iter()
        .filter_map(|op| match op {
            similar::DiffOp::Equal { len, .. } => Some(*len),
            _ => None,
        })
        .sum();
    let stats = Alignment {
        base: b.len(),
        head: h.len(),
        common,
    };
    let prefix = bk.iter().zip(&hk).take_while(|(x, y)| x == y).count();
    // A call both made with another result parts them first (`ruff check .` exited 0 in
    // one run, 1 in the other, before the other ran `ruff check --fix .`).
    let result_differs =
        b.iter().zip(&h).take(prefix).position(|(&x, &y)| {
            result_word(&base.tool_calls[x]) != result_word(&head.tool_calls[y])
        });
    let found = match result_differs {
        Some(index) => Some(Divergence {
            kind: DivergenceKind::Result,
            index,
            base: Some(b[index]),
            head: Some(h[index]),
            after: index.checked_sub(1).map(|i| b[i]),
        }),
        None => (prefix < b.len().max(h.len())).then(|| Divergence {
            kind: DivergenceKind::Call,
            index: prefix,
            base: b.get(prefix).copied(),
            head: h.get(prefix).copied(),
            after: prefix.checked_sub(1).map(|i| b[i]),
        }),
    };
    (found, stats)
}

/// The divergence in one sentence: ``base ran `pytest -q` after Edit src/app.py; head
/// stopped after Edit src/app.py``.
pub fn sentence(base: &Transcript, head: &Transcript, d: &Divergence) -> String {
    fn call(t: &Transcript, i: Option<usize>) -> Option<&ToolCall> {
        i.and_then(|i| t.tool_calls.get(i))
    }
    let (b, h) = (call(base, d.base), call(head, d.head));
    let after = call(base, d.after).map(target);
    if d.kind == DivergenceKind::Result
        && let (Some(b), Some(h)) = (b, h)
    {
        let after = after.map(|t| format!(" after {t}")).unwrap_or_default();
        return format!(
            "both ran {}{after}: {} in base, {} in head",
            target(b),
            result_word(b),
            result_word(h)
        );
    }
    match (b, h, after) {
        (Some(b), Some(h), Some(t)) => {
            format!(
                "base {} after {t}; head {} instead",
                describe(b),
                describe(h)
            )
        }
        (Some(b), Some(h), None) => {
            format!("base first {}; head first {}", describe(b), describe(h))
        }
        (Some(b), None, Some(t)) => {
            format!("base {} after {t}; head stopped after {t}", describe(b))
        }
        (Some(b), None, None) => format!("base {}; head made no tool call", describe(b)),
        (None, Some(h), Some(t)) => format!("base stopped after {t}; head then {}", describe(h)),
        (None, Some(h), None) => format!("base made no tool call; head {}", describe(h)),
        (None, None, _) => "the same calls".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, name: &str, input: serde_json::Value, exit: Option<i32>) -> ToolCall {
        ToolCall {
            output: Some("out".into()),
            exit_code: exit,
            ..ToolCall::for_test(id, name, input)
        }
    }

    fn t(calls: Vec<ToolCall>) -> Transcript {
        Transcript::completed(calls, "done")
    }

    fn edit(ws: &str) -> ToolCall {
        call(
            "e",
            "Edit",
            json!({"file_path": format!("/tmp/aptitude-ws-{ws}/workspace/src/app.py"), "old_string": "a", "new_string": "b"}),
            None,
        )
    }

    fn bash(cmd: &str, description: &str, exit: i32) -> ToolCall {
        call(
            "b",
            "Bash",
            json!({"command": cmd, "description": description}),
            Some(exit),
        )
    }

    #[test]
    fn runs_part_where_one_stops_and_the_workspace_dir_and_descriptions_do_not_count() {
        let base = t(vec![edit("AAAA"), bash("pytest -q", "run tests", 0)]);
        let head = t(vec![edit("BBBB")]);
        let (d, stats) = align(&base, &head);
        let d = d.unwrap();
        assert_eq!(
            (d.kind, d.index, d.base, d.head, d.after),
            (DivergenceKind::Call, 1, Some(1), None, Some(0))
        );
        assert_eq!(
            sentence(&base, &head, &d),
            "base ran `pytest -q` after Edit src/app.py; head stopped after Edit src/app.py"
        );
        assert_eq!((stats.base, stats.head, stats.common), (2, 1, 1));
        // Another description of the same command is the same call.
        let again = t(vec![edit("CCCC"), bash("pytest -q", "Run the suite", 0)]);
        assert_eq!(align(&base, &again).0, None);
    }

    #[test]
    fn a_different_call_or_only_a_different_result() {
        let base = t(vec![edit("A"), bash("pytest -q", "", 0)]);
        let head = t(vec![edit("B"), bash("pytest -x", "", 1)]);
        let (d, _) = align(&base, &head);
        assert_eq!(
            sentence(&base, &head, &d.unwrap()),
            "base ran `pytest -q` after Edit src/app.py; head ran `pytest -x` instead"
        );
        let head = t(vec![edit("B"), bash("pytest -q", "", 1)]);
        let (d, stats) = align(&base, &head);
        let d = d.unwrap();
        assert_eq!((d.kind, d.index), (DivergenceKind::Result, 1));
        assert_eq!(
            sentence(&base, &head, &d),
            "both ran `pytest -q` after Edit src/app.py: exit 0 in base, exit 1 in head"
        );
        assert_eq!(stats.common, 2);
        // A result that differs comes first, though the calls part later.
        let head = t(vec![
            edit("B"),
            bash("pytest -q", "", 1),
            bash("pytest -x", "", 1),
        ]);
        let (d, _) = align(&base, &head);
        assert_eq!(
            d.map(|d| (d.kind, d.index)),
            Some((DivergenceKind::Result, 1))
        );
        let none = t(vec![]);
        assert_eq!(
            sentence(&base, &none, &align(&base, &none).0.unwrap()),
            "base called Edit src/app.py; head made no tool call"
        );
    }

    #[test]
    fn subagent_calls_follow_the_call_that_started_them() {
        let mut sub = call("s1", "Read", json!({"file_path": "a"}), None);
        sub.agent = "task1".into();
        let mut other = call("s2", "Grep", json!({"pattern": "x"}), None);
        other.agent = "task2".into();
        let calls = vec![
            call("task1", "Task", json!({"prompt": "a"}), None),
            call("task2", "Task", json!({"prompt": "b"}), None),
            other,
            sub,
            bash("ls", "", 0),
        ];
        let order: Vec<&str> = trajectory_order(&t(calls.clone()))
            .into_iter()
            .map(|i| calls[i].id.as_str())
            .collect();
        assert_eq!(order, ["task1", "s1", "task2", "s2", "b"]);
    }
}
