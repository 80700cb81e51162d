//! `bots`: N headless bot clients against a running server, each a
//! `ClientSession` over a real WebSocket or WebTransport with the network
//! conditioner (`skirmish_harness::fleet`, which any game's `bots` can
//! run); or, with `--light`, raw clients that only send inputs on time and
//! count what arrives, many per thread, to measure the server rather than
//! the bots (any listed game's, binary, steered by its seeded inputs; the
//! tank game's speak JSON too).
//!
//! `cargo run --release -p skirmish-tests --bin bots -- --help`
//!
//! Prints per-room and total figures and writes every bot's report as JSON.

use std::time::Duration;

use anyhow::Result;
use clap::Parser;
use skirmish_core::Game as _;
use skirmish_games::{Entry, GameSettings, Listed, Visit};
use skirmish_harness::bot::BotTransport;
use skirmish_harness::fleet::{run_fleet, FleetArgs};
use skirmish_tanks::Tanks;
use skirmish_tanks::{script::Script, script::Wander};
use skirmish_tests::light::LightOptions;

/// Headless bots for load and netcode-quality runs.
// Each bool is an independent command-line switch, not a state machine.
#[allow(clippy::struct_excessive_bools)]
#[derive(Debug, Parser)]
#[command(about, args_override_self = true)]
struct Args {
    /// What every game's full bots take.
    #[command(flatten)]
    fleet: FleetArgs,
    /// Let bots bump into each other instead of keeping clear.
    #[arg(long)]
    bump: bool,
    /// Fire at random.
    #[arg(long)]
    fire: bool,
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

    /// The game the full bots play, by its name in the list of games
    /// (`skirmish-games`), at its path, with the brains of its main cell;
    /// the tank game's wander, and `--bump` and `--fire` apply.
    #[arg(long, default_value = Tanks::NAME)]
    game: String,
}

fn main() -> Result<()> {
    let args = Args::parse();
    let tanks = args.game == Tanks::NAME;
    if !tanks && (args.bump || args.fire) {
        anyhow::bail!("--bump and --fire are the tank game's");
    }
    if args.light && tanks && args.fleet.transport != BotTransport::Websocket {
        anyhow::bail!("the tank game's light bots speak WebSocket only");
    }
    if args.light {
        return if tanks { light(&args) } else { light_of(&args) };
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(full(&args))
}

/// Full bots of the listed game asked for, at its path, with the brains
/// of its main cell (the tank game's wander with `--bump` and `--fire`).
async fn full(args: &Args) -> Result<()> {
    struct Pick<'a> {
        args: &'a Args,
        listed: Vec<&'static str>,
        run: Option<std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + 'a>>>,
    }
    impl Visit for Pick<'_> {
        fn game<G: Listed>(&mut self, game: Entry<G>) {
            self.listed.push(game.name);
            if self.run.is_some() || game.name != self.args.game {
                return;
            }
            let args = self.args;
            self.run = Some(if G::NAME == Tanks::NAME {
                Box::pin(run_fleet::<Tanks, _>(&args.fleet, game.path, |_, seed| {
                    let mut wander = Wander::new(seed);
                    wander.keep_clear = !args.bump;
                    if args.fire {
                        wander.fire_chance = 0.02;
                    }
                    Script::Wander(wander)
                }))
            } else {
                Box::pin(run_fleet::<G, _>(&args.fleet, game.path, |i, _| {
                    G::main_player(i).0
                }))
            });
        }
    }
    let mut pick = Pick {
        args,
        listed: Vec::new(),
        run: None,
    };
    skirmish_games::each(&GameSettings::default(), &mut pick);
    match pick.run {
        Some(run) => run.await,
        None => anyhow::bail!(
            "bots: unknown game `{}`; the games are: {}",
            args.game,
            pick.listed.join(", ")
        ),
    }
}

/// Light bots of any listed game but the tank game (whose light bots
/// below speak JSON too): binary all the way, steered by the game's
/// seeded inputs (`skirmish_harness::light`).
fn light_of(args: &Args) -> Result<()> {
    struct Pick<'a> {
        args: &'a Args,
        listed: Vec<&'static str>,
        report: Option<Result<skirmish_harness::light::LightReport>>,
    }
    impl Visit for Pick<'_> {
        fn game<G: Listed>(&mut self, game: Entry<G>) {
            self.listed.push(game.name);
            if self.report.is_some() || game.name != self.args.game {
                return;
            }
            let args = self.args;
            self.report = Some(skirmish_harness::light::run::<G>(
                &skirmish_harness::light::LightOptions {
                    addr: args.fleet.addr,
                    folder: game.path.to_string(),
                    bots: args.fleet.bots,
                    rooms: args.fleet.rooms,
                    threads: args.threads,
                    warmup: Duration::from_secs_f64(args.warmup.max(0.0)),
                    duration: Duration::from_secs_f64(args.fleet.seconds.max(0.1)),
                    tick: Duration::from_millis(50),
                    seed: 1,
                    transport: args.fleet.transport,
                },
            ));
        }
    }
    let mut pick = Pick {
        args,
        listed: Vec::new(),
        report: None,
    };
    skirmish_games::each(&GameSettings::default(), &mut pick);
    let Some(report) = pick.report else {
        anyhow::bail!(
            "bots: unknown game `{}`; the games are: {}",
            args.game,
            pick.listed.join(", ")
        );
    };
    let report = report?;
    let summary = report.summary_line();
    written(args, &report, &summary, report.failed, &report.errors)
}

/// Prints a light run's report and its summary line, writes the report to
/// `--json`, and fails if any bot did.
fn written(
    args: &Args,
    report: &impl serde::Serialize,
    summary: &str,
    failed: usize,
    errors: &[String],
) -> Result<()> {
    let json = serde_json::to_string_pretty(report)?;
    println!("{json}\n{summary}");
    if let Some(dir) = args.fleet.json.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&args.fleet.json, json)?;
    if failed > 0 {
        anyhow::bail!("{failed} light bot(s) failed: {errors:?}");
    }
    Ok(())
}

/// Light bots: the server's figures, with the bots as cheap as they can be.
fn light(args: &Args) -> Result<()> {
    eprintln!(
        "bots: {} light bots in {} room(s) against {} for {} s...",
        args.fleet.bots, args.fleet.rooms, args.fleet.addr, args.fleet.seconds
    );
    let report = skirmish_tests::light::run(&LightOptions {
        addr: args.fleet.addr,
        bots: args.fleet.bots,
        rooms: args.fleet.rooms,
        threads: args.threads,
        warmup: Duration::from_secs_f64(args.warmup.max(0.0)),
        duration: Duration::from_secs_f64(args.fleet.seconds.max(0.1)),
        compact: args.fleet.compact,
        ack: !args.no_ack,
        tick: Duration::from_millis(50),
    })?;
    let summary = skirmish_tests::light::summary_line(&report);
    written(args, &report, &summary, report.failed, &report.errors)
}
