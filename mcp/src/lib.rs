//! Tickloop's MCP bridge and Package Skills.
