//! What the gateway lends a run: the inference endpoints its agent needs, and the real
//! credential in the protocol's own credential header, nothing more.
//!
//! The agent holds placeholders, not keys; the gateway is the one place a placeholder
//! becomes the real credential, so it must not lend the key's whole power. Every request is
//! checked here before anything is forwarded:
//!
//! | protocol | method and path (after the upstream's base path) |
//! |---|---|
//! | Anthropic Messages | `POST /v1/messages`, `POST /v1/messages/count_tokens`, `GET /v1/models` |
//! | OpenAI Responses | `POST /responses`, `POST /v1/responses`, `GET /models`, `GET /v1/models` |
//! | OpenAI Chat Completions | `POST /chat/completions`, `POST /v1/chat/completions`, `GET /models`, `GET /v1/models` |
//! | Gemini | `POST /v1beta/models/MODEL:generateContent`, `:streamGenerateContent`, `:countTokens` (also under `/v1/`) |
//!
//! Only the rows of the protocols the run's agent speaks are open to it
//! ([`super::RunGateway::protocols`]: Claude Code speaks Anthropic Messages, Codex the
//! Responses API, Gemini CLI Gemini's, the OpenAI-compatible agents Chat Completions);
//! a request for another protocol's endpoint is refused, so that a run can not spend on a
//! protocol its agent never sends (and that its meter may not read).
//!
//! A model list (`GET …/models`) is there because the clients ask for it at start and it
//! spends nothing: Codex CLI and the OpenAI-compatible clients, and Claude Code, which asks
//! a base URL that is not Anthropic's for `GET /v1/models?limit=1000` ("gateway
//! discovery"; it carries on without it). Everything else — a single model's page, the
//! Files, Batches, Admin and fine-tuning APIs, any other method, a path with `..`, `//`, `%`
//! escapes or a fragment — is refused with `403` and counted ([`super::Traffic::refused`]).
//!
//! The placeholder becomes the real credential only in a credential header
//! ([`CREDENTIAL_HEADERS`]); a placeholder anywhere else in the request line or the
//! headers (`anthropic-beta: <placeholder>`, `?key=<placeholder>`) gets the request
//! refused: an upstream that echoes a header in its error would otherwise hand the key to
//! the agent. (Request bodies carry the placeholder legitimately: a tool result that
//! printed the agent's environment; they are forwarded as they are, never substituted.)

use hyper::Method;
use hyper::header::HeaderName;

use super::protocol::Protocol;

/// The headers the real credential may be put in (as sent by the pinned clients:
/// Claude Code's `x-api-key` or `authorization: Bearer`, the OpenAI SDKs' `authorization:
/// Bearer`, Gemini CLI's `x-goog-api-key`, Azure OpenAI's `api-key`).
pub const CREDENTIAL_HEADERS: &[&str] =
    &["x-api-key", "authorization", "x-goog-api-key", "api-key"];

/// The gateway's answer to a request before it is forwarded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// A model call: forwarded and metered.
    Model(super::protocol::Protocol),
    /// An endpoint that spends nothing (token counts, model lists): forwarded, counted.
    Auxiliary,
}

/// Why a request was refused (HTTP 403), as the agent and the results are told.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Not one of the inference endpoints of the module table.
    #[error(
        "aptitude's model gateway forwards only inference endpoints; `{method} {path}` is not one (docs/security.md lists them)"
    )]
    NotInference {
        /// The request's method.
        method: String,
        /// Its path, without the query, cut to 200 characters.
        path: String,
    },
    /// An endpoint of a protocol the run's agent does not speak.
    #[error(
        "aptitude's model gateway refused `{method} {path}`: it is an endpoint of {protocol}, which this run's agent does not speak (it speaks {speaks})"
    )]
    NotSpoken {
        /// The request's method.
        method: String,
        /// Its path, without the query, cut to 200 characters.
        path: String,
        /// The endpoint's protocol (`OpenAI Chat Completions`).
        protocol: String,
        /// The protocols the agent speaks, joined (`Anthropic Messages`).
        speaks: String,
    },
    /// A request that would have the provider fetch a URL on a host the test does not list
    /// under `network:`.
    #[error(
        "aptitude's model gateway refused this request: at `{at}` it asks the provider to fetch {what}, {why}; list the host under the test's `network:` to allow it"
    )]
    ProviderFetch {
        /// Where in the request (`messages[0].content[1].source`, `tools[2]`).
        at: String,
        /// `` `https://host/path` `` or `any URL the model picks (web_fetch)`.
        what: String,
        /// Why it is not allowed.
        why: String,
    },
    /// The placeholder credential outside a credential header.
    #[error(
        "aptitude's model gateway refused `{method} {path}`: the placeholder credential appears in {place}, where the real key is never put"
    )]
    PlaceholderMisplaced {
        /// The request's method.
        method: String,
        /// Its path, without the query.
        path: String,
        /// `the header anthropic-beta`, `the query string`, `the path`.
        place: String,
    },
}

/// Whether `method path` is an endpoint the gateway forwards, `base` being the upstream's
/// base path (`""`, `/v1`, `/api/v1`), to a run whose agent speaks `speaks` (empty: every
/// protocol).
///
/// # Errors
/// [`Refused::NotInference`] for anything not in the module table, [`Refused::NotSpoken`]
/// for an endpoint of none of `speaks`.
pub fn admit(
    method: &Method,
    base: &str,
    path: &str,
    speaks: &[Protocol],
) -> Result<Admission, Refused> {
    let refused = || Refused::NotInference {
        method: method.to_string(),
        path: crate::shared::cut::chars(path, 200).kept.to_owned(),
    };
    if path.contains("..") || path.contains("//") || path.contains('%') || path.contains('#') {
        return Err(refused());
    }
    let rest = path.strip_prefix(base).ok_or_else(refused)?;
    let (admission, of) = endpoint(method, rest).ok_or_else(refused)?;
    if speaks.is_empty() || of.iter().any(|p| speaks.contains(p)) {
        return Ok(admission);
    }
    let names = |ps: &[Protocol]| ps.iter().map(|p| p.name()).collect::<Vec<_>>().join(" or ");
    Err(Refused::NotSpoken {
        method: method.to_string(),
        path: crate::shared::cut::chars(path, 200).kept.to_owned(),
        protocol: names(of),
        speaks: names(speaks),
    })
}

/// The endpoint `method rest` of the module table, and the protocols it belongs to.
fn endpoint(method: &Method, rest: &str) -> Option<(Admission, &'static [Protocol])> {
    use Protocol::{Anthropic, Chat, Gemini, Responses};
    let post = *method == Method::POST;
    let get = *method == Method::GET;
    match rest {
        "/v1/messages" if post => Some((Admission::Model(Anthropic), &[Anthropic])),
        "/v1/messages/count_tokens" if post => Some((Admission::Auxiliary, &[Anthropic])),
        "/responses" | "/v1/responses" if post => Some((Admission::Model(Responses), &[Responses])),
        "/chat/completions" | "/v1/chat/completions" if post => {
            Some((Admission::Model(Chat), &[Chat]))
        }
        "/v1/models" if get => Some((Admission::Auxiliary, &[Anthropic, Responses, Chat])),
        "/models" if get => Some((Admission::Auxiliary, &[Responses, Chat])),
        _ if post => gemini(rest).map(|a| (a, &[Gemini][..])),
        _ => None,
    }
}

/// A Gemini call `/v1beta/models/MODEL:METHOD` (or `/v1/…`) with a model name of letters,
/// digits, `.`, `-` and `_`.
fn gemini(rest: &str) -> Option<Admission> {
    let call = rest
        .strip_prefix("/v1beta/models/")
        .or_else(|| rest.strip_prefix("/v1/models/"))?;
    let (model, method) = call.split_once(':')?;
    let model_ok = !model.is_empty()
        && model
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !model_ok {
        return None;
    }
    match method {
        "generateContent" | "streamGenerateContent" => Some(Admission::Model(Protocol::Gemini)),
        "countTokens" => Some(Admission::Auxiliary),
        _ => None,
    }
}

/// A URL a request has the provider fetch (see [`provider_fetch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetch {
    /// Where in the request, as a JSON path (`messages[0].content[1].source`).
    pub at: String,
    /// The URL; `None` for a server-side fetch tool, which fetches whatever the model picks.
    pub url: Option<String>,
    /// What asks for it (`mcp_servers`, `source.type url`, `web_fetch tool`).
    pub kind: &'static str,
}

/// Request fields that make the provider itself fetch a URL: Anthropic's `mcp_servers`
/// (`url`), image and document `source: {type: "url", url}`, and its `web_fetch` server
/// tool; the Responses API's `mcp` tools (`server_url`), `input_image.image_url` and
/// `input_file.file_url`; Chat Completions' `image_url.url`; Gemini's `fileData.fileUri`
/// and its `urlContext` tool. `data:` URLs and uploaded file ids fetch nothing.
pub fn provider_fetches(body: &[u8]) -> Vec<Fetch> {
    const NEEDLES: &[&str] = &[
        "\"mcp_servers\"",
        "\"url\"",
        "\"server_url\"",
        "\"image_url\"",
        "\"file_url\"",
        "\"fileUri\"",
        "\"file_uri\"",
        "web_fetch",
        "urlContext",
        "url_context",
    ];
    // Most requests hold none of these: no need to build the whole document.
    if !NEEDLES
        .iter()
        .any(|n| memchr::memmem::find(body, n.as_bytes()).is_some())
    {
        return Vec::new();
    }
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    walk(&doc, String::new(), &mut found);
    found
}

fn walk(v: &serde_json::Value, at: String, found: &mut Vec<Fetch>) {
    use serde_json::Value;
    let fetched = |url: &Value| {
        url.as_str()
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
            .map(str::to_owned)
    };
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, format!("{at}[{i}]"), found);
            }
        }
        Value::Object(map) => {
            let kind = map.get("type").and_then(Value::as_str).unwrap_or("");
            let mut note = |url: Option<String>, kind: &'static str| {
                found.push(Fetch {
                    at: if at.is_empty() {
                        "(top)".into()
                    } else {
                        at.clone()
                    },
                    url,
                    kind,
                });
            };
            if kind == "url"
                && let Some(url) = map.get("url").and_then(fetched)
            {
                note(Some(url), "a source of type url");
            }
            if kind == "mcp"
                && let Some(url) = map.get("server_url").and_then(fetched)
            {
                note(Some(url), "an MCP server");
            }
            if kind.starts_with("web_fetch") {
                note(None, "the web_fetch tool");
            }
            for key in ["image_url", "file_url", "fileUri", "file_uri"] {
                let url = map
                    .get(key)
                    .and_then(|u| fetched(u).or_else(|| u.get("url").and_then(fetched)));
                if let Some(url) = url {
                    note(Some(url), "a file or image by URL");
                }
            }
            if map.contains_key("urlContext") || map.contains_key("url_context") {
                note(None, "Gemini's urlContext tool");
            }
            for (key, value) in map {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                if key == "mcp_servers" {
                    for (i, server) in value.as_array().into_iter().flatten().enumerate() {
                        if let Some(url) = server.get("url").and_then(fetched) {
                            found.push(Fetch {
                                at: format!("{path}[{i}]"),
                                url: Some(url),
                                kind: "an MCP server",
                            });
                        }
                    }
                    continue;
                }
                walk(value, path, found);
            }
        }
        _ => {}
    }
}

/// The first of `fetches` the test's `network:` hosts (`allow`, as the sandbox's proxy
/// reads them) do not cover, as a refusal: a URL on another host, or a fetch tool, whose
/// URLs the model picks.
pub fn refused_fetch(fetches: &[Fetch], allow: &[String]) -> Option<Refused> {
    fetches.iter().find_map(|f| {
        let cut = |t: &str| crate::shared::cut::chars(t, 200).kept.to_owned();
        let Some(url) = &f.url else {
            return Some(Refused::ProviderFetch {
                at: cut(&f.at),
                what: format!("any URL the model picks ({})", f.kind),
                why: "which no `network:` entry can bound".into(),
            });
        };
        let parsed = url::Url::parse(url).ok();
        let host = parsed
            .as_ref()
            .and_then(|u| u.host_str().map(str::to_owned));
        let port = parsed.as_ref().and_then(url::Url::port_or_known_default);
        let ok = match (host, port) {
            (Some(host), Some(port)) => crate::sandbox::proxy::allowed(allow, &host, port),
            _ => false,
        };
        (!ok).then(|| Refused::ProviderFetch {
            at: cut(&f.at),
            what: format!("`{}` ({})", cut(url), f.kind),
            why: "a host not listed under the test's `network:`".into(),
        })
    })
}

/// Whether `name` is a header the real credential may be put in.
pub fn is_credential_header(name: &HeaderName) -> bool {
    CREDENTIAL_HEADERS.contains(&name.as_str())
}

/// Where a placeholder appears outside the credential headers, if it does: `the path`,
/// `the query string`, `the header NAME`. `placeholders` are the run's.
pub fn misplaced<'a>(
    path_and_query: &str,
    headers: impl IntoIterator<Item = (&'a HeaderName, &'a [u8])>,
    placeholders: &[&str],
) -> Option<String> {
    let holds = |bytes: &[u8]| {
        placeholders
            .iter()
            .any(|p| !p.is_empty() && memchr::memmem::find(bytes, p.as_bytes()).is_some())
    };
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    // A placeholder percent-encoded in the query is still the placeholder.
    let decoded_query: String = form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    if holds(path.as_bytes()) {
        return Some("the path".into());
    }
    if holds(query.as_bytes()) || holds(decoded_query.as_bytes()) {
        return Some("the query string".into());
    }
    headers
        .into_iter()
        .find(|(name, value)| !is_credential_header(name) && holds(value))
        .map(|(name, _)| format!("the header `{name}`"))
}

/// Takes each real secret out of a reply streamed in pieces, in every form the gateway
/// knows, so that an upstream that quotes the key back (in an error about a malformed
/// header, say) never hands it to the agent:
/// - as it is, and reversed;
/// - JSON-escaped: any of its characters written `\uXXXX` (either case) or `\/`, the
///   whole key or only some characters;
/// - base64 (standard and URL-safe alphabets, at each of the three alignments a key can
///   have inside longer encoded text), and lowercase hex.
///
/// A form split across two pieces is still found: the end of a piece that could begin a
/// form is held back until the next one (or the end). Derived forms (reversed, base64,
/// hex) are looked for only for secrets of 16 bytes or more, where they can not match by
/// chance.
#[derive(Debug)]
pub struct Scrubber {
    /// Byte patterns replaced wherever they appear: each secret, and its derived forms.
    patterns: Vec<Vec<u8>>,
    /// The secrets, also found with JSON escapes mixed in.
    secrets: Vec<Vec<u8>>,
    held: Vec<u8>,
    /// How many secrets were taken out.
    pub scrubbed: u32,
}

/// What a secret is replaced by in a reply.
pub const SCRUBBED: &[u8] = b"[REDACTED by aptitude]";

/// The shortest secret whose derived forms are looked for, in bytes.
const DERIVED_FROM: usize = 16;

/// The forms of `secret` matched byte for byte (see [`Scrubber`]).
fn forms(secret: &[u8]) -> Vec<Vec<u8>> {
    use base64::Engine;
    let mut forms = vec![secret.to_vec()];
    if secret.len() < DERIVED_FROM {
        return forms;
    }
    forms.push(secret.iter().rev().copied().collect());
    forms.push(crate::shared::hex(secret).into_bytes());
    for engine in [
        &base64::engine::general_purpose::STANDARD_NO_PAD,
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ] {
        for offset in 0..3 {
            // Encoded after `offset` other bytes: the characters that hold only the
            // secret's bits are the same whatever surrounds it.
            let mut shifted = vec![0u8; offset];
            shifted.extend_from_slice(secret);
            let encoded = engine.encode(&shifted);
            let skip = (offset * 8).div_ceil(6);
            let keep = (shifted.len() * 8) / 6;
            if let Some(core) = encoded.as_bytes().get(skip..keep) {
                forms.push(core.to_vec());
            }
        }
    }
    forms.sort();
    forms.dedup();
    forms
}

/// How `text` begins with `secret` written with JSON escapes (`\uXXXX`, `\/`) or without.
enum Escaped {
    /// It does, over this many bytes.
    Whole(usize),
    /// `text` ends before it could tell.
    Partial,
    /// It does not.
    No,
}

fn escaped_prefix(text: &[u8], secret: &[u8]) -> Escaped {
    let mut j = 0;
    for &want in secret {
        let Some(&b) = text.get(j) else {
            return Escaped::Partial;
        };
        if b == want {
            j += 1;
            continue;
        }
        if b != b'\\' {
            return Escaped::No;
        }
        let rest = &text[j..];
        if rest.len() >= 2 && rest[1] == b'/' {
            if want != b'/' {
                return Escaped::No;
            }
            j += 2;
            continue;
        }
        if rest.len() < 6 {
            let could = rest.get(1).is_none_or(|&u| u == b'u')
                && rest.iter().skip(2).all(u8::is_ascii_hexdigit);
            return if could { Escaped::Partial } else { Escaped::No };
        }
        let code = std::str::from_utf8(&rest[2..6])
            .ok()
            .filter(|_| rest[1] == b'u')
            .and_then(|hex| u32::from_str_radix(hex, 16).ok());
        if code != Some(u32::from(want)) {
            return Escaped::No;
        }
        j += 6;
    }
    Escaped::Whole(j)
}

impl Scrubber {
    /// A scrubber of `secrets` (shorter than 4 bytes ignored); `None` when there is
    /// nothing to scrub.
    pub fn new(secrets: impl IntoIterator<Item = String>) -> Option<Self> {
        let secrets: Vec<Vec<u8>> = secrets
            .into_iter()
            .filter(|s| s.len() >= 4)
            .map(String::into_bytes)
            .collect();
        let patterns = secrets.iter().flat_map(|s| forms(s)).collect();
        (!secrets.is_empty()).then(|| Scrubber {
            patterns,
            secrets,
            held: Vec::new(),
            scrubbed: 0,
        })
    }

    /// How many bytes at the end of `text` could begin a form of a secret: what must wait
    /// for the next piece (usually none, so the stream is not delayed).
    fn could_begin_a_secret(&self, text: &[u8]) -> usize {
        let plain = self
            .patterns
            .iter()
            .map(|p| {
                (1..p.len().min(text.len() + 1))
                    .rev()
                    .find(|&k| text.ends_with(&p[..k]))
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        // An escaped form is at most six bytes a character.
        let longest = self.secrets.iter().map(Vec::len).max().unwrap_or(0) * 6;
        let from = text.len().saturating_sub(longest);
        let escaped = (from..text.len())
            .find(|&i| {
                self.secrets
                    .iter()
                    .any(|s| matches!(escaped_prefix(&text[i..], s), Escaped::Partial))
            })
            .map_or(0, |i| text.len() - i);
        plain.max(escaped)
    }

    /// The next piece of the reply: what can be passed on now.
    pub fn push(&mut self, piece: &[u8]) -> Vec<u8> {
        self.held.extend_from_slice(piece);
        let mut text = std::mem::take(&mut self.held);
        self.replace_all(&mut text);
        let keep = self.could_begin_a_secret(&text);
        self.held = text.split_off(text.len() - keep);
        text
    }

    /// The end of the reply: what was held back.
    pub fn finish(&mut self) -> Vec<u8> {
        let mut text = std::mem::take(&mut self.held);
        self.replace_all(&mut text);
        text
    }

    /// Scrubs a whole value (a header).
    pub fn scrub_once(&mut self, value: &[u8]) -> Option<Vec<u8>> {
        let mut text = value.to_vec();
        let before = self.scrubbed;
        self.replace_all(&mut text);
        (self.scrubbed != before).then_some(text)
    }

    fn replace_all(&mut self, text: &mut Vec<u8>) {
        for pattern in &self.patterns {
            while let Some(at) = memchr::memmem::find(text, pattern) {
                text.splice(at..at + pattern.len(), SCRUBBED.iter().copied());
                self.scrubbed = self.scrubbed.saturating_add(1);
            }
        }
        for secret in &self.secrets {
            let mut i = 0;
            while i < text.len() {
                if (text[i] == secret[0] || text[i] == b'\\')
                    && let Escaped::Whole(n) = escaped_prefix(&text[i..], secret)
                {
                    text.splice(i..i + n, SCRUBBED.iter().copied());
                    self.scrubbed = self.scrubbed.saturating_add(1);
                    i += SCRUBBED.len();
                    continue;
                }
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_inference_endpoints_are_forwarded() {
        let ok = [
            (
                Method::POST,
                "",
                "/v1/messages",
                Admission::Model(Protocol::Anthropic),
            ),
            (
                Method::POST,
                "",
                "/v1/messages/count_tokens",
                Admission::Auxiliary,
            ),
            (
                Method::POST,
                "/v1",
                "/v1/responses",
                Admission::Model(Protocol::Responses),
            ),
            (Method::GET, "/v1", "/v1/models", Admission::Auxiliary),
            (
                Method::POST,
                "/api/v1",
                "/api/v1/chat/completions",
                Admission::Model(Protocol::Chat),
            ),
            (
                Method::POST,
                "",
                "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
                Admission::Model(Protocol::Gemini),
            ),
            (
                Method::POST,
                "",
                "/v1beta/models/gemini-2.5-pro:countTokens",
                Admission::Auxiliary,
            ),
        ];
        for (method, base, path, want) in ok {
            assert_eq!(
                admit(&method, base, path, &[]),
                Ok(want),
                "{method} {base} {path}"
            );
        }
        for (method, base, path) in [
            (Method::GET, "", "/v1/files"),
            (Method::DELETE, "", "/v1/files/file_011"),
            (Method::POST, "", "/v1/messages/batches"),
            (Method::GET, "", "/v1/messages/batches"),
            (Method::GET, "", "/v1/organizations/api_keys"),
            (Method::POST, "/v1", "/v1/files"),
            (Method::POST, "/v1", "/v1/batches"),
            (Method::POST, "/v1", "/v1/fine_tuning/jobs"),
            (Method::GET, "", "/v1/messages"),
            (Method::POST, "", "/v1/messages/../files"),
            (Method::POST, "", "/v1//messages"),
            (Method::POST, "", "/v1/%6dessages"),
            (Method::POST, "", "/v1beta/files"),
            (
                Method::POST,
                "",
                "/v1beta/models/x/../../files:generateContent",
            ),
            (
                Method::POST,
                "",
                "/v1beta/models/gemini:batchGenerateContent",
            ),
            (Method::POST, "/v1", "/v2/responses"),
            (Method::PUT, "/v1", "/v1/responses"),
            (Method::GET, "", "/v1/models/claude-sonnet-4-5"),
        ] {
            assert!(
                matches!(
                    admit(&method, base, path, &[]),
                    Err(Refused::NotInference { .. })
                ),
                "{method} {base} {path} must be refused"
            );
        }
    }

    /// Each run gets the endpoints of the protocols its agent speaks, exactly as the module
    /// table says: Claude Code its Messages, token count and model list (its gateway
    /// discovery); never Chat Completions, Responses or Gemini — 40 Chat Completions
    /// streams sent to a Claude run's gateway were forwarded unmetered.
    #[test]
    fn a_run_gets_only_the_endpoints_of_the_protocols_its_agent_speaks() {
        let claude = [Protocol::Anthropic];
        for (method, path) in [
            (Method::POST, "/v1/messages"),
            (Method::POST, "/v1/messages/count_tokens"),
            (Method::GET, "/v1/models"),
        ] {
            assert!(admit(&method, "", path, &claude).is_ok(), "{method} {path}");
        }
        for (method, path) in [
            (Method::POST, "/v1/chat/completions"),
            (Method::POST, "/chat/completions"),
            (Method::POST, "/v1/responses"),
            (Method::GET, "/models"),
            (
                Method::POST,
                "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
            ),
        ] {
            let refused = admit(&method, "", path, &claude);
            assert!(
                matches!(refused, Err(Refused::NotSpoken { .. })),
                "{method} {path}: {refused:?}"
            );
        }
        let refused = admit(&Method::POST, "", "/v1/chat/completions", &claude)
            .unwrap_err()
            .to_string();
        assert_eq!(
            refused,
            "aptitude's model gateway refused `POST /v1/chat/completions`: it is an endpoint of OpenAI Chat Completions, which this run's agent does not speak (it speaks Anthropic Messages)"
        );
        let gemini = [Protocol::Gemini];
        assert!(admit(&Method::GET, "", "/v1/models", &gemini).is_err());
        let codex = [Protocol::Responses];
        assert!(admit(&Method::GET, "/v1", "/v1/models", &codex).is_ok());
        assert!(admit(&Method::POST, "/v1", "/v1/chat/completions", &codex).is_err());
    }

    #[test]
    fn a_placeholder_outside_the_credential_header_is_found() {
        let ph = "aptitude-gateway-placeholder-0-0123456789abcdef";
        let key = HeaderName::from_static("x-api-key");
        let beta = HeaderName::from_static("anthropic-beta");
        let value = ph.as_bytes();
        assert_eq!(misplaced("/v1/messages", [(&key, value)], &[ph]), None);
        assert_eq!(
            misplaced("/v1/messages", [(&key, value), (&beta, value)], &[ph]).as_deref(),
            Some("the header `anthropic-beta`")
        );
        assert_eq!(
            misplaced(&format!("/v1/messages?key={ph}"), [], &[ph]).as_deref(),
            Some("the query string")
        );
        let encoded = ph.replace('-', "%2D");
        assert_eq!(
            misplaced(&format!("/v1/messages?x={encoded}"), [], &[ph]).as_deref(),
            Some("the query string")
        );
        assert_eq!(
            misplaced(&format!("/{ph}/v1/messages"), [], &[ph]).as_deref(),
            Some("the path")
        );
    }

    #[test]
    fn a_secret_split_across_pieces_is_scrubbed() {
        let secret = "sk-ant-api03-SECRETSECRET";
        let reply = format!(
            "event: error\ndata: {{\"error\":\"invalid header value {secret} and again {secret}\"}}\n\n"
        );
        for cut in 1..reply.len() {
            let mut s = Scrubber::new([secret.to_owned()]).unwrap();
            let mut out = s.push(&reply.as_bytes()[..cut]);
            out.extend(s.push(&reply.as_bytes()[cut..]));
            out.extend(s.finish());
            let out = String::from_utf8(out).unwrap();
            assert!(!out.contains(secret), "cut at {cut}: {out}");
            assert_eq!(out.matches("[REDACTED by aptitude]").count(), 2, "{out}");
            assert_eq!(s.scrubbed, 2);
        }
        let mut s = Scrubber::new([secret.to_owned()]).unwrap();
        let mut out = Vec::new();
        for b in reply.as_bytes() {
            out.extend(s.push(std::slice::from_ref(b)));
        }
        out.extend(s.finish());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            reply.replace(secret, "[REDACTED by aptitude]")
        );
        assert!(Scrubber::new([String::new()]).is_none());
    }

    /// The key comes back in no form the gateway knows: `\u`-escaped (wholly or in part,
    /// either case, `\/`), base64 (both alphabets, any alignment), hex, reversed — each
    /// split at every byte across two pieces.
    #[test]
    fn every_known_form_of_the_key_is_scrubbed() {
        use base64::Engine;
        let secret = "sk-ant-api03-Zx9/Qw_SECRETSECRET-0123";
        let unicode: String = secret
            .chars()
            .map(|c| format!("\\u{:04x}", c as u32))
            .collect();
        let upper: String = secret
            .chars()
            .map(|c| format!("\\u{:04X}", c as u32))
            .collect();
        let mixed = secret.replace('-', "\\u002d").replace('/', "\\/");
        let b64 = |prefix: &str, engine: &base64::engine::GeneralPurpose| {
            engine.encode(format!("{prefix}{secret} trailing"))
        };
        let std = &base64::engine::general_purpose::STANDARD;
        let url = &base64::engine::general_purpose::URL_SAFE;
        let forms = [
            unicode,
            upper,
            mixed,
            b64("", std),
            b64("x", std),
            b64("xy", url),
            secret.bytes().map(|b| format!("{b:02x}")).collect(),
            secret.chars().rev().collect(),
        ];
        for form in forms {
            let reply = format!("data: {{\"error\":\"bad key {form} end\"}}\n\n");
            for cut in 0..reply.len() {
                let mut s = Scrubber::new([secret.to_owned()]).unwrap();
                let mut out = s.push(&reply.as_bytes()[..cut]);
                out.extend(s.push(&reply.as_bytes()[cut..]));
                out.extend(s.finish());
                let out = String::from_utf8_lossy(&out);
                assert!(s.scrubbed >= 1, "{form} cut at {cut}: {out}");
                assert!(!out.contains(&form), "{form} cut at {cut}: {out}");
            }
        }
        // Ordinary text and an escaped quote are left alone.
        let mut s = Scrubber::new([secret.to_owned()]).unwrap();
        let plain = r#"{"text":"sk-ant- is a key prefix \u0041 \"quoted\""}"#;
        let mut out = s.push(plain.as_bytes());
        out.extend(s.finish());
        assert_eq!(String::from_utf8(out).unwrap(), plain);
        assert_eq!(s.scrubbed, 0);
    }

    /// The provider is not a network path: each field that would have it fetch a URL is
    /// found, on every protocol; a host listed under `network:` is let through, a fetch
    /// tool never.
    #[test]
    fn provider_fetches_are_found_on_every_protocol() {
        let anthropic = br#"{"model":"claude-sonnet-4-5","mcp_servers":[{"type":"url","url":"https://evil.example/mcp","name":"x"}],"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://evil.example/a.png?d=SECRET"}},{"type":"document","source":{"type":"base64","data":"aGk="}},{"type":"text","text":"see https://docs.example/x"}]}],"tools":[{"type":"web_fetch_20250910","name":"web_fetch"},{"type":"web_search_20250305","name":"web_search"}]}"#;
        let found: Vec<(String, Option<String>)> = provider_fetches(anthropic)
            .into_iter()
            .map(|f| (f.at, f.url))
            .collect();
        assert!(
            found.contains(&(
                "mcp_servers[0]".into(),
                Some("https://evil.example/mcp".into())
            )),
            "{found:?}"
        );
        assert!(
            found.contains(&(
                "messages[0].content[0].source".into(),
                Some("https://evil.example/a.png?d=SECRET".into())
            )),
            "{found:?}"
        );
        assert!(found.contains(&("tools[0]".into(), None)), "{found:?}");
        assert_eq!(
            found.len(),
            3,
            "text and web_search fetch nothing: {found:?}"
        );
        let responses = br#"{"input":[{"role":"user","content":[{"type":"input_image","image_url":"https://evil.example/i.png"},{"type":"input_file","file_url":"https://evil.example/f.pdf"},{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]}],"tools":[{"type":"mcp","server_label":"x","server_url":"https://evil.example/sse"}]}"#;
        assert_eq!(provider_fetches(responses).len(), 3);
        let chat = br#"{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://evil.example/c.png"}}]}]}"#;
        assert_eq!(provider_fetches(chat).len(), 1);
        let gemini = br#"{"contents":[{"parts":[{"fileData":{"mimeType":"application/pdf","fileUri":"https://evil.example/g.pdf"}}]}],"tools":[{"urlContext":{}}]}"#;
        assert_eq!(provider_fetches(gemini).len(), 2);
        assert!(provider_fetches(br#"{"messages":[{"role":"user","content":"hi"}]}"#).is_empty());
        // `network:` lets a listed host through, never a fetch tool.
        let chat_fetches = provider_fetches(chat);
        assert!(refused_fetch(&chat_fetches, &["evil.example".into()]).is_none());
        let refused = refused_fetch(&chat_fetches, &["other.example".into()]).unwrap();
        assert_eq!(
            refused.to_string(),
            "aptitude's model gateway refused this request: at `messages[0].content[0]` it asks the provider to fetch `https://evil.example/c.png` (a file or image by URL), a host not listed under the test's `network:`; list the host under the test's `network:` to allow it"
        );
        let tool = provider_fetches(anthropic);
        assert!(
            refused_fetch(&tool, &["evil.example".into()]).is_some_and(|r| r
                .to_string()
                .contains("any URL the model picks (the web_fetch tool)"))
        );
    }
}
