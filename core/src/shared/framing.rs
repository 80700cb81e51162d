//! Messages on a reliable byte stream (WebTransport's bidirectional stream),
//! where nothing marks where one ends: each message is a `u32` little-endian
//! length (of what follows), a `u8` kind (0: JSON text, 1: binary), then
//! the payload. Both sides use this one codec.
//!
//! A [`StreamReader`] takes the bytes as they arrive, in chunks of any size,
//! and hands out whole messages; a message announcing more than its limit is
//! an error from its header on, before anything is buffered, and the stream
//! is then unusable (the connection should end).

use crate::shared::protocol::{ErrorCode, ProtocolError};

/// Bytes before a payload: the length and the kind.
pub const HEADER_BYTES: usize = 5;

const TEXT: u8 = 0;
const BINARY: u8 = 1;

/// One message of a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamMessage {
    /// A JSON text message.
    Text(String),
    /// A binary message (a snapshot too large for a datagram).
    Binary(Vec<u8>),
}

/// Appends one message to `out`.
pub fn write_message(text: bool, payload: &[u8], out: &mut Vec<u8>) {
    let length = u32::try_from(payload.len() + 1).unwrap_or(u32::MAX);
    out.extend_from_slice(&length.to_le_bytes());
    out.push(if text { TEXT } else { BINARY });
    out.extend_from_slice(payload);
}

/// Splits a byte stream into messages.
#[derive(Clone, Debug)]
pub struct StreamReader {
    buffer: Vec<u8>,
    limit: usize,
    failed: bool,
}

impl StreamReader {
    /// A reader refusing messages of more than `limit` payload bytes.
    pub fn new(limit: usize) -> StreamReader {
        StreamReader {
            buffer: Vec::new(),
            limit,
            failed: false,
        }
    }

    /// Takes the next chunk of the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        if !self.failed {
            self.buffer.extend_from_slice(bytes);
        }
    }

    /// The next whole message, if one has arrived.
    ///
    /// # Errors
    /// A message over the limit, of an unknown kind, or text that is not
    /// UTF-8; every later call fails too.
    pub fn next_message(&mut self) -> Result<Option<StreamMessage>, ProtocolError> {
        if self.failed {
            return Err(broken("the stream failed before"));
        }
        let Some(head) = self.buffer.get(..HEADER_BYTES) else {
            return Ok(None);
        };
        let length = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let kind = head[4];
        if length == 0 || length - 1 > self.limit {
            self.failed = true;
            return Err(ProtocolError::new(
                ErrorCode::TooLarge,
                format!(
                    "a stream message of {length} bytes (at most {})",
                    self.limit
                ),
            ));
        }
        if kind != TEXT && kind != BINARY {
            self.failed = true;
            return Err(broken("a stream message of an unknown kind"));
        }
        let end = HEADER_BYTES - 1 + length;
        if self.buffer.len() < end {
            return Ok(None);
        }
        let payload = self.buffer[HEADER_BYTES..end].to_vec();
        self.buffer.drain(..end);
        if kind == BINARY {
            return Ok(Some(StreamMessage::Binary(payload)));
        }
        if let Ok(text) = String::from_utf8(payload) {
            Ok(Some(StreamMessage::Text(text)))
        } else {
            self.failed = true;
            Err(broken("a text message that is not UTF-8"))
        }
    }
}

fn broken(message: &str) -> ProtocolError {
    ProtocolError::new(ErrorCode::BadMessage, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_come_whole_however_the_bytes_are_cut() {
        let mut bytes = Vec::new();
        write_message(true, br#"{"type":"ping","id":1}"#, &mut bytes);
        write_message(false, &[1, 2, 3], &mut bytes);
        write_message(true, b"", &mut bytes);
        for chunk in 1..=bytes.len() {
            let mut reader = StreamReader::new(100);
            let mut got = Vec::new();
            for piece in bytes.chunks(chunk) {
                reader.push(piece);
                while let Some(message) = reader.next_message().unwrap() {
                    got.push(message);
                }
            }
            assert_eq!(
                got,
                [
                    StreamMessage::Text(r#"{"type":"ping","id":1}"#.into()),
                    StreamMessage::Binary(vec![1, 2, 3]),
                    StreamMessage::Text(String::new()),
                ],
                "chunks of {chunk}"
            );
        }
    }

    #[test]
    fn oversized_unknown_and_broken_messages_fail_the_stream() {
        let mut reader = StreamReader::new(10);
        reader.push(&[200, 0, 0, 0, 0]);
        assert_eq!(reader.next_message().unwrap_err().code, ErrorCode::TooLarge);
        assert!(reader.next_message().is_err(), "and stays failed");

        let mut reader = StreamReader::new(10);
        reader.push(&[2, 0, 0, 0, 7, 0]);
        assert!(reader.next_message().is_err());

        let mut reader = StreamReader::new(10);
        reader.push(&[2, 0, 0, 0, 0, 0xff]);
        assert!(reader.next_message().is_err(), "not UTF-8");

        let mut reader = StreamReader::new(10);
        reader.push(&[0, 0, 0, 0, 0]);
        assert!(reader.next_message().is_err(), "no kind byte");
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any bytes in any chunks give messages or an error, never a panic.
        #[test]
        fn arbitrary_streams_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), cut in 1usize..40) {
            let mut reader = StreamReader::new(64);
            for piece in bytes.chunks(cut) {
                reader.push(piece);
                while let Ok(Some(_)) = reader.next_message() {}
            }
        }
    }
}
