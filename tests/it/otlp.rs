//! Results into a team's telemetry: a real run sent over OTLP (`--otlp`), decoded by the
//! OpenTelemetry project's own protobuf definitions (tests/consumers/otlp_receiver.py);
//! the standard `OTEL_EXPORTER_OTLP_*` variables for `aptitude report`; a dead collector
//! is a warning that changes nothing else.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::run::{Suite, aptitude_run, test};
use crate::support::cli::Aptitude;
use crate::support::model::{ScriptedModel, Turn};
use crate::support::root;

/// The receiver, killed when dropped.
struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
}

impl Receiver {
    fn start(dir: &Path) -> Receiver {
        let python = root().join(".venv-tests/bin/python");
        let out = dir.join("otlp.jsonl");
        let mut child = Command::new(python)
            .arg(root().join("tests/consumers/otlp_receiver.py"))
            .arg(&out)
            .stdout(Stdio::piped())
            .spawn()
            .expect("scripts/test installs .venv-tests");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the receiver prints its port");
        Receiver { child, port, out }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request received, decoded.
    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The spans of every request received, with their resource and scope.
fn spans(requests: &[Value]) -> Vec<Value> {
    let mut spans = Vec::new();
    for r in requests {
        assert!(r.get("error").is_none(), "undecodable OTLP: {r:#}");
        assert_eq!(r["content_type"], "application/x-protobuf");
        for rs in r["request"]["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for s in ss["spans"].as_array().unwrap() {
                    let mut s = s.clone();
                    s["resource"] = rs["resource"].clone();
                    s["scope"] = ss["scope"].clone();
                    s["schemaUrl"] = ss["schemaUrl"].clone();
                    spans.push(s);
                }
            }
        }
    }
    spans
}

/// A span's attribute, as OTLP's JSON mapping writes it (`{"stringValue": …}`).
fn attr(span: &Value, key: &str) -> Value {
    span["attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["key"] == key)
        .map_or(Value::Null, |a| a["value"].clone())
}

#[test]
fn a_run_reaches_the_collector_as_genai_spans_and_evaluation_events() {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(dir.path());
    let model = ScriptedModel::start();
    model.script(
        "otlp-marker",
        vec![
            Turn::Tool(
                "Bash",
                json!({"command": "echo building; exit 3", "description": "build"}),
            ),
            Turn::Text("The build failed with exit code 3.".into()),
        ],
    );
    let suite = Suite::new();
    suite.file(
        "tests/otlp/build.aptitude.yaml",
        "name: builds\nprompt: \"otlp-marker: build it\"\nassertions:\n  - tool: Bash\n    called: true\n  - tool: Read\n    called: true\n",
    );
    let otlp = receiver.base();
    let out = aptitude_run(&suite, &model, &["--otlp", &otlp]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    let results = out.results.unwrap();
    let result = test(&results, "builds");

    let spans = spans(&receiver.received());
    assert_eq!(spans.len(), 2, "the run and its one tool call: {spans:#?}");
    let run = spans
        .iter()
        .find(|s| s["name"] == "invoke_agent claude")
        .unwrap();
    assert_eq!(
        run["schemaUrl"], "https://opentelemetry.io/schemas/1.38.0",
        "the conventions' version is pinned"
    );
    assert_eq!(run["scope"]["name"], "aptitude");
    assert_eq!(
        attr(run, "gen_ai.operation.name"),
        json!({"stringValue": "invoke_agent"})
    );
    assert_eq!(
        attr(run, "gen_ai.provider.name"),
        json!({"stringValue": "anthropic"})
    );
    assert_eq!(
        attr(run, "aptitude.test.name"),
        json!({"stringValue": "builds"})
    );
    assert_eq!(
        attr(run, "aptitude.test.status"),
        json!({"stringValue": "failed"})
    );
    // The scripted model served two replies of 100 input and 7 output tokens each.
    assert_eq!(result["usage"]["input_tokens"], 200, "{result:#}");
    assert_eq!(
        attr(run, "gen_ai.usage.input_tokens"),
        json!({"intValue": "200"})
    );
    assert_eq!(
        attr(run, "gen_ai.usage.output_tokens"),
        json!({"intValue": "14"})
    );
    assert_eq!(run["status"]["code"], "STATUS_CODE_ERROR");
    // The span covers the run as results record it.
    let start: u128 = run["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
    let end: u128 = run["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        (end - start) / 1_000_000,
        u128::from(result["duration_ms"].as_u64().unwrap())
    );
    let started = humantime::parse_rfc3339(result["started_at"].as_str().unwrap()).unwrap();
    assert_eq!(
        start / 1_000_000,
        started
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );

    let tool = spans
        .iter()
        .find(|s| s["name"] == "execute_tool Bash")
        .unwrap();
    assert_eq!(tool["parentSpanId"], run["spanId"]);
    assert_eq!(tool["traceId"], run["traceId"]);
    assert_eq!(attr(tool, "process.exit.code"), json!({"intValue": "3"}));
    assert_eq!(
        attr(tool, "gen_ai.tool.name"),
        json!({"stringValue": "Bash"})
    );

    let events = run["events"].as_array().unwrap();
    assert_eq!(events.len(), 2, "{events:#?}");
    let labels: Vec<_> = events
        .iter()
        .map(|e| {
            assert_eq!(e["name"], "gen_ai.evaluation.result");
            attr(e, "gen_ai.evaluation.score.label")["stringValue"].clone()
        })
        .collect();
    assert_eq!(labels, ["pass", "fail"]);
}

/// `aptitude report` sends results where the standard variables say, with the headers they
/// name; an unreachable collector is a warning and nothing else.
#[test]
fn report_follows_the_otel_variables_and_a_dead_collector_is_only_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let receiver = Receiver::start(dir.path());
    let results = crate::support::data("results/hostile.json");
    let out = Aptitude::new()
        .arg("report")
        .arg(&results)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base())
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-honeycomb-team=team-key")
        .output();
    let code = out.code;
    let requests = receiver.received();
    assert!(!requests.is_empty(), "{}", out.stderr);
    assert_eq!(requests[0]["headers"]["x-honeycomb-team"], "team-key");
    let spans = spans(&requests);
    let loaded: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let runs: usize = loaded["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["runs"].as_array().map_or(1, |r| r.len().max(1)))
        .sum();
    assert_eq!(
        spans
            .iter()
            .filter(|s| s["name"].as_str().unwrap().starts_with("invoke_agent"))
            .count(),
        runs
    );

    // Nothing listens there any more.
    let dead = receiver.base();
    drop(receiver);
    let out = Aptitude::new()
        .arg("report")
        .arg(&results)
        .args(["--otlp", &dead])
        .output();
    assert_eq!(out.code, code, "the export never changes the exit code");
    assert!(
        out.stderr
            .contains(&format!("OTLP export to {dead}/v1/traces failed")),
        "{}",
        out.stderr
    );
}
