//! `cargo xtask bench`: the criterion benchmarks, then load runs of light
//! bots against the real server, written into `docs/BENCHMARKS.md`.
//!
//! Each load run starts the release server as its own process and runs the
//! release `bots` binary in light mode (`--light --compact`: raw clients that
//! send one input per tick, acknowledge snapshots and only count bytes)
//! against it, with each run's extra flags. The server is
//! measured only over the bots' measured window: once the bots print that
//! every bot joined (`light bots: ...` on stderr), the run sleeps the bots'
//! warmup, samples the server's CPU times and RSS from `/proc` and its tick
//! histogram from `/metrics`, sleeps the window and samples again.
//!
//! Flags: `--quick` (10 s windows instead of 20 s, a 30 s soak) and
//! `--soak SECONDS` (the soak's window; 0 skips it).

pub(crate) mod quality;
pub(crate) mod scale;
mod table;

use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::{cargo, root, sh, Result};

const START: &str = "<!-- load-runs:start -->";
const END: &str = "<!-- load-runs:end -->";

/// The seconds the light bots play after all joined before they measure.
const WARMUP_SECS: u64 = 3;
/// Threads of the light bots.
const BOT_THREADS: u64 = 2;
/// Kept clear at both ends of the bots' window, so that the server samples
/// fall inside it.
const MARGIN: Duration = Duration::from_millis(250);
/// How long every bot may take to join.
const JOIN_TIMEOUT: Duration = Duration::from_secs(180);
/// How long the bots may take to exit after their window.
const EXIT_TIMEOUT: Duration = Duration::from_secs(60);
/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on Linux).
const CLOCK_TICKS: f64 = 100.0;

/// The snapshot-rate target: at least this many snapshots a second per client...
const MIN_SNAPSHOTS_PER_SEC: f64 = 19.9;
/// ...with a 99th-percentile gap between snapshots of at most this many ms.
const MAX_GAP_P99_MS: f64 = 60.0;
/// The tick-time target: tick p99 of at most this many seconds.
const MAX_TICK_P99: f64 = 0.000_5;

/// The head of the load table.
const HEADER: &str = "| run | players | rooms | seconds | server CPU | **CPU per 100 players** | user | system | snapshots/s per client | snapshot gap p99 | bytes per player per snapshot | tick p50 | tick p99 | send p99 | RSS | verdict |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
";

/// What a load run is held to: nothing, the snapshot rate and gap, the tick
/// p99, or the snapshot rate and gap with no RSS growth over the window.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    None,
    Rate,
    Tick,
    RateNoGrowth,
}

/// One load scenario.
struct Scenario {
    name: &'static str,
    players: usize,
    rooms: usize,
    seconds: u64,
    target: Target,
    /// Extra server flags.
    server: &'static [&'static str],
    /// Extra bot flags.
    bots: &'static [&'static str],
}

/// What one load run measured.
struct Measured {
    /// Server CPU over the window, % of one core.
    user_percent: f64,
    system_percent: f64,
    /// The bots' CPU over the window (user and system), % of one core.
    bots_percent: f64,
    rss_start_mib: f64,
    rss_end_mib: f64,
    /// Upper bounds of the histogram buckets holding the quantiles over the
    /// window, in seconds (infinite past the last bucket); `None` without ticks.
    tick_p50: Option<f64>,
    tick_p99: Option<f64>,
    /// Writing one tick's frames to the sockets, p99 bucket bound (seconds).
    send_p99: Option<f64>,
    /// From the bots' summary line: bots that failed, and per client:
    /// snapshots/s, bytes/s and the snapshot gap p99 in ms.
    failed: f64,
    snapshots_per_sec: f64,
    bytes_per_sec: f64,
    gap_p99_ms: f64,
}

/// How `cargo xtask bench` was asked to run.
struct Options {
    quick: bool,
    soak: u64,
    /// Only the input clock's runs (`docs/QUALITY.md`).
    quality_only: bool,
}

fn parse_options(args: &[String]) -> Result<Options> {
    let mut quick = false;
    let mut soak = None;
    let mut quality_only = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--quick" => quick = true,
            "--quality" => quality_only = true,
            "--soak" => {
                let value = args.next().ok_or("`--soak` needs a number of seconds")?;
                let secs = value
                    .parse::<u64>()
                    .map_err(|_| format!("`--soak {value}`: expected a whole number of seconds"))?;
                soak = Some(secs);
            }
            "--" => {}
            other => {
                return Err(format!(
                    "bench: unknown argument `{other}` (expected `--quick`, `--quality` or `--soak SECONDS`)"
                ))
            }
        }
    }
    Ok(Options {
        quick,
        soak: soak.unwrap_or(if quick { 30 } else { 300 }),
        quality_only,
    })
}

pub fn run(args: &[String]) -> Result {
    let options = parse_options(args)?;
    let cargo = cargo();
    if options.quality_only {
        return quality::run(options.quick);
    }
    let criterion_args = ["--", "--warm-up-time", "1", "--measurement-time", "3"];
    for bench in ["reconcile", "world"] {
        let mut a = vec!["bench", "-p", "skirmish-tanks", "--bench", bench];
        a.extend(criterion_args);
        sh(&cargo, &a, &[])?;
    }
    println!("==> building the release server and bots");
    let build =
        "build --release -p skirmish-server -p skirmish-tests --bin skirmish-server --bin bots";
    sh(&cargo, &build.split(' ').collect::<Vec<_>>(), &[])?;
    println!("==> the input clock: the scenario matrix and the main cell over real UDP");
    quality::run(options.quick)?;
    let scenarios = scenarios(&options);
    let mut rows = Vec::new();
    for scenario in &scenarios {
        println!(
            "==> load run: {} ({} light bots, {} room(s)), {} s warmup then {} s measured",
            scenario.name, scenario.players, scenario.rooms, WARMUP_SECS, scenario.seconds
        );
        let measured = load_run(scenario);
        if let Err(e) = &measured {
            eprintln!("xtask: load run `{}` failed: {e}", scenario.name);
        }
        rows.push((scenario, measured));
    }
    table::write_table(&rows, &options)?;
    let failed = rows.iter().filter(|(_, m)| m.is_err()).count();
    if failed > 0 {
        return Err(format!(
            "{failed} load run(s) failed (marked in the table); see the errors above"
        ));
    }
    Ok(())
}

fn scenarios(options: &Options) -> Vec<Scenario> {
    let secs = if options.quick { 10 } else { 20 };
    let interest: &'static [&'static str] = &["--arena", "8000x8000", "--interest-radius", "1000"];
    let full: &'static [&'static str] = &["--no-ack"];
    let soak = (
        "soak: 16 rooms of 64",
        1024,
        16,
        options.soak,
        Target::RateNoGrowth,
        &[][..],
        &[][..],
    );
    [
        (
            "tick time: 1 room of 64",
            64,
            1,
            secs,
            Target::Tick,
            &[][..],
            &[][..],
        ),
        ("1 room of 100", 100, 1, secs, Target::None, &[], &[]),
        ("1 room of 400", 400, 1, secs, Target::None, &[], &[]),
        (
            "1 room of 400, full frames",
            400,
            1,
            secs,
            Target::None,
            &[],
            full,
        ),
        ("1 room of 800", 800, 1, secs, Target::Rate, &[], &[]),
        (
            "1 room of 800 in 8000 x 8000, interest radius 1000",
            800,
            1,
            secs,
            Target::None,
            interest,
            &[],
        ),
        ("16 rooms of 64", 1024, 16, secs, Target::Rate, &[], &[]),
    ]
    .into_iter()
    .chain((options.soak > 0).then_some(soak))
    .map(
        |(name, players, rooms, seconds, target, server, bots)| Scenario {
            name,
            players,
            rooms,
            seconds,
            target,
            server,
            bots,
        },
    )
    .collect()
}

/// A child process that is killed when the run ends, however it ends.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Reaped {
    /// An error if the process has exited.
    fn check_running(&mut self, what: &str) -> Result {
        match self.0.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!("{what} exited during the run ({status})")),
            Err(e) => Err(format!("cannot check on {what}: {e}")),
        }
    }
}

/// A binary of the release build, in `CARGO_TARGET_DIR` when it is set
/// (relative to the project root, as cargo reads it), else `target/`.
fn release_bin(name: &str) -> std::path::PathBuf {
    target_dir().join("release").join(name)
}

/// Where cargo builds: `CARGO_TARGET_DIR` (relative to the project root,
/// where xtask runs cargo) or `target/`.
pub fn target_dir() -> std::path::PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root().join(dir),
        _ => root().join("target"),
    }
}

/// Starts the server on a free port; one room is big enough for every run,
/// more rooms are exactly full.
fn start_server(scenario: &Scenario) -> Result<(Reaped, String)> {
    let capacity = match scenario.rooms {
        0 | 1 => 1000,
        rooms => scenario.players.div_ceil(rooms),
    }
    .to_string();
    // The light bots speak protocol 1 (inputs in their own ticks).
    let mut args = vec![
        "--room-capacity",
        capacity.as_str(),
        "--max-rooms",
        "64",
        "--allow-protocol-1",
    ];
    args.extend(scenario.server);
    spawn_server(&args)
}

/// Starts the release server on a free port of 127.0.0.1 with `args` and
/// waits until it listens; the process and its address.
fn spawn_server(args: &[&str]) -> Result<(Reaped, String)> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let addr = format!("127.0.0.1:{port}");
    let server = Command::new(release_bin("skirmish-server"))
        .args(["--addr", &addr])
        .args(args)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start target/release/skirmish-server: {e}"))?;
    let mut server = Reaped(server);
    listening(&mut server, &addr, "the server")?;
    Ok((server, addr))
}

/// Waits until `child` (`what`, for errors) listens on `addr`, for 10 s at
/// most.
fn listening(child: &mut Reaped, addr: &str, what: &str) -> Result {
    let started = Instant::now();
    while TcpStream::connect(addr).is_err() {
        child.check_running(what)?;
        if started.elapsed() > Duration::from_secs(10) {
            return Err(format!("{what} did not listen on {addr} within 10 s"));
        }
        thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// The running light bots, their output read on threads.
struct Bots {
    child: Reaped,
    joined: Receiver<()>,
    stdout: JoinHandle<String>,
}

impl Bots {
    /// The bots' process.
    fn pid(&self) -> u32 {
        self.child.0.id()
    }

    fn start(scenario: &Scenario, addr: &str) -> Result<Bots> {
        // One file per run, named after it.
        let slug: String = scenario
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let json = root().join("artifacts").join(format!(
            "light-{}-{}s.json",
            slug.trim_matches('-'),
            scenario.seconds
        ));
        let child = Command::new(release_bin("bots"))
            .args(["--light", "--compact", "--addr", addr])
            .args(["--bots", &scenario.players.to_string()])
            .args(["--rooms", &scenario.rooms.to_string()])
            .args(["--seconds", &scenario.seconds.to_string()])
            .args(["--warmup", &WARMUP_SECS.to_string()])
            .args(["--threads", &BOT_THREADS.to_string()])
            .args(scenario.bots)
            .arg("--json")
            .arg(&json)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start target/release/bots: {e}"))?;
        let mut child = Reaped(child);
        let (Some(stdout), Some(stderr)) = (child.0.stdout.take(), child.0.stderr.take()) else {
            return Err("the bots' output is not piped".to_string());
        };
        let (tx, joined) = mpsc::channel();
        // Forwards the bots' stderr and tells when every bot joined.
        thread::spawn(move || {
            for line in BufReader::new(stderr)
                .lines()
                .map_while(std::io::Result::ok)
            {
                eprintln!("    {line}");
                if line.starts_with("light bots:") {
                    let _ = tx.send(());
                }
            }
        });
        // Unread output shows up as a missing summary line.
        let stdout = thread::spawn(move || {
            let mut text = String::new();
            let _ = { stdout }.read_to_string(&mut text);
            text
        });
        Ok(Bots {
            child,
            joined,
            stdout,
        })
    }

    /// Waits until the bots say every bot joined and the warmup began.
    fn wait_joined(&mut self) -> Result {
        match self.joined.recv_timeout(JOIN_TIMEOUT) {
            Ok(()) => Ok(()),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "the bots did not all join within {} s",
                JOIN_TIMEOUT.as_secs()
            )),
            Err(RecvTimeoutError::Disconnected) => match self.child.0.wait() {
                Ok(status) => Err(format!("the bots exited before all joined ({status})")),
                Err(e) => Err(format!("the bots stopped talking before all joined: {e}")),
            },
        }
    }

    /// Waits for the bots to exit; returns their status and stdout.
    fn finish(mut self) -> Result<(ExitStatus, String)> {
        let deadline = Instant::now() + EXIT_TIMEOUT;
        let status = loop {
            match self.child.0.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(100)),
                Ok(None) => {
                    return Err(format!(
                        "the bots did not exit within {} s of their window's end",
                        EXIT_TIMEOUT.as_secs()
                    ))
                }
                Err(e) => return Err(format!("cannot wait for the bots: {e}")),
            }
        };
        let stdout = self
            .stdout
            .join()
            .map_err(|_| "the thread reading the bots' output panicked")?;
        Ok((status, stdout))
    }
}

pub(crate) fn http_get(addr: &str, path: &str) -> Result<String> {
    let fail = |e: std::io::Error| format!("GET http://{addr}{path}: {e}");
    let mut stream = TcpStream::connect(addr).map_err(fail)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(fail)?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").map_err(fail)?;
    let mut response = String::new();
    stream.read_to_string(&mut response).map_err(fail)?;
    let (head, body) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("GET http://{addr}{path}: no complete HTTP response"))?;
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(format!("GET http://{addr}{path}: `{status}`"));
    }
    Ok(body.to_string())
}

/// The server at one instant: CPU seconds in user and in system mode since
/// it started, RSS, and the tick histogram (upper bound in seconds,
/// cumulative count).
struct Sample {
    at: Instant,
    user: f64,
    system: f64,
    /// The bots' CPU time, user and system (0 if it cannot be read).
    bots_cpu: f64,
    rss_mib: f64,
    ticks: Vec<(f64, f64)>,
    sends: Vec<(f64, f64)>,
}

impl Sample {
    /// `metrics`: the address of the server's `/metrics` (the floor has
    /// none: its histograms stay empty).
    fn take(server: &mut Reaped, bots: u32, metrics: Option<&str>) -> Result<Sample> {
        server.check_running("the server")?;
        let pid = server.0.id();
        let at = Instant::now();
        let read = |path: String| {
            fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))
        };
        let (user, system) = cpu_seconds(pid)?;
        let bots_cpu = cpu_seconds(bots).map_or(0.0, |(u, s)| u + s);
        let rss_mib = read(format!("/proc/{pid}/status"))?
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .ok_or_else(|| format!("/proc/{pid}/status has no VmRSS line"))?
            / 1024.0;
        let (ticks, sends) = match metrics {
            Some(addr) => {
                let metrics = http_get(addr, "/metrics")?;
                (
                    tick_histogram(&metrics, "skirmish_tick_duration_seconds")?,
                    tick_histogram(&metrics, "skirmish_tick_send_seconds")?,
                )
            }
            None => (Vec::new(), Vec::new()),
        };
        Ok(Sample {
            at,
            user,
            system,
            bots_cpu,
            rss_mib,
            ticks,
            sends,
        })
    }
}

/// The CPU time process `pid` has taken, user and system, in seconds.
fn cpu_seconds(pid: u32) -> Result<(f64, f64)> {
    let path = format!("/proc/{pid}/stat");
    let stat = fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    // utime and stime are fields 14 and 15 of stat: 11 and 12 after the
    // command name, which is in parentheses.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let cpu = |i: usize| {
        let ticks = fields.get(i).and_then(|v| v.parse::<f64>().ok());
        ticks
            .map(|t| t / CLOCK_TICKS)
            .ok_or_else(|| format!("{path} has no CPU times: {stat}"))
    };
    Ok((cpu(11)?, cpu(12)?))
}

/// The cumulative buckets of the duration histogram `name` in a `/metrics`
/// page.
fn tick_histogram(metrics: &str, name: &str) -> Result<Vec<(f64, f64)>> {
    let prefix = format!("{name}_bucket{{le=\"");
    let mut buckets = Vec::new();
    for line in metrics.lines() {
        let Some(rest) = line.strip_prefix(prefix.as_str()) else {
            continue;
        };
        let parsed = rest.split_once("\"} ").and_then(|(le, count)| {
            let bound = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().ok()?
            };
            Some((bound, count.trim().parse().ok()?))
        });
        buckets.push(parsed.ok_or_else(|| format!("/metrics: unreadable bucket `{line}`"))?);
    }
    if buckets.is_empty() {
        return Err(format!("/metrics has no {name} histogram"));
    }
    Ok(buckets)
}

/// The upper bound of the bucket holding quantile `q` of the ticks between
/// two histograms; `None` if there were none.
fn quantile(before: &[(f64, f64)], after: &[(f64, f64)], q: f64) -> Option<f64> {
    let window: Vec<(f64, f64)> = after
        .iter()
        .zip(before)
        .map(|(&(bound, a), &(_, b))| (bound, a - b))
        .collect();
    let total = window.last()?.1;
    if total <= 0.0 {
        return None;
    }
    window
        .iter()
        .find(|(_, count)| *count >= q * total)
        .map(|&(bound, _)| bound)
}

fn load_run(scenario: &Scenario) -> Result<Measured> {
    let (server, addr) = start_server(scenario)?;
    measure(scenario, server, &addr, true)
}

/// Runs `scenario`'s bots against the server `server` listening on `addr`
/// and measures it over their window (its `/metrics` too if `metrics`).
fn measure(scenario: &Scenario, mut server: Reaped, addr: &str, metrics: bool) -> Result<Measured> {
    let metrics = metrics.then_some(addr);
    let mut bots = Bots::start(scenario, addr)?;
    bots.wait_joined()?;
    thread::sleep(Duration::from_secs(WARMUP_SECS) + MARGIN);
    let before = Sample::take(&mut server, bots.pid(), metrics)?;
    thread::sleep(Duration::from_secs(scenario.seconds).saturating_sub(MARGIN * 2));
    let after = Sample::take(&mut server, bots.pid(), metrics)?;
    let (status, stdout) = bots.finish()?;
    drop(server);
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("summary "))
        .ok_or_else(|| format!("the bots printed no `summary` line (they exited with {status})"))?;
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse::<f64>().ok())
            .ok_or_else(|| format!("no number `{name}` in the bots' summary line: {line}"))
    };
    let failed = field("failed")?;
    if failed == 0.0 && !status.success() {
        return Err(format!("the bots exited with {status}"));
    }
    let window = after.at.duration_since(before.at).as_secs_f64().max(1e-9);
    Ok(Measured {
        user_percent: (after.user - before.user) / window * 100.0,
        bots_percent: (after.bots_cpu - before.bots_cpu) / window * 100.0,
        system_percent: (after.system - before.system) / window * 100.0,
        rss_start_mib: before.rss_mib,
        rss_end_mib: after.rss_mib,
        tick_p50: quantile(&before.ticks, &after.ticks, 0.5),
        tick_p99: quantile(&before.ticks, &after.ticks, 0.99),
        send_p99: quantile(&before.sends, &after.sends, 0.99),
        failed,
        snapshots_per_sec: field("snapshots_per_sec")?,
        bytes_per_sec: field("bytes_per_client_per_sec")?,
        gap_p99_ms: field("snapshot_gap_p99_ms")?,
    })
}
