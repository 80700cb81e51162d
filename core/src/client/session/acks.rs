//! Input-to-acknowledgement, as the session sees it: from the step that
//! made an input to the first snapshot acknowledging its tick, over the
//! newest [`SAMPLES`] inputs, for the HUD (a page reports what its player
//! feels, the same figure the bots and the stepper report).

use std::collections::VecDeque;
use std::time::Duration;

use crate::shared::percentile::nearest_rank;
use crate::shared::tick::Tick;

/// Acknowledged inputs the quantiles are taken over.
pub const SAMPLES: usize = 256;

/// Inputs waiting for their acknowledgement, and the latest delays.
#[derive(Clone, Debug, Default)]
pub(crate) struct AckTimer {
    /// Inputs not yet acknowledged: tick and when it was made.
    waiting: VecDeque<(Tick, Duration)>,
    /// The newest delays, in microseconds.
    delays: VecDeque<u64>,
}

impl AckTimer {
    /// The step for `tick` was made at `now`.
    pub(crate) fn made(&mut self, tick: Tick, now: Duration) {
        if self.waiting.len() >= SAMPLES {
            self.waiting.pop_front();
        }
        self.waiting.push_back((tick, now));
    }

    /// Snapshots acknowledge inputs up to `ack` as of `now`.
    pub(crate) fn acknowledged(&mut self, ack: Tick, now: Duration) {
        while let Some(&(tick, made)) = self.waiting.front() {
            if tick > ack {
                break;
            }
            self.waiting.pop_front();
            if self.delays.len() >= SAMPLES {
                self.delays.pop_front();
            }
            let delay = now.saturating_sub(made).as_micros();
            self.delays
                .push_back(u64::try_from(delay).unwrap_or(u64::MAX));
        }
    }

    /// The median and the 99th percentile of the newest delays, once there
    /// are any (one sort for both: the HUD asks every frame).
    pub(crate) fn p50_p99(&self) -> Option<(Duration, Duration)> {
        let mut sorted: Vec<u64> = self.delays.iter().copied().collect();
        sorted.sort_unstable();
        let at = |p: f64| nearest_rank(sorted.len(), p).map(|i| Duration::from_micros(sorted[i]));
        Some((at(50.0)?, at(99.0)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn each_input_is_timed_to_the_first_snapshot_that_acknowledges_it() {
        let mut t = AckTimer::default();
        assert_eq!(t.p50_p99(), None);
        for (tick, at) in [(1, 0), (2, 50), (3, 100)] {
            t.made(Tick(tick), ms(at));
        }
        // One snapshot acknowledges the first two at 200 ms.
        t.acknowledged(Tick(2), ms(200));
        // A snapshot that acknowledges nothing new changes nothing.
        t.acknowledged(Tick(2), ms(400));
        t.acknowledged(Tick(3), ms(260));
        // 150, 160 and 200 ms: the median and (rounded to a sample) the
        // 99th percentile.
        assert_eq!(t.p50_p99(), Some((ms(160), ms(200))));
    }

    #[test]
    fn only_the_newest_are_kept() {
        let mut t = AckTimer::default();
        for i in 0..(2 * SAMPLES as u32) {
            t.made(Tick(i), ms(u64::from(i)));
            t.acknowledged(
                Tick(i),
                ms(u64::from(i) + if i < SAMPLES as u32 { 500 } else { 100 }),
            );
        }
        assert_eq!(
            t.p50_p99(),
            Some((ms(100), ms(100))),
            "the old, slow ones are gone"
        );
    }
}
