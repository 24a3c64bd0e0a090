//! Results JSON read one test at a time, for readers that must stay within bounded memory
//! on big suites (`aptitude diff` on two 5,000 × 3 results): each test is handed to a
//! callback as soon as it is read, which keeps it, keeps a lighter copy, or drops it.
//!
//! The fields besides `tests` are read as [`Results`]' own serde derive reads them; a test
//! in this module's unit tests fails when a field of [`Results`] is not read here.

use std::io::{BufRead, Read};

use serde::de::Error as _;

use super::compact::Pack;
use super::{ReadError, Results, TestResult, readable};

/// Where a test's JSON is in its file: byte offset and length, for reading it again alone
/// ([`read_test_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Byte offset of the test's `{`.
    pub start: u64,
    /// Its length in bytes, to its `}`.
    pub len: u64,
}

/// What to do with each test as it is read, given where it is in the file: `Some` keeps it
/// (perhaps lightened, see [`TestResult::without_run_detail`]), `None` drops it.
pub type Each<'f> = &'f mut dyn FnMut(TestResult, Span) -> Option<TestResult>;

/// Reads results JSON from `reader`, handing each test to `each` as soon as it is read:
/// peak memory is one test's JSON and value plus what `each` keeps. The top-level object is
/// walked here (each test's bytes found by their brackets, strings skipped with `memchr`)
/// and every value is read by serde from its own bytes, as fast as a whole read. The
/// version is checked where it is met (first, in every file aptitude writes).
///
/// # Errors
/// [`ReadError::Version`] for another schema version, [`ReadError::Parse`] otherwise (for a
/// test's own JSON, its line and column count from the test's `{`, and the message names
/// the test's index).
pub fn read_each(reader: impl Read, pack: &mut Pack, each: Each<'_>) -> Result<Results, ReadError> {
    read_buffered(reader, 1 << 20, pack, each)
}

/// [`read_each`] with a buffer of `capacity` bytes (tests use a few bytes, so that values
/// and escapes are cut at every place).
fn read_buffered(
    reader: impl Read,
    capacity: usize,
    pack: &mut Pack,
    each: Each<'_>,
) -> Result<Results, ReadError> {
    let mut scan = Scan {
        r: std::io::BufReader::with_capacity(capacity, reader),
        offset: 0,
    };
    top_level(&mut scan, pack, each)
}

/// A test read from its JSON `bytes`, its detail put back from `pack` when it has blobs
/// ([`super::compact`]); a test without them, or read without its detail
/// ([`Pack::without_detail`]: its `blobs` are ignored), is read directly, as fast as before.
fn test_from(bytes: &[u8], pack: &mut Pack) -> Result<TestResult, ReadError> {
    let key = format!("\"{}\"", super::compact::BLOBS);
    if !pack.reads_detail() || memchr::memmem::find(bytes, key.as_bytes()).is_none() {
        return serde_json::from_slice(bytes).map_err(ReadError::Parse);
    }
    let mut value: serde_json::Value = serde_json::from_slice(bytes).map_err(ReadError::Parse)?;
    pack.resolve(&mut value).map_err(ReadError::Blob)?;
    serde_json::from_value(value).map_err(ReadError::Parse)
}

/// Reads the one test at `span` of a results file (a [`Span`] that [`read_each`] gave).
///
/// # Errors
/// [`ReadError::Parse`] when the bytes there are not a test (the file changed since).
pub fn read_test_at(
    file: &mut (impl Read + std::io::Seek),
    pack: &mut Pack,
    span: Span,
) -> Result<TestResult, ReadError> {
    let mut bytes = vec![0; usize::try_from(span.len).map_err(|_| parse_error("a test too long"))?];
    file.seek(std::io::SeekFrom::Start(span.start))
        .and_then(|_| file.read_exact(&mut bytes))
        .map_err(|e| ReadError::Parse(serde_json::Error::io(e)))?;
    test_from(&bytes, pack)
}

/// One top-level field's value, read from its bytes.
fn field<'a, T: serde::Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, ReadError> {
    serde_json::from_slice(bytes).map_err(ReadError::Parse)
}

fn parse_error(why: impl std::fmt::Display) -> ReadError {
    ReadError::Parse(serde_json::Error::custom(why))
}

fn top_level<R: BufRead>(
    scan: &mut Scan<R>,
    pack: &mut Pack,
    each: Each<'_>,
) -> Result<Results, ReadError> {
    let mut version = None;
    let mut aptitude_version = None;
    let mut run_dir = None;
    let mut shard = None;
    let mut tests = None;
    let mut summary = None;
    let mut coverage = None;
    let mut routing = None;
    let mut judged = Vec::new();
    let mut value = Vec::new();
    scan.expect(b'{')?;
    if scan.peek()? == Some(b'}') {
        return Err(parse_error("missing field `version`"));
    }
    loop {
        value.clear();
        scan.value_into(&mut value)?;
        let key: String = field(&value)?;
        scan.expect(b':')?;
        if key == "tests" {
            tests = Some(test_list(scan, pack, each)?);
        } else {
            value.clear();
            scan.value_into(&mut value)?;
            match key.as_str() {
                "version" => {
                    let found: u64 = field(&value)?;
                    if !readable(found) {
                        return Err(ReadError::Version { found });
                    }
                    version = Some(super::RESULTS_VERSION);
                }
                "aptitude_version" => aptitude_version = Some(field(&value)?),
                super::compact::BLOB_PACK => pack.written_at(field(&value)?),
                "run_dir" => run_dir = field(&value)?,
                "shard" => shard = field(&value)?,
                "summary" => summary = Some(field(&value)?),
                "coverage" => coverage = field(&value)?,
                "routing" => routing = field(&value)?,
                "judged" => judged = field(&value)?,
                _ => {}
            }
        }
        match scan.next()? {
            Some(b',') => {}
            Some(b'}') => break,
            _ => {
                return Err(parse_error(
                    "expected `,` or `}` after a field of the results",
                ));
            }
        }
    }
    scan.end()?;
    let missing = |name| parse_error(format!("missing field `{name}`"));
    Ok(Results {
        version: version.ok_or_else(|| missing("version"))?,
        aptitude_version: aptitude_version.ok_or_else(|| missing("aptitude_version"))?,
        run_dir,
        shard,
        tests: tests.ok_or_else(|| missing("tests"))?,
        summary: summary.ok_or_else(|| missing("summary"))?,
        coverage,
        routing,
        judged,
    })
}

/// The `tests` array, each test read from its own bytes and handed to `each`.
fn test_list<R: BufRead>(
    scan: &mut Scan<R>,
    pack: &mut Pack,
    each: Each<'_>,
) -> Result<Vec<TestResult>, ReadError> {
    let mut kept = Vec::new();
    let mut bytes = Vec::new();
    scan.expect(b'[')?;
    if scan.peek()? == Some(b']') {
        scan.next()?;
        return Ok(kept);
    }
    for index in 0.. {
        bytes.clear();
        let start = scan.skip_whitespace()?;
        scan.value_into(&mut bytes)?;
        let test = test_from(&bytes, pack).map_err(|e| match e {
            ReadError::Parse(e) => parse_error(format!("test {index} (from its `{{`): {e}")),
            other => other,
        })?;
        let span = Span {
            start,
            len: bytes.len() as u64,
        };
        if let Some(test) = each(test, span) {
            kept.push(test);
        }
        match scan.next()? {
            Some(b',') => {}
            Some(b']') => break,
            _ => return Err(parse_error("expected `,` or `]` after a test")),
        }
    }
    Ok(kept)
}

/// A byte walk over JSON text that finds where values end without reading them.
struct Scan<R> {
    r: R,
    /// Bytes consumed so far.
    offset: u64,
}

impl<R: BufRead> Scan<R> {
    fn io(e: std::io::Error) -> ReadError {
        ReadError::Parse(serde_json::Error::io(e))
    }

    /// Skips whitespace; returns the offset of the next byte.
    fn skip_whitespace(&mut self) -> Result<u64, ReadError> {
        loop {
            let buf = self.r.fill_buf().map_err(Self::io)?;
            if buf.is_empty() {
                return Ok(self.offset);
            }
            let n = buf
                .iter()
                .position(|b| !b.is_ascii_whitespace())
                .unwrap_or(buf.len());
            let done = n < buf.len();
            self.r.consume(n);
            self.offset += n as u64;
            if done {
                return Ok(self.offset);
            }
        }
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Result<Option<u8>, ReadError> {
        self.skip_whitespace()?;
        Ok(self.r.fill_buf().map_err(Self::io)?.first().copied())
    }

    /// The next byte after whitespace, consumed.
    fn next(&mut self) -> Result<Option<u8>, ReadError> {
        let b = self.peek()?;
        if b.is_some() {
            self.r.consume(1);
            self.offset += 1;
        }
        Ok(b)
    }

    fn expect(&mut self, want: u8) -> Result<(), ReadError> {
        match self.next()? {
            Some(b) if b == want => Ok(()),
            Some(b) => Err(parse_error(format!(
                "expected `{}` at byte {}, found `{}`",
                want as char,
                self.offset.saturating_sub(1),
                b.escape_ascii()
            ))),
            None => Err(parse_error(format!(
                "expected `{}`, found the end of the file",
                want as char
            ))),
        }
    }

    /// Nothing but whitespace is left.
    fn end(&mut self) -> Result<(), ReadError> {
        match self.peek()? {
            None => Ok(()),
            Some(_) => Err(parse_error("trailing characters after the results")),
        }
    }

    /// Appends the next value's bytes (after whitespace) to `out`: an object or array to
    /// its closing bracket, a string to its closing quote, a number or literal to the byte
    /// before the next `,`, `}`, `]` or whitespace. Only brackets and quotes are read; serde
    /// checks the rest when it reads `out`.
    fn value_into(&mut self, out: &mut Vec<u8>) -> Result<(), ReadError> {
        let first = self
            .peek()?
            .ok_or_else(|| parse_error("expected a value, found the end of the file"))?;
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escaped = false;
        let scalar = !matches!(first, b'{' | b'[' | b'"');
        loop {
            let buf = self.r.fill_buf().map_err(Self::io)?;
            if buf.is_empty() {
                if scalar && depth == 0 {
                    return Ok(());
                }
                return Err(parse_error("the file ends inside a value"));
            }
            let mut i = 0;
            let mut done = false;
            while i < buf.len() {
                if in_string {
                    if escaped {
                        escaped = false;
                        i += 1;
                        continue;
                    }
                    match memchr::memchr2(b'"', b'\\', &buf[i..]) {
                        None => i = buf.len(),
                        Some(k) => {
                            i += k;
                            if buf[i] == b'\\' {
                                escaped = true;
                            } else {
                                in_string = false;
                                if depth == 0 {
                                    done = true;
                                    i += 1;
                                    break;
                                }
                            }
                            i += 1;
                        }
                    }
                    continue;
                }
                let b = buf[i];
                if scalar {
                    if matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace() {
                        done = true;
                        break;
                    }
                    i += 1;
                    continue;
                }
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            done = true;
                            i += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            out.extend_from_slice(&buf[..i]);
            self.r.consume(i);
            self.offset += i as u64;
            if done {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No pack: these results hold their detail inline.
    fn none() -> Pack {
        Pack::at("no.blobs".into())
    }
    use crate::verdict::results::{BalancedBy, ShardInfo, TestStatus};

    fn test(name: &str, status: TestStatus) -> TestResult {
        let mut t = TestResult::new(name, "t.aptitude.yaml", status);
        t.transcript = Some(crate::transcript::Transcript::completed(Vec::new(), "done"));
        t
    }

    /// Every field of [`Results`] set (a struct literal: a new field must be named here),
    /// so that a field the stream does not read fails the round trip.
    fn every_field() -> Results {
        let tests = vec![test("a", TestStatus::Passed), test("b", TestStatus::Failed)];
        let base = Results::new(tests, 12);
        Results {
            version: base.version,
            aptitude_version: base.aptitude_version,
            run_dir: Some("/work/repo".into()),
            shard: Some(ShardInfo {
                index: 1,
                count: 2,
                tests: 4,
                balanced_by: BalancedBy::Hash,
                runs: Some(6),
                baseline: Some("0123456789abcdef".into()),
            }),
            tests: base.tests,
            summary: base.summary,
            coverage: Some(crate::verdict::coverage::Coverage::default()),
            routing: Some(crate::verdict::routing::Routing::default()),
            judged: vec![crate::verdict::results::JudgedPassRate {
                judge: "claude (fake-model)".into(),
                passed: 3,
                graded: 4,
                raw: crate::verdict::agreement::Rate::of(3, 4),
                corrected: None,
            }],
        }
    }

    #[test]
    fn a_streamed_read_keeping_every_test_equals_a_whole_read() {
        let results = every_field();
        let text = serde_json::to_string_pretty(&results).unwrap();
        let mut seen = Vec::new();
        let streamed = read_each(text.as_bytes(), &mut none(), &mut |t, _| {
            seen.push(t.name.clone());
            Some(t)
        })
        .unwrap();
        assert_eq!(seen, ["a", "b"]);
        assert_eq!(streamed, Results::from_json(&text).unwrap());
        assert_eq!(streamed, results);
    }

    #[test]
    fn each_test_is_kept_lightened_or_dropped_as_the_callback_says() {
        let text = serde_json::to_string(&every_field()).unwrap();
        let read = read_each(text.as_bytes(), &mut none(), &mut |t, _| {
            (t.status == TestStatus::Failed).then(|| t.without_run_detail())
        })
        .unwrap();
        assert_eq!(read.tests.len(), 1);
        assert_eq!(read.tests[0].name, "b");
        assert!(read.tests[0].transcript.is_none());
        assert_eq!(read.summary.failed, 1, "the summary is the file's, whole");
    }

    #[test]
    fn values_cut_anywhere_by_the_buffer_read_the_same_and_spans_find_each_test_again() {
        let mut results = every_field();
        // Brackets, quotes and backslashes inside strings, and non-ASCII text.
        results.tests[0].error = Some(r#"a } ] { [ "quoted" \ \" — end"#.into());
        results.tests[1].name = "b \\".into();
        let text = serde_json::to_string_pretty(&results).unwrap();
        for capacity in [1, 2, 3, 7, 64] {
            let mut spans = Vec::new();
            let read = read_buffered(text.as_bytes(), capacity, &mut none(), &mut |t, span| {
                spans.push(span);
                Some(t)
            })
            .unwrap();
            assert_eq!(read, results, "buffer of {capacity} bytes");
            let mut file = std::io::Cursor::new(text.as_bytes());
            for (span, test) in spans.iter().zip(&results.tests) {
                assert_eq!(&read_test_at(&mut file, &mut none(), *span).unwrap(), test);
            }
        }
    }

    #[test]
    fn another_version_is_refused_as_a_version_error_before_any_test_is_read() {
        let text = r#"{"version": 4, "tests": [{"not": "a v3 test"}]}"#;
        let mut called = false;
        let e = read_each(text.as_bytes(), &mut none(), &mut |t, _| {
            called = true;
            Some(t)
        })
        .unwrap_err();
        assert!(matches!(e, ReadError::Version { found: 4 }), "{e}");
        assert!(!called);
        let broken = read_each(
            &b"{\"version\": 2, \"tests\": [}"[..],
            &mut none(),
            &mut |t, _| Some(t),
        )
        .unwrap_err();
        assert!(matches!(broken, ReadError::Parse(_)), "{broken}");
    }
}
