//! What a player does in one tick, as both sides see it: the input, and a
//! predicted step (the input and how long it was applied) for replay.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::shared::tick::Tick;

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

/// One live-predicted fixed step of a game whose controls are `I`, kept
/// for replay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PredictedStep<I> {
    /// The client tick the input belongs to.
    pub tick: Tick,
    /// The input that was applied.
    pub input: I,
    /// How long the input was applied for.
    pub duration: Duration,
    /// The server tick, with fraction, remote players were drawn at when
    /// the input was made (sent with it for lag compensation).
    pub view_tick: Option<f64>,
}

/// A predicted step of the tank game.
pub type PredictedMoveStep = PredictedStep<MoveInput>;

impl<I> PredictedStep<I> {
    /// A step of `input` at client tick `tick`.
    pub fn at(tick: Tick, input: I, duration: Duration) -> PredictedStep<I> {
        PredictedStep {
            tick,
            input,
            duration,
            view_tick: None,
        }
    }

    /// The same step, made while remotes were drawn at `view_tick`.
    #[must_use]
    pub fn seen_at(self, view_tick: Option<f64>) -> PredictedStep<I> {
        PredictedStep { view_tick, ..self }
    }
}

impl PredictedMoveStep {
    /// A step for `input`, at the input's own tick.
    pub fn new(input: MoveInput, duration: Duration) -> PredictedMoveStep {
        PredictedStep::at(input.tick, input, duration)
    }
}
