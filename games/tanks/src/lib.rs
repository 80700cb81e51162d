//! The tank game, Skirmish's first game: turn, throttle and fire in an
//! arena with obstacles. It implements the library's contract
//! ([`Game`], [`Networked`], [`ServerGame`], [`ClientGame`], [`Harness`])
//! over its movement step ([`simulate`]), its constants ([`SimConfig`]),
//! its controls ([`MoveInput`]) and a player's state ([`PlayerState`]),
//! with a [`Pose`] as what is predicted and drawn, using only the
//! library's public API.
//!
//! The crate also shows the whole library as the tank game sees it: every
//! item of `skirmish_core` is here, and its generic types take the tank
//! game unless told (`Room` is `Room<Tanks>`, `ClientSession` is
//! `ClientSession<Tanks>`, ...), so the server, the page, the bots and
//! the tests of the tank game name one crate.

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

pub use skirmish_core::*;

pub use client::{tank_player, TankAuthority, TankPrediction, TankRemote};
pub use config::{ConfigError, Rect, SimConfig, MAX_OBSTACLES};
pub use input::{move_step, MoveInput, PredictedMoveStep};
pub use shots::{shot_path, CombatRules, Cooldown};
pub use sim::{angle_delta, replay, sanitize, simulate, substep, substeps, wrap_angle, Pose};
pub use state::PlayerState;

pub use recordings::{open_client, open_room, replay_client, replay_room, replay_room_for};
pub use session::{Controls, ShotStats, TankClient, TankNote, TankSession};
pub use tracers::{Tracer, TRACER_LIFE};
pub use wire::{CombatEvent, TankSetup, WireInput, GAME_NAME, GAME_VERSION};
pub use world::{teleport, Arena, Tank, TankPlayer, TankSettings, TankWorld};

use std::time::Duration;

// The library's generic types take the tank game unless told (`Room<G>`
// for game `G`).

/// A message the server sends, of the tank game unless told.
pub type ServerMessage<G = Tanks> = skirmish_core::ServerMessage<G>;
/// The visual correction of the own player, of the tank game's offset
/// unless told.
pub type Correction<O = PoseOffset> = skirmish_core::Correction<O>;
/// The client's owned states, of the tank game's players unless told.
pub type Authority<S = PlayerState> = skirmish_core::Authority<S>;
/// A remote player's samples, drawn as the tank game's poses unless told.
pub type RemoteBuffer<V = Pose> = skirmish_core::RemoteBuffer<V>;
/// The controlled player's prediction, of the tank game unless told.
pub type LocalPlayer<G = Tanks> = skirmish_core::LocalPlayer<G>;
/// A room, of the tank game unless told.
pub type Room<G = Tanks> = skirmish_core::Room<G>;
/// How a room is set up, of the tank game unless told.
pub type RoomConfig<G = Tanks> = skirmish_core::RoomConfig<G>;
/// A room's authoritative world, of the tank game unless told.
pub type World<G = Tanks> = skirmish_core::World<G>;
/// A player in a world, of the tank game unless told.
pub type ServerPlayer<G = Tanks> = skirmish_core::ServerPlayer<G>;
/// One call into a room as recorded, of the tank game unless told.
pub type RoomCall<W = WireInput> = skirmish_core::RoomCall<W>;
/// A message a client sends, with the tank game's inputs unless told.
pub type ClientMessage<W = WireInput> = skirmish_core::ClientMessage<W>;
/// The platform-free client, of the tank game unless told.
pub type ClientSession<G = Tanks> = skirmish_core::ClientSession<G>;
/// What a session draws this frame, of the tank game unless told.
pub type View<G = Tanks> = skirmish_core::View<G>;
/// The own player as drawn, of the tank game unless told.
pub type OwnView<G = Tanks> = skirmish_core::OwnView<G>;
/// Another player as drawn, of the tank game unless told.
pub type RemoteView<G = Tanks> = skirmish_core::RemoteView<G>;
/// What happened in a session, with the tank game's notes unless told.
pub type SessionEvent<N = TankNote> = skirmish_core::SessionEvent<N>;
/// A page's flight recorder, of the tank game unless told.
pub type ClientRecorder<G = Tanks> = skirmish_core::ClientRecorder<G>;
/// The calls of a page's recording, of the tank game unless told.
pub type Calls<'a, G = Tanks> = skirmish_core::Calls<'a, G>;
/// One call into a session as recorded, of the tank game's controls and
/// poses unless told.
pub type Call<'a, C = Controls, V = Pose> = skirmish_core::Call<'a, C, V>;
/// Where a client replay stopped matching, of the tank's poses unless told.
pub type Divergence<V = Pose> = skirmish_core::Divergence<V>;
/// Why a client replay failed, of the tank's poses unless told.
pub type ReplayError<V = Pose> = skirmish_core::ReplayError<V>;

/// The tank game's calls on the library's types, to bring into scope with
/// `use skirmish_tanks::prelude::*`.
pub mod prelude {
    pub use crate::{
        TankAuthority, TankPlayer, TankPrediction, TankRemote, TankSession, TankWorld,
    };
}

/// The compact snapshot encoding: the library's frames, with the tank
/// game's quantised state and its whole-frame helpers.
pub mod compact {
    pub use crate::quantised::{
        decode, decode_quantised, encode, encode_tail, Quantised, ENTRY_BYTES, HEAD_BYTES,
    };
    use crate::PlayerState;
    pub use skirmish_core::compact::*;

    /// A binary snapshot as read, of the tank game unless told.
    pub type QuantisedFrame<F = Quantised, O = PlayerState> =
        skirmish_core::compact::QuantisedFrame<F, O>;
    /// An own echo as read, of the tank game unless told.
    pub type OwnEcho<O = PlayerState> = skirmish_core::compact::OwnEcho<O>;
}

/// Delta snapshots: the library's, with the tank game's motion and
/// quantisation of a whole set.
pub mod delta {
    pub use crate::quantised::{quantise_all, Motion};
    pub use skirmish_core::delta::*;

    /// One entity of a frame's set, a tank unless told.
    pub type Entity<F = crate::compact::Quantised> = skirmish_core::delta::Entity<F>;
}

/// What the determinism checks share, and the tank game's golden run.
pub mod determinism {
    pub use crate::golden::*;
    pub use skirmish_core::determinism::*;
}

/// The messages between client and server, with the tank game's input
/// and identity.
pub mod protocol {
    pub use crate::{WireInput, GAME_NAME, GAME_VERSION};
    pub use skirmish_core::protocol::*;
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

    fn target(&self) -> Option<PlayerId> {
        Some(self.target)
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
