//! Compressed replies. The gateway asks every upstream for `accept-encoding: identity`, so
//! that it reads replies as text; an upstream may answer compressed anyway (a proxy, a CDN).
//! A `gzip` (`x-gzip`) or `deflate` reply is decompressed as it streams: the agent, the
//! meter, the witness and the cassette all get the plain bytes, and the reply goes on
//! without `content-encoding` (identity is always acceptable to a client). `identity` in a
//! list is no coding (`gzip, identity` is gzip). A reply in any other encoding (`br`,
//! `zstd`, two codings stacked) is **refused**: the gateway could neither meter it nor take
//! the real key out of it, so the agent gets a provider-shaped 502 instead of bytes the
//! gateway could not read.

use std::io::Write;

use hyper::HeaderMap;
use hyper::header::CONTENT_ENCODING;

/// How a reply's body is encoded.
pub(super) enum Encoding {
    /// Not encoded.
    Identity,
    /// Decompressed on the way.
    Decoded(Box<Decoder>),
    /// An encoding the gateway does not read (`br`, `zstd`).
    Unknown,
}

/// A streaming decompressor.
pub(super) enum Decoder {
    /// `gzip`, `x-gzip` (RFC 1952).
    Gzip(flate2::write::GzDecoder<Vec<u8>>),
    /// `deflate`: zlib (RFC 1950), as HTTP defines it.
    Deflate(flate2::write::ZlibDecoder<Vec<u8>>),
}

/// The encoding a reply's headers declare (every `content-encoding` header, each a
/// comma-separated list of codings in the order they were applied).
pub(super) fn of(headers: &HeaderMap) -> Encoding {
    let mut codings = Vec::new();
    for value in headers.get_all(CONTENT_ENCODING) {
        let Ok(text) = value.to_str() else {
            return Encoding::Unknown;
        };
        codings.extend(
            text.split(',')
                .map(|c| c.trim().to_ascii_lowercase())
                .filter(|c| !c.is_empty() && c != "identity"),
        );
    }
    match codings.as_slice() {
        [] => Encoding::Identity,
        [one] if one == "gzip" || one == "x-gzip" => Encoding::Decoded(Box::new(Decoder::Gzip(
            flate2::write::GzDecoder::new(Vec::new()),
        ))),
        [one] if one == "deflate" => Encoding::Decoded(Box::new(Decoder::Deflate(
            flate2::write::ZlibDecoder::new(Vec::new()),
        ))),
        _ => Encoding::Unknown,
    }
}

/// The `content-encoding` a reply declares, as one line for a message.
pub(super) fn declared(headers: &HeaderMap) -> String {
    let all: Vec<&str> = headers
        .get_all(CONTENT_ENCODING)
        .iter()
        .map(|v| v.to_str().unwrap_or("(not text)"))
        .collect();
    crate::shared::cut::chars(&all.join(", "), 100)
        .kept
        .to_owned()
}

impl Decoder {
    /// The plain bytes the next compressed piece gives (possibly none yet).
    ///
    /// # Errors
    /// When the piece is not valid compressed data.
    pub(super) fn push(&mut self, bytes: &[u8]) -> std::io::Result<Vec<u8>> {
        match self {
            Decoder::Gzip(d) => {
                d.write_all(bytes)?;
                Ok(std::mem::take(d.get_mut()))
            }
            Decoder::Deflate(d) => {
                d.write_all(bytes)?;
                Ok(std::mem::take(d.get_mut()))
            }
        }
    }

    /// The plain bytes still held once the compressed stream ended.
    ///
    /// # Errors
    /// When the stream ended before its end.
    pub(super) fn finish(&mut self) -> std::io::Result<Vec<u8>> {
        match self {
            Decoder::Gzip(d) => {
                d.try_finish()?;
                Ok(std::mem::take(d.get_mut()))
            }
            Decoder::Deflate(d) => {
                d.try_finish()?;
                Ok(std::mem::take(d.get_mut()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(text: &str) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(text.as_bytes()).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn a_gzip_reply_decompresses_piece_by_piece() {
        let text = "event: message_start\ndata: {}\n\n".repeat(50);
        let packed = gzip(&text);
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_ENCODING, "gzip".parse().unwrap());
        let Encoding::Decoded(mut d) = of(&headers) else {
            panic!("gzip is decoded")
        };
        let mut plain = Vec::new();
        for piece in packed.chunks(7) {
            plain.extend(d.push(piece).unwrap());
        }
        plain.extend(d.finish().unwrap());
        assert_eq!(String::from_utf8(plain).unwrap(), text);
        for unread in ["br", "zstd", "gzip, br", "gzip, gzip", "compress"] {
            headers.insert(CONTENT_ENCODING, unread.parse().unwrap());
            assert!(matches!(of(&headers), Encoding::Unknown), "{unread}");
        }
        for plain in ["identity", "", " identity , identity"] {
            headers.insert(CONTENT_ENCODING, plain.parse().unwrap());
            assert!(matches!(of(&headers), Encoding::Identity), "{plain:?}");
        }
        // `identity` in a list is no coding: `gzip, identity` is gzip.
        for gzipped in ["gzip, identity", "identity,GZIP"] {
            headers.insert(CONTENT_ENCODING, gzipped.parse().unwrap());
            assert!(matches!(of(&headers), Encoding::Decoded(_)), "{gzipped}");
        }
        headers.insert(CONTENT_ENCODING, "gzip".parse().unwrap());
        headers.append(CONTENT_ENCODING, "br".parse().unwrap());
        assert!(matches!(of(&headers), Encoding::Unknown));
        assert_eq!(declared(&headers), "gzip, br");
        // A stream cut inside its compressed data says so.
        let Encoding::Decoded(mut d) = of(&{
            let mut h = HeaderMap::new();
            h.insert(CONTENT_ENCODING, "x-gzip".parse().unwrap());
            h
        }) else {
            panic!()
        };
        let _ = d.push(&packed[..packed.len() / 2]).unwrap();
        assert!(d.finish().is_err());
    }
}
