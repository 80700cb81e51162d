//! Congestion control for a game's datagrams: quinn's CUBIC, never below
//! what one session needs.
//!
//! A session's downlink is limited by the application, not the path: at
//! most one snapshot of the byte budget per tick, a pong, now and then a
//! reliable message. CUBIC takes every lost packet as congestion, so on a
//! path that loses a few percent at random (a phone's radio, the main
//! cell's 5 %) it cuts its window (to 0.7 of it) again and again, down to
//! its floor of two packets (2.9 KB). A crowded view's snapshots of 1.2 KB at 20 Hz
//! over a 150 ms round trip need 3.6 KB in flight: past the window they
//! wait in the send buffer, and a snapshot (with its acknowledgements and
//! pong) that waits is late. Measured over the relay with 16 blob bots
//! (`docs/quality/blobs.md`): the window sat at 2.9 KB and the first
//! seconds' input-to-acknowledgement p99 was 0.9 s.
//!
//! [`Floored`] keeps CUBIC's window above [`FLOOR`] bytes in flight,
//! enough for a session's snapshots at any round trip a game plays at.
//! What it gives up, knowingly: on a path congested for real, and after
//! persistent congestion (where RFC 9002 collapses the window), a session
//! may still have 16 KiB in flight per round trip. Snapshots are limited
//! by the game (one budgeted frame a tick), so they send what they would
//! over plain UDP, as game transports do; the reliable stream may use the
//! floor too (its messages are rare and small, and its backlog is bounded
//! by the slow-consumer rule). Above the floor CUBIC rules as it ships.

use std::any::Any;
use std::sync::Arc;
use std::time::Instant;

use quinn_proto::RttEstimator;
use wtransport::quinn::congestion::{
    Controller, ControllerFactory, ControllerMetrics, CubicConfig,
};

/// The smallest congestion window: ten snapshots of the byte budget (a
/// 500 ms round trip at 20 Hz) and room for the pongs and reliable
/// messages beside them.
pub const FLOOR: u64 = 16 * 1024;

/// Builds a [`Floored`] CUBIC for each connection.
#[derive(Debug, Default)]
pub struct FlooredCubic {
    cubic: Arc<CubicConfig>,
}

impl ControllerFactory for FlooredCubic {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(Floored {
            inner: self.cubic.clone().build(now, current_mtu),
        })
    }
}

/// A controller whose window is its inner one's, at least [`FLOOR`].
pub struct Floored {
    inner: Box<dyn Controller>,
}

impl Controller for Floored {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.inner.on_sent(now, bytes, last_packet_number);
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.inner.on_ack(now, sent, bytes, app_limited, rtt);
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        in_flight: u64,
        app_limited: bool,
        largest_packet_num_acked: Option<u64>,
    ) {
        self.inner
            .on_end_acks(now, in_flight, app_limited, largest_packet_num_acked);
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        self.inner
            .on_congestion_event(now, sent, is_persistent_congestion, lost_bytes);
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.inner.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        self.inner.window().max(FLOOR)
    }

    fn metrics(&self) -> ControllerMetrics {
        let mut metrics = self.inner.metrics();
        metrics.congestion_window = self.window();
        metrics
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(Floored {
            inner: self.inner.clone_box(),
        })
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window().max(FLOOR)
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn losses_shrink_the_window_to_the_floor_and_no_further() {
        let start = Instant::now();
        let factory = Arc::new(FlooredCubic::default());
        let mut floored = factory.build(start, 1200);
        let mut cubic = Arc::new(CubicConfig::default()).build(start, 1200);
        assert!(floored.window() >= FLOOR);
        // A loss every round trip for ten seconds: CUBIC cuts its window
        // each time, down to its own floor of two packets.
        for i in 1..=100u32 {
            let now = start + Duration::from_millis(u64::from(i) * 100);
            let sent = start + Duration::from_millis(u64::from(i) * 100 - 50);
            floored.on_congestion_event(now, sent, false, 1200);
            cubic.on_congestion_event(now, sent, false, 1200);
        }
        assert!(cubic.window() < 4 * 1200, "{}", cubic.window());
        assert_eq!(floored.window(), FLOOR);
        assert_eq!(floored.metrics().congestion_window, FLOOR);
        assert_eq!(floored.clone_box().window(), FLOOR);
    }

    #[test]
    fn above_the_floor_the_window_is_cubic_s() {
        let start = Instant::now();
        let mut floored = Arc::new(FlooredCubic::default()).build(start, 1452);
        let cubic = Arc::new(CubicConfig::default()).build(start, 1452);
        // CUBIC's first window (ten packets) is below the floor; a window
        // past it is CUBIC's own (here its two-packet minimum on a jumbo
        // path: quinn's RTT estimator, which acknowledgements need, cannot
        // be made outside quinn, so growth by acknowledgements is not
        // exercised here).
        assert_eq!(floored.initial_window(), cubic.initial_window().max(FLOOR));
        floored.on_mtu_update(9000);
        assert!(floored.window() > FLOOR, "{}", floored.window());
    }
}
