//! The page and everything it loads, embedded in the executable: the
//! page's own HTML, script and style (`web/assets/`) and the vendored
//! xterm.js release files (`web/vendor/xterm/`, see its README), served
//! only to a logged-in browser. The page takes its settings (the CSRF
//! token, read-only) from `<meta>` tags, since the content security policy
//! allows no inline script.

/// A file the page loads, embedded gzipped (`build.rs`).
pub struct Asset {
    pub gzip: &'static [u8],
    pub content_type: &'static str,
}

/// The gzipped bytes `build.rs` made of the file called `$name`.
macro_rules! gzipped {
    ($name:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".gz"))
    };
}

impl Asset {
    /// The file as it is, unpacked: for a client that takes no gzip.
    pub fn bytes(&self) -> std::io::Result<Vec<u8>> {
        use std::io::Read;
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(self.gzip).read_to_end(&mut bytes)?;
        Ok(bytes)
    }
}

/// The file `/assets/NAME` serves.
pub fn asset(name: &str) -> Option<Asset> {
    const JS: &str = "text/javascript; charset=utf-8";
    const CSS: &str = "text/css; charset=utf-8";
    let (gzip, content_type): (&'static [u8], _) = match name {
        "app.js" => (gzipped!("app.js"), JS),
        "layout.js" => (gzipped!("layout.js"), JS),
        "shell.js" => (gzipped!("shell.js"), JS),
        "app.css" => (gzipped!("app.css"), CSS),
        "xterm.js" => (gzipped!("xterm.js"), JS),
        "xterm.css" => (gzipped!("xterm.css"), CSS),
        "addon-fit.js" => (gzipped!("addon-fit.js"), JS),
        "addon-image.js" => (gzipped!("addon-image.js"), JS),
        "icon.svg" => (gzipped!("icon.svg"), "image/svg+xml"),
        _ => return None,
    };
    Some(Asset { gzip, content_type })
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
        // Each unpacks to the file in the source tree, byte for byte.
        for (name, file) in [
            ("app.js", "assets/app.js"),
            ("layout.js", "assets/layout.js"),
            ("shell.js", "assets/shell.js"),
            ("app.css", "assets/app.css"),
            ("xterm.js", "vendor/xterm/xterm.js"),
            ("xterm.css", "vendor/xterm/xterm.css"),
            ("addon-fit.js", "vendor/xterm/addon-fit.js"),
            ("addon-image.js", "vendor/xterm/addon-image.js"),
            ("icon.svg", "assets/icon.svg"),
        ] {
            let source = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file))
                .expect("the file in the source tree");
            let asset = super::asset(name).unwrap_or_else(|| panic!("{name} is served"));
            assert_eq!(asset.bytes().expect("unpacks"), source, "{name}");
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
