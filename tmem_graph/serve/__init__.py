"""`tmem serve` and `tmem mcp`: one warm process serving memories over HTTP and MCP
(docs/service.md). `Service` holds the store, the encoder, the LLM and the build worker;
`http.create_app` and `mcp.build_mcp` are its two faces."""
