//! The stats page from a synthetic view: structure, statuses, escaping, and nothing that would
//! fetch from elsewhere.

mod support;

use std::sync::Arc;
use std::time::Duration;

use support::view;
use tern_admin::render::html::page;

fn render() -> String {
    page(&view::view(), Duration::from_secs(10))
}

/// The text between `<tag` ... `</tag>` occurrences, in order.
fn elements<'a>(html: &'a str, open: &str, close: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find(open) {
        let after = &rest[start..];
        let Some(end) = after.find(close) else { break };
        out.push(&after[..end + close.len()]);
        rest = &after[end + close.len()..];
    }
    out
}

#[test]
fn is_one_self_contained_document() {
    let html = render();
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert!(html.trim_end().ends_with("</html>"));
    assert!(html.contains("<meta charset=\"utf-8\">"));
    assert!(
        html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
    );
    assert_eq!(elements(&html, "<style>", "</style>").len(), 1);
    let lower = html.to_ascii_lowercase();
    for external in [
        "://", "src=", "href=", "url(", "@import", "<link", "<script", "<img", "<iframe",
    ] {
        assert!(!lower.contains(external), "the page contains {external:?}");
    }
}

#[test]
fn refreshes_itself() {
    assert!(render().contains("<meta http-equiv=\"refresh\" content=\"10\">"));
    let once = page(&view::view(), Duration::ZERO);
    assert!(!once.contains("http-equiv"), "zero means no refresh");
    assert!(page(&view::view(), Duration::from_millis(2_500)).contains("content=\"3\""));
}

#[test]
fn shows_process_facts_first() {
    let html = render();
    let header = elements(&html, "<header>", "</header>");
    let header = header.first().expect("a header");
    for fact in [
        "4242",
        "1d 2h 3m 4s",
        "2023-11-14 22:13:20 UTC",
        "3 (1 draining)",
        ">57<",
        "0.1.0",
    ] {
        assert!(header.contains(fact), "{fact} missing from {header}");
    }
    assert!(html.find("<header>") < html.find("<h2>Frontends</h2>"));
}

#[test]
fn a_table_per_frontend_and_per_backend() {
    let html = render();
    let frontends = elements(&html, "<section class=\"frontend\">", "</section>");
    assert_eq!(frontends.len(), 2);
    let title = "<h3>web <small>127.0.0.1:8443 TLS, 127.0.0.1:8080</small></h3>";
    assert!(frontends[0].contains(title), "{}", frontends[0]);
    for cell in [
        "data-label=\"Requests\">125000<",
        "data-label=\"TLS resumed\">3000<",
        "data-label=\"TLS failed\" class=\"err\">9<",
        "data-label=\"Denied\" class=\"err\">5<",
        "data-label=\"Returned\">6<",
        "data-label=\"No backend\" class=\"err\">1<",
        "data-label=\"TCP sessions\">11<",
        "data-label=\"PROXY errors\" class=\"err\">13<",
    ] {
        assert!(
            frontends[0].contains(cell),
            "{cell} missing from {}",
            frontends[0]
        );
    }
    assert!(
        !frontends[1].contains("TLS full"),
        "a plain frontend has no TLS columns"
    );
    let backends = elements(&html, "<section class=\"backend\">", "</section>");
    assert_eq!(backends.len(), 2);
    assert!(backends[0].contains("<h3>app <small>2/5 servers up</small></h3>"));
    let rows = elements(backends[0], "<tr class=", "</tr>");
    assert_eq!(rows.len(), 5, "a row per server");
    assert!(backends[0].contains("data-label=\"No server (503)\" class=\"err\">2<"));
    assert!(
        rows[1].contains("<td>17/100</td>"),
        "active/maxconn: {}",
        rows[1]
    );
    assert!(rows[4].contains("spare<span class=\"tag\">backup</span>"));
}

#[test]
fn statuses_are_named_and_coloured() {
    let html = render();
    let backends = elements(&html, "<section class=\"backend\">", "</section>");
    let rows = elements(backends[0], "<tr class=", "</tr>");
    let expected = [
        ("app1", "up"),
        ("app2", "up"),
        ("app3", "down"),
        ("app4", "maint"),
        ("spare", "drain"),
    ];
    for (row, (name, status)) in rows.iter().zip(expected) {
        assert!(
            row.starts_with(&format!("<tr class=\"{status}\"><td>{name}")),
            "{row}"
        );
        let pill = format!("<span class=\"st st-{status}\"");
        assert!(row.contains(&pill), "{row}");
        assert!(
            row.contains(&format!(">{}</span>", status.to_uppercase())),
            "{row}"
        );
    }
    for status in ["up", "down", "drain", "maint"] {
        assert!(
            html.contains(&format!(".st-{status} {{ background:")),
            "no colour for {status}"
        );
    }
    assert!(
        html.contains("<span class=\"st st-up\">UP 4</span>"),
        "summary"
    );
    assert!(
        html.contains("<span class=\"st st-down\">DOWN 1</span>"),
        "summary"
    );
}

#[test]
fn escapes_every_name() {
    let mut view = view::view();
    let config = Arc::make_mut(&mut view.config);
    config.frontends[0].name = "<script>alert('f')</script>".into();
    config.backends[0].name = "b&\"<i>".into();
    config.backends[0].servers[0].name = "<img src=x onerror=1>".into();
    view.info.version = "1<2>".into();
    let html = page(&view, Duration::from_secs(5));
    assert!(!html.contains("<script>") && !html.contains("<img") && !html.contains("<i>"));
    assert!(html.contains("&lt;script&gt;alert(&#39;f&#39;)&lt;/script&gt;"));
    assert!(html.contains("<h3>b&amp;&quot;&lt;i&gt; <small>"));
    assert!(html.contains("&lt;img src=x onerror=1&gt;"));
    assert!(html.contains("1&lt;2&gt;"));
}

#[test]
fn readable_on_a_phone() {
    let html = render();
    assert!(
        html.contains("@media (max-width: 640px)"),
        "narrow-screen rules"
    );
    assert!(
        html.contains("table.stack td::before { content: attr(data-label)"),
        "stacked cells"
    );
    assert!(
        html.contains(".scroll { overflow-x: auto"),
        "wide tables scroll"
    );
    assert!(
        html.contains("position: sticky"),
        "server names stay in view"
    );
    let stacked = elements(&html, "<table class=\"stack\">", "</table>");
    for table in stacked {
        let cells = elements(table, "<td", "</td>");
        assert!(
            cells.iter().all(|c| c.starts_with("<td data-label=\"")),
            "{table}"
        );
    }
}

#[test]
fn an_empty_snapshot_renders() {
    let mut view = view::view();
    view.stats = Default::default();
    let html = page(&view, Duration::from_secs(10));
    assert!(html.contains("<h3>app <small>0/5 servers up</small></h3>"));
    assert!(html.contains("DOWN"));
}
