//! The platform-free heart of Skirmish: everything the browser client and the
//! authoritative server both compute lives here, once.
//!
//! The mental model in three sentences. The server owns the truth and steps
//! every player with [`simulate`] at a fixed cadence (50 ms by default). The
//! client runs the very same function on its own inputs right away
//! ([`LocalPlayer::predict`](LocalPlayer)) and keeps them in a bounded [`PendingInputs`]
//! buffer until the server acknowledges them; when an authoritative
//! [`PlayerState`] arrives, [`LocalPlayer::reconcile`](LocalPlayer) rewinds to it and replays
//! what is still pending. The difference between the old and the rebuilt
//! prediction never moves gameplay truth: it becomes a visual [`Correction`]
//! that decays, or snaps when it is too large.
//!
//! # Layout
//! The modules are private and grouped by the side that runs them; this page
//! re-exports the public API flat.
//! - `shared`: what both sides compute. The movement step ([`simulate`]),
//!   [`SimConfig`], [`Tick`], inputs, [`PlayerState`], the [`protocol`]
//!   messages and their encodings (JSON and [`compact`]), combat
//!   ([`CombatRules`], [`shot_path`], [`Cooldown`]) and [`determinism`].
//! - `client`: [`ClientSession`]
//!   over prediction ([`LocalPlayer`], [`PendingInputs`]), smoothing,
//!   interpolation ([`RemoteBuffer`]), the [`Authority`] store, the
//!   [`ServerClock`], the [`Conditioner`] and the reconnection [`Backoff`].
//! - `server`: [`Room`] (sans I/O: join, leave, receive, tick to frames) over
//!   the authoritative [`World`].
//!
//! Imports point down only: `client` and `server` use `shared`, never each
//! other, and `shared` uses neither (a tidy test checks it).
//!
//! # Architecture invariants
//! - No I/O, no clock, no async, no unseeded randomness: time enters as
//!   [`Tick`]s, [`std::time::Duration`]s and frame fractions.
//! - Bit-identical results natively and in wasm32: trigonometry goes through
//!   `libm`, nothing uses fused multiply-add, and nothing in the simulation
//!   iterates over a hash map. [`determinism::GOLDEN_TRAJECTORY_HASH`] is
//!   asserted on both targets.

mod client;
mod harness;
mod server;
mod shared;
mod tanks;

pub use client::authority::{AuthorityStats, Refused};
pub use client::backoff::Backoff;
pub use client::clock::{ServerClock, PINGS_IN_FLIGHT};
pub use client::conditioner::{
    Conditioner, ConditionerStats, Delivery, LinkConditions, MAX_DELAY_MS,
};
pub use client::game::{ClientGame, Stepped};
pub use client::interpolation::{InterpolationConfig, RemoteSample, SampleKind};
pub use client::pacing::{Jump, Pacing, PacingConfig};
pub use client::pending::{PendingInputs, PushError};
pub use client::prediction::{LocalStats, ReconcileError, ReconcileReport};
pub use client::record::{open_client_of, DEFAULT_RECORDING_LIMIT};
pub use client::replay::{replay_client_of, ClientReplay, ReplayOptions, ReplaySummary, Sample};
pub use client::session::{
    Hud, Incoming, PacingHud, Phase, SessionConfig, SessionStats, Toggles, LOSS_MEMORY,
};
pub use client::session::{KEPT_BASELINES, MAX_STEPS_PER_FRAME};
pub use client::smoothing::{CorrectionOutcome, SmoothingConfig, SETTLED_ANGLE, SETTLED_DISTANCE};
pub use client::timeline::RemoteTimeline;
pub use server::interest::{InterestConfig, KEPT_FRAMES};
pub use server::record::{open_room_of, RoomCalls, RoomConfigError, RoomEnd, RoomRecorder};
pub use server::replay::{replay_room_of, RoomDivergence, RoomReplayError, RoomSummary};
pub use server::room::{place, Outbox, Placement, RoomStats, Seating};
pub use server::world::{
    Command, InputMode, JoinError, Received, ServerGame, Step, Wired, WorldStats, CATCH_UP_ABOVE,
    GAP_WAIT_TICKS, MAX_AHEAD_TICKS, MAX_INPUTS_PER_TICK, MAX_QUEUED_INPUTS, REWIND_MARGIN_TICKS,
    RTT_WINDOW,
};
pub use shared::bytes::{Codec, ReadError, Reader, Writer};
pub use shared::clamp::clamp;
pub use shared::fields::{Fields, Width, MAX_FIELDS};
pub use shared::input::PredictedStep;
pub use shared::percentile::{nearest_rank, percentile};
pub use shared::protocol::{
    check_game, check_room_name, decode_client, decode_client_frame, decode_server, encode,
    Encoding, ErrorCode, Frame, GameId, ProtocolError, RosterEntry, MAX_FRAME_BYTES,
    MAX_INPUTS_PER_MESSAGE, MAX_NAME_CHARS, MAX_ROOM_CHARS, MIN_PROTOCOL_VERSION, PROTOCOL_VERSION,
};
pub use shared::record::{
    FormatError, Header, Kind, StateHash, BUILD, FORMAT_VERSION, MAGIC, OLDEST_FORMAT,
};
pub use shared::rng::SeededRng;
pub use shared::state::PlayerId;
pub use shared::tick::Tick;
pub use shared::timing::{
    InputTiming, LatenessHistogram, RewindHistogram, SlackHistogram, MAX_VIEW_DELAY_MS,
};
pub use shared::uplink::{decode_inputs, encode_client, encode_inputs, INPUT as BINARY_INPUT};
pub use shared::wired::GAME_BITS;
pub use shared::{control, framing, timing};

/// The library's types generic over the game, under their own names: the
/// crate root's names of them are aliases that take the tank game unless
/// told (`Room` is `Room<Tanks>`; `Room<G>` is `generic::Room<G>`).
pub mod generic {
    pub use crate::client::authority::Authority;
    pub use crate::client::interpolation::RemoteBuffer;
    pub use crate::client::prediction::LocalPlayer;
    pub use crate::client::record::{Call, Calls, ClientRecorder};
    pub use crate::client::replay::{Divergence, ReplayError};
    pub use crate::client::session::{ClientSession, OwnView, RemoteView, SessionEvent, View};
    pub use crate::client::smoothing::Correction;
    pub use crate::server::record::RoomCall;
    pub use crate::server::room::{Room, RoomConfig};
    pub use crate::server::world::{ServerPlayer, World};
    pub use crate::shared::protocol::{ClientMessage, ServerMessage};
}

// The generic types take the tank game unless told (`Room<G>` for game
// `G`): these aliases are the only place the library's types default to it.

/// A message the server sends, of the tank game unless told.
pub type ServerMessage<G = Tanks> = generic::ServerMessage<G>;
/// The visual correction of the own player, of the tank game's offset
/// unless told.
pub type Correction<O = PoseOffset> = generic::Correction<O>;
/// The client's owned states, of the tank game's players unless told.
pub type Authority<S = PlayerState> = generic::Authority<S>;
/// A remote player's samples, drawn as the tank game's poses unless told.
pub type RemoteBuffer<V = Pose> = generic::RemoteBuffer<V>;
/// The controlled player's prediction, of the tank game unless told.
pub type LocalPlayer<G = Tanks> = generic::LocalPlayer<G>;
/// A room, of the tank game unless told.
pub type Room<G = Tanks> = generic::Room<G>;
/// How a room is set up, of the tank game unless told.
pub type RoomConfig<G = Tanks> = generic::RoomConfig<G>;
/// A room's authoritative world, of the tank game unless told.
pub type World<G = Tanks> = generic::World<G>;
/// A player in a world, of the tank game unless told.
pub type ServerPlayer<G = Tanks> = generic::ServerPlayer<G>;
/// One call into a room as recorded, of the tank game unless told.
pub type RoomCall<W = WireInput> = generic::RoomCall<W>;
/// A message a client sends, with the tank game's inputs unless told.
pub type ClientMessage<W = WireInput> = generic::ClientMessage<W>;
/// The platform-free client, of the tank game unless told.
pub type ClientSession<G = Tanks> = generic::ClientSession<G>;
/// What a session draws this frame, of the tank game unless told.
pub type View<G = Tanks> = generic::View<G>;
/// The own player as drawn, of the tank game unless told.
pub type OwnView<G = Tanks> = generic::OwnView<G>;
/// Another player as drawn, of the tank game unless told.
pub type RemoteView<G = Tanks> = generic::RemoteView<G>;
/// What happened in a session, with the tank game's notes unless told.
pub type SessionEvent<N = TankNote> = generic::SessionEvent<N>;
/// A page's flight recorder, of the tank game unless told.
pub type ClientRecorder<G = Tanks> = generic::ClientRecorder<G>;
/// The calls of a page's recording, of the tank game unless told.
pub type Calls<'a, G = Tanks> = generic::Calls<'a, G>;
/// One call into a session as recorded, of the tank game's controls and
/// poses unless told.
pub type Call<'a, C = Controls, V = Pose> = generic::Call<'a, C, V>;
/// Where a client replay stopped matching, of the tank's poses unless told.
pub type Divergence<V = Pose> = generic::Divergence<V>;
/// Why a client replay failed, of the tank's poses unless told.
pub type ReplayError<V = Pose> = generic::ReplayError<V>;

pub use harness::{first_divergence, trace, Harness};
pub use shared::game::{
    Applied, EventOf, Game, Networked, Offset, OwnState, Replicated, Size, Stamp, Visual,
};
pub use tanks::config::{ConfigError, Rect, SimConfig, MAX_OBSTACLES};
pub use tanks::input::{MoveInput, PredictedMoveStep};
pub use tanks::shots::{shot_path, CombatRules, Cooldown};
pub use tanks::sim::{
    angle_delta, replay, sanitize, simulate, substep, substeps, wrap_angle, Pose,
};
pub use tanks::state::PlayerState;
pub use tanks::{
    open_client, open_room, replay_client, replay_room, replay_room_for, Arena, CombatEvent,
    Controls, PoseOffset, ShotStats, Tank, TankClient, TankNote, TankSettings, TankSetup, Tanks,
    Tracer, WireInput, GAME_NAME, GAME_VERSION, TRACER_LIFE,
};

pub use glam::Vec2;

/// The compact snapshot encoding ([`shared::compact`](crate::compact)'s
/// frames for any game), with the tank game's quantised state and its
/// whole-frame helpers.
pub mod compact {
    pub use crate::shared::compact::*;
    pub use crate::tanks::quantised::{
        decode, decode_quantised, encode, encode_tail, Quantised, ENTRY_BYTES, HEAD_BYTES,
    };
    use crate::PlayerState;

    /// A binary snapshot as read, of the tank game unless told.
    pub type QuantisedFrame<F = Quantised, O = PlayerState> =
        crate::shared::compact::QuantisedFrame<F, O>;
    /// An own echo as read, of the tank game unless told.
    pub type OwnEcho<O = PlayerState> = crate::shared::compact::OwnEcho<O>;
}

/// Delta snapshots for any game, with the tank game's motion and
/// quantisation of a whole set.
pub mod delta {
    pub use crate::shared::delta::*;
    pub use crate::tanks::quantised::{quantise_all, Motion};

    /// One entity of a frame's set, a tank unless told.
    pub type Entity<F = crate::compact::Quantised> = crate::shared::delta::Entity<F>;
}

/// What the determinism checks share, and the tank game's golden run.
pub mod determinism {
    pub use crate::shared::determinism::*;
    pub use crate::tanks::golden::*;
}

/// The messages between client and server, with the tank game's input
/// and identity.
pub mod protocol {
    pub use crate::shared::protocol::*;
    pub use crate::tanks::{WireInput, GAME_NAME, GAME_VERSION};
}
