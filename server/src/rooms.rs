//! Rooms: one process hosts many arenas, each with its own [`World`] and its
//! own tick task.
//!
//! The registry ([`Rooms`]) places joiners: into the named room, or into the
//! fullest room with space, or into a new one, up to `max_rooms`. A seat is
//! reserved under the registry lock before the joiner reaches the room, and a
//! room closes itself (after `empty_room_timeout` without players) only under
//! the same lock when no seat is taken, so a joiner never races a closing room.
//!
//! Each room task owns its world and its clients' outboxes. Every tick it
//! steps the world, encodes one snapshot (and one `combat` message if there
//! were hits) and offers the same bytes to every client with `try_send`: a
//! client whose bounded outbox is full is disconnected as a slow consumer, so
//! no client can stall the tick or grow memory without bound. Missed ticks
//! are skipped, not bunched: if a tick overruns, the next one starts at the
//! next 50 ms boundary and the world's tick counter simply advances once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::extract::ws::{Message, Utf8Bytes};
use serde::Serialize;
use skirmish_core::{
    compact, encode, ErrorCode, PlayerId, PlayerState, ProtocolError, RosterEntry, ServerMessage,
    SimConfig, Tick, WireInput, World, PROTOCOL_VERSION,
};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Instant, MissedTickBehavior};

use crate::metrics::Metrics;

/// How a room is set up.
#[derive(Clone, Debug)]
pub struct RoomSettings {
    /// Players per room.
    pub capacity: usize,
    /// Rooms per process.
    pub max_rooms: usize,
    /// The movement constants every room uses.
    pub sim: SimConfig,
    /// The seed of the first room; room `n` uses `seed + n`.
    pub seed: u64,
    /// A room without players for this long closes.
    pub empty_timeout: Duration,
}

/// What a connection holds to talk to its client: the bounded outbox the
/// room fills, and the signal the room fires to disconnect it.
#[derive(Debug)]
pub struct ClientLink {
    /// Encoded frames for this client.
    pub outbox: mpsc::Sender<Message>,
    /// Whether snapshots go as compact binary frames.
    pub compact: bool,
    /// Fired with the reason when the room drops the client.
    pub kick: oneshot::Sender<ErrorCode>,
}

/// What a connection sends its room.
#[derive(Debug)]
pub enum Command {
    /// Take the reserved seat.
    Join {
        /// The new player's id.
        id: PlayerId,
        /// Display name.
        name: String,
        /// Where the room sends this player's messages.
        link: ClientLink,
    },
    /// The connection ended.
    Leave {
        /// Who left.
        id: PlayerId,
    },
    /// Inputs, already checked by the protocol decoder.
    Inputs {
        /// Whose.
        id: PlayerId,
        /// The inputs.
        inputs: Vec<WireInput>,
    },
}

/// A connection's way into a room.
#[derive(Clone, Debug)]
pub struct RoomHandle {
    name: Arc<str>,
    commands: mpsc::Sender<Command>,
    seats: Arc<AtomicUsize>,
    tick: Arc<AtomicU32>,
}

impl RoomHandle {
    /// The room's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The room's last stepped tick.
    pub fn tick(&self) -> Tick {
        Tick(self.tick.load(Ordering::Relaxed))
    }

    /// Takes the reserved seat; the room answers with `welcome` in `link`.
    ///
    /// # Errors
    /// The room is gone (cannot happen while the seat is reserved).
    pub async fn join(&self, id: PlayerId, name: String, link: ClientLink) -> Result<(), ()> {
        self.commands
            .send(Command::Join { id, name, link })
            .await
            .map_err(|_| ())
    }

    /// Gives the seat back. Never fails: a gone room has no seat to give.
    pub async fn leave(&self, id: PlayerId) {
        let _ = self.commands.send(Command::Leave { id }).await;
    }

    /// Offers inputs without waiting; `false` if the room is too busy and
    /// they were dropped.
    pub fn inputs(&self, id: PlayerId, inputs: Vec<WireInput>) -> bool {
        self.commands
            .try_send(Command::Inputs { id, inputs })
            .is_ok()
    }
}

/// One row of `GET /rooms`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoomInfo {
    /// The room's name.
    pub name: String,
    /// Seats taken.
    pub players: usize,
    /// Seats in all.
    pub capacity: usize,
}

/// The registry of open rooms.
#[derive(Debug)]
pub struct Rooms {
    settings: RoomSettings,
    metrics: Arc<Metrics>,
    inner: Mutex<Registry>,
}

#[derive(Debug, Default)]
struct Registry {
    rooms: BTreeMap<Arc<str>, RoomHandle>,
    opened: u64,
}

/// Commands a room buffers; a connection's inputs beyond this are dropped.
const COMMAND_QUEUE: usize = 4096;

impl Rooms {
    /// An empty registry.
    pub fn new(settings: RoomSettings, metrics: Arc<Metrics>) -> Arc<Rooms> {
        Arc::new(Rooms {
            settings,
            metrics,
            inner: Mutex::new(Registry::default()),
        })
    }

    /// The settings rooms are opened with.
    pub fn settings(&self) -> &RoomSettings {
        &self.settings
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        // The registry holds no invariant a panicking holder could break.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Every open room, by name.
    pub fn list(&self) -> Vec<RoomInfo> {
        self.lock()
            .rooms
            .values()
            .map(|r| RoomInfo {
                name: r.name.to_string(),
                players: r.seats.load(Ordering::Relaxed),
                capacity: self.settings.capacity,
            })
            .collect()
    }

    /// Reserves a seat: in `wanted` if given, else in the fullest room with
    /// space, else in a new room.
    ///
    /// # Errors
    /// `server_full` when the room (or every room) is full and no new room
    /// may be opened.
    pub fn reserve(self: &Arc<Self>, wanted: Option<&str>) -> Result<RoomHandle, ProtocolError> {
        let capacity = self.settings.capacity;
        let mut registry = self.lock();
        let found = match wanted {
            Some(name) => registry.rooms.get(name).cloned(),
            None => registry
                .rooms
                .values()
                .filter(|r| r.seats.load(Ordering::Relaxed) < capacity)
                .max_by_key(|r| r.seats.load(Ordering::Relaxed))
                .cloned(),
        };
        if let Some(room) = found {
            if room.seats.load(Ordering::Relaxed) >= capacity {
                return Err(ProtocolError::new(
                    ErrorCode::ServerFull,
                    format!("room {} is full ({capacity} players)", room.name),
                ));
            }
            room.seats.fetch_add(1, Ordering::Relaxed);
            return Ok(room);
        }
        if registry.rooms.len() >= self.settings.max_rooms {
            return Err(ProtocolError::new(
                ErrorCode::ServerFull,
                format!(
                    "every room is full and the server holds at most {} rooms",
                    self.settings.max_rooms
                ),
            ));
        }
        registry.opened += 1;
        let number = registry.opened;
        let name: Arc<str> = match wanted {
            Some(name) => name.into(),
            None => format!("room-{number}").into(),
        };
        let (commands, receiver) = mpsc::channel(COMMAND_QUEUE);
        let handle = RoomHandle {
            name: name.clone(),
            commands,
            seats: Arc::new(AtomicUsize::new(1)),
            tick: Arc::new(AtomicU32::new(0)),
        };
        registry.rooms.insert(name, handle.clone());
        self.metrics.rooms_changed(true);
        let world = World::new(
            self.settings.sim.clone(),
            self.settings.seed.wrapping_add(number),
        );
        tokio::spawn(run_room(self.clone(), handle.clone(), receiver, world));
        tracing::info!(room = %handle.name, "room opened");
        Ok(handle)
    }

    /// Closes `room` if no seat is taken; `true` if it closed.
    fn close_if_empty(&self, room: &RoomHandle) -> bool {
        let mut registry = self.lock();
        if room.seats.load(Ordering::Relaxed) > 0 {
            return false;
        }
        registry.rooms.remove(&room.name);
        self.metrics.rooms_changed(false);
        tracing::info!(room = %room.name, "room closed after being empty");
        true
    }
}

/// A room's clients, in id order.
type Clients = BTreeMap<PlayerId, ClientLink>;

async fn run_room(
    rooms: Arc<Rooms>,
    handle: RoomHandle,
    mut commands: mpsc::Receiver<Command>,
    mut world: World,
) {
    let metrics = rooms.metrics.clone();
    let cadence = world.sim_config().cadence();
    let mut interval = tokio::time::interval(cadence);
    interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut clients = Clients::new();
    let mut empty_since = Instant::now();
    let mut snapshot = Vec::new();
    loop {
        tokio::select! {
            _ = interval.tick() => {
                let started = std::time::Instant::now();
                world.step();
                handle.tick.store(world.tick().0, Ordering::Relaxed);
                world.snapshot_into(&mut snapshot);
                let mut slow = broadcast_snapshot(&clients, world.tick(), &mut snapshot, world.sim_config());
                if !world.events().is_empty() {
                    let combat = ServerMessage::Combat { events: world.events().to_vec() };
                    slow.extend(broadcast(&clients, &encode(&combat)));
                }
                drop_slow(&mut world, &mut clients, &handle, &metrics, slow);
                metrics.tick(started.elapsed());
                if clients.is_empty() {
                    if empty_since.elapsed() >= rooms.settings.empty_timeout && rooms.close_if_empty(&handle) {
                        return;
                    }
                } else {
                    empty_since = Instant::now();
                }
            }
            command = commands.recv() => match command {
                Some(Command::Join { id, name, link }) => {
                    if let Err(e) = world.join(id, &name) {
                        tracing::warn!(%id, "join refused: {e}");
                        handle.seats.fetch_sub(1, Ordering::Relaxed);
                        continue;
                    }
                    let welcome = ServerMessage::Welcome {
                        player_id: id,
                        protocol: PROTOCOL_VERSION,
                        server_tick: world.tick(),
                        tick_ms: world.sim_config().tick_ms,
                        room: handle.name.to_string(),
                        config: world.sim_config().clone(),
                    };
                    // A fresh outbox always has room for the welcome.
                    let _ = link.outbox.try_send(Message::Text(encode(&welcome).into()));
                    clients.insert(id, link);
                    metrics.players_changed(true);
                    let slow = broadcast(&clients, &roster(&world));
                    drop_slow(&mut world, &mut clients, &handle, &metrics, slow);
                    tracing::debug!(room = %handle.name, %id, %name, "player joined");
                }
                Some(Command::Leave { id }) => {
                    if drop_client(&mut world, &mut clients, &handle, &metrics, id, None) {
                        let slow = broadcast(&clients, &roster(&world));
                    drop_slow(&mut world, &mut clients, &handle, &metrics, slow);
                    }
                }
                Some(Command::Inputs { id, inputs }) => {
                    let received = world.receive(id, &inputs);
                    if received.dropped > 0 {
                        metrics.dropped_inputs(received.dropped as u64);
                    }
                }
                // The registry keeps a sender while the room is open.
                None => return,
            },
        }
    }
}

/// Offers `text` to every client; returns those whose outbox is full.
fn broadcast(clients: &Clients, text: &str) -> Vec<PlayerId> {
    let text = Utf8Bytes::from(text);
    clients
        .iter()
        .filter(|(_, link)| !offer(link, Message::Text(text.clone())))
        .map(|(&id, _)| id)
        .collect()
}

/// Offers a message without waiting; `false` if the outbox is full.
fn offer(link: &ClientLink, message: Message) -> bool {
    !matches!(
        link.outbox.try_send(message),
        Err(mpsc::error::TrySendError::Full(_))
    )
}

/// Sends this tick's snapshot to every client in its encoding: the JSON text
/// and the compact tail are each encoded once; a compact frame adds only the
/// recipient's exact own state. Returns the clients whose outbox is full.
fn broadcast_snapshot(
    clients: &Clients,
    tick: Tick,
    players: &mut Vec<PlayerState>,
    config: &SimConfig,
) -> Vec<PlayerId> {
    let message = ServerMessage::Snapshot {
        server_tick: tick,
        players: std::mem::take(players),
    };
    let json = clients
        .values()
        .any(|l| !l.compact)
        .then(|| Utf8Bytes::from(encode(&message)));
    if let ServerMessage::Snapshot { players: back, .. } = message {
        *players = back;
    }
    let mut tail = Vec::new();
    if clients.values().any(|l| l.compact) {
        compact::encode_tail(players, config, &mut tail);
    }
    let mut slow = Vec::new();
    for (&id, link) in clients {
        let message = if let (Some(text), false) = (&json, link.compact) {
            Message::Text(text.clone())
        } else {
            let Ok(at) = players.binary_search_by_key(&id, |p| p.id) else {
                continue;
            };
            let mut frame = Vec::with_capacity(compact::HEAD_BYTES + tail.len());
            compact::encode_head(tick, &players[at], &mut frame);
            frame.extend_from_slice(&tail);
            Message::Binary(frame.into())
        };
        if !offer(link, message) {
            slow.push(id);
        }
    }
    slow
}

/// The room's `roster` message, encoded.
fn roster(world: &World) -> String {
    encode(&ServerMessage::Roster {
        players: world
            .players()
            .map(|(id, p)| RosterEntry {
                id,
                name: p.name().to_string(),
            })
            .collect(),
    })
}

/// Disconnects the slow consumers among `ids`, and tells the others who left.
fn drop_slow(
    world: &mut World,
    clients: &mut Clients,
    handle: &RoomHandle,
    metrics: &Metrics,
    ids: Vec<PlayerId>,
) {
    let mut dropped = false;
    for id in ids {
        dropped |= drop_client(
            world,
            clients,
            handle,
            metrics,
            id,
            Some(ErrorCode::SlowConsumer),
        );
    }
    if dropped {
        // Whoever is slow now is dropped on the next tick's broadcast.
        broadcast(clients, &roster(world));
    }
}

/// Removes a player; `true` if it was a client of this room.
fn drop_client(
    world: &mut World,
    clients: &mut Clients,
    handle: &RoomHandle,
    metrics: &Metrics,
    id: PlayerId,
    reason: Option<ErrorCode>,
) -> bool {
    world.leave(id);
    let Some(link) = clients.remove(&id) else {
        return false;
    };
    handle.seats.fetch_sub(1, Ordering::Relaxed);
    metrics.players_changed(false);
    if let Some(code) = reason {
        tracing::info!(room = %handle.name, %id, %code, "player dropped");
        let _ = link.kick.send(code);
    }
    true
}
