//! The ordered release list `aptitude bisect` searches: an agent CLI's published versions,
//! as the npm registry lists them (`npm view PKG versions --json`, npm 10), ordered by
//! semver with prereleases left out unless one is an endpoint the user named.
//!
//! The registry's own order is publication order, which is not release order once a
//! maintenance line is patched after a newer one shipped; semver order is what "between
//! `--good` and `--bad`" means to a user.

use semver::Version;

/// Why a release list could not be made.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReleaseError {
    /// The registry's answer was not a JSON string or array of strings.
    #[error("the registry's version list is not a JSON array of strings: {0}")]
    Listing(String),
    /// An endpoint is not a semver version (`2.1.300`).
    #[error("`{0}` is not a version (expected MAJOR.MINOR.PATCH, e.g. 2.1.300)")]
    NotAVersion(String),
    /// An endpoint is not among the published versions.
    #[error("version {0} is not published in the registry")]
    Unpublished(String),
    /// `--good` is not older than `--bad`.
    #[error("--good {good} must be older than --bad {bad}")]
    Order {
        /// The good endpoint.
        good: String,
        /// The bad endpoint.
        bad: String,
    },
}

/// Reads `npm view PKG versions --json`: a JSON array of version strings, or one string
/// when the package has a single version (npm prints a scalar then).
///
/// # Errors
/// [`ReleaseError::Listing`] when the text is neither.
pub fn parse_npm_versions(json: &str) -> Result<Vec<String>, ReleaseError> {
    let value: serde_json::Value =
        serde_json::from_str(json).map_err(|err| ReleaseError::Listing(err.to_string()))?;
    match value {
        serde_json::Value::String(one) => Ok(vec![one]),
        serde_json::Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                serde_json::Value::String(version) => Ok(version),
                other => Err(ReleaseError::Listing(format!("item {other}"))),
            })
            .collect(),
        other => Err(ReleaseError::Listing(format!("found {other}"))),
    }
}

/// The published releases from `good` to `bad`, both included, oldest first, in semver
/// order. Versions that are not semver are skipped (npm accepts none, but mirrors do);
/// prereleases are skipped unless one is `good` or `bad` itself.
///
/// # Errors
/// An endpoint that is not a version, not published, or `good` not older than `bad`.
pub fn releases_between(
    published: &[String],
    good: &str,
    bad: &str,
) -> Result<Vec<String>, ReleaseError> {
    let parse = |text: &str| {
        Version::parse(text.trim()).map_err(|_| ReleaseError::NotAVersion(text.to_owned()))
    };
    let (good_version, bad_version) = (parse(good)?, parse(bad)?);
    if good_version >= bad_version {
        return Err(ReleaseError::Order {
            good: good.to_owned(),
            bad: bad.to_owned(),
        });
    }
    let mut versions: Vec<Version> = published
        .iter()
        .filter_map(|text| Version::parse(text).ok())
        .filter(|v| v.pre.is_empty() || *v == good_version || *v == bad_version)
        .filter(|v| *v >= good_version && *v <= bad_version)
        .collect();
    versions.sort();
    versions.dedup();
    for (endpoint, text) in [(&good_version, good), (&bad_version, bad)] {
        if !versions.contains(endpoint) {
            return Err(ReleaseError::Unpublished(text.to_owned()));
        }
    }
    Ok(versions.iter().map(Version::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn npm_lists_an_array_or_a_single_string() {
        assert_eq!(
            parse_npm_versions(r#"["1.0.0","1.0.1"]"#).unwrap(),
            strings(&["1.0.0", "1.0.1"])
        );
        assert_eq!(
            parse_npm_versions(r#""0.1.0""#).unwrap(),
            strings(&["0.1.0"])
        );
        assert!(matches!(
            parse_npm_versions("{}"),
            Err(ReleaseError::Listing(_))
        ));
        assert!(matches!(
            parse_npm_versions("[1]"),
            Err(ReleaseError::Listing(_))
        ));
    }

    #[test]
    fn releases_are_in_semver_order_not_publication_order() {
        let published = strings(&["2.1.9", "2.1.10", "2.0.5", "2.1.2", "2.2.0"]);
        assert_eq!(
            releases_between(&published, "2.0.5", "2.1.10").unwrap(),
            strings(&["2.0.5", "2.1.2", "2.1.9", "2.1.10"])
        );
    }

    #[test]
    fn prereleases_are_left_out_unless_named() {
        let published = strings(&["1.0.0", "1.1.0-beta.1", "1.1.0", "1.2.0-rc.1"]);
        assert_eq!(
            releases_between(&published, "1.0.0", "1.2.0-rc.1").unwrap(),
            strings(&["1.0.0", "1.1.0", "1.2.0-rc.1"])
        );
    }

    #[test]
    fn endpoints_must_be_published_versions_in_order() {
        let published = strings(&["1.0.0", "1.1.0"]);
        assert_eq!(
            releases_between(&published, "1.1.0", "1.0.0"),
            Err(ReleaseError::Order {
                good: "1.1.0".into(),
                bad: "1.0.0".into()
            })
        );
        assert_eq!(
            releases_between(&published, "1.0.0", "1.3.0"),
            Err(ReleaseError::Unpublished("1.3.0".into()))
        );
        assert_eq!(
            releases_between(&published, "latest", "1.1.0"),
            Err(ReleaseError::NotAVersion("latest".into()))
        );
    }
}
