//! `aptitude judge certify` and `aptitude judge status` (issue #40): the LLM judge graded
//! again on every labelled answer, its agreement with people written as a certificate
//! beside the labels (`verdict::certificate`), and each review's standing against it.
//!
//! The labels name a test and a review's criteria; the test files (PATHS) give the rest
//! of what the judge is asked — the task prompt, the threshold, the votes, the grading
//! agent and model — so a label is graded exactly as its review is in a run: through the
//! agent adapter's grading call, behind the gateway (metered), with the grade cache.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use tokio_util::sync::CancellationToken;

use super::error::CliError;
use super::output::{self, out};
use super::{JudgeArgs, Outcome};
use crate::agent::{Agent, AgentKind};
use crate::assertions::AssertionStatus;
use crate::assertions::judge::{Judge, prompt};
use crate::shared::redact::Redactor;
use crate::spec::judge_gate::{DEFAULT_MIN_LOWER_BOUND, JudgeGate};
use crate::spec::{self, AssertionKind, ReviewAssertion, TestSpec};
use crate::verdict::agreement::{Confusion, Rate};
use crate::verdict::certificate::{
    self, Certificate, Certificates, JudgeFingerprint, ReviewJudge, ReviewPrint,
};
use crate::verdict::labels::{self, Label, LabelVerdict};

/// `aptitude judge certify`.
#[derive(Debug, Args)]
pub struct CertifyArgs {
    /// Test files or directories holding the labelled reviews.
    #[arg(value_name = "PATHS", default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// Also write the certificates as JSON (`{"judge": {"certificate", "certificates"}}`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The labels directory. Default: `judge.labels` of `aptitude.yaml`, else
    /// .aptitude/labels.
    #[arg(long, value_name = "DIR")]
    pub labels: Option<PathBuf>,
    /// Agent binaries.
    #[command(flatten)]
    pub agents: super::settings::AgentArgs,
    /// Judge flags (cache, jobs, retries, votes).
    #[command(flatten)]
    pub judge: JudgeArgs,
    /// Skip the bias battery (padding, authority, text addressed to the judge, master
    /// keys, attribution): fewer grading calls, but then no judge is certified.
    #[arg(long)]
    pub no_bias: bool,
}

/// `aptitude judge status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Test files or directories.
    #[arg(value_name = "PATHS", default_value = ".")]
    pub paths: Vec<PathBuf>,
    /// The labels directory. Default: `judge.labels` of `aptitude.yaml`, else
    /// .aptitude/labels.
    #[arg(long, value_name = "DIR")]
    pub labels: Option<PathBuf>,
    /// Agent binaries.
    #[command(flatten)]
    pub agents: super::settings::AgentArgs,
}

/// A judge profile: the grading agent and its model.
type Profile = (AgentKind, Option<String>);

/// One labelled answer with the review it is an answer to.
struct Case<'a> {
    label: &'a Label,
    spec: &'a TestSpec,
    review: &'a ReviewAssertion,
}

/// The grading agent and model of `review` in `spec`, as `Judge::review` picks them.
fn profile_of(spec: &TestSpec, review: &ReviewAssertion) -> Profile {
    let agent = review.agent.unwrap_or(spec.agent.kind);
    let model = review
        .model
        .clone()
        .or_else(|| spec.model.clone().filter(|_| agent == spec.agent.kind));
    (agent, model)
}

fn reviews(spec: &TestSpec) -> impl Iterator<Item = &ReviewAssertion> {
    spec.assertions.iter().filter_map(|a| match &a.kind {
        AssertionKind::Review(r) => Some(r),
        _ => None,
    })
}

fn print_of(spec: &TestSpec, review: &ReviewAssertion, default_votes: u32) -> ReviewPrint {
    ReviewPrint {
        test: spec.name.clone(),
        rubric: review.review.clone(),
        threshold: review.threshold,
        votes: review.votes.unwrap_or(default_votes).max(1),
    }
}

fn load(paths: &[PathBuf]) -> Result<Vec<TestSpec>, CliError> {
    let files = output::discover_tests(paths, None)?.files;
    let report = spec::load_files(&files);
    output::check_load_errors(&Redactor::from_process_env([]), &report, files.len())?;
    Ok(report.specs)
}

fn labels_dir(flag: Option<&Path>, specs: &[TestSpec]) -> PathBuf {
    flag.map(Path::to_path_buf)
        .or_else(|| specs.iter().find_map(|s| s.judge_trust.labels.clone()))
        .unwrap_or_else(|| PathBuf::from(labels::DEFAULT_DIR))
}

fn min_lower_bound(specs: &[TestSpec]) -> f64 {
    specs
        .iter()
        .find_map(|s| s.judge_trust.min_lower_bound)
        .unwrap_or(DEFAULT_MIN_LOWER_BOUND)
}

/// The version each agent reports (`Agent::check`); an agent that can not be checked is
/// an error naming it.
async fn versions(
    agents: &BTreeMap<AgentKind, Arc<dyn Agent>>,
) -> Result<BTreeMap<AgentKind, String>, CliError> {
    let mut out = BTreeMap::new();
    for (kind, agent) in agents {
        let info = agent.check().await.map_err(|e| CliError::NothingRun {
            problems: vec![format!("the `{}` judge: {e}", kind.name())],
        })?;
        out.insert(*kind, info.version);
    }
    Ok(out)
}

/// Each label with the review of `specs` it is an answer to (by test name and criteria),
/// and how many name no current review.
fn match_labels<'a>(all: &'a [Label], specs: &'a [TestSpec]) -> (Vec<Case<'a>>, usize) {
    let mut cases = Vec::new();
    let mut stale = 0usize;
    for label in all {
        let found = specs.iter().find_map(|s| {
            (s.name == label.test)
                .then(|| reviews(s).find(|r| r.review == label.review))
                .flatten()
                .map(|r| (s, r))
        });
        match found {
            Some((spec, review)) => cases.push(Case {
                label,
                spec,
                review,
            }),
            None => stale += 1,
        }
    }
    (cases, stale)
}

/// Runs `aptitude judge certify`.
pub fn certify(args: &CertifyArgs) -> Result<Outcome, CliError> {
    let started = Instant::now();
    let specs = load(&args.paths)?;
    let dir = labels_dir(args.labels.as_deref(), &specs);
    let bound = min_lower_bound(&specs);
    let all = labels::read_dir(&dir)?;
    let (cases, stale) = match_labels(&all, &specs);
    if cases.is_empty() {
        out(&format!(
            "nothing to certify: {} holds no label of a review in {}\n",
            dir.display(),
            args.paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return Ok(Outcome::Passed);
    }
    let gateway = crate::gateway::Gateway::new(crate::gateway::GatewayOptions {
        limits: crate::gateway::Limits::default(),
        record: None,
        redactor: Some(Redactor::from_process_env([])),
    });
    let setup = args
        .agents
        .resolve(|name| std::env::var_os(name))
        .with_gateway(Some(gateway.clone()));
    let kinds: std::collections::BTreeSet<AgentKind> = cases
        .iter()
        .map(|c| profile_of(c.spec, c.review).0)
        .collect();
    let agents: BTreeMap<AgentKind, Arc<dyn Agent>> =
        kinds.iter().map(|k| (*k, setup.agent(*k))).collect();
    let config = args.judge.config();
    let default_votes = config.votes;
    let judge = Judge::new(config, agents.values().cloned());
    let runtime = output::runtime()?;
    let (versions, graded) = runtime.block_on(async {
        let versions = versions(&agents).await?;
        let cancel = CancellationToken::new();
        let grades = cases.iter().map(|c| {
            judge.review(
                c.review,
                (c.spec.agent.kind, c.spec.model.as_deref()),
                &c.spec.prompt,
                // A label holds the answer, not the run's dialog: certified without it.
                (Some(c.label.answer.as_str()), None),
                &cancel,
            )
        });
        Ok::<_, CliError>((versions, futures_util::future::join_all(grades).await))
    })?;
    let battery = (!args.no_bias).then(|| {
        let bias_cases = bias_cases(&cases, &graded);
        let judge = Judge::new(args.judge.config(), agents.values().cloned());
        runtime.block_on(super::bias::run(judge, &bias_cases, default_votes))
    });
    let Tally {
        mut certificates,
        calls,
        cached,
    } = tally(&cases, &graded, &versions, bound, default_votes);
    for c in &mut certificates {
        let probes = battery.as_ref().map(|b| {
            b.probes
                .iter()
                .find(|((agent, model), _)| {
                    agent.name() == c.fingerprint.agent && *model == c.fingerprint.model
                })
                .map(|(_, probes)| probes.clone())
                .unwrap_or_default()
        });
        super::bias::settle(c, probes);
    }
    let path = certificate::write(&dir, &certificates)?;
    let (_, usd) = gateway.spent();
    let mut text = String::new();
    for c in &certificates {
        text.push_str(&show(c));
        text.push_str(&super::bias::show(c));
    }
    if let Some(b) = &battery {
        text.push_str(&format!(
            "bias battery: {} extra grading calls ({} answered from the cache)\n",
            b.calls, b.cached
        ));
    }
    text.push_str(&format!(
        "{} labels graded ({} grading calls, {cached} answered from the cache), {stale} naming no current review; {:.1} s, ${usd:.4} metered\ncertificates written to {}\n",
        cases.len(),
        calls,
        started.elapsed().as_secs_f64(),
        path.display()
    ));
    out(&text);
    if let Some(json) = &args.json {
        let first = certificates.first();
        let bias = first.and_then(|c| c.bias.as_ref());
        let doc = serde_json::json!({"judge": {"certificate": first, "bias": bias, "certificates": certificates}});
        let body = serde_json::to_string_pretty(&doc).unwrap_or_default();
        std::fs::write(json, body + "\n").map_err(|source| CliError::Write {
            path: json.clone(),
            source,
        })?;
    }
    Ok(Outcome::of(certificates.iter().all(|c| c.certified)))
}

/// The battery's input: each labelled answer with its grade unchanged.
fn bias_cases<'a>(
    cases: &'a [Case<'a>],
    graded: &'a [crate::assertions::judge::ReviewVerdict],
) -> Vec<super::bias::Case<'a>> {
    cases
        .iter()
        .zip(graded)
        .map(|(c, baseline)| super::bias::Case {
            review: c.review,
            test: (c.spec.agent.kind, c.spec.model.as_deref()),
            task: &c.spec.prompt,
            answer: &c.label.answer,
            human_pass: c.label.verdict == LabelVerdict::Pass,
            baseline,
            profile: profile_of(c.spec, c.review),
        })
        .collect()
}

/// What the grades of the labelled answers came to.
struct Tally {
    certificates: Vec<Certificate>,
    calls: usize,
    cached: usize,
}

/// The certificate of each judge profile from the grades of its labelled answers.
fn tally(
    cases: &[Case<'_>],
    graded: &[crate::assertions::judge::ReviewVerdict],
    versions: &BTreeMap<AgentKind, String>,
    bound: f64,
    default_votes: u32,
) -> Tally {
    let mut by_profile: BTreeMap<Profile, (Confusion, u32, Vec<ReviewPrint>)> = BTreeMap::new();
    let mut calls = 0usize;
    let mut cached = 0usize;
    for (case, verdict) in cases.iter().zip(graded) {
        calls += verdict.votes.len().max(1);
        cached += usize::from(verdict.cached);
        let entry = by_profile
            .entry(profile_of(case.spec, case.review))
            .or_default();
        entry
            .2
            .push(print_of(case.spec, case.review, default_votes));
        let human = case.label.verdict == LabelVerdict::Pass;
        match verdict.status {
            AssertionStatus::Pass => entry.0.add(human, true),
            AssertionStatus::Fail => entry.0.add(human, false),
            _ => entry.1 += 1,
        }
    }
    let date = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let template = prompt::template_version();
    let certificates: Vec<Certificate> = by_profile
        .into_iter()
        .map(|((agent, model), (confusion, errors, mut prints))| {
            prints.sort();
            prints.dedup();
            let fingerprint = JudgeFingerprint {
                agent: agent.name().to_owned(),
                agent_version: versions.get(&agent).cloned().unwrap_or_default(),
                model,
                template: template.clone(),
                reviews: prints,
            };
            Certificate::new(fingerprint, confusion, errors, bound, date.clone())
        })
        .collect();
    Tally {
        certificates,
        calls,
        cached,
    }
}

fn rate(name: &str, r: Option<Rate>) -> String {
    match r {
        Some(r) => format!(
            "{name} {:.3} [{:.3}, {:.3}] of {}",
            r.value, r.low, r.high, r.n
        ),
        None => format!("{name} — (no labels)"),
    }
}

fn show(c: &Certificate) -> String {
    let f = &c.fingerprint;
    let kappa = c.kappa.map_or("—".to_owned(), |k| format!("{k:.3}"));
    let needed = |n: Option<u32>| n.map_or("never at this accuracy".to_owned(), |n| n.to_string());
    let Confusion {
        true_pass,
        false_fail,
        true_fail,
        false_pass,
    } = c.confusion;
    format!(
        "judge {} ({}) model {}: {}\n  {} · {} · kappa {kappa}\n  confusion: {true_pass} true pass, {false_fail} false fail, {true_fail} true fail, {false_pass} false pass, {} errors\n  labels still needed: {} passing, {} failing (bound {:.2})\n",
        f.agent,
        f.agent_version,
        f.model.as_deref().unwrap_or("(default)"),
        match &c.why_not {
            None => "certified".to_owned(),
            Some(why) => format!("not certified: {why}"),
        },
        rate("TPR", c.tpr),
        rate("TNR", c.tnr),
        c.errors,
        needed(c.labels_needed.pass),
        needed(c.labels_needed.fail),
        c.min_lower_bound,
    )
}

/// Each review's standing, for `judge status` and for a run (`run` sets them on the
/// reviews before grading): the judge's fingerprint from `versions` and the certificates
/// of the labels directory (`dir`, else each test's `judge.labels`).
///
/// # Errors
/// A certificates file that can not be read.
pub fn set_standings(
    specs: &mut [TestSpec],
    versions: &BTreeMap<AgentKind, String>,
    dir: Option<&Path>,
    default_votes: u32,
) -> Result<(), CliError> {
    let template = prompt::template_version();
    let mut read: BTreeMap<PathBuf, Certificates> = BTreeMap::new();
    for spec in specs.iter_mut() {
        let labels = dir
            .map(Path::to_path_buf)
            .or_else(|| spec.judge_trust.labels.clone())
            .unwrap_or_else(|| PathBuf::from(labels::DEFAULT_DIR));
        if !read.contains_key(&labels) {
            let certs = certificate::read(&labels)?;
            read.insert(labels.clone(), certs);
        }
        let certs = &read[&labels];
        let bound = spec
            .judge_trust
            .min_lower_bound
            .unwrap_or(DEFAULT_MIN_LOWER_BOUND);
        let snapshot = spec.clone();
        for a in &mut spec.assertions {
            let AssertionKind::Review(review) = &mut a.kind else {
                continue;
            };
            let (agent, model) = profile_of(&snapshot, review);
            let print = print_of(&snapshot, review, default_votes);
            let judge = ReviewJudge {
                agent: agent.name(),
                agent_version: versions.get(&agent).map_or("", String::as_str),
                model: model.as_deref(),
                template: &template,
                review: &print,
            };
            let gate = review.gate.unwrap_or(JudgeGate::Always);
            review.standing = Some(certificate::standing(gate, certs, &judge, bound));
        }
    }
    Ok(())
}

/// Runs `aptitude judge status`.
pub fn status(args: &StatusArgs) -> Result<Outcome, CliError> {
    let mut specs = load(&args.paths)?;
    let setup = args.agents.resolve(|name| std::env::var_os(name));
    let kinds: std::collections::BTreeSet<AgentKind> = specs
        .iter()
        .flat_map(|s| reviews(s).map(|r| profile_of(s, r).0))
        .collect();
    let agents: BTreeMap<AgentKind, Arc<dyn Agent>> =
        kinds.iter().map(|k| (*k, setup.agent(*k))).collect();
    let versions = output::runtime()?.block_on(versions(&agents))?;
    set_standings(&mut specs, &versions, args.labels.as_deref(), 1)?;
    let mut text = String::new();
    for spec in &specs {
        for review in reviews(spec) {
            let Some(standing) = &review.standing else {
                continue;
            };
            let (agent, model) = profile_of(spec, review);
            text.push_str(&format!(
                "{:<12} {} · {:?} · judge {}{} · gate {}{}{}\n",
                standing.certificate.name(),
                spec.name,
                review.review,
                agent.name(),
                model.map(|m| format!(" {m}")).unwrap_or_default(),
                standing.gate.name(),
                if standing.advisory { " (advisory)" } else { "" },
                standing
                    .why
                    .as_deref()
                    .map(|w| format!("\n             {w}"))
                    .unwrap_or_default(),
            ));
        }
    }
    if text.is_empty() {
        text.push_str("no `stdout` review in these tests\n");
    }
    out(&output::inert(&text));
    Ok(Outcome::Passed)
}
