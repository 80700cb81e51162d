//! The authoritative world of a room, whatever the game: its players, the
//! inputs each sent and when each is applied, and the game's own state,
//! stepped once per tick.
//!
//! Pure and seeded: the server only drives it (join, leave, receive inputs,
//! step, read states). What is decided here, for any game (see `inputs`):
//! - **Protocol 1** ([`InputMode::Queued`]): inputs carry the client's own
//!   tick and wait in a queue, one applied per server tick (two while a
//!   backlog is worked off, never more than [`MAX_INPUTS_PER_TICK`]); a
//!   missing tick is waited for at most [`GAP_WAIT_TICKS`], then skipped;
//!   a queue holds at most [`MAX_QUEUED_INPUTS`], more are dropped and
//!   counted. See `queue`.
//! - **Protocol 2** ([`InputMode::Scheduled`]): inputs name the server tick
//!   they are for and are applied exactly then: one per tick, a late one
//!   dropped and counted (an action it did at its view honoured once at
//!   the next tick), a missing one replaced by the previous input
//!   (counted). Each input message's snapshot acknowledgement measures the
//!   player's round trip (`latency`), which bounds the oldest view its
//!   inputs may claim. See `schedule`.
//!
//! What inputs do, and everything else in a step, is the game's
//! ([`ServerGame::step`]).

mod inputs;
mod latency;
mod queue;
mod schedule;

use std::collections::BTreeMap;
use std::fmt::Debug;

use glam::Vec2;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::shared::game::{EventOf, Game, Networked, Stamp, Visual};
use crate::shared::owned::IntoOwn;
use crate::shared::rng::SeededRng;
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::timing::{InputTiming, LatenessHistogram, RewindHistogram, SlackHistogram};

pub use inputs::{Command, Wired};
pub use latency::{REWIND_MARGIN_TICKS, RTT_WINDOW};
pub use queue::{Received, CATCH_UP_ABOVE, GAP_WAIT_TICKS, MAX_INPUTS_PER_TICK, MAX_QUEUED_INPUTS};
pub use schedule::MAX_AHEAD_TICKS;

use inputs::PlayerInputs;
use schedule::Schedule;

/// Counters of what the world refused or skipped, and of what its game
/// did.
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
    /// Protocol 2: inputs that arrived after their tick (their lasting
    /// part dropped, an action at their view honoured:
    /// `late_actions_honoured`).
    pub late_inputs: u64,
    /// Protocol 2: ticks simulated with a player's previous input because
    /// its own was missing.
    pub repeated_inputs: u64,
    /// Protocol 2: how early inputs in time arrived (first arrivals; 0
    /// when their tick itself ran behind).
    pub slack: SlackHistogram,
    /// Protocol 2: how late late inputs arrived (first arrivals, dropped).
    pub lateness: LatenessHistogram,
    /// Actions judged at their input's view, as the game counts them.
    pub view_actions: u64,
    /// Actions whose view was older than a bound allows (judged at the
    /// bound): the game's own, or the player's round trip.
    pub rewind_clamped: u64,
    /// Of those, the actions bound by their player's measured round trip,
    /// tighter than the game's bound (protocol 2).
    pub rewind_clamped_rtt: u64,
    /// Protocol 2: actions of late inputs honoured at the next tick.
    pub late_actions_honoured: u64,
    /// How far back actions were judged.
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

/// What a game does on the server: its players' and its world's state, the
/// step that moves them, and what a room of it needs to know (its setup,
/// where each player is for interest, who an event concerns).
pub trait ServerGame: Networked {
    /// What the server keeps of one player beyond its inputs, and the own
    /// state its player gets of it ([`IntoOwn`]: the library's when it
    /// keeps the fields its player is sent, an `Owned<S>` kept as `S`).
    type Player: Clone + Debug + Send + Sync + IntoOwn<Self::Own>;
    /// What the server keeps of the world beyond its players (its rules,
    /// the things in it). `Default`: the world of default settings.
    type World: Clone + Debug + Default + Send + Sync;
    /// How a room of the game is set up beyond the library's settings
    /// (name, seats, seed, interest): in JSON in a room recording's header,
    /// its fields beside the library's.
    type Settings: Clone + Debug + Default + PartialEq + Serialize + DeserializeOwned + Send + Sync;

    /// The configuration and the world a room starts from; by default
    /// both defaults, whatever the settings.
    fn start(settings: &Self::Settings) -> (Self::Config, Self::World) {
        let _ = settings;
        Default::default()
    }

    /// Whether `settings` can run (a recording's header is checked with it
    /// before anything is replayed). By default any can.
    ///
    /// # Errors
    /// What is wrong, for a person.
    fn check(settings: &Self::Settings) -> Result<(), String> {
        let _ = settings;
        Ok(())
    }

    /// What `welcome` tells a joiner.
    fn setup(world: &Self::World, config: &Self::Config) -> Self::Setup;

    /// Where a player is, for interest management: by default where its
    /// predicted part is ([`Visual::place`](crate::Visual::place)).
    fn position(own: &Self::Own) -> Vec2 {
        Self::local(own).place()
    }

    /// The things of the world (not players: pellets, pickups), replicated
    /// to binary clients in the snapshot sets beside the players, in id
    /// order (a [`Things`](crate::Things) keeps them so). None by default.
    fn things(world: &Self::World) -> &[crate::Thing<Self::Entity>] {
        let _ = world;
        &[]
    }

    /// The interest radius a room of `settings` wants when its server sets
    /// none: a large world of many small things does. None by default
    /// (everyone sees everything).
    fn interest_radius(settings: &Self::Settings) -> Option<f32> {
        let _ = settings;
        None
    }

    /// How far a player sees, from the room's interest radius: a larger
    /// player of an .io game sees further. The radius itself by default.
    fn view_radius(own: &Self::Own, radius: f32) -> f32 {
        let _ = own;
        radius
    }

    /// How fast a player moves, from 0 to 1 of the fastest: a faster one is
    /// refreshed sooner when a frame's byte budget cannot take everyone.
    fn speed(own: &Self::Own, config: &Self::Config) -> f32 {
        let _ = (own, config);
        0.0
    }

    /// The size of the world, from the origin: the interest grid covers it.
    fn extent(config: &Self::Config) -> Vec2;

    /// The two players an event concerns, who keep each other in view a
    /// while ([`crate::InterestConfig::partner_memory_ticks`]); `None`: it
    /// pairs nobody.
    fn partners(event: &EventOf<Self>) -> Option<(PlayerId, PlayerId)> {
        let _ = event;
        None
    }

    /// A player joining: where and how it starts ([`Spawn`]: the world,
    /// the others in id order, the tick, the seeded randomness).
    fn spawn(spawn: Spawn<'_, Self>) -> Self::Player;

    /// One tick: every player's [`ServerPlayer::commands`] applied, and
    /// whatever else the game does, in the game's order.
    fn step(step: Step<'_, Self>);
}

/// A player joining a world, as its game places it.
pub struct Spawn<'a, G: ServerGame + ?Sized> {
    /// The game's world.
    pub world: &'a G::World,
    /// The constants both sides step with.
    pub config: &'a G::Config,
    /// The others, in id order.
    pub players: &'a BTreeMap<PlayerId, ServerPlayer<G>>,
    /// The tick it joins at.
    pub tick: Tick,
    /// The world's seeded randomness.
    pub rng: &'a mut SeededRng,
}

/// One tick of a world, as its game steps it.
pub struct Step<'a, G: ServerGame + ?Sized> {
    /// The tick being stepped.
    pub tick: Tick,
    /// The constants both sides step with.
    pub config: &'a G::Config,
    /// The game's world.
    pub world: &'a mut G::World,
    /// Every player, in id order, with this tick's commands.
    pub players: &'a mut BTreeMap<PlayerId, ServerPlayer<G>>,
    /// The world's seeded randomness.
    pub rng: &'a mut SeededRng,
    /// Where the step's events go.
    pub events: &'a mut Vec<EventOf<G>>,
    /// The counters.
    pub stats: &'a mut WorldStats,
}

impl<G: ServerGame<Player = <G as Game>::Local>> Step<'_, G> {
    /// Applies every player's inputs of the tick, in order, with the
    /// game's step ([`Game::predict`], over the tick's length): all a game
    /// does whose server keeps of a player only what its page predicts.
    /// The inputs arrive sanitized.
    pub fn apply_inputs(self) {
        let cadence = G::cadence(self.config);
        for player in self.players.values_mut() {
            for command in &player.commands {
                if let Command::Apply { input, .. } = command {
                    player.state = G::predict(player.state, &input.input(), cadence, self.config);
                }
            }
        }
    }
}

/// One player as the server keeps it: its name, its inputs and the game's
/// state of it.
#[derive(Clone)]
pub struct ServerPlayer<G: ServerGame + ?Sized> {
    name: String,
    inputs: PlayerInputs<G::Wire>,
    commands: Vec<Command<G::Wire>>,
    /// The game's state of the player.
    pub state: G::Player,
}

// By hand: a derive would ask the game's marker type to be `Debug`.
impl<G: ServerGame + ?Sized> Debug for ServerPlayer<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerPlayer")
            .field("name", &self.name)
            .field("inputs", &self.inputs)
            .field("commands", &self.commands)
            .field("state", &self.state)
            .finish()
    }
}

impl<G: ServerGame> Debug for World<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("config", &self.config)
            .field("game", &self.game)
            .field("tick", &self.tick)
            .field("rng", &self.rng)
            .field("players", &self.players)
            .field("events", &self.events)
            .field("stats", &self.stats)
            .finish()
    }
}

impl<G: ServerGame + ?Sized> ServerPlayer<G> {
    /// The display name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The newest input tick applied.
    pub fn ack(&self) -> Option<Tick> {
        self.inputs.ack
    }

    /// Its own state as player `id`'s at `tick`, as its client gets it
    /// exactly.
    pub fn own(&self, id: PlayerId, tick: Tick) -> G::Own {
        self.state.own(
            id,
            Stamp {
                tick,
                ack: self.inputs.ack,
            },
        )
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

    /// What this tick applies to the player, in order.
    pub fn commands(&self) -> &[Command<G::Wire>] {
        &self.commands
    }

    /// This tick's commands beside the game's state of the player, to
    /// apply the one to the other.
    pub fn commands_and_state(&mut self) -> (&[Command<G::Wire>], &mut G::Player) {
        (&self.commands, &mut self.state)
    }

    /// Drops the inputs waiting in the queue (a player that died does not
    /// play what it sent for the time it is dead).
    pub fn drop_queued(&mut self) {
        self.inputs.queue.clear();
    }
}

/// Why a player could not join.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JoinError {
    /// The id is already in this world.
    #[error("player {0} is already in the world")]
    Taken(PlayerId),
}

/// The authoritative state of one room, of a game `G`.
#[derive(Clone)]
pub struct World<G: ServerGame> {
    config: G::Config,
    game: G::World,
    tick: Tick,
    rng: SeededRng,
    players: BTreeMap<PlayerId, ServerPlayer<G>>,
    events: Vec<EventOf<G>>,
    stats: WorldStats,
}

impl<G: ServerGame> World<G> {
    /// An empty world at tick 0: `config` (what clients get too), the
    /// game's `world` and a seed for its randomness.
    pub fn of(config: G::Config, world: G::World, seed: u64) -> World<G> {
        World {
            config,
            game: world,
            tick: Tick::ZERO,
            rng: SeededRng::new(seed),
            players: BTreeMap::new(),
            events: Vec::new(),
            stats: WorldStats::default(),
        }
    }

    /// The constants both sides step with.
    pub fn config(&self) -> &G::Config {
        &self.config
    }

    /// The game's world.
    pub fn game(&self) -> &G::World {
        &self.game
    }

    /// The game's world, to change between ticks (an operator's tool, a
    /// test); a game changes it in its step. A room's recording keeps only
    /// what happens in steps: a change made here makes its replay differ
    /// (and say at which tick).
    pub fn game_mut(&mut self) -> &mut G::World {
        &mut self.game
    }

    /// A tick of the game's cadence, in whole milliseconds.
    pub fn tick_ms(&self) -> u32 {
        tick_ms::<G>(&self.config)
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
    pub fn players(&self) -> impl Iterator<Item = (PlayerId, &ServerPlayer<G>)> {
        self.players.iter().map(|(&id, p)| (id, p))
    }

    /// One player, if present.
    pub fn player(&self, id: PlayerId) -> Option<&ServerPlayer<G>> {
        self.players.get(&id)
    }

    /// One player to change (scripted set-ups, tests), if present.
    pub fn player_mut(&mut self, id: PlayerId) -> Option<&mut ServerPlayer<G>> {
        self.players.get_mut(&id)
    }

    /// Adds a player where the game spawns it, its inputs timed as `mode`
    /// says; its own state.
    ///
    /// # Errors
    /// [`JoinError::Taken`] if `id` is already in the world.
    pub fn join_with(
        &mut self,
        id: PlayerId,
        name: &str,
        mode: InputMode,
    ) -> Result<G::Own, JoinError> {
        if self.players.contains_key(&id) {
            return Err(JoinError::Taken(id));
        }
        let state = G::spawn(Spawn {
            world: &self.game,
            config: &self.config,
            players: &self.players,
            tick: self.tick,
            rng: &mut self.rng,
        });
        let player = ServerPlayer {
            name: name.to_string(),
            inputs: PlayerInputs::joined(mode, self.tick),
            commands: Vec::new(),
            state,
        };
        let own = player.own(id, self.tick);
        self.players.insert(id, player);
        Ok(own)
    }

    /// Removes a player; `false` if it was not there.
    pub fn leave(&mut self, id: PlayerId) -> bool {
        self.players.remove(&id).is_some()
    }

    /// Like [`World::receive`], for inputs that arrived `since` after the
    /// last step: a protocol-2 player's inputs are scheduled for the ticks
    /// they name and their slack measured from that moment.
    pub fn receive_at(
        &mut self,
        id: PlayerId,
        inputs: &[G::Wire],
        since: std::time::Duration,
    ) -> Received {
        let Some(player) = self.players.get_mut(&id) else {
            return Received::default();
        };
        let out = if player.inputs.schedule.is_some() {
            let tick_ms = tick_ms::<G>(&self.config);
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

    /// Queues received inputs for `id` (already checked by the protocol
    /// decoder; each goes through [`Game::sanitize`] as it is applied).
    /// Unknown players are ignored.
    pub fn receive(&mut self, id: PlayerId, inputs: &[G::Wire]) -> Received {
        self.receive_at(id, inputs, std::time::Duration::ZERO)
    }

    /// The client of `id` acknowledged the snapshot of `acked` in a
    /// message that arrived `since` after the last step: for a protocol-2
    /// player, a sample of its round trip, which bounds how far back its
    /// actions are judged (see `latency`). Call it before
    /// [`World::receive_at`] with the same message's inputs. Unknown and
    /// protocol-1 players are ignored.
    pub fn receive_ack(&mut self, id: PlayerId, acked: Tick, since: std::time::Duration) {
        let now = self.tick;
        let tick_ms = tick_ms::<G>(&self.config);
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

    /// Advances the world by one tick; returns the events of this tick.
    pub fn step(&mut self) -> &[EventOf<G>] {
        self.tick = self.tick.next();
        self.events.clear();
        for player in self.players.values_mut() {
            player.commands.clear();
            if player.inputs.schedule.is_some() {
                player
                    .inputs
                    .due_scheduled(self.tick, &mut self.stats, &mut player.commands);
            } else {
                player
                    .inputs
                    .due_queued(&mut self.stats, &mut player.commands);
            }
            // The library, not the game, makes every input valid.
            for command in &mut player.commands {
                if let Command::Apply { input, .. } = command {
                    *input =
                        G::Wire::of(input.tick(), G::sanitize(input.input()), input.view_tick());
                }
            }
        }
        G::step(Step {
            tick: self.tick,
            config: &self.config,
            world: &mut self.game,
            players: &mut self.players,
            rng: &mut self.rng,
            events: &mut self.events,
            stats: &mut self.stats,
        });
        &self.events
    }

    /// A protocol-2 player's input timing since the last call (its slack
    /// sample is reported once); `None` for other players.
    pub fn take_timing(&mut self, id: PlayerId) -> Option<InputTiming> {
        self.players
            .get_mut(&id)
            .and_then(|p| p.inputs.schedule.as_mut())
            .map(Schedule::take_timing)
    }

    /// The events of the last step.
    pub fn events(&self) -> &[EventOf<G>] {
        &self.events
    }

    /// One player's own state at the current tick.
    pub fn state_of(&self, id: PlayerId) -> Option<G::Own> {
        self.players.get(&id).map(|p| p.own(id, self.tick))
    }

    /// Every player's own state at the current tick, in id order, into a
    /// reused buffer.
    pub fn snapshot_into(&self, out: &mut Vec<G::Own>) {
        out.clear();
        out.extend(self.players.iter().map(|(&id, p)| p.own(id, self.tick)));
    }

    /// Every player's own state at the current tick, in id order.
    pub fn snapshot(&self) -> Vec<G::Own> {
        let mut out = Vec::with_capacity(self.players.len());
        self.snapshot_into(&mut out);
        out
    }
}

/// A tick of `G`'s cadence in whole milliseconds.
fn tick_ms<G: crate::shared::game::Game>(config: &G::Config) -> u32 {
    u32::try_from(G::cadence(config).as_millis()).unwrap_or(u32::MAX)
}
