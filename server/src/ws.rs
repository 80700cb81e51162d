//! One WebSocket connection, in one task: `hello`, then a loop that reads
//! the client's frames and writes what its room queued, one flush per batch.
//!
//! Every frame, before and after `hello`, goes through [`Connection::read`]:
//! the per-second rate limit comes first (a flood costs no parsing), then
//! [`decode_client`], which never panics. A refused message gets an `error`
//! with its code, is counted, and changes nothing else; more than
//! [`ERROR_BUDGET`] errors within [`ERROR_WINDOW`] close the connection
//! (`too_many_errors`). A connection only ever names its own player: the id
//! comes from the server, never from the client.
//!
//! What the room queued for the client is written in batches: every
//! message waiting in the outbox is fed to the socket and flushed once, so a
//! tick's snapshot and combat message cost one write. A write that takes
//! longer than `send_timeout`, or an outbox the room finds full, ends the
//! connection as a slow consumer.

use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{close_code, CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::{SinkExt, StreamExt};
use skirmish_core::{
    decode_client, encode, ClientMessage, Encoding, ErrorCode, PlayerId, ProtocolError,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{timeout, Instant};

use crate::limits::Permit;
use crate::metrics::DisconnectReason;
use crate::rooms::{ClientLink, Joiner, RoomHandle};
use crate::AppState;

/// Errors tolerated within [`ERROR_WINDOW`] before the connection is closed.
pub const ERROR_BUDGET: u32 = 10;
/// The window of [`ERROR_BUDGET`].
pub const ERROR_WINDOW: Duration = Duration::from_secs(10);
/// How long a closing message may take to send.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);
/// Most messages written in one batch (one flush).
const BATCH: usize = 64;

/// Serves one upgraded connection to its end, and counts how it ended. The
/// connection's permit is held until then.
pub async fn serve(socket: WebSocket, state: Arc<AppState>, permit: Arc<Permit>) {
    state.metrics.connections_changed(true);
    let mut connection = Connection {
        socket,
        state: &state,
        budget: Window::new(ERROR_WINDOW),
        rate: Window::new(Duration::from_secs(1)),
        told_rate: false,
    };
    let reason = connection.run(permit.address()).await;
    tracing::debug!(?reason, "connection ended");
    state.metrics.disconnected(reason);
    state.metrics.connections_changed(false);
}

/// Counts events in fixed windows.
struct Window {
    length: Duration,
    start: Instant,
    count: u32,
}

impl Window {
    fn new(length: Duration) -> Window {
        Window {
            length,
            start: Instant::now(),
            count: 0,
        }
    }

    /// Counts one event; how many this window holds, and whether the
    /// window is new.
    fn count(&mut self) -> (u32, bool) {
        let fresh = self.start.elapsed() >= self.length;
        if fresh {
            self.start = Instant::now();
            self.count = 0;
        }
        self.count += 1;
        (self.count, fresh)
    }
}

/// What one read from the client gave.
enum Read {
    /// A well-formed message.
    Message(ClientMessage),
    /// A refused frame: answer with the error.
    Refused(ProtocolError),
    /// Nothing to act on (a control frame, or a rate-limited message).
    Nothing,
    /// The connection ended.
    Ended(DisconnectReason),
}

/// How the joined loop ended: why, and what to tell the client.
type Ending = (DisconnectReason, Option<(ErrorCode, String)>);

struct Connection<'a> {
    socket: WebSocket,
    state: &'a AppState,
    budget: Window,
    rate: Window,
    told_rate: bool,
}

impl Connection<'_> {
    async fn run(&mut self, address: IpAddr) -> DisconnectReason {
        let mut shutdown = self.state.shutdown.clone();
        let limits = &self.state.config.limits;
        let hello = tokio::select! {
            hello = timeout(limits.hello_timeout, self.wait_for_hello()) => hello,
            () = stopped(&mut shutdown) => {
                self.close(ErrorCode::ShuttingDown, "the server is shutting down").await;
                return DisconnectReason::Shutdown;
            }
        };
        let (name, room, encoding) = match hello {
            Ok(Ok(hello)) => hello,
            Ok(Err(reason)) => return reason,
            Err(_) => {
                self.state.metrics.rejected(ErrorCode::HelloTimeout);
                self.close(ErrorCode::HelloTimeout, "no hello in time")
                    .await;
                return DisconnectReason::HelloTimeout;
            }
        };
        let id = PlayerId(self.state.next_player.fetch_add(1, Ordering::Relaxed));
        let (outbox, mut queued) = mpsc::channel(limits.outbox_capacity.max(1));
        let (kick, mut kicked) = oneshot::channel();
        let joiner = Joiner {
            id,
            name: &name,
            room: room.as_deref(),
            encoding,
            address,
        };
        let room = match self.state.rooms.join(&joiner, ClientLink { outbox, kick }) {
            Ok(room) => room,
            Err(e) => {
                self.state.metrics.rejected(e.code);
                self.close(e.code, &e.message).await;
                return DisconnectReason::Refused;
            }
        };
        let mut batch = Vec::with_capacity(BATCH);
        // Made once, polled by reference: no new waiter per wake-up.
        let stop = stopped(&mut shutdown);
        tokio::pin!(stop);
        let (reason, farewell): Ending = loop {
            tokio::select! {
                biased;
                () = &mut stop => break (
                    DisconnectReason::Shutdown,
                    Some((ErrorCode::ShuttingDown, "the server is shutting down".into())),
                ),
                code = &mut kicked => break kick_ending(code.ok()),
                n = queued.recv_many(&mut batch, BATCH) => {
                    if n == 0 {
                        break (DisconnectReason::Closed, None);
                    }
                    // A write to a client that does not read may block until
                    // `send_timeout`; the room's verdict ends it sooner.
                    tokio::select! {
                        written = self.write(&mut batch) => if let Err(reason) = written {
                            break (reason, None);
                        },
                        code = &mut kicked => break kick_ending(code.ok()),
                    }
                }
                read = self.read() => {
                    if let Some(ending) = self.on_read(read, &room, id).await {
                        break ending;
                    }
                }
            }
        };
        room.leave(id);
        if let Some((code, message)) = farewell {
            self.close(code, &message).await;
        }
        reason
    }

    /// Reads until `hello`; everything else gets `not_joined`.
    async fn wait_for_hello(
        &mut self,
    ) -> Result<(String, Option<String>, Encoding), DisconnectReason> {
        loop {
            let error = match self.read().await {
                Read::Message(ClientMessage::Hello {
                    name,
                    room,
                    encoding,
                    ..
                }) => return Ok((name, room, encoding)),
                Read::Message(_) => ProtocolError::new(ErrorCode::NotJoined, "send hello first"),
                Read::Refused(e)
                    if matches!(e.code, ErrorCode::BadProtocol | ErrorCode::BadName) =>
                {
                    self.state.metrics.rejected(e.code);
                    self.close(e.code, &e.message).await;
                    return Err(DisconnectReason::Refused);
                }
                Read::Refused(e) => e,
                Read::Nothing => continue,
                Read::Ended(reason) => return Err(reason),
            };
            if let Err((reason, farewell)) = self.refuse(&error).await {
                if let Some((code, message)) = farewell {
                    self.close(code, &message).await;
                }
                return Err(reason);
            }
        }
    }

    /// Acts on one read of a joined connection; `Some` when it must end.
    async fn on_read(&mut self, read: Read, room: &RoomHandle, id: PlayerId) -> Option<Ending> {
        let error = match read {
            Read::Message(message) => match room.receive(id, &message) {
                Ok(_) => return None,
                Err(e) => e,
            },
            Read::Refused(e) => e,
            Read::Nothing => return None,
            Read::Ended(reason) => return Some((reason, None)),
        };
        self.refuse(&error).await.err()
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
            Some(Ok(_)) => return Read::Nothing,
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

    /// Counts a message against the rate limit; `Some` if it is over and
    /// must be dropped (told once per window).
    fn limited(&mut self) -> Option<Read> {
        let (count, fresh) = self.rate.count();
        if fresh {
            self.told_rate = false;
        }
        let max = self.state.config.limits.max_messages_per_sec;
        if count <= max {
            return None;
        }
        if self.told_rate {
            self.state.metrics.rejected(ErrorCode::RateLimited);
            return Some(Read::Nothing);
        }
        self.told_rate = true;
        Some(Read::Refused(ProtocolError::new(
            ErrorCode::RateLimited,
            format!("more than {max} messages per second; dropped"),
        )))
    }

    /// Counts a refused message and answers it with its error; `Err` with
    /// the ending once the error budget is spent or the socket is gone.
    async fn refuse(&mut self, error: &ProtocolError) -> Result<(), Ending> {
        self.state.metrics.rejected(error.code);
        // Rate-limited messages are dropped, not held against the budget.
        if error.code != ErrorCode::RateLimited && self.budget.count().0 > ERROR_BUDGET {
            return Err((
                DisconnectReason::TooManyErrors,
                Some((ErrorCode::TooManyErrors, "too many bad messages".into())),
            ));
        }
        let text = encode(&error.to_message());
        let len = text.len();
        match timeout(CLOSE_TIMEOUT, self.socket.send(Message::Text(text.into()))).await {
            Ok(Ok(())) => {
                self.state.metrics.sent(len);
                Ok(())
            }
            Ok(Err(_)) => Err((DisconnectReason::Closed, None)),
            Err(_) => Err((DisconnectReason::SlowConsumer, None)),
        }
    }

    /// Writes a batch of queued messages with one flush.
    async fn write(&mut self, batch: &mut Vec<Message>) -> Result<(), DisconnectReason> {
        let bytes: usize = batch.iter().map(payload_len).sum();
        let count = batch.len();
        let socket = &mut self.socket;
        let send = async {
            for message in batch.drain(..) {
                socket.feed(message).await?;
            }
            socket.flush().await
        };
        match timeout(self.state.config.limits.send_timeout, send).await {
            Ok(Ok(())) => {
                self.state.metrics.sent_many(count, bytes);
                Ok(())
            }
            Ok(Err(_)) => Err(DisconnectReason::Closed),
            Err(_) => Err(DisconnectReason::SlowConsumer),
        }
    }

    /// Sends an `error` and a close frame, waiting at most a second.
    async fn close(&mut self, code: ErrorCode, message: &str) {
        let text = encode(&ProtocolError::new(code, message).to_message());
        let frame = CloseFrame {
            code: match code {
                ErrorCode::ShuttingDown => close_code::AWAY,
                ErrorCode::ServerFull => close_code::AGAIN,
                _ => close_code::POLICY,
            },
            reason: Utf8Bytes::from(code.as_str()),
        };
        let socket = &mut self.socket;
        let _ = timeout(CLOSE_TIMEOUT, async {
            socket.send(Message::Text(text.into())).await?;
            socket.send(Message::Close(Some(frame))).await
        })
        .await;
    }
}

/// How a connection the room dropped ends.
fn kick_ending(code: Option<ErrorCode>) -> Ending {
    match code {
        Some(ErrorCode::SlowConsumer) | None => (DisconnectReason::SlowConsumer, None),
        Some(code) => (
            DisconnectReason::Closed,
            Some((code, "disconnected by the room".into())),
        ),
    }
}

/// The payload bytes of a data message.
fn payload_len(message: &Message) -> usize {
    match message {
        Message::Text(text) => text.len(),
        Message::Binary(bytes) => bytes.len(),
        _ => 0,
    }
}

/// Resolves once the server shuts down (or its state is gone).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}
