//! Kiro CLI transcripts: the session stores of its three engines, one module each, and what
//! they share — the calls as each store records them ([`KiroCall`]), turned into tool calls
//! in one place ([`Calls::into_builder`]).
//!
//! Kiro CLI prints only text on stdout; what the agent did is in the stores it writes under
//! its home (sources: `aws/amazon-q-developer-cli`@sync-prod-from-main, the Kiro CLI source,
//! and public harnesses that read Kiro's stores; see each module):
//!
//! | engine | store | module | format |
//! |---|---|---|---|
//! | v1 (1.x, 2.x `--legacy-mode`) | `conversations_v2` rows of `~/.local/share/kiro-cli/data.sqlite3` (macOS `~/Library/Application Support/kiro-cli/`): one `ConversationState` JSON per row | `sqlite`, `conversation` | `kiro-conversation` |
//! | v2 (2.x) | `~/.kiro/sessions/cli/<id>.jsonl` (log) + `<id>.json` (metadata) | `session` | `kiro-session` |
//! | v3 (2.x, KAS) | `~/.kiro/sessions/<workspace>/sess_<id>/messages.jsonl` + `session.json` | `kas` | `kiro-kas` |
//!
//! Names: v1 and v2 record the name the model saw (`fs_read`, `read`, …; an MCP tool by its
//! bare name, its server only in the v1 conversation's `tools` map or a v2 result's `Mcp`
//! kind); v3 names MCP calls `tool_call` with the title `@<server>/<tool>`. Each becomes
//! its canonical name through [`Vocabulary::Kiro`]; a read of several files (`fs_read`
//! `operations`) becomes one `Read` per file, so that a `file_path` guardrail sees each.
//! Unknown names stay as they are.

pub(crate) mod conversation;
pub(crate) mod kas;
pub(crate) mod session;
pub mod sqlite;
pub mod store;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::builder::{Builder, ToolResult};
use super::{Transcript, TranscriptError};
use crate::spec::tools::{Vocabulary, canonical_name, canonical_params};

/// The builder every Kiro parser records into: Kiro's names, and exit codes only where a
/// store records them (a denied command has none).
pub(super) fn builder() -> Builder {
    Builder::new(false).with_vocabulary(Vocabulary::Kiro)
}

/// A tool call as a Kiro store records it, before it becomes [`super::ToolCall`]s.
#[derive(Debug, Default, Clone)]
pub(super) struct KiroCall {
    /// The store's id (`tooluse_…`, v3 `run_command_toolu_…`).
    pub id: String,
    /// The name the model called (`fs_read`, `shell`, an MCP tool's bare name, v3
    /// `tool_call`).
    pub name: String,
    /// v1's `orig_name`: an MCP tool's name on its server, when the model saw it sanitized.
    pub orig_name: Option<String>,
    /// The arguments as recorded.
    pub input: Value,
    /// When it was made (RFC 3339), when recorded.
    pub timestamp: Option<String>,
    /// `(server, tool)` when the store names an MCP server.
    pub mcp: Option<(String, String)>,
    /// v3's tool kind (`read`, `edit`, `execute`, `search`, `fetch`, `other`).
    pub kind: Option<String>,
    /// A v3 `disclose_context` of something other than a skill (steering documents):
    /// not a `Skill` call.
    pub not_a_skill: bool,
    /// v3 `status: failed`: an error even when no result follows.
    pub failed: bool,
}

/// The calls and results of one session, in the order the store holds them.
#[derive(Debug, Default)]
pub(super) struct Calls {
    calls: Vec<KiroCall>,
    by_id: HashMap<String, usize>,
    results: Vec<(String, ToolResult)>,
}

impl Calls {
    /// Records a call; a repeated id (v3 writes a call again as its status changes) fills
    /// in what the first record lacked.
    pub fn call(&mut self, call: KiroCall) {
        match self.by_id.get(&call.id) {
            Some(&i) => {
                let known = &mut self.calls[i];
                if is_empty(&known.input) && !is_empty(&call.input) {
                    known.input = call.input;
                }
                known.mcp = known.mcp.take().or(call.mcp);
                known.kind = known.kind.take().or(call.kind);
                known.failed |= call.failed;
            }
            None => {
                self.by_id.insert(call.id.clone(), self.calls.len());
                self.calls.push(call);
            }
        }
    }

    /// Records a result for the call with `id` (which may come later, or never: then it is
    /// an orphan, evidence of a lost call).
    pub fn result(&mut self, id: &str, result: ToolResult) {
        self.results.push((id.to_owned(), result));
    }

    /// Names the MCP server of a recorded call (v2's result kind).
    pub fn set_mcp(&mut self, id: &str, server: &str, tool: &str) {
        if let Some(&i) = self.by_id.get(id) {
            self.calls[i].mcp = Some((server.to_owned(), tool.to_owned()));
        }
    }

    /// Whether any call was recorded.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// Records the calls and results into `b`: MCP calls named `mcp__<server>__<tool>`
    /// (`servers`: the server of each bare tool name, from a v1 `tools` map), a read of
    /// several files as one `Read` per file, v3 calls of unknown names by their kind.
    pub fn into_builder(self, b: &mut Builder, servers: &HashMap<String, String>) {
        let mut parts: HashMap<String, Vec<String>> = HashMap::new();
        let mut failed = Vec::new();
        for call in self.calls {
            if call.failed {
                failed.push(call.id.clone());
            }
            let ids = record(b, call, servers);
            if let Some(first) = ids.first() {
                parts.insert(first.clone(), ids);
            }
        }
        let mut answered = HashSet::new();
        for (id, result) in self.results {
            answered.insert(id.clone());
            match parts.get(&id) {
                Some(ids) => {
                    for part in ids {
                        b.result(part, result.clone());
                    }
                }
                None => b.result(&id, result),
            }
        }
        for id in failed.into_iter().filter(|id| !answered.contains(id)) {
            for part in parts.get(&id).into_iter().flatten() {
                b.result(
                    part,
                    ToolResult {
                        output: "the tool call failed (Kiro recorded no result)".into(),
                        is_error: true,
                        ..ToolResult::default()
                    },
                );
            }
        }
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// The Kiro tool a v3 tool kind stands for, for a call whose own name is in no table.
fn tool_of_kind(kind: &str) -> Option<&'static str> {
    match kind {
        "read" => Some("read"),
        "edit" => Some("write"),
        "execute" => Some("shell"),
        "search" => Some("grep"),
        "fetch" => Some("web_fetch"),
        _ => None,
    }
}

/// Records one call (several for a read of several files); returns the ids recorded, the
/// call's own id first.
fn record(b: &mut Builder, call: KiroCall, servers: &HashMap<String, String>) -> Vec<String> {
    let KiroCall {
        id,
        name,
        orig_name,
        input,
        timestamp,
        mcp,
        kind,
        not_a_skill,
        failed: _,
    } = call;
    let mcp = mcp.or_else(|| {
        servers
            .get(&name)
            .map(|server| (server.clone(), orig_name.unwrap_or_else(|| name.clone())))
    });
    if let Some((server, tool)) = mcp {
        b.mcp_call(&id, &name, (&server, &tool), input, None, None, timestamp);
        return vec![id];
    }
    if not_a_skill {
        b.call_as(&id, &name, name.clone(), input, None, None, timestamp);
        return vec![id];
    }
    // The Kiro tool whose mapping applies: the call's own, else its v3 kind's.
    let own = canonical_name(Vocabulary::Kiro, &name);
    let known = own != name.as_str() || crate::spec::tools::is_known_tool(&name);
    let tool = match kind.as_deref().and_then(tool_of_kind) {
        Some(by_kind) if !known => by_kind,
        _ => name.as_str(),
    };
    let canonical = canonical_name(Vocabulary::Kiro, tool).into_owned();
    if canonical == "Read"
        && let Some(ops) = input.get("operations").and_then(Value::as_array)
        && !ops.is_empty()
    {
        let reads = read_operations(ops);
        let mut ids = Vec::new();
        for (n, params) in reads.into_iter().enumerate() {
            let part = if n == 0 {
                id.clone()
            } else {
                format!("{id}#{}", n + 1)
            };
            b.call_as(
                &part,
                &name,
                canonical.clone(),
                input.clone(),
                Some(params),
                None,
                timestamp.clone(),
            );
            ids.push(part);
        }
        return ids;
    }
    if tool != name.as_str() {
        let params = canonical_params(Vocabulary::Kiro, tool, &input);
        b.call_as(&id, &name, canonical, input, params, None, timestamp);
    } else {
        b.call(&id, &name, || input, None, timestamp);
    }
    vec![id]
}

/// The canonical parameters of each file an `fs_read`/`read` batch reads: the operation's
/// own keys with its `path` as `file_path`; an image operation reads each of its
/// `image_paths` (v2 also `paths`).
fn read_operations(ops: &[Value]) -> Vec<Value> {
    let mut reads = Vec::new();
    for op in ops {
        let Value::Object(fields) = op else {
            reads.push(op.clone());
            continue;
        };
        let images: Vec<&Value> = ["image_paths", "paths"]
            .iter()
            .filter_map(|k| fields.get(*k).and_then(Value::as_array))
            .flatten()
            .collect();
        if !images.is_empty() && !fields.contains_key("path") {
            for path in images {
                let mut read: Map<String, Value> = fields
                    .iter()
                    .filter(|(k, _)| *k != "image_paths" && *k != "paths")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                read.insert("file_path".into(), path.clone());
                reads.push(Value::Object(read));
            }
            continue;
        }
        let mut read = fields.clone();
        if let Some(path) = read.remove("path")
            && !read.contains_key("file_path")
        {
            read.insert("file_path".into(), path);
        }
        reads.push(Value::Object(read));
    }
    reads
}

/// One part of a v1 or v2 tool result's content: `{"Text": s}` / `{"kind": "text", "data":
/// s}`, `Json`/`json`, anything else (an image) by its kind.
fn content_part(part: &Value) -> (Option<String>, Option<&Value>) {
    let (kind, data) = match (part.get("kind").and_then(Value::as_str), part.get("data")) {
        (Some(kind), data) => (kind.to_ascii_lowercase(), data),
        _ => match part.as_object().and_then(|m| m.iter().next()) {
            Some((kind, data)) => (kind.to_ascii_lowercase(), Some(data)),
            None => return (Some(part.to_string()), None),
        },
    };
    match (kind.as_str(), data) {
        ("text", Some(Value::String(s))) => (Some(s.clone()), None),
        ("json", Some(v)) => (None, Some(v)),
        (kind, _) => (Some(format!("[{kind}]")), None),
    }
}

/// A v1 or v2 tool result: its content parts (a shell command's `{exit_status, stdout,
/// stderr}` JSON gives its exit code and streams) and whether Kiro said it failed.
pub(super) fn tool_result(content: Option<&Value>, failed: bool) -> ToolResult {
    let mut text = Vec::new();
    let mut result = ToolResult {
        is_error: failed,
        ..ToolResult::default()
    };
    for part in content.and_then(Value::as_array).into_iter().flatten() {
        match content_part(part) {
            (Some(t), _) => text.push(t),
            (None, Some(json)) if json.get("exit_status").is_some() => {
                let stdout = json.get("stdout").and_then(Value::as_str).unwrap_or("");
                let stderr = json.get("stderr").and_then(Value::as_str).unwrap_or("");
                result.exit_code = json.get("exit_status").and_then(|s| {
                    s.as_str()
                        .map(exit_status)
                        .unwrap_or_else(|| s.as_i64().and_then(|c| i32::try_from(c).ok()))
                });
                result.is_error |= result.exit_code.is_some_and(|c| c != 0);
                text.push(
                    [stdout, stderr]
                        .into_iter()
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                        .join("\n"),
                );
                result.stdout = Some(stdout.to_owned());
                result.stderr = Some(stderr.to_owned());
            }
            // An MCP tool's `CallToolResult`: its text parts, and its own error flag.
            (None, Some(json)) if json.get("content").is_some_and(Value::is_array) => {
                text.push(super::json::content_text(json.get("content")));
                result.is_error |= json.get("isError").and_then(Value::as_bool) == Some(true);
            }
            (None, Some(json)) => text.push(match json {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            (None, None) => {}
        }
    }
    result.output = text.join("\n");
    result
}

/// A shell command's `exit_status`: v1's `"0"`, v2's `"exit status: 1"`; `None` for a
/// signal or anything else.
fn exit_status(text: &str) -> Option<i32> {
    let text = text.trim();
    let digits = text
        .strip_prefix("exit status:")
        .or_else(|| text.strip_prefix("exit code:"))
        .unwrap_or(text)
        .trim();
    digits.parse().ok()
}

/// Reads a Kiro store that is not one file of JSON lines, when `path` is one: a
/// `data.sqlite3` (v1), or a session's metadata file (v2 `<id>.json`, v3 `session.json`),
/// which is read with its log beside it. `None`: read `path` as any transcript.
pub(super) fn parse_store(path: &Path) -> Option<Result<Transcript, TranscriptError>> {
    if sqlite::is_database(path) {
        return Some(sqlite::parse_database(path));
    }
    let log = metadata_log(path)?;
    Some(super::parse_file(&log))
}

/// The log of the session whose metadata file `path` is, when it is one (its content says
/// so, not only its name): `<id>.jsonl` beside a v2 `<id>.json`, `messages.jsonl` beside
/// a v3 `session.json`.
fn metadata_log(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(".json")?;
    let log = if name == "session.json" {
        path.with_file_name("messages.jsonl")
    } else {
        path.with_file_name(format!("{stem}.jsonl"))
    };
    if !log.is_file() {
        return None;
    }
    let doc = read_metadata(path)?;
    (session::is_metadata(&doc) || kas::is_metadata(&doc)).then_some(log)
}

/// Metadata files are small; a larger one is not read.
const MAX_METADATA_BYTES: u64 = 16 * 1024 * 1024;

/// A metadata file's JSON, when it is a readable regular file of JSON.
fn read_metadata(path: &Path) -> Option<Value> {
    let bytes = crate::shared::files::read_capped(path, MAX_METADATA_BYTES).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Completes a v2 or v3 transcript read from its log with the session's metadata file
/// beside it, when there is one: the session id, the model, v2's token counts.
pub(super) fn add_metadata(log: &Path, transcript: &mut Transcript) {
    let meta = match transcript.format {
        super::Format::KiroSession => log
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".jsonl"))
            .map(|stem| log.with_file_name(format!("{stem}.json"))),
        super::Format::KiroKas => Some(log.with_file_name("session.json")),
        _ => None,
    };
    let Some(doc) = meta.filter(|m| m.is_file()).and_then(|m| read_metadata(&m)) else {
        return;
    };
    match transcript.format {
        super::Format::KiroSession if session::is_metadata(&doc) => {
            session::apply_metadata(&doc, transcript);
        }
        super::Format::KiroKas if kas::is_metadata(&doc) => kas::apply_metadata(&doc, transcript),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::{Format, parse_file};
    use serde_json::json;

    fn store(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/kiro/stores")
            .join(rel)
    }

    /// (canonical, the call's main parameter, is_error, exit code) of each call.
    fn summary(t: &Transcript) -> Vec<(String, String, bool, Option<i32>)> {
        t.tool_calls
            .iter()
            .map(|c| {
                let p = c.params();
                let main = ["file_path", "command", "query", "skill"]
                    .iter()
                    .find_map(|k| p.get(*k).and_then(Value::as_str))
                    .unwrap_or("")
                    .to_owned();
                (c.canonical.clone(), main, c.is_error, c.exit_code)
            })
            .collect()
    }

    fn s(
        canonical: &str,
        main: &str,
        is_error: bool,
        exit: Option<i32>,
    ) -> (String, String, bool, Option<i32>) {
        (canonical.into(), main.into(), is_error, exit)
    }

    #[test]
    fn the_v1_store_is_read_from_its_database_and_as_a_saved_conversation() {
        let value = std::fs::read_to_string(store("v1/conversation_value.json")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("data.sqlite3");
        drop(sqlite::tests::write(
            &db,
            &[("/w", "conv-0001", &value, 1_774_656_960_000)],
        ));
        let from_db = parse_file(&db).unwrap();
        let saved = parse_file(&store("v1/conversation_value.json")).unwrap();
        for t in [&from_db, &saved] {
            assert_eq!(t.format, Format::KiroConversation);
            assert!(t.outcome.is_completed(), "{:?}", t.outcome);
            assert_eq!(t.session_id.as_deref(), Some("conv-0001"));
            assert_eq!(t.model.as_deref(), Some("claude-sonnet-4.5"));
            assert_eq!(
                t.final_text.as_deref(),
                Some("The key is API_KEY; counter is 44.")
            );
            assert_eq!(
                summary(t),
                [
                    s("Read", "/w/.env", false, None),
                    s("Bash", "./increment.sh", false, Some(0)),
                    s("Write", "/w/counter.txt", false, None),
                    s("mcp__docs-mcp__search_docs", "rotate key", false, None),
                    s("Bash", "git push origin main", true, None),
                ]
            );
            assert!(t.warnings.is_empty(), "{:?}", t.warnings);
        }
        assert_eq!(from_db.tool_calls[1].stdout.as_deref(), Some("43\n"));
        assert_eq!(from_db.tool_calls[2].params()["old_string"], "43");
        assert_eq!(from_db.tool_calls[3].output.as_deref(), Some("see docs"));
    }

    #[test]
    fn the_v2_store_is_read_from_its_log_or_its_metadata_file() {
        let id = "v2/cli/5b1c0d2e-0000-4000-8000-000000000001";
        for path in [store(&format!("{id}.jsonl")), store(&format!("{id}.json"))] {
            let t = parse_file(&path).unwrap();
            assert_eq!(t.format, Format::KiroSession, "{}", path.display());
            assert!(t.outcome.is_completed(), "{:?}", t.outcome);
            assert_eq!(
                t.session_id.as_deref(),
                Some("5b1c0d2e-0000-4000-8000-000000000001")
            );
            assert_eq!(t.model.as_deref(), Some("claude-sonnet-4.5"));
            assert_eq!((t.usage.input_tokens, t.usage.output_tokens), (1000, 200));
            assert_eq!(
                summary(&t),
                [
                    s("Read", "/w/.env", false, None),
                    s("Bash", "./increment.sh", false, Some(0)),
                    s("Write", "/w/counter.txt", false, None),
                    // v2 does not record the server: the bare name stays visible.
                    s("search_docs", "rotate key", false, None),
                    s("Bash", "git push origin main", true, None),
                ]
            );
            assert!(
                t.tool_calls[4]
                    .output
                    .as_deref()
                    .unwrap_or("")
                    .starts_with("User denied tool execution")
            );
        }
    }

    #[test]
    fn the_v3_store_is_read_from_its_log_or_its_session_file() {
        let dir = "v3/0123456789abcdef/sess_11111111-2222-3333-4444-555555555555";
        for path in [
            store(&format!("{dir}/messages.jsonl")),
            store(&format!("{dir}/session.json")),
        ] {
            let t = parse_file(&path).unwrap();
            assert_eq!(t.format, Format::KiroKas, "{}", path.display());
            assert!(t.outcome.is_completed(), "{:?}", t.outcome);
            assert_eq!(
                t.session_id.as_deref(),
                Some("sess_11111111-2222-3333-4444-555555555555")
            );
            assert_eq!(t.model.as_deref(), Some("claude-sonnet-4-6"));
            assert_eq!(t.usage.duration_ms, Some(7098));
            assert_eq!(
                summary(&t),
                [
                    s("Bash", "./increment.sh", false, Some(0)),
                    s("tool_load", "", false, None),
                    s("mcp__docs-mcp__search_docs", "rotate key", false, None),
                    s("Skill", "release-checklist", false, None),
                ]
            );
        }
    }

    fn built(calls: Calls, servers: &[(&str, &str)]) -> Vec<super::super::ToolCall> {
        let mut b = builder();
        let servers = servers
            .iter()
            .map(|(t, s)| ((*t).to_owned(), (*s).to_owned()))
            .collect();
        calls.into_builder(&mut b, &servers);
        b.finish().0
    }

    #[test]
    fn a_batch_read_is_one_read_per_file_and_each_gets_the_result() {
        let mut calls = Calls::default();
        calls.call(KiroCall {
            id: "t1".into(),
            name: "fs_read".into(),
            input: json!({"operations": [
                {"mode": "Line", "path": "/w/README.md"},
                {"mode": "Search", "path": "/w/config/.env.production", "pattern": "KEY"},
                {"mode": "Image", "image_paths": ["/w/a.png", "/w/b.png"]}
            ]}),
            ..KiroCall::default()
        });
        calls.result(
            "t1",
            tool_result(Some(&json!([{"Text": "contents"}])), false),
        );
        let calls = built(calls, &[]);
        let paths: Vec<&str> = calls
            .iter()
            .map(|c| c.params()["file_path"].as_str().unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                "/w/README.md",
                "/w/config/.env.production",
                "/w/a.png",
                "/w/b.png"
            ]
        );
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["t1", "t1#2", "t1#3", "t1#4"]);
        assert!(calls.iter().all(|c| c.canonical == "Read"
            && c.name == "fs_read"
            && c.output.as_deref() == Some("contents")));
        assert_eq!(calls[1].params()["pattern"], "KEY");
    }

    #[test]
    fn mcp_servers_come_from_the_store_and_unknown_names_stay_visible() {
        let mut calls = Calls::default();
        for (id, name) in [("a", "search_docs"), ("b", "use_aws"), ("c", "mystery")] {
            calls.call(KiroCall {
                id: id.into(),
                name: name.into(),
                input: json!({"q": 1}),
                ..KiroCall::default()
            });
        }
        calls.set_mcp("c", "other", "mystery");
        let calls = built(calls, &[("search_docs", "docs-mcp")]);
        let names: Vec<(&str, &str)> = calls
            .iter()
            .map(|c| (c.name.as_str(), c.canonical.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("search_docs", "mcp__docs-mcp__search_docs"),
                ("use_aws", "use_aws"),
                ("mystery", "mcp__other__mystery")
            ]
        );
    }

    #[test]
    fn shell_results_give_exit_codes_and_denials_have_none() {
        let ok = tool_result(
            Some(&json!([{"Json": {"exit_status": "0", "stdout": "43\n", "stderr": ""}}])),
            false,
        );
        assert_eq!((ok.exit_code, ok.is_error), (Some(0), false));
        assert_eq!(ok.stdout.as_deref(), Some("43\n"));
        let failed = tool_result(
            Some(
                &json!([{"kind": "json", "data": {"exit_status": "exit status: 2", "stdout": "", "stderr": "boom"}}]),
            ),
            false,
        );
        assert_eq!((failed.exit_code, failed.is_error), (Some(2), true));
        assert_eq!(failed.output, "boom");
        let denied = tool_result(
            Some(&json!([{"kind": "text", "data": "User denied tool execution. Feedback: no"}])),
            true,
        );
        assert_eq!((denied.exit_code, denied.is_error), (None, true));
    }
}
