//! A tank's authoritative state, as the server sends it.

use glam::Vec2;
use serde::{Deserialize, Serialize};

use crate::sim::Pose;
use skirmish_core::PlayerId;
use skirmish_core::Tick;

/// One player's authoritative state at one server tick.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlayerState {
    /// Whose state this is.
    pub id: PlayerId,
    /// The server tick this state belongs to.
    pub tick: Tick,
    /// The newest of this player's input ticks the server has applied, if any.
    pub ack_move_tick: Option<Tick>,
    /// Centre of the player's circle.
    pub position: Vec2,
    /// Heading in radians.
    pub rotation: f32,
    /// Hit points, 0 when dead.
    pub hp: u16,
    /// Whether the player is alive.
    #[serde(default = "alive_default")]
    pub alive: bool,
    /// Velocity over the last tick, in units per second, when the server sends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<Vec2>,
}

fn alive_default() -> bool {
    true
}

impl PlayerState {
    /// A living player 0 with full health at `pose`, with no velocity.
    pub fn at(tick: Tick, ack_move_tick: Option<Tick>, pose: Pose) -> PlayerState {
        PlayerState {
            id: PlayerId::default(),
            tick,
            ack_move_tick,
            position: pose.position,
            rotation: pose.rotation,
            hp: 100,
            alive: true,
            velocity: None,
        }
    }

    /// The authoritative pose.
    pub fn pose(&self) -> Pose {
        Pose::new(self.position, self.rotation)
    }

    /// Whether every number is finite, as a state from the network must be.
    pub fn is_finite(&self) -> bool {
        self.position.is_finite()
            && self.rotation.is_finite()
            && self.velocity.is_none_or(Vec2::is_finite)
    }
}
