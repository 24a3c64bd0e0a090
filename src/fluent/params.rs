//! Parameters to match, as the fluent API takes them: upstream aptitude's `params!{}` map
//! of strings, or a JSON object (`serde_json::json!`). Both become the YAML `params:`
//! matchers, read by the YAML rules (`docs/yaml-api.md`): a string is a bare pattern
//! (text found anywhere, and a glob or regex by its markers); in JSON, `{"glob": …}`,
//! `{"regex": …}`, `{"equals": …}`, `{"contains": …}` are explicit and other values
//! compare as JSON.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::spec::ParamMatcher;
use crate::spec::pattern::{MatcherError, PatternError, ValueMatcher};

/// A map of parameter names to patterns, as upstream aptitude writes it:
/// `params! { "file_path" => "*.env", "content" => "hello" }` makes a
/// `HashMap<String, String>` (`to_string()` on both sides, so any `Display` works).
///
/// ```
/// use aptitude::params;
///
/// let p = params! { "file_path" => "*.txt", "limit" => 10 };
/// assert_eq!(p["limit"], "10");
/// ```
#[macro_export]
macro_rules! params {
    ($($key:expr => $value:expr),* $(,)?) => {{
        #[allow(unused_mut, reason = "an empty `params! {}` inserts nothing")]
        let mut map = ::std::collections::HashMap::<::std::string::String, ::std::string::String>::new();
        $(map.insert(($key).to_string(), ($value).to_string());)*
        map
    }};
}

/// Why parameters can not be matched: a pattern that does not compile, or a JSON value
/// that is not an object of parameters.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ParamsError {
    /// A bare pattern does not compile.
    #[error("parameter `{key}`: {source}")]
    Pattern {
        /// The parameter.
        key: String,
        /// Why.
        #[source]
        source: PatternError,
    },
    /// A JSON value is not one of the matcher forms.
    #[error("parameter `{key}`: {message}")]
    Form {
        /// The parameter.
        key: String,
        /// Why, as the YAML loader says it.
        message: String,
    },
    /// The parameters are not a JSON object.
    #[error("parameters must be a JSON object, found {0}")]
    NotAnObject(String),
}

/// Parameters the fluent API can match: a `params!` map (`HashMap` or `BTreeMap` of
/// strings, each a bare pattern) or a JSON object.
pub trait Params {
    /// The matchers, one per parameter.
    ///
    /// # Errors
    /// [`ParamsError`] when a pattern does not compile or the JSON is not an object of
    /// parameters.
    fn matchers(&self) -> Result<Vec<ParamMatcher>, ParamsError>;
}

fn bare(key: &str, pattern: &str) -> Result<ParamMatcher, ParamsError> {
    ValueMatcher::bare(pattern)
        .map(|matcher| ParamMatcher {
            key: key.to_owned(),
            matcher,
        })
        .map_err(|source| ParamsError::Pattern {
            key: key.to_owned(),
            source,
        })
}

impl<S: std::hash::BuildHasher> Params for HashMap<String, String, S> {
    fn matchers(&self) -> Result<Vec<ParamMatcher>, ParamsError> {
        // Sorted, so that messages name the parameters in a stable order.
        let sorted: BTreeMap<&String, &String> = self.iter().collect();
        sorted.into_iter().map(|(k, v)| bare(k, v)).collect()
    }
}

impl Params for BTreeMap<String, String> {
    fn matchers(&self) -> Result<Vec<ParamMatcher>, ParamsError> {
        self.iter().map(|(k, v)| bare(k, v)).collect()
    }
}

impl Params for Value {
    fn matchers(&self) -> Result<Vec<ParamMatcher>, ParamsError> {
        let Value::Object(entries) = self else {
            return Err(ParamsError::NotAnObject(self.to_string()));
        };
        entries
            .iter()
            .map(|(key, value)| {
                value_matcher(value)
                    .map(|matcher| ParamMatcher {
                        key: key.clone(),
                        matcher,
                    })
                    .map_err(|e| ParamsError::Form {
                        key: key.clone(),
                        message: e.to_string(),
                    })
            })
            .collect()
    }
}

impl<P: Params + ?Sized> Params for &P {
    fn matchers(&self) -> Result<Vec<ParamMatcher>, ParamsError> {
        (**self).matchers()
    }
}

/// Converts a JSON parameter value into a matcher, by the YAML rules (the loader's own
/// [`ValueMatcher::from_json`]).
///
/// # Errors
/// When a pattern does not compile, or an object is not one of the explicit forms.
pub fn value_matcher(value: &Value) -> Result<ValueMatcher, MatcherError> {
    ValueMatcher::from_json(value)
}

/// Whether a call's parameters (`actual`, a JSON object) match every pattern of
/// `expected` (upstream's `params_match`): each key must be present and its value match
/// the pattern read as a bare pattern (see the module docs). A pattern that does not
/// compile matches nothing.
pub fn params_match<S: std::hash::BuildHasher>(
    expected: &HashMap<String, String, S>,
    actual: &Value,
) -> bool {
    expected.iter().all(
        |(key, pattern)| match (actual.get(key), ValueMatcher::bare(pattern)) {
            (Some(value), Ok(matcher)) => matcher.matches(value),
            _ => false,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_macro_stringifies_both_sides() {
        let p = params! {"file_path" => "*.env", "n" => 3, };
        assert_eq!(p.len(), 2);
        assert_eq!(p["n"], "3");
        let empty = params! {};
        assert!(empty.is_empty());
    }

    #[test]
    fn string_maps_are_bare_patterns_and_json_follows_the_yaml_rules() {
        let p = params! {"file_path" => "*.env"};
        let m = p.matchers().unwrap();
        assert!(m[0].matcher.matches(&serde_json::json!("/p/.env")));
        assert!(!m[0].matcher.matches(&serde_json::json!("/p/README.md")));
        assert!(matches!(
            value_matcher(&serde_json::json!(3)).unwrap(),
            ValueMatcher::Equals(_)
        ));
        assert!(matches!(
            value_matcher(&serde_json::json!({"glob": "*.rs"})).unwrap(),
            ValueMatcher::Glob { .. }
        ));
        assert!(value_matcher(&serde_json::json!({"regx": "a"})).is_err());
        assert!(value_matcher(&serde_json::json!({"a": 1, "b": 2})).is_err());
        assert!(matches!(
            serde_json::json!([1]).matchers(),
            Err(ParamsError::NotAnObject(_))
        ));
    }

    #[test]
    fn params_match_needs_every_key() {
        let call = serde_json::json!({"file_path": "/p/.env", "limit": 5});
        assert!(params_match(&params! {"file_path" => "*.env"}, &call));
        assert!(params_match(&params! {}, &call));
        assert!(!params_match(
            &params! {"file_path" => "*.env", "offset" => "1"},
            &call
        ));
        assert!(!params_match(&params! {"file_path" => "*.rs"}, &call));
    }
}
