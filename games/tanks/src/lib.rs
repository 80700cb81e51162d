//! The tank game, Skirmish's first game: turn, throttle and fire in an
//! arena with obstacles. It implements the library's contract
//! ([`Game`], [`Networked`](skirmish_core::Networked),
//! [`ServerGame`](skirmish_core::ServerGame),
//! [`ClientGame`](skirmish_core::ClientGame),
//! [`Harness`](skirmish_core::Harness))
//! over its movement step ([`simulate`]), its constants ([`SimConfig`]),
//! its controls ([`MoveInput`]) and a player's state ([`PlayerState`]),
//! with a [`Pose`] as what is predicted and drawn, using only the
//! library's public API. Its users name the library, `skirmish_core`, for
//! the library's items.

mod client;
mod combat;
mod config;
mod golden;
mod input;
mod life;
mod quantised;
mod recordings;
pub mod script;
mod session;
mod shots;
mod sim;
mod state;
mod tracers;
mod wire;
mod world;

pub use client::tank_player;
pub use config::{ConfigError, Rect, SimConfig, MAX_OBSTACLES};
pub use input::{move_step, MoveInput, PredictedMoveStep};
pub use shots::{shot_path, CombatRules, Cooldown};
pub use sim::{angle_delta, replay, sanitize, simulate, substep, substeps, wrap_angle, Pose};
pub use state::PlayerState;

pub use recordings::{open_client, open_room, replay_client, replay_room, replay_room_for};
pub use session::{Controls, ShotStats, TankClient, TankNote};
pub use tracers::{Tracer, TRACER_LIFE};
pub use wire::{CombatEvent, TankSetup, WireInput, GAME_NAME, GAME_VERSION};
pub use world::{teleport, Arena, Tank, TankSettings};

use std::time::Duration;

use skirmish_core::{Applied, Game, Offset, PlayerId, Replicated, Size, Tick, Vec2, Visual};

/// The tank game's quantised state in the library's compact snapshot
/// encoding, and its whole-frame helpers.
pub mod compact {
    pub use crate::quantised::{
        decode, decode_quantised, encode, encode_tail, Quantised, ENTRY_BYTES, HEAD_BYTES,
    };
}

/// The tank game's motion and quantisation of a whole set, for the
/// library's delta snapshots.
pub mod delta {
    pub use crate::quantised::{quantise_all, Motion};
}

/// The tank game's golden run.
pub mod determinism {
    pub use crate::golden::*;
}

/// The tank game: turn, throttle and fire in an arena with obstacles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tanks;

impl Game for Tanks {
    const NAME: &'static str = wire::GAME_NAME;
    const VERSION: u32 = wire::GAME_VERSION;
    type Config = SimConfig;
    type Input = MoveInput;
    type Own = PlayerState;
    type Local = Pose;

    fn cadence(config: &SimConfig) -> Duration {
        config.cadence()
    }

    fn sanitize(input: MoveInput) -> MoveInput {
        sanitize(input)
    }

    fn predict(local: Pose, input: &MoveInput, duration: Duration, config: &SimConfig) -> Pose {
        simulate(local, input, duration, config)
    }

    fn local(own: &PlayerState) -> Pose {
        own.pose()
    }
}

impl Replicated for PlayerState {
    type Event = CombatEvent;

    fn is_valid(&self) -> bool {
        self.is_finite()
    }

    fn alive(&self) -> bool {
        self.alive
    }

    /// A hit sets the target's HP; a kill marks it dead and still.
    fn apply(&mut self, event: &CombatEvent) {
        self.hp = event.hp;
        if event.killed {
            self.alive = false;
            self.velocity = None;
        }
    }
}

impl Applied for CombatEvent {
    type Key = (Tick, PlayerId, PlayerId);

    fn key(&self) -> Self::Key {
        (self.server_tick, self.attacker, self.target)
    }

    fn tick(&self) -> Tick {
        self.server_tick
    }

    fn target(&self) -> skirmish_core::Target {
        skirmish_core::Target::Player(self.target)
    }
}

/// A difference between two [`Pose`]s: a shift, and a rotation along the
/// shortest arc (kept in (-pi, pi]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PoseOffset {
    /// The position part.
    pub position: Vec2,
    /// The rotation part, in radians.
    pub rotation: f32,
}

impl Offset for PoseOffset {
    fn plus(&self, other: &PoseOffset) -> PoseOffset {
        PoseOffset {
            position: self.position + other.position,
            rotation: wrap_angle(self.rotation + other.rotation),
        }
    }

    fn negated(&self) -> PoseOffset {
        PoseOffset {
            position: -self.position,
            rotation: -self.rotation,
        }
    }

    fn scaled(&self, factor: f32) -> PoseOffset {
        PoseOffset {
            position: self.position * factor,
            rotation: self.rotation * factor,
        }
    }

    fn size(&self) -> Size {
        Size {
            distance: self.position.length(),
            angle: self.rotation.abs(),
        }
    }

    fn is_finite(&self) -> bool {
        self.position.is_finite() && self.rotation.is_finite()
    }
}

impl Visual for Pose {
    type Offset = PoseOffset;

    fn lerp(&self, to: &Pose, t: f32) -> Pose {
        Pose::lerp(self, to, t)
    }

    fn offset_to(&self, to: &Pose) -> PoseOffset {
        PoseOffset {
            position: to.position - self.position,
            rotation: angle_delta(self.rotation, to.rotation),
        }
    }

    fn shifted(&self, offset: &PoseOffset) -> Pose {
        Pose {
            position: self.position + offset.position,
            rotation: wrap_angle(self.rotation + offset.rotation),
        }
    }

    fn is_finite(&self) -> bool {
        Pose::is_finite(self)
    }

    fn place(&self) -> Vec2 {
        self.position
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::golden::{GOLDEN_SEED, GOLDEN_STEPS, GOLDEN_TRAJECTORY_HASH};
    use skirmish_core::{first_divergence, trace};

    #[test]
    fn the_tank_games_trace_ends_on_the_golden_hash() {
        let trace = trace::<Tanks>(GOLDEN_SEED, GOLDEN_STEPS);
        assert_eq!(trace.len(), GOLDEN_STEPS as usize);
        assert_eq!(trace.last().copied(), Some(GOLDEN_TRAJECTORY_HASH));
    }

    #[test]
    fn the_first_divergent_step_is_named() {
        let a = trace::<Tanks>(7, 50);
        let mut b = a.clone();
        assert_eq!(first_divergence(&a, &b), None);
        b[31] ^= 1;
        assert_eq!(first_divergence(&a, &b), Some(31));
        assert_eq!(first_divergence(&a, &a[..40]), Some(40));
        assert_ne!(trace::<Tanks>(8, 50), a, "the seed matters");
    }

    #[test]
    fn an_offset_taken_and_applied_lands_on_the_target_across_the_seam() {
        let from = Pose::new(Vec2::new(10.0, 20.0), 3.0);
        let to = Pose::new(Vec2::new(13.0, 16.0), -3.0);
        let offset = from.offset_to(&to);
        assert!(offset.rotation > 0.0, "the short way round, across pi");
        assert_eq!(offset.size().distance, 5.0);
        let landed = from.shifted(&offset);
        assert!(landed.position.distance(to.position) < 1e-5);
        assert!(angle_delta(landed.rotation, to.rotation).abs() < 1e-5);
        let back = offset.plus(&offset.negated());
        assert_eq!(back.size(), Size::default());
        assert_eq!(offset.scaled(0.5).position, Vec2::new(1.5, -2.0));
    }
}
