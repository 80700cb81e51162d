//! When to try again after a connection closes: a pure policy, so the
//! browser shell only keeps time and the rule is tested natively.
//!
//! The wait doubles from [`Backoff::min`] to at most [`Backoff::max`] with
//! each close in a row, and starts afresh once a connection has stayed up
//! for [`Backoff::reset_after`]: a server that restarts is found again at
//! once, one that refuses is not hammered.

use std::time::Duration;

/// The reconnection policy and its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// The first wait.
    pub min: Duration,
    /// The longest wait.
    pub max: Duration,
    /// A connection up at least this long resets the wait to `min`.
    pub reset_after: Duration,
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new(
            Duration::from_millis(500),
            Duration::from_secs(8),
            Duration::from_secs(10),
        )
    }
}

impl Backoff {
    /// A policy waiting `min`, doubling to `max`, reset by a connection up
    /// for `reset_after`.
    pub fn new(min: Duration, max: Duration, reset_after: Duration) -> Backoff {
        Backoff {
            min,
            max: max.max(min),
            reset_after,
            next: min,
        }
    }

    /// A connection closed after being up for `uptime` (zero if it never
    /// opened): how long to wait before the next attempt.
    pub fn on_close(&mut self, uptime: Duration) -> Duration {
        if uptime >= self.reset_after {
            self.next = self.min;
        }
        let wait = self.next;
        self.next = (self.next * 2).min(self.max);
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEVER_OPENED: Duration = Duration::ZERO;

    #[test]
    fn waits_double_up_to_the_maximum() {
        let mut backoff = Backoff::default();
        let waits: Vec<u64> = (0..7)
            .map(|_| backoff.on_close(NEVER_OPENED).as_millis() as u64)
            .collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 8000, 8000, 8000]);
    }

    #[test]
    fn a_connection_that_stayed_up_starts_afresh() {
        let mut backoff = Backoff::default();
        for _ in 0..4 {
            backoff.on_close(NEVER_OPENED);
        }
        // Up for a few seconds only: still backing off.
        assert_eq!(backoff.on_close(Duration::from_secs(3)).as_millis(), 8000);
        // Up for 10 s: the server is healthy again.
        assert_eq!(backoff.on_close(Duration::from_secs(10)).as_millis(), 500);
        assert_eq!(backoff.on_close(NEVER_OPENED).as_millis(), 1000);
    }

    #[test]
    fn a_maximum_below_the_minimum_is_the_minimum() {
        let mut backoff = Backoff::new(
            Duration::from_secs(2),
            Duration::from_secs(1),
            Duration::from_secs(10),
        );
        assert_eq!(backoff.on_close(NEVER_OPENED), Duration::from_secs(2));
        assert_eq!(backoff.on_close(NEVER_OPENED), Duration::from_secs(2));
    }
}
