//! The input clock's runs for `docs/QUALITY.md`: the stepper's scenario
//! matrix (`bin/quality`, deterministic, with its plots), then the main
//! cell again over real UDP: 16 full bots over WebTransport through the
//! impairment relay (75 ms each way, ±30 ms, 5 % loss), against the release
//! server, for 60 s (20 s with `--quick`). The relay run's figures are
//! appended to the page with the command that produced them and the date.

use std::fs;
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::{release_bin, Reaped};
use crate::{cargo, root, sh, Result};

/// Writes `docs/QUALITY.md` and its plots, then appends the relay run.
pub fn run(quick: bool) -> Result {
    let cargo = cargo();
    sh(
        &cargo,
        &[
            "run",
            "--release",
            "-p",
            "skirmish-tests",
            "--bin",
            "quality",
        ],
        &[],
    )?;
    let seconds = if quick { 20 } else { 60 };
    let section = match relay_main_cell(seconds) {
        Ok(section) => section,
        Err(e) => format!("\n## Over real UDP through the relay\n\nThe run failed: {e}\n"),
    };
    let page = root().join("docs").join("QUALITY.md");
    let mut text =
        fs::read_to_string(&page).map_err(|e| format!("cannot read {}: {e}", page.display()))?;
    text.push_str(&section);
    fs::write(&page, text).map_err(|e| format!("cannot write {}: {e}", page.display()))?;
    println!("==> wrote {}", page.display());
    Ok(())
}

/// The main cell over WebTransport through the UDP relay; the page's
/// section with the figures.
fn relay_main_cell(seconds: u32) -> Result<String> {
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let addr = format!("127.0.0.1:{port}");
    let server = Command::new(release_bin("skirmish-server"))
        .args(["--addr", &addr])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start target/release/skirmish-server: {e}"))?;
    let mut server = Reaped(server);
    let started = Instant::now();
    while TcpStream::connect(&addr).is_err() {
        server.check_running("the server")?;
        if started.elapsed() > Duration::from_secs(10) {
            return Err(format!("the server did not listen on {addr} within 10 s"));
        }
        thread::sleep(Duration::from_millis(50));
    }
    let json = root().join("artifacts").join("relay-main-cell.json");
    let args = format!(
        "--addr {addr} --transport webtransport --compact --bots 16 --seconds {seconds} \
         --relay-latency-ms 75 --relay-jitter-ms 30 --relay-loss 0.05 --seed 7"
    );
    println!("==> main cell over real UDP: bots {args}");
    let out = Command::new(release_bin("bots"))
        .args(args.split(' ').filter(|a| !a.is_empty()))
        .arg("--json")
        .arg(&json)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot start target/release/bots: {e}"))?;
    if !out.status.success() {
        return Err(format!("the bots failed ({})", out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("summary "))
        .ok_or("the bots printed no summary line")?;
    let field = |name: &str| -> f64 {
        summary
            .split(' ')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    let inputs = field("inputs_sent");
    let pct = |n: f64| 100.0 * n / inputs.max(1.0);
    let date = Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    Ok(format!(
        "\n## Over real UDP through the relay\n\n\
`cargo xtask bench` ran the release server and `target/release/bots {args}` on {date}\n\
(16 full bots, protocol 2, over WebTransport through the UDP impairment relay on\n\
127.0.0.1; wall-clock time on a shared 2-core machine, so the figures move from run to\n\
run). Targets as above, RTT being what the bots measured.\n\n\
| RTT p50 | input-to-ack p50 / p99 | slack p50 | late | repeated | mispredictions | snaps | hard resyncs | input resends |\n\
|---|---|---|---|---|---|---|---|---|\n\
| {:.0} ms | {:.0} / {:.0} ms | {:.0} ms | {:.2} % | {:.2} % | {} | {} | {} | {} |\n",
        field("rtt_p50_ms"),
        field("input_to_ack_p50_ms"),
        field("input_to_ack_p99_ms"),
        field("slack_p50_ms"),
        pct(field("late_inputs")),
        pct(field("repeated_inputs")),
        field("mispredictions"),
        field("snaps"),
        field("hard_resyncs"),
        field("input_resends"),
        date = date.trim(),
    ))
}
