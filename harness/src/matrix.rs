//! The scenario matrix's generic part: the main link, a game's main cell
//! ([`main_cell`]: its room and brains from [`Harness`], on the main
//! link), the numbers each row of a quality table reports ([`Summary`],
//! [`summarize`]) and the main cell's budget, which every game's tests
//! hold it to ([`assert_main_cell_budget`], [`assert_main_cell_timing`]).
//! A game's own scenarios (RTT steps, clock drift, hitches, blackouts)
//! are built the same way from [`crate::stepper::Stepper`] and
//! [`crate::scenario`].

use std::time::Duration;

use skirmish_core::{Encoding, Harness, LinkConditions, SessionConfig};

use crate::scenario::{link, percentile, ClientClock, NetScript};
use crate::stepper::{ClientCounters, ClientSpec, Driver, SimClient, Stepper};
pub use crate::trace::totals;

/// 150 ms RTT, ±30 ms jitter, 5 % loss each way: the main cell.
pub fn main_link() -> LinkConditions {
    link(150.0, 30.0, 0.05)
}

/// How long the main cell runs, seconds.
pub const MAIN_CELL_SECONDS: u64 = 60;

/// Game `G`'s main cell as shipped: its players ([`Harness::PLAYERS`],
/// their brains and seeds from [`Harness::main_player`]) in its room
/// ([`Harness::main_room`]) on the main link both ways, a perfect clock,
/// binary all the way, the resends a session ships with, for
/// [`MAIN_CELL_SECONDS`].
pub fn main_cell<G: Harness>() -> Stepper<G, G::Driver> {
    main_cell_with::<G>(Encoding::Compact, SessionConfig::default().resends)
}

/// Game `G`'s main cell with snapshots in `encoding` and `resends` per
/// input message while snapshots are lost.
pub fn main_cell_with<G: Harness>(encoding: Encoding, resends: u32) -> Stepper<G, G::Driver> {
    let mut s = Stepper::with_room(G::main_room());
    for i in 0..G::PLAYERS {
        let (driver, seed) = G::main_player(i);
        s.join_spec(ClientSpec {
            net: NetScript::steady(main_link()),
            clock: ClientClock::default(),
            encoding,
            resends,
            ..ClientSpec::new(driver, main_link(), seed)
        });
    }
    s.run(Duration::from_secs(MAIN_CELL_SECONDS));
    s
}

/// One row of the quality table, over a window of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Input-to-acknowledgement, median, ms.
    pub ack_p50: f64,
    /// Input-to-acknowledgement, 99th percentile, ms.
    pub ack_p99: f64,
    /// Slack reports, median, ms.
    pub slack_p50: f64,
    /// Late inputs, % of player-ticks.
    pub late_pct: f64,
    /// Repeated ticks, % of player-ticks.
    pub repeated_pct: f64,
    /// Mispredictions per player per minute.
    pub mispredictions_per_min: f64,
    /// Corrections and snaps, all players, whole run.
    pub corrections: u64,
    /// Snaps, whole run.
    pub snaps: u64,
    /// Hard resyncs, whole run.
    pub resyncs: u64,
    /// Frames where remote time ran backwards, whole run.
    pub remote_backwards: u64,
    /// Frames where a drawn remote snapped back against its motion.
    pub drawn_snap_backs: u64,
    /// Remote playback rate, slowest and fastest, whole run.
    pub remote_rate: (f64, f64),
    /// Dilation in %, lowest and highest in the window.
    pub dilation: (f64, f64),
    /// Input message bytes per player per second, whole run.
    pub uplink_bytes_per_s: f64,
    /// Bytes received per player per second, whole run.
    pub downlink_bytes_per_s: f64,
}

fn within(t: f64, from: f64, to: f64) -> bool {
    t >= from && t < to
}

/// The numbers of `clients` between `from` and `to` seconds (whole-run
/// counters where the field says so); the run lasted `run` seconds.
pub fn summarize<G: Harness, D: Driver<G>>(
    clients: &[&SimClient<G, D>],
    from: f64,
    to: f64,
    run: f64,
) -> Summary {
    let acks: Vec<f64> = clients
        .iter()
        .flat_map(|c| c.trace.ack_ms.iter())
        .filter(|(t, _)| within(*t, from, to))
        .map(|(_, ms)| *ms)
        .collect();
    let slack: Vec<f64> = clients
        .iter()
        .flat_map(|c| c.trace.slack_ms.iter())
        .filter(|(t, _)| within(*t, from, to))
        .map(|(_, ms)| *ms)
        .collect();
    let count = |f: &dyn Fn(&SimClient<G, D>) -> &Vec<f64>| {
        clients
            .iter()
            .flat_map(|c| f(c).iter())
            .filter(|t| within(**t, from, to))
            .count() as f64
    };
    let player_ticks = clients.len() as f64 * (to - from) / 0.05;
    let minutes = clients.len() as f64 * (to - from) / 60.0;
    let counters: Vec<ClientCounters> = clients.iter().map(|c| c.counters()).collect();
    let t = totals(&counters);
    let dilations = clients
        .iter()
        .flat_map(|c| c.trace.dilation_pct.iter())
        .filter(|(t, _)| within(*t, from, to))
        .map(|(_, d)| *d);
    let dilation = dilations.fold((0.0_f64, 0.0_f64), |(lo, hi), d| (lo.min(d), hi.max(d)));
    let remote_rate = clients
        .iter()
        .filter_map(|c| c.trace.remote_rate)
        .fold((1.0_f64, 1.0_f64), |(lo, hi), (a, b)| {
            (lo.min(a), hi.max(b))
        });
    let uplink: u64 = clients.iter().map(|c| c.trace.uplink_bytes).sum();
    let downlink: u64 = clients.iter().map(|c| c.trace.downlink_bytes).sum();
    let per_player_second = |bytes: u64| bytes as f64 / clients.len().max(1) as f64 / run.max(1e-9);
    Summary {
        ack_p50: percentile(&acks, 50.0),
        ack_p99: percentile(&acks, 99.0),
        slack_p50: percentile(&slack, 50.0),
        late_pct: 100.0 * count(&|c| &c.trace.late_at) / player_ticks.max(1.0),
        repeated_pct: 100.0 * count(&|c| &c.trace.repeated_at) / player_ticks.max(1.0),
        mispredictions_per_min: count(&|c| &c.trace.mispredicted_at) / minutes.max(1e-9),
        corrections: t.corrections,
        snaps: t.snaps,
        resyncs: t.resyncs,
        remote_backwards: clients.iter().map(|c| c.trace.remote_backwards).sum(),
        drawn_snap_backs: clients.iter().map(|c| c.trace.drawn_snap_backs).sum(),
        remote_rate,
        dilation,
        uplink_bytes_per_s: per_player_second(uplink),
        downlink_bytes_per_s: per_player_second(downlink),
    }
}

/// The main cell's budget for `players` players, whatever the game: the
/// loss was real, everyone played all the time, input-to-acknowledgement within RTT + 75 ms
/// (median) and RTT + 150 ms (99th percentile), RTT being 150 ms, late and
/// repeated player-ticks within 0.5 % together, a misprediction only where
/// the player's own input was late or repeated (for bots that never
/// collide), no hard resync, remote time never backwards nor outside
/// ±10 % of real time, and no drawn snap-back.
///
/// # Panics
/// The first number out of budget, with the run's figures.
pub fn assert_main_cell_budget(players: usize, counters: &[ClientCounters], row: &Summary) {
    assert_main_cell_timing(players, counters, row);
    for c in counters {
        assert!(c.mispredictions <= c.late + c.repeated, "{c:?}");
    }
    assert_eq!(row.drawn_snap_backs, 0, "drawn never snaps back: {row:?}");
}

/// The main cell's timing budget for `players` players, whatever the
/// game: there were that many, the loss was real (over 500 messages lost
/// each way for 16 players, in proportion for others), everyone played
/// all the time (at least 1,180 inputs each: 59 of the 60 s at the 50 ms
/// cadence), input-to-acknowledgement within RTT +
/// 75 ms (median) and RTT + 150 ms (99th percentile), late and repeated
/// player-ticks within 0.5 % together, no hard resync, remote time never
/// backwards nor outside ±10 % of real time.
///
/// # Panics
/// The first number out of budget, with the run's figures.
pub fn assert_main_cell_timing(players: usize, counters: &[ClientCounters], row: &Summary) {
    assert_eq!(counters.len(), players, "every player's counters");
    let t = totals(counters);
    let lost = players as u64 * 500 / 16;
    assert!(
        t.lost_up > lost && t.lost_down > lost,
        "the loss is real: {t:?}"
    );
    assert!(
        t.inputs >= players as u64 * 1180,
        "everyone played all the time: {t:?}"
    );
    assert!(row.ack_p50 <= 225.0, "{row:?}");
    assert!(row.ack_p99 <= 300.0, "{row:?}");
    // Every late input's tick was repeated, so the affected player-ticks
    // are the repeated ones; both together must stay within 0.5 %.
    assert!(row.late_pct + row.repeated_pct <= 0.5 + 1e-9, "{row:?}");
    assert_eq!(t.resyncs, 0, "{t:?}");
    assert_eq!(row.remote_backwards, 0);
    assert!(
        row.remote_rate.0 >= 0.9 - 1e-9 && row.remote_rate.1 <= 1.1 + 1e-9,
        "{row:?}"
    );
}
