//! Helpers below every stage: a panic caught as a value, safe file reads, cuts that never show part of a secret,
//! aptitude's one HTTP client, text formatting, text from agents made inert for each output, secret redaction and "did
//! you mean" suggestions, and where aptitude is published ([`REPOSITORY`], [`ACTION`]).
//! Nothing here names a stage.

pub mod caught;
pub mod cut;
pub mod files;
pub mod http;
pub mod inert;
pub mod redact;
pub mod suggest;
pub mod text;

/// The GitHub repository aptitude is published from (`owner/name`): its releases, its
/// checksums and its GitHub Action (`action.yml` at the root). Named here alone;
/// `Cargo.toml`'s `repository`, the action's installer (`scripts/action/install-aptitude.sh`)
/// and every `uses:` in README.md and docs/ are checked against it (`tests/it/docs.rs`).
pub const REPOSITORY: &str = "aptitude-dev/aptitude";

/// A workflow step's `uses:` for aptitude's GitHub Action, at its major version tag
/// ([`REPOSITORY`]`@v1`): what `aptitude init`'s workflow and the docs write.
pub const ACTION: &str = "aptitude-dev/aptitude@v1";

/// `bytes` as lowercase hex (`2 × len` characters): digests, keys, nonces.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

/// `bytes` random bytes as lowercase hex (`2 × bytes` characters), from `/dev/urandom`;
/// where that can not be read, from the standard library's randomly seeded hasher and the
/// clock (unguessable to another process, not cryptographic).
pub fn random_hex(bytes: usize) -> String {
    use std::io::Read;
    let mut random = vec![0u8; bytes];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut random));
    if read.is_err() {
        use std::hash::{BuildHasher, Hasher};
        for (i, chunk) in random.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_usize(i);
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            let n = h.finish().to_le_bytes();
            chunk.copy_from_slice(&n[..chunk.len()]);
        }
    }
    hex(&random)
}

#[cfg(test)]
mod project_tests {
    /// The action is the repository's, at a major version tag.
    #[test]
    fn the_action_is_the_repositorys() {
        assert_eq!(super::ACTION, format!("{}@v1", super::REPOSITORY));
    }

    #[test]
    fn hex_is_two_lowercase_digits_per_byte() {
        assert_eq!(super::hex(&[0x00, 0xab, 0x10, 0xff]), "00ab10ff");
        assert_eq!(super::hex(&[]), "");
        assert_eq!(super::random_hex(16).len(), 32);
    }
}
