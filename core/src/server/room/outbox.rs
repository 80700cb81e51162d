//! The [`Outbox`]: what a room call decided to send.

use crate::shared::protocol::Frame;
use crate::shared::state::PlayerId;

/// What a room call decided to send: distinct frames, and which recipient
/// gets which, in the order they must be sent.
#[derive(Clone, Debug, Default)]
pub struct Outbox {
    frames: Vec<Frame>,
    /// Per frame: whether it may travel unreliably (snapshots and pongs:
    /// the next one makes up for a lost one).
    droppable: Vec<bool>,
    deliveries: Vec<(PlayerId, usize)>,
    /// Deliveries to make half a tick after the others (own echoes).
    later: Vec<(PlayerId, usize)>,
}

impl Outbox {
    /// An empty outbox.
    pub fn new() -> Outbox {
        Outbox::default()
    }

    /// Whether nothing is to be sent.
    pub fn is_empty(&self) -> bool {
        self.deliveries.is_empty() && self.later.is_empty()
    }

    /// The distinct frames, each encoded once.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// Whether frame `i` may travel unreliably (a datagram): snapshots and
    /// pongs, which the next one makes up for. Everything else must arrive,
    /// in order.
    pub fn droppable(&self, i: usize) -> bool {
        self.droppable.get(i).copied().unwrap_or(false)
    }

    /// Every delivery in order: the recipient and an index into
    /// [`Outbox::frames`].
    pub fn deliveries(&self) -> &[(PlayerId, usize)] {
        &self.deliveries
    }

    /// Deliveries the shell makes half a tick after [`Outbox::deliveries`]
    /// (all droppable): the own echoes of datagram clients, which cover a
    /// lost snapshot's acknowledgement at half the wait of the next one.
    pub fn later(&self) -> &[(PlayerId, usize)] {
        &self.later
    }

    /// The frames `id` gets, in order (not the later ones).
    pub fn to(&self, id: PlayerId) -> impl Iterator<Item = &Frame> {
        self.deliveries
            .iter()
            .filter(move |(to, _)| *to == id)
            .filter_map(|&(_, i)| self.frames.get(i))
    }

    /// Takes the frames and the deliveries out, leaving the outbox empty
    /// (read [`Outbox::later`] first: it is forgotten).
    pub fn take(&mut self) -> (Vec<Frame>, Vec<(PlayerId, usize)>) {
        self.droppable.clear();
        self.later.clear();
        (
            std::mem::take(&mut self.frames),
            std::mem::take(&mut self.deliveries),
        )
    }

    /// Forgets everything (keeping the allocations).
    pub fn clear(&mut self) {
        self.frames.clear();
        self.droppable.clear();
        self.deliveries.clear();
        self.later.clear();
    }

    pub(super) fn push(&mut self, frame: Frame, droppable: bool) -> usize {
        self.frames.push(frame);
        self.droppable.push(droppable);
        self.frames.len() - 1
    }

    pub(super) fn send(&mut self, to: PlayerId, frame: Frame, droppable: bool) {
        let i = self.push(frame, droppable);
        self.deliveries.push((to, i));
    }

    pub(super) fn send_later(&mut self, to: PlayerId, frame: Frame) {
        let i = self.push(frame, true);
        self.later.push((to, i));
    }

    pub(super) fn share(
        &mut self,
        to: impl IntoIterator<Item = PlayerId>,
        frame: Frame,
        droppable: bool,
    ) {
        let i = self.push(frame, droppable);
        self.deliveries.extend(to.into_iter().map(|id| (id, i)));
    }
}
