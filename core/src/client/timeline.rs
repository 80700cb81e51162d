//! Remote time that never runs backwards.
//!
//! Remote players are drawn at a server time some delay behind the clock's
//! estimate (`interpolation`). Both the estimate and the delay move: the
//! clock jumps forward when a snapshot arrives earlier than any before, the
//! delay grows when arrivals grow uneven. Drawn at `estimate - delay`
//! directly, remotes would jump back and forth with every change.
//!
//! A [`RemoteTimeline`] is the time remotes are drawn at. Each frame it
//! moves forward by the frame's duration scaled by a playback rate within
//! ±[`MAX_RATE_CHANGE`] of real time, the rate chosen to close the gap to
//! the target (`estimate - delay`) within about [`CONVERGENCE`]. So a late
//! or lost snapshot, a re-estimate of the clock or a new delay changes only
//! how fast remote time runs, never its direction, and never by more than
//! the rate bound. Only a target more than [`MAX_GAP_TICKS`] away (a new
//! connection, a hidden tab) is taken at once, and only forwards: a target
//! far behind makes the timeline run slow until it is reached.

use crate::shared::clamp::clamp;
use std::time::Duration;

/// The largest change of playback rate either way (0.1: 90 % to 110 %).
pub const MAX_RATE_CHANGE: f64 = 0.1;
/// How quickly a gap to the target is closed (before the rate bound).
pub const CONVERGENCE: Duration = Duration::from_millis(500);
/// A target further ahead than this many ticks is jumped to.
pub const MAX_GAP_TICKS: f64 = 40.0;

/// The server time remote players are drawn at.
#[derive(Clone, Debug, Default)]
pub struct RemoteTimeline {
    /// Remote time in server ticks, and the local time it was set at.
    at: Option<(f64, Duration)>,
    jumps: u64,
}

impl RemoteTimeline {
    /// Moves the timeline to local time `now`, towards `target` (server
    /// ticks); the time remotes are drawn at, `None` before any target.
    pub fn advance(&mut self, now: Duration, target: Option<f64>, tick: Duration) -> Option<f64> {
        let target = target.filter(|t| t.is_finite());
        let tick_secs = tick.as_secs_f64().max(1e-6);
        let (time, then) = match (self.at, target) {
            (None, None) => return None,
            (None, Some(target)) => {
                self.at = Some((target, now));
                return Some(target);
            }
            (Some(at), _) => at,
        };
        let elapsed = now.saturating_sub(then).as_secs_f64() / tick_secs;
        let Some(target) = target else {
            self.at = Some((time + elapsed, now));
            return Some(time + elapsed);
        };
        let gap = target - (time + elapsed);
        if gap > MAX_GAP_TICKS {
            self.jumps += 1;
            self.at = Some((target, now));
            return Some(target);
        }
        let wanted = 1.0 + gap * tick_secs / CONVERGENCE.as_secs_f64();
        let rate = clamp(wanted, 1.0 - MAX_RATE_CHANGE, 1.0 + MAX_RATE_CHANGE);
        let next = time + elapsed * rate;
        self.at = Some((next, now));
        Some(next)
    }

    /// The time remotes are drawn at (as of the last advance).
    pub fn time(&self) -> Option<f64> {
        self.at.map(|(t, _)| t)
    }

    /// Jumps taken (targets more than `MAX_GAP_TICKS`, 40 ticks, ahead).
    pub fn jumps(&self) -> u64 {
        self.jumps
    }

    /// Forgets everything (a new connection).
    pub fn reset(&mut self) {
        *self = RemoteTimeline::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_millis(50);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_target_that_moves_back_only_slows_the_timeline() {
        let mut t = RemoteTimeline::default();
        assert_eq!(t.advance(ms(0), Some(100.0), TICK), Some(100.0));
        let mut last = 100.0;
        // The target jumps 3 ticks back (the delay grew by 150 ms).
        for f in 1..=300u64 {
            let now = ms(f * 10);
            let target = 100.0 + (f * 10) as f64 / 50.0 - 3.0;
            let drawn = t.advance(now, Some(target), TICK).unwrap();
            let step = drawn - last;
            assert!(step > 0.0, "never backwards");
            assert!(
                (0.18 - 1e-9..=0.22 + 1e-9).contains(&step),
                "within 10 %: {step}"
            );
            last = drawn;
        }
        let target = 100.0 + 3000.0 / 50.0 - 3.0;
        assert!(
            (last - target).abs() < 0.05,
            "converged: {last} vs {target}"
        );
    }

    #[test]
    fn a_target_far_ahead_is_jumped_to_and_counted() {
        let mut t = RemoteTimeline::default();
        t.advance(ms(0), Some(10.0), TICK);
        assert_eq!(t.advance(ms(10), Some(100.0), TICK), Some(100.0));
        assert_eq!(t.jumps(), 1);
    }

    #[test]
    fn without_a_target_time_runs_on() {
        let mut t = RemoteTimeline::default();
        assert_eq!(t.advance(ms(0), None, TICK), None);
        t.advance(ms(0), Some(10.0), TICK);
        assert_eq!(t.advance(ms(50), None, TICK), Some(11.0));
    }
}
