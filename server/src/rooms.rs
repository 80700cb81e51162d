//! Rooms: the registry that places joiners, and the task that gives each
//! [`Room`] its time.
//!
//! Everything a client is told is decided by core's [`Room`]; this module
//! only carries it out. A room lives behind one mutex with the writers of
//! its clients: a connection calls [`RoomHandle::receive`] with each decoded
//! message (inputs are queued into the world there and then, without waking
//! the room's task), and the room's task wakes once per tick to step it.
//! Each frame the room returns is written to each recipient's socket from
//! here, one vectored write per client, its bytes shared and never copied
//! unless the socket is full ([`Writer`]); a client whose backlog is over
//! budget is dropped as a slow consumer, so no client can stall a tick or
//! grow memory without bound.
//!
//! Lock order: the registry, then a room. Joining happens under the
//! registry lock and a room closes itself (after `empty_timeout` without
//! players) only under the same lock, so a joiner never races a closing room.
//! Missed ticks are skipped, not bunched.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde::Serialize;
use skirmish_core::{
    check_room_name, ClientMessage, Encoding, ErrorCode, PlayerId, ProtocolError, Received,
};
use skirmish_core::{place, Frame, Outbox, Placement, Room, RoomConfig, Seating};
use tokio::time::{Instant, MissedTickBehavior};

use crate::config::RoomSettings;
use crate::limits::{AddressBook, Permit};
use crate::metrics::Metrics;
use crate::metrics::Reported;
use crate::socket::{SendError, Writer};
use crate::webtransport::Datagrams;

/// Where a client's frames go, whatever carries them.
#[derive(Clone, Debug)]
pub enum Sink {
    /// A WebSocket: every frame on the TCP stream, in order.
    WebSocket(Arc<Writer>),
    /// WebTransport: droppable frames as datagrams, the rest on the stream.
    WebTransport(Arc<Datagrams>),
}

impl Sink {
    /// Sends one frame; `droppable` (snapshots, pongs) may travel
    /// unreliably.
    fn send(&self, text: bool, payload: &[u8], droppable: bool) -> Result<(), SendError> {
        match self {
            Sink::WebSocket(writer) => writer.send(text, payload),
            Sink::WebTransport(datagrams) => datagrams.send(text, payload, droppable),
        }
    }

    /// The room dropped the client: tell its connection why.
    fn kick(&self, code: ErrorCode) {
        match self {
            Sink::WebSocket(writer) => writer.kick(code),
            Sink::WebTransport(datagrams) => datagrams.kick(code),
        }
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
    /// Protocol-2 inputs that arrived after their tick, since the room opened.
    pub late_inputs: u64,
    /// Ticks simulated with a player's previous input, since the room opened.
    pub repeated_inputs: u64,
    /// Shots judged at the rewind bound, since the room opened.
    pub rewind_clamped: u64,
}

/// A client of a room, as the shell keeps it.
#[derive(Debug)]
struct Client {
    sink: Sink,
    /// The address's seat, given back when the client goes.
    _seat: Permit,
}

/// A room and the writers of its clients, behind the room's mutex.
#[derive(Debug)]
struct Shared {
    room: Room,
    clients: BTreeMap<PlayerId, Client>,
    out: Outbox,
    /// The address that opened the room holds this until the room closes.
    opener: Option<Permit>,
    /// When the last tick was stepped: input slack is measured from it.
    last_tick: Option<std::time::Instant>,
    /// What the world's clock counters were at the last report.
    reported: Reported,
}

/// A connection's way into its room.
#[derive(Clone, Debug)]
pub struct RoomHandle {
    inner: Arc<RoomInner>,
}

#[derive(Debug)]
struct RoomInner {
    name: Arc<str>,
    shared: Mutex<Shared>,
    seats: AtomicUsize,
    /// When the room last finished a tick, in milliseconds since the
    /// registry's epoch (read without the room's lock, so a room stuck
    /// inside its tick can still be seen to be stuck).
    ticked: AtomicU64,
    /// The longest time between two finished ticks (milliseconds) since
    /// [`Rooms::slowest_tick`] last looked: a tick that held the thread for
    /// long is over by the time anything else runs on a one-thread runtime,
    /// so `ticked` alone would never show it.
    worst_gap: AtomicU64,
    /// A pause the room's task takes before its next tick (milliseconds,
    /// 0 for none), and whether it blocks the thread: see
    /// [`Rooms::hold_ticks`].
    hold: AtomicU64,
    hold_blocks: std::sync::atomic::AtomicBool,
    metrics: Arc<Metrics>,
}

impl RoomHandle {
    /// The room's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // A panic inside the room would be a bug in core; the room's state
        // is still the last consistent one, so carry on rather than cascade.
        self.inner
            .shared
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Hands the room one decoded message from `id`; what it answers goes
    /// to the outboxes.
    ///
    /// # Errors
    /// The room refused the message (see [`Room::receive`]).
    pub fn receive(
        &self,
        id: PlayerId,
        message: &ClientMessage,
    ) -> Result<Received, ProtocolError> {
        let mut shared = self.lock();
        let Shared {
            room,
            out,
            last_tick,
            ..
        } = &mut *shared;
        let since = last_tick.map_or(Duration::ZERO, |t| t.elapsed());
        let received = room.receive_at(id, message, since, out);
        self.deliver(&mut shared);
        if let Ok(r) = &received {
            if r.dropped > 0 {
                self.inner.metrics.dropped_inputs(r.dropped as u64);
            }
        }
        received
    }

    /// Gives `id`'s seat back (nothing if it has none).
    pub fn leave(&self, id: PlayerId) {
        self.unseat(&mut self.lock(), id);
    }

    /// Takes `id` out of the room and its clients; the client, if it was one.
    fn unseat(&self, shared: &mut Shared, id: PlayerId) -> Option<Client> {
        let client = shared.clients.remove(&id);
        if client.is_some() {
            self.inner.metrics.players_changed(false);
        }
        shared.room.leave(id);
        self.inner.seats.store(shared.room.len(), Ordering::Relaxed);
        client
    }

    /// Steps the room one tick and sends what it decided; whether the room
    /// is empty. The room's decision and the writes are timed apart.
    fn step(&self) -> bool {
        let mut shared = self.lock();
        let started = std::time::Instant::now();
        shared.last_tick = Some(started);
        let Shared { room, out, .. } = &mut *shared;
        room.tick(out);
        let decided = std::time::Instant::now();
        self.inner.metrics.tick(decided - started);
        let Shared { room, reported, .. } = &mut *shared;
        self.inner
            .metrics
            .timing
            .add(room.world().stats(), reported);
        self.deliver(&mut shared);
        self.inner.metrics.tick_sent(decided.elapsed());
        shared.room.is_empty()
    }

    /// Writes each frame of the outbox to each recipient's socket (and
    /// empties the outbox, keeping its buffers); drops whoever is not
    /// keeping up.
    fn deliver(&self, shared: &mut Shared) {
        if shared.out.is_empty() {
            return;
        }
        let mut gone = Vec::new();
        let (mut count, mut bytes) = (0, 0);
        for &(to, i) in shared.out.deliveries() {
            let droppable = shared.out.droppable(i);
            let (Some(client), Some(frame)) = (shared.clients.get(&to), shared.out.frames().get(i))
            else {
                continue;
            };
            let (text, payload) = match frame {
                Frame::Text(text) => (true, text.as_bytes()),
                Frame::Binary(bytes) => (false, bytes.as_slice()),
            };
            match client.sink.send(text, payload, droppable) {
                Ok(()) => {
                    count += 1;
                    bytes += payload.len();
                }
                Err(e) => gone.push((to, e)),
            }
        }
        shared.out.clear();
        self.inner.metrics.sent_many(count, bytes);
        for (id, why) in gone {
            let Some(client) = self.unseat(shared, id) else {
                continue;
            };
            if why == SendError::Slow {
                tracing::info!(room = %self.inner.name, %id, "slow consumer dropped");
                client.sink.kick(ErrorCode::SlowConsumer);
            }
        }
    }
}

/// The registry of open rooms.
#[derive(Debug)]
pub struct Rooms {
    settings: RoomSettings,
    /// The origin of every room's `ticked`.
    epoch: Instant,
    metrics: Arc<Metrics>,
    book: Arc<AddressBook>,
    inner: Mutex<Registry>,
}

#[derive(Debug, Default)]
struct Registry {
    rooms: BTreeMap<Arc<str>, RoomHandle>,
    opened: u64,
}

/// Who is joining, as the connection knows it.
#[derive(Debug)]
pub struct Joiner<'a> {
    /// The new player's id.
    pub id: PlayerId,
    /// Display name.
    pub name: &'a str,
    /// A room asked for by name.
    pub room: Option<&'a str>,
    /// How it wants snapshots.
    pub encoding: Encoding,
    /// The protocol its `hello` asked for.
    pub protocol: u32,
    /// Its source address.
    pub address: IpAddr,
}

impl Rooms {
    /// An empty registry.
    pub fn new(
        settings: RoomSettings,
        metrics: Arc<Metrics>,
        book: Arc<AddressBook>,
    ) -> Arc<Rooms> {
        Arc::new(Rooms {
            settings,
            epoch: Instant::now(),
            metrics,
            book,
            inner: Mutex::new(Registry::default()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        // The registry holds no invariant a panicking holder could break.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn millis(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_millis() as u64
    }

    /// The room that has gone longest without finishing a tick, and for
    /// how long: the longer of its current wait (as of `now`) and its
    /// longest gap between two ticks since the last call, which this call
    /// forgets. `None` without rooms.
    pub fn slowest_tick(&self, now: Instant) -> Option<(String, Duration)> {
        let now = self.millis(now);
        self.lock()
            .rooms
            .values()
            .map(|r| {
                let waiting = now.saturating_sub(r.inner.ticked.load(Ordering::Relaxed));
                let gap = r.inner.worst_gap.swap(0, Ordering::Relaxed);
                (waiting.max(gap), r)
            })
            .max_by_key(|(since, _)| *since)
            .map(|(since, r)| (r.name().to_string(), Duration::from_millis(since)))
    }

    /// Most rooms this server opens, and seats in each.
    pub fn limits(&self) -> (usize, usize) {
        (self.settings.max_rooms, self.settings.capacity)
    }

    /// Opens an empty room called `name` for players who are on their way
    /// (an orchestrator allocated it); `false` if it is already open. Like
    /// any room it closes after `empty_timeout` without players.
    ///
    /// # Errors
    /// `server_full` when the server holds its maximum of rooms;
    /// `bad_name` for a name `hello` would refuse.
    pub fn open_named(self: &Arc<Self>, name: &str) -> Result<bool, ProtocolError> {
        check_room_name(name)?;
        let mut registry = self.lock();
        if registry.rooms.contains_key(name) {
            return Ok(false);
        }
        // The room is not open, so the rule can only answer New or full.
        place(
            registry
                .rooms
                .iter()
                .map(|(n, r)| (&**n, r.inner.seats.load(Ordering::Relaxed))),
            Some(name),
            self.settings.capacity,
            self.settings.max_rooms,
        )?;
        self.open(&mut registry, Some(name), None);
        Ok(true)
    }

    /// Makes `room`'s task pause for `pause` before its next tick, as a
    /// room stuck in a long tick would: blocking its thread (`blocks`) or
    /// only itself; `false` if no such room is open. For tests of what
    /// watches the ticks (the Agones health pings).
    #[doc(hidden)]
    pub fn hold_ticks(&self, room: &str, pause: Duration, blocks: bool) -> bool {
        let registry = self.lock();
        let Some(handle) = registry.rooms.get(room) else {
            return false;
        };
        handle.inner.hold_blocks.store(blocks, Ordering::Relaxed);
        handle
            .inner
            .hold
            .store(pause.as_millis().max(1) as u64, Ordering::Relaxed);
        true
    }

    /// Every open room, by name.
    pub fn list(&self) -> Vec<RoomInfo> {
        self.lock()
            .rooms
            .values()
            .map(|r| {
                // Lock order: the registry, then one room.
                let stats = *r.lock().room.world().stats();
                RoomInfo {
                    name: r.name().to_string(),
                    players: r.inner.seats.load(Ordering::Relaxed),
                    capacity: self.settings.capacity,
                    late_inputs: stats.late_inputs,
                    repeated_inputs: stats.repeated_inputs,
                    rewind_clamped: stats.rewind_clamped,
                }
            })
            .collect()
    }

    /// Seats `joiner` in the room [`place`] chooses, opening it if needed;
    /// the room writes `welcome` and `roster` through `sink`.
    ///
    /// # Errors
    /// `server_full` when no seat can be found, `address_limit` when the
    /// joiner's address holds its maximum of seats or opened rooms.
    pub fn join(
        self: &Arc<Self>,
        joiner: &Joiner<'_>,
        sink: Sink,
    ) -> Result<RoomHandle, ProtocolError> {
        let mut registry = self.lock();
        let seat = self.book.seat(joiner.address)?;
        let placement = place(
            registry
                .rooms
                .iter()
                .map(|(name, r)| (&**name, r.inner.seats.load(Ordering::Relaxed))),
            joiner.room,
            self.settings.capacity,
            self.settings.max_rooms,
        )?;
        let handle = match placement {
            Placement::Existing(name) => registry
                .rooms
                .get(name)
                .cloned()
                .ok_or_else(|| ProtocolError::new(ErrorCode::ServerFull, "the room closed"))?,
            Placement::New => {
                // Only a room opened by name counts against the address: the
                // server opens an unnamed one only when every room is full.
                let opener = match joiner.room {
                    Some(_) => Some(self.book.room(joiner.address)?),
                    None => None,
                };
                self.open(&mut registry, joiner.room, opener)
            }
        };
        let mut shared = handle.lock();
        let Shared { room, out, .. } = &mut *shared;
        let seating = Seating {
            encoding: joiner.encoding,
            protocol: joiner.protocol,
        };
        room.join(joiner.id, joiner.name, seating, out)?;
        shared
            .clients
            .insert(joiner.id, Client { sink, _seat: seat });
        self.metrics.players_changed(true);
        handle
            .inner
            .seats
            .store(shared.room.len(), Ordering::Relaxed);
        handle.deliver(&mut shared);
        drop(shared);
        tracing::debug!(room = %handle.name(), id = %joiner.id, name = joiner.name, "player joined");
        Ok(handle)
    }

    fn open(
        self: &Arc<Self>,
        registry: &mut Registry,
        wanted: Option<&str>,
        opener: Option<Permit>,
    ) -> RoomHandle {
        registry.opened += 1;
        let number = registry.opened;
        let name: Arc<str> = match wanted {
            Some(name) => name.into(),
            None => format!("room-{number}").into(),
        };
        let room = Room::new(RoomConfig {
            name: name.to_string(),
            capacity: self.settings.capacity,
            sim: self.settings.sim(),
            seed: self.settings.seed.wrapping_add(number),
            interest: self.settings.interest(),
            ..RoomConfig::default()
        });
        let handle = RoomHandle {
            inner: Arc::new(RoomInner {
                name: name.clone(),
                shared: Mutex::new(Shared {
                    room,
                    clients: BTreeMap::new(),
                    out: Outbox::new(),
                    opener,
                    last_tick: None,
                    reported: Reported::default(),
                }),
                seats: AtomicUsize::new(0),
                ticked: AtomicU64::new(self.millis(Instant::now())),
                worst_gap: AtomicU64::new(0),
                hold: AtomicU64::new(0),
                hold_blocks: std::sync::atomic::AtomicBool::new(false),
                metrics: self.metrics.clone(),
            }),
        };
        registry.rooms.insert(name, handle.clone());
        self.metrics.rooms_changed(true);
        tokio::spawn(run_room(self.clone(), handle.clone(), number));
        tracing::info!(room = %handle.name(), "room opened");
        handle
    }

    /// Closes `room` if no seat is taken; `true` if it closed.
    fn close_if_empty(&self, room: &RoomHandle) -> bool {
        let mut registry = self.lock();
        let mut shared = room.lock();
        if !shared.room.is_empty() {
            return false;
        }
        shared.opener = None;
        registry.rooms.remove(room.name());
        self.metrics.rooms_changed(false);
        tracing::info!(room = %room.name(), "room closed after being empty");
        true
    }
}

/// How many tick phases rooms are spread over.
const PHASES: u64 = 16;

/// Gives a room its time: one step per tick until it closes.
async fn run_room(rooms: Arc<Rooms>, handle: RoomHandle, number: u64) {
    let cadence = rooms.settings.sim().cadence();
    // Rooms tick at staggered phases (room n at n/16 of the cadence), so
    // that their sends do not all fall at one instant, each room's clients
    // get their frames at the same point of every period.
    let phase = cadence.mul_f64((number % PHASES) as f64 / PHASES as f64);
    let mut interval = tokio::time::interval_at(Instant::now() + phase, cadence);
    interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut empty_since = Instant::now();
    loop {
        interval.tick().await;
        let hold = handle.inner.hold.swap(0, Ordering::Relaxed);
        if hold > 0 {
            let hold = Duration::from_millis(hold);
            if handle.inner.hold_blocks.load(Ordering::Relaxed) {
                std::thread::sleep(hold);
            } else {
                tokio::time::sleep(hold).await;
            }
        }
        let empty = handle.step();
        let finished = Instant::now();
        let at = rooms.millis(finished);
        let previous = handle.inner.ticked.swap(at, Ordering::Relaxed);
        handle
            .inner
            .worst_gap
            .fetch_max(at.saturating_sub(previous), Ordering::Relaxed);
        if !empty {
            empty_since = finished;
        } else if empty_since.elapsed() >= rooms.settings.empty_timeout
            && rooms.close_if_empty(&handle)
        {
            return;
        }
    }
}
