//! The authoritative world: what the server steps every tick.
//!
//! Pure and seeded: the server only drives it (join, leave, receive inputs,
//! step, read snapshots). Each [`World::step`], in this order:
//! 1. **Inputs.** For each player in id order, apply the next queued input
//!    after its acknowledged tick: exactly one cadence of that input through
//!    [`simulate`](crate::shared::sim::simulate), the same code the client predicts
//!    with. Duplicates (tick `<=` ack) are ignored on receipt. A missing tick
//!    is waited for at most [`GAP_WAIT_TICKS`] server ticks, then skipped.
//!    With nothing queued the player stands still and the ack does not move.
//!    One input is applied per tick, but a tick that starts with more than
//!    `CATCH_UP_ABOVE + 1` inputs queued (gaps included) applies two, so a
//!    backlog is worked off at double pace and catching up never leaves
//!    fewer than [`CATCH_UP_ABOVE`] queued. Never more than
//!    [`MAX_INPUTS_PER_TICK`], so no client moves faster than twice the
//!    speed, however it sends (speed-hack bound). A queue holds at most
//!    [`MAX_QUEUED_INPUTS`]; extra inputs are dropped and counted. Dead
//!    players' inputs are acknowledged but not applied. See `queue`. That is
//!    protocol 1 ([`InputMode::Queued`]); a protocol-2 player
//!    ([`InputMode::Scheduled`]) names the server tick of each input and it
//!    is simulated exactly then: one per tick, a late one's movement
//!    dropped and counted (its shot honoured once, at the next tick), a
//!    missing one replaced by the previous input (counted). See
//!    `schedule`.
//! 2. **Overlap.** Players closer than two radii are pushed apart, half each,
//!    pairwise in id order, then kept out of obstacles and inside the arena.
//!    This is the natural source of mispredictions clients reconcile.
//! 3. **Shots.** Each applied input with `fire` shoots a hitscan ray from the
//!    shooter's pose after that input's move, if its cooldown allows (a
//!    protocol-2 late input's shot first, see `schedule`). Targets are
//!    tested where the shooter saw them (lag compensation, RS-10): at the
//!    input's `view_tick`, interpolated in each player's pose history, at
//!    most [`CombatRules::max_rewind_ms`] back, and for a protocol-2
//!    shooter whose round trip the server measured (from its snapshot
//!    acknowledgements, [`World::receive_ack`]) no older than the input's
//!    arrival minus that round trip,
//!    [`MAX_VIEW_DELAY_MS`](crate::shared::combat::MAX_VIEW_DELAY_MS) and
//!    [`REWIND_MARGIN_TICKS`]. A view beyond a bound is judged at it and
//!    counted in [`WorldStats::rewind_clamped`] (and in
//!    [`WorldStats::rewind_clamped_rtt`] when the round trip bound it).
//!    Obstacles stop rays. Each hit is one [`CombatEvent`]. See `combat`
//!    and `latency`.
//! 4. **Death and respawn.** A player at 0 HP is dead for
//!    [`CombatRules::respawn_ms`] (no moving, no firing), then respawns at a
//!    seeded-random free spawn point with full HP. See `life`.
//! 5. **History.** Each player's pose is recorded for lag compensation
//!    ([`CombatRules::history_ms`]) and its velocity over the tick is kept.

mod combat;
mod inputs;
mod latency;
mod life;
mod queue;
mod schedule;

use std::collections::{BTreeMap, VecDeque};

use glam::Vec2;

use crate::shared::combat::{CombatRules, Cooldown};
use crate::shared::config::SimConfig;
use crate::shared::protocol::{CombatEvent, WireInput};
use crate::shared::rng::SeededRng;
use crate::shared::sim::{resolve_collisions, simulate, Pose};
use crate::shared::state::PlayerId;
use crate::shared::state::PlayerState;
use crate::shared::tick::Tick;
use crate::shared::timing::{InputTiming, LatenessHistogram, RewindHistogram, SlackHistogram};

pub use latency::{REWIND_MARGIN_TICKS, RTT_WINDOW};
pub use queue::{Received, CATCH_UP_ABOVE, GAP_WAIT_TICKS, MAX_INPUTS_PER_TICK, MAX_QUEUED_INPUTS};
pub use schedule::MAX_AHEAD_TICKS;

use combat::Shot;
use inputs::{Command, PlayerInputs};
use schedule::Schedule;

use life::Life;

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
    /// Protocol 2: inputs that arrived after their tick (their movement
    /// dropped, their shot honoured: `late_shots_honoured`).
    pub late_inputs: u64,
    /// Protocol 2: ticks simulated with a player's previous input because
    /// its own was missing.
    pub repeated_inputs: u64,
    /// Protocol 2: how early inputs in time arrived (first arrivals; 0
    /// when their tick itself ran behind).
    pub slack: SlackHistogram,
    /// Protocol 2: how late late inputs arrived (first arrivals, dropped).
    pub lateness: LatenessHistogram,
    /// Inputs that fired.
    pub shots: u64,
    /// Shots whose view was older than a bound allows (judged at the
    /// bound): `max_rewind_ms`, or the shooter's round trip.
    pub rewind_clamped: u64,
    /// Of those, the shots bound by their shooter's measured round trip,
    /// tighter than `max_rewind_ms` (protocol 2).
    pub rewind_clamped_rtt: u64,
    /// Protocol 2: shots of late inputs fired at the next tick.
    pub late_shots_honoured: u64,
    /// How far back shots were judged.
    pub rewind: RewindHistogram,
    /// Pairs of players pushed apart for overlapping: a push moves a player
    /// where its own prediction did not, so it shows as a misprediction
    /// that no late or repeated input explains.
    pub pushes: u64,
}

/// How a player's inputs are timed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InputMode {
    /// Protocol 1: inputs carry the client's own tick and wait in a queue,
    /// one (two to catch up) per server tick (`queue`).
    #[default]
    Queued,
    /// Protocol 2: inputs name the server tick they are for and are
    /// simulated at that tick (`schedule`).
    Scheduled,
}

/// One player as the server keeps it.
#[derive(Clone, Debug)]
pub struct ServerPlayer {
    name: String,
    pose: Pose,
    velocity: Vec2,
    hp: u16,
    life: Life,
    cooldown: Cooldown,
    inputs: PlayerInputs<WireInput>,
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
        self.life.is_alive()
    }

    /// The newest input tick applied.
    pub fn ack(&self) -> Option<Tick> {
        self.inputs.ack
    }

    /// How many inputs wait in the queue.
    pub fn queued(&self) -> usize {
        self.inputs.queue.len()
    }

    /// Protocol 2: the round trip measured from the player's snapshot
    /// acknowledgements (the smallest of the last
    /// [`RTT_WINDOW`]); `None` before the first, and for protocol-1 players.
    pub fn round_trip(&self) -> Option<std::time::Duration> {
        self.inputs.schedule.as_ref().and_then(Schedule::round_trip)
    }
}

impl ServerPlayer {
    /// Applies this tick's commands (see `inputs`): each input moves a
    /// living player one cadence and fires if it fires; a late input's shot
    /// fires after the move, before this tick's own shot, if the player
    /// has been alive since the tick it named.
    fn apply(
        &mut self,
        id: PlayerId,
        commands: &[Command<WireInput>],
        sim: &SimConfig,
        stats: &mut WorldStats,
        shots: &mut Vec<Shot>,
    ) {
        let before = self.pose.position;
        let own_shot = shots.len();
        for command in commands {
            match *command {
                Command::Apply { input, oldest_view } => {
                    if !self.is_alive() {
                        continue;
                    }
                    self.pose = simulate(self.pose, &input.move_input(), sim.cadence(), sim);
                    if input.fire {
                        stats.shots += 1;
                        shots.push(Shot {
                            attacker: id,
                            from: self.pose,
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
                    if self.alive_since().is_some_and(|s| s < tick) {
                        stats.shots += 1;
                        shots.insert(
                            own_shot,
                            Shot {
                                attacker: id,
                                from: self.pose,
                                view_tick,
                                oldest_view,
                                late: Some(tick),
                            },
                        );
                    }
                }
            }
        }
        // The velocity over this tick, from where the player was before
        // its inputs (zero while dead).
        self.velocity = if self.is_alive() {
            (self.pose.position - before) / sim.cadence_secs()
        } else {
            Vec2::ZERO
        };
    }
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
        self.join_with(id, name, InputMode::Queued)
    }

    /// Like [`World::join`], with inputs timed as `mode` says.
    ///
    /// # Errors
    /// [`JoinError::Taken`] if `id` is already in the world.
    pub fn join_with(
        &mut self,
        id: PlayerId,
        name: &str,
        mode: InputMode,
    ) -> Result<PlayerState, JoinError> {
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
                life: Life::Alive { since: self.tick },
                cooldown: Cooldown::default(),
                inputs: PlayerInputs::joined(mode, self.tick),
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
        self.receive_at(id, inputs, std::time::Duration::ZERO)
    }

    /// Like [`World::receive`], for inputs that arrived `since` after the
    /// last step: a protocol-2 player's inputs are scheduled for the ticks
    /// they name and their slack measured from that moment.
    pub fn receive_at(
        &mut self,
        id: PlayerId,
        inputs: &[WireInput],
        since: std::time::Duration,
    ) -> Received {
        let Some(player) = self.players.get_mut(&id) else {
            return Received::default();
        };
        let out = if player.inputs.schedule.is_some() {
            let tick_ms = self.sim.tick_ms;
            let stats = &mut self.stats;
            player
                .inputs
                .schedule_inputs(inputs, self.tick, since, tick_ms, stats)
        } else {
            player.inputs.enqueue(inputs)
        };
        self.stats.duplicate_inputs += out.duplicates as u64;
        self.stats.dropped_inputs += out.dropped as u64;
        out
    }

    /// The client of `id` acknowledged the snapshot of `acked` in a
    /// message that arrived `since` after the last step: for a protocol-2
    /// player, a sample of its round trip, which bounds how far back its
    /// shots are judged (see `latency`). Call it before
    /// [`World::receive_at`] with the same message's inputs. Unknown and
    /// protocol-1 players are ignored.
    pub fn receive_ack(&mut self, id: PlayerId, acked: Tick, since: std::time::Duration) {
        let now = self.tick;
        let tick_ms = self.sim.tick_ms;
        if let Some(schedule) = self
            .players
            .get_mut(&id)
            .and_then(|p| p.inputs.schedule.as_mut())
        {
            schedule.acknowledged(acked, (now, since), tick_ms);
        }
    }

    /// Input message `seq` of `id` arrived (it is reported back in its
    /// timing, so the client measures its uplink loss).
    pub fn receive_seq(&mut self, id: PlayerId, seq: u16) {
        if let Some(schedule) = self
            .players
            .get_mut(&id)
            .and_then(|p| p.inputs.schedule.as_mut())
        {
            schedule.numbered(seq);
        }
    }

    /// Advances the world by one tick; returns the hits of this tick.
    pub fn step(&mut self) -> &[CombatEvent] {
        self.tick = self.tick.next();
        self.events.clear();
        let mut shots = Vec::new();
        let mut commands = Vec::new();
        for (&id, player) in &mut self.players {
            commands.clear();
            if player.inputs.schedule.is_some() {
                player
                    .inputs
                    .due_scheduled(self.tick, &mut self.stats, &mut commands);
            } else {
                player.inputs.due_queued(&mut self.stats, &mut commands);
            }
            player.apply(id, &commands, &self.sim, &mut self.stats, &mut shots);
        }
        self.separate_players();
        for shot in &shots {
            self.resolve_shot(shot);
        }
        self.respawn_due();
        self.record_history();
        &self.events
    }

    /// Puts player `id` at `pose` at once (scripted spawns, scenario set-up,
    /// tests), pushed back inside the arena and out of obstacles, and
    /// forgets its pose history; `false` if there is no such player or the
    /// pose is not finite.
    pub fn teleport(&mut self, id: PlayerId, pose: Pose) -> bool {
        let sim = &self.sim;
        let Some(p) = self.players.get_mut(&id).filter(|_| pose.is_finite()) else {
            return false;
        };
        p.pose = Pose::new(resolve_collisions(pose.position, sim), pose.rotation);
        p.history.clear();
        true
    }

    /// A protocol-2 player's input timing since the last call (its slack
    /// sample is reported once); `None` for other players.
    pub fn take_timing(&mut self, id: PlayerId) -> Option<InputTiming> {
        self.players
            .get_mut(&id)
            .and_then(|p| p.inputs.schedule.as_mut())
            .map(Schedule::take_timing)
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
            ack_move_tick: p.inputs.ack,
            position: p.pose.position,
            rotation: p.pose.rotation,
            hp: p.hp,
            alive: p.is_alive(),
            velocity: Some(p.velocity),
        })
    }

    fn separate_players(&mut self) {
        let min = 2.0 * self.sim.player_radius;
        // Positions in id order, so the pairwise pass is a plain slice walk.
        let mut alive: Vec<(PlayerId, Vec2)> = self
            .players
            .iter()
            .filter(|(_, p)| p.is_alive())
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
                self.stats.pushes += 1;
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
}

#[cfg(test)]
mod tests {
    //! Helpers shared by the tests of `world` and its submodules, and the
    //! tests of what stays here (joining, overlap).

    use super::*;

    pub(super) fn open() -> SimConfig {
        SimConfig {
            obstacles: Vec::new(),
            ..SimConfig::default()
        }
    }

    pub(super) fn input(tick: u32, throttle: f32) -> WireInput {
        WireInput {
            tick: Tick(tick),
            turn: 0.0,
            throttle,
            fire: false,
            view_tick: None,
        }
    }

    pub(super) fn fire(tick: u32, view_tick: Option<f64>) -> WireInput {
        WireInput {
            fire: true,
            view_tick,
            ..input(tick, 0.0)
        }
    }

    /// Puts a player at `pose` and forgets its pose history.
    pub(super) fn place(w: &mut World, id: PlayerId, pose: Pose) {
        assert!(w.teleport(id, pose));
    }

    pub(super) fn at(x: f32, y: f32, rotation: f32) -> Pose {
        Pose::new(Vec2::new(x, y), rotation)
    }

    /// Player 1 at (200, 600) facing +x, player 2 at `target`.
    pub(super) fn shooter_and_target(target: Pose) -> World {
        let mut w = World::new(open(), 3);
        w.join(PlayerId(1), "shooter").unwrap();
        w.join(PlayerId(2), "target").unwrap();
        place(&mut w, PlayerId(1), at(200.0, 600.0, 0.0));
        place(&mut w, PlayerId(2), target);
        w
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
        assert_eq!(w.stats().pushes, 1, "counted");
        w.step();
        assert_eq!(w.stats().pushes, 1, "apart now: no more");
    }
}
