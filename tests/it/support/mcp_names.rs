//! The names each agent CLI offers an MCP server's tool under, as it sends them to the
//! model (seen in the scripted model's captured requests): what a scripted tool call of
//! an MCP tool must use.

/// The name `agent` offers tool `tool` of server `server` under.
pub fn tool_name(agent: &str, server: &str, tool: &str) -> String {
    match agent {
        "claude" | "qwen" => format!("mcp__{server}__{tool}"),
        "codex" => format!("mcp__{server}::{tool}"),
        "gemini" => format!("mcp_{server}_{tool}"),
        "copilot" => format!("{server}-{tool}"),
        "opencode" => format!("{server}_{tool}"),
        _ => tool.to_owned(),
    }
}
