//! Protocol v1: the JSON text messages between client and server.
//!
//! This is a contract outside clients are written against: fields may be
//! added, none renamed or removed. `docs/PROTOCOL.md` documents every message,
//! limit and error code. Unknown fields are ignored, so a newer peer can add
//! some.
//!
//! Everything from the network goes through [`decode_client`] (on the server)
//! or [`decode_server`] (on the client), which never panic: a message is either
//! well-formed and within every limit, or a [`ProtocolError`] with a stable
//! [`ErrorCode`] and a message for humans.
//!
//! Floats are `f32` and travel exactly: `serde_json` writes the shortest text
//! that reads back to the same `f32`, so the client's baseline is bit-exact.

use std::fmt::{self, Write as _};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::shared::game::Networked;
use crate::shared::tick::Tick;
use crate::shared::wired::Wired;

mod downlink;
#[cfg(test)]
mod tests;

pub use downlink::{decode_server, RosterEntry, ServerMessage};

/// The newest protocol version this build speaks. Version 2 (command
/// frames): an input's `tick` names the server tick it is for, and the
/// server reports each client's input timing. Version 1 (inputs in the
/// client's own ticks, queued) is still served, as the simple mode.
pub const PROTOCOL_VERSION: u32 = 2;
/// The oldest protocol version this build still serves.
pub const MIN_PROTOCOL_VERSION: u32 = 1;
/// The largest text frame either side accepts, in bytes.
pub const MAX_FRAME_BYTES: usize = 8 * 1024;
/// The most inputs one `input` message may carry.
pub const MAX_INPUTS_PER_MESSAGE: usize = 16;
/// The longest player name, in characters.
pub const MAX_NAME_CHARS: usize = 24;
/// The longest room name, in characters.
pub const MAX_ROOM_CHARS: usize = 32;

/// How the server sends snapshots to a client.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// `snapshot` messages as JSON text frames.
    #[default]
    Json,
    /// Snapshots as compact binary frames (see `crate::shared::compact`); every
    /// other message stays JSON.
    Compact,
}

impl Encoding {
    /// Whether this is the default JSON encoding.
    pub fn is_json(&self) -> bool {
        *self == Encoding::Json
    }
}

/// A game, its version and the shape of its messages, as a client names
/// the one it plays and a recording the one it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameId {
    /// The game's name.
    pub name: String,
    /// The game's version.
    pub version: u32,
    /// The checksum of its wire types' shapes ([`shape`]); `None` from a
    /// client or a recording that did not say (older ones, outside tools),
    /// which is not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<u32>,
}

impl GameId {
    /// Game `G`'s name, version and shape.
    pub fn of<G: Networked>() -> GameId {
        GameId {
            name: G::NAME.to_string(),
            version: G::VERSION,
            shape: Some(shape::<G>()),
        }
    }

    /// Whether `other` is the same game: the same name and version, and
    /// the same shape where both say one.
    pub fn matches(&self, other: &GameId) -> bool {
        self.name == other.name
            && self.version == other.version
            && match (self.shape, other.shape) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

impl GameId {
    /// How to name it beside `other` in a refusal: its name and version,
    /// and its shape when that is all that differs.
    pub fn told(&self, other: &GameId) -> String {
        match self.shape {
            Some(shape) if self.name == other.name && self.version == other.version => {
                format!("{self} (wire shape {shape:08x})")
            }
            _ => self.to_string(),
        }
    }
}

/// Its name and version (`ships 2`).
impl std::fmt::Display for GameId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", echo(&self.name), self.version)
    }
}

/// The checksum of the shapes of game `G`'s wire types, computed the
/// same on every target: the bytes of its input, of what it predicts and
/// of its own state in memory and on the wire, the widths of the fields
/// snapshots carry of the others, and the name of its events' message. A
/// field added, removed or widened in any of them changes it, so a page
/// and a server built from different sources are refused by name even
/// when nobody bumped [`Game::VERSION`](crate::Game::VERSION). (A field renamed, or a type
/// changed to another of the same size, is not seen; nor are the setup's
/// and the events' forms, which hold text of any length.)
pub fn shape<G: Networked>() -> u32 {
    use crate::shared::fields::{Fields, Width};
    use crate::shared::game::OwnState;
    use std::mem::size_of;
    let mut hash = crate::shared::determinism::Fnv64::new();
    for bytes in [
        size_of::<G::Input>(),
        size_of::<G::Local>(),
        size_of::<G::Own>(),
        <G::Own as OwnState>::BYTES,
        size_of::<G::Entity>(),
    ] {
        hash.write(&(bytes as u64).to_le_bytes());
    }
    for width in <G::Entity as Fields>::WIDTHS {
        hash.write(&[u8::from(*width == Width::Wide)]);
    }
    hash.write(G::EVENTS.as_bytes());
    let h = hash.finish();
    (h ^ (h >> 32)) as u32
}

/// Whether a `hello` may join a server of game `G`: one that names
/// another game or version is refused by name (one that names none is
/// taken: outside tools). Any other message passes.
///
/// # Errors
/// `wrong_game`.
pub fn check_game<G: Networked, W>(message: &ClientMessage<W>) -> Result<(), ProtocolError> {
    let ours = GameId::of::<G>();
    match message {
        ClientMessage::Hello {
            game: Some(game), ..
        } if !game.matches(&ours) => Err(ProtocolError::new(
            ErrorCode::WrongGame,
            if game.name == ours.name && game.version == ours.version {
                format!(
                    "this server runs {}, not {}: the two builds' messages differ \
                     (a wire type changed without a new version of the game)",
                    ours.told(game),
                    game.told(&ours)
                )
            } else {
                format!("this server runs {ours}, not {game}")
            },
        )),
        _ => Ok(()),
    }
}

/// Messages a client sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMessage<W> {
    /// The first message: who is joining, speaking which protocol, where.
    Hello {
        /// Display name, 1 to [`MAX_NAME_CHARS`] characters.
        name: String,
        /// [`MIN_PROTOCOL_VERSION`] to [`PROTOCOL_VERSION`]: 1 queues inputs
        /// in the client's own ticks, 2 schedules them at the server ticks
        /// they name.
        protocol: u32,
        /// A room to join by name; without it the server picks one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        room: Option<String>,
        /// How snapshots are sent: JSON text (the default) or compact
        /// binary frames (`crate::shared::compact`).
        #[serde(default, skip_serializing_if = "Encoding::is_json")]
        encoding: Encoding,
        /// The game and version the client plays: one the server does not
        /// run is refused with `wrong_game`. Omitted (outside tools): the
        /// server's own game is assumed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        game: Option<GameId>,
    },
    /// Every input not yet acknowledged, oldest first, ticks strictly
    /// increasing, 1 to [`MAX_INPUTS_PER_MESSAGE`].
    Input {
        /// The inputs.
        inputs: Vec<W>,
        /// The server tick of the newest snapshot the client has decoded: a
        /// client that chose the compact encoding and acknowledges gets delta
        /// frames against it (`crate::shared::delta`). Clients that omit it
        /// keep getting full frames.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        snapshot_ack: Option<Tick>,
        /// The message's number on its connection (wrapping at 65536, one
        /// more for each input message sent, resends included): the server
        /// reports which arrived ([`crate::InputTiming::received`]), so the
        /// client measures its uplink loss. Omitted: nothing is reported.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seq: Option<u16>,
    },
    /// A clock probe; the server answers with `pong`.
    Ping {
        /// Echoed back.
        id: u64,
    },
}

/// Declares [`ErrorCode`] from one list: each variant with its wire name,
/// from which serde's names, [`ErrorCode::ALL`] and [`ErrorCode::as_str`]
/// all follow, so a new code cannot be missing from any of them.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident = $wire:literal,)+) => {
        /// Stable error codes; see `docs/PROTOCOL.md`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub enum ErrorCode {
            $($(#[$doc])* #[serde(rename = $wire)] $variant,)+
        }

        impl ErrorCode {
            /// Every code, for metrics and docs.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)+];

            /// The code as it travels.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $wire,)+
                }
            }
        }
    };
}

error_codes! {
    /// Not JSON, an unknown `type`, or a missing or mistyped field.
    BadMessage = "bad_message",
    /// A frame over [`MAX_FRAME_BYTES`].
    TooLarge = "too_large",
    /// An `input` message with more than [`MAX_INPUTS_PER_MESSAGE`] inputs (or none).
    TooManyInputs = "too_many_inputs",
    /// Input ticks not strictly increasing within a message.
    TicksNotIncreasing = "ticks_not_increasing",
    /// A NaN or infinite number.
    NonFinite = "non_finite",
    /// A message other than `hello` before `hello`.
    NotJoined = "not_joined",
    /// A second `hello`.
    AlreadyJoined = "already_joined",
    /// A protocol version this server does not speak.
    BadProtocol = "bad_protocol",
    /// A `hello` naming a game or game version this server does not run.
    WrongGame = "wrong_game",
    /// An empty or too long name or room name, or one that hides text,
    /// turns its direction or shows nothing.
    BadName = "bad_name",
    /// A binary frame; the protocol is text only.
    BinaryFrame = "binary_frame",
    /// More messages per second than allowed.
    RateLimited = "rate_limited",
    /// Every room is full and no new one may be opened.
    ServerFull = "server_full",
    /// The client's address already holds as many seats, or has opened as
    /// many rooms, as one address may.
    AddressLimit = "address_limit",
    /// The client did not read its messages fast enough and is disconnected.
    SlowConsumer = "slow_consumer",
    /// The client kept sending bad messages and is disconnected.
    TooManyErrors = "too_many_errors",
    /// The client did not send `hello` in time.
    HelloTimeout = "hello_timeout",
    /// The server is shutting down.
    ShuttingDown = "shutting_down",
    /// The client's room failed (a bug in the server) and was closed; a new
    /// `hello` joins another room.
    RoomFailed = "room_failed",
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused message: a stable code and a message for humans.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ProtocolError {
    /// What kind of problem.
    pub code: ErrorCode,
    /// What exactly.
    pub message: String,
}

impl ProtocolError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> ProtocolError {
        ProtocolError {
            code,
            message: message.into(),
        }
    }

    /// The `error` message that tells the peer about it (of any game).
    pub fn to_message<G: crate::shared::game::Networked>(&self) -> ServerMessage<G> {
        ServerMessage::Error {
            code: self.code,
            message: self.message.clone(),
        }
    }
}

/// One encoded message for a socket, either way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A JSON text frame.
    Text(String),
    /// A binary frame (compact snapshots, binary inputs).
    Binary(Vec<u8>),
}

/// Parses and checks one frame from a client as it arrived: `text` or
/// binary, its bytes not yet known to be UTF-8. The size is checked first,
/// so an oversized frame costs no parsing.
///
/// # Errors
/// As [`decode_client`] and [`decode_inputs`](crate::shared::uplink::decode_inputs);
/// `bad_message` for text that is not UTF-8 and `binary_frame` for a binary
/// frame that is not an input, `hello` or `ping` message.
///
/// It does not look at the game a `hello` names: a server of game `G`
/// decodes with [`decode_client_frame_of`], which refuses another game's
/// `hello` before any other rule.
pub fn decode_client_frame<W: Wired + DeserializeOwned>(
    text: bool,
    payload: &[u8],
) -> Result<ClientMessage<W>, ProtocolError> {
    decode_frame_with(text, payload, check_hello)
}

/// [`decode_client_frame`] for a server of game `G`: a `hello` that names
/// another game (or version) is refused with `wrong_game` first, whatever
/// else is wrong with it, so a client of another game is told so.
///
/// # Errors
/// As [`decode_client_frame`], and `wrong_game`.
pub fn decode_client_frame_of<G: Networked>(
    text: bool,
    payload: &[u8],
) -> Result<ClientMessage<G::Wire>, ProtocolError> {
    decode_frame_with(text, payload, |message| {
        check_game::<G, _>(message)?;
        check_hello(message)
    })
}

fn decode_frame_with<W: Wired + DeserializeOwned>(
    text: bool,
    payload: &[u8],
    hello: impl Fn(&ClientMessage<W>) -> Result<(), ProtocolError>,
) -> Result<ClientMessage<W>, ProtocolError> {
    check_len(payload.len())?;
    if !text {
        return match payload.first() {
            Some(&crate::shared::uplink::INPUT) => crate::shared::uplink::decode_inputs(payload),
            _ => crate::shared::control::decode_client_with(payload, hello),
        };
    }
    let text = std::str::from_utf8(payload)
        .map_err(|_| ProtocolError::new(ErrorCode::BadMessage, "a text frame that is not UTF-8"))?;
    decode_text_with(text, hello)
}

/// Parses and checks one text frame from a client.
///
/// # Errors
/// A frame over [`MAX_FRAME_BYTES`], anything that is not a well-formed
/// message, and an `input` or `hello` that breaks a limit (see
/// [`ErrorCode`]).
pub fn decode_client<W: Wired + DeserializeOwned>(
    text: &str,
) -> Result<ClientMessage<W>, ProtocolError> {
    decode_text_with(text, check_hello)
}

fn decode_text_with<W: Wired + DeserializeOwned>(
    text: &str,
    hello: impl Fn(&ClientMessage<W>) -> Result<(), ProtocolError>,
) -> Result<ClientMessage<W>, ProtocolError> {
    check_size(text)?;
    // Inputs are nearly every message: read them as a plain struct first,
    // which skips serde's buffering of internally tagged enums. Anything
    // else (or anything odd) takes the general path, which gives the error.
    if let Ok(InputBody {
        inputs,
        snapshot_ack,
        seq,
        ..
    }) = from_json::<InputBody<W>>(text)
    {
        check_inputs(&inputs)?;
        return Ok(ClientMessage::Input {
            inputs,
            snapshot_ack,
            seq,
        });
    }
    let message: ClientMessage<W> =
        from_json(text).map_err(|e| ProtocolError::new(ErrorCode::BadMessage, e))?;
    match &message {
        ClientMessage::Hello { .. } => hello(&message)?,
        ClientMessage::Input { inputs, .. } => check_inputs(inputs)?,
        ClientMessage::Ping { .. } => {}
    }
    Ok(message)
}

/// An `input` message read as a plain struct (the fast path of
/// [`decode_client`]); `kind` only matches `"input"`.
#[derive(Deserialize)]
struct InputBody<W> {
    #[serde(rename = "type")]
    #[allow(dead_code)]
    kind: InputTag,
    inputs: Vec<W>,
    #[serde(default)]
    snapshot_ack: Option<Tick>,
    #[serde(default)]
    seq: Option<u16>,
}

#[derive(Deserialize)]
enum InputTag {
    #[serde(rename = "input")]
    Input,
}

/// The JSON text of a message (empty in a build without the `json`
/// feature, which any peer refuses).
pub fn encode<T: Serialize>(message: &T) -> String {
    // Every message type here serialises infallibly: no maps with non-string
    // keys, no fallible `Serialize` impls. NaN would become `null`, never an error.
    #[cfg(feature = "json")]
    let text = serde_json::to_string(message).unwrap_or_default();
    #[cfg(not(feature = "json"))]
    let text = {
        let _ = message;
        String::new()
    };
    text
}

/// What a build without the `json` feature says of JSON it is given.
#[cfg(not(feature = "json"))]
const NO_JSON: &str = "this build reads no JSON: skirmish-core is built without its `json` \
feature (pages speak binary; a peer that speaks JSON needs `features = [\"json\"]`)";

/// A value read from JSON text; in a build without the `json` feature (the
/// browser client, which speaks binary all the way) always an error.
///
/// # Errors
/// Text that is not that value's JSON, as serde says.
#[cfg(feature = "json")]
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    serde_json::from_str(text).map_err(|e| echo_quoted(&e.to_string()))
}

/// See the `json` build of this function.
#[cfg(not(feature = "json"))]
pub(crate) fn from_json<T>(_: &str) -> Result<T, String> {
    Err(NO_JSON.to_string())
}

/// The rules of a `hello`, text or binary: a protocol this server speaks,
/// a display name and a room name within their limits (its game is
/// [`check_game`]'s). Any other message passes.
///
/// # Errors
/// `bad_protocol` or `bad_name`.
pub(crate) fn check_hello<W>(message: &ClientMessage<W>) -> Result<(), ProtocolError> {
    let ClientMessage::Hello {
        name,
        protocol,
        room,
        ..
    } = message
    else {
        return Ok(());
    };
    if !(MIN_PROTOCOL_VERSION..=PROTOCOL_VERSION).contains(protocol) {
        return Err(ProtocolError::new(
            ErrorCode::BadProtocol,
            format!(
                "this server speaks protocols {MIN_PROTOCOL_VERSION} to \
                 {PROTOCOL_VERSION}, not {protocol}"
            ),
        ));
    }
    check_name("name", name, MAX_NAME_CHARS)?;
    if let Some(room) = room {
        check_room_name(room)?;
    }
    Ok(())
}

fn check_size(text: &str) -> Result<(), ProtocolError> {
    check_len(text.len())
}

fn check_len(len: usize) -> Result<(), ProtocolError> {
    if len > MAX_FRAME_BYTES {
        return Err(ProtocolError::new(
            ErrorCode::TooLarge,
            format!("frame of {len} bytes; at most {MAX_FRAME_BYTES}"),
        ));
    }
    Ok(())
}

/// Checks a room name as `hello` does (1 to [`MAX_ROOM_CHARS`] printable
/// characters, at least one visible, no format or bidi control
/// characters), for rooms named from elsewhere (an orchestrator's
/// allocation).
///
/// # Errors
/// `bad_name` with what a room name must be.
pub fn check_room_name(name: &str) -> Result<(), ProtocolError> {
    check_name("room", name, MAX_ROOM_CHARS)
}

/// A name's rules: 1 to `max` characters, none a control character or a
/// format character that hides text or turns its direction
/// ([`is_format`]), at least one of them visible ([`is_blank`]).
fn check_name(what: &str, name: &str, max: usize) -> Result<(), ProtocolError> {
    let refuse = |why: String| Err(ProtocolError::new(ErrorCode::BadName, why));
    if name.is_empty() || name.chars().count() > max {
        return refuse(format!("{what} must be 1 to {max} printable characters"));
    }
    if let Some(c) = name.chars().find(|&c| c.is_control() || is_format(c)) {
        return refuse(format!(
            "{what} must be printable: it holds U+{:04X}, a control, format or \
             direction character",
            u32::from(c)
        ));
    }
    if name.chars().all(is_blank) {
        return refuse(format!("{what} must show at least one visible character"));
    }
    Ok(())
}

/// Whether `c` is a format character (Unicode category Cf: zero-width
/// spaces and joiners, bidi embeddings, overrides and isolates, the BOM,
/// invisible operators, tags) or a line or paragraph separator: characters
/// that change how the text around them reads without showing.
fn is_format(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00AD
            | 0x0600..=0x0605
            | 0x061C
            | 0x06DD
            | 0x070F
            | 0x0890..=0x0891
            | 0x08E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x2028..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    )
}

/// Whether `c` shows nothing on its own: white space, and the fillers and
/// selectors that draw as blank (Hangul fillers, the blank Braille
/// pattern, the combining grapheme joiner, variation selectors).
fn is_blank(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            u32::from(c),
            0x034F
                | 0x115F
                | 0x1160
                | 0x17B4
                | 0x17B5
                | 0x2800
                | 0x3164
                | 0xFE00..=0xFE0F
                | 0xFFA0
                | 0xE0100..=0xE01EF
        )
}

/// The most characters of what a client sent that an error quotes back.
pub const ECHO_CHARS: usize = 32;

/// What a client sent, as an error may quote it: its first
/// [`ECHO_CHARS`] characters (then `…`), control and format characters
/// written as `\u{..}`, so that an error never carries a client's
/// kilobytes back or shows text that hides or reverses.
pub fn echo(sent: &str) -> String {
    let mut out = String::new();
    for (i, c) in sent.chars().enumerate() {
        if i == ECHO_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() || is_format(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// The longest message about a client's text a parser's error may give,
/// in characters, once [`echo_quoted`] has cut what it quotes.
#[cfg(feature = "json")]
const PARSER_MESSAGE_CHARS: usize = 160;

/// A parser's message about a client's text (serde's), with every part it
/// quotes (between backticks, or a string between double quotes) cut as
/// [`echo`] cuts it; a quote mark inside what was sent may fool the
/// cutting, so the whole is bounded too.
#[cfg(feature = "json")]
fn echo_quoted(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(open) = rest.find(['`', '"']) {
        let (before, from) = rest.split_at(open);
        out.push_str(before);
        let mark = if from.starts_with('"') { '"' } else { '`' };
        let body = &from[1..];
        let close = if mark == '"' {
            // A string is written escaped: its end is the first quote
            // mark not escaped by a backslash.
            let mut escaped = false;
            body.char_indices()
                .find(|&(_, c)| {
                    let end = c == '"' && !escaped;
                    escaped = c == '\\' && !escaped;
                    end
                })
                .map(|(i, _)| i)
        } else {
            body.find('`')
        };
        out.push(mark);
        out.push_str(&echo(close.map_or(body, |close| &body[..close])));
        match close {
            Some(close) => {
                out.push(mark);
                rest = &body[close + 1..];
            }
            None => rest = "",
        }
    }
    out.push_str(rest);
    if out.chars().count() > PARSER_MESSAGE_CHARS {
        out = out.chars().take(PARSER_MESSAGE_CHARS).collect();
        out.push('…');
    }
    out
}

pub(crate) fn check_inputs<W: Wired>(inputs: &[W]) -> Result<(), ProtocolError> {
    if inputs.is_empty() || inputs.len() > MAX_INPUTS_PER_MESSAGE {
        return Err(ProtocolError::new(
            ErrorCode::TooManyInputs,
            format!(
                "{} inputs; send 1 to {MAX_INPUTS_PER_MESSAGE}",
                inputs.len()
            ),
        ));
    }
    for pair in inputs.windows(2) {
        if pair[1].tick() <= pair[0].tick() {
            return Err(ProtocolError::new(
                ErrorCode::TicksNotIncreasing,
                format!("tick {} follows tick {}", pair[1].tick(), pair[0].tick()),
            ));
        }
    }
    for input in inputs {
        let finite = input.is_finite() && input.view_tick().is_none_or(f64::is_finite);
        if !finite {
            return Err(ProtocolError::new(
                ErrorCode::NonFinite,
                format!("input {} holds a NaN or infinite number", input.tick()),
            ));
        }
    }
    Ok(())
}
