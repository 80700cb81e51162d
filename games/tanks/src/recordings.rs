//! The tank game's recordings, a room's and a page's: opened and replayed
//! with the library's generic readers and replays ([`open_room_of`],
//! [`replay_room_of`], [`open_client_of`], [`replay_client_of`]).

use crate::sim::Pose;
use crate::wire::WireInput;
use crate::Tanks;
use skirmish_core::FormatError;
use skirmish_core::SessionConfig;
use skirmish_core::{open_client_of, Calls};
use skirmish_core::{open_room_of, RoomCall, RoomCalls};
use skirmish_core::{replay_client_of, ClientReplay, ReplayError, ReplayOptions};
use skirmish_core::{replay_room_of, RoomReplayError, RoomSummary};
use skirmish_core::{Outbox, RoomConfig};

/// Opens a room recording of the tank game: the room's configuration and
/// its calls.
///
/// # Errors
/// Not a room recording, another game or version, or a damaged header.
pub fn open_room(
    bytes: &[u8],
) -> Result<(RoomConfig<Tanks>, RoomCalls<'_, WireInput>), FormatError> {
    open_room_of::<Tanks>(bytes)
}

/// Replays a room recording of the tank game (see [`replay_room_of`]).
///
/// # Errors
/// A damaged, foreign or other-version file, or the first tick that
/// differs.
pub fn replay_room(bytes: &[u8]) -> Result<RoomSummary, RoomReplayError> {
    replay_room_for(bytes, |_, _| {})
}

/// Replays a room recording of the tank game like [`replay_room`], handing
/// `watch` every call with what it made the room send.
///
/// # Errors
/// As [`replay_room`].
pub fn replay_room_for(
    bytes: &[u8],
    watch: impl FnMut(&RoomCall<WireInput>, &Outbox),
) -> Result<RoomSummary, RoomReplayError> {
    replay_room_of::<Tanks>(bytes, watch)
}

/// Opens a page's recording of the tank game: the session's configuration
/// and its calls.
///
/// # Errors
/// Not a client recording, another game or version, or a damaged header.
pub fn open_client(bytes: &[u8]) -> Result<(SessionConfig, Calls<'_, Tanks>), FormatError> {
    open_client_of::<Tanks>(bytes)
}

/// Replays a page's recording of the tank game (see [`replay_client_of`]).
///
/// # Errors
/// A damaged, foreign or other-version file, or the first frame that
/// differs.
pub fn replay_client(
    bytes: &[u8],
    options: ReplayOptions,
) -> Result<ClientReplay, ReplayError<Pose>> {
    replay_client_of::<Tanks>(bytes, options)
}
