//! Rooms: the registry that places joiners and hands out player ids, the
//! handle a session uses to reach its room, and the task that gives each
//! room (the library's `Room` of the [`Game`](crate::game::Game)) its time.
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

use serde::Serialize;
use skirmish_core::ErrorCode;

pub use handle::RoomHandle;
pub use registry::{Joiner, Rooms};

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
