//! WebTransport from the page: one session, one bidirectional stream for
//! `hello` and the reliable messages (framed by `skirmish_core::framing`),
//! datagrams for inputs, pings, snapshots and pongs.
//!
//! Everything the browser hands over arrives in promise callbacks; they only
//! push frames (stamped with their arrival time) and the session's fate into
//! a shared inbox that the frame loop drains, as for the WebSocket.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Reflect, Uint8Array};
use skirmish_core::framing::{write_message, StreamMessage, StreamReader};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{
    ReadableStreamDefaultReader, WebTransport, WebTransportBidirectionalStream, WebTransportHash,
    WebTransportOptions, WritableStreamDefaultWriter,
};

use crate::net::{now_ms, Frame, Payload};

/// The largest message the stream may carry to us.
const STREAM_LIMIT: usize = 1 << 20;

/// What the callbacks record.
#[derive(Default)]
struct Shared {
    inbox: Vec<Frame>,
    ready: bool,
    closed: Option<String>,
    stream: Option<WritableStreamDefaultWriter>,
}

/// One WebTransport session.
pub struct WtConnection {
    transport: WebTransport,
    datagrams: Option<WritableStreamDefaultWriter>,
    shared: Rc<RefCell<Shared>>,
}

/// Whether this browser has WebTransport at all.
pub fn available() -> bool {
    web_sys::window()
        .is_some_and(|w| Reflect::has(&w, &JsValue::from_str("WebTransport")).unwrap_or(false))
}

fn text_of(error: &JsValue) -> String {
    error
        .as_string()
        .or_else(|| {
            Reflect::get(error, &JsValue::from_str("message"))
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| format!("{error:?}"))
}

impl WtConnection {
    /// Starts a session with `url`, pinning the certificate `hashes`
    /// (SHA-256, hex); it is ready once [`WtConnection::ready`] says so.
    ///
    /// # Errors
    /// The browser refused to start it (a bad URL, say).
    pub fn open(url: &str, hashes: &[String]) -> Result<WtConnection, String> {
        let pinned: Vec<WebTransportHash> = hashes
            .iter()
            .filter_map(|hex| {
                let bytes: Option<Vec<u8>> = (0..hex.len())
                    .step_by(2)
                    .map(|i| {
                        hex.get(i..i + 2)
                            .and_then(|b| u8::from_str_radix(b, 16).ok())
                    })
                    .collect();
                let bytes = bytes.filter(|b| b.len() == 32)?;
                let hash = WebTransportHash::new();
                hash.set_algorithm("sha-256");
                hash.set_value_u8_array(&Uint8Array::from(bytes.as_slice()));
                Some(hash)
            })
            .collect();
        let options = WebTransportOptions::new();
        if !pinned.is_empty() {
            options.set_server_certificate_hashes(&pinned);
        }
        let transport = WebTransport::new_with_options(url, &options).map_err(|e| text_of(&e))?;
        let shared = Rc::new(RefCell::new(Shared::default()));
        let datagrams = transport.datagrams().writable().get_writer().ok();
        // The session's end, however it comes.
        let closed = transport.closed();
        let on_close = shared.clone();
        spawn_local(async move {
            let reason = match JsFuture::from(closed).await {
                Ok(info) => Reflect::get(&info, &JsValue::from_str("reason"))
                    .ok()
                    .and_then(|r| r.as_string())
                    .filter(|r| !r.is_empty())
                    .map_or_else(|| "closed".to_string(), |r| format!("closed ({r})")),
                Err(e) => text_of(&e),
            };
            let mut shared = on_close.borrow_mut();
            shared.closed.get_or_insert(reason);
        });
        spawn_local(start(transport.clone(), shared.clone()));
        Ok(WtConnection {
            transport,
            datagrams,
            shared,
        })
    }

    /// Whether the session and its stream are up.
    pub fn ready(&self) -> bool {
        self.shared.borrow().ready
    }

    /// Why it ended, once it has (taken once).
    pub fn take_closed(&self) -> Option<String> {
        self.shared.borrow_mut().closed.take()
    }

    /// Moves what arrived into `inbox`.
    pub fn drain(&self, inbox: &mut Vec<Frame>) {
        inbox.append(&mut self.shared.borrow_mut().inbox);
    }

    /// Sends a text message on the stream; `false` if it is not up.
    pub fn send_reliable(&self, text: &str) -> bool {
        let shared = self.shared.borrow();
        let Some(writer) = &shared.stream else {
            return false;
        };
        let mut framed = Vec::with_capacity(text.len() + 5);
        write_message(true, text.as_bytes(), &mut framed);
        let _ = writer.write_with_chunk(&Uint8Array::from(framed.as_slice()));
        true
    }

    /// Sends a datagram; `false` if the session is not up.
    pub fn send_datagram(&self, text: &str) -> bool {
        let Some(writer) = self.datagrams.as_ref().filter(|_| self.ready()) else {
            return false;
        };
        let _ = writer.write_with_chunk(&Uint8Array::from(text.as_bytes()));
        true
    }

    /// Ends the session.
    pub fn close(&self) {
        self.transport.close();
    }
}

/// Waits for the session, opens the stream and starts both readers.
async fn start(transport: WebTransport, shared: Rc<RefCell<Shared>>) {
    let opened = async {
        JsFuture::from(transport.ready()).await?;
        let stream: WebTransportBidirectionalStream =
            JsFuture::from(transport.create_bidirectional_stream())
                .await?
                .dyn_into()?;
        let writer = stream.writable().get_writer()?;
        let reader: ReadableStreamDefaultReader = stream.readable().get_reader().dyn_into()?;
        let datagrams: ReadableStreamDefaultReader =
            transport.datagrams().readable().get_reader().dyn_into()?;
        Ok::<_, JsValue>((writer, reader, datagrams))
    };
    match opened.await {
        Ok((writer, reader, datagrams)) => {
            {
                let mut shared = shared.borrow_mut();
                shared.stream = Some(writer);
                shared.ready = true;
            }
            spawn_local(read_stream(reader, shared.clone()));
            spawn_local(read_datagrams(datagrams, shared));
        }
        Err(e) => {
            shared.borrow_mut().closed.get_or_insert(text_of(&e));
        }
    }
}

/// The next chunk of a reader; `None` when it is done or failed.
async fn next_chunk(reader: &ReadableStreamDefaultReader) -> Option<Vec<u8>> {
    let result = JsFuture::from(reader.read()).await.ok()?;
    let done = Reflect::get(&result, &JsValue::from_str("done"))
        .ok()
        .and_then(|d| d.as_bool())
        .unwrap_or(true);
    if done {
        return None;
    }
    let value = Reflect::get(&result, &JsValue::from_str("value")).ok()?;
    Some(value.dyn_into::<Uint8Array>().ok()?.to_vec())
}

async fn read_stream(reader: ReadableStreamDefaultReader, shared: Rc<RefCell<Shared>>) {
    let mut framing = StreamReader::new(STREAM_LIMIT);
    while let Some(chunk) = next_chunk(&reader).await {
        framing.push(&chunk);
        let at = now_ms();
        loop {
            match framing.next_message() {
                Ok(Some(message)) => {
                    let payload = match message {
                        StreamMessage::Text(text) => Payload::Text(text),
                        StreamMessage::Binary(bytes) => Payload::Binary(bytes),
                    };
                    shared.borrow_mut().inbox.push(Frame { payload, at });
                }
                Ok(None) => break,
                Err(e) => {
                    shared
                        .borrow_mut()
                        .closed
                        .get_or_insert(format!("broken stream: {}", e.message));
                    return;
                }
            }
        }
    }
}

async fn read_datagrams(reader: ReadableStreamDefaultReader, shared: Rc<RefCell<Shared>>) {
    while let Some(bytes) = next_chunk(&reader).await {
        let at = now_ms();
        // JSON text starts with `{`; a binary snapshot with its kind.
        let payload = if bytes.first() == Some(&b'{') {
            match String::from_utf8(bytes) {
                Ok(text) => Payload::Text(text),
                Err(_) => continue,
            }
        } else {
            Payload::Binary(bytes)
        };
        shared.borrow_mut().inbox.push(Frame { payload, at });
    }
}
