//! The accept loop: the server accepts TCP connections itself rather than
//! through `axum::serve`, so that limits apply before any HTTP work. Each
//! accepted socket first takes a permit from the
//! [`AddressBook`](crate::limits::AddressBook) (refused with HTTP 503 or
//! 429 when the server or its address holds too many), and must send a
//! complete HTTP request within the upgrade deadline.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::Extension;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use super::router::{router, Routes};
use crate::metrics::Refusal;

/// Accepts connections until shutdown; each gets a permit or a refusal
/// before any HTTP work.
pub async fn accept(listener: TcpListener, routes: Routes) {
    let state = routes.app.clone();
    let service_of = router(routes);
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(state.config.limits.upgrade_timeout);
    let mut signal = state.shutdown.watch();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = signal.wait() => return,
        };
        let (tcp, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors or similar: back off a little.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let permit = match state.book.connect(peer.ip()) {
            Ok(permit) => Arc::new(permit),
            Err(refusal) => {
                state.metrics.refused(refusal);
                tokio::spawn(refuse(tcp, refusal));
                continue;
            }
        };
        let _ = tcp.set_nodelay(true);
        // Whether the connection completed a request: an idle keep-alive
        // connection (a Prometheus scrape's) closed by the header deadline
        // is not a refusal.
        let served = Arc::new(AtomicBool::new(false));
        let flag = served.clone();
        let mark = axum::middleware::map_request(move |request: Request| {
            let flag = flag.clone();
            async move {
                flag.store(true, Ordering::Relaxed);
                request
            }
        });
        let service =
            TowerToHyperService::new(service_of.clone().layer(Extension(permit)).layer(mark));
        let connection = http
            .serve_connection(TokioIo::new(tcp), service)
            .with_upgrades();
        let metrics = state.metrics.clone();
        let http_timeout = state.config.limits.http_timeout;
        let mut signal = state.shutdown.watch();
        tokio::spawn(async move {
            tokio::pin!(connection);
            let finished = tokio::select! {
                ended = &mut connection => Some(ended),
                () = signal.wait() => None,
                () = tokio::time::sleep(http_timeout) => {
                    // Dropping the connection closes the socket and gives
                    // the permit back; an upgraded WebSocket left already.
                    metrics.refused(Refusal::HttpTimeout);
                    return;
                }
            };
            let ended = if let Some(ended) = finished {
                ended
            } else {
                connection.as_mut().graceful_shutdown();
                connection.await
            };
            if let Err(e) = ended {
                if e.is_timeout() && !served.load(Ordering::Relaxed) {
                    metrics.refused(Refusal::UpgradeTimeout);
                }
            }
        });
    }
}

/// The status line a turned-away TCP connection gets.
fn status(refusal: Refusal) -> &'static str {
    match refusal {
        Refusal::TooManyFromAddress => "429 Too Many Requests",
        Refusal::WrongPath => "404 Not Found",
        Refusal::HandshakeFailed => "400 Bad Request",
        Refusal::TooManyConnections | Refusal::UpgradeTimeout | Refusal::HttpTimeout => {
            "503 Service Unavailable"
        }
    }
}

/// The whole response a turned-away connection gets.
fn response(refusal: Refusal) -> String {
    let body = refusal.as_str();
    format!(
        "HTTP/1.1 {}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        status(refusal),
        body.len()
    )
}

/// Answers a turned-away connection with its HTTP status and closes it.
async fn refuse(mut tcp: TcpStream, refusal: Refusal) {
    let response = response(refusal);
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        tcp.write_all(response.as_bytes()).await?;
        tcp.shutdown().await
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_says_its_status_and_reason_in_a_complete_response() {
        let busy = response(Refusal::TooManyConnections);
        assert!(busy.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
        assert!(busy.ends_with("\r\n\r\ntoo_many_connections"));
        assert!(busy.contains("content-length: 20\r\n"));
        assert!(busy.contains("connection: close\r\n"));
        let crowded = response(Refusal::TooManyFromAddress);
        assert!(crowded.starts_with("HTTP/1.1 429 Too Many Requests\r\n"));
        assert!(crowded.ends_with("too_many_from_address"));
        for refusal in Refusal::ALL {
            let text = response(*refusal);
            let (head, body) = text.split_once("\r\n\r\n").expect("head and body");
            assert_eq!(body, refusal.as_str());
            assert!(head.contains(&format!("content-length: {}", body.len())));
        }
    }
}
