//! The WebTransport endpoint: binding the UDP port with a certificate
//! (renewed before it expires when self-signed), accepting sessions until
//! shutdown, and what `GET /transport` offers a page.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use tokio::time::timeout;
use wtransport::endpoint::endpoint_side::Server;
use wtransport::tls::Sha256DigestFmt;
use wtransport::{Endpoint, Identity, ServerConfig};

use crate::app::AppState;
use crate::transport::Door;

/// Where pages connect, as `GET /transport` says.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Offer {
    /// The WebTransport URL (`https://host:port/wt`).
    pub url: String,
    /// SHA-256 hashes (hex) of the self-signed certificates to pin, newest
    /// first; empty with a real certificate.
    pub certificate_hashes: Vec<String>,
}

/// The running endpoint, for `/transport`.
#[derive(Debug)]
pub struct WebTransport {
    port: u16,
    /// `--webtransport-port-from-host`: a page is told the port it reached
    /// the page on, behind a port mapping that gives TCP and UDP one public
    /// port (Agones' `Dynamic` ports with `protocol: TCPUDP`).
    port_from_host: bool,
    hashes: Mutex<Vec<String>>,
    /// The endpoint's task, until shutdown takes it to wait for the end.
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl WebTransport {
    /// What a page of the game in `folder` (`""` at the root) reaching us
    /// at `host` (port included or not: `--public-host` or the page's
    /// checked `Host`, never a header as sent) should use.
    pub fn offer(&self, host: &str, folder: &str) -> Offer {
        let (name, port) = match host.rsplit_once(':') {
            // Not `[::1]` alone: a port is digits after the last colon.
            Some((name, port)) if !port.is_empty() && port.chars().all(|c| c.is_ascii_digit()) => {
                (name, port.parse().ok())
            }
            _ => (host, None),
        };
        let port = port.filter(|_| self.port_from_host).unwrap_or(self.port);
        Offer {
            url: match folder {
                "" => format!("https://{name}:{port}/wt"),
                folder => format!("https://{name}:{port}/{folder}/wt"),
            },
            certificate_hashes: self
                .hashes
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        }
    }

    /// An endpoint that runs nothing, offering `port` and the hash `ab`
    /// (tests of what pages are offered).
    #[cfg(test)]
    pub(crate) fn fixed(port: u16, port_from_host: bool) -> WebTransport {
        WebTransport {
            port,
            port_from_host,
            hashes: Mutex::new(vec!["ab".into()]),
            task: Mutex::new(None),
        }
    }

    /// Waits (after shutdown was signalled) until the endpoint has closed
    /// every session and let go of its UDP port.
    pub async fn stopped(&self) {
        let task = self
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

/// The identity from PEM files (a real certificate).
fn from_files(cert: &std::path::Path, key: &std::path::Path) -> anyhow::Result<Identity> {
    use anyhow::Context as _;
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivatePkcs8KeyDer};
    let chain = CertificateDer::pem_file_iter(cert)
        .with_context(|| format!("cannot read {}", cert.display()))?
        .map(|c| {
            let der = c.with_context(|| format!("bad certificate in {}", cert.display()))?;
            wtransport::tls::Certificate::from_der(der.to_vec())
                .with_context(|| format!("bad certificate in {}", cert.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let key_der = PrivatePkcs8KeyDer::from_pem_file(key)
        .with_context(|| format!("{} holds no PKCS#8 private key", key.display()))?;
    Ok(Identity::new(
        wtransport::tls::CertificateChain::new(chain),
        wtransport::tls::PrivateKey::from_der_pkcs8(key_der.secret_pkcs8_der().to_vec()),
    ))
}

fn self_signed() -> anyhow::Result<Identity> {
    Ok(Identity::self_signed(["localhost", "127.0.0.1", "::1"])?)
}

fn hash_of(identity: &Identity) -> Vec<String> {
    identity
        .certificate_chain()
        .as_slice()
        .first()
        .map(|c| c.hash().fmt(Sha256DigestFmt::DottedHex).replace(':', ""))
        .into_iter()
        .collect()
}

fn server_config(addr: SocketAddr, identity: &Identity) -> ServerConfig {
    let mut config = ServerConfig::builder()
        .with_bind_address(addr)
        .with_custom_transport(identity.clone_identity(), super::quic::transport())
        .build();
    super::quic::bound_incoming(config.quic_config_mut());
    config
}

/// Binds the endpoint on `addr` (UDP) and serves it until shutdown, with
/// the certificate of `files` (chain, key) or a self-signed one;
/// with `port_from_host`, pages are told the port of their `Host` (see
/// [`WebTransport`]).
///
/// # Errors
/// The UDP socket cannot be bound or the certificate cannot be made or
/// read.
pub fn start(
    addr: SocketAddr,
    port_from_host: bool,
    files: Option<(&std::path::Path, &std::path::Path)>,
    state: Arc<AppState>,
    doors: Arc<[Arc<dyn Door>]>,
) -> anyhow::Result<Arc<WebTransport>> {
    let identity = match files {
        None => self_signed()?,
        Some((cert, key)) => from_files(cert, key)?,
    };
    let endpoint = Endpoint::server(server_config(addr, &identity))?;
    let bound = endpoint.local_addr()?;
    let hashes = if files.is_none() {
        hash_of(&identity)
    } else {
        Vec::new()
    };
    let wt = Arc::new(WebTransport {
        port: bound.port(),
        port_from_host,
        hashes: Mutex::new(hashes),
        task: Mutex::new(None),
    });
    let task = tokio::spawn(serve(
        endpoint,
        bound,
        files.is_none(),
        wt.clone(),
        state,
        doors,
    ));
    *wt.task.lock().unwrap_or_else(PoisonError::into_inner) = Some(task);
    Ok(wt)
}

async fn serve(
    endpoint: Endpoint<Server>,
    addr: SocketAddr,
    renew: bool,
    wt: Arc<WebTransport>,
    state: Arc<AppState>,
    doors: Arc<[Arc<dyn Door>]>,
) {
    let mut signal = state.shutdown.watch();
    let renewal = state
        .config
        .webtransport
        .renew_every
        .max(Duration::from_millis(10));
    let mut next_renewal = tokio::time::Instant::now() + renewal;
    loop {
        tokio::select! {
            incoming = endpoint.accept() => {
                tokio::spawn(super::session(incoming, state.clone(), doors.clone()));
            }
            () = tokio::time::sleep_until(next_renewal), if renew => {
                next_renewal += renewal;
                renew_certificate(&endpoint, addr, &wt);
            }
            () = signal.wait() => break,
        }
    }
    // Sessions tell their clients why on their own (they saw the same
    // signal); then everything closes, and the port is let go.
    state.shutdown.drained().await;
    endpoint.close(0u32.into(), b"shutting_down");
    let _ = timeout(Duration::from_secs(2), endpoint.wait_idle()).await;
}

/// A fresh certificate for new sessions; open ones keep theirs.
fn renew_certificate(endpoint: &Endpoint<Server>, addr: SocketAddr, wt: &WebTransport) {
    let Ok(identity) = self_signed() else {
        tracing::warn!("cannot make a new certificate; keeping the old one");
        return;
    };
    if let Err(e) = endpoint.reload_config(server_config(addr, &identity), false) {
        tracing::warn!(%e, "cannot load the new certificate");
        return;
    }
    let mut hashes = wt.hashes.lock().unwrap_or_else(PoisonError::into_inner);
    let previous = hashes.first().cloned();
    *hashes = hash_of(&identity);
    hashes.extend(previous);
    tracing::info!("WebTransport certificate renewed");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(port_from_host: bool) -> WebTransport {
        WebTransport::fixed(8080, port_from_host)
    }

    #[test]
    fn the_offer_names_the_port_the_page_was_reached_on_when_asked_to() {
        let shared = endpoint(true);
        // Behind a port mapping (Agones: host port 7034 for TCP and UDP).
        assert_eq!(
            shared.offer("10.0.0.5:7034", "").url,
            "https://10.0.0.5:7034/wt"
        );
        assert_eq!(shared.offer("[::1]:7034", "").url, "https://[::1]:7034/wt");
        // No port in Host: ours.
        assert_eq!(
            shared.offer("example.com", "").url,
            "https://example.com:8080/wt"
        );
        assert_eq!(shared.offer("[::1]", "").url, "https://[::1]:8080/wt");
        // By default (a proxy may stand before TCP alone): always ours.
        let apart = endpoint(false);
        assert_eq!(
            apart.offer("10.0.0.5:7034", "").url,
            "https://10.0.0.5:8080/wt"
        );
        assert_eq!(apart.offer("10.0.0.5:7034", "").certificate_hashes, ["ab"]);
        assert_eq!(
            apart.offer("10.0.0.5:7034", "walkers").url,
            "https://10.0.0.5:8080/walkers/wt"
        );
    }
}
