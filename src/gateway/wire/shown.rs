//! The tools each model request offered, with their parameter names: what an MCP server's
//! `tools/list` said, as the agent passed it on to the model. A `tool:` assertion on an MCP
//! tool is checked against it at run time (a parameter the tool's schema lacks could never
//! match, so the assertion is `error`, never a pass).
//!
//! | protocol | where a request lists its tools |
//! |---|---|
//! | Anthropic Messages | `tools[]` {name, input_schema} |
//! | OpenAI Responses | `tools[]` {name, parameters}; Codex CLI 0.169's `namespace` items {name, tools[]} → `<namespace>__<tool>` |
//! | OpenAI Chat Completions | `tools[]` {function {name, parameters}} |
//! | Gemini | `tools[].functionDeclarations[]` {name, parameters or parametersJsonSchema} |

use std::collections::BTreeMap;

use serde_json::Value;

/// The most tools kept per run (an agent offers a few dozen; the bound keeps a hostile
/// request from growing the map without end).
pub const MAX_TOOLS: usize = 2_000;

/// Tools offered to the model, by the name the model was shown: the names of their
/// schema's `properties`, or `None` when the schema lists none (any key may be meant).
pub type ShownTools = BTreeMap<String, Option<Vec<String>>>;

/// Adds the tools the request `body` (its JSON) offers to `shown`.
pub fn note_tools(shown: &mut ShownTools, body: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let Some(tools) = value.get("tools").and_then(Value::as_array) else {
        return;
    };
    for tool in tools {
        if let Some(declarations) = tool.get("functionDeclarations").and_then(Value::as_array) {
            for d in declarations {
                note_one(shown, "", d);
            }
        } else if let Some(function) = tool.get("function") {
            note_one(shown, "", function);
        } else if let (Some(namespace), Some(inner)) = (
            tool.get("name").and_then(Value::as_str),
            tool.get("tools").and_then(Value::as_array),
        ) {
            for t in inner {
                note_one(shown, &format!("{namespace}__"), t);
            }
        } else {
            note_one(shown, "", tool);
        }
    }
}

fn note_one(shown: &mut ShownTools, prefix: &str, tool: &Value) {
    let Some(name) = tool.get("name").and_then(Value::as_str) else {
        return;
    };
    if shown.len() >= MAX_TOOLS {
        return;
    }
    let schema = ["input_schema", "parameters", "parametersJsonSchema"]
        .iter()
        .find_map(|k| tool.get(*k));
    let params = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect::<Vec<_>>());
    let entry = shown.entry(format!("{prefix}{name}")).or_insert(None);
    // A later request may show a fuller schema (a deferred tool loaded): keep the union.
    if let Some(params) = params {
        let known = entry.get_or_insert_with(Vec::new);
        for p in params {
            if !known.contains(&p) {
                known.push(p);
            }
        }
    }
}

/// The MCP tools among `shown`, under their canonical name `mcp__<server>__<tool>`, for the
/// run's `servers`: each agent's spelling (`mcp__s__t` Claude Code and Qwen Code, `s__t`
/// Codex CLI and Gemini CLI, `mcp_s_t` Gemini CLI 0.61, `s-t` Copilot CLI, `s_t` opencode)
/// read with the longest server name that fits. Tools whose schema lists no parameters are
/// left out (nothing to check against).
pub fn mcp_params(shown: &ShownTools, servers: &[&str]) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for (name, params) in shown {
        let Some(params) = params else { continue };
        let mut best: Option<(&str, &str)> = None;
        for server in servers {
            for prefix in [
                format!("mcp__{server}__"),
                format!("{server}__"),
                format!("mcp_{server}_"),
                format!("{server}-"),
                format!("{server}_"),
            ] {
                if let Some(tool) = name.strip_prefix(&prefix)
                    && !tool.is_empty()
                    && best.is_none_or(|(s, _)| server.len() > s.len())
                {
                    best = Some((server, tool));
                }
            }
        }
        if let Some((server, tool)) = best {
            out.insert(format!("mcp__{server}__{tool}"), params.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown_by(body: Value) -> ShownTools {
        let mut shown = ShownTools::new();
        note_tools(&mut shown, body.to_string().as_bytes());
        shown
    }

    #[test]
    fn every_protocols_tool_list_is_read() {
        let schema = json!({"type": "object", "properties": {"title": {}, "body": {}}});
        let params = Some(vec!["body".to_owned(), "title".to_owned()]);
        let anthropic =
            shown_by(json!({"tools": [{"name": "mcp__gh__issue", "input_schema": schema}]}));
        assert_eq!(anthropic["mcp__gh__issue"], params);
        let chat = shown_by(
            json!({"tools": [{"type": "function", "function": {"name": "gh-issue", "parameters": schema}}]}),
        );
        assert_eq!(chat["gh-issue"], params);
        let responses = shown_by(
            json!({"tools": [{"type": "namespace", "name": "mcp__gh", "tools": [{"name": "issue", "parameters": schema}]}]}),
        );
        assert_eq!(responses["mcp__gh__issue"], params);
        let gemini = shown_by(
            json!({"tools": [{"functionDeclarations": [{"name": "gh__issue", "parametersJsonSchema": schema}]}]}),
        );
        assert_eq!(gemini["gh__issue"], params);
        let open = shown_by(json!({"tools": [{"name": "x", "input_schema": {"type": "object"}}]}));
        assert_eq!(open["x"], None, "no properties: nothing to check");
    }

    #[test]
    fn each_agents_spelling_names_its_server() {
        let mut shown = ShownTools::new();
        for name in [
            "mcp__gh__a",
            "gh__b",
            "mcp_gh_c",
            "gh-d",
            "gh_e",
            "gh_tools__f",
            "Bash",
        ] {
            shown.insert(name.to_owned(), Some(vec!["p".to_owned()]));
        }
        let mcp = mcp_params(&shown, &["gh", "gh_tools"]);
        let names: Vec<&str> = mcp.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "mcp__gh__a",
                "mcp__gh__b",
                "mcp__gh__c",
                "mcp__gh__d",
                "mcp__gh__e",
                "mcp__gh_tools__f"
            ]
        );
    }
}
