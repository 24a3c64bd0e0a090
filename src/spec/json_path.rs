//! The small path syntax of `json_file`'s report checks: `results[].command`.
//!
//! Fields are separated by `.`; `[]` after a field means "each element of this array";
//! a whole-number segment indexes an array (`results.0.command`).
//! `results[].command` selects the `command` of every entry of `results`. `required:`
//! paths are the same paths.

use serde_json::Value;

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonStep {
    /// A field of an object, or (a whole number) an element of an array.
    Key(String),
    /// Each element of an array.
    Each,
}

/// A parsed path, with its text as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath {
    /// The path as written in the test file.
    pub text: String,
    /// Its steps.
    pub steps: Vec<JsonStep>,
}

/// Why a JSON path does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonPathError {
    /// Nothing was written.
    #[error("the path is empty")]
    Empty,
    /// Brackets other than a trailing `[]` on a field (`a[0]`, `a[`).
    #[error("`{segment}`: only `[]` (each element) may follow a field; index with `.0`")]
    Brackets {
        /// The segment with the brackets.
        segment: String,
    },
    /// An empty field (`a..b`, `.a`).
    #[error("`{path}` has an empty field name")]
    EmptyField {
        /// The whole path.
        path: String,
    },
}

/// What one selected value is: where it was found (`results[2].command`) and the value.
pub type Selected<'a> = (String, &'a Value);

impl JsonPath {
    /// Parses `text`.
    ///
    /// # Errors
    /// An empty path, an empty field (`a..b`, `.a`), or brackets other than a trailing
    /// `[]` on a field (`a[0]`, `a[`), with what is wrong.
    pub fn parse(text: &str) -> Result<JsonPath, JsonPathError> {
        if text.trim().is_empty() {
            return Err(JsonPathError::Empty);
        }
        let mut steps = Vec::new();
        for segment in text.split('.') {
            let (name, each) = match segment.strip_suffix("[]") {
                Some(name) => (name, true),
                None => (segment, false),
            };
            if name.contains('[') || name.contains(']') {
                return Err(JsonPathError::Brackets {
                    segment: segment.to_owned(),
                });
            }
            if name.is_empty() && !(each && steps.is_empty() && segment == "[]") {
                return Err(JsonPathError::EmptyField {
                    path: text.to_owned(),
                });
            }
            if !name.is_empty() {
                steps.push(JsonStep::Key(name.to_owned()));
            }
            if each {
                steps.push(JsonStep::Each);
            }
        }
        Ok(JsonPath {
            text: text.to_owned(),
            steps,
        })
    }

    /// The path without its last field (`results[].command` → `results[]`) and that field,
    /// when it ends with one.
    pub fn split_last(&self) -> Option<(JsonPath, &str)> {
        let (last, rest) = self.steps.split_last()?;
        let JsonStep::Key(field) = last else {
            return None;
        };
        let parent_text = self
            .text
            .strip_suffix(field.as_str())
            .map(|t| t.strip_suffix('.').unwrap_or(t))
            .unwrap_or("")
            .to_owned();
        Some((
            JsonPath {
                text: parent_text,
                steps: rest.to_vec(),
            },
            field,
        ))
    }

    /// Every value the path selects in `root`, with where it was found; parts of the path
    /// that lead nowhere select nothing.
    pub fn select<'a>(&self, root: &'a Value) -> Vec<Selected<'a>> {
        self.walk(root)
            .into_iter()
            .filter_map(|(at, v)| v.map(|v| (at, v)))
            .collect()
    }

    /// Like [`JsonPath::select`], but a branch that leads nowhere ends in `None` at the
    /// first step it could not take (`results[1].command` for an entry without a
    /// `command`; `results[]` for a `results` that is not an array), so that a caller can
    /// say what is missing. `[]` over an empty array leads to no branch at all.
    pub fn walk<'a>(&self, root: &'a Value) -> Vec<(String, Option<&'a Value>)> {
        let mut current: Vec<Selected<'a>> = vec![(String::new(), root)];
        let mut missing = Vec::new();
        for step in &self.steps {
            let mut next = Vec::new();
            for (at, value) in current {
                match (step, value) {
                    (JsonStep::Each, Value::Array(items)) => {
                        for (i, item) in items.iter().enumerate() {
                            next.push((format!("{at}[{i}]"), item));
                        }
                    }
                    (JsonStep::Each, _) => missing.push((format!("{at}[]"), None)),
                    (JsonStep::Key(k), Value::Object(map)) => match map.get(k) {
                        Some(v) => next.push((join(&at, k), v)),
                        None => missing.push((join(&at, k), None)),
                    },
                    (JsonStep::Key(k), Value::Array(items)) => {
                        match k.parse::<usize>().ok().and_then(|i| items.get(i)) {
                            Some(v) => next.push((join(&at, k), v)),
                            None => missing.push((join(&at, k), None)),
                        }
                    }
                    (JsonStep::Key(k), _) => missing.push((join(&at, k), None)),
                }
            }
            current = next;
        }
        let mut out: Vec<(String, Option<&'a Value>)> =
            current.into_iter().map(|(at, v)| (at, Some(v))).collect();
        out.extend(missing);
        out
    }
}

fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_element_and_fields() {
        let v = json!({"results": [{"command": "a"}, {"status": "PASS"}, {"command": "c"}]});
        let p = JsonPath::parse("results[].command").unwrap();
        let found: Vec<(String, &Value)> = p.select(&v);
        assert_eq!(
            found,
            vec![
                ("results[0].command".to_owned(), &json!("a")),
                ("results[2].command".to_owned(), &json!("c")),
            ]
        );
        let (parent, field) = p.split_last().unwrap();
        assert_eq!((parent.text.as_str(), field), ("results[]", "command"));
        assert_eq!(parent.select(&v).len(), 3);
        assert_eq!(
            JsonPath::parse("results.1.status").unwrap().select(&v),
            vec![("results.1.status".to_owned(), &json!("PASS"))]
        );
        assert!(
            JsonPath::parse("nothing[].x")
                .unwrap()
                .select(&v)
                .is_empty()
        );
    }

    #[test]
    fn walk_says_where_a_path_leads_nowhere() {
        let v = json!({"results": [{"command": "a"}, {"status": "PASS"}], "n": 3});
        let walked = |p: &str| -> Vec<(String, bool)> {
            JsonPath::parse(p)
                .unwrap()
                .walk(&v)
                .into_iter()
                .map(|(at, v)| (at, v.is_some()))
                .collect()
        };
        assert_eq!(
            walked("results[].command"),
            [
                ("results[0].command".to_owned(), true),
                ("results[1].command".to_owned(), false)
            ]
        );
        assert_eq!(walked("results.5"), [("results.5".to_owned(), false)]);
        assert_eq!(walked("n[]"), [("n[]".to_owned(), false)]);
        assert_eq!(walked("n.x"), [("n.x".to_owned(), false)]);
        assert_eq!(walked("goal.x"), [("goal".to_owned(), false)]);
        assert!(
            walked("results.0.command.x")
                .iter()
                .all(|(_, found)| !found)
        );
    }

    #[test]
    fn bad_paths_say_why() {
        assert!(JsonPath::parse("").is_err());
        assert!(
            JsonPath::parse("a..b")
                .unwrap_err()
                .to_string()
                .contains("empty field")
        );
        assert!(
            JsonPath::parse("a[0].b")
                .unwrap_err()
                .to_string()
                .contains("only `[]`")
        );
        assert!(
            JsonPath::parse("[]").is_ok(),
            "each element of a top-level array"
        );
    }
}
