//! Things the server owns (not players) travel in the snapshot sets beside
//! the players: a room of dots with a thousand pellets spawned at once
//! sends them to its binary page, which draws them; despawned in bulk,
//! they leave in a delta that spends about a byte each; a JSON page is
//! told of them as the binary page reads them; with an interest
//! radius a page gets only the pellets near it, further the further
//! along its dot is (`ServerGame::view_radius`).

mod dots;

use std::time::Duration;

use skirmish_core::{Frame, ThingId, Things, Vec2, FIRST_THING};

use dots::*;

/// The binary page's frames of the last tick, in bytes.
fn last_binary_frames(pages: &mut Pages) -> Vec<Vec<u8>> {
    pages.out.clear();
    pages.room.tick(&mut pages.out);
    let frames = pages
        .out
        .deliveries()
        .iter()
        .filter(|(to, _)| *to == BINARY)
        .filter_map(|&(_, i)| match &pages.out.frames()[i] {
            Frame::Binary(bytes) => Some(bytes.clone()),
            Frame::Text(_) => None,
        })
        .collect();
    pages.deliver();
    frames
}

/// The largest binary frame of the next `ticks` ticks (the pages running
/// between them).
fn largest_frame(pages: &mut Pages, ticks: usize) -> usize {
    let mut largest = 0;
    for _ in 0..ticks {
        let frames = last_binary_frames(pages);
        largest = frames.iter().map(Vec::len).fold(largest, usize::max);
        for _ in 0..5 {
            pages.frame();
        }
    }
    largest
}

/// A pellet at `x` on the line.
fn pellet(x: u16) -> (Vec2, Pellet) {
    (Vec2::new(f32::from(x), 0.0), Pellet { x, y: 0, size: 1 })
}

fn things(pages: &mut Pages) -> &mut Things<Pellet> {
    pages.room.world_mut().game_mut()
}

/// The things the binary page draws.
fn drawn(pages: &Pages) -> Vec<ThingId> {
    pages.binary.view().things.iter().map(|t| t.id).collect()
}

#[test]
fn a_thousand_pellets_arrive_and_leave_in_bulk() {
    let mut pages = Pages::new(false);
    pages.run(Duration::from_secs(1));
    things(&mut pages).spawn_many((0..1000).map(pellet));
    pages.run(Duration::from_secs(1));
    let seen = drawn(&pages);
    assert_eq!(seen.len(), 1000, "every pellet drawn by the binary page");
    assert!(seen.iter().all(|id| id.wire().0 >= FIRST_THING));
    // The JSON page is told of the nearest of them (JSON has no byte
    // budget: a whole world of things each tick is not sent), as a binary
    // page reads them.
    let things_of = |page: &skirmish_core::ClientSession<Dots>| -> Vec<_> {
        page.view()
            .things
            .iter()
            .map(|t| (t.id, t.visual))
            .collect()
    };
    let (text, binary) = (things_of(&pages.text), things_of(&pages.binary));
    assert_eq!(
        text.len(),
        skirmish_core::MAX_JSON_VIEW - 2,
        "the two dots and the nearest things"
    );
    assert!(
        text.iter().all(|t| binary.contains(t)),
        "as the binary page has them"
    );

    // Still pellets cost nothing once acknowledged.
    let still = last_binary_frames(&mut pages);
    let still_bytes = still.iter().map(Vec::len).sum::<usize>();
    println!("still: {still_bytes} bytes");
    assert!(still_bytes < 80, "{still_bytes} bytes for nothing new");

    // 900 eaten at once: about a byte each.
    let gone = things(&mut pages).despawn_where(|t| t.entity.x >= 100);
    assert_eq!(gone, 900);
    let removal = last_binary_frames(&mut pages);
    let removal_bytes = removal.iter().map(Vec::len).sum::<usize>() - still_bytes;
    println!("900 removals: {removal_bytes} bytes more");
    assert!(
        removal_bytes <= 1000,
        "900 removals in {removal_bytes} bytes"
    );
    pages.run(Duration::from_millis(200));
    assert_eq!(drawn(&pages).len(), 100, "the page drew them gone");
}

/// A thing is the world's, not a player: the page draws it apart from the
/// players, keeps no samples of it (a still pellet costs no buffer), and
/// draws one that jumps where it landed, never slid there.
#[test]
fn a_thing_keeps_no_samples_and_a_jump_is_placed() {
    let mut pages = Pages::new(false);
    pages.run(Duration::from_secs(1));
    let id = things(&mut pages).spawn(pellet(100).0, pellet(100).1);
    pages.run(Duration::from_secs(1));
    let view = pages.binary.view();
    assert_eq!(view.things.len(), 1);
    assert!(view.remotes.iter().all(|r| !r.id.is_thing()), "{view:?}");
    assert_eq!(
        pages.binary.interpolated(),
        view.remotes.len(),
        "samples of the other dot only"
    );
    // Served again across the line: from one snapshot to the next, the
    // page draws it at 100 or at 900, never on the way.
    let thing = things(&mut pages).get_mut(id).expect("spawned");
    (thing.at, thing.entity) = pellet(900);
    let mut seen = Vec::new();
    for _ in 0..50 {
        pages.frame();
        seen.extend(pages.binary.view().things.first().map(|t| t.visual.0));
    }
    assert!(seen.iter().all(|&x| x == 100.0 || x == 900.0), "{seen:?}");
    assert_eq!(seen.last(), Some(&900.0), "{seen:?}");
}

#[test]
fn a_page_sees_the_pellets_within_its_own_radius() {
    // Interest radius 100; a dot at x sees 100 + x / 10 units away. The
    // binary dot stands at 100 (the room places the second dot there).
    let mut pages = Pages::new(true);
    pages.run(Duration::from_secs(1));
    things(&mut pages).spawn_many((0..=100).map(|i| pellet(i * 5)));
    pages.run(Duration::from_secs(1));
    let xs: Vec<u16> = {
        let things = pages.room.world().game();
        drawn(&pages)
            .iter()
            .filter_map(|id| things.get(*id).map(|t| t.entity.x))
            .collect()
    };
    // 100 ± 110: from 0 to 210 (the room's radius alone would stop at
    // 200), and none beyond.
    println!("{xs:?}");
    assert!(xs.contains(&0) && xs.contains(&210), "{xs:?}");
    assert!(xs.iter().all(|&x| x <= 210), "{xs:?}");
}

/// A page joining a crowded view gets what it sees nearest first, within
/// the byte budget, and the rest over the deltas that follow: no frame
/// carries the whole view at once, and within a second it draws it all.
#[test]
fn a_crowded_first_view_fills_in_within_the_byte_budget() {
    let mut pages = Pages::new(true);
    // A thousand pellets around the binary dot (at 100, seeing 110 units)
    // before its first snapshot.
    things(&mut pages).spawn_many((0..1000).map(|i| pellet((i % 201) as u16)));
    let largest = largest_frame(&mut pages, 20);
    let budget = skirmish_core::InterestConfig::default().budget;
    assert!(
        largest <= budget + 80,
        "the largest frame took {largest} bytes"
    );
    assert_eq!(
        drawn(&pages).len(),
        1000,
        "all of its view drawn in a second"
    );
}

/// Things whose ids are far apart (each id gap takes two bytes, where an
/// entry is costed with one) still come within the byte budget: should the
/// gaps take more than costed, the least urgent entry waits for the next
/// frame. A thousand new pellets in view, 200 ids apart, after the page
/// has a baseline to build deltas on.
#[test]
fn sparse_ids_still_fill_in_within_the_byte_budget() {
    let mut pages = Pages::new(true);
    pages.run(Duration::from_secs(1));
    for i in 0..1000u16 {
        // 199 spawned out of view and gone again: only their ids stay used.
        things(&mut pages).spawn_many((0..199).map(|_| pellet(60_000)));
        things(&mut pages).despawn_where(|t| t.entity.x == 60_000);
        things(&mut pages).spawn_many([pellet(i % 201)]);
    }
    let budget = skirmish_core::InterestConfig::default().budget;
    let largest = largest_frame(&mut pages, 40);
    println!("largest {largest}");
    assert!(largest <= budget, "the largest frame took {largest} bytes");
    assert!(
        largest + 120 > budget,
        "frames filled the budget: {largest}"
    );
    assert_eq!(drawn(&pages).len(), 1000, "all of its view drawn");
}

/// An event may target a thing: it reaches the pages that see the thing
/// (with an interest radius, not the others), and each page's game hears
/// of it once.
#[test]
fn a_things_event_reaches_the_pages_that_see_it_once() {
    let mut pages = Pages::new(true);
    pages.run(Duration::from_secs(1));
    let heard = |pages: &Pages| pages.binary.game().pushes_seen;
    let before = heard(&pages);
    // Size 0: knocked at the next tick. The binary dot, at 100, sees 100
    // ± 110; the JSON page has no view and hears of every event.
    let (at, mut pellet) = pellet(150);
    pellet.size = 0;
    let near = things(&mut pages).spawn(at, pellet);
    pages.run(Duration::from_secs(1));
    assert_eq!(heard(&pages), before + 1, "told once, of {near}");
    assert_eq!(pages.text.game().pushes_seen, before + 1);
    let (at, mut pellet) = self::pellet(900);
    pellet.size = 0;
    things(&mut pages).spawn(at, pellet);
    pages.run(Duration::from_secs(1));
    assert_eq!(heard(&pages), before + 1, "a thing it does not see");
    assert_eq!(pages.text.game().pushes_seen, before + 2);
}

/// A thing its game draws predicted (a ball on its course) is carried by
/// its velocity from its newest state to the own player's predicted
/// tick, keeping no samples; a still one is drawn where its state says.
#[test]
fn a_predicted_thing_is_drawn_on_its_course_ahead_of_its_state() {
    let mut pages = Pages::new(false);
    pages.run(Duration::from_secs(1));
    let (at, ball) = pellet(BALLS as u16);
    things(&mut pages).spawn(at, ball);
    let (at, still) = pellet(500);
    things(&mut pages).spawn(at, still);
    pages.run(Duration::from_secs(1));
    // Frame by frame: the page's predicted tick runs up to a tick ahead of
    // the newest state here (no latency), more on a real path.
    let mut aheads = Vec::new();
    for _ in 0..20 {
        pages.frame();
        let view = pages.binary.view();
        assert_eq!(view.things.len(), 2, "{view:?}");
        assert_eq!(
            pages.binary.interpolated(),
            view.remotes.len(),
            "no samples of things"
        );
        let (ball, still) = (view.things[0], view.things[1]);
        assert_eq!(
            still.visual.0, still.state.x,
            "a still thing where its state says"
        );
        aheads.push(ball.visual.0 - ball.state.x);
    }
    println!("the ball drawn ahead of its state by {aheads:?} units");
    let tick = BALL_SPEED * 0.05;
    assert!(aheads
        .iter()
        .all(|a| (a / tick - (a / tick).round()).abs() < 1e-3 && *a >= 0.0));
    assert!(
        aheads.iter().any(|a| *a >= tick),
        "carried on its course: {aheads:?}"
    );
}
