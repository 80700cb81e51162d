//! The connection to the server: WebTransport when the browser has it and
//! the server offers it, WebSocket otherwise, with fallback and
//! reconnection.
//!
//! Each attempt asks `GET /transport` where WebTransport is; with
//! `?transport=auto` (the default) it tries WebTransport and falls back to
//! the WebSocket if that is not ready within [`FALLBACK_MS`] or fails;
//! `?transport=websocket` or `?transport=webtransport` forces one. Frames
//! received are queued, with the moment each arrived, in an inbox the frame
//! loop drains into the session; nothing is handled inside the callbacks.
//! When a connection closes, [`Connection::poll`] starts a new attempt
//! after the wait core's [`Backoff`] policy gives.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;

use skirmish_core::{encode, Backoff, ClientMessage};
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{BinaryType, CloseEvent, Event, MessageEvent, Response, WebSocket};

use crate::wt::{self, WtConnection};

/// How long WebTransport has to become ready before the WebSocket is used.
pub const FALLBACK_MS: f64 = 3000.0;

/// What a frame carried.
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// A JSON text frame.
    Text(String),
    /// A binary frame (a snapshot).
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
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Which transport the page may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preference {
    /// WebTransport if offered and ready within [`FALLBACK_MS`], else
    /// WebSocket.
    Auto,
    /// WebSocket only.
    WebSocket,
    /// WebTransport only.
    WebTransport,
}

impl Preference {
    /// From `?transport=`.
    pub fn parse(value: Option<&str>) -> Preference {
        match value {
            Some("websocket") => Preference::WebSocket,
            Some("webtransport") => Preference::WebTransport,
            _ => Preference::Auto,
        }
    }
}

/// The transport of an open connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// WebSocket.
    WebSocket,
    /// WebTransport.
    WebTransport,
}

impl Transport {
    /// Its name, as the HUD and `skirmish.debug()` show it.
    pub fn name(self) -> &'static str {
        match self {
            Transport::WebSocket => "websocket",
            Transport::WebTransport => "webtransport",
        }
    }
}

/// The connection's state, for the status line.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Opening a connection.
    Connecting,
    /// Open; `fresh` once, right after opening, to send `hello`.
    Open {
        /// Whether it opened since the last poll.
        fresh: bool,
        /// Over what.
        transport: Transport,
    },
    /// Closed; reconnecting at the given time.
    Waiting {
        /// Why the last connection closed.
        reason: String,
        /// When the next attempt starts (ms, `performance.now()`).
        retry_at: f64,
    },
}

/// What `/transport` said: the WebTransport URL and hashes, if offered.
type Offer = Option<(String, Vec<String>)>;

/// What the WebSocket callbacks record.
#[derive(Debug, Default)]
struct Shared {
    inbox: VecDeque<Frame>,
    opened: bool,
    closed: Option<String>,
}

/// The link of the current attempt.
enum Link {
    /// Waiting for `/transport`.
    Asking(Rc<RefCell<Option<Offer>>>),
    WebSocket {
        /// `None` when the browser refused to open it (`shared` says why).
        socket: Option<WebSocket>,
        shared: Rc<RefCell<Shared>>,
        /// Kept alive while the socket may call them.
        _callbacks: Vec<Closure<dyn FnMut(JsValue)>>,
    },
    WebTransport(WtConnection),
}

/// A self-healing connection.
pub struct Connection {
    ws_url: String,
    preference: Preference,
    link: Option<Link>,
    status: Status,
    backoff: Backoff,
    /// When the attempt (or the open connection) started (ms).
    started_at: f64,
    /// When the open connection opened (ms), if it did.
    opened_at: Option<f64>,
}

impl Connection {
    /// Starts connecting: `ws_url` for the WebSocket, `/transport` for
    /// WebTransport.
    pub fn new(ws_url: String, preference: Preference, now: f64) -> Connection {
        let mut connection = Connection {
            ws_url,
            preference,
            link: None,
            status: Status::Connecting,
            backoff: Backoff::default(),
            started_at: now,
            opened_at: None,
        };
        connection.attempt(now);
        connection
    }

    /// The transport in use, once open.
    pub fn transport(&self) -> Option<Transport> {
        match &self.status {
            Status::Open { transport, .. } => Some(*transport),
            _ => None,
        }
    }

    fn attempt(&mut self, now: f64) {
        self.status = Status::Connecting;
        self.started_at = now;
        self.opened_at = None;
        if self.preference == Preference::WebSocket || !wt::available() {
            self.link = Some(open_websocket(&self.ws_url));
            return;
        }
        let answer = Rc::new(RefCell::new(None));
        spawn_local(ask_transport(answer.clone()));
        self.link = Some(Link::Asking(answer));
    }

    /// Advances the state machine; takes the received frames.
    pub fn poll(&mut self, now: f64, inbox: &mut Vec<Frame>) -> &Status {
        if let Status::Open { fresh, .. } = &mut self.status {
            *fresh = false;
        }
        let mut closed = None;
        match &mut self.link {
            None => {}
            Some(Link::Asking(answer)) => {
                let offer = answer.borrow_mut().take();
                if let Some(offer) = offer {
                    self.link = Some(match (offer, self.preference) {
                        (Some((url, hashes)), _) => match WtConnection::open(&url, &hashes) {
                            Ok(wt) => Link::WebTransport(wt),
                            Err(e) if self.preference == Preference::Auto => {
                                tracing_fallback(&e);
                                open_websocket(&self.ws_url)
                            }
                            Err(e) => {
                                closed = Some(format!("WebTransport: {e}"));
                                Link::Asking(Rc::default())
                            }
                        },
                        (None, Preference::WebTransport) => {
                            closed = Some("the server offers no WebTransport".to_string());
                            Link::Asking(Rc::default())
                        }
                        (None, _) => open_websocket(&self.ws_url),
                    });
                }
            }
            Some(Link::WebSocket { shared, .. }) => {
                let mut shared = shared.borrow_mut();
                inbox.extend(shared.inbox.drain(..));
                if std::mem::take(&mut shared.opened) {
                    self.status = Status::Open {
                        fresh: true,
                        transport: Transport::WebSocket,
                    };
                    self.opened_at = Some(now);
                }
                closed = shared.closed.take();
            }
            Some(Link::WebTransport(wt)) => {
                wt.drain(inbox);
                if wt.ready() && self.status == Status::Connecting {
                    self.status = Status::Open {
                        fresh: true,
                        transport: Transport::WebTransport,
                    };
                    self.opened_at = Some(now);
                }
                closed = wt.take_closed();
                let late = self.status == Status::Connecting && now - self.started_at > FALLBACK_MS;
                if late && closed.is_none() {
                    closed = Some("WebTransport was not ready in time".to_string());
                }
                // Not open yet and allowed to: fall back to the WebSocket.
                if closed.is_some()
                    && self.status == Status::Connecting
                    && self.preference == Preference::Auto
                {
                    tracing_fallback(closed.as_deref().unwrap_or_default());
                    wt.close();
                    self.link = Some(open_websocket(&self.ws_url));
                    closed = None;
                }
            }
        }
        if let Some(reason) = closed {
            self.end(reason, now);
        }
        if let Status::Waiting { retry_at, .. } = self.status {
            if now >= retry_at {
                self.attempt(now);
            }
        }
        &self.status
    }

    fn end(&mut self, reason: String, now: f64) {
        match self.link.take() {
            Some(Link::WebSocket {
                socket: Some(socket),
                ..
            }) => {
                let _ = socket.close();
            }
            Some(Link::WebTransport(wt)) => wt.close(),
            _ => {}
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

    /// Sends a message if the connection is open (inputs and pings as
    /// datagrams over WebTransport); the bytes sent, or `None`.
    pub fn send(&self, message: &ClientMessage) -> Option<usize> {
        if !matches!(self.status, Status::Open { .. }) {
            return None;
        }
        let text = encode(message);
        let sent = match &self.link {
            Some(Link::WebSocket { socket, .. }) => socket
                .as_ref()
                .is_some_and(|s| s.send_with_str(&text).is_ok()),
            Some(Link::WebTransport(wt)) => match message {
                ClientMessage::Input { .. } | ClientMessage::Ping { .. } => wt.send_datagram(&text),
                ClientMessage::Hello { .. } => wt.send_reliable(&text),
            },
            _ => false,
        };
        sent.then_some(text.len())
    }
}

fn tracing_fallback(why: &str) {
    web_sys::console::info_1(&JsValue::from_str(&format!(
        "WebTransport unavailable ({why}); using the WebSocket"
    )));
}

/// Asks `/transport`; answers `Some(None)` when WebTransport is not offered
/// (or the question fails).
async fn ask_transport(answer: Rc<RefCell<Option<Offer>>>) {
    let offer = async {
        let window = web_sys::window()?;
        let response: Response = JsFuture::from(window.fetch_with_str("/transport"))
            .await
            .ok()?
            .dyn_into()
            .ok()?;
        let text = JsFuture::from(response.text().ok()?)
            .await
            .ok()?
            .as_string()?;
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        let wt = json.get("webtransport").filter(|w| !w.is_null())?;
        let url = wt.get("url")?.as_str()?.to_string();
        let hashes = wt
            .get("certificate_hashes")?
            .as_array()?
            .iter()
            .filter_map(|h| h.as_str().map(str::to_string))
            .collect();
        Some((url, hashes))
    }
    .await;
    *answer.borrow_mut() = Some(offer);
}

fn open_websocket(url: &str) -> Link {
    let shared: Rc<RefCell<Shared>> = Rc::default();
    let socket = match WebSocket::new(url) {
        Ok(socket) => socket,
        Err(e) => {
            shared.borrow_mut().closed = Some(format!("cannot open socket: {e:?}"));
            return Link::WebSocket {
                socket: None,
                shared,
                _callbacks: Vec::new(),
            };
        }
    };
    let inbox = shared.clone();
    let on_message = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        let Some(data) = event.dyn_ref::<MessageEvent>().map(MessageEvent::data) else {
            return;
        };
        let payload = match data.as_string() {
            Some(text) => Payload::Text(text),
            None => Payload::Binary(js_sys::Uint8Array::new(&data).to_vec()),
        };
        let at = now_ms();
        inbox.borrow_mut().inbox.push_back(Frame { payload, at });
    });
    let opened = shared.clone();
    let on_open = Closure::<dyn FnMut(JsValue)>::new(move |_event: JsValue| {
        opened.borrow_mut().opened = true;
    });
    let closed = shared.clone();
    let on_close = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
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
        closed.borrow_mut().closed = Some(reason);
    });
    let failed = shared.clone();
    let on_error = Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
        if event.dyn_ref::<Event>().is_some() {
            failed
                .borrow_mut()
                .closed
                .get_or_insert_with(|| "connection failed".to_string());
        }
    });
    socket.set_binary_type(BinaryType::Arraybuffer);
    socket.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    socket.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    socket.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    socket.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    Link::WebSocket {
        socket: Some(socket),
        shared,
        _callbacks: vec![on_message, on_open, on_close, on_error],
    }
}
