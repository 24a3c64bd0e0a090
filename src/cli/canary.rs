//! `aptitude init --canary`: a nightly workflow that runs the suite on an agent's latest
//! release and, through `aptitude bisect`, opens or updates one issue naming the first
//! release that made it worse.
//!
//! Alerts are sized to the suite: the workflow raises nothing unless the latest run fails,
//! and then only when `bisect` finds the latest release's pass rate *significantly* lower
//! than the pinned one's (one-sided Fisher exact test, p < 0.05, over `RUNS` runs per
//! release); a smaller drop than those runs can show is not raised. The issue quotes
//! bisect's report, which says the smallest drop the runs can detect.

use std::path::Path;

use super::output::out;
use super::{CliError, Outcome};
use crate::agent::AgentKind;
use crate::agent::registry::{self, AgentOptions};

/// Where the workflow is written, relative to the repository root.
pub const CANARY_WORKFLOW: &str = ".github/workflows/aptitude-canary.yml";

/// Runs per release the workflow's bisect makes: 10 runs show a drop from 100% to 60%
/// (`verdict::bisect::smallest_detectable_drop`), at most a few dollars a night.
const RUNS: u32 = 10;

/// Writes the canary workflow under `root`, never over an existing file.
///
/// # Errors
/// [`super::bisect::BisectError::NotOnNpm`] for an agent without npm releases, or a file
/// that can not be written.
pub fn write(root: &Path, agent: AgentKind) -> Result<Outcome, CliError> {
    let package = super::bisect::npm_package(agent)?;
    let cli = registry::cli(agent, &AgentOptions::default());
    let pinned = cli.pinned_version().unwrap_or("");
    let text = workflow(agent, &package, pinned, cli.api_key_env());
    let path = root.join(CANARY_WORKFLOW);
    if std::fs::symlink_metadata(&path).is_ok() {
        out(&format!("kept     {CANARY_WORKFLOW} (it exists)\n"));
        return Ok(Outcome::Passed);
    }
    crate::shared::files::write_new(&path, &text).map_err(|source| CliError::Write {
        path: path.clone(),
        source,
    })?;
    out(&format!(
        "created  {CANARY_WORKFLOW}\n\nEach night it runs tests/agents on the latest {agent} release; a drop in pass rate\nthat {RUNS} runs per release can detect opens one issue naming the first bad release.\n"
    ));
    Ok(Outcome::Passed)
}

/// The workflow for `agent` (npm `package`, pinned at `pinned`, key in `key_env`).
pub fn workflow(agent: AgentKind, package: &str, pinned: &str, key_env: &str) -> String {
    TEMPLATE
        .replace("{action}", crate::shared::ACTION)
        .replace("{agent}", agent.name())
        .replace("{package}", package)
        .replace("{pinned}", pinned)
        .replace("{runs}", &RUNS.to_string())
        .replace("{key}", key_env)
}

const TEMPLATE: &str = r#"# Nightly canary (made by `aptitude init --canary`): the agent tests in tests/agents on the
# latest {agent} release. When they fail, `aptitude bisect` compares releases from the pinned
# one ({pinned}) to the latest, {runs} runs each, and opens or updates one issue naming the
# first bad release. Only a drop the runs can detect (one-sided Fisher exact test, p < 0.05)
# is raised; the issue says which drop that is. Raise RUNS to see smaller ones.
name: Agent canary

on:
  schedule:
    - cron: "23 4 * * *"
  workflow_dispatch:

permissions:
  contents: read
  issues: write

env:
  AGENT: {agent}
  PACKAGE: "{package}"
  PINNED: "{pinned}"
  RUNS: "{runs}"
  {key}: ${{ secrets.{key} }}

jobs:
  canary:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: The latest release
        id: latest
        run: echo "version=$(npm view "$PACKAGE" version)" >> "$GITHUB_OUTPUT"
      - name: The tests on the latest release
        id: run
        if: steps.latest.outputs.version != env.PINNED
        continue-on-error: true
        uses: {action}
        with:
          tests: tests/agents
          agent: {agent}
          agent-version: {agent}=${{ steps.latest.outputs.version }}
          publish: "false"
      - name: Bisect from the pinned release
        id: bisect
        if: steps.run.outcome == 'failure'
        env:
          LATEST: ${{ steps.latest.outputs.version }}
        run: |
          set +e
          aptitude bisect tests/agents --agent "$AGENT" --good "$PINNED" --bad "$LATEST" \
            --runs "$RUNS" --max-cost 20 --json canary.json > canary.txt
          code=$?
          cat canary.txt
          echo "code=$code" >> "$GITHUB_OUTPUT"
          if [ "$code" -ge 2 ]; then exit "$code"; fi
      - name: Open or update the canary issue
        if: steps.bisect.outputs.code == '1'
        env:
          GH_TOKEN: ${{ github.token }}
          LATEST: ${{ steps.latest.outputs.version }}
        run: |
          title="aptitude canary: the agent tests pass less often on $AGENT $LATEST"
          {
            echo "The agent tests in tests/agents pass significantly less often on $AGENT $LATEST than on $PINNED ($RUNS runs per release, one-sided Fisher exact test, p < 0.05)."
            echo
            echo '```'
            cat canary.txt
            echo '```'
          } > body.md
          gh label create aptitude-canary --force > /dev/null
          number=$(gh issue list --state open --label aptitude-canary --json number --jq '.[0].number')
          if [ -n "$number" ]; then
            gh issue edit "$number" --title "$title" --body-file body.md
          else
            gh issue create --title "$title" --label aptitude-canary --body-file body.md
          fi
"#;
