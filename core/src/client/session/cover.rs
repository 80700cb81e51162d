//! Loss cover that follows the uplink: every input message is numbered
//! (`seq`), the server reports which arrived ([`Receipt`], in the timing of
//! each snapshot), and the session counts the ones that did not. Input
//! messages are sent again (the resends of `uplink.rs`) while the uplink
//! lost one lately, not while the downlink did: a lossy way down says
//! nothing of the way up, and resends do nothing for it.
//!
//! Under sustained heavy loss the cover stops (a circuit breaker): a path
//! that loses more than [`BREAK_LOSS`] of its datagrams is most likely
//! congested, and more datagrams would add to it. One message per step is
//! still sent, each carrying every unacknowledged input; the cover comes
//! back once the loss falls below [`MEND_LOSS`].

use std::time::Duration;

use super::LOSS_MEMORY;
use crate::shared::timing::Receipt;

/// How far behind the newest message the server saw a missing one is
/// judged lost: messages overtake each other on jitter (up to four go out
/// per step while covering).
const REORDER_MESSAGES: u16 = 6;

/// The share of input messages lost above which the cover stops.
pub const BREAK_LOSS: f64 = 0.3;

/// The share below which a stopped cover comes back.
pub const MEND_LOSS: f64 = 0.15;

/// Messages the loss share is averaged over (a moving average).
const LOSS_WINDOW: f64 = 64.0;

/// The uplink's loss as the server's receipts tell it, and whether the
/// cover is on.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cover {
    /// The number of the next input message.
    next: u16,
    /// Messages numbered on this connection.
    sent: u64,
    /// The newest number judged (arrived or lost).
    judged_through: Option<u16>,
    /// The share of messages lost, a moving average; `None` before the
    /// first receipt.
    loss: Option<f64>,
    /// Until when the cover stays on after a lost message.
    losing_until: Option<Duration>,
    /// The breaker is open: no cover, whatever the loss.
    broken: bool,
    /// Messages judged on this connection.
    judged_since_start: u64,
    /// Messages judged, lost among them, and times the breaker opened.
    pub(crate) judged: u64,
    pub(crate) lost: u64,
    pub(crate) breaks: u64,
}

impl Cover {
    /// The number for the next input message.
    pub(crate) fn number(&mut self) -> u16 {
        let seq = self.next;
        self.next = self.next.wrapping_add(1);
        self.sent += 1;
        seq
    }

    /// A receipt came at `now`: every message far enough behind its newest
    /// that was sent and not judged yet is judged now.
    pub(crate) fn on_receipt(&mut self, receipt: Receipt, now: Duration) {
        let newest_sent = self.next.wrapping_sub(1);
        // A receipt for messages never sent (a confused or hostile server)
        // is read only up to what was sent.
        let newest = if newest_sent.wrapping_sub(receipt.newest) as i16 >= 0 {
            receipt.newest
        } else {
            newest_sent
        };
        let through = newest.wrapping_sub(REORDER_MESSAGES);
        // The receipt knows 32 messages back; older ones are past judging.
        let oldest = receipt.newest.wrapping_sub(32);
        let mut seq = match self.judged_through {
            Some(j) if oldest.wrapping_sub(j) as i16 <= 0 => j.wrapping_add(1),
            _ => oldest,
        };
        while through.wrapping_sub(seq) as i16 >= 0 {
            // Only numbers this connection sent (not those "before" its
            // first, which the receipt's window also covers).
            let sent = u64::from(newest_sent.wrapping_sub(seq)) < self.sent;
            if let Some(arrived) = receipt.has(seq).filter(|_| sent) {
                self.judge(arrived, now);
            }
            self.judged_through = Some(seq);
            seq = seq.wrapping_add(1);
        }
    }

    fn judge(&mut self, arrived: bool, now: Duration) {
        self.judged += 1;
        self.judged_since_start += 1;
        let gone = if arrived {
            0.0
        } else {
            self.lost += 1;
            self.losing_until = Some(now + LOSS_MEMORY);
            1.0
        };
        let loss = self.loss.get_or_insert(0.0);
        *loss += (gone - *loss) / LOSS_WINDOW;
        if !self.broken && *loss > BREAK_LOSS {
            self.broken = true;
            self.breaks += 1;
        } else if self.broken && *loss < MEND_LOSS {
            self.broken = false;
        }
    }

    /// Whether input messages are covered now: the breaker is closed, and
    /// the uplink lost one lately, or too few were judged yet to tell (a
    /// new connection, or a server that sends no receipts) and snapshots
    /// are being lost: a lossy way down is the only hint then.
    pub(crate) fn active(&self, now: Duration, snapshots_lost: bool) -> bool {
        if self.broken {
            return false;
        }
        let uplink_lost = self.losing_until.is_some_and(|until| now < until);
        let measured = self.judged_since_start >= LOSS_WINDOW as u64;
        uplink_lost || (!measured && snapshots_lost)
    }

    /// The share of input messages lost lately, once receipts came.
    pub(crate) fn loss(&self) -> Option<f64> {
        self.loss
    }

    /// Whether the breaker is open (no cover under heavy loss).
    pub(crate) fn broken(&self) -> bool {
        self.broken
    }

    /// A new connection: numbers start again, nothing is judged yet; the
    /// counts stay.
    pub(crate) fn restart(&mut self) {
        *self = Cover {
            judged: self.judged,
            lost: self.lost,
            breaks: self.breaks,
            ..Cover::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt_of(arrived: impl IntoIterator<Item = u16>) -> Receipt {
        arrived
            .into_iter()
            .fold(None, |r, seq| Some(Receipt::note(r, seq)))
            .expect("at least one")
    }

    #[test]
    fn lost_messages_are_judged_once_behind_the_reorder_window() {
        let mut c = Cover::default();
        let sent: Vec<u16> = (0..40).map(|_| c.number()).collect();
        // 10 and 37 are lost (37 is too recent to judge yet).
        let arrived = sent.iter().copied().filter(|s| ![10, 37].contains(s));
        let now = Duration::from_secs(1);
        c.on_receipt(receipt_of(arrived), now);
        // 7 (32 before the newest) to 33 (6 behind it).
        assert_eq!((c.judged, c.lost), (27, 1));
        assert!(c.active(now, false));
        assert!(
            !c.active(now + LOSS_MEMORY, false),
            "the loss was forgotten"
        );
        // The same receipt again judges nothing twice.
        let again = receipt_of(sent.iter().copied().filter(|s| ![10, 37].contains(s)));
        c.on_receipt(again, now);
        assert_eq!((c.judged, c.lost), (27, 1));
    }

    #[test]
    fn heavy_loss_opens_the_breaker_and_light_loss_closes_it() {
        let mut c = Cover::default();
        let now = Duration::ZERO;
        let mut arrived = Vec::new();
        for i in 0..400u32 {
            let seq = c.number();
            // Half of them lost for the first 200, then none.
            if i >= 200 || i % 2 == 0 {
                arrived.push(seq);
            }
            if i % 8 == 7 {
                c.on_receipt(receipt_of(arrived.iter().copied()), now);
                arrived.retain(|s| seq.wrapping_sub(*s) < 32);
            }
            if i == 199 {
                assert!(c.broken(), "{c:?}");
                assert!(!c.active(now, true), "no cover while broken");
            }
        }
        assert!(!c.broken(), "{c:?}");
        assert_eq!(c.breaks, 1);
        assert!(c.loss().is_some_and(|l| l < MEND_LOSS));
    }

    #[test]
    fn until_the_uplink_is_measured_snapshot_loss_decides() {
        let mut c = Cover::default();
        let now = Duration::ZERO;
        assert!(c.active(now, true));
        assert!(!c.active(now, false));
        // A clean uplink, measured: no cover, whatever the way down does.
        let mut arrived = Vec::new();
        for _ in 0..100 {
            let seq = c.number();
            arrived.push(seq);
            arrived.retain(|s| seq.wrapping_sub(*s) < 32);
            c.on_receipt(receipt_of(arrived.iter().copied()), now);
        }
        assert_eq!(c.lost, 0);
        assert!(!c.active(now, true));
    }

    #[test]
    fn a_receipt_past_what_was_sent_judges_only_what_was_sent() {
        let mut c = Cover::default();
        for _ in 0..10 {
            c.number();
        }
        c.on_receipt(receipt_of([500]), Duration::ZERO);
        assert_eq!(c.lost, 0, "nothing it claims about unsent messages counts");
    }
}
