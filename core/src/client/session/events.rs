//! What happened in a session, for its shell: drained with
//! [`ClientSession::events`](super::ClientSession::events) in the manner of
//! GGRS's events, so no shell diffs counters or reads message types.

use std::time::Duration;

use crate::client::prediction::ReconcileReport;
use crate::shared::protocol::{ErrorCode, ProtocolError};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::timing::InputTiming;

/// One thing that happened, in the order it happened; `N` is what the
/// game tells its shell ([`ClientState::Note`](crate::ClientState::Note)).
#[derive(Clone, Debug, PartialEq)]
pub enum SessionEvent<N> {
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
    /// controls (and a latched press) were used.
    StepPredicted {
        /// The input's tick.
        tick: Tick,
        /// Whether it did an action judged at its view
        /// ([`ClientGame::stepped`](crate::ClientGame::stepped)).
        acted: bool,
    },
    /// An authoritative own state was taken: the prediction was rebuilt, or
    /// the player placed (first state, a new life).
    Reconciled {
        /// What the reconciliation did.
        report: ReconcileReport,
        /// Whether the player was placed rather than reconciled.
        placed: bool,
    },
    /// What the game says an event meant to the own player
    /// ([`ClientGame::event`](crate::ClientGame::event)).
    Note(N),
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
