//! The registry of open rooms: it places each joiner with core's [`place`],
//! gives it a player id, opens rooms (and their ticking task) when needed
//! and closes them once empty.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use skirmish_core::{check_room_name, Encoding, ErrorCode, PlayerId, ProtocolError, FIRST_THING};
use skirmish_core::{place, Placement, RoomEnd, Seating};

use skirmish_core::Room;
use tokio::time::Instant;

use super::handle::RoomHandle;
use super::recording::{RecordSink, Recorders};
use super::ticker::{self, TickHealth};
use super::{Hosted, Outbound, RoomInfo};
use crate::config::RoomSettings;
use crate::limits::{AddressBook, Permit};
use crate::metrics::Metrics;

/// The registry of open rooms of one game.
#[derive(Debug)]
pub struct Rooms<G: Hosted> {
    settings: RoomSettings,
    /// The game's settings every room of it is set up with.
    game: G::Settings,
    /// The length of its rooms' tick.
    cadence: Duration,
    /// Where its pages connect: `""` (at `/ws`) or a folder (`walkers`, at
    /// `/walkers/ws`); recordings of a game in a folder start with it.
    path: &'static str,
    /// The origin of every room's tick times.
    epoch: Instant,
    metrics: Arc<Metrics>,
    book: Arc<AddressBook>,
    /// `--record`: the budgets every room's recording shares.
    recorders: Option<Arc<Recorders>>,
    /// What every game's registry shares: room numbers, player ids and
    /// the process's room slots.
    slots: Arc<Slots>,
    inner: Mutex<Registry<G>>,
}

#[derive(Debug)]
struct Registry<G: Hosted> {
    rooms: BTreeMap<Arc<str>, RoomHandle<G>>,
}

/// What the registries of every game share: the numbers of rooms and the
/// ids of players (unique within the process, so that logs and recordings
/// never mix two games' rooms or players up) and the process's room slots
/// (`--max-rooms` is rooms of any game).
#[derive(Debug)]
pub struct Slots {
    max: usize,
    open: AtomicUsize,
    numbers: AtomicU64,
    /// Joins so far: the next player id is drawn from it (see
    /// [`Slots::player_id`]).
    players: AtomicU64,
}

impl Slots {
    /// At most `max` rooms open at once.
    pub fn new(max: usize) -> Slots {
        Slots {
            max,
            open: AtomicUsize::new(0),
            numbers: AtomicU64::new(0),
            players: AtomicU64::new(0),
        }
    }

    /// The id of the `n`th join: 1, 2, … up to the last below the things'
    /// range ([`FIRST_THING`]), then 1 again (after 2^31 - 1 joins).
    fn player_id(n: u64) -> PlayerId {
        PlayerId((n % u64::from(FIRST_THING - 1)) as u32 + 1)
    }

    /// Makes the next join the `n`th (a test's way to the wrap).
    #[cfg(test)]
    fn skip_to(&self, n: u64) {
        self.players.store(n, Ordering::Relaxed);
    }

    /// Takes a slot for a new room.
    ///
    /// # Errors
    /// `server_full` when the process holds its maximum of rooms.
    fn reserve(&self) -> Result<(), ProtocolError> {
        self.open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .map(|_| ())
            .map_err(|_| {
                ProtocolError::new(
                    ErrorCode::ServerFull,
                    format!(
                        "every room is full and the server holds at most {} rooms",
                        self.max
                    ),
                )
            })
    }

    /// Gives a closed room's slot back.
    fn release(&self) {
        let _ = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
    }
}

/// Who is joining, as its `hello` and its connection tell.
#[derive(Debug)]
pub struct Joiner<'a> {
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
    /// Whether its `hello` was binary (control messages go in binary).
    pub binary_control: bool,
}

impl<G: Hosted> Rooms<G> {
    /// An empty registry of rooms of `G`, each set up with `game`, whose
    /// pages connect under `path` (see [`Rooms::path`]).
    pub fn new(
        settings: RoomSettings,
        game: G::Settings,
        path: &'static str,
        shared: &super::Common,
    ) -> Arc<Rooms<G>> {
        let cadence = G::cadence(&G::start(&game).0);
        Arc::new(Rooms {
            settings,
            game,
            cadence,
            path,
            epoch: Instant::now(),
            metrics: shared.metrics.clone(),
            book: shared.book.clone(),
            recorders: shared.recorders.clone(),
            slots: shared.slots.clone(),
            inner: Mutex::new(Registry {
                rooms: BTreeMap::new(),
            }),
        })
    }

    /// Where the game's pages connect: `""` for the server's first game
    /// (`/ws`, `/wt`), else the folder of its page (`walkers`: `/walkers/ws`).
    pub fn path(&self) -> &'static str {
        self.path
    }

    pub(super) fn cadence(&self) -> Duration {
        self.cadence
    }

    fn lock(&self) -> MutexGuard<'_, Registry<G>> {
        // The registry holds no invariant a panicking holder could break.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn settings(&self) -> &RoomSettings {
        &self.settings
    }

    pub(super) fn millis(&self, at: Instant) -> u64 {
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
            .map(|r| (r.inner.health.late_by(now), r))
            .max_by_key(|(since, _)| *since)
            .map(|(since, r)| (r.name().to_string(), Duration::from_millis(since)))
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
        // The room is not open, so the rule can only answer New.
        self.place(&registry, Some(name))?;
        self.slots.reserve()?;
        self.open(&mut registry, Some(name), None);
        Ok(true)
    }

    /// Makes `room`'s task pause for `pause` before its next tick, as a
    /// room stuck in a long tick would: blocking its thread (`blocks`) or
    /// only itself; `false` if no such room is open. For tests of what
    /// watches the ticks (the Agones health pings); release builds leave
    /// it out.
    #[cfg(feature = "test-hooks")]
    pub fn hold_ticks(&self, room: &str, pause: Duration, blocks: bool) -> bool {
        let registry = self.lock();
        let Some(handle) = registry.rooms.get(room) else {
            return false;
        };
        handle.inner.health.hold(pause, blocks);
        true
    }

    /// Makes `room`'s next tick panic, as a bug in a tick would; `false` if
    /// no such room is open. For tests of a room that fails alone; release
    /// builds leave it out.
    #[cfg(feature = "test-hooks")]
    pub fn fail_next_tick(&self, room: &str) -> bool {
        let registry = self.lock();
        let Some(handle) = registry.rooms.get(room) else {
            return false;
        };
        handle.inner.health.fail_next();
        true
    }

    /// Makes the next message room `room` handles panic (a test's way to
    /// fail a room outside its tick); whether the room exists.
    #[cfg(feature = "test-hooks")]
    pub fn fail_next_message(&self, room: &str) -> bool {
        let registry = self.lock();
        let Some(handle) = registry.rooms.get(room) else {
            return false;
        };
        handle.inner.health.fail_next_message();
        true
    }

    /// Makes the next join the process's `n`th (a test's way to the wrap
    /// of player ids).
    #[cfg(test)]
    pub(super) fn skip_joins_to(&self, n: u64) {
        self.slots.skip_to(n);
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
                    game: G::NAME.to_string(),
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

    /// Gives `joiner` a player id and seats it in the room [`place`]
    /// chooses, opening it if needed; the room's `welcome` and `roster` go
    /// out through `out`.
    ///
    /// # Errors
    /// `bad_protocol` for a protocol-1 joiner unless `--allow-protocol-1`,
    /// `server_full` when no seat can be found, `address_limit` when the
    /// joiner's address holds its maximum of seats or opened rooms.
    pub fn join(
        self: &Arc<Self>,
        joiner: &Joiner<'_>,
        out: Arc<dyn Outbound>,
    ) -> Result<(RoomHandle<G>, PlayerId), ProtocolError> {
        let seating = Seating {
            encoding: joiner.encoding,
            protocol: joiner.protocol,
            datagrams: out.datagrams(),
            binary_control: joiner.binary_control,
        };
        if !seating.scheduled() && !self.settings.allow_protocol_1 {
            return Err(ProtocolError::new(
                ErrorCode::BadProtocol,
                format!(
                    "this server refuses protocol {}: its inputs are queued by the \
                     client's own ticks; speak protocol 2 (the page and the bots do), \
                     or start the server with --allow-protocol-1",
                    joiner.protocol
                ),
            ));
        }
        let mut registry = self.lock();
        let seat = self.book.seat(joiner.address)?;
        let handle = match self.place(&registry, joiner.room)? {
            Placement::Existing(name) => registry
                .rooms
                .get(name)
                .cloned()
                .ok_or_else(|| ProtocolError::new(ErrorCode::ServerFull, "the room closed"))?,
            Placement::New => {
                self.slots.reserve()?;
                // Only a room opened by name counts against the address: the
                // server opens an unnamed one only when every room is full.
                let opener = match joiner.room.map(|_| self.book.room(joiner.address)) {
                    Some(Ok(permit)) => Some(permit),
                    Some(Err(e)) => {
                        self.slots.release();
                        return Err(e);
                    }
                    None => None,
                };
                self.open(&mut registry, joiner.room, opener)
            }
        };
        // A player id is never a thing's, and never one seated in the room
        // (ids come round again after 2^31 - 1 joins); the registry's lock
        // keeps any other join out of the room meanwhile.
        let id = loop {
            let id = Slots::player_id(self.slots.players.fetch_add(1, Ordering::Relaxed));
            if !handle.seats_player(id) {
                break id;
            }
        };
        handle.seat(id, joiner.name, seating, out, seat)?;
        tracing::debug!(room = %handle.name(), %id, name = joiner.name, "player joined");
        Ok((handle, id))
    }

    /// Where core's rule puts a joiner asking for `wanted`.
    fn place<'r>(
        &self,
        registry: &'r Registry<G>,
        wanted: Option<&str>,
    ) -> Result<Placement<'r>, ProtocolError> {
        place(
            registry
                .rooms
                .iter()
                .map(|(name, r)| (&**name, r.inner.seats.load(Ordering::Relaxed))),
            wanted,
            self.settings.capacity,
            // The process's slots decide whether a room may open.
            usize::MAX,
        )
    }

    fn open(
        self: &Arc<Self>,
        registry: &mut Registry<G>,
        wanted: Option<&str>,
        opener: Option<Permit>,
    ) -> RoomHandle<G> {
        let number = self.slots.numbers.fetch_add(1, Ordering::Relaxed) + 1;
        let name: Arc<str> = match wanted {
            Some(name) => name.into(),
            None => format!("room-{number}").into(),
        };
        let config = self.settings.room_config::<G>(&name, number, &self.game);
        let record = self.recorders.as_ref().and_then(|recorders| {
            // Room numbers are the process's: no two recordings share one.
            let stem = match self.path {
                "" => name.to_string(),
                path => format!("{path}-{name}"),
            };
            recorders
                .start(number, &stem)
                .inspect_err(|e| tracing::warn!(room = %name, "not recording: {e}"))
                .ok()
        });
        let mut room = match record {
            Some(_) => Room::recorded(config),
            None => Room::new(config),
        };
        room.spread_snapshots(self.settings.snapshot_workers());
        let health = TickHealth::new(self.millis(Instant::now()), number);
        let handle = RoomHandle::new(name.clone(), room, opener, health, self.metrics.clone());
        handle.lock().record = record;
        registry.rooms.insert(name, handle.clone());
        self.metrics.rooms_changed(true);
        tokio::spawn(ticker::run(self.clone(), handle.clone(), number));
        tracing::info!(room = %handle.name(), "room opened");
        handle
    }

    /// Closes `room` if no seat is taken; `true` if it closed.
    pub(super) fn close_if_empty(&self, room: &RoomHandle<G>) -> bool {
        let mut registry = self.lock();
        if !room.lock().room.is_empty() {
            return false;
        }
        registry.rooms.remove(room.name());
        self.slots.release();
        // The writer syncs and ends on its own.
        drop(room.end(&RoomEnd::Emptied));
        self.metrics.rooms_changed(false);
        tracing::info!(room = %room.name(), "room closed after being empty");
        true
    }

    /// Closes `room`, whose tick panicked with `why`: its players are told
    /// (`room_failed`) and their seats given back, its recording ends with
    /// the failure, and it leaves the registry, so that it neither takes
    /// joiners nor holds the health pings back. Every other room goes on.
    pub(super) fn fail(&self, room: &RoomHandle<G>, why: String) {
        let mut registry = self.lock();
        if registry
            .rooms
            .get(room.name())
            .is_some_and(|r| Arc::ptr_eq(&r.inner, &room.inner))
        {
            registry.rooms.remove(room.name());
            self.slots.release();
            self.metrics.rooms_changed(false);
        }
        drop(registry);
        tracing::error!(room = %room.name(), "a tick failed; the room is closed: {why}");
        self.metrics.room_failed();
        drop(room.end(&RoomEnd::Failed(why)));
    }

    /// At shutdown, once sessions have said goodbye: closes every room in
    /// the order it opened, each recording ending with an end record; the
    /// writers still putting them on disk (see [`wait_for_writers`]).
    pub fn end_all(&self) -> Vec<std::thread::JoinHandle<()>> {
        let rooms = std::mem::take(&mut self.lock().rooms);
        let mut rooms: Vec<RoomHandle<G>> = rooms.into_values().collect();
        rooms.sort_by_key(|r| r.inner.health.number());
        rooms
            .iter()
            .filter_map(|room| {
                self.slots.release();
                self.metrics.rooms_changed(false);
                room.end(&RoomEnd::ShutDown).map(RecordSink::finish)
            })
            .collect()
    }
}

/// Waits (at most `grace`, all together) for `writers` to put their
/// recordings on disk.
pub async fn wait_for_writers(writers: Vec<std::thread::JoinHandle<()>>, grace: Duration) {
    if writers.is_empty() {
        return;
    }
    let joined = tokio::task::spawn_blocking(move || {
        for writer in writers {
            let _ = writer.join();
        }
    });
    if tokio::time::timeout(grace, joined).await.is_err() {
        tracing::warn!("recordings still being written at exit after {grace:?}");
    }
}
