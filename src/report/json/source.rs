//! Where the file formats read each test whole: from the results in memory (a run that just
//! finished), or one chunk at a time from a results file on disk (`aptitude report`,
//! `aptitude merge`), so that a big suite's report never holds every test's detail at once.
//!
//! A report is rendered from two things: the results with each test's verdicts and figures
//! ([`Results`], the tests perhaps without their run detail, see
//! [`TestResult::without_run_detail`]), for the page's summary, tables and counts; and a
//! [`TestSource`], read a few tests at a time in order, for what each test shows whole (its
//! run views, JUnit's `system-out`, the results JSON with its blob pack). Test `i` of both is
//! the same test.
//!
//! At 5,000 tests × 3 runs the results file's tests whole are about 1.5 GiB in memory; read
//! this way, `report` and `merge` stay within 256 MiB (`cargo bench --bench merge_report`).

use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::{self as json, JsonError};
use crate::shared::redact::Redactor;
use crate::verdict::results::stream::Span;
use crate::verdict::results::{Results, TestResult};

/// How many tests a reader asks a [`TestSource`] for at a time: the HTML report's packed
/// chunk ([`crate::report::html`]), and few enough that their detail is a few MiB.
pub const CHUNK: usize = 32;

/// Each test whole, by its index in the results: `tests(a..b)` is tests `a` to `b - 1`.
pub trait TestSource: Sync {
    /// How many tests there are.
    fn len(&self) -> usize;

    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Tests `range`, whole (with their run detail), redacted as the results are.
    ///
    /// # Errors
    /// [`SourceError`]: a range past the end, a test that can not be read again from its
    /// file (it changed since), or one that can not be put together again.
    fn tests(&self, range: Range<usize>) -> Result<Cow<'_, [TestResult]>, SourceError>;

    /// Every test whole, when they are all in memory already (a run that just finished):
    /// a reader that needs them all at once takes them here rather than copying them.
    fn in_memory(&self) -> Option<&[TestResult]> {
        None
    }
}

/// Why tests could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The results file could not be read again.
    #[error(transparent)]
    Read(#[from] JsonError),
    /// A test could not be redacted (it does not round-trip through JSON).
    #[error("a test could not be redacted: {0}")]
    Redact(#[source] serde_json::Error),
    /// A test could not be put together from its parts (`merge`: the parts of a split test).
    #[error(transparent)]
    Join(Box<dyn std::error::Error + Send + Sync>),
    /// A thread reading tests ahead stopped before it sent them (it panicked: a bug).
    #[error("a thread reading the results stopped (a bug in aptitude, printed above)")]
    ReaderStopped,
    /// Tests past the end were asked for (a bug).
    #[error("tests {}..{} asked for, but there are {len}", range.start, range.end)]
    OutOfRange {
        /// What was asked for.
        range: Range<usize>,
        /// How many tests there are.
        len: usize,
    },
}

/// Tests in memory (a run that just finished): each is already whole.
impl TestSource for Vec<TestResult> {
    fn len(&self) -> usize {
        Vec::len(self)
    }

    fn tests(&self, range: Range<usize>) -> Result<Cow<'_, [TestResult]>, SourceError> {
        let len = Vec::len(self);
        self.get(range.clone())
            .map(Cow::Borrowed)
            .ok_or(SourceError::OutOfRange { range, len })
    }

    fn in_memory(&self) -> Option<&[TestResult]> {
        Some(self)
    }
}

/// Calls `each` on every test of `source` in order, whole, [`CHUNK`] tests at a time; stops
/// at the first error, its own or the source's. The chunks are read ahead on a thread per
/// core (reading a test again — its JSON, its blobs inflated, redaction — is most of the
/// work), each thread at most one chunk ahead of `each`.
///
/// # Errors
/// The source's error, or `each`'s converted into it.
pub fn for_each<E: From<SourceError>>(
    source: &dyn TestSource,
    mut each: impl FnMut(usize, &TestResult) -> Result<(), E>,
) -> Result<(), E> {
    let len = source.len();
    let chunks: Vec<Range<usize>> = (0..len)
        .step_by(CHUNK)
        .map(|start| start..(start + CHUNK).min(len))
        .collect();
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(4)
        .min(chunks.len());
    if threads <= 1 || source.in_memory().is_some() {
        for range in chunks {
            let start = range.start;
            for (i, test) in source.tests(range)?.iter().enumerate() {
                each(start + i, test)?;
            }
        }
        return Ok(());
    }
    std::thread::scope(|scope| {
        let mut ahead = Vec::with_capacity(threads);
        for k in 0..threads {
            let (tx, rx) = std::sync::mpsc::sync_channel(0);
            let mine: Vec<Range<usize>> = chunks.iter().skip(k).step_by(threads).cloned().collect();
            scope.spawn(move || {
                for range in mine {
                    // `each` stopped early: the receiver is gone, and so is this thread.
                    if tx.send(source.tests(range)).is_err() {
                        break;
                    }
                }
            });
            ahead.push(rx);
        }
        for (c, range) in chunks.iter().enumerate() {
            let chunk = ahead[c % threads]
                .recv()
                .map_err(|_| SourceError::ReaderStopped)??;
            for (i, test) in chunk.iter().enumerate() {
                each(range.start + i, test)?;
            }
        }
        Ok(())
    })
}

/// `results` with every test whole, for a reader that needs them all at once (the inline
/// JSON, the OTLP spans): `results` itself when `source` is its tests in memory, else a copy
/// with each test read from `source`.
///
/// # Errors
/// The source's.
pub fn whole<'a>(
    results: &'a Results,
    source: &dyn TestSource,
) -> Result<Cow<'a, Results>, SourceError> {
    if source.in_memory().is_some() {
        return Ok(Cow::Borrowed(results));
    }
    let mut whole = results.clone_without_tests();
    whole.tests.reserve(source.len());
    for_each(source, |_, t| {
        whole.tests.push(t.clone());
        Ok::<(), SourceError>(())
    })?;
    Ok(Cow::Owned(whole))
}

/// A results file read test by test: [`ResultsFile::open`] reads its tests' verdicts and
/// figures (not their detail, which stays in the blob pack), and each test is read again
/// whole, with its detail, when a report asks for it.
#[derive(Debug)]
pub struct ResultsFile {
    path: PathBuf,
    spans: Vec<Span>,
    redactor: Option<Redactor>,
}

impl ResultsFile {
    /// Reads the results file at `path` without its tests' run detail (a version 1 or 2
    /// file's inline detail is read and dropped), redacted by `redactor` if given; the
    /// results, and the file to read each test whole from, redacted the same way.
    ///
    /// # Errors
    /// As [`json::read`]; a test that can not be redacted is a [`SourceError::Redact`].
    pub fn open(path: &Path, redactor: Option<Redactor>) -> Result<(Results, Self), SourceError> {
        let mut spans = Vec::new();
        let mut failed = None;
        let redact = |t: TestResult| match &redactor {
            Some(r) => r.redact_value(&t),
            None => Ok(t),
        };
        let mut results = json::read_summaries(path, &mut |test, span| {
            spans.push(span);
            match redact(test.without_run_detail()) {
                Ok(t) => Some(t),
                Err(e) => {
                    failed.get_or_insert(e);
                    None
                }
            }
        })?;
        if let Some(e) = failed {
            return Err(SourceError::Redact(e));
        }
        if let Some(r) = &redactor {
            let tests = std::mem::take(&mut results.tests);
            results = r.redact_value(&results).map_err(SourceError::Redact)?;
            results.tests = tests;
        }
        let file = ResultsFile {
            path: path.to_owned(),
            spans,
            redactor,
        };
        Ok((results, file))
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl TestSource for ResultsFile {
    fn len(&self) -> usize {
        self.spans.len()
    }

    fn tests(&self, range: Range<usize>) -> Result<Cow<'_, [TestResult]>, SourceError> {
        let Some(spans) = self.spans.get(range.clone()) else {
            return Err(SourceError::OutOfRange {
                range,
                len: self.spans.len(),
            });
        };
        let tests = json::read_tests_at(&self.path, spans)?;
        match &self.redactor {
            Some(r) => tests
                .iter()
                .map(|t| r.redact_value(t).map_err(SourceError::Redact))
                .collect::<Result<Vec<_>, _>>()
                .map(Cow::Owned),
            None => Ok(Cow::Owned(tests)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::results::TestStatus;

    /// A test with run detail: a transcript and a sandbox proof, in two runs.
    fn detailed(name: &str) -> TestResult {
        let mut run = TestResult::new(name, "t.aptitude.yaml", TestStatus::Passed);
        run.transcript = Some(crate::transcript::Transcript::completed(
            Vec::new(),
            &format!("{name}: done, token sk-secret-123456"),
        ));
        crate::verdict::repeat::aggregate(vec![run.clone(), run], 2)
    }

    #[test]
    fn a_results_file_gives_its_tests_light_then_whole_and_redacted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        let results = Results::new((0..70).map(|i| detailed(&format!("t{i}"))).collect(), 1);
        json::write(&results, &path).unwrap();
        let redactor = Redactor::new([("MY_API_KEY", "sk-secret-123456")]);
        let (light, file) = ResultsFile::open(&path, Some(redactor)).unwrap();
        assert_eq!(light.tests.len(), 70);
        assert_eq!(file.len(), 70);
        assert!(
            light
                .tests
                .iter()
                .all(|t| t.transcript.is_none() && t.runs.iter().all(|r| r.transcript.is_none()))
        );
        let mut seen = Vec::new();
        for_each::<SourceError>(&file, |i, t| {
            let answer = t.runs[1].transcript.as_ref().unwrap().final_text.clone();
            seen.push((i, t.name.clone(), answer.unwrap()));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 70);
        assert_eq!(seen[69].1, "t69");
        assert!(
            seen.iter().all(|(_, _, a)| !a.contains("sk-secret-123456")),
            "{seen:?}"
        );
        assert!(seen[3].2.starts_with("t3: done"), "{:?}", seen[3]);
        assert!(matches!(
            file.tests(69..71),
            Err(SourceError::OutOfRange { len: 70, .. })
        ));
    }

    /// Every file format renders the same from a results file read test by test as from
    /// the same results whole in memory: inline details (70 tests) and packed ones (230).
    #[test]
    fn every_format_renders_the_same_from_the_file_as_from_memory() {
        for count in [70, 230] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("results.json");
            let mut tests: Vec<TestResult> =
                (0..count).map(|i| detailed(&format!("t{i}"))).collect();
            tests[count - 1].status = TestStatus::Failed;
            json::write(&Results::new(tests, 1), &path).unwrap();
            let whole = json::read(&path).unwrap();
            let (light, file) = ResultsFile::open(&path, None).unwrap();
            let options = crate::report::RenderOptions {
                markdown_max_chars: 65_000,
            };
            for format in crate::report::FILE_FORMATS {
                let from_memory = (format.render)(&whole, &whole.tests, &options).unwrap();
                let from_file = (format.render)(&light, &file, &options).unwrap();
                assert!(
                    from_memory == from_file,
                    "{} of {count} tests differs read test by test",
                    format.name
                );
            }
            let again = dir.path().join("again.json");
            json::write_from(&light, &file, &again).unwrap();
            assert_eq!(json::read(&again).unwrap().tests, whole.tests);
        }
    }

    #[test]
    fn tests_in_memory_are_their_own_source() {
        let tests = vec![detailed("a"), detailed("b")];
        let source: &dyn TestSource = &tests;
        assert_eq!(source.tests(1..2).unwrap()[0].name, "b");
        assert!(source.tests(1..3).is_err());
    }
}
