//! Where Tickloop keeps its sockets: the private runtime directory.
