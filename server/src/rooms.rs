//! Rooms: the registry that places joiners and hands out player ids, the
//! handle a session uses to reach its room, and the task that gives each
//! room (the library's `Room` of a [`Hosted`] game) its time. [`Games`] holds
//! the registries of every game the server hosts.
//!
//! Everything a client is told is decided by core's `Room`; this module only
//! carries it out. A room lives behind one mutex with the outbounds of its
//! clients: a session calls [`RoomHandle::receive`] with each decoded message
//! (inputs are queued into the world there and then, without waking the
//! room's task), and the room's task wakes once per tick to step it. Each
//! frame the room returns goes to each recipient through its [`Outbound`],
//! its bytes shared and never copied here; a client whose backlog is over
//! budget is dropped as a slow consumer, so no client can stall a tick or
//! grow memory without bound.
//!
//! Rooms never name a transport: [`Outbound`] is the trait each transport
//! implements (the side that consumes a trait owns it).
//!
//! Lock order: the registry, then a room. Joining happens under the
//! registry lock and a room closes itself (after `empty_timeout` without
//! players) only under the same lock, so a joiner never races a closing room.

mod handle;
mod recording;
mod registry;
#[cfg(test)]
mod tests;
mod ticker;

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use skirmish_core::{ErrorCode, ProtocolError};

pub use handle::RoomHandle;
pub use recording::Recorders;
pub use registry::{wait_for_writers, Joiner, Rooms, Slots};

use crate::config::RoomSettings;
pub use crate::game::Hosted;
use crate::limits::AddressBook;
use crate::metrics::Metrics;

/// What the rooms of every game share: the counters, the per-address book
/// and the recordings' budgets.
#[derive(Clone, Debug)]
pub struct Common {
    /// The counters.
    pub metrics: Arc<Metrics>,
    /// What each address holds.
    pub book: Arc<AddressBook>,
    /// `--record`: the budgets every room's recording shares.
    pub recorders: Option<Arc<Recorders>>,
    /// Room numbers, player ids and the process's `--max-rooms`.
    pub slots: Arc<Slots>,
}

impl Common {
    /// What the rooms of a server configured with `settings` share.
    pub fn new(settings: &RoomSettings, metrics: Arc<Metrics>, book: Arc<AddressBook>) -> Common {
        let recorders = settings
            .record
            .dir
            .clone()
            .map(|dir| Recorders::new(settings.record.clone(), dir, metrics.clone()));
        Common {
            metrics,
            book,
            recorders,
            slots: Arc::new(Slots::new(settings.max_rooms)),
        }
    }
}

/// Why a frame could not be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The client does not read: its backlog is over budget or too old.
    Slow,
    /// The connection is over.
    Closed,
}

/// Where one client's frames go, whatever carries them.
pub trait Outbound: Send + Sync + std::fmt::Debug {
    /// Sends one frame (`text` or binary) without waiting; `droppable`
    /// frames (snapshots, pongs) may travel unreliably.
    ///
    /// # Errors
    /// [`SendError::Slow`] when the client's backlog is over budget (nothing
    /// is queued then), [`SendError::Closed`] when the connection is gone.
    fn send(&self, text: bool, payload: &[u8], droppable: bool) -> Result<(), SendError>;

    /// The room dropped the client: its session should end, telling it why.
    fn kick(&self, code: ErrorCode);

    /// Whether droppable frames travel as datagrams (WebTransport): the
    /// room then echoes a compact client's own block half a tick after
    /// each snapshot.
    fn datagrams(&self) -> bool {
        false
    }
}

/// One row of `GET /rooms`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoomInfo {
    /// The room's game (its name as a `hello` carries it).
    pub game: String,
    /// The room's name (unique within its game).
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

/// A registry of any game, as what spans games sees it: listing, health,
/// allocation and shutdown.
pub trait AnyRooms: Send + Sync + std::fmt::Debug {
    /// Where its pages connect (see [`Rooms::path`]).
    fn path(&self) -> &'static str;
    /// The game's name (`Game::NAME`).
    fn game(&self) -> &'static str;
    /// Every open room, by name.
    fn list(&self) -> Vec<RoomInfo>;
    /// See [`Rooms::slowest_tick`].
    fn slowest_tick(&self, now: tokio::time::Instant) -> Option<(String, Duration)>;
    /// See [`Rooms::open_named`].
    ///
    /// # Errors
    /// As [`Rooms::open_named`].
    fn open_named(self: Arc<Self>, name: &str) -> Result<bool, ProtocolError>;
    /// See [`Rooms::end_all`].
    fn end_all(&self) -> Vec<std::thread::JoinHandle<()>>;
    /// See [`Rooms::hold_ticks`].
    #[cfg(feature = "test-hooks")]
    fn hold_ticks(&self, room: &str, pause: Duration, blocks: bool) -> bool;
    /// See [`Rooms::fail_next_tick`].
    #[cfg(feature = "test-hooks")]
    fn fail_next_tick(&self, room: &str) -> bool;
    /// See [`Rooms::fail_next_message`].
    #[cfg(feature = "test-hooks")]
    fn fail_next_message(&self, room: &str) -> bool;
}

impl<G: Hosted> AnyRooms for Rooms<G> {
    fn path(&self) -> &'static str {
        Rooms::path(self)
    }
    fn game(&self) -> &'static str {
        G::NAME
    }
    fn list(&self) -> Vec<RoomInfo> {
        Rooms::list(self)
    }
    fn slowest_tick(&self, now: tokio::time::Instant) -> Option<(String, Duration)> {
        Rooms::slowest_tick(self, now)
    }
    fn open_named(self: Arc<Self>, name: &str) -> Result<bool, ProtocolError> {
        Rooms::open_named(&self, name)
    }
    fn end_all(&self) -> Vec<std::thread::JoinHandle<()>> {
        Rooms::end_all(self)
    }
    #[cfg(feature = "test-hooks")]
    fn hold_ticks(&self, room: &str, pause: Duration, blocks: bool) -> bool {
        Rooms::hold_ticks(self, room, pause, blocks)
    }
    #[cfg(feature = "test-hooks")]
    fn fail_next_tick(&self, room: &str) -> bool {
        Rooms::fail_next_tick(self, room)
    }
    #[cfg(feature = "test-hooks")]
    fn fail_next_message(&self, room: &str) -> bool {
        Rooms::fail_next_message(self, room)
    }
}

/// The registries of every game the server hosts, the first at the
/// server's root (`/ws`).
#[derive(Debug)]
pub struct Games {
    games: Vec<Arc<dyn AnyRooms>>,
}

impl Games {
    /// The registries of `games`, the first at the root.
    pub fn new(games: Vec<Arc<dyn AnyRooms>>) -> Games {
        Games { games }
    }

    /// The registry of the game `name`d by its `Game::NAME` or its path;
    /// the first game's without a name.
    pub fn named(&self, name: Option<&str>) -> Option<&Arc<dyn AnyRooms>> {
        match name {
            None => self.games.first(),
            Some(name) => self
                .games
                .iter()
                .find(|g| g.game() == name || g.path() == name),
        }
    }

    /// Every game's registry.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn AnyRooms>> {
        self.games.iter()
    }

    /// Every open room of every game, the first game's first.
    pub fn list(&self) -> Vec<RoomInfo> {
        self.games.iter().flat_map(|g| g.list()).collect()
    }

    /// The room of any game that has gone longest without finishing a
    /// tick (see [`Rooms::slowest_tick`]).
    pub fn slowest_tick(&self, now: tokio::time::Instant) -> Option<(String, Duration)> {
        self.games
            .iter()
            .filter_map(|g| g.slowest_tick(now))
            .max_by_key(|(_, late)| *late)
    }

    /// The registry of the room named `listed`: `name` for the first
    /// game's, `folder/name` for another's; and the room's name within it.
    #[cfg(feature = "test-hooks")]
    fn of<'a>(&self, listed: &'a str) -> Option<(&Arc<dyn AnyRooms>, &'a str)> {
        match listed.split_once('/') {
            Some((path, room)) => self
                .games
                .iter()
                .find(|g| g.path() == path)
                .map(|g| (g, room)),
            None => self.games.first().map(|g| (g, listed)),
        }
    }

    /// See [`Rooms::hold_ticks`]; `folder/name` for a room of the game in
    /// `folder`.
    #[cfg(feature = "test-hooks")]
    pub fn hold_ticks(&self, room: &str, pause: Duration, blocks: bool) -> bool {
        self.of(room)
            .is_some_and(|(game, room)| game.hold_ticks(room, pause, blocks))
    }

    /// See [`Rooms::fail_next_tick`]; `folder/name` for a room of the game
    /// in `folder`.
    #[cfg(feature = "test-hooks")]
    pub fn fail_next_tick(&self, room: &str) -> bool {
        self.of(room)
            .is_some_and(|(game, room)| game.fail_next_tick(room))
    }

    /// See [`Rooms::fail_next_message`]; `folder/name` for a room of the
    /// game in `folder`.
    #[cfg(feature = "test-hooks")]
    pub fn fail_next_message(&self, room: &str) -> bool {
        self.of(room)
            .is_some_and(|(game, room)| game.fail_next_message(room))
    }

    /// Closes every room of every game (see [`Rooms::end_all`]), then waits
    /// (at most `grace`, all games together) for their recordings to reach
    /// the disk.
    pub async fn close_all(&self, grace: Duration) {
        let writers = self.games.iter().flat_map(|g| g.end_all()).collect();
        wait_for_writers(writers, grace).await;
    }
}
