"""The API's paging: DRF's `limit` and `offset`, with `limit` capped.

Uncapped, any `limit` went to the database as it was given, and one beyond 64 bits was a 500 (found by
tests/webapp/api/test_schema_fuzz.py). An `offset` past the last result never reaches the database: DRF answers an
empty page once it has counted.
"""

from __future__ import annotations

from rest_framework.pagination import LimitOffsetPagination
from rest_framework.settings import api_settings

MAX_LIMIT = 1000


class Pagination(LimitOffsetPagination):
    max_limit = MAX_LIMIT
    limit_query_description = (
        f"Number of results to return per page: at most {MAX_LIMIT:,}, {api_settings.PAGE_SIZE} when left out."
    )
