"""Backups of a whole site (the database, the index generation and both search legs, the model versions) and their
restore into an empty checkout: `manage.py backup` and `manage.py restore` call `backup_create` and `backup_restore`
(service.py)."""
