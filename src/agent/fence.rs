//! How an agent run (or grading call) is fenced in: the sandbox [`Policy`] it gets — what
//! it sees, its whole environment, which loopback ports reach outside.
//!
//! - **Files:** the workspace copy, the run's private home and the MCP servers' log
//!   directory read-write; the agent's installation (its `node_modules`, virtual
//!   environment, interpreter), plugin copies and the MCP servers' programs read-only.
//! - **Environment:** [`crate::sandbox::base_env`] (`PATH`, `HOME` = the private home,
//!   locale), then the agent's defaults, then the variables of aptitude's environment the
//!   agent documents as its own settings ([`AgentCli::own_env`]: its key, its base URL, its
//!   options — a value the user set wins over aptitude's default), then the settings' `env`, the
//!   test's `env:`, and the isolation variables (its config dirs) last. Nothing else: not
//!   `GITHUB_TOKEN`, not another agent's key.
//! - **Network:** the port of the agent's endpoint (`--agent-base-url`, the test's
//!   `base_url:`, or the agent's own base-URL variable), of each MCP HTTP server, and of
//!   any URL in its environment, when they are on this machine's loopback.

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};

use super::{AgentCli, Invocation, McpServer, McpServers};
use crate::sandbox::{Forward, Policy};

/// What one fenced agent command is made of.
#[derive(Debug, Clone, Copy)]
pub struct Parts<'a> {
    /// The agent.
    pub cli: &'a dyn AgentCli,
    /// Its binary, as called.
    pub binary: &'a Path,
    /// The run's private home.
    pub home: &'a Path,
    /// The working directory: the workspace copy (a scratch dir for grading).
    pub workspace: &'a Path,
    /// Other directories the run writes (the MCP servers' logs).
    pub writable: &'a [PathBuf],
    /// Other directories the run reads (plugin copies).
    pub read_only: &'a [PathBuf],
    /// The endpoint the agent is told to use, if any.
    pub base_url: Option<&'a str>,
    /// The test's MCP servers (as written, before the watch's wrapper).
    pub mcp_servers: &'a McpServers,
    /// Host files that must stay unreadable (the test file).
    pub protect: &'a [PathBuf],
    /// The test's `sandbox:` (`--sandbox` wins over it).
    pub sandbox: Option<crate::sandbox::Setting>,
    /// The test's `network:` hosts.
    pub network: &'a [String],
    /// The agent's filled shared cache ([`super::cache`]), and how it names it.
    pub shared_cache: Option<(&'a Path, super::cache::SharedCache)>,
    /// Variables the run must not get from aptitude's environment or its settings: when
    /// it goes through the model gateway, its key and endpoint variables.
    pub hidden: &'a [&'a str],
    /// Variables set last: the gateway's endpoint and placeholder keys.
    pub through: &'a [(String, String)],
    /// What the run may use ([`super::limits`]); `None`: unlimited.
    pub limits: Option<crate::spec::limits::RunLimits>,
    /// Whether the tracer records what it runs ([`crate::sandbox::Policy::exec_record`]):
    /// an agent's run, not a grading call.
    pub exec_record: bool,
}

/// The sandbox policy of one agent command with `invocation`, `settings_env`
/// ([`AgentSettings::env`](super::AgentSettings)) and the test's `env:`.
pub fn policy(
    parts: &Parts<'_>,
    invocation: &Invocation,
    settings_env: &[(String, String)],
    test_env: &BTreeMap<String, String>,
) -> Policy {
    let mut read_only = crate::sandbox::install::roots(parts.binary);
    read_only.extend(parts.read_only.iter().cloned());
    for server in parts.mcp_servers.values() {
        if let McpServer::Stdio { command, args, .. } = server {
            read_only.extend(crate::sandbox::install::roots(Path::new(command)));
            for arg in args
                .iter()
                .map(Path::new)
                .filter(|a| a.is_absolute() && a.exists())
            {
                read_only.extend(crate::sandbox::install::roots(arg));
                if let Some(dir) = arg
                    .parent()
                    .filter(|d| !read_only.iter().any(|r| d.starts_with(r)))
                {
                    read_only.push(dir.to_owned());
                }
            }
        }
    }
    read_only.sort();
    read_only.dedup();
    let mut writable = vec![parts.workspace.to_owned(), parts.home.to_owned()];
    writable.extend(parts.writable.iter().cloned());
    let path_dirs = path_dirs(parts.binary, &read_only);
    let mut env = environment(parts, &path_dirs, invocation, settings_env, test_env);
    // Through the gateway, the real key and endpoint never enter the sandbox (not even
    // overridden: bubblewrap's arguments are readable inside).
    env.retain(|(k, _)| !parts.hidden.contains(&k.as_str()));
    env.extend(parts.through.iter().cloned());
    // The shared cache, read-only where the agent looks for it in its private home.
    let mut mounts = Vec::new();
    if let Some((dir, cache)) = parts.shared_cache {
        let parent = parts.home.join(".cache");
        mounts.push((dir.join(cache.subdir), parent.join(cache.subdir)));
        env.push((cache.var.to_owned(), parent.display().to_string()));
    }
    Policy {
        cwd: parts.workspace.to_owned(),
        writable,
        read_only,
        mounts,
        forwards: forwards(parts, &env),
        env,
        must_not_read: parts.protect.to_vec(),
        network: network_hosts(parts),
        limits: parts.limits,
        exec_record: parts.exec_record,
    }
}

/// `PATH` inside: the directory the agent was called from (`node_modules/.bin`), the
/// `bin` of each installation shown, and the directories of aptitude's own `PATH` that the
/// sandbox shows (system directories); [`crate::sandbox::base_env`] adds the system's.
fn path_dirs(binary: &Path, read_only: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = binary.parent().map(Path::to_owned).into_iter().collect();
    dirs.extend(
        read_only
            .iter()
            .map(|r| r.join("bin"))
            .filter(|b| b.is_dir()),
    );
    dirs.extend(
        read_only
            .iter()
            .map(|r| r.join(".bin"))
            .filter(|b| b.is_dir()),
    );
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let shown = ["/usr", "/opt", "/nix"].iter().any(|s| dir.starts_with(s))
                || read_only.iter().any(|r| dir.starts_with(r));
            if shown && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// The command's whole environment, in the order of the module docs (later wins).
fn environment(
    parts: &Parts<'_>,
    path_dirs: &[PathBuf],
    invocation: &Invocation,
    settings_env: &[(String, String)],
    test_env: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let mut env = crate::sandbox::base_env(parts.home, path_dirs);
    env.extend(invocation.defaults.iter().cloned());
    let own = parts.cli.own_env();
    for (key, value) in std::env::vars() {
        let mine = key == parts.cli.api_key_env()
            || parts.cli.base_url_env() == Some(key.as_str())
            || own.iter().any(|o| {
                if o.ends_with('_') {
                    key.starts_with(o)
                } else {
                    key == *o
                }
            });
        if mine {
            env.push((key, value));
        }
    }
    env.extend(settings_env.iter().cloned());
    env.extend(test_env.iter().map(|(k, v)| (k.clone(), v.clone())));
    env.extend(invocation.isolation.iter().cloned());
    env
}

/// The test's `network:` hosts and the hosts of its MCP HTTP servers that are not on this
/// machine (reached through the proxy).
fn network_hosts(parts: &Parts<'_>) -> Vec<String> {
    let mut hosts = parts.network.to_vec();
    for server in parts.mcp_servers.values() {
        if let McpServer::Http { url, .. } = server
            && loopback_forward(url).is_none()
            && let Ok(parsed) = url::Url::parse(url)
            && let (Some(host), Some(port)) = (parsed.host_str(), parsed.port_or_known_default())
        {
            hosts.push(format!("{host}:{port}"));
        }
    }
    hosts
}

/// The loopback ports the agent is told about: its endpoint, its MCP HTTP servers, and any
/// `http(s)://` URL on this machine's loopback in its environment or a stdio MCP server's
/// (a variable the test or the agent's own settings point at a local service, the address
/// of aptitude's MCP host given to a relay).
fn forwards(parts: &Parts<'_>, env: &[(String, String)]) -> Vec<Forward> {
    let from_env = parts
        .cli
        .base_url_env()
        .and_then(|k| env.iter().rev().find(|(key, _)| key == k))
        .map(|(_, v)| v.as_str());
    let mut urls: Vec<&str> = parts.base_url.or(from_env).into_iter().collect();
    for server in parts.mcp_servers.values() {
        match server {
            McpServer::Http { url, .. } => urls.push(url),
            // A stdio server told of a local service (aptitude's MCP host for a relay).
            McpServer::Stdio { env, .. } => urls.extend(
                env.values()
                    .map(String::as_str)
                    .filter(|v| v.starts_with("http://") || v.starts_with("https://")),
            ),
        }
    }
    urls.extend(
        env.iter()
            .map(|(_, v)| v.as_str())
            .filter(|v| v.starts_with("http://") || v.starts_with("https://")),
    );
    let mut out: Vec<Forward> = urls.into_iter().filter_map(loopback_forward).collect();
    out.sort();
    out.dedup_by_key(|f| f.port);
    out
}

/// The forward of `url` when it names this machine's loopback (`127.0.0.1`, `localhost`,
/// `[::1]`), keeping its port.
pub fn loopback_forward(url: &str) -> Option<Forward> {
    let parsed = url::Url::parse(url).ok()?;
    let host = parsed.host_str()?.trim_matches(['[', ']']);
    let port = parsed.port_or_known_default()?;
    let loopback = match host {
        "localhost" => true,
        other => other
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback()),
    };
    if !loopback {
        return None;
    }
    let target: SocketAddr = (host, port).to_socket_addrs().ok()?.next()?;
    Some(Forward { port, target })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_endpoints_are_forwarded_with_their_port() {
        let f = loopback_forward("http://127.0.0.1:4321/v1").unwrap();
        assert_eq!(f.port, 4321);
        assert_eq!(f.target, "127.0.0.1:4321".parse().unwrap());
        assert_eq!(loopback_forward("http://localhost:9/x").unwrap().port, 9);
        assert!(loopback_forward("https://api.anthropic.com").is_none());
        assert!(loopback_forward("http://10.0.0.1:80").is_none());
    }

    #[test]
    fn the_environment_holds_the_agents_own_settings_and_nothing_else_of_aptitudes() {
        let cli = super::super::claude::Claude::default();
        let home = tempfile::tempdir().unwrap();
        let parts = Parts {
            cli: &cli,
            binary: Path::new("/bin/sh"),
            home: home.path(),
            workspace: home.path(),
            writable: &[],
            read_only: &[],
            base_url: None,
            mcp_servers: &McpServers::default(),
            protect: &[],
            sandbox: None,
            network: &[],
            shared_cache: None,
            hidden: &[],
            through: &[],
            limits: None,
            exec_record: true,
        };
        let invocation = Invocation {
            args: Vec::new(),
            defaults: vec![("DISABLE_AUTOUPDATER".into(), "1".into())],
            isolation: vec![("CLAUDE_CONFIG_DIR".into(), "/cfg".into())],
        };
        let test_env = BTreeMap::from([("FROM_TEST".to_owned(), "1".to_owned())]);
        let policy = policy(
            &parts,
            &invocation,
            &[("FROM_FLAG".into(), "2".into())],
            &test_env,
        );
        let keys: Vec<&str> = policy.env.iter().map(|(k, _)| k.as_str()).collect();
        for wanted in [
            "PATH",
            "HOME",
            "DISABLE_AUTOUPDATER",
            "FROM_FLAG",
            "FROM_TEST",
            "CLAUDE_CONFIG_DIR",
        ] {
            assert!(keys.contains(&wanted), "{wanted} in {keys:?}");
        }
        // This test process's own variables (CARGO_*, RUST_*, GITHUB_TOKEN when set) are
        // not passed.
        assert!(
            !keys
                .iter()
                .any(|k| k.starts_with("CARGO") || *k == "GITHUB_TOKEN"),
            "{keys:?}"
        );
        let home_value = &policy
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "HOME")
            .unwrap()
            .1;
        assert_eq!(home_value, &home.path().display().to_string());
        assert_eq!(
            policy.env.last().unwrap().0,
            "CLAUDE_CONFIG_DIR",
            "isolation last"
        );
        assert!(policy.writable.contains(&home.path().to_owned()));
    }
}
