//! One WebSocket connection, in one task: the upgrade, `hello`, then a loop
//! that reads the client's frames into its room.
//!
//! Every frame, before and after `hello`, goes through `Connection::read`:
//! the connection's [`Gate`] comes first (a flood costs no parsing), then
//! [`decode_client`], which never panics. A refused message gets an `error`
//! with its code, is counted, and changes nothing else; too many errors
//! close the connection (`too_many_errors`). A connection only ever names its own player: the id
//! comes from the server, never from the client.
//!
//! The room writes its frames to the client's socket itself, through the
//! connection's [`Writer`]; this task only drains what the socket did not
//! take at once, and hears the room's verdict when it drops the client (a
//! backlog over budget or older than `send_timeout`: a slow consumer).

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use std::future::poll_fn;

use futures_util::{SinkExt, StreamExt};
use skirmish_core::{decode_client, encode, ErrorCode, ProtocolError};
use tokio::net::TcpStream;
use tokio::time::timeout;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

use crate::conversation::{kicked, shutting_down, stopped, Conversation, Read};
use crate::gate::Gate;
use crate::limits::Permit;
use crate::metrics::DisconnectReason;
use crate::rooms::Sink;
use crate::socket::{SendError, Stream, Writer};
use crate::AppState;

/// How long a closing message may take to send.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);
/// The largest message or frame a client may send; frames announcing more
/// end the connection from their header, before they are buffered. Between
/// [`skirmish_core::MAX_FRAME_BYTES`] and this, a message gets `too_large`.
pub const TRANSPORT_LIMIT: usize = 8 * skirmish_core::MAX_FRAME_BYTES;
/// Bytes read per call (and zero-filled before each by tungstenite): inputs
/// are about 100 bytes; larger frames simply take more reads.
const READ_BUFFER_BYTES: usize = 1024;

type Socket = WebSocketStream<Stream>;

/// Serves one upgraded connection to its end, and counts how it ended. The
/// connection's permit is held until then. `read` holds bytes the client
/// sent right behind its upgrade request.
pub async fn serve(tcp: TcpStream, read: Vec<u8>, state: Arc<AppState>, permit: Arc<Permit>) {
    let _session = Session::start(&state);
    let limits = &state.config.limits;
    let writer = Writer::new(Arc::new(tcp), limits.outbox_capacity, limits.send_timeout);
    let config = WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER_BYTES)
        .write_buffer_size(0)
        .max_message_size(Some(TRANSPORT_LIMIT))
        .max_frame_size(Some(TRANSPORT_LIMIT));
    let socket = WebSocketStream::from_partially_read(
        Stream::new(writer.clone()),
        read,
        Role::Server,
        Some(config),
    )
    .await;
    let mut connection = Connection {
        socket,
        writer,
        state: &state,
        gate: Gate::new(limits.max_messages_per_sec),
    };
    let reason = connection.run(permit.address()).await;
    // Send what is still queued, such as tungstenite's answer to the
    // client's close frame.
    let _ = timeout(CLOSE_TIMEOUT, connection.socket.flush()).await;
    tracing::debug!(?reason, "connection ended");
    state.metrics.disconnected(reason);
}

struct Connection<'a> {
    socket: Socket,
    writer: Arc<Writer>,
    state: &'a AppState,
    gate: Gate,
}

impl Connection<'_> {
    async fn run(&mut self, address: IpAddr) -> DisconnectReason {
        let seat = match self
            .seat(address, Sink::WebSocket(self.writer.clone()))
            .await
        {
            Ok(seat) => seat,
            Err(reason) => return reason,
        };
        let (room, id) = (seat.room().clone(), seat.id());
        let writer = self.writer.clone();
        let mut shutdown = self.state.shutdown.clone();
        // Made once, polled by reference: no new waiter per wake-up.
        let stop = stopped(&mut shutdown);
        tokio::pin!(stop);
        let ending = loop {
            tokio::select! {
                biased;
                () = &mut stop => break shutting_down(),
                drained = poll_fn(|cx| writer.poll_drain(cx)) => break match drained {
                    Ok(code) => kicked(code),
                    Err(SendError::Slow) => (DisconnectReason::SlowConsumer, None),
                    Err(SendError::Closed) => (DisconnectReason::Closed, None),
                },
                read = self.read() => {
                    if let Some(ending) = self.on_read(read, &room, id) {
                        break ending;
                    }
                }
            }
        };
        self.finish(seat, ending).await
    }
}

impl Conversation for Connection<'_> {
    fn state(&self) -> &AppState {
        self.state
    }

    fn gate(&mut self) -> &mut Gate {
        &mut self.gate
    }

    fn send_text(&self, text: &str) -> Result<(), SendError> {
        // Through the writer, beside whatever the room queued, without
        // waiting for it to drain.
        self.writer.send(true, text.as_bytes())
    }

    /// The next frame from the client, rate-limited and decoded.
    async fn read(&mut self) -> Read {
        let text = match self.socket.next().await {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Binary(bytes))) => {
                self.state.metrics.received(bytes.len());
                return self.limited().unwrap_or_else(|| {
                    Read::Refused(ProtocolError::new(
                        ErrorCode::BinaryFrame,
                        "the protocol is JSON text frames",
                    ))
                });
            }
            Some(Ok(Message::Close(_))) | None => return Read::Ended(DisconnectReason::Closed),
            // WebSocket pings count against the rate limit too.
            Some(Ok(_)) => return self.limited().unwrap_or(Read::Nothing),
            Some(Err(_)) => return Read::Ended(DisconnectReason::ProtocolError),
        };
        self.state.metrics.received(text.len());
        if let Some(limited) = self.limited() {
            return limited;
        }
        match decode_client(&text) {
            Ok(message) => Read::Message(message),
            Err(e) => Read::Refused(e),
        }
    }

    /// Sends an `error` and a close frame, waiting at most a second.
    async fn close(&mut self, code: ErrorCode, message: &str) {
        let text = encode(&ProtocolError::new(code, message).to_message());
        let frame = CloseFrame {
            code: match code {
                ErrorCode::ShuttingDown => CloseCode::Away,
                ErrorCode::ServerFull => CloseCode::Again,
                _ => CloseCode::Policy,
            },
            reason: Utf8Bytes::from(code.as_str()),
        };
        let socket = &mut self.socket;
        let _ = timeout(CLOSE_TIMEOUT, async {
            socket.send(Message::Text(text.into())).await?;
            socket.send(Message::Close(Some(frame))).await?;
            // Read until the client answers the close (or goes): closing the
            // socket with its inputs unread would reset the connection and
            // could destroy the error and close frame before it reads them.
            while let Some(Ok(_)) = socket.next().await {}
            Ok::<(), tokio_tungstenite::tungstenite::Error>(())
        })
        .await;
    }
}

/// One running session, counted (in `/metrics` and for shutdown) until
/// dropped.
pub(crate) struct Session<'a>(&'a AppState);

impl Session<'_> {
    pub(crate) fn start(state: &AppState) -> Session<'_> {
        state.metrics.connections_changed(true);
        state.sessions.send_modify(|n| *n += 1);
        Session(state)
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        self.0.metrics.connections_changed(false);
        self.0.sessions.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The `Sec-WebSocket-Accept` value for a valid upgrade request, or what is
/// wrong with it.
///
/// # Errors
/// The request is not a version 13 WebSocket upgrade.
pub fn accept_key(headers: &axum::http::HeaderMap) -> Result<String, &'static str> {
    use axum::http::header;
    let has_token = |name: header::HeaderName, token: &str| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    if !has_token(header::CONNECTION, "upgrade") || !has_token(header::UPGRADE, "websocket") {
        return Err("expected a WebSocket upgrade (Connection: upgrade, Upgrade: websocket)");
    }
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .map(axum::http::HeaderValue::as_bytes)
        != Some(b"13")
    {
        return Err("only WebSocket version 13 is spoken");
    }
    let key = headers
        .get(header::SEC_WEBSOCKET_KEY)
        .ok_or("Sec-WebSocket-Key is missing")?;
    Ok(tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes()))
}
