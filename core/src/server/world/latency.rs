//! The round trip of each protocol-2 player, measured by the server itself,
//! and the rewind bound it gives its actions aimed at a view.
//!
//! The room sends the snapshot of tick `T` right after it steps `T`. An
//! input message that acknowledges `T` (`snapshot_ack`) and arrives `since`
//! after the step of tick `now` therefore measures a round trip of
//! `(now - T) * tick + since`: the way down, the client's wait until its
//! next input message, the way up. The client states no time: it only
//! names a tick. Naming a newer tick than it holds can only shorten its own
//! bound; naming an older one lengthens it no further than the game's own
//! bound on rewinding, which every player has today, and costs it larger
//! deltas. A tick not
//! yet stepped, or one from before the join, is no sample.
//!
//! Only the first arrival of each newer acknowledgement is a sample: a tick
//! acknowledged again (no newer snapshot came) has waited longer on the
//! client. Everything that disturbs a sample (that wait, jitter, a lost
//! snapshot acknowledged late through its predecessor) only ever adds to
//! it, so the estimate is the smallest of the last [`RTT_WINDOW`] samples:
//! one late or lost acknowledgement changes nothing, a shorter route is
//! taken at once and a longer one within [`RTT_WINDOW`] samples (under half
//! a second at 20 input messages a second). Samples are whole
//! microseconds and the bound is computed from them in integers, so a
//! replay of the room's calls (acknowledgements and `since` are recorded)
//! computes the very same bound.
//!
//! **The bound.** A player draws remotes at most
//! [`MAX_VIEW_DELAY_MS`] behind the newest snapshot it holds, and that
//! snapshot left the server at most one round trip before the player's
//! input arrived. An input may therefore claim a view no older than its
//! input's arrival minus (round trip + [`MAX_VIEW_DELAY_MS`] +
//! [`REWIND_MARGIN_TICKS`] ticks); the margin absorbs uplink jitter and the
//! remote timeline's ±10 % rate. Measured from the arrival, not from the
//! tick the input is simulated at: how early a client sends (its slack) is
//! its pacing's business and adds nothing it could have seen.

use std::time::Duration;

use crate::shared::tick::Tick;
use crate::shared::timing::MAX_VIEW_DELAY_MS;

/// Round-trip samples the estimate is the smallest of.
pub const RTT_WINDOW: usize = 8;

/// Ticks of margin the rewind bound adds to a measured round trip and the
/// largest interpolation delay.
pub const REWIND_MARGIN_TICKS: u32 = 2;

/// A protocol-2 player's measured round trip.
#[derive(Clone, Debug, Default)]
pub(super) struct RoundTrip {
    /// The newest tick acknowledged, whose first arrival was a sample.
    newest: Option<Tick>,
    /// The last samples in microseconds, a ring of `len` (at most
    /// [`RTT_WINDOW`]) starting anywhere.
    samples: [u32; RTT_WINDOW],
    len: usize,
    next: usize,
}

impl RoundTrip {
    /// The snapshot of `acked` was acknowledged by a message that arrived
    /// `since` after the step of `now`, with ticks of `tick_ms`; `joined`
    /// is the tick the player joined at (its first snapshot is the next).
    pub(super) fn acknowledged(
        &mut self,
        acked: Tick,
        (now, since): (Tick, Duration),
        joined: Tick,
        tick_ms: u32,
    ) {
        if acked > now || acked <= joined || self.newest.is_some_and(|n| acked <= n) {
            return;
        }
        self.newest = Some(acked);
        let behind = u64::from(now.0 - acked.0) * u64::from(tick_ms) * 1000;
        let since_us = u64::try_from(since.as_micros()).unwrap_or(u64::MAX);
        let sample = u32::try_from(behind.saturating_add(since_us)).unwrap_or(u32::MAX);
        self.samples[self.next] = sample;
        self.next = (self.next + 1) % RTT_WINDOW;
        self.len = (self.len + 1).min(RTT_WINDOW);
    }

    /// The estimate in microseconds: the smallest recent sample; `None`
    /// before the first.
    pub(super) fn micros(&self) -> Option<u32> {
        self.samples[..self.len].iter().copied().min()
    }

    /// The estimate; `None` before the first sample.
    pub(super) fn get(&self) -> Option<Duration> {
        self.micros().map(|us| Duration::from_micros(u64::from(us)))
    }

    /// The oldest view (a server tick with fraction) an input may claim whose
    /// input arrived `since` after the step of `now`; `None` while the
    /// round trip is unmeasured.
    pub(super) fn oldest_view(&self, (now, since): (Tick, Duration), tick_ms: u32) -> Option<f64> {
        let rtt = i64::from(self.micros()?);
        let tick = i64::from(tick_ms.max(1)) * 1000;
        let since = i64::try_from(since.as_micros()).unwrap_or(i64::MAX / 4);
        let arrival = (i64::from(now.0) * tick).saturating_add(since);
        let allowed =
            rtt + i64::from(MAX_VIEW_DELAY_MS) * 1000 + i64::from(REWIND_MARGIN_TICKS) * tick;
        // Whole microseconds, exact in an f64 for any tick a world reaches.
        Some(arrival.saturating_sub(allowed) as f64 / tick as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    fn at(now: u32, since_ms: u64) -> (Tick, Duration) {
        (Tick(now), MS(since_ms))
    }

    #[test]
    fn a_round_trip_is_ticks_behind_plus_since() {
        let mut rtt = RoundTrip::default();
        assert_eq!(rtt.get(), None);
        // Snapshot 10 acknowledged 30 ms after the step of tick 12: 130 ms.
        rtt.acknowledged(Tick(10), at(12, 30), Tick(0), 50);
        assert_eq!(rtt.get(), Some(MS(130)));
    }

    #[test]
    fn only_the_first_arrival_of_a_newer_ack_is_a_sample() {
        let mut rtt = RoundTrip::default();
        rtt.acknowledged(Tick(10), at(11, 10), Tick(0), 50);
        // The same tick again, later (no newer snapshot came): no sample.
        rtt.acknowledged(Tick(10), at(11, 40), Tick(0), 50);
        rtt.acknowledged(Tick(9), at(12, 0), Tick(0), 50);
        assert_eq!(rtt.get(), Some(MS(60)));
        assert_eq!(rtt.len, 1);
        // A tick not stepped yet, or from before the join: no sample.
        rtt.acknowledged(Tick(13), at(12, 0), Tick(0), 50);
        let mut fresh = RoundTrip::default();
        fresh.acknowledged(Tick(5), at(6, 0), Tick(5), 50);
        assert_eq!((rtt.len, fresh.get()), (1, None));
    }

    #[test]
    fn one_late_ack_changes_nothing_and_a_longer_route_is_followed() {
        let mut rtt = RoundTrip::default();
        // 40 ms round trips, one per tick.
        for t in 1..=20 {
            rtt.acknowledged(Tick(t), at(t, 40), Tick(0), 50);
        }
        // A lost snapshot: the next message acknowledges its predecessor
        // one tick later (90 ms), then the route is as before.
        rtt.acknowledged(Tick(21), at(22, 40), Tick(0), 50);
        rtt.acknowledged(Tick(23), at(23, 40), Tick(0), 50);
        assert_eq!(rtt.get(), Some(MS(40)));
        // A longer route (140 ms): the window forgets the short samples.
        for t in 24..24 + RTT_WINDOW as u32 {
            rtt.acknowledged(Tick(t), at(t + 2, 40), Tick(0), 50);
            let expected = if t + 1 < 24 + RTT_WINDOW as u32 {
                40
            } else {
                140
            };
            assert_eq!(rtt.get(), Some(MS(expected)), "after tick {t}");
        }
        // A shorter one is taken at once.
        rtt.acknowledged(Tick(40), at(40, 15), Tick(0), 50);
        assert_eq!(rtt.get(), Some(MS(15)));
    }

    #[test]
    fn the_oldest_view_is_the_arrival_minus_round_trip_delay_and_margin() {
        let mut rtt = RoundTrip::default();
        assert_eq!(rtt.oldest_view(at(100, 20), 50), None);
        rtt.acknowledged(Tick(100), at(100, 20), Tick(0), 50);
        // Arrived at tick 100.4; 20 + 400 + 100 ms = 10.4 ticks before.
        assert_eq!(rtt.oldest_view(at(100, 20), 50), Some(90.0));
        // Early in a world's life the bound is below tick 0.
        assert_eq!(rtt.oldest_view(at(2, 20), 50), Some(-8.0));
    }
}
