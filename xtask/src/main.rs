//! Project automation: `cargo xtask run | test | bench`.
//!
//! Every command first installs what a fresh machine lacks (the wasm32
//! target, Chromium and chromedriver, protoc, binaryen's wasm-opt, wasm-bindgen-cli at the
//! version in `Cargo.lock`, wasm-pack), one line per install, and skips what is there.
//! It only uses the standard library so that it builds in seconds.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

mod bench;
mod games;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  run     build the wasm client (release), start the server, print the URL
          (extra arguments after `--` go to the server)
  test    everything CI checks: fmt, clippy (native and wasm32), tests,
          the Agones contract test, browser tests in headless Chromium, docs
  bench   criterion benchmarks, the input clock's scenario matrix and the
          main cell over real UDP (docs/QUALITY.md), then load runs of bots
          against the real server, written into docs/BENCHMARKS.md
          (`--quick` for short runs, `--soak SECONDS` for the memory run;
          default 300; `--quality` for docs/QUALITY.md alone)
  scale [--quick] [--players 100,250,500,1000] [--threads N] [--no-write]
          one blobs room of each size (10 pellets per player) over real
          sockets with light bots, beside the floor sending the same bytes;
          the table goes into docs/BENCHMARKS.md (60 s windows, 20 with
          `--quick`)
  quality [--game NAME] [--quick]
          a game's quality table and plots (docs/QUALITY.md, docs/quality/):
          the stepper's scenario matrix, then the main cells over real UDP
          through the relay (the same as `bench --quality`); the games are
          those listed in games/list/src/lib.rs (docs/quality/GAME.md)
  new-game NAME
          write a game crate, games/NAME (rules with a unit test, the
          harness's side and test, its page crate), and list it: it builds,
          plays at /NAME/ and gets its quality table with no other edit
  relay [--addr HOST:PORT] [--relay-latency-ms MS] [--relay-jitter-ms MS]
        [--relay-loss P] [--seconds S]
          a UDP impairment relay in front of a running server's WebTransport
          (default: the main cell, 75 ms ± 30 ms and 5 % loss each way, to
          127.0.0.1:8080, for an hour); prints the page's URL through it
          (`/?wt-port=`); Ctrl-C stops it
  replay FILE [--until FRAME] [--svg OUT] [--with-room ROOM]
          replay a client recording natively and check it frame by frame;
          prints a summary and writes a timeline (SVG) beside the file;
          with the server's recording of its room, checks the two agree
  replay-room FILE
          replay a server room's recording (`--record DIR`) tick by tick
  setup   only install what is missing";

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") => run(&args[1..]),
        Some("test") => test(),
        Some("bench") => bench::run(&args[1..]),
        Some("scale") => bench::scale::run(&args[1..]),
        Some("setup") => setup(),
        Some("relay") => relay(&args[1..]),
        Some("quality") => quality(&args[1..]),
        Some("replay") => replay(&args[1..], false),
        Some("replay-room") => replay(&args[1..], true),
        Some("new-game") => match &args[1..] {
            [name] => games::new_game(name),
            _ => Err(format!("new-game takes one NAME\n\n{USAGE}")),
        },
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command `{other}`\n\n{USAGE}")),
        None => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

type Result<T = ()> = std::result::Result<T, String>;

/// `quality [--game NAME] [--quick]`.
fn quality(args: &[String]) -> Result {
    let listed = games::list()?;
    let mut game = listed[0].name.as_str();
    let mut quick = false;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--game" => {
                game = args
                    .next()
                    .ok_or_else(|| format!("--game needs a name ({})", games::names(&listed)))?;
            }
            "--quick" => quick = true,
            other => {
                return Err(format!(
                    "quality: unknown argument `{other}` (expected `--game NAME` or `--quick`)"
                ))
            }
        }
    }
    let game = games::find(game).map_err(|e| format!("quality: {e}"))?;
    // The first game's page has the whole scenario matrix; the others
    // their main cell, in the stepper and through the relay.
    if game == listed[0] {
        return bench::quality::run(quick);
    }
    bench::quality::run_game(&game.name, quick)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The binaryen release whose `wasm-opt` optimises the client.
const BINARYEN: &str = "132.0.0";

/// A well-known protobuf type that Debian's `libprotobuf-dev` installs.
const PROTOBUF_INCLUDE: &str = "/usr/include/google/protobuf/descriptor.proto";

/// Debian's Prometheus (2.42), which the dashboard test starts to evaluate
/// every panel's query.
const PROMETHEUS: &str = "/usr/bin/prometheus";

/// Where project-local tools are installed.
fn tools_dir() -> PathBuf {
    bench::target_dir().join("tools")
}

/// The folder of project-local tool binaries.
fn tools_bin() -> PathBuf {
    tools_dir().join("node_modules").join(".bin")
}

/// `PATH` with the project-local tools first, for wasm-pack to find wasm-opt.
fn tool_path() -> String {
    let mut paths = vec![tools_bin()];
    if let Some(path) = env::var_os("PATH") {
        paths.extend(env::split_paths(&path));
    }
    env::join_paths(paths).map_or_else(
        |_| env::var("PATH").unwrap_or_default(),
        |p| p.to_string_lossy().to_string(),
    )
}

fn cargo() -> String {
    env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

/// Runs a command in the project root, echoing it first.
fn sh(program: &str, args: &[&str], envs: &[(&str, &str)]) -> Result {
    println!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .env("PATH", tool_path())
        .envs(envs.iter().copied())
        .current_dir(root())
        .status()
        .map_err(|e| format!("could not start `{program}`: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

/// The first line a command prints, if it runs at all.
fn probe(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn on_path(program: &str) -> bool {
    env::var_os("PATH")
        .is_some_and(|paths| env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// The version of `package` that `Cargo.lock` pins.
fn locked_version(package: &str) -> Result<String> {
    let lock = fs::read_to_string(root().join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let needle = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == needle {
            if let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
            {
                return Ok(v.trim_matches('"').to_string());
            }
        }
    }
    Err(format!("{package} is not in Cargo.lock"))
}

fn setup() -> Result {
    let started = Instant::now();
    let installed = probe("rustup", &["target", "list", "--installed"]).unwrap_or_default();
    if installed
        .lines()
        .any(|l| l.trim() == "wasm32-unknown-unknown")
    {
        println!("setup: wasm32-unknown-unknown target present");
    } else {
        println!("setup: installing the wasm32-unknown-unknown target (rustup)");
        sh("rustup", &["target", "add", "wasm32-unknown-unknown"], &[])?;
    }

    let mut debs = Vec::new();
    if !on_path("chromium") {
        debs.push("chromium");
    }
    if !on_path("chromedriver") {
        debs.push("chromium-driver");
    }
    if !on_path("node") || !on_path("npm") {
        debs.extend(["nodejs", "npm"]);
    }
    // The server's `agones` feature (gRPC) compiles protos: protoc and the
    // well-known types it imports.
    if !on_path("protoc") || !Path::new(PROTOBUF_INCLUDE).is_file() {
        debs.extend(["protobuf-compiler", "libprotobuf-dev"]);
    }
    // The dashboard test (tests/tests/dashboard.rs) runs Debian's Prometheus
    // binary itself; the service the package may start is not used.
    if !Path::new(PROMETHEUS).is_file() {
        debs.push("prometheus");
    }
    if debs.is_empty() {
        println!("setup: chromium, chromedriver, node, protoc and prometheus present");
    } else {
        println!(
            "setup: installing {} from Debian's packages (apt-get, about a minute)",
            debs.join(", ")
        );
        sh("apt-get", &["update", "-qq"], &[])?;
        let mut args = vec!["install", "-y", "-qq", "--no-install-recommends"];
        args.extend(&debs);
        sh("apt-get", &args, &[("DEBIAN_FRONTEND", "noninteractive")])?;
    }

    let wasm_opt = tools_bin().join("wasm-opt");
    if wasm_opt.is_file() {
        println!("setup: wasm-opt (binaryen {BINARYEN} from npm) present");
    } else {
        // Debian's binaryen 108 breaks wasm-bindgen's reference-types output
        // (the page fails with a WebAssembly.Table.set TypeError).
        println!("setup: installing wasm-opt (binaryen {BINARYEN} from npm) into target/tools");
        let prefix = tools_dir();
        fs::create_dir_all(&prefix)
            .map_err(|e| format!("cannot create {}: {e}", prefix.display()))?;
        let prefix = prefix.to_string_lossy().to_string();
        sh(
            "npm",
            &[
                "install",
                "--prefix",
                &prefix,
                "--no-audit",
                "--no-fund",
                "--silent",
                &format!("binaryen@{BINARYEN}"),
            ],
            &[],
        )?;
    }

    let want = locked_version("wasm-bindgen")?;
    let have = probe("wasm-bindgen", &["--version"]).unwrap_or_default();
    if have.split_whitespace().nth(1) == Some(want.as_str()) {
        println!("setup: wasm-bindgen-cli {want} present");
    } else {
        println!("setup: installing wasm-bindgen-cli {want} to match Cargo.lock (cargo install, about 2.5 minutes)");
        // Without --locked: the registry mirror may lack the exact versions in
        // the CLI's own lock file.
        sh(
            &cargo(),
            &["install", "wasm-bindgen-cli", "--version", &want],
            &[],
        )?;
    }

    if probe("wasm-pack", &["--version"]).is_some() {
        println!("setup: wasm-pack present");
    } else {
        println!("setup: installing wasm-pack (cargo install, about 2 minutes)");
        sh(&cargo(), &["install", "wasm-pack"], &[])?;
    }
    println!("setup: done in {:.0?}", started.elapsed());
    Ok(())
}

/// One step of `cargo xtask test`: a name and the command it runs.
struct Step {
    name: &'static str,
    program: String,
    args: Vec<&'static str>,
    envs: Vec<(&'static str, &'static str)>,
}

fn step(name: &'static str, program: &str, args: &[&'static str]) -> Step {
    Step {
        name,
        program: program.to_string(),
        args: args.to_vec(),
        envs: Vec::new(),
    }
}

/// A clippy step over `args`, warnings denied.
fn clippy(name: &'static str, cargo: &str, args: &[&'static str]) -> Step {
    let mut all = vec!["clippy"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--", "-D", "warnings"]);
    step(name, cargo, &all)
}

/// `-p skirmish-GAME-page` for every listed game.
fn page_packages(listed: &[games::Listed]) -> Vec<&'static str> {
    listed
        .iter()
        .flat_map(|game| ["-p", leak(format!("skirmish-{}-page", game.name))])
        .collect()
}

/// A string that lives as long as xtask, a short-lived process.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The static checks: format, then clippy over every target `xtask test`
/// builds.
fn checks(cargo: &str, listed: &[games::Listed]) -> Vec<Step> {
    let mut wasm = vec![
        "-p",
        "skirmish-core",
        "-p",
        "skirmish-tanks",
        "-p",
        "skirmish-client",
    ];
    wasm.extend(page_packages(listed));
    wasm.extend(["--lib", "--tests", "--target", "wasm32-unknown-unknown"]);
    vec![
        step("format", cargo, &["fmt", "--all", "--check"]),
        clippy("clippy (native)", cargo, &["--workspace", "--all-targets"]),
        clippy(
            "clippy (wasm32: core, the tank game, the page shell and every game's page)",
            cargo,
            &wasm,
        ),
        clippy(
            "clippy (wasm32: core and the tank game without json, as the page builds them)",
            cargo,
            &[
                "-p",
                "skirmish-core",
                "-p",
                "skirmish-tanks",
                "--no-default-features",
                "--lib",
                "--target",
                "wasm32-unknown-unknown",
            ],
        ),
        clippy(
            "clippy (server with the agones feature)",
            cargo,
            &[
                "-p",
                "skirmish-server",
                "--features",
                "agones,test-hooks",
                "--all-targets",
            ],
        ),
    ]
}

fn test() -> Result {
    setup()?;
    let cargo = cargo();
    let listed = games::list()?;
    let mut steps = checks(&cargo, &listed);
    // The end-to-end tests serve web/ and need every game's bundle there.
    steps.extend(listed.iter().map(|game| {
        let name = format!(
            "the page of {} into {}",
            game.name,
            game.bundle_dir().display()
        );
        step(leak(name), "wasm-pack", &page_build(game))
    }));
    let mut page_tests = vec!["test", "-p", "skirmish-client"];
    page_tests.extend(page_packages(&listed));
    page_tests.push("--lib");
    steps.extend([
        // Each game's page has unit tests of its own (keys, pointer).
        step(
            "the page shell and the pages of every game (unit tests)",
            &cargo,
            &page_tests,
        ),
    ]);
    // Every game's page tests in headless Chromium: the whole game's sync
    // test as natively, and what else its page tests.
    steps.extend(listed.iter().map(|game| {
        let name = format!(
            "browser tests of the page of {} (headless Chromium)",
            game.name
        );
        let dir = format!("games/{}/page", game.name);
        step(
            leak(name),
            "wasm-pack",
            &["test", "--headless", "--chrome", leak(dir)],
        )
    }));
    steps.extend(standalone(&cargo));
    steps.extend([
        step("tests", &cargo, &["test", "--workspace"]),
        step(
            "Agones contract (server with the agones feature, fake SDK sidecar)",
            &cargo,
            &[
                "test",
                "-p",
                "skirmish-server",
                "--features",
                "agones,test-hooks",
                "--test",
                "agones",
            ],
        ),
        // Ready to be depended on: metadata, license files, a README and
        // no path-only dependency (the packaged crate is built alone).
        step(
            "package skirmish-core",
            &cargo,
            &["package", "-p", "skirmish-core", "--allow-dirty"],
        ),
        Step {
            envs: vec![("RUSTDOCFLAGS", "-D warnings")],
            ..step("docs", &cargo, &["doc", "--workspace", "--no-deps"])
        },
    ]);
    // A fresh CI checkout builds everything once: incremental caches
    // would only take disk (they were a third of `target/`).
    if env::var_os("CI").is_some() {
        for s in &mut steps {
            s.envs.push(("CARGO_INCREMENTAL", "0"));
        }
    }
    let total = steps.len();
    for (i, s) in steps.iter().enumerate() {
        let started = Instant::now();
        println!("\n==> [{}/{total}] {}", i + 1, s.name);
        sh(&s.program, &s.args, &s.envs).map_err(|e| format!("step `{}` failed: {e}", s.name))?;
        println!("==> {}: ok in {:.1?}", s.name, started.elapsed());
    }
    println!("\nxtask test: all {total} steps passed");
    Ok(())
}

/// A game outside the workspace, built from its own folder as a user's
/// repository would be (`examples/standalone/`, its own workspace over the
/// Skirmish crates by path): format, its tests (rules, the harness's main
/// cell), its binaries and its page (which `tests/tests/standalone.rs`
/// serves and plays in headless Chromium), and its quality table. It
/// builds in the one target folder, so what it shares with the workspace
/// is built once.
fn standalone(cargo: &str) -> Vec<Step> {
    let manifest = "examples/standalone/Cargo.toml";
    let target = leak(bench::target_dir().display().to_string());
    let envs = vec![("CARGO_TARGET_DIR", target)];
    let with_target = |s: Step| Step {
        envs: envs.clone(),
        ..s
    };
    vec![
        step(
            "examples/standalone: format",
            cargo,
            &["fmt", "--manifest-path", manifest, "--all", "--check"],
        ),
        with_target(step(
            "examples/standalone: its tests (rules, the main cell's budget)",
            cargo,
            &["test", "--manifest-path", manifest],
        )),
        with_target(step(
            "examples/standalone: its server and replayer",
            cargo,
            &["build", "--manifest-path", manifest, "--bins"],
        )),
        with_target(step(
            "examples/standalone: its page into examples/standalone/web/pkg",
            "wasm-pack",
            &wasm_pack_build("examples/standalone/drift/page", "../../web/pkg"),
        )),
        with_target(step(
            "examples/standalone: its quality table (drift/quality/drift.md)",
            cargo,
            &[
                "run",
                "--quiet",
                "--manifest-path",
                manifest,
                "-p",
                "skirmish-drift",
                "--example",
                "quality",
            ],
        )),
    ]
}

/// `wasm-pack` arguments that build `game`'s page crate,
/// `games/GAME/page` (the size-focused `wasm-release` profile, then
/// `wasm-opt -Oz`), into its bundle folder (`web/pkg` for the game at the
/// root, `web/PATH/pkg` for the others; `--out-dir` is relative to the
/// crate), its files named `skirmish_client*` whatever the crate, as
/// `web/index.html` loads them.
fn page_build(game: &games::Listed) -> Vec<&'static str> {
    wasm_pack_build(
        leak(format!("games/{}/page", game.name)),
        leak(format!("../../../{}", game.bundle_dir().display())),
    )
}

/// `wasm-pack` arguments that build the page crate at `dir` into `out`
/// (relative to the crate) as `skirmish_client*`, size first.
fn wasm_pack_build(dir: &'static str, out: &'static str) -> Vec<&'static str> {
    vec![
        "build",
        dir,
        "--profile",
        "wasm-release",
        "--target",
        "web",
        "--no-typescript",
        "--no-pack",
        "--out-name",
        "skirmish_client",
        "--out-dir",
        out,
    ]
}

fn build_client() -> Result {
    for game in games::list()? {
        println!(
            "==> building {}'s page (wasm-release profile, wasm-opt -Oz) into {}",
            game.name,
            game.bundle_dir().display()
        );
        sh("wasm-pack", &page_build(&game), &[])?;
    }
    Ok(())
}

/// `replay` and `replay-room`: the release `replay` binary (built on first
/// use, about two minutes) on the given file.
fn replay(args: &[String], room: bool) -> Result {
    if args.is_empty() {
        return Err(format!("a recording to replay is missing\n\n{USAGE}"));
    }
    let cargo = cargo();
    let mut all = vec![
        "run",
        "--quiet",
        "--release",
        "-p",
        "skirmish-tests",
        "--bin",
        "replay",
        "--",
    ];
    if room {
        all.push("--room");
    }
    // The binary runs from the workspace's root: paths are made absolute
    // from where xtask was started (numbers, such as `--until`'s, stay).
    let here = env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if a.starts_with('-') || a.parse::<u64>().is_ok() {
                a.clone()
            } else {
                here.join(a).display().to_string()
            }
        })
        .collect();
    all.extend(args.iter().map(String::as_str));
    println!("$ {cargo} {}", all.join(" "));
    let status = Command::new(&cargo)
        .args(&all)
        .current_dir(root())
        .status()
        .map_err(|e| format!("could not start `{cargo}`: {e}"))?;
    // The replay's own exit status (1: a difference, 2: an unreadable
    // file) is the answer; it has said why.
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => std::process::exit(code),
        None => Err(format!("the replay was stopped ({status})")),
    }
}

/// `cargo xtask relay`: the bots binary's relay alone, with the main
/// cell's impairment unless the arguments say otherwise (later flags win).
fn relay(extra: &[String]) -> Result {
    let cargo = cargo();
    let mut args = vec![
        "run",
        "--release",
        "-p",
        "skirmish-tests",
        "--bin",
        "bots",
        "--",
        "--relay-only",
        "--transport",
        "webtransport",
        "--addr",
        "127.0.0.1:8080",
        "--relay-latency-ms",
        "75",
        "--relay-jitter-ms",
        "30",
        "--relay-loss",
        "0.05",
        "--seconds",
        "3600",
    ];
    args.extend(extra.iter().skip_while(|a| *a == "--").map(String::as_str));
    println!("==> building and starting the relay (about a minute the first time)");
    sh(&cargo, &args, &[])
}

fn run(server_args: &[String]) -> Result {
    setup()?;
    build_client()?;
    let cargo = cargo();
    let mut args = vec!["run", "--release", "-p", "skirmish-server", "--"];
    args.extend(
        server_args
            .iter()
            .skip_while(|a| *a == "--")
            .map(String::as_str),
    );
    println!("==> starting the server (it prints the URL; Ctrl-C stops it)");
    sh(&cargo, &args, &[])
}
