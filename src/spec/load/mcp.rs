//! `mcp_servers:`: MCP servers attached to the test's agent.
//!
//! ```yaml
//! mcp_servers:
//!   docs: {command: node, args: [server.js], env: {TOKEN: "${DOCS_TOKEN}"}}   # stdio
//!   remote: {url: "http://127.0.0.1:8931/mcp", headers: {Authorization: "Bearer ${T}"}}
//! ```

use std::collections::BTreeMap;

use super::super::McpServer;
use super::super::diagnostic::Diagnostic;
use super::super::mcp::{McpServers, parse_template};
use super::super::node::{Node, Value};
use super::{Ctx, Fields};

/// The keys of a stdio server.
const STDIO_KEYS: &[&str] = &["command", "args", "env"];
/// The keys of an HTTP server.
const HTTP_KEYS: &[&str] = &["url", "headers"];
/// Every key a server may have, for did-you-mean.
const SERVER_KEYS: &[&str] = &["command", "args", "env", "url", "headers"];

impl Ctx {
    /// The servers of `mcp_servers:`.
    pub(super) fn mcp_servers(&mut self, node: &Node) -> McpServers {
        let mut servers = McpServers::new();
        let Some(fields) = self.map(node, "mcp_servers") else {
            return servers;
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
            if let Some(server) = self.mcp_server(value, name) {
                servers.insert(name.clone(), server);
            }
        }
        servers
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
