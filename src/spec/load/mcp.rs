//! `mcp_servers:`: MCP servers attached to the test's agent.
//!
//! ```yaml
//! mcp_servers:
//!   docs: {command: node, args: [server.js], env: {TOKEN: "${DOCS_TOKEN}"}}   # stdio
//!   remote: {url: "http://127.0.0.1:8931/mcp", headers: {Authorization: "Bearer ${T}"}}
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use super::super::diagnostic::{Diagnostic, display_path};
use super::super::mcp::{McpMocks, McpServers, parse_template};
use super::super::node::{Node, Value};
use super::super::{McpServer, MockReply, MockServer, MockSource, MockTool};
use super::{Ctx, Fields};

/// The keys of a stdio server.
const STDIO_KEYS: &[&str] = &["command", "args", "env"];
/// The keys of an HTTP server.
const HTTP_KEYS: &[&str] = &["url", "headers"];
/// Every key a server may have, for did-you-mean.
const SERVER_KEYS: &[&str] = &["command", "args", "env", "url", "headers", "mock"];
/// The keys of `mock:`.
const MOCK_KEYS: &[&str] = &["tools", "from", "server"];
/// The keys of a mock tool.
const MOCK_TOOL_KEYS: &[&str] = &["description", "input_schema", "reply", "replies", "expect"];
/// The keys of a reply written as a mapping.
const REPLY_KEYS: &[&str] = &["text", "json", "error"];

impl Ctx {
    /// The servers of `mcp_servers:`: those the agent starts or reaches, and the `mock:`
    /// ones (whose `from:` resolves against `file`'s directory).
    pub(super) fn mcp_servers(&mut self, node: &Node, file: &Path) -> (McpServers, McpMocks) {
        let mut servers = McpServers::new();
        let mut mocks = McpMocks::new();
        let Some(fields) = self.map(node, "mcp_servers") else {
            return (servers, mocks);
        };
        for (key, value) in fields.entries {
            let name = &key.name;
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                && !name.contains("__")
                && !name.starts_with('_')
                && !name.ends_with('_');
            if !valid {
                self.push(
                    Diagnostic::new(key.pos, format!("`{name}` is not a usable MCP server name"))
                        .label("server name")
                        .hint(
                            "use letters, digits, `-` and single `_` (its tools are named \
                             `mcp__<server>__<tool>`)",
                        ),
                );
                continue;
            }
            let mock = match &value.value {
                Value::Map(entries) => entries.iter().find(|(k, _)| k.name == "mock"),
                _ => None,
            };
            if let Some((mock_key, mock)) = mock {
                let Some(fields) = self.map(value, &format!("mcp_servers.{name}")) else {
                    continue;
                };
                let context = format!("`mcp_servers.{name}` (a mock server)");
                self.unknown_keys(&fields, &["mock"], &context);
                if let Some(server) = self.mock_server(mock, name, mock_key.pos.line, file) {
                    mocks.insert(name.clone(), server);
                }
            } else if let Some(server) = self.mcp_server(value, name) {
                servers.insert(name.clone(), server);
            }
        }
        (servers, mocks)
    }

    /// `mcp_servers.<name>.mock`.
    fn mock_server(
        &mut self,
        node: &Node,
        name: &str,
        line: u32,
        file: &Path,
    ) -> Option<MockServer> {
        let what = format!("mcp_servers.{name}.mock");
        let fields = self.map(node, &what)?;
        self.unknown_keys(&fields, MOCK_KEYS, &format!("`{what}`"));
        let from = match fields.get("from") {
            Some(n) => Some(self.mock_source(n, &fields, name, file)?),
            None => {
                if let Some(server) = fields.get("server") {
                    self.push(
                        Diagnostic::new(server.pos, format!("`{what}.server` needs `from:`"))
                            .label("no recording")
                            .hint(
                                "`server:` names the server of the `from:` cassette to answer from",
                            ),
                    );
                }
                None
            }
        };
        let mut tools = BTreeMap::new();
        match fields.get("tools") {
            Some(node) => {
                let tools_fields = self.map(node, &format!("{what}.tools"))?;
                for (key, value) in tools_fields.entries {
                    let tool_what = format!("{what}.tools.{}", key.name);
                    if key.name.trim().is_empty() {
                        self.push(
                            Diagnostic::new(key.pos, "a tool name must not be empty")
                                .label("empty"),
                        );
                        continue;
                    }
                    if let Some(tool) =
                        self.mock_tool(value, &tool_what, key.pos.line, from.is_some())
                    {
                        tools.insert(key.name.clone(), tool);
                    }
                }
            }
            None if from.is_none() => {
                self.push(
                    Diagnostic::new(fields.pos, format!("`{what}` has no tools"))
                        .label("no `tools:` and no `from:`")
                        .hint("write `tools: {search: {reply: \"…\"}}`, or `from:` a cassette recorded with `run --record-model`"),
                );
                return None;
            }
            None => {}
        }
        Some(MockServer { tools, from, line })
    }

    /// `from:` (and `server:`) of a mock.
    fn mock_source(
        &mut self,
        node: &Node,
        fields: &Fields<'_>,
        name: &str,
        file: &Path,
    ) -> Option<MockSource> {
        let what = format!("mcp_servers.{name}.mock.from");
        let written = self.non_empty_string(node, &what)?;
        let cassette = super::super::resolve_workspace(file, Some(Path::new(&written)));
        if self.check_workspace && !cassette.is_file() {
            self.push(
                Diagnostic::new(node.pos, "the recording does not exist")
                    .label(format!("resolves to {}", display_path(&cassette)))
                    .hint(
                        "name a cassette that `run --record-model` wrote (`<results>.cassettes/<hash>.json.gz`), relative to the test file's directory",
                    ),
            );
            return None;
        }
        let server = match fields.get("server") {
            Some(n) => self.non_empty_string(n, &format!("mcp_servers.{name}.mock.server"))?,
            None => name.to_owned(),
        };
        Some(MockSource { cassette, server })
    }

    /// One tool of a mock; `recorded`: the mock has `from:`, which may supply the replies.
    fn mock_tool(
        &mut self,
        node: &Node,
        what: &str,
        line: u32,
        recorded: bool,
    ) -> Option<MockTool> {
        let fields = self.map(node, what)?;
        self.unknown_keys(&fields, MOCK_TOOL_KEYS, &format!("`{what}`"));
        let description = match fields.get("description") {
            Some(n) => self.string(n, &format!("{what}.description"))?,
            None => String::new(),
        };
        let input_schema = match fields.get("input_schema") {
            Some(n) => {
                let schema = n.value.to_json();
                if !schema.is_object() {
                    self.type_error(
                        n,
                        &format!("{what}.input_schema"),
                        "a mapping (a JSON Schema)",
                    );
                    return None;
                }
                schema
            }
            None => serde_json::json!({"type": "object"}),
        };
        let replies = match (fields.get("reply"), fields.get("replies")) {
            (Some(_), Some(n)) => {
                self.push(
                    Diagnostic::new(n.pos, format!("`{what}` has both `reply` and `replies`"))
                        .label("second reply")
                        .hint("`reply:` answers every call; `replies:` answers call by call: keep one"),
                );
                return None;
            }
            (Some(n), None) => vec![self.mock_reply(n, &format!("{what}.reply"))?],
            (None, Some(n)) => {
                let Value::Seq(items) = &n.value else {
                    self.type_error(n, &format!("{what}.replies"), "a list of replies");
                    return None;
                };
                if items.is_empty() {
                    self.push(
                        Diagnostic::new(n.pos, format!("`{what}.replies` is empty"))
                            .label("no reply"),
                    );
                    return None;
                }
                let mut replies = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    replies.push(self.mock_reply(item, &format!("{what}.replies[{i}]"))?);
                }
                replies
            }
            (None, None) if recorded => Vec::new(),
            (None, None) => {
                self.push(
                    Diagnostic::new(fields.pos, format!("`{what}` has no reply"))
                        .label("no `reply:`")
                        .hint("write `reply: \"…\"` (every call), `replies: [..]` (call by call), or give the mock `from:` a recording"),
                );
                return None;
            }
        };
        let (expect, expect_line) = match fields.get("expect") {
            Some(n) => {
                let params = self.params(n, "expect")?;
                if params.is_empty() {
                    self.push(
                        Diagnostic::new(n.pos, format!("`{what}.expect` is empty"))
                            .label("nothing to check"),
                    );
                    return None;
                }
                (params, fields.key_pos("expect").line)
            }
            None => (Vec::new(), line),
        };
        Some(MockTool {
            description,
            input_schema,
            replies,
            expect,
            expect_line,
        })
    }

    /// A reply: a string (its text), or `{text: …}` / `{json: …}` with `error: true|false`.
    fn mock_reply(&mut self, node: &Node, what: &str) -> Option<MockReply> {
        match &node.value {
            Value::Str(s) => Some(MockReply {
                text: s.clone(),
                json: None,
                error: false,
            }),
            Value::Map(_) => {
                let fields = self.map(node, what)?;
                self.unknown_keys(&fields, REPLY_KEYS, &format!("`{what}`"));
                let error = match fields.get("error") {
                    Some(n) => self.bool(n, &format!("{what}.error"))?,
                    None => false,
                };
                match (fields.get("text"), fields.get("json")) {
                    (Some(t), None) => Some(MockReply {
                        text: self.string(t, &format!("{what}.text"))?,
                        json: None,
                        error,
                    }),
                    (None, Some(j)) => {
                        let json = j.value.to_json();
                        Some(MockReply {
                            text: json.to_string(),
                            json: Some(json),
                            error,
                        })
                    }
                    _ => {
                        self.push(
                            Diagnostic::new(fields.pos, format!("`{what}` needs one of `text` or `json`"))
                                .label("no content")
                                .hint("write `{text: \"…\"}` or `{json: {…}}`, with `error: true` for a failed call"),
                        );
                        None
                    }
                }
            }
            _ => {
                self.type_error(node, what, "a string or a mapping with `text` or `json`");
                None
            }
        }
    }

    fn mcp_server(&mut self, node: &Node, name: &str) -> Option<McpServer> {
        let what = format!("mcp_servers.{name}");
        let fields = self.map(node, &what)?;
        let (command, url) = (fields.get("command"), fields.get("url"));
        match (command, url) {
            (Some(_), Some(_)) => {
                self.unknown_keys(&fields, SERVER_KEYS, &format!("`{what}`"));
                self.push(
                    Diagnostic::new(
                        fields.key_pos("url"),
                        format!("`{what}` has both `command` and `url`"),
                    )
                    .label("second transport")
                    .hint("`command` starts a stdio server, `url` names an HTTP one: keep one"),
                );
                None
            }
            (None, None) => {
                self.unknown_keys(&fields, SERVER_KEYS, &format!("`{what}`"));
                self.push(
                    Diagnostic::new(fields.pos, format!("`{what}` needs `command` or `url`"))
                        .label("no transport")
                        .hint("write e.g. `{command: node, args: [server.js]}` or `{url: \"http://127.0.0.1:8931/mcp\"}`"),
                );
                None
            }
            (Some(command), None) => {
                self.unknown_keys(&fields, STDIO_KEYS, &format!("`{what}` (a stdio server)"));
                let command = self.template(command, &format!("{what}.command"), true);
                let args = fields
                    .get("args")
                    .map(|n| self.template_list(n, &format!("{what}.args")))
                    .unwrap_or_default();
                let env = fields
                    .get("env")
                    .map(|n| self.template_map(n, &format!("{what}.env")))
                    .unwrap_or_default();
                Some(McpServer::Stdio {
                    command: command?,
                    args,
                    env,
                })
            }
            (None, Some(url_node)) => {
                self.unknown_keys(&fields, HTTP_KEYS, &format!("`{what}` (an HTTP server)"));
                let url = self.template(url_node, &format!("{what}.url"), true);
                if let Some(u) = &url
                    && !(u.starts_with("http://")
                        || u.starts_with("https://")
                        || u.starts_with("${"))
                {
                    self.push(
                        Diagnostic::new(
                            url_node.pos,
                            format!("`{what}.url` must be an http:// or https:// URL"),
                        )
                        .label("not a URL"),
                    );
                }
                let headers = fields
                    .get("headers")
                    .map(|n| self.template_map(n, &format!("{what}.headers")))
                    .unwrap_or_default();
                Some(McpServer::Http { url: url?, headers })
            }
        }
    }

    /// A string that may hold `${VAR}` references, checked for their syntax.
    fn template(&mut self, node: &Node, what: &str, non_empty: bool) -> Option<String> {
        let text = match &node.value {
            Value::Str(s) => s.clone(),
            // Numbers and booleans in `args`/`env` are what they read as.
            Value::Int(i) if !non_empty => i.to_string(),
            Value::Float(f) if !non_empty => f.to_string(),
            Value::Bool(b) if !non_empty => b.to_string(),
            _ => {
                self.type_error(node, what, "a string");
                return None;
            }
        };
        if non_empty && text.trim().is_empty() {
            self.push(
                Diagnostic::new(node.pos, format!("`{what}` must not be empty")).label("empty"),
            );
            return None;
        }
        if let Err(why) = parse_template(&text) {
            self.push(
                Diagnostic::new(node.pos, format!("`{what}`: {why}"))
                    .label("bad `${VAR}`")
                    .hint(
                        "write `${NAME}` for a variable of aptitude's environment, `$$` for a `$`",
                    ),
            );
            return None;
        }
        Some(text)
    }

    fn template_list(&mut self, node: &Node, what: &str) -> Vec<String> {
        let Value::Seq(items) = &node.value else {
            self.type_error(node, what, "a list of strings");
            return Vec::new();
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| self.template(item, &format!("{what}[{i}]"), false))
            .collect()
    }

    fn template_map(&mut self, node: &Node, what: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(fields): Option<Fields<'_>> = self.map(node, what) else {
            return out;
        };
        for (key, value) in fields.entries {
            if let Some(v) = self.template(value, &format!("{what}.{}", key.name), false) {
                out.insert(key.name.clone(), v);
            }
        }
        out
    }
}
