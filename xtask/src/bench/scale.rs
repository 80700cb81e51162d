//! `cargo xtask scale`: one .io room (blobs) of 100, 250, 500 and 1,000
//! players over real sockets, each beside the floor sending the same bytes.
//!
//! Each size starts the release server with one blobs room of that many
//! players and 10 pellets per player, on an arena that keeps the density
//! of blobs' default (5,000 pellets on 5,000 x 5,000 units), and runs the
//! release `bots` in light mode for blobs (`--light --game blobs`: a
//! binary hello, one binary input a tick from the game's seeded steering,
//! every snapshot acknowledged, nothing decoded), each bot from its own
//! loopback address. The server is measured over the bots' window as
//! `cargo xtask bench` measures it (CPU and RSS from `/proc`, the room's
//! tick from `/metrics`). Then the floor (`../shared/peers/floor-server/
//! floor.c`: only the same socket work, no game) runs with the same bots,
//! sending each the bytes per snapshot the server sent, and its CPU per
//! player is the denominator of the ratio.
//!
//! Flags: `--quick` (20 s windows instead of 60 s), `--players 100,250`
//! (the sizes), `--threads N` (the server's worker threads; 1 as shipped),
//! `--snapshot-threads N` (the threads each room builds its frames on),
//! `--transport webtransport` (the bots over WebTransport; the floor's
//! still over WebSocket),
//! `--no-write` (print, do not touch `docs/BENCHMARKS.md`).

use std::fs;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::{listening, measure, spawn_server, target_dir, Measured, Reaped, Scenario, Target};
use crate::{cargo, root, sh, Result};

const START: &str = "<!-- scale-runs:start -->";
const END: &str = "<!-- scale-runs:end -->";

/// Blobs' default density: pellets per square unit.
const DENSITY: f64 = 5000.0 / (5000.0 * 5000.0);

struct Options {
    seconds: u64,
    players: Vec<usize>,
    write: bool,
    /// The server's `--threads` (as shipped: 1).
    threads: usize,
    /// The server's `--snapshot-threads` (as shipped: 0, one per core).
    snapshot_threads: usize,
    /// The bots connect over WebTransport (the floor's still over
    /// WebSocket: it speaks nothing else).
    webtransport: bool,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options {
        seconds: 60,
        players: vec![100, 250, 500, 1000],
        write: true,
        threads: 1,
        snapshot_threads: 0,
        webtransport: false,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => options.seconds = 20,
            "--no-write" => options.write = false,
            "--transport" => {
                options.webtransport = match args.next().map(String::as_str) {
                    Some("webtransport") => true,
                    Some("websocket") => false,
                    _ => return Err("`--transport` takes `websocket` or `webtransport`".into()),
                };
            }
            "--threads" => {
                let n = args.next().ok_or("`--threads` needs a number")?;
                options.threads = n
                    .parse()
                    .map_err(|_| format!("`--threads {n}`: expected a number"))?;
            }
            "--snapshot-threads" => {
                let n = args.next().ok_or("`--snapshot-threads` needs a number")?;
                options.snapshot_threads = n
                    .parse()
                    .map_err(|_| format!("`--snapshot-threads {n}`: expected a number"))?;
            }
            "--players" => {
                let list = args.next().ok_or("`--players` needs a list, such as 100,250")?;
                options.players = list
                    .split(',')
                    .map(|n| n.trim().parse::<usize>())
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|_| format!("`--players {list}`: expected numbers, such as 100,250"))?;
            }
            "--" => {}
            other => {
                return Err(format!(
                    "scale: unknown argument `{other}` (expected `--quick`, `--players LIST`, `--threads N`, `--snapshot-threads N`, `--transport websocket|webtransport` or `--no-write`)"
                ))
            }
        }
    }
    Ok(options)
}

/// One size's two runs.
struct Row {
    players: usize,
    pellets: usize,
    side: f64,
    game: Measured,
    floor: Measured,
    floor_bytes: usize,
}

/// Runs the sizes and writes their table.
///
/// # Errors
/// A build, a process or a measurement fails.
pub fn run(args: &[String]) -> Result {
    let options = parse(args)?;
    let started = Instant::now();
    println!("==> building the release server and bots (several minutes after a change to core)");
    sh(
        &cargo(),
        &[
            "build",
            "--release",
            "-p",
            "skirmish-server",
            "-p",
            "skirmish-tests",
            "--bin",
            "skirmish-server",
            "--bin",
            "bots",
        ],
        &[],
    )?;
    let floor = build_floor()?;
    let mut rows = Vec::new();
    for &players in &options.players {
        let pellets = 10 * players;
        let side = (pellets as f64 / DENSITY).sqrt().round();
        println!(
            "==> blobs: 1 room of {players} players and {pellets} pellets on {side} x {side}, {} s",
            options.seconds
        );
        let scenario = Scenario {
            name: leak(format!("scale blobs {players}")),
            players,
            rooms: 1,
            seconds: options.seconds,
            target: Target::None,
            server: &[],
            bots: if options.webtransport {
                &["--game", "blobs", "--transport", "webtransport"]
            } else {
                &["--game", "blobs"]
            },
        };
        let capacity = players.to_string();
        let (side_arg, pellets_arg) = (side.to_string(), pellets.to_string());
        let threads = options.threads.to_string();
        let snapshot_threads = options.snapshot_threads.to_string();
        let (server, addr) = spawn_server(&[
            "--room-capacity",
            &capacity,
            "--max-rooms",
            "4",
            "--allow-protocol-1",
            "--blobs-side",
            &side_arg,
            "--blobs-pellets",
            &pellets_arg,
            "--threads",
            &threads,
            "--snapshot-threads",
            &snapshot_threads,
        ])?;
        let game = all_played(
            measure(&scenario, server, &addr, true)?,
            players,
            "the server",
        )?;
        let floor_bytes = (game.bytes_per_sec / game.snapshots_per_sec.max(1e-9)).round() as usize;
        println!("==> the floor: {players} clients, {floor_bytes} bytes a snapshot");
        let (server, addr) = spawn_floor(&floor, floor_bytes)?;
        let floor_scenario = Scenario {
            name: leak(format!("scale floor {players}")),
            bots: &["--game", "blobs"],
            ..scenario
        };
        let floor_run = measure(&floor_scenario, server, &addr, false)?;
        if floor_run.failed > 0.0 {
            return Err(format!(
                "{} of {players} bots failed against the floor",
                floor_run.failed
            ));
        }
        let row = Row {
            players,
            pellets,
            side,
            game,
            floor: floor_run,
            floor_bytes,
        };
        println!("{}", line(&row));
        rows.push(row);
    }
    let table = table(&rows, options.seconds, &options);
    println!("\n{table}");
    if options.write {
        write(&table)?;
        println!("scale: written to docs/BENCHMARKS.md");
    }
    println!("scale: {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// `run`, if every bot played it: a row with bots missing would not
/// measure its number of players.
fn all_played(run: Measured, players: usize, against: &str) -> Result<Measured> {
    if run.failed > 0.0 {
        return Err(format!(
            "{} of {players} bots failed against {against}: the row would not measure {players} players",
            run.failed
        ));
    }
    Ok(run)
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// Builds the floor from `../shared/peers/floor-server/floor.c`.
fn build_floor() -> Result<std::path::PathBuf> {
    let source = root().join("../shared/peers/floor-server/floor.c");
    if !source.is_file() {
        return Err(format!("no floor at {}", source.display()));
    }
    let out = target_dir().join("release/floor");
    let status = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&out)
        .arg(&source)
        .arg("-lcrypto")
        .status()
        .map_err(|e| format!("cannot run cc: {e}"))?;
    if !status.success() {
        return Err(format!(
            "cc {} failed ({status}): is libssl-dev installed?",
            source.display()
        ));
    }
    Ok(out)
}

/// Starts the floor on a free port sending `bytes` per snapshot.
fn spawn_floor(floor: &std::path::Path, bytes: usize) -> Result<(Reaped, String)> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(floor)
        .env("PORT", port.to_string())
        .env("FLOOR_SNAPSHOT_BYTES", bytes.to_string())
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the floor: {e}"))?;
    let mut child = Reaped(child);
    listening(&mut child, &addr, "the floor")?;
    Ok((child, addr))
}

fn cpu(m: &Measured) -> f64 {
    m.user_percent + m.system_percent
}

fn ms(seconds: Option<f64>) -> String {
    match seconds {
        Some(s) if s.is_finite() => format!("≤ {:.1} ms", s * 1000.0),
        Some(_) => "> last bucket".to_string(),
        None => "-".to_string(),
    }
}

fn line(row: &Row) -> String {
    let per = |m: &Measured| cpu(m) / row.players as f64;
    format!(
        "| {} | {} | {:.0} | {} | {} | {:.1} % ({:.1} user, {:.1} system) | {:.1} % | {:.3} % | {:.3} % | **{:.2}x** | {:.1} → {:.1} MiB | {:.0} | {:.2} | {:.1} ms | {} |",
        row.players,
        row.pellets,
        row.side,
        ms(row.game.tick_p50),
        ms(row.game.tick_p99),
        cpu(&row.game),
        row.game.user_percent,
        row.game.system_percent,
        row.game.bots_percent,
        per(&row.game),
        per(&row.floor),
        per(&row.game) / per(&row.floor).max(1e-9),
        row.game.rss_start_mib,
        row.game.rss_end_mib,
        row.game.bytes_per_sec,
        row.game.snapshots_per_sec,
        row.game.gap_p99_ms,
        row.floor_bytes,
    )
}

fn table(rows: &[Row], seconds: u64, options: &Options) -> String {
    let (threads, snapshot_threads) = (options.threads, options.snapshot_threads);
    let over = if options.webtransport {
        "over WebTransport, `--transport webtransport`; the floor's over WebSocket"
    } else {
        "over WebSocket"
    };
    let mut out = format!(
        "`cargo xtask scale` ({seconds} s windows, server `--threads {threads} --snapshot-threads {snapshot_threads}`), {}: one blobs room, 10 pellets per player at \
blobs' default density, light bots (`bots --light --game blobs`, 2 threads, {over}) on the same machine; \
the floor sends the same bytes per snapshot to the same number of bots.\n\n\
| players | pellets | arena side | tick p50 | tick p99 | server CPU | bots' CPU | CPU per player | floor CPU per player | skirmish / floor | RSS | bytes per player per s | snapshots/s per client | gap p99 | floor bytes per snapshot |\n\
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        super::quality::today()
    );
    for row in rows {
        out.push_str(&line(row));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&plot(rows));
    out
}

/// The CPU per player against players, the server's and the floor's, as
/// a Mermaid chart (drawn where the Markdown is read, such as GitHub).
fn plot(rows: &[Row]) -> String {
    let per = |m: &Measured, players: usize| cpu(m) / players as f64;
    let list = |f: &dyn Fn(&Row) -> String| rows.iter().map(f).collect::<Vec<_>>().join(", ");
    let top = rows
        .iter()
        .map(|r| per(&r.game, r.players).max(per(&r.floor, r.players)))
        .fold(0.0f64, f64::max);
    format!(
        "CPU per player (% of a core) against players: the server (upper line) and the floor (lower line).\n\n\
```mermaid\nxychart-beta\n    title \"CPU per player against players\"\n    x-axis \"players\" [{}]\n    \
y-axis \"% of a core per player\" 0 --> {:.2}\n    line [{}]\n    line [{}]\n```\n",
        list(&|r| r.players.to_string()),
        (top * 1.2).max(0.01),
        list(&|r| format!("{:.3}", per(&r.game, r.players))),
        list(&|r| format!("{:.3}", per(&r.floor, r.players))),
    )
}

fn write(table: &str) -> Result {
    let path = root().join("docs/BENCHMARKS.md");
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let updated = match (text.find(START), text.find(END)) {
        (Some(a), Some(b)) if a < b => format!(
            "{}{START}\n{table}{END}{}",
            &text[..a],
            &text[b + END.len()..]
        ),
        _ => format!("{text}\n## One .io room over real sockets\n\n{START}\n{table}{END}\n"),
    };
    fs::write(&path, updated).map_err(|e| format!("{}: {e}", path.display()))
}
