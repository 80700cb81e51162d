//! Interpolation with the tank game: remote tanks drawn between their
//! states (RS-9, CAPS-6), along the shortest arc, held across a death.

use std::time::Duration;

use glam::Vec2;

use crate::sim::Pose;
use crate::state::PlayerState;
use crate::Tanks;
use skirmish_core::{ClientGame, Tick};
use skirmish_core::{InterpolationConfig, RemoteBuffer, SampleKind};

const TICK: Duration = Duration::from_millis(50);

fn state(tick: u32, x: f32, rotation: f32) -> PlayerState {
    PlayerState {
        velocity: Some(Vec2::new(200.0, 0.0)),
        ..PlayerState::at(Tick(tick), None, Pose::new(Vec2::new(x, 100.0), rotation))
    }
}

fn buffer(samples: &[(u32, f32)]) -> RemoteBuffer<Pose> {
    let mut b = RemoteBuffer::default();
    for &(tick, x) in samples {
        assert!(b.add(
            <Tanks as ClientGame>::sample(&state(tick, x, 0.0)),
            &InterpolationConfig::default()
        ));
    }
    b
}

#[test]
fn rs9_remote_is_interpolated_between_samples() {
    let config = InterpolationConfig::default();
    let b = buffer(&[(10, 100.0), (11, 110.0), (12, 120.0)]);
    let (pose, kind) = b.sample(10.5, TICK, &config).unwrap();
    assert_eq!((pose.position.x, kind), (105.0, SampleKind::Interpolated));
    let (pose, _) = b.sample(11.25, TICK, &config).unwrap();
    assert_eq!(pose.position.x, 112.5);
    // Across a lost sample the span is two ticks.
    let b = buffer(&[(10, 100.0), (12, 120.0)]);
    assert_eq!(b.sample(11.0, TICK, &config).unwrap().0.position.x, 110.0);
}

#[test]
fn rotation_takes_the_shortest_arc() {
    let config = InterpolationConfig::default();
    let mut b = RemoteBuffer::default();
    b.add(<Tanks as ClientGame>::sample(&state(1, 0.0, 3.0)), &config);
    b.add(<Tanks as ClientGame>::sample(&state(2, 0.0, -3.0)), &config);
    let (pose, _) = b.sample(1.5, TICK, &config).unwrap();
    assert!(
        pose.rotation.abs() > 3.0,
        "through pi, not through 0: {}",
        pose.rotation
    );
}

#[test]
fn a_taken_back_extrapolation_fades_instead_of_snapping_back() {
    let config = InterpolationConfig::default();
    let tick = TICK;
    let mut b = RemoteBuffer::default();
    let moving = |t: u32, x: f32, vx: f32| PlayerState {
        velocity: Some(Vec2::new(vx, 0.0)),
        ..state(t, x, 0.0)
    };
    // Moving +x at 200 u/s; the samples stop at tick 10 (x = 100).
    for t in 0..=10 {
        b.add(
            <Tanks as ClientGame>::sample(&moving(t, 10.0 * t as f32, 200.0)),
            &config,
        );
    }
    let frame = 0.01f32;
    let mut at = 9.0;
    let (mut drawn, mut raw) = (Vec::new(), Vec::new());
    for i in 0..60 {
        // A 10 ms frame is a fifth of a tick.
        at += 0.2;
        if i == 10 {
            // It had turned back by tick 11: x = 95, then 85, 75.
            for (t, x) in [(11, 95.0), (12, 85.0), (13, 75.0)] {
                b.add(
                    <Tanks as ClientGame>::sample(&moving(t, x, -200.0)),
                    &config,
                );
            }
        }
        b.settle(at, tick, &config, frame);
        drawn.push(b.drawn(at, tick, &config).expect("samples").0.position.x);
        raw.push(b.sample(at, tick, &config).expect("samples").0.position.x);
    }
    let steps = |xs: &[f32]| xs.windows(2).map(|w| w[1] - w[0]).collect::<Vec<f32>>();
    let (drawn, raw) = (steps(&drawn), steps(&raw));
    // Sampled as is, the taken-back guess (110 -> 93) is one jump.
    assert!(raw[9] < -15.0, "{raw:?}");
    // Drawn, it holds for that frame, then comes back no faster than
    // its own motion (2 u a frame) and the fading together.
    assert!(drawn[9].abs() < 0.5, "{drawn:?}");
    assert!(drawn.iter().all(|s| *s > -4.0), "{drawn:?}");
    // And it ends where the samples are.
    let (end, _) = b.drawn(at, tick, &config).expect("samples");
    let (truth, _) = b.sample(at, tick, &config).expect("samples");
    assert!(end.position.distance(truth.position) < 0.5);
}

#[test]
fn a_respawn_is_not_drawn_as_a_slide_across_the_arena() {
    let config = InterpolationConfig::default();
    let mut b = RemoteBuffer::default();
    let at = |t: u32, x: f32, alive: bool| PlayerState {
        alive,
        ..state(t, x, 0.0)
    };
    b.add(<Tanks as ClientGame>::sample(&at(1, 100.0, true)), &config);
    b.add(<Tanks as ClientGame>::sample(&at(2, 100.0, false)), &config);
    b.add(<Tanks as ClientGame>::sample(&at(3, 100.0, false)), &config);
    b.add(<Tanks as ClientGame>::sample(&at(4, 900.0, true)), &config);
    assert_eq!(b.alive_at(1.5), Some(true));
    assert_eq!(b.alive_at(2.0), Some(false));
    // Between the last dead sample and the respawn: held where it died.
    let (pose, kind) = b.sample(3.5, TICK, &config).expect("samples");
    assert_eq!((pose.position.x, kind), (100.0, SampleKind::Held));
    assert_eq!(b.alive_at(3.5), Some(false));
    assert_eq!(b.alive_at(4.0), Some(true));
    assert_eq!(b.alive_at(0.0), Some(true), "before the first: the first");
}

#[test]
fn a_dry_buffer_extrapolates_at_most_100_ms_then_holds() {
    let config = InterpolationConfig::default();
    let b = buffer(&[(10, 100.0), (11, 110.0)]);
    // 1 tick = 50 ms past the newest sample at 200 u/s: 10 u ahead.
    let (pose, kind) = b.sample(12.0, TICK, &config).unwrap();
    assert_eq!(kind, SampleKind::Extrapolated);
    assert!((pose.position.x - 120.0).abs() < 1e-3);
    // Far past it: no further than 100 ms (20 u).
    let (pose, _) = b.sample(30.0, TICK, &config).unwrap();
    assert!((pose.position.x - 130.0).abs() < 1e-3);
    // Before the first sample: held there.
    assert_eq!(
        b.sample(3.0, TICK, &config).unwrap(),
        (state(10, 100.0, 0.0).pose(), SampleKind::Held)
    );
}

#[test]
fn caps6_older_samples_never_enter() {
    let config = InterpolationConfig::default();
    let mut b = buffer(&[(10, 100.0), (12, 120.0)]);
    assert!(!b.add(
        <Tanks as ClientGame>::sample(&state(11, 999.0, 0.0)),
        &config
    ));
    assert!(!b.add(
        <Tanks as ClientGame>::sample(&state(12, 999.0, 0.0)),
        &config
    ));
    assert_eq!(b.len(), 2);
    assert_eq!(b.sample(11.0, TICK, &config).unwrap().0.position.x, 110.0);
}

#[test]
fn disabled_interpolation_draws_the_newest_sample() {
    let config = InterpolationConfig {
        enabled: false,
        ..InterpolationConfig::default()
    };
    let b = buffer(&[(10, 100.0), (11, 110.0)]);
    assert_eq!(b.sample(10.5, TICK, &config).unwrap().0.position.x, 110.0);
}

#[test]
fn the_buffer_is_bounded() {
    let config = InterpolationConfig {
        capacity: 4,
        ..InterpolationConfig::default()
    };
    let mut b = RemoteBuffer::default();
    for t in 1..=10 {
        b.add(
            <Tanks as ClientGame>::sample(&state(t, t as f32, 0.0)),
            &config,
        );
    }
    assert_eq!(b.len(), 4);
    assert_eq!(b.newest_tick(), Some(Tick(10)));
}
