"""``acms serve``: the SPARQL 1.1 Protocol endpoint and the render API as one ASGI application
(:func:`acms.server.app.create_app`). Nothing is imported here: the worker processes of
:mod:`acms.server.workers` import only what evaluating a query needs."""
