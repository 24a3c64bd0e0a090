//! An incremental reader of `text/event-stream` bodies (the WHATWG server-sent events
//! format, as every model provider streams): bytes in as they come, whole events out.
//!
//! Only what metering needs is kept: an event's `event:` name and its `data:` lines
//! joined. An event larger than [`MAX_EVENT_BYTES`] is skipped (counted in
//! [`SseReader::skipped`]) rather than held in memory.

/// The largest event kept, in bytes; a larger one is skipped.
pub const MAX_EVENT_BYTES: usize = 8 * 1024 * 1024;

/// One server-sent event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// The `event:` field (empty when the stream names none).
    pub name: String,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Reads events from a byte stream fed in arbitrary pieces.
#[derive(Debug, Default)]
pub struct SseReader {
    /// The bytes of the line being read.
    line: Vec<u8>,
    /// The event being read.
    event: Event,
    /// Bytes of the current event so far.
    size: usize,
    /// Whether the current event is too large and is being skipped.
    skipping: bool,
    /// How many events were skipped for their size.
    pub skipped: u32,
}

impl SseReader {
    /// Feeds `bytes`, calling `on_event` with each event they complete.
    pub fn push(&mut self, bytes: &[u8], mut on_event: impl FnMut(Event)) {
        for &b in bytes {
            if b != b'\n' {
                if self.line.len() < MAX_EVENT_BYTES {
                    self.line.push(b);
                } else {
                    self.skipping = true;
                }
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.is_empty() {
                self.dispatch(&mut on_event);
            } else {
                self.field(&line);
            }
        }
    }

    /// Ends the stream: an event not followed by a blank line is still delivered.
    pub fn finish(&mut self, mut on_event: impl FnMut(Event)) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.field(&line);
        }
        self.dispatch(&mut on_event);
    }

    fn field(&mut self, line: &[u8]) {
        self.size += line.len() + 1;
        if self.size > MAX_EVENT_BYTES {
            self.skipping = true;
        }
        if self.skipping || line.first() == Some(&b':') {
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (name, value) = text.split_once(':').unwrap_or((&text, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match name {
            "event" => value.clone_into(&mut self.event.name),
            "data" => {
                if !self.event.data.is_empty() {
                    self.event.data.push('\n');
                }
                self.event.data.push_str(value);
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(Event)) {
        let event = std::mem::take(&mut self.event);
        let skipped = std::mem::replace(&mut self.skipping, false);
        self.size = 0;
        if skipped {
            self.skipped += 1;
        } else if !event.data.is_empty() || !event.name.is_empty() {
            on_event(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(pieces: &[&[u8]]) -> Vec<Event> {
        let mut reader = SseReader::default();
        let mut out = Vec::new();
        for piece in pieces {
            reader.push(piece, |e| out.push(e));
        }
        reader.finish(|e| out.push(e));
        out
    }

    #[test]
    fn events_are_read_across_any_split() {
        let stream = b"event: message_start\ndata: {\"a\":1}\n\n: keep-alive\n\ndata: x\r\ndata: y\r\n\r\ndata: [DONE]";
        let whole = events(&[stream]);
        assert_eq!(
            whole,
            vec![
                Event {
                    name: "message_start".into(),
                    data: "{\"a\":1}".into()
                },
                Event {
                    name: String::new(),
                    data: "x\ny".into()
                },
                Event {
                    name: String::new(),
                    data: "[DONE]".into()
                },
            ]
        );
        for split in 1..stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(events(&[a, b]), whole, "split at {split}");
        }
    }
}
