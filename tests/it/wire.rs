//! The scripted model speaks each provider's wire protocol as the real agent CLIs do: each
//! pinned CLI (`package-lock.json`, installed by `scripts/test`) runs headless against it,
//! makes the scripted shell tool call in a scratch workspace, sends the command's output
//! back and prints the scripted final answer. These tests protect the test double itself;
//! the agents' adapters are tested through `aptitude run`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::support::cli::Aptitude;
use crate::support::model::{ScriptedModel, Turn};
use crate::support::root;

/// A pinned agent CLI from `node_modules/.bin`.
fn cli(name: &str) -> PathBuf {
    let bin = root().join("node_modules/.bin").join(name);
    assert!(
        bin.exists(),
        "{} is missing: run `scripts/test` (it installs the pinned agent CLIs with `npm ci`)",
        bin.display()
    );
    bin
}

/// A scratch workspace and a home directory for one CLI run.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::create_dir_all(dir.path().join("home")).unwrap();
        Scratch { dir }
    }

    fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// A command for `bin` in the workspace, through the CLI harness: a cleared environment
    /// but for `PATH`, this home (and a temp dir beside it), no stdin.
    fn command(&self, bin: &Path) -> Aptitude {
        let mut cmd = Aptitude::agent_cli(bin);
        cmd.sandbox_in(self.dir.path())
            .inherit_path()
            .current_dir(self.workspace())
            .limit(Duration::from_secs(120));
        cmd
    }
}

/// Runs `cmd`, asserts it exited 0, and returns its stdout.
fn run_ok(cmd: &mut Aptitude) -> String {
    let out = cmd.output();
    out.code(0);
    out.stdout
}

/// What every protocol must carry: the shell call ran in the workspace, its output went
/// back to the model on the next request, and the final answer reached stdout.
fn assert_round_trip(model: &ScriptedModel, marker: &str, scratch: &Scratch, stdout: &str) {
    let made = std::fs::read_to_string(scratch.workspace().join("made.txt")).unwrap();
    assert_eq!(
        made.trim(),
        "wire-ok",
        "the scripted command ran in the workspace"
    );
    let requests = model.requests_for(marker);
    // Turn 0 may be asked twice: opencode first asks for a title, offering no tools.
    let turns: Vec<(usize, bool)> = requests.iter().map(|r| (r.turn, r.has_tools)).collect();
    assert!(
        turns.contains(&(0, true)) && turns.contains(&(1, true)),
        "{turns:?}"
    );
    let second = requests.iter().find(|r| r.turn == 1).unwrap();
    assert!(
        second.body.to_string().contains("wire-ok"),
        "the tool's output went back to the model: {}",
        second.body
    );
    assert!(stdout.contains("all done"), "{stdout}");
}

const COMMAND: &str = "echo wire-ok > made.txt && cat made.txt";

/// A scripted model whose conversation `marker` calls the agent's shell tool `tool` with
/// `args` (plus `extra` fields), then answers "all done"; and a scratch workspace.
fn shell_call_script(
    marker: &str,
    tool: &'static str,
    command_key: &str,
    extra: serde_json::Value,
) -> (ScriptedModel, Scratch) {
    let model = ScriptedModel::start();
    let mut args = json!({ command_key: COMMAND });
    if let (Some(args), Some(extra)) = (args.as_object_mut(), extra.as_object()) {
        args.extend(extra.clone());
    }
    model.script(
        marker,
        vec![Turn::Tool(tool, args), Turn::Text("all done".into())],
    );
    (model, Scratch::new())
}

#[test]
fn codex_speaks_the_responses_api() {
    let marker = "WIRE-CODEX";
    let (model, scratch) = shell_call_script(marker, "exec_command", "cmd", json!({}));
    std::fs::create_dir_all(scratch.home().join(".codex")).unwrap();
    let provider = format!(
        "model_providers.fake={{name=\"Fake\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"FAKE_API_KEY\",request_max_retries=0,stream_max_retries=0}}",
        model.base_url()
    );
    let stdout = run_ok(
        scratch
            .command(&cli("codex"))
            .env("CODEX_HOME", scratch.home().join(".codex"))
            .env("FAKE_API_KEY", "sk-test")
            .args([
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
                "-m",
                "fake-model",
                "-c",
                "model_provider=fake",
                "-c",
                &provider,
            ])
            .arg(format!("{marker}: make the file")),
    );
    assert!(
        stdout.contains("\"type\":\"command_execution\""),
        "{stdout}"
    );
    assert_round_trip(&model, marker, &scratch, &stdout);
}

#[test]
fn gemini_cli_speaks_stream_generate_content() {
    let marker = "WIRE-GEMINI";
    let (model, scratch) = shell_call_script(marker, "run_shell_command", "command", json!({}));
    let settings = scratch.home().join(".gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        json!({"security": {"auth": {"selectedType": "gemini-api-key"}},
               "privacy": {"usageStatisticsEnabled": false},
               "telemetry": {"enabled": false}, "general": {"maxAttempts": 1}})
        .to_string(),
    )
    .unwrap();
    let stdout = run_ok(
        scratch
            .command(&cli("gemini"))
            .env("GEMINI_CLI_HOME", scratch.home())
            .env("GOOGLE_GEMINI_BASE_URL", model.base_url())
            .env("GEMINI_API_KEY", "sk-test")
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .arg("-p")
            .arg(format!("{marker}: make the file"))
            .args([
                "-m",
                "gemini-fake",
                "--output-format",
                "stream-json",
                "--yolo",
            ]),
    );
    assert!(stdout.contains("\"type\":\"tool_use\""), "{stdout}");
    assert_round_trip(&model, marker, &scratch, &stdout);
}

#[test]
fn qwen_code_speaks_chat_completions() {
    let marker = "WIRE-QWEN";
    let (model, scratch) = shell_call_script(marker, "run_shell_command", "command", json!({}));
    let stdout = run_ok(
        scratch
            .command(&cli("qwen"))
            .env("QWEN_HOME", scratch.home().join(".qwen"))
            .env("OPENAI_BASE_URL", format!("{}/v1", model.base_url()))
            .env("OPENAI_API_KEY", "sk-test")
            .args([
                "--auth-type",
                "openai",
                "-m",
                "fake-model",
                "-o",
                "stream-json",
                "--yolo",
            ])
            .arg(format!("{marker}: make the file")),
    );
    assert!(stdout.contains("\"tool_use\""), "{stdout}");
    assert_round_trip(&model, marker, &scratch, &stdout);
}

#[test]
fn opencode_speaks_chat_completions() {
    let marker = "WIRE-OPENCODE";
    let (model, scratch) = shell_call_script(
        marker,
        "bash",
        "command",
        json!({"description": "make the file"}),
    );
    let config = json!({
        "model": "fake/fake-model",
        "provider": {"fake": {"npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": format!("{}/v1", model.base_url()), "apiKey": "sk-test"},
            "models": {"fake-model": {"tool_call": true}}}},
        "permission": {"*": "allow"}
    });
    let xdg = |kind: &str| scratch.home().join(kind);
    let stdout = run_ok(
        scratch
            .command(&cli("opencode"))
            .env("XDG_CONFIG_HOME", xdg("config"))
            .env("XDG_DATA_HOME", xdg("data"))
            .env("XDG_CACHE_HOME", xdg("cache"))
            .env("XDG_STATE_HOME", xdg("state"))
            .env("OPENCODE_CONFIG_CONTENT", config.to_string())
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
            .args(["run", "--format", "json", "--pure"])
            .arg(format!("{marker}: make the file")),
    );
    assert!(stdout.contains("\"tool_use\""), "{stdout}");
    assert_round_trip(&model, marker, &scratch, &stdout);
}

#[test]
fn pi_speaks_chat_completions() {
    let marker = "WIRE-PI";
    let (model, scratch) = shell_call_script(marker, "bash", "command", json!({}));
    let agent_dir = scratch.home().join(".pi");
    std::fs::create_dir_all(&agent_dir).unwrap();
    std::fs::write(
        agent_dir.join("models.json"),
        json!({"providers": {"fake": {"baseUrl": format!("{}/v1", model.base_url()),
            "api": "openai-completions", "apiKey": "sk-test",
            "compat": {"supportsDeveloperRole": false},
            "models": [{"id": "fake-model"}]}}})
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        agent_dir.join("settings.json"),
        json!({"retry": {"enabled": false, "provider": {"maxRetries": 0}}}).to_string(),
    )
    .unwrap();
    let stdout = run_ok(
        scratch
            .command(&cli("pi"))
            .env("PI_CODING_AGENT_DIR", &agent_dir)
            .env("PI_OFFLINE", "1")
            .env("PI_TELEMETRY", "0")
            .args([
                "--provider",
                "fake",
                "--model",
                "fake-model",
                "--mode",
                "json",
                "-p",
            ])
            .arg(format!("{marker}: make the file")),
    );
    assert!(stdout.contains("tool_execution_end"), "{stdout}");
    assert_round_trip(&model, marker, &scratch, &stdout);
}

#[test]
fn copilot_speaks_chat_completions() {
    let marker = "WIRE-COPILOT";
    let (model, scratch) = shell_call_script(
        marker,
        "bash",
        "command",
        json!({"description": "make the file"}),
    );
    let stdout = run_ok(
        scratch
            .command(&cli("copilot"))
            .env("COPILOT_HOME", scratch.home().join(".copilot"))
            // Copilot unpacks ~235 MB into its cache on first run: one cache for every run.
            .env(
                "XDG_CACHE_HOME",
                std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("copilot-cache"),
            )
            .env("COPILOT_OFFLINE", "true")
            .env(
                "COPILOT_PROVIDER_BASE_URL",
                format!("{}/v1", model.base_url()),
            )
            .env("COPILOT_PROVIDER_API_KEY", "sk-test")
            .env("COPILOT_MODEL", "fake-model")
            .arg("-p")
            .arg(format!("{marker}: make the file"))
            .args(["--allow-all", "--output-format", "json", "--no-auto-update"]),
    );
    assert!(stdout.contains("tool.execution_complete"), "{stdout}");
    assert_round_trip(&model, marker, &scratch, &stdout);
}
