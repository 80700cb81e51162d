//! A client recording played frame by frame, as a viewer plays it: one
//! frame forward at a time, or to any frame through the nearest checkpoint
//! (a clone of the session kept every [`Player::checkpoint_every`] frames
//! as they are first reached), so a seek re-simulates at most that many
//! frames whatever the recording's length.
//!
//! Every frame is checked against the recording's hash chain: the first
//! that differs stops the player with a [`Divergence`], as
//! [`replay_client_of`](super::replay_client_of) reports it.

use std::collections::VecDeque;
use std::time::Duration;

use super::{describe, CallOf, Divergence, ReplayError};
use crate::client::game::{ClientGame, NoteOf};
use crate::client::record::{open_client_of, Call, Calls, ClientRecorder};
use crate::client::session::{ClientSession, Incoming, SessionEvent};
use crate::shared::game::Game;
use crate::shared::record::FormatError;

/// Frames between two checkpoints by default: ten seconds at 60 frames a
/// second.
pub const CHECKPOINT_EVERY: u64 = 600;

/// Calls kept to say what led to a frame that differs.
const KEPT_CALLS: usize = 16;

/// One frame played.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Played {
    /// The frame's number, from 1.
    pub frame: u64,
    /// The recording's time of the frame.
    pub now: Duration,
    /// Frames received since the previous frame.
    pub received: u64,
}

/// Where a player is: the calls still to come and the session they lead
/// to. Cloned as a checkpoint.
#[derive(Clone, Debug)]
struct Position<'a, G: ClientGame> {
    /// The calls still to come.
    rest: Calls<'a, G>,
    session: ClientSession<G>,
    /// Frames played (the last one's number).
    frame: u64,
    /// The calls since the last frame, with their offsets, described only
    /// if the next frame differs.
    since_frame: VecDeque<(usize, CallOf<'a, G>)>,
    /// Calls played, and frames received among them.
    calls: u64,
    received: u64,
    /// What the session told of the last frame played (its calls and its
    /// advance), drained from it: a checkpoint's session holds none.
    events: Vec<SessionEvent<NoteOf<G>>>,
}

/// A client recording of game `G` played frame by frame; see the module
/// docs.
#[derive(Debug)]
pub struct Player<'a, G: ClientGame> {
    at: Position<'a, G>,
    /// Checkpoints at frames 0, `every`, 2 `every`...: as far as played.
    checkpoints: Vec<Position<'a, G>>,
    every: u64,
    /// The recording's last frame, once it was played to its end.
    last: Option<u64>,
    /// The frame that differed, once one did: nothing plays past it.
    diverged: Option<Box<Divergence<<G as Game>::Local>>>,
    /// Frames simulated in all, seeks' included.
    simulated: u64,
}

impl<'a, G: ClientGame> Player<'a, G> {
    /// A player at the start of the recording `bytes` (no frame played),
    /// with a checkpoint every [`CHECKPOINT_EVERY`] frames.
    ///
    /// # Errors
    /// Not a client recording of `G`, another version, or a damaged header.
    pub fn open(bytes: &'a [u8]) -> Result<Player<'a, G>, FormatError> {
        Player::with_checkpoints(bytes, CHECKPOINT_EVERY)
    }

    /// [`Player::open`] with a checkpoint every `every` frames (at least 1).
    ///
    /// # Errors
    /// As [`Player::open`].
    pub fn with_checkpoints(bytes: &'a [u8], every: u64) -> Result<Player<'a, G>, FormatError> {
        let (config, calls) = open_client_of::<G>(bytes)?;
        let start = Position {
            rest: calls,
            session: ClientSession::<G>::recorded(config, 0),
            frame: 0,
            since_frame: VecDeque::new(),
            calls: 0,
            received: 0,
            events: Vec::new(),
        };
        Ok(Player {
            checkpoints: vec![start.clone()],
            at: start,
            every: every.max(1),
            last: None,
            diverged: None,
            simulated: 0,
        })
    }

    /// The replayed session as of the last frame played: what a viewer
    /// draws, its HUD and its events.
    pub fn session(&self) -> &ClientSession<G> {
        &self.at.session
    }

    /// What the session told of the last frame played, in order: its
    /// calls' events and its advance's (at the end of the recording, those
    /// of the calls after the last frame).
    pub fn events(&self) -> &[SessionEvent<NoteOf<G>>] {
        &self.at.events
    }

    /// The last frame played (0: none yet).
    pub fn frame(&self) -> u64 {
        self.at.frame
    }

    /// The recording's last frame, once known (played to the end once).
    pub fn last_frame(&self) -> Option<u64> {
        self.last
    }

    /// Frames between checkpoints.
    pub fn checkpoint_every(&self) -> u64 {
        self.every
    }

    /// Frames simulated since the player opened, those of every seek
    /// included: what seeking costs.
    pub fn simulated(&self) -> u64 {
        self.simulated
    }

    /// Calls played so far, frames received among them.
    pub fn calls(&self) -> (u64, u64) {
        (self.at.calls, self.at.received)
    }

    /// Plays the next frame: every call up to and including it. `Ok(None)`
    /// at the end of the recording.
    ///
    /// # Errors
    /// A damaged record, or the frame's hash differs from the recording's
    /// (and every later call returns the same divergence).
    pub fn step(&mut self) -> Result<Option<Played>, ReplayError<<G as Game>::Local>> {
        if let Some(divergence) = self
            .diverged
            .as_ref()
            .filter(|d| d.frame <= self.at.frame + 1)
        {
            return Err(ReplayError::Diverged(divergence.clone()));
        }
        let at = &mut self.at;
        at.events.clear();
        let mut received = 0;
        loop {
            let Some(item) = at.rest.next() else {
                at.received += received;
                at.events.extend(at.session.events());
                self.last = Some(at.frame);
                return Ok(None);
            };
            let (offset, call) = item?;
            at.calls += 1;
            let session = &mut at.session;
            match &call {
                Call::Controls(c) => session.set_controls(*c),
                Call::Toggles(t) => session.set_toggles(*t),
                Call::Delivery(d) => session.set_delivery(*d),
                Call::Conditions(up, down) => session.set_conditions(*up, *down),
                Call::Text(bytes, when) => {
                    received += 1;
                    // `open_client` checked it is UTF-8.
                    let text = std::str::from_utf8(bytes).unwrap_or_default();
                    session.receive(Incoming::Text(text), *when);
                }
                Call::Binary(bytes, when) => {
                    received += 1;
                    session.receive(Incoming::Binary(bytes), *when);
                }
                Call::Disconnected(reason) => session.disconnected(reason),
                Call::Sent(n) => session.sent(usize::try_from(*n).unwrap_or(usize::MAX)),
                Call::Advance { now, hash, own } => {
                    let now = *now;
                    let _ = session.advance(now);
                    at.frame += 1;
                    self.simulated += 1;
                    let replayed = session.recording().map_or(0, ClientRecorder::last_hash);
                    if replayed != *hash {
                        let own = *own;
                        at.since_frame.push_back((offset, call.clone()));
                        let mine = session.view().own.map(|o| o.predicted);
                        let divergence = Box::new(Divergence {
                            frame: at.frame,
                            now,
                            calls: at
                                .since_frame
                                .iter()
                                .map(|(o, c)| describe(*o, c))
                                .collect(),
                            recorded: (*hash, own),
                            replayed: (replayed, mine),
                            state: format!("{session:#?}"),
                        });
                        self.diverged = Some(divergence.clone());
                        return Err(ReplayError::Diverged(divergence));
                    }
                    at.since_frame.clear();
                    at.received += received;
                    at.events.extend(session.events());
                    let played = Played {
                        frame: at.frame,
                        now,
                        received,
                    };
                    if at.frame % self.every == 0
                        && self.checkpoints.len() as u64 == at.frame / self.every
                    {
                        self.checkpoints.push(at.clone());
                    }
                    return Ok(Some(played));
                }
            }
            if at.since_frame.len() >= KEPT_CALLS {
                at.since_frame.pop_front();
            }
            at.since_frame.push_back((offset, call));
        }
    }

    /// Plays to frame `frame` (0: before the first), from the nearest
    /// checkpoint at or before it, or from here when that is nearer: at
    /// most [`Player::checkpoint_every`] frames re-simulated once the
    /// recording was played that far. [`Player::events`] are then the
    /// frame reached's. Stops at the recording's end; the frame reached.
    ///
    /// # Errors
    /// As [`Player::step`], for a frame on the way.
    pub fn seek(&mut self, frame: u64) -> Result<u64, ReplayError<<G as Game>::Local>> {
        let nearest = usize::try_from(frame / self.every)
            .unwrap_or(usize::MAX)
            .min(self.checkpoints.len() - 1);
        let from = &self.checkpoints[nearest];
        if from.frame > self.at.frame || frame < self.at.frame {
            self.at = from.clone();
        }
        while self.at.frame < frame {
            if self.step()?.is_none() {
                break;
            }
        }
        Ok(self.at.frame)
    }
}
