//! The own echo: a compact client on datagrams gets its snapshot's head
//! again, alone, half a tick later, so a lost snapshot holds its
//! acknowledgement back half a tick rather than a whole one. The room
//! decides it (only for seats on datagrams), the codec carries it, and the
//! session takes it once: the own state and the timing report of a tick
//! count once whichever of the two frames brings them.

use std::time::Duration;

use skirmish_core::{compact, delta};
use skirmish_core::{ClientMessage, Encoding, PlayerId, Seating, Tick, PROTOCOL_VERSION};
use skirmish_core::{ClientSession, Incoming, SessionConfig};
use skirmish_core::{Frame, Outbox, Room, RoomConfig};
use skirmish_tanks::compact::{decode_quantised, HEAD_BYTES};
use skirmish_tanks::Tanks;

const ME: PlayerId = PlayerId(1);
const OTHER: PlayerId = PlayerId(2);

fn seating(encoding: Encoding, datagrams: bool) -> Seating {
    Seating {
        encoding,
        protocol: PROTOCOL_VERSION,
        datagrams,
        binary_control: false,
    }
}

fn binary(frame: &Frame) -> &[u8] {
    match frame {
        Frame::Binary(bytes) => bytes,
        Frame::Text(text) => panic!("a text frame where a binary one was due: {text}"),
    }
}

#[test]
fn only_compact_seats_on_datagrams_get_an_echo_and_it_repeats_the_head() {
    let mut room =
        Room::<skirmish_tanks::Tanks>::new(RoomConfig::<skirmish_tanks::Tanks>::default());
    let mut out = Outbox::new();
    room.join(ME, "me", seating(Encoding::Compact, true), &mut out)
        .expect("a seat");
    room.join(OTHER, "ws", seating(Encoding::Compact, false), &mut out)
        .expect("a seat");
    room.join(PlayerId(3), "json", seating(Encoding::Json, true), &mut out)
        .expect("a seat");
    out.clear();
    for _ in 0..5 {
        room.tick(&mut out);
        let later = out.later().to_vec();
        assert_eq!(later.len(), 1, "one echo a tick, for the datagram seat");
        let (to, i) = later[0];
        assert_eq!(to, ME);
        let echo = compact::decode_own::<skirmish_tanks::PlayerState>(binary(&out.frames()[i]))
            .expect("an own echo");
        let snapshot = out
            .to(ME)
            .find_map(|f| match f {
                Frame::Binary(b) if delta::frame_tick(b).is_some() => Some(b.as_slice()),
                _ => None,
            })
            .expect("a snapshot");
        let head = decode_quantised(snapshot).expect("a full compact frame");
        assert_eq!(echo.server_tick, head.server_tick);
        assert_eq!(echo.own, head.own, "the own state, exactly");
        assert_eq!(echo.timing, head.timing);
        assert!(
            binary(&out.frames()[i]).len() <= HEAD_BYTES + compact::TIMING_BYTES,
            "an echo is a head alone"
        );
        out.clear();
    }
}

#[test]
fn an_echo_decodes_only_as_itself() {
    let mut room =
        Room::<skirmish_tanks::Tanks>::new(RoomConfig::<skirmish_tanks::Tanks>::default());
    let mut out = Outbox::new();
    room.join(ME, "me", seating(Encoding::Compact, true), &mut out)
        .expect("a seat");
    room.tick(&mut out);
    let (_, i) = out.later()[0];
    let echo = binary(&out.frames()[i]).to_vec();
    // Not a snapshot, and not with a byte more or less.
    assert!(decode_quantised(&echo).is_err());
    assert_eq!(delta::frame_tick(&echo), None);
    let mut longer = echo.clone();
    longer.push(0);
    assert!(compact::decode_own::<skirmish_tanks::PlayerState>(&longer).is_err());
    for cut in 0..echo.len() {
        assert!(
            compact::decode_own::<skirmish_tanks::PlayerState>(&echo[..cut]).is_err(),
            "cut at {cut}"
        );
    }
}

/// A session of `ME` joined to `room`, with its frames of each tick handed
/// over by the test: `keep` decides which of the tick's snapshot and echo
/// arrive, and in which order.
struct Pair {
    room: Room<Tanks>,
    out: Outbox,
    session: ClientSession<Tanks>,
    now: Duration,
}

impl Pair {
    fn new() -> Pair {
        let mut room = Room::new(RoomConfig::default());
        let mut out = Outbox::new();
        let session = ClientSession::new(SessionConfig {
            encoding: Encoding::Compact,
            ..SessionConfig::default()
        });
        room.join(ME, "me", seating(Encoding::Compact, true), &mut out)
            .expect("a seat");
        let mut pair = Pair {
            room,
            out,
            session,
            now: Duration::ZERO,
        };
        pair.hand_over(|snapshot, echo| vec![snapshot, echo]);
        pair
    }

    /// Steps the room a tick and gives the session what `keep` lets
    /// through of this tick's frames (everything else that was sent goes
    /// first); the session's messages go back to the room.
    fn tick(&mut self, keep: impl Fn(Vec<u8>, Vec<u8>) -> Vec<Vec<u8>>) -> (Vec<u8>, Vec<u8>) {
        self.room.tick(&mut self.out);
        self.hand_over(keep)
    }

    fn hand_over(&mut self, keep: impl Fn(Vec<u8>, Vec<u8>) -> Vec<Vec<u8>>) -> (Vec<u8>, Vec<u8>) {
        let later: Vec<usize> = self.out.later().iter().map(|&(_, i)| i).collect();
        let (frames, deliveries) = self.out.take();
        let mut snapshot = Vec::new();
        for (_, i) in deliveries {
            match &frames[i] {
                Frame::Text(text) => self.session.receive(Incoming::Text(text), self.now),
                Frame::Binary(bytes) => snapshot.clone_from(bytes),
            }
        }
        let echo = later
            .first()
            .map(|&i| binary(&frames[i]).to_vec())
            .unwrap_or_default();
        if !snapshot.is_empty() {
            for frame in keep(snapshot.clone(), echo.clone()) {
                self.session.receive(Incoming::Binary(&frame), self.now);
            }
        }
        self.now += Duration::from_millis(50);
        for message in self.session.advance(self.now) {
            if matches!(message, ClientMessage::Hello { .. }) {
                continue;
            }
            let _ = self.room.receive(ME, &message, &mut self.out);
        }
        (snapshot, echo)
    }

    fn own_tick(&self) -> Option<Tick> {
        self.session.authority().get(ME).map(|s| s.tick)
    }
}

#[test]
fn an_echo_brings_the_own_state_of_a_lost_snapshot_and_counts_once() {
    let mut pair = Pair::new();
    for _ in 0..40 {
        pair.tick(|snapshot, _| vec![snapshot]);
    }
    let stats = pair.session.hud().stats;
    assert_eq!(stats.echoes_used, 0, "{stats:?}");
    let before = pair.own_tick().expect("placed");
    // The snapshot is lost; its echo comes through.
    let (snapshot, _) = pair.tick(|_, echo| vec![echo]);
    let tick = delta::frame_tick(&snapshot).expect("a snapshot");
    assert!(tick > before);
    assert_eq!(
        pair.own_tick(),
        Some(tick),
        "the echo's own state was taken"
    );
    assert_eq!(pair.session.hud().stats.echoes_used, 1);
    // The next tick's echo comes before its snapshot: the snapshot's own
    // state is then not news, and nothing fails to decode.
    let (snapshot, _) = pair.tick(|snapshot, echo| vec![echo, snapshot]);
    let stats = pair.session.hud().stats;
    assert_eq!(pair.own_tick(), delta::frame_tick(&snapshot));
    assert_eq!(stats.echoes_used, 2, "{stats:?}");
    assert_eq!(stats.decode_errors, 0, "{stats:?}");
    // Both in the usual order: the echo is the one that is not news.
    pair.tick(|snapshot, echo| vec![snapshot, echo]);
    assert_eq!(pair.session.hud().stats.echoes_used, 2);
}

#[test]
fn a_timing_report_counts_once_whichever_frame_brings_it() {
    // The same ticks, once with only snapshots and once with every echo
    // after its snapshot and before it: the controller sees the same
    // reports, so the session paces exactly alike.
    let run = |order: fn(Vec<u8>, Vec<u8>) -> Vec<Vec<u8>>| {
        let mut pair = Pair::new();
        for _ in 0..200 {
            pair.tick(order);
        }
        let hud = pair.session.hud();
        (
            hud.pacing.slack_ms,
            hud.pacing.target_slack_ms,
            hud.pacing.dilation_pct,
        )
    };
    let plain = run(|snapshot, _| vec![snapshot]);
    assert!(plain.0.is_some(), "timing reports came: {plain:?}");
    assert_eq!(run(|snapshot, echo| vec![snapshot, echo]), plain);
    assert_eq!(run(|snapshot, echo| vec![echo, snapshot]), plain);
}
