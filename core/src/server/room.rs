//! One room, sans I/O: the authoritative [`World`] and its seats, deciding
//! everything a client is told.
//!
//! A [`Room`] is driven by plain calls, in the manner of GGRS's sessions:
//! [`Room::join`], [`Room::leave`], [`Room::receive`] (an already-decoded
//! client message) and [`Room::tick`]. Each appends what must be sent to an
//! [`Outbox`]: the distinct [`Frame`]s and who gets which. A frame many
//! clients get (the JSON snapshot, a roster, an events message) is encoded
//! once and listed once, so the shell turns it into a socket message once
//! and shares its bytes. The shells (the server's room task, the test
//! stepper, unit tests) only carry frames and time: `welcome`, `roster`,
//! `snapshot`, events and `pong` are built here and nowhere else.
//!
//! Per tick, in order: the world steps ([`World::step`]); if anyone joined
//! or left since the last tick, every client gets the new `roster` (once per
//! tick however many joined: a room of 800 filling up would otherwise send
//! each of its joins' full roster to everyone, quadratic in bytes); every
//! client gets this tick's snapshot in the encoding it chose in `hello` (the JSON text
//! encoded once for all JSON clients; for compact clients the shared tail
//! encoded once and a per-recipient head with its exact own state); then,
//! if the step made events, one events message to every client.
//!
//! Joining sends the joiner `welcome` at once; the roster follows with the
//! next tick.

mod binary;
mod events;
mod outbox;
mod snapshots;

pub use outbox::Outbox;

use std::collections::BTreeMap;

use glam::Vec2;
use serde::{Deserialize, Serialize};

use crate::server::interest::{InterestConfig, Truths, Viewer};
use crate::server::record::RoomRecorder;
use crate::server::world::{InputMode, Received, ServerGame, World};
use crate::shared::control;
use crate::shared::protocol::{
    ClientMessage, Encoding, ErrorCode, Frame, ProtocolError, RosterEntry, ServerMessage,
    PROTOCOL_VERSION,
};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;

/// How a room of game `G` is set up (written as JSON into a room
/// recording's header, the game's settings beside the library's).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct RoomConfig<G: ServerGame> {
    /// The room's name, sent in `welcome`.
    pub name: String,
    /// Seats in the room.
    pub capacity: usize,
    /// The game's settings ([`ServerGame::Settings`]).
    #[serde(flatten)]
    pub game: G::Settings,
    /// The seed of the world's randomness (spawn points).
    pub seed: u64,
    /// Interest management and the byte budget of binary clients.
    pub interest: InterestConfig,
}

impl<G: ServerGame> Default for RoomConfig<G> {
    fn default() -> Self {
        RoomConfig {
            name: "room".to_string(),
            capacity: 64,
            game: G::Settings::default(),
            seed: 1,
            interest: InterestConfig::default(),
        }
    }
}

/// Counters of a room (what the world refused is in [`World::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RoomStats {
    /// Snapshot frames sent (one per recipient per tick).
    pub snapshots: u64,
    /// Events, each sent once to every client that sees its target.
    pub events: u64,
    /// Ticks' events messages narrowed for a client to the events of what
    /// it sees (or left out, none concerning it).
    pub events_narrowed: u64,
    /// Binary snapshot frames sent as deltas.
    pub deltas: u64,
    /// Delta bodies built: clients that see everyone and acknowledged the
    /// same frame share one.
    pub delta_bodies: u64,
    /// Delta frames over the byte budget (players overdue a refresh go
    /// whatever the budget).
    pub over_budget: u64,
    /// Bytes of binary snapshot frames.
    pub binary_bytes: u64,
    /// Messages refused because their seat had added all it may to the
    /// room's recording ([`RECORD_BYTES_PER_TICK`]).
    pub record_refused: u64,
}

impl RoomStats {
    /// Adds `other`'s counters (a worker's, at the end of a tick); every
    /// field named, so a new counter cannot be left out.
    pub(crate) fn add(&mut self, other: &RoomStats) {
        let RoomStats {
            snapshots,
            events,
            events_narrowed,
            deltas,
            delta_bodies,
            over_budget,
            binary_bytes,
            record_refused,
        } = *other;
        self.snapshots += snapshots;
        self.events += events;
        self.events_narrowed += events_narrowed;
        self.deltas += deltas;
        self.delta_bodies += delta_bodies;
        self.over_budget += over_budget;
        self.binary_bytes += binary_bytes;
        self.record_refused += record_refused;
    }
}

/// Bytes a seat may add to the room's recording per tick, on average
/// (5 KiB/s at 20 Hz). An honest client adds about 15 to 40 bytes a tick
/// (its inputs, the ones it resends and its pings; counted from the record
/// layout in `docs/RECORDING.md`); past this and [`RECORD_BURST`], its
/// messages are refused (`rate_limited`) unhandled and unrecorded, so the
/// recording still replays bit for bit.
pub const RECORD_BYTES_PER_TICK: u32 = 256;

/// Bytes a seat may add to the room's recording at once, beyond its rate.
pub const RECORD_BURST: u32 = 4096;

/// How a client takes its seat: what its `hello` asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seating {
    /// How it wants snapshots.
    pub encoding: Encoding,
    /// The protocol it speaks (1 or 2; `decode_client` checked it).
    pub protocol: u32,
    /// Whether its transport carries snapshots as datagrams (WebTransport):
    /// a compact client then also gets its own block again half a tick
    /// after each snapshot (an own echo, [`Outbox::later`]), so a lost
    /// snapshot holds its acknowledgement back half a tick, not a whole one.
    pub datagrams: bool,
    /// Whether its `hello` was binary: it then gets `welcome`, `roster`,
    /// events and `pong` in binary too ([`crate::shared::control`]).
    pub binary_control: bool,
}

impl From<Encoding> for Seating {
    /// A protocol-1 client wanting `encoding`.
    fn from(encoding: Encoding) -> Seating {
        Seating {
            encoding,
            protocol: 1,
            datagrams: false,
            binary_control: false,
        }
    }
}

impl Seating {
    /// Whether its inputs name server ticks (protocol 2 and later).
    pub fn scheduled(&self) -> bool {
        self.protocol >= 2
    }
}

/// One client's seat.
#[derive(Clone, Copy, Debug)]
struct Seat {
    encoding: Encoding,
    scheduled: bool,
    /// Its own block is echoed half a tick after each snapshot.
    echo: bool,
    /// It takes control messages in binary.
    binary: bool,
    /// What it may still add to the room's recording (bytes; below zero
    /// once a message took more than was left), as of a tick.
    recording: (i64, Tick),
}

/// A room of game `G`: the world, its seats, and what every client is
/// told.
#[derive(Clone, Debug)]
pub struct Room<G: ServerGame> {
    name: String,
    capacity: usize,
    world: World<G>,
    seats: BTreeMap<PlayerId, Seat>,
    stats: RoomStats,
    /// Someone joined or left since the last roster.
    roster_changed: bool,
    /// Reused every tick: the snapshot's states, their positions and the
    /// compact tail.
    states: Vec<G::Own>,
    positions: Vec<Vec2>,
    tail: Vec<u8>,
    interest: InterestConfig,
    /// Binary clients that acknowledge snapshots (they get deltas).
    viewers: BTreeMap<PlayerId, Viewer<G::Entity>>,
    /// The quantised truth of the last ticks, baselines of complete frames.
    truths: Truths<G::Entity>,
    /// The recorder, when the room records itself.
    recorder: Option<Box<RoomRecorder>>,
    /// Threads the binary clients' frames are built on (1: this one).
    workers: usize,
}

impl<G: ServerGame> Room<G> {
    /// An empty room at tick 0.
    pub fn new(config: RoomConfig<G>) -> Room<G> {
        let (game_config, game_world) = G::start(&config.game);
        Room {
            name: config.name,
            capacity: config.capacity.max(1),
            world: World::of(game_config, game_world, config.seed),
            seats: BTreeMap::new(),
            stats: RoomStats::default(),
            roster_changed: false,
            states: Vec::new(),
            positions: Vec::new(),
            tail: Vec::new(),
            interest: config.interest,
            viewers: BTreeMap::new(),
            truths: Truths::default(),
            recorder: None,
            workers: 1,
        }
    }

    /// Spreads the building of the binary clients' snapshot frames over
    /// `workers` threads (this one among them; 1, the default, builds them
    /// all here). The frames, their order and the room's counters are the
    /// same whatever the number: a client's frame depends on the tick and
    /// its own baseline only. A room of fewer than 64 binary clients a
    /// worker uses fewer workers, and a room without an interest radius
    /// one (its clients see everyone and share frames). The shell sets it natively; a room in a
    /// browser keeps 1.
    pub fn spread_snapshots(&mut self, workers: usize) {
        self.workers = workers.max(1);
    }

    /// An empty room that records every call into it (see
    /// [`RoomRecorder`]); the shell takes the bytes out with
    /// [`Room::recorder`].
    ///
    /// The room runs with `config` as the recording's header writes it
    /// (JSON), read back, as the replay will.
    pub fn recorded(config: RoomConfig<G>) -> Room<G> {
        let (recorder, config) = RoomRecorder::new(config);
        Room {
            recorder: Some(Box::new(recorder)),
            ..Room::new(config)
        }
    }

    /// The recorder, if the room records itself.
    pub fn recorder(&mut self) -> Option<&mut RoomRecorder> {
        self.recorder.as_deref_mut()
    }

    /// Stops recording (what was recorded and not taken is dropped).
    pub fn stop_recording(&mut self) {
        self.recorder = None;
    }

    /// Where `out` stands before a recorded call.
    fn mark(out: &Outbox) -> (usize, usize) {
        (out.frames().len(), out.deliveries().len())
    }

    /// Folds what a recorded call sent into the recorder's hash.
    fn sent(&mut self, out: &Outbox, (frames, deliveries): (usize, usize)) {
        if let Some(recorder) = &mut self.recorder {
            recorder.sent(out, frames, deliveries);
        }
    }

    /// The room's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Seats in all.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Seats taken.
    pub fn len(&self) -> usize {
        self.seats.len()
    }

    /// Whether no seat is taken.
    pub fn is_empty(&self) -> bool {
        self.seats.is_empty()
    }

    /// Whether every seat is taken.
    pub fn is_full(&self) -> bool {
        self.seats.len() >= self.capacity
    }

    /// The last stepped tick.
    pub fn server_tick(&self) -> Tick {
        self.world.tick()
    }

    /// The authoritative world, to read.
    pub fn world(&self) -> &World<G> {
        &self.world
    }

    /// The authoritative world, to change outside the rules (scripted
    /// spawns, scenario set-up, tests), e.g. a game's own teleport.
    pub fn world_mut(&mut self) -> &mut World<G> {
        &mut self.world
    }

    /// The counters.
    pub fn stats(&self) -> RoomStats {
        self.stats
    }

    /// Whether `id` has a seat here.
    pub fn contains(&self, id: PlayerId) -> bool {
        self.seats.contains_key(&id)
    }

    /// Seats `id` (named `name`, wanting snapshots in the encoding and
    /// speaking the protocol of `seating`; an [`Encoding`] alone is a
    /// protocol-1 client): sends it `welcome`; everyone gets the new
    /// `roster` with the next tick.
    ///
    /// # Errors
    /// `server_full` if every seat is taken; `already_joined` if `id` is
    /// already here (nothing changes either way).
    pub fn join(
        &mut self,
        id: PlayerId,
        name: &str,
        seating: impl Into<Seating>,
        out: &mut Outbox,
    ) -> Result<(), ProtocolError> {
        let seating = seating.into();
        let mark = Self::mark(out);
        if let Some(recorder) = &mut self.recorder {
            recorder.join(id, name, seating);
        }
        let joined = self.seat(id, name, seating, out);
        self.sent(out, mark);
        joined
    }

    fn seat(
        &mut self,
        id: PlayerId,
        name: &str,
        seating: Seating,
        out: &mut Outbox,
    ) -> Result<(), ProtocolError> {
        if id.is_thing() {
            return Err(ProtocolError::new(
                ErrorCode::BadMessage,
                format!("player id {id} is in the things' range"),
            ));
        }
        if self.seats.contains_key(&id) {
            return Err(ProtocolError::new(
                ErrorCode::AlreadyJoined,
                format!("player {id} is already in room {}", self.name),
            ));
        }
        if self.is_full() {
            return Err(ProtocolError::new(
                ErrorCode::ServerFull,
                format!("room {} is full ({} players)", self.name, self.capacity),
            ));
        }
        let mode = if seating.scheduled() {
            InputMode::Scheduled
        } else {
            InputMode::Queued
        };
        self.world
            .join_with(id, name, mode)
            .map_err(|e| ProtocolError::new(ErrorCode::AlreadyJoined, e.to_string()))?;
        self.seats.insert(
            id,
            Seat {
                encoding: seating.encoding,
                scheduled: seating.scheduled(),
                echo: seating.datagrams && seating.encoding == Encoding::Compact,
                binary: seating.binary_control,
                recording: (i64::from(RECORD_BURST), self.world.tick()),
            },
        );
        // With interest, a binary client sees its part from its first
        // snapshot on (nearest first within the byte budget), not the
        // whole world until it acknowledges one.
        if seating.encoding == Encoding::Compact && self.interest.radius.is_some() {
            self.viewers.entry(id).or_default();
        }
        let welcome = ServerMessage::<G>::Welcome {
            player_id: id,
            protocol: seating.protocol.min(PROTOCOL_VERSION),
            server_tick: self.world.tick(),
            tick_ms: self.world.tick_ms(),
            room: self.name.clone(),
            setup: G::setup(self.world.game(), self.world.config()),
        };
        out.send(
            id,
            control::frame_for(seating.binary_control, &welcome),
            false,
        );
        self.roster_changed = true;
        Ok(())
    }

    /// Gives `id`'s seat back (the others get the new `roster` with the
    /// next tick); `false` if it had no seat. Nothing is sent at once.
    pub fn leave(&mut self, id: PlayerId) -> bool {
        if let Some(recorder) = &mut self.recorder {
            recorder.leave(id);
        }
        if self.seats.remove(&id).is_none() {
            return false;
        }
        self.viewers.remove(&id);
        self.world.leave(id);
        self.roster_changed = true;
        true
    }

    /// Handles one decoded message from `id`: inputs are queued for the
    /// next ticks (at most [`crate::server::world::MAX_INPUTS_PER_TICK`] are applied
    /// per tick, however they arrive), a `ping` is answered with `pong`.
    ///
    /// # Errors
    /// `not_joined` if `id` has no seat; `already_joined` for a second
    /// `hello`. Nothing changes and nothing is sent.
    pub fn receive(
        &mut self,
        id: PlayerId,
        message: &ClientMessage<G::Wire>,
        out: &mut Outbox,
    ) -> Result<Received, ProtocolError> {
        self.receive_at(id, message, std::time::Duration::ZERO, out)
    }

    /// Like [`Room::receive`], for a message that arrived `since` after the
    /// last tick: a protocol-2 client's input slack is measured from then,
    /// and its round trip from the snapshot its inputs acknowledge (the
    /// shell knows the time; the room only counts ticks).
    ///
    /// # Errors
    /// As [`Room::receive`].
    pub fn receive_at(
        &mut self,
        id: PlayerId,
        message: &ClientMessage<G::Wire>,
        since: std::time::Duration,
        out: &mut Outbox,
    ) -> Result<Received, ProtocolError> {
        self.record_and_handle(id, message, since, out, false, |r| {
            r.message(id, message, since);
        })
    }

    /// Like [`Room::receive_at`], for a message decoded from a frame as it
    /// arrived (`text` or binary, `payload`: `message` must be what
    /// [`decode_client_frame`](crate::decode_client_frame) made of it). A
    /// recording keeps a binary frame's own bytes (its decoder refuses any
    /// byte past the message) and a text frame's message as it decoded (no
    /// padding, no unknown field); each seat adds at most
    /// [`RECORD_BYTES_PER_TICK`] a tick past [`RECORD_BURST`].
    ///
    /// # Errors
    /// As [`Room::receive`]; `rate_limited` past the seat's allowance of
    /// the recording (the message is neither recorded nor handled).
    pub fn receive_frame_at(
        &mut self,
        id: PlayerId,
        message: &ClientMessage<G::Wire>,
        (text, payload): (bool, &[u8]),
        since: std::time::Duration,
        out: &mut Outbox,
    ) -> Result<Received, ProtocolError> {
        // A binary frame is recorded as it came (its decoder refuses
        // trailing bytes: it is as small as its message); a text one as
        // its decoded message, so padding and unknown fields never reach
        // the disk.
        self.record_and_handle(id, message, since, out, true, |r| {
            if text {
                r.message(id, message, since);
            } else {
                r.frame(id, false, payload, since);
            }
        })
    }

    /// Handles a message, recording it first with `record` (and what it
    /// made the room send after) when the room records itself. A message
    /// from the network (`bounded`) takes its bytes from its seat's
    /// allowance; a replayed one was within it when it was recorded.
    fn record_and_handle(
        &mut self,
        id: PlayerId,
        message: &ClientMessage<G::Wire>,
        since: std::time::Duration,
        out: &mut Outbox,
        bounded: bool,
        record: impl FnOnce(&mut RoomRecorder),
    ) -> Result<Received, ProtocolError> {
        let Some(recorder) = &mut self.recorder else {
            return self.handle(id, message, since, out);
        };
        // What a seat adds to the recording is bounded: past its
        // allowance, the message is neither recorded nor handled.
        let now = self.world.tick();
        let mut allowance = None;
        if let Some(seat) = self.seats.get_mut(&id).filter(|_| bounded) {
            let (left, at) = &mut seat.recording;
            let gained = i64::from(now.0.saturating_sub(at.0)) * i64::from(RECORD_BYTES_PER_TICK);
            *left = (*left + gained).min(i64::from(RECORD_BURST));
            *at = now;
            if *left <= 0 {
                self.stats.record_refused += 1;
                return Err(ProtocolError::new(
                    ErrorCode::RateLimited,
                    format!(
                        "more than the room's recording takes from one player \
                         ({RECORD_BYTES_PER_TICK} bytes a tick)"
                    ),
                ));
            }
            allowance = Some(left);
        }
        let before = recorder.pending();
        record(recorder);
        if let Some(left) = allowance {
            *left -= recorder.pending().saturating_sub(before) as i64;
        }
        let mark = Self::mark(out);
        let received = self.handle(id, message, since, out);
        self.sent(out, mark);
        received
    }

    /// Whether the room records itself.
    pub fn is_recorded(&self) -> bool {
        self.recorder.is_some()
    }

    fn handle(
        &mut self,
        id: PlayerId,
        message: &ClientMessage<G::Wire>,
        since: std::time::Duration,
        out: &mut Outbox,
    ) -> Result<Received, ProtocolError> {
        if !self.seats.contains_key(&id) {
            return Err(ProtocolError::new(
                ErrorCode::NotJoined,
                format!("player {id} has no seat in room {}", self.name),
            ));
        }
        match message {
            ClientMessage::Input {
                inputs,
                snapshot_ack,
                seq,
            } => {
                if let Some(seq) = seq {
                    self.world.receive_seq(id, *seq);
                }
                let binary = self
                    .seats
                    .get(&id)
                    .is_some_and(|s| s.encoding == Encoding::Compact);
                if let (Some(ack), true) = (snapshot_ack, binary) {
                    let now = self.world.tick();
                    self.viewers.entry(id).or_default().acknowledge(*ack, now);
                }
                if let Some(ack) = snapshot_ack {
                    self.world.receive_ack(id, *ack, since);
                }
                Ok(self.world.receive_at(id, inputs, since))
            }
            ClientMessage::Ping { id: probe } => {
                let pong = ServerMessage::<G>::Pong {
                    id: *probe,
                    server_tick: self.world.tick(),
                };
                let binary = self.seats.get(&id).is_some_and(|s| s.binary);
                out.send(id, control::frame_for(binary, &pong), true);
                Ok(Received::default())
            }
            ClientMessage::Hello { .. } => Err(ProtocolError::new(
                ErrorCode::AlreadyJoined,
                "hello was already accepted",
            )),
        }
    }

    /// Steps the world one tick and sends every client the new roster (if
    /// anyone joined or left), its snapshot, then the tick's hits in one
    /// events message; the new tick.
    pub fn tick(&mut self, out: &mut Outbox) -> Tick {
        let mark = Self::mark(out);
        let tick = self.step(out);
        self.sent(out, mark);
        if let Some(recorder) = &mut self.recorder {
            recorder.tick();
        }
        tick
    }

    fn step(&mut self, out: &mut Outbox) -> Tick {
        self.world.step();
        let tick = self.world.tick();
        if std::mem::take(&mut self.roster_changed) {
            self.share_roster(out);
        }
        self.world.snapshot_into(&mut self.states);
        self.share_snapshot(tick, out);
        let events = self.world.events().to_vec();
        self.share_events(&events, tick, out);
        tick
    }

    /// The `roster` message to every seat.
    fn share_roster(&self, out: &mut Outbox) {
        let roster = ServerMessage::<G>::Roster {
            players: self
                .world
                .players()
                .map(|(id, p)| RosterEntry {
                    id,
                    name: p.name().to_string(),
                })
                .collect(),
        };
        self.share_control(&roster, out);
    }

    /// A control message to every seat: the JSON text shared by the seats
    /// whose `hello` was text, the binary form by the others.
    fn share_control(&self, message: &ServerMessage<G>, out: &mut Outbox) {
        let everyone: Vec<PlayerId> = self.seats.keys().copied().collect();
        self.share_control_to(message, &everyone, out);
    }

    /// A control message to the seats `to` (in id order): the JSON text
    /// shared by those whose `hello` was text, the binary form by the
    /// others.
    fn share_control_to(&self, message: &ServerMessage<G>, to: &[PlayerId], out: &mut Outbox) {
        let to = |binary: bool| {
            to.iter()
                .copied()
                .filter(move |id| self.seats.get(id).is_some_and(|s| s.binary == binary))
        };
        let binary = to(true).next().is_some();
        // The text goes out as it always did, also to nobody (a room's
        // recording hashes every frame it sends).
        if to(false).next().is_some() || !binary {
            out.share(to(false), control::frame_for(false, message), false);
        }
        if binary {
            out.share(to(true), control::frame_for(true, message), false);
        }
    }
}

/// Where a joiner goes, as [`place`] decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement<'a> {
    /// Into this open room.
    Existing(&'a str),
    /// Into a new room (named as asked, or as the shell names new rooms).
    New,
}

/// Places a joiner among open `rooms` (name and seats taken, each with
/// `capacity` seats): into `wanted` if it is open, else a new room of that
/// name; without a wish, into the fullest room with a free seat, else a new
/// room. New rooms may be opened while fewer than `max_rooms` are open.
///
/// # Errors
/// `server_full` when the wanted room is full, or when every room is full
/// and no new one may be opened.
pub fn place<'a>(
    rooms: impl IntoIterator<Item = (&'a str, usize)>,
    wanted: Option<&str>,
    capacity: usize,
    max_rooms: usize,
) -> Result<Placement<'a>, ProtocolError> {
    let mut open = 0;
    let mut best: Option<(&'a str, usize)> = None;
    for (name, taken) in rooms {
        open += 1;
        match wanted {
            Some(w) if w == name => {
                if taken >= capacity {
                    return Err(ProtocolError::new(
                        ErrorCode::ServerFull,
                        format!("room {name} is full ({capacity} players)"),
                    ));
                }
                return Ok(Placement::Existing(name));
            }
            Some(_) => {}
            None => {
                if taken < capacity && best.is_none_or(|(_, b)| taken >= b) {
                    best = Some((name, taken));
                }
            }
        }
    }
    if let Some((name, _)) = best {
        return Ok(Placement::Existing(name));
    }
    if open >= max_rooms {
        return Err(ProtocolError::new(
            ErrorCode::ServerFull,
            format!("every room is full and the server holds at most {max_rooms} rooms"),
        ));
    }
    Ok(Placement::New)
}
