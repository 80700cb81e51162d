//! What goes up: the fixed steps that predict and send inputs, on the
//! schedule the pacing controller keeps (protocol 2), and the resend that
//! covers a lost input message without a larger margin.
//!
//! Every input message carries every unacknowledged input (the newest
//! [`MAX_INPUTS_PER_MESSAGE`]). Over datagrams each is numbered, and while
//! the server's receipts show a lost one within [`LOSS_MEMORY`] (`cover.rs`;
//! before any receipt, a gap in the snapshots), the same inputs are sent
//! again a quarter and half a step later (`SessionConfig::resends`): a lost
//! datagram then costs a quarter of a step, not a whole one, and three in a
//! row are needed to make an input wait for the next step's message. The
//! cost is the uplink bytes of two more messages per step, only while the
//! uplink loses, and none under heavy loss (the breaker of `cover.rs`).

use std::time::Duration;

use super::{ClientSession, SessionEvent, State};
use crate::client::conditioner::Delivery;
use crate::client::game::{ClientGame, Stepped};
use crate::client::pacing::Jump;
use crate::client::pending::PushError;
use crate::shared::game::Replicated;
use crate::shared::protocol::{ClientMessage, Encoding, MAX_INPUTS_PER_MESSAGE};
use crate::shared::tick::Tick;
use crate::shared::wired::Wired;

/// How long after the last sign of loss input messages are resent.
pub const LOSS_MEMORY: Duration = Duration::from_secs(10);

/// Fixed steps run in one frame at most, whatever the configuration
/// and the shell's clock say (a hostile recording's header may say a
/// frame lasts centuries). A usual configuration never gets near it: a
/// frame of the default [`SessionConfig::max_frame`] (250 ms) is 5
/// steps at the server's 50 ms cadence, and fewer than 400 at the
/// shortest cadence (1 ms) and the largest dilation. The time beyond
/// it is dropped, as the skipped steps beyond an hour are; the replay
/// runs the same code, so it still matches.
///
/// [`SessionConfig::max_frame`]: super::SessionConfig::max_frame
pub const MAX_STEPS_PER_FRAME: u32 = 1024;

/// Steps skipped in one frame at most: an hour at 50 ms.
const MAX_SKIPPED_STEPS: u32 = 72_000;

impl<G: ClientGame> ClientSession<G> {
    /// Fixed steps run in one frame at most: [`MAX_STEPS_PER_FRAME`].
    pub const MAX_STEPS_PER_FRAME: u32 = MAX_STEPS_PER_FRAME;

    /// Whether this session's inputs name server ticks (the server spoke
    /// protocol 2 in `welcome`).
    pub(super) fn scheduled(&self) -> bool {
        self.welcome().is_some_and(|w| w.protocol >= 2)
    }

    /// Runs the fixed steps `elapsed` of shell time allows: one per cadence
    /// in protocol 1, one per dilated period in protocol 2. At most
    /// [`SessionConfig::max_frame`](super::SessionConfig::max_frame) of
    /// steps run at once (a hidden tab); in protocol 2 the steps beyond it
    /// are skipped rather than lost, so the schedule stays on the server's
    /// clock (the server repeats those ticks) instead of falling behind.
    pub(super) fn run_steps(&mut self, elapsed: Duration, cadence: Duration) {
        let scheduled = self.scheduled();
        let max = self.config.max_frame;
        self.accumulator =
            self.accumulator
                .saturating_add(if scheduled { elapsed } else { elapsed.min(max) });
        if scheduled {
            self.pacing.frame(elapsed.min(max));
            let period = self.period.max(Duration::from_millis(1));
            // At most an hour of steps is skipped in one frame; a longer gap
            // (a tab hidden for hours, or a hostile recording's clock) is
            // dropped, so no frame's work is unbounded.
            let mut budget = MAX_SKIPPED_STEPS;
            while self.accumulator > max.saturating_add(period) {
                if budget == 0 {
                    self.accumulator = max.saturating_add(period);
                    break;
                }
                budget -= 1;
                self.accumulator -= period;
                self.pacing.stepped(cadence, period);
                if matches!(self.state, State::Playing(..)) {
                    self.next_tick = self.next_tick.next();
                    self.stats.steps_skipped += 1;
                }
            }
        }
        let mut budget = Self::MAX_STEPS_PER_FRAME;
        loop {
            let period = if scheduled { self.period } else { cadence };
            if self.accumulator < period {
                break;
            }
            if budget == 0 {
                // Only an absurd configuration gets here (a longest frame
                // of years, a period of nothing): drop the rest, so no
                // frame's work is unbounded.
                self.accumulator = Duration::ZERO;
                break;
            }
            budget -= 1;
            self.accumulator -= period;
            if scheduled {
                self.pacing.stepped(cadence, period);
            }
            self.fixed_step(cadence);
            if scheduled {
                self.period = self.pacing.step_period(cadence);
            }
        }
        if scheduled {
            self.resend_if_due();
        }
    }

    /// Whether input messages are resent now: over datagrams (over a
    /// stream a resend can never overtake the original), while the uplink
    /// lost a message lately and its loss is not heavy (`cover.rs`).
    fn loss_active(&self) -> bool {
        let now = self.now();
        self.up.delivery() == Delivery::Datagrams
            && self
                .cover
                .active(now, self.losing_until.is_some_and(|until| now < until))
    }

    /// The first input tick of a protocol-2 session: the server's tick by
    /// the clock, plus the round trip and two ticks, so that it errs early
    /// and the first timing reports hold the schedule back (nothing
    /// repeated) rather than skip it forward. `None` until the first pong
    /// (one round trip after joining): no input is made before, so none
    /// can be late.
    fn first_scheduled_tick(&self, cadence: Duration) -> Option<Tick> {
        let server = self.clock.server_ticks(self.now())?.max(0.0);
        let rtt = self.clock.rtt()?;
        let lead = rtt.as_secs_f64() / cadence.as_secs_f64().max(1e-6) + 2.0;
        Some(Tick(
            (server + lead).ceil().min(f64::from(u32::MAX - 1)) as u32
        ))
    }

    fn fixed_step(&mut self, cadence: Duration) {
        let now = self.now();
        let view_tick = self.remote_time();
        let alive = self
            .welcome()
            .and_then(|w| self.authority.get(w.id))
            .is_some_and(Replicated::alive);
        if !matches!(self.state, State::Playing(..)) {
            return;
        }
        if self.scheduled() && !self.schedule_started {
            match self.first_scheduled_tick(cadence) {
                Some(first) => {
                    self.next_tick = first;
                    self.schedule_started = true;
                }
                None => return,
            }
        }
        match self.pacing.take_jump().filter(|_| self.scheduled()) {
            Some(Jump::Forward(n)) => {
                self.next_tick = self.next_tick.saturating_add(n);
            }
            Some(Jump::Hold(n)) => self.hold += n,
            None => {}
        }
        if self.hold > 0 {
            self.hold -= 1;
            return;
        }
        let interpolation = self.interpolation();
        let State::Playing(welcome, local) = &mut self.state else {
            return;
        };
        self.next_tick = self.next_tick.next();
        let tick = self.next_tick;
        let input = G::input(&mut self.game, &self.controls, alive, tick);
        let predicted = match local.step(tick, input, view_tick) {
            Ok(predicted) => predicted,
            Err(PushError::Full { .. }) => {
                self.stats.inputs_refused += 1;
                return;
            }
            Err(PushError::NotIncreasing { .. }) => return,
        };
        let acted = G::stepped(
            &mut self.game,
            &Stepped {
                tick,
                input: &G::sanitize(input),
                predicted: &predicted,
                setup: &welcome.setup,
                now,
                view_tick,
                me: welcome.id,
                authority: &self.authority,
                remotes: &self.remotes,
                interpolation,
            },
        );
        if let Some(view) = view_tick.filter(|_| acted) {
            self.last_rewind = Some(Duration::from_secs_f64(
                ((f64::from(tick.0) - view) * cadence.as_secs_f64()).max(0.0),
            ));
        }
        self.stats.inputs += 1;
        self.send_inputs(now);
        // The step ran this long after it was due (a frame boundary, a
        // hitch): what is still in the accumulator.
        self.pacing.on_sent(tick, self.accumulator);
        self.resends_left = if self.scheduled() && self.loss_active() {
            self.config.resends
        } else {
            0
        };
        self.resend_at = (self.resends_left > 0).then(|| now + self.period / 4);
        self.acks.made(tick, now);
        self.push_event(SessionEvent::StepPredicted { tick, acted });
    }

    /// Sends every unacknowledged input (the newest
    /// [`MAX_INPUTS_PER_MESSAGE`]) with the snapshot acknowledgement.
    fn send_inputs(&mut self, now: Duration) {
        let Some(local) = self.local() else {
            return;
        };
        let pending = local.pending();
        let skip = pending.len().saturating_sub(MAX_INPUTS_PER_MESSAGE);
        let inputs: Vec<G::Wire> = pending
            .iter()
            .skip(skip)
            .map(|step| G::Wire::of(step.tick, step.input, step.view_tick))
            .collect();
        if inputs.is_empty() {
            return;
        }
        self.stats.input_messages += 1;
        // Numbered over datagrams, so the server can say which arrived.
        let seq = (self.up.delivery() == Delivery::Datagrams).then(|| self.cover.number());
        self.up.send(
            now,
            ClientMessage::Input {
                seq,
                inputs,
                // A compact client acknowledges the newest baseline it
                // keeps (deltas are coded against it); a JSON client the
                // newest snapshot, which only measures its round trip.
                snapshot_ack: match self.config.encoding {
                    Encoding::Compact => self.baselines.ack(),
                    Encoding::Json => self.last_snapshot,
                },
            },
        );
    }

    fn resend_if_due(&mut self) {
        let now = self.now();
        if let Some(at) = self.resend_at.filter(|at| now >= *at) {
            self.resends_left = self.resends_left.saturating_sub(1);
            self.resend_at = (self.resends_left > 0).then(|| at + self.period / 4);
            self.stats.resends += 1;
            self.send_inputs(now);
        }
    }
}
