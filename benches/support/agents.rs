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
