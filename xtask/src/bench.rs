//! `cargo xtask bench`: the criterion benchmarks, then load runs of headless
//! bots against the real server, written into `docs/BENCHMARKS.md`.
//!
//! Each load run starts the release server as its own process, runs the
//! release `bots` binary against it, and reads the server's CPU time and RSS
//! from `/proc` and its tick-duration histogram from `/metrics`. Bots run on
//! the same 2-core machine, so their cost is included in what the server
//! gets.

use std::fmt::Write as _;
use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{cargo, root, sh, Result};

const START: &str = "<!-- load-runs:start -->";
const END: &str = "<!-- load-runs:end -->";

/// One load scenario.
struct Scenario {
    name: &'static str,
    bots: usize,
    rooms: usize,
    seconds: u64,
    compact: bool,
}

/// What one load run measured.
#[derive(Default)]
struct Measured {
    cpu_percent: f64,
    rss_start_mib: f64,
    rss_end_mib: f64,
    tick_p50: String,
    tick_p99: String,
    gap_p99_ms: f64,
    snapshots_per_sec: f64,
    bytes_per_client: f64,
    bytes_per_player_snapshot: f64,
    failed_bots: String,
}

pub fn run(args: &[String]) -> Result {
    let quick = args.iter().any(|a| a == "--quick");
    let soak = args
        .iter()
        .position(|a| a == "--soak")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(if quick { 30 } else { 300 });
    let cargo = cargo();
    let criterion_args = ["--", "--warm-up-time", "1", "--measurement-time", "3"];
    for bench in ["reconcile", "world"] {
        let mut a = vec!["bench", "-p", "skirmish-core", "--bench", bench];
        a.extend(criterion_args);
        sh(&cargo, &a, &[])?;
    }
    println!("==> building the release server and bots");
    sh(
        &cargo,
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
    let secs = if quick { 10 } else { 30 };
    let scenarios = [
        Scenario {
            name: "1 room of 16",
            bots: 16,
            rooms: 1,
            seconds: secs,
            compact: false,
        },
        Scenario {
            name: "1 room of 64",
            bots: 64,
            rooms: 1,
            seconds: secs,
            compact: false,
        },
        Scenario {
            name: "1 room of 64, compact",
            bots: 64,
            rooms: 1,
            seconds: secs,
            compact: true,
        },
        Scenario {
            name: "16 rooms of 64 (1024 players)",
            bots: 1024,
            rooms: 16,
            seconds: secs,
            compact: false,
        },
        Scenario {
            name: "16 rooms of 64, compact",
            bots: 1024,
            rooms: 16,
            seconds: secs,
            compact: true,
        },
        Scenario {
            name: "soak: 16 rooms of 64, compact",
            bots: 1024,
            rooms: 16,
            seconds: soak,
            compact: true,
        },
    ];
    let mut rows = Vec::new();
    for scenario in &scenarios {
        println!(
            "==> load run: {} for {} s (bots at 20 frames/s)",
            scenario.name, scenario.seconds
        );
        let measured = load_run(scenario)?;
        rows.push((scenario, measured));
    }
    write_table(&rows, quick, soak)
}

fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// Kills the server when the run ends, however it ends.
struct ServerProcess(Child);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_get(addr: &str, path: &str) -> Result<String> {
    let mut stream = TcpStream::connect(addr).map_err(|e| format!("GET {path}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").map_err(|e| e.to_string())?;
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .map_err(|e| format!("GET {path}: {e}"))?;
    Ok(response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default())
}

/// CPU seconds (user + system) of a process.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of stat, 11 and 12 after the name.
    (ticks(11) + ticks(12)) / 100.0
}

fn rss_mib(pid: u32) -> f64 {
    fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

/// The upper bound of the histogram bucket holding quantile `q`.
fn quantile(metrics: &str, q: f64) -> String {
    let mut buckets = Vec::new();
    for line in metrics.lines() {
        if let Some(rest) = line.strip_prefix("skirmish_tick_duration_seconds_bucket{le=\"") {
            if let Some((le, count)) = rest.split_once("\"} ") {
                buckets.push((le.to_string(), count.trim().parse::<f64>().unwrap_or(0.0)));
            }
        }
    }
    let total = buckets.last().map_or(0.0, |b| b.1);
    if total == 0.0 {
        return "-".to_string();
    }
    buckets
        .iter()
        .find(|(_, count)| *count >= q * total)
        .map_or_else(
            || "-".to_string(),
            |(le, _)| {
                le.parse::<f64>()
                    .map_or_else(|_| "> 50 ms".to_string(), |s| format!("≤ {} µs", s * 1e6))
            },
        )
}

fn load_run(scenario: &Scenario) -> Result<Measured> {
    let port = free_port()?;
    let addr = format!("127.0.0.1:{port}");
    let target = root().join("target").join("release");
    let server = Command::new(target.join("skirmish-server"))
        .args([
            "--addr",
            &addr,
            "--room-capacity",
            "64",
            "--max-rooms",
            "64",
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let server = ServerProcess(server);
    let pid = server.0.id();
    let started = Instant::now();
    while TcpStream::connect(&addr).is_err() {
        if started.elapsed() > Duration::from_secs(10) {
            return Err("the server did not start listening".to_string());
        }
        std::thread::yield_now();
    }
    let cpu_before = cpu_seconds(pid);
    let wall = Instant::now();
    let bots = bots_command(scenario, &addr)
        .spawn()
        .map_err(|e| format!("cannot run the bots: {e}"))?;
    // Memory while every bot plays: once a quarter in, once near the end
    // (after the bots exit, their connections' memory is gone).
    let quarter = Duration::from_secs(scenario.seconds) / 4 + Duration::from_secs(1);
    std::thread::sleep(quarter);
    let rss_start = rss_mib(pid);
    std::thread::sleep((Duration::from_secs(scenario.seconds) * 9 / 10).saturating_sub(quarter));
    let rss_end = rss_mib(pid);
    let output = bots
        .wait_with_output()
        .map_err(|e| format!("cannot run the bots: {e}"))?;
    let elapsed = wall.elapsed().as_secs_f64();
    let cpu = cpu_seconds(pid) - cpu_before;
    let metrics = http_get(&addr, "/metrics").unwrap_or_default();
    drop(server);

    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("summary "))
        .unwrap_or_default();
    let field = |name: &str| {
        summary
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let players_per_room = (scenario.bots / scenario.rooms.max(1)).max(1) as f64;
    let snapshots_per_sec = field("snapshots_per_sec");
    let bytes_per_client = field("bytes_per_client_per_sec");
    Ok(Measured {
        cpu_percent: cpu / elapsed * 100.0,
        rss_start_mib: rss_start,
        rss_end_mib: rss_end,
        tick_p50: quantile(&metrics, 0.5),
        tick_p99: quantile(&metrics, 0.99),
        gap_p99_ms: field("snapshot_gap_p99_ms"),
        snapshots_per_sec,
        bytes_per_client,
        bytes_per_player_snapshot: if snapshots_per_sec > 0.0 {
            bytes_per_client / snapshots_per_sec / players_per_room
        } else {
            0.0
        },
        failed_bots: if output.status.success() {
            String::new()
        } else {
            format!(" (bots exited with {})", output.status)
        },
    })
}

/// The `bots` command line of a scenario.
fn bots_command(scenario: &Scenario, addr: &str) -> Command {
    let json = root().join("artifacts").join(format!(
        "load-{}x{}{}.json",
        scenario.bots,
        scenario.seconds,
        if scenario.compact { "-compact" } else { "" }
    ));
    let mut bots = Command::new(root().join("target").join("release").join("bots"));
    if scenario.compact {
        bots.arg("--compact");
    }
    bots.args([
        "--addr",
        addr,
        "--bots",
        &scenario.bots.to_string(),
        "--rooms",
        &scenario.rooms.to_string(),
        "--seconds",
        &scenario.seconds.to_string(),
        "--frame-ms",
        "50",
        "--json",
        &json.to_string_lossy(),
    ])
    .stderr(Stdio::inherit())
    .stdout(Stdio::piped());
    bots
}

fn write_table(rows: &[(&Scenario, Measured)], quick: bool, soak: u64) -> Result {
    let mut table = String::new();
    let _ = writeln!(table, "{START}");
    let _ = writeln!(
        table,
        "Produced by `cargo xtask bench{}` (soak {soak} s); the JSON of every bot is in `artifacts/`.\n",
        if quick { " --quick" } else { "" }
    );
    let _ = writeln!(
        table,
        "| run | seconds | server CPU | server RSS at 1/4 → 9/10 of the run | tick p50 | tick p99 | snapshots/s per client | snapshot gap p99 | bytes/s per client | bytes per player per snapshot |"
    );
    let _ = writeln!(table, "|---|---|---|---|---|---|---|---|---|---|");
    for (s, m) in rows {
        let _ = writeln!(
            table,
            "| {}{} | {} | {:.0} % | {:.1} → {:.1} MiB | {} | {} | {:.1} | {:.1} ms | {:.0} | {:.0} |",
            s.name,
            m.failed_bots,
            s.seconds,
            m.cpu_percent,
            m.rss_start_mib,
            m.rss_end_mib,
            m.tick_p50,
            m.tick_p99,
            m.snapshots_per_sec,
            m.gap_p99_ms,
            m.bytes_per_client,
            m.bytes_per_player_snapshot,
        );
    }
    let _ = writeln!(table, "{END}");
    let path = root().join("docs").join("BENCHMARKS.md");
    let doc =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let doc = match (doc.find(START), doc.find(END)) {
        (Some(a), Some(b)) if b > a => {
            format!("{}{}{}", &doc[..a], table.trim_end(), &doc[b + END.len()..])
        }
        _ => format!(
            "{}\n## Load runs\n\n{}",
            doc.trim_end_matches('\n').to_string() + "\n",
            table
        ),
    };
    fs::write(&path, doc).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("{table}");
    println!("==> wrote the load table into {}", path.display());
    Ok(())
}
