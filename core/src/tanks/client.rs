//! The tank game's calls on the library's client parts, in its own
//! vocabulary: an input carries its tick, a [`PlayerState`] its stamp.

use glam::Vec2;

use crate::client::authority::{Authority, Refused};
use crate::client::interpolation::{InterpolationConfig, RemoteBuffer, RemoteSample};
use crate::client::pending::PushError;
use crate::client::prediction::{LocalPlayer, ReconcileError, ReconcileReport};
use crate::client::smoothing::SmoothingConfig;
use crate::shared::game::OwnState;
use crate::tanks::config::SimConfig;
use crate::tanks::input::MoveInput;
use crate::tanks::sim::Pose;
use crate::tanks::state::PlayerState;
use crate::tanks::{CombatEvent, PoseOffset, Tanks};

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

/// The tank game's calls: a [`PlayerState`] carries its player and tick.
impl Authority<PlayerState> {
    /// Takes `state` as the owned snapshot of its player if it is newer.
    ///
    /// # Errors
    /// As [`Authority::insert`].
    pub fn accept(&mut self, state: &PlayerState) -> Result<(), Refused> {
        self.insert(state.id, state.tick, state)
    }

    /// Applies a combat result to its target; `true` if it changed the
    /// owned state.
    pub fn apply_combat(&mut self, event: &CombatEvent) -> bool {
        self.apply(event)
    }
}

impl RemoteBuffer<Pose> {
    /// Adds an accepted tank state; `false` (and nothing changes) if its
    /// tick is not newer than the newest sample or it is not finite.
    pub fn push(&mut self, state: &PlayerState, config: &InterpolationConfig) -> bool {
        self.add(
            RemoteSample {
                tick: state.tick,
                visual: state.pose(),
                velocity: PoseOffset {
                    position: state.velocity.unwrap_or(Vec2::ZERO),
                    rotation: 0.0,
                },
                alive: state.alive,
            },
            config,
        )
    }
}

#[cfg(test)]
mod remotes;
#[cfg(test)]
mod tests;
