//! One WebSocket connection: `hello`, then a receive loop and a send task.
//!
//! The receive loop decodes every frame with [`decode_client`], which never
//! panics; a refused message gets an `error` with its code, is counted, and
//! changes nothing else. More than [`ERROR_BUDGET`] errors within
//! [`ERROR_WINDOW`] close the connection (`too_many_errors`). Messages beyond
//! `max_messages_per_sec` in one second are dropped and counted
//! (`rate_limited`, told once per second). A connection only ever names its
//! own player: the id comes from the server, never from the client.
//!
//! The send task forwards the bounded outbox the room fills; a send that
//! takes longer than `send_timeout` ends the connection as a slow consumer,
//! and so does a full outbox (the room notices that and kicks the client).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use skirmish_core::{
    decode_client, encode, ClientMessage, Encoding, ErrorCode, PlayerId, ProtocolError,
    ServerMessage,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{timeout, Instant};

use crate::metrics::DisconnectReason;
use crate::rooms::{ClientLink, RoomHandle};
use crate::AppState;

/// Errors tolerated within [`ERROR_WINDOW`] before the connection is closed.
pub const ERROR_BUDGET: u32 = 10;
/// The window of [`ERROR_BUDGET`].
pub const ERROR_WINDOW: Duration = Duration::from_secs(10);
/// How long a closing message may take to send.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(1);

type Sink = SplitSink<WebSocket, Message>;
type Stream = SplitStream<WebSocket>;

/// Serves one upgraded connection to its end, and counts how it ended.
pub async fn serve(socket: WebSocket, state: Arc<AppState>) {
    state.metrics.connections_changed(true);
    let reason = run(socket, &state).await;
    tracing::debug!(?reason, "connection ended");
    state.metrics.disconnected(reason);
    state.metrics.connections_changed(false);
}

/// Counts errors in a sliding window of fixed windows.
struct ErrorBudget {
    window_start: Instant,
    errors: u32,
}

impl ErrorBudget {
    fn new() -> ErrorBudget {
        ErrorBudget {
            window_start: Instant::now(),
            errors: 0,
        }
    }

    /// Records one error; `true` if the budget is spent.
    fn spend(&mut self) -> bool {
        if self.window_start.elapsed() >= ERROR_WINDOW {
            self.window_start = Instant::now();
            self.errors = 0;
        }
        self.errors += 1;
        self.errors > ERROR_BUDGET
    }
}

/// Messages per one-second window.
struct RateLimit {
    window_start: Instant,
    count: u32,
    max: u32,
    told: bool,
}

enum Rate {
    Ok,
    /// Over the limit; `true` the first time in this window.
    Limited(bool),
}

impl RateLimit {
    fn new(max: u32) -> RateLimit {
        RateLimit {
            window_start: Instant::now(),
            count: 0,
            max,
            told: false,
        }
    }

    fn check(&mut self) -> Rate {
        if self.window_start.elapsed() >= Duration::from_secs(1) {
            self.window_start = Instant::now();
            self.count = 0;
            self.told = false;
        }
        self.count += 1;
        if self.count <= self.max {
            Rate::Ok
        } else {
            let first = !self.told;
            self.told = true;
            Rate::Limited(first)
        }
    }
}

async fn run(socket: WebSocket, state: &AppState) -> DisconnectReason {
    let (mut sink, mut stream) = socket.split();
    let mut budget = ErrorBudget::new();
    let mut shutdown = state.shutdown.clone();

    let hello = tokio::select! {
        hello = timeout(state.config.hello_timeout, wait_for_hello(&mut sink, &mut stream, state, &mut budget)) => hello,
        () = stopped(&mut shutdown) => {
            close(&mut sink, ErrorCode::ShuttingDown, "the server is shutting down").await;
            return DisconnectReason::Shutdown;
        }
    };
    let (name, wanted_room, encoding) = match hello {
        Ok(Ok(hello)) => hello,
        Ok(Err(reason)) => return reason,
        Err(_) => {
            state.metrics.rejected(ErrorCode::HelloTimeout);
            close(&mut sink, ErrorCode::HelloTimeout, "no hello in time").await;
            return DisconnectReason::HelloTimeout;
        }
    };
    let room = match state.rooms.reserve(wanted_room.as_deref()) {
        Ok(room) => room,
        Err(e) => {
            state.metrics.rejected(e.code);
            close(&mut sink, e.code, &e.message).await;
            return DisconnectReason::Refused;
        }
    };
    let id = PlayerId(state.next_player.fetch_add(1, Ordering::Relaxed));
    let (outbox, outbox_rx) = mpsc::channel(state.config.outbox_capacity);
    let (kick, mut kicked) = oneshot::channel();
    let link = ClientLink {
        outbox: outbox.clone(),
        compact: encoding == Encoding::Compact,
        kick,
    };
    if room.join(id, name, link).await.is_err() {
        close(&mut sink, ErrorCode::ServerFull, "the room closed").await;
        return DisconnectReason::Refused;
    }

    let (closer, close_rx) = oneshot::channel();
    let mut sender = tokio::spawn(send_loop(
        sink,
        outbox_rx,
        close_rx,
        state.metrics.clone(),
        state.config.send_timeout,
    ));
    let session = Session {
        state,
        room: &room,
        id,
        outbox,
        budget,
        rate: RateLimit::new(state.config.max_messages_per_sec),
    };
    let (reason, farewell) = tokio::select! {
        ended = session.receive(&mut stream) => ended,
        code = &mut kicked => match code {
            Ok(ErrorCode::SlowConsumer) | Err(_) => (DisconnectReason::SlowConsumer, None),
            Ok(code) => (DisconnectReason::Closed, Some((code, "disconnected by the room".to_string()))),
        },
        () = stopped(&mut shutdown) => (
            DisconnectReason::Shutdown,
            Some((ErrorCode::ShuttingDown, "the server is shutting down".to_string())),
        ),
        sent = &mut sender => (sent.unwrap_or(DisconnectReason::Closed), None),
    };
    room.leave(id).await;
    if sender.is_finished() {
        return reason;
    }
    if let Some(farewell) = farewell {
        let _ = closer.send(farewell);
        let _ = timeout(CLOSE_TIMEOUT * 2, &mut sender).await;
    }
    sender.abort();
    reason
}

/// Resolves once the server shuts down (or its state is gone).
async fn stopped(shutdown: &mut watch::Receiver<bool>) {
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// Reads until `hello`; answers everything else with `not_joined`.
async fn wait_for_hello(
    sink: &mut Sink,
    stream: &mut Stream,
    state: &AppState,
    budget: &mut ErrorBudget,
) -> Result<(String, Option<String>, Encoding), DisconnectReason> {
    loop {
        let text = match stream.next().await {
            Some(Ok(Message::Text(text))) => text,
            Some(Ok(Message::Binary(bytes))) => {
                state.metrics.received(bytes.len());
                let e =
                    ProtocolError::new(ErrorCode::BinaryFrame, "the protocol is JSON text frames");
                if refuse_directly(sink, state, budget, &e).await {
                    return Err(DisconnectReason::TooManyErrors);
                }
                continue;
            }
            Some(Ok(Message::Close(_))) | None => return Err(DisconnectReason::Closed),
            Some(Ok(_)) => continue,
            Some(Err(_)) => return Err(DisconnectReason::ProtocolError),
        };
        state.metrics.received(text.len());
        let error = match decode_client(&text) {
            Ok(ClientMessage::Hello {
                name,
                room,
                encoding,
                ..
            }) => return Ok((name, room, encoding)),
            Ok(_) => ProtocolError::new(ErrorCode::NotJoined, "send hello first"),
            Err(e) if matches!(e.code, ErrorCode::BadProtocol | ErrorCode::BadName) => {
                state.metrics.rejected(e.code);
                close(sink, e.code, &e.message).await;
                return Err(DisconnectReason::Refused);
            }
            Err(e) => e,
        };
        if refuse_directly(sink, state, budget, &error).await {
            return Err(DisconnectReason::TooManyErrors);
        }
    }
}

/// Counts and answers an error before the send task exists; `true` if the
/// connection was closed for too many errors.
async fn refuse_directly(
    sink: &mut Sink,
    state: &AppState,
    budget: &mut ErrorBudget,
    error: &ProtocolError,
) -> bool {
    state.metrics.rejected(error.code);
    if budget.spend() {
        close(sink, ErrorCode::TooManyErrors, "too many bad messages").await;
        return true;
    }
    let text = encode(&error.to_message());
    state.metrics.sent(text.len());
    let _ = timeout(CLOSE_TIMEOUT, sink.send(Message::Text(text.into()))).await;
    false
}

/// Sends an `error` and a close frame, waiting at most a second.
async fn close(sink: &mut Sink, code: ErrorCode, message: &str) {
    let text = encode(&ProtocolError::new(code, message).to_message());
    let frame = CloseFrame {
        code: close_code(code),
        reason: Utf8Bytes::from(code.as_str()),
    };
    let _ = timeout(CLOSE_TIMEOUT, async {
        sink.send(Message::Text(text.into())).await?;
        sink.send(Message::Close(Some(frame))).await
    })
    .await;
}

/// The WebSocket close code for an error: 1001 when going away, 1008
/// (policy violation) otherwise.
fn close_code(code: ErrorCode) -> u16 {
    match code {
        ErrorCode::ShuttingDown => 1001,
        ErrorCode::ServerFull => 1013,
        _ => 1008,
    }
}

/// The joined half of a connection.
struct Session<'a> {
    state: &'a AppState,
    room: &'a RoomHandle,
    id: PlayerId,
    outbox: mpsc::Sender<Message>,
    budget: ErrorBudget,
    rate: RateLimit,
}

impl Session<'_> {
    /// Reads until the connection ends; returns why, and what to tell the
    /// client on the way out.
    async fn receive(
        mut self,
        stream: &mut Stream,
    ) -> (DisconnectReason, Option<(ErrorCode, String)>) {
        loop {
            let frame = match stream.next().await {
                Some(Ok(frame @ (Message::Text(_) | Message::Binary(_)))) => frame,
                Some(Ok(Message::Close(_))) | None => return (DisconnectReason::Closed, None),
                Some(Ok(_)) => continue,
                Some(Err(_)) => return (DisconnectReason::ProtocolError, None),
            };
            let len = match &frame {
                Message::Text(text) => text.len(),
                Message::Binary(bytes) => bytes.len(),
                _ => 0,
            };
            self.state.metrics.received(len);
            // The rate limit comes before decoding, so a flood costs no parsing.
            if let Rate::Limited(first) = self.rate.check() {
                self.state.metrics.rejected(ErrorCode::RateLimited);
                if first {
                    let limit = self.rate.max;
                    self.tell(&ProtocolError::new(
                        ErrorCode::RateLimited,
                        format!("more than {limit} messages per second; dropped"),
                    ));
                }
                continue;
            }
            let decoded = match &frame {
                Message::Text(text) => decode_client(text),
                _ => Err(ProtocolError::new(
                    ErrorCode::BinaryFrame,
                    "the protocol is JSON text frames",
                )),
            };
            let error = match decoded {
                Ok(ClientMessage::Input { inputs }) => {
                    let n = inputs.len() as u64;
                    if !self.room.inputs(self.id, inputs) {
                        self.state.metrics.dropped_inputs(n);
                    }
                    continue;
                }
                Ok(ClientMessage::Ping { id }) => {
                    let pong = ServerMessage::Pong {
                        id,
                        server_tick: self.room.tick(),
                    };
                    let _ = self.outbox.try_send(Message::Text(encode(&pong).into()));
                    continue;
                }
                Ok(ClientMessage::Hello { .. }) => {
                    ProtocolError::new(ErrorCode::AlreadyJoined, "hello was already accepted")
                }
                Err(e) => e,
            };
            self.state.metrics.rejected(error.code);
            if self.budget.spend() {
                return (
                    DisconnectReason::TooManyErrors,
                    Some((
                        ErrorCode::TooManyErrors,
                        "too many bad messages".to_string(),
                    )),
                );
            }
            self.tell(&error);
        }
    }

    fn tell(&self, error: &ProtocolError) {
        let _ = self
            .outbox
            .try_send(Message::Text(encode(&error.to_message()).into()));
    }
}

/// Forwards the outbox to the socket until either ends, or until told to
/// close with a farewell.
async fn send_loop(
    mut sink: Sink,
    mut outbox: mpsc::Receiver<Message>,
    mut farewell: oneshot::Receiver<(ErrorCode, String)>,
    metrics: Arc<crate::metrics::Metrics>,
    send_timeout: Duration,
) -> DisconnectReason {
    loop {
        tokio::select! {
            biased;
            message = &mut farewell => {
                if let Ok((code, message)) = message {
                    close(&mut sink, code, &message).await;
                }
                return DisconnectReason::Closed;
            }
            next = outbox.recv() => {
                let Some(message) = next else {
                    return DisconnectReason::Closed;
                };
                let len = match &message {
                    Message::Text(text) => text.len(),
                    Message::Binary(bytes) => bytes.len(),
                    _ => 0,
                };
                match timeout(send_timeout, sink.send(message)).await {
                    Ok(Ok(())) => metrics.sent(len),
                    Ok(Err(_)) => return DisconnectReason::Closed,
                    Err(_) => return DisconnectReason::SlowConsumer,
                }
            }
        }
    }
}
