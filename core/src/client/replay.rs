//! Replays a client recording into a fresh native [`ClientSession`] and
//! checks the hash chain after every frame: the first frame whose hash
//! differs stops the replay with what led to it and both states.
//!
//! Besides the verdict it gathers what a person wants to see of the
//! session: a [`ReplaySummary`] and a timeline of [`Sample`]s.
//!
//! A recording is untrusted: its header is read back within the bounds a
//! session runs with in bounded time (`record/config.rs`), and the session
//! itself never runs more than [`MAX_STEPS_PER_FRAME`](crate::MAX_STEPS_PER_FRAME)
//! steps in a frame, so a replay takes time in proportion to the file's
//! records, never to the times they name.

mod player;

use std::time::Duration;

pub use self::player::{Played, Player, CHECKPOINT_EVERY};
use crate::client::game::ClientGame;
use crate::client::record::Call;
use crate::client::session::{ClientSession, SessionEvent};
use crate::client::smoothing::CorrectionOutcome;
use crate::shared::game::Game;
use crate::shared::record::FormatError;

/// How a replay runs.
#[derive(Clone, Copy, Debug)]
pub struct ReplayOptions {
    /// Stop after this frame (counted from 1) and keep the session's whole
    /// state then.
    pub until: Option<u64>,
    /// The timeline's resolution in the recording's time.
    pub sample_every: Duration,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            until: None,
            sample_every: Duration::from_millis(100),
        }
    }
}

/// What the replayed session did, in all.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplaySummary {
    /// Frames (`advance` calls) replayed and matched.
    pub frames: u64,
    /// Calls replayed.
    pub calls: u64,
    /// Frames received.
    pub received: u64,
    /// The recording's span, from the first to the last frame.
    pub span: Duration,
    /// Corrections, as the HUD counts them (summed over connections).
    pub corrections: u64,
    /// Snaps, as the HUD counts them: corrections too large to smooth and
    /// offsets that outlived their budget.
    pub snaps: u64,
    /// The largest correction.
    pub largest_correction: f32,
    /// Inputs the server reported late, at the end.
    pub late_inputs: u64,
    /// The lowest and highest time dilation seen, in percent.
    pub dilation_pct: (f64, f64),
    /// Round-trip times measured: median and highest.
    pub rtt: Option<(Duration, Duration)>,
    /// Disconnections.
    pub disconnections: u64,
    /// Fixed steps that made an input (or found the pending buffer full).
    pub steps: u64,
    /// The most of those in one frame: never more than
    /// [`MAX_STEPS_PER_FRAME`](crate::MAX_STEPS_PER_FRAME), whatever the file says.
    pub most_steps: u64,
}

/// One point of the timeline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The recording's time.
    pub at: Duration,
    /// The largest correction since the previous sample.
    pub correction: f32,
    /// The smoothed round-trip time.
    pub rtt_ms: Option<f64>,
    /// The measured input slack.
    pub slack_ms: Option<f64>,
    /// The time dilation, in percent.
    pub dilation_pct: f64,
    /// How far behind remote players are drawn.
    pub interpolation_ms: f64,
}

/// Where a replay stopped matching the recording, of a game drawn as `V`.
#[derive(Clone, Debug, PartialEq)]
pub struct Divergence<V> {
    /// The frame (`advance` call, from 1) whose hash differs.
    pub frame: u64,
    /// The recording's time of that frame.
    pub now: Duration,
    /// The calls since the previous frame, each with its byte offset: what
    /// led to the difference.
    pub calls: Vec<String>,
    /// The recorded hash and own predicted visual.
    pub recorded: (u64, Option<V>),
    /// The replayed hash and own predicted visual.
    pub replayed: (u64, Option<V>),
    /// The replayed session's whole state at that frame.
    pub state: String,
}

/// Why a replay failed, of a game drawn as `V`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReplayError<V> {
    /// The file is not a readable client recording.
    #[error(transparent)]
    Format(#[from] FormatError),
    /// The replay differs from the recording.
    #[error("frame {} differs from the recording", .0.frame)]
    Diverged(Box<Divergence<V>>),
}

/// A finished (or stopped) replay.
#[derive(Clone, Debug, Default)]
pub struct ClientReplay {
    /// What happened, in all.
    pub summary: ReplaySummary,
    /// The timeline.
    pub samples: Vec<Sample>,
    /// The session's whole state at [`ReplayOptions::until`], if it got there.
    pub state_at_until: Option<String>,
}

/// What [`describe`] keeps of a frame's bytes.
const SHOWN: usize = 160;

/// A call as a person reads it: text frames as text, binary ones as their
/// length and first bytes.
fn describe<C: std::fmt::Debug, V: std::fmt::Debug>(
    offset: usize,
    call: &Call<'_, C, V>,
) -> String {
    let what = match call {
        Call::Text(bytes, at) => {
            let text = String::from_utf8_lossy(bytes);
            let cut: String = text.chars().take(SHOWN).collect();
            let more = if cut.len() < text.len() { "…" } else { "" };
            format!("receive text at {at:?}: {cut}{more}")
        }
        Call::Binary(bytes, at) => {
            let head: Vec<String> = bytes.iter().take(24).map(|b| format!("{b:02x}")).collect();
            format!(
                "receive binary at {at:?}: {} bytes {}{}",
                bytes.len(),
                head.join(" "),
                if bytes.len() > 24 { " …" } else { "" }
            )
        }
        other => format!("{other:?}"),
    };
    format!("byte {offset}: {what}")
}

/// The fixed steps `session` has run that made an input or were refused
/// one.
fn steps_of<G: ClientGame>(session: &ClientSession<G>) -> u64 {
    let stats = session.hud().stats;
    stats.inputs + stats.inputs_refused
}

/// What the replay adds up as it goes.
#[derive(Debug, Default)]
struct Tally {
    /// The own player's corrections and snaps as last read (a new
    /// connection's player counts from zero again).
    counted: (u64, u64),
    /// The largest correction since the last sample.
    correction: f32,
    /// Round-trip samples.
    rtts: Vec<Duration>,
}

impl Tally {
    /// After a frame: corrections and snaps as the HUD counts them.
    fn frame<G: ClientGame>(&mut self, session: &ClientSession<G>, summary: &mut ReplaySummary) {
        let Some(stats) = session.local().map(|l| *l.stats()) else {
            return;
        };
        let now = (stats.corrections, stats.snaps);
        let base = if now.0 < self.counted.0 || now.1 < self.counted.1 {
            (0, 0)
        } else {
            self.counted
        };
        summary.corrections += now.0 - base.0;
        summary.snaps += now.1 - base.1;
        self.counted = now;
    }

    fn event<N>(&mut self, event: &SessionEvent<N>, summary: &mut ReplaySummary) {
        match event {
            SessionEvent::Reconciled { report, .. }
                if report.outcome != CorrectionOutcome::Placed =>
            {
                self.correction = self.correction.max(report.error);
                summary.largest_correction = summary.largest_correction.max(report.error);
            }
            SessionEvent::Pong { rtt } => self.rtts.push(*rtt),
            SessionEvent::Disconnected { .. } => summary.disconnections += 1,
            _ => {}
        }
    }
}

/// A call into a session of game `G`, as recorded.
type CallOf<'a, G> = Call<'a, <G as ClientGame>::Controls, <G as Game>::Local>;

/// Replays a client recording of game `G`; see the module docs.
///
/// # Errors
/// A damaged, foreign or other-version file ([`ReplayError::Format`]), or
/// the first frame that differs ([`ReplayError::Diverged`]).
pub fn replay_client_of<G: ClientGame>(
    bytes: &[u8],
    options: ReplayOptions,
) -> Result<ClientReplay, ReplayError<<G as Game>::Local>> {
    // One pass: no checkpoint past the start.
    let mut player = Player::<G>::with_checkpoints(bytes, u64::MAX)?;
    let mut out = ClientReplay::default();
    let mut tally = Tally::default();
    let mut first: Option<Duration> = None;
    let mut next_sample = Duration::ZERO;
    let (mut low, mut high) = (f64::INFINITY, f64::NEG_INFINITY);
    loop {
        let before = steps_of(player.session());
        let Some(frame) = player.step()? else {
            break;
        };
        let now = frame.now;
        let session = player.session();
        let ran = steps_of(session).saturating_sub(before);
        out.summary.steps += ran;
        out.summary.most_steps = out.summary.most_steps.max(ran);
        out.summary.frames = frame.frame;
        if options.until == Some(frame.frame) {
            out.state_at_until = Some(format!("{session:#?}"));
        }
        for event in player.events() {
            tally.event(event, &mut out.summary);
        }
        let session = player.session();
        tally.frame(session, &mut out.summary);
        let start = *first.get_or_insert(now);
        out.summary.span = now.saturating_sub(start);
        if now >= next_sample {
            let hud = session.hud();
            out.samples.push(Sample {
                at: now.saturating_sub(start),
                correction: std::mem::take(&mut tally.correction),
                rtt_ms: hud.rtt.map(|d| d.as_secs_f64() * 1000.0),
                slack_ms: hud.pacing.slack_ms,
                dilation_pct: hud.pacing.dilation_pct,
                interpolation_ms: hud.interpolation_delay.as_secs_f64() * 1000.0,
            });
            low = low.min(hud.pacing.dilation_pct);
            high = high.max(hud.pacing.dilation_pct);
            next_sample = now + options.sample_every;
        }
        if out.state_at_until.is_some() {
            break;
        }
    }
    // The calls after the last frame.
    for event in player.events() {
        tally.event(event, &mut out.summary);
    }
    (out.summary.calls, out.summary.received) = player.calls();
    out.summary.late_inputs = player.session().hud().pacing.late;
    if low <= high {
        out.summary.dilation_pct = (low, high);
    }
    let rtts = &mut tally.rtts;
    rtts.sort_unstable();
    out.summary.rtt = rtts.last().map(|&max| (rtts[rtts.len() / 2], max));
    Ok(out)
}
