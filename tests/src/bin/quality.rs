//! `quality`: runs the clock's scenario matrix in the deterministic stepper
//! and writes `docs/QUALITY.md` (one row per scenario) and its SVG plots
//! (`docs/quality/*.svg`, drawn from the runs' own samples).
//!
//! `cargo xtask bench` runs it; `cargo run --release -p skirmish-tests --bin
//! quality -- DIR` writes into another folder. The runs are seeded, so the
//! numbers are the same on every machine; the command and the date go into
//! the page.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use skirmish_tanks::Encoding;
use skirmish_tests::chart::{chart, Line};
use skirmish_tests::matrix::{
    self, blackout, drift, fairness, hitch, rtt_step, summarize, Summary, INCIDENT_AT, STEP_DOWN,
    STEP_UP,
};
use skirmish_tests::scenario::{link, percentile};
use skirmish_tests::stepper::{SimClient, Stepper};

fn all(s: &Stepper) -> Vec<&SimClient> {
    s.clients.iter().collect()
}

/// Where the section of the relay runs starts (written by `cargo xtask
/// bench`, kept when this runs alone).
const RELAY_SECTION: &str = "\n## Over real UDP through the relay";

/// One row: the scenario, its summary, and what only some rows have.
struct Row {
    name: String,
    summary: Summary,
    convergence: String,
    hits: String,
}

fn row(name: &str, summary: Summary) -> Row {
    Row {
        name: name.to_string(),
        summary,
        convergence: "-".into(),
        hits: "-".into(),
    }
}

/// The first whole second from `from` after which every window to `to`
/// passes `ok`, as seconds after `from`.
fn settles(clients: &[&SimClient], from: f64, to: f64, ok: impl Fn(&Summary) -> bool) -> String {
    let mut last_bad = None;
    let mut s = from;
    while s + 1.0 <= to {
        if !ok(&summarize(clients, s, s + 1.0, to)) {
            last_bad = Some(s);
        }
        s += 1.0;
    }
    match last_bad {
        None => "< 1 s".into(),
        Some(bad) => format!("{:.0} s", bad + 1.0 - from),
    }
}

/// One plotted line: its name, colour and points of (seconds, value).
type Series = Line;

/// Per-second medians of a (time, value) trace over every client.
fn per_second(
    clients: &[&SimClient],
    pick: fn(&SimClient) -> &Vec<(f64, f64)>,
    end: f64,
) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut s = 0.0;
    while s < end {
        let values: Vec<f64> = clients
            .iter()
            .flat_map(|c| pick(c).iter())
            .filter(|(t, _)| *t >= s && *t < s + 1.0)
            .map(|(_, v)| *v)
            .collect();
        if !values.is_empty() {
            out.push((s + 0.5, percentile(&values, 50.0)));
        }
        s += 1.0;
    }
    out
}

fn plots(clients: &[&SimClient], end: f64) -> Vec<Series> {
    vec![
        (
            "input-to-ack p50",
            "#1565c0",
            per_second(clients, |c| &c.trace.ack_ms, end),
        ),
        (
            "slack p50",
            "#2e7d32",
            per_second(clients, |c| &c.trace.slack_ms, end),
        ),
    ]
}

fn dilation(clients: &[&SimClient]) -> Vec<Series> {
    let first = clients
        .first()
        .map(|c| c.trace.dilation_pct.clone())
        .unwrap_or_default();
    vec![("dilation, bot 1", "#ef6c00", first)]
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let game = match args.iter().position(|a| a == "--game") {
        Some(i) => args.get(i + 1).map_or("", String::as_str).to_string(),
        None => "tanks".to_string(),
    };
    let dir = args
        .iter()
        .find(|a| !a.starts_with("--") && **a != game)
        .map_or_else(|| PathBuf::from("docs"), PathBuf::from);
    match game.as_str() {
        "tanks" => {}
        "walkers" => return walkers_page(&dir),
        "blobs" => return blobs_page(&dir),
        other => {
            anyhow::bail!(
                "quality: unknown game `{other}`; this build's games: tanks, walkers, blobs"
            )
        }
    }
    let plots_dir = dir.join("quality");
    std::fs::create_dir_all(&plots_dir)
        .with_context(|| format!("cannot create {}", plots_dir.display()))?;
    let mut rows = timing_rows(&plots_dir)?;
    rows.extend(fairness_rows());
    // The relay runs (`cargo xtask bench`) are measured apart: keep them.
    let path = dir.join("QUALITY.md");
    let kept = std::fs::read_to_string(&path)
        .ok()
        .and_then(|old| old.find(RELAY_SECTION).map(|at| old[at..].to_string()))
        .unwrap_or_default();
    std::fs::write(&path, page(&rows) + &kept)?;
    eprintln!("quality: wrote {}", dir.join("QUALITY.md").display());
    Ok(())
}

/// The guide's game (`skirmish-walkers`): its main cell in the stepper.
fn walkers_page(dir: &std::path::Path) -> anyhow::Result<()> {
    eprintln!("quality: walkers, main cell");
    let s = skirmish_tests::walkers::main_cell();
    let clients: Vec<_> = s.clients.iter().collect();
    game_page(
        dir,
        "walkers",
        "walkers, the guide's game",
        &skirmish_core::GameId::of::<skirmish_walkers::Walkers>(),
        "`tests/src/walkers.rs`: 16 pacers walking back and forth, the real `Room` and `ClientSession`s of \
`docs/GUIDE.md`'s game",
        "A walker turns back at once, so a repeated tick across a turn is off by two steps (20 units) and snaps.",
        summarize(&clients, 0.0, 60.0, 60.0),
    )
}

/// The .io game (`skirmish-blobs`): its main cell in the stepper.
fn blobs_page(dir: &std::path::Path) -> anyhow::Result<()> {
    eprintln!("quality: blobs, main cell");
    let s = skirmish_tests::blobs::main_cell();
    let clients: Vec<_> = s.clients.iter().collect();
    game_page(
        dir,
        "blobs",
        "blobs, the .io arena",
        &skirmish_core::GameId::of::<skirmish_blobs::Blobs>(),
        "`tests/src/blobs.rs`: 16 grazers chasing the nearest pellet and fleeing larger blobs, 300 pellets the \
server owns on a square of 1,500 units, each page seeing 500 units and more as it grows, the real `Room` and \
`ClientSession`s",
        "Growing never changes a prediction (a blob's pace follows its mass a second after the server schedules \
it); being eaten and coming back are placements, not corrections; so every misprediction is a late or repeated \
input's. Downlink is every frame a page received: the blobs and the pellets in its view.",
        summarize(&clients, 0.0, 60.0, 60.0),
    )
}

/// A game's quality page, `DIR/quality/NAME.md`: its main cell's row,
/// keeping the relay run that `cargo xtask quality --game NAME` appends.
fn game_page(
    dir: &std::path::Path,
    name: &str,
    title: &str,
    game: &skirmish_core::GameId,
    cell: &str,
    remark: &str,
    summary: Summary,
) -> anyhow::Result<()> {
    let rows = [row("main cell, compact (as shipped)", summary)];
    let mut page = String::new();
    let _ = writeln!(page, "# Netcode quality: {title}\n");
    let _ = writeln!(page, "Game: {game} (`{}`).\n", skirmish_core::BUILD);
    let _ = writeln!(
        page,
        "Written by `cargo xtask quality --game {name}` (`cargo run --release -p skirmish-tests --bin quality -- --game {name}`). \
The row is a seeded run of the deterministic stepper ({cell}; 150 ms RTT, ±30 ms jitter, 5 % loss each way, 60 s, the \
shipped defaults), so the numbers are the same on every machine; `tests/tests/{name}.rs` asserts the tank game's \
main-cell targets on the same run. {remark}\n"
    );
    table(&mut page, &rows);
    let path = dir.join("quality").join(format!("{name}.md"));
    std::fs::create_dir_all(dir.join("quality"))?;
    let kept = std::fs::read_to_string(&path)
        .ok()
        .and_then(|old| old.find(RELAY_SECTION).map(|at| old[at..].to_string()))
        .unwrap_or_default();
    std::fs::write(&path, page + &kept)?;
    eprintln!("quality: wrote {}", path.display());
    Ok(())
}

/// The main cell as shipped (compact, JSON) and with less loss cover.
fn main_cell_rows() -> Vec<Row> {
    eprintln!("quality: main cell (compact, then JSON)");
    let shipped = skirmish_tanks::SessionConfig::default().resends;
    [
        (
            "main cell, compact (as shipped)",
            Encoding::Compact,
            shipped,
        ),
        ("main cell, JSON (as shipped)", Encoding::Json, shipped),
        ("main cell, compact, no resends", Encoding::Compact, 0),
        ("main cell, compact, one resend", Encoding::Compact, 1),
    ]
    .into_iter()
    .map(|(name, encoding, resends)| {
        let s = matrix::main_cell_with(encoding, resends);
        row(name, summarize(&all(&s), 0.0, 60.0, 60.0))
    })
    .collect()
}

/// The timing scenarios' rows, writing their plots into `plots_dir`.
fn timing_rows(plots_dir: &std::path::Path) -> anyhow::Result<Vec<Row>> {
    let mut rows = main_cell_rows();

    eprintln!("quality: RTT step");
    let s = rtt_step();
    let c = all(&s);
    let mut r = row(
        "RTT step 50 -> 250 -> 50 ms",
        summarize(&c, 0.0, 45.0, 45.0),
    );
    let up = settles(&c, STEP_UP, STEP_DOWN, |w| w.late_pct <= 0.5);
    let down = settles(&c, STEP_DOWN, 45.0, |w| w.ack_p50 <= 125.0);
    r.convergence =
        format!("up: late <= 0.5 % after {up}; down: ack within RTT + 75 ms after {down}");
    rows.push(r);
    let marks = [
        (STEP_UP, "RTT 50 -> 250 ms"),
        (STEP_DOWN, "RTT 250 -> 50 ms"),
    ];
    std::fs::write(
        plots_dir.join("rtt-step.svg"),
        chart(
            "RTT step: input-to-ack and slack (ms)",
            "ms",
            &plots(&c, 45.0),
            &marks,
        ),
    )?;
    std::fs::write(
        plots_dir.join("rtt-step-dilation.svg"),
        chart("RTT step: dilation (%)", "%", &dilation(&c), &marks),
    )?;

    for (name, file, rate) in [
        ("client clock 0.5 % fast", "drift-fast", 1.005),
        ("client clock 0.5 % slow", "drift-slow", 0.995),
    ] {
        eprintln!("quality: {name}");
        let s = drift(rate);
        let c = all(&s);
        let first = summarize(&c, 5.0, 25.0, 120.0);
        let last = summarize(&c, 100.0, 120.0, 120.0);
        let mut r = row(name, summarize(&c, 0.0, 120.0, 120.0));
        r.convergence = format!(
            "ack p50 {:.0} ms at 5-25 s, {:.0} ms at 100-120 s",
            first.ack_p50, last.ack_p50
        );
        rows.push(r);
        std::fs::write(
            plots_dir.join(format!("{file}.svg")),
            chart(
                &format!("{name}: input-to-ack and slack (ms)"),
                "ms",
                &plots(&c, 120.0),
                &[],
            ),
        )?;
        std::fs::write(
            plots_dir.join(format!("{file}-dilation.svg")),
            chart(&format!("{name}: dilation (%)"), "%", &dilation(&c), &[]),
        )?;
    }

    eprintln!("quality: frame hitch");
    let s = hitch(std::time::Duration::from_millis(250));
    let me: Vec<&SimClient> = s.clients.iter().take(1).collect();
    let before = summarize(&me, INCIDENT_AT - 10.0, INCIDENT_AT, 40.0);
    let mut r = row(
        "250 ms frame hitch (the hitched bot)",
        summarize(&me, 0.0, 40.0, 40.0),
    );
    let back = settles(&me, INCIDENT_AT, 40.0, |w| {
        (w.ack_p50 - before.ack_p50).abs() <= 25.0
    });
    r.convergence = format!(
        "ack p50 within 25 ms of before ({:.0} ms) after {back}",
        before.ack_p50
    );
    rows.push(r);

    eprintln!("quality: uplink blackout");
    let s = blackout();
    let me: Vec<&SimClient> = s.clients.iter().take(1).collect();
    let mut r = row(
        "1 s uplink blackout (the dark bot)",
        summarize(&me, 0.0, 40.0, 40.0),
    );
    let counters = s.clients[0].counters();
    r.convergence = format!(
        "{} ticks repeated, {} corrections after",
        counters.repeated, counters.corrections
    );
    rows.push(r);

    Ok(rows)
}

/// The fairness rows: a shooter aiming at what it draws.
fn fairness_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    eprintln!("quality: fairness");
    let clean = fairness(link(0.0, 0.0, 0.0), 7, 60);
    for (name, net) in [
        ("shooter vs circling target, clean", link(0.0, 0.0, 0.0)),
        ("shooter, 150 ms ±30, 5 % loss", matrix::main_link()),
        ("shooter, 250 ms ±30, 5 % loss", link(250.0, 30.0, 0.05)),
    ] {
        let f = fairness(net, 7, 60);
        let mut r = row(name, Summary::default());
        r.hits = format!(
            "{}/{} = {:.3} ({:.2} x clean)",
            f.hits,
            f.shots,
            f.ratio(),
            f.ratio() / clean.ratio().max(1e-9)
        );
        rows.push(r);
    }
    rows
}

/// The page: the table and the notes.
fn page(rows: &[Row]) -> String {
    let mut page = String::new();
    let date = std::process::Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    let game = skirmish_tanks::GameId::of::<skirmish_tanks::Tanks>();
    let _ = writeln!(page, "# Netcode quality: the input clock\n");
    let _ = writeln!(page, "Game: {game} (`{}`).\n", skirmish_tanks::BUILD);
    let _ = writeln!(
        page,
        "Written by `cargo run --release -p skirmish-tests --bin quality` (run by `cargo xtask bench`) on {}. \
Every row is a seeded run of the deterministic stepper (`tests/src/matrix.rs`: the real `Room` and real `ClientSession`s, \
a clock per client, a scripted network per direction, arrivals on a 1 ms grid, clients rendering every 10 ms), so the \
numbers are the same on every machine; `tests/tests/clock.rs` and `tests/tests/quality.rs` assert the targets on the same runs.\n",
        date.trim()
    );
    table(&mut page, rows);
    page.push_str(include_str!("quality_notes.md"));
    page
}

/// The table of `rows`.
fn table(page: &mut String, rows: &[Row]) {
    let _ = writeln!(*page, "| scenario | input-to-ack p50 / p99 | slack p50 | late | repeated | mispredictions / min | corrections | snaps | hard resyncs | remote backward steps | drawn snap-backs | remote rate | dilation | uplink | downlink | convergence | hit ratio |");
    let _ = writeln!(
        *page,
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for r in rows {
        let s = &r.summary;
        if r.hits != "-" {
            let _ = writeln!(
                *page,
                "| {} | | | | | | | | | | | | | | | | {} |",
                r.name, r.hits
            );
            continue;
        }
        let _ = writeln!(
            *page,
            "| {} | {:.0} / {:.0} ms | {:.0} ms | {:.2} % | {:.2} % | {:.2} | {} | {} | {} | {} | {} | {:.2}-{:.2} | {:+.1} to {:+.1} % | {:.0} B/s | {:.0} B/s | {} | - |",
            r.name, s.ack_p50, s.ack_p99, s.slack_p50, s.late_pct, s.repeated_pct, s.mispredictions_per_min,
            s.corrections, s.snaps, s.resyncs, s.remote_backwards, s.drawn_snap_backs, s.remote_rate.0, s.remote_rate.1,
            s.dilation.0, s.dilation.1, s.uplink_bytes_per_s, s.downlink_bytes_per_s, r.convergence
        );
    }
}
