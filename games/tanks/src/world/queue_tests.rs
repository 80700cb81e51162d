//! The world's input timing (the queue of protocol 1), tested with tanks.

use glam::Vec2;

use crate::world::tests::{at, input, open, place};
use crate::{Arena, Pose};
use skirmish_core::*;

/// A world with one player placed at `pose`.
fn world_with(pose: Pose) -> (World<crate::Tanks>, PlayerId) {
    let mut w = World::of(open(), Arena::default(), 7);
    let id = PlayerId(1);
    w.join_with(id, "a", InputMode::Queued).unwrap();
    place(&mut w, id, pose);
    (w, id)
}

#[test]
fn one_input_per_tick_and_ack_follows() {
    let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
    w.receive(id, &[input(1, 1.0), input(2, 1.0)]);
    w.step();
    assert_eq!(w.player(id).unwrap().ack(), Some(Tick(1)));
    assert_eq!(w.player(id).unwrap().state.pose.position.x, 510.0);
    w.step();
    assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
    // Nothing queued: stands still, the ack stays.
    w.step();
    assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
    assert_eq!(w.player(id).unwrap().state.pose.position.x, 520.0);
    assert_eq!(w.state_of(id).unwrap().velocity, Some(Vec2::ZERO));
}

#[test]
fn duplicates_are_ignored_and_full_queue_drops() {
    let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
    let batch: Vec<_> = (1..=16).map(|t| input(t, 1.0)).collect();
    assert_eq!(w.receive(id, &batch).queued, 16);
    assert_eq!(w.receive(id, &batch).duplicates, 16);
    let more: Vec<_> = (17..=40).map(|t| input(t, 1.0)).collect();
    let r = w.receive(id, &more);
    assert_eq!((r.queued, r.dropped), (16, 8));
    assert_eq!(w.stats().dropped_inputs, 8);
    w.step();
    assert_eq!(w.receive(id, &[input(1, 1.0)]).duplicates, 1);
}

#[test]
fn a_missing_tick_is_waited_for_twice_then_skipped() {
    let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
    w.receive(id, &[input(1, 1.0)]);
    w.step();
    w.receive(id, &[input(3, 1.0)]);
    w.step();
    w.step();
    assert_eq!(w.player(id).unwrap().ack(), Some(Tick(1)), "waiting for 2");
    w.step();
    assert_eq!(w.player(id).unwrap().ack(), Some(Tick(3)), "2 skipped");
    assert_eq!(w.stats().skipped_ticks, 1);
}

#[test]
fn a_late_tick_within_the_wait_is_applied_in_order() {
    let (mut w, id) = world_with(at(500.0, 600.0, 0.0));
    w.receive(id, &[input(1, 1.0)]);
    w.step();
    w.receive(id, &[input(3, 1.0)]);
    w.step();
    w.receive(id, &[input(2, 1.0)]);
    w.step();
    assert_eq!(w.player(id).unwrap().ack(), Some(Tick(2)));
    w.step();
    assert_eq!(w.player(id).unwrap().ack(), Some(Tick(3)));
    assert_eq!(w.stats().skipped_ticks, 0);
}

#[test]
fn catch_up_applies_two_per_tick_never_more() {
    let (mut w, id) = world_with(at(300.0, 600.0, 0.0));
    let batch: Vec<_> = (1..=16).map(|t| input(t, 1.0)).collect();
    w.receive(id, &batch);
    let mut applied = Vec::new();
    let mut last = 0;
    for _ in 0..10 {
        w.step();
        let ack = w.player(id).unwrap().ack().unwrap().0;
        applied.push(ack - last);
        last = ack;
    }
    // 16 queued: two per tick while more than 4 + 1 are queued, which
    // takes the queue down to 4; then one per tick.
    assert_eq!(applied, vec![2, 2, 2, 2, 2, 2, 1, 1, 1, 1]);
    assert!(applied.iter().all(|&n| n as usize <= MAX_INPUTS_PER_TICK));
}

#[test]
fn catch_up_never_leaves_fewer_than_catch_up_above() {
    // CATCH_UP_ABOVE + 3 queued: one double step leaves CATCH_UP_ABOVE + 1,
    // which is not more than CATCH_UP_ABOVE + 1, so the rest go one by one.
    let (mut w, id) = world_with(at(300.0, 600.0, 0.0));
    let n = CATCH_UP_ABOVE as u32 + 3;
    let batch: Vec<_> = (1..=n).map(|t| input(t, 1.0)).collect();
    w.receive(id, &batch);
    let mut left = Vec::new();
    for _ in 0..3 {
        w.step();
        left.push(w.player(id).unwrap().queued());
    }
    let c = CATCH_UP_ABOVE;
    assert_eq!(left, vec![c + 1, c, c - 1]);
}
