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
    /// Grading calls per answer for reviews that set no `votes:`, as `run` and `certify`
    /// were given it: a certificate holds the votes it was measured with.
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::spec::MAX_VOTES)))]
    pub judge_votes: u32,
}

/// A judge: the grading agent and its model.
type Profile = (AgentKind, Option<String>);

/// What one certificate pools: the labels directory, and the judge profile — grading
/// agent, model, threshold and votes (a threshold or a vote count grades otherwise).
type Group = (PathBuf, AgentKind, Option<String>, u8, u32);

/// One labelled answer with the review it is an answer to, and the labels directory the
/// label was read from.
struct Case<'a> {
    label: &'a Label,
    spec: &'a TestSpec,
    review: &'a ReviewAssertion,
    dir: &'a Path,
}

impl Case<'_> {
    fn group(&self, default_votes: u32) -> Group {
        let (agent, model) = profile_of(self.spec, self.review);
        let print = print_of(self.spec, self.review, default_votes);
        (
            self.dir.to_owned(),
            agent,
            model,
            print.threshold,
            print.votes,
        )
    }
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

/// The labels directory of `spec`: `--labels`, else its `judge.labels`, else the default.
fn labels_dir(flag: Option<&Path>, spec: &TestSpec) -> PathBuf {
    flag.map(Path::to_path_buf)
        .or_else(|| spec.judge_trust.labels.clone())
        .unwrap_or_else(|| PathBuf::from(labels::DEFAULT_DIR))
}

/// The labels of every test's labels directory, each directory read once.
fn read_labels(
    flag: Option<&Path>,
    specs: &[TestSpec],
) -> Result<BTreeMap<PathBuf, Vec<Label>>, CliError> {
    let mut read = BTreeMap::new();
    for spec in specs {
        if let std::collections::btree_map::Entry::Vacant(e) = read.entry(labels_dir(flag, spec)) {
            let all = labels::read_dir(e.key())?;
            e.insert(all);
        }
    }
    Ok(read)
}

/// The `min_lower_bound` of each group, from the tests whose labels it pools.
///
/// # Errors
/// Two tests of one group asking for different bounds: [`CliError::JudgeBound`] at the
/// `judge.min_lower_bound` written (file:line:col, the line, a caret, a hint).
fn bounds(cases: &[Case<'_>], default_votes: u32) -> Result<BTreeMap<Group, f64>, CliError> {
    let mut first: BTreeMap<Group, &TestSpec> = BTreeMap::new();
    for case in cases {
        let group = case.group(default_votes);
        let Some(seen) = first.get(&group) else {
            first.insert(group, case.spec);
            continue;
        };
        let (a, b) = (&seen.judge_trust, &case.spec.judge_trust);
        if a.min_lower_bound != b.min_lower_bound {
            // Point at a bound that is written; the other test may use the default.
            let (at, other) = if a.min_lower_bound_at.is_some() {
                (*seen, case.spec)
            } else {
                (case.spec, *seen)
            };
            return Err(bound_conflict(at, other));
        }
    }
    Ok(first
        .into_iter()
        .map(|(g, s)| {
            let bound = s.judge_trust.min_lower_bound;
            (g, bound.unwrap_or(DEFAULT_MIN_LOWER_BOUND))
        })
        .collect())
}

/// The error of `at`'s written `judge.min_lower_bound` disagreeing with `other`'s.
fn bound_conflict(at: &TestSpec, other: &TestSpec) -> CliError {
    let shown = |s: &TestSpec| match s.judge_trust.min_lower_bound {
        Some(b) => format!("{b}"),
        None => format!("{DEFAULT_MIN_LOWER_BOUND} (the default)"),
    };
    let (file, line) = at
        .judge_trust
        .min_lower_bound_at
        .clone()
        .unwrap_or_default();
    let source = std::fs::read_to_string(&file).unwrap_or_default();
    let column = source
        .lines()
        .nth(line.saturating_sub(1) as usize)
        .and_then(|l| l.find("min_lower_bound"))
        .map_or(1, |c| c + 1);
    let diagnostic = crate::spec::Diagnostic::new(
        crate::spec::node::Pos {
            line,
            column: u32::try_from(column).unwrap_or(1),
            len: "min_lower_bound".len() as u32,
        },
        format!(
            "test `{}` certifies its judge to a bound of {}, but test `{}` ({}), graded by the same judge into the same labels directory, to {}",
            at.name,
            shown(at),
            other.name,
            other.file.display(),
            shown(other)
        ),
    )
    .label("one certificate pools both tests' labels")
    .hint("give both tests the same `judge.min_lower_bound`, or different `judge.labels` directories");
    let file = crate::spec::FileDiagnostics {
        path: file,
        source,
        diagnostics: vec![diagnostic],
    };
    CliError::JudgeBound {
        diagnostics: crate::spec::diagnostic::render(&file, true),
    }
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

/// Each label with the review it is an answer to (by test name and criteria) among the
/// tests of `specs` whose labels directory it was read from, and how many name no
/// current review.
fn match_labels<'a>(
    read: &'a BTreeMap<PathBuf, Vec<Label>>,
    specs: &'a [TestSpec],
    flag: Option<&Path>,
) -> (Vec<Case<'a>>, usize) {
    let mut cases = Vec::new();
    let mut stale = 0usize;
    for (dir, label) in read
        .iter()
        .flat_map(|(d, all)| all.iter().map(move |l| (d, l)))
    {
        let found = specs.iter().find_map(|s| {
            (s.name == label.test && labels_dir(flag, s) == *dir)
                .then(|| reviews(s).find(|r| r.review == label.review))
                .flatten()
                .map(|r| (s, r))
        });
        match found {
            Some((spec, review)) => cases.push(Case {
                label,
                spec,
                review,
                dir,
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
    let read = read_labels(args.labels.as_deref(), &specs)?;
    let (cases, stale) = match_labels(&read, &specs, args.labels.as_deref());
    if cases.is_empty() {
        let dirs: Vec<String> = read.keys().map(|d| d.display().to_string()).collect();
        out(&format!(
            "nothing to certify: {} holds no label of a review in {}\n",
            if dirs.is_empty() {
                labels::DEFAULT_DIR.to_owned()
            } else {
                dirs.join(", ")
            },
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
    let bounds = bounds(&cases, default_votes)?;
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
    } = tally(&cases, &graded, &versions, &bounds, default_votes);
    let paths = settle_and_write(&mut certificates, battery.as_ref())?;
    let certificates: Vec<Certificate> = certificates.into_iter().map(|(_, c)| c).collect();
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
        paths.join(", ")
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

/// Settles each certificate with the bias battery's probes of its judge (`None`: the
/// battery was not run), then writes the certificates of each labels directory beside its
/// labels; returns the files written.
///
/// # Errors
/// A certificates file that could not be written.
fn settle_and_write(
    certificates: &mut [(PathBuf, Certificate)],
    battery: Option<&super::bias::Battery>,
) -> Result<Vec<String>, CliError> {
    for (_, c) in certificates.iter_mut() {
        let probes = battery.map(|b| {
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
    let mut paths = Vec::new();
    for dir in certificates
        .iter()
        .map(|(d, _)| d)
        .collect::<std::collections::BTreeSet<_>>()
    {
        let of_dir: Vec<Certificate> = certificates
            .iter()
            .filter(|(d, _)| d == dir)
            .map(|(_, c)| c.clone())
            .collect();
        paths.push(certificate::write(dir, &of_dir)?.display().to_string());
    }
    Ok(paths)
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
    /// Each certificate with the labels directory it is written to.
    certificates: Vec<(PathBuf, Certificate)>,
    calls: usize,
    cached: usize,
}

/// The certificate of each group (labels directory and judge profile) from the grades of
/// its labelled answers, with the reviews whose own labels disagree flagged.
fn tally(
    cases: &[Case<'_>],
    graded: &[crate::assertions::judge::ReviewVerdict],
    versions: &BTreeMap<AgentKind, String>,
    bounds: &BTreeMap<Group, f64>,
    default_votes: u32,
) -> Tally {
    type Counts = (Confusion, u32, BTreeMap<ReviewPrint, Confusion>);
    let mut by_group: BTreeMap<Group, Counts> = BTreeMap::new();
    let mut calls = 0usize;
    let mut cached = 0usize;
    for (case, verdict) in cases.iter().zip(graded) {
        calls += verdict.votes.len().max(1);
        cached += usize::from(verdict.cached);
        let entry = by_group.entry(case.group(default_votes)).or_default();
        let own = entry
            .2
            .entry(print_of(case.spec, case.review, default_votes))
            .or_default();
        let human = case.label.verdict == LabelVerdict::Pass;
        match verdict.status {
            AssertionStatus::Pass => {
                entry.0.add(human, true);
                own.add(human, true);
            }
            AssertionStatus::Fail => {
                entry.0.add(human, false);
                own.add(human, false);
            }
            _ => entry.1 += 1,
        }
    }
    let date = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let template = prompt::template_version();
    let certificates = by_group
        .into_iter()
        .map(|(group, (confusion, errors, per_review))| {
            let bound = bounds
                .get(&group)
                .copied()
                .unwrap_or(DEFAULT_MIN_LOWER_BOUND);
            let (dir, agent, model, threshold, votes) = group;
            let per_review: Vec<(ReviewPrint, Confusion)> = per_review.into_iter().collect();
            let fingerprint = JudgeFingerprint {
                agent: agent.name().to_owned(),
                agent_version: versions.get(&agent).cloned().unwrap_or_default(),
                model,
                template: template.clone(),
                threshold: Some(threshold),
                votes: Some(votes),
                reviews: per_review.iter().map(|(p, _)| p.clone()).collect(),
            };
            let mut cert = Certificate::new(fingerprint, confusion, errors, bound, date.clone());
            cert.flagged = certificate::flag(&per_review);
            (dir, cert)
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
    let flagged: String = c
        .flagged
        .iter()
        .map(|r| {
            format!(
                "  flagged: {} · {:?}: its own labels disagree with the judge: {} of {} agreed ({:.3}, upper bound {:.3} below the pooled lower bound {:.3})\n",
                r.test,
                r.rubric,
                (r.agreement.value * f64::from(r.agreement.n)).round(),
                r.agreement.n,
                r.agreement.value,
                r.agreement.high,
                r.pooled_low
            )
        })
        .collect();
    format!(
        "judge {} ({}) model {}{}: {}\n  {} · {} · kappa {kappa}\n  confusion: {true_pass} true pass, {false_fail} false fail, {true_fail} true fail, {false_pass} false pass, {} errors\n  labels still needed: {} passing, {} failing (bound {:.2})\n{flagged}",
        f.agent,
        f.agent_version,
        f.model.as_deref().unwrap_or("(default)"),
        match (f.threshold, f.votes) {
            (Some(t), Some(v)) =>
                format!(", threshold {t}, {v} vote{}", if v == 1 { "" } else { "s" }),
            _ => String::new(),
        },
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
    set_standings(
        &mut specs,
        &versions,
        args.labels.as_deref(),
        args.judge_votes,
    )?;
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
