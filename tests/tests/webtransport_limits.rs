//! The server's limits over WebTransport, for real on 127.0.0.1 (UDP): the
//! same hello deadline (the stream's opening included, and told of a
//! shutdown meanwhile), rate limit and error budget as over WebSocket; a
//! snapshot too large for a datagram rides the stream; a wrong path is
//! refused and counted.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use skirmish_core::framing::StreamMessage;
use skirmish_core::{
    decode_server, encode, ClientMessage, Encoding, ErrorCode, ServerMessage, PROTOCOL_VERSION,
};
use skirmish_tests::wt::{bare_session, offer, WtClient};
use skirmish_tests::{config_with, metric, next_source, server, test_config, Client};
use tokio::time::timeout;

const DEADLINE: Duration = Duration::from_secs(10);

fn hello(name: &str, room: &str, encoding: Encoding) -> String {
    encode(&ClientMessage::<skirmish_tanks::WireInput>::Hello {
        name: name.into(),
        protocol: PROTOCOL_VERSION,
        room: Some(room.into()),
        encoding,
        game: None,
    })
}

/// Reads until an `error`; its code.
async fn error(client: &mut WtClient) -> Result<ErrorCode> {
    loop {
        let (text, _) = timeout(DEADLINE, client.next_text()).await??;
        if let ServerMessage::Error { code, .. } = decode_server::<skirmish_tanks::Tanks>(&text)? {
            return Ok(code);
        }
    }
}

/// Reads until `welcome`.
async fn welcome(client: &mut WtClient) -> Result<()> {
    loop {
        let (text, _) = timeout(DEADLINE, client.next_text()).await??;
        if let ServerMessage::Welcome { .. } = decode_server::<skirmish_tanks::Tanks>(&text)? {
            return Ok(());
        }
    }
}

#[tokio::test]
async fn a_client_that_sends_no_hello_is_timed_out_and_told() -> Result<()> {
    let srv = server(config_with(|c| {
        c.limits.hello_timeout = Duration::from_millis(500);
    }))?;
    let mut client = WtClient::to_server(srv.addr, None).await?;
    assert_eq!(error(&mut client).await?, ErrorCode::HelloTimeout);
    let reason = timeout(DEADLINE, client.closed()).await?;
    assert!(reason.contains("hello_timeout"), "{reason}");
    assert_eq!(
        metric(
            srv.addr,
            "skirmish_disconnects_total{reason=\"hello_timeout\"}"
        )
        .await?,
        1
    );
    srv.shutdown().await
}

/// The stream's opening counts against the one hello deadline: a client
/// that opens its stream late is not given a second deadline.
#[tokio::test]
async fn the_hello_deadline_includes_opening_the_stream() -> Result<()> {
    let hello_timeout = Duration::from_secs(2);
    let srv = server(config_with(|c| c.limits.hello_timeout = hello_timeout))?;
    let offer = offer(srv.addr).await?;
    let started = Instant::now();
    let session = bare_session(&offer, None).await?;
    // Open the stream three quarters into the deadline, then stay silent.
    tokio::time::sleep(hello_timeout * 3 / 4).await;
    let mut client = WtClient::open(session).await?;
    assert_eq!(error(&mut client).await?, ErrorCode::HelloTimeout);
    let took = started.elapsed();
    assert!(
        took < hello_timeout + hello_timeout / 2,
        "told after {took:?}: the deadline started again when the stream opened"
    );
    srv.shutdown().await
}

/// A session that has not opened its stream yet is still told of a
/// shutdown, and does not hold the shutdown for its grace period.
#[tokio::test]
async fn a_session_without_its_stream_is_told_of_a_shutdown_at_once() -> Result<()> {
    let srv = server(test_config())?;
    let offer = offer(srv.addr).await?;
    let session = bare_session(&offer, None).await?;
    // The server has the session once its count says so.
    let deadline = Instant::now() + DEADLINE;
    while metric(srv.addr, "skirmish_connections").await? == 0 {
        assert!(Instant::now() < deadline, "the session never started");
        tokio::task::yield_now().await;
    }
    let started = Instant::now();
    srv.shutdown().await?;
    let took = started.elapsed();
    let reason = timeout(DEADLINE, session.closed()).await?.to_string();
    assert!(reason.contains("shutting_down"), "{reason}");
    assert!(
        took < Duration::from_secs(2),
        "shutdown waited {took:?}: the session was not told"
    );
    Ok(())
}

#[tokio::test]
async fn a_flood_of_datagrams_is_rate_limited_told_once_and_counted() -> Result<()> {
    let srv = server(config_with(|c| c.limits.max_messages_per_sec = 20))?;
    let mut client = WtClient::to_server(srv.addr, None).await?;
    client
        .send_reliable(&hello("flood", "flood", Encoding::Compact))
        .await?;
    welcome(&mut client).await?;
    for id in 0..60 {
        client.send_datagram(format!(r#"{{"type":"ping","id":{id}}}"#).as_bytes())?;
    }
    assert_eq!(error(&mut client).await?, ErrorCode::RateLimited);
    let deadline = Instant::now() + DEADLINE;
    let code = "skirmish_rejected_messages_total{code=\"rate_limited\"}";
    // Datagrams may be lost on the way, but not most of them on loopback.
    while metric(srv.addr, code).await? < 10 {
        assert!(
            Instant::now() < deadline,
            "the dropped datagrams were not counted"
        );
        tokio::task::yield_now().await;
    }
    srv.shutdown().await
}

#[tokio::test]
async fn too_many_bad_messages_end_the_session_with_its_reason() -> Result<()> {
    let srv = server(test_config())?;
    let mut client = WtClient::to_server(srv.addr, None).await?;
    client
        .send_reliable(&hello("mallory", "budget", Encoding::Compact))
        .await?;
    welcome(&mut client).await?;
    for _ in 0..=skirmish_server_error_budget() {
        client.send_reliable("not json").await?;
    }
    let last = loop {
        let code = error(&mut client).await?;
        if code != ErrorCode::BadMessage {
            break code;
        }
    };
    assert_eq!(last, ErrorCode::TooManyErrors);
    let reason = timeout(DEADLINE, client.closed()).await?;
    assert!(reason.contains("too_many_errors"), "{reason}");
    assert_eq!(
        metric(
            srv.addr,
            "skirmish_disconnects_total{reason=\"too_many_errors\"}"
        )
        .await?,
        1
    );
    srv.shutdown().await
}

/// The server's error budget (`skirmish_server`'s `ERROR_BUDGET`).
fn skirmish_server_error_budget() -> u32 {
    10
}

#[tokio::test]
async fn a_snapshot_too_large_for_a_datagram_rides_the_stream() -> Result<()> {
    let srv = server(test_config())?;
    // JSON snapshots of a dozen players are well over 1,200 bytes.
    let mut crowd = Vec::new();
    for i in 0..12 {
        let mut client = Client::connect_from(srv.addr, next_source()).await?;
        client.hello(&format!("p{i}"), Some("crowd")).await?;
        client.welcome().await?;
        crowd.push(client);
    }
    let mut client = WtClient::to_server(srv.addr, None).await?;
    client
        .send_reliable(&hello("watcher", "crowd", Encoding::Json))
        .await?;
    welcome(&mut client).await?;
    let deadline = Instant::now() + DEADLINE;
    loop {
        if Instant::now() > deadline {
            bail!("no large snapshot on the stream");
        }
        let received = timeout(DEADLINE, client.next())
            .await??
            .context("the connection ended")?;
        let StreamMessage::Text(text) = received.message else {
            continue;
        };
        if !text.starts_with(r#"{"type":"snapshot""#) {
            continue;
        }
        assert!(
            text.len() <= skirmish_server_datagram_bytes() || !received.datagram,
            "a {}-byte snapshot came as a datagram",
            text.len()
        );
        if text.len() > skirmish_server_datagram_bytes() {
            break;
        }
    }
    drop(crowd);
    srv.shutdown().await
}

/// The largest datagram the server sends.
fn skirmish_server_datagram_bytes() -> usize {
    1200
}

#[tokio::test]
async fn a_wrong_path_is_refused_and_counted() -> Result<()> {
    let srv = server(test_config())?;
    let mut wrong = offer(srv.addr).await?;
    wrong.url = wrong.url.replace("/wt", "/nope");
    let refused = timeout(DEADLINE, bare_session(&wrong, None)).await?;
    assert!(refused.is_err(), "a session on /nope was accepted");
    assert_eq!(
        metric(
            srv.addr,
            "skirmish_refused_connections_total{reason=\"wrong_path\"}"
        )
        .await?,
        1
    );
    // The right path still works.
    let mut client = WtClient::to_server(srv.addr, None).await?;
    client
        .send_reliable(&hello("right", "path", Encoding::Compact))
        .await?;
    welcome(&mut client).await?;
    srv.shutdown().await
}
