//! `--baseline github:auto` / `--reuse github:auto`: the results of the latest successful
//! run of this workflow on the PR's base branch, from the Actions artifacts API.
//!
//! 1. the workflow is the file of `GITHUB_WORKFLOW_REF` (`owner/repo/.github/workflows/ci.yml@ref`);
//!    the branch is the PR's base (`GITHUB_BASE_REF`, else the event's
//!    `pull_request.base.ref`), else the pushed branch (`GITHUB_REF_NAME`);
//! 2. `GET /repos/{owner}/{repo}/actions/workflows/{file}/runs?branch=…&status=success`,
//!    newest first, page by page (the current run left out), at most [`MAX_RUNS_SEARCHED`]
//!    runs. Only runs of the base branch's own code count ([`is_base_branch_run`]): GitHub
//!    matches `branch` against a run's head branch, so a fork's pull request from a branch
//!    named `main` is listed too, and its forged `results.json` would feed `--reuse` with
//!    passes nobody earned (artifact poisoning, as GHSA-5xr6-xhww-33m4). A run of another
//!    repository, of a `pull_request*` event, or of another head branch is skipped;
//! 3. `GET /repos/{owner}/{repo}/actions/runs/{id}/artifacts?name=…` (every page): the
//!    artifact named `APTITUDE_ARTIFACT_NAME` (the action sets it to this job's artifact
//!    name), else the first whose name starts with `aptitude`;
//! 4. `GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip`, following GitHub's redirect
//!    to the storage URL (octocrab drops the token on a redirect to another host); a 410
//!    (expired) or 404 ends the search;
//! 5. the zip's `results.json` (at most [`MAX_RESULTS_BYTES`]) read as results.
//!
//! The token needs `actions: read`. Any failure is a [`BaselineError`]: the caller shows it
//! as one notice and goes on without a baseline; it never fails the job.

use serde_json::Value;

use super::GithubEnv;
use super::error::GithubError;
use crate::verdict::results::Results;

/// The value of `--baseline` / `--reuse` that asks for the base branch's results.
pub const AUTO: &str = "github:auto";

/// The most successful runs looked through for one with the artifact (skipped ones
/// included).
pub const MAX_RUNS_SEARCHED: usize = 50;

/// Runs per page of the workflow-runs listing.
const RUNS_PER_PAGE: usize = 20;

/// The largest `results.json` read from an artifact, in bytes (256 MiB).
pub const MAX_RESULTS_BYTES: u64 = 256 * 1024 * 1024;

/// The largest blob pack read beside a baseline's results (`results.json.blobs`), in bytes
/// once unzipped: 1 GiB.
pub const MAX_PACK_BYTES: u64 = 1024 * 1024 * 1024;

/// Why no baseline was found; shown as one notice.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The environment or the client.
    #[error(transparent)]
    Github(#[from] GithubError),
    /// `GITHUB_WORKFLOW_REF` is not set or names no workflow file.
    #[error("GITHUB_WORKFLOW_REF does not name the workflow file")]
    NoWorkflow,
    /// Neither a base branch nor a branch.
    #[error("no base branch (GITHUB_BASE_REF) or branch (GITHUB_REF_NAME)")]
    NoBranch,
    /// No successful run had the artifact.
    #[error(
        "no successful run of {workflow} on {branch} has an aptitude results artifact{} (looked at {runs} run{}{})",
        name.as_deref().map(|n| format!(" named {n}")).unwrap_or_default(),
        if *runs == 1 { "" } else { "s" },
        if *skipped > 0 { format!(", skipped {skipped} of forks or pull requests") } else { String::new() }
    )]
    NotFound {
        /// The workflow file.
        workflow: String,
        /// The branch.
        branch: String,
        /// The artifact name looked for, if one was given.
        name: Option<String>,
        /// Runs looked at.
        runs: usize,
        /// Of those, runs skipped as not the base branch's own ([`is_base_branch_run`]).
        skipped: usize,
    },
    /// The artifact expired (GitHub answered 410, or listed it as expired).
    #[error("the results artifact {name} of run {run} has expired")]
    Expired {
        /// The artifact.
        name: String,
        /// The run it belongs to.
        run: u64,
    },
    /// The download failed.
    #[error("can not download the artifact {name} of run {run}: {why}")]
    Download {
        /// The artifact.
        name: String,
        /// The run.
        run: u64,
        /// Why.
        why: String,
    },
    /// The zip holds no readable results.
    #[error("the artifact {name} of run {run} holds no readable results.json: {why}")]
    Unreadable {
        /// The artifact.
        name: String,
        /// The run.
        run: u64,
        /// Why.
        #[source]
        why: ArtifactContentError,
    },
}

/// What is wrong with a baseline artifact's zip.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactContentError {
    /// It does not open as a zip.
    #[error("not a zip: {0}")]
    NotZip(#[source] zip::result::ZipError),
    /// It has no `results.json`.
    #[error("no results.json in it")]
    NoResults,
    /// An entry could not be read.
    #[error("can not read {file}: {source}")]
    Read {
        /// The entry.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Its `results.json`, or its cassettes together, are over the bound (bytes).
    #[error("{what} larger than {limit} bytes")]
    TooLarge {
        /// `it is`, `its cassettes are`.
        what: &'static str,
        /// The bound, bytes.
        limit: u64,
    },
    /// Its `results.json` is not results aptitude reads.
    #[error(transparent)]
    Results(#[from] crate::verdict::results::ReadError),
    /// A cassette could not be extracted to the local disk.
    #[error("can not write {file}: {source}")]
    Write {
        /// The cassette (or the directory made for them).
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Where to look: read from the Actions environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The workflow file's name (`ci.yml`).
    pub workflow: String,
    /// The branch whose runs are searched.
    pub branch: String,
    /// The artifact name (`APTITUDE_ARTIFACT_NAME`), when known.
    pub artifact: Option<String>,
    /// This run's id (`GITHUB_RUN_ID`), left out of the search.
    pub run_id: Option<u64>,
}

impl Source {
    /// Reads the source through `var`, with `env`'s event for the PR's base branch.
    ///
    /// # Errors
    /// Without a workflow file or a branch.
    pub fn from_vars(
        env: &GithubEnv,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, BaselineError> {
        let workflow = var("GITHUB_WORKFLOW_REF")
            .and_then(|r| {
                let path = r.split('@').next()?.to_owned();
                let file = path.rsplit('/').next()?.to_owned();
                (path.contains("/.github/workflows/") && !file.is_empty()).then_some(file)
            })
            .ok_or(BaselineError::NoWorkflow)?;
        let event_base = env
            .event
            .as_ref()
            .and_then(|e| e.pointer("/pull_request/base/ref"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let branch = var("GITHUB_BASE_REF")
            .filter(|b| !b.is_empty())
            .or(event_base)
            .or_else(|| var("GITHUB_REF_NAME").filter(|b| !b.is_empty()))
            .ok_or(BaselineError::NoBranch)?;
        Ok(Source {
            workflow,
            branch,
            artifact: var("APTITUDE_ARTIFACT_NAME").filter(|n| !n.is_empty()),
            run_id: var("GITHUB_RUN_ID").and_then(|id| id.parse().ok()),
        })
    }
}

/// A baseline downloaded from an artifact: its results, where they came from, and the
/// cassettes they reference (`run --record-model`), extracted into a temp directory that is
/// removed when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct Downloaded {
    /// The results.
    pub results: Results,
    /// `github:owner/repo run 123 (artifact NAME)`.
    pub from: String,
    /// The directory the results' cassette references are relative to, when the artifact
    /// held any of them.
    pub cassettes: Option<std::sync::Arc<tempfile::TempDir>>,
}

/// The most a baseline's cassettes may take, extracted, in bytes.
pub const MAX_CASSETTES_BYTES: u64 = 1024 * 1024 * 1024;

/// The latest results of `source`, where they came from (`github:owner/repo run 123
/// (artifact NAME)`), and their cassettes.
///
/// # Errors
/// See [`BaselineError`].
pub async fn latest_results(env: &GithubEnv, source: &Source) -> Result<Downloaded, BaselineError> {
    let client = super::api::Client::new(env)?;
    let (owner, repo) = (client.owner.as_str(), client.repo.as_str());
    let route = format!(
        "/repos/{owner}/{repo}/actions/workflows/{}/runs",
        source.workflow
    );
    let per_page = RUNS_PER_PAGE.to_string();
    let query = [
        ("branch", source.branch.as_str()),
        ("status", "success"),
        ("per_page", per_page.as_str()),
    ];
    let mut page: octocrab::Page<Value> = client
        .octo
        .get(&route, Some(&query))
        .await
        .map_err(GithubError::api)?;
    let repository = format!("{owner}/{repo}");
    let (mut searched, mut skipped) = (0, 0);
    loop {
        for run in &page.items {
            let Some(id) = run.get("id").and_then(Value::as_u64) else {
                continue;
            };
            if Some(id) == source.run_id {
                continue;
            }
            searched += 1;
            if !is_base_branch_run(run, &repository, &source.branch) {
                skipped += 1;
                if searched >= MAX_RUNS_SEARCHED {
                    break;
                }
                continue;
            }
            if let Some(artifact) = find_artifact(&client, id, source.artifact.as_deref()).await? {
                let (results, cassettes) = download(&client, id, &artifact).await?;
                let from = format!(
                    "github:{owner}/{repo} run {id} (artifact {})",
                    artifact.name
                );
                return Ok(Downloaded {
                    results,
                    from,
                    cassettes,
                });
            }
            if searched >= MAX_RUNS_SEARCHED {
                break;
            }
        }
        if searched >= MAX_RUNS_SEARCHED {
            break;
        }
        match client
            .octo
            .get_page::<Value>(&page.next)
            .await
            .map_err(GithubError::api)?
        {
            Some(next) => page = next,
            None => break,
        }
    }
    Err(BaselineError::NotFound {
        workflow: source.workflow.clone(),
        branch: source.branch.clone(),
        name: source.artifact.clone(),
        runs: searched,
        skipped,
    })
}

/// Whether `run` (a workflow run as the REST API lists it) ran the code of `branch` in
/// `repository` (`owner/repo`): its `head_repository.full_name` is `repository` (GitHub
/// names are case-insensitive), its `head_branch` is `branch`, and its `event` is not a
/// pull request's (`pull_request`, `pull_request_target`, `pull_request_review`, …: the
/// results of unmerged code). A run missing any of these fields is not trusted.
fn is_base_branch_run(run: &Value, repository: &str, branch: &str) -> bool {
    let field = |pointer: &str| run.pointer(pointer).and_then(Value::as_str);
    let same_repository = field("/head_repository/full_name")
        .is_some_and(|name| name.eq_ignore_ascii_case(repository));
    let same_branch = field("/head_branch") == Some(branch);
    let not_a_pull_request = field("/event").is_some_and(|e| !e.starts_with("pull_request"));
    same_repository && same_branch && not_a_pull_request
}

/// An artifact of a run.
struct Artifact {
    id: u64,
    name: String,
    expired: bool,
}

/// The run's artifact named `name`, else (no name) its first `aptitude…` artifact.
async fn find_artifact(
    client: &super::api::Client,
    run: u64,
    name: Option<&str>,
) -> Result<Option<Artifact>, BaselineError> {
    let route = format!(
        "/repos/{}/{}/actions/runs/{run}/artifacts",
        client.owner, client.repo
    );
    let mut query = vec![("per_page", "100")];
    if let Some(name) = name {
        query.push(("name", name));
    }
    let first: octocrab::Page<Value> = client
        .octo
        .get(&route, Some(&query))
        .await
        .map_err(GithubError::api)?;
    let all = client
        .octo
        .all_pages(first)
        .await
        .map_err(GithubError::api)?;
    Ok(all.iter().find_map(|a| {
        let artifact_name = a.get("name").and_then(Value::as_str)?;
        let wanted = match name {
            Some(n) => artifact_name == n,
            None => artifact_name.starts_with("aptitude"),
        };
        wanted.then(|| Artifact {
            id: a.get("id").and_then(Value::as_u64).unwrap_or(0),
            name: artifact_name.to_owned(),
            expired: a.get("expired").and_then(Value::as_bool).unwrap_or(false),
        })
    }))
}

/// Downloads the artifact's zip and reads its `results.json`, with the cassettes it
/// references.
async fn download(
    client: &super::api::Client,
    run: u64,
    artifact: &Artifact,
) -> Result<(Results, Option<std::sync::Arc<tempfile::TempDir>>), BaselineError> {
    use http_body_util::BodyExt;
    let expired = || BaselineError::Expired {
        name: artifact.name.clone(),
        run,
    };
    let failed = |why: String| BaselineError::Download {
        name: artifact.name.clone(),
        run,
        why,
    };
    if artifact.expired {
        return Err(expired());
    }
    let route = format!(
        "/repos/{}/{}/actions/artifacts/{}/zip",
        client.owner, client.repo, artifact.id
    );
    let response = client
        .octo
        ._get(route)
        .await
        .map_err(|e| failed(GithubError::api(e).to_string()))?;
    let status = response.status();
    if status.as_u16() == 410 {
        return Err(expired());
    }
    if !status.is_success() {
        return Err(failed(format!("HTTP {}", status.as_u16())));
    }
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| failed(e.to_string()))?
        .to_bytes();
    let unreadable = |why: ArtifactContentError| BaselineError::Unreadable {
        name: artifact.name.clone(),
        run,
        why,
    };
    let results = read_results(&bytes).map_err(unreadable)?;
    let cassettes = extract_cassettes(&bytes, &results).map_err(unreadable)?;
    Ok((results, cassettes.map(std::sync::Arc::new)))
}

/// Whether `file` is a cassette reference aptitude writes (`<stem>.cassettes/<16 hex>.json.gz`):
/// anything else is never extracted (no path can leave the extraction directory).
fn is_cassette_reference(file: &str) -> bool {
    let Some((dir, name)) = file.split_once('/') else {
        return false;
    };
    let stem_ok = dir.ends_with(".cassettes")
        && dir
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    let name_ok = name.len() == 16 + ".json.gz".len()
        && name.ends_with(".json.gz")
        && name[..16].bytes().all(|b| b.is_ascii_hexdigit());
    stem_ok && name_ok && !dir.starts_with('.')
}

/// The cassettes `results` reference, extracted from the artifact zip into a temp
/// directory (at their references, beside where the zip's `results.json` is); `None` when
/// the results reference none. At most [`MAX_CASSETTES_BYTES`] in all.
fn extract_cassettes(
    zip: &[u8],
    results: &Results,
) -> Result<Option<tempfile::TempDir>, ArtifactContentError> {
    use std::io::Read;
    let mut files: Vec<String> = Vec::new();
    let mut note = |t: &crate::verdict::results::TestResult| {
        if let Some(c) = t.model_traffic.as_ref().and_then(|m| m.cassette.as_ref())
            && is_cassette_reference(&c.file)
            && !files.contains(&c.file)
        {
            files.push(c.file.clone());
        }
    };
    for t in &results.tests {
        note(t);
        t.runs.iter().for_each(&mut note);
    }
    if files.is_empty() {
        return Ok(None);
    }
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(zip)).map_err(ArtifactContentError::NotZip)?;
    let base = archive
        .file_names()
        .filter_map(Result::ok)
        .map(|n| n.into_owned())
        .filter(|n| n == "results.json" || n.ends_with("/results.json"))
        .min_by_key(String::len)
        .map(|n| n.trim_end_matches("results.json").to_owned())
        .unwrap_or_default();
    let dir = tempfile::Builder::new()
        .prefix("aptitude-baseline-cassettes-")
        .tempdir()
        .map_err(|source| ArtifactContentError::Write {
            file: "a directory for its cassettes".into(),
            source,
        })?;
    let mut total = 0u64;
    for file in files {
        let Ok(entry) = archive.by_name(&format!("{base}{file}")) else {
            // Missing: the runs that need it are not replayed, and say why.
            continue;
        };
        let mut bytes = Vec::new();
        entry
            .take(MAX_CASSETTES_BYTES - total + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| ArtifactContentError::Read {
                file: file.clone(),
                source,
            })?;
        total += bytes.len() as u64;
        if total > MAX_CASSETTES_BYTES {
            return Err(ArtifactContentError::TooLarge {
                what: "its cassettes are",
                limit: MAX_CASSETTES_BYTES,
            });
        }
        let path = dir.path().join(&file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| ArtifactContentError::Write {
                file: file.clone(),
                source,
            })?;
        }
        std::fs::write(&path, bytes)
            .map_err(|source| ArtifactContentError::Write { file, source })?;
    }
    Ok(Some(dir))
}

/// The results in an artifact zip: its `results.json` (at the top, else the first entry
/// named so).
fn read_results(zip: &[u8]) -> Result<Results, ArtifactContentError> {
    use std::io::Read;
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(zip)).map_err(ArtifactContentError::NotZip)?;
    let name = archive
        .file_names()
        .filter_map(Result::ok)
        .map(|n| n.into_owned())
        .filter(|n| n == "results.json" || n.ends_with("/results.json"))
        .min_by_key(String::len)
        .ok_or(ArtifactContentError::NoResults)?;
    let read = |source| ArtifactContentError::Read {
        file: name.clone(),
        source,
    };
    let entry = archive
        .by_name(&name)
        .map_err(|e| read(std::io::Error::other(e)))?;
    let mut text = String::new();
    entry
        .take(MAX_RESULTS_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(read)?;
    if text.len() as u64 > MAX_RESULTS_BYTES {
        return Err(ArtifactContentError::TooLarge {
            what: "it is",
            limit: MAX_RESULTS_BYTES,
        });
    }
    let pack = read_pack(&mut archive, &name)?;
    let pack_name = format!("{name}.blobs");
    let mut pack = match pack {
        Some(bytes) => crate::verdict::results::compact::Pack::from_source(
            pack_name.into(),
            Box::new(std::io::Cursor::new(bytes)),
        ),
        // Results that refer to blobs without their pack get an error naming it.
        None => crate::verdict::results::compact::Pack::at(
            std::path::Path::new("artifact").join(pack_name),
        ),
    };
    Ok(Results::from_json_and_pack(&text, &mut pack)?)
}

/// The blob pack beside `name` in the artifact (`results.json.blobs`), if there is one
/// ([`crate::verdict::results::compact`]), at most [`MAX_PACK_BYTES`].
fn read_pack(
    archive: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
    name: &str,
) -> Result<Option<Vec<u8>>, ArtifactContentError> {
    use std::io::Read;
    let pack_name = format!("{name}.blobs");
    let Ok(entry) = archive.by_name(&pack_name) else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    entry
        .take(MAX_PACK_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| ArtifactContentError::Read {
            file: pack_name,
            source,
        })?;
    if bytes.len() as u64 > MAX_PACK_BYTES {
        return Err(ArtifactContentError::TooLarge {
            what: "its blob pack is",
            limit: MAX_PACK_BYTES,
        });
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(event: Option<Value>) -> GithubEnv {
        let mut env =
            GithubEnv::from_vars(|k| (k == "GITHUB_REPOSITORY").then(|| "o/r".into())).unwrap();
        env.event = event;
        env
    }

    #[test]
    fn the_source_is_this_workflow_on_the_base_branch() {
        let vars = |k: &str| match k {
            "GITHUB_WORKFLOW_REF" => {
                Some("o/r/.github/workflows/agents.yml@refs/pull/7/merge".into())
            }
            "GITHUB_BASE_REF" => Some("main".into()),
            "GITHUB_RUN_ID" => Some("42".into()),
            "APTITUDE_ARTIFACT_NAME" => Some("aptitude-job".into()),
            _ => None,
        };
        assert_eq!(
            Source::from_vars(&env(None), vars).unwrap(),
            Source {
                workflow: "agents.yml".into(),
                branch: "main".into(),
                artifact: Some("aptitude-job".into()),
                run_id: Some(42),
            }
        );
        let event = serde_json::json!({"pull_request": {"base": {"ref": "develop"}}});
        let from_event = Source::from_vars(&env(Some(event)), |k| match k {
            "GITHUB_WORKFLOW_REF" => Some("o/r/.github/workflows/a.yml@refs/heads/x".into()),
            "GITHUB_REF_NAME" => Some("x".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            from_event.branch, "develop",
            "the PR's base, not the pushed branch"
        );
        assert!(matches!(
            Source::from_vars(&env(None), |_| None),
            Err(BaselineError::NoWorkflow)
        ));
    }

    #[test]
    fn only_runs_of_the_base_branchs_own_code_are_trusted() {
        let run = |repo: Option<&str>, branch: &str, event: &str| {
            let mut run = serde_json::json!({"id": 1, "head_branch": branch, "event": event});
            if let Some(repo) = repo {
                run["head_repository"] = serde_json::json!({"full_name": repo});
            }
            run
        };
        let trusted = |r: &Value| is_base_branch_run(r, "o/r", "main");
        assert!(trusted(&run(Some("o/r"), "main", "push")));
        assert!(trusted(&run(Some("O/R"), "main", "schedule")));
        assert!(trusted(&run(Some("o/r"), "main", "workflow_dispatch")));
        assert!(
            !trusted(&run(Some("fork/r"), "main", "push")),
            "a fork's run"
        );
        assert!(!trusted(&run(None, "main", "push")), "no head repository");
        assert!(
            !trusted(&run(Some("o/r"), "main", "pull_request")),
            "a pull request's run"
        );
        assert!(!trusted(&run(Some("o/r"), "main", "pull_request_target")));
        assert!(
            !trusted(&run(Some("o/r"), "feature", "push")),
            "another head branch"
        );
        assert!(!trusted(&serde_json::json!({"id": 1})), "no fields at all");
    }

    #[test]
    fn the_cassettes_the_results_reference_are_extracted_beside_them() {
        use crate::gateway::cassette::Cassette;
        let cassette = Cassette {
            upstream: "https://api.anthropic.com".into(),
            ..Cassette::default()
        };
        let made = tempfile::tempdir().unwrap();
        let reference = cassette
            .write(
                &made.path().join("results.cassettes"),
                "results.cassettes",
                &crate::shared::redact::Redactor::new([]),
            )
            .unwrap();
        let mut test = crate::verdict::results::TestResult::new(
            "t",
            "t.aptitude.yaml",
            crate::verdict::results::TestStatus::Passed,
        );
        test.model_traffic = Some(crate::gateway::Traffic {
            cassette: Some(reference.clone()),
            ..Default::default()
        });
        let results = Results::new(vec![test], 1);
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut buf);
            let options = zip::write::SimpleFileOptions::default();
            w.start_file("results.json", options).unwrap();
            std::io::Write::write_all(&mut w, serde_json::to_string(&results).unwrap().as_bytes())
                .unwrap();
            w.start_file(&reference.file, options).unwrap();
            let bytes = std::fs::read(made.path().join(&reference.file)).unwrap();
            std::io::Write::write_all(&mut w, &bytes).unwrap();
            w.finish().unwrap();
        }
        let read = read_results(buf.get_ref()).unwrap();
        let dir = extract_cassettes(buf.get_ref(), &read).unwrap().unwrap();
        let back = Cassette::read(dir.path(), &reference).unwrap();
        assert_eq!(back.upstream, "https://api.anthropic.com");
        let without = Results::new(Vec::new(), 1);
        assert!(
            extract_cassettes(buf.get_ref(), &without)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn only_cassette_references_aptitude_writes_are_extracted() {
        assert!(is_cassette_reference(
            "results.cassettes/3fa9c1e07b2d4a66.json.gz"
        ));
        for bad in [
            "../x.cassettes/3fa9c1e07b2d4a66.json.gz",
            "results.cassettes/../../etc/passwd",
            "/abs.cassettes/3fa9c1e07b2d4a66.json.gz",
            ".cassettes/3fa9c1e07b2d4a66.json.gz",
            "results.cassettes/3fa9c1e07b2d4a6z.json.gz",
            "results/3fa9c1e07b2d4a66.json.gz",
            "a.cassettes/b/3fa9c1e07b2d4a66.json.gz",
        ] {
            assert!(!is_cassette_reference(bad), "{bad}");
        }
    }

    #[test]
    fn a_zip_without_results_is_unreadable_never_empty_results() {
        let mut buf = std::io::Cursor::new(Vec::new());
        {
            let mut w = zip::ZipWriter::new(&mut buf);
            w.start_file("report.html", zip::write::SimpleFileOptions::default())
                .unwrap();
            std::io::Write::write_all(&mut w, b"<html>").unwrap();
            w.finish().unwrap();
        }
        assert_eq!(
            read_results(buf.get_ref()).unwrap_err().to_string(),
            "no results.json in it"
        );
        assert!(
            read_results(b"not a zip")
                .unwrap_err()
                .to_string()
                .starts_with("not a zip")
        );
    }
}
