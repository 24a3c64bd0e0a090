//! Cassettes: one run's model exchange, recorded by the gateway (`run --record-model`) and
//! answered from by it (`run --replay RESULTS.json`).
//!
//! A cassette holds every request of the run in the order they came — method, path,
//! request body normalised as replays compare it ([`super::normalize`]) — with the reply
//! the agent got: status, headers and body (streamed replies whole, the run's paths as
//! tokens), and whether the reply was cut before its end, so that a replay gives the agent
//! the same status, the same `x-should-retry`, `retry-after` and `request-id`, and the same
//! bytes up to the same cut. It holds no credentials: no request header is kept, a key in a
//! query (`?key=`) is dropped, the reply headers that identify an account or a connection
//! are dropped ([`DROPPED_REPLY_HEADERS`]), and every string goes through the redactor
//! before it is written.
//!
//! Versions: 2 keeps the reply's headers (`headers`: `[[name, value], …]`) and stores a
//! body that is not UTF-8 as `reply_base64`; version 1 (which kept only the content type)
//! is still read, its replies replayed with their content type alone.
//!
//! On disk (`<results>.cassettes/<sha256 prefix>.json.gz`, gzip, named by its content so
//! that identical runs share one file) each request is stored as what it adds to the
//! previous request to the same path: agents re-send the whole conversation each turn, so
//! a request is the previous one's fields (`same`), its arrays extended (`append`), and
//! its other fields (`set`). A cassette over [`MAX_CASSETTE_BYTES`] keeps its first
//! exchanges and says how many were dropped.
//!
//! Beside the model's exchanges a cassette may hold the traffic of the run's stdio MCP
//! servers (`mcp`) and the replies of the test's simulated user (`user`: `[{question,
//! reply}, …]`, in order), so that a replay needs neither.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The cassette format's version (written); version 1 is read too.
pub const CASSETTE_VERSION: u32 = 2;

/// Headers that belong to one connection (RFC 9110 §7.6.1): never forwarded by the
/// gateway ([`super::server`]) nor kept in a cassette.
pub(crate) const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Reply headers a cassette never keeps besides those of one connection ([`HOP_BY_HOP`]):
/// the body's length (a replay gives its own), cookies, and the provider's account
/// identifiers.
pub const DROPPED_REPLY_HEADERS: &[&str] = &[
    "content-length",
    "set-cookie",
    "cookie",
    "anthropic-organization-id",
    "openai-organization",
    "openai-project",
    "x-goog-api-key",
];

/// Whether a reply header is kept in a cassette: neither [`HOP_BY_HOP`] nor
/// [`DROPPED_REPLY_HEADERS`].
pub fn kept_reply_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    !(HOP_BY_HOP.contains(&name.as_str()) || DROPPED_REPLY_HEADERS.contains(&name.as_str()))
}

/// The most a cassette holds, in bytes of its exchanges (requests as stored, replies):
/// later exchanges are dropped, and the cassette says so.
pub const MAX_CASSETTE_BYTES: usize = 16 * 1024 * 1024;

/// One run's recorded model exchange.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cassette {
    /// Where the run's requests went (no credentials).
    pub upstream: String,
    /// The names of the variables that held the run's (placeholder) credentials, so that a
    /// replay gives the agent the same ones (`ANTHROPIC_API_KEY`); no values.
    pub credentials: Vec<String>,
    /// Every request and its reply, in the order the requests came.
    pub exchanges: Vec<Exchange>,
    /// What was left out, when the run's exchange was larger than the bound.
    pub dropped: Option<Dropped>,
    /// The traffic of the run's stdio MCP servers, by server name
    /// ([`super::mcp_record`]); empty in cassettes recorded before it was kept.
    pub mcp: BTreeMap<String, super::mcp_record::McpTraffic>,
    /// The replies of the test's simulated user (`user.goal`), in the order they were
    /// given, so that a replay answers the agent's questions without the model; empty
    /// when the run had none, and in cassettes recorded before they were kept.
    pub user: Vec<UserReply>,
}

/// One reply of a test's simulated user as its model gave it (the stop token included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserReply {
    /// The agent's question.
    pub question: String,
    /// The model's reply.
    pub reply: String,
}

/// One request and its reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// `POST`.
    pub method: String,
    /// Path and query as the agent sent it, without credentials in the query.
    pub path: String,
    /// The body, normalised ([`super::normalize::Normalizer::request_json`]); a body that
    /// is not JSON is a string.
    pub request: Value,
    /// The reply's HTTP status.
    pub status: u16,
    /// The reply's content type.
    pub content_type: Option<String>,
    /// The reply's headers as the agent got them, in order, names lowercase, without
    /// [`DROPPED_REPLY_HEADERS`] (`x-should-retry`, `retry-after`, `request-id`, …);
    /// empty in a version 1 cassette.
    pub headers: Vec<(String, String)>,
    /// The reply body as the agent got it (a compressed reply decompressed), the run's
    /// paths as tokens.
    pub reply: Vec<u8>,
    /// Whether the reply ended before its end (the upstream dropped the connection).
    pub cut: bool,
}

/// What a cassette left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dropped {
    /// Exchanges left out (the last ones of the run).
    pub exchanges: u32,
    /// Their size in bytes.
    pub bytes: u64,
    /// Why: `over the 16 MiB bound`.
    pub why: String,
}

/// How a cassette is referenced from results JSON (`model_traffic.cassette`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CassetteRef {
    /// The file, relative to the results file's directory
    /// (`results.cassettes/3fa9….json.gz`).
    pub file: String,
    /// The file's SHA-256 (hex): a replay refuses a file that is not this one.
    pub sha256: String,
    /// Its size in bytes (compressed).
    pub bytes: u64,
    /// Exchanges it holds.
    pub exchanges: u32,
    /// What was left out, when anything was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<Dropped>,
}

/// Why a cassette could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    /// The file could not be read or decompressed.
    #[error("can not read the cassette {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Its content is not a cassette of a known version.
    #[error("{path} is not a cassette aptitude can read: {why}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// Its content is not the one results JSON references.
    #[error(
        "{path} is not the cassette the results reference (SHA-256 {found}, expected {expected})"
    )]
    Changed {
        /// The file.
        path: String,
        /// Its SHA-256.
        found: String,
        /// The one the results name.
        expected: String,
    },
}

// The file's JSON is built and read as `serde_json::Value`s rather than derived types: the
// format is small, and the binary carries no deserializer of its own for it.
//
// `{"cassette": 2, "upstream", "credentials": [..], "exchanges": [{"method", "path",
//   "request": {"full": <json>} | {"delta": {"same": [keys], "append": {key: [items]},
//   "set": {key: value}}}, "status", "content_type", "headers": [[name, value]],
//   "reply" | "reply_base64", "cut"}], "dropped": {..}}`

/// `request` as stored: what it adds to `base` (both objects), or whole.
fn encode(base: Option<&Value>, request: &Value) -> Value {
    let (Some(Value::Object(base)), Value::Object(now)) = (base, request) else {
        return serde_json::json!({ "full": request });
    };
    let (mut same, mut append, mut set) = (Vec::new(), Map::new(), Map::new());
    for (key, value) in now {
        match (base.get(key), value) {
            (Some(old), new) if old == new => same.push(Value::String(key.clone())),
            (Some(Value::Array(old)), Value::Array(new))
                if new.len() > old.len() && new[..old.len()] == old[..] =>
            {
                append.insert(key.clone(), Value::Array(new[old.len()..].to_vec()));
            }
            _ => {
                set.insert(key.clone(), value.clone());
            }
        }
    }
    serde_json::json!({ "delta": { "same": same, "append": append, "set": set } })
}

/// Why a request stored as a change could not be rebuilt.
#[derive(Debug, thiserror::Error)]
enum DeltaError {
    /// The stored request has neither form.
    #[error("a request is neither `full` nor `delta`")]
    NoForm,
    /// A change with nothing before it on its path.
    #[error("a request stored as a change has no earlier request to its path")]
    NoBase,
    /// A `same` entry that is not a key.
    #[error("a `same` key is not a string")]
    KeyNotString,
    /// A `same` key the earlier request lacks.
    #[error("`{0}` is not in the earlier request")]
    Missing(String),
    /// An `append` key whose earlier value is not an array.
    #[error("`{0}` is not an array of the earlier request")]
    NotArray(String),
}

/// The request `stored` describes, on `base`.
fn decode(base: Option<&Value>, stored: &Value) -> Result<Value, DeltaError> {
    if let Some(full) = stored.get("full") {
        return Ok(full.clone());
    }
    let delta = stored.get("delta").ok_or(DeltaError::NoForm)?;
    let base = base.and_then(Value::as_object).ok_or(DeltaError::NoBase)?;
    let mut out = Map::new();
    for key in delta["same"].as_array().into_iter().flatten() {
        let key = key.as_str().ok_or(DeltaError::KeyNotString)?;
        let v = base
            .get(key)
            .ok_or_else(|| DeltaError::Missing(key.to_owned()))?;
        out.insert(key.to_owned(), v.clone());
    }
    for (key, items) in delta["append"].as_object().into_iter().flatten() {
        let mut v = base
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| DeltaError::NotArray(key.clone()))?;
        v.extend(items.as_array().into_iter().flatten().cloned());
        out.insert(key.clone(), Value::Array(v));
    }
    if let Some(set) = delta["set"].as_object() {
        out.extend(set.clone());
    }
    Ok(Value::Object(out))
}

/// `text` through `redact`, every string of a JSON value included.
fn redacted_json(value: &Value, redactor: &crate::shared::redact::Redactor) -> Value {
    let mut value = value.clone();
    redactor.redact_json(&mut value);
    value
}

impl Cassette {
    /// The cassette as its file's bytes (gzip of the JSON described in the module docs),
    /// every string redacted.
    pub fn to_bytes(&self, redactor: &crate::shared::redact::Redactor) -> std::io::Result<Vec<u8>> {
        // Deltas are taken between redacted requests, which is what reading rebuilds.
        let mut last: BTreeMap<String, Value> = BTreeMap::new();
        let mut exchanges = Vec::with_capacity(self.exchanges.len());
        for e in &self.exchanges {
            let request = redacted_json(&e.request, redactor);
            let path = redactor.redact(&e.path);
            let mut exchange = serde_json::json!({
                "method": e.method,
                "path": path,
                "request": encode(last.get(&path), &request),
                "status": e.status,
            });
            match std::str::from_utf8(&e.reply) {
                Ok(text) => exchange["reply"] = Value::String(redactor.redact(text)),
                Err(_) => {
                    use base64::Engine;
                    exchange["reply_base64"] =
                        Value::String(base64::engine::general_purpose::STANDARD.encode(&e.reply));
                }
            }
            if let Some(content_type) = &e.content_type {
                exchange["content_type"] = Value::String(content_type.clone());
            }
            if !e.headers.is_empty() {
                exchange["headers"] = Value::Array(
                    e.headers
                        .iter()
                        .filter(|(name, _)| kept_reply_header(name))
                        .map(|(name, value)| serde_json::json!([name, redactor.redact(value)]))
                        .collect(),
                );
            }
            if e.cut {
                exchange["cut"] = Value::Bool(true);
            }
            last.insert(path, request);
            exchanges.push(exchange);
        }
        let mut file = serde_json::json!({
            "cassette": CASSETTE_VERSION,
            "upstream": redactor.redact(&self.upstream),
            "credentials": self.credentials,
            "exchanges": exchanges,
        });
        if !self.mcp.is_empty() {
            file["mcp"] = redacted_json(&super::mcp_record::to_json(&self.mcp), redactor);
        }
        if !self.user.is_empty() {
            let replies: Vec<Value> = self
                .user
                .iter()
                .map(|r| serde_json::json!({"question": r.question, "reply": r.reply}))
                .collect();
            file["user"] = redacted_json(&Value::Array(replies), redactor);
        }
        if let Some(dropped) = &self.dropped {
            file["dropped"] = serde_json::json!({
                "exchanges": dropped.exchanges, "bytes": dropped.bytes, "why": dropped.why,
            });
        }
        let json = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&json)?;
        gz.finish()
    }

    /// Reads a cassette from its file's bytes; `path` names it in errors.
    ///
    /// # Errors
    /// [`CassetteError::Read`] when the bytes do not decompress (or decompress to more than
    /// twice [`MAX_CASSETTE_BYTES`]), [`CassetteError::Format`] when they are not a
    /// cassette of a known version.
    pub fn from_bytes(bytes: &[u8], path: &str) -> Result<Cassette, CassetteError> {
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .take(2 * MAX_CASSETTE_BYTES as u64 + 1)
            .read_to_end(&mut json)
            .map_err(|source| CassetteError::Read {
                path: path.to_owned(),
                source,
            })?;
        let format = |why: String| CassetteError::Format {
            path: path.to_owned(),
            why,
        };
        if json.len() > 2 * MAX_CASSETTE_BYTES {
            return Err(format(
                "it is larger than any cassette aptitude writes".into(),
            ));
        }
        let file: Value = serde_json::from_slice(&json).map_err(|e| format(e.to_string()))?;
        let version = file["cassette"].as_u64().unwrap_or(0);
        if !(1..=u64::from(CASSETTE_VERSION)).contains(&version) {
            return Err(format(format!(
                "version {version} (this aptitude reads versions 1 to {CASSETTE_VERSION})"
            )));
        }
        let text = |v: &Value, key: &str| v[key].as_str().map(str::to_owned);
        let mut last: BTreeMap<String, Value> = BTreeMap::new();
        let mut exchanges = Vec::new();
        for (i, e) in file["exchanges"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let at = |why: String| format(format!("exchange {}: {why}", i + 1));
            let reply = match (text(e, "reply"), text(e, "reply_base64")) {
                (Some(reply), _) => Some(reply.into_bytes()),
                (None, Some(encoded)) => {
                    use base64::Engine;
                    let bytes = base64::engine::general_purpose::STANDARD
                        .decode(encoded)
                        .map_err(|err| at(format!("its `reply_base64` is not base64: {err}")))?;
                    Some(bytes)
                }
                (None, None) => None,
            };
            let (Some(method), Some(path), Some(reply)) =
                (text(e, "method"), text(e, "path"), reply)
            else {
                return Err(at("it lacks its method, path or reply".into()));
            };
            let request =
                decode(last.get(&path), &e["request"]).map_err(|err| at(err.to_string()))?;
            last.insert(path.clone(), request.clone());
            let headers = e["headers"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|pair| {
                    let name = pair.get(0)?.as_str()?;
                    let value = pair.get(1)?.as_str()?;
                    kept_reply_header(name).then(|| (name.to_ascii_lowercase(), value.to_owned()))
                })
                .collect();
            exchanges.push(Exchange {
                method,
                path,
                // Recorded before tools were compared as a set: compared the same way.
                request: super::normalize::sorted_tools(request),
                status: e["status"]
                    .as_u64()
                    .and_then(|s| u16::try_from(s).ok())
                    .unwrap_or(0),
                content_type: text(e, "content_type"),
                headers,
                reply,
                cut: e["cut"].as_bool().unwrap_or(false),
            });
        }
        let dropped = file
            .get("dropped")
            .filter(|d| d.is_object())
            .map(|d| Dropped {
                exchanges: d["exchanges"]
                    .as_u64()
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(0),
                bytes: d["bytes"].as_u64().unwrap_or(0),
                why: text(d, "why").unwrap_or_default(),
            });
        let mcp =
            super::mcp_record::from_json(file.get("mcp")).map_err(|e| format(e.to_string()))?;
        let user = file["user"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| UserReply {
                question: text(r, "question").unwrap_or_default(),
                reply: text(r, "reply").unwrap_or_default(),
            })
            .collect();
        Ok(Cassette {
            mcp,
            user,
            upstream: text(&file, "upstream").unwrap_or_default(),
            credentials: file["credentials"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c.as_str().map(str::to_owned))
                .collect(),
            exchanges,
            dropped,
        })
    }

    /// Writes the cassette into `dir` as `<first 16 hex of its SHA-256>.json.gz` (kept
    /// when a file of that content is there already), referenced as `<prefix>/<name>`.
    ///
    /// # Errors
    /// When the directory or file can not be written.
    pub fn write(
        &self,
        dir: &Path,
        prefix: &str,
        redactor: &crate::shared::redact::Redactor,
    ) -> std::io::Result<CassetteRef> {
        use sha2::Digest;
        let bytes = self.to_bytes(redactor)?;
        let sha256 = crate::shared::hex(&sha2::Sha256::digest(&bytes));
        let name = format!("{}.json.gz", &sha256[..16]);
        std::fs::create_dir_all(dir)?;
        let path = dir.join(&name);
        if !path.is_file() {
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            tmp.write_all(&bytes)?;
            tmp.persist(&path).map_err(|e| e.error)?;
        }
        Ok(CassetteRef {
            file: format!("{prefix}/{name}"),
            sha256,
            bytes: bytes.len() as u64,
            exchanges: self.exchanges.len() as u32,
            dropped: self.dropped.clone(),
        })
    }

    /// Reads the cassette `reference` names, relative to `dir` (the results file's
    /// directory), checking it is the file the results reference.
    ///
    /// # Errors
    /// As [`Cassette::from_bytes`], and [`CassetteError::Changed`] for another file.
    pub fn read(dir: &Path, reference: &CassetteRef) -> Result<Cassette, CassetteError> {
        use sha2::Digest;
        let path = dir.join(&reference.file);
        let shown = path.display().to_string();
        let bytes = std::fs::read(&path).map_err(|source| CassetteError::Read {
            path: shown.clone(),
            source,
        })?;
        let found = crate::shared::hex(&sha2::Sha256::digest(&bytes));
        if found != reference.sha256 {
            return Err(CassetteError::Changed {
                path: shown,
                found,
                expected: reference.sha256.clone(),
            });
        }
        Cassette::from_bytes(&bytes, &shown)
    }
}

/// Records one run's exchange as it happens.
#[derive(Debug, Default)]
pub struct Recorder {
    slots: Vec<Option<Exchange>>,
    bytes: usize,
    /// The size of the last request to each path, in bytes of JSON.
    last: BTreeMap<String, usize>,
    dropped: Option<Dropped>,
}

impl Recorder {
    /// Starts an exchange (in request order); returns its slot.
    pub fn begin(&mut self) -> usize {
        self.slots.push(None);
        self.slots.len() - 1
    }

    /// Ends the exchange in `slot`; one past the bound is dropped (and every later one).
    pub fn end(&mut self, slot: usize, exchange: Exchange) {
        // A request is stored as what it adds to the previous one to its path.
        let request = exchange.request.to_string().len();
        let before = self
            .last
            .insert(exchange.path.clone(), request)
            .unwrap_or(0);
        let size = exchange.reply.len() + request.saturating_sub(before) + 64;
        if self.dropped.is_some() || self.bytes + size > MAX_CASSETTE_BYTES {
            self.drop_one(size);
            return;
        }
        self.bytes += size;
        if let Some(s) = self.slots.get_mut(slot) {
            *s = Some(exchange);
        }
    }

    /// Counts an exchange of `size` bytes as dropped (its reply alone was over the bound):
    /// every later exchange is dropped too.
    pub fn drop_one(&mut self, size: usize) {
        let d = self.dropped.get_or_insert_with(|| Dropped {
            exchanges: 0,
            bytes: 0,
            why: format!("over the {} MiB bound", MAX_CASSETTE_BYTES / (1024 * 1024)),
        });
        d.exchanges += 1;
        d.bytes += size as u64;
    }

    /// The cassette of what was recorded (exchanges that never ended are left out).
    pub fn finish(self, upstream: String, credentials: Vec<String>) -> Cassette {
        Cassette {
            upstream,
            credentials,
            exchanges: self.slots.into_iter().flatten().collect(),
            dropped: self.dropped,
            mcp: BTreeMap::new(),
            user: Vec::new(),
        }
    }
}

/// Answers a replaying run's requests from a cassette: each request takes the first
/// exchange not yet used whose method, path and (normalised) request are the same — so
/// identical requests (a retry, a judge's votes) get the recorded replies in order.
#[derive(Debug)]
pub struct Player {
    cassette: std::sync::Arc<Cassette>,
    used: Vec<bool>,
    /// Requests seen per (method, path): the turn a request is.
    turns: BTreeMap<(String, String), usize>,
}

impl Player {
    /// A player of `cassette`, nothing used yet.
    pub fn new(cassette: std::sync::Arc<Cassette>) -> Self {
        let used = vec![false; cassette.exchanges.len()];
        Player {
            cassette,
            used,
            turns: BTreeMap::new(),
        }
    }

    /// The recorded exchange answering this request.
    ///
    /// # Errors
    /// The [`Divergence`]: which request (`turn 3 of POST /v1/messages`) and what differed
    /// from the recorded one (the first differing field, both values), or that the
    /// recording holds no such request.
    pub fn answer(
        &mut self,
        method: &str,
        path: &str,
        request: &Value,
    ) -> Result<&Exchange, Divergence> {
        let turn = {
            let t = self
                .turns
                .entry((method.to_owned(), path.to_owned()))
                .or_default();
            *t += 1;
            *t
        };
        let same_call = |e: &Exchange| e.method == method && e.path == path;
        let exchanges = &self.cassette.exchanges;
        // The same request, else the same up to honest orders (parallel results, tools,
        // a system prompt's lines: `unordered`).
        let found = (0..exchanges.len())
            .find(|&i| {
                !self.used[i] && same_call(&exchanges[i]) && exchanges[i].request == *request
            })
            .or_else(|| {
                (0..exchanges.len()).find(|&i| {
                    !self.used[i]
                        && same_call(&exchanges[i])
                        && super::unordered::same_request(&exchanges[i].request, request)
                })
            });
        if let Some(i) = found {
            self.used[i] = true;
            return Ok(&exchanges[i]);
        }
        let candidate = (0..exchanges.len()).find(|&i| !self.used[i] && same_call(&exchanges[i]));
        let what = match candidate {
            Some(i) => match super::normalize::first_difference(&exchanges[i].request, request) {
                Some((field, recorded, now)) => Diverged::Field {
                    field,
                    recorded,
                    now,
                },
                None => Diverged::Request,
            },
            None => Diverged::Missing {
                recorded: exchanges.iter().filter(|e| same_call(e)).count(),
                dropped: self.cassette.dropped.clone(),
            },
        };
        Err(Divergence {
            method: method.to_owned(),
            path: path.to_owned(),
            turn,
            what: Box::new(what),
        })
    }
}

/// A request of a replayed run that the cassette does not answer: `turn 3 of POST
/// /v1/messages differs from the recorded request at `messages[2]`: recorded "exit 0",
/// now "exit 3"`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("turn {turn} of {method} {path} {what}")]
pub struct Divergence {
    /// The request's HTTP method.
    pub method: String,
    /// Its path (as recorded: without the run's endpoint prefix).
    pub path: String,
    /// Which request of this method and path it was, from 1.
    pub turn: usize,
    /// What differed (boxed: a divergence is rare and its values long).
    pub what: Box<Diverged>,
}

/// What differed between a request and the cassette (see [`Divergence`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Diverged {
    /// The first field that differs from the recorded request, with both values (JSON).
    #[error("differs from the recorded request at `{field}`: recorded {recorded}, now {now}")]
    Field {
        /// The field's path (`messages[2]`).
        field: String,
        /// The recorded value.
        recorded: String,
        /// This run's value.
        now: String,
    },
    /// The request differs in a way no single field shows.
    #[error("differs from the recorded request")]
    Request,
    /// No unused exchange of this method and path is left.
    #[error(
        "has no recorded counterpart: the recording holds {recorded} such request{}{}",
        if *recorded == 1 { "" } else { "s" },
        dropped.as_ref().map(|d| format!(" ({} later exchanges were dropped from the recording: {})", d.exchanges, d.why)).unwrap_or_default()
    )]
    Missing {
        /// How many requests of this method and path the recording holds.
        recorded: usize,
        /// What the recording dropped past its size bound.
        dropped: Option<Dropped>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn exchange(path: &str, request: Value, reply: &str) -> Exchange {
        Exchange {
            method: "POST".into(),
            path: path.into(),
            request,
            status: 200,
            content_type: Some("text/event-stream".into()),
            headers: vec![("content-type".into(), "text/event-stream".into())],
            reply: reply.into(),
            cut: false,
        }
    }

    #[test]
    fn a_cassette_round_trips_with_requests_stored_as_changes_and_secrets_redacted() {
        let system = "a long system prompt ".repeat(500);
        let turn = |n: usize| {
            let messages: Vec<Value> = (0..n)
                .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("m{i}")}))
                .collect();
            json!({"model": "m", "system": system, "messages": messages, "stream": true})
        };
        let cassette = Cassette {
            upstream: "https://api.anthropic.com".into(),
            credentials: vec!["ANTHROPIC_API_KEY".into()],
            exchanges: vec![
                exchange("/v1/messages", turn(1), "event: message_start\n\n"),
                exchange("/v1/messages/count_tokens", json!({"x": 1}), "{}"),
                exchange(
                    "/v1/messages",
                    turn(3),
                    "data: sk-ant-api03-abcdefghijklmnop\n\n",
                ),
                exchange("/v1/messages", json!({"model": "n", "messages": []}), "x"),
            ],
            dropped: None,
            mcp: [(
                "docs".to_owned(),
                super::super::mcp_record::McpTraffic {
                    exchanges: vec![super::super::mcp_record::McpExchange {
                        method: "tools/call".into(),
                        params: json!({"name": "get", "arguments": {}}),
                        answer: Ok(json!({"content": [{"type": "text", "text": "token sk-ant-api03-abcdefghijklmnop"}]})),
                    }],
                    dropped: 0,
                },
            )]
            .into(),
            user: vec![UserReply {
                question: "How many sides?".into(),
                reply: "Six, key sk-ant-api03-abcdefghijklmnop".into(),
            }],
        };
        let redactor = crate::shared::redact::Redactor::new([]);
        let bytes = cassette.to_bytes(&redactor).unwrap();
        let mut json = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut json)
            .unwrap();
        let text = String::from_utf8(json).unwrap();
        assert_eq!(
            text.matches("a long system prompt").count(),
            500,
            "the system prompt is stored once"
        );
        assert!(text.contains("\"append\":{\"messages\""), "{text}");
        let read = Cassette::from_bytes(&bytes, "c").unwrap();
        assert_eq!(read.exchanges[0], cassette.exchanges[0]);
        assert_eq!(read.exchanges[2].request, cassette.exchanges[2].request);
        assert_eq!(read.exchanges[3].request, cassette.exchanges[3].request);
        assert_eq!(read.exchanges[2].reply, b"data: [REDACTED]\n\n");
        let docs = &read.mcp["docs"].exchanges[0];
        assert_eq!(docs.method, "tools/call");
        assert_eq!(
            docs.answer.as_ref().unwrap()["content"][0]["text"],
            "token [REDACTED]",
            "the MCP traffic is redacted too"
        );
        assert_eq!(
            read.user,
            [UserReply {
                question: "How many sides?".into(),
                reply: "Six, key [REDACTED]".into(),
            }],
            "the simulated user's replies are kept, redacted"
        );
        // Written by content: the same cassette is one file.
        let dir = tempfile::tempdir().unwrap();
        let a = cassette
            .write(dir.path(), "r.cassettes", &redactor)
            .unwrap();
        let b = cassette
            .write(dir.path(), "r.cassettes", &redactor)
            .unwrap();
        assert_eq!(a, b);
        assert!(a.file.starts_with("r.cassettes/") && a.file.ends_with(".json.gz"));
        let read = Cassette::read(
            &dir.path().join(".."),
            &CassetteRef {
                file: format!(
                    "{}/{}",
                    dir.path().file_name().unwrap().to_string_lossy(),
                    a.file.rsplit('/').next().unwrap()
                ),
                ..a.clone()
            },
        );
        assert!(read.is_ok(), "{read:?}");
        let mut changed = a.clone();
        changed.sha256 = "0".repeat(64);
        let wrong = Cassette::read(
            dir.path().parent().unwrap(),
            &CassetteRef {
                file: format!(
                    "{}/{}",
                    dir.path().file_name().unwrap().to_string_lossy(),
                    a.file.rsplit('/').next().unwrap()
                ),
                ..changed
            },
        );
        assert!(
            matches!(wrong, Err(CassetteError::Changed { .. })),
            "{wrong:?}"
        );
        assert!(matches!(
            Cassette::from_bytes(b"nope", "x"),
            Err(CassetteError::Read { .. })
        ));
    }

    #[test]
    fn a_replay_answers_in_order_and_names_where_a_request_diverged() {
        let c = std::sync::Arc::new(Cassette {
            mcp: BTreeMap::new(),
            user: Vec::new(),
            upstream: "u".into(),
            credentials: Vec::new(),
            exchanges: vec![
                exchange("/v1/messages", json!({"messages": ["a"]}), "first"),
                exchange("/v1/messages", json!({"messages": ["a"]}), "again"),
                exchange(
                    "/v1/messages",
                    json!({"messages": ["a", "b", "exit 0"]}),
                    "second",
                ),
            ],
            dropped: None,
        });
        let mut p = Player::new(std::sync::Arc::clone(&c));
        let a = json!({"messages": ["a"]});
        assert_eq!(
            p.answer("POST", "/v1/messages", &a).unwrap().reply,
            b"first"
        );
        assert_eq!(
            p.answer("POST", "/v1/messages", &a).unwrap().reply,
            b"again"
        );
        let changed = json!({"messages": ["a", "b", "exit 3"]});
        assert_eq!(
            p.answer("POST", "/v1/messages", &changed)
                .unwrap_err()
                .to_string(),
            "turn 3 of POST /v1/messages differs from the recorded request at `messages[2]`: recorded \"exit 0\", now \"exit 3\""
        );
        let mut p = Player::new(c);
        for _ in 0..3 {
            let _ = p.answer("POST", "/v1/messages", &json!({"messages": ["a"]}));
        }
        assert!(
            p.answer("POST", "/v1/messages/count_tokens", &json!({}))
                .unwrap_err()
                .to_string()
                .ends_with("has no recorded counterpart: the recording holds 0 such requests")
        );
    }

    /// Parallel tool results sent in another order than recorded (Claude Code sends them
    /// as its commands finish) are answered from the cassette; a changed result is not.
    #[test]
    fn a_replay_matches_parallel_results_in_any_order() {
        let results = |a: &str, b: &str| {
            json!({"messages": [{"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": a, "content": a},
                {"type": "tool_result", "tool_use_id": b, "content": b}]}]})
        };
        let c = std::sync::Arc::new(Cassette {
            mcp: BTreeMap::new(),
            user: Vec::new(),
            upstream: "u".into(),
            credentials: Vec::new(),
            exchanges: vec![exchange("/v1/messages", results("t1", "t2"), "next")],
            dropped: None,
        });
        let mut p = Player::new(std::sync::Arc::clone(&c));
        assert_eq!(
            p.answer("POST", "/v1/messages", &results("t2", "t1"))
                .unwrap()
                .reply,
            b"next"
        );
        let mut p = Player::new(c);
        assert!(
            p.answer("POST", "/v1/messages", &results("t2", "t3"))
                .is_err()
        );
    }

    #[test]
    fn a_recording_past_the_bound_keeps_its_first_exchanges_and_says_what_was_dropped() {
        let mut r = Recorder::default();
        let big = "x".repeat(MAX_CASSETTE_BYTES / 2);
        let slots: Vec<usize> = (0..4).map(|_| r.begin()).collect();
        for (i, slot) in slots.into_iter().enumerate() {
            r.end(slot, exchange("/v1/messages", json!({"i": i}), &big));
        }
        let c = r.finish("u".into(), Vec::new());
        assert_eq!(c.exchanges.len(), 1);
        let d = c.dropped.unwrap();
        assert_eq!(d.exchanges, 3);
        assert!(d.why.contains("16 MiB"), "{}", d.why);
    }

    /// Version 2 keeps the reply's headers (never a cookie or an account id) and a body
    /// that is not text byte for byte; a version 1 cassette, which kept only the content
    /// type, still reads, its tools compared as a set.
    #[test]
    fn version_2_keeps_headers_and_bytes_and_version_1_still_reads() {
        let mut binary = exchange("/v1/messages", json!({"m": 1}), "");
        binary.reply = vec![0x1f, 0x8b, 0xff, 0x00, b'x'];
        binary.headers = vec![
            ("content-type".into(), "application/octet-stream".into()),
            ("content-encoding".into(), "br".into()),
            ("x-should-retry".into(), "false".into()),
            ("retry-after".into(), "7".into()),
            ("request-id".into(), "req_011CAuth".into()),
            ("set-cookie".into(), "session=s".into()),
            ("anthropic-organization-id".into(), "org-1".into()),
            ("content-length".into(), "5".into()),
        ];
        let c = Cassette {
            upstream: "u".into(),
            exchanges: vec![binary],
            ..Cassette::default()
        };
        let redactor = crate::shared::redact::Redactor::new([]);
        let read = Cassette::from_bytes(&c.to_bytes(&redactor).unwrap(), "c").unwrap();
        let e = &read.exchanges[0];
        assert_eq!(e.reply, vec![0x1f, 0x8b, 0xff, 0x00, b'x']);
        let names: Vec<&str> = e.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "content-type",
                "content-encoding",
                "x-should-retry",
                "retry-after",
                "request-id"
            ]
        );

        let v1 = json!({"cassette": 1, "upstream": "u", "credentials": [], "exchanges": [{
            "method": "POST", "path": "/v1beta/models/m:streamGenerateContent?alt=sse",
            "request": {"full": {"tools": [{"functionDeclarations": [{"name": "b"}, {"name": "a"}]}]}},
            "status": 200, "content_type": "text/event-stream", "reply": "data: {}\n\n", "cut": true
        }]});
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(v1.to_string().as_bytes()).unwrap();
        let old = Cassette::from_bytes(&gz.finish().unwrap(), "old").unwrap();
        let e = &old.exchanges[0];
        assert!(e.headers.is_empty() && e.cut);
        assert_eq!(e.reply, b"data: {}\n\n");
        assert_eq!(
            e.request["tools"][0]["functionDeclarations"],
            json!([{"name": "a"}, {"name": "b"}])
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(br#"{"cassette": 3, "exchanges": []}"#)
            .unwrap();
        assert!(matches!(
            Cassette::from_bytes(&gz.finish().unwrap(), "new"),
            Err(CassetteError::Format { .. })
        ));
    }
}
