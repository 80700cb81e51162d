//! The WebSocket transport: one upgraded TCP connection carrying one
//! session. Frames are read by tungstenite; the room writes its frames
//! straight to the socket through the connection's [`Writer`], and the
//! session's loop drains what the socket did not take at once.

pub mod handshake;
mod writer;

use std::sync::Arc;

use futures_util::{SinkExt, StreamExt};
use skirmish_core::ErrorCode;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;

use crate::app::AppState;
use crate::limits::Permit;
use crate::metrics::DisconnectReason;
use crate::session::{self, Raw, Transport};
use crate::transport::{SlowRule, TRANSPORT_LIMIT};
use writer::{Stream, Writer};

/// Bytes read per call (and zero-filled before each by tungstenite): inputs
/// are about 100 bytes; larger frames simply take more reads.
const READ_BUFFER_BYTES: usize = 1024;

/// Serves one upgraded connection to its end. The connection's permit is
/// held until then. `read` holds bytes the client sent right behind its
/// upgrade request.
pub async fn serve(tcp: TcpStream, read: Vec<u8>, state: Arc<AppState>, permit: Arc<Permit>) {
    let writer = Writer::new(Arc::new(tcp), SlowRule::for_room(&state.config.limits));
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
    let link = WebSocket {
        socket,
        writer,
        last: None,
    };
    session::serve(&state, link, permit.address()).await;
}

/// One WebSocket, as its session sees it.
struct WebSocket {
    socket: WebSocketStream<Stream>,
    writer: Arc<Writer>,
    /// The message last read, which [`Raw`] borrows from.
    last: Option<Message>,
}

impl Transport for WebSocket {
    type Peer = Writer;

    fn peer(&self) -> Arc<Writer> {
        self.writer.clone()
    }

    async fn next(&mut self) -> Raw<'_> {
        self.last = match self.socket.next().await {
            Some(Ok(message)) => Some(message),
            Some(Err(_)) => return Raw::Ended(DisconnectReason::ProtocolError),
            None => return Raw::Ended(DisconnectReason::Closed),
        };
        match &self.last {
            Some(Message::Text(text)) => Raw::Data {
                text: true,
                payload: text.as_bytes(),
            },
            Some(Message::Binary(bytes)) => Raw::Data {
                text: false,
                payload: bytes,
            },
            Some(Message::Close(_)) | None => Raw::Ended(DisconnectReason::Closed),
            // WebSocket pings count against the rate limit too.
            Some(_) => Raw::Control,
        }
    }

    /// Sends a close frame, then reads until the client answers it (or
    /// goes): closing the socket with its inputs unread would reset the
    /// connection and could destroy the error and close frame before the
    /// client reads them.
    async fn close(&mut self, code: ErrorCode) {
        let frame = CloseFrame {
            code: match code {
                ErrorCode::ShuttingDown => CloseCode::Away,
                ErrorCode::ServerFull => CloseCode::Again,
                _ => CloseCode::Policy,
            },
            reason: Utf8Bytes::from(code.as_str()),
        };
        if self.socket.send(Message::Close(Some(frame))).await.is_ok() {
            while let Some(Ok(_)) = self.socket.next().await {}
        }
    }

    async fn end(&mut self) {
        // Such as tungstenite's answer to the client's close frame.
        let _ = self.socket.flush().await;
    }
}
