//! Light bots: raw WebSocket clients that measure the server, not
//! themselves.
//!
//! A light bot says `hello`, then sends one prebuilt `input` message every
//! tick on time and only counts what arrives: bytes, frames, and the gaps
//! between snapshots. It never decodes a snapshot (a compact snapshot is
//! any binary frame; a JSON one is a text frame that starts like one), so a
//! thread drives hundreds of them and the machine's cores go to the server.
//! Each bot connects from its own loopback address when the server is on
//! loopback, as players on their own hosts would.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use futures_util::{SinkExt, StreamExt};
use serde::Serialize;
use skirmish_core::{delta, Tick};
use tokio::sync::Barrier;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_tungstenite::tungstenite::Message;

use crate::bot::percentile;
use crate::{next_source, tcp_from, websocket_over};

/// How a run of light bots goes.
#[derive(Clone, Debug)]
pub struct LightOptions {
    /// The server.
    pub addr: SocketAddr,
    /// How many bots.
    pub bots: usize,
    /// Spread over this many rooms (`bots-0`, `bots-1`, ...).
    pub rooms: usize,
    /// Threads, each with its own single-threaded runtime.
    pub threads: usize,
    /// Seconds after everyone joined before measuring.
    pub warmup: Duration,
    /// Seconds measured.
    pub duration: Duration,
    /// Ask for compact binary snapshots.
    pub compact: bool,
    /// Acknowledge each binary snapshot's tick (read from bytes 1..5), so
    /// the server sends deltas.
    pub ack: bool,
    /// The tick length: one input per tick.
    pub tick: Duration,
}

/// What all light bots measured in the window.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LightReport {
    /// Bots that joined and played the window.
    pub bots: usize,
    /// Bots that failed (could not join, or were dropped).
    pub failed: usize,
    /// The window, in seconds.
    pub seconds: f64,
    /// Snapshots per second per bot.
    pub snapshots_per_sec: f64,
    /// Bytes received per second per bot.
    pub bytes_per_client_per_sec: f64,
    /// Gap between consecutive snapshots of one bot, 50th percentile, ms.
    pub snapshot_gap_p50_ms: f64,
    /// 99th percentile, ms.
    pub snapshot_gap_p99_ms: f64,
    /// The largest gap, ms.
    pub max_snapshot_gap_ms: f64,
    /// Inputs sent per second per bot.
    pub inputs_per_sec: f64,
    /// The first few failures, for humans.
    pub errors: Vec<String>,
}

/// What one bot counted in the window.
#[derive(Default)]
struct Counted {
    snapshots: u64,
    bytes: u64,
    inputs: u64,
    gaps_ms: Vec<f64>,
}

/// Runs the bots and returns what they measured.
///
/// # Errors
/// A runtime cannot be built (a bot that fails is counted, not an error).
pub fn run(options: &LightOptions) -> Result<LightReport> {
    let threads = options.threads.clamp(1, options.bots.max(1));
    // Every bot joins, then waits here, so the window starts together.
    let joined = Arc::new(Barrier::new(options.bots + 1));
    let mut handles = Vec::new();
    for t in 0..threads {
        let options = options.clone();
        let joined = joined.clone();
        let mine: Vec<usize> = (t..options.bots).step_by(threads).collect();
        handles.push(std::thread::spawn(
            move || -> Result<Vec<Result<Counted>>> {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                runtime.block_on(async move {
                    let tasks: Vec<_> = mine
                        .into_iter()
                        .map(|i| tokio::spawn(bot(options.clone(), i, joined.clone())))
                        .collect();
                    let mut out = Vec::new();
                    for task in tasks {
                        out.push(
                            task.await
                                .unwrap_or_else(|e| Err(anyhow!("bot panicked: {e}"))),
                        );
                    }
                    Ok(out)
                })
            },
        ));
    }
    let coordinator = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    coordinator.block_on(joined.wait());
    eprintln!(
        "light bots: {} joined; warming up {:?}, measuring {:?}",
        options.bots, options.warmup, options.duration
    );
    let mut counted = Vec::new();
    let mut report = LightReport {
        seconds: options.duration.as_secs_f64(),
        ..LightReport::default()
    };
    for handle in handles {
        let results = handle
            .join()
            .map_err(|_| anyhow!("a bot thread panicked"))??;
        for result in results {
            match result {
                Ok(c) => counted.push(c),
                Err(e) => {
                    report.failed += 1;
                    if report.errors.len() < 5 {
                        report.errors.push(format!("{e:#}"));
                    }
                }
            }
        }
    }
    summarise(&mut report, &counted);
    Ok(report)
}

fn summarise(report: &mut LightReport, counted: &[Counted]) {
    let n = counted.len().max(1) as f64;
    let secs = report.seconds.max(1e-9);
    report.bots = counted.len();
    report.snapshots_per_sec = counted.iter().map(|c| c.snapshots as f64).sum::<f64>() / n / secs;
    report.bytes_per_client_per_sec =
        counted.iter().map(|c| c.bytes as f64).sum::<f64>() / n / secs;
    report.inputs_per_sec = counted.iter().map(|c| c.inputs as f64).sum::<f64>() / n / secs;
    let gaps: Vec<f64> = counted
        .iter()
        .flat_map(|c| c.gaps_ms.iter().copied())
        .collect();
    report.snapshot_gap_p50_ms = percentile(&gaps, 50.0);
    report.snapshot_gap_p99_ms = percentile(&gaps, 99.0);
    report.max_snapshot_gap_ms = gaps.iter().copied().fold(0.0, f64::max);
}

/// One light bot: join, wait for everyone, play the window.
async fn bot(options: LightOptions, index: usize, joined: Arc<Barrier>) -> Result<Counted> {
    let result = join(&options, index).await;
    // Wait for the others even after a failure, or nobody would start.
    joined.wait().await;
    let socket = result?;
    play(&options, index, socket).await
}

type Socket = crate::Socket;

async fn join(options: &LightOptions, index: usize) -> Result<Socket> {
    let tcp = if options.addr.ip().is_loopback() {
        tcp_from(options.addr, next_source()).await
    } else {
        tcp_from(options.addr, IpAddr::from([0, 0, 0, 0])).await
    }
    .context("connecting")?;
    let mut socket = websocket_over(options.addr, tcp).await?;
    let encoding = if options.compact {
        r#","encoding":"compact""#
    } else {
        ""
    };
    let room = index % options.rooms.max(1);
    let hello = format!(
        r#"{{"type":"hello","name":"light{index}","protocol":1,"room":"bots-{room}"{encoding}}}"#
    );
    socket.send(Message::text(hello)).await?;
    loop {
        match tokio::time::timeout(crate::DEADLINE, socket.next()).await {
            Ok(Some(Ok(Message::Text(text)))) if text.starts_with(r#"{"type":"welcome""#) => {
                return Ok(socket)
            }
            Ok(Some(Ok(Message::Text(text)))) if text.starts_with(r#"{"type":"error""#) => {
                bail!("refused: {text}")
            }
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(e))) => bail!("socket error before welcome: {e}"),
            Ok(None) => bail!("closed before welcome"),
            Err(_) => bail!("no welcome within {:?}", crate::DEADLINE),
        }
    }
}

/// Sends one input per tick and counts what arrives, through the warmup
/// and the window; only the window is counted.
async fn play(options: &LightOptions, index: usize, socket: Socket) -> Result<Counted> {
    let (mut sink, mut stream) = socket.split();
    let start = Instant::now();
    let measure_from = start + options.warmup;
    let end = measure_from + options.duration;
    // Spread the bots' sends over the tick, as real clients would be.
    let phase = options.tick.mul_f64((index % 97) as f64 / 97.0);
    let mut inputs = tokio::time::interval_at(start + phase, options.tick);
    inputs.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut counted = Counted::default();
    let mut last_snapshot: Option<Instant> = None;
    let mut tick: u32 = 0;
    let mut acked: Option<Tick> = None;
    loop {
        tokio::select! {
            at = inputs.tick() => {
                if at >= end {
                    break;
                }
                tick += 1;
                let ack = match acked.filter(|_| options.ack) {
                    Some(t) => format!(r#","snapshot_ack":{}"#, t.0),
                    None => String::new(),
                };
                let text = format!(
                    r#"{{"type":"input","inputs":[{{"tick":{tick},"turn":0.25,"throttle":1}}]{ack}}}"#
                );
                sink.send(Message::text(text)).await?;
                if at >= measure_from {
                    counted.inputs += 1;
                }
            }
            frame = stream.next() => {
                let now = Instant::now();
                let (len, snapshot) = match frame {
                    Some(Ok(Message::Binary(bytes))) => {
                        acked = acked.max(delta::frame_tick(&bytes));
                        (bytes.len(), true)
                    }
                    Some(Ok(Message::Text(text))) => {
                        if text.starts_with(r#"{"type":"error""#) {
                            bail!("server error: {text}");
                        }
                        (text.len(), text.starts_with(r#"{"type":"snapshot""#))
                    }
                    Some(Ok(Message::Close(frame))) => bail!("closed by the server: {frame:?}"),
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => bail!("socket error: {e}"),
                    None => bail!("connection ended"),
                };
                if now < measure_from || now >= end {
                    if snapshot {
                        last_snapshot = Some(now);
                    }
                    continue;
                }
                counted.bytes += len as u64;
                if snapshot {
                    counted.snapshots += 1;
                    if let Some(last) = last_snapshot {
                        counted.gaps_ms.push((now - last).as_secs_f64() * 1000.0);
                    }
                    last_snapshot = Some(now);
                }
            }
        }
    }
    let _ = sink.close().await;
    Ok(counted)
}

/// Parses a `--light` run's summary line back (for `cargo xtask bench`).
pub fn summary_line(report: &LightReport) -> String {
    format!(
        "summary bots={} failed={} snapshots_per_sec={:.3} bytes_per_client_per_sec={:.1} snapshot_gap_p50_ms={:.2} snapshot_gap_p99_ms={:.2} max_snapshot_gap_ms={:.2} inputs_per_sec={:.3}",
        report.bots,
        report.failed,
        report.snapshots_per_sec,
        report.bytes_per_client_per_sec,
        report.snapshot_gap_p50_ms,
        report.snapshot_gap_p99_ms,
        report.max_snapshot_gap_ms,
        report.inputs_per_sec
    )
}
