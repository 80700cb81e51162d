//! The host a page is told to reach WebTransport at (`GET /transport`):
//! the configured `--public-host`, else the page's own `Host` when it is a
//! plain host name or address, else the address the server listens on. A
//! `Host` is what the client says it is: taken whole into the offered URL,
//! it could point a page elsewhere, or carry a path, a query, quotes or
//! markup into the answer.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// `host` when it is a host name (labels of ASCII letters, digits and
/// inner hyphens, separated by dots), an IPv4 address or a bracketed
/// IPv6 address, followed by `:port` or not; `None` for anything else (a
/// user, a path, a query, spaces, quotes, an empty port).
pub fn checked(host: &str) -> Option<&str> {
    let port = if let Some(rest) = host.strip_prefix('[') {
        let (address, port) = rest.split_once(']')?;
        address.parse::<Ipv6Addr>().ok()?;
        port
    } else {
        let name = host.split_once(':').map_or(host, |(name, _)| name);
        if name.parse::<Ipv4Addr>().is_err() && !is_host_name(name) {
            return None;
        }
        &host[name.len()..]
    };
    let valid_port = |digits: &str| {
        !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && digits.parse::<u16>().is_ok()
    };
    match port.strip_prefix(':') {
        None if port.is_empty() => Some(host),
        Some(digits) if valid_port(digits) => Some(host),
        _ => None,
    }
}

/// The host (with a port or not) a page is offered: `public` (the
/// configured `--public-host`) when set, else the request's `Host` when
/// [`checked`], else the address the server `listens` on (127.0.0.1 when
/// it listens on every address).
pub fn offered(public: Option<&str>, header: Option<&str>, listens: SocketAddr) -> String {
    if let Some(host) = public.or_else(|| header.and_then(checked)) {
        return host.to_string();
    }
    match listens.ip() {
        ip if ip.is_unspecified() => Ipv4Addr::LOCALHOST.to_string(),
        IpAddr::V4(ip) => ip.to_string(),
        IpAddr::V6(ip) => format!("[{ip}]"),
    }
}

/// A DNS name: at most 253 characters, labels of 1 to 63 ASCII letters,
/// digits and hyphens, none at a label's start or end.
fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_and_addresses_with_or_without_a_port_pass() {
        for host in [
            "example.com",
            "example.com:8443",
            "game-1.eu.example.com",
            "localhost",
            "10.0.0.5:7034",
            "127.0.0.1",
            "[::1]",
            "[::1]:7034",
            "[2001:db8::7]:443",
        ] {
            assert_eq!(checked(host), Some(host));
        }
    }

    #[test]
    fn anything_else_in_a_host_is_refused() {
        for host in [
            "",
            "evil.com/x?\"<script>",
            "evil.com/x",
            "a@b",
            "user:pass@example.com",
            "exa mple.com",
            "example.com:",
            "example.com:+80",
            "example.com:99999",
            "example.com:80:80",
            "-example.com",
            "example..com",
            "[::1",
            "[::1]x",
            "[evil.com]:80",
            "\"quoted\"",
            "ex\u{202E}ample.com",
        ] {
            assert_eq!(checked(host), None, "{host:?}");
        }
    }

    #[test]
    fn the_offered_host_is_the_configured_one_a_checked_one_or_the_servers() {
        let any = SocketAddr::from(([0, 0, 0, 0], 8080));
        let local = SocketAddr::from(([10, 0, 0, 5], 8080));
        assert_eq!(
            offered(Some("game.example.com"), Some("evil.com"), any),
            "game.example.com"
        );
        assert_eq!(
            offered(None, Some("example.com:8080"), any),
            "example.com:8080"
        );
        assert_eq!(offered(None, Some("a@b"), any), "127.0.0.1");
        assert_eq!(offered(None, Some("a@b"), local), "10.0.0.5");
        assert_eq!(offered(None, None, local), "10.0.0.5");
        let v6 = SocketAddr::from((Ipv6Addr::LOCALHOST, 8080));
        assert_eq!(offered(None, Some("evil.com/x"), v6), "[::1]");
    }
}
