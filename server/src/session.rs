//! One client's conversation with the server, whatever carries the bytes:
//! `hello` (within one deadline, told of a shutdown meanwhile), a seat,
//! one run loop that hands decoded messages to the room, and the farewell.
//!
//! A transport implements [`Transport`] (read the next frame, close with a
//! code, end) and [`Peer`] (the [`Outbound`] the room writes to, and the
//! verdict when the room drops the client or the connection fails);
//! everything else is here, once: every frame passes the session's [`Gate`]
//! first (a flood costs no parsing), then core's [`decode_client_frame`]
//! (the size check before any parsing), which never panics. A refused
//! message gets an `error` with its code, is counted, and changes nothing
//! else; too many errors end the session (`too_many_errors`). A session
//! only ever names its own player: the id comes from the registry, never
//! from the client.

pub mod gate;
#[cfg(test)]
mod tests;

use std::future::poll_fn;
use std::net::IpAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use skirmish_core::{control, PlayerId, ProtocolError};
use skirmish_core::{decode_client_frame_of, Encoding, ErrorCode, Frame};
use tokio::time::timeout;

use skirmish_core::{ClientMessage, Networked};

use crate::app::AppState;
use crate::metrics::DisconnectReason;
use crate::rooms::{Hosted, Joiner, Outbound, RoomHandle, Rooms, SendError};
use gate::{Admit, Gate};

/// How long a farewell (an `error` and the transport's close) may take,
/// and how long what is still queued may take to leave at the end.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

/// What a transport read from its client.
#[derive(Debug)]
pub enum Raw<'a> {
    /// A message: its bytes, and whether it came as text.
    Data {
        /// Sent as text (JSON) rather than binary.
        text: bool,
        /// The message's bytes, not yet checked in any way.
        payload: &'a [u8],
    },
    /// A transport control frame (a WebSocket ping): counted against the
    /// rate limit, otherwise ignored.
    Control,
    /// The connection ended.
    Ended(DisconnectReason),
}

/// What the session needs from whatever carries its bytes.
pub trait Transport {
    /// What the room writes this client's frames to.
    type Peer: Peer + 'static;

    /// The peer, shared with the room.
    fn peer(&self) -> Arc<Self::Peer>;

    /// The next frame from the client.
    async fn next(&mut self) -> Raw<'_>;

    /// Ends the connection after what is queued (the farewell `error`
    /// included), closing with `code`; the session bounds how long it takes.
    async fn close(&mut self, code: ErrorCode);

    /// The session is over: sends what is still queued (such as an answer
    /// to the client's own close) and lets go of the connection; the
    /// session bounds how long it takes.
    async fn end(&mut self);
}

/// The outbound side of a connection, as its session watches it.
pub trait Peer: Outbound {
    /// Ready with the room's verdict when it dropped the client, or with why
    /// the connection failed; may do the transport's own pending writes
    /// meanwhile. Polled for as long as the session runs.
    fn poll_verdict(&self, cx: &mut Context<'_>) -> Poll<Result<ErrorCode, SendError>>;
}

/// Serves one client of `rooms`' game over `transport` to its end, and
/// counts how it ended.
pub async fn serve<G: Hosted, T: Transport>(
    state: &AppState,
    rooms: &Arc<Rooms<G>>,
    transport: T,
    address: IpAddr,
) {
    let _running = state.shutdown.session();
    let _counted = Connected::new(state);
    let mut session = Session {
        state,
        rooms,
        gate: Gate::for_limits(&state.config.limits),
        transport,
        frame: None,
        binary: false,
        read_binary: false,
    };
    let reason = session.run(address).await;
    let _ = timeout(CLOSE_TIMEOUT, session.transport.end()).await;
    tracing::debug!(?reason, "session ended");
    state.metrics.disconnected(reason);
}

/// What one read from the client gave, once gated and decoded.
#[derive(Debug)]
enum Read<G: Hosted> {
    /// A well-formed message.
    Message(ClientMessage<<G as Networked>::Wire>),
    /// A refused message: answer with the error.
    Refused(ProtocolError),
    /// Nothing to act on (a control frame, or a rate-limited message).
    Nothing,
    /// The connection ended.
    Ended(DisconnectReason),
}

/// How a session ends: why, and what to tell the client.
type Ending = (DisconnectReason, Option<(ErrorCode, String)>);

/// What a client is told when the server shuts down.
const SHUTTING_DOWN: &str = "the server is shutting down";

struct Session<'a, G: Hosted, T> {
    state: &'a AppState,
    /// The rooms of the client's game.
    rooms: &'a Arc<Rooms<G>>,
    gate: Gate,
    transport: T,
    /// Once seated in a room that records itself: the last frame read as
    /// it arrived (text or not, its bytes), for the recording to keep.
    frame: Option<(bool, Vec<u8>)>,
    /// Whether the `hello` that seated the client was binary: its control
    /// messages and errors go in binary too. Chosen once, by that hello: a
    /// refused hello changes nothing, and so does any frame once seated.
    binary: bool,
    /// Whether the frame last read came binary (which form a `hello`
    /// took).
    read_binary: bool,
}

impl<G: Hosted, T: Transport> Session<'_, G, T> {
    async fn run(&mut self, address: IpAddr) -> DisconnectReason {
        let peer = self.transport.peer();
        let (room, id) = match self.seat(address, peer.clone()).await {
            Ok(seat) => seat,
            Err(reason) => return reason,
        };
        if room.is_recorded() {
            self.frame = Some((true, Vec::new()));
        }
        let seat = Seated { room, id };
        // Made once, polled by reference: no new waiter per wake-up.
        let mut signal = self.state.shutdown.watch();
        let stop = signal.wait();
        tokio::pin!(stop);
        let ending = loop {
            tokio::select! {
                biased;
                () = &mut stop => break shutting_down(),
                verdict = poll_fn(|cx| peer.poll_verdict(cx)) => break match verdict {
                    Ok(code) => kicked(code),
                    Err(SendError::Slow) => (DisconnectReason::SlowConsumer, None),
                    Err(SendError::Closed) => (DisconnectReason::Closed, None),
                },
                read = self.read() => {
                    if let Some(ending) = self.on_read(read, &seat.room, seat.id) {
                        break ending;
                    }
                }
            }
        };
        // Out of the room first: no snapshot may follow the farewell.
        drop(seat);
        let (reason, farewell) = ending;
        if let Some((code, message)) = farewell {
            self.close(code, &message).await;
        }
        reason
    }

    /// The next frame, gated and decoded.
    async fn read(&mut self) -> Read<G> {
        let (text, payload) = match self.transport.next().await {
            Raw::Data { text, payload } => (text, payload),
            Raw::Control => {
                return match self.gate.admit(0) {
                    Admit::Read => Read::Nothing,
                    admit => limited(self.state, admit),
                }
            }
            Raw::Ended(reason) => return Read::Ended(reason),
        };
        self.state.metrics.received(payload.len());
        self.read_binary = !text;
        match self.gate.admit(payload.len()) {
            // A hello of another game is refused by name, first.
            Admit::Read => match decode_client_frame_of::<G>(text, payload) {
                Ok(message) => {
                    if let Some((kind, bytes)) = &mut self.frame {
                        *kind = text;
                        bytes.clear();
                        bytes.extend_from_slice(payload);
                    }
                    Read::Message(message)
                }
                Err(e) => Read::Refused(e),
            },
            admit => limited(self.state, admit),
        }
    }

    /// Waits for `hello` (for at most the hello timeout, the transport's
    /// own opening included; a shutdown meanwhile is told why) and seats
    /// the client, its frames going to `out`; or why the session ends, the
    /// client told.
    async fn seat(
        &mut self,
        address: IpAddr,
        out: Arc<dyn Outbound>,
    ) -> Result<(RoomHandle<G>, PlayerId), DisconnectReason> {
        let state = self.state;
        let hello = tokio::select! {
            hello = timeout(state.config.limits.hello_timeout, self.wait_for_hello()) => hello,
            () = state.shutdown.signalled() => {
                self.close(ErrorCode::ShuttingDown, SHUTTING_DOWN).await;
                return Err(DisconnectReason::Shutdown);
            }
        };
        let (name, room, encoding, protocol) = match hello {
            Ok(Ok(hello)) => {
                // The hello that joins chooses the encoding of control
                // messages for good; a refusal of the join answers in it.
                self.binary = self.read_binary;
                hello
            }
            Ok(Err((reason, farewell))) => {
                if let Some((code, message)) = farewell {
                    self.close(code, &message).await;
                }
                return Err(reason);
            }
            Err(_) => {
                state.metrics.rejected(ErrorCode::HelloTimeout);
                self.close(ErrorCode::HelloTimeout, "no hello in time")
                    .await;
                return Err(DisconnectReason::HelloTimeout);
            }
        };
        let joiner = Joiner {
            name: &name,
            room: room.as_deref(),
            encoding,
            protocol,
            address,
            binary_control: self.binary,
        };
        match self.rooms.join(&joiner, out) {
            Ok(seat) => Ok(seat),
            Err(e) => {
                state.metrics.rejected(e.code);
                self.close(e.code, &e.message).await;
                Err(DisconnectReason::Refused)
            }
        }
    }

    /// Reads until `hello`; everything else gets `not_joined`. A refusal
    /// that ends the session is returned with its farewell, not said here:
    /// the caller says it outside the hello deadline and the shutdown
    /// race, so that neither can cut it short and count a second ending.
    async fn wait_for_hello(&mut self) -> Result<Hello, Ending> {
        loop {
            let error = match self.read().await {
                Read::Message(ClientMessage::Hello {
                    name,
                    room,
                    encoding,
                    protocol,
                    ..
                }) => return Ok((name, room, encoding, protocol)),
                Read::Message(_) => ProtocolError::new(ErrorCode::NotJoined, "send hello first"),
                Read::Refused(e)
                    if matches!(
                        e.code,
                        ErrorCode::BadProtocol | ErrorCode::BadName | ErrorCode::WrongGame
                    ) =>
                {
                    // The session ends with the answer to this hello, in
                    // the hello's own form (a binary client may read no
                    // JSON at all).
                    self.binary = self.read_binary;
                    self.state.metrics.rejected(e.code);
                    return Err((DisconnectReason::Refused, Some((e.code, e.message))));
                }
                Read::Refused(e) => e,
                Read::Nothing => continue,
                Read::Ended(reason) => return Err((reason, None)),
            };
            self.refuse(&error)?;
        }
    }

    /// Acts on one read of a seated session; `Some` when it must end.
    fn on_read(&mut self, read: Read<G>, room: &RoomHandle<G>, id: PlayerId) -> Option<Ending> {
        let error = match read {
            Read::Message(message) => match room.receive(
                id,
                &message,
                self.frame
                    .as_ref()
                    .map(|(text, bytes)| (*text, bytes.as_slice())),
            ) {
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
        self.state.metrics.rejected(error.code);
        if self.gate.spend(error.code) {
            return Err((
                DisconnectReason::TooManyErrors,
                Some((ErrorCode::TooManyErrors, "too many bad messages".into())),
            ));
        }
        let (text, bytes) = self.error_frame(error);
        match self.transport.peer().send(text, &bytes, false) {
            Ok(()) => {
                self.state.metrics.sent(bytes.len());
                Ok(())
            }
            Err(SendError::Slow) => Err((DisconnectReason::SlowConsumer, None)),
            Err(SendError::Closed) => Err((DisconnectReason::Closed, None)),
        }
    }

    /// Sends an `error` and ends the connection, waiting at most
    /// [`CLOSE_TIMEOUT`] for the client to take it.
    async fn close(&mut self, code: ErrorCode, message: &str) {
        let (text, bytes) = self.error_frame(&ProtocolError::new(code, message));
        if self.transport.peer().send(text, &bytes, false).is_ok() {
            self.state.metrics.sent(bytes.len());
        }
        let _ = timeout(CLOSE_TIMEOUT, self.transport.close(code)).await;
    }

    /// The `error` telling the client about `error`, in the form its
    /// `hello` took: whether it is text, and its bytes.
    fn error_frame(&self, error: &ProtocolError) -> (bool, Vec<u8>) {
        match control::frame_for(self.binary, &error.to_message::<G>()) {
            Frame::Text(text) => (true, text.into_bytes()),
            Frame::Binary(bytes) => (false, bytes),
        }
    }
}

/// What `hello` asked for: a name, a room, an encoding, a protocol.
type Hello = (String, Option<String>, Encoding, u32);

/// The answer to a message over a rate limit (messages or bytes): refused
/// (told at most once a second) or dropped and counted.
fn limited<G: Hosted>(state: &AppState, admit: Admit) -> Read<G> {
    match admit {
        Admit::Refuse(e) => Read::Refused(e),
        Admit::Read | Admit::Drop => {
            state.metrics.rejected(ErrorCode::RateLimited);
            Read::Nothing
        }
    }
}

/// How a session ends when the server shuts down.
fn shutting_down() -> Ending {
    (
        DisconnectReason::Shutdown,
        Some((ErrorCode::ShuttingDown, SHUTTING_DOWN.into())),
    )
}

/// How a session the room dropped ends.
fn kicked(code: ErrorCode) -> Ending {
    match code {
        ErrorCode::SlowConsumer => (DisconnectReason::SlowConsumer, None),
        ErrorCode::ShuttingDown => shutting_down(),
        ErrorCode::RoomFailed => (
            DisconnectReason::RoomFailed,
            Some((
                code,
                "the room failed and was closed; say hello again".into(),
            )),
        ),
        code => (
            DisconnectReason::Closed,
            Some((code, "disconnected by the room".into())),
        ),
    }
}

/// A seat in a room, given back when dropped, however the session ends
/// (a panic included), so no ghost stays behind.
struct Seated<G: Hosted> {
    room: RoomHandle<G>,
    id: PlayerId,
}

impl<G: Hosted> Drop for Seated<G> {
    fn drop(&mut self) {
        self.room.leave(self.id);
    }
}

/// A session counted in `/metrics` until dropped.
struct Connected<'a>(&'a AppState);

impl Connected<'_> {
    fn new(state: &AppState) -> Connected<'_> {
        state.metrics.connections_changed(true);
        Connected(state)
    }
}

impl Drop for Connected<'_> {
    fn drop(&mut self) {
        self.0.metrics.connections_changed(false);
    }
}
