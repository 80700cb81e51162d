//! A headless bot: a [`ClientSession`] from core over a real WebSocket or
//! WebTransport, with the network conditioner, driven by any game's
//! [`Driver`] ([`run_bot`]).
//!
//! The bot is a shell like the browser client: it owns the clock (Tokio's),
//! the socket and a 60 Hz frame timer, and measures what a player would
//! notice: corrections and snaps, RTT, the gaps between snapshots, bytes.

use std::collections::VecDeque;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use anyhow::{Context, Result};
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use serde::Serialize;
use skirmish_core::framing::StreamMessage;
use skirmish_core::{delta, ClientGame, ClientMessage, ClientSession, SessionEvent};
use skirmish_core::{Delivery, Driver, Encoding, Frame, Incoming, LinkConditions};
use skirmish_core::{NoteOf, SessionConfig, Tick, DEFAULT_RECORDING_LIMIT};
use tokio::time::{Instant, MissedTickBehavior};
use tokio_tungstenite::tungstenite::Message;

use crate::net::{tcp_from, websocket_at, Socket};
use crate::wt::WtClient;

/// How one bot plays, driven by `D` (a game's [`Driver`]).
#[derive(Clone, Debug)]
pub struct BotOptions<D> {
    /// Display name.
    pub name: String,
    /// Room to join, or the server's choice.
    pub room: Option<String>,
    /// The brain.
    pub script: D,
    /// The folder of the game on the server: `""` for the game at its
    /// root (`/ws`), `dots` for a game at `/dots/ws`.
    pub folder: String,
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
    /// WebSocket or WebTransport.
    pub transport: BotTransport,
    /// Connect through this relay instead of straight to the server: a
    /// TCP relay for the WebSocket, a UDP relay for WebTransport (the
    /// offer still comes from the server).
    pub via: Option<SocketAddr>,
    /// Resends per input message while snapshots are lost (protocol 2,
    /// datagrams).
    pub resends: u32,
    /// Record the session (the flight recorder) into this file when the
    /// bot stops, whether it played to the end or failed.
    pub record: Option<std::path::PathBuf>,
}

/// What a bot connects over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BotTransport {
    /// A WebSocket (TCP).
    #[default]
    Websocket,
    /// WebTransport (QUIC datagrams).
    Webtransport,
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
    /// Bytes of the messages sent per second (resends included).
    pub up_bytes_per_sec: f64,
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
    /// Transport used.
    pub transport: BotTransport,
    /// From sending an input to the first snapshot acknowledging it, ms
    /// (not serialised; see p50/p99).
    #[serde(skip)]
    pub ack_ms: Vec<f64>,
    /// Median input-to-acknowledgement time, ms.
    pub input_to_ack_p50_ms: f64,
    /// 99th percentile input-to-acknowledgement time, ms.
    pub input_to_ack_p99_ms: f64,
    /// Slack reports (protocol 2), ms (not serialised; see p50).
    #[serde(skip)]
    pub slack_ms: Vec<f64>,
    /// Median slack: how long before their tick inputs arrived, ms.
    pub slack_p50_ms: f64,
    /// Inputs the server counted late (arrived after their tick).
    pub late_inputs: u64,
    /// Ticks the server simulated with a repeated input (own one missing).
    pub repeated_inputs: u64,
    /// Jumps of the input schedule after the first.
    pub hard_resyncs: u64,
    /// Input messages sent again while loss was seen.
    pub input_resends: u64,
    /// Messages the conditioner held back for a stream retransmission
    /// (both ways; WebSocket only).
    pub retransmitted: u64,
    /// When each input was acknowledged, and after how long (ms), for
    /// windows over a run (not serialised).
    #[serde(skip)]
    pub acked_at: Vec<(Instant, f64)>,
    /// When each late input was reported (not serialised).
    #[serde(skip)]
    pub late_at: Vec<Instant>,
    /// Each binary snapshot's server tick and when it arrived (not
    /// serialised): how late each came beyond the fastest.
    #[serde(skip)]
    pub snapshot_ticks: Vec<(u32, Instant)>,
    /// Binary snapshots that came on the reliable stream rather than as
    /// datagrams (WebTransport): a frame too large for a datagram.
    pub snapshots_on_stream: u64,
    /// The largest binary snapshot frame, bytes.
    pub largest_snapshot: usize,
}

pub use skirmish_core::percentile;

impl<D> BotOptions<D> {
    /// The same options with another brain.
    pub fn driven_by<E>(self, driver: E) -> BotOptions<E> {
        BotOptions {
            name: self.name,
            room: self.room,
            script: driver,
            folder: self.folder,
            up: self.up,
            down: self.down,
            seed: self.seed,
            duration: self.duration,
            frame: self.frame,
            encoding: self.encoding,
            source: self.source,
            transport: self.transport,
            via: self.via,
            resends: self.resends,
            record: self.record,
        }
    }
}

/// Plays one bot of game `G`, driven by the options' brain, to the end of
/// its duration. A brain lent (`&mut D`) drives as itself, and is there
/// to look at after.
///
/// # Errors
/// The connection fails or the server closes it.
pub async fn run_bot<G: ClientGame, D: Driver<G>>(
    addr: SocketAddr,
    mut options: BotOptions<D>,
) -> Result<BotReport> {
    let link = Link::open(addr, &Route::of(&options)).await?;
    let config = SessionConfig {
        name: options.name.clone(),
        room: options.room.clone(),
        up: options.up,
        down: options.down,
        seed: options.seed,
        encoding: options.encoding,
        resends: options.resends,
        ..SessionConfig::default()
    };
    let mut session = match options.record {
        Some(_) => ClientSession::<G>::recorded(config, DEFAULT_RECORDING_LIMIT),
        None => ClientSession::<G>::new(config),
    };
    let played = play(link, &mut session, &mut options).await;
    if let (Some(path), Some(recording)) = (&options.record, session.recording()) {
        std::fs::write(path, recording.bytes())
            .with_context(|| format!("writing the recording {}", path.display()))?;
    }
    played
}

/// The bot's loop, from `hello` to the end of its time.
async fn play<G: ClientGame, D: Driver<G>>(
    mut link: Link,
    session: &mut ClientSession<G>,
    options: &mut BotOptions<D>,
) -> Result<BotReport> {
    // The conditioner models what the transport would do with loss.
    session.set_delivery(match options.transport {
        BotTransport::Websocket => Delivery::Stream,
        BotTransport::Webtransport => Delivery::Datagrams,
    });
    link.send(&session.hello(), session.encode(&session.hello()))
        .await?;

    let mut report = BotReport {
        name: options.name.clone(),
        transport: options.transport,
        ..BotReport::default()
    };
    let mut frames = tokio::time::interval(options.frame.max(Duration::from_millis(1)));
    frames.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let start = Instant::now();
    let mut last_snapshot: Option<Instant> = None;
    let mut bytes_in = 0u64;
    let mut bytes_out = 0u64;
    let mut snapshots = 0u64;
    // Inputs sent and not yet acknowledged: (tick, when).
    let mut unacked: VecDeque<(u32, Instant)> = VecDeque::new();
    loop {
        tokio::select! {
            frame = link.recv() => {
                let at = start.elapsed();
                match frame? {
                    Payload::Text(text) => {
                        bytes_in += text.len() as u64;
                        session.receive(Incoming::Text(&text), at);
                    }
                    Payload::Binary(bytes, datagram) => {
                        bytes_in += bytes.len() as u64;
                        if let Some(tick) = delta::frame_tick(&bytes) {
                            report.snapshot_ticks.push((tick.0, Instant::now()));
                            report.snapshots_on_stream += u64::from(!datagram);
                            report.largest_snapshot = report.largest_snapshot.max(bytes.len());
                        }
                        session.receive(Incoming::Binary(&bytes), at);
                    }
                }
            }
            _ = frames.tick() => {
                let now = Instant::now();
                if now.duration_since(start) >= options.duration {
                    break;
                }
                let controls = session
                    .game_config()
                    .cloned()
                    .map(|config| options.script.controls(session, &config))
                    .unwrap_or_default();
                session.set_controls(controls);
                for message in session.advance(now.duration_since(start)) {
                    let frame = session.encode(&message);
                    bytes_out += match &frame {
                        Frame::Text(text) => text.len(),
                        Frame::Binary(bytes) => bytes.len(),
                    } as u64;
                    link.send(&message, frame).await?;
                }
            }
        }
        let events: Vec<SessionEvent<NoteOf<G>>> = session.events().collect();
        for event in events {
            if let SessionEvent::Snapshot { .. } = event {
                snapshot_arrived(&mut report, &mut last_snapshot, &mut snapshots);
            } else {
                observe(&event, session, &mut report, &mut unacked);
            }
        }
    }
    link.close().await;

    let seconds = start.elapsed().as_secs_f64();
    report.up_bytes_per_sec = bytes_out as f64 / seconds;
    finish(&mut report, session, seconds, bytes_in, snapshots);
    Ok(report)
}

/// One frame from the server.
enum Payload {
    Text(String),
    /// The bytes, and whether they came as a datagram.
    Binary(Vec<u8>, bool),
}

/// How a bot reaches its game: what [`Link::open`] reads of its options
/// (not its brain, which need not be shared across threads).
struct Route {
    transport: BotTransport,
    via: Option<SocketAddr>,
    source: Option<IpAddr>,
    folder: String,
}

impl Route {
    fn of<D>(options: &BotOptions<D>) -> Route {
        Route {
            transport: options.transport,
            via: options.via,
            source: options.source,
            folder: options.folder.clone(),
        }
    }
}

/// A bot's connection, over either transport.
enum Link {
    WebSocket(SplitSink<Socket, Message>, SplitStream<Socket>),
    WebTransport(Box<WtClient>),
}

impl Link {
    async fn open(addr: SocketAddr, options: &Route) -> Result<Link> {
        match options.transport {
            BotTransport::Websocket => {
                let target = options.via.unwrap_or(addr);
                let tcp = match options.source {
                    Some(source) => tcp_from(target, source).await.context("connecting")?,
                    None => tokio::net::TcpStream::connect(target)
                        .await
                        .context("connecting")?,
                };
                let (sink, stream) = websocket_at(addr, &options.folder, tcp).await?.split();
                Ok(Link::WebSocket(sink, stream))
            }
            BotTransport::Webtransport => {
                let mut offer = crate::wt::offer_for(addr, &options.folder).await?;
                if let Some(via) = options.via {
                    offer.url = match options.folder.as_str() {
                        "" => format!("https://{via}/wt"),
                        folder => format!("https://{via}/{folder}/wt"),
                    };
                }
                // A handshake can fail on a lossy path; try a few times, as
                // the page's reconnection would.
                let mut tries = 0;
                loop {
                    tries += 1;
                    match WtClient::connect(&offer, options.source).await {
                        Ok(client) => return Ok(Link::WebTransport(Box::new(client))),
                        Err(e) if tries >= 3 => return Err(e),
                        Err(_) => {}
                    }
                }
            }
        }
    }

    /// Sends `message`, encoded as `frame` (inputs and pings as datagrams
    /// over WebTransport).
    async fn send<W>(&mut self, message: &ClientMessage<W>, frame: Frame) -> Result<()> {
        match self {
            Link::WebSocket(sink, _) => {
                let message = match frame {
                    Frame::Text(text) => Message::text(text),
                    Frame::Binary(bytes) => Message::binary(bytes),
                };
                sink.send(message).await?;
            }
            // A datagram too large for the path is dropped like a lost one;
            // the next input carries the same inputs.
            Link::WebTransport(wt) => match (message, &frame) {
                (ClientMessage::Hello { .. }, Frame::Text(text)) => wt.send_reliable(text).await?,
                (ClientMessage::Hello { .. }, Frame::Binary(bytes)) => {
                    wt.send_reliable_frame(false, bytes).await?;
                }
                (_, Frame::Text(text)) => {
                    let _ = wt.send_datagram(text.as_bytes());
                }
                (_, Frame::Binary(bytes)) => {
                    let _ = wt.send_datagram(bytes);
                }
            },
        }
        Ok(())
    }

    async fn recv(&mut self) -> Result<Payload> {
        match self {
            Link::WebSocket(_, stream) => loop {
                match stream.next().await {
                    Some(Ok(Message::Text(text))) => return Ok(Payload::Text(text.to_string())),
                    Some(Ok(Message::Binary(bytes))) => {
                        return Ok(Payload::Binary(bytes.to_vec(), false))
                    }
                    Some(Ok(Message::Close(frame))) => {
                        anyhow::bail!("closed by the server: {frame:?}")
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => anyhow::bail!("socket error: {e}"),
                    None => anyhow::bail!("connection ended"),
                }
            },
            Link::WebTransport(wt) => match wt.next().await? {
                Some(received) => Ok(match received.message {
                    StreamMessage::Text(text) => Payload::Text(text),
                    StreamMessage::Binary(bytes) => Payload::Binary(bytes, received.datagram),
                }),
                None => anyhow::bail!("closed by the server: {}", wt.closed().await),
            },
        }
    }

    async fn close(self) {
        match self {
            Link::WebSocket(mut sink, _) => {
                let _ = sink.send(Message::Close(None)).await;
            }
            Link::WebTransport(_) => {}
        }
    }
}

/// Records what an event (other than a snapshot) says about timing: RTT,
/// slack, late inputs, input-to-acknowledgement.
fn observe<G: ClientGame>(
    event: &SessionEvent<NoteOf<G>>,
    session: &ClientSession<G>,
    report: &mut BotReport,
    unacked: &mut VecDeque<(u32, Instant)>,
) {
    match event {
        SessionEvent::Pong { rtt } => report.rtt_ms.push(rtt.as_secs_f64() * 1000.0),
        SessionEvent::Timing(timing) => {
            if timing.tick.is_some() {
                report.slack_ms.push(f64::from(timing.slack_ms));
            }
            let late = session.hud().pacing.late as usize;
            while report.late_at.len() < late {
                report.late_at.push(Instant::now());
            }
        }
        SessionEvent::StepPredicted { tick, .. } => {
            unacked.push_back((tick.0, Instant::now()));
        }
        SessionEvent::Reconciled { .. } => {
            let ack = session.hud().ack.map_or(0, Tick::get);
            while let Some(&(tick, sent)) = unacked.front() {
                if tick > ack {
                    break;
                }
                unacked.pop_front();
                let ms = sent.elapsed().as_secs_f64() * 1000.0;
                report.ack_ms.push(ms);
                report.acked_at.push((Instant::now(), ms));
            }
        }
        _ => {}
    }
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
fn finish<G: ClientGame>(
    report: &mut BotReport,
    session: &ClientSession<G>,
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
    report.input_to_ack_p50_ms = percentile(&report.ack_ms, 50.0);
    report.input_to_ack_p99_ms = percentile(&report.ack_ms, 99.0);
    report.slack_p50_ms = percentile(&report.slack_ms, 50.0);
    report.late_inputs = hud.pacing.late;
    report.repeated_inputs = hud.pacing.repeated;
    report.hard_resyncs = hud.pacing.resyncs;
    report.input_resends = hud.stats.resends;
    report.retransmitted = hud.up.retransmitted + hud.down.retransmitted;
}
