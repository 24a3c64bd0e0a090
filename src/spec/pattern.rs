//! Matching a tool call's parameter values: the explicit forms and the bare-string rule.
//!
//! A parameter in a test file is either an explicit matcher — `{glob: …}`, `{regex: …}`,
//! `{equals: …}`, `{contains: …}` — or a bare value. Bare strings follow one documented
//! rule (see `docs/yaml-api.md`, "Parameter matching"):
//!
//! 1. The string **occurring anywhere** in the value always counts (a leading `./` is
//!    ignored): `counter.txt` matches `/tmp/x/counter.txt`, `rm -rf` matches
//!    `rm -rf /home/dev/proj/build`. This is never narrower than the original aptitude
//!    (0.3.1–0.4), which searched every value as a regex anywhere in the value.
//! 2. A string that **starts with `^`, ends with `$`, or contains `\`, `.*`, `.+`, `.?` or
//!    `(?`** is also a **regex**, searched anywhere in the value (anchor it with `^…$`).
//! 3. Otherwise a string containing **`*`, `?` or `[`** is also a **glob**, matched against
//!    the whole value or against a trailing part of a path; `*` and `?` cross `/`.
//!
//! Guardrails (`called: false`, upper bounds on counts) read one more way, so that an
//! author of the original aptitude loses no guardrail: a string with none of those markers
//! that holds an alternation or a group (`|`, `(`) and compiles as a regex (`.` and `+`
//! kept literal) is also searched as that regex — `git push|git commit` forbids both. A
//! `called: true` does not take that reading: its pass must mean the written call happened.
//!
//! Because the substring reading always counts, a string meant literally (a shell command
//! with `[ -f x ]`, a JSON snippet) is never matched more narrowly than its own text: a
//! misread pattern can not hide a call from `called: false`. A pattern that is invalid under
//! its reading is a load-time error; nothing falls back silently. An empty bare string
//! would match every value and is an error too.
//!
//! Non-string values (numbers, booleans, lists, mappings) compare as JSON, with `1` equal to
//! `1.0`.

use globset::{GlobBuilder, GlobMatcher};
use regex::Regex;
use serde_json::Value as Json;

/// How a bare string is read, by the rule in the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BareKind {
    /// Matched as text occurring anywhere in the value.
    Literal,
    /// A glob, plus the substring reading.
    Glob,
    /// A regex searched anywhere, plus the substring reading.
    Regex,
}

/// Classifies a bare string: regex markers win over glob markers.
pub fn classify(s: &str) -> BareKind {
    let ends_with_dollar = s.ends_with('$') && !s.ends_with("\\$");
    if s.starts_with('^')
        || ends_with_dollar
        || s.contains('\\')
        || s.contains(".*")
        || s.contains(".+")
        || s.contains(".?")
        || s.contains("(?")
    {
        BareKind::Regex
    } else if s.contains(['*', '?', '[']) {
        BareKind::Glob
    } else {
        BareKind::Literal
    }
}

/// A compiled matcher for one parameter value.
#[derive(Debug, Clone)]
pub enum ValueMatcher {
    /// A bare string without pattern markers: the text occurring anywhere in the value.
    Literal {
        /// The string as written.
        text: String,
        /// The original aptitude's regex reading of a string with an alternation or a
        /// group (`|`, `(`; `.` and `+` kept literal), which guardrails also take
        /// ([`ValueMatcher::matches_guard`]).
        upstream: Option<Regex>,
    },
    /// A glob (bare or `{glob: …}`); bare globs also match as a substring.
    Glob {
        /// The pattern as written.
        source: String,
        /// Compiled glob.
        glob: GlobMatcher,
        /// Whether the substring reading also counts (bare strings only).
        or_literal: bool,
    },
    /// A regex (bare or `{regex: …}`), searched anywhere; bare regexes also match as a
    /// substring.
    Regex {
        /// Compiled regex.
        regex: Regex,
        /// Whether the substring reading also counts (bare strings only).
        or_literal: bool,
    },
    /// `{equals: …}` or a non-string bare value: JSON equality.
    Equals(Json),
    /// `{contains: …}`: substring.
    Contains(String),
}

/// Why a pattern could not be compiled.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct PatternError {
    /// What is wrong, in the compiler's words.
    pub message: String,
}

impl ValueMatcher {
    /// Compiles a bare string by the rule in the module docs.
    ///
    /// # Errors
    /// When the string is empty (it would match every value), or reads as a regex or glob
    /// that does not compile.
    pub fn bare(s: &str) -> Result<Self, PatternError> {
        if s.is_empty() {
            return Err(PatternError {
                message: "an empty pattern would match every value".into(),
            });
        }
        match classify(s) {
            BareKind::Literal => Ok(ValueMatcher::Literal {
                text: s.to_owned(),
                upstream: upstream_regex(s),
            }),
            BareKind::Glob => Ok(ValueMatcher::Glob {
                source: s.to_owned(),
                glob: compile_glob(s)?,
                or_literal: true,
            }),
            BareKind::Regex => Ok(ValueMatcher::Regex {
                regex: compile_regex(s)?,
                or_literal: true,
            }),
        }
    }

    /// Compiles an explicit `{glob: …}`.
    ///
    /// # Errors
    /// When the glob does not compile.
    pub fn glob(s: &str) -> Result<Self, PatternError> {
        Ok(ValueMatcher::Glob {
            source: s.to_owned(),
            glob: compile_glob(s)?,
            or_literal: false,
        })
    }

    /// Compiles an explicit `{regex: …}`.
    ///
    /// # Errors
    /// When the regex does not compile.
    pub fn regex(s: &str) -> Result<Self, PatternError> {
        Ok(ValueMatcher::Regex {
            regex: compile_regex(s)?,
            or_literal: false,
        })
    }

    /// Whether `actual` (a tool call's input value) matches, by the author's reading (the
    /// module docs' rule 1–3): what `called: true` and lower bounds count.
    ///
    /// String matchers applied to a non-string value see its compact JSON text.
    pub fn matches(&self, actual: &Json) -> bool {
        if let ValueMatcher::Equals(expected) = self {
            return json_eq(expected, actual);
        }
        let text: std::borrow::Cow<'_, str> = match actual {
            Json::String(s) => s.into(),
            other => other.to_string().into(),
        };
        self.matches_str(&text)
    }

    /// Whether `actual` matches by any reading, the original aptitude's regex reading
    /// included: what a guardrail (`called: false`, an upper bound) counts, so that no
    /// reading finds a forbidden call this one misses.
    pub fn matches_guard(&self, actual: &Json) -> bool {
        if self.matches(actual) {
            return true;
        }
        let ValueMatcher::Literal {
            upstream: Some(regex),
            ..
        } = self
        else {
            return false;
        };
        match actual {
            Json::String(s) => regex.is_match(s),
            other => regex.is_match(&other.to_string()),
        }
    }

    /// Whether the guardrail reading ([`ValueMatcher::matches_guard`]) is wider than the
    /// author's reading for this matcher.
    pub fn has_guard_reading(&self) -> bool {
        matches!(
            self,
            ValueMatcher::Literal {
                upstream: Some(_),
                ..
            }
        )
    }

    /// Whether a string value matches (the author's reading).
    pub fn matches_str(&self, text: &str) -> bool {
        match self {
            ValueMatcher::Literal { text: lit, .. } => literal_matches(lit, text),
            ValueMatcher::Glob {
                source,
                glob,
                or_literal,
            } => (*or_literal && literal_matches(source, text)) || glob_matches(source, glob, text),
            ValueMatcher::Regex { regex, or_literal } => {
                (*or_literal && literal_matches(regex.as_str(), text)) || regex.is_match(text)
            }
            ValueMatcher::Equals(expected) => json_eq(expected, &Json::String(text.to_owned())),
            ValueMatcher::Contains(needle) => text.contains(needle.as_str()),
        }
    }

    /// A short human description: `glob "*.env"`, `regex /a.*b/`, `"counter.txt"`.
    pub fn describe(&self) -> String {
        match self {
            ValueMatcher::Literal { text, .. } => format!("{text:?}"),
            ValueMatcher::Glob { source, .. } => format!("glob {source:?}"),
            ValueMatcher::Regex { regex, .. } => format!("regex /{}/", regex.as_str()),
            ValueMatcher::Equals(v) => format!("= {v}"),
            ValueMatcher::Contains(s) => format!("contains {s:?}"),
        }
    }
}

fn compile_glob(s: &str) -> Result<GlobMatcher, PatternError> {
    GlobBuilder::new(s)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| PatternError {
            message: format!("invalid glob {s:?}: {}", e.kind()),
        })
}

fn compile_regex(s: &str) -> Result<Regex, PatternError> {
    Regex::new(s).map_err(|e| PatternError {
        message: format!("invalid regex {s:?}: {}", regex_error_summary(&e)),
    })
}

/// The regex crate's message is a multi-line drawing; keep its last line, the reason.
fn regex_error_summary(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.trim().trim_start_matches("error: ").to_owned())
        .unwrap_or(text)
}

/// The original aptitude's (0.3.1–0.4) reading of a bare string with none of our markers:
/// a regex searched anywhere. Taken only when the string holds an alternation or a group
/// (`|`, `(`) — otherwise the substring reading already finds all an author meant — and
/// with each `.` and `+` kept literal (`.env` must not match `venv`, nor `g++` every `g`).
/// `None` when it does not compile (the original then compared whole values, which the
/// substring reading covers).
fn upstream_regex(s: &str) -> Option<Regex> {
    if !s.contains(['|', '(']) {
        return None;
    }
    Regex::new(&s.replace('.', "\\.").replace('+', "\\+")).ok()
}

/// The byte offsets right after each `/` in `text`: the starts of its trailing paths.
fn path_suffixes(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices('/').map(move |(i, _)| &text[i + 1..])
}

/// The substring reading: `lit` (without a leading `./`) occurs anywhere in `text`.
fn literal_matches(lit: &str, text: &str) -> bool {
    let lit = lit.strip_prefix("./").unwrap_or(lit);
    !lit.is_empty() && text.contains(lit) || lit == text
}

fn glob_matches(source: &str, glob: &GlobMatcher, text: &str) -> bool {
    if glob.is_match(text) {
        return true;
    }
    if source.starts_with('/') {
        return false;
    }
    path_suffixes(text).any(|suffix| glob.is_match(suffix))
}

/// JSON equality where numbers compare by value (`1` == `1.0`).
pub fn json_eq(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_f64(), y.as_f64()) {
                (Some(f), Some(g)) => f == g,
                _ => x == y,
            },
        },
        (Json::Array(xs), Json::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| json_eq(x, y))
        }
        (Json::Object(xm), Json::Object(ym)) => {
            xm.len() == ym.len()
                && xm
                    .iter()
                    .all(|(k, v)| ym.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Matches tool names: a name (any alias, any case) or, when it contains `*`, a glob over
/// canonical names such as `mcp__github__*`.
#[derive(Debug, Clone)]
pub enum NameMatcher {
    /// One tool, by canonical name.
    Exact(String),
    /// A case-insensitive glob over canonical names.
    Glob {
        /// The pattern as written.
        source: String,
        /// Compiled glob.
        glob: GlobMatcher,
    },
}

impl NameMatcher {
    /// Builds a matcher for the `tool:` value.
    ///
    /// # Errors
    /// When a name with `*` is not a valid glob.
    pub fn new(name: &str) -> Result<Self, PatternError> {
        if name.contains('*') {
            let glob = GlobBuilder::new(name)
                .case_insensitive(true)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| PatternError {
                    message: format!("invalid tool-name glob {name:?}: {}", e.kind()),
                })?;
            Ok(NameMatcher::Glob {
                source: name.to_owned(),
                glob,
            })
        } else {
            Ok(NameMatcher::Exact(
                crate::spec::tools::canonical_tool_name(name).into_owned(),
            ))
        }
    }

    /// Whether a call's canonical tool name matches.
    pub fn matches(&self, canonical: &str) -> bool {
        match self {
            NameMatcher::Exact(name) => crate::spec::tools::same_tool(name, canonical),
            NameMatcher::Glob { glob, .. } => glob.is_match(canonical),
        }
    }

    /// The name as shown in messages.
    pub fn display(&self) -> &str {
        match self {
            NameMatcher::Exact(name) => name,
            NameMatcher::Glob { source, .. } => source,
        }
    }
}

/// The explicit matcher forms of a parameter value: `{glob: …}`, `{regex: …}`,
/// `{equals: …}`, `{contains: …}`.
pub const MATCHER_FORMS: [&str; 4] = ["glob", "regex", "equals", "contains"];

/// Why a parameter value is not a matcher, for the caller to point at the right place.
#[derive(Debug, Clone)]
pub enum MatcherError {
    /// A bare string's pattern does not compile.
    Bare(PatternError),
    /// An object that is not exactly one of [`MATCHER_FORMS`]: `unknown` is its first key
    /// that is not a form (none when it has several forms or none at all), `suggestion`
    /// the form that key may be a typo of (when the object does not have that form yet).
    NotAForm {
        /// The first key that is not a form.
        unknown: Option<String>,
        /// The form it is probably a typo of.
        suggestion: Option<&'static str>,
    },
    /// A form whose value must be a string is not one.
    NotAString {
        /// The form (`glob`, `regex`, `contains`).
        form: &'static str,
    },
    /// `{contains: ""}` would match anything.
    EmptyContains,
    /// A `{glob}` or `{regex}` pattern does not compile.
    Form(PatternError),
}

impl std::fmt::Display for MatcherError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatcherError::Bare(e) | MatcherError::Form(e) => f.write_str(&e.message),
            MatcherError::NotAForm { .. } => f.write_str(
                "a matcher is one of `{glob: …}`, `{regex: …}`, `{equals: …}`, `{contains: …}`",
            ),
            MatcherError::NotAString { form } => write!(f, "`{form}` must be a string"),
            MatcherError::EmptyContains => {
                f.write_str("`contains` must not be empty: it would match anything")
            }
        }
    }
}

/// The error for an object that is not exactly one matcher form.
fn not_a_form(map: &serde_json::Map<String, Json>) -> MatcherError {
    let unknown = map.keys().find(|k| !MATCHER_FORMS.contains(&k.as_str()));
    let suggestion = map
        .keys()
        .find_map(|k| crate::spec::diagnostic::did_you_mean(k, MATCHER_FORMS.iter().copied()))
        .and_then(|s| MATCHER_FORMS.iter().copied().find(|f| *f == s))
        .filter(|s| !map.contains_key(*s));
    MatcherError::NotAForm {
        unknown: unknown.cloned(),
        suggestion,
    }
}

impl ValueMatcher {
    /// A parameter value as written in a test file (or given to the fluent API as JSON),
    /// read by the rules in the module docs: a string is a bare pattern, an object is one
    /// of [`MATCHER_FORMS`], anything else is compared as JSON.
    ///
    /// # Errors
    /// A [`MatcherError`] saying what is wrong.
    pub fn from_json(value: &Json) -> Result<Self, MatcherError> {
        let map = match value {
            Json::String(s) => return ValueMatcher::bare(s).map_err(MatcherError::Bare),
            Json::Object(map) => map,
            other => return Ok(ValueMatcher::Equals(other.clone())),
        };
        let forms: Vec<(&'static str, &Json)> = map
            .iter()
            .filter_map(|(k, v)| MATCHER_FORMS.iter().find(|f| **f == k).map(|f| (*f, v)))
            .collect();
        let [(form, inner)] = forms.as_slice() else {
            return Err(not_a_form(map));
        };
        if map.len() != 1 {
            return Err(not_a_form(map));
        }
        if *form == "equals" {
            return Ok(ValueMatcher::Equals((*inner).clone()));
        }
        let Json::String(text) = inner else {
            return Err(MatcherError::NotAString { form });
        };
        match *form {
            "contains" if text.is_empty() => Err(MatcherError::EmptyContains),
            "contains" => Ok(ValueMatcher::Contains(text.clone())),
            "glob" => ValueMatcher::glob(text).map_err(MatcherError::Form),
            _ => ValueMatcher::regex(text).map_err(MatcherError::Form),
        }
    }
}

/// Matches skill names as an agent's skill tool receives them (Claude Code's `Skill
/// {skill}`, 2.1.x): `deploy`, or a plugin's skill `my-plugin:deploy`. A name without `:`
/// also matches any plugin's skill of that name; `*` makes it a glob. Case-insensitive; a
/// leading `/` on the called name (a slash command) is ignored.
#[derive(Debug, Clone)]
pub struct SkillMatcher {
    source: String,
    glob: Option<GlobMatcher>,
}

impl SkillMatcher {
    /// Builds a matcher for the `skill:` value.
    ///
    /// # Errors
    /// When a name with `*` is not a valid glob.
    pub fn new(name: &str) -> Result<Self, PatternError> {
        let glob = if name.contains('*') {
            let glob = GlobBuilder::new(name)
                .case_insensitive(true)
                .build()
                .map_err(|e| PatternError {
                    message: format!("invalid skill-name glob {name:?}: {}", e.kind()),
                })?;
            Some(glob.compile_matcher())
        } else {
            None
        };
        Ok(SkillMatcher {
            source: name.to_owned(),
            glob,
        })
    }

    /// Whether a skill called (or listed) as `name` is this one.
    pub fn matches(&self, name: &str) -> bool {
        let name = name.trim().trim_start_matches('/');
        let one = |candidate: &str| match &self.glob {
            Some(glob) => glob.is_match(candidate),
            None => candidate.eq_ignore_ascii_case(&self.source),
        };
        one(name)
            || (!self.source.contains(':')
                && name.rsplit_once(':').is_some_and(|(_, skill)| one(skill)))
    }

    /// The name as written.
    pub fn display(&self) -> &str {
        &self.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bare(s: &str) -> ValueMatcher {
        ValueMatcher::bare(s).unwrap()
    }

    #[test]
    fn star_env_matches_dotenv_but_not_example() {
        let m = bare("*.env");
        assert!(m.matches(&json!("/home/u/p/.env")));
        assert!(!m.matches(&json!("/home/u/p/.env.example")));
    }

    #[test]
    fn star_prefix_glob_matches_absolute_path() {
        assert!(bare("*counter.txt").matches(&json!("/tmp/x/counter.txt")));
    }

    #[test]
    fn glob_star_crosses_spaces_and_slashes() {
        let m = bare("python3*check_status.py*");
        assert_eq!(classify("python3*check_status.py*"), BareKind::Glob);
        assert!(m.matches(&json!("python3 scripts/check_status.py --all")));
        assert!(!m.matches(&json!("python scripts/check_status.py --all")));
    }

    #[test]
    fn alternation_with_escapes_is_a_regex() {
        assert_eq!(classify(r"cat.*\.env|grep.*secret"), BareKind::Regex);
        let m = bare(r"cat.*\.env|grep.*secret");
        assert!(m.matches(&json!("cat /p/.env")));
        assert!(m.matches(&json!("grep -r secret .")));
        assert!(!m.matches(&json!("ls -la")));
    }

    #[test]
    fn anchored_regex_is_anchored() {
        let m = bare("^/exact/path$");
        assert_eq!(classify("^/exact/path$"), BareKind::Regex);
        assert!(m.matches(&json!("/exact/path")));
        assert!(!m.matches(&json!("/exact/path/more")));
        assert!(!m.matches(&json!("/pre/exact/path")));
    }

    #[test]
    fn a_bare_string_matches_where_it_occurs_in_the_value() {
        let m = bare("counter.txt");
        assert_eq!(classify("counter.txt"), BareKind::Literal);
        assert!(m.matches(&json!("counter.txt")));
        assert!(m.matches(&json!("/tmp/x/counter.txt")));
        assert!(m.matches(&json!("./counter.txt")));
        // The wider reading (the original aptitude's): these now match too.
        assert!(m.matches(&json!("/tmp/x/mycounter.txt")));
        assert!(m.matches(&json!("counter.txt.bak")));
        assert!(!m.matches(&json!("/tmp/x/counter.md")));
        assert!(bare("./counter.txt").matches(&json!("/tmp/x/counter.txt")));
    }

    #[test]
    fn absolute_literal_matches_inside_a_longer_path() {
        let m = bare("/b/x");
        assert!(m.matches(&json!("/b/x")));
        assert!(m.matches(&json!("/a/b/x")));
        assert!(!m.matches(&json!("/a/b/y")));
    }

    /// Issue 23's five guardrails: each string must find what the agent did.
    #[test]
    fn the_five_upstream_guardrails_find_the_forbidden_call() {
        let cases = [
            ("rm -rf", "rm -rf /home/dev/proj/build"),
            ("git push", "git push origin main"),
            ("amazon.com", "https://health.aws.amazon.com/status"),
            (".env", "config/.env.production"),
            ("secrets", "secrets/key.pem"),
        ];
        for (pattern, value) in cases {
            assert!(bare(pattern).matches(&json!(value)), "{pattern} ~ {value}");
        }
    }

    #[test]
    fn dotenv_matches_every_dotenv_file_but_not_venv() {
        let m = bare(".env");
        assert!(m.matches(&json!("/home/u/p/.env")));
        assert!(m.matches(&json!("/home/u/p/.env.example")));
        assert!(!m.matches(&json!("/home/u/p/.venv/lib/site.py")));
        assert!(!m.matches_guard(&json!("/home/u/p/src/environment.py")));
    }

    #[test]
    fn empty_bare_string_is_an_error() {
        let err = ValueMatcher::bare("").unwrap_err();
        assert!(err.message.contains("every value"), "{}", err.message);
    }

    #[test]
    fn guardrails_also_take_the_original_regex_reading() {
        let m = bare("git push|git commit");
        assert_eq!(classify("git push|git commit"), BareKind::Literal);
        assert!(m.has_guard_reading());
        // The author's reading finds only the text itself …
        assert!(!m.matches(&json!("git push origin main")));
        // … a guardrail also finds either command.
        assert!(m.matches_guard(&json!("git push origin main")));
        assert!(m.matches_guard(&json!("git commit -m x")));
        assert!(!m.matches_guard(&json!("git status")));
        // A `.` stays literal in that reading.
        let npm = bare("npm (install|ci) x.y");
        assert!(npm.matches_guard(&json!("npm ci x.y")));
        assert!(!npm.matches_guard(&json!("npm ci xzy")));
        // Strings without regex-only syntax have no extra reading.
        assert!(!bare("rm -rf").has_guard_reading());
        assert!(!bare("g++ main.c").has_guard_reading());
        let cxx = bare("g++|clang++");
        assert!(cxx.matches_guard(&json!("clang++ -O2 a.cc")));
        assert!(
            !cxx.matches_guard(&json!("git status")),
            "`+` stays literal"
        );
    }

    #[test]
    fn seed_increment_regex_matches_command() {
        let m = bare(r".*increment\.sh.*");
        assert!(m.matches(&json!("bash ./increment.sh")));
        assert!(!m.matches(&json!("bash ./increment_sh")));
    }

    #[test]
    fn shell_test_brackets_still_match_literally() {
        // Read as a glob, `[ -f .env ] && cat .env` is a character class; the substring
        // reading keeps the command itself matching, also inside a longer command, so
        // `called: false` can not be evaded by it.
        let cmd = "[ -f .env ] && cat .env";
        assert_eq!(classify(cmd), BareKind::Glob);
        assert!(bare(cmd).matches(&json!(cmd)));
        assert!(bare(cmd).matches(&json!(format!("cd app && {cmd}"))));
    }

    #[test]
    fn invalid_regex_is_an_error_not_a_fallback() {
        let err = ValueMatcher::bare(r"cat.*\.env(").unwrap_err();
        assert!(err.message.contains("invalid regex"), "{}", err.message);
    }

    #[test]
    fn invalid_glob_is_an_error() {
        let err = ValueMatcher::glob("a[b").unwrap_err();
        assert!(err.message.contains("invalid glob"), "{}", err.message);
    }

    #[test]
    fn explicit_forms() {
        assert!(
            ValueMatcher::glob("*.rs")
                .unwrap()
                .matches(&json!("src/main.rs"))
        );
        assert!(
            !ValueMatcher::glob("*.rs")
                .unwrap()
                .matches(&json!("*.rs.bak"))
        );
        assert!(
            ValueMatcher::regex("^ls")
                .unwrap()
                .matches(&json!("ls -la"))
        );
        assert!(
            !ValueMatcher::regex("^ls")
                .unwrap()
                .matches(&json!("cd x && ls"))
        );
        let eq = ValueMatcher::Equals(json!("counter.txt"));
        assert!(eq.matches(&json!("counter.txt")));
        assert!(!eq.matches(&json!("/tmp/counter.txt")));
        let contains = ValueMatcher::Contains("secret".into());
        assert!(contains.matches(&json!("grep secret x")));
        assert!(!contains.matches(&json!("grep SECRET x")));
    }

    #[test]
    fn explicit_glob_has_no_literal_reading() {
        // `{glob: "[ab]"}` means the class; the literal text is not a match.
        let m = ValueMatcher::glob("[ab]").unwrap();
        assert!(m.matches(&json!("a")));
        assert!(!m.matches(&json!("[ab]")));
    }

    #[test]
    fn non_string_values_compare_as_json() {
        let m = ValueMatcher::Equals(json!(10));
        assert!(m.matches(&json!(10)));
        assert!(m.matches(&json!(10.0)));
        assert!(!m.matches(&json!("10")));
        assert!(!m.matches(&json!(11)));
        let m = ValueMatcher::Equals(json!({"a": [1, true]}));
        assert!(m.matches(&json!({"a": [1, true]})));
        assert!(!m.matches(&json!({"a": [1, false]})));
    }

    #[test]
    fn string_pattern_against_number_sees_json_text() {
        assert!(bare("10").matches(&json!(10)));
        assert!(bare("tr*").matches(&json!(true)));
    }

    #[test]
    fn tool_name_matcher() {
        let m = NameMatcher::new("read_file").unwrap();
        assert!(m.matches("Read"));
        assert!(!m.matches("Write"));
        let g = NameMatcher::new("mcp__github__*").unwrap();
        assert!(g.matches("mcp__github__create_issue"));
        assert!(g.matches("MCP__GitHub__x"));
        assert!(!g.matches("mcp__slack__post"));
    }

    #[test]
    fn matcher_forms_are_read_one_way_for_yaml_and_the_fluent_api() {
        assert!(matches!(
            ValueMatcher::from_json(&json!({"contains": ""})),
            Err(MatcherError::EmptyContains)
        ));
        assert!(matches!(
            ValueMatcher::from_json(&json!({"glob": 3})),
            Err(MatcherError::NotAString { form: "glob" })
        ));
        let Err(MatcherError::NotAForm {
            unknown,
            suggestion,
        }) = ValueMatcher::from_json(&json!({"globb": "*.rs"}))
        else {
            panic!("a typo of a form is not a matcher")
        };
        assert_eq!(
            (unknown.as_deref(), suggestion),
            (Some("globb"), Some("glob"))
        );
        assert!(matches!(
            ValueMatcher::from_json(&json!({"glob": "*.rs", "regex": "x"})),
            Err(MatcherError::NotAForm { unknown: None, .. })
        ));
        assert!(matches!(
            ValueMatcher::from_json(&json!({"regex": "("})),
            Err(MatcherError::Form(_))
        ));
        assert!(matches!(
            ValueMatcher::from_json(&json!({"a": 1})),
            Err(MatcherError::NotAForm { .. })
        ));
        assert!(matches!(
            ValueMatcher::from_json(&json!({"equals": {"a": 1}})),
            Ok(ValueMatcher::Equals(_))
        ));
        assert!(matches!(
            ValueMatcher::from_json(&json!(3)),
            Ok(ValueMatcher::Equals(_))
        ));
    }

    #[test]
    fn skill_names_match_plain_plugin_qualified_and_globbed() {
        let greet = SkillMatcher::new("greet").unwrap();
        assert!(greet.matches("greet"));
        assert!(greet.matches("/Greet"));
        assert!(
            greet.matches("hello:greet"),
            "a plugin's skill of that name"
        );
        assert!(!greet.matches("greeting"));
        assert!(!greet.matches("greet:other"));
        let qualified = SkillMatcher::new("hello:greet").unwrap();
        assert!(qualified.matches("hello:greet"));
        assert!(!qualified.matches("greet"), "the plugin was named");
        assert!(!qualified.matches("bye:greet"));
        let glob = SkillMatcher::new("dep*").unwrap();
        assert!(glob.matches("deploy"));
        assert!(glob.matches("ops:deploy"));
        assert!(!glob.matches("redeploy"));
        assert!(SkillMatcher::new("a[*").is_err());
    }
}
