//! The shape of an agent release's surface beside its tools, as `aptitude drift` compares
//! it: the events its output stream held on the stub run, each with its top-level field
//! names ([`stream_shape`]); and the fields of the settings and hook payload JSON schemas
//! its package ships ([`schema_fields`]).
//!
//! Both are read only where they can be: a stream with no JSON object line (Kiro's text,
//! Aider's chat) and a package that ships no schema are *not readable*, said so with why,
//! never guessed from another release or from aptitude's parsers. An event is named by its
//! `type` field, with its `subtype` when it has one (`system/init`, Claude Code
//! stream-json; `message_end`, pi `--mode json`); a line without `type` counts as `(untyped)`.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// Named parts (events, schema files) and the field names each was seen with.
pub type Shape = BTreeMap<String, BTreeSet<String>>;

/// Two releases' shapes compared, or why they could not be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ShapeDrift {
    /// Both were read.
    Compared {
        /// Parts (events, schemas) only the newer release had.
        added: Vec<String>,
        /// Parts only the older release had.
        removed: Vec<String>,
        /// Parts both had whose fields differ.
        changed: Vec<FieldChange>,
    },
    /// One or both could not be read.
    NotReadable {
        /// Why, e.g. `@mariozechner/pi-coding-agent@0.72.1 ships no JSON schema of its
        /// settings or hook payloads`.
        why: String,
    },
}

/// One part's fields, changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    /// The event (`system/init`) or schema file (`settings.schema.json`).
    pub part: String,
    /// Fields only the newer release's had.
    pub added: Vec<String>,
    /// Fields only the older release's had.
    pub removed: Vec<String>,
}

impl ShapeDrift {
    /// Whether both were read and nothing differs.
    pub fn is_unchanged(&self) -> bool {
        matches!(self, Self::Compared { added, removed, changed }
            if added.is_empty() && removed.is_empty() && changed.is_empty())
    }
}

/// Why a release's shape could not be read from what it left: its stream
/// ([`stream_shape`]) or its package's schemas ([`schema_fields`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// No line of the output stream is a JSON object (Kiro's text, Aider's chat).
    #[error("its output stream holds no JSON event")]
    NoEvent,
    /// The package ships no settings, config or hooks JSON schema with `properties`.
    #[error("{package} ships no JSON schema of its settings or hook payloads")]
    NoSchema {
        /// What was searched: `PACKAGE@VERSION`.
        package: String,
    },
}

/// The events of an output stream (JSON Lines) and their top-level fields.
///
/// # Errors
/// [`Unreadable::NoEvent`]: no line of it is a JSON object.
pub fn stream_shape(text: &str) -> Result<Shape, Unreadable> {
    let mut shape = Shape::new();
    for line in text.lines() {
        let Ok(serde_json::Value::Object(event)) = serde_json::from_str(line.trim()) else {
            continue;
        };
        let word = |key: &str| event.get(key).and_then(serde_json::Value::as_str);
        let name = match (word("type"), word("subtype")) {
            (Some(t), Some(sub)) => format!("{t}/{sub}"),
            (Some(t), None) => t.to_owned(),
            (None, _) => "(untyped)".to_owned(),
        };
        shape.entry(name).or_default().extend(event.keys().cloned());
    }
    if shape.is_empty() {
        return Err(Unreadable::NoEvent);
    }
    Ok(shape)
}

/// The top-level `properties` of each JSON schema in `schemas` (file name, text) whose
/// file name says settings, config or hooks; files that are not a JSON object with
/// `properties` are left out.
///
/// # Errors
/// [`Unreadable::NoSchema`]: no such schema, `package` naming what was searched.
pub fn schema_fields(package: &str, schemas: &[(String, String)]) -> Result<Shape, Unreadable> {
    let mut shape = Shape::new();
    for (name, text) in schemas {
        let lower = name.to_ascii_lowercase();
        if !["settings", "config", "hook"]
            .iter()
            .any(|w| lower.contains(w))
        {
            continue;
        }
        let Ok(serde_json::Value::Object(schema)) = serde_json::from_str(text) else {
            continue;
        };
        if let Some(serde_json::Value::Object(properties)) = schema.get("properties") {
            shape.insert(name.clone(), properties.keys().cloned().collect());
        }
    }
    if shape.is_empty() {
        return Err(Unreadable::NoSchema {
            package: package.to_owned(),
        });
    }
    Ok(shape)
}

/// `older` against `newer`; not readable when either is not, with each reason (an
/// [`Unreadable`], or the caller's own reason for a shape it could not find).
pub fn compare<E: std::fmt::Display>(
    (from, older): (&str, Result<Shape, E>),
    (to, newer): (&str, Result<Shape, E>),
) -> ShapeDrift {
    let (old, new) = match (older, newer) {
        (Ok(old), Ok(new)) => (old, new),
        (old, new) => {
            let why: Vec<String> = [(from, old.err()), (to, new.err())]
                .into_iter()
                .filter_map(|(v, e)| Some(format!("{v}: {}", e?)))
                .collect();
            return ShapeDrift::NotReadable {
                why: why.join("; "),
            };
        }
    };
    let only = |a: &Shape, b: &Shape| {
        a.keys()
            .filter(|k| !b.contains_key(*k))
            .cloned()
            .collect::<Vec<_>>()
    };
    let changed = old
        .iter()
        .filter_map(|(part, before)| {
            let after = new.get(part)?;
            let added: Vec<String> = after.difference(before).cloned().collect();
            let removed: Vec<String> = before.difference(after).cloned().collect();
            (!added.is_empty() || !removed.is_empty()).then(|| FieldChange {
                part: part.clone(),
                added,
                removed,
            })
        })
        .collect();
    ShapeDrift::Compared {
        added: only(&new, &old),
        removed: only(&old, &new),
        changed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Claude Code renamed a field of its `result` event and added an event: both show,
    /// by event and field; an event is named with its subtype.
    #[test]
    fn events_and_fields_added_and_removed_are_shown_by_event() {
        let old = stream_shape(
            "{\"type\":\"system\",\"subtype\":\"init\",\"tools\":[]}\n{\"type\":\"result\",\"is_error\":true,\"cost\":0}\n",
        )
        .unwrap();
        let new = stream_shape(
            "{\"type\":\"system\",\"subtype\":\"init\",\"tools\":[]}\nnot json\n{\"type\":\"result\",\"is_error\":true,\"total_cost_usd\":0}\n{\"type\":\"rate_limit_event\"}\n",
        )
        .unwrap();
        assert!(old.contains_key("system/init"));
        let drift = compare(("1", Ok::<_, Unreadable>(old.clone())), ("2", Ok(new)));
        assert_eq!(
            drift,
            ShapeDrift::Compared {
                added: vec!["rate_limit_event".into()],
                removed: vec![],
                changed: vec![FieldChange {
                    part: "result".into(),
                    added: vec!["total_cost_usd".into()],
                    removed: vec!["cost".into()],
                }],
            }
        );
        assert!(compare(("1", Ok::<_, Unreadable>(old.clone())), ("2", Ok(old))).is_unchanged());
    }

    /// A text stream, or a package without a schema, is not readable and says why for each
    /// release: never "unchanged".
    #[test]
    fn what_can_not_be_read_says_why_never_unchanged() {
        let text = stream_shape("Thinking...\nDone.\n");
        assert_eq!(
            text.clone().unwrap_err().to_string(),
            "its output stream holds no JSON event"
        );
        let drift = compare(("1", text.clone()), ("2", text));
        assert!(!drift.is_unchanged());
        let ShapeDrift::NotReadable { why } = drift else {
            panic!("{drift:?}")
        };
        assert_eq!(
            why,
            "1: its output stream holds no JSON event; 2: its output stream holds no JSON event"
        );
        let theme = vec![(
            "theme-schema.json".to_owned(),
            "{\"properties\":{\"colors\":{}}}".to_owned(),
        )];
        assert_eq!(
            schema_fields("pkg@1", &theme).unwrap_err().to_string(),
            "pkg@1 ships no JSON schema of its settings or hook payloads"
        );
        let settings = vec![(
            "settings.schema.json".to_owned(),
            "{\"properties\":{\"hooks\":{},\"permissions\":{}}}".to_owned(),
        )];
        let fields = schema_fields("pkg@1", &settings).unwrap();
        assert_eq!(
            fields["settings.schema.json"].iter().collect::<Vec<_>>(),
            ["hooks", "permissions"]
        );
    }
}
