//! Shards: one run split across jobs (`aptitude run --shard K/N`), and the jobs' results
//! put back together (`aptitude merge`).
//!
//! What is split are [`Unit`]s: a test, or — for a test with `runs: N > 1` — each of its
//! runs, so that the runs of one repeated test spread over the shards like tests do.
//! Splitting is a pure function of the units' identities — (test file, name, agent,
//! variant, run number), after tests are split per agent and variant — and, optionally, of
//! their durations in a baseline run. N jobs that see the same tests (and the same baseline)
//! therefore agree on who runs what without talking to each other, whatever order they
//! discover the tests in: every test (every run) lands in exactly one shard.
//!
//! Both ways use the one algorithm: units are taken longest first (a baseline's mean
//! duration of one run of the test; the mean of the known durations for a test the baseline
//! does not have; the same weight for every unit without a baseline), ties broken by a
//! stable hash of the identity, and each goes into the shard with the least load so far (the
//! lowest-numbered on a tie). With equal weights that deals the units round-robin in hash
//! order, so shards differ by at most one unit.
//!
//! `merge` puts the runs of a split test back together ([`crate::verdict::repeat::aggregate_split`])
//! and decides it over all its runs.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::spec::agent_kind::AgentKind;
use crate::verdict::results::{Results, ShardInfo, Summary, TestResult};

/// One shard of a run split `count` ways: `--shard 2/3` is index 2 of count 3 (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

/// Why a `K/N` shard is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Not two whole numbers around a `/`.
    #[error("expected K/N, two whole numbers (shard K of N)")]
    Syntax,
    /// `N` is 0.
    #[error("a run can not be split into 0 shards")]
    NoShards,
    /// `K` is 0.
    #[error("shards are numbered from 1")]
    Zero {
        /// `N`.
        count: u32,
    },
    /// `K` is greater than `N`.
    #[error("there is no shard {index} of {count}")]
    OutOfRange {
        /// `K`.
        index: u32,
        /// `N`.
        count: u32,
    },
}

impl ShardError {
    /// How to write it instead.
    pub fn hint(&self) -> String {
        match self {
            ShardError::Syntax | ShardError::NoShards => {
                "write e.g. `--shard 2/3` for the second of three shards".to_owned()
            }
            ShardError::Zero { count } => format!("the first shard is `--shard 1/{count}`"),
            ShardError::OutOfRange { count, .. } => {
                format!("K is at most N: the last shard is `--shard {count}/{count}`")
            }
        }
    }
}

impl Shard {
    /// Shard `index` (1-based) of `count`.
    ///
    /// # Errors
    /// When `count` is 0, or `index` is 0 or greater than `count`.
    pub fn new(index: u32, count: u32) -> Result<Self, ShardError> {
        if count == 0 {
            Err(ShardError::NoShards)
        } else if index == 0 {
            Err(ShardError::Zero { count })
        } else if index > count {
            Err(ShardError::OutOfRange { index, count })
        } else {
            Ok(Shard { index, count })
        }
    }

    /// The shard's number, 1 to [`Shard::count`].
    pub fn index(&self) -> u32 {
        self.index
    }

    /// How many shards the run is split into (at least 1).
    pub fn count(&self) -> u32 {
        self.count
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    /// `K/N`, e.g. `2/3`; spaces around either number are allowed.
    fn from_str(s: &str) -> Result<Self, ShardError> {
        let (k, n) = s.split_once('/').ok_or(ShardError::Syntax)?;
        let number = |t: &str| {
            let t = t.trim();
            // `u32::from_str` takes a leading `+`; a shard number is digits only.
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ShardError::Syntax);
            }
            t.parse::<u32>().map_err(|_| ShardError::Syntax)
        };
        Shard::new(number(k)?, number(n)?)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

pub use crate::verdict::results::TestKey;

/// Sharding's view of a test's identity.
impl TestKey {
    /// A hash of the identity that is the same on every platform and in every aptitude
    /// version: the first 8 bytes of SHA-256 over `file`, `name`, the agent's name,
    /// (when there is one) the variant and (when there is one) `@` and the agent's release,
    /// each followed by a NUL byte.
    pub fn stable_hash(&self) -> u64 {
        self.hash_with(None)
    }

    /// [`TestKey::stable_hash`], with `extra` hashed last the same way.
    fn hash_with(&self, extra: Option<&str>) -> u64 {
        let mut h = Sha256::new();
        let parts = [self.file.as_str(), self.name.as_str(), self.agent.name()];
        let release = self.agent_version.as_deref().map(|v| format!("@{v}"));
        for part in parts
            .into_iter()
            .chain(self.variant.as_deref())
            .chain(release.as_deref())
            .chain(extra)
        {
            h.update(part.as_bytes());
            h.update([0]);
        }
        let digest = h.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(first)
    }
}

/// What one shard runs: a test, or one run of a test with several runs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Unit {
    /// The test.
    pub key: TestKey,
    /// The run's number (1-based) for a test with several runs; `None` for a test that
    /// runs once.
    pub run: Option<u32>,
}

impl Unit {
    /// The test's [`TestKey::stable_hash`]; for one run of a repeated test, the same hash
    /// with the run's number (in decimal) as one more part.
    pub fn stable_hash(&self) -> u64 {
        match self.run {
            None => self.key.stable_hash(),
            Some(run) => self.key.hash_with(Some(&run.to_string())),
        }
    }

    /// The units of a test that runs `runs` times: the test itself when once, else each run.
    pub fn of(key: TestKey, runs: u32) -> Vec<Unit> {
        if runs <= 1 {
            return vec![Unit { key, run: None }];
        }
        (1..=runs)
            .map(|run| Unit {
                key: key.clone(),
                run: Some(run),
            })
            .collect()
    }
}

/// Each unit's shard, 0-based, in the order of `units`. `durations` (ms per run of each
/// test, from a baseline) balances the shards by time; see the module documentation for the
/// algorithm. The result depends on the set of units, not on their order.
pub fn assign(units: &[Unit], count: u32, durations: Option<&HashMap<TestKey, u64>>) -> Vec<u32> {
    let count = count.max(1);
    let known: Vec<u64> = match durations {
        Some(d) => units
            .iter()
            .filter_map(|u| d.get(&u.key).copied())
            .collect(),
        None => Vec::new(),
    };
    // A test the baseline does not know costs what an average known test costs.
    let fallback = if known.is_empty() {
        1
    } else {
        (known.iter().map(|&d| u128::from(d)).sum::<u128>() / known.len() as u128) as u64
    }
    .max(1);
    let weights: Vec<u64> = units
        .iter()
        .map(|u| {
            durations
                .and_then(|d| d.get(&u.key).copied())
                .unwrap_or(fallback)
                .max(1)
        })
        .collect();
    let hashes: Vec<u64> = units.iter().map(Unit::stable_hash).collect();
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|&a, &b| {
        weights[b]
            .cmp(&weights[a])
            .then(hashes[a].cmp(&hashes[b]))
            .then_with(|| units[a].cmp(&units[b]))
    });
    // (load in ms or units, units) per shard.
    let mut loads = vec![(0u64, 0usize); count as usize];
    let mut shard_of = vec![0u32; units.len()];
    for i in order {
        let (lightest, _) = loads
            .iter()
            .enumerate()
            .min_by_key(|(s, load)| (**load, *s))
            .unwrap_or((0, &(0, 0)));
        if let Some(load) = loads.get_mut(lightest) {
            load.0 = load.0.saturating_add(weights[i]);
            load.1 += 1;
        }
        shard_of[i] = lightest as u32;
    }
    shard_of
}

/// The positions in `units` of the units that `shard` runs, in their original order.
pub fn select(
    units: &[Unit],
    shard: Shard,
    durations: Option<&HashMap<TestKey, u64>>,
) -> Vec<usize> {
    assign(units, shard.count(), durations)
        .into_iter()
        .enumerate()
        .filter(|(_, s)| *s + 1 == shard.index())
        .map(|(i, _)| i)
        .collect()
}

/// The duration of one run of each test in a baseline run, in ms: the mean of its runs for
/// a test that ran several times (over the runs it holds, for one shard's part of a split
/// test, whose parts are summed first).
pub fn durations(baseline: &Results) -> HashMap<TestKey, u64> {
    let mut d: HashMap<TestKey, (u64, u64)> = HashMap::new();
    for t in &baseline.tests {
        let slot = d.entry(t.key()).or_default();
        slot.0 = slot.0.saturating_add(t.duration_ms);
        slot.1 += t.runs.len().max(1) as u64;
    }
    d.into_iter()
        .map(|(key, (ms, runs))| (key, ms / runs.max(1)))
        .collect()
}

/// Names a baseline's durations ([`ShardInfo::baseline`]): 16 hex digits of a SHA-256
/// over every (test, ms) pair, in key order.
pub fn baseline_id(durations: &HashMap<TestKey, u64>) -> String {
    let sorted: BTreeMap<&TestKey, u64> = durations.iter().map(|(k, d)| (k, *d)).collect();
    let mut h = Sha256::new();
    for (key, ms) in sorted {
        h.update(key.stable_hash().to_be_bytes());
        h.update(ms.to_be_bytes());
    }
    crate::shared::hex(&h.finalize()[..8])
}

/// Why results could not be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no results files to merge")]
    Empty,
    /// Two files have different schema versions.
    #[error(
        "{first} has results version {first_version} but {other} has version {other_version}; merge results written by one aptitude"
    )]
    Version {
        /// The first file.
        first: String,
        /// Its version.
        first_version: u32,
        /// The file that differs.
        other: String,
        /// Its version.
        other_version: u32,
    },
    /// The same test is in two files.
    #[error(
        "test `{name}` ({file}, agent {agent}) is in both {first} and {second}; each test must be in one results file only"
    )]
    Duplicate {
        /// The test file.
        file: String,
        /// The test's name.
        name: String,
        /// The agent.
        agent: AgentKind,
        /// The first file holding it.
        first: String,
        /// The second.
        second: String,
    },
    /// The same run of a split test is in two files.
    #[error(
        "run {run} of test `{name}` ({file}) is in both {first} and {second}; each run must be in one results file only"
    )]
    DuplicateRun {
        /// The test file.
        file: String,
        /// The test's name.
        name: String,
        /// The run's number, 1-based.
        run: u32,
        /// The first file holding it.
        first: String,
        /// The second.
        second: String,
    },
    /// Two files hold runs of one test but disagree on its runs or `min_pass`.
    #[error(
        "test `{name}` ({file}) has another number of runs or another min_pass in {second} than in {first}; merge the shards of one run"
    )]
    SplitMismatch {
        /// The test file.
        file: String,
        /// The test's name.
        name: String,
        /// The first file holding runs of it.
        first: String,
        /// The file that differs.
        second: String,
    },
    /// A part of a split test that can not be one.
    #[error("test `{name}` ({file}) in {results} is not a valid part of a split test: {why}")]
    InvalidSplit {
        /// The test file.
        file: String,
        /// The test's name.
        name: String,
        /// The results file holding the part.
        results: String,
        /// What is wrong.
        why: String,
    },
    /// Two files are shards of different splits.
    #[error(
        "{first} is shard {first_shard} but {other} is shard {other_shard} of another split (shards of one run have the same N, test and run counts, and balancing baseline)"
    )]
    ShardMismatch {
        /// The first sharded file.
        first: String,
        /// Its shard, `K/N`.
        first_shard: String,
        /// The file that differs.
        other: String,
        /// Its shard.
        other_shard: String,
    },
    /// Two files are the same shard.
    #[error("{first} and {second} are both shard {shard}")]
    SameShard {
        /// The first file.
        first: String,
        /// The second.
        second: String,
        /// The shard, `K/N`.
        shard: String,
    },
    /// Some files are shards and others are not.
    #[error(
        "{sharded} is shard {shard} of a run but {other} is not a shard (it was written without --shard)"
    )]
    MixedSharding {
        /// A sharded file.
        sharded: String,
        /// Its shard.
        shard: String,
        /// A file without shard information.
        other: String,
    },
    /// The shards together hold another number of tests than the split gave them.
    #[error(
        "the shards hold {held} tests but their split had {expected}: a shard's results file lost tests (merge the results files the shard jobs wrote, unedited)"
    )]
    TestCount {
        /// Tests in the merged results.
        held: usize,
        /// Tests in the split (`shard.tests`).
        expected: u32,
    },
    /// Shards of the run are missing.
    #[error("shard{} {} of {count} {} missing: merge the results of every shard job", if missing.len() == 1 { "" } else { "s" }, crate::shared::text::and_list(missing), if missing.len() == 1 { "is" } else { "are" })]
    MissingShards {
        /// The missing shards' numbers.
        missing: Vec<u32>,
        /// N.
        count: u32,
    },
}

/// Merges results files (`(name for messages, results)`) into one run: the tests of every
/// file, ordered by test file (stably, so each file's own order is kept within a test
/// file), with counts and usage recomputed from them and the durations summed (the
/// merged `duration_ms` is the time the jobs took together, not the wall time).
///
/// The merged file has the inputs' `aptitude_version` when they agree (else this
/// aptitude's), the first input's `run_dir`, no `shard`, and the jobs' budgets summed.
/// The parts of a repeated test whose runs the shards split are joined into one result.
///
/// # Errors
/// No inputs; differing results versions; a test (file, name, agent, variant) in two files
/// (other than parts of a split test), or a run of one in two; files that are shards of
/// different splits, the same shard twice, a mix of sharded and unsharded files, missing
/// shards, or shards that together hold another number of tests than their split.
pub fn merge(inputs: Vec<(String, Results)>) -> Result<Results, MergeError> {
    merge_parts(inputs).map(|m| m.results)
}

/// Results merged by [`merge_parts`], and where each of their tests came from.
#[derive(Debug)]
pub struct Merged {
    /// The merged results.
    pub results: Results,
    /// For each merged test (in order), its parts: `(input, test)` indexes into the inputs
    /// given (one part, or the parts of a test whose runs the shards split, in input order).
    /// [`join`] puts the same test together again from those parts, read whole.
    pub parts: Vec<Vec<(usize, usize)>>,
}

/// [`merge`], with where each merged test came from: a merge may be made on the inputs'
/// tests without their run detail (`aptitude merge` of big suites), and each test put
/// together again whole from its parts ([`join`]) while the merged file is written. The
/// summary is then the tests' own: its sandbox, witness and simulated-user figures, which
/// are read from run detail, come from the inputs' summaries
/// ([`crate::verdict::results::Summary::with_run_detail_of`]).
///
/// # Errors
/// As [`merge`].
pub fn merge_parts(inputs: Vec<(String, Results)>) -> Result<Merged, MergeError> {
    let Some((first_name, first)) = inputs.first() else {
        return Err(MergeError::Empty);
    };
    for (name, r) in &inputs {
        if r.version != first.version {
            return Err(MergeError::Version {
                first: first_name.clone(),
                first_version: first.version,
                other: name.clone(),
                other_version: r.version,
            });
        }
    }
    check_shards(&inputs)?;
    let first_shard_tests = first.shard.as_ref().map(|s| s.tests);

    check_duplicates(&inputs)?;

    let versions: std::collections::BTreeSet<&str> = inputs
        .iter()
        .map(|(_, r)| r.aptitude_version.as_str())
        .collect();
    let aptitude_version = match versions.into_iter().collect::<Vec<_>>().as_slice() {
        [one] => (*one).to_owned(),
        _ => env!("CARGO_PKG_VERSION").to_owned(),
    };
    let version = first.version;
    let run_dir = first.run_dir.clone();
    let duration_ms = inputs.iter().fold(0u64, |sum, (_, r)| {
        sum.saturating_add(r.summary.duration_ms)
    });
    // Each job's ceiling and spend; the merged run's are their sums.
    let budgets: Vec<crate::verdict::results::BudgetSummary> = inputs
        .iter()
        .filter_map(|(_, r)| r.summary.budget.clone())
        .collect();
    // Each shard ran part of the tests: each rule's figures are joined.
    let coverage = inputs
        .iter()
        .filter_map(|(_, r)| r.coverage.clone())
        .reduce(crate::verdict::coverage::Coverage::joined);
    let (tests, parts) = join_tests(inputs)?;
    if let Some(expected) = first_shard_tests
        && tests.len() != expected as usize
    {
        // Every shard reports every test it was given, an interrupted one as `error`: a
        // test missing here was lost, and a merge without it could pass.
        return Err(MergeError::TestCount {
            held: tests.len(),
            expected,
        });
    }
    let mut summary = Summary::of(&tests, duration_ms);
    summary.budget = budgets.into_iter().reduce(add_budgets);
    let results = Results {
        version,
        aptitude_version,
        run_dir,
        shard: None,
        routing: crate::verdict::routing::of(&tests),
        judged: crate::verdict::results::judged_pass_rates(&tests),
        tests,
        summary,
        coverage,
    };
    Ok(Merged { results, parts })
}

/// One merged test put together again from its `parts` (`(results file, test)`, as
/// [`Merged::parts`] lists them, each read whole): a test in one file as it is, the parts
/// of a split test joined as [`merge`] joins them.
///
/// # Errors
/// When the parts of a split test do not fit together.
pub fn join(parts: Vec<(String, TestResult)>) -> Result<TestResult, MergeError> {
    if let [(_, t)] = parts.as_slice()
        && !is_split(t)
    {
        return parts
            .into_iter()
            .next()
            .map(|(_, t)| t)
            .ok_or(MergeError::Empty);
    }
    join_runs(parts)
}

/// Two jobs' ceilings and spend as one: their sums.
fn add_budgets(
    a: crate::verdict::results::BudgetSummary,
    b: crate::verdict::results::BudgetSummary,
) -> crate::verdict::results::BudgetSummary {
    crate::verdict::results::BudgetSummary {
        max_cost_usd: a.max_cost_usd.zip(b.max_cost_usd).map(|(x, y)| x + y),
        max_tokens: a
            .max_tokens
            .zip(b.max_tokens)
            .map(|(x, y)| x.saturating_add(y)),
        spent_cost_usd: a.spent_cost_usd + b.spent_cost_usd,
        spent_tokens: a.spent_tokens.saturating_add(b.spent_tokens),
        skipped_runs: a.skipped_runs + b.skipped_runs,
    }
}

/// A test in two files is an error, unless a sharded run split its runs and each file
/// holds some of them; one file is taken as its run wrote it.
///
/// # Errors
/// [`MergeError::Duplicate`] naming the test and both files.
fn check_duplicates(inputs: &[(String, Results)]) -> Result<(), MergeError> {
    let mut seen: HashMap<TestKey, (&str, bool)> = HashMap::new();
    for (name, r) in inputs {
        // One file is taken as its run wrote it; across files a test may not repeat,
        // unless a sharded run split its runs and each file holds some of them.
        let mut here: std::collections::HashSet<TestKey> = std::collections::HashSet::new();
        for t in &r.tests {
            let key = t.key();
            let split = is_split(t);
            if let Some((other, other_split)) = seen.get(&key)
                && !here.contains(&key)
                && !(split && *other_split)
            {
                return Err(MergeError::Duplicate {
                    file: key.file,
                    name: key.name,
                    agent: key.agent,
                    first: (*other).to_owned(),
                    second: name.clone(),
                });
            }
            here.insert(key.clone());
            seen.insert(key, (name, split));
        }
    }

    Ok(())
}

/// A test's parts, each with its results file and `(input, test)` indexes.
type Parts = Vec<(String, TestResult, (usize, usize))>;

/// Every test of every file, grouped by test file in file order, the parts of a split
/// test joined into one result; and each one's parts ([`Merged::parts`]).
///
/// # Errors
/// When the parts of a split test do not fit together ([`join_runs`]).
#[allow(clippy::type_complexity)]
fn join_tests(
    inputs: Vec<(String, Results)>,
) -> Result<(Vec<TestResult>, Vec<Vec<(usize, usize)>>), MergeError> {
    // Each entry is one test: its result, or the parts (with their files) of a split one.
    let mut by_file: BTreeMap<String, Vec<Parts>> = BTreeMap::new();
    let mut split_at: HashMap<TestKey, usize> = HashMap::new();
    for (input, (name, r)) in inputs.into_iter().enumerate() {
        for (index, t) in r.tests.into_iter().enumerate() {
            let entries = by_file.entry(t.file.clone()).or_default();
            if is_split(&t) {
                let at = *split_at.entry(t.key()).or_insert(entries.len());
                if at == entries.len() {
                    entries.push(Vec::new());
                }
                if let Some(parts) = entries.get_mut(at) {
                    parts.push((name.clone(), t, (input, index)));
                }
            } else {
                entries.push(vec![(name.clone(), t, (input, index))]);
            }
        }
    }
    let mut tests = Vec::new();
    let mut origins = Vec::new();
    for entries in by_file.into_values() {
        for parts in entries {
            origins.push(parts.iter().map(|(_, _, at)| *at).collect());
            tests.push(join(parts.into_iter().map(|(n, t, _)| (n, t)).collect())?);
        }
    }
    Ok((tests, origins))
}

/// Whether a result holds only some of its test's runs (`run --shard` split them).
fn is_split(t: &TestResult) -> bool {
    t.repeat.as_ref().is_some_and(|r| r.split.is_some())
}

/// One test from the parts of it that shards ran (`(results file, part)`, at least one):
/// every run in run order, a run that no part holds as an `error` run, decided over all its
/// runs.
///
/// # Errors
/// Parts that disagree on the test's runs or `min_pass`, or the same run in two parts.
fn join_runs(parts: Vec<(String, TestResult)>) -> Result<TestResult, MergeError> {
    let whole = |t: &TestResult| (t.runs_in_all(), t.repeat.as_ref().map_or(1, |r| r.min_pass));
    let Some((first_file, first)) = parts.first() else {
        return Err(MergeError::Empty);
    };
    let (of, min_pass) = whole(first);
    let key = first.key();
    let invalid = |file: &str, why: String| MergeError::InvalidSplit {
        file: key.file.clone(),
        name: key.name.clone(),
        results: file.to_owned(),
        why,
    };
    if of > crate::spec::MAX_RUNS || min_pass == 0 || min_pass > of {
        return Err(invalid(
            first_file,
            format!(
                "{of} runs with min_pass {min_pass} (a test has 1 to {} runs, and min_pass 1 to its runs)",
                crate::spec::MAX_RUNS
            ),
        ));
    }
    let blank = missing_run(first.runs.first().unwrap_or(first));
    let first_file = first_file.clone();
    let mut runs: BTreeMap<u32, (String, TestResult)> = BTreeMap::new();
    for (file, part) in parts {
        if whole(&part) != (of, min_pass) {
            return Err(MergeError::SplitMismatch {
                file: key.file,
                name: key.name,
                first: first_file,
                second: file,
            });
        }
        let numbers: Vec<u32> = part.numbered_runs().map(|(n, _)| n).collect();
        if let Some(bad) = numbers.iter().find(|&&n| n == 0 || n > of) {
            return Err(invalid(&file, format!("it holds run {bad} of {of}")));
        }
        for (number, run) in numbers.into_iter().zip(part.runs) {
            if let Some((earlier, _)) = runs.get(&number) {
                return Err(MergeError::DuplicateRun {
                    file: key.file,
                    name: key.name,
                    run: number,
                    first: earlier.clone(),
                    second: file,
                });
            }
            runs.insert(number, (file.clone(), run));
        }
    }
    let all: Vec<TestResult> = (1..=of)
        .map(|number| match runs.remove(&number) {
            Some((_, run)) => run,
            None => {
                let mut run = blank.clone();
                run.error = Some(format!(
                    "run {number} of {of} is in none of the merged results: its shard did not report it"
                ));
                run
            }
        })
        .collect();
    Ok(crate::verdict::repeat::aggregate_split(
        all,
        (1..=of).collect(),
        of,
        min_pass,
    ))
}

/// A run of a split test that no shard's results hold (its shard was cut before it
/// reported): an `error` run, never a pass, with nothing of `template` (another run of it)
/// but its identity. The caller says which run it is.
fn missing_run(template: &TestResult) -> TestResult {
    TestResult {
        prompt: template.prompt.clone(),
        agent_id: template.agent_id,
        variant: template.variant.clone(),
        error_kind: Some(crate::verdict::results::ErrorKind::Interrupted),
        ..TestResult::new(
            template.name.clone(),
            template.file.clone(),
            crate::verdict::results::TestStatus::Error,
        )
    }
}

fn check_shards(inputs: &[(String, Results)]) -> Result<(), MergeError> {
    let sharded: Vec<(&str, &ShardInfo)> = inputs
        .iter()
        .filter_map(|(n, r)| r.shard.as_ref().map(|s| (n.as_str(), s)))
        .collect();
    let Some((first, info)) = sharded.first() else {
        return Ok(());
    };
    if let Some((other, _)) = inputs.iter().find(|(_, r)| r.shard.is_none()) {
        return Err(MergeError::MixedSharding {
            sharded: (*first).to_owned(),
            shard: info.label(),
            other: other.clone(),
        });
    }
    let mut by_index: BTreeMap<u32, &str> = BTreeMap::new();
    for (name, s) in &sharded {
        let split = |s: &ShardInfo| (s.count, s.tests, s.balanced_by, s.runs, s.baseline.clone());
        if split(s) != split(info) {
            return Err(MergeError::ShardMismatch {
                first: (*first).to_owned(),
                first_shard: info.label(),
                other: (*name).to_owned(),
                other_shard: s.label(),
            });
        }
        if let Some(earlier) = by_index.insert(s.index, name) {
            return Err(MergeError::SameShard {
                first: earlier.to_owned(),
                second: (*name).to_owned(),
                shard: s.label(),
            });
        }
    }
    let missing: Vec<u32> = (1..=info.count)
        .filter(|i| !by_index.contains_key(i))
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::MissingShards {
            missing,
            count: info.count,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(keys: &[TestKey]) -> Vec<Unit> {
        keys.iter().flat_map(|k| Unit::of(k.clone(), 1)).collect()
    }

    fn key(i: usize) -> TestKey {
        TestKey {
            file: format!("tests/t{}.aptitude.yaml", i / 3),
            name: format!("test {i}"),
            agent: AgentKind::ALL[i % AgentKind::ALL.len()],
            variant: None,
            agent_version: None,
        }
    }

    /// A small deterministic generator: the property tests need no randomness crate, and a
    /// failure reproduces.
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *seed >> 33
    }

    #[test]
    fn shard_syntax_and_range() {
        assert_eq!("2/3".parse::<Shard>(), Shard::new(2, 3));
        assert_eq!(
            " 1 / 1 ".parse::<Shard>().map(|s| s.to_string()),
            Ok("1/1".into())
        );
        assert_eq!("0/3".parse::<Shard>(), Err(ShardError::Zero { count: 3 }));
        assert_eq!(
            "4/3".parse::<Shard>(),
            Err(ShardError::OutOfRange { index: 4, count: 3 })
        );
        assert_eq!("1/0".parse::<Shard>(), Err(ShardError::NoShards));
        for garbage in [
            "",
            "2",
            "a/b",
            "2/3/4",
            "-1/3",
            "+1/3",
            "1.5/3",
            "1/",
            "/3",
            "99999999999/3",
        ] {
            assert_eq!(
                garbage.parse::<Shard>(),
                Err(ShardError::Syntax),
                "{garbage:?}"
            );
        }
        assert!(ShardError::Zero { count: 3 }.hint().contains("1/3"));
        assert!(
            ShardError::OutOfRange { index: 4, count: 3 }
                .hint()
                .contains("3/3")
        );
    }

    #[test]
    fn the_hash_is_stable_across_versions_and_platforms() {
        // Shard jobs of different aptitude builds must agree: this value may never change.
        let k = TestKey {
            file: "examples/counter/counter.aptitude.yaml".into(),
            name: "Reads files with the Read tool".into(),
            agent: AgentKind::Claude,
            variant: None,
            agent_version: None,
        };
        assert_eq!(k.stable_hash(), 0x0152_c4fe_18f4_a00b);
        let other_agent = TestKey {
            agent: AgentKind::Codex,
            ..k.clone()
        };
        assert_ne!(k.stable_hash(), other_agent.stable_hash());
        let other_release = TestKey {
            agent_version: Some("2.1.300".into()),
            ..k.clone()
        };
        assert_ne!(k.stable_hash(), other_release.stable_hash());
    }

    /// The property the matrix relies on: for any N and any suite, with or without a
    /// baseline, every test is in exactly one shard, and the split does not depend on the
    /// order the tests were found in.
    #[test]
    fn every_test_lands_in_exactly_one_shard() {
        let mut seed = 17;
        for n in 1..=24u32 {
            for size in [0usize, 1, 2, 5, 23, 64, 150] {
                let keys: Vec<TestKey> = (0..size).map(key).collect();
                let mut baseline: HashMap<TestKey, u64> = HashMap::new();
                for k in &keys {
                    // A quarter of the tests are new since the baseline.
                    if !lcg(&mut seed).is_multiple_of(4) {
                        baseline.insert(k.clone(), lcg(&mut seed) % 600_000);
                    }
                }
                for durations in [None, Some(&baseline)] {
                    let mut owner: Vec<Option<u32>> = vec![None; size];
                    for k in 1..=n {
                        let shard = Shard::new(k, n).unwrap();
                        for i in select(&units(&keys), shard, durations) {
                            assert_eq!(owner[i], None, "test {i} in two shards (N={n})");
                            owner[i] = Some(k);
                        }
                    }
                    assert!(
                        owner.iter().all(Option::is_some),
                        "a test in no shard (N={n})"
                    );

                    let mut reversed = keys.clone();
                    reversed.reverse();
                    let forward = assign(&units(&keys), n, durations);
                    let backward = assign(&units(&reversed), n, durations);
                    for (i, s) in forward.iter().enumerate() {
                        assert_eq!(*s, backward[size - 1 - i], "order matters (N={n})");
                    }
                }
            }
        }
    }

    #[test]
    fn without_a_baseline_shards_differ_by_at_most_one_test() {
        for n in 1..=16u32 {
            for size in [0usize, 3, 16, 17, 100] {
                let keys: Vec<TestKey> = (0..size).map(key).collect();
                let mut counts = vec![0usize; n as usize];
                for s in assign(&units(&keys), n, None) {
                    counts[s as usize] += 1;
                }
                let (min, max) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
                assert!(max - min <= 1, "N={n} size={size}: {counts:?}");
            }
        }
    }

    /// Longest first into the least-loaded shard: no shard exceeds the mean load by more
    /// than one test's duration (the greedy bound), and a long test is never stacked onto
    /// another long one while a shard is idle.
    #[test]
    fn a_baseline_balances_by_duration() {
        let mut seed = 5;
        for n in 2..=8u32 {
            let keys: Vec<TestKey> = (0..40).map(key).collect();
            let durations: HashMap<TestKey, u64> = keys
                .iter()
                .map(|k| (k.clone(), 1 + lcg(&mut seed) % 100_000))
                .collect();
            let mut loads = vec![0u64; n as usize];
            for (i, s) in assign(&units(&keys), n, Some(&durations))
                .into_iter()
                .enumerate()
            {
                loads[s as usize] += durations[&keys[i]];
            }
            let total: u64 = loads.iter().sum();
            let longest = durations.values().max().copied().unwrap();
            let max = loads.iter().max().copied().unwrap();
            assert!(max <= total / u64::from(n) + longest, "N={n}: {loads:?}");
        }
        // Two long tests and four short ones in two shards: one long test each.
        let keys: Vec<TestKey> = (0..6).map(key).collect();
        let durations: HashMap<TestKey, u64> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), if i < 2 { 1_000 } else { 10 }))
            .collect();
        let shards = assign(&units(&keys), 2, Some(&durations));
        assert_ne!(shards[0], shards[1], "{shards:?}");
        // A test the baseline lacks weighs the mean of the known ones, not nothing.
        let mut partial = durations.clone();
        partial.remove(&keys[0]);
        let shards = assign(&units(&keys), 2, Some(&partial));
        let mut loads = [0u64; 2];
        for (i, s) in shards.iter().enumerate() {
            loads[*s as usize] += partial.get(&keys[i]).copied().unwrap_or(208);
        }
        assert!(loads[0].abs_diff(loads[1]) <= 1_000, "{loads:?}");
    }

    #[test]
    fn a_repeated_test_is_split_run_by_run() {
        // A test that runs once hashes as before runs could be split: splits made by an
        // older aptitude and this one agree.
        let k = key(0);
        assert_eq!(Unit::of(k.clone(), 1)[0].stable_hash(), k.stable_hash());
        let runs = Unit::of(k.clone(), 6);
        assert_eq!(runs.len(), 6);
        let first = runs[0].stable_hash();
        assert_ne!(first, k.stable_hash());
        // Pinned like the test's own hash: shard jobs of different builds must agree.
        assert_eq!(first, 0xe6fb_8687_098d_540a);
        // Six runs of one test and one other test over three shards: every run in exactly
        // one shard, two or three units in each.
        let mut all = runs.clone();
        all.extend(Unit::of(key(1), 1));
        let shards = assign(&all, 3, None);
        let mut per_shard = [0usize; 3];
        for s in &shards {
            per_shard[*s as usize] += 1;
        }
        assert!(per_shard.iter().all(|&n| n == 2 || n == 3), "{per_shard:?}");
        let mut seen = std::collections::HashSet::new();
        for k in 1..=3 {
            for i in select(&all, Shard::new(k, 3).unwrap(), None) {
                assert!(seen.insert(i), "unit {i} in two shards");
            }
        }
        assert_eq!(seen.len(), all.len());
        // By a baseline's durations: one run weighs the test's mean run.
        let durations: HashMap<TestKey, u64> = [(k.clone(), 1_000), (key(1), 3_000)].into();
        let shards = assign(&all, 3, Some(&durations));
        let mut loads = [0u64; 3];
        for (u, s) in all.iter().zip(&shards) {
            loads[*s as usize] += durations[&u.key];
        }
        assert_eq!(loads, [3_000; 3], "{shards:?}");
    }

    fn result(name: &str, status: &str, runs: u32, min_pass: u32) -> TestResult {
        let one = |status: &str| -> TestResult {
            serde_json::from_value(serde_json::json!({
                "name": name, "file": "t.aptitude.yaml", "status": status,
                "duration_ms": 100, "usage": null, "error": null, "assertions": [],
                "agent_id": "claude"
            }))
            .unwrap()
        };
        if runs == 1 {
            return one(status);
        }
        let all: Vec<TestResult> = (0..runs).map(|_| one(status)).collect();
        crate::verdict::repeat::aggregate(all, min_pass)
    }

    /// The part of `whole` (a repeated test's result) holding runs `numbers`.
    fn part(whole: &TestResult, numbers: &[u32]) -> TestResult {
        let runs: Vec<TestResult> = numbers
            .iter()
            .map(|n| whole.runs[*n as usize - 1].clone())
            .collect();
        let r = whole.repeat.as_ref().unwrap();
        crate::verdict::repeat::aggregate_split(runs, numbers.to_vec(), r.runs, r.min_pass)
    }

    /// Shard `index` of 2 of a run of `of` tests, holding `tests`.
    fn shard_file(index: u32, of: u32, tests: Vec<TestResult>) -> (String, Results) {
        let mut r = Results::new(tests, 1_000);
        r.shard = Some(ShardInfo {
            index,
            count: 2,
            tests: of,
            balanced_by: crate::verdict::results::BalancedBy::Hash,
            runs: Some(5),
            baseline: None,
        });
        (format!("shard-{index}.json"), r)
    }

    #[test]
    fn the_runs_of_a_split_test_merge_into_one_verdict() {
        // 4 runs, 3 needed: runs 1 and 3 failed, in different shards. Neither shard can
        // decide; the merge fails it.
        let mut whole = result("flaky", "passed", 4, 3);
        for n in [0, 2] {
            whole.runs[n].status = crate::verdict::results::TestStatus::Failed;
        }
        let (a, b) = (part(&whole, &[1, 2]), part(&whole, &[3, 4]));
        use crate::verdict::results::{SkipReason, TestStatus};
        for p in [&a, &b] {
            assert_eq!(p.status, TestStatus::Skipped, "a shard does not decide it");
            assert_eq!(p.skip_reason, Some(SkipReason::Shard));
            assert!(p.repeat.as_ref().unwrap().headline().contains("of 4 here"));
        }
        let other = result("once", "passed", 1, 1);
        let merged = merge(vec![
            shard_file(2, 2, vec![b.clone()]),
            shard_file(1, 2, vec![a.clone(), other.clone()]),
        ])
        .unwrap();
        let tests = &merged.tests;
        assert_eq!(tests.len(), 2);
        let joined = tests.iter().find(|t| t.name == "flaky").unwrap();
        assert_eq!(joined.status, TestStatus::Failed);
        let stats = joined.repeat.as_ref().unwrap();
        assert_eq!((stats.runs, stats.passed, stats.failed), (4, 2, 2));
        assert!(stats.split.is_none() && stats.flaky);
        assert_eq!(joined.runs.len(), 4);
        assert_eq!(
            joined.runs[2].status,
            TestStatus::Failed,
            "run 3 in its place"
        );
        assert_eq!(merged.summary.total, 2);
        assert_eq!(merged.summary.failed, 1);

        // Two passing runs in one shard already decide `passed` there.
        let mut good = result("good", "passed", 4, 2);
        good.runs[3].status = TestStatus::Failed;
        assert_eq!(part(&good, &[1, 2]).status, TestStatus::Passed);
        // Two failures of 4 with 3 needed decide `failed` in one shard.
        assert_eq!(part(&whole, &[1, 3]).status, TestStatus::Failed);
    }

    #[test]
    fn a_run_no_shard_reported_is_an_error_and_a_run_in_two_shards_is_refused() {
        use crate::verdict::results::TestStatus;
        let whole = result("t", "passed", 3, 1);
        // Run 3 is nowhere (its shard was cut): the merged test holds it as an error run,
        // and passes only because runs 1 and 2 reach min_pass 1 on their own.
        let merged = merge(vec![
            shard_file(1, 1, vec![part(&whole, &[1])]),
            shard_file(2, 1, vec![part(&whole, &[2])]),
        ])
        .unwrap();
        let t = &merged.tests[0];
        assert_eq!(t.status, TestStatus::Passed);
        assert_eq!(t.runs.len(), 3);
        assert_eq!(t.runs[2].status, TestStatus::Error);
        assert!(
            t.runs[2]
                .error
                .as_deref()
                .unwrap()
                .contains("run 3 of 3 is in none of the merged results")
        );
        // With every run needed, the missing run makes the test an error, never a pass.
        let strict = result("t", "passed", 3, 3);
        let merged = merge(vec![
            shard_file(1, 1, vec![part(&strict, &[1])]),
            shard_file(2, 1, vec![part(&strict, &[2])]),
        ])
        .unwrap();
        assert_eq!(merged.tests[0].status, TestStatus::Error);

        let twice = merge(vec![
            shard_file(1, 1, vec![part(&whole, &[1, 2])]),
            shard_file(2, 1, vec![part(&whole, &[2, 3])]),
        ]);
        assert!(
            matches!(twice, Err(MergeError::DuplicateRun { run: 2, .. })),
            "{twice:?}"
        );
        let other = result("t", "passed", 4, 1);
        let mismatch = merge(vec![
            shard_file(1, 1, vec![part(&whole, &[1])]),
            shard_file(2, 1, vec![part(&other, &[2, 3, 4])]),
        ]);
        assert!(
            matches!(mismatch, Err(MergeError::SplitMismatch { .. })),
            "{mismatch:?}"
        );
        // A whole test in one file and part of it in another is still two copies.
        let dup = merge(vec![
            shard_file(1, 1, vec![whole.clone()]),
            shard_file(2, 1, vec![part(&whole, &[3])]),
        ]);
        assert!(matches!(dup, Err(MergeError::Duplicate { .. })), "{dup:?}");
    }

    #[test]
    fn shards_balanced_by_different_baselines_are_not_merged() {
        let a: HashMap<TestKey, u64> = [(key(0), 1_000)].into();
        let b: HashMap<TestKey, u64> = [(key(0), 2_000)].into();
        assert_ne!(baseline_id(&a), baseline_id(&b));
        assert_eq!(baseline_id(&a), baseline_id(&a.clone()));
        assert_eq!(baseline_id(&a).len(), 16);
        let mut one = shard_file(1, 2, vec![result("x", "passed", 1, 1)]);
        let mut two = shard_file(2, 2, vec![result("y", "passed", 1, 1)]);
        for (f, id) in [(&mut one, &a), (&mut two, &b)] {
            let info = f.1.shard.as_mut().unwrap();
            info.balanced_by = crate::verdict::results::BalancedBy::Duration;
            info.baseline = Some(baseline_id(id));
        }
        let refused = merge(vec![one, two]);
        assert!(
            matches!(refused, Err(MergeError::ShardMismatch { .. })),
            "{refused:?}"
        );
    }

    #[test]
    fn a_lost_test_and_a_budget_skip_never_merge_into_a_pass() {
        use crate::verdict::results::{BudgetSummary, SkipReason};
        let lost = merge(vec![
            shard_file(1, 2, vec![result("x", "passed", 1, 1)]),
            shard_file(2, 2, vec![]),
        ]);
        assert!(
            matches!(
                lost,
                Err(MergeError::TestCount {
                    held: 1,
                    expected: 2
                })
            ),
            "{lost:?}"
        );
        // A shard cut by its cost ceiling: the merged run is not all passed, and the
        // ceilings and spend add up.
        let budget = |spent: f64, skipped: u32| BudgetSummary {
            max_cost_usd: Some(1.0),
            max_tokens: None,
            spent_cost_usd: spent,
            spent_tokens: 10,
            skipped_runs: skipped,
        };
        let mut skipped = result("y", "skipped", 1, 1);
        skipped.skip_reason = Some(SkipReason::Budget);
        let mut one = shard_file(1, 2, vec![result("x", "passed", 1, 1)]);
        one.1.summary.budget = Some(budget(0.5, 0));
        let mut two = shard_file(2, 2, vec![skipped]);
        two.1.summary.budget = Some(budget(1.25, 1));
        let merged = merge(vec![one, two]).unwrap();
        assert!(!merged.all_passed());
        let b = merged.summary.budget.clone().unwrap();
        assert_eq!((b.skipped_runs, b.spent_tokens), (1, 20));
        assert_eq!((b.spent_cost_usd, b.max_cost_usd), (1.75, Some(2.0)));
        // The skipped test says it even where the summary's budget is gone.
        let mut no_budget = merged.clone();
        no_budget.summary.budget = None;
        assert!(!no_budget.all_passed());
    }

    /// An edited or hostile results file can not make `merge` invent runs: a part of a
    /// split test must fit the limits of a test.
    #[test]
    fn a_split_part_out_of_bounds_is_refused() {
        let whole = result("t", "passed", 3, 1);
        let mut huge = part(&whole, &[1]);
        huge.repeat.as_mut().unwrap().split.as_mut().unwrap().of = 4_000_000_000;
        let refused = merge(vec![
            shard_file(1, 1, vec![huge]),
            shard_file(2, 1, vec![part(&whole, &[2, 3])]),
        ]);
        assert!(
            matches!(&refused, Err(MergeError::InvalidSplit { why, .. }) if why.contains("4000000000 runs")),
            "{refused:?}"
        );
        let mut beyond = part(&whole, &[2, 3]);
        beyond
            .repeat
            .as_mut()
            .unwrap()
            .split
            .as_mut()
            .unwrap()
            .numbers = vec![2, 7];
        let refused = merge(vec![
            shard_file(1, 1, vec![part(&whole, &[1])]),
            shard_file(2, 1, vec![beyond]),
        ]);
        assert!(
            matches!(&refused, Err(MergeError::InvalidSplit { why, .. }) if why.contains("run 7 of 3")),
            "{refused:?}"
        );
    }
}
