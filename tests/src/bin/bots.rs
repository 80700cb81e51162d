//! `bots`: N headless bot clients against a running server, each a
//! `ClientSession` over a real WebSocket with the network conditioner; or,
//! with `--light`, raw clients that only send inputs on time and count what
//! arrives, many per thread, to measure the server rather than the bots.
//!
//! `cargo run --release -p skirmish-tests --bin bots -- --help`
//!
//! Prints per-room and total figures and writes every bot's report as JSON.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use skirmish_blobs::Blobs;
use skirmish_tanks::Encoding;
use skirmish_tanks::LinkConditions;
use skirmish_tests::blobs::Graze;
use skirmish_tests::bot::{percentile, run_bot, run_bot_of, BotOptions, BotReport, BotTransport};
use skirmish_tests::light::LightOptions;
use skirmish_tests::relay::{Impairment, TcpRelay, UdpRelay};
use skirmish_tests::script::{Script, Wander};
use skirmish_tests::walkers::Pace;
use skirmish_walkers::Walkers;

/// Headless bots for load and netcode-quality runs.
// Each bool is an independent command-line switch, not a state machine.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Parser)]
#[command(about, args_override_self = true)]
struct Args {
    /// The server.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// How many bots.
    #[arg(long, default_value_t = 16)]
    bots: usize,
    /// Spread the bots over this many rooms (`bots-0`, `bots-1`, ...).
    #[arg(long, default_value_t = 1)]
    rooms: usize,
    /// How long each bot plays, in seconds.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Added one-way latency each way, in ms.
    #[arg(long, default_value_t = 0.0)]
    latency_ms: f32,
    /// Added jitter each way, in ms.
    #[arg(long, default_value_t = 0.0)]
    jitter_ms: f32,
    /// Added loss each way, 0 to 1.
    #[arg(long, default_value_t = 0.0)]
    loss: f32,
    /// Let bots bump into each other instead of keeping clear.
    #[arg(long)]
    bump: bool,
    /// Fire at random.
    #[arg(long)]
    fire: bool,
    /// Seed of the scripts and conditioners.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Time between two frames of each bot, in ms (16 is 60 fps).
    #[arg(long, default_value_t = 16)]
    frame_ms: u64,
    /// Ask for compact binary snapshots instead of JSON (acknowledged, so
    /// the server sends deltas).
    #[arg(long)]
    compact: bool,
    /// With --compact: never acknowledge snapshots, so every frame is full.
    #[arg(long)]
    no_ack: bool,
    /// Light bots: send inputs on time and count received bytes without
    /// decoding them (the figures are the server's, not the bots').
    #[arg(long)]
    light: bool,
    /// Light bots: threads, each running its share of the bots.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Light bots: seconds after everyone joined before measuring.
    #[arg(long, default_value_t = 3.0)]
    warmup: f64,
    /// What full bots connect over.
    #[arg(long, value_enum, default_value = "websocket")]
    transport: BotTransport,
    /// Full bots: connect through an impairment relay started here (UDP for
    /// WebTransport, TCP for WebSocket) with this one-way latency, ms...
    #[arg(long)]
    relay_latency_ms: Option<f64>,
    /// ...this jitter each way, ms...
    #[arg(long, default_value_t = 0.0)]
    relay_jitter_ms: f64,
    /// ...and this loss each way, 0 to 1 (UDP only: TCP loss cannot be
    /// injected without kernel support).
    #[arg(long, default_value_t = 0.0)]
    relay_loss: f64,
    /// With a UDP relay: an RTT step. From `--relay-step-at` seconds after
    /// the bots start, for `--relay-step-for` seconds, the relay's one-way
    /// latency is this many ms (jitter and loss unchanged), then back.
    #[arg(long)]
    relay_step_latency_ms: Option<f64>,
    /// Play no bots: only run the relay `--relay-latency-ms` asks for, for
    /// `--seconds` or until Ctrl-C, and print how a page reaches the
    /// server through it (`/?wt-port=`, WebTransport) or its address
    /// (WebSocket).
    #[arg(long)]
    relay_only: bool,
    /// When the step starts, seconds after the bots start.
    #[arg(long, default_value_t = 10.0)]
    relay_step_at: f64,
    /// How long the step lasts, seconds.
    #[arg(long, default_value_t = 20.0)]
    relay_step_for: f64,
    /// Protocol 2 over WebTransport: send each input message again this
    /// many times, a quarter step apart, while snapshots are being lost;
    /// default: what the page ships (`SessionConfig::default().resends`).
    #[arg(long, default_value_t = skirmish_tanks::SessionConfig::default().resends)]
    resends: u32,
    /// Record the first bot's session into this file (replay it with
    /// `cargo xtask replay FILE`); full bots only.
    #[arg(long)]
    record: Option<PathBuf>,
    /// Where to write the JSON report.
    #[arg(long, default_value = "artifacts/bots.json")]
    json: PathBuf,
    /// The game the full bots play: the tank game (wandering, `--bump`
    /// and `--fire` apply), walkers, the guide's game (pacing back and
    /// forth, at `/walkers/ws`), or blobs (grazing pellets and fleeing
    /// larger blobs, at `/blobs/ws`).
    #[arg(long, value_enum, default_value = "tanks")]
    game: BotGame,
}

/// Plays bot number `i` of `game` in a task of its own.
fn spawn_bot(
    game: BotGame,
    addr: SocketAddr,
    options: BotOptions,
    i: usize,
) -> tokio::task::JoinHandle<Result<BotReport>> {
    match game {
        BotGame::Tanks => tokio::spawn(run_bot(addr, options)),
        BotGame::Walkers => {
            // Pacers spread over the field, each along its own stretch.
            let from = 100.0 + 50.0 * (i % 16) as f32;
            let mut pace = Pace::new(from, from + 200.0);
            tokio::spawn(async move { run_bot_of::<Walkers, _>(addr, options, &mut pace).await })
        }
        BotGame::Blobs => {
            tokio::spawn(async move { run_bot_of::<Blobs, _>(addr, options, &mut Graze).await })
        }
    }
}

/// A game the full bots can play.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum BotGame {
    /// The tank game.
    Tanks,
    /// Walkers, the guide's game.
    Walkers,
    /// Blobs, the .io arena.
    Blobs,
}

fn main() -> Result<()> {
    let args = Args::parse();
    if args.game != BotGame::Tanks && (args.bump || args.fire) {
        anyhow::bail!("--bump and --fire are the tank game's");
    }
    if args.light {
        if args.game != BotGame::Tanks {
            anyhow::bail!("--light bots play the tank game only; full bots play --game walkers");
        }
        return light(&args);
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(full(args))
}

/// Light bots: the server's figures, with the bots as cheap as they can be.
fn light(args: &Args) -> Result<()> {
    eprintln!(
        "bots: {} light bots in {} room(s) against {} for {} s...",
        args.bots, args.rooms, args.addr, args.seconds
    );
    let report = skirmish_tests::light::run(&LightOptions {
        addr: args.addr,
        bots: args.bots,
        rooms: args.rooms,
        threads: args.threads,
        warmup: Duration::from_secs_f64(args.warmup.max(0.0)),
        duration: Duration::from_secs_f64(args.seconds.max(0.1)),
        compact: args.compact,
        ack: !args.no_ack,
        tick: Duration::from_millis(50),
    })?;
    println!("{}", serde_json::to_string_pretty(&report)?);
    println!("{}", skirmish_tests::light::summary_line(&report));
    if let Some(dir) = args.json.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.json, serde_json::to_string_pretty(&report)?)?;
    if report.failed > 0 {
        anyhow::bail!("{} light bot(s) failed: {:?}", report.failed, report.errors);
    }
    Ok(())
}

/// Full bots: each a `ClientSession`, measuring what a player would notice.
async fn full(args: Args) -> Result<()> {
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
    let relay = start_relay(&args).await?;
    if args.relay_only {
        return relay_alone(&args, relay.as_ref()).await;
    }
    let via = relay.as_ref().map(Relay::addr);
    let started = tokio::time::Instant::now();
    let step = step_relay(&args, relay.as_ref(), started);
    let mut tasks = Vec::new();
    for i in 0..args.bots {
        let seed = args.seed.wrapping_mul(1000).wrapping_add(i as u64);
        let mut wander = Wander::new(seed);
        wander.keep_clear = !args.bump;
        if args.fire {
            wander.fire_chance = 0.02;
        }
        let options = BotOptions {
            name: format!("bot{i}"),
            room: Some(format!("bots-{}", i % args.rooms.max(1))),
            script: Script::Wander(wander),
            folder: match args.game {
                BotGame::Tanks => String::new(),
                BotGame::Walkers => "walkers".to_string(),
                BotGame::Blobs => "blobs".to_string(),
            },
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
            source: args
                .addr
                .ip()
                .is_loopback()
                .then(skirmish_tests::next_source),
            transport: args.transport,
            via,
            resends: args.resends,
            record: (i == 0).then(|| args.record.clone()).flatten(),
        };
        let addr = args.addr;
        tasks.push(spawn_bot(args.game, addr, options, i));
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
        fields.extend(step_figures(&args, &reports, started));
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
    args: &Args,
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
    args: &Args,
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
async fn relay_alone(args: &Args, relay: Option<&Relay>) -> Result<()> {
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
async fn start_relay(args: &Args) -> Result<Option<Relay>> {
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
            let offer = skirmish_tests::wt::offer(args.addr).await?;
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
