//! Compact results (version 3): each run's bulky detail is stored once, compressed, in a
//! blob pack beside the results JSON, and referenced from it, so that the JSON stays a
//! readable summary. At 5,000 tests × 3 runs the transcripts, diffs and model requests were
//! nine tenths of a 360 MB file; their blobs compress about tenfold.
//!
//! The pack is one file, `<results>.blobs` (`results.json.blobs`): one file rather than a
//! directory of blobs because CI artifact uploads and downloads (GitHub's `upload-artifact`,
//! `download-artifact`) handle one big file quickly and keep it whole, where tens of
//! thousands of small files upload one by one; and a glob (`results.json*`) takes both.
//! Each blob is a gzip member (flate2, already a dependency) of a JSON object, written once
//! per content: blobs are addressed by the SHA-256 of their JSON, so what repeats across
//! runs (the sandbox proof and fingerprint of one setup) is stored once.
//!
//! In the results JSON, a run (a test, or a run of a test's `runs`) whose detail was moved
//! has `"blobs": [{"sha256", "offset", "bytes"}]` (hex SHA-256 of the blob's JSON, its byte
//! offset and compressed length in the pack). Each blob's object holds some of the run's
//! own fields ([`DETAIL`], [`SHARED`]) and `request_log` for its `model_traffic`: reading
//! puts them back, so [`Results`](super::Results) in memory is the same with or without a
//! pack. A run without `blobs` holds its detail inline (every version 1 and 2 file).
//!
//! A missing pack, a blob out of its bounds, or one whose bytes do not hash to its address is
//! a [`BlobError`] naming the pack: never an empty transcript.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::shared::hex;

/// The run fields stored in a run's detail blob: what the run did, seen once.
pub const DETAIL: &[&str] = &["transcript", "files", "witness", "dialog", "execs"];

/// The run fields stored in their own blob, because they repeat from run to run (one
/// sandbox proof and fingerprint per setup): content addressing stores them once.
pub const SHARED: &[&str] = &["sandbox", "fingerprint"];

/// The key, in a detail blob, of the run's `model_traffic.request_log`.
const REQUEST_LOG: &str = "request_log";

/// The top-level key, before `tests`, of where the pack was written (absolute): read when
/// no pack is beside the results file, so that a results file copied alone on the machine
/// that wrote it still reads. Blobs are checked by their hash wherever they are found.
pub const BLOB_PACK: &str = "blob_pack";

/// The key of a run's blob references in the results JSON.
pub const BLOBS: &str = "blobs";

/// The largest blob read back, in bytes once decompressed (1 GiB): a hostile pack can not
/// make a reader inflate without end.
const MAX_BLOB_BYTES: u64 = 1 << 30;

/// The pack beside the results file at `results`: `<results>.blobs`.
pub fn pack_path(results: &Path) -> PathBuf {
    let mut name = results.as_os_str().to_owned();
    name.push(".blobs");
    PathBuf::from(name)
}

/// Where one blob is in the pack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlobRef {
    /// Hex SHA-256 of the blob's JSON (before compression): its address.
    pub sha256: String,
    /// Byte offset of its gzip member in the pack.
    pub offset: u64,
    /// Length of its gzip member, in bytes.
    pub bytes: u64,
}

/// Why a run's detail could not be read from the pack.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// The pack is not there.
    #[error(
        "the results refer to run detail in {}, which can not be opened: {source} (keep the results file and its `.blobs` file together; upload and download both, e.g. `results.json*`)",
        pack.display()
    )]
    Missing {
        /// The pack.
        pack: PathBuf,
        /// Why it could not be opened.
        #[source]
        source: std::io::Error,
    },
    /// A blob could not be read, or is not what its address says.
    #[error("blob {sha256} in {} is unreadable: {why} (the file is corrupt, or belongs to other results)", pack.display())]
    Corrupt {
        /// The pack.
        pack: PathBuf,
        /// The blob's address.
        sha256: String,
        /// What is wrong.
        why: String,
    },
    /// A run's `blobs` is not a list of blob references.
    #[error("a run's `blobs` is not a list of blob references: {0}")]
    BadRef(#[source] serde_json::Error),
}

/// Something a pack can be read from: its file, or its bytes from an artifact.
pub trait Source: Read + Seek {}
impl<T: Read + Seek> Source for T {}

/// A pack opened for reading; opened lazily, so that results without blobs never need one.
pub struct Pack {
    path: PathBuf,
    /// Where the pack was written ([`BLOB_PACK`]), tried when it is not beside the file (the
    /// results file alone was copied elsewhere on the same machine).
    written_at: Option<PathBuf>,
    source: Option<Box<dyn Source>>,
    /// Blobs read, by address: a shared blob is inflated once.
    cache: HashMap<String, Map<String, Value>>,
    /// Whether tests are read with their detail ([`Pack::without_detail`]).
    detail: bool,
}

impl Pack {
    /// The pack at `path`, opened when the first blob is read.
    pub fn at(path: PathBuf) -> Self {
        Pack {
            path,
            written_at: None,
            source: None,
            cache: HashMap::new(),
            detail: true,
        }
    }

    /// A pack read from `source` (an artifact's entry), named `path` in errors.
    pub fn from_source(path: PathBuf, source: Box<dyn Source>) -> Self {
        Pack {
            path,
            written_at: None,
            source: Some(source),
            cache: HashMap::new(),
            detail: true,
        }
    }

    /// This pack, never read: tests are read without the detail it holds (their summary
    /// only, as [`crate::verdict::results::TestResult::without_run_detail`] leaves it, and
    /// without the sandbox proof and fingerprint), for readers that want a big suite's
    /// verdicts and figures first and its tests' detail one at a time later.
    #[must_use]
    pub fn without_detail(mut self) -> Self {
        self.detail = false;
        self
    }

    /// Whether tests are read with the detail this pack holds.
    pub fn reads_detail(&self) -> bool {
        self.detail
    }

    /// Notes where the results say their pack was written ([`BLOB_PACK`]).
    pub fn written_at(&mut self, path: PathBuf) {
        self.written_at = Some(path);
    }

    fn source(&mut self) -> Result<&mut Box<dyn Source>, BlobError> {
        if self.source.is_none() {
            let open = crate::shared::files::open_regular_file;
            let file = match (open(&self.path), &self.written_at) {
                (Ok(file), _) => Ok(file),
                (Err(e), Some(at)) if e.kind() == std::io::ErrorKind::NotFound => {
                    open(at).map_err(|_| e)
                }
                (Err(e), _) => Err(e),
            }
            .map_err(|source| BlobError::Missing {
                pack: self.path.clone(),
                source,
            })?;
            self.source = Some(Box::new(std::io::BufReader::new(file)));
        }
        match self.source.as_mut() {
            Some(s) => Ok(s),
            None => Err(BlobError::Missing {
                pack: self.path.clone(),
                source: std::io::Error::other("not opened"),
            }),
        }
    }

    /// The object stored at `at`, checked against its address.
    fn read(&mut self, at: &BlobRef) -> Result<Map<String, Value>, BlobError> {
        if let Some(cached) = self.cache.get(&at.sha256) {
            return Ok(cached.clone());
        }
        let pack = self.path.clone();
        let corrupt = |why: String| BlobError::Corrupt {
            pack: pack.clone(),
            sha256: at.sha256.clone(),
            why,
        };
        let source = self.source()?;
        source
            .seek(SeekFrom::Start(at.offset))
            .map_err(|e| corrupt(e.to_string()))?;
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(source.take(at.bytes))
            .take(MAX_BLOB_BYTES)
            .read_to_end(&mut json)
            .map_err(|e| corrupt(format!("can not inflate it: {e}")))?;
        if hex(&Sha256::digest(&json)) != at.sha256 {
            return Err(corrupt("its content does not match its SHA-256".into()));
        }
        let object: Map<String, Value> =
            serde_json::from_slice(&json).map_err(|e| corrupt(format!("not JSON: {e}")))?;
        // Only a blob seen in several runs is worth keeping: the shared ones.
        if object.keys().all(|k| SHARED.contains(&k.as_str())) {
            self.cache.insert(at.sha256.clone(), object.clone());
        }
        Ok(object)
    }

    /// Puts back the detail of `test` (a test's JSON object) and of its runs from the
    /// pack, removing their `blobs`.
    ///
    /// # Errors
    /// When a blob is missing or corrupt ([`BlobError`]).
    pub fn resolve(&mut self, test: &mut Value) -> Result<(), BlobError> {
        let Some(object) = test.as_object_mut() else {
            return Ok(());
        };
        if let Some(refs) = object.remove(BLOBS) {
            let refs: Vec<BlobRef> = serde_json::from_value(refs).map_err(BlobError::BadRef)?;
            for at in &refs {
                for (key, value) in self.read(at)? {
                    if key == REQUEST_LOG {
                        if let Some(traffic) = object
                            .get_mut("model_traffic")
                            .and_then(Value::as_object_mut)
                        {
                            traffic.insert(key, value);
                        }
                    } else {
                        object.insert(key, value);
                    }
                }
            }
        }
        if let Some(runs) = object.get_mut("runs").and_then(Value::as_array_mut) {
            for run in runs {
                self.resolve(run)?;
            }
        }
        Ok(())
    }
}

/// A pack being written: each distinct blob appended once.
pub struct PackWriter<W: Write> {
    out: W,
    offset: u64,
    written: HashMap<String, BlobRef>,
    level: flate2::Compression,
}

impl<W: Write> PackWriter<W> {
    /// A pack written to `out`, from its start.
    pub fn new(out: W) -> Self {
        PackWriter {
            out,
            offset: 0,
            written: HashMap::new(),
            // Level 3 keeps most of the ratio of the default (6) at about twice its speed
            // on results JSON (measured on the 5,000 × 3 bench suite).
            level: flate2::Compression::new(3),
        }
    }

    /// Whether any blob was written.
    pub fn is_empty(&self) -> bool {
        self.written.is_empty()
    }

    /// The writer, flushed.
    ///
    /// # Errors
    /// When it can not be flushed.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }

    /// Stores `object` (once per content) and returns where it is.
    fn put(&mut self, object: &Map<String, Value>) -> std::io::Result<BlobRef> {
        let json = serde_json::to_vec(object).map_err(std::io::Error::other)?;
        let sha256 = hex(&Sha256::digest(&json));
        if let Some(at) = self.written.get(&sha256) {
            return Ok(at.clone());
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), self.level);
        gz.write_all(&json)?;
        let bytes = gz.finish()?;
        self.out.write_all(&bytes)?;
        let at = BlobRef {
            sha256: sha256.clone(),
            offset: self.offset,
            bytes: bytes.len() as u64,
        };
        self.offset += at.bytes;
        self.written.insert(sha256, at.clone());
        Ok(at)
    }

    /// Moves the detail of `test` (a test's JSON object) and of its runs into the pack,
    /// leaving `blobs` references in their place.
    ///
    /// # Errors
    /// When the pack can not be written.
    pub fn compact(&mut self, test: &mut Value) -> std::io::Result<()> {
        let Some(object) = test.as_object_mut() else {
            return Ok(());
        };
        if let Some(runs) = object.get_mut("runs").and_then(Value::as_array_mut) {
            for run in runs {
                self.compact(run)?;
            }
        }
        let mut detail = take(object, DETAIL);
        if let Some(log) = object
            .get_mut("model_traffic")
            .and_then(Value::as_object_mut)
            .and_then(|t| t.remove(REQUEST_LOG))
        {
            detail.insert(REQUEST_LOG.into(), log);
        }
        let shared = take(object, SHARED);
        let mut refs = Vec::new();
        for blob in [detail, shared] {
            if !blob.is_empty() {
                refs.push(self.put(&blob)?);
            }
        }
        if !refs.is_empty() {
            object.insert(
                BLOBS.into(),
                serde_json::to_value(refs).map_err(std::io::Error::other)?,
            );
        }
        Ok(())
    }
}

/// Removes `keys` from `object`, returning those it had.
fn take(object: &mut Map<String, Value>, keys: &[&str]) -> Map<String, Value> {
    keys.iter()
        .filter_map(|k| object.remove(*k).map(|v| ((*k).to_owned(), v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Value {
        serde_json::json!({
            "name": "t", "status": "passed",
            "transcript": {"final_text": text},
            "files": [{"path": "a.rs"}],
            "model_traffic": {"requests": 2, "request_log": [{"model": "m"}]},
            "sandbox": {"tool": "bubblewrap 0.8.0"},
        })
    }

    #[test]
    fn detail_goes_to_the_pack_and_comes_back_the_same() {
        let mut test = run("one");
        test["runs"] = serde_json::json!([run("one"), run("two")]);
        let original = test.clone();
        let mut writer = PackWriter::new(std::io::Cursor::new(Vec::new()));
        writer.compact(&mut test).unwrap();
        // The summary keeps the metered figures; the detail is gone from it.
        assert!(test.get("transcript").is_none() && test.get("sandbox").is_none());
        assert_eq!(test["model_traffic"], serde_json::json!({"requests": 2}));
        assert_eq!(test["runs"][0][BLOBS].as_array().unwrap().len(), 2);
        // Run 1's detail is the test's own, and the sandbox proof is one blob for all: three
        // blobs in all (the test's and run 1's detail, run 2's detail, the sandbox proof).
        assert_eq!(writer.written.len(), 3);
        let bytes = writer.finish().unwrap().into_inner();
        let mut pack =
            Pack::from_source("r.json.blobs".into(), Box::new(std::io::Cursor::new(bytes)));
        pack.resolve(&mut test).unwrap();
        assert_eq!(test, original);
    }

    #[test]
    fn a_missing_pack_is_an_error_naming_it() {
        let mut test = run("one");
        let mut writer = PackWriter::new(std::io::sink());
        writer.compact(&mut test).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut pack = Pack::at(dir.path().join("results.json.blobs"));
        let e = pack.resolve(&mut test).unwrap_err().to_string();
        assert!(
            e.contains("results.json.blobs") && e.contains("together"),
            "{e}"
        );
    }

    #[test]
    fn a_corrupt_blob_is_an_error_never_an_empty_transcript() {
        let mut test = run("one");
        let mut writer = PackWriter::new(std::io::Cursor::new(Vec::new()));
        writer.compact(&mut test).unwrap();
        let good = writer.finish().unwrap().into_inner();
        // Another run's detail where this one's should be: it inflates, but its hash differs.
        let mut other = run("another");
        let mut writer = PackWriter::new(std::io::Cursor::new(Vec::new()));
        writer.compact(&mut other).unwrap();
        let swapped = writer.finish().unwrap().into_inner();
        let mut flipped = good.clone();
        flipped[12] ^= 0xff;
        for bytes in [swapped, flipped, good[..good.len() / 2].to_vec()] {
            let mut pack =
                Pack::from_source("r.json.blobs".into(), Box::new(std::io::Cursor::new(bytes)));
            let e = pack.resolve(&mut test.clone()).unwrap_err().to_string();
            assert!(
                e.contains("r.json.blobs") && e.contains("unreadable"),
                "{e}"
            );
        }
    }
}
