//! The registry without a transport: placement, ids, per-address seats,
//! slow consumers and the room list, over fake outbounds.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};

use skirmish_core::{Encoding, ErrorCode, PlayerId, FIRST_THING, PROTOCOL_VERSION};

use super::{Common, Games, Joiner, Outbound, Rooms, SendError};
use crate::config::ServerConfig;
use crate::limits::AddressBook;
use crate::metrics::Metrics;

/// The game these tests play: the tank game (the shell names none).
type Tested = skirmish_tanks::Tanks;

/// An outbound that counts what it is given, or refuses it as slow.
#[derive(Debug, Default)]
struct Fake {
    frames: Mutex<usize>,
    kicked: Mutex<Option<ErrorCode>>,
    slow: bool,
}

impl Outbound for Fake {
    fn send(&self, _text: bool, _payload: &[u8], _droppable: bool) -> Result<(), SendError> {
        if self.slow {
            return Err(SendError::Slow);
        }
        *self.frames.lock().expect("not poisoned") += 1;
        Ok(())
    }

    fn kick(&self, code: ErrorCode) {
        *self.kicked.lock().expect("not poisoned") = Some(code);
    }
}

fn registry(change: impl FnOnce(&mut ServerConfig)) -> (Arc<Rooms<Tested>>, Arc<Metrics>) {
    let mut config = ServerConfig::default();
    change(&mut config);
    let metrics = Arc::new(Metrics::default());
    let book = AddressBook::new(config.limits.clone());
    let common = Common::new(&config.rooms, metrics.clone(), book);
    let game = skirmish_tanks::TankSettings::default();
    (Rooms::new(config.rooms, game, "", &common), metrics)
}

fn joiner(room: Option<&str>, address: u8) -> Joiner<'_> {
    Joiner {
        name: "ann",
        room,
        encoding: Encoding::Compact,
        protocol: PROTOCOL_VERSION,
        address: IpAddr::V4(Ipv4Addr::new(127, 0, 0, address)),
        binary_control: false,
    }
}

#[tokio::test]
async fn joiners_get_unique_ids_and_a_welcome_in_the_room_they_ask_for() {
    let (rooms, metrics) = registry(|_| {});
    let out = Arc::new(Fake::default());
    let (north, a) = rooms
        .join(&joiner(Some("north"), 1), out.clone())
        .expect("a seat");
    let (south, b) = rooms
        .join(&joiner(Some("south"), 2), out.clone())
        .expect("a seat");
    let (again, c) = rooms
        .join(&joiner(Some("north"), 3), out.clone())
        .expect("a seat");
    assert_eq!(
        (north.name(), south.name(), again.name()),
        ("north", "south", "north")
    );
    assert!(a < b && b < c, "{a} {b} {c}");
    assert!(
        *out.frames.lock().expect("not poisoned") >= 3,
        "each got its welcome"
    );
    let list = rooms.list();
    let players: Vec<_> = list.iter().map(|r| (r.name.as_str(), r.players)).collect();
    assert_eq!(players, [("north", 2), ("south", 1)]);
    assert_eq!(metrics.players(), 3);
    north.leave(a);
    again.leave(c);
    assert_eq!(rooms.list()[0].players, 0);
    assert_eq!(metrics.players(), 1);
}

#[tokio::test]
async fn seats_per_address_are_capped_and_given_back_on_leaving() {
    let (rooms, _) = registry(|c| c.limits.max_seats_per_address = 2);
    let out: Arc<dyn Outbound> = Arc::new(Fake::default());
    let (room, first) = rooms.join(&joiner(None, 9), out.clone()).expect("a seat");
    rooms
        .join(&joiner(None, 9), out.clone())
        .expect("a second seat");
    let refused = rooms
        .join(&joiner(None, 9), out.clone())
        .expect_err("a third");
    assert_eq!(refused.code, ErrorCode::AddressLimit);
    room.leave(first);
    rooms
        .join(&joiner(None, 9), out)
        .expect("the seat came back");
}

#[tokio::test]
async fn a_full_server_refuses_and_a_bad_room_name_is_refused() {
    let (rooms, _) = registry(|c| {
        c.rooms.max_rooms = 1;
        c.rooms.capacity = 1;
    });
    let out: Arc<dyn Outbound> = Arc::new(Fake::default());
    rooms
        .join(&joiner(Some("only"), 1), out.clone())
        .expect("a seat");
    let full = rooms.join(&joiner(None, 2), out).expect_err("no room left");
    assert_eq!(full.code, ErrorCode::ServerFull);
    assert_eq!(
        rooms.open_named("other").map_err(|e| e.code),
        Err(ErrorCode::ServerFull)
    );
    assert_eq!(
        rooms.open_named("").map_err(|e| e.code),
        Err(ErrorCode::BadName)
    );
    assert_eq!(rooms.open_named("only"), Ok(false), "already open");
}

#[tokio::test]
async fn a_client_that_takes_nothing_is_dropped_as_slow_and_told() {
    let (rooms, metrics) = registry(|_| {});
    let slow = Arc::new(Fake {
        slow: true,
        ..Fake::default()
    });
    let (room, _) = rooms
        .join(&joiner(Some("r"), 1), slow.clone())
        .expect("a seat");
    assert_eq!(
        *slow.kicked.lock().expect("not poisoned"),
        Some(ErrorCode::SlowConsumer)
    );
    assert_eq!(room.name(), "r");
    assert_eq!(rooms.list()[0].players, 0, "its seat is free again");
    assert_eq!(metrics.players(), 0);
}

/// Two games' registries share the process's slots: `--max-rooms` counts
/// rooms of any game, player ids and room numbers never repeat across
/// games, and a closed room's slot comes back; together they end every
/// room at once.
#[tokio::test]
async fn every_games_registry_shares_the_room_slots_and_the_player_ids() {
    let mut config = ServerConfig::default();
    config.rooms.max_rooms = 2;
    config.rooms.capacity = 4;
    let metrics = Arc::new(Metrics::default());
    let book = AddressBook::new(config.limits.clone());
    let common = Common::new(&config.rooms, metrics.clone(), book);
    let game = skirmish_tanks::TankSettings::default();
    let first = Rooms::<Tested>::new(config.rooms.clone(), game.clone(), "", &common);
    let second = Rooms::<Tested>::new(config.rooms.clone(), game, "second", &common);
    let out: Arc<dyn Outbound> = Arc::new(Fake::default());
    let (_, a) = first.join(&joiner(None, 1), out.clone()).expect("a seat");
    let (room, b) = second.join(&joiner(None, 2), out.clone()).expect("a seat");
    assert_ne!(a, b, "player ids are the process's");
    assert_eq!(room.name(), "room-2", "room numbers are the process's");
    assert_eq!(
        second.open_named("third").map_err(|e| e.code),
        Err(ErrorCode::ServerFull),
        "two rooms of any game fill the process"
    );
    assert_eq!(
        first.open_named("third").map_err(|e| e.code),
        Err(ErrorCode::ServerFull)
    );
    room.leave(b);
    assert!(second.close_if_empty(&room), "emptied");
    assert_eq!(first.open_named("third"), Ok(true), "its slot came back");
    let games = Games::new(vec![first.clone(), second.clone()]);
    games.close_all(std::time::Duration::from_secs(1)).await;
    assert_eq!(metrics.rooms(), 0);
    assert!(first.list().is_empty() && second.list().is_empty());
}

/// Player ids stay below the things' range and, when they come round
/// again (after 2^31 - 1 joins), skip any still seated in the room.
#[tokio::test]
async fn player_ids_never_enter_the_things_range_nor_repeat_a_seated_one() {
    let (rooms, _) = registry(|_| {});
    let out = Arc::new(Fake::default());
    let (_, first) = rooms
        .join(&joiner(Some("north"), 1), out.clone())
        .expect("a seat");
    assert_eq!(first, PlayerId(1));
    rooms.skip_joins_to(u64::from(FIRST_THING) - 2);
    let (_, last) = rooms
        .join(&joiner(Some("north"), 2), out.clone())
        .expect("a seat");
    assert_eq!(last, PlayerId(FIRST_THING - 1));
    let (_, next) = rooms
        .join(&joiner(Some("north"), 3), out.clone())
        .expect("a seat");
    assert_eq!(next, PlayerId(2), "1 is seated: skipped");
    assert!(![first, last, next].iter().any(|id| id.is_thing()));
}
