//! Shards: one run split across jobs (`aptitude run --shard K/N`), and the jobs' results
//! put back together (`aptitude merge`).
//!
//! Splitting is a pure function of the tests' identities — (test file, name, agent), after
//! tests are split per agent — and, optionally, of their durations in a baseline run. N jobs
//! that see the same tests (and the same baseline) therefore agree on who runs what without
//! talking to each other, whatever order they discover the tests in: every test lands in
//! exactly one shard.
//!
//! Both ways use the one algorithm: tests are taken longest first (a baseline's duration;
//! the mean of the known durations for a test the baseline does not have; the same weight
//! for every test without a baseline), ties broken by a stable hash of the identity, and
//! each goes into the shard with the least load so far (the lowest-numbered on a tie). With
//! equal weights that deals the tests round-robin in hash order, so shards differ by at
//! most one test.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

use crate::agent_kind::AgentKind;
use crate::results::{Results, ShardInfo, Summary};

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

/// A test's identity across runs and shards: its test file as results record it
/// (`TestResult::file`), its name, and the agent it runs on.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TestKey {
    /// The test file, as given or discovered (`examples/x.aptitude.yaml`).
    pub file: String,
    /// The test's `name`.
    pub name: String,
    /// The agent.
    pub agent: AgentKind,
    /// The variant, for tests that declare variants (`default` is the test as written).
    pub variant: Option<String>,
}

impl TestKey {
    /// A hash of the identity that is the same on every platform and in every aptitude
    /// version: the first 8 bytes of SHA-256 over `file`, `name`, the agent's name and
    /// (when there is one) the variant, each followed by a NUL byte.
    pub fn stable_hash(&self) -> u64 {
        let mut h = Sha256::new();
        let parts = [self.file.as_str(), self.name.as_str(), self.agent.name()];
        for part in parts.into_iter().chain(self.variant.as_deref()) {
            h.update(part.as_bytes());
            h.update([0]);
        }
        let digest = h.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        u64::from_be_bytes(first)
    }
}

/// Each test's shard, 0-based, in the order of `keys`. `durations` (ms per test, from a
/// baseline) balances the shards by time; see the module documentation for the algorithm.
/// The result depends on the set of keys, not on their order.
pub fn assign(keys: &[TestKey], count: u32, durations: Option<&HashMap<TestKey, u64>>) -> Vec<u32> {
    let count = count.max(1);
    let known: Vec<u64> = match durations {
        Some(d) => keys.iter().filter_map(|k| d.get(k).copied()).collect(),
        None => Vec::new(),
    };
    // A test the baseline does not know costs what an average known test costs.
    let fallback = if known.is_empty() {
        1
    } else {
        (known.iter().map(|&d| u128::from(d)).sum::<u128>() / known.len() as u128) as u64
    }
    .max(1);
    let weights: Vec<u64> = keys
        .iter()
        .map(|k| {
            durations
                .and_then(|d| d.get(k).copied())
                .unwrap_or(fallback)
                .max(1)
        })
        .collect();
    let hashes: Vec<u64> = keys.iter().map(TestKey::stable_hash).collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| {
        weights[b]
            .cmp(&weights[a])
            .then(hashes[a].cmp(&hashes[b]))
            .then_with(|| keys[a].cmp(&keys[b]))
    });
    // (load in ms or tests, tests) per shard.
    let mut loads = vec![(0u64, 0usize); count as usize];
    let mut shard_of = vec![0u32; keys.len()];
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

/// The positions in `keys` of the tests that `shard` runs, in their original order.
pub fn select(
    keys: &[TestKey],
    shard: Shard,
    durations: Option<&HashMap<TestKey, u64>>,
) -> Vec<usize> {
    assign(keys, shard.count(), durations)
        .into_iter()
        .enumerate()
        .filter(|(_, s)| *s + 1 == shard.index())
        .map(|(i, _)| i)
        .collect()
}

/// The durations a baseline run recorded, per test (summed when a test ran several times).
pub fn durations(baseline: &Results) -> HashMap<TestKey, u64> {
    let mut d: HashMap<TestKey, u64> = HashMap::new();
    for t in &baseline.tests {
        let key = TestKey {
            file: t.file.clone(),
            name: t.name.clone(),
            agent: t.agent_id.unwrap_or(AgentKind::Claude),
            variant: t.variant.clone(),
        };
        let slot = d.entry(key).or_default();
        *slot = slot.saturating_add(t.duration_ms);
    }
    d
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
    /// Two files are shards of different splits.
    #[error(
        "{first} is shard {first_shard} but {other} is shard {other_shard} of another split (shards of one run have the same N, test count and balancing)"
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
    /// Shards of the run are missing.
    #[error("shard{} {} of {count} {} missing: merge the results of every shard job", if missing.len() == 1 { "" } else { "s" }, list(missing), if missing.len() == 1 { "is" } else { "are" })]
    MissingShards {
        /// The missing shards' numbers.
        missing: Vec<u32>,
        /// N.
        count: u32,
    },
}

fn list(numbers: &[u32]) -> String {
    let words: Vec<String> = numbers.iter().map(u32::to_string).collect();
    match words.as_slice() {
        [] => String::new(),
        [one] => (*one).clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Results merged from several files, and what deserves a warning.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The merged results.
    pub results: Results,
    /// Things that did not stop the merge but may mean something is off.
    pub warnings: Vec<String>,
}

/// Merges results files (`(name for messages, results)`) into one run: the tests of every
/// file, ordered by test file (stably, so each file's own order is kept within a test
/// file), with counts and usage recomputed from them and the durations summed (the
/// merged `duration_ms` is the time the jobs took together, not the wall time).
///
/// The merged file has the inputs' `aptitude_version` when they agree (else this
/// aptitude's), the first input's `run_dir`, and no `shard`.
///
/// # Errors
/// No inputs; differing results versions; a test (file, name, agent) in two files; files
/// that are shards of different splits, the same shard twice, a mix of sharded and
/// unsharded files, or missing shards.
pub fn merge(inputs: Vec<(String, Results)>) -> Result<Merged, MergeError> {
    let Some((first_name, first)) = inputs.first() else {
        return Err(MergeError::Empty);
    };
    let mut warnings = Vec::new();
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
    check_shards(&inputs, &mut warnings)?;

    let mut seen: HashMap<TestKey, &str> = HashMap::new();
    for (name, r) in &inputs {
        // Within one file a test may repeat (runs of one test); across files it may not.
        let mut here: HashMap<TestKey, ()> = HashMap::new();
        for t in &r.tests {
            let key = TestKey {
                file: t.file.clone(),
                name: t.name.clone(),
                agent: t.agent_id.unwrap_or(AgentKind::Claude),
                variant: t.variant.clone(),
            };
            if let Some(other) = seen.get(&key)
                && !here.contains_key(&key)
            {
                return Err(MergeError::Duplicate {
                    file: key.file,
                    name: key.name,
                    agent: key.agent,
                    first: (*other).to_owned(),
                    second: name.clone(),
                });
            }
            here.insert(key.clone(), ());
            seen.insert(key, name);
        }
    }

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
    let mut by_file: BTreeMap<String, Vec<crate::results::TestResult>> = BTreeMap::new();
    for (_, r) in inputs {
        for t in r.tests {
            by_file.entry(t.file.clone()).or_default().push(t);
        }
    }
    let tests: Vec<_> = by_file.into_values().flatten().collect();
    let summary = Summary::of(&tests, duration_ms);
    Ok(Merged {
        results: Results {
            version,
            aptitude_version,
            run_dir,
            shard: None,
            tests,
            summary,
        },
        warnings,
    })
}

fn check_shards(
    inputs: &[(String, Results)],
    warnings: &mut Vec<String>,
) -> Result<(), MergeError> {
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
        if (s.count, s.tests, &s.balanced_by) != (info.count, info.tests, &info.balanced_by) {
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
    let held: usize = inputs.iter().map(|(_, r)| r.tests.len()).sum();
    if held != info.tests as usize {
        warnings.push(format!(
            "the shards hold {held} test results but the run had {} tests (an interrupted shard reports only the tests that finished)",
            info.tests
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: usize) -> TestKey {
        TestKey {
            file: format!("tests/t{}.aptitude.yaml", i / 3),
            name: format!("test {i}"),
            agent: AgentKind::ALL[i % AgentKind::ALL.len()],
            variant: None,
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
        };
        assert_eq!(k.stable_hash(), 0x0152_c4fe_18f4_a00b);
        let other_agent = TestKey {
            agent: AgentKind::Codex,
            ..k.clone()
        };
        assert_ne!(k.stable_hash(), other_agent.stable_hash());
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
                        for i in select(&keys, shard, durations) {
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
                    let forward = assign(&keys, n, durations);
                    let backward = assign(&reversed, n, durations);
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
                for s in assign(&keys, n, None) {
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
            for (i, s) in assign(&keys, n, Some(&durations)).into_iter().enumerate() {
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
        let shards = assign(&keys, 2, Some(&durations));
        assert_ne!(shards[0], shards[1], "{shards:?}");
        // A test the baseline lacks weighs the mean of the known ones, not nothing.
        let mut partial = durations.clone();
        partial.remove(&keys[0]);
        let shards = assign(&keys, 2, Some(&partial));
        let mut loads = [0u64; 2];
        for (i, s) in shards.iter().enumerate() {
            loads[*s as usize] += partial.get(&keys[i]).copied().unwrap_or(208);
        }
        assert!(loads[0].abs_diff(loads[1]) <= 1_000, "{loads:?}");
    }
}
