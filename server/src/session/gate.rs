//! What every message from a client passes before it is read, whatever the
//! transport: two token buckets, one counting messages and one counting
//! bytes (a flood costs no parsing), and the budget of refused messages
//! (more than [`ERROR_BUDGET`] within [`ERROR_WINDOW`] end the connection
//! with `too_many_errors`).
//!
//! A bucket holds at most `burst` tokens, starts full and gains `per_sec`
//! tokens a second. A message takes one token from the message bucket and
//! its length from the byte bucket, and is read only if both hold enough;
//! one that is not read takes nothing. So over any span of `t` seconds, at
//! most `burst + per_sec × t` get through, wherever the span starts; fixed
//! one-second windows let twice the limit through in an instant, at the end
//! of one window and the start of the next. A client over either limit is
//! told so (`rate_limited`) at most once every [`TELL_EVERY`]; the rest of
//! what it sends over the limit is dropped, and counted by the caller.

use std::time::Duration;

use skirmish_core::{ErrorCode, ProtocolError};
use tokio::time::Instant;

use crate::config::Limits;

/// Errors tolerated within [`ERROR_WINDOW`] before the connection is closed.
pub const ERROR_BUDGET: u32 = 10;
/// The window of [`ERROR_BUDGET`].
pub const ERROR_WINDOW: Duration = Duration::from_secs(10);
/// How often a client over a limit is told so, at most.
pub const TELL_EVERY: Duration = Duration::from_secs(1);

/// A token bucket's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Tokens gained a second: the steady rate.
    pub per_sec: u64,
    /// Tokens held at most: what may come at once.
    pub burst: u64,
}

/// What to do with one message under the limits.
#[derive(Debug, PartialEq)]
pub enum Admit {
    /// Read it.
    Read,
    /// Over a limit, and not told within [`TELL_EVERY`]: answer with the
    /// error.
    Refuse(ProtocolError),
    /// Over a limit again: drop it (counted by the caller).
    Drop,
}

/// One connection's rate limits and error budget.
#[derive(Debug)]
pub struct Gate {
    messages: Bucket,
    bytes: Bucket,
    /// When the client was last told it is over a limit.
    told: Option<Instant>,
    budget: Window,
}

impl Gate {
    /// A gate letting `messages` messages and `bytes` bytes through.
    pub fn new(messages: Rate, bytes: Rate) -> Gate {
        let now = Instant::now();
        Gate {
            messages: Bucket::new(messages, now),
            bytes: Bucket::new(bytes, now),
            told: None,
            budget: Window::new(ERROR_WINDOW),
        }
    }

    /// The gate the server's limits ask for.
    pub fn for_limits(limits: &Limits) -> Gate {
        let messages = Rate {
            per_sec: limits.max_messages_per_sec.into(),
            burst: limits.message_burst().into(),
        };
        let bytes = Rate {
            per_sec: limits.max_bytes_per_sec,
            burst: limits.byte_burst,
        };
        Gate::new(messages, bytes)
    }

    /// Counts a message of `bytes` bytes (none for a control frame) against
    /// the limits, now.
    pub fn admit(&mut self, bytes: usize) -> Admit {
        self.admit_at(bytes, Instant::now())
    }

    /// [`Gate::admit`] at `now` (never before an earlier call's).
    pub fn admit_at(&mut self, bytes: usize, now: Instant) -> Admit {
        let cost = bytes as u64;
        let messages = self.messages.holds(1, now);
        let fits = self.bytes.holds(cost, now);
        if messages && fits {
            self.messages.take(1);
            self.bytes.take(cost);
            return Admit::Read;
        }
        if self
            .told
            .is_some_and(|told| now.saturating_duration_since(told) < TELL_EVERY)
        {
            return Admit::Drop;
        }
        self.told = Some(now);
        let over = if messages {
            format!("more than {} bytes per second", self.bytes.rate.per_sec)
        } else {
            format!(
                "more than {} messages per second",
                self.messages.rate.per_sec
            )
        };
        Admit::Refuse(ProtocolError::new(
            ErrorCode::RateLimited,
            format!("{over}; dropped"),
        ))
    }

    /// Counts a refused message; `true` once the error budget is spent.
    /// Rate-limited messages are dropped, not held against the budget.
    pub fn spend(&mut self, code: ErrorCode) -> bool {
        code != ErrorCode::RateLimited && self.budget.count() > ERROR_BUDGET
    }
}

/// Tokens are counted in billionths: a nanosecond adds exactly `per_sec`
/// of them, so refilling never rounds.
const PARTS: u128 = 1_000_000_000;

/// A token bucket.
#[derive(Debug)]
struct Bucket {
    rate: Rate,
    /// Billionths of a token held at `at`.
    level: u128,
    at: Instant,
}

impl Bucket {
    /// A full bucket.
    fn new(rate: Rate, now: Instant) -> Bucket {
        Bucket {
            rate,
            level: u128::from(rate.burst) * PARTS,
            at: now,
        }
    }

    /// Refills the bucket up to `now`; whether it holds `cost` tokens.
    fn holds(&mut self, cost: u64, now: Instant) -> bool {
        let gained = now
            .saturating_duration_since(self.at)
            .as_nanos()
            .saturating_mul(self.rate.per_sec.into());
        let full = u128::from(self.rate.burst) * PARTS;
        self.level = self.level.saturating_add(gained).min(full);
        self.at = self.at.max(now);
        self.level >= u128::from(cost) * PARTS
    }

    /// Takes `cost` tokens, which [`Bucket::holds`] said are there.
    fn take(&mut self, cost: u64) {
        self.level -= u128::from(cost) * PARTS;
    }
}

/// Counts events in fixed windows.
#[derive(Debug)]
struct Window {
    length: Duration,
    start: Instant,
    count: u32,
}

impl Window {
    fn new(length: Duration) -> Window {
        Window {
            length,
            start: Instant::now(),
            count: 0,
        }
    }

    /// Counts one event; how many this window holds.
    fn count(&mut self) -> u32 {
        if self.start.elapsed() >= self.length {
            self.start = Instant::now();
            self.count = 0;
        }
        self.count += 1;
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;
    use tokio::time::advance;

    use crate::config::ServerConfig;

    /// The largest input message an honest client sends, in bytes.
    const INPUT_BYTES: usize = 200;

    fn gate(per_sec: u64, burst: u64) -> Gate {
        let bytes = Rate {
            per_sec: 1 << 30,
            burst: 1 << 30,
        };
        Gate::new(Rate { per_sec, burst }, bytes)
    }

    /// How many of `n` messages of `bytes` bytes, sent at once, are read.
    fn read(gate: &mut Gate, n: usize, bytes: usize) -> usize {
        (0..n).filter(|_| gate.admit(bytes) == Admit::Read).count()
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_is_read_then_the_first_message_over_is_refused_the_rest_dropped() {
        let mut gate = gate(10, 3);
        for _ in 0..3 {
            assert_eq!(gate.admit(20), Admit::Read);
        }
        let refused = gate.admit(20);
        let Admit::Refuse(e) = refused else {
            panic!("{refused:?}");
        };
        assert_eq!(e.code, ErrorCode::RateLimited);
        assert_eq!(e.message, "more than 10 messages per second; dropped");
        assert_eq!(gate.admit(20), Admit::Drop);
        assert_eq!(gate.admit(0), Admit::Drop, "a control frame counts too");
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_come_back_at_the_rate_up_to_the_burst() {
        let mut gate = gate(10, 5);
        assert_eq!(read(&mut gate, 5, 1), 5);
        assert_eq!(read(&mut gate, 5, 1), 0);
        advance(Duration::from_millis(99)).await;
        assert_eq!(read(&mut gate, 5, 1), 0, "not a whole token yet");
        advance(Duration::from_millis(1)).await;
        assert_eq!(read(&mut gate, 5, 1), 1, "one token in 100 ms");
        advance(Duration::from_millis(250)).await;
        assert_eq!(read(&mut gate, 5, 1), 2, "2.5 tokens: the half stays");
        advance(Duration::from_millis(50)).await;
        assert_eq!(read(&mut gate, 5, 1), 1);
        advance(Duration::from_secs(60)).await;
        assert_eq!(
            read(&mut gate, 50, 1),
            5,
            "a quiet minute fills the burst only"
        );
    }

    /// Counted in fixed one-second windows, 10 at the end of one and 10 at
    /// the start of the next all got through.
    #[tokio::test(start_paused = true)]
    async fn no_second_burst_at_a_window_boundary() {
        let mut gate = gate(10, 10);
        advance(Duration::from_millis(999)).await;
        assert_eq!(read(&mut gate, 10, 1), 10);
        advance(Duration::from_millis(1)).await;
        assert_eq!(read(&mut gate, 10, 1), 0);
        advance(Duration::from_millis(100)).await;
        assert_eq!(read(&mut gate, 10, 1), 1);
    }

    /// A flood is told once a second, however long it lasts.
    #[tokio::test(start_paused = true)]
    async fn a_flood_is_told_once_a_second() {
        let mut gate = gate(10, 10);
        let mut told = 0;
        for _ in 0..3000 {
            if matches!(gate.admit(1), Admit::Refuse(_)) {
                told += 1;
            }
            advance(Duration::from_millis(1)).await;
        }
        assert_eq!(told, 3);
    }

    #[tokio::test(start_paused = true)]
    async fn the_byte_budget_limits_bulk_and_is_told_as_bytes() {
        let messages = Rate {
            per_sec: 100,
            burst: 100,
        };
        let bytes = Rate {
            per_sec: 1000,
            burst: 2000,
        };
        let mut gate = Gate::new(messages, bytes);
        assert_eq!(gate.admit(1500), Admit::Read);
        assert_eq!(gate.admit(400), Admit::Read);
        let refused = gate.admit(200);
        let Admit::Refuse(e) = refused else {
            panic!("{refused:?}");
        };
        assert_eq!(e.code, ErrorCode::RateLimited);
        assert_eq!(e.message, "more than 1000 bytes per second; dropped");
        assert_eq!(gate.admit(101), Admit::Drop, "100 bytes left");
        assert_eq!(gate.admit(100), Admit::Read, "what fits still goes");
        assert_eq!(gate.admit(0), Admit::Read, "a control frame costs no bytes");
        advance(Duration::from_millis(500)).await;
        assert_eq!(gate.admit(501), Admit::Drop);
        assert_eq!(gate.admit(500), Admit::Read, "refilled at 1000 a second");
        assert_eq!(read(&mut gate, 3, 0), 3, "messages had tokens all along");
    }

    /// With the default limits, a client sending 60 inputs of 200 bytes and
    /// a ping every second, for a minute, never meets either limit; one
    /// sending 8 KiB messages 20 times a second (within the message rate)
    /// soon meets the byte limit.
    #[tokio::test(start_paused = true)]
    async fn honest_clients_never_meet_the_default_limits_and_bulk_does() {
        let limits = ServerConfig::default().limits;
        let mut honest = Gate::for_limits(&limits);
        let mut bulk = Gate::for_limits(&limits);
        let mut bulk_read = 0;
        for tick in 0..60 * 60 {
            assert_eq!(honest.admit(INPUT_BYTES), Admit::Read, "input {tick}");
            if tick % 60 == 0 {
                assert_eq!(honest.admit(40), Admit::Read, "ping {tick}");
            }
            if tick % 3 == 0 && bulk.admit(8 * 1024) == Admit::Read {
                bulk_read += 1;
            }
            advance(Duration::from_micros(16_667)).await;
        }
        // 64 KiB at once, then 64 KiB a second: 8 + 60 × 8 messages.
        assert!((480..=490).contains(&bulk_read), "{bulk_read}");
    }

    #[tokio::test(start_paused = true)]
    async fn the_error_budget_ignores_rate_limiting() {
        let mut gate = gate(3, 3);
        for _ in 0..100 {
            assert!(!gate.spend(ErrorCode::RateLimited));
        }
        for _ in 0..ERROR_BUDGET {
            assert!(!gate.spend(ErrorCode::BadMessage));
        }
        assert!(gate.spend(ErrorCode::BadMessage));
    }

    /// Arrivals: the time since the previous one, and a size.
    fn arrivals() -> impl Strategy<Value = Vec<(Duration, usize)>> {
        let gap = prop_oneof![
            Just(Duration::ZERO),
            (0u64..2_000).prop_map(Duration::from_micros),
            (0u64..400).prop_map(Duration::from_millis),
            (0u64..3_000).prop_map(Duration::from_millis),
        ];
        vec((gap, 0usize..600), 0..400)
    }

    /// The most read within any closed span of `span` (one starting at an
    /// arrival holds the most), in messages and in bytes.
    fn most_within(read: &[(Instant, usize)], span: Duration) -> (u64, u64) {
        let mut most = (0, 0);
        for (i, &(start, _)) in read.iter().enumerate() {
            let within = read[i..].iter().take_while(|(t, _)| *t - start <= span);
            let (n, bytes) = within.fold((0, 0), |(n, b), (_, size)| (n + 1, b + *size as u64));
            most = (most.0.max(n), most.1.max(bytes));
        }
        most
    }

    proptest! {
        /// For any arrivals, no second (any second, not just one starting
        /// on a boundary) lets more than `per_sec + burst` messages, or
        /// bytes, through.
        #[test]
        fn no_second_lets_more_than_the_rate_and_the_burst_through(
            arrivals in arrivals(),
            (per_sec, burst) in (1u64..50, 1u64..50),
            (byte_rate, byte_burst) in (1u64..20_000, 600u64..20_000),
        ) {
            let messages = Rate { per_sec, burst };
            let bytes = Rate { per_sec: byte_rate, burst: byte_burst };
            let mut gate = Gate::new(messages, bytes);
            let mut now = Instant::now();
            let mut read = Vec::new();
            for (gap, size) in arrivals {
                now += gap;
                if gate.admit_at(size, now) == Admit::Read {
                    read.push((now, size));
                }
            }
            let (most, most_bytes) = most_within(&read, Duration::from_secs(1));
            prop_assert!(most <= per_sec + burst, "{most} messages in a second");
            prop_assert!(most_bytes <= byte_rate + byte_burst, "{most_bytes} bytes in a second");
        }
    }
}
