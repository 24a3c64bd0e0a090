//! `run --replay RESULTS.json`: each run of a test answered from the cassette its recorded
//! result references (`model_traffic.cassette`, written by `run --record-model`).
//!
//! The agent runs for real — workspace copy, setup, the agent CLI with its tools, verify
//! commands, every assertion — while the model gateway answers its model requests from the
//! cassette. A test whose recorded run has no cassette (it was not recorded, it did not go
//! through the gateway) is `error`, saying so; a cassette file that is missing or is not
//! the one the results reference likewise. Cassettes are read once and shared by the runs
//! that use them.
//!
//! Grading is answered like `--reuse` answers it ([`crate::run::reuse`]): the grades and
//! claims the replayed results recorded, by their cache keys — a replay gives the same
//! answer, so its reviews cost no judge call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::assertions::judge::cache::CachedGrade;
use crate::assertions::judge::claims::Claim;
use crate::gateway::cassette::{Cassette, CassetteRef};
use crate::gateway::{ReplayMiss, Replaying};
use crate::spec::TestSpec;
use crate::verdict::results::{Results, TestKey, TestResult};

/// The recorded runs of a results file, by test and run number.
#[derive(Debug)]
pub struct Replay {
    /// The results file, as given.
    pub from: String,
    /// Its directory: cassette references are relative to it.
    dir: PathBuf,
    runs: BTreeMap<(TestKey, u32), Option<CassetteRef>>,
    loaded: Mutex<BTreeMap<String, Arc<Cassette>>>,
    /// What a request the cassette does not hold gets (`--replay-miss`).
    miss: ReplayMiss,
    /// The grades the results recorded, by cache key.
    pub grades: BTreeMap<String, CachedGrade>,
    /// The claims the results recorded, by cache key.
    pub claims: BTreeMap<String, Vec<Claim>>,
}

/// A run's cassette reference, when its result has one.
fn reference(run: &TestResult) -> Option<CassetteRef> {
    run.model_traffic.as_ref().and_then(|t| t.cassette.clone())
}

impl Replay {
    /// The recorded runs of `results`, read from the file at `path`, replayed with `miss`.
    pub fn new(results: &Results, path: &Path, miss: ReplayMiss) -> Self {
        let mut runs = BTreeMap::new();
        for test in &results.tests {
            let key = test.key();
            if test.runs.is_empty() {
                runs.insert((key, 1), reference(test));
            } else {
                for (number, run) in test.numbered_runs() {
                    runs.insert((key.clone(), number), reference(run));
                }
            }
        }
        Replay {
            from: path.display().to_string(),
            dir: path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_owned(),
            runs,
            loaded: Mutex::default(),
            miss,
            grades: crate::run::reuse::grades_of(&mut results.tests.iter()),
            claims: crate::run::reuse::claims_of(&mut results.tests.iter()),
        }
    }

    /// How run `run` (1-based) of `spec` is replayed: its cassette, with `--replay-miss`.
    ///
    /// # Errors
    /// As [`Replay::cassette_for`].
    pub fn replaying(&self, spec: &TestSpec, run: u32) -> Result<Replaying, NoCassette> {
        Ok(Replaying {
            cassette: self.cassette_for(spec, run)?,
            miss: self.miss,
        })
    }

    /// Whether the results hold a cassette for run `run` (1-based) of `spec`.
    pub fn has(&self, spec: &TestSpec, run: u32) -> bool {
        matches!(self.runs.get(&(TestKey::of_spec(spec), run)), Some(Some(_)))
    }

    /// The cassette of run `run` (1-based) of `spec`.
    ///
    /// # Errors
    /// [`NoCassette`]: the test or run is not in the results, it was not recorded, or its
    /// file can not be read.
    pub fn cassette_for(&self, spec: &TestSpec, run: u32) -> Result<Arc<Cassette>, NoCassette> {
        let reference = match self.runs.get(&(TestKey::of_spec(spec), run)) {
            None => {
                return Err(NoCassette::NoRun {
                    results: self.from.clone(),
                    run,
                });
            }
            Some(None) => {
                return Err(NoCassette::NotRecorded {
                    results: self.from.clone(),
                });
            }
            Some(Some(r)) => r,
        };
        let mut loaded = self
            .loaded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(c) = loaded.get(&reference.sha256) {
            return Ok(Arc::clone(c));
        }
        let cassette = Arc::new(Cassette::read(&self.dir, reference)?);
        loaded.insert(reference.sha256.clone(), Arc::clone(&cassette));
        Ok(cassette)
    }
}

/// Why a run of `run --replay` has no cassette to replay (the run is then `error`, kind
/// `setup`).
#[derive(Debug, thiserror::Error)]
pub enum NoCassette {
    /// The results have no such run of this test.
    #[error("can not replay: {results} has no run {run} of this test")]
    NoRun {
        /// The results file.
        results: String,
        /// The run, from 1.
        run: u32,
    },
    /// The run was not recorded.
    #[error(
        "can not replay: {results} recorded no model exchange for this run (it was run without --record-model, or not through the model gateway)"
    )]
    NotRecorded {
        /// The results file.
        results: String,
    },
    /// Its cassette can not be read.
    #[error("can not replay: {0}")]
    Unreadable(#[from] crate::gateway::cassette::CassetteError),
}
