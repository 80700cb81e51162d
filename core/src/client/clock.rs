//! An estimate of the server's clock, from snapshot arrivals and ping/pong.
//!
//! The server sends one snapshot per tick. A snapshot of tick `T` arriving at
//! local time `t` gives a sample of the offset `T * tick - t`. Network delay
//! only ever makes an arrival late, never early, so the best estimate tracks
//! the *upper* envelope of the samples: a sample above the estimate (an
//! arrival earlier than expected) is taken at once; otherwise the estimate
//! drifts down by 1/32 of the gap per sample, so that a longer route or a
//! slower server is followed within a second or two. Between samples the
//! estimate is linear in local time and never goes backwards; a new sample
//! can move it back by at most that drift.
//!
//! [`ServerClock::server_ticks`] is therefore "the newest tick we can expect
//! to have by now". Remote players are drawn an interpolation delay behind
//! it; [`ServerClock::arrival_jitter`] (the mean lateness of arrivals
//! relative to the envelope) says how large that delay must be at least.
//!
//! Ping/pong gives the round-trip time, smoothed like TCP's SRTT (1/8) with a
//! mean deviation like RTTVAR (1/4). The clock keeps its own table of pings
//! in flight ([`ServerClock::ping`], [`ServerClock::on_pong`]): at most
//! [`PINGS_IN_FLIGHT`], the oldest forgotten first, and a pong answers its
//! own ping and every older one (a lost pong is never waited for).

use std::collections::VecDeque;
use std::time::Duration;

use crate::shared::tick::Tick;

/// How many unanswered pings are remembered.
pub const PINGS_IN_FLIGHT: usize = 16;

/// The server clock as seen from the client.
#[derive(Clone, Debug)]
pub struct ServerClock {
    tick_secs: f64,
    /// Server time minus local time, in seconds.
    offset: Option<f64>,
    /// Mean lateness of arrivals behind the envelope, in seconds.
    arrival_jitter: f64,
    rtt: Option<f64>,
    rtt_var: f64,
    last_rtt: Option<f64>,
    rtt_samples: u64,
    samples: u64,
    /// Pings in flight: (id, sent at), oldest first.
    pings: VecDeque<(u64, Duration)>,
    last_ping: Option<Duration>,
    next_ping: u64,
}

impl ServerClock {
    /// A clock for a server whose ticks last `tick`.
    pub fn new(tick: Duration) -> ServerClock {
        ServerClock {
            tick_secs: tick.as_secs_f64().max(1e-6),
            offset: None,
            arrival_jitter: 0.0,
            rtt: None,
            rtt_var: 0.0,
            last_rtt: None,
            rtt_samples: 0,
            samples: 0,
            pings: VecDeque::new(),
            last_ping: None,
            next_ping: 0,
        }
    }

    /// A snapshot of `server_tick` arrived at local time `now`.
    pub fn on_snapshot(&mut self, server_tick: Tick, now: Duration) {
        let sample = f64::from(server_tick.0) * self.tick_secs - now.as_secs_f64();
        self.samples += 1;
        self.offset = Some(match self.offset {
            None => sample,
            Some(offset) if sample >= offset => sample,
            Some(offset) => {
                let late = offset - sample;
                self.arrival_jitter += (late - self.arrival_jitter) / 16.0;
                offset - late / 32.0
            }
        });
    }

    /// Whether a ping is due at `now`, one per `interval`.
    pub fn ping_due(&self, now: Duration, interval: Duration) -> bool {
        self.last_ping
            .is_none_or(|at| now.saturating_sub(at) >= interval)
    }

    /// Records a ping sent at `now`; returns its id for the `ping` message.
    pub fn ping(&mut self, now: Duration) -> u64 {
        self.next_ping += 1;
        self.last_ping = Some(now);
        if self.pings.len() >= PINGS_IN_FLIGHT {
            self.pings.pop_front();
        }
        self.pings.push_back((self.next_ping, now));
        self.next_ping
    }

    /// The pong for ping `id` arrived at `now`: a round-trip sample, unless
    /// the ping is unknown (forgotten, answered already, or never sent).
    /// Returns the sample taken.
    pub fn on_pong(&mut self, id: u64, now: Duration) -> Option<Duration> {
        let i = self.pings.iter().position(|(p, _)| *p == id)?;
        let (_, sent_at) = self.pings[i];
        self.pings.drain(..=i);
        let sample = now.saturating_sub(sent_at).as_secs_f64();
        self.last_rtt = Some(sample);
        self.rtt_samples += 1;
        match self.rtt {
            None => {
                self.rtt = Some(sample);
                self.rtt_var = sample / 2.0;
            }
            Some(rtt) => {
                self.rtt_var += ((rtt - sample).abs() - self.rtt_var) / 4.0;
                self.rtt = Some(rtt + (sample - rtt) / 8.0);
            }
        }
        Some(Duration::from_secs_f64(sample))
    }

    /// The smoothed round-trip time.
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt.map(Duration::from_secs_f64)
    }

    /// The newest raw round-trip sample.
    pub fn last_rtt(&self) -> Option<Duration> {
        self.last_rtt.map(Duration::from_secs_f64)
    }

    /// Round-trip samples taken.
    pub fn rtt_samples(&self) -> u64 {
        self.rtt_samples
    }

    /// The mean deviation of the round-trip time.
    pub fn rtt_jitter(&self) -> Option<Duration> {
        self.rtt.map(|_| Duration::from_secs_f64(self.rtt_var))
    }

    /// How late snapshots arrive on average behind the best arrival.
    pub fn arrival_jitter(&self) -> Duration {
        Duration::from_secs_f64(self.arrival_jitter.max(0.0))
    }

    /// The server time at local `now`, in ticks with fraction; `None` before
    /// the first snapshot.
    pub fn server_ticks(&self, now: Duration) -> Option<f64> {
        self.offset
            .map(|offset| (now.as_secs_f64() + offset) / self.tick_secs)
    }

    /// Snapshots seen.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::rng::SeededRng;

    const TICK: Duration = Duration::from_millis(50);

    fn ms(n: f64) -> Duration {
        Duration::from_secs_f64(n / 1000.0)
    }

    #[test]
    fn steady_arrivals_give_the_newest_tick_at_arrival() {
        let mut clock = ServerClock::new(TICK);
        assert_eq!(clock.server_ticks(ms(0.0)), None);
        for t in 1..=100u32 {
            clock.on_snapshot(Tick(t), ms(f64::from(t) * 50.0 + 40.0));
        }
        let at = clock.server_ticks(ms(100.0 * 50.0 + 40.0)).unwrap();
        assert!((at - 100.0).abs() < 1e-6, "{at}");
        let between = clock.server_ticks(ms(100.0 * 50.0 + 65.0)).unwrap();
        assert!((between - 100.5).abs() < 1e-6, "{between}");
        assert!(clock.arrival_jitter() < ms(1.0));
    }

    #[test]
    fn jittered_arrivals_stay_within_a_tick() {
        let mut rng = SeededRng::new(9);
        let mut clock = ServerClock::new(TICK);
        for t in 1..=400u32 {
            let arrival = f64::from(t) * 50.0 + 40.0 + f64::from(rng.range_f32(0.0, 30.0));
            clock.on_snapshot(Tick(t), ms(arrival));
            let estimate = clock.server_ticks(ms(arrival)).unwrap();
            if t > 20 {
                assert!(
                    estimate >= f64::from(t) - 0.05 && estimate <= f64::from(t) + 1.0,
                    "tick {t}: {estimate}"
                );
            }
        }
        let jitter = clock.arrival_jitter();
        assert!(jitter > ms(3.0) && jitter < ms(20.0), "{jitter:?}");
    }

    #[test]
    fn rtt_is_smoothed_like_tcp() {
        let mut clock = ServerClock::new(TICK);
        assert_eq!(clock.rtt(), None);
        for i in 0..3 {
            let sent = ms(f64::from(i) * 1000.0);
            let id = clock.ping(sent);
            assert_eq!(clock.on_pong(id, sent + ms(100.0)), Some(ms(100.0)));
        }
        assert_eq!(clock.rtt(), Some(ms(100.0)));
        let id = clock.ping(ms(5000.0));
        clock.on_pong(id, ms(5200.0));
        let rtt = clock.rtt().unwrap().as_secs_f64() * 1000.0;
        assert!((rtt - 112.5).abs() < 1e-6, "{rtt}");
    }

    #[test]
    fn stale_snapshots_and_backward_time_do_not_break_it() {
        let mut clock = ServerClock::new(TICK);
        clock.on_snapshot(Tick(100), ms(5040.0));
        let before = clock.server_ticks(ms(5040.0)).unwrap();
        // An old snapshot arriving late only nudges the estimate down a little.
        clock.on_snapshot(Tick(10), ms(5050.0));
        let after = clock.server_ticks(ms(5040.0)).unwrap();
        assert!(after <= before && before - after < 3.0);
        // Time going backwards is just an earlier moment.
        let id = clock.ping(ms(100.0));
        clock.on_pong(id, ms(50.0));
        assert_eq!(clock.rtt(), Some(Duration::ZERO));
    }

    #[test]
    fn pongs_answer_their_own_ping_once_and_older_ones_are_dropped() {
        let mut clock = ServerClock::new(TICK);
        assert!(clock.ping_due(ms(0.0), ms(1000.0)));
        let first = clock.ping(ms(0.0));
        assert!(!clock.ping_due(ms(999.0), ms(1000.0)));
        let second = clock.ping(ms(1000.0));
        assert_eq!(clock.on_pong(second, ms(1030.0)), Some(ms(30.0)));
        assert_eq!(clock.on_pong(first, ms(1040.0)), None, "lost, dropped");
        assert_eq!(clock.on_pong(second, ms(1050.0)), None, "answered once");
        assert_eq!(clock.on_pong(999, ms(1050.0)), None, "never sent");
        assert_eq!(clock.rtt_samples(), 1);
        // Only the newest PINGS_IN_FLIGHT are remembered.
        let oldest = clock.ping(ms(2000.0));
        for i in 0..PINGS_IN_FLIGHT {
            clock.ping(ms(2001.0 + i as f64));
        }
        assert_eq!(clock.on_pong(oldest, ms(3000.0)), None);
    }
}
