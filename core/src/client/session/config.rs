//! How a session is set up, steered and fed: its configuration, the netcode
//! toggles of the debug panel and the frames it takes.

use std::time::Duration;

use crate::client::conditioner::LinkConditions;
use crate::client::interpolation::InterpolationConfig;
use crate::client::pacing::PacingConfig;
use crate::client::smoothing::SmoothingConfig;
use crate::shared::protocol::{Encoding, PROTOCOL_VERSION};

/// Which parts of the netcode are on; each can be turned off to see what it
/// does.
// Four independent switches of a debug panel, not a state machine.
#[allow(clippy::struct_excessive_bools)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Toggles {
    /// Draw the own player where it is predicted (off: where the server
    /// last said it was).
    pub prediction: bool,
    /// Replay unacknowledged inputs on each authoritative state (off: take
    /// the state as it is, and watch the rubber band).
    pub reconciliation: bool,
    /// Smooth corrections (off: every correction snaps).
    pub smoothing: bool,
    /// Interpolate remote players (off: draw their newest state).
    pub interpolation: bool,
}

impl Default for Toggles {
    fn default() -> Self {
        Toggles {
            prediction: true,
            reconciliation: true,
            smoothing: true,
            interpolation: true,
        }
    }
}

/// How a session is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct SessionConfig {
    /// Display name sent in `hello`.
    pub name: String,
    /// A room to join by name.
    pub room: Option<String>,
    /// How corrections of the own player are shown.
    pub smoothing: SmoothingConfig,
    /// How remote players are drawn.
    pub interpolation: InterpolationConfig,
    /// Added conditions, client to server.
    pub up: LinkConditions,
    /// Added conditions, server to client.
    pub down: LinkConditions,
    /// Seed of the conditioners.
    pub seed: u64,
    /// Time between two pings.
    pub ping_interval: Duration,
    /// Longest frame time simulated at once.
    pub max_frame: Duration,
    /// How snapshots should be sent.
    pub encoding: Encoding,
    /// The protocol asked for in `hello`: 2 (inputs name server ticks,
    /// paced by the server's timing reports), or 1 (the simple mode).
    pub protocol: u32,
    /// How inputs are paced (protocol 2).
    pub pacing: PacingConfig,
    /// Protocol 2 over datagrams: how many times each input message is
    /// sent again, a quarter of a step apart, while snapshots are being
    /// lost (over a stream, never). 2 by default: over real QUIC through
    /// the relay's main cell (150 ms RTT, ±30 ms, 5 % loss, 2026-11-26) two
    /// resends took input-to-ack p50 from 256 to 217 ms and late inputs from
    /// 0.35 % to 0.02 %, with binary inputs a few bytes each and no hard
    /// resync; one resend gave 222 ms and 0.09 %, and 0.52 % late in the
    /// stepper's loss-burst scenario (`docs/QUALITY.md`).
    pub resends: u32,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            name: "player".to_string(),
            room: None,
            smoothing: SmoothingConfig::default(),
            interpolation: InterpolationConfig::default(),
            up: LinkConditions::default(),
            down: LinkConditions::default(),
            seed: 1,
            ping_interval: Duration::from_secs(1),
            max_frame: Duration::from_millis(250),
            encoding: Encoding::Json,
            protocol: PROTOCOL_VERSION,
            pacing: PacingConfig::default(),
            resends: 2,
        }
    }
}

/// One frame from the server, as the connection delivered it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Incoming<'a> {
    /// A JSON text frame.
    Text(&'a str),
    /// A binary frame (a compact snapshot).
    Binary(&'a [u8]),
}
