//! What travels over a link, and the page's clock: a leaf that every other
//! part of `net` may use and that uses nothing of the crate.
//!
//! A [`Frame`] is one message received, stamped with the moment it arrived
//! so that the session can tell how late it is however long the frame loop
//! takes to get to it. [`Payload`] is also what the connection hands a link
//! to send: text for JSON, bytes for the binary encodings.

/// What a frame carries.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// A JSON text message.
    Text(String),
    /// A binary message (a snapshot, say).
    Binary(Vec<u8>),
}

impl Payload {
    /// Its size on the wire, in bytes (without a link's own framing).
    pub fn len(&self) -> usize {
        match self {
            Payload::Text(text) => text.len(),
            Payload::Binary(bytes) => bytes.len(),
        }
    }

    /// Whether it carries nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One frame received.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// What it carried.
    pub payload: Payload,
    /// When it arrived (ms, `performance.now()`).
    pub at: f64,
}

/// The page's clock, in milliseconds (zero where the page has no
/// `performance`).
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}
