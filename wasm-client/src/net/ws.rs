//! The WebSocket link: one socket to `/ws` carrying every message in order,
//! text as text frames and binary as binary frames.
//!
//! A WebSocket is a stream, so it sends a droppable message like any other:
//! a loss on the way stalls the stream rather than dropping the message.
//! Its callbacks only write into the link's [`Mailbox`]; when the link is
//! dropped they are unhooked first, so that the socket's late events call
//! nothing that is gone.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{BinaryType, CloseEvent, Event, MessageEvent, WebSocket};

use super::frame::{now_ms, Frame, Payload};
use super::link::{describe, Link, Mailbox, Reliability, SendError};

/// A WebSocket to the server.
pub struct WsLink {
    /// `None` when the browser refused to open it (the mailbox says why).
    socket: Option<WebSocket>,
    mailbox: Rc<RefCell<Mailbox>>,
    /// Kept alive while the socket may call them.
    _callbacks: Vec<Closure<dyn FnMut(JsValue)>>,
}

impl WsLink {
    /// Opens a socket to `url`. A socket the browser refuses to open is a
    /// link that has ended, saying why.
    pub fn open(url: &str) -> WsLink {
        let mailbox: Rc<RefCell<Mailbox>> = Rc::default();
        let socket = match WebSocket::new(url) {
            Ok(socket) => socket,
            Err(e) => {
                let reason = format!("cannot open socket: {}", describe(&e));
                mailbox.borrow_mut().end(reason);
                return WsLink {
                    socket: None,
                    mailbox,
                    _callbacks: Vec::new(),
                };
            }
        };
        let message = on_message(mailbox.clone());
        let open = on_open(mailbox.clone());
        let close = on_close(mailbox.clone());
        let error = on_error(mailbox.clone());
        socket.set_binary_type(BinaryType::Arraybuffer);
        socket.set_onmessage(Some(message.as_ref().unchecked_ref()));
        socket.set_onopen(Some(open.as_ref().unchecked_ref()));
        socket.set_onclose(Some(close.as_ref().unchecked_ref()));
        socket.set_onerror(Some(error.as_ref().unchecked_ref()));
        WsLink {
            socket: Some(socket),
            mailbox,
            _callbacks: vec![message, open, close, error],
        }
    }
}

impl Link for WsLink {
    fn mailbox(&self) -> &RefCell<Mailbox> {
        &self.mailbox
    }

    fn send(&self, payload: &Payload, _reliability: Reliability) -> Result<(), SendError> {
        // A closing socket takes a send without a word and drops it.
        let open = |s: &&WebSocket| s.ready_state() == WebSocket::OPEN;
        let Some(socket) = self.socket.as_ref().filter(open) else {
            return Err(SendError::NotReady);
        };
        let sent = match payload {
            Payload::Text(text) => socket.send_with_str(text),
            Payload::Binary(bytes) => socket.send_with_u8_array(bytes),
        };
        sent.map_err(|e| SendError::Refused(describe(&e)))
    }

    fn close(&mut self) {
        if let Some(socket) = &self.socket {
            let _ = socket.close();
        }
    }
}

impl Drop for WsLink {
    fn drop(&mut self) {
        if let Some(socket) = &self.socket {
            socket.set_onmessage(None);
            socket.set_onopen(None);
            socket.set_onclose(None);
            socket.set_onerror(None);
        }
    }
}

/// Keeps each message, stamped with its arrival time.
fn on_message(mailbox: Rc<RefCell<Mailbox>>) -> Closure<dyn FnMut(JsValue)> {
    Closure::new(move |event: JsValue| {
        let Some(data) = event.dyn_ref::<MessageEvent>().map(MessageEvent::data) else {
            return;
        };
        let payload = match data.as_string() {
            Some(text) => Payload::Text(text),
            None => Payload::Binary(js_sys::Uint8Array::new(&data).to_vec()),
        };
        let at = now_ms();
        mailbox.borrow_mut().push(Frame { payload, at });
    })
}

fn on_open(mailbox: Rc<RefCell<Mailbox>>) -> Closure<dyn FnMut(JsValue)> {
    Closure::new(move |_event: JsValue| mailbox.borrow_mut().set_ready())
}

/// Notes the close event's reason (or code), in place of an error's.
fn on_close(mailbox: Rc<RefCell<Mailbox>>) -> Closure<dyn FnMut(JsValue)> {
    Closure::new(move |event: JsValue| {
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
        mailbox.borrow_mut().end_instead(reason);
    })
}

fn on_error(mailbox: Rc<RefCell<Mailbox>>) -> Closure<dyn FnMut(JsValue)> {
    Closure::new(move |event: JsValue| {
        if event.dyn_ref::<Event>().is_some() {
            mailbox.borrow_mut().end("connection failed".to_string());
        }
    })
}
