//! What a tank's player does in one tick, as both sides see it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use skirmish_core::PredictedStep;
use skirmish_core::Tick;

/// One tick of a player's controls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MoveInput {
    /// The client tick this input belongs to.
    pub tick: Tick,
    /// Turn, -1 (towards negative angles) to 1.
    pub turn: f32,
    /// Throttle, -1 (backwards) to 1 (forwards).
    pub throttle: f32,
    /// Whether the fire button is held.
    #[serde(default)]
    pub fire: bool,
}

/// A predicted step of the tank game.
pub type PredictedMoveStep = PredictedStep<MoveInput>;

/// A tank's predicted step for `input`, at the input's own tick.
pub fn move_step(input: MoveInput, duration: Duration) -> PredictedMoveStep {
    PredictedStep::at(input.tick, input, duration)
}
