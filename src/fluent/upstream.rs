//! Upstream aptitude's documented examples (placeholder).
