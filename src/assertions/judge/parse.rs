//! Reading the judge's reply: a fallback pipeline, most likely format first (seed 003).
//!
//! Models asked for raw JSON still wrap it in code fences, add prose around it, or return
//! an array. The steps, tried in order until one yields a grade:
//!
//! 1. the whole reply is JSON: an object, or an array holding exactly one object;
//! 2. a fenced code block (```` ```json ```` or plain ```` ``` ````) holding the same;
//! 3. an object bracket-matched inside prose, from the first `{` to the last `}`
//!    ("Here are the results: {...} Hope that helps!"), then any balanced `{…}` that parses;
//! 4. a one-element array bracket-matched inside prose.
//!
//! Value rules: `score` is a number or a numeric string; a fractional score is rounded
//! **down** (8.5 → 8), so a pass always means the judge's own number reached the
//! threshold; it is then clamped to 1–10. `reasoning` may be missing. A reply that yields
//! no grade is a [`ParseError`] carrying an excerpt of the raw text.

use serde_json::Value;

/// A grade read from a reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Grade {
    /// 1–10, after rounding down and clamping.
    pub score: u8,
    /// The judge's explanation ("" when it gave none).
    pub reasoning: String,
    /// The score exactly as the judge wrote it.
    pub raw_score: f64,
}

/// Why a reply yields no grade.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}; reply: {excerpt}")]
pub struct ParseError {
    /// What was wrong.
    pub reason: String,
    /// The start of the raw reply.
    pub excerpt: String,
}

/// Characters of the raw reply kept in a [`ParseError`].
const EXCERPT: usize = 200;

/// Parses a judge's reply by the pipeline in the module docs.
///
/// # Errors
/// When no step yields an object with a usable `score`.
pub fn parse_reply(reply: &str) -> Result<Grade, ParseError> {
    parse_with(reply, grade_of, "grades", "a score")
}

/// Runs the pipeline in the module docs with `read` turning a JSON object into a `T`
/// (the same steps for every reply shape the judge asks for: grades, extracted claims).
/// `plural` names the shape in "several different …"; `holding` what the object must
/// hold, in "no JSON object with …".
///
/// # Errors
/// When no step yields an object `read` accepts; the error carries an excerpt of the reply.
pub fn parse_with<T: Clone + PartialEq>(
    reply: &str,
    read: impl Fn(&Value) -> Result<T, ShapeError>,
    plural: &str,
    holding: &str,
) -> Result<T, ParseError> {
    let text = reply.trim();
    let mut problems: Vec<String> = Vec::new();
    let mut found = |candidate: &str| -> Option<T> {
        match attempt(candidate, &read, plural) {
            Ok(g) => Some(g),
            Err(Some(problem)) => {
                problems.push(problem);
                None
            }
            Err(None) => None,
        }
    };
    let mut grade = found(text);
    if grade.is_none() {
        grade = fenced_blocks(text).into_iter().find_map(&mut found);
    }
    let mut ambiguous = false;
    if grade.is_none()
        && let (Some(start), Some(end)) = (text.find('{'), text.rfind('}'))
        && start < end
    {
        grade = found(&text[start..=end]);
        if grade.is_none() {
            // Several objects in prose: one grade among them is read; different ones are
            // not guessed between.
            let grades: Vec<T> = balanced_objects(text)
                .into_iter()
                .filter_map(&mut found)
                .collect();
            match grades.as_slice() {
                [first, rest @ ..] if rest.iter().all(|g| g == first) => {
                    grade = Some(first.clone())
                }
                [] => {}
                _ => ambiguous = true,
            }
        }
    }
    if grade.is_none()
        && !ambiguous
        && let (Some(start), Some(end)) = (text.find('['), text.rfind(']'))
        && start < end
    {
        grade = found(&text[start..=end]);
    }
    if let Some(g) = grade {
        return Ok(g);
    }
    // Cut by the one cutting helper: a reply quoting a key never shows part of it.
    let excerpt = crate::shared::cut::chars(text, EXCERPT).kept;
    let reason = if ambiguous {
        format!("the judge's reply holds several different {plural}")
    } else if !problems.is_empty() {
        // The first candidate tried is the most likely reading of the reply.
        problems.swap_remove(0)
    } else if text.is_empty() {
        "the judge's reply is empty".to_owned()
    } else {
        format!("the judge's reply holds no JSON object with {holding}")
    };
    Err(ParseError {
        reason,
        excerpt: if text.chars().count() > EXCERPT {
            format!("{excerpt}…")
        } else {
            excerpt
        },
    })
}

/// One candidate: `Ok` with what `read` made of it, `Err(Some(problem))` for JSON `read`
/// rejects, `Err(None)` for text that is not an object or a one-element array.
fn attempt<T>(
    candidate: &str,
    read: &impl Fn(&Value) -> Result<T, ShapeError>,
    plural: &str,
) -> Result<T, Option<String>> {
    let value: Value = serde_json::from_str(candidate.trim()).map_err(|_| None)?;
    let object = match value {
        Value::Object(_) => value,
        Value::Array(mut items) if items.len() == 1 && items[0].is_object() => items.remove(0),
        Value::Array(items) if items.len() > 1 => {
            return Err(Some(format!(
                "the judge's reply holds several different {plural}"
            )));
        }
        _ => return Err(None),
    };
    read(&object).map_err(|e| Some(e.to_string()))
}

/// What is wrong with a JSON object the judge replied, for the shape asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeError {
    /// A field the shape needs is missing: `the JSON has no `score``.
    #[error("the JSON has no `{0}`")]
    Missing(&'static str),
    /// `score` holds no finite number (the value, when there was one).
    #[error("the score is not a number{}", .0.as_ref().map(|v| format!(": {v}")).unwrap_or_default())]
    ScoreNotANumber(Option<String>),
    /// `claims` is `null` (only `[]` says "no claims").
    #[error("`claims` is null (an empty list `[]` means no claims)")]
    NullClaims,
    /// `claims` is not a list.
    #[error("`claims` is not a list: {0}")]
    ClaimsNotAList(String),
    /// One claim of the list, numbered from 1.
    #[error("claim {index}: {problem}")]
    Claim {
        /// 1-based.
        index: usize,
        /// What is wrong with it.
        problem: ClaimProblem,
    },
}

/// What is wrong with one claim object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimProblem {
    /// The claim is not an object.
    #[error("not an object: {0}")]
    NotAnObject(String),
    /// A text field holds something else.
    #[error("`{key}` is not a string: {value}")]
    NotAString {
        /// The field.
        key: String,
        /// What it holds.
        value: String,
    },
    /// No `kind`.
    #[error("no `kind`")]
    NoKind,
    /// A `kind` other than command, file or tests.
    #[error("unknown kind {0:?} (expected command, file or tests)")]
    UnknownKind(String),
    /// An `outcome` other than success, failure or null.
    #[error("unknown outcome {0:?} (expected success, failure or null)")]
    UnknownOutcome(String),
    /// A command claim without `command`.
    #[error("a command claim has no `command`")]
    NoCommand,
    /// A file claim without `path`.
    #[error("a file claim has no `path`")]
    NoPath,
}

/// The grade in a JSON object, or what is wrong with it.
fn grade_of(object: &Value) -> Result<Grade, ShapeError> {
    let raw = match object.get("score") {
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(other) => return Err(ShapeError::ScoreNotANumber(Some(other.to_string()))),
        None => return Err(ShapeError::Missing("score")),
    }
    .filter(|f| f.is_finite())
    .ok_or(ShapeError::ScoreNotANumber(None))?;
    let score = raw.floor().clamp(1.0, 10.0) as u8;
    let reasoning = match object.get("reasoning").or_else(|| object.get("reason")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    Ok(Grade {
        score,
        reasoning,
        raw_score: raw,
    })
}

/// The contents of ```` ``` ```` fenced blocks, in order.
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("```") {
        let after = &rest[open + 3..];
        // Skip the info string (`json`) up to the end of the line.
        let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
        let body = &after[body_start..];
        match body.find("```") {
            Some(close) => {
                blocks.push(&body[..close]);
                rest = &body[close + 3..];
            }
            None => break,
        }
    }
    blocks
}

/// Every balanced `{…}` substring, outermost first, ignoring braces inside strings.
fn balanced_objects(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
            let mut end = None;
            for (j, &b) in bytes.iter().enumerate().skip(i) {
                if in_string {
                    match (escaped, b) {
                        (true, _) => escaped = false,
                        (false, b'\\') => escaped = true,
                        (false, b'"') => in_string = false,
                        _ => {}
                    }
                    continue;
                }
                match b {
                    b'"' => in_string = true,
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(j);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if let Some(end) = end {
                out.push(&text[i..=end]);
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(reply: &str) -> u8 {
        parse_reply(reply)
            .unwrap_or_else(|e| panic!("{reply:?}: {e}"))
            .score
    }

    // Seed 003's table, row by row.
    #[test]
    fn raw_json_array() {
        assert_eq!(score(r#"[{"score": 8, "reasoning": "ok"}]"#), 8);
    }

    #[test]
    fn raw_json_object() {
        let g = parse_reply(r#"{"score": 9, "reasoning": "fine"}"#).unwrap();
        assert_eq!((g.score, g.reasoning.as_str()), (9, "fine"));
    }

    #[test]
    fn fenced_json() {
        assert_eq!(
            score("```json\n{\"score\": 7, \"reasoning\": \"x\"}\n```"),
            7
        );
        assert_eq!(score("Sure!\n```\n[{\"score\": 6}]\n```\nDone."), 6);
    }

    #[test]
    fn bracket_matched_array_in_prose() {
        assert_eq!(
            score(r#"Here are results: [{"score": 5, "reasoning": "meh"}] Hope that helps!"#),
            5
        );
    }

    #[test]
    fn bracket_matched_object_in_prose() {
        assert_eq!(
            score(r#"Here is the result: {"score": 4, "reasoning": "weak"} Hope that helps!"#),
            4
        );
    }

    #[test]
    fn prose_with_two_brace_groups_finds_the_grade() {
        assert_eq!(
            score(r#"The criteria {clear answer} were checked. Result: {"score": 8}"#),
            8
        );
    }

    #[test]
    fn error_fallback_keeps_an_excerpt() {
        let err = parse_reply("I think it is pretty good overall.").unwrap_err();
        assert!(err.reason.contains("no JSON object with a score"), "{err}");
        assert_eq!(err.excerpt, "I think it is pretty good overall.");
        assert!(parse_reply("").unwrap_err().reason.contains("empty"));
        let err = parse_reply(r#"{"grade": 8}"#).unwrap_err();
        assert_eq!(err.reason, "the JSON has no `score`");
        let long = "x".repeat(500);
        assert!(parse_reply(&long).unwrap_err().excerpt.ends_with('…'));
    }

    #[test]
    fn out_of_range_string_and_float_scores() {
        assert_eq!(score(r#"{"score": 15}"#), 10);
        assert_eq!(score(r#"{"score": 0}"#), 1);
        assert_eq!(score(r#"{"score": -3}"#), 1);
        assert_eq!(score(r#"{"score": "8"}"#), 8);
        assert_eq!(score(r#"{"score": " 7.5 "}"#), 7);
        assert_eq!(score(r#"{"score": 8.5}"#), 8, "fractions round down");
        assert_eq!(score(r#"{"score": 6.99}"#), 6);
        assert_eq!(parse_reply(r#"{"score": 8.5}"#).unwrap().raw_score, 8.5);
        assert!(parse_reply(r#"{"score": "eight"}"#).is_err());
        assert!(parse_reply(r#"{"score": true}"#).is_err());
    }

    #[test]
    fn reasoning_may_be_missing_or_named_reason() {
        assert_eq!(parse_reply(r#"{"score": 9}"#).unwrap().reasoning, "");
        assert_eq!(
            parse_reply(r#"{"score": 9, "reason": "ok"}"#)
                .unwrap()
                .reasoning,
            "ok"
        );
    }

    #[test]
    fn several_grades_are_not_guessed() {
        let err = parse_reply(r#"[{"score": 3}, {"score": 9}]"#).unwrap_err();
        assert!(err.reason.contains("several different grades"), "{err}");
        assert!(parse_reply(r#"First {"score": 3} then {"score": 9}"#).is_err());
    }
}
