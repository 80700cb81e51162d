//! Checks of the project's own habits, run with the other tests.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace root")
        .to_path_buf()
}

/// Every `.rs` file of the workspace, as (path relative to the root, text).
fn rust_files() -> Vec<(String, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() && name != "target" && name != "pkg" && name != "node_modules" {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let root = root();
    let mut paths = Vec::new();
    for crate_dir in [
        "core",
        "games",
        "wasm-client",
        "server",
        "harness",
        "tests",
        "xtask",
        "examples",
    ] {
        walk(&root.join(crate_dir), &mut paths);
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = fs::read_to_string(&p).expect("source files are UTF-8");
            let rel = p
                .strip_prefix(&root)
                .expect("walked below the root")
                .to_string_lossy()
                .replace('\\', "/");
            (rel, text)
        })
        .collect()
}

#[test]
fn every_rust_file_starts_with_a_doc_comment() {
    let missing: Vec<_> = rust_files()
        .into_iter()
        .filter(|(_, text)| !text.starts_with("//!"))
        .map(|(path, _)| path)
        .collect();
    assert!(
        missing.is_empty(),
        "files without a leading `//!` line: {missing:?}"
    );
}

#[test]
fn rs7_movement_code_lives_only_in_the_library_and_the_games() {
    let forbidden = [
        ".sin()",
        ".cos()",
        "sinf(",
        "cosf(",
        "sin_cos(",
        "fn substep",
        "fn simulate",
    ];
    let offenders: Vec<_> = rust_files()
        .into_iter()
        .filter(|(path, _)| {
            !path.starts_with("core/") && !path.starts_with("games/") && !path.ends_with("tidy.rs")
        })
        .flat_map(|(path, text)| {
            forbidden
                .iter()
                .filter(|f| text.contains(*f))
                .map(|f| format!("{path}: {f}"))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "movement math outside the library and the games (call the game's step): {offenders:?}"
    );
}

#[test]
fn no_ignored_tests() {
    let attribute = ["#[", "ignore]"].concat();
    let offenders: Vec<_> = rust_files()
        .into_iter()
        .filter(|(_, text)| text.contains(&attribute))
        .map(|(path, _)| path)
        .collect();
    assert!(offenders.is_empty(), "ignored tests in {offenders:?}");
}

/// Every test that `docs/SPEC_COVERAGE.md` names exists, and every scenario
/// ID of the seeds has a row.
#[test]
fn spec_coverage_names_tests_that_exist() {
    let root = root();
    let coverage = fs::read_to_string(root.join("docs/SPEC_COVERAGE.md"))
        .expect("docs/SPEC_COVERAGE.md exists");
    let mut ids = Vec::new();
    let mut problems = Vec::new();
    for line in coverage.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(id), Some(tests)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        if !id.contains('-') || *id == "ID" {
            continue;
        }
        ids.push((*id).to_string());
        for name in tests.split(',').map(|t| t.trim().trim_matches('`')) {
            let Some((file, path)) = name.split_once("::") else {
                continue; // "not covered yet" rows name no test
            };
            let func = path.rsplit("::").next().unwrap_or(path);
            match fs::read_to_string(root.join(file)) {
                Ok(text) if text.contains(&format!("fn {func}(")) => {}
                Ok(_) => problems.push(format!("{id}: no `fn {func}` in {file}")),
                Err(_) => problems.push(format!("{id}: no file {file}")),
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");

    // The seeds sit beside the checkout; compare the IDs when they are there.
    if let Ok(seeds) = fs::read_to_string(root.join("../shared/seeds/README.md")) {
        let missing: Vec<_> = seeds
            .lines()
            .filter_map(|l| l.strip_prefix("| "))
            .filter_map(|l| l.split(' ').next())
            .filter(|id| id.contains('-') && id.chars().next().is_some_and(char::is_uppercase))
            .filter(|id| !ids.iter().any(|known| known == id))
            .collect();
        assert!(
            missing.is_empty(),
            "scenario IDs without a row: {missing:?}"
        );
    }
}

/// What a client is told is decided by core's `Room` only: the server and
/// the stepper carry its frames and never build `welcome`, `roster` or
/// `snapshot` messages (or compact snapshot frames) themselves.
#[test]
fn only_the_room_builds_what_clients_are_told() {
    let built_elsewhere = [
        ["ServerMessage::", "Welcome {"].concat(),
        ["ServerMessage::", "Roster {"].concat(),
        ["ServerMessage::", "Snapshot {"].concat(),
        ["ServerMessage::", "Pong {"].concat(),
        ["ServerMessage::", "Combat {"].concat(),
        ["compact::", "encode"].concat(),
    ];
    let shells: Vec<_> = rust_files()
        .into_iter()
        .filter(|(path, _)| path.starts_with("server/") || path == "tests/src/stepper.rs")
        .collect();
    assert!(
        shells.iter().any(|(path, _)| path == "server/src/rooms.rs"),
        "the walk finds the server"
    );
    let offenders: Vec<_> = shells
        .iter()
        .flat_map(|(path, text)| {
            built_elsewhere
                .iter()
                .filter(|pattern| text.contains(pattern.as_str()))
                .map(move |pattern| format!("{path}: {pattern}"))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "take these from the library's Room instead: {offenders:?}"
    );
}

/// Core is grouped by the side that runs it, and imports only point down:
/// `shared` uses neither side, and `client` and `server` never use each
/// other; `stepped` and `sync` (what the harness needs of a game, and the
/// whole-game sync test) sit above both, and neither side uses them.
/// Inside core, code names its dependencies by their home
/// (`crate::shared::...`), not through the crate root's flat re-exports,
/// so that this check sees every edge.
#[test]
fn core_imports_point_down() {
    let mut offenders = Vec::new();
    for (path, text) in rust_files() {
        let Some(inside) = path.strip_prefix("core/src/") else {
            continue;
        };
        let side = inside.split(['/', '.']).next().unwrap_or_default();
        let forbidden: &[&str] = match side {
            "shared" => &[
                "crate::client",
                "crate::server",
                "crate::stepped",
                "crate::sync",
                "crate::tanks",
            ],
            "client" => &["crate::server", "crate::stepped", "crate::sync"],
            "server" => &["crate::client", "crate::stepped", "crate::sync"],
            _ => &[],
        };
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            let flat = code.starts_with("use crate::")
                && ![
                    "use crate::shared",
                    "use crate::client",
                    "use crate::server",
                    "use crate::stepped",
                    "use crate::tanks",
                ]
                .iter()
                .any(|home| code.starts_with(home));
            if forbidden.iter().any(|f| code.contains(f)) || (side != "lib" && flat) {
                offenders.push(format!("{path}:{}: {code}", n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "imports that point up or sideways, or through the crate root:\n{}",
        offenders.join("\n")
    );
}

/// The server is a library that names no game: only the repository's
/// binary (`main.rs`, over the list in `skirmish-games`) and the shell's
/// own unit tests (`tests.rs`) do, and its manifest's dependencies name
/// no game crate (the binary's list is an optional dependency).
#[test]
fn the_server_shell_names_no_game() {
    let game_words = [
        "skirmish_tanks",
        "Tanks",
        "TankSettings",
        "SimConfig",
        "WireInput",
        "skirmish_walkers",
        "Walkers",
        "skirmish_blobs",
        "Blobs",
    ];
    let mut offenders = Vec::new();
    let files = rust_files();
    let server: Vec<_> = files
        .iter()
        .filter(|(path, _)| path.starts_with("server/src/"))
        // The repository's binary hosts the listed games; the shell's own
        // unit tests play the tank game.
        .filter(|(path, _)| path != "server/src/main.rs" && !path.ends_with("/tests.rs"))
        .collect();
    assert!(server.len() > 20, "the walk finds the server");
    let manifest = fs::read_to_string(root().join("server/Cargo.toml")).expect("the manifest");
    let dependencies = manifest
        .split_once("[dependencies]")
        .and_then(|(_, rest)| rest.split_once("\n["))
        .map_or("", |(deps, _)| deps);
    for game in ["skirmish-tanks", "skirmish-walkers", "skirmish-blobs"] {
        if dependencies.contains(game) {
            offenders.push(format!("server/Cargo.toml: depends on {game}"));
        }
    }
    for (path, text) in server {
        for (n, line) in text.lines().enumerate() {
            let words = line
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| game_words.contains(w));
            for word in words {
                offenders.push(format!("{path}:{}: `{word}`", n + 1));
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// The server's layers, lowest first: a file may import only from layers
/// below its own (or from inside its own module).
const SERVER_LAYERS: [&str; 13] = [
    "game",
    "config",
    "metrics",
    "limits",
    "shutdown",
    "rooms",
    "app",
    "session",
    "transport",
    "http",
    "server",
    "agones",
    "serve",
];

/// What `crate::…` paths in `text` name, with their line numbers (comments
/// left out).
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let path: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            found.push((n + 1, path));
            rest = after;
        }
    }
    found
}

#[test]
fn server_imports_point_down() {
    let mut offenders = Vec::new();
    for (path, text) in rust_files() {
        let Some(inside) = path.strip_prefix("server/src/") else {
            continue;
        };
        let module = inside.split(['/', '.']).next().unwrap_or_default();
        let Some(rank) = SERVER_LAYERS.iter().position(|m| *m == module) else {
            continue;
        };
        let transport = inside
            .strip_prefix("transport/")
            .and_then(|t| t.split(['/', '.']).next());
        for (line, used) in crate_paths(&text) {
            let target = used.split("::").next().unwrap_or_default();
            let target_rank = SERVER_LAYERS.iter().position(|m| *m == target);
            let up = match target_rank {
                Some(r) => r > rank,
                // The crate root's re-exports hide where a name lives.
                None => true,
            };
            let sideways = match transport {
                Some("ws") => used.starts_with("transport::wt"),
                Some("wt") => used.starts_with("transport::ws"),
                _ => false,
            };
            if up || sideways {
                offenders.push(format!("{path}:{line}: crate::{used}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "server imports that point up, sideways or through the crate root (layers, lowest first: {SERVER_LAYERS:?}):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_server_layers_name_every_module() {
    let lib = rust_files()
        .into_iter()
        .find(|(path, _)| path == "server/src/lib.rs")
        .map(|(_, text)| text)
        .expect("the server has a lib.rs");
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            l.trim_start_matches("pub ")
                .strip_prefix("mod ")
                .map(|m| m.trim_end_matches(';'))
        })
        .collect();
    let mut missing: Vec<&str> = declared
        .iter()
        .copied()
        .filter(|m| !SERVER_LAYERS.contains(m))
        .collect();
    missing.extend(SERVER_LAYERS.iter().filter(|m| !declared.contains(m)));
    assert!(missing.is_empty(), "modules and layers differ: {missing:?}");
}

#[test]
fn wasm_client_links_do_not_import_the_connection_state_machine() {
    let mut offenders = Vec::new();
    for (path, text) in rust_files() {
        if !path.starts_with("wasm-client/src/net/") {
            continue;
        }
        for (line, used) in crate_paths(&text) {
            let leaf = used.starts_with("net::frame") || used.starts_with("net::link");
            if used.starts_with("net") && !leaf {
                offenders.push(format!("{path}:{line}: crate::{used}"));
            }
        }
        for (n, code) in text.lines().enumerate() {
            // Unindented: `super` is `net` itself, not a test module's file.
            let parent = code.starts_with("use super::")
                && !code.starts_with("use super::frame")
                && !code.starts_with("use super::link");
            if parent {
                offenders.push(format!("{path}:{}: {code}", n + 1));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "link files that reach into net's state machine:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn a_plain_build_needs_no_protoc() {
    // The gRPC crates run protoc in their build scripts: only the server's
    // `agones` feature may bring them in.
    let grpc = ["agones", "tonic", "tonic-build", "prost"];
    let mut problems = Vec::new();
    for package in ["core", "wasm-client", "server", "tests", "xtask"] {
        let path = root().join(package).join("Cargo.toml");
        let manifest = fs::read_to_string(&path).expect("every package has a manifest");
        let mut in_dependencies = false;
        for line in manifest.lines() {
            if line.starts_with('[') {
                in_dependencies = line.contains("dependencies");
                continue;
            }
            let Some((name, spec)) = line.split_once('=') else {
                continue;
            };
            if !in_dependencies || !grpc.contains(&name.trim()) {
                continue;
            }
            if package != "server" {
                problems.push(format!("{package} depends on {}", name.trim()));
            } else if !spec.contains("optional = true") {
                problems.push(format!("the server's {} is not optional", name.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The tank game's vocabulary: words the library must not use.
const TANK_VOCABULARY: &[&str] = &[
    "pose",
    "poses",
    "hp",
    "shot",
    "shots",
    "obstacle",
    "obstacles",
    "tank",
    "tanks",
    "combat",
    "fire",
    "fires",
    "turn",
    "throttle",
    "respawn",
    "arena",
];

/// The library crate names none of the tank game's words, in code,
/// comments or tests (whole words, any case); it depends on no game crate
/// and names none.
#[test]
fn the_library_names_no_tank_vocabulary_and_no_game_crate() {
    let mut found = Vec::new();
    let files = rust_files();
    let library: Vec<_> = files
        .iter()
        .filter(|(path, _)| path.starts_with("core/src/"))
        .collect();
    assert!(library.len() > 60, "the walk finds the library");
    for (path, text) in library {
        if text.contains("skirmish_tanks") {
            found.push(format!("{path}: names the tank game's crate"));
        }
        for (n, line) in text.lines().enumerate() {
            let words = line
                .split(|c: char| !c.is_ascii_alphanumeric())
                .filter(|w| !w.is_empty());
            for word in words {
                let lower = word.to_ascii_lowercase();
                if TANK_VOCABULARY.contains(&lower.as_str()) {
                    found.push(format!("{path}:{}: `{word}` in: {}", n + 1, line.trim()));
                }
            }
        }
    }
    let manifest = fs::read_to_string(root().join("core/Cargo.toml")).expect("core's manifest");
    if manifest.contains("skirmish-tanks") || manifest.contains("games/") {
        found.push("core/Cargo.toml depends on a game".to_string());
    }
    assert!(
        found.is_empty(),
        "the tank game in the library:\n{}",
        found.join("\n")
    );
}

/// `docs/GUIDE.md`'s game (the listing up to "Playing it") is at most 90
/// lines as rustfmt formats it, its header included: a newcomer reads the
/// whole contract in one sitting. The listing is compiled and run as a
/// doctest of `skirmish-core`.
#[test]
fn the_guides_game_fits_in_90_lines() {
    let guide = fs::read_to_string(root().join("docs/GUIDE.md")).expect("docs/GUIDE.md exists");
    let start = guide.find("```rust\n").expect("a rust listing");
    let game = &guide[start..];
    let end = game
        .find("// ---- Playing it")
        .expect("the game ends where playing starts");
    // The harness runs the guide's game from its crate: the same lines.
    let listing = fs::read_to_string(root().join("games/walkers/src/listing.rs"))
        .expect("the walkers crate's listing");
    let lines = listing.lines().count();
    assert!(lines <= 90, "the guide's game takes {lines} lines");
    let code = listing
        .split_once("\n\n")
        .map_or("", |(_header, code)| code)
        .trim_end();
    assert_eq!(
        code,
        game["```rust\n".len()..end].trim_end(),
        "games/walkers/src/listing.rs is docs/GUIDE.md's listing"
    );
    let lib = fs::read_to_string(root().join("core/src/lib.rs")).expect("core's lib.rs");
    assert!(
        lib.contains("include_str!(\"../../docs/GUIDE.md\")"),
        "the guide is a doctest"
    );
}

/// Every `rs` block of `docs/GUIDE.md` is an excerpt of a compiled file of
/// the repository: its first line names the file, and the rest is in it,
/// character for character (the guide's `rust` blocks are doctests). An
/// excerpt that drifts from its code fails here.
#[test]
fn the_guides_excerpts_are_in_their_files() {
    let guide = fs::read_to_string(root().join("docs/GUIDE.md")).expect("docs/GUIDE.md exists");
    let mut checked = Vec::new();
    let mut rest = guide.as_str();
    while let Some(start) = rest.find("```rs\n") {
        let block = &rest[start + "```rs\n".len()..];
        let end = block.find("```\n").expect("an excerpt ends");
        let (first, code) = block[..end]
            .split_once('\n')
            .expect("an excerpt has a line naming its file");
        let path = first
            .strip_prefix("// ")
            .unwrap_or_else(|| panic!("an excerpt starts with `// PATH`, not {first:?}"));
        let text = fs::read_to_string(root().join(path))
            .unwrap_or_else(|e| panic!("{path}, named by an excerpt of the guide: {e}"));
        assert!(
            text.contains(code),
            "docs/GUIDE.md's excerpt of {path} is not in it:\n{code}"
        );
        checked.push(path);
        rest = &block[end..];
    }
    assert!(checked.len() >= 5, "the guide's excerpts: {checked:?}");
}

/// The repository's games by their crates' and types' names: what the
/// shells and the harness never say.
const GAME_WORDS: [&str; 6] = [
    "skirmish_tanks",
    "Tanks",
    "skirmish_walkers",
    "Walkers",
    "skirmish_blobs",
    "Blobs",
];

/// The page shell, `wasm-client/`, is a library that names no game: it
/// takes its game through `PageGame` (`wasm-client/src/game.rs`), and each
/// game's page is a crate of its own (`games/GAME/page`) that starts it
/// with `skirmish_client::page!`. No `.rs` file under `wasm-client/` (its
/// entry points, connection, session, HUD, panel and tests) names a game,
/// and its manifest depends on no game crate, not even for its tests.
#[test]
fn the_page_shell_names_no_game() {
    let game_words = GAME_WORDS;
    let shell: Vec<_> = rust_files()
        .into_iter()
        .filter(|(path, _)| path.starts_with("wasm-client/"))
        .collect();
    assert!(
        shell
            .iter()
            .any(|(path, _)| path == "wasm-client/src/lib.rs")
            && shell
                .iter()
                .any(|(path, _)| path == "wasm-client/src/net.rs"),
        "the walk finds the shell"
    );
    let mut offenders = Vec::new();
    for (path, text) in shell {
        for (n, line) in text.lines().enumerate() {
            let named = line
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| game_words.contains(&w));
            if named {
                offenders.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    let manifest =
        fs::read_to_string(root().join("wasm-client/Cargo.toml")).expect("the shell's manifest");
    for (n, line) in manifest.lines().enumerate() {
        let crate_named = ["skirmish-tanks", "skirmish-walkers", "skirmish-blobs"]
            .iter()
            .any(|game| line.contains(game));
        if crate_named {
            offenders.push(format!("wasm-client/Cargo.toml:{}: {}", n + 1, line.trim()));
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// The harness, `harness/` (`skirmish-harness`), is a library any game's
/// crate can use: a game implements `Harness`, `Driver` and `Harness`
/// (`skirmish-core`) in its own crate and gets the stepper, the scenario
/// matrix, its quality page, bots and replays. No `.rs` file under
/// `harness/` names a game, and its manifest depends on no game crate.
#[test]
fn the_harness_names_no_game() {
    let game_words = GAME_WORDS;
    let files: Vec<_> = rust_files()
        .into_iter()
        .filter(|(path, _)| path.starts_with("harness/"))
        .collect();
    let harness = root().join("harness");
    assert!(
        files.iter().any(|(p, _)| p == "harness/src/lib.rs")
            && files.iter().any(|(p, _)| p == "harness/src/stepper.rs"),
        "the walk finds the harness"
    );
    let mut offenders = Vec::new();
    for (path, text) in files {
        for (n, line) in text.lines().enumerate() {
            let named = line
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| game_words.contains(&w));
            if named {
                offenders.push(format!("{path}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    let manifest = fs::read_to_string(harness.join("Cargo.toml")).expect("the harness's manifest");
    for (n, line) in manifest.lines().enumerate() {
        let named = [
            "skirmish-tanks",
            "skirmish-walkers",
            "skirmish-blobs",
            "games/",
        ]
        .iter()
        .any(|game| line.contains(game))
            || line
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(|w| game_words.contains(&w));
        if named {
            offenders.push(format!("harness/Cargo.toml:{}: {}", n + 1, line.trim()));
        }
    }
    assert!(
        offenders.is_empty(),
        "the harness names a game: {offenders:#?}"
    );
}

/// The repository's games are listed once, in `skirmish-games`
/// (`games/list/src/lib.rs`): no other source file (the server's `main`,
/// the bots, the quality runs, replay, xtask, the page shell, the harness)
/// names two listed games, by crate (`skirmish_walkers`) or by name in a
/// string (`"walkers"`). Tests that play given games together (integration
/// tests and unit tests) are exempt.
#[test]
fn the_repositorys_games_are_listed_once() {
    let games = skirmish_games::names();
    assert!(games.len() >= 3, "the list reads: {games:?}");
    let mut offenders = Vec::new();
    for (path, text) in rust_files() {
        let exempt = path.starts_with("games/list/")
            || path.starts_with("tests/tests/")
            || path.starts_with("server/tests/")
            || path.starts_with("examples/");
        if exempt {
            continue;
        }
        // The code before its unit tests, without comments.
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let named: Vec<_> = games
            .iter()
            .filter(|game| {
                code.contains(&format!("skirmish_{game}")) || code.contains(&format!("\"{game}\""))
            })
            .collect();
        if named.len() >= 2 {
            offenders.push(format!("{path}: names {named:?}"));
        }
    }
    assert!(
        offenders.is_empty(),
        "a second list of games (take them from skirmish_games::each):\n{}",
        offenders.join("\n")
    );
}
