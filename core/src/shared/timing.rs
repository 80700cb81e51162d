//! How early a client's inputs reach the server (protocol 2): the feedback
//! the server sends every client with its snapshots, and the histograms the
//! server keeps of it (slack of the inputs in time, lateness of the late).
//!
//! In protocol 2 an input names the server tick it is for. Its **slack** is
//! how long before that tick is simulated it arrived: positive when early,
//! negative when late (then it was dropped and the tick repeated the
//! player's previous input). The server reports, per tick, the slack of the
//! oldest input that arrived for the first time since the last snapshot,
//! with the tick of that input, and its running counts of late and repeated
//! inputs. The client's pacing controller (`client::pacing`) holds its
//! inputs early enough from these numbers alone.
//!
//! In a compact head the feedback is 7 bytes, 13 with a [`Receipt`] (see
//! `compact`); JSON clients get a `timing` message before each snapshot.

use serde::{Deserialize, Serialize};

/// The largest interpolation delay a client draws remote players at: its
/// adaptive delay is at most four times the default 100 ms. A player's
/// view may lag what it has received from the server by this much, which
/// the server allows for when it bounds how far back an action aimed at
/// that view is judged.
pub const MAX_VIEW_DELAY_MS: u32 = 400;

use crate::shared::clamp::clamp;
use crate::shared::tick::Tick;

/// The slack the wire can carry, in milliseconds (either way).
pub const MAX_SLACK_MS: i32 = i16::MAX as i32;

/// One tick's input timing feedback for one client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputTiming {
    /// The input whose slack is reported; `None` when no input arrived for
    /// the first time since the last snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<Tick>,
    /// How long before its tick was simulated that input arrived, in
    /// milliseconds; negative when it was late.
    #[serde(default)]
    pub slack_ms: i16,
    /// Inputs of this client that arrived after their tick (a running
    /// count that wraps at 65536).
    #[serde(default)]
    pub late: u16,
    /// Ticks of this client simulated with its previous input because its
    /// own was missing (a running count that wraps at 65536).
    #[serde(default)]
    pub repeated: u16,
    /// Which of its numbered input messages arrived, for its uplink loss;
    /// `None` until one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<Receipt>,
}

/// Which input messages of a client arrived, by their sequence numbers
/// (`seq` of `input`): the newest, and a bit for each of the 32 before it
/// (bit `i`: `newest - 1 - i` arrived). Numbers wrap at 65536; one more
/// than 32 thousand behind the newest counts as ahead of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The newest sequence number that arrived.
    pub newest: u16,
    /// Bit `i`: message `newest - 1 - i` arrived.
    pub before: u32,
}

impl Receipt {
    /// The receipt after message `seq` arrived (to `receipt`, or the first).
    pub fn note(receipt: Option<Receipt>, seq: u16) -> Receipt {
        let Some(mut r) = receipt else {
            return Receipt {
                newest: seq,
                before: 0,
            };
        };
        let ahead = seq.wrapping_sub(r.newest) as i16;
        if ahead > 0 {
            let shift = u32::from(ahead.unsigned_abs());
            r.before = if shift > 32 {
                0
            } else {
                // The old newest is now `shift` behind.
                r.before.checked_shl(shift).unwrap_or(0) | 1 << (shift - 1)
            };
            r.newest = seq;
        } else if ahead < 0 {
            let back = u32::from(ahead.unsigned_abs());
            if back <= 32 {
                r.before |= 1 << (back - 1);
            }
        }
        r
    }

    /// Whether message `seq` arrived: `None` when it is past the newest or
    /// more than 32 before it (not known here).
    pub fn has(&self, seq: u16) -> Option<bool> {
        let back = self.newest.wrapping_sub(seq);
        match back {
            0 => Some(true),
            1..=32 => Some(self.before & 1 << (back - 1) != 0),
            _ => None,
        }
    }
}

/// Slack in milliseconds clamped to what the wire carries.
pub fn slack_to_wire(ms: f64) -> i16 {
    if !ms.is_finite() {
        return 0;
    }
    clamp(
        ms.round(),
        f64::from(-MAX_SLACK_MS),
        f64::from(MAX_SLACK_MS),
    ) as i16
}

/// Upper bounds of the slack histogram's buckets, in milliseconds (the last
/// bucket takes everything above the last bound). It counts inputs in time
/// only, so never a negative slack: late inputs go to the lateness histogram.
pub const SLACK_BOUNDS_MS: [i32; 10] = [5, 10, 25, 50, 75, 100, 150, 200, 500, 1000];

/// Upper bounds of the lateness histogram's buckets, in milliseconds: how
/// long after its tick a late input arrived.
pub const LATENESS_BOUNDS_MS: [i32; 9] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500];

/// Upper bounds of the rewind-depth histogram's buckets, in milliseconds.
pub const REWIND_BOUNDS_MS: [i32; 8] = [50, 100, 200, 300, 400, 500, 700, 1000];

/// The most buckets a [`MsHistogram`] has (its bounds and one above them).
pub const MAX_BUCKETS: usize = 12;

/// What a histogram of milliseconds counts: its buckets' upper bounds.
pub trait Buckets: Copy + Default + Eq + std::fmt::Debug {
    /// The upper bounds, ascending, at most [`MAX_BUCKETS`] - 1 of them.
    const BOUNDS: &'static [i32];
}

/// Input slack, [`SLACK_BOUNDS_MS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slack;

impl Buckets for Slack {
    const BOUNDS: &'static [i32] = &SLACK_BOUNDS_MS;
}

/// How late late inputs arrived, [`LATENESS_BOUNDS_MS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lateness;

impl Buckets for Lateness {
    const BOUNDS: &'static [i32] = &LATENESS_BOUNDS_MS;
}

/// Lag-compensation rewinds, [`REWIND_BOUNDS_MS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rewind;

impl Buckets for Rewind {
    const BOUNDS: &'static [i32] = &REWIND_BOUNDS_MS;
}

/// A fixed-bucket histogram of milliseconds, for `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsHistogram<B> {
    /// Samples per bucket: `counts[i]` are at or below `B::BOUNDS[i]` (and
    /// above the bound before); `counts[B::BOUNDS.len()]` is above them all.
    pub counts: [u64; MAX_BUCKETS],
    /// Sum of every sample, in milliseconds.
    pub sum_ms: i64,
    buckets: std::marker::PhantomData<B>,
}

/// How early inputs in time arrived.
pub type SlackHistogram = MsHistogram<Slack>;
/// How late late inputs arrived.
pub type LatenessHistogram = MsHistogram<Lateness>;
/// How far back views were judged (lag compensation).
pub type RewindHistogram = MsHistogram<Rewind>;

impl<B: Buckets> MsHistogram<B> {
    /// The buckets' upper bounds.
    pub fn bounds(&self) -> &'static [i32] {
        B::BOUNDS
    }

    /// Counts one sample.
    pub fn record(&mut self, ms: i32) {
        let i = B::BOUNDS.partition_point(|&b| b < ms);
        if let Some(c) = self.counts.get_mut(i) {
            *c += 1;
        }
        self.sum_ms += i64::from(ms);
    }

    /// Samples counted.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// What was counted since `before` (an earlier state of this one).
    #[must_use]
    pub fn since(&self, before: &MsHistogram<B>) -> MsHistogram<B> {
        let mut out = *self;
        for (c, b) in out.counts.iter_mut().zip(before.counts) {
            *c = c.saturating_sub(b);
        }
        out.sum_ms -= before.sum_ms;
        out
    }

    /// Adds `other`'s samples to these.
    pub fn add(&mut self, other: &MsHistogram<B>) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
        self.sum_ms += other.sum_ms;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_is_clamped_to_the_wire() {
        assert_eq!(slack_to_wire(12.4), 12);
        assert_eq!(slack_to_wire(-1e9), i16::MIN + 1);
        assert_eq!(slack_to_wire(f64::NAN), 0);
    }

    /// Bounds on both sides of zero: the histogram itself takes any sign.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    struct Signed;

    impl Buckets for Signed {
        const BOUNDS: &'static [i32] = &[-100, -50, -25, 0, 10, 25, 50, 100, 200, 500];
    }

    #[test]
    fn histogram_buckets_by_upper_bound() {
        let mut h = MsHistogram::<Signed>::default();
        for ms in [-200, -100, 0, 1, 30, 10_000] {
            h.record(ms);
        }
        assert_eq!(h.counts[0], 2, "-200 and -100");
        assert_eq!(h.counts[3], 1, "0");
        assert_eq!(h.counts[4], 1, "1");
        assert_eq!(h.counts[6], 1, "30");
        assert_eq!(h.counts[10], 1, "above 500");
        assert_eq!(h.count(), 6);
        let mut r = RewindHistogram::default();
        r.record(120);
        assert_eq!(r.counts[2], 1);
        let before = h;
        h.record(30);
        let new = h.since(&before);
        assert_eq!((new.count(), new.sum_ms), (1, 30));
        let mut total = before;
        total.add(&new);
        assert_eq!(total, h);
    }

    #[test]
    fn timing_travels_as_json_without_an_absent_tick() {
        let t = InputTiming {
            tick: None,
            slack_ms: -3,
            late: 1,
            repeated: 2,
            received: None,
        };
        let text = serde_json::to_string(&t).unwrap();
        assert_eq!(text, r#"{"slack_ms":-3,"late":1,"repeated":2}"#);
        assert_eq!(serde_json::from_str::<InputTiming>(&text).unwrap(), t);
        let with = InputTiming {
            received: Some(Receipt {
                newest: 9,
                before: 5,
            }),
            ..t
        };
        let text = serde_json::to_string(&with).unwrap();
        assert!(
            text.ends_with(r#""received":{"newest":9,"before":5}}"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<InputTiming>(&text).unwrap(), with);
    }

    #[test]
    fn a_receipt_knows_the_32_messages_before_the_newest_across_the_wrap() {
        let mut r = None;
        for seq in [65_530u16, 65_531, 65_533, 65_535, 0, 2] {
            r = Some(Receipt::note(r, seq));
        }
        let r = r.expect("noted");
        assert_eq!(r.newest, 2);
        let arrived: Vec<u16> = (65_528u16..=65_535)
            .chain(0..=3)
            .filter(|&s| r.has(s) == Some(true))
            .collect();
        assert_eq!(arrived, [65_530, 65_531, 65_533, 65_535, 0, 2]);
        assert_eq!(r.has(1), Some(false));
        assert_eq!(r.has(3), None, "past the newest");
        // A late arrival is filled in; a duplicate changes nothing.
        let late = Receipt::note(Some(r), 1);
        assert_eq!(late.has(1), Some(true));
        assert_eq!(Receipt::note(Some(late), 1), late);
        // A jump of more than 32 forgets what was before it.
        let far = Receipt::note(Some(late), 40);
        assert_eq!((far.newest, far.before), (40, 0));
        assert_eq!(far.has(2), None);
    }
}
