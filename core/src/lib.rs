//! The platform-free heart of Skirmish: everything the browser client and the
//! authoritative server both compute lives here, once.
//!
//! The mental model in three sentences. The server owns the truth and steps
//! every player with [`simulate`] at a fixed cadence (50 ms by default). The
//! client runs the very same function on its own inputs right away
//! ([`LocalPlayer::predict`]) and keeps them in a bounded [`PendingInputs`]
//! buffer until the server acknowledges them; when an authoritative
//! [`PlayerState`] arrives, [`LocalPlayer::reconcile`] rewinds to it and replays
//! what is still pending. The difference between the old and the rebuilt
//! prediction never moves gameplay truth: it becomes a visual [`Correction`]
//! that decays, or snaps when it is too large.
//!
//! # Architecture invariants
//! - No I/O, no clock, no async, no unseeded randomness: time enters as
//!   [`Tick`]s, [`std::time::Duration`]s and frame fractions.
//! - Bit-identical results natively and in wasm32: trigonometry goes through
//!   `libm`, nothing uses fused multiply-add, and nothing in the simulation
//!   iterates over a hash map. [`determinism::GOLDEN_TRAJECTORY_HASH`] is
//!   asserted on both targets.

pub mod clock;
pub mod compact;
pub mod conditioner;
pub mod config;
pub mod determinism;
pub mod interpolation;
pub mod local;
pub mod pending;
pub mod protocol;
pub mod rng;
pub mod room;
pub mod session;
pub mod sim;
pub mod smoothing;
pub mod snapshot;
pub mod state;
pub mod tick;
pub mod world;

pub use clock::ServerClock;
pub use conditioner::{Conditioner, ConditionerStats, LinkConditions};
pub use config::{ConfigError, Rect, SimConfig};
pub use interpolation::{InterpolationConfig, RemoteBuffer, SampleKind};
pub use local::{LocalPlayer, LocalStats, ReconcileError, ReconcileReport};
pub use pending::{PendingInputs, PredictedMoveStep, PushError};
pub use protocol::{
    decode_client, decode_server, encode, ClientMessage, CombatEvent, Encoding, ErrorCode,
    PlayerId, ProtocolError, RosterEntry, ServerMessage, WireInput, MAX_FRAME_BYTES,
    MAX_INPUTS_PER_MESSAGE, PROTOCOL_VERSION,
};
pub use room::{Frame, Outbox, Room, RoomConfig};
pub use session::{ClientSession, Controls, SessionConfig, Toggles};
pub use sim::{
    angle_delta, replay, sanitize, simulate, substep, substeps, wrap_angle, MoveInput, Pose,
};
pub use smoothing::{Correction, CorrectionOutcome, SmoothingConfig};
pub use snapshot::{Refused, Roster, RosterStats};
pub use state::PlayerState;
pub use tick::Tick;
pub use world::{CombatRules, JoinError, Received, ServerPlayer, World, WorldStats};

pub use glam::Vec2;
