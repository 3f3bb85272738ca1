//! The Herdr pane adapter: will hold the Herdr plugin and the view that runs inside a Herdr pane.
