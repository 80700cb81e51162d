//! The load table: one row per run with its verdict against the targets,
//! written between the markers of `docs/BENCHMARKS.md`.

use std::fmt::Write as _;
use std::fs;
use std::thread;

use super::{
    Measured, Options, Scenario, Target, BOT_THREADS, END, HEADER, MAX_GAP_P99_MS, MAX_TICK_P99,
    MIN_SNAPSHOTS_PER_SEC, START, WARMUP_SECS,
};
use crate::{probe, root, Result};

fn format_tick(bound: Option<f64>) -> String {
    match bound {
        None => "–".to_string(),
        Some(b) if b.is_infinite() => "> 50 ms".to_string(),
        Some(b) => format!("≤ {:.0} µs", b * 1e6),
    }
}

/// "meets", "misses (...)" or "no target" for one run.
fn verdict(scenario: &Scenario, m: &Measured) -> String {
    let mut misses = Vec::new();
    if m.failed > 0.0 {
        let players = scenario.players;
        misses.push(format!("{:.0} of {players} bots failed", m.failed));
    }
    if matches!(scenario.target, Target::Rate | Target::RateNoGrowth) {
        let (rate, gap) = (m.snapshots_per_sec, m.gap_p99_ms);
        if rate < MIN_SNAPSHOTS_PER_SEC {
            misses.push(format!("{rate:.2} snapshots/s < {MIN_SNAPSHOTS_PER_SEC}"));
        }
        if gap > MAX_GAP_P99_MS {
            misses.push(format!("gap p99 {gap:.1} ms > {MAX_GAP_P99_MS} ms"));
        }
    }
    if scenario.target == Target::Tick && m.tick_p99.is_none_or(|b| b > MAX_TICK_P99) {
        let p99 = format_tick(m.tick_p99);
        misses.push(format!(
            "tick p99 {p99}, target ≤ {:.0} µs",
            MAX_TICK_P99 * 1e6
        ));
    }
    let growth = m.rss_end_mib - m.rss_start_mib;
    if scenario.target == Target::RateNoGrowth && growth > (m.rss_start_mib / 100.0).max(1.0) {
        misses.push(format!("RSS grew {growth:.1} MiB"));
    }
    if !misses.is_empty() {
        format!("misses ({})", misses.join("; "))
    } else if scenario.target == Target::None {
        "no target".to_string()
    } else {
        "meets".to_string()
    }
}

fn table_row(scenario: &Scenario, measured: &Result<Measured>) -> String {
    let head = format!(
        "| {} | {} | {} | {} |",
        scenario.name, scenario.players, scenario.rooms, scenario.seconds
    );
    let m = match measured {
        Ok(m) => m,
        Err(e) => {
            let dashes = " – |".repeat(11);
            return format!(
                "{head}{dashes} misses (the run failed: {}) |",
                e.replace('|', "/")
            );
        }
    };
    let players_per_room = (scenario.players / scenario.rooms.max(1)).max(1) as f64;
    let per_snapshot = if m.snapshots_per_sec > 0.0 {
        let bytes = m.bytes_per_sec / m.snapshots_per_sec / players_per_room;
        format!("{bytes:.1}")
    } else {
        "–".to_string()
    };
    let cpu = m.user_percent + m.system_percent;
    format!(
        "{head} {cpu:.1} % | **{:.2} %** | {:.1} % | {:.1} % | {:.2} | {:.1} ms | {per_snapshot} | {} | {} | {} | {:.1} → {:.1} MiB | {} |",
        cpu / scenario.players as f64 * 100.0,
        m.user_percent,
        m.system_percent,
        m.snapshots_per_sec,
        m.gap_p99_ms,
        format_tick(m.tick_p50),
        format_tick(m.tick_p99),
        format_tick(m.send_p99),
        m.rss_start_mib,
        m.rss_end_mib,
        verdict(scenario, m),
    )
}

/// Today's date (UTC) as `YYYY-MM-DD`.
fn today_utc() -> String {
    probe("date", &["-u", "+%F"]).unwrap_or_else(|| "an unknown date".to_string())
}

/// The machine note: cores and, if known, the CPU model.
fn machine() -> String {
    let cores = thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
                .map(|(_, m)| format!(" ({})", m.trim()))
        })
        .unwrap_or_default();
    format!("{cores} cores{model}")
}

pub(super) fn write_table(rows: &[(&Scenario, Result<Measured>)], options: &Options) -> Result {
    let mut table = String::new();
    let command = match (options.quick, options.soak) {
        (true, 30) => " --quick".to_string(),
        (false, 300) => String::new(),
        (quick, soak) => format!("{} --soak {soak}", if quick { " --quick" } else { "" }),
    };
    let _ = writeln!(table, "{START}");
    let _ = writeln!(
        table,
        "Produced by `cargo xtask bench{command}` on {} (UTC). Machine: {}, shared by the server (one worker thread) and the bots ({BOT_THREADS} threads).\n",
        today_utc(),
        machine(),
    );
    let _ = writeln!(
        table,
        "Every run uses light bots (`bots --light --compact`: one input per 50 ms, turning and driving all the time, bytes counted, nothing decoded; they acknowledge each snapshot's tick, so they get delta frames, except with `--no-ack` in the runs marked full frames), each from its own loopback address; a run may add server flags (named in the run). \
         The server is measured over the bots' measured window only ({WARMUP_SECS} s after every bot joined, then the seconds shown): \
         CPU is utime + stime from `/proc` in % of one core, also per 100 players and split into user and system; \
         tick p50/p99 (the room's decision: stepping the world and encoding its frames) and send p99 (writing one tick's frames to every socket) are upper bounds of the `/metrics` histogram buckets over the window; RSS is at the window's start → end. \
         Targets: 800 players in one room, and 1,024 in 16 rooms, keep ≥ {MIN_SNAPSHOTS_PER_SEC} snapshots/s per client with a snapshot gap p99 ≤ {MAX_GAP_P99_MS} ms; \
         a room of 64 ticks in ≤ {:.0} µs at p99; the soak must also not grow its RSS by more than 1 % (at least 1 MiB). The bots' JSON is in `artifacts/light-*.json`.\n",
        MAX_TICK_P99 * 1e6
    );
    table.push_str(HEADER);
    for (scenario, measured) in rows {
        let _ = writeln!(table, "{}", table_row(scenario, measured));
    }
    let _ = writeln!(table, "{END}");
    let path = root().join("docs").join("BENCHMARKS.md");
    let doc =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let doc = match (doc.find(START), doc.find(END)) {
        (Some(a), Some(b)) if b > a => {
            format!("{}{}{}", &doc[..a], table.trim_end(), &doc[b + END.len()..])
        }
        _ => format!("{}\n\n## Load runs\n\n{table}", doc.trim_end()),
    };
    fs::write(&path, doc).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("{table}");
    println!("==> wrote the load table into {}", path.display());
    Ok(())
}
