//! The WebSocket opening handshake as the HTTP layer sees it: whether a
//! request is a valid upgrade, and the `Sec-WebSocket-Accept` it gets.

use axum::http::{header, HeaderMap, HeaderName, HeaderValue};

/// The `Sec-WebSocket-Accept` value for a valid upgrade request, or what is
/// wrong with it.
///
/// # Errors
/// The request is not a version 13 WebSocket upgrade.
pub fn accept_key(headers: &HeaderMap) -> Result<String, &'static str> {
    let has_token = |name: HeaderName, token: &str| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    };
    if !has_token(header::CONNECTION, "upgrade") || !has_token(header::UPGRADE, "websocket") {
        return Err("expected a WebSocket upgrade (Connection: upgrade, Upgrade: websocket)");
    }
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .map(HeaderValue::as_bytes)
        != Some(b"13")
    {
        return Err("only WebSocket version 13 is spoken");
    }
    let key = headers
        .get(header::SEC_WEBSOCKET_KEY)
        .ok_or("Sec-WebSocket-Key is missing")?;
    Ok(tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    const VALID: [(&str, &str); 4] = [
        ("connection", "keep-alive, Upgrade"),
        ("upgrade", "websocket"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];

    #[test]
    fn a_valid_upgrade_gets_the_accept_value_of_rfc_6455() {
        // The example of RFC 6455, section 1.3.
        assert_eq!(
            accept_key(&request(&VALID)),
            Ok("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".to_string())
        );
    }

    #[test]
    fn each_missing_part_is_named() {
        for (i, expected) in [
            "expected a WebSocket upgrade",
            "expected a WebSocket upgrade",
            "only WebSocket version 13",
            "Sec-WebSocket-Key is missing",
        ]
        .iter()
        .enumerate()
        {
            let mut pairs = VALID.to_vec();
            pairs.remove(i);
            let why = accept_key(&request(&pairs)).expect_err("a part is missing");
            assert!(why.starts_with(expected), "{why}");
        }
        let mut old = VALID.to_vec();
        old[2] = ("sec-websocket-version", "8");
        assert!(accept_key(&request(&old)).is_err());
    }
}
