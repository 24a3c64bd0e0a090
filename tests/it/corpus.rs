//! Every real transcript in `tests/data/corpus/` (provenance in its `SOURCES.tsv`) parses
//! without warnings, and its per-tool-name call counts equal an independent count.
//!
//! The independent count does not use the parsers: it walks every JSON value of the file
//! and collects tool-call objects by their shape (`{"type": "tool_use", "id", "name"}`,
//! Codex `function_call` / `custom_tool_call` / exec items, Gemini `tool_use` events and
//! `toolCalls` entries, `functionCall` parts, Copilot `toolRequests` entries and
//! `{toolCallId, toolName}` objects, opencode `{"type": "tool", callID, tool}` parts, pi
//! `{"type": "toolCall", id, name}` content, Cursor `tool_call` events), keyed by their
//! unique id.
//!
//! Every file in the corpus is either a transcript or on [`NOT_TRANSCRIPTS`], with the
//! reason; those must be refused (an error), never read as a transcript of something.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use aptitude::transcript::{self, Format, Outcome};
use serde_json::Value;

use crate::support::data;

/// Files of the corpus that are not transcripts (matched as a path suffix or, with `*`, a
/// file-name prefix), with why. They are kept because they show what an agent does beside
/// its transcript, and aptitude must refuse them rather than misread them.
const NOT_TRANSCRIPTS: &[(&str, &str)] = &[
    (
        "live/*model_requests_",
        "the requests the agent sent to the scripted model",
    ),
    (
        "live/auggie-0.36.0/backend_requests_chat_stream.jsonl",
        "the requests Auggie sent to the scripted backend",
    ),
    (
        "live/copilot-1.0.102/session-events.schema.json",
        "the JSON schema of Copilot's session events",
    ),
    (
        "live/copilot-1.0.102/usage_output_file_example.json",
        "Copilot's `--usage-output-file`: token totals, no calls (read by `copilot_usage_file`)",
    ),
    (
        "live/opencode-1.18.33/opencode_config_content_example.json",
        "configuration",
    ),
    (
        "live/kilo-7.7.7/kilo_config_content_example.json",
        "configuration",
    ),
    ("live/pi-0.73.1/models_json_example.json", "configuration"),
    ("live/*.log", "the agent's own log"),
    ("live/*.txt", "human-readable stdout or stderr"),
];

fn why_not_a_transcript(rel: &str) -> Option<&'static str> {
    NOT_TRANSCRIPTS.iter().find_map(|(pattern, why)| {
        let hit = match pattern.split_once('*') {
            Some((dir, rest)) if rest.starts_with('.') => {
                rel.starts_with(dir) && rel.ends_with(rest)
            }
            Some((dir, prefix)) => {
                rel.starts_with(dir)
                    && Path::new(rel)
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            }
            None => rel == *pattern,
        };
        hit.then_some(*why)
    })
}

/// Every file of the corpus but its provenance records.
fn all_corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![data("corpus")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                stack.push(path);
            } else if name != "SOURCES.tsv" && name != "README.md" && !name.starts_with("LICENSE") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn rel(path: &Path) -> String {
    path.strip_prefix(data("corpus"))
        .unwrap()
        .display()
        .to_string()
}

/// The transcripts of the corpus.
fn corpus_files() -> Vec<PathBuf> {
    all_corpus_files()
        .into_iter()
        .filter(|p| why_not_a_transcript(&rel(p)).is_none())
        .collect()
}

#[test]
fn files_that_are_not_transcripts_are_refused() {
    let mut seen = 0;
    for path in all_corpus_files() {
        let rel = rel(&path);
        let Some(why) = why_not_a_transcript(&rel) else {
            continue;
        };
        seen += 1;
        if let Ok(t) = transcript::parse_file(&path) {
            panic!("{rel} ({why}) was read as a {} transcript", t.format.name());
        }
    }
    assert!(seen >= 15, "{seen} non-transcripts");
    let err = transcript::parse_file(
        &data("corpus").join("live/copilot-1.0.102/usage_output_file_example.json"),
    )
    .unwrap_err();
    assert!(err.to_string().contains("usage file"), "{err}");
    // An adapter reads its token totals apart.
    let usage_file: Value = serde_json::from_slice(
        &std::fs::read(data("corpus").join("live/copilot-1.0.102/usage_output_file_example.json"))
            .unwrap(),
    )
    .unwrap();
    let usage = transcript::copilot_usage_file(&usage_file).unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (200, 20));
    assert_eq!(usage.turns, Some(2));
    assert_eq!(
        transcript::copilot_usage_file(&serde_json::json!({"x": 1})),
        None
    );
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
            // Copilot: `toolRequests` entries; `{toolCallId, toolName}` objects (Copilot
            // `tool.execution_start`, pi `tool_execution_*` events and `toolResult` messages).
            if let Some(Value::Array(requests)) = map.get("toolRequests") {
                for r in requests {
                    if let (Some(Value::String(id)), Some(Value::String(name))) =
                        (r.get("toolCallId"), r.get("name"))
                    {
                        found.entry(id.clone()).or_insert(name.clone());
                    }
                }
            }
            // Auggie `tool_use` nodes.
            if let (Some(id), Some(name)) = (s("tool_use_id"), s("tool_name")) {
                found.entry(id.into()).or_insert(name.into());
            }
            if let (Some(id), Some(name)) = (s("toolCallId"), s("toolName")) {
                found.entry(id.into()).or_insert(name.into());
            }
            // opencode parts, pi content, Cursor events.
            match s("type") {
                Some("tool") if s("callID").is_some() && s("tool").is_some() => {
                    found
                        .entry(s("callID").unwrap().into())
                        .or_insert(s("tool").unwrap().into());
                }
                Some("toolCall") if s("id").is_some() && s("name").is_some() => {
                    found
                        .entry(s("id").unwrap().into())
                        .or_insert(s("name").unwrap().into());
                }
                Some("tool_call") if s("call_id").is_some() => {
                    if let Some(Value::Object(kinds)) = map.get("tool_call")
                        && let Some(kind) = kinds.keys().next()
                    {
                        found
                            .entry(s("call_id").unwrap().into())
                            .or_insert(kind.clone());
                    }
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

/// Aider's history: each `> Applied edit to P` names the last SEARCH/REPLACE block for P
/// before it, a `Write` when its SEARCH part is empty, else an `Edit`.
fn aider_counts(path: &Path) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut counts = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(file) = line.trim_end().strip_prefix("> Applied edit to ") else {
            continue;
        };
        let search = (0..i)
            .rev()
            .find(|&j| {
                lines[j].starts_with("<<<<<<< SEARCH")
                    && lines[..j]
                        .iter()
                        .rev()
                        .take(2)
                        .any(|l| l.trim() == file.trim())
            })
            .unwrap_or_else(|| panic!("{}: no block for {file}", path.display()));
        let empty = lines[search + 1..]
            .iter()
            .take_while(|l| l.trim_end() != "=======")
            .all(|l| l.trim().is_empty());
        *counts
            .entry(if empty { "Write" } else { "Edit" }.to_owned())
            .or_insert(0) += 1;
    }
    counts
}

fn independent_counts(path: &Path) -> BTreeMap<String, usize> {
    if path.extension().is_some_and(|e| e == "md") {
        return aider_counts(path);
    }
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
        files.len() >= 60,
        "corpus went missing: {} files",
        files.len()
    );
    let mut problems = Vec::new();
    for path in &files {
        let name = rel(path);
        let t = match transcript::parse_file(path) {
            Ok(t) => t,
            Err(e) => {
                problems.push(format!("{name}: does not parse: {e}"));
                continue;
            }
        };
        // Only `gemini -o json` and `auggie --output-format json` may warn, and only about
        // their missing per-call records.
        for w in &t.warnings {
            if !matches!(t.format, Format::GeminiJson | Format::AuggieJson) {
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

#[test]
fn newer_agents_formats_are_detected_from_content() {
    let cases = [
        (
            "live/copilot-1.0.102/events_tool_call.jsonl",
            Format::CopilotJson,
        ),
        (
            "live/copilot-1.0.102/session_events_exit3.jsonl",
            Format::CopilotSession,
        ),
        (
            "live/opencode-1.18.33/events_tool_call.jsonl",
            Format::OpencodeJson,
        ),
        (
            "live/kilo-7.7.7/events_tool_call.jsonl",
            Format::OpencodeJson,
        ),
        (
            "live/opencode-1.18.33/session_export_example.json",
            Format::OpencodeSession,
        ),
        ("live/pi-0.73.1/events_tool_call.jsonl", Format::PiJson),
        (
            "live/pi-0.73.1/session_log_example.jsonl",
            Format::PiSession,
        ),
        (
            "cursor-stream-json/reifying_experiments_direct-sleep.jsonl",
            Format::CursorStreamJson,
        ),
        (
            "live/auggie-0.36.0/result_json_example.json",
            Format::AuggieJson,
        ),
        (
            "live/auggie-0.36.0/session_exit3.json",
            Format::AuggieSession,
        ),
        (
            "live/aider-0.86.2/chat_history_example.md",
            Format::AiderChat,
        ),
    ];
    for (rel, format) in cases {
        assert_eq!(parse(rel).format, format, "{rel}");
    }
}

/// A command that exited 3, as each agent recorded it: the code comes from the command's
/// own record (Copilot says `success: true`, opencode `status: completed`).
#[test]
fn exit_codes_come_from_the_command_record() {
    for rel in [
        "live/copilot-1.0.102/events_tool_exit3.jsonl",
        "live/copilot-1.0.102/session_events_exit3.jsonl",
        "live/opencode-1.18.33/events_tool_exit3.jsonl",
        "live/kilo-7.7.7/events_tool_exit3.jsonl",
        "live/pi-0.73.1/events_tool_exit3.jsonl",
        "live/auggie-0.36.0/session_exit3.json",
    ] {
        let t = parse(rel);
        assert_eq!(t.tool_calls.len(), 1, "{rel}");
        let call = &t.tool_calls[0];
        assert_eq!(call.canonical, "Bash", "{rel}");
        assert_eq!(call.exit_code, Some(3), "{rel}");
        assert!(call.is_error, "{rel}: a non-zero exit is an error");
        assert_eq!(
            call.command().as_deref(),
            Some("echo oops; exit 3"),
            "{rel}"
        );
        assert!(
            call.output.as_deref().unwrap_or("").contains("oops"),
            "{rel}"
        );
        assert!(t.outcome.is_completed(), "{rel}: {:?}", t.outcome);
    }
    for rel in [
        "live/copilot-1.0.102/events_tool_call.jsonl",
        "live/opencode-1.18.33/events_tool_call.jsonl",
        "live/pi-0.73.1/events_tool_call.jsonl",
        "live/pi-0.73.1/session_log_example.jsonl",
        "live/auggie-0.36.0/session_example.json",
    ] {
        let t = parse(rel);
        assert_eq!(t.tool_calls[0].exit_code, Some(0), "{rel}");
        assert!(!t.tool_calls[0].is_error, "{rel}");
    }
}

#[test]
fn failures_the_agent_exits_0_on_are_failed_outcomes() {
    // pi exits 0 when the model API fails; only the last message says so.
    for rel in [
        "live/pi-0.73.1/events_api_error_500_no_retry.jsonl",
        "live/pi-0.73.1/events_api_error_500_default_retries.jsonl",
    ] {
        let t = parse(rel);
        assert!(
            matches!(&t.outcome, Outcome::ApiError { http_status: Some(500), message } if message.contains("fake upstream failure")),
            "{rel}: {:?}",
            t.outcome
        );
        assert_eq!(t.final_text, None, "{rel}");
    }
    // Aider exits 0 after its hard-coded retries of a 500 (~75 s) fail; the
    // `litellm.InternalServerError` lines of its chat history say so. (The end-to-end test
    // gives Aider a 400, which it does not retry, to spend seconds: `tests/it/agents.rs`.)
    let aider = parse("live/aider-0.86.2/chat_history_api_error_500.md");
    assert!(
        matches!(&aider.outcome, Outcome::ApiError { message, .. } if message.contains("litellm.InternalServerError")),
        "{:?}",
        aider.outcome
    );
    assert_eq!(aider.final_text, None);
    // opencode exits 0 when it auto-rejected a permission.
    let rejected = parse("live/opencode-1.18.33/events_permission_ask_rejected.jsonl");
    assert!(
        matches!(&rejected.outcome, Outcome::Error { message } if message.contains("rejected permission")),
        "{:?}",
        rejected.outcome
    );
    assert!(rejected.tool_calls[0].is_error);
    assert_eq!(rejected.tool_calls[0].exit_code, None);
    for rel in [
        "live/opencode-1.18.33/events_api_error_500.jsonl",
        "live/kilo-7.7.7/events_api_error_500.jsonl",
    ] {
        let t = parse(rel);
        assert!(
            matches!(
                &t.outcome,
                Outcome::ApiError {
                    http_status: Some(500),
                    ..
                }
            ),
            "{rel}: {:?}",
            t.outcome
        );
    }
    let e400 = parse("live/opencode-1.18.33/events_api_error_400.jsonl");
    assert!(matches!(
        e400.outcome,
        Outcome::ApiError {
            http_status: Some(400),
            ..
        }
    ));
    // Copilot: 6 failed attempts (`model.call_failure`), then `session.error`.
    let c500 = parse("live/copilot-1.0.102/events_api_error_500.jsonl");
    assert!(
        matches!(&c500.outcome, Outcome::ApiError { http_status: Some(500), message } if message.contains("500 fake upstream failure")),
        "{:?}",
        c500.outcome
    );
    let refused = parse("live/copilot-1.0.102/events_connection_refused.jsonl");
    assert!(
        matches!(&refused.outcome, Outcome::ApiError { http_status: None, message } if message.contains("Could not connect")),
        "{:?}",
        refused.outcome
    );
}

#[test]
fn final_text_usage_and_ids_of_newer_agents() {
    let copilot = parse("live/copilot-1.0.102/events_tool_call.jsonl");
    assert_eq!(copilot.final_text.as_deref(), Some("Done."));
    assert_eq!(copilot.usage.turns, Some(2));
    assert!(copilot.usage.duration_ms.is_some());
    assert!(copilot.session_id.is_some());
    let log = parse("live/copilot-1.0.102/session_events_exit3.jsonl");
    assert_eq!(log.agent_version.as_deref(), Some("copilot 1.0.102"));
    assert_eq!(log.model.as_deref(), Some("gpt-4.1"));
    assert_eq!(
        (log.usage.input_tokens, log.usage.output_tokens),
        (200, 20),
        "one usage record per model call"
    );
    let opencode = parse("live/opencode-1.18.33/events_tool_call.jsonl");
    assert_eq!(opencode.final_text.as_deref(), Some("Done."));
    assert_eq!(
        (opencode.usage.input_tokens, opencode.usage.output_tokens),
        (200, 20)
    );
    assert_eq!(opencode.usage.turns, Some(2));
    assert_eq!(
        opencode.tool_calls[0].timestamp.as_deref(),
        Some("2026-11-22T07:19:08.610Z")
    );
    let export = parse("live/opencode-1.18.33/session_export_example.json");
    assert_eq!(export.agent_version.as_deref(), Some("opencode 1.18.33"));
    assert_eq!(export.final_text.as_deref(), Some("Done."));
    assert_eq!(export.tool_calls[0].exit_code, Some(0));
    assert!(export.outcome.is_completed());
    let pi = parse("live/pi-0.73.1/events_tool_call.jsonl");
    assert_eq!(pi.final_text.as_deref(), Some("Done."));
    assert_eq!((pi.usage.input_tokens, pi.usage.output_tokens), (200, 20));
    assert!(pi.usage.cost_usd.is_some_and(|c| c > 0.0));
    assert!(pi.outcome.is_completed());
    let cursor = parse("cursor-stream-json/reifying_experiments_subagent-sleep.jsonl");
    assert_eq!(cursor.final_text.as_deref(), Some("done"));
    assert_eq!(cursor.usage.duration_ms, Some(16460));
    let sleep = &cursor.tool_calls[0];
    assert!(
        sleep.id.contains('\n'),
        "Cursor call ids keep their line break"
    );
    assert_eq!(sleep.name, "shellToolCall");
    assert_eq!(sleep.canonical, "Bash");
    assert_eq!(sleep.command().as_deref(), Some("sleep 8"));
    assert_eq!(sleep.exit_code, Some(0));
    let auggie = parse("live/auggie-0.36.0/result_json_example.json");
    assert_eq!(auggie.final_text.as_deref(), Some("Done."));
    assert!(
        auggie.lost_tool_calls().is_some(),
        "its result line holds no calls: their absence proves nothing"
    );
    let session = parse("live/auggie-0.36.0/session_exit3.json");
    assert_eq!(session.final_text.as_deref(), Some("Done."));
}

#[test]
fn a_cursor_stream_cut_before_its_result_is_incomplete() {
    let text = std::fs::read_to_string(
        data("corpus").join("cursor-stream-json/reifying_experiments_parallel-sleep.jsonl"),
    )
    .unwrap();
    let without_result: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(r#"{"type":"result""#))
        .collect();
    let t = transcript::parse_reader(without_result.join("\n").as_bytes()).unwrap();
    assert_eq!(t.format, Format::CursorStreamJson);
    assert_eq!(t.tool_calls.len(), 2);
    assert!(
        matches!(t.outcome, Outcome::Incomplete { .. }),
        "{:?}",
        t.outcome
    );
}

#[test]
fn aider_edits_become_write_and_edit_calls() {
    let t = parse("live/aider-0.86.2/chat_history_example.md");
    assert_eq!(t.agent_version.as_deref(), Some("aider 0.86.2"));
    assert_eq!(t.model.as_deref(), Some("openai/fake-model"));
    assert_eq!(
        t.tool_calls.len(),
        1,
        "the shell block it did not run is no call"
    );
    let write = &t.tool_calls[0];
    assert_eq!(write.canonical, "Write");
    assert_eq!(write.params()["file_path"], "out.txt");
    assert_eq!(write.params()["content"], "hello\n");
    assert_eq!(t.usage.input_tokens, 2300);
    assert_eq!(t.usage.output_tokens, 41);
    let only = t.records_only.as_ref().unwrap();
    assert!(only.records("Write") && !only.records("Bash"));
    assert!(only.reason.contains("aider records no shell commands"));
    assert!(t.outcome.is_completed());
    assert!(
        aptitude::report::terminal::render_transcript(&t).contains("records only Edit, Write"),
        "`aptitude transcript` says what it can not show"
    );
}

/// The same assertion on the same command gives the same verdict whichever agent ran it.
#[test]
fn canonical_params_are_the_same_for_every_agent() {
    let files = [
        "live/claude-2.1.328/events_tool_call.jsonl",
        "live/codex-0.169.0/events_tool_call.jsonl",
        "live/codex-0.169.0/session_rollout_example.jsonl",
        "live/gemini-0.61.0/events_tool_call.jsonl",
        "live/qwen-0.24.4/events_tool_call.jsonl",
        "live/copilot-1.0.102/events_tool_call.jsonl",
        "live/opencode-1.18.33/events_tool_call.jsonl",
        "live/kilo-7.7.7/events_tool_call.jsonl",
        "live/pi-0.73.1/events_tool_call.jsonl",
        "live/auggie-0.36.0/session_example.json",
        "cursor-stream-json/reifying_experiments_subagent-sleep.jsonl",
    ];
    for rel in files {
        let t = parse(rel);
        let bash: Vec<_> = t
            .tool_calls
            .iter()
            .filter(|c| c.canonical == "Bash")
            .collect();
        assert!(!bash.is_empty(), "{rel}");
        for call in bash {
            let command = call.params().get("command").and_then(|c| c.as_str());
            assert!(
                command.is_some_and(|c| !c.is_empty()),
                "{rel}: {} has no canonical `command`: {}",
                call.name,
                call.params()
            );
            assert!(call.params().get("cmd").is_none(), "{rel}");
        }
    }
    // The raw call stays: Codex's `exec_command {cmd}`.
    let rollout = parse("live/codex-0.169.0/session_rollout_example.jsonl");
    let call = &rollout.tool_calls[0];
    assert_eq!(call.name, "exec_command");
    assert!(call.input.get("cmd").is_some());
    let json = serde_json::to_value(call).unwrap();
    assert!(json["input"].get("cmd").is_some() && json["params"].get("command").is_some());
}

/// Adapters feed an agent's stdout to a `StreamParser` line by line while it runs: it must
/// read every transcript of the corpus as `parse_file` does.
#[test]
fn the_stream_parser_reads_every_line_format_like_parse_file() {
    for path in corpus_files() {
        let rel = rel(&path);
        let Ok(whole) = transcript::parse_file(&path) else {
            continue;
        };
        let text = std::fs::read_to_string(&path).unwrap();
        // Whole-document formats are read at once, not streamed.
        if serde_json::from_str::<Value>(&text).is_ok() || rel.starts_with("claude-session-jsonl") {
            continue;
        }
        let mut p = transcript::StreamParser::new(whole.format);
        for line in text.lines() {
            p.push_line(line);
        }
        assert_eq!(p.calls().len(), whole.tool_calls.len(), "{rel}");
        let streamed = p.finish();
        assert_eq!(streamed.tool_calls, whole.tool_calls, "{rel}");
        assert_eq!(streamed.outcome, whole.outcome, "{rel}");
        assert_eq!(streamed.final_text, whole.final_text, "{rel}");
        assert_eq!(streamed.format, whole.format, "{rel}");
    }
}

/// `tool: Bash, params: {command: …}` gives the same verdict on every agent that ran the
/// command, whatever the agent called its shell tool and its command key.
#[test]
fn one_assertion_gives_one_verdict_across_agents() {
    for rel in [
        "live/claude-2.1.328/events_tool_call.jsonl",
        "live/codex-0.169.0/events_tool_call.jsonl",
        "live/codex-0.169.0/session_rollout_example.jsonl",
        "live/qwen-0.24.4/events_tool_call.jsonl",
        "live/copilot-1.0.102/events_tool_exit3.jsonl",
        "live/copilot-1.0.102/session_events_exit3.jsonl",
        "live/opencode-1.18.33/events_tool_exit3.jsonl",
        "live/kilo-7.7.7/events_tool_exit3.jsonl",
        "live/pi-0.73.1/events_tool_exit3.jsonl",
        "live/auggie-0.36.0/session_exit3.json",
    ] {
        let t = parse(rel);
        let pass = aptitude::fluent::expect(&t)
            .tool("Bash")
            .called()
            .with_param("command", "*exit 3*")
            .evaluate();
        assert_eq!(
            pass.status,
            aptitude::verdict::results::AssertionStatus::Pass,
            "{rel}: {pass:?}"
        );
        let fail = aptitude::fluent::expect(&t)
            .tool("Bash")
            .called()
            .with_param("command", "*pytest*")
            .evaluate();
        assert_eq!(
            fail.status,
            aptitude::verdict::results::AssertionStatus::Fail,
            "{rel}: {fail:?}"
        );
    }
    // Aider records no shell commands: an assertion on one can get no verdict.
    let aider = parse("live/aider-0.86.2/chat_history_example.md");
    let bash = aptitude::fluent::expect(&aider)
        .tool("Bash")
        .not_called()
        .evaluate();
    assert_eq!(
        bash.status,
        aptitude::verdict::results::AssertionStatus::Error
    );
    assert!(
        format!("{bash:?}").contains("aider records no shell commands"),
        "{bash:?}"
    );
    let write = aptitude::fluent::expect(&aider)
        .tool("Write")
        .called()
        .with_param("file_path", "out.txt")
        .evaluate();
    assert_eq!(
        write.status,
        aptitude::verdict::results::AssertionStatus::Pass
    );
}

/// No line is dropped for a shape a parser does not know, in any agent's format: each
/// JSON-lines transcript of the corpus with lines of new shapes appended (an event of a new
/// type whose content is an object, a server tool's result block) loses no more lines
/// than it did, and keeps every call it had.
#[test]
fn no_format_loses_a_line_of_an_unknown_shape() {
    let odd = [
        r#"{"type":"brand_new_event","content":{"type":"surprise","nested":{"x":1}}}"#,
        r#"{"type":"assistant","message":{"id":"m_new","content":[{"type":"advisor_tool_result","tool_use_id":"srvtoolu_x","content":{"type":"advisor_result","text":"ok"}}]}}"#,
    ];
    let mut checked = 0;
    let mut formats = std::collections::BTreeSet::new();
    for path in corpus_files() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let json_lines = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| v.is_object()));
        if !first.trim_start().starts_with('{') || text.lines().count() < 2 || !json_lines {
            continue;
        }
        let Ok(before) = aptitude::transcript::parse_reader(text.as_bytes()) else {
            continue;
        };
        let same_family = |line: &str| {
            // The assistant line is Claude Code's shape: only appended to its family.
            !line.contains("\"assistant\"")
                || matches!(
                    before.format,
                    aptitude::transcript::Format::ClaudeSession
                        | aptitude::transcript::Format::ClaudeStreamJson
                        | aptitude::transcript::Format::QwenStreamJson
                )
        };
        let mut with = text.trim_end().to_owned();
        for line in odd.iter().filter(|l| same_family(l)) {
            with.push('\n');
            with.push_str(line);
        }
        let after = aptitude::transcript::parse_reader(with.as_bytes()).unwrap();
        assert_eq!(
            after.lost.lines,
            before.lost.lines,
            "{}: {:?}",
            rel(&path),
            after.warnings
        );
        assert!(
            after.tool_calls.len() >= before.tool_calls.len(),
            "{}",
            rel(&path)
        );
        checked += 1;
        formats.insert(before.format.name());
    }
    eprintln!("{checked} transcripts checked, formats {formats:?}");
    assert!(checked >= 10, "only {checked} transcripts checked");
    assert!(formats.len() >= 4, "{formats:?}");
}
