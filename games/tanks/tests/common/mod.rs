//! Helpers shared by core's scenario tests.

use skirmish_core::{Tick, Vec2};
use skirmish_tanks::{MoveInput, Pose, SimConfig};

/// An arena with no obstacles, where one full-throttle step moves 10 u.
pub fn open() -> SimConfig {
    SimConfig {
        obstacles: Vec::new(),
        ..SimConfig::default()
    }
}

/// Full throttle, no turn, at `tick`.
pub fn forward(tick: u32) -> MoveInput {
    MoveInput {
        tick: Tick(tick),
        turn: 0.0,
        throttle: 1.0,
        fire: false,
    }
}

/// A pose at (x, y) facing +x.
pub fn at(x: f32, y: f32) -> Pose {
    Pose::new(Vec2::new(x, y), 0.0)
}
