"""``acms serve``: the SPARQL 1.1 Protocol endpoint and the render API as one ASGI application."""

from acms.server.app import create_app

__all__ = ["create_app"]
