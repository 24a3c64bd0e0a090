//! The results JSON writer (`--json FILE`) and reader. Every command that reads results
//! (`report`, `publish`, `merge`, `diff`, `coverage --results`, `--baseline`, `--reuse`)
//! reads them here, so each one refuses a results file of another schema version with the
//! same clear error, and finds the run detail in the blob pack beside the file
//! ([`crate::verdict::results::compact`]).

pub mod source;

use std::cell::RefCell;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde::Serialize;

use crate::verdict::results::compact::{Pack, PackWriter, pack_path};
use crate::verdict::results::{
    OLDEST_READABLE_VERSION, RESULTS_VERSION, ReadError, Results, TestResult,
};

/// Why results could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    /// The file could not be written or read.
    #[error("can not access results file {}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not results JSON.
    #[error("{} is not an aptitude results file: {source}", path.display())]
    Parse {
        /// The file.
        path: std::path::PathBuf,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
    /// The file is results JSON of another schema version.
    #[error(
        "{} has results version {found}; this aptitude reads versions {OLDEST_READABLE_VERSION} to {RESULTS_VERSION} (re-run the tests or use the aptitude that wrote it)",
        path.display()
    )]
    Version {
        /// The file.
        path: std::path::PathBuf,
        /// Its `version`.
        found: u64,
    },
    /// A run's detail could not be read from the blob pack beside the file.
    #[error("{}: {source}", path.display())]
    Blob {
        /// The results file.
        path: std::path::PathBuf,
        /// What is wrong with its pack.
        #[source]
        source: crate::verdict::results::compact::BlobError,
    },
}

impl JsonError {
    /// `e`, a reading error of the results file at `path`.
    fn of_read(path: &Path, e: ReadError) -> Self {
        let path = path.to_owned();
        match e {
            ReadError::Parse(source) => JsonError::Parse { path, source },
            ReadError::Version { found } => JsonError::Version { path, found },
            ReadError::Blob(source) => JsonError::Blob { path, source },
        }
    }
}

/// The results JSON file format (`--json FILE`).
pub const FORMAT: super::FileFormat = super::FileFormat {
    name: "json",
    // Inline, as versions 1 and 2 wrote it: the tests whole.
    render: |results, source, _| {
        Ok(serde_json::to_string_pretty(&source::whole(results, source)?)? + "\n")
    },
};

/// Writes results as pretty JSON, creating parent directories, with each run's bulky
/// detail moved to the blob pack `<path>.blobs` beside it
/// ([`crate::verdict::results::compact`]); no pack is written when no run has detail. The
/// pack is in place before the JSON that refers to it. Written as it is serialized: memory
/// is one test's JSON beyond `results`.
///
/// # Errors
/// When a file can not be written.
pub fn write(results: &Results, path: &Path) -> Result<(), JsonError> {
    write_from(results, &results.tests, path)
}

/// [`write`], each test taken whole from `source` ([`source`]) as it is written, a
/// chunk at a time: `results` gives the rest (its tests may be without their detail).
///
/// # Errors
/// When a file can not be written, or a test not read from `source`.
pub fn write_from(
    results: &Results,
    source: &dyn source::TestSource,
    path: &Path,
) -> Result<(), JsonError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |e: std::io::Error| JsonError::Io { path, source: e }
    };
    let output = |path: &Path| {
        let path = path.to_owned();
        move |e: crate::shared::files::OutputError| JsonError::Io {
            path,
            source: std::io::Error::other(e.to_string()),
        }
    };
    let blobs = pack_path(path);
    let pack_tmp = crate::shared::files::output_file(&blobs).map_err(output(&blobs))?;
    let json_tmp = crate::shared::files::output_file(path).map_err(output(path))?;
    let pack = RefCell::new(PackWriter::new(BufWriter::new(pack_tmp)));
    let mut out = BufWriter::new(json_tmp);
    let written_at = std::path::absolute(&blobs).ok();
    serde_json::to_writer_pretty(&mut out, &Compacted::of(results, source, &pack, written_at))
        .map_err(|e| io(path)(std::io::Error::other(e)))?;
    out.write_all(b"\n").map_err(io(path))?;
    let json_tmp = out.into_inner().map_err(|e| io(path)(e.into_error()))?;
    let pack = pack.into_inner();
    if !pack.is_empty() {
        let pack_tmp = pack
            .finish()
            .and_then(|w| w.into_inner().map_err(|e| e.into_error()))
            .map_err(io(&blobs))?;
        crate::shared::files::persist_output(pack_tmp, &blobs).map_err(output(&blobs))?;
    }
    crate::shared::files::persist_output(json_tmp, path).map_err(output(path))
}

/// [`Results`] as [`write`] writes it: the same fields in the same order, the tests'
/// detail moved to the pack as each is written. A test in this module fails when a field
/// of [`Results`] is missing here.
#[derive(Serialize)]
#[serde(bound = "")]
struct Compacted<'a, W: Write> {
    version: u32,
    aptitude_version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    run_dir: &'a Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: &'a Option<crate::verdict::results::ShardInfo>,
    /// Where the pack is written, absolute ([`crate::verdict::results::compact::BLOB_PACK`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    blob_pack: Option<std::path::PathBuf>,
    tests: CompactTests<'a, W>,
    summary: &'a crate::verdict::results::Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: &'a Option<crate::verdict::coverage::Coverage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    routing: &'a Option<crate::verdict::routing::Routing>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    judged: &'a [crate::verdict::results::JudgedPassRate],
}

impl<'a, W: Write> Compacted<'a, W> {
    fn of(
        results: &'a Results,
        source: &'a dyn source::TestSource,
        pack: &'a RefCell<PackWriter<W>>,
        blob_pack: Option<std::path::PathBuf>,
    ) -> Self {
        // Destructured so that a field added to `Results` fails to compile here.
        let Results {
            version: _,
            aptitude_version,
            run_dir,
            shard,
            tests: _,
            summary,
            coverage,
            routing,
            judged,
        } = results;
        Compacted {
            version: RESULTS_VERSION,
            aptitude_version,
            run_dir,
            shard,
            blob_pack,
            tests: CompactTests { source, pack },
            summary,
            coverage,
            routing,
            judged,
        }
    }
}

/// The tests, each read whole from its source and compacted into the pack as it is
/// serialized.
struct CompactTests<'a, W: Write> {
    source: &'a dyn source::TestSource,
    pack: &'a RefCell<PackWriter<W>>,
}

impl<W: Write> Serialize for CompactTests<'_, W> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        /// Why a test was not written: not read, or not serialized.
        enum Failed<E> {
            Read(source::SourceError),
            Write(E),
        }
        impl<E> From<source::SourceError> for Failed<E> {
            fn from(e: source::SourceError) -> Self {
                Failed::Read(e)
            }
        }
        let mut seq = s.serialize_seq(Some(self.source.len()))?;
        let written = source::for_each(self.source, |_, test| {
            let mut value =
                serde_json::to_value(test).map_err(|e| Failed::Write(S::Error::custom(e)))?;
            self.pack
                .borrow_mut()
                .compact(&mut value)
                .map_err(|e| Failed::Write(S::Error::custom(e)))?;
            seq.serialize_element(&value).map_err(Failed::Write)
        });
        match written {
            Ok(()) => seq.end(),
            Err(Failed::Read(e)) => Err(S::Error::custom(e)),
            Err(Failed::Write(e)) => Err(e),
        }
    }
}

/// Reads a results file, checking its schema version first (a file of another version
/// gets [`JsonError::Version`], not a parse error about some field), with each run's detail
/// from the blob pack beside it. Read test by test: memory is the results, not their text.
///
/// # Errors
/// When the file can not be read, is not results JSON, has another version, or its pack is
/// missing or corrupt.
pub fn read(path: &Path) -> Result<Results, JsonError> {
    read_each(path, &mut |t, _| Some(t))
}

/// Reads a results file one test at a time, handing each to `each` as soon as it is read,
/// with where it is in the file (`each` keeps it, keeps a lighter copy, or drops it): peak memory is one test plus what
/// `each` keeps ([`crate::verdict::results::stream`]). The version is checked as in
/// [`read`].
///
/// # Errors
/// When the file can not be read, is not results JSON, or has another version.
pub fn read_each(
    path: &Path,
    each: crate::verdict::results::stream::Each<'_>,
) -> Result<Results, JsonError> {
    read_with(path, Pack::at(pack_path(path)), each)
}

/// The results file at `path` read test by test, its run detail from `pack`.
fn read_with(
    path: &Path,
    mut pack: Pack,
    each: crate::verdict::results::stream::Each<'_>,
) -> Result<Results, JsonError> {
    let file = crate::shared::files::open_regular_file(path).map_err(|source| JsonError::Io {
        path: path.to_owned(),
        source,
    })?;
    crate::verdict::results::stream::read_each(file, &mut pack, each)
        .map_err(|e| JsonError::of_read(path, e))
}

/// [`read_each`] without the tests' run detail: each test's verdicts and figures only,
/// its `blobs` not read ([`Pack::without_detail`]); a version 1 or 2 test's inline detail
/// is still there, for `each` to drop. Fast, and memory is what `each` keeps.
///
/// # Errors
/// As [`read_each`].
pub fn read_summaries(
    path: &Path,
    each: crate::verdict::results::stream::Each<'_>,
) -> Result<Results, JsonError> {
    read_with(path, Pack::at(pack_path(path)).without_detail(), each)
}

/// Reads the tests at `spans` of the results file at `path` whole (spans that
/// [`read_each`] or [`read_summaries`] gave), with one opening of the file and its pack.
///
/// # Errors
/// When the file can not be read or holds no test at a span (it changed since).
pub fn read_tests_at(
    path: &Path,
    spans: &[crate::verdict::results::stream::Span],
) -> Result<Vec<TestResult>, JsonError> {
    let mut file = std::io::BufReader::new(crate::shared::files::open_regular_file(path).map_err(
        |source| JsonError::Io {
            path: path.to_owned(),
            source,
        },
    )?);
    let mut pack = Pack::at(pack_path(path));
    spans
        .iter()
        .map(|span| {
            crate::verdict::results::stream::read_test_at(&mut file, &mut pack, *span)
                .map_err(|e| JsonError::of_read(path, e))
        })
        .collect()
}

/// Reads the one test at `span` of the results file at `path` (a span that [`read_each`]
/// gave).
///
/// # Errors
/// When the file can not be read or holds no test there (it changed since).
pub fn read_test_at(
    path: &Path,
    span: crate::verdict::results::stream::Span,
) -> Result<crate::verdict::results::TestResult, JsonError> {
    let mut file =
        crate::shared::files::open_regular_file(path).map_err(|source| JsonError::Io {
            path: path.to_owned(),
            source,
        })?;
    let mut pack = Pack::at(pack_path(path));
    crate::verdict::results::stream::read_test_at(&mut file, &mut pack, span)
        .map_err(|e| JsonError::of_read(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_results_version_is_refused_by_every_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        std::fs::write(&path, r#"{"version": 4, "tests": "whatever a v4 has"}"#).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("results version 4; this aptitude reads versions 1 to 3"),
            "{e}"
        );
    }

    /// `merge`, `report`, `publish`, `--baseline` and `--reuse` read results through here:
    /// a FIFO (or a link to a device) is refused at once, never waited on.
    #[test]
    fn a_fifo_or_a_device_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("results.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let e = read(&fifo).unwrap_err().to_string();
        assert!(
            e.contains("FIFO") && e.contains("not a regular file"),
            "{e}"
        );
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let e = read(&zero).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
    }

    fn v2_results() -> Results {
        read(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/results/v2/analyze-examples.json"
        )))
        .unwrap()
    }

    /// A file written by aptitude before compact results (version 2) still loads, its
    /// transcripts inline.
    #[test]
    fn version_2_results_written_before_compact_results_still_load() {
        let results = v2_results();
        assert_eq!(results.version, RESULTS_VERSION);
        assert_eq!(results.tests.len(), 3);
        assert!(results.tests.iter().all(|t| t.transcript.is_some()));
    }

    /// The written JSON keeps the summary and refers to the detail, which comes back the
    /// same from the pack beside it; what repeats is stored once.
    #[test]
    fn written_results_keep_their_detail_in_the_pack_and_read_back_the_same() {
        let mut results = v2_results();
        // Three runs of the first test, each with the same transcript: stored once.
        let first = results.tests[0].clone();
        results.tests[0].runs = vec![first.clone(), first.clone(), first];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        write(&results, &path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let json: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["version"], 3);
        assert!(json["tests"][0].get("transcript").is_none(), "{text}");
        assert!(json["tests"][0]["blobs"][0]["sha256"].is_string(), "{text}");
        assert!(json["summary"]["total"].is_number());
        let pack = std::fs::read(path.with_extension("json.blobs")).unwrap();
        assert!(!pack.is_empty());
        // Three distinct transcripts in the suite, each a blob once, though four runs have
        // the first.
        let refs: std::collections::BTreeSet<&str> = json["tests"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| std::iter::once(t).chain(t["runs"].as_array().into_iter().flatten()))
            .flat_map(|t| t["blobs"].as_array().into_iter().flatten())
            .filter_map(|b| b["sha256"].as_str())
            .collect();
        assert_eq!(refs.len(), 3, "{refs:?}");
        assert_eq!(read(&path).unwrap(), results);
        let mut streamed = Vec::new();
        read_each(&path, &mut |t, span| {
            streamed.push(span);
            Some(t)
        })
        .unwrap();
        assert_eq!(read_test_at(&path, streamed[0]).unwrap(), results.tests[0]);
    }

    /// Results whose pack is missing or damaged are an error naming the pack, never a test
    /// read without its transcript.
    #[test]
    fn a_missing_or_corrupt_pack_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        write(&v2_results(), &path).unwrap();
        let pack = dir.path().join("results.json.blobs");
        let bytes = std::fs::read(&pack).unwrap();
        std::fs::remove_file(&pack).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("results.json.blobs")
                && e.contains("keep the results file and its `.blobs` file together"),
            "{e}"
        );
        let mut corrupt = bytes.clone();
        let mid = corrupt.len() / 2;
        corrupt[mid] ^= 0x55;
        std::fs::write(&pack, &corrupt).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains("results.json.blobs") && e.contains("unreadable"),
            "{e}"
        );
        std::fs::write(&pack, &bytes[..bytes.len() - 1]).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains("unreadable"), "{e}");
    }

    /// A results file copied alone on the machine that wrote it still finds its pack where
    /// it was written.
    #[test]
    fn a_results_file_copied_alone_finds_its_pack_where_it_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        let results = v2_results();
        write(&results, &path).unwrap();
        let kept = dir.path().join("kept/baseline.json");
        std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
        std::fs::copy(&path, &kept).unwrap();
        assert_eq!(read(&kept).unwrap(), results);
        // Gone from there too: the error names the pack beside the copy.
        std::fs::remove_file(dir.path().join("results.json.blobs")).unwrap();
        let e = read(&kept).unwrap_err().to_string();
        assert!(e.contains("baseline.json.blobs"), "{e}");
    }

    /// Results without run detail need no pack: none is written.
    #[test]
    fn results_without_detail_have_no_pack() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.json");
        write(&Results::new(Vec::new(), 0), &path).unwrap();
        assert!(!dir.path().join("results.json.blobs").exists());
        assert_eq!(read(&path).unwrap().tests.len(), 0);
    }
}
