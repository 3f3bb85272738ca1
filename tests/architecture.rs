//! The architecture note stays true: ARCHITECTURE.md's table of crates is
//! the workspace `cargo metadata` reports (names and folders), no library
//! crate depends on the daemon crate `tickhost`, every crate's first lines
//! say what it is for, and no module imports a module that imports it
//! (within each crate, the graph of `use`s and paths between modules has
//! no cycle), and the product does without tokio's `signal` and `process`.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The workspace's packages, as `cargo metadata --no-deps` reports them.
fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(ROOT)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// A package's folder relative to the workspace root (`src/` for the root
/// package, as the note writes it).
fn folder(package: &Value) -> String {
    let manifest = Path::new(package["manifest_path"].as_str().unwrap_or_default());
    let dir = manifest.parent().unwrap_or(Path::new(""));
    let rel = dir.strip_prefix(ROOT).unwrap_or(dir).to_string_lossy();
    if rel.is_empty() {
        "src/".to_string()
    } else {
        format!("{rel}/")
    }
}

/// The rows of ARCHITECTURE.md's crate table: (crate, folder) from lines
/// of the form "| `crate` | `folder/` ... |".
fn table_rows() -> BTreeSet<(String, String)> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md is readable");
    let section = text
        .split("\n## Crates\n")
        .nth(1)
        .expect("ARCHITECTURE.md has a `## Crates` section")
        .split("\n## ")
        .next()
        .unwrap_or_default();
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if cells.len() < 4 || !cells[1].starts_with('`') {
                return None;
            }
            let name = cells[1].trim_matches('`').to_string();
            let dir = cells[2].split_whitespace().next()?.trim_matches('`');
            Some((name, dir.to_string()))
        })
        .collect()
}

#[test]
fn the_crate_table_is_the_workspace() {
    let meta = metadata();
    let packages: BTreeSet<(String, String)> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|p| {
            // The emulator bake-off is a workspace of its own (excluded).
            !folder(p).starts_with("benches/")
        })
        .map(|p| {
            (
                p["name"].as_str().unwrap_or_default().to_string(),
                folder(p),
            )
        })
        .collect();
    let rows = table_rows();
    assert_eq!(
        rows, packages,
        "ARCHITECTURE.md's table of crates (left) differs from `cargo metadata` (right): \
         add, remove or rename its rows"
    );
}

#[test]
fn no_library_depends_on_the_daemon() {
    let meta = metadata();
    for package in meta["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().unwrap_or_default();
        if name == "tickloop" {
            continue; // the binary is the daemon's one user
        }
        let on_daemon = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|d| d["name"] == "tickhost" && d["kind"].is_null());
        assert!(
            !on_daemon,
            "{name} depends on tickhost: front ends reach the daemon through tickloop-client"
        );
    }
}

/// The root file of every library and binary crate of the workspace (the
/// benchmarks' aside).
fn crate_roots(meta: &Value) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    for package in meta["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().into_iter().flatten() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if !kinds
                .iter()
                .any(|k| matches!(*k, "lib" | "rlib" | "bin" | "proc-macro"))
            {
                continue;
            }
            let path = target["src_path"].as_str().unwrap_or_default();
            if !path.contains("/benches/") {
                roots.push(PathBuf::from(path));
            }
        }
    }
    roots
}

#[test]
fn every_crate_says_what_it_is_for() {
    for path in crate_roots(&metadata()) {
        let text = std::fs::read_to_string(&path).expect("crate root is readable");
        assert!(
            text.trim_start().starts_with("//!"),
            "{} does not open with //! lines saying what it is for",
            path.display()
        );
    }
}

/// Every `.rs` file under `dir`, in order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// Issue 51: the executable is built without tokio's `signal` and
/// `process` features (with either, every runtime made a registry of all
/// 65 signals: 22 KiB in each launcher). The tests' own build has them,
/// through the root's dev-dependencies, so a use creeping back into the
/// product would compile there and fail only in a release build: this
/// says where, and what to use instead.
#[test]
fn the_product_uses_neither_tokio_signal_nor_tokio_process() {
    let mut found = Vec::new();
    for root in crate_roots(&metadata()) {
        let Some(src) = root.parent() else { continue };
        for file in rust_files(src) {
            let text = std::fs::read_to_string(&file).expect("a source file is readable");
            for (n, line) in text.lines().enumerate() {
                if line.contains("tokio::signal") || line.contains("tokio::process") {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the product uses tokio's signal or process module (use tickloop_client::signals \
         and tickloop_client::child):\n{}",
        found.join("\n")
    );
}

/// One module of a crate: its file, its place in the tree, its items, and
/// the names its own `use` items bring in (what a path through it may
/// reach: `pub use host_asks::AskInHost` in `lib.rs` makes
/// `crate::AskInHost` name the module `host_asks`).
struct Module {
    /// `crate::a::b`, for messages.
    name: String,
    file: PathBuf,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    items: Vec<syn::Item>,
    /// Its own `use`s: each path, and the name it binds (`None`: a glob).
    uses: Vec<(Vec<String>, Option<String>)>,
    /// The names of the items it defines itself.
    defines: BTreeSet<String>,
}

/// Every module of the crate whose root file is `root`, the root first.
fn modules_of(root: &Path) -> Vec<Module> {
    let mut modules = Vec::new();
    let dir = root.parent().unwrap_or(Path::new("")).to_path_buf();
    add_module(
        &mut modules,
        "crate".into(),
        root.to_path_buf(),
        dir,
        None,
        parse(root),
    );
    modules
}

fn parse(file: &Path) -> Vec<syn::Item> {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|e| panic!("{} is not readable: {e}", file.display()));
    syn::parse_file(&text)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", file.display()))
        .items
}

/// The name an item defines (modules and `use`s aside).
fn defined_name(item: &syn::Item) -> Option<String> {
    let ident = match item {
        syn::Item::Const(i) => &i.ident,
        syn::Item::Enum(i) => &i.ident,
        syn::Item::Fn(i) => &i.sig.ident,
        syn::Item::Macro(i) => i.ident.as_ref()?,
        syn::Item::Static(i) => &i.ident,
        syn::Item::Struct(i) => &i.ident,
        syn::Item::Trait(i) => &i.ident,
        syn::Item::TraitAlias(i) => &i.ident,
        syn::Item::Type(i) => &i.ident,
        syn::Item::Union(i) => &i.ident,
        _ => return None,
    };
    Some(ident.to_string())
}

/// Adds a module with `items` (its `mod x;` files looked for in `dir`),
/// and its child modules; its index.
fn add_module(
    modules: &mut Vec<Module>,
    name: String,
    file: PathBuf,
    dir: PathBuf,
    parent: Option<usize>,
    items: Vec<syn::Item>,
) -> usize {
    let index = modules.len();
    let children: Vec<syn::ItemMod> = items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Mod(m) => Some(m.clone()),
            _ => None,
        })
        .collect();
    let mut uses = Vec::new();
    for item in &items {
        if let syn::Item::Use(u) = item {
            use_tree(&mut Vec::new(), &u.tree, &mut uses);
        }
    }
    modules.push(Module {
        name: name.clone(),
        file: file.clone(),
        parent,
        children: BTreeMap::new(),
        defines: items.iter().filter_map(defined_name).collect(),
        items,
        uses,
    });
    for child in children {
        let child_name = child.ident.to_string();
        let full = format!("{name}::{child_name}");
        let child_index = match child.content {
            Some((_, inner)) => add_module(
                modules,
                full,
                file.clone(),
                dir.join(&child_name),
                Some(index),
                inner,
            ),
            None => {
                let path = path_attribute(&child)
                    .map(|p| file.parent().unwrap_or(Path::new("")).join(p))
                    .unwrap_or_else(|| {
                        let flat = dir.join(format!("{child_name}.rs"));
                        if flat.exists() {
                            flat
                        } else {
                            dir.join(&child_name).join("mod.rs")
                        }
                    });
                let child_dir = if path.file_name().is_some_and(|n| n == "mod.rs") {
                    path.parent().unwrap_or(Path::new("")).to_path_buf()
                } else {
                    path.with_extension("")
                };
                let items = parse(&path);
                add_module(modules, full, path, child_dir, Some(index), items)
            }
        };
        modules[index].children.insert(child_name, child_index);
    }
    index
}

/// A `#[path = "..."]` on a `mod x;`.
fn path_attribute(item: &syn::ItemMod) -> Option<String> {
    item.attrs.iter().find_map(|attr| match &attr.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// A `use` tree spelled out: each path it imports, with the name it binds
/// there (`None` for a glob). `use a::{self, b as c}` is `a` bound as `a`
/// and `a::b` bound as `c`.
fn use_tree(
    prefix: &mut Vec<String>,
    tree: &syn::UseTree,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_tree(prefix, &p.tree, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) if n.ident == "self" => {
            out.push((prefix.clone(), prefix.last().cloned()));
        }
        syn::UseTree::Name(n) => {
            let mut path = prefix.clone();
            path.push(n.ident.to_string());
            out.push((path, Some(n.ident.to_string())));
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            if r.ident != "self" {
                path.push(r.ident.to_string());
            }
            out.push((path, Some(r.rename.to_string())));
        }
        syn::UseTree::Glob(_) => out.push((prefix.clone(), None)),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                use_tree(prefix, tree, out);
            }
        }
    }
}

/// The paths one module's items name (its `use` trees spelled out as
/// paths, every path in its code, and `crate::`, `super::` and `self::`
/// paths inside macro calls), as lists of segments. Its child modules'
/// items are theirs, not its.
#[derive(Default)]
struct Paths(Vec<Vec<String>>);

impl Paths {
    /// `crate :: a :: b`-like runs of tokens in a macro call's arguments.
    fn tokens(&mut self, tokens: proc_macro2::TokenStream) {
        use proc_macro2::TokenTree;
        let mut run: Vec<String> = Vec::new();
        let mut colons = 0;
        let flush = |run: &mut Vec<String>, paths: &mut Vec<Vec<String>>| {
            if run
                .first()
                .is_some_and(|s| s == "crate" || s == "super" || s == "self")
            {
                paths.push(std::mem::take(run));
            }
            run.clear();
        };
        for token in tokens {
            match token {
                TokenTree::Ident(ident) if run.is_empty() || colons == 2 => {
                    run.push(ident.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() && colons < 2 => {
                    colons += 1;
                }
                TokenTree::Group(group) => {
                    flush(&mut run, &mut self.0);
                    colons = 0;
                    self.tokens(group.stream());
                }
                other => {
                    flush(&mut run, &mut self.0);
                    colons = 0;
                    if let TokenTree::Ident(ident) = other {
                        run.push(ident.to_string());
                    }
                }
            }
        }
        flush(&mut run, &mut self.0);
    }
}

impl<'ast> syn::visit::Visit<'ast> for Paths {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut uses = Vec::new();
        use_tree(&mut Vec::new(), &item.tree, &mut uses);
        self.0.extend(uses.into_iter().map(|(path, _)| path));
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.0
            .push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // A child module's items are its own.
    }
}

/// How many `use`s deep a name is followed to the module defining it.
const REEXPORTS_FOLLOWED: usize = 8;

/// The module `path` names from module `from`: as far as its segments are
/// modules (`crate::a::b::Item` names `a::b`), then, when the next segment
/// is a name a `use` brought into that module, the module that name comes
/// from. `None` for a path that starts outside the crate (another crate, a
/// local name).
fn resolve(modules: &[Module], from: usize, path: &[String], depth: usize) -> Option<usize> {
    let mut at = from;
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            at = 0;
            rest = &path[1..];
        }
        Some("self") => rest = &path[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                at = modules[at].parent?;
                rest = &rest[1..];
            }
        }
        Some(first) if modules[from].children.contains_key(first) => {}
        _ => return None,
    }
    while let Some(child) = rest.first().and_then(|s| modules[at].children.get(s)) {
        at = *child;
        rest = &rest[1..];
    }
    match rest.first() {
        Some(name) if depth < REEXPORTS_FOLLOWED => {
            Some(brought_in(modules, at, name, depth + 1).unwrap_or(at))
        }
        _ => Some(at),
    }
}

/// The module of this crate that `name`, brought into module `at` by one
/// of its `use`s, comes from; `None` when `at` defines it, or it comes
/// from another crate.
fn brought_in(modules: &[Module], at: usize, name: &str, depth: usize) -> Option<usize> {
    if modules[at].defines.contains(name) {
        return None;
    }
    for (path, bound) in &modules[at].uses {
        match bound {
            Some(bound) if bound == name => return resolve(modules, at, path, depth),
            Some(_) => {}
            None => {
                let Some(from) = resolve(modules, at, path, depth) else {
                    continue;
                };
                if from == at || depth >= REEXPORTS_FOLLOWED {
                    continue;
                }
                if modules[from].defines.contains(name) {
                    return Some(from);
                }
                if let Some(deeper) = brought_in(modules, from, name, depth + 1) {
                    return Some(deeper);
                }
            }
        }
    }
    None
}

/// Whether module `inner` is `outer` or inside it.
fn within(modules: &[Module], inner: usize, outer: usize) -> bool {
    let mut at = Some(inner);
    while let Some(module) = at {
        if module == outer {
            return true;
        }
        at = modules[module].parent;
    }
    false
}

/// The module graph of one crate: for each module, the modules it names,
/// each with one path that names it (for the message). A module naming
/// one of its own submodules is not an import: they are its parts (`mod`
/// made them so); a submodule naming what its parent holds is.
fn module_graph(modules: &[Module]) -> Vec<BTreeMap<usize, String>> {
    modules
        .iter()
        .enumerate()
        .map(|(index, module)| {
            let mut paths = Paths::default();
            for item in &module.items {
                syn::visit::Visit::visit_item(&mut paths, item);
            }
            let mut named = BTreeMap::new();
            for path in paths.0 {
                if let Some(to) = resolve(modules, index, &path, 0) {
                    if !within(modules, to, index) {
                        named.entry(to).or_insert_with(|| path.join("::"));
                    }
                }
            }
            named
        })
        .collect()
}
/// The modules `start` reaches in `graph` (itself only through a cycle).
fn reached(graph: &[BTreeMap<usize, String>], start: usize) -> BTreeSet<usize> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<usize> = graph[start].keys().copied().collect();
    while let Some(at) = stack.pop() {
        if seen.insert(at) {
            stack.extend(graph[at].keys().copied());
        }
    }
    seen
}

/// Every cycle of modules in the crate rooted at `root`: each group of
/// modules that reach one another, said as the imports between them, one
/// a line.
fn module_cycles(root: &Path) -> Vec<String> {
    let modules = modules_of(root);
    let graph = module_graph(&modules);
    let reach: Vec<BTreeSet<usize>> = (0..modules.len()).map(|m| reached(&graph, m)).collect();
    let relative = |file: &Path| {
        file.strip_prefix(ROOT)
            .unwrap_or(file)
            .display()
            .to_string()
    };
    let mut said: BTreeSet<usize> = BTreeSet::new();
    let mut found = Vec::new();
    for start in 0..modules.len() {
        if said.contains(&start) || !reach[start].contains(&start) {
            continue;
        }
        let group: BTreeSet<usize> = reach[start]
            .iter()
            .copied()
            .filter(|m| reach[*m].contains(&start))
            .collect();
        said.extend(&group);
        let mut lines = Vec::new();
        for &from in &group {
            for (to, path) in &graph[from] {
                if group.contains(to) {
                    lines.push(format!(
                        "  {} names {} with `{path}` ({})",
                        modules[from].name,
                        modules[*to].name,
                        relative(&modules[from].file)
                    ));
                }
            }
        }
        found.push(lines.join("\n"));
    }
    found
}

#[test]
fn no_module_imports_a_module_that_imports_it() {
    let roots = crate_roots(&metadata());
    let crates = roots.len();
    let cycles: Vec<String> = roots.iter().flat_map(|root| module_cycles(root)).collect();
    assert!(crates > 10, "only {crates} crates were read");
    assert!(
        cycles.is_empty(),
        "{} cycle(s) of modules (a module imports a module that imports it, directly or \
         through others); move what both need into a module of its own, or to where it \
         belongs:\n{}",
        cycles.len(),
        cycles.join("\n\n")
    );
}

/// The check itself: a cycle through `super::` and `crate::` paths, one
/// in a macro call, one through a name a parent brought in with `pub use`,
/// is found; a module's own tests using it, a parent using its
/// submodules, and other crates' paths, are not cycles.
#[test]
fn the_cycle_check_finds_cycles_and_only_cycles() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("folder");
        std::fs::write(path, text).expect("write");
    };
    let cycles = || module_cycles(&dir.path().join("lib.rs"));
    write(
        "lib.rs",
        "mod a; mod b; mod c; mod d; use std::fmt; pub fn f() { a::x(); }",
    );
    write(
        "a.rs",
        "use super::b::Y; pub fn x() {} #[cfg(test)] mod tests { use super::*; }",
    );
    write(
        "b.rs",
        "pub struct Y; fn g() { println!(\"{}\", crate::c::Z); }",
    );
    write(
        "c.rs",
        "pub const Z: u8 = 1; fn h() { let _ = super::a::x; }",
    );
    write("d.rs", "use tokio::sync; use crate::f;");
    let found = cycles();
    assert_eq!(found.len(), 1, "{found:#?}");
    for part in [
        "crate::a names crate::b with `super::b::Y`",
        "crate::b names crate::c with `crate::c::Z`",
        "crate::c names crate::a with `super::a::x`",
    ] {
        assert!(found[0].contains(part), "{part}: {}", found[0]);
    }
    write("c.rs", "pub const Z: u8 = 1;");
    assert_eq!(cycles(), Vec::<String>::new());

    // A parent and its submodule naming each other: the parent's parts.
    write("lib.rs", "mod d; pub fn f() { d::g(); }");
    write("d.rs", "pub fn g() { crate::f(); }");
    assert_eq!(cycles(), Vec::<String>::new());

    // A name the root re-exports is the module's that defines it.
    write("lib.rs", "mod a; mod e; pub use e::inner::Thing;");
    write("a.rs", "pub fn x(_: crate::Thing) {}");
    write(
        "e.rs",
        "pub mod inner { pub struct Thing; fn y() { crate::a::x; } }",
    );
    let found = cycles();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].contains("crate::a names crate::e::inner with `crate::Thing`"),
        "{}",
        found[0]
    );
}
