//! Small readers of Claude Code's content blocks: the tool-call objects inside a value, a
//! server tool's result, an interruption, an API error's message.

use serde_json::value::RawValue;

use super::super::builder::ToolResult;
use super::{Block, Content};

/// Every tool-call object inside `value`: (type, id, name, input).
pub(super) fn call_objects<'v>(
    value: &'v serde_json::Value,
    out: &mut Vec<(&'v str, &'v str, &'v str, &'v serde_json::Value)>,
) {
    match value {
        serde_json::Value::Object(map) => {
            let text = |k: &str| map.get(k).and_then(serde_json::Value::as_str);
            if let (
                Some(kind @ ("tool_use" | "server_tool_use" | "mcp_tool_use")),
                Some(id),
                Some(name),
            ) = (text("type"), text("id"), text("name"))
            {
                out.push((
                    kind,
                    id,
                    name,
                    map.get("input").unwrap_or(&serde_json::Value::Null),
                ));
            }
            map.values().for_each(|v| call_objects(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| call_objects(v, out)),
        _ => {}
    }
}

/// A server tool's result block (`web_search_tool_result`, `web_fetch_tool_result`,
/// `code_execution_tool_result`, `mcp_tool_result`, …) as an opaque result: its type on
/// the first line, then its content's text (an object's JSON); an error when the block
/// says so or its content is a `…_error` object.
pub(super) fn server_result(kind: &str, block: &Block<'_>) -> ToolResult {
    let content = block.content.as_ref();
    let failed = match content {
        Some(Content::Object(v)) => v
            .get("type")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|t| t.ends_with("_error")),
        _ => false,
    };
    let text = content.map(Content::text).unwrap_or_default();
    ToolResult {
        is_error: block.is_error.unwrap_or(false) || failed,
        output: if text.is_empty() {
            format!("[{kind}]")
        } else {
            format!("[{kind}]\n{text}")
        },
        ..ToolResult::default()
    }
}

pub(super) fn is_interruption(text: &str) -> bool {
    text.starts_with("[Request interrupted by user")
}

/// The message of an `error` field: a string, or an object with `message`.
pub(super) fn error_message(raw: Option<&RawValue>) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(raw?.get()).ok()?;
    match value {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Object(map) => map
            .get("message")
            .and_then(|m| m.as_str())
            .map(str::to_owned),
        _ => None,
    }
}
