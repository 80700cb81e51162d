//! What happens to a blob between snapshots, told once: it was eaten, it
//! grew by eating another, it came back. The server sends each reliably
//! to every page that sees the blob (every page, without an interest
//! radius); the library applies it once to the blob's last state (a
//! state at or after its tick already has it) and the page tells its
//! player what it means to them ([`Note`]). A pellet's growth is not an
//! event: thousands a second would cost more than the mass field of the
//! delta that carries it.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use skirmish_core::{Applied, Codec, PlayerId, StateHash, Target, Tick, Vec2};

use crate::{Blob, BLOB, DEAD, START_MASS};

/// One thing that happened to one blob at a server tick.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Happening {
    /// `target` was eaten by `by`.
    Eaten {
        /// When.
        tick: Tick,
        /// The blob eaten.
        target: PlayerId,
        /// The blob that ate it.
        by: PlayerId,
    },
    /// `target` ate `ate` and grew by `gain`.
    Grew {
        /// When.
        tick: Tick,
        /// The blob that grew.
        target: PlayerId,
        /// The blob it ate.
        ate: PlayerId,
        /// The mass it gained.
        gain: f32,
    },
    /// `target` came back, small, at `at`.
    Back {
        /// When.
        tick: Tick,
        /// The blob that came back.
        target: PlayerId,
        /// Where.
        at: Vec2,
    },
}

impl Happening {
    /// Its tag on the wire and in its key.
    fn tag(&self) -> u8 {
        match self {
            Happening::Eaten { .. } => 0,
            Happening::Grew { .. } => 1,
            Happening::Back { .. } => 2,
        }
    }

    /// What it does to its target's last state.
    pub fn apply(&self, blob: &mut Blob) {
        match *self {
            Happening::Eaten { .. } => blob.kind = DEAD,
            Happening::Grew { gain, .. } => blob.mass += gain,
            Happening::Back { at, .. } => {
                blob.kind = BLOB;
                blob.at = at;
                blob.mass = START_MASS;
            }
        }
    }
}

/// Two copies of one happening have the same tick, target, kind and other
/// blob (a blob may eat two in one tick; it is eaten or comes back at most
/// once a tick).
impl Applied for Happening {
    type Key = (Tick, PlayerId, u8, PlayerId);

    fn key(&self) -> (Tick, PlayerId, u8, PlayerId) {
        let other = match *self {
            Happening::Eaten { by, .. } => by,
            Happening::Grew { ate, .. } => ate,
            Happening::Back { target, .. } => target,
        };
        (self.tick(), self.whose(), self.tag(), other)
    }

    fn tick(&self) -> Tick {
        match *self {
            Happening::Eaten { tick, .. }
            | Happening::Grew { tick, .. }
            | Happening::Back { tick, .. } => tick,
        }
    }

    fn target(&self) -> Target {
        Target::Player(self.whose())
    }
}

impl Happening {
    /// The blob it happened to.
    pub fn whose(&self) -> PlayerId {
        match *self {
            Happening::Eaten { target, .. }
            | Happening::Grew { target, .. }
            | Happening::Back { target, .. } => target,
        }
    }
}

/// In binary as serde describes it: its variant, then its fields.
impl Codec for Happening {}

/// What a happening means to the own player.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Note {
    /// It ate this blob and grew by the mass.
    Ate(PlayerId, f32),
    /// This blob ate it.
    EatenBy(PlayerId),
    /// It came back.
    Back,
}

impl Note {
    /// What `happening` means to player `me`, if anything.
    pub fn of(happening: &Happening, me: PlayerId) -> Option<Note> {
        match *happening {
            Happening::Eaten { target, by, .. } if target == me => Some(Note::EatenBy(by)),
            Happening::Grew {
                target, ate, gain, ..
            } if target == me => Some(Note::Ate(ate, gain)),
            Happening::Back { target, .. } if target == me => Some(Note::Back),
            _ => None,
        }
    }
}

/// How long a note stays on the page.
pub const NOTE_FOR: Duration = Duration::from_secs(3);

/// What the page keeps of the happenings: the notes of the last
/// [`NOTE_FOR`], newest last.
#[derive(Clone, Debug, Default)]
pub struct Feed {
    notes: Vec<(Duration, Note)>,
}

impl Feed {
    /// A note told at `at`.
    pub fn push(&mut self, note: Note, at: Duration) {
        self.notes.push((at, note));
    }

    /// Forgets the notes gone by `now`.
    pub fn prune(&mut self, now: Duration) {
        self.notes
            .retain(|(at, _)| now.saturating_sub(*at) < NOTE_FOR);
    }

    /// The notes shown at `now`, oldest first.
    pub fn at(&self, now: Duration) -> Vec<Note> {
        self.notes
            .iter()
            .filter(|(at, _)| now.saturating_sub(*at) < NOTE_FOR)
            .map(|(_, note)| *note)
            .collect()
    }

    /// Forgets every note.
    pub fn clear(&mut self) {
        self.notes.clear();
    }
}

/// Folds `note` into the recorder's hash, field by field.
pub fn hash_note(note: &Note, h: &mut StateHash) {
    match *note {
        Note::Ate(id, gain) => {
            h.word(1 << 32 | u64::from(id.0));
            h.f32(gain);
        }
        Note::EatenBy(id) => h.word(2 << 32 | u64::from(id.0)),
        Note::Back => h.word(3 << 32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skirmish_core::{Reader, Writer};

    #[test]
    fn every_happening_reads_back_and_a_bad_tag_is_refused() {
        let all = [
            Happening::Eaten {
                tick: Tick(7),
                target: PlayerId(2),
                by: PlayerId(3),
            },
            Happening::Grew {
                tick: Tick(7),
                target: PlayerId(3),
                ate: PlayerId(2),
                gain: 12.5,
            },
            Happening::Back {
                tick: Tick(27),
                target: PlayerId(2),
                at: Vec2::new(10.0, 20.0),
            },
        ];
        for h in all {
            let mut w = Writer::default();
            h.write(&mut w);
            assert_eq!(Happening::read(&mut Reader::new(&w.bytes)), Ok(h));
            let json = serde_json::to_string(&h).expect("json");
            assert_eq!(serde_json::from_str::<Happening>(&json).expect("json"), h);
        }
        assert!(Happening::read(&mut Reader::new(&[9, 1, 1])).is_err());
        assert!(Happening::read(&mut Reader::new(&[0, 1])).is_err());
    }

    #[test]
    fn a_happening_changes_its_targets_state_and_means_something_to_two() {
        let mut blob = Blob {
            at: Vec2::new(1.0, 1.0),
            mass: 30.0,
            kind: BLOB,
            pace: (1.0, 1.0, 0),
        };
        let eaten = Happening::Eaten {
            tick: Tick(6),
            target: PlayerId(2),
            by: PlayerId(3),
        };
        eaten.apply(&mut blob);
        assert_eq!(blob.kind, DEAD);
        assert_eq!(
            Note::of(&eaten, PlayerId(2)),
            Some(Note::EatenBy(PlayerId(3)))
        );
        assert_eq!(Note::of(&eaten, PlayerId(3)), None);
        let back = Happening::Back {
            tick: Tick(26),
            target: PlayerId(2),
            at: Vec2::new(50.0, 60.0),
        };
        back.apply(&mut blob);
        assert_eq!(
            (blob.kind, blob.at, blob.mass),
            (BLOB, Vec2::new(50.0, 60.0), START_MASS)
        );
    }

    #[test]
    fn a_note_is_shown_for_three_seconds() {
        let mut feed = Feed::default();
        feed.push(Note::Back, Duration::from_secs(1));
        feed.push(Note::EatenBy(PlayerId(4)), Duration::from_secs(2));
        assert_eq!(feed.at(Duration::from_millis(3900)).len(), 2);
        feed.prune(Duration::from_secs(4));
        assert_eq!(
            feed.at(Duration::from_secs(4)),
            [Note::EatenBy(PlayerId(4))]
        );
        feed.clear();
        assert!(feed.at(Duration::from_secs(4)).is_empty());
    }
}
