//! Secret redaction for everything that leaves the process.
//!
//! Agents read `.env` files and print tokens; transcripts carry them into results. Before
//! anything is shown or written — terminal, results JSON, JUnit, HTML, Markdown, the
//! GitHub comment — every string goes through a [`Redactor`], which replaces with
//! `[REDACTED]`:
//! - the values of environment variables whose names mark them secret (`*KEY*`, `*TOKEN*`,
//!   `*SECRET*`, `*PASSWORD*`, any case), from aptitude's own environment and the tests'
//!   `env:`, when at least 8 characters long (shorter values would redact common words) —
//!   in every encoding such a value takes in what we write: as is, JSON-escaped (once, as in
//!   a recorded `x.transcript.jsonl` line, and twice, as in a JSON document carried inside a
//!   JSON string; also with non-ASCII as `\uXXXX`, as Python's `json.dumps` writes it),
//!   URL-encoded (`%XX`, with spaces as `%20` or `+`) and base64 (standard and URL-safe);
//! - every value registered with [`register_secret`], whatever variable (or file) held it:
//!   the real API keys and login tokens the model gateway injects, so that a key given
//!   under any name is redacted;
//! - well-known token shapes: `sk-ant-…`, `sk-…`, `ghp_…` (and `gho_`, `ghu_`, `ghs_`,
//!   `ghr_`), `github_pat_…`, `glpat-…`, `hf_…`, `npm_…`, Stripe `sk_live_…`, Google OAuth
//!   `ya29.…`, JSON web tokens, `AKIA…`, `AIza…`, `xox?-…`, and PEM private key blocks;
//! - credentials wherever their shape says so, whatever their length: the password of a
//!   URL (`postgres://app:[REDACTED]@db`), the value of an `Authorization`, `x-api-key` or
//!   `x-goog-api-key` header, and the value assigned to an upper-case variable whose name
//!   marks it secret (`DB_PASSWORD=[REDACTED]`; a value of digits only, like
//!   `MAX_TOKENS=4096`, is not a credential).

use regex::Regex;

/// The replacement text.
pub const REDACTED: &str = "[REDACTED]";

/// Names that mark an environment variable as secret.
const SECRET_NAME_PARTS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASSWORD"];

/// Secret values shorter than this are not redacted by value.
const MIN_SECRET_LEN: usize = 8;

/// Token shapes, as regexes.
const TOKEN_SHAPES: &[&str] = &[
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    r"sk-ant-[A-Za-z0-9_\-]{8,}",
    r"sk-(?:proj-)?[A-Za-z0-9_\-]{16,}",
    r"gh[pousr]_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"AKIA[0-9A-Z]{16}",
    r"AIza[0-9A-Za-z_\-]{30,}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    r"glpat-[A-Za-z0-9_\-]{20,}",
    r"hf_[A-Za-z0-9]{30,}",
    r"npm_[A-Za-z0-9]{36,}",
    r"[sr]k_(?:live|test)_[A-Za-z0-9]{10,}",
    r"ya29\.[A-Za-z0-9_\-]{20,}",
    r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
];

/// Credentials recognised by what stands before them, whatever their length: group 1 is
/// kept, group 2 (the credential) is redacted.
///
/// Their word boundaries are ASCII ones (`(?-u:\b)`): a letter outside ASCII before a
/// credential's name does not hide it (`éDB_PASSWORD=…` is redacted too), and the regex
/// crate's DFAs, which can not evaluate a Unicode word boundary on text that is not all
/// ASCII, stay in use: with `\b`, redacting 120 test results of non-ASCII text took
/// 5–8 CPU-s in a debug build, most of it in the slowest engine (PikeVM).
const CREDENTIAL_CONTEXTS: &[&str] = &[
    // The password of a URL: `scheme://user:password@host`.
    r"(?i)((?-u:\b)[a-z][a-z0-9+.\-]*://[^\s/:@]*:)([^\s/@]+)@",
    // An HTTP authorization header, as a curl command or a log line writes it.
    r"(?i)((?-u:\b)authorization[\x22']?\s*[:=]\s*[\x22']?(?:bearer|basic|token)\s+)([^\s\x22',}]+)",
    r"(?i)((?-u:\b)(?:x-api-key|x-goog-api-key|api-key)[\x22']?\s*[:=]\s*[\x22']?)([^\s\x22',}]+)",
    // An assignment to a variable whose name marks it secret: `DB_PASSWORD=abc123`.
    r"((?-u:\b)[A-Z][A-Z0-9_]*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD)[A-Z0-9_]*=[\x22']?)([^\s\x22'&;]+)",
];

/// Replaces secrets in text.
#[derive(Debug, Clone)]
pub struct Redactor {
    /// Every encoded form of every secret value, longest first.
    needles: Vec<String>,
}

/// The forms a secret `value` can take in aptitude's outputs and recorded transcripts; the
/// raw value first. Forms equal to another are listed once.
fn encoded_forms(value: &str) -> Vec<String> {
    use base64::Engine as _;
    let json_once = json_escaped(value);
    let mut forms = vec![
        value.to_owned(),
        json_escaped(&json_once),
        ascii_json_escaped(value),
        percent_encoding::utf8_percent_encode(value, URL_COMPONENT).to_string(),
        form_urlencoded::byte_serialize(value.as_bytes()).collect(),
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(value),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value),
    ];
    forms.insert(1, json_once);
    let mut seen = std::collections::HashSet::new();
    forms.retain(|f| !f.is_empty() && seen.insert(f.clone()));
    forms
}

/// What `encodeURIComponent` leaves alone: ASCII letters, digits and `-_.!~*'()`.
const URL_COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// `text` as it stands between the quotes of a JSON string written by serde_json or
/// `JSON.stringify`.
fn json_escaped(text: &str) -> String {
    let quoted = serde_json::Value::String(text.to_owned()).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// Like [`json_escaped`], with every non-ASCII character as `\uXXXX` (UTF-16 units), as
/// Python's `json.dumps` writes by default.
fn ascii_json_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in json_escaped(text).chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// The token shapes, compiled once.
fn shapes() -> &'static Regex {
    static SHAPES: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        #[expect(
            clippy::expect_used,
            reason = "constant patterns, compiled in every test run"
        )]
        Regex::new(&TOKEN_SHAPES.join("|")).expect("token shapes compile")
    });
    &SHAPES
}

/// The credential contexts, compiled once.
fn contexts() -> &'static [Regex] {
    static CONTEXTS: std::sync::LazyLock<Vec<Regex>> = std::sync::LazyLock::new(|| {
        CREDENTIAL_CONTEXTS
            .iter()
            .map(|c| {
                #[expect(
                    clippy::expect_used,
                    reason = "constant patterns, compiled in every test run"
                )]
                Regex::new(c).expect("credential contexts compile")
            })
            .collect()
    });
    &CONTEXTS
}

/// `text` with the credential of each [`CREDENTIAL_CONTEXTS`] match redacted, its context
/// kept.
fn redact_contexts(text: &str) -> String {
    let mut out = text.to_owned();
    for context in contexts() {
        if !context.is_match(&out) {
            continue;
        }
        out = context
            .replace_all(&out, |caps: &regex::Captures<'_>| {
                let secret = &caps[2];
                if secret.bytes().all(|b| b.is_ascii_digit()) || secret.starts_with(REDACTED) {
                    return caps[0].to_owned();
                }
                let tail = &caps[0][caps[1].len() + secret.len()..];
                format!("{}{REDACTED}{tail}", &caps[1])
            })
            .into_owned();
    }
    out
}

/// Values registered as secrets for the whole process ([`register_secret`]): every
/// encoded form, longest first.
static REGISTERED: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Registers `value` as a secret for every [`Redactor`] of this process, whatever
/// variable or file it came from (the model gateway registers each real key it injects).
/// Values shorter than 8 characters are not registered, as for every secret value.
pub fn register_secret(value: &str) {
    if value.len() < MIN_SECRET_LEN {
        return;
    }
    let mut registered = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    if registered.iter().any(|r| r == value) {
        return;
    }
    registered.extend(encoded_forms(value));
    registered.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
    registered.dedup();
}

/// Whether an environment variable's name marks it secret.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| upper.contains(part))
}

impl Redactor {
    /// A redactor for token shapes and the secret values among `env`.
    pub fn new<'a>(env: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut needles: Vec<String> = env
            .into_iter()
            .filter(|(name, value)| is_secret_name(name) && value.len() >= MIN_SECRET_LEN)
            .flat_map(|(_, value)| encoded_forms(value))
            .collect();
        // Longest first, so a value containing another is replaced whole.
        needles.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        needles.dedup();
        Redactor { needles }
    }

    /// A redactor for aptitude's own environment plus `extra` (the tests' `env:`).
    pub fn from_process_env<'a>(extra: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut pairs: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        pairs.extend(extra.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())));
        Redactor::new(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// Adds `values` as secrets whatever variable holds them (the expansions of `${VAR}`
    /// in `mcp_servers`), when at least 8 characters long like every secret value.
    pub fn with_secret_values<'a>(mut self, values: impl IntoIterator<Item = &'a str>) -> Self {
        self.needles.extend(
            values
                .into_iter()
                .filter(|v| v.len() >= MIN_SECRET_LEN)
                .flat_map(encoded_forms),
        );
        self.needles
            .sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        self.needles.dedup();
        self
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        let mut out = shapes().replace_all(text, REDACTED).into_owned();
        let registered = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
        // Longest first across both lists, so a value containing another is replaced whole.
        let mut needles: Vec<&String> = self.needles.iter().chain(registered.iter()).collect();
        if !registered.is_empty() {
            needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        }
        for needle in needles {
            if out.contains(needle.as_str()) {
                out = out.replace(needle.as_str(), REDACTED);
            }
        }
        drop(registered);
        redact_contexts(&out)
    }

    /// Redacts every string in a JSON value, keys included.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => {
                let red = self.redact(s);
                if red != *s {
                    *s = red;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            serde_json::Value::Object(map) => {
                let entries: Vec<(String, serde_json::Value)> =
                    std::mem::take(map).into_iter().collect();
                for (k, mut v) in entries {
                    self.redact_json(&mut v);
                    map.insert(self.redact(&k), v);
                }
            }
            _ => {}
        }
    }

    /// Redacts every string of a serializable value (results, transcripts) by a round trip
    /// through JSON.
    ///
    /// # Errors
    /// When the value does not round-trip (a bug; the caller must not output it then).
    pub fn redact_value<T: serde::Serialize + serde::de::DeserializeOwned>(
        &self,
        value: &T,
    ) -> Result<T, serde_json::Error> {
        let mut json = serde_json::to_value(value)?;
        self.redact_json(&mut json);
        serde_json::from_value(json)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor() -> Redactor {
        Redactor::new([
            ("OPENAI_API_KEY", "plain-secret-value-123"),
            ("DEBUG_TOKEN_LEVEL", "1"),
            ("HOME", "/home/user-with-long-name"),
            ("db_password", "hunter2hunter2"),
        ])
    }

    #[test]
    fn token_shapes() {
        let r = redactor();
        for secret in [
            "sk-ant-api03-abcdefghijklmnop_QRS",
            "sk-proj-abcdefghijklmnopqrstuv",
            "sk-abcdefghijklmnopqrstuvwx",
            "ghp_abcdefghijklmnopqrstuvwxyz0123",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "AKIAIOSFODNN7EXAMPLE",
            "AIzaSyA-1234567890abcdefghijklmnopqrstu",
            "xoxb-123456789012-abcdefghij",
        ] {
            let text = format!("key={secret} end");
            assert_eq!(r.redact(&text), "key=[REDACTED] end", "{secret}");
        }
        let pem =
            "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----\nb";
        assert_eq!(r.redact(pem), "a\n[REDACTED]\nb");
    }

    #[test]
    fn secret_env_values_but_not_short_or_ordinary_ones() {
        let r = redactor();
        assert_eq!(
            r.redact("export X=plain-secret-value-123"),
            "export X=[REDACTED]"
        );
        assert_eq!(r.redact("pw hunter2hunter2!"), "pw [REDACTED]!");
        assert_eq!(
            r.redact("level 1 of 10"),
            "level 1 of 10",
            "short values are not redacted"
        );
        assert_eq!(
            r.redact("/home/user-with-long-name/x"),
            "/home/user-with-long-name/x",
            "not a secret name"
        );
    }

    #[test]
    fn every_encoding_of_a_secret_value() {
        let secret = r#"p@ss "wörd" \ 1234/x"#;
        let r = Redactor::new([("DEPLOY_TOKEN", secret)]);
        let line = serde_json::json!({"type": "user", "content": format!("echo {secret}")});
        let recorded = line.to_string();
        assert!(!recorded.contains(secret), "the test needs an escaped form");
        assert_eq!(
            r.redact(&recorded),
            r#"{"content":"echo [REDACTED]","type":"user"}"#,
            "JSON-escaped, as in a recorded transcript line"
        );
        let nested = serde_json::json!({"input": recorded}).to_string();
        assert!(
            !r.redact(&nested).contains("1234"),
            "JSON inside a JSON string"
        );
        let python = r#"p@ss \"w\u00f6rd\" \\ 1234/x"#;
        assert_eq!(r.redact(python), REDACTED, "json.dumps' ASCII escapes");
        for encoded in [
            "p%40ss%20%22w%C3%B6rd%22%20%5C%201234%2Fx",
            "p%40ss+%22w%C3%B6rd%22+%5C+1234%2Fx",
            "cEBzcyAid8O2cmQiIFwgMTIzNC94",
        ] {
            assert_eq!(
                r.redact(&format!("?q={encoded}&")),
                "?q=[REDACTED]&",
                "{encoded}"
            );
        }
    }

    #[test]
    fn json_strings_and_keys() {
        let r = redactor();
        let mut v = serde_json::json!({"a": ["sk-ant-abcdefghijkl", 3], "plain-secret-value-123": {"b": "ok"}});
        r.redact_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": ["[REDACTED]", 3], "[REDACTED]": {"b": "ok"}})
        );
    }

    #[test]
    fn values_named_by_mcp_servers_are_secrets_whatever_their_variable() {
        let r = Redactor::new([]).with_secret_values(["plain-docs-value-9", "short"]);
        assert_eq!(r.redact("x plain-docs-value-9 y"), "x [REDACTED] y");
        assert_eq!(r.redact("short"), "short");
    }
    #[test]
    fn credentials_by_their_context_whatever_their_length() {
        let r = Redactor::new([]);
        for (text, want) in [
            (
                "DATABASE_URL=postgres://app:PASSWORD@db:5432/x",
                "DATABASE_URL=postgres://app:[REDACTED]@db:5432/x",
            ),
            (
                "git clone https://x:tok7abc@github.com/o/r",
                "git clone https://x:[REDACTED]@github.com/o/r",
            ),
            ("redis://:s3cret@cache", "redis://:[REDACTED]@cache"),
            (
                "curl -H 'Authorization: Bearer abc1234' u",
                "curl -H 'Authorization: Bearer [REDACTED]' u",
            ),
            (
                "{\"x-api-key\": \"short7\"}",
                "{\"x-api-key\": \"[REDACTED]\"}",
            ),
            (
                "export DB_PASSWORD=abc1234; echo",
                "export DB_PASSWORD=[REDACTED]; echo",
            ),
            ("GITHUB_TOKEN=\"tok\" x", "GITHUB_TOKEN=\"[REDACTED]\" x"),
            // A letter outside ASCII right before the name hides nothing.
            ("éDB_PASSWORD=abc1234 ü", "éDB_PASSWORD=[REDACTED] ü"),
            (
                "日本https://x:tok7abc@github.com",
                "日本https://x:[REDACTED]@github.com",
            ),
            (
                "→Authorization: Bearer abc1234",
                "→Authorization: Bearer [REDACTED]",
            ),
        ] {
            assert_eq!(r.redact(text), want, "{text}");
        }
        for kept in [
            "MAX_TOKENS=4096",
            "https://example.com:8080/path",
            "\"input_tokens\": 100",
            "see https://docs.rs/x@1.2 and user@example.com",
            "ratio a:b@c",
        ] {
            assert_eq!(r.redact(kept), kept);
        }
        for token in [
            "glpat-abcdefghij0123456789",
            "hf_abcdefghijklmnopqrstuvwxyzABCDEF",
            "sk_live_abcdefghij12",
            "ya29.a0AfH6SMBabcdefghijklmnop",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ] {
            assert_eq!(
                r.redact(&format!("t {token} e")),
                "t [REDACTED] e",
                "{token}"
            );
        }
    }

    #[test]
    fn a_registered_value_is_redacted_whatever_held_it() {
        let value = "registered-gateway-key-5e1f";
        let r = Redactor::new([]);
        assert_eq!(r.redact(value), value, "not yet registered");
        register_secret(value);
        register_secret("short");
        assert_eq!(r.redact(&format!("a {value} b")), "a [REDACTED] b");
        assert_eq!(r.redact("short"), "short");
        let json = serde_json::json!({ "k": value }).to_string();
        assert!(!r.redact(&json).contains("5e1f"));
    }
}
