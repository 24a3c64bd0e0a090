//! `mcp_servers:`: the MCP servers a test attaches to its agent, and the `${VAR}`
//! expansion of their values.
//!
//! A spec keeps the values as written (`"Bearer ${DOCS_TOKEN}"`), so loading and `validate`
//! do not depend on the environment; the runner expands them from aptitude's environment
//! just before the agent starts ([`McpServer::expand`]), and the redactor treats the value
//! of every variable named this way as a secret ([`McpServer::variables`]).
//!
//! A server written `mock:` is not a program the agent starts but one aptitude serves
//! itself ([`MockServer`]): its tools answer with scripted replies, and `expect:` checks
//! the inputs the agent sent them. Mocks are kept apart from the servers the agent starts
//! ([`McpMocks`]), since nothing of theirs is handed to the agent as written.

use std::collections::BTreeMap;

/// One MCP server (`mcp_servers.<name>`), as the MCP client configurations of the agents
/// describe servers (Claude Code's `.mcp.json`, Gemini CLI's `mcpServers`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServer {
    /// A stdio server: the agent starts `command args…` with `env` added to its own
    /// environment and speaks MCP over its stdin/stdout.
    Stdio {
        /// The program (looked up on `PATH` by the agent).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment.
        env: BTreeMap<String, String>,
    },
    /// A streamable HTTP server at `url`, sent `headers` with every request.
    Http {
        /// The endpoint (`http://` or `https://`).
        url: String,
        /// Request headers (`Authorization`, …).
        headers: BTreeMap<String, String>,
    },
}

/// The MCP servers of a test, by name (names are `[A-Za-z0-9_-]`, without `__`, so that
/// `mcp__<server>__<tool>` reads back unambiguously).
pub type McpServers = BTreeMap<String, McpServer>;

/// The `mock:` MCP servers of a test, by name (the same names as [`McpServers`]; a name is
/// one or the other).
pub type McpMocks = BTreeMap<String, MockServer>;

/// A `mock:` MCP server (`mcp_servers.<name>.mock`): served by aptitude over MCP's stdio
/// transport (its protocol version 2025-06-18, also answering clients of 2024-11-05 and
/// 2025-03-26), with only `tools`.
///
/// ```yaml
/// mcp_servers:
///   tickets:
///     mock:
///       from: recorded/tickets.json.gz     # optional: tools and replies of a recording
///       tools:
///         create_ticket:
///           description: Open a ticket
///           input_schema: {type: object, properties: {title: {type: string}}}
///           reply: Created TICKET-42       # or `replies: [..]`, one per call
///           expect: {title: {contains: login}}
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct MockServer {
    /// Its tools, by name, in name order.
    pub tools: BTreeMap<String, MockTool>,
    /// A recording whose tools and replies the mock serves, besides (under) `tools`.
    pub from: Option<MockSource>,
    /// The line of `mock:` in the test file.
    pub line: u32,
}

/// `from:`: a cassette (`run --record-model`'s `<results>.cassettes/*.json.gz`) and the
/// server in it whose recorded traffic a mock answers from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MockSource {
    /// The cassette file, resolved against the test file's directory.
    pub cassette: std::path::PathBuf,
    /// The recorded server's name (`server:`, else the mock's own name).
    pub server: String,
}

/// One tool of a mock server.
#[derive(Debug, Clone, PartialEq)]
pub struct MockTool {
    /// What the agent is told the tool does (`description:`; empty when not given).
    pub description: String,
    /// The JSON Schema of its input (`input_schema:`; `{"type": "object"}` when not given).
    pub input_schema: serde_json::Value,
    /// Its replies: the n-th call gets the n-th, and every call after the last gets the
    /// last. Empty only when `from:` supplies them.
    pub replies: Vec<MockReply>,
    /// `expect:`: every call's arguments must match each of these (a tool with `expect:`
    /// that is never called fails too).
    pub expect: Vec<super::ParamMatcher>,
    /// The line of `expect:` (else of the tool's name).
    pub expect_line: u32,
}

/// One scripted reply of a mock tool.
#[derive(Debug, Clone, PartialEq)]
pub struct MockReply {
    /// The text content the tool answers (a `json:` reply is its JSON text).
    pub text: String,
    /// A `json:` reply's value, also sent as the result's `structuredContent`.
    pub json: Option<serde_json::Value>,
    /// Whether the result says the tool failed (`isError`).
    pub error: bool,
}

impl McpServer {
    /// Every string value with its place for messages (`command`, `args[0]`, `env.TOKEN`).
    fn values(&self) -> Vec<(String, &str)> {
        match self {
            McpServer::Stdio { command, args, env } => {
                let mut out = vec![("command".to_owned(), command.as_str())];
                out.extend(
                    args.iter()
                        .enumerate()
                        .map(|(i, a)| (format!("args[{i}]"), a.as_str())),
                );
                out.extend(env.iter().map(|(k, v)| (format!("env.{k}"), v.as_str())));
                out
            }
            McpServer::Http { url, headers } => {
                let mut out = vec![("url".to_owned(), url.as_str())];
                out.extend(
                    headers
                        .iter()
                        .map(|(k, v)| (format!("headers.{k}"), v.as_str())),
                );
                out
            }
        }
    }

    /// The variables its values name with `${VAR}`, in order, each once.
    pub fn variables(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for (_, value) in self.values() {
            if let Ok(parts) = parse_template(value) {
                for part in parts {
                    if let Part::Var(name) = part
                        && !names.iter().any(|n| n == name)
                    {
                        names.push(name.to_owned());
                    }
                }
            }
        }
        names
    }

    /// The server with every `${VAR}` replaced by `lookup(VAR)`.
    ///
    /// # Errors
    /// A message naming the value and the variable when a variable is not set (or the
    /// template is malformed, which loading already rejects).
    pub fn expand(
        &self,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<McpServer, ExpandError> {
        let x = |what: &str, value: &str| {
            expand(value, lookup).map_err(|problem| ExpandError {
                server: String::new(),
                value: what.to_owned(),
                problem,
            })
        };
        Ok(match self {
            McpServer::Stdio { command, args, env } => McpServer::Stdio {
                command: x("command", command)?,
                args: args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| x(&format!("args[{i}]"), a))
                    .collect::<Result<_, _>>()?,
                env: env
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), x(&format!("env.{k}"), v)?)))
                    .collect::<Result<_, ExpandError>>()?,
            },
            McpServer::Http { url, headers } => McpServer::Http {
                url: x("url", url)?,
                headers: headers
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), x(&format!("headers.{k}"), v)?)))
                    .collect::<Result<_, ExpandError>>()?,
            },
        })
    }
}

/// Every server of `servers` expanded from aptitude's environment.
///
/// # Errors
/// `mcp_servers.<name>.<value>: ${VAR} is not set …` for the first variable missing.
pub fn expand_all(servers: &McpServers) -> Result<McpServers, ExpandError> {
    let lookup = |name: &str| std::env::var(name).ok();
    servers
        .iter()
        .map(|(name, server)| {
            server
                .expand(&lookup)
                .map(|s| (name.clone(), s))
                .map_err(|e| ExpandError {
                    server: name.clone(),
                    ..e
                })
        })
        .collect()
}

/// What is wrong with a `${VAR}` template, or its expansion.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// `${` without `}`.
    #[error("`${{` without a closing `}}`")]
    Unclosed,
    /// A name that is not `[A-Za-z_][A-Za-z0-9_]*`.
    #[error(
        "`${{{0}}}` does not name a variable (letters, digits and `_`, not starting with a digit)"
    )]
    BadName(String),
    /// A variable aptitude's environment does not set.
    #[error("`${{{0}}}` is not set in aptitude's environment")]
    NotSet(String),
}

/// A server's value that could not be expanded: `mcp_servers.<server>.<value>: <problem>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{value}: {problem}", server_prefix(.server))]
pub struct ExpandError {
    /// The server's name (empty until [`expand_all`] names it).
    pub server: String,
    /// The value: `command`, `args[1]`, `env.TOKEN`, `url`, `headers.Authorization`.
    pub value: String,
    /// What went wrong.
    #[source]
    pub problem: TemplateError,
}

/// `mcp_servers.<server>.`, or nothing before the server is known.
fn server_prefix(server: &str) -> String {
    if server.is_empty() {
        String::new()
    } else {
        format!("mcp_servers.{server}.")
    }
}

/// A piece of a `${VAR}` template.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Part<'a> {
    /// Literal text (`$$` already folded to `$`).
    Text(&'a str),
    /// `${NAME}`.
    Var(&'a str),
}

/// Splits `text` into literal text and `${NAME}` references. `$$` is a literal `$`; a
/// `$` not followed by `{` or `$` is literal.
///
/// # Errors
/// A message for `${` without `}` and for a name that is not `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn parse_template(text: &str) -> Result<Vec<Part<'_>>, TemplateError> {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        if i > 0 {
            parts.push(Part::Text(&rest[..i]));
        }
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            parts.push(Part::Text("$"));
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('{') {
            let Some(end) = tail.find('}') else {
                return Err(TemplateError::Unclosed);
            };
            let name = &tail[..end];
            let valid = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(TemplateError::BadName(name.to_owned()));
            }
            parts.push(Part::Var(name));
            rest = &tail[end + 1..];
        } else {
            parts.push(Part::Text("$"));
            rest = after;
        }
    }
    if !rest.is_empty() {
        parts.push(Part::Text(rest));
    }
    Ok(parts)
}

/// `text` with each `${VAR}` replaced by `lookup(VAR)`.
fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, TemplateError> {
    let mut out = String::new();
    for part in parse_template(text)? {
        match part {
            Part::Text(t) => out.push_str(t),
            Part::Var(name) => match lookup(name) {
                Some(v) => out.push_str(&v),
                None => return Err(TemplateError::NotSet(name.to_owned())),
            },
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_and_dollars_escape() {
        let lookup = |n: &str| (n == "T").then(|| "tok-123".to_owned());
        assert_eq!(expand("Bearer ${T}", &lookup).unwrap(), "Bearer tok-123");
        assert_eq!(expand("$$T costs $5", &lookup).unwrap(), "$T costs $5");
        assert_eq!(
            expand("${MISSING}", &lookup).unwrap_err(),
            TemplateError::NotSet("MISSING".into())
        );
        assert!(parse_template("${T").is_err());
        assert!(parse_template("${1X}").is_err());
        assert!(parse_template("${}").is_err());
    }

    #[test]
    fn expansion_names_the_value_and_variables_are_listed_once() {
        let server = McpServer::Http {
            url: "http://h/${HOST_PATH}".into(),
            headers: [("Authorization".into(), "Bearer ${T} ${T}".into())].into(),
        };
        assert_eq!(server.variables(), vec!["HOST_PATH", "T"]);
        let lookup = |n: &str| (n == "T").then(|| "x".to_owned());
        assert_eq!(
            server.expand(&lookup).unwrap_err().to_string(),
            "url: `${HOST_PATH}` is not set in aptitude's environment"
        );
    }
}
