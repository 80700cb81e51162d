//! The tank game's calls on the library's client parts, in its own
//! vocabulary: an input carries its tick, a [`PlayerState`] its stamp.

use glam::Vec2;

use crate::client::pending::PushError;
use crate::client::prediction::{LocalPlayer, ReconcileError, ReconcileReport};
use crate::client::smoothing::SmoothingConfig;
use crate::shared::config::SimConfig;
use crate::shared::game::OwnState;
use crate::shared::input::MoveInput;
use crate::shared::sim::Pose;
use crate::shared::state::PlayerState;
use crate::tanks::Tanks;

/// The tank game's calls, in its own vocabulary: an input carries its
/// tick, a [`PlayerState`] its stamp.
impl LocalPlayer<Tanks> {
    /// Predicts one fixed step of `input` (sanitized first) and records it.
    ///
    /// # Errors
    /// As [`LocalPlayer::step`].
    pub fn predict(&mut self, input: MoveInput) -> Result<Pose, PushError> {
        self.step(input.tick, input, None)
    }

    /// [`LocalPlayer::predict`], for an input made while remote players
    /// were drawn at server tick `view_tick`.
    ///
    /// # Errors
    /// As [`LocalPlayer::step`].
    pub fn predict_seen(
        &mut self,
        input: MoveInput,
        view_tick: Option<f64>,
    ) -> Result<Pose, PushError> {
        self.step(input.tick, input, view_tick)
    }

    /// Accepts a newer authoritative state and rebuilds the prediction.
    ///
    /// # Errors
    /// As [`LocalPlayer::accept`].
    pub fn reconcile(&mut self, state: &PlayerState) -> Result<ReconcileReport, ReconcileError> {
        self.accept(state.stamp(), state)
    }

    /// Accepts `state` as a fresh placement.
    ///
    /// # Errors
    /// As [`LocalPlayer::accept_placed`].
    pub fn place(&mut self, state: &PlayerState) -> Result<ReconcileReport, ReconcileError> {
        self.accept_placed(state.stamp(), state)
    }
}

impl Default for LocalPlayer<Tanks> {
    fn default() -> Self {
        LocalPlayer::new(
            SimConfig::default(),
            SmoothingConfig::default(),
            Pose::new(Vec2::new(100.0, 100.0), 0.0),
        )
    }
}
