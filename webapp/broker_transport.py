"""The embedded profile's broker: kombu's SQLAlchemy transport over SQLite, polled every 0.1 s instead of every 1 s.

This transport has no way to wake a waiting worker, so a worker looks for messages at its polling interval. kombu's
default (1 s) cost up to a second at each hop between a question's stages, two of them before the first answer word
(measured: about 1 s each on the development machine). A query of an idle SQLite table ten times a second costs
nothing noticeable. The transport option cannot carry the interval, because this transport hands every option to
SQLAlchemy's create_engine; hence a subclass, which settings.py selects for `sqla+` broker URLs (the URL loses
its prefix, which would otherwise choose kombu's own transport).
"""

from __future__ import annotations

from kombu.transport import sqlalchemy


class Transport(sqlalchemy.Transport):
    polling_interval = 0.1
