//! Death and respawn: whether a player is alive, what a kill does to it, and
//! the seeded-random spawn points it comes back at.
//!
//! A killing hit in tick `K` makes its target [`Life::Dead`] until server
//! tick `K + ceil(respawn_ms / tick_ms)`. At the end of that tick's step,
//! after its shots are resolved and before pose history is recorded, the
//! player respawns with full HP at a new spawn point. Dead players neither
//! move nor fire, and shots pass through them.

use std::collections::BTreeMap;

use glam::Vec2;

use super::world::Tank;
use super::Tanks;
use crate::config::SimConfig;
use crate::shots::CombatRules;
use crate::sim::{resolve_collisions, Pose};
use skirmish_core::PlayerId;
use skirmish_core::SeededRng;
use skirmish_core::ServerPlayer;
use skirmish_core::Tick;

/// Whether a player is in the game and since when, or dead and until when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Life {
    /// Moves, fires and can be hit.
    Alive {
        /// The tick whose step brought it in (joined or respawned): it is
        /// alive for the inputs of later ticks.
        since: Tick,
    },
    /// Killed; comes back in the step of server tick `respawn_at`.
    Dead {
        /// The server tick whose step respawns the player.
        respawn_at: Tick,
    },
}

impl Life {
    /// Whether this is [`Life::Alive`].
    pub(super) fn is_alive(self) -> bool {
        matches!(self, Life::Alive { .. })
    }

    /// Whether a dead player is due to respawn in the step of `tick`.
    fn respawn_due(self, tick: Tick) -> bool {
        match self {
            Life::Alive { .. } => false,
            Life::Dead { respawn_at } => respawn_at <= tick,
        }
    }
}

impl Tank {
    /// The tick after which the player has been alive without a break;
    /// `None` while dead.
    pub(super) fn alive_since(&self) -> Option<Tick> {
        match self.life {
            Life::Alive { since } => Some(since),
            Life::Dead { .. } => None,
        }
    }

    /// Brings the player back in the step of `tick` at `pose` with
    /// `max_hp`, standing still and with no pose history to be rewound
    /// into.
    fn respawn(&mut self, tick: Tick, pose: Pose, max_hp: u16) {
        self.pose = pose;
        self.hp = max_hp;
        self.life = Life::Alive { since: tick };
        self.velocity = Vec2::ZERO;
        self.history.clear();
    }
}

/// Kills the player: dead until `respawn_at`, its queued inputs dropped
/// and its velocity zeroed. Its HP is already 0.
pub(super) fn kill(player: &mut ServerPlayer<Tanks>, respawn_at: Tick) {
    player.drop_queued();
    player.state.life = Life::Dead { respawn_at };
    player.state.velocity = Vec2::ZERO;
}

/// The server tick in whose step a player killed in `tick` respawns.
pub(super) fn respawn_tick(tick: Tick, sim: &SimConfig, rules: &CombatRules) -> Tick {
    tick.saturating_add(sim.ticks_of(rules.respawn_ms))
}

/// A seeded-random point inside the arena, out of obstacles and away
/// from living players if one can be found.
pub(super) fn spawn_point(
    sim: &SimConfig,
    players: &BTreeMap<PlayerId, ServerPlayer<Tanks>>,
    rng: &mut SeededRng,
) -> Pose {
    let r = sim.player_radius;
    let margin = 2.0 * r;
    let mut candidate = Pose::default();
    for _ in 0..64 {
        let x = rng.range_f32(margin, (sim.arena.x - margin).max(margin));
        let y = rng.range_f32(margin, (sim.arena.y - margin).max(margin));
        let rotation = rng.range_f32(-std::f32::consts::PI, std::f32::consts::PI);
        let position = resolve_collisions(Vec2::new(x, y), sim);
        candidate = Pose::new(position, rotation);
        let clear_of_obstacles = position == Vec2::new(x, y);
        let clear_of_players = players
            .values()
            .filter(|p| p.state.life.is_alive())
            .all(|p| p.state.pose.position.distance(position) > 3.0 * r);
        if clear_of_obstacles && clear_of_players {
            break;
        }
    }
    candidate
}

/// Respawns, in id order, every dead player whose time has come; each
/// draws its spawn point after the ones before it are back.
pub(super) fn respawn_due(
    tick: Tick,
    sim: &SimConfig,
    rules: &CombatRules,
    players: &mut BTreeMap<PlayerId, ServerPlayer<Tanks>>,
    rng: &mut SeededRng,
) {
    let due: Vec<PlayerId> = players
        .iter()
        .filter(|(_, p)| p.state.life.respawn_due(tick))
        .map(|(&id, _)| id)
        .collect();
    for id in due {
        let pose = spawn_point(sim, players, rng);
        if let Some(p) = players.get_mut(&id) {
            p.state.respawn(tick, pose, rules.max_hp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::tests::{at, fire, input, shooter_and_target};

    #[test]
    fn death_and_respawn() {
        let mut w = shooter_and_target(at(600.0, 600.0, 0.0));
        let mut tick = 0;
        let mut killed_at = None;
        while killed_at.is_none() {
            tick += 1;
            w.receive(PlayerId(1), &[fire(tick, None)]);
            if w.step().iter().any(|e| e.killed) {
                killed_at = Some(w.tick());
            }
            assert!(tick < 100);
        }
        let target = w.player(PlayerId(2)).unwrap();
        assert!(!target.state.life.is_alive());
        assert_eq!(target.state.hp, 0);
        // Dead: inputs are acknowledged but do not move.
        let dead_pose = target.state.pose;
        w.receive(PlayerId(2), &[input(1, 1.0)]);
        w.step();
        let target = w.player(PlayerId(2)).unwrap();
        assert_eq!(target.ack(), Some(Tick(1)));
        assert_eq!(target.state.pose, dead_pose);
        // 3 s = 60 ticks after the kill, alive again with full HP.
        while w.tick() < killed_at.unwrap().saturating_add(59) {
            w.step();
            assert!(!w.player(PlayerId(2)).unwrap().state.life.is_alive());
        }
        w.step();
        let target = w.player(PlayerId(2)).unwrap();
        assert!(target.state.life.is_alive());
        assert_eq!(target.state.hp, 100);
    }

    #[test]
    fn respawn_is_due_from_its_tick_on() {
        let dead = Life::Dead {
            respawn_at: Tick(60),
        };
        assert!(!dead.is_alive());
        assert!(!dead.respawn_due(Tick(59)));
        assert!(dead.respawn_due(Tick(60)));
        assert!(dead.respawn_due(Tick(61)));
        let alive = Life::Alive { since: Tick(60) };
        assert!(alive.is_alive());
        assert!(!alive.respawn_due(Tick(u32::MAX)));
    }
}
