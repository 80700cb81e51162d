//! The routes: `GET /` serves the `web/` folder, `GET /ws` upgrades to the
//! first game and hands the socket to the WebSocket transport (`GET
//! /walkers/ws` to the game in the folder `walkers`), and the small
//! endpoints (`/healthz`, `/rooms`, `/metrics`, `/transport` and each
//! game's `/{folder}/transport`).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::{Html, Redirect};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Json, Router};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower_http::services::{ServeDir, ServeFile};

use crate::app::AppState;
use crate::config::host;
use crate::limits::Permit;
use crate::rooms::RoomInfo;
use crate::transport::wt::WebTransport;
use crate::transport::{door, ws, Door};

/// What the routes share: the server's state and, when it runs, the
/// WebTransport endpoint (for its offer).
#[derive(Clone, Debug)]
pub struct Routes {
    /// The server's shared state.
    pub app: Arc<AppState>,
    /// The WebTransport endpoint (never with `--no-webtransport`).
    pub webtransport: Option<Arc<WebTransport>>,
    /// Every game's way in, the first at the root.
    pub doors: Arc<[Arc<dyn Door>]>,
}

/// The page shell's page (`web/index.html`), served for every game when
/// the web folder has no `index.html` of its own.
pub const SHELL_PAGE: &str = include_str!("../../../web/index.html");

/// The router. Requests reaching `/ws` must carry the connection's
/// [`Permit`] as an extension, as the accept loop adds.
pub fn router(routes: Routes) -> Router {
    let web = ServeDir::new(&routes.app.config.web_dir).append_index_html_on_directories(true);
    let own_page = routes.app.config.web_dir.join("index.html");
    // A web folder without a page of its own gets the shell's: a game's
    // folder then needs only its bundle (`pkg/`, `{path}/pkg/`).
    let has_own_page = own_page.is_file();
    let mut app = Router::new();
    if !has_own_page {
        for route in ["/", "/index.html"] {
            app = app.route(route, get(|| async { Html(SHELL_PAGE) }));
        }
    }
    for door in routes.doors.iter() {
        let folder = match door.path() {
            "" => String::new(),
            path => format!("/{path}"),
        };
        app = app
            .route(&format!("{folder}/ws"), get(upgrade))
            .route(&format!("{folder}/transport"), get(transport));
        if !folder.is_empty() {
            // One page for every game: `web/index.html` loads the bundle
            // beside its URL (`/walkers/pkg`).
            let slash = format!("{folder}/");
            if has_own_page {
                let page = ServeFile::new(&own_page);
                app = app
                    .route_service(&slash, page.clone())
                    .route_service(&format!("{folder}/index.html"), page);
            } else {
                for route in [slash.clone(), format!("{folder}/index.html")] {
                    app = app.route(&route, get(|| async { Html(SHELL_PAGE) }));
                }
            }
            app = app.route(
                &folder,
                get(move |uri: Uri| std::future::ready(redirect(&slash, &uri))),
            );
        }
    }
    app.route("/healthz", get(|| async { "ok" }))
        .route("/rooms", get(rooms))
        .route("/metrics", get(metrics))
        .fallback_service(web)
        .with_state(routes)
}

/// `GET /ws`: answers a valid WebSocket upgrade with 101 and hands the raw
/// socket to [`ws::serve`] once hyper lets go of it.
async fn upgrade(
    State(routes): State<Routes>,
    Extension(permit): Extension<Arc<Permit>>,
    mut request: Request,
) -> Response {
    let Some(door) = door(&routes.doors, request.uri().path(), "ws").cloned() else {
        return (StatusCode::NOT_FOUND, "no game here").into_response();
    };
    let accept = match ws::handshake::accept_key(request.headers()) {
        Ok(accept) => accept,
        Err(why) => return (StatusCode::BAD_REQUEST, why).into_response(),
    };
    let Some(on_upgrade) = request.extensions_mut().remove::<OnUpgrade>() else {
        return (
            StatusCode::BAD_REQUEST,
            "this connection cannot be upgraded",
        )
            .into_response();
    };
    tokio::spawn(async move {
        let Ok(upgraded) = on_upgrade.await else {
            return;
        };
        // The accept loop serves every connection as `TokioIo<TcpStream>`.
        if let Ok(parts) = upgraded.downcast::<TokioIo<TcpStream>>() {
            let read = parts.read_buf.to_vec();
            door.websocket(parts.io.into_inner(), read, routes.app, permit)
                .await;
        } else {
            tracing::error!("an upgraded connection is not a TCP stream");
        }
    });
    (
        StatusCode::SWITCHING_PROTOCOLS,
        [
            (header::UPGRADE, "websocket".to_string()),
            (header::CONNECTION, "upgrade".to_string()),
            (header::SEC_WEBSOCKET_ACCEPT, accept),
        ],
    )
        .into_response()
}

/// `/walkers` to `/walkers/`, the query kept (a shared link's room and
/// name).
fn redirect(slash: &str, uri: &Uri) -> Redirect {
    match uri.query() {
        Some(query) => Redirect::permanent(&format!("{slash}?{query}")),
        None => Redirect::permanent(slash),
    }
}

/// `GET /transport`: where a page may connect over WebTransport and which
/// certificate hashes to pin; `{"webtransport":null}` when it is off. The
/// host is the configured one or a checked `Host`, never the header as
/// sent ([`host::offered`]).
async fn transport(
    State(routes): State<Routes>,
    uri: Uri,
    headers: HeaderMap,
) -> Json<serde_json::Value> {
    let folder = uri
        .path()
        .strip_suffix("/transport")
        .unwrap_or_default()
        .trim_start_matches('/');
    let config = &routes.app.config;
    let host = host::offered(
        config.webtransport.public_host.as_deref(),
        headers.get(header::HOST).and_then(|h| h.to_str().ok()),
        config.addr,
    );
    let offer = routes
        .webtransport
        .as_ref()
        .map(|wt| wt.offer(&host, folder));
    Json(serde_json::json!({ "webtransport": offer }))
}

async fn rooms(State(routes): State<Routes>) -> Json<Vec<RoomInfo>> {
    Json(routes.app.rooms.list())
}

async fn metrics(State(routes): State<Routes>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        routes.app.metrics.render(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ServerConfig;
    use crate::limits::AddressBook;
    use crate::metrics::Metrics;
    use crate::rooms::Games;

    /// What `GET /transport` offers a request with `host` as its `Host`,
    /// from a server configured by `config`.
    async fn offered(config: ServerConfig, host: &str) -> String {
        let metrics = Arc::new(Metrics::default());
        let book = AddressBook::new(config.limits.clone());
        let routes = Routes {
            app: AppState::new(config, Games::new(Vec::new()), metrics, book),
            webtransport: Some(Arc::new(WebTransport::fixed(8443, true))),
            doors: Arc::from(Vec::new()),
        };
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, host.parse().expect("a header value"));
        let uri = Uri::from_static("/transport");
        let Json(answer) = transport(State(routes), uri, headers).await;
        answer.to_string()
    }

    /// Regression: the `Host` header went into the offered URL verbatim.
    #[tokio::test]
    async fn a_hostile_host_never_reaches_the_offer() {
        for host in [
            "evil.com/x?\"<script>",
            "a@b",
            "evil.com x",
            "evil.com:80/wt#",
        ] {
            let answer = offered(ServerConfig::default(), host).await;
            assert!(
                answer.contains(r#""url":"https://127.0.0.1:8443/wt""#),
                "{host:?}: {answer}"
            );
            for part in ["evil", "script", "@", " "] {
                assert!(!answer.contains(part), "{host:?}: {answer}");
            }
        }
        let answer = offered(ServerConfig::default(), "game.example.com:7034").await;
        assert!(
            answer.contains(r#""url":"https://game.example.com:7034/wt""#),
            "{answer}"
        );
        let mut config = ServerConfig::default();
        config.webtransport.public_host = Some("play.example.com".into());
        let answer = offered(config, "evil.com").await;
        assert!(
            answer.contains(r#""url":"https://play.example.com:8443/wt""#),
            "{answer}"
        );
    }
}
