//! Embedding API and MCP server for cc-harness.
