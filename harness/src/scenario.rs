//! What a stepper scenario scripts per client: its own clock (a rate error,
//! frame hitches) and its network, per direction, over time (latency steps,
//! jitter, random and burst loss, blackouts, duplication; reordering comes
//! with jitter larger than the gap between messages).
//!
//! Both are plain data read by [`crate::stepper::Stepper`], so a scenario is
//! a value and the same value always gives the same run.

use std::time::Duration;

use skirmish_core::LinkConditions;

/// A client's clock against the stepper's (true) time.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientClock {
    /// Local seconds per true second (1.005: 0.5 % fast).
    pub rate: f64,
    /// Frame hitches: from this true time, no frame for this long.
    pub hitches: Vec<(Duration, Duration)>,
    /// The render frame interval.
    pub frame: Duration,
}

impl Default for ClientClock {
    fn default() -> Self {
        ClientClock {
            rate: 1.0,
            hitches: Vec::new(),
            frame: Duration::from_millis(10),
        }
    }
}

impl ClientClock {
    /// The client's local time at true time `t`.
    pub fn local(&self, t: Duration) -> Duration {
        t.mul_f64(self.rate)
    }

    /// Whether a frame is drawn at true time `t` (not inside a hitch).
    pub fn draws_at(&self, t: Duration) -> bool {
        !self
            .hitches
            .iter()
            .any(|&(start, len)| t > start && t < start + len)
    }
}

/// One change of a client's network at a true time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetChange {
    /// From when.
    pub at: Duration,
    /// Client to server from then on.
    pub up: LinkConditions,
    /// Server to client from then on.
    pub down: LinkConditions,
}

/// A client's network over time: the conditions of the newest change at or
/// before each moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetScript {
    /// The changes, in time order; the first applies from the start.
    pub changes: Vec<NetChange>,
}

impl NetScript {
    /// The same conditions both ways for the whole run.
    pub fn steady(both: LinkConditions) -> NetScript {
        NetScript {
            changes: vec![NetChange {
                at: Duration::ZERO,
                up: both,
                down: both,
            }],
        }
    }

    /// Adds a change at `at` (kept in time order).
    #[must_use]
    pub fn then(mut self, at: Duration, up: LinkConditions, down: LinkConditions) -> NetScript {
        self.changes.push(NetChange { at, up, down });
        self.changes.sort_by_key(|c| c.at);
        self
    }

    /// The change that takes effect in `(from, to]`, if any (the newest).
    pub fn change_in(&self, from: Duration, to: Duration) -> Option<&NetChange> {
        self.changes
            .iter()
            .rev()
            .find(|c| c.at > from && c.at <= to)
    }

    /// The conditions at the start.
    pub fn initial(&self) -> (LinkConditions, LinkConditions) {
        self.changes
            .first()
            .filter(|c| c.at == Duration::ZERO)
            .map_or(
                (LinkConditions::default(), LinkConditions::default()),
                |c| (c.up, c.down),
            )
    }
}

/// A link of `rtt_ms` round trip (half each way) with `jitter_ms` either
/// way and `loss` each way.
pub fn link(rtt_ms: f32, jitter_ms: f32, loss: f32) -> LinkConditions {
    LinkConditions {
        latency_ms: rtt_ms / 2.0,
        jitter_ms,
        loss,
        duplicate: 0.0,
    }
}

pub use skirmish_core::percentile;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_change_in_a_span_applies() {
        let a = link(50.0, 0.0, 0.0);
        let b = link(250.0, 0.0, 0.0);
        let script = NetScript::steady(a).then(Duration::from_secs(10), b, b);
        assert_eq!(script.initial(), (a, a));
        let ms = Duration::from_millis;
        assert!(script.change_in(ms(0), ms(9990)).is_none());
        assert_eq!(script.change_in(ms(9990), ms(10_000)).unwrap().up, b);
    }

    #[test]
    fn clocks_drift_and_hitch() {
        let clock = ClientClock {
            rate: 1.005,
            hitches: vec![(Duration::from_secs(1), Duration::from_millis(250))],
            ..ClientClock::default()
        };
        assert_eq!(
            clock.local(Duration::from_secs(100)),
            Duration::from_millis(100_500)
        );
        assert!(!clock.draws_at(Duration::from_millis(1100)));
        assert!(clock.draws_at(Duration::from_millis(1250)));
        assert_eq!(percentile(&[3.0, 1.0, 2.0], 50.0), 2.0);
    }
}
