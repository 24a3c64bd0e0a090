//! Helpers below every stage: a panic caught as a value, safe file reads, cuts that never show part of a secret,
//! text formatting, text from agents made inert for each output, secret redaction and "did
//! you mean" suggestions. Nothing here names a stage.

pub mod caught;
pub mod cut;
pub mod files;
pub mod inert;
pub mod redact;
pub mod suggest;
pub mod text;

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
    random.iter().map(|b| format!("{b:02x}")).collect()
}
