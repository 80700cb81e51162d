//! What one client of the stepper went through: its trace over time
//! ([`ClientTrace`]: acknowledgements, slack, dilation, remote time, what
//! it drew, bytes) and its counters ([`ClientCounters`]), which the
//! scenario matrix summarises and the tests assert.

use skirmish_core::Tick;

/// What one client went through over time (true seconds since the start).
#[derive(Clone, Debug, Default)]
pub struct ClientTrace {
    /// Per acknowledged input: when the acknowledgement arrived, and how
    /// long after the input was sent (ms).
    pub ack_ms: Vec<(f64, f64)>,
    /// Per timing report with a sample: when, and the slack (ms).
    pub slack_ms: Vec<(f64, f64)>,
    /// Per server-late report: when, and how many inputs.
    pub late_at: Vec<f64>,
    /// Per repeated-input report: when, and how many ticks.
    pub repeated_at: Vec<f64>,
    /// Dilation in % every 100 ms: when, and the value.
    pub dilation_pct: Vec<(f64, f64)>,
    /// Frames where a remote was drawn at an earlier time than the frame
    /// before.
    pub remote_backwards: u64,
    /// Frames where a remote was drawn snapping back against its own motion
    /// (the drawn poses, not the timeline).
    pub drawn_snap_backs: u64,
    /// The slowest and fastest remote playback rate between two frames at
    /// least 100 ms apart (1.0: real time).
    pub remote_rate: Option<(f64, f64)>,
    /// Bytes of input messages sent (JSON, as the wire would carry them).
    pub uplink_bytes: u64,
    /// Bytes of every frame received (snapshots, echoes, control
    /// messages), as the wire carried them.
    pub downlink_bytes: u64,
    /// The largest binary snapshot frame received (full or delta), bytes:
    /// past the byte budget it would not go as one datagram.
    pub largest_snapshot: usize,
    /// Mispredictions when each happened.
    pub mispredicted_at: Vec<f64>,
    /// The ticks of the shots that left (drawn as the own tracer).
    pub shot_ticks: Vec<Tick>,
    /// Hits of the own shots the server confirmed.
    pub hits: u64,
    /// Notes told (what an event meant to this player), whole run.
    pub notes: u64,
}

/// What one client went through, for assertions and regression numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClientCounters {
    /// Inputs predicted and sent.
    pub inputs: u64,
    /// Reconciliations with any error above 0.01 u.
    pub mispredictions: u64,
    /// Corrections counted (at or above the dead zone).
    pub corrections: u64,
    /// Snaps.
    pub snaps: u64,
    /// The largest reconciliation error, in units.
    pub max_error: f32,
    /// The largest counted correction, in units.
    pub max_correction: f32,
    /// Snapshots handled.
    pub snapshots: u64,
    /// Messages the down-conditioner dropped.
    pub lost_down: u64,
    /// Messages the up-conditioner dropped.
    pub lost_up: u64,
    /// Inputs the server counted late.
    pub late: u64,
    /// Ticks the server simulated with a repeated input.
    pub repeated: u64,
    /// Hard resyncs of the input schedule.
    pub resyncs: u64,
}

/// Totals of all clients' counters.
pub fn totals(counters: &[ClientCounters]) -> ClientCounters {
    counters
        .iter()
        .fold(ClientCounters::default(), |t, c| ClientCounters {
            inputs: t.inputs + c.inputs,
            mispredictions: t.mispredictions + c.mispredictions,
            corrections: t.corrections + c.corrections,
            snaps: t.snaps + c.snaps,
            max_error: t.max_error.max(c.max_error),
            max_correction: t.max_correction.max(c.max_correction),
            snapshots: t.snapshots + c.snapshots,
            lost_down: t.lost_down + c.lost_down,
            lost_up: t.lost_up + c.lost_up,
            late: t.late + c.late,
            repeated: t.repeated + c.repeated,
            resyncs: t.resyncs + c.resyncs,
        })
}
