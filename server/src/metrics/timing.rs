//! The input clock's counters (protocol 2) in `/metrics`: the slack of
//! inputs in time, the lateness of late ones and rewind depth as
//! histograms, late and repeated inputs and clamped rewinds as counters,
//! summed over every room.
//!
//! No histogram observes a negative value, so every `_sum` only grows (a
//! Prometheus convention `rate` relies on): slack and lateness are two
//! histograms, not one that goes below zero.
//!
//! Each room adds what its world counted since its previous tick
//! ([`TimingMetrics::add`] with the world's running totals), so the numbers
//! survive rooms closing. One lock per room tick; a scrape takes it once.

use std::fmt::Write as _;
use std::sync::Mutex;

use skirmish_core::timing::{Buckets, MsHistogram};
use skirmish_core::{LatenessHistogram, RewindHistogram, SlackHistogram, WorldStats};

/// The clock's counters of every room.
#[derive(Debug, Default)]
pub struct TimingMetrics {
    totals: Mutex<Totals>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Totals {
    late: u64,
    repeated: u64,
    clamped: u64,
    clamped_rtt: u64,
    late_shots: u64,
    pushes: u64,
    slack: SlackHistogram,
    lateness: LatenessHistogram,
    rewind: RewindHistogram,
}

/// What one room counted so far, to add only what is new.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reported(Totals);

impl TimingMetrics {
    /// Adds what `stats` (a world's running totals) counted since
    /// `reported`, which is brought up to date.
    pub fn add(&self, stats: &WorldStats, reported: &mut Reported) {
        let now = Totals {
            late: stats.late_inputs,
            repeated: stats.repeated_inputs,
            clamped: stats.rewind_clamped,
            clamped_rtt: stats.rewind_clamped_rtt,
            late_shots: stats.late_actions_honoured,
            pushes: stats.pushes,
            slack: stats.slack,
            lateness: stats.lateness,
            rewind: stats.rewind,
        };
        let before = reported.0;
        if now == before {
            return;
        }
        let mut totals = self
            .totals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        totals.late += now.late.saturating_sub(before.late);
        totals.repeated += now.repeated.saturating_sub(before.repeated);
        totals.clamped += now.clamped.saturating_sub(before.clamped);
        totals.clamped_rtt += now.clamped_rtt.saturating_sub(before.clamped_rtt);
        totals.late_shots += now.late_shots.saturating_sub(before.late_shots);
        totals.pushes += now.pushes.saturating_sub(before.pushes);
        totals.slack.add(&now.slack.since(&before.slack));
        totals.lateness.add(&now.lateness.since(&before.lateness));
        totals.rewind.add(&now.rewind.since(&before.rewind));
        reported.0 = now;
    }

    /// Late inputs counted in all.
    pub fn late(&self) -> u64 {
        self.snapshot().late
    }

    /// Repeated inputs counted in all.
    pub fn repeated(&self) -> u64 {
        self.snapshot().repeated
    }

    fn snapshot(&self) -> Totals {
        *self
            .totals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Appends the Prometheus text of these counters to `out`.
    pub fn render(&self, out: &mut String) {
        let t = self.snapshot();
        for (name, help, value) in [
            (
                "skirmish_late_inputs_total",
                "Protocol-2 inputs that arrived after their tick (dropped).",
                t.late,
            ),
            (
                "skirmish_repeated_inputs_total",
                "Ticks simulated with a player's previous input because its own was missing.",
                t.repeated,
            ),
            (
                "skirmish_rewind_clamped_total",
                "Shots whose view was older than allowed (judged at the bound): max_rewind_ms, or the shooter's round trip bound.",
                t.clamped,
            ),
            (
                "skirmish_rewind_clamped_rtt_total",
                "Shots clamped by the shooter's measured round trip + 400 ms + 2 ticks (part of skirmish_rewind_clamped_total).",
                t.clamped_rtt,
            ),
            (
                "skirmish_late_shots_honoured_total",
                "Fire inputs that arrived late and fired once at the next tick.",
                t.late_shots,
            ),
            (
                "skirmish_player_pushes_total",
                "Pairs of players pushed apart for overlapping (each moves a player where its prediction did not).",
                t.pushes,
            ),
        ] {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {value}"
            );
        }
        histogram(
            out,
            "skirmish_input_slack_seconds",
            "How long before its tick each protocol-2 input in time arrived.",
            &t.slack,
        );
        histogram(
            out,
            "skirmish_input_lateness_seconds",
            "How long after its tick each late protocol-2 input arrived (it was dropped).",
            &t.lateness,
        );
        histogram(
            out,
            "skirmish_rewind_seconds",
            "How far back shots were judged (lag compensation).",
            &t.rewind,
        );
    }
}

/// A histogram of milliseconds, rendered cumulatively in seconds.
fn histogram<B: Buckets>(out: &mut String, name: &str, help: &str, h: &MsHistogram<B>) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
    let (counts, sum_ms) = (&h.counts, h.sum_ms);
    let mut running = 0;
    for (bound, count) in h.bounds().iter().zip(counts) {
        running += count;
        let le = f64::from(*bound) / 1000.0;
        let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {running}");
    }
    let n: u64 = counts.iter().sum();
    let _ = writeln!(
        out,
        "{name}_bucket{{le=\"+Inf\"}} {n}\n{name}_sum {}\n{name}_count {n}",
        sum_ms as f64 / 1000.0
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of `text` that start with `prefix`.
    fn lines<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
        text.lines().filter(|l| l.starts_with(prefix)).collect()
    }

    #[test]
    fn rooms_add_only_what_is_new_and_it_renders() {
        let metrics = TimingMetrics::default();
        let mut reported = Reported::default();
        let mut stats = WorldStats {
            late_inputs: 2,
            repeated_inputs: 3,
            ..WorldStats::default()
        };
        stats.slack.record(40);
        stats.lateness.record(20);
        metrics.add(&stats, &mut reported);
        metrics.add(&stats, &mut reported);
        assert_eq!((metrics.late(), metrics.repeated()), (2, 3));
        stats.late_inputs = 5;
        stats.slack.record(7);
        metrics.add(&stats, &mut reported);
        assert_eq!(metrics.late(), 5);
        let mut text = String::new();
        metrics.render(&mut text);
        assert!(text.contains("skirmish_late_inputs_total 5\n"), "{text}");
        assert_eq!(
            lines(&text, "skirmish_input_slack_seconds"),
            [
                "skirmish_input_slack_seconds_bucket{le=\"0.005\"} 0",
                "skirmish_input_slack_seconds_bucket{le=\"0.01\"} 1",
                "skirmish_input_slack_seconds_bucket{le=\"0.025\"} 1",
                "skirmish_input_slack_seconds_bucket{le=\"0.05\"} 2",
                "skirmish_input_slack_seconds_bucket{le=\"0.075\"} 2",
                "skirmish_input_slack_seconds_bucket{le=\"0.1\"} 2",
                "skirmish_input_slack_seconds_bucket{le=\"0.15\"} 2",
                "skirmish_input_slack_seconds_bucket{le=\"0.2\"} 2",
                "skirmish_input_slack_seconds_bucket{le=\"0.5\"} 2",
                "skirmish_input_slack_seconds_bucket{le=\"1\"} 2",
                "skirmish_input_slack_seconds_bucket{le=\"+Inf\"} 2",
                "skirmish_input_slack_seconds_sum 0.047",
                "skirmish_input_slack_seconds_count 2",
            ]
        );
        assert!(
            text.contains("skirmish_input_lateness_seconds_bucket{le=\"0.025\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("skirmish_input_lateness_seconds_sum 0.02\n"),
            "{text}"
        );
    }

    #[test]
    fn late_inputs_are_lateness_not_negative_slack() {
        // What a room's world counts for one input in time (30 ms early)
        // and one late (45 ms after its tick): see `core`'s schedule.
        let mut stats = WorldStats {
            late_inputs: 1,
            ..WorldStats::default()
        };
        stats.slack.record(30);
        stats.lateness.record(45);
        let metrics = TimingMetrics::default();
        metrics.add(&stats, &mut Reported::default());
        let mut text = String::new();
        metrics.render(&mut text);
        for name in [
            "skirmish_input_slack_seconds",
            "skirmish_input_lateness_seconds",
        ] {
            assert!(
                text.contains(&format!("# TYPE {name} histogram\n")),
                "{text}"
            );
            assert!(text.contains(&format!("{name}_count 1\n")), "{text}");
            // Every bound and the sum are non-negative: `_sum` never falls.
            for line in lines(&text, name) {
                assert!(!line.contains("le=\"-") && !line.contains(" -"), "{line}");
            }
        }
        assert!(text.contains("skirmish_input_slack_seconds_sum 0.03\n"));
        assert!(text.contains("skirmish_input_lateness_seconds_sum 0.045\n"));
        // As many late inputs counted as lateness observed.
        assert!(text.contains("skirmish_late_inputs_total 1\n"));
    }
}
