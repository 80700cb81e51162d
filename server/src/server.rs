//! Binding and wiring: [`start`] binds the TCP listener (and the
//! WebTransport endpoint beside it), spawns the accept loop and returns a
//! [`RunningServer`], whose [`RunningServer::shutdown`] tells every client
//! why and waits for them.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpSocket;
use tokio::task::JoinHandle;

use crate::app::AppState;
use crate::config::{RoomSettings, ServerConfig};
use crate::game::Hosted;
use crate::http::{accept, Routes};
use crate::limits::AddressBook;
use crate::metrics::Metrics;
use crate::rooms::{AnyRooms, Common, Games, Rooms};
use crate::transport::wt::{self, WebTransport};
use crate::transport::Door;

/// How long shutdown waits for recordings to be written and synced.
pub const RECORDING_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// A server running in the background.
#[derive(Debug)]
pub struct RunningServer {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// Its shared state.
    pub state: Arc<AppState>,
    /// The WebTransport endpoint (never with `--no-webtransport`).
    pub webtransport: Option<Arc<WebTransport>>,
    task: JoinHandle<()>,
}

impl RunningServer {
    /// Stops accepting, tells every client why and waits (at most a few
    /// seconds) for every session to close; then closes every room, its
    /// recording ending with an end record, and waits (at most
    /// [`RECORDING_GRACE`]) for the recordings to reach the disk.
    ///
    /// # Errors
    /// The server task failed.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        self.state.shutdown.signal();
        self.task.await?;
        self.state.shutdown.drained().await;
        self.state.rooms.close_all(RECORDING_GRACE).await;
        if let Some(wt) = &self.webtransport {
            wt.stopped().await;
        }
        Ok(())
    }
}

/// The games a server hosts, each at its path with its settings: what a
/// game's own binary writes to serve it.
///
/// ```no_run
/// # use skirmish_server::{Catalog, Hosted};
/// # fn games<Pong: Hosted, Ball: Hosted>() -> Catalog {
/// Catalog::new()
///     .host::<Pong>("", Default::default()) // pages at `/`, socket `/ws`
///     .host::<Ball>("ball", Default::default()) // `/ball/`, `/ball/ws`
/// # }
/// ```
#[derive(Default)]
pub struct Catalog {
    hosts: Vec<Host>,
    paths: Vec<&'static str>,
}

/// Opens one game's registry.
type Host = Box<dyn FnOnce(&mut Hosting<'_>) + Send>;

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("paths", &self.paths)
            .finish_non_exhaustive()
    }
}

impl Catalog {
    /// No game yet.
    pub fn new() -> Catalog {
        Catalog::default()
    }

    /// Hosts game `G`, whose rooms are set up with `settings` and whose
    /// pages connect under `path`: `""` for the page at `/` and its socket
    /// at `/ws`, else `/{path}/` and `/{path}/ws`. The first game hosted is
    /// the one Agones allocations open unless they name another.
    #[must_use]
    pub fn host<G: Hosted>(mut self, path: &'static str, settings: G::Settings) -> Catalog {
        self.paths.push(path);
        self.hosts
            .push(Box::new(move |hosting| hosting.host::<G>(path, settings)));
        self
    }
}

/// Binds `config.addr` and serves `games` in the background. Call it
/// inside a Tokio runtime.
///
/// # Errors
/// No game, two games at one path (or a path that is not one folder name),
/// a game's settings refused by its `check`, the address cannot be bound,
/// or `--record` is asked for rooms whose recordings would not replay (see
/// `RoomConfig::validate`).
pub fn start(config: ServerConfig, games: Catalog) -> anyhow::Result<RunningServer> {
    check_paths(&games.paths)?;
    let metrics = Arc::new(Metrics::default());
    let book = AddressBook::new(config.limits.clone());
    let mut hosting = Hosting {
        settings: &config.rooms,
        common: Common::new(&config.rooms, metrics.clone(), book.clone()),
        rooms: Vec::new(),
        doors: Vec::new(),
        refused: None,
    };
    for host in games.hosts {
        host(&mut hosting);
    }
    if let Some(e) = hosting.refused {
        return Err(e);
    }
    let doors: Arc<[Arc<dyn Door>]> = hosting.doors.into();
    let games = Games::new(hosting.rooms);
    let socket = if config.addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    if let Some(size) = config.socket_send_buffer {
        socket.set_send_buffer_size(size)?;
    }
    socket.bind(config.addr)?;
    let listener = socket.listen(1024)?;
    let addr = listener.local_addr()?;

    let state = AppState::new(config, games, metrics, book);
    let settings = &state.config.webtransport;
    let webtransport = if settings.disabled {
        None
    } else {
        let udp = settings.listen.unwrap_or(addr);
        let files = settings
            .tls_cert
            .as_deref()
            .zip(settings.tls_key.as_deref());
        let endpoint = wt::start(
            udp,
            settings.port_from_host,
            files,
            state.clone(),
            doors.clone(),
        )
        .map_err(|e| anyhow::anyhow!("WebTransport on UDP {udp}: {e}"))?;
        Some(endpoint)
    };
    let routes = Routes {
        app: state.clone(),
        webtransport: webtransport.clone(),
        doors,
    };
    let task = tokio::spawn(accept(listener, routes));
    Ok(RunningServer {
        addr,
        state,
        webtransport,
        task,
    })
}

/// Opens the registry of each game the server hosts.
struct Hosting<'a> {
    settings: &'a RoomSettings,
    common: Common,
    rooms: Vec<Arc<dyn AnyRooms>>,
    doors: Vec<Arc<dyn Door>>,
    /// Why a game cannot be hosted as configured.
    refused: Option<anyhow::Error>,
}

/// The paths of a catalog are one each, and each one folder name (or the
/// root's `""`).
fn check_paths(paths: &[&'static str]) -> anyhow::Result<()> {
    if paths.is_empty() {
        anyhow::bail!("no game to host: the catalog is empty");
    }
    for (i, path) in paths.iter().enumerate() {
        let folder = path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !folder {
            anyhow::bail!(
                "a game's path `{path}` is not one folder name (letters, digits, - and _)"
            );
        }
        if paths[..i].contains(path) {
            anyhow::bail!("two games at the path `{path}`");
        }
    }
    Ok(())
}

impl Hosting<'_> {
    fn host<G: Hosted>(&mut self, path: &'static str, settings: G::Settings) {
        if let Err(e) = G::check(&settings) {
            self.refused
                .get_or_insert(anyhow::anyhow!("{}'s settings: {e}", G::NAME));
        }
        if self.settings.record.dir.is_some() {
            // A recording is replayed only if its room passes the replay's
            // checks: say so now rather than record what cannot be read.
            let config = self.settings.room_config::<G>("room-1", 1, &settings);
            if let Err(e) = config.validate() {
                self.refused.get_or_insert(anyhow::anyhow!(
                    "--record: the recordings of {}'s rooms would not replay: {e}",
                    G::NAME
                ));
            }
        }
        let rooms = Rooms::<G>::new(self.settings.clone(), settings, path, &self.common);
        self.rooms.push(rooms.clone());
        self.doors.push(rooms);
    }
}

#[cfg(test)]
mod tests {
    use super::check_paths;

    #[test]
    fn a_catalog_hosts_one_game_a_folder_and_at_least_one() {
        assert!(check_paths(&["", "walkers", "blob-s_2"]).is_ok());
        let refused = |paths: &[&'static str]| check_paths(paths).map_err(|e| e.to_string());
        assert_eq!(
            refused(&[]),
            Err("no game to host: the catalog is empty".into())
        );
        assert_eq!(
            refused(&["a", "a"]),
            Err("two games at the path `a`".into())
        );
        assert_eq!(refused(&["", ""]), Err("two games at the path ``".into()));
        for bad in ["a/b", "../x", "a b", "ws?"] {
            assert!(refused(&[bad]).is_err(), "{bad}");
        }
    }
}
