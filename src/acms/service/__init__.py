"""The one way in: store sessions and the two orchestrations (an index run, an assembly).

``acms.Index`` is the public face of this package; the CLI, the HTTP server, the MCP server and
``acms eval`` reach the store only through it (or through :mod:`acms.service.session` for a
long-lived process). Below this layer everything is typed against ``acms.store.protocol.GraphStore``.
"""
