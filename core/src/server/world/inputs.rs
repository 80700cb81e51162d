//! A player's inputs as the world takes them, whatever the game: received
//! (queued in the client's ticks, protocol 1, or scheduled at the server
//! ticks they name, protocol 2), then handed out tick by tick as
//! [`Command`]s for the game to apply. What an input does is the game's;
//! when it is applied, whether it was late or repeated, what its view may
//! claim and what is counted are decided here.

use std::collections::VecDeque;

use super::schedule::Schedule;
use super::InputMode;
use crate::shared::tick::Tick;
pub use crate::shared::wired::Wired;

/// What the game applies to a player in one tick, in order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Command<W> {
    /// An input (the player's own for the tick, or its previous one
    /// repeated), acknowledged already; it may claim no view older than
    /// `oldest_view` (its sender's round-trip bound, if measured).
    Apply {
        /// The input.
        input: W,
        /// The oldest view it may claim.
        oldest_view: Option<f64>,
    },
    /// The part of a late input still honoured (its action aimed at a
    /// view): the tick it named, its view and the oldest view it may
    /// claim.
    Late {
        /// The tick the late input named.
        tick: Tick,
        /// Its view.
        view_tick: Option<f64>,
        /// The oldest view its round trip allows, from its arrival.
        oldest_view: Option<f64>,
    },
}

/// One player's inputs: acknowledged, queued, and (protocol 2) scheduled.
#[derive(Clone, Debug)]
pub(crate) struct PlayerInputs<W> {
    /// The newest input tick applied.
    pub(super) ack: Option<Tick>,
    /// Received and not yet applied, in tick order.
    pub(super) queue: VecDeque<W>,
    /// Ticks waited for a missing input (protocol 1).
    pub(super) waited: u32,
    /// `Some` for protocol-2 players.
    pub(super) schedule: Option<Schedule<W>>,
}

impl<W: Wired> PlayerInputs<W> {
    /// The inputs of a player joining at `tick`, timed as `mode` says.
    pub(super) fn joined(mode: InputMode, tick: Tick) -> PlayerInputs<W> {
        PlayerInputs {
            ack: None,
            queue: VecDeque::with_capacity(super::MAX_QUEUED_INPUTS),
            waited: 0,
            schedule: (mode == InputMode::Scheduled).then(|| Schedule::joined_at(tick)),
        }
    }
}
