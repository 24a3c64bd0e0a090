//! The GitHub Actions environment: which repository, which event, which PR.

use std::path::PathBuf;

use serde_json::Value;

use super::error::GithubError;

/// What a workflow step knows about where it runs.
#[derive(Debug, Clone, Default)]
pub struct GithubEnv {
    /// `GITHUB_API_URL` (default `https://api.github.com`).
    pub api_url: String,
    /// `GITHUB_REPOSITORY` (`owner/name`).
    pub repository: String,
    /// The event payload from `GITHUB_EVENT_PATH`.
    pub event: Option<Value>,
    /// `GITHUB_SHA` (for a PR, the merge commit).
    pub sha: Option<String>,
    /// `GITHUB_STEP_SUMMARY`.
    pub step_summary: Option<PathBuf>,
    /// `GITHUB_OUTPUT`.
    pub output: Option<PathBuf>,
    /// `GITHUB_SERVER_URL` (default `https://github.com`).
    pub server_url: String,
    /// `GITHUB_RUN_ID`.
    pub run_id: Option<String>,
    /// `GITHUB_TOKEN` (never printed).
    pub token: Option<String>,
    /// `GITHUB_ACTOR`.
    pub actor: Option<String>,
    /// `GITHUB_WORKSPACE`: annotation paths are made relative to it.
    pub workspace: Option<PathBuf>,
    /// `GITHUB_EVENT_NAME`.
    pub event_name: Option<String>,
}

/// The pull request a run belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullRequest {
    /// Its number.
    pub number: u64,
    /// The head commit (what the check run must point at).
    pub head_sha: String,
    /// Whether it comes from another repository (a fork).
    pub from_fork: bool,
}

impl GithubEnv {
    /// Reads the environment through `var` (the process environment in production).
    ///
    /// # Errors
    /// When `GITHUB_REPOSITORY` is missing or the event file can not be read.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, GithubError> {
        let repository = var("GITHUB_REPOSITORY")
            .filter(|r| r.contains('/'))
            .ok_or(GithubError::NoRepository)?;
        let event = match var("GITHUB_EVENT_PATH") {
            Some(path) => {
                let text = match std::fs::read_to_string(&path) {
                    Ok(text) => text,
                    Err(source) => return Err(GithubError::EventRead { path, source }),
                };
                match serde_json::from_str(&text) {
                    Ok(event) => Some(event),
                    Err(source) => return Err(GithubError::EventJson { path, source }),
                }
            }
            None => None,
        };
        Ok(GithubEnv {
            api_url: var("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into()),
            repository,
            event,
            sha: var("GITHUB_SHA"),
            step_summary: var("GITHUB_STEP_SUMMARY").map(PathBuf::from),
            output: var("GITHUB_OUTPUT").map(PathBuf::from),
            server_url: var("GITHUB_SERVER_URL").unwrap_or_else(|| "https://github.com".into()),
            run_id: var("GITHUB_RUN_ID"),
            token: var("GITHUB_TOKEN").filter(|t| !t.is_empty()),
            actor: var("GITHUB_ACTOR"),
            workspace: var("GITHUB_WORKSPACE").map(PathBuf::from),
            event_name: var("GITHUB_EVENT_NAME"),
        })
    }

    /// Reads the process environment.
    ///
    /// # Errors
    /// As [`GithubEnv::from_vars`].
    pub fn from_process() -> Result<Self, GithubError> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// `(owner, name)`.
    pub fn owner_repo(&self) -> (&str, &str) {
        self.repository
            .split_once('/')
            .unwrap_or((&self.repository, ""))
    }

    /// The pull request of a `pull_request` / `pull_request_target` event.
    pub fn pull_request(&self) -> Option<PullRequest> {
        let pr = self.event.as_ref()?.get("pull_request")?;
        let number = pr.get("number")?.as_u64()?;
        let head = pr.get("head")?;
        let head_sha = head.get("sha")?.as_str()?.to_owned();
        let head_repo = head.get("repo");
        let from_fork = head_repo
            .and_then(|r| r.get("fork"))
            .and_then(Value::as_bool)
            == Some(true)
            || head_repo
                .and_then(|r| r.get("full_name"))
                .and_then(Value::as_str)
                .is_some_and(|name| name != self.repository);
        Some(PullRequest {
            number,
            head_sha,
            from_fork,
        })
    }

    /// Why the token is read-only here, if it is: a fork PR or a Dependabot run. A
    /// `workflow_run` workflow — the trusted second half of the fork-safe pattern, which
    /// points `GITHUB_EVENT_PATH` at the first workflow's pull-request event — can write.
    pub fn read_only_reason(&self) -> Option<String> {
        if self.event_name.as_deref() == Some("workflow_run") {
            return None;
        }
        if self.actor.as_deref() == Some("dependabot[bot]") {
            return Some("this run was triggered by Dependabot".into());
        }
        match self.pull_request() {
            Some(pr) if pr.from_fork => {
                Some(format!("pull request #{} comes from a fork", pr.number))
            }
            _ => None,
        }
    }

    /// The commit the check run belongs to: the PR head, else `GITHUB_SHA`.
    pub fn head_sha(&self) -> Option<String> {
        self.pull_request()
            .map(|pr| pr.head_sha)
            .or_else(|| self.sha.clone())
    }

    /// The link to this workflow run.
    pub fn run_url(&self) -> Option<String> {
        let run = self.run_id.as_ref()?;
        Some(format!(
            "{}/{}/actions/runs/{run}",
            self.server_url.trim_end_matches('/'),
            self.repository
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with_event(event: &str, actor: &str) -> GithubEnv {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("event.json");
        std::fs::write(&path, event).unwrap();
        let path = path.display().to_string();
        let actor = actor.to_owned();
        GithubEnv::from_vars(|k| match k {
            "GITHUB_REPOSITORY" => Some("o/r".into()),
            "GITHUB_EVENT_PATH" => Some(path.clone()),
            "GITHUB_SHA" => Some("merge".into()),
            "GITHUB_RUN_ID" => Some("42".into()),
            "GITHUB_ACTOR" => Some(actor.clone()),
            _ => None,
        })
        .unwrap()
    }

    #[test]
    fn pull_request_head_sha_not_merge_sha() {
        let env = env_with_event(
            r#"{"pull_request": {"number": 7, "head": {"sha": "head", "repo": {"full_name": "o/r", "fork": false}}}}"#,
            "dev",
        );
        assert_eq!(env.head_sha().as_deref(), Some("head"));
        assert_eq!(env.read_only_reason(), None);
        assert_eq!(
            env.run_url().as_deref(),
            Some("https://github.com/o/r/actions/runs/42")
        );
    }

    #[test]
    fn forks_and_dependabot_are_read_only() {
        let fork = env_with_event(
            r#"{"pull_request": {"number": 8, "head": {"sha": "h", "repo": {"full_name": "someone/r", "fork": true}}}}"#,
            "someone",
        );
        assert_eq!(
            fork.read_only_reason().as_deref(),
            Some("pull request #8 comes from a fork")
        );
        let bot = env_with_event(
            r#"{"pull_request": {"number": 9, "head": {"sha": "h", "repo": {"full_name": "o/r"}}}}"#,
            "dependabot[bot]",
        );
        assert!(bot.read_only_reason().unwrap().contains("Dependabot"));
        let mut trusted = fork.clone();
        trusted.event_name = Some("workflow_run".into());
        assert_eq!(
            trusted.read_only_reason(),
            None,
            "the workflow_run half may write"
        );
        let push = env_with_event(r#"{"ref": "refs/heads/main"}"#, "dev");
        assert_eq!(push.pull_request(), None);
        assert_eq!(push.head_sha().as_deref(), Some("merge"));
    }
}
