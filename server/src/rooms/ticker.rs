//! The task that gives a room its time: one step per tick, at a phase of
//! its own, until the room has been empty for `empty_timeout`; and the
//! counters that tell whether ticks are on time (Agones' health pings read
//! them through [`Rooms::slowest_tick`](super::Rooms::slowest_tick)).
//!
//! Missed ticks are skipped, not bunched.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};

use super::handle::RoomHandle;
use super::registry::Rooms;
use super::Hosted;

/// How many tick phases rooms are spread over.
const PHASES: u64 = 16;

/// When a room's ticks finish, in milliseconds since the registry's epoch;
/// read without the room's lock, so a room stuck inside its tick can still
/// be seen to be stuck.
#[derive(Debug)]
pub(super) struct TickHealth {
    /// When the room last finished a tick.
    ticked: AtomicU64,
    /// The room's number, in the order rooms opened.
    number: u64,
    /// The longest time between two finished ticks since the last look: a
    /// tick that held the thread for long is over by the time anything else
    /// runs on a one-thread runtime, so `ticked` alone would never show it.
    worst_gap: AtomicU64,
    /// A pause the room's task takes before its next tick (milliseconds, 0
    /// for none), and whether it blocks the thread: see `Rooms::hold_ticks`.
    #[cfg(feature = "test-hooks")]
    hold: AtomicU64,
    #[cfg(feature = "test-hooks")]
    hold_blocks: std::sync::atomic::AtomicBool,
    /// Makes the next tick panic: see `Rooms::fail_next_tick`.
    #[cfg(feature = "test-hooks")]
    fail: std::sync::atomic::AtomicBool,
    /// Makes the next message handled panic: see `Rooms::fail_next_message`.
    #[cfg(feature = "test-hooks")]
    fail_message: std::sync::atomic::AtomicBool,
}

impl TickHealth {
    /// Counters for room `number` opened at `now` (milliseconds).
    pub(super) fn new(now: u64, number: u64) -> TickHealth {
        TickHealth {
            ticked: AtomicU64::new(now),
            number,
            worst_gap: AtomicU64::new(0),
            #[cfg(feature = "test-hooks")]
            hold: AtomicU64::new(0),
            #[cfg(feature = "test-hooks")]
            hold_blocks: std::sync::atomic::AtomicBool::new(false),
            #[cfg(feature = "test-hooks")]
            fail: std::sync::atomic::AtomicBool::new(false),
            #[cfg(feature = "test-hooks")]
            fail_message: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The room's number, in the order rooms opened.
    pub(super) fn number(&self) -> u64 {
        self.number
    }

    /// A tick finished at `at`.
    fn finished(&self, at: u64) {
        let previous = self.ticked.swap(at, Ordering::Relaxed);
        self.worst_gap
            .fetch_max(at.saturating_sub(previous), Ordering::Relaxed);
    }

    /// How long the room has gone without a tick as of `now`: the longer of
    /// its current wait and its longest gap since the last call, which this
    /// call forgets.
    pub(super) fn late_by(&self, now: u64) -> u64 {
        let waiting = now.saturating_sub(self.ticked.load(Ordering::Relaxed));
        let gap = self.worst_gap.swap(0, Ordering::Relaxed);
        waiting.max(gap)
    }

    /// Makes the next tick wait `pause` first, blocking the thread or not.
    #[cfg(feature = "test-hooks")]
    pub(super) fn hold(&self, pause: Duration, blocks: bool) {
        self.hold_blocks.store(blocks, Ordering::Relaxed);
        self.hold
            .store(pause.as_millis().max(1) as u64, Ordering::Relaxed);
    }

    /// Makes the next tick panic.
    #[cfg(feature = "test-hooks")]
    pub(super) fn fail_next(&self) {
        self.fail.store(true, Ordering::Relaxed);
    }

    /// Whether a test asked this tick to panic (asked once, fails once).
    #[cfg(feature = "test-hooks")]
    pub(super) fn take_failure(&self) -> bool {
        self.fail.swap(false, Ordering::Relaxed)
    }

    /// Makes the next message the room handles panic.
    #[cfg(feature = "test-hooks")]
    pub(super) fn fail_next_message(&self) {
        self.fail_message.store(true, Ordering::Relaxed);
    }

    /// Panics if a test asked this message to (asked once, fails once).
    #[cfg(feature = "test-hooks")]
    pub(super) fn fail_message_if_asked(&self, room: &str) {
        assert!(
            !self.fail_message.swap(false, Ordering::Relaxed),
            "room {room} was asked to fail on a message by a test"
        );
    }

    /// Takes the pause a test asked for, if any.
    #[cfg(feature = "test-hooks")]
    async fn held(&self) {
        let hold = self.hold.swap(0, Ordering::Relaxed);
        if hold > 0 {
            let hold = Duration::from_millis(hold);
            if self.hold_blocks.load(Ordering::Relaxed) {
                std::thread::sleep(hold);
            } else {
                tokio::time::sleep(hold).await;
            }
        }
    }
}

/// Gives a room its time: one step per tick until it closes. A tick that
/// panics fails the room alone: it is caught here and the registry closes
/// the room (see [`Rooms::fail`]); every other room goes on.
pub(super) async fn run<G: Hosted>(rooms: Arc<Rooms<G>>, handle: RoomHandle<G>, number: u64) {
    let cadence = rooms.cadence();
    // Rooms tick at staggered phases (room n at n/16 of the cadence), so
    // that their sends do not all fall at one instant; each room's clients
    // get their frames at the same point of every period.
    let phase = cadence.mul_f64((number % PHASES) as f64 / PHASES as f64);
    let mut interval = tokio::time::interval_at(Instant::now() + phase, cadence);
    interval.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let empty_timeout: Duration = rooms.settings().empty_timeout;
    let mut empty_since = Instant::now();
    loop {
        let due = interval.tick().await;
        if handle.is_closed() {
            return;
        }
        #[cfg(feature = "test-hooks")]
        handle.inner.health.held().await;
        // A call into the room between ticks panicked: the room fails as
        // if its tick had.
        if let Some(why) = handle.take_failure() {
            rooms.fail(&handle, why);
            return;
        }
        let empty = match std::panic::catch_unwind(AssertUnwindSafe(|| handle.step())) {
            Ok(empty) => empty,
            Err(panic) => {
                rooms.fail(&handle, panic_message(&*panic));
                return;
            }
        };
        let finished = Instant::now();
        handle.inner.health.finished(rooms.millis(finished));
        // Half a tick later, the own echoes of datagram clients (a lost
        // snapshot's acknowledgement then waits half a tick, not a whole).
        if handle.has_later() {
            tokio::time::sleep_until(due + cadence / 2).await;
            handle.send_later();
        }
        if !empty {
            empty_since = finished;
        } else if empty_since.elapsed() >= empty_timeout && rooms.close_if_empty(&handle) {
            return;
        }
    }
}

/// What a panic said, when it said it with text.
pub(super) fn panic_message(panic: &(dyn Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}
