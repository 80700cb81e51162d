//! The input clock's runs for `docs/QUALITY.md`: the stepper's scenario
//! matrix (`bin/quality`, deterministic, with its plots), then two of its
//! cells again over real UDP, full bots over WebTransport through the
//! impairment relay against the release server: the main cell (16 bots,
//! 75 ms each way, ±30 ms, 5 % loss, 60 s; 20 s with `--quick`) and the RTT
//! step (8 bots, 25 ms each way, 125 ms from 10 s to 30 s, 45 s), the main
//! cell with 32 bots in two rooms, and the
//! main cell without resends (30 s), which shows what the shipped cover buys
//! over QUIC.
//! Their figures are appended to the page with the commands and the date.

use std::fs;
use std::process::{Command, Stdio};

use super::{http_get, release_bin, spawn_server};
use crate::{cargo, root, sh, Result};

/// The server's flags for bots that all come through the relay, from one
/// address.
const THROUGH_ONE_ADDRESS: &[&str] = &[
    "--max-connections-per-address",
    "1000",
    "--max-seats-per-address",
    "1000",
];

/// Where the section of the relay runs starts on a quality page.
const RELAY_SECTION: &str = "\n## Over real UDP through the relay";

/// Another game's quality page (`docs/quality/GAME.md`): its main cell in
/// the stepper, then the main cell again over real UDP (the game's bots
/// through the relay).
pub fn run_game(game: &str, quick: bool) -> Result {
    build_release()?;
    stepper_page(&["--game", game])?;
    let seconds = if quick { 20 } else { 60 };
    let section = game_relay(game, seconds)
        .unwrap_or_else(|e| format!("{RELAY_SECTION}\n\nThe run failed: {e}\n"));
    append_relay(
        &root()
            .join("docs")
            .join("quality")
            .join(format!("{game}.md")),
        &section,
    )
}

/// A game's main cell over WebTransport through the UDP relay; the page's
/// section with the figures.
fn game_relay(game: &str, seconds: u32) -> Result<String> {
    let (_server, addr) = spawn_server(THROUGH_ONE_ADDRESS)?;
    let main = format!(
        "--addr {addr} --game {game} --transport webtransport --compact --bots 16 \
         --seconds {seconds} --relay-latency-ms 75 --relay-jitter-ms 30 --relay-loss 0.05 --seed 7"
    );
    let m = bots(&main, &format!("{game}-relay-main-cell"))?;
    Ok(format!(
        "{RELAY_SECTION}\n\n\
`cargo xtask quality --game {game}` ran the release server and `target/release/bots {main}`\n\
on {date}: 16 {game} bots (the driver of the stepper's main cell above, the library's client\n\
session, the game's shipped settings), protocol 2 over WebTransport through the UDP impairment\n\
relay on 127.0.0.1, the shipped defaults; wall-clock time on a shared 2-core machine, so the\n\
figures move from run to run. \"Settled\" leaves out each bot's first five seconds.\n\n\
| run | RTT p50 | input-to-ack p50 / p99 | settled (from 5 s) | slack p50 | late | repeated | mispredictions | pushes | snaps | hard resyncs | input resends | bytes/s per bot, up / down |\n\
|---|---|---|---|---|---|---|---|---|---|---|---|---|\n\
| main cell, 16 bots (as shipped) | {} |\n",
        row(&m, 0.0),
        date = today(),
    ))
}

/// Replaces the relay section of the page at `path` with `section`.
fn append_relay(path: &std::path::Path, section: &str) -> Result {
    let mut text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    // bin/quality keeps the previous relay section; this run replaces it.
    if let Some(at) = text.find(RELAY_SECTION) {
        text.truncate(at);
    }
    text.push_str(section);
    fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("==> wrote {}", path.display());
    Ok(())
}

/// The release server and bots, built from this tree: never a stale pair
/// from another build.
fn build_release() -> Result {
    let build =
        "build --release -p skirmish-server -p skirmish-tests --bin skirmish-server --bin bots";
    sh(&cargo(), &build.split(' ').collect::<Vec<_>>(), &[])
}

/// The stepper's page (`bin/quality` with `args`), in release.
fn stepper_page(args: &[&str]) -> Result {
    let mut all = vec![
        "run",
        "--release",
        "-p",
        "skirmish-tests",
        "--bin",
        "quality",
        "--",
    ];
    all.extend_from_slice(args);
    sh(&cargo(), &all, &[])
}

/// Today, as `YYYY-MM-DD`.
pub(crate) fn today() -> String {
    Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// One row of a relay table from the bots' summary `f`, with `pushed`
/// pairs of players pushed apart.
fn row(f: &dyn Fn(&str) -> f64, pushed: f64) -> String {
    let pct = |name: &str| 100.0 * f(name) / f("inputs_sent").max(1.0);
    format!(
        "{:.0} ms | {:.0} / {:.0} ms | {:.0} / {:.0} ms | {:.0} ms | {:.2} % | {:.2} % | {} | {pushed} | {} | {} | {} | {:.0} / {:.0} B/s",
        f("rtt_p50_ms"),
        f("input_to_ack_p50_ms"),
        f("input_to_ack_p99_ms"),
        f("input_to_ack_p50_ms_settled"),
        f("input_to_ack_p99_ms_settled"),
        f("slack_p50_ms"),
        pct("late_inputs"),
        pct("repeated_inputs"),
        f("mispredictions"),
        f("snaps"),
        f("hard_resyncs"),
        f("input_resends"),
        f("up_bytes_per_client_per_sec"),
        f("bytes_per_client_per_sec"),
    )
}

/// Writes `docs/QUALITY.md` and its plots, then appends the relay run.
pub fn run(quick: bool) -> Result {
    build_release()?;
    stepper_page(&[])?;
    let seconds = if quick { 20 } else { 60 };
    let section =
        relay_runs(seconds).unwrap_or_else(|e| format!("{RELAY_SECTION}\n\nThe run failed: {e}\n"));
    append_relay(&root().join("docs").join("QUALITY.md"), &section)
}

/// The main cell and the RTT step over WebTransport through the UDP relay;
/// the page's section with the figures.
fn relay_runs(seconds: u32) -> Result<String> {
    // Every bot comes through the relay, from one address.
    let (_server, addr) = spawn_server(THROUGH_ONE_ADDRESS)?;
    let main = format!(
        "--addr {addr} --transport webtransport --compact --bots 16 --seconds {seconds} \
         --relay-latency-ms 75 --relay-jitter-ms 30 --relay-loss 0.05 --seed 7"
    );
    // Pushes between players (the server's count, per run) explain the
    // mispredictions that late and repeated inputs do not.
    let pushes = || pushes(&addr);
    let before = pushes();
    let m = bots(&main, "relay-main-cell")?;
    let pushed_m = pushes() - before;
    let two = main.replace("--bots 16", "--bots 32 --rooms 2");
    let before = pushes();
    let tw = bots(&two, "relay-main-cell-two-rooms")?;
    let pushed_tw = pushes() - before;
    let step = format!(
        "--addr {addr} --transport webtransport --compact --bots 8 --seconds 45 \
         --relay-latency-ms 25 --relay-jitter-ms 5 --relay-step-latency-ms 125 \
         --relay-step-at 10 --relay-step-for 20 --seed 8"
    );
    let before = pushes();
    let st = bots(&step, "relay-rtt-step")?;
    let pushed_st = pushes() - before;
    let bare =
        format!("{main} --resends 0").replace(&format!("--seconds {seconds}"), "--seconds 30");
    let before = pushes();
    let rs = bots(&bare, "relay-main-cell-no-resends")?;
    let pushed_rs = pushes() - before;
    Ok(format!(
        "{RELAY_SECTION}\n\n\
`cargo xtask bench` ran the release server and `target/release/bots` on {date} with, for the\n\
main cell, `{main}` and, for the RTT step (50 ms to 250 ms RTT from 10 s to 30 s), `{step}`\n\
(full bots, protocol 2, over WebTransport through the UDP impairment relay on 127.0.0.1;\n\
wall-clock time on a shared 2-core machine, so the figures move from run to run; the\n\
two-room row adds `--bots 32 --rooms 2`). \"Settled\" leaves out each bot's first five\n\
seconds, while its schedule moves from the first round trip's lead to the measured one.\n\
\"Pushes\" is the server's count of pairs of players pushed apart in the run\n\
(`skirmish_player_pushes_total`): these bots share one arena and sometimes meet, and a push\n\
is a misprediction of both players of its pair that no late input explains.\n\n\
| run | RTT p50 | input-to-ack p50 / p99 | settled (from 5 s) | slack p50 | late | repeated | mispredictions | pushes | snaps | hard resyncs | input resends | bytes/s per bot, up / down |\n\
|---|---|---|---|---|---|---|---|---|---|---|---|---|\n\
| main cell, 16 bots (as shipped: two resends while loss is seen, own echoes) | {} |\n\
| main cell, 32 bots in two rooms | {} |\n\
| RTT step, 8 bots | {} |\n\
| main cell with `--resends 0`, 30 s | {} |\n\n\
RTT step: the worst 1 s window from 2 s after the step up had {:.2} % late inputs (target at\n\
most 0.5 %); from 5 s after the step down input-to-ack p50 was {:.0} ms (target at most RTT +\n\
75 ms = 125 ms).\n",
        row(&m, pushed_m),
        row(&tw, pushed_tw),
        row(&st, pushed_st),
        row(&rs, pushed_rs),
        st("step_worst_late_pct_per_s"),
        st("step_input_to_ack_p50_ms_5s_after_down"),
        date = today(),
    ))
}

/// Runs the bots with `args` (their JSON into `artifacts/NAME.json`); their
/// summary, field by field (NaN for a missing one).
fn bots(args: &str, name: &str) -> Result<impl Fn(&str) -> f64> {
    let json = root().join("artifacts").join(format!("{name}.json"));
    println!("==> {name} over real UDP: bots {args}");
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
        .ok_or("the bots printed no summary line")?
        .to_string();
    let field = move |field: &str| -> f64 {
        summary
            .split(' ')
            .find_map(|kv| kv.strip_prefix(&format!("{field}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or(f64::NAN)
    };
    // Bots that never played (say, refused by a server of another build)
    // would otherwise make a row of zeros.
    let sent = field("inputs_sent");
    if sent.is_nan() || sent <= 0.0 {
        return Err(format!(
            "the bots sent no inputs ({name}): did they join? (inputs_sent {sent})"
        ));
    }
    Ok(field)
}

/// The server's count of players pushed apart so far (0 when `/metrics`
/// cannot be read).
fn pushes(addr: &str) -> f64 {
    http_get(addr, "/metrics")
        .ok()
        .and_then(|m| {
            m.lines()
                .filter(|l| l.starts_with("skirmish_player_pushes_total"))
                .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
                .reduce(|a, b| a + b)
        })
        .unwrap_or(0.0)
}
