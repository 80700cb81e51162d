//! WebSocket frames from a client (RFC 6455, section 5), read without I/O:
//! the transport puts bytes in, [`FrameReader::next`] takes whole frames
//! out, unmasked in place, with no copy for an unfragmented message (which
//! is every input). It enforces what a server must: frames are masked, no
//! reserved bit is set, control frames are whole and short, fragments
//! continue only a started message, a close frame has an allowed status and
//! a UTF-8 reason, and nothing is over the size limit. Text is not checked
//! for UTF-8 here: the session's decoder refuses it (`bad_message`). It
//! never panics, whatever arrives, and agrees with tungstenite's reader
//! (`frames/differential.rs`, which lists the differences on purpose).
//!
//! And the other way: [`header`] writes the (unmasked) header of a server
//! frame.

use std::ops::Range;

/// Bytes asked of the socket per read: inputs are about 20 to 100 bytes.
const READ_BYTES: usize = 1024;

/// What a client's frame was.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// A whole message, text or binary; its bytes are [`FrameReader::bytes`].
    Data {
        /// Sent as text.
        text: bool,
        /// Where its bytes are.
        at: Place,
    },
    /// A ping: answer with a pong carrying the same bytes.
    Ping(Place),
    /// A pong, or a fragment of a message not yet whole.
    Nothing,
    /// The client closes, with this status code if it gave one.
    Close(Option<u16>),
}

/// Where a payload lies: in the read buffer, or in the buffer a fragmented
/// message was put together in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// Bytes of the read buffer.
    Read(Range<usize>),
    /// The whole reassembled message.
    Message,
}

/// Why a connection's frames cannot be read any further.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// A rule of the protocol was broken (close status 1002).
    Protocol,
    /// A frame or message over the limit (close status 1009).
    TooLarge,
}

impl Broken {
    /// The close status that says so.
    pub fn status(self) -> u16 {
        match self {
            Broken::Protocol => 1002,
            Broken::TooLarge => 1009,
        }
    }
}

/// Reads one client's frames from the bytes it sent.
#[derive(Debug)]
pub struct FrameReader {
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    /// A fragmented message being put together: whether it is text.
    fragmented: Option<bool>,
    message: Vec<u8>,
    limit: usize,
}

impl FrameReader {
    /// A reader of frames and messages of at most `limit` bytes, starting
    /// with `read` (bytes that came with the upgrade request).
    pub fn new(limit: usize, read: &[u8]) -> FrameReader {
        let mut buffer = vec![0; READ_BYTES.max(read.len())];
        buffer[..read.len()].copy_from_slice(read);
        FrameReader {
            buffer,
            start: 0,
            end: read.len(),
            fragmented: None,
            message: Vec::new(),
            limit,
        }
    }

    /// Room for the next read from the socket (at least some bytes).
    pub fn space(&mut self) -> &mut [u8] {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.buffer.len() - self.end < READ_BYTES / 4 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.buffer.len() - self.end < READ_BYTES / 4 {
                // A frame larger than the buffer is on its way (the limit
                // was checked against its header).
                self.buffer.resize(self.buffer.len() * 2, 0);
            }
        }
        &mut self.buffer[self.end..]
    }

    /// `n` bytes were read into [`FrameReader::space`].
    pub fn filled(&mut self, n: usize) {
        self.end = (self.end + n).min(self.buffer.len());
    }

    /// The bytes of a found payload.
    pub fn bytes(&self, at: &Place) -> &[u8] {
        match at {
            Place::Read(range) => self.buffer.get(range.clone()).unwrap_or_default(),
            Place::Message => &self.message,
        }
    }

    /// The next frame, if a whole one has arrived.
    ///
    /// # Errors
    /// The client broke the protocol or a limit: the connection must end.
    pub fn next(&mut self) -> Result<Option<Found>, Broken> {
        let available = &self.buffer[self.start..self.end];
        let [first, second, ..] = *available else {
            return Ok(None);
        };
        let (fin, opcode) = (first & 0x80 != 0, first & 0x0f);
        if first & 0x70 != 0 || second & 0x80 == 0 {
            // Reserved bits (no extension was agreed), or an unmasked frame.
            return Err(Broken::Protocol);
        }
        let (length, head) = match second & 0x7f {
            126 => match available.get(2..4) {
                Some(b) => (u64::from(u16::from_be_bytes([b[0], b[1]])), 4),
                None => return Ok(None),
            },
            127 => match available
                .get(2..10)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
            {
                Some(b) => (u64::from_be_bytes(b), 10),
                None => return Ok(None),
            },
            n => (u64::from(n), 2),
        };
        let control = opcode & 0x08 != 0;
        if control && (!fin || length > 125) {
            return Err(Broken::Protocol);
        }
        let length = usize::try_from(length)
            .ok()
            .filter(|l| *l <= self.limit)
            .ok_or(Broken::TooLarge)?;
        let total = head + 4 + length;
        if available.len() < total {
            return Ok(None);
        }
        let mask = [
            available[head],
            available[head + 1],
            available[head + 2],
            available[head + 3],
        ];
        let payload = self.start + head + 4..self.start + total;
        for (i, byte) in self.buffer[payload.clone()].iter_mut().enumerate() {
            *byte ^= mask[i % 4];
        }
        self.start += total;
        Ok(Some(self.found(fin, opcode, payload)?))
    }

    /// What a whole, unmasked frame means.
    fn found(&mut self, fin: bool, opcode: u8, payload: Range<usize>) -> Result<Found, Broken> {
        match (opcode, self.fragmented) {
            (0x1 | 0x2, None) => {
                let text = opcode == 0x1;
                if fin {
                    return Ok(Found::Data {
                        text,
                        at: Place::Read(payload),
                    });
                }
                self.fragmented = Some(text);
                self.message.clear();
                self.message.extend_from_slice(&self.buffer[payload]);
                Ok(Found::Nothing)
            }
            (0x0, Some(text)) => {
                if self.message.len() + payload.len() > self.limit {
                    return Err(Broken::TooLarge);
                }
                self.message.extend_from_slice(&self.buffer[payload]);
                if !fin {
                    return Ok(Found::Nothing);
                }
                self.fragmented = None;
                Ok(Found::Data {
                    text,
                    at: Place::Message,
                })
            }
            (0x8, _) => close_status(&self.buffer[payload]).map(Found::Close),
            (0x9, _) => Ok(Found::Ping(Place::Read(payload))),
            (0xA, _) => Ok(Found::Nothing),
            // A continuation with nothing to continue, a new message inside
            // a fragmented one, or an opcode that does not exist.
            _ => Err(Broken::Protocol),
        }
    }
}

/// The status of a client's close frame: none in an empty one; a body of
/// one byte, a status no endpoint may send (RFC 6455, 7.4) or a reason that
/// is not UTF-8 (7.1.6) breaks the protocol.
fn close_status(body: &[u8]) -> Result<Option<u16>, Broken> {
    match *body {
        [] => Ok(None),
        [high, low, ref reason @ ..] => {
            let status = u16::from_be_bytes([high, low]);
            match status {
                _ if std::str::from_utf8(reason).is_err() => Err(Broken::Protocol),
                1000..=1003 | 1007..=1014 | 3000..=4999 => Ok(Some(status)),
                _ => Err(Broken::Protocol),
            }
        }
        [_] => Err(Broken::Protocol),
    }
}

/// Frame kinds a server sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    /// A text message.
    Text = 0x1,
    /// A binary message.
    Binary = 0x2,
    /// A close frame.
    Close = 0x8,
    /// An answer to a ping.
    Pong = 0xA,
}

/// Writes the header of a whole, unmasked server frame of `length` bytes;
/// how many of the 10 bytes it used.
pub fn header(opcode: Opcode, length: usize, out: &mut [u8; 10]) -> usize {
    out[0] = 0x80 | opcode as u8;
    if length < 126 {
        out[1] = length as u8;
        2
    } else if let Ok(short) = u16::try_from(length) {
        out[1] = 126;
        out[2..4].copy_from_slice(&short.to_be_bytes());
        4
    } else {
        out[1] = 127;
        out[2..10].copy_from_slice(&(length as u64).to_be_bytes());
        10
    }
}

#[cfg(test)]
mod differential;
#[cfg(test)]
mod tests;
