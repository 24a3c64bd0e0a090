//! A YAML document as a tree of nodes that remember where they came from.
//!
//! Test files are validated by hand over this tree rather than by `#[derive(Deserialize)]`
//! straight into the spec types, for two reasons: serde stops at the first problem, while a
//! user fixing a file wants every problem at once; and every key and value here carries its
//! own line and column, so that each diagnostic can point at the exact token.
//!
//! The tree is built by serde-saphyr (YAML 1.2 with the usual 1.1 booleans), through its
//! [`serde_saphyr::Spanned`] wrapper.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// Where a node starts in its file: 1-based line and column (in characters), and its length
/// in characters (0 when unknown, e.g. for an empty value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
    /// Length of the node's first token, in characters.
    pub len: u32,
}

impl Pos {
    fn of<T>(spanned: &Spanned<T>) -> Self {
        let loc = spanned.referenced;
        Pos {
            line: u32::try_from(loc.line()).unwrap_or(u32::MAX),
            column: u32::try_from(loc.column()).unwrap_or(u32::MAX),
            len: u32::try_from(loc.span().len()).unwrap_or(0),
        }
    }
}

/// A YAML value with its position.
#[derive(Debug, Clone)]
pub struct Node {
    /// Where the value starts.
    pub pos: Pos,
    /// The value.
    pub value: Value,
}

/// A key of a mapping, with its position.
#[derive(Debug, Clone)]
pub struct Key {
    /// Where the key starts.
    pub pos: Pos,
    /// The key text (non-string keys are rendered as text).
    pub name: String,
}

/// The YAML value kinds that test files use.
#[derive(Debug, Clone)]
pub enum Value {
    /// `~`, `null` or an empty value.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits i64.
    Int(i64),
    /// A floating-point number.
    Float(f64),
    /// A string (quoted or plain).
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order.
    Map(Vec<(Key, Node)>),
}

impl Value {
    /// The YAML type name used in "expected …, found …" messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a number",
            Value::Str(_) => "a string",
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
        }
    }

    /// Converts to JSON, for parameter values compared with a tool call's JSON input.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) => serde_json::Value::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::Seq(items) => items.iter().map(|n| n.value.to_json()).collect(),
            Value::Map(entries) => serde_json::Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.name.clone(), v.value.to_json()))
                    .collect(),
            ),
        }
    }
}

/// The raw node as serde-saphyr hands it over, before positions are flattened.
enum RawValue {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Seq(Vec<Spanned<RawValue>>),
    Map(Vec<(Spanned<RawKey>, Spanned<RawValue>)>),
}

/// Mapping keys may be any scalar in YAML; they are kept as text.
struct RawKey(String);

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_unit<E>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_none<E>(self) -> Result<RawValue, E> {
        Ok(RawValue::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<RawValue, E> {
        Ok(RawValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<RawValue, E> {
        Ok(RawValue::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<RawValue, E> {
        Ok(match i64::try_from(v) {
            Ok(i) => RawValue::Int(i),
            // Too large for i64: keep the magnitude as a float rather than wrap.
            Err(_) => RawValue::Float(v as f64),
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<RawValue, E> {
        Ok(RawValue::Float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<RawValue, E> {
        Ok(RawValue::Str(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<RawValue, E> {
        Ok(RawValue::Str(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(RawValue::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawValue, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry()? {
            entries.push(entry);
        }
        Ok(RawValue::Map(entries))
    }
}

impl<'de> Deserialize<'de> for RawValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawVisitor)
    }
}

struct RawKeyVisitor;

impl Visitor<'_> for RawKeyVisitor {
    type Value = RawKey;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }
    fn visit_unit<E>(self) -> Result<RawKey, E> {
        Ok(RawKey("null".into()))
    }
    fn visit_bool<E>(self, v: bool) -> Result<RawKey, E> {
        Ok(RawKey(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<RawKey, E> {
        Ok(RawKey(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<RawKey, E> {
        Ok(RawKey(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<RawKey, E> {
        Ok(RawKey(v.to_string()))
    }
    fn visit_str<E>(self, v: &str) -> Result<RawKey, E> {
        Ok(RawKey(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<RawKey, E> {
        Ok(RawKey(v))
    }
}

impl<'de> Deserialize<'de> for RawKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawKeyVisitor)
    }
}

fn flatten(raw: Spanned<RawValue>) -> Node {
    let pos = Pos::of(&raw);
    let value = match raw.value {
        RawValue::Null => Value::Null,
        RawValue::Bool(b) => Value::Bool(b),
        RawValue::Int(i) => Value::Int(i),
        RawValue::Float(f) => Value::Float(f),
        RawValue::Str(s) => Value::Str(s),
        RawValue::Seq(items) => Value::Seq(items.into_iter().map(flatten).collect()),
        RawValue::Map(entries) => Value::Map(
            entries
                .into_iter()
                .map(|(k, v)| {
                    let key = Key {
                        pos: Pos::of(&k),
                        name: k.value.0,
                    };
                    (key, flatten(v))
                })
                .collect(),
        ),
    };
    Node { pos, value }
}

/// A YAML syntax error: the parser's message and where it stopped.
#[derive(Debug, Clone)]
pub struct SyntaxError {
    /// The parser's message, without its own location suffix.
    pub message: String,
    /// Where the parser stopped, when known.
    pub pos: Option<Pos>,
}

/// Parses one YAML document into a positioned tree.
///
/// # Errors
/// A [`SyntaxError`] for malformed YAML, duplicate keys, unknown anchors, or several
/// documents in one file.
pub fn parse(source: &str) -> Result<Node, SyntaxError> {
    check_tags(source)?;
    match serde_saphyr::from_str::<Spanned<RawValue>>(source) {
        Ok(raw) => Ok(flatten(raw)),
        Err(err) => {
            let pos = err.location().map(|loc| Pos {
                line: u32::try_from(loc.line()).unwrap_or(u32::MAX),
                column: u32::try_from(loc.column()).unwrap_or(u32::MAX),
                len: 1,
            });
            Err(SyntaxError {
                message: clean_parser_message(&err.without_snippet().to_string()),
                pos,
            })
        }
    }
}

/// The prefix of the YAML core schema's tags (`!!str` is `tag:yaml.org,2002:str`).
const CORE_SCHEMA: &str = "tag:yaml.org,2002:";

/// The core schema tags a test file may carry: they only say what a plain value is
/// (`!!str 3` for the string "3"). Any other tag (`!!binary`, `!foo`) would be dropped or
/// reinterpreted silently by the deserializer, so it is an error.
const ALLOWED_TAGS: [&str; 7] = ["str", "int", "float", "bool", "null", "map", "seq"];

/// Rejects explicit tags other than [`ALLOWED_TAGS`], at the tag's position. Syntax errors
/// are left to the deserializer, which reports them in its own words.
fn check_tags(source: &str) -> Result<(), SyntaxError> {
    for event in granit_parser::Parser::new_from_str(source) {
        let Ok((event, span)) = event else {
            return Ok(());
        };
        let Some(tag) = event.tag() else { continue };
        let core = tag.handle() == CORE_SCHEMA;
        if core && ALLOWED_TAGS.contains(&tag.suffix()) {
            continue;
        }
        let written = if core {
            format!("!!{}", tag.suffix())
        } else {
            format!("{}{}", tag.handle(), tag.suffix())
        };
        // The event's span starts at the tagged value; the tag stands before it.
        let (line, column) = span
            .start
            .byte_offset()
            .and_then(|end| source.get(..end))
            .and_then(|before| before.rfind(written.as_str()).map(|at| (before, at)))
            .map_or((span.start.line(), span.start.col() + 1), |(before, at)| {
                let line_start = before[..at].rfind('\n').map_or(0, |n| n + 1);
                (
                    before[..at].matches('\n').count() + 1,
                    before[line_start..at].chars().count() + 1,
                )
            });
        return Err(SyntaxError {
            message: format!(
                "YAML tag `{written}` is not supported in test files; write a plain value"
            ),
            pos: Some(Pos {
                line: u32::try_from(line).unwrap_or(u32::MAX),
                column: u32::try_from(column).unwrap_or(u32::MAX),
                len: u32::try_from(written.chars().count()).unwrap_or(1),
            }),
        });
    }
    Ok(())
}

/// serde-saphyr appends " at line N, column M", advice about its own API and options, and
/// debug output of its limits; the diagnostic shows the location itself and speaks of test
/// files.
fn clean_parser_message(message: &str) -> String {
    let mut message = message.trim();
    if let Some(idx) = message.rfind(" at line ") {
        message = &message[..idx];
    }
    if let Some(rest) = message.strip_prefix("duplicate mapping key: ") {
        let key = rest.split(", set ").next().unwrap_or(rest);
        return format!("duplicate key `{key}`");
    }
    if message.starts_with("recursion limit exceeded") {
        return "the file is nested too deeply for a test file".to_owned();
    }
    if message.starts_with("multiple YAML documents") {
        return "a test file holds one YAML document, and a second one starts here, after `---`: put each test in its own file".to_owned();
    }
    if let Some(breach) = message.strip_prefix("budget breached: ") {
        // `Nodes { nodes: 250001 }` → the limit's name and the count reached.
        let kind = breach.split([' ', '{']).next().unwrap_or(breach);
        let count: String = breach
            .chars()
            .skip_while(|c| !c.is_ascii_digit())
            .take_while(char::is_ascii_digit)
            .collect();
        let what = match kind {
            "Nodes" => "YAML values",
            "Events" => "YAML parser events",
            "Depth" | "InclusionDepth" => "levels of nesting",
            "Aliases" | "AliasAnchorRatio" => "alias uses (`*name`)",
            "Anchors" => "anchors (`&name`)",
            "Documents" => "YAML documents",
            "ScalarBytes" | "InputBytes" | "CommentBytes" => "bytes",
            "MergeKeys" => "merge keys (`<<`)",
            _ => "YAML elements",
        };
        return if count.is_empty() {
            format!("the file is too large or too deeply nested for a test file (too many {what})")
        } else {
            format!(
                "the file is too large or too deeply nested for a test file ({count} {what} reached the limit)"
            )
        };
    }
    message.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_values_carry_positions() {
        let node = parse("name: x\nassertions:\n  - tool: Read\n").unwrap();
        let Value::Map(entries) = node.value else {
            panic!("expected a mapping")
        };
        assert_eq!(entries[0].0.name, "name");
        assert_eq!((entries[0].0.pos.line, entries[0].0.pos.column), (1, 1));
        assert_eq!((entries[0].1.pos.line, entries[0].1.pos.column), (1, 7));
        let Value::Seq(items) = &entries[1].1.value else {
            panic!("expected a list")
        };
        assert_eq!(items[0].pos.line, 3);
    }

    #[test]
    fn quoted_numbers_stay_strings() {
        let node = parse("a: \"3\"\nb: 3\n").unwrap();
        let Value::Map(entries) = node.value else {
            panic!("expected a mapping")
        };
        assert!(matches!(entries[0].1.value, Value::Str(_)));
        assert!(matches!(entries[1].1.value, Value::Int(3)));
    }

    #[test]
    fn syntax_errors_have_a_position_and_a_clean_message() {
        let err = parse("name: [\nfoo: bar\n").unwrap_err();
        assert_eq!(err.pos.map(|p| p.line), Some(1));
        assert!(!err.message.contains("at line"), "{}", err.message);
    }

    #[test]
    fn tags_other_than_the_core_schema_are_errors() {
        for (src, tag, col) in [
            ("a: !foo bar\n", "!foo", 4),
            ("a: !!binary aGVsbG8=\n", "!!binary", 4),
        ] {
            let err = parse(src).unwrap_err();
            assert!(err.message.contains(&format!("`{tag}`")), "{}", err.message);
            assert_eq!(err.pos.map(|p| (p.line, p.column)), Some((1, col)), "{src}");
        }
        let nested = parse("a:\n  b: !foo\n    c: 1\n").unwrap_err();
        assert_eq!(nested.pos.map(|p| p.line), Some(2));
        assert!(
            parse("a: !!str 3\nb: !!int 4\n").is_ok(),
            "core schema tags only type a value"
        );
    }

    #[test]
    fn parser_internals_stay_out_of_messages() {
        let err = parse("a: 1\n---\nb: 2\n").unwrap_err();
        assert!(
            err.message
                .starts_with("a test file holds one YAML document"),
            "{}",
            err.message
        );
        assert!(!err.message.contains("from_str"), "{}", err.message);
        assert_eq!(err.pos.map(|p| p.line), Some(3));
        let deep = format!("a: {}{}\n", "[".repeat(5_000), "]".repeat(5_000));
        let err = parse(&deep).unwrap_err();
        assert_eq!(err.message, "the file is nested too deeply for a test file");
        // What serde-saphyr 2.1 says past 250,000 values (too slow to build in a unit test).
        assert_eq!(
            clean_parser_message(
                "budget breached: Nodes { nodes: 250001 } at line 250000, column 3"
            ),
            "the file is too large or too deeply nested for a test file (250001 YAML values reached the limit)"
        );
    }

    #[test]
    fn duplicate_keys_are_reported_in_our_words() {
        let err = parse("name: a\nname: b\n").unwrap_err();
        assert_eq!(err.message, "duplicate key `name`");
        assert_eq!(err.pos.map(|p| p.line), Some(2));
    }
}
