//! The tank game's calls on the library's client parts, in its own
//! vocabulary: an input carries its tick, a [`PlayerState`] its stamp.

use glam::Vec2;

use crate::config::SimConfig;
use crate::input::MoveInput;
use crate::sim::Pose;
use crate::state::PlayerState;
use crate::{CombatEvent, PoseOffset, Tanks};
use skirmish_core::OwnState;
use skirmish_core::PushError;
use skirmish_core::SmoothingConfig;
use skirmish_core::{Authority, Refused};
use skirmish_core::{InterpolationConfig, RemoteBuffer, RemoteSample};
use skirmish_core::{LocalPlayer, ReconcileError, ReconcileReport};

/// The tank game's calls on its predicted player, in its own vocabulary:
/// an input carries its tick, a [`PlayerState`] its stamp.
pub trait TankPrediction {
    /// Predicts one fixed step of `input` (sanitized first) and records it.
    ///
    /// # Errors
    /// As [`LocalPlayer::step`].
    fn predict(&mut self, input: MoveInput) -> Result<Pose, PushError>;

    /// [`TankPrediction::predict`], for an input made while remote players
    /// were drawn at server tick `view_tick`.
    ///
    /// # Errors
    /// As [`LocalPlayer::step`].
    fn predict_seen(&mut self, input: MoveInput, view_tick: Option<f64>)
        -> Result<Pose, PushError>;

    /// Accepts a newer authoritative state and rebuilds the prediction.
    ///
    /// # Errors
    /// As [`LocalPlayer::accept`].
    fn reconcile(&mut self, state: &PlayerState) -> Result<ReconcileReport, ReconcileError>;

    /// Accepts `state` as a fresh placement.
    ///
    /// # Errors
    /// As [`LocalPlayer::accept_placed`].
    fn place(&mut self, state: &PlayerState) -> Result<ReconcileReport, ReconcileError>;
}

/// A tank's predicted player where the page starts it: (100, 100),
/// facing +x, with the default configuration and smoothing.
pub fn tank_player() -> LocalPlayer<Tanks> {
    LocalPlayer::new(
        SimConfig::default(),
        SmoothingConfig::default(),
        Pose::new(Vec2::new(100.0, 100.0), 0.0),
    )
}

impl TankPrediction for LocalPlayer<Tanks> {
    fn predict(&mut self, input: MoveInput) -> Result<Pose, PushError> {
        self.step(input.tick, input, None)
    }

    fn predict_seen(
        &mut self,
        input: MoveInput,
        view_tick: Option<f64>,
    ) -> Result<Pose, PushError> {
        self.step(input.tick, input, view_tick)
    }

    fn reconcile(&mut self, state: &PlayerState) -> Result<ReconcileReport, ReconcileError> {
        self.accept(state.stamp(), state)
    }

    fn place(&mut self, state: &PlayerState) -> Result<ReconcileReport, ReconcileError> {
        self.accept_placed(state.stamp(), state)
    }
}

/// The tank game's calls on its store of states: a [`PlayerState`]
/// carries its player and tick.
pub trait TankAuthority {
    /// Takes `state` as the owned snapshot of its player if it is newer.
    ///
    /// # Errors
    /// As [`Authority::insert`].
    fn accept(&mut self, state: &PlayerState) -> Result<(), Refused>;

    /// Applies a combat result to its target; `true` if it changed the
    /// owned state.
    fn apply_combat(&mut self, event: &CombatEvent) -> bool;
}

impl TankAuthority for Authority<PlayerState> {
    fn accept(&mut self, state: &PlayerState) -> Result<(), Refused> {
        self.insert(state.id, state.tick, state)
    }

    fn apply_combat(&mut self, event: &CombatEvent) -> bool {
        self.apply(event)
    }
}

/// The tank game's call on a remote's samples.
pub trait TankRemote {
    /// Adds an accepted tank state; `false` (and nothing changes) if its
    /// tick is not newer than the newest sample or it is not finite.
    fn push(&mut self, state: &PlayerState, config: &InterpolationConfig) -> bool;
}

impl TankRemote for RemoteBuffer<Pose> {
    fn push(&mut self, state: &PlayerState, config: &InterpolationConfig) -> bool {
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
