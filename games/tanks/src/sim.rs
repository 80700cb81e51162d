//! The one movement step. The server, live prediction and replay all call it.
//!
//! A step of any duration is cut into cadence-sized substeps plus a remainder
//! ([`substeps`]): 150 ms at a 50 ms cadence is three 50 ms substeps, 120 ms is
//! 50 + 50 + 20. Durations are split in whole microseconds, so nothing is lost
//! or counted twice. Within a substep the heading turns first, then the player
//! moves along the new heading, then collisions push the player's circle out
//! of obstacles and back inside the arena: each substep's heading drives the
//! next substep's direction.
//!
//! Determinism: sine and cosine come from `libm`, every other operation is a
//! single IEEE-754 operation (add, multiply, divide, square root), and Rust
//! never fuses a multiply and an add on its own, so the result is bit-identical
//! on every target.

use std::f32::consts::{PI, TAU};
use std::time::Duration;

use glam::Vec2;
use serde::{Deserialize, Serialize};

use crate::config::{Rect, SimConfig};
use crate::input::{MoveInput, PredictedMoveStep};
use skirmish_core::clamp;

/// Where a player is and where it faces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Pose {
    /// Centre of the player's circle, in arena units.
    pub position: Vec2,
    /// Heading in radians, kept in (-pi, pi]; 0 faces +x.
    pub rotation: f32,
}

impl Pose {
    /// A pose from its parts, with the rotation wrapped into (-pi, pi].
    pub fn new(position: Vec2, rotation: f32) -> Pose {
        Pose {
            position,
            rotation: wrap_angle(rotation),
        }
    }

    /// Whether every number in the pose is finite.
    pub fn is_finite(&self) -> bool {
        self.position.is_finite() && self.rotation.is_finite()
    }

    /// The pose a fraction `t` of the way from `self` to `to`: linear in
    /// position, along the shortest arc in rotation.
    #[must_use]
    pub fn lerp(&self, to: &Pose, t: f32) -> Pose {
        Pose {
            position: self.position + (to.position - self.position) * t,
            rotation: wrap_angle(self.rotation + angle_delta(self.rotation, to.rotation) * t),
        }
    }

    /// Bit-level equality, for determinism checks (`0.0 != -0.0` here).
    pub fn bits_eq(&self, other: &Pose) -> bool {
        self.position.x.to_bits() == other.position.x.to_bits()
            && self.position.y.to_bits() == other.position.y.to_bits()
            && self.rotation.to_bits() == other.rotation.to_bits()
    }
}

/// The input both sides actually use: non-finite values become 0 and the
/// rest are clamped to [-1, 1].
#[must_use]
pub fn sanitize(input: MoveInput) -> MoveInput {
    let clean = |v: f32| {
        if v.is_finite() {
            clamp(v, -1.0, 1.0)
        } else {
            0.0
        }
    };
    MoveInput {
        turn: clean(input.turn),
        throttle: clean(input.throttle),
        ..input
    }
}

/// `angle` wrapped into (-pi, pi]; a non-finite angle becomes 0.
pub fn wrap_angle(angle: f32) -> f32 {
    if !angle.is_finite() {
        return 0.0;
    }
    if angle > -PI && angle <= PI {
        return angle;
    }
    // fmod is exact, so this is the same on every target.
    let mut r = libm::fmodf(angle, TAU);
    if r > PI {
        r -= TAU;
    } else if r <= -PI {
        r += TAU;
    }
    if r <= -PI {
        PI
    } else {
        r
    }
}

/// The signed shortest rotation that turns `from` into `to`, in (-pi, pi].
pub fn angle_delta(from: f32, to: f32) -> f32 {
    wrap_angle(to - from)
}

/// One substep of length `dt` seconds: turn, move along the new heading,
/// collide. `dt` should not exceed one cadence; [`simulate`] guarantees it.
#[must_use]
pub fn substep(pose: Pose, input: &MoveInput, dt: f32, config: &SimConfig) -> Pose {
    let rotation = wrap_angle(pose.rotation + input.turn * config.turn_rate * dt);
    let heading = Vec2::new(libm::cosf(rotation), libm::sinf(rotation));
    let distance = input.throttle * config.speed * dt;
    let position = resolve_collisions(pose.position + heading * distance, config);
    Pose { position, rotation }
}

/// The durations of the substeps a step of `duration` is cut into: whole
/// cadences, then the remainder if there is one.
pub fn substeps(duration: Duration, cadence: Duration) -> impl Iterator<Item = Duration> {
    let total = duration.as_micros();
    let unit = cadence.as_micros().max(1);
    let whole = total / unit;
    let rest = total % unit;
    (0..whole)
        .map(move |_| unit)
        .chain((rest > 0).then_some(rest))
        .map(|us| Duration::from_micros(us as u64))
}

/// Applies `input` (sanitized here) for `duration`, in the substeps that
/// [`substeps`] gives. Live prediction, replay and the server all call this.
#[must_use]
pub fn simulate(pose: Pose, input: &MoveInput, duration: Duration, config: &SimConfig) -> Pose {
    let input = sanitize(*input);
    substeps(duration, config.cadence()).fold(pose, |pose, dt| {
        substep(pose, &input, micros_to_secs(dt), config)
    })
}

/// Replays `steps` in order from `baseline`, the same way live prediction
/// applied them.
#[must_use]
pub fn replay<'a>(
    baseline: Pose,
    steps: impl IntoIterator<Item = &'a PredictedMoveStep>,
    config: &SimConfig,
) -> Pose {
    steps.into_iter().fold(baseline, |pose, step| {
        simulate(pose, &step.input, step.duration, config)
    })
}

/// Pushes a player's circle at `position` out of every obstacle, in order,
/// then clamps it inside the arena.
pub fn resolve_collisions(position: Vec2, config: &SimConfig) -> Vec2 {
    let r = config.player_radius;
    let p = config
        .obstacles
        .iter()
        .fold(position, |p, rect| push_out_of_rect(p, r, rect));
    Vec2::new(
        p.x.max(r).min(config.arena.x - r),
        p.y.max(r).min(config.arena.y - r),
    )
}

fn micros_to_secs(d: Duration) -> f32 {
    d.as_micros() as f32 / 1_000_000.0
}

/// Moves a circle of radius `r` at `p` out of `rect` along the shortest way.
fn push_out_of_rect(p: Vec2, r: f32, rect: &Rect) -> Vec2 {
    let closest = Vec2::new(
        p.x.max(rect.min.x).min(rect.max.x),
        p.y.max(rect.min.y).min(rect.max.y),
    );
    let away = p - closest;
    let dist2 = away.length_squared();
    if dist2 >= r * r {
        return p;
    }
    if dist2 > 0.0 {
        let dist = dist2.sqrt();
        return closest + away * (r / dist);
    }
    // The centre is inside the rectangle: leave by the nearest side.
    let exits = [
        (p.x - rect.min.x, Vec2::new(rect.min.x - r, p.y)),
        (rect.max.x - p.x, Vec2::new(rect.max.x + r, p.y)),
        (p.y - rect.min.y, Vec2::new(p.x, rect.min.y - r)),
        (rect.max.y - p.y, Vec2::new(p.x, rect.max.y + r)),
    ];
    let mut best = exits[0];
    for exit in &exits[1..] {
        if exit.0 < best.0 {
            best = *exit;
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;
    use skirmish_core::Tick;

    fn open_config() -> SimConfig {
        SimConfig {
            obstacles: Vec::new(),
            ..SimConfig::default()
        }
    }

    fn input(turn: f32, throttle: f32) -> MoveInput {
        MoveInput {
            tick: Tick(1),
            turn,
            throttle,
            fire: false,
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn cpr1_steady_step_is_three_cadence_substeps_and_equals_live() {
        let config = open_config();
        let parts: Vec<_> = substeps(ms(150), config.cadence()).collect();
        assert_eq!(parts, vec![ms(50); 3]);

        let start = Pose::new(Vec2::new(500.0, 600.0), 0.0);
        let mv = input(0.0, 1.0);
        let replayed = simulate(start, &mv, ms(150), &config);
        let live = (0..3).fold(start, |p, _| simulate(p, &mv, ms(50), &config));
        assert!(replayed.bits_eq(&live));
        assert!((replayed.position.x - 530.0).abs() < 1e-3);
    }

    #[test]
    fn cpr2_turn_and_move_each_heading_drives_next_direction() {
        let config = open_config();
        let start = Pose::new(Vec2::new(500.0, 600.0), 0.0);
        let mv = input(0.5, 1.0);
        let replayed = simulate(start, &mv, ms(100), &config);
        let live = (0..2).fold(start, |p, _| simulate(p, &mv, ms(50), &config));
        assert!(replayed.bits_eq(&live));

        // By hand: heading first, then movement along that heading.
        let dt = 0.05_f32;
        let r1 = 0.5 * PI * dt;
        let p1 = Vec2::new(500.0, 600.0) + Vec2::new(libm::cosf(r1), libm::sinf(r1)) * (200.0 * dt);
        let r2 = r1 + 0.5 * PI * dt;
        let p2 = p1 + Vec2::new(libm::cosf(r2), libm::sinf(r2)) * (200.0 * dt);
        assert_eq!(replayed.rotation, r2);
        assert_eq!(replayed.position, p2);
        // A single 100 ms step along the final heading would land elsewhere.
        let naive = Vec2::new(500.0, 600.0) + Vec2::new(libm::cosf(r2), libm::sinf(r2)) * 20.0;
        assert!(replayed.position.distance(naive) > 0.1);
    }

    #[test]
    fn cpr3_non_multiple_duration_keeps_the_remainder() {
        let config = open_config();
        let parts: Vec<_> = substeps(ms(120), config.cadence()).collect();
        assert_eq!(parts, vec![ms(50), ms(50), ms(20)]);
        assert_eq!(parts.iter().sum::<Duration>(), ms(120));

        let start = Pose::new(Vec2::new(500.0, 600.0), 0.0);
        let mv = input(0.0, 1.0);
        let out = simulate(start, &mv, ms(120), &config);
        let by_parts = [50, 50, 20]
            .iter()
            .fold(start, |p, &d| simulate(p, &mv, ms(d), &config));
        assert!(out.bits_eq(&by_parts));
        // 0.12 s at 200 u/s is 24 u: nothing lost, nothing counted twice.
        assert!((out.position.x - 524.0).abs() < 1e-3);
    }

    #[test]
    fn sanitize_zeroes_non_finite_and_clamps() {
        let s = sanitize(MoveInput {
            tick: Tick(3),
            turn: f32::NAN,
            throttle: 7.0,
            fire: true,
        });
        assert_eq!(
            (s.tick, s.turn, s.throttle, s.fire),
            (Tick(3), 0.0, 1.0, true)
        );
        let s = sanitize(input(f32::NEG_INFINITY, -3.0));
        assert_eq!((s.turn, s.throttle), (0.0, -1.0));
    }

    #[test]
    fn wrap_angle_stays_in_half_open_range() {
        for a in [-10.0_f32, -PI, PI, 3.5, 100.0, -100.0, 0.0, TAU, -TAU, 1e30] {
            let w = wrap_angle(a);
            assert!(w > -PI && w <= PI, "{a} -> {w}");
        }
        assert_eq!(wrap_angle(-PI), PI);
        assert_eq!(wrap_angle(f32::NAN), 0.0);
        assert!((angle_delta(3.0, -3.0) - (TAU - 6.0)).abs() < 1e-6);
    }

    #[test]
    fn arena_bounds_stop_the_player() {
        let config = open_config();
        let start = Pose::new(Vec2::new(1970.0, 600.0), 0.0);
        let out = simulate(start, &input(0.0, 1.0), ms(500), &config);
        assert_eq!(out.position, Vec2::new(1980.0, 600.0));
    }

    #[test]
    fn obstacles_push_out_along_the_shortest_way() {
        let config = SimConfig {
            obstacles: vec![Rect::new(100.0, 100.0, 100.0, 100.0)],
            ..SimConfig::default()
        };
        // Approaching from the left: stopped at the left face.
        let p = resolve_collisions(Vec2::new(90.0, 150.0), &config);
        assert_eq!(p, Vec2::new(80.0, 150.0));
        // Inside, nearest the top: out through the top.
        let p = resolve_collisions(Vec2::new(150.0, 105.0), &config);
        assert_eq!(p, Vec2::new(150.0, 80.0));
        // Near a corner: pushed out radially to exactly one radius.
        let p = resolve_collisions(Vec2::new(95.0, 95.0), &config);
        assert!((p.distance(Vec2::new(100.0, 100.0)) - 20.0).abs() < 1e-4);
    }
}
