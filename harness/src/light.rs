//! Light bots for any game: raw clients that load the server, not
//! themselves, over WebSocket or WebTransport.
//!
//! A light bot says a binary `hello` naming its game (name, version and
//! wire shape), then sends one binary `input` message every tick, made by
//! the game's own seeded inputs ([`Harness::seeded_input`]: a blob steers
//! somewhere new now and then, so views change as players' do), and
//! acknowledges the newest snapshot it got, so the server sends deltas as
//! it does to a page. It never decodes a snapshot: it counts bytes,
//! frames and the gaps between snapshots, so one thread drives hundreds
//! and the machine's cores go to the server. Each bot connects from its
//! own loopback address when the server is on loopback, as players on
//! their own hosts would. Over WebTransport the hello goes on the stream
//! and the inputs as datagrams, as a page sends them; the snapshots come
//! as the server sends them (datagrams, or the stream for a large one).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use futures_util::{SinkExt, StreamExt};
use serde::Serialize;
use skirmish_core::{
    control, delta, encode_inputs, ClientMessage, Encoding, GameId, Harness, SeededRng, Tick, Wired,
};
use tokio::sync::Barrier;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_tungstenite::tungstenite::Message;

use skirmish_core::framing::StreamMessage;

use crate::bot::BotTransport;
use crate::net::{next_source, tcp_from, websocket_at, Socket, DEADLINE};
use crate::wt::{offer_for, Offer, WtClient};

/// How a run of light bots goes.
#[derive(Clone, Debug)]
pub struct LightOptions {
    /// The server.
    pub addr: SocketAddr,
    /// The game's folder on the server (`""`: the game at its root).
    pub folder: String,
    /// How many bots.
    pub bots: usize,
    /// Spread over this many rooms (`light-0`, `light-1`, ...).
    pub rooms: usize,
    /// Threads, each with its own single-threaded runtime.
    pub threads: usize,
    /// After everyone joined, before measuring.
    pub warmup: Duration,
    /// Measured.
    pub duration: Duration,
    /// The tick length: one input per tick.
    pub tick: Duration,
    /// Seeds each bot's inputs (bot `i` draws from `seed + i`).
    pub seed: u64,
    /// A WebSocket each (`/ws`), or a WebTransport session each on the
    /// server's offer.
    pub transport: BotTransport,
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
    /// Bytes per snapshot, on average.
    pub bytes_per_snapshot: f64,
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

impl LightReport {
    /// One line, `key=value` pairs, for scripts.
    pub fn summary_line(&self) -> String {
        format!(
            "summary bots={} failed={} snapshots_per_sec={:.3} bytes_per_client_per_sec={:.1} \
             bytes_per_snapshot={:.1} snapshot_gap_p50_ms={:.2} snapshot_gap_p99_ms={:.2} \
             max_snapshot_gap_ms={:.2} inputs_per_sec={:.3}",
            self.bots,
            self.failed,
            self.snapshots_per_sec,
            self.bytes_per_client_per_sec,
            self.bytes_per_snapshot,
            self.snapshot_gap_p50_ms,
            self.snapshot_gap_p99_ms,
            self.max_snapshot_gap_ms,
            self.inputs_per_sec
        )
    }
}

/// What one bot counted in the window.
#[derive(Default)]
struct Counted {
    snapshots: u64,
    bytes: u64,
    snapshot_bytes: u64,
    inputs: u64,
    gaps_ms: Vec<f64>,
}

/// Runs light bots of game `G` and returns what they measured.
///
/// # Errors
/// A runtime cannot be built (a bot that fails is counted, not an error).
pub fn run<G: Harness>(options: &LightOptions) -> Result<LightReport> {
    let threads = options.threads.clamp(1, options.bots.max(1));
    let coordinator = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // One offer for every bot: the server limits requests per address.
    let offer = match options.transport {
        BotTransport::Websocket => None,
        BotTransport::Webtransport => Some(Arc::new(
            coordinator.block_on(offer_for(options.addr, &options.folder))?,
        )),
    };
    // Every bot joins, then waits here, so the window starts together.
    let joined = Arc::new(Barrier::new(options.bots + 1));
    let mut handles = Vec::new();
    for t in 0..threads {
        let options = options.clone();
        let joined = joined.clone();
        let offer = offer.clone();
        let mine: Vec<usize> = (t..options.bots).step_by(threads).collect();
        handles.push(std::thread::spawn(
            move || -> Result<Vec<Result<Counted>>> {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                runtime.block_on(async move {
                    let tasks: Vec<_> = mine
                        .into_iter()
                        .map(|i| {
                            tokio::spawn(bot::<G>(
                                options.clone(),
                                i,
                                joined.clone(),
                                offer.clone(),
                            ))
                        })
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
    let sum = |f: fn(&Counted) -> u64| counted.iter().map(|c| f(c) as f64).sum::<f64>();
    report.bots = counted.len();
    report.snapshots_per_sec = sum(|c| c.snapshots) / n / secs;
    report.bytes_per_client_per_sec = sum(|c| c.bytes) / n / secs;
    report.bytes_per_snapshot = sum(|c| c.snapshot_bytes) / sum(|c| c.snapshots).max(1.0);
    report.inputs_per_sec = sum(|c| c.inputs) / n / secs;
    let mut gaps: Vec<f64> = counted
        .iter()
        .flat_map(|c| c.gaps_ms.iter().copied())
        .collect();
    gaps.sort_by(f64::total_cmp);
    let at = |p: f64| {
        gaps.get(((gaps.len() as f64 - 1.0) * p / 100.0).round().max(0.0) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    report.snapshot_gap_p50_ms = at(50.0);
    report.snapshot_gap_p99_ms = at(99.0);
    report.max_snapshot_gap_ms = gaps.last().copied().unwrap_or(0.0);
}

/// One light bot: join, wait for everyone, play the window.
async fn bot<G: Harness>(
    options: LightOptions,
    index: usize,
    joined: Arc<Barrier>,
    offer: Option<Arc<Offer>>,
) -> Result<Counted> {
    // QUIC handshakes all at once overrun the server's address validation
    // (its Retry tokens expire in the queue): WebTransport bots join 2 ms
    // apart, a thousand in two seconds.
    if options.transport == BotTransport::Webtransport {
        tokio::time::sleep(Duration::from_millis(2 * index as u64)).await;
    }
    let result = join::<G>(&options, index, offer.as_deref()).await;
    // Wait for the others even after a failure, or nobody would start.
    joined.wait().await;
    let link = result?;
    play::<G>(&options, index, link).await
}

/// A bot's connection.
enum Link {
    WebSocket(Box<Socket>),
    WebTransport(Box<WtClient>),
}

/// What came from the server.
enum Came {
    Binary(Vec<u8>),
    Text(String),
    /// Nothing to count (a ping, a pong).
    Other,
}

impl Link {
    /// Sends a hello: on the reliable path.
    async fn hello(&mut self, bytes: Vec<u8>) -> Result<()> {
        match self {
            Link::WebSocket(socket) => socket.send(Message::binary(bytes)).await?,
            Link::WebTransport(wt) => wt.send_reliable_frame(false, &bytes).await?,
        }
        Ok(())
    }

    /// Sends an input message: over WebTransport as a datagram, which a
    /// full path drops like a lost one (the next carries the same inputs).
    async fn input(&mut self, bytes: &[u8]) -> Result<()> {
        match self {
            Link::WebSocket(socket) => socket.send(Message::binary(bytes.to_vec())).await?,
            Link::WebTransport(wt) => {
                let _ = wt.send_datagram(bytes);
            }
        }
        Ok(())
    }

    /// The next message, or why there is none.
    async fn next(&mut self) -> Result<Came> {
        match self {
            Link::WebSocket(socket) => match socket.next().await {
                Some(Ok(Message::Binary(bytes))) => Ok(Came::Binary(bytes.to_vec())),
                Some(Ok(Message::Text(text))) => Ok(Came::Text(text.to_string())),
                Some(Ok(Message::Close(frame))) => bail!("closed by the server: {frame:?}"),
                Some(Ok(_)) => Ok(Came::Other),
                Some(Err(e)) => bail!("socket error: {e}"),
                None => bail!("connection ended"),
            },
            Link::WebTransport(wt) => match wt.next().await? {
                Some(received) => Ok(match received.message {
                    StreamMessage::Binary(bytes) => Came::Binary(bytes),
                    StreamMessage::Text(text) => Came::Text(text),
                }),
                None => bail!("session ended: {}", wt.closed().await),
            },
        }
    }

    async fn close(self) {
        match self {
            Link::WebSocket(mut socket) => {
                let _ = SinkExt::close(&mut *socket).await;
            }
            Link::WebTransport(wt) => drop(wt),
        }
    }
}

async fn join<G: Harness>(
    options: &LightOptions,
    index: usize,
    offer: Option<&Offer>,
) -> Result<Link> {
    let source = if options.addr.ip().is_loopback() {
        next_source()
    } else {
        IpAddr::from([0, 0, 0, 0])
    };
    let mut link = match options.transport {
        BotTransport::Websocket => {
            let tcp = tcp_from(options.addr, source).await.context("connecting")?;
            Link::WebSocket(Box::new(
                websocket_at(options.addr, &options.folder, tcp).await?,
            ))
        }
        BotTransport::Webtransport => {
            let offer = offer.context("no WebTransport offer")?;
            let source = Some(source).filter(|s| !s.is_unspecified());
            Link::WebTransport(Box::new(WtClient::connect(offer, source).await?))
        }
    };
    let hello = ClientMessage::<G::Wire>::Hello {
        name: format!("light{index}"),
        protocol: 1,
        room: Some(format!("light-{}", index % options.rooms.max(1))),
        encoding: Encoding::Compact,
        game: Some(GameId::of::<G>()),
    };
    let bytes = control::encode_client(&hello).context("a binary hello")?;
    link.hello(bytes).await?;
    loop {
        match tokio::time::timeout(DEADLINE, link.next()).await {
            Ok(Ok(Came::Binary(bytes))) if control::is_server_control(&bytes) => {
                match control::decode_server::<G>(&bytes) {
                    Ok(skirmish_core::ServerMessage::Welcome { .. }) => return Ok(link),
                    Ok(skirmish_core::ServerMessage::Error { code, message }) => {
                        bail!("refused: {code:?}: {message}")
                    }
                    _ => {}
                }
            }
            // The floor (a server doing only the socket work) welcomes in
            // text, as a JSON server does.
            Ok(Ok(Came::Text(text))) if text.starts_with(r#"{"type":"welcome""#) => {
                return Ok(link)
            }
            Ok(Ok(Came::Text(text))) if text.starts_with(r#"{"type":"error""#) => {
                bail!("refused: {text}")
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(e.context("before welcome")),
            Err(_) => bail!("no welcome within {DEADLINE:?}"),
        }
    }
}

/// Sends one input per tick and counts what arrives, through the warmup
/// and the window; only the window is counted.
async fn play<G: Harness>(options: &LightOptions, index: usize, mut link: Link) -> Result<Counted> {
    let start = Instant::now();
    let measure_from = start + options.warmup;
    let end = measure_from + options.duration;
    // Spread the bots' sends over the tick, as real clients would be.
    let phase = options.tick.mul_f64((index % 97) as f64 / 97.0);
    let mut inputs = tokio::time::interval_at(start + phase, options.tick);
    inputs.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut rng = SeededRng::new(options.seed.wrapping_add(index as u64));
    let mut input = G::Input::default();
    let mut counted = Counted::default();
    let mut last_snapshot: Option<Instant> = None;
    let (mut tick, mut acked) = (0u32, None::<Tick>);
    let mut out = Vec::with_capacity(64);
    loop {
        tokio::select! {
            at = inputs.tick() => {
                if at >= end {
                    break;
                }
                input = G::seeded_input(&mut rng, tick, input);
                tick += 1;
                out.clear();
                encode_inputs(&[G::Wire::of(Tick(tick), input, None)], acked, None, &mut out);
                link.input(&out).await?;
                if at >= measure_from {
                    counted.inputs += 1;
                }
            }
            came = link.next() => {
                let now = Instant::now();
                let (len, snapshot) = match came? {
                    Came::Binary(bytes) => {
                        if control::is_server_control(&bytes) {
                            if let Ok(skirmish_core::ServerMessage::Error { code, message }) =
                                control::decode_server::<G>(&bytes)
                            {
                                bail!("server error: {code:?}: {message}");
                            }
                            (bytes.len(), false)
                        } else if bytes.first() == Some(&skirmish_core::compact::OWN) {
                            // An own echo (datagram seats): not a snapshot.
                            (bytes.len(), false)
                        } else {
                            acked = acked.max(delta::frame_tick(&bytes));
                            (bytes.len(), true)
                        }
                    }
                    Came::Text(text) => (text.len(), false),
                    Came::Other => continue,
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
                    counted.snapshot_bytes += len as u64;
                    if let Some(last) = last_snapshot {
                        counted.gaps_ms.push((now - last).as_secs_f64() * 1000.0);
                    }
                    last_snapshot = Some(now);
                }
            }
        }
    }
    link.close().await;
    Ok(counted)
}
