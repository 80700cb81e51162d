//! The tank game on the client: the controls the page holds (turn,
//! throttle, fire latched until a step uses it), the own shots shown at
//! once with the server's cooldown and path, the tracers of every hit, and
//! what the own player's hits and hurts mean to its shell.

use std::time::Duration;

use super::tracers::{Tracer, Tracers};
use super::{CombatEvent, PoseOffset, TankSetup, Tanks};
use crate::input::MoveInput;
use crate::shots::{ray_circle, shot_path, Cooldown};
use crate::sim::Pose;
use crate::state::PlayerState;
use skirmish_core::Codec;
use skirmish_core::PlayerId;
use skirmish_core::RemoteSample;
use skirmish_core::StateHash;
use skirmish_core::Tick;
use skirmish_core::{ClientGame, Stepped};

/// The controls held right now. A `fire` seen by
/// [`ClientSession::set_controls`](skirmish_core::ClientSession::set_controls)
/// is latched until the next fixed step uses it, so a tap shorter than a
/// step still fires once.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Controls {
    /// Turn, -1 to 1.
    pub turn: f32,
    /// Throttle, -1 to 1.
    pub throttle: f32,
    /// Fire held (or tapped since the last call).
    pub fire: bool,
}

/// As the flight recorder keeps it, as serde describes it: f32 turn, f32
/// throttle, fire as 0 or 1.
impl Codec for Controls {}

/// As the flight recorder keeps the own predicted pose, as serde describes
/// it: f32 x, y, rotation.
impl Codec for Pose {}

/// The own shots, as the page counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShotStats {
    /// Own shots that left (drawn as the own tracer).
    pub shots: u64,
    /// Own shots whose line passed through a living remote where the page
    /// drew it when the shot left: what the player saw as a hit.
    pub shots_on_target: u64,
    /// Hits of the own shots the server confirmed.
    pub hits: u64,
}

/// What the tank game keeps on the client.
#[derive(Clone, Debug, Default)]
pub struct TankClient {
    fire_latched: bool,
    cooldown: Cooldown,
    tracers: Tracers,
    stats: ShotStats,
}

impl TankClient {
    /// The own shots so far.
    pub fn stats(&self) -> &ShotStats {
        &self.stats
    }
}

/// What a combat event means to the own player.
#[derive(Clone, Debug, PartialEq)]
pub enum TankNote {
    /// The server confirmed a hit of the own player's shot.
    HitConfirmed(CombatEvent),
    /// The own player was hit.
    Hurt(CombatEvent),
}

/// What the page tells of its tank ([`TankNote`]) and draws beside the
/// tanks: shots' tracers.
impl skirmish_core::ClientState for TankClient {
    type Note = TankNote;
    type Effects = Vec<Tracer>;
}

impl ClientGame for Tanks {
    type Controls = Controls;
    type Client = TankClient;

    fn check_setup(setup: &TankSetup) -> Result<(), String> {
        setup
            .config
            .validate()
            .map_err(|e| format!("unusable config: {e}"))?;
        if !setup.combat.unwrap_or_default().is_valid() {
            return Err("unusable combat rules".to_string());
        }
        Ok(())
    }

    fn latch(client: &mut TankClient, controls: &Controls) -> bool {
        client.fire_latched |= controls.fire;
        // A held fire latches again, so it is recorded even when unchanged.
        controls.fire
    }

    fn input(client: &mut TankClient, controls: &Controls, alive: bool, tick: Tick) -> MoveInput {
        let controls = if alive {
            *controls
        } else {
            Controls::default()
        };
        let fire = alive && (controls.fire || client.fire_latched);
        client.fire_latched = false;
        MoveInput {
            tick,
            turn: controls.turn,
            throttle: controls.throttle,
            fire,
        }
    }

    /// The own shot shows at once, like the movement: the same path and
    /// cooldown the server will use (hits come back as events). In
    /// protocol 2 the cooldown runs in the very ticks the server judges.
    fn stepped(client: &mut TankClient, step: &Stepped<'_, Tanks>) -> bool {
        let (sim, rules) = (&step.setup.config, step.setup.combat.unwrap_or_default());
        if !(step.input.fire && client.cooldown.fire(step.tick, rules.cooldown_ticks(sim))) {
            return false;
        }
        client.stats.shots += 1;
        let pose = step.predicted;
        let (dir, reach) = shot_path(sim, pose, rules.range);
        client
            .tracers
            .push(pose.position, pose.position + dir * reach, step.now);
        let on_target = step.drawn().iter().any(|(_, drawn)| {
            ray_circle(pose.position, dir, drawn.position, sim.player_radius)
                .is_some_and(|t| t <= reach)
        });
        if on_target {
            client.stats.shots_on_target += 1;
        }
        true
    }

    fn event(
        client: &mut TankClient,
        event: &CombatEvent,
        me: PlayerId,
        at: Duration,
    ) -> Option<TankNote> {
        client.tracers.push(event.from, event.to, at);
        if event.attacker == me {
            client.stats.hits += 1;
            Some(TankNote::HitConfirmed(*event))
        } else if event.target == me {
            Some(TankNote::Hurt(*event))
        } else {
            None
        }
    }

    fn sample(state: &PlayerState) -> RemoteSample<Pose> {
        RemoteSample {
            tick: state.tick,
            visual: state.pose(),
            velocity: PoseOffset {
                position: state.velocity.unwrap_or_default(),
                rotation: 0.0,
            },
            alive: state.alive,
        }
    }

    fn prune(client: &mut TankClient, now: Duration) {
        client.tracers.prune(now);
    }

    fn effects(client: &TankClient, now: Duration) -> Vec<Tracer> {
        client.tracers.at(now)
    }

    fn forget(client: &mut TankClient, connection_lost: bool) {
        client.cooldown = Cooldown::default();
        if connection_lost {
            client.tracers.clear();
        }
    }

    fn hash_visual(pose: &Pose, h: &mut StateHash) {
        h.f32(pose.position.x);
        h.f32(pose.position.y);
        h.f32(pose.rotation);
    }

    fn hash_state(state: &PlayerState, alive: bool) -> u64 {
        u64::from(state.hp) | u64::from(alive) << 16
    }

    /// Field by field (no `Debug` formatting: the page carries no
    /// formatter for it).
    fn hash_note(note: &TankNote, h: &mut StateHash) {
        let (tag, c) = match note {
            TankNote::HitConfirmed(c) => (5, c),
            TankNote::Hurt(c) => (6, c),
        };
        h.word(tag);
        h.word(u64::from(c.server_tick.0));
        h.word(u64::from(c.attacker.0) << 32 | u64::from(c.target.0));
        h.word(u64::from(c.damage) | u64::from(c.hp) << 16 | u64::from(c.killed) << 32);
        for v in [c.from.x, c.from.y, c.to.x, c.to.y] {
            h.f32(v);
        }
    }

    fn hash_effects(tracers: &Vec<Tracer>, h: &mut StateHash) {
        h.word(tracers.len() as u64);
    }
}
