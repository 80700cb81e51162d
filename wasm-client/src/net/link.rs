//! What the connection asks of a link, and the mailbox both links share.
//!
//! A link is one way to the server (a WebSocket, or a WebTransport session).
//! The connection in `net.rs` drives it through the [`Link`] trait only: it
//! asks whether the link is up, why it ended, takes what arrived and hands
//! it messages to send. Links never decide what happens next; that is the
//! connection's plan.
//!
//! Everything the browser hands over arrives in callbacks. They only write
//! into a [`Mailbox`]: frames (stamped with their arrival time), whether the
//! link is up, why it ended, and counts of what was lost. The frame loop
//! empties it once per animation frame; nothing is handled inside a
//! callback. The mailbox keeps at most [`INBOX_CAP`] frames, so that a tab
//! whose frame loop the browser has paused does not pile up frames without
//! end.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;

use js_sys::Reflect;
use wasm_bindgen::JsValue;

use super::frame::{Frame, Payload};

/// The most frames a mailbox keeps between two animation frames.
///
/// The browser keeps delivering frames while a hidden tab pauses
/// `requestAnimationFrame`, and nothing drains them then. 512 frames hold
/// about 20 s of a room's traffic (snapshots at 20 Hz and the text messages
/// between them), far more than a visible tab leaves between two animation
/// frames; beyond it the oldest snapshots are dropped and counted in
/// [`Counters::inbox_dropped`] (see [`Mailbox::push`]).
pub const INBOX_CAP: usize = 512;

/// Why a link whose mailbox filled with text frames ended.
pub const INBOX_OVERFLOW: &str = "too many messages waited (the page was paused too long)";

/// How a message may travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reliability {
    /// It must arrive, in order (`hello`).
    Reliable,
    /// It may be lost: a later one supersedes it (inputs, pings).
    Droppable,
}

/// Why a link did not take a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The link is not up (yet, or any more).
    NotReady,
    /// The browser refused the write, saying this.
    Refused(String),
}

impl fmt::Display for SendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SendError::NotReady => write!(f, "the link is not up"),
            SendError::Refused(why) => write!(f, "the browser refused the write: {why}"),
        }
    }
}

impl std::error::Error for SendError {}

/// Counts of what a link lost on the way, for the debug state and the HUD.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Frames dropped, oldest first, because the mailbox held
    /// [`INBOX_CAP`] frames already.
    pub inbox_dropped: u64,
    /// Datagrams that looked like JSON text but were not UTF-8.
    pub undecodable: u64,
    /// Sends the link refused, or whose write the browser rejected later.
    pub failed_sends: u64,
}

impl Counters {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: Counters) {
        self.inbox_dropped += other.inbox_dropped;
        self.undecodable += other.undecodable;
        self.failed_sends += other.failed_sends;
    }

    /// Whether anything was lost at all.
    pub fn any(&self) -> bool {
        *self != Counters::default()
    }
}

/// One way to the server, as the connection drives it.
pub trait Link {
    /// The mailbox the link's callbacks fill.
    fn mailbox(&self) -> &RefCell<Mailbox>;

    /// Whether the link is up and may send.
    fn ready(&self) -> bool {
        self.mailbox().borrow().ready()
    }

    /// Why the link ended, once it has (taken once).
    fn take_closed(&mut self) -> Option<String> {
        self.mailbox().borrow_mut().take_closed()
    }

    /// Moves what arrived into `inbox`, oldest first, and adds what was
    /// lost since the last call to `counters`.
    fn drain(&mut self, inbox: &mut Vec<Frame>, counters: &mut Counters) {
        self.mailbox().borrow_mut().drain(inbox, counters);
    }

    /// Sends one message. `Ok` says the browser took the write; a write
    /// that fails later is counted in [`Counters::failed_sends`] at a later
    /// [`Link::drain`].
    ///
    /// # Errors
    /// The link is not up, or the browser refused the write at once.
    fn send(&self, payload: &Payload, reliability: Reliability) -> Result<(), SendError>;

    /// Ends the link.
    fn close(&mut self);
}

/// What a link's callbacks record for the frame loop.
#[derive(Debug, Default)]
pub struct Mailbox {
    frames: VecDeque<Frame>,
    counters: Counters,
    ready: bool,
    closed: Option<String>,
}

impl Mailbox {
    /// Keeps a frame that arrived. A mailbox that holds [`INBOX_CAP`]
    /// frames already drops its oldest binary frame (a compact snapshot,
    /// which later ones supersede). Text frames are never dropped to make
    /// room: `welcome`, `roster` and `error` are not sent again, and a
    /// session that lost one would wait forever; a mailbox full of them
    /// ends the link instead (the connection then reconnects).
    pub fn push(&mut self, frame: Frame) {
        if self.frames.len() >= INBOX_CAP {
            self.counters.inbox_dropped += 1;
            let binary = self
                .frames
                .iter()
                .position(|f| matches!(f.payload, Payload::Binary(_)));
            let Some(oldest) = binary else {
                self.end(INBOX_OVERFLOW.to_string());
                return;
            };
            self.frames.remove(oldest);
        }
        self.frames.push_back(frame);
    }

    /// Counts a datagram that could not be read.
    pub fn count_undecodable(&mut self) {
        self.counters.undecodable += 1;
    }

    /// Counts a write the browser rejected after taking it.
    pub fn count_failed_send(&mut self) {
        self.counters.failed_sends += 1;
    }

    /// Notes that the link is up.
    pub fn set_ready(&mut self) {
        self.ready = true;
    }

    /// Whether the link came up.
    pub fn ready(&self) -> bool {
        self.ready
    }

    /// Notes why the link ended, unless a reason is noted already.
    pub fn end(&mut self, reason: String) {
        self.closed.get_or_insert(reason);
    }

    /// Notes why the link ended, in place of any earlier reason (a close
    /// event says more than the error event before it).
    pub fn end_instead(&mut self, reason: String) {
        self.closed = Some(reason);
    }

    /// Why the link ended, once it has (taken once).
    pub fn take_closed(&mut self) -> Option<String> {
        self.closed.take()
    }

    /// Moves the frames into `inbox` and the counts into `counters`.
    pub fn drain(&mut self, inbox: &mut Vec<Frame>, counters: &mut Counters) {
        inbox.extend(self.frames.drain(..));
        counters.add(std::mem::take(&mut self.counters));
    }
}

/// What a browser error says: its text, its `message`, or the browser's
/// JSON of it (never Rust's debug form, which would bring float
/// formatting into the page).
pub fn describe(error: &JsValue) -> String {
    error
        .as_string()
        .or_else(|| {
            Reflect::get(error, &JsValue::from_str("message"))
                .ok()
                .and_then(|m| m.as_string())
        })
        .or_else(|| {
            js_sys::JSON::stringify(error)
                .ok()
                .and_then(|text| text.as_string())
        })
        .unwrap_or_else(|| "an unknown error".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(n: usize) -> Frame {
        Frame {
            payload: Payload::Text(n.to_string()),
            at: n as f64,
        }
    }

    fn binary(n: usize) -> Frame {
        Frame {
            payload: Payload::Binary(n.to_le_bytes().to_vec()),
            at: n as f64,
        }
    }

    #[test]
    fn a_full_mailbox_drops_the_oldest_binary_frames_and_keeps_text() {
        let mut mailbox = Mailbox::default();
        mailbox.push(frame(0));
        for n in 1..INBOX_CAP + 3 {
            mailbox.push(binary(n));
        }
        let mut inbox = Vec::new();
        let mut counters = Counters::default();
        mailbox.drain(&mut inbox, &mut counters);
        assert_eq!(inbox.len(), INBOX_CAP);
        assert_eq!(inbox[0], frame(0), "the text frame (a welcome) stays");
        assert_eq!(inbox[1], binary(4), "binary frames 1 to 3 made room");
        assert_eq!(inbox.last(), Some(&binary(INBOX_CAP + 2)));
        assert_eq!(counters.inbox_dropped, 3);
        assert_eq!(mailbox.take_closed(), None);
    }

    #[test]
    fn a_mailbox_full_of_text_ends_the_link_rather_than_lose_one() {
        let mut mailbox = Mailbox::default();
        for n in 0..=INBOX_CAP {
            mailbox.push(frame(n));
        }
        assert_eq!(mailbox.take_closed().as_deref(), Some(INBOX_OVERFLOW));
        let mut inbox = Vec::new();
        let mut counters = Counters::default();
        mailbox.drain(&mut inbox, &mut counters);
        assert_eq!(inbox.first(), Some(&frame(0)), "nothing before it lost");
        assert_eq!(inbox.len(), INBOX_CAP);
        assert_eq!(counters.inbox_dropped, 1);
    }

    #[test]
    fn draining_moves_the_counts_once() {
        let mut mailbox = Mailbox::default();
        mailbox.push(frame(1));
        mailbox.count_undecodable();
        mailbox.count_failed_send();
        let mut inbox = Vec::new();
        let mut counters = Counters {
            failed_sends: 2,
            ..Counters::default()
        };
        mailbox.drain(&mut inbox, &mut counters);
        mailbox.drain(&mut inbox, &mut counters);
        assert_eq!(inbox, vec![frame(1)]);
        assert_eq!(
            counters,
            Counters {
                inbox_dropped: 0,
                undecodable: 1,
                failed_sends: 3,
            }
        );
        assert!(counters.any());
        assert!(!Counters::default().any());
    }

    #[test]
    fn the_first_reason_to_end_is_kept_unless_a_close_event_replaces_it() {
        let mut mailbox = Mailbox::default();
        mailbox.end("connection failed".to_string());
        mailbox.end("later".to_string());
        assert_eq!(mailbox.take_closed().as_deref(), Some("connection failed"));
        assert_eq!(mailbox.take_closed(), None);
        mailbox.end("connection failed".to_string());
        mailbox.end_instead("closed (1006)".to_string());
        assert_eq!(mailbox.take_closed().as_deref(), Some("closed (1006)"));
    }
}
