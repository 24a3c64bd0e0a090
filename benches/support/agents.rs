//! The agents the run benchmarks measure against the scripted model (`run_overhead`,
//! `replay_speed`): each one's shell tool, as its CLI names it, and its endpoint's path.

/// An agent measured: its name, its shell tool and that tool's command key, extra tool
/// arguments, and the path its protocol puts after the server's base URL.
pub struct Bench {
    /// The agent's name.
    pub name: &'static str,
    /// Its shell tool.
    pub shell: &'static str,
    /// The shell tool's command argument.
    pub key: &'static str,
    /// Other arguments of the tool call.
    pub extra: serde_json::Value,
    /// The path after the scripted model's base URL.
    pub base_path: &'static str,
}

/// Every agent the benchmarks run, in the registry's order.
pub fn benches() -> Vec<Bench> {
    let b = |name, shell, key, extra, base_path| Bench {
        name,
        shell,
        key,
        extra,
        base_path,
    };
    let none = serde_json::json!({});
    let described = serde_json::json!({"description": "write it"});
    vec![
        b("claude", "Bash", "command", described.clone(), ""),
        b("codex", "exec_command", "cmd", none.clone(), "/v1"),
        b("gemini", "run_shell_command", "command", none.clone(), ""),
        b("qwen", "run_shell_command", "command", none.clone(), "/v1"),
        b("copilot", "bash", "command", described.clone(), "/v1"),
        b("opencode", "bash", "command", described, "/v1"),
        b("pi", "bash", "command", none, "/v1"),
    ]
}

/// The environment a benchmark's aptitude runs with: nothing of the caller's but `PATH`,
/// a private `HOME`, placeholder keys for every agent, and the shared Copilot cache.
pub fn bench_env(home: &std::path::Path) -> Vec<(&'static str, String)> {
    vec![
        ("HOME", home.display().to_string()),
        ("PATH", std::env::var("PATH").unwrap_or_default()),
        ("ANTHROPIC_API_KEY", "sk-ant-bench".to_owned()),
        ("OPENAI_API_KEY", "sk-bench-openai".to_owned()),
        ("GEMINI_API_KEY", "sk-bench-gemini".to_owned()),
        ("COPILOT_PROVIDER_API_KEY", "sk-bench-copilot".to_owned()),
        (
            "XDG_CACHE_HOME",
            std::env::temp_dir()
                .join("aptitude-tests-copilot-cache")
                .display()
                .to_string(),
        ),
    ]
}

/// `aptitude run tests --no-grade --jobs JOBS` in `dir` with only `env`, on `bench`'s
/// agent at `bin` talking to `base_url` (model `fake-model`), results to `json` when given;
/// its stdout dropped.
pub fn aptitude_run(
    dir: &std::path::Path,
    env: &[(&str, String)],
    (bench, bin, base_url): (&Bench, &std::path::Path, &str),
    jobs: usize,
    json: Option<&str>,
) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_aptitude"));
    command
        .env_clear()
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .current_dir(dir)
        .args(["run", "tests", "--no-grade", "--jobs", &jobs.to_string()])
        .args(["--agent", bench.name, "--model", "fake-model"])
        .args(json.map(|j| ["--json", j]).into_iter().flatten())
        .arg("--agent-bin")
        .arg(format!("{}={}", bench.name, bin.display()))
        .arg("--agent-base-url")
        .arg(format!("{}={base_url}", bench.name))
        .stdout(std::process::Stdio::null());
    command
}
