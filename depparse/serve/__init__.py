"""``depparse serve``: a UDPipe-compatible REST service and a tree viewer in the browser.

:mod:`.protocol` reads UDPipe's REST parameters into a job; :mod:`.workers` parses in worker
processes (a bounded queue, limits per request and per sentence, workers started afresh when
one dies); :mod:`.app` is the ASGI application (Starlette) with its routes and the page,
whose files (``static/``) ship with the package.  The trees are drawn by
:mod:`depparse.viewer`, the same drawing as ``depparse show``.  Needs the ``serve`` extra
(``pip install depparse[serve]``: Starlette and uvicorn).
"""

from .app import create_app
from .protocol import Job, RequestError
from .workers import Workers

__all__ = ["Job", "RequestError", "Workers", "create_app"]
