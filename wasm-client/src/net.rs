//! The connection to the server: WebTransport when the browser has it and
//! the server offers it, WebSocket otherwise, with fallback and
//! reconnection.
//!
//! Each attempt asks `GET /transport` where WebTransport is; with
//! `?transport=auto` (the default) it tries WebTransport and falls back to
//! the WebSocket if that is not ready within [`FALLBACK_MS`] or fails;
//! `?transport=websocket` or `?transport=webtransport` forces one (a
//! browser without WebTransport uses the WebSocket all the same). When a
//! connection closes, the next attempt starts after the wait core's
//! `Backoff` policy gives. Those decisions are [`plan`]'s; [`Connection`]
//! carries them out.
//!
//! The pieces, lowest first: [`frame`] (what travels, and the clock),
//! [`link`] (the [`Link`] trait and the mailbox its callbacks fill), the two
//! links [`ws`] and [`wt`], which know nothing of the connection, and
//! [`plan`]. Frames received are queued, with the moment each arrived, in
//! a bounded mailbox that the frame loop drains into the session; nothing
//! is handled inside the callbacks. Every outgoing message, as the session
//! encoded it, goes through [`outgoing`], which picks the way it travels.

pub mod frame;
pub mod link;
pub mod plan;
pub mod ws;
pub mod wt;

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Reflect;
use skirmish_core::{ClientMessage, Frame as Wire};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::Response;

pub use self::frame::{now_ms, Frame, Payload};
pub use self::link::{Counters, Link, Reliability};
use self::plan::{Action, Plan};
pub use self::plan::{Preference, Status, Transport, FALLBACK_MS};
use self::ws::WsLink;
use self::wt::WtLink;

/// A message as it goes on the wire (`frame`, as the session encoded it:
/// binary inputs for a compact session, JSON text otherwise), and whether
/// it may be dropped (inputs and pings: a later one supersedes them). Every
/// outgoing message goes through here.
pub fn outgoing<W>(message: &ClientMessage<W>, frame: Wire) -> (Payload, Reliability) {
    let reliability = match message {
        ClientMessage::Input { .. } | ClientMessage::Ping { .. } => Reliability::Droppable,
        ClientMessage::Hello { .. } => Reliability::Reliable,
    };
    let payload = match frame {
        Wire::Text(text) => Payload::Text(text),
        Wire::Binary(bytes) => Payload::Binary(bytes),
    };
    (payload, reliability)
}

/// A self-healing connection.
pub struct Connection {
    ws_url: String,
    /// `?wt-port=`: WebTransport at this port of the offered host instead
    /// (a UDP relay that impairs the path, for tests and measurements).
    wt_port: Option<u16>,
    plan: Plan,
    current: Current,
    /// What every link so far lost on the way, and the sends that failed.
    counters: Counters,
}

impl Connection {
    /// Starts connecting: `ws_url` for the WebSocket, `/transport` for
    /// WebTransport (at `wt_port` of the offered host, when given).
    pub fn new(
        ws_url: String,
        wt_port: Option<u16>,
        preference: Preference,
        now: f64,
    ) -> Connection {
        let mut connection = Connection {
            ws_url,
            wt_port,
            plan: Plan::new(preference, wt::available()),
            current: Current::Nothing,
            counters: Counters::default(),
        };
        let first = connection.plan.start(now);
        connection.act(first);
        connection
    }

    /// The transport in use, once open.
    pub fn transport(&self) -> Option<Transport> {
        self.plan.transport()
    }

    /// What the links lost so far, and the sends that failed.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// Advances the state machine; takes the received frames.
    pub fn poll(&mut self, now: f64, inbox: &mut Vec<Frame>) -> &Status {
        self.plan.polled();
        let action = match &mut self.current {
            Current::Nothing => Action::Stay,
            Current::Asking(answer) => {
                let offer = answer.borrow_mut().take();
                match offer {
                    Some(offer) => self.offered(offer, now),
                    None => Action::Stay,
                }
            }
            Current::Link(link) => {
                link.drain(inbox, &mut self.counters);
                if link.ready() {
                    self.plan.opened(now);
                }
                match link.take_closed() {
                    Some(why) => self.plan.closed(why, now),
                    None => Action::Stay,
                }
            }
        };
        self.act(action);
        let action = self.plan.tick(now);
        self.act(action);
        self.plan.status()
    }

    /// Sends a message if the connection is open (inputs and pings as
    /// datagrams over WebTransport); the bytes sent, or `None`. A link that
    /// refuses the message counts a failed send.
    pub fn send<W>(&mut self, message: &ClientMessage<W>, frame: Wire) -> Option<usize> {
        if !matches!(self.plan.status(), Status::Open { .. }) {
            return None;
        }
        let Current::Link(link) = &self.current else {
            return None;
        };
        let (payload, reliability) = outgoing(message, frame);
        if link.send(&payload, reliability).is_err() {
            self.counters.failed_sends += 1;
            return None;
        }
        Some(payload.len())
    }

    /// `/transport` answered: opens WebTransport if the plan says so.
    fn offered(&mut self, offer: Offer, now: f64) -> Action {
        match (self.plan.offered(offer.is_some(), now), offer) {
            (Action::OpenWebTransport, Some((url, hashes))) => match WtLink::open(
                &self
                    .wt_port
                    .map_or_else(|| url.clone(), |port| with_port(&url, port)),
                &hashes,
            ) {
                Ok(link) => {
                    self.current = Current::Link(Box::new(link));
                    Action::Stay
                }
                Err(e) => self.plan.refused(&e, now),
            },
            (action, _) => action,
        }
    }

    /// Carries out what the plan decided (WebTransport is opened where the
    /// offer is at hand, in [`Connection::offered`]).
    fn act(&mut self, action: Action) {
        match action {
            Action::Stay | Action::OpenWebTransport => {}
            Action::AskOffer => {
                self.close_link();
                let answer = Rc::new(RefCell::new(None));
                spawn_local(ask_transport(answer.clone()));
                self.current = Current::Asking(answer);
            }
            Action::OpenWebSocket => self.open_websocket(),
            Action::FallBack(why) => {
                web_sys::console::info_1(&JsValue::from_str(&format!(
                    "WebTransport unavailable ({why}); using the WebSocket"
                )));
                self.open_websocket();
            }
            Action::Close => self.close_link(),
        }
    }

    fn open_websocket(&mut self) {
        self.close_link();
        self.current = Current::Link(Box::new(WsLink::open(&self.ws_url)));
    }

    fn close_link(&mut self) {
        if let Current::Link(mut link) = std::mem::replace(&mut self.current, Current::Nothing) {
            link.close();
        }
    }
}

/// `url` (`https://host:port/path`) at `port` instead.
///
/// Found byte by byte and cut with `str::get`: a string slice that can
/// fail (`&s[i..]`, `split_at`) or a search for a string pattern would
/// bring the panic's message writer (with its tables of printable
/// characters) and the two-way searcher into every page's bundle.
fn with_port(url: &str, port: u16) -> String {
    let bytes = url.as_bytes();
    let Some(start) = bytes.windows(3).position(|w| w == b"://").map(|i| i + 3) else {
        return url.to_string();
    };
    let end = bytes
        .iter()
        .skip(start)
        .position(|&b| b == b'/')
        .map_or(bytes.len(), |i| start + i);
    // The host is what comes before the last colon that follows the
    // closing bracket of an IPv6 address, if any.
    let authority = bytes.get(start..end).unwrap_or_default();
    let host_end = authority
        .iter()
        .rposition(|&b| b == b':')
        .filter(|&i| !authority.iter().skip(i).any(|&b| b == b']'))
        .map_or(end, |i| start + i);
    // Both cuts are at ASCII bytes (or the end): `get` always finds them.
    match (url.get(..host_end), url.get(end..)) {
        (Some(host), Some(path)) => format!("{host}:{port}{path}"),
        _ => url.to_string(),
    }
}

/// What `/transport` said: the WebTransport URL and hashes, if offered.
type Offer = Option<(String, Vec<String>)>;

/// The link of the current attempt.
enum Current {
    /// No link: waiting to retry.
    Nothing,
    /// Waiting for `/transport`.
    Asking(Rc<RefCell<Option<Offer>>>),
    /// A link, up or coming up.
    Link(Box<dyn Link>),
}

/// Asks `transport` beside the page (`/transport`, or `/walkers/transport`
/// for the page at `/walkers/`); answers `Some(None)` when WebTransport is not offered
/// (or the question fails).
async fn ask_transport(answer: Rc<RefCell<Option<Offer>>>) {
    let offer = async {
        let window = web_sys::window()?;
        let response: Response = JsFuture::from(window.fetch_with_str("transport"))
            .await
            .ok()?
            .dyn_into()
            .ok()?;
        let text = JsFuture::from(response.text().ok()?)
            .await
            .ok()?
            .as_string()?;
        let json = js_sys::JSON::parse(&text).ok()?;
        let wt = Reflect::get(&json, &"webtransport".into())
            .ok()
            .filter(JsValue::is_object)?;
        let url = Reflect::get(&wt, &"url".into()).ok()?.as_string()?;
        let hashes = Reflect::get(&wt, &"certificate_hashes".into()).ok()?;
        let hashes = js_sys::Array::is_array(&hashes)
            .then(|| js_sys::Array::from(&hashes))?
            .iter()
            .filter_map(|h| h.as_string())
            .collect();
        Some((url, hashes))
    }
    .await;
    *answer.borrow_mut() = Some(offer);
}

#[cfg(test)]
mod tests {
    use skirmish_core::{Encoding, Tick};

    use super::*;

    #[test]
    fn a_relay_port_replaces_the_offered_one() {
        assert_eq!(
            with_port("https://127.0.0.1:8080/wt", 9000),
            "https://127.0.0.1:9000/wt"
        );
        assert_eq!(
            with_port("https://[::1]:8080/wt", 9000),
            "https://[::1]:9000/wt"
        );
        assert_eq!(with_port("https://[::1]/wt", 9000), "https://[::1]:9000/wt");
        assert_eq!(with_port("https://host/wt", 9000), "https://host:9000/wt");
        assert_eq!(with_port("nonsense", 9000), "nonsense");
        assert_eq!(with_port("https://host:1", 9000), "https://host:9000");
        assert_eq!(
            with_port("https://hôte:1/wt?é=1", 9000),
            "https://hôte:9000/wt?é=1"
        );
    }

    #[test]
    fn hello_goes_reliably_and_inputs_and_pings_may_be_dropped() {
        let hello = ClientMessage::<u8>::Hello {
            name: "ann".to_string(),
            protocol: 2,
            room: None,
            encoding: Encoding::Compact,
            game: None,
        };
        let (payload, reliability) = outgoing(&hello, Wire::Binary(vec![1, 2]));
        assert_eq!(reliability, Reliability::Reliable);
        assert_eq!(
            payload,
            Payload::Binary(vec![1, 2]),
            "the frame as the session encoded it"
        );
        let ping = ClientMessage::<u8>::Ping { id: 7 };
        let (payload, reliability) = outgoing(&ping, Wire::Text("{}".to_string()));
        assert_eq!(reliability, Reliability::Droppable);
        assert_eq!(payload, Payload::Text("{}".to_string()));
        let input = ClientMessage::Input {
            inputs: vec![0_u8],
            snapshot_ack: Some(Tick(3)),
            seq: Some(1),
        };
        assert_eq!(
            outgoing(&input, Wire::Binary(vec![9])).1,
            Reliability::Droppable
        );
    }
}
