//! The spans built from results: names, parents, times and GenAI attributes; where the
//! export goes.

use std::time::{Duration, SystemTime};

use opentelemetry::Value;
use opentelemetry::trace::Status;
use serde_json::json;

use super::*;
use crate::assertions::AssertionResult;
use crate::transcript::{Transcript, Usage};

fn attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
    attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn a_failed_run() -> TestResult {
    let mut bash = ToolCall::for_test("toolu_1", "Bash", json!({"command": "cargo test"}));
    bash.exit_code = Some(101);
    bash.is_error = true;
    bash.timestamp = Some("2026-11-28T10:00:02Z".into());
    let mut read = ToolCall::for_test("toolu_2", "Read", json!({"file_path": "/w/a.rs"}));
    read.timestamp = Some("2026-11-28T10:00:05Z".into());
    let transcript = Transcript {
        model: Some("claude-sonnet-4-5".into()),
        ..Transcript::completed(vec![bash, read], "Fixed.")
    };
    let review = AssertionResult {
        score: Some(4),
        threshold: Some(7),
        reasoning: Some("the answer skips the failing test".into()),
        ..AssertionResult::new(
            "review",
            "explains the failure".into(),
            AssertionStatus::Fail,
            12,
            None,
        )
    };
    let ran = AssertionResult::new(
        "ran",
        "ran cargo test".into(),
        AssertionStatus::Pass,
        9,
        None,
    );
    TestResult {
        duration_ms: 8_000,
        started_at: Some("2026-11-28T10:00:00.000Z".into()),
        agent_id: Some(AgentKind::Claude),
        transcript: Some(transcript),
        usage: Some(Usage {
            input_tokens: 1200,
            output_tokens: 80,
            cache_read_input_tokens: 300,
            cost_usd: Some(0.0123),
            turns: Some(3),
            ..Usage::default()
        }),
        assertions: vec![ran, review],
        ..TestResult::new(
            "fixes the bug",
            "tests/bug.aptitude.yaml",
            TestStatus::Failed,
        )
    }
}

#[test]
fn a_run_is_an_invoke_agent_span_with_its_tool_calls_as_children() {
    let results = Results::new(vec![a_failed_run()], 8_000);
    let spans = spans(&results);
    assert_eq!(spans.len(), 3, "two tool calls and the run");
    let run = spans
        .iter()
        .find(|s| s.name == "invoke_agent claude")
        .unwrap();
    let at = |t: &str| humantime::parse_rfc3339_weak(t).unwrap();
    assert_eq!(run.start_time, at("2026-11-28T10:00:00"));
    assert_eq!(run.end_time, at("2026-11-28T10:00:08"));
    assert_eq!(
        attr(&run.attributes, "gen_ai.operation.name"),
        Some(&Value::from("invoke_agent"))
    );
    assert_eq!(
        attr(&run.attributes, "gen_ai.provider.name"),
        Some(&Value::from("anthropic"))
    );
    assert_eq!(
        attr(&run.attributes, "gen_ai.request.model"),
        Some(&Value::from("claude-sonnet-4-5"))
    );
    assert_eq!(
        attr(&run.attributes, "gen_ai.usage.input_tokens"),
        Some(&Value::I64(1200))
    );
    assert_eq!(
        attr(&run.attributes, "gen_ai.usage.cache_read.input_tokens"),
        Some(&Value::I64(300))
    );
    assert_eq!(
        attr(&run.attributes, "aptitude.cost_usd"),
        Some(&Value::F64(0.0123))
    );
    assert!(matches!(run.status, Status::Error { .. }));

    let tools: Vec<_> = spans
        .iter()
        .filter(|s| s.name.starts_with("execute_tool"))
        .collect();
    assert_eq!(tools[0].name, "execute_tool Bash");
    assert_eq!(tools[1].name, "execute_tool Read");
    for tool in &tools {
        assert_eq!(tool.parent_span_id, run.span_context.span_id());
        assert_eq!(tool.span_context.trace_id(), run.span_context.trace_id());
    }
    // The command lasts until the next call: 2 s to 5 s into the run.
    assert_eq!(tools[0].start_time, at("2026-11-28T10:00:02"));
    assert_eq!(tools[0].end_time, at("2026-11-28T10:00:05"));
    assert_eq!(
        attr(&tools[0].attributes, "process.exit.code"),
        Some(&Value::I64(101))
    );
    assert_eq!(
        attr(&tools[0].attributes, "gen_ai.tool.call.id"),
        Some(&Value::from("toolu_1"))
    );
    assert_eq!(
        attr(&tools[0].attributes, "error.type"),
        Some(&Value::from("tool_error"))
    );
    assert_eq!(attr(&tools[1].attributes, "process.exit.code"), None);
}

#[test]
fn each_assertion_and_review_is_an_evaluation_result_event() {
    let results = Results::new(vec![a_failed_run()], 8_000);
    let spans = spans(&results);
    let run = spans.iter().find(|s| s.name.starts_with("invoke")).unwrap();
    let events: Vec<_> = run.events.iter().collect();
    assert_eq!(events.len(), 2);
    assert!(events.iter().all(|e| e.name == "gen_ai.evaluation.result"));
    let ran = &events[0].attributes;
    assert_eq!(
        attr(ran, "gen_ai.evaluation.name"),
        Some(&Value::from("ran cargo test"))
    );
    assert_eq!(
        attr(ran, "gen_ai.evaluation.score.label"),
        Some(&Value::from("pass"))
    );
    assert_eq!(attr(ran, "gen_ai.evaluation.score.value"), None);
    let review = &events[1].attributes;
    assert_eq!(
        attr(review, "gen_ai.evaluation.score.label"),
        Some(&Value::from("fail"))
    );
    assert_eq!(
        attr(review, "gen_ai.evaluation.score.value"),
        Some(&Value::F64(4.0))
    );
    assert_eq!(
        attr(review, "gen_ai.evaluation.explanation"),
        Some(&Value::from("the answer skips the failing test"))
    );
}

#[test]
fn each_repeat_is_its_own_run_span() {
    let mut test = a_failed_run();
    let mut second = a_failed_run();
    second.started_at = Some("2026-11-28T10:01:00Z".into());
    test.runs = vec![a_failed_run(), second];
    let spans = spans(&Results::new(vec![test], 16_000));
    assert_eq!(
        spans
            .iter()
            .filter(|s| s.name.starts_with("invoke_agent"))
            .count(),
        2
    );
}

#[test]
fn results_without_start_times_are_laid_back_to_back_ending_now() {
    let mut a = a_failed_run();
    a.started_at = None;
    let mut b = a.clone();
    b.duration_ms = 2_000;
    b.name = "second".into();
    let before = SystemTime::now();
    let spans = spans(&Results::new(vec![a, b], 10_000));
    let runs: Vec<_> = spans
        .iter()
        .filter(|s| s.name.starts_with("invoke_agent"))
        .collect();
    // Built last first: the second test ends now, the first ends where the second starts.
    let second = runs
        .iter()
        .find(|s| attr(&s.attributes, "aptitude.test.name") == Some(&Value::from("second")))
        .unwrap();
    let first = runs
        .iter()
        .find(|s| attr(&s.attributes, "aptitude.test.name") != Some(&Value::from("second")))
        .unwrap();
    assert!(second.end_time >= before);
    assert_eq!(
        second.end_time.duration_since(second.start_time).unwrap(),
        Duration::from_secs(2)
    );
    assert_eq!(first.end_time, second.start_time);
}

#[test]
fn long_values_are_cut_at_a_character_boundary() {
    let long = "é".repeat(MAX_VALUE_BYTES);
    let cut = cut(&long);
    assert!(cut.len() <= MAX_VALUE_BYTES + '…'.len_utf8());
    assert!(cut.ends_with('…'));
}

#[test]
fn the_flag_is_a_base_url_and_the_variables_follow_the_otlp_spec() {
    let none = |_: &str| None;
    assert_eq!(endpoint(None, none), None);
    assert_eq!(
        endpoint(Some("http://127.0.0.1:4318"), none).as_deref(),
        Some("http://127.0.0.1:4318/v1/traces")
    );
    assert_eq!(
        endpoint(Some("http://c:4318/v1/traces/"), none).as_deref(),
        Some("http://c:4318/v1/traces")
    );
    let env = |name: &str| match name {
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("https://api.honeycomb.io".to_owned()),
        _ => None,
    };
    assert_eq!(
        endpoint(None, env).as_deref(),
        Some("https://api.honeycomb.io/v1/traces")
    );
    let traces = |name: &str| match name {
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" => Some("http://t:4318/custom".to_owned()),
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://base:4318".to_owned()),
        _ => None,
    };
    assert_eq!(
        endpoint(None, traces).as_deref(),
        Some("http://t:4318/custom"),
        "the signal's own variable is used as is"
    );
    assert_eq!(
        endpoint(Some("http://flag:4318"), traces).as_deref(),
        Some("http://flag:4318/v1/traces"),
        "the flag wins"
    );
}

#[test]
fn an_endpoint_in_a_message_shows_no_credentials() {
    assert_eq!(
        shown("https://user:s3cret@otlp.example/v1/traces?api_key=k"),
        "https://otlp.example/v1/traces"
    );
}

#[test]
fn a_refused_connection_is_an_error_naming_what_was_sent() {
    // A port nothing listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let results = Results::new(vec![a_failed_run()], 8_000);
    let error = export(&results, &format!("http://127.0.0.1:{port}/v1/traces")).unwrap_err();
    assert!(
        matches!(
            error,
            OtlpError::Send {
                sent: 0,
                total: 3,
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn a_collector_that_never_answers_is_cut_at_the_deadline() {
    // Accepts the connection and never replies.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let results = Results::new(vec![a_failed_run()], 8_000);
    let error = export_within(
        &results,
        &format!("http://127.0.0.1:{port}/v1/traces"),
        Duration::from_millis(300),
    )
    .unwrap_err();
    drop(listener);
    assert!(
        matches!(
            error,
            OtlpError::Deadline {
                sent: 0,
                total: 3,
                ..
            } | OtlpError::Send { sent: 0, .. }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("127.0.0.1"), "{error}");
}
