//! What comes down from the server on its way into the session: decoded
//! frames held by the conditioner, and binary snapshots, full or delta,
//! decoded against the kept baselines and handed on as states.

use std::time::Duration;

use super::{ClientSession, State};
use crate::shared::compact::QuantisedFrame;
use crate::shared::delta;
use crate::shared::protocol::{ErrorCode, ProtocolError, ServerMessage};
use crate::shared::state::{PlayerId, PlayerState};

/// A frame from the server, decoded, on its way through the conditioner.
#[derive(Clone, Debug)]
pub(super) enum Downlink {
    /// A JSON message.
    Text(ServerMessage),
    /// A binary snapshot, decoded.
    Binary(QuantisedFrame),
}

impl ClientSession {
    pub(super) fn decode_binary(&self, bytes: &[u8]) -> Result<QuantisedFrame, ProtocolError> {
        let sim = match &self.state {
            State::Joined(welcome) | State::Playing(welcome, _) => &welcome.sim,
            State::Connecting => {
                return Err(ProtocolError::new(
                    ErrorCode::BadMessage,
                    "a binary frame before welcome",
                ))
            }
        };
        delta::decode(bytes, |tick| self.baselines.get(tick), sim)
    }

    /// A binary snapshot came through: kept as a baseline for deltas (and
    /// acknowledged with the next input), then handled as any snapshot with
    /// the own state exact.
    pub(super) fn on_binary(&mut self, frame: QuantisedFrame, at: Duration) {
        let Some(sim) = self.welcome().map(|w| w.sim.clone()) else {
            return;
        };
        // Players left out for the budget are in the set but not news.
        let present: Vec<PlayerId> = frame.players.iter().map(|(id, _)| *id).collect();
        let mut players: Vec<PlayerState> = frame
            .players
            .iter()
            .filter(|(id, _)| frame.stale.binary_search(id).is_err())
            .map(|(id, q)| {
                if *id == frame.own.id {
                    frame.own
                } else {
                    q.state(*id, frame.server_tick, &sim)
                }
            })
            .collect();
        // The head always carries the own state, whether or not the set
        // has its entry yet.
        if !players.iter().any(|p| p.id == frame.own.id) {
            players.push(frame.own);
        }
        if let Some(timing) = frame.timing {
            self.on_timing(&timing, at);
        }
        self.baselines.keep(frame.server_tick, frame.players);
        self.on_snapshot(frame.server_tick, &players, Some(&present), at);
    }
}
