//! Chaos against the real server: while 16 well-behaved bots play, other
//! clients flood, send garbage, stop reading, drop mid-frame and reconnect
//! in a loop. The bots' snapshot rate and counters must not change.
//!
//! One test per binary, so nothing else competes for the two cores.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::future::join_all;
use skirmish_core::{ClientMessage, LinkConditions};
use skirmish_tests::bot::{run_bot, BotOptions, BotReport};
use skirmish_tests::script::{Script, Wander};
use skirmish_tests::{config_with, input, next_source, open_arena, Client, SeparateServer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::watch;

const ROOM: &str = "arena";
const PLAY: Duration = Duration::from_secs(4);

async fn good_bots(addr: SocketAddr, conditions: LinkConditions) -> Vec<BotReport> {
    let bots = (0..16u64).map(|i| {
        run_bot(
            addr,
            BotOptions {
                name: format!("good{i}"),
                room: Some(ROOM.into()),
                script: Script::Wander(Wander::new(50 + i)),
                folder: String::new(),
                up: conditions,
                down: conditions,
                seed: 70 + i,
                duration: PLAY,
                frame: Duration::from_millis(16),
                encoding: skirmish_core::Encoding::Json,
                source: Some(next_source()),
                transport: skirmish_tests::bot::BotTransport::Websocket,
                via: None,
                resends: 0,
                record: None,
            },
        )
    });
    let results = join_all(bots).await;
    let failed: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err().map(|e| format!("{e:#}")))
        .collect();
    if !failed.is_empty() {
        let metrics = skirmish_tests::http_get(addr, "/metrics")
            .await
            .unwrap_or_default();
        let disconnects: Vec<&str> = metrics
            .lines()
            .filter(|l| l.starts_with("skirmish_disconnects_total{"))
            .collect();
        panic!("good bots failed: {failed:?}\n{disconnects:#?}");
    }
    results.into_iter().filter_map(Result::ok).collect()
}

/// Runs `f` in a loop, at most 20 times a second (an attacker on a real
/// network, not a local fork bomb), until `stop` says so; errors are part
/// of the chaos.
fn chaos<F, Fut>(stop: &watch::Receiver<bool>, mut f: F) -> tokio::task::JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let mut stop = stop.clone();
    tokio::spawn(async move {
        let mut pace = tokio::time::interval(Duration::from_millis(50));
        while !*stop.borrow() {
            tokio::select! {
                _ = async { pace.tick().await; f().await } => {}
                _ = stop.changed() => {}
            }
        }
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_bots_keep_their_rate_and_counters_through_chaos() -> anyhow::Result<()> {
    let srv = SeparateServer::start(config_with(|c| {
        c.games.sim = open_arena(6000.0, 6000.0);
    }))?;
    let addr = srv.addr;
    let (stop_tx, stop) = watch::channel(false);
    let mut chaos_tasks = vec![
        // A flooder: far more than 60 valid messages a second.
        chaos(&stop, move || async move {
            let mut c = Client::join(addr, "flood", Some(ROOM)).await?;
            for i in 0..500u32 {
                c.send(&ClientMessage::Ping { id: u64::from(i) }).await?;
                c.inputs(vec![input(i + 1, 1.0, 1.0, true)]).await?;
            }
            c.close().await
        }),
        // Garbage of every kind, then a reconnect.
        chaos(&stop, move || async move {
            let mut c = Client::join(addr, "garbage", Some(ROOM)).await?;
            for _ in 0..20 {
                c.send_text("\u{0}\u{1}not json").await?;
                c.send_binary(vec![0xff; 64]).await?;
                c.send_text("x".repeat(9000)).await?;
            }
            Ok(())
        }),
        // Joins and never reads.
        chaos(&stop, move || async move {
            let mut c = Client::connect_small_buffer(addr).await?;
            c.hello("sleeper", Some(ROOM)).await?;
            // Never read; the server drops it as a slow consumer, then the
            // next send fails and the loop reconnects.
            loop {
                c.send(&ClientMessage::Ping { id: 0 }).await?;
                tokio::task::yield_now().await;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }),
        // Drops mid-frame: half a WebSocket handshake, or half a frame.
        chaos(&stop, move || async move {
            let mut tcp = TcpStream::connect(addr).await?;
            tcp.write_all(b"GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n")
                .await?;
            drop(tcp);
            let mut c = Client::join(addr, "dropper", Some(ROOM)).await?;
            c.send_text("{\"type\":\"ping\",").await?;
            drop(c);
            Ok(())
        }),
        // Reconnects in a loop.
        chaos(&stop, move || async move {
            let c = Client::join(addr, "churn", Some(ROOM)).await?;
            c.close().await
        }),
    ];
    let reports = good_bots(addr, LinkConditions::default()).await;
    stop_tx.send(true)?;
    for task in chaos_tasks.drain(..) {
        let _ = task.await;
    }

    for r in &reports {
        assert!(
            (18.0..=22.0).contains(&r.snapshots_per_sec),
            "{}: {} snapshots/s",
            r.name,
            r.snapshots_per_sec
        );
        assert!(
            r.snapshot_gap_p99_ms < 120.0,
            "{}: p99 gap {} ms",
            r.name,
            r.snapshot_gap_p99_ms
        );
        assert_eq!((r.errors, r.decode_errors, r.snaps), (0, 0, 0), "{r:?}");
        assert!(r.max_error < 2.0, "{r:?}");
        assert!(u64::from(r.inputs_acked) + 10 >= r.inputs_sent, "{r:?}");
    }
    let metrics = skirmish_tests::http_get(addr, "/metrics").await?;
    // Protocol 2: a bot mispredicts only where its own input was late or
    // repeated, or where the server pushed it apart from another player
    // (a chaos client spawning on it, a graze), which its prediction cannot
    // know: every misprediction beyond the first kind is explained by a
    // counted push, none is tolerated.
    let pushes = metrics
        .lines()
        .find_map(|l| l.strip_prefix("skirmish_player_pushes_total "))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .ok_or_else(|| anyhow::anyhow!("no skirmish_player_pushes_total"))?;
    let unexplained: u64 = reports
        .iter()
        .map(|r| {
            r.mispredictions
                .saturating_sub(r.late_inputs + r.repeated_inputs)
        })
        .sum();
    assert!(
        unexplained <= 2 * pushes,
        "{unexplained} mispredictions beyond late and repeated inputs, {pushes} pushes: {reports:?}"
    );
    for code in ["rate_limited", "bad_message", "binary_frame", "too_large"] {
        let name = format!("skirmish_rejected_messages_total{{code=\"{code}\"}}");
        let count = metrics
            .lines()
            .find_map(|l| l.strip_prefix(name.as_str()))
            .and_then(|value| value.trim().parse::<u64>().ok());
        // A missing or unreadable line fails as surely as a zero.
        assert!(
            count.is_some_and(|n| n > 0),
            "chaos was not counted as {code}: {count:?}"
        );
    }
    srv.shutdown()
}
