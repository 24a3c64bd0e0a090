//! The small path syntax of `json_file`'s report checks: `results[].command`.
//!
//! Fields are separated by `.`; `[]` after a field means "each element of this array";
//! a whole-number segment indexes an array (`results.0.command`, as `required:` paths do).
//! `results[].command` selects the `command` of every entry of `results`.

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

/// What one selected value is: where it was found (`results[2].command`) and the value.
pub type Selected<'a> = (String, &'a Value);

impl JsonPath {
    /// Parses `text`.
    ///
    /// # Errors
    /// An empty path, an empty field (`a..b`, `.a`), or brackets other than a trailing
    /// `[]` on a field (`a[0]`, `a[`), with what is wrong.
    pub fn parse(text: &str) -> Result<JsonPath, String> {
        if text.trim().is_empty() {
            return Err("the path is empty".into());
        }
        let mut steps = Vec::new();
        for segment in text.split('.') {
            let (name, each) = match segment.strip_suffix("[]") {
                Some(name) => (name, true),
                None => (segment, false),
            };
            if name.contains('[') || name.contains(']') {
                return Err(format!(
                    "`{segment}`: only `[]` (each element) may follow a field; index with `.0`"
                ));
            }
            if name.is_empty() && !(each && steps.is_empty() && segment == "[]") {
                return Err(format!("`{text}` has an empty field name"));
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
        let mut current: Vec<Selected<'a>> = vec![(String::new(), root)];
        for step in &self.steps {
            let mut next = Vec::new();
            for (at, value) in current {
                match (step, value) {
                    (JsonStep::Each, Value::Array(items)) => {
                        for (i, item) in items.iter().enumerate() {
                            next.push((format!("{at}[{i}]"), item));
                        }
                    }
                    (JsonStep::Key(k), Value::Object(map)) => {
                        if let Some(v) = map.get(k) {
                            next.push((join(&at, k), v));
                        }
                    }
                    (JsonStep::Key(k), Value::Array(items)) => {
                        if let Some(v) = k.parse::<usize>().ok().and_then(|i| items.get(i)) {
                            next.push((join(&at, k), v));
                        }
                    }
                    _ => {}
                }
            }
            current = next;
        }
        current
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
    fn bad_paths_say_why() {
        assert!(JsonPath::parse("").is_err());
        assert!(JsonPath::parse("a..b").unwrap_err().contains("empty field"));
        assert!(JsonPath::parse("a[0].b").unwrap_err().contains("only `[]`"));
        assert!(
            JsonPath::parse("[]").is_ok(),
            "each element of a top-level array"
        );
    }
}
