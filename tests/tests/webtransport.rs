//! The server over WebTransport, for real on 127.0.0.1 (UDP): the offer at
//! `/transport`, a session with `hello` on the stream and inputs and
//! snapshots as datagrams, the same rules as WebSocket (decoder, errors,
//! limits), and players on both transports in one room.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use skirmish_core::framing::StreamMessage;
use skirmish_core::{
    decode_server, encode, ClientMessage, Encoding, ErrorCode, PlayerId, ServerMessage,
    PROTOCOL_VERSION,
};
use skirmish_tanks::compact;
use skirmish_tests::wt::{offer, WtClient};
use skirmish_tests::{
    config_with, http_get, input, metric, next_source, server, test_config, Client,
};
use tokio::time::timeout;

const DEADLINE: Duration = Duration::from_secs(5);

fn hello(name: &str, room: &str) -> String {
    encode(&ClientMessage::<skirmish_tanks::WireInput>::Hello {
        name: name.into(),
        protocol: PROTOCOL_VERSION,
        room: Some(room.into()),
        encoding: Encoding::Compact,
        game: None,
    })
}

/// Reads until `welcome` (which must come on the stream); the player id.
async fn welcome(client: &mut WtClient) -> Result<PlayerId> {
    loop {
        let (text, datagram) = timeout(DEADLINE, client.next_text()).await??;
        if let ServerMessage::Welcome { player_id, .. } =
            decode_server::<skirmish_tanks::Tanks>(&text)?
        {
            assert!(!datagram, "welcome is reliable");
            return Ok(player_id);
        }
    }
}

/// Reads until a binary snapshot as a datagram; its players.
async fn snapshot(client: &mut WtClient) -> Result<Vec<skirmish_tanks::PlayerState>> {
    loop {
        let received = timeout(DEADLINE, client.next())
            .await??
            .context("connection ended")?;
        if let StreamMessage::Binary(bytes) = received.message {
            if !received.datagram || bytes.first() == Some(&skirmish_core::compact::OWN) {
                continue;
            }
            let (_, players) = compact::decode(&bytes, &skirmish_tanks::SimConfig::default())?;
            return Ok(players);
        }
    }
}

#[tokio::test]
async fn transport_offers_the_endpoint_and_a_pinned_certificate() -> Result<()> {
    let srv = server(test_config())?;
    let offered = offer(srv.addr).await?;
    assert!(offered.url.starts_with("https://127.0.0.1:") && offered.url.ends_with("/wt"));
    assert_eq!(offered.hashes.len(), 1);
    assert_eq!(offered.hashes[0].len(), 64, "hex SHA-256");
    srv.shutdown().await?;

    let srv = server(config_with(|c| c.webtransport.disabled = true))?;
    let body = http_get(srv.addr, "/transport").await?;
    assert_eq!(body, r#"{"webtransport":null}"#);
    srv.shutdown().await
}

#[tokio::test]
async fn a_player_joins_on_the_stream_and_plays_with_datagrams() -> Result<()> {
    let srv = server(test_config())?;
    let mut client = WtClient::to_server(srv.addr, None).await?;
    client.send_reliable(&hello("wt", "datagrams")).await?;
    let me = welcome(&mut client).await?;
    let first = snapshot(&mut client).await?;
    let start = first
        .iter()
        .find(|p| p.id == me)
        .context("own state")?
        .position;
    for tick in 1..=20 {
        let message = ClientMessage::Input {
            inputs: vec![input(tick, 0.0, 1.0, false)],
            snapshot_ack: None,
            seq: None,
        };
        client.send_datagram(encode(&message).as_bytes())?;
    }
    // The inputs were applied: the player moved.
    let moved = loop {
        let players = snapshot(&mut client).await?;
        let now = players.iter().find(|p| p.id == me).context("own state")?;
        if now.ack_move_tick.is_some_and(|t| t.0 >= 20) {
            break now.position;
        }
    };
    assert!(moved.distance(start) > 50.0, "{start} -> {moved}");
    // A ping comes back as a datagram pong.
    client.send_datagram(br#"{"type":"ping","id":7}"#)?;
    loop {
        let (text, datagram) = timeout(DEADLINE, client.next_text()).await??;
        if let ServerMessage::Pong { id, .. } = decode_server::<skirmish_tanks::Tanks>(&text)? {
            assert_eq!(id, 7);
            assert!(datagram, "pongs travel as datagrams");
            break;
        }
    }
    srv.shutdown().await
}

#[tokio::test]
async fn bad_messages_get_their_error_codes_on_the_stream_and_are_counted() -> Result<()> {
    let srv = server(test_config())?;
    let mut client = WtClient::to_server(srv.addr, None).await?;
    // Before hello: an input is refused.
    client.send_datagram(br#"{"type":"input","inputs":[{"tick":1,"turn":0,"throttle":1}]}"#)?;
    let (text, datagram) = timeout(DEADLINE, client.next_text()).await??;
    assert!(!datagram, "errors are reliable");
    assert!(matches!(
        decode_server::<skirmish_tanks::Tanks>(&text)?,
        ServerMessage::Error {
            code: ErrorCode::NotJoined,
            ..
        }
    ));
    client.send_reliable(&hello("hostile", "errors")).await?;
    welcome(&mut client).await?;
    for (bytes, want) in [
        (&b"not json"[..], ErrorCode::BadMessage),
        (&[0xff, 0xfe][..], ErrorCode::BadMessage),
        (
            br#"{"type":"hello","name":"again","protocol":1}"#,
            ErrorCode::AlreadyJoined,
        ),
    ] {
        client.send_datagram(bytes)?;
        let code = loop {
            let (text, _) = timeout(DEADLINE, client.next_text()).await??;
            if let ServerMessage::Error { code, .. } =
                decode_server::<skirmish_tanks::Tanks>(&text)?
            {
                break code;
            }
        };
        assert_eq!(code, want);
    }
    assert!(
        metric(
            srv.addr,
            "skirmish_rejected_messages_total{code=\"bad_message\"}"
        )
        .await?
            >= 2
    );
    srv.shutdown().await
}

#[tokio::test]
async fn each_snapshot_s_own_block_comes_again_after_it_as_a_datagram() -> Result<()> {
    let srv = server(test_config())?;
    let mut client = WtClient::to_server(srv.addr, None).await?;
    client.send_reliable(&hello("wt", "echoes")).await?;
    let me = welcome(&mut client).await?;
    let mut heads = std::collections::BTreeMap::new();
    let mut echoes = 0;
    while echoes < 20 {
        let received = timeout(DEADLINE, client.next())
            .await??
            .context("connection ended")?;
        let StreamMessage::Binary(bytes) = received.message else {
            continue;
        };
        assert!(received.datagram, "binary frames travel as datagrams");
        if bytes.first() == Some(&skirmish_core::compact::OWN) {
            let echo = skirmish_core::compact::decode_own::<skirmish_tanks::PlayerState>(&bytes)?;
            let head = heads.get(&echo.server_tick).with_context(|| {
                format!("an echo of tick {} before its snapshot", echo.server_tick)
            })?;
            assert_eq!(&echo.own, head, "the echo repeats the head exactly");
            assert_eq!(echo.own.id, me);
            echoes += 1;
        } else {
            let frame = compact::decode_quantised(&bytes)?;
            heads.insert(frame.server_tick, frame.own);
        }
    }
    srv.shutdown().await
}

#[tokio::test]
async fn players_on_both_transports_share_a_room() -> Result<()> {
    let srv = server(test_config())?;
    let mut ws = Client::connect(srv.addr).await?;
    ws.hello("ws", Some("mixed")).await?;
    let socket_player = match ws.recv().await? {
        ServerMessage::Welcome { player_id, .. } => player_id,
        other => bail!("expected welcome, got {other:?}"),
    };
    let mut wt = WtClient::to_server(srv.addr, None).await?;
    wt.send_reliable(&hello("wt", "mixed")).await?;
    let datagram_player = welcome(&mut wt).await?;
    // Each sees the other (or `snapshot` and `state_of` fail by deadline).
    while !snapshot(&mut wt)
        .await?
        .iter()
        .any(|p| p.id == socket_player)
    {}
    ws.state_of(datagram_player).await?;
    srv.shutdown().await
}

#[tokio::test]
async fn the_per_address_limit_holds_for_webtransport_too() -> Result<()> {
    let srv = server(config_with(|c| c.limits.max_connections_per_address = 1))?;
    let source = next_source();
    let offered = offer(srv.addr).await?;
    let mut first = WtClient::connect(&offered, Some(source)).await?;
    first.send_reliable(&hello("first", "limit")).await?;
    welcome(&mut first).await?;
    let second = WtClient::connect(&offered, Some(source)).await;
    assert!(
        second.is_err(),
        "a second session from the address is refused"
    );
    assert!(
        metric(
            srv.addr,
            "skirmish_refused_connections_total{reason=\"too_many_from_address\"}"
        )
        .await?
            >= 1
    );
    srv.shutdown().await
}

#[tokio::test]
async fn the_certificate_is_renewed_without_dropping_sessions() -> Result<()> {
    let srv = server(config_with(|c| {
        c.webtransport.renew_every = Duration::from_millis(300);
    }))?;
    let first = offer(srv.addr).await?;
    let mut client = WtClient::connect(&first, None).await?;
    client.send_reliable(&hello("before", "renewal")).await?;
    welcome(&mut client).await?;
    // Wait (bounded) for the offer to name a new certificate.
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let renewed = loop {
        let now = offer(srv.addr).await?;
        if now.hashes.first() != first.hashes.first() {
            break now;
        }
        if tokio::time::Instant::now() > deadline {
            bail!("the certificate was not renewed");
        }
        tokio::task::yield_now().await;
    };
    assert_eq!(
        renewed.hashes.get(1),
        first.hashes.first(),
        "the previous one still listed"
    );
    // The open session keeps playing; a new one pins the new certificate.
    snapshot(&mut client).await?;
    let only_new = skirmish_tests::wt::Offer {
        url: renewed.url.clone(),
        hashes: vec![renewed.hashes[0].clone()],
    };
    let mut late = WtClient::connect(&only_new, None).await?;
    late.send_reliable(&hello("after", "renewal")).await?;
    welcome(&mut late).await?;
    snapshot(&mut client).await?;
    srv.shutdown().await
}

#[tokio::test]
async fn a_session_still_waiting_for_hello_is_told_of_a_shutdown() -> Result<()> {
    let srv = server(test_config())?;
    let mut wt = WtClient::to_server(srv.addr, None).await?;
    let shutting = tokio::spawn(srv.shutdown());
    let (text, _) = timeout(DEADLINE, wt.next_text()).await??;
    match decode_server::<skirmish_tanks::Tanks>(&text)? {
        ServerMessage::Error { code, .. } => assert_eq!(code, ErrorCode::ShuttingDown),
        other => bail!("expected the shutdown error, got {other:?}"),
    }
    shutting.await??;
    Ok(())
}
