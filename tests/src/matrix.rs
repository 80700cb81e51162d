//! The scenario matrix: the stepper runs that show input timing, fairness
//! and remote time under scripted clocks and networks, and the numbers each
//! row of `docs/QUALITY.md` reports. `tests/tests/clock.rs` asserts them;
//! `bots --quality` prints them (and the SVG plots) for the docs.

use skirmish_tanks::prelude::*;
use std::time::Duration;

use skirmish_tanks::{CombatRules, Encoding, LinkConditions, Pose, RoomConfig, TankSettings, Vec2};

use crate::open_arena;
use crate::scenario::{link, percentile, ClientClock, NetScript};
use crate::script::{Script, Shooter, Wander};
use crate::stepper::{ClientCounters, ClientSpec, Driver, SimClient, SteppedGame, Stepper};

/// 150 ms RTT, ±30 ms jitter, 5 % loss each way: the main cell.
pub fn main_link() -> LinkConditions {
    link(150.0, 30.0, 0.05)
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

/// Totals of all clients' counters.
pub fn totals(counters: &[ClientCounters]) -> ClientCounters {
    counters
        .iter()
        .fold(ClientCounters::default(), |t, c| ClientCounters {
            inputs: t.inputs + c.inputs,
            mispredictions: t.mispredictions + c.mispredictions,
            corrections: t.corrections + c.corrections,
            snaps: t.snaps + c.snaps,
            max_error: t.max_error.max(c.max_error),
            max_correction: t.max_correction.max(c.max_correction),
            snapshots: t.snapshots + c.snapshots,
            lost_down: t.lost_down + c.lost_down,
            lost_up: t.lost_up + c.lost_up,
            late: t.late + c.late,
            repeated: t.repeated + c.repeated,
            resyncs: t.resyncs + c.resyncs,
        })
}

fn within(t: f64, from: f64, to: f64) -> bool {
    t >= from && t < to
}

/// The numbers of `clients` between `from` and `to` seconds (whole-run
/// counters where the field says so); the run lasted `run` seconds.
pub fn summarize<G: SteppedGame, D: Driver<G>>(
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

/// `n` wandering bots that keep clear of each other in a large open arena.
fn clear_bots(n: u64, seed: u64, spec: impl Fn(u64) -> ClientSpec) -> Stepper {
    let mut stepper = Stepper::new(open_arena(6000.0, 6000.0), seed);
    for i in 0..n {
        stepper.join_spec(spec(i));
    }
    stepper
}

fn wander(i: u64, net: NetScript, clock: ClientClock, encoding: Encoding) -> ClientSpec {
    ClientSpec {
        net,
        clock,
        encoding,
        ..ClientSpec::new(Script::Wander(Wander::new(100 + i)), main_link(), 200 + i)
    }
}

/// The main cell: 16 bots, 60 s, 150 ms RTT, ±30 ms jitter, 5 % loss each
/// way, with the resends a session ships with.
pub fn main_cell(encoding: Encoding) -> Stepper {
    main_cell_with(encoding, skirmish_tanks::SessionConfig::default().resends)
}

/// The main cell with `resends` per input message while snapshots are lost.
pub fn main_cell_with(encoding: Encoding, resends: u32) -> Stepper {
    let mut s = clear_bots(16, 11, |i| ClientSpec {
        resends,
        ..wander(
            i,
            NetScript::steady(main_link()),
            ClientClock::default(),
            encoding,
        )
    });
    s.run(Duration::from_secs(60));
    s
}

/// When the RTT steps up and back down in [`rtt_step`], seconds.
pub const STEP_UP: f64 = 10.0;
/// See [`STEP_UP`].
pub const STEP_DOWN: f64 = 30.0;

/// 8 bots at 50 ms RTT (±5 ms), 250 ms from [`STEP_UP`] to [`STEP_DOWN`],
/// then 50 ms again until 45 s.
pub fn rtt_step() -> Stepper {
    let fast = link(50.0, 5.0, 0.0);
    let slow = link(250.0, 5.0, 0.0);
    let net = NetScript::steady(fast)
        .then(Duration::from_secs_f64(STEP_UP), slow, slow)
        .then(Duration::from_secs_f64(STEP_DOWN), fast, fast);
    let mut s = clear_bots(8, 12, |i| {
        wander(i, net.clone(), ClientClock::default(), Encoding::Compact)
    });
    s.run(Duration::from_secs(45));
    s
}

/// 4 bots whose clocks run at `rate` (1.005: 0.5 % fast) for 120 s, at
/// 100 ms RTT ±10 ms.
pub fn drift(rate: f64) -> Stepper {
    let clock = ClientClock {
        rate,
        ..ClientClock::default()
    };
    let mut s = clear_bots(4, 13, |i| {
        wander(
            i,
            NetScript::steady(link(100.0, 10.0, 0.0)),
            clock.clone(),
            Encoding::Compact,
        )
    });
    s.run(Duration::from_secs(120));
    s
}

/// When the hitch and the blackout happen, seconds.
pub const INCIDENT_AT: f64 = 20.0;

/// 4 bots on the main link for 40 s; the first has one frame hitch of
/// `len` at [`INCIDENT_AT`] (250 ms: a stutter; over the session's
/// 250 ms `max_frame`: a hidden tab, whose steps beyond it are skipped).
pub fn hitch(len: Duration) -> Stepper {
    let mut s = clear_bots(4, 14, |i| {
        let mut clock = ClientClock::default();
        if i == 0 {
            clock.hitches = vec![(Duration::from_secs_f64(INCIDENT_AT), len)];
        }
        wander(i, NetScript::steady(main_link()), clock, Encoding::Compact)
    });
    s.run(Duration::from_secs(40));
    s
}

/// 4 bots at 100 ms RTT ±10 ms for 40 s; the first loses every message
/// it sends for 1 s from [`INCIDENT_AT`].
pub fn blackout() -> Stepper {
    let clean = link(100.0, 10.0, 0.0);
    let dark = LinkConditions { loss: 1.0, ..clean };
    let at = Duration::from_secs_f64(INCIDENT_AT);
    let mut s = clear_bots(4, 15, |i| {
        let net = if i == 0 {
            NetScript::steady(clean).then(at, dark, clean).then(
                at + Duration::from_secs(1),
                clean,
                clean,
            )
        } else {
            NetScript::steady(clean)
        };
        wander(i, net, ClientClock::default(), Encoding::Compact)
    });
    s.run(Duration::from_secs(40));
    s
}

/// 8 bots on the main link with 5 % duplication each way, hit every 5 s by
/// a 300 ms burst of 50 % loss both ways, for 40 s.
pub fn bursts() -> Stepper {
    let base = LinkConditions {
        duplicate: 0.05,
        ..main_link()
    };
    let burst = LinkConditions { loss: 0.5, ..base };
    let mut net = NetScript::steady(base);
    for k in 1..8u64 {
        let at = Duration::from_secs(5 * k);
        net = net
            .then(at, burst, burst)
            .then(at + Duration::from_millis(300), base, base);
    }
    let mut s = clear_bots(8, 16, |i| {
        wander(i, net.clone(), ClientClock::default(), Encoding::Compact)
    });
    s.run(Duration::from_secs(40));
    s
}

/// 8 bots on 150 ms RTT with ±30 ms jitter for 40 s, losing `up` of what
/// goes up and `down` of what comes down: where the loss cover goes.
pub fn one_way_loss(up: f32, down: f32) -> Stepper {
    let base = link(150.0, 30.0, 0.0);
    // In force from the first millisecond (a change at zero is never
    // "in" a step).
    let net = NetScript::steady(base).then(
        Duration::from_millis(1),
        LinkConditions { loss: up, ..base },
        LinkConditions { loss: down, ..base },
    );
    let mut s = clear_bots(8, 17, |i| {
        wander(i, net.clone(), ClientClock::default(), Encoding::Compact)
    });
    s.run(Duration::from_secs(40));
    s
}

/// What a fairness run gave: shots the shooter saw leave and hits the
/// server confirmed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fairness {
    /// Shots fired (off cooldown, drawn as tracers).
    pub shots: u64,
    /// Hits confirmed.
    pub hits: u64,
}

impl Fairness {
    /// Hits per shot.
    pub fn ratio(&self) -> f64 {
        self.hits as f64 / self.shots.max(1) as f64
    }
}

/// A shooter aiming at what its own session draws, at a target circling at
/// full speed 450 u away, both on `net`, for `secs`.
pub fn fairness(net: LinkConditions, seed: u64, secs: u64) -> Fairness {
    let sim = open_arena(2000.0, 1200.0);
    let radius = sim.player_radius;
    // The target never dies, so it circles in one place all the run.
    let rules = CombatRules {
        max_hp: u16::MAX,
        ..CombatRules::default()
    };
    let mut s = Stepper::with_room(RoomConfig {
        game: TankSettings { sim, rules },
        seed,
        capacity: 2,
        ..RoomConfig::default()
    });
    let shooter = s.join_spec(ClientSpec::new(
        Script::Shooter(Shooter { radius }),
        net,
        seed,
    ));
    let target = s.join_spec(ClientSpec::new(Script::Circle(0.4), net, seed + 1));
    s.room
        .world_mut()
        .teleport(shooter, Pose::new(Vec2::new(500.0, 600.0), 0.0));
    s.room.world_mut().teleport(
        target,
        Pose::new(Vec2::new(950.0, 600.0), std::f32::consts::FRAC_PI_2),
    );
    s.run(Duration::from_secs(secs));
    Fairness {
        shots: s.clients[0].trace.shot_ticks.len() as u64,
        hits: s.clients[0].trace.hits,
    }
}

/// The main cell's budget, whatever the game: the loss was real, everyone
/// played all the time, input-to-acknowledgement within RTT + 75 ms
/// (median) and RTT + 150 ms (99th percentile), RTT being 150 ms, late and
/// repeated player-ticks within 0.5 % together, a misprediction only where
/// the player's own input was late or repeated (for bots that never
/// collide), no hard resync, remote time never backwards nor outside
/// ±10 % of real time, and no drawn snap-back.
///
/// # Panics
/// The first number out of budget, with the run's figures.
pub fn assert_main_cell_budget(counters: &[ClientCounters], row: &Summary) {
    assert_main_cell_timing(counters, row);
    for c in counters {
        assert!(c.mispredictions <= c.late + c.repeated, "{c:?}");
    }
    assert_eq!(row.drawn_snap_backs, 0, "drawn never snaps back: {row:?}");
}

/// The main cell's timing budget, whatever the game: the loss was real,
/// everyone played all the time, input-to-acknowledgement within RTT +
/// 75 ms (median) and RTT + 150 ms (99th percentile), late and repeated
/// player-ticks within 0.5 % together, no hard resync, remote time never
/// backwards nor outside ±10 % of real time.
///
/// # Panics
/// The first number out of budget, with the run's figures.
pub fn assert_main_cell_timing(counters: &[ClientCounters], row: &Summary) {
    let t = totals(counters);
    assert!(
        t.lost_up > 500 && t.lost_down > 500,
        "the loss is real: {t:?}"
    );
    assert!(t.inputs >= 16 * 1180, "everyone played all the time: {t:?}");
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
