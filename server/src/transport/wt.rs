//! The WebTransport transport: the same sessions as over WebSocket, with
//! inputs and snapshots as unreliable datagrams.
//!
//! A client opens one bidirectional stream and sends `hello` on it; every
//! reliable message (welcome, roster, combat, error, and a snapshot too
//! large for a datagram) travels on that stream, framed by
//! [`skirmish_core::framing`]. Inputs, pings, snapshots and pongs travel as
//! datagrams of at most 1,200 bytes: binary (an input, `hello` or `ping`
//! kind first) or JSON text. Every message passes the same session as on WebSocket, and
//! the same per-address limits apply. The stream is accepted inside the
//! session's hello deadline: a client that opens none is timed out (and
//! told of a shutdown) exactly like one that sends no `hello`.
//!
//! Without `--tls-cert`, the endpoint makes a self-signed ECDSA certificate
//! valid for 14 days (the browser's rule for pinning by hash) and replaces
//! it a day before it expires, without touching open sessions; `GET
//! /transport` tells a page where to connect and which hashes to pin.

mod congestion;
mod endpoint;
mod quic;
mod sender;

use std::sync::Arc;

use skirmish_core::framing::{StreamMessage, StreamReader};
use skirmish_core::ErrorCode;
use tokio::task::JoinHandle;
use tokio::time::error::Elapsed;
use tokio::time::{timeout_at, Instant};
use wtransport::endpoint::IncomingSession;
use wtransport::{Connection, RecvStream};

use crate::app::AppState;
use crate::metrics::{DisconnectReason, Refusal};
use crate::session::{Raw, Transport};
use crate::transport::Door;
use crate::transport::{SlowRule, TRANSPORT_LIMIT};
pub use endpoint::{start, WebTransport};
use sender::Sender;

/// Bytes read from the stream per call.
const READ_BYTES: usize = 4096;

/// One client over WebTransport, from its first packet to its end.
///
/// An address that has not proved it receives what is sent to it gets a
/// QUIC Retry first, and holds nothing: only a validated address is charged
/// a connection permit, so spoofed or abandoned handshakes cannot fill the
/// server's cap. From the permit on, one upgrade deadline covers the QUIC
/// handshake, the HTTP/3 request and its answer, as on TCP.
async fn session(incoming: IncomingSession, state: Arc<AppState>, doors: Arc<[Arc<dyn Door>]>) {
    if !incoming.remote_address_validated() {
        state.metrics.webtransport_retry();
        incoming.retry();
        return;
    }
    let address = incoming.remote_address().ip();
    let permit = match state.book.connect(address) {
        Ok(permit) => permit,
        Err(refusal) => {
            state.metrics.refused(refusal);
            incoming.refuse();
            return;
        }
    };
    let limits = &state.config.limits;
    let deadline = Instant::now() + limits.upgrade_timeout;
    let Some(request) = step(&state, timeout_at(deadline, incoming).await) else {
        return;
    };
    let Some(door) = super::door(&doors, request.path(), "wt").cloned() else {
        state.metrics.refused(Refusal::WrongPath);
        // The answer goes out over flow control the client governs: the
        // upgrade deadline bounds it too.
        let _ = timeout_at(deadline, request.not_found()).await;
        return;
    };
    let Some(connection) = step(&state, timeout_at(deadline, request.accept()).await) else {
        return;
    };
    let sender = Arc::new(Sender::new(
        connection.clone(),
        SlowRule::for_room(limits),
        limits.send_timeout,
    ));
    let link = Link {
        connection,
        recv: None,
        writer: None,
        reader: StreamReader::new(TRANSPORT_LIMIT),
        sender,
        buffer: vec![0; READ_BYTES],
        message: None,
        datagram: None,
        closing: None,
    };
    door.webtransport(link, state, address).await;
    drop(permit);
}

/// What one step of the handshake gave, within the upgrade deadline; a
/// failure or the deadline counted.
fn step<T, E>(state: &AppState, outcome: Result<Result<T, E>, Elapsed>) -> Option<T> {
    match outcome {
        Ok(Ok(done)) => Some(done),
        Ok(Err(_)) => {
            state.metrics.refused(Refusal::HandshakeFailed);
            None
        }
        Err(_) => {
            state.metrics.refused(Refusal::UpgradeTimeout);
            None
        }
    }
}

/// One client over WebTransport, as its session sees it.
pub struct Link {
    connection: Connection,
    /// The client's stream, once it opened it.
    recv: Option<RecvStream>,
    /// The task writing the stream, awaited when closing.
    writer: Option<JoinHandle<()>>,
    reader: StreamReader,
    sender: Arc<Sender>,
    buffer: Vec<u8>,
    /// The stream message or datagram last read, which [`Raw`] borrows
    /// from.
    message: Option<StreamMessage>,
    datagram: Option<wtransport::datagram::Datagram>,
    /// The code the session closes with.
    closing: Option<ErrorCode>,
}

impl Link {
    /// Waits for the client's stream and starts writing to it.
    async fn open(&mut self) -> Result<(), DisconnectReason> {
        let Ok((send, recv)) = self.connection.accept_bi().await else {
            return Err(DisconnectReason::Closed);
        };
        let sender = self.sender.clone();
        self.writer = Some(tokio::spawn(async move { sender.write(send).await }));
        self.recv = Some(recv);
        Ok(())
    }
}

impl Transport for Link {
    type Peer = Sender;

    fn peer(&self) -> Arc<Sender> {
        self.sender.clone()
    }

    /// The next message, from the stream or as a datagram.
    async fn next(&mut self) -> Raw<'_> {
        if self.recv.is_none() {
            if let Err(reason) = self.open().await {
                return Raw::Ended(reason);
            }
        }
        loop {
            match self.reader.next_message() {
                Ok(Some(message)) => {
                    return match self.message.insert(message) {
                        StreamMessage::Text(text) => Raw::Data {
                            text: true,
                            payload: text.as_bytes(),
                        },
                        StreamMessage::Binary(bytes) => Raw::Data {
                            text: false,
                            payload: bytes,
                        },
                    };
                }
                Ok(None) => {}
                Err(_) => return Raw::Ended(DisconnectReason::ProtocolError),
            }
            let Some(recv) = self.recv.as_mut() else {
                return Raw::Ended(DisconnectReason::Closed);
            };
            tokio::select! {
                datagram = self.connection.receive_datagram() => {
                    let Ok(datagram) = datagram else {
                        return Raw::Ended(DisconnectReason::Closed);
                    };
                    let datagram = self.datagram.insert(datagram);
                    // Binary inputs and pings carry their kind first;
                    // anything else is read as JSON text.
                    let text = datagram.first() != Some(&skirmish_core::BINARY_INPUT)
                        && !skirmish_core::control::is_client_control(datagram);
                    return Raw::Data { text, payload: datagram };
                }
                chunk = recv.read(&mut self.buffer) => match chunk {
                    Ok(Some(n)) => self.reader.push(self.buffer.get(..n).unwrap_or_default()),
                    Ok(None) | Err(_) => return Raw::Ended(DisconnectReason::Closed),
                },
            }
        }
    }

    /// Finishes the stream after what is queued (the farewell `error`; the
    /// stream is awaited first if the client has not opened it yet), waits
    /// for the writer to get it out, then gives the client the chance
    /// to read it and close first, as on WebSocket: closing at once could
    /// discard what is in flight. [`Transport::end`] closes with the code.
    async fn close(&mut self, code: ErrorCode) {
        self.closing = Some(code);
        if self.recv.is_none() {
            // The client may have opened its stream as the session ended:
            // the farewell goes there if it comes within the close's time.
            let _ = self.open().await;
        }
        self.sender.finish();
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
            self.connection.closed().await;
        }
    }

    async fn end(&mut self) {
        let reason = self.closing.map_or("", ErrorCode::as_str);
        self.connection.close(1u32.into(), reason.as_bytes());
        // A session that ended without a farewell (the client left) still
        // has its writer parked on an empty queue: end it, or it and the
        // stream it holds outlive the session.
        self.sender.finish();
        if let Some(writer) = self.writer.take() {
            writer.abort();
        }
    }
}
