//! A fleet of headless bots against a running server: each a
//! [`ClientSession`] of the game over a real WebSocket or WebTransport
//! with the network conditioner ([`crate::bot`]), optionally through an
//! impairment relay started here ([`crate::relay`]), with an RTT step on
//! it; the figures per bot and in total, as JSON and as one
//! `summary key=value ...` line for scripts. What a `bots` binary does
//! for any game ([`run_fleet`]): its `main` parses [`FleetArgs`] beside
//! its own flags and names the game and its brains.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use skirmish_core::{ClientGame, ClientSession, Driver, Encoding, LinkConditions, SessionConfig};

use crate::bot::{percentile, run_bot, BotOptions, BotReport, BotTransport};
use crate::net::next_source;
use crate::relay::{Impairment, TcpRelay, UdpRelay};

/// How a fleet of bots plays, from the command line (`#[command(flatten)]`
/// it into a binary's own arguments).
#[derive(Clone, Debug, clap::Args)]
pub struct FleetArgs {
    /// The server.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// How many bots.
    #[arg(long, default_value_t = 16)]
    pub bots: usize,
    /// Spread the bots over this many rooms (`bots-0`, `bots-1`, ...).
    #[arg(long, default_value_t = 1)]
    pub rooms: usize,
    /// How long each bot plays, in seconds.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// Added one-way latency each way, in ms.
    #[arg(long, default_value_t = 0.0)]
    pub latency_ms: f32,
    /// Added jitter each way, in ms.
    #[arg(long, default_value_t = 0.0)]
    pub jitter_ms: f32,
    /// Added loss each way, 0 to 1.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f32,
    /// Seed of the scripts and conditioners.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Time between two frames of each bot, in ms (16 is 60 fps).
    #[arg(long, default_value_t = 16)]
    pub frame_ms: u64,
    /// Ask for compact binary snapshots instead of JSON (acknowledged, so
    /// the server sends deltas).
    #[arg(long)]
    pub compact: bool,
    /// What bots connect over (full bots, and the light bots of a game
    /// other than the tank game).
    #[arg(long, value_enum, default_value = "websocket")]
    pub transport: BotTransport,
    /// Full bots: connect through an impairment relay started here (UDP for
    /// WebTransport, TCP for WebSocket) with this one-way latency, ms...
    #[arg(long)]
    pub relay_latency_ms: Option<f64>,
    /// ...this jitter each way, ms...
    #[arg(long, default_value_t = 0.0)]
    pub relay_jitter_ms: f64,
    /// ...and this loss each way, 0 to 1 (UDP only: TCP loss cannot be
    /// injected without kernel support).
    #[arg(long, default_value_t = 0.0)]
    pub relay_loss: f64,
    /// With a UDP relay: an RTT step. From `--relay-step-at` seconds after
    /// the bots start, for `--relay-step-for` seconds, the relay's one-way
    /// latency is this many ms (jitter and loss unchanged), then back.
    #[arg(long)]
    pub relay_step_latency_ms: Option<f64>,
    /// Play no bots: only run the relay `--relay-latency-ms` asks for, for
    /// `--seconds` or until Ctrl-C, and print how a page reaches the
    /// server through it (`/?wt-port=`, WebTransport) or its address
    /// (WebSocket).
    #[arg(long)]
    pub relay_only: bool,
    /// When the step starts, seconds after the bots start.
    #[arg(long, default_value_t = 10.0)]
    pub relay_step_at: f64,
    /// How long the step lasts, seconds.
    #[arg(long, default_value_t = 20.0)]
    pub relay_step_for: f64,
    /// Protocol 2 over WebTransport: send each input message again this
    /// many times, a quarter step apart, while snapshots are being lost;
    /// default: what the page ships (`SessionConfig::default().resends`).
    #[arg(long, default_value_t = SessionConfig::default().resends)]
    pub resends: u32,
    /// Record the first bot's session into this file (a page's
    /// recording: the `replay` binary replays it).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Where to write the JSON report.
    #[arg(long, default_value = "artifacts/bots.json")]
    pub json: PathBuf,
}

/// Plays `args.bots` bots of game `G` against the server in `args`, at the
/// game's `folder` (`""` for the game at the server's root), bot `i`
/// driven by `brain(i, seed)`; prints the figures per bot and in total (a
/// `summary key=value ...` line last) and writes them as JSON to
/// `args.json`. With `--relay-only`, plays no bots and only runs the
/// relay.
///
/// # Errors
/// The relay cannot start, a bot failed, or the report cannot be written.
pub async fn run_fleet<G, D>(
    args: &FleetArgs,
    folder: &str,
    mut brain: impl FnMut(usize, u64) -> D,
) -> Result<()>
where
    G: ClientGame + 'static,
    D: Driver<G> + Send + 'static,
    ClientSession<G>: Send,
{
    let link = LinkConditions {
        latency_ms: args.latency_ms,
        jitter_ms: args.jitter_ms,
        loss: args.loss,
        duplicate: 0.0,
    };
    eprintln!(
        "bots: {} bots in {} room(s) against {} for {} s...",
        args.bots, args.rooms, args.addr, args.seconds
    );
    // The relay, if asked for, lives as long as the bots.
    let relay = start_relay(args).await?;
    if args.relay_only {
        return relay_alone(args, relay.as_ref()).await;
    }
    let via = relay.as_ref().map(Relay::addr);
    let started = tokio::time::Instant::now();
    let step = step_relay(args, relay.as_ref(), started);
    let mut tasks = Vec::new();
    for i in 0..args.bots {
        let seed = args.seed.wrapping_mul(1000).wrapping_add(i as u64);
        let options = BotOptions {
            name: format!("bot{i}"),
            room: Some(format!("bots-{}", i % args.rooms.max(1))),
            script: brain(i, seed),
            folder: folder.to_string(),
            up: link,
            down: link,
            seed,
            duration: Duration::from_secs_f64(args.seconds),
            frame: Duration::from_millis(args.frame_ms),
            encoding: if args.compact {
                Encoding::Compact
            } else {
                Encoding::Json
            },
            source: args.addr.ip().is_loopback().then(next_source),
            transport: args.transport,
            via,
            resends: args.resends,
            record: (i == 0).then(|| args.record.clone()).flatten(),
        };
        tasks.push(tokio::spawn(run_bot::<G, D>(args.addr, options)));
    }
    let mut reports = Vec::new();
    let mut failures = 0;
    for task in tasks {
        match task.await {
            Ok(Ok(report)) => reports.push(report),
            Ok(Err(e)) => {
                failures += 1;
                eprintln!("bots: a bot failed: {e:#}");
            }
            Err(e) => {
                failures += 1;
                eprintln!("bots: a bot panicked: {e}");
            }
        }
    }
    let mut total = summarise(&reports);
    if let (Some(step), Some(fields)) = (step, total.as_object_mut()) {
        step.abort();
        fields.extend(step_figures(args, &reports, started));
    }
    println!("{}", serde_json::to_string_pretty(&total)?);
    // One line of key=value pairs for scripts (cargo xtask bench reads it).
    if let Some(fields) = total.as_object() {
        let pairs: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
        println!("summary {}", pairs.join(" "));
    }
    if let Some(dir) = args.json.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(
        &args.json,
        serde_json::to_string_pretty(&serde_json::json!({ "total": total, "bots": reports }))?,
    )?;
    eprintln!("bots: wrote {}", args.json.display());
    if failures > 0 {
        anyhow::bail!("{failures} bot(s) failed");
    }
    Ok(())
}

/// The RTT step `--relay-step-latency-ms` asks for, on a UDP relay: a task
/// that raises the latency at the step and lowers it again after.
fn step_relay(
    args: &FleetArgs,
    relay: Option<&Relay>,
    started: tokio::time::Instant,
) -> Option<tokio::task::JoinHandle<()>> {
    let (Some(step_ms), Some(Relay::Udp(relay))) = (args.relay_step_latency_ms, relay) else {
        return None;
    };
    let base = Impairment {
        latency_ms: args.relay_latency_ms.unwrap_or_default(),
        jitter_ms: args.relay_jitter_ms,
        loss: args.relay_loss,
        duplicate: 0.0,
    };
    let high = Impairment {
        latency_ms: step_ms,
        ..base
    };
    let up_at = started + Duration::from_secs_f64(args.relay_step_at.max(0.0));
    let down_at = up_at + Duration::from_secs_f64(args.relay_step_for.max(0.0));
    let relay = relay.handle();
    Some(tokio::spawn(async move {
        tokio::time::sleep_until(up_at).await;
        relay.set(high, high);
        eprintln!("bots: relay latency {step_ms} ms each way");
        tokio::time::sleep_until(down_at).await;
        relay.set(base, base);
        eprintln!(
            "bots: relay latency back to {} ms each way",
            base.latency_ms
        );
    }))
}

/// The step's figures: the worst 1 s window of late inputs from 2 s after
/// the step up, and input-to-ack from 5 s after the step down.
fn step_figures(
    args: &FleetArgs,
    reports: &[BotReport],
    started: tokio::time::Instant,
) -> serde_json::Map<String, serde_json::Value> {
    let secs = |at: tokio::time::Instant| at.saturating_duration_since(started).as_secs_f64();
    let up = args.relay_step_at;
    let down = up + args.relay_step_for;
    let ticks_per_window = 20.0 * reports.len().max(1) as f64;
    let mut worst: f64 = 0.0;
    let mut window = up + 2.0;
    while window + 1.0 <= args.seconds {
        let late = reports
            .iter()
            .flat_map(|r| r.late_at.iter())
            .filter(|&&t| (window..window + 1.0).contains(&secs(t)))
            .count();
        worst = worst.max(100.0 * late as f64 / ticks_per_window);
        window += 1.0;
    }
    let after: Vec<f64> = reports
        .iter()
        .flat_map(|r| r.acked_at.iter())
        .filter(|(t, _)| secs(*t) >= down + 5.0)
        .map(|(_, ms)| *ms)
        .collect();
    let mut out = serde_json::Map::new();
    out.insert("step_worst_late_pct_per_s".into(), worst.into());
    out.insert(
        "step_input_to_ack_p50_ms_5s_after_down".into(),
        percentile(&after, 50.0).into(),
    );
    out
}

/// An impairment relay started for the bots.
enum Relay {
    Udp(UdpRelay),
    Tcp(TcpRelay),
}

impl Relay {
    fn addr(&self) -> SocketAddr {
        match self {
            Relay::Udp(r) => r.addr,
            Relay::Tcp(r) => r.addr,
        }
    }
}

/// `--relay-only`: the relay alone, for a page (or anything else) to play
/// through, until `--seconds` pass or Ctrl-C.
async fn relay_alone(args: &FleetArgs, relay: Option<&Relay>) -> Result<()> {
    let Some(relay) = relay else {
        anyhow::bail!("--relay-only needs --relay-latency-ms (and the impairment's other flags)");
    };
    match relay {
        Relay::Udp(r) => println!(
            "relay: WebTransport through 127.0.0.1:{port}; open http://{addr}/?wt-port={port}",
            port = r.addr.port(),
            addr = args.addr,
        ),
        Relay::Tcp(r) => println!(
            "relay: the server's HTTP and WebSocket through http://{}/ (WebTransport does not go through it)",
            r.addr
        ),
    }
    let step = step_relay(args, Some(relay), tokio::time::Instant::now());
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs_f64(args.seconds.max(0.0))) => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    if let Some(step) = step {
        step.abort();
    }
    eprintln!("relay: stopped");
    Ok(())
}

/// The relay `--relay-latency-ms` asks for: UDP in front of the server's
/// WebTransport port, or TCP in front of its HTTP port.
async fn start_relay(args: &FleetArgs) -> Result<Option<Relay>> {
    let Some(latency_ms) = args.relay_latency_ms else {
        return Ok(None);
    };
    let impairment = Impairment {
        latency_ms,
        jitter_ms: args.relay_jitter_ms,
        loss: args.relay_loss,
        duplicate: 0.0,
    };
    let relay = match args.transport {
        BotTransport::Webtransport => {
            let offer = crate::wt::offer(args.addr).await?;
            let server = offer.endpoint(args.addr.ip())?;
            Relay::Udp(UdpRelay::start(server, impairment, impairment, args.seed).await?)
        }
        BotTransport::Websocket => {
            Relay::Tcp(TcpRelay::start(args.addr, impairment, impairment, args.seed).await?)
        }
    };
    eprintln!(
        "bots: through a relay at {}: {latency_ms} ms ± {} ms, loss {} each way",
        relay.addr(),
        args.relay_jitter_ms,
        args.relay_loss
    );
    Ok(Some(relay))
}

/// How long after its first acknowledgement a bot's schedule counts as
/// settled.
const SETTLE: Duration = Duration::from_secs(5);

/// Totals over every bot.
fn summarise(reports: &[BotReport]) -> serde_json::Value {
    let sum = |f: fn(&BotReport) -> f64| reports.iter().map(f).sum::<f64>();
    let max = |f: fn(&BotReport) -> f64| reports.iter().map(f).fold(0.0, f64::max);
    let rtts: Vec<f64> = reports
        .iter()
        .flat_map(|r| r.rtt_ms.iter().copied())
        .collect();
    let gaps: Vec<f64> = reports
        .iter()
        .flat_map(|r| r.gaps_ms.iter().copied())
        .collect();
    let acks: Vec<f64> = reports
        .iter()
        .flat_map(|r| r.ack_ms.iter().copied())
        .collect();
    let slack: Vec<f64> = reports
        .iter()
        .flat_map(|r| r.slack_ms.iter().copied())
        .collect();
    // The same after each bot's first five seconds: the schedule has
    // settled (its first inputs are made with the first round trip's lead).
    let settled: Vec<f64> = reports
        .iter()
        .flat_map(|r| {
            let from = r.acked_at.first().map(|(t, _)| *t + SETTLE);
            r.acked_at
                .iter()
                .filter(move |(t, _)| from.is_some_and(|from| *t >= from))
                .map(|(_, ms)| *ms)
        })
        .collect();
    // The first seconds apart, each bot's from its first acknowledgement:
    // where a whole run's tail comes from when it differs from the settled.
    let by_second: Vec<serde_json::Value> = (0..SETTLE.as_secs())
        .map(|s| {
            let ms: Vec<f64> = reports
                .iter()
                .flat_map(|r| {
                    let from = r.acked_at.first().map(|(t, _)| *t);
                    r.acked_at
                        .iter()
                        .filter(move |(t, _)| {
                            from.is_some_and(|f| t.saturating_duration_since(f).as_secs() == s)
                        })
                        .map(|(_, ms)| *ms)
                })
                .collect();
            serde_json::json!([percentile(&ms, 50.0), percentile(&ms, 99.0), ms.len()])
        })
        .collect();
    let n = reports.len().max(1) as f64;
    serde_json::json!({
        "input_to_ack_first_seconds_p50_p99_n": by_second,
        "bots": reports.len(),
        "inputs_sent": sum(|r| r.inputs_sent as f64),
        "mispredictions": sum(|r| r.mispredictions as f64),
        "corrections": sum(|r| r.corrections as f64),
        "snaps": sum(|r| r.snaps as f64),
        "max_correction": max(|r| f64::from(r.max_correction)),
        "max_error": max(|r| f64::from(r.max_error)),
        "rtt_p50_ms": percentile(&rtts, 50.0),
        "rtt_p99_ms": percentile(&rtts, 99.0),
        "bytes_per_client_per_sec": sum(|r| r.bytes_per_sec) / n,
        "up_bytes_per_client_per_sec": sum(|r| r.up_bytes_per_sec) / n,
        "snapshots_per_sec": sum(|r| r.snapshots_per_sec) / n,
        "snapshot_gap_p99_ms": percentile(&gaps, 99.0),
        "max_snapshot_gap_ms": max(|r| r.max_snapshot_gap_ms),
        "input_to_ack_p50_ms": percentile(&acks, 50.0),
        "input_to_ack_p99_ms": percentile(&acks, 99.0),
        "input_to_ack_p50_ms_settled": percentile(&settled, 50.0),
        "input_to_ack_p99_ms_settled": percentile(&settled, 99.0),
        "slack_p50_ms": percentile(&slack, 50.0),
        "late_inputs": sum(|r| r.late_inputs as f64),
        "repeated_inputs": sum(|r| r.repeated_inputs as f64),
        "hard_resyncs": sum(|r| r.hard_resyncs as f64),
        "input_resends": sum(|r| r.input_resends as f64),
        "errors": sum(|r| r.errors as f64),
    })
}
