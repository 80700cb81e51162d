//! The WebSocket transport: one upgraded TCP connection carrying one
//! session. The session's task reads the client's frames itself (our own
//! [`FrameReader`]: no buffering layer, no copy of an input, one wake-up per
//! readable socket); the room writes its frames straight to the socket
//! through the connection's [`Writer`], and the session's loop drains what
//! the socket did not take at once.

mod frames;
pub mod handshake;
mod writer;

use std::io;
use std::sync::Arc;

use skirmish_core::ErrorCode;
use tokio::io::Interest;
use tokio::net::TcpStream;

use crate::app::AppState;
use crate::limits::Permit;
use crate::metrics::DisconnectReason;
use crate::rooms::{Hosted, Rooms};
use crate::session::{self, Raw, Transport};
use crate::transport::{SlowRule, TRANSPORT_LIMIT};
use frames::{Broken, Found, FrameReader, Opcode};
use writer::Writer;

/// Serves one upgraded connection to its end. The connection's permit is
/// held until then. `read` holds bytes the client sent right behind its
/// upgrade request.
pub async fn serve<G: Hosted>(
    tcp: TcpStream,
    read: Vec<u8>,
    state: Arc<AppState>,
    rooms: &Arc<Rooms<G>>,
    permit: Arc<Permit>,
) {
    let tcp = Arc::new(tcp);
    let writer = Writer::new(tcp.clone(), SlowRule::for_room(&state.config.limits));
    let link = WebSocket {
        tcp,
        writer,
        reader: FrameReader::new(TRANSPORT_LIMIT, &read),
        closed: false,
    };
    session::serve(&state, rooms, link, permit.address()).await;
}

/// One WebSocket, as its session sees it.
struct WebSocket {
    tcp: Arc<TcpStream>,
    writer: Arc<Writer>,
    reader: FrameReader,
    /// A close frame was sent: send no other.
    closed: bool,
}

impl WebSocket {
    /// The next frame worth telling the session about, or how the
    /// connection ended.
    async fn frame(&mut self) -> Result<Found, DisconnectReason> {
        loop {
            match self.reader.next() {
                // Pongs and fragments too: each is a frame the rate limit
                // counts, and the session sees its verdicts between them.
                Ok(Some(found)) => return Ok(found),
                Ok(None) => match self.fill().await {
                    Ok(0) | Err(_) => return Err(DisconnectReason::Closed),
                    Ok(_) => {}
                },
                Err(broken) => {
                    self.send_close(broken.status(), reason(broken));
                    return Err(DisconnectReason::ProtocolError);
                }
            }
        }
    }

    /// Reads what the socket holds into the reader; 0 at the end.
    async fn fill(&mut self) -> io::Result<usize> {
        loop {
            // `poll_read_ready` spends tokio's cooperative budget (unlike
            // `readable`): a client that keeps its socket readable makes the
            // task yield now and then instead of holding the one thread.
            std::future::poll_fn(|cx| self.tcp.poll_read_ready(cx)).await?;
            let space = self.reader.space();
            let room = space.len();
            let mut n = 0;
            // A short read drained the socket: forget its readiness now
            // rather than learn it from one more `recv` that fails with
            // `EAGAIN`. The read runs inside `try_io`, so the readiness
            // cleared is the one seen before the read: data arriving after
            // it raises a new event, never lost.
            let read = self.tcp.try_io(Interest::READABLE, || {
                n = self.tcp.try_read(space)?;
                if n > 0 && n < room {
                    Err(io::ErrorKind::WouldBlock.into())
                } else {
                    Ok(())
                }
            });
            match read {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && n > 0 => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
            self.reader.filled(n);
            return Ok(n);
        }
    }

    /// Sends a close frame once.
    fn send_close(&mut self, status: u16, reason: &str) {
        if !self.closed {
            self.closed = true;
            let payload = [&status.to_be_bytes()[..], reason.as_bytes()].concat();
            let _ = self.writer.control(Opcode::Close, &payload);
        }
    }
}

impl Transport for WebSocket {
    type Peer = Writer;

    fn peer(&self) -> Arc<Writer> {
        self.writer.clone()
    }

    async fn next(&mut self) -> Raw<'_> {
        let found = match self.frame().await {
            Ok(found) => found,
            Err(reason) => return Raw::Ended(reason),
        };
        match found {
            Found::Data { text, at } => Raw::Data {
                text,
                payload: self.reader.bytes(&at),
            },
            Found::Ping(at) => {
                // Pongs count against the connection's own budget: a client
                // that pings without reading the answers ends there.
                let pong = self.writer.control(Opcode::Pong, self.reader.bytes(&at));
                if pong.is_err() {
                    return Raw::Ended(DisconnectReason::SlowConsumer);
                }
                Raw::Control
            }
            Found::Close(status) => {
                // Echo the client's status, as RFC 6455 asks.
                self.send_close(status.unwrap_or(1000), "");
                Raw::Ended(DisconnectReason::Closed)
            }
            Found::Nothing => Raw::Control,
        }
    }

    /// Sends a close frame, then reads until the client answers it (or
    /// goes): closing the socket with its inputs unread would reset the
    /// connection and could destroy the error and close frame before the
    /// client reads them.
    async fn close(&mut self, code: ErrorCode) {
        let status = match code {
            ErrorCode::ShuttingDown => 1001,
            ErrorCode::ServerFull => 1013,
            ErrorCode::RoomFailed => 1011,
            _ => 1008,
        };
        self.send_close(status, code.as_str());
        let _ = self.writer.flush().await;
        while let Ok(found) = self.frame().await {
            if matches!(found, Found::Close(_)) {
                break;
            }
        }
    }

    async fn end(&mut self) {
        // Such as the answer to the client's close frame.
        let _ = self.writer.flush().await;
    }
}

/// The reason a protocol-breaking connection is closed with.
fn reason(broken: Broken) -> &'static str {
    match broken {
        Broken::Protocol => "protocol_error",
        Broken::TooLarge => "too_large",
    }
}
