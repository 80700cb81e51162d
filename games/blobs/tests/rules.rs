//! The blob game's rules in its world, without a room: pellets come in
//! bulk up to the room's count, a blob steered over them eats them and
//! grows (and slows), a much larger blob eats a smaller one, which comes
//! back a second later, small, elsewhere; each of those is told once.

use std::time::Duration;

use skirmish_blobs::{
    speed, Arena, BlobSettings, Blobs, Body, Happening, Note, BLOB, DEAD, MOVE, PELLET, START_MASS,
};
use skirmish_core::{Game, InputMode, PlayerId, ServerGame, Tick, Ticked, Vec2, World};

fn world(pellets: u32) -> World<Blobs> {
    let (arena, world) = Blobs::start(&BlobSettings {
        side: 1000.0,
        pellets,
    });
    World::of(arena, world, 7)
}

/// Steering toward +x (angle 0) at `tick`.
fn east(tick: u32) -> Ticked<(u16, u8)> {
    Ticked::new(Tick(tick), (0, MOVE), None)
}

#[test]
fn pellets_come_in_bulk_up_to_the_rooms_count() {
    let mut w = world(1200);
    w.step();
    assert_eq!(w.game().pellets.len(), 500, "at most 500 a tick");
    w.step();
    w.step();
    w.step();
    assert_eq!(w.game().pellets.len(), 1200);
    assert!(w
        .game()
        .pellets
        .as_slice()
        .iter()
        .all(|t| t.entity.kind == PELLET));
}

#[test]
fn a_blob_eats_what_it_covers_grows_and_slows() {
    let mut w = world(0);
    let a = PlayerId(1);
    w.join_with(a, "a", InputMode::Scheduled).expect("joins");
    let start = w.state_of(a).expect("placed").at;
    // A line of pellets right ahead of it.
    w.game_mut().pellets.spawn_many((1..=20).map(|i| {
        let at = start + Vec2::new(5.0 * i as f32, 0.0);
        (at, skirmish_blobs::Bit::of(at, 1.0, PELLET))
    }));
    for t in 1..=20 {
        w.receive(a, &[east(t)]);
        w.step();
    }
    let me = w.state_of(a).expect("still here");
    assert!(me.mass > START_MASS + 10.0, "grew: {}", me.mass);
    assert!(speed(me.mass) < speed(START_MASS), "slower as it grows");
    // Its pace follows a second after the server scheduled it.
    let (now, next, wait) = me.pace;
    assert!(wait > 0 && next < now, "scheduled: {:?}", me.pace);
    for t in 21..=41 {
        w.receive(a, &[east(t)]);
        w.step();
    }
    let later = w.state_of(a).expect("still here");
    assert!(later.pace.0 < now, "slower now: {:?}", later.pace);
}

#[test]
fn a_much_larger_blob_eats_a_smaller_one_which_comes_back() {
    let mut w = world(0);
    let (big, small) = (PlayerId(1), PlayerId(2));
    w.join_with(big, "big", InputMode::Scheduled)
        .expect("joins");
    w.join_with(small, "small", InputMode::Scheduled)
        .expect("joins");
    // Put them on top of each other, one much heavier.
    let here = Vec2::new(500.0, 500.0);
    for (id, mass) in [(big, 100.0), (small, 10.0)] {
        let p = w.player_mut(id).expect("joined");
        p.state.body.at = here;
        p.state.body.mass = mass;
    }
    let events = w.step().to_vec();
    let tick = w.tick();
    assert_eq!(
        events,
        [
            Happening::Eaten {
                tick,
                target: small,
                by: big
            },
            Happening::Grew {
                tick,
                target: big,
                ate: small,
                gain: 8.0
            }
        ],
        "told once, as it happened"
    );
    assert_eq!(w.state_of(small).map(|s| s.kind), Some(DEAD));
    assert!(w
        .state_of(big)
        .is_some_and(|s| s.mass >= 108.0 && s.kind == BLOB));
    let mut told = Vec::new();
    for _ in 0..20 {
        told.extend_from_slice(w.step());
    }
    let back = w.state_of(small).expect("back");
    assert_eq!((back.kind, back.mass), (BLOB, START_MASS));
    assert_ne!(back.at, here, "somewhere else");
    assert_eq!(
        told,
        [Happening::Back {
            tick: w.tick(),
            target: small,
            at: back.at
        }]
    );
    // What the page keeps of each blob, with the happenings applied, is
    // what the next states say.
    assert_eq!(Note::of(&told[0], small), Some(Note::Back));
}

#[test]
fn an_eaten_blob_stays_put_on_both_sides_until_it_comes_back() {
    let mut body = Body::fresh(Vec2::new(100.0, 100.0));
    body.alive = false;
    let arena = Arena { side: 1000.0 };
    let moved = Blobs::predict(body, &(0, MOVE), Duration::from_millis(50), &arena);
    assert_eq!(moved, body);
}

/// A world without pellets and with `blobs` (id, mass, place) joined.
fn blobs_at(blobs: &[(PlayerId, f32, Vec2)]) -> World<Blobs> {
    let mut w = world(0);
    for &(id, mass, at) in blobs {
        w.join_with(id, "p", InputMode::Scheduled).expect("joins");
        let p = w.player_mut(id).expect("joined");
        p.state.body.at = at;
        p.state.body.mass = mass;
    }
    w
}

#[test]
fn a_blob_that_eats_two_in_a_tick_is_told_of_both_and_one_eaten_keeps_nothing() {
    use skirmish_core::Applied;
    let (big, a, b) = (PlayerId(1), PlayerId(2), PlayerId(3));
    let here = Vec2::new(500.0, 500.0);
    let mut w = blobs_at(&[(big, 100.0, here), (a, 10.0, here), (b, 20.0, here)]);
    let events = w.step().to_vec();
    let grew: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, Happening::Grew { .. }))
        .collect();
    assert_eq!(grew.len(), 2, "{events:?}");
    assert_ne!(grew[0].key(), grew[1].key(), "two meals, two keys");
    assert!(w.state_of(big).is_some_and(|s| s.mass >= 124.0));
    // A blob eaten in the tick it ate keeps nothing and is told nothing of
    // growing: 1 (20) eats 2 (10), then 3 (100) eats 1.
    let mut w = blobs_at(&[
        (big, 20.0, here),
        (a, 10.0, here),
        (b, 100.0, here + Vec2::new(30.0, 0.0)),
    ]);
    let events = w.step().to_vec();
    let eaten = |id| {
        events
            .iter()
            .any(|e| matches!(e, Happening::Eaten { target, .. } if *target == id))
    };
    assert!(eaten(a) && eaten(big), "{events:?}");
    let grown: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Happening::Grew { target, .. } => Some(*target),
            _ => None,
        })
        .collect();
    assert_eq!(grown, [b], "{events:?}");
    assert_eq!(
        w.state_of(big).map(|s| (s.kind, s.mass)),
        Some((DEAD, 20.0))
    );
}
