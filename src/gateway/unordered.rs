//! Requests compared by content, whatever the order of what an agent sends in an honest,
//! varying order: the replay matches a request to its recorded counterpart with it.
//!
//! | what | why its order varies | where |
//! |---|---|---|
//! | parallel tool results | Claude Code sends them as its commands finish | a run of consecutive results: Anthropic `tool_result` blocks, Responses `*_output` items, Chat `tool` messages, Gemini `functionResponse` parts |
//! | the tools offered | agents list some from unordered sets | `tools`, Gemini's `functionDeclarations` |
//! | the system prompt's lines | Gemini CLI lists its skills in a varying order | `system`, `systemInstruction`, `instructions` (their lines) |
//! | a tool's list of skills | Gemini CLI 0.61's `activate_skill` names them in a varying order | a `description`'s `(Available: 'a', 'b')`, a JSON Schema `enum` (a set) |
//! | MCP servers' instructions | Gemini CLI 0.61 lists each server's in the order the servers finished connecting | consecutive `The following are instructions provided by the tool server '…'` blocks in any text (its session context) |
//!
//! Everything else keeps its order: a conversation whose turns, calls or texts differ is a
//! real divergence and still stops the replay at the first request that differs.

use serde_json::Value;

/// Whether `recorded` and `now` are the same request up to the orders above.
pub fn same_request(recorded: &Value, now: &Value) -> bool {
    recorded == now || canonical(recorded, false) == canonical(now, false)
}

/// `value` with every order above made canonical; `lines`: inside a system prompt, where a
/// string's lines are sorted.
fn canonical(value: &Value, lines: bool) -> Value {
    match value {
        Value::String(s) if lines && s.contains('\n') => {
            let mut sorted: Vec<&str> = s.lines().collect();
            sorted.sort_unstable();
            Value::String(sorted.join("\n"))
        }
        Value::String(s) if s.matches(INSTRUCTIONS_START).nth(1).is_some() => {
            Value::String(sorted_server_instructions(s))
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let system = lines
                        || matches!(k.as_str(), "system" | "systemInstruction" | "instructions");
                    let mut v = canonical(v, system);
                    if k == "description"
                        && let Value::String(text) = &v
                    {
                        v = Value::String(sorted_available(text));
                    }
                    if matches!(k.as_str(), "tools" | "functionDeclarations" | "enum")
                        && let Value::Array(items) = &mut v
                    {
                        items.sort_by_cached_key(Value::to_string);
                    }
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => {
            let mut items: Vec<Value> = items.iter().map(|v| canonical(v, lines)).collect();
            sort_result_runs(&mut items);
            Value::Array(items)
        }
        other => other.clone(),
    }
}

/// `text` with the items of its `(Available: 'a', 'b', …)` list sorted (Gemini CLI's
/// `activate_skill` description names the skills so); other text unchanged.
fn sorted_available(text: &str) -> String {
    static LIST: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(list) = LIST
        .get_or_init(|| regex::Regex::new(r"\(Available: ((?:'[^']*'(?:, )?)+)\)").ok())
        .as_ref()
    else {
        return text.to_owned();
    };
    list.replace_all(text, |c: &regex::Captures<'_>| {
        let mut items: Vec<&str> = c[1].split(", ").collect();
        items.sort_unstable();
        format!("(Available: {})", items.join(", "))
    })
    .into_owned()
}

/// The line that opens an MCP server's instructions in Gemini CLI 0.61's context.
const INSTRUCTIONS_START: &str = "---[start of server instructions]---";

/// `text` with each run of consecutive MCP server instruction blocks (Gemini CLI 0.61:
/// `The following are instructions provided by the tool server 'NAME':\n---[start of server
/// instructions]---\n…\n---[end of server instructions]---`, joined by a blank line) sorted;
/// the rest of `text` unchanged.
fn sorted_server_instructions(text: &str) -> String {
    static BLOCK: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let Some(block) = BLOCK
        .get_or_init(|| {
            regex::Regex::new(
                r"(?s)The following are instructions provided by the tool server '[^'\n]*':\n---\[start of server instructions\]---\n.*?\n---\[end of server instructions\]---",
            )
            .ok()
        })
        .as_ref()
    else {
        return text.to_owned();
    };
    let mut out = String::with_capacity(text.len());
    let mut run: Vec<&str> = Vec::new();
    let mut end = 0;
    for m in block.find_iter(text) {
        if !run.is_empty() && &text[end..m.start()] != "\n\n" {
            flush(&mut out, &mut run);
        }
        if run.is_empty() {
            out.push_str(&text[end..m.start()]);
        }
        run.push(m.as_str());
        end = m.end();
    }
    flush(&mut out, &mut run);
    out.push_str(&text[end..]);
    out
}

/// Appends the blocks of `run`, sorted and joined by a blank line, to `out`; empties `run`.
fn flush(out: &mut String, run: &mut Vec<&str>) {
    run.sort_unstable();
    out.push_str(&run.join("\n\n"));
    run.clear();
}

/// Whether an array element is a tool result (see the module table).
fn is_result(v: &Value) -> bool {
    let kind = v.get("type").and_then(Value::as_str);
    matches!(kind, Some("tool_result"))
        || kind.is_some_and(|k| k.ends_with("_call_output"))
        || v.get("role").and_then(Value::as_str) == Some("tool")
        || v.get("functionResponse").is_some()
}

/// Sorts each run of two or more consecutive tool results, in place.
fn sort_result_runs(items: &mut [Value]) {
    let mut start = 0;
    while start < items.len() {
        if !is_result(&items[start]) {
            start += 1;
            continue;
        }
        let end = (start..items.len())
            .find(|&i| !is_result(&items[i]))
            .unwrap_or(items.len());
        items[start..end].sort_by_cached_key(Value::to_string);
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Claude Code's parallel results in the order their commands finished, the tools
    /// and a system prompt's skill lines in another order: the same request.
    #[test]
    fn honest_orders_are_the_same_request() {
        let recorded = json!({"system": [{"type": "text", "text": "Skills:\n- a: one\n- b: two"}],
            "tools": [{"name": "Bash"}, {"name": "Read"}],
            "messages": [{"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "two"}]}]});
        let now = json!({"system": [{"type": "text", "text": "Skills:\n- b: two\n- a: one"}],
            "tools": [{"name": "Read"}, {"name": "Bash"}],
            "messages": [{"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t2", "content": "two"},
                {"type": "tool_result", "tool_use_id": "t1", "content": "one"}]}]});
        assert!(same_request(&recorded, &now));
        let responses = |a: &str, b: &str| {
            json!({"input": [{"type": "function_call", "call_id": "c1"}, {"type": "function_call", "call_id": "c2"},
                {"type": "function_call_output", "call_id": a, "output": a}, {"type": "function_call_output", "call_id": b, "output": b}]})
        };
        assert!(same_request(&responses("c1", "c2"), &responses("c2", "c1")));
        let skill = |list: &str, names: [&str; 2]| {
            json!({"tools": [{"functionDeclarations": [{"name": "activate_skill",
                "description": format!("Activates a skill (Available: {list}). Returns it."),
                "parametersJsonSchema": {"properties": {"name": {"enum": names}}}}]}]})
        };
        assert!(same_request(
            &skill(
                "'antigravity-support', 'skill-creator'",
                ["antigravity-support", "skill-creator"]
            ),
            &skill(
                "'skill-creator', 'antigravity-support'",
                ["skill-creator", "antigravity-support"]
            )
        ));
        assert!(!same_request(
            &skill(
                "'antigravity-support', 'skill-creator'",
                ["antigravity-support", "skill-creator"]
            ),
            &skill("'skill-creator', 'other'", ["skill-creator", "other"])
        ));
    }

    /// Gemini CLI 0.61's session context with two MCP servers' instructions, in the two
    /// orders the servers can finish connecting: the same request; an instruction that
    /// differs, or text around the blocks that moved, is not.
    #[test]
    fn mcp_servers_instructions_in_connection_order_are_the_same_request() {
        let block = |name: &str, text: &str| {
            format!(
                "The following are instructions provided by the tool server '{name}':\n{INSTRUCTIONS_START}\n{text}\n---[end of server instructions]---"
            )
        };
        let context = |blocks: [String; 2], after: &str| {
            json!({"contents": [{"role": "user", "parts": [{"text": format!(
                "<session_context>\nThis is the Gemini CLI.\n\n{}\n\n{}\n{after}</session_context>",
                blocks[0], blocks[1]
            )}]}]})
        };
        let a = block("everything", "Echo things.\nTwo lines.");
        let b = block("remote", "Also echo.");
        let recorded = context([a.clone(), b.clone()], "");
        assert!(same_request(
            &recorded,
            &context([b.clone(), a.clone()], "")
        ));
        assert!(!same_request(
            &recorded,
            &context([b.clone(), block("everything", "Echo other things.")], "")
        ));
        assert!(!same_request(&recorded, &context([a, b], "tail\n")));
        assert_eq!(
            sorted_server_instructions("no blocks at all"),
            "no blocks at all"
        );
    }

    /// A result that differs, turns in another order, or a message's lines in another
    /// order are real divergences.
    #[test]
    fn real_differences_are_not() {
        let results = |second: &str| {
            json!({"messages": [{"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
                {"type": "tool_result", "tool_use_id": "t2", "content": second}]}]})
        };
        assert!(!same_request(&results("two"), &results("three")));
        let turns = |a: &str, b: &str| json!({"messages": [{"role": "user", "content": a}, {"role": "assistant", "content": b}]});
        assert!(!same_request(&turns("x", "y"), &turns("y", "x")));
        let text = |t: &str| json!({"messages": [{"role": "user", "content": t}]});
        assert!(!same_request(&text("a\nb"), &text("b\na")));
    }
}
