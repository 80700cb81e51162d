//! Bad and slow clients against the real server: every bad message gets its
//! error code and is counted, nothing affects another player, a client that
//! never reads is dropped while the others keep their 20 Hz.

use std::time::Duration;

use skirmish_core::{ClientMessage, ErrorCode, Frame, Tick, MAX_FRAME_BYTES};
use skirmish_tests::{config_with, input, metric, server, test_config, Client};

type Result = anyhow::Result<()>;

async fn rejected(addr: std::net::SocketAddr, code: ErrorCode) -> anyhow::Result<u64> {
    metric(
        addr,
        &format!("skirmish_rejected_messages_total{{code=\"{code}\"}}"),
    )
    .await
}

#[tokio::test]
async fn every_bad_message_gets_its_error_code_and_is_counted() -> Result {
    let srv = server(test_config())?;
    let addr = srv.addr;
    let mut bystander = Client::join(addr, "bystander", None).await?;

    // Before hello.
    let mut bad = Client::connect(addr).await?;
    bad.inputs(vec![input(1, 0.0, 1.0, false)]).await?;
    assert_eq!(bad.error().await?, ErrorCode::NotJoined);
    bad.hello("mallory", None).await?;
    bad.welcome().await?;

    let too_many: Vec<_> = (1..=17).map(|t| input(t, 0.0, 1.0, false)).collect();
    let cases: Vec<(&str, String)> = vec![
        ("not json", "{{{{".to_string()),
        ("unknown type", r#"{"type":"teleport","x":5}"#.to_string()),
        ("over 8 KiB", format!(r#"{{"type":"ping","id":1,"pad":"{}"}}"#, "x".repeat(MAX_FRAME_BYTES))),
        ("17 inputs", skirmish_core::encode(&ClientMessage::Input { inputs: too_many, snapshot_ack: None, seq: None })),
        (
            "ticks not increasing",
            r#"{"type":"input","inputs":[{"tick":5,"turn":0,"throttle":1},{"tick":4,"turn":0,"throttle":1}]}"#.to_string(),
        ),
        ("infinity", r#"{"type":"input","inputs":[{"tick":5,"turn":0,"throttle":1e40}]}"#.to_string()),
        ("second hello", r#"{"type":"hello","name":"again","protocol":1}"#.to_string()),
    ];
    let expected = [
        ErrorCode::BadMessage,
        ErrorCode::BadMessage,
        ErrorCode::TooLarge,
        ErrorCode::TooManyInputs,
        ErrorCode::TicksNotIncreasing,
        ErrorCode::NonFinite,
        ErrorCode::AlreadyJoined,
    ];
    for ((what, text), code) in cases.into_iter().zip(expected) {
        bad.send_text(text).await?;
        assert_eq!(bad.error().await?, code, "{what}");
    }
    bad.send_binary(vec![1, 2, 3]).await?;
    assert_eq!(bad.error().await?, ErrorCode::BinaryFrame);

    // None of it moved anybody: the bad client never got an input applied.
    let mallory = bystander.state_of(bad.id).await?;
    assert_eq!(mallory.ack_move_tick, None);

    for code in [
        ErrorCode::NotJoined,
        ErrorCode::TooLarge,
        ErrorCode::TooManyInputs,
        ErrorCode::TicksNotIncreasing,
        ErrorCode::NonFinite,
        ErrorCode::AlreadyJoined,
        ErrorCode::BinaryFrame,
    ] {
        assert_eq!(rejected(addr, code).await?, 1, "{code}");
    }
    assert_eq!(rejected(addr, ErrorCode::BadMessage).await?, 2);

    // The bad client is still served and can still play.
    bad.inputs(vec![input(1, 0.0, 1.0, false)]).await?;
    while bad.own_state().await?.ack_move_tick != Some(Tick(1)) {}
    srv.shutdown().await
}

#[tokio::test]
async fn flooding_is_rate_limited_and_counted() -> Result {
    let srv = server(test_config())?;
    let mut flooder = Client::join(srv.addr, "flood", None).await?;
    for id in 0..160 {
        flooder.send(&ClientMessage::Ping { id }).await?;
    }
    assert_eq!(flooder.error().await?, ErrorCode::RateLimited);
    assert!(rejected(srv.addr, ErrorCode::RateLimited).await? >= 40);
    srv.shutdown().await
}

/// WebSocket pongs are frames like any other: a flood of them is rate
/// limited and counted too.
#[tokio::test]
async fn flooding_with_pongs_is_rate_limited_and_counted() -> Result {
    let srv = server(test_config())?;
    let mut flooder = Client::join(srv.addr, "pongs", None).await?;
    for _ in 0..160 {
        flooder.send_pong().await?;
    }
    let told = tokio::time::timeout(Duration::from_secs(5), flooder.error()).await;
    let told = told.map_err(|_| anyhow::anyhow!("no error within 5 s: pongs were not counted"))?;
    assert_eq!(told?, ErrorCode::RateLimited);
    assert!(rejected(srv.addr, ErrorCode::RateLimited).await? >= 40);
    srv.shutdown().await
}

#[tokio::test]
async fn a_client_that_keeps_sending_garbage_is_closed_with_a_reason() -> Result {
    let srv = server(test_config())?;
    let mut bad = Client::join(srv.addr, "mallory", None).await?;
    for _ in 0..11 {
        bad.send_text("garbage").await?;
    }
    assert_eq!(bad.closed().await?, "too_many_errors");
    srv.shutdown().await
}

#[tokio::test]
async fn hello_with_a_wrong_protocol_game_or_name_is_refused() -> Result {
    let srv = server(test_config())?;
    let mut old = Client::connect(srv.addr).await?;
    old.send_text(r#"{"type":"hello","name":"ana","protocol":0}"#)
        .await?;
    assert_eq!(old.error().await?, ErrorCode::BadProtocol);
    assert_eq!(old.closed().await?, "bad_protocol");
    let mut other = Client::connect(srv.addr).await?;
    other
        .send_text(
            r#"{"type":"hello","name":"ana","protocol":2,"game":{"name":"blobs","version":1}}"#,
        )
        .await?;
    assert_eq!(other.error().await?, ErrorCode::WrongGame);
    assert_eq!(other.closed().await?, "wrong_game");
    let mut nameless = Client::connect(srv.addr).await?;
    nameless
        .send_text(r#"{"type":"hello","name":"  ","protocol":1}"#)
        .await?;
    assert_eq!(nameless.error().await?, ErrorCode::BadName);
    srv.shutdown().await
}

/// The next `error` frame, as it came (text or binary), skipping the rest.
async fn error_frame(client: &mut Client) -> anyhow::Result<Frame> {
    loop {
        match client.recv_frame().await? {
            Frame::Text(text) if text.starts_with(r#"{"type":"error""#) => {
                return Ok(Frame::Text(text))
            }
            Frame::Binary(bytes) if bytes.first() == Some(&b'E') => {
                return Ok(Frame::Binary(bytes))
            }
            _ => {}
        }
    }
}

/// A binary `hello` from a tank client named `name`.
fn binary_hello(name: &str) -> Vec<u8> {
    skirmish_core::control::encode_client::<skirmish_tanks::WireInput>(&ClientMessage::Hello {
        name: name.into(),
        protocol: 2,
        room: None,
        encoding: skirmish_core::Encoding::Compact,
        game: Some(skirmish_core::GameId::of::<skirmish_tanks::Tanks>()),
    })
    .expect("a hello has a binary form")
}

/// Regression (issue 37): any binary frame starting with `H` switched the
/// session's control messages to binary, refused or not, joined or not.
/// The hello that joins chooses, once.
#[tokio::test]
async fn one_encoding_per_session_chosen_by_the_hello_that_joins() -> Result {
    let srv = server(test_config())?;
    // A malformed binary hello, then a text one: JSON all along.
    let mut first = Client::connect(srv.addr).await?;
    first
        .send_binary(vec![skirmish_core::control::HELLO])
        .await?;
    let refused = error_frame(&mut first).await?;
    assert!(
        matches!(&refused, Frame::Text(t) if t.contains("bad_message")),
        "{refused:?}"
    );
    first.hello("ann", None).await?;
    let welcome = first.recv_frame().await?;
    assert!(
        matches!(&welcome, Frame::Text(t) if t.starts_with(r#"{"type":"welcome""#)),
        "{welcome:?}"
    );
    // A text join, then a binary hello: `already_joined` in JSON, and the
    // errors after it too.
    let mut second = Client::join(srv.addr, "bob", None).await?;
    second.send_binary(binary_hello("bob")).await?;
    let again = error_frame(&mut second).await?;
    assert!(
        matches!(&again, Frame::Text(t) if t.contains("already_joined")),
        "{again:?}"
    );
    second.send_text("garbage").await?;
    let later = error_frame(&mut second).await?;
    assert!(
        matches!(&later, Frame::Text(t) if t.contains("bad_message")),
        "{later:?}"
    );
    srv.shutdown().await
}

/// A client that never reads is dropped as a slow consumer while the others
/// keep receiving every tick.
#[tokio::test]
async fn a_client_that_never_reads_is_dropped_and_others_keep_twenty_hz() -> Result {
    let srv = server(config_with(|c| {
        c.limits.outbox_capacity = 8;
        c.socket_send_buffer = Some(4096);
    }))?;
    let addr = srv.addr;
    let mut good = Client::join(addr, "good", None).await?;
    let mut sleeper = Client::connect_small_buffer(addr).await?;
    sleeper.hello("sleeper", None).await?;
    // From here on the sleeper never reads.

    let (mut last, _) = good.snapshot().await?;
    let mut dropped_at = None;
    for _ in 0..400 {
        let (tick, players) = good.snapshot().await?;
        assert_eq!(tick, last.next(), "no snapshot missed");
        last = tick;
        if players.len() == 1 && dropped_at.is_none() {
            dropped_at = Some(tick);
        }
        if dropped_at.is_some_and(|at| tick.0 >= at.0 + 20) {
            break;
        }
    }
    assert!(dropped_at.is_some(), "the sleeper was never dropped");
    assert_eq!(
        metric(addr, "skirmish_disconnects_total{reason=\"slow_consumer\"}").await?,
        1
    );
    assert_eq!(metric(addr, "skirmish_players").await?, 1);
    drop(sleeper);
    srv.shutdown().await
}
