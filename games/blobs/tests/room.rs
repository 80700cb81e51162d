//! What a room of blobs tells whom: with an interest radius, a page gets
//! the happenings of what it sees and of itself, not those of the whole
//! arena (a room of hundreds would otherwise send each page every meal of
//! the world); without one, everyone gets everything.

use skirmish_blobs::{BlobSettings, Blobs, Happening};
use skirmish_core::control::frame_for;
use skirmish_core::{
    Encoding, Frame, InterestConfig, Outbox, PlayerId, Room, RoomConfig, Seating, ServerMessage,
    Tick, Vec2,
};

const BIG: PlayerId = PlayerId(1);
const SMALL: PlayerId = PlayerId(2);
const FAR: PlayerId = PlayerId(3);

/// Three binary pages: a big blob on a small one, a third far away; the
/// tick where the big one eats the small one, and what it sent.
fn a_meal(radius: Option<f32>) -> (Room<Blobs>, Outbox, Tick) {
    let mut room: Room<Blobs> = Room::new(RoomConfig {
        name: "meal".into(),
        capacity: 8,
        seed: 5,
        interest: InterestConfig {
            radius,
            ..InterestConfig::default()
        },
        game: BlobSettings {
            side: 5000.0,
            pellets: 0,
        },
    });
    let mut out = Outbox::new();
    let seat = Seating {
        encoding: Encoding::Compact,
        protocol: 2,
        datagrams: false,
        binary_control: true,
    };
    for id in [BIG, SMALL, FAR] {
        room.join(id, &format!("p{}", id.0), seat, &mut out)
            .expect("joins");
    }
    let place = |room: &mut Room<Blobs>, id, at, mass| {
        let p = room.world_mut().player_mut(id).expect("seated");
        p.state.body.at = at;
        p.state.body.mass = mass;
    };
    // Apart first, so that each page's view is built.
    place(&mut room, BIG, Vec2::new(1000.0, 1000.0), 100.0);
    place(&mut room, SMALL, Vec2::new(1100.0, 1000.0), 10.0);
    place(&mut room, FAR, Vec2::new(4500.0, 4500.0), 10.0);
    room.tick(&mut out);
    out.clear();
    place(&mut room, SMALL, Vec2::new(1000.0, 1000.0), 10.0);
    let tick = room.tick(&mut out);
    (room, out, tick)
}

/// The events frame a binary page would get of `events`.
fn told(events: Vec<Happening>) -> Frame {
    frame_for(true, &ServerMessage::<Blobs>::Events { events })
}

fn meal(tick: Tick) -> Vec<Happening> {
    vec![
        Happening::Eaten {
            tick,
            target: SMALL,
            by: BIG,
        },
        Happening::Grew {
            tick,
            target: BIG,
            ate: SMALL,
            gain: 8.0,
        },
    ]
}

#[test]
fn a_page_hears_of_the_meals_it_sees_and_not_of_the_others() {
    let (room, out, tick) = a_meal(Some(500.0));
    let both = told(meal(tick));
    for id in [BIG, SMALL] {
        assert!(out.to(id).any(|f| *f == both), "{id} sees the meal");
    }
    let Frame::Binary(bytes) = &both else {
        panic!("a binary events frame: {both:?}")
    };
    let heard: Vec<_> = out
        .to(FAR)
        .filter(|f| matches!(f, Frame::Binary(b) if b.first() == bytes.first()))
        .collect();
    assert!(heard.is_empty(), "the far page hears nothing: {heard:?}");
    assert_eq!(room.stats().events, 2);
    assert_eq!(room.stats().events_narrowed, 1, "the far page's");
}

#[test]
fn without_interest_everyone_hears_of_everything() {
    let (room, out, tick) = a_meal(None);
    let both = told(meal(tick));
    for id in [BIG, SMALL, FAR] {
        assert!(out.to(id).any(|f| *f == both), "{id}");
    }
    assert_eq!(room.stats().events_narrowed, 0);
}
