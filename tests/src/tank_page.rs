//! The tank game's quality page, `docs/QUALITY.md`: the clock's scenario
//! matrix ([`crate::matrix`]) run in the deterministic stepper, one row
//! per scenario, and its SVG plots (`docs/quality/*.svg`, drawn from the
//! runs' own samples), written with the harness's page parts
//! (`skirmish_harness::quality`). The `quality` binary writes it for
//! `--game tanks`; the other games' pages are the harness's one-row page
//! of their main cell.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use skirmish_core::Encoding;
use skirmish_harness::quality::{dilation, plots, row, settles, table, write_keeping_relay, Row};

use crate::chart::chart;
use crate::matrix::{
    self, blackout, drift, fairness, hitch, rtt_step, summarize, Summary, INCIDENT_AT, STEP_DOWN,
    STEP_UP,
};
use crate::scenario::link;
use crate::stepper::{SimClient, Stepper};

fn all(s: &Stepper) -> Vec<&SimClient> {
    s.clients.iter().collect()
}

/// Runs the tank game's scenarios and writes `DIR/QUALITY.md` and its
/// plots into `DIR/quality/`, keeping the section of relay runs the page
/// had (`cargo xtask bench` measures those apart).
///
/// # Errors
/// A folder, a plot or the page cannot be written.
pub fn write(dir: &Path) -> anyhow::Result<()> {
    let plots_dir = dir.join("quality");
    std::fs::create_dir_all(&plots_dir)
        .with_context(|| format!("cannot create {}", plots_dir.display()))?;
    let mut rows = timing_rows(&plots_dir)?;
    rows.extend(fairness_rows());
    let path = dir.join("QUALITY.md");
    write_keeping_relay(&path, &page(&rows))?;
    eprintln!("quality: wrote {}", path.display());
    Ok(())
}

/// The main cell as shipped (compact, JSON) and with less loss cover.
fn main_cell_rows() -> Vec<Row> {
    eprintln!("quality: main cell (compact, then JSON)");
    let shipped = skirmish_core::SessionConfig::default().resends;
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
    let game = skirmish_core::GameId::of::<skirmish_tanks::Tanks>();
    let _ = writeln!(page, "# Netcode quality: the input clock\n");
    let _ = writeln!(page, "Game: {game} (`{}`).\n", skirmish_core::BUILD);
    let _ = writeln!(
        page,
        "Written by `cargo run --release -p skirmish-tests --bin quality` (run by `cargo xtask bench`) on {}. \
Every row is a seeded run of the deterministic stepper (`tests/src/matrix.rs`: the real `Room` and real `ClientSession`s, \
a clock per client, a scripted network per direction, arrivals on a 1 ms grid, clients rendering every 10 ms), so the \
numbers are the same on every machine; `tests/tests/clock.rs` and `tests/tests/quality.rs` assert the targets on the same runs.\n",
        date.trim()
    );
    table(&mut page, rows);
    page.push_str(include_str!("bin/quality_notes.md"));
    page
}
