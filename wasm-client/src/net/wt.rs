//! The WebTransport link: one session, one bidirectional stream for `hello`
//! and the other reliable messages (framed by `skirmish_core::framing`),
//! datagrams for inputs, pings, snapshots and pongs.
//!
//! Everything the browser hands over arrives in promise callbacks; they only
//! write frames (stamped with their arrival time), the session's fate and
//! counts of what was lost into the link's [`Mailbox`], as for the
//! WebSocket. A write the browser takes may still fail: each write's promise
//! is awaited, a rejected one is counted, and a rejected write on the stream
//! ends the link, since nothing reliable can follow it.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Promise, Reflect, Uint8Array};
use skirmish_core::framing::{write_message, StreamMessage, StreamReader};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{
    ReadableStreamDefaultReader, WebTransport, WebTransportBidirectionalStream,
    WebTransportCloseInfo, WebTransportHash, WebTransportOptions, WritableStreamDefaultWriter,
};

use super::frame::{now_ms, Frame, Payload};
use super::link::{describe, Link, Mailbox, Reliability, SendError};

/// Whether this browser has WebTransport at all.
pub fn available() -> bool {
    web_sys::window()
        .is_some_and(|w| Reflect::has(&w, &JsValue::from_str("WebTransport")).unwrap_or(false))
}

/// One WebTransport session.
pub struct WtLink {
    transport: WebTransport,
    datagrams: Option<WritableStreamDefaultWriter>,
    /// The reliable stream's writer, once the stream is open.
    stream: Rc<RefCell<Option<WritableStreamDefaultWriter>>>,
    mailbox: Rc<RefCell<Mailbox>>,
}

/// How long the browser may hold an outgoing datagram before it drops it,
/// ms: about one tick.
const DATAGRAM_MAX_AGE_MS: f64 = 50.0;

/// Outgoing datagrams queued before the stream reports backpressure: an
/// input message and its resend.
const DATAGRAM_HIGH_WATER_MARK: f64 = 2.0;

impl WtLink {
    /// Starts a session with `url`, pinning the certificate `hashes`
    /// (SHA-256, hex); it is up once [`Link::ready`] says so.
    ///
    /// # Errors
    /// The browser refused to start it (a bad URL, say).
    pub fn open(url: &str, hashes: &[String]) -> Result<WtLink, String> {
        let options = WebTransportOptions::new();
        let pinned = pinned(hashes);
        if !pinned.is_empty() {
            options.set_server_certificate_hashes(&pinned);
        }
        let transport = WebTransport::new_with_options(url, &options).map_err(|e| describe(&e))?;
        let mailbox: Rc<RefCell<Mailbox>> = Rc::default();
        let stream: Rc<RefCell<Option<WritableStreamDefaultWriter>>> = Rc::default();
        let duplex = transport.datagrams();
        // A datagram older than a tick is stale (the next input message
        // carries the same inputs and newer ones): the browser drops it
        // rather than send it late behind a congested window.
        duplex.set_outgoing_max_age(DATAGRAM_MAX_AGE_MS);
        duplex.set_outgoing_high_water_mark(DATAGRAM_HIGH_WATER_MARK);
        let datagrams = duplex.writable().get_writer().ok();
        spawn_local(watch_closed(transport.closed(), mailbox.clone()));
        spawn_local(start(transport.clone(), stream.clone(), mailbox.clone()));
        Ok(WtLink {
            transport,
            datagrams,
            stream,
            mailbox,
        })
    }
}

impl Link for WtLink {
    fn mailbox(&self) -> &RefCell<Mailbox> {
        &self.mailbox
    }

    /// Sends a reliable message on the stream and a droppable one as a
    /// datagram.
    fn send(&self, payload: &Payload, reliability: Reliability) -> Result<(), SendError> {
        let (text, bytes) = match payload {
            Payload::Text(text) => (true, text.as_bytes()),
            Payload::Binary(bytes) => (false, bytes.as_slice()),
        };
        let write = match reliability {
            Reliability::Reliable => {
                let stream = self.stream.borrow();
                let writer = stream.as_ref().ok_or(SendError::NotReady)?;
                let mut framed = Vec::with_capacity(bytes.len() + 5);
                write_message(text, bytes, &mut framed);
                writer.write_with_chunk(&Uint8Array::from(framed.as_slice()))
            }
            Reliability::Droppable => {
                let writer = self
                    .datagrams
                    .as_ref()
                    .filter(|_| self.ready())
                    .ok_or(SendError::NotReady)?;
                writer.write_with_chunk(&Uint8Array::from(bytes))
            }
        };
        spawn_local(watch_write(write, reliability, self.mailbox.clone()));
        Ok(())
    }

    fn close(&mut self) {
        self.transport.close();
    }
}

/// The certificate hashes to pin, from hex; malformed ones are left out.
fn pinned(hashes: &[String]) -> Vec<WebTransportHash> {
    hashes
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
        .collect()
}

/// Notes the session's end, however it comes.
async fn watch_closed(closed: Promise<WebTransportCloseInfo>, mailbox: Rc<RefCell<Mailbox>>) {
    let reason = match JsFuture::from(closed).await {
        Ok(info) => Reflect::get(&info, &JsValue::from_str("reason"))
            .ok()
            .and_then(|r| r.as_string())
            .filter(|r| !r.is_empty())
            .map_or_else(|| "closed".to_string(), |r| format!("closed ({r})")),
        Err(e) => describe(&e),
    };
    mailbox.borrow_mut().end(reason);
}

/// Counts a write the browser rejects; one on the stream ends the link.
async fn watch_write(write: Promise, reliability: Reliability, mailbox: Rc<RefCell<Mailbox>>) {
    if let Err(e) = JsFuture::from(write).await {
        let mut mailbox = mailbox.borrow_mut();
        mailbox.count_failed_send();
        if reliability == Reliability::Reliable {
            mailbox.end(format!("stream write failed: {}", describe(&e)));
        }
    }
}

/// Waits for the session, opens the stream and starts both readers.
async fn start(
    transport: WebTransport,
    stream: Rc<RefCell<Option<WritableStreamDefaultWriter>>>,
    mailbox: Rc<RefCell<Mailbox>>,
) {
    let opened = async {
        JsFuture::from(transport.ready()).await?;
        let bidi: WebTransportBidirectionalStream =
            JsFuture::from(transport.create_bidirectional_stream())
                .await?
                .dyn_into()?;
        let writer = bidi.writable().get_writer()?;
        let reader: ReadableStreamDefaultReader = bidi.readable().get_reader().dyn_into()?;
        let datagrams: ReadableStreamDefaultReader =
            transport.datagrams().readable().get_reader().dyn_into()?;
        Ok::<_, JsValue>((writer, reader, datagrams))
    };
    match opened.await {
        Ok((writer, reader, datagrams)) => {
            *stream.borrow_mut() = Some(writer);
            mailbox.borrow_mut().set_ready();
            spawn_local(read_stream(reader, mailbox.clone()));
            spawn_local(read_datagrams(datagrams, mailbox));
        }
        Err(e) => mailbox.borrow_mut().end(describe(&e)),
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

/// The largest message the stream may carry to us.
const STREAM_LIMIT: usize = 1 << 20;

async fn read_stream(reader: ReadableStreamDefaultReader, mailbox: Rc<RefCell<Mailbox>>) {
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
                    mailbox.borrow_mut().push(Frame { payload, at });
                }
                Ok(None) => break,
                Err(e) => {
                    let reason = format!("broken stream: {}", e.message);
                    mailbox.borrow_mut().end(reason);
                    return;
                }
            }
        }
    }
}

async fn read_datagrams(reader: ReadableStreamDefaultReader, mailbox: Rc<RefCell<Mailbox>>) {
    while let Some(bytes) = next_chunk(&reader).await {
        let at = now_ms();
        // JSON text starts with `{`; a binary snapshot with its kind.
        let payload = if bytes.first() == Some(&b'{') {
            let Ok(text) = String::from_utf8(bytes) else {
                mailbox.borrow_mut().count_undecodable();
                continue;
            };
            Payload::Text(text)
        } else {
            Payload::Binary(bytes)
        };
        mailbox.borrow_mut().push(Frame { payload, at });
    }
}
