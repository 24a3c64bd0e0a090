//! Pointing one agent run at aptitude's model gateway: where its model traffic would have
//! gone ([`plan`]), the run's endpoint, and the variables that give the agent the
//! endpoint and placeholder keys instead of the real ones ([`Routed`]).
//!
//! The upstream is what the agent would have used without the gateway: the value its
//! base-URL variable has in the run's environment (a test's `env:`, `--agent-env`,
//! aptitude's own environment), else the test's `base_url:` / `--agent-base-url`, else the
//! provider's default host when the run has a key for it (or the agent sends its own login
//! there). A run that has none of these (Copilot's GitHub login, opencode's own providers,
//! Cursor) goes direct, unmetered by the gateway.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::ModelRoute;
use super::gateway::{Endpoint, Gateway, GatewayError, RunGateway, Traffic};

/// How long an agent may go on after the gateway refused a request for the budget (time
/// to report the error and exit) before it is stopped.
pub const BUDGET_GRACE: Duration = Duration::from_secs(2);

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
}

impl Routed {
    /// Starts the run's endpoint for `plan`.
    ///
    /// # Errors
    /// When the endpoint can not start (a bad upstream URL, no port).
    pub async fn start(gateway: &Gateway, plan: &RoutePlan) -> Result<Routed, GatewayError> {
        let endpoint = gateway
            .start(RunGateway {
                upstream: plan.upstream.clone(),
                secrets: plan.keys.iter().map(|(_, real)| real.clone()).collect(),
            })
            .await?;
        Ok(Routed {
            endpoint,
            watch: None,
        })
    }

    /// The base URL the agent is given.
    pub fn base_url(&self) -> String {
        self.endpoint.base_url()
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

    /// Ends the endpoint and returns the run's traffic.
    pub async fn finish(self) -> Traffic {
        drop(self.watch);
        self.endpoint.finish().await
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
    };
    const CODEX: ModelRoute = ModelRoute {
        base_url_env: None,
        key_envs: &["OPENAI_API_KEY"],
        default_upstream: Some("https://api.openai.com/v1"),
        login_passes_through: false,
    };
    const COPILOT: ModelRoute = ModelRoute {
        base_url_env: Some("COPILOT_PROVIDER_BASE_URL"),
        key_envs: &["COPILOT_PROVIDER_API_KEY"],
        default_upstream: None,
        login_passes_through: false,
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
}
