//! The WebSocket to the server, with reconnection.
//!
//! Frames received are queued, with the moment each arrived, in an inbox the
//! frame loop drains into the session; nothing is handled inside the socket
//! callbacks. When the socket closes, [`Connection::poll`] opens a new one
//! after the wait core's [`Backoff`] policy gives.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use skirmish_core::Backoff;
use std::time::Duration;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::JsCast;
use web_sys::{BinaryType, CloseEvent, Event, MessageEvent, WebSocket};

/// What a frame carried.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// A JSON text frame.
    Text(String),
    /// A binary frame (a compact snapshot).
    Binary(Vec<u8>),
}

/// One frame received.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// What it carried.
    pub payload: Payload,
    /// When it arrived (ms, `performance.now()`).
    pub at: f64,
}

/// The page's clock, in milliseconds.
fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// What the socket callbacks record.
#[derive(Debug, Default)]
struct Shared {
    inbox: VecDeque<Frame>,
    opened: bool,
    closed: Option<String>,
}

/// The connection's state, for the status line.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Opening a socket.
    Connecting,
    /// Open; `fresh` once, right after opening, to send `hello`.
    Open {
        /// Whether the socket opened since the last poll.
        fresh: bool,
    },
    /// Closed; reconnecting at the given time.
    Waiting {
        /// Why the last socket closed.
        reason: String,
        /// When the next attempt starts (ms, `performance.now()`).
        retry_at: f64,
    },
}

/// A self-healing WebSocket.
pub struct Connection {
    url: String,
    socket: Option<WebSocket>,
    shared: Rc<RefCell<Shared>>,
    status: Status,
    backoff: Backoff,
    /// When the open socket opened (ms), if it did.
    opened_at: Option<f64>,
    /// Kept alive while the socket may call them.
    callbacks: Vec<Closure<dyn FnMut(JsValueEvent)>>,
}

/// The argument of the socket callbacks.
type JsValueEvent = wasm_bindgen::JsValue;

impl Connection {
    /// Starts connecting to `url`.
    pub fn new(url: String) -> Connection {
        let mut connection = Connection {
            url,
            socket: None,
            shared: Rc::default(),
            status: Status::Connecting,
            backoff: Backoff::default(),
            opened_at: None,
            callbacks: Vec::new(),
        };
        connection.open();
        connection
    }

    fn open(&mut self) {
        self.shared = Rc::default();
        self.status = Status::Connecting;
        let socket = match WebSocket::new(&self.url) {
            Ok(socket) => socket,
            Err(e) => {
                self.shared.borrow_mut().closed = Some(format!("cannot open socket: {e:?}"));
                return;
            }
        };
        let shared = self.shared.clone();
        let on_message = Closure::<dyn FnMut(JsValueEvent)>::new(move |event: JsValueEvent| {
            let Some(data) = event.dyn_ref::<MessageEvent>().map(MessageEvent::data) else {
                return;
            };
            let payload = match data.as_string() {
                Some(text) => Payload::Text(text),
                None => Payload::Binary(js_sys::Uint8Array::new(&data).to_vec()),
            };
            let at = now_ms();
            shared.borrow_mut().inbox.push_back(Frame { payload, at });
        });
        let shared = self.shared.clone();
        let on_open = Closure::<dyn FnMut(JsValueEvent)>::new(move |_event: JsValueEvent| {
            shared.borrow_mut().opened = true;
        });
        let shared = self.shared.clone();
        let on_close = Closure::<dyn FnMut(JsValueEvent)>::new(move |event: JsValueEvent| {
            let reason = event.dyn_ref::<CloseEvent>().map_or_else(
                || "closed".to_string(),
                |c| {
                    if c.reason().is_empty() {
                        format!("closed ({})", c.code())
                    } else {
                        c.reason()
                    }
                },
            );
            shared.borrow_mut().closed = Some(reason);
        });
        let shared = self.shared.clone();
        let on_error = Closure::<dyn FnMut(JsValueEvent)>::new(move |event: JsValueEvent| {
            if event.dyn_ref::<Event>().is_some() {
                let mut shared = shared.borrow_mut();
                if shared.closed.is_none() {
                    shared.closed = Some("connection failed".to_string());
                }
            }
        });
        socket.set_binary_type(BinaryType::Arraybuffer);
        socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
        socket.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        self.callbacks = vec![on_message, on_open, on_close, on_error];
        self.socket = Some(socket);
    }

    /// Advances the state machine; takes the received frames.
    pub fn poll(&mut self, now: f64, inbox: &mut Vec<Frame>) -> &Status {
        let (opened, closed) = {
            let mut shared = self.shared.borrow_mut();
            inbox.extend(shared.inbox.drain(..));
            (std::mem::take(&mut shared.opened), shared.closed.take())
        };
        if opened {
            self.opened_at = Some(now);
            self.status = Status::Open { fresh: true };
        } else if let Status::Open { fresh } = &mut self.status {
            *fresh = false;
        }
        if let Some(reason) = closed {
            if let Some(socket) = self.socket.take() {
                let _ = socket.close();
            }
            let uptime = self.opened_at.take().map_or(0.0, |at| (now - at).max(0.0));
            let wait = self
                .backoff
                .on_close(Duration::from_secs_f64(uptime / 1000.0));
            self.status = Status::Waiting {
                reason,
                retry_at: now + wait.as_secs_f64() * 1000.0,
            };
        }
        if let Status::Waiting { retry_at, .. } = self.status {
            if now >= retry_at {
                self.open();
            }
        }
        &self.status
    }

    /// Sends a text frame if the socket is open; `false` otherwise.
    pub fn send(&self, text: &str) -> bool {
        matches!(self.status, Status::Open { .. })
            && self
                .socket
                .as_ref()
                .is_some_and(|s| s.send_with_str(text).is_ok())
    }
}
