"""The API documentation pages under the site's Content-Security-Policy.

Swagger UI is served split (the page, then its start-up script as a file of its own) so no inline script is
needed. Both documentation pages style themselves with an inline <style> block and style attributes, and Redoc
runs its search in a worker made from a blob: URL; they are the only views that get those relaxations. They show
the public schema and no user data, so an inline style there exposes nothing.
"""

from __future__ import annotations

from typing import Final

from csp.decorators import csp_update
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerSplitView

_INLINE_STYLES: Final = {"style-src": ["'unsafe-inline'"]}

swagger_ui = csp_update(_INLINE_STYLES)(SpectacularSwaggerSplitView.as_view(url_name="api-schema"))
redoc = csp_update({**_INLINE_STYLES, "worker-src": ["'self'", "blob:"]})(
    SpectacularRedocView.as_view(url_name="api-schema")
)
