//! Pointing one agent run at aptitude's model gateway: where its model traffic would have
//! gone ([`plan`]), the run's endpoint, and the variables that give the agent the
//! endpoint and placeholder keys instead of the real ones ([`Routed`]).
//!
//! The upstream is what the agent would have used without the gateway: the value its
//! base-URL variable has in the run's environment (a test's `env:`, the agent settings' `env`,
//! aptitude's own environment), else the test's `base_url:` / `--agent-base-url`, else the
//! provider's default host when the run has a key for it (or the agent sends its own login
//! there). A run that has none of these (Copilot's GitHub login, opencode's own providers,
//! Cursor) goes direct, unmetered by the gateway.

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::{LoginFile, ModelRoute};
use crate::gateway::{Endpoint, Gateway, GatewayError, RunGateway, Traffic};

/// How long an agent may go on after the gateway refused a request for the budget (time
/// to report the error and exit) before it is stopped.
pub const BUDGET_GRACE: Duration = Duration::from_secs(2);

/// How long a run whose next request the gateway held (`stop: first_call`) may still
/// print the call it decided on before it is stopped.
pub const DECIDE_GRACE: Duration = Duration::from_secs(2);

/// Where a run's traffic goes, and the real keys it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutePlan {
    /// The upstream base URL.
    pub upstream: String,
    /// (variable, real value) for each of the route's key variables that is set.
    pub keys: Vec<(String, String)>,
}

/// The plan for a run whose direct environment is `env` (the variables it gets on top of
/// aptitude's environment, later ones winning) and whose `base_url` is the test's or the
/// flag's; `process_env` reads aptitude's own environment. `None`: the run goes direct.
pub fn plan(
    route: &ModelRoute,
    env: &[(String, String)],
    base_url: Option<&str>,
    process_env: impl Fn(&str) -> Option<String>,
) -> Option<RoutePlan> {
    let lookup = |var: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == var)
            .map(|(_, v)| v.clone())
            .or_else(|| process_env(var))
            .filter(|v| !v.is_empty())
    };
    let keys: Vec<(String, String)> = route
        .key_envs
        .iter()
        .filter_map(|var| lookup(var).map(|real| ((*var).to_owned(), real)))
        .collect();
    let explicit = route
        .base_url_env
        .and_then(lookup)
        .or_else(|| base_url.map(str::to_owned));
    let upstream = match explicit {
        Some(url) => url,
        None if keys.is_empty() && !route.login_passes_through => return None,
        None => route.default_upstream?.to_owned(),
    };
    Some(RoutePlan { upstream, keys })
}

/// How long before its expiry a login is left to the agent to refresh, in ms.
const LOGIN_MARGIN_MS: u64 = 5 * 60 * 1000;

/// The access token of the login file `login` in the run's private `home`, when there is
/// one that is valid for at least 5 more minutes at `now_ms` (ms since the epoch).
pub fn login_token(home: &Path, login: &LoginFile, now_ms: u64) -> Option<String> {
    let text = std::fs::read_to_string(home.join(login.file)).ok()?;
    let doc: serde_json::Value = serde_json::from_str(&text).ok()?;
    let token = doc.pointer(login.token)?.as_str()?.to_owned();
    let expired = login
        .expires_ms
        .and_then(|p| doc.pointer(p))
        .and_then(serde_json::Value::as_u64)
        .is_some_and(|at| at <= now_ms.saturating_add(LOGIN_MARGIN_MS));
    (!token.is_empty() && !expired).then_some(token)
}

/// Rewrites the login file in `home`: its access token becomes `placeholder`, and each
/// other secret in it a placeholder of its own; the real values are registered with the
/// redactor. The file stays readable by its owner only.
///
/// # Errors
/// When the file can not be read, parsed or written.
pub fn swap_login(home: &Path, login: &LoginFile, placeholder: &str) -> std::io::Result<()> {
    let path = home.join(login.file);
    let text = std::fs::read_to_string(&path)?;
    let mut doc: serde_json::Value = serde_json::from_str(&text).map_err(std::io::Error::other)?;
    if let Some(token) = doc.pointer_mut(login.token) {
        *token = serde_json::Value::String(placeholder.to_owned());
    }
    for (i, pointer) in login.others.iter().enumerate() {
        if let Some(secret) = doc.pointer_mut(pointer) {
            if let Some(real) = secret.as_str() {
                crate::shared::redact::register_secret(real);
            }
            *secret = serde_json::Value::String(format!("{placeholder}-other-{i}"));
        }
    }
    std::fs::write(&path, doc.to_string())
}

/// What a run's cassette needs: the run's paths (normalised in it), and the cassette to
/// replay, when the run is a replay.
#[derive(Debug, Clone, Default)]
pub struct Tape {
    /// The run's workspace copy and private home.
    pub paths: crate::gateway::normalize::Normalizer,
    /// The cassette to answer from.
    pub replay: Option<crate::gateway::Replaying>,
    /// When the run ends ([`crate::gateway::RunGateway::stop`]).
    pub stop: crate::spec::routing::Stop,
    /// Skills to look for in the requests ([`crate::gateway::RunGateway::watch_skills`]).
    pub watch_skills: Vec<(String, String)>,
}

/// The plan of a run replayed from `cassette` when [`plan`] found none (no key: a replay
/// needs none), and with a placeholder (standing for nothing) in every variable the
/// recorded run had a credential in, so that the agent starts as it did then.
pub fn replay_plan(
    plan: Option<RoutePlan>,
    cassette: &crate::gateway::cassette::Cassette,
) -> RoutePlan {
    let mut plan = plan.unwrap_or_else(|| RoutePlan {
        upstream: cassette.upstream.clone(),
        keys: Vec::new(),
    });
    for var in &cassette.credentials {
        if !plan.keys.iter().any(|(k, _)| k == var) {
            plan.keys.push((var.clone(), String::new()));
        }
    }
    plan
}

/// A task aborted when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A run going through the gateway: its endpoint, and what stops the run once the gateway
/// refused a request for the budget.
pub struct Routed {
    endpoint: Endpoint,
    watch: Option<AbortOnDrop>,
    /// Cancels the run's decide token when the gateway held a request after the first call.
    decide_watch: Option<AbortOnDrop>,
    /// The placeholder standing in for the login token, when there is one.
    login: Option<String>,
}

impl Routed {
    /// Starts the run's endpoint for `plan`, standing in also for a `login` token.
    ///
    /// # Errors
    /// When the endpoint can not start (a bad upstream URL, no port).
    pub async fn start(
        gateway: &Gateway,
        (plan, protocols, network): (&RoutePlan, &[crate::gateway::protocol::Protocol], &[String]),
        login: Option<String>,
        tape: Tape,
    ) -> Result<Routed, GatewayError> {
        let mut secrets: Vec<String> = plan.keys.iter().map(|(_, real)| real.clone()).collect();
        let has_login = login.is_some();
        secrets.extend(login);
        let endpoint = gateway
            .start(RunGateway {
                upstream: plan.upstream.clone(),
                secrets,
                credentials: plan.keys.iter().map(|(var, _)| var.clone()).collect(),
                paths: tape.paths,
                replay: tape.replay,
                stop: tape.stop,
                watch_skills: tape.watch_skills,
                protocols: protocols.to_vec(),
                network: network.to_vec(),
            })
            .await?;
        let login = has_login
            .then(|| endpoint.placeholders().last().cloned())
            .flatten();
        Ok(Routed {
            endpoint,
            watch: None,
            decide_watch: None,
            login,
        })
    }

    /// The placeholder for the login token, when [`Routed::start`] was given one.
    pub fn login_placeholder(&self) -> Option<&str> {
        self.login.as_deref()
    }

    /// The base URL the agent is given.
    pub fn base_url(&self) -> String {
        self.endpoint.base_url()
    }

    /// The endpoint's address (`127.0.0.1:PORT`): the one address the agent needs to
    /// reach for its model (what a sandbox lets through).
    pub fn addr(&self) -> std::net::SocketAddr {
        self.endpoint.addr()
    }

    /// The variables that point the agent at the endpoint, set over everything else: the
    /// route's base-URL variable, and each key variable of `plan` holding its placeholder.
    pub fn env(&self, route: &ModelRoute, plan: &RoutePlan) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = route
            .base_url_env
            .map(|var| (var.to_owned(), self.base_url()))
            .into_iter()
            .collect();
        env.extend(
            plan.keys
                .iter()
                .zip(self.endpoint.placeholders())
                .map(|((var, _), placeholder)| (var.clone(), placeholder)),
        );
        env
    }

    /// A token for the agent's process: `parent`'s child, also cancelled [`BUDGET_GRACE`]
    /// after the gateway refused a request for the budget.
    pub fn run_token(&mut self, parent: &CancellationToken) -> CancellationToken {
        let token = parent.child_token();
        let (stopped, stop) = (self.endpoint.stopped(), token.clone());
        self.watch = Some(AbortOnDrop(tokio::spawn(async move {
            stopped.cancelled().await;
            tokio::time::sleep(BUDGET_GRACE).await;
            stop.cancel();
        })));
        token
    }

    /// A token that stops a run at its first decision: `parent`'s child, also cancelled
    /// [`DECIDE_GRACE`] after the gateway held a request made after the first reply that
    /// asked for a tool call ([`crate::gateway::Endpoint::decided`]). The stream showing
    /// the call cancels it at once; the grace lets an agent that asks again before it
    /// prints the call print it (it waits on the held request meanwhile).
    pub fn decide_token(&mut self, parent: &CancellationToken) -> CancellationToken {
        let token = parent.child_token();
        let (decided, stop) = (self.endpoint.decided(), token.clone());
        self.decide_watch = Some(AbortOnDrop(tokio::spawn(async move {
            decided.cancelled().await;
            tokio::time::sleep(DECIDE_GRACE).await;
            stop.cancel();
        })));
        token
    }

    /// Ends the endpoint and returns the run's traffic and its wire; a recorded cassette
    /// also holds `mcp` and `user` ([`crate::gateway::Endpoint::finish_with`]).
    pub async fn finish(
        self,
        mcp: std::collections::BTreeMap<String, crate::gateway::mcp_record::McpTraffic>,
        user: Vec<crate::gateway::cassette::UserReply>,
    ) -> (Traffic, crate::gateway::wire::Wire) {
        drop(self.watch);
        drop(self.decide_watch);
        self.endpoint.finish_with(mcp, user).await
    }

    /// Whether the run's exchange is recorded (`run --record-model`).
    pub fn records(&self) -> bool {
        self.endpoint.records()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLAUDE: ModelRoute = ModelRoute {
        base_url_env: Some("ANTHROPIC_BASE_URL"),
        key_envs: &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
        default_upstream: Some("https://api.anthropic.com"),
        login_passes_through: true,
        login: None,
        protocols: &[],
    };
    const CODEX: ModelRoute = ModelRoute {
        base_url_env: None,
        key_envs: &["OPENAI_API_KEY"],
        default_upstream: Some("https://api.openai.com/v1"),
        login_passes_through: false,
        login: None,
        protocols: &[],
    };
    const COPILOT: ModelRoute = ModelRoute {
        base_url_env: Some("COPILOT_PROVIDER_BASE_URL"),
        key_envs: &["COPILOT_PROVIDER_API_KEY"],
        default_upstream: None,
        login_passes_through: false,
        login: None,
        protocols: &[],
    };

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn the_upstream_is_where_the_agent_would_have_gone() {
        let none = |_: &str| None;
        // The base-URL variable as the run's environment has it, the test's last.
        let p = plan(
            &CLAUDE,
            &env(&[
                ("ANTHROPIC_BASE_URL", "http://flag"),
                ("ANTHROPIC_BASE_URL", "http://test-env"),
            ]),
            Some("http://flag"),
            none,
        )
        .unwrap();
        assert_eq!(p.upstream, "http://test-env");
        assert!(p.keys.is_empty());
        // Aptitude's own environment, when the run sets none (a user's proxy).
        let p = plan(&CLAUDE, &[], None, |k| {
            (k == "ANTHROPIC_BASE_URL").then(|| "https://proxy.corp".to_owned())
        })
        .unwrap();
        assert_eq!(p.upstream, "https://proxy.corp");
        // The provider's host, with a key; a login goes through too.
        let p = plan(&CLAUDE, &[], None, |k| {
            (k == "ANTHROPIC_API_KEY").then(|| "sk-real".to_owned())
        })
        .unwrap();
        assert_eq!(p.upstream, "https://api.anthropic.com");
        assert_eq!(
            p.keys,
            [("ANTHROPIC_API_KEY".to_owned(), "sk-real".to_owned())]
        );
        assert!(plan(&CLAUDE, &[], None, none).is_some());
        // Codex with only a ChatGPT login: direct.
        assert_eq!(plan(&CODEX, &[], None, none), None);
        let p = plan(&CODEX, &env(&[("OPENAI_API_KEY", "k")]), None, none).unwrap();
        assert_eq!(p.upstream, "https://api.openai.com/v1");
        // Copilot without a provider base URL talks to GitHub: direct, even with a key.
        assert_eq!(
            plan(
                &COPILOT,
                &env(&[("COPILOT_PROVIDER_API_KEY", "k")]),
                None,
                none
            ),
            None
        );
        let p = plan(&COPILOT, &[], Some("http://127.0.0.1:9/v1"), none).unwrap();
        assert_eq!(p.upstream, "http://127.0.0.1:9/v1");
        // An empty key is no key.
        assert_eq!(
            plan(&CODEX, &env(&[("OPENAI_API_KEY", "")]), None, none),
            None
        );
    }

    #[test]
    fn a_valid_login_is_swapped_for_placeholders_and_an_expiring_one_is_left() {
        let home = tempfile::tempdir().unwrap();
        let login = LoginFile {
            file: ".credentials.json",
            token: "/claudeAiOauth/accessToken",
            others: &["/claudeAiOauth/refreshToken"],
            expires_ms: Some("/claudeAiOauth/expiresAt"),
        };
        let write = |expires: u64| {
            std::fs::write(
                home.path().join(".credentials.json"),
                serde_json::json!({"claudeAiOauth": {"accessToken": "real-access-1234",
                    "refreshToken": "real-refresh-5678", "expiresAt": expires, "scopes": ["a"]}})
                .to_string(),
            )
            .unwrap();
        };
        let now = 1_000_000_000;
        write(now + 4 * 60 * 1000);
        assert_eq!(
            login_token(home.path(), &login, now),
            None,
            "expires in 4 min"
        );
        write(now + 60 * 60 * 1000);
        assert_eq!(
            login_token(home.path(), &login, now).as_deref(),
            Some("real-access-1234")
        );
        swap_login(home.path(), &login, "ph-0").unwrap();
        let text = std::fs::read_to_string(home.path().join(".credentials.json")).unwrap();
        assert!(!text.contains("real-"), "{text}");
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["claudeAiOauth"]["accessToken"], "ph-0");
        assert_eq!(doc["claudeAiOauth"]["refreshToken"], "ph-0-other-0");
        assert_eq!(doc["claudeAiOauth"]["scopes"][0], "a");
        assert!(
            !crate::shared::redact::Redactor::new([])
                .redact("real-refresh-5678")
                .contains("5678")
        );
        assert_eq!(
            login_token(tempfile::tempdir().unwrap().path(), &login, now),
            None
        );
    }
}
