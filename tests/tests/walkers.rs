//! The guide's game runs in the deterministic stepper on the main cell's
//! network (150 ms RTT, ±30 ms jitter, 5 % loss each way), with the
//! defaults a session ships with, and meets the tank game's timing
//! targets: the library's netcode, not the tank game, earns them.

use skirmish_tests::matrix::{summarize, totals};
use skirmish_tests::walkers;

#[test]
fn walkers_hold_the_main_cells_timing_budget() {
    let stepper = walkers::main_cell();
    let clients: Vec<_> = stepper.clients.iter().collect();
    let counters = stepper.counters();
    let t = totals(&counters);
    let row = summarize(&clients, 0.0, 60.0, 60.0);
    println!("{t:?}\n{row:?}");
    assert!(
        t.lost_up > 500 && t.lost_down > 500,
        "the loss is real: {t:?}"
    );
    assert!(t.inputs >= 16 * 1180, "everyone walked all the time: {t:?}");
    assert!(row.ack_p50 <= 225.0, "{row:?}");
    assert!(row.ack_p99 <= 300.0, "{row:?}");
    assert!(row.late_pct + row.repeated_pct <= 0.5 + 1e-9, "{row:?}");
    // Walkers never collide: a page mispredicts only where its own input
    // was late or repeated. A walker turns back at once, so a repeated
    // tick across a turn is off by two steps (20 units), which snaps:
    // every snap is such a misprediction.
    for c in &counters {
        assert!(c.mispredictions <= c.late + c.repeated, "{c:?}");
        assert!(c.snaps <= c.mispredictions, "{c:?}");
    }
    assert_eq!(t.resyncs, 0, "{t:?}");
    assert_eq!(row.remote_backwards, 0);
    assert_eq!(row.drawn_snap_backs, 0, "{row:?}");
    assert!(
        row.remote_rate.0 >= 0.9 - 1e-9 && row.remote_rate.1 <= 1.1 + 1e-9,
        "{row:?}"
    );
}
