//! The work after the agent: the file snapshot, `verify` commands and the assertions,
//! each step named so that a run cut by its deadline says where.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::shell::{Shell, StepError, run_shell};
use crate::agent::process::Ending;
use crate::assertions::judge::ReviewVerdict;
use crate::assertions::{self, Evidence, VerifyRun, WorkspaceEvidence};
use crate::spec::{AssertionKind, TestSpec, VerifyAssertion};
use crate::transcript::Transcript;
use crate::workspace::Workspace;

/// What the post-run work produced, as far as it got.
#[derive(Default)]
pub(super) struct PostRun {
    pub(super) files: Vec<crate::workspace::FileChange>,
    pub(super) assertions: Vec<crate::verdict::results::AssertionResult>,
}

pub(super) fn current(step: &std::sync::Mutex<String>) -> String {
    step.lock()
        .map(|s| s.clone())
        .unwrap_or_else(|e| e.into_inner().clone())
}

/// The work after the agent: file snapshot, `verify` commands, assertions; `step` names
/// what is running (for the message when it is cut). An error is a failed snapshot.
pub(super) async fn post_run(
    spec: &TestSpec,
    workspace: &Arc<Workspace>,
    (transcript, mcp_calls, dropped, dialog): (
        &Transcript,
        &[crate::transcript::ToolCall],
        u32,
        Option<&crate::transcript::dialog::Dialog>,
    ),
    reviews: &BTreeMap<usize, ReviewVerdict>,
    post: &mut PostRun,
    step: &std::sync::Mutex<String>,
    ctx: &super::TestContext<'_>,
) -> Result<(), StepError> {
    let (cancel, sandbox) = (ctx.cancel, &ctx.config.sandbox);
    let set_step = |s: String| {
        if let Ok(mut current) = step.lock() {
            *current = s;
        }
    };
    let ws = Arc::clone(workspace);
    post.files = tokio::task::spawn_blocking(move || ws.changes())
        .await
        .map_err(StepError::SnapshotTask)??;
    let mut verify_runs = BTreeMap::new();
    for (index, assertion) in spec.assertions.iter().enumerate() {
        if let AssertionKind::Verify(v) = &assertion.kind
            && crate::assertions::applies_to(assertion, spec.variant_name())
        {
            set_step(format!("verify `{}`", v.run));
            let shell = Shell {
                workspace: workspace.path(),
                env: &spec.env,
                sandbox,
                protect: &spec.file,
                wanted: spec.sandbox,
                network: &spec.network,
                cancel,
            };
            verify_runs.insert(index, run_verify(v, &shell).await);
        }
    }
    set_step("the assertions".into());
    let (spec, ws, transcript, reviews, files, mcp_calls) = (
        spec.clone(),
        Arc::clone(workspace),
        transcript.clone(),
        reviews.clone(),
        post.files.clone(),
        mcp_calls.to_vec(),
    );
    let dialog = dialog.cloned();
    post.assertions = tokio::task::spawn_blocking(move || {
        assertions::evaluate(
            &spec,
            &Evidence {
                transcript: &transcript,
                workspace: Some(WorkspaceEvidence {
                    root: ws.path(),
                    changes: &files,
                }),
                verify: &verify_runs,
                reviews: &reviews,
                mcp_calls: Some(assertions::mcp::MockCalls {
                    calls: &mcp_calls,
                    dropped,
                }),
                user: spec.user.as_deref(),
                dialog: dialog.as_ref(),
            },
        )
    })
    .await
    .map_err(StepError::AssertionsTask)?;
    Ok(())
}

/// Runs a `verify` command in the workspace after the agent, with the test's `env`.
pub(super) async fn run_verify(v: &VerifyAssertion, shell: &Shell<'_>) -> VerifyRun {
    if shell.cancel.is_cancelled() {
        return VerifyRun {
            code: None,
            failure: Some("not run: interrupted".into()),
            stdout: String::new(),
            stderr: String::new(),
        };
    }
    let (stdout, out) = run_shell(shell, &v.run, v.timeout).await;
    match out {
        Ok(out) => VerifyRun {
            code: (out.ending == Ending::Exited).then_some(out.code).flatten(),
            failure: match out.ending {
                Ending::Exited if out.code.is_some() => None,
                _ => Some(out.describe(v.timeout)),
            },
            stdout,
            stderr: out.stderr,
        },
        Err(e) => VerifyRun {
            code: None,
            failure: Some(format!("could not start: {e}")),
            stdout,
            stderr: String::new(),
        },
    }
}
