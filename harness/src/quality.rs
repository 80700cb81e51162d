//! A game's quality page: its main cell run in the stepper, one row of
//! the quality table, in the game's own words ([`Harness::WORDS`]), at
//! `DIR/quality/NAME.md` ([`write_game_page`]); and the parts any page of
//! scenarios is made of: a row ([`Row`]) and the table of rows
//! ([`table`]), how long a scenario takes to settle ([`settles`]), the
//! per-second lines of its plots ([`plots`], [`dilation`]), and writing
//! a page while keeping the section of relay runs another tool appended
//! ([`write_keeping_relay`]).
//!
//! The runs are seeded, so a page's numbers are the same on every
//! machine; only the date and the build differ.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use skirmish_core::{GameId, Harness, BUILD};

use crate::chart::Line;
use crate::matrix::{main_cell, summarize, Summary, MAIN_CELL_SECONDS};
use crate::scenario::percentile;
use crate::stepper::{Driver, SimClient};

/// Where the section of the relay runs starts: a tool that runs the game
/// over real UDP appends it; a page rewritten here keeps it.
pub const RELAY_SECTION: &str = "\n## Over real UDP through the relay";

/// One row of a quality table: the scenario, its summary, and what only
/// some rows have.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The scenario.
    pub name: String,
    /// Its numbers.
    pub summary: Summary,
    /// How it settled after an incident (`-` when it has none).
    pub convergence: String,
    /// Its hits per shot (`-` when it shoots nothing); a row with hits
    /// shows nothing else.
    pub hits: String,
}

/// A row of `name` with `summary`, no convergence and no hits.
pub fn row(name: &str, summary: Summary) -> Row {
    Row {
        name: name.to_string(),
        summary,
        convergence: "-".into(),
        hits: "-".into(),
    }
}

/// Who wrote a game's page and who holds it to its budget: said on the
/// page after the game's own words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Provenance<'a> {
    /// The command that writes the page, as it should be quoted
    /// (`` `cargo run --release --bin quality` ``).
    pub command: &'a str,
    /// What holds the main cell to its budget (`` `tests/main_cell.rs`
    /// asserts its budget on the same run ``); empty when nothing does.
    pub asserted: &'a str,
}

/// Runs game `G`'s main cell and writes its page to
/// `DIR/quality/NAME.md` (`NAME` the game's name), keeping a relay
/// section the page had; the page's path.
///
/// # Errors
/// The folder or the page cannot be written.
pub fn write_game_page<G: Harness>(dir: &Path, provenance: &Provenance<'_>) -> Result<PathBuf> {
    let s = main_cell::<G>();
    let clients: Vec<_> = s.clients.iter().collect();
    let secs = MAIN_CELL_SECONDS as f64;
    let page = game_page::<G>(provenance, &summarize(&clients, 0.0, secs, secs));
    let folder = dir.join("quality");
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let path = folder.join(format!("{}.md", G::NAME));
    write_keeping_relay(&path, &page)?;
    Ok(path)
}

/// Game `G`'s page for its main cell's `summary`: its title, the game and
/// build, what the row is (in the game's words), and the table.
pub fn game_page<G: Harness>(provenance: &Provenance<'_>, summary: &Summary) -> String {
    let words = G::WORDS;
    let rows = [row("main cell, compact (as shipped)", summary.clone())];
    let mut page = String::new();
    let _ = writeln!(page, "# Netcode quality: {}\n", words.title);
    let _ = writeln!(page, "Game: {} (`{BUILD}`).\n", GameId::of::<G>());
    let asserted = match provenance.asserted {
        "" => String::new(),
        asserted => format!("; {asserted}"),
    };
    let remark = match words.remark {
        "" => String::new(),
        remark => format!(" {remark}"),
    };
    let _ = writeln!(
        page,
        "Written by {}. The row is a seeded run of the deterministic stepper ({}; 150 ms RTT, ±30 ms \
jitter, 5 % loss each way, {MAIN_CELL_SECONDS} s, the shipped defaults), so the numbers \
are the same on every machine{asserted}.{remark}\n",
        provenance.command, words.cell,
    );
    table(&mut page, &rows);
    page
}

/// Writes `page` to `path`, followed by the section of relay runs the
/// file had ([`RELAY_SECTION`] to its end), if any.
///
/// # Errors
/// The page cannot be written.
pub fn write_keeping_relay(path: &Path, page: &str) -> Result<()> {
    let kept = std::fs::read_to_string(path)
        .ok()
        .and_then(|old| old.find(RELAY_SECTION).map(|at| old[at..].to_string()))
        .unwrap_or_default();
    std::fs::write(path, format!("{page}{kept}"))
        .with_context(|| format!("cannot write {}", path.display()))
}

/// The first whole second from `from` after which every window to `to`
/// passes `ok`, as seconds after `from` (`< 1 s` when every window does).
pub fn settles<G: Harness, D: Driver<G>>(
    clients: &[&SimClient<G, D>],
    from: f64,
    to: f64,
    ok: impl Fn(&Summary) -> bool,
) -> String {
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

/// Which (time, value) trace of a client a plot draws.
pub type Pick<G, D> = fn(&SimClient<G, D>) -> &Vec<(f64, f64)>;

/// Per-second medians of a (time, value) trace over every client, up to
/// `end` seconds.
pub fn per_second<G: Harness, D: Driver<G>>(
    clients: &[&SimClient<G, D>],
    pick: Pick<G, D>,
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

/// The plot of a scenario's timing: input-to-acknowledgement and slack,
/// per-second medians over every client.
pub fn plots<G: Harness, D: Driver<G>>(clients: &[&SimClient<G, D>], end: f64) -> Vec<Line> {
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

/// The plot of the first client's dilation.
pub fn dilation<G: Harness, D: Driver<G>>(clients: &[&SimClient<G, D>]) -> Vec<Line> {
    let first = clients
        .first()
        .map(|c| c.trace.dilation_pct.clone())
        .unwrap_or_default();
    vec![("dilation, bot 1", "#ef6c00", first)]
}

/// Appends the table of `rows` to `page`.
pub fn table(page: &mut String, rows: &[Row]) {
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
