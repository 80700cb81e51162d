//! The tank game on the server: what a tank is, and one tick of the arena.
//!
//! Each step, in this order (the inputs' timing is the library's, see
//! `crate::server::world`):
//! 1. **Inputs.** Each player's commands, in id order: an input moves a
//!    living tank exactly one cadence through [`simulate`], the same code
//!    the client predicts with, and fires if it fires; a late input's shot
//!    fires after this tick's move, before its own shot (see `schedule`).
//!    Dead players' inputs are acknowledged but not applied.
//! 2. **Overlap.** Players closer than two radii are pushed apart, half each,
//!    pairwise in id order, then kept out of obstacles and inside the arena.
//!    This is the natural source of mispredictions clients reconcile.
//! 3. **Shots.** Each shot is a hitscan ray from the shooter's pose after
//!    its move, if its cooldown allows. Targets are tested where the
//!    shooter saw them (lag compensation, RS-10): at the input's
//!    `view_tick`, interpolated in each player's pose history, at most
//!    [`CombatRules::max_rewind_ms`] back, and for a protocol-2 shooter
//!    whose round trip the server measured no older than its input's
//!    arrival minus that round trip,
//!    [`MAX_VIEW_DELAY_MS`](skirmish_core::timing::MAX_VIEW_DELAY_MS) and
//!    [`REWIND_MARGIN_TICKS`](skirmish_core::REWIND_MARGIN_TICKS).
//!    A view beyond a bound is judged at it and counted. Obstacles stop
//!    rays. Each hit is one [`CombatEvent`]. See `combat`.
//! 4. **Death and respawn.** A player at 0 HP is dead for
//!    [`CombatRules::respawn_ms`] (no moving, no firing), then respawns at a
//!    seeded-random free spawn point with full HP. See `life`.
//! 5. **History.** Each player's pose is recorded for lag compensation
//!    ([`CombatRules::history_ms`]) and its velocity over the tick is kept.

use std::collections::{BTreeMap, VecDeque};

use glam::Vec2;

use super::combat::{self, Shot};
use super::life::{self, Life};
use super::Tanks;
use serde::{Deserialize, Serialize};
use skirmish_core::{Command, ServerGame, ServerPlayer, Step, World, WorldStats};

use crate::config::SimConfig;
use crate::shots::{CombatRules, Cooldown};
use crate::sim::{resolve_collisions, simulate, Pose};
use crate::state::PlayerState;
use crate::{CombatEvent, TankSetup};
use skirmish_core::PlayerId;
use skirmish_core::Spawn;
use skirmish_core::Tick;

/// A tank as its player gets it: where, how, how well, moving how.
impl skirmish_core::IntoOwn<PlayerState> for Tank {
    fn own(&self, id: PlayerId, stamp: skirmish_core::Stamp) -> PlayerState {
        PlayerState {
            id,
            tick: stamp.tick,
            ack_move_tick: stamp.ack,
            position: self.pose.position,
            rotation: self.pose.rotation,
            hp: self.hp,
            alive: self.life.is_alive(),
            velocity: Some(self.velocity),
        }
    }
}

/// A tank as the server keeps it.
#[derive(Clone, Debug)]
pub struct Tank {
    pub(super) pose: Pose,
    pub(super) velocity: Vec2,
    pub(super) hp: u16,
    pub(super) life: Life,
    pub(super) cooldown: Cooldown,
    pub(super) history: VecDeque<(Tick, Pose)>,
}

impl Tank {
    /// The current pose.
    pub fn pose(&self) -> Pose {
        self.pose
    }

    /// Hit points.
    pub fn hp(&self) -> u16 {
        self.hp
    }

    /// Whether the tank is alive.
    pub fn is_alive(&self) -> bool {
        self.life.is_alive()
    }
}

/// The arena beyond its tanks: the rules of combat.
#[derive(Clone, Debug, Default)]
pub struct Arena {
    /// The rules of combat.
    pub rules: CombatRules,
}

/// How a room of tanks is set up: the movement constants and the rules
/// of combat (in a room recording's header as `sim` and `rules`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TankSettings {
    /// The movement constants, sent in `welcome`.
    pub sim: SimConfig,
    /// The rules of combat.
    pub rules: CombatRules,
}

/// The largest arena side a room may have.
const LARGEST_ARENA: f32 = 1_000_000.0;
/// The longest pose history a room may keep, in ticks.
const MOST_HISTORY_TICKS: u32 = 1200;

impl ServerGame for Tanks {
    type Player = Tank;
    type World = Arena;
    type Settings = TankSettings;

    fn start(settings: &TankSettings) -> (SimConfig, Arena) {
        (
            settings.sim.clone(),
            Arena {
                rules: settings.rules,
            },
        )
    }

    fn check(settings: &TankSettings) -> Result<(), String> {
        let TankSettings { sim, rules } = settings;
        sim.validate()
            .map_err(|e| format!("the movement constants: {e}"))?;
        if sim.arena.max_element() > LARGEST_ARENA {
            return Err(format!(
                "an arena of {} (must be at most {LARGEST_ARENA} units a side)",
                sim.arena
            ));
        }
        if !rules.is_valid() {
            return Err(format!(
                "a shot range of {} (must be finite and not negative)",
                rules.range
            ));
        }
        let poses = rules.history_ms / sim.tick_ms;
        if poses > MOST_HISTORY_TICKS {
            return Err(format!(
                "a pose history of {} ms ({poses} ticks) (must be at most {MOST_HISTORY_TICKS} ticks)",
                rules.history_ms
            ));
        }
        Ok(())
    }

    fn setup(world: &Arena, sim: &SimConfig) -> TankSetup {
        TankSetup {
            config: sim.clone(),
            combat: Some(world.rules),
        }
    }

    fn speed(own: &PlayerState, sim: &SimConfig) -> f32 {
        let v = own.velocity.unwrap_or_default().length();
        (v / sim.speed.max(1e-6)).min(1.0)
    }

    fn extent(sim: &SimConfig) -> Vec2 {
        sim.arena
    }

    fn partners(hit: &CombatEvent) -> Option<(PlayerId, PlayerId)> {
        Some((hit.attacker, hit.target))
    }

    fn spawn(at: Spawn<'_, Tanks>) -> Tank {
        Tank {
            pose: life::spawn_point(at.config, at.players, at.rng),
            velocity: Vec2::ZERO,
            hp: at.world.rules.max_hp,
            life: Life::Alive { since: at.tick },
            cooldown: Cooldown::default(),
            history: VecDeque::with_capacity(combat::history_len(at.config, &at.world.rules)),
        }
    }

    fn step(step: Step<'_, Tanks>) {
        let Step {
            tick,
            config: sim,
            world,
            players,
            rng,
            events,
            stats,
        } = step;
        let mut shots = Vec::new();
        for (&id, player) in players.iter_mut() {
            apply(id, player, sim, stats, &mut shots);
        }
        separate_players(players, sim, stats);
        for shot in &shots {
            combat::resolve_shot(shot, tick, sim, &world.rules, players, stats, events);
        }
        life::respawn_due(tick, sim, &world.rules, players, rng);
        combat::record_history(tick, sim, &world.rules, players);
    }
}

/// Applies one player's commands (see `crate::server::world`): each input
/// moves a living tank one cadence and fires if it fires; a late input's
/// shot fires after the move, before this tick's own shot, if the tank has
/// been alive since the tick it named.
fn apply(
    id: PlayerId,
    player: &mut ServerPlayer<Tanks>,
    sim: &SimConfig,
    stats: &mut WorldStats,
    shots: &mut Vec<Shot>,
) {
    let (commands, tank) = player.commands_and_state();
    let before = tank.pose.position;
    let own_shot = shots.len();
    for command in commands {
        match *command {
            Command::Apply { input, oldest_view } => {
                if !tank.life.is_alive() {
                    continue;
                }
                tank.pose = simulate(tank.pose, &input.move_input(), sim.cadence(), sim);
                if input.fire {
                    stats.view_actions += 1;
                    shots.push(Shot {
                        attacker: id,
                        from: tank.pose,
                        view_tick: input.view_tick,
                        oldest_view,
                        late: None,
                    });
                }
            }
            Command::Late {
                tick,
                view_tick,
                oldest_view,
            } => {
                if tank.alive_since().is_some_and(|s| s < tick) {
                    stats.view_actions += 1;
                    shots.insert(
                        own_shot,
                        Shot {
                            attacker: id,
                            from: tank.pose,
                            view_tick,
                            oldest_view,
                            late: Some(tick),
                        },
                    );
                }
            }
        }
    }
    // The velocity over this tick, from where the tank was before its
    // inputs (zero while dead).
    tank.velocity = if tank.life.is_alive() {
        (tank.pose.position - before) / sim.cadence_secs()
    } else {
        Vec2::ZERO
    };
}

/// Pushes overlapping living players apart, half each, pairwise in id
/// order.
fn separate_players(
    players: &mut BTreeMap<PlayerId, ServerPlayer<Tanks>>,
    sim: &SimConfig,
    stats: &mut WorldStats,
) {
    let min = 2.0 * sim.player_radius;
    // Positions in id order, so the pairwise pass is a plain slice walk.
    let mut alive: Vec<(PlayerId, Vec2)> = players
        .iter()
        .filter(|(_, p)| p.state.life.is_alive())
        .map(|(&id, p)| (id, p.state.pose.position))
        .collect();
    let mut moved = false;
    for i in 0..alive.len() {
        for j in i + 1..alive.len() {
            let (pa, pb) = (alive[i].1, alive[j].1);
            let d = pb - pa;
            let dist2 = d.length_squared();
            if dist2 >= min * min {
                continue;
            }
            let dist = dist2.sqrt();
            // Coincident centres part along +x, the same on every target.
            let dir = if dist > 0.0 { d / dist } else { Vec2::X };
            let push = dir * ((min - dist) * 0.5);
            alive[i].1 = resolve_collisions(pa - push, sim);
            alive[j].1 = resolve_collisions(pb + push, sim);
            moved = true;
            stats.pushes += 1;
        }
    }
    if moved {
        for (id, position) in alive {
            if let Some(p) = players.get_mut(&id) {
                p.state.pose.position = position;
            }
        }
    }
}

/// Puts player `id` at `pose` at once (scripted spawns, scenario set-up,
/// tests), pushed back inside the arena and out of obstacles, and forgets
/// its pose history; `false` if there is no such player or the pose is
/// not finite.
pub fn teleport(world: &mut World<Tanks>, id: PlayerId, pose: Pose) -> bool {
    let sim = world.config().clone();
    let Some(p) = world.player_mut(id).filter(|_| pose.is_finite()) else {
        return false;
    };
    p.state.pose = Pose::new(resolve_collisions(pose.position, &sim), pose.rotation);
    p.state.history.clear();
    true
}

#[cfg(test)]
pub(crate) mod tests {
    //! Helpers shared by the tests of the tank world and its submodules,
    //! and the tests of what stays here (overlap).

    use super::*;
    use crate::wire::WireInput;
    use skirmish_core::InputMode;

    pub(crate) fn open() -> SimConfig {
        SimConfig {
            obstacles: Vec::new(),
            ..SimConfig::default()
        }
    }

    pub(crate) fn input(tick: u32, throttle: f32) -> WireInput {
        WireInput {
            tick: Tick(tick),
            turn: 0.0,
            throttle,
            fire: false,
            view_tick: None,
        }
    }

    pub(crate) fn fire(tick: u32, view_tick: Option<f64>) -> WireInput {
        WireInput {
            fire: true,
            view_tick,
            ..input(tick, 0.0)
        }
    }

    /// Puts a player at `pose` and forgets its pose history.
    pub(crate) fn place(w: &mut World<Tanks>, id: PlayerId, pose: Pose) {
        assert!(teleport(w, id, pose));
    }

    pub(crate) fn at(x: f32, y: f32, rotation: f32) -> Pose {
        Pose::new(Vec2::new(x, y), rotation)
    }

    /// Kills player `id` at once, dead until `respawn_at`.
    pub(crate) fn kill(w: &mut World<Tanks>, id: PlayerId, respawn_at: Tick) {
        let player = w.player_mut(id).expect("a player");
        player.state.hp = 0;
        life::kill(player, respawn_at);
    }

    /// Player 1 at (200, 600) facing +x, player 2 at `target`.
    pub(crate) fn shooter_and_target(target: Pose) -> World<Tanks> {
        let mut w = World::of(open(), Arena::default(), 3);
        w.join_with(PlayerId(1), "shooter", InputMode::Queued)
            .unwrap();
        w.join_with(PlayerId(2), "target", InputMode::Queued)
            .unwrap();
        place(&mut w, PlayerId(1), at(200.0, 600.0, 0.0));
        place(&mut w, PlayerId(2), target);
        w
    }

    #[test]
    fn overlapping_players_are_pushed_apart() {
        let mut w = World::of(open(), Arena::default(), 1);
        w.join_with(PlayerId(1), "a", InputMode::Queued).unwrap();
        w.join_with(PlayerId(2), "b", InputMode::Queued).unwrap();
        place(&mut w, PlayerId(1), at(500.0, 600.0, 0.0));
        place(&mut w, PlayerId(2), at(520.0, 600.0, 0.0));
        w.step();
        let a = w.player(PlayerId(1)).unwrap().state.pose.position;
        let b = w.player(PlayerId(2)).unwrap().state.pose.position;
        assert_eq!((a, b), (Vec2::new(490.0, 600.0), Vec2::new(530.0, 600.0)));
        assert_eq!(w.stats().pushes, 1, "counted");
        w.step();
        assert_eq!(w.stats().pushes, 1, "apart now: no more");
    }
}

#[cfg(test)]
mod queue_tests;
#[cfg(test)]
mod schedule_tests;
