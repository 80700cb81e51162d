//! What the server sends, for any game: [`ServerMessage`] and its JSON
//! form.
//!
//! The JSON of every message is an object with its `type`; a game's parts
//! sit in it as the game's own serde makes them: `welcome` carries the
//! game's [`Networked::Setup`] fields beside the library's, `snapshot` the
//! game's own states, and the events message takes the game's name for it
//! ([`Networked::EVENTS`]), so a game keeps the JSON it had before the
//! library was generic.

use std::borrow::Cow;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::{from_json, ErrorCode, ProtocolError};
use crate::shared::game::{EventOf, Game, Networked};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;
use crate::shared::timing::InputTiming;

/// One player of a room's roster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RosterEntry {
    /// The player's id.
    pub id: PlayerId,
    /// The player's display name.
    pub name: String,
}

/// Messages the server sends.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerMessage<G: Networked> {
    /// The answer to `hello`: who you are and the rules of the world.
    Welcome {
        /// The joining client's player.
        player_id: PlayerId,
        /// The protocol version spoken.
        protocol: u32,
        /// The server tick at the time of joining.
        server_tick: Tick,
        /// The tick length in milliseconds.
        tick_ms: u32,
        /// The name of the room joined.
        room: String,
        /// The game's part: the configuration the client must use, and
        /// whatever else a joiner must know.
        setup: G::Setup,
    },
    /// Every player of the room at one server tick.
    Snapshot {
        /// The server tick.
        server_tick: Tick,
        /// One state per player, in id order.
        players: Vec<G::Own>,
    },
    /// Who is in the room, sent to everyone with the first tick after
    /// anyone joined or left (once per tick).
    Roster {
        /// Every player of the room, in id order.
        players: Vec<RosterEntry>,
    },
    /// The events of this tick, each sent once.
    Events {
        /// The events.
        events: Vec<EventOf<G>>,
    },
    /// The answer to `ping`.
    Pong {
        /// The ping's id.
        id: u64,
        /// The server tick when the ping was answered.
        server_tick: Tick,
    },
    /// Protocol 2, JSON clients only (compact heads carry it): how early
    /// this client's inputs arrive, sent before each snapshot.
    Timing(InputTiming),
    /// Something the client sent was refused, or the server is closing the
    /// connection.
    Error {
        /// A stable code to act on.
        code: ErrorCode,
        /// A message for humans.
        message: String,
    },
}

/// Every message but the events as JSON has them, borrowed to write and
/// owned to read.
#[derive(Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    bound(
        serialize = "S: Serialize, O: Serialize",
        deserialize = "S: Deserialize<'de>, O: Deserialize<'de>"
    )
)]
enum Json<'a, S: Clone, O: Clone> {
    Welcome {
        player_id: PlayerId,
        protocol: u32,
        server_tick: Tick,
        tick_ms: u32,
        #[serde(default)]
        room: Cow<'a, str>,
        #[serde(flatten)]
        setup: Cow<'a, S>,
    },
    Snapshot {
        server_tick: Tick,
        players: Cow<'a, [O]>,
    },
    Roster {
        players: Cow<'a, [RosterEntry]>,
    },
    Pong {
        id: u64,
        server_tick: Tick,
    },
    Timing(InputTiming),
    Error {
        code: ErrorCode,
        message: Cow<'a, str>,
    },
}

/// The events message as JSON has it.
#[derive(Deserialize)]
struct EventsJson<E> {
    #[serde(rename = "type")]
    kind: String,
    events: Vec<E>,
}

impl<G: Networked> Serialize for ServerMessage<G> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let json: Json<'_, G::Setup, <G as Game>::Own> = match self {
            ServerMessage::Events { events } => {
                let mut map = serializer.serialize_map(Some(2))?;
                map.serialize_entry("type", G::EVENTS)?;
                map.serialize_entry("events", events)?;
                return map.end();
            }
            ServerMessage::Welcome {
                player_id,
                protocol,
                server_tick,
                tick_ms,
                room,
                setup,
            } => Json::Welcome {
                player_id: *player_id,
                protocol: *protocol,
                server_tick: *server_tick,
                tick_ms: *tick_ms,
                room: Cow::Borrowed(room),
                setup: Cow::Borrowed(setup),
            },
            ServerMessage::Snapshot {
                server_tick,
                players,
            } => Json::Snapshot {
                server_tick: *server_tick,
                players: Cow::Borrowed(players),
            },
            ServerMessage::Roster { players } => Json::Roster {
                players: Cow::Borrowed(players),
            },
            ServerMessage::Pong { id, server_tick } => Json::Pong {
                id: *id,
                server_tick: *server_tick,
            },
            ServerMessage::Timing(timing) => Json::Timing(*timing),
            ServerMessage::Error { code, message } => Json::Error {
                code: *code,
                message: Cow::Borrowed(message),
            },
        };
        json.serialize(serializer)
    }
}

/// Parses one text frame from the server.
///
/// # Errors
/// Anything that is not a well-formed message of game `G`.
pub fn decode_server<G: Networked>(text: &str) -> Result<ServerMessage<G>, ProtocolError> {
    let bad = |e| ProtocolError::new(ErrorCode::BadMessage, e);
    let json = match from_json::<Json<'static, G::Setup, <G as Game>::Own>>(text) {
        Ok(json) => json,
        Err(e) => {
            return match from_json::<EventsJson<EventOf<G>>>(text) {
                Ok(events) if events.kind == G::EVENTS => Ok(ServerMessage::Events {
                    events: events.events,
                }),
                _ => Err(bad(e)),
            }
        }
    };
    Ok(match json {
        Json::Welcome {
            player_id,
            protocol,
            server_tick,
            tick_ms,
            room,
            setup,
        } => ServerMessage::Welcome {
            player_id,
            protocol,
            server_tick,
            tick_ms,
            room: room.into_owned(),
            setup: setup.into_owned(),
        },
        Json::Snapshot {
            server_tick,
            players,
        } => ServerMessage::Snapshot {
            server_tick,
            players: players.into_owned(),
        },
        Json::Roster { players } => ServerMessage::Roster {
            players: players.into_owned(),
        },
        Json::Pong { id, server_tick } => ServerMessage::Pong { id, server_tick },
        Json::Timing(timing) => ServerMessage::Timing(timing),
        Json::Error { code, message } => ServerMessage::Error {
            code,
            message: message.into_owned(),
        },
    })
}
