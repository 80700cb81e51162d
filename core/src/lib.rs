//! Skirmish: browser multiplayer netcode, generic over the game.
//!
//! The mental model in three sentences. The server owns the truth and steps
//! every player with the game's step at a fixed cadence. The client runs
//! the very same step on its own inputs right away ([`LocalPlayer`]) and
//! keeps them in a bounded [`PendingInputs`] buffer until the server
//! acknowledges them; when an authoritative state arrives, it rewinds to
//! it and replays what is still pending. The difference between the old
//! and the rebuilt prediction never moves gameplay truth: it becomes a
//! visual [`Correction`] that decays, or snaps when it is too large.
//!
//! A game brings what only it knows through a few traits, no macros:
//! [`Game`] (its configuration, input, own state and deterministic step),
//! [`Visual`] and [`Offset`] (what is drawn), [`Replicated`] and
//! [`Applied`] (authoritative states and events applied once),
//! [`OwnState`] and [`Fields`] (how its states travel), [`Wired`] and
//! [`Networked`] (its messages), [`ServerGame`] (its world on the server),
//! [`ClientGame`] (its page); for the harness crate
//! (`skirmish-harness`), [`Harness`] (its seeded run, how the stepper
//! watches it, its main cell and the words of its quality page) and
//! [`Driver`] (a client's brain).
//! Skirmish's first game lives in a crate of its own beside this one, and
//! uses only this API.
//!
//! # Layout
//! The modules are private and grouped by the side that runs them; this page
//! re-exports the public API flat.
//! - `shared`: what both sides compute: [`Tick`], [`PlayerId`], the game's
//!   contract, the [`protocol`] messages and their encodings (JSON,
//!   [`compact`], [`delta`], [`control`]), the recording format and what
//!   the [`determinism`] checks share.
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
//! - A game's step gives bit-identical results natively and in wasm32
//!   when it keeps to `libm` for trigonometry, no fused multiply-add and
//!   no iteration over hash maps; [`trace`] and [`first_divergence`] check
//!   it on both targets.

mod client;
mod server;
mod shared;
mod stepped;
mod sync;

pub use client::authority::{AuthorityStats, Refused};
pub use client::backoff::Backoff;
pub use client::clock::{ServerClock, PINGS_IN_FLIGHT};
pub use client::conditioner::{
    Conditioner, ConditionerStats, Delivery, LinkConditions, MAX_DELAY_MS,
};
pub use client::game::{ClientGame, ClientState, EffectsOf, NoteOf, Stepped, ThingMotion};
pub use client::interpolation::{InterpolationConfig, RemoteSample, SampleKind};
pub use client::pacing::{Jump, Pacing, PacingConfig};
pub use client::pending::{PendingInputs, PushError};
pub use client::prediction::{LocalStats, ReconcileError, ReconcileReport};
pub use client::record::{open_client_of, DEFAULT_RECORDING_LIMIT};
pub use client::replay::{
    replay_client_of, timeline_of, ClientReplay, Mark, MarkKind, Played, Player, ReplayOptions,
    ReplaySummary, Sample, Timeline, CHECKPOINT_EVERY,
};
pub use client::session::{
    Hud, Incoming, PacingHud, Phase, SessionConfig, SessionStats, Toggles, LOSS_MEMORY,
};
pub use client::session::{KEPT_BASELINES, MAX_STEPS_PER_FRAME};
pub use client::smoothing::{CorrectionOutcome, SmoothingConfig, SETTLED_ANGLE, SETTLED_DISTANCE};
pub use client::timeline::RemoteTimeline;
pub use server::interest::{InterestConfig, KEPT_FRAMES, MAX_JSON_VIEW};
pub use server::record::{open_room_of, RoomCalls, RoomConfigError, RoomEnd, RoomRecorder};
pub use server::replay::{replay_room_of, RoomDivergence, RoomReplayError, RoomSummary};
pub use server::room::{
    place, Outbox, Placement, RoomStats, Seating, RECORD_BURST, RECORD_BYTES_PER_TICK,
};
pub use server::things::{Thing, Things};
pub use server::world::{
    Command, InputMode, JoinError, Received, ServerGame, Spawn, Step, Wired, WorldStats,
    CATCH_UP_ABOVE, GAP_WAIT_TICKS, MAX_AHEAD_TICKS, MAX_INPUTS_PER_TICK, MAX_QUEUED_INPUTS,
    REWIND_MARGIN_TICKS, RTT_WINDOW,
};
pub use shared::bytes::{Codec, ReadError, Reader, Writer};
pub use shared::clamp::clamp;
pub use shared::fields::{Fields, Width, MAX_FIELDS};
pub use shared::input::PredictedStep;
pub use shared::owned::{IntoOwn, Owned};
pub use shared::percentile::{nearest_rank, percentile};
pub use shared::protocol::{
    check_game, check_room_name, decode_client, decode_client_frame, decode_client_frame_of,
    decode_server, encode, Encoding, ErrorCode, Frame, GameId, ProtocolError, RosterEntry,
    MAX_FRAME_BYTES, MAX_INPUTS_PER_MESSAGE, MAX_NAME_CHARS, MAX_ROOM_CHARS, MIN_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
};
pub use shared::record::{
    reseal_recording, FormatError, Header, Kind, RecordWriter, Records, StateHash, BUILD,
    CLIENT_CHUNK, FIRST_CHECKED_FORMAT, FORMAT_VERSION, MAGIC, OLDEST_FORMAT,
};
pub use shared::rng::SeededRng;
pub use shared::simple::{NoEvent, NoSetup, Spot, Ticked};
pub use shared::state::{PlayerId, ThingId, FIRST_THING};
pub use shared::tick::Tick;
pub use shared::timing::{
    InputTiming, LatenessHistogram, RewindHistogram, SlackHistogram, MAX_VIEW_DELAY_MS,
};
pub use shared::uplink::{decode_inputs, encode_client, encode_inputs, INPUT as BINARY_INPUT};
pub use shared::wired::GAME_BITS;
pub use shared::{compact, control, delta, determinism, framing, protocol, timing};

pub use client::authority::Authority;
pub use client::interpolation::RemoteBuffer;
pub use client::prediction::LocalPlayer;
pub use client::record::{Call, Calls, ClientRecorder};
pub use client::replay::{Divergence, ReplayError};
pub use client::session::{ClientSession, OwnView, RemoteView, SessionEvent, ThingView, View};
pub use client::smoothing::Correction;
pub use server::record::RoomCall;
pub use server::room::{Room, RoomConfig};
pub use server::world::{ServerPlayer, World};
pub use shared::protocol::{ClientMessage, ServerMessage};

pub use glam::Vec2;

/// The names a game's crate needs, to bring in at once with
/// `use skirmish_core::prelude::*` (the crate root has every public
/// item; most are for the shells and the harness).
pub mod prelude {
    // The contract a game implements, and what its own state travels in.
    pub use crate::{
        Applied, Carries, ClientGame, ClientState, Driver, Game, Harness, IntoOwn, Networked,
        Offset, OwnState, Owned, QualityWords, Replicated, ServerGame, Size, Stamp, Visual, Wired,
    };
    // What the contract's methods take and give.
    pub use crate::{
        Command, EventOf, RemoteSample, ServerPlayer, Spawn, Step, Stepped, Target, Thing,
        ThingMotion, Things,
    };
    // Ready-made parts: a point, no setup, no events, an input with its
    // tick, binary forms.
    pub use crate::{
        determinism, Codec, Fields, NoEvent, NoSetup, ReadError, Reader, Spot, Ticked, Width,
        Writer,
    };
    // Who, when, randomness, the plane.
    pub use crate::{PlayerId, SeededRng, ThingId, Tick, Vec2};
    // Playing it: a room and a page, and checking them.
    pub use crate::{
        first_divergence, replay_client_of, trace, ClientSession, ReplayOptions, Room, RoomConfig,
        SessionConfig,
    };
}

/// `docs/GUIDE.md`'s game, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../../docs/GUIDE.md")]
struct Guide;

pub use shared::game::{
    Applied, Carries, EventOf, Game, Networked, Offset, OwnState, Replicated, Size, Stamp, Target,
    Visual,
};
pub use stepped::{first_divergence, trace, Driver, Harness, QualityWords};
pub use sync::{sync_test, Desync, SeededWorld, SyncReport};
