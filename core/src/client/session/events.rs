//! What happened in a session, for its shell: drained with
//! [`ClientSession::events`](super::ClientSession::events) in the manner of
//! GGRS's events, so no shell diffs counters or reads message types.

use std::time::Duration;

use crate::client::prediction::ReconcileReport;
use crate::shared::protocol::{ErrorCode, ProtocolError};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::timing::InputTiming;
use crate::tanks::CombatEvent;

/// One thing that happened, in the order it happened.
#[derive(Clone, Debug, PartialEq)]
pub enum SessionEvent {
    /// `welcome` arrived: the session is [`Phase::Joined`](super::Phase::Joined).
    Joined {
        /// The own player's id.
        id: PlayerId,
        /// The room joined.
        room: String,
    },
    /// A snapshot was handled (however old).
    Snapshot {
        /// Its server tick.
        server_tick: Tick,
    },
    /// A fixed step predicted the own player and sent its input: the
    /// controls (and a latched fire tap) were used.
    StepPredicted {
        /// The input's tick.
        tick: Tick,
        /// Whether a shot left (off cooldown, alive).
        fired: bool,
    },
    /// An authoritative own state was taken: the prediction was rebuilt, or
    /// the player placed (first state, respawn).
    Reconciled {
        /// What the reconciliation did.
        report: ReconcileReport,
        /// Whether the player was placed rather than reconciled.
        placed: bool,
    },
    /// The server confirmed a hit of the own player's shot.
    HitConfirmed(CombatEvent),
    /// The own player was hit.
    Hurt(CombatEvent),
    /// The server reported how early our inputs arrive (protocol 2).
    Timing(InputTiming),
    /// A pong answered a ping; the round-trip time measured at arrival.
    Pong {
        /// This sample.
        rtt: Duration,
    },
    /// The server sent an `error`.
    ServerError {
        /// Its code.
        code: ErrorCode,
        /// Its text.
        message: String,
    },
    /// A frame from the server did not decode, or a `welcome` was unusable;
    /// it changed nothing.
    BadFrame(ProtocolError),
    /// The shell said the connection is gone.
    Disconnected {
        /// Why, as the shell knows it.
        reason: String,
    },
}
