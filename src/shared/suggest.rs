//! "Did you mean" suggestions for names a user mistyped: test keys, assertion kinds,
//! agent names. Below every stage, so each can suggest without reaching into another.

/// The closest candidate to `word`, for "did you mean" hints: equal after ignoring case,
/// `_` and `-`, or within a small edit distance.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let word_norm = norm(word);
    let limit = (word_norm.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let distance = strsim::damerau_levenshtein(&word_norm, &norm(candidate));
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}
