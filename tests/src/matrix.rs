//! The tank game's scenario matrix: the stepper runs that show input
//! timing, fairness and remote time under scripted clocks and networks,
//! and the numbers each row of `docs/QUALITY.md` reports.
//! `tests/tests/clock.rs` asserts them; the `quality` binary prints them
//! (and the SVG plots) for the docs. The generic part (the main link, a
//! game's main cell, a row's numbers, the main cell's budget) is the
//! harness's (`skirmish_harness::matrix`), re-exported here.

use std::time::Duration;

use skirmish_core::{Encoding, LinkConditions, RoomConfig, Vec2};
use skirmish_tanks::{teleport, CombatRules, Pose, TankSettings, Tanks};

pub use skirmish_harness::matrix::*;

use crate::open_arena;
use crate::scenario::{link, ClientClock, NetScript};
use crate::script::{Script, Shooter, Wander};
use crate::stepper::{ClientSpec, Stepper};

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

/// The tank game's main cell (`Harness for Tanks`: 16 bots wandering
/// clear of each other in an open arena), 60 s, 150 ms RTT, ±30 ms
/// jitter, 5 % loss each way, with snapshots in `encoding` and the resends
/// a session ships with.
pub fn main_cell(encoding: Encoding) -> Stepper {
    main_cell_with(encoding, skirmish_core::SessionConfig::default().resends)
}

/// The main cell with `resends` per input message while snapshots are lost.
pub fn main_cell_with(encoding: Encoding, resends: u32) -> Stepper {
    skirmish_harness::matrix::main_cell_with::<Tanks>(encoding, resends)
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
    teleport(
        s.room.world_mut(),
        shooter,
        Pose::new(Vec2::new(500.0, 600.0), 0.0),
    );
    teleport(
        s.room.world_mut(),
        target,
        Pose::new(Vec2::new(950.0, 600.0), std::f32::consts::FRAC_PI_2),
    );
    s.run(Duration::from_secs(secs));
    Fairness {
        shots: s.clients[0].trace.shot_ticks.len() as u64,
        hits: s.clients[0].trace.hits,
    }
}
