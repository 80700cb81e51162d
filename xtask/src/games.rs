//! The repository's games, read from their one list (the `games!` block of
//! `games/list/src/lib.rs`), and `cargo xtask new-game NAME`, which writes
//! a game crate from `xtask/templates/` and adds it to that list, to the
//! workspace and to `.gitignore`: no other edit makes it build, play in
//! the browser and get its quality table.

use std::fs;
use std::path::{Path, PathBuf};

use crate::{root, Result};

/// The file that lists the games.
const LIST: &str = "games/list/src/lib.rs";

/// A game of the list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// Its name: its folder under `games/` and `--game NAME`.
    pub name: String,
    /// Where its pages are served (`""`: at the root).
    pub path: String,
}

impl Listed {
    /// Where its bundle goes, relative to the project root: `web/pkg` for
    /// the game at the root, `web/PATH/pkg` for the others.
    pub fn bundle_dir(&self) -> PathBuf {
        if self.path.is_empty() {
            PathBuf::from("web/pkg")
        } else {
            Path::new("web").join(&self.path).join("pkg")
        }
    }
}

/// The games of the list, in its order (the first is served at the root).
///
/// # Errors
/// The list cannot be read or holds no game.
pub fn list() -> Result<Vec<Listed>> {
    let text = fs::read_to_string(root().join(LIST))
        .map_err(|e| format!("cannot read the list of games, {LIST}: {e}"))?;
    let games = parse(&text);
    if games.is_empty() {
        return Err(format!(
            "{LIST} lists no game (no `games! {{ ... }}` lines)"
        ));
    }
    Ok(games)
}

/// The `name at "path": Type = settings;` lines of the `games!` block.
fn parse(text: &str) -> Vec<Listed> {
    let Some((_, block)) = text.split_once("\ngames! {\n") else {
        return Vec::new();
    };
    let block = block.split_once("\n}").map_or(block, |(b, _)| b);
    block
        .lines()
        .filter_map(|line| {
            let (name, rest) = line.trim().split_once(" at \"")?;
            let (path, _) = rest.split_once("\":")?;
            Some(Listed {
                name: name.to_string(),
                path: path.to_string(),
            })
        })
        .collect()
}

/// The names of the games, for messages.
pub fn names(games: &[Listed]) -> String {
    games
        .iter()
        .map(|g| g.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The game `name` of the list, or an error naming the list's games.
///
/// # Errors
/// No game of that name is listed.
pub fn find(name: &str) -> Result<Listed> {
    let games = list()?;
    games
        .iter()
        .find(|g| g.name == name)
        .cloned()
        .ok_or_else(|| format!("no game `{name}`; the games are: {}", names(&games)))
}

/// The files of a new game, from `xtask/templates/`: where each goes
/// (under `games/NAME/`) and its text with `__name__` and `__Type__` to
/// fill in.
const TEMPLATES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("../templates/Cargo.toml.tmpl")),
    ("src/lib.rs", include_str!("../templates/game.rs.tmpl")),
    ("src/driver.rs", include_str!("../templates/driver.rs.tmpl")),
    (
        "tests/harness.rs",
        include_str!("../templates/harness.rs.tmpl"),
    ),
    (
        "examples/quality.rs",
        include_str!("../templates/quality.rs.tmpl"),
    ),
    (
        "page/Cargo.toml",
        include_str!("../templates/page-Cargo.toml.tmpl"),
    ),
    ("page/src/lib.rs", include_str!("../templates/page.rs.tmpl")),
];

/// `cargo xtask new-game NAME`: writes `games/NAME` (the game's rules with
/// a unit test, its harness glue and test, its page crate) and lists it:
/// in the workspace, in `games/list` and in `.gitignore` (its bundle).
///
/// # Errors
/// The name is not a lowercase word, a game or folder of that name
/// exists, or a file cannot be written.
pub fn new_game(name: &str) -> Result {
    let valid = name.len() >= 2
        && name.len() <= 24
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !valid {
        return Err(format!(
            "`{name}` is not a game name: 2 to 24 lowercase letters and digits, a letter first"
        ));
    }
    let games = list()?;
    let folder = root().join("games").join(name);
    if games.iter().any(|g| g.name == name || g.path == name) || folder.exists() {
        return Err(format!(
            "games/{name} exists already; the games are: {}",
            names(&games)
        ));
    }
    let ty = {
        let mut chars = name.chars();
        chars
            .next()
            .map_or(String::new(), |c| c.to_ascii_uppercase().to_string())
            + chars.as_str()
    };
    for (file, template) in TEMPLATES {
        let path = folder.join(file);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let text = template.replace("__name__", name).replace("__Type__", &ty);
        fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    edit(&root().join("Cargo.toml"), |text| add_members(text, name))?;
    edit(&root().join("games/list/Cargo.toml"), |text| {
        let line = format!("skirmish-{name} = {{ path = \"../{name}\" }}\n");
        text.replacen(
            "# The games' own settings",
            &format!("{line}# The games' own settings"),
            1,
        )
    })?;
    edit(&root().join(LIST), |text| {
        let line = format!("    {name} at \"{name}\": skirmish_{name}::{ty} = |_| ();\n");
        match text.split_once("\ngames! {\n") {
            Some((head, block)) => match block.split_once("}\n") {
                Some((lines, tail)) => format!("{head}\ngames! {{\n{lines}{line}}}\n{tail}"),
                None => text.to_string(),
            },
            None => text.to_string(),
        }
    })?;
    edit(&root().join(".gitignore"), |text| {
        format!("{text}/web/{name}/pkg\n")
    })?;
    if !list()?.iter().any(|g| g.name == name) {
        return Err(format!(
            "could not add {name} to {LIST}: add its line by hand"
        ));
    }
    println!(
        "new-game: wrote games/{name} (the rules in src/lib.rs, the harness's side in \
         src/driver.rs and tests/harness.rs, the page in page/), and listed it in Cargo.toml, \
         {LIST} and .gitignore.\n\
         Next: `cargo xtask run` serves it at /{name}/, `cargo xtask quality --game {name}` \
         writes docs/quality/{name}.md, `cargo test -p skirmish-{name}` runs its tests."
    );
    Ok(())
}

/// Rewrites the file at `path` with `change`.
fn edit(path: &Path, change: impl FnOnce(&str) -> String) -> Result {
    let text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    fs::write(path, change(&text)).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The workspace manifest with `games/NAME` and its page in `members` and
/// `default-members`, before the server.
fn add_members(text: &str, name: &str) -> String {
    let ours = format!("\"games/{name}\", \"games/{name}/page\", \"server\"");
    text.lines()
        .map(|line| {
            if line.starts_with("members = [") || line.starts_with("default-members = [") {
                line.replacen("\"server\"", &ours, 1)
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_read_from_its_macro_lines() {
        let text = "//! x\n\ngames! {\n    tanks at \"\": a::Tanks = S::tanks;\n    \
                    walkers at \"walkers\": b::Walkers = |_| ();\n}\n\nfn other() {}\n";
        let games = parse(text);
        assert_eq!(
            games,
            [
                Listed {
                    name: "tanks".into(),
                    path: String::new()
                },
                Listed {
                    name: "walkers".into(),
                    path: "walkers".into()
                },
            ]
        );
        assert_eq!(games[0].bundle_dir(), PathBuf::from("web/pkg"));
        assert_eq!(games[1].bundle_dir(), PathBuf::from("web/walkers/pkg"));
        assert!(parse("no list here").is_empty());
    }

    #[test]
    fn a_new_game_joins_the_workspace_before_the_server() {
        let manifest = "[workspace]\nmembers = [\"core\", \"server\", \"tests\"]\n\
                        default-members = [\"core\", \"server\"]\n\n[x]\ny = \"server\"\n";
        let added = add_members(manifest, "demo");
        assert!(added.contains(
            "members = [\"core\", \"games/demo\", \"games/demo/page\", \"server\", \"tests\"]"
        ));
        assert!(added.contains(
            "default-members = [\"core\", \"games/demo\", \"games/demo/page\", \"server\"]"
        ));
        assert!(added.ends_with("y = \"server\"\n"), "{added}");
    }

    /// The game outside the workspace is what `new-game drift` writes
    /// (its sources; its manifests point at the Skirmish crates from
    /// there): so the templates are compiled, tested and played by
    /// `cargo xtask test` without writing a game into the workspace.
    #[test]
    fn the_standalone_game_is_the_template_written() {
        let standalone = root().join("examples/standalone/drift");
        for (file, template) in TEMPLATES {
            if file.ends_with("Cargo.toml") {
                continue;
            }
            let written = template
                .replace("__name__", "drift")
                .replace("__Type__", "Drift");
            let path = standalone.join(file);
            let text =
                fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                text,
                written,
                "{} is not the template written",
                path.display()
            );
        }
    }

    #[test]
    fn the_repositorys_list_reads() {
        let games = list().expect("the list reads");
        assert_eq!(games[0].path, "", "the first game is served at the root");
        assert!(games.iter().any(|g| g.name == "walkers"));
    }
}
