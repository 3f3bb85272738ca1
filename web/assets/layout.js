// tickloop web's layout helpers (app.js calls them; the layout itself is
// app.css):
// - the terminal fitted to what its column shows, after layout and on
//   every change of the column's size or of the screen's pixel density,
//   so the size xterm.js draws is the size the program gets;
// - each cell of the list named by its column (`data-col`, from the
//   header's), so the phone layout keeps the columns it needs by name.
"use strict";
window.TickloopLayout = (() => {
  // Fits `term` (with its fit addon `fit`) to `host`, the element it was
  // opened in, now and whenever `host`'s size or the pixel density
  // changes. xterm.js's `onResize` follows each change of its size (the
  // page sends it from there). Returns the function that fits at once,
  // which answers whether the terminal could be measured (a hidden
  // column cannot).
  function fitTerminal(term, fit, host) {
    const fitNow = () => {
      if (!host.isConnected || host.clientWidth === 0 || host.clientHeight === 0) return false;
      const size = fit.proposeDimensions();
      if (!size || !Number.isFinite(size.cols) || !Number.isFinite(size.rows)) return false;
      if (size.cols !== term.cols || size.rows !== term.rows) term.resize(size.cols, size.rows);
      return true;
    };
    let frame = 0;
    const later = () => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(fitNow);
    };
    new ResizeObserver(later).observe(host);
    // A new pixel density (the window moved to another screen, the page
    // zoomed) changes the cells' size without changing the column's.
    const watchDensity = () => {
      const query = matchMedia(`(resolution: ${window.devicePixelRatio}dppx)`);
      query.addEventListener("change", () => { later(); watchDensity(); }, { once: true });
    };
    watchDensity();
    if (document.fonts && document.fonts.ready) document.fonts.ready.then(later);
    return fitNow;
  }

  // Names each body cell of `table` by its column: the header cell's
  // `data-col`, else its text in lower case.
  function markColumns(table) {
    const names = [...table.querySelectorAll("thead th")].map(
      (th) => th.dataset.col || th.textContent.trim().toLowerCase(),
    );
    for (const row of table.querySelectorAll("tbody tr")) {
      [...row.children].forEach((cell, i) => {
        if (names[i]) cell.dataset.col = names[i];
      });
    }
  }

  return { fitTerminal, markColumns };
})();
