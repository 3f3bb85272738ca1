//! The page and everything it loads, embedded in the executable: the
//! page's own HTML, script and style (`web/assets/`) and the vendored
//! xterm.js release files (`web/vendor/xterm/`, see its README), served
//! only to a logged-in browser. The page takes its settings (the CSRF
//! token, read-only) from `<meta>` tags, since the content security policy
//! allows no inline script.

/// A file the page loads.
pub struct Asset {
    pub bytes: &'static [u8],
    pub content_type: &'static str,
}

/// The file `/assets/NAME` serves.
pub fn asset(name: &str) -> Option<Asset> {
    let (bytes, content_type): (&'static [u8], _) = match name {
        "app.js" => (
            include_bytes!("../assets/app.js"),
            "text/javascript; charset=utf-8",
        ),
        "layout.js" => (
            include_bytes!("../assets/layout.js"),
            "text/javascript; charset=utf-8",
        ),
        "shell.js" => (
            include_bytes!("../assets/shell.js"),
            "text/javascript; charset=utf-8",
        ),
        "app.css" => (
            include_bytes!("../assets/app.css"),
            "text/css; charset=utf-8",
        ),
        "xterm.js" => (
            include_bytes!("../vendor/xterm/xterm.js"),
            "text/javascript; charset=utf-8",
        ),
        "xterm.css" => (
            include_bytes!("../vendor/xterm/xterm.css"),
            "text/css; charset=utf-8",
        ),
        "addon-fit.js" => (
            include_bytes!("../vendor/xterm/addon-fit.js"),
            "text/javascript; charset=utf-8",
        ),
        "addon-image.js" => (
            include_bytes!("../vendor/xterm/addon-image.js"),
            "text/javascript; charset=utf-8",
        ),
        "icon.svg" => (include_bytes!("../assets/icon.svg"), "image/svg+xml"),
        _ => return None,
    };
    Some(Asset {
        bytes,
        content_type,
    })
}

/// Text made safe inside HTML, attributes included.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page of a session whose CSRF token is `csrf`.
pub fn index(csrf: &str, read_only: bool) -> String {
    include_str!("../assets/index.html")
        .replace("{{csrf}}", &escape(csrf))
        .replace("{{read_only}}", if read_only { "true" } else { "false" })
}

/// A short page that says `text` (a refusal, how to log in); with
/// `refresh`, the browser goes on to that path at once.
pub fn message(title: &str, text: &str, refresh: Option<&str>) -> String {
    let refresh = refresh
        .map(|to| {
            format!(
                r#"<meta http-equiv="refresh" content="0; url={}">"#,
                escape(to)
            )
        })
        .unwrap_or_default();
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">{refresh}\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Tickloop · {title}</title>\
         </head><body class=\"message\"><main><h1>{title}</h1><p>{text}</p></main></body></html>",
        title = escape(title),
        text = escape(text),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_asset_is_there_and_text_is_escaped() {
        for name in [
            "app.js",
            "layout.js",
            "shell.js",
            "app.css",
            "xterm.js",
            "xterm.css",
            "addon-fit.js",
            "addon-image.js",
            "icon.svg",
        ] {
            assert!(
                super::asset(name).is_some_and(|a| !a.bytes.is_empty()),
                "{name}"
            );
        }
        assert!(super::asset("../Cargo.toml").is_none());
        assert_eq!(
            super::escape("<a href='x'>&\""),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"
        );
        let page = super::index("t0k\"en", true);
        assert!(
            page.contains("t0k&quot;en") && !page.contains("{{"),
            "{page}"
        );
    }
}
