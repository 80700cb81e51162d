//! A tick's events to the seats they concern. Without an interest radius
//! every seat gets every event, in one shared frame per encoding. With one,
//! a binary client (a viewer from its seat) gets only the events of what it
//! sees: events whose target is itself or in its view (its partners
//! included), and events pairing a player it sees with another (a hit on
//! someone out of view, drawn from the shooter it sees). A change to a
//! player it does not see is in that player's state when it comes into
//! view, and a room of hundreds would otherwise send each page every event
//! of the world. JSON clients get every event.

use super::{control, Outbox, Room};
use crate::server::world::ServerGame;
use crate::shared::game::{Applied, EventOf};
use crate::shared::protocol::ServerMessage;
use crate::shared::tick::Tick;

impl<G: ServerGame> Room<G> {
    /// This tick's `events`, told to the seats they concern; pairs the
    /// players an event pairs for `tick`'s partner memory.
    pub(super) fn share_events(&mut self, events: &[EventOf<G>], tick: Tick, out: &mut Outbox) {
        if events.is_empty() {
            return;
        }
        let until = tick.saturating_add(self.interest.partner_memory_ticks);
        let pairs: Vec<_> = events.iter().filter_map(G::partners).collect();
        if !pairs.is_empty() {
            for (id, viewer) in &mut self.viewers {
                viewer.note_partners(*id, &pairs, until);
            }
        }
        self.stats.events += events.len() as u64;
        let all = ServerMessage::<G>::Events {
            events: events.to_vec(),
        };
        if self.interest.radius.is_none() || self.viewers.is_empty() {
            self.share_control(&all, out);
            return;
        }
        let mut everything = Vec::new();
        for (id, seat) in &self.seats {
            let Some(viewer) = self.viewers.get(id).filter(|_| seat.binary) else {
                everything.push(*id);
                continue;
            };
            let seen: Vec<_> = events
                .iter()
                .filter(|e| {
                    // The world's events reach everyone.
                    e.target()
                        .id()
                        .is_none_or(|target| target == *id || viewer.sees(target))
                        || G::partners(e).is_some_and(|(a, b)| viewer.sees(a) || viewer.sees(b))
                })
                .cloned()
                .collect();
            if seen.len() == events.len() {
                everything.push(*id);
            } else if !seen.is_empty() {
                self.stats.events_narrowed += 1;
                let message = ServerMessage::<G>::Events { events: seen };
                out.send(*id, control::frame_for(true, &message), false);
            } else {
                self.stats.events_narrowed += 1;
            }
        }
        self.share_control_to(&all, &everything, out);
    }
}
