//! The conversation over a scripted fake transport: what a session answers,
//! how it ends and what it counts, without a socket.

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use skirmish_core::MAX_FRAME_BYTES;
use skirmish_core::{control, decode_server, ClientMessage, ErrorCode, GameId, Networked};

use super::{serve, Peer, Raw, Transport};
use crate::app::AppState;
use crate::config::ServerConfig;
use crate::limits::AddressBook;
use crate::metrics::DisconnectReason;
use crate::metrics::Metrics;
use crate::rooms::{Common, Games, Rooms};
use crate::rooms::{Outbound, SendError};

/// The game these tests play: the tank game (the shell names none).
type Tested = skirmish_tanks::Tanks;
// Matched, never built here: only the room builds what clients are told.
/// What the server of [`Tested`] sends.
type Told = skirmish_core::ServerMessage<Tested>;
/// The same, by its own name.
type ServerMessage = Told;

/// One step of what the fake client does.
enum Step {
    /// Sends a text frame.
    Text(String),
    /// Sends a binary frame.
    Binary(Vec<u8>),
    /// Sends a WebSocket ping.
    Ping,
    /// Closes the connection.
    End,
    /// Waits this long before the next step.
    Wait(Duration),
    /// From now on never answers a close: it takes the whole
    /// [`CLOSE_TIMEOUT`](super::CLOSE_TIMEOUT).
    DeafToClose,
}

/// What the fake's peer saw.
#[derive(Debug, Default)]
struct Seen {
    /// Messages sent to the client (text, and binary control messages),
    /// decoded.
    told: Vec<ServerMessage>,
    /// Whether each of `told` came as text.
    text: Vec<bool>,
    kicked: Option<ErrorCode>,
    waker: Option<Waker>,
    /// Refuse every send as slow.
    slow: bool,
}

#[derive(Debug, Default)]
struct FakePeer(Mutex<Seen>);

impl Outbound for FakePeer {
    fn send(&self, text: bool, payload: &[u8], _droppable: bool) -> Result<(), SendError> {
        let mut seen = self.0.lock().expect("not poisoned");
        if seen.slow {
            return Err(SendError::Slow);
        }
        if text {
            let text = std::str::from_utf8(payload).expect("the server sends UTF-8 text");
            let message = decode_server(text).expect("the server sends what it documents");
            seen.told.push(message);
            seen.text.push(true);
        } else if control::is_server_control(payload) {
            let message = control::decode_server::<Tested>(payload)
                .expect("the server sends what it documents");
            seen.told.push(message);
            seen.text.push(false);
        }
        Ok(())
    }

    fn kick(&self, code: ErrorCode) {
        let mut seen = self.0.lock().expect("not poisoned");
        seen.kicked = Some(code);
        if let Some(waker) = seen.waker.take() {
            waker.wake();
        }
    }
}

impl Peer for FakePeer {
    fn poll_verdict(&self, cx: &mut Context<'_>) -> Poll<Result<ErrorCode, SendError>> {
        let mut seen = self.0.lock().expect("not poisoned");
        if let Some(code) = seen.kicked {
            return Poll::Ready(Ok(code));
        }
        seen.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// A transport that plays a script, then waits forever.
struct Fake {
    script: VecDeque<Step>,
    last: Vec<u8>,
    peer: Arc<FakePeer>,
    closed_with: Arc<Mutex<Option<ErrorCode>>>,
    deaf: bool,
}

impl Transport for Fake {
    type Peer = FakePeer;

    fn peer(&self) -> Arc<FakePeer> {
        self.peer.clone()
    }

    async fn next(&mut self) -> Raw<'_> {
        let step = loop {
            match self.script.pop_front() {
                None => return std::future::pending().await,
                Some(Step::Wait(time)) => tokio::time::sleep(time).await,
                Some(Step::DeafToClose) => self.deaf = true,
                Some(step) => break step,
            }
        };
        let text = match step {
            Step::Text(text) => {
                self.last = text.into_bytes();
                true
            }
            Step::Binary(bytes) => {
                self.last = bytes;
                false
            }
            Step::Ping => return Raw::Control,
            Step::End => return Raw::Ended(DisconnectReason::Closed),
            Step::Wait(_) | Step::DeafToClose => unreachable!("taken above"),
        };
        Raw::Data {
            text,
            payload: &self.last,
        }
    }

    async fn close(&mut self, code: ErrorCode) {
        self.closed_with
            .lock()
            .expect("not poisoned")
            .get_or_insert(code);
        if self.deaf {
            tokio::time::sleep(super::CLOSE_TIMEOUT).await;
        }
    }

    async fn end(&mut self) {}
}

/// What a finished session left behind.
struct Outcome {
    told: Vec<ServerMessage>,
    /// Whether each of `told` came as text.
    text: Vec<bool>,
    closed_with: Option<ErrorCode>,
    state: Arc<AppState>,
}

impl Outcome {
    fn errors(&self) -> Vec<ErrorCode> {
        self.told
            .iter()
            .filter_map(|m| match m {
                ServerMessage::Error { code, .. } => Some(*code),
                _ => None,
            })
            .collect()
    }

    fn ended(&self, reason: DisconnectReason) -> bool {
        self.state.metrics.disconnect_count(reason) == 1
    }
}

fn config() -> ServerConfig {
    let mut config = ServerConfig::default();
    config.limits.hello_timeout = Duration::from_secs(5);
    config.limits.max_messages_per_sec = 20;
    config
}

const HELLO: &str = r#"{"type":"hello","name":"ann","protocol":2}"#;
const INPUT: &str = r#"{"type":"input","inputs":[{"tick":1,"turn":0,"throttle":1}]}"#;

/// Runs a session over `script` to its end (a script that does not end
/// must be ended by `then`, given the state once the session runs).
async fn play(
    config: ServerConfig,
    script: Vec<Step>,
    slow: bool,
    then: impl FnOnce(Arc<AppState>, Arc<FakePeer>),
) -> Outcome {
    let metrics = Arc::new(Metrics::default());
    let book = AddressBook::new(config.limits.clone());
    let common = Common::new(&config.rooms, metrics.clone(), book.clone());
    let game = skirmish_tanks::TankSettings::default();
    let rooms = Rooms::<Tested>::new(config.rooms.clone(), game, "", &common);
    let state = AppState::new(config, Games::new(vec![rooms.clone()]), metrics, book);
    let peer = Arc::new(FakePeer::default());
    peer.0.lock().expect("not poisoned").slow = slow;
    let closed_with = Arc::new(Mutex::new(None));
    let fake = Fake {
        script: script.into(),
        last: Vec::new(),
        peer: peer.clone(),
        closed_with: closed_with.clone(),
        deaf: false,
    };
    let address = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let session = {
        let state = state.clone();
        tokio::spawn(async move { serve(&state, &rooms, fake, address).await })
    };
    tokio::task::yield_now().await;
    then(state.clone(), peer.clone());
    session.await.expect("the session does not panic");
    let (told, text) = {
        let mut seen = peer.0.lock().expect("not poisoned");
        (
            std::mem::take(&mut seen.told),
            std::mem::take(&mut seen.text),
        )
    };
    let closed_with = *closed_with.lock().expect("not poisoned");
    Outcome {
        told,
        text,
        closed_with,
        state,
    }
}

#[tokio::test(start_paused = true)]
async fn a_player_joins_plays_and_leaves_and_its_seat_is_given_back() {
    let script = vec![
        Step::Text(HELLO.into()),
        Step::Text(INPUT.into()),
        Step::End,
    ];
    let out = play(config(), script, false, |_, _| {}).await;
    assert!(matches!(out.told.first(), Some(Told::Welcome { .. })));
    assert!(out.errors().is_empty(), "{:?}", out.errors());
    assert!(out.ended(DisconnectReason::Closed));
    assert_eq!(out.closed_with, None, "the client left: no farewell");
    assert_eq!(out.state.metrics.players(), 0, "the seat was given back");
    assert_eq!(out.state.shutdown.sessions(), 0);
}

#[tokio::test(start_paused = true)]
async fn before_hello_everything_is_not_joined_and_errors_run_out_the_budget() {
    let script = (0..=crate::session::gate::ERROR_BUDGET)
        .map(|_| Step::Text(INPUT.into()))
        .collect();
    let out = play(config(), script, false, |_, _| {}).await;
    let errors = out.errors();
    assert!(errors[..errors.len() - 1]
        .iter()
        .all(|c| *c == ErrorCode::NotJoined));
    assert_eq!(errors.last(), Some(&ErrorCode::TooManyErrors));
    assert_eq!(out.closed_with, Some(ErrorCode::TooManyErrors));
    assert!(out.ended(DisconnectReason::TooManyErrors));
}

#[tokio::test(start_paused = true)]
async fn no_hello_in_time_is_told_and_counted() {
    let out = play(config(), vec![Step::Ping], false, |_, _| {}).await;
    assert_eq!(out.errors(), [ErrorCode::HelloTimeout]);
    assert_eq!(out.closed_with, Some(ErrorCode::HelloTimeout));
    assert!(out.ended(DisconnectReason::HelloTimeout));
}

/// A refusal of `hello` just before the deadline, to a client that never
/// answers the close, ends as that refusal: the deadline does not cut the
/// farewell short and count a hello timeout on top.
#[tokio::test(start_paused = true)]
async fn a_hello_refused_at_the_deadline_is_counted_once() {
    let bad = r#"{"type":"hello","name":"ann","protocol":99}"#;
    let script = vec![
        Step::DeafToClose,
        Step::Wait(Duration::from_millis(4_800)),
        Step::Text(bad.into()),
    ];
    let out = play(config(), script, false, |_, _| {}).await;
    assert_eq!(out.errors(), [ErrorCode::BadProtocol]);
    assert_eq!(out.closed_with, Some(ErrorCode::BadProtocol));
    assert!(out.ended(DisconnectReason::Refused));
    assert_eq!(
        out.state
            .metrics
            .disconnect_count(DisconnectReason::HelloTimeout),
        0
    );
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_before_hello_is_told() {
    let out = play(config(), Vec::new(), false, |state, _| {
        state.shutdown.signal();
    })
    .await;
    assert_eq!(out.errors(), [ErrorCode::ShuttingDown]);
    assert!(out.ended(DisconnectReason::Shutdown));
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_after_hello_is_told_after_leaving_the_room() {
    let out = play(
        config(),
        vec![Step::Text(HELLO.into())],
        false,
        |state, _| {
            state.shutdown.signal();
        },
    )
    .await;
    assert_eq!(out.errors(), [ErrorCode::ShuttingDown]);
    assert_eq!(out.closed_with, Some(ErrorCode::ShuttingDown));
    assert!(out.ended(DisconnectReason::Shutdown));
    assert_eq!(out.state.metrics.players(), 0);
}

#[tokio::test(start_paused = true)]
async fn the_rooms_verdict_ends_the_session() {
    let out = play(
        config(),
        vec![Step::Text(HELLO.into())],
        false,
        |_, peer| {
            peer.kick(ErrorCode::SlowConsumer);
        },
    )
    .await;
    assert!(out.ended(DisconnectReason::SlowConsumer));
    assert_eq!(out.closed_with, None, "a slow consumer gets no farewell");
}

#[tokio::test(start_paused = true)]
async fn oversized_binary_and_flooding_messages_get_their_codes() {
    let mut script = vec![
        Step::Text(HELLO.into()),
        Step::Text(format!("{{\"pad\":\"{}\"}}", "x".repeat(MAX_FRAME_BYTES))),
        Step::Binary(vec![1, 2, 3]),
    ];
    // The rate limit: 20 a second; the hello and the two above count.
    script.extend((0..30).map(|_| Step::Ping));
    script.push(Step::End);
    let out = play(config(), script, false, |_, _| {}).await;
    assert_eq!(
        out.errors(),
        [
            ErrorCode::TooLarge,
            ErrorCode::BinaryFrame,
            ErrorCode::RateLimited
        ]
    );
    let rate_limited = out.state.metrics.rejected_count(ErrorCode::RateLimited);
    assert_eq!(
        rate_limited,
        30 - 17,
        "told once, the rest dropped: all counted"
    );
    assert!(out.ended(DisconnectReason::Closed));
}

#[tokio::test(start_paused = true)]
async fn a_client_too_slow_for_its_welcome_is_dropped() {
    let out = play(config(), vec![Step::Text(HELLO.into())], true, |_, _| {}).await;
    // Its errors cannot be sent either: it simply goes.
    assert!(
        out.ended(DisconnectReason::Refused) || out.ended(DisconnectReason::SlowConsumer),
        "a client that takes nothing does not stay"
    );
    assert_eq!(out.state.metrics.players(), 0);
}

/// A binary `hello` from a client of this server's game, named `name`.
fn binary_hello(name: &str) -> Vec<u8> {
    control::encode_client::<<Tested as Networked>::Wire>(&ClientMessage::Hello {
        name: name.into(),
        protocol: 2,
        room: None,
        encoding: skirmish_core::Encoding::Compact,
        game: Some(GameId::of::<Tested>()),
    })
    .expect("a hello has a binary form")
}

/// Regression: a refused binary frame starting with `H` switched the
/// session to binary, so a text `hello` after it got a binary `welcome`.
#[tokio::test(start_paused = true)]
async fn a_refused_binary_hello_changes_nothing_and_a_text_hello_gets_json() {
    let mut trailing = binary_hello("ann");
    trailing.push(0);
    let script = vec![
        Step::Binary(vec![control::HELLO]),
        Step::Binary(trailing),
        Step::Text(HELLO.into()),
        Step::End,
    ];
    let out = play(config(), script, false, |_, _| {}).await;
    assert_eq!(out.errors(), [ErrorCode::BadMessage, ErrorCode::BadMessage]);
    assert!(
        matches!(out.told[2], Told::Welcome { .. }),
        "{:?}",
        out.told
    );
    assert!(
        out.text.iter().all(|&text| text),
        "all JSON: {:?}",
        out.text
    );
}

/// Regression: a binary `H` after a text join turned `already_joined`
/// and every later error binary.
#[tokio::test(start_paused = true)]
async fn a_binary_hello_after_a_text_join_changes_nothing() {
    let script = vec![
        Step::Text(HELLO.into()),
        Step::Binary(binary_hello("ann")),
        Step::Binary(vec![control::HELLO]),
        Step::Text("garbage".into()),
        Step::End,
    ];
    let out = play(config(), script, false, |_, _| {}).await;
    assert!(
        matches!(out.told[0], Told::Welcome { .. }),
        "{:?}",
        out.told
    );
    assert_eq!(
        out.errors(),
        [
            ErrorCode::AlreadyJoined,
            ErrorCode::BadMessage,
            ErrorCode::BadMessage
        ]
    );
    assert!(
        out.text.iter().all(|&text| text),
        "all JSON: {:?}",
        out.text
    );
}

/// A binary `hello` is answered in binary, seated or refused, and a seated
/// binary client stays binary whatever it sends after.
#[tokio::test(start_paused = true)]
async fn a_binary_hello_is_answered_in_binary_joined_or_refused() {
    let script = vec![
        Step::Binary(binary_hello("ann")),
        Step::Text(HELLO.into()),
        Step::Text("garbage".into()),
        Step::End,
    ];
    let out = play(config(), script, false, |_, _| {}).await;
    assert!(
        matches!(out.told[0], Told::Welcome { .. }),
        "{:?}",
        out.told
    );
    assert_eq!(
        out.errors(),
        [ErrorCode::AlreadyJoined, ErrorCode::BadMessage]
    );
    assert!(
        out.text.iter().all(|&text| !text),
        "all binary: {:?}",
        out.text
    );

    let out = play(
        config(),
        vec![Step::Binary(binary_hello(" "))],
        false,
        |_, _| {},
    )
    .await;
    assert_eq!(out.errors(), [ErrorCode::BadName]);
    assert_eq!(out.text, [false], "the refusal in the hello's form");
}
