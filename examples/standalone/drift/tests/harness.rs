//! Drift in the harness (`skirmish-harness`): its main cell in the
//! deterministic stepper holds the library's timing budget with the
//! shipped defaults, and its determinism trace is the same twice.

use skirmish_core::{first_divergence, trace};
use skirmish_harness::matrix::{assert_main_cell_budget, main_cell, summarize};
use skirmish_harness::Harness;

use skirmish_drift::Drift;

#[test]
fn the_main_cell_holds_the_timing_budget() {
    let stepper = main_cell::<Drift>();
    let clients: Vec<_> = stepper.clients.iter().collect();
    let counters = stepper.counters();
    let row = summarize(&clients, 0.0, 60.0, 60.0);
    println!("{row:?}");
    assert_main_cell_budget(Drift::PLAYERS, &counters, &row);
}

#[test]
fn the_seeded_trace_is_deterministic() {
    let first = trace::<Drift>(7, 2_000);
    assert_eq!(first_divergence(&first, &trace::<Drift>(7, 2_000)), None);
}
