//! Replays a client recording into a fresh native [`ClientSession`] and
//! checks the hash chain after every frame: the first frame whose hash
//! differs stops the replay with what led to it and both states.
//!
//! Besides the verdict it gathers what a person wants to see of the
//! session: a [`ReplaySummary`], a timeline of [`Sample`]s and the
//! [`Mark`]s of what happened at which frame (`timeline.rs`). [`Player`]
//! plays a recording one frame at a time and seeks (`player.rs`).
//!
//! A recording is untrusted: its header is read back within the bounds a
//! session runs with in bounded time (`record/config.rs`), and the session
//! itself never runs more than [`MAX_STEPS_PER_FRAME`](crate::MAX_STEPS_PER_FRAME)
//! steps in a frame, so a replay takes time in proportion to the file's
//! records, never to the times they name.

mod player;
mod timeline;

use std::time::Duration;

pub use self::player::{Played, Player, CHECKPOINT_EVERY};
use self::timeline::Gather;
pub use self::timeline::{timeline_of, Mark, MarkKind, Timeline};
use crate::client::game::ClientGame;
use crate::client::record::Call;
use crate::client::session::ClientSession;
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
    /// The timeline's series.
    pub samples: Vec<Sample>,
    /// What happened at which frame ([`Mark`]).
    pub marks: Vec<Mark>,
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
    let mut gather = Gather::new(options.sample_every);
    let mut state_at_until = None;
    loop {
        let before = steps_of(player.session());
        let Some(frame) = player.step()? else {
            break;
        };
        if options.until == Some(frame.frame) {
            state_at_until = Some(format!("{:#?}", player.session()));
        }
        gather.frame(&player, frame, before);
        if state_at_until.is_some() {
            break;
        }
    }
    let timeline = gather.finish(&player);
    Ok(ClientReplay {
        summary: timeline.summary,
        samples: timeline.samples,
        marks: timeline.marks,
        state_at_until,
    })
}
