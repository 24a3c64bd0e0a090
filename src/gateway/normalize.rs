//! What two runs of the same agent on the same test send differently by construction, and
//! is therefore not a divergence when a run is replayed from a cassette.
//!
//! Requests are compared after normalisation; everything else in them — the agent and its
//! version, its system prompt and tools, the conversation, each tool result — is compared
//! as is, so a replay that differs there is a divergence. Normalised:
//!
//! | what | why it differs between runs | becomes |
//! |---|---|---|
//! | the run's workspace copy and private home (and their canonical forms) | aptitude makes them fresh for each run (`/tmp/aptitude-ws-…`) | `@@aptitude:workspace@@`, `@@aptitude:home@@` |
//! | the package directory the agent is installed in (its `node_modules`, its virtual environment: [`crate::sandbox::install::package_root`]) | another machine, checkout or runner puts it elsewhere; Gemini CLI lists its built-in skills by absolute path in its system prompt | `@@aptitude:install@@` |
//! | this machine's kernel release (`/proc/sys/kernel/osrelease`) | agents put the OS version in their system prompt; CI runner images move on | `<os-release>` |
//! | UUIDs | session and request ids the agent makes (`metadata.user_id`, `prompt_cache_key`) | `<uuid>` |
//! | hex ids of 32+ digits | hashed ids (Claude Code's user id) | `<hex>` |
//! | the names aptitude gives the run's directories (`aptitude-ws-…`, `aptitude-qwen-home-…`), also in relative paths | made fresh for each run | `@@aptitude:workspace-dir@@`, `@@aptitude:home-name@@` |
//! | dates and times (ISO 8601, `11/26/2026`, `Wednesday, November 26, 2026`) | the day the run happened, in system prompts | `<date>` |
//! | the order of the `<skill>` entries of an `<available_skills>` list | Gemini CLI lists its skills in the order the file system reads their directories, which differs between checkouts | sorted |
//! | the order of the names in a `Did you mean one of: "a", "b", "c"?` list | Gemini CLI and Qwen Code suggest the registered tools nearest a name they do not have, ties in registry order, which races like their declarations | sorted |
//! | the order of the tools a request declares: `tools[]` (Anthropic `name`, Responses `name` or `type`, Chat `function.name`) and Gemini's `tools[].functionDeclarations[]` (`name`) | Gemini CLI declares its tools in the order they were discovered, which races MCP discovery against its skill tool | sorted by name: a set keyed by name |
//! | measurements agents add to tool results: Codex's `Wall time: 0.0000 seconds` and `Chunk ID: 7ec8be`, Gemini CLI's `Process Group PGID: 25145`, a `PID: 123` | the machine's timing and process numbers | `Wall time: <measured>`, `Chunk ID: <id>`, `PGID: <pid>` |
//! | Unix times in s or ms, 2017–2033 (`1795655838668`), as JSON numbers or inside strings | when a turn started (Codex's `turn_started_at_unix_ms`), ids made from the time (Gemini CLI's `run_shell_command_<ms>_0`) | `<time>` |
//!
//! Replies are stored with the run's paths as tokens (only those) and given back with the
//! replaying run's own paths, so a tool call naming a file by its absolute path names the
//! file in the new workspace copy.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// The token for the run's workspace copy.
pub const WORKSPACE: &str = "@@aptitude:workspace@@";
/// The token for the run's private home.
pub const HOME: &str = "@@aptitude:home@@";
/// The token for the run's workspace copy as a directory name: every character other than
/// an ASCII letter or digit a `-` (how Claude Code names a project's directory,
/// `projects/-tmp-aptitude-ws-…-workspace`).
pub const WORKSPACE_SLUG: &str = "@@aptitude:workspace-slug@@";

/// The token for the name aptitude gave the directory holding the workspace copy
/// (`aptitude-ws-…`).
pub const WORKSPACE_DIR: &str = "@@aptitude:workspace-dir@@";
/// The token for the name aptitude gave the run's private home (`aptitude-qwen-home-…`).
pub const HOME_NAME: &str = "@@aptitude:home-name@@";
/// The token for the package directory the agent is installed in
/// ([`crate::sandbox::install::package_root`]).
pub const INSTALL: &str = "@@aptitude:install@@";

/// This machine's kernel release (`6.8.0-1017-azure`), when it can be read.
static OS_RELEASE: LazyLock<Option<String>> = LazyLock::new(|| {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| s.len() >= 3)
});

/// Whether a JSON number is a Unix time of the same range.
fn is_unix_time(n: &serde_json::Number) -> bool {
    n.as_u64().is_some_and(|n| {
        (1_500_000_000..2_000_000_000).contains(&n)
            || (1_500_000_000_000..2_000_000_000_000).contains(&n)
    })
}

/// `path` as Claude Code names a project's directory.
fn slug(path: &str) -> String {
    path.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// Values that differ between runs by construction (see the module table).
static VOLATILE: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
    // Unix times twice: a match takes the separator after it, which may start the next.
    let time = (
        r"(^|[^0-9])1[5-9](?:[0-9]{11}|[0-9]{8})([^0-9]|$)",
        "${1}<time>${2}",
    );
    let patterns: [(&str, &str); 10] = [
        (
            r"\b(Wall time|Elapsed|Duration): [0-9]+(?:\.[0-9]+)? ?(?:seconds|secs|s|ms)\b",
            "${1}: <measured>",
        ),
        (r"\b(Chunk ID): [0-9a-zA-Z]+", "${1}: <id>"),
        (
            r"\b(PGID|PID|Process ID|Process Group ID): [0-9]+",
            "${1}: <pid>",
        ),
        (
            r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
            "<uuid>",
        ),
        (r"\b[0-9a-f]{32,}\b", "<hex>"),
        (
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?",
            "<date>",
        ),
        (r"\b\d{1,2}/\d{1,2}/\d{4}\b", "<date>"),
        (
            r"\b(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,? )?(?:January|February|March|April|May|June|July|August|September|October|November|December) \d{1,2},? \d{4}\b",
            "<date>",
        ),
        // Last: inside a hex id, digits stand next to letters.
        time,
        time,
    ];
    patterns
        .into_iter()
        .filter_map(|(p, token)| Regex::new(p).ok().map(|r| (r, token)))
        .collect()
});

/// A run's normaliser: its own paths, longest first.
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    /// Every form of the run's paths, longest first, with its token.
    paths: Vec<(String, &'static str)>,
    /// What each token is in this run (the form the agent was given).
    live: Vec<(&'static str, String)>,
}

impl Normalizer {
    /// A normaliser for a run in `workspace` with private home `home` (each also in its
    /// canonical form, when that differs).
    pub fn new(workspace: Option<&Path>, home: Option<&Path>) -> Self {
        let mut paths = Vec::new();
        let mut live = Vec::new();
        for (path, token) in [(workspace, WORKSPACE), (home, HOME)] {
            let Some(path) = path else { continue };
            let raw = path.display().to_string();
            if raw.len() <= 1 {
                continue;
            }
            if let Ok(canonical) = path.canonicalize() {
                let canonical = canonical.display().to_string();
                if canonical != raw {
                    if token == WORKSPACE {
                        paths.push((slug(&canonical), WORKSPACE_SLUG));
                    }
                    paths.push((canonical, token));
                }
            }
            if token == WORKSPACE {
                paths.push((slug(&raw), WORKSPACE_SLUG));
                live.push((WORKSPACE_SLUG, slug(&raw)));
            }
            // The directory names aptitude made for the run, which relative paths show.
            let (named, name_token) = if token == WORKSPACE {
                (path.parent(), WORKSPACE_DIR)
            } else {
                (Some(path), HOME_NAME)
            };
            if let Some(name) = named
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .filter(|n| n.starts_with("aptitude-"))
            {
                live.push((name_token, name.clone()));
                paths.push((name, name_token));
            }
            live.push((token, raw.clone()));
            paths.push((raw, token));
        }
        paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        paths.dedup();
        Normalizer { paths, live }
    }

    /// This normaliser, also naming the package directory the agent is installed in
    /// (`root`, from [`crate::sandbox::install::package_root`]; ignored unless absolute
    /// and at least two levels deep) by [`INSTALL`], also in its canonical form.
    #[must_use]
    pub fn with_installation(mut self, root: Option<&Path>) -> Self {
        let Some(root) = root.filter(|r| r.is_absolute() && r.components().count() > 2) else {
            return self;
        };
        let raw = root.display().to_string();
        if let Ok(canonical) = root.canonicalize() {
            self.paths.push((canonical.display().to_string(), INSTALL));
        }
        self.live.push((INSTALL, raw.clone()));
        self.paths.push((raw, INSTALL));
        self.paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        self.paths.dedup();
        self
    }

    /// `text` with the run's paths as tokens.
    pub fn paths(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (path, token) in &self.paths {
            if out.contains(path.as_str()) {
                out = out.replace(path.as_str(), token);
            }
        }
        out
    }

    /// `text` with the tokens as this run's paths (in the form the agent was given).
    pub fn restore(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for (token, path) in &self.live {
            if out.contains(token) {
                out = out.replace(token, path);
            }
        }
        out
    }

    /// A request's text as compared: the run's paths, then the volatile values, as tokens.
    pub fn request_text(&self, text: &str) -> String {
        let mut out = sorted_suggestions(&sorted_skills(&self.paths(text)));
        if let Some(release) = OS_RELEASE.as_deref()
            && out.contains(release)
        {
            out = out.replace(release, "<os-release>");
        }
        for (pattern, token) in VOLATILE.iter() {
            if pattern.is_match(&out) {
                out = pattern.replace_all(&out, *token).into_owned();
            }
        }
        out
    }

    /// A request's JSON as compared: every string (and key) through
    /// [`Normalizer::request_text`], its tools in order of their names
    /// ([`sorted_tools`]).
    pub fn request_json(&self, value: &Value) -> Value {
        sorted_tools(self.tokens_json(value))
    }

    fn tokens_json(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.request_text(s)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.tokens_json(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.request_text(k), self.tokens_json(v)))
                    .collect(),
            ),
            Value::Number(n) if is_unix_time(n) => Value::String("<time>".into()),
            other => other.clone(),
        }
    }
}

/// A tool declaration's name: Anthropic's and the Responses API's `name`, Chat
/// Completions' `function.name`, a built-in tool's `type` (`web_search`); else its JSON.
fn tool_key(tool: &Value) -> String {
    tool.get("name")
        .or_else(|| tool.get("function").and_then(|f| f.get("name")))
        .or_else(|| tool.get("type"))
        .and_then(Value::as_str)
        .map_or_else(|| tool.to_string(), str::to_owned)
}

/// A request body with the tools it declares in order of their names, on every protocol:
/// `tools[]`, and each Gemini `tools[].functionDeclarations[]`. The order an agent declares
/// its tools in is not what it does (Gemini CLI's races MCP discovery against its own
/// tools), so a replay compares them as a set keyed by name. Idempotent; other fields are
/// left as they are.
pub fn sorted_tools(mut request: Value) -> Value {
    let Some(tools) = request.get_mut("tools").and_then(Value::as_array_mut) else {
        return request;
    };
    for tool in tools.iter_mut() {
        if let Some(declarations) = tool
            .get_mut("functionDeclarations")
            .and_then(Value::as_array_mut)
        {
            declarations.sort_by_cached_key(tool_key);
        }
    }
    tools.sort_by_cached_key(tool_key);
    request
}

/// An `<available_skills>` list (Gemini CLI's system prompt) with its `<skill>` entries
/// sorted: the order is the file system's, not the agent's choice.
fn sorted_skills(text: &str) -> String {
    static LIST: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"(?s)<available_skills>(.*?)</available_skills>").ok());
    let Some(list) = LIST.as_ref().filter(|l| l.is_match(text)) else {
        return text.to_owned();
    };
    list.replace_all(text, |caps: &regex::Captures<'_>| {
        let body = &caps[1];
        let mut skills: Vec<&str> = body
            .split("<skill>")
            .skip(1)
            .map(|s| s.trim_end())
            .collect();
        skills.sort_unstable();
        let head = body.split("<skill>").next().unwrap_or_default();
        let tail = &body[body.trim_end().len()..];
        let joined: Vec<String> = skills.iter().map(|s| format!("<skill>{s}")).collect();
        format!(
            "<available_skills>{head}{}{tail}</available_skills>",
            joined.join(head)
        )
    })
    .into_owned()
}

/// A `Did you mean one of: "a", "b"?` list (Gemini CLI's and Qwen Code's answer to a
/// call of a tool they do not have) with its names sorted: ties among the nearest names
/// come in the order the tools were registered, which races.
fn sorted_suggestions(text: &str) -> String {
    static LIST: LazyLock<Option<Regex>> = LazyLock::new(|| {
        Regex::new(
            r#"Did you mean one of: ((?:"[^"
]{0,200}"(?:, )?){2,20})\?"#,
        )
        .ok()
    });
    let Some(list) = LIST.as_ref().filter(|l| l.is_match(text)) else {
        return text.to_owned();
    };
    list.replace_all(text, |caps: &regex::Captures<'_>| {
        let mut names: Vec<&str> = caps[1].split(", ").collect();
        names.sort_unstable();
        format!("Did you mean one of: {}?", names.join(", "))
    })
    .into_owned()
}

/// Two strings shown where they first differ: 60 characters before it (`…` when cut)
/// and up to 120 after, each quoted.
fn around_first_difference(a: &str, b: &str) -> (String, String) {
    let same = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let window = |s: &str| {
        let start = same.saturating_sub(60);
        let text: String = s.chars().skip(start).take(same - start + 120).collect();
        let cut = crate::shared::cut::chars(&text, 200).kept;
        let more = s.chars().count() > start + (same - start + 120);
        format!(
            "{}{cut:?}{}",
            if start > 0 { "…" } else { "" },
            if more { "…" } else { "" }
        )
    };
    (window(a), window(b))
}

/// Where two JSON values first differ: a path (`messages[3].content[0].text`), what the
/// first has there and what the second has (each cut to 200 characters, two strings
/// around where they first differ; `(absent)` for a missing key or item). `None` when they
/// are equal.
pub fn first_difference(recorded: &Value, now: &Value) -> Option<(String, String, String)> {
    fn show(v: Option<&Value>) -> String {
        match v {
            None => "(absent)".to_owned(),
            Some(Value::String(s)) => format!("{:?}", crate::shared::cut::chars(s, 200).kept),
            Some(v) => crate::shared::cut::chars(&v.to_string(), 200).kept,
        }
    }
    fn walk(a: &Value, b: &Value, at: String) -> Option<(String, String, String)> {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
                keys.sort();
                keys.dedup();
                keys.into_iter().find_map(|k| {
                    let path = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    match (x.get(k), y.get(k)) {
                        (Some(a), Some(b)) => walk(a, b, path),
                        (a, b) => Some((path, show(a), show(b))),
                    }
                })
            }
            (Value::Array(x), Value::Array(y)) => (0..x.len().max(y.len())).find_map(|i| {
                let path = format!("{at}[{i}]");
                match (x.get(i), y.get(i)) {
                    (Some(a), Some(b)) => walk(a, b, path),
                    (a, b) => Some((path, show(a), show(b))),
                }
            }),
            (a, b) if a == b => None,
            (Value::String(x), Value::String(y)) => {
                let (x, y) = around_first_difference(x, y);
                Some((
                    if at.is_empty() {
                        "(the body)".into()
                    } else {
                        at
                    },
                    x,
                    y,
                ))
            }
            (a, b) => Some((
                if at.is_empty() {
                    "(the body)".into()
                } else {
                    at
                },
                show(Some(a)),
                show(Some(b)),
            )),
        }
    }
    walk(recorded, now, String::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_differs_by_construction_is_normalised_and_nothing_else() {
        let ws = tempfile::tempdir().unwrap();
        let n = Normalizer::new(
            Some(ws.path()),
            Some(Path::new("/tmp/aptitude-claude-home-x1")),
        );
        let text = format!(
            "cwd {}/src, project {}, home /tmp/aptitude-claude-home-x1, session 6f1c2a9e-7b3d-4c5e-9f10-a1b2c3d4e5f6, user 0123456789abcdef0123456789abcdef01, today 2026-11-26T10:31:02.123Z or 11/26/2026 or Wednesday, November 26, 2026; version 2.1.328, exit code 3",
            ws.path().display(),
            slug(&ws.path().display().to_string())
        );
        assert_eq!(
            n.request_text(&text),
            "cwd @@aptitude:workspace@@/src, project @@aptitude:workspace-slug@@, home @@aptitude:home@@, session <uuid>, user <hex>, today <date> or <date> or <date>; version 2.1.328, exit code 3"
        );
        assert_eq!(
            n.request_text("{\"turn_started_at_unix_ms\":1795655838668,\"id\":\"run_shell_command_1795655856450_0\",\"t\":1795655856} code 12345"),
            "{\"turn_started_at_unix_ms\":<time>,\"id\":\"run_shell_command_<time>_0\",\"t\":<time>} code 12345"
        );
        assert_eq!(
            n.request_text("Chunk ID: 7ec8be\nWall time: 0.0123 seconds\nProcess exited with code 0\nProcess Group PGID: 25145\nexit 1"),
            "Chunk ID: <id>\nWall time: <measured>\nProcess exited with code 0\nProcess Group PGID: <pid>\nexit 1"
        );
        assert_eq!(
            n.request_json(&json!({"created": 1795655856, "max_tokens": 32000})),
            json!({"created": "<time>", "max_tokens": 32000})
        );
        if let Some(release) = OS_RELEASE.as_deref() {
            assert_eq!(
                n.request_text(&format!("OS Version: Linux {release}")),
                "OS Version: Linux <os-release>"
            );
        }
        let reply = format!("cat {}/a.txt", ws.path().display());
        let stored = n.paths(&reply);
        assert_eq!(stored, "cat @@aptitude:workspace@@/a.txt");
        let home = tempfile::Builder::new()
            .prefix("aptitude-qwen-home-")
            .tempdir()
            .unwrap();
        let with_home = Normalizer::new(None, Some(home.path()));
        let name = home
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(
            with_home.request_text(&format!("Context from: ../../{name}/.qwen/x.md")),
            "Context from: ../../@@aptitude:home-name@@/.qwen/x.md"
        );
        let other = tempfile::tempdir().unwrap();
        let replaying = Normalizer::new(Some(other.path()), None);
        assert_eq!(
            replaying.restore(&stored),
            format!("cat {}/a.txt", other.path().display())
        );
    }

    /// A cassette recorded where the agent was installed elsewhere (another checkout, a CI
    /// runner) matches: Gemini CLI names its built-in skills by absolute path.
    #[test]
    fn where_the_agent_is_installed_is_normalised() {
        let recorded_at = Path::new("/check/work/main/node_modules");
        let replayed_at = Path::new("/home/dev/proj/node_modules");
        let skill = "/@google/gemini-cli/bundle/builtin/skill-creator/SKILL.md";
        let recorded = Normalizer::new(None, None).with_installation(Some(recorded_at));
        let replaying = Normalizer::new(None, None).with_installation(Some(replayed_at));
        let seen = |n: &Normalizer, root: &Path| {
            n.request_text(&format!("<location>{}{skill}</location>", root.display()))
        };
        assert_eq!(seen(&recorded, recorded_at), seen(&replaying, replayed_at));
        assert_eq!(
            seen(&replaying, replayed_at),
            format!("<location>@@aptitude:install@@{skill}</location>")
        );
        // Another directory is not the installation.
        assert_ne!(
            seen(&replaying, Path::new("/home/dev/other/node_modules")),
            seen(&replaying, replayed_at)
        );
        assert_eq!(
            replaying.restore("@@aptitude:install@@/x"),
            "/home/dev/proj/node_modules/x"
        );
        // A relative or shallow root would name words, not the installation.
        for root in ["node_modules", "/venv"] {
            let n = Normalizer::new(None, None).with_installation(Some(Path::new(root)));
            assert_eq!(
                n.request_text("ls node_modules /venv"),
                "ls node_modules /venv"
            );
        }
    }

    /// Gemini CLI lists its skills in directory order, which another checkout changes.
    #[test]
    fn the_order_of_listed_skills_is_not_a_difference() {
        let n = Normalizer::default();
        let skill = |name: &str| format!("<skill>\n    <name>{name}</name>\n  </skill>");
        let list = |a: &str, b: &str| {
            format!(
                "intro\n<available_skills>\n  {}\n  {}\n</available_skills>\nrest",
                skill(a),
                skill(b)
            )
        };
        let one = n.request_text(&list("skill-creator", "antigravity-support"));
        assert_eq!(
            one,
            n.request_text(&list("antigravity-support", "skill-creator"))
        );
        assert_eq!(one, list("antigravity-support", "skill-creator"));
        assert_ne!(one, n.request_text(&list("antigravity-support", "other")));
    }

    #[test]
    fn two_long_strings_are_shown_where_they_differ() {
        let a = format!("{}the tool said 0 and more", "x".repeat(300));
        let b = format!("{}the tool said 3 and more", "x".repeat(300));
        let (_, was, now) = first_difference(&json!(a), &json!(b)).unwrap();
        assert!(
            was.starts_with('…') && was.contains("said 0 and more"),
            "{was}"
        );
        assert!(now.contains("said 3 and more"), "{now}");
    }

    #[test]
    fn the_first_difference_is_named_by_its_path() {
        let recorded = json!({"model": "m", "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "tool_result", "content": "exit 0"}]}]});
        let now = json!({"model": "m", "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "tool_result", "content": "exit 3"}]}]});
        assert_eq!(
            first_difference(&recorded, &now),
            Some((
                "messages[1].content[0].content".into(),
                "\"exit 0\"".into(),
                "\"exit 3\"".into()
            ))
        );
        let longer = json!({"model": "m", "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "tool_result", "content": "exit 0"}]}, {"role": "user", "content": "b"}]});
        assert_eq!(
            first_difference(&recorded, &longer).map(|d| (d.0, d.1)),
            Some(("messages[2]".into(), "(absent)".into()))
        );
        assert_eq!(first_difference(&recorded, &recorded.clone()), None);
    }

    /// Gemini CLI declares its tools in the order discovery finished: MCP discovery races
    /// its skill tool, so a loaded machine swaps `activate_skill` and an MCP tool
    /// (`tools[0].functionDeclarations[16]`). Tools compare as a set keyed by name, on
    /// every protocol; a tool that differs is still a difference.
    #[test]
    fn declared_tools_compare_as_a_set_keyed_by_name_on_every_protocol() {
        let n = Normalizer::default();
        let gemini = |names: &[&str]| {
            let decls: Vec<Value> = names
                .iter()
                .map(|name| json!({"name": name, "description": format!("{name} tool")}))
                .collect();
            json!({"contents": [], "tools": [{"functionDeclarations": decls}]})
        };
        assert_eq!(
            n.request_json(&gemini(&[
                "run_shell_command",
                "activate_skill",
                "mcp_echo_echo"
            ])),
            n.request_json(&gemini(&[
                "run_shell_command",
                "mcp_echo_echo",
                "activate_skill"
            ]))
        );
        assert_ne!(
            n.request_json(&gemini(&["run_shell_command", "activate_skill"])),
            n.request_json(&gemini(&["run_shell_command", "mcp_echo_echo"]))
        );
        let anthropic = |a: &str, b: &str| json!({"tools": [{"name": a, "input_schema": {}}, {"name": b, "input_schema": {}}, {"type": "web_search_20250305", "name": "web_search"}]});
        assert_eq!(
            n.request_json(&anthropic("Bash", "mcp__echo__echo")),
            n.request_json(&anthropic("mcp__echo__echo", "Bash"))
        );
        let chat = |a: &str, b: &str| json!({"tools": [{"type": "function", "function": {"name": a}}, {"type": "function", "function": {"name": b}}]});
        assert_eq!(
            n.request_json(&chat("run_shell_command", "mcp__echo__echo")),
            n.request_json(&chat("mcp__echo__echo", "run_shell_command"))
        );
        let responses = |a: &str| json!({"tools": [{"type": "function", "name": a}, {"type": "web_search"}, {"type": "function", "name": "exec_command"}]});
        let sorted = n.request_json(&responses("apply_patch"));
        assert_eq!(sorted, sorted_tools(sorted.clone()), "idempotent");
        assert_eq!(
            sorted["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(tool_key)
                .collect::<Vec<_>>(),
            ["apply_patch", "exec_command", "web_search"]
        );
        // The first difference is still named by its place in the sorted list.
        let changed = json!({"tools": [{"name": "Bash", "description": "new"}]});
        let was = json!({"tools": [{"name": "Bash", "description": "old"}]});
        assert_eq!(
            first_difference(&n.request_json(&was), &n.request_json(&changed)).map(|d| d.0),
            Some("tools[0].description".to_owned())
        );
    }

    /// Qwen Code (like Gemini CLI) answers a call of a tool it does not have with the
    /// registered tools nearest its name, ties in registration order, which races: the
    /// order is not a difference, the names are.
    #[test]
    fn the_order_of_suggested_tool_names_is_not_a_difference() {
        let n = Normalizer::default();
        let said = |list: &str| {
            n.request_text(&format!(
                "Tool \"get_capital\" not found in registry. Tools must use the exact names that are registered. Did you mean one of: {list}?"
            ))
        };
        let a = said(r#""get_goal", "web_fetch", "tool_call""#);
        assert_eq!(a, said(r#""get_goal", "tool_call", "web_fetch""#));
        assert!(
            a.ends_with(r#"Did you mean one of: "get_goal", "tool_call", "web_fetch"?"#),
            "{a}"
        );
        assert_ne!(a, said(r#""get_goal", "tool_call", "read_file""#));
    }
}
