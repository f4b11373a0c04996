"""acms over the Model Context Protocol (``acms mcp``)."""
