//! What a crowded arena sends each page: a JSON page gets the part of the
//! world a binary page would see, never the whole arena, and however heavy
//! a blob grows, its binary view stays within the byte budget.

use skirmish_blobs::{BlobSettings, Blobs};
use skirmish_core::{ClientMessage, ServerMessage};
use skirmish_core::{
    Encoding, Frame, InterestConfig, Outbox, PlayerId, Room, RoomConfig, Seating, ServerGame, Tick,
    Ticked, Vec2, MAX_JSON_VIEW,
};

const BINARY: PlayerId = PlayerId(1);
const JSON: PlayerId = PlayerId(2);

/// A room of blobs as the server ships it (its interest radius, 5,000
/// pellets on the default arena, unless `pellets` and `side` say).
fn arena(pellets: u32, side: Option<f32>) -> Room<Blobs> {
    let mut game = BlobSettings {
        pellets,
        ..BlobSettings::default()
    };
    if let Some(side) = side {
        game.side = side;
    }
    Room::new(RoomConfig {
        name: "arena".into(),
        capacity: 8,
        seed: 3,
        interest: InterestConfig {
            radius: Blobs::interest_radius(&game),
            ..InterestConfig::default()
        },
        game,
    })
}

fn seating(encoding: Encoding) -> Seating {
    Seating {
        encoding,
        protocol: 2,
        datagrams: false,
        binary_control: encoding == Encoding::Compact,
    }
}

#[test]
fn a_json_page_gets_what_a_binary_page_would_see_not_the_arena() {
    let mut room = arena(5000, None);
    let mut out = Outbox::new();
    room.join(BINARY, "bin", seating(Encoding::Compact), &mut out)
        .expect("joins");
    room.join(JSON, "json", seating(Encoding::Json), &mut out)
        .expect("joins");
    // Pellets come 500 a tick: the arena is full after ten.
    for _ in 0..12 {
        out.clear();
        room.tick(&mut out);
    }
    let things = Blobs::things(room.world().game()).len();
    assert_eq!(things, 5000);
    let own = room.world().state_of(JSON).expect("seated");
    let me = own.at;
    let radius = Blobs::interest_radius(&BlobSettings::default()).expect("a radius");
    let reach = Blobs::view_radius(&own, radius);
    let texts: Vec<&str> = out
        .to(JSON)
        .filter_map(|f| match f {
            Frame::Text(t) if t.contains("\"snapshot\"") => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let kinds: Vec<String> = out
        .to(JSON)
        .map(|f| match f {
            Frame::Text(t) => t.chars().take(40).collect(),
            Frame::Binary(b) => format!("{} bytes", b.len()),
        })
        .collect();
    assert_eq!(texts.len(), 1, "one snapshot a tick: {kinds:?}");
    let message = skirmish_core::protocol::decode_server::<Blobs>(texts[0]).expect("JSON");
    let ServerMessage::Snapshot { players, .. } = message else {
        panic!("a snapshot");
    };
    assert!(players.iter().any(|p| p.id == JSON), "it sees itself");
    assert!(
        players.len() <= MAX_JSON_VIEW,
        "{} entities of {} (at most {MAX_JSON_VIEW})",
        players.len(),
        things + 2
    );
    for p in &players {
        assert!(
            p.at.distance(me) <= reach + 1.0,
            "{:?} at {} is {} from the page, beyond its view of {reach}",
            p.id,
            p.at,
            p.at.distance(me)
        );
    }
    // 5,000 pellets were about 500 KB a snapshot; a view is a few dozen.
    assert!(texts[0].len() < 40_000, "{} bytes", texts[0].len());
}

#[test]
fn a_heavy_blobs_view_fills_in_within_the_byte_budget() {
    // 20,000 pellets on a small arena: a heavy blob in its middle sees
    // past its corners (1,200 + 40·√600 = 2,180 units). A view of them all
    // would need a stale mask of 2,500 bytes, twice the budget: no new
    // entry would ever fit, and the page would hold only what its first
    // frame brought (17 KB in 60 frames, all heads and masks). Cut to the
    // nearest the budget's mask allows, the view fills in (36 KB).
    let mut room = arena(20_000, Some(3000.0));
    let mut out = Outbox::new();
    room.join(BINARY, "bin", seating(Encoding::Compact), &mut out)
        .expect("joins");
    {
        let p = room.world_mut().player_mut(BINARY).expect("seated");
        p.state.body.at = Vec2::splat(1500.0);
        p.state.body.mass = 600.0;
    }
    // It acknowledges every snapshot: it gets deltas on what it holds,
    // which fill in within the budget a few hundred entries a tick.
    for _ in 0..60 {
        out.clear();
        let tick = room.tick(&mut out);
        let ack = ClientMessage::Input {
            inputs: vec![Ticked::new(Tick(tick.0 + 1), (0, 0), None)],
            snapshot_ack: Some(tick),
            seq: Some(tick.0 as u16),
        };
        room.receive(BINARY, &ack, &mut out).expect("an input");
    }
    let budget = InterestConfig::default().budget;
    let largest = out
        .frames()
        .iter()
        .filter_map(|f| match f {
            Frame::Binary(b) => Some(b.len()),
            Frame::Text(_) => None,
        })
        .max()
        .unwrap_or(0);
    assert!(largest <= budget, "a frame of {largest} bytes");
    assert_eq!(room.stats().over_budget, 0, "{:?}", room.stats());
    let sent = room.stats().binary_bytes;
    assert!(sent > 25_000, "{sent} bytes in 60 frames: the view starved");
}

/// A room of `players` binary pages that acknowledge every snapshot, its
/// frames built on `workers` threads: every frame of `ticks` ticks, in
/// order, and the room's counters.
fn frames_built_by(workers: usize, players: u32, ticks: u32) -> (Vec<(PlayerId, Vec<u8>)>, String) {
    use skirmish_core::{decode_inputs, encode_inputs};
    let game = BlobSettings {
        pellets: 3000,
        side: 3000.0,
    };
    let mut room: Room<Blobs> = Room::new(RoomConfig {
        name: "spread".into(),
        capacity: players as usize,
        seed: 9,
        interest: InterestConfig {
            radius: Blobs::interest_radius(&game),
            ..InterestConfig::default()
        },
        game,
    });
    room.spread_snapshots(workers);
    let mut out = Outbox::new();
    for i in 1..=players {
        room.join(PlayerId(i), "b", seating(Encoding::Compact), &mut out)
            .expect("joins");
    }
    let (mut frames, mut last, mut message) = (Vec::new(), Tick::ZERO, Vec::new());
    for t in 0..ticks {
        out.clear();
        for i in 1..=players {
            // Each steers its own way, turning a little every tick.
            let angle = (i * 7919 + t * 300) as u16;
            let steer = Ticked::new(Tick(last.0 + 1), (angle, skirmish_blobs::MOVE), None);
            message.clear();
            encode_inputs(&[steer], Some(last), None, &mut message);
            let decoded: ClientMessage<_> = decode_inputs(&message).expect("decodes");
            let _ = room.receive_frame_at(
                PlayerId(i),
                &decoded,
                (false, &message),
                std::time::Duration::ZERO,
                &mut out,
            );
        }
        out.clear();
        last = room.tick(&mut out);
        for &(to, i) in out.deliveries() {
            if let Frame::Binary(bytes) = &out.frames()[i] {
                frames.push((to, bytes.clone()));
            }
        }
    }
    (frames, format!("{:?}", room.stats()))
}

/// Frames built on several threads are the frames built on one: the same
/// bytes, to the same pages, in the same order, and the same counters.
#[test]
fn frames_spread_over_threads_are_the_same_bytes() {
    let one = frames_built_by(1, 300, 30);
    let three = frames_built_by(3, 300, 30);
    assert!(one.0.len() >= 300 * 30, "{} frames", one.0.len());
    assert!(one.0 == three.0, "the same frames");
    assert_eq!(one.1, three.1);
}
