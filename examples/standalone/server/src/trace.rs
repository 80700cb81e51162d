//! `drift-trace SEED STEPS`: the running hash after each of `STEPS` seeded
//! steps of drift from `SEED`, one hex number a line, as the library's
//! determinism check computes it natively; a page's
//! `skirmish.determinism(SEED, STEPS)` must give the same numbers.

use std::process::ExitCode;

use skirmish_core::trace;
use skirmish_drift::Drift;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [seed, steps] => seed.parse::<u64>().ok().zip(steps.parse::<u32>().ok()),
        _ => None,
    };
    let Some((seed, steps)) = parsed else {
        eprintln!("usage: drift-trace SEED STEPS (two whole numbers)");
        return ExitCode::from(2);
    };
    for hash in trace::<Drift>(seed, steps.min(1_000_000)) {
        println!("{hash:016x}");
    }
    ExitCode::SUCCESS
}
