//! What one source address may hold, over real sockets: connections per
//! address and in total, the upgrade and hello deadlines, seats and opened
//! rooms per address, and the WebSocket frame limit enforced before a
//! frame is buffered. Every refusal is counted, and honest players on
//! other addresses never notice.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use anyhow::{bail, Context};
use skirmish_core::{ErrorCode, ServerMessage, Tick};
use skirmish_tests::{config_with, input, metric, next_source, server, tcp_from, Client, DEADLINE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

type Result = anyhow::Result<()>;

/// The address every attack comes from.
fn attacker() -> IpAddr {
    IpAddr::from([127, 9, 9, 9])
}

/// Reads until the server closes the connection; what it sent.
async fn read_to_close(tcp: &mut TcpStream) -> anyhow::Result<String> {
    let mut buf = Vec::new();
    let read = tokio::time::timeout(DEADLINE, tcp.read_to_end(&mut buf))
        .await
        .context("the server did not close the connection")?;
    match read {
        // A server closing with our bytes unread resets the connection.
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => return Err(e.into()),
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// A raw WebSocket upgrade on `tcp`; the rest of the stream is frames.
async fn upgrade(addr: SocketAddr, tcp: &mut TcpStream) -> Result {
    let request = format!(
        "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await?;
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0];
        tokio::time::timeout(DEADLINE, tcp.read_exact(&mut byte)).await??;
        head.push(byte[0]);
    }
    if !head.starts_with(b"HTTP/1.1 101") {
        bail!("no upgrade: {}", String::from_utf8_lossy(&head));
    }
    Ok(())
}

async fn refused(addr: SocketAddr, reason: &str) -> anyhow::Result<u64> {
    metric(
        addr,
        &format!("skirmish_refused_connections_total{{reason=\"{reason}\"}}"),
    )
    .await
}

#[tokio::test]
async fn connections_are_capped_per_address_with_429_and_in_total_with_503() -> Result {
    let srv = server(config_with(|c| {
        c.limits.max_connections_per_address = 3;
        c.limits.max_connections = 5;
    }))?;
    let addr = srv.addr;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(tcp_from(addr, attacker()).await?);
    }
    let mut fourth = tcp_from(addr, attacker()).await?;
    let answer = read_to_close(&mut fourth).await?;
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    // Two more addresses fill the server; the next one gets 503.
    held.push(tcp_from(addr, next_source()).await?);
    held.push(tcp_from(addr, next_source()).await?);
    let mut sixth = tcp_from(addr, next_source()).await?;
    let answer = read_to_close(&mut sixth).await?;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    drop(held);
    // The shares come back: metrics can be read again (over a new connection).
    let mut tries = 0;
    let from_address = loop {
        match refused(addr, "too_many_from_address").await {
            Ok(n) => break n,
            Err(_) if tries < 100 => tries += 1,
            Err(e) => return Err(e),
        }
    };
    assert_eq!(from_address, 1);
    assert_eq!(refused(addr, "too_many_connections").await?, 1);
    srv.shutdown().await
}

#[tokio::test]
async fn a_connection_that_never_finishes_its_upgrade_is_closed_and_counted() -> Result {
    let srv = server(config_with(|c| {
        c.limits.upgrade_timeout = Duration::from_millis(200);
    }))?;
    let mut silent = tcp_from(srv.addr, attacker()).await?;
    let mut slow = tcp_from(srv.addr, attacker()).await?;
    slow.write_all(b"GET /ws HTTP/1.1\r\nHost: x\r\n").await?;
    read_to_close(&mut silent).await?;
    read_to_close(&mut slow).await?;
    assert_eq!(refused(srv.addr, "upgrade_timeout").await?, 2);
    srv.shutdown().await
}

/// A scraper's keep-alive connection that goes idle after its request is
/// closed by the same deadline, but it is no refusal.
#[tokio::test]
async fn an_idle_keep_alive_connection_after_a_request_is_not_a_refusal() -> Result {
    let srv = server(config_with(|c| {
        c.limits.upgrade_timeout = Duration::from_millis(200);
    }))?;
    let mut scraper = tcp_from(srv.addr, attacker()).await?;
    scraper
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await?;
    let answer = read_to_close(&mut scraper).await?;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(refused(srv.addr, "upgrade_timeout").await?, 0);
    srv.shutdown().await
}

#[tokio::test]
async fn one_address_holds_at_most_its_seats_and_opened_rooms() -> Result {
    let srv = server(config_with(|c| {
        c.limits.max_seats_per_address = 3;
        c.limits.max_rooms_per_address = 2;
    }))?;
    let addr = srv.addr;
    let mut seated = Vec::new();
    for i in 0..3 {
        let mut c = Client::connect_from(addr, attacker()).await?;
        c.hello(&format!("grab{i}"), Some("lobby")).await?;
        c.welcome().await?;
        seated.push(c);
    }
    let mut greedy = Client::connect_from(addr, attacker()).await?;
    greedy.hello("grab3", Some("lobby")).await?;
    assert_eq!(
        first_reply(&mut greedy).await?,
        Some(ErrorCode::AddressLimit)
    );
    assert_eq!(greedy.closed().await?, "address_limit");
    // Another address still gets in.
    let _honest = Client::join(addr, "honest", Some("lobby")).await?;

    // Rooms: the attacker opened "lobby"; one more, then no more.
    for c in seated {
        c.close().await?;
    }
    wait_for_players(addr, 1).await?;
    let mut second = Client::connect_from(addr, attacker()).await?;
    second.hello("r", Some("second")).await?;
    second.welcome().await?;
    let mut third = Client::connect_from(addr, attacker()).await?;
    third.hello("r", Some("third")).await?;
    assert_eq!(
        first_reply(&mut third).await?,
        Some(ErrorCode::AddressLimit)
    );
    assert_eq!(
        metric(
            addr,
            "skirmish_rejected_messages_total{code=\"address_limit\"}"
        )
        .await?,
        2
    );
    srv.shutdown().await
}

/// A frame whose header announces a gigabyte is refused from its header:
/// the server closes the connection instead of buffering it.
#[tokio::test]
async fn an_oversized_frame_is_refused_before_it_is_buffered() -> Result {
    let srv = server(skirmish_tests::test_config())?;
    let mut tcp = tcp_from(srv.addr, attacker()).await?;
    upgrade(srv.addr, &mut tcp).await?;
    // FIN + binary, masked, 64-bit length of 1 GiB, a mask, a little payload.
    let mut frame = vec![0x82, 0xFF];
    frame.extend_from_slice(&(1u64 << 30).to_be_bytes());
    frame.extend_from_slice(&[1, 2, 3, 4]);
    frame.extend_from_slice(&[0; 1024]);
    tcp.write_all(&frame).await?;
    read_to_close(&mut tcp).await?;
    assert_eq!(
        metric(
            srv.addr,
            "skirmish_disconnects_total{reason=\"protocol_error\"}"
        )
        .await?,
        1
    );
    srv.shutdown().await
}

/// The answer to `hello`: `None` for `welcome`, else the error's code.
async fn first_reply(c: &mut Client) -> anyhow::Result<Option<ErrorCode>> {
    match c.recv().await? {
        ServerMessage::Welcome { .. } => Ok(None),
        ServerMessage::Error { code, .. } => Ok(Some(code)),
        other => bail!("unexpected answer to hello: {other:?}"),
    }
}

/// Polls `/metrics` until `n` players are seated (a disconnect is handled
/// a moment after the client sees its socket close).
async fn wait_for_players(addr: SocketAddr, n: u64) -> Result {
    for _ in 0..1000 {
        if metric(addr, "skirmish_players").await? == n {
            return Ok(());
        }
        tokio::task::yield_now().await;
    }
    bail!("never {n} players")
}

/// An honest player: joins from its own address, sends an input per
/// snapshot, and fails on any error or any missed tick; plays until told to
/// stop and at least two seconds of snapshots were seen.
async fn honest(
    addr: SocketAddr,
    i: u32,
    stop: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<u32> {
    let mut c = Client::join(addr, &format!("honest{i}"), Some("arena")).await?;
    let mut last: Option<Tick> = None;
    let mut snapshots = 0;
    let mut tick = 0;
    while !*stop.borrow() || snapshots < 40 {
        match c.recv().await? {
            ServerMessage::Snapshot { server_tick, .. } => {
                if let Some(last) = last {
                    if server_tick != last.next() {
                        bail!("honest{i} missed a tick: {last} then {server_tick}");
                    }
                }
                last = Some(server_tick);
                snapshots += 1;
                tick += 1;
                c.inputs(vec![input(tick, 0.1, 0.5, false)]).await?;
            }
            ServerMessage::Error { code, message } => bail!("honest{i} got {code}: {message}"),
            _ => {}
        }
    }
    Ok(snapshots)
}

/// Sixteen honest players keep every tick while one address tries each
/// attack in turn; every attack is refused and counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn honest_players_keep_every_tick_while_one_address_attacks() -> Result {
    let srv = skirmish_tests::SeparateServer::start(config_with(|c| {
        c.limits.upgrade_timeout = Duration::from_millis(300);
        c.limits.hello_timeout = Duration::from_millis(300);
    }))?;
    let addr = srv.addr;
    let (stop_tx, stop) = tokio::sync::watch::channel(false);
    let players: Vec<_> = (0..16)
        .map(|i| tokio::spawn(honest(addr, i, stop.clone())))
        .collect();

    // 1. Sockets that never send a request: 16 admitted, then 429.
    let mut idle = Vec::new();
    for _ in 0..20 {
        idle.push(tcp_from(addr, attacker()).await?);
    }
    for tcp in &mut idle {
        read_to_close(tcp).await?;
    }
    // 2. WebSockets that never say hello.
    let mut mute = Vec::new();
    for _ in 0..8 {
        mute.push(Client::connect_from(addr, attacker()).await?);
    }
    for c in &mut mute {
        assert_eq!(c.closed().await?, "hello_timeout");
    }
    drop(mute);
    // 3. Hello into every seat: 8 seats, then address_limit.
    let mut grabbed = Vec::new();
    let mut limited = 0;
    for i in 0..12 {
        let mut c = Client::connect_from(addr, attacker()).await?;
        c.hello(&format!("grab{i}"), Some(&format!("grab-{}", i % 2)))
            .await?;
        match c.recv().await? {
            ServerMessage::Welcome { .. } => grabbed.push(c),
            ServerMessage::Error { code, .. } => {
                assert_eq!(code, ErrorCode::AddressLimit);
                limited += 1;
            }
            other => bail!("unexpected {other:?}"),
        }
    }
    assert_eq!((grabbed.len(), limited), (8, 4), "8 seats, then refused");
    for c in grabbed {
        c.close().await?;
    }
    wait_for_players(addr, 16).await?;
    // 4. A new room after another: the two grab rooms are still open, so
    //    two more, then refused.
    let mut opened = 0;
    for i in 0..6 {
        let mut c = Client::connect_from(addr, attacker()).await?;
        c.hello("opener", Some(&format!("own-{i}"))).await?;
        match c.recv().await? {
            ServerMessage::Welcome { .. } => opened += 1,
            ServerMessage::Error { code, .. } => assert_eq!(code, ErrorCode::AddressLimit),
            other => bail!("unexpected {other:?}"),
        }
    }
    assert_eq!(opened, 2);
    // 5. A frame announcing a gigabyte.
    let mut tcp = tcp_from(addr, attacker()).await?;
    upgrade(addr, &mut tcp).await?;
    let mut frame = vec![0x81, 0xFF];
    frame.extend_from_slice(&(1u64 << 30).to_be_bytes());
    frame.extend_from_slice(&[0; 64]);
    tcp.write_all(&frame).await?;
    read_to_close(&mut tcp).await?;

    stop_tx.send(true)?;
    for player in players {
        let snapshots = player.await??;
        assert!(
            snapshots >= 40,
            "an honest player only saw {snapshots} snapshots"
        );
    }
    assert!(refused(addr, "too_many_from_address").await? >= 4);
    assert!(refused(addr, "upgrade_timeout").await? >= 16);
    assert!(metric(addr, "skirmish_disconnects_total{reason=\"hello_timeout\"}").await? >= 8);
    assert_eq!(
        metric(
            addr,
            "skirmish_rejected_messages_total{code=\"address_limit\"}"
        )
        .await?,
        8
    );
    assert!(
        metric(
            addr,
            "skirmish_disconnects_total{reason=\"protocol_error\"}"
        )
        .await?
            >= 1
    );
    srv.shutdown()
}

/// A client that asks for a large file and never reads it gives its
/// connection back after the HTTP deadline; a WebSocket, handed off at its
/// upgrade, plays on past that deadline.
#[tokio::test]
async fn a_plain_http_connection_that_never_reads_is_closed_but_websockets_live_on() -> Result {
    let web = std::env::temp_dir().join(format!("skirmish-http-timeout-{}", std::process::id()));
    std::fs::create_dir_all(&web)?;
    std::fs::write(web.join("big.bin"), vec![0u8; 32 * 1024 * 1024])?;
    let srv = server(config_with(|c| {
        c.web_dir.clone_from(&web);
        c.limits.http_timeout = Duration::from_millis(300);
    }))?;
    let addr = srv.addr;
    let mut player = Client::join(addr, "player", None).await?;
    let mut hog = tcp_from(addr, attacker()).await?;
    hog.write_all(format!("GET /big.bin HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await?;
    // The player's snapshots are the clock: 40 of them are two seconds,
    // well past the 300 ms deadline.
    let mut timed_out = 0;
    for _ in 0..40 {
        player.snapshot().await?;
        timed_out = refused(addr, "http_timeout").await?;
    }
    assert_eq!(timed_out, 1, "the hog was closed once");
    player.inputs(vec![input(1, 0.0, 1.0, false)]).await?;
    while player.own_state().await?.ack_move_tick != Some(Tick(1)) {}
    drop(hog);
    let _ = std::fs::remove_dir_all(&web);
    srv.shutdown().await
}
