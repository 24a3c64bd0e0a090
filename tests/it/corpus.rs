//! Every real transcript in `tests/data/corpus/` (provenance in its `SOURCES.tsv`) parses
//! without warnings, and its per-tool-name call counts equal an independent count.
//!
//! The independent count does not use the parsers: it walks every JSON value of the file
//! and collects tool-call objects by their shape (`{"type": "tool_use", "id", "name"}`,
//! Codex `function_call` / `custom_tool_call` / exec items, Gemini `tool_use` events and
//! `toolCalls` entries, `functionCall` parts), keyed by their unique id.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use aptitude::transcript::{self, Format, Outcome};
use serde_json::Value;

use crate::support::data;

fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![data("corpus")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e == "jsonl" || e == "json")
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Every JSON value in the file: one per line, or the whole document.
fn json_values(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    if let Ok(v) = serde_json::from_str::<Value>(&text) {
        return vec![v];
    }
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .collect()
}

fn walk(v: &Value, found: &mut HashMap<String, String>) {
    match v {
        Value::Object(map) => {
            let s = |k: &str| map.get(k).and_then(Value::as_str);
            match s("type") {
                Some("tool_use") if s("id").is_some() && s("name").is_some() => {
                    found
                        .entry(s("id").unwrap().into())
                        .or_insert(s("name").unwrap().into());
                }
                Some("tool_use") if s("tool_id").is_some() => {
                    found
                        .entry(s("tool_id").unwrap().into())
                        .or_insert(s("tool_name").unwrap().into());
                }
                Some("function_call" | "custom_tool_call") if s("call_id").is_some() => {
                    found
                        .entry(s("call_id").unwrap().into())
                        .or_insert(s("name").unwrap().into());
                }
                Some(kind @ ("command_execution" | "file_change" | "web_search"))
                    if s("id").is_some() =>
                {
                    found.entry(s("id").unwrap().into()).or_insert(kind.into());
                }
                Some("todo_list") if s("id").is_some() => {
                    found
                        .entry(s("id").unwrap().into())
                        .or_insert("update_plan".into());
                }
                _ => {}
            }
            if let Some(Value::Object(call)) = map.get("functionCall")
                && let (Some(Value::String(id)), Some(Value::String(name))) =
                    (call.get("id"), call.get("name"))
            {
                found.entry(id.clone()).or_insert(name.clone());
            }
            if let Some(Value::Array(calls)) = map.get("toolCalls") {
                for call in calls {
                    if let (Some(Value::String(id)), Some(Value::String(name))) =
                        (call.get("id"), call.get("name"))
                    {
                        found.entry(id.clone()).or_insert(name.clone());
                    }
                }
            }
            for child in map.values() {
                walk(child, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| walk(i, found)),
        _ => {}
    }
}

fn independent_counts(path: &Path) -> BTreeMap<String, usize> {
    let mut found = HashMap::new();
    for v in json_values(path) {
        walk(&v, &mut found);
    }
    let mut counts = BTreeMap::new();
    for name in found.into_values() {
        *counts.entry(name).or_insert(0) += 1;
    }
    counts
}

#[test]
fn every_corpus_file_parses_with_the_right_tool_calls() {
    let files = corpus_files();
    assert!(
        files.len() >= 35,
        "corpus went missing: {} files",
        files.len()
    );
    let mut problems = Vec::new();
    for path in &files {
        let name = path
            .strip_prefix(data("corpus"))
            .unwrap()
            .display()
            .to_string();
        let t = match transcript::parse_file(path) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{name}: does not parse: {e}"));
                continue;
            }
        };
        // Only `gemini -o json` may warn, and only about its missing per-call records.
        for w in &t.warnings {
            if t.format != Format::GeminiJson {
                problems.push(format!("{name}: warning at line {}: {}", w.line, w.message));
            }
        }
        let mut parsed: BTreeMap<String, usize> = BTreeMap::new();
        for call in &t.tool_calls {
            *parsed.entry(call.name.clone()).or_insert(0) += 1;
        }
        let expected = independent_counts(path);
        for tool in expected
            .keys()
            .chain(parsed.keys())
            .collect::<std::collections::BTreeSet<_>>()
        {
            let (e, p) = (
                expected.get(tool).copied().unwrap_or(0),
                parsed.get(tool).copied().unwrap_or(0),
            );
            if e != p {
                problems.push(format!(
                    "{name}: tool {tool}: parsed {p} calls, independent count {e}"
                ));
            }
        }
        let ids: std::collections::HashSet<&str> =
            t.tool_calls.iter().map(|c| c.id.as_str()).collect();
        if ids.len() != t.tool_calls.len() {
            problems.push(format!("{name}: duplicate tool-call ids"));
        }
    }
    assert!(
        problems.is_empty(),
        "corpus regressions:\n{}",
        problems.join("\n")
    );
}

fn parse(rel: &str) -> transcript::Transcript {
    transcript::parse_file(&data("corpus").join(rel)).unwrap()
}

#[test]
fn formats_are_detected_from_content() {
    let cases = [
        (
            "claude-session-jsonl/sniffly_1.0.17_long_errors.jsonl",
            Format::ClaudeSession,
        ),
        (
            "claude-session-jsonl/yoavf_2.0.24_thinking.jsonl",
            Format::ClaudeSession,
        ),
        (
            "claude-stream-json/helgesverre_wrapped_task_subagent.jsonl",
            Format::ClaudeStreamJson,
        ),
        (
            "live/claude-2.1.328/events_tool_call.jsonl",
            Format::ClaudeStreamJson,
        ),
        (
            "live/claude-2.1.328/session_log_example.jsonl",
            Format::ClaudeSession,
        ),
        (
            "live/qwen-0.24.4/events_tool_call.jsonl",
            Format::QwenStreamJson,
        ),
        (
            "live/qwen-0.24.4/result_json_example.json",
            Format::QwenStreamJson,
        ),
        (
            "live/qwen-0.24.4/session_log_example.jsonl",
            Format::QwenSession,
        ),
        (
            "codex-exec-json/stark_exec_complete_run2.jsonl",
            Format::CodexExecJson,
        ),
        ("codex-rollout/yoavf_0.47.0.jsonl", Format::CodexRollout),
        (
            "live/gemini-0.61.0/events_tool_call.jsonl",
            Format::GeminiStreamJson,
        ),
        (
            "live/gemini-0.61.0/session_log_example.jsonl",
            Format::GeminiSession,
        ),
        ("gemini/yoavf_gemini_session.json", Format::GeminiChat),
        (
            "live/gemini-0.61.0/result_json_example.json",
            Format::GeminiJson,
        ),
    ];
    for (rel, format) in cases {
        assert_eq!(parse(rel).format, format, "{rel}");
    }
}

#[test]
fn claude_stream_json_tool_call_in_full() {
    let t = parse("live/claude-2.1.328/events_tool_call.jsonl");
    assert_eq!(t.tool_calls.len(), 1);
    let call = &t.tool_calls[0];
    assert_eq!(call.id, "toolu_00");
    assert_eq!(call.name, "Bash");
    assert_eq!(call.input["command"], "cat counter.txt; exit 3");
    assert_eq!(call.output.as_deref(), Some("Exit code 3\n42"));
    assert!(call.is_error);
    assert_eq!(call.exit_code, Some(3));
    assert_eq!(call.agent, "main");
    assert_eq!(call.timestamp.as_deref(), Some("2026-11-22T02:08:45.467Z"));
    assert_eq!(t.final_text.as_deref(), Some("The counter value is 42."));
    assert_eq!(t.usage.input_tokens, 200);
    assert_eq!(
        t.usage.output_tokens, 14,
        "true totals come from `result`, not the assistant events"
    );
    assert_eq!(t.usage.cost_usd, Some(0.001088));
    assert_eq!(t.usage.turns, Some(2));
    assert_eq!(t.agent_version.as_deref(), Some("claude-code 2.1.328"));
    assert_eq!(t.outcome, Outcome::Completed);
}

#[test]
fn claude_outcomes_of_failed_runs() {
    let max = parse("live/claude-2.1.328/events_max_turns.jsonl");
    assert!(
        matches!(max.outcome, Outcome::MaxTurns { .. }),
        "{:?}",
        max.outcome
    );
    let e500 = parse("live/claude-2.1.328/err_FAIL500.stdout.jsonl");
    assert!(
        matches!(&e500.outcome, Outcome::ApiError { http_status: Some(500), message } if message.contains("500 boom")),
        "{:?}",
        e500.outcome
    );
    assert_eq!(
        e500.final_text, None,
        "a synthetic API-error message is not an answer"
    );
    let killed = parse("live/claude-2.1.328/err_timeout_kill.stdout.jsonl");
    assert!(
        matches!(killed.outcome, Outcome::Incomplete { .. }),
        "{:?}",
        killed.outcome
    );
    let log500 = parse("live/claude-2.1.328/session_log_FAIL500.jsonl");
    assert!(
        matches!(log500.outcome, Outcome::ApiError { .. }),
        "{:?}",
        log500.outcome
    );
}

#[test]
fn claude_session_logs_old_and_new() {
    let t = parse("claude-session-jsonl/sniffly_1.0.17_interrupted.jsonl");
    assert_eq!(t.agent_version.as_deref(), Some("claude-code 1.0.17"));
    let bash = &t.tool_calls[0];
    assert_eq!(bash.exit_code, Some(0));
    assert!(bash.stdout.is_some(), "session logs keep Bash stdout apart");
    let interrupted = parse("claude-session-jsonl/gitai_1.0.111_interrupted.jsonl");
    assert_eq!(interrupted.outcome, Outcome::Interrupted);
    let thinking = parse("claude-session-jsonl/yoavf_2.0.24_thinking.jsonl");
    assert_eq!(thinking.outcome, Outcome::Completed);
    assert!(thinking.final_text.is_some());
    // Usage counted once per message, not once per content-block line.
    assert_eq!(thinking.usage.turns, Some(40));
}

#[test]
fn inline_sidechains_are_attributed_to_subagents() {
    let t = parse("claude-session-jsonl/dkimuson_1.0.98_inline_sidechains.jsonl");
    let sub = t.tool_calls.iter().filter(|c| !c.is_main()).count();
    let tasks = t.tool_calls.iter().filter(|c| c.name == "Task").count();
    assert_eq!(tasks, 5);
    assert!(sub > 100, "{sub} subagent calls");
    assert!(t.tool_calls.iter().filter(|c| c.is_main()).count() > 5);
}

#[test]
fn wrapped_stream_json_subagent_events() {
    let t = parse("claude-stream-json/helgesverre_wrapped_task_subagent.jsonl");
    let task = t.tool_calls.iter().find(|c| c.name == "Task").unwrap();
    assert!(task.is_main());
    let ls = t.tool_calls.iter().find(|c| c.name == "LS").unwrap();
    assert_eq!(
        ls.agent, task.id,
        "subagent calls name their parent Task call"
    );
    assert!(ls.is_error);
    assert_eq!(ls.timestamp.as_deref(), Some("2025-07-20T06:52:06.215Z"));
    assert_eq!(t.usage.cost_usd, Some(0.7542368));
}

#[test]
fn other_agents_exit_codes() {
    let codex = parse("live/codex-0.169.0/events_tool_call.jsonl");
    assert_eq!(codex.tool_calls[0].canonical, "Bash");
    assert_eq!(codex.tool_calls[0].exit_code, Some(3));
    let rollout = parse("live/codex-0.169.0/session_rollout_example.jsonl");
    assert_eq!(rollout.tool_calls[0].exit_code, Some(3));
    let qwen = parse("live/qwen-0.24.4/events_tool_call.jsonl");
    assert_eq!(qwen.tool_calls[0].exit_code, Some(3));
    let gemini = parse("live/gemini-0.61.0/events_tool_call.jsonl");
    assert_eq!(
        gemini.tool_calls[0].exit_code, None,
        "Gemini's stream-json does not record exit codes"
    );
    let gemini_log = parse("live/gemini-0.61.0/session_log_example.jsonl");
    assert_eq!(gemini_log.tool_calls[0].exit_code, Some(3));
    let codex_fail = parse("live/codex-0.169.0/events_api_error.jsonl");
    assert!(matches!(codex_fail.outcome, Outcome::ApiError { .. }));
}
