//! `GET /ui`: the live page, one static file served from memory.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The page: plain HTML, CSS and JavaScript, no build step, nothing fetched from elsewhere.
const PAGE: &str = include_str!("page.html");

pub(crate) async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            // Nothing but this origin: no CDN, no font, no frame.
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 connect-src 'self'; frame-ancestors 'none'",
            ),
            (header::CACHE_CONTROL, "no-store"),
        ],
        PAGE,
    )
        .into_response()
}
