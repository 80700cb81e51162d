//! The loss cover follows the uplink: input messages are numbered, the
//! server's receipts tell which arrived, and the session resends while
//! the way up loses, not while the way down does; under heavy loss it
//! stops (a circuit breaker) rather than add datagrams to a congested path.
//! Seeded stepper runs: 8 bots, 150 ms RTT ±30 ms, 40 s.

use skirmish_core::SessionStats;
use skirmish_tests::matrix::{self, summarize};
use skirmish_tests::stepper::Stepper;

fn stats(s: &Stepper) -> Vec<SessionStats> {
    s.clients.iter().map(|c| c.session.hud().stats).collect()
}

#[test]
fn a_lossy_way_up_is_covered_and_its_inputs_stay_in_time() {
    let s = matrix::one_way_loss(0.1, 0.0);
    let clients: Vec<_> = s.clients.iter().collect();
    let row = summarize(&clients, 0.0, 40.0, 40.0);
    println!("{row:?}");
    for st in stats(&s) {
        println!("{st:?}");
        assert_eq!(st.snapshot_gaps, 0, "the way down is clean");
        // Every message judged, about a tenth lost, and two resends for
        // most steps.
        assert!(st.uplink_judged > 1500, "{st:?}");
        let lost = st.uplink_lost as f64 / st.uplink_judged as f64;
        assert!((0.06..0.14).contains(&lost), "{lost}");
        assert!(st.resends > st.inputs, "{st:?}");
        assert_eq!(st.cover_breaks, 0, "{st:?}");
    }
    assert!(row.late_pct + row.repeated_pct <= 0.5, "{row:?}");
}

#[test]
fn a_lossy_way_down_costs_no_resends_once_the_way_up_is_measured_clean() {
    let s = matrix::one_way_loss(0.0, 0.1);
    for st in stats(&s) {
        println!("{st:?}");
        assert!(st.snapshot_gaps > 40, "the way down loses: {st:?}");
        assert_eq!(st.uplink_lost, 0, "{st:?}");
        // Only while the first 64 messages were being judged (a few
        // seconds at most) did the snapshots' loss turn the cover on.
        assert!(st.resends < st.inputs / 10, "{st:?}");
    }
}

#[test]
fn heavy_loss_on_the_way_up_opens_the_breaker() {
    let s = matrix::one_way_loss(0.4, 0.0);
    for st in stats(&s) {
        println!("{st:?}");
        assert!(st.cover_breaks >= 1, "{st:?}");
        // At most a few seconds' worth of resends before the breaker
        // opened.
        assert!(st.resends < st.inputs / 5, "{st:?}");
    }
    for c in &s.clients {
        assert!(c.session.hud().pacing.cover_broken);
    }
}
