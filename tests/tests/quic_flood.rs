//! A QUIC stream flood before `hello`, for real on 127.0.0.1: sixteen
//! connections from one address, each opening every stream it can and
//! writing to it until the window closes, cannot make the server hold more
//! than the transport's windows, and an honest player keeps its snapshots.
//!
//! A test file of its own: it reads the process's resident memory, which no
//! other test may share.

use std::net::IpAddr;
use std::time::Duration;

use anyhow::{Context, Result};
use skirmish_tanks::Tanks;
use skirmish_tests::wt::{bare_session, offer, Offer, WtClient};
use skirmish_tests::{config_with, SeparateServer};
use tokio::time::timeout;

/// The process's resident memory, in bytes.
fn resident() -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmRSS in /proc/self/status")?;
    Ok(kb * 1024)
}

/// What a flooding connection holds open, and the bytes it got in.
type Flood = (usize, wtransport::Connection, Vec<wtransport::SendStream>);

/// One connection's flood: as many streams as the server lets it open,
/// each written until its window closes (or `per_stream` bytes).
async fn flood(offer: &Offer, source: IpAddr, per_stream: usize) -> Result<Flood> {
    let connection = bare_session(offer, Some(source)).await?;
    // The first stream is the one the session reads `hello` from: it is
    // left silent (bytes on it would end the session as a protocol error).
    let (session_stream, _) = connection.open_bi().await?.await?;
    let chunk = vec![0x5a_u8; 16 * 1024];
    let mut written = 0;
    let mut streams = vec![session_stream];
    for i in 0..24 {
        // Opening blocks once the server's stream limit is reached.
        let opened = if i % 2 == 0 {
            timeout(Duration::from_millis(200), async {
                let opening = connection.open_bi().await?;
                Ok::<_, anyhow::Error>(opening.await?.0)
            })
            .await
        } else {
            timeout(Duration::from_millis(200), async {
                let opening = connection.open_uni().await?;
                Ok::<_, anyhow::Error>(opening.await?)
            })
            .await
        };
        let Ok(Ok(mut send)) = opened else {
            continue;
        };
        let mut on_stream = 0;
        while on_stream < per_stream {
            // A write that waits means the window is closed: next stream.
            match timeout(Duration::from_millis(200), send.write(&chunk)).await {
                Ok(Ok(n)) if n > 0 => on_stream += n,
                _ => break,
            }
        }
        written += on_stream;
        streams.push(send);
    }
    Ok((written, connection, streams))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_flood_before_hello_stays_within_the_windows() -> Result<()> {
    let srv = SeparateServer::start(config_with(|c| {
        c.limits.hello_timeout = Duration::from_secs(30);
    }))?;
    let offer = offer(srv.addr).await?;
    let mut honest =
        WtClient::join::<Tanks>(&offer, skirmish_tests::next_source(), "honest-wt", "honest")
            .await?;
    let before = resident()?;
    // Sixteen connections, the most one address may hold.
    let source = skirmish_tests::next_source();
    let floods = (0..16).map(|_| flood(&offer, source, 1 << 20));
    // The connections and streams stay open while memory is read.
    let floods = futures_util::future::try_join_all(floods).await?;
    let written: usize = floods.iter().map(|f| f.0).sum();
    let grown = resident()?.saturating_sub(before);
    eprintln!(
        "the flood wrote {} KB; resident memory grew by {} KB",
        written >> 10,
        grown >> 10
    );
    // The flood got in what the windows allow: the test measures something.
    assert!(written >= 512 << 10, "the flood wrote only {written} bytes");
    assert!(
        grown < 64 << 20,
        "resident memory grew by {} MB while the flood wrote {} MB",
        grown >> 20,
        written >> 20
    );
    let rate = honest
        .snapshots_within::<Tanks>(Duration::from_secs(1))
        .await?;
    assert!(
        rate >= 18,
        "the honest player got {rate} snapshots in a second"
    );
    drop(floods);
    srv.shutdown()
}
