//! Input pacing (protocol 2): run ahead of the server just enough that
//! inputs arrive before the tick they name, and no more.
//!
//! The server reports the **slack** of the client's inputs (how long before
//! its tick each arrived; `shared::timing`). The client knows how much it
//! has moved its own schedule since it sent each input (its **offset**:
//! every step shorter than the cadence adds the difference, a jump adds
//! whole ticks) and how late after its due time each step ran beyond two
//! usual frames (a hitch), so each report becomes a sample of the link and
//! the client's ordinary frame jitter: `n = slack - offset at send +
//! hitch of the step`. An input sent now would arrive with slack `n +
//! offset now`. A hitch's late inputs therefore do not widen the margin:
//! the client knows they left late.
//!
//! The samples give two numbers:
//! - the **level**: the median of the newest [`PacingConfig::level_samples`]
//!   (about half a second), which follows a change of route within that;
//! - the **spread**: each sample's distance below the median of the samples
//!   around it (a centred window, so a step in latency is not mistaken for
//!   jitter), over the newest [`PacingConfig::spread_samples`] (20 s). The
//!   [`PacingConfig::late_target`] quantile of it (0.25 %) is how far below
//!   the level an input may arrive; it widens at once on jitter and loss
//!   bursts and narrows as they leave the window.
//!
//! The target offset puts that quantile [`PacingConfig::safety_ms`] plus one
//! usual frame (a step runs up to a frame after it is due) before the tick. The client reaches it by **time dilation**: the simulation step
//! stays the cadence, the wall-clock time between steps is the cadence
//! divided by `1 + dilation`, with the dilation within
//! ±[`PacingConfig::max_dilation`] (a proportional-integral controller on
//! the offset error). Only an error beyond [`PacingConfig::resync_ms`] is
//! closed by a jump (a hard resync, counted); the first few samples after
//! joining set the schedule with a jump that is not counted.

use std::collections::VecDeque;
use std::time::Duration;

use crate::shared::clamp::clamp;
use crate::shared::tick::Tick;
use crate::shared::timing::InputTiming;

/// How the pacing controller behaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacingConfig {
    /// The share of inputs allowed to arrive late (0.0025: 0.25 %, half the
    /// 0.5 % budget of late and repeated inputs: the other half is for
    /// inputs whose every copy was lost).
    pub late_target: f64,
    /// The margin kept before the tick beyond the quantile, in ms.
    pub safety_ms: f64,
    /// Samples of the level's median (about 0.5 s at 20 Hz).
    pub level_samples: usize,
    /// Samples the spread is taken over (20 s at 20 Hz).
    pub spread_samples: usize,
    /// The spread assumed before enough samples are in, in ms.
    pub initial_spread_ms: f64,
    /// The largest change of step rate, either way (0.1: ±10 %); at most
    /// [`PacingConfig::DILATION_LIMIT`].
    pub max_dilation: f64,
    /// How quickly an offset error is closed: the dilation is the error
    /// divided by this (100 ms of error over 1 s: 10 %).
    pub time_constant: Duration,
    /// The integral term's time constant (holds a clock that runs fast or
    /// slow on target).
    pub integral_time: Duration,
    /// An error beyond this is closed by a jump (a hard resync).
    pub resync_ms: f64,
}

impl Default for PacingConfig {
    fn default() -> Self {
        PacingConfig {
            late_target: 0.0025,
            safety_ms: 2.0,
            level_samples: 11,
            spread_samples: 400,
            initial_spread_ms: 50.0,
            max_dilation: 0.1,
            time_constant: Duration::from_secs(1),
            integral_time: Duration::from_secs(10),
            resync_ms: 500.0,
        }
    }
}

impl PacingConfig {
    /// The largest [`PacingConfig::max_dilation`] the controller uses: a
    /// step period stays within two thirds and twice the cadence, never
    /// zero or negative (a larger or non-finite bound is taken as this).
    pub const DILATION_LIMIT: f64 = 0.5;

    /// [`PacingConfig::max_dilation`] within `0..=DILATION_LIMIT`.
    fn dilation_bound(&self) -> f64 {
        if self.max_dilation.is_nan() {
            0.0
        } else {
            clamp(self.max_dilation, 0.0, PacingConfig::DILATION_LIMIT)
        }
    }
}

/// Samples the first jump waits for.
const SYNC_SAMPLES: usize = 3;

/// A change of schedule the session must make before its next step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jump {
    /// Skip this many ticks forward (the server repeats them).
    Forward(u32),
    /// Make no input for this many steps (already-sent ticks cover them).
    Hold(u32),
}

/// The pacing controller of one session.
#[derive(Clone, Debug)]
pub struct Pacing {
    config: PacingConfig,
    tick_ms: f64,
    /// How far the schedule moved earlier since joining, in ms.
    offset_ms: f64,
    /// The offset each recent input was sent with, less how late its step
    /// ran.
    sent: VecDeque<(Tick, f64)>,
    /// The usual frame duration lately, in ms.
    frame_ms: f64,
    /// The share of messages lost lately (0 to 1).
    loss: f64,
    /// The newest link samples, for the level and the centred window.
    recent: VecDeque<f64>,
    /// Distances below the centred median, newest last.
    spread: VecDeque<f64>,
    /// The same distances, sorted (kept so, not sorted per step).
    sorted: Vec<f64>,
    /// The medians of the newest `level_samples` and of the newest three,
    /// as of the last sample.
    medians: Option<(f64, f64)>,
    synced: bool,
    pending_jump: Option<Jump>,
    dilation: f64,
    integral: f64,
    resyncs: u64,
    last_counts: Option<(u16, u16)>,
    late: u64,
    repeated: u64,
    last_slack_ms: Option<f64>,
}

impl Pacing {
    /// A controller for ticks of `tick` length.
    pub fn new(config: PacingConfig, tick: Duration) -> Pacing {
        Pacing {
            config,
            tick_ms: (tick.as_secs_f64() * 1000.0).max(1e-3),
            offset_ms: 0.0,
            sent: VecDeque::new(),
            frame_ms: 0.0,
            loss: 0.0,
            recent: VecDeque::new(),
            spread: VecDeque::new(),
            sorted: Vec::new(),
            medians: None,
            synced: false,
            pending_jump: None,
            dilation: 0.0,
            integral: 0.0,
            resyncs: 0,
            last_counts: None,
            late: 0,
            repeated: 0,
            last_slack_ms: None,
        }
    }

    /// The input for `tick` was sent now, `late` after its step was due.
    /// Lateness within two usual frames is the client's own jitter and
    /// stays in the sample (the margin must cover it); beyond that it is a
    /// hitch, taken out so that one stall does not widen the margin for the
    /// whole window.
    pub fn on_sent(&mut self, tick: Tick, late: Duration) {
        if self.sent.len() >= 256 {
            self.sent.pop_front();
        }
        let late_ms = late.as_secs_f64() * 1000.0;
        let hitch_ms = (late_ms - 2.0 * self.frame_ms).max(0.0);
        self.sent.push_back((tick, self.offset_ms - hitch_ms));
    }

    /// The share of messages lost lately (snapshots missing, a good guess
    /// for the other way too): an input both of whose copies were lost
    /// (about `loss²` of them) arrives a whole step late, which no margin
    /// short of a step could save, so that share is left out of the
    /// quantile rather than paid for by every input.
    pub fn set_loss(&mut self, loss: f64) {
        self.loss = if loss.is_finite() {
            clamp(loss, 0.0, 0.5)
        } else {
            0.0
        };
    }

    /// A frame of `elapsed` was rendered: steps run up to that late.
    pub fn frame(&mut self, elapsed: Duration) {
        let ms = (elapsed.as_secs_f64() * 1000.0).min(self.tick_ms);
        // The usual frame lately (a moving average: one long frame, a
        // hitch, hardly moves it).
        if self.frame_ms == 0.0 {
            self.frame_ms = ms;
        }
        self.frame_ms += (ms - self.frame_ms) / 32.0;
    }

    /// The server's feedback arrived. Returns how many more inputs it
    /// counted late and repeated since the last feedback.
    pub fn on_timing(&mut self, timing: &InputTiming) -> (u64, u64) {
        let counts = (timing.late, timing.repeated);
        // Counts start at zero with the connection (the controller is new
        // with each `welcome`), so the first report counts from zero.
        let (l, r) = self.last_counts.unwrap_or((0, 0));
        let (late, repeated) = (counts.0.wrapping_sub(l), counts.1.wrapping_sub(r));
        // A report older than one already read (reordered on the way)
        // would count backwards: its counts are not news.
        let (late, repeated) = if late >= 0x8000 || repeated >= 0x8000 {
            (0, 0)
        } else {
            self.last_counts = Some(counts);
            (u64::from(late), u64::from(repeated))
        };
        self.late += late;
        self.repeated += repeated;
        let Some(tick) = timing.tick else {
            return (late, repeated);
        };
        let slack = f64::from(timing.slack_ms);
        self.last_slack_ms = Some(slack);
        let Some(&(_, offset)) = self.sent.iter().find(|(t, _)| *t == tick) else {
            return (late, repeated);
        };
        self.push_sample(slack - offset);
        (late, repeated)
    }

    fn push_sample(&mut self, n: f64) {
        let width = self.config.level_samples.max(1) * 2 + 1;
        if self.recent.len() >= width {
            self.recent.pop_front();
        }
        self.recent.push_back(n);
        if self.recent.len() == width {
            let middle = self.recent[width / 2];
            let centred = median(self.recent.iter().copied());
            if self.spread.len() >= self.config.spread_samples.max(1) {
                if let Some(old) = self.spread.pop_front() {
                    let at = self.sorted.partition_point(|v| v.total_cmp(&old).is_lt());
                    if at < self.sorted.len() {
                        self.sorted.remove(at);
                    }
                }
            }
            let residual = middle - centred;
            self.spread.push_back(residual);
            let at = self
                .sorted
                .partition_point(|v| v.total_cmp(&residual).is_lt());
            self.sorted.insert(at, residual);
        }
        let newest = |n: usize| {
            let skip = self.recent.len().saturating_sub(n);
            median(self.recent.iter().skip(skip).copied())
        };
        self.medians = Some((newest(self.config.level_samples.max(1)), newest(3)));
        self.update_target();
    }

    /// The link level: the median of the newest samples, or of the newest
    /// three when those say inputs are arriving late now (a latency step
    /// up is followed in three samples, not half the window).
    fn level(&self) -> Option<f64> {
        let (level, now) = self.medians?;
        Some(if now + self.offset_ms < 0.0 {
            level.min(now)
        } else {
            level
        })
    }

    /// How far below the level the allowed share of inputs arrives, in ms
    /// (negative).
    fn low_spread(&self) -> f64 {
        // Two seconds of samples before the spread is trusted over the
        // initial guess; until the window is full its lowest samples stand
        // for the tail.
        let enough = (1.0 / self.config.late_target.max(1e-6)).min(20.0) as usize;
        if self.sorted.len() < enough.max(1) {
            return -self.config.initial_spread_ms;
        }
        let share = self.config.late_target + self.loss * self.loss;
        let at = (self.sorted.len() as f64 * share).floor() as usize;
        self.sorted[at.min(self.sorted.len() - 1)].min(0.0)
    }

    /// The offset the schedule should have, in ms; `None` before any sample.
    fn target_offset(&self) -> Option<f64> {
        // A step runs up to a frame after it is due; the samples leave that
        // out, so the margin puts it back.
        let safety = self.config.safety_ms + self.frame_ms;
        Some(safety - (self.level()? + self.low_spread()))
    }

    fn update_target(&mut self) {
        // The first jump waits for a level of several samples: one early
        // arrival alone would set the schedule too late.
        if !self.synced && self.recent.len() < self.config.level_samples.min(SYNC_SAMPLES) {
            return;
        }
        let Some(target) = self.target_offset() else {
            return;
        };
        let error = target - self.offset_ms;
        if self.pending_jump.is_some() || (self.synced && error.abs() <= self.config.resync_ms) {
            return;
        }
        if self.synced {
            self.resyncs += 1;
        }
        self.synced = true;
        self.integral = 0.0;
        let ticks = (error / self.tick_ms).round();
        self.pending_jump = if ticks >= 1.0 {
            Some(Jump::Forward(ticks as u32))
        } else if ticks <= -1.0 {
            Some(Jump::Hold((-ticks) as u32))
        } else {
            None
        };
        // The schedule moves with the jump: inputs sent from now on carry it.
        self.offset_ms += ticks * self.tick_ms;
    }

    /// A jump to make before the next step, taken once.
    pub fn take_jump(&mut self) -> Option<Jump> {
        self.pending_jump.take()
    }

    /// The wall-clock time until the next step: the cadence divided by
    /// `1 + dilation`, the dilation chosen now from the offset error.
    pub fn step_period(&mut self, cadence: Duration) -> Duration {
        if let Some(target) = self.target_offset().filter(|_| self.synced) {
            let error = target - self.offset_ms;
            // Late inputs cost more than early ones: run ahead three
            // times as eagerly as falling back.
            let scale = if error > 0.0 { 3.0 } else { 1.0 };
            let tau = self.config.time_constant.as_secs_f64() * 1000.0 / scale;
            let ti = self.config.integral_time.as_secs_f64() * 1000.0;
            let max = self.config.dilation_bound();
            // The integral only holds a small steady error (a clock that
            // runs fast or slow); a large error is the proportional term's,
            // so a latency step leaves no wound-up integral behind.
            if error.abs() < 2.0 * self.frame_ms.max(self.config.safety_ms) {
                self.integral = clamp(
                    self.integral + error / tau * self.tick_ms / ti.max(1.0),
                    -max,
                    max,
                );
            }
            let dilation = clamp(error / tau.max(1.0) + self.integral, -max, max);
            // A NaN (an error of infinities, from an absurd configuration)
            // would make no period at all: run at the cadence instead.
            self.dilation = if dilation.is_nan() { 0.0 } else { dilation };
        }
        cadence.div_f64(1.0 + self.dilation)
    }

    /// A step of `period` was taken: the schedule moved by its difference
    /// from the cadence.
    pub fn stepped(&mut self, cadence: Duration, period: Duration) {
        self.offset_ms += (cadence.as_secs_f64() - period.as_secs_f64()) * 1000.0;
    }

    /// The step-rate change in force (0.05: steps 5 % faster).
    pub fn dilation(&self) -> f64 {
        self.dilation
    }

    /// The slack of the newest report, in ms.
    pub fn measured_slack_ms(&self) -> Option<f64> {
        self.last_slack_ms
    }

    /// The slack the controller holds inputs at (at the level), in ms.
    pub fn target_slack_ms(&self) -> Option<f64> {
        Some(self.level()? + self.target_offset()?)
    }

    /// Hard resyncs (jumps after the first).
    pub fn resyncs(&self) -> u64 {
        self.resyncs
    }

    /// Inputs the server counted late since joining.
    pub fn late(&self) -> u64 {
        self.late
    }

    /// Ticks the server simulated with a repeated input since joining.
    pub fn repeated(&self) -> u64 {
        self.repeated
    }
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    if v.is_empty() {
        return 0.0;
    }
    // Values equal under `total_cmp` are the same bits: an unstable sort
    // gives the same order (and one sort's code in the page, not two).
    v.sort_unstable_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_millis(50);

    fn timing(tick: u32, slack_ms: i16) -> InputTiming {
        InputTiming {
            tick: Some(Tick(tick)),
            slack_ms,
            late: 0,
            repeated: 0,
            received: None,
        }
    }

    /// Runs `steps` steps against a link whose inputs arrive `arrival(i)`
    /// ms after they are sent, the server ticking every 50 ms; returns the
    /// slacks seen.
    fn run(p: &mut Pacing, steps: u32, arrival: impl Fn(u32) -> f64) -> Vec<f64> {
        let mut now = 0.0_f64;
        let mut tick = 100_u32;
        let mut slacks = Vec::new();
        let mut inflight: Vec<(f64, u32, f64)> = Vec::new();
        let mut hold = 0;
        for i in 0..steps {
            match p.take_jump() {
                Some(Jump::Forward(n)) => tick += n,
                Some(Jump::Hold(n)) => hold += n,
                None => {}
            }
            let period = p.step_period(TICK);
            p.stepped(TICK, period);
            now += period.as_secs_f64() * 1000.0;
            if hold > 0 {
                hold -= 1;
                continue;
            }
            tick += 1;
            p.on_sent(Tick(tick), Duration::ZERO);
            let at = now + arrival(i);
            // The server simulates tick t at t * 50 ms.
            let slack = f64::from(tick) * 50.0 - at;
            inflight.push((at + 60.0, tick, slack));
            inflight.retain(|&(due, t, s)| {
                if due <= now {
                    p.on_timing(&timing(t, s as i16));
                    slacks.push(s);
                    false
                } else {
                    true
                }
            });
        }
        slacks
    }

    #[test]
    fn the_first_sample_sets_the_schedule_then_dilation_holds_it() {
        let mut p = Pacing::new(PacingConfig::default(), TICK);
        let slacks = run(&mut p, 2000, |i| 80.0 + f64::from(i % 7) * 3.0);
        assert_eq!(p.resyncs(), 0);
        let tail = &slacks[slacks.len() - 200..];
        let min = tail.iter().copied().fold(f64::INFINITY, f64::min);
        assert!((0.0..15.0).contains(&min), "just early enough: {min}");
        assert!(p.dilation().abs() < 0.01, "{}", p.dilation());
    }

    #[test]
    fn a_latency_step_is_followed_by_dilation_within_ten_percent() {
        let mut p = Pacing::new(PacingConfig::default(), TICK);
        let slacks = run(&mut p, 1200, |i| if i < 600 { 40.0 } else { 140.0 });
        assert_eq!(p.resyncs(), 0, "100 ms is closed by dilation");
        let late_after = slacks[700..].iter().filter(|s| **s < 0.0).count();
        assert_eq!(late_after, 0, "on time again within 5 s");
        assert!(p.dilation().abs() <= 0.1);
    }

    #[test]
    fn a_large_error_is_a_counted_jump() {
        let mut p = Pacing::new(PacingConfig::default(), TICK);
        run(&mut p, 1000, |i| if i < 500 { 40.0 } else { 1040.0 });
        assert_eq!(p.resyncs(), 1);
    }

    /// A bound of 1 or more divided by zero (a panic) and one of 10^30
    /// gave a period of nothing (a frame that never ends): the controller
    /// takes any bound as at most [`PacingConfig::DILATION_LIMIT`].
    #[test]
    fn an_absurd_dilation_bound_keeps_the_period_within_limits() {
        for bound in [1.0, 1e30, f64::INFINITY, f64::NAN, -1.0] {
            let config = PacingConfig {
                max_dilation: bound,
                time_constant: Duration::from_millis(1),
                ..PacingConfig::default()
            };
            let mut p = Pacing::new(config, TICK);
            // Steady, then 400 ms later (within the resync threshold:
            // dilation closes it), then steady again; the period checked
            // every ten steps.
            for chunk in 0..120 {
                let arrival = if (30..60).contains(&chunk) {
                    440.0
                } else {
                    40.0
                };
                run(&mut p, 10, |_| arrival);
                let period = p.step_period(TICK);
                assert!(
                    period >= TICK.mul_f64(2.0 / 3.0) && period <= TICK * 2,
                    "{bound}: {period:?}"
                );
                assert!(
                    p.dilation().abs() <= PacingConfig::DILATION_LIMIT,
                    "{bound}"
                );
            }
        }
    }

    #[test]
    fn counts_are_taken_from_wrapping_counters() {
        let mut p = Pacing::new(PacingConfig::default(), TICK);
        let at = |late, repeated| InputTiming {
            tick: None,
            slack_ms: 0,
            late,
            repeated,
            received: None,
        };
        assert_eq!(p.on_timing(&at(3, 1)), (3, 1), "from zero");
        assert_eq!(p.on_timing(&at(10, 1)), (7, 0));
        assert_eq!(p.on_timing(&at(7, 1)), (0, 0), "an older report");
        // Wrapping past 65535.
        let mut p = Pacing::new(PacingConfig::default(), TICK);
        p.on_timing(&at(0x7000, 0));
        p.on_timing(&at(0xe000, 0));
        assert_eq!(p.on_timing(&at(2, 0)), (0x2002, 0));
        assert_eq!(p.late(), 0x10002);
    }
}
