//! `mcp_servers:` end to end: a real MCP server from npm
//! (`@modelcontextprotocol/server-everything`, pinned in package.json) attached to the real
//! agent CLIs, the scripted model calling its `echo` tool by the name each agent offers it
//! under, and the results showing the canonical `mcp__<server>__<tool>` call, its
//! parameters and the server's own reply.

use serde_json::{Value, json};

use crate::agents::{AGENTS, Agent, run_on};
use crate::run::Suite;
use crate::support::mcp_names::tool_name;
use crate::support::model::{ScriptedModel, Turn};
use crate::support::root;

/// The pinned server's entry point (`node dist/index.js stdio`).
fn server_everything() -> String {
    let path = root().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.exists(),
        "{} is missing: run `scripts/test`",
        path.display()
    );
    path.display().to_string()
}

/// The names of the tools a request offered (Anthropic, Responses, Chat Completions and
/// Gemini shapes).
fn offered_tools(body: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        if let Some(n) = tool["name"].as_str().or(tool["function"]["name"].as_str()) {
            names.push(n.to_owned());
        }
        for decl in tool["functionDeclarations"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(n) = decl["name"].as_str() {
                names.push(n.to_owned());
            }
        }
    }
    names
}

/// The name `agent` offers tool `tool` of MCP server `server` under ([`tool_name`]), for a
/// scripted call (the script lives as long as the model: a name per call, leaked).
fn mcp_tool(agent: &str, server: &str, tool: &str) -> &'static str {
    Box::leak(tool_name(agent, server, tool).into_boxed_str())
}

/// A scripted model whose conversation `marker` calls `tool` with `args`, then answers.
fn model_calling(marker: &str, tool: &'static str, args: Value) -> ScriptedModel {
    let model = ScriptedModel::start();
    model.script(
        marker,
        vec![Turn::Tool(tool, args), Turn::Text("Done.".into())],
    );
    model
}

/// The output of the first call of `canonical` in a test's result (empty without one).
fn call_output(test: &Value, canonical: &str) -> String {
    test["transcript"]["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["canonical"] == canonical)
        .and_then(|c| c["output"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// One run of `agent` whose model calls the `everything` server's `echo` with
/// `{"message": "hello-mcp"}` on `marker`, under `assertions` (YAML list items); the
/// model, and the run's exit code, results and stderr.
fn echo_run(
    agent: &Agent,
    server: &str,
    marker: &str,
    assertions: &str,
) -> (ScriptedModel, i32, Value, String) {
    let model = model_calling(
        marker,
        mcp_tool(agent.name, "everything", "echo"),
        json!({"message": "hello-mcp"}),
    );
    let suite = Suite::new();
    suite.file("tests/ws/keep.txt", "fixture\n").file(
        "tests/ws/mcp.aptitude.yaml",
        &format!(
            "name: mcp\nprompt: \"{marker}: echo it\"\nmcp_servers:\n  everything:\n    command: node\n    args: [{server:?}, stdio]\nassertions:\n{assertions}"
        ),
    );
    let (code, results, stderr) = run_on(&suite, &model, agent, &["--no-grade"]);
    (model, code, results, stderr)
}

/// The agents whose MCP wiring is verified here with the real CLI.
const MCP_AGENTS: &[&str] = &["claude", "codex", "gemini", "qwen", "copilot", "opencode"];

/// An agent aptitude can not give MCP servers to (pi has no MCP client) makes the test
/// `error` saying so, without running the agent.
#[test]
fn an_agent_without_mcp_is_an_error() {
    let agent = AGENTS
        .iter()
        .map(|a| a())
        .find(|a| a.name == "pi")
        .expect("pi is an agent under test");
    let model = ScriptedModel::start();
    let suite = Suite::new();
    suite.file(
        "tests/ws/mcp.aptitude.yaml",
        "name: mcp\nprompt: \"MCP-PI: echo it\"\nmcp_servers:\n  everything: {command: node, args: [x.js]}\nassertions:\n  - tool: mcp__everything__echo\n",
    );
    let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
    let test = &results["tests"][0];
    assert_eq!(test["status"], "error", "{stderr}\n{test:#}");
    assert_eq!(code, 1);
    let error = test["error"].as_str().unwrap_or("");
    assert!(
        error.contains("pi can not be given MCP servers") && error.contains("everything"),
        "{error}"
    );
    assert!(model.requests().is_empty(), "the agent must not run");
}

/// A `${VAR}` that aptitude's environment does not set makes the test `error` naming the
/// server, the value and the variable.
#[test]
fn a_missing_mcp_variable_is_an_error() {
    let agent = AGENTS.iter().map(|a| a()).next().expect("claude");
    let model = ScriptedModel::start();
    let suite = Suite::new();
    suite.file(
        "tests/ws/mcp.aptitude.yaml",
        "name: mcp\nprompt: \"MCP-VAR: echo it\"\nmcp_servers:\n  docs: {url: \"http://127.0.0.1:9/mcp\", headers: {Authorization: \"Bearer ${APTITUDE_TEST_UNSET_TOKEN}\"}}\nassertions:\n  - tool: mcp__docs__search\n",
    );
    let (_, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
    let test = &results["tests"][0];
    assert_eq!(test["status"], "error", "{stderr}\n{test:#}");
    assert_eq!(
        test["error"],
        "mcp_servers.docs.headers.Authorization: `${APTITUDE_TEST_UNSET_TOKEN}` is not set in aptitude's environment"
    );
}

/// An HTTP server that does not accept connections makes the test `error` of kind
/// `infra` naming it, before the agent starts (the model gets no request).
#[test]
fn an_http_mcp_server_that_does_not_answer_is_an_infra_error_before_the_agent_runs() {
    let agent = AGENTS.iter().map(|a| a()).next().expect("claude");
    let model = ScriptedModel::start();
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let suite = Suite::new();
    suite.file(
        "tests/ws/mcp.aptitude.yaml",
        &format!(
            "name: mcp\nprompt: \"MCP-DOWN: go\"\nmcp_servers:\n  remote: {{url: \"http://127.0.0.1:{closed}/mcp\"}}\nassertions:\n  - tool: mcp__remote__search\n"
        ),
    );
    let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
    let test = &results["tests"][0];
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(test["status"], "error", "{stderr}\n{test:#}");
    assert_eq!(test["error_kind"], "infra", "{test:#}");
    assert!(
        test["error"].as_str().unwrap_or("").starts_with(&format!(
            "MCP server `remote` at http://127.0.0.1:{closed}/mcp does not answer: "
        )),
        "{}",
        test["error"]
    );
    assert!(model.requests().is_empty(), "the agent must not run");
}

/// A stdio server that ignores SIGTERM and SIGHUP and never speaks MCP does not outlive
/// the run: it is the agent's child, in the run's containment, and is killed when the run
/// ends.
#[test]
fn an_mcp_server_never_outlives_the_run() {
    let agent = AGENTS.iter().map(|a| a()).next().expect("claude");
    let model = ScriptedModel::start();
    model.script("MCP-STUCK", vec![Turn::Text("done".into())]);
    let suite = Suite::new();
    let sleep = format!("sleep 3607.{}", std::process::id());
    // The server says it started in its working directory, the workspace copy (kept), the
    // one place of the host a sandboxed command writes.
    suite.file(
        "tests/ws/mcp.aptitude.yaml",
        &format!(
            "name: mcp\nprompt: \"MCP-STUCK: go\"\nenv: {{MCP_TIMEOUT: \"3000\"}}\nmcp_servers:\n  stuck:\n    command: sh\n    args: [\"-c\", \"trap '' TERM HUP INT; echo started > server.started; exec {sleep}\"]\nassertions:\n  - tool: Bash\n    called: false\n"
        ),
    );
    let (_, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade", "--keep-workspaces"]);
    let kept = results["tests"][0]["workspace"]
        .as_str()
        .unwrap_or_else(|| panic!("no kept workspace: {stderr}\n{results:#}"));
    assert!(
        std::path::Path::new(kept).join("server.started").exists(),
        "the server never started: {stderr}\n{results:#}"
    );
    assert!(
        crate::support::procs::running(&sleep).is_empty(),
        "the MCP server outlived the run"
    );
    let _ = std::fs::remove_dir_all(
        std::path::Path::new(kept)
            .parent()
            .unwrap_or(std::path::Path::new(kept)),
    );
}

/// A stdio server whose command does not exist makes the Claude Code run `error` of kind
/// `infra` naming the server and why it could not start.
#[test]
fn an_mcp_server_that_can_not_start_is_an_error() {
    let agent = AGENTS.iter().map(|a| a()).next().expect("claude");
    let model = ScriptedModel::start();
    model.script("MCP-GONE", vec![Turn::Text("done".into())]);
    let suite = Suite::new();
    suite.file(
        "tests/ws/mcp.aptitude.yaml",
        "name: mcp\nprompt: \"MCP-GONE: go\"\nmcp_servers:\n  gone: {command: /nonexistent/mcp-server}\nassertions:\n  - tool: Bash\n    called: false\n",
    );
    let (_, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade", "--record"]);
    let raw = std::fs::read_to_string(suite.path().join("tests/ws/mcp.transcript.jsonl"))
        .unwrap_or_default();
    let test = &results["tests"][0];
    assert_eq!(
        test["status"],
        "error",
        "{stderr}\n{test:#}\n{}",
        raw.lines().next().unwrap_or("")
    );
    assert_eq!(test["error_kind"], "infra", "{test:#}");
    let error = test["error"].as_str().unwrap_or("");
    assert!(
        error.starts_with(
            "MCP server `gone` could not start (exit status 127: command not found): "
        ) && error.contains("/nonexistent/mcp-server"),
        "{error}"
    );
}

/// The agents the MCP failure watch is checked on end to end (it is one mechanism in the
/// executor; three agents with different MCP clients show it does not depend on one).
const WATCHED_AGENTS: &[&str] = &["claude", "codex", "gemini"];

/// A stdio server that exits 1 with a message on stderr makes the test `error` of kind
/// `infra`, naming the server, its status and its stderr, on every watched agent — most
/// of which go on without the server and say nothing about it.
#[test]
fn an_mcp_server_that_exits_with_an_error_is_an_infra_error_on_every_agent() {
    let mut failures = Vec::new();
    for agent in AGENTS.iter().map(|a| a()) {
        if !WATCHED_AGENTS.contains(&agent.name) {
            continue;
        }
        let marker = format!("MCP-BROKEN-{}", agent.name.to_uppercase());
        let model = ScriptedModel::start();
        model.script(&marker, vec![Turn::Text("done".into())]);
        let suite = Suite::new();
        suite.file("tests/ws/keep.txt", "fixture\n").file(
            "tests/ws/mcp.aptitude.yaml",
            &format!(
                "name: mcp\nprompt: \"{marker}: go\"\nmcp_servers:\n  docs:\n    command: sh\n    args: [\"-c\", \"echo 'docs index missing' >&2; exit 1\"]\nassertions:\n  - tool: Bash\n    called: false\n"
            ),
        );
        let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
        let test = &results["tests"][0];
        let ok = code == 1
            && test["status"] == "error"
            && test["error_kind"] == "infra"
            && test["error"].as_str().is_some_and(|e| {
                e.contains("MCP server `docs` exited with status 1: docs index missing")
            });
        if !ok {
            failures.push(format!(
                "{}: exit {code}, status {}, kind {}, error {}\n{stderr}",
                agent.name, test["status"], test["error_kind"], test["error"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs the suite's tests on Claude Code against `model` with `var` set in aptitude's
/// environment (and nothing else of the test process's but `PATH`); returns its stderr and
/// the results file's text.
fn run_claude(suite: &Suite, model: &ScriptedModel, var: (&str, &str)) -> (String, String) {
    let home = suite.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = assert_cmd::Command::cargo_bin("aptitude")
        .unwrap()
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env("ANTHROPIC_API_KEY", "sk-ant-test-scripted")
        .env(var.0, var.1)
        .current_dir(suite.path())
        .args(["run", "tests", "--agent", "claude", "--agent-bin"])
        .arg(format!("claude={}", crate::support::claude_bin().display()))
        .arg("--agent-base-url")
        .arg(format!("claude={}", model.base_url()))
        .args(["--model", "fake-model", "--no-grade", "--json"])
        .arg(suite.results_path())
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let text = crate::support::results_text(suite.results_path()).unwrap_or_default();
    (String::from_utf8_lossy(&out.stderr).into_owned(), text)
}

/// A value expanded from `${VAR}` reaches the server (its `get-env` tool shows it) and is
/// redacted from the results, although the variable's name does not look secret.
#[test]
fn expanded_values_reach_the_server_and_are_redacted() {
    let server = server_everything();
    let model = model_calling("MCP-ENV", "mcp__everything__get-env", json!({}));
    let suite = Suite::new();
    suite.file(
        "tests/ws/mcp.aptitude.yaml",
        &format!(
            "name: mcp\nprompt: \"MCP-ENV: show the env\"\nmcp_servers:\n  everything:\n    command: node\n    args: [{server:?}, stdio]\n    env: {{DOCS_SETTING: \"v=${{APTITUDE_TEST_PLAIN_VALUE}}\"}}\nassertions:\n  - tool: mcp__everything__get-env\n"
        ),
    );
    let (stderr, text) = run_claude(
        &suite,
        &model,
        ("APTITUDE_TEST_PLAIN_VALUE", "plain-but-secret-4711"),
    );
    let results: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let test = &results["tests"][0];
    assert_eq!(test["status"], "passed", "{}\n{test:#}", stderr);
    assert!(
        text.contains("DOCS_SETTING") && text.contains("v=[REDACTED]"),
        "the server saw the value and the results redact it: {text}"
    );
    assert!(!text.contains("plain-but-secret-4711"));
}

/// A test whose `tickets` server is a `mock:` with one tool, `create_ticket`, whose
/// `expect:` wants `title` to contain `wanted`.
fn mock_test(marker: &str, wanted: &str) -> String {
    format!(
        "name: mock\nprompt: \"{marker}: open a ticket\"\nmcp_servers:\n  tickets:\n    mock:\n      tools:\n        create_ticket:\n          description: Open a ticket in the tracker\n          input_schema: {{type: object, properties: {{title: {{type: string}}}}, required: [title]}}\n          replies: [\"Created TICKET-42\", \"Created TICKET-43\"]\n          expect:\n            title: {{contains: {wanted}}}\nassertions:\n  - tool: mcp__tickets__create_ticket\n"
    )
}

/// The `tickets` server of the record-and-replay test: a `mock:` aptitude serves, with one
/// tool, `create_ticket`, whose `expect:` wants `title` to contain `login`.
const MOCK_SERVER: &str = "  tickets:\n    mock:\n      tools:\n        create_ticket:\n          description: Open a ticket in the tracker\n          input_schema: {type: object, properties: {title: {type: string}}, required: [title]}\n          replies: [\"Created TICKET-42\", \"Created TICKET-43\"]\n          expect:\n            title: {contains: login}\n";

/// Whether `test`'s `expect:` assertion (a mock's) passed.
fn expect_passed(test: &Value) -> bool {
    test["assertions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["kind"] == "expect")
        .is_some_and(|e| e["status"] == "pass")
}

/// The agents that offer every MCP tool's schema to the model in each request. Claude Code
/// 2.1 and Qwen Code 0.24 defer MCP tools (the model sees their names and loads a schema
/// with a tool search first), so their schemas cross the gateway only once loaded.
const MCP_SCHEMA_UP_FRONT: &[&str] = &["codex", "gemini", "copilot", "opencode"];

/// A guardrail on a real MCP server's tool with a key its `tools/list` schema lacks
/// (`mesage` for `message`) could never match a call, so it would pass forever: it is
/// `error`, read from the schemas the requests offered the model, while the same guardrail
/// spelt right fails on the call the agent made. (A `mock:` server's schema is known at
/// load: there the key is a load error, `spec::load`'s tests.)
#[test]
fn an_mcp_parameter_the_servers_schema_lacks_is_an_error() {
    let server = server_everything();
    let mut failures = Vec::new();
    for agent in AGENTS.iter().map(|a| a()) {
        if !MCP_SCHEMA_UP_FRONT.contains(&agent.name) {
            continue;
        }
        let marker = format!("MCP-MESAGE-{}", agent.name.to_uppercase());
        let (_, _, results, stderr) = echo_run(
            &agent,
            &server,
            &marker,
            "  - tool: mcp__everything__echo\n    called: false\n    params: {mesage: \"*hello*\"}\n  - tool: mcp__everything__echo\n    called: false\n    params: {message: \"*hello*\"}\n",
        );
        let test = &results["tests"][0];
        let statuses: Vec<&str> = test["assertions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| a["status"].as_str().unwrap_or(""))
            .collect();
        let detail = test["assertions"][0]["detail"].as_str().unwrap_or("");
        if statuses != ["error", "fail"] || !detail.contains("no parameter `mesage`") {
            failures.push(format!(
                "{}: {statuses:?} {detail}\nmcp_params: {}\n{stderr}",
                agent.name, test["transcript"]["mcp_params"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// An input the mock's `expect:` does not accept fails the test, on the `expect:` line,
/// saying what the mock received; the agent still got the scripted reply.
#[test]
fn a_mock_whose_expectation_is_not_met_fails_the_test() {
    let agent = AGENTS.iter().map(|a| a()).next().expect("claude");
    let model = model_calling(
        "MOCK-UNMET",
        "mcp__tickets__create_ticket",
        json!({"title": "logout is slow"}),
    );
    let suite = Suite::new();
    suite.file("tests/ws/keep.txt", "fixture\n").file(
        "tests/ws/mock.aptitude.yaml",
        &mock_test("MOCK-UNMET", "login"),
    );
    let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
    let test = &results["tests"][0];
    assert_eq!(test["status"], "failed", "{stderr}\n{test:#}");
    assert_eq!(code, 1);
    let expect = test["assertions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["kind"] == "expect")
        .cloned()
        .unwrap_or_else(|| panic!("no expect result: {test:#}"));
    assert_eq!(expect["status"], "fail");
    assert_eq!(expect["line"], 11, "the line of `expect:`");
    let detail = expect["detail"].as_str().unwrap_or("");
    assert!(detail.contains("logout is slow"), "{detail}");
}

/// Records a run of `agent` calling the real server's `echo` on both transports — the
/// stdio server `everything` and the streamable HTTP server `remote`, reached through
/// aptitude's front — then replays it with the stdio server's command gone and the HTTP
/// server stopped; returns the recording's cassette (relative to the suite) or what went
/// wrong.
fn tape_and_replay(agent: &crate::agents::Agent) -> Result<(Suite, String), String> {
    let server = server_everything();
    let http = HttpEverything::start();
    let marker = format!("MCP-TAPE-{}", agent.name.to_uppercase());
    let model = ScriptedModel::start();
    model.script(
        &marker,
        vec![
            Turn::Tool(
                mcp_tool(agent.name, "everything", "echo"),
                json!({"message": "taped"}),
            ),
            Turn::Tool(
                mcp_tool(agent.name, "remote", "echo"),
                json!({"message": "over-http"}),
            ),
            Turn::Tool(
                mcp_tool(agent.name, "tickets", "create_ticket"),
                json!({"title": "login fails on Safari"}),
            ),
            Turn::Text("Done.".into()),
        ],
    );
    let port = http.port;
    let test_file = |command: &str| {
        format!(
            "name: mcp\nprompt: \"{marker}: echo it\"\nmcp_servers:\n  everything:\n    command: {command}\n    args: [{server:?}, stdio]\n  remote: {{url: \"http://127.0.0.1:{port}/mcp\", headers: {{X-Team: aptitude}}}}\n{MOCK_SERVER}assertions:\n  - tool: mcp__everything__echo\n    params: {{message: taped}}\n  - tool: mcp__remote__echo\n    params: {{message: over-http}}\n  - tool: mcp__tickets__create_ticket\n"
        )
    };
    let suite = Suite::new();
    suite
        .file("tests/ws/keep.txt", "fixture\n")
        .file("tests/ws/mcp.aptitude.yaml", &test_file("node"));
    let (code, recorded, stderr) = run_on(&suite, &model, agent, &["--no-grade", "--record-model"]);
    // The live run: both servers reached, each model call recorded under its canonical
    // name with its parameters (the assertions), and each tool's output the server's
    // real reply.
    let test = &recorded["tests"][0];
    let replied = |canonical: &str, reply: &str| {
        test["transcript"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["canonical"] == canonical)
            .is_some_and(|c| {
                c["output"].as_str().unwrap_or("").contains(reply) && c["is_error"] == false
            })
    };
    if code != 0
        || test["status"] != "passed"
        || !replied("mcp__everything__echo", "Echo: taped")
        || !replied("mcp__remote__echo", "Echo: over-http")
        || !replied("mcp__tickets__create_ticket", "Created TICKET-42")
        || !expect_passed(test)
    {
        let offered: Vec<Vec<String>> = model
            .requests_for(&marker)
            .iter()
            .map(|r| offered_tools(&r.body))
            .collect();
        return Err(format!(
            "recording: exit {code}, status {}, offered tools {offered:?}\n{stderr}\n{:#}",
            test["status"], test
        ));
    }
    let kept = suite.path().join("recorded.json");
    crate::support::copy_results(suite.results_path(), &kept);
    let cassette = recorded["tests"][0]["model_traffic"]["cassette"]["file"]
        .as_str()
        .ok_or_else(|| format!("no cassette: {recorded:#}"))?
        .to_owned();
    let requests = model.requests().len();

    // Neither server can answer any more: only the recording can.
    drop(http);
    suite.file(
        "tests/ws/mcp.aptitude.yaml",
        &test_file("no-such-mcp-server"),
    );
    let (code, replayed, stderr) = run_on(
        &suite,
        &model,
        agent,
        &["--no-grade", "--replay", kept.to_str().unwrap()],
    );
    let test = &replayed["tests"][0];
    let stdio = call_output(test, "mcp__everything__echo");
    let remote = call_output(test, "mcp__remote__echo");
    let mock = call_output(test, "mcp__tickets__create_ticket");
    if code != 0
        || !stdio.contains("Echo: taped")
        || !remote.contains("Echo: over-http")
        || !mock.contains("Created TICKET-42")
        || !expect_passed(test)
        || model.requests().len() != requests
    {
        return Err(format!(
            "replay: exit {code}, echo outputs {stdio:?} and {remote:?}, mock output {mock:?}, model requests {} (recorded {requests})\n{stderr}\n{:#}",
            model.requests().len(),
            test["error"]
        ));
    }
    Ok((suite, cassette))
}

/// On every agent with an MCP client, the live run calls a real MCP server on each
/// transport: over stdio (its `echo` recorded as `mcp__everything__echo`, with its
/// parameters and the server's own reply) and over streamable HTTP, reached through
/// aptitude's front (the agent is given the front's URL; the test's headers stay outside
/// the sandbox); and a `mock:` server aptitude serves, offered with its tool, answering
/// the model's call with the scripted reply (which the transcript shows), its `expect:`
/// passing on the input the mock received. `--record-model` records the real servers'
/// traffic, and `--replay` answers the agent's MCP requests from it: the replay passes
/// with the servers' recorded replies although neither server can answer any more, and
/// asks no model. Then a mock `from:` the
/// Claude Code run's cassette serves the recorded tool and reply to a live run, without
/// the server. The agents run one after another: side by side (6 agents on 2 cores) the
/// MCP handshakes were slow enough that Gemini CLI 0.61 sent its first request before the
/// replayed server's tools were discovered (a divergence), and Qwen Code's 5 s discovery
/// ran out.
#[test]
fn a_real_mcp_servers_traffic_is_recorded_replayed_and_served_by_a_mock() {
    let mut failures = Vec::new();
    let mut claude = None;
    for agent in AGENTS.iter().map(|a| a()) {
        if !MCP_AGENTS.contains(&agent.name) {
            continue;
        }
        match tape_and_replay(&agent) {
            Ok(taped) if agent.name == "claude" => claude = Some((agent, taped)),
            Ok(_) => {}
            Err(why) => failures.push(format!("{}: {why}", agent.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    let (agent, (suite, cassette)) = claude.expect("claude has an MCP client");

    // A mock answering from the cassette, against the live model.
    let model = model_calling("MCP-FROM", "mcp__docs__echo", json!({"message": "taped"}));
    suite.file(
        "tests/ws/mcp.aptitude.yaml",
        &format!(
            "name: mcp\nprompt: \"MCP-FROM: echo it\"\nmcp_servers:\n  docs:\n    mock: {{from: ../../{cassette}, server: everything}}\nassertions:\n  - tool: mcp__docs__echo\n"
        ),
    );
    let (code, mocked, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
    let test = &mocked["tests"][0];
    assert_eq!(code, 0, "mock from the recording\n{stderr}\n{test:#}");
    let echo = call_output(test, "mcp__docs__echo");
    assert!(echo.contains("Echo: taped"), "{echo}\n{test:#}");
}

/// The pinned server on its streamable HTTP transport, on a free port of 127.0.0.1;
/// stopped when dropped.
struct HttpEverything {
    child: std::process::Child,
    port: u16,
}

impl HttpEverything {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new("node")
            .arg(server_everything())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("node starts");
        // Waits for the port, not for a time: the server listens once it has loaded.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the HTTP server did not listen"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        HttpEverything { child, port }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP server's `headers` (a token expanded from aptitude's environment) are put on
/// by aptitude's front outside the sandbox: the server gets them, and nothing the agent
/// can read holds them — its MCP configuration names the front, not the server.
#[test]
fn an_http_servers_headers_never_enter_the_sandbox() {
    let server = HttpEverything::start();
    let token = "mcp-header-token-5309";
    let reversed: String = token.chars().rev().collect();
    let model = ScriptedModel::start();
    model.script(
        "MCP-HEADERS",
        vec![
            Turn::Tool("mcp__remote__echo", json!({"message": "hi"})),
            // Searches what the agent can read for the token, spelt so that the command
            // itself (kept in the agent's own session files) does not hold it.
            Turn::Tool(
                "Bash",
                json!({"command": format!("t=$(echo {reversed} | rev); grep -rlF \"$t\" \"$HOME\" \"$PWD\" /tmp 2>/dev/null; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -cF \"$t\"; echo searched"), "description": "search"}),
            ),
            Turn::Text("done".into()),
        ],
    );
    let suite = Suite::new();
    suite.file("tests/ws/keep.txt", "fixture\n").file(
        "tests/ws/mcp.aptitude.yaml",
        &format!(
            "name: mcp\nprompt: \"MCP-HEADERS: go\"\nmcp_servers:\n  remote: {{url: \"http://127.0.0.1:{}/mcp\", headers: {{Authorization: \"Bearer ${{APTITUDE_TEST_MCP_TOKEN}}\"}}}}\nassertions:\n  - tool: mcp__remote__echo\n",
            server.port
        ),
    );
    let (stderr, text) = run_claude(&suite, &model, ("APTITUDE_TEST_MCP_TOKEN", token));
    let results: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let test = &results["tests"][0];
    assert_eq!(test["status"], "passed", "{}\n{test:#}", stderr);
    let search = call_output(test, "Bash");
    assert!(search.contains("searched"), "the search ran: {search}");
    assert_eq!(
        search.trim().lines().collect::<Vec<_>>(),
        ["0", "searched"],
        "no file and no process environment inside holds the token"
    );
    assert!(!text.contains(token));
}

/// A cassette with a stdio MCP server's traffic, kept as a fixture (recorded once with
/// Claude Code and the pinned server, on another machine and aptitude build), still
/// replays: the test passes with the recorded reply, the server never starts, and the
/// model is never asked. `UPDATE_CASSETTES=1` records it again.
#[test]
fn the_kept_mcp_cassette_replays() {
    let agent = AGENTS.iter().map(|a| a()).next().expect("claude");
    let fixture = crate::support::data("cassettes").join("claude-mcp");
    let test_file = |command: &str, script: &str| {
        format!(
            "name: mcp\nprompt: \"KEPT-MCP: echo it\"\nmcp_servers:\n  everything:\n    command: {command}\n    args: [{script:?}, stdio]\nassertions:\n  - tool: mcp__everything__echo\n    params: {{message: kept}}\n"
        )
    };
    if std::env::var_os("UPDATE_CASSETTES").is_some() {
        let model = model_calling(
            "KEPT-MCP",
            "mcp__everything__echo",
            json!({"message": "kept"}),
        );
        let suite = Suite::new();
        suite.file("tests/ws/keep.txt", "fixture\n").file(
            "tests/ws/mcp.aptitude.yaml",
            &test_file("node", &server_everything()),
        );
        let (code, _, stderr) = run_on(&suite, &model, &agent, &["--no-grade", "--record-model"]);
        assert_eq!(code, 0, "{stderr}");
        let _ = std::fs::remove_dir_all(&fixture);
        crate::cassettes::copy_tree(
            &suite.path().join("results.cassettes"),
            &fixture.join("results.cassettes"),
        );
        // Kept inline: a committed fixture has no blob pack beside it.
        std::fs::write(
            fixture.join("recorded.json"),
            crate::support::results_text(suite.results_path()).unwrap(),
        )
        .unwrap();
    }
    let suite = Suite::new();
    suite.file("tests/ws/keep.txt", "fixture\n").file(
        "tests/ws/mcp.aptitude.yaml",
        &test_file("no-such-mcp-server", "gone.js"),
    );
    let (model, code, results, stderr) = crate::cassettes::replay_kept(&fixture, &suite, &agent);
    let test = &results["tests"][0];
    assert_eq!(code, 0, "{stderr}\n{test:#}");
    let echo = call_output(test, "mcp__everything__echo");
    assert!(echo.contains("Echo: kept"), "{echo}");
    assert!(model.requests().is_empty(), "the model was asked");
}

/// A hostile agent plants a FIFO and links to a host file where the watch and the tap keep
/// a stdio server's records (the directory is writable from the sandbox, and named in the
/// server's command line): the run still ends, its server's crash check and its recording
/// read nothing through them, and no host file's content reaches any output.
#[test]
fn records_an_agent_planted_in_the_mcp_watch_dir_are_not_followed() {
    let agent = AGENTS.iter().map(|a| a()).next().expect("claude");
    let server = server_everything();
    let plant = "for d in $(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -o '^/.*/aptitude-mcp-[A-Za-z0-9]*' | sort -u); do mkfifo \"$d/everything.status\" \"$d/everything.tap.1\"; ln -s /etc/passwd \"$d/everything.tap.2\"; ln -sf /etc/passwd \"$d/everything.stderr\"; echo \"planted in $d\"; done";
    let model = ScriptedModel::start();
    model.script(
        "MCP-PLANT",
        vec![
            Turn::Tool("Bash", json!({"command": plant, "description": "plant"})),
            Turn::Tool("mcp__everything__echo", json!({"message": "still here"})),
            Turn::Text("Done.".into()),
        ],
    );
    let suite = Suite::new();
    suite.file("tests/ws/keep.txt", "fixture\n").file(
        "tests/ws/mcp.aptitude.yaml",
        &format!(
            "name: mcp\nprompt: \"MCP-PLANT: go\"\nmcp_servers:\n  everything:\n    command: node\n    args: [{server:?}, stdio]\nassertions:\n  - tool: mcp__everything__echo\n"
        ),
    );
    let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade", "--record-model"]);
    let test = &results["tests"][0];
    let planted = call_output(test, "Bash");
    assert!(
        planted.contains("planted in /") && planted.contains("/aptitude-mcp-"),
        "the attack ran: {planted}\n{stderr}"
    );
    assert_eq!(code, 0, "{stderr}\n{test:#}");
    assert!(call_output(test, "mcp__everything__echo").contains("Echo: still here"));
    let mut outputs = crate::support::results_text(suite.results_path()).unwrap_or_default();
    for entry in std::fs::read_dir(suite.path().join("results.cassettes"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let mut json = String::new();
        use std::io::Read;
        flate2::read::GzDecoder::new(std::fs::File::open(entry.path()).unwrap())
            .read_to_string(&mut json)
            .unwrap();
        outputs.push_str(&json);
    }
    assert!(
        !outputs.contains("root:x:0:0"),
        "a host file reached an output"
    );
}
