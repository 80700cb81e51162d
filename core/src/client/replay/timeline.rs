//! What a replay gathers of a session, frame by frame: the summary, the
//! sampled series (RTT, input slack, dilation, interpolation delay, the
//! largest correction) and the marks a viewer shows on its timeline, each
//! at the frame it happened (corrections sized by their error, snaps,
//! late and repeated inputs, resends, lost snapshots, disconnections).

use std::time::Duration;

use super::{steps_of, Played, Player, ReplayError, ReplaySummary, Sample};
use crate::client::game::ClientGame;
use crate::client::session::{ClientSession, SessionEvent};
use crate::client::smoothing::CorrectionOutcome;
use crate::shared::game::Game;

/// What happened at a frame, as a timeline marks it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MarkKind {
    /// The own player's prediction was corrected by `error` (world units):
    /// smoothed, or `snapped` to the prediction.
    Correction {
        /// The correction's size.
        error: f32,
        /// Whether what is drawn jumped.
        snapped: bool,
    },
    /// Snaps as the HUD counts them (a snapped correction, or an offset
    /// that outlived its budget).
    Snaps(u64),
    /// Inputs the server reported late.
    Late(u64),
    /// Ticks the server simulated with a repeated input.
    Repeated(u64),
    /// Input messages sent again.
    Resends(u64),
    /// Snapshots seen missing.
    Lost(u64),
    /// The connection was lost.
    Disconnected,
}

/// One mark of the timeline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mark {
    /// The frame (from 1).
    pub frame: u64,
    /// The recording's time since its first frame.
    pub at: Duration,
    /// What happened.
    pub kind: MarkKind,
}

/// A session's timeline: the summary, the series sampled every
/// [`ReplayOptions::sample_every`](super::ReplayOptions::sample_every) and
/// every mark, in frame order.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// What happened, in all.
    pub summary: ReplaySummary,
    /// The series.
    pub samples: Vec<Sample>,
    /// The marks.
    pub marks: Vec<Mark>,
}

/// Plays `player` from where it is to the end of its recording, gathering
/// the timeline; with the error that stopped it early, if one did (the
/// timeline then ends at the frame before).
pub fn timeline_of<G: ClientGame>(
    player: &mut Player<'_, G>,
    sample_every: Duration,
) -> (Timeline, Option<ReplayError<<G as Game>::Local>>) {
    let mut gather = Gather::new(sample_every);
    loop {
        let before = steps_of(player.session());
        match player.step() {
            Ok(Some(frame)) => gather.frame(player, frame, before),
            Ok(None) => return (gather.finish(player), None),
            Err(e) => return (gather.finish(player), Some(e)),
        }
    }
}

/// Running counters, as last read, and what they add since.
#[derive(Debug, Default)]
struct Counter(u64);

impl Counter {
    /// What `now` adds to the last reading (a counter that went back, as a
    /// new connection's does, counts from zero again).
    fn since(&mut self, now: u64) -> u64 {
        let added = if now < self.0 { now } else { now - self.0 };
        self.0 = now;
        added
    }
}

/// What the replay adds up as it goes.
#[derive(Debug, Default)]
pub(super) struct Gather {
    out: Timeline,
    sample_every: Duration,
    corrections: Counter,
    snaps: Counter,
    late: Counter,
    repeated: Counter,
    resends: Counter,
    lost: Counter,
    /// The largest correction since the last sample.
    correction: f32,
    /// Round-trip samples.
    rtts: Vec<Duration>,
    first: Option<Duration>,
    next_sample: Duration,
    dilation: Option<(f64, f64)>,
}

impl Gather {
    pub(super) fn new(sample_every: Duration) -> Gather {
        Gather {
            sample_every,
            ..Gather::default()
        }
    }

    /// After `frame` was played: its events, counters, marks and sample;
    /// `steps_before`: the session's steps before it.
    pub(super) fn frame<G: ClientGame>(
        &mut self,
        player: &Player<'_, G>,
        frame: Played,
        steps_before: u64,
    ) {
        let session = player.session();
        let start = *self.first.get_or_insert(frame.now);
        let at = frame.now.saturating_sub(start);
        let summary = &mut self.out.summary;
        let ran = steps_of(session).saturating_sub(steps_before);
        summary.steps += ran;
        summary.most_steps = summary.most_steps.max(ran);
        summary.frames = frame.frame;
        summary.span = at;
        let mut marks = Vec::new();
        for event in player.events() {
            self.event(event, &mut marks);
        }
        self.counters(session, &mut marks);
        self.out.marks.extend(marks.into_iter().map(|kind| Mark {
            frame: frame.frame,
            at,
            kind,
        }));
        if frame.now >= self.next_sample {
            let hud = session.hud();
            self.out.samples.push(Sample {
                at,
                correction: std::mem::take(&mut self.correction),
                rtt_ms: hud.rtt.map(|d| d.as_secs_f64() * 1000.0),
                slack_ms: hud.pacing.slack_ms,
                dilation_pct: hud.pacing.dilation_pct,
                interpolation_ms: hud.interpolation_delay.as_secs_f64() * 1000.0,
            });
            let d = hud.pacing.dilation_pct;
            let (low, high) = self.dilation.unwrap_or((d, d));
            self.dilation = Some((low.min(d), high.max(d)));
            self.next_sample = frame.now + self.sample_every;
        }
    }

    fn event<N>(&mut self, event: &SessionEvent<N>, marks: &mut Vec<MarkKind>) {
        let summary = &mut self.out.summary;
        match event {
            SessionEvent::Reconciled { report, .. }
                if report.outcome != CorrectionOutcome::Placed =>
            {
                self.correction = self.correction.max(report.error);
                summary.largest_correction = summary.largest_correction.max(report.error);
                if matches!(
                    report.outcome,
                    CorrectionOutcome::Smoothed | CorrectionOutcome::Snapped
                ) {
                    marks.push(MarkKind::Correction {
                        error: report.error,
                        snapped: report.outcome == CorrectionOutcome::Snapped,
                    });
                }
            }
            SessionEvent::Pong { rtt } => self.rtts.push(*rtt),
            SessionEvent::Disconnected { .. } => {
                summary.disconnections += 1;
                marks.push(MarkKind::Disconnected);
            }
            _ => {}
        }
    }

    /// The counters the HUD keeps, read after a frame: corrections and
    /// snaps for the summary, and what each adds marked.
    fn counters<G: ClientGame>(&mut self, session: &ClientSession<G>, marks: &mut Vec<MarkKind>) {
        let summary = &mut self.out.summary;
        if let Some(stats) = session.local().map(|l| *l.stats()) {
            summary.corrections += self.corrections.since(stats.corrections);
            let snaps = self.snaps.since(stats.snaps);
            summary.snaps += snaps;
            if snaps > 0 {
                marks.push(MarkKind::Snaps(snaps));
            }
        }
        let hud = session.hud();
        let counted = [
            (
                self.late.since(hud.pacing.late),
                MarkKind::Late as fn(u64) -> MarkKind,
            ),
            (self.repeated.since(hud.pacing.repeated), MarkKind::Repeated),
            (self.resends.since(hud.stats.resends), MarkKind::Resends),
            (self.lost.since(hud.stats.snapshot_gaps), MarkKind::Lost),
        ];
        marks.extend(
            counted
                .into_iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, kind)| kind(n)),
        );
    }

    /// The timeline, once played: the events of the calls after the last
    /// frame, late inputs, the dilation's range and the RTT's.
    pub(super) fn finish<G: ClientGame>(mut self, player: &Player<'_, G>) -> Timeline {
        let mut marks = Vec::new();
        if player.last_frame().is_some() {
            for event in player.events() {
                self.event(event, &mut marks);
            }
        }
        let summary = &mut self.out.summary;
        (summary.calls, summary.received) = player.calls();
        summary.late_inputs = player.session().hud().pacing.late;
        if let Some(range) = self.dilation {
            summary.dilation_pct = range;
        }
        let rtts = &mut self.rtts;
        rtts.sort_unstable();
        summary.rtt = rtts.last().map(|&max| (rtts[rtts.len() / 2], max));
        self.out
    }
}
