//! `sandbox:`, `hooks:`, `network:` and `limits:`, in a test or an `aptitude.yaml`: whether
//! the test's runs are sandboxed, whether the agent's own hooks run, the hosts its sandbox
//! may reach beyond the model (for tests that install packages), and what a run may use.

use super::super::diagnostic::Diagnostic;
use super::super::node::{Node, Value};
use super::super::{HooksSetting, SandboxSetting};
use super::Ctx;

impl Ctx {
    /// `sandbox: on|off` (`true`/`false` too).
    pub(super) fn sandbox_setting(&mut self, node: &Node) -> Option<SandboxSetting> {
        match &node.value {
            Value::Bool(true) => Some(SandboxSetting::On),
            Value::Bool(false) => Some(SandboxSetting::Off),
            Value::Str(s) => match s.parse() {
                Ok(setting) => Some(setting),
                Err(why) => {
                    self.push(Diagnostic::new(node.pos, why).label("not on or off").hint(
                        "`sandbox: off` runs the test's agent unsandboxed; every report says so",
                    ));
                    None
                }
            },
            _ => {
                self.type_error(node, "sandbox", "`on` or `off`");
                None
            }
        }
    }

    /// `hooks: none|workspace` (`false` is `none`).
    pub(super) fn hooks_setting(&mut self, node: &Node) -> Option<HooksSetting> {
        match &node.value {
            Value::Bool(false) => Some(HooksSetting::None),
            Value::Str(s) => match s.parse() {
                Ok(setting) => Some(setting),
                Err(why) => {
                    self.push(Diagnostic::new(node.pos, why).label("not none or workspace").hint(
                        "`hooks: workspace` lets the agent's hooks from the workspace and the test's plugins run; by default none runs",
                    ));
                    None
                }
            },
            _ => {
                self.type_error(node, "hooks", "`none` or `workspace`");
                None
            }
        }
    }

    /// `limits: {memory, processes, disk}` ([`crate::spec::limits`]).
    pub(super) fn limits(&mut self, node: &Node) -> crate::spec::limits::Limits {
        use crate::spec::limits::{Limits, parse_size};
        let mut limits = Limits::default();
        let Some(fields) = self.map(node, "limits") else {
            return limits;
        };
        self.unknown_keys(&fields, Limits::KEYS, "`limits`");
        let size = |ctx: &mut Self, key: &str| -> Option<u64> {
            let n = fields.get(key)?;
            let text = match &n.value {
                Value::Int(i) => i.to_string(),
                Value::Str(s) => s.clone(),
                _ => {
                    ctx.type_error(n, key, "a size such as `4GiB` or `512MB`");
                    return None;
                }
            };
            match parse_size(&text) {
                Ok(bytes) => Some(bytes),
                Err(why) => {
                    ctx.push(Diagnostic::new(n.pos, why.to_string()).label("not a size").hint(
                        "write a number of bytes, or one with a unit: `4GiB`, `512MB`, `2G`",
                    ));
                    None
                }
            }
        };
        limits.memory = size(self, "memory");
        limits.disk = size(self, "disk");
        if let Some(n) = fields.get("processes") {
            match self.count(n, "processes") {
                Some(0) => self
                    .push(Diagnostic::new(n.pos, "`processes` must be at least 1").label("zero")),
                found => limits.processes = found,
            }
        }
        limits
    }

    /// `network:` hosts: `registry.npmjs.org`, `*.pypi.org` (any subdomain), with an
    /// optional `:PORT` (443 when none is given).
    pub(super) fn network(&mut self, node: &Node) -> Vec<String> {
        let items: Vec<&Node> = match &node.value {
            Value::Str(_) => vec![node],
            Value::Seq(items) => items.iter().collect(),
            _ => {
                self.type_error(node, "network", "a host or a list of hosts");
                return Vec::new();
            }
        };
        let mut hosts = Vec::new();
        for item in items {
            let Some(host) = self.non_empty_string(item, "network") else {
                continue;
            };
            match check_host(&host) {
                Ok(()) => hosts.push(host.to_ascii_lowercase()),
                Err(why) => self.push(
                    Diagnostic::new(item.pos, format!("`network: {host}` {why}"))
                        .label("not a host")
                        .hint("name hosts, e.g. `registry.npmjs.org`, `*.pypi.org` or `github.com:443`; the model and the test's MCP servers need no entry"),
                ),
            }
        }
        hosts
    }
}

/// Why a `network:` entry is not a host; the message follows `` `network: ENTRY` ``.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum NotAHost {
    /// `:PORT` is not 1–65535.
    #[error("has a port that is not a number from 1 to 65535")]
    Port,
    /// A scheme or a path: a URL, not a host.
    #[error("is a URL: name the host alone")]
    Url,
    /// An empty label, one over 63 characters, or a character other than ASCII letters,
    /// digits and `-`.
    #[error("is not a host name")]
    Name,
}

/// Whether `entry` is `HOST`, `*.DOMAIN` or either with `:PORT`.
fn check_host(entry: &str) -> Result<(), NotAHost> {
    let (host, port) = match entry.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (entry, None),
    };
    if let Some(port) = port
        && !port.parse::<u16>().is_ok_and(|p| p > 0)
    {
        return Err(NotAHost::Port);
    }
    let name = host.strip_prefix("*.").unwrap_or(host);
    if entry.contains("://") || entry.contains('/') {
        return Err(NotAHost::Url);
    }
    let valid = !name.is_empty()
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    if valid { Ok(()) } else { Err(NotAHost::Name) }
}

#[cfg(test)]
mod tests {
    use super::check_host;

    #[test]
    fn hosts_wildcards_and_ports() {
        for ok in [
            "registry.npmjs.org",
            "*.pypi.org",
            "github.com:443",
            "localhost",
        ] {
            assert!(check_host(ok).is_ok(), "{ok}");
        }
        for bad in [
            "https://github.com",
            "github.com/x",
            "a..b",
            "h:0",
            "h:99999",
            "*.",
            "a b",
        ] {
            assert!(check_host(bad).is_err(), "{bad}");
        }
    }
}
