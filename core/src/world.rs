//! The authoritative world: what the server steps every tick.
//!
//! Pure and seeded: the server only drives it (join, leave, receive inputs,
//! step, read snapshots). Each [`World::step`], in this order:
//! 1. **Inputs.** For each player in id order, apply the next queued input
//!    after its acknowledged tick: exactly one cadence of that input through
//!    [`simulate`], the same code the client predicts with. Duplicates (tick
//!    `<=` ack) are ignored on receipt. A missing tick is waited for at most
//!    [`GAP_WAIT_TICKS`] server ticks, then skipped. With nothing queued the
//!    player stands still and the ack does not move. With more than
//!    [`CATCH_UP_ABOVE`] inputs queued, two are applied per tick until that
//!    many remain; never more than [`MAX_INPUTS_PER_TICK`], so no client moves
//!    faster than twice the speed, however it sends (speed-hack bound). A
//!    queue holds at most [`MAX_QUEUED_INPUTS`]; extra inputs are dropped and
//!    counted. Dead players' inputs are acknowledged but not applied.
//! 2. **Overlap.** Players closer than two radii are pushed apart, half each,
//!    pairwise in id order, then kept out of obstacles and inside the arena.
//!    This is the natural source of mispredictions clients reconcile.
//! 3. **Shots.** Each applied input with `fire` shoots a hitscan ray from the
//!    shooter's pose after that input's move, if its cooldown allows. Targets
//!    are tested where the shooter saw them (lag compensation, RS-10): at the
//!    input's `view_tick`, interpolated in each player's pose history, at most
//!    [`CombatRules::max_rewind_ms`] back. Obstacles stop rays. Each hit is
//!    one [`CombatEvent`].
//! 4. **Death and respawn.** A player at 0 HP is dead for
//!    [`CombatRules::respawn_ms`] (no moving, no firing), then respawns at a
//!    seeded-random free spawn point with full HP.
//! 5. **History.** Each player's pose is recorded for lag compensation
//!    ([`CombatRules::history_ms`]) and its velocity over the tick is kept.

use std::collections::{BTreeMap, VecDeque};

use glam::Vec2;

use crate::config::SimConfig;
use crate::protocol::{CombatEvent, PlayerId, WireInput};
use crate::rng::SeededRng;
use crate::sim::{resolve_collisions, simulate, Pose};
use crate::state::PlayerState;
use crate::tick::Tick;

/// Most inputs a player's queue holds; more are dropped and counted.
pub const MAX_QUEUED_INPUTS: usize = 32;
/// Above this many queued inputs, two are applied per tick.
pub const CATCH_UP_ABOVE: usize = 4;
/// Never more inputs than this are applied to one player in one tick.
pub const MAX_INPUTS_PER_TICK: usize = 2;
/// Server ticks a missing input tick is waited for before it is skipped.
pub const GAP_WAIT_TICKS: u32 = 2;

/// The rules of combat, with the defaults of protocol v1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CombatRules {
    /// Hit points of a fresh player.
    pub max_hp: u16,
    /// Damage of one hit.
    pub damage: u16,
    /// Range of a shot, in units.
    pub range: f32,
    /// Shortest time between two shots of one player.
    pub cooldown_ms: u32,
    /// Time dead before respawning.
    pub respawn_ms: u32,
    /// How far back a shooter's view is honoured.
    pub max_rewind_ms: u32,
    /// How much pose history each player keeps.
    pub history_ms: u32,
}

impl Default for CombatRules {
    fn default() -> Self {
        CombatRules {
            max_hp: 100,
            damage: 20,
            range: 800.0,
            cooldown_ms: 250,
            respawn_ms: 3000,
            max_rewind_ms: 250,
            history_ms: 1000,
        }
    }
}

/// Counters of what the world refused or skipped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorldStats {
    /// Inputs dropped because a queue was full.
    pub dropped_inputs: u64,
    /// Inputs ignored as already applied or already queued.
    pub duplicate_inputs: u64,
    /// Input ticks skipped after waiting for them.
    pub skipped_ticks: u64,
    /// Inputs applied.
    pub applied_inputs: u64,
}

/// What happened to one batch of received inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Received {
    /// Newly queued.
    pub queued: usize,
    /// Already applied or queued (normal: clients resend until acknowledged).
    pub duplicates: usize,
    /// Dropped because the queue was full.
    pub dropped: usize,
}

/// One player as the server keeps it.
#[derive(Clone, Debug)]
pub struct ServerPlayer {
    name: String,
    pose: Pose,
    velocity: Vec2,
    hp: u16,
    alive: bool,
    respawn_at: Option<Tick>,
    next_fire: Tick,
    ack: Option<Tick>,
    queue: VecDeque<WireInput>,
    waited: u32,
    history: VecDeque<(Tick, Pose)>,
}

impl ServerPlayer {
    /// The display name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The current pose.
    pub fn pose(&self) -> Pose {
        self.pose
    }

    /// Hit points.
    pub fn hp(&self) -> u16 {
        self.hp
    }

    /// Whether the player is alive.
    pub fn is_alive(&self) -> bool {
        self.alive
    }

    /// The newest input tick applied.
    pub fn ack(&self) -> Option<Tick> {
        self.ack
    }

    /// How many inputs wait in the queue.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// The pose at server tick `t` (with fraction), from the history,
    /// interpolated between recorded ticks; clamped to what is recorded.
    fn pose_at(&self, t: f64) -> Pose {
        let (Some(first), Some(last)) = (self.history.front(), self.history.back()) else {
            return self.pose;
        };
        if t <= f64::from(first.0 .0) {
            return first.1;
        }
        if t >= f64::from(last.0 .0) {
            return last.1;
        }
        let base = t.floor();
        let frac = (t - base) as f32;
        let base = Tick(base as u32);
        let i = self.history.partition_point(|(tick, _)| *tick <= base);
        match (self.history.get(i.wrapping_sub(1)), self.history.get(i)) {
            (Some(a), Some(b)) if b.0 == a.0.next() => a.1.lerp(&b.1, frac),
            (Some(a), _) => a.1,
            (None, _) => first.1,
        }
    }
}

/// A shot waiting to be resolved this tick.
struct Shot {
    attacker: PlayerId,
    from: Pose,
    view_tick: Option<f64>,
}

/// Why a player could not join.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JoinError {
    /// The id is already in this world.
    #[error("player {0} is already in the world")]
    Taken(PlayerId),
}

/// The authoritative state of one arena.
#[derive(Clone, Debug)]
pub struct World {
    sim: SimConfig,
    rules: CombatRules,
    tick: Tick,
    rng: SeededRng,
    players: BTreeMap<PlayerId, ServerPlayer>,
    events: Vec<CombatEvent>,
    stats: WorldStats,
}

impl World {
    /// An empty world at tick 0 with the default combat rules.
    pub fn new(sim: SimConfig, seed: u64) -> World {
        World::with_rules(sim, CombatRules::default(), seed)
    }

    /// An empty world with `rules`.
    pub fn with_rules(sim: SimConfig, rules: CombatRules, seed: u64) -> World {
        World {
            sim,
            rules,
            tick: Tick::ZERO,
            rng: SeededRng::new(seed),
            players: BTreeMap::new(),
            events: Vec::new(),
            stats: WorldStats::default(),
        }
    }

    /// The movement constants.
    pub fn sim_config(&self) -> &SimConfig {
        &self.sim
    }

    /// The combat rules.
    pub fn rules(&self) -> &CombatRules {
        &self.rules
    }

    /// The last server tick stepped (0 before the first step).
    pub fn tick(&self) -> Tick {
        self.tick
    }

    /// How many players are in the world.
    pub fn len(&self) -> usize {
        self.players.len()
    }

    /// Whether the world has no players.
    pub fn is_empty(&self) -> bool {
        self.players.is_empty()
    }

    /// The counters.
    pub fn stats(&self) -> &WorldStats {
        &self.stats
    }

    /// Every player, in id order.
    pub fn players(&self) -> impl Iterator<Item = (PlayerId, &ServerPlayer)> {
        self.players.iter().map(|(&id, p)| (id, p))
    }

    /// One player, if present.
    pub fn player(&self, id: PlayerId) -> Option<&ServerPlayer> {
        self.players.get(&id)
    }

    /// Adds a player at a free spawn point, alive with full HP.
    ///
    /// # Errors
    /// [`JoinError::Taken`] if `id` is already in the world.
    pub fn join(&mut self, id: PlayerId, name: &str) -> Result<PlayerState, JoinError> {
        if self.players.contains_key(&id) {
            return Err(JoinError::Taken(id));
        }
        let pose = self.spawn_point();
        self.players.insert(
            id,
            ServerPlayer {
                name: name.to_string(),
                pose,
                velocity: Vec2::ZERO,
                hp: self.rules.max_hp,
                alive: true,
                respawn_at: None,
                next_fire: Tick::ZERO,
                ack: None,
                queue: VecDeque::with_capacity(MAX_QUEUED_INPUTS),
                waited: 0,
                history: VecDeque::with_capacity(self.history_len()),
            },
        );
        Ok(self
            .state_of(id)
            .unwrap_or_else(|| PlayerState::at(self.tick, None, pose)))
    }

    /// Removes a player; `false` if it was not there.
    pub fn leave(&mut self, id: PlayerId) -> bool {
        self.players.remove(&id).is_some()
    }

    /// Queues received inputs for `id` (already checked by the protocol
    /// decoder; sanitized again when applied). Unknown players are ignored.
    pub fn receive(&mut self, id: PlayerId, inputs: &[WireInput]) -> Received {
        let mut out = Received::default();
        let Some(player) = self.players.get_mut(&id) else {
            return out;
        };
        for input in inputs {
            let applied = player.ack.is_some_and(|ack| input.tick <= ack);
            let at = player.queue.partition_point(|q| q.tick < input.tick);
            let queued = player.queue.get(at).is_some_and(|q| q.tick == input.tick);
            if applied || queued {
                out.duplicates += 1;
            } else if player.queue.len() >= MAX_QUEUED_INPUTS {
                out.dropped += 1;
            } else {
                player.queue.insert(at, *input);
                out.queued += 1;
            }
        }
        self.stats.duplicate_inputs += out.duplicates as u64;
        self.stats.dropped_inputs += out.dropped as u64;
        out
    }

    /// Advances the world by one tick; returns the hits of this tick.
    pub fn step(&mut self) -> &[CombatEvent] {
        self.tick = self.tick.next();
        self.events.clear();
        let mut shots = Vec::new();
        for (&id, player) in &mut self.players {
            apply_inputs(id, player, &self.sim, &mut self.stats, &mut shots);
        }
        self.separate_players();
        for shot in &shots {
            self.resolve_shot(shot);
        }
        self.respawn_due();
        self.record_history();
        &self.events
    }

    /// The hits of the last step.
    pub fn events(&self) -> &[CombatEvent] {
        &self.events
    }

    /// Every player's state at the current tick, in id order.
    pub fn snapshot(&self) -> Vec<PlayerState> {
        let mut out = Vec::with_capacity(self.players.len());
        self.snapshot_into(&mut out);
        out
    }

    /// Like [`World::snapshot`], into a reused buffer.
    pub fn snapshot_into(&self, out: &mut Vec<PlayerState>) {
        out.clear();
        out.extend(self.players.keys().filter_map(|&id| self.state_of(id)));
    }

    /// One player's state at the current tick.
    pub fn state_of(&self, id: PlayerId) -> Option<PlayerState> {
        self.players.get(&id).map(|p| PlayerState {
            id,
            tick: self.tick,
            ack_move_tick: p.ack,
            position: p.pose.position,
            rotation: p.pose.rotation,
            hp: p.hp,
            alive: p.alive,
            velocity: Some(p.velocity),
        })
    }

    fn history_len(&self) -> usize {
        (self.rules.history_ms / self.sim.tick_ms.max(1)).max(1) as usize + 1
    }

    fn ticks_of(&self, ms: u32) -> u32 {
        ms.div_ceil(self.sim.tick_ms.max(1))
    }

    /// A seeded-random point inside the arena, out of obstacles and away
    /// from living players if one can be found.
    fn spawn_point(&mut self) -> Pose {
        let r = self.sim.player_radius;
        let margin = 2.0 * r;
        let mut candidate = Pose::default();
        for _ in 0..64 {
            let x = self
                .rng
                .range_f32(margin, (self.sim.arena.x - margin).max(margin));
            let y = self
                .rng
                .range_f32(margin, (self.sim.arena.y - margin).max(margin));
            let rotation = self
                .rng
                .range_f32(-std::f32::consts::PI, std::f32::consts::PI);
            let position = resolve_collisions(Vec2::new(x, y), &self.sim);
            candidate = Pose::new(position, rotation);
            let clear_of_obstacles = position == Vec2::new(x, y);
            let clear_of_players = self
                .players
                .values()
                .filter(|p| p.alive)
                .all(|p| p.pose.position.distance(position) > 3.0 * r);
            if clear_of_obstacles && clear_of_players {
                break;
            }
        }
        candidate
    }

    fn separate_players(&mut self) {
        let min = 2.0 * self.sim.player_radius;
        // Positions in id order, so the pairwise pass is a plain slice walk.
        let mut alive: Vec<(PlayerId, Vec2)> = self
            .players
            .iter()
            .filter(|(_, p)| p.alive)
            .map(|(&id, p)| (id, p.pose.position))
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
                alive[i].1 = resolve_collisions(pa - push, &self.sim);
                alive[j].1 = resolve_collisions(pb + push, &self.sim);
                moved = true;
            }
        }
        if moved {
            for (id, position) in alive {
                if let Some(p) = self.players.get_mut(&id) {
                    p.pose.position = position;
                }
            }
        }
    }

    fn resolve_shot(&mut self, shot: &Shot) {
        let tick = self.tick;
        let cooldown = self.ticks_of(self.rules.cooldown_ms);
        let Some(shooter) = self.players.get_mut(&shot.attacker) else {
            return;
        };
        if !shooter.alive || tick < shooter.next_fire {
            return;
        }
        shooter.next_fire = tick.saturating_add(cooldown);

        // Where the shooter saw the others: at most max_rewind back, never
        // after the last recorded tick.
        let newest = f64::from(tick.0.saturating_sub(1));
        let oldest = newest - f64::from(self.ticks_of(self.rules.max_rewind_ms));
        let view = shot
            .view_tick
            .filter(|v| v.is_finite())
            .unwrap_or(newest)
            .clamp(oldest.max(0.0), newest);

        let origin = shot.from.position;
        let (dir, reach) = shot_path(&self.sim, &shot.from, self.rules.range);
        let radius = self.sim.player_radius;
        let mut best: Option<(f32, PlayerId)> = None;
        for (&id, target) in &self.players {
            if id == shot.attacker || !target.alive {
                continue;
            }
            let seen = if target.history.is_empty() {
                target.pose
            } else {
                target.pose_at(view)
            };
            if let Some(t) = ray_circle(origin, dir, seen.position, radius) {
                if t <= reach && best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, id));
                }
            }
        }
        let Some((t, target_id)) = best else {
            return;
        };
        let respawn_at = tick.saturating_add(self.ticks_of(self.rules.respawn_ms));
        let Some(target) = self.players.get_mut(&target_id) else {
            return;
        };
        let damage = self.rules.damage.min(target.hp);
        target.hp -= damage;
        let killed = target.hp == 0;
        if killed {
            target.alive = false;
            target.respawn_at = Some(respawn_at);
            target.queue.clear();
            target.velocity = Vec2::ZERO;
        }
        self.events.push(CombatEvent {
            server_tick: tick,
            attacker: shot.attacker,
            target: target_id,
            damage,
            hp: target.hp,
            killed,
            from: origin,
            to: origin + dir * t,
        });
    }

    fn respawn_due(&mut self) {
        let tick = self.tick;
        let due: Vec<PlayerId> = self
            .players
            .iter()
            .filter(|(_, p)| p.respawn_at.is_some_and(|at| at <= tick))
            .map(|(&id, _)| id)
            .collect();
        for id in due {
            let pose = self.spawn_point();
            let max_hp = self.rules.max_hp;
            if let Some(p) = self.players.get_mut(&id) {
                p.pose = pose;
                p.hp = max_hp;
                p.alive = true;
                p.respawn_at = None;
                p.velocity = Vec2::ZERO;
                p.history.clear();
            }
        }
    }

    fn record_history(&mut self) {
        let keep = self.history_len();
        let tick = self.tick;
        for p in self.players.values_mut() {
            if p.history.len() >= keep {
                p.history.pop_front();
            }
            p.history.push_back((tick, p.pose));
        }
    }
}

/// Applies this tick's inputs of one player; records its shots.
fn apply_inputs(
    id: PlayerId,
    player: &mut ServerPlayer,
    sim: &SimConfig,
    stats: &mut WorldStats,
    shots: &mut Vec<Shot>,
) {
    let before = player.pose.position;
    let budget = if player.queue.len() > CATCH_UP_ABOVE + 1 {
        MAX_INPUTS_PER_TICK
    } else {
        1
    };
    for _ in 0..budget {
        let Some(next) = player.queue.front() else {
            break;
        };
        let expected = player.ack.map(Tick::next);
        if expected.is_some_and(|e| next.tick > e) {
            // A gap: wait for the missing tick a little, then skip it.
            if player.waited < GAP_WAIT_TICKS {
                player.waited += 1;
                break;
            }
            stats.skipped_ticks += u64::from(next.tick.0 - expected.map_or(0, |e| e.0));
        }
        let Some(input) = player.queue.pop_front() else {
            break;
        };
        player.waited = 0;
        player.ack = Some(input.tick);
        stats.applied_inputs += 1;
        if !player.alive {
            continue;
        }
        player.pose = simulate(player.pose, &input.move_input(), sim.cadence(), sim);
        if input.fire {
            shots.push(Shot {
                attacker: id,
                from: player.pose,
                view_tick: input.view_tick,
            });
        }
    }
    player.velocity = if player.alive {
        (player.pose.position - before) / sim.cadence_secs()
    } else {
        Vec2::ZERO
    };
}

/// A shot fired from `from`: its unit direction and how far it flies before
/// an obstacle stops it (at most `range`). The server and the client's own
/// tracer both use it.
pub fn shot_path(sim: &SimConfig, from: &Pose, range: f32) -> (Vec2, f32) {
    let dir = Vec2::new(libm::cosf(from.rotation), libm::sinf(from.rotation));
    let reach = sim
        .obstacles
        .iter()
        .filter_map(|rect| ray_rect(from.position, dir, rect.min, rect.max))
        .fold(range, f32::min);
    (dir, reach)
}

/// Distance along the unit ray `origin + t * dir` (t >= 0) to a circle, if it
/// is hit; 0 if the origin is inside.
fn ray_circle(origin: Vec2, dir: Vec2, centre: Vec2, radius: f32) -> Option<f32> {
    let to_centre = centre - origin;
    let along = to_centre.dot(dir);
    let dist2 = to_centre.length_squared() - along * along;
    let r2 = radius * radius;
    if dist2 > r2 {
        return None;
    }
    let t = along - (r2 - dist2).max(0.0).sqrt();
    if t >= 0.0 {
        Some(t)
    } else if to_centre.length_squared() <= r2 {
        Some(0.0)
    } else {
        None
    }
}

/// Distance along the unit ray to where it enters an axis-aligned
/// rectangle, if it does (slab method).
fn ray_rect(origin: Vec2, dir: Vec2, min: Vec2, max: Vec2) -> Option<f32> {
    let mut t_enter = 0.0_f32;
    let mut t_exit = f32::INFINITY;
    for (o, d, lo, hi) in [
        (origin.x, dir.x, min.x, max.x),
        (origin.y, dir.y, min.y, max.y),
    ] {
        if d == 0.0 {
            if o < lo || o > hi {
                return None;
            }
        } else {
            let (a, b) = ((lo - o) / d, (hi - o) / d);
            t_enter = t_enter.max(a.min(b));
            t_exit = t_exit.min(a.max(b));
        }
    }
    (t_enter <= t_exit).then_some(t_enter)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open() -> SimConfig {
        SimConfig {
            obstacles: Vec::new(),
            ..SimConfig::default()
        }
    }

    fn input(tick: u32, throttle: f32) -> WireInput {
        WireInput {
            tick: Tick(tick),
            turn: 0.0,
            throttle,
            fire: false,
            view_tick: None,
        }
    }

    /// A world with one player placed at `pose`.
    fn world_with(pose: Pose) -> (World, PlayerId) {
        let mut w = World::new(open(), 7);
        let id = PlayerId(1);
        w.join(id, "a").unwrap();
        place(&mut w, id, pose);
        (w, id)
    }

    fn place(w: &mut World, id: PlayerId, pose: Pose) {
        let p = w.players.get_mut(&id).unwrap();
        p.pose = pose;
        p.history.clear();
    }

    fn at(x: f32, y: f32, rotation: f32) -> Pose {
        Pose::new(Vec2::new(x, y), rotation)
    }

    #[test]
    fn one_input_per_tick_and_ack_follows() {
        let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
        w.receive(id, &[input(1, 1.0), input(2, 1.0)]);
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(1)));
        assert_eq!(w.player(id).unwrap().pose().position.x, 510.0);
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
        // Nothing queued: stands still, the ack stays.
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
        assert_eq!(w.player(id).unwrap().pose().position.x, 520.0);
        assert_eq!(w.state_of(id).unwrap().velocity, Some(Vec2::ZERO));
    }

    #[test]
    fn duplicates_are_ignored_and_full_queue_drops() {
        let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
        let batch: Vec<_> = (1..=16).map(|t| input(t, 1.0)).collect();
        assert_eq!(w.receive(id, &batch).queued, 16);
        assert_eq!(w.receive(id, &batch).duplicates, 16);
        let more: Vec<_> = (17..=40).map(|t| input(t, 1.0)).collect();
        let r = w.receive(id, &more);
        assert_eq!((r.queued, r.dropped), (16, 8));
        assert_eq!(w.stats().dropped_inputs, 8);
        w.step();
        assert_eq!(w.receive(id, &[input(1, 1.0)]).duplicates, 1);
    }

    #[test]
    fn a_missing_tick_is_waited_for_twice_then_skipped() {
        let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
        w.receive(id, &[input(1, 1.0)]);
        w.step();
        w.receive(id, &[input(3, 1.0)]);
        w.step();
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(1)), "waiting for 2");
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(3)), "2 skipped");
        assert_eq!(w.stats().skipped_ticks, 1);
    }

    #[test]
    fn a_late_tick_within_the_wait_is_applied_in_order() {
        let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
        w.receive(id, &[input(1, 1.0)]);
        w.step();
        w.receive(id, &[input(3, 1.0)]);
        w.step();
        w.receive(id, &[input(2, 1.0)]);
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
        w.step();
        assert_eq!(w.player(id).unwrap().ack(), Some(Tick(3)));
        assert_eq!(w.stats().skipped_ticks, 0);
    }

    #[test]
    fn catch_up_applies_two_per_tick_never_more() {
        let (mut w, id) = world_with(at(300.0, 600.0, 0.0));
        let batch: Vec<_> = (1..=16).map(|t| input(t, 1.0)).collect();
        w.receive(id, &batch);
        let mut applied = Vec::new();
        let mut last = 0;
        for _ in 0..10 {
            w.step();
            let ack = w.player(id).unwrap().ack().unwrap().0;
            applied.push(ack - last);
            last = ack;
        }
        // 16 queued: two per tick until 4 remain (and 5 is not worth two).
        assert_eq!(applied, vec![2, 2, 2, 2, 2, 2, 1, 1, 1, 1]);
        assert!(applied.iter().all(|&n| n as usize <= MAX_INPUTS_PER_TICK));
    }

    #[test]
    fn overlapping_players_are_pushed_apart() {
        let mut w = World::new(open(), 1);
        w.join(PlayerId(1), "a").unwrap();
        w.join(PlayerId(2), "b").unwrap();
        place(&mut w, PlayerId(1), at(500.0, 600.0, 0.0));
        place(&mut w, PlayerId(2), at(520.0, 600.0, 0.0));
        w.step();
        let a = w.player(PlayerId(1)).unwrap().pose().position;
        let b = w.player(PlayerId(2)).unwrap().pose().position;
        assert_eq!((a, b), (Vec2::new(490.0, 600.0), Vec2::new(530.0, 600.0)));
    }

    fn shooter_and_target(target: Pose) -> World {
        let mut w = World::new(open(), 3);
        w.join(PlayerId(1), "shooter").unwrap();
        w.join(PlayerId(2), "target").unwrap();
        place(&mut w, PlayerId(1), at(200.0, 600.0, 0.0));
        place(&mut w, PlayerId(2), target);
        w
    }

    fn fire(tick: u32, view_tick: Option<f64>) -> WireInput {
        WireInput {
            fire: true,
            view_tick,
            ..input(tick, 0.0)
        }
    }

    #[test]
    fn a_hit_is_one_event_and_cooldown_holds() {
        let mut w = shooter_and_target(at(600.0, 600.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, None), fire(2, None)]);
        let events = w.step().to_vec();
        assert_eq!(events.len(), 1);
        let e = events[0];
        assert_eq!(
            (e.attacker, e.target, e.damage, e.hp, e.killed),
            (PlayerId(1), PlayerId(2), 20, 80, false)
        );
        assert_eq!(e.from, Vec2::new(200.0, 600.0));
        assert_eq!(e.to, Vec2::new(580.0, 600.0));
        // The second shot one tick later is inside the 250 ms cooldown.
        assert!(w.step().is_empty());
        assert!(w.step().is_empty(), "sent once, never re-fired");
        assert_eq!(w.player(PlayerId(2)).unwrap().hp(), 80);
    }

    #[test]
    fn obstacles_stop_shots_and_range_is_limited() {
        let mut w = shooter_and_target(at(1100.0, 600.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, None)]);
        assert!(w.step().is_empty(), "900 u away: out of range");

        let mut sim = open();
        sim.obstacles
            .push(crate::config::Rect::new(350.0, 550.0, 20.0, 100.0));
        let mut w = World::new(sim, 3);
        w.join(PlayerId(1), "s").unwrap();
        w.join(PlayerId(2), "t").unwrap();
        place(&mut w, PlayerId(1), at(200.0, 600.0, 0.0));
        place(&mut w, PlayerId(2), at(600.0, 600.0, 0.0));
        w.receive(PlayerId(1), &[fire(1, None)]);
        assert!(w.step().is_empty(), "the wall takes the shot");
    }

    /// A world where the target walked +y at 10 u per tick from y = 400 for
    /// 40 ticks: at tick `t` it was at y = 400 + 10 t.
    fn walked_target() -> World {
        let mut w = shooter_and_target(at(600.0, 400.0, std::f32::consts::FRAC_PI_2));
        for t in 1..=40 {
            w.receive(PlayerId(2), &[input(t, 1.0)]);
            w.step();
        }
        assert_eq!(w.player(PlayerId(2)).unwrap().pose().position.y, 800.0);
        w
    }

    /// The shooter at height `y` fires along +x, having seen the world at `view`.
    fn shoot_from(mut w: World, y: f32, view: Option<f64>) -> Vec<CombatEvent> {
        place(&mut w, PlayerId(1), at(200.0, y, 0.0));
        w.receive(PlayerId(1), &[fire(1, view)]);
        w.step().to_vec()
    }

    #[test]
    fn rs10_hits_are_judged_where_the_shooter_saw_the_target() {
        // Seen 3 ticks ago (150 ms) at y = 770: a hit there, although the
        // target is at 800 now.
        let events = shoot_from(walked_target(), 770.0, Some(37.0));
        assert_eq!(events.len(), 1, "hit where it was seen");
        assert_eq!(events[0].to, Vec2::new(580.0, 770.0), "the near edge");
        // Between ticks: seen at 37.5, y = 775.
        assert_eq!(shoot_from(walked_target(), 775.0, Some(37.5)).len(), 1);
        // Without lag compensation the same aim misses.
        assert!(shoot_from(walked_target(), 770.0, None).is_empty());
        assert_eq!(shoot_from(walked_target(), 800.0, None).len(), 1);
    }

    #[test]
    fn rs10_views_older_than_250_ms_are_clamped() {
        // Seen 10 ticks ago at y = 700: clamped to 5 ticks ago (y = 750).
        assert!(shoot_from(walked_target(), 700.0, Some(30.0)).is_empty());
        assert_eq!(shoot_from(walked_target(), 750.0, Some(30.0)).len(), 1);
        // A view from the future is clamped to the newest recorded tick.
        assert_eq!(shoot_from(walked_target(), 800.0, Some(1e9)).len(), 1);
    }

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
        assert!(!target.is_alive());
        assert_eq!(target.hp(), 0);
        // Dead: inputs are acknowledged but do not move.
        let dead_pose = target.pose();
        w.receive(PlayerId(2), &[input(1, 1.0)]);
        w.step();
        let target = w.player(PlayerId(2)).unwrap();
        assert_eq!(target.ack(), Some(Tick(1)));
        assert_eq!(target.pose(), dead_pose);
        // 3 s = 60 ticks after the kill, alive again with full HP.
        while w.tick() < killed_at.unwrap().saturating_add(59) {
            w.step();
            assert!(!w.player(PlayerId(2)).unwrap().is_alive());
        }
        w.step();
        let target = w.player(PlayerId(2)).unwrap();
        assert!(target.is_alive());
        assert_eq!(target.hp(), 100);
    }

    #[test]
    fn ray_helpers() {
        assert_eq!(
            ray_circle(Vec2::ZERO, Vec2::X, Vec2::new(10.0, 0.0), 2.0),
            Some(8.0)
        );
        assert_eq!(
            ray_circle(Vec2::ZERO, Vec2::X, Vec2::new(-10.0, 0.0), 2.0),
            None
        );
        assert_eq!(
            ray_circle(Vec2::ZERO, Vec2::X, Vec2::new(1.0, 0.0), 2.0),
            Some(0.0)
        );
        assert_eq!(
            ray_rect(
                Vec2::ZERO,
                Vec2::X,
                Vec2::new(5.0, -1.0),
                Vec2::new(6.0, 1.0)
            ),
            Some(5.0)
        );
        assert_eq!(
            ray_rect(
                Vec2::ZERO,
                Vec2::X,
                Vec2::new(5.0, 2.0),
                Vec2::new(6.0, 3.0)
            ),
            None
        );
    }
}
