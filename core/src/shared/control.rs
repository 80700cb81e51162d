//! Binary control messages: `hello` and `ping` up, `welcome`, `roster`,
//! events, `pong` and `error` down, for clients that speak binary all
//! the way (a compact client whose `hello` is binary). With them the
//! browser client needs no JSON at all; the server keeps JSON for every
//! client whose `hello` was text, byte for byte as before.
//!
//! Each message is a kind byte (an ASCII letter, never `{`, so a binary
//! message is never mistaken for JSON) and its fields ([`Writer`](crate::Writer), [`Reader`](crate::Reader):
//! varints for integers, floats as their bits, strings with a length):
//!
//! ```text
//! 'H' hello    varint protocol, string name, u8 flags (1: room, 2: game),
//!              [string room], [string game, varint game version]
//! 'P' ping     varint id
//! 'W' welcome  varint player, varint protocol, varint server tick,
//!              varint tick_ms, string room, the game's setup
//! 'R' roster   varint count, then per player: varint id, string name
//! 'C' events   varint count, then the game's events
//! 'O' pong     varint id, varint server tick
//! 'E' error    string code (its wire name), string message
//! ```
//!
//! The game's setup and events are written by their [`Codec`]
//! (`docs/PROTOCOL.md` has each game's).
//!
//! A binary `hello` asks for compact snapshots; the checks of a text
//! `hello` (protocol, game, names) apply to it alike.

use crate::shared::bytes::{Codec, ReadError, Reader, Writer};
use crate::shared::game::{EventOf, Networked};
use crate::shared::protocol::{
    check_hello, encode, ClientMessage, Encoding, ErrorCode, Frame, GameId, ProtocolError,
    RosterEntry, ServerMessage,
};
use crate::shared::state::PlayerId;
use crate::shared::tick::Tick;

/// The kind of a binary `hello`.
pub const HELLO: u8 = b'H';
/// The kind of a binary `ping`.
pub const PING: u8 = b'P';
/// The kind of a binary `welcome`.
pub const WELCOME: u8 = b'W';
/// The kind of a binary `roster`.
pub const ROSTER: u8 = b'R';
/// The kind of a binary events message.
pub const EVENTS: u8 = b'C';
/// The kind of a binary `pong`.
pub const PONG: u8 = b'O';
/// The kind of a binary `error`.
pub const ERROR: u8 = b'E';

const HAS_ROOM: u8 = 1;
const HAS_GAME: u8 = 2;
/// The game named has its wire shape after its version (a `u32`).
const HAS_SHAPE: u8 = 4;

/// Whether a binary frame from a client is a control message.
pub fn is_client_control(bytes: &[u8]) -> bool {
    matches!(bytes.first(), Some(&(HELLO | PING)))
}

/// Whether a binary frame from the server is a control message.
pub fn is_server_control(bytes: &[u8]) -> bool {
    matches!(
        bytes.first(),
        Some(&(WELCOME | ROSTER | EVENTS | PONG | ERROR))
    )
}

/// `hello` or `ping` in binary; `None` for any other message (inputs
/// have their own binary form, [`encode_inputs`](crate::encode_inputs)). A binary
/// `hello` always asks for compact snapshots.
pub fn encode_client<W>(message: &ClientMessage<W>) -> Option<Vec<u8>> {
    let mut w = Writer::default();
    match message {
        ClientMessage::Hello {
            name,
            protocol,
            room,
            game,
            ..
        } => {
            w.u8(HELLO);
            w.varint(u64::from(*protocol));
            w.text(name);
            let shape = game.as_ref().and_then(|g| g.shape);
            w.u8(if room.is_some() { HAS_ROOM } else { 0 }
                | if game.is_some() { HAS_GAME } else { 0 }
                | if shape.is_some() { HAS_SHAPE } else { 0 });
            if let Some(room) = room {
                w.text(room);
            }
            if let Some(game) = game {
                w.text(&game.name);
                w.varint(u64::from(game.version));
            }
            if let Some(shape) = shape {
                w.u32(shape);
            }
        }
        ClientMessage::Ping { id } => {
            w.u8(PING);
            w.varint(*id);
        }
        ClientMessage::Input { .. } => return None,
    }
    Some(w.bytes)
}

/// Reads a binary `hello` or `ping`, checked as its text form is.
///
/// # Errors
/// `bad_message` for malformed bytes or trailing ones; a `hello` that
/// breaks a rule gets that rule's code.
pub fn decode_client<W>(bytes: &[u8]) -> Result<ClientMessage<W>, ProtocolError> {
    decode_client_with(bytes, check_hello)
}

/// [`decode_client`], with a `hello` checked by `hello`.
pub(crate) fn decode_client_with<W>(
    bytes: &[u8],
    hello: impl Fn(&ClientMessage<W>) -> Result<(), ProtocolError>,
) -> Result<ClientMessage<W>, ProtocolError> {
    let mut r = Reader::new(bytes);
    let message = match r.u8()? {
        HELLO => {
            let protocol = r.varint32()?;
            let name = r.text()?.to_string();
            let flags = r.u8()?;
            if flags & !(HAS_ROOM | HAS_GAME | HAS_SHAPE) != 0
                || flags & (HAS_GAME | HAS_SHAPE) == HAS_SHAPE
            {
                return Err(ReadError::Invalid {
                    at: r.offset() - 1,
                    what: "unknown hello flags",
                }
                .into());
            }
            let room = if flags & HAS_ROOM != 0 {
                Some(r.text()?.to_string())
            } else {
                None
            };
            let game = if flags & HAS_GAME != 0 {
                Some(GameId {
                    name: r.text()?.to_string(),
                    version: r.varint32()?,
                    shape: if flags & HAS_SHAPE != 0 {
                        Some(r.u32()?)
                    } else {
                        None
                    },
                })
            } else {
                None
            };
            ClientMessage::Hello {
                name,
                protocol,
                room,
                encoding: Encoding::Compact,
                game,
            }
        }
        PING => ClientMessage::Ping { id: r.varint()? },
        _ => {
            return Err(ProtocolError::new(
                ErrorCode::BinaryFrame,
                "binary frames carry inputs, hello and ping only",
            ))
        }
    };
    end(&r)?;
    hello(&message)?;
    Ok(message)
}

/// `welcome`, `roster`, events, `pong` or `error` in binary; `None` for
/// the messages that only JSON clients get (JSON snapshots and timing:
/// compact frames carry both).
pub fn encode_server<G: Networked>(message: &ServerMessage<G>) -> Option<Vec<u8>> {
    let mut w = Writer::default();
    match message {
        ServerMessage::Welcome {
            player_id,
            protocol,
            server_tick,
            tick_ms,
            room,
            setup,
        } => {
            w.u8(WELCOME);
            w.varint(u64::from(player_id.0));
            w.varint(u64::from(*protocol));
            w.varint(u64::from(server_tick.0));
            w.varint(u64::from(*tick_ms));
            w.text(room);
            setup.write(&mut w);
        }
        ServerMessage::Roster { players } => {
            w.u8(ROSTER);
            w.varint(players.len() as u64);
            for p in players {
                w.varint(u64::from(p.id.0));
                w.text(&p.name);
            }
        }
        ServerMessage::Events { events } => {
            w.u8(EVENTS);
            w.varint(events.len() as u64);
            for e in events {
                e.write(&mut w);
            }
        }
        ServerMessage::Pong { id, server_tick } => {
            w.u8(PONG);
            w.varint(*id);
            w.varint(u64::from(server_tick.0));
        }
        ServerMessage::Error { code, message } => {
            w.u8(ERROR);
            w.text(code.as_str());
            w.text(message);
        }
        ServerMessage::Snapshot { .. } | ServerMessage::Timing(_) => return None,
    }
    Some(w.bytes)
}

/// `message` as a client takes it: binary when its `hello` was binary and
/// the message has a binary form, JSON text otherwise. The room and the
/// server's sessions (for their errors) both send through this.
pub fn frame_for<G: Networked>(binary: bool, message: &ServerMessage<G>) -> Frame {
    binary
        .then(|| encode_server(message))
        .flatten()
        .map_or_else(|| Frame::Text(encode(message)), Frame::Binary)
}

/// Reads a binary control message from the server.
///
/// # Errors
/// `bad_message` for malformed bytes, trailing ones or another kind.
pub fn decode_server<G: Networked>(bytes: &[u8]) -> Result<ServerMessage<G>, ProtocolError> {
    let mut r = Reader::new(bytes);
    let message = match r.u8()? {
        WELCOME => {
            let player_id = PlayerId(r.varint32()?);
            let protocol = r.varint32()?;
            let server_tick = Tick(r.varint32()?);
            let tick_ms = r.varint32()?;
            let room = r.text()?.to_string();
            let setup = G::Setup::read(&mut r)?;
            ServerMessage::Welcome {
                player_id,
                protocol,
                server_tick,
                tick_ms,
                room,
                setup,
            }
        }
        ROSTER => {
            let n = r.count()?;
            let mut players = Vec::with_capacity(n);
            for _ in 0..n {
                players.push(RosterEntry {
                    id: PlayerId(r.varint32()?),
                    name: r.text()?.to_string(),
                });
            }
            ServerMessage::Roster { players }
        }
        EVENTS => {
            let n = r.count()?;
            let mut events = Vec::with_capacity(n);
            for _ in 0..n {
                events.push(EventOf::<G>::read(&mut r)?);
            }
            ServerMessage::Events { events }
        }
        PONG => ServerMessage::Pong {
            id: r.varint()?,
            server_tick: Tick(r.varint32()?),
        },
        ERROR => {
            let at = r.offset();
            let code = r.text()?;
            let code = ErrorCode::ALL
                .iter()
                .copied()
                .find(|c| c.as_str() == code)
                .ok_or(ReadError::Invalid {
                    at,
                    what: "an unknown error code",
                })?;
            ServerMessage::Error {
                code,
                message: r.text()?.to_string(),
            }
        }
        _ => {
            return Err(ProtocolError::new(
                ErrorCode::BadMessage,
                "not a binary control message",
            ))
        }
    };
    end(&r)?;
    Ok(message)
}

fn end(r: &Reader<'_>) -> Result<(), ProtocolError> {
    if r.is_empty() {
        Ok(())
    } else {
        Err(ProtocolError::new(
            ErrorCode::BadMessage,
            "trailing bytes after the message",
        ))
    }
}
