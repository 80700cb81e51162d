//! A smoke test of the netcode over real WebSockets under loss: 16 bots
//! through the conditioner at 150 ms RTT, 30 ms jitter and 5 % loss each
//! way, against the real server, for 4 s. Over a stream a loss is a
//! retransmission: the message and everything behind it wait (at least
//! 200 ms), so inputs behind it can be late and their ticks repeated; what
//! it shows is that the session plays through that, each bot mispredicting
//! only where an input was late or repeated, and that compact snapshots stay
//! small.
//!
//! What it does not show is converged quality: 4 s ends before the input
//! clock widens its margin to the stream's stalls. Run to 20 s (2026-11-26,
//! one test alone, `duration` set to 20 s): input-to-ack p50 496 ms and p99
//! 784 ms at an RTT of 150 ms, late + repeated 11.9 % of inputs (753 of
//! 6,343). Over TCP with 5 % loss the targets are missed; WebTransport
//! datagrams are the transport for lossy networks (`docs/QUALITY.md`).

use std::time::Duration;

use futures_util::future::join_all;
use skirmish_core::{Encoding, LinkConditions};
use skirmish_tests::bot::{percentile, run_bot, BotOptions};
use skirmish_tests::script::{Script, Wander};
use skirmish_tests::{config_with, next_source, open_arena, SeparateServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smoke_sixteen_bots_over_lossy_websockets_mispredict_only_where_inputs_were_late(
) -> anyhow::Result<()> {
    sixteen_bots(Encoding::Json).await.map(|_| ())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn smoke_sixteen_bots_with_compact_snapshots_use_few_bytes() -> anyhow::Result<()> {
    let bytes_per_sec = sixteen_bots(Encoding::Compact).await?;
    // 16 players at 20 snapshots/s: at most 25 bytes per player per snapshot,
    // plus pongs, rosters and frame overhead.
    assert!(
        bytes_per_sec < 16.0 * 25.0 * 20.0 * 1.2,
        "{bytes_per_sec} B/s"
    );
    Ok(())
}

async fn sixteen_bots(encoding: Encoding) -> anyhow::Result<f64> {
    let srv = SeparateServer::start(config_with(|c| {
        c.games.sim = open_arena(6000.0, 6000.0);
    }))?;
    let link = LinkConditions {
        latency_ms: 75.0,
        jitter_ms: 30.0,
        loss: 0.05,
        duplicate: 0.0,
    };
    let bots = (0..16u64).map(|i| {
        run_bot(
            srv.addr,
            BotOptions {
                name: format!("bot{i}"),
                room: Some("quality".into()),
                script: Script::Wander(Wander::new(i)),
                folder: String::new(),
                up: link,
                down: link,
                seed: 500 + i,
                duration: Duration::from_secs(4),
                frame: Duration::from_millis(16),
                encoding,
                source: Some(next_source()),
                transport: skirmish_tests::bot::BotTransport::Websocket,
                via: None,
                resends: 0,
                record: None,
            },
        )
    });
    let reports = join_all(bots)
        .await
        .into_iter()
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut retransmitted = 0;
    let mut acks = Vec::new();
    for r in &reports {
        assert_eq!(r.errors, 0, "{r:?}");
        assert!(
            r.mispredictions <= r.late_inputs + r.repeated_inputs,
            "only where an input was late or repeated: {r:?}"
        );
        // 4 s at 20 steps per second, less the first ones held back while
        // the schedule is set.
        assert!(r.inputs_sent >= 55, "played: {r:?}");
        assert!(r.rtt_p50_ms > 100.0, "the added latency is real: {r:?}");
        retransmitted += r.retransmitted;
        acks.extend_from_slice(&r.ack_ms);
    }
    // The loss was real: streams held messages back for retransmission.
    assert!(retransmitted > 0, "no retransmission happened");
    // A loose bound for a 4 s run (measured 288 to 337 ms): the session is
    // not stuck. It is not the converged figure (see the module docs).
    let p50 = percentile(&acks, 50.0);
    let late: u64 = reports
        .iter()
        .map(|r| r.late_inputs + r.repeated_inputs)
        .sum();
    let sent: u64 = reports.iter().map(|r| r.inputs_sent).sum();
    eprintln!(
        "p50 {p50} p99 {} late+repeated {late}/{sent}",
        percentile(&acks, 99.0)
    );
    assert!(p50 <= 150.0 + 75.0 + 150.0, "input-to-ack p50 {p50} ms");
    srv.shutdown()?;
    Ok(reports.iter().map(|r| r.bytes_per_sec).sum::<f64>() / reports.len() as f64)
}
