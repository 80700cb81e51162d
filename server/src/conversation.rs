//! What a session says to its client, whatever carries the bytes: waiting
//! for `hello`, taking a seat, handing messages to the room, answering
//! refusals with their error and counting them against the [`Gate`], and
//! the farewell. The WebSocket and the WebTransport sessions implement the
//! three transport-specific steps (read a message, send a text, close with
//! a reason) and their own read loop, and share the rest.

use std::net::IpAddr;
use std::sync::atomic::Ordering;

use skirmish_core::{encode, ClientMessage, Encoding, ErrorCode, PlayerId, ProtocolError};
use tokio::sync::watch;
use tokio::time::timeout;

use crate::gate::{Admit, Gate};
use crate::metrics::DisconnectReason;
use crate::rooms::{Joiner, RoomHandle, Sink};
use crate::socket::SendError;
use crate::AppState;

/// What one read from the client gave.
pub(crate) enum Read {
    /// A well-formed message.
    Message(ClientMessage),
    /// A refused message: answer with the error.
    Refused(ProtocolError),
    /// Nothing to act on (a control frame, or a rate-limited message).
    Nothing,
    /// The connection ended.
    Ended(DisconnectReason),
}

/// How a session ends: why, and what to tell the client.
pub(crate) type Ending = (DisconnectReason, Option<(ErrorCode, String)>);

/// What `hello` asked for: a name, a room, an encoding.
pub(crate) type Hello = (String, Option<String>, Encoding, u32);

/// What a client is told when the server shuts down.
const SHUTTING_DOWN: &str = "the server is shutting down";

/// How a session ends when the server shuts down.
pub(crate) fn shutting_down() -> Ending {
    (
        DisconnectReason::Shutdown,
        Some((ErrorCode::ShuttingDown, SHUTTING_DOWN.into())),
    )
}

/// How a session the room dropped ends.
pub(crate) fn kicked(code: ErrorCode) -> Ending {
    match code {
        ErrorCode::SlowConsumer => (DisconnectReason::SlowConsumer, None),
        code => (
            DisconnectReason::Closed,
            Some((code, "disconnected by the room".into())),
        ),
    }
}

/// Resolves once the server shuts down (or its state is gone).
pub(crate) async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// A seat in a room, given back when dropped, however the session ends
/// (a panic included), so no ghost stays behind.
pub(crate) struct Seated {
    room: RoomHandle,
    id: PlayerId,
}

impl Seated {
    pub(crate) fn room(&self) -> &RoomHandle {
        &self.room
    }

    pub(crate) fn id(&self) -> PlayerId {
        self.id
    }
}

impl Drop for Seated {
    fn drop(&mut self) {
        self.room.leave(self.id);
    }
}

/// One client's conversation with the server.
pub(crate) trait Conversation {
    /// The server's shared state.
    fn state(&self) -> &AppState;

    /// The session's rate limit and error budget.
    fn gate(&mut self) -> &mut Gate;

    /// The next message, decoded (after [`Conversation::limited`]).
    async fn read(&mut self) -> Read;

    /// Sends a text message reliably, without waiting.
    fn send_text(&self, text: &str) -> Result<(), SendError>;

    /// Sends an `error` and ends the connection, waiting at most a second.
    async fn close(&mut self, code: ErrorCode, message: &str);

    /// Counts a message against the rate limit; `Some` if it is over and
    /// must be dropped (told once per window).
    fn limited(&mut self) -> Option<Read> {
        match self.gate().admit() {
            Admit::Read => None,
            Admit::Refuse(e) => Some(Read::Refused(e)),
            Admit::Drop => {
                self.state().metrics.rejected(ErrorCode::RateLimited);
                Some(Read::Nothing)
            }
        }
    }

    /// Reads until `hello`; everything else gets `not_joined`.
    async fn wait_for_hello(&mut self) -> Result<Hello, DisconnectReason> {
        loop {
            let error = match self.read().await {
                Read::Message(ClientMessage::Hello {
                    name,
                    room,
                    encoding,
                    protocol,
                }) => return Ok((name, room, encoding, protocol)),
                Read::Message(_) => ProtocolError::new(ErrorCode::NotJoined, "send hello first"),
                Read::Refused(e)
                    if matches!(e.code, ErrorCode::BadProtocol | ErrorCode::BadName) =>
                {
                    self.state().metrics.rejected(e.code);
                    self.close(e.code, &e.message).await;
                    return Err(DisconnectReason::Refused);
                }
                Read::Refused(e) => e,
                Read::Nothing => continue,
                Read::Ended(reason) => return Err(reason),
            };
            if let Err((reason, farewell)) = self.refuse(&error) {
                if let Some((code, message)) = farewell {
                    self.close(code, &message).await;
                }
                return Err(reason);
            }
        }
    }

    /// Waits for `hello` (for at most the hello timeout; a shutdown meanwhile
    /// is told why) and seats the client, its frames going to `sink`; or
    /// why the session ends, the client told.
    async fn seat(&mut self, address: IpAddr, sink: Sink) -> Result<Seated, DisconnectReason> {
        let hello_timeout = self.state().config.limits.hello_timeout;
        let mut shutdown = self.state().shutdown.clone();
        let hello = tokio::select! {
            hello = timeout(hello_timeout, self.wait_for_hello()) => hello,
            () = stopped(&mut shutdown) => {
                self.close(ErrorCode::ShuttingDown, SHUTTING_DOWN).await;
                return Err(DisconnectReason::Shutdown);
            }
        };
        let (name, room, encoding, protocol) = match hello {
            Ok(Ok(hello)) => hello,
            Ok(Err(reason)) => return Err(reason),
            Err(_) => {
                self.state().metrics.rejected(ErrorCode::HelloTimeout);
                self.close(ErrorCode::HelloTimeout, "no hello in time")
                    .await;
                return Err(DisconnectReason::HelloTimeout);
            }
        };
        let id = PlayerId(self.state().next_player.fetch_add(1, Ordering::Relaxed));
        let joiner = Joiner {
            id,
            name: &name,
            room: room.as_deref(),
            encoding,
            protocol,
            address,
        };
        let joined = self.state().rooms.join(&joiner, sink);
        match joined {
            Ok(room) => Ok(Seated { room, id }),
            Err(e) => {
                self.state().metrics.rejected(e.code);
                self.close(e.code, &e.message).await;
                Err(DisconnectReason::Refused)
            }
        }
    }

    /// Ends a seated session: out of the room first (no snapshot may follow
    /// the farewell), then the farewell if there is one; why it ended.
    async fn finish(&mut self, seat: Seated, (reason, farewell): Ending) -> DisconnectReason {
        drop(seat);
        if let Some((code, message)) = farewell {
            self.close(code, &message).await;
        }
        reason
    }

    /// Acts on one read of a joined session; `Some` when it must end.
    fn on_read(&mut self, read: Read, room: &RoomHandle, id: PlayerId) -> Option<Ending> {
        let error = match read {
            Read::Message(message) => match room.receive(id, &message) {
                Ok(_) => return None,
                Err(e) => e,
            },
            Read::Refused(e) => e,
            Read::Nothing => return None,
            Read::Ended(reason) => return Some((reason, None)),
        };
        self.refuse(&error).err()
    }

    /// Counts a refused message and answers it with its error; `Err` with
    /// the ending once the error budget is spent or the client is gone.
    fn refuse(&mut self, error: &ProtocolError) -> Result<(), Ending> {
        self.state().metrics.rejected(error.code);
        if self.gate().spend(error.code) {
            return Err((
                DisconnectReason::TooManyErrors,
                Some((ErrorCode::TooManyErrors, "too many bad messages".into())),
            ));
        }
        let text = encode(&error.to_message());
        match self.send_text(&text) {
            Ok(()) => {
                self.state().metrics.sent(text.len());
                Ok(())
            }
            Err(SendError::Slow) => Err((DisconnectReason::SlowConsumer, None)),
            Err(SendError::Closed) => Err((DisconnectReason::Closed, None)),
        }
    }
}
