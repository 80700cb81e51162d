//! A predicted step, as both sides see it: a game's input and how long it
//! was applied, kept for replay.

use std::time::Duration;

use crate::shared::tick::Tick;

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
