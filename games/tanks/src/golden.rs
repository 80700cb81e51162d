//! The golden trajectory: proof that the tank's movement is bit-identical
//! on every target.
//!
//! [`golden_trajectory_hash`] runs a fixed, seeded 10,000-step trajectory with
//! mixed inputs, durations that are and are not multiples of the cadence, and
//! collisions with the arena and the obstacles, and hashes the bits of every
//! `f32` of every pose. A native test and a browser test (headless Chromium)
//! both assert that it equals [`GOLDEN_TRAJECTORY_HASH`]. If a change to the
//! movement model changes the constant, that change is deliberate and both
//! sides move together.

use glam::Vec2;

use crate::config::SimConfig;
use crate::input::MoveInput;
use crate::sim::{simulate, Pose};
use skirmish_core::determinism::{seeded_duration, Fnv64};
use skirmish_core::SeededRng;
use skirmish_core::Tick;

/// The seed of the golden trajectory.
pub const GOLDEN_SEED: u64 = 0x5EED_2026;
/// The number of steps of the golden trajectory.
pub const GOLDEN_STEPS: u32 = 10_000;
/// The hash every target must produce for the golden trajectory.
pub const GOLDEN_TRAJECTORY_HASH: u64 = 0x301b_0d46_5504_6b2f;

/// The hash of the golden trajectory on this target.
pub fn golden_trajectory_hash() -> u64 {
    trajectory_hash(GOLDEN_SEED, GOLDEN_STEPS, &SimConfig::default()).0
}

/// Runs a seeded trajectory of `steps` steps; returns the hash of every pose
/// and how many steps ended touching an obstacle or a wall.
pub fn trajectory_hash(seed: u64, steps: u32, config: &SimConfig) -> (u64, u32) {
    let mut rng = SeededRng::new(seed);
    let mut pose = Pose::new(Vec2::new(100.0, 100.0), 0.0);
    let mut input = MoveInput::default();
    let mut hash = Fnv64::new();
    let mut contacts = 0;
    for i in 0..steps {
        input = golden_input(&mut rng, i, input);
        let duration = seeded_duration(&mut rng, config.cadence());
        let free = simulate(
            pose,
            &input,
            duration,
            &SimConfig {
                obstacles: Vec::new(),
                arena: Vec2::splat(f32::MAX),
                ..config.clone()
            },
        );
        pose = simulate(pose, &input, duration, config);
        if free.position != pose.position {
            contacts += 1;
        }
        hash_pose(&pose, &mut hash);
    }
    (hash.finish(), contacts)
}

/// Folds every bit of `pose` into `hash`.
pub fn hash_pose(pose: &Pose, hash: &mut Fnv64) {
    for v in [pose.position.x, pose.position.y, pose.rotation] {
        hash.f32(v);
    }
}

/// The golden run's input for step `step`, given the previous one: a new
/// turn and throttle drawn every 20 steps.
pub fn golden_input(rng: &mut SeededRng, step: u32, previous: MoveInput) -> MoveInput {
    let mut input = previous;
    if step % 20 == 0 {
        input.turn = rng.range_f32(-1.0, 1.0);
        input.throttle = rng.range_f32(-0.3, 1.0);
    }
    input.tick = Tick(step + 1);
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_trajectory_hash_matches_native() {
        let (hash, contacts) = trajectory_hash(GOLDEN_SEED, GOLDEN_STEPS, &SimConfig::default());
        assert!(
            contacts > 100,
            "the trajectory must exercise collisions, got {contacts}"
        );
        assert_eq!(hash, GOLDEN_TRAJECTORY_HASH, "got {hash:#018x}");
    }
}

/// The whole game's sync test, natively here and in headless Chromium by
/// the page's tests (`page/tests/sync.rs`): a seeded world of the default
/// settings from seed 7, 4 players, 60 ticks each re-simulated 4 ahead.
pub const SYNC_TEST: (u64, (u32, u32, u32)) = (7, (4, 60, 4));

/// What [`SYNC_TEST`] folds to on every target (a change to the rules of
/// the world moves it, deliberately, on both sides together).
pub const SYNC_HASH: u64 = 0xf598_bfdc_19e7_1938;

#[cfg(test)]
mod sync_tests {
    use super::{SYNC_HASH, SYNC_TEST};

    #[test]
    fn the_whole_tank_game_resimulates_to_its_hash() {
        let (seed, run) = SYNC_TEST;
        let report =
            skirmish_core::sync_test::<crate::Tanks>(&crate::TankSettings::default(), seed, run)
                .unwrap_or_else(|d| panic!("{d:?}"));
        assert_eq!(report.compared, 240);
        assert_eq!(report.hash, SYNC_HASH, "got {:#018x}", report.hash);
    }
}
