//! A seeded network conditioner: added latency, jitter, loss and duplication
//! applied to whole messages, one instance per direction.
//!
//! It models what the transport underneath would do ([`Delivery`]). Over
//! datagrams (WebTransport) a message may be dropped, delivered twice, or
//! overtaken by a later one when jitter is larger than the gap between
//! them. Over a stream (WebSocket, TCP) nothing is lost, duplicated or
//! reordered: a lost segment is retransmitted after a timeout, and it holds
//! back every message behind it (head-of-line blocking), so loss shows up as
//! a stall. Every random choice comes from a
//! [`SeededRng`], so the same seed and the same sends give the same
//! deliveries: a bug seen under bad conditions can be replayed.
//!
//! Time is whatever the caller says it is (`now`, since any epoch).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::shared::clamp::clamp;
use crate::shared::rng::SeededRng;

/// The longest latency or jitter taken into account, in milliseconds.
pub const MAX_DELAY_MS: f32 = 10_000.0;

/// Added conditions of one direction. The default is a perfect link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkConditions {
    /// One-way latency added to every message, in milliseconds.
    pub latency_ms: f32,
    /// Uniform jitter around the latency (plus or minus), in milliseconds.
    pub jitter_ms: f32,
    /// Probability that a message is lost, 0 to 1.
    pub loss: f32,
    /// Probability that a message is delivered twice, 0 to 1.
    pub duplicate: f32,
}

impl LinkConditions {
    /// The same conditions with every number made usable: delays within
    /// 0..=[`MAX_DELAY_MS`], probabilities within 0..=1, NaN as 0.
    #[must_use]
    pub fn clamped(self) -> LinkConditions {
        let clamp = |v: f32, max: f32| {
            if v.is_finite() {
                clamp(v, 0.0, max)
            } else {
                0.0
            }
        };
        LinkConditions {
            latency_ms: clamp(self.latency_ms, MAX_DELAY_MS),
            jitter_ms: clamp(self.jitter_ms, MAX_DELAY_MS),
            loss: clamp(self.loss, 1.0),
            duplicate: clamp(self.duplicate, 1.0),
        }
    }
}

/// How the transport underneath delivers messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Delivery {
    /// Unreliable datagrams: loss drops, duplication repeats, jitter
    /// reorders.
    #[default]
    Datagrams,
    /// One reliable, ordered stream (TCP): a loss delays the message by a
    /// retransmission timeout and everything behind it waits.
    Stream,
}

/// The retransmission timeout a lost stream segment costs: at least 200 ms
/// (Linux's minimum RTO), or twice the one-way latency (about one RTT)
/// plus four times the jitter.
fn retransmission_timeout(c: &LinkConditions) -> Duration {
    let ms = (2.0 * c.latency_ms + 4.0 * c.jitter_ms).max(200.0);
    Duration::from_micros((f64::from(ms) * 1000.0) as u64)
}

/// What a conditioner did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConditionerStats {
    /// Messages handed in.
    pub sent: u64,
    /// Messages handed out (duplicates included).
    pub delivered: u64,
    /// Messages lost.
    pub dropped: u64,
    /// Extra copies scheduled.
    pub duplicated: u64,
    /// Messages a stream had to retransmit (delayed, not lost).
    pub retransmitted: u64,
}

/// A message on its way.
#[derive(Clone, Debug)]
struct InFlight<T> {
    due: Duration,
    seq: u64,
    message: T,
}

/// Messages in flight through one direction of a conditioned link.
#[derive(Clone, Debug)]
pub struct Conditioner<T> {
    rng: SeededRng,
    conditions: LinkConditions,
    /// Sorted by (due, seq): the front is delivered first.
    in_flight: Vec<InFlight<T>>,
    seq: u64,
    stats: ConditionerStats,
    delivery: Delivery,
    /// The latest due time handed out (streams deliver in order).
    last_due: Duration,
}

impl<T: Clone> Conditioner<T> {
    /// A conditioner with its own seeded randomness.
    pub fn new(seed: u64, conditions: LinkConditions) -> Conditioner<T> {
        Conditioner {
            rng: SeededRng::new(seed),
            conditions: conditions.clamped(),
            in_flight: Vec::new(),
            seq: 0,
            stats: ConditionerStats::default(),
            delivery: Delivery::default(),
            last_due: Duration::ZERO,
        }
    }

    /// Models datagrams or a stream from now on.
    pub fn set_delivery(&mut self, delivery: Delivery) {
        self.delivery = delivery;
    }

    /// How the transport underneath delivers.
    pub fn delivery(&self) -> Delivery {
        self.delivery
    }

    /// Changes the conditions for messages sent from now on.
    pub fn set_conditions(&mut self, conditions: LinkConditions) {
        self.conditions = conditions.clamped();
    }

    /// The conditions in force.
    pub fn conditions(&self) -> LinkConditions {
        self.conditions
    }

    /// Hands a message in at `now`: it is lost, or scheduled once or twice.
    pub fn send(&mut self, now: Duration, message: T) {
        self.stats.sent += 1;
        let c = self.conditions;
        if self.delivery == Delivery::Stream {
            let lost = c.loss > 0.0 && self.rng.chance(c.loss);
            let mut at = now;
            if lost {
                self.stats.retransmitted += 1;
                at += retransmission_timeout(&c);
            }
            self.schedule(at, message);
            return;
        }
        if c.loss > 0.0 && self.rng.chance(c.loss) {
            self.stats.dropped += 1;
            return;
        }
        let twice = c.duplicate > 0.0 && self.rng.chance(c.duplicate);
        if twice {
            self.stats.duplicated += 1;
            let copy = message.clone();
            self.schedule(now, copy);
        }
        self.schedule(now, message);
    }

    fn schedule(&mut self, now: Duration, message: T) {
        let c = self.conditions;
        let jitter = if c.jitter_ms > 0.0 {
            self.rng.range_f32(-c.jitter_ms, c.jitter_ms)
        } else {
            0.0
        };
        let delay_ms = (c.latency_ms + jitter).max(0.0);
        let mut due = now + Duration::from_micros((f64::from(delay_ms) * 1000.0) as u64);
        if self.delivery == Delivery::Stream {
            // In order: nothing overtakes what was sent before it.
            due = due.max(self.last_due);
        }
        self.last_due = self.last_due.max(due);
        self.seq += 1;
        let entry = InFlight {
            due,
            seq: self.seq,
            message,
        };
        let at = self
            .in_flight
            .partition_point(|m| (m.due, m.seq) <= (entry.due, entry.seq));
        self.in_flight.insert(at, entry);
    }

    /// The next message due at `now`, earliest first, ties in send order.
    pub fn deliver(&mut self, now: Duration) -> Option<T> {
        self.deliver_timed(now).map(|(_, message)| message)
    }

    /// Like [`Conditioner::deliver`], with when the message was due: a
    /// shell that looks only now and then (once a frame) still learns when
    /// it arrived, as a real network's arrival is stamped.
    pub fn deliver_timed(&mut self, now: Duration) -> Option<(Duration, T)> {
        if self.in_flight.first().is_some_and(|m| m.due <= now) {
            self.stats.delivered += 1;
            let m = self.in_flight.remove(0);
            Some((m.due, m.message))
        } else {
            None
        }
    }

    /// Forgets every message on its way (the connection they belonged to is
    /// gone); they count as dropped.
    pub fn clear(&mut self) {
        self.stats.dropped += self.in_flight.len() as u64;
        self.in_flight.clear();
    }

    /// When the next message is due.
    pub fn next_due(&self) -> Option<Duration> {
        self.in_flight.first().map(|m| m.due)
    }

    /// Messages still on their way.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// The counters.
    pub fn stats(&self) -> ConditionerStats {
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_delays_what_it_loses_and_everything_behind_it() {
        let ms = Duration::from_millis;
        let mut link = Conditioner::new(
            3,
            LinkConditions {
                latency_ms: 50.0,
                jitter_ms: 20.0,
                loss: 0.2,
                duplicate: 0.5,
            },
        );
        link.set_delivery(Delivery::Stream);
        for i in 0..500u64 {
            link.send(ms(i * 10), i);
        }
        let mut got = Vec::new();
        let mut at = Vec::new();
        let mut t = Duration::ZERO;
        while got.len() < 500 {
            t += ms(1);
            while let Some(m) = link.deliver(t) {
                got.push(m);
                at.push(t);
            }
        }
        assert_eq!(
            got,
            (0..500).collect::<Vec<_>>(),
            "all of them, in order, once"
        );
        let stats = link.stats();
        assert_eq!((stats.dropped, stats.duplicated), (0, 0));
        assert!(stats.retransmitted > 50, "{stats:?}");
        // A retransmission (200 ms or more late) holds back the message
        // sent right after it, which would otherwise have arrived earlier.
        let held = (0..499).any(|i| {
            let late = at[i].saturating_sub(ms(i as u64 * 10)) >= ms(200);
            let next_waited = at[i + 1].saturating_sub(ms((i as u64 + 1) * 10)) >= ms(190);
            late && next_waited
        });
        assert!(held, "head-of-line blocking");
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn drain(c: &mut Conditioner<u32>, now: Duration) -> Vec<u32> {
        std::iter::from_fn(|| c.deliver(now)).collect()
    }

    #[test]
    fn a_perfect_link_passes_everything_through_in_order() {
        let mut c = Conditioner::new(1, LinkConditions::default());
        for i in 0..10 {
            c.send(ms(5), i);
        }
        assert_eq!(drain(&mut c, ms(5)), (0..10).collect::<Vec<_>>());
        assert_eq!(c.stats().delivered, 10);
    }

    #[test]
    fn latency_delays_exactly_and_jitter_stays_in_bounds() {
        let mut c = Conditioner::new(
            1,
            LinkConditions {
                latency_ms: 100.0,
                ..LinkConditions::default()
            },
        );
        c.send(ms(0), 1);
        assert_eq!(c.deliver(ms(99)), None);
        assert_eq!(c.deliver(ms(100)), Some(1));

        let mut c = Conditioner::new(
            2,
            LinkConditions {
                latency_ms: 100.0,
                jitter_ms: 30.0,
                ..LinkConditions::default()
            },
        );
        for i in 0..1000 {
            c.send(ms(0), i);
        }
        assert_eq!(c.deliver(ms(69)), None);
        assert_eq!(drain(&mut c, ms(130)).len(), 1000);
    }

    /// A shell that looks once a frame learns when each message was due,
    /// as a network's arrival is stamped, not when it looked.
    #[test]
    fn a_late_look_still_tells_when_each_message_was_due() {
        let mut c = Conditioner::new(
            8,
            LinkConditions {
                latency_ms: 75.0,
                jitter_ms: 30.0,
                ..LinkConditions::default()
            },
        );
        for i in 0..100u64 {
            c.send(ms(i * 50), i);
        }
        let mut now = Duration::ZERO;
        let mut seen = 0;
        while seen < 100 {
            now += Duration::from_micros(16_667);
            while let Some((due, _)) = c.deliver_timed(now) {
                assert!(due <= now && now.saturating_sub(due) < Duration::from_micros(16_667));
                seen += 1;
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_deliveries() {
        let run = || {
            let mut c = Conditioner::new(
                7,
                LinkConditions {
                    latency_ms: 50.0,
                    jitter_ms: 40.0,
                    loss: 0.2,
                    duplicate: 0.1,
                },
            );
            let mut out = Vec::new();
            for t in 0..500u64 {
                c.send(ms(t * 10), t as u32);
                out.extend(drain(&mut c, ms(t * 10)).into_iter().map(|m| (t, m)));
            }
            out
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn loss_and_duplication_are_counted() {
        let mut c = Conditioner::new(
            3,
            LinkConditions {
                loss: 1.0,
                ..LinkConditions::default()
            },
        );
        c.send(ms(0), 1);
        assert_eq!((c.deliver(ms(1000)), c.stats().dropped), (None, 1));

        let mut c = Conditioner::new(
            4,
            LinkConditions {
                loss: 0.3,
                ..LinkConditions::default()
            },
        );
        for i in 0..10_000 {
            c.send(ms(0), i);
        }
        let dropped = c.stats().dropped;
        assert!((2500..=3500).contains(&dropped), "{dropped}");

        let mut c = Conditioner::new(
            5,
            LinkConditions {
                duplicate: 1.0,
                ..LinkConditions::default()
            },
        );
        c.send(ms(0), 1);
        c.send(ms(0), 2);
        assert_eq!(drain(&mut c, ms(0)), vec![1, 1, 2, 2]);
    }

    #[test]
    fn unusable_conditions_count_as_zero() {
        let mut c = Conditioner::new(
            6,
            LinkConditions {
                latency_ms: f32::NAN,
                jitter_ms: -5.0,
                loss: f32::INFINITY,
                duplicate: -1.0,
            },
        );
        assert_eq!(c.conditions().latency_ms, 0.0);
        assert_eq!(c.conditions().loss, 0.0);
        c.send(ms(0), 1);
        assert_eq!(c.deliver(ms(0)), Some(1));
    }
}
