//! A headless bot: a [`ClientSession`] from core over a real WebSocket,
//! with the network conditioner, driven by a [`Script`].
//!
//! The bot is a shell like the browser client: it owns the clock (Tokio's),
//! the socket and a 60 Hz frame timer, and measures what a player would
//! notice: corrections and snaps, RTT, the gaps between snapshots, bytes.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use anyhow::{Context, Result};
use futures_util::{SinkExt, StreamExt};
use serde::Serialize;
use skirmish_core::LinkConditions;
use skirmish_core::{encode, Encoding, Tick};
use skirmish_core::{ClientSession, Incoming, SessionConfig, SessionEvent};
use tokio::time::{Instant, MissedTickBehavior};
use tokio_tungstenite::tungstenite::Message;

use crate::script::Script;

/// How one bot plays.
#[derive(Clone, Debug)]
pub struct BotOptions {
    /// Display name.
    pub name: String,
    /// Room to join, or the server's choice.
    pub room: Option<String>,
    /// The brain.
    pub script: Script,
    /// Added conditions, bot to server.
    pub up: LinkConditions,
    /// Added conditions, server to bot.
    pub down: LinkConditions,
    /// Seed of the conditioners.
    pub seed: u64,
    /// How long to play.
    pub duration: Duration,
    /// Time between two frames (16 ms is 60 fps; load runs use 50 ms).
    pub frame: Duration,
    /// How the server should send snapshots.
    pub encoding: Encoding,
    /// The loopback address to connect from (a server on 127.0.0.1 then
    /// sees each bot as its own host); `None` lets the system choose.
    pub source: Option<IpAddr>,
}

/// What one bot saw.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BotReport {
    /// Display name.
    pub name: String,
    /// Player id.
    pub id: u32,
    /// Room joined.
    pub room: String,
    /// Seconds played.
    pub seconds: f64,
    /// Inputs predicted and sent.
    pub inputs_sent: u64,
    /// The newest input tick the server acknowledged.
    pub inputs_acked: u32,
    /// Reconciliations with an error above 0.01 u.
    pub mispredictions: u64,
    /// Corrections counted (at or above the dead zone).
    pub corrections: u64,
    /// Snaps.
    pub snaps: u64,
    /// Largest counted correction, units.
    pub max_correction: f32,
    /// Mean counted correction, units.
    pub mean_correction: f32,
    /// Largest reconciliation error of any size, units.
    pub max_error: f32,
    /// Round-trip samples in milliseconds (not serialised; see p50/p99).
    #[serde(skip)]
    pub rtt_ms: Vec<f64>,
    /// Median RTT, ms.
    pub rtt_p50_ms: f64,
    /// 99th percentile RTT, ms.
    pub rtt_p99_ms: f64,
    /// Bytes received per second.
    pub bytes_per_sec: f64,
    /// Snapshots received per second.
    pub snapshots_per_sec: f64,
    /// Largest gap between two snapshot frames, ms.
    pub max_snapshot_gap_ms: f64,
    /// Gaps between snapshot frames, ms (not serialised; see p99).
    #[serde(skip)]
    pub gaps_ms: Vec<f64>,
    /// 99th percentile gap between snapshot frames, ms.
    pub snapshot_gap_p99_ms: f64,
    /// `error` messages received.
    pub errors: u64,
    /// Frames that did not decode.
    pub decode_errors: u64,
}

/// The `p`-th percentile (0..=100) of `values`, 0 when empty.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Plays one bot to the end of its duration.
///
/// # Errors
/// The connection fails or the server closes it.
pub async fn run_bot(addr: SocketAddr, mut options: BotOptions) -> Result<BotReport> {
    let socket = match options.source {
        Some(source) => {
            let tcp = crate::tcp_from(addr, source).await.context("connecting")?;
            crate::websocket_over(addr, tcp).await?
        }
        None => {
            tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
                .await
                .context("connecting")?
                .0
        }
    };
    let (mut sink, mut stream) = socket.split();
    let mut session = ClientSession::new(SessionConfig {
        name: options.name.clone(),
        room: options.room.clone(),
        up: options.up,
        down: options.down,
        seed: options.seed,
        encoding: options.encoding,
        ..SessionConfig::default()
    });
    sink.send(Message::text(encode(&session.hello()))).await?;

    let mut report = BotReport {
        name: options.name.clone(),
        ..BotReport::default()
    };
    let mut frames = tokio::time::interval(options.frame.max(Duration::from_millis(1)));
    frames.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let start = Instant::now();
    let mut last_snapshot: Option<Instant> = None;
    let mut bytes_in = 0u64;
    let mut snapshots = 0u64;
    loop {
        tokio::select! {
            frame = stream.next() => {
                let at = start.elapsed();
                match frame {
                    Some(Ok(Message::Text(text))) => {
                        bytes_in += text.len() as u64;
                        session.receive(Incoming::Text(&text), at);
                    }
                    Some(Ok(Message::Binary(bytes))) => {
                        bytes_in += bytes.len() as u64;
                        session.receive(Incoming::Binary(&bytes), at);
                    }
                    Some(Ok(Message::Close(frame))) => {
                        anyhow::bail!("{}: closed by the server: {frame:?}", options.name)
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => anyhow::bail!("{}: socket error: {e}", options.name),
                    None => anyhow::bail!("{}: connection ended", options.name),
                }
            }
            _ = frames.tick() => {
                let now = Instant::now();
                if now.duration_since(start) >= options.duration {
                    break;
                }
                let arena = session.sim_config().map(|c| c.arena).unwrap_or_default();
                let controls = options.script.controls(&session, arena);
                session.set_controls(controls);
                for message in session.advance(now.duration_since(start)) {
                    sink.send(Message::text(encode(&message))).await?;
                }
            }
        }
        for event in session.events() {
            match event {
                SessionEvent::Snapshot { .. } => {
                    snapshot_arrived(&mut report, &mut last_snapshot, &mut snapshots);
                }
                SessionEvent::Pong { rtt } => report.rtt_ms.push(rtt.as_secs_f64() * 1000.0),
                _ => {}
            }
        }
    }
    let _ = sink.send(Message::Close(None)).await;

    finish(
        &mut report,
        &session,
        start.elapsed().as_secs_f64(),
        bytes_in,
        snapshots,
    );
    Ok(report)
}

/// Records the arrival of a snapshot (when the session handled it: at
/// arrival, or when its down-conditioner let it through).
fn snapshot_arrived(report: &mut BotReport, last: &mut Option<Instant>, count: &mut u64) {
    let now = Instant::now();
    if let Some(last) = *last {
        report
            .gaps_ms
            .push(now.duration_since(last).as_secs_f64() * 1000.0);
    }
    *last = Some(now);
    *count += 1;
}

/// Fills in the figures of a finished run.
fn finish(
    report: &mut BotReport,
    session: &ClientSession,
    seconds: f64,
    bytes: u64,
    snapshots: u64,
) {
    let hud = session.hud();
    let stats = session.local().map(|l| *l.stats()).unwrap_or_default();
    if let Some((id, room)) = hud.joined {
        report.id = id.0;
        report.room = room;
    }
    report.seconds = seconds;
    report.inputs_sent = hud.stats.inputs;
    report.inputs_acked = hud.ack.map_or(0, Tick::get);
    report.mispredictions = stats.mispredictions;
    report.corrections = stats.corrections;
    report.snaps = stats.snaps;
    report.max_correction = stats.max_correction;
    report.mean_correction = if stats.corrections > 0 {
        stats.correction_sum / stats.corrections as f32
    } else {
        0.0
    };
    report.max_error = stats.max_error;
    report.rtt_p50_ms = percentile(&report.rtt_ms, 50.0);
    report.rtt_p99_ms = percentile(&report.rtt_ms, 99.0);
    report.bytes_per_sec = bytes as f64 / seconds;
    report.snapshots_per_sec = snapshots as f64 / seconds;
    report.max_snapshot_gap_ms = report.gaps_ms.iter().copied().fold(0.0, f64::max);
    report.snapshot_gap_p99_ms = percentile(&report.gaps_ms, 99.0);
    report.errors = hud.stats.server_errors;
    report.decode_errors = hud.stats.decode_errors;
}
