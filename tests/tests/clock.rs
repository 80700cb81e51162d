//! The clock's scenario matrix (protocol 2), deterministically in the
//! stepper: latency steps, clocks that run fast or slow, a frame hitch, an
//! uplink blackout, and a shooter aiming at what it draws. Each asserts
//! timing (late and repeated inputs, input-to-acknowledgement, dilation,
//! remote time), not only mispredictions. `docs/QUALITY.md` reports the
//! same runs.

use skirmish_tests::matrix::{
    self, blackout, bursts, drift, fairness, hitch, rtt_step, summarize, Summary, INCIDENT_AT,
    STEP_DOWN, STEP_UP,
};
use std::time::Duration;

use skirmish_tests::scenario::link;
use skirmish_tests::stepper::{SimClient, Stepper};

fn all(s: &Stepper) -> Vec<&SimClient> {
    s.clients.iter().collect()
}

/// Remote time never ran backwards and played within ±10 % of real time,
/// and no drawn remote snapped back against its motion.
fn assert_remote_time(row: &Summary) {
    assert_eq!(row.remote_backwards, 0, "{row:?}");
    assert_eq!(row.drawn_snap_backs, 0, "{row:?}");
    let (lo, hi) = row.remote_rate;
    assert!(lo >= 0.9 - 1e-9 && hi <= 1.1 + 1e-9, "{row:?}");
}

#[test]
fn an_rtt_step_is_followed_within_two_seconds_without_a_resync() {
    let s = rtt_step();
    let clients = all(&s);
    let whole = summarize(&clients, 0.0, 45.0, 45.0);
    println!("{whole:?}");
    assert_eq!(whole.resyncs, 0, "closed by dilation alone");
    assert!(
        whole.dilation.0 >= -10.0 - 1e-9 && whole.dilation.1 <= 10.0 + 1e-9,
        "{whole:?}"
    );
    assert_remote_time(&whole);
    // From 2 s after the step up, every 1 s window has at most 0.5 % late.
    let mut second = STEP_UP + 2.0;
    while second + 1.0 <= 45.0 {
        let w = summarize(&clients, second, second + 1.0, 45.0);
        assert!(w.late_pct <= 0.5, "{second} s: {w:?}");
        second += 1.0;
    }
    // Within 5 s after the step down, input-to-ack is back within
    // RTT + 75 ms (RTT 50 ms).
    let back = summarize(&clients, STEP_DOWN + 5.0, 45.0, 45.0);
    assert!(back.ack_p50 <= 125.0, "{back:?}");
    // And at 250 ms it held RTT + 75 ms too, once settled.
    let high = summarize(&clients, STEP_UP + 5.0, STEP_DOWN, 45.0);
    assert!(high.ack_p50 <= 325.0, "{high:?}");
}

fn clock_that_runs(rate: f64) {
    let s = drift(rate);
    let clients = all(&s);
    let whole = summarize(&clients, 0.0, 120.0, 120.0);
    let first = summarize(&clients, 5.0, 25.0, 120.0);
    let last = summarize(&clients, 100.0, 120.0, 120.0);
    println!("{whole:?}\n{first:?}\n{last:?}");
    assert!(whole.late_pct <= 0.5, "{whole:?}");
    assert_eq!(whole.resyncs, 0);
    assert!(
        (last.ack_p50 - first.ack_p50).abs() <= 50.0,
        "drifts at most a tick: {first:?} {last:?}"
    );
    // No double steps: the server simulated exactly one input (or repeat)
    // per player per tick.
    let world = s.world();
    let ticks = u64::from(world.tick().get());
    assert!(world.stats().applied_inputs <= ticks * clients.len() as u64);
    assert_remote_time(&whole);
}

#[test]
fn a_clock_half_a_percent_fast_is_held_on_schedule() {
    clock_that_runs(1.005);
}

#[test]
fn a_clock_half_a_percent_slow_is_held_on_schedule() {
    clock_that_runs(0.995);
}

#[test]
fn input_to_ack_recovers_from_a_frame_hitch_within_two_seconds() {
    recovers_from_a_hitch(Duration::from_millis(250));
}

#[test]
fn a_hidden_tab_skips_its_steps_and_keeps_the_schedule() {
    let s = recovers_from_a_hitch(Duration::from_secs(1));
    let skipped = s.clients[0].session.hud().stats.steps_skipped;
    assert!((14..=16).contains(&skipped), "1 s less 250 ms: {skipped}");
}

fn recovers_from_a_hitch(len: Duration) -> Stepper {
    let s = hitch(len);
    let me = &s.clients[..1];
    let me: Vec<&SimClient> = me.iter().collect();
    let before = summarize(&me, INCIDENT_AT - 10.0, INCIDENT_AT, 40.0);
    let after = summarize(&me, INCIDENT_AT + 2.0, 40.0, 40.0);
    println!("{before:?}\n{after:?}");
    assert!(
        (after.ack_p50 - before.ack_p50).abs() <= 25.0,
        "{before:?} {after:?}"
    );
    assert_eq!(after.resyncs, 0);
    assert_remote_time(&summarize(&all(&s), 0.0, 40.0, 40.0));
    s
}

#[test]
fn an_uplink_blackout_is_repeated_and_counted_then_corrected_once() {
    let s = blackout();
    let me = s.clients[0].counters();
    println!("{me:?}");
    // 1 s of ticks had no input: each repeated and counted.
    assert!(me.repeated >= 19, "{me:?}");
    assert!(me.corrections <= 1 && me.snaps == 0, "{me:?}");
    // Mispredictions only where an input was repeated.
    assert!(me.mispredictions <= me.repeated);
    // The others never noticed.
    for other in &s.counters()[1..] {
        assert_eq!((other.late, other.repeated), (0, 0), "{other:?}");
    }
    let at = &s.clients[0].trace.repeated_at;
    let dark = INCIDENT_AT..INCIDENT_AT + 1.5;
    assert!(
        at.iter().filter(|t| dark.contains(*t)).count() >= 19,
        "{at:?}"
    );
    // Elsewhere no more than the 0.5 % budget of 40 s of ticks.
    assert!(
        at.iter().filter(|t| !dark.contains(*t)).count() <= 4,
        "{at:?}"
    );
}

#[test]
fn loss_bursts_and_duplicates_cost_only_counted_repeats() {
    let s = bursts();
    let clients = all(&s);
    let row = summarize(&clients, 0.0, 40.0, 40.0);
    println!("{row:?}");
    for c in s.counters() {
        assert!(c.mispredictions <= c.late + c.repeated, "{c:?}");
    }
    assert_eq!(row.resyncs, 0, "{row:?}");
    // A repeat that differed shows as a counted correction (rarely a snap).
    assert!(row.snaps <= row.corrections, "{row:?}");
    assert_remote_time(&row);
    // Seven bursts of 300 ms at 50 % loss: a few inputs lose all three
    // copies, no more.
    assert!(row.late_pct + row.repeated_pct <= 1.0, "{row:?}");
    assert!(row.ack_p50 <= 225.0, "{row:?}");
}

#[test]
fn shots_are_judged_against_what_the_shooter_saw() {
    let clean = fairness(link(0.0, 0.0, 0.0), 7, 60);
    let main = fairness(matrix::main_link(), 7, 60);
    let far = fairness(link(250.0, 30.0, 0.05), 7, 60);
    println!("{clean:?} {main:?} {far:?}");
    assert!(clean.shots > 200 && clean.ratio() > 0.8, "{clean:?}");
    assert!(
        main.ratio() >= 0.95 * clean.ratio(),
        "{main:?} vs {clean:?}"
    );
    assert!(far.ratio() >= 0.9 * clean.ratio(), "{far:?} vs {clean:?}");
}
