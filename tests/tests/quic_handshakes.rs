//! Hostile QUIC handshakes, for real on 127.0.0.1: handshakes from
//! addresses that never answer cost the server no connection permit (a
//! QUIC Retry comes first), so honest players over WebSocket and
//! WebTransport are still admitted at once. (The stream flood is in
//! `quic_flood.rs`, alone in its process for the memory it reads.)

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use anyhow::{Context, Result};
use skirmish_tanks::Tanks;
use skirmish_tests::wt::{offer, WtClient};
use skirmish_tests::{config_with, metric, Client, SeparateServer};
use tokio::net::UdpSocket;
use tokio::time::{timeout, Instant};
use wtransport::{ClientConfig, Endpoint};

const DEADLINE: Duration = Duration::from_secs(10);

/// The first datagrams of `count` QUIC handshakes (each an Initial with
/// the TLS `ClientHello` and a connection id of its own), caught by a socket
/// standing in for the server.
async fn initials(count: usize) -> Result<Vec<Vec<u8>>> {
    let catcher = UdpSocket::bind("127.0.0.1:0").await?;
    let port = catcher.local_addr()?.port();
    let config = ClientConfig::builder()
        .with_bind_default()
        // Nothing to verify: the catcher never answers.
        .with_server_certificate_hashes(Vec::new())
        .build();
    let endpoint = std::sync::Arc::new(Endpoint::client(config)?);
    let connecting: Vec<_> = (0..count)
        .map(|_| {
            let endpoint = endpoint.clone();
            tokio::spawn(async move {
                let _ = endpoint
                    .connect(format!("https://127.0.0.1:{port}/wt"))
                    .await;
            })
        })
        .collect();
    let mut caught: Vec<Vec<u8>> = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    let mut buffer = vec![0; 2048];
    while caught.len() < count {
        let (n, _) = timeout(DEADLINE, catcher.recv_from(&mut buffer)).await??;
        let datagram = buffer.get(..n).unwrap_or_default().to_vec();
        // The destination connection id (bytes 6.. of a long header, its
        // length at byte 5) tells a handshake from a resend of one.
        let id_len = usize::from(datagram.get(5).copied().unwrap_or(0));
        let id = datagram.get(6..6 + id_len).unwrap_or_default().to_vec();
        if ids.insert(id) {
            caught.push(datagram);
        }
    }
    for task in connecting {
        task.abort();
    }
    Ok(caught)
}

/// The port of a `https://host:port/wt` URL.
fn port_of(url: &str) -> Result<u16> {
    url.rsplit(':')
        .next()
        .and_then(|rest| rest.split('/').next())
        .and_then(|p| p.parse().ok())
        .with_context(|| format!("no port in {url}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandoned_handshakes_from_many_addresses_hold_no_permits() -> Result<()> {
    // A cap the abandoned handshakes alone would fill three times over.
    let srv = SeparateServer::start(config_with(|c| c.limits.max_connections = 100))?;
    let offer = offer(srv.addr).await?;
    let udp = SocketAddr::from(([127, 0, 0, 1], port_of(&offer.url)?));
    let initials = initials(300).await?;
    // 300 handshakes, each from an address of its own that never answers,
    // in batches the server's socket buffer holds: each batch is waited
    // for (the server answers each with a Retry) before the next.
    let seen = Instant::now() + DEADLINE;
    for batch in 0..30u32 {
        for i in batch * 10..batch * 10 + 10 {
            let source = IpAddr::from([127, 9, (i / 250) as u8, (i % 250) as u8 + 1]);
            let socket = std::net::UdpSocket::bind(SocketAddr::new(source, 0))?;
            socket.send_to(&initials[i as usize], udp)?;
        }
        loop {
            let retries = metric(srv.addr, "skirmish_webtransport_retries_total").await?;
            if retries >= u64::from(batch * 10 + 10) {
                break;
            }
            assert!(
                Instant::now() < seen,
                "the server answered {retries} of {} handshakes",
                batch * 10 + 10
            );
            tokio::task::yield_now().await;
        }
    }

    // Honest players still get in at once, over both transports.
    let started = Instant::now();
    let mut ws = Client::join(srv.addr, "honest-ws", Some("honest")).await?;
    ws.snapshot().await?;
    let mut wt =
        WtClient::join::<Tanks>(&offer, skirmish_tests::next_source(), "honest-wt", "honest")
            .await?;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(1), "admitted after {took:?}");
    assert!(wt.snapshots_within::<Tanks>(Duration::from_secs(1)).await? >= 18);
    assert_eq!(
        metric(
            srv.addr,
            "skirmish_refused_connections_total{reason=\"too_many_connections\"}"
        )
        .await?,
        0
    );
    srv.shutdown()
}
